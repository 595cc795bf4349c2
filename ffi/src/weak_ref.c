/*
 * weak_ref.c - WeakRef objects: an object that holds a weak reference to another.
 *
 * Invariants: `target` is set once, by ffk_weak_ref_new, and never changes; the WeakRef
 * owns one weak unit of it (ffk_weak_retain), given back in the DESTROY part of the
 * deleter. A weak release only ever frees memory (the target's contents went when its
 * strong count reached zero), so dropping a WeakRef never runs another object's
 * destructor and cannot nest deleters.
 */
#include "internal.h"

#include <ffikit/weak_ref.h>

typedef struct {
  ffk_object header;
  ffk_object *target; /* one weak reference, owned */
} weak_ref;

static void weak_ref_deleter(void *self, int which) {
  weak_ref *w = self;
  if (which & FFK_DELETER_DESTROY) {
    ffk_object *target = w->target;
    w->target = NULL;
    ffk_weak_release(target);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&w->header);
}

ffk_object *ffk_weak_ref_new(ffk_object *target) {
  if (target == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make a WeakRef to None: the target must be an object");
    return NULL;
  }
  weak_ref *w = (weak_ref *)ffk_object_alloc(FFK_TYPE_WEAK_REF, sizeof *w, weak_ref_deleter);
  if (w == NULL) return NULL;
  ffk_weak_retain(target);
  w->target = target;
  return &w->header;
}

static const weak_ref *as_weak_ref(const ffk_object *obj) {
  return obj != NULL && obj->type_index == FFK_TYPE_WEAK_REF ? (const weak_ref *)obj : NULL;
}

int ffk_weak_ref_get(const ffk_object *weak, ffk_object **out) {
  *out = NULL;
  const weak_ref *w = as_weak_ref(weak);
  if (w == NULL) {
    ffk_error_set(FFK_ERR_TYPE, "expected a WeakRef, got %s",
                  weak == NULL ? "None" : ffk_type_name(weak->type_index));
    return -1;
  }
  *out = ffk_weak_lock(w->target);
  return *out != NULL;
}

bool ffk_weak_ref_alive(const ffk_object *weak) {
  const weak_ref *w = as_weak_ref(weak);
  return w != NULL && ffk_object_use_count(w->target) != 0;
}

const ffk_object *ffk_weak_ref_target_address(const ffk_object *weak) {
  const weak_ref *w = as_weak_ref(weak);
  return w != NULL ? w->target : NULL;
}
