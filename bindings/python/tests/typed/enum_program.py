"""Enums as a user writes them (ffikit.dataclasses.Enum, IntEnum, StrEnum); checked with mypy --strict."""
from __future__ import annotations

from typing import ClassVar

import ffikit
from ffikit.dataclasses import Enum, EnumAttrMap, EnumState, IntEnum, StrEnum, auto, entry


class Color(Enum, type_key="typed.enum.Color"):
    weight: int = 0
    RED = auto()
    GREEN = entry(weight=5)
    BLUE: ClassVar[Color]


class Level(IntEnum, type_key="typed.enum.Level"):
    LOW = 1
    HIGH = 10


class Op(StrEnum, type_key="typed.enum.Op"):
    ADD = "+"


def by_name(name: str) -> Color:
    member = Color.get(name)
    assert isinstance(member, Color)
    return member


def main() -> None:
    red: Color = by_name("RED")
    members: list[Color] = list(Color)
    cost: EnumAttrMap = Color.def_attr("cost", default=0)
    cost[red] = 3
    total: int = cost[red] + len(members)
    high = Level.get(10)
    add = Op.get("+")
    assert isinstance(high, Level) and isinstance(add, Op)
    level: int = high.value
    op: str = add.value
    print(red, total, level, op, ffikit.serialization.to_json_graph_str(red), isinstance(EnumState(), EnumState))


if __name__ == "__main__":
    main()
