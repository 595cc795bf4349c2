"""Builds ffikit._core with the ffikit C library compiled into it (no Bazel needed).

The C sources are the ones Bazel builds, found with the same globs as the BUILD files
(`<component>/src/*.c`; tensor's CUDA file only with CUDA, which this build leaves out),
so the two source lists cannot drift apart; tests/test_packaging.py checks that the
globs here and in the BUILD files agree. DLPack's and xxHash's headers come from
third_party/ (vendored), so a C compiler and Python's headers are all the build needs;
test_packaging.py also checks that no system copy of them is used. The version comes from FFK_VERSION in
ffi/include/ffikit/base.h, the one place the C library and the package share.

FFIKIT_TESTING=1 builds the testing variant (live-object counters and the failing
allocator of ffikit/debug.h), which the leak checks of the test suite use.
"""
import glob
import os
import re

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
COMPONENTS = ["ffi", "containers", "tensor"]
CUDA_ONLY_PREFIX = os.path.join("tensor", "src", "cuda")  # cuda.c, cuda_kernels.c: as tensor/BUILD's CUDA_SRCS
TESTING_LIB = "testing"
# Headers vendored under third_party/ (DLPack, xxHash): the build needs no system package
# beyond a C compiler and Python's headers (test_packaging.py checks that none leaks in).
VENDORED = ["dlpack", "xxhash"]


def c_sources():
    """The C library's sources as Bazel's globs give them, without CUDA, plus testing.c."""
    srcs = []
    for comp in COMPONENTS:
        for path in sorted(glob.glob(os.path.join(ROOT, comp, "src", "*.c"))):
            if not os.path.relpath(path, ROOT).startswith(CUDA_ONLY_PREFIX):
                srcs.append(path)
    srcs.append(os.path.join(ROOT, TESTING_LIB, "testing.c"))
    srcs += sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
    # setuptools wants paths relative to setup.py's directory.
    return [os.path.relpath(p, HERE) for p in srcs]


def version():
    with open(os.path.join(ROOT, "ffi", "include", "ffikit", "base.h"), encoding="utf-8") as f:
        return re.search(r'#define FFK_VERSION "([^"]+)"', f.read()).group(1)


testing = os.environ.get("FFIKIT_TESTING", "") == "1"
ext = Extension(
    "ffikit._core",
    sources=c_sources(),
    include_dirs=[os.path.join(ROOT, c, "include") for c in COMPONENTS]
    + [os.path.join(ROOT, "include"), ROOT, os.path.join(HERE, "src")]
    + [os.path.join(ROOT, "third_party", d, "include") for d in VENDORED],
    define_macros=[("_GNU_SOURCE", None)] + ([("FFK_TESTING", "1")] if testing else []),
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter"],
    extra_link_args=["-lrt", "-ldl", "-pthread"],
)

class BuildExt(build_ext):
    """Compiles the sources by absolute path, so the objects of ../../ffi/src/*.c land inside
    the build directory instead of beside the package (setuptools maps '..' literally)."""

    def build_extension(self, extension):
        extension.sources = [os.path.join(HERE, s) if not os.path.isabs(s) else s for s in extension.sources]
        super().build_extension(extension)


setup(version=version(), ext_modules=[ext], cmdclass={"build_ext": BuildExt})
