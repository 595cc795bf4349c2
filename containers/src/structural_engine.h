/*
 * structural_engine.h - what the two engines of ffikit/structural_visit.h share: the
 * visitor (structural_visit.c) and the mutator (structural_mutate.c). Not installed.
 */
#ifndef FFIKIT_CONTAINERS_STRUCTURAL_ENGINE_H
#define FFIKIT_CONTAINERS_STRUCTURAL_ENGINE_H

#include "structural_internal.h"

#include <ffikit/structural_visit.h>
#include <ffikit/unstable/reflect.h>

#include <string.h>

/*
 * The handle a hook or a registered callback receives (ffi.StructuralVisitor,
 * ffi.StructuralMutator): made on first need, it points at its engine only while the call
 * that made the engine runs; afterwards its methods are a RuntimeError, so a callback
 * that keeps the handle cannot reach freed state.
 */
typedef struct engine_handle {
  ffk_object header;
  void *engine; /* the ffk_visitor or ffk_mutator; NULL once the call has ended */
} engine_handle;

/* A new reference to the handle of `engine` in *slot (made on first need, of type `type`). 0, or -1 (MemoryError). */
int ffk_containers__handle_get(engine_handle **slot, int32_t type, void *engine, ffk_any *out);
/* Ends handle `h` (NULL: none made): its methods fail from now on; drops the reference the engine held. */
void ffk_containers__handle_end(engine_handle *h);
/* The live engine behind handle `h` of `type`, or NULL with a TypeError / RuntimeError naming `api`. */
void *ffk_containers__handle_engine(const char *api, const ffk_any *h, int32_t type);
/* The type index of ffi.StructuralMutator (registered by ffk_containers__define_visit_types). */
int32_t ffk_containers__mutator_type(void);

/* Object type `t`'s hook named `name` (a Function, retained) into *hook, or NULL. 0, or -1 (TypeError). */
int ffk_containers__type_hook(int32_t t, const char *name, bool inherited, ffk_function **hook);

/* The nodes being descended into (the engines' cycle guard). */
typedef struct path_stack {
  const ffk_object **items;
  int32_t size, cap;
} path_stack;

static inline bool on_path(const path_stack *p, const ffk_object *o) {
  for (int32_t i = p->size - 1; i >= 0; --i)
    if (p->items[i] == o) return true;
  return false;
}

/* Doubles p's capacity (the path_push slow path). 0, or -1 (MemoryError). */
int ffk_containers__path_grow(path_stack *p);

static inline int path_push(path_stack *p, const ffk_object *o) {
  if (p->size == p->cap && ffk_containers__path_grow(p) != 0) return -1;
  p->items[p->size++] = o;
  return 0;
}

static inline void path_free(path_stack *p) { ffk_mem_free(p->items); }

/* A pattern region holds for everything below it: entering another kind inside it changes nothing. */
static inline ffk_def_region_kind region_enter(ffk_def_region_kind *cur, ffk_def_region_kind kind) {
  ffk_def_region_kind previous = *cur;
  if (previous != FFK_DEF_REGION_PATTERN) *cur = kind;
  return previous;
}

/* The region a field's flags open; NONE for an ordinary field (which keeps the region it is in). */
static inline bool field_opens_region(uint32_t flags, ffk_def_region_kind *kind) {
  if (flags & FFK_FIELD_S_DEF_SIMPLE) *kind = FFK_DEF_REGION_SIMPLE;
  else if (flags & FFK_FIELD_S_DEF) *kind = FFK_DEF_REGION_PATTERN;
  else return false;
  return true;
}

/* The ffk_s_kind of reflected type `t` into *kind (TREE without the attribute). 0, or -1 (ValueError). */
int ffk_containers__s_kind_of(int32_t t, int *kind);

/* The same value: one object, or the same bits for a value that is not an object. */
static inline bool same_value(const ffk_any *a, const ffk_any *b) {
  if (ffk_any_is_object(a) || ffk_any_is_object(b))
    return a->type_index == b->type_index && a->v_obj == b->v_obj;
  return memcmp(a, b, sizeof(ffk_any)) == 0;
}

#endif /* FFIKIT_CONTAINERS_STRUCTURAL_ENGINE_H */
