"""Sending a 64 MiB tensor to another process: ffikit's shared-memory tensor (pickled as a
name) beside multiprocessing.shared_memory by hand and beside pickling the bytes.

Each case starts one worker process (fork) once, then times round trips of "send the
tensor, the child writes one element and sums one row, the parent reads the write back",
reporting the median time and the bytes that crossed the pipe. Run with the project's venv:
    .venv/bin/python bench/python/bench_shm.py [--repeat N]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import pickle
import statistics
import time
from multiprocessing import resource_tracker, shared_memory

import numpy as np

import ffikit

SHAPE = (4096, 4096)  # float32: 64 MiB


def child(conn):
    while True:
        msg = conn.recv_bytes()
        if not msg:
            return
        kind, payload = pickle.loads(msg)
        if kind == "ffikit":
            a = np.asarray(payload)
        elif kind == "shm":
            name, shape = payload
            seg = shared_memory.SharedMemory(name=name)
            # Before 3.13 an attaching process registers the segment with its own resource
            # tracker, which would unlink it at exit (a known CPython quirk): undo that.
            resource_tracker.unregister(seg._name, "shared_memory")  # noqa: SLF001
            a = np.ndarray(shape, dtype=np.float32, buffer=seg.buf)
        else:
            a = payload
        a[1, 2] = 42.0
        s = float(a[0].sum())
        if kind == "shm":
            del a
            seg.close()
        conn.send_bytes(pickle.dumps(s))


def run(kind, make, repeat):
    parent, kid = mp.Pipe()
    p = mp.get_context("fork").Process(target=child, args=(kid,))
    p.start()
    times, sent = [], 0
    obj, view, cleanup = make()
    for _ in range(repeat):
        view[1, 2] = 0.0
        t0 = time.perf_counter()
        blob = pickle.dumps((kind, obj), protocol=pickle.HIGHEST_PROTOCOL)
        parent.send_bytes(blob)
        pickle.loads(parent.recv_bytes())
        times.append(time.perf_counter() - t0)
        sent = len(blob)
        assert kind == "bytes" or view[1, 2] == 42.0
    parent.send_bytes(b"")
    p.join()
    cleanup()
    return statistics.median(times), sent


def make_ffikit():
    t = ffikit.empty_shared(SHAPE, "float32")
    return t, np.asarray(t), lambda: None


def make_shm():
    nbytes = SHAPE[0] * SHAPE[1] * 4
    seg = shared_memory.SharedMemory(create=True, size=nbytes)
    view = np.ndarray(SHAPE, dtype=np.float32, buffer=seg.buf)

    def cleanup():
        seg.close()
        seg.unlink()

    return (seg.name, SHAPE), view, cleanup


def make_bytes():
    a = np.zeros(SHAPE, dtype=np.float32)
    return a, a, lambda: None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    print("| way | median time per send | bytes through the pipe |")
    print("|---|---:|---:|")
    for label, kind, make in [("ffikit.empty_shared, pickled (a name)", "ffikit", make_ffikit),
                              ("multiprocessing.shared_memory by hand", "shm", make_shm),
                              ("numpy array pickled by value", "bytes", make_bytes)]:
        t, n = run(kind, make, args.repeat if kind != "bytes" else max(3, args.repeat // 4))
        print(f"| {label} | {t * 1e6:,.0f} us | {n:,} |")


if __name__ == "__main__":
    main()
