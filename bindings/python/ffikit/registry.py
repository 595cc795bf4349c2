"""The global Function registry: names every language can look up."""
from __future__ import annotations

from typing import Any, Callable, overload

from . import _core
from ._core import Function, list_global_func_names, remove_global_func


@overload
def register_global_func(name: str, f: None = None, override: bool = False) -> Callable[[Callable[..., Any]], Function]: ...
@overload
def register_global_func(name: str, f: Callable[..., Any], override: bool = False) -> Function: ...


def register_global_func(name: str, f: Callable[..., Any] | None = None, override: bool = False) -> Any:
    """Registers ``f`` (a callable or a Function) under ``name``; returns the Function.

    Without ``f`` it is a decorator. An existing name raises RuntimeError unless
    ``override`` is true.
    """
    if not isinstance(name, str):
        raise TypeError(f"register_global_func: name must be a str, got {type(name).__name__}")
    if f is None:
        def register(func: Callable[..., Any]) -> Function:
            return _core._register_global_func(name, func, override)

        return register
    return _core._register_global_func(name, f, override)


def get_global_func(name: str, allow_missing: bool = False) -> Function | None:
    """The Function registered as ``name``; ValueError "Cannot find global function <name>",
    or None when ``allow_missing``."""
    return _core._get_global_func(name, allow_missing)


__all__ = ["register_global_func", "get_global_func", "remove_global_func", "list_global_func_names"]
