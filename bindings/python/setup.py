"""Builds the ffikit wheel (no Bazel needed): the C runtime as a shared library, the
extension linked to it, and what extension authors build against.

The package it makes (the layout Bazel's test package mirrors, bindings/python/BUILD):

    ffikit/lib/libffikit.so          the C library (ffi, containers, tensor, glue; CUDA when built
                                     with it, see below), soname libffikit.so, exporting the
                                     FFK_API functions only
    ffikit/_core*.so                 the binding sources + testing/testing.c, linked to it
                                     (DT_NEEDED libffikit.so, rpath $ORIGIN/lib)
    ffikit/include/ffikit/*.h|*.hpp  every public header, and include/dlpack/dlpack.h
    ffikit/include/ffikit/unstable/  the bindings' unstable tier (docs/design.md, "Bindings")
    ffikit/lib/pkgconfig/ffikit.pc   relocatable (${pcfiledir})
    ffikit/share/cmake/ffikit/       ffikitConfig.cmake (target ffikit::ffikit), relocatable
    ffikit/licenses/                 LICENSE and NOTICE (the repository's), and
                                     third_party/<name>/LICENSE of each vendored library

The C sources are the ones Bazel builds, found with the same globs as the BUILD files
(`<component>/src/*.c`; tensor's CUDA files only in a CUDA build), so the two source lists cannot
drift apart; tests/test_packaging.py checks that the globs here and in the BUILD files
agree. In the source tree they are found two directories up; an sdist carries them under
csrc/ (the sdist command below copies them there, with the vendored DLPack and xxHash
headers and their licences, and tensor/cuda/ with tensor/BUILD), so it builds with a C
compiler and Python's headers alone (and with CUDA where a toolkit is found).
The version comes from FFK_VERSION in ffi/include/ffikit/base.h, the one place the C
library and the package share.

The runtime is the release build (-O2, NDEBUG). FFIKIT_TESTING=1 builds the testing
variant instead (FFK_TESTING=1: live-object counters and the failing allocator of
ffikit/debug.h; assertions on), which the leak checks of the test suite use.

CUDA: FFIKIT_CUDA=1 builds with CUDA (an error when no toolkit is found), FFIKIT_CUDA=0
without, and unset builds with it when a toolkit is found: nvcc at $CUDA_HOME/bin, else
$CUDA_PATH/bin, else on PATH, else /usr/local/cuda/bin, with cuda_runtime.h and
libcudart_static.a beside it (a wrapper script on PATH is followed through `nvcc --dryrun`).
With CUDA, tensor/src/cuda*.c (tensor/BUILD's CUDA_SRCS) join the library and every runtime
source is compiled with -DFFK_HAS_CUDA; tensor/cuda/*.cu are compiled by nvcc with
tensor/BUILD's NVCC_FLAGS, read from that file (the sdist carries it), so the two builds
cannot disagree on architectures or flags. The CUDA runtime is linked statically
(libcudart_static.a, its symbols kept local by --exclude-libs so they neither leak out of
libffikit.so nor bind to another libcudart in the process): the library needs no
libcudart.so, and it loads on a machine without a driver or GPU, because the static runtime
opens the driver (libcuda.so.1) only at the first CUDA call, which then fails with "no CUDA
driver is installed".
"""
import ast
import glob
import os
import re
import shutil
import subprocess
import sys
from typing import NamedTuple

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist
from setuptools.errors import SetupError

HERE = os.path.dirname(os.path.abspath(__file__))
# Where the C sources live: csrc/ in an sdist, the repository root in a source checkout.
SDIST_SOURCES = "csrc"
ROOT = (os.path.join(HERE, SDIST_SOURCES) if os.path.isdir(os.path.join(HERE, SDIST_SOURCES))
        else os.path.normpath(os.path.join(HERE, "..", "..")))
COMPONENTS = ["ffi", "containers", "tensor", "glue"]  # as the root BUILD's; glue/ has no public header
CUDA_ONLY_PREFIX = os.path.join("tensor", "src", "cuda")  # cuda.c, cuda_kernels.c: as tensor/BUILD's CUDA_SRCS
TESTING_LIB = "testing"
# Headers vendored under third_party/ (DLPack, xxHash): the build needs no system package
# beyond a C compiler and Python's headers (test_packaging.py checks that none leaks in).
VENDORED = ["dlpack", "xxhash", "yyjson"]
# yyjson's source, compiled through containers/src/serialization_yyjson.c (#include <yyjson.c>).
YYJSON_SRC = os.path.join("third_party", "yyjson", "src")
# The repository's licence and the notice listing the vendored parts (at ROOT; the sdist
# carries them at its top, where setuptools finds them for the wheel's metadata, and in csrc/).
LICENSE_FILES = ["LICENSE", "NOTICE"]
LIB_NAME = "libffikit.so"  # file name and soname, as Bazel's //:libffikit.so
# What a static link of libffikit.a needs (the CMake config's ffikit::ffikit_static; the
# wheel ships no archive, so this only fills the template).
STATIC_LIBS = ["dl", "pthread", "m", "rt"]

TESTING = os.environ.get("FFIKIT_TESTING", "") == "1"

# ---- CUDA -------------------------------------------------------------------------------
# tensor/BUILD's CUDA_SRCS (the .c half: CUDA_ONLY_PREFIX above) and its kernels_cu_o
# genrule's .cu sources; the genrule's nvcc flags are read from NVCC_FLAGS there
# (test_packaging.py checks all three).
CUDA_KERNEL_SOURCES = os.path.join("tensor", "cuda", "*.cu")
CUDA_BUILD_FILE = os.path.join("tensor", "BUILD")
DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"
CUDA_STATIC_RUNTIME = "libcudart_static.a"
# What libcudart_static.a and an nvcc object need besides (the kernel launch stubs use the
# C++ runtime's __cxa_guard_*).
CUDA_SYSTEM_LIBS = ["dl", "rt", "pthread", "stdc++"]


class CudaToolkit(NamedTuple):
    nvcc: str          # the compiler found (may be a wrapper script)
    include_dir: str   # holds cuda_runtime.h
    static_runtime: str  # path of libcudart_static.a


def _nvcc_top(nvcc):
    """The toolkit root nvcc itself reports (`#$ TOP=...` of --dryrun), or None: the way
    through a wrapper script such as /usr/local/bin/nvcc -> /usr/local/cuda-13.0/bin/nvcc."""
    try:
        r = subprocess.run([nvcc, "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^#\$ TOP=(.+)$", r.stdout + r.stderr, re.MULTILINE)
    return os.path.normpath(m.group(1).strip()) if m else None


def _toolkit_of(nvcc):
    """The CudaToolkit nvcc belongs to, or None when its headers or static runtime are missing."""
    def roots():
        yield os.path.dirname(os.path.dirname(nvcc))
        yield os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        top = _nvcc_top(nvcc)
        if top:
            yield top
    for root in roots():
        include = os.path.join(root, "include")
        if not os.path.isfile(os.path.join(include, "cuda_runtime.h")):
            continue
        lib_dirs = [os.path.join(root, "lib64"), os.path.join(root, "lib")] + sorted(
            glob.glob(os.path.join(root, "targets", "*", "lib")))
        for lib_dir in lib_dirs:
            runtime = os.path.join(lib_dir, CUDA_STATIC_RUNTIME)
            if os.path.isfile(runtime):
                return CudaToolkit(nvcc, include, runtime)
    return None


def find_cuda(environ=None, default_nvcc=DEFAULT_NVCC):
    """The CUDA toolkit to build with, or None to build without CUDA, by FFIKIT_CUDA: "1"
    forces CUDA, "0" disables it, unset (or empty) uses the first toolkit found ($CUDA_HOME,
    $CUDA_PATH, nvcc on $PATH, then `default_nvcc`). Raises SetupError for another value of
    FFIKIT_CUDA, and for "1" when no usable toolkit is found (naming every place looked at);
    in auto mode an nvcc without headers or static runtime is reported on stderr and skipped."""
    environ = os.environ if environ is None else environ
    mode = environ.get("FFIKIT_CUDA", "")
    if mode not in ("", "0", "1"):
        raise SetupError(f"FFIKIT_CUDA={mode!r}: expected 1 (build with CUDA), 0 (build without) "
                         "or unset (with CUDA when a toolkit is found)")
    if mode == "0":
        return None
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(var):
            candidates.append((f"${var}/bin/nvcc", os.path.join(environ[var], "bin", "nvcc")))
    on_path = shutil.which("nvcc", path=environ.get("PATH", ""))
    candidates += [("nvcc on $PATH", on_path)] if on_path else []
    candidates.append(("the default", default_nvcc))
    looked, problems = [], []
    for where, nvcc in candidates:
        looked.append(f"{where} ({nvcc})")
        if not (os.path.isfile(nvcc) and os.access(nvcc, os.X_OK)):
            continue
        toolkit = _toolkit_of(nvcc)
        if toolkit:
            return toolkit
        problems.append(f"{nvcc} has no include/cuda_runtime.h with a lib*/{CUDA_STATIC_RUNTIME} beside it")
    if mode == "1":
        raise SetupError("FFIKIT_CUDA=1 but no usable CUDA toolkit was found; looked at " + ", ".join(looked)
                         + "".join("; " + p for p in problems) + ". Set CUDA_HOME to the toolkit's directory.")
    for p in problems:
        print(f"ffikit: building without CUDA: {p} (set CUDA_HOME, or FFIKIT_CUDA=0 to silence this)",
              file=sys.stderr)
    return None


def _eval_build_expr(node, names):
    """A Starlark expression of tensor/BUILD made of string literals, lists of them, `+`,
    names bound earlier and `" ".join(...)`: its value; ValueError for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.List):
        return [_eval_build_expr(e, names) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _eval_build_expr(node.left, names) + _eval_build_expr(node.right, names)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant) and len(node.args) == 1 and not node.keywords):
        return node.func.value.value.join(_eval_build_expr(node.args[0], names))
    raise ValueError(ast.dump(node))


def _build_names(path):
    """The module-level names of a BUILD or .bzl file that _eval_build_expr can evaluate."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                names[stmt.targets[0].id] = _eval_build_expr(stmt.value, names)
            except ValueError:
                continue
    return names


def nvcc_flags():
    """tensor/BUILD's NVCC_FLAGS (the kernels genrule's flags), split into arguments."""
    path = _root_path(CUDA_BUILD_FILE)
    names = _build_names(path)
    flags = names.get("NVCC_FLAGS")
    if not isinstance(flags, str):
        raise SetupError(f"{path}: NVCC_FLAGS is not a string built from literals; setup.py reads the kernels' "
                         "nvcc flags from it")
    return flags.split()


try:
    CUDA = find_cuda()
    CUDA_ERROR = None
except SetupError as e:  # raised when building (BuildExt), so that `setup.py sdist` still works
    CUDA, CUDA_ERROR = None, str(e)


def _root_path(*parts):
    return os.path.join(ROOT, *parts)


def library_sources(cuda=False):
    """The C library's sources as Bazel's globs give them (absolute paths); tensor's
    CUDA-only ones (CUDA_ONLY_PREFIX) only when `cuda`."""
    srcs = []
    for comp in COMPONENTS:
        for path in sorted(glob.glob(_root_path(comp, "src", "*.c"))):
            if cuda or not os.path.relpath(path, ROOT).startswith(CUDA_ONLY_PREFIX):
                srcs.append(path)
    return srcs


def cuda_kernel_sources():
    """The .cu files nvcc compiles (absolute paths)."""
    return sorted(glob.glob(_root_path(CUDA_KERNEL_SOURCES)))


def extension_sources():
    """_core's sources: the bindings, testing.c and objects.c (the testing.* globals and
    types), relative to HERE."""
    srcs = [_root_path(TESTING_LIB, "testing.c"), _root_path(TESTING_LIB, "objects.c")] + sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
    return [os.path.relpath(p, HERE) for p in srcs]


# The unstable tier's directory under each component's include/ffikit (and the installed one).
UNSTABLE = "unstable"


def public_headers():
    """(path, installed name) of every public header: the components' and include/ffikit's,
    and the components' unstable tier, installed as unstable/<name>."""
    dirs = [_root_path(c, "include", "ffikit") for c in COMPONENTS] + [_root_path("include", "ffikit")]
    headers = [(p, os.path.basename(p)) for d in dirs for pat in ("*.h", "*.hpp") for p in sorted(glob.glob(os.path.join(d, pat)))]
    return headers + [(p, os.path.join(UNSTABLE, os.path.basename(p))) for c in COMPONENTS
                      for p in sorted(glob.glob(_root_path(c, "include", "ffikit", UNSTABLE, "*.h")))]


def version():
    with open(_root_path("ffi", "include", "ffikit", "base.h"), encoding="utf-8") as f:
        return re.search(r'#define FFK_VERSION "([^"]+)"', f.read()).group(1)


INCLUDE_DIRS = ([_root_path(c, "include") for c in COMPONENTS if os.path.isdir(_root_path(c, "include"))] + [_root_path("include")]
                + [_root_path("third_party", d, "include") for d in VENDORED] + [_root_path(YYJSON_SRC)])
DEFINES = [("_GNU_SOURCE", None)] + ([("FFK_TESTING", "1")] if TESTING else [("NDEBUG", None)])


# ---- C flags ----------------------------------------------------------------------------
# The library's code-generation and link flags are Bazel's, read from tools/defs.bzl (the
# sdist carries it): RELEASE_COPTS (-O2), LIBRARY_CODEGEN_COPTS (hidden visibility, no
# semantic interposition) and LIBFFIKIT_LINKOPTS (the soname...), so the wheel's
# libffikit.so is compiled and linked as `bazel run //:install` builds it.
FLAGS_FILE = os.path.join("tools", "defs.bzl")


def library_flags():
    """(compile flags, link flags) of libffikit.so from tools/defs.bzl."""
    path = _root_path(FLAGS_FILE)
    names = _build_names(path)
    lists = {}
    for name in ("RELEASE_COPTS", "LIBRARY_CODEGEN_COPTS", "LIBFFIKIT_LINKOPTS"):
        value = names.get(name)
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise SetupError(f"{path}: {name} is not a list of string literals; setup.py reads the library's "
                             "flags from it")
        lists[name] = value
    return lists["RELEASE_COPTS"] + lists["LIBRARY_CODEGEN_COPTS"], lists["LIBFFIKIT_LINKOPTS"]


LIBRARY_COPTS, LIBRARY_LINKOPTS = library_flags()
if f"-Wl,-soname,{LIB_NAME}" not in LIBRARY_LINKOPTS:
    raise SetupError(f"{FLAGS_FILE}: LIBFFIKIT_LINKOPTS does not set the soname {LIB_NAME}")
# Python's own CFLAGS may carry -DNDEBUG: the testing variant takes it back (-UNDEBUG).
CFLAGS = ["-std=c11"] + LIBRARY_COPTS + ["-Wall", "-Wno-unused-parameter"] + (["-UNDEBUG"] if TESTING else [])

# The runtime. Not a Python extension: BuildExt links it as a plain shared library (with
# the nvcc-built kernels and the static CUDA runtime in a CUDA build).
RUNTIME_LINK = LIBRARY_LINKOPTS + ["-lrt", "-ldl", "-lm", "-pthread"]
if CUDA:
    RUNTIME_LINK += [CUDA.static_runtime, f"-Wl,--exclude-libs,{CUDA_STATIC_RUNTIME}"]
    RUNTIME_LINK += [f"-l{lib}" for lib in CUDA_SYSTEM_LIBS]
RUNTIME = Extension("ffikit.lib.libffikit", sources=library_sources(cuda=CUDA is not None),
                    # ROOT: cuda_kernels.c includes "tensor/cuda/kernels.h" from the workspace root.
                    include_dirs=INCLUDE_DIRS + ([ROOT, CUDA.include_dir] if CUDA else []),
                    define_macros=DEFINES + ([("FFK_HAS_CUDA", None)] if CUDA else []),
                    extra_compile_args=CFLAGS, extra_link_args=RUNTIME_LINK)

# ROOT for "testing/testing.h", src/ for the bindings' private headers.
CORE = Extension("ffikit._core", sources=extension_sources(),
                 include_dirs=INCLUDE_DIRS + [ROOT, os.path.join(HERE, "src")],
                 define_macros=DEFINES, extra_compile_args=CFLAGS,
                 libraries=["ffikit"], extra_link_args=["-Wl,-rpath,$ORIGIN/lib", "-pthread"])


def cuda_static_link_flags():
    """What a static link of a CUDA build's libffikit.a adds (pkg-config's Libs.private, the
    CMake config's ffikit::ffikit_static): the static CUDA runtime and what it needs, the
    same list as the root BUILD's CUDA_LIBS; none without CUDA. The wheel ships no archive
    (its libffikit.so holds the runtime), so these only keep the two installs' files alike."""
    if not CUDA:
        return []
    return ["-L" + os.path.dirname(CUDA.static_runtime), "-lcudart_static"] + [f"-l{lib}" for lib in CUDA_SYSTEM_LIBS]


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

    def run(self):
        if CUDA_ERROR:
            raise SetupError(CUDA_ERROR)
        super().run()

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
        # nvcc (the longest step of a CUDA build) runs while the C sources compile.
        kernels = self._start_kernels() if CUDA else []
        try:
            objects = self.compiler.compile(RUNTIME.sources, output_dir=self.build_temp,
                                            macros=RUNTIME.define_macros, include_dirs=RUNTIME.include_dirs,
                                            extra_postargs=RUNTIME.extra_compile_args, debug=self.debug)
        except BaseException:
            for proc, _, _ in kernels:  # the C error is the one to report: stop nvcc
                proc.kill()
                proc.wait()
            raise
        objects += self._finish_kernels(kernels)
        self.compiler.link_shared_object(objects, LIB_NAME, output_dir=lib_dir,
                                         extra_postargs=RUNTIME.extra_link_args, debug=self.debug,
                                         build_temp=self.build_temp)

    def _start_kernels(self):
        """Starts nvcc on each tensor/cuda/*.cu as tensor/BUILD's genrule runs it; returns
        (process, source, object) triples for _finish_kernels."""
        flags = nvcc_flags()
        started = []
        for src in cuda_kernel_sources():
            obj = os.path.join(self.build_temp, "cuda", os.path.splitext(os.path.basename(src))[0] + "_cu.o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            cmd = [CUDA.nvcc, *flags, "-c", src, "-o", obj]
            print(" ".join(cmd), flush=True)
            started.append((subprocess.Popen(cmd), src, obj))
        return started

    def _finish_kernels(self, started):
        """Waits for every nvcc started; their objects, or SetupError naming the first failure."""
        failed = [(src, proc.wait()) for proc, src, _ in started]
        failed = [(src, rc) for src, rc in failed if rc != 0]
        if failed:
            raise SetupError(f"nvcc failed (exit status {failed[0][1]}) compiling {failed[0][0]}")
        return [obj for _, _, obj in started]

    def _lay_out_build_files(self, pkg_dir):
        include = os.path.join(pkg_dir, "include")
        shutil.rmtree(include, ignore_errors=True)  # no header left over from an older build
        os.makedirs(os.path.join(include, "ffikit", UNSTABLE))
        os.makedirs(os.path.join(include, "dlpack"))
        for path, name in public_headers():
            shutil.copyfile(path, os.path.join(include, "ffikit", name))
        dlpack = _root_path("third_party", "dlpack")
        shutil.copyfile(os.path.join(dlpack, "include", "dlpack", "dlpack.h"), os.path.join(include, "dlpack", "dlpack.h"))
        shutil.copyfile(os.path.join(dlpack, "LICENSE"), os.path.join(include, "dlpack", "LICENSE"))
        self._lay_out_licenses(os.path.join(pkg_dir, "licenses"))
        v = version()
        _fill(_root_path("ffikit.pc.in"), os.path.join(pkg_dir, "lib", "pkgconfig", "ffikit.pc"), VERSION=v,
              CUDA_LIBS="".join(" " + f for f in cuda_static_link_flags()))
        cmake = os.path.join(pkg_dir, "share", "cmake", "ffikit")
        _fill(_root_path("cmake", "ffikitConfig.cmake.in"), os.path.join(cmake, "ffikitConfig.cmake"), VERSION=v,
              STATIC_LIBS=";".join(STATIC_LIBS + cuda_static_link_flags()))
        _fill(_root_path("cmake", "ffikitConfigVersion.cmake.in"), os.path.join(cmake, "ffikitConfigVersion.cmake"),
              VERSION=v)

    @staticmethod
    def _lay_out_licenses(dest):
        """LICENSE, NOTICE and the vendored libraries' licences: xxHash and yyjson are
        compiled into libffikit.so, so the wheel carries their notices (NOTICE lists them)."""
        shutil.rmtree(dest, ignore_errors=True)
        for rel in LICENSE_FILES + [os.path.join("third_party", d, "LICENSE") for d in VENDORED]:
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copyfile(_root_path(rel), os.path.join(dest, rel))


def sdist_files():
    """Paths (relative to ROOT) of what the sdist carries under csrc/: the C sources and
    private headers, the public headers, testing.c and objects.c, the vendored headers with their
    licences, and the pkg-config and CMake templates."""
    patterns = [os.path.join(c, d, "*") for c in COMPONENTS
                for d in ("src", os.path.join("include", "ffikit"), os.path.join("include", "ffikit", UNSTABLE))]
    patterns += [os.path.join("include", "ffikit", "*.h"), os.path.join("include", "ffikit", "*.hpp"),
                 os.path.join(TESTING_LIB, "testing.c"), os.path.join(TESTING_LIB, "objects.c"),
                 os.path.join(TESTING_LIB, "testing.h"), "ffikit.pc.in", os.path.join("cmake", "*.cmake.in")]
    patterns += LICENSE_FILES
    for d in VENDORED:
        patterns += [os.path.join("third_party", d, "include", "**", "*"), os.path.join("third_party", d, "LICENSE")]
    patterns.append(os.path.join(YYJSON_SRC, "yyjson.c"))
    # The CUDA kernels and the BUILD file their nvcc flags are read from.
    patterns += [os.path.join("tensor", "cuda", "*"), CUDA_BUILD_FILE]
    # The file the library's C flags are read from (library_flags).
    patterns.append(FLAGS_FILE)
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
        for rel in LICENSE_FILES:
            shutil.copy2(_root_path(rel), os.path.join(base_dir, rel))


setup(version=version(), ext_modules=[CORE], cmdclass={"build_ext": BuildExt, "sdist": SDist})
