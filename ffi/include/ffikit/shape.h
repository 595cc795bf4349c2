/*
 * ffikit/shape.h - Shape: an immutable vector of int64 (type 69).
 *
 * The dimensions follow the header in the same allocation; `data`/`size` match
 * TVM-FFI's ShapeObj. The product of the dimensions is computed once, at creation.
 */
#ifndef FFIKIT_SHAPE_H
#define FFIKIT_SHAPE_H

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_shape {
  ffk_object header;
  const int64_t *data; /* the dimensions, `size` of them */
  size_t size;
  int64_t product;     /* product of the dimensions (1 when size == 0) */
} ffk_shape;

/*
 * A new Shape holding a copy of `ndim` dimensions (dims may be NULL when ndim is 0).
 * Dimensions may be negative (placeholders such as -1 in a reshape request).
 * Returns a new reference, or NULL with a ValueError (dims NULL with ndim > 0, or the
 * product overflowing int64, naming the dimension where it did; a shape with a zero
 * dimension has product 0 and never overflows) or a MemoryError. ffk_any_repr prints
 * Shape(2, 3), and Shape() for 0 dimensions.
 */
FFK_API ffk_shape *ffk_shape_new(const int64_t *dims, size_t ndim);

/* The number of dimensions. */
static inline size_t ffk_shape_size(const ffk_shape *s) { return s->size; }

/* The dimensions, borrowed from `s`. */
static inline const int64_t *ffk_shape_data_borrow(const ffk_shape *s) { return s->data; }

/* The product of the dimensions (1 for a 0-d shape). */
static inline int64_t ffk_shape_product(const ffk_shape *s) { return s->product; }

/*
 * Dimension `index`; negative indices count from the end as in Python. Returns 0, or
 * -1 with an IndexError "Shape index 5 out of range for size 2".
 */
FFK_API int ffk_shape_get(const ffk_shape *s, int64_t index, int64_t *out);

/* True when both shapes have the same dimensions. Cannot fail. */
FFK_API bool ffk_shape_equal(const ffk_shape *a, const ffk_shape *b);

FFK_EXTERN_C_END

#endif /* FFIKIT_SHAPE_H */
