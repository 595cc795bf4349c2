"""The Python examples of tvm_ffi's documentation pages on structural equality
(docs/concepts/structural_eq_hash.rst) and dataclass reflection
(docs/guides/dataclass_reflection.rst), run unchanged on ffikit with ``tvm_ffi`` meaning
``ffikit``: ``import tvm_ffi``, ``from tvm_ffi import ...`` and ``from tvm_ffi.dataclasses
import ...`` find ffikit's modules.

Each case runs in a fresh module: a preamble of ours with the imports the page assumes,
the page's blocks in page order, and, where a block uses names the page leaves to the
reader (``root``, ``func``, ``x + 1``), short setup and check steps of ours around it.
Blocks are compiled with deferred annotations (Python 3.14's reading, which the pages
assume: ``Lambda`` names ``Var`` before it is defined). With FFK_TVM_FFI_PYTHON set, the
same cases run on tvm_ffi (each in a process of its own, since tvm_ffi refuses a type key
defined twice) and must end alike, with the same ``RESULT`` where a case records one.

Left out: the dataclass page's ``register_object("my_ext.Point")`` / ``c_class`` blocks,
which need the C++ types its C++ code registers (tvm_ffi cannot run them from Python
either); ``field(structural_eq="def-recursive")`` is not a value tvm_ffi 0.1.15 accepts,
and both libraries refuse it alike (the "def_recursive" case).
"""
from __future__ import annotations

import __future__
import json
import os
import subprocess
import sys
import types

import pytest

import ffikit
import ffikit.dataclasses
import ffikit.serialization

# Source: apache/tvm-ffi (commit 620fece9f8d8), docs/concepts/structural_eq_hash.rst and
# docs/guides/dataclass_reflection.rst, Apache-2.0: every ``.. code-block:: python`` block,
# verbatim, keyed by page and line.
UPSTREAM = {
    ("structural_eq_hash", 56): """\
@py_class
class Expr(Object):
    ...
""",
    ("structural_eq_hash", 99): """\
@py_class
class Add(Object):
    lhs: Expr
    rhs: Expr
""",
    ("structural_eq_hash", 167): """\
@py_class(structural_eq="const-tree")
class DeviceMesh(Object):
    shape: list[int]
    device_ids: list[int]
""",
    ("structural_eq_hash", 282): """\
@py_class(structural_eq="dag")
class Binding(Object):
    var: Var
    value: Expr
""",
    ("structural_eq_hash", 395): """\
@py_class(structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")   # alpha-equivalent vars differ in name
    type: Type                                  # participates in equality
""",
    ("structural_eq_hash", 564): """\
# With map_free_vars=True:
structural_equal(x + 1, y + 1, map_free_vars=True)   # → True

# With map_free_vars=False (default):
structural_equal(x + 1, y + 1)                        # → False
""",
    ("structural_eq_hash", 576): """\
@py_class(structural_eq="singleton")
class Op(Object):
    name: str
""",
    ("structural_eq_hash", 594): """\
op_conv = Op.get("nn.conv2d")
op_relu = Op.get("nn.relu")

structural_equal(op_conv, op_conv)   # → True  (same pointer)
structural_equal(op_conv, op_relu)   # → False (different pointers)
""",
    ("structural_eq_hash", 614): """\
@py_class(structural_eq="tree")
class MyNode(Object):
    value: int
    span: str = field(structural_eq="ignore")
""",
    ("structural_eq_hash", 635): """\
@py_class(structural_eq="tree")
class Lambda(Object):
    params: list[Var] = field(structural_eq="def-recursive")
    body: Expr
""",
    ("structural_eq_hash", 754): """\
@py_class(structural_eq="tree")
class Lambda(Object):
    params: list
    body: Any
    comment: str  # not part of identity, but also not iterated below

    def __s_equal__(self, other, eq_cb):
        # params is a definition region; body is not.
        if not eq_cb(self.params, other.params, True, "params"):
            return False
        if not eq_cb(self.body, other.body, False, "body"):
            return False
        return True

    def __s_hash__(self, init_hash, hash_cb):
        h = hash_cb(self.params, init_hash, True)
        h = hash_cb(self.body, h, False)
        return h
""",
    ("structural_eq_hash", 932): """\
@py_class(structural_eq="tree")
class Lambda(Object):
    params: list[Var] = field(structural_eq="def")
    body: Expr
    span: str = field(structural_eq="ignore", default="")

@py_class(structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")

@py_class(structural_eq="singleton")
class Op(Object):
    name: str
""",
    ("structural_eq_hash", 962): """\
from tvm_ffi import structural_equal, structural_hash

x, y = Var("x"), Var("y")
f1 = Lambda([x], x + 1, span="a.py:1")
f2 = Lambda([y], y + 1, span="b.py:5")

assert structural_equal(f1, f2)                   # alpha-equivalent
assert structural_hash(f1) == structural_hash(f2)  # same hash
""",
    ("structural_eq_hash", 992): """\
import tvm_ffi

visited = []

def on_int(value):
    visited.append(value)
    if value == 0:
        return tvm_ffi.VisitInterrupt(value)
    return tvm_ffi.WalkResult.ADVANCE

result = tvm_ffi.structural_walk(root, (int, on_int), order="pre")

if result is not None:
    print("stopped at", result.value)
""",
    ("structural_eq_hash", 1022): """\
numbers = []
strings = []

tvm_ffi.structural_walk(
    root,
    [
        ((int, float), lambda value: numbers.append(value)),
        (str, lambda value: strings.append(value)),
    ],
)
""",
    ("structural_eq_hash", 1045): """\
from typing import Any

seen = []
tvm_ffi.structural_walk(root, (Any, lambda value: seen.append(value)))
""",
    ("structural_eq_hash", 1056): """\
objects = []
leaves = []

tvm_ffi.structural_walk(
    root,
    [
        (tvm_ffi.Object, lambda value: objects.append(value)),
        (object, lambda value: leaves.append(value)),
    ],
)
""",
    ("structural_eq_hash", 1076): """\
uses = []

tvm_ffi.structural_walk(
    func,
    with_def_region_kind=(
        Var,
        lambda var, kind: (
            uses.append(var) if kind == tvm_ffi.DefRegionKind.NONE else None
        ),
    ),
)
""",
    ("structural_eq_hash", 1099): """\
trace = []

tvm_ffi.structural_walk(
    tvm_ffi.Array([tvm_ffi.Array([1]), 2]),
    [
        (tvm_ffi.Array, lambda value: trace.append(f"array:{len(value)}")),
        (int, lambda value: trace.append(f"int:{value}")),
    ],
    order="post",
)

assert trace == ["int:1", "array:1", "int:2", "array:2"]
""",
    ("dataclass_reflection", 66): """\
import tvm_ffi

@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    x: int
    y: int
    label: str

p1 = Point(1, 2)                # positional args
p2 = Point(1, 2, label="origin")  # keyword arg with default
""",
    ("dataclass_reflection", 125): """\
def __init__(self, batch_size, lr=0.001, *, device="cpu"):
    ...
# _cache is excluded from __init__ but initialized to Dict()
""",
    ("dataclass_reflection", 385): """\
from tvm_ffi.dataclasses import c_class

@c_class("my_ext.Point")
class Point(tvm_ffi.Object):
    x: int
    y: int
    label: str
""",
    ("dataclass_reflection", 407): """\
@c_class("my_ext.Point", frozen=True)
class Point(tvm_ffi.Object):
    x: int
    y: int
    label: str
""",
    ("dataclass_reflection", 440): """\
from tvm_ffi.dataclasses import IntEnum, StrEnum, entry

class Level(IntEnum, type_key="my_ext.Level"):
    low = entry(value=1)
    high = entry(value=2)

class Opcode(StrEnum, type_key="my_ext.Opcode"):
    add = entry(value="+")
    mul = entry(value="*")
""",
    ("dataclass_reflection", 462): """\
from tvm_ffi.serialization import from_json_graph_str, to_json_graph_str

data = to_json_graph_str(Opcode.add)
restored = from_json_graph_str(data)

assert restored.same_as(Opcode.add)
""",
    ("dataclass_reflection", 526): """\
# Generated signature:
# def __init__(self, parent_required, child_required, parent_default=5, *, child_kw_only):
child = Child(1, 2, child_kw_only=3)
assert child.parent_required == 1
assert child.child_required == 2
assert child.parent_default == 5    # uses default
assert child.child_kw_only == 3
""",
}

_PRE = ("from typing import Any\nimport tvm_ffi\nfrom tvm_ffi import Object, structural_equal, structural_hash\n"
        "from tvm_ffi.dataclasses import py_class, field\n")
_TYPE = "@py_class\nclass Type(Object):\n    pass\n"
_POINT = ("@py_class('my_ext.Point')\nclass _PointDef(Object):\n    x: int\n    y: int\n    label: str = ''\n")


def S(line: int) -> tuple[str, str]:
    return ("up", UPSTREAM[("structural_eq_hash", line)])


def D(line: int) -> tuple[str, str]:
    return ("up", UPSTREAM[("dataclass_reflection", line)])


def O(text: str) -> tuple[str, str]:  # noqa: E743 - a step of ours
    return ("ours", text)


_EXPR_ADD_VAR = O("""\
@py_class
class Expr(Object):
    def __add__(self, other):
        return Add(self, other)

@py_class
class Add(Expr):
    lhs: Any
    rhs: Any

@py_class(structural_eq='var')
class Var(Expr):
    name: str = field(structural_eq='ignore')

x, y = Var('x'), Var('y')
""")

# name -> (steps, whether it runs on tvm_ffi 0.1.15, what it needs from ffikit or None)
CASES: dict[str, tuple[list[tuple[str, str]], bool, str | None]] = {
    "expr": ([O(_PRE), S(56)], True, None),
    "add": ([O(_PRE), S(56), S(99)], True, None),
    "const_tree": ([O(_PRE), S(167), O("m = DeviceMesh([2], [0, 1])\nassert structural_equal(m, m)\n"
                                         "RESULT = structural_equal(m, DeviceMesh([2], [0, 1]))\n")], True, None),
    "var": ([O(_PRE), O(_TYPE), S(395)], True, None),
    "dag": ([O(_PRE), S(56), O(_TYPE), S(395), S(282)], True, None),
    "free_vars": ([O(_PRE), _EXPR_ADD_VAR, S(564),
                   O("RESULT = [structural_equal(x + 1, y + 1, map_free_vars=True), structural_equal(x + 1, y + 1)]\n")],
                  True, None),
    "singleton": ([O(_PRE), S(576)], True, None),
    "singleton_get": ([O(_PRE), S(576), O("""\
_ops = {}
def _get(name):
    if name not in _ops:
        _ops[name] = Op(name)
    return _ops[name]
Op.get = staticmethod(_get)
"""), S(594), O("RESULT = [structural_equal(op_conv, op_conv), structural_equal(op_conv, op_relu), "
                "structural_equal(Op('a'), Op('a'))]\n")], True, None),
    "ignore": ([O(_PRE), S(614), O("RESULT = structural_equal(MyNode(1, 'a'), MyNode(1, 'b'))\n")], True, None),
    "def_recursive": ([O(_PRE), S(56), O(_TYPE), S(395), S(635)], False, None),
    "hooks": ([O(_PRE), S(754), O("""\
a, b, c = Lambda([1], 2, 'x'), Lambda([1], 2, 'y'), Lambda([1], 3, 'x')
RESULT = [structural_equal(a, b), structural_equal(a, c),
          structural_hash(a) == structural_hash(b), structural_hash(a) == structural_hash(c)]
""")], True, None),
    "hooks_bind_variables": ([O(_PRE), _EXPR_ADD_VAR, S(754), O("""\
a, b, c = Lambda([x], x + 1, 'a'), Lambda([y], y + 1, 'b'), Lambda([y], x + 1, 'c')
RESULT = [structural_equal(a, b), structural_hash(a) == structural_hash(b), structural_equal(a, c),
          structural_hash(a) == structural_hash(c), str(tvm_ffi.get_first_structural_mismatch(a, c))]
""")], True, None),
    "alpha_equivalence": ([O(_PRE), O("Expr = Object\n"), S(932), O("""\
@py_class
class Add(Object):
    lhs: Any
    rhs: Any

Var.__add__ = lambda self, other: Add(self, other)
"""), S(962), O("RESULT = structural_equal(f1, Lambda([y], x + 1))\n")], True, None),
    "walk_interrupt": ([O(_PRE), O("root = tvm_ffi.Array([3, tvm_ffi.Array([2, 0, 5]), 7])\n"), S(992),
                        O("RESULT = [visited, result.value]\n")], True, None),
    "walk_types": ([O(_PRE), O("root = tvm_ffi.Array([1, 'a', tvm_ffi.Map({'k': 2.5})])\n"), S(1022),
                    O("RESULT = [sorted(numbers), sorted(strings)]\n")], True, None),
    "walk_any": ([O(_PRE), O("root = tvm_ffi.Array([1, 'a'])\n"), S(1045), O("RESULT = [len(seen), seen[1:]]\n")],
                 True, None),
    "walk_objects": ([O(_PRE), O("root = tvm_ffi.Array([1, tvm_ffi.Array([2])])\n"), S(1056),
                      O("RESULT = [len(objects), leaves]\n")], True, None),
    "walk_def_region": ([O(_PRE), S(932), O("""\
Expr = Object

@py_class
class Add(Object):
    lhs: Any
    rhs: Any

x = Var('x')
func = Lambda([x], Add(x, 1))
"""), S(1076), O("RESULT = [len(uses), uses[0].same_as(x)]\n")], True, None),
    "walk_post_order": ([O(_PRE), S(1099), O("RESULT = trace\n")], True, None),
    "init_signature": ([O(_PRE), D(125)], True, None),
    "enum": ([O(_PRE), D(440)], True, "Enum"),
    "enum_json": ([O(_PRE), D(440), D(462)], True, "Enum"),
    "inherited_init_order": ([O(_PRE), O("""\
@py_class('my_ext.Parent')
class Parent(Object):
    parent_required: int
    parent_default: int = 5

@py_class('my_ext.Child')
class Child(Parent):
    child_required: int
    child_kw_only: int = field(kw_only=True)
"""), D(526)], True, None),
}


def run_case(name: str, steps: list[tuple[str, str]]) -> tuple[str, object]:
    """Runs a case's steps in a fresh module: ("ok", RESULT or None), or
    ("<step>:<kind>:<exception type>", message)."""
    module = types.ModuleType(f"tvm_docs_{name}")
    sys.modules[module.__name__] = module
    try:
        for i, (kind, text) in enumerate(steps):
            try:
                code = compile(text, f"<{name} step {i} ({kind})>", "exec", __future__.annotations.compiler_flag,
                               dont_inherit=True)
                exec(code, module.__dict__)  # noqa: S102 - the examples are this test's input
            except Exception as e:  # noqa: BLE001 - the outcome is what the test compares
                return f"{i}:{kind}:{type(e).__name__}", str(e)
        result = module.__dict__.get("RESULT")
        return "ok", json.loads(json.dumps(result, default=repr))  # plain values: no ffikit object outlives the case
    finally:
        del sys.modules[module.__name__]
        module.__dict__.clear()  # the classes stay registered (and reachable); what the case made goes


@pytest.fixture
def tvm_ffi_is_ffikit(monkeypatch):
    monkeypatch.setitem(sys.modules, "tvm_ffi", ffikit)
    monkeypatch.setitem(sys.modules, "tvm_ffi.dataclasses", ffikit.dataclasses)
    monkeypatch.setitem(sys.modules, "tvm_ffi.serialization", ffikit.serialization)


def _needs(what: str | None) -> None:
    if what == "Enum" and not hasattr(ffikit.dataclasses, "Enum"):
        pytest.skip("ffikit.dataclasses has no Enum / IntEnum / StrEnum / entry yet (issue 36's enum work)")


@pytest.mark.parametrize("name", [n for n, (_, runs, _) in CASES.items() if runs])
def test_example_runs_on_ffikit(name, tvm_ffi_is_ffikit):
    steps, _, needs = CASES[name]
    _needs(needs)
    status, detail = run_case(name, steps)
    assert status == "ok", f"{name}: {status}: {detail}"


def test_def_recursive_is_refused_as_tvm_ffi_refuses_it(tvm_ffi_is_ffikit):
    status, detail = run_case("def_recursive", CASES["def_recursive"][0])
    assert status == "4:up:ValueError" and "def-recursive" in str(detail)


_TVM_RUNNER = r"""
import __future__, json, sys, types
cases = json.loads(sys.stdin.read())
name = sys.argv[1]
module = types.ModuleType("tvm_docs_" + name)
sys.modules[module.__name__] = module
status, result = "ok", None
for i, (kind, text) in enumerate(cases[name]):
    try:
        exec(compile(text, "<%s step %d>" % (name, i), "exec", __future__.annotations.compiler_flag, dont_inherit=True),
             module.__dict__)
    except Exception as e:
        status, result = "%d:%s:%s" % (i, kind, type(e).__name__), str(e)
        break
else:
    result = module.__dict__.get("RESULT")
print(json.dumps([status, result], default=repr))
"""


def test_cases_end_alike_on_tvm_ffi(tvm_ffi_is_ffikit):
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        pytest.skip("tvm_ffi interop: FFK_TVM_FFI_PYTHON (an interpreter with apache-tvm-ffi) is not set")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
    payload = json.dumps({n: steps for n, (steps, _, _) in CASES.items()})
    for name, (steps, runs, needs) in CASES.items():
        proc = subprocess.run([py, "-c", _TVM_RUNNER, name], input=payload, capture_output=True, text=True,
                              timeout=120, env=env)
        assert proc.returncode == 0, f"{name}: the tvm_ffi side failed:\n{proc.stderr[-2000:]}"
        theirs = json.loads(proc.stdout.strip().splitlines()[-1])
        assert (theirs[0] == "ok") == runs, f"{name} on tvm_ffi: {theirs}"
        if needs == "Enum" and not hasattr(ffikit.dataclasses, "Enum"):
            continue
        status, result = run_case(name, steps)
        ours = [status, result if status == "ok" else None]
        if theirs[0] != "ok":
            theirs[1] = None  # messages differ in wording; the step and exception type must agree
        assert ours == theirs, f"{name}: ffikit {ours}, tvm_ffi {theirs}"
