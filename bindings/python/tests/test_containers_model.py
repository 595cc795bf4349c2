"""Model-based tests: List against list, Dict against an insertion-ordered model with
ffikit's key semantics, and Array/Map derivations against tuple/dict (originals unchanged)."""
from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ffikit import Array, Dict, List, Map

SETTINGS = settings(max_examples=60, stateful_step_count=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# Scalars whose Python == agrees with ffikit's key equality once keyed by (type, value).
values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([0.0, 1.0, 2.5]),
                   st.text(max_size=3), st.binary(max_size=2))
indices = st.integers(-12, 12)
slices = st.builds(slice, st.none() | indices, st.none() | indices, st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))


def both(exc, on_model, on_ffikit):
    """Runs the operation on the model, then on ffikit: both raise `exc` (returns None, None)
    or neither does (returns both results)."""
    try:
        want = on_model()
    except exc:
        try:
            on_ffikit()
        except exc:
            return None, None
        raise AssertionError(f"ffikit did not raise {exc.__name__}") from None
    return want, on_ffikit()


def key_of(k):
    """ffikit's key identity: 1, True and 1.0 differ (a String is a str, a Bytes a bytes)."""
    t = str if isinstance(k, str) else bytes if isinstance(k, bytes) else type(k)
    return (t, k)


class ListMachine(RuleBasedStateMachine):
    @initialize(init=st.lists(values, max_size=6))
    def start(self, init):
        self.model = list(init)
        self.lst = List(init)

    @rule(v=values)
    def append(self, v):
        self.model.append(v)
        self.lst.append(v)

    @rule(i=indices, v=values)
    def insert(self, i, v):
        self.model.insert(i, v)
        self.lst.insert(i, v)

    @rule(i=indices)
    def pop(self, i):
        want, got = both(IndexError, lambda: self.model.pop(i), lambda: self.lst.pop(i))
        assert key_of(got) == key_of(want)

    @rule(i=indices, v=values)
    def setitem(self, i, v):
        both(IndexError, lambda: self.model.__setitem__(i, v), lambda: self.lst.__setitem__(i, v))

    @rule(s=slices, vs=st.lists(values, max_size=4))
    def set_slice(self, s, vs):
        both(ValueError, lambda: self.model.__setitem__(s, vs), lambda: self.lst.__setitem__(s, vs))

    @rule(s=slices)
    def set_slice_self(self, s):
        if s.step not in (None, 1):
            return
        self.model[s] = self.model
        self.lst[s] = self.lst

    @rule(s=slices)
    def del_slice(self, s):
        del self.model[s]
        del self.lst[s]

    @rule(s=slices)
    def get_slice(self, s):
        assert self.lst[s] == self.model[s]

    @rule(vs=st.lists(values, max_size=4))
    def extend(self, vs):
        self.model.extend(vs)
        self.lst.extend(vs)

    @rule()
    def reverse(self):
        self.model.reverse()
        self.lst.reverse()

    @precondition(lambda self: len(self.model) > 0)
    @rule(data=st.data())
    def remove(self, data):
        v = data.draw(st.sampled_from(self.model))
        i = [key_of(x) for x in self.model].index(key_of(v))
        del self.model[i]
        self.lst.remove(v)

    @rule()
    def clear_sometimes(self):
        if len(self.model) > 20:
            self.model.clear()
            self.lst.clear()

    @invariant()
    def same(self):
        got = list(self.lst)
        assert [key_of(x) for x in got] == [key_of(x) for x in self.model]
        assert len(self.lst) == len(self.model)

    def teardown(self):
        self.lst.clear()


class DictMachine(RuleBasedStateMachine):
    """The model: a Python dict keyed by (type, value), which keeps insertion order."""

    @initialize()
    def start(self):
        self.model: dict = {}
        self.d = Dict()

    @rule(k=values, v=values)
    def set(self, k, v):
        self.model[key_of(k)] = (k, v)
        self.d[k] = v

    @rule(k=values)
    def delete(self, k):
        both(KeyError, lambda: self.model.__delitem__(key_of(k)), lambda: self.d.__delitem__(k))

    @rule(k=values, dflt=values)
    def pop(self, k, dflt):
        want = self.model.pop(key_of(k), (k, dflt))[1]
        got = self.d.pop(k, dflt)
        assert key_of(got) == key_of(want)

    @rule()
    def popitem(self):
        want, got = both(KeyError, lambda: self.model.popitem()[1], self.d.popitem)
        assert [key_of(x) for x in got or ()] == [key_of(x) for x in want or ()]

    @rule(k=values, v=values)
    def setdefault(self, k, v):
        want = self.model.setdefault(key_of(k), (k, v))[1]
        assert key_of(self.d.setdefault(k, v)) == key_of(want)

    @rule(pairs=st.lists(st.tuples(values, values), max_size=4))
    def update(self, pairs):
        for k, v in pairs:
            self.model[key_of(k)] = (k, v)
        self.d.update(pairs)

    @rule(k=values)
    def lookup(self, k):
        assert (k in self.d) == (key_of(k) in self.model)
        want = self.model.get(key_of(k), (k, "missing"))[1]
        assert key_of(self.d.get(k, "missing")) == key_of(want)

    @invariant()
    def same(self):
        assert [(key_of(k), key_of(v)) for k, v in self.d.items()] == [
            (key_of(k), key_of(v)) for k, v in self.model.values()]
        assert len(self.d) == len(self.model)

    def teardown(self):
        self.d.clear()


class DerivationMachine(RuleBasedStateMachine):
    """Array/Map "mutators" return new objects; the originals never change."""

    @initialize(items=st.lists(values, max_size=5), pairs=st.dictionaries(st.text(max_size=2), values, max_size=4))
    def start(self, items, pairs):
        self.arrays = [(Array(items), tuple(items))]
        self.maps = [(Map(pairs), dict(pairs))]

    @rule(data=st.data(), more=st.lists(values, max_size=3))
    def concat(self, data, more):
        a, t = data.draw(st.sampled_from(self.arrays))
        self.arrays.append((a + more, t + tuple(more)))
        self.arrays.append((more + a, tuple(more) + t))

    @rule(data=st.data(), s=slices)
    def slice_to_array(self, data, s):
        a, t = data.draw(st.sampled_from(self.arrays))
        self.arrays.append((Array(a[s]), t[s]))

    @rule(data=st.data(), k=st.text(max_size=2), v=values)
    def map_plus_key(self, data, k, v):
        m, d = data.draw(st.sampled_from(self.maps))
        nd = Dict(m)
        nd[k] = v
        self.maps.append((Map(nd), {**d, k: v}))

    @invariant()
    def originals_unchanged(self):
        for a, t in self.arrays:
            assert [key_of(x) for x in a] == [key_of(x) for x in t] and len(a) == len(t)
        for m, d in self.maps:
            assert [(k, key_of(v)) for k, v in m.items()] == [(k, key_of(v)) for k, v in d.items()]


TestList = ListMachine.TestCase
TestList.settings = SETTINGS
TestDict = DictMachine.TestCase
TestDict.settings = SETTINGS
TestDerivations = DerivationMachine.TestCase
TestDerivations.settings = SETTINGS
