/*
 * structural.c - equality, hashing and deep copy that look inside containers.
 *
 * The walks recurse over the five container types and over reflected objects
 * (ffikit/reflect.h); together these are the "nodes" below. Array, Tuple and Map are
 * read in place (they never change while we hold a reference); a List or Dict is first
 * copied into an Array or Map snapshot under its lock, so no lock is held while
 * recursing and another thread may change it meanwhile; a reflected object's fields are
 * read one at a time (read_field), so a concurrent field write is seen whole or not at
 * all. Each walk keeps the stack of nodes it is inside, which is how cycles end, and a
 * depth limit so that deep nesting is an error rather than a stack overflow.
 *
 * Objects of types without reflection are leaves: they compare by identity and are
 * shared by deep copy.
 */
#include "containers_internal.h"

#include <ffikit/dict.h>
#include <ffikit/list.h>
#include <ffikit/reflect.h>
#include <ffikit/structural.h>

#include <stdlib.h>
#include <string.h>

static bool is_sequence(int32_t t) { return t == FFK_TYPE_ARRAY || t == FFK_TYPE_TUPLE || t == FFK_TYPE_LIST; }
static bool is_mapping(int32_t t) { return t == FFK_TYPE_MAP || t == FFK_TYPE_DICT; }
static bool is_container(const ffk_any *v) { return is_sequence(v->type_index) || is_mapping(v->type_index); }
/* A reflected object: walked field by field. An object any's type_index is its object's. */
static bool is_reflected(const ffk_any *v) {
  return v->type_index >= FFK_TYPE_OBJECT_BEGIN && v->v_obj != NULL && ffk_type_is_reflected(v->type_index);
}
/* A value the walks look inside (a container or a reflected object). */
static bool is_node(const ffk_any *v) { return is_container(v) || is_reflected(v); }

/*
 * Reads field `f` of the reflected object `o` for a walk that holds `o`. A read-only
 * field never changes once the object is published (only a constructor filling a fresh
 * object it alone holds writes one), so it is read in place and borrowed (*owned false):
 * a walk over a tree of read-only nodes makes no reference-count traffic. A writable field
 * may be rewritten by another thread at any moment, so it is read with ffk_field_get: a
 * new reference (*owned true, the caller releases it) that keeps the value alive while it
 * is walked. 0, or -1 with ffk_field_get's error.
 */
static int read_field(const ffk_field_info *f, const ffk_object *o, ffk_any *out, bool *owned) {
  *owned = (f->flags & FFK_FIELD_WRITABLE) != 0;
  if (*owned) return ffk_field_get(f, o, out);
  const char *at = (const char *)o + f->offset;
  switch (f->storage) {
    case FFK_FIELD_STORAGE_INT: *out = ffk_any_int(*(const int64_t *)at); break;
    case FFK_FIELD_STORAGE_FLOAT: *out = ffk_any_float(*(const double *)at); break;
    case FFK_FIELD_STORAGE_BOOL: *out = ffk_any_bool(*(const bool *)at); break;
    case FFK_FIELD_STORAGE_OBJECT: { /* a borrowed view; NULL is None */
      ffk_object *x = *(ffk_object *const *)at;
      *out = ffk_any_none();
      if (x != NULL) {
        out->type_index = x->type_index;
        out->v_obj = x;
      }
      break;
    }
    default: *out = *(const ffk_any *)at; break;
  }
  return 0;
}

static void drop_field(ffk_any *v, bool owned) {
  if (owned) ffk_any_release(v);
}

/* ---- Reading a container, through a snapshot for List and Dict. ------------------- */

typedef struct seq_view {
  const ffk_any *data;
  int64_t size;
  ffk_array *snapshot; /* owned, or NULL */
} seq_view;

static int seq_open(ffk_object *o, seq_view *s) {
  const ffk_array *a = (const ffk_array *)o;
  s->snapshot = NULL;
  if (o->type_index == FFK_TYPE_LIST) {
    if ((s->snapshot = ffk_list_to_array((ffk_list *)o)) == NULL) return -1;
    a = s->snapshot;
  }
  s->data = a->data;
  s->size = a->size;
  return 0;
}

static void seq_close(seq_view *s) {
  if (s->snapshot != NULL) ffk_object_release(&s->snapshot->header);
}

typedef struct map_view {
  const ffk_table *table;
  ffk_map *snapshot; /* owned, or NULL */
} map_view;

static int map_open(ffk_object *o, map_view *m) {
  const ffk_map *map = (const ffk_map *)o;
  m->snapshot = NULL;
  if (o->type_index == FFK_TYPE_DICT) {
    if ((m->snapshot = ffk_dict_to_map((ffk_dict *)o)) == NULL) return -1;
    map = m->snapshot;
  }
  m->table = &map->table;
  return 0;
}

static void map_close(map_view *m) {
  if (m->snapshot != NULL) ffk_object_release(&m->snapshot->header);
}

/*
 * What a walk has finished: pairs found equal (b the other container), or containers
 * hashed (b NULL, value the hash). Without it a structure that shares a container many
 * times (a = [b, b], b = [c, c], ...: a DAG) is walked once per path, twice as long per
 * level; with it once per container or pair. A pair found equal while an enclosing pair
 * was assumed equal (a cycle) stays valid: if that assumption fails, the whole walk
 * answers 0. Open addressing with linear probing; a NULL `a` marks a free slot.
 *
 * Only nodes that can be met again are recorded or looked for: one with a single strong
 * reference (the one its parent holds; walks borrow read-only fields and Array elements
 * without adding one) is reached only through that parent, which is itself walked once,
 * and cannot be on the stack when reached (a path back to it would be a second
 * reference). Recording it or scanning the stack for it would only cost time and memory
 * (in a tree of 10,000 nodes, most of the walk's). A snapshot or ffk_field_get adds a
 * reference, so what it reads counts as shareable, which is merely conservative; so is
 * a count another thread raises meanwhile.
 */
typedef struct memo_slot {
  const ffk_object *a, *b;
  uint64_t value;
} memo_slot;

typedef struct walk_memo {
  memo_slot *slots;
  int64_t cap, size; /* cap: 0 or a power of two */
} walk_memo;

/*
 * The fields of one reflected type that equality and hash read (those without
 * FFK_FIELD_COMPARE_OFF), gathered once per walk: a walk over many objects of a few types
 * asks the registry once per type instead of once per field. Field descriptions never
 * change once defined, so a list stays right for the whole walk.
 */
typedef struct field_list {
  int32_t type; /* the type index; 0 (None, never reflected) marks an empty slot */
  int32_t n, cap;
  const ffk_field_info **fields; /* owned by the walk */
  uint64_t key_hash;             /* FNV-1a of the type key (hash_key) */
} field_list;

#define FIELD_LISTS 8 /* direct-mapped by type index */

/* The nodes a walk is inside: pairs for equality, single objects for hash and copy. */
typedef struct walk {
  int depth;
  const ffk_object *a[FFK_STRUCTURAL_MAX_DEPTH];
  const ffk_object *b[FFK_STRUCTURAL_MAX_DEPTH];
  walk_memo done;
  field_list types[FIELD_LISTS];
} walk;

/* True when `o` may be met again in this walk (see walk_memo). */
static bool shareable(const ffk_object *o) { return ffk_object_use_count(o) > 1; }

static uint64_t memo_index(const walk_memo *m, const ffk_object *a, const ffk_object *b) {
  uint64_t h = (uint64_t)(uintptr_t)a * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uintptr_t)b;
  h ^= h >> 29;
  return h & (uint64_t)(m->cap - 1);
}

/* The slot of (a, b), or NULL when the walk has not finished it. */
static const memo_slot *memo_find(const walk_memo *m, const ffk_object *a, const ffk_object *b) {
  if (m->cap == 0) return NULL;
  for (uint64_t i = memo_index(m, a, b);; i = (i + 1) & (uint64_t)(m->cap - 1)) {
    const memo_slot *s = &m->slots[i];
    if (s->a == NULL) return NULL;
    if (s->a == a && s->b == b) return s;
  }
}

static void memo_place(walk_memo *m, memo_slot slot) {
  uint64_t i = memo_index(m, slot.a, slot.b);
  while (m->slots[i].a != NULL) i = (i + 1) & (uint64_t)(m->cap - 1);
  m->slots[i] = slot;
  ++m->size;
}

/* Records (a, b) -> value (not yet recorded). 0, or -1 with a MemoryError. */
static int memo_add(walk_memo *m, const ffk_object *a, const ffk_object *b, uint64_t value) {
  if (2 * (m->size + 1) > m->cap) { /* at most half full */
    walk_memo bigger = {ffk_mem_calloc((size_t)(m->cap ? 2 * m->cap : 64), sizeof(memo_slot)), m->cap ? 2 * m->cap : 64, 0};
    if (bigger.slots == NULL) return -1;
    for (int64_t i = 0; i < m->cap; ++i)
      if (m->slots[i].a != NULL) memo_place(&bigger, m->slots[i]);
    ffk_mem_free(m->slots);
    *m = bigger;
  }
  memo_place(m, (memo_slot){a, b, value});
  return 0;
}

static walk *walk_new(void) {
  walk *w = ffk_mem_alloc(sizeof(walk));
  if (w == NULL) return NULL;
  w->depth = 0;
  w->done = (walk_memo){NULL, 0, 0};
  memset(w->types, 0, sizeof w->types);
  return w;
}

static void walk_free(walk *w) {
  ffk_mem_free(w->done.slots);
  for (int i = 0; i < FIELD_LISTS; ++i) ffk_mem_free(w->types[i].fields);
  ffk_mem_free(w);
}

/* FNV-1a of a type key, so that a hash does not depend on the order types were registered. */
static uint64_t hash_key(const char *key) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (const unsigned char *p = (const unsigned char *)key; *p; ++p) h = (h ^ *p) * UINT64_C(0x100000001b3);
  return h;
}

/* The compared fields of reflected type `t`, from the walk's lists. NULL with an error. */
static const field_list *compared_fields(walk *w, int32_t t) {
  field_list *l = &w->types[(uint32_t)t % FIELD_LISTS];
  if (l->type == t) return l;
  int32_t n = ffk_type_num_fields(t);
  if (n < 0) return NULL;
  if (n > l->cap) {
    const ffk_field_info **more = ffk_mem_alloc((size_t)n * sizeof *more);
    if (more == NULL) return NULL;
    ffk_mem_free(l->fields);
    l->fields = more;
    l->cap = n;
  }
  l->type = 0; /* empty until complete */
  l->n = 0;
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) return NULL;
    if (!(f->flags & FFK_FIELD_COMPARE_OFF)) l->fields[l->n++] = f;
  }
  l->key_hash = hash_key(ffk_type_key(t));
  l->type = t;
  return l;
}

static int too_deep(void) {
  return ffk_error_set(FFK_ERR_RUNTIME, "containers and objects nested deeper than %d levels", FFK_STRUCTURAL_MAX_DEPTH);
}

/* True when (a, b) is already being walked (b NULL: when a is). */
static bool on_stack(const walk *w, const ffk_object *a, const ffk_object *b) {
  for (int i = 0; i < w->depth; ++i)
    if (w->a[i] == a && w->b[i] == b) return true;
  return false;
}

/* ---- Equality. ------------------------------------------------------------------ */

static int equal(walk *w, const ffk_any *x, const ffk_any *y);

static int equal_sequences(walk *w, ffk_object *a, ffk_object *b) {
  seq_view sa, sb;
  if (seq_open(a, &sa) != 0) return -1;
  if (seq_open(b, &sb) != 0) {
    seq_close(&sa);
    return -1;
  }
  int rc = sa.size == sb.size;
  for (int64_t i = 0; rc == 1 && i < sa.size; ++i) rc = equal(w, &sa.data[i], &sb.data[i]);
  seq_close(&sa);
  seq_close(&sb);
  return rc;
}

static int equal_mappings(walk *w, ffk_object *a, ffk_object *b) {
  map_view ma, mb;
  if (map_open(a, &ma) != 0) return -1;
  if (map_open(b, &mb) != 0) {
    map_close(&ma);
    return -1;
  }
  int rc = ma.table->size == mb.table->size;
  int64_t pos = 0;
  for (ffk_table_entry *e; rc == 1 && (e = ffk_table__next(ma.table, &pos)) != NULL;) {
    int64_t at = ffk_table__find(mb.table, &e->key, e->hash);
    rc = at < 0 ? 0 : equal(w, &e->value, &mb.table->entries[at].value);
  }
  map_close(&ma);
  map_close(&mb);
  return rc;
}

/*
 * Two objects of one reflected type: every field without FFK_FIELD_COMPARE_OFF equal,
 * in field order, stopping at the first difference.
 */
static int equal_objects(walk *w, ffk_object *a, ffk_object *b) {
  const field_list *fields = compared_fields(w, a->type_index);
  if (fields == NULL) return -1;
  int rc = 1;
  for (int32_t i = 0; rc == 1 && i < fields->n; ++i) {
    const ffk_field_info *f = fields->fields[i];
    if (!(f->flags & FFK_FIELD_WRITABLE)) { /* read in place (see read_field), the common cases inline */
      const char *pa = (const char *)a + f->offset, *pb = (const char *)b + f->offset;
      if (f->storage == FFK_FIELD_STORAGE_INT) {
        rc = *(const int64_t *)pa == *(const int64_t *)pb;
        continue;
      }
      if (f->storage == FFK_FIELD_STORAGE_OBJECT) {
        const ffk_object *oa = *(ffk_object *const *)pa, *ob = *(ffk_object *const *)pb;
        if (oa == ob) continue; /* one object (or both None) equals itself */
        if (oa == NULL || ob == NULL) {
          rc = 0;
          continue;
        }
      }
    }
    ffk_any fa, fb;
    bool owned_a, owned_b;
    if (read_field(f, a, &fa, &owned_a) != 0) return -1;
    if (read_field(f, b, &fb, &owned_b) != 0) {
      drop_field(&fa, owned_a);
      return -1;
    }
    rc = equal(w, &fa, &fb);
    drop_field(&fa, owned_a);
    drop_field(&fb, owned_b);
  }
  return rc;
}

static int equal(walk *w, const ffk_any *x, const ffk_any *y) {
  if (x->type_index == y->type_index && (x->type_index == FFK_TYPE_INT || x->type_index == FFK_TYPE_NONE))
    return x->type_index == FFK_TYPE_NONE || x->v_int == y->v_int; /* ffk_any_equal's answer, without the call */
  bool cx = is_node(x), cy = is_node(y);
  if (!cx && !cy) return ffk_any_equal(x, y);
  if (cx != cy || x->type_index != y->type_index) return 0; /* another kind or another type */
  ffk_object *a = x->v_obj, *b = y->v_obj;
  if (a == b) return 1;
  bool may_recur = shareable(a) && shareable(b); /* else (a, b) is neither on the stack nor recorded */
  if (may_recur && (on_stack(w, a, b) || memo_find(&w->done, a, b) != NULL)) return 1;
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return too_deep();
  w->a[w->depth] = a;
  w->b[w->depth] = b;
  ++w->depth;
  int rc = is_sequence(x->type_index)  ? equal_sequences(w, a, b)
           : is_mapping(x->type_index) ? equal_mappings(w, a, b)
                                       : equal_objects(w, a, b);
  --w->depth;
  if (rc == 1 && may_recur && memo_add(&w->done, a, b, 0) != 0) return -1;
  return rc;
}

int ffk_structural_equal(const ffk_any *a, const ffk_any *b) {
  walk *w = walk_new();
  if (w == NULL) return -1;
  int rc = equal(w, a, b);
  walk_free(w);
  return rc;
}

/* ---- Hashing. --------------------------------------------------------------------- */

/* splitmix64's finaliser: a fast bijective mix so that combined hashes spread. */
static uint64_t mix(uint64_t h) {
  h ^= h >> 30;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 27;
  h *= UINT64_C(0x94d049bb133111eb);
  return h ^ (h >> 31);
}

#define HASH_CYCLE UINT64_C(0x6379636c65) /* "cycle": what a container met again contributes */

static int hash(walk *w, const ffk_any *v, uint64_t *out);

/* A reflected object: its type key, then its compared fields in order (as equal_objects reads them). */
static int hash_object(walk *w, ffk_object *o, uint64_t *out) {
  int32_t t = o->type_index;
  const field_list *fields = compared_fields(w, t);
  if (fields == NULL) return -1;
  uint64_t h = mix(fields->key_hash);
  for (int32_t i = 0; i < fields->n; ++i) {
    const ffk_field_info *f = fields->fields[i];
    ffk_any value;
    bool owned;
    uint64_t e;
    if (read_field(f, o, &value, &owned) != 0) return -1;
    int rc = hash(w, &value, &e);
    drop_field(&value, owned);
    if (rc != 0) return -1;
    h = mix(h ^ e) + (uint64_t)i; /* field order matters, as for sequences */
  }
  *out = h ^ mix((uint64_t)fields->n);
  return 0;
}

static int hash_container(walk *w, const ffk_any *v, uint64_t *out) {
  uint64_t h = mix((uint64_t)v->type_index);
  int rc = 0;
  if (is_sequence(v->type_index)) {
    seq_view s;
    if (seq_open(v->v_obj, &s) != 0) return -1;
    for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
      uint64_t e;
      rc = hash(w, &s.data[i], &e);
      h = mix(h ^ e) + (uint64_t)i; /* order matters */
    }
    h ^= mix((uint64_t)s.size);
    seq_close(&s);
  } else {
    map_view m;
    if (map_open(v->v_obj, &m) != 0) return -1;
    uint64_t sum = 0;
    int64_t pos = 0;
    for (ffk_table_entry *e; rc == 0 && (e = ffk_table__next(m.table, &pos)) != NULL;) {
      uint64_t hv;
      rc = hash(w, &e->value, &hv);
      sum += mix(e->hash ^ mix(hv)); /* a sum: order does not matter */
    }
    h ^= mix(sum + (uint64_t)m.table->size);
    map_close(&m);
  }
  *out = h;
  return rc;
}

static int hash(walk *w, const ffk_any *v, uint64_t *out) {
  if (!is_node(v)) {
    *out = ffk_any_hash(v);
    return 0;
  }
  bool may_recur = shareable(v->v_obj); /* else it is neither on the stack nor recorded */
  if (may_recur && on_stack(w, v->v_obj, NULL)) {
    *out = HASH_CYCLE;
    return 0;
  }
  /*
   * A node hashed before keeps that hash. In an acyclic value that is the hash it
   * would get again; under a cycle it may differ from a fresh walk's, but equal walks
   * (a value and its deep copy) meet their nodes in the same order and agree.
   */
  const memo_slot *done = may_recur ? memo_find(&w->done, v->v_obj, NULL) : NULL;
  if (done != NULL) {
    *out = done->value;
    return 0;
  }
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return too_deep();
  w->a[w->depth] = v->v_obj;
  w->b[w->depth] = NULL;
  ++w->depth;
  int rc = is_container(v) ? hash_container(w, v, out) : hash_object(w, v->v_obj, out);
  --w->depth;
  if (rc == 0 && may_recur && memo_add(&w->done, v->v_obj, NULL, *out) != 0) return -1;
  return rc;
}

int ffk_structural_hash(const ffk_any *v, uint64_t *out) {
  *out = 0;
  walk *w = walk_new();
  if (w == NULL) return -1;
  int rc = hash(w, v, out);
  walk_free(w);
  return rc;
}

/* ---- Deep copy. ----------------------------------------------------------------- */

/*
 * The memo maps each container already copied (its address, as an opaque-pointer key)
 * to its copy, so shared containers stay shared and cycles close. A List or Dict copy
 * enters the memo empty, before its elements are copied; an Array, Tuple or Map copy can
 * only be built from finished elements, so it enters after them, and a cycle through it
 * (possible only via a List or Dict) is closed by whichever copy was made first.
 */
typedef struct copier {
  ffk_table memo;
  int depth;
} copier;

static int copy(copier *c, const ffk_any *v, ffk_any *out);

static bool memo_get(copier *c, const ffk_object *o, ffk_any *out) {
  ffk_any key = ffk_any_ptr((void *)o);
  int64_t pos = ffk_table__find(&c->memo, &key, ffk_any_hash(&key));
  if (pos < 0) return false;
  *out = c->memo.entries[pos].value;
  ffk_any_retain(out);
  return true;
}

/* Remembers o -> copy (retained by the memo). 0, or -1 with a MemoryError. */
static int memo_put(copier *c, const ffk_object *o, const ffk_any *copy_value) {
  if (ffk_table__reserve(&c->memo, 1) != 0) return -1;
  ffk_any key = ffk_any_ptr((void *)o), value = *copy_value;
  ffk_any_retain(&value);
  ffk_table__append(&c->memo, ffk_any_hash(&key), key, value);
  return 0;
}

static int copy_list(copier *c, ffk_object *o, ffk_any *out) {
  seq_view s;
  if (seq_open(o, &s) != 0) return -1;
  ffk_list *l = ffk_list_with_capacity(s.size);
  int rc = l == NULL ? -1 : 0;
  if (rc == 0) {
    *out = ffk_any_object_steal((ffk_object *)l);
    rc = memo_put(c, o, out);
  }
  for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
    ffk_any e;
    rc = copy(c, &s.data[i], &e);
    if (rc == 0) rc = ffk_list_append_steal(l, &e);
  }
  seq_close(&s);
  return rc;
}

static int copy_dict(copier *c, ffk_object *o, ffk_any *out) {
  map_view m;
  if (map_open(o, &m) != 0) return -1;
  ffk_dict *d = ffk_dict_new();
  int rc = d == NULL ? -1 : 0;
  if (rc == 0) {
    *out = ffk_any_object_steal((ffk_object *)d);
    rc = memo_put(c, o, out);
  }
  int64_t pos = 0;
  for (ffk_table_entry *e; rc == 0 && (e = ffk_table__next(m.table, &pos)) != NULL;) {
    ffk_any k = e->key, v = ffk_any_none();
    ffk_any_retain(&k); /* keys are kept: see copy_values */
    rc = copy(c, &e->value, &v);
    if (rc == 0) rc = ffk_dict_set(d, &k, &v);
    ffk_any_release(&k);
    ffk_any_release(&v);
  }
  map_close(&m);
  return rc;
}

/*
 * Array, Tuple or Map: copies the `n` values at `src` into `dst` first. When every copy
 * is the very same value (no mutable container below), the original is shared instead:
 * it can never change, so sharing it is indistinguishable from copying it.
 * `keys`: src holds a Map's keys and values interleaved. The keys (even positions) are
 * kept, not copied, here and in copy_dict: a container key compares by identity, so a
 * copy of it would be another key and the copy would not equal its source.
 */
static int copy_values(copier *c, const ffk_any *src, int64_t n, bool keys, ffk_any *dst, bool *same) {
  *same = true;
  for (int64_t i = 0; i < n; ++i) {
    if (keys && i % 2 == 0) {
      dst[i] = src[i];
      ffk_any_retain(&dst[i]);
      continue;
    }
    if (copy(c, &src[i], &dst[i]) != 0) {
      for (int64_t j = 0; j < i; ++j) ffk_any_release(&dst[j]);
      return -1;
    }
    *same = *same && memcmp(&src[i], &dst[i], sizeof(ffk_any)) == 0;
  }
  return 0;
}

static void release_values(ffk_any *v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ffk_any_release(&v[i]);
}

/* A new Map, Tuple or Array of type `t` from the copied values (released either way); NULL on error. */
static ffk_object *build(int32_t t, ffk_any *copies, int64_t n) {
  if (t == FFK_TYPE_ARRAY) {
    ffk_array *arr = ffk_array_new_steal(copies, n);
    return arr ? &arr->header : NULL;
  }
  ffk_object *made = NULL;
  if (t == FFK_TYPE_TUPLE) {
    ffk_tuple *tup = ffk_tuple_new(n, copies);
    made = tup ? &tup->header : NULL;
  } else {
    ffk_map *m = ffk_map_new();
    for (int64_t k = 0; m != NULL && k < n; k += 2) { /* keys and values interleaved */
      if (ffk_map_set(&m, &copies[k], &copies[k + 1]) != 0) {
        ffk_object_release(&m->header);
        m = NULL;
      }
    }
    made = m ? &m->header : NULL;
  }
  release_values(copies, n);
  return made;
}

static int copy_immutable(copier *c, ffk_object *o, ffk_any *out) {
  const ffk_array *a = (const ffk_array *)o;
  const ffk_map *m = (const ffk_map *)o;
  bool is_map = o->type_index == FFK_TYPE_MAP;
  int64_t n = is_map ? 2 * m->table.size : a->size;
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(ffk_any);
  /* The values to copy: the Array's own elements, or a Map's keys and values interleaved (borrowed). */
  ffk_any *gathered = is_map ? ffk_mem_alloc(bytes) : NULL;
  const ffk_any *src = is_map ? gathered : a->data;
  ffk_any *copies = ffk_mem_alloc(bytes);
  int rc = copies == NULL || (is_map && gathered == NULL) ? -1 : 0;
  if (rc == 0 && is_map) {
    int64_t pos = 0, k = 0;
    for (ffk_table_entry *e; (e = ffk_table__next(&m->table, &pos)) != NULL; k += 2) {
      gathered[k] = e->key;
      gathered[k + 1] = e->value;
    }
  }
  bool same = false;
  if (rc == 0) rc = copy_values(c, src, n, is_map, copies, &same);
  if (rc == 0 && memo_get(c, o, out)) { /* a cycle below made the copy already */
    release_values(copies, n);
  } else if (rc == 0) {
    ffk_object *made;
    if (same) {
      release_values(copies, n);
      ffk_object_retain(o);
      made = o;
    } else {
      made = build(o->type_index, copies, n);
    }
    rc = made == NULL ? -1 : 0;
    if (rc == 0) {
      *out = ffk_any_object_steal(made);
      rc = memo_put(c, o, out);
    }
  }
  ffk_mem_free(copies);
  ffk_mem_free(gathered);
  return rc;
}

/*
 * A reflected object: a shallow copy (same field values, retained), entered in the memo
 * before its fields are copied so that a cycle back to `o` closes on the copy, then each
 * object or Any field whose deep copy differs replaced through ffk_field_init. The copy
 * is always a new object, even when every field is read-only and nothing below changes:
 * like Python's deepcopy of user objects and tvm_ffi's, the copy is a distinct identity
 * (one a caller may then change by ffk_field_set). An object of a reflected type that
 * reflection did not make (ffk_object_shallow_copy refuses it with a TypeError: its
 * state is more than its fields) is shared, as any other foreign object is.
 * The fields are read from the copy, so they are the values the shallow copy took
 * together even if another thread writes `o` meanwhile.
 */
static int copy_object(copier *c, ffk_object *o, ffk_any *out) {
  ffk_object *dup = ffk_object_shallow_copy(o);
  if (dup == NULL) {
    if (!ffk_error_matches(FFK_ERR_TYPE)) return -1;
    ffk_error_clear();
    ffk_object_retain(o);
    *out = ffk_any_object_steal(o);
    return memo_put(c, o, out);
  }
  *out = ffk_any_object_steal(dup);
  if (memo_put(c, o, out) != 0) return -1;
  int32_t t = o->type_index;
  int32_t n = ffk_type_num_fields(t);
  int rc = n < 0 ? -1 : 0;
  for (int32_t i = 0; rc == 0 && i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) return -1;
    if (f->storage != FFK_FIELD_STORAGE_OBJECT && f->storage != FFK_FIELD_STORAGE_ANY) continue;
    ffk_any value, copied;
    if (ffk_field_get(f, dup, &value) != 0) return -1;
    rc = copy(c, &value, &copied);
    if (rc == 0 && memcmp(&value, &copied, sizeof(ffk_any)) != 0) rc = ffk_field_init(f, dup, &copied);
    ffk_any_release(&copied);
    ffk_any_release(&value);
  }
  return rc;
}

static int copy(copier *c, const ffk_any *v, ffk_any *out) {
  *out = ffk_any_none();
  if (!is_node(v)) return ffk_any_to_owned(v, out);
  if (memo_get(c, v->v_obj, out)) return 0;
  if (c->depth == FFK_STRUCTURAL_MAX_DEPTH) return too_deep();
  ++c->depth;
  int rc;
  switch (v->type_index) {
    case FFK_TYPE_LIST: rc = copy_list(c, v->v_obj, out); break;
    case FFK_TYPE_DICT: rc = copy_dict(c, v->v_obj, out); break;
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_TUPLE:
    case FFK_TYPE_MAP: rc = copy_immutable(c, v->v_obj, out); break;
    default: rc = copy_object(c, v->v_obj, out); break;
  }
  --c->depth;
  if (rc != 0) {
    ffk_any_release(out);
    *out = ffk_any_none();
  }
  return rc;
}

/*
 * After a failed copy: the partial copies in the memo may already refer to one another
 * in a cycle (a List copy that holds itself, a reflected copy whose field leads back to
 * it), which releasing the memo would not free. Each is emptied first: a List or Dict
 * copy cleared, a reflected copy's object and Any fields set back to the source's values
 * (which lie outside the partial copy), so every partial copy dies with the memo. The
 * copy's error is kept; this is best effort (a field that cannot be set back keeps its
 * value), and touches only copies, never the source.
 */
static void unlink_partial(copier *c) {
  ffk_error *err = ffk_error_fetch();
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(&c->memo, &pos)) != NULL;) {
    ffk_object *src = (ffk_object *)e->key.v_ptr, *dup = e->value.v_obj;
    if (dup == src) continue; /* shared, not copied */
    if (dup->type_index == FFK_TYPE_LIST) {
      ffk_list_clear((ffk_list *)dup);
    } else if (dup->type_index == FFK_TYPE_DICT) {
      ffk_dict_clear((ffk_dict *)dup);
    } else if (ffk_type_is_reflected(dup->type_index)) {
      int32_t n = ffk_type_num_fields(dup->type_index);
      for (int32_t i = 0; i < n; ++i) {
        const ffk_field_info *f = ffk_type_field_at(dup->type_index, i);
        if (f == NULL || (f->storage != FFK_FIELD_STORAGE_OBJECT && f->storage != FFK_FIELD_STORAGE_ANY)) continue;
        ffk_any original;
        if (ffk_field_get(f, src, &original) == 0) ffk_field_init(f, dup, &original);
        ffk_any_release(&original);
      }
    }
  }
  ffk_error_clear();
  ffk_error_restore(err);
}

int ffk_deep_copy(const ffk_any *v, ffk_any *out) {
  copier c;
  ffk_table__init(&c.memo);
  c.depth = 0;
  int rc = copy(&c, v, out);
  if (rc != 0) unlink_partial(&c);
  ffk_table__free(&c.memo);
  return rc;
}
