"""Property tests: any nesting of plain values round-trips through testing.echo."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import ffikit

echo = ffikit.get_global_func("testing.echo")

scalars = (
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False) | st.text() | st.binary()
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=10) | st.integers(min_value=-1000, max_value=1000), children, max_size=5),
    max_leaves=30,
)


def same(py, out) -> bool:
    """`out` (what came back) has the structure and values of `py` (what went in)."""
    if isinstance(py, (list, tuple)):
        return isinstance(out, ffikit.Array) and len(out) == len(py) and all(same(a, b) for a, b in zip(py, out))
    if isinstance(py, dict):
        return (isinstance(out, ffikit.Map) and len(out) == len(py)
                and all(k in out and same(v, out[k]) for k, v in py.items()))
    if isinstance(py, float):
        return isinstance(out, float) and (out == py or (math.isnan(out) and math.isnan(py)))
    return type(out) in (type(py), ffikit.String, ffikit.Bytes) and out == py and (type(py) is not bool or out is py)


@settings(max_examples=300, deadline=None)
@given(values)
def test_nested_values_round_trip(value):
    out = echo(value)
    assert same(value, out)
    if isinstance(value, (list, tuple)):
        assert out == value  # structural equality against the plain sequence
        assert out == ffikit.convert(value) and hash(out) == hash(ffikit.convert(value))
    if isinstance(value, dict):
        assert out == ffikit.convert(value)


@settings(max_examples=200, deadline=None)
@given(st.integers())
def test_ints_convert_or_overflow(x):
    if -(2**63) <= x < 2**63:
        assert echo(x) == x
    else:
        try:
            echo(x)
        except OverflowError as e:
            assert str(x) in str(e)
        else:
            raise AssertionError("no OverflowError")
