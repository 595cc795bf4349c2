"""ffikit: pass values between C, Python and Rust at near-zero cost.

A tvm_ffi-style API over the ffikit C library: code written for ``tvm_ffi`` functions,
errors, devices, dtypes, strings, shapes and the registry runs with
``import ffikit as tvm_ffi``.
"""
from __future__ import annotations

# _core links to the C runtime, ffikit/lib/libffikit.so (rpath $ORIGIN/lib), which the loader
# maps once for the whole process: modules linked against any libffikit.so bind to it by
# soname, and ffk_module_load makes it global for modules that only leave ffk_* undefined.
from . import _core
from ._core import Object, Function, Error, Device, DataType, convert, convert_func
from ._core import __version__
from ._dtype import dtype, DataTypeCode
from ._device import DLDeviceType, device
from ._object import String, Bytes, Shape, Module, TypeInfo, WeakRef, load_module, system_lib, _make_class
from ._object import ObjectConvertible
from .container import Array, List, Map, Dict
from ._core import Tensor, from_dlpack, empty, zeros, empty_shared
from ._tensor import sweep_shared
from .error import register_error
from .registry import register_global_func, get_global_func, remove_global_func, list_global_func_names
from .registry import get_global_func_metadata, init_ffi_api, register_object, get_registered_type_keys
from . import error as _error

Tuple = Array  # tvm_ffi backs tuples by Array

_core._set_hooks(dtype=dtype, string=String, bytes=Bytes, shape=Shape, error_to_c=_error._to_c,
                 error_from_c=_error._from_c, make_class=_make_class, object_convertible=ObjectConvertible)
_core._register_class(73, Module)  # FFK_TYPE_MODULE
_core._register_class(71, Array)
_core._register_class(78, Array)  # Tuple objects read as Arrays
_core._register_class(72, Map)
_core._register_class(75, List)
_core._register_class(76, Dict)
_core._register_class(79, WeakRef)  # FFK_TYPE_WEAK_REF

# Module-level dtype constants (tvm_ffi's list).
bool = dtype("bool")  # noqa: A001
int8, int16, int32, int64 = dtype("int8"), dtype("int16"), dtype("int32"), dtype("int64")
uint8, uint16, uint32, uint64 = dtype("uint8"), dtype("uint16"), dtype("uint32"), dtype("uint64")
float16, float32, float64, bfloat16 = dtype("float16"), dtype("float32"), dtype("float64"), dtype("bfloat16")
float8_e3m4, float8_e4m3, float8_e4m3b11fnuz = dtype("float8_e3m4"), dtype("float8_e4m3"), dtype("float8_e4m3b11fnuz")
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2 = dtype("float8_e4m3fn"), dtype("float8_e4m3fnuz"), dtype("float8_e5m2")
float8_e5m2fnuz, float8_e8m0fnu = dtype("float8_e5m2fnuz"), dtype("float8_e8m0fnu")
float6_e2m3fn, float6_e3m2fn = dtype("float6_e2m3fn"), dtype("float6_e3m2fn")
float4_e2m1fn, float4_e2m1fnx2 = dtype("float4_e2m1fn"), dtype("float4_e2m1fnx2")


# ffikit.dataclasses: py_class / c_class; `ffikit.method` marks py_class methods, as tvm_ffi's.
from . import dataclasses  # noqa: E402
from .dataclasses import method  # noqa: E402

# The testing.* globals exist right after `import ffikit`, as they do after `import tvm_ffi`:
# tvm_ffi code and examples call get_global_func("testing.echo") without importing testing.
from . import testing  # noqa: E402 - registers the testing.* globals

__all__ = [
    "Object", "Function", "Error", "Device", "DataType", "DLDeviceType", "device", "dtype", "DataTypeCode",
    "String", "Bytes", "Shape", "Module", "Array", "List", "Map", "Dict", "Tuple", "convert",
    "register_error", "register_global_func", "get_global_func", "remove_global_func",
    "list_global_func_names", "load_module", "testing", "__version__",
    "system_lib", "get_global_func_metadata", "init_ffi_api", "register_object", "get_registered_type_keys",
    "TypeInfo", "WeakRef", "ObjectConvertible", "convert_func",
    "Tensor", "from_dlpack", "empty", "zeros", "empty_shared", "sweep_shared",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn", "float4_e2m1fnx2",
]

__all__ += ["dataclasses", "method"]  # ffikit.dataclasses

for _cls in (String, Bytes, Shape, Module, TypeInfo, WeakRef, ObjectConvertible, Array, List, Map, Dict, dtype, DLDeviceType, DataTypeCode):
    _cls.__module__ = "ffikit"
del _cls

# Structural tools, access paths and the JSON graph format (as tvm_ffi exports them).
from . import access_path, debug, serialization, structural  # noqa: E402
from .structural import structural_equal, structural_hash, get_first_structural_mismatch  # noqa: E402
from .structural import (DefRegionKind, InplaceMode, StructuralKey, StructuralMutator,  # noqa: E402
                         StructuralVisitor, VisitInterrupt, WalkOrder, WalkResult, structural_map,
                         structural_mutate, structural_visit, structural_walk)
__all__ += ["access_path", "debug", "serialization", "structural", "structural_equal", "structural_hash",
            "get_first_structural_mismatch", "DefRegionKind", "InplaceMode", "StructuralKey", "StructuralMutator",
            "StructuralVisitor", "VisitInterrupt", "WalkOrder", "WalkResult", "structural_map", "structural_mutate",
            "structural_visit", "structural_walk"]

# The current stream per (thread, device), with tvm_ffi's names (ffikit.stream).
from . import stream  # noqa: E402
from .stream import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream  # noqa: E402
__all__ += ["stream", "StreamContext", "get_raw_stream", "use_raw_stream", "use_torch_stream"]

# Dask's scheduler pickles at protocol 4; ffikit values get a serializer of Dask's own family
# (their protocol-5 pickle, buffers as frames), registered once distributed is imported.
from . import _dask  # noqa: E402
_dask._install()

# Submodules loaded on first use, so `import ffikit` stays cheap and `ffikit.cpp.load_inline`
# works without importing ffikit.cpp first, as `tvm_ffi.cpp` does.
_LAZY_SUBMODULES = ("cpp", "libinfo", "stubgen")


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ffikit' has no attribute '{name}'")
