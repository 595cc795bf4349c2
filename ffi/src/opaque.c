/*
 * opaque.c - Opaque objects: a foreign handle and the routine that releases it.
 *
 * The handle is released in the DESTROY part of the deleter, so a weak reference that
 * outlives the object never sees a released handle through ffk_opaque_handle (the weak
 * holder cannot reach a destroyed object's fields through the public API anyway).
 */
#include "internal.h"

#include <ffikit/opaque.h>

typedef struct {
  ffk_object header;
  void *handle;
  ffk_opaque_release release;
} opaque;

static void opaque_deleter(void *self, int which) {
  opaque *o = self;
  if (which & FFK_DELETER_DESTROY) {
    ffk_opaque_release release = o->release;
    void *handle = o->handle;
    o->release = NULL;
    o->handle = NULL;
    if (release != NULL) release(handle);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&o->header);
}

ffk_object *ffk_opaque_new(void *handle, ffk_opaque_release release) {
  opaque *o = (opaque *)ffk_object_alloc(FFK_TYPE_OPAQUE, sizeof *o, opaque_deleter);
  if (o == NULL) {
    if (release != NULL) release(handle);
    return NULL;
  }
  o->handle = handle;
  o->release = release;
  return &o->header;
}

static const opaque *as_opaque(const ffk_object *obj) {
  return obj != NULL && obj->type_index == FFK_TYPE_OPAQUE ? (const opaque *)obj : NULL;
}

void *ffk_opaque_handle(const ffk_object *obj) {
  const opaque *o = as_opaque(obj);
  return o ? o->handle : NULL;
}

ffk_opaque_release ffk_opaque_release_fn(const ffk_object *obj) {
  const opaque *o = as_opaque(obj);
  return o ? o->release : NULL;
}
