"""ffikit.cpp: build C, C++ and CUDA sources into modules, cache them, load them."""
from __future__ import annotations

import ctypes
import gc
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import ffikit
import ffikit.libinfo
from ffikit import cpp

pytestmark = pytest.mark.skipif(shutil.which("cc") is None or shutil.which("c++") is None,
                                reason="needs a C and a C++ compiler (cc, c++)")

ADD_C = r"""
static int add(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  int64_t a, b;
  if (nargs != 2) return ffk_error_set(FFK_ERR_TYPE, "add takes 2 arguments, got %d", (int)nargs);
  if (ffk_any_as_int(&args[0], &a) != 0 || ffk_any_as_int(&args[1], &b) != 0) return -1;
  *result = ffk_any_int(a + b);
  return 0;
}
"""


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test builds into its own cache, never ~/.cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("FFIKIT_CACHE_DIR", str(d))
    return d


def _counting_compiler(tmp_path, real: str, name: str) -> tuple[str, str]:
    """A wrapper around `real` that logs each compile (-c) and the LD_PRELOAD it saw."""
    log = tmp_path / f"{name}.log"
    wrapper = tmp_path / name
    wrapper.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        for a in "$@"; do
          if [ "$a" = "-c" ]; then echo "compile preload=[$LD_PRELOAD]" >> {log}; sleep "${{CC_DELAY:-0}}"; fi
        done
        exec {real} "$@"
        """))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper), str(log)


def _compiles(log: str) -> list[str]:
    return open(log).read().splitlines() if os.path.exists(log) else []


def test_c_sources_with_listed_functions():
    m = cpp.load_inline("add_c", c_sources=ADD_C, functions=["add"])
    assert isinstance(m, ffikit.Module)
    assert m.add(40, 2) == 42
    assert m.add.signature is None  # listed by name only: untyped
    with pytest.raises(TypeError, match="add takes 2 arguments, got 1"):
        m.add(1)


SLEEP_C = r"""
#include <time.h>
static int sleep_ms(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  struct timespec ts = {0, args[0].v_int * 1000000L};
  nanosleep(&ts, NULL);
  *result = ffk_any_none();
  return 0;
}
"""


def _other_thread_ran_during(f, ms):
    """Whether a Python thread made progress while `f(ms)` ran: it cannot without the GIL.
    A long switch interval keeps the interpreter from handing the GIL over on its own
    between reading the count and the call."""
    ticks, stop = [0], threading.Event()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        while ticks[0] == 0:  # running
            time.sleep(0.001)
        before = ticks[0]
        f(ms)
        return ticks[0] != before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)


def test_quick_exports_keep_the_gil_and_others_release_it():
    m = cpp.load_inline("quick_c", c_sources=ADD_C + SLEEP_C, functions={"add": "(int, int) -> int",
                                                                          "sleep_ms": "(int) -> None"},
                        quick=["sleep_ms"])
    assert m.sleep_ms.quick is True and m.sleep_ms.release_gil is False
    assert m.add.quick is False and m.add.release_gil is True and m.add(40, 2) == 42
    # Held for the whole call: no other Python thread can run (deterministic).
    assert not _other_thread_ran_during(m.sleep_ms, 30)
    # The same C function without the flag releases it: the other thread runs (given time).
    slow = m.sleep_ms
    slow.release_gil = True
    assert any(_other_thread_ran_during(slow, ms) for ms in (30, 100, 300))
    every = cpp.load_inline("quick_all", c_sources=ADD_C, functions=["add"], quick=True)
    assert every.add.quick is True and every.add(1, 2) == 3


def test_quick_names_must_be_exported_functions():
    with pytest.raises(ValueError, match="quick names `sub`, which module `q` does not export"):
        cpp.load_inline("q", c_sources=ADD_C, functions=["add"], quick=["sub"])
    with pytest.raises(TypeError, match="quick of module `q` must be True, False or a list"):
        cpp.load_inline("q", c_sources=ADD_C, functions=["add"], quick="add")


def test_cpp_sources_with_the_module_macros_and_no_extern_c():
    src = r"""
    #include <string>
    #include <numeric>
    #include <vector>
    FFK_MODULE_ABI_VERSION;
    namespace {
    template <typename T> T total(const std::vector<T> &xs) { return std::accumulate(xs.begin(), xs.end(), T{}); }
    int sum3(void *, const ffk_any *args, int32_t nargs, ffk_any *result) {
      std::vector<int64_t> xs(nargs);
      for (int32_t i = 0; i < nargs; ++i) xs[i] = args[i].v_int;
      *result = ffk_any_int(total(xs));
      return 0;
    }
    int greet(void *, const ffk_any *args, int32_t, ffk_any *result) {
      const char *data; size_t size;
      if (ffk_any_as_str(&args[0], &data, &size) != 0) return -1;
      std::string s = "hello, " + std::string(data, size);
      return ffk_any_str(s.data(), s.size(), result);
    }
    }  // namespace
    FFK_MODULE_EXPORT_TYPED(sum3, "(int, int, int) -> int", sum3)
    FFK_MODULE_EXPORT(greet, greet)
    """
    m = cpp.load_inline("cpp_macros", cpp_sources=src)
    assert m.sum3(1, 2, 3) == 6
    assert m.greet("ffikit") == "hello, ffikit"
    with pytest.raises(TypeError, match="Mismatched type on argument #1"):
        m.sum3(1, "two", 3)


def test_a_signature_makes_the_function_typed_and_a_doc_is_exported(cache):
    m = cpp.load_inline("typed", cpp_sources=ADD_C, functions={
        "add": "(a: int, b: int) -> int\nAdds two integers.\nSecond line.",
    })
    assert m.add(2, 3) == 5
    assert m.add.signature is not None and "int" in m.add.signature
    with pytest.raises(TypeError, match="Expected `int` but got `str`"):
        m.add(1, "x")
    lib = ctypes.CDLL(m.path)
    assert ctypes.c_char_p.in_dll(lib, "ffikit_doc_add").value == b"Adds two integers.\nSecond line."
    assert ctypes.c_char_p.in_dll(lib, "ffikit_sig_add").value == b"(a: int, b: int) -> int"


def test_a_doc_without_signature_leaves_the_function_untyped():
    doc = 'Says "hi" \\ with ??= odd characters: \u00e9\t.'
    m = cpp.load_inline("doconly", c_sources=ADD_C, functions={"add": doc})
    assert m.add(1, 1) == 2 and m.add.signature is None
    lib = ctypes.CDLL(m.path)
    assert ctypes.c_char_p.in_dll(lib, "ffikit_doc_add").value == doc.encode()
    with pytest.raises(ValueError):
        ctypes.c_char_p.in_dll(lib, "ffikit_sig_add")


def test_c_and_cpp_sources_together_and_the_exports_go_to_the_cpp_source():
    c_src = r"""
    int twice(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      *result = ffk_any_int(2 * args[0].v_int);
      return 0;
    }
    """
    cpp_src = r"""
    extern "C" int twice(void *self, const ffk_any *args, int32_t nargs, ffk_any *result);
    static int neg(void *, const ffk_any *args, int32_t, ffk_any *result) {
      *result = ffk_any_int(-args[0].v_int);
      return 0;
    }
    """
    m = cpp.load_inline("mixed", c_sources=c_src, cpp_sources=cpp_src,
                        functions={"twice": "(int) -> int", "neg": "(int) -> int"})
    assert m.twice(21) == 42 and m.neg(5) == -5


def test_an_error_raised_in_the_module_arrives_with_its_kind():
    src = r"""
    FFK_MODULE_ABI_VERSION;  /* optional inline; a C unit that writes it links as well */
    static int fail(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      return ffk_error_set(FFK_ERR_KEY, "no entry %d", (int)args[0].v_int);
    }
    """
    m = cpp.load_inline("fails", c_sources=src, functions={"fail": "(int)"})
    with pytest.raises(KeyError, match="no entry 7"):
        m.fail(7)


def test_the_module_shares_the_process_runtime():
    m = cpp.load_inline("runtime", c_sources=ADD_C, functions=["add"])
    assert m.add(1, 2) == 3
    with open("/proc/self/maps") as f:
        mapped = {line.split()[-1] for line in f if "libffikit" in line and "testing" not in line}
    real = {os.path.realpath(p) for p in mapped}
    assert len(real) == 1, f"more than one ffikit runtime mapped: {sorted(mapped)}"
    assert real == {os.path.realpath(ffikit.libinfo.find_lib_path())}
    out = subprocess.run(["readelf", "-d", m.path], capture_output=True, text=True).stdout \
        if shutil.which("readelf") else ""
    if out:
        assert "libffikit" in out and "RUNPATH" in out


def test_a_compiler_error_shows_the_command_and_the_messages(cache):
    with pytest.raises(cpp.BuildError) as info:
        cpp.load_inline("broken", c_sources="int f(void) { return undefined_name; }")
    err = info.value
    assert isinstance(err, RuntimeError)
    text = str(err)
    assert "building module `broken` failed" in text
    assert "undefined_name" in text and "error" in text
    assert "-c" in err.command and any(a.endswith("main.c") for a in err.command)
    assert " ".join(err.command[:1]) in text and err.returncode not in (0, None)
    # the failed build leaves no library and no temporary files behind; a fixed source builds
    (build_dir,) = cache.iterdir()
    assert sorted(p.name for p in build_dir.iterdir()) == ["broken.lock", "ffikit_abi.c", "main.c"]
    assert cpp.load_inline("broken", c_sources=ADD_C, functions=["add"]).add(1, 1) == 2


def test_a_link_error_is_reported_too():
    src = "int missing_everywhere(void);\nint g(void) { return missing_everywhere(); }"
    with pytest.raises(cpp.BuildError, match="linking module `unlinked` failed(.|\n)*missing_everywhere"):
        cpp.load_inline("unlinked", c_sources=src, extra_ldflags=["-Wl,--no-undefined"])


def test_a_malformed_signature_is_reported_by_the_loader():
    with pytest.raises(ValueError, match="flaot"):
        cpp.load_inline("badsig", c_sources=ADD_C, functions={"add": "(flaot) -> int"})


def test_bad_names_and_arguments_are_rejected_before_compiling():
    with pytest.raises(ValueError, match="no sources"):
        cpp.load_inline("empty")
    with pytest.raises(ValueError, match="must be a C identifier"):
        cpp.load_inline("m", c_sources=ADD_C, functions=["not-a-name"])
    with pytest.raises(ValueError, match="listed twice"):
        cpp.load_inline("m", c_sources=ADD_C, functions=["add", "add"])
    with pytest.raises(ValueError, match="not usable as a file name"):
        cpp.load_inline("a/b", c_sources=ADD_C)
    with pytest.raises(TypeError, match="signature or doc string"):
        cpp.load_inline("m", c_sources=ADD_C, functions={"add": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="unknown suffix"):
        cpp.build("m", sources=[__file__])


def test_a_cached_build_loads_without_compiling(tmp_path, monkeypatch, cache):
    cc, log = _counting_compiler(tmp_path, shutil.which("cc") or "cc", "cc-wrapper")
    monkeypatch.setenv("CC", cc)
    first = cpp.build_inline("cached", c_sources=ADD_C, functions=["add"])
    compiles = len(_compiles(log))
    assert compiles == 2  # main.c and ffikit_abi.c
    mtime = os.stat(first).st_mtime_ns
    second = cpp.build_inline("cached", c_sources=ADD_C, functions=["add"])
    assert second == first and os.stat(second).st_mtime_ns == mtime
    assert len(_compiles(log)) == compiles
    assert cpp.load_inline("cached", c_sources=ADD_C, functions=["add"]).add(2, 2) == 4
    assert len(_compiles(log)) == compiles
    assert os.path.dirname(first).startswith(str(cache))
    # sanitizer runs preload their runtime into Python; the compiler must not inherit it
    assert all(line == "compile preload=[]" for line in _compiles(log))


def test_a_changed_source_or_flag_rebuilds(tmp_path, monkeypatch):
    cc, log = _counting_compiler(tmp_path, shutil.which("cc") or "cc", "cc-wrapper")
    monkeypatch.setenv("CC", cc)
    a = cpp.build_inline("changing", c_sources=ADD_C, functions=["add"])
    b = cpp.build_inline("changing", c_sources=ADD_C.replace("a + b", "a * b"), functions=["add"])
    c = cpp.build_inline("changing", c_sources=ADD_C, functions=["add"], extra_cflags=["-DSOMETHING=1"])
    assert len({a, b, c}) == 3 and len(_compiles(log)) == 6
    assert cpp.load_inline("changing", c_sources=ADD_C.replace("a + b", "a * b"), functions=["add"]).add(3, 4) == 12


def test_build_and_load_files_by_suffix_and_a_changed_header_rebuilds(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "value.h").write_text("#define VALUE 1\n")
    (src / "impl.c").write_text(textwrap.dedent("""\
        #include <ffikit/ffikit.h>
        #include "value.h"
        int impl_value(void) { return VALUE; }
        """))
    (src / "mod.cc").write_text(textwrap.dedent("""\
        #include <ffikit/ffikit.h>
        extern "C" int impl_value(void);
        FFK_MODULE_ABI_VERSION;
        static int value(void *, const ffk_any *, int32_t, ffk_any *result) {
          *result = ffk_any_int(impl_value());
          return 0;
        }
        FFK_MODULE_EXPORT_TYPED(value, "() -> int", value)
        """))
    files = [str(src / "impl.c"), str(src / "mod.cc")]
    # Not kept: the rebuilt library at the same path is loaded below.
    m = cpp.load("files", sources=files, keep_module_alive=False)
    assert m.value() == 1
    path = m.path
    del m
    gc.collect()
    assert cpp.build("files", sources=files) == path  # fresh: nothing rebuilt
    mtime = os.stat(path).st_mtime_ns
    (src / "value.h").write_text("#define VALUE 2 /* changed */\n")
    assert cpp.build("files", sources=files) == path  # same key, the header is newer
    assert os.stat(path).st_mtime_ns != mtime
    assert cpp.load("files", sources=files, keep_module_alive=False).value() == 2
    with pytest.raises(ValueError, match="cannot be read"):
        cpp.build("files", sources=[str(src / "missing.c")])


def test_build_directory_replaces_the_cache(tmp_path, cache):
    out = tmp_path / "out"
    path = cpp.build_inline("placed", c_sources=ADD_C, functions=["add"], build_directory=out)
    assert path == str(out / "placed.so") and (out / "main.c").exists()
    assert not cache.exists()


_PARALLEL_SCRIPT = """
import sys
from ffikit import cpp
src = sys.argv[1]
m = cpp.load_inline("parallel", c_sources=src, functions=["add"])
print(m.add(20, 22))
"""


def test_two_processes_building_the_same_module_compile_once(tmp_path, monkeypatch):
    cc, log = _counting_compiler(tmp_path, shutil.which("cc") or "cc", "cc-wrapper")
    monkeypatch.setenv("CC", cc)
    monkeypatch.setenv("CC_DELAY", "0.5")  # keep the first build busy while the second arrives
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", _PARALLEL_SCRIPT, ADD_C], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert out.strip() == "42"
    assert len(_compiles(log)) == 2  # one build: main.c and ffikit_abi.c, once


CUDA_SRC = r"""
#include <cuda_runtime.h>
__global__ void iota(int64_t *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}
static int device_count(void *, const ffk_any *, int32_t, ffk_any *result) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  *result = ffk_any_int(n);
  return 0;
}
static int iota_sum(void *, const ffk_any *args, int32_t, ffk_any *result) {
  int n = (int)args[0].v_int;
  int64_t *d = nullptr, total = 0;
  if (cudaMalloc(&d, n * sizeof(int64_t)) != cudaSuccess) return ffk_error_set(FFK_ERR_RUNTIME, "cudaMalloc failed");
  iota<<<(n + 127) / 128, 128>>>(d, n);
  int64_t *h = new int64_t[n];
  cudaError_t e = cudaMemcpy(h, d, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  cudaFree(d);
  for (int i = 0; i < n; ++i) total += h[i];
  delete[] h;
  if (e != cudaSuccess) return ffk_error_set(FFK_ERR_RUNTIME, "%s", cudaGetErrorString(e));
  *result = ffk_any_int(total);
  return 0;
}
"""


def test_cuda_sources_compile_with_nvcc_and_run_on_a_gpu():
    if cpp._find_nvcc() is None:
        pytest.skip("nvcc not found: CUDA sources cannot be compiled here")
    m = cpp.load_inline("cuda_iota", cuda_sources=CUDA_SRC,
                        functions={"device_count": "() -> int", "iota_sum": "(int) -> int"})
    if m.device_count() == 0:
        pytest.skip("built and loaded the CUDA module; no GPU to run its kernel on")
    assert m.iota_sum(1000) == 999 * 1000 // 2


def test_cuda_sources_without_nvcc_are_a_clear_error(monkeypatch):
    monkeypatch.setattr(cpp, "_find_nvcc", lambda: None)
    with pytest.raises(cpp.BuildError, match="CUDA sources, but nvcc was not found"):
        cpp.load_inline("nocuda", cuda_sources=CUDA_SRC, functions=["device_count"])


def test_a_missing_compiler_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(cpp.BuildError, match=r"needs a C\+\+ compiler, but `/nonexistent/c\+\+` \(\$CXX\) was not found;"):
        cpp.load_inline("nocxx", cpp_sources=ADD_C)


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FFIKIT_CACHE_DIR", str(tmp_path / "a"))
    assert cpp.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("FFIKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cpp.cache_dir() == tmp_path / "xdg" / "ffikit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cpp.cache_dir() == tmp_path / "home" / ".cache" / "ffikit"


HPP_SRC = r"""
#include <ffikit/ffikit.hpp>
#include <stdexcept>
static int64_t add(int64_t a, int b) { return a + b; }
static std::string greet(const std::string &who, const char *suffix) { return "hello, " + who + suffix; }
static double scale(double x, bool neg) { return neg ? -2 * x : 2 * x; }
static ffk_any first(ffk_any v) { ffk_any out; return ffk_any_to_owned(&v, &out) == 0 ? out : ffk_any_none(); }
static void nothing() {}
static int boom(int x) {
  if (x) throw ffikit::error(FFK_ERR_KEY, "no key " + std::to_string(x));
  throw std::logic_error("a logic error");
}
static uint8_t byte(uint8_t x) { return x; }
FFK_EXPORT_TYPED_FUNC(add, add)
FFK_EXPORT_TYPED_FUNC(greet, greet)
FFK_EXPORT_TYPED_FUNC(scale, scale)
FFK_EXPORT_TYPED_FUNC(first, first)
FFK_EXPORT_TYPED_FUNC(nothing, nothing)
FFK_EXPORT_TYPED_FUNC(boom, boom)
FFK_EXPORT_TYPED_FUNC(byte, byte)
"""


def test_the_cpp_header_exports_plain_functions_with_deduced_signatures():
    m = cpp.load_inline("hpp", cpp_sources=HPP_SRC, extra_cflags=["-Wall", "-Wextra", "-Werror", "-pedantic"])
    assert m.add(1, 2) == 3 and m.add.signature.endswith("(0: int, 1: int) -> int")
    assert m.greet("you", "!") == "hello, you!" and m.greet.signature.endswith("(0: str, 1: str) -> str")
    assert m.scale(1.5, True) == -3.0 and m.scale(2, False) == 4.0  # the int 2 is converted for `double`
    assert m.first("text") == "text" and m.first.signature.endswith("(0: Any) -> Any")
    assert m.nothing() is None and m.nothing.signature.endswith("() -> None")
    with pytest.raises(KeyError, match="no key 3"):
        m.boom(3)
    with pytest.raises(RuntimeError, match="a logic error"):
        m.boom(0)
    assert m.byte(255) == 255
    with pytest.raises(OverflowError, match="argument #0 of `byte`: 256 is out of range for a 1-byte unsigned"):
        m.byte(256)
    with pytest.raises(OverflowError, match="argument #1 of `add`: 4294967296 is out of range"):
        m.add(1, 2**32)
    with pytest.raises(TypeError, match="Mismatched type on argument #0"):
        m.greet(1, "!")


def test_the_cuda_architectures_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("FFIKIT_CUDA_ARCH_LIST", "8.9 9.0a")
    assert cpp._cuda_arch_flags() == ["-gencode=arch=compute_89,code=sm_89", "-gencode=arch=compute_90a,code=sm_90a"]
    monkeypatch.setenv("FFIKIT_CUDA_ARCH_LIST", "sm_90")
    if cpp._find_nvcc() is None:
        pytest.skip("nvcc not found: the CUDA flags are not computed without it")
    with pytest.raises(ValueError, match="CUDA architecture 'sm_90' in \\$FFIKIT_CUDA_ARCH_LIST"):
        cpp.load_inline("badarch", cuda_sources=CUDA_SRC, functions=["device_count"])


_TYPED_USER = '''
from __future__ import annotations
import ffikit
from ffikit import cpp

def build(src: str) -> tuple[ffikit.Module, str]:
    m: ffikit.Module = cpp.load_inline("typed", c_sources=src, functions={"f": "() -> int"},
                                       extra_cflags=["-O0"], build_directory=None)
    path: str = cpp.build_inline("typed", cpp_sources=[src], functions=["f"])
    files: str = cpp.build("files", sources=["a.c", "b.cc"], extra_ldflags=["-lm"])
    loaded: ffikit.Module = cpp.load("files", sources="a.c")
    try:
        pass
    except cpp.BuildError as e:
        text: str = e.output
        code: int | None = e.returncode
        argv: list[str] = e.command
    return m, path + files + str(cpp.cache_dir()) + loaded.path
'''


def test_the_api_is_fully_typed_for_mypy_strict(tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed")
    program = tmp_path / "user_cpp.py"
    program.write_text(_TYPED_USER)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package beside the tests
    cache = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "mypy-cache-cpp")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                        str(program)], capture_output=True, text=True, env=dict(os.environ, MYPYPATH=pkg))
    assert r.returncode == 0, r.stdout + r.stderr


def test_cpp_and_libinfo_are_attributes_of_ffikit_after_a_plain_import() -> None:
    # As tvm_ffi.cpp after `import tvm_ffi`: loaded on first use, in a fresh interpreter.
    code = ("import sys, ffikit; assert 'ffikit.cpp' not in sys.modules; "
            "assert callable(ffikit.cpp.load_inline) and callable(ffikit.libinfo.find_lib_path); "
            "import ffikit.cpp; assert ffikit.cpp is sys.modules['ffikit.cpp']")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.parametrize("lang", ["c_sources", "cpp_sources"])
def test_a_named_signature_takes_keyword_arguments(lang):
    # The "done when": a C and a C++ module built with load_inline, called by keyword.
    m = cpp.load_inline(f"kw_{lang}", **{lang: ADD_C}, functions={"add": "(a: int, b: int) -> int"})
    assert m.add(1, b=2) == 3 and m.add(b=5, a=1) == 6 and m.add(2, 3) == 5
    with pytest.raises(TypeError, match=r"^add\(\) got an unexpected keyword argument 'c'$"):
        m.add(1, c=2)
    with pytest.raises(TypeError, match=r"^add\(\) got multiple values for argument 'a'$"):
        m.add(1, a=2)
    with pytest.raises(TypeError, match=r"^add\(\) missing 1 required positional argument: 'b'$"):
        m.add(a=1)
    untyped = cpp.load_inline(f"kw_untyped_{lang}", **{lang: ADD_C}, functions=["add"])
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        untyped.add(a=1, b=2)
