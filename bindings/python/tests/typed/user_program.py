"""A small typed program using ffikit as a user would; checked with mypy --strict."""
from __future__ import annotations

import inspect

import ffikit


def double(x: int) -> int:
    return 2 * x


def main() -> int:
    f: ffikit.Function = ffikit.register_global_func("typed_user.double", double, override=True)
    g = ffikit.get_global_func("typed_user.double")
    assert g is not None
    result: int = g(21)
    sig: inspect.Signature | None = g.__signature__  # None: a Python callable is untyped
    assert sig is None
    d: ffikit.dtype = ffikit.dtype("float32")
    bits: int = d.bits + d.lanes
    dev = ffikit.Device("cuda", 1)
    name: str = dev.type
    shape = ffikit.Shape((2, 3))
    err = ffikit.Error("ValueError", "typed")
    kind: str = err.kind
    names: list[str] = ffikit.list_global_func_names()
    removed: bool = ffikit.remove_global_func("typed_user.double")
    del f
    return result + bits + len(name) + len(shape) + len(kind) + len(names) + int(removed)


if __name__ == "__main__":
    print(main())
