// containers_bench: Array, List, Map and Dict beside std::vector, std::unordered_map and
// CPython's list and dict, in one binary (CPython is embedded: Py_Initialize in main).
//
// Every group has one "<group>/ffikit" benchmark and one or more "<group>/<peer>" benchmarks
// doing the same work; bench/ratios.py pairs them by group and prints ffikit/peer ratios of
// CPU time per item (every benchmark calls SetItemsProcessed; one item = one element pushed,
// one key set or looked up, one element visited or copied). Nothing that makes inputs is
// timed: keys, values and the prebuilt containers are made once, before the timed loops.
//
// Inputs
//   int keys    kMapN distinct pseudo-random ints in [0, 2^30): key(i) = (i * 2654435761) mod
//               2^30, a bijection on [0, 2^30); hits use i in [0, kMapN), misses i in
//               [kMapN, 2 kMapN). No side gets sequential keys (a perfect hash for
//               std::hash<int64_t> and CPython's int hash); all fit one 30-bit PyLong digit.
//   str keys    "key_%08d" (12 bytes): a String object in ffikit (longer than the 7 inline
//               bytes), an SSO std::string, a compact ASCII PyUnicode. Misses are "key_%08d"
//               for i in [kMapN, 2 kMapN): same length and prefix.
//   probe keys  lookups never use the stored key objects: every side gets its own second set
//               of equal keys (distinct String objects, std::strings, PyUnicode/PyLong objects),
//               in one shuffled order (mt19937_64, fixed seed) shared by all sides, so no side
//               wins by identity compares or by walking memory in insertion order.
//   values      ffikit: ffk_any_int(i); std: int64_t i; CPython: prebuilt PyLong objects.
//
// Groups (ffikit side / peer sides)
//   push_1m_array   1,000,000 ffk_array_push of ffk_any_int(i) into a unique Array made by
//                   ffk_array_new(NULL, 0), then its release
//                   / vector: std::vector<S>::push_back from empty (S is 16 bytes: int32 tag,
//                   uint32 pad, int64 v, like ffk_any), then its destruction
//                   / pylist: PyList_New(0) + PyList_Append of one prebuilt PyLong, then Py_DECREF
//                   / c_realloc (informational, no target): a malloc'd S array grown by realloc
//                   doubling, then free; the push cost with warm memory (std::vector's
//                   allocate-copy-free growth takes fresh pages from the kernel every time)
//   push_1m_list    the same with ffk_list_new + ffk_list_append (locked), same peers
//   iter_sum_1m     sum v_int over ffk_array_items_borrow of a 1M-element Array
//                   / vector: sum .v over std::vector<S>
//   map_iter_100k   ffk_map_next over a 100k int-key Map summing value->v_int
//                   / umap: range-for over std::unordered_map<int64_t, int64_t> (informational)
//   map_set_{int,str}, dict_set_{int,str}
//                   a new empty container, 100,000 sets of distinct keys (ffk_map_set on the
//                   unique Map / ffk_dict_set), then its release (the releases of the keys
//                   and the frees are timed on every side)
//                   / umap: std::unordered_map<int64_t or std::string, int64_t> from empty,
//                   insert_or_assign, destruction / pydict: PyDict_New, PyDict_SetItem, Py_DECREF
//   map_get_hit_*, dict_get_hit_*, map_get_miss_*, dict_get_miss_*
//                   100,000 lookups (ffk_map_get / ffk_dict_get, the value read out) in a
//                   prebuilt 100k container; hits find every key once, misses find none
//                   / umap: find / pydict: PyDict_GetItem (borrowed value)
//   cow_set_10k     base: an Array of 10,000 distinct String objects. Each iteration:
//                   retain base into a second handle h (base now shared), ffk_array_set(&h,
//                   i, int): ffk_object_alloc of a 10,000-slot Array, memcpy of the 160 KB of
//                   elements, one atomic increment per element (ffk_any_retain), the new
//                   element stored and the old String released (one atomic decrement), base
//                   released (one atomic decrement); then the copy released: one atomic
//                   decrement per element (ffk_any_release) and free
//                   / bound: an atomic increment of base's refcount word (the handle); malloc
//                   of 160 KB; memcpy of base's 10,000 ffk_any; for each object element one
//                   __atomic_fetch_add on the String's own refcount word; element i
//                   replaced by an int (one __atomic_fetch_sub on the old String); the
//                   handle's decrement; then one __atomic_fetch_sub per object element (acq_rel,
//                   checking for zero like a release) and free. The same String objects and
//                   refcount words as the ffikit side: what any copy-on-write copy must do.
//   lock_get_int, lock_set_int
//                   the cost of Dict's lock, uncontended: ffk_dict_get of the 100k int hits /
//                   map_unlocked: ffk_map_get on a Map with the same keys built the same way;
//                   ffk_dict_set of existing keys / map_unlocked: ffk_map_set of existing keys
//                   on a unique Map (the value is replaced in place)
//   map_get_shared  (scaling) ffk_map_get of the 100k int hits on one Map shared by 1 and 2
//                   threads (->Threads(1)->Threads(2), real time): bench/ratios.py prints the
//                   items_per_second at 2 threads over that at 1 thread. map_get_shared/umap
//                   does the same with std::unordered_map::find as a control: how well two
//                   threads can scale on the machine at all.
//
// Run with: bench/run.sh  (or bazel run -c opt //bench:containers_bench -- <benchmark flags>)

#include <Python.h>  // first, as CPython asks

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/tvm_ffi_peer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <ffikit/array.h>
#include <ffikit/dict.h>
#include <ffikit/error.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/object.h>
#include <ffikit/string.h>

namespace {

constexpr int64_t kPushN = 1000000;
constexpr int64_t kIterN = 1000000;
constexpr int64_t kMapN = 100000;
constexpr int64_t kCowN = 10000;

// ---- helpers ----------------------------------------------------------------------------

using ffk_bench::SkipWithFfkError;

// Aborts setup (outside any timed region) with the pending ffikit or Python error.
[[noreturn]] void Die(const char *what) {
  std::fprintf(stderr, "containers_bench: setup failed: %s", what);
  if (ffk_error *err = ffk_error_peek_borrow())
    std::fprintf(stderr, ": %s: %s", ffk_error_kind(err), ffk_error_message(err));
  std::fprintf(stderr, "\n");
  if (PyErr_Occurred()) PyErr_Print();
  std::abort();
}

ffk_object *Obj(ffk_map *m) { return reinterpret_cast<ffk_object *>(m); }
ffk_object *Obj(ffk_dict *d) { return reinterpret_cast<ffk_object *>(d); }
ffk_object *Obj(ffk_list *l) { return reinterpret_cast<ffk_object *>(l); }

// The 16-byte element of the std::vector peers: the shape of ffk_any.
struct S {
  int32_t tag;
  uint32_t pad;
  int64_t v;
};
static_assert(sizeof(S) == 16, "S is 16 bytes like ffk_any");

int64_t IntKey(int64_t i) { return static_cast<int64_t>((static_cast<uint64_t>(i) * 2654435761u) & ((1u << 30) - 1)); }

std::string StrKey(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key_%08lld", static_cast<long long>(i));
  return buf;
}

ffk_any FfkStr(const std::string &s) {
  ffk_any v;
  if (ffk_any_str(s.data(), s.size(), &v) != 0) Die("ffk_any_str");
  if (v.type_index != FFK_TYPE_STRING) Die("a 12-byte str is not a String object");
  return v;
}

// ---- inputs, made once ------------------------------------------------------------------

struct Inputs {
  std::vector<int64_t> order;  // the shuffled probe order, a permutation of [0, kMapN)

  // ffikit
  std::vector<ffk_any> int_keys, int_hit, int_miss;  // int_hit/int_miss in probe order
  std::vector<ffk_any> str_keys, str_hit, str_miss;  // distinct String objects
  std::vector<ffk_any> values;
  // std
  std::vector<int64_t> std_int_keys, std_int_hit, std_int_miss;
  std::vector<std::string> std_str_keys, std_str_hit, std_str_miss;
  // CPython
  std::vector<PyObject *> py_int_keys, py_int_hit, py_int_miss;
  std::vector<PyObject *> py_str_keys, py_str_hit, py_str_miss;
  std::vector<PyObject *> py_values;

  Inputs() {
    order.resize(kMapN);
    for (int64_t i = 0; i < kMapN; ++i) order[i] = i;
    std::mt19937_64 rng(20261121);
    std::shuffle(order.begin(), order.end(), rng);

    for (int64_t i = 0; i < kMapN; ++i) {
      int_keys.push_back(ffk_any_int(IntKey(i)));
      std_int_keys.push_back(IntKey(i));
      py_int_keys.push_back(PyLong_FromLongLong(IntKey(i)));
      std::string s = StrKey(i);
      str_keys.push_back(FfkStr(s));
      std_str_keys.push_back(s);
      py_str_keys.push_back(PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size())));
      values.push_back(ffk_any_int(i));
      py_values.push_back(PyLong_FromLongLong(i));
    }
    for (int64_t k = 0; k < kMapN; ++k) {
      int64_t hit = order[k], miss = kMapN + order[k];
      int_hit.push_back(ffk_any_int(IntKey(hit)));
      int_miss.push_back(ffk_any_int(IntKey(miss)));
      std_int_hit.push_back(IntKey(hit));
      std_int_miss.push_back(IntKey(miss));
      py_int_hit.push_back(PyLong_FromLongLong(IntKey(hit)));  // a new object, not the stored one
      py_int_miss.push_back(PyLong_FromLongLong(IntKey(miss)));
      std::string hs = StrKey(hit), ms = StrKey(miss);
      str_hit.push_back(FfkStr(hs));
      str_miss.push_back(FfkStr(ms));
      std_str_hit.push_back(hs);
      std_str_miss.push_back(ms);
      py_str_hit.push_back(PyUnicode_FromStringAndSize(hs.data(), static_cast<Py_ssize_t>(hs.size())));
      py_str_miss.push_back(PyUnicode_FromStringAndSize(ms.data(), static_cast<Py_ssize_t>(ms.size())));
    }
    for (auto *vec : {&py_int_keys, &py_str_keys, &py_values, &py_int_hit, &py_int_miss, &py_str_hit, &py_str_miss})
      for (PyObject *o : *vec)
        if (o == nullptr) Die("making the Python keys");
    // Pre-existing Python objects have their hash computed before timing, as any key that was
    // used once has (str caches its hash; int recomputes it, cheaply for one digit).
    for (auto *vec : {&py_str_keys, &py_str_hit, &py_str_miss})
      for (PyObject *o : *vec) PyObject_Hash(o);
  }
};

const Inputs &In() {
  static const Inputs *inputs = new Inputs();  // never freed: the process ends after the run
  return *inputs;
}

// Prebuilt 100k containers, made once by inserting the keys in order into an empty container.
enum KeyKind { kInt, kStr };

const std::vector<ffk_any> &Keys(KeyKind k) { return k == kInt ? In().int_keys : In().str_keys; }
const std::vector<ffk_any> &Hits(KeyKind k) { return k == kInt ? In().int_hit : In().str_hit; }
const std::vector<ffk_any> &Misses(KeyKind k) { return k == kInt ? In().int_miss : In().str_miss; }

ffk_map *BuildMap(KeyKind k) {
  ffk_map *m = ffk_map_new();
  if (m == nullptr) Die("ffk_map_new");
  for (int64_t i = 0; i < kMapN; ++i)
    if (ffk_map_set(&m, &Keys(k)[i], &In().values[i]) != 0) Die("ffk_map_set");
  return m;
}

ffk_dict *BuildDict(KeyKind k) {
  ffk_dict *d = ffk_dict_new();
  if (d == nullptr) Die("ffk_dict_new");
  for (int64_t i = 0; i < kMapN; ++i)
    if (ffk_dict_set(d, &Keys(k)[i], &In().values[i]) != 0) Die("ffk_dict_set");
  return d;
}

ffk_map *SharedMap(KeyKind k) {
  static ffk_map *maps[2] = {BuildMap(kInt), BuildMap(kStr)};
  return maps[k];
}

ffk_dict *SharedDict(KeyKind k) {
  static ffk_dict *dicts[2] = {BuildDict(kInt), BuildDict(kStr)};
  return dicts[k];
}

const std::unordered_map<int64_t, int64_t> &IntUmap() {
  static const auto *m = [] {
    auto *u = new std::unordered_map<int64_t, int64_t>();
    for (int64_t i = 0; i < kMapN; ++i) u->insert_or_assign(In().std_int_keys[i], i);
    return u;
  }();
  return *m;
}

const std::unordered_map<std::string, int64_t> &StrUmap() {
  static const auto *m = [] {
    auto *u = new std::unordered_map<std::string, int64_t>();
    for (int64_t i = 0; i < kMapN; ++i) u->insert_or_assign(In().std_str_keys[i], i);
    return u;
  }();
  return *m;
}

PyObject *BuildPyDict(const std::vector<PyObject *> &keys) {
  PyObject *d = PyDict_New();
  if (d == nullptr) Die("PyDict_New");
  for (int64_t i = 0; i < kMapN; ++i)
    if (PyDict_SetItem(d, keys[i], In().py_values[i]) != 0) Die("PyDict_SetItem");
  return d;
}

PyObject *SharedPyDict(KeyKind k) {
  static PyObject *dicts[2] = {BuildPyDict(In().py_int_keys), BuildPyDict(In().py_str_keys)};
  return dicts[k];
}

void Items(benchmark::State &state, int64_t per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * per_iteration);
}

// ---- push_1m_array / push_1m_list -------------------------------------------------------

void PushArray_ffikit(benchmark::State &state) {
  for (auto _ : state) {
    ffk_array *a = ffk_array_new(nullptr, 0);
    if (a == nullptr) return SkipWithFfkError(state, "ffk_array_new");
    for (int64_t i = 0; i < kPushN; ++i) {
      ffk_any v = ffk_any_int(i);
      if (FFK_UNLIKELY(ffk_array_push(&a, &v) != 0)) {
        ffk_object_release(&a->header);
        return SkipWithFfkError(state, "ffk_array_push");
      }
    }
    benchmark::DoNotOptimize(a->data);
    benchmark::ClobberMemory();
    ffk_object_release(&a->header);
  }
  Items(state, kPushN);
}

void PushList_ffikit(benchmark::State &state) {
  for (auto _ : state) {
    ffk_list *l = ffk_list_new();
    if (l == nullptr) return SkipWithFfkError(state, "ffk_list_new");
    for (int64_t i = 0; i < kPushN; ++i) {
      ffk_any v = ffk_any_int(i);
      if (FFK_UNLIKELY(ffk_list_append(l, &v) != 0)) {
        ffk_object_release(Obj(l));
        return SkipWithFfkError(state, "ffk_list_append");
      }
    }
    benchmark::DoNotOptimize(l);
    benchmark::ClobberMemory();
    ffk_object_release(Obj(l));
  }
  Items(state, kPushN);
}

void Push_vector(benchmark::State &state) {
  for (auto _ : state) {
    std::vector<S> v;
    for (int64_t i = 0; i < kPushN; ++i) v.push_back(S{FFK_TYPE_INT, 0, i});
    benchmark::DoNotOptimize(v.data());
    benchmark::ClobberMemory();
  }
  Items(state, kPushN);
}

// Informational: what a C programmer writes for a growable array of 16-byte elements, realloc
// doubling from 4. Unlike std::vector (allocate, copy, free), realloc grows the block in place
// at the top of the heap, so in steady state it takes no page faults: the cost of the pushes
// themselves with warm memory.
void Push_c_realloc(benchmark::State &state) {
  for (auto _ : state) {
    size_t cap = 4, n = 0;
    S *p = static_cast<S *>(std::malloc(cap * sizeof(S)));
    if (p == nullptr) Die("malloc");
    for (int64_t i = 0; i < kPushN; ++i) {
      if (FFK_UNLIKELY(n == cap)) {
        cap *= 2;
        S *q = static_cast<S *>(std::realloc(p, cap * sizeof(S)));
        if (q == nullptr) Die("realloc");
        p = q;
      }
      p[n++] = S{FFK_TYPE_INT, 0, i};
    }
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
    std::free(p);
  }
  Items(state, kPushN);
}

void Push_pylist(benchmark::State &state) {
  PyObject *item = PyLong_FromLong(123456789);  // one prebuilt int object, appended 1M times
  if (item == nullptr) Die("PyLong_FromLong");
  for (auto _ : state) {
    PyObject *list = PyList_New(0);
    if (list == nullptr) Die("PyList_New");
    for (int64_t i = 0; i < kPushN; ++i) {
      if (FFK_UNLIKELY(PyList_Append(list, item) != 0)) Die("PyList_Append");
    }
    benchmark::DoNotOptimize(list);
    benchmark::ClobberMemory();
    Py_DECREF(list);
  }
  Py_DECREF(item);
  Items(state, kPushN);
}

// ---- iter_sum_1m / map_iter_100k ----------------------------------------------------------

void IterSum_ffikit(benchmark::State &state) {
  ffk_array *a = ffk_array_with_capacity(kIterN);
  if (a == nullptr) return SkipWithFfkError(state, "ffk_array_with_capacity");
  for (int64_t i = 0; i < kIterN; ++i) {
    ffk_any v = ffk_any_int(i);
    if (ffk_array_push(&a, &v) != 0) return SkipWithFfkError(state, "ffk_array_push");
  }
  for (auto _ : state) {
    const ffk_any *items = ffk_array_items_borrow(a);
    int64_t n = ffk_array_size(a), sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += items[i].v_int;
    benchmark::DoNotOptimize(sum);
  }
  ffk_object_release(&a->header);
  Items(state, kIterN);
}

void IterSum_vector(benchmark::State &state) {
  std::vector<S> v;
  v.reserve(kIterN);
  for (int64_t i = 0; i < kIterN; ++i) v.push_back(S{FFK_TYPE_INT, 0, i});
  for (auto _ : state) {
    const S *items = v.data();
    int64_t n = static_cast<int64_t>(v.size()), sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += items[i].v;
    benchmark::DoNotOptimize(sum);
  }
  Items(state, kIterN);
}

void MapIter_ffikit(benchmark::State &state) {
  const ffk_map *m = SharedMap(kInt);
  for (auto _ : state) {
    int64_t pos = 0, sum = 0;
    const ffk_any *key, *value;
    while (ffk_map_next(m, &pos, &key, &value)) sum += value->v_int;
    benchmark::DoNotOptimize(sum);
  }
  Items(state, kMapN);
}

void MapIter_umap(benchmark::State &state) {
  const auto &m = IntUmap();
  for (auto _ : state) {
    int64_t sum = 0;
    for (const auto &kv : m) sum += kv.second;
    benchmark::DoNotOptimize(sum);
  }
  Items(state, kMapN);
}

// ---- map_set_* / dict_set_* ---------------------------------------------------------------

void MapSet_ffikit(benchmark::State &state, KeyKind k) {
  const std::vector<ffk_any> &keys = Keys(k);
  const std::vector<ffk_any> &values = In().values;
  for (auto _ : state) {
    ffk_map *m = ffk_map_new();
    if (m == nullptr) return SkipWithFfkError(state, "ffk_map_new");
    for (int64_t i = 0; i < kMapN; ++i) {
      if (FFK_UNLIKELY(ffk_map_set(&m, &keys[i], &values[i]) != 0)) {
        ffk_object_release(Obj(m));
        return SkipWithFfkError(state, "ffk_map_set");
      }
    }
    benchmark::DoNotOptimize(m);
    ffk_object_release(Obj(m));
  }
  Items(state, kMapN);
}

void DictSet_ffikit(benchmark::State &state, KeyKind k) {
  const std::vector<ffk_any> &keys = Keys(k);
  const std::vector<ffk_any> &values = In().values;
  for (auto _ : state) {
    ffk_dict *d = ffk_dict_new();
    if (d == nullptr) return SkipWithFfkError(state, "ffk_dict_new");
    for (int64_t i = 0; i < kMapN; ++i) {
      if (FFK_UNLIKELY(ffk_dict_set(d, &keys[i], &values[i]) != 0)) {
        ffk_object_release(Obj(d));
        return SkipWithFfkError(state, "ffk_dict_set");
      }
    }
    benchmark::DoNotOptimize(d);
    ffk_object_release(Obj(d));
  }
  Items(state, kMapN);
}

template <typename K>
void Set_umap(benchmark::State &state, const std::vector<K> &keys) {
  for (auto _ : state) {
    std::unordered_map<K, int64_t> m;
    for (int64_t i = 0; i < kMapN; ++i) m.insert_or_assign(keys[i], i);
    benchmark::DoNotOptimize(m);
    benchmark::ClobberMemory();
  }
  Items(state, kMapN);
}

void SetInt_umap(benchmark::State &state) { Set_umap(state, In().std_int_keys); }
void SetStr_umap(benchmark::State &state) { Set_umap(state, In().std_str_keys); }

void Set_pydict(benchmark::State &state, KeyKind k) {
  const std::vector<PyObject *> &keys = k == kInt ? In().py_int_keys : In().py_str_keys;
  const std::vector<PyObject *> &values = In().py_values;
  for (auto _ : state) {
    PyObject *d = PyDict_New();
    if (d == nullptr) Die("PyDict_New");
    for (int64_t i = 0; i < kMapN; ++i)
      if (FFK_UNLIKELY(PyDict_SetItem(d, keys[i], values[i]) != 0)) Die("PyDict_SetItem");
    benchmark::DoNotOptimize(d);
    Py_DECREF(d);
  }
  Items(state, kMapN);
}

// ---- map_get_* / dict_get_* ---------------------------------------------------------------

void MapGet_ffikit(benchmark::State &state, KeyKind k, bool hit) {
  const ffk_map *m = SharedMap(k);
  const std::vector<ffk_any> &probes = hit ? Hits(k) : Misses(k);
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t i = 0; i < kMapN; ++i) {
      ffk_any out;
      found += ffk_map_get(m, &probes[i], &out);
      sum += out.v_int;  // an int (a no-op release) or None
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != (hit ? kMapN : 0))) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

void DictGet_ffikit(benchmark::State &state, KeyKind k, bool hit) {
  ffk_dict *d = SharedDict(k);
  const std::vector<ffk_any> &probes = hit ? Hits(k) : Misses(k);
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t i = 0; i < kMapN; ++i) {
      ffk_any out;
      found += ffk_dict_get(d, &probes[i], &out);
      sum += out.v_int;
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != (hit ? kMapN : 0))) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

template <typename K>
void Get_umap(benchmark::State &state, const std::unordered_map<K, int64_t> &m, const std::vector<K> &probes,
              bool hit) {
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t i = 0; i < kMapN; ++i) {
      auto it = m.find(probes[i]);
      if (it != m.end()) {
        ++found;
        sum += it->second;
      }
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != (hit ? kMapN : 0))) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

void GetInt_umap(benchmark::State &state, bool hit) {
  Get_umap(state, IntUmap(), hit ? In().std_int_hit : In().std_int_miss, hit);
}
void GetStr_umap(benchmark::State &state, bool hit) {
  Get_umap(state, StrUmap(), hit ? In().std_str_hit : In().std_str_miss, hit);
}

void Get_pydict(benchmark::State &state, KeyKind k, bool hit) {
  PyObject *d = SharedPyDict(k);
  const std::vector<PyObject *> &probes =
      k == kInt ? (hit ? In().py_int_hit : In().py_int_miss) : (hit ? In().py_str_hit : In().py_str_miss);
  for (auto _ : state) {
    int64_t found = 0;
    uintptr_t sum = 0;
    for (int64_t i = 0; i < kMapN; ++i) {
      PyObject *v = PyDict_GetItem(d, probes[i]);  // borrowed
      found += v != nullptr;
      sum += reinterpret_cast<uintptr_t>(v);
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != (hit ? kMapN : 0))) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

// ---- cow_set_10k --------------------------------------------------------------------------

// An Array of kCowN distinct String objects ("cow_%08d", 12 bytes), made once.
ffk_array *CowBase() {
  static ffk_array *base = [] {
    ffk_array *a = ffk_array_with_capacity(kCowN);
    if (a == nullptr) Die("ffk_array_with_capacity");
    for (int64_t i = 0; i < kCowN; ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "cow_%08lld", static_cast<long long>(i));
      ffk_any s = FfkStr(buf);
      if (ffk_array_push_steal(&a, &s) != 0) Die("ffk_array_push_steal");
    }
    return a;
  }();
  return base;
}

void CowSet_ffikit(benchmark::State &state) {
  ffk_array *base = CowBase();
  int64_t i = 0;
  for (auto _ : state) {
    ffk_array *h = base;
    ffk_object_retain(&h->header);  // a second handle: base is shared now
    ffk_any v = ffk_any_int(i);
    if (FFK_UNLIKELY(ffk_array_set(&h, i % kCowN, &v) != 0)) {
      ffk_object_release(&h->header);
      return SkipWithFfkError(state, "ffk_array_set");
    }
    // h is the copy; the set released h's reference to base.
    benchmark::DoNotOptimize(h->data);
    benchmark::ClobberMemory();
    ffk_object_release(&h->header);  // the copy: kCowN element releases and a free
    ++i;
  }
  if (ffk_object_use_count(&base->header) != 1) state.SkipWithError("base refcount drifted");
  if (base->data[0].type_index != FFK_TYPE_STRING) state.SkipWithError("base changed");
  Items(state, kCowN);
}

// The strong count in a refcount word (low 32 bits; see ffikit/object.h).
inline uint32_t Strong(uint64_t refcount) { return static_cast<uint32_t>(refcount); }

void CowSet_bound(benchmark::State &state) {
  ffk_array *base = CowBase();
  const ffk_any *src = base->data;
  int64_t i = 0;
  for (auto _ : state) {
    __atomic_fetch_add(&base->header.refcount, 1, __ATOMIC_RELAXED);  // the second handle
    ffk_any *copy = static_cast<ffk_any *>(std::malloc(kCowN * sizeof(ffk_any)));
    if (copy == nullptr) Die("malloc");
    std::memcpy(copy, src, kCowN * sizeof(ffk_any));
    for (int64_t k = 0; k < kCowN; ++k)
      if (copy[k].type_index >= FFK_TYPE_OBJECT_BEGIN) __atomic_fetch_add(&copy[k].v_obj->refcount, 1, __ATOMIC_RELAXED);
    ffk_any old = copy[i % kCowN];
    copy[i % kCowN] = ffk_any_int(i);
    if (old.type_index >= FFK_TYPE_OBJECT_BEGIN && Strong(__atomic_fetch_sub(&old.v_obj->refcount, 1, __ATOMIC_ACQ_REL)) == 1)
      Die("an element died");
    if (Strong(__atomic_fetch_sub(&base->header.refcount, 1, __ATOMIC_ACQ_REL)) == 1) Die("base died");
    benchmark::DoNotOptimize(copy);
    benchmark::ClobberMemory();
    for (int64_t k = 0; k < kCowN; ++k) {
      if (copy[k].type_index >= FFK_TYPE_OBJECT_BEGIN &&
          FFK_UNLIKELY(Strong(__atomic_fetch_sub(&copy[k].v_obj->refcount, 1, __ATOMIC_ACQ_REL)) == 1))
        Die("an element died");
    }
    std::free(copy);
    ++i;
  }
  if (ffk_object_use_count(&base->header) != 1) state.SkipWithError("base refcount drifted");
  Items(state, kCowN);
}

// ---- lock_get_int / lock_set_int ----------------------------------------------------------

void LockGet_ffikit(benchmark::State &state) { DictGet_ffikit(state, kInt, true); }
void LockGet_map_unlocked(benchmark::State &state) { MapGet_ffikit(state, kInt, true); }

void LockSet_ffikit(benchmark::State &state) {
  ffk_dict *d = BuildDict(kInt);
  const std::vector<ffk_any> &probes = In().int_hit;
  int64_t round = 0;
  for (auto _ : state) {
    ffk_any v = ffk_any_int(round++);
    for (int64_t i = 0; i < kMapN; ++i) {
      if (FFK_UNLIKELY(ffk_dict_set(d, &probes[i], &v) != 0)) {
        ffk_object_release(Obj(d));
        return SkipWithFfkError(state, "ffk_dict_set");
      }
    }
    benchmark::ClobberMemory();
  }
  if (ffk_dict_size(d) != kMapN) state.SkipWithError("the Dict grew");
  ffk_object_release(Obj(d));
  Items(state, kMapN);
}

void LockSet_map_unlocked(benchmark::State &state) {
  ffk_map *m = BuildMap(kInt);  // unique: sets change it in place
  const std::vector<ffk_any> &probes = In().int_hit;
  int64_t round = 0;
  for (auto _ : state) {
    ffk_any v = ffk_any_int(round++);
    for (int64_t i = 0; i < kMapN; ++i) {
      if (FFK_UNLIKELY(ffk_map_set(&m, &probes[i], &v) != 0)) {
        ffk_object_release(Obj(m));
        return SkipWithFfkError(state, "ffk_map_set");
      }
    }
    benchmark::ClobberMemory();
  }
  if (ffk_map_size(m) != kMapN) state.SkipWithError("the Map grew");
  ffk_object_release(Obj(m));
  Items(state, kMapN);
}

// ---- map_get_shared (scaling) -------------------------------------------------------------

void MapGetShared_ffikit(benchmark::State &state) {
  const ffk_map *m = SharedMap(kInt);  // made before the benchmarks run (see main)
  const ffk_any *probes = In().int_hit.data();
  // The threads start at different points of the probe order.
  int64_t start = (kMapN / 2) * state.thread_index() % kMapN;
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t k = 0, i = start; k < kMapN; ++k, i = i + 1 == kMapN ? 0 : i + 1) {
      ffk_any out;
      found += ffk_map_get(m, &probes[i], &out);
      sum += out.v_int;
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != kMapN)) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

// The same on std::unordered_map: a control showing how far two threads can scale on this
// machine at all (both cores busy, one shared L3).
void MapGetShared_umap(benchmark::State &state) {
  const auto &m = IntUmap();
  const int64_t *probes = In().std_int_hit.data();
  int64_t start = (kMapN / 2) * state.thread_index() % kMapN;
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t k = 0, i = start; k < kMapN; ++k, i = i + 1 == kMapN ? 0 : i + 1) {
      auto it = m.find(probes[i]);
      if (it != m.end()) {
        ++found;
        sum += it->second;
      }
    }
    benchmark::DoNotOptimize(sum);
    if (FFK_UNLIKELY(found != kMapN)) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, kMapN);
}

// ---- registration -------------------------------------------------------------------------

constexpr double kMinTime = 0.2;  // seconds per run: at 5 repetitions (bench/run.sh) the binary runs ~2.5 minutes

benchmark::internal::Benchmark *Reg(const std::string &name, void (*fn)(benchmark::State &)) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMillisecond)->MinTime(kMinTime);
}

template <typename... Args>
benchmark::internal::Benchmark *Reg(const std::string &name, void (*fn)(benchmark::State &, Args...), Args... args) {
  return benchmark::RegisterBenchmark(name.c_str(), fn, args...)->Unit(benchmark::kMillisecond)->MinTime(kMinTime);
}

void RegisterAll() {
  Reg("push_1m_array/ffikit", PushArray_ffikit);
  Reg("push_1m_array/vector", Push_vector);
  Reg("push_1m_array/pylist", Push_pylist);
  Reg("push_1m_array/c_realloc", Push_c_realloc);
  Reg("push_1m_list/ffikit", PushList_ffikit);
  Reg("push_1m_list/vector", Push_vector);
  Reg("push_1m_list/pylist", Push_pylist);
  Reg("push_1m_list/c_realloc", Push_c_realloc);

  Reg("iter_sum_1m/ffikit", IterSum_ffikit);
  Reg("iter_sum_1m/vector", IterSum_vector);
  Reg("map_iter_100k/ffikit", MapIter_ffikit);
  Reg("map_iter_100k/umap", MapIter_umap);

  for (KeyKind k : {kInt, kStr}) {
    std::string kn = k == kInt ? "int" : "str";
    Reg("map_set_" + kn + "/ffikit", MapSet_ffikit, k);
    Reg("map_set_" + kn + "/umap", k == kInt ? SetInt_umap : SetStr_umap);
    Reg("map_set_" + kn + "/pydict", Set_pydict, k);
    Reg("dict_set_" + kn + "/ffikit", DictSet_ffikit, k);
    Reg("dict_set_" + kn + "/umap", k == kInt ? SetInt_umap : SetStr_umap);
    Reg("dict_set_" + kn + "/pydict", Set_pydict, k);
    for (bool hit : {true, false}) {
      std::string hn = hit ? "hit_" : "miss_";
      Reg("map_get_" + hn + kn + "/ffikit", MapGet_ffikit, k, hit);
      Reg("map_get_" + hn + kn + "/umap", k == kInt ? GetInt_umap : GetStr_umap, hit);
      Reg("map_get_" + hn + kn + "/pydict", Get_pydict, k, hit);
      Reg("dict_get_" + hn + kn + "/ffikit", DictGet_ffikit, k, hit);
      Reg("dict_get_" + hn + kn + "/umap", k == kInt ? GetInt_umap : GetStr_umap, hit);
      Reg("dict_get_" + hn + kn + "/pydict", Get_pydict, k, hit);
    }
  }

  Reg("cow_set_10k/ffikit", CowSet_ffikit);
  Reg("cow_set_10k/bound", CowSet_bound);

  Reg("lock_get_int/ffikit", LockGet_ffikit);
  Reg("lock_get_int/map_unlocked", LockGet_map_unlocked);
  Reg("lock_set_int/ffikit", LockSet_ffikit);
  Reg("lock_set_int/map_unlocked", LockSet_map_unlocked);

  Reg("map_get_shared/ffikit", MapGetShared_ffikit)->Threads(1)->Threads(2)->UseRealTime();
  Reg("map_get_shared/umap", MapGetShared_umap)->Threads(1)->Threads(2)->UseRealTime();

  ffk_bench::tvm_ffi_peer::ContainerInputs tvm;
  tvm.push_n = kPushN;
  tvm.int_keys = &In().std_int_keys;
  tvm.int_hit = &In().std_int_hit;
  tvm.int_miss = &In().std_int_miss;
  tvm.str_keys = &In().std_str_keys;
  tvm.str_hit = &In().std_str_hit;
  tvm.str_miss = &In().std_str_miss;
  tvm.min_time = kMinTime;
  ffk_bench::tvm_ffi_peer::RegisterContainerPeers(tvm);
}

}  // namespace

int main(int argc, char **argv) {
  if (!ffk_bench::Start(&argc, argv)) return 1;

  Py_InitializeEx(0);  // once; this (main) thread holds the GIL for the Python peers
  // Make every input and prebuilt container now, outside the timed regions and before any
  // benchmark thread starts (the shared Map is read by two threads at once).
  In();
  SharedMap(kInt);
  SharedMap(kStr);
  SharedDict(kInt);
  SharedDict(kStr);
  IntUmap();
  StrUmap();
  SharedPyDict(kInt);
  SharedPyDict(kStr);
  CowBase();

  RegisterAll();
  ffk_bench::Run();
  // No Py_FinalizeEx: the prebuilt Python objects live until exit, like the other inputs.
  return 0;
}
