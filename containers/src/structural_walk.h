/*
 * structural_walk.h - the walk that structural equality (structural.c) and hashing
 * (structural_hash.c) share: its state, the memo of finished nodes, what it knows per
 * type, and the helpers on their hot paths (inline here, so that splitting the two walks
 * into files costs them no calls). Not installed.
 */
#ifndef FFIKIT_CONTAINERS_STRUCTURAL_WALK_H
#define FFIKIT_CONTAINERS_STRUCTURAL_WALK_H

#include "structural_internal.h"

#include <ffikit/unstable/reflect.h>

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

static inline void drop_field(ffk_any *v, bool owned) {
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
static inline bool shareable(const ffk_object *o) { return ffk_object_use_count(o) > 1; }

static inline uint64_t memo_index(const walk_memo *m, const ffk_object *a, const ffk_object *b) {
  uint64_t h = (uint64_t)(uintptr_t)a * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uintptr_t)b;
  h ^= h >> 29;
  return h & (uint64_t)(m->cap - 1);
}

/* The slot of (a, b), or NULL when the walk has not finished it. */
static inline const memo_slot *memo_find(const walk_memo *m, const ffk_object *a, const ffk_object *b) {
  if (m->cap == 0) return NULL;
  for (uint64_t i = memo_index(m, a, b);; i = (i + 1) & (uint64_t)(m->cap - 1)) {
    const memo_slot *s = &m->slots[i];
    if (s->a == NULL) return NULL;
    if (s->a == a && s->b == b) return s;
  }
}

enum { KIND_KEY, KIND_SHAPE, KIND_CONTAINER, KIND_OBJECT }; /* see value_kind */

/* What the walk knows about object type `t`, made on first use (info_of's slow path). NULL with an error. */
const type_info *ffk_walk__info_make(walk *w, int32_t t);

/* What the walk knows about object type `t`. NULL with an error. */
static inline const type_info *info_of(walk *w, int32_t t) {
  type_info *hit = w->recent[(uint32_t)t % RECENT_TYPES];
  return hit != NULL && hit->type == t ? hit : ffk_walk__info_make(w, t);
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

/* True when (a, b) is already being walked (b NULL: when a is). */
static inline bool on_stack(const walk *w, const ffk_object *a, const ffk_object *b) {
  for (int i = 0; i < w->depth; ++i)
    if (w->a[i] == a && w->b[i] == b) return true;
  return false;
}

/* The region inside definition field `f` met in region `outer`: a pattern region stays one. */
static inline int field_region(const ffk_field_info *f, int outer) {
  return (f->flags & FFK_FIELD_S_DEF_SIMPLE) && outer != REGION_PATTERN ? REGION_SIMPLE : REGION_PATTERN;
}

static inline ffk_any borrowed_object(ffk_object *o) {
  ffk_any v = ffk_any_none();
  v.type_index = o->type_index;
  v.v_obj = o;
  return v;
}

/* splitmix64's finaliser: a fast bijective mix so that combined hashes spread. */
static inline uint64_t mix(uint64_t h) {
  h ^= h >> 30;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 27;
  h *= UINT64_C(0x94d049bb133111eb);
  return h ^ (h >> 31);
}

/* Records (a, b) -> value (not yet recorded). 0, or -1 with a MemoryError. */
int ffk_walk__memo_add(walk_memo *m, const ffk_object *a, const ffk_object *b, uint64_t value, bool cyclic);

/* A new walk (first mismatch steps when `paths`; FFK_STRUCTURAL_* `flags`), or NULL with a MemoryError. */
walk *ffk_walk__new(bool paths, uint32_t flags, bool look_inside);
void ffk_walk__free(walk *w);

/*
 * Keeps `o` (a new reference, stolen) until the walk ends, so that no address the memo
 * or the stack names is reused meanwhile (walk_memo). 0, or -1 with a MemoryError (`o`
 * released).
 */
int ffk_walk__keep(walk *w, ffk_object *o);

/*
 * Closes a List or Dict snapshot opened when the memo held `mark` entries: kept until the
 * walk ends when the memo recorded a node meanwhile (one the snapshot may be alone in
 * keeping alive), else released at once (the common leaf List of scalars: its memory
 * goes straight back to the allocator, warm, for the next snapshot). 0, or -1 with a
 * MemoryError.
 */
static inline int close_seq(walk *w, seq_view *s, int64_t mark) {
  if (s->snapshot == NULL || w->done.size == mark) {
    seq_close(s);
    return 0;
  }
  return ffk_walk__keep(w, &s->snapshot->header);
}
static inline int close_map(walk *w, map_view *m, int64_t mark) {
  if (m->snapshot == NULL || w->done.size == mark) {
    map_close(m);
    return 0;
  }
  return ffk_walk__keep(w, &m->snapshot->header);
}

/* The walk's equal (which 0) or hash (which 1) Function, borrowed, made on first use with
 * `call` (each walk passes its own, so that structural.c calls no hash code). NULL with a
 * MemoryError. */
ffk_function *ffk_walk__fn(walk *w, int which, ffk_safe_call call);

/* The walk behind the context `self` of a hook's Function, or NULL with a RuntimeError
 * naming `what` when that walk has ended. */
walk *ffk_walk__of(void *self, const char *what);

/* Keeps an object a hook passes to `equal` or `hash` until the walk ends (v borrowed).
 * 0, or -1 with a MemoryError. */
int ffk_walk__keep_argument(walk *w, const ffk_any *v);

/* The REGION_* a def_region argument `v` of a hook's call names (0 keeps w's region), in
 * *region. 0, or -1 with a TypeError / ValueError naming the value and `what`. */
int ffk_walk__hook_region(const walk *w, const ffk_any *v, const char *what, int *region);

/* 0, or -1 with a ValueError naming the unknown option bits. */
int ffk_walk__check_flags(uint32_t flags);

#endif /* FFIKIT_CONTAINERS_STRUCTURAL_WALK_H */
