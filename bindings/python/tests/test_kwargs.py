"""Keyword arguments: typed Functions bind f(xs=[1, 2], k=3) by their parameter names.

C binds the keywords (ffk_function_call_kw), so the rules and the TypeError texts are
CPython's and the same in every language; the values go through the typed conversion,
so a mismatch reads as in a positional call.
"""
from __future__ import annotations

import inspect
import os
import threading

import pytest

import ffikit


def _testing_module_path() -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "..", "testing", "libffikit_testing.so"))
    return candidate if os.path.exists(candidate) else None


@pytest.fixture(scope="module")
def scale():
    """`scale(xs: Array<float>, k: float) -> Array<float>` from the testing module, loaded
    before the per-test object count (a loaded module stays loaded)."""
    path = _testing_module_path()
    if path is None:
        pytest.skip("libffikit_testing.so is not built next to this checkout")
    return ffikit.load_module(path).get_function("scale")


def test_keywords_bind_by_name_in_any_order(scale):
    assert list(scale([1.0, 2.0], 3.0)) == [3.0, 6.0]
    assert list(scale([1.0, 2.0], k=3.0)) == [3.0, 6.0]
    assert list(scale(xs=[1.0, 2.0], k=3.0)) == [3.0, 6.0]
    assert list(scale(k=3.0, xs=[1.0, 2.0])) == [3.0, 6.0]
    assert list(scale(*[[1.0]], **{"k": 2.0})) == [2.0]


def test_keyword_values_are_converted_like_positional_ones(scale):
    # A list of ints becomes an Array<float>, an int a float; also for an ffikit List.
    r = scale(xs=[1, 2], k=3)
    assert isinstance(r, ffikit.Array) and list(r) == [3.0, 6.0]
    assert list(scale(k=2, xs=ffikit.List([1, 2]))) == [2.0, 4.0]
    assert list(scale(xs=(0.5,), k=True)) == [0.5]


def test_a_mismatch_through_a_keyword_reads_as_the_positional_one(scale):
    with pytest.raises(TypeError) as by_keyword:
        scale([1.0], k="x")
    with pytest.raises(TypeError) as by_position:
        scale([1.0], "x")
    assert str(by_keyword.value) == str(by_position.value) == (
        "Mismatched type on argument #1 when calling: `scale(xs: Array<float>, k: float) -> Array<float>`."
        " Expected `float` but got `str`")
    with pytest.raises(TypeError) as e:
        scale(k=1.0, xs=["a"])
    assert str(e.value).endswith("Expected `Array<float>` but got `Array` (item #0: expected `float` but got `str`)")
    del by_keyword, by_position, e  # their tracebacks hold the converted arguments


@pytest.mark.parametrize("call, message", [
    (lambda f: f([1.0], q=2.0), "scale() got an unexpected keyword argument 'q'"),
    (lambda f: f([1.0], 2.0, q=2.0), "scale() got an unexpected keyword argument 'q'"),
    (lambda f: f([1.0], xs=[2.0]), "scale() got multiple values for argument 'xs'"),
    (lambda f: f([1.0], 2.0, k=2.0), "scale() got multiple values for argument 'k'"),
    (lambda f: f([1.0], 2.0, 3.0, k=2.0), "scale() got multiple values for argument 'k'"),
    (lambda f: f(xs=[1.0]), "scale() missing 1 required positional argument: 'k'"),
    (lambda f: f(k=1.0), "scale() missing 1 required positional argument: 'xs'"),
])
def test_binding_errors_have_cpythons_texts(scale, call, message):
    with pytest.raises(TypeError) as e:
        call(scale)
    assert str(e.value) == message


def test_the_texts_match_a_python_function_of_the_same_shape(scale):
    def py_scale(xs, k):
        return [x * k for x in xs]

    for args, kwargs in [(([1.0],), {"q": 2.0}), (([1.0],), {"xs": [2.0]}), ((), {"xs": [1.0]}),
                         ((), {"k": 1.0})]:
        with pytest.raises(TypeError) as ours:
            scale(*args, **kwargs)
        with pytest.raises(TypeError) as cpython:
            py_scale(*args, **kwargs)
        assert str(ours.value) == str(cpython.value).replace("py_scale", "scale").replace(
            "test_the_texts_match_a_python_function_of_the_same_shape.<locals>.", "")


def test_many_keywords_take_the_allocating_path(scale):
    names = {f"p{i}": i for i in range(10)}
    with pytest.raises(TypeError, match=r"^scale\(\) got an unexpected keyword argument 'p0'$"):
        scale([1.0], 2.0, **names)
    assert list(scale(**{"k": 2.0, "xs": list(range(12))}))[-1] == 22.0


def test_a_keyword_with_a_nul_is_unexpected(scale):
    with pytest.raises(TypeError, match=r"^scale\(\) got an unexpected keyword argument 'k\\x00'$"):
        scale([1.0], **{"k\0": 1.0})


def test_untyped_functions_take_no_keywords(testing):
    echo = ffikit.get_global_func("testing.echo")
    with pytest.raises(TypeError) as e:
        echo(x=1)
    assert str(e.value) == "testing.echo() takes no keyword arguments"
    assert echo(1) == 1
    assert echo(*[2], **{}) == 2  # no keywords at all is a positional call


def test_typed_functions_without_parameter_names_take_no_keywords():
    add_one = ffikit.get_global_func("testing.add_one")
    with pytest.raises(TypeError) as e:
        add_one(x=1)
    assert str(e.value) == "testing.add_one() takes no keyword arguments"
    assert add_one(1) == 2


def test_python_callables_as_functions_take_no_keywords():
    # A Python callable wrapped into a Function is untyped: C refuses keywords for it
    # before Python runs, whatever the callable would accept.
    seen = []
    f = ffikit.convert(lambda a=0, b=0: seen.append((a, b)))
    with pytest.raises(TypeError) as e:
        f(a=1)
    assert str(e.value) == ("test_python_callables_as_functions_take_no_keywords.<locals>.<lambda>()"
                            " takes no keyword arguments")
    del e  # its traceback holds this frame, and with it f
    assert seen == []
    f(1, 2)
    assert seen == [(1, 2)]


def test_signature_of_a_typed_function(scale):
    sig = inspect.signature(scale)
    assert str(sig) == "(xs: 'Array<float>', k: 'float') -> 'Array<float>'"
    assert [p.kind for p in sig.parameters.values()] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * 2
    bound = sig.bind([1.0], k=2.0)  # the signature binds the way the call does
    assert list(scale(*bound.args, **bound.kwargs)) == [2.0]


def test_signature_of_unnamed_parameters_is_positional_only():
    sig = inspect.signature(ffikit.get_global_func("testing.test_raise_error"))
    assert str(sig) == "(_0: 'str', _1: 'str', /) -> 'None'"
    assert str(inspect.signature(ffikit.get_global_func("testing.get_add_one_c_symbol"))) == "() -> 'ptr'"


def test_untyped_functions_have_no_signature():
    echo = ffikit.get_global_func("testing.echo")
    assert echo.__signature__ is None
    # CPython 3.11 then finds no signature (ValueError); 3.12+ falls back to the type's
    # __call__, `(*args, **kwargs)`: either way no named parameter is claimed.
    try:
        sig = inspect.signature(echo)
    except ValueError:
        return
    kinds = {p.kind for p in sig.parameters.values()}
    assert kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}, sig


def test_keyword_calls_from_threads_agree(scale):
    errors = []

    def work(t):
        for i in range(200):
            r = scale(k=float(t), xs=[float(i)])
            if list(r) != [float(i * t)]:
                errors.append((t, i, list(r)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_release_gil_off_takes_the_same_path(scale):
    scale.release_gil = False
    try:
        assert list(scale(xs=[1.0], k=4.0)) == [4.0]
        with pytest.raises(TypeError, match="unexpected keyword argument 'q'"):
            scale([1.0], q=1)
    finally:
        scale.release_gil = True
