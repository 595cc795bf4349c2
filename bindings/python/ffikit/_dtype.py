"""ffikit.dtype: a data type that is also a ``str`` (tvm_ffi's design).

The text keeps the user's spelling (``dtype("f32") == "f32"``); the parsed value lives in
``_ffikit_dtype`` (a ``_core.DataType``), which is what crosses into C. Parsing and
printing are the C library's (``ffk_dtype_parse``/``ffk_dtype_format``).
"""
from __future__ import annotations

import builtins
from enum import IntEnum
from typing import Any, ClassVar

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
    and ``itemsize`` describe it. Invalid text raises ``ValueError``. numpy and torch
    dtypes convert to it; ``to_numpy()``/``to_torch()`` go back.
    """

    __slots__ = ("_ffikit_dtype",)
    _ffikit_dtype: _core.DataType

    _NUMPY_DTYPE_TO_STR: ClassVar[dict[Any, str]] = {}

    def __new__(cls, content: Any) -> dtype:
        if isinstance(content, dtype):
            return content
        text = _foreign_name(content) if not isinstance(content, str) else content
        val = str.__new__(cls, text)
        val._ffikit_dtype = _core.DataType(text)
        return val

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


def _foreign_name(content: Any) -> str:
    """The dtype text of a numpy dtype, numpy scalar type or torch dtype."""
    mod = type(content).__module__ or ""
    if mod.startswith("torch"):
        name = str(content).split(".", 1)[-1]
        return _FOREIGN_ALIASES.get(name, name)
    if mod.startswith("numpy") or (isinstance(content, type) and (content.__module__ or "").startswith("numpy")):
        import numpy as np

        npd = np.dtype(content)
        known = dtype._NUMPY_DTYPE_TO_STR.get(npd)
        if known is not None:
            return known
        np_name: str = npd.name
        return _FOREIGN_ALIASES.get(np_name, np_name)
    return str(content)


try:  # numpy is optional
    import numpy as _np

    for _name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float16", "float32", "float64", "complex64", "complex128"]:
        dtype._NUMPY_DTYPE_TO_STR[_np.dtype(_name)] = _name
except ImportError:  # pragma: no cover
    pass
