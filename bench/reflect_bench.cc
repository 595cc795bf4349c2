// reflect_bench: reflected objects (ffikit/reflect.h) beside the plain C work they stand for.
//
// Every group has one "<group>/ffikit" benchmark and one "<group>/<peer>" benchmark doing the
// same job on a plain C struct; bench/ratios.py pairs them by group. The peers are lower
// bounds (no type check, no reference counting, no registry), informational, no target.
//
//   field_get_handle   ffk_field_get of field `a` of a 2-int testing pair through an
//                      ffk_field_info fetched once (the bindings' fast path), on one of 16
//                      objects in turn / c_load: a relaxed atomic load of the same int64_t
//                      field of one of 16 plain structs
//   create_2int        ffk_object_create of the 2-int type from two positional ints, then its
//                      release / c_malloc: malloc of the same 40-byte struct, header and both
//                      ints written, free
//   structural_equal_10k
//                      ffk_structural_equal of two equal, separately built trees of 10,000
//                      reflected nodes (complete binary tree: value int, left/right
//                      Optional<Node>) / c_recursive: a recursive compare of two equal trees of
//                      plain C structs with the same shape
//   structural_hash_10k
//                      ffk_structural_hash of one such tree / c_recursive: a recursive
//                      splitmix-style hash of the plain tree
//   structural_first_mismatch_10k
//                      ffk_structural_first_mismatch of two such trees that differ only in
//                      the value of the node the walk visits last (the whole tree is walked,
//                      then the two access paths, 13 steps each, are built and released) / c_recursive:
//                      the recursive compare of two plain trees differing the same way
//   structural_equal_10k_writable, structural_hash_10k_writable
//                      the same walks over trees whose fields are all writable (what
//                      Python's py_class makes by default): read borrowed inside the walk's
//                      read section (reflect.h "Read sections") / c_recursive as above
//   field_get_object_writable
//                      ffk_field_get of a writable str field (read section, load, retain)
//                      and the release of the value, on one of 16 objects in turn / c_load:
//                      an acquire load of a pointer field of one of 16 plain structs
//   structural_equal_lists_1k, structural_hash_lists_1k
//                      the walks over a List of 1,000 Lists of 8 ints (two equal, separately
//                      built ones for equality): every inner List is read through a snapshot
//                      and recorded in the walk's memo; items are inner Lists (no peer)
//   field_set_object_writable
//                      ffk_field_set of a writable str field to one of two strings in turn
//                      (retain, exchange, retire the old value through the epoch) /
//                      c_xchg: an atomic exchange of a pointer field
//   release_object     ffk_object_retain then ffk_object_release of a String someone else holds
//                      (the shallow path: no death) / c_atomic: a relaxed atomic increment and
//                      an acq_rel decrement of a plain counter
//   create_release     ffk_string_new of a 16-byte text, then its release (object creation and
//                      the death of a childless object) / c_malloc: malloc, memcpy, free
//   destroy_array_1000_str
//                      the release of an Array holding the only references to 1,000 Strings
//                      (one Array and 1,000 String deaths: the deleter path at depth 1 and 2)
//                      / c_free: free of 1,000 malloc'ed 16-byte texts and their pointer array
//   destroy_tree_1000  the release of a tree of 1,000 reflected nodes (the tree above, 1,000
//                      nodes, depth 10) / c_recursive: the recursive delete of the plain tree
//                      (the destroy_* groups time only the release: one structure built
//                      per iteration while the clock is paused)
//
// Items: one field read, one object, or one node visited (SetItemsProcessed), so ratios are
// per item. Nothing that builds inputs is timed.
//
// Run with: bazel run -c opt //bench:reflect_bench -- <benchmark flags>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ffikit/array.h>
#include <ffikit/ffi.h>
#include <ffikit/list.h>
#include <ffikit/structural.h>

namespace {

// ---- The types. -------------------------------------------------------------------------

struct BPair {
  ffk_object header;
  int64_t a, b;
};

int32_t PairType() {
  static const ffk_field_def fields[] = {
      {"a", offsetof(BPair, a), "int", 0, ffk_any_none(), nullptr},
      {"b", offsetof(BPair, b), "int", 0, ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "bench.reflect.Pair";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(BPair);
  def.fields = fields;
  def.nfields = 2;
  return ffk_type_define(&def);
}

struct BNode {
  ffk_object header;
  int64_t value;
  ffk_object *left, *right;
};

int32_t NodeType() {
  static const ffk_field_def fields[] = {
      {"value", offsetof(BNode, value), "int", 0, ffk_any_none(), nullptr},
      {"left", offsetof(BNode, left), "Optional<bench.reflect.Node>", FFK_FIELD_HAS_DEFAULT, ffk_any_none(), nullptr},
      {"right", offsetof(BNode, right), "Optional<bench.reflect.Node>", FFK_FIELD_HAS_DEFAULT, ffk_any_none(),
       nullptr},
  };
  ffk_type_def def = {};
  def.key = "bench.reflect.Node";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(BNode);
  def.fields = fields;
  def.nfields = 3;
  return ffk_type_define(&def);
}

// The same node with writable fields.
int32_t WritableNodeType() {
  static const ffk_field_def fields[] = {
      {"value", offsetof(BNode, value), "int", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
      {"left", offsetof(BNode, left), "Optional<bench.reflect.WNode>", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       ffk_any_none(), nullptr},
      {"right", offsetof(BNode, right), "Optional<bench.reflect.WNode>", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "bench.reflect.WNode";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(BNode);
  def.fields = fields;
  def.nfields = 3;
  return ffk_type_define(&def);
}

struct BLabel {
  ffk_object header;
  ffk_object *name;
};

int32_t LabelType() {
  static const ffk_field_def fields[] = {
      {"name", offsetof(BLabel, name), "str", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "bench.reflect.Label";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(BLabel);
  def.fields = fields;
  def.nfields = 1;
  return ffk_type_define(&def);
}

constexpr int kTreeNodes = 10000;

// The node a pre-order walk (value, left, right) of the n-node tree visits last.
int LastInPreorder(int n) {
  int i = 0;
  for (;;) {
    if (2 * i + 2 < n) i = 2 * i + 2;
    else if (2 * i + 1 < n) i = 2 * i + 1;
    else return i;
  }
}

// Node i of a complete binary tree of n nodes (children 2i+1, 2i+2), as a new reference.
// Node `changed` (if any) holds -1 instead of its index.
ffk_object *BuildTree(int32_t type, int i, int n, int changed = -1) {
  if (i >= n) return nullptr;
  ffk_object *left = BuildTree(type, 2 * i + 1, n, changed), *right = BuildTree(type, 2 * i + 2, n, changed);
  // Borrowed views of the children (ffk_any_object_steal adds no reference; NULL is None).
  ffk_any args[3] = {ffk_any_int(i == changed ? -1 : i), ffk_any_object_steal(left), ffk_any_object_steal(right)};
  ffk_object *node = nullptr;
  if (ffk_object_create(type, args, 3, nullptr, 0, &node) != 0) node = nullptr;
  if (left) ffk_object_release(left);
  if (right) ffk_object_release(right);
  return node;
}

struct CNode {
  int64_t value;
  CNode *left, *right;
};

CNode *BuildCTree(int i, int n, int changed = -1) {
  if (i >= n) return nullptr;
  CNode *c = new CNode{i == changed ? -1 : i, BuildCTree(2 * i + 1, n, changed), BuildCTree(2 * i + 2, n, changed)};
  return c;
}

void FreeCTree(CNode *c) {
  if (c == nullptr) return;
  FreeCTree(c->left);
  FreeCTree(c->right);
  delete c;
}

__attribute__((noinline)) bool CEqual(const CNode *a, const CNode *b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->value == b->value && CEqual(a->left, b->left) && CEqual(a->right, b->right);
}

uint64_t Mix(uint64_t h) {
  h ^= h >> 30;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 27;
  h *= UINT64_C(0x94d049bb133111eb);
  return h ^ (h >> 31);
}

__attribute__((noinline)) uint64_t CHash(const CNode *c) {
  if (c == nullptr) return 0x9e3779b9;
  return Mix(Mix((uint64_t)c->value) ^ CHash(c->left)) + CHash(c->right);
}

// ---- field_get_handle. ---------------------------------------------------------------------

void field_get_handle_ffikit(benchmark::State &state) {
  int32_t t = PairType();
  const ffk_field_info *a = nullptr;
  if (t < 0 || ffk_type_find_field(t, "a", &a) != 1) return ffk_bench::SkipWithFfkError(state, "define");
  std::vector<ffk_object *> objs;
  for (int i = 0; i < 16; ++i) {
    ffk_any args[2] = {ffk_any_int(i), ffk_any_int(-i)};
    ffk_object *o = nullptr;
    if (ffk_object_create(t, args, 2, nullptr, 0, &o) != 0) return ffk_bench::SkipWithFfkError(state, "create");
    objs.push_back(o);
  }
  unsigned k = 0;
  for (auto _ : state) {
    ffk_any v;
    ffk_field_get(a, objs[k++ & 15], &v);
    benchmark::DoNotOptimize(v.v_int);
  }
  for (ffk_object *o : objs) ffk_object_release(o);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_get_handle_ffikit)->Name("field_get_handle/ffikit");

void field_get_handle_c_load(benchmark::State &state) {
  BPair pairs[16];
  for (int i = 0; i < 16; ++i) pairs[i].a = i;
  unsigned k = 0;
  for (auto _ : state) {
    int64_t v = __atomic_load_n(&pairs[k++ & 15].a, __ATOMIC_RELAXED);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_get_handle_c_load)->Name("field_get_handle/c_load");

// ---- field_get_object_writable / field_set_object_writable. --------------------------------

// 16 Labels named "label-0"..."label-15" (str objects: the names are longer than 7 bytes). Empty on failure.
std::vector<ffk_object *> MakeLabels() {
  std::vector<ffk_object *> objs;
  int32_t t = LabelType();
  for (int i = 0; t >= 0 && i < 16; ++i) {
    char name[32];
    snprintf(name, sizeof name, "label-%02d-long", i);
    ffk_any arg = ffk_any_raw_str(name);
    ffk_object *o = nullptr;
    if (ffk_object_create(t, &arg, 1, nullptr, 0, &o) != 0) break;
    objs.push_back(o);
  }
  if (objs.size() != 16) {
    for (ffk_object *o : objs) ffk_object_release(o);
    objs.clear();
  }
  return objs;
}

void field_get_object_writable_ffikit(benchmark::State &state) {
  const ffk_field_info *f = nullptr;
  std::vector<ffk_object *> objs = MakeLabels();
  if (objs.empty() || ffk_type_find_field(LabelType(), "name", &f) != 1)
    return ffk_bench::SkipWithFfkError(state, "define");
  unsigned k = 0;
  for (auto _ : state) {
    ffk_any v;
    ffk_field_get(f, objs[k++ & 15], &v);
    benchmark::DoNotOptimize(v.v_obj);
    ffk_any_release(&v);
  }
  for (ffk_object *o : objs) ffk_object_release(o);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_get_object_writable_ffikit)->Name("field_get_object_writable/ffikit");

void field_get_object_writable_c_load(benchmark::State &state) {
  BLabel labels[16];
  for (int i = 0; i < 16; ++i) labels[i].name = &labels[i].header;
  unsigned k = 0;
  for (auto _ : state) {
    ffk_object *v = __atomic_load_n(&labels[k++ & 15].name, __ATOMIC_ACQUIRE);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_get_object_writable_c_load)->Name("field_get_object_writable/c_load");

void field_set_object_writable_ffikit(benchmark::State &state) {
  const ffk_field_info *f = nullptr;
  std::vector<ffk_object *> objs = MakeLabels();
  if (objs.empty() || ffk_type_find_field(LabelType(), "name", &f) != 1)
    return ffk_bench::SkipWithFfkError(state, "define");
  ffk_any names[2] = {ffk_any_none(), ffk_any_none()};
  if (ffk_any_str("first name, long", 16, &names[0]) != 0 || ffk_any_str("second name, long", 17, &names[1]) != 0)
    return ffk_bench::SkipWithFfkError(state, "str");
  unsigned k = 0;
  for (auto _ : state) {
    if (ffk_field_set(f, objs[k & 15], &names[(k >> 4) & 1]) != 0) {
      ffk_bench::SkipWithFfkError(state, "set");
      break;
    }
    ++k;
  }
  for (ffk_object *o : objs) ffk_object_release(o);
  ffk_any_release(&names[0]);
  ffk_any_release(&names[1]);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_set_object_writable_ffikit)->Name("field_set_object_writable/ffikit");

void field_set_object_writable_c_xchg(benchmark::State &state) {
  BLabel labels[16];
  for (int i = 0; i < 16; ++i) labels[i].name = nullptr;
  unsigned k = 0;
  for (auto _ : state) {
    ffk_object *old = __atomic_exchange_n(&labels[k & 15].name, &labels[(k + 1) & 15].header, __ATOMIC_SEQ_CST);
    benchmark::DoNotOptimize(old);
    ++k;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(field_set_object_writable_c_xchg)->Name("field_set_object_writable/c_xchg");

// ---- create_2int. ---------------------------------------------------------------------------

void create_2int_ffikit(benchmark::State &state) {
  int32_t t = PairType();
  if (t < 0) return ffk_bench::SkipWithFfkError(state, "define");
  int64_t i = 0;
  for (auto _ : state) {
    ffk_any args[2] = {ffk_any_int(i), ffk_any_int(i + 1)};
    ++i;
    ffk_object *o = nullptr;
    if (ffk_object_create(t, args, 2, nullptr, 0, &o) != 0) return ffk_bench::SkipWithFfkError(state, "create");
    benchmark::DoNotOptimize(o);
    ffk_object_release(o);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(create_2int_ffikit)->Name("create_2int/ffikit");

void create_2int_c_malloc(benchmark::State &state) {
  int64_t i = 0;
  for (auto _ : state) {
    BPair *p = static_cast<BPair *>(malloc(sizeof(BPair)));
    benchmark::DoNotOptimize(p);
    p->header.refcount = 1;
    p->header.type_index = FFK_TYPE_OBJECT;
    p->header.flags = 0;
    p->header.deleter = nullptr;
    p->a = i;
    p->b = i + 1;
    ++i;
    benchmark::ClobberMemory();
    free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(create_2int_c_malloc)->Name("create_2int/c_malloc");

// ---- structural_equal_10k / structural_hash_10k. ------------------------------------------

void structural_equal_10k(benchmark::State &state, int32_t t) {
  ffk_object *x = t < 0 ? nullptr : BuildTree(t, 0, kTreeNodes);
  ffk_object *y = t < 0 ? nullptr : BuildTree(t, 0, kTreeNodes);
  if (x == nullptr || y == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
  ffk_any a = ffk_any_object(x), b = ffk_any_object(y);
  for (auto _ : state) {
    int rc = ffk_structural_equal(&a, &b);
    if (rc != 1) {
      state.SkipWithError("trees not equal");
      break;
    }
  }
  ffk_object_release(x);
  ffk_object_release(y);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
void structural_equal_10k_ffikit(benchmark::State &state) { structural_equal_10k(state, NodeType()); }
BENCHMARK(structural_equal_10k_ffikit)->Name("structural_equal_10k/ffikit");

void structural_equal_10k_writable_ffikit(benchmark::State &state) { structural_equal_10k(state, WritableNodeType()); }
BENCHMARK(structural_equal_10k_writable_ffikit)->Name("structural_equal_10k_writable/ffikit");

void structural_equal_10k_c_recursive(benchmark::State &state) {
  CNode *x = BuildCTree(0, kTreeNodes), *y = BuildCTree(0, kTreeNodes);
  for (auto _ : state) {
    bool eq = CEqual(x, y);
    benchmark::DoNotOptimize(eq);
  }
  FreeCTree(x);
  FreeCTree(y);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
BENCHMARK(structural_equal_10k_c_recursive)->Name("structural_equal_10k/c_recursive");
BENCHMARK(structural_equal_10k_c_recursive)->Name("structural_equal_10k_writable/c_recursive");

void structural_hash_10k(benchmark::State &state, int32_t t) {
  ffk_object *x = t < 0 ? nullptr : BuildTree(t, 0, kTreeNodes);
  if (x == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
  ffk_any a = ffk_any_object(x);
  for (auto _ : state) {
    uint64_t h = 0;
    if (ffk_structural_hash(&a, &h) != 0) {
      ffk_bench::SkipWithFfkError(state, "hash");
      break;
    }
    benchmark::DoNotOptimize(h);
  }
  ffk_object_release(x);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
void structural_hash_10k_ffikit(benchmark::State &state) { structural_hash_10k(state, NodeType()); }
BENCHMARK(structural_hash_10k_ffikit)->Name("structural_hash_10k/ffikit");

void structural_hash_10k_writable_ffikit(benchmark::State &state) { structural_hash_10k(state, WritableNodeType()); }
BENCHMARK(structural_hash_10k_writable_ffikit)->Name("structural_hash_10k_writable/ffikit");

void structural_hash_10k_c_recursive(benchmark::State &state) {
  CNode *x = BuildCTree(0, kTreeNodes);
  for (auto _ : state) {
    uint64_t h = CHash(x);
    benchmark::DoNotOptimize(h);
  }
  FreeCTree(x);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
BENCHMARK(structural_hash_10k_c_recursive)->Name("structural_hash_10k/c_recursive");
BENCHMARK(structural_hash_10k_c_recursive)->Name("structural_hash_10k_writable/c_recursive");

// ---- structural_first_mismatch_10k. ---------------------------------------------------------

void structural_first_mismatch_10k_ffikit(benchmark::State &state) {
  int32_t t = NodeType();
  ffk_object *x = t < 0 ? nullptr : BuildTree(t, 0, kTreeNodes);
  ffk_object *y = t < 0 ? nullptr : BuildTree(t, 0, kTreeNodes, LastInPreorder(kTreeNodes));
  if (x == nullptr || y == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
  ffk_any a = ffk_any_object(x), b = ffk_any_object(y);
  for (auto _ : state) {
    ffk_object *l = nullptr, *r = nullptr;
    if (ffk_structural_first_mismatch(&a, &b, &l, &r) != 1) {
      ffk_bench::SkipWithFfkError(state, "first mismatch");
      break;
    }
    ffk_object_release(l);
    ffk_object_release(r);
  }
  ffk_object_release(x);
  ffk_object_release(y);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
BENCHMARK(structural_first_mismatch_10k_ffikit)->Name("structural_first_mismatch_10k/ffikit");

void structural_first_mismatch_10k_c_recursive(benchmark::State &state) {
  CNode *x = BuildCTree(0, kTreeNodes), *y = BuildCTree(0, kTreeNodes, LastInPreorder(kTreeNodes));
  for (auto _ : state) {
    bool eq = CEqual(x, y);
    benchmark::DoNotOptimize(eq);
  }
  FreeCTree(x);
  FreeCTree(y);
  state.SetItemsProcessed(state.iterations() * kTreeNodes);
}
BENCHMARK(structural_first_mismatch_10k_c_recursive)->Name("structural_first_mismatch_10k/c_recursive");

// ---- structural_equal_lists_1k / structural_hash_lists_1k. ---------------------------------

constexpr int kLists = 1000, kListItems = 8;

// A List of kLists Lists of kListItems ints: every inner List is read through a snapshot, so
// each counts as shared and goes through the walk's memo (what issue 35's fix keeps alive).
ffk_object *BuildLists() {
  ffk_list *outer = ffk_list_new();
  for (int i = 0; outer != nullptr && i < kLists; ++i) {
    ffk_any items[kListItems];
    for (int j = 0; j < kListItems; ++j) items[j] = ffk_any_int(i * kListItems + j);
    ffk_any inner = ffk_any_object_steal(reinterpret_cast<ffk_object *>(ffk_list_from_items(items, kListItems)));
    if (inner.v_obj == nullptr || ffk_list_append_steal(outer, &inner) != 0) {
      ffk_object_release(reinterpret_cast<ffk_object *>(outer));
      return nullptr;
    }
  }
  return reinterpret_cast<ffk_object *>(outer);
}

void structural_equal_lists_1k_ffikit(benchmark::State &state) {
  ffk_object *x = BuildLists(), *y = BuildLists();
  if (x == nullptr || y == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
  ffk_any a = ffk_any_object(x), b = ffk_any_object(y);
  for (auto _ : state) {
    if (ffk_structural_equal(&a, &b) != 1) {
      state.SkipWithError("lists not equal");
      break;
    }
  }
  ffk_object_release(x);
  ffk_object_release(y);
  state.SetItemsProcessed(state.iterations() * kLists);
}
BENCHMARK(structural_equal_lists_1k_ffikit)->Name("structural_equal_lists_1k/ffikit");

void structural_hash_lists_1k_ffikit(benchmark::State &state) {
  ffk_object *x = BuildLists();
  if (x == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
  ffk_any a = ffk_any_object(x);
  for (auto _ : state) {
    uint64_t h = 0;
    if (ffk_structural_hash(&a, &h) != 0) {
      ffk_bench::SkipWithFfkError(state, "hash");
      break;
    }
    benchmark::DoNotOptimize(h);
  }
  ffk_object_release(x);
  state.SetItemsProcessed(state.iterations() * kLists);
}
BENCHMARK(structural_hash_lists_1k_ffikit)->Name("structural_hash_lists_1k/ffikit");

// ---- release_object / create_release / destroy_* (issue 35: the release path's cost). ---------

void release_object_ffikit(benchmark::State &state) {
  ffk_string *s = ffk_string_new("sixteen bytes...", 16);
  if (s == nullptr) return ffk_bench::SkipWithFfkError(state, "ffk_string_new");
  ffk_object *obj = &s->header;
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    ffk_object_retain(obj);
    benchmark::ClobberMemory();
    ffk_object_release(obj);
  }
  ffk_object_release(obj);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(release_object_ffikit)->Name("release_object/ffikit");

void release_object_c_atomic(benchmark::State &state) {
  uint64_t count = 1;
  uint64_t *p = &count;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
    benchmark::ClobberMemory();
    if (__atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL) == 0) abort();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(release_object_c_atomic)->Name("release_object/c_atomic");

void create_release_ffikit(benchmark::State &state) {
  for (auto _ : state) {
    ffk_string *s = ffk_string_new("sixteen bytes...", 16);
    benchmark::DoNotOptimize(s);
    ffk_object_release(&s->header);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(create_release_ffikit)->Name("create_release/ffikit");

void create_release_c_malloc(benchmark::State &state) {
  for (auto _ : state) {
    char *p = static_cast<char *>(malloc(48));
    benchmark::DoNotOptimize(p);
    memcpy(p + 32, "sixteen bytes...", 16);
    benchmark::ClobberMemory();
    free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(create_release_c_malloc)->Name("create_release/c_malloc");

constexpr int kDestroyItems = 1000;

// Times `destroy(build())` per iteration, the build outside the clock (PauseTiming stops
// the CPU clock too, which the ratios read: the load of a shared machine moves wall time).
// The pause costs about a microsecond, the same on both sides and under 3% of either.
template <typename Build, typename Destroy>
void TimeDestroy(benchmark::State &state, Build build, Destroy destroy) {
  for (auto _ : state) {
    state.PauseTiming();
    auto x = build();
    state.ResumeTiming();
    if (x == nullptr) return ffk_bench::SkipWithFfkError(state, "build");
    destroy(x);
  }
  state.SetItemsProcessed(state.iterations() * kDestroyItems);
}

void destroy_array_1000_str_ffikit(benchmark::State &state) {
  TimeDestroy(
      state,
      [] {
        std::vector<ffk_any> items(kDestroyItems);
        for (auto &v : items) v = ffk_any_object_steal((ffk_object *)ffk_string_new("sixteen bytes...", 16));
        return ffk_array_new_steal(items.data(), kDestroyItems);
      },
      [](ffk_array *a) { ffk_object_release((ffk_object *)a); });
}
BENCHMARK(destroy_array_1000_str_ffikit)->Name("destroy_array_1000_str/ffikit");

void destroy_array_1000_str_c_free(benchmark::State &state) {
  TimeDestroy(
      state,
      [] {
        char **items = static_cast<char **>(malloc(kDestroyItems * sizeof(char *)));
        for (int i = 0; i < kDestroyItems; ++i) {
          items[i] = static_cast<char *>(malloc(48));
          memcpy(items[i] + 32, "sixteen bytes...", 16);
        }
        return items;
      },
      [](char **items) {
        for (int i = 0; i < kDestroyItems; ++i) free(items[i]);
        free(items);
      });
}
BENCHMARK(destroy_array_1000_str_c_free)->Name("destroy_array_1000_str/c_free");

void destroy_tree_1000_ffikit(benchmark::State &state) {
  int32_t t = NodeType();
  if (t < 0) return ffk_bench::SkipWithFfkError(state, "define");
  TimeDestroy(
      state, [t] { return BuildTree(t, 0, kDestroyItems); }, [](ffk_object *o) { ffk_object_release(o); });
}
BENCHMARK(destroy_tree_1000_ffikit)->Name("destroy_tree_1000/ffikit");

void destroy_tree_1000_c_recursive(benchmark::State &state) {
  TimeDestroy(
      state, [] { return BuildCTree(0, kDestroyItems); }, [](CNode *c) { FreeCTree(c); });
}
BENCHMARK(destroy_tree_1000_c_recursive)->Name("destroy_tree_1000/c_recursive");

}  // namespace

int main(int argc, char **argv) {
  if (!ffk_bench::Start(&argc, argv)) return 1;
  ffk_bench::Run();
  return 0;
}
