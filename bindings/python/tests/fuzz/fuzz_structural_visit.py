"""atheris harness: structural walks and rewrites (structural_walk, structural_visit,
structural_map, structural_mutate) over generated values.

The input decodes into a pool of values built bottom-up: scalars, Arrays, Maps, Lists and
Dicts (Lists and Dicts may then be made to hold each other and themselves: cycles), and
objects of a few py_class types (a tree, a variable with a compared field, a Lam whose
parameter is a definition field). Then, for a few roots of the pool:

- a pre-order and a post-order walk visit as many values, and a visit whose callbacks take
  the default descent visits as many again;
- a skip at the root visits one value, a stop at the first value ends the walk;
- a map whose callback keeps every value returns the root itself, and so does a mutate
  that takes the default rewrite everywhere;
- a map that adds 1 to every int gives, for an acyclic root without variables, a value that
  the same map with -1 maps back to a structurally equal one.

Nothing may crash; the only error allowed is the depth RuntimeError. At the end the cycles
are broken and no C object may stay alive.
"""
from __future__ import annotations

from typing import Any

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

with instrumented():
    import ffikit

from ffikit import Object, VisitInterrupt, WalkResult
from ffikit.dataclasses import field, py_class


@py_class("fuzz_sv.Node")
class Node(Object):
    a: Any
    b: Any


@py_class("fuzz_sv.Var", structural_eq="var")
class Var(Object):
    ty: Any


@py_class("fuzz_sv.Lam")
class Lam(Object):
    p: Any = field(structural_eq="def")
    body: Any


SCALARS = [None, True, 0, 1, -7, 2**40, 0.5, "", "s", "a string longer than seven bytes", b"x"]


def build(r: Reader) -> tuple[list, list]:
    pool: list = []
    mutable: list = []

    def any_value():
        if pool and r.chance(60):
            return pool[r.pick(len(pool))]
        return SCALARS[r.pick(len(SCALARS))]

    for _ in range(r.small(1, 24)):
        kind = r.pick(7)
        n = r.small(0, 3)
        items = [any_value() for _ in range(n)]
        if kind == 0:
            v = ffikit.Array(items)
        elif kind == 1:
            v = ffikit.Map({i: x for i, x in enumerate(items)})
        elif kind == 2:
            v = ffikit.List(items)
            mutable.append(v)
        elif kind == 3:
            v = ffikit.Dict({str(i): x for i, x in enumerate(items)})
            mutable.append(v)
        elif kind == 4:
            v = Node(any_value(), any_value())
        elif kind == 5:
            v = Var(any_value())
        else:
            v = Lam(any_value(), any_value())
        pool.append(v)
    for _ in range(r.small(0, 4)):  # cycles through Lists and Dicts
        if not mutable:
            break
        target = mutable[r.pick(len(mutable))]
        value = pool[r.pick(len(pool))]
        if isinstance(target, ffikit.List):
            target.append(value)
        else:
            target[str(r.u8())] = value
    return pool, mutable


def plain(v, on_path=None) -> bool:
    """Acyclic and without variables: a variable used before its definition (in walk order)
    keeps its old identity there while the definition gets a new one, as in tvm_ffi, so
    only such values map back to an equal one."""
    on_path = set() if on_path is None else on_path
    if isinstance(v, Var):
        return False
    if isinstance(v, (ffikit.List, ffikit.Dict, ffikit.Array, ffikit.Map, Node, Lam)):
        key = v.__chandle__()
        if key in on_path:
            return False
        on_path.add(key)
        if isinstance(v, (ffikit.Map, ffikit.Dict)):
            children = list(v.values())
        elif isinstance(v, (Node, Var, Lam)):
            children = [getattr(v, f) for f in {"Node": ("a", "b"), "Var": ("ty",), "Lam": ("p", "body")}[type(v).__name__]]
        else:
            children = list(v)
        ok = all(plain(c, on_path) for c in children)
        on_path.discard(key)
        return ok
    return True


def plus(k):
    return lambda v: v + k if type(v) is int else v


def check(root) -> None:
    count = {"pre": 0, "post": 0, "visit": 0}

    def counter(name):
        def f(v, *_):
            count[name] += 1
        return f

    assert ffikit.structural_walk(root, counter("pre"), order="pre") is None
    assert ffikit.structural_walk(root, counter("post"), order="post") is None
    assert ffikit.structural_visit(root, (object, lambda v, vis: (counter("visit")(v), vis.default_visit(v))[1])) is None
    assert count["pre"] == count["post"] == count["visit"], count
    seen = []
    assert ffikit.structural_walk(root, lambda v: (seen.append(1), WalkResult.SKIP)[1], order="pre") is None
    assert len(seen) == (0 if root is None else 1)
    if root is not None:
        stop = ffikit.structural_walk(root, lambda v: VisitInterrupt(7), order="post")
        assert stop is not None and stop.value == 7
    kept = ffikit.structural_map(root, lambda v: v)
    assert kept is root or kept == root or (isinstance(kept, Object) and kept.same_as(root))
    mutated = ffikit.structural_mutate(root, (object, lambda v, m: m.default_mutate(v)))
    assert mutated is root or mutated == root or (isinstance(mutated, Object) and mutated.same_as(root))
    if plain(root):
        up = ffikit.structural_map(root, (int, plus(1)))
        down = ffikit.structural_map(up, (int, plus(-1)), order="pre")
        assert ffikit.structural_equal(down, root, map_free_vars=True), (root, up, down)


def test_one_input(data: bytes) -> None:
    before = live_objects()
    r = Reader(data)
    pool, mutable = build(r)
    try:
        for _ in range(r.small(1, 4)):
            check(pool[r.pick(len(pool))])
    except RuntimeError as e:
        assert "deeper than 1000" in str(e), e
    finally:
        for container in mutable:
            container.clear()
        container = None  # the loop variable would keep the last one alive
    del pool, mutable
    check_nothing_alive(before, "a walk")


if __name__ == "__main__":
    main(test_one_input)
