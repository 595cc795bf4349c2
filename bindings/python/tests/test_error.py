"""Errors across the boundary: the kind table, identity, backtraces, no cycles."""
from __future__ import annotations

import copy
import gc
import pickle
import traceback
import weakref

import numpy as np
import pytest

import ffikit
from ffikit import _core, testing

KINDS = ["RuntimeError", "ValueError", "TypeError", "AttributeError", "KeyError", "IndexError",
         "AssertionError", "MemoryError", "NotImplementedError", "OverflowError"]


@pytest.mark.parametrize("kind", KINDS)
def test_c_kinds_map_to_python_exceptions(kind):
    import builtins

    with pytest.raises(getattr(builtins, kind)) as info:
        testing.raise_error(kind, "boom")
    err = info.value.__ffikit_error__
    assert isinstance(err, ffikit.Error)
    assert err.kind == kind and err.message == "boom"
    assert info.value.__tvm_ffi_error__ is err
    assert type(info.value).__name__ == kind


def test_unknown_kinds_become_runtime_error_keeping_the_kind():
    with pytest.raises(RuntimeError) as info:
        testing.raise_error("mylib.Broken", "it broke")
    assert type(info.value) is RuntimeError
    assert info.value.__ffikit_error__.kind == "mylib.Broken"
    assert str(info.value) == "it broke"


def test_register_error_adds_a_kind_as_a_decorator():
    @ffikit.register_error("mylib.Custom")
    class CustomError(Exception):
        pass

    with pytest.raises(CustomError, match="custom"):
        testing.raise_error("mylib.Custom", "custom")

    @ffikit.register_error
    class SecondError(ValueError):
        pass

    with pytest.raises(SecondError):
        testing.raise_error("SecondError", "x")


def test_backtrace_names_the_raising_c_function_and_each_hop():
    with pytest.raises(ValueError) as info:
        testing.apply(testing.raise_error, "ValueError", "deep")
    bt = info.value.__ffikit_error__.backtrace
    assert "ffk_testing_raise_error" in bt
    assert "in call to Function `testing.raise_error`" in bt
    assert bt.index("testing.raise_error`") < bt.index("testing.apply`")
    names = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "ffk_testing_raise_error" in names and "testing.apply" in names


def test_python_exception_in_a_callback_comes_back_as_the_same_object():
    raised = []

    def cb():
        e = LookupError("from python")
        raised.append(e)
        raise e

    with pytest.raises(LookupError) as info:
        testing.apply(cb)
    assert info.value is raised[0]
    names = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert names.index("testing.apply") < names.index("cb")  # C frames outside the callback
    assert "cb" in info.value.__ffikit_error__.backtrace


def test_error_keeps_identity_through_python_c_python_c_python():
    first = []

    def inner():
        e = ValueError("innermost")
        first.append(e)
        raise e

    def middle():
        testing.apply(inner)  # Python -> C -> Python, re-raised into C below

    with pytest.raises(ValueError) as info:
        testing.apply(middle)
    assert info.value is first[0]
    bt = info.value.__ffikit_error__.backtrace
    assert "inner" in bt and "middle" in bt
    assert bt.count("in call to Function `testing.apply`") == 2
    assert bt.index("inner") < bt.index("middle")


def test_a_reraised_sentinel_starts_a_new_backtrace_each_raise():
    sentinel = ValueError("sentinel")

    def cb():
        raise sentinel.with_traceback(None)

    sizes = []
    for _ in range(1000):
        with pytest.raises(ValueError) as info:
            testing.apply(cb)
        assert info.value is sentinel
        sizes.append((len(sentinel.__ffikit_error__.backtrace), len(traceback.extract_tb(sentinel.__traceback__))))
        del info
    assert len(set(sizes)) == 1, (sizes[0], sizes[1], sizes[-1])
    bt = sentinel.__ffikit_error__.backtrace
    assert bt.count("in cb") == 1 and bt.count("in call to Function `testing.apply`") == 1, bt


def test_a_reraise_that_keeps_its_traceback_still_grows_its_backtrace_like_python():
    def inner():
        raise KeyError("k")

    def outer():
        try:
            testing.apply(inner)
        except KeyError as e:
            raise e  # the same raise, travelling on: Python keeps its traceback and so does the Error

    with pytest.raises(KeyError) as info:
        testing.apply(outer)
    bt = info.value.__ffikit_error__.backtrace
    assert bt.index("in inner") < bt.index("in outer") and bt.count("in call to Function `testing.apply`") == 2


def test_no_reference_cycle_after_catching():
    class Marker(Exception):
        pass

    def cb():
        raise Marker("x")

    gc.collect()
    gc.disable()
    try:
        try:
            testing.apply(cb)
        except Marker as e:
            ref = weakref.ref(e)
            err_ref = weakref.ref(e.__ffikit_error__)
        assert ref() is None, "the exception is kept alive by a reference cycle"
        assert err_ref() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("raise_in_c", [
    lambda: testing.raise_error("ValueError", "from C"),
    lambda: ffikit.from_dlpack(np.zeros(4)).as_strided([10**6], [1]),
])
def test_c_error_frames_make_no_cycle_with_the_catching_frame(raise_in_c):
    # The frames that show C locations in the traceback are made by Python helpers; if a
    # helper's frame kept one in a local, frame -> f_back -> helper -> frame was a cycle
    # that kept the catching function's frame and locals alive (found by fuzz_dlpack: an
    # imported tensor's deleter ran late).
    class Local:
        pass

    def catch():
        local = Local()
        try:
            raise_in_c()
        except (ValueError, KeyError):
            pass
        return weakref.ref(local)

    gc.collect()
    gc.disable()
    try:
        ref = catch()
        assert ref() is None, "the catching frame is kept alive by a reference cycle"
    finally:
        gc.enable()
    with pytest.raises(ValueError) as info:
        raise_in_c()
    assert any(".c" in tb.tb_frame.f_code.co_filename for tb in _walk(info.value.__traceback__))


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_error_object_pickles_and_survives_exception_pickle_and_deepcopy():
    with pytest.raises(KeyError) as info:
        testing.raise_error("KeyError", "k")
    exc = info.value
    err = exc.__ffikit_error__
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, ffikit.Error) and again.kind == "KeyError" and again.message == "k"
    assert again.backtrace == err.backtrace
    for clone in (pickle.loads(pickle.dumps(exc)), copy.deepcopy(exc)):
        assert isinstance(clone.__ffikit_error__, ffikit.Error)
        assert clone.__ffikit_error__.message == "k"
    assert copy.deepcopy(err) is err


def test_error_constructor_and_same_as():
    e = ffikit.Error("ValueError", "made in python", "  at somewhere (file.c:1)\n")
    assert e.kind == "ValueError" and "file.c:1" in e.backtrace
    assert e.same_as(e) and not e.same_as(ffikit.Error("ValueError", "other"))
    py = e.py_error()
    assert isinstance(py, ValueError) and py.__ffikit_error__ is e


@pytest.mark.parametrize("line", [str(10**15), str(2**31), "9" * 5000])
def test_a_backtrace_line_number_of_any_size_converts_at_once(line):
    # Backtrace lines are data (pickles and other languages write them): a line number may
    # not size anything, nor exceed what a traceback holds.
    e = ffikit.Error("ValueError", "m", f'  File "x.py", line {line}, in far\n  at g (y.c:{line})\n')
    py = e.py_error()
    assert isinstance(py, ValueError) and py.__ffikit_error__ is e
    lines = [(f.name, f.lineno) for f in traceback.extract_tb(py.__traceback__)]
    assert lines[-2:] == [("g", 2**31 - 1), ("far", 2**31 - 1)]


def test_memory_error_from_c_is_a_memory_error():
    with pytest.raises(MemoryError):
        testing.raise_error("MemoryError", "no memory")


def test_failed_allocation_in_a_call_is_a_memory_error(hooks):
    s = "x" * 100
    hooks._fail_allocation(1)
    try:
        with pytest.raises(MemoryError):
            ffikit.convert([s])
    finally:
        hooks._fail_allocation(0)


def test_raise_from_c_helper():
    with pytest.raises(IndexError, match="^out of range$"):
        _core._raise_ffk("IndexError", "out of range")
