/*
 * list.c - List: a shared, mutable sequence guarded by a per-object lock.
 *
 * Invariants:
 *  - data[0, size) are owned values (no views); data[size, capacity) is garbage.
 *  - Every read or write of data, size, capacity and version happens with the lock held.
 *  - version changes whenever an element is added, removed or moved; iterators compare it.
 *  - stamp changes whenever any element changes at all (version's changes, and sets); it
 *    is written under the lock with release order and may be read without the lock
 *    (ffk_list_stamp, acquire): equal stamps mean the same elements, which lets a caller
 *    reuse what it derived from them (the Python binding's converted objects).
 *  - The lock is never held while foreign code can run. Everything that could fail or
 *    call out (owned copies of views, raising errors, releasing values) happens before
 *    the lock is taken or after it is dropped: values leaving the List are moved to a
 *    local holding place and released once the List is consistent and unlocked.
 *  - Under the lock the code only moves memory, retains (an atomic increment), compares
 *    with ffk_any_equal (no foreign code) and allocates.
 */
#include "containers_internal.h"
#include "lock.h"

#include <ffikit/list.h>
#include <ffikit/unstable/list.h>

#include <string.h>

#define MIN_CAPACITY 4
#define MAX_CAPACITY ((int64_t)(SIZE_MAX / sizeof(ffk_any) / 2))
#define LOCAL_HOLD 64 /* removed elements held on the stack before a heap buffer is needed */

struct ffk_list {
  ffk_object header;
  ffk_lock lock;
  uint64_t version;
  uint64_t stamp; /* atomic accesses only */
  ffk_any *data;
  int64_t size;
  int64_t capacity;
};

static void list_deleter(void *self, int which) {
  ffk_list *l = self;
  if (which & FFK_DELETER_DESTROY) {
    ffk_any *data = l->data;
    int64_t size = l->size;
    l->data = NULL;
    l->size = l->capacity = 0;
    for (int64_t i = 0; i < size; ++i)
      if (ffk_any_is_object(&data[i])) ffk_any_release(&data[i]); /* plain values own nothing */
    ffk_mem_free(data);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&l->header);
}

static int null_handle(const char *fn) { return ffk_error_set(FFK_ERR_VALUE, "%s: the list handle is NULL", fn); }

/* Releases `n` values moved out of a List (call with no lock held). */
static void release_all(ffk_any *values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ffk_any_release(&values[i]);
}

/* An element changed in place (lock held): the stamp moves, the version (shape) does not. */
static void touch(ffk_list *l) { __atomic_store_n(&l->stamp, l->stamp + 1, __ATOMIC_RELEASE); }

/* Elements were added, removed or moved (lock held). */
static void bump(ffk_list *l) {
  ++l->version;
  touch(l);
}

/* Makes room for `need` elements. Lock held. 0, or -1 with nothing changed (the error is raised by the caller). */
static int reserve_locked(ffk_list *l, int64_t need) {
  if (need <= l->capacity) return 0;
  if (need > MAX_CAPACITY) return -1;
  int64_t cap = l->capacity < MIN_CAPACITY ? MIN_CAPACITY : l->capacity;
  while (cap < need) cap = cap > MAX_CAPACITY / 2 ? MAX_CAPACITY : cap * 2;
  ffk_any *data = ffk_mem_realloc(l->data, (size_t)cap * sizeof(ffk_any));
  if (data == NULL) return -1;
  l->data = data;
  l->capacity = cap;
  return 0;
}

/*
 * Raises the error for a failed reserve_locked or splice_locked wanting `need` elements,
 * once unlocked: the allocator has already raised its MemoryError, else the size limit.
 */
static int raise_no_room(int64_t need) {
  if (ffk_error_occurred()) return -1;
  return ffk_error_set(FFK_ERR_MEMORY, "a List of %lld elements is too large", (long long)need);
}

static int raise_index(int64_t index, int64_t size) {
  return ffk_error_set(FFK_ERR_INDEX, "List index %lld out of range for size %lld", (long long)index, (long long)size);
}

/* Normalises a Python-style index into [0, size); false when out of range. */
static bool normalise(int64_t size, int64_t index, int64_t *out) {
  int64_t i = index < 0 ? index + size : index;
  *out = i;
  return i >= 0 && i < size;
}

/* Owned copies of `n` borrowed values in a new buffer (NULL when n is 0); -1 with nothing left over. */
static int owned_copies(const ffk_any *items, int64_t n, ffk_any **out) {
  *out = NULL;
  if (n == 0) return 0;
  if ((uint64_t)n > SIZE_MAX / sizeof(ffk_any))
    return ffk_error_set(FFK_ERR_MEMORY, "%lld items are too many for a List", (long long)n);
  ffk_any *copies = ffk_mem_alloc((size_t)n * sizeof(ffk_any));
  if (copies == NULL) return -1;
  for (int64_t i = 0; i < n; ++i) {
    if (ffk_any_to_owned(&items[i], &copies[i]) != 0) {
      release_all(copies, i);
      ffk_mem_free(copies);
      return -1;
    }
  }
  *out = copies;
  return 0;
}

/* ---- Construction and conversion. ------------------------------------------------- */

ffk_list *ffk_list_with_capacity(int64_t capacity) {
  if (capacity < 0 || capacity > MAX_CAPACITY) {
    ffk_error_set(FFK_ERR_VALUE, "List capacity %lld is out of range", (long long)capacity);
    return NULL;
  }
  ffk_list *l = (ffk_list *)ffk_object_alloc(FFK_TYPE_LIST, sizeof(ffk_list), list_deleter);
  if (l == NULL) return NULL;
  ffk_lock__init(&l->lock);
  if (capacity > 0) {
    l->data = ffk_mem_alloc((size_t)capacity * sizeof(ffk_any));
    if (l->data == NULL) {
      ffk_object_release(&l->header);
      return NULL;
    }
    l->capacity = capacity;
  }
  return l;
}

ffk_list *ffk_list_new(void) { return ffk_list_with_capacity(0); }

ffk_list *ffk_list_from_items(const ffk_any *items, int64_t n) {
  if (n < 0 || (items == NULL && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make a List from %lld items at %p", (long long)n, (const void *)items);
    return NULL;
  }
  ffk_list *l = ffk_list_with_capacity(n);
  if (l == NULL) return NULL;
  for (int64_t i = 0; i < n; ++i) {
    if (ffk_any_to_owned(&items[i], &l->data[i]) != 0) {
      ffk_object_release(&l->header); /* releases the l->size elements made so far */
      return NULL;
    }
    l->size = i + 1;
  }
  return l;
}

ffk_list *ffk_list_from_items_steal(ffk_any *items, int64_t n) {
  if (n < 0 || (items == NULL && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make a List from %lld items at %p", (long long)n, (void *)items);
    return NULL;
  }
  ffk_list *l = ffk_list_with_capacity(n);
  if (l == NULL) {
    for (int64_t i = 0; i < n; ++i) {
      if (ffk_array__is_view(&items[i])) items[i] = ffk_any_none(); /* nothing to release */
      ffk_any_release(&items[i]);
    }
    return NULL;
  }
  int64_t moved;
  int rc = ffk_array__steal_into(l->data, items, n, &moved, "ffk_list_from_items_steal");
  l->size = moved; /* not shared yet: no lock needed; on failure the List releases what moved */
  if (rc == 0) return l;
  ffk_object_release(&l->header);
  return NULL;
}

ffk_list *ffk_list_from_array(const ffk_array *a) {
  if (a == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_list_from_array: the array is NULL");
    return NULL;
  }
  return ffk_list_from_items(ffk_array_items_borrow(a), ffk_array_size(a));
}

ffk_array *ffk_list_to_array(ffk_list *l) {
  if (l == NULL) {
    null_handle("ffk_list_to_array");
    return NULL;
  }
  ffk_lock__acquire(&l->lock);
  ffk_array *a = ffk_array__slice_items(l->data, l->size, 0, INT64_MAX, 1);
  ffk_lock__release(&l->lock);
  return a;
}

/* ---- Reading. --------------------------------------------------------------------- */

int64_t ffk_list_size(ffk_list *l) {
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  ffk_lock__release(&l->lock);
  return size;
}

/* l[index] retained into *out (None first), and the stamp it was read at into *stamp when
 * stamp is not NULL: one lock hold. 0, or -1 with an IndexError. */
static int get_at(ffk_list *l, int64_t index, ffk_any *out, uint64_t *stamp) {
  int64_t i;
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  bool ok = normalise(size, index, &i);
  if (ok) {
    *out = l->data[i];
    ffk_any_retain(out);
    if (stamp != NULL) *stamp = l->stamp;
  }
  ffk_lock__release(&l->lock);
  return ok ? 0 : raise_index(index, size);
}

int ffk_list_get(ffk_list *l, int64_t index, ffk_any *out) {
  *out = ffk_any_none();
  if (l == NULL) return null_handle("ffk_list_get");
  return get_at(l, index, out, NULL);
}

uint64_t ffk_list_stamp(ffk_list *l) { return __atomic_load_n(&l->stamp, __ATOMIC_ACQUIRE); }

const uint64_t *ffk_list_stamp_address(ffk_list *l) { return l != NULL ? &l->stamp : NULL; }

int ffk_list_get_stamped(ffk_list *l, int64_t index, ffk_any *out, uint64_t *stamp) {
  *out = ffk_any_none();
  *stamp = 0;
  if (l == NULL) return null_handle("ffk_list_get_stamped");
  return get_at(l, index, out, stamp);
}

int ffk_list_index(ffk_list *l, const ffk_any *value, int64_t *out) {
  if (l == NULL) return null_handle("ffk_list_index");
  int found = 0;
  ffk_lock__acquire(&l->lock);
  for (int64_t i = 0; i < l->size; ++i) {
    if (ffk_any_equal(&l->data[i], value)) {
      if (out) *out = i;
      found = 1;
      break;
    }
  }
  ffk_lock__release(&l->lock);
  return found;
}

bool ffk_list_contains(ffk_list *l, const ffk_any *value) {
  if (l == NULL) return false;
  return ffk_list_index(l, value, NULL) == 1;
}

int ffk_list__find_leaf(ffk_list *l, const ffk_any *value, int64_t start, int64_t stop, int64_t *out) {
  ffk_lock__acquire(&l->lock);
  ffk_array__clamp_bounds(l->size, &start, &stop);
  int rc = ffk_array__find_leaf(l->data, start, stop, value, out); /* compares only: no foreign code */
  ffk_lock__release(&l->lock);
  return rc;
}

ffk_array *ffk_list_slice(ffk_list *l, int64_t start, int64_t stop, int64_t step) {
  if (l == NULL) {
    null_handle("ffk_list_slice");
    return NULL;
  }
  if (step == 0) {
    ffk_error_set(FFK_ERR_VALUE, "slice step cannot be zero");
    return NULL;
  }
  ffk_lock__acquire(&l->lock);
  ffk_array *a = ffk_array__slice_items(l->data, l->size, start, stop, step);
  ffk_lock__release(&l->lock);
  return a;
}

/* ---- Single-element mutation. ------------------------------------------------------ */

int ffk_list_set(ffk_list *l, int64_t index, const ffk_any *value) {
  if (l == NULL) return null_handle("ffk_list_set");
  ffk_any owned, old = ffk_any_none();
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  int64_t i;
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  bool ok = normalise(size, index, &i);
  if (ok) {
    old = l->data[i];
    l->data[i] = owned; /* store the new value before the old one goes */
    touch(l);
  }
  ffk_lock__release(&l->lock);
  if (!ok) {
    ffk_any_release(&owned);
    return raise_index(index, size);
  }
  ffk_any_release(&old);
  return 0;
}

/* Inserts the owned `value` (taken over, released on failure) before the clamped `index`; INT64_MAX appends. */
static int insert_owned(ffk_list *l, int64_t index, ffk_any value) {
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  if (FFK_UNLIKELY(reserve_locked(l, size + 1) != 0)) {
    ffk_lock__release(&l->lock);
    ffk_any_release(&value);
    return raise_no_room(size + 1);
  }
  int64_t i = index < 0 ? (index + size < 0 ? 0 : index + size) : (index > size ? size : index);
  if (i < size) memmove(&l->data[i + 1], &l->data[i], (size_t)(size - i) * sizeof(ffk_any));
  l->data[i] = value;
  l->size = size + 1;
  bump(l);
  ffk_lock__release(&l->lock);
  return 0;
}

int ffk_list_append(ffk_list *l, const ffk_any *value) {
  if (l == NULL) return null_handle("ffk_list_append");
  /* The fast path: a plain value (it owns nothing) into room already there, one lock hold. */
  if (FFK_LIKELY(ffk_any__is_plain(value))) {
    ffk_lock__acquire(&l->lock);
    int64_t size = l->size;
    if (FFK_LIKELY(size < l->capacity)) {
      ffk_any__copy(&l->data[size], value);
      l->size = size + 1;
      bump(l);
      ffk_lock__release(&l->lock);
      return 0;
    }
    ffk_lock__release(&l->lock);
  }
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  return insert_owned(l, INT64_MAX, owned);
}

int ffk_list_append_steal(ffk_list *l, ffk_any *value) {
  ffk_any v = *value;
  *value = ffk_any_none();
  if (ffk_array__is_view(&v))
    return ffk_error_set(FFK_ERR_TYPE, "ffk_list_append_steal: a borrowed %s view owns nothing", ffk_any_type_name(&v));
  if (l == NULL) {
    ffk_any_release(&v);
    return null_handle("ffk_list_append_steal");
  }
  return insert_owned(l, INT64_MAX, v);
}

int ffk_list_insert(ffk_list *l, int64_t index, const ffk_any *value) {
  if (l == NULL) return null_handle("ffk_list_insert");
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  return insert_owned(l, index, owned);
}

int ffk_list_pop(ffk_list *l, int64_t index, ffk_any *out) {
  *out = ffk_any_none();
  if (l == NULL) return null_handle("ffk_list_pop");
  int64_t i;
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  bool ok = normalise(size, index, &i);
  if (ok) {
    *out = l->data[i];
    memmove(&l->data[i], &l->data[i + 1], (size_t)(size - i - 1) * sizeof(ffk_any));
    l->size = size - 1;
    bump(l);
  }
  ffk_lock__release(&l->lock);
  if (ok) return 0;
  if (size == 0) return ffk_error_set(FFK_ERR_INDEX, "pop from empty List");
  return raise_index(index, size);
}

int ffk_list_erase_at(ffk_list *l, int64_t index) {
  if (l == NULL) return null_handle("ffk_list_erase_at");
  ffk_any removed;
  if (ffk_list_pop(l, index, &removed) != 0) return -1;
  ffk_any_release(&removed);
  return 0;
}

/* ---- Range mutation. ------------------------------------------------------------- */

/* Where the elements a splice removes wait, unlocked, for their release. */
typedef struct held {
  ffk_any *items;
  int64_t n;
  ffk_any local[LOCAL_HOLD];
} held;

static void held_release(held *h) {
  release_all(h->items, h->n);
  if (h->items != h->local) ffk_mem_free(h->items);
}

/*
 * Replaces data[begin, end) with the `n` owned values at `src` (taken over on success).
 * Lock held; 0 <= begin <= end <= size. The removed elements move to *h. 0, or -1 with
 * the List unchanged and a MemoryError to raise once unlocked (see raise_no_room).
 */
static int splice_locked(ffk_list *l, int64_t begin, int64_t end, const ffk_any *src, int64_t n, held *h) {
  int64_t k = end - begin, size = l->size, new_size = size - k + n;
  h->items = h->local;
  h->n = 0;
  if (new_size > l->capacity && reserve_locked(l, new_size) != 0) return -1;
  if (k > LOCAL_HOLD && (h->items = ffk_mem_alloc((size_t)k * sizeof(ffk_any))) == NULL) {
    h->items = h->local;
    return -1;
  }
  if (k > 0) memcpy(h->items, &l->data[begin], (size_t)k * sizeof(ffk_any));
  h->n = k;
  if (k != n && end < size) memmove(&l->data[begin + n], &l->data[end], (size_t)(size - end) * sizeof(ffk_any));
  if (n > 0) memcpy(&l->data[begin], src, (size_t)n * sizeof(ffk_any));
  l->size = new_size;
  if (k > 0 || n > 0) bump(l);
  return 0;
}

/* Python's clamping of a step-1 slice assignment's bounds. */
static void clamp_slice(int64_t size, int64_t *start, int64_t *stop) {
  int64_t *bounds[2] = {start, stop};
  for (int b = 0; b < 2; ++b) {
    int64_t v = *bounds[b];
    if (v < 0) v = v < -size ? 0 : v + size;
    if (v > size) v = size;
    *bounds[b] = v;
  }
  if (*stop < *start) *stop = *start;
}

/* -step must not overflow: INT64_MIN selects the same elements as -INT64_MAX. */
static int64_t safe_step(int64_t step) { return step == INT64_MIN ? -INT64_MAX : step; }

static int raise_step_zero(void) { return ffk_error_set(FFK_ERR_VALUE, "slice step cannot be zero"); }

/* Gives `h` room for `k` removed elements (the local buffer when it fits). Lock held; allocation only. */
static int hold(held *h, int64_t k) {
  h->items = h->local;
  h->n = 0;
  if (k > LOCAL_HOLD && (h->items = ffk_mem_alloc((size_t)k * sizeof(ffk_any))) == NULL) {
    h->items = h->local;
    return -1;
  }
  return 0;
}

/* How a slice assignment under the lock ended. */
typedef enum { ASSIGNED = 0, NO_ROOM = -1, WRONG_SIZE = -2 } assign_rc;

/*
 * Assigns the `n` owned values at `src` (taken over when ASSIGNED) to
 * data[start:stop:step], normalised against the current size. Lock held. The replaced
 * elements move to *h. *want receives the size a NO_ROOM List would have needed, or the
 * length of an extended slice that is not `n` (WRONG_SIZE). The List is unchanged
 * unless ASSIGNED.
 */
static assign_rc assign_locked(ffk_list *l, int64_t start, int64_t stop, int64_t step, const ffk_any *src,
                               int64_t n, held *h, int64_t *want) {
  int64_t size = l->size;
  if (step == 1) {
    clamp_slice(size, &start, &stop);
    *want = size - (stop - start) + n;
    return splice_locked(l, start, stop, src, n, h) == 0 ? ASSIGNED : NO_ROOM;
  }
  int64_t k = ffk_array__adjust_slice(size, &start, &stop, step);
  h->items = h->local;
  h->n = 0;
  *want = k;
  if (k != n) return WRONG_SIZE;
  *want = size;
  if (hold(h, k) != 0) return NO_ROOM;
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = start + j * step; /* an element's index: no overflow, unlike one step past the last */
    h->items[j] = l->data[i];
    l->data[i] = src[j]; /* the old value is released only once the List is unlocked */
  }
  h->n = k;
  if (k > 0) touch(l);
  return ASSIGNED; /* replacing elements moves none: iterators carry on, as with ffk_list_set */
}

/*
 * After assign_locked, with no lock held: on success frees `src` (its values now belong
 * to the List) and releases what was replaced; otherwise releases and frees `src` and
 * raises the error.
 */
static int assign_done(assign_rc rc, ffk_any *src, int64_t n, held *h, int64_t want) {
  if (rc == ASSIGNED) {
    ffk_mem_free(src);
    held_release(h);
    return 0;
  }
  if (src != NULL) release_all(src, n);
  ffk_mem_free(src);
  if (rc == WRONG_SIZE)
    return ffk_error_set(FFK_ERR_VALUE, "attempt to assign sequence of size %lld to extended slice of size %lld",
                         (long long)n, (long long)want);
  return raise_no_room(want);
}

/* Assigns the `n` owned values at `src` (taken over; `src` is freed either way) to l[start:stop:step]. */
static int replace_owned(ffk_list *l, int64_t start, int64_t stop, int64_t step, ffk_any *src, int64_t n) {
  held h;
  int64_t want;
  ffk_lock__acquire(&l->lock);
  assign_rc rc = assign_locked(l, start, stop, step, src, n, &h, &want);
  ffk_lock__release(&l->lock);
  return assign_done(rc, src, n, &h, want);
}

int ffk_list_set_slice_step(ffk_list *l, int64_t start, int64_t stop, int64_t step, const ffk_any *items,
                            int64_t n) {
  if (l == NULL) return null_handle("ffk_list_set_slice_step");
  if (step == 0) return raise_step_zero();
  if (n < 0 || (items == NULL && n > 0))
    return ffk_error_set(FFK_ERR_VALUE, "cannot assign %lld items at %p to a List slice", (long long)n,
                         (const void *)items);
  ffk_any *copies;
  if (owned_copies(items, n, &copies) != 0) return -1;
  return replace_owned(l, start, stop, safe_step(step), copies, n);
}

int ffk_list_set_slice(ffk_list *l, int64_t start, int64_t stop, const ffk_any *items, int64_t n) {
  if (l == NULL) return null_handle("ffk_list_set_slice");
  return ffk_list_set_slice_step(l, start, stop, 1, items, n);
}

int ffk_list_extend(ffk_list *l, const ffk_any *items, int64_t n) {
  if (l == NULL) return null_handle("ffk_list_extend");
  return ffk_list_set_slice_step(l, INT64_MAX, INT64_MAX, 1, items, n);
}

/* Retained copies of the `n` owned values at `items` in a new buffer (NULL when n is 0). Allocation only. */
static int retained_copies(const ffk_any *items, int64_t n, ffk_any **out) {
  *out = NULL;
  if (n == 0) return 0;
  if ((*out = ffk_mem_alloc((size_t)n * sizeof(ffk_any))) == NULL) return -1;
  memcpy(*out, items, (size_t)n * sizeof(ffk_any));
  for (int64_t i = 0; i < n; ++i) ffk_any_retain(&(*out)[i]);
  return 0;
}

int ffk_list_set_slice_step_from(ffk_list *l, int64_t start, int64_t stop, int64_t step, const ffk_object *seq) {
  if (l == NULL) return null_handle("ffk_list_set_slice_step_from");
  if (seq == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot assign a NULL sequence to a List slice");
  if (step == 0) return raise_step_zero();
  step = safe_step(step);
  ffk_any *copies;
  if (seq->type_index == FFK_TYPE_ARRAY || seq->type_index == FFK_TYPE_TUPLE) {
    const ffk_array *a = (const ffk_array *)seq; /* never changes while we borrow it */
    if (retained_copies(a->data, a->size, &copies) != 0) return -1;
    return replace_owned(l, start, stop, step, copies, a->size);
  }
  if (seq->type_index != FFK_TYPE_LIST)
    return ffk_error_set(FFK_ERR_TYPE, "expected an Array, Tuple or List but got %s", ffk_type_name(seq->type_index));
  /* Another List (or this one): read and write under both locks, so the step is atomic. */
  ffk_list *src = (ffk_list *)seq;
  held h;
  int64_t n, want = 0;
  assign_rc rc = NO_ROOM;
  ffk_lock__acquire2(&l->lock, &src->lock);
  n = src->size;
  want = l->size + n;
  if (retained_copies(src->data, n, &copies) == 0) rc = assign_locked(l, start, stop, step, copies, n, &h, &want);
  ffk_lock__release2(&l->lock, &src->lock);
  return assign_done(rc, copies, n, &h, want);
}

int ffk_list_set_slice_from(ffk_list *l, int64_t start, int64_t stop, const ffk_object *seq) {
  if (l == NULL) return null_handle("ffk_list_set_slice_from");
  if (seq == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_list_set_slice_from: the sequence is NULL");
  return ffk_list_set_slice_step_from(l, start, stop, 1, seq);
}

int ffk_list_extend_from(ffk_list *l, const ffk_object *seq) {
  if (l == NULL) return null_handle("ffk_list_extend_from");
  if (seq == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_list_extend_from: the sequence is NULL");
  return ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MAX, 1, seq);
}

/*
 * Removes data[start:stop:step] (normalised against the current size; step not 0 nor
 * INT64_MIN) into *h. Lock held. 0, or -1 with the List unchanged (no room in *h).
 */
static int erase_slice_locked(ffk_list *l, int64_t start, int64_t stop, int64_t step, held *h) {
  int64_t size = l->size;
  if (step == 1) {
    clamp_slice(size, &start, &stop);
    return splice_locked(l, start, stop, NULL, 0, h);
  }
  int64_t k = ffk_array__adjust_slice(size, &start, &stop, step);
  if (hold(h, k) != 0) return -1;
  if (k == 0) return 0;
  if (step < 0) { /* the same elements, walked upwards (CPython's list_ass_subscript) */
    start += step * (k - 1);
    step = -step;
  }
  /* One pass: the selected elements move to *h, the others close up in order. */
  int64_t w = start, next = start, j = 0;
  for (int64_t i = start; i < size; ++i) {
    if (j < k && i == next) {
      h->items[j++] = l->data[i];
      next = j < k ? next + step : -1;
    } else {
      l->data[w++] = l->data[i];
    }
  }
  h->n = k;
  l->size = size - k;
  bump(l);
  return 0;
}

int ffk_list_erase_slice(ffk_list *l, int64_t start, int64_t stop, int64_t step) {
  if (l == NULL) return null_handle("ffk_list_erase_slice");
  if (step == 0) return raise_step_zero();
  step = safe_step(step);
  held h;
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  int rc = erase_slice_locked(l, start, stop, step, &h);
  ffk_lock__release(&l->lock);
  if (rc != 0) return raise_no_room(size);
  held_release(&h);
  return 0;
}

int ffk_list_erase(ffk_list *l, int64_t begin, int64_t end) {
  if (l == NULL) return null_handle("ffk_list_erase");
  held h;
  ffk_lock__acquire(&l->lock);
  int64_t size = l->size;
  bool in_range = 0 <= begin && begin <= end && end <= size;
  int rc = in_range ? splice_locked(l, begin, end, NULL, 0, &h) : -1;
  ffk_lock__release(&l->lock);
  if (!in_range)
    return ffk_error_set(FFK_ERR_INDEX, "List range [%lld, %lld) out of range for size %lld", (long long)begin,
                         (long long)end, (long long)size);
  if (rc != 0) return raise_no_room(size);
  held_release(&h);
  return 0;
}

int ffk_list_clear(ffk_list *l) {
  if (l == NULL) return null_handle("ffk_list_clear");
  ffk_lock__acquire(&l->lock);
  ffk_any *data = l->data;
  int64_t size = l->size;
  l->data = NULL;
  l->size = l->capacity = 0;
  if (size > 0) bump(l);
  ffk_lock__release(&l->lock);
  release_all(data, size);
  ffk_mem_free(data);
  return 0;
}

int ffk_list_reverse(ffk_list *l) {
  if (l == NULL) return null_handle("ffk_list_reverse");
  ffk_lock__acquire(&l->lock);
  for (int64_t i = 0, j = l->size - 1; i < j; ++i, --j) {
    ffk_any t = l->data[i];
    l->data[i] = l->data[j];
    l->data[j] = t;
  }
  if (l->size > 1) bump(l);
  ffk_lock__release(&l->lock);
  return 0;
}

/* ---- Iteration. ----------------------------------------------------------------- */

void ffk_list_iter_init(ffk_list_iter *it, ffk_list *l) {
  it->list = l;
  it->index = 0;
  it->version = 0;
  if (l != NULL) {
    ffk_lock__acquire(&l->lock);
    it->version = l->version;
    ffk_lock__release(&l->lock);
  }
}

int ffk_list_iter_next_stamped(ffk_list_iter *it, ffk_any *out, uint64_t *stamp) {
  *out = ffk_any_none();
  *stamp = 0;
  ffk_list *l = it->list;
  if (l == NULL) return null_handle("ffk_list_iter_next");
  ffk_lock__acquire(&l->lock);
  bool changed = l->version != it->version;
  int rc = 0;
  if (!changed && it->index < l->size) {
    *out = l->data[it->index++];
    ffk_any_retain(out);
    rc = 1;
  }
  if (!changed) *stamp = l->stamp;
  ffk_lock__release(&l->lock);
  if (changed) return ffk_error_set(FFK_ERR_RUNTIME, "List changed during iteration");
  return rc;
}

int ffk_list_iter_next(ffk_list_iter *it, ffk_any *out) {
  uint64_t stamp;
  return ffk_list_iter_next_stamped(it, out, &stamp);
}

/* ---- repr: [1, 2, 3] -------------------------------------------------------------- */

int ffk_list__repr(ffk_object *self, ffk_repr_ctx *ctx) {
  ffk_array *snapshot = ffk_list_to_array((ffk_list *)self); /* prints with no lock held */
  if (snapshot == NULL) return -1;
  int rc = ffk_array__repr_items(ctx, snapshot->data, snapshot->size, true);
  ffk_object_release(&snapshot->header);
  return rc;
}
