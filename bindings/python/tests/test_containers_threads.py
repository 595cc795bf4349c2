"""Many Python threads on one List and one Dict: every operation atomic, exact final contents,
and readers iterating while writers mutate see RuntimeError at worst, never wrong values."""
from __future__ import annotations

import os
import threading

from ffikit import Dict, List

THREADS = 8
# 100,000 operations per thread; fewer under the sanitizers, which are 10-50x slower.
OPS = 10_000 if os.environ.get("FFIKIT_SANITIZED") else 100_000


def run_threads(target, n=THREADS):
    barrier = threading.Barrier(n)
    errors = []

    def wrapped(t):
        try:
            barrier.wait()
            target(t)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_list_appends_from_8_threads_exact():
    lst = List()

    def work(t):
        append = lst.append
        for i in range(OPS):
            append(t * OPS + i)

    run_threads(work)
    assert len(lst) == THREADS * OPS
    assert sorted(lst) == list(range(THREADS * OPS))
    lst.clear()


def test_list_mixed_ops_from_8_threads_exact():
    lst = List()
    rounds = OPS // 4  # four operations a round

    def work(t):
        for i in range(rounds):
            lst.append(t)
            lst.insert(0, -t)
            if i % 100:
                lst.pop()
                lst.pop(0)

    run_threads(work)
    kept = 2 * len(range(0, rounds, 100))  # each thread's rounds without pops left two elements
    assert len(lst) == THREADS * kept
    assert sum(1 for x in lst if x > 0) + sum(1 for x in lst if x < 0) + lst.count(0) == THREADS * kept
    lst.clear()


def test_dict_from_8_threads_exact():
    d = Dict()

    def work(t):
        for i in range(OPS):
            k = f"{t}:{i % 1000}"
            if i < 1000:
                d[k] = 0
            else:
                d[k] = d[k] + 1 if i % 3 else d.setdefault(k, 0)
            if i % 7 == 0:
                d.pop(f"gone{t}", None)
                d[f"gone{t}"] = i
                del d[f"gone{t}"]

    run_threads(work)
    assert len(d) == THREADS * 1000  # every thread owns its keys; the shared table held
    assert all(k.count(":") == 1 for k in d.keys())
    d.clear()


def test_readers_iterate_while_writers_mutate():
    lst = List(range(100))
    d = Dict({i: i for i in range(100)})
    stop = threading.Event()
    seen_errors = []

    def writer(t):
        for i in range(OPS // 20):
            lst.append(i)
            lst.pop(0)
            d[1000 + i] = i
            del d[1000 + i]
        stop.set()

    def reader(t):
        while not stop.is_set():
            for src in (lst, d):
                try:
                    for x in src:
                        assert isinstance(x, int)
                except RuntimeError as e:
                    assert "changed during iteration" in str(e)
                    seen_errors.append(1)
            try:
                for k, v in d.items():
                    assert k == v or k >= 1000
            except RuntimeError:
                pass

    threads = [threading.Thread(target=writer, args=(0,))] + [threading.Thread(target=reader, args=(t,)) for t in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(lst) == 100 and len(d) == 100
    lst.clear()
    d.clear()


def test_extend_from_large_list_releases_gil_and_stays_consistent():
    src = List(range(100_000))
    dst = List()

    def work(t):
        for _ in range(3):
            dst.extend(src)

    run_threads(work, 4)
    assert len(dst) == 12 * 100_000
    assert hash(src) == hash(List(range(100_000)))
    src.clear()
    dst.clear()


def test_slice_operations_are_atomic_for_readers_outside_the_gil():
    """One thread cycles a List through five states, one slice operation each (del of an
    extended slice, extend, an extended assignment, a reversing self-assignment, a whole
    replacement); readers copy it inside C with the GIL released (List.extend from a List).
    Every copy is one of the states: no reader sees part of an operation."""
    n = 100
    s0 = [1, 2] * n
    s1 = [2] * n
    s2 = s1 + [3] * n
    s3 = list(s2)
    s3[1::2] = [4] * n
    s4 = s3[::-1]
    states = {tuple(s) for s in (s0, s1, s2, s3, s4)}
    lst = List(s0)
    cycles = 100 if os.environ.get("FFIKIT_SANITIZED") else 600
    done = threading.Event()
    bad = []

    def writer():
        try:
            for _ in range(cycles):
                del lst[::2]
                lst.extend([3] * n)
                lst[1::2] = [4] * n
                lst[::-1] = lst
                lst[:] = s0
        finally:
            done.set()

    def reader(t):
        while not done.is_set() and len(bad) < 3:
            copy = List()
            copy.extend(lst)  # the GIL is released while C copies
            got = tuple(copy)
            if got not in states:
                bad.append(got)

    readers = [threading.Thread(target=reader, args=(t,)) for t in range(2)]
    for th in readers:
        th.start()
    writer()
    for th in readers:
        th.join()
    assert not bad, f"a reader saw {len(bad)} intermediate states, e.g. of length {len(bad[0])}"
    assert list(lst) == s0
