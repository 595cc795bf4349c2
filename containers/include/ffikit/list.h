/*
 * ffikit/list.h - List: a shared, mutable sequence of ffk_any.
 *
 * Unlike Array, a List is changed in place: every handle to it sees every change, and
 * mutators take the handle itself (`ffk_list *`). Each single operation is atomic with
 * respect to every other operation on the same List, from any thread (a small
 * per-object lock guards it; see the thread-safety notes below). Getters return new
 * references, never borrowed pointers into the List, because another thread may change
 * it at any moment; ffk_list_to_array gives a consistent snapshot to read at leisure.
 *
 * Elements are owned values: a stored raw-string or byte-array view becomes a str or
 * bytes value (ffk_any_to_owned); a DLTensor* view cannot be stored (TypeError).
 * Indices are int64; negative indices count from the end like Python's.
 *
 * Every function taking a List fails with a ValueError when the handle is NULL, except
 * ffk_list_size, which cannot fail and requires a valid handle.
 *
 * Thread safety: no lock is held while foreign code runs: values removed or replaced
 * are released after the List is consistent and unlocked, so a deleter may use the
 * List again. Operations on two containers (extend_from, set_slice_from with another
 * List) lock both in address order and cannot deadlock; passing the List itself is
 * allowed and reads it as it was before the operation.
 *
 * Slices follow Python's list: ffk_list_slice reads l[start:stop:step],
 * ffk_list_set_slice_step assigns to it and ffk_list_erase_slice deletes it, each in one
 * atomic step, so a reader never sees half of an extended slice assigned or deleted.
 */
#ifndef FFIKIT_LIST_H
#define FFIKIT_LIST_H

#include <ffikit/array.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_list ffk_list;

/* A new empty List. New reference, or NULL with a MemoryError. */
FFK_API ffk_list *ffk_list_new(void);

/* A new empty List with room for `capacity` elements. New reference, or NULL (ValueError, MemoryError). */
FFK_API ffk_list *ffk_list_with_capacity(int64_t capacity);

/*
 * A new List holding owned copies of the `n` values at `items` (borrowed; may be NULL
 * when n is 0). New reference, or NULL with a ValueError, TypeError or MemoryError.
 */
FFK_API ffk_list *ffk_list_from_items(const ffk_any *items, int64_t n);

/*
 * Like ffk_list_from_items, but takes over the `n` owned values at `items` (steals them,
 * even on failure: each is then released and reset to None; the buffer itself stays the
 * caller's), so building a List from converted values copies them once. Views own
 * nothing and are refused. New reference, or NULL with a ValueError (negative n, NULL
 * items), a TypeError (a view, named with its position) or a MemoryError.
 */
FFK_API ffk_list *ffk_list_from_items_steal(ffk_any *items, int64_t n);

/* A new List with the elements of an Array or Tuple (borrowed). New reference or NULL (ValueError, MemoryError). */
FFK_API ffk_list *ffk_list_from_array(const ffk_array *a);

/* A snapshot of the elements as a new Array. New reference, or NULL (ValueError, MemoryError). */
FFK_API ffk_array *ffk_list_to_array(ffk_list *l);

/* The number of elements at the moment of the call. Cannot fail; `l` must be valid. */
FFK_API int64_t ffk_list_size(ffk_list *l);

/*
 * Element `index` (negative counts from the end) as a new reference in *out. 0, or -1
 * with *out None and an IndexError "List index 7 out of range for size 3".
 */
FFK_API int ffk_list_get(ffk_list *l, int64_t index, ffk_any *out);

/* Replaces element `index` with an owned copy of `value`. 0, or -1 (IndexError, TypeError, MemoryError). */
FFK_API int ffk_list_set(ffk_list *l, int64_t index, const ffk_any *value);

/* Appends an owned copy of `value`. 0, or -1 (TypeError, MemoryError; the List unchanged). */
FFK_API int ffk_list_append(ffk_list *l, const ffk_any *value);

/* Appends `value`, taking over the caller's ownership (steals it, even on failure). 0 or -1. */
FFK_API int ffk_list_append_steal(ffk_list *l, ffk_any *value);

/*
 * Inserts an owned copy of `value` before `index`, clamped to [0, size] as in Python's
 * list.insert (negative counts from the end). 0, or -1 (TypeError, MemoryError).
 */
FFK_API int ffk_list_insert(ffk_list *l, int64_t index, const ffk_any *value);

/*
 * Removes the element at `index` (-1 is the last) and moves it to *out (the caller owns
 * it). 0, or -1 with *out None and an IndexError ("pop from empty List", "List index 5
 * out of range for size 2").
 */
FFK_API int ffk_list_pop(ffk_list *l, int64_t index, ffk_any *out);

/* Removes the element at `index` (negative counts from the end). 0, or -1 (IndexError). */
FFK_API int ffk_list_erase_at(ffk_list *l, int64_t index);

/*
 * Removes the elements [begin, end). Requires 0 <= begin <= end <= size at the moment
 * of the call, else an IndexError naming the range and the size. 0, or -1 (IndexError,
 * MemoryError for a range of more than 64 elements whose holding buffer cannot be made).
 */
FFK_API int ffk_list_erase(ffk_list *l, int64_t begin, int64_t end);

/*
 * Replaces l[start:stop] with owned copies of the `n` values at `items`, with Python's
 * rules for a slice assignment of step 1 (negative bounds count from the end, bounds are
 * clamped, stop < start means an empty slice at start). 0, or -1 with the List unchanged
 * (ValueError, TypeError, MemoryError).
 */
FFK_API int ffk_list_set_slice(ffk_list *l, int64_t start, int64_t stop, const ffk_any *items, int64_t n);

/*
 * Like ffk_list_set_slice with the elements of `seq`, an Array, Tuple or List (borrowed;
 * may be `l` itself, read as it was before the assignment). TypeError for other objects.
 */
FFK_API int ffk_list_set_slice_from(ffk_list *l, int64_t start, int64_t stop, const ffk_object *seq);

/*
 * Replaces l[start:stop:step] with owned copies of the `n` values at `items` (borrowed;
 * may be NULL when n is 0), with the rules of Python's list slice assignment, in one
 * atomic step: the bounds are normalised against the size at that moment (negative
 * counts from the end; out-of-range bounds are clamped); with step 1 the slice may
 * change length (ffk_list_set_slice); with any other step `n` must equal the number of
 * elements the slice selects. 0, or -1 with the List unchanged: ValueError ("slice step
 * cannot be zero", "attempt to assign sequence of size 3 to extended slice of size 2",
 * a NULL handle, negative n or NULL items), TypeError (a DLTensor* view), MemoryError.
 */
FFK_API int ffk_list_set_slice_step(ffk_list *l, int64_t start, int64_t stop, int64_t step, const ffk_any *items,
                                    int64_t n);

/*
 * Like ffk_list_set_slice_step with the elements of `seq`, an Array, Tuple or List
 * (borrowed; may be `l` itself, read as it was before the assignment: `l[::-1] = l`
 * reverses it). TypeError for other objects.
 */
FFK_API int ffk_list_set_slice_step_from(ffk_list *l, int64_t start, int64_t stop, int64_t step,
                                         const ffk_object *seq);

/*
 * Removes the elements l[start:stop:step] with the rules of Python's `del l[start:stop:step]`
 * (bounds normalised and clamped against the size at that moment; an empty selection
 * changes nothing), in one atomic step. 0, or -1 with the List unchanged: ValueError
 * ("slice step cannot be zero", a NULL handle) or MemoryError (more than 64 elements
 * removed and no buffer to hold them until they are released).
 */
FFK_API int ffk_list_erase_slice(ffk_list *l, int64_t start, int64_t stop, int64_t step);

/*
 * Appends owned copies of the `n` values at `items` (borrowed; may be NULL when n is 0),
 * all or nothing and in one atomic step: every value is made owned first, so when one
 * cannot be (a DLTensor* view: TypeError; MemoryError) the List is unchanged, and no
 * other thread ever sees part of the values appended. 0, or -1 with the List unchanged
 * (also ValueError for a NULL handle, negative n or NULL items).
 */
FFK_API int ffk_list_extend(ffk_list *l, const ffk_any *items, int64_t n);

/*
 * Appends the elements of `seq`, an Array, Tuple or List (borrowed; may be `l`: it
 * doubles), in one atomic step. 0, or -1 with the List unchanged (ValueError, TypeError, MemoryError).
 */
FFK_API int ffk_list_extend_from(ffk_list *l, const ffk_object *seq);

/* Removes every element. 0, or -1 (ValueError for a NULL handle). */
FFK_API int ffk_list_clear(ffk_list *l);

/* Reverses the elements in place. 0, or -1 (ValueError for a NULL handle). */
FFK_API int ffk_list_reverse(ffk_list *l);

/*
 * The first index whose element is key-equal (ffk_any_equal) to `value`: 1 with *out
 * set (out may be NULL), 0 when absent, -1 for a NULL handle.
 */
FFK_API int ffk_list_index(ffk_list *l, const ffk_any *value, int64_t *out);

/* True when some element is key-equal to `value` (false for a NULL handle). */
FFK_API bool ffk_list_contains(ffk_list *l, const ffk_any *value);

/*
 * ffk_array_find on the List as it is at the moment of the call (Python's `in` and
 * index(value, start, stop)): the first index in [start, stop) (Python's bounds, clamped
 * against the size at that moment) whose element is structurally equal to `value`.
 * Returns 1 and sets *out (may be NULL), 0 when absent, -1 with an error (NULL `l` or
 * `value`: ValueError; the walk's errors; MemoryError). A leaf value (see ffk_array_find)
 * is found in one scan under the List's lock, with no copy; any other value is compared
 * against a snapshot, with no lock held, since a structural walk may run hooks.
 */
FFK_API int ffk_list_find(ffk_list *l, const ffk_any *value, int64_t start, int64_t stop, int64_t *out);

/*
 * The elements l[start:stop:step] (Python's slice rules, bounds normalised against the
 * size at that moment) as a new Array snapshot taken in one atomic step. New
 * reference, or NULL with a ValueError (step 0, NULL handle) or a MemoryError.
 */
FFK_API ffk_array *ffk_list_slice(ffk_list *l, int64_t start, int64_t stop, int64_t step);

/*
 * Iteration that notices changes. The iterator borrows the List: the caller keeps it
 * alive. ffk_list_iter_next returns 1 with the next element as a new reference in *out,
 * 0 at the end, or -1 with a RuntimeError "List changed during iteration" once an
 * element was added, removed or moved (by any thread) since ffk_list_iter_init.
 * Replacing an element with ffk_list_set is not a change of the sequence's shape and is
 * seen by the iterator.
 */
typedef struct ffk_list_iter {
  ffk_list *list;
  int64_t index;
  uint64_t version;
} ffk_list_iter;

FFK_API void ffk_list_iter_init(ffk_list_iter *it, ffk_list *l);
FFK_API int ffk_list_iter_next(ffk_list_iter *it, ffk_any *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_LIST_H */
