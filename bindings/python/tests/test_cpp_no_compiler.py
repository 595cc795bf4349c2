"""ffikit.cpp without a compiler (as in a venv made from the wheel on a machine without
one): the build fails before anything is compiled, with a BuildError that names the
missing compiler. Runs everywhere: PATH is pointed at an empty directory."""
from __future__ import annotations

import pytest

from ffikit import cpp

SOURCE = r"""
static int one(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  *result = ffk_any_int(1);
  return 0;
}
"""


@pytest.fixture(autouse=True)
def no_compiler(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("FFIKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("kind, language, compiler, var", [
    ("c_sources", "C", "cc", "$CC"),
    ("cpp_sources", "C++", "c++", "$CXX"),
])
def test_load_inline_without_a_compiler_names_the_missing_compiler(kind, language, compiler, var, tmp_path):
    with pytest.raises(cpp.BuildError) as info:
        cpp.load_inline("nocc", **{kind: SOURCE}, functions=["one"])
    message = str(info.value)
    assert f"needs a {language} compiler" in message
    assert f"`{compiler}` (the default) was not found on PATH" in message
    assert var in message
    assert not list((tmp_path / "cache").glob("**/*.so")), "nothing may be built"


def test_a_named_compiler_that_is_missing_is_named(monkeypatch):
    monkeypatch.setenv("CC", "ffikit-no-such-cc -O1")
    with pytest.raises(cpp.BuildError, match=r"`ffikit-no-such-cc -O1` \(\$CC\) was not found on PATH"):
        cpp.build_inline("nocc", c_sources=SOURCE, functions=["one"])
