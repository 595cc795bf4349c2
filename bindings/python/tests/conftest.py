"""Shared fixtures: every test must leave no ffikit C object alive.

With the testing build of the extension (the one Bazel builds, or `FFIKIT_TESTING=1 pip
install`), the C library counts live objects; a test that leaves more behind than it
found fails. The pip-installed release build has no counters: the check is skipped.
"""
from __future__ import annotations

import gc

import pytest

import ffikit
import ffikit.testing  # noqa: F401 - registers the testing.* globals once, before any count
from ffikit import _core

HOOKS = bool(_core.HOOKS_AVAILABLE)


def live_objects() -> int:
    gc.collect()
    n = _core._live_objects()
    return -1 if n is None else n


@pytest.fixture(autouse=True)
def no_leaked_objects():
    before = live_objects()
    yield
    if HOOKS:
        after = live_objects()
        assert after <= before, f"the test left {after - before} ffikit object(s) alive"


@pytest.fixture
def hooks():
    if not HOOKS:
        pytest.skip("needs the testing build of the extension (live-object counters)")
    return _core


@pytest.fixture
def testing():
    return ffikit.testing
