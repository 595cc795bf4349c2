"""A DLPack producer written with ctypes, so tests control every field and count deleter calls.

A producer may claim any device (``device=(2, 0)``: CUDA) over host memory: ffikit imports
such a tensor without touching the device, so tests of what a device tensor does without
a GPU (refusing numpy, the DLPack stream protocol) need no GPU. Its memory must never be
read or written through ffikit then."""
from __future__ import annotations

import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Producer:
    """Makes versioned capsules over a numpy array; counts how often the deleter ran."""

    def __init__(self, array: np.ndarray, **overrides):
        self.array = array
        self.deleted = 0
        self.streams = []  # the `stream` each __dlpack__ call was given
        self.overrides = overrides
        self._keep = []  # structs and shape arrays live as long as the producer
        self._deleter = DELETER(self._on_delete)

    def _on_delete(self, _ptr):
        self.deleted += 1

    def managed(self) -> DLManagedTensorVersioned:
        a = self.array
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        strides = (ctypes.c_int64 * max(a.ndim, 1))(*[s // a.itemsize for s in a.strides])
        kind = {"i": 0, "u": 1, "f": 2, "b": 6, "c": 5}[a.dtype.kind]
        m = DLManagedTensorVersioned()
        m.major, m.minor = self.overrides.get("version", (1, 1))
        m.deleter = self._deleter
        m.flags = self.overrides.get("flags", 0)
        t = m.dl_tensor
        t.data = self.overrides.get("data", a.ctypes.data)
        t.device = DLDevice(*self.overrides.get("device", (1, 0)))
        t.ndim = self.overrides.get("ndim", a.ndim)
        t.dtype = DLDataType(*self.overrides.get("dtype", (kind, a.itemsize * 8, 1)))
        t.shape = self.overrides.get("shape", shape)
        t.strides = self.overrides.get("strides", strides)
        t.byte_offset = self.overrides.get("byte_offset", 0)
        self._keep += [m, shape, strides]
        return m

    def capsule(self, name: bytes = b"dltensor_versioned"):
        """A capsule without a destructor: an unconsumed one is simply dropped (the test checks counts)."""
        return _new_capsule(ctypes.addressof(self.managed()), name, None)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.capsule()

    def __dlpack_device__(self):
        return tuple(self.overrides.get("device", (1, 0)))
