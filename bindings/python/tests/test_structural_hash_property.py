""""Equal values hash alike" as a Hypothesis property (issue 35): values of every kind
(None, bool, int, float with -0.0 and NaN, str, bytes, Shape, dtype, Device, Tensor,
Function, Array, List, Map, Dict, py_class objects with int/float/bool/str/Shape/
Optional[Shape]/Any/Object fields and a compare=False field) nested in every position,
each built twice from one recipe (distinct objects, varying what equality ignores), must
be structurally equal with equal structural hashes; and wherever Python's ``==`` says two
ffikit values are equal and both are hashable, ``hash()`` agrees."""
from __future__ import annotations

import math
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ffikit
from ffikit import Array, Dict, List, Map
from ffikit.structural import structural_equal, structural_hash

dc = pytest.importorskip("ffikit.dataclasses", reason="ffikit.dataclasses (py_class) is not in this build")


@dc.py_class("test_structural_hash_property.Holder")
class Holder(ffikit.Object):
    i: int
    f: float
    b: bool
    s: str
    shape: ffikit.Shape
    maybe_shape: Optional[ffikit.Shape]
    any_: Any
    obj: ffikit.Object
    note: str = dc.field(default="", compare=False)


@dc.py_class("test_structural_hash_property.Frozen", frozen=True)
class Frozen(ffikit.Object):
    shape: ffikit.Shape
    any_: Any


# Compared by identity: made once, shared by both builds.
_SHARED = [ffikit.get_global_func("testing.echo"), ffikit.convert(lambda: None)]
try:
    import numpy as np

    _SHARED.append(ffikit.from_dlpack(np.zeros(2, dtype="float32")))
except ImportError:  # pragma: no cover - numpy is in the dev requirements
    pass

_NAN = float("nan")
leaves = st.one_of(
    st.just(("none",)),
    st.tuples(st.just("bool"), st.booleans()),
    st.tuples(st.just("int"), st.integers(-2, 2)),
    st.tuples(st.just("float"), st.sampled_from([0.0, 1.5, _NAN])),
    st.tuples(st.just("str"), st.sampled_from(["a", "seven77", "a string longer than seven bytes"])),
    st.tuples(st.just("bytes"), st.sampled_from([b"a", b"longer than seven bytes"])),
    st.tuples(st.just("shape"), st.lists(st.integers(0, 3), max_size=3)),
    st.tuples(st.just("dtype"), st.sampled_from(["float32", "int8"])),
    st.tuples(st.just("device"), st.integers(0, 1)),
    st.tuples(st.just("shared"), st.integers(0, len(_SHARED) - 1)),
)
keys = st.one_of(
    st.tuples(st.just("int"), st.integers(0, 3)),
    st.tuples(st.just("str"), st.sampled_from(["a", "b", "a longer key than seven"])),
    st.tuples(st.just("float"), st.sampled_from([0.0, 2.5])),
    st.tuples(st.just("shared"), st.integers(0, len(_SHARED) - 1)),
)


def _nodes(children):
    shapes = st.tuples(st.just("shape"), st.lists(st.integers(0, 3), max_size=3))
    return st.one_of(
        st.tuples(st.just("array"), st.lists(children, max_size=3)),
        st.tuples(st.just("list"), st.lists(children, max_size=3)),
        st.tuples(st.just("map"), st.lists(st.tuples(keys, children), max_size=3)),
        st.tuples(st.just("dict"), st.lists(st.tuples(keys, children), max_size=3)),
        st.tuples(st.just("holder"), st.integers(0, 2), st.sampled_from([0.0, 1.5, _NAN]), st.booleans(),
                  st.sampled_from(["x", "a longer string field"]), shapes, st.one_of(st.none(), shapes), children,
                  st.one_of(shapes, st.tuples(st.just("array"), st.lists(children, max_size=2)))),
        st.tuples(st.just("frozen"), shapes, children),
    )


recipes = st.recursive(leaves, _nodes, max_leaves=12)


def build(r, variant: int) -> Any:
    """A fresh ffikit value for recipe `r`; `variant` picks among forms equality ignores
    (the sign of a zero or of a NaN, a compare=False field)."""
    kind = r[0]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str", "bytes"):
        return r[1]
    if kind == "float":
        x = r[1]
        return -x if variant and (x == 0.0 or math.isnan(x)) else x
    if kind == "shape":
        return ffikit.Shape(tuple(r[1]))
    if kind == "dtype":
        return ffikit.dtype(r[1])
    if kind == "device":
        return ffikit.Device(1, r[1])
    if kind == "shared":
        return _SHARED[r[1]]
    if kind in ("array", "list"):
        return (Array if kind == "array" else List)([build(c, variant) for c in r[1]])
    if kind in ("map", "dict"):
        return (Map if kind == "map" else Dict)({build(k, variant): build(v, variant) for k, v in r[1]})
    if kind == "holder":
        _, i, f, b, s, shape, maybe, any_, obj = r
        return Holder(i, build(("float", f), variant), b, s, build(shape, variant),
                      None if maybe is None else build(maybe, variant), build(any_, variant), build(obj, variant),
                      note=f"note {variant}")
    if kind == "frozen":
        return Frozen(build(r[1], variant), build(r[2], variant))
    raise AssertionError(kind)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes)
def test_two_builds_of_one_value_are_equal_and_hash_alike(r):
    a, b = build(r, 0), build(r, 1)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes, recipes)
def test_structurally_equal_values_hash_alike(r1, r2):
    a, b = build(r1, 0), build(r2, 1)
    if structural_equal(a, b):
        assert structural_hash(a) == structural_hash(b)


def _hash_or_none(v):
    try:
        return hash(v)
    except TypeError:
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes, st.booleans())
def test_python_equal_values_hash_alike_where_hashable(r, same_variant):
    a, b = build(r, 0), build(r, 0 if same_variant else 1)
    if not isinstance(a, ffikit.Object) and not isinstance(b, ffikit.Object):
        return  # plain Python values: Python's own rules
    if a == b:
        ha, hb = _hash_or_none(a), _hash_or_none(b)
        if ha is not None and hb is not None:
            assert ha == hb


def test_the_issue_35_case():
    a = Holder(1, 0.5, True, "s", ffikit.Shape((2, 3)), ffikit.Shape((2, 3)), ffikit.Shape((2, 3)),
               ffikit.Shape((2, 3)))
    b = Holder(1, 0.5, True, "s", ffikit.Shape((2, 3)), ffikit.Shape((2, 3)), ffikit.Shape((2, 3)),
               ffikit.Shape((2, 3)))
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    f, g = Frozen(ffikit.Shape((2, 3)), None), Frozen(ffikit.Shape((2, 3)), None)
    if f == g:
        assert hash(f) == hash(g)


# ---- variables, definition fields and dag nodes ------------------------------------------------
# Recipes with variables (indices into a pool each build gets), Lambdas whose parameter
# field is a definition region, dag nodes, and shared sub-values. Two builds with
# different pools are one value up to a renaming of its variables: equal, and hashing
# alike, with map_free_vars; and under either option, whatever compares equal hashes alike.


@dc.py_class("test_structural_hash_property.Var", structural_eq="var")
class Var(ffikit.Object):
    name: str = dc.field(structural_eq="ignore")


@dc.py_class("test_structural_hash_property.Lam")
class Lam(ffikit.Object):
    param: Any = dc.field(structural_eq="def")
    body: Any


@dc.py_class("test_structural_hash_property.LamS")
class LamS(ffikit.Object):
    param: Any = dc.field(structural_eq="def-simple")
    body: Any


@dc.py_class("test_structural_hash_property.DagNode", structural_eq="dag")
class DagNode(ffikit.Object):
    v: Any


var_leaves = st.one_of(leaves, st.tuples(st.just("var"), st.integers(0, 3)))


def _var_nodes(children):
    return st.one_of(
        _nodes(children),
        st.tuples(st.just("lam"), st.booleans(), st.lists(st.integers(0, 3), min_size=1, max_size=2), children),
        st.tuples(st.just("dag"), children),
        st.tuples(st.just("twice"), children),
    )


var_recipes = st.recursive(var_leaves, _var_nodes, max_leaves=12)


def build_v(r, variant: int, pool: list) -> Any:
    """build() extended with variables from `pool` (four Vars)."""
    kind = r[0]
    if kind == "var":
        return pool[r[1]]
    if kind == "lam":
        _, simple, params, body = r
        param = Array([pool[i] for i in params]) if len(params) > 1 else pool[params[0]]
        return (LamS if simple else Lam)(param, build_v(body, variant, pool))
    if kind == "dag":
        return DagNode(build_v(r[1], variant, pool))
    if kind == "twice":  # one value shared in two places
        v = build_v(r[1], variant, pool)
        return Array([v, v])
    if kind in ("array", "list"):
        return (Array if kind == "array" else List)([build_v(c, variant, pool) for c in r[1]])
    if kind in ("map", "dict"):
        return (Map if kind == "map" else Dict)({build(k, variant): build_v(v, variant, pool) for k, v in r[1]})
    if kind == "holder":
        _, i, f, b, s, shape, maybe, any_, obj = r
        return Holder(i, build(("float", f), variant), b, s, build(shape, variant),
                      None if maybe is None else build(maybe, variant), build_v(any_, variant, pool),
                      build_v(obj, variant, pool), note=f"note {variant}")
    if kind == "frozen":
        return Frozen(build(r[1], variant), build_v(r[2], variant, pool))
    return build(r, variant)


def _pool(tag: str) -> list:
    return [Var(f"{tag}{i}") for i in range(4)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(var_recipes)
def test_renamed_builds_are_equal_and_hash_alike_with_map_free_vars(r):
    a, b = build_v(r, 0, _pool("a")), build_v(r, 1, _pool("b"))
    assert structural_equal(a, b, map_free_vars=True)
    assert structural_hash(a, map_free_vars=True) == structural_hash(b, map_free_vars=True)
    same_pool = _pool("s")
    x, y = build_v(r, 0, same_pool), build_v(r, 1, same_pool)
    assert structural_equal(x, y)  # the same free variables: equal without mapping
    assert structural_hash(x) == structural_hash(y)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(var_recipes, var_recipes, st.booleans())
# Equal maps whose entries went in other orders: their values bind the variables (found here).
@example(("map", [(("str", "a"), ("lam", True, [1, 0], ("var", 0))), (("int", 2), ("lam", False, [0, 3], ("var", 1)))]),
         ("map", [(("int", 2), ("lam", False, [0, 3], ("var", 1))), (("str", "a"), ("lam", True, [1, 0], ("var", 0)))]),
         False)
def test_equal_values_with_variables_hash_alike(r1, r2, map_free_vars):
    pool = _pool("p")
    a, b = build_v(r1, 0, pool), build_v(r2, 1, pool)
    if structural_equal(a, b, map_free_vars=map_free_vars):
        assert structural_hash(a, map_free_vars=map_free_vars) == structural_hash(b, map_free_vars=map_free_vars)
