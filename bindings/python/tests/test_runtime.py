"""One runtime, shipped: _core links ffikit/lib/libffikit.so, and what an extension author
builds against the package (python -m ffikit.config, pkg-config, CMake) binds to that one
copy. Runs in Bazel's python_test (the package there has the wheel's layout) and against
an installed wheel."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import ffikit
from ffikit import _core, libinfo

HERE = os.path.dirname(os.path.abspath(__file__))
CC = shutil.which(os.environ.get("CC", "cc"))
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")

# A module as an extension author writes it: a type of its own, a global Function that
# makes objects of it, a typed Function reading one back, an error of its own kind, and
# where its references to the runtime resolve.
EXT_SOURCE = textwrap.dedent(r"""
    #include <ffikit/ffikit.h>
    #include <stdint.h>

    FFK_MODULE_ABI_VERSION;

    typedef struct {
      ffk_object header;
      int64_t value;
    } ext_counter;

    static int32_t g_counter_type = -1;

    static void counter_deleter(void *self, int which) {
      if (which & FFK_DELETER_FREE) ffk_object_free((ffk_object *)self);
    }

    static int make_counter(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      int64_t v;
      if (nargs != 1) return ffk_error_set(FFK_ERR_TYPE, "make_counter takes 1 argument, got %d", (int)nargs);
      if (ffk_any_as_int(&args[0], &v) != 0) return -1;
      ext_counter *c = (ext_counter *)ffk_object_alloc(g_counter_type, sizeof *c, counter_deleter);
      if (c == NULL) return -1;
      c->value = v;
      *result = ffk_any_object_steal(&c->header);
      return 0;
    }

    static int counter_value(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      ffk_object *o;
      if (nargs != 1) return ffk_error_set(FFK_ERR_TYPE, "counter_value takes 1 argument, got %d", (int)nargs);
      if (ffk_any_as_object(&args[0], g_counter_type, &o) != 0) return -1;
      *result = ffk_any_int(((ext_counter *)o)->value);
      ffk_object_release(o);
      return 0;
    }

    static int fail(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      return ffk_error_set("ExtRuntimeError", "the extension failed on purpose (%d)", 42);
    }

    static int runtime_address(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      *result = ffk_any_int((int64_t)(intptr_t)ffk_function_call);
      return 0;
    }

    FFK_MODULE_EXPORT(counter_value, counter_value)
    FFK_MODULE_EXPORT(fail, fail)
    FFK_MODULE_EXPORT(runtime_address, runtime_address)

    FFK_MODULE_INIT(m) {
      g_counter_type = ffk_type_register("ext_runtime.Counter", FFK_TYPE_OBJECT);
      if (g_counter_type < 0) return -1;
      ffk_function *f = ffk_function_new_typed("ext_runtime.make_counter", "(start: int) -> Object", make_counter, NULL, NULL);
      if (f == NULL) return -1;
      int rc = ffk_function_register("ext_runtime.make_counter", f, false);
      ffk_object_release((ffk_object *)f);
      return rc;
    }
""")

# A program linked against the package's library: the version, and a container's repr
# (set up by the containers when the library loads).
PROGRAM_SOURCE = textwrap.dedent(r"""
    #include <ffikit/ffikit.h>
    #include <stdio.h>

    int main(void) {
      ffk_tuple *t = ffk_tuple_pack(2, ffk_any_int(1), ffk_any_int(2));
      if (t == NULL) return 1;
      ffk_any tv = ffk_any_object_steal(&t->header);
      ffk_string *r = ffk_any_repr(&tv);
      if (r == NULL) return 1;
      printf("ffikit %s %s\n", ffk_version(), ffk_string_data(r));
      ffk_object_release(&r->header);
      ffk_any_release(&tv);
      return ffk_abi_version() == FFK_ABI_VERSION ? 0 : 2;
    }
""")


def _config(*options: str) -> list[str]:
    """The answer of `python -m ffikit.config OPTIONS`, split as a shell would."""
    r = _run([sys.executable, "-m", "ffikit.config", *options], env=os.environ)
    return r.stdout.split()


def _sanitizer_flags() -> list[str]:
    """Under Bazel's --config=asan the library is instrumented: a program linked to it must be too."""
    return ["-fsanitize=address,undefined"] if os.environ.get("FFIKIT_SANITIZED") else []


def _tool_env(**extra: str) -> dict[str, str]:
    """The environment for compilers, build tools and the programs built here: without the
    sanitizer runtime run_pytest.sh preloads into Python under --config=asan (tools such as
    make trip its strict checks; a program built with -fsanitize links the runtime itself)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(extra)
    return env


def _run(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """Runs cmd (with _tool_env() unless env is given) and checks it succeeded."""
    r = subprocess.run(cmd, capture_output=True, text=True, env=_tool_env() if env is None else env, **kw)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def _libffikit_mappings() -> set[str]:
    """The distinct files named libffikit*.so* that this process has mapped."""
    files = set()
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith("libffikit.so"):
                files.add(os.path.realpath(parts[5].strip()))
    return files


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _file_defining(address: int) -> str:
    dladdr = ctypes.CDLL(None).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    assert dladdr(address, ctypes.byref(info)), hex(address)
    return os.path.realpath(os.fsdecode(info.dli_fname))


def _runtime_address() -> int:
    lib = ctypes.CDLL(libinfo.find_lib_path())
    return ctypes.cast(lib.ffk_function_call, ctypes.c_void_p).value


@pytest.fixture(scope="module")
def ext_module(tmp_path_factory):
    """The extension, compiled with `cc $(python -m ffikit.config --cflags --libs)` and
    loaded once (its init registers globals that live as long as the process)."""
    if CC is None:
        pytest.skip("no C compiler (cc) on PATH")
    d = tmp_path_factory.mktemp("ext")
    src, so = d / "ext_runtime.c", d / "libext_runtime.so"
    src.write_text(EXT_SOURCE)
    _run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-shared", "-fPIC", str(src),
          *_config("--cflags", "--libs"), "-o", str(so)])
    return so, ffikit.load_module(so)


def test_core_holds_no_runtime_of_its_own():
    """ffk_* looked up through _core resolves into libffikit.so, the library libinfo names."""
    core = ctypes.CDLL(_core.__file__)
    lib = libinfo.find_lib_path()
    assert os.path.basename(lib) == "libffikit.so"
    for name in ["ffk_function_call", "ffk_type_register", "ffk_error_set_at", "ffk_array_push"]:
        address = ctypes.cast(getattr(core, name), ctypes.c_void_p).value
        assert _file_defining(address) == lib, name
    nm = shutil.which("nm")
    if nm is not None:
        defined = _run([nm, "-D", "--defined-only", _core.__file__]).stdout.split()
        assert not [s for s in defined if s.startswith("ffk_")], "_core exports ffk_* symbols of its own"


@pytest.fixture(scope="module")
def testing_module():
    """The testing module (undefined ffk_* symbols, no dependency on libffikit.so), loaded
    once when it is built beside this checkout (Bazel's runfiles): its init registers
    globals that live as long as the process, so it loads outside the per-test count."""
    path = os.path.normpath(os.path.join(HERE, "..", "..", "..", "testing", "libffikit_testing.so"))
    return ffikit.load_module(path) if os.path.exists(path) else None


@needs_cc
def test_process_maps_exactly_one_runtime(ext_module, testing_module):
    """After loading the testing module and an extension linked with -lffikit, one
    libffikit.so is mapped: the one libinfo names."""
    if testing_module is not None:
        assert testing_module.get_function("scale")([1, 2], k=2) == [2.0, 4.0]
    assert _libffikit_mappings() == {libinfo.find_lib_path()}


@needs_cc
def test_extension_binds_to_the_process_runtime(ext_module):
    so, m = ext_module
    assert m.get_function("runtime_address")() == _runtime_address()
    readelf = shutil.which("readelf")
    if readelf is not None:
        assert "Shared library: [libffikit.so]" in _run([readelf, "-d", str(so)]).stdout


@needs_cc
def test_extension_registers_a_global_and_a_type_python_sees(ext_module):
    _, m = ext_module
    make_counter = ffikit.get_global_func("ext_runtime.make_counter")
    assert "ext_runtime.make_counter" in ffikit.list_global_func_names()
    c = make_counter(41)
    index = _core._type_key_to_index("ext_runtime.Counter")
    assert index is not None and index >= 128
    assert c.type_index == index and c.type_key == "ext_runtime.Counter"
    assert type(c).__qualname__ == "ext_runtime.Counter" and isinstance(c, ffikit.Object)
    assert m.get_function("counter_value")(c) == 41
    with pytest.raises(TypeError, match="int"):
        make_counter("forty-one")  # the typed signature, checked by the runtime for the extension
    assert m.get_function("counter_value")(make_counter(start=7)) == 7  # keywords, bound by the runtime
    with pytest.raises(TypeError, match=r"^ext_runtime.make_counter\(\) got an unexpected keyword argument 'stop'$"):
        make_counter(stop=1)


@needs_cc
def test_extension_error_arrives_with_its_kind(ext_module):
    _, m = ext_module
    fail = m.get_function("fail")  # not m.fail: attributes stay cached on the module-scoped Module

    class ExtRuntimeError(Exception):
        pass

    with pytest.raises(RuntimeError, match=r"failed on purpose \(42\)") as unregistered:
        fail()
    assert unregistered.value.__ffikit_error__.kind == "ExtRuntimeError"
    ffikit.register_error("ExtRuntimeError", ExtRuntimeError)
    with pytest.raises(ExtRuntimeError, match=r"failed on purpose \(42\)") as registered:
        fail()
    assert registered.value.__ffikit_error__.kind == "ExtRuntimeError"


def test_libinfo_describes_the_package():
    pkg = os.path.dirname(ffikit.__file__)
    assert libinfo.find_include_paths() == [os.path.join(pkg, "include")] == libinfo.include_paths()
    assert os.path.isfile(os.path.join(libinfo.find_include_path(), "ffikit", "ffikit.h"))
    # The unstable tier keeps its directory (what the extension itself compiles against).
    assert os.path.isfile(os.path.join(libinfo.find_include_path(), "ffikit", "unstable", "list.h"))
    assert os.path.isfile(os.path.join(libinfo.find_dlpack_include_path(), "dlpack", "dlpack.h"))
    assert libinfo.find_lib_path() == libinfo.find_libffikit()
    assert os.path.isfile(os.path.join(libinfo.find_cmake_path(), "ffikitConfig.cmake"))
    assert os.path.isfile(os.path.join(libinfo.find_pkgconfig_path(), "ffikit.pc"))
    assert libinfo.version() == libinfo.__version__ == ffikit.__version__


def test_config_prints_what_a_build_needs():
    lib = libinfo.find_lib_path()
    libdir = os.path.dirname(lib)
    r = _run([sys.executable, "-m", "ffikit.config", "--libs", "--includedir", "--version", "--libdir", "--libfiles",
              "--cflags", "--cmakedir", "--pkgconfigdir", "--ldflags", "--cxxflags"], env=os.environ)
    include = libinfo.find_include_path()
    # One line per option, in --help's order whatever the order asked in.
    assert r.stdout.splitlines() == [
        ffikit.__version__, include, libinfo.find_cmake_path(), libinfo.find_pkgconfig_path(), libdir, lib,
        f"-L{libdir} -lffikit -Wl,-rpath,{libdir}", f"-I{include}", f"-I{include} -std=c++17", f"-L{libdir}",
    ]
    no_option = _run([sys.executable, "-m", "ffikit.config"], env=os.environ)
    assert "--cflags" in no_option.stdout and "--cmakedir" in no_option.stdout


def _check_program(exe: str) -> None:
    out = _run([exe]).stdout
    assert out == f"ffikit {ffikit.__version__} (1, 2)\n"


@needs_cc
def test_pkg_config_file_builds_a_program(tmp_path):
    pkg_config = shutil.which("pkg-config")
    if pkg_config is None:
        pytest.skip("no pkg-config on PATH")
    env = _tool_env(PKG_CONFIG_PATH=libinfo.find_pkgconfig_path())
    flags = _run([pkg_config, "--cflags", "--libs", "ffikit"], env=env).stdout.split()
    assert _run([pkg_config, "--modversion", "ffikit"], env=env).stdout.strip() == ffikit.__version__
    (tmp_path / "prog.c").write_text(PROGRAM_SOURCE)
    exe = str(tmp_path / "prog")
    _run([CC, "-std=c11", "-Wall", "-Werror", str(tmp_path / "prog.c"), *flags, *_sanitizer_flags(), "-o", exe])
    _check_program(exe)


@needs_cc
def test_cmake_config_builds_a_program(tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on PATH: the CMake package config is not exercised")
    (tmp_path / "prog.c").write_text(PROGRAM_SOURCE)
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent(f"""
        cmake_minimum_required(VERSION 3.13)
        project(prog C)
        find_package(ffikit {ffikit.__version__} REQUIRED CONFIG)
        add_executable(prog prog.c)
        target_link_libraries(prog PRIVATE ffikit::ffikit)
    """))
    build = tmp_path / "build"
    flags = " ".join(_sanitizer_flags())
    _run([cmake, "-S", str(tmp_path), "-B", str(build), f"-Dffikit_DIR={libinfo.find_cmake_path()}",
          f"-DCMAKE_C_COMPILER={CC}", f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_EXE_LINKER_FLAGS={flags}"])
    _run([cmake, "--build", str(build)])
    _check_program(str(build / "prog"))
