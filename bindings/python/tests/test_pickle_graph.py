"""Pickling of reflected objects through their fields, and of global Functions by name.

An object made by reflection pickles with the graph encoder of ffikit/_pickle.py: it and
every container and reflection-made object it reaches are nodes (type key, module, field
values in field order), so sharing and cycles survive; tensors, Functions and other
objects inside are leaves that pickle themselves, each C object once. A global Function
pickles as its registry name; any other Function refuses. Objects that reflection did not
make keep the JSON graph route (or its TypeError), and pickles of that format still load.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any, Optional

import pytest

import ffikit
from ffikit import Array, Dict, Function, List, Map, Tensor, _core
from ffikit._pickle import _OBJECT, _encode, _rebuild
from ffikit.dataclasses import field, py_class
from ffikit.structural import structural_equal
from ffikit.testing import TestIntPair, TestObjectBase, TestObjectDerived

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


@py_class("test_pickle_graph.Node")
class Node(ffikit.Object):
    value: int
    children: List = field(default_factory=List)
    note: Optional[str] = None


@py_class("test_pickle_graph.Holder")
class Holder(ffikit.Object):
    a: Any = None
    b: Any = None
    t: Optional[Tensor] = None
    f: Optional[Function] = None


@py_class("test_pickle_graph.Frozen", frozen=True)
class Frozen(ffikit.Object):
    n: int
    label: str
    items: List
    x: float = 0.5


@py_class("test_pickle_graph.Base")
class Base(ffikit.Object):
    x: int
    tag: str = field(default="base", frozen=True)


@py_class("test_pickle_graph.Derived")
class Derived(Base):
    y: float = 0.0
    others: Array = field(default_factory=Array)


def dumps_loads(value: Any, protocol: int = pickle.HIGHEST_PROTOCOL) -> Any:
    return pickle.loads(pickle.dumps(value, protocol=protocol))


def break_cycles(*nodes: Any) -> None:
    """C objects in a cycle are not collected: empty the Lists that close the cycles."""
    for n in nodes:
        n.children.clear()


# ---- objects through their fields -------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_reflected_object_round_trips_every_field_at_every_protocol(protocol):
    obj = TestObjectDerived(v_map={"a": 1}, v_array=[1, List([2])], v_i64=3, v_f64=2.5, v_str="x")
    back = dumps_loads(obj, protocol)
    assert type(back) is TestObjectDerived and not back.same_as(obj)
    assert (back.v_i64, back.v_f64, back.v_str) == (3, 2.5, "x")  # v_f64 is read-only
    assert structural_equal(back, obj)
    n = dumps_loads(Node(4, List([Node(5)]), note="n"), protocol)
    assert (type(n), n.value, n.note, n.children[0].value) == (Node, 4, "n", 5)


def test_the_node_holds_the_type_key_the_module_and_every_field_in_field_order():
    nodes = _encode(Derived(1, y=2.0))
    kind, (key, module, fields) = nodes[0]
    assert (kind, key, module) == (_OBJECT, "test_pickle_graph.Derived", Derived.__module__)
    assert fields[:3] == [1, "base", 2.0]  # inherited fields first, read-only ones too
    assert nodes[fields[3]][0] == 0  # `others`, an Array node (_ARRAY)
    u = ffikit.testing.make_unregistered_object()  # an auto-made class: no module to import
    assert _encode(u)[0][1][:2] == ("testing.TestUnregisteredObject", None)


def test_inherited_and_frozen_fields_come_back():
    d = dumps_loads(Derived(7, tag="t", y=1.5, others=Array([Base(1)])))
    assert type(d) is Derived and (d.x, d.tag, d.y) == (7, "t", 1.5)
    assert type(d.others[0]) is Base and d.others[0].tag == "base"
    with pytest.raises(AttributeError):
        d.tag = "u"  # still read-only after the rebuild
    f = dumps_loads(Frozen(3, "label", List([1]), 2.0))
    assert (f.n, f.label, list(f.items), f.x) == (3, "label", [1], 2.0)
    pair = dumps_loads(TestIntPair(7, 8))  # read-only C fields, cached in the wrapper
    assert (pair.a, pair.b) == (7, 8)


def test_objects_holding_containers_holding_objects_keep_their_sharing():
    leaf = Node(1)
    shared = List([leaf])
    root = Node(0, List([Node(2, shared), Node(3, shared)]))
    holder = Holder(a=Map({"k": leaf}), b=Dict({leaf: shared}))
    back_root, back_holder = dumps_loads(List([root, holder]))
    a, b = back_root.children
    assert a.children.same_as(b.children)  # one List, shared again
    assert a.children[0].same_as(b.children[0])
    assert back_holder.a["k"].same_as(a.children[0])  # the same leaf, through a Map
    key, value = next(iter(back_holder.b.items()))
    assert key.same_as(a.children[0]) and value.same_as(a.children)  # an object as a Dict key
    assert structural_equal(back_root, root)


def test_a_cycle_through_a_mutable_list_field_comes_back():
    a = Node(1)
    b = Node(2, List([a]))
    a.children.append(b)
    a.children.append(a)  # a self-loop too
    back = dumps_loads(a)
    try:
        assert back.value == 1 and back.children[0].value == 2
        assert back.children[0].children[0].same_as(back)
        assert back.children[1].same_as(back)
    finally:
        break_cycles(a, b, back, back.children[0])


def test_a_cycle_through_a_read_only_field_comes_back():
    items = List()
    f = Frozen(1, "loop", items)
    items.append(f)  # the frozen field holds a List holding the object
    back = dumps_loads(f)
    try:
        assert back.items[0].same_as(back) and back.label == "loop"
    finally:
        items.clear()
        back.items.clear()


def test_py_class_objects_of_a_module_load_in_a_fresh_process(tmp_path):
    (tmp_path / "graph_types_mod.py").write_text(
        "import ffikit\nfrom ffikit import List\nfrom ffikit.dataclasses import field, py_class\n\n"
        "@py_class('test_pickle_graph.fresh.Item')\nclass Item(ffikit.Object):\n"
        "    n: int\n    peers: List = field(default_factory=List)\n\n"
        "@ffikit.register_global_func('test_pickle_graph.fresh.double')\ndef double(x):\n    return 2 * x\n")
    dump = ("import sys, pickle, ffikit; sys.path.insert(0, sys.argv[1]); import graph_types_mod as m\n"
            "a = m.Item(1); b = m.Item(2, ffikit.List([a])); a.peers.append(b)\n"
            "sys.stdout.buffer.write(pickle.dumps(ffikit.Array([a, ffikit.get_global_func("
            "'test_pickle_graph.fresh.double')]), protocol=5))\n"
            "a.peers.clear()\n")
    load = ("import sys, pickle; sys.path.insert(0, sys.argv[1])\n"
            "a, f = pickle.loads(sys.stdin.buffer.read())\n"  # the module is imported by the load
            "b = a.peers[0]\n"
            "print(type(a).__module__, a.n, b.n, b.peers[0].same_as(a), f(21))\n"
            "a.peers.clear()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    data = subprocess.run([sys.executable, "-c", dump, str(tmp_path)], capture_output=True, env=env)
    assert data.returncode == 0, data.stderr.decode()[-2000:]
    out = subprocess.run([sys.executable, "-c", load, str(tmp_path)], input=data.stdout, capture_output=True, env=env)
    assert out.stdout.decode().split() == ["graph_types_mod", "1", "2", "True", "42"], out.stderr.decode()[-2000:]


# ---- leaves: tensors, Functions, other objects ---------------------------------------------------


def test_an_object_with_tensor_fields_round_trips_and_a_tensor_held_twice_is_pickled_once():
    np = pytest.importorskip("numpy")
    t = ffikit.from_dlpack(np.arange(1024, dtype="float32"))
    again = List([t])[0]  # another Python wrapper of the same C tensor
    assert again is not t and again.same_as(t)
    obj = Holder(a=t, b=Array([again]), t=t)
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    # Once: in-band, or (with Tensor.__reduce_ex__(5)) as one out-of-band buffer.
    assert len(data) + sum(len(b.raw()) for b in buffers) < 2 * t.nbytes()
    back = pickle.loads(data, buffers=buffers)
    assert back.a.same_as(back.t) and back.b[0].same_as(back.t)
    assert list(np.from_dlpack(back.t)[:3]) == [0.0, 1.0, 2.0] and back.t.shape == (1024,)
    for protocol in PROTOCOLS:
        assert list(np.from_dlpack(dumps_loads(obj, protocol).t)[-2:]) == [1022.0, 1023.0]


def test_every_leaf_c_object_reached_twice_is_handed_to_the_pickler_as_one_wrapper():
    f1 = ffikit.get_global_func("testing.echo")
    f2 = ffikit.get_global_func("testing.echo")
    assert f1 is not f2 and f1.same_as(f2)
    nodes = _encode(Array([f1, Holder(a=f2, f=f1)]))
    first, holder = nodes[0][1]  # the Array's element is a wrapper made when it is read
    assert first.same_as(f1) and nodes[holder][1][2][0] is first and nodes[holder][1][2][3] is first


def test_global_functions_in_fields_and_containers_travel_by_name():
    echo = ffikit.get_global_func("testing.echo")
    back = dumps_loads(Holder(f=echo, a=Map({"f": echo})))
    assert back.f.same_as(echo) and back.a["f"].same_as(echo)
    assert back.f(3) == 3


# ---- Functions by name ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_global_function_pickles_by_name_and_is_the_registered_one_again(protocol):
    echo = ffikit.get_global_func("testing.echo")
    func, args = echo.__reduce__()
    assert func is _core._global_function_from_pickle and args == ("testing.echo",)
    assert dumps_loads(echo, protocol).same_as(echo)
    assert b"testing.echo" in pickle.dumps(echo, protocol)


def test_a_python_function_registered_globally_pickles_by_its_registry_name():
    def add_one(x):
        return x + 1

    f = ffikit.register_global_func("test_pickle_graph.add_one", add_one)
    try:
        assert f.name != "test_pickle_graph.add_one"  # its own name is not registered: the registry's is found
        assert f.__reduce__()[1] == ("test_pickle_graph.add_one",)
        back = dumps_loads(f)
        assert back.same_as(f) and back(41) == 42
    finally:
        ffikit.remove_global_func("test_pickle_graph.add_one")


def test_a_missing_name_on_load_is_a_value_error_naming_it():
    f = ffikit.register_global_func("test_pickle_graph.gone", lambda: 1)
    data = pickle.dumps(Array([f]))
    ffikit.remove_global_func("test_pickle_graph.gone")
    with pytest.raises(ValueError, match=r"cannot unpickle Function `test_pickle_graph.gone`: no global Function is "
                                         r"registered under that name in this process; register it"):
        pickle.loads(data)
    with pytest.raises(TypeError, match="must be a str"):
        _core._global_function_from_pickle(1)


def test_a_function_that_is_not_registered_refuses_to_pickle_saying_why():
    f = ffikit.convert(lambda x: x)
    with pytest.raises(TypeError, match=r"cannot pickle Function `\S*<lambda>`: it is not registered as a global "
                                        r"Function, and only global Functions pickle \(by name\); register it "
                                        r"with ffikit.register_global_func"):
        pickle.dumps(f)
    with pytest.raises(TypeError, match="cannot pickle Function `.*<lambda>`"):
        pickle.dumps(Holder(f=f))  # inside an object too
    g = ffikit.register_global_func("test_pickle_graph.replaced", lambda: 1)
    ffikit.register_global_func("test_pickle_graph.replaced", lambda: 2, override=True)
    try:
        with pytest.raises(TypeError, match="not registered as a global Function"):
            pickle.dumps(g)  # its name now maps to another Function
    finally:
        ffikit.remove_global_func("test_pickle_graph.replaced")


# ---- what keeps its old behaviour -----------------------------------------------------------------

# A pickle of a testing.TestObjectDerived written before objects pickled through their fields
# (the JSON graph format, protocol 2).
OLD_PICKLE = (
    b'\x80\x02cffikit._core\n_unpickle_object\nq\x00XQ\x01\x00\x00{"root_index":7,"nodes":[{"type":"ffi.String",'
    b'"data":"x"},{"type":"ffi.String","data":"a"},{"type":"int","data":1},{"type":"ffi.Map","data":[1,2]},'
    b'{"type":"int","data":2},{"type":"ffi.List","data":[4]},{"type":"ffi.Array","data":[2,5]},'
    b'{"type":"testing.TestObjectDerived","data":{"v_i64":3,"v_f64":2.5,"v_str":0,"v_map":3,"v_array":6}}]}q\x01'
    b'X\x0e\x00\x00\x00ffikit.testingq\x02\x86q\x03Rq\x04.')


def test_pickles_of_the_json_graph_format_still_load():
    old = pickle.loads(OLD_PICKLE)
    assert type(old) is TestObjectDerived
    assert (old.v_i64, old.v_f64, old.v_str, dict(old.v_map)) == (3, 2.5, "x", {"a": 1})
    assert old.v_array[0] == 1 and list(old.v_array[1]) == [2]


_PLAIN = _core._type_register("test_pickle_graph.Plain")
_HOOKED = _core._type_register("test_pickle_graph.Hooked")
_core._type_set_attr(_HOOKED, "__data_to_json__", lambda obj: "hooked")
_core._type_set_attr(_HOOKED, "__data_from_json__", lambda data: _core._new_object(_HOOKED))


def test_objects_not_made_by_reflection_keep_the_json_route_or_its_error():
    hooked = _core._new_object(_HOOKED)
    assert not _core._object_is_reflection_made(hooked)
    func, args = hooked.__reduce__()
    assert func is _core._unpickle_object  # its __data_to_json__ hook, as before
    back = dumps_loads(Array([hooked, hooked]))
    assert type(back[0]) is type(hooked) and back[0].same_as(back[1])  # a leaf, pickled once
    plain = _core._new_object(_PLAIN)
    with pytest.raises(TypeError, match="cannot pickle a `test_pickle_graph.Plain` object: cannot serialize"):
        pickle.dumps(plain)
    with pytest.raises(TypeError, match="cannot pickle a `test_pickle_graph.Plain` object"):
        pickle.dumps(Holder(a=plain))
    assert _core._object_is_reflection_made(TestObjectBase()) and not _core._object_is_reflection_made(1)


def test_field_value_helpers_refuse_what_reflection_did_not_make_and_wrong_counts():
    with pytest.raises(TypeError, match="cannot read the fields of a `test_pickle_graph.Plain`: only objects made "
                                        "by reflection are field-wise"):
        _core._object_field_values(_core._new_object(_PLAIN))
    with pytest.raises(TypeError, match="constructed ffikit object"):
        _core._object_field_values(3)
    p = TestIntPair(1, 2)
    assert _core._object_field_values(p) == (1, 2)
    with pytest.raises(ValueError, match="`testing.TestIntPair` has 2 fields, not 3"):
        _core._object_init_fields(p, [1, 2, 3])
    with pytest.raises(TypeError, match="Mismatched type on field `b` of `testing.TestIntPair`"):
        _core._object_init_fields(p, [5, "x"])
    assert (p.a, p.b) == (1, 2)  # converted before any field is written
    with pytest.raises(ValueError, match="Cannot find object type index for nosuch.T"):
        _rebuild([(_OBJECT, ("nosuch.T", "no_such_module_xyz", []))])


def test_pickles_naming_the_old_module_still_load():
    # The encoder moved from ffikit/container.py to ffikit/_pickle.py; pickles written
    # before name ffikit.container._rebuild (and _import_modules), which still resolve.
    for value in (List([1, "two", List([3])]), TestIntPair(1, 2)):
        data = pickle.dumps(value, protocol=0)
        assert b"ffikit._pickle" in data
        old = data.replace(b"ffikit._pickle", b"ffikit.container")
        back = pickle.loads(old)
        assert ffikit.structural_equal(back, value)
