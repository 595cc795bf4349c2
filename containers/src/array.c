/*
 * array.c - Array and Tuple: copy-on-write sequences with the elements inline.
 *
 * Invariants:
 *  - data points just past the struct; elements [0, size) are owned values (no views);
 *    slots [size, capacity) hold garbage.
 *  - A mutator edits in place only when ffk_object_is_unique holds. Otherwise it edits a
 *    fresh copy and commits it to *a only once the edit has succeeded, so a failure
 *    leaves *a exactly as it was.
 *  - A unique Array is unreachable from any other handle (no strong or weak holder),
 *    so no deleter run by releasing an element can observe it half-edited.
 *  - A Tuple (FFK_TYPE_TUPLE) has the same layout and never changes size.
 */
#include "containers_internal.h"


#include <stdarg.h>
#include <string.h>

#define MIN_CAPACITY 4
#define MAX_CAPACITY ((int64_t)((SIZE_MAX - sizeof(ffk_array)) / sizeof(ffk_any) / 2))

static const char *kind(const ffk_array *a) { return a->header.type_index == FFK_TYPE_TUPLE ? "Tuple" : "Array"; }

static void array_deleter(void *self, int which) {
  ffk_array *a = self;
  if (which & FFK_DELETER_DESTROY) {
    /* Plain values own nothing: only objects need the (out-of-line) release. */
    for (int64_t i = 0; i < a->size; ++i)
      if (ffk_any_is_object(&a->data[i])) ffk_any_release(&a->data[i]);
    a->size = 0;
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&a->header);
}

static size_t block_size(int64_t capacity) { return sizeof(ffk_array) + (size_t)capacity * sizeof(ffk_any); }

/* An empty Array or Tuple with room for `capacity` elements (ValueError, MemoryError). */
static ffk_array *alloc_array(int32_t type_index, int64_t capacity) {
  if (capacity < 0 || capacity > MAX_CAPACITY) {
    ffk_error_set(FFK_ERR_VALUE, "%s capacity %lld is out of range", type_index == FFK_TYPE_TUPLE ? "Tuple" : "Array",
                  (long long)capacity);
    return NULL;
  }
  ffk_array *a = (ffk_array *)ffk_object_alloc(type_index, block_size(capacity), array_deleter);
  if (a == NULL) return NULL;
  a->data = (ffk_any *)(a + 1);
  a->size = 0;
  a->capacity = capacity;
  return a;
}

/* The capacity to grow to so that `need` elements fit, amortised O(1) for pushes. */
static int64_t grown_capacity(int64_t capacity, int64_t need) {
  int64_t cap = capacity < MIN_CAPACITY ? MIN_CAPACITY : capacity;
  while (cap < need) cap = cap > MAX_CAPACITY / 2 ? MAX_CAPACITY : cap * 2;
  return cap < need ? need : cap;
}

/*
 * A writable array with room for `need` elements and the contents of *pa: *pa itself
 * when unique (grown in place, *pa updated if it moved), else a new copy that the caller
 * must commit() or release. NULL with an error when memory or the size limit runs out.
 */
static ffk_array *writable(ffk_array **pa, int64_t need) {
  ffk_array *a = *pa;
  if (need > MAX_CAPACITY) {
    ffk_error_set(FFK_ERR_MEMORY, "%s of %lld elements is too large", kind(a), (long long)need);
    return NULL;
  }
  if (ffk_object_is_unique(&a->header)) {
    if (need <= a->capacity) return a;
    int64_t cap = grown_capacity(a->capacity, need);
    ffk_array *moved = (ffk_array *)ffk_object_realloc(&a->header, block_size(cap));
    if (moved == NULL) return NULL;
    moved->data = (ffk_any *)(moved + 1);
    moved->capacity = cap;
    *pa = moved;
    return moved;
  }
  ffk_array *copy = alloc_array(a->header.type_index, need > a->size ? need : a->size);
  if (copy == NULL) return NULL;
  memcpy(copy->data, a->data, (size_t)a->size * sizeof(ffk_any));
  for (int64_t i = 0; i < a->size; ++i) ffk_any_retain(&copy->data[i]);
  copy->size = a->size;
  return copy;
}

/* Makes `w` the caller's array, releasing the caller's reference to the shared original. */
static void commit(ffk_array **pa, ffk_array *w) {
  if (w == *pa) return;
  ffk_array *old = *pa;
  *pa = w;
  ffk_object_release(&old->header);
}

static int check_handle(ffk_array **pa, const char *fn) {
  if (pa == NULL || *pa == NULL) return ffk_error_set(FFK_ERR_VALUE, "%s: the array handle is NULL", fn);
  return 0;
}

static int check_resizable(ffk_array **pa, const char *fn) {
  if (check_handle(pa, fn) != 0) return -1;
  if ((*pa)->header.type_index == FFK_TYPE_TUPLE)
    return ffk_error_set(FFK_ERR_TYPE, "%s: a Tuple has a fixed size", fn);
  return 0;
}

int ffk_array_index_error(const ffk_array *a, int64_t index) {
  if (a == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_array_index_error: the array is NULL");
  return ffk_error_set(FFK_ERR_INDEX, "%s index %lld out of range for size %lld", kind(a), (long long)index,
                       (long long)a->size);
}

/* Normalises a Python-style index into [0, size), or raises an IndexError. */
static int normalise(const ffk_array *a, int64_t index, int64_t *out) { return ffk_array_check_index(a, index, out); }

/* ---- Construction. ---------------------------------------------------------------- */

/* ffk_array_new for either type index. */
static ffk_array *new_typed(int32_t type_index, const ffk_any *items, int64_t n) {
  if (n < 0 || (items == NULL && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make a %s from %lld items at %p", type_index == FFK_TYPE_TUPLE ? "Tuple" : "Array",
                  (long long)n, (const void *)items);
    return NULL;
  }
  ffk_array *a = alloc_array(type_index, n);
  if (a == NULL) return NULL;
  for (int64_t i = 0; i < n; ++i) {
    if (ffk_any_to_owned(&items[i], &a->data[i]) != 0) {
      ffk_object_release(&a->header); /* releases the a->size elements made so far */
      return NULL;
    }
    a->size = i + 1;
  }
  return a;
}

ffk_array *ffk_array_new(const ffk_any *items, int64_t n) { return new_typed(FFK_TYPE_ARRAY, items, n); }

bool ffk_array__is_view(const ffk_any *v) {
  return v->type_index == FFK_TYPE_RAW_STR || v->type_index == FFK_TYPE_BYTE_ARRAY_PTR ||
         v->type_index == FFK_TYPE_DLTENSOR_PTR;
}

/*
 * Moves the `n` owned values at `items` into `dst` in one pass (each source reset to
 * None); stops at the first view. Returns n, or the position of that view, with
 * items[0, position) moved and the rest untouched.
 */
static int64_t move_owned(ffk_any *dst, ffk_any *items, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (FFK_UNLIKELY(ffk_array__is_view(&items[i]))) return i;
    dst[i] = items[i];
    items[i] = ffk_any_none();
  }
  return n;
}

int ffk_array__steal_into(ffk_any *dst, ffk_any *items, int64_t n, int64_t *moved, const char *fn) {
  int64_t k = move_owned(dst, items, n);
  *moved = k;
  if (k == n) return 0;
  ffk_error_set(FFK_ERR_TYPE, "%s: item %lld is a borrowed %s view, which owns nothing", fn, (long long)k,
                ffk_any_type_name(&items[k]));
  items[k] = ffk_any_none(); /* nothing to release */
  for (int64_t i = k + 1; i < n; ++i) {
    if (ffk_array__is_view(&items[i])) items[i] = ffk_any_none();
    ffk_any_release(&items[i]);
  }
  return -1;
}

ffk_array *ffk_array_new_steal(ffk_any *items, int64_t n) {
  if (n < 0 || (items == NULL && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make an Array from %lld items at %p", (long long)n, (void *)items);
    return NULL;
  }
  ffk_array *a = alloc_array(FFK_TYPE_ARRAY, n);
  if (a == NULL) {
    for (int64_t i = 0; i < n; ++i) {
      if (ffk_array__is_view(&items[i])) items[i] = ffk_any_none(); /* nothing to release */
      ffk_any_release(&items[i]);
    }
    return NULL;
  }
  int64_t moved;
  int rc = ffk_array__steal_into(a->data, items, n, &moved, "ffk_array_new_steal");
  a->size = moved; /* on failure the Array owns what moved, and releases it */
  if (rc == 0) return a;
  ffk_object_release(&a->header);
  return NULL;
}

ffk_array *ffk_array_with_capacity(int64_t capacity) { return alloc_array(FFK_TYPE_ARRAY, capacity); }

/* ---- Reading. --------------------------------------------------------------------- */

int ffk_array_get(const ffk_array *a, int64_t index, ffk_any *out) {
  *out = ffk_any_none();
  int64_t i = 0;
  if (normalise(a, index, &i) != 0) return -1;
  *out = a->data[i];
  ffk_any_retain(out);
  return 0;
}

int ffk_array_index(const ffk_array *a, const ffk_any *value, int64_t *out) {
  for (int64_t i = 0; i < a->size; ++i) {
    if (ffk_any_equal(&a->data[i], value)) {
      if (out) *out = i;
      return 1;
    }
  }
  return 0;
}

bool ffk_array_contains(const ffk_array *a, const ffk_any *value) { return ffk_array_index(a, value, NULL) == 1; }

void ffk_array__clamp_bounds(int64_t size, int64_t *start, int64_t *stop) {
  int64_t *bounds[2] = {start, stop};
  for (int b = 0; b < 2; ++b) {
    int64_t v = *bounds[b];
    if (v < 0) v = v < -size ? 0 : v + size;
    if (v > size) v = size;
    *bounds[b] = v;
  }
}

/* The text of a str or bytes value in any form; false for anything else. */
static bool text_of(const ffk_any *v, const char **data, size_t *size) {
  switch (v->type_index) {
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_SMALL_BYTES:
      *data = v->v_bytes;
      *size = v->aux;
      return true;
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES:
      if (v->v_obj == NULL) return false;
      *data = ((const ffk_string *)v->v_obj)->data; /* ffk_bytes is ffk_string */
      *size = ((const ffk_string *)v->v_obj)->size;
      return true;
    case FFK_TYPE_RAW_STR:
      *data = v->v_ptr != NULL ? (const char *)v->v_ptr : "";
      *size = strlen(*data);
      return true;
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = v->v_ptr;
      *data = b != NULL ? b->data : "";
      *size = b != NULL ? b->size : 0;
      return true;
    }
    default:
      return false;
  }
}

int ffk_array__find_leaf(const ffk_any *data, int64_t start, int64_t stop, const ffk_any *value, int64_t *out) {
  int32_t t = value->type_index;
  if (ffk_any_is_object(value) && t != FFK_TYPE_STRING && t != FFK_TYPE_BYTES) return -2;
  int64_t i = start;
  if (t == FFK_TYPE_INT) { /* the common case: one compare of the type and one of the payload */
    for (int64_t x = value->v_int; i < stop; ++i)
      if (data[i].type_index == FFK_TYPE_INT && data[i].v_int == x) break;
  } else {
    const char *text;
    size_t size;
    if (text_of(value, &text, &size)) { /* str or bytes: the content once, then size and bytes */
      bool is_str = t == FFK_TYPE_SMALL_STR || t == FFK_TYPE_STRING || t == FFK_TYPE_RAW_STR;
      int32_t inline_t = is_str ? FFK_TYPE_SMALL_STR : FFK_TYPE_SMALL_BYTES;
      int32_t object_t = is_str ? FFK_TYPE_STRING : FFK_TYPE_BYTES;
      for (; i < stop; ++i) {
        const ffk_any *e = &data[i];
        if (e->type_index == inline_t) {
          if (e->aux == size && memcmp(e->v_bytes, text, size) == 0) break;
        } else if (e->type_index == object_t && e->v_obj != NULL) {
          const ffk_string *s = (const ffk_string *)e->v_obj;
          if (s->size == size && (s->data == text || memcmp(s->data, text, size) == 0)) break;
        }
      }
    } else {
      for (; i < stop; ++i)
        if (ffk_any_equal(&data[i], value)) break;
    }
  }
  if (i >= stop) return 0;
  if (out) *out = i;
  return 1;
}

ffk_array *ffk_array_concat(const ffk_array *a, const ffk_array *b) {
  ffk_array *c = alloc_array(FFK_TYPE_ARRAY, a->size + b->size);
  if (c == NULL) return NULL;
  memcpy(c->data, a->data, (size_t)a->size * sizeof(ffk_any));
  memcpy(c->data + a->size, b->data, (size_t)b->size * sizeof(ffk_any));
  c->size = a->size + b->size;
  for (int64_t i = 0; i < c->size; ++i) ffk_any_retain(&c->data[i]);
  return c;
}

int64_t ffk_array__adjust_slice(int64_t size, int64_t *start, int64_t *stop, int64_t step) {
  int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? size : size - 1;
  int64_t *bounds[2] = {start, stop};
  for (int k = 0; k < 2; ++k) {
    int64_t v = *bounds[k];
    if (v < 0) v = v < -size ? lower : v + size;
    if (v < lower) v = lower;
    if (v > upper) v = upper;
    *bounds[k] = v;
  }
  if (step > 0) return *stop > *start ? (*stop - *start - 1) / step + 1 : 0;
  return *stop < *start ? (*start - *stop - 1) / (-step) + 1 : 0;
}

ffk_array *ffk_array__slice_items(const ffk_any *data, int64_t size, int64_t start, int64_t stop, int64_t step) {
  if (step == 0) {
    ffk_error_set(FFK_ERR_VALUE, "slice step cannot be zero");
    return NULL;
  }
  if (step == INT64_MIN) step = -INT64_MAX; /* -step must not overflow */
  int64_t n = ffk_array__adjust_slice(size, &start, &stop, step);
  ffk_array *s = alloc_array(FFK_TYPE_ARRAY, n);
  if (s == NULL) return NULL;
  for (int64_t k = 0; k < n; ++k) {
    s->data[k] = data[start + k * step]; /* an element's index: no overflow, unlike one step past the last */
    ffk_any_retain(&s->data[k]);
  }
  s->size = n;
  return s;
}

ffk_array *ffk_array_slice(const ffk_array *a, int64_t start, int64_t stop, int64_t step) {
  return ffk_array__slice_items(a->data, a->size, start, stop, step);
}

/* ---- Mutation. -------------------------------------------------------------------- */

int ffk_array_set(ffk_array **pa, int64_t index, const ffk_any *value) {
  if (check_handle(pa, "ffk_array_set") != 0) return -1;
  int64_t i;
  if (normalise(*pa, index, &i) != 0) return -1;
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  ffk_array *w = writable(pa, (*pa)->size);
  if (w == NULL) {
    ffk_any_release(&owned);
    return -1;
  }
  ffk_any old = w->data[i];
  w->data[i] = owned; /* store the new value before releasing the old one */
  commit(pa, w);
  ffk_any_release(&old);
  return 0;
}

int ffk_array_push_steal(ffk_array **pa, ffk_any *value) {
  if (ffk_array__is_view(value)) {
    ffk_error_set(FFK_ERR_TYPE, "ffk_array_push_steal: a borrowed %s view owns nothing", ffk_any_type_name(value));
    *value = ffk_any_none(); /* nothing to release */
    return -1;
  }
  if (check_resizable(pa, "ffk_array_push") != 0) {
    ffk_any_release(value);
    return -1;
  }
  ffk_array *a = *pa;
  ffk_array *w = (a->size < a->capacity && ffk_object_is_unique(&a->header)) ? a : writable(pa, a->size + 1);
  if (w == NULL) {
    ffk_any_release(value);
    return -1;
  }
  w->data[w->size++] = *value;
  *value = ffk_any_none();
  commit(pa, w);
  return 0;
}

/* The parentheses keep array.h's inline macro off the definition. */
int (ffk_array_push)(ffk_array **pa, const ffk_any *value) {
  if (check_resizable(pa, "ffk_array_push") != 0) return -1;
  ffk_array *a = *pa;
  /* The fast path: a plain value or object into a unique array with room. */
  if (FFK_LIKELY(!ffk_array__is_view(value) && a->size < a->capacity && ffk_object_is_unique(&a->header))) {
    ffk_any__copy(&a->data[a->size], value);
    if (ffk_any_is_object(value)) ffk_any_retain(value);
    ++a->size;
    return 0;
  }
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  return ffk_array_push_steal(pa, &owned);
}

int ffk_array_pop(ffk_array **pa, int64_t index, ffk_any *out) {
  *out = ffk_any_none();
  if (check_resizable(pa, "ffk_array_pop") != 0) return -1;
  if ((*pa)->size == 0) return ffk_error_set(FFK_ERR_INDEX, "pop from empty Array");
  int64_t i;
  if (normalise(*pa, index, &i) != 0) return -1;
  ffk_array *w = writable(pa, (*pa)->size);
  if (w == NULL) return -1;
  *out = w->data[i];
  memmove(w->data + i, w->data + i + 1, (size_t)(w->size - i - 1) * sizeof(ffk_any));
  --w->size;
  commit(pa, w);
  return 0;
}

int ffk_array_insert(ffk_array **pa, int64_t index, const ffk_any *value) {
  if (check_resizable(pa, "ffk_array_insert") != 0) return -1;
  int64_t size = (*pa)->size;
  int64_t i = index < 0 ? index + size : index;
  if (i < 0) i = 0;
  if (i > size) i = size;
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  ffk_array *w = writable(pa, size + 1);
  if (w == NULL) {
    ffk_any_release(&owned);
    return -1;
  }
  memmove(w->data + i + 1, w->data + i, (size_t)(size - i) * sizeof(ffk_any));
  w->data[i] = owned;
  ++w->size;
  commit(pa, w);
  return 0;
}

int ffk_array_erase(ffk_array **pa, int64_t begin, int64_t end) {
  if (check_resizable(pa, "ffk_array_erase") != 0) return -1;
  ffk_array *a = *pa;
  if (begin < 0 || begin > end || end > a->size)
    return ffk_error_set(FFK_ERR_INDEX, "Array erase range [%lld, %lld) out of range for size %lld", (long long)begin,
                         (long long)end, (long long)a->size);
  if (begin == end) return 0;
  if (!ffk_object_is_unique(&a->header)) {
    /* Copy only what stays: nothing to release in the copy. */
    ffk_array *c = alloc_array(FFK_TYPE_ARRAY, a->size - (end - begin));
    if (c == NULL) return -1;
    memcpy(c->data, a->data, (size_t)begin * sizeof(ffk_any));
    memcpy(c->data + begin, a->data + end, (size_t)(a->size - end) * sizeof(ffk_any));
    c->size = a->size - (end - begin);
    for (int64_t i = 0; i < c->size; ++i) ffk_any_retain(&c->data[i]);
    commit(pa, c);
    return 0;
  }
  /* Unique: no one else can observe the array while the removed elements are released. */
  for (int64_t i = begin; i < end; ++i) ffk_any_release(&a->data[i]);
  memmove(a->data + begin, a->data + end, (size_t)(a->size - end) * sizeof(ffk_any));
  a->size -= end - begin;
  return 0;
}

int ffk_array_resize(ffk_array **pa, int64_t n) {
  if (check_resizable(pa, "ffk_array_resize") != 0) return -1;
  if (n < 0) return ffk_error_set(FFK_ERR_VALUE, "Array size %lld is negative", (long long)n);
  int64_t size = (*pa)->size;
  if (n < size) return ffk_array_erase(pa, n, size);
  ffk_array *w = writable(pa, n);
  if (w == NULL) return -1;
  for (int64_t i = size; i < n; ++i) w->data[i] = ffk_any_none();
  w->size = n;
  commit(pa, w);
  return 0;
}

int ffk_array_reserve(ffk_array **pa, int64_t capacity) {
  if (check_resizable(pa, "ffk_array_reserve") != 0) return -1;
  if (capacity < 0) return ffk_error_set(FFK_ERR_VALUE, "Array capacity %lld is negative", (long long)capacity);
  ffk_array *w = writable(pa, capacity);
  if (w == NULL) return -1;
  commit(pa, w);
  return 0;
}

int ffk_array_extend(ffk_array **pa, const ffk_any *items, int64_t n) {
  if (check_resizable(pa, "ffk_array_extend") != 0) return -1;
  if (n < 0 || (items == NULL && n > 0))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_array_extend: %lld items at %p", (long long)n, (const void *)items);
  bool has_views = false;
  for (int64_t i = 0; i < n; ++i) {
    if (items[i].type_index == FFK_TYPE_DLTENSOR_PTR)
      return ffk_error_set(FFK_ERR_TYPE, "a DLTensor* view cannot be stored (item %lld)", (long long)i);
    has_views = has_views || ffk_array__is_view(&items[i]);
  }
  /*
   * Everything that can fail happens before the array changes: views are turned into
   * owned values first (growing a unique array moves it, so nothing may fail after).
   */
  ffk_any *owned = NULL;
  if (has_views) {
    owned = ffk_mem_alloc((size_t)n * sizeof(ffk_any));
    if (owned == NULL) return -1;
    for (int64_t i = 0; i < n; ++i) {
      if (ffk_any_to_owned(&items[i], &owned[i]) != 0) {
        for (int64_t k = 0; k < i; ++k) ffk_any_release(&owned[k]);
        ffk_mem_free(owned);
        return -1;
      }
    }
  }
  /* Without views, items may point into the array itself, which may move or be copied. */
  ffk_array *a = *pa;
  bool aliased = !has_views && n > 0 && items >= a->data && items < a->data + a->size;
  int64_t offset = aliased ? items - a->data : 0;
  int64_t size = a->size;
  ffk_array *w = writable(pa, size + n);
  if (w == NULL) {
    for (int64_t k = 0; owned != NULL && k < n; ++k) ffk_any_release(&owned[k]);
    ffk_mem_free(owned);
    return -1;
  }
  if (owned != NULL) {
    memcpy(w->data + size, owned, (size_t)n * sizeof(ffk_any)); /* moves ownership */
    ffk_mem_free(owned);
  } else {
    const ffk_any *src = aliased ? w->data + offset : items;
    memcpy(w->data + size, src, (size_t)n * sizeof(ffk_any));
    for (int64_t i = 0; i < n; ++i) ffk_any_retain(&w->data[size + i]);
  }
  w->size = size + n;
  commit(pa, w);
  return 0;
}

/* ---- Tuple. ----------------------------------------------------------------------- */

ffk_tuple *ffk_tuple_new(int64_t n, const ffk_any *items) { return new_typed(FFK_TYPE_TUPLE, items, n); }

ffk_tuple *ffk_tuple_pack(int64_t n, ...) {
  if (n < 0 || n > 64) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_tuple_pack packs 0 to 64 values, not %lld", (long long)n);
    return NULL;
  }
  ffk_any items[64];
  va_list ap;
  va_start(ap, n);
  for (int64_t i = 0; i < n; ++i) items[i] = va_arg(ap, ffk_any);
  va_end(ap);
  return ffk_tuple_new(n, items);
}

int ffk_tuple_set(ffk_tuple **t, int64_t index, const ffk_any *value) {
  if (check_handle(t, "ffk_tuple_set") != 0) return -1;
  if ((*t)->header.type_index != FFK_TYPE_TUPLE)
    return ffk_error_set(FFK_ERR_TYPE, "ffk_tuple_set: expected Tuple but got %s", ffk_type_name((*t)->header.type_index));
  return ffk_array_set(t, index, value);
}

/* ---- repr: (1, 2, 3), (1,), () for Array and Tuple; [1, 2, 3] for List ----------- */

int ffk_array__repr_items(ffk_repr_ctx *ctx, const ffk_any *data, int64_t n, bool list_style) {
  if (ffk_repr_append(ctx, list_style ? "[" : "(", 1) != 0) return -1;
  for (int64_t i = 0; i < n; ++i) {
    if ((i > 0 && ffk_repr_append(ctx, ", ", 2) != 0) || ffk_repr_any(ctx, &data[i]) != 0) return -1;
  }
  if (!list_style && n == 1 && ffk_repr_append(ctx, ",", 1) != 0) return -1;
  return ffk_repr_append(ctx, list_style ? "]" : ")", 1);
}

int ffk_array__repr(ffk_object *self, ffk_repr_ctx *ctx) {
  const ffk_array *a = (const ffk_array *)self;
  return ffk_array__repr_items(ctx, a->data, a->size, false);
}
