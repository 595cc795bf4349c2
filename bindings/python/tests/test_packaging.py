"""The package as shipped: type information, source lists that match Bazel's, the version,
and an sdist that builds outside the source tree."""
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


@pytest.mark.parametrize("program", ["user_program.py", "objects_program.py"])
def test_typed_user_program_passes_mypy_strict(program):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed")
    env = dict(os.environ, MYPYPATH=PKG)
    cache = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "mypy-cache")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                        os.path.join(HERE, "typed", program)], capture_output=True, text=True, env=env)
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


# Headers of Debian's libdlpack-dev and libxxhash-dev: the package must build without them.
SYSTEM_ONLY_HEADERS = {"dlpack", "xxhash.h", "xxh3.h", "xxh_x86dispatch.h"}


def _setup_py_extensions():
    """What setup.py builds, without building: its RUNTIME (libffikit.so) and CORE (_core)
    descriptions, with their sources, include dirs and macros."""
    import runpy

    import setuptools

    seen = {}
    real_setup = setuptools.setup
    setuptools.setup = lambda **kw: seen.update(kw)
    try:
        g = runpy.run_path(os.path.join(PKG, "setup.py"), run_name="setup_py_under_test")
    finally:
        setuptools.setup = real_setup
    assert seen["ext_modules"] == [g["CORE"]], "setup.py builds one extension, _core"
    return [g["RUNTIME"], g["CORE"]]


def _include_dirs_without_system_only_headers(cc, tmp_path):
    """The compiler's default include directories, with /usr/include replaced by a copy made
    of symlinks that leaves out DLPack's and xxHash's headers: a machine without the two
    Debian packages, as far as this compiler can tell."""
    r = subprocess.run([cc, "-xc", "-E", "-v", os.devnull], capture_output=True, text=True, check=True)
    lines = r.stderr.splitlines()
    start = lines.index("#include <...> search starts here:") + 1
    dirs = [line.strip() for line in lines[start:lines.index("End of search list.")]]
    mirror = tmp_path / "usr-include"
    mirror.mkdir()
    for name in os.listdir("/usr/include"):
        if name not in SYSTEM_ONLY_HEADERS:
            os.symlink(os.path.join("/usr/include", name), mirror / name)
    return [str(mirror) if os.path.realpath(d) == "/usr/include" else d for d in dirs]


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_setup_py_builds_without_system_dlpack_or_xxhash(tmp_path):
    """Every C source setup.py compiles preprocesses with /usr/include/dlpack and
    /usr/include/xxhash.h out of sight, and takes DLPack and xxHash from third_party/."""
    import sysconfig

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc})")
    system = [f"-isystem{d}" for d in _include_dirs_without_system_only_headers(cc, tmp_path)]
    vendored = {os.path.join(ROOT, "third_party", "dlpack", "include", "dlpack", "dlpack.h"),
                os.path.join(ROOT, "third_party", "xxhash", "include", "xxhash.h"),
                os.path.join(ROOT, "third_party", "yyjson", "include", "yyjson.h"),
                os.path.join(ROOT, "third_party", "yyjson", "src", "yyjson.c")}
    used = set()
    for ext in _setup_py_extensions():
        flags = ["-nostdinc", "-std=c11", *system]
        flags += [f"-D{name}" if value is None else f"-D{name}={value}" for name, value in ext.define_macros]
        flags += [f"-I{os.path.join(PKG, d)}" for d in ext.include_dirs] + [f"-I{sysconfig.get_paths()['include']}"]
        for src in ext.sources:
            path = os.path.normpath(os.path.join(PKG, src))
            r = subprocess.run([cc, *flags, "-M", path], capture_output=True, text=True)
            assert r.returncode == 0, f"{src} does not preprocess without the system headers:\n{r.stderr}"
            deps = {os.path.normpath(d) for d in r.stdout.replace("\\\n", " ").split()[1:]}
            assert not [d for d in deps if d.startswith("/usr/include/dlpack") or "/usr/include/xx" in d], src
            used |= deps & vendored
    assert used == vendored, "setup.py no longer takes every vendored file"


SDIST_MUST_HOLD = [
    "setup.py", "pyproject.toml", "README.md", "ffikit/__init__.py", "ffikit/libinfo.py", "ffikit/_core.pyi",
    "ffikit/py.typed", "src/module.c", "src/ffikit_py.h", "csrc/ffi/src/any.c", "csrc/ffi/include/ffikit/base.h",
    "csrc/containers/include/ffikit/array.h", "csrc/tensor/include/ffikit/tensor.h", "csrc/include/ffikit/ffikit.h",
    "csrc/testing/testing.c", "csrc/testing/testing.h", "csrc/third_party/dlpack/include/dlpack/dlpack.h",
    "csrc/third_party/dlpack/LICENSE", "csrc/third_party/xxhash/include/xxhash.h", "csrc/third_party/xxhash/LICENSE",
    "csrc/ffikit.pc.in", "csrc/cmake/ffikitConfig.cmake.in", "csrc/cmake/ffikitConfigVersion.cmake.in",
    "csrc/third_party/yyjson/include/yyjson.h", "csrc/third_party/yyjson/src/yyjson.c", "csrc/third_party/yyjson/LICENSE",
]


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_sdist_builds_and_imports_outside_the_source_tree(tmp_path):
    """setup.py sdist, unpacked away from the repository, pip-installed into a fresh venv
    with --no-build-isolation: it carries its C tree (csrc/) and builds from it alone."""
    import sysconfig
    import tarfile

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc})")
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(dist)], cwd=PKG,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    (archive,) = dist.glob("ffikit-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert not [n for n in names if ".." in n.split("/")], "the sdist has paths outside its directory"
        top = names[0].split("/")[0]
        missing = [f for f in SDIST_MUST_HOLD if f"{top}/{f}" not in names]
        assert not missing, f"the sdist lacks {missing}"
        assert not [n for n in names if n.endswith((".so", ".o"))], "the sdist carries build outputs"
        # The "data" filter (3.12+, and 3.10.12/3.11.4 backports) refuses links and absolute
        # paths out of the tree; older interpreters have no filter argument.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp_path / "unpacked", filter="data")
        else:
            tar.extractall(tmp_path / "unpacked")
    src = tmp_path / "unpacked" / top

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "setuptools", "wheel"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"setuptools and wheel could not be installed into the throwaway venv: {r.stderr[-300:]}")
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-build-isolation",
                        "--no-deps", str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    probe = ("import ffikit, ffikit.libinfo as l; "
             "print(ffikit.__file__); print(l.find_lib_path()); print(ffikit.get_global_func('testing.echo')(3))")
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    init, lib, echoed = r.stdout.split()
    assert init.startswith(str(venv)) and lib.startswith(str(venv)) and lib.endswith("/ffikit/lib/libffikit.so")
    assert echoed == "3"
