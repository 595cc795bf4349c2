"""Cycles and weak references: ``weakref.ref`` of every ffikit object, ``ffikit.WeakRef``
(a weak handle a field or container can hold), and ``ffikit.debug.find_cycles``.

ffikit counts references and has no cycle collector (as TVM-FFI), and Python's gc does
not see the references C objects hold: objects that hold each other through fields or
List/Dict elements are never freed. These tests pin that down, and the ways out.
"""
from __future__ import annotations

import gc
import weakref
from typing import Any, Callable, Optional

import pytest

import ffikit
import ffikit.testing
from ffikit import Object, WeakRef, _core
from ffikit.dataclasses import py_class
from ffikit.debug import find_cycles


@py_class("test_cycles.Node")
class Node(Object):
    value: int = 0
    next: Optional["Node"] = None
    any: Any = None


def _error_object() -> Any:
    return ffikit.convert(ffikit.Error("ValueError", "boom", ""))  # an Error held as an ffikit object


# Every kind of ffikit object Python can hold, each made fresh (and held by nothing else).
OBJECTS: dict[str, Callable[[], Any]] = {
    "Array": lambda: ffikit.Array([1, 2]),
    "Tuple": lambda: ffikit.convert((1, "a")),
    "List": lambda: ffikit.List([1]),
    "Map": lambda: ffikit.Map({"a": 1}),
    "Dict": lambda: ffikit.Dict({"a": 1}),
    "String": lambda: ffikit.String("a string longer than seven bytes"),
    "Function (global)": lambda: ffikit.get_global_func("testing.echo"),
    "Function (from Python)": lambda: ffikit.convert(lambda x: x),
    "Tensor": lambda: ffikit.empty((2, 3), "float32"),
    "Module": ffikit.system_lib,
    "c_class/registered C type": lambda: ffikit.testing.TestIntPair(1, 2),
    "auto-made class": ffikit.testing.make_unregistered_object,
    "py_class": lambda: Node(1),
    "WeakRef": lambda: WeakRef(ffikit.List([])),
    "Object base": lambda: ffikit.convert(ffikit.Map({})),
}


@pytest.mark.parametrize("make", list(OBJECTS.values()), ids=list(OBJECTS))
def test_weakref_ref_works_for_every_ffikit_object(make):
    obj = make()
    ref = weakref.ref(obj)
    assert ref() is obj
    del obj
    gc.collect()
    assert ref() is None


def test_error_objects_can_be_weakly_referenced():
    err = ffikit.Error("ValueError", "boom", "")
    ref = weakref.ref(err)
    assert ref() is err


@pytest.mark.parametrize("make", [lambda: ffikit.Bytes(b"some bytes"), lambda: ffikit.Shape((2, 3))],
                         ids=["Bytes", "Shape"])
def test_bytes_and_shape_are_weakly_referenced_through_the_object_they_keep(make):
    # CPython allows no weak reference to a bytes or tuple subclass (nor to bytes or
    # tuple): the ffikit object they keep is the one to refer to, and WeakRef takes it.
    value = make()
    with pytest.raises(TypeError):
        weakref.ref(value)
    assert weakref.ref(value._ffikit_object)() is value._ffikit_object
    w = WeakRef(value)
    assert w() == value


# ---- ffikit.WeakRef ---------------------------------------------------------------------


def test_weak_ref_gives_the_target_while_alive_then_none(hooks):
    target = ffikit.List([1, 2])
    w = WeakRef(target)
    assert w.alive and w() == target and w().same_as(target)
    assert repr(w).startswith("<WeakRef at 0x") and "; to ffikit.List at 0x" in repr(w)
    before = hooks._live_objects(75)
    del target
    gc.collect()
    assert not w.alive and w() is None
    assert repr(w).endswith("; dead>")
    assert hooks._live_objects(75) == before  # the List's contents went; the WeakRef keeps only memory


def test_weak_ref_to_a_py_class_object_gives_back_the_same_python_object():
    n = Node(3)
    w = WeakRef(n)
    assert w() is n


def test_weak_refs_are_equal_and_hash_alike_by_target_alive_or_dead():
    a, b = ffikit.List([]), ffikit.List([])
    wa1, wa2, wb = WeakRef(a), WeakRef(a), WeakRef(b)
    assert wa1 == wa2 and hash(wa1) == hash(wa2) and wa1 != wb
    assert wa1 != a
    del a, b
    gc.collect()
    assert wa1 == wa2 and hash(wa1) == hash(wa2) and wa1 != wb
    assert len({wa1, wa2, wb}) == 2


def test_weak_ref_crosses_into_c_and_back_and_into_containers():
    target = Node(1)
    w = WeakRef(target)
    echoed = ffikit.get_global_func("testing.echo")(w)
    assert isinstance(echoed, WeakRef) and echoed == w and echoed() is target
    holder = ffikit.List([w])
    assert isinstance(holder[0], WeakRef) and holder[0]() is target
    d = ffikit.Dict({w: 1})
    assert d[WeakRef(target)] == 1  # Dict keys compare by the target


def test_weak_ref_target_must_be_an_ffikit_object():
    for bad in (1, "text", [1, 2], object(), None):
        with pytest.raises(TypeError, match="cannot make a WeakRef to a"):
            WeakRef(bad)


def test_weak_ref_cannot_be_pickled():
    import pickle
    with pytest.raises(TypeError, match="cannot pickle an ffikit.WeakRef"):
        pickle.dumps(WeakRef(ffikit.List([])))


# ---- what is never freed, and the ways out ----------------------------------------------


def test_two_py_class_objects_that_hold_each_other_are_never_freed(hooks):
    """The documented limit: gc.collect() does not free a cycle through ffikit fields."""
    t = _core._type_key_to_index("test_cycles.Node")
    before = hooks._live_objects(t)
    a, b = Node(1), Node(2)
    a.next, b.next = b, a
    ra, wa = weakref.ref(a), WeakRef(a)
    del a, b
    gc.collect()
    assert hooks._live_objects(t) == before + 2  # still alive: nothing sees the cycle
    assert ra() is None  # the Python wrappers went; the C objects stay, out of Python's reach
    a = wa()  # only a WeakRef (or a C holder) still reaches them: a fresh wrapper
    assert a is not None and a.value == 1
    assert [[x.value for x in c] for c in find_cycles(a)] == [[1, 2]]
    a.next.next = None  # break it: now both go
    del a, wa  # (the WeakRef holds a's memory, which the live counters count)
    gc.collect()
    assert hooks._live_objects(t) == before


def test_a_weak_ref_parent_pointer_lets_a_tree_go(hooks):
    t = _core._type_key_to_index("test_cycles.Node")
    before = hooks._live_objects(t)
    parent = Node(0)
    children = ffikit.List([Node(i, any=WeakRef(parent)) for i in range(1, 4)])
    parent.any = children
    assert all(c.any() is parent for c in parent.any)
    assert find_cycles(parent) == []
    del parent, children
    gc.collect()
    assert hooks._live_objects(t) == before


# ---- ffikit.debug.find_cycles -----------------------------------------------------------


def test_find_cycles_finds_none_in_a_tree_with_shared_leaves():
    leaf = Node(9)
    tree = ffikit.List([Node(1, next=leaf), Node(2, next=leaf), ffikit.Dict({"x": leaf})])
    assert find_cycles(tree) == []
    assert find_cycles(5) == [] and find_cycles("text") == []


def test_find_cycles_finds_a_two_cycle_of_py_class_objects():
    a, b = Node(1), Node(2)
    a.next, b.next = b, a
    cycles = find_cycles(a)
    assert len(cycles) == 1 and cycles[0][0] is a and cycles[0][1] is b
    b.next = None


def test_find_cycles_finds_a_list_that_holds_itself():
    lst = ffikit.List([1])
    lst.append(lst)
    cycles = find_cycles(lst)
    assert len(cycles) == 1 and len(cycles[0]) == 1 and cycles[0][0].same_as(lst)
    lst.pop()


def test_find_cycles_finds_a_cycle_through_a_dict_value():
    d = ffikit.Dict()
    n = Node(1, any=d)
    d["child"] = n
    cycles = find_cycles(d)
    assert len(cycles) == 1
    assert cycles[0][0].same_as(d) and cycles[0][1] is n
    n.any = None


def test_find_cycles_finds_a_long_cycle_at_any_depth():
    length = 20000
    first = Node(0)
    last = first
    for i in range(1, length):
        last.next = Node(i)
        last = last.next
    last.next = first
    cycles = find_cycles(first)
    assert len(cycles) == 1 and len(cycles[0]) == length
    assert cycles[0][0] is first and cycles[0][-1] is last
    del cycles
    last.next = None


def test_find_cycles_does_not_follow_weak_refs_and_respects_max_cycles():
    a = Node(1)
    a.next = Node(2, any=WeakRef(a))
    assert find_cycles(a) == []
    loops = [Node(i) for i in range(3)]
    for n in loops:
        n.next = n
    assert len(find_cycles(ffikit.List(loops))) == 3
    assert len(find_cycles(ffikit.List(loops), max_cycles=1)) == 1
    with pytest.raises(ValueError, match="max_cycles must be at least 1, got 0"):
        find_cycles(a, max_cycles=0)
    for n in loops:
        n.next = None
