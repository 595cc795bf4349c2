"""ffikit.testing: the ``testing.*`` Functions implemented in C (``testing.echo``,
``testing.apply``, ``testing.raise_error``, ``testing.add_one``, the typed
``testing.schema_id_*`` ...), as attributes of this module, plus C helpers the test
suites need (calling a Function from a native thread)."""
from __future__ import annotations

from typing import Any

from . import _core
from ._core import Function

_core._testing_register()


def __getattr__(name: str) -> Function:
    f = _core._get_global_func("testing." + name, True)
    if f is None:
        raise AttributeError(f"module 'ffikit.testing' has no attribute '{name}'")
    globals()[name] = f
    return f


def call_from_native_thread(f: Function, times: int, *args: Any) -> Any:
    """Calls ``f(*args)`` ``times`` times from a new native thread (one Python has never
    seen) and returns the last result, or raises what the call raised."""
    return _core._call_from_native_thread(f, times, *args)


def __dir__() -> list[str]:
    names = [n[len("testing."):] for n in _core.list_global_func_names() if n.startswith("testing.")]
    return sorted(set(names) | {"call_from_native_thread"})
