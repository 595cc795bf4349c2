#!/usr/bin/env python3
"""ffikit from Python beside its peers, measured with pyperf in one run.

Every case is named ``<case>/<impl>``: ``ffikit`` beside ``tvm_ffi`` (apache-tvm-ffi from
PyPI) and a builtin baseline (a Python function, ctypes, tuple/list/dict, numpy). The cases
are the "Performance" sections of issues 12 (calls, callbacks, strings, errors), 14
(containers) and 15 (tensors), and issue 22's keyword calls of a typed Function (``kw3``,
beside a Python function; ``typed3`` is the same Function called positionally), and issue 27's
``nop0``/``nop3`` beside nanobind (a module built from ``nb_peer.cpp`` on first use).
Times are per statement (per element for iteration and appends), in the thread's CPU time. ``report.py`` turns the JSON output into the table of
medians and ratios.

    python bench_ffi.py -o run1.json [--cases nop3,getitem] [any pyperf option: --fast ...]

torch is hidden unless ``--torch`` is given (tvm_ffi would import it in every worker).
A case whose ffikit API is missing (``List.append`` before the C containers land,
``ffikit.from_dlpack`` before tensors do) is skipped with the reason printed; its peers
still run. Each worker process re-runs this script, so the setup below is deterministic
and cheap: the C no-op library for ctypes is compiled once and cached by content hash.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pyperf

if "--torch" not in sys.argv:
    # tvm_ffi imports torch when it can: 7 s in every pyperf worker on a loaded machine.
    sys.modules["torch"] = None  # type: ignore[assignment]  (import torch now raises ImportError)

import ffikit
import ffikit.testing
import tvm_ffi

DUP = 20  # statements per loop turn for the cheap cases, so the loop's own cost stays small
N = 1000  # elements in every container

C_NOP = "int ffk_bench_nop(int a, int b, int c) { (void)a; (void)b; (void)c; return 0; }\n"


def c_nop_library() -> ctypes.CDLL:
    """A shared library with one C no-op, built with cc on first use and cached in the temp dir."""
    digest = hashlib.sha256(C_NOP.encode()).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"ffikit_bench_nop_{digest}.so")
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "nop.c"), os.path.join(tmp, "nop.so")
            with open(src, "w") as f:
                f.write(C_NOP)
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", out, src], check=True)
            os.replace(out, path)  # atomic: concurrent workers never see half a file
    return ctypes.CDLL(path)


# A module with a typed Function whose parameters have names: positional and keyword calls.
C_TYPED_NOP = textwrap.dedent("""\
    #include <ffikit/module.h>
    FFK_MODULE_ABI_VERSION;
    static int nop3(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
      (void)self, (void)args, (void)nargs, (void)result;
      return 0;
    }
    FFK_MODULE_EXPORT_TYPED(nop3, "(a: int, b: int, c: int) -> None", nop3)
    """)
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def typed_nop_module():
    """`nop3(a: int, b: int, c: int) -> None` as an ffikit module, built against this checkout's
    headers with cc on first use and cached in the temp dir, like c_nop_library."""
    digest = hashlib.sha256((C_TYPED_NOP + ffikit.__version__).encode()).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"ffikit_bench_typed_nop_{digest}.so")
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "typed_nop.c"), os.path.join(tmp, "typed_nop.so")
            with open(src, "w") as f:
                f.write(C_TYPED_NOP)
            includes = [f"-I{os.path.join(REPO, d)}" for d in ("ffi/include", "third_party/dlpack/include")]
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", *includes, "-o", out, src], check=True)
            os.replace(out, path)
    return ffikit.load_module(path)


def py_nop3(a, b, c):
    pass


NB_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nb_peer.cpp")


def nanobind_peer():
    """nb_peer.cpp as a Python module: nanobind's ``nop_args(*args)``, ``nop0()`` and
    ``nop3(int, int, int)``. Built with g++ on first use against the nanobind wheel's own
    sources (nb_combined.cpp, as nanobind's CMake build compiles them), cached in the temp dir
    by a hash of the source, nanobind's version and the interpreter, like c_nop_library."""
    import importlib.util
    import sysconfig

    import nanobind

    with open(NB_PEER) as f:
        source = f.read()
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    key = f"{source}{nanobind.__version__}{sys.version}{ext}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = "ffikit_bench_nb_peer"
    path = os.path.join(tempfile.gettempdir(), f"ffikit_bench_nb_peer_{digest}", name + ext)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        nb_dir = os.path.dirname(nanobind.include_dir())
        includes = [nanobind.include_dir(), os.path.join(nb_dir, "ext", "robin_map", "include"),
                    sysconfig.get_paths()["include"]]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, name + ext)
            subprocess.run(["g++", "-O2", "-std=c++17", "-fPIC", "-shared", "-fvisibility=hidden", "-DNDEBUG",
                            *(f"-I{d}" for d in includes), os.path.join(nanobind.source_dir(), "nb_combined.cpp"),
                            NB_PEER, "-o", out], check=True)
            os.replace(out, path)  # atomic: concurrent workers never see half a file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Suite:
    """Registers ``<case>/<impl>`` benchmarks with the runner, skipping what does not run."""

    def __init__(self, runner: pyperf.Runner, selected: list[str]) -> None:
        self.runner = runner
        self.selected = selected
        self.quiet = runner.args.worker or runner.args.quiet

    def skip(self, name: str, reason: str) -> None:
        if not self.quiet:
            print(f"skip {name}: {reason}", file=sys.stderr)

    def add(self, case: str, impl: str, stmt: str, ns: dict, *, dup: int = DUP, inner: int | None = None,
            needs: str | None = None) -> None:
        """Times ``stmt`` in namespace ``ns``; ``needs`` names a reason to skip (e.g. a missing API)."""
        name = f"{case}/{impl}"
        if self.selected and not any(case.startswith(s) for s in self.selected):
            return
        if needs:
            return self.skip(name, needs)
        try:  # run once first: an API that is not there yet skips instead of failing the run
            exec(stmt, dict(ns))
        except Exception as e:  # noqa: BLE001 (any failure means "not measurable here")
            return self.skip(name, f"{type(e).__name__}: {e}")
        self.runner.bench_time_func(name, cpu_timer(stmt, ns, dup), inner_loops=dup * (inner or 1))


def cpu_timer(stmt: str, ns: dict, dup: int):
    """pyperf's time function for ``stmt`` repeated ``dup`` times per loop turn, with the names of
    ``ns`` as fast locals (as timeit does). It returns the thread's CPU time, not the wall time:
    on a shared machine the wall clock mostly counts the time other processes held the core."""
    names = sorted(ns)
    body = textwrap.indent("\n".join([stmt] * dup), " " * 8)
    src = (f"def run(loops, {', '.join(names)}):\n    t0 = clock()\n    for _ in range(loops):\n{body}\n"
           "    return clock() - t0\n")
    scope: dict = {}
    exec(src, {"clock": time.thread_time}, scope)
    run, values = scope["run"], [ns[n] for n in names]
    return lambda loops: run(loops, *values)


def py_nop(*a):
    return None


def py_apply(f, *a):
    return f(*a)


def py_echo(x):
    return x


def py_raise_error(kind, msg):
    raise {"ValueError": ValueError}[kind](msg)


def add(a, b):
    return a + b


def bad(a, b):
    raise ValueError("x")


CATCH = "try:\n    {}\nexcept ValueError:\n    pass"


def calls(s: Suite) -> None:
    """Issue 12: a global Function, callbacks from C, strings, errors both ways."""
    fk, tv = ffikit.testing, tvm_ffi.get_global_func
    lib = c_nop_library()
    typed = lib.ffk_bench_nop
    typed.argtypes, typed.restype = [ctypes.c_int] * 3, None
    untyped = ctypes.CDLL(lib._name).ffk_bench_nop  # a second handle: its own function object
    s64 = "a string of 64 bytes, made long enough to live on the heap in C."[:64]
    assert len(s64.encode()) == 64
    sides = {  # impl -> (nop, apply, echo, raise_error, to Function)
        "ffikit": (ffikit.get_global_func("testing.nop"), fk.apply, fk.echo, fk.raise_error, ffikit.convert),
        "tvm_ffi": (tv("testing.nop"), tv("testing.apply"), tv("testing.echo"), tv("testing.test_raise_error"),
                    tvm_ffi.convert),
        "python": (py_nop, py_apply, py_echo, py_raise_error, None),
    }
    for impl, (nop, apply, echo, raise_error, to_func) in sides.items():
        ns = {"nop": nop, "apply": apply, "echo": echo, "raise_error": raise_error, "add": add, "bad": bad,
              "s": s64}
        s.add("nop3", impl, "nop(1, 2, 3)", ns)
        s.add("apply[pyfunc]", impl, "apply(add, 1, 2)", ns)
        if to_func:
            s.add("apply[Function]", impl, "apply(f, 1, 2)", {**ns, "f": to_func(add)})
            s.add("echo[String]", impl, "echo(s)", {**ns, "s": echo(s64)})
        s.add("echo[str64]", impl, "echo(s)", ns)
        s.add("raise[C->py]", impl, CATCH.format("raise_error('ValueError', 'x')"), ns, dup=1)
        s.add("raise[callback]", impl, CATCH.format("apply(bad, 1, 2)"), ns, dup=1)
    s.add("nop3", "ctypes", "nop(1, 2, 3)", {"nop": untyped})
    s.add("nop3", "ctypes_argtypes", "nop(1, 2, 3)", {"nop": typed})
    # Issue 27: nop() and nop(1, 2, 3) beside nanobind (``nop(*args)`` taking nb::args, the target's
    # peer, and fixed-arity functions, informational), tvm_ffi and a Python function. nanobind
    # holds the GIL through its call; ffikit releases it unless release_gil is off, which a
    # Function with FFK_FUNCTION_QUICK starts with (testing.nop has it, issue 37):
    # ``ffikit_gil_held`` is the same Function with release_gil = False set by hand, and
    # ``ffikit_gil_released`` with release_gil = True (what an unflagged Function pays).
    try:
        nb = nanobind_peer()
    except Exception as e:  # noqa: BLE001 (no nanobind, no g++: skip its rows)
        nb, nb_reason = None, f"{type(e).__name__}: {e}"
    held = ffikit.get_global_func("testing.nop")  # its own wrapper, so its switch is its own
    held.release_gil = False
    released = ffikit.get_global_func("testing.nop")
    released.release_gil = True
    nop0_sides = {"ffikit": sides["ffikit"][0], "ffikit_gil_held": held, "ffikit_gil_released": released,
                  "tvm_ffi": sides["tvm_ffi"][0], "python": py_nop}
    for impl, nop in nop0_sides.items():
        s.add("nop0", impl, "nop()", {"nop": nop})
    s.add("nop3", "ffikit_gil_held", "nop(1, 2, 3)", {"nop": held})
    s.add("nop3", "ffikit_gil_released", "nop(1, 2, 3)", {"nop": released})
    for impl, attr0, attr3 in (("nanobind_args", "nop_args", "nop_args"), ("nanobind_fixed", "nop0", "nop3")):
        for case, stmt, attr in (("nop0", "nop()", attr0), ("nop3", "nop(1, 2, 3)", attr3)):
            if nb is None:
                s.skip(f"{case}/{impl}", nb_reason)
            else:
                s.add(case, impl, stmt, {"nop": getattr(nb, attr)})
    # Typed calls, positional and by keyword (C binds the names; tvm_ffi has no keywords).
    try:
        typed_nop = typed_nop_module().get_function("nop3")
    except Exception as e:  # noqa: BLE001 (no compiler, or headers missing: skip the cases)
        typed_nop, reason = None, f"{type(e).__name__}: {e}"
    for case, stmt in [("typed3", "nop(1, 2, 3)"), ("kw3[1_pos_2_kw]", "nop(1, b=2, c=3)"),
                       ("kw3[3_kw]", "nop(c=3, a=1, b=2)")]:
        if typed_nop is None:
            s.skip(f"{case}/ffikit", reason)
        else:
            s.add(case, "ffikit", stmt, {"nop": typed_nop})
        s.add(case, "python", stmt, {"nop": py_nop3})


def containers(s: Suite) -> None:
    """Issue 14: element access, lookups, iteration, construction, appends on 1000 elements."""
    ints = list(range(N))
    keys = [f"key{i:07d}" for i in range(N)]  # 10 characters
    by_key = dict(zip(keys, ints))
    sides = {  # impl -> (Array, List, Map, Dict) constructors
        "ffikit": (ffikit.Array, ffikit.List, ffikit.Map, ffikit.Dict),
        "tvm_ffi": (tvm_ffi.Array, tvm_ffi.List, tvm_ffi.Map, tvm_ffi.Dict),
    }
    for impl, (array, list_, map_, dict_) in sides.items():
        seqs = {"Array": (array, "tuple", tuple), "List": (list_, "list", list)}
        for kind, (make, peer, peer_make) in seqs.items():
            for pimpl, obj in ((impl, make(ints)), (peer, peer_make(ints))):
                if pimpl == peer and impl != "ffikit":
                    continue  # the builtin runs once, with ffikit's cases
                ns = {"a": obj}
                s.add(f"getitem[{kind}]", pimpl, "a[500]", ns)
                s.add(f"len[{kind}]", pimpl, "len(a)", ns)
                s.add(f"iter[{kind}]", pimpl, "for _ in a:\n    pass", ns, dup=1, inner=N)
        maps = {"Map": map_, "Dict": dict_}
        for kind, make in maps.items():
            for pimpl, obj in ((impl, make(by_key)), ("dict", dict(by_key))):
                if pimpl == "dict" and impl != "ffikit":
                    continue
                ns = {"d": obj, "k": keys[500]}
                s.add(f"getkey[{kind}]", pimpl, "d[k]", ns)
                s.add(f"get[{kind}]", pimpl, "d.get(k)", ns)
                s.add(f"contains[{kind}]", pimpl, "k in d", ns)
        ns = {"d": map_(by_key), "ints": ints, "by_key": by_key, "Array": array, "Map": map_, "List": list_}
        s.add("iter[Map.items]", impl, "for _ in d.items():\n    pass", ns, dup=1, inner=N)
        s.add("build[Array]", impl, "Array(ints)", ns, dup=1)
        s.add("build[Map]", impl, "Map(by_key)", ns, dup=1)
        s.add("append[List]", impl, "l = List()\nfor i in ints:\n    l.append(i)", ns, dup=1, inner=N)
    ns = {"d": dict(by_key), "ints": ints, "by_key": by_key}
    s.add("iter[Map.items]", "dict", "for _ in d.items():\n    pass", ns, dup=1, inner=N)
    s.add("build[Array]", "tuple", "tuple(ints)", ns, dup=1)
    s.add("build[Map]", "dict", "dict(by_key)", ns, dup=1)
    s.add("append[List]", "list", "l = []\nfor i in ints:\n    l.append(i)", ns, dup=1, inner=N)


def sequences(s: Suite) -> None:
    """Issue 27: Array/List beside tuple/list for str elements, ``in``, and List building."""
    ints = list(range(N))
    strs = [f"key{i:07d}" for i in range(N)]  # 10 characters: ffikit String objects
    sides = {"ffikit": (ffikit.Array, ffikit.List), "tvm_ffi": (tvm_ffi.Array, tvm_ffi.List)}
    for impl, (array, list_) in sides.items():
        seqs = {"Array": (array, "tuple", tuple), "List": (list_, "list", list)}
        for kind, (make, peer, peer_make) in seqs.items():
            for pimpl, obj in ((impl, make), (peer, peer_make)):
                if pimpl == peer and impl != "ffikit":
                    continue  # the builtin runs once, with ffikit's cases
                for elem, values in (("", ints), (".str", strs)):
                    ns = {"a": obj(values), "x": values[500]}
                    if elem:
                        s.add(f"getitem[{kind}{elem}]", pimpl, "a[500]", ns)
                        s.add(f"iter[{kind}{elem}]", pimpl, "for _ in a:\n    pass", ns, dup=1, inner=N)
                    s.add(f"contains[{kind}{elem}]", pimpl, "x in a", ns, dup=1)
        ns = {"ints": ints, "List": list_}
        s.add("build[List]", impl, "List(ints)", ns, dup=1)
    s.add("build[List]", "list", "list(ints)", {"ints": ints}, dup=1)


def mappings(s: Suite) -> None:
    """Issue 27: Map and Dict reads beside dict's with int keys and str values too, key and items
    iteration of both, and building from a dict (the str-key, int-value rows are containers()')."""
    ints = list(range(N))
    keys = [f"key{i:07d}" for i in range(N)]  # 10 characters
    words = [f"val{i:07d}" for i in range(N)]  # 10 characters: String objects in C
    sources = {"int": dict(zip(ints, ints)), "str->str": dict(zip(keys, words))}
    by_key = dict(zip(keys, ints))
    sides = {"ffikit": (ffikit.Map, ffikit.Dict), "tvm_ffi": (tvm_ffi.Map, tvm_ffi.Dict)}
    for impl, (map_, dict_) in sides.items():
        for kind, make in {"Map": map_, "Dict": dict_}.items():
            for variant, src in sources.items():
                k = 500 if variant == "int" else keys[500]
                for pimpl, obj in ((impl, make(src)), ("dict", dict(src))):
                    if pimpl == "dict" and impl != "ffikit":
                        continue
                    ns = {"d": obj, "k": k}
                    s.add(f"getkey[{kind},{variant}]", pimpl, "d[k]", ns)
                    s.add(f"get[{kind},{variant}]", pimpl, "d.get(k)", ns)
                    s.add(f"contains[{kind},{variant}]", pimpl, "k in d", ns)
            for variant, src in {"str": by_key, "str->str": sources["str->str"], "int": sources["int"]}.items():
                for pimpl, obj in ((impl, make(src)), ("dict", dict(src))):
                    if pimpl == "dict" and impl != "ffikit":
                        continue
                    ns = {"d": obj}
                    s.add(f"iter[{kind}.keys,{variant}]", pimpl, "for _ in d:\n    pass", ns, dup=1, inner=N)
                    s.add(f"iter[{kind}.items,{variant}]", pimpl, "for _ in d.items():\n    pass", ns, dup=1,
                          inner=N)
        for variant, src in {"str": by_key, "int": sources["int"]}.items():
            ns = {"src": src, "Map": map_, "Dict": dict_}
            s.add(f"build[Map,{variant}]", impl, "Map(src)", ns, dup=1)
            s.add(f"build[Dict,{variant}]", impl, "Dict(src)", ns, dup=1)
    for variant, src in {"str": by_key, "int": sources["int"]}.items():
        ns = {"src": src}
        s.add(f"build[Map,{variant}]", "dict", "dict(src)", ns, dup=1)
        s.add(f"build[Dict,{variant}]", "dict", "dict(src)", ns, dup=1)


def tensors(s: Suite) -> None:
    """Issue 15: DLPack import, the round trip to numpy, arrays as arguments of a C no-op."""
    x = np.arange(16, dtype=np.float32)
    missing = None if hasattr(ffikit, "from_dlpack") else "ffikit.from_dlpack is missing (issue 15 not merged)"
    sides = {
        "ffikit": (getattr(ffikit, "from_dlpack", None), ffikit.get_global_func("testing.nop"), missing),
        "tvm_ffi": (tvm_ffi.from_dlpack, tvm_ffi.get_global_func("testing.nop"), None),
        "numpy": (np.from_dlpack, None, None),
    }
    try:
        import torch
    except ImportError:
        torch = None
    for impl, (from_dlpack, nop, needs) in sides.items():
        ns = {"from_dlpack": from_dlpack, "np": np, "x": x, "nop": nop}
        s.add("from_dlpack", impl, "from_dlpack(x)", ns, needs=needs)
        s.add("roundtrip", impl, "np.from_dlpack(from_dlpack(x))", ns, needs=needs)
        if nop is None:
            continue
        for n in (1, 3, 8):
            args = ", ".join(["x"] * n)
            s.add(f"nop_arrays[{n}]", impl, f"nop({args})", ns, needs=needs)
            if torch is not None:
                s.add(f"nop_torch[{n}]", impl, f"nop({args})", {**ns, "x": torch.arange(16)}, needs=needs)


def main() -> None:
    def forward(cmd: list[str], args) -> None:
        if args.cases:
            cmd.extend(("--cases", args.cases))
        if args.torch:
            cmd.append("--torch")

    runner = pyperf.Runner(processes=2, values=3, min_time=0.02, add_cmdline_args=forward)
    runner.argparser.add_argument("--cases", default="",
                                  help="comma-separated case-name prefixes to run (default: all)")
    runner.argparser.add_argument("--torch", action="store_true",
                                  help="also pass torch tensors (each worker then imports torch, slowly)")
    args = runner.parse_args()
    runner.metadata["ffikit_version"] = ffikit.__version__
    runner.metadata["tvm_ffi_version"] = tvm_ffi.__version__
    suite = Suite(runner, [c for c in args.cases.split(",") if c])
    calls(suite)
    containers(suite)
    sequences(suite)
    mappings(suite)
    tensors(suite)


if __name__ == "__main__":
    main()
