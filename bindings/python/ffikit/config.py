"""``python -m ffikit.config``: the flags and paths a build needs to compile against ffikit.

The options follow ``tvm-ffi-config`` and ``pybind11-config``: each one asked for prints one
line, in the order of ``--help``; no option prints the help. For example::

    cc -shared -fPIC mymod.c $(python -m ffikit.config --cflags --libs) -o mymod.so
    cmake -Dffikit_DIR=$(python -m ffikit.config --cmakedir) ...
    PKG_CONFIG_PATH=$(python -m ffikit.config --pkgconfigdir) pkg-config --libs ffikit
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from . import libinfo


def _libdir() -> str:
    return os.path.dirname(libinfo.find_lib_path())


def _cflags() -> str:
    return " ".join(f"-I{d}" for d in libinfo.find_include_paths())


def _libs() -> str:
    libdir = _libdir()
    return f"-L{libdir} -lffikit -Wl,-rpath,{libdir}"


# (option, help, answer), in the order answers are printed.
_OPTIONS: list[tuple[str, str, Callable[[], str]]] = [
    ("--version", "print ffikit's version", libinfo.version),
    ("--includedir", "print the directory holding ffikit/ffikit.h", libinfo.find_include_path),
    ("--dlpack-includedir", "print the directory holding dlpack/dlpack.h", libinfo.find_dlpack_include_path),
    ("--cmakedir", "print the directory holding ffikitConfig.cmake", libinfo.find_cmake_path),
    ("--pkgconfigdir", "print the directory holding ffikit.pc", libinfo.find_pkgconfig_path),
    ("--libdir", "print the directory holding libffikit.so", _libdir),
    ("--libfiles", "print the full path of libffikit.so", libinfo.find_lib_path),
    ("--libs", "print the linker flags: -L<libdir> -lffikit -Wl,-rpath,<libdir>", _libs),
    ("--cflags", "print the C compiler flags (-I for every include directory)", _cflags),
    ("--cxxflags", "print the C++ compiler flags (the C flags and -std=c++17)", lambda: _cflags() + " -std=c++17"),
    ("--ldflags", "print the linker search flag -L<libdir>", lambda: f"-L{_libdir()}"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ffikit.config",
                                     description="Print what a build needs to compile and link against ffikit.")
    for option, help_text, _ in _OPTIONS:
        parser.add_argument(option, action="store_true", help=help_text)
    args = parser.parse_args(argv)
    chosen = [answer for option, _, answer in _OPTIONS if getattr(args, option[2:].replace("-", "_"))]
    if not chosen:
        parser.print_help()
        return 0
    try:
        for answer in chosen:
            print(answer())
    except RuntimeError as e:
        print(f"ffikit.config: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
