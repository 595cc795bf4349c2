"""load_module: Functions from a shared library following the module convention."""
from __future__ import annotations

import json
import os

import pytest

import ffikit


def _testing_module_path() -> str | None:
    """The module next to the tests in Bazel's runfiles (built for the same configuration)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "..", "testing", "libffikit_testing.so"))
    return candidate if os.path.exists(candidate) else None


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="cannot load module"):
        ffikit.load_module(tmp_path / "nope.so")


def test_a_library_that_is_not_a_module_is_refused():
    import ctypes.util

    libm = ctypes.util.find_library("m")
    with pytest.raises(RuntimeError, match="not an ffikit module"):
        ffikit.load_module(libm)


@pytest.fixture(scope="module")
def testing_module():
    """Loaded once, before the per-test object count: a module whose init ran stays loaded
    (and its init re-registers the testing.* globals) for the life of the process."""
    path = _testing_module_path()
    if path is None:
        pytest.skip("libffikit_testing.so is not built next to this checkout")
    return path, ffikit.load_module(path)


def test_functions_of_a_loaded_module(testing_module):
    path, m = testing_module
    assert isinstance(m, ffikit.Module) and m.path == path
    f = m.add_one
    assert f(41) == 42 and m.add_one is f  # looked up once, then cached on the module
    assert m.get_function("add_one")(1) == 2
    del m.__dict__["add_one"], f
    with pytest.raises(AttributeError, match="has no function `missing`"):
        m.get_function("missing")


# ---- Module lookups, docs and metadata (tvm_ffi's Module API) ------------------------

ADD_ONE_SCHEMA = '{"type":"ffi.Function","named_args":{"return":[{"type":"int"}],"params":[{"type":"int"}]}}'


def test_item_access_and_implements_function(testing_module):
    _, m = testing_module
    f = m["add_one"]
    assert isinstance(f, ffikit.Function) and f(1) == 2
    assert m.implements_function("add_one") and m.implements_function("add_one", query_imports=True)
    assert not m.implements_function("missing") and not m.implements_function("not a name")
    with pytest.raises(AttributeError, match="has no function `missing`"):
        m["missing"]
    with pytest.raises(ValueError, match="Can only take string as function name"):
        m[1]  # type: ignore[index]
    with pytest.raises(AttributeError):
        m.get_function("missing", query_imports=True)
    del f


def test_function_doc_and_metadata_of_a_module(testing_module):
    _, m = testing_module
    assert m.get_function_doc("add_one") == "Returns x + 1."
    assert m.get_function_doc("missing") is None
    meta = m.get_function_metadata("add_one")
    assert meta == {"type_schema": ADD_ONE_SCHEMA, "name": "add_one", "arity": 1, "arg_names": [None],
                    "doc": "Returns x + 1."}
    assert json.loads(meta["type_schema"])["named_args"]["params"] == [{"type": "int"}]
    assert m.get_function_metadata("missing") is None
    assert m.get_function_metadata("missing", query_imports=False) is None


def test_get_global_func_metadata_typed_untyped_and_missing():
    assert ffikit.get_global_func_metadata("testing.add_one") == {
        "type_schema": ADD_ONE_SCHEMA, "name": "testing.add_one", "arity": 1, "arg_names": [None]}
    # Untyped: tvm_ffi's bare function schema.
    assert ffikit.get_global_func_metadata("testing.echo") == {
        "type_schema": '{"type":"ffi.Function"}', "name": "testing.echo"}
    schema = json.loads(ffikit.get_global_func_metadata("testing.schema_id_map_str_int")["type_schema"])
    assert schema["named_args"]["params"] == [
        {"type": "ffi.Map", "args": [{"type": "ffi.String"}, {"type": "int"}]}]
    with pytest.raises(RuntimeError, match="global function `no_such.function`: it is not registered"):
        ffikit.get_global_func_metadata("no_such.function")
    with pytest.raises(TypeError, match="name must be a str"):
        ffikit.get_global_func_metadata(3)  # type: ignore[arg-type]


def test_metadata_names_with_quotes_and_backslashes_round_trip():
    def f() -> None:
        pass

    f.__qualname__ = 'a "quoted"\\name\twith tab'
    ffikit.register_global_func("test_module.quoted", f)
    try:
        assert ffikit.get_global_func_metadata("test_module.quoted") == {
            "type_schema": '{"type":"ffi.Function"}', "name": f.__qualname__}
    finally:
        ffikit.remove_global_func("test_module.quoted")


def test_system_lib_finds_functions_in_the_global_scope(testing_module):
    import ctypes

    path, _ = testing_module
    # The module is already loaded (RTLD_LOCAL); reopening it RTLD_GLOBAL puts its symbols
    # into the process's global scope, where the system library looks.
    ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
    lib = ffikit.system_lib()
    assert isinstance(lib, ffikit.Module) and lib.path == "<system_lib>"
    assert lib["add_one"](41) == 42
    assert lib.get_function_doc("add_one") == "Returns x + 1."
    assert lib.get_function_metadata("add_one")["type_schema"] == ADD_ONE_SCHEMA  # type: ignore[index]
    # The prefix is tried first, then the bare name.
    prefixed = ffikit.system_lib("add_")
    assert prefixed.implements_function("one") and prefixed["one"](1) == 2
    assert prefixed["add_one"](2) == 3
    with pytest.raises(AttributeError, match="no symbol `ffikit_fn_add_nothing` or `ffikit_fn_nothing`"):
        prefixed.nothing
    del lib, prefixed


def test_system_lib_refuses_a_prefix_that_is_not_part_of_a_symbol():
    with pytest.raises(ValueError, match="symbol prefix `testing.`"):
        ffikit.system_lib("testing.")
    with pytest.raises(TypeError, match="symbol_prefix must be a str"):
        ffikit.system_lib(None)  # type: ignore[arg-type]


def test_init_ffi_api_fills_a_module_with_a_namespace():
    import sys
    import types

    target = types.ModuleType("ffikit_test_api")
    sys.modules["ffikit_test_api"] = target
    ffikit.register_global_func("ffikit_test_ns.double", lambda x: 2 * x)
    ffikit.register_global_func("ffikit_test_ns.inner.skip", lambda: None)
    ffikit.register_global_func("ffikit_test_nsx.other", lambda: None)
    try:
        ffikit.init_ffi_api("ffikit_test_ns", "ffikit_test_api")
        assert target.double(4) == 8
        assert not hasattr(target, "skip") and not hasattr(target, "inner") and not hasattr(target, "other")
        # Without a target, the module named like the namespace.
        ns = types.ModuleType("testing")
        saved = sys.modules.get("testing")
        sys.modules["testing"] = ns
        try:
            ffikit.init_ffi_api("testing")
            assert ns.add_one(1) == 2 and ns.echo("x") == "x"
        finally:
            if saved is None:
                del sys.modules["testing"]
            else:
                sys.modules["testing"] = saved
        with pytest.raises(KeyError):
            ffikit.init_ffi_api("ffikit_test_ns", "no_such_module_imported")
    finally:
        for n in ("ffikit_test_ns.double", "ffikit_test_ns.inner.skip", "ffikit_test_nsx.other"):
            ffikit.remove_global_func(n)
        del sys.modules["ffikit_test_api"]
        del target, ns


# ---- keep_module_alive; libinfo's loaders (tvm_ffi's load_lib_module / load_lib_ctypes) ----

def _is_mapped(path: str) -> bool:
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        return any(line.rstrip().endswith(real) for line in f)


def _loaded_libm() -> str:
    import ctypes

    ctypes.CDLL("libm.so.6")
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if os.path.basename(p).startswith("libm.so"):
                return p
    pytest.skip("libm is not mapped from a file")


@pytest.mark.skipif(bool(os.environ.get("FFIKIT_SANITIZED")),
                    reason="two copies of one ASan-instrumented library in a process are an ASan odr-violation; "
                           "module_test.cc's KeepLoadedOutlivesTheLastHolder covers ffk_module_keep_loaded under ASan")
def test_keep_module_alive_keeps_the_library_after_its_last_holder(tmp_path):
    # Copies of a module without an init entry (other files: other mappings), dropped after
    # use: the kept one stays mapped, the other is unloaded with its last holder.
    here = os.path.dirname(os.path.abspath(__file__))
    plain = os.path.normpath(os.path.join(here, "..", "..", "..", "tests", "ffi", "libtest_module_plain.so"))
    if not os.path.exists(plain):
        pytest.skip("libtest_module_plain.so is not built next to this checkout")
    kept, dropped = tmp_path / "libkept.so", tmp_path / "libdropped.so"
    for p in (kept, dropped):
        p.write_bytes(open(plain, "rb").read())
    m = ffikit.load_module(kept)
    assert m.add_one(1) == 2
    n = ffikit.load_module(dropped, keep_module_alive=False)
    assert n.add_one(2) == 3
    del m, n
    assert _is_mapped(str(kept))
    assert not _is_mapped(str(dropped))


def test_load_lib_module_searches_the_callers_directories(testing_module):
    from pathlib import Path

    import ffikit.libinfo as libinfo

    path, _ = testing_module
    d = Path(os.path.dirname(path))
    assert libinfo.find_library("no-such-distribution", "ffikit_testing", [d]) == Path(path).resolve()
    m = libinfo.load_lib_module("no-such-distribution", "ffikit_testing", extra_lib_paths=[d])
    assert isinstance(m, ffikit.Module) and m.add_one(1) == 2
    del m
    with pytest.raises(TypeError, match=r"extra_lib_paths\[0\] must be a pathlib.Path, got str"):
        libinfo.load_lib_module("no-such-distribution", "ffikit_testing", extra_lib_paths=[str(d)])  # type: ignore[list-item]


def test_a_library_found_nowhere_is_a_clear_error(tmp_path, monkeypatch):
    import ffikit.libinfo as libinfo

    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "env"))
    with pytest.raises(RuntimeError) as info:
        libinfo.load_lib_ctypes("no-such-distribution", "no_such_target", "RTLD_LOCAL",
                                extra_lib_paths=[tmp_path])
    text = str(info.value)
    assert "cannot find libno_such_target.so" in text and "'no-such-distribution'" in text
    assert str(tmp_path) in text and str(tmp_path / "env") in text
    with pytest.raises(ValueError, match="mode must name a ctypes RTLD_\\* flag .* got 'LOCAL'"):
        libinfo.load_lib_ctypes("no-such-distribution", "m", "LOCAL")


def test_load_lib_ctypes_finds_a_distributions_library_then_the_environment(tmp_path, monkeypatch):
    import ctypes
    import sys

    import ffikit.libinfo as libinfo

    # A distribution whose RECORD lists its library, as an installed wheel's does.
    site = tmp_path / "site"
    (site / "fakeext").mkdir(parents=True)
    (site / "fakeext" / "libfakeext.so").write_bytes(open(_loaded_libm(), "rb").read())
    info = site / "fakeext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeext\nVersion: 1.0\n")
    (info / "RECORD").write_text("fakeext/libfakeext.so,,\nfakeext-1.0.dist-info/METADATA,,\n")
    monkeypatch.setattr(sys, "path", [str(site)] + sys.path)
    lib = libinfo.load_lib_ctypes("fakeext", "fakeext", "RTLD_LOCAL")
    assert isinstance(lib, ctypes.CDLL) and lib._name == str((site / "fakeext" / "libfakeext.so").resolve())
    lib.cos.restype = ctypes.c_double
    lib.cos.argtypes = [ctypes.c_double]
    assert lib.cos(0.0) == 1.0
    # Not installed: LD_LIBRARY_PATH's directories are searched.
    env = tmp_path / "env"
    env.mkdir()
    (env / "libfakeenv.so").write_bytes(open(_loaded_libm(), "rb").read())
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent{os.pathsep}{env}")
    assert libinfo.find_library("fakeenv", "fakeenv") == (env / "libfakeenv.so").resolve()
