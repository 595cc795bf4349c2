"""Depth everywhere: every operation that walks a value, on a List chain 10 million levels
deep, either works or raises the one RuntimeError that names the depth limit
(``ffikit._core.STRUCTURAL_MAX_DEPTH``, C's ``ffk_structural_too_deep``). Never a crash.

    release, iteration, indexing, len, copy.copy, repr/str   work at any depth
    ==, hash, ``in``, structural_equal/_hash/mismatch,
    copy.deepcopy, to_json_graph_str, pickle.dumps           RuntimeError naming the limit
    pickle.loads                                             works at any depth (no recursion)
    from_json_graph_str of deeply nested text                an error, never a crash
    converting a deep Python list or dict                    RecursionError (Python's limit:
                                                             Py_EnterRecursiveCall)
    py_class ==, hash, dataclasses.asdict/astuple            RecursionError (Python code, as
                                                             the standard dataclasses)

Building 10 million levels in Python takes seconds, so the module builds one List chain
(a module-scoped fixture) and runs every operation on it; Array, Map, Dict and py_class
chains, and nested Python lists and dicts, are 200,000 deep (the C and Rust depth tests take
every kind to 10 million; the binding's code is the same for each), so the file takes about
30 s on an idle machine. Under a sanitizer (FFIKIT_SANITIZED, run_pytest.sh) everything is
10 times shallower.
"""
from __future__ import annotations

import copy
import os
import pickle
from typing import Any, Optional

import pytest

import ffikit
from ffikit import Array, Dict, List, Map, Object, _core
from ffikit._pickle import _ARRAY, _LIST, _Ref, _rebuild
from ffikit.dataclasses import asdict, astuple, py_class

SANITIZED = bool(os.environ.get("FFIKIT_SANITIZED"))
DEEP = 1_000_000 if SANITIZED else 10_000_000
DEEP_OTHERS = DEEP // 50  # 200,000: four times what crashed release before it was bounded
LIMIT = _core.STRUCTURAL_MAX_DEPTH
TOO_DEEP = f"containers and objects nested deeper than {LIMIT} levels"


@py_class("test_depth.Node", eq=True, frozen=True)
class Node(Object):
    next: Optional[Any] = None


def chain(wrap: Any, depth: int) -> Any:
    x = wrap(None)
    for _ in range(depth - 1):
        x = wrap(x)
    return x


@py_class("test_depth.Holder", eq=True, frozen=True)
class Holder(Object):
    value: Any = None


WRAPS = {
    "List": lambda x: List([x]),
    "Array": lambda x: Array([x]),
    "Map": lambda x: Map({"k": x}),
    "Dict": lambda x: Dict({"k": x}),
    "Node": lambda x: Node(x),
}


@pytest.fixture(scope="module")
def deep() -> Any:
    x = chain(WRAPS["List"], DEEP)
    yield x
    del x  # released here, 10 million levels at once


@pytest.fixture(scope="module")
def other() -> Any:
    """A second List chain, distinct and past the limit, so that equality has to walk."""
    return chain(WRAPS["List"], 2 * LIMIT)


def test_the_limit_is_c_s():
    assert LIMIT == 1000
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        _core._structural_too_deep()


def test_repr_iteration_indexing_and_copy_work(deep):
    text = repr(deep)
    assert text.startswith("[[[[") and "..." in text
    assert str(deep) == text
    assert len(deep) == 1
    (inner,) = list(deep)
    assert type(inner) is List and len(inner) == 1
    assert next(iter(deep)).same_as(deep[0])
    assert list(reversed(deep))[0].same_as(inner)
    assert deep[-1][0][0].same_as(inner[0][0])
    assert ffikit.convert(deep).same_as(deep)  # an ffikit value converts to itself
    shallow = copy.copy(deep)
    assert shallow is not deep and shallow[0].same_as(inner)


def test_equality_and_hash_name_the_limit(deep, other):
    assert deep == deep  # itself: no walk
    assert ffikit.structural_equal(deep, deep)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        deep == other  # noqa: B015
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        hash(deep)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        other in List([deep])  # noqa: B015 - `in` compares structurally
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.structural_equal(deep, other)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.structural_hash(deep)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.get_first_structural_mismatch(deep, other)


def test_deep_copy_and_json_graph_out_name_the_limit(deep):
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        copy.deepcopy(deep)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.serialization.to_json_graph_str(deep)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.serialization.to_json_graph_str(None, metadata={"deep": deep})


def test_pickle_out_names_the_limit(deep):
    # Before: the encoder recursed in Python, so this was a RecursionError at about 500
    # levels ("maximum recursion depth exceeded"), naming no limit of ffikit's.
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        with pytest.raises(RuntimeError, match=TOO_DEEP):
            pickle.dumps(deep, protocol=protocol)


@pytest.mark.parametrize("kind", list(WRAPS))
def test_pickle_round_trips_every_kind_at_the_limit(kind):
    # Before: a RecursionError from about 500 levels (two Python frames per level).
    x = chain(WRAPS[kind], LIMIT)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is type(x) and ffikit.structural_equal(x, y)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        pickle.dumps(WRAPS[kind](x))


def test_pickle_in_rebuilds_any_depth():
    # A graph of Arrays nested far past the limit, as a pickle holds it: node i is an Array
    # of node i + 1. Rebuilding is bottom-up with its own stack.
    n = 100_000
    nodes = [(_ARRAY, [_Ref(i + 1)]) for i in range(n)] + [(_ARRAY, [7])]
    x = _rebuild(nodes)
    assert type(x) is Array
    inner = x
    for _ in range(n):
        inner = inner[0]
    assert list(inner) == [7]
    del x, inner
    # Lists filled after they are made: a chain of them, and one that holds itself.
    x = _rebuild([(_LIST, [_Ref(1)]), (_LIST, [_Ref(2)]), (_LIST, [_Ref(0)])])
    assert x[0][0][0].same_as(x)
    x[0][0].clear()
    # An Array that holds itself cannot be made: a clear error, not a recursion.
    with pytest.raises(ValueError, match="contains itself"):
        _rebuild([(_ARRAY, [_Ref(1)]), (_ARRAY, [_Ref(0)])])


def test_json_graph_in_of_deep_text_is_an_error_not_a_crash():
    nested = "[" * DEEP + "]" * DEEP
    doc = '{"root_index":0,"nodes":[{"type":"ffi.Array","data":[]}],"metadata":' + nested + "}"
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.serialization.from_json_graph_str_with_metadata(doc)
    with pytest.raises(ValueError):
        ffikit.serialization.from_json_graph_str(nested)
    nodes = ",".join('{"type":"ffi.Array","data":[%d]}' % (i + 1) for i in range(2 * LIMIT))
    graph = '{"root_index":0,"nodes":[' + nodes + ',{"type":"ffi.Array","data":[]}]}'
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.serialization.from_json_graph_str(graph)


def test_converting_deep_python_data_is_a_recursion_error():
    nested: Any = []
    for _ in range(DEEP_OTHERS):
        nested = [nested]
    with pytest.raises(RecursionError, match="while converting a sequence"):
        ffikit.convert(nested)
    with pytest.raises(RecursionError, match="while converting"):
        Array([nested])
    d: Any = {}
    for _ in range(DEEP_OTHERS):
        d = {"k": d}
    with pytest.raises(RecursionError, match="while converting a dict"):
        ffikit.convert(d)


@pytest.mark.parametrize("kind", ["Array", "Map", "Dict", "Node"])
def test_every_walk_of_other_kinds(kind):
    x = chain(WRAPS[kind], DEEP_OTHERS)
    y = chain(WRAPS[kind], 2 * LIMIT)
    assert "..." in repr(x)
    assert x == x
    for walk in (lambda: ffikit.structural_equal(x, y), lambda: ffikit.structural_hash(x),
                 lambda: ffikit.get_first_structural_mismatch(x, y), lambda: copy.deepcopy(x),
                 lambda: ffikit.serialization.to_json_graph_str(x), lambda: pickle.dumps(x)):
        with pytest.raises(RuntimeError, match=TOO_DEEP):
            walk()
    if kind == "Node":
        # py_class's generated __eq__ and __hash__ are Python code over the fields, as the
        # standard dataclasses': Python's recursion limit stops them.
        with pytest.raises(RecursionError):
            x == y  # noqa: B015
        with pytest.raises(RecursionError):
            hash(x)
        with pytest.raises(RecursionError):
            asdict(x)
        with pytest.raises(RecursionError):
            astuple(x)
    else:
        with pytest.raises(RuntimeError, match=TOO_DEEP):
            x == y  # noqa: B015
        with pytest.raises(RuntimeError, match=TOO_DEEP):
            hash(x)


def test_py_class_eq_and_hash_of_a_deep_field_are_recursion_errors(deep, other):
    # The generated __eq__/__hash__ compare fields as the standard library would (ffikit
    # sequences as tuples, recursively): Python code, so Python's recursion limit stops it.
    a, b = Holder(deep), Holder(other)
    with pytest.raises(RecursionError):
        a == b  # noqa: B015
    with pytest.raises(RecursionError):
        hash(a)
    with pytest.raises(RuntimeError, match=TOO_DEEP):
        ffikit.structural_equal(a, b)  # C's walk: the named limit
