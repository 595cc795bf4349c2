"""ffikit.dtype: a data type that is also a ``str`` (tvm_ffi's design).

The text keeps the user's spelling (``dtype("f32") == "f32"``); the parsed value lives in
``_ffikit_dtype`` (a ``_core.DataType``), which is what crosses into C. Parsing and
printing are the C library's (``ffk_dtype_parse``/``ffk_dtype_format``).
"""
from __future__ import annotations

import builtins
import sys
from enum import IntEnum
from typing import Any

from . import _core


class DataTypeCode(IntEnum):
    """DLPack's DLDataTypeCode values (DLPack 1.1)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17


_FLOAT_CODES = frozenset({2, 4} | set(range(7, 18)))

# numpy / torch dtype names that differ from ours.
_FOREIGN_ALIASES = {"bool_": "bool", "float": "float64", "double": "float64", "half": "float16",
                    "int": "int32", "long": "int64", "short": "int16", "cfloat": "complex64",
                    "cdouble": "complex128"}


class dtype(str):  # noqa: N801 - tvm_ffi's spelling
    """A data type: ``dtype("float32")``, ``dtype("i8")``, ``dtype(np.float32)``.

    A ``str`` subclass keeping the text it was given; ``type_code``, ``bits``, ``lanes``
    and ``itemsize`` describe it. Invalid text raises ``ValueError``. numpy, ml_dtypes
    and torch dtypes (and objects with ``__dlpack_data_type__``) convert to it, also when
    passed to a Function; a numpy dtype in a byte order other than the machine's raises
    ``ValueError`` (data is never reinterpreted). ``to_numpy()``/``to_torch()`` go back.
    """

    __slots__ = ("_ffikit_dtype",)
    _ffikit_dtype: _core.DataType

    def __new__(cls, content: Any) -> dtype:
        if isinstance(content, dtype):
            return content
        if isinstance(content, str):
            val = str.__new__(cls, content)
            val._ffikit_dtype = _core.DataType(content)
            return val
        return dtype._from_datatype(_foreign_datatype(content))

    @classmethod
    def _from_datatype(cls, cdtype: _core.DataType) -> dtype:
        val = str.__new__(cls, str(cdtype))
        val._ffikit_dtype = cdtype
        return val

    @staticmethod
    def from_dlpack_data_type(dl: tuple[int, int, int]) -> dtype:
        """The dtype of a DLPack ``(type_code, bits, lanes)`` triple."""
        return dtype._from_datatype(_core._datatype_from_tuple(dl[0], dl[1], dl[2]))

    def __repr__(self) -> str:
        return f"dtype('{self}')"

    def __reduce__(self) -> Any:
        return (dtype, (str(self),))

    def with_lanes(self, lanes: int) -> dtype:
        """The same scalar type with ``lanes`` lanes, with canonical text (``boolx4``)."""
        d = self._ffikit_dtype
        return dtype._from_datatype(_core._datatype_from_tuple(d.type_code, d.bits, lanes))

    @property
    def itemsize(self) -> int:
        """Bytes of one element, all lanes together."""
        return self._ffikit_dtype.itemsize

    @property
    def type_code(self) -> int:
        """The DLPack type code."""
        return self._ffikit_dtype.type_code

    @property
    def bits(self) -> int:
        """Bits of one lane."""
        return self._ffikit_dtype.bits

    @property
    def lanes(self) -> int:
        """Number of lanes (1 for scalars)."""
        return self._ffikit_dtype.lanes

    @property
    def is_bool(self) -> builtins.bool:
        return self.type_code == DataTypeCode.BOOL

    @property
    def is_integer(self) -> builtins.bool:
        return self.type_code in (DataTypeCode.INT, DataTypeCode.UINT)

    @property
    def is_float(self) -> builtins.bool:
        return self.type_code in _FLOAT_CODES

    @property
    def is_handle(self) -> builtins.bool:
        return self.type_code == DataTypeCode.HANDLE

    @staticmethod
    def is_dtype(arg: Any) -> builtins.bool:
        """Whether ``arg`` names a dtype."""
        if isinstance(arg, dtype):
            return True
        try:
            dtype(arg)
            return True
        except (ValueError, TypeError):
            return False

    def to_numpy(self) -> Any:
        """The numpy dtype (TypeError when numpy has none for it)."""
        import numpy as np

        try:
            return np.dtype(str(dtype._from_datatype(self._ffikit_dtype)))
        except TypeError:
            raise TypeError(f"numpy has no dtype for {self}") from None

    def to_torch(self) -> Any:
        """The torch dtype (TypeError when torch has none for it)."""
        import importlib

        torch = importlib.import_module("torch")
        name = str(dtype._from_datatype(self._ffikit_dtype))
        name = {"bool": "bool", "float8_e4m3fn": "float8_e4m3fn"}.get(name, name)
        t = getattr(torch, name, None)
        if not isinstance(t, torch.dtype):
            raise TypeError(f"torch has no dtype for {self}")
        return t


def _foreign_datatype(content: Any) -> _core.DataType:
    """The DataType of a numpy or ml_dtypes dtype (or scalar type), a torch dtype, or an
    object with ``__dlpack_data_type__``. The C library decides what numpy's type strings
    mean (a non-native byte order is a ValueError, never a reinterpretation)."""
    tp = type(content)
    if hasattr(tp, "__dlpack_data_type__"):
        code, bits, lanes = content.__dlpack_data_type__()
        return _core._datatype_from_tuple(code, bits, lanes)
    if tp.__module__ == "torch" and tp.__name__ == "dtype":
        name = str(content).split(".", 1)[-1]
        return _core.DataType(_FOREIGN_ALIASES.get(name, name))
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(content, np.dtype) or _is_numpy_scalar_type(np, content)):
        npd = np.dtype(content)
        return _core._datatype_from_numpy(npd.str, npd.name)
    return _core.DataType(str(content))


def _is_numpy_scalar_type(np: Any, content: Any) -> builtins.bool:
    """np.float32, ml_dtypes.bfloat16 and the like: classes numpy makes dtypes of."""
    if not isinstance(content, type):
        return False
    return issubclass(content, np.generic) or (content.__module__ or "").startswith("ml_dtypes")


