/*
 * structural.c - equality, hashing and first mismatch that look inside containers and
 * reflected objects (ffikit/structural.h); deep copy is structural_copy.c.
 *
 * The walks recurse over "nodes": the five container types, objects of reflected types
 * (ffikit/reflect.h) and objects of registered types with a structural hook (the type
 * attributes FFK_ATTR_S_EQUAL / FFK_ATTR_S_HASH). A reflected object's fields are read
 * one at a time (read_field), so a concurrent field write is seen whole or not at all.
 * Each walk runs inside one read section (ffikit/reflect.h), hooks included: fields are
 * borrowed, never retained, and a value a concurrent writer replaces stays alive until
 * the walk ends, and so does everything the walk reached through it.
 * Each walk keeps the stack of nodes it is inside, which is how cycles end, and a depth
 * limit so that deep nesting is an error rather than a stack overflow.
 *
 * First mismatch is the equality walk with `paths` on: when a comparison fails, each
 * enclosing level pushes its step (index, key or field) for both sides on the way out,
 * so the steps are collected deepest first and only on the failing path; a walk that
 * finds everything equal records nothing. Hooks take part through two Functions the
 * walk hands them (walk_fn), which call back into the same walk.
 *
 * Objects of other types (functions, tensors, opaque handles, types without reflection
 * or hooks) are leaves: they compare by identity. ffikit's built-in types keep their
 * built-in semantics: hooks are consulted for registered types only.
 */
#include "structural_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Reads field `f` of the reflected object `o` (an instance of f's owner: the walk's
 * type_info lists o's own type's fields) for a walk that holds `o`, inside the walk's
 * read section, with ffk_field_peek_unchecked. Every field is borrowed (*owned false): a
 * read-only one never changes once the object is published, and a writable one that
 * another thread replaces stays alive until the section ends. Only a writable field of
 * ffk_any storage (two words, read whole under its lock) comes back as a new reference
 * (*owned true, the caller releases it). So a walk over a tree makes no reference-count
 * traffic and leaves every node's use count as it found it. 0, or -1 with
 * ffk_field_peek's error.
 */
static inline int read_field(const ffk_field_info *f, const ffk_object *o, ffk_any *out, bool *owned) {
  int rc = ffk_field_peek_unchecked(f, o, out);
  *owned = rc == 1;
  return rc < 0 ? -1 : 0;
}

static void drop_field(ffk_any *v, bool owned) {
  if (owned) ffk_any_release(v);
}

/*
 * What a walk has finished: pairs found equal (b the other node), or nodes hashed (b
 * NULL, value the hash). Without it a structure that shares a node many times (a = [b,
 * b], b = [c, c], ...: a DAG) is walked once per path, twice as long per level; with it
 * once per node or pair. A pair found equal while an enclosing pair was assumed equal (a
 * cycle) stays valid: if that assumption fails, the whole walk answers 0. Open
 * addressing with linear probing; a NULL `a` marks a free slot.
 *
 * Only nodes that can be met again are recorded or looked for: one with a single strong
 * reference (the one its parent holds; walks borrow read-only fields and Array elements
 * without adding one) is reached only through that parent, which is itself walked once,
 * and cannot be on the stack when reached (a path back to it would be a second
 * reference). Recording it or scanning the stack for it would only cost time and memory
 * (in a tree of 10,000 nodes, most of the walk's). Fields, writable ones included, are
 * borrowed (read_field), so a tree node reached through a field still counts 1. A
 * snapshot (List, Dict) or a writable ffk_any field read owned adds a reference, so what
 * it reads counts as shareable, which is merely conservative; so is a count another
 * thread raises meanwhile. A node whose last field reference a writer drops while the walk
 * is inside it is kept alive by the walk's read section, and is no longer reachable from
 * the values walked, so it cannot be met again either.
 *
 * The memo and the stack name nodes by address, so no node they name may die and leave
 * its address to another node while the walk runs (another thread may pop a node from a
 * List once the walk's snapshot of that List is released; a node built next could get
 * its address, and the memo would answer for it). The walk holds everything it reached:
 * the caller holds the values walked, an Array, Tuple or Map holds its elements, a
 * field's replaced value waits for the walk's read section, and the walk keeps every
 * List and Dict snapshot under which the memo recorded a node, and every value a hook
 * hands to `equal` or `hash` (walk_keep), until it ends. Retaining each node the memo
 * records instead costs two atomic operations per shared node (bench/README.md,
 * "Structural walks and address reuse").
 */
typedef struct memo_slot {
  const ffk_object *a, *b;
  uint64_t value;
  bool cyclic; /* hash: the node reaches a cycle (see hash) */
} memo_slot;

typedef struct walk_memo {
  memo_slot *slots;
  int64_t cap, size; /* cap: 0 or a power of two */
} walk_memo;

/*
 * What a walk needs to know about one object type, gathered once per walk: the fields
 * equality and hash read (those without FFK_FIELD_COMPARE_OFF; none for a type without
 * reflection), the hash of its key, and its hooks. A walk over many objects of a few
 * types asks the registry once per type instead of once per field. Field descriptions
 * never change once defined, so the list stays right for the whole walk; an entry, once
 * made, stays at its address until the walk ends (a frame iterating its fields may
 * recurse into other types).
 */
typedef struct type_info {
  int32_t type;
  int32_t n;
  const ffk_field_info **fields; /* n entries, in this allocation */
  uint64_t key_hash;             /* FNV-1a of the type key (hash_key) */
  ffk_function *eq_hook;         /* owned, or NULL */
  ffk_function *hash_hook;       /* owned, or NULL */
  bool reflected;                /* described by ffk_type_define */
  bool has_def;                  /* a compared field opens a definition region (FFK_FIELD_S_DEF*) */
  int vkind;                     /* KIND_KEY or KIND_OBJECT: how the walks treat its values (value_kind) */
  int skind;                     /* an ffk_s_kind (FFK_ATTR_S_KIND; TREE without one) */
} type_info;

/* The definition region a walk is in (ffikit/structural.h, "Kinds and variables"). */
enum { REGION_NONE, REGION_SIMPLE, REGION_PATTERN };

#define RECENT_TYPES 8 /* direct-mapped by type index, in front of the full list */

/* One step of a mismatch path, for the two sides. */
typedef struct step_pair {
  int kind[2];
  ffk_any key[2]; /* owned */
} step_pair;

/* The context of a Function handed to hooks: the walk it calls back into, NULL once the walk ended. */
typedef struct walk_fn_ctx {
  struct walk *w;
} walk_fn_ctx;

/* The nodes a walk is inside: pairs for equality, single objects for hash. */
typedef struct walk {
  int depth;
  const ffk_object *a[FFK_STRUCTURAL_MAX_DEPTH];
  const ffk_object *b[FFK_STRUCTURAL_MAX_DEPTH];
  walk_memo done;
  type_info *recent[RECENT_TYPES];
  type_info **infos; /* every type met, owned */
  int32_t ninfos, capinfos;
  bool paths;       /* first mismatch: record the steps of a failure */
  bool hook_failed; /* an `equal` call of the innermost running hook failed (its steps are kept) */
  step_pair *steps; /* deepest first */
  int32_t nsteps, capsteps;
  walk_fn_ctx *fn_ctx[2]; /* [0] equal, [1] hash: made on first use */
  ffk_function *fns[2];
  bool cyclic;       /* hash: the node being hashed has reached a cycle so far */
  ffk_object **kept; /* owned until the walk ends: snapshots and hook arguments (walk_memo) */
  int64_t nkept, capkept;
  int region;         /* REGION_*: where variables met now bind */
  bool look_inside;   /* equality: an object compared with itself is walked (see equal_walk) */
  bool met_binding;   /* equality: a variable or dag node was compared */
  bool took_same;     /* equality: an object was taken as equal to itself without looking inside */
  walk_memo bound_a;  /* equality: variables and dag nodes of `a` bound, (a, NULL) -> b as value;
                         hash: variables and dag nodes hashed, (v, NULL) -> their hash */
  walk_memo bound_b;  /* and the other way; both sides kept alive by walk_keep until the walk ends */
  uint64_t var_order; /* hash: variables met in a definition region so far */
  uint64_t dag_order; /* hash: dag nodes met so far */
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
static int memo_add(walk_memo *m, const ffk_object *a, const ffk_object *b, uint64_t value, bool cyclic) {
  if (2 * (m->size + 1) > m->cap) { /* at most half full */
    walk_memo bigger = {ffk_mem_calloc((size_t)(m->cap ? 2 * m->cap : 64), sizeof(memo_slot)), m->cap ? 2 * m->cap : 64, 0};
    if (bigger.slots == NULL) return -1;
    for (int64_t i = 0; i < m->cap; ++i)
      if (m->slots[i].a != NULL) memo_place(&bigger, m->slots[i]);
    ffk_mem_free(m->slots);
    *m = bigger;
  }
  memo_place(m, (memo_slot){a, b, value, cyclic});
  return 0;
}

static walk *walk_new(bool paths, uint32_t flags, bool look_inside) {
  walk *w = ffk_mem_alloc(sizeof(walk));
  if (w == NULL) return NULL;
  w->depth = 0;
  w->done = (walk_memo){NULL, 0, 0};
  memset(w->recent, 0, sizeof w->recent);
  w->infos = NULL;
  w->ninfos = w->capinfos = 0;
  w->paths = paths;
  w->hook_failed = false;
  w->steps = NULL;
  w->nsteps = w->capsteps = 0;
  w->fn_ctx[0] = w->fn_ctx[1] = NULL;
  w->fns[0] = w->fns[1] = NULL;
  w->cyclic = false;
  w->kept = NULL;
  w->nkept = w->capkept = 0;
  w->region = (flags & FFK_STRUCTURAL_MAP_FREE_VARS) ? REGION_PATTERN : REGION_NONE;
  w->look_inside = look_inside;
  w->met_binding = false;
  w->took_same = false;
  w->bound_a = w->bound_b = (walk_memo){NULL, 0, 0};
  w->var_order = w->dag_order = 0;
  return w;
}

/*
 * Keeps `o` (a new reference, stolen) until the walk ends, so that no address the memo
 * or the stack names is reused meanwhile (walk_memo). 0, or -1 with a MemoryError (`o`
 * released).
 */
static int walk_keep(walk *w, ffk_object *o) {
  if (w->nkept == w->capkept) {
    int64_t cap = w->capkept ? 2 * w->capkept : 16;
    ffk_object **more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) {
      ffk_object_release(o);
      return -1;
    }
    if (w->nkept > 0) memcpy(more, w->kept, (size_t)w->nkept * sizeof *more);
    ffk_mem_free(w->kept);
    w->kept = more;
    w->capkept = cap;
  }
  w->kept[w->nkept++] = o;
  return 0;
}

/*
 * Closes a List or Dict snapshot opened when the memo held `mark` entries: kept until the
 * walk ends when the memo recorded a node meanwhile (one the snapshot may be alone in
 * keeping alive), else released at once (the common leaf List of scalars: its memory
 * goes straight back to the allocator, warm, for the next snapshot). 0, or -1 with a
 * MemoryError.
 */
static int close_seq(walk *w, seq_view *s, int64_t mark) {
  if (s->snapshot == NULL || w->done.size == mark) {
    seq_close(s);
    return 0;
  }
  return walk_keep(w, &s->snapshot->header);
}
static int close_map(walk *w, map_view *m, int64_t mark) {
  if (m->snapshot == NULL || w->done.size == mark) {
    map_close(m);
    return 0;
  }
  return walk_keep(w, &m->snapshot->header);
}

/* Drops the recorded steps past the first `mark`. */
static void steps_truncate(walk *w, int32_t mark) {
  for (; w->nsteps > mark; --w->nsteps) {
    step_pair *s = &w->steps[w->nsteps - 1];
    ffk_any_release(&s->key[0]);
    ffk_any_release(&s->key[1]);
  }
}

static void walk_free(walk *w) {
  ffk_mem_free(w->done.slots);
  ffk_mem_free(w->bound_a.slots);
  ffk_mem_free(w->bound_b.slots);
  for (int64_t i = 0; i < w->nkept; ++i) ffk_object_release(w->kept[i]);
  ffk_mem_free(w->kept);
  for (int32_t i = 0; i < w->ninfos; ++i) {
    ffk_object_release((ffk_object *)w->infos[i]->eq_hook);
    ffk_object_release((ffk_object *)w->infos[i]->hash_hook);
    ffk_mem_free(w->infos[i]);
  }
  ffk_mem_free(w->infos);
  steps_truncate(w, 0);
  ffk_mem_free(w->steps);
  for (int i = 0; i < 2; ++i) {
    if (w->fns[i] == NULL) continue;
    w->fn_ctx[i]->w = NULL; /* a hook that kept the Function gets an error from it from now on */
    ffk_object_release((ffk_object *)w->fns[i]);
  }
  ffk_mem_free(w);
}

/* FNV-1a of a type key, so that a hash does not depend on the order types were registered. */
static uint64_t hash_key(const char *key) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (const unsigned char *p = (const unsigned char *)key; *p; ++p) h = (h ^ *p) * UINT64_C(0x100000001b3);
  return h;
}

/* Looks hook `name` up on type `t` into *out (a new reference or NULL). 0, or -1 with a TypeError or the lookup's error. */
static int find_hook(int32_t t, const char *name, ffk_function **out) {
  *out = NULL;
  if (t < FFK_TYPE_STATIC_END) return 0; /* built-in types keep built-in semantics */
  ffk_any v;
  int found = ffk_type_get_attr(t, name, &v);
  if (found <= 0) return found;
  if (!ffk_any_is_object(&v) || !ffk_type_is_instance(v.type_index, FFK_TYPE_FUNCTION)) {
    ffk_error_set(FFK_ERR_TYPE, "the `%s` attribute of type `%s` is a `%s`, not a Function", name, ffk_type_key(t),
                  ffk_any_type_name(&v));
    ffk_any_release(&v);
    return -1;
  }
  *out = (ffk_function *)v.v_obj;
  return 0;
}

enum { KIND_KEY, KIND_SHAPE, KIND_CONTAINER, KIND_OBJECT }; /* see value_kind */

/* What the walk knows about object type `t`, made on first use (info_of's slow path). NULL with an error. */
static FFK_NOINLINE const type_info *info_make(walk *w, int32_t t) {
  type_info **slot = &w->recent[(uint32_t)t % RECENT_TYPES];
  for (int32_t i = 0; i < w->ninfos; ++i)
    if (w->infos[i]->type == t) return *slot = w->infos[i];
  if (w->ninfos == w->capinfos) {
    int32_t cap = w->capinfos ? 2 * w->capinfos : 8;
    type_info **more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) return NULL;
    if (w->ninfos > 0) memcpy(more, w->infos, (size_t)w->ninfos * sizeof *more);
    ffk_mem_free(w->infos);
    w->infos = more;
    w->capinfos = cap;
  }
  int32_t n = ffk_type_num_fields(t);
  if (n < 0) return NULL;
  type_info *info = ffk_mem_alloc(sizeof(type_info) + (size_t)n * sizeof(const ffk_field_info *));
  if (info == NULL) return NULL;
  info->type = t;
  info->n = 0;
  info->fields = (const ffk_field_info **)(info + 1);
  info->eq_hook = info->hash_hook = NULL;
  info->reflected = ffk_type_is_reflected(t);
  info->has_def = false;
  info->key_hash = hash_key(ffk_type_key(t));
  info->skind = FFK_S_KIND_TREE;
  ffk_any kind;
  int found = ffk_type_get_attr(t, FFK_ATTR_S_KIND, &kind);
  if (found < 0) {
    ffk_mem_free(info);
    return NULL;
  }
  if (found == 1) {
    bool valid = kind.type_index == FFK_TYPE_INT && kind.v_int >= FFK_S_KIND_TREE && kind.v_int <= FFK_S_KIND_SINGLETON;
    if (valid) info->skind = (int)kind.v_int;
    else
      ffk_error_set(FFK_ERR_VALUE, "the `%s` attribute of type `%s` is not a structural kind (an int from 1 to 5)",
                    FFK_ATTR_S_KIND, ffk_type_key(t));
    ffk_any_release(&kind);
    if (!valid) {
      ffk_mem_free(info);
      return NULL;
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) {
      ffk_mem_free(info);
      return NULL;
    }
    if (f->flags & FFK_FIELD_COMPARE_OFF) continue;
    info->fields[info->n++] = f;
    if (f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE)) info->has_def = true;
  }
  if (find_hook(t, FFK_ATTR_S_EQUAL, &info->eq_hook) != 0 || find_hook(t, FFK_ATTR_S_HASH, &info->hash_hook) != 0) {
    ffk_object_release((ffk_object *)info->eq_hook);
    ffk_mem_free(info);
    return NULL;
  }
  info->vkind = !info->reflected && info->eq_hook == NULL && info->hash_hook == NULL && info->skind == FFK_S_KIND_TREE
                    ? KIND_KEY
                    : KIND_OBJECT;
  w->infos[w->ninfos++] = info;
  return *slot = info;
}

/* What the walk knows about object type `t`. NULL with an error. */
static inline const type_info *info_of(walk *w, int32_t t) {
  type_info *hit = w->recent[(uint32_t)t % RECENT_TYPES];
  return hit != NULL && hit->type == t ? hit : info_make(w, t);
}

/*
 * How equality and hash treat a value: the one rule per value kind that both walks, and
 * every fast path in them, follow, so that equal values hash alike in every position (a
 * container element, a Map value, a field of any storage or declared type, Any and
 * Optional fields, a hook's argument). Map and Dict keys are not walked: they follow key
 * semantics (ffk_any_equal / ffk_any_hash) in both walks.
 *
 *   KIND_KEY        key semantics, ffk_any_equal / ffk_any_hash: None, bool, int, float
 *                   (-0.0 = 0.0, NaN = NaN), str and bytes by content, dtype and Device by
 *                   value; tensors, functions, opaque handles and objects of registered
 *                   types with neither reflection nor a hook by identity
 *   KIND_SHAPE      a Shape: by its dimensions
 *   KIND_CONTAINER  Array, Tuple, List, Map, Dict: by type and contents
 *   KIND_OBJECT     an object of a reflected type or of a type with a hook: by its hook
 *                   or its compared fields (equal_objects, hash_object)
 */
/* The kind of a value of a built-in type (t < FFK_TYPE_STATIC_END): no lookup needed. */
static inline int builtin_kind(int32_t t) {
  return is_sequence(t) || is_mapping(t) ? KIND_CONTAINER : t == FFK_TYPE_SHAPE ? KIND_SHAPE : KIND_KEY;
}

/* The kind of `v` (*info its type's for KIND_OBJECT), or -1 with an error. */
static inline int value_kind(walk *w, const ffk_any *v, const type_info **info) {
  int32_t t = v->type_index;
  if (t < FFK_TYPE_STATIC_END || v->v_obj == NULL) return builtin_kind(t);
  const type_info *ti = info_of(w, t);
  if (ti == NULL) return -1;
  if (ti->vkind == KIND_OBJECT) *info = ti;
  return ti->vkind;
}

/* The hash of a Shape: its dimensions. */
static uint64_t shape_hash(const ffk_any *v) {
  const ffk_shape *sh = (const ffk_shape *)v->v_obj;
  return ffk_hash_bytes(sh->data, sh->size * sizeof(int64_t)) ^ UINT64_C(0x5348415045); /* "SHAPE" */
}

int ffk_structural_too_deep(void) {
  return ffk_error_set(FFK_ERR_RUNTIME, "containers and objects nested deeper than %d levels", FFK_STRUCTURAL_MAX_DEPTH);
}

/* True when (a, b) is already being walked (b NULL: when a is). */
static bool on_stack(const walk *w, const ffk_object *a, const ffk_object *b) {
  for (int i = 0; i < w->depth; ++i)
    if (w->a[i] == a && w->b[i] == b) return true;
  return false;
}

/* ---- Mismatch steps. ------------------------------------------------------------ */

/* Records one step for each side (keys borrowed, retained). 0, or -1 with a MemoryError. */
static int push_step(walk *w, int kind_a, const ffk_any *key_a, int kind_b, const ffk_any *key_b) {
  if (w->nsteps == w->capsteps) {
    int32_t cap = w->capsteps ? 2 * w->capsteps : 16;
    step_pair *more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) return -1;
    if (w->nsteps > 0) memcpy(more, w->steps, (size_t)w->nsteps * sizeof *more);
    ffk_mem_free(w->steps);
    w->steps = more;
    w->capsteps = cap;
  }
  step_pair *s = &w->steps[w->nsteps];
  if (ffk_any_to_owned(key_a, &s->key[0]) != 0) return -1;
  if (ffk_any_to_owned(key_b, &s->key[1]) != 0) {
    ffk_any_release(&s->key[0]);
    return -1;
  }
  s->kind[0] = kind_a;
  s->kind[1] = kind_b;
  ++w->nsteps;
  return 0;
}

static int push_index(walk *w, int kind_a, int kind_b, int64_t i) {
  ffk_any key = ffk_any_int(i);
  return push_step(w, kind_a, &key, kind_b, &key);
}

/* An attribute step `.name` on both sides. */
static int push_attr(walk *w, const char *name, size_t size) {
  ffk_string *s = ffk_string_new(name, size);
  if (s == NULL) return -1;
  ffk_any key = ffk_any_object_steal((ffk_object *)s);
  int rc = push_step(w, FFK_ACCESS_ATTR, &key, FFK_ACCESS_ATTR, &key);
  ffk_any_release(&key);
  return rc;
}

/* ---- The Functions hooks receive. ------------------------------------------------- */

static int equal(walk *w, const ffk_any *x, const ffk_any *y);
static int equal_node(walk *w, const ffk_any *x, const ffk_any *y, int kx, const type_info *info);
static int hash(walk *w, const ffk_any *v, uint64_t *out);
static int hash_node(walk *w, const ffk_any *v, int kind, const type_info *info, uint64_t *out);

static walk *walk_of(void *self, const char *what) {
  walk *w = ((walk_fn_ctx *)self)->w;
  if (w == NULL)
    ffk_error_set(FFK_ERR_RUNTIME, "the `%s` Function a structural hook receives is valid only during that hook's call",
                  what);
  return w;
}

/*
 * Keeps an object a hook passes to `equal` or `hash` until the walk ends: the hook may
 * have made it (and what it holds) for the call alone, and the memo may name it.
 */
static int keep_argument(walk *w, const ffk_any *v) {
  if (!ffk_any_is_object(v) || v->v_obj == NULL) return 0;
  ffk_object_retain(v->v_obj);
  return walk_keep(w, v->v_obj);
}

/*
 * A region kind a hook passes to `equal` or `hash` (tvm_ffi's def_region argument: a
 * bool or ffk_def_region_kind's int) as the REGION_* the call walks in: 0 (False) keeps
 * the hook's own region, 1 (True) is a pattern region, 2 a simple one (inside a pattern
 * region the pattern stays, as for fields). 0, or -1 with a TypeError / ValueError naming
 * the value and `what` (the callback's name).
 */
static int hook_region(const walk *w, const ffk_any *v, const char *what, int *region) {
  if (v->type_index != FFK_TYPE_BOOL && v->type_index != FFK_TYPE_INT)
    return ffk_error_set(FFK_ERR_TYPE, "%s: def_region must be a bool or an int (DefRegionKind), not a `%s`", what,
                         ffk_any_type_name(v));
  switch (v->v_int) {
    case 0: *region = w->region; return 0;
    case 1: *region = REGION_PATTERN; return 0;
    case 2: *region = w->region == REGION_PATTERN ? REGION_PATTERN : REGION_SIMPLE; return 0;
    default:
      return ffk_error_set(FFK_ERR_VALUE, "%s: def_region %lld is not a DefRegionKind (0 NONE, 1 DEF_PATTERN, "
                           "2 DEF_SIMPLE)", what, (long long)v->v_int);
  }
}

/* A step name a hook passes (str or None: no step) in *name. 0, or -1 with a TypeError. */
static int hook_step_name(const ffk_any *v, const char *what, const char **name, size_t *size) {
  *name = NULL;
  *size = 0;
  if (v->type_index == FFK_TYPE_NONE || ffk_any_as_str(v, name, size) == 0) return 0;
  ffk_error_clear();
  return ffk_error_set(FFK_ERR_TYPE, "%s: the field name must be a str or None, not a `%s`", what,
                       ffk_any_type_name(v));
}

/*
 * equal(x, y[, attr]) or, tvm_ffi's form, equal(x, y, def_region[, field_name]) -> bool,
 * inside the walk of the hook that received it: a bool or int third argument is a region
 * kind (hook_region), a str or None one a step name.
 */
static int walk_equal_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  walk *w = walk_of(self, "equal");
  if (w == NULL) return -1;
  if (nargs < 2 || nargs > 4)
    return ffk_error_set(FFK_ERR_TYPE, "equal(x, y, attr=None) or equal(x, y, def_region, field_name=None) takes "
                         "2 to 4 arguments, got %d", (int)nargs);
  const char *attr = NULL;
  size_t attr_size = 0;
  int region = w->region;
  if (nargs >= 3) {
    bool kind_given = args[2].type_index == FFK_TYPE_BOOL || args[2].type_index == FFK_TYPE_INT;
    if (!kind_given && nargs == 4)
      return ffk_error_set(FFK_ERR_TYPE, "equal(x, y, def_region, field_name): def_region must be a bool or an int "
                           "(DefRegionKind), not a `%s`", ffk_any_type_name(&args[2]));
    if (kind_given) {
      if (hook_region(w, &args[2], "equal(x, y, def_region, field_name)", &region) != 0) return -1;
      if (nargs == 4 && hook_step_name(&args[3], "equal(x, y, def_region, field_name)", &attr, &attr_size) != 0)
        return -1;
    } else if (hook_step_name(&args[2], "equal(x, y, attr)", &attr, &attr_size) != 0) {
      return -1;
    }
  }
  if (keep_argument(w, &args[0]) != 0 || keep_argument(w, &args[1]) != 0) return -1;
  int32_t mark = w->nsteps;
  int outer = w->region;
  w->region = region;
  int rc = equal(w, &args[0], &args[1]);
  w->region = outer;
  if (rc < 0) return -1;
  if (rc == 0 && w->paths) {
    if (w->hook_failed) {
      steps_truncate(w, mark); /* an earlier call of this hook found the first mismatch */
    } else {
      if (attr != NULL && push_attr(w, attr, attr_size) != 0) return -1;
      w->hook_failed = true;
    }
  }
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static uint64_t mix(uint64_t h);

/*
 * hash(x) -> int, or tvm_ffi's form hash(x, init_hash[, def_region]) -> int: x's hash
 * combined into init_hash, with x walked in the region def_region names (hook_region);
 * inside the walk of the hook that received it.
 */
static int walk_hash_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  walk *w = walk_of(self, "hash");
  if (w == NULL) return -1;
  if (nargs < 1 || nargs > 3)
    return ffk_error_set(FFK_ERR_TYPE, "hash(x) or hash(x, init_hash, def_region=0) takes 1 to 3 arguments, got %d",
                         (int)nargs);
  if (nargs >= 2 && args[1].type_index != FFK_TYPE_INT && args[1].type_index != FFK_TYPE_BOOL)
    return ffk_error_set(FFK_ERR_TYPE, "hash(x, init_hash, def_region): init_hash must be an int, not a `%s`",
                         ffk_any_type_name(&args[1]));
  int region = w->region;
  if (nargs == 3 && hook_region(w, &args[2], "hash(x, init_hash, def_region)", &region) != 0) return -1;
  if (keep_argument(w, &args[0]) != 0) return -1;
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

/* The walk's equal (which 0) or hash (which 1) Function, borrowed. NULL with a MemoryError. */
static ffk_function *walk_fn(walk *w, int which) {
  if (w->fns[which] != NULL) return w->fns[which];
  walk_fn_ctx *c = ffk_mem_alloc(sizeof *c);
  if (c == NULL) return NULL;
  c->w = w;
  ffk_function *f = ffk_function_new(which == 0 ? "structural_equal.equal" : "structural_hash.hash",
                                     which == 0 ? walk_equal_call : walk_hash_call, c, ffk_mem_free);
  if (f == NULL) return NULL;
  w->fn_ctx[which] = c;
  w->fns[which] = f;
  return f;
}

static ffk_any borrowed_object(ffk_object *o) {
  ffk_any v = ffk_any_none();
  v.type_index = o->type_index;
  v.v_obj = o;
  return v;
}

/* ---- Equality. ------------------------------------------------------------------ */

static int equal_sequences(walk *w, ffk_object *a, ffk_object *b) {
  seq_view sa, sb;
  if (seq_open(a, &sa) != 0) return -1;
  if (seq_open(b, &sb) != 0) {
    seq_close(&sa); /* nothing read through it yet */
    return -1;
  }
  int64_t mark = w->done.size;
  int64_t n = sa.size < sb.size ? sa.size : sb.size, i = 0;
  int rc = w->paths || sa.size == sb.size ? 1 : 0; /* without paths a length difference answers at once */
  while (rc == 1 && i < n) {
    rc = equal(w, &sa.data[i], &sb.data[i]);
    if (rc == 1) ++i;
  }
  if (rc == 0 && w->paths && push_index(w, FFK_ACCESS_ARRAY_ITEM, FFK_ACCESS_ARRAY_ITEM, i) != 0) rc = -1;
  if (rc == 1 && sa.size != sb.size) {
    rc = 0;
    bool a_short = sa.size < sb.size;
    if (push_index(w, a_short ? FFK_ACCESS_ARRAY_ITEM_MISSING : FFK_ACCESS_ARRAY_ITEM,
                   a_short ? FFK_ACCESS_ARRAY_ITEM : FFK_ACCESS_ARRAY_ITEM_MISSING, n) != 0)
      rc = -1;
  }
  if (close_seq(w, &sa, mark) != 0) rc = -1;
  if (close_seq(w, &sb, mark) != 0) rc = -1;
  return rc;
}

/*
 * `key` (borrowed) as the other side names it: what it is bound to when it is a bound
 * variable or dag node (`bound` is bound_a or bound_b), else itself; *hash becomes the
 * returned key's hash.
 */
static ffk_any bound_key(const walk_memo *bound, const ffk_any *key, uint64_t *hash) {
  if (bound->size == 0 || !ffk_any_is_object(key) || key->v_obj == NULL) return *key;
  const memo_slot *s = memo_find(bound, key->v_obj, NULL);
  if (s == NULL) return *key;
  ffk_any other = borrowed_object((ffk_object *)(uintptr_t)s->value);
  *hash = ffk_any_hash(&other);
  return other;
}

/* Binds a to b both ways (a variable or dag node pair), keeping both alive. 0, or -1 with a MemoryError. */
static int bind(walk *w, ffk_object *a, ffk_object *b) {
  ffk_object_retain(a);
  if (walk_keep(w, a) != 0) return -1;
  ffk_object_retain(b);
  if (walk_keep(w, b) != 0) return -1;
  if (memo_add(&w->bound_a, a, NULL, (uint64_t)(uintptr_t)b, false) != 0) return -1;
  return memo_add(&w->bound_b, b, NULL, (uint64_t)(uintptr_t)a, false);
}

static int equal_mappings(walk *w, ffk_object *a, ffk_object *b) {
  map_view ma, mb;
  if (map_open(a, &ma) != 0) return -1;
  if (map_open(b, &mb) != 0) {
    map_close(&ma);
    return -1;
  }
  int64_t mark = w->done.size;
  int rc = w->paths || ma.table->size == mb.table->size ? 1 : 0;
  int64_t pos = 0;
  for (ffk_table_entry *e; rc == 1 && (e = ffk_table__next(ma.table, &pos)) != NULL;) {
    uint64_t kh = e->hash;
    ffk_any key = bound_key(&w->bound_a, &e->key, &kh); /* a's key as b names it */
    int64_t at = ffk_table__find(mb.table, &key, kh);
    if (at < 0) {
      rc = 0;
      if (w->paths && push_step(w, FFK_ACCESS_MAP_ITEM, &e->key, FFK_ACCESS_MAP_ITEM_MISSING, &key) != 0) rc = -1;
      break;
    }
    rc = equal(w, &e->value, &mb.table->entries[at].value);
    if (rc == 0 && w->paths && push_step(w, FFK_ACCESS_MAP_ITEM, &e->key, FFK_ACCESS_MAP_ITEM, &key) != 0) rc = -1;
  }
  if (rc == 1 && ma.table->size != mb.table->size) { /* paths only: the first key b has and a lacks */
    pos = 0;
    for (ffk_table_entry *e; rc == 1 && (e = ffk_table__next(mb.table, &pos)) != NULL;) {
      uint64_t kh = e->hash;
      ffk_any key = bound_key(&w->bound_b, &e->key, &kh);
      if (ffk_table__find(ma.table, &key, kh) >= 0) continue;
      rc = push_step(w, FFK_ACCESS_MAP_ITEM_MISSING, &key, FFK_ACCESS_MAP_ITEM, &e->key) != 0 ? -1 : 0;
    }
  }
  if (close_map(w, &ma, mark) != 0) rc = -1;
  if (close_map(w, &mb, mark) != 0) rc = -1;
  return rc;
}

/*
 * Field `f` of two objects of its type: 1, 0 or -1. Fields are borrowed (see read_field).
 * Inlined into its one caller, the field loop of equal_objects: a call per field was a
 * third of a tree walk's instructions.
 */
static inline __attribute__((always_inline)) int equal_field(walk *w, const ffk_field_info *f, const ffk_object *a, const ffk_object *b) {
  ffk_any fa, fb;
  if (f->storage == FFK_FIELD_STORAGE_INT || f->storage == FFK_FIELD_STORAGE_OBJECT) { /* the common cases inline */
    (void)ffk_field_peek_unchecked(f, a, &fa); /* 0, borrowed: these storages cannot fail */
    (void)ffk_field_peek_unchecked(f, b, &fb);
    if (f->storage == FFK_FIELD_STORAGE_INT) return fa.v_int == fb.v_int;
    if (fa.v_obj == fb.v_obj && (fa.v_obj == NULL || !w->look_inside)) { /* one object (or both None) equals itself */
      if (fa.v_obj != NULL && fa.type_index != FFK_TYPE_STRING) w->took_same = true; /* a str compares alike either way */
      return 1;
    }
    if (fa.type_index == FFK_TYPE_NONE || fb.type_index == FFK_TYPE_NONE) return 0;
    if (fa.type_index == FFK_TYPE_STRING && fb.type_index == FFK_TYPE_STRING) { /* ffk_any_equal's answer, inline */
      const ffk_string *sa = (const ffk_string *)fa.v_obj, *sb = (const ffk_string *)fb.v_obj;
      return sa->size == sb->size && memcmp(sa->data, sb->data, sa->size) == 0;
    }
    return equal(w, &fa, &fb);
  }
  bool owned_a, owned_b;
  if (read_field(f, a, &fa, &owned_a) != 0) return -1;
  if (read_field(f, b, &fb, &owned_b) != 0) {
    drop_field(&fa, owned_a);
    return -1;
  }
  int rc;
  if (!w->look_inside && fa.type_index == fb.type_index && fa.type_index >= FFK_TYPE_OBJECT_BEGIN &&
      fa.v_obj == fb.v_obj) {
    w->took_same = true;
    rc = 1; /* one object equals itself */
  } else {
    rc = equal(w, &fa, &fb);
  }
  drop_field(&fa, owned_a);
  drop_field(&fb, owned_b);
  return rc;
}

/*
 * Two objects of one type through its __s_equal__ hook: hook(a, b, equal) -> bool. The
 * steps a failing `equal` call recorded stay when the hook answers False; a True answer
 * drops any, and a False answer without a failing call reports the objects themselves.
 */
static int equal_by_hook(walk *w, ffk_object *a, ffk_object *b, ffk_function *hook) {
  ffk_function *fn = walk_fn(w, 0);
  if (fn == NULL) return -1;
  ffk_any args[3] = {borrowed_object(a), borrowed_object(b), borrowed_object((ffk_object *)fn)};
  int32_t mark = w->nsteps;
  bool outer_failed = w->hook_failed;
  w->hook_failed = false;
  ffk_any result;
  int rc = ffk_function_call(hook, args, 3, &result);
  if (rc == 0) {
    if (result.type_index == FFK_TYPE_BOOL || result.type_index == FFK_TYPE_INT) {
      rc = result.v_int != 0;
    } else {
      rc = ffk_error_set(FFK_ERR_TYPE, "the __s_equal__ hook of `%s` returned a `%s`, not a bool",
                         ffk_type_key(a->type_index), ffk_any_type_name(&result));
    }
    ffk_any_release(&result);
  }
  if (rc != 0 || !w->hook_failed) steps_truncate(w, mark);
  w->hook_failed = outer_failed;
  return rc;
}

/* The region inside definition field `f` met in region `outer`: a pattern region stays one. */
static int field_region(const ffk_field_info *f, int outer) {
  return (f->flags & FFK_FIELD_S_DEF_SIMPLE) && outer != REGION_PATTERN ? REGION_SIMPLE : REGION_PATTERN;
}

/*
 * Two distinct objects of one type: its __s_equal__ hook, or (a reflected type) every
 * field without FFK_FIELD_COMPARE_OFF equal, in field order, stopping at the first
 * difference (whose `.name` step is recorded), or (a plain type with only __s_hash__)
 * identity. hash_object follows the same choice.
 */
static int equal_objects(walk *w, ffk_object *a, ffk_object *b, const type_info *info) {
  if (info->eq_hook != NULL) return equal_by_hook(w, a, b, info->eq_hook); /* info lives as long as the walk */
  if (!info->reflected) return a == b; /* a plain type with only a hash hook or a kind: identity */
  int rc = 1;
  int32_t i = 0;
  int outer = w->region;
  for (; i < info->n; ++i) { /* one call site of equal_field, so that it is inlined */
    const ffk_field_info *f = info->fields[i];
    if (FFK_UNLIKELY(info->has_def)) w->region = f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE) ? field_region(f, outer) : outer;
    rc = equal_field(w, f, a, b);
    if (rc != 1) break;
  }
  w->region = outer;
  if (rc == 0 && w->paths) {
    const char *name = info->fields[i]->name;
    if (push_attr(w, name, strlen(name)) != 0) return -1;
  }
  return rc;
}

static int equal(walk *w, const ffk_any *x, const ffk_any *y) {
  if (x->type_index == y->type_index && (x->type_index == FFK_TYPE_INT || x->type_index == FFK_TYPE_NONE))
    return x->type_index == FFK_TYPE_NONE || x->v_int == y->v_int; /* ffk_any_equal's answer, without the call */
  const type_info *info = NULL, *info_y = NULL;
  int kx = value_kind(w, x, &info);
  if (kx < 0) return -1;
  int ky = y->type_index == x->type_index ? kx : value_kind(w, y, &info_y); /* one type, one kind */
  if (ky < 0) return -1;
  if (kx != ky) return 0; /* values of different kinds never compare equal */
  if (kx == KIND_KEY) return ffk_any_equal(x, y);
  if (kx == KIND_SHAPE) return ffk_shape_equal((const ffk_shape *)x->v_obj, (const ffk_shape *)y->v_obj);
  if (x->type_index != y->type_index) return 0; /* another container or object type */
  /* A TREE node (every container, most objects) needs none of equal_node's kind steps: for
     it they change nothing, and out of line they stay out of a plain tree's way. */
  if (FFK_UNLIKELY(kx == KIND_OBJECT && info->skind != FFK_S_KIND_TREE)) return equal_node(w, x, y, kx, info);
  ffk_object *a = x->v_obj, *b = y->v_obj;
  if (a == b && (!w->look_inside || w->depth == 0)) {
    if (w->depth > 0 && !w->look_inside) w->took_same = true;
    return 1;
  }
  bool may_recur = shareable(a) && shareable(b); /* else (a, b) is neither on the stack nor recorded */
  if (may_recur && (on_stack(w, a, b) || memo_find(&w->done, a, b) != NULL)) return 1;
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = a;
  w->b[w->depth] = b;
  ++w->depth;
  int rc = kx == KIND_OBJECT            ? equal_objects(w, a, b, info)
           : is_sequence(x->type_index) ? equal_sequences(w, a, b)
                                        : equal_mappings(w, a, b);
  --w->depth;
  if (rc == 1 && may_recur && memo_add(&w->done, a, b, 0, false) != 0) return -1;
  return rc;
}

/*
 * Two nodes of one type and kind `kx` (a container or KIND_OBJECT with `info`): their
 * structural kind decides (singleton, const-tree, var, dag), and a variable or dag node
 * binds. Out of line, so that equal's path for TREE nodes stays small.
 */
static FFK_NOINLINE int equal_node(walk *w, const ffk_any *x, const ffk_any *y, int kx, const type_info *info) {
  ffk_object *a = x->v_obj, *b = y->v_obj;
  int sk = kx == KIND_OBJECT ? info->skind : FFK_S_KIND_TREE;
  if (sk == FFK_S_KIND_SINGLETON) return a == b;
  /* An object equals itself; a walk that looks inside (equal_walk) still walks it below the
     top, so that the variables inside bind to themselves (and a later x != y). */
  if (a == b && (!w->look_inside || w->depth == 0 || sk == FFK_S_KIND_CONST_TREE)) {
    if (!w->look_inside && w->depth > 0 && sk != FFK_S_KIND_CONST_TREE) w->took_same = true;
    return 1;
  }
  bool binds = sk == FFK_S_KIND_VAR || sk == FFK_S_KIND_DAG;
  if (binds) { /* bound already: to b and nothing else */
    w->met_binding = true;
    const memo_slot *s = memo_find(&w->bound_a, a, NULL);
    if (s != NULL) return s->value == (uint64_t)(uintptr_t)b;
    if (memo_find(&w->bound_b, b, NULL) != NULL) return 0;
  }
  bool may_recur = shareable(a) && shareable(b); /* else (a, b) is neither on the stack nor recorded */
  if (may_recur && (on_stack(w, a, b) || memo_find(&w->done, a, b) != NULL)) return 1;
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = a;
  w->b[w->depth] = b;
  ++w->depth;
  int outer = w->region;
  if (sk == FFK_S_KIND_VAR && outer == REGION_SIMPLE) w->region = REGION_NONE; /* its fields are uses */
  int rc = kx == KIND_OBJECT            ? equal_objects(w, a, b, info)
           : is_sequence(x->type_index) ? equal_sequences(w, a, b)
                                        : equal_mappings(w, a, b);
  w->region = outer;
  --w->depth;
  if (rc == 1 && sk == FFK_S_KIND_VAR && a != b && outer == REGION_NONE) rc = 0; /* a free variable: itself only */
  if (rc == 1 && binds && bind(w, a, b) != 0) return -1;
  if (rc == 1 && may_recur && memo_add(&w->done, a, b, 0, false) != 0) return -1;
  return rc;
}

/* 0, or -1 with a ValueError naming the unknown option bits. */
static int check_flags(uint32_t flags) {
  if ((flags & ~(uint32_t)FFK_STRUCTURAL_MAP_FREE_VARS) == 0) return 0;
  return ffk_error_set(FFK_ERR_VALUE, "structural equality and hash: unknown option flags 0x%x",
                       (unsigned)(flags & ~(uint32_t)FFK_STRUCTURAL_MAP_FREE_VARS));
}

/* Builds the two paths from the walk's steps (deepest first). 0, or -1 with both NULL. */
static int build_paths(walk *w, ffk_object **lhs, ffk_object **rhs) {
  ffk_object *p[2] = {ffk_access_path_root(), ffk_access_path_root()};
  for (int side = 0; side < 2; ++side) {
    for (int32_t i = w->nsteps - 1; p[side] != NULL && i >= 0; --i) {
      ffk_object *next = ffk_access_path_extend(p[side], w->steps[i].kind[side], &w->steps[i].key[side]);
      ffk_object_release(p[side]);
      p[side] = next;
    }
  }
  if (p[0] == NULL || p[1] == NULL) {
    ffk_object_release(p[0]);
    ffk_object_release(p[1]);
    return -1;
  }
  *lhs = p[0];
  *rhs = p[1];
  return 0;
}

/*
 * The equality walk (with paths into *lhs / *rhs when they are not NULL): 1, 0 or -1.
 *
 * Identity. tvm_ffi looks into an object compared with itself, so that the variables in
 * it bind to themselves: [x, Lambda(x, x)] differs from [x, Lambda(y, y)], since x is
 * bound to x. Doing so always would make every comparison of shared structure walk it
 * (and Python's `l == l` reach the depth limit). So the first walk takes an object as
 * equal to itself at once; if it compared no variable or dag node, bindings played no
 * part in what it walked, and a variable inside a skipped object could only have bound
 * to itself, which nothing met: its answer is the looking walk's. Nor does it matter when
 * the walk took no object as equal to itself without looking inside (w->took_same): the
 * looking walk would then have made every step it made, in the same order, so it would
 * answer alike (two trees built apart, the common case with free variables, are walked
 * once). Otherwise the walk runs again, looking inside; the two agree wherever no
 * variable is met, so the first mismatch is the same place either way.
 */
static int equal_walk(const ffk_any *a, const ffk_any *b, uint32_t flags, ffk_object **lhs, ffk_object **rhs) {
  void *section = ffk_read_section_enter();
  if (section == NULL) return -1;
  bool paths = lhs != NULL;
  walk *w = walk_new(paths, flags, false);
  int rc = w == NULL ? -1 : equal(w, a, b);
  if (rc >= 0 && w->met_binding && w->took_same) {
    walk_free(w);
    w = walk_new(paths, flags, true);
    rc = w == NULL ? -1 : equal(w, a, b);
  }
  if (paths && rc == 0) rc = build_paths(w, lhs, rhs) == 0 ? 0 : -1;
  if (w != NULL) walk_free(w);
  ffk_read_section_exit(section);
  return rc;
}

int ffk_structural_equal(const ffk_any *a, const ffk_any *b) { return ffk_structural_equal_opts(a, b, 0); }

int ffk_structural_equal_opts(const ffk_any *a, const ffk_any *b, uint32_t flags) {
  if (a == NULL || b == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_equal: a value is NULL");
  if (check_flags(flags) != 0) return -1;
  return equal_walk(a, b, flags, NULL, NULL);
}

int ffk_structural_first_mismatch(const ffk_any *a, const ffk_any *b, ffk_object **lhs_path,
                                  ffk_object **rhs_path) {
  return ffk_structural_first_mismatch_opts(a, b, 0, lhs_path, rhs_path);
}

int ffk_structural_first_mismatch_opts(const ffk_any *a, const ffk_any *b, uint32_t flags, ffk_object **lhs_path,
                                       ffk_object **rhs_path) {
  if (lhs_path != NULL) *lhs_path = NULL;
  if (rhs_path != NULL) *rhs_path = NULL;
  if (a == NULL || b == NULL || lhs_path == NULL || rhs_path == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_first_mismatch: the %s is NULL",
                         a == NULL || b == NULL ? "value" : "path out");
  if (check_flags(flags) != 0) return -1;
  int rc = equal_walk(a, b, flags, lhs_path, rhs_path);
  return rc < 0 ? -1 : !rc; /* 1: a mismatch, with its paths */
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

#define HASH_CYCLE UINT64_C(0x6379636c65) /* "cycle": what a node met again contributes */
#define HASH_VAR UINT64_C(0x766172)        /* "var": a bound variable's order */
#define HASH_DAG UINT64_C(0x646167)        /* "dag": a dag node's order */

/* An object through its __s_hash__ hook: hook(v, hash) -> int, mixed with the type key. */
static int hash_by_hook(walk *w, ffk_object *o, const type_info *info, uint64_t *out) {
  ffk_function *fn = walk_fn(w, 1);
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
  if (rc == 0 && may_recur && memo_add(&w->done, v->v_obj, NULL, *out, cyclic) != 0) return -1;
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
  if (rc == 0 && (sk == FFK_S_KIND_VAR || sk == FFK_S_KIND_DAG) && memo_add(&w->bound_a, v->v_obj, NULL, *out, false) != 0)
    rc = -1; /* what it hashes as when a Map key, as equality looks such a key up as what it is bound to */
  bool cyclic = w->cyclic;
  w->cyclic = outer_cyclic || cyclic;
  --w->depth;
  if (rc == 0 && may_recur && memo_add(&w->done, v->v_obj, NULL, *out, cyclic) != 0) return -1;
  if (rc == 0 && cyclic && w->depth > 0) *out = cyclic_hash(v, info); /* what its parent sees */
  return rc;
}

int ffk_structural_hash(const ffk_any *v, uint64_t *out) { return ffk_structural_hash_opts(v, 0, out); }

int ffk_structural_hash_opts(const ffk_any *v, uint32_t flags, uint64_t *out) {
  if (v == NULL || out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_hash: the %s is NULL", v == NULL ? "value" : "out");
  *out = 0;
  if (check_flags(flags) != 0) return -1;
  void *section = ffk_read_section_enter();
  if (section == NULL) return -1;
  walk *w = walk_new(false, flags, false); /* hashing has no identity shortcut to drop */
  int rc = w == NULL ? -1 : hash(w, v, out);
  if (w != NULL) walk_free(w);
  ffk_read_section_exit(section);
  return rc;
}
