"""One version: FFK_VERSION in ffi/include/ffikit/base.h is the source of truth; the Python
package (`ffikit.__version__`), the loaded C library (`ffk_version()`), the installed
`ffikit.pc`, both Rust crates (and ffikit's dependency on ffikit-sys) and the newest entry of
CHANGELOG.md must all say the same.

The installed half runs everywhere (also from an installed wheel with no source tree); the
source half reads the files of the checkout, which Bazel's python_test carries in its
runfiles at their repository paths (//:version_sources), so `./test.sh` runs both.
"""
from __future__ import annotations

import ctypes
import os
import re

import pytest

import ffikit
from ffikit import libinfo

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BASE_H = os.path.join(ROOT, "ffi", "include", "ffikit", "base.h")
IN_SOURCE_TREE = os.path.exists(BASE_H)


def _c_library_version() -> str:
    lib = ctypes.CDLL(libinfo.find_lib_path())
    lib.ffk_version.restype = ctypes.c_char_p
    return lib.ffk_version().decode()


def _pc_version() -> str:
    path = os.path.join(libinfo.find_pkgconfig_path(), "ffikit.pc")
    with open(path, encoding="utf-8") as f:
        m = re.search(r"^Version:\s*(\S+)\s*$", f.read(), re.MULTILINE)
    assert m, f"{path} has no Version line"
    return m.group(1)


def _read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def _cargo_package_version(manifest: str) -> str:
    """`version` of the [package] table of a Cargo.toml (read as text: tomllib is 3.11+)."""
    package = re.search(r"^\[package\]\n(.*?)(?=^\[|\Z)", manifest, re.MULTILINE | re.DOTALL)
    assert package, "no [package] table"
    m = re.search(r'^version\s*=\s*"([^"]+)"', package.group(1), re.MULTILINE)
    assert m, "no version in [package]"
    return m.group(1)


def test_python_package_c_library_and_pkgconfig_agree():
    version = ffikit.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert _c_library_version() == version
    assert libinfo.version() == version
    assert _pc_version() == version


@pytest.mark.skipif(not IN_SOURCE_TREE, reason="needs the source tree (ffi/include/ffikit/base.h)")
def test_every_version_in_the_source_tree_is_ffk_version():
    m = re.search(r'^#define FFK_VERSION "([^"]+)"$', _read("ffi", "include", "ffikit", "base.h"), re.MULTILINE)
    assert m, "base.h defines no FFK_VERSION"
    version = m.group(1)
    assert ffikit.__version__ == version

    sys_manifest = _read("bindings", "rust", "ffikit-sys", "Cargo.toml")
    safe_manifest = _read("bindings", "rust", "ffikit", "Cargo.toml")
    assert _cargo_package_version(sys_manifest) == version, "bindings/rust/ffikit-sys/Cargo.toml"
    assert _cargo_package_version(safe_manifest) == version, "bindings/rust/ffikit/Cargo.toml"
    dep = re.search(r"^ffikit-sys\s*=\s*\{([^}]*)\}", safe_manifest, re.MULTILINE)
    assert dep, "bindings/rust/ffikit/Cargo.toml does not depend on ffikit-sys"
    dep_version = re.search(r'version\s*=\s*"=?([^"]+)"', dep.group(1))
    assert dep_version and dep_version.group(1) == version, \
        f"ffikit's dependency on ffikit-sys: {dep.group(0)!r}, expected version {version!r}"

    releases = re.findall(r"^## (\S+)", _read("CHANGELOG.md"), re.MULTILINE)
    assert releases and releases[0] == version, f"CHANGELOG.md's newest release is {releases[:1]}, not {version}"
