"""ffikit.serialization (TVM-FFI's JSON graph format), the pickles that format still reads,
and interoperability with tvm_ffi: documents ffikit writes read in tvm_ffi and the
reverse, for the values both have.

The tvm_ffi side runs in this process when ``tvm_ffi`` imports here, else in a subprocess
of the interpreter named by the environment variable ``FFK_TVM_FFI_PYTHON`` (one with
apache-tvm-ffi installed, e.g. a venv made with ``pip install apache-tvm-ffi==0.1.15``);
without either the interop tests skip, saying so. Under Bazel the variable is passed
through (bindings/python/BUILD: env_inherit).
"""
from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ffikit
from ffikit import Array, Dict, List, Map
from ffikit.serialization import from_json_graph_str, from_json_graph_str_with_metadata, to_json_graph_str
from ffikit.structural import structural_equal
from ffikit.testing import TestIntPair, TestObjectBase, TestObjectDerived

echo = ffikit.get_global_func("testing.echo")


def derived(**kw):
    kw.setdefault("v_map", Map({"a": 1}))
    kw.setdefault("v_array", Array([1, 2]))
    return TestObjectDerived(**kw)


def round_trip(v):
    return from_json_graph_str(to_json_graph_str(v))


def same_value(a, b):
    """structural_equal, but a Shape by its dims (the C walk compares Shapes by identity;
    see test_structural.py's xfail)."""
    if isinstance(a, ffikit.Shape) or isinstance(b, ffikit.Shape):
        return type(a) is type(b) and tuple(a) == tuple(b)
    return structural_equal(a, b)


# ---- round trips of every kind ---------------------------------------------------------------


def values():
    return [
        None, True, False, 0, -1, 2**63 - 1, -(2**63), 1.5, -0.0, 1e300, 5e-324, math.inf, -math.inf,
        "", "héllo \"quoted\" \\ \n\t\x00 ☃ 𝄞", b"", bytes(range(256)),
        ffikit.dtype("float32"), ffikit.dtype("bfloat16"), ffikit.dtype("int8x4"), ffikit.Device(2, 1),
        ffikit.Device(1, 0), ffikit.Shape(()), ffikit.Shape((2, 3)),
        Array([]), Array([1, "a", None, 2.5]), List([]), List([1, [2, 3]]), Map({}),
        Map({"a": 1, 2: "b", None: [1]}), Dict({"k": Dict({"n": 1})}),
        TestIntPair(1, 2), TestObjectBase(v_i64=-5, v_str="s"),
        derived(v_map=Map({"x": TestIntPair(3, 4)}), v_array=Array([derived()])),
        Array([TestIntPair(1, 2), Map({"p": List([TestObjectBase()])})]),
    ]


@pytest.mark.parametrize("value", values(), ids=repr)
def test_round_trip_of_every_kind(value):
    back = round_trip(value)
    assert same_value(back, value)
    assert type(back) is type(ffikit.convert(value)) or isinstance(value, (str, bytes, float, int))


def test_nan_round_trips_and_is_written_as_tvm_ffi_writes_it():
    doc = to_json_graph_str(math.nan)
    assert doc == '{"root_index":0,"nodes":[{"type":"float","data":NaN}]}'
    assert math.isnan(from_json_graph_str(doc))
    assert to_json_graph_str([math.inf, -math.inf]).count("Infinity") == 2


def test_reflected_objects_come_back_as_their_class():
    p = round_trip(TestIntPair(7, 8))
    assert type(p) is TestIntPair and (p.a, p.b) == (7, 8)
    d = round_trip(derived(v_i64=3, v_str="z"))
    assert type(d) is TestObjectDerived and (d.v_i64, d.v_str, d.v_f64) == (3, "z", 10.0)
    u = round_trip(ffikit.testing.make_unregistered_object())
    assert (u.v1, u.v2) == (41, 42)


# The texts tvm_ffi 0.1.15 writes for the same values (tvm_ffi.serialization.to_json_graph_str).
TVM_DOCS = [
    ("None", '{"root_index":0,"nodes":[{"type":"None"}]}'),
    ("True", '{"root_index":0,"nodes":[{"type":"bool","data":true}]}'),
    ("3", '{"root_index":0,"nodes":[{"type":"int","data":3}]}'),
    ("1.5", '{"root_index":0,"nodes":[{"type":"float","data":1.5}]}'),
    ("'s'", '{"root_index":0,"nodes":[{"type":"ffi.String","data":"s"}]}'),
    ("b'by'", '{"root_index":0,"nodes":[{"type":"ffi.Bytes","data":"Ynk="}]}'),
    ("[1, 'a']", '{"root_index":2,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"a"},'
                 '{"type":"ffi.Array","data":[0,1]}]}'),
    ("{'k': [1, 2]}", '{"root_index":4,"nodes":[{"type":"ffi.String","data":"k"},{"type":"int","data":1},'
                      '{"type":"int","data":2},{"type":"ffi.Array","data":[1,2]},{"type":"ffi.Map","data":[0,3]}]}'),
    ("M.Shape((2, 3))", '{"root_index":0,"nodes":[{"type":"ffi.Shape","data":[2,3]}]}'),
    ("M.dtype('float32')", '{"root_index":0,"nodes":[{"type":"DataType","data":"float32"}]}'),
    ("M.Device(2, 1)", '{"root_index":0,"nodes":[{"type":"Device","data":[2,1]}]}'),
    ("M.List([1, 2])", '{"root_index":2,"nodes":[{"type":"int","data":1},{"type":"int","data":2},'
                       '{"type":"ffi.List","data":[0,1]}]}'),
    ("M.Dict({'a': 1})", '{"root_index":2,"nodes":[{"type":"ffi.String","data":"a"},{"type":"int","data":1},'
                         '{"type":"ffi.Dict","data":[0,1]}]}'),
    ("T.TestIntPair(1, 2)", '{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2}}]}'),
]


@pytest.mark.parametrize("expr, doc", TVM_DOCS, ids=[e for e, _ in TVM_DOCS])
def test_documents_are_the_text_tvm_ffi_writes(expr, doc):
    value = eval(expr, {"M": ffikit, "T": ffikit.testing})  # noqa: S307 - expressions of the table
    assert to_json_graph_str(value) == doc
    assert same_value(from_json_graph_str(doc), value)


def test_document_shape_and_post_order():
    doc = json.loads(to_json_graph_str(Array([derived(), "x"])))
    assert list(doc) == ["root_index", "nodes"]
    assert doc["root_index"] == len(doc["nodes"]) - 1
    for i, node in enumerate(doc["nodes"]):  # children come before their parents
        if node["type"] in ("ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict"):
            assert all(j < i for j in node["data"])
    obj = next(n for n in doc["nodes"] if n["type"] == "testing.TestObjectDerived")
    assert set(obj["data"]) == {"v_i64", "v_f64", "v_str", "v_map", "v_array"}
    assert obj["data"]["v_i64"] == 10 and obj["data"]["v_f64"] == 10.0  # POD fields inline


def test_sharing_is_kept():
    shared = List([1])
    back = round_trip(Array([shared, shared, List([1])]))
    assert back[0].same_as(back[1]) and not back[0].same_as(back[2])
    p = TestIntPair(1, 2)
    d = round_trip(derived(v_array=Array([p, p])))
    assert d.v_array[0].same_as(d.v_array[1])
    doc = json.loads(to_json_graph_str(Array(["s", "s", 1, 1])))
    assert len(doc["nodes"]) == 3  # equal strings and ints are one node each


def test_metadata():
    doc = to_json_graph_str([1, 2], {"x": 1, "tags": ["a", "b"], "nested": {"ok": True}})
    assert doc.endswith(',"metadata":{"x":1,"tags":["a","b"],"nested":{"ok":true}}}')
    value, meta = from_json_graph_str_with_metadata(doc)
    assert structural_equal(value, [1, 2])
    assert meta["x"] == 1 and list(meta["tags"]) == ["a", "b"] and meta["nested"]["ok"] is True
    assert from_json_graph_str_with_metadata(to_json_graph_str(1)) == (1, None)
    assert to_json_graph_str(1, None) == to_json_graph_str(1)
    with pytest.raises(TypeError):
        to_json_graph_str(1, {1: "int key"})
    with pytest.raises(TypeError):
        to_json_graph_str(1, [1, 2])


def test_documents_read_from_bytes_too():
    assert from_json_graph_str(to_json_graph_str([1]).encode()) == [1]
    with pytest.raises(TypeError, match="expects a str"):
        from_json_graph_str(123)


# ---- errors -----------------------------------------------------------------------------------


def test_what_the_format_cannot_hold_is_a_type_error():
    with pytest.raises(TypeError, match="cannot serialize"):
        to_json_graph_str(echo)
    with pytest.raises(TypeError, match="cannot serialize"):
        to_json_graph_str(Array([object()]))
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match="cannot serialize"):
        to_json_graph_str(Array([ffikit.from_dlpack(np.zeros(2, dtype="float32"))]))


def test_cycles_are_refused():
    lst = List([1])
    lst.append(lst)
    with pytest.raises(ValueError, match="Cycle detected"):
        to_json_graph_str(lst)
    d = Dict()
    d["self"] = d
    with pytest.raises(ValueError, match="Cycle detected"):
        to_json_graph_str(d)
    lst.clear()
    d.clear()


BAD_DOCS = [
    "", "not json", "[]", "{}", '{"root_index":0}', '{"root_index":0,"nodes":{}}', '{"root_index":"0","nodes":[]}',
    '{"root_index":1,"nodes":[{"type":"None"}]}', '{"root_index":-1,"nodes":[{"type":"None"}]}',
    '{"root_index":0,"nodes":[{"data":1}]}', '{"root_index":0,"nodes":[{"type":"int"}]}',
    '{"root_index":0,"nodes":[{"type":"int","data":"x"}]}', '{"root_index":0,"nodes":[{"type":"no.Such"}]}',
    '{"root_index":0,"nodes":[{"type":"ffi.Array","data":[0]}]}',  # a node reachable from itself
    '{"root_index":1,"nodes":[{"type":"int","data":1},{"type":"ffi.Map","data":[0]}]}',  # odd map data
    '{"root_index":0,"nodes":[{"type":"ffi.Array","data":[5]}]}',
    '{"root_index":0,"nodes":[{"type":"DataType","data":"float33x"}]}',
    '{"root_index":0,"nodes":[{"type":"Device","data":[1]}]}',
    '{"root_index":0,"nodes":[{"type":"ffi.Bytes","data":"!!"}]}',
    '{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"zz":2}}]}',
    '{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1}}]}',  # b has no default
    '{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":"x","b":2}}]}',
    '{"root_index":0,"nodes":[{"type":"int","data":1}]',  # truncated
]


@pytest.mark.parametrize("doc", BAD_DOCS)
def test_malformed_documents_are_value_errors(doc):
    with pytest.raises(ValueError, match="Invalid JSON Object Graph"):
        from_json_graph_str(doc)


def test_deep_documents_are_a_runtime_error():
    deep = Array([])
    for _ in range(1100):
        deep = Array([deep])
    with pytest.raises(RuntimeError):
        to_json_graph_str(deep)
    nodes = ['{"type":"None"}'] + [f'{{"type":"ffi.Array","data":[{i}]}}' for i in range(1100)]
    with pytest.raises(RuntimeError):
        from_json_graph_str(f'{{"root_index":1100,"nodes":[{",".join(nodes)}]}}')


def test_container_and_string_keys_read_under_both_names():
    assert from_json_graph_str('{"root_index":0,"nodes":[{"type":"ffikit.String","data":"s"}]}') == "s"
    back = from_json_graph_str('{"root_index":1,"nodes":[{"type":"int","data":1},{"type":"ffikit.Array","data":[0]}]}')
    assert isinstance(back, Array) and list(back) == [1]


# ---- Hypothesis -------------------------------------------------------------------------------

leaves = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=True)
          | st.text(max_size=6) | st.binary(max_size=6)
          | st.builds(TestIntPair, st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1)))


def containers(children):
    return (st.lists(children, max_size=4).map(Array) | st.lists(children, max_size=4).map(List)
            | st.dictionaries(st.text(max_size=3) | st.integers(-9, 9), children, max_size=4).map(Map)
            | st.dictionaries(st.text(max_size=3), children, max_size=4).map(Dict)
            | st.builds(lambda s, m, a: derived(v_str=s, v_map=m, v_array=a), st.text(max_size=4),
                        st.dictionaries(st.text(max_size=3), children, max_size=3).map(Map),
                        st.lists(children, max_size=3).map(Array)))


@given(st.recursive(leaves, containers, max_leaves=20))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_json_round_trip_is_structurally_equal(value):
    assert structural_equal(value, round_trip(value))
    assert to_json_graph_str(round_trip(value)) == to_json_graph_str(value)


@given(st.recursive(leaves, containers, max_leaves=20))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_pickle_round_trip_is_structurally_equal(value):
    assert structural_equal(value, pickle.loads(pickle.dumps(value)))


# ---- pickle -----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_of_objects_and_containers_holding_them(protocol):
    for value in (TestIntPair(1, 2), derived(v_map=Map({"p": TestIntPair(3, 4)})),
                  Array([TestIntPair(5, 6), derived()]), List([derived()]), Map({"k": TestObjectBase()}),
                  Dict({"k": TestIntPair(0, 0)})):
        back = pickle.loads(pickle.dumps(value, protocol=protocol))
        assert type(back) is type(value)
        assert structural_equal(back, value)


def test_pickle_keeps_sharing_inside_an_object():
    shared = List([1, 2])
    obj = derived(v_array=Array([shared, shared]))
    back = pickle.loads(pickle.dumps(obj))
    assert back.v_array[0].same_as(back.v_array[1])


def test_pickle_of_a_reflection_made_object_goes_through_its_fields_and_old_pickles_still_load():
    p = TestIntPair(1, 2)
    func, (first, nodes) = p.__reduce__()
    assert func is ffikit.container._rebuild  # the one graph encoder (ffikit/_pickle.py; container re-exports it)
    assert first.modules == ("ffikit.testing",)  # the class's module, imported first
    assert nodes == [(4, ("testing.TestIntPair", "ffikit.testing", [1, 2]))]
    u = ffikit.testing.make_unregistered_object()  # an auto-made class: no module to import
    first, nodes = u.__reduce__()[1]
    assert first.modules == () and nodes[0][1][1] is None
    # Pickles of the JSON graph format (made before objects pickled by fields) still load.
    old = ffikit._core._unpickle_object
    doc = to_json_graph_str(p)
    assert old(doc, "ffikit.testing").b == 2
    assert old(doc, "no_such_module_xyz").b == 2  # a module that does not import is skipped
    assert pickle.loads(pickle.dumps(p)).b == 2
    with pytest.raises(ValueError, match="Invalid JSON Object Graph"):
        old('{"root_index":0,"nodes":[{"type":"nosuch.T","data":{}}]}', None)


def test_unpickling_in_a_fresh_process_imports_the_class_module(tmp_path):
    dc = pytest.importorskip("ffikit.dataclasses", reason="ffikit.dataclasses (py_class) is not in this build")
    del dc
    (tmp_path / "pickled_types_mod.py").write_text(
        "import ffikit\nfrom ffikit.dataclasses import py_class\n\n"
        "@py_class('test_serialization.FreshNode')\nclass FreshNode(ffikit.Object):\n    x: int\n")
    code = ("import sys, pickle; sys.path.insert(0, sys.argv[1]); import pickled_types_mod as m; "
            "sys.stdout.buffer.write(pickle.dumps(m.FreshNode(7)))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    data = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, check=True, env=env).stdout
    code2 = "import sys, pickle; sys.path.insert(0, sys.argv[1]); o = pickle.loads(sys.stdin.buffer.read()); print(type(o).__name__, o.x)"
    out = subprocess.run([sys.executable, "-c", code2, str(tmp_path)], input=data, capture_output=True, env=env)
    assert out.stdout.decode().split() == ["FreshNode", "7"], out.stderr.decode()[-2000:]


def test_pickling_what_cannot_travel_is_a_clear_error():
    # Fields pickle themselves: a global Function by name, a tensor by value (test_pickle_graph.py).
    current = ffikit.get_global_func("testing.echo")  # not `echo`: a test may register testing.* again
    back = pickle.loads(pickle.dumps(derived(v_array=Array([current]))))
    assert back.v_array[0].same_as(current)
    np = pytest.importorskip("numpy")
    t = ffikit.from_dlpack(np.arange(2, dtype="float32"))
    assert list(np.from_dlpack(pickle.loads(pickle.dumps(derived(v_map=Map({"t": t})))).v_map["t"])) == [0.0, 1.0]
    # A Function that no global name maps to cannot travel, inside an object or alone.
    anonymous = ffikit.convert(lambda x: x)
    with pytest.raises(TypeError, match=r"cannot pickle Function `\S*<lambda>`: it is not registered as a global Function"):
        pickle.dumps(derived(v_array=Array([anonymous])))
    with pytest.raises(TypeError, match="cannot pickle Function"):
        pickle.dumps(anonymous)


# ---- py_class objects -------------------------------------------------------------------------


def _py_class_types():
    dc = pytest.importorskip("ffikit.dataclasses", reason="ffikit.dataclasses (py_class) is not in this build")

    @dc.py_class("test_serialization.Node")
    class Node(ffikit.Object):
        value: int
        name: str
        children: Array
        note: Optional[str] = dc.field(default=None, compare=False)

    return Node


def test_py_class_objects_round_trip_pickle_and_copy():
    import copy

    Node = _py_class_types()
    leaf = Node(1, "leaf", Array([]))
    tree = Node(0, "root", Array([leaf, leaf, Node(2, "b", Array([]), note="n")]))
    for back in (round_trip(tree), pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree)):
        assert type(back) is Node and structural_equal(back, tree)
        assert back.children[0].same_as(back.children[1])  # sharing kept
        assert back.children[2].note == "n"
    c = copy.copy(tree)
    assert type(c) is Node and c.children.same_as(tree.children)
    # compare-off fields are ignored by equality, written by serialization
    assert structural_equal(Node(1, "a", Array([]), note="x"), Node(1, "a", Array([]), note="y"))
    assert '"note"' in to_json_graph_str(tree)


# ---- tvm_ffi interop --------------------------------------------------------------------------

# The tvm_ffi side: run(request) -> response, executed in-process or in a subprocess. For each
# case (an expression over M = the library, T = its testing module) it reads the document
# ffikit wrote and says whether it holds the value tvm_ffi builds from the same expression
# (compared as tvm_ffi's own documents of both, which tvm_ffi writes deterministically), and
# returns tvm_ffi's document of that value for ffikit to read. It also answers the mismatch
# table of test_structural.py.
TVM_SIDE = r'''
def run(request):
    import tvm_ffi
    import tvm_ffi.testing
    from tvm_ffi.serialization import from_json_graph_str, to_json_graph_str
    ns = {"M": tvm_ffi, "T": tvm_ffi.testing}
    out = {"version": tvm_ffi.__version__, "cases": [], "mismatch": []}
    for expr, doc in request["cases"]:
        mine = eval(expr, dict(ns))
        try:
            got = from_json_graph_str(doc)
            same = to_json_graph_str(got) == to_json_graph_str(mine)
            err = None
        except Exception as e:
            same, err = False, f"{type(e).__name__}: {e}"
        out["cases"].append({"expr": expr, "reads": same, "error": err, "doc": to_json_graph_str(mine)})
    for lhs, rhs in request["mismatch"]:
        r = tvm_ffi.get_first_structural_mismatch(eval(lhs), eval(rhs))
        out["mismatch"].append(None if r is None else [str(r[0]), str(r[1])])
    return out
'''

INTEROP = [
    "None", "True", "False", "0", "-7", "2**63 - 1", "1.5", "-0.0", "float('nan')", "float('inf')",
    "''", "'héllo ☃ \"q\"'", "b''", "b'by\\x00\\xff'",
    "M.Array([])", "M.Array([1, 'a', None, 2.5])", "M.Array([M.Array([1]), M.Array([1])])",
    "M.List([1, M.List([2])])", "M.Map({'k': M.Array([1, 2]), 'n': None})", "M.Map({1: 'a', 2: 'b'})",
    "M.Dict({'a': 1})", "M.Shape((2, 3))", "M.Shape(())", "M.dtype('float32')", "M.dtype('bfloat16')",
    "M.dtype('int8x4')", "M.Device(2, 1)", "M.Device(1, 0)",
    "T.TestIntPair(1, 2)", "M.Array([T.TestIntPair(1, 2), T.TestIntPair(-3, 4)])",
    "T.TestObjectDerived(v_i64=5, v_str='s', v_map=M.Map({'a': 1}), v_array=M.Array([1, 2]))",
    "M.Map({'x': T.TestObjectDerived(v_map=M.Map({}), v_array=M.Array([T.TestIntPair(0, 0)]))})",
]


def _tvm_side():
    """run(request) of the tvm_ffi side, or None (the reason in _TVM_REASON)."""
    try:
        import tvm_ffi  # noqa: F401

        ns: dict = {}
        exec(TVM_SIDE, ns)  # noqa: S102 - the tvm_ffi side above
        return ns["run"]
    except ImportError:
        pass
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        return None

    def run(request):
        # The peer's own environment: no sanitizer runtime preloaded by an ASan run, no
        # PYTHONPATH pointing at this interpreter's packages.
        env = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
        proc = subprocess.run([py, "-c", TVM_SIDE + "\nimport json, sys\nprint(json.dumps(run(json.load(sys.stdin))))"],
                              input=json.dumps(request), capture_output=True, text=True, timeout=300, env=env)
        if proc.returncode != 0:
            raise AssertionError(f"the tvm_ffi side ({py}) failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout)

    return run


@pytest.fixture(scope="module")
def tvm_answers():
    run = _tvm_side()
    if run is None:
        pytest.skip("tvm_ffi interop: tvm_ffi does not import here and FFK_TVM_FFI_PYTHON (an interpreter with "
                    "apache-tvm-ffi) is not set")
    from test_structural import TVM_MISMATCH

    ns = {"M": ffikit, "T": ffikit.testing}
    cases = [[expr, to_json_graph_str(eval(expr, dict(ns)))] for expr in INTEROP]  # noqa: S307
    answer = run({"cases": cases, "mismatch": [[lhs, rhs] for lhs, rhs, _, _ in TVM_MISMATCH]})
    yield answer
    # the values built above are gone; nothing of tvm_ffi's is an ffikit object


def test_tvm_ffi_is_0_1_15(tvm_answers):
    assert tvm_answers["version"].startswith("0.1.15")


@pytest.mark.parametrize("i", range(len(INTEROP)), ids=INTEROP)
def test_tvm_ffi_reads_what_ffikit_writes(tvm_answers, i):
    case = tvm_answers["cases"][i]
    assert case["error"] is None, case["error"]
    assert case["reads"], f"tvm_ffi read {INTEROP[i]} as something else"


@pytest.mark.parametrize("i", range(len(INTEROP)), ids=INTEROP)
def test_ffikit_reads_what_tvm_ffi_writes(tvm_answers, i):
    expr = INTEROP[i]
    value = eval(expr, {"M": ffikit, "T": ffikit.testing})  # noqa: S307
    doc = tvm_answers["cases"][i]["doc"]
    back = from_json_graph_str(doc)
    assert same_value(back, value)
    assert to_json_graph_str(back) == to_json_graph_str(value)  # sharing read back as written


def test_tvm_ffi_mismatch_texts_are_the_recorded_ones(tvm_answers):
    from test_structural import TVM_MISMATCH

    assert tvm_answers["mismatch"] == [None if lp is None else [lp, rp] for _, _, lp, rp in TVM_MISMATCH]

