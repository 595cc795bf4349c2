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
  return ffk_opaque_new_typed(FFK_TYPE_OPAQUE, handle, release);
}

ffk_object *ffk_opaque_new_typed(int32_t type_index, void *handle, ffk_opaque_release release) {
  if (type_index != FFK_TYPE_OPAQUE && !ffk_type_is_instance(type_index, FFK_TYPE_OPAQUE)) {
    if (release != NULL) release(handle);
    ffk_error_set(FFK_ERR_TYPE, "cannot make an Opaque object of type %s (index %d): it is not a subtype of Opaque",
                  ffk_type_name(type_index), (int)type_index);
    return NULL;
  }
  opaque *o = (opaque *)ffk_object_alloc(type_index, sizeof *o, opaque_deleter);
  if (o == NULL) {
    if (release != NULL) release(handle);
    return NULL;
  }
  o->handle = handle;
  o->release = release;
  return &o->header;
}

static const opaque *as_opaque(const ffk_object *obj) {
  if (obj == NULL) return NULL;
  if (obj->type_index == FFK_TYPE_OPAQUE) return (const opaque *)obj;
  /* Run-time subtypes only: no static type derives from Opaque. */
  return obj->type_index >= FFK_TYPE_STATIC_END && ffk_type_is_instance(obj->type_index, FFK_TYPE_OPAQUE)
             ? (const opaque *)obj
             : NULL;
}

void *ffk_opaque_handle(const ffk_object *obj) {
  const opaque *o = as_opaque(obj);
  return o ? o->handle : NULL;
}

ffk_opaque_release ffk_opaque_release_fn(const ffk_object *obj) {
  const opaque *o = as_opaque(obj);
  return o ? o->release : NULL;
}
