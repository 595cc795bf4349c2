"""What test_engines_ray.py and test_engines_dask.py send through the engines: one value of
each kind ffikit users hand to Ray or Dask, the plain Python form to compare them by, and the
checks both engines share (where a tensor's bytes lie, whether a shared-memory name exists).

The engines' worker processes import this module (it lies beside the tests, on sys.path), so
it holds only module-level functions: the engines pickle those by reference.
"""
from __future__ import annotations

import gc
import os
import time
from typing import Any, Callable

import numpy as np

import ffikit
import ffikit.testing as T

# Large enough that Ray keeps it in its shared object store (Ray inlines objects under
# 100 KiB into its in-process memory store instead).
BIG = 1 << 20  # float32 elements: 4 MiB


def make_values() -> dict[str, Any]:
    """One value per kind: Tensor, Array, Map, List, Dict, and reflected objects (one with
    a Map and an Array in its fields). New objects on every call, so a test that drops them
    leaves no ffikit object alive."""
    t = ffikit.from_dlpack(np.arange(12, dtype=np.float32).reshape(3, 4))
    return {
        "tensor": t,
        "array": ffikit.Array([1, "two", 3.5, ffikit.from_dlpack(np.arange(3, dtype=np.int64))]),
        "map": ffikit.Map({"a": 1, "b": ffikit.Array([2, 3])}),
        "list": ffikit.List([1, "x", ffikit.List([2.5])]),
        "dict": ffikit.Dict({"k": ffikit.from_dlpack(np.ones(4, dtype=np.float64)), "n": 7}),
        "object": T.TestIntPair(3, 4),
        "derived": T.TestObjectDerived(v_i64=5, v_str="s", v_map=ffikit.Map({"m": 1}), v_array=ffikit.Array([9])),
    }


def plain(v: Any) -> Any:
    """v as plain Python values, with the ffikit type names kept, for comparing what came
    back with what was sent (tensors by dtype, shape and contents)."""
    if isinstance(v, ffikit.Tensor):
        return ("Tensor", str(v.dtype), tuple(v.shape), np.asarray(v).tolist())
    if isinstance(v, (ffikit.Array, ffikit.List)):
        return (type(v).__name__, [plain(x) for x in v])
    if isinstance(v, (ffikit.Map, ffikit.Dict)):
        return (type(v).__name__, sorted((str(k), plain(x)) for k, x in v.items()))
    if isinstance(v, T.TestObjectDerived):
        return ("TestObjectDerived", v.v_i64, v.v_f64, v.v_str, plain(v.v_map), plain(v.v_array))
    if isinstance(v, T.TestIntPair):
        return ("TestIntPair", v.a, v.b, v.sum())
    return v


def identity(v: Any) -> Any:
    return v


def worker_view(v: Any) -> tuple[str, Any]:
    """What a worker sees: the type name and the plain form (so the check does not depend on
    the value's way back)."""
    return type(v).__name__, plain(v)


def double(t: ffikit.Tensor) -> ffikit.Tensor:
    """A new tensor made on the worker: twice t."""
    return ffikit.from_dlpack(np.asarray(t) * 2)


def call_global(name: str, *args: Any) -> Any:
    """Calls the ffikit global Function `name` on the worker, looked up there by name."""
    return ffikit.get_global_func(name)(*args)


def call(f: Any, *args: Any) -> Any:
    """Calls f (an ffikit Function that travelled by its registry name) on the worker."""
    return f(*args)


def add_one_badly() -> Any:
    return T.add_one("not an int")  # TypeError from the C argument check


def raise_kind(kind: str, message: str) -> Any:
    return T.raise_error(kind, message)


def write(t: ffikit.Tensor, index: int, value: float) -> float:
    """Writes t[index] = value in the worker (a shared tensor: into the same pages); returns
    the sum the worker sees."""
    a = np.asarray(t)
    a[index] = value
    return float(a.sum())


def collect() -> int:
    return gc.collect()


def mapping_path(address: int) -> str | None:
    """The file (or [anon], [heap]) mapped at `address` in this process, from /proc/self/maps."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= address < hi:
                return parts[5] if len(parts) > 5 else "[anon]"
    return None


def shm_exists(name: str) -> bool:
    return os.path.exists("/dev/shm/" + name.lstrip("/"))


def wait_until(done: Callable[[], bool], nudge: Callable[[], Any], limit_s: float = 30.0) -> bool:
    """Polls `done` (calling `nudge`, e.g. a gc in the workers, between tries) until it holds
    or `limit_s` passes: engines release their copies asynchronously. Not a timing check:
    the limit only bounds a hang."""
    end = time.monotonic() + limit_s
    while True:
        gc.collect()
        if done():
            return True
        if time.monotonic() > end:
            return False
        nudge()
        time.sleep(0.05)
