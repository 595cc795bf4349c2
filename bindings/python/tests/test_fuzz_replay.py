"""The atheris harnesses (fuzz/fuzz_*.py) run over their checked-in corpora
(fuzz/corpus/<name>/) without atheris, so what fuzzing once found stays fixed.
tests/fuzz/run_atheris.sh at the top of the repository does the fuzzing itself."""
from __future__ import annotations

import importlib
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))

import _fuzz  # noqa: E402

HARNESSES = sorted(f[len("fuzz_"):-len(".py")] for f in os.listdir(os.path.dirname(_fuzz.__file__))
                   if f.startswith("fuzz_") and f.endswith(".py"))


def test_every_harness_has_a_corpus():
    assert HARNESSES == ["api", "containers", "convert", "dlpack", "json_graph", "structural_visit"]
    for name in HARNESSES:
        assert len(_fuzz.corpus_files(name)) >= 10, f"corpus/{name} is (nearly) empty"


@pytest.mark.parametrize("name", HARNESSES)
def test_corpus_replays(name):
    harness = importlib.import_module("fuzz_" + name)
    for path in _fuzz.corpus_files(name):
        with open(path, "rb") as f:
            data = f.read()
        try:
            harness.test_one_input(data)
        except BaseException as e:
            raise AssertionError(f"{os.path.relpath(path)}: {e!r}") from e
