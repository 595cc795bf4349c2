/*
 * structural_internal.h - what the structural walks share (structural.c: equality, hash
 * and first mismatch; structural_copy.c: deep copy); not installed.
 *
 * The walks recurse over "nodes": the five container types and objects of reflected
 * types. Array, Tuple and Map are read in place (they never change while a reference is
 * held); a List or Dict is read through an Array or Map snapshot taken under its lock,
 * so no lock is held while recursing.
 */
#ifndef FFIKIT_CONTAINERS_STRUCTURAL_INTERNAL_H
#define FFIKIT_CONTAINERS_STRUCTURAL_INTERNAL_H

#include "containers_internal.h"

#include <ffikit/dict.h>
#include <ffikit/list.h>
#include <ffikit/reflect.h>
#include <ffikit/structural.h>
#include <ffikit/structural_visit.h>

static inline bool is_sequence(int32_t t) { return t == FFK_TYPE_ARRAY || t == FFK_TYPE_TUPLE || t == FFK_TYPE_LIST; }
static inline bool is_mapping(int32_t t) { return t == FFK_TYPE_MAP || t == FFK_TYPE_DICT; }
static inline bool is_container(const ffk_any *v) { return is_sequence(v->type_index) || is_mapping(v->type_index); }
/* A reflected object: walked field by field. An object any's type_index is its object's. */
static inline bool is_reflected(const ffk_any *v) {
  return v->type_index >= FFK_TYPE_OBJECT_BEGIN && v->v_obj != NULL && ffk_type_is_reflected(v->type_index);
}
/* A value the walks look inside (a container or a reflected object). */
static inline bool is_node(const ffk_any *v) { return is_container(v) || is_reflected(v); }

/*
 * ffk_object_use_count(o) inline, for the walks' per-node "may it be met again" tests:
 * the strong count is the low 32 bits of the atomic refcount word (ffikit/object.h's ABI
 * layout). A snapshot, as ffk_object_use_count's. `o` not NULL.
 */
static inline uint32_t use_count_of(const ffk_object *o) {
  return (uint32_t)(__atomic_load_n(&o->refcount, __ATOMIC_RELAXED) & UINT32_MAX);
}

/* ---- Reading a container, through a snapshot for List and Dict. ------------------- */

typedef struct seq_view {
  const ffk_any *data;
  int64_t size;
  ffk_array *snapshot; /* owned, or NULL */
} seq_view;

static inline int seq_open(ffk_object *o, seq_view *s) {
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

static inline void seq_close(seq_view *s) {
  if (s->snapshot != NULL) ffk_object_release(&s->snapshot->header);
}

typedef struct map_view {
  const ffk_table *table;
  ffk_map *snapshot; /* owned, or NULL */
} map_view;

static inline int map_open(ffk_object *o, map_view *m) {
  const ffk_map *map = (const ffk_map *)o;
  m->snapshot = NULL;
  if (o->type_index == FFK_TYPE_DICT) {
    if ((m->snapshot = ffk_dict_to_map((ffk_dict *)o)) == NULL) return -1;
    map = m->snapshot;
  }
  m->table = &map->table;
  return 0;
}

static inline void map_close(map_view *m) {
  if (m->snapshot != NULL) ffk_object_release(&m->snapshot->header);
}

/* ---- The visit engines' handles and interrupts (structural_visit.c), for globals_visit.c ---- */

struct ffk_visitor;
struct ffk_mutator;

/*
 * Defines ffi.VisitInterrupt (one Any field, `value`), ffi.StructuralVisitor and
 * ffi.StructuralMutator (the handles hooks and callbacks receive). 0, or -1 with an error.
 */
int ffk_containers__define_visit_types(void);

/* A new ffi.VisitInterrupt with `payload` (NULL: None) into *out. 0, or -1 (MemoryError). */
int ffk_containers__make_interrupt(const ffk_any *payload, ffk_any *out);
bool ffk_containers__is_interrupt(const ffk_any *v);

/*
 * Which values a walk's callback can act on (ffk_containers__walk): the walk calls it for
 * those only, as if it had returned FFK_WALK_ADVANCE for the others, so a callback that
 * answers ADVANCE doing nothing for a value may be spared the call. `plain_values`: a value
 * that is not an object (an int, an inline str...) may be acted on; `object_wanted(ctx,
 * t)` (ctx the walk's): an object of type t may be. Its answers are kept per type (a
 * type may be asked again), so they must depend on t alone; it cannot fail.
 */
typedef struct ffk_walk_filter {
  bool plain_values;
  bool (*object_wanted)(void *ctx, int32_t type);
} ffk_walk_filter;

/*
 * ffk_structural_walk / ffk_structural_visit, with *live the running visitor while the
 * walk runs (when not NULL) and *interrupt the VisitInterrupt that stopped it (a new
 * reference, when the result is 1; else None). `filter` (borrowed for the call; NULL: every
 * value) spares `fn` the values it cannot act on.
 */
int ffk_containers__walk(const ffk_any *root, ffk_walk_order order, ffk_walk_fn fn, void *ctx,
                         const ffk_walk_filter *filter, struct ffk_visitor **live, ffk_any *interrupt);
int ffk_containers__visit(const ffk_any *root, ffk_visit_fn fn, void *ctx, ffk_any *interrupt);

/* Keeps `interrupt` (retained) as what stopped the visit; returns 1. */
int ffk_containers__visitor_stop(struct ffk_visitor *v, const ffk_any *interrupt);
/* What stopped the visit (a new reference): the kept one, or a new VisitInterrupt(None) kept. 0, or -1. */
int ffk_containers__visitor_interrupt(struct ffk_visitor *v, ffk_any *out);

/* A new reference to the engine's handle (made on first need). 0, or -1 (MemoryError). */
int ffk_containers__visitor_handle(struct ffk_visitor *v, ffk_any *out);
int ffk_containers__mutator_handle(struct ffk_mutator *m, ffk_any *out);
/* The engine behind a handle argument, or NULL with a TypeError (not one) or RuntimeError (ended). */
struct ffk_visitor *ffk_containers__handle_visitor(const char *api, const ffk_any *handle);
struct ffk_mutator *ffk_containers__handle_mutator(const char *api, const ffk_any *handle);

#endif /* FFIKIT_CONTAINERS_STRUCTURAL_INTERNAL_H */
