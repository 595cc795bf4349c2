"""Calling every entry point many times leaks neither Python references nor C objects."""
from __future__ import annotations

import gc
import sys

import pytest

import ffikit
from ffikit import _core, testing

N = 10_000


def _entry_points():
    echo = ffikit.get_global_func("testing.echo")
    s = ffikit.String("a long string that is an object")
    shape = ffikit.Shape((1, 2))
    marker = object()

    def cb(x):
        return x

    return [
        ("echo int", lambda: echo(12345678901)),
        ("echo str", lambda: echo("a string long enough for a view")),
        ("echo String", lambda: echo(s)),
        ("echo bytes", lambda: echo(b"bytes long enough for a view")),
        ("echo opaque", lambda: echo(marker)),
        ("echo list", lambda: echo([1, "two", (3.0,)])),
        ("echo dict", lambda: echo({"k": [1]})),
        ("echo shape", lambda: echo(shape)),
        ("echo dtype", lambda: echo(ffikit.float32)),
        ("apply callback", lambda: testing.apply(cb, marker)),
        ("typed mismatch", lambda: _raises(TypeError, testing.add_one, "x")),
        ("raise from C", lambda: _raises(ValueError, testing.raise_error, "ValueError", "v")),
        ("callback raises", lambda: _raises(KeyError, testing.apply, _raise_key)),
        ("convert", lambda: ffikit.convert([marker, {"a": marker}])),
        ("get_global_func", lambda: ffikit.get_global_func("testing.nop")),
        ("Device", lambda: ffikit.Device("cuda:3")),
        ("dtype", lambda: ffikit.dtype("f16")),
    ], [echo, s, shape, marker, cb]


def _raise_key():
    raise KeyError("k")


def _raises(exc, f, *args):
    try:
        f(*args)
    except exc:
        return
    raise AssertionError("did not raise")


@pytest.mark.parametrize("index", range(17))
def test_entry_point_does_not_leak(index):
    entries, keep = _entry_points()
    name, op = entries[index]
    for _ in range(200):  # warm caches (type decisions, dtype table)
        op()
    gc.collect()
    counts = [sys.getrefcount(k) for k in keep]
    live = _core._live_objects()
    blocks = sys.getallocatedblocks()
    for _ in range(N):
        op()
    gc.collect()
    assert [sys.getrefcount(k) for k in keep] == counts, name
    assert _core._live_objects() == live, name
    assert sys.getallocatedblocks() - blocks < 200, name
