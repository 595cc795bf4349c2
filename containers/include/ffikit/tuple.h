/*
 * ffikit/tuple.h - Tuple: a fixed-size Array (FFK_TYPE_TUPLE) built in one allocation.
 *
 * A Tuple shares the Array layout and read API (pass it to ffk_array_get,
 * ffk_array_items_borrow, ffk_array_slice ...); its size never changes, so the Array
 * functions that would change it fail with a TypeError. ffk_tuple_set is copy-on-write
 * like ffk_array_set. repr: (1, 2), (1,), ().
 */
#ifndef FFIKIT_TUPLE_H
#define FFIKIT_TUPLE_H

#include <ffikit/array.h>

FFK_EXTERN_C_BEGIN

typedef ffk_array ffk_tuple;

/*
 * A new Tuple of owned copies of the `n` values at `items` (borrowed). New reference, or
 * NULL with a ValueError (negative n, NULL items), a TypeError (a DLTensor* view) or a
 * MemoryError.
 */
FFK_API ffk_tuple *ffk_tuple_new(int64_t n, const ffk_any *items);

/*
 * A new Tuple of `n` (0..64) ffk_any values passed by value: ffk_tuple_pack(2,
 * ffk_any_int(1), ffk_any_float(2.0)). The values are borrowed. Same failures as
 * ffk_tuple_new, and a ValueError for n outside 0..64.
 */
FFK_API ffk_tuple *ffk_tuple_pack(int64_t n, ...);

/* The number of elements. */
static inline int64_t ffk_tuple_size(const ffk_tuple *t) { return t->size; }

/* The elements, borrowed from `t` (valid while it is held and not mutated through this handle). */
static inline const ffk_any *ffk_tuple_items_borrow(const ffk_tuple *t) { return t->data; }

/* Element `index` as a new reference (IndexError "Tuple index 3 out of range for size 2"). */
static inline int ffk_tuple_get(const ffk_tuple *t, int64_t index, ffk_any *out) {
  return ffk_array_get(t, index, out);
}

/*
 * Copy-on-write set: replaces element `index` in *t (in place when unique, else in a
 * copy stored into *t). 0, or -1 with *t unchanged (IndexError, TypeError when *t is
 * not a Tuple, MemoryError).
 */
FFK_API int ffk_tuple_set(ffk_tuple **t, int64_t index, const ffk_any *value);

FFK_EXTERN_C_END

#endif /* FFIKIT_TUPLE_H */
