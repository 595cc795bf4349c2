/*
 * containers_internal.h - helpers shared by the files of the containers component; not installed.
 */
#ifndef FFIKIT_CONTAINERS_INTERNAL_H
#define FFIKIT_CONTAINERS_INTERNAL_H

#include <ffikit/ffi.h>
#include <ffikit/array.h>
#include <ffikit/tuple.h>

/* The repr slots of Array and Tuple, and of Map. */
int ffk_array__repr(ffk_object *self, ffk_repr_ctx *ctx);
int ffk_map__repr(ffk_object *self, ffk_repr_ctx *ctx);

#endif /* FFIKIT_CONTAINERS_INTERNAL_H */
