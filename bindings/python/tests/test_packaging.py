"""The package as shipped: type information, source lists that match Bazel's, the version."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import ffikit

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
ROOT = os.path.normpath(os.path.join(PKG, "..", ".."))


def test_typed_user_program_passes_mypy_strict():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed")
    env = dict(os.environ, MYPYPATH=PKG)
    cache = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "mypy-cache")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                        os.path.join(HERE, "typed", "user_program.py")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_type_information_ships_with_the_package():
    pkg_dir = os.path.dirname(ffikit.__file__)
    assert os.path.exists(os.path.join(pkg_dir, "py.typed"))
    assert os.path.exists(os.path.join(pkg_dir, "_core.pyi"))


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_setup_py_compiles_exactly_the_sources_bazel_builds():
    """setup.py globs <component>/src/*.c; the BUILD files must glob the same way."""
    for comp in ["ffi", "containers", "tensor"]:
        with open(os.path.join(ROOT, comp, "BUILD"), encoding="utf-8") as f:
            build = f.read()
        assert re.search(r'glob\(\["src/\*\.c", "src/\*\.h"\]', build), f"{comp}/BUILD no longer globs src/*.c"
    with open(os.path.join(ROOT, "tensor", "BUILD"), encoding="utf-8") as f:
        assert 'CUDA_SRCS = glob(["src/cuda*.c", "src/cuda*.h"])' in f.read(), "tensor's CUDA-only sources changed: update setup.py"
    with open(os.path.join(PKG, "setup.py"), encoding="utf-8") as f:
        setup = f.read()
    assert 'CUDA_ONLY_PREFIX = os.path.join("tensor", "src", "cuda")' in setup


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_version_comes_from_the_c_library():
    with open(os.path.join(ROOT, "ffi", "include", "ffikit", "base.h"), encoding="utf-8") as f:
        version = re.search(r'#define FFK_VERSION "([^"]+)"', f.read()).group(1)
    assert ffikit.__version__ == version


def test_every_spec_top_level_name_exists():
    for name in ["Object", "Function", "Array", "List", "Map", "Dict", "Shape", "String", "Bytes", "Device",
                 "device", "DLDeviceType", "dtype", "Error", "convert", "register_global_func", "get_global_func",
                 "remove_global_func", "list_global_func_names", "register_error", "load_module", "testing",
                 "__version__", "int8", "float64", "bfloat16", "bool"]:
        assert hasattr(ffikit, name), name
