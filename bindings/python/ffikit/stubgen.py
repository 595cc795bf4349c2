"""Type stubs for the global Functions under a registry prefix.

``python -m ffikit.stubgen PREFIX [-o FILE] [--dlls LIBS] [--imports MODULES]`` writes a
``.pyi`` declaring each global Function ``<PREFIX><name>`` (``name`` without further
dots, the names :func:`ffikit.init_ffi_api` installs) as a module-level function:

* a typed Function gets its parameters and return type from its metadata (the type
  schema the C library writes, see :func:`ffikit.get_global_func_metadata`): named
  parameters keep their names, unnamed ones become positional-only ``_0``, ``_1`` ...;
  its doc becomes the docstring;
* an untyped Function becomes ``def name(*args: Any) -> Any``.

Types map as tvm_ffi's stub generator maps them: ``int``/``float``/``bool``/``str``/
``bytes``, ``ffikit.Device``, ``ffikit.dtype``, ``ffikit.Tensor``, ``Optional<T>`` as
``T | None``, ``Array<T>`` as ``Sequence[T]``, ``List<T>`` as ``MutableSequence[T]``
(``Sequence[T]`` for a parameter), ``Map``/``Dict`` as ``Mapping``/``MutableMapping``,
Functions as ``ffikit.Function`` (any callable for a parameter).

Reflected object types (issue 23) have no stubs yet: a registered type key is annotated
through :data:`TYPE_KEY_ANNOTATIONS`, the extension point their stubs will fill, and
falls back to ``ffikit.Object``.

Typical use, beside a ``_ffi_api.py`` that calls ``ffikit.init_ffi_api("mypkg", __name__)``::

    python -m ffikit.stubgen mypkg. --dlls build/libmypkg.so -o mypkg/_ffi_api.pyi
"""
from __future__ import annotations

import argparse
import importlib
import json
import keyword
import sys
from typing import Any

from . import _object
from .registry import get_global_func_metadata, list_global_func_names

#: Annotations of registered (reflected) object types by type key, e.g.
#: ``{"mylib.Point": "mylib.Point"}``. The extension point for reflected types (issue
#: 23): until they exist nothing fills it and such types are annotated ``ffikit.Object``.
TYPE_KEY_ANNOTATIONS: dict[str, str] = {}

# Schema types (tvm_ffi's spelling, see ffk_function_metadata) with one annotation.
_SIMPLE = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "None": "None",
    "Any": "Any",
    "ffi.String": "str",
    "ffi.Bytes": "bytes",
    "ffi.Object": "ffikit.Object",
    "ffi.Tensor": "ffikit.Tensor",
    "ffi.Module": "ffikit.Module",
    "ffi.Error": "ffikit.Error",
}

# (annotation for a result, annotation for a parameter), for the types whose parameters
# accept more than what results are: a str for a Device or dtype, any callable for a
# Function, any sequence of ints for a Shape.
_RESULT_PARAM = {
    "Device": ("ffikit.Device", "ffikit.Device | str"),
    "DataType": ("ffikit.dtype", "ffikit.dtype | str"),
    "void*": ("int | None", "Any"),
    "ffi.Function": ("ffikit.Function", "Callable[..., Any]"),
    "ffi.Shape": ("ffikit.Shape", "Sequence[int]"),
    "Tuple": ("Sequence[Any]", "Sequence[Any]"),
}

# Containers: (result generic, parameter generic, number of type arguments).
_CONTAINERS = {
    "ffi.Array": ("Sequence", "Sequence", 1),
    "ffi.List": ("MutableSequence", "Sequence", 1),
    "ffi.Map": ("Mapping", "Mapping", 2),
    "ffi.Dict": ("MutableMapping", "Mapping", 2),
}


def annotation(schema: dict[str, Any], param: bool = False) -> str:
    """The Python annotation of one type schema node (a parsed ``{"type": ...}`` dict), as
    a result or, with ``param``, as a parameter."""
    kind = schema["type"]
    args = schema.get("args", [])
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in _RESULT_PARAM:
        return _RESULT_PARAM[kind][1 if param else 0]
    if kind == "Optional":
        inner = annotation(args[0], param)
        return inner if inner in ("Any", "None") or inner.endswith("| None") else f"{inner} | None"
    if kind in _CONTAINERS:
        result, parameter, arity = _CONTAINERS[kind]
        elements = [annotation(a, param) for a in args] if args else ["Any"] * arity
        return f"{parameter if param else result}[{', '.join(elements)}]"
    if kind.startswith("ffi."):
        return "Any"  # a static type without a Python class of its own (Opaque, Storage)
    return TYPE_KEY_ANNOTATIONS.get(kind, "ffikit.Object")


def _docstring(doc: str, indent: str) -> str:
    text = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    lines = text.splitlines() or [""]
    body = lines[0] + "".join("\n" + (indent + line if line else "") for line in lines[1:])
    if len(lines) > 1:
        body += "\n" + indent
    return f'{indent}"""{body}"""'


def function_stub(name: str, metadata: dict[str, Any]) -> str:
    """The ``def`` of one Function called ``name`` in the stub, from its metadata."""
    doc = metadata.get("doc")
    schema = json.loads(metadata["type_schema"])
    named = schema.get("named_args")
    if named is None:
        head = f"def {name}(*args: Any) -> Any:"
    else:
        arg_names = metadata.get("arg_names") or [None] * len(named.get("params", []))
        params = []
        seen: set[str] = set()
        positional_only = 0  # the parameters up to the last unnamed one cannot be keywords
        for i, (p, pname) in enumerate(zip(named.get("params", []), arg_names)):
            usable = isinstance(pname, str) and pname.isidentifier() and not keyword.iskeyword(pname) \
                and pname not in seen
            if not usable:
                pname = f"_{i}"
                while pname in seen:
                    pname = "_" + pname
                positional_only = i + 1
            seen.add(pname)
            params.append(f"{pname}: {annotation(p, param=True)}")
        if positional_only:
            params.insert(positional_only, "/")
        ret = annotation(named["return"][0])
        head = f"def {name}({', '.join(params)}) -> {ret}:"
    if doc:
        return f"{head}\n{_docstring(doc, '    ')}\n    ...\n"
    return f"{head} ...\n"


def generate(prefix: str) -> str:
    """The text of a ``.pyi`` for the global Functions under ``prefix`` ("testing." or
    "testing": the Functions ``testing.<name>``)."""
    namespace = prefix[:-1] if prefix.endswith(".") else prefix
    if not namespace:
        raise ValueError("stubgen: the prefix is empty; give a registry namespace such as `mypkg.`")
    head = namespace + "."
    defs: list[str] = []
    skipped: list[str] = []
    for full in sorted(list_global_func_names()):
        if not full.startswith(head):
            continue
        name = full[len(head):]
        if not name or "." in name:
            continue
        if not name.isidentifier() or keyword.iskeyword(name):
            skipped.append(full)
            continue
        try:
            metadata = get_global_func_metadata(full)
        except RuntimeError:  # removed since the names were listed
            continue
        defs.append(function_stub(name, metadata))
    body = "\n".join(defs)
    imports = ["from typing import Any"]
    abc = [n for n in ("Callable", "Mapping", "MutableMapping", "MutableSequence", "Sequence")
           if f"{n}[" in body]
    if abc:
        imports.insert(0, f"from collections.abc import {', '.join(abc)}")
    if "ffikit." in body:
        imports.append("import ffikit")
    lines = [
        f"# Type stubs for the ffikit global Functions under `{head}`.",
        f"# Generated by `python -m ffikit.stubgen {head}`; regenerate rather than edit.",
    ]
    lines += [f"# Skipped `{s}`: its name is not a Python identifier." for s in skipped]
    return "\n".join(lines + imports) + "\n\n\n" + "\n\n".join(defs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ffikit.stubgen",
        description="Write a .pyi for the typed global Functions under a registry prefix.")
    parser.add_argument("prefix", help="the registry namespace, e.g. `mypkg.` (Functions `mypkg.<name>`)")
    parser.add_argument("-o", "--output", help="the .pyi to write (default: standard output)")
    parser.add_argument("--dlls", default="", metavar="LIBS",
                        help="ffikit modules to load first (their init registers the globals), separated by ';'")
    parser.add_argument("--imports", default="", metavar="MODULES",
                        help="Python modules to import first (they may register globals), separated by ';'")
    opts = parser.parse_args(argv)
    for lib in filter(None, (s.strip() for s in opts.dlls.split(";"))):
        _object.load_module(lib)
    for mod in filter(None, (s.strip() for s in opts.imports.split(";"))):
        importlib.import_module(mod)
    try:
        text = generate(opts.prefix)
    except ValueError as e:
        parser.error(str(e))
    if opts.output:
        with open(opts.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
