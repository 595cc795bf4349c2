"""atheris harness: programs of container operations from Python, run on ffikit's List,
Dict, Array and Map and on a model built from Python's list and dict.

The input decodes into a sequence of operations on a small pool of Lists and Dicts
(which may hold each other and themselves: cycles), with copy-on-write Arrays and Maps
derived from them. Every operation runs on the container and on its model; both must
give the same result or raise the same exception type, and the container must hold
what the model holds afterwards. The model wraps values so that they compare by type
and value the way ffikit does (``1``, ``True`` and ``1.0`` are three different values;
containers as elements are found by identity). Along the way: pickle, copy,
deepcopy, repr, hash and structural equality of whatever was built, cycles included.
At the end the cycles are broken and no C object may stay alive.
"""
from __future__ import annotations

import copy
import pickle

from _fuzz import Reader, check_nothing_alive, instrumented, live_objects, main

with instrumented():
    import ffikit

MAX_LEN = 24
SCALARS = [None, True, False, 0, 1, -1, 7, 2**40, 1.0, 0.5, -2.5, "", "a", "b", "a string longer than seven bytes",
           b"", b"x", b"bytes longer than seven", (1, "a"), ()]


class T:
    """A model value: equal to another when ffikit's element equality says so (type and
    value for scalars, identity for containers of the pool)."""

    __slots__ = ("v", "k")

    def __init__(self, v):
        self.v = v
        self.k = "obj" if isinstance(v, ffikit.Object) else type(v).__name__

    def __eq__(self, other):
        if not isinstance(other, T) or self.k != other.k:
            return False
        return self.v.same_as(other.v) if self.k == "obj" else self.v == other.v

    def __hash__(self):
        return hash((self.k, self.v.__chandle__() if self.k == "obj" else self.v))

    def __repr__(self):
        return f"T({self.v!r:.40})"


def same(model: T, out) -> bool:
    """`out` (read from a container) is the model value."""
    v = model.v
    if model.k == "obj":
        return isinstance(out, ffikit.Object) and out.same_as(v)
    if model.k == "tuple":
        return type(out) is ffikit.Array and out == v
    if model.k == "bool":
        return out is v
    if model.k in ("str", "bytes"):
        return isinstance(out, type(v)) and out == v
    return type(out) is type(v) and out == v


class Program:
    def __init__(self, r: Reader):
        self.r = r
        self.lists = [ffikit.List() for _ in range(2)]
        self.dicts = [ffikit.Dict() for _ in range(2)]
        self.lmodels: list[list[T]] = [[] for _ in self.lists]
        self.dmodels: list[dict[T, T]] = [{} for _ in self.dicts]

    # ---- values ------------------------------------------------------------------------
    def value(self):
        k = self.r.pick(8)
        if k == 6:
            return self.lists[self.r.pick(len(self.lists))]
        if k == 7:
            return self.dicts[self.r.pick(len(self.dicts))]
        return SCALARS[self.r.pick(len(SCALARS))]

    def key(self):
        # Scalars only: a tuple would become a new Array key each time (keys compare by
        # identity), and a container key would make pickled copies unequal for the same reason.
        return SCALARS[self.r.pick(len(SCALARS) - 2)]

    def index(self, n: int) -> int:
        return self.r.small(0, n + 4) - 2 - (n if self.r.u8() & 1 else 0)

    def slice(self, n: int) -> slice:
        def end():
            b = self.r.u8()
            return None if b < 40 else b % (n + 5) - (n + 5) // 2
        step = [None, 1, 2, -1, -2, 3, 0][self.r.pick(7)]
        return slice(end(), end(), step)

    # ---- running both sides ------------------------------------------------------------
    @staticmethod
    def both(real, model):
        """(result, exception type) of each side; they must agree on the exception type."""
        try:
            got = (real(), None)
        except (IndexError, KeyError, ValueError, TypeError, RuntimeError) as e:
            got = (None, type(e))
        try:
            want = (model(), None)
        except (IndexError, KeyError, ValueError, TypeError) as e:
            want = (None, type(e))
        assert got[1] is want[1], f"ffikit raised {got[1]}, the model {want[1]}"
        return got[0], want[0]

    def list_op(self):
        i = self.r.pick(len(self.lists))
        L, m = self.lists[i], self.lmodels[i]
        op = self.r.pick(16)
        n = len(m)
        if op in (0, 1, 8) and n >= MAX_LEN:
            op = 2
        if op == 0:
            v = self.value()
            self.both(lambda: L.append(v), lambda: m.append(T(v)))
        elif op == 1:
            j, v = self.index(n), self.value()
            self.both(lambda: L.insert(j, v), lambda: m.insert(j, T(v)))
        elif op == 2:
            j = self.index(n) if self.r.u8() & 1 else None
            got, want = self.both(lambda: L.pop() if j is None else L.pop(j), lambda: m.pop() if j is None else m.pop(j))
            assert want is None or same(want, got), f"pop gave {got!r:.80}, expected {want}"
        elif op == 3:
            j, v = self.index(n), self.value()

            def real():
                L[j] = v

            def model():
                m[j] = T(v)
            self.both(real, model)
        elif op == 4:
            j = self.index(n)

            def real():
                del L[j]

            def model():
                del m[j]
            self.both(real, model)
        elif op == 5:
            s = self.slice(n)
            got, want = self.both(lambda: L[s], lambda: m[s])
            assert want is None or (type(got) is list and len(got) == len(want)
                                    and all(same(w, g) for w, g in zip(want, got))), f"L[{s}] differs"
        elif op == 6:
            s = self.slice(n)
            vals = [self.value() for _ in range(self.r.small(0, 3))]
            if n + len(vals) > MAX_LEN:
                return

            def real():
                L[s] = vals

            def model():
                m[s] = [T(v) for v in vals]
            self.both(real, model)
        elif op == 7:
            s = self.slice(n)

            def real():
                del L[s]

            def model():
                del m[s]
            self.both(real, model)
        elif op == 8:
            vals = [self.value() for _ in range(self.r.small(0, 3))]
            self.both(lambda: L.extend(vals), lambda: m.extend(T(v) for v in vals))
        elif op == 9:
            v = SCALARS[self.r.pick(len(SCALARS) - 2)]
            self.both(lambda: L.remove(v), lambda: m.remove(T(v)))
        elif op == 10:
            v = SCALARS[self.r.pick(len(SCALARS) - 2)]
            got, want = self.both(lambda: (L.index(v), L.count(v), v in L), lambda: (m.index(T(v)), m.count(T(v)), T(v) in m))
            assert got == want, f"index/count/in of {v!r} gave {got}, the model {want}"
            got, want = self.both(lambda: (L.count(v), v in L), lambda: (m.count(T(v)), T(v) in m))
            assert got == want, f"count/in of {v!r} gave {got}, the model {want}"
        elif op == 11:
            self.both(L.reverse, m.reverse)
        elif op == 12 and self.r.u8() < 64:
            self.both(L.clear, m.clear)
        elif op == 13:
            vals = [SCALARS[self.r.pick(len(SCALARS))] for _ in range(self.r.small(0, 3))]
            out = L + vals
            assert type(out) is ffikit.List and not out.same_as(L)
            self.check_list(out, m + [T(v) for v in vals], "L + vals")
        elif op == 14:
            # Arrays and Maps derived from the List never change with it.
            a = ffikit.Array(L)
            snapshot = list(m)
            L.append(0)
            m.append(T(0))
            self.check_list(a, snapshot, "an Array made before an append")
            b = a + [1]
            self.check_list(a, snapshot, "an Array after a + [1]")
            self.check_list(b, snapshot + [T(1)], "a + [1]")
        else:
            j = self.index(n)
            got, want = self.both(lambda: L[j], lambda: m[j])
            assert want is None or same(want, got), f"L[{j}] gave {got!r:.80}, expected {want}"
        self.check_list(L, m, f"List {i}")

    def dict_op(self):
        i = self.r.pick(len(self.dicts))
        D, m = self.dicts[i], self.dmodels[i]
        op = self.r.pick(12)
        k = self.key()
        if op in (0, 5, 6) and len(m) >= MAX_LEN:
            op = 1
        if op == 0:
            v = self.value()

            def real():
                D[k] = v

            def model():
                m[T(k)] = T(v)
            self.both(real, model)
        elif op == 1:
            def real():
                del D[k]

            def model():
                del m[T(k)]
            self.both(real, model)
        elif op == 2:
            dflt = self.r.u8() & 1
            got, want = self.both(lambda: D.pop(k, "gone") if dflt else D.pop(k),
                                  lambda: m.pop(T(k), T("gone")) if dflt else m.pop(T(k)))
            assert want is None or same(want, got), f"pop({k!r:.40}) gave {got!r:.80}, expected {want}"
        elif op == 3:
            got, want = self.both(lambda: (D.get(k, "none"), k in D), lambda: (m.get(T(k), T("none")), T(k) in m))
            assert same(want[0], got[0]) and got[1] == want[1], f"get/in {k!r:.40} gave {got!r:.80}"
        elif op == 4:
            got, want = self.both(lambda: D[k], lambda: m[T(k)])
            assert want is None or same(want, got), f"D[{k!r:.40}] gave {got!r:.80}, expected {want}"
        elif op == 5:
            v = self.value()
            got, want = self.both(lambda: D.setdefault(k, v), lambda: m.setdefault(T(k), T(v)))
            assert same(want, got), f"setdefault gave {got!r:.80}, expected {want}"
        elif op == 6:
            pairs = [(self.key(), self.value()) for _ in range(self.r.small(0, 3))]
            self.both(lambda: D.update(pairs), lambda: m.update((T(a), T(b)) for a, b in pairs))
        elif op == 7:
            got, want = self.both(D.popitem, lambda: m.popitem())
            assert want is None or (same(want[0], got[0]) and same(want[1], got[1])), f"popitem gave {got!r:.80}"
        elif op == 8 and self.r.u8() < 64:
            self.both(D.clear, m.clear)
        elif op == 9:
            j = self.r.pick(len(self.dicts))
            other, om = self.dicts[j], self.dmodels[j]
            if len(m) + len(om) <= MAX_LEN:
                merged = D | other
                self.check_dict(merged, {**m, **om}, "D | other")
                if self.r.u8() & 1:
                    D |= other
                    m.update(dict(om))
        elif op == 10:
            # A Map made from the Dict never changes with it.
            mp = ffikit.Map(D)
            snapshot = dict(m)
            D["__fresh__"] = 1
            m[T("__fresh__")] = T(1)
            self.check_dict(mp, snapshot, "a Map made before a set")
        else:
            got = (list(D.keys()), list(D.values()), list(D.items()))
            assert len(got[0]) == len(m) and all(same(a, b) for a, b in zip(m, got[0])), "keys() differ"
            assert all(same(a, b) for a, b in zip(m.values(), got[1])), "values() differ"
            assert all(same(a, b[0]) and same(w, b[1]) for (a, w), b in zip(m.items(), got[2])), "items() differ"
        self.check_dict(D, m, f"Dict {i}")

    def whole_op(self):
        """pickle, copies, repr, hash and equality of one container of the pool."""
        pool = self.lists + self.dicts
        c = pool[self.r.pick(len(pool))]
        op = self.r.pick(5)
        if op == 0:
            again = pickle.loads(pickle.dumps(c, protocol=self.r.small(0, pickle.HIGHEST_PROTOCOL)))
            assert type(again) is type(c) and again == c and not again.same_as(c), "pickle round trip differs"
            break_cycles(again)
        elif op == 1:
            shallow = copy.copy(c)
            assert shallow == c and not shallow.same_as(c), "copy differs"
            shallow.clear()
        elif op == 2:
            deep = copy.deepcopy(c)
            assert deep == c and not deep.same_as(c), "deepcopy differs"
            break_cycles(deep)
        elif op == 3:
            assert isinstance(repr(c), str) and isinstance(str(c), str)
        else:
            try:
                h = hash(c)
            except TypeError:
                return  # holds something unhashable
            assert h == hash(c), "hash changed without a change"

    # ---- checks ------------------------------------------------------------------------
    def check_list(self, L, m: list, what: str) -> None:
        assert len(L) == len(m), f"{what}: length {len(L)}, the model {len(m)}"
        for j, (w, g) in enumerate(zip(m, L)):
            assert same(w, g), f"{what}[{j}] is {g!r:.80}, the model {w}"

    def check_dict(self, D, m: dict, what: str) -> None:
        assert len(D) == len(m), f"{what}: length {len(D)}, the model {len(m)}"
        for (wk, wv), (gk, gv) in zip(m.items(), D.items()):  # insertion order is kept
            assert same(wk, gk) and same(wv, gv), f"{what}: entry {gk!r:.40}: {gv!r:.40}, the model {wk}: {wv}"

    def run(self) -> None:
        while self.r.left() > 0:
            which = self.r.pick(10)
            if which < 5:
                self.list_op()
            elif which < 9:
                self.dict_op()
            else:
                self.whole_op()
        for c in self.lists + self.dicts:
            break_cycles(c)


def break_cycles(c) -> None:
    """Empties a List or Dict and every List or Dict it reaches: reference counting cannot
    free a cycle, its owner must break it (docs/design.md)."""
    todo, seen = [c], set()
    while todo:
        x = todo.pop()
        h = x.__chandle__()
        if h in seen:
            continue
        seen.add(h)
        items = list(x.items()) if isinstance(x, ffikit.Dict) else [(None, v) for v in x]
        for k, v in items:
            for y in (k, v):
                if isinstance(y, (ffikit.List, ffikit.Dict)):
                    todo.append(y)
        x.clear()


def test_one_input(data: bytes) -> None:
    before = live_objects()
    p = Program(Reader(data))
    p.run()
    del p
    check_nothing_alive(before, "a container program")


if __name__ == "__main__":
    main(test_one_input)
