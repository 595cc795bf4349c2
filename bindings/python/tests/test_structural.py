"""ffikit.structural (structural_equal, structural_hash, get_first_structural_mismatch),
ffikit.access_path, and copy / deepcopy of reflected objects. The mismatch paths are
checked against the texts tvm_ffi 0.1.15 prints for the same inputs (TVM_MISMATCH below,
recorded from it; test_serialization.py re-derives them from a live tvm_ffi when one is
reachable)."""
from __future__ import annotations

import copy
import json
import math
import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ffikit
from ffikit import Array, Dict, List, Map
from ffikit.access_path import AccessKind, AccessPath, AccessStep
from ffikit.structural import get_first_structural_mismatch, structural_equal, structural_hash
from ffikit.testing import TestIntPair, TestObjectBase, TestObjectDerived

echo = ffikit.get_global_func("testing.echo")


def derived(**kw):
    kw.setdefault("v_map", Map({"a": 1}))
    kw.setdefault("v_array", Array([1, 2]))
    return TestObjectDerived(**kw)


# ---- structural_equal and structural_hash over every value kind ----------------------------


def test_exported_like_tvm_ffi():
    assert ffikit.structural_equal is structural_equal
    assert ffikit.structural_hash is structural_hash
    assert ffikit.get_first_structural_mismatch is get_first_structural_mismatch
    assert ffikit.structural.structural_equal is structural_equal
    for name in ("structural_equal", "structural_hash", "get_first_structural_mismatch", "access_path",
                 "serialization", "structural"):
        assert name in ffikit.__all__


def equal_pairs():
    """(a, b) pairs that are structurally equal but (mostly) not the same object."""
    return [
        (None, None), (True, True), (0, 0), (-(2**63), -(2**63)), (2**63 - 1, 2**63 - 1),
        (1.5, 1.5), (float("nan"), float("nan")), (-0.0, 0.0), (float("inf"), float("inf")),
        ("", ""), ("héllo" * 10, "héllo" * 10), (b"", b""), (b"\x00\xff", b"\x00\xff"),
        (ffikit.dtype("float32"), ffikit.dtype("float32")), (ffikit.Device(2, 1), ffikit.Device(2, 1)),
        (Array([1, "a", None]), Array([1, "a", None])), ([1, [2, [3]]], Array([1, Array([2, Array([3])])])),
        (List([1, 2]), List([1, 2])), (Map({"a": 1, "b": 2}), Map({"b": 2, "a": 1})),
        (Dict({1: [1], 2: "x"}), Dict({2: "x", 1: [1]})), ({"k": [1, {"n": None}]}, {"k": [1, {"n": None}]}),
        (TestIntPair(1, 2), TestIntPair(1, 2)),
        (derived(v_str="s"), derived(v_str="s")),
        (Array([TestIntPair(1, 2), Map({"p": TestIntPair(3, 4)})]),
         Array([TestIntPair(1, 2), Map({"p": TestIntPair(3, 4)})])),
        (TestObjectBase(), TestObjectBase()),
    ]


def unequal_pairs():
    return [
        (None, 0), (1, True), (1, 1.0), (0, False), (1, 2), (1.5, 2.5), ("a", "b"), ("a", b"a"),
        (b"a", b"b"), (ffikit.dtype("float32"), ffikit.dtype("float16")),
        (ffikit.Device(2, 1), ffikit.Device(2, 0)), (ffikit.Shape((2, 3)), ffikit.Shape((3, 2))),
        (Array([1, 2]), List([1, 2])), (Map({"a": 1}), Dict({"a": 1})), (Array([1]), Array([1, 1])),
        (Array([1, 2]), Array([2, 1])), (Map({"a": 1}), Map({"a": 2})), (Map({"a": 1}), Map({"b": 1})),
        (TestIntPair(1, 2), TestIntPair(1, 3)), (TestObjectBase(), derived()),  # a derived type never equals its parent
        (derived(v_array=Array([1])), derived(v_array=Array([2]))), (TestIntPair(1, 2), Array([1, 2])),
    ]


@pytest.mark.parametrize("a, b", equal_pairs(), ids=repr)
def test_equal_values_are_equal_and_hash_alike(a, b):
    assert structural_equal(a, b) and structural_equal(b, a)
    assert structural_equal(a, a)
    assert structural_hash(a) == structural_hash(b)
    assert 0 <= structural_hash(a) < 2**64
    assert get_first_structural_mismatch(a, b) is None


@pytest.mark.parametrize("a, b", unequal_pairs(), ids=repr)
def test_unequal_values(a, b):
    assert not structural_equal(a, b) and not structural_equal(b, a)
    assert get_first_structural_mismatch(a, b) is not None


def test_shapes_compare_by_content_as_in_tvm_ffi():
    assert structural_equal(ffikit.Shape((2, 3)), ffikit.Shape((2, 3)))
    assert not structural_equal(ffikit.Shape((2, 3)), ffikit.Shape((3, 2)))
    assert structural_hash(ffikit.Shape((2, 3))) == structural_hash(ffikit.Shape((2, 3)))
    assert structural_equal(Array([ffikit.Shape((1,))]), Array([ffikit.Shape((1,))]))
    assert get_first_structural_mismatch(Array([ffikit.Shape((1,))]), Array([ffikit.Shape((2,))]))[0] == \
        AccessPath.root().array_item(0)


def test_python_values_convert_like_function_arguments():
    # a list is an Array and a dict a Map, as when passed to a Function
    assert structural_equal([1, 2], Array([1, 2]))
    assert not structural_equal([1, 2], List([1, 2]))
    assert structural_equal({"a": [1]}, Map({"a": Array([1])}))
    assert structural_equal(echo([1, 2]), [1, 2])
    assert structural_hash([1, {"a": 2}]) == structural_hash(Array([1, Map({"a": 2})]))


def test_options_change_nothing_without_variables():
    for mfv in (False, True):
        for stc in (False, True):
            assert structural_equal([1], [1], map_free_vars=mfv, skip_tensor_content=stc)
            assert structural_hash([1], mfv, stc) == structural_hash([1])
            assert get_first_structural_mismatch([1], [2], mfv, stc) is not None


def test_tensors_functions_and_python_objects_compare_by_identity():
    np = pytest.importorskip("numpy")
    t = ffikit.from_dlpack(np.zeros(3, dtype="float32"))
    u = ffikit.from_dlpack(np.zeros(3, dtype="float32"))
    assert structural_equal(Array([t]), Array([t]))
    assert not structural_equal(Array([t]), Array([u]))  # same content, other tensor
    assert structural_hash(Array([t])) == structural_hash(Array([t]))
    f = ffikit.get_global_func("testing.echo")
    assert structural_equal(Array([f]), Array([f]))
    g = ffikit.convert(lambda: None)
    assert not structural_equal(f, g)
    # a Python object travels as an opaque object made per conversion: compared by identity
    o = ffikit.convert(Array([object()]))
    assert structural_equal(o, o) and structural_equal(Array([o, 1]), Array([o, 1]))
    assert not structural_equal(Array([object()]), Array([object()]))


def test_cycles_end_and_deep_nesting_is_a_runtime_error():
    lst = List([1])
    lst.append(lst)
    other = List([1])
    other.append(other)
    assert structural_equal(lst, other)
    assert structural_hash(lst) == structural_hash(other)
    def deep():
        d = Array([])
        for _ in range(1100):
            d = Array([d])
        return d

    a, b = deep(), deep()
    with pytest.raises(RuntimeError):
        structural_equal(a, b)
    with pytest.raises(RuntimeError):
        structural_hash(a)
    with pytest.raises(RuntimeError):
        get_first_structural_mismatch(a, b)
    lst.clear()  # breaks the cycles (else the List leaks)
    other.clear()


def test_options_must_be_truth_values():
    with pytest.raises(TypeError, match="not a bool"):
        structural_hash(1, map_free_vars=NotBool())
    with pytest.raises(TypeError, match="not a bool"):
        structural_equal(1, 1, skip_tensor_content=NotBool())


class NotBool:
    def __bool__(self):
        raise TypeError("not a bool")


def test_reflected_objects_compare_field_wise():
    a, b = TestObjectBase(v_i64=1, v_str="x"), TestObjectBase(v_i64=1, v_str="x")
    assert a != b and not a.same_as(b)  # == is identity, as tvm_ffi's
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    b.v_str = "y"
    assert not structural_equal(a, b)
    assert structural_hash(a) != structural_hash(b)


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=True) | st.text(max_size=5)
    | st.binary(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=15))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hash_is_consistent_with_equality(value):
    a, b = ffikit.convert(value), ffikit.convert(value)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b) == structural_hash(value)


@given(st.lists(st.integers(-5, 5), max_size=6), st.lists(st.integers(-5, 5), max_size=6))
@settings(max_examples=150, deadline=None)
def test_equality_matches_python_for_int_lists(x, y):
    assert structural_equal(x, y) == (x == y)
    if x == y:
        assert structural_hash(x) == structural_hash(y)
        assert get_first_structural_mismatch(x, y) is None
    else:
        lhs, rhs = get_first_structural_mismatch(x, y)
        # the first index where they differ, or the missing one past the shorter end
        i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        assert str(lhs) == (f"<root>[{i}]" if i < len(x) else f"<root>[<missing:{i}>]")
        assert str(rhs) == (f"<root>[{i}]" if i < len(y) else f"<root>[<missing:{i}>]")


# ---- hooks -------------------------------------------------------------------------------------


def test_hooked_testing_type_compares_by_its_hook():
    cls = _hooked_type()
    a, b, c = cls("Hello"), cls("HELLO"), cls("world")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, c)
    assert get_first_structural_mismatch(a, b) is None
    assert get_first_structural_mismatch(a, c) is not None
    assert structural_equal(Array([a]), Array([b]))
    lp, rp = get_first_structural_mismatch(Array([a, a]), Array([b, c]))
    assert str(lp) == str(rp) == "<root>[1]"  # a hook that says "unequal" reports its object
    assert structural_hash(Map({"k": a})) == structural_hash(Map({"k": b}))


def test_py_class_hook_reports_paths_through_equal():
    dc = pytest.importorskip("ffikit.dataclasses", reason="ffikit.dataclasses (py_class) is not in this build")

    @dc.py_class("test_structural.Pair")
    class Pair(ffikit.Object):
        first: Array
        second: Array

        def __s_equal__(self, other, equal):
            # compares the fields crosswise-insensitive: `first` as a set, `second` in order
            return equal(sorted(self.first), sorted(other.first), "first") and equal(self.second, other.second,
                                                                                   "second")

        def __s_hash__(self, hash_fn):
            return hash_fn(sorted(self.first)) ^ hash_fn(self.second)

    a, b = Pair(Array([2, 1]), Array([5])), Pair(Array([1, 2]), Array([5]))
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    c = Pair(Array([1, 2]), Array([5, 6]))
    lp, rp = get_first_structural_mismatch(Array([a]), Array([c]))
    assert (str(lp), str(rp)) == ("<root>[0].second[<missing:1>]", "<root>[0].second[1]")
    assert not structural_equal(a, c)


def _hooked_type():
    from ffikit import _core

    key = "testing.TestCaseInsensitive"
    index = _core._type_key_to_index(key)
    if index is None:
        pytest.skip(f"{key} (the C testing type with __s_equal__/__s_hash__ hooks) is not in this build")
    return _core._class_for(index)


# ---- first mismatch: paths against tvm_ffi 0.1.15's texts ---------------------------------------

# (lhs, rhs, lhs path, rhs path) as tvm_ffi 0.1.15 prints them for the same Python inputs
# (tvm_ffi.get_first_structural_mismatch; test_serialization.py re-checks with a live tvm_ffi).
TVM_MISMATCH = [
    ("[1, 2, 3]", "[1, 2, 4]", "<root>[2]", "<root>[2]"),
    ("[1, 2]", "[1, 2, 3]", "<root>[<missing:2>]", "<root>[2]"),
    ("[1, 2, 3]", "[1, 2]", "<root>[2]", "<root>[<missing:2>]"),
    ("{'a': 1}", "{'a': 2}", '<root>["a"]', '<root>["a"]'),
    ("{'a': 1}", "{'b': 1}", '<root>["a"]', '<root>[<missing:"a">]'),
    ("{'a': 1}", "{'a': 1, 'b': 2}", '<root>[<missing:"b">]', '<root>["b"]'),
    ("{'a': 1, 'b': 2}", "{'a': 1}", '<root>["b"]', '<root>[<missing:"b">]'),
    ("[{'k': [1]}]", "[{'k': [2]}]", '<root>[0]["k"][0]', '<root>[0]["k"][0]'),
    ("1", "2", "<root>", "<root>"),
    ("1", "'a'", "<root>", "<root>"),
    ("[1]", "{'a': 1}", "<root>", "<root>"),
    ("'x'", "'y'", "<root>", "<root>"),
    ("None", "1", "<root>", "<root>"),
    ("[1, [2, [3]]]", "[1, [2, [4]]]", "<root>[1][1][0]", "<root>[1][1][0]"),
    ("{1: 'a'}", "{1: 'b'}", "<root>[1]", "<root>[1]"),
    ("1", "1.0", "<root>", "<root>"),
    ("True", "1", "<root>", "<root>"),
    ("[1, 'a']", "[1, 'a']", None, None),
]


@pytest.mark.parametrize("lhs, rhs, lpath, rpath", TVM_MISMATCH)
def test_first_mismatch_paths_match_tvm_ffi(lhs, rhs, lpath, rpath):
    result = get_first_structural_mismatch(eval(lhs), eval(rhs))  # noqa: S307 - literals from the table
    if lpath is None:
        assert result is None
        return
    lp, rp = result
    assert isinstance(lp, AccessPath) and isinstance(rp, AccessPath)
    assert (str(lp), str(rp)) == (lpath, rpath)
    assert repr(lp) == lpath


def test_first_mismatch_in_object_fields():
    lp, rp = get_first_structural_mismatch(derived(v_array=Array([1, 2])), derived(v_array=Array([1, 3])))
    assert str(lp) == str(rp) == "<root>.v_array[1]"
    lp, rp = get_first_structural_mismatch(Array([TestIntPair(1, 2)]), Array([TestIntPair(1, 5)]))
    assert str(lp) == "<root>[0].b"
    lp, rp = get_first_structural_mismatch(derived(v_map=Map({"k": 1})), derived(v_map=Map({})))
    assert (str(lp), str(rp)) == ('<root>.v_map["k"]', '<root>.v_map[<missing:"k">]')
    # the first differing field in field order (inherited ones first)
    lp, _ = get_first_structural_mismatch(derived(v_i64=1, v_array=Array([1])), derived(v_i64=2, v_array=Array([2])))
    assert str(lp) == "<root>.v_i64"


def test_first_mismatch_paths_are_built_like_the_api():
    lp, _ = get_first_structural_mismatch({"body": [1, {"k": 1}]}, {"body": [1, {"k": 2}]})
    assert lp == AccessPath.root().map_item("body").array_item(1).map_item("k")
    assert str(lp) == '<root>["body"][1]["k"]'


# ---- AccessPath -------------------------------------------------------------------------------


def test_access_path_api():
    root = AccessPath.root()
    assert str(root) == "<root>" and root.depth == 0 and root.parent is None and root.step is None
    p = root.attr("body").array_item(1).map_item("k")
    assert str(p) == repr(p) == '<root>.body[1]["k"]'
    assert p.depth == 3
    assert str(p.parent) == "<root>.body[1]"
    assert p.step.kind == AccessKind.MAP_ITEM and p.step.key == "k"
    assert isinstance(p.step, AccessStep)
    steps = p.to_steps()
    assert [s.kind for s in steps] == [AccessKind.ATTR, AccessKind.ARRAY_ITEM, AccessKind.MAP_ITEM]
    assert [s.key for s in steps] == ["body", 1, "k"]
    assert str(root.array_item_missing(2)) == "<root>[<missing:2>]"
    assert str(root.map_item_missing("k")) == '<root>[<missing:"k">]'
    assert str(root.attr_missing("x")) == '<root>[<missing:"x">]'
    assert str(root.map_item(3)) == "<root>[3]" and str(root.map_item(None)) == "<root>[None]"
    assert list(AccessKind) == [0, 1, 2, 3, 4, 5]
    assert AccessKind.ATTR_MISSING == 3 and AccessKind.MAP_ITEM_MISSING.name == "MAP_ITEM_MISSING"


def test_access_path_equality_prefix_and_hash():
    root = AccessPath.root()
    a = root.attr("x").array_item(0)
    b = AccessPath.root().attr("x").array_item(0)
    assert a == b and not (a != b) and not a.same_as(b)
    assert hash(a) == hash(b) and len({a, b}) == 1
    assert a != root.attr("x").array_item(1)
    assert a != root.attr("x").array_item_missing(0)  # same key, other kind
    assert a != "<root>.x[0]" and (a == 1) is False
    assert root.is_prefix_of(a) and a.parent.is_prefix_of(a) and a.is_prefix_of(a)
    assert not a.is_prefix_of(a.parent)
    assert not root.attr("y").is_prefix_of(a)


def test_access_path_cannot_be_made_directly_and_checks_keys():
    with pytest.raises(ValueError, match="AccessPath.root"):
        AccessPath()
    with pytest.raises(TypeError):
        AccessPath.root().attr(1)  # an attribute name is a str
    with pytest.raises(TypeError):
        AccessPath.root().array_item("x")
    with pytest.raises((AttributeError, TypeError)):
        AccessPath.root().attr("x").depth = 5  # read-only


def test_access_path_is_immutable_and_shared():
    root = AccessPath.root()
    child = root.attr("a")
    grandchild = child.attr("b")
    assert str(child) == "<root>.a"  # extending never changes the parent
    assert grandchild.parent.same_as(child)


# ---- copy and deepcopy ------------------------------------------------------------------------


def test_copy_is_shallow_and_keeps_the_class():
    inner = List([1])
    obj = derived(v_array=Array([inner]))
    c = copy.copy(obj)
    assert type(c) is TestObjectDerived and not c.same_as(obj)
    assert c.v_array.same_as(obj.v_array)
    assert structural_equal(c, obj)


def test_deepcopy_copies_and_keeps_sharing():
    inner = List([1])
    obj = derived(v_array=Array([inner, inner]))
    d = copy.deepcopy(obj)
    assert type(d) is TestObjectDerived and structural_equal(d, obj)
    assert not d.v_array[0].same_as(inner)
    assert d.v_array[0].same_as(d.v_array[1])  # sharing kept


def test_deepcopy_honours_the_memo():
    p = TestIntPair(1, 2)
    again = echo(p)  # another wrapper of the same C object
    assert not (again is p) and again.same_as(p)
    memo: dict = {}
    c1 = copy.deepcopy(p, memo)
    c2 = copy.deepcopy(again, memo)
    assert c1 is c2  # one C object, one copy under one memo
    pair = copy.deepcopy([p, p, again])
    assert pair[0] is pair[1] is pair[2]
    assert not pair[0].same_as(p)
    assert copy.deepcopy(p, {id(p): "already"}) == "already"
    with pytest.raises(TypeError, match="memo"):
        p.__deepcopy__([])


def test_deepcopy_of_containers_holding_objects():
    objs = Array([TestIntPair(1, 2), derived()])
    d = copy.deepcopy(objs)
    assert structural_equal(d, objs)
    assert not d[0].same_as(objs[0])
    lst = List([TestIntPair(1, 2)])
    dl = copy.deepcopy(lst)
    assert structural_equal(dl, lst) and not dl[0].same_as(lst[0])


@given(st.integers(-(2**63), 2**63 - 1), st.text(max_size=8), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5))
@settings(max_examples=80, deadline=None)
def test_deepcopy_is_structurally_equal(i, s, xs):
    obj = derived(v_i64=i, v_str=s, v_array=Array(xs), v_map=Map({s: List(xs)}))
    d = copy.deepcopy(obj)
    assert structural_equal(d, obj) and structural_hash(d) == structural_hash(obj)
    assert not d.v_map[s].same_as(obj.v_map[s])


def test_copy_of_what_reflection_did_not_make_is_a_type_error():
    f = ffikit.get_global_func("testing.echo")
    with pytest.raises(TypeError):
        copy.copy(f)
    assert copy.deepcopy(f).same_as(f)  # shared, as other foreign objects are


def test_float_edge_values():
    assert structural_equal(math.nan, math.nan)
    assert structural_hash(-0.0) == structural_hash(0.0)
    assert not structural_equal(math.inf, -math.inf)


# ---- variables, kinds and map_free_vars (checked against tvm_ffi 0.1.15) ----------------------

# One program, run on ffikit here and on tvm_ffi in a subprocess (FFK_TVM_FFI_PYTHON): the
# types use py_class / field / Object and the three functions of whichever library runs
# it; run_cases() answers [name, map_free_vars, equal, hashes equal, mismatch paths].
FREE_VARS_PROGRAM = """
@py_class("test_fv.Var", structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")

@py_class("test_fv.NVar", structural_eq="var")
class NVar(Object):
    name: str

@py_class("test_fv.TVar", structural_eq="var")
class TVar(Object):
    ty: Any

@py_class("test_fv.Add")
class Add(Object):
    a: Any
    b: Any

@py_class("test_fv.Lam")
class Lam(Object):
    p: Any = field(structural_eq="def")
    body: Any

@py_class("test_fv.LamP", structural_eq="tree")
class LamP(Object):
    p: Any = field(structural_eq="def-pattern")
    body: Any

@py_class("test_fv.LamS")
class LamS(Object):
    p: Any = field(structural_eq="def-simple")
    body: Any

@py_class("test_fv.Node", structural_eq="dag")
class Node(Object):
    v: Any

@py_class("test_fv.Const", structural_eq="const-tree")
class Const(Object):
    v: Any

@py_class("test_fv.Single", structural_eq="singleton")
class Single(Object):
    v: Any

x, y, z = Var("x"), Var("y"), Var("z")
n1, n2 = TVar(1), TVar(1)
tx, ty = TVar(n1), TVar(n2)
A = Add(x, 1)
n, m1, m2 = Node(1), Node(1), Node(1)
t1, t2 = Add(1, 2), Add(1, 2)
s1, s2 = Single(1), Single(1)
CASES = [
    ("lambda", Lam(x, Add(x, 1)), Lam(y, Add(y, 1))),
    ("lambda wrong body", Lam(x, Add(x, 1)), Lam(y, Add(x, 1))),
    ("free", Add(x, 1), Add(y, 1)),
    ("free same", Add(x, 1), Add(x, 1)),
    ("two to one", Add(x, y), Add(z, z)),
    ("one to two", Add(x, x), Add(y, z)),
    ("swap", Add(x, y), Add(y, x)),
    ("compared name", Lam(NVar("a"), 1), Lam(NVar("b"), 1)),
    ("compared name same", Lam(NVar("a"), 1), Lam(NVar("a"), 1)),
    ("free then bound", [x, Lam(x, x)], [x, Lam(y, y)]),
    ("identical then mapped", [A, A], [A, Add(y, 1)]),
    ("dag shared alike", [n, n], [m1, m1]),
    ("dag shared unlike", [n, n], [m1, m2]),
    ("dag unshared vs shared", [m1, m2], [n, n]),
    ("dag crossed", [m1, m2], [m2, m1]),
    ("dag nested", Node([m1, m1]), Node([m2, Node(1)])),
    ("tree sharing ignored", [t1, t1], [t1, t2]),
    ("var alone", x, y),
    ("var itself", x, x),
    ("def array", Lam([x, y], Add(x, y)), Lam([y, x], Add(y, x))),
    ("def array wrong", Lam([x, y], Add(x, y)), Lam([y, x], Add(x, y))),
    ("map key", {x: 1}, {y: 1}),
    ("map key bound", [x, {x: 1}], [y, {y: 1}]),
    ("map key bound value", [x, {x: 1}], [y, {y: 2}]),
    ("nested", Lam(x, Lam(y, Add(x, y))), Lam(y, Lam(x, Add(y, x)))),
    ("nested wrong", Lam(x, Lam(y, Add(x, y))), Lam(y, Lam(x, Add(x, y)))),
    ("rebind", [Lam(x, x), Lam(x, x)], [Lam(y, y), Lam(z, z)]),
    ("pattern binds types", LamP(tx, [tx, n1]), LamP(ty, [ty, n2])),
    ("simple leaves types free", LamS(tx, [tx, n1]), LamS(ty, [ty, n2])),
    ("const tree", Const([1]), Const([1])),
    ("singleton", s1, s2),
    ("singleton itself", [s1], [s1]),
    ("dag in map", {"a": m1, "b": m1}, {"a": m2, "b": m2}),
]

def run_cases():
    out = []
    for name, a, b in CASES:
        for mfv in (False, True):
            eq = structural_equal(a, b, map_free_vars=mfv)
            heq = structural_hash(a, map_free_vars=mfv) == structural_hash(b, map_free_vars=mfv)
            mm = get_first_structural_mismatch(a, b, map_free_vars=mfv)
            out.append([name, mfv, bool(eq), bool(heq), None if mm is None else [str(mm[0]), str(mm[1])]])
    return out
"""

_FFIKIT_PRELUDE = """
from typing import Any
from ffikit import Object, structural_equal, structural_hash, get_first_structural_mismatch
from ffikit.dataclasses import py_class, field
"""
_TVM_PRELUDE = """
from typing import Any
import json
from tvm_ffi import Object, structural_equal, structural_hash, get_first_structural_mismatch
from tvm_ffi.dataclasses import py_class, field
"""


@pytest.fixture(scope="module")
def free_vars_program():
    ns: dict = {}
    # Compiled without this module's `from __future__ import annotations`, as the tvm_ffi side is.
    exec(compile(_FFIKIT_PRELUDE + FREE_VARS_PROGRAM, "<free vars program>", "exec", dont_inherit=True), ns)  # noqa: S102
    return ns


def test_a_definition_field_binds_its_variable(free_vars_program):
    ns = free_vars_program
    Var, Add, Lam = ns["Var"], ns["Add"], ns["Lam"]
    x, y = Var("x"), Var("y")
    assert structural_equal(Lam(x, Add(x, 1)), Lam(y, Add(y, 1)))
    assert structural_hash(Lam(x, Add(x, 1))) == structural_hash(Lam(y, Add(y, 1)))
    lhs, rhs = get_first_structural_mismatch(Lam(x, Add(x, 1)), Lam(y, Add(x, 1)))
    assert (str(lhs), str(rhs)) == ("<root>.body.a", "<root>.body.a")


def test_map_free_vars_maps_free_variables_one_to_one(free_vars_program):
    ns = free_vars_program
    Var, Add = ns["Var"], ns["Add"]
    x, y, z = Var("x"), Var("y"), Var("z")
    assert not structural_equal(Add(x, 1), Add(y, 1))
    assert structural_equal(Add(x, 1), Add(y, 1), map_free_vars=True)
    assert structural_equal(Add(x, 1), Add(x, 1))
    assert structural_hash(x) != structural_hash(y)
    assert structural_hash(x, map_free_vars=True) == structural_hash(y, map_free_vars=True)
    assert not structural_equal(Add(x, y), Add(z, z), map_free_vars=True)
    assert not structural_equal(Add(x, x), Add(y, z), map_free_vars=True)
    assert structural_equal(Add(x, y), Add(y, x), map_free_vars=True)
    assert get_first_structural_mismatch(Add(x, 1), Add(y, 1), map_free_vars=True) is None
    lhs, rhs = get_first_structural_mismatch(Add(x, x), Add(y, z), True)
    assert (str(lhs), str(rhs)) == ("<root>.b", "<root>.b")


def test_dag_nodes_must_be_shared_alike(free_vars_program):
    Node = free_vars_program["Node"]
    n, m1, m2 = Node(1), Node(1), Node(1)
    assert structural_equal([n, n], [m1, m1])
    assert not structural_equal([n, n], [m1, m2])
    assert structural_hash([n, n]) == structural_hash([m1, m1])
    assert structural_hash([n, n]) != structural_hash([m1, m2])


def test_structural_kinds_of_py_class_and_field_are_checked():
    from ffikit.dataclasses import field, py_class

    with pytest.raises(ValueError, match=r"structural_eq must be one of \['const-tree', 'dag', 'singleton', "
                                         r"'tree', 'var'\] or None, got 'bogus'"):
        py_class(structural_eq="bogus")
    with pytest.raises(ValueError, match=r"structural_eq must be one of \[None, 'def', 'def-pattern', "
                                         r"'def-simple', 'ignore'\], got 'bogus'"):
        field(structural_eq="bogus")


def _run_free_vars_on_tvm_ffi(py: str) -> list:
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
    code = _TVM_PRELUDE + FREE_VARS_PROGRAM + "\nprint(json.dumps(run_cases()))\n"
    proc = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"the tvm_ffi side ({py}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def test_free_variables_match_tvm_ffi(free_vars_program):
    """Equality, first mismatch, and (for equal pairs) equal hashes, case by case as
    tvm_ffi answers. Hashes of unequal values may or may not collide in either library."""
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        pytest.skip("tvm_ffi interop: FFK_TVM_FFI_PYTHON (an interpreter with apache-tvm-ffi) is not set")
    ours = json.loads(json.dumps(free_vars_program["run_cases"]()))
    theirs = _run_free_vars_on_tvm_ffi(py)
    assert len(ours) == len(theirs)
    for mine, tvm in zip(ours, theirs):
        name, mfv, eq, heq, mismatch = mine
        assert [name, mfv] == tvm[:2]
        assert eq == tvm[2], f"{name} (map_free_vars={mfv}): equal {eq}, tvm_ffi {tvm[2]}"
        assert mismatch == tvm[4], f"{name} (map_free_vars={mfv}): mismatch {mismatch}, tvm_ffi {tvm[4]}"
        if eq:
            assert heq and tvm[3], f"{name} (map_free_vars={mfv}): equal values hash alike"
