"""Functions: calls, the registry, callbacks from C and from native threads."""
from __future__ import annotations

import sys
import threading

import pytest

import ffikit
from ffikit import testing


def test_calls_pass_positional_arguments_and_convert_results():
    assert testing.add_one(41) == 42
    assert testing.nop(1, "two", [3]) is None
    assert testing.apply(lambda a, b: a + b, 2, 3) == 5


def test_keyword_arguments_are_refused_by_untyped_functions():
    # Typed Functions with named parameters take keywords (test_kwargs.py); untyped ones do not.
    with pytest.raises(TypeError, match=r"^testing\.echo\(\) takes no keyword arguments$"):
        testing.echo(x=1)


def test_typed_signature_mismatch_has_the_exact_message():
    with pytest.raises(TypeError) as info:
        testing.add_one("x")
    assert str(info.value) == (
        "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. Expected `int` but got `str`"
    )
    with pytest.raises(TypeError, match=r"Mismatched number of arguments .* Expected 1 but got 2"):
        testing.add_one(1, 2)


def test_typed_mismatch_names_an_opaque_python_object_as_tvm_ffi_does():
    class Thing:
        pass

    with pytest.raises(TypeError) as info:
        testing.add_one(Thing())
    assert str(info.value) == (
        "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. "
        "Expected `int` but got `ffi.OpaquePyObject`"
    )
    thing = Thing()
    assert testing.echo(thing) is thing  # still the very same object on the way back
    assert testing.schema_id_object(thing) is thing
    assert testing.echo([thing])[0] is thing


def test_release_gil_flag_defaults_on_and_can_be_turned_off():
    f = ffikit.get_global_func("testing.echo")
    assert f.release_gil is True
    f.release_gil = False
    assert f.release_gil is False and f(5) == 5


def test_a_quick_function_keeps_the_gil_and_can_still_release_it():
    # testing.nop carries FFK_FUNCTION_QUICK in C: its wrappers start with release_gil off.
    nop = ffikit.get_global_func("testing.nop")
    assert nop.quick is True and nop.release_gil is False
    assert nop(1, 2, 3) is None and nop(1, "two", [3]) is None  # both call paths
    nop.release_gil = True  # a wrapper's own switch still rules
    assert nop.release_gil is True and nop(1, 2, 3) is None
    assert ffikit.get_global_func("testing.nop").release_gil is False  # a new wrapper: the flag again
    echo = ffikit.get_global_func("testing.echo")
    assert echo.quick is False and echo.release_gil is True
    with pytest.raises(AttributeError):
        nop.quick = False  # set in C only


def test_function_name_and_signature():
    assert testing.add_one.name == "testing.add_one"
    assert testing.add_one.signature == "testing.add_one(0: int) -> int"
    assert testing.echo.signature is None
    assert "testing.add_one" in repr(testing.add_one)


def test_register_get_remove_list():
    name = "test_function.register"
    f = ffikit.register_global_func(name, lambda x: x + 100)
    try:
        assert isinstance(f, ffikit.Function)
        assert ffikit.get_global_func(name)(1) == 101
        assert name in ffikit.list_global_func_names()
        with pytest.raises(RuntimeError, match=f"^Global Function `{name}` is already registered$"):
            ffikit.register_global_func(name, lambda x: x)
        g = ffikit.register_global_func(name, lambda x: x - 1, override=True)
        assert ffikit.get_global_func(name)(1) == 0 and g(1) == 0
    finally:
        assert ffikit.remove_global_func(name) is True
    assert ffikit.remove_global_func(name) is False
    assert ffikit.get_global_func(name, allow_missing=True) is None
    with pytest.raises(ValueError, match=f"^Cannot find global function {name}$"):
        ffikit.get_global_func(name)


def test_register_as_a_decorator_and_with_a_function():
    @ffikit.register_global_func("test_function.decorated")
    def twice(x):
        return 2 * x

    try:
        assert isinstance(twice, ffikit.Function) and twice(4) == 8
        ffikit.register_global_func("test_function.alias", twice)
        assert ffikit.get_global_func("test_function.alias").same_as(twice)
    finally:
        ffikit.remove_global_func("test_function.decorated")
        ffikit.remove_global_func("test_function.alias")


def test_python_callbacks_see_converted_arguments():
    seen = []
    testing.apply(lambda *a: seen.append(a), 1, "s" * 20, b"b" * 20, [1], None)
    (args,) = seen
    assert args[0] == 1 and args[1] == "s" * 20 and args[2] == b"b" * 20
    assert isinstance(args[3], ffikit.Array) and args[4] is None


def test_callback_from_a_native_thread_takes_the_gil():
    calls = []

    def cb(x):
        calls.append(threading.get_ident())
        return x + 1

    f = ffikit.convert(cb)
    assert testing.call_from_native_thread(f, 100, 1) == 2
    assert len(calls) == 100 and threading.get_ident() not in calls


def test_callback_exception_from_a_native_thread_comes_back():
    def cb():
        raise IndexError("from a native thread")

    with pytest.raises(IndexError, match="from a native thread"):
        testing.call_from_native_thread(ffikit.convert(cb), 1)


def test_python_threads_call_concurrently():
    errors = []

    def work():
        try:
            for i in range(2000):
                assert testing.add_one(i) == i + 1
                assert testing.apply(lambda x: x, i) == i
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_from_extern_c_wraps_a_c_symbol():
    address = testing.get_add_one_c_symbol()
    assert isinstance(address, int) and address != 0
    f = ffikit.Function.__from_extern_c__(address)
    assert f(1) == 2
    keep = object()
    before = sys.getrefcount(keep)
    g = ffikit.Function.__from_extern_c__(address, keep_alive_object=keep)
    assert sys.getrefcount(keep) == before + 1
    del g
    assert sys.getrefcount(keep) == before


def test_functions_hold_their_callable_and_release_it():
    import weakref

    class Callable:
        def __call__(self):
            return 7

    c = Callable()
    ref = weakref.ref(c)
    f = ffikit.convert(c)
    del c
    assert f() == 7 and ref() is not None
    del f
    assert ref() is None


def test_object_use_count_sees_the_callers_reference():
    f = ffikit.get_global_func("testing.echo")
    assert testing.object_use_count(f) >= 2  # the registry's and ours


@pytest.mark.parametrize("call, kind, message", [
    (lambda: ffikit.get_global_func(""), ValueError, "cannot look up a global Function: the name is empty"),
    (lambda: ffikit.register_global_func("", lambda: 1), ValueError,
     "cannot register a global Function: the name is empty"),
    (lambda: ffikit.remove_global_func(""), ValueError, "cannot remove a global Function: the name is empty"),
    (lambda: ffikit.load_module(""), ValueError, "cannot load a module: the path is empty"),
    (lambda: ffikit._core._type_register(""), ValueError,
     "cannot register a type: the type key must be a non-empty string"),
])
def test_messages_name_the_users_operation_not_a_c_function(call, kind, message):
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message
    assert "ffk_" not in str(info.value)

