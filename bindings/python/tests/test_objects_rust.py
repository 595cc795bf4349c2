"""Cross-language objects: one object made in each language (C, Rust, Python), read and
changed from the other two.

* C: objects made by C code (the ``testing.create_object`` and
  ``testing.make_unregistered_object`` globals) and the C API itself, called through ctypes
  on the loaded ``libffikit.so`` (``ffk_object_get_field``, ``ffk_object_set_field``,
  ``ffk_object_call_method``: what a C library does with an object it was handed).
* Rust: the Rust-built module ``rustmod`` (bindings/rust/rustmod), which defines the
  reflected type ``rustmod.Vec2`` with ``ffikit::reflected_type!`` and exports functions that
  read and change the fields of any object by name (``rs_get_field``, ``rs_set_field``,
  ``rs_call_method``, ``rs_field_names``) and read ``Vec2.x`` through its typed handle.
* Python: attribute access and method calls of the bound or auto-made classes, and a type
  defined in Python (``ffikit.dataclasses.py_class``) whose objects Rust reads, writes and
  calls methods of by name.
* Part 2's structural tools and JSON graph across the two bindings: a value serialized in
  Rust (``rs_to_json_graph``) reads in Python (``ffikit.serialization``) and the reverse, and
  Rust's structural equality, hash and first mismatch agree with Python's. The tests that need
  a Python module another branch adds skip, naming it, until it is there.

The module's path comes from ``FFIKIT_RUSTMOD_LIB``; ``bindings/rust/run.sh test`` builds it
and sets it. Without it (the Bazel ``python_test``, which builds no Rust) every test here
is skipped, visibly.
"""
from __future__ import annotations

import ctypes
import os
import types
import typing

import pytest

import ffikit
import ffikit.testing

RUSTMOD = os.environ.get("FFIKIT_RUSTMOD_LIB")

pytestmark = pytest.mark.skipif(
    not RUSTMOD,
    reason="FFIKIT_RUSTMOD_LIB is not set: bindings/rust/run.sh test builds the Rust module and runs these tests",
)

RUST_FUNCTIONS = ("rs_make_vec2", "rs_get_field", "rs_set_field", "rs_call_method", "rs_field_names", "rs_vec2_sum_x",
                  "rs_field_types", "rs_structural_equal", "rs_structural_hash", "rs_first_mismatch", "rs_deep_copy",
                  "rs_to_json_graph", "rs_from_json_graph", "rs_make_vec3")


@pytest.fixture(scope="module")
def rs():
    """The Rust module's functions, looked up once before the per-test object counts (the
    module stays loaded, and its init registered rustmod.Vec2, for the life of the process)."""
    m = ffikit.load_module(RUSTMOD)
    return types.SimpleNamespace(module=m, **{name[3:]: m.get_function(name) for name in RUST_FUNCTIONS})


# ---- The C side: the C API through ctypes ----------------------------------------------------

FFK_TYPE_NONE, FFK_TYPE_INT, FFK_TYPE_FLOAT, FFK_TYPE_RAW_STR = 0, 1, 3, 8


class _Payload(ctypes.Union):
    _fields_ = [("v_int", ctypes.c_int64), ("v_float", ctypes.c_double), ("v_ptr", ctypes.c_void_p)]


class _Any(ctypes.Structure):
    """ffk_any: type_index, aux, an 8-byte payload (ffikit/any.h)."""

    _fields_ = [("type_index", ctypes.c_int32), ("aux", ctypes.c_uint32), ("v", _Payload)]


class CApi:
    """The few C functions the tests call, on the libffikit.so this process already loaded."""

    def __init__(self) -> None:
        path = os.path.join(os.path.dirname(ffikit.__file__), "lib", "libffikit.so")
        lib = ctypes.CDLL(path if os.path.exists(path) else "libffikit.so")
        ptr, name, anyp = ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Any)
        for fn, argtypes in {
            "ffk_object_get_field": [ptr, name, anyp],
            "ffk_object_set_field": [ptr, name, anyp],
            "ffk_object_call_method": [ptr, name, anyp, ctypes.c_int32, anyp],
            "ffk_any_as_str": [anyp, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t)],
        }.items():
            getattr(lib, fn).argtypes = argtypes
            getattr(lib, fn).restype = ctypes.c_int
        lib.ffk_any_release.argtypes = [anyp]
        lib.ffk_any_release.restype = None
        lib.ffk_error_fetch.restype = ptr
        lib.ffk_error_message.argtypes = [ptr]
        lib.ffk_error_message.restype = name
        lib.ffk_error_kind.argtypes = [ptr]
        lib.ffk_error_kind.restype = name
        lib.ffk_object_release.argtypes = [ptr]
        self.lib = lib

    def _error(self) -> str:
        e = self.lib.ffk_error_fetch()
        text = f"{self.lib.ffk_error_kind(e).decode()}: {self.lib.ffk_error_message(e).decode()}"
        self.lib.ffk_object_release(e)
        return text

    def _to_python(self, v: _Any):
        try:
            if v.type_index == FFK_TYPE_INT:
                return v.v.v_int
            if v.type_index == FFK_TYPE_FLOAT:
                return v.v.v_float
            data, size = ctypes.c_char_p(), ctypes.c_size_t()
            if self.lib.ffk_any_as_str(ctypes.byref(v), ctypes.byref(data), ctypes.byref(size)) != 0:
                raise AssertionError(self._error())
            return ctypes.string_at(data, size.value).decode()
        finally:
            self.lib.ffk_any_release(ctypes.byref(v))

    @staticmethod
    def _value(x) -> tuple[_Any, object]:
        """A borrowed ffk_any for an int, float or str (and what keeps it alive)."""
        if isinstance(x, int):
            return _Any(FFK_TYPE_INT, 0, _Payload(v_int=x)), None
        if isinstance(x, float):
            return _Any(FFK_TYPE_FLOAT, 0, _Payload(v_float=x)), None
        keep = ctypes.create_string_buffer(x.encode())
        return _Any(FFK_TYPE_RAW_STR, 0, _Payload(v_ptr=ctypes.addressof(keep))), keep

    def get_field(self, obj: ffikit.Object, field: str):
        out = _Any()
        if self.lib.ffk_object_get_field(obj.__chandle__(), field.encode(), ctypes.byref(out)) != 0:
            raise AssertionError(self._error())
        return self._to_python(out)

    def set_field(self, obj: ffikit.Object, field: str, value) -> str | None:
        """Writes the field; returns None, or the C error as "Kind: message"."""
        v, _keep = self._value(value)
        if self.lib.ffk_object_set_field(obj.__chandle__(), field.encode(), ctypes.byref(v)) != 0:
            return self._error()
        return None

    def call_method(self, obj: ffikit.Object, method: str, *args):
        values = [self._value(a) for a in args]
        argv = (_Any * max(1, len(values)))(*[v for v, _ in values])
        out = _Any()
        if self.lib.ffk_object_call_method(obj.__chandle__(), method.encode(), argv, len(values), ctypes.byref(out)) != 0:
            raise AssertionError(self._error())
        return self._to_python(out)


@pytest.fixture(scope="module")
def c() -> CApi:
    return CApi()


# ---- Made in C -------------------------------------------------------------------------------

def test_c_made_object_read_and_changed_from_rust_and_python(rs, c):
    create = ffikit.get_global_func("testing.create_object")
    o = create("testing.TestObjectBase", "v_i64", 5)
    assert type(o) is ffikit.testing.TestObjectBase
    # Rust reads and changes it by name.
    assert rs.get_field(o, "v_i64") == 5 and rs.get_field(o, "v_str") == "hello"
    rs.set_field(o, "v_i64", 7)
    rs.set_field(o, "v_str", "set from Rust")
    # Python sees Rust's writes, and writes its own.
    assert (o.v_i64, o.v_str, o.v_f64) == (7, "set from Rust", 10.0)
    o.v_i64 = 8
    assert rs.get_field(o, "v_i64") == 8
    assert rs.call_method(o, "add_i64", 2) == 10 == o.add_i64(2)
    assert list(rs.field_names(o)) == ["v_i64", "v_f64", "v_str"]
    # C's errors reach Python through Rust unchanged.
    with pytest.raises(AttributeError, match="field `v_f64` of `testing.TestObjectBase` is read-only"):
        rs.set_field(o, "v_f64", 1.0)
    with pytest.raises(TypeError, match="Mismatched type on field `v_i64` of `testing.TestObjectBase`"):
        rs.set_field(o, "v_i64", "seven")
    with pytest.raises(AttributeError, match="`testing.TestObjectBase` object has no field `nope`"):
        rs.get_field(o, "nope")
    assert o.v_i64 == 8


def test_c_made_int_pair_and_unregistered_object(rs):
    pair = ffikit.get_global_func("testing.create_object")("testing.TestIntPair", "a", 1, "b", 2)
    assert (pair.a, pair.b, pair.sum()) == (1, 2, 3)
    assert (rs.get_field(pair, "a"), rs.call_method(pair, "sum")) == (1, 3)
    with pytest.raises(AttributeError, match="field `a` of `testing.TestIntPair` is read-only"):
        rs.set_field(pair, "a", 5)
    with pytest.raises(AttributeError):
        pair.a = 5
    assert pair.a == 1
    u = ffikit.testing.make_unregistered_object()
    assert (u.v1, u.v2) == (41, 42) == (rs.get_field(u, "v1"), rs.get_field(u, "v2"))
    assert rs.call_method(u, "get_v2_plus_two") == 44 == u.get_v2_plus_two()


# ---- Made in Rust ----------------------------------------------------------------------------

def test_rust_made_object_read_and_changed_from_c_and_python(rs, c):
    v = rs.make_vec2(3.0, 4.0, "r")
    assert isinstance(v, ffikit.Object)
    assert type(v).__name__ == "Vec2" or "Vec2" in repr(type(v))
    # Python reads its fields and calls its Rust methods.
    assert (v.x, v.y, v.label) == (3.0, 4.0, "r")
    assert v.norm() == 5.0
    # Python writes; C and Rust read.
    v.x = 6.0
    assert c.get_field(v, "x") == 6.0 == rs.get_field(v, "x")
    # C writes; Python and Rust (its typed getter at the field's offset) read.
    assert c.set_field(v, "y", 8.0) is None
    assert v.y == 8.0
    assert rs.vec2_sum_x(ffikit.Array([v, v])) == 12.0
    assert c.set_field(v, "label", "set from C") is None
    assert v.label == "set from C" == rs.get_field(v, "label")
    assert c.call_method(v, "describe") == "set from C(6, 8)" == v.describe()
    assert c.call_method(v, "norm") == 10.0
    # C's repr walks the fields of the Rust-defined type.
    assert repr(v) == 'rustmod.Vec2(x=6.0, y=8.0, label="set from C")'
    scaled = v.scale(0.5)
    assert (scaled.x, scaled.y, scaled.label) == (3.0, 4.0, "set from C")
    # C's checks and texts, whichever language writes.
    assert c.set_field(v, "x", "far") == (
        "TypeError: Mismatched type on field `x` of `rustmod.Vec2`: expected `float` but got `str`")
    with pytest.raises(TypeError, match="Mismatched type on field `x` of `rustmod.Vec2`"):
        v.x = "far"
    assert v.x == 6.0


def test_rust_defined_type_seen_from_python(rs):
    v = rs.make_vec2(1.0, 2.0, "doc")
    cls = type(v)
    assert cls.x.__doc__ == "The x coordinate."
    assert "Euclidean" in (cls.norm.__doc__ or "")
    u = cls.unit_x()  # a static method defined in Rust
    assert (u.x, u.y, u.label) == (1.0, 0.0, "x")
    # Constructed from Python by key, with defaults from the Rust definition.
    w = ffikit.testing.create_object("rustmod.Vec2", y=2.5)
    assert type(w) is cls
    assert (w.x, w.y, w.label) == (0.0, 2.5, "v")
    with pytest.raises(TypeError, match="got an unexpected keyword argument `z`"):
        ffikit.testing.create_object("rustmod.Vec2", z=1.0)


def test_rust_defined_child_type_seen_from_python_c_and_rust(rs, c):
    # rustmod.Vec3 derives from rustmod.Vec2 in Rust (reflected_type!'s `parent = Vec2`).
    v = rs.make_vec3(1.0, 2.0, 2.0, "p")
    base = type(rs.make_vec2(0.0, 0.0, "b"))
    assert isinstance(v, base) and type(v) is not base
    # Inherited fields first, then the child's; the parent's Rust method reads them.
    assert list(rs.field_names(v)) == ["x", "y", "label", "z", "frame"]
    assert (v.x, v.y, v.z, v.label, v.frame) == (1.0, 2.0, 2.0, "p", None)
    assert v.norm() == pytest.approx(5 ** 0.5)
    assert v.norm3() == 3.0
    # C and Rust read the inherited and the child's fields by name; Rust's Vec2 handle
    # accepts the child (a downcast checked with the type registry).
    v.x = 4.0
    assert c.get_field(v, "x") == 4.0 == rs.get_field(v, "x")
    assert c.get_field(v, "z") == 2.0 == rs.get_field(v, "z")
    assert rs.vec2_sum_x(ffikit.Array([v, rs.make_vec2(0.5, 0.0, "")])) == 4.5
    # The Optional<rustmod.Vec2> field: a Vec2, a Vec3 (a subtype), None; anything else is
    # C's TypeError, whichever language writes.
    v.frame = rs.make_vec2(9.0, 0.0, "origin")
    assert v.frame.label == "origin" and rs.get_field(v, "frame").x == 9.0
    assert rs.set_field(v, "frame", rs.make_vec3(0.0, 0.0, 1.0, "up")) is None
    assert v.frame.z == 1.0
    assert rs.set_field(v, "frame", None) is None
    assert v.frame is None and rs.get_field(v, "frame") is None
    with pytest.raises(TypeError, match="Mismatched type on field `frame` of `rustmod.Vec3`"):
        v.frame = 5
    assert c.set_field(v, "frame", 5.0).startswith("TypeError: Mismatched type on field `frame` of `rustmod.Vec3`")
    assert v.frame is None
    # Constructed from Python by key, inherited defaults from the parent's Rust definition.
    w = ffikit.testing.create_object("rustmod.Vec3", z=0.5)
    assert type(w) is type(v)
    assert (w.x, w.y, w.z, w.label, w.frame) == (0.0, 0.0, 0.5, "v", None)


# ---- Made in Python --------------------------------------------------------------------------

def test_python_made_object_read_and_changed_from_c_and_rust(rs, c):
    p = ffikit.testing.TestObjectBase(v_i64=3)
    assert (rs.get_field(p, "v_i64"), c.get_field(p, "v_i64")) == (3, 3)
    rs.set_field(p, "v_i64", 4)
    assert c.get_field(p, "v_i64") == 4
    assert c.set_field(p, "v_i64", 5) is None
    assert (p.v_i64, rs.get_field(p, "v_i64")) == (5, 5)
    assert c.set_field(p, "v_str", "set from C") is None
    assert (p.v_str, rs.get_field(p, "v_str")) == ("set from C", "set from C")
    assert c.call_method(p, "add_i64", 1) == 6 == rs.call_method(p, "add_i64", 1)
    assert c.set_field(p, "v_f64", 1.0) == "AttributeError: field `v_f64` of `testing.TestObjectBase` is read-only"
    pair = ffikit.testing.TestIntPair(10, 20)
    assert (rs.get_field(pair, "b"), c.call_method(pair, "sum"), rs.call_method(pair, "sum")) == (20, 30, 30)


# ---- Defined in Python (py_class), used from Rust ------------------------------------------

@pytest.fixture(scope="module")
def PyPoint():
    """A type defined in Python with py_class, once per module (before the per-test counts: a
    type's description and its method Functions live until exit)."""
    dc = pytest.importorskip("ffikit.dataclasses", reason="ffikit.dataclasses (py_class) is not in this build")
    # tvm_ffi exposes Python methods to other languages when marked with `method`.
    mark = getattr(ffikit, "method", None) or getattr(dc, "method", None) or (lambda f: f)

    @dc.py_class("rstest.PyPoint")
    class PyPoint(ffikit.Object):
        x: int
        y: float = 0.5
        label: str = "p"
        extra: typing.Any = None

        @mark
        def shifted(self, dx: int) -> int:
            return self.x + dx

    return PyPoint


def test_python_defined_type_read_written_and_called_from_rust(rs, c, PyPoint):
    p = PyPoint(3, 1.5, "a label longer than seven")
    # Rust sees the fields the Python class declared, in order, with their C types.
    assert list(rs.field_names(p)) == ["x", "y", "label", "extra"]
    assert list(rs.field_types(p)) == ["x: int", "y: float", "label: str", "extra: Any"]
    assert (rs.get_field(p, "x"), rs.get_field(p, "y"), rs.get_field(p, "label")) == (3, 1.5, "a label longer than seven")
    # Rust writes; Python and C read the same C storage.
    rs.set_field(p, "x", 7)
    rs.set_field(p, "label", "set from Rust")
    assert (p.x, p.label) == (7, "set from Rust") == (c.get_field(p, "x"), c.get_field(p, "label"))
    p.y = 2.5
    assert rs.get_field(p, "y") == 2.5
    # Rust calls the method written in Python.
    assert rs.call_method(p, "shifted", 2) == 9 == p.shifted(2)
    # C's checks and texts, whichever language writes.
    with pytest.raises(TypeError, match="Mismatched type on field `x` of `rstest.PyPoint`"):
        rs.set_field(p, "x", "seven")
    with pytest.raises(AttributeError, match="`rstest.PyPoint` object has no field `z`"):
        rs.get_field(p, "z")
    assert p.x == 7
    # A py_class object stored by Rust and read back is the same C object, in its class.
    holder = PyPoint(0)
    rs.set_field(holder, "extra", p)
    back = rs.get_field(holder, "extra")
    assert type(back) is PyPoint and back.same_as(p)
    back.x = 11
    assert p.x == 11


def test_python_defined_objects_deep_copied_and_compared_in_rust(rs, PyPoint):
    p = PyPoint(1, extra=ffikit.Array([1, 2]))
    q = rs.deep_copy(p)
    assert type(q) is PyPoint and not q.same_as(p)
    assert rs.structural_equal(p, q)
    q.x = 2
    assert p.x == 1 and not rs.structural_equal(p, q)
    lhs, rhs = rs.first_mismatch(p, q)
    assert (str(lhs), str(rhs)) == ("<root>.x", "<root>.x")
    assert rs.first_mismatch(p, PyPoint(1, extra=ffikit.Array([1, 2]))) is None


# ---- The JSON graph and structural tools across Rust and Python -----------------------------

def _serialization():
    return pytest.importorskip("ffikit.serialization", reason="ffikit.serialization is not in this build")


def _structural():
    for name in ("structural_equal", "structural_hash", "get_first_structural_mismatch"):
        if not hasattr(ffikit, name):
            pytest.skip(f"ffikit.{name} is not in this build")
    return ffikit


def test_json_graph_written_in_rust_reads_in_python_and_the_reverse(rs):
    ser = _serialization()
    v = rs.make_vec2(1.0, 2.0, "a label longer than seven")
    value = ffikit.Array([v, 7, v, ffikit.Map({"k": 1.5, "s": "text"}), None])
    text = rs.to_json_graph(value, None)
    assert '"type":"rustmod.Vec2"' in text
    back = ser.from_json_graph_str(text)
    assert (back[0].x, back[0].y, back[0].label) == (1.0, 2.0, "a label longer than seven")
    assert back[0].same_as(back[2]), "one node, one object"
    assert (back[1], back[3]["k"], back[4]) == (7, 1.5, None)
    # Python writes the same document, and Rust reads Python's.
    assert ser.to_json_graph_str(back) == text
    again = rs.from_json_graph(ser.to_json_graph_str(value))
    assert rs.structural_equal(again, value) and again[0].same_as(again[2])
    # Metadata written in Rust reads in Python.
    with_meta = rs.to_json_graph(v, ffikit.Map({"author": "rust"}))
    assert with_meta.endswith('"metadata":{"author":"rust"}}')
    assert ser.from_json_graph_str(with_meta).label == "a label longer than seven"
    # Errors keep C's kind and text through either binding.
    bad = '{"root_index":0,"nodes":[{"type":"rustmod.Vec2","data":{"x":"far"}}]}'
    with pytest.raises(ValueError, match="Invalid JSON Object Graph"):
        rs.from_json_graph(bad)
    with pytest.raises(ValueError, match="Invalid JSON Object Graph"):
        ser.from_json_graph_str(bad)


def test_python_defined_objects_through_the_json_graph_of_either_binding(rs, PyPoint):
    ser = _serialization()
    p = PyPoint(4, 0.25, "shared", extra=ffikit.Array([1, "two", None]))
    value = ffikit.Array([p, p])
    text = rs.to_json_graph(value, None)
    assert '"type":"rstest.PyPoint"' in text
    back = ser.from_json_graph_str(text)
    assert type(back[0]) is PyPoint and back[0].same_as(back[1])
    assert (back[0].x, back[0].y, back[0].label, list(back[0].extra)) == (4, 0.25, "shared", [1, "two", None])
    assert ser.to_json_graph_str(back) == text
    again = rs.from_json_graph(ser.to_json_graph_str(p))
    assert type(again) is PyPoint and not again.same_as(p) and rs.structural_equal(again, p)
    with pytest.raises(ValueError, match="Invalid JSON Object Graph"):
        rs.from_json_graph('{"root_index":0,"nodes":[{"type":"rstest.PyPoint","data":{"x":"four"}}]}')


def _agree(rs, st, a, b):
    """Rust's structural equality, hash and first mismatch give Python's answers for a, b."""
    eq = rs.structural_equal(a, b)
    assert eq == st.structural_equal(a, b), (a, b)
    mismatch = rs.first_mismatch(a, b)
    expected = st.get_first_structural_mismatch(a, b)
    assert (mismatch is None) == (expected is None) == eq, (a, b)
    if mismatch is not None:
        assert [str(x) for x in mismatch] == [str(x) for x in expected], (a, b)
    for x in (a, b):
        assert rs.structural_hash(x) % 2**64 == st.structural_hash(x) % 2**64, x


def test_structural_equality_hash_and_mismatch_agree_across_rust_and_python(rs):
    st = _structural()
    v = rs.make_vec2(1.0, 2.0, "v")
    for a, b in [
        (ffikit.Array([1, 2]), ffikit.Array([1, 2, 3])),
        (ffikit.Map({"k": ffikit.Array([v])}), ffikit.Map({"k": ffikit.Array([rs.make_vec2(1.0, 2.5, "v")])})),
        (ffikit.Map({"a": 1}), ffikit.Map({"b": 1})),
        (ffikit.Array([v, "s"]), ffikit.Array([rs.make_vec2(1.0, 2.0, "v"), "s"])),
        (1, 1.0),
    ]:
        _agree(rs, st, a, b)


def test_python_defined_objects_compare_alike_in_rust_and_python(rs, PyPoint):
    st = _structural()
    v = rs.make_vec2(1.0, 2.0, "v")
    for a, b in [
        (PyPoint(1), PyPoint(1)),
        (PyPoint(1), PyPoint(2)),
        (PyPoint(1, label="a"), PyPoint(1, label="b")),
        (ffikit.Array([PyPoint(0, extra=v)]), ffikit.Array([PyPoint(0, extra=v)])),
        (ffikit.Array([PyPoint(0, extra=ffikit.Array([1]))]), ffikit.Array([PyPoint(0, extra=ffikit.Array([2]))])),
    ]:
        _agree(rs, st, a, b)
