"""atheris harness: every public function, constructor and method of ffikit, called with
arguments of every kind.

The API is found by introspection when the harness starts, so new API is fuzzed without
touching this file: the public callables of ffikit and of its public submodules (those
defined in ffikit, not what they import), every public class's constructor, its own
methods and dunder operations (those defined in ffikit or in the collections.abc mixins
it builds on; not what str, bytes, tuple, int or object give it) and its properties
(read, written and deleted), the global Functions in the registry, and the pickle
reconstructors the classes' ``__reduce__`` name (pickle data can call them with anything).
``ffikit.cpp`` runs its argument checking only: its build plan is replaced by a stub that
raises before a compiler would run.

The input decodes into a short program: each step picks a target and draws its arguments
(and sometimes keyword arguments named after its parameters) from every kind: str (one
character, dtype and device words, type keys, lone surrogates, NUL), bytes, huge and
negative ints, NaN and infinities, None, nested sequences of strs and of ints (shapes),
ffikit objects of every class (of the wrong type too: a method's receiver is sometimes
any value), numpy arrays, callables, deep chains and self-containing lists and dicts,
and what earlier steps returned. A call must return or raise an Exception; a crash, a
SystemError (an extension that broke CPython's rules), a BaseException that is not an
Exception, or an ffikit object left alive once the program's values are dropped (after
the cycles it made are broken: reference counting cannot free them, docs/design.md) is a
finding.

Calls that legitimately block, spawn processes or threads without bound, touch files or
the network, compile, or take raw addresses are in DENY with the reason; calls whose
side effects reach the whole process (the registries) are fuzzed through ADAPT, which
keeps the names they register in a namespace of the harness's own, removed after each
input, so that one input cannot change what the next one does.
"""
from __future__ import annotations

import collections.abc
import copy
import gc
import inspect
import math
import os
import pickle
import sys
import types
import warnings

import numpy as np

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

with instrumented():
    import ffikit
    import ffikit.cpp
    import ffikit.dataclasses
    import ffikit.libinfo
    import ffikit.stubgen
    import ffikit.testing

# ---- what is fuzzed ----------------------------------------------------------------------

# The public modules whose callables are fuzzed (a module's imports are skipped: only what is
# defined under ffikit counts). ffikit.config is left out: it is the ffikit-config command
# line (prints flags, exits).
MODULES = [ffikit, ffikit.access_path, ffikit.dataclasses, ffikit.cpp, ffikit.libinfo, ffikit.serialization,
           ffikit.stream, ffikit.structural, ffikit.stubgen, ffikit.testing]

# Calls never made, each with its reason. Keys are "module.name" or "Class.attr".
DENY = {
    # Raw addresses, trusted by contract (like ctypes): any int would be a wild pointer.
    "Function.__from_extern_c__": "calls the C function at the address it is given",
    # Files, dlopen and shared memory.
    "ffikit.load_module": "dlopens the path: runs the library's constructors, reads files",
    "ffikit.empty_shared": "creates POSIX shared memory (files under /dev/shm) that outlive the process",
    "ffikit.sweep_shared": "unlinks shared memory segments under /dev/shm",
    "ffikit._tensor._attach_shared": "opens the shared memory segment it is named (a file under /dev/shm)",
    "ffikit.stubgen.main": "a command line: writes the file named by -o, exits (SystemExit) on bad arguments",
    # Imports that take seconds and start threads (torch, distributed).
    "ffikit.use_torch_stream": "imports torch",
    "ffikit.stream.use_torch_stream": "imports torch",
    "ffikit.stream.TorchStreamContext": "imports torch on __enter__",
    "dtype.to_torch": "imports torch",
}

# Attributes of classes never called: the machinery of every Python class, not ffikit's API.
SKIP_ATTRS = {"__class__", "__init_subclass__", "__subclasshook__", "__new__", "__init__", "__getattribute__",
              "__dir__", "__sizeof__", "__format__", "__class_getitem__", "__abstractmethods__", "__slots__",
              "__dict__", "__weakref__", "__module__", "__doc__", "__annotations__", "__getstate__"}

# Where an attribute is defined decides whether it is ffikit's (and so fuzzed): in ffikit or
# in the collections.abc mixins that ffikit's containers are built on (List.pop, Map.get).
OWN_MODULES = ("ffikit", "collections.abc", "_collections_abc")

# The registry namespaces ffikit itself fills (its C library and its testing module). Others
# are registered by tests and users: the replay imports this harness after other tests ran,
# and an input must mean the same program there as it did when it was fuzzed.
LIBRARY_NAMESPACES = {"ffi", "testing"}

SCRATCH_MODULE = "_fuzz_api_scratch"
sys.modules[SCRATCH_MODULE] = types.ModuleType(SCRATCH_MODULE)
NAMESPACE = "fuzz_api."


def _ns(v):
    """A registry name, moved into the harness's namespace (other values as they are, so the
    type checks are still fuzzed)."""
    return NAMESPACE + v if isinstance(v, str) else v


def _first_arg_ns(args, kwargs, key):
    if args:
        args = (_ns(args[0]),) + tuple(args[1:])
    if key in kwargs:
        kwargs[key] = _ns(kwargs[key])
    return args, kwargs


def _adapt_init_ffi_api(args, kwargs):
    # Fills the module it is named with attributes: always the harness's scratch module.
    kwargs.pop("target_module_name", None)
    return (args[0] if args else None, SCRATCH_MODULE), kwargs


def _adapt_native_thread(args, kwargs):
    # testing.call_from_native_thread(f, times, ...) calls f `times` times: a count past a
    # few runs for hours, a cost and not a bug. Negative and non-int counts stay fuzzed.
    if len(args) > 1 and isinstance(args[1], int) and args[1] > 3:
        args = (args[0], 3) + tuple(args[2:])
    if isinstance(kwargs.get("times"), int) and kwargs["times"] > 3:
        kwargs["times"] = 3
    return args, kwargs


def _adapt_bytes(args, kwargs):
    # Bytes(n) is bytes(n): n zero bytes, Python's rule. 2**31 of them is a cost, not a bug
    # (huge and negative counts stay fuzzed: they must raise).
    if args and isinstance(args[0], int) and 2**20 < args[0] < 2**40:
        args = (2**20,) + tuple(args[1:])
    return args, kwargs


# Calls whose effects reach the whole process, or whose cost grows with an argument: their
# arguments are adjusted first.
ADAPT = {
    "ffikit.Bytes": _adapt_bytes,
    "ffikit.register_global_func": lambda a, k: _first_arg_ns(a, k, "name"),
    "ffikit.remove_global_func": lambda a, k: _first_arg_ns(a, k, "name"),
    "ffikit.register_error": lambda a, k: _first_arg_ns(a, k, "name_or_cls"),
    "ffikit.init_ffi_api": _adapt_init_ffi_api,
    "ffikit.testing.call_from_native_thread": _adapt_native_thread,
}


class NoCompile(Exception):
    """Raised by the stub build plan: ffikit.cpp got as far as building."""


def _no_plan(*args, **kwargs):
    raise NoCompile("ffikit.cpp would compile here")




class Target:
    __slots__ = ("name", "fn", "cls", "attr", "kind", "params")

    def __init__(self, name, fn=None, cls=None, attr=None, kind="call"):
        self.name, self.fn, self.cls, self.attr, self.kind = name, fn, cls, attr, kind
        self.params = _param_names(fn if fn is not None else getattr(cls, attr, None) if cls else None)

    def __repr__(self):
        return self.name


def _param_names(fn) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name != "self"]


def _defined_in_ffikit(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("ffikit")


def _owner_module(cls, attr):
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            return klass.__module__ or ""
    return ""


def discover():
    """(targets, classes): every callable and class of ffikit's public surface, sorted by
    name so that an input means the same program in every run."""
    targets: dict[str, Target] = {}
    classes: dict[str, type] = {}
    seen: set[int] = set()  # a callable re-exported by another module is fuzzed once
    for mod in MODULES:
        for name in dir(mod):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            if isinstance(obj, type):
                if not _defined_in_ffikit(obj):
                    continue
                classes.setdefault(obj.__qualname__, obj)
            elif not _defined_in_ffikit(obj) and not isinstance(obj, ffikit.Function):
                continue
            full = f"{mod.__name__}.{name}"
            canonical = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
            if id(obj) not in seen and full not in DENY and canonical not in DENY:
                seen.add(id(obj))
                targets[full] = Target(full, fn=obj)
    # Classes reached through other classes (the Field descriptors, AccessStep ...).
    for extra in (type(ffikit.testing.TestObjectBase.__dict__["v_i64"]), ffikit.access_path.AccessStep,
                  ffikit._core.Field, ffikit._core.Method, ffikit._core.StaticMethod):
        classes.setdefault(extra.__qualname__, extra)
    for cname, cls in sorted(classes.items()):
        if f"{cls.__module__}.{cname}" in DENY or f"ffikit.{cname}" in DENY:
            continue
        for attr in sorted(dir(cls)):
            if attr in SKIP_ATTRS or (attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))):
                continue
            if not _owner_module(cls, attr).startswith(OWN_MODULES) or f"{cname}.{attr}" in DENY:
                continue
            raw = inspect.getattr_static(cls, attr)
            if isinstance(raw, cls):  # an enum's member: a constant
                continue
            if isinstance(raw, (staticmethod, classmethod)) or inspect.isbuiltin(getattr(cls, attr, None)):
                targets[f"{cname}.{attr}"] = Target(f"{cname}.{attr}", fn=getattr(cls, attr))
            elif callable(raw) and not hasattr(raw, "__set__"):
                targets[f"{cname}.{attr}"] = Target(f"{cname}.{attr}", cls=cls, attr=attr, kind="method")
            else:  # a property, getset or member descriptor, a reflected field, a constant
                targets[f"{cname}.{attr}"] = Target(f"{cname}.{attr}", cls=cls, attr=attr, kind="attr")
    # Pickle reconstructors: pickle data names them with arguments of its choosing.
    samples = [ffikit.List([1]), ffikit.Array([1]), ffikit.Map({1: 2}), ffikit.Dict({1: 2}), ffikit.String("s"),
               ffikit.Bytes(b"b"), ffikit.Shape([1]), ffikit.zeros([1], "int8"), ffikit.Device("cpu", 0),
               ffikit.DataType("int8"), ffikit.int8, ffikit.Error("ValueError", "m"), ffikit.convert(print),
               ffikit.get_global_func("testing.echo"), ffikit.testing.TestIntPair(1, 2),
               ffikit.access_path.AccessPath.root().attr("a"), POINT(1, 2, 3)]
    for s in samples:
        for protocol in (2, 5):
            try:
                fn = s.__reduce_ex__(protocol)[0]
            except Exception:
                continue
            name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"
            if _defined_in_ffikit(fn) and not isinstance(fn, type) and name not in DENY and id(fn) not in seen:
                seen.add(id(fn))
                targets[name] = Target(name, fn=fn)
    del samples
    for name in sorted(ffikit.list_global_func_names()):
        if name.split(".")[0] in LIBRARY_NAMESPACES:
            targets["global:" + name] = Target("global:" + name, fn=ffikit.get_global_func(name))
    return [targets[k] for k in sorted(targets)], [classes[k] for k in sorted(classes)]


# ---- the values arguments are drawn from ------------------------------------------------

STRS = ["", "a", "x", "0", "1", "-1", " ", "\x00", "\ud800", "é", "名", "a" * 40, "float32", "int8", "bool",
        "uint1", "float8_e4m3fn", "bfloat16x4", "float32x-1", "int0", "handle", "cpu", "cpu:0", "cuda:0", "cuda:-1",
        "metal:99999999999", "ext_dev", "cpu:", ":", "ffi.Array", "ffi.Map", "ffi.Tensor", "ffi.Shape", "ffi.Object",
        "testing.TestObjectBase", "testing.TestIntPair", "testing.echo", "testing.nop", "v_i64", "v_str", "a.b",
        "(int, int) -> int", "(", "() -> ", "{}", "[1, 2]", '{"root": 1, "nodes": [{"type": "ffi.Array"}]}', "add",
        "__init__", "main", "x.c", "x.cu", "\n", "%s%n", "..", "/", "ValueError", "TypeError", "RuntimeError",
        "KeyboardInterrupt", "SystemExit", "MemoryError", "StopIteration",
        # Backtrace lines (Error's third argument, pickled Errors): what error.py parses.
        '  File "x.py", line 2147483648, in f\n', "  at f (x.c:99999999999)\n", "  in call to Function `f`\n"]
BYTES = [b"", b"\x00", b"a", b"\xff" * 3, bytes(range(16)), b"\x80abc"]
INTS = [0, 1, 2, 3, 7, -1, -2, -7, 31, 64, 2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**48, 2**62, 2**63 - 1, 2**63,
        -(2**63), -(2**63) - 1, 2**64, 2**64 + 1, 10**30, -(10**30), 2**1000]
FLOATS = [0.0, -0.0, 0.5, -1.5, 1e308, -1e308, 5e-324, math.nan, math.inf, -math.inf, 2.0**63, 3.0]
# Small dims, one extreme now and then: shapes whose product stays small or overflows, so a
# call allocates little or nothing (a 7 GB zeros would be a cost, not a finding).
DIMS = [0, 1, 2, 3, 4, -1, -3, 2**31, 2**62, 2**63 - 1, -(2**63), 2**64, 10**20]


def _lambda_kinds():
    return [lambda *a, **k: None, lambda *a, **k: a, lambda *a, **k: 1 / 0, lambda *a, **k: ffikit.List(a),
            lambda x=None, *a: x]


class Values:
    """The program's values: drawn from every kind, and what earlier calls returned."""

    def __init__(self, r: Reader, classes):
        self.r = r
        self.classes = classes
        self.results: list = []
        self.made: list = []  # every value a factory made, for the cycle sweep at the end

    def keep(self, v):
        self.made.append(v)
        return v

    def ffikit_object(self):
        r = self.r
        k = r.pick(26)
        if k == 0:
            return self.keep(ffikit.List([self.scalar() for _ in range(r.small(0, 3))]))
        if k == 1:
            return self.keep(ffikit.Array([self.scalar() for _ in range(r.small(0, 3))]))
        if k == 2:
            return self.keep(ffikit.Map({self.scalar_key(): self.scalar() for _ in range(r.small(0, 3))}))
        if k == 3:
            return self.keep(ffikit.Dict({self.scalar_key(): self.scalar() for _ in range(r.small(0, 3))}))
        if k == 4:
            return ffikit.String(STRS[r.pick(len(STRS))])
        if k == 5:
            return ffikit.Bytes(BYTES[r.pick(len(BYTES))])
        if k == 6:
            return ffikit.Shape([r.small(0, 4) for _ in range(r.small(0, 3))])
        if k == 7:
            dims = [r.small(0, 3) for _ in range(r.small(0, 3))]
            return ffikit.zeros(dims, ["float32", "int8", "int64", "bool", "float16"][r.pick(5)])
        if k == 8:
            return ffikit.Device(["cpu", "cuda", "cuda_host"][r.pick(3)], r.small(0, 2))
        if k == 9:
            return ffikit.DataType(["float32", "int8", "bool", "bfloat16x4", "handle"][r.pick(5)])
        if k == 10:
            return [ffikit.float32, ffikit.int64, ffikit.bool, ffikit.float4_e2m1fnx2, ffikit.dtype("int8x4")][r.pick(5)]
        if k == 11:
            return ffikit.convert(_lambda_kinds()[r.pick(5)])
        if k == 12:
            return ffikit.get_global_func(["testing.echo", "testing.nop", "testing.add_one", "testing.apply"][r.pick(4)])
        if k == 13:
            return ffikit.Error(["ValueError", "TypeError", "", "x"][r.pick(4)], STRS[r.pick(len(STRS))])
        if k == 14:
            return ffikit.system_lib()
        if k == 15:
            return ffikit.testing.TestObjectBase(v_i64=r.small(0, 9), v_str="s")
        if k == 16:
            return ffikit.testing.TestObjectDerived()
        if k == 17:
            return ffikit.testing.TestIntPair(r.small(0, 5), r.small(0, 5))
        if k == 18:
            return ffikit.testing.make_unregistered_object()
        if k == 19:
            p = ffikit.access_path.AccessPath.root()
            return p.attr("a").array_item(r.small(0, 3)) if r.u8() & 1 else p.map_item(self.scalar_key())
        if k == 20:
            return ffikit.access_path.AccessPath.root().attr("f").to_steps()[0]
        if k == 21:
            return self.keep(POINT(r.small(0, 9), self.scalar(), self.any_value(2)))
        if k == 22:
            return self.keep(ffikit.use_raw_stream(ffikit.Device("cpu", 0), r.small(0, 3)))
        if k == 23:
            return ffikit.convert((1, "a", None))
        if k == 24:
            # A TypeInfo of its own: the one a class carries is shared by the whole process,
            # and its attributes are writable.
            cls = self.classes[r.pick(len(self.classes))]
            ti = getattr(cls, "__tvm_ffi_type_info__", None)
            return ffikit.TypeInfo(ti.type_index, ti.type_cls) if ti is not None else ffikit.TypeInfo(r.small(0, 90), None)
        return ffikit.dataclasses.field(default=self.scalar())

    def scalar(self):
        r = self.r
        k = r.pick(6)
        if k == 0:
            return None
        if k == 1:
            return INTS[r.pick(len(INTS))]
        if k == 2:
            return FLOATS[r.pick(len(FLOATS))]
        if k == 3:
            return STRS[r.pick(len(STRS))]
        if k == 4:
            return BYTES[r.pick(len(BYTES))]
        return bool(r.u8() & 1)

    def scalar_key(self):
        v = self.scalar()
        return v if not (isinstance(v, float) and math.isnan(v)) else 0.5

    def chain(self, depth: int, kind: int):
        v = [] if kind == 0 else ffikit.List() if kind == 1 else ffikit.Array([])
        for _ in range(depth):
            v = [v] if kind == 0 else self.keep(ffikit.List([v])) if kind == 1 else ffikit.Array([v])
        return v

    def any_value(self, depth: int = 3):
        r = self.r
        k = r.pick(20)
        if k < 5:
            return self.scalar()
        if k == 5:
            return STRS[r.pick(len(STRS))][:1] or "a"  # one-character strs are sequences of themselves
        if k == 6:  # a shape: ints, mostly small, sometimes nested or holding a str
            dims = [DIMS[r.pick(len(DIMS))] if r.chance(30) else r.small(0, 4) for _ in range(r.small(0, 4))]
            form = r.pick(6)
            return (tuple(dims) if form < 3 else dims if form < 5 else [tuple(dims)])
        if k == 7:  # nested sequences of strs
            return [[STRS[r.pick(len(STRS))] for _ in range(r.small(0, 2))] for _ in range(r.small(0, 2))]
        if k == 8 and depth > 0:
            return [self.any_value(depth - 1) for _ in range(r.small(0, 3))]
        if k == 9 and depth > 0:
            return tuple(self.any_value(depth - 1) for _ in range(r.small(0, 3)))
        if k == 10 and depth > 0:
            return {self.scalar_key(): self.any_value(depth - 1) for _ in range(r.small(0, 3))}
        if k == 11:  # deep chains (past the recursion limit too)
            return self.chain([2, 50, 900, 3000][r.pick(4)], r.pick(3))
        if k == 12:  # self-containing lists and dicts, Python's and ffikit's
            form = r.pick(4)
            if form == 0:
                v: list = [1]
                v.append(v)
                return v
            if form == 1:
                d: dict = {}
                d["self"] = d
                return d
            c = self.keep(ffikit.List([1]) if form == 2 else ffikit.Dict())
            if form == 2:
                c.append(c)
            else:
                c["self"] = c
            return c
        if k in (13, 14, 15):
            return self.ffikit_object()
        if k == 16:
            arrays = [np.zeros(3, "float32"), np.arange(6, dtype="int64").reshape(2, 3)[:, ::2],
                      np.array(1.5), np.zeros((0, 2)), np.frombuffer(b"\x00" * 9, "uint8")[1:].view("int64"),
                      np.array(["a"]), np.float32(1)]
            return arrays[r.pick(len(arrays))]
        if k == 17:
            return _lambda_kinds()[r.pick(5)]
        if k == 18 and self.results:
            return self.results[r.pick(len(self.results))]
        others = [bytearray(b"ab"), memoryview(b"abc"), 1 + 2j, range(3), {1, 2}, frozenset(), object(), Ellipsis,
                  slice(1, None, -1), np.int64(7), np.float64("nan"), ffikit.Object, ffikit.testing.TestIntPair]
        v = others[r.pick(len(others))]
        return v if not isinstance(v, type) or r.chance(20) else None


# A py_class with fields of every declared kind, made once (type keys are process-wide).
@ffikit.dataclasses.py_class("fuzz_api.Point")
class POINT(ffikit.Object):
    x: int
    label: object
    any: object
    shape: "ffikit.Shape | None" = None
    items: "ffikit.List | None" = None


# ---- running a program ------------------------------------------------------------------

TARGETS, CLASSES = discover()
ALLOWED = (Exception,)
# FUZZ_API_TRACE=1 prints each step's target before the call: what a crash was doing.
TRACE = os.environ.get("FUZZ_API_TRACE") == "1"


def call(t: Target, vals: Values):
    r = vals.r
    args = [vals.any_value() for _ in range(r.small(0, 3) if r.chance(90) else r.small(4, 6))]
    kwargs = {}
    if t.params and r.chance(30):
        for _ in range(r.small(1, 2)):
            kwargs[t.params[r.pick(len(t.params))]] = vals.any_value()
    if r.chance(3):
        kwargs[STRS[r.pick(len(STRS))] or "k"] = vals.any_value()
    adapt = ADAPT.get(t.name)
    if adapt is not None:
        args, kwargs = adapt(tuple(args), kwargs)
    if t.kind == "call":
        if t.name.startswith("ffikit.cpp."):
            # Argument checking only: the build plan is swapped for one that raises before a
            # compiler would run (and put back, so the test suite's cpp tests still build).
            saved, ffikit.cpp._Plan = ffikit.cpp._Plan, _no_plan
            try:
                return t.fn(*args, **kwargs)
            finally:
                ffikit.cpp._Plan = saved
        return t.fn(*args, **kwargs)
    receiver = _receiver(t.cls, vals)
    if t.kind == "method":
        return getattr(t.cls, t.attr)(receiver, *args, **kwargs)
    op = r.pick(4)
    if op == 0:
        return getattr(type(receiver) if receiver is None else receiver, t.attr)
    if op in (1, 2) and isinstance(receiver, type):
        return _class_attr_change(receiver, t.attr, op, args[0] if args else None)
    if op == 1:
        return setattr(receiver, t.attr, args[0] if args else None)
    if op == 2:
        return delattr(receiver, t.attr)
    descr = inspect.getattr_static(t.cls, t.attr)  # the descriptor with a receiver of any type
    return descr.__get__(receiver, t.cls) if hasattr(descr, "__get__") else descr


def _class_attr_change(cls: type, attr: str, op: int, value) -> None:
    """Sets (op 1) or deletes (op 2) a class's attribute, then puts the class back as it was:
    a class outlives the input, so a change would reach every later input and keep what was
    set alive for good (a leak the live-object check would blame on the input)."""
    missing = object()
    saved = cls.__dict__.get(attr, missing)
    try:
        if op == 1:
            setattr(cls, attr, value)
        else:
            delattr(cls, attr)
    finally:
        try:
            if saved is not missing:
                setattr(cls, attr, saved)
            elif attr in cls.__dict__:
                delattr(cls, attr)
        except ALLOWED:
            pass  # a class that refused the change refuses putting back too: nothing changed


def _receiver(cls, vals: Values):
    """An instance of `cls` when the program has one (or a factory makes one), else any
    value: a method must refuse a receiver of the wrong type."""
    r = vals.r
    if r.chance(85):
        for _ in range(4):
            v = vals.ffikit_object() if r.u8() & 1 else vals.any_value()
            if isinstance(v, cls):
                return v
        for v in vals.results:
            if isinstance(v, cls):
                return v
    return vals.any_value()


def _describe(v) -> None:
    """What a caller does with a result: repr, str, bool, hash, len, iteration."""
    for fn in (repr, str, bool, hash, len):
        try:
            fn(v)
        except ALLOWED:
            pass
    if isinstance(v, (ffikit.Array, ffikit.List, ffikit.Map, ffikit.Dict)):
        try:
            for _ in zip(range(8), v):
                pass
        except ALLOWED:
            pass


def run(data: bytes) -> None:
    r = Reader(data)
    vals = Values(r, CLASSES)
    steps = 0
    while r.left() > 0 and steps < 24:
        steps += 1
        t = TARGETS[r.u16() % len(TARGETS)]
        if TRACE:
            print(f"fuzz_api: step {steps}: {t.name}", file=sys.stderr, flush=True)
        try:
            out = call(t, vals)
        except SystemError as e:  # an extension returned NULL without an error, or the reverse
            raise AssertionError(f"{t.name} raised SystemError: {e}") from e
        except ALLOWED:
            continue
        _describe(out)
        if isinstance(out, ffikit.TypeInfo):  # maybe a class's own: later steps get a copy
            out = ffikit.TypeInfo(out.type_index, out.type_cls)
        if not isinstance(out, type) and len(vals.results) < 64:
            vals.results.append(out)
    restore_streams(vals.results + vals.made)
    sweep(vals.results + vals.made)


def sweep(roots) -> None:
    """Breaks every cycle the program may have made: empties the Lists and Dicts and clears
    the writable fields reachable from its values (what reference counting cannot free)."""
    todo, seen = list(roots), set()
    while todo:
        x = todo.pop()
        if not isinstance(x, (ffikit.Object, list, tuple, dict)) or id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, (list, tuple)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif isinstance(x, (ffikit.Map, ffikit.Dict)):
            items = list(x.items())
            todo.extend(k for k, _ in items)
            todo.extend(v for _, v in items)
            if isinstance(x, ffikit.Dict):
                x.clear()
        elif isinstance(x, (ffikit.Array, ffikit.List)):
            todo.extend(list(x))
            if isinstance(x, ffikit.List):
                x.clear()
        else:
            try:
                fields = getattr(type(x), "__tvm_ffi_type_info__").fields
            except ALLOWED:
                continue
            for f in fields or ():
                try:
                    todo.append(getattr(x, f.name))
                    setattr(x, f.name, None)
                except ALLOWED:
                    pass


def restore_streams(values) -> None:
    """Puts back the default stream (0) of every device a StreamContext of the program
    named: a context entered and never left would change get_raw_stream for the inputs
    (and, in the replay, the tests) that come after."""
    for v in values:
        if isinstance(v, ffikit.StreamContext):
            ffikit._core._env_set_current_stream(v.device_type, v.device_id, 0)


def test_one_input(data: bytes) -> None:
    before = live_objects()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(data)
    for name in ffikit.list_global_func_names():
        if name.startswith(NAMESPACE):
            ffikit.remove_global_func(name)
    check_nothing_alive(before, "an API program")


if __name__ == "__main__":
    main(test_one_input)
