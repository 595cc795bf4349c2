"""atheris harness: ffikit.serialization.from_json_graph_str over untrusted documents.

The first byte picks the mode. Raw (most inputs): the rest of the input is the document.
Edit: the input builds a value (containers, strings, reflected testing objects, enum
members and objects with enum fields, shared parts), writes its JSON graph document, and changes a few of the document's bytes at
positions the input chooses, so that the fuzzer reaches the reader's checks behind a
valid JSON parse (node indices, types, fields) quickly.

Every document must either read, or raise ValueError / TypeError / RuntimeError (the
errors serialization.h promises); any other exception, a crash or a leak is a finding.
A document that reads must write back (to_json_graph_str) and read again to a value
whose document is the same text (structural equality is not the test: Map keys that are
containers, and Shapes, compare by identity, and a read makes new ones; the structural
functions still run over both values). No C object may stay alive.
"""
from __future__ import annotations

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

with instrumented():
    import ffikit
    import ffikit.testing
    from ffikit.dataclasses import Enum
    from ffikit.serialization import from_json_graph_str, to_json_graph_str
    from ffikit.structural import get_first_structural_mismatch, structural_equal

EXPECTED = (ValueError, TypeError, RuntimeError)
# Enum members (singletons: a read must give the registered member back) of the C-defined
# testing enums: a plain Enum, an IntEnum and a StrEnum.
_VARIANT = ffikit.get_global_func("testing.enum_variant_get")
# The IntEnum's and StrEnum's members are declared in ffikit.testing's class bodies, which
# come out empty when atheris instruments the imports (its loader; the plain import has
# them), so they are taken as listed: C's two Variant members are always there.
INT_MEMBERS, STR_MEMBERS = list(ffikit.testing._TestCxxIntEnum), list(ffikit.testing._TestCxxStrEnum)
MEMBERS = [_VARIANT("Alpha"), _VARIANT("Beta"), *INT_MEMBERS, *STR_MEMBERS]
SCALARS = [None, True, False, 0, -1, 2**63 - 1, -(2**63), 0.5, -0.0, float("inf"), float("nan"), "", "k",
           "héllo ☃", b"", b"\x00\xff", ffikit.dtype("float32"), ffikit.Device(2, 1)]


def build(r: Reader, pool: list, depth: int = 0):
    """A value decoded from the input; `pool` keeps built values to share."""
    kind = r.pick(10) if depth < 4 else 0
    if kind == 0 or r.left() == 0:
        return SCALARS[r.pick(len(SCALARS))]
    if kind == 1 and pool:
        return pool[r.pick(len(pool))]  # shared: one node, several references
    n = r.small(0, 4)
    if kind in (2, 3):
        items = [build(r, pool, depth + 1) for _ in range(n)]
        v = ffikit.Array(items) if kind == 2 else ffikit.List(items)
    elif kind in (4, 5):
        pairs = {}
        for _ in range(n):
            key = SCALARS[r.pick(len(SCALARS))]
            try:
                hash(key)
            except TypeError:
                continue
            pairs[key] = build(r, pool, depth + 1)
        v = ffikit.Map(pairs) if kind == 4 else ffikit.Dict(pairs)
    elif kind == 6:
        v = ffikit.testing.TestIntPair(r.i64(), r.i64())
    elif kind == 7:
        v = ffikit.testing.TestObjectDerived(v_i64=r.i64(), v_str="s" * r.small(0, 3),
                                             v_map=ffikit.Map({"m": build(r, pool, depth + 1)}),
                                             v_array=ffikit.Array([build(r, pool, depth + 1)]))
    elif kind == 8:
        v = ffikit.Shape([r.small(0, 9) for _ in range(n)])
    elif r.pick(3) == 0:
        v = r.take(r.small(0, 6)).decode("latin-1")
    elif r.pick(2) == 0 or not (INT_MEMBERS and STR_MEMBERS):
        return MEMBERS[r.pick(len(MEMBERS))]
    else:
        v = ffikit.testing._TestCxxEnumHolder(priority=INT_MEMBERS[r.pick(len(INT_MEMBERS))],
                                               opcode=STR_MEMBERS[r.pick(len(STR_MEMBERS))])
    pool.append(v)
    return v


def document(data: bytes) -> bytes:
    r = Reader(data)
    if r.u8() % 4 != 0:
        return data[1:]
    doc = bytearray(to_json_graph_str(build(r, [])).encode())
    for _ in range(r.small(0, 3)):
        if not doc:
            break
        pos = r.u16() % len(doc)
        op = r.pick(3)
        if op == 0:
            doc[pos] = r.u8()
        elif op == 1:
            del doc[pos]
        else:
            doc[pos:pos] = r.take(r.small(1, 3))
    return bytes(doc)


def test_one_input(data: bytes) -> None:
    before = live_objects()
    doc = document(data)
    try:
        value = from_json_graph_str(doc)
    except EXPECTED:
        value = None
        readable = False
    else:
        readable = True
    if readable:
        text = to_json_graph_str(value)
        again = from_json_graph_str(text)
        # The document is the comparison: structural equality cannot be, since container
        # keys of a Map/Dict and Shapes compare by identity and a read makes new ones.
        assert to_json_graph_str(again) == text, f"read back differs: {text[:200]}"
        if isinstance(value, Enum):  # an enum node reads as the registered singleton, never a copy
            assert value.same_as(type(value).get(value._str_index)) and again.same_as(value)
        if structural_equal(value, again) == 0:
            assert get_first_structural_mismatch(value, again) is not None
        del again, text
    del value
    check_nothing_alive(before, "a document")


if __name__ == "__main__":
    main(test_one_input)
