"""atheris harness: Python values of every kind the conversion rules name, nested, through
``ffikit.convert`` and through a C function (``testing.echo``) and back.

The input decodes into a value tree together with what it must become (the spec's
"Python -> ffikit" and "ffikit -> Python" rules) and the exceptions it may raise: int64
overflow, strings with lone surrogates, dlpack exporters that refuse, self-containing
lists, nesting past the recursion limit. A conversion must give exactly the expected
result, or raise one of the expected exceptions when the tree holds a reason for it, and
leave no C object alive once everything is dropped.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

with instrumented():
    import ffikit
    import ffikit.testing  # noqa: F401 - registers testing.echo

echo = ffikit.get_global_func("testing.echo")

INT64 = (-(2**63), 2**63 - 1)
MAX_DEPTH = 4        # ordinary nesting
DTYPE_WORDS = ["int", "uint", "float", "bfloat", "bool", "complex", "handle", "e4m3fn", "8", "16",
               "32", "64", "1", "4", "x", "2", "0", "128", "f", "i", "u", "b", "-", " ", "float8_", "void"]
DEVICE_WORDS = ["cpu", "cuda", "cuda_host", "rocm", "metal", "vulkan", "ext_dev", "trn", "maia", ":", "0",
                "1", "-1", "99999999999", " ", "x", "gpu", "cuda:", ":0", "\x00"]
NP_SCALARS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
NP_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
             "complex64", "bool", "object", "U3", "datetime64[s]"]


def chain(n: int) -> list:
    v: list = []
    for _ in range(n):
        v = [v]
    return v


def recursion_depth() -> int:
    """The nesting at which converting a chain of lists raises RecursionError in this
    interpreter: about Python's recursion limit on 3.10 and 3.11, the C recursion limit on
    3.12 (1,500) and 3.13 (10,000). Found once by bisection."""
    def fails(n: int) -> bool:
        try:
            ffikit.convert(chain(n))
        except RecursionError:
            return True
        return False

    lo, hi = 1, 1024
    while not fails(hi):
        lo, hi = hi, hi * 2
        assert hi <= 1 << 17, "converting a chain of 2^17 lists raised no RecursionError"
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid, hi)
    return hi


RECURSION_DEPTH = recursion_depth()
# Chains this short must convert, whatever frames the caller has on the stack; chains past
# RECURSION_DEPTH (+ 50) must not.
SURE_OK_DEPTH = min(700, RECURSION_DEPTH - 300)


class MyInt(int):
    pass


class MyFloat(float):
    pass


class MyStr(str):
    pass


class MyList(list):
    pass


class MyDict(dict):
    pass


class Color(enum.IntEnum):
    RED = 1
    BLUE = 2**62


class Refuses:
    """Offers DLPack and then refuses: the exporter's exception must come through."""

    def __dlpack__(self, *args, **kwargs):
        raise ValueError("this exporter refuses")

    def __dlpack_device__(self):
        return (1, 0)


class Odd:
    """Not convertible by any rule: becomes an Opaque object. Hashing or comparing it
    would raise, which a conversion must never need."""

    def __hash__(self):
        raise TypeError("Odd objects are not hashable")

    def __eq__(self, other):
        raise TypeError("Odd objects are not comparable")

    def __index__(self):
        return 7  # not an int: __index__ alone does not make a value integral


class Ctx:
    """What generating a value tree learned: the exceptions converting it may raise (at
    least one of them must, when there are any), and whether it holds values that have no
    structural equality (NaN, Opaque objects, functions, errors, tensors), so that two
    conversions of it need not compare equal."""

    __slots__ = ("errors", "plain")

    def __init__(self):
        self.errors: set = set()
        self.plain = True

    def merge(self, other: "Ctx") -> None:
        self.errors |= other.errors
        self.plain = self.plain and other.plain


def gen_scalar_key(r: Reader, ctx: Ctx):
    """A hashable key: the scalar kinds and tuples of them (tuples become Array keys)."""
    k = r.pick(8)
    if k == 0:
        return None
    if k == 1:
        return bool(r.u8() & 1)
    if k == 2:
        return r.small(-3, 40)
    if k == 3:
        f = r.f64()
        return 0.5 if math.isnan(f) else f  # NaN keys never equal themselves, in C or Python
    if k == 4:
        return "k" * r.small(0, 12)
    if k == 5:
        return bytes(r.take(r.small(0, 10)))
    if k == 6:
        ctx.plain = False  # a new Array key each conversion: keys compare by identity
        return tuple(gen_scalar_key(r, ctx) for _ in range(r.small(0, 2)))
    return ffikit.String("a string key longer than seven bytes" + str(r.u8()))


def gen_int(r: Reader, ctx: Ctx):
    n = r.small(1, 10)
    v = int.from_bytes(r.take(n), "little", signed=True)
    if not INT64[0] <= v <= INT64[1]:
        ctx.errors.add(OverflowError)
    return v, ("int", v)


def gen_text(r: Reader, ctx: Ctx) -> str:
    if r.chance(50):
        return bytes(b & 0x7F for b in r.take(r.small(0, 24))).decode("ascii")
    cps = [int.from_bytes(r.take(3), "little") % 0x110000 for _ in range(r.small(0, 8))]
    s = "".join(map(chr, cps))
    if any(0xD800 <= c <= 0xDFFF for c in cps):
        ctx.errors.add(UnicodeEncodeError)
    return s


def gen_words(r: Reader, words: list) -> str:
    return "".join(words[r.pick(len(words))] for _ in range(r.small(0, 4)))


def gen_array(r: Reader):
    dt = NP_DTYPES[r.pick(len(NP_DTYPES))]
    shape = tuple(r.small(0, 4) for _ in range(r.small(0, 3)))
    a = np.zeros(shape, dtype=dt)
    if a.ndim and r.chance(30):
        a = a[..., ::2]
    if a.ndim >= 2 and r.chance(30):
        a = a.T
    if dt in ("object", "U3", "datetime64[s]"):
        return a, None  # numpy refuses to export these: its BufferError comes through
    return a, ("tensor", a)


def gen(r: Reader, depth: int, ctx: Ctx):
    """(value, expected) where expected describes the conversion's result (see check)."""
    kind = r.pick(24 if depth < MAX_DEPTH else 9)
    if kind == 0:
        return None, ("none",)
    if kind == 1:
        b = bool(r.u8() & 1)
        return b, ("bool", b)
    if kind == 2:
        return gen_int(r, ctx)
    if kind == 3:
        f = r.f64()
        ctx.plain = ctx.plain and not math.isnan(f)
        return f, ("float", f)
    if kind == 4:
        s = gen_text(r, ctx)
        return s, ("str", s)
    if kind == 5:
        b = bytes(r.take(r.small(0, 40)))
        return (bytearray(b) if r.u8() & 1 else b), ("bytes", b)
    if kind == 6:
        t = NP_SCALARS[r.pick(len(NP_SCALARS))]
        v = np.frombuffer(r.take(np.dtype(t).itemsize), dtype=t)[0]
        if not INT64[0] <= int(v) <= INT64[1]:
            ctx.errors.add(OverflowError)
        return v, ("int", int(v))
    if kind == 7:
        k = r.pick(5)
        if k == 0:
            v = MyInt(r.i64())
            return v, ("int", int(v))
        if k == 1:
            v = MyFloat(r.f64())
            ctx.plain = ctx.plain and not math.isnan(v)
            return v, ("float", float(v))
        if k == 2:
            s = gen_text(r, ctx)
            return MyStr(s), ("str", s)
        if k == 3:
            c = Color.RED if r.u8() & 1 else Color.BLUE
            return c, ("int", int(c))
        v = np.float32(r.u32() / 7) if r.u8() & 1 else np.float16(r.u16() / 7)
        return v, ("float", float(v))
    if kind == 8:
        ctx.plain = False
        obj = [object(), Odd(), Ellipsis, NotImplemented, range(3), 1j, frozenset(), set()][r.pick(8)]
        return obj, ("same", obj)
    if kind in (9, 10, 11):
        items = [gen(r, depth + 1, ctx) for _ in range(r.small(0, 4))]
        vals = [v for v, _ in items]
        exp = ("array", [e for _, e in items])
        if kind == 9:
            return vals, exp
        if kind == 10:
            return tuple(vals), exp
        return MyList(vals), exp
    if kind in (12, 13):
        d = MyDict() if kind == 13 else {}
        for _ in range(r.small(0, 4)):
            sub = Ctx()
            d[gen_scalar_key(r, ctx)] = (*gen(r, depth + 1, sub), sub)
        for _, _, sub in d.values():  # only the values a colliding key did not replace count
            ctx.merge(sub)
        return (type(d)({k: v for k, (v, _, _) in d.items()}),
                ("map", [(k, convert_key_expected(k), e) for k, (_, e, _) in d.items()]))
    if kind == 14:
        return gen_container(r, depth, ctx)
    if kind == 15:
        s = gen_text(r, Ctx())
        try:
            v = ffikit.String(s) if r.u8() & 1 else ffikit.Bytes(s.encode("utf-8"))
        except UnicodeEncodeError:
            return None, ("none",)
        return v, ("same", v)
    if kind == 16:
        text = gen_words(r, DTYPE_WORDS)
        try:
            d = ffikit.dtype(text)
        except ValueError:
            return None, ("none",)
        return d, ("dtype", d)
    if kind == 17:
        text = gen_words(r, DEVICE_WORDS)
        try:
            dev = ffikit.device(text)
        except ValueError:
            return None, ("none",)
        return dev, ("device", dev)
    if kind == 18:
        ctx.plain = False

        def f(*args):
            return args
        return f, ("func", f)
    if kind == 19:
        ctx.plain = False
        e = [ValueError("v"), KeyError("k"), RuntimeError(), OSError(2, "x")][r.pick(4)]
        return e, ("same", e)
    if kind == 20:
        ctx.plain = False
        a, exp = gen_array(r)
        if exp is None:
            ctx.errors.add(BufferError)
            ctx.errors.add(TypeError)
        return a, exp
    if kind == 21:
        ctx.errors.add(ValueError)
        return Refuses(), None
    if kind == 22:  # a list or dict that contains itself
        ctx.errors.add(RecursionError)
        if r.u8() & 1:
            lst = [1]
            lst.append(lst)
            return lst, None
        dct: dict = {}
        dct["self"] = dct
        return dct, None
    # a chain of nested lists, sometimes past the recursion limit
    n = r.u16() % SURE_OK_DEPTH if r.u8() & 1 else RECURSION_DEPTH + 50 + r.u8() * 4
    v = chain(n)
    if n > SURE_OK_DEPTH:
        ctx.errors.add(RecursionError)
        return v, None
    exp: tuple = ("array", [])
    for _ in range(n):
        exp = ("array", [exp])
    return v, exp


def convert_key_expected(k):
    if k is None:
        return ("none",)
    if isinstance(k, bool):
        return ("bool", k)
    if isinstance(k, int):
        return ("int", k)
    if isinstance(k, float):
        return ("float", k)
    if isinstance(k, str):
        return ("str", str(k))
    if isinstance(k, bytes):
        return ("bytes", bytes(k))
    return ("array", [convert_key_expected(x) for x in k])


def gen_container(r: Reader, depth: int, ctx: Ctx):
    """An ffikit container built from generated elements: it converts to itself. Building
    it must fail exactly when an element carries a reason to."""
    sub = Ctx()
    items = [(*gen(r, depth + 1, each), each) for each in (Ctx() for _ in range(r.small(0, 3)))]
    kind = r.pick(4)
    try:
        if kind < 2:
            for _, _, each in items:
                sub.merge(each)
            c = (ffikit.Array if kind == 0 else ffikit.List)([v for v, _, _ in items])
        else:
            pairs = {gen_scalar_key(r, sub): (v, each) for v, _, each in items}
            for _, each in pairs.values():  # only the values a colliding key did not replace
                sub.merge(each)
            pairs = {k: v for k, (v, _) in pairs.items()}
            c = ffikit.Map(pairs) if kind == 2 else ffikit.Dict(pairs)
    except Exception as e:
        assert sub.errors and isinstance(e, tuple(sub.errors)), \
            f"building a container raised {e!r:.200}, expected {sub.errors or 'nothing'}"
        return None, ("none",)
    assert not sub.errors, f"an ffikit container accepted elements that must fail with one of {sub.errors}"
    ctx.merge(sub)
    return c, ("same", c)


def check(exp, out, path="value") -> None:
    """`out` is what `exp` says the conversion must give."""
    tag = exp[0]
    if tag == "none":
        assert out is None, f"{path}: {out!r:.80} is not None"
    elif tag == "bool":
        assert out is exp[1], f"{path}: {out!r:.80} is not {exp[1]}"
    elif tag == "int":
        assert type(out) is int and out == exp[1], f"{path}: {out!r:.80} is not the int {exp[1]}"
    elif tag == "float":
        assert type(out) is float, f"{path}: {type(out).__name__} is not float"
        assert out == exp[1] or (math.isnan(out) and math.isnan(exp[1])), f"{path}: {out} != {exp[1]}"
    elif tag == "str":
        assert isinstance(out, str) and str(out) == exp[1], f"{path}: {out!r:.80} != {exp[1]!r:.80}"
        if len(exp[1].encode()) > 7:
            assert type(out) is ffikit.String, f"{path}: a long str came back as {type(out).__name__}"
    elif tag == "bytes":
        assert isinstance(out, bytes) and bytes(out) == exp[1], f"{path}: {out!r:.80} != {exp[1]!r:.80}"
    elif tag == "object":  # convert() of a str/bytes/bytearray: the String/Bytes object, any length
        check(exp[2], out, path)
        assert type(out) is exp[1], f"{path}: {type(out).__name__} is not {exp[1].__name__}"
    elif tag == "error":  # convert() of an exception: its Error
        assert type(out) is ffikit.Error, f"{path}: {type(out).__name__} is not Error"
        assert out.same_as(exp[1].__ffikit_error__), f"{path}: not the Error the exception carries"
    elif tag == "array":
        assert type(out) is ffikit.Array, f"{path}: {type(out).__name__} is not Array"
        assert len(out) == len(exp[1]), f"{path}: length {len(out)} != {len(exp[1])}"
        for i, (e, o) in enumerate(zip(exp[1], out)):
            check(e, o, f"{path}[{i}]")
    elif tag == "map":
        assert type(out) is ffikit.Map, f"{path}: {type(out).__name__} is not Map"
        assert len(out) == len(exp[1]), f"{path}: length {len(out)} != {len(exp[1])}"
        keys = list(out.keys())
        for i, (k, kexp, vexp) in enumerate(exp[1]):
            check(kexp, keys[i], f"{path}.keys()[{i}]")  # insertion order is kept
            # Keys compare by type and value, containers by identity (docs/design.md): a tuple
            # key becomes a new Array that only the key read back can find.
            check(vexp, out[k if kexp[0] != "array" else keys[i]], f"{path}[{k!r:.40}]")
    elif tag == "same":
        if isinstance(exp[1], (ffikit.String, ffikit.Bytes)):
            assert type(out) is type(exp[1]) and out == exp[1], f"{path}: {out!r:.80} != {exp[1]!r:.80}"
            assert out._ffikit_object.same_as(exp[1]._ffikit_object), f"{path}: a copy, not the object passed"
        elif isinstance(exp[1], ffikit.Object):
            assert isinstance(out, ffikit.Object) and out.same_as(exp[1]), f"{path}: a different object"
        else:
            assert out is exp[1], f"{path}: {out!r:.80} is not the object passed"
    elif tag == "dtype":
        # the same type, perhaps spelled differently ("i64" comes back as "int64")
        d = exp[1]
        assert type(out) is ffikit.dtype and (out.type_code, out.bits, out.lanes) == (d.type_code, d.bits, d.lanes), \
            f"{path}: {out!r} is not {d!r}"
    elif tag == "device":
        assert type(out) is ffikit.Device and out == exp[1], f"{path}: {out!r} != {exp[1]!r}"
    elif tag == "func":
        assert type(out) is ffikit.Function, f"{path}: {type(out).__name__} is not Function"
        assert tuple(out(1, "two")) == (1, "two"), f"{path}: the wrapped callable gave something else"
    elif tag == "tensor":
        a = exp[1]
        assert type(out) is ffikit.Tensor, f"{path}: {type(out).__name__} is not Tensor"
        assert tuple(out.shape) == a.shape, f"{path}: shape {tuple(out.shape)} != {a.shape}"
        if a.size:
            assert out.data_ptr() == a.ctypes.data, f"{path}: the tensor does not share the array's memory"
    else:
        raise AssertionError(f"unknown expectation {tag}")


def test_one_input(data: bytes) -> None:
    r = Reader(data)
    before = live_objects()
    ctx = Ctx()
    value, exp = gen(r, 0, ctx)
    errors = ctx.errors
    via_call = r.u8() & 1
    if not via_call and exp is not None:  # convert() gives the object forms of top-level values (tvm_ffi's convert)
        if exp[0] == "same" and isinstance(exp[1], BaseException):
            exp = ("error", exp[1])
        elif exp[0] in ("str", "bytes"):
            exp = ("object", ffikit.String if exp[0] == "str" else ffikit.Bytes, exp)
    try:
        out = echo(value) if via_call else ffikit.convert(value)
    except (tuple(errors) if errors else ()) as e:
        assert any(isinstance(e, t) for t in errors), f"{type(e).__name__} raised, expected one of {errors}"
    else:
        assert not errors, f"converted although it must raise one of {errors}: {value!r:.200}"
        check(exp, out)
        if ctx.plain and isinstance(out, ffikit.Array) and r.u8() & 1:
            # converting the same value twice gives equal, equally hashed containers
            again = ffikit.convert(value)
            assert again == out, "two conversions of one value differ"
            try:
                assert hash(again) == hash(out), "equal conversions hash differently"
            except TypeError:
                pass  # it holds an unhashable element (a List, a Dict, an Opaque without hash)
            del again
        del out
    del value, exp
    check_nothing_alive(before, "a conversion")


if __name__ == "__main__":
    main(test_one_input)
