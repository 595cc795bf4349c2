/*
 * shape.c - Shape: an immutable vector of int64 in one allocation.
 *
 * Invariant: `data` points just past the struct and `product` is the product of the
 * `size` dimensions, checked for int64 overflow at creation.
 */
#include "internal.h"

#include <string.h>

ffk_shape *ffk_shape_new(const int64_t *dims, size_t ndim) {
  if (dims == NULL && ndim > 0) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_shape_new: dims is NULL but ndim is %zu", ndim);
    return NULL;
  }
  if (ndim > (SIZE_MAX - sizeof(ffk_shape)) / sizeof(int64_t)) {
    ffk_error_set(FFK_ERR_MEMORY, "ffk_shape_new: %zu dimensions is too many", ndim);
    return NULL;
  }
  /* A zero dimension makes the product 0 however large the others are. */
  int64_t product = 1;
  for (size_t i = 0; i < ndim; ++i)
    if (dims[i] == 0) product = 0;
  for (size_t i = 0; i < ndim && product != 0; ++i) {
    if (__builtin_mul_overflow(product, dims[i], &product)) {
      ffk_error_set(FFK_ERR_VALUE, "Shape product overflows int64 at dimension %zu (%lld)", i, (long long)dims[i]);
      return NULL;
    }
  }
  ffk_shape *s = (ffk_shape *)ffk_object__alloc_uninit(FFK_TYPE_SHAPE, sizeof(ffk_shape) + ndim * sizeof(int64_t),
                                                      ffk_object__leaf_deleter);
  if (s == NULL) return NULL;
  int64_t *copy = (int64_t *)(s + 1);
  if (ndim) memcpy(copy, dims, ndim * sizeof(int64_t));
  s->data = copy;
  s->size = ndim;
  s->product = product;
  return s;
}

int ffk_shape_get(const ffk_shape *s, int64_t index, int64_t *out) {
  if (s == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_shape_get: shape is NULL");
  int64_t n = (int64_t)s->size;
  int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    return ffk_error_set(FFK_ERR_INDEX, "Shape index %lld out of range for size %lld", (long long)index,
                         (long long)n);
  *out = s->data[i];
  return 0;
}

bool ffk_shape_equal(const ffk_shape *a, const ffk_shape *b) {
  if (a == b) return true;
  if (a == NULL || b == NULL || a->size != b->size) return false;
  return a->size == 0 || memcmp(a->data, b->data, a->size * sizeof(int64_t)) == 0;
}
