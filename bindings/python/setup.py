"""Builds the ffikit wheel (no Bazel needed): the C runtime as a shared library, the
extension linked to it, and what extension authors build against.

The package it makes (the layout Bazel's test package mirrors, bindings/python/BUILD):

    ffikit/lib/libffikit.so          the C library (ffi, containers, tensor; no CUDA), soname
                                     libffikit.so, exporting the FFK_API functions only
    ffikit/_core*.so                 the binding sources + testing/testing.c, linked to it
                                     (DT_NEEDED libffikit.so, rpath $ORIGIN/lib)
    ffikit/include/ffikit/*.h|*.hpp  every public header, and include/dlpack/dlpack.h
    ffikit/lib/pkgconfig/ffikit.pc   relocatable (${pcfiledir})
    ffikit/share/cmake/ffikit/       ffikitConfig.cmake (target ffikit::ffikit), relocatable

The C sources are the ones Bazel builds, found with the same globs as the BUILD files
(`<component>/src/*.c`; tensor's CUDA files left out), so the two source lists cannot
drift apart; tests/test_packaging.py checks that the globs here and in the BUILD files
agree. In the source tree they are found two directories up; an sdist carries them under
csrc/ (the sdist command below copies them there, with the vendored DLPack and xxHash
headers and their licences), so it builds with a C compiler and Python's headers alone.
The version comes from FFK_VERSION in ffi/include/ffikit/base.h, the one place the C
library and the package share.

The runtime is the release build (-O2, NDEBUG). FFIKIT_TESTING=1 builds the testing
variant instead (FFK_TESTING=1: live-object counters and the failing allocator of
ffikit/debug.h; assertions on), which the leak checks of the test suite use.
"""
import glob
import os
import re
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
# Where the C sources live: csrc/ in an sdist, the repository root in a source checkout.
SDIST_SOURCES = "csrc"
ROOT = (os.path.join(HERE, SDIST_SOURCES) if os.path.isdir(os.path.join(HERE, SDIST_SOURCES))
        else os.path.normpath(os.path.join(HERE, "..", "..")))
COMPONENTS = ["ffi", "containers", "tensor"]
CUDA_ONLY_PREFIX = os.path.join("tensor", "src", "cuda")  # cuda.c, cuda_kernels.c: as tensor/BUILD's CUDA_SRCS
TESTING_LIB = "testing"
# Headers vendored under third_party/ (DLPack, xxHash): the build needs no system package
# beyond a C compiler and Python's headers (test_packaging.py checks that none leaks in).
VENDORED = ["dlpack", "xxhash", "yyjson"]
# yyjson's source, compiled through containers/src/serialization_yyjson.c (#include <yyjson.c>).
YYJSON_SRC = os.path.join("third_party", "yyjson", "src")
LIB_NAME = "libffikit.so"  # file name and soname, as Bazel's //:libffikit.so
# What a static link of libffikit.a needs (the CMake config's ffikit::ffikit_static; the
# wheel ships no archive, so this only fills the template).
STATIC_LIBS = ["dl", "pthread", "m", "rt"]

TESTING = os.environ.get("FFIKIT_TESTING", "") == "1"


def _root_path(*parts):
    return os.path.join(ROOT, *parts)


def library_sources():
    """The C library's sources as Bazel's globs give them, without CUDA (absolute paths)."""
    srcs = []
    for comp in COMPONENTS:
        for path in sorted(glob.glob(_root_path(comp, "src", "*.c"))):
            if not os.path.relpath(path, ROOT).startswith(CUDA_ONLY_PREFIX):
                srcs.append(path)
    return srcs


def extension_sources():
    """_core's sources: the bindings, testing.c and objects.c (the testing.* globals and
    types), relative to HERE."""
    srcs = [_root_path(TESTING_LIB, "testing.c"), _root_path(TESTING_LIB, "objects.c")] + sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
    return [os.path.relpath(p, HERE) for p in srcs]


def public_headers():
    """(path, installed name) of every public header: the components' and include/ffikit's."""
    dirs = [_root_path(c, "include", "ffikit") for c in COMPONENTS] + [_root_path("include", "ffikit")]
    return [(p, os.path.basename(p)) for d in dirs for pat in ("*.h", "*.hpp") for p in sorted(glob.glob(os.path.join(d, pat)))]


def version():
    with open(_root_path("ffi", "include", "ffikit", "base.h"), encoding="utf-8") as f:
        return re.search(r'#define FFK_VERSION "([^"]+)"', f.read()).group(1)


INCLUDE_DIRS = ([_root_path(c, "include") for c in COMPONENTS] + [_root_path("include")]
                + [_root_path("third_party", d, "include") for d in VENDORED] + [_root_path(YYJSON_SRC)])
DEFINES = [("_GNU_SOURCE", None)] + ([("FFK_TESTING", "1")] if TESTING else [("NDEBUG", None)])
# Python's own CFLAGS may carry -DNDEBUG: the testing variant takes it back (-UNDEBUG).
CFLAGS = ["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wno-unused-parameter"] + (["-UNDEBUG"] if TESTING else [])

# The runtime. Not a Python extension: BuildExt links it as a plain shared library.
RUNTIME = Extension("ffikit.lib.libffikit", sources=library_sources(), include_dirs=INCLUDE_DIRS,
                    define_macros=DEFINES, extra_compile_args=CFLAGS,
                    extra_link_args=[f"-Wl,-soname,{LIB_NAME}", "-lrt", "-ldl", "-lm", "-pthread"])

# ROOT for "testing/testing.h", src/ for the bindings' private headers.
CORE = Extension("ffikit._core", sources=extension_sources(),
                 include_dirs=INCLUDE_DIRS + [ROOT, os.path.join(HERE, "src")],
                 define_macros=DEFINES, extra_compile_args=CFLAGS,
                 libraries=["ffikit"], extra_link_args=["-Wl,-rpath,$ORIGIN/lib", "-pthread"])


def _fill(template, out, **values):
    with open(template, encoding="utf-8") as f:
        text = f.read()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


class BuildExt(build_ext):
    """Builds ffikit/lib/libffikit.so, lays out the headers and build configs beside it, then
    _core linked to the library. Sources are compiled by absolute path, so the objects of
    ../../ffi/src/*.c land inside the build directory instead of beside the package
    (setuptools maps '..' literally)."""

    def build_extensions(self):
        pkg_dir = os.path.dirname(self.get_ext_fullpath(CORE.name))
        lib_dir = os.path.join(pkg_dir, "lib")
        self._build_runtime(lib_dir)
        self._lay_out_build_files(pkg_dir)
        for ext in self.extensions:
            ext.sources = [os.path.join(HERE, s) if not os.path.isabs(s) else s for s in ext.sources]
            ext.library_dirs = [lib_dir] + list(ext.library_dirs)
        super().build_extensions()

    def _build_runtime(self, lib_dir):
        objects = self.compiler.compile(RUNTIME.sources, output_dir=self.build_temp, macros=RUNTIME.define_macros,
                                        include_dirs=RUNTIME.include_dirs, extra_postargs=RUNTIME.extra_compile_args,
                                        debug=self.debug)
        self.compiler.link_shared_object(objects, LIB_NAME, output_dir=lib_dir,
                                         extra_postargs=RUNTIME.extra_link_args, debug=self.debug,
                                         build_temp=self.build_temp)

    def _lay_out_build_files(self, pkg_dir):
        include = os.path.join(pkg_dir, "include")
        shutil.rmtree(include, ignore_errors=True)  # no header left over from an older build
        os.makedirs(os.path.join(include, "ffikit"))
        os.makedirs(os.path.join(include, "dlpack"))
        for path, name in public_headers():
            shutil.copyfile(path, os.path.join(include, "ffikit", name))
        dlpack = _root_path("third_party", "dlpack")
        shutil.copyfile(os.path.join(dlpack, "include", "dlpack", "dlpack.h"), os.path.join(include, "dlpack", "dlpack.h"))
        shutil.copyfile(os.path.join(dlpack, "LICENSE"), os.path.join(include, "dlpack", "LICENSE"))
        v = version()
        _fill(_root_path("ffikit.pc.in"), os.path.join(pkg_dir, "lib", "pkgconfig", "ffikit.pc"), VERSION=v, CUDA_LIBS="")
        cmake = os.path.join(pkg_dir, "share", "cmake", "ffikit")
        _fill(_root_path("cmake", "ffikitConfig.cmake.in"), os.path.join(cmake, "ffikitConfig.cmake"), VERSION=v,
              STATIC_LIBS=";".join(STATIC_LIBS))
        _fill(_root_path("cmake", "ffikitConfigVersion.cmake.in"), os.path.join(cmake, "ffikitConfigVersion.cmake"),
              VERSION=v)


def sdist_files():
    """Paths (relative to ROOT) of what the sdist carries under csrc/: the C sources and
    private headers, the public headers, testing.c and objects.c, the vendored headers with their
    licences, and the pkg-config and CMake templates."""
    patterns = [os.path.join(c, d, "*") for c in COMPONENTS for d in ("src", os.path.join("include", "ffikit"))]
    patterns += [os.path.join("include", "ffikit", "*.h"), os.path.join("include", "ffikit", "*.hpp"),
                 os.path.join(TESTING_LIB, "testing.c"), os.path.join(TESTING_LIB, "objects.c"),
                 os.path.join(TESTING_LIB, "testing.h"), "ffikit.pc.in", os.path.join("cmake", "*.cmake.in")]
    for d in VENDORED:
        patterns += [os.path.join("third_party", d, "include", "**", "*"), os.path.join("third_party", d, "LICENSE")]
    patterns.append(os.path.join(YYJSON_SRC, "yyjson.c"))
    files = set()
    for pattern in patterns:
        files.update(p for p in glob.glob(_root_path(pattern), recursive=True) if os.path.isfile(p))
    return sorted(os.path.relpath(p, ROOT) for p in files)


class SDist(sdist):
    """An sdist that builds anywhere: the C tree it needs, copied in under csrc/."""

    def make_release_tree(self, base_dir, files):
        # setuptools lists the extension's sources, ../../testing/testing.c among them: what
        # lies outside this directory travels under csrc/ instead.
        files = [f for f in files if not os.path.normpath(f).startswith(os.pardir)]
        super().make_release_tree(base_dir, files)
        for rel in sdist_files():
            dest = os.path.join(base_dir, SDIST_SOURCES, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(_root_path(rel), dest)


setup(version=version(), ext_modules=[CORE], cmdclass={"build_ext": BuildExt, "sdist": SDist})
