"""Where ffikit's C library, headers and build configs live, for code that builds against it.

The wheel (and the package Bazel builds for its tests) has one layout::

    ffikit/lib/libffikit.so                 the C runtime, which ffikit._core links to
    ffikit/include/ffikit/*.h, *.hpp        the public headers (<ffikit/ffikit.h> includes all)
    ffikit/include/ffikit/unstable/*.h      the bindings' unstable tier (never included by the above)
    ffikit/include/dlpack/dlpack.h          the DLPack header they include
    ffikit/lib/pkgconfig/ffikit.pc          pkg-config file (relocatable: ${pcfiledir})
    ffikit/share/cmake/ffikit/              ffikitConfig.cmake: imported target ffikit::ffikit

Everything here answers from that layout; ``find_lib_path`` answers with the library the
process actually uses, so an extension linked against it shares the process's one runtime.
``python -m ffikit.config`` prints the same answers for build scripts.

``load_lib_ctypes`` and ``load_lib_module`` find and load another package's shared library
(an extension built against ffikit) the way tvm_ffi's do, so a package's loader code runs
unchanged: first the files the installed distribution lists, then the directories the
caller names, then ffikit's own ``lib`` directory, then ``LD_LIBRARY_PATH`` and ``PATH``.
"""
from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._object import Module

__all__ = [
    "find_include_path", "find_dlpack_include_path", "find_include_paths", "include_paths",
    "find_lib_path", "find_libffikit", "find_cmake_path", "find_pkgconfig_path", "version", "__version__",
    "load_lib_ctypes", "load_lib_module", "find_library",
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


def _library_file_names(target_name: str) -> tuple[str, ...]:
    if sys.platform.startswith("win32"):
        return (f"{target_name}.dll",)
    if sys.platform.startswith("darwin"):
        return (f"lib{target_name}.dylib", f"lib{target_name}.so")
    return (f"lib{target_name}.so",)


def _from_distribution(package: str, names: tuple[str, ...]) -> Path | None:
    """The first file named one of ``names`` that the installed distribution ``package``
    lists (its RECORD), or None when it is not installed or lists none."""
    import importlib.metadata as metadata

    try:
        files = metadata.distribution(package).files or []
    except (metadata.PackageNotFoundError, OSError):
        return None
    for f in files:
        if f.name in names:
            try:
                path = Path(f.locate()).resolve()
            except OSError:
                continue
            if path.is_file():
                return path
    return None


def _env_dirs(var: str) -> list[Path]:
    value = os.environ.get(var, "")
    return [Path(p.strip()) for p in value.split(os.pathsep) if p.strip()]


def find_library(package: str, target_name: str, extra_lib_paths: list[Path] | None = None) -> Path:
    """Where ``load_lib_ctypes``/``load_lib_module`` find the library of ``target_name``
    (``lib<target_name>.so`` on Linux) for the distribution ``package``.

    Searched in order: the files the installed distribution lists; ``extra_lib_paths``
    (each a :class:`pathlib.Path`, else TypeError); ffikit's own ``lib`` directory; the
    directories of ``LD_LIBRARY_PATH`` (``DYLD_LIBRARY_PATH`` on macOS) and ``PATH``.
    Raises RuntimeError naming the file and every directory searched when none has it.
    """
    if extra_lib_paths is not None:
        for i, p in enumerate(extra_lib_paths):
            if not isinstance(p, Path):
                raise TypeError(f"extra_lib_paths[{i}] must be a pathlib.Path, got {type(p).__name__}: {p!r}")
    names = _library_file_names(target_name)
    found = _from_distribution(package, names)
    if found is not None:
        return found
    dirs: list[Path] = list(extra_lib_paths or [])
    dirs.append(Path(_PKG_DIR) / "lib")
    dirs += _env_dirs("DYLD_LIBRARY_PATH" if sys.platform.startswith("darwin") else "LD_LIBRARY_PATH")
    dirs += _env_dirs("PATH")
    for d in dirs:
        for name in names:
            try:
                path = (d / name).resolve()
                if path.is_file():
                    return path
            except OSError:
                continue
    searched = "\n  ".join(str(d) for d in dirs)
    raise RuntimeError(f"cannot find {', '.join(names)} (distribution {package!r} lists none); "
                       f"searched directories:\n  {searched}")


def load_lib_ctypes(package: str, target_name: str, mode: str,
                    extra_lib_paths: list[Path] | None = None) -> ctypes.CDLL:
    """Loads the shared library of ``target_name`` for the distribution ``package`` (found
    as :func:`find_library` says) with ctypes. ``mode`` names a ctypes flag, usually
    ``"RTLD_LOCAL"`` or ``"RTLD_GLOBAL"``; another name is a ValueError.
    """
    flag = getattr(ctypes, mode, None) if isinstance(mode, str) and mode.startswith("RTLD_") else None
    if not isinstance(flag, int):
        raise ValueError(f"mode must name a ctypes RTLD_* flag such as 'RTLD_LOCAL' or 'RTLD_GLOBAL', got {mode!r}")
    path = find_library(package, target_name, extra_lib_paths)
    return ctypes.CDLL(str(path), flag)


def load_lib_module(package: str, target_name: str, keep_module_alive: bool = True,
                    extra_lib_paths: list[Path] | None = None) -> Module:
    """Loads the shared library of ``target_name`` for the distribution ``package`` (found
    as :func:`find_library` says) as an ffikit Module (:func:`ffikit.load_module`, with its
    ``keep_module_alive``). Raises what :func:`find_library` and ``load_module`` raise.
    """
    from ._object import load_module

    path = find_library(package, target_name, extra_lib_paths)
    return load_module(path, keep_module_alive=keep_module_alive)


def version() -> str:
    """ffikit's version, that of the loaded C library (``ffikit.__version__``)."""
    from ._core import __version__ as v

    return str(v)


def __getattr__(name: str) -> str:
    # `libinfo.__version__` without importing _core when the module itself is imported.
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'ffikit.libinfo' has no attribute {name!r}")
