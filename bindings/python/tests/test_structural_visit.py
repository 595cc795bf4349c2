"""structural_walk, structural_visit, structural_map and structural_mutate (tvm_ffi's names,
over ffikit/structural_visit.h): orders, skip and stop, definition regions, sharing of
unchanged subtrees, copy-on-write of Lists and Dicts, variable remapping, cycles and the
depth limit; and one program run on ffikit and on tvm_ffi (FFK_TVM_FFI_PYTHON) whose
answers must agree.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import ffikit
from ffikit import DefRegionKind, List, VisitInterrupt, WalkResult

# One program, run here with ffikit and in a subprocess with tvm_ffi; run_cases() answers a
# list of [name, result] pairs made of plain JSON values.
PROGRAM = """
@py_class("test_sv.Var", structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")

@py_class("test_sv.TVar", structural_eq="var")
class TVar(Object):
    ty: Any

@py_class("test_sv.Add")
class Add(Object):
    a: Any
    b: Any

@py_class("test_sv.Lam")
class Lam(Object):
    p: Any = field(structural_eq="def")
    body: Any

@py_class("test_sv.LamS")
class LamS(Object):
    p: Any = field(structural_eq="def-simple")
    body: Any

@py_class("test_sv.Ign")
class Ign(Object):
    a: Any
    b: Any = field(structural_eq="ignore")


@py_class("test_sv.OnlyB")
class OnlyB(Object):
    a: Any
    b: Any

    @staticmethod
    def __s_visit__(visitor, obj):
        return visitor.visit(obj.b)


@py_class("test_sv.SubOnlyB")
class SubOnlyB(OnlyB):
    c: Any = None


@py_class("test_sv.Swap")
class Swap(Object):
    a: Any
    b: Any

    @staticmethod
    def __s_mutate__(mutator, obj):
        return Swap(mutator.mutate(obj.b), mutator.mutate(obj.a))


@py_class("test_sv.SubSwap")
class SubSwap(Swap):
    c: Any = None


def label(v):
    if isinstance(v, (Var, TVar, Add, Lam, LamS, Ign, OnlyB, SubOnlyB, Swap, SubSwap)):
        return type(v).__name__
    if isinstance(v, Object):
        return "obj"
    return repr(v)


def run_cases():
    out = []
    x, y, z = Var("x"), Var("y"), Var("z")
    t = Lam(x, Add(x, [1, "s", None, {"k": 2.5}]))
    for order in ("pre", "post"):
        seen = []
        r = tvm.structural_walk(t, lambda v: seen.append(label(v)), order=order)
        out.append(["walk " + order, [seen, r is None]])
    seen = []
    tvm.structural_walk(t, (), with_def_region_kind=lambda v, k: seen.append([label(v), int(k)]), order="pre")
    out.append(["regions", seen])
    seen = []
    tv = TVar(x)
    tvm.structural_walk(LamS(tv, tv), (), with_def_region_kind=lambda v, k: seen.append([label(v), int(k)]),
                        order="pre")
    out.append(["regions simple", seen])
    seen = []
    tvm.structural_walk(t, lambda v: (seen.append(label(v)), tvm.WalkResult.SKIP if isinstance(v, Add) else None)[1],
                        order="pre")
    out.append(["skip", seen])
    seen = []
    r = tvm.structural_walk(t, lambda v: (seen.append(label(v)), tvm.VisitInterrupt(v) if v == 1 else None)[1],
                            order="pre")
    out.append(["stop", [seen, r.value]])
    seen = []
    tvm.structural_walk(t, [(int, lambda v: seen.append(["int", v])), (Var, lambda v: seen.append(["var", v.name])),
                            (object, lambda v: seen.append(["any", label(v)]))], order="pre")
    out.append(["typed", seen])
    seen = []
    tvm.structural_walk([1, [2], {"a": 3}, True], [(tvm.Array, lambda v: seen.append("arr")),
                                                  (tvm.Map, lambda v: seen.append("map")),
                                                  (bool, lambda v: seen.append("bool")),
                                                  (int, lambda v: seen.append("int"))])
    out.append(["builtin types", seen])
    seen = []
    tvm.structural_walk([1, Add(2, "s")], (tvm.Object, lambda v: seen.append(label(v))))
    out.append(["Object matches objects", seen])
    seen = []
    tvm.structural_walk(Ign(1, 2), lambda v: seen.append(label(v)))
    out.append(["ignored", seen])
    # map
    inner = Add("s", "t")
    t2 = Add([1, 2], inner)
    r = tvm.structural_map(t2, (int, lambda v: v + 1))
    out.append(["map post", [str(r), r.b.same_as(inner), r.same_as(t2)]])
    r = tvm.structural_map(t2, (str, lambda v: v))
    out.append(["map unchanged", r.same_as(t2)])
    seen = []
    r = tvm.structural_map(Add(1, 2), [(int, lambda v: (seen.append(v), v * 10)[1]),
                                       (Add, lambda v: (seen.append("Add"), Add(v.a, 7))[1])], order="pre")
    out.append(["map pre", [str(r), seen]])
    seen = []
    tvm.structural_map([1, None], lambda v: (seen.append(repr(v)), v)[1])
    out.append(["map none", seen])
    r = tvm.structural_map(Lam(x, Add(x, y)), (Var, lambda v: z if v.same_as(x) else v), order="pre")
    out.append(["rename", [r.p.name, r.body.a.name, r.body.b.name]])
    a = TVar(1)
    r = tvm.structural_map(Lam(a, Add(a, a)), (int, lambda v: v + 100))
    out.append(["cascade", [r.p.ty, r.body.a.same_as(r.p), r.body.b.same_as(r.p), r.p.same_as(a)]])
    free = Add(a, a)
    out.append(["free use", tvm.structural_map(free, (int, lambda v: v + 100)).same_as(free)])
    lst = tvm.List([1, 2])
    r = tvm.structural_map(lst, (int, lambda v: v + 1))
    out.append(["list cow", [r.same_as(lst), type(r).__name__, list(r), list(lst)]])
    d = tvm.Dict({"a": 1})
    r = tvm.structural_map(d, (int, lambda v: v + 1))
    out.append(["dict cow", [r.same_as(d), type(r).__name__, dict(r), dict(d)]])
    # mutate
    def swap(v, m):
        if isinstance(v, Add):
            return Add(m.mutate(v.b), m.mutate(v.a))
        return v * 2 if isinstance(v, int) else m.default_mutate(v)
    out.append(["mutate", str(tvm.structural_mutate([Add(1, 2), 3, "q"], (object, swap)))])
    log = []
    def remap(v, m):
        log.append([label(v), int(m.def_region_kind())])
        if isinstance(v, TVar) and m.var_remap_get(v) is None:
            m.var_remap_set(v, TVar(999))
        return m.default_mutate(v)
    r = tvm.structural_mutate(Lam(a, Add(a, a)), (object, remap))
    out.append(["remap", [log, r.p.ty, r.body.a.same_as(r.p)]])
    modes = []
    tvm.structural_mutate([[1], 2], (object, lambda v, m, mode: (modes.append(int(mode)), m.default_mutate(v))[1]))
    out.append(["modes", modes])
    kinds = []
    def scoped(v, m):
        kinds.append([int(m.def_region_kind()), int(m.with_def_region_kind(2, lambda: m.def_region_kind())),
                      int(m.def_region_kind())])
        return m.default_mutate(v)
    tvm.structural_mutate(Lam(x, 1), (object, scoped))
    out.append(["scoped regions", kinds])
    try:
        tvm.structural_mutate([1], (object, lambda v, m: m.var_remap_set(5, 1)))
        out.append(["remap int key", None])
    except TypeError:
        out.append(["remap int key", "TypeError"])
    # visit
    seen = []
    def own(v, vis):
        seen.append([label(v), int(vis.def_region_kind())])
        if isinstance(v, Add):
            return vis.visit(v.a)
        return vis.default_visit(v)
    r = tvm.structural_visit(Lam(x, Add([1], [2])), (object, own))
    out.append(["visit", [seen, r is None]])
    r = tvm.structural_visit([1, 2, 3], (int, lambda v, vis: tvm.VisitInterrupt(v) if v == 2 else None))
    out.append(["visit stop", r.value])
    # errors
    def boom(v):
        if isinstance(v, Add):
            raise ValueError("boom at add")
    try:
        tvm.structural_walk(t, boom)
        out.append(["error", None])
    except ValueError as e:
        out.append(["error", str(e)])
    k0, k1 = tvm.StructuralKey([1, 2]), tvm.StructuralKey([1, 2])
    out.append(["key", [k0 == k1, hash(k0) == hash(k1), {k0: "a"}[k1], k0 == tvm.StructuralKey([1, 3])]])
    k2 = tvm.StructuralKey([1, [2]])
    m, d = tvm.Map({k0: "a", k2: "b"}), tvm.Dict({k0: 1})
    d[k1] = 2
    out.append(["key in containers", [m[k1], m.get(tvm.StructuralKey([1, [2]])), k1 in m,
                                      tvm.StructuralKey([2, 1]) in m, len(d), d[k0]]])
    # Type hooks: __s_visit__ (inherited) replaces the descent, __s_mutate__ (the type's own) the rebuild.
    for order in ("pre", "post"):
        seen = []
        tvm.structural_walk([OnlyB(Add(1, 2), 3), SubOnlyB(4, [5], 6)], lambda v: seen.append(label(v)), order=order)
        out.append(["visit hook " + order, seen])
    r = tvm.structural_walk(OnlyB(1, Add(2, 3)), (int, lambda v: tvm.VisitInterrupt(v * 10) if v == 3 else None))
    out.append(["visit hook interrupt", r.value])
    seen = []
    tvm.structural_visit(OnlyB(1, Add(2, 3)), (object, lambda v, vis: (seen.append(label(v)), vis.default_visit(v))[1]))
    out.append(["visit hook default_visit", seen])
    seen = []
    r = tvm.structural_map([Swap(1, Add(2, 3)), SubSwap(4, 5, 6)], (int, lambda v: (seen.append(v), v + 1)[1]))
    out.append(["mutate hook map", [str(r), seen]])
    r = tvm.structural_map(Swap(1, 2), (Swap, lambda v: Add(v.a, v.b)), order="pre")
    out.append(["mutate hook map pre", str(r)])
    r = tvm.structural_mutate(Swap(1, 2), (Swap, lambda v, m: m.default_mutate(v)))
    out.append(["mutate hook default_mutate", str(r)])
    return out
"""

_FFIKIT_PRELUDE = """
from typing import Any
import ffikit as tvm
from ffikit import Object
from ffikit.dataclasses import py_class, field
"""

_TVM_PRELUDE = """
from typing import Any
import json
import tvm_ffi as tvm
from tvm_ffi import Object
from tvm_ffi.dataclasses import py_class, field
"""


@pytest.fixture(scope="module")
def program():
    ns: dict = {}
    exec(compile(_FFIKIT_PRELUDE + PROGRAM, "<visit program>", "exec", dont_inherit=True), ns)  # noqa: S102
    return ns


def _cases(program) -> dict:
    return dict(json.loads(json.dumps(program["run_cases"]())))


def test_walk_orders_regions_skip_and_stop(program):
    cases = _cases(program)
    assert cases["walk pre"] == [["Lam", "Var", "Add", "Var", "obj", "1", "'s'", "obj", "2.5"], True]
    assert cases["walk post"][0] == ["Var", "Var", "1", "'s'", "2.5", "obj", "obj", "Add", "Lam"]
    assert [k for _, k in cases["regions"]] == [0, 1, 0, 0, 0, 0, 0, 0, 0]
    assert cases["regions simple"] == [["LamS", 0], ["TVar", 2], ["Var", 0], ["TVar", 0], ["Var", 0]]
    assert cases["skip"] == ["Lam", "Var", "Add"]
    assert cases["stop"] == [["Lam", "Var", "Add", "Var", "obj", "1"], 1]
    assert cases["error"] == "boom at add"


def test_map_shares_unchanged_subtrees_and_follows_variables(program):
    cases = _cases(program)
    assert cases["map post"][1:] == [True, False]
    assert cases["map unchanged"] is True
    assert cases["rename"] == ["z", "z", "y"]
    assert cases["cascade"] == [101, True, True, False]
    assert cases["free use"] is True
    assert cases["list cow"] == [False, "List", [2, 3], [1, 2]]


def test_walk_result_and_region_enums_have_tvm_ffis_values():
    assert (int(WalkResult.ADVANCE), int(WalkResult.SKIP)) == (0, 1)
    assert [int(k) for k in DefRegionKind] == [0, 1, 2]
    assert VisitInterrupt().value is None
    assert VisitInterrupt(3).value == 3


def test_cycles_end_and_the_depth_limit_is_a_runtime_error():
    lst = List([1])
    lst.append(lst)
    seen = []
    assert ffikit.structural_walk(lst, lambda v: seen.append(type(v).__name__), order="pre") is None
    assert seen == ["List", "int", "List"]
    lst.clear()
    deep = ffikit.Array([0])
    for _ in range(1100):
        deep = ffikit.Array([deep])
    with pytest.raises(RuntimeError, match="deeper than 1000"):
        ffikit.structural_walk(deep, lambda v: None)
    with pytest.raises(RuntimeError, match="deeper than 1000"):
        ffikit.structural_map(deep, lambda v: v)


def test_a_handle_kept_past_its_call_raises(program):
    kept = []

    def keep(v, m):
        kept.append(m)
        return v

    ffikit.structural_mutate([1], (object, keep))
    with pytest.raises(RuntimeError, match="traversal that has ended"):
        kept[0].mutate(1)


def test_bad_callback_results_and_types_are_type_errors():
    with pytest.raises(TypeError, match="must return None, a WalkResult or a VisitInterrupt"):
        ffikit.structural_walk([1], lambda v: "bad")
    with pytest.raises(TypeError, match="callback type must be"):
        ffikit.structural_walk([1], (list, lambda v: None))
    with pytest.raises(ValueError, match="Unknown structural walk order"):
        ffikit.structural_walk([1], lambda v: None, order="sideways")


def _run_on_tvm_ffi(py: str) -> list:
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
    code = _TVM_PRELUDE + PROGRAM + "\nprint(json.dumps(run_cases()))\n"
    proc = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"the tvm_ffi side ({py}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def test_walks_and_rewrites_match_tvm_ffi(program):
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        pytest.skip("tvm_ffi interop: FFK_TVM_FFI_PYTHON (an interpreter with apache-tvm-ffi) is not set")
    ours = json.loads(json.dumps(program["run_cases"]()))
    theirs = _run_on_tvm_ffi(py)
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    for (name, mine), (_, tvm) in zip(ours, theirs):
        assert mine == tvm, f"{name}: ffikit {mine}, tvm_ffi {tvm}"


def test_type_hooks_replace_descent_and_rebuild(program):
    # tvm_ffi 0.1.15's answers: __s_visit__ (inherited by SubOnlyB) visits only `b`; the
    # callbacks still run for the hooked object itself. __s_mutate__ is the type's own
    # (SubSwap rebuilds field by field).
    cases = _cases(program)
    assert cases["visit hook pre"] == ["obj", "OnlyB", "3", "SubOnlyB", "obj", "5"]
    assert cases["visit hook post"] == ["3", "OnlyB", "5", "obj", "SubOnlyB", "obj"]
    assert cases["visit hook interrupt"] == 30
    assert cases["visit hook default_visit"] == ["OnlyB", "Add", "2", "3"]
    assert cases["mutate hook map"] == ["(test_sv.Swap(a=test_sv.Add(a=3, b=4), b=2), test_sv.SubSwap(a=5, b=6, c=7))",
                                        [2, 3, 1, 4, 5, 6]]
    assert cases["mutate hook map pre"] == "test_sv.Add(a=1, b=2)"
    assert cases["mutate hook default_mutate"] == "test_sv.Swap(a=2, b=1)"


# ---- The wrappers a walk hands to callbacks (object.c's spare) ---------------------------


def _walk_tree(key: str, extra: dict | None = None):
    """A py_class node class (its body plus `extra`) and a 3-node tree of it."""
    from ffikit.dataclasses import py_class

    body = {"__annotations__": {"value": int, "kids": ffikit.Array}, **(extra or {})}
    node = py_class(key)(type("WNode", (ffikit.Object,), body))
    tree = node(1, ffikit.Array([node(2, ffikit.Array([])), node(3, ffikit.Array([]))]))
    return node, tree


def test_walk_wrappers_keep_identity_values_and_writes():
    import weakref

    node, tree = _walk_tree("test_sv.WNode")
    kept: list = []
    ffikit.structural_walk(tree, (node, kept.append))
    assert [n.value for n in kept] == [2, 3, 1]
    assert kept[0] is tree.kids[0] and kept[2] is tree  # one wrapper per object, kept or read later
    del kept
    # Wrappers the callbacks drop may be reused for the next node: each still shows its own
    # node, is dead for weak references afterwards, and writes reach C.
    values: list = []
    ffikit.structural_walk(tree, (node, lambda n: values.append((n.value, id(n) == id(tree)))))
    assert values == [(2, False), (3, False), (1, True)]
    refs: list = []

    def keep_weakly(n):
        refs.append(weakref.ref(n))

    ffikit.structural_walk(tree, (node, keep_weakly))
    assert [r() is None for r in refs] == [True, True, False]  # the children's wrappers died; tree is held
    first = tree.kids[0]

    def bump(n):
        n.value += 10

    ffikit.structural_walk(tree, (node, bump))
    assert (first.value, tree.kids[1].value, tree.value) == (12, 13, 11)
    seen_ids: list = []
    ffikit.structural_walk(tree, (node, lambda n: seen_ids.append((n.value, n is first, n is tree))))
    assert seen_ids == [(12, True, False), (13, False, False), (11, False, True)]


def test_walk_wrappers_of_classes_with_a_finalizer_are_not_reused_and_none_outlives_the_walk():
    import gc
    import sys

    deleted: list = []
    node, tree = _walk_tree("test_sv.WNodeDel", {"__del__": lambda self: deleted.append(1)})
    gc.collect()
    deleted.clear()  # the children's wrappers made while building
    ffikit.structural_walk(tree, (node, lambda n: None))
    gc.collect()
    assert len(deleted) == 2  # the two children's wrappers (tree's own lives on)
    # A wrapper kept for reuse (it holds its class) does not outlive the walk.
    node2, tree2 = _walk_tree("test_sv.WNodeGone")
    before = sys.getrefcount(node2)
    ffikit.structural_walk(tree2, (node2, lambda n: None))
    assert sys.getrefcount(node2) == before


def test_walk_wrappers_with_a_lent_handle_survive_what_a_callback_does_to_them():
    """The spare handed to a callback borrows its node's handle from the walk (object.c,
    "A lent handle"): written, kept, weakly referenced or walked again inside the
    callback, each wrapper shows its own node afterwards and holds it alive; the leak
    check (conftest) catches a reference taken twice, a crash one released twice."""
    import gc
    import weakref

    node, _ = _walk_tree("test_sv.WNodeLent")
    tree = node(1, ffikit.Array([node(v, ffikit.Array([])) for v in (2, 3, 4, 5, 6)]))
    kept: list = []
    refs: list = []
    inner: list = []

    def each(n):  # 2 and 4 are dropped (the spare next), 3 and 5 and 6 get it
        if n.value == 3:  # written through the lent wrapper, kept
            n.value = 30
            kept.append(n)
        elif n.value == 5:  # walked again inside the callback, weakly referenced, kept
            ffikit.structural_walk(n, (node, lambda m: inner.append(m.value)))
            refs.append(weakref.ref(n))
            kept.append(n)
        elif n.value == 6:  # weakly referenced only
            refs.append(weakref.ref(n))

    ffikit.structural_walk(tree, (node, each))
    assert [k.value for k in kept] == [30, 5] and inner == [5]
    assert kept[0] is tree.kids[1] and kept[1] is tree.kids[3] and tree.kids[1].value == 30
    assert [r() is None for r in refs] == [False, True]
    del kept
    gc.collect()
    assert refs[0]() is None

    def fail(n):
        raise ValueError(f"node {n.value}")

    with pytest.raises(ValueError, match="node 2"):
        ffikit.structural_walk(tree, (node, fail))
    # Writes through every wrapper handed to a callback and dropped, lent or not.
    for _ in range(3):
        ffikit.structural_walk(tree, (node, lambda n: setattr(n, "value", n.value + 1)))
    assert [k.value for k in tree.kids] == [5, 33, 7, 8, 9] and tree.value == 4


def test_lent_wrappers_of_callbacks_on_threads_that_switch_inside_them():
    """Callbacks on four threads give the GIL away while they hold a wrapper with a lent
    handle (time.sleep), so the calls end in another order than they began (object.c
    unlinks each record wherever it is); every third node is kept past its call."""
    import threading
    import time

    node, _ = _walk_tree("test_sv.WNodeSwitch")
    tree = node(1, ffikit.Array([node(v, ffikit.Array([])) for v in range(2, 12)]))
    walk = ffikit.get_global_func("ffi.StructuralWalk")  # release_gil on: each callback takes the GIL
    index = node.__tvm_ffi_type_info__.type_index
    results: list = []

    def run():
        for _ in range(20):
            seen: list = []
            kept: list = []

            def each(n):
                time.sleep(0)
                seen.append(n.value)
                if n.value % 3 == 0:
                    kept.append(n)

            walk(tree, [(index, each)], [], 1)
            results.append((seen, [k.value for k in kept]))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = (list(range(2, 12)) + [1], [3, 6, 9])
    assert len(results) == 80 and all(r == want for r in results)


def test_walks_releasing_the_gil_on_threads_hand_out_correct_wrappers():
    import threading

    node, tree = _walk_tree("test_sv.WNodeThreads")
    walk = ffikit.get_global_func("ffi.StructuralWalk")  # release_gil on: each callback takes the GIL
    assert walk.release_gil
    index = node.__tvm_ffi_type_info__.type_index
    results: list = []

    def run():
        for _ in range(200):
            seen: list = []
            walk(tree, [(index, lambda n: seen.append(n.value))], [], 1)
            results.append(seen)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 800 and all(r == [2, 3, 1] for r in results)
