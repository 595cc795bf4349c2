#!/usr/bin/env python3
"""ffikit's CUDA copy and fill kernels beside torch: the table of issue 25.

Run on a machine with a GPU, torch built with CUDA, and ffikit built with CUDA:

    python3 bench/gpu/kernels.py            # the issue's rows at 1 GiB
    python3 bench/gpu/kernels.py --gib 0.25 --only transposed

Every row times torch's operation and ffikit's equivalent (an ffikit view of the same
torch memory, through ffikit.from_dlpack, then Tensor.copy_ / Tensor.fill_) in the same
process, with CUDA events on torch's current stream, which is the stream ffikit's work
goes to (the legacy default stream unless a stream is set; inside
ffikit.stream.use_torch_stream() when ffikit has it). Each side is warmed up, then timed
--reps times (mean, and the spread min-max over the reps); --runs repeats the whole
measurement, alternating the two sides, and reports the median of the runs' means.
GB/s = (bytes of the elements read + bytes written) / time, 1 GB = 1e9 bytes, as the
issue counts them: a copy of N bytes moves 2N, a fill of N bytes moves N.

Before timing, each row checks once that ffikit's result equals torch's bit for bit; a
mismatch is printed and makes the exit status 1. Timings never decide the exit status.
Without torch, without a CUDA device, or with an ffikit built without CUDA, it prints why
and exits 0 (nothing to measure here); when ffikit cannot be imported at all, it exits 2. `--device cpu` runs the same rows on the CPU at a
small --gib with wall-clock timing: a smoke test of this script (shapes, views, checks)
on a machine without a GPU; its numbers mean nothing for the issue.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

TARGET = 0.9  # issue 25: ffikit >= 0.9x torch on every row
DEVICE = "cuda"  # --device


@dataclass
class Row:
    group: str  # the row it belongs to
    name: str
    bytes_moved: int
    torch_fn: Callable[[], Any]
    ffikit_fn: Callable[[], Any]
    check: Callable[[], str | None]  # None when ffikit's result equals torch's


def _int_view(t: Any) -> Any:
    """t reinterpreted as integers of the same size (bitwise comparison, NaN-safe)."""
    import torch

    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _same(a: Any, b: Any) -> str | None:
    import torch

    if torch.equal(_int_view(a), _int_view(b)):
        return None
    bad = int((_int_view(a) != _int_view(b)).sum())
    return f"{bad} of {a.numel()} elements differ"


def _source(shape: tuple[int, ...], dtype: Any) -> Any:
    """A tensor whose elements mostly differ from their neighbours (no NaNs)."""
    import torch

    n = 1
    for s in shape:
        n *= s
    mod = {torch.uint8: 251, torch.int16: 32749}.get(dtype, 65521)
    return (torch.arange(n, device=DEVICE, dtype=torch.int64) % mod).to(dtype).reshape(shape)


def build_rows(gib: float) -> list[Callable[[], list[Row]]]:
    """Row builders (each allocates its tensors when called, so only one row's live at a time)."""
    import torch

    import ffikit

    nbytes = int(gib * (1 << 30))

    def square(elsize: int) -> tuple[int, int]:
        # A (rows, cols) shape of about nbytes: a power-of-two square, or 1:2 when the
        # element count is not a square (f64 and i16 at 1 GiB).
        n = nbytes // elsize
        side = 1
        while (side * 2) * (side * 2) <= n:
            side *= 2
        return (side, side) if side * side * 2 > n else (side, side * 2)

    def copy_rows() -> list[Row]:
        src = _source((nbytes // 4,), torch.float32)
        dst_t, dst_f = torch.empty_like(src), torch.empty_like(src)
        fs, fd = ffikit.from_dlpack(src), ffikit.from_dlpack(dst_f)
        return [Row("contiguous copy", "contiguous copy", 2 * src.nbytes, lambda: dst_t.copy_(src),
                    lambda: fd.copy_(fs), lambda: _same(dst_t, dst_f))]

    def fill_rows() -> list[Row]:
        a, b = torch.empty(nbytes // 4, device=DEVICE), torch.empty(nbytes // 4, device=DEVICE)
        fb = ffikit.from_dlpack(b)
        return [
            Row("fill 0 (memset) / fill 1.5 (kernel)", "fill 0 (memset)", a.nbytes, lambda: a.zero_(),
                lambda: fb.fill_(0), lambda: _same(a, b)),
            Row("fill 0 (memset) / fill 1.5 (kernel)", "fill 1.5 (kernel)", a.nbytes, lambda: a.fill_(1.5),
                lambda: fb.fill_(1.5), lambda: _same(a, b)),
        ]

    def fill_t_rows() -> list[Row]:
        shape = square(4)
        a, b = torch.empty(shape, device=DEVICE), torch.empty(shape, device=DEVICE)
        fbt = ffikit.from_dlpack(b).transpose(0, 1)
        return [Row("fill of a transposed view", "fill of a transposed view", a.nbytes,
                    lambda: a.t().fill_(1.5), lambda: fbt.fill_(1.5), lambda: _same(a, b))]

    def slice_rows() -> list[Row]:
        rows, cols = square(4)
        x = _source((rows, cols), torch.float32)
        dst_t = torch.empty((rows, cols // 2), device=DEVICE)
        dst_f = torch.empty_like(dst_t)
        fx, fd = ffikit.from_dlpack(x).slice(1, 0, None, 2), ffikit.from_dlpack(dst_f)
        return [Row("f32 `[:, ::2]` -> contiguous", "f32 [:, ::2] -> contiguous", 2 * dst_t.nbytes,
                    lambda: dst_t.copy_(x[:, ::2]), lambda: fd.copy_(fx), lambda: _same(dst_t, dst_f))]

    def permute_rows() -> list[Row]:
        n = nbytes // 4
        c = 1 << max(0, (n.bit_length() - 1) // 3)  # about the cube root, a power of two
        a = n // c // c
        x = _source((a, c, c), torch.float32)
        xp = x.permute(2, 0, 1)
        dst_t = torch.empty(xp.shape, device=DEVICE)
        dst_f = torch.empty_like(dst_t)
        fx, fd = ffikit.from_dlpack(x).permute(2, 0, 1), ffikit.from_dlpack(dst_f)
        return [Row("f32 permute(2,0,1) -> contiguous", f"f32 permute(2,0,1) of {tuple(x.shape)} -> contiguous",
                    2 * dst_t.nbytes, lambda: dst_t.copy_(xp), lambda: fd.copy_(fx), lambda: _same(dst_t, dst_f))]

    def transpose_rows(dtype: Any, label: str) -> Callable[[], list[Row]]:
        def build() -> list[Row]:
            elsize = torch.empty(0, dtype=dtype).element_size()
            rows, cols = square(elsize)
            x = _source((rows, cols), dtype)  # contiguous; x.t() is the transposed view
            fx = ffikit.from_dlpack(x)
            out_t = torch.empty((cols, rows), device=DEVICE, dtype=dtype)  # dst of "transposed source"
            out_f = torch.empty_like(out_t)
            fo = ffikit.from_dlpack(out_f)
            y_t = torch.empty((cols, rows), device=DEVICE, dtype=dtype)  # y.t() is the transposed dst
            y_f = torch.empty_like(y_t)
            fyt = ffikit.from_dlpack(y_f).transpose(0, 1)
            fxt = fx.transpose(0, 1)
            group = f"{label} transposed source / destination"
            return [
                Row(group, f"{label} transposed source {tuple(x.t().shape)}", 2 * x.nbytes,
                    lambda: out_t.copy_(x.t()), lambda: fo.copy_(fxt), lambda: _same(out_t, out_f)),
                Row(group, f"{label} transposed destination {tuple(y_t.t().shape)}", 2 * x.nbytes,
                    lambda: y_t.t().copy_(x), lambda: fyt.copy_(fx), lambda: _same(y_t, y_f)),
            ]
        return build

    return [copy_rows, fill_rows, fill_t_rows, slice_rows, permute_rows,
            transpose_rows(torch.float32, "f32"), transpose_rows(torch.float64, "f64"),
            transpose_rows(torch.int16, "i16"), transpose_rows(torch.uint8, "u8")]


def time_fn(fn: Callable[[], Any], reps: int, warmup: int) -> list[float]:
    """Seconds per call, one CUDA-event pair per call on torch's current stream."""
    import torch

    for _ in range(warmup):
        fn()
    if DEVICE == "cpu":
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / 1e3)
    return out


def fmt(gbs: float) -> str:
    return f"{gbs:.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=1.0, help="size of each row's tensors in GiB (the issue: 1)")
    ap.add_argument("--reps", type=int, default=10, help="timed calls per side per run (mean; spread min-max)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per side first")
    ap.add_argument("--runs", type=int, default=1, help="repeat the measurement; report the median of the runs")
    ap.add_argument("--only", default="", help="run the rows whose name contains this")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke test of the script without a GPU (use a small --gib)")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = args.device

    try:
        import torch
    except ImportError:
        print("bench/gpu/kernels.py: torch is not installed; nothing to measure (needs a GPU, torch with CUDA "
              "and ffikit with CUDA)")
        return 0
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print(f"bench/gpu/kernels.py: no CUDA device (torch {torch.__version__}, "
              f"torch.cuda.is_available() is False); nothing to measure")
        return 0
    try:
        import ffikit
    except ImportError as e:
        print(f"bench/gpu/kernels.py: cannot import ffikit ({e}); install it or set PYTHONPATH "
              f"(see bench/gpu/README.md)")
        return 2
    try:
        ffikit.from_dlpack(torch.zeros(4, device=DEVICE)).fill_(1.0)
        if DEVICE == "cuda":
            torch.cuda.synchronize()
    except Exception as e:  # an ffikit built without CUDA
        print(f"bench/gpu/kernels.py: ffikit cannot run on the GPU ({type(e).__name__}: {e}); build it with CUDA "
              f"(see bench/gpu/README.md)")
        return 0
    stream_ctx: Callable[[], Any] = contextlib.nullcontext
    stream_mod = getattr(ffikit, "stream", None)
    if stream_mod is not None and hasattr(stream_mod, "use_torch_stream"):
        stream_ctx = stream_mod.use_torch_stream

    if DEVICE == "cuda":
        props = torch.cuda.get_device_properties(0)
        where = f"{props.name}, {props.multi_processor_count} SMs"
    else:
        where = "cpu (smoke test: these numbers say nothing about the kernels)"
    print(f"device: {where}; torch {torch.__version__}; "
          f"ffikit {getattr(ffikit, '__version__', '?')} from {ffikit.__file__}")
    print(f"size {args.gib:g} GiB per row, warm-up {args.warmup}, mean of {args.reps}, runs {args.runs}; "
          f"GB/s = (bytes read + bytes written) / time")

    failures = 0
    # (group, name, bytes moved, torch run means, ffikit run means, torch calls, ffikit calls);
    # no Row is kept, so each row's tensors are freed before the next row allocates.
    results: list[tuple[str, str, int, list[float], list[float], list[float], list[float]]] = []
    with stream_ctx():
        for build in build_rows(args.gib):
            rows = build()
            for row in rows:
                if args.only and args.only not in row.name:
                    continue
                row.torch_fn()
                row.ffikit_fn()
                if DEVICE == "cuda":
                    torch.cuda.synchronize()
                bad = row.check()
                if bad is not None:
                    failures += 1
                    print(f"MISMATCH in {row.name}: {bad}")
                t_means, f_means, t_all, f_all = [], [], [], []
                for _ in range(args.runs):
                    tt = time_fn(row.torch_fn, args.reps, args.warmup)
                    ff = time_fn(row.ffikit_fn, args.reps, args.warmup)
                    t_means.append(statistics.fmean(tt))
                    f_means.append(statistics.fmean(ff))
                    t_all += tt
                    f_all += ff
                results.append((row.group, row.name, row.bytes_moved, t_means, f_means, t_all, f_all))
            del rows, row
            if DEVICE == "cuda":
                torch.cuda.empty_cache()

    print()
    print("| case | torch GB/s [spread] | ffikit GB/s [spread] | ffikit / torch | >= 0.9 |")
    print("|---|---:|---:|---:|---|")
    by_group: dict[str, list[tuple[float, float]]] = {}
    for group, name, moved, t_means, f_means, t_all, f_all in results:
        t = moved / statistics.median(t_means) / 1e9
        f = moved / statistics.median(f_means) / 1e9
        spread = lambda xs: f"[{fmt(moved / max(xs) / 1e9)}-{fmt(moved / min(xs) / 1e9)}]"
        ratio = f / t
        print(f"| {name} | {fmt(t)} {spread(t_all)} | {fmt(f)} {spread(f_all)} | {ratio:.2f} | "
              f"{'met' if ratio >= TARGET else '**missed**'} |")
        by_group.setdefault(group, []).append((t, f))

    print()
    print("The issue's table:")
    print("| case | torch | ffikit | ratio |")
    print("|---|---:|---:|---:|")
    for group, pairs in by_group.items():
        join = lambda xs: " / ".join(xs)
        print(f"| {group} | {join(fmt(t) for t, _ in pairs)} | {join(fmt(f) for _, f in pairs)} | "
              f"{join(f'{f / t:.2f}' for t, f in pairs)} |")
    if failures:
        print(f"\n{failures} row(s) gave results different from torch's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
