"""What the atheris harnesses share: a reader that turns the fuzzer's bytes into choices,
the live-object check, and the entry point that fuzzes with atheris or replays files.

Each harness (fuzz_*.py beside this file) defines ``test_one_input(data: bytes)`` which
raises AssertionError on a wrong result and lets any unexpected exception escape (atheris
reports both as a crash and writes the input). The same function runs the checked-in
corpus (corpus/<name>/) in the pytest suite (tests/test_fuzz_replay.py), so the harnesses
need nothing from atheris but its driver; tests/fuzz/run_atheris.sh at the top of the
repository builds the extension with coverage and ASan+UBSan and fuzzes them.
"""
from __future__ import annotations

import contextlib
import gc
import os
import struct
import sys

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


class Reader:
    """Consumes the input from the front; past its end every read gives zeros, so any
    input decodes to some program (short inputs to short ones)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int) -> bytes:
        chunk = self.data[self.pos:self.pos + n]
        self.pos += len(chunk)
        return chunk + bytes(n - len(chunk))

    def u8(self) -> int:
        if self.pos < len(self.data):
            self.pos += 1
            return self.data[self.pos - 1]
        return 0

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "little")

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "little")

    def i64(self) -> int:
        return int.from_bytes(self.take(8), "little", signed=True)

    def f64(self) -> float:
        return struct.unpack("<d", self.take(8))[0]

    def pick(self, n: int) -> int:
        """A choice in range(n)."""
        return self.u8() % n

    def small(self, lo: int, hi: int) -> int:
        """An int in [lo, hi], mostly near lo (one byte)."""
        return lo + self.u8() % (hi - lo + 1)

    def chance(self, percent: int) -> bool:
        return self.u8() % 100 < percent


def instrumented():
    """A context for the harness's `import ffikit`: atheris instruments the package's
    Python modules for coverage when it is installed (it is not needed to replay)."""
    if "ffikit" in sys.modules:  # replayed by the test suite, which imported it already
        return contextlib.nullcontext()
    try:
        import atheris
    except ImportError:
        return contextlib.nullcontext()
    # ffikit._enum and ffikit.testing stay uninstrumented: instrumented, the enum class bodies
    # of ffikit.testing come out without their members and methods (found by the JSON graph
    # harness; the plain import is right, and enable_loader_override=False does not help).
    return atheris.instrument_imports(include=["ffikit"], exclude=["ffikit._enum", "ffikit.testing"])


def live_objects() -> int:
    """ffikit C objects alive now (the testing build counts them; -1 otherwise)."""
    from ffikit import _core

    n = _core._live_objects() if _core.HOOKS_AVAILABLE else None
    return -1 if n is None else n


def check_nothing_alive(before: int, what: str) -> None:
    """Fails when more C objects are alive than `before`, after a collection (the collection
    runs only when the quick count differs: it is slow next to one fuzz input)."""
    if before < 0 or live_objects() <= before:
        return
    gc.collect()
    after = live_objects()
    assert after <= before, f"{what} left {after - before} ffikit object(s) alive"


def corpus_files(name: str) -> list[str]:
    d = os.path.join(CORPUS, name)
    return sorted(os.path.join(d, f) for f in os.listdir(d)) if os.path.isdir(d) else []


def main(test_one_input) -> None:
    """`python fuzz_X.py [libFuzzer flags] [corpus dirs or files]`: fuzz with atheris
    (instrumenting ffikit's Python modules; the C extension carries its own coverage when
    run_atheris.sh built it). Without atheris, replays the files and directories given."""
    try:
        import atheris
    except ImportError:
        paths = [a for a in sys.argv[1:] if not a.startswith("-")]
        files = []
        for p in paths:
            files += [os.path.join(p, f) for f in sorted(os.listdir(p))] if os.path.isdir(p) else [p]
        for f in files:
            with open(f, "rb") as fh:
                test_one_input(fh.read())
        print(f"replayed {len(files)} input(s) without atheris")
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
