"""Values to and from JSON text that survives a process and a language: TVM-FFI's JSON
graph format (``ffikit/serialization.h``), so a document ffikit writes reads in tvm_ffi
and the reverse, for the types both have.

A document is one JSON object ``{"root_index": i, "nodes": [...], "metadata": {...}}``:
each distinct value is one node written once and referred to by index, so sharing
survives a round trip (two fields holding one Array read back holding one Array).
Objects of reflected types (C-defined and ``py_class``) are written field by field and
rebuilt without calling their constructor, as pickle does. Tensors, Functions, opaque
objects and cycles cannot be written (TypeError / ValueError). Reading treats the text as
untrusted: a malformed document is a ValueError naming the problem.
"""
from __future__ import annotations

from typing import Any

from . import _core

__all__ = ["from_json_graph_str", "to_json_graph_str"]


def to_json_graph_str(obj: Any, metadata: dict[str, Any] | None = None) -> str:
    """The JSON graph document of ``obj`` (a str).

    ``obj`` converts as a function argument does (a list becomes an Array, a dict a Map).
    ``metadata``, a dict (or Map) with str keys of JSON-able values, is written under
    ``"metadata"``. Raises TypeError for a value the format cannot hold (``cannot serialize
    `ffikit.Tensor```) or bad metadata, ValueError for a cycle, RuntimeError for nesting
    deeper than 1000 levels::

        s = to_json_graph_str([1, 2, 3])
        assert list(from_json_graph_str(s)) == [1, 2, 3]
    """
    text: str = _core._to_json_graph_str(obj, metadata)
    return text


def from_json_graph_str(json_str: str | bytes) -> Any:
    """The value the JSON graph document ``json_str`` holds (str, or UTF-8 bytes).

    Raises ValueError ``Invalid JSON Object Graph: ...`` for a document that is not valid
    JSON of the format (unknown type keys and fields included), TypeError for an object
    type that cannot be rebuilt, RuntimeError for nesting deeper than 1000 levels.
    """
    return _core._from_json_graph_str(json_str)


def from_json_graph_str_with_metadata(json_str: str | bytes) -> tuple[Any, Any]:
    """``(value, metadata)`` of a document: the metadata as a Map (JSON objects become Maps
    with str keys, arrays Arrays), or None when the document has none. Errors as
    :func:`from_json_graph_str`. (ffikit's own addition: tvm_ffi reads no metadata back.)
    """
    result: tuple[Any, Any] = _core._from_json_graph_str_with_metadata(json_str)
    return result
