"""Out of memory in C, reached from Python: every failed allocation of an entry point
becomes a MemoryError, leaves its inputs unchanged and no C object alive.

The failing-allocator hook (ffikit/debug.h) fails the N-th next C allocation of the
calling thread; each entry point is swept over N = 1, 2, ... until it succeeds without the
hook firing. Needs the testing build (Bazel's, or FFIKIT_TESTING=1 pip install).
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import ffikit
from ffikit import _core, testing


def sweep(op, check_unchanged=None):
    """Runs op with the 1st, 2nd, ... allocation failing; returns how many runs failed."""
    failures = 0
    for n in range(1, 500):
        gc.collect()
        live = _core._live_objects()
        _core._fail_allocation(n)
        try:
            op()
        except MemoryError:
            failures += 1
        finally:
            armed = _core._fail_allocation_armed()
            _core._fail_allocation(0)
        gc.collect()
        if check_unchanged is not None:
            check_unchanged()
        assert _core._live_objects() == live, f"allocation {n} failed and left C objects alive"
        if armed:  # the op made fewer than n allocations: every one has been failed once
            return failures
    raise AssertionError("the sweep did not finish")


@pytest.fixture(autouse=True)
def _needs_hooks(hooks):
    return hooks


def test_nested_conversion():
    value = [1, "a string long enough to be an object", {"k": [b"bytes long enough", 2.5]}, (None, True)]
    assert sweep(lambda: ffikit.convert(value)) >= 4
    assert value[2]["k"][1] == 2.5


def test_calls_with_converted_arguments_and_results():
    echo = ffikit.get_global_func("testing.echo")
    assert sweep(lambda: echo([1, "x" * 20, {"a": 1}])) >= 3


def test_callbacks_through_c():
    assert sweep(lambda: testing.apply(lambda a, b: [a, b], 1, "y" * 20)) >= 1


def test_errors_raised_in_callbacks():
    def boom():
        raise KeyError("k")

    def op():
        try:
            testing.apply(boom)
        except KeyError:
            pass

    sweep(op)


def test_container_construction_and_reads():
    src = list(range(20))
    sweep(lambda: ffikit.Array(src)[5])
    sweep(lambda: ffikit.Map({"a": 1, "b": [2]})["b"])
    d = ffikit.Dict({"a": 1})
    sweep(lambda: d.get("a"), check_unchanged=lambda: None)
    assert d["a"] == 1


def test_list_mutations_leave_the_list_unchanged_on_failure():
    if not hasattr(ffikit.List, "append"):
        pytest.skip("List has no mutators in this build")
    lst = ffikit.List([1, 2, 3])

    def op():
        lst.append("a string long enough for an object")
        lst.pop()

    def unchanged():
        assert list(lst) == [1, 2, 3]

    sweep(op, unchanged)


def test_dlpack_import_and_export():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    sweep(lambda: ffikit.from_dlpack(x))
    t = ffikit.from_dlpack(x)
    sweep(lambda: np.from_dlpack(t))
    sweep(lambda: t.transpose(0, 1).contiguous())


def test_functions_and_registry():
    sweep(lambda: ffikit.convert(lambda: 1))
    name = "test_faults.registered"

    def op():
        ffikit.register_global_func(name, lambda: 1, override=True)
        ffikit.remove_global_func(name)

    sweep(op)
    assert ffikit.get_global_func(name, allow_missing=True) is None
