/*
 * structural_hash.c - the structural hash (ffikit/structural.h): the walk of structural.c
 * (structural_walk.h) hashing instead of comparing, so that values equality finds equal
 * hash alike (value_kind decides both).
 */
#include "structural_walk.h"

#include <string.h>

static int hash(walk *w, const ffk_any *v, uint64_t *out);
static int hash_node(walk *w, const ffk_any *v, int kind, const type_info *info, uint64_t *out);

/* The hash of a Shape: its dimensions. */
static uint64_t shape_hash(const ffk_any *v) {
  const ffk_shape *sh = (const ffk_shape *)v->v_obj;
  return ffk_hash_bytes(sh->data, sh->size * sizeof(int64_t)) ^ UINT64_C(0x5348415045); /* "SHAPE" */
}

#define HASH_CYCLE UINT64_C(0x6379636c65) /* "cycle": what a node met again contributes */
#define HASH_VAR UINT64_C(0x766172)        /* "var": a bound variable's order */
#define HASH_DAG UINT64_C(0x646167)        /* "dag": a dag node's order */

/*
 * hash(x) -> int, or tvm_ffi's form hash(x, init_hash[, def_region]) -> int, the Function
 * __s_hash__ hooks receive: x's hash combined into init_hash, with x walked in the region
 * def_region names (ffk_walk__hook_region); inside the walk of the hook that received it.
 * It lives here, not with the equality's `equal` in structural.c, so that the hash calls
 * the walker and never the other way round.
 */
static int walk_hash_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  walk *w = ffk_walk__of(self, "hash");
  if (w == NULL) return -1;
  if (nargs < 1 || nargs > 3)
    return ffk_error_set(FFK_ERR_TYPE, "hash(x) or hash(x, init_hash, def_region=0) takes 1 to 3 arguments, got %d",
                         (int)nargs);
  if (nargs >= 2 && args[1].type_index != FFK_TYPE_INT && args[1].type_index != FFK_TYPE_BOOL)
    return ffk_error_set(FFK_ERR_TYPE, "hash(x, init_hash, def_region): init_hash must be an int, not a `%s`",
                         ffk_any_type_name(&args[1]));
  int region = w->region;
  if (nargs == 3 && ffk_walk__hook_region(w, &args[2], "hash(x, init_hash, def_region)", &region) != 0) return -1;
  if (ffk_walk__keep_argument(w, &args[0]) != 0) return -1;
  uint64_t h;
  int outer = w->region;
  w->region = region;
  int rc = hash(w, &args[0], &h);
  w->region = outer;
  if (rc != 0) return -1;
  if (nargs >= 2) h = mix((uint64_t)args[1].v_int ^ mix(h));
  *result = ffk_any_int((int64_t)h);
  return 0;
}

/* An object through its __s_hash__ hook: hook(v, hash) -> int, mixed with the type key. */
static int hash_by_hook(walk *w, ffk_object *o, const type_info *info, uint64_t *out) {
  ffk_function *fn = ffk_walk__fn(w, 1, walk_hash_call);
  if (fn == NULL) return -1;
  ffk_any args[2] = {borrowed_object(o), borrowed_object((ffk_object *)fn)};
  ffk_any result;
  if (ffk_function_call(info->hash_hook, args, 2, &result) != 0) return -1;
  int rc = 0;
  if (result.type_index == FFK_TYPE_INT || result.type_index == FFK_TYPE_BOOL)
    *out = mix(mix(info->key_hash) ^ (uint64_t)result.v_int);
  else
    rc = ffk_error_set(FFK_ERR_TYPE, "the __s_hash__ hook of `%s` returned a `%s`, not an int",
                       ffk_type_key(o->type_index), ffk_any_type_name(&result));
  ffk_any_release(&result);
  return rc;
}

/*
 * An object, as equal_objects compares it: its __s_hash__ hook; or its type key alone
 * when an __s_equal__ hook without __s_hash__ decides equality (the walk cannot know
 * what that hook ignores, and objects it finds equal have one type); or its type key and
 * its compared fields in order (a reflected type).
 */
static int hash_object(walk *w, ffk_object *o, const type_info *info, uint64_t *out) {
  if (info->hash_hook != NULL) return hash_by_hook(w, o, info, out);
  if (info->eq_hook != NULL) {
    *out = mix(info->key_hash);
    return 0;
  }
  uint64_t h = mix(info->key_hash);
  int outer = w->region;
  for (int32_t i = 0; i < info->n; ++i) {
    const ffk_field_info *f = info->fields[i];
    ffk_any value;
    bool owned;
    uint64_t e;
    if (FFK_UNLIKELY(info->has_def))
      w->region = f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE) ? field_region(f, outer) : outer;
    if (read_field(f, o, &value, &owned) != 0) {
      w->region = outer;
      return -1;
    }
    if (value.type_index < FFK_TYPE_STATIC_END && builtin_kind(value.type_index) == KIND_KEY) {
      e = ffk_any_hash(&value); /* an int, None, a string...: what hash() would answer, without the call */
      drop_field(&value, owned);
      h = mix(h ^ e) + (uint64_t)i;
      continue;
    }
    int rc = hash(w, &value, &e);
    drop_field(&value, owned);
    if (rc != 0) {
      w->region = outer;
      return -1;
    }
    h = mix(h ^ e) + (uint64_t)i; /* field order matters, as for sequences */
  }
  w->region = outer;
  *out = h ^ mix((uint64_t)info->n);
  return 0;
}

/* A map entry and the hash its key contributes, for hashing values in key-hash order. */
typedef struct keyed_entry {
  uint64_t key_hash;
  ffk_table_entry *entry;
} keyed_entry;

/*
 * Sorts by key_hash, stably (entries whose keys hash alike keep their table order): an
 * insertion sort of runs of 8, then bottom-up merges through a scratch buffer. 0, or -1
 * with a MemoryError for the buffer.
 */
static int sort_by_key_hash(keyed_entry *items, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += 8) {
    int64_t hi = lo + 8 < n ? lo + 8 : n;
    for (int64_t i = lo + 1; i < hi; ++i) {
      keyed_entry x = items[i];
      int64_t j = i;
      for (; j > lo && items[j - 1].key_hash > x.key_hash; --j) items[j] = items[j - 1];
      items[j] = x;
    }
  }
  if (n <= 8) return 0;
  keyed_entry *tmp = ffk_mem_alloc((size_t)n * sizeof *tmp);
  if (tmp == NULL) return -1;
  keyed_entry *src = items, *dst = tmp;
  for (int64_t width = 8; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = src[j].key_hash < src[i].key_hash ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    keyed_entry *t = src;
    src = dst;
    dst = t;
  }
  if (src != items) memcpy(items, src, (size_t)n * sizeof *items);
  ffk_mem_free(tmp);
  return 0;
}

static int hash_container(walk *w, const ffk_any *v, uint64_t *out) {
  uint64_t h = mix((uint64_t)v->type_index);
  int rc = 0;
  if (is_sequence(v->type_index)) {
    seq_view s;
    if (seq_open(v->v_obj, &s) != 0) return -1;
    int64_t mark = w->done.size;
    for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
      uint64_t e;
      rc = hash(w, &s.data[i], &e);
      h = mix(h ^ e) + (uint64_t)i; /* order matters */
    }
    h ^= mix((uint64_t)s.size);
    if (close_seq(w, &s, mark) != 0) rc = -1;
  } else {
    map_view m;
    if (map_open(v->v_obj, &m) != 0) return -1;
    int64_t mark = w->done.size;
    keyed_entry stack[16], *items = stack;
    int64_t n = 0, pos = 0;
    if (m.table->size > 16 && (items = ffk_mem_alloc((size_t)m.table->size * sizeof *items)) == NULL) rc = -1;
    for (ffk_table_entry *e; rc == 0 && (e = ffk_table__next(m.table, &pos)) != NULL; ++n) {
      items[n].entry = e;
      items[n].key_hash = e->hash;
      const memo_slot *bound = w->bound_a.size > 0 && ffk_any_is_object(&e->key) && e->key.v_obj != NULL
                                   ? memo_find(&w->bound_a, e->key.v_obj, NULL)
                                   : NULL;
      if (bound != NULL) items[n].key_hash = bound->value; /* a variable or dag node met before: as it hashed then */
    }
    /* Values in key-hash order, not insertion order: variables bind in the order met, so two
       equal maps built in different orders bind alike (tvm_ffi sorts the same way). */
    if (rc == 0) rc = sort_by_key_hash(items, n);
    uint64_t sum = 0;
    for (int64_t i = 0; rc == 0 && i < n; ++i) {
      uint64_t hv;
      rc = hash(w, &items[i].entry->value, &hv);
      sum += mix(items[i].key_hash ^ mix(hv)); /* a sum: the order adds nothing itself */
    }
    if (items != stack) ffk_mem_free(items);
    h ^= mix(sum + (uint64_t)m.table->size);
    if (close_map(w, &m, mark) != 0) rc = -1;
  }
  *out = h;
  return rc;
}

/* What a node that reaches a cycle contributes to its parent: its type alone (see hash). */
static uint64_t cyclic_hash(const ffk_any *v, const type_info *info) {
  return mix(HASH_CYCLE ^ (info != NULL ? info->key_hash : (uint64_t)v->type_index));
}

/*
 * Cycles. Equality takes a pair met again as equal, so a = [1, a] equals b = [1, [1, b]]
 * (both unfold to one infinite value) although a walk meets their cycles at different
 * depths; a hash that mixed in where the cycle closed would tell them apart. So a node
 * that reaches a cycle (one on a cycle or leading to one: a property of the value that
 * equal values share) contributes only its type to its parent; the node the walk starts
 * from gets its own type and what its children contribute (so a = [1, a] and [2, a]
 * still differ). Every other node hashes by its whole contents. w->cyclic says whether
 * the node being hashed has reached a cycle so far; the memo remembers it per node, so a
 * node met again through a second path contributes the same.
 */
static int hash(walk *w, const ffk_any *v, uint64_t *out) {
  const type_info *info = NULL;
  int kind = value_kind(w, v, &info);
  if (kind < 0) return -1;
  if (kind == KIND_KEY) {
    *out = ffk_any_hash(v);
    return 0;
  }
  if (kind == KIND_SHAPE) {
    *out = shape_hash(v);
    return 0;
  }
  /* A TREE node: hash_node's kind steps change nothing for it (see equal). */
  if (FFK_UNLIKELY(kind == KIND_OBJECT && info->skind != FFK_S_KIND_TREE)) return hash_node(w, v, kind, info, out);
  bool may_recur = shareable(v->v_obj); /* else it is neither on the stack nor recorded */
  if (may_recur && on_stack(w, v->v_obj, NULL)) {
    w->cyclic = true;
    *out = cyclic_hash(v, info);
    return 0;
  }
  const memo_slot *done = may_recur ? memo_find(&w->done, v->v_obj, NULL) : NULL; /* a node hashed before */
  if (done != NULL) {
    if (done->cyclic) w->cyclic = true;
    *out = done->cyclic ? cyclic_hash(v, info) : done->value;
    return 0;
  }
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = v->v_obj;
  w->b[w->depth] = NULL;
  ++w->depth;
  bool outer_cyclic = w->cyclic;
  w->cyclic = false;
  int rc = kind == KIND_CONTAINER ? hash_container(w, v, out) : hash_object(w, v->v_obj, info, out);
  bool cyclic = w->cyclic;
  w->cyclic = outer_cyclic || cyclic;
  --w->depth;
  if (rc == 0 && may_recur && ffk_walk__memo_add(&w->done, v->v_obj, NULL, *out, cyclic) != 0) return -1;
  if (rc == 0 && cyclic && w->depth > 0) *out = cyclic_hash(v, info); /* what its parent sees */
  return rc;
}

/* A container or KIND_OBJECT node `v` (with `info`): hash's node part, kinds included (see equal_node). */
static FFK_NOINLINE int hash_node(walk *w, const ffk_any *v, int kind, const type_info *info, uint64_t *out) {
  int sk = kind == KIND_OBJECT ? info->skind : FFK_S_KIND_TREE;
  /* else it is neither on the stack nor recorded; a variable or dag node is always recorded (its order) */
  bool may_recur = sk == FFK_S_KIND_VAR || sk == FFK_S_KIND_DAG || shareable(v->v_obj);
  if (may_recur && on_stack(w, v->v_obj, NULL)) {
    w->cyclic = true;
    *out = cyclic_hash(v, info);
    return 0;
  }
  const memo_slot *done = may_recur ? memo_find(&w->done, v->v_obj, NULL) : NULL; /* a node hashed before */
  if (done != NULL) {
    if (done->cyclic) w->cyclic = true;
    *out = done->cyclic ? cyclic_hash(v, info) : done->value;
    return 0;
  }
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = v->v_obj;
  w->b[w->depth] = NULL;
  ++w->depth;
  bool outer_cyclic = w->cyclic;
  w->cyclic = false;
  int outer = w->region;
  if (sk == FFK_S_KIND_VAR && outer == REGION_SIMPLE) w->region = REGION_NONE; /* its fields are uses */
  int rc = kind == KIND_CONTAINER ? hash_container(w, v, out) : hash_object(w, v->v_obj, info, out);
  w->region = outer;
  if (rc == 0 && sk == FFK_S_KIND_VAR) /* bound: by its order; free: by identity, as equality */
    *out = outer != REGION_NONE ? mix(*out ^ mix(HASH_VAR + w->var_order++))
                                : mix((uint64_t)(uintptr_t)v->v_obj ^ info->key_hash);
  if (rc == 0 && sk == FFK_S_KIND_DAG) *out = mix(*out ^ mix(HASH_DAG + w->dag_order++)); /* its sharing */
  if (rc == 0 && (sk == FFK_S_KIND_VAR || sk == FFK_S_KIND_DAG) && ffk_walk__memo_add(&w->bound_a, v->v_obj, NULL, *out, false) != 0)
    rc = -1; /* what it hashes as when a Map key, as equality looks such a key up as what it is bound to */
  bool cyclic = w->cyclic;
  w->cyclic = outer_cyclic || cyclic;
  --w->depth;
  if (rc == 0 && may_recur && ffk_walk__memo_add(&w->done, v->v_obj, NULL, *out, cyclic) != 0) return -1;
  if (rc == 0 && cyclic && w->depth > 0) *out = cyclic_hash(v, info); /* what its parent sees */
  return rc;
}

int ffk_structural_hash(const ffk_any *v, uint64_t *out) { return ffk_structural_hash_opts(v, 0, out); }

int ffk_structural_hash_opts(const ffk_any *v, uint32_t flags, uint64_t *out) {
  if (v == NULL || out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_hash: the %s is NULL", v == NULL ? "value" : "out");
  *out = 0;
  if (ffk_walk__check_flags(flags) != 0) return -1;
  void *section = ffk_read_section_enter();
  if (section == NULL) return -1;
  walk *w = ffk_walk__new(false, flags, false); /* hashing has no identity shortcut to drop */
  int rc = w == NULL ? -1 : hash(w, v, out);
  if (w != NULL) ffk_walk__free(w);
  ffk_read_section_exit(section);
  return rc;
}

