"""load_module: Functions from a shared library following the module convention."""
from __future__ import annotations

import os

import pytest

import ffikit


def _testing_module_path() -> str | None:
    """The module next to the tests in Bazel's runfiles (built for the same configuration)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "..", "ffi", "testing", "libffikit_testing.so"))
    return candidate if os.path.exists(candidate) else None


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="cannot load module"):
        ffikit.load_module(tmp_path / "nope.so")


def test_a_library_that_is_not_a_module_is_refused():
    import ctypes.util

    libm = ctypes.util.find_library("m")
    with pytest.raises(RuntimeError, match="not an ffikit module"):
        ffikit.load_module(libm)


@pytest.fixture(scope="module")
def testing_module():
    """Loaded once, before the per-test object count: a module whose init ran stays loaded
    (and its init re-registers the testing.* globals) for the life of the process."""
    path = _testing_module_path()
    if path is None:
        pytest.skip("libffikit_testing.so is not built next to this checkout")
    return path, ffikit.load_module(path)


def test_functions_of_a_loaded_module(testing_module):
    path, m = testing_module
    assert isinstance(m, ffikit.Module) and m.path == path
    f = m.add_one
    assert f(41) == 42 and m.add_one is f  # looked up once, then cached on the module
    assert m.get_function("add_one")(1) == 2
    del m.__dict__["add_one"], f
    with pytest.raises(AttributeError, match="has no function `missing`"):
        m.get_function("missing")
