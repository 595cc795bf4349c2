"""ffikit.dataclasses: types defined in Python (py_class) that C sees, classes over C types
(c_class), and the standard dataclasses API over both. Property tests drive random field
specs and values through py_class and the standard ``dataclasses.dataclass`` side by side.

Every py_class here gets a key of its own (types are never removed from the registry):
``_key()`` makes a fresh one.
"""
from __future__ import annotations

import collections.abc
import copy
import ctypes
import dataclasses as std
import inspect
import itertools
import os
import pickle
import re
import sys
from typing import Any, ClassVar, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ffikit
import ffikit.testing
from ffikit import Array, Dict, List, Map, Object
from ffikit.dataclasses import (KW_ONLY, MISSING, Field, asdict, astuple, c_class, field, fields, is_dataclass,
                                py_class, replace)

_counter = itertools.count()


def _key(stem: str = "T") -> str:
    return f"test_dc.{stem}{next(_counter)}"


def _testing(name: str) -> Any:
    f = ffikit.get_global_func(f"testing.{name}", allow_missing=True)
    if f is None:
        pytest.skip(f"needs the testing.{name} global")
    return f


# ---- definition -------------------------------------------------------------------------


def test_py_class_defines_a_reflected_type_with_fields_in_c():
    key = _key("Point")

    @py_class(key)
    class Point(Object):
        x: int
        y: float = 2.5
        name: str = "p"

    p = Point(1)
    assert (p.x, p.y, p.name) == (1, 2.5, "p")
    assert type(p.x) is int and type(p.y) is float and isinstance(p.name, str)
    assert p.type_key == key
    info = Point.__tvm_ffi_type_info__
    assert info.type_key == key and info.is_reflected
    assert [f.name for f in info.fields] == ["x", "y", "name"]
    assert [f.type for f in info.fields] == ["int", "float", "str"]
    assert Point.__slots__ == ()
    assert not hasattr(p, "__dict__")
    with pytest.raises(AttributeError):
        p.other = 1  # type: ignore[attr-defined]
    p.x = 5
    assert p.x == 5
    assert repr(p) == f'{key}(x=5, y=2.5, name="p")'


def test_py_class_usable_bare_with_key_with_options_and_both():
    @py_class
    class Bare(Object):
        a: int

    assert Bare.__tvm_ffi_type_info__.type_key == f"{__name__}.{Bare.__qualname__}"
    assert Bare(1).a == 1

    @py_class()
    class Called(Object):
        a: int

    assert Called.__tvm_ffi_type_info__.type_key.endswith("Called")

    key = _key()

    @py_class(key, eq=True)
    class Both(Object):
        a: int

    assert Both(1) == Both(1)

    @py_class(type_key=_key(), frozen=True)
    class Kw(Object):
        a: int

    with pytest.raises(AttributeError):
        Kw(1).a = 2


def test_class_body_with_a_dict_is_made_again_with_empty_slots():
    @py_class(_key())
    class WithSuper(Object):
        a: int

        def double(self) -> int:
            return super().__getattribute__("a") * 2

    assert WithSuper.__slots__ == ()
    assert WithSuper(3).double() == 6  # the super() cell follows the new class


def test_wrong_base_or_bad_options_are_errors():
    with pytest.raises(TypeError, match="derived from ffikit.Object"):
        py_class(_key())(type("Plain", (), {"__annotations__": {"a": int}}))
    with pytest.raises(ValueError, match="order=True requires eq=True"):
        py_class(order=True)
    for kind in ("tree", "var", "dag", "const-tree", "singleton", None):
        py_class(structural_eq=kind)  # every kind tvm_ffi accepts
    with pytest.raises(ValueError, match="structural_eq must be one of"):
        py_class(structural_eq="bogus")
    with pytest.raises(TypeError, match="py_class: expected a str or a class"):
        py_class(3)  # type: ignore[call-overload]


def test_annotation_types_map_to_c_type_texts():
    inner_key = _key("Inner")

    @py_class(inner_key)
    class Inner(Object):
        v: int = 0

    key = _key("All")

    @py_class(key)
    class All(Object):
        i: int = 0
        f: float = 0.0
        b: bool = False
        s: str = ""
        by: bytes = b""
        oi: Optional[int] = None
        os_: "str | None" = None
        arr: Array[int] = field(default_factory=lambda: Array([]))
        lst: list[int] = field(default_factory=list)
        lst2: List[str] = field(default_factory=list)
        d: dict[str, int] = field(default_factory=dict)
        m: Map[str, Inner] = field(default_factory=lambda: Map({}))
        dd: Dict[str, float] = field(default_factory=dict)
        tup: tuple[int, ...] = ()
        node: Optional[Inner] = None
        me: Optional["All"] = None
        a: Any = None
        o: object = None
        fn: Optional[ffikit.Function] = None
        t: Optional[ffikit.Tensor] = None
        dev: ffikit.Device = ffikit.device("cpu")
        dt: ffikit.dtype = ffikit.dtype("float32")
        obj: Optional[Object] = None
        cv: ClassVar[int] = 7

    texts = {f.name: f.type for f in All.__tvm_ffi_type_info__.fields}
    assert texts == {
        "i": "int", "f": "float", "b": "bool", "s": "str", "by": "bytes", "oi": "Optional<int>",
        "os_": "Optional<str>", "arr": "Array<int>", "lst": "List<int>", "lst2": "List<str>",
        "d": "Dict<str, int>", "m": f"Map<str, {inner_key}>", "dd": "Dict<str, float>", "tup": "Array<int>",
        "node": f"Optional<{inner_key}>", "me": f"Optional<{key}>", "a": "Any", "o": "Any",
        "fn": "Optional<Function>", "t": "Optional<Tensor>", "dev": "Device", "dt": "dtype",
        "obj": "Optional<Object>",
    }
    assert All.cv == 7  # a ClassVar stays a class attribute
    x = All(lst=[1, 2], d={"a": 1}, m={"k": Inner(3)}, node=Inner(4))
    assert isinstance(x.lst, List) and list(x.lst) == [1, 2]
    assert isinstance(x.d, Dict) and dict(x.d) == {"a": 1}
    assert isinstance(x.m["k"], Inner) and x.m["k"].v == 3
    assert x.node.v == 4


def test_values_convert_by_the_field_type_with_cs_messages():
    key = _key("Typed")

    @py_class(key)
    class Typed(Object):
        x: int
        xs: list[int] = field(default_factory=list)

    with pytest.raises(TypeError, match=f"Mismatched type on field `x` of `{key}`: expected `int` but got `str`"):
        Typed("no")
    t = Typed(True)
    assert t.x == 1 and type(t.x) is int
    with pytest.raises(TypeError, match="field `xs`"):
        Typed(1, xs=["a"])
    with pytest.raises(TypeError, match=f"Mismatched type on field `x` of `{key}`"):
        t.x = "no"
    with pytest.raises(TypeError, match=f"{re.escape(key)}.__init__\\(\\) missing required argument: `x`"):
        Typed()


class NotBound(Object):
    """A subclass of Object bound to no type (annotations naming it are errors)."""

    __slots__ = ()


def test_unsupported_annotations_are_type_errors_naming_the_field():
    with pytest.raises(TypeError, match="field `u` of .*union"):
        @py_class(_key())
        class U(Object):
            u: "int | str"
    with pytest.raises(TypeError, match="field `n` of .*not bound to an ffikit type"):
        @py_class(_key())
        class N(Object):
            n: NotBound
    with pytest.raises(TypeError, match="field `z` of .*no type for the annotation"):
        @py_class(_key())
        class Z(Object):
            z: complex


def test_mutable_default_is_refused_like_dataclasses():
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field xs is not allowed"):
        @py_class(_key())
        class M(Object):
            xs: list[int] = []  # noqa: RUF012


def test_default_factory_makes_a_fresh_value_per_object():
    @py_class(_key())
    class Bag(Object):
        items: list[int] = field(default_factory=list)
        calls: int = field(default_factory=lambda: 7)

    a, b = Bag(), Bag()
    a.items.append(1)
    assert list(a.items) == [1] and list(b.items) == []
    assert a.calls == 7


def test_self_reference_and_c_reading_the_chain():
    key = _key("Node")

    @py_class(key)
    class Node(Object):
        value: int
        next: Optional[Node] = None

    chain = Node(1, Node(2, Node(3)))
    assert chain.next.next.value == 3
    assert isinstance(chain.next, Node)
    assert repr(chain) == f"{key}(value=1, next={key}(value=2, next={key}(value=3, next=None)))"
    get = _testing("object_get_field")
    second = get(chain, "next")
    assert isinstance(second, Node) and second.same_as(chain.next) and second == chain.next
    assert get(second, "value") == 2


def test_forward_reference_to_a_later_sibling_is_deferred():
    global _LaterLeaf  # the module namespace is where forward references resolve

    @py_class(_key("Holder"))
    class Holder(Object):
        leaf: Optional[_LaterLeaf] = None

    assert not is_dataclass(Holder)  # waits for _LaterLeaf

    @py_class(_key("Leaf"))
    class _LaterLeaf(Object):
        v: int = 1

    try:
        assert is_dataclass(Holder)
        h = Holder(leaf=_LaterLeaf(5))
        assert h.leaf.v == 5
        assert [f.type_text for f in fields(Holder)] == [f"Optional<{_LaterLeaf.__tvm_ffi_type_info__.type_key}>"]
    finally:
        del _LaterLeaf


def test_unresolvable_forward_reference_raises_at_construction():
    @py_class(_key("Dangling"))
    class Dangling(Object):
        other: Optional[NoSuchClassAnywhere] = None  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="unresolved forward reference.*NoSuchClassAnywhere"):
        Dangling()
    with pytest.raises(TypeError, match="unresolved forward reference"):
        Dangling()


# ---- field options ----------------------------------------------------------------------


def test_field_options_reach_c_flags():
    @py_class(_key())
    class Opts(Object):
        a: int
        b: int = field(default=2, repr=False)
        c: int = field(default=3, compare=False)
        d: int = field(default=4, init=False)
        e: int = field(default=5, kw_only=True)
        f: int = field(default=6, frozen=True, doc="the f")
        g: int = field(default=7, structural_eq="ignore")

    by_name = {f.name: f for f in Opts.__tvm_ffi_type_info__.fields}
    assert by_name["b"].repr_off and not by_name["a"].repr_off
    assert by_name["c"].compare_off and by_name["g"].compare_off and not by_name["a"].compare_off
    assert by_name["d"].init_off and by_name["e"].kw_only
    assert by_name["f"].frozen and not by_name["a"].frozen and by_name["f"].__doc__ == "the f"
    o = Opts(1, 20, 30, e=50)
    assert (o.a, o.b, o.c, o.d, o.e, o.f) == (1, 20, 30, 4, 50, 6)
    with pytest.raises(TypeError, match="unexpected keyword argument `d`"):
        Opts(1, d=1)
    with pytest.raises(TypeError, match="takes 5 positional arguments but 6 were given"):
        Opts(1, 2, 3, 4, 5, 6)
    with pytest.raises(AttributeError, match="read-only"):
        o.f = 1
    assert "b=" not in repr(o) and "c=30" in repr(o)
    ours = {f.name: f for f in fields(Opts)}
    assert ours["g"].structural_eq == "ignore" and ours["c"].hash is False and ours["a"].hash is True
    assert ours["a"].default is MISSING and ours["b"].default == 2
    with pytest.raises(ValueError, match="both default and default_factory"):
        field(default=1, default_factory=list)
    with pytest.raises(TypeError, match="default_factory must be a callable"):
        field(default_factory=3)
    for kind in ("def", "def-pattern", "def-simple", "ignore", None):
        assert field(structural_eq=kind).structural_eq == kind
    with pytest.raises(ValueError, match="structural_eq must be one of"):
        field(structural_eq="bogus")


def test_kw_only_marker_and_decorator_option():
    @py_class(_key())
    class K(Object):
        a: int
        _: KW_ONLY
        b: int
        c: int = 3

    k = K(1, b=2)
    assert (k.a, k.b, k.c) == (1, 2, 3)
    with pytest.raises(TypeError, match="positional"):
        K(1, 2)
    assert K.__match_args__ == ("a",)

    @py_class(_key(), kw_only=True)
    class AllKw(Object):
        a: int
        b: int = 0

    with pytest.raises(TypeError):
        AllKw(1)
    assert AllKw(a=1).a == 1


def test_required_fields_come_first_in_the_constructor_as_tvm_ffi_orders_them():
    # tvm_ffi's rule (C decides it, ffikit/reflect.h): the required positional fields, then the
    # defaulted ones, each in field order, parents' first; kw_only fields stay keyword-only.
    @py_class(_key())
    class P(Object):
        a: int = 1
        b: int
        c: int = field(default=3, kw_only=True)
        d: int = 4
        e: int

    @py_class(_key())
    class Q(P):
        f: int
        g: int = 7

    assert str(inspect.signature(P)) == "(b: int, e: int, a: int = 1, d: int = 4, *, c: int = 3) -> None"
    p = P(10, 20)
    assert (p.a, p.b, p.c, p.d, p.e) == (1, 10, 3, 4, 20)
    p = P(10, 20, 30)
    assert (p.a, p.b, p.d, p.e) == (30, 10, 4, 20)
    assert [n for n in inspect.signature(Q).parameters] == ["b", "e", "f", "a", "d", "g", "c"]
    q = Q(1, 2, 3, 4, 5, 6)
    assert (q.a, q.b, q.c, q.d, q.e, q.f, q.g) == (4, 1, 3, 5, 2, 3, 6)
    with pytest.raises(TypeError, match="missing required argument: `e`"):
        P(1)
    with pytest.raises(TypeError, match="takes 4 positional arguments but 5 were given"):
        P(1, 2, 3, 4, 5)
    # __match_args__ keeps field order (as tvm_ffi's and the standard library's).
    assert P.__match_args__ == ("a", "b", "d", "e")
    # A default factory counts as a default.
    @py_class(_key())
    class R(Object):
        x: int = field(default_factory=lambda: 2)
        z: int

    assert (R(9).x, R(9).z) == (2, 9)


def test_a_default_of_the_wrong_type_is_refused_when_an_object_needs_it():
    # tvm_ffi checks defaults when an object is built: `name: str = None` defines the class.
    key = _key("Unchecked")

    @py_class(key)
    class U(Object):
        name: str = None  # type: ignore[assignment]
        n: int = 0

    assert U(name="x").name == "x"
    with pytest.raises(TypeError, match=f"field `name` of `{key}`: expected `str` but got `None`"):
        U()
    with pytest.raises(TypeError, match="expected `str` but got `None`"):
        U(n=1)


def test_frozen_class_fields_are_read_only_in_c():
    key = _key("Frozen")

    @py_class(key, frozen=True)
    class Frozen(Object):
        a: int
        s: str = "x"

    f = Frozen(1)
    with pytest.raises(AttributeError, match=f"field `a` of `{key}` is read-only"):
        f.a = 2
    with pytest.raises(AttributeError, match="read-only"):
        f.s = "y"
    with pytest.raises(AttributeError):
        del f.a
    assert all(d.frozen for d in Frozen.__tvm_ffi_type_info__.fields)
    g = replace(f, a=5)
    assert (g.a, g.s, f.a) == (5, "x", 1)


def test_inheritance_parent_fields_first():
    base_key, derived_key = _key("Base"), _key("Derived")

    @py_class(base_key)
    class Base(Object):
        a: int
        b: str = "b"

        def who(self) -> str:
            return "base"

    @py_class(derived_key)
    class Derived(Base):
        c: float = 1.0

        def who(self) -> str:
            return "derived"

    d = Derived(1, "x", 2.0)
    assert [f.name for f in fields(d)] == ["a", "b", "c"]
    assert [f.name for f in Derived.__tvm_ffi_type_info__.fields] == ["a", "b", "c"]
    assert isinstance(d, Base) and d.type_key == derived_key
    assert Derived.__tvm_ffi_type_info__.parent_type_info.type_key == base_key
    assert repr(d) == f'{derived_key}(a=1, b="x", c=2.0)'
    call = _testing("object_call_method")
    assert call(d, "who") == "derived" and call(Base(0), "who") == "base"


def test_py_class_derived_from_a_c_class():
    @py_class(_key())
    class MoreBase(ffikit.testing.TestObjectBase):
        extra: int = 1

    m = MoreBase(extra=5)
    assert (m.v_i64, m.v_str, m.extra) == (10, "hello", 5)
    assert [f.name for f in fields(MoreBase)] == ["v_i64", "v_f64", "v_str", "extra"]
    assert m.add_i64(1) == 11


# ---- dunders ----------------------------------------------------------------------------


def test_eq_default_is_identity_and_eq_true_is_field_wise():
    @py_class(_key())
    class Ident(Object):
        a: int

    x = Ident(1)
    assert x != Ident(1) and x == x
    assert hash(x) == hash(x)

    @py_class(_key(), eq=True)
    class Val(Object):
        a: int
        xs: list[int] = field(default_factory=list)
        skip: int = field(default=0, compare=False)

    assert Val(1, [1]) == Val(1, [1], skip=9)
    assert Val(1, [1]) != Val(1, [2])
    assert Val.__hash__ is None  # eq without frozen: unhashable, as dataclasses
    assert Val(1).__eq__(3) is NotImplemented


def test_order_and_hash_switches():
    @py_class(_key(), eq=True, order=True, frozen=True)
    class Ver(Object):
        major: int
        minor: int = 0

    assert Ver(1, 2) < Ver(1, 3) <= Ver(2) and Ver(3) > Ver(2, 9) >= Ver(2, 9)
    assert hash(Ver(1, 2)) == hash(Ver(1, 2))
    assert sorted([Ver(2), Ver(1, 5), Ver(1)]) == [Ver(1), Ver(1, 5), Ver(2)]

    @py_class(_key(), eq=True, unsafe_hash=True)
    class H(Object):
        a: int

    assert hash(H(1)) == hash(H(1)) and len({H(1), H(1)}) == 1
    with pytest.raises(TypeError, match="Cannot overwrite attribute __lt__"):
        @py_class(_key(), eq=True, order=True)
        class Own(Object):
            a: int

            def __lt__(self, other: Any) -> bool:
                return True


def test_repr_false_and_user_repr():
    @py_class(_key(), repr=False)
    class NoRepr(Object):
        a: int

    assert re.fullmatch(r"<.*NoRepr object at 0x[0-9a-f]+>", repr(NoRepr(1)))

    @py_class(_key())
    class Mine(Object):
        a: int

        def __repr__(self) -> str:
            return f"Mine<{self.a}>"

    assert repr(Mine(2)) == "Mine<2>"


def test_post_init_runs_after_construction():
    seen = []

    @py_class(_key())
    class P(Object):
        a: int
        b: int = field(default=0, init=False)

        def __post_init__(self) -> None:
            seen.append(self.a)
            self.b = self.a * 10

    p = P(4)
    assert seen == [4] and p.b == 40
    assert replace(p, a=5).b == 50


def test_user_init_constructs_at_defaults_first():
    @py_class(_key())
    class U(Object):
        a: int = 1
        b: int = 2

        def __init__(self, total: int) -> None:
            self.a = total - 1
            self.b = 1

    u = U(10)
    assert (u.a, u.b) == (9, 1)
    r = replace(u, b=5)
    assert (r.a, r.b) == (9, 5) and type(r) is U


def test_init_false_class_cannot_be_constructed():
    @py_class(_key(), init=False)
    class NoInit(Object):
        a: int = 0

    with pytest.raises(TypeError, match="cannot be constructed directly"):
        NoInit()


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statement")
def test_match_args_work_with_match():
    @py_class(_key())
    class Pt(Object):
        x: int
        y: int = 0
        z: int = field(default=0, kw_only=True)

    assert Pt.__match_args__ == ("x", "y")
    ns: dict[str, Any] = {"Pt": Pt}
    exec("def f(p):\n    match p:\n        case Pt(1, y):\n            return y\n    return None", ns)
    assert ns["f"](Pt(1, 7)) == 7 and ns["f"](Pt(2, 7)) is None


# ---- methods ----------------------------------------------------------------------------


def test_methods_become_functions_on_the_type_callable_from_c():
    key = _key("Calc")

    @py_class(key)
    class Calc(Object):
        x: int

        @ffikit.method
        def add(self, y: int) -> int:
            return self.x + y

        def public(self) -> str:
            return f"x={self.x}"

        @staticmethod
        def twice(v: int) -> int:
            return 2 * v

        def _private(self) -> int:
            return -1

    names = {m.name: m for m in Calc.__tvm_ffi_type_info__.methods}
    assert {"add", "public", "twice"} <= set(names) and "_private" not in names
    assert names["twice"].is_static and not names["add"].is_static
    c = Calc(3)
    assert c.add(4) == 7 and Calc.twice(5) == 10  # Python calls stay Python's
    call = _testing("object_call_method")
    assert call(c, "add", 4) == 7
    assert call(c, "public") == "x=3"
    assert names["add"].func(c, 1) == 4
    with pytest.raises(TypeError):
        @py_class(_key())
        class Bad(Object):
            a: int

            @classmethod
            @ffikit.method
            def nope(cls) -> None: ...
    with pytest.raises(TypeError, match="classmethod"):
        ffikit.method(classmethod(lambda cls: None))


def test_method_errors_propagate_through_c():
    @py_class(_key())
    class Boom(Object):
        @ffikit.method
        def fail(self) -> None:
            raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        _testing("object_call_method")(Boom(), "fail")


# ---- crossing into C ----------------------------------------------------------------------


def test_object_passed_to_c_comes_back_as_itself():
    @py_class(_key())
    class Carry(Object):
        a: int

    c = Carry(1)
    echo = ffikit.get_global_func("testing.echo")
    back = echo(c)
    assert type(back) is Carry and back.same_as(c) and back == c
    arr = Array([c, c])
    assert arr[0].same_as(c) and type(arr[1]) is Carry


def test_c_reads_and_writes_py_class_fields():
    key = _key("Rw")

    @py_class(key)
    class Rw(Object):
        n: int = 0
        s: str = ""
        xs: list[int] = field(default_factory=list)
        ro: int = field(default=1, frozen=True)

    r = Rw()
    get, put = _testing("object_get_field"), _testing("object_set_field")
    put(r, "n", 41)
    put(r, "s", "hi")
    put(r, "xs", [1, 2])
    assert (r.n, r.s, list(r.xs)) == (41, "hi", [1, 2])
    assert get(r, "n") == 41 and get(r, "ro") == 1
    with pytest.raises(AttributeError, match=f"field `ro` of `{key}` is read-only"):
        put(r, "ro", 2)
    with pytest.raises(TypeError, match="Mismatched type on field `n`"):
        put(r, "n", "x")
    with pytest.raises(AttributeError, match="has no field `zz`"):
        get(r, "zz")


def test_create_object_by_key_from_c():
    key = _key("ByKey")

    @py_class(key)
    class ByKey(Object):
        a: int
        b: str = "b"

    made = ffikit.testing.create_object(key, a=3)
    assert type(made) is ByKey and (made.a, made.b) == (3, "b")


# ---- redefinition -----------------------------------------------------------------------


def test_redefining_the_same_class_is_idempotent_and_a_different_one_is_an_error():
    key = _key("Reload")

    def define(extra: bool = False) -> type:
        if extra:
            @py_class(key)
            class Reload(Object):
                a: int
                b: int = 0

            return Reload

        @py_class(key)
        class Reload(Object):  # type: ignore[no-redef]
            a: int
            xs: list[int] = field(default_factory=list)

            def m(self) -> int:
                return self.a

        return Reload

    first = define()
    second = define()
    assert first.__tvm_ffi_type_info__.type_index == second.__tvm_ffi_type_info__.type_index
    obj = second(1)
    assert type(obj) is second and obj.m() == 1
    assert type(ffikit.get_global_func("testing.echo")(obj)) is second
    with pytest.raises(ValueError, match=key):
        define(extra=True)


# ---- structural equality, copies, pickling ------------------------------------------------


class _Any(ctypes.Structure):
    """ffk_any (ffikit/any.h): type_index, aux, an 8-byte payload."""

    _fields_ = [("type_index", ctypes.c_int32), ("aux", ctypes.c_uint32), ("v_ptr", ctypes.c_void_p)]


def _structural() -> tuple[Any, Any]:
    """(structural_equal, structural_hash) over objects: ffikit's when the package exposes
    them, else C's ffk_structural_equal / ffk_structural_hash called through ctypes."""
    eq, h = getattr(ffikit, "structural_equal", None), getattr(ffikit, "structural_hash", None)
    if eq is not None and h is not None:
        return eq, h
    path = os.path.join(os.path.dirname(ffikit.__file__), "lib", "libffikit.so")
    lib = ctypes.CDLL(path if os.path.exists(path) else "libffikit.so")
    anyp = ctypes.POINTER(_Any)
    lib.ffk_structural_equal.argtypes = [anyp, anyp]
    lib.ffk_structural_equal.restype = ctypes.c_int
    lib.ffk_structural_hash.argtypes = [anyp, ctypes.POINTER(ctypes.c_uint64)]
    lib.ffk_structural_hash.restype = ctypes.c_int

    def lent(obj: Object) -> _Any:
        return _Any(obj.type_index, 0, obj.__chandle__())

    def c_equal(a: Object, b: Object) -> bool:
        rc = lib.ffk_structural_equal(ctypes.byref(lent(a)), ctypes.byref(lent(b)))
        assert rc >= 0
        return rc == 1

    def c_hash(a: Object) -> int:
        out = ctypes.c_uint64()
        assert lib.ffk_structural_hash(ctypes.byref(lent(a)), ctypes.byref(out)) == 0
        return out.value

    return c_equal, c_hash


def test_structural_eq_kinds():
    structural_equal, structural_hash = _structural()

    @py_class(_key())
    class Tree(Object):
        a: int
        ignored: int = field(default=0, structural_eq="ignore")

    @py_class(_key(), structural_eq="singleton")
    class Single(Object):
        a: int

    @py_class(_key(), structural_eq=None)
    class NoStruct(Object):
        a: int

    single = Single.__tvm_ffi_type_info__.type_index
    assert ffikit._core._type_get_attr(single, "__s_kind__") == 5  # FFK_S_KIND_SINGLETON: C decides
    assert ffikit._core._type_get_attr(single, "__s_equal__") is None
    hook = ffikit._core._type_get_attr(NoStruct.__tvm_ffi_type_info__.type_index, "__s_equal__")
    assert isinstance(hook, ffikit.Function)  # None: identity through hooks
    assert ffikit._core._type_get_attr(Tree.__tvm_ffi_type_info__.type_index, "__s_equal__") is None
    assert ffikit._core._type_get_attr(Tree.__tvm_ffi_type_info__.type_index, "__s_kind__") == 1
    assert structural_equal(Tree(1, 5), Tree(1, 6))
    assert structural_hash(Tree(1, 5)) == structural_hash(Tree(1, 6))
    assert not structural_equal(Tree(1), Tree(2))
    s = Single(1)
    assert structural_equal(s, s) and not structural_equal(s, Single(1))
    assert structural_hash(s) == structural_hash(s)
    n = NoStruct(1)
    assert structural_equal(Array([n]), Array([n])) and not structural_equal(Array([n]), Array([NoStruct(1)]))
    assert structural_equal(Array([Tree(1)]), Array([Tree(1)]))


def test_var_dag_and_definition_fields_reach_c():
    """structural_eq="var" / "dag" / "const-tree" set the C type's __s_kind__, and a
    field's "def" / "def-pattern" / "def-simple" its FFK_FIELD_S_DEF(_SIMPLE) flag."""
    from ffikit.structural import structural_equal as s_equal

    @py_class(_key(), structural_eq="var")
    class V(Object):
        name: str = field(structural_eq="ignore")

    @py_class(_key(), structural_eq="dag")
    class D(Object):
        a: int

    @py_class(_key(), structural_eq="const-tree")
    class C(Object):
        a: int

    @py_class(_key())
    class Let(Object):
        var: V = field(structural_eq="def")
        pat: Any = field(default=None, structural_eq="def-pattern")
        simple: Any = field(default=None, structural_eq="def-simple")
        body: Any = None

    kinds = {cls: ffikit._core._type_get_attr(cls.__tvm_ffi_type_info__.type_index, "__s_kind__")
             for cls in (V, D, C)}
    assert kinds == {V: 2, D: 3, C: 4}
    flags = {f.name: f._flags() & (128 | 256) for f in fields(Let)}
    assert flags == {"var": 128, "pat": 128, "simple": 256, "body": 0}
    x, y = V("x"), V("y")
    assert s_equal(Let(x, body=x), Let(y, body=y)) and not s_equal(Let(x, body=x), Let(y, body=x))
    assert s_equal(Let(x, simple=x, body=x), Let(y, simple=y, body=y))
    assert not s_equal(x, y) and s_equal(x, y, map_free_vars=True)


def test_copy_deepcopy_pickle_keep_the_class():
    key = _key("Cp")

    @py_class(key, eq=True)
    class Cp(Object):
        a: int
        xs: list[int] = field(default_factory=list)
        child: Optional[Cp] = None

    x = Cp(1, [1, 2], Cp(2))
    s = copy.copy(x)
    assert type(s) is Cp and not s.same_as(x) and s.xs.same_as(x.xs)
    d = copy.deepcopy(x)
    assert type(d) is Cp and d == x and not d.xs.same_as(x.xs) and type(d.child) is Cp
    back = pickle.loads(pickle.dumps(x))  # by type key and fields: no class lookup by name
    assert type(back) is Cp and back == x


# ---- c_class -----------------------------------------------------------------------------


def test_c_class_binds_a_c_type_and_checks_annotations():
    @c_class("testing.TestIntPair", eq=True)
    class Pair(Object):
        a: int
        b: int

    try:
        p = Pair(1, 2)
        assert type(p) is Pair and p.sum() == 3
        assert p == Pair(1, 2) and p != Pair(2, 1)
        assert [f.name for f in fields(Pair)] == ["a", "b"] and all(f.frozen for f in fields(Pair))
        assert asdict(p) == {"a": 1, "b": 2} and astuple(p) == (1, 2)
        assert replace(p, b=5).b == 5
        assert is_dataclass(Pair) and is_dataclass(p)
        with pytest.raises(TypeError, match="annotated field `c` is not a field of the C type"):
            @c_class("testing.TestIntPair")
            class Wrong(Object):
                a: int
                c: int
        with pytest.raises(TypeError, match="field `b` is annotated `str` but C declares `int`"):
            @c_class("testing.TestIntPair")
            class WrongType(Object):
                b: str
        with pytest.raises(ValueError, match="Cannot find object type index for no.such.Key"):
            c_class("no.such.Key")(type("X", (Object,), {"__slots__": ()}))
    finally:
        ffikit.register_object("testing.TestIntPair")(ffikit.testing.TestIntPair)


def test_c_class_annotations_are_judged_by_cs_parsed_types():
    # ffk_schema_accepts decides: nested containers and Optionals compare element by element,
    # "ffikit.Tensor" is C's "Tensor", and Object is no longer taken for an opaque pointer.
    key = _key("CTyped")
    specs = [(name, text, ffikit._core.FIELD_WRITABLE, None, None) for name, text in
             (("nested", "Optional<List<List<int>>>"), ("table", "Dict<str, List<float>>"),
              ("t", "Tensor"), ("p", "ptr"))]
    ffikit._core._type_define(key, ffikit._core.TYPE_OBJECT, specs)

    @c_class(key)
    class Typed(Object):
        nested: Optional[collections.abc.Sequence[collections.abc.Sequence[int]]]
        table: collections.abc.Mapping[str, collections.abc.Sequence[float]]
        t: ffikit.Tensor

    assert [f.name for f in fields(Typed)] == ["nested", "table", "t", "p"]
    with pytest.raises(TypeError, match=r"field `p` is annotated `Object` but C declares `ptr`"):
        @c_class(key)
        class PtrAsObject(Object):
            p: Object
    with pytest.raises(TypeError, match=r"field `nested` is annotated `Optional<Array<Array<str>>>` but C declares "
                                        r"`Optional<List<List<int>>>`"):
        @c_class(key)
        class WrongInner(Object):
            nested: Optional[collections.abc.Sequence[collections.abc.Sequence[str]]]
    assert ffikit._core._schema_accepts("Map< str ,int >", "Dict<str, int>") is True
    with pytest.raises(ValueError, match=r"^bad type `flaot`: unknown type `flaot` at offset 0$"):
        ffikit._core._schema_accepts("flaot", "int")


def test_c_class_frozen_makes_writable_fields_read_only_in_python():
    @c_class("testing.TestObjectBase", frozen=True)
    class FrozenBase(Object):
        v_i64: int
        v_str: str

    try:
        b = FrozenBase()
        with pytest.raises(AttributeError, match="cannot assign to field 'v_i64'"):
            b.v_i64 = 3
        FrozenBase.v_i64.set(b, 3)
        assert b.v_i64 == 3
        assert b.add_i64(1) == 4
    finally:
        ffikit.register_object("testing.TestObjectBase")(ffikit.testing.TestObjectBase)


# ---- the module functions -------------------------------------------------------------------


def test_fields_asdict_astuple_replace_is_dataclass():
    @py_class(_key())
    class Inner(Object):
        v: int

    @py_class(_key())
    class Outer(Object):
        name: str
        inner: Inner
        items: list[Inner] = field(default_factory=list)
        table: dict[str, int] = field(default_factory=dict)

    o = Outer("n", Inner(1), [Inner(2)], {"k": 3})
    assert asdict(o) == {"name": "n", "inner": {"v": 1}, "items": [{"v": 2}], "table": {"k": 3}}
    assert astuple(o) == ("n", (1,), [(2,)], {"k": 3})
    assert [f.name for f in fields(Outer)] == ["name", "inner", "items", "table"]
    assert all(isinstance(f, Field) for f in fields(o))
    r = replace(o, name="m")
    assert r.name == "m" and r.inner.same_as(o.inner)
    assert is_dataclass(Outer) and is_dataclass(o) and not is_dataclass(Array([])) and not is_dataclass(3)
    for fn in (asdict, astuple):
        with pytest.raises(TypeError):
            fn(Outer)
    with pytest.raises(TypeError):
        fields(3)
    with pytest.raises(TypeError):
        replace(o, nope=1)

    @py_class(_key())
    class WithInitOff(Object):
        a: int
        b: int = field(default=0, init=False)

    with pytest.raises(ValueError, match="init=False"):
        replace(WithInitOff(1), b=2)


# ---- property tests against dataclasses.dataclass -------------------------------------------

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
_KINDS: dict[str, tuple[Any, Any]] = {
    "int": (int, st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    "float": (float, st.floats(allow_nan=False, width=64)),
    "bool": (bool, st.booleans()),
    "str": (str, _TEXT),
    "opt_int": (Optional[int], st.none() | st.integers(min_value=-(2**40), max_value=2**40)),
    "opt_str": (Optional[str], st.none() | _TEXT),
}


@st.composite
def _specs(draw: Any) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=0, max_value=5))
    specs = []
    for i in range(n):
        kind = draw(st.sampled_from(sorted(_KINDS)))
        has_default = draw(st.booleans())
        init = draw(st.booleans()) if has_default else True  # init=False needs a default (else unset)
        specs.append({"name": f"f{i}", "kind": kind, "default": draw(_KINDS[kind][1]) if has_default else MISSING,
                      "init": init, "repr": draw(st.booleans()), "compare": draw(st.booleans()),
                      "kw_only": draw(st.booleans())})
    return specs


def _define_both(specs: list[dict[str, Any]], opts: dict[str, Any]) -> tuple[Any, Any]:
    """(the standard dataclass, the py_class) with these fields, or the exception each raised."""
    def body(make_field: Any) -> dict[str, Any]:
        ns: dict[str, Any] = {"__annotations__": {}}
        for s in specs:
            ns["__annotations__"][s["name"]] = _KINDS[s["kind"]][0]
            kwargs = {k: s[k] for k in ("init", "repr", "compare", "kw_only")}
            if s["default"] is not MISSING:
                kwargs["default"] = s["default"]
            ns[s["name"]] = make_field(**kwargs)
        return ns

    results = []
    try:
        results.append(std.dataclass(**opts)(type("Std", (), body(std.field))))
    except Exception as e:  # noqa: BLE001 - compared below
        results.append(e)
    try:
        ns = body(field)
        ns["__module__"] = __name__
        results.append(py_class(_key("Prop"), **opts)(type("Ffk", (Object,), ns)))
    except Exception as e:  # noqa: BLE001
        results.append(e)
    return results[0], results[1]


def _call(cls: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        return cls(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared below
        return e


def _repr_names(text: str) -> list[str]:
    return re.findall(r"(?:\(|, )(f\d+)=", text)


_OPTS = st.fixed_dictionaries({"eq": st.just(True), "order": st.booleans(), "frozen": st.booleans(),
                               "repr": st.booleans()})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_specs(), opts=_OPTS, data=st.data())
def test_py_class_behaves_like_dataclasses(specs: list[dict[str, Any]], opts: dict[str, Any], data: Any) -> None:
    std_cls, ffk_cls = _define_both(specs, opts)
    if isinstance(std_cls, TypeError) and "follows default argument" in str(std_cls):
        # tvm_ffi's rule where the standard library refuses: required fields bind first
        # (test_required_fields_come_first_in_the_constructor_as_tvm_ffi_orders_them).
        assert isinstance(ffk_cls, type), ffk_cls
        return
    if isinstance(std_cls, Exception) or isinstance(ffk_cls, Exception):
        assert isinstance(std_cls, Exception) and isinstance(ffk_cls, Exception), (std_cls, ffk_cls)
        assert type(ffk_cls) is type(std_cls), (std_cls, ffk_cls)
        return
    # fields(): the same names and options, in the same order
    assert [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in std.fields(std_cls)] == \
        [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in fields(ffk_cls)]
    assert std_cls.__match_args__ == ffk_cls.__match_args__
    # a call shape: some positional values (maybe too many), some by name (maybe unknown or repeated)
    init_specs = [s for s in specs if s["init"]]
    positional = [s for s in init_specs if not s["kw_only"]]
    npos = data.draw(st.integers(min_value=0, max_value=len(positional) + 1))
    args = [data.draw(_KINDS[positional[i]["kind"]][1]) if i < len(positional) else 0 for i in range(npos)]
    named = data.draw(st.lists(st.sampled_from([s["name"] for s in init_specs] + ["nope"]), unique=True,
                               max_size=len(init_specs) + 1))
    spec_of = {s["name"]: s for s in specs}
    kwargs = {n: (data.draw(_KINDS[spec_of[n]["kind"]][1]) if n in spec_of else 0) for n in named}
    a, b = _call(std_cls, args, kwargs), _call(ffk_cls, args, kwargs)
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert isinstance(a, TypeError) and isinstance(b, TypeError), (a, b)
        return
    names = [s["name"] for s in specs]
    assert [getattr(a, n) for n in names] == [getattr(b, n) for n in names]
    assert asdict(b) == std.asdict(a)
    assert astuple(b) == std.astuple(a)
    if opts["repr"]:
        assert _repr_names(repr(a)) == _repr_names(repr(b))
    else:
        assert " object at 0x" in repr(b)
    # eq / order against a second object built from the same call and from another value
    a2, b2 = _call(std_cls, args, kwargs), _call(ffk_cls, args, kwargs)
    assert (a == a2) == (b == b2) and (a != a2) == (b != b2)
    if init_specs:
        change = data.draw(st.sampled_from(init_specs))
        new_value = data.draw(_KINDS[change["kind"]][1])
        a3, b3 = std.replace(a, **{change["name"]: new_value}), replace(b, **{change["name"]: new_value})
        assert [getattr(a3, n) for n in names] == [getattr(b3, n) for n in names]
        assert (a == a3) == (b == b3)
        if opts["order"]:
            for op in ("__lt__", "__le__", "__gt__", "__ge__"):
                ra = _call(getattr(a, op), [a3], {})
                rb = _call(getattr(b, op), [b3], {})
                assert type(ra) is type(rb) and (isinstance(ra, Exception) or ra == rb), (op, ra, rb)
    if opts["frozen"] and names:
        with pytest.raises(AttributeError):
            setattr(b, names[0], getattr(b, names[0]))
        assert hash(a) == hash(a2) and hash(b) == hash(b2)
    elif names:
        assert std_cls.__hash__ is None and ffk_cls.__hash__ is None


def test_class_body_structural_hooks_become_type_attributes():
    structural_equal, structural_hash = _structural()

    @py_class(_key())
    class Loose(Object):
        name: str

        def __s_equal__(self, other: Any, equal: Any) -> bool:
            return self.name.lower() == other.name.lower()

        def __s_hash__(self, hash_fn: Any) -> int:
            return hash(self.name.lower()) & 0xFFFF

    assert structural_equal(Loose("Ab"), Loose("aB")) and not structural_equal(Loose("a"), Loose("b"))
    assert structural_hash(Loose("Ab")) == structural_hash(Loose("aB"))
    assert "__s_equal__" not in {m.name for m in Loose.__tvm_ffi_type_info__.methods}


# ---- cached writable fields: one wrapper per object, coherent with every write ------------


def _cached_class() -> type:
    @py_class(_key("Cached"))
    class Cached(Object):
        n: int = 0
        f: float = 0.5
        b: bool = False
        s: str = ""
        ro: int = field(default=1, frozen=True)

    return Cached


def test_writable_pod_fields_are_slots_and_c_writes_show_at_once():
    Cached = _cached_class()
    for name in ("n", "f", "b", "ro"):  # read by CPython's slot read, no call
        assert type(Cached.__dict__[name]).__name__ == "member_descriptor", name
    assert type(Cached.__dict__["s"]).__name__ == "Field"  # a str field: read from C each time
    c = Cached()
    get, put = _testing("object_get_field"), _testing("object_set_field")
    put(c, "n", 41)
    put(c, "f", 2.25)
    put(c, "b", True)
    assert (c.n, c.f, c.b) == (41, 2.25, True)
    assert type(c.n) is int and type(c.f) is float and type(c.b) is bool
    put(c, "n", 2**62)  # a value outside the small-int cache
    assert c.n == 2**62
    for i in range(200):  # reads in between writes, each seen at once
        put(c, "n", i)
        assert c.n == i
    # Python writes go to C first, then the slot; C's errors leave both unchanged.
    c.n = 7
    c.f = 3  # converted by C to the field's type
    assert (c.n, get(c, "n"), c.f, type(c.f)) == (7, 7, 3.0, float)
    c.n = True  # stored by C as 1: the slot holds what C holds, not the value given
    assert type(c.n) is int and c.n == 1
    c.n = 7
    with pytest.raises(TypeError, match="Mismatched type on field `n`"):
        c.n = "seven"
    assert (c.n, get(c, "n")) == (7, 7)
    with pytest.raises(AttributeError, match="field `ro` of `.*` is read-only"):
        c.ro = 2
    with pytest.raises(AttributeError, match="cannot delete field `n`"):
        del c.n
    assert c.ro == 1 and c.n == 7
    # The type's Field descriptors write through C too.
    (n_field,) = [f for f in Cached.__tvm_ffi_type_info__.fields if f.name == "n"]
    n_field.set(c, 11)
    assert c.n == 11 and n_field.get(c) == 11


def test_inherited_and_own_writable_fields_stay_coherent_in_a_py_class_child():
    Parent = _cached_class()

    @py_class(_key("CachedChild"))
    class Child(Parent):
        m: int = 5

    put = _testing("object_set_field")
    c = Child(n=1, m=2)
    assert type(Child.__dict__["m"]).__name__ == "member_descriptor"
    put(c, "n", 10)
    put(c, "m", 20)
    assert (c.n, c.m) == (10, 20)
    c.m = 21
    assert c.m == 21 and _testing("object_get_field")(c, "m") == 21


def test_c_writes_from_other_threads_with_reads_in_between():
    import threading

    Cached = _cached_class()
    c = Cached()
    put = _testing("object_set_field")  # a Function: it releases the GIL around the C call
    rounds, nthreads = 300, 4
    start = threading.Barrier(nthreads + 1)

    def writer(t: int) -> None:
        start.wait()
        for i in range(rounds):
            put(c, "n", t * rounds + i)
            put(c, "f", float(i))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    start.wait()
    seen = set()
    while any(th.is_alive() for th in threads):
        v, f = c.n, c.f
        assert type(v) is int and 0 <= v < nthreads * rounds
        assert type(f) is float and 0.0 <= f < rounds
        seen.add(v)
    for th in threads:
        th.join()
    get = _testing("object_get_field")
    assert c.n == get(c, "n") and c.f == get(c, "f")  # the last reload saw the last write
    assert len(seen) >= 1


def test_one_wrapper_per_object_through_echo_and_containers():
    Cached = _cached_class()
    c = Cached(n=3)
    echo = ffikit.get_global_func("testing.echo")
    assert echo(c) is c
    assert Array([c, c])[1] is c
    assert List([c])[0] is c
    assert Map({"k": c})["k"] is c
    assert Dict({"k": c})["k"] is c
    made = ffikit.testing.create_object(type(c).__tvm_ffi_type_info__.type_key, n=4)
    assert echo(made) is made
    # copies are new objects with wrappers of their own
    c2, c3 = copy.copy(c), copy.deepcopy(c)
    assert c2 is not c and c3 is not c and (c2.n, c3.n) == (3, 3)
    c.n = 9
    assert (c.n, c2.n, c3.n) == (9, 3, 3)
    back = pickle.loads(pickle.dumps(c))
    assert back is not c and back.n == 9 and echo(back) is back


def test_a_dead_wrappers_object_comes_back_with_a_new_wrapper_and_fresh_values():
    import gc
    import weakref

    Cached = _cached_class()
    arr = Array([Cached(n=1)])
    put = _testing("object_set_field")
    first = arr[0]
    ref = weakref.ref(first)
    assert arr[0] is first
    del first
    gc.collect()
    assert ref() is None
    put(arr[0], "n", 5)  # a wrapper made for the call, gone after it
    put(arr[0], "f", 1.5)
    again = arr[0]
    assert (again.n, again.f) == (5, 1.5)
    put(again, "n", 6)
    assert again.n == 6 and arr[0] is again


def test_a_constructor_handle_already_wrapped_is_refused():
    Cached = _cached_class()
    c = Cached(n=2)

    class Again(Cached):
        def __init__(self) -> None:
            self.__init_handle_by_constructor__(lambda: c)

    with pytest.raises(TypeError, match="already has a Python wrapper"):
        Again()
    assert c.n == 2
