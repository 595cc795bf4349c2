/*
 * ffikit/array.h - Array: a copy-on-write sequence of ffk_any in one allocation.
 *
 * An Array is never changed while shared: mutators take the handle's address
 * (`ffk_array **a`). When the caller's reference is the only one (strong 1, no weak;
 * ffk_object_is_unique) they change the object in place, moving it if it must grow;
 * otherwise they copy it, change the copy, release the caller's reference to the
 * original and store the copy in *a. Other handles never see a change. On failure *a
 * is unchanged and still valid.
 *
 * Elements are owned values: a stored raw-string or byte-array view becomes a str or
 * bytes value (ffk_any_to_owned); a DLTensor* view cannot be stored (TypeError).
 * Indices are int64; negative indices count from the end like Python's.
 *
 * Conversion to and from the shared List: ffk_list_from_array and ffk_list_to_array
 * (ffikit/list.h); structural equality, hash and deep copy: ffikit/structural.h.
 *
 * Thread safety: any number of threads may read a shared Array. One handle variable
 * must not be mutated by two threads at once (the handle, not the object, is the
 * caller's).
 */
#ifndef FFIKIT_ARRAY_H
#define FFIKIT_ARRAY_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_array {
  ffk_object header; /* FFK_TYPE_ARRAY, or FFK_TYPE_TUPLE (see ffikit/tuple.h) */
  ffk_any *data;     /* the elements, right after this struct in the same block */
  int64_t size;
  int64_t capacity;
} ffk_array;

/*
 * A new Array holding owned copies of the `n` values at `items` (borrowed; items may be
 * NULL when n is 0). Returns a new reference, or NULL with a ValueError (negative n,
 * NULL items), a TypeError (a DLTensor* view) or a MemoryError.
 */
FFK_API ffk_array *ffk_array_new(const ffk_any *items, int64_t n);

/*
 * Like ffk_array_new, but takes over the `n` owned values at `items` (steals them, even
 * on failure: each is then released and reset to None). Views are not allowed (they own
 * nothing): a view is a TypeError.
 */
FFK_API ffk_array *ffk_array_new_steal(ffk_any *items, int64_t n);

/* An empty Array with room for `capacity` elements. New reference, or NULL (ValueError, MemoryError). */
FFK_API ffk_array *ffk_array_with_capacity(int64_t capacity);

/* The number of elements. */
static inline int64_t ffk_array_size(const ffk_array *a) { return a->size; }

/* How many elements fit before the next growth. */
static inline int64_t ffk_array_capacity(const ffk_array *a) { return a->capacity; }

/*
 * The contiguous elements, borrowed from `a`: valid while the caller holds `a` and does
 * not mutate through its handle. No reference counts change.
 */
static inline const ffk_any *ffk_array_items_borrow(const ffk_array *a) { return a->data; }

/*
 * Sets the IndexError for `index` (as the user gave it) of an Array or Tuple of a's size:
 * "Array index 7 out of range for size 3" ("Tuple index ..." for a Tuple), the one text
 * every index bound of an Array raises. Always returns -1. For a binding whose
 * protocol has already bounded an index (CPython's sq_item); others call the check below.
 */
FFK_API int ffk_array_index_error(const ffk_array *a, int64_t index);

/*
 * The Array index rule: `index` (negative counts from the end, as in Python) normalised
 * into [0, size) in *out. Returns 0, or -1 with ffk_array_index_error's IndexError (*out
 * untouched). Inline, so a binding's a[i] pays no call for the rule. `a` must not be NULL.
 */
static inline int ffk_array_check_index(const ffk_array *a, int64_t index, int64_t *out) {
  int64_t i = index < 0 ? index + a->size : index;
  if (FFK_UNLIKELY(i < 0 || i >= a->size)) {
    ffk_array_index_error(a, index);
    return -1; /* a constant, so that callers' compilers see *out is set on 0 */
  }
  *out = i;
  return 0;
}

/*
 * Element `index` (negative counts from the end) as a new reference in *out. Returns 0,
 * or -1 with *out None and an IndexError "Array index 7 out of range for size 3".
 */
FFK_API int ffk_array_get(const ffk_array *a, int64_t index, ffk_any *out);

/* Replaces element `index` with an owned copy of `value` (borrowed). 0, or -1 (IndexError, TypeError, MemoryError). */
FFK_API int ffk_array_set(ffk_array **a, int64_t index, const ffk_any *value);

/* Appends an owned copy of `value`. 0, or -1 (TypeError, MemoryError). */
FFK_API int ffk_array_push(ffk_array **a, const ffk_any *value);

/*
 * ffk_array_push is also inline: in C and C++ a call is a macro for the form below, which
 * appends a plain value (not an object, not a view) to a uniquely owned Array with room in
 * place, as the exported function would, and calls it for everything else (growing,
 * copying a shared Array, retaining an object, every error). The uniqueness test is the
 * acquire load of ffk_object_is_unique. The exported symbol stays (bindings, function
 * pointers, `(ffk_array_push)(a, v)`, or FFK_NO_INLINE_ACCESSORS).
 */
static inline int ffk_array__push_inline(ffk_array **pa, const ffk_any *value) {
  ffk_array *a = pa != NULL ? *pa : NULL;
  if (FFK_LIKELY(a != NULL && a->header.type_index == FFK_TYPE_ARRAY && a->size < a->capacity &&
                 ffk_any__is_plain(value) &&
                 __atomic_load_n(&a->header.refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT)) {
    ffk_any__copy(&a->data[a->size], value);
    ++a->size;
    return 0;
  }
  return (ffk_array_push)(pa, value);
}

#ifndef FFK_NO_INLINE_ACCESSORS
#define ffk_array_push(a, value) ffk_array__push_inline((a), (value))
#endif

/* Appends `value`, taking over the caller's ownership (steals it, even on failure). 0 or -1. */
FFK_API int ffk_array_push_steal(ffk_array **a, ffk_any *value);

/*
 * Removes the element at `index` (negative counts from the end; -1 is the last) and
 * moves it to *out (the caller owns it). 0, or -1 with an IndexError ("pop from empty
 * Array", "Array index 5 out of range for size 2") or a MemoryError (shared: the copy).
 */
FFK_API int ffk_array_pop(ffk_array **a, int64_t index, ffk_any *out);

/*
 * Inserts an owned copy of `value` before `index`, which is clamped to [0, size] as in
 * Python's list.insert (negative counts from the end). 0, or -1 (TypeError, MemoryError).
 */
FFK_API int ffk_array_insert(ffk_array **a, int64_t index, const ffk_any *value);

/*
 * Removes the elements [begin, end). Requires 0 <= begin <= end <= size, else an
 * IndexError naming the range and the size. 0, or -1 (IndexError, MemoryError).
 */
FFK_API int ffk_array_erase(ffk_array **a, int64_t begin, int64_t end);

/* Grows (new elements are None) or shrinks to `n` elements. 0, or -1 (ValueError for n < 0, MemoryError). */
FFK_API int ffk_array_resize(ffk_array **a, int64_t n);

/* Makes room for `capacity` elements (never shrinks; unshares). 0, or -1 (ValueError, MemoryError). */
FFK_API int ffk_array_reserve(ffk_array **a, int64_t capacity);

/* Appends owned copies of `n` values (borrowed; items may alias *a's own elements). 0 or -1. */
FFK_API int ffk_array_extend(ffk_array **a, const ffk_any *items, int64_t n);

/* A new Array with the elements of `a` then `b` (both borrowed). New reference or NULL (MemoryError). */
FFK_API ffk_array *ffk_array_concat(const ffk_array *a, const ffk_array *b);

/*
 * A new Array with the elements a[start:stop:step], with Python's slice rules (negative
 * bounds count from the end and are clamped). Returns a new reference, or NULL with a
 * ValueError (step 0) or a MemoryError.
 */
FFK_API ffk_array *ffk_array_slice(const ffk_array *a, int64_t start, int64_t stop, int64_t step);

/*
 * The first index whose element is key-equal (ffk_any_equal) to `value`: returns 1 and
 * sets *out (which may be NULL), or 0 when absent. Cannot fail.
 */
FFK_API int ffk_array_index(const ffk_array *a, const ffk_any *value, int64_t *out);

/* True when some element is key-equal to `value`. Cannot fail. */
FFK_API bool ffk_array_contains(const ffk_array *a, const ffk_any *value);

/*
 * The first index in [start, stop) whose element is structurally equal
 * (ffk_structural_equal) to `value` (borrowed; any form, views included): what Python's
 * `in` and index(value, start, stop) mean. The bounds follow Python's: negative ones
 * count from the end, both are clamped to [0, size] (0 and INT64_MAX: everything).
 * Returns 1 and sets *out (which may be NULL), 0 when absent, -1 with the error of
 * ffk_structural_equal (NULL `a` or `value`: a ValueError). A value that is neither a
 * container nor an object other than a String or Bytes (an int, float, str, bytes,
 * dtype, device...) is compared in one scan with no walk, as ffk_any_equal (1, True and
 * 1.0 are different); other values walk each element with ffk_structural_equal.
 */
FFK_API int ffk_array_find(const ffk_array *a, const ffk_any *value, int64_t start, int64_t stop, int64_t *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_ARRAY_H */
