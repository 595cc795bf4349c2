/*
 * containers_internal.h - helpers shared by the files of the containers component; not installed.
 */
#ifndef FFIKIT_CONTAINERS_INTERNAL_H
#define FFIKIT_CONTAINERS_INTERNAL_H

#include <ffikit/ffi.h>
#include <ffikit/array.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/tuple.h>

#include "table.h"

struct ffk_map {
  ffk_object header;
  ffk_table table;
};

/* True for the borrowed views (raw C string, byte array, DLTensor*) that own nothing. */
bool ffk_array__is_view(const ffk_any *v);

/*
 * Moves the `n` owned values at `items` into `dst` in one pass, each source reset to
 * None, and sets *moved to how many moved. A view stops it: a TypeError naming `fn` and
 * the view's position, and every value not moved is released and reset to None (the
 * moved ones are dst's). 0, or -1.
 */
int ffk_array__steal_into(ffk_any *dst, ffk_any *items, int64_t n, int64_t *moved, const char *fn);

/*
 * Python's PySlice_AdjustIndices: normalises start/stop against `size` for `step` (not 0,
 * not INT64_MIN) and returns the number of elements of data[start:stop:step].
 */
int64_t ffk_array__adjust_slice(int64_t size, int64_t *start, int64_t *stop, int64_t step);

/*
 * Python's bounds of index(value, start, stop) against `size`: negative ones count from
 * the end, both clamped to [0, size].
 */
void ffk_array__clamp_bounds(int64_t size, int64_t *start, int64_t *stop);

/*
 * The first i in [start, stop) (already clamped) with data[i] structurally equal to the
 * leaf `value` (no container or other object but a String or Bytes: then structural
 * equality is ffk_any_equal, and no foreign code runs): 1 with *out set, 0 when absent,
 * -2 when `value` is not a leaf (the caller walks). Cannot fail; safe under a List lock.
 */
int ffk_array__find_leaf(const ffk_any *data, int64_t start, int64_t stop, const ffk_any *value, int64_t *out);

/* ffk_array__find_leaf over List `l` (not NULL) under its lock, start and stop clamped to its size then (list.c). */
int ffk_list__find_leaf(ffk_list *l, const ffk_any *value, int64_t start, int64_t stop, int64_t *out);

/* A new Array of data[start:stop:step] (Python's rules), elements retained; NULL (ValueError, MemoryError). */
ffk_array *ffk_array__slice_items(const ffk_any *data, int64_t size, int64_t start, int64_t stop, int64_t step);

/* Prints `n` elements as (1, 2) / (1,) / (), or as [1, 2] when list_style. */
int ffk_array__repr_items(ffk_repr_ctx *ctx, const ffk_any *data, int64_t n, bool list_style);

/* A new Map holding the entries of `t` (retained) with room for `extra` more; NULL on MemoryError. */
ffk_map *ffk_map__from_table(const ffk_table *t, int64_t extra);

/* A new Array of the `part` of every entry of `t`, in order; NULL (ValueError for a bad part, MemoryError). */
ffk_array *ffk_map__collect(const ffk_table *t, ffk_map_part part);

/* The checks of the lookups by bytes (ffk_map_get_str, ffk_dict_get_str and the contains
 * forms): 0, or -1 with a ValueError naming `fn` and the NULL `what` handle or data. */
int ffk_map__check_str_args(const char *fn, const void *handle, const char *data, size_t size, const char *what);

/* Prints the entries of `t` as {"a": 1, 3: 2}. */
int ffk_map__repr_table(ffk_repr_ctx *ctx, const ffk_table *t);

/* The repr slots. */
int ffk_array__repr(ffk_object *self, ffk_repr_ctx *ctx);
int ffk_map__repr(ffk_object *self, ffk_repr_ctx *ctx);
int ffk_list__repr(ffk_object *self, ffk_repr_ctx *ctx);
int ffk_dict__repr(ffk_object *self, ffk_repr_ctx *ctx);

/* Sets the converter slots of Array, Tuple, List, Map and Dict (convert.c). */
void ffk_containers__register_converters(void);

/* Defines ffi.EnumState, ffi.Enum, ffi.IntEnum and ffi.StrEnum (enum.c). 0, or -1 with an error. */
int ffk_enum__register(void);

/* Defines ffikit.AccessStep and ffikit.AccessPath (access_path.c). 0, or -1 with an error. */
int ffk_access_path__register(void);

/*
 * Register tvm_ffi's ffi.* global functions of the containers component (globals_containers.c,
 * globals_structural.c) at load. 0, or -1 (MemoryError) with those before the failure registered.
 */
int ffk_containers__register_container_globals(void);
int ffk_containers__register_structural_globals(void);

/*
 * Defines ffi.StructuralKey and registers the ffi.Structural{Walk,Visit,Map,Mutate}*
 * globals (globals_visit.c), after ffk_containers__define_visit_types. 0, or -1 with an
 * error.
 */
int ffk_containers__register_visit_globals(void);

#endif /* FFIKIT_CONTAINERS_INTERNAL_H */
