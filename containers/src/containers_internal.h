/*
 * containers_internal.h - helpers shared by the files of the containers component; not installed.
 */
#ifndef FFIKIT_CONTAINERS_INTERNAL_H
#define FFIKIT_CONTAINERS_INTERNAL_H

#include <ffikit/ffi.h>
#include <ffikit/array.h>
#include <ffikit/tuple.h>

/* An empty Array or Tuple with room for `capacity` elements (ValueError, MemoryError). */
ffk_array *ffk_array__alloc(int32_t type_index, int64_t capacity);

/* ffk_array_new for either type index. */
ffk_array *ffk_array__new_typed(int32_t type_index, const ffk_any *items, int64_t n);

/* The repr slots of Array and Tuple, and of Map. */
int ffk_array__repr(ffk_object *self, ffk_repr_ctx *ctx);
int ffk_map__repr(ffk_object *self, ffk_repr_ctx *ctx);

#endif /* FFIKIT_CONTAINERS_INTERNAL_H */
