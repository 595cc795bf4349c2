"""atheris harness: ``ffikit.from_dlpack`` fed hand-made DLPack capsules (ctypes structs,
legacy and versioned, every field from the fuzzer's bytes) raw or through exporters that
misbehave, then the tensor used from Python.

The producer allocates exactly the bytes its description spans (when that is small), so
the ASan build of run_atheris.sh reports any element address outside it. Properties:
 - from_dlpack returns a Tensor or raises ValueError, TypeError, BufferError (also the
   refusing exporter's own) or OverflowError (a keyword out of range); it never runs the
   deleter, and on failure a raw capsule keeps its name (the caller still owns it) while
   on success it is renamed ``used_...``;
 - a Tensor describes what the producer described (shape, strides or the compact ones,
   dtype, device, data pointer, read-only flag);
 - a CPU tensor over real memory can be read whole (contiguous copy, numpy, pickle) and
   every byte is the producer's; views, re-export and re-import behave or raise cleanly;
 - the deleter runs exactly once, after the last Tensor, view or array over it is gone;
 - no C object stays alive.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import sys

import numpy as np

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from dlpack_producer import DELETER, DLDataType, DLDevice, DLManagedTensorVersioned, DLTensor  # noqa: E402

with instrumented():
    import ffikit

MAX_NDIM = 32
MAX_BUFFER = 1 << 14
FILL = 0x5A
INT63 = (1 << 63) - 1


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", LEGACY_DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]

ALIGNMENTS = [0, 1, 2, 8, 16, 64, 3, -1, 1 << 70, "8", None, 1.0]
CONTIGUOUS = [False, True, 0, 1, "yes", None]
IMPORT_ERRORS = (ValueError, TypeError, BufferError, OverflowError)


def extent(r: Reader) -> int:
    """A dimension or stride: mostly small, sometimes any 64-bit value."""
    b = r.u8()
    if b < 0xF0:
        return b % 8 - (9 if b >= 0xE8 else 0)
    return r.i64()


def span_of(shape, strides, byte_offset: int, itemsize: int):
    """(first, end): the bytes from data to the first-placed element and to one past the
    last-placed one (strides may be negative: first may be below 0), or None when either
    reaches 2^63 bytes from data, as the C import measures it."""
    if byte_offset > INT63:
        return None
    if any(n == 0 for n in shape):
        return byte_offset, byte_offset
    below = sum((n - 1) * -s for n, s in zip(shape, strides) if s < 0)
    above = sum((n - 1) * s for n, s in zip(shape, strides) if s >= 0)
    end = (above + 1) * itemsize + byte_offset
    if above >= INT63 or end > INT63 or below * itemsize > INT63:
        return None
    return byte_offset - below * itemsize, end


def compact_strides(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    strides = out[::-1]
    return strides if all(-(1 << 63) <= s <= INT63 for s in strides) else None


class Producer:
    """One managed tensor (legacy or versioned) over a buffer it owns; counts deleter runs
    and can hand its capsule over raw or through a misbehaving exporter."""

    def __init__(self, r: Reader):
        mode = r.u8()
        self.versioned = bool(mode & 1)
        null_strides, null_shape, null_data = bool(mode & 2), (mode & 0x1C) == 0x1C, (mode & 0xE0) == 0xE0
        ndim = r.u8() % 12 - 1 if r.u8() < 0xF0 else r.u8() % 40 - 1
        self.shape = [extent(r) for _ in range(max(ndim, 0))]
        strides = [extent(r) for _ in range(max(ndim, 0))]
        code, bits, lanes = r.u8() % 8, r.u8(), r.u8()
        self.dtype = (code, bits, lanes if lanes >= 0xF0 else 1)
        self.device = (r.u8() % 20, (r.u8() ^ 0x80) - 0x80)
        self.byte_offset = r.u8()
        if self.byte_offset >= 0xF0:
            self.byte_offset = int.from_bytes(r.take(8), "little")
        self.flags = r.u8() | (r.u8() << 56 if r.chance(5) else 0)
        self.version = (r.u8() % 3, r.u8())
        self.ndim = ndim
        self.deleted = 0

        itemsize = (self.dtype[1] * self.dtype[2] + 7) // 8
        self.eff_strides = (compact_strides(self.shape) if null_strides else strides) if ndim > 0 else []
        self.valid_shape = 0 <= ndim <= MAX_NDIM and all(n >= 0 for n in self.shape)
        extent_ = (span_of(self.shape, self.eff_strides, self.byte_offset, itemsize)
                   if self.valid_shape and self.eff_strides is not None else None)
        first, end = extent_ if extent_ is not None else (0, 0)
        self.span = None if extent_ is None else end - min(first, 0)  # the bytes a buffer needs
        self.numel = 1
        for n in self.shape:
            self.numel *= n
        self.buffer = None
        self.base = 0
        if not null_data:
            if self.span is not None and self.span <= MAX_BUFFER:
                self.buffer = ctypes.create_string_buffer(bytes([FILL]) * self.span, max(self.span, 1))
                self.base = ctypes.addressof(self.buffer) - min(first, 0)  # elements before data are in it
            else:
                self.base = 0x10000  # never read: the span is not small
        if self.span is not None and self.base + first < 0:
            self.span = None  # elements below address 0: refused

        n = max(ndim, 1)
        self._shape = (ctypes.c_int64 * n)(*[wrap64(x) for x in self.shape])
        self._strides = (ctypes.c_int64 * n)(*[wrap64(x) for x in strides])
        t = DLTensor()
        t.data = self.base or None
        t.device = DLDevice(*self.device)
        t.ndim = ndim
        t.dtype = DLDataType(*self.dtype)
        t.shape = None if null_shape else self._shape
        t.strides = None if null_strides else self._strides
        t.byte_offset = self.byte_offset % (1 << 64)
        if self.versioned:
            self._on_delete = DELETER(self._deleted)
            m = DLManagedTensorVersioned()
            m.major, m.minor = self.version
            m.flags = self.flags
            m.deleter = self._on_delete
        else:
            self._on_delete = LEGACY_DELETER(self._deleted)
            m = DLManagedTensor()
            m.deleter = self._on_delete
        m.dl_tensor = t
        self.managed = m
        self.null_shape = null_shape
        self.read_only = self.versioned and bool(self.flags & 1)
        self.name = b"dltensor_versioned" if self.versioned else b"dltensor"
        self.capsule = None

    def _deleted(self, _ptr) -> None:
        self.deleted += 1

    def make_capsule(self, name: bytes):
        self.capsule = _capsule_new(ctypes.addressof(self.managed), name, None)
        return self.capsule

    def delete_unconsumed(self) -> None:
        """What a capsule destructor does for a capsule nobody consumed."""
        self.managed.deleter(ctypes.cast(ctypes.pointer(self.managed), ctypes.POINTER(type(self.managed))))


def wrap64(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


class Exporter:
    """An object with __dlpack__ whose behaviour the input picks: 1 an exporter too old for
    max_version, 2 one that refuses, 3 one that returns a non-capsule, 4 a well-behaved one."""

    def __init__(self, producer: Producer, how: int, name: bytes):
        self.p, self.how, self.name = producer, how, name

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self.how == 1 and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")  # an old exporter
        if self.how == 2:
            raise BufferError("this exporter refuses")
        if self.how == 3:
            return b"not a capsule"
        return self.p.make_capsule(self.name)

    def __dlpack_device__(self):  # from_dlpack does not consult it: the capsule says
        return self.p.device


def readable(p: Producer) -> bool:
    """The producer's memory is real host memory (not the stand-in address of a span too
    large to allocate, nor a device's)."""
    return p.buffer is not None and p.device[0] == 1 and p.numel <= MAX_BUFFER


def expect_read(t, p: Producer) -> None:
    """Reads every element of a CPU tensor over the producer's real memory, three ways."""
    c = t.contiguous()
    assert c.nbytes() == p.numel * ((p.dtype[1] * p.dtype[2] + 7) // 8), "contiguous copy has the wrong size"
    if c.nbytes():
        assert ctypes.string_at(c.data_ptr(), c.nbytes()) == bytes([FILL]) * c.nbytes(), \
            "the copy is not the producer's bytes"
        try:
            view = memoryview(c)
        except BufferError:
            pass  # no buffer-protocol format for this dtype
        else:
            assert view.nbytes == c.nbytes() and view.readonly == c.is_read_only
            view.release()
    del c
    try:
        a = np.from_dlpack(t)
    except (BufferError, TypeError, ValueError, RuntimeError):
        pass  # dtypes numpy does not know (lanes, odd bits)
    else:
        if a.size:
            assert a.ctypes.data == t.data_ptr(), "numpy does not see the tensor's memory"
        assert bytes(a.tobytes()) == bytes([FILL]) * a.nbytes, "numpy reads other bytes"
        del a
    try:
        back = pickle.loads(pickle.dumps(t))
    except (ValueError, TypeError, BufferError):
        pass
    else:
        assert tuple(back.shape) == tuple(t.shape), "pickling changed the shape"
        del back


def use(t, p: Producer, r: Reader) -> None:
    """Views, re-export and re-import of an imported tensor."""
    ops = r.small(0, 4)
    for _ in range(ops):
        op = r.pick(6)
        try:
            if op == 0 and t.ndim:
                n = t.shape[0]
                v = t[r.small(0, 3) - 1:n + r.small(0, 3) - 1:r.small(1, 3)]
                assert v.ndim == t.ndim
            elif op == 1 and t.ndim:
                v = t[r.small(0, 4) - 2]
            elif op == 2:
                if t.is_contiguous():
                    v = t.reshape([-1])
                elif readable(p):
                    v = t.contiguous()  # a copy: reads every element
                else:
                    continue
            elif op == 3 and t.ndim >= 2:
                v = t.transpose(0, t.ndim - 1)
            elif op == 4:
                v = t.unsqueeze(0).squeeze(0)
            else:
                cap = t.__dlpack__(max_version=(1, 0) if r.u8() & 1 else None)
                v = ffikit.from_dlpack(cap)
                assert v.same_as(t), "our own export came back as another tensor"
                del cap
        except (IndexError, ValueError, TypeError, BufferError, RuntimeError):
            continue
        assert p.deleted == 0, "the deleter ran while a tensor was alive"
        del v


def test_one_input(data: bytes) -> None:
    r = Reader(data)
    before = live_objects()
    p = Producer(r)
    delivery = r.pick(8)
    name_pick = r.u8()
    name = p.name if name_pick < 0xE0 else [b"used_" + p.name, b"foo", b"", b"dltensor_"][name_pick % 4]
    kwargs = {}
    if r.chance(30):
        kwargs["require_alignment"] = ALIGNMENTS[r.pick(len(ALIGNMENTS))]
    if r.chance(30):
        kwargs["require_contiguous"] = CONTIGUOUS[r.pick(len(CONTIGUOUS))]
    source = p.make_capsule(name) if delivery < 4 else Exporter(p, delivery - 3, name)
    try:
        t = ffikit.from_dlpack(source, **kwargs)
    except Exception as e:
        assert p.deleted == 0, "the deleter ran during a failed import"
        assert isinstance(e, IMPORT_ERRORS), f"from_dlpack raised {e!r:.300}"
        refused = True
    else:
        refused = False
    if refused:  # outside the except block, which holds the exception (and its Error) alive
        if p.capsule is not None:
            assert _capsule_name(p.capsule) == name, "a refused capsule was renamed"
            if name == p.name:
                p.delete_unconsumed()
                assert p.deleted == 1
        del source
        check_nothing_alive(before, "a refused import")
        return
    assert name == p.name, f"imported a capsule named {name!r}"
    assert _capsule_name(p.capsule) == b"used_" + p.name, "a consumed capsule was not renamed"
    assert p.deleted == 0, "the deleter ran during import"
    # What was accepted is what the producer described.
    assert p.valid_shape and (not p.null_shape or p.ndim == 0), f"accepted ndim {p.ndim} without a valid shape"
    assert not p.versioned or p.version[0] == 1, f"accepted DLPack version {p.version}"
    assert p.span is not None, "accepted a tensor spanning more than 2^63 bytes"
    assert p.numel == 0 or p.base, "accepted NULL data with elements"
    assert t.ndim == p.ndim and tuple(t.shape) == tuple(p.shape), f"shape {tuple(t.shape)} != {p.shape}"
    if p.numel:
        assert tuple(t.strides) == tuple(p.eff_strides), f"strides {tuple(t.strides)} != {p.eff_strides}"
    dt = t.dtype
    assert (dt.type_code, dt.bits, dt.lanes) == p.dtype, f"dtype {dt!r} != {p.dtype}"
    assert t.__dlpack_device__() == p.device, f"device {t.__dlpack_device__()} != {p.device}"
    assert t.data_ptr() == (p.base + p.byte_offset if p.base else 0), "the data pointer moved"
    assert t.is_read_only == p.read_only, "the read-only flag was lost"
    assert t.numel() == p.numel
    align = kwargs.get("require_alignment", 0)
    if isinstance(align, int) and align > 1 and p.numel:
        assert (p.base + p.byte_offset) % align == 0, "accepted a misaligned tensor"
    if kwargs.get("require_contiguous"):
        assert t.is_contiguous(), "accepted a strided tensor under require_contiguous"
    del source
    if readable(p) and p.numel > 0:
        expect_read(t, p)
    use(t, p, r)
    assert p.deleted == 0, "the deleter ran while the tensor was alive"
    del t
    assert p.deleted == 1, f"the deleter ran {p.deleted} times"
    check_nothing_alive(before, "an import")


if __name__ == "__main__":
    main(test_one_input)
