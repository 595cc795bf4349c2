"""Every function that takes a shape, strides or dims reads it one way: the binding converts a
sequence of ints to int64 (a TypeError naming the argument and the item's type for anything
else, with no recursion), and C's one shape rule (ffk_tensor_check_shape, or ffk_shape_new for
a Shape) decides the values. Issue 35 item 1: a str where a shape belongs crashed the
interpreter (read_ints recursed into the one-character str until the stack overflowed)."""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import ffikit
from ffikit import _tensor


def t23() -> ffikit.Tensor:
    return ffikit.zeros((2, 3), "float32")


# Each entry: (name, call with the shape-like argument `s`, the "what: arg" prefix of its messages).
TAKERS = [
    ("empty", lambda s: ffikit.empty(s, "float32"), "empty: shape"),
    ("zeros", lambda s: ffikit.zeros(s, "float32"), "zeros: shape"),
    ("empty_shared", lambda s: ffikit.empty_shared(s, "float32"), "empty_shared: shape"),
    ("reshape", lambda s: t23().reshape(s), "reshape: shape"),
    ("permute", lambda s: t23().permute(s), "permute: dims"),
    ("as_strided shape", lambda s: t23().as_strided(s, (1, 1)), "as_strided: shape"),
    ("as_strided strides", lambda s: t23().as_strided((1, 1), s), "as_strided: strides"),
    ("_attach_shared shape", lambda s: ffikit._core._attach_shared("/x", s, (1,), "float32", 0), "attach_shared: shape"),
    ("_from_pickle_buffer", lambda s: _tensor._from_pickle_buffer(b"", s, "float32", "cpu"), "unpickle: shape"),
    ("_from_bytes", lambda s: _tensor._from_bytes(b"", s, "float32", "cpu"), "empty: shape"),
    ("Shape", lambda s: ffikit.Shape(s), "Shape: dims"),
]


def test_the_three_crashes_of_the_issue_are_type_errors():
    # Each one in a child first: before the fix they killed the interpreter (SIGSEGV).
    code = """
import pickle, ffikit
from ffikit import _tensor
for f in (lambda: ffikit.empty("a", "float32"),
          lambda: ffikit.zeros((2, 3), "float32").reshape("x"),
          lambda: pickle.loads(pickle.dumps(_Evil()))):
    try:
        f()
    except TypeError as e:
        print(e)
""".replace("_Evil()", "type('E', (), {'__reduce__': lambda self: (_tensor._from_pickle_buffer, (b'', ('a',), 'float32', 'cpu'))})()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "empty: shape must be a sequence of ints, not str",
        "reshape: shape must be a sequence of ints, not str",
        "unpickle: shape[0] must be an int, not str",
    ]
    # And here, with the exact exceptions.
    with pytest.raises(TypeError, match=r"^empty: shape must be a sequence of ints, not str$"):
        ffikit.empty("a", "float32")
    with pytest.raises(TypeError, match=r"^reshape: shape must be a sequence of ints, not str$"):
        t23().reshape("x")
    class Evil:
        def __reduce__(self):
            return (_tensor._from_pickle_buffer, (b"", ("a",), "float32", "cpu"))
    with pytest.raises(TypeError, match=r"^unpickle: shape\[0\] must be an int, not str$"):
        pickle.loads(pickle.dumps(Evil()))


@pytest.mark.parametrize("name,call,prefix", TAKERS, ids=[t[0] for t in TAKERS])
@pytest.mark.parametrize("value,kind,message", [
    ("a", TypeError, "{p} must be a sequence of ints, not str"),
    ("ab", TypeError, "{p} must be a sequence of ints, not str"),
    (b"ab", TypeError, "{p} must be a sequence of ints, not bytes"),
    (bytearray(b"a"), TypeError, "{p} must be a sequence of ints, not bytearray"),
    (None, TypeError, "{p} must be a sequence of ints, not NoneType"),
    (3.5, TypeError, "{p} must be a sequence of ints, not float"),
    (("a",), TypeError, "{p}[0] must be an int, not str"),
    ((2, "3"), TypeError, "{p}[1] must be an int, not str"),
    (((2, 3),), TypeError, "{p}[0] must be an int, not tuple"),
    ([[[[1]]]], TypeError, "{p}[0] must be an int, not list"),
    ((True, 2), TypeError, "{p}[0] must be an int, not bool"),
    ((None,), TypeError, "{p}[0] must be an int, not NoneType"),
    ((1.0,), TypeError, "{p}[0] must be an int, not float"),
    ((float("nan"),), TypeError, "{p}[0] must be an int, not float"),
    ((2**64,), OverflowError, "{p}[0] is 18446744073709551616, which does not fit in 64 bits"),
    ((-(2**63) - 1,), OverflowError, "{p}[0] is -9223372036854775809, which does not fit in 64 bits"),
])
def test_what_is_not_a_sequence_of_ints_is_refused_naming_argument_and_type(name, call, prefix, value, kind, message):
    import re
    with pytest.raises(kind, match="^" + re.escape(message.format(p=prefix)) + "$"):
        call(value)


def test_self_referencing_and_deep_sequences_do_not_recurse():
    x: list = []
    x.append(x)
    for name, call, prefix in TAKERS:
        with pytest.raises(TypeError, match=r"\[0\] must be an int, not list$"):
            call(x)
    deep: list = [1]
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(TypeError, match=r"^empty: shape\[0\] must be an int, not list$"):
        ffikit.empty(deep, "float32")


@pytest.mark.parametrize("shape,message", [
    ((2, -3), r"^{w}: shape\[1\] is -3, and a dimension cannot be negative$"),
    ((2**62, 4), r"^{w}: shape \[4611686018427387904, 4\] has more elements than fit in 64 bits$"),
    ((2**61,), r"^{w}: shape \[2305843009213693952\] of float32 has more bytes than fit in 64 bits$"),
    ((1,) * 33, r"^{w}: shape has 33 dimensions; a tensor has 0 to 32$"),
    ((1,) * 1000, r"^{w}: shape has 1000 dimensions; a tensor has 0 to 32$"),
])
def test_values_are_decided_by_the_c_rule_for_every_constructor(shape, message):
    for what, call in [("empty", lambda s: ffikit.empty(s, "float32")), ("zeros", lambda s: ffikit.zeros(s, "float32")),
                       ("empty_shared", lambda s: ffikit.empty_shared(s, "float32")),
                       ("unpickle", lambda s: _tensor._from_pickle_buffer(b"", s, "float32", "cpu"))]:
        with pytest.raises(ValueError, match=message.format(w=what)):
            call(shape)


def test_views_take_the_same_rule():
    t = t23()
    with pytest.raises(ValueError, match=r"^reshape: shape\[1\] is -2, and a dimension cannot be negative$"):
        t.reshape(-1, -2)
    with pytest.raises(ValueError, match=r"^reshape: shape has 40 dimensions; a tensor has 0 to 32$"):
        t.reshape((1,) * 40)
    # Others that overflow beside a -1: the message shows the shape as given (it showed the -1 as 1).
    with pytest.raises(ValueError, match=r"^cannot reshape a tensor of shape \[2, 3\] \(6 elements\) to "
                                         r"\[-1, 4611686018427387904, 4\]$"):
        t.reshape(-1, 2**62, 4)
    assert t.reshape(3, -1).shape == (3, 2) and t.reshape((3, -1)).shape == (3, 2) and t.reshape([6]).shape == (6,)
    assert t.reshape(np.int64(6)).shape == (6,) and t.reshape(np.array([3, 2])).shape == (3, 2)
    with pytest.raises(ValueError, match=r"^as_strided: shape\[0\] is -1, and a dimension cannot be negative$"):
        t.as_strided((-1,), (1,))
    with pytest.raises(ValueError, match=r"^as_strided: shape \[2\] with strides \[9223372036854775807\] of float32 "
                                         r"reaches 2\^63 bytes or more from its first element$"):
        t.as_strided((2,), (2**63 - 1,))
    with pytest.raises(ValueError, match=r"^permute: 33 dimensions given for a tensor with 2$"):
        t.permute((0,) * 33)
    assert t.permute(1, 0).shape == (3, 2) and t.permute((1, 0)).shape == (3, 2)


def test_good_shapes_still_read_from_any_iterable_of_ints():
    assert ffikit.empty([2, 3], "float32").shape == (2, 3)
    assert ffikit.empty(range(3), "float32").shape == (0, 1, 2)
    assert ffikit.empty((np.int32(2), np.uint8(3)), "float32").shape == (2, 3)
    assert ffikit.empty(np.array([2, 3]), "float32").shape == (2, 3)
    assert ffikit.empty(ffikit.Shape((4,)), "float32").shape == (4,)
    assert ffikit.empty((), "float32").shape == ()
    assert ffikit.Shape(iter([1, -1, 2])) == (1, -1, 2)  # a Shape may hold placeholders
    assert ffikit.Shape(range(40)) == tuple(range(40))  # and any number of dimensions
    with pytest.raises(ValueError, match="overflows int64"):
        ffikit.Shape((2**62, 4))


def test_a_misaligned_float64_buffer_wraps_without_a_copy():
    n = 6
    raw = np.frombuffer(bytearray(b"\0" + bytes(8 * n)), dtype=np.uint8)[1:]
    assert raw.ctypes.data % 8 == 1
    t = _tensor._from_pickle_buffer(raw, (n,), "float64", "cpu")  # what Dask's loader does with a frame
    assert t.data_ptr() == raw.ctypes.data  # wrapped, not copied
    t.fill_(1.25)
    assert np.array_equal(raw.view(np.float64), np.full(n, 1.25))  # the writes land in the frame
    assert float(t[3]) == 1.25
    u = ffikit.Tensor.from_buffer(raw.view(np.float64))
    assert u.data_ptr() == raw.ctypes.data
    c = ffikit.zeros((n,), "float64").copy_(u)
    assert np.array_equal(np.from_dlpack(c), np.full(n, 1.25))
    rev = ffikit.zeros((n,), "float64")
    u[::2].copy_(rev[:3])  # a strided, misaligned destination
    assert np.array_equal(raw.view(np.float64), np.array([0, 1.25] * 3))
    # numpy sees the same memory, flagged unaligned
    a = np.asarray(u)
    assert a.ctypes.data == raw.ctypes.data and not a.flags.aligned


def test_an_item_whose_index_empties_the_list_reads_what_was_given():
    # The items are read from a copy: an __index__ that clears the list (dropping the
    # item being converted, too) neither reads past its end nor frees what it reads.
    shape = []

    class Clears:
        def __index__(self):
            shape.clear()
            return 2

    shape.extend([Clears(), 3, 4])
    assert tuple(ffikit.empty(shape, "float32").shape) == (2, 3, 4)
