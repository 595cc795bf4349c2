"""Shared fixtures: every test must leave no ffikit C object alive.

With the testing build of the extension (the one Bazel builds, or `FFIKIT_TESTING=1 pip
install`), the C library counts live objects; a test that leaves more behind than it
found fails. The pip-installed release build has no counters: the check is skipped.
"""
from __future__ import annotations

import gc
import time

import pytest

import ffikit
import ffikit.testing  # noqa: F401 - registers the testing.* globals once, before any count
from ffikit import _core

HOOKS = bool(_core.HOOKS_AVAILABLE)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "rebuild: builds the whole package again (the CUDA build, the sdist), a minute or two each; "
        "scripts/python_versions.sh runs these on one CPython only (-m 'not rebuild' on the others)")


def live_objects() -> int:
    gc.collect()
    n = _core._live_objects()
    return -1 if n is None else n


@pytest.fixture(autouse=True)
def no_leaked_objects():
    if not HOOKS:
        yield
        return
    before = live_objects()
    # What is alive now is left out of later collections (gc.freeze): the collection after
    # the test then looks only at what the test made. With numpy, torch, Ray and Dask
    # imported a full collection scans over 200,000 objects (0.1-0.25 s on 2 cores), and two
    # per test were two thirds of the suite's time. Garbage the test makes is all new, so
    # the count below is the same as with full collections.
    gc.freeze()
    yield
    after = live_objects()
    assert after <= before, f"the test left {after - before} ffikit object(s) alive"


@pytest.fixture
def engine_settled(no_leaked_objects):
    """For tests that move values through Ray or Dask (test_engines_*.py): runs inside the
    leak check and first waits, at most 5 s, for this process to hold no more live objects
    than before the test. The engines' own threads (Dask's IO loop and offload pool, Ray's
    core worker) drop their last references to what they moved a little after the call
    that moved them has returned; what is still alive after 5 s is the leak check's."""
    before = live_objects()
    yield
    if HOOKS:
        deadline = time.monotonic() + 5.0
        while live_objects() > before and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def hooks():
    if not HOOKS:
        pytest.skip("needs the testing build of the extension (live-object counters)")
    return _core


@pytest.fixture
def testing():
    return ffikit.testing
