"""Releasing deep data (issue 35, item 2): a chain of ffikit values of any depth, each
holding the next, is freed with a bounded stack when its head goes, in the main thread or
any other (the C release queues past a fixed nesting of deleters; docs/design.md, "Deep
data"). Before that, ``del x`` of a List chain 200,000 deep ended in SIGSEGV.

The issue asks for ten million levels. Building them from Python takes a few seconds per
million, so by default the chains are DEPTH (one million) deep, still five times what
crashed; ``FFK_DEEP_10M=1`` runs every test at ten million. Under the sanitizers
(FFIKIT_SANITIZED, run_pytest.sh) they are 100,000 deep.
"""
from __future__ import annotations

import itertools
import os
import threading
from typing import Any, Callable, Optional

import pytest

import ffikit
import ffikit.testing
from ffikit import Object
from ffikit.dataclasses import c_class, py_class

if os.environ.get("FFIKIT_SANITIZED"):
    DEPTH = 100_000
elif os.environ.get("FFK_DEEP_10M"):
    DEPTH = 10_000_000
else:
    DEPTH = 1_000_000

# A thread's stack in the threaded tests: small, so only a bounded release fits.
SMALL_STACK = 512 * 1024

_counter = itertools.count()


@py_class(f"test_deep.Node{next(_counter)}")
class Node(Object):
    next: Optional[Object] = None


def _list(x: Any) -> Any:
    return ffikit.List([x])


def _array(x: Any) -> Any:
    return ffikit.Array([x])


def _dict(x: Any) -> Any:
    return ffikit.Dict({"next": x})


def _map(x: Any) -> Any:
    return ffikit.Map({"next": x})


def _py_class(x: Any) -> Any:
    return Node(next=x)


Derived: Any = None  # the c_class below, while a test runs


@pytest.fixture(autouse=True)
def derived_as_c_class():
    """A c_class over the C type testing.TestObjectDerived while each test runs; its C-declared
    Array<Any> field holds the next level. The testing module's class comes back after."""
    global Derived

    @c_class("testing.TestObjectDerived")
    class Derived(ffikit.testing.TestObjectBase):
        v_map: ffikit.Map
        v_array: ffikit.Array

    try:
        yield
    finally:
        ffikit.register_object("testing.TestObjectDerived")(ffikit.testing.TestObjectDerived)


def _c_class(x: Any) -> Any:
    return Derived(v_map={}, v_array=[x])


def _mixed(x: Any, _kinds=(_list, _array, _dict, _map, _py_class, _c_class), _i=itertools.count()) -> Any:
    return _kinds[next(_i) % len(_kinds)](x)


KINDS = {"List": _list, "Array": _array, "Dict": _dict, "Map": _map, "py_class": _py_class, "c_class": _c_class,
         "mixed": _mixed}


def _chain(wrap: Callable[[Any], Any], depth: int = DEPTH) -> Any:
    x = wrap(None) if wrap is not _list else ffikit.List([])
    for _ in range(depth - 1):
        x = wrap(x)
    return x


def _live() -> int:
    n = ffikit._core._live_objects()
    return -1 if n is None else n


@pytest.mark.parametrize("kind", KINDS)
def test_del_of_a_deep_chain_frees_it_all(kind):
    before = _live()
    x = _chain(KINDS[kind])
    assert _live() == -1 or _live() >= before + DEPTH
    del x
    # Gone when `del` returns: nothing is left for later.
    assert _live() == before


@pytest.mark.parametrize("kind", ["List", "mixed"])  # mixed: every kind above, in turn
def test_a_deep_chain_is_freed_in_a_thread_with_a_small_stack(kind):
    x = [_chain(KINDS[kind])]
    errors: list[BaseException] = []

    def drop() -> None:
        try:
            x.clear()  # the last reference: the whole chain dies in this thread
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    old = threading.stack_size(SMALL_STACK)
    try:
        t = threading.Thread(target=drop)
        t.start()
    finally:
        threading.stack_size(old)
    t.join()
    assert not errors and not x


def test_deep_chains_freed_by_several_threads_at_once():
    n = 4
    chains = [[_chain(KINDS[k], DEPTH // n)] for k in ("List", "Array", "py_class", "mixed")]
    barrier = threading.Barrier(n)

    def drop(holder: list) -> None:
        barrier.wait()
        holder.clear()

    threads = [threading.Thread(target=drop, args=(c,)) for c in chains]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not any(chains)
