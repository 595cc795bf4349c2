"""Where ffikit's C library, headers and build configs live, for code that builds against it.

The wheel (and the package Bazel builds for its tests) has one layout::

    ffikit/lib/libffikit.so                 the C runtime, which ffikit._core links to
    ffikit/include/ffikit/*.h, *.hpp        the public headers (<ffikit/ffikit.h> includes all)
    ffikit/include/dlpack/dlpack.h          the DLPack header they include
    ffikit/lib/pkgconfig/ffikit.pc          pkg-config file (relocatable: ${pcfiledir})
    ffikit/share/cmake/ffikit/              ffikitConfig.cmake: imported target ffikit::ffikit

Everything here answers from that layout; ``find_lib_path`` answers with the library the
process actually uses, so an extension linked against it shares the process's one runtime.
``python -m ffikit.config`` prints the same answers for build scripts.
"""
from __future__ import annotations

import ctypes
import os

__all__ = [
    "find_include_path", "find_dlpack_include_path", "find_include_paths", "include_paths",
    "find_lib_path", "find_libffikit", "find_cmake_path", "find_pkgconfig_path", "version", "__version__",
]

#: The library's file name and soname: one name in the wheel, in `bazel run //:install` and
#: in Bazel's test package, so a module linked against any of them binds to the loaded one.
LIB_NAME = "libffikit.so"

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _package_path(*parts: str, what: str) -> str:
    path = os.path.join(_PKG_DIR, *parts)
    if not os.path.exists(path):
        raise RuntimeError(f"ffikit's {what} is missing: {path} does not exist "
                           "(a package built without it; reinstall ffikit with pip)")
    return path


def find_include_path() -> str:
    """The directory holding ``ffikit/ffikit.h`` (pass it as ``-I``).

    Raises RuntimeError when the package holds no headers.
    """
    path = _package_path("include", what="include directory")
    _package_path("include", "ffikit", "ffikit.h", what="header ffikit/ffikit.h")
    return path


def find_dlpack_include_path() -> str:
    """The directory holding ``dlpack/dlpack.h``, which ffikit's headers include.

    Raises RuntimeError when the package holds no DLPack header.
    """
    path = _package_path("include", what="include directory")
    _package_path("include", "dlpack", "dlpack.h", what="header dlpack/dlpack.h")
    return path


def find_include_paths() -> list[str]:
    """Every directory a compiler needs (``-I``) to include ``<ffikit/ffikit.h>``: ffikit's
    include directory and DLPack's, each once.

    Raises RuntimeError when the package holds no headers.
    """
    paths = [find_include_path()]
    dlpack = find_dlpack_include_path()
    if dlpack not in paths:
        paths.append(dlpack)
    return paths


def include_paths() -> list[str]:
    """The same as :func:`find_include_paths` (tvm_ffi's name)."""
    return find_include_paths()


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loaded_library_path() -> str | None:
    """The file the dynamic loader mapped for libffikit.so in this process, or None."""
    try:
        lib = ctypes.CDLL(LIB_NAME, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return None
    libc = ctypes.CDLL(None)
    dladdr = libc.dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    if not dladdr(ctypes.cast(lib.ffk_version, ctypes.c_void_p), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(os.fsdecode(info.dli_fname))


def find_lib_path() -> str:
    """The ``libffikit.so`` this process uses: the one ``ffikit._core`` is linked to.

    Link an extension against it (``-L<dir> -lffikit``) and it shares the process's
    registry, type table and error slots. Raises RuntimeError when the library is missing.
    """
    from . import _core  # noqa: F401 - loads libffikit.so as _core's dependency

    path = _loaded_library_path()
    if path is not None:
        return path
    return os.path.realpath(_package_path("lib", LIB_NAME, what="library " + LIB_NAME))


def find_libffikit() -> str:
    """The same as :func:`find_lib_path` (named like tvm_ffi's ``find_libtvm_ffi``)."""
    return find_lib_path()


def find_cmake_path() -> str:
    """The directory holding ``ffikitConfig.cmake``: pass it as ``-Dffikit_DIR=`` (or put its
    prefix on ``CMAKE_PREFIX_PATH``), then ``find_package(ffikit)`` and link ``ffikit::ffikit``.

    Raises RuntimeError when the package holds no CMake config.
    """
    path = _package_path("share", "cmake", "ffikit", what="CMake config directory")
    _package_path("share", "cmake", "ffikit", "ffikitConfig.cmake", what="CMake config ffikitConfig.cmake")
    return path


def find_pkgconfig_path() -> str:
    """The directory holding ``ffikit.pc``: put it on ``PKG_CONFIG_PATH``, then
    ``pkg-config --cflags --libs ffikit``.

    Raises RuntimeError when the package holds no pkg-config file.
    """
    path = _package_path("lib", "pkgconfig", what="pkg-config directory")
    _package_path("lib", "pkgconfig", "ffikit.pc", what="pkg-config file ffikit.pc")
    return path


def version() -> str:
    """ffikit's version, that of the loaded C library (``ffikit.__version__``)."""
    from ._core import __version__ as v

    return str(v)


def __getattr__(name: str) -> str:
    # `libinfo.__version__` without importing _core when the module itself is imported.
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'ffikit.libinfo' has no attribute {name!r}")
