"""Errors that cross languages: the kind table and the traceback bridge.

An ffikit Error has a kind, a message and a backtrace (innermost frame first). Raised
in C and caught in Python, it becomes the exception class its kind maps to (one table,
extended by :func:`register_error`; unknown kinds become ``RuntimeError``), with the C
frames appended to the traceback and the Error attached as ``__ffikit_error__`` (and
``__tvm_ffi_error__``). A Python exception raised inside a callback becomes an Error in
C and comes back as the very same exception object; each hop adds its frames.
"""
from __future__ import annotations

import re
import sys
import types
from typing import Any, TypeVar, cast

from ._core import Error

ERROR_NAME_TO_TYPE: dict[str, type] = {}
ERROR_TYPE_TO_NAME: dict[type, str] = {}

_T = TypeVar("_T", bound=type)


def register_error(name_or_cls: str | type | None = None, cls: type | None = None) -> Any:
    """Maps an error kind to a Python exception class (both ways); usable as a decorator.

    ``register_error(MyError)``, ``@register_error`` or ``@register_error("mylib.Kind")``.
    """
    if isinstance(name_or_cls, type):
        cls, name_or_cls = name_or_cls, name_or_cls.__name__

    def register(mycls: _T) -> _T:
        name = name_or_cls if isinstance(name_or_cls, str) else mycls.__name__
        ERROR_NAME_TO_TYPE[name] = mycls
        ERROR_TYPE_TO_NAME[mycls] = name
        return mycls

    return register if cls is None else register(cls)


for _cls in (RuntimeError, ValueError, TypeError, AttributeError, KeyError, IndexError, AssertionError,
             MemoryError, NotImplementedError, OverflowError, FileNotFoundError):
    register_error(_cls)


def _kind_of(exc_type: type) -> str:
    for klass in exc_type.__mro__:
        name = ERROR_TYPE_TO_NAME.get(klass)
        if name is not None:
            return name if klass is exc_type else exc_type.__name__
    return exc_type.__name__


def _exception_class(kind: str) -> type:
    return ERROR_NAME_TO_TYPE.get(kind, RuntimeError)


# ---- Backtrace lines <-> traceback entries -------------------------------------------

_PY_FRAME = re.compile(r'\s*File "(.+?)", line (\d+), in (.+)$')
_C_LOCATION = re.compile(r"\s*at (\S+) \((.+):(\d+)\)$")
_C_CALL = re.compile(r"\s*in call to (?:Function )?`(.+)`$")


# The largest line number a code object and a traceback hold (a C int).
_MAX_LINE = 2**31 - 1


def _line_number(digits: str) -> int:
    """A line number read from backtrace text, which is data (pickles and other languages
    write it): clamped to what a traceback holds, and never parsed past ten digits (Python
    refuses ints of more than 4300 digits)."""
    return _MAX_LINE if len(digits) > 10 else min(int(digits), _MAX_LINE)


def _parse_frame(line: str) -> tuple[str, int, str] | None:
    """(file, line, function) of a backtrace line that names a place; None for raw addresses."""
    m = _PY_FRAME.match(line)
    if m:
        return m.group(1), _line_number(m.group(2)), m.group(3)
    m = _C_LOCATION.match(line)
    if m:
        return m.group(2), _line_number(m.group(3)), m.group(1)
    m = _C_CALL.match(line)
    if m:
        return "<ffikit>", 1, m.group(1)
    return None


_CODE_CACHE: dict[tuple[str, int, str], types.CodeType] = {}


def _frame_for(filename: str, lineno: int, func: str) -> types.FrameType:
    """A frame whose code names (filename, lineno, func): how C frames join a traceback.

    The frame's f_back chain keeps this function's frame, _prepend's and _from_c's alive
    as long as the traceback lives: none of them may hold the new frame or traceback in a
    local when it returns, or frame -> f_back -> local -> frame is a reference cycle that
    keeps the caller's frame (and every local of it) alive until the cyclic collector runs.
    """
    key = (filename, lineno, func)
    code = _CODE_CACHE.get(key)
    if code is None:
        # The line is the code object's first line, not reached through lineno - 1 newlines:
        # those would make a line number the size of the text compiled (2 GiB for 2**31).
        code = compile("_getframe()", filename, "eval")
        code = code.replace(co_name=func, co_firstlineno=max(lineno, 1))
        if len(_CODE_CACHE) < 4096:
            _CODE_CACHE[key] = code
    return cast(types.FrameType, eval(code, {"_getframe": sys._getframe}))  # noqa: S307 - our own constant code


def _prepend(tb: types.TracebackType | None, filename: str, lineno: int, func: str) -> types.TracebackType:
    frame = _frame_for(filename, lineno, func)
    try:
        return types.TracebackType(tb, frame, frame.f_lasti, lineno)
    finally:
        del frame, tb  # see _frame_for


def _from_c(error: Error, exc: BaseException | None) -> BaseException:
    """The exception to raise for ``error``: ``exc`` itself when a callback raised it."""
    lines = error._frames.splitlines()  # native frames would only be skipped: not symbolised
    if exc is None:
        cls = _exception_class(error.kind)
        exc = cls(error.message)
        _attach(exc, error)
        start = 0
    else:
        start = getattr(exc, "__ffikit_bt_lines__", 0)
    tb = exc.__traceback__
    try:
        # Lines are innermost first; each is an outer frame of the previous one.
        for line in lines[start:]:
            where = _parse_frame(line)
            if where is not None:
                tb = _prepend(tb, *where)
        exc = exc.with_traceback(tb)
        setattr(exc, "__ffikit_bt_lines__", len(lines))
        setattr(exc, "__ffikit_tb_mark__", _tb_mark(tb))
        return exc
    finally:
        del exc, tb  # no frame of ours keeps the exception alive


def _tb_mark(tb: types.TracebackType | None) -> tuple[int, int]:
    """What a traceback was when its exception last crossed: (entries, id of the innermost).

    Python adds the frames an exception unwinds through at the head of its traceback and
    keeps the innermost entry (where it was raised) for as long as the exception carries
    that traceback, so the same innermost entry and at least as many entries mean the
    same raise, still travelling; anything else is a new raise (``raise
    exc.with_traceback(None)``), whose backtrace starts afresh. Ids, not the entries
    themselves: holding them would keep their frames (and locals) alive.
    """
    n = 0
    inner = None
    while tb is not None:
        n += 1
        inner = tb
        tb = tb.tb_next
    return n, id(inner)


def _to_c(exc: BaseException) -> Error:
    """The Error that carries ``exc`` into C, with the Python frames it gained appended.

    The Error an exception already carries (from C, or from an earlier crossing) goes on
    as long as the exception is on the same raise: its backtrace grows by the Python frames
    passed since. A new raise of the same exception object gets a new Error whose backtrace
    is that raise's only, as Python's own traceback restarts: a sentinel raised again and
    again does not grow without bound.
    """
    error = getattr(exc, "__ffikit_error__", None)
    mark = getattr(exc, "__ffikit_tb_mark__", None)
    entries, inner = _tb_mark(exc.__traceback__)
    if isinstance(error, Error) and not isinstance(mark, tuple):
        new = entries  # an Error attached by hand: everything is news to it
    elif isinstance(error, Error) and isinstance(mark, tuple) and (
            mark[0] == 0 or (mark[1] == inner and entries >= mark[0])):
        new = entries - mark[0]  # the same raise, travelling on
    else:  # never crossed, or a new raise: a new Error
        error = Error(_kind_of(type(exc)), _message(exc))
        _attach(exc, error)
        new = entries
    frames: list[str] = []
    tb = exc.__traceback__
    while tb is not None and len(frames) < new:
        code = tb.tb_frame.f_code
        frames.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        tb = tb.tb_next
    del tb
    error._append_frames("".join(reversed(frames)))  # innermost first
    setattr(exc, "__ffikit_bt_lines__", len(error._frames.splitlines()))
    setattr(exc, "__ffikit_tb_mark__", (entries, inner))
    return error


def _attach(exc: BaseException, error: Error) -> None:
    """The Error rides on the exception under ffikit's and tvm_ffi's names."""
    setattr(exc, "__ffikit_error__", error)
    setattr(exc, "__tvm_ffi_error__", error)


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])
    return str(exc)


__all__ = ["Error", "register_error", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME"]
