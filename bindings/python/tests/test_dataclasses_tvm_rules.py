"""tvm_ffi 0.1.15's py_class rules that issue 36 item 5 adds: ``field(converter=...)``
and the ``dataclass_transform`` metadata naming it, extra field options, ``init_property``,
``__ffi_init__`` called from a user ``__init__``, and structural hooks written for
tvm_ffi (``__s_equal__(self, other, eq_cb)`` with ``eq_cb(x, y, def_region, name)``,
``__s_hash__(self, init_hash, hash_cb)`` with ``hash_cb(x, init_hash, def_region)``).
The last test runs one program on ffikit and on tvm_ffi (FFK_TVM_FFI_PYTHON) and compares
what it prints."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from typing import Any

import pytest

import ffikit
import ffikit.dataclasses as dc
from ffikit import Object, structural_equal, structural_hash
from ffikit.dataclasses import Field, field, fields, init_property, py_class

_counter = itertools.count()


def _key(stem: str = "T") -> str:
    return f"test_dc_tvm.{stem}{next(_counter)}"


# ---- converter, extra options, dataclass_transform ------------------------------------


def test_converter_is_metadata_not_called_at_run_time():
    calls = []

    def double(v: Any) -> int:
        calls.append(v)
        return v * 2

    @py_class(_key())
    class C(Object):
        x: int = field(converter=double, default=3)

    assert (C(5).x, C().x, calls) == (5, 3, [])
    (f,) = fields(C)
    assert f.converter is double
    assert field().converter is dc._field_converter and dc._field_converter(7) == 7


def test_dataclass_transform_metadata_names_field_specifiers_and_converter():
    for deco in (py_class, dc.c_class):
        meta = deco.__dataclass_transform__
        assert meta["field_specifiers"] == (Field, field)
        assert meta["eq_default"] is False and meta["order_default"] is False
        assert meta["kwargs"] == {"converter": dc._field_converter}


def test_extra_field_options_are_kept_then_refused_by_py_class():
    f = field(shape=(2,))
    assert f.extra_kwargs == {"shape": (2,)}
    with pytest.raises(TypeError, match=r"E\.x: unrecognized field options: a, shape"):
        @py_class(_key())
        class E(Object):
            x: int = field(shape=(2,), a=1)


def test_dataclasses_all_has_object_and_init_property():
    assert dc.Object is Object and "Object" in dc.__all__
    assert dc.init_property is init_property and "init_property" in dc.__all__


# ---- init_property --------------------------------------------------------------------


def test_init_property_is_computed_once_before_post_init():
    calls = []

    @py_class(_key())
    class P(Object):
        a: int
        b: int = 2

        @init_property
        def total(self) -> int:
            calls.append("total")
            return self.a + self.b

        def __post_init__(self) -> None:
            calls.append(("post", self.total))

    p = P(1)
    assert p.total == 3 and calls == ["total", ("post", 3)]
    p.b = 10
    assert p.total == 3, "computed at construction only"
    f = fields(P)[-1]
    assert (f.name, f.init, f.repr, f.compare, f.hash, f.structural_eq) == ("total", False, False, False, False,
                                                                          "ignore")
    assert "total" not in repr(p)
    with pytest.raises(TypeError, match="total"):
        P(1, total=4)
    assert structural_equal(P(1, 2), P(2, 1)) is False
    # A C field like the others: the type's reflected field reads it.
    (total_field,) = [d for d in P.__tvm_ffi_type_info__.fields if d.name == "total"]
    assert total_field.get(P(1, 2)) == 3


def test_init_property_sets_a_frozen_field_and_inherits_parents_first():
    @py_class(_key(), frozen=True)
    class F(Object):
        a: int

        @init_property
        def twice(self) -> int:
            return self.a * 2

    f = F(3)
    assert f.twice == 6
    with pytest.raises(AttributeError):
        f.twice = 1

    @py_class(_key())
    class Base(Object):
        a: int

        @init_property
        def inc(self) -> int:
            return self.a + 1

    @py_class(_key())
    class Sub(Base):
        c: int = 0

        @init_property
        def more(self) -> int:
            return self.inc + self.c

    s = Sub(1, 5)
    assert (s.inc, s.more) == (2, 7)


def test_init_property_without_annotation_is_any_and_user_init_leaves_it_unset():
    @py_class(_key())
    class A(Object):
        a: int

        @init_property
        def pair(self):  # noqa: ANN202 - no annotation: Any
            return [self.a, self.a]

    assert list(A(2).pair) == [2, 2]
    assert fields(A)[-1].type_text == "Any"

    @py_class(_key())
    class U(Object):
        a: int

        @init_property
        def twice(self) -> int:
            return self.a * 2

        def __init__(self, a: int) -> None:
            self.__ffi_init__(a)

    u = U(3)
    assert (u.a, u.twice) == (3, 0), "tvm_ffi computes init properties in the generated __init__ only"


def test_init_property_of_a_frozen_class_is_not_written_once_the_object_is_shared():
    kept = []

    @py_class(_key(), frozen=True)
    class F(Object):
        a: int

        @init_property
        def twice(self) -> int:
            kept.append(ffikit.Array([self]))  # another holder before the value is stored
            return self.a * 2

    with pytest.raises(RuntimeError, match="init_property `twice` of F: the object is held elsewhere"):
        F(1)
    kept.clear()


def test_init_property_refuses_a_non_callable():
    with pytest.raises(TypeError, match="expected a callable"):
        init_property(3)


# ---- __ffi_init__ from a user __init__ ------------------------------------------------


def test_user_init_calls_ffi_init():
    @py_class(_key())
    class U(Object):
        a: int
        b: str = "x"

        def __init__(self, v: int) -> None:
            self.__ffi_init__(v + 1, b=str(v))

    u = U(1)
    assert (u.a, u.b) == (2, "1")

    @py_class(_key())
    class Again(Object):
        a: int

        def __init__(self, v: int) -> None:
            self.__ffi_init__(v)
            self.__ffi_init__(v + 1)

    assert Again(1).a == 2

    @py_class(_key())
    class Missing(Object):
        a: int

        def __init__(self, v: int) -> None:
            self.__ffi_init__()

    with pytest.raises(TypeError, match="missing required argument"):
        Missing(1)

    @py_class(_key())
    class Sub(U):
        c: int = 0

        def __init__(self, v: int) -> None:
            super().__init__(v)

    s = Sub(1)
    assert (s.a, s.b, s.c, type(s)) == (2, "1", 0, Sub)


def test_user_init_calling_ffi_init_keeps_frozen_and_identity():
    @py_class(_key(), frozen=True)
    class F(Object):
        a: int

        def __init__(self, v: int) -> None:
            self.__ffi_init__(v * 10)

    f = F(2)
    assert f.a == 20
    with pytest.raises(AttributeError):
        f.a = 1
    arr = ffikit.Array([f])
    assert arr[0] is f, "the object keeps its one wrapper"
    with pytest.raises(RuntimeError, match="held elsewhere already"):
        f.__ffi_init__(5)
    assert f.a == 20
    del arr
    f.__ffi_init__(5)  # held by this wrapper alone again: tvm_ffi's re-initialization
    assert f.a == 5
    with pytest.raises(TypeError, match="Mismatched type|expected"):
        F("no")


# ---- structural hooks in tvm_ffi's form -----------------------------------------------


@pytest.fixture(scope="module")
def lam_types():
    @py_class(_key("Var"), structural_eq="var")
    class Var(Object):
        name: str = field(structural_eq="ignore")

    @py_class(_key("Add"))
    class Add(Object):
        lhs: Any
        rhs: Any

    @py_class(_key("Lam"))
    class Lam(Object):
        params: list
        body: Any
        note: str

        def __s_equal__(self, other: Any, eq_cb: Any) -> bool:
            return bool(eq_cb(self.params, other.params, True, "params") and
                        eq_cb(self.body, other.body, False, "body"))

        def __s_hash__(self, init_hash: int, hash_cb: Any) -> int:
            return hash_cb(self.body, hash_cb(self.params, init_hash, True), False)

    @py_class(_key("Old"))
    class Old(Object):
        v: Any
        note: str

        def __s_equal__(self, other: Any, equal: Any) -> bool:
            return bool(equal(self.v, other.v, "v"))

        def __s_hash__(self, hash_fn: Any) -> int:
            return hash_fn(self.v)

    return Var, Add, Lam, Old


def test_tvm_form_hooks_bind_their_def_region(lam_types):
    Var, Add, Lam, _ = lam_types
    x, y = Var("x"), Var("y")
    a, b, c = Lam([x], Add(x, 1), "a"), Lam([y], Add(y, 1), "b"), Lam([y], Add(x, 1), "c")
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, c) and structural_hash(a) != structural_hash(c)
    lhs, rhs = ffikit.get_first_structural_mismatch(a, c)
    assert str(lhs) == "<root>.body.lhs" and str(rhs) == "<root>.body.lhs"


def test_ffikit_form_hooks_keep_working(lam_types):
    _, _, _, Old = lam_types
    assert structural_equal(Old(1, "a"), Old(1, "b"))
    assert structural_hash(Old(1, "a")) == structural_hash(Old(1, "b"))
    assert not structural_equal(Old(1, "a"), Old(2, "a"))
    lhs, _ = ffikit.get_first_structural_mismatch(Old(1, "a"), Old(2, "a"))
    assert str(lhs) == "<root>.v"


def test_hook_callbacks_refuse_bad_arguments():
    @py_class(_key())
    class Bad(Object):
        v: int

        def __s_equal__(self, other: Any, eq_cb: Any) -> bool:
            return bool(eq_cb(self.v, other.v, 7, "v"))

        def __s_hash__(self, init_hash: int, hash_cb: Any) -> int:
            return hash_cb(self.v, "seed", False)

    with pytest.raises(ValueError, match="def_region 7 is not a DefRegionKind"):
        structural_equal(Bad(1), Bad(1))
    with pytest.raises(TypeError, match="init_hash must be an int, not a `str`"):
        structural_hash(Bad(1))

    @py_class(_key())
    class BadName(Object):
        v: int

        def __s_equal__(self, other: Any, eq_cb: Any) -> bool:
            return bool(eq_cb(self.v, other.v, True, 3))

    with pytest.raises(TypeError, match="field name must be a str or None, not a `int`"):
        structural_equal(BadName(1), BadName(1))


# ---- one program on both libraries ----------------------------------------------------

PROGRAM = r'''
import json
from typing import Any
from tvm_ffi import Object, structural_equal, structural_hash
from tvm_ffi.dataclasses import py_class, field, fields, init_property
out = []
def probe(label, f):
    try:
        out.append([label, f()])
    except Exception as e:
        out.append([label, type(e).__name__])
calls = []
@py_class("tvmrules.P")
class P(Object):
    a: int
    b: int = 2
    @init_property
    def total(self) -> int:
        calls.append("total")
        return self.a + self.b
    def __post_init__(self):
        calls.append(["post", self.total])
probe("init_property", lambda: [P(1).total, list(calls)])
probe("init_property fields", lambda: [[f.name, f.init, f.repr, f.compare, f.hash, f.structural_eq] for f in fields(P)])
probe("init_property kw", lambda: P(1, total=3))
@py_class("tvmrules.F", frozen=True)
class F(Object):
    a: int
    @init_property
    def twice(self) -> int:
        return self.a * 2
probe("frozen init_property", lambda: F(4).twice)
@py_class("tvmrules.U")
class U(Object):
    a: int
    b: str = "x"
    @init_property
    def twice(self) -> int:
        return self.a * 2
    def __init__(self, v):
        self.__ffi_init__(v + 1, b=str(v))
probe("user init", lambda: [U(1).a, U(1).b, U(1).twice])
@py_class("tvmrules.U2")
class U2(U):
    c: int = 0
    def __init__(self, v):
        super().__init__(v)
probe("user init super", lambda: [U2(1).a, U2(1).c])
@py_class("tvmrules.U3")
class U3(Object):
    a: int
    def __init__(self, v):
        self.__ffi_init__()
probe("user init missing", lambda: U3(1).a)
@py_class("tvmrules.C")
class C(Object):
    x: int = field(converter=lambda v: v * 2, default=3)
probe("converter", lambda: [C(5).x, C().x])
probe("extra options", lambda: field(foo=1).extra_kwargs)
@py_class("tvmrules.Var", structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")
@py_class("tvmrules.Add")
class Add(Object):
    lhs: Any
    rhs: Any
@py_class("tvmrules.Lam")
class Lam(Object):
    params: list
    body: Any
    def __s_equal__(self, other, eq_cb):
        return eq_cb(self.params, other.params, True, "params") and eq_cb(self.body, other.body, False, "body")
    def __s_hash__(self, init_hash, hash_cb):
        return hash_cb(self.body, hash_cb(self.params, init_hash, True), False)
x, y = Var("x"), Var("y")
a, b, c = Lam([x], Add(x, 1)), Lam([y], Add(y, 1)), Lam([y], Add(x, 1))
probe("hooks", lambda: [structural_equal(a, b), structural_hash(a) == structural_hash(b), structural_equal(a, c),
                        structural_hash(a) == structural_hash(c)])
print(json.dumps(out))
'''


_FFIKIT_PRELUDE = ("import sys, ffikit, ffikit.dataclasses\n"
                   "sys.modules['tvm_ffi'], sys.modules['tvm_ffi.dataclasses'] = ffikit, ffikit.dataclasses\n")


def _run(py: str, prelude: str, env: dict[str, str]) -> list:
    proc = subprocess.run([py, "-c", prelude + PROGRAM], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_program_prints_the_same_on_ffikit_and_tvm_ffi():
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        pytest.skip("tvm_ffi interop: FFK_TVM_FFI_PYTHON (an interpreter with apache-tvm-ffi) is not set")
    ours = _run(sys.executable, _FFIKIT_PRELUDE, dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    tvm_env = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
    theirs = _run(py, "", tvm_env)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (name, mine), (_, tvm) in zip(ours, theirs):
        assert mine == tvm, f"{name}: ffikit {mine}, tvm_ffi {tvm}"


_TYPED_USER = '''\
from __future__ import annotations

from typing import Any

from ffikit import Object
from ffikit.dataclasses import field, init_property, py_class


def to_int(v: str | int) -> int:
    return int(v)


@py_class("typed.Rect")
class Rect(Object):
    w: int
    h: int = field(default=1, converter=to_int)

    @init_property
    def area(self) -> int:
        return self.w * self.h


r = Rect(2, 3)
a: int = r.area
p: init_property[int] = Rect.area
x: Any = field(foo=1)
'''


def test_converter_and_init_property_pass_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    program = tmp_path / "typed_user.py"
    program.write_text(_TYPED_USER)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cache = os.path.join(os.environ.get("TEST_TMPDIR", str(tmp_path)), "mypy-cache-dataclasses")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                        str(program)], capture_output=True, text=True, env=dict(os.environ, MYPYPATH=pkg))
    assert r.returncode == 0, r.stdout + r.stderr
