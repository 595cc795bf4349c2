"""The package built with CUDA (FFIKIT_CUDA=1) from its sdist, where a CUDA toolkit is found:
the CUDA runtime is linked in statically (libffikit.so needs no libcudart and exports none
of it), the kernels are in, and the package imports and works on the CPU on a machine
without a driver, where a CUDA allocation raises "no CUDA driver is installed" rather than
"built without CUDA". Then part of this suite runs against that build (the tensor and
runtime tests; scripts/python_versions.sh runs all of it on an auto build, which has CUDA
wherever the toolkit is).

One build of about a minute or two (nvcc compiles the kernels for every architecture of
tensor/BUILD's NVCC_FLAGS): skipped, saying why, outside a source checkout, without a
toolkit, and when FFIKIT_CUDA=0 is set for the run.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
ROOT = os.path.normpath(os.path.join(PKG, "..", ".."))

# Part of the suite to run against the CUDA build: the tests that reach the tensor layer
# (allocation, copies, DLPack) and how the runtime is loaded.
SUITE_SUBSET = ["test_tensor.py", "test_tensor_rules.py", "test_runtime.py"]

pytestmark = pytest.mark.rebuild


def _toolkit():
    """setup.py's find_cuda() as a build would run it, or a reason to skip."""
    import runpy

    import setuptools

    if not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")):
        return None, "not in a source checkout"
    if os.environ.get("FFIKIT_CUDA") == "0":
        return None, "FFIKIT_CUDA=0: the CUDA build of the package is not checked"
    real_setup = setuptools.setup
    setuptools.setup = lambda **kw: None
    try:
        g = runpy.run_path(os.path.join(PKG, "setup.py"), run_name="setup_py_under_test")
    finally:
        setuptools.setup = real_setup
    env = {k: v for k, v in os.environ.items() if k != "FFIKIT_CUDA"}
    toolkit = g["find_cuda"](env)
    if toolkit is None:
        return None, "no CUDA toolkit found (nvcc in $CUDA_HOME, $CUDA_PATH, PATH or /usr/local/cuda): not checked"
    return toolkit, None


def _driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _env_without_pythonpath(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FFIKIT_CUDA", "FFIKIT_TESTING")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def cuda_site(tmp_path_factory):
    """The package built with FFIKIT_CUDA=1 from a fresh sdist, pip-installed with --target
    into a directory of its own; that directory."""
    toolkit, why = _toolkit()
    if toolkit is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("cuda_build")
    dist = tmp / "dist"
    r = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(dist)], cwd=PKG,
                       capture_output=True, text=True, env=_env_without_pythonpath(FFIKIT_CUDA="0"))
    assert r.returncode == 0, r.stdout + r.stderr
    (archive,) = dist.glob("ffikit-*.tar.gz")
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp / "unpacked", filter="data")
        else:
            tar.extractall(tmp / "unpacked")
    site = tmp / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--no-build-isolation", "--no-index", "--no-deps", "--target", str(site),
                        str(tmp / "unpacked" / top)],
                       capture_output=True, text=True, cwd=tmp, env=_env_without_pythonpath(FFIKIT_CUDA="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    return site


def _readelf(*args):
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    r = subprocess.run(["readelf", *args], capture_output=True, text=True, check=True)
    return r.stdout


def test_cuda_build_links_the_cuda_runtime_statically_and_exports_only_ffk(cuda_site):
    lib = str(cuda_site / "ffikit" / "lib" / "libffikit.so")
    needed = [line for line in _readelf("-d", lib).splitlines() if "(NEEDED)" in line]
    assert needed and not [n for n in needed if "cudart" in n or "libcuda" in n], needed
    assert ".nv_fatbin" in _readelf("-S", "-W", lib), "libffikit.so holds no CUDA kernels"
    exported = [line.split()[-1] for line in _readelf("--dyn-syms", "-W", lib).splitlines()
                if " GLOBAL " in line and " UND " not in line and " DEFAULT " in line]
    assert exported and [s for s in exported if not s.startswith("ffk_")] == [], "libffikit.so exports more than ffk_*"
    with open(cuda_site / "ffikit" / "lib" / "pkgconfig" / "ffikit.pc", encoding="utf-8") as f:
        assert "-lcudart_static" in f.read(), "the pkg-config file's static link lacks the CUDA runtime"


PROBE = r"""
import ffikit, sys
assert ffikit.__file__.startswith(sys.argv[1]), ffikit.__file__
t = ffikit.zeros((3,), "float32")
assert list(memoryview(t).cast("B")) == [0] * 12
try:
    d = ffikit.empty((2,), "float32", device="cuda")
except RuntimeError as e:
    print("error:", e)
else:
    print("allocated:", d.device)
"""


def test_cuda_build_imports_without_a_driver_and_says_so_at_the_first_cuda_call(cuda_site):
    r = subprocess.run([sys.executable, "-c", PROBE, str(cuda_site)], capture_output=True, text=True,
                       cwd=cuda_site.parent, env=_env_without_pythonpath(PYTHONPATH=str(cuda_site)))
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.strip()
    assert "built without CUDA" not in out, out
    if not _driver_present():
        assert out.startswith("error: ") and "no CUDA driver is installed" in out, out
    else:  # a driver: a device is used, or its absence is named
        assert out.startswith("allocated: cuda") or "no CUDA device" in out, out


def test_suite_subset_passes_against_the_cuda_build(cuda_site):
    tests = [os.path.join(HERE, name) for name in SUITE_SUBSET]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       capture_output=True, text=True, cwd=cuda_site.parent,
                       env=_env_without_pythonpath(PYTHONPATH=str(cuda_site)))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout, r.stdout[-2000:]
