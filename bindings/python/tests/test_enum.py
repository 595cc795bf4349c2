"""Enums (ffikit.dataclasses.Enum, IntEnum, StrEnum, entry, auto, EnumAttrMap, EnumState over
C's ffikit/enum.h): tvm_ffi 0.1.15's behaviour checklist (its tests/python/test_dataclass_enum.py,
adapted), pickle, threads, and a differential run of one program on ffikit and on tvm_ffi
(the interpreter named by FFK_TVM_FFI_PYTHON) comparing lookups, iteration, attributes, repr,
the types of errors and the JSON graph text, read back on the other side in both directions.
"""
from __future__ import annotations

import copy
import itertools
import json
import os
import pickle
import subprocess
import threading
from typing import Any, ClassVar

import pytest

import ffikit
from ffikit import Object
from ffikit import _core
from ffikit._enum import ENUM_STATE_ATTR, _EnumEntry
from ffikit.dataclasses import Enum, EnumAttrMap, EnumState, IntEnum, StrEnum, auto, entry, py_class
from ffikit.serialization import from_json_graph_str, to_json_graph_str
from ffikit.testing import _TestCxxEnumHolder, _TestCxxIntEnum, _TestCxxStrEnum

_counter = itertools.count()
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _key(name: str) -> str:
    return f"testing.py_enum.{name}.{next(_counter)}"


def _state(cls: type) -> Any:
    return _core._type_get_attr(cls.__tvm_ffi_type_info__.type_index, ENUM_STATE_ATTR)  # type: ignore[attr-defined]


def _assert_json_roundtrip(member: Any, data: int | str) -> None:
    encoded = to_json_graph_str(member)
    graph = json.loads(encoded)
    assert graph["nodes"][graph["root_index"]]["data"] == data
    assert from_json_graph_str(encoded).same_as(member)


# ---- tvm_ffi's checklist ------------------------------------------------------------------


def test_plain_enum_indices_fields_and_order() -> None:
    class Activation(Enum, type_key=_key("Activation")):
        arity: int = 0
        relu: ClassVar[Activation] = entry(arity=1)
        add = entry(arity=2)
        noop = auto()

    assert (Activation.relu._int_index, Activation.relu._str_index) == (0, "relu")
    assert (Activation.add._int_index, Activation.add._str_index) == (1, "add")
    assert Activation.relu.arity == 1
    assert Activation.noop.arity == 0
    assert list(Activation) == [Activation.relu, Activation.add, Activation.noop]
    assert len(Activation) == 3
    assert Activation.get(0).same_as(Activation.relu)
    assert Activation.get("relu").same_as(Activation.relu)
    assert Activation(1).same_as(Activation.add)
    assert Activation("add").same_as(Activation.add)
    assert Activation(Activation.add) is Activation.add
    assert list(Activation.all_entries()) == list(Activation)
    with pytest.raises(AttributeError):
        Activation.relu.arity = 3  # type: ignore[misc]


def test_bare_classvar_and_entry_sentinels() -> None:
    class Status(Enum, type_key=_key("Status")):
        ready: ClassVar[Status]
        failed: ClassVar[Status]

    assert list(Status) == [Status.ready, Status.failed]
    assert Status.ready._str_index == "ready"
    assert Status.failed._int_index == 1
    first, second = auto(), entry(code=2)
    assert isinstance(first, _EnumEntry) and isinstance(second, _EnumEntry)
    assert first is not second
    assert repr(second) == "entry(code=2)"


def test_int_enum_uses_full_signed_int64_indices() -> None:
    class Limit(IntEnum, type_key=_key("Limit")):
        MIN = _INT64_MIN
        MAX = _INT64_MAX

    assert Limit.MIN.value == Limit.MIN._int_index == _INT64_MIN
    assert Limit.MAX.value == Limit.MAX._int_index == _INT64_MAX
    assert Limit.MIN.name == Limit.MIN._str_index == "MIN"
    assert Limit(_INT64_MIN).same_as(Limit.MIN)
    assert Limit("MIN").same_as(Limit.MIN)
    assert Limit.get("MAX").same_as(Limit.MAX)
    assert list(Limit) == [Limit.MIN, Limit.MAX]
    for value in (_INT64_MIN - 1, _INT64_MAX + 1):
        with pytest.raises(OverflowError):
            Limit(value)
        with pytest.raises(OverflowError):
            Limit.get(value)


def test_str_enum_name_and_value_are_string_index_aliases() -> None:
    class MemSpace(StrEnum, type_key=_key("MemSpace")):
        SMEM = "smem"
        GMEM = "gmem"

    assert MemSpace.SMEM._str_index == MemSpace.SMEM.name == MemSpace.SMEM.value == "smem"
    assert MemSpace("smem").same_as(MemSpace.SMEM)
    assert MemSpace.get(0).same_as(MemSpace.SMEM)
    assert repr(MemSpace.SMEM) == "MemSpace.smem"
    assert str(MemSpace.SMEM) == "smem"
    assert MemSpace.SMEM == "smem"
    with pytest.raises(ValueError):
        MemSpace("SMEM")
    with pytest.raises(KeyError):
        MemSpace.get("SMEM")


def test_multiple_class_aliases_share_one_canonical_variant() -> None:
    class Opcode(StrEnum, type_key=_key("OpcodeAlias")):
        PLUS = "+"
        ADD = "+"

    assert Opcode.PLUS.same_as(Opcode.ADD)
    assert list(Opcode) == [Opcode.PLUS]


def test_payload_behavior_and_custom_repr() -> None:
    class Priority(IntEnum, type_key=_key("Priority")):
        LOW = 1
        HIGH = 10

        def __repr__(self) -> str:
            return f"Priority({self.value})"

    assert Priority.LOW == 1
    assert Priority.LOW != 10
    assert hash(Priority.HIGH) == hash(10)
    assert str(Priority.HIGH) == "10"
    assert repr(Priority.HIGH) == "Priority(10)"


def test_enum_has_exactly_one_registry_typeattr() -> None:
    class Flag(Enum, type_key=_key("State")):
        OFF = auto()
        ON = auto()

    state = _state(Flag)
    assert isinstance(state, EnumState)
    assert {f.name for f in ffikit.dataclasses.fields(state)} == {"entries", "indexes", "attrs"}
    assert list(state.entries) == [Flag.OFF, Flag.ON]
    assert state.indexes[0].same_as(Flag.OFF)
    assert state.indexes["ON"].same_as(Flag.ON)
    assert repr(EnumState()) == "ffi.EnumState(entries=[], indexes={}, attrs={})"


def test_extensible_attrs_are_singleton_keyed() -> None:
    class Limit(IntEnum, type_key=_key("Attrs")):
        MIN = _INT64_MIN
        MAX = _INT64_MAX

    cost = Limit.def_attr("cost", default=-1)
    assert isinstance(cost, EnumAttrMap) and cost.name == "cost"
    assert cost[Limit.MIN] == -1
    assert Limit.MIN not in cost
    cost[Limit.MIN] = None
    cost[Limit.MAX] = 7
    assert Limit.MIN in cost
    assert cost[Limit.MIN] is None
    assert cost.get(Limit.MAX) == 7
    column = _state(Limit).attrs["cost"]
    assert column[Limit.MIN] is None
    assert column[Limit.MAX] == 7
    assert Limit.attr_dict["cost"][Limit.MAX] == 7


def test_extensible_attrs_validate_variant_type() -> None:
    class Left(Enum, type_key=_key("Left")):
        ONE = auto()

    class Right(Enum, type_key=_key("Right")):
        ONE = auto()

    attr = Left.def_attr("x")
    with pytest.raises(TypeError):
        attr[Right.ONE] = 1
    with pytest.raises(KeyError):
        _ = attr[Left.ONE]
    assert attr.get(Left.ONE, 3) == 3
    assert Right.ONE not in attr


def test_json_roundtrips_use_canonical_indices() -> None:
    class Status(Enum, type_key=_key("JsonStatus")):
        READY = auto()

    class Priority(IntEnum, type_key=_key("JsonPriority")):
        LOW = -9

    class Opcode(StrEnum, type_key=_key("JsonOpcode")):
        ADD = "+"

    _assert_json_roundtrip(Status.READY, "READY")
    _assert_json_roundtrip(Priority.LOW, -9)
    _assert_json_roundtrip(Opcode.ADD, "+")


def test_enum_fields_json_roundtrip_to_same_singletons() -> None:
    class Priority(IntEnum, type_key=_key("HolderPriority")):
        MIN = _INT64_MIN
        MAX = _INT64_MAX

    class Opcode(StrEnum, type_key=_key("HolderOpcode")):
        ADD = "+"
        MUL = "*"

    @py_class(_key("Holder"))
    class Holder(Object):
        priority: Priority
        opcode: Opcode

    holder = Holder(priority=_INT64_MIN, opcode="*")  # type: ignore[arg-type]
    assert holder.priority.same_as(Priority.MIN)
    assert holder.opcode.same_as(Opcode.MUL)
    restored = from_json_graph_str(to_json_graph_str(holder))
    assert restored.priority.same_as(Priority.MIN)
    assert restored.opcode.same_as(Opcode.MUL)
    assert ffikit.structural_equal(holder, restored)
    # Outside int64 the int does not reach C: ffikit's OverflowError for every int argument
    # (tvm_ffi raises TypeError "... out of int64 range"; docs/python-api.md, compatibility).
    for value in (_INT64_MIN - 1, _INT64_MAX + 1):
        with pytest.raises((TypeError, OverflowError)):
            Holder(priority=value, opcode="+")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Holder(priority=5, opcode="+")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Holder(priority=Priority.MIN, opcode="-")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Holder(priority="MIN", opcode="+")  # type: ignore[arg-type]


def test_structural_semantics_are_singleton_based() -> None:
    class Status(Enum, type_key=_key("Structural")):
        READY = auto()
        DONE = auto()

    duplicate = copy.copy(Status.READY)
    assert not duplicate.same_as(Status.READY)
    assert ffikit.structural_equal(Status.READY, Status.READY)
    assert not ffikit.structural_equal(Status.READY, duplicate)
    assert not ffikit.structural_equal(Status.READY, Status.DONE)
    assert ffikit.structural_hash(Status.READY) == ffikit.structural_hash(Status.READY)
    assert copy.deepcopy(Status.READY).same_as(Status.READY)
    deep = copy.deepcopy(ffikit.List([Status.READY, Status.DONE]))
    assert deep[0].same_as(Status.READY) and deep[1].same_as(Status.DONE)


def test_payload_value_field_is_reserved() -> None:
    with pytest.raises(TypeError, match="reserves `value`"):
        class BadInt(IntEnum, type_key=_key("BadInt")):
            value: int  # type: ignore[assignment]
            ONE = 1

    with pytest.raises(TypeError, match="reserves `value`"):
        class BadStr(StrEnum, type_key=_key("BadStr")):
            value: str  # type: ignore[assignment]
            ONE = "one"


def test_payload_literals_are_type_checked() -> None:
    with pytest.raises(TypeError):
        class BadInt(IntEnum, type_key=_key("BadIntLiteral")):
            BAD = "bad"

    with pytest.raises(TypeError):
        class BadStr(StrEnum, type_key=_key("BadStrLiteral")):
            BAD = 1


def test_a_taken_int_index_is_an_alias() -> None:
    class Dup(IntEnum, type_key=_key("Dup")):
        A = 1
        C = entry(value=1)  # the lookup index of an IntEnum is its int: C names A's member

    assert Dup.C.same_as(Dup.A)
    assert list(Dup) == [Dup.A]


def test_c_refuses_a_taken_index() -> None:
    class Twice(Enum, type_key=_key("Twice")):
        A = auto()

    index = Twice.__tvm_ffi_type_info__.type_index  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Duplicate enum index"):
        _core._enum_add(index, "A", None)
    with pytest.raises(ValueError, match="Duplicate enum index"):
        _core._enum_register(index, Twice(_int_index=0, _str_index="Z"))
    assert len(Twice) == 1


def test_c_registered_plain_enum_shares_state_and_attrs() -> None:
    class Variant(Enum, type_key="testing.TestEnumVariant"):
        Alpha: ClassVar[Variant]
        Beta: ClassVar[Variant]

    c_get = ffikit.get_global_func("testing.enum_variant_get")
    assert c_get("Alpha").same_as(Variant.Alpha)
    assert c_get("Beta").same_as(Variant.Beta)
    assert Variant.get(0).same_as(Variant.Alpha)
    assert Variant.get("Beta").same_as(Variant.Beta)
    assert Variant.attr_dict["code"][Variant.Alpha] == 10
    assert Variant.attr_dict["code"][Variant.Beta] == 20
    assert Variant.def_attr("code")[Variant.Beta] == 20
    assert isinstance(_state(Variant), EnumState)
    with pytest.raises(ValueError):
        c_get("missing")


def test_c_backed_binder_must_use_canonical_string_index() -> None:
    with pytest.raises(RuntimeError, match="string index"):
        class Typo(Enum, type_key="testing.TestEnumVariant"):
            Missing: ClassVar[Typo]


def test_c_backed_payload_enums_and_converters() -> None:
    assert _TestCxxIntEnum.high.value == 20
    assert _TestCxxIntEnum.high.name == "high"
    assert _TestCxxStrEnum.mul.value == _TestCxxStrEnum.mul.name == "*"
    assert _TestCxxIntEnum(20).same_as(_TestCxxIntEnum.high)
    assert _TestCxxStrEnum("*").same_as(_TestCxxStrEnum.mul)
    holder = _TestCxxEnumHolder(priority=20, opcode="*")
    assert holder.priority.same_as(_TestCxxIntEnum.high)
    assert holder.opcode.same_as(_TestCxxStrEnum.mul)
    holder.priority = 10  # type: ignore[assignment]
    assert holder.priority.same_as(_TestCxxIntEnum.low)
    restored = from_json_graph_str(to_json_graph_str(holder))
    assert restored.priority.same_as(_TestCxxIntEnum.low)
    assert restored.opcode.same_as(_TestCxxStrEnum.mul)


def test_plain_default_repr_uses_string_index() -> None:
    type_key = _key("Repr")

    class Status(Enum, type_key=type_key):
        READY = auto()

    assert repr(Status.READY) == f"{type_key}.READY"
    assert str(Status.READY) == f"{type_key}.READY"


# ---- beyond the checklist ------------------------------------------------------------------


def test_lookup_errors() -> None:
    class Color(Enum, type_key=_key("Errors")):
        RED = auto()

    with pytest.raises(KeyError):
        Color.get("BLUE")
    with pytest.raises(KeyError):
        Color.get(7)
    with pytest.raises(TypeError, match="must be int or str"):
        Color.get(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a valid Color"):
        Color("BLUE")
    assert Color.get(False).same_as(Color.RED)  # a bool is its int


def test_json_graph_errors_name_the_enum() -> None:
    class Color(Enum, type_key=_key("JsonErr")):
        RED = auto()

    key = Color.__tvm_ffi_type_info__.type_key  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="has no instance with index BLUE"):
        from_json_graph_str(json.dumps({"root_index": 0, "nodes": [{"type": key, "data": "BLUE"}]}))
    with pytest.raises(TypeError):
        from_json_graph_str(json.dumps({"root_index": 0, "nodes": [{"type": key, "data": 0}]}))


def test_pickle_keeps_singletons() -> None:
    for member in (_TestCxxIntEnum.low, _TestCxxStrEnum.add):
        assert pickle.loads(pickle.dumps(member)).same_as(member)
    holder = _TestCxxEnumHolder(priority=10, opcode="+")
    back = pickle.loads(pickle.dumps(ffikit.List([holder, _TestCxxIntEnum.high, holder])))
    assert back[0].priority.same_as(_TestCxxIntEnum.low)
    assert back[0].opcode.same_as(_TestCxxStrEnum.add)
    assert back[1].same_as(_TestCxxIntEnum.high)
    assert back[0].same_as(back[2])


def test_members_are_seen_from_c() -> None:
    class Shape(Enum, type_key=_key("FromC")):
        ROUND = auto()
        SQUARE = auto()

    index = Shape.__tvm_ffi_type_info__.type_index  # type: ignore[attr-defined]
    assert _core._enum_count(index) == 2
    assert [m.same_as(e) for m, e in zip(_core._enum_members(index), [Shape.ROUND, Shape.SQUARE])] == [True, True]
    added = _core._enum_add(index, "OVAL", None)  # a member made in C shows in Python
    assert added._int_index == 2 and Shape.get("OVAL").same_as(added)
    assert list(Shape)[-1].same_as(added)


def test_concurrent_lookups_and_attribute_writes() -> None:
    class Level(IntEnum, type_key=_key("Threads")):
        A = 1
        B = 2

    cost = Level.def_attr("cost")
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(300):
                assert Level.get(1).same_as(Level.A)
                assert Level("B").same_as(Level.B)
                cost[Level.A if i % 2 else Level.B] = k
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cost[Level.A] in range(4)


# ---- the differential run against tvm_ffi ---------------------------------------------------

# One program for both libraries: M is ffikit or tvm_ffi; `texts` the other side's JSON graphs.
PROGRAM = r'''
def run(M, texts):
    import copy
    from typing import ClassVar
    D, S = M.dataclasses, M.serialization

    class Color(D.Enum, type_key="enumdiff.Color"):
        weight: int = 0
        RED = D.auto()
        GREEN = D.entry(weight=5)
        BLUE: ClassVar["Color"]

    class Level(D.IntEnum, type_key="enumdiff.Level"):
        LOW = -3
        HIGH = 1 << 40

    class Op(D.StrEnum, type_key="enumdiff.Op"):
        ADD = "+"
        MUL = "*"
        PLUS = "+"

    class Variant(D.Enum, type_key="testing.TestEnumVariant"):
        Alpha: ClassVar["Variant"]
        Beta: ClassVar["Variant"]

    @D.py_class("enumdiff.Holder")
    class Holder(M.Object):
        color: Color
        level: Level
        op: Op

    def outcome(f):
        try:
            r = f()
        except Exception as e:
            return ["error", type(e).__name__]
        if isinstance(r, M.Object):
            return ["ok", repr(r)]
        return ["ok", r]

    out = {}
    out["iter"] = [repr(m) for m in Color] + [repr(m) for m in Level] + [repr(m) for m in Op]
    out["len"] = [len(Color), len(Level), len(Op), len(Variant)]
    out["lookup"] = [
        Color.get(0).same_as(Color.RED), Color.get("GREEN").same_as(Color.GREEN), Color(2).same_as(Color.BLUE),
        Color("BLUE").same_as(Color.BLUE), Level(1 << 40).same_as(Level.HIGH), Level.get("LOW").same_as(Level.LOW),
        Op("*").same_as(Op.MUL), Op.get(1).same_as(Op.MUL), Op.PLUS.same_as(Op.ADD), Color(Color.RED).same_as(Color.RED),
        Variant.get("Beta").same_as(Variant.Beta), Variant(0).same_as(Variant.Alpha),
        M.get_global_func("testing.enum_variant_get")("Alpha").same_as(Variant.Alpha),
    ]
    out["fields"] = [Color.RED.weight, Color.GREEN.weight, Color.BLUE.weight, Color.BLUE._int_index,
                     Color.BLUE._str_index, Level.LOW.value, Level.LOW.name, Level.HIGH._int_index,
                     Op.MUL.value, Op.MUL.name, Op.MUL._int_index]
    out["repr"] = [repr(Color.RED), str(Color.RED), repr(Level.LOW), str(Level.LOW), repr(Op.ADD), str(Op.ADD),
                   repr(Variant.Beta), repr(Holder(color=Color.GREEN, level=-3, op="*"))]
    out["eq"] = [Level.LOW == -3, Level.LOW != -3, Op.ADD == "+", Color.RED == Color.RED, Color.RED == Color.GREEN,
                 hash(Level.LOW) == hash(-3), hash(Op.MUL) == hash("*"), Level.LOW == Level.LOW]
    cost = Color.def_attr("cost", default=-1)
    cost[Color.RED] = 7
    cost[Color.BLUE] = None
    out["attrs"] = [cost[Color.RED], cost[Color.GREEN], cost[Color.BLUE], Color.RED in cost, Color.GREEN in cost,
                    cost.get(Color.GREEN, 3), cost.get(Color.RED), cost.name, Color.attr_dict["cost"][Color.RED],
                    len(Color.attr_dict), Variant.attr_dict["code"][Variant.Alpha],
                    Variant.def_attr("code")[Variant.Beta], Level.LOW in cost]
    out["errors"] = [
        outcome(lambda: Color.get("nope")), outcome(lambda: Color("nope")), outcome(lambda: Color.get(1.5)),
        outcome(lambda: Level(1 << 63)), outcome(lambda: Level.get(5)), outcome(lambda: Level(5)),
        outcome(lambda: Op("-")), outcome(lambda: Op.get("ADD")),
        outcome(lambda: Holder(color=Color.RED, level=99, op="+")),
        outcome(lambda: Holder(color=Color.RED, level=-3, op="-")),
        outcome(lambda: Holder(color=Color.RED, level="LOW", op="+")),
        outcome(lambda: Holder(color="RED", level=-3, op="+")),
        outcome(lambda: Color.def_attr("missing")[Color.RED]),
        outcome(lambda: cost.__setitem__(Level.LOW, 1)),
        outcome(lambda: M.get_global_func("testing.enum_variant_get")("missing")),
        outcome(lambda: S.from_json_graph_str('{"root_index":0,"nodes":[{"type":"enumdiff.Color","data":"NOPE"}]}')),
        outcome(lambda: S.from_json_graph_str('{"root_index":0,"nodes":[{"type":"enumdiff.Level","data":5}]}')),
        outcome(lambda: S.from_json_graph_str('{"root_index":0,"nodes":[{"type":"enumdiff.Color","data":1}]}')),
        outcome(lambda: S.from_json_graph_str('{"root_index":0,"nodes":[{"type":"enumdiff.Level","data":"LOW"}]}')),
    ]

    def define(body):
        try:
            exec(body, {"D": D, "ClassVar": ClassVar})
        except Exception as e:
            return type(e).__name__
        return "ok"

    out["definitions"] = [
        define("class A(D.IntEnum, type_key='enumdiff.BadA'):\n    value: int\n    ONE = 1\n"),
        define("class B(D.IntEnum, type_key='enumdiff.BadB'):\n    BAD = 'x'\n"),
        define("class C(D.StrEnum, type_key='enumdiff.BadC'):\n    BAD = 1\n"),
        define("class E(D.IntEnum, type_key='enumdiff.BadE'):\n    X: ClassVar['E']\n"),
        define("class F(D.Enum, type_key='testing.TestEnumVariant'):\n    Gamma: ClassVar['F']\n"),
        define("class G(D.IntEnum, type_key='enumdiff.BadG'):\n    A = 1\n    B = D.entry(value=1, x=2)\n"),
        define("class H(D.Enum, type_key='enumdiff.BadH'):\n    A = D.entry(_int_index=3)\n"),
    ]
    out["structural"] = [M.structural_equal(Color.RED, Color.RED), M.structural_equal(Color.RED, Color.GREEN),
                         M.structural_equal(Color.RED, copy.copy(Color.RED)),
                         copy.deepcopy(Color.RED).same_as(Color.RED), copy.copy(Color.RED).same_as(Color.RED),
                         M.structural_equal(Holder(color=Color.RED, level=-3, op="+"),
                                            Holder(color=Color.RED, level=-3, op="+"))]
    values = [Color.RED, Color.BLUE, Level.LOW, Level.HIGH, Op.MUL, Variant.Beta,
              Holder(color=Color.GREEN, level=1 << 40, op="+"), M.Array([Color.RED, Color.RED, Op.ADD, Level.LOW]),
              M.Map({"c": Color.GREEN, "l": Level.HIGH}), M.List([Variant.Alpha, Holder(color=Color.BLUE, level=-3, op="*")])]
    out["json"] = [S.to_json_graph_str(v) for v in values]

    def same(a, b):
        if isinstance(a, D.Enum):
            return a.same_as(b)
        if isinstance(a, Holder):
            return all(same(getattr(a, n), getattr(b, n)) for n in ("color", "level", "op"))
        if isinstance(a, (M.Array, M.List)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, M.Map):
            return sorted(a.keys()) == sorted(b.keys()) and all(same(a[k], b[k]) for k in a.keys())
        return False

    out["reads"] = []
    for text, value in zip(texts, values):
        try:
            back = S.from_json_graph_str(text)
            out["reads"].append([same(back, value), S.to_json_graph_str(back) == text])
        except Exception as e:
            out["reads"].append(["error", type(e).__name__, str(e)])
    return out
'''

TVM_MAIN = r'''
import json, sys
import tvm_ffi, tvm_ffi.testing
print(json.dumps({"version": tvm_ffi.__version__, "first": run(tvm_ffi, json.load(sys.stdin))}))
'''


def _run_ffikit(texts: list[str]) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(PROGRAM, ns)  # noqa: S102 - the program above
    result: dict[str, Any] = ns["run"](ffikit, texts)
    return result


@pytest.fixture(scope="module")
def both() -> tuple[dict[str, Any], dict[str, Any]]:
    py = os.environ.get("FFK_TVM_FFI_PYTHON")
    if not py:
        pytest.skip("enum differential run: FFK_TVM_FFI_PYTHON (an interpreter with apache-tvm-ffi) is not set")
    # ffikit first, reading nothing; then tvm_ffi runs the same program reading ffikit's graphs;
    # ffikit reads tvm_ffi's graphs below, with the classes its own run defined.
    mine = _run_ffikit([])
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME") and not k.startswith(("ASAN_", "UBSAN_", "LSAN_"))}
    tvm_program = PROGRAM + TVM_MAIN
    proc = subprocess.run([py, "-c", tvm_program], input=json.dumps(mine["json"]), capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, f"the tvm_ffi side failed:\n{proc.stderr[-3000:]}"
    theirs = json.loads(proc.stdout)
    assert theirs["version"].startswith("0.1.15")
    return mine, theirs["first"]


@pytest.mark.parametrize("part", ["iter", "len", "lookup", "fields", "repr", "eq", "attrs", "errors", "definitions",
                                  "structural", "json"])
def test_same_as_tvm_ffi(both: tuple[dict[str, Any], dict[str, Any]], part: str) -> None:
    mine, theirs = both
    assert mine[part] == theirs[part]


def test_tvm_ffi_reads_ffikit_graphs_as_the_same_singletons(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, theirs = both
    assert theirs["reads"] == [[True, True]] * len(theirs["json"])


def test_ffikit_reads_tvm_ffi_graphs_as_the_same_singletons(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, theirs = both
    # The enum classes of enumdiff.* exist in this process now (the fixture ran the program);
    # a second run would define them again, so read with the registry directly.
    reads = []
    for text in theirs["json"]:
        back = from_json_graph_str(text)
        reads.append(to_json_graph_str(back) == text)
    assert reads == [True] * len(theirs["json"])
    color = from_json_graph_str(theirs["json"][1])
    level = from_json_graph_str(theirs["json"][3])
    assert color._str_index == "BLUE" and level._int_index == 1 << 40
    assert color.same_as(type(color).get("BLUE")) and level.same_as(type(level).get(1 << 40))
    holder = from_json_graph_str(theirs["json"][6])
    assert holder.color.same_as(type(color).get("GREEN"))
