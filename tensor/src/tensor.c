/*
 * tensor.c - Tensor objects: creation, metadata, views with bounds checks, and repr.
 *
 * Every view is made by one path, make_view, which checks that all elements of the new
 * shape and strides fall inside the bytes of the storage before creating the Tensor, so
 * no Tensor can ever address memory its storage does not own. Arithmetic on shapes and
 * offsets is overflow-checked.
 */
#include "tensor_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * Small CPU tensors (ffk_tensor_empty and ffk_tensor_zeros of up to FUSED_MAX bytes
 * while the built-in CPU allocator is in place) are one block: the Tensor with its
 * dims, a fused_tail holding the Storage, then the bytes, aligned. Making one is one
 * malloc. The Tensor and the Storage keep their own counts, since a view or a caller
 * may hold the Storage longer than the Tensor; `parties` counts which of the two still
 * use the block, and the last one gives it back. A Tensor that dies holding the only
 * reference to its Storage, the usual case, takes the Storage down itself without an
 * atomic operation.
 */
#define FUSED_MAX 256

typedef struct fused_tail {
  ffk_storage storage;
  int32_t parties; /* 2, 1 or 0: the Tensor and the Storage, until each is freed */
} fused_tail;

static size_t tensor_size(int32_t ndim) { return sizeof(ffk_tensor) + 2 * (size_t)ndim * sizeof(int64_t); }

/* Where a fused block's tail starts: after the Tensor and its dims. */
static size_t tail_offset(int32_t ndim) {
  return (tensor_size(ndim) + _Alignof(fused_tail) - 1) & ~(_Alignof(fused_tail) - 1);
}

static fused_tail *tail_of(ffk_tensor *t) { return (fused_tail *)((char *)t + tail_offset(t->dl.ndim)); }

/* One of the block's two objects is freed: the last gives the block back. */
static void fused_leave(void *block) {
  fused_tail *tail = tail_of(block);
  if (__atomic_load_n(&tail->parties, __ATOMIC_ACQUIRE) == 1 ||
      __atomic_sub_fetch(&tail->parties, 1, __ATOMIC_ACQ_REL) == 0)
    ffk_mem_free(block);
}

/* The DESTROY step of a fused Tensor: drop its Storage, or take it down when nobody else can see it. */
static void fused_drop_storage(ffk_tensor *t) {
  fused_tail *tail = tail_of(t);
  if (__atomic_load_n(&tail->storage.header.refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT) { /* is_unique */
    ffk_storage__drop_embedded(&tail->storage);
    __atomic_store_n(&tail->parties, 1, __ATOMIC_RELAXED); /* the Storage has left */
  } else {
    ffk_object_release(&tail->storage.header);
  }
}

static void tensor_deleter(void *self, int which) {
  ffk_tensor *t = self;
  if (which & FFK_DELETER_DESTROY) {
    if (t->fused) fused_drop_storage(t);
    else ffk_object_release((ffk_object *)t->storage);
    t->storage = NULL;
    if (t->base != NULL) ffk_object_release((ffk_object *)t->base);
    t->base = NULL;
    if (t->owner_release != NULL) {
      void (*release)(void *) = t->owner_release;
      t->owner_release = NULL; /* exactly once */
      release(t->owner);
    }
  }
  if (which & FFK_DELETER_FREE) {
    ffk_object_forget(&t->header);
    if (t->fused) fused_leave(t);
    else ffk_mem_free(t);
  }
}

/*
 * Fills every field of a new Tensor after its header except the dims, which the caller
 * writes; `storage` is taken as given (no retain).
 */
static void tensor_init(ffk_tensor *t, ffk_storage *storage, void *data, DLDevice device, int32_t ndim,
                        uint64_t byte_offset, DLDataType dtype) {
  t->dl = (DLTensor){.data = data, .device = device, .ndim = ndim, .dtype = dtype, .shape = t->dims,
                     .strides = t->dims + ndim, .byte_offset = byte_offset};
  t->storage = storage;
  t->owner = NULL;
  t->owner_release = NULL;
  t->base = NULL;
  t->read_only = false;
  t->fused = false;
}

/*
 * The block of a Tensor with `ndim` dimensions, its header set up; tensor_init and the
 * caller write every other field, so nothing is zeroed first (ffk_object_alloc would). The
 * deleter gives it back with ffk_object_forget and ffk_mem_free. NULL with a MemoryError.
 */
static ffk_tensor *tensor_alloc(int32_t ndim) {
  ffk_tensor *t = ffk_mem_alloc(tensor_size(ndim));
  if (t != NULL) ffk_object_init(&t->header, FFK_TYPE_TENSOR, tensor_deleter); /* cannot fail: a built-in type */
  return t;
}

ffk_tensor *ffk_tensor__new(ffk_storage *storage, void *data, DLDevice device, int32_t ndim, const int64_t *shape,
                            const int64_t *strides, uint64_t byte_offset, DLDataType dtype) {
  ffk_tensor *t = tensor_alloc(ndim);
  if (t == NULL) return NULL;
  tensor_init(t, storage, data, device, ndim, byte_offset, dtype);
  if (ndim > 0) {
    memcpy(t->dims, shape, (size_t)ndim * sizeof(int64_t));
    memcpy(t->dims + ndim, strides, (size_t)ndim * sizeof(int64_t));
  }
  if (storage != NULL) ffk_object_retain((ffk_object *)storage);
  return t;
}

/* Writes `shape` and its row-major strides into t->dims. */
static void set_contiguous_dims(ffk_tensor *t, int32_t ndim, const int64_t *shape) {
  int64_t step = 1;
  for (int32_t i = ndim - 1; i > 0; --i) {
    t->dims[i] = shape[i];
    t->dims[ndim + i] = step;
    step *= shape[i] > 1 ? shape[i] : 1; /* fits: ffk_tensor__contiguous_nbytes checked it */
  }
  if (ndim > 0) {
    t->dims[0] = shape[0];
    t->dims[ndim] = step;
  }
}

ffk_tensor *ffk_tensor__new_compact(void *data, DLDevice device, int32_t ndim, const int64_t *shape, DLDataType dtype) {
  ffk_tensor *t = tensor_alloc(ndim);
  if (t == NULL) return NULL;
  tensor_init(t, NULL, data, device, ndim, 0, dtype);
  set_contiguous_dims(t, ndim, shape);
  return t;
}

/* A contiguous CPU tensor of `nbytes` (at most FUSED_MAX) in one block; see above. */
static ffk_tensor *fused_new(DLDevice device, int32_t ndim, const int64_t *shape, DLDataType dtype, size_t nbytes,
                             bool zero) {
  enum { ALIGN = FFK_STORAGE_DEFAULT_ALIGNMENT };
  size_t at = tail_offset(ndim);
  ffk_tensor *t = ffk_mem_alloc(at + sizeof(fused_tail) + ALIGN - 1 + nbytes);
  if (t == NULL) return NULL;
  fused_tail *tail = (fused_tail *)((char *)t + at);
  void *data = (void *)(((uintptr_t)(tail + 1) + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
  if (zero) memset(data, 0, nbytes);
  ffk_object_init(&t->header, FFK_TYPE_TENSOR, tensor_deleter); /* cannot fail: a built-in type */
  tensor_init(t, &tail->storage, data, device, ndim, 0, dtype);
  t->fused = true;
  set_contiguous_dims(t, ndim, shape);
  tail->parties = 2;
  ffk_storage__init_embedded(&tail->storage, device, data, nbytes, fused_leave, t);
  return t;
}

bool ffk_tensor__holds(DLDataType dtype) {
  if (dtype.lanes == 1) return dtype.bits != 0 && dtype.bits % 8 == 0;
  return dtype.lanes > 1 && dtype.bits < 8 && dtype.bits * (unsigned)dtype.lanes == 8; /* float4_e2m1fn_x2 */
}

size_t ffk_tensor__element_size(DLDataType dtype) {
  if (FFK_LIKELY(ffk_tensor__holds(dtype))) return ffk_dtype_itemsize(dtype);
  char name[FFK_DTYPE_STR_MAX];
  ffk_dtype_format(dtype, name, sizeof name);
  if (dtype.lanes != 1)
    ffk_error_set(FFK_ERR_VALUE,
                  "tensors cannot hold dtype %s: an element has one lane, and %s has %u (vector dtypes are not "
                  "supported)",
                  name, name, (unsigned)dtype.lanes);
  else
    ffk_error_set(FFK_ERR_VALUE, "tensors cannot hold dtype %s: its elements are %u bits, not a whole number of bytes",
                  name, (unsigned)dtype.bits);
  return 0;
}

/* Formats "[2, 3]" for messages. */
static const char *format_dims(char *buf, size_t cap, int32_t n, const int64_t *v) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < n && len < cap; ++i) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

static FFK_NOINLINE int strides_overflow(const char *what, int32_t ndim, const int64_t *shape) {
  char buf[512];
  return ffk_error_set(FFK_ERR_VALUE, "%s%sthe contiguous strides of shape %s do not fit in 64 bits",
                       what ? what : "", what ? ": " : "", format_dims(buf, sizeof buf, ndim, shape));
}

int ffk_tensor__contiguous_strides(const char *what, int32_t ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  bool overflow = false;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    if (i > 0) overflow |= __builtin_mul_overflow(s, shape[i] > 1 ? shape[i] : 1, &s);
  }
  return overflow ? strides_overflow(what, ndim, shape) : 0;
}

/*
 * The shape rule (ffk_tensor_check_shape). The checks are split so that the usual case,
 * a good shape, is one loop with no formatting; every error is raised by check_shape_error,
 * which walks the same checks again in their documented order and names the first that
 * fails.
 */

/* "what: " or nothing, for the front of a message. */
#define WHAT_FMT "%s%s"
#define WHAT_ARGS(what) (what) ? (what) : "", (what) ? ": " : ""

/* The bytes [*first, *end) relative to the first element; see element_extent below. */
static bool element_extent(int32_t ndim, const int64_t *shape, const int64_t *strides, int64_t elsize, int64_t offset,
                           int64_t *first, int64_t *end);

static FFK_NOINLINE int check_shape_error(const char *what, int64_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dtype) {
  char buf[512], sbuf[512];
  if (ndim < 0 || ndim > FFK_TENSOR_MAX_NDIM)
    return ffk_error_set(FFK_ERR_VALUE, WHAT_FMT "shape has %lld dimensions; a tensor has 0 to %d", WHAT_ARGS(what),
                         (long long)ndim, FFK_TENSOR_MAX_NDIM);
  int32_t n = (int32_t)ndim;
  if (n > 0 && shape == NULL)
    return ffk_error_set(FFK_ERR_VALUE, WHAT_FMT "the shape of a %d-d tensor is NULL", WHAT_ARGS(what), (int)n);
  for (int32_t i = 0; i < n; ++i)
    if (shape[i] < 0)
      return ffk_error_set(FFK_ERR_VALUE, WHAT_FMT "shape[%d] is %lld, and a dimension cannot be negative", WHAT_ARGS(what),
                           (int)i, (long long)shape[i]);
  if (ffk_tensor__element_size(dtype) == 0) {
    if (what != NULL) { /* the user's operation first: re-raise with it in front */
      ffk_error *err = ffk_error_fetch();
      ffk_error_set(FFK_ERR_VALUE, "%s: %s", what, err != NULL ? ffk_error_message(err) : "bad dtype");
      ffk_object_release((ffk_object *)err);
    }
    return -1;
  }
  int64_t numel = 1, nbytes;
  for (int32_t i = 0; i < n; ++i)
    if (__builtin_mul_overflow(numel, shape[i], &numel))
      return ffk_error_set(FFK_ERR_VALUE, WHAT_FMT "shape %s has more elements than fit in 64 bits", WHAT_ARGS(what),
                           format_dims(buf, sizeof buf, n, shape));
  char name[FFK_DTYPE_STR_MAX];
  ffk_dtype_format(dtype, name, sizeof name);
  if (__builtin_mul_overflow(numel, (int64_t)ffk_dtype_itemsize(dtype), &nbytes))
    return ffk_error_set(FFK_ERR_VALUE, WHAT_FMT "shape %s of %s has more bytes than fit in 64 bits", WHAT_ARGS(what),
                         format_dims(buf, sizeof buf, n, shape), name);
  if (strides == NULL) {
    int64_t contiguous[FFK_TENSOR_MAX_NDIM];
    if (ffk_tensor__contiguous_strides(what, n, shape, contiguous) != 0) return -1;
  } else {
    int64_t first, end;
    if (!element_extent(n, shape, strides, (int64_t)ffk_dtype_itemsize(dtype), 0, &first, &end))
      return ffk_error_set(FFK_ERR_VALUE,
                           WHAT_FMT "shape %s with strides %s of %s reaches 2^63 bytes or more from its first element",
                           WHAT_ARGS(what), format_dims(buf, sizeof buf, n, shape),
                           format_dims(sbuf, sizeof sbuf, n, strides), name);
  }
  /* Only reached when the checks above found nothing: a caller must never see 0 from here. */
  return ffk_error_set(FFK_ERR_RUNTIME, WHAT_FMT "the shape rule disagrees with itself about shape %s (a bug)",
                       WHAT_ARGS(what), format_dims(buf, sizeof buf, n, shape));
}

int ffk_tensor_check_shape(const char *what, int64_t ndim, const int64_t *shape, const int64_t *strides,
                           DLDataType dtype, int64_t *numel_out, int64_t *nbytes_out) {
  if (FFK_UNLIKELY(ndim < 0 || ndim > FFK_TENSOR_MAX_NDIM || (ndim > 0 && shape == NULL) || !ffk_tensor__holds(dtype)))
    return check_shape_error(what, ndim, shape, strides, dtype);
  int32_t n = (int32_t)ndim;
  int64_t numel = 1, nbytes;
  bool bad = false;
  for (int32_t i = 0; i < n; ++i) bad |= shape[i] < 0 || __builtin_mul_overflow(numel, shape[i], &numel);
  /* The bytes from the count, not dimension by dimension: [2^62, 0] of float32 has 0 bytes
   * although 4 * 2^62 does not fit (found by tensor_shape_fuzzer: the two ways disagreed). */
  bad |= __builtin_mul_overflow(numel, (int64_t)ffk_dtype_itemsize(dtype), &nbytes);
  if (FFK_UNLIKELY(bad)) return check_shape_error(what, ndim, shape, strides, dtype);
  if (strides == NULL) {
    /* No elements: the strides are not bounded by the size and may not fit (each is at most the size otherwise). */
    if (FFK_UNLIKELY(numel == 0 && n > 1)) {
      int64_t contiguous[FFK_TENSOR_MAX_NDIM];
      if (ffk_tensor__contiguous_strides(what, n, shape, contiguous) != 0) return -1;
    }
  } else if (numel > 0) {
    int64_t first, end;
    if (!element_extent(n, shape, strides, (int64_t)ffk_dtype_itemsize(dtype), 0, &first, &end))
      return check_shape_error(what, ndim, shape, strides, dtype);
  }
  if (numel_out != NULL) *numel_out = numel;
  if (nbytes_out != NULL) *nbytes_out = nbytes;
  return 0;
}

int64_t ffk_tensor__contiguous_nbytes(const char *what, int32_t ndim, const int64_t *shape, DLDataType dtype) {
  int64_t nbytes;
  return ffk_tensor_check_shape(what, ndim, shape, NULL, dtype, NULL, &nbytes) == 0 ? nbytes : -1;
}

static ffk_tensor *new_tensor(const char *what, int32_t ndim, const int64_t *shape, DLDataType dtype, DLDevice device,
                              bool zero) {
  int64_t nbytes = ffk_tensor__contiguous_nbytes(what, ndim, shape, dtype);
  if (nbytes < 0) return NULL;
  if (device.device_type == kDLCPU && device.device_id >= 0 && nbytes <= FUSED_MAX && ffk_storage__cpu_is_builtin())
    return fused_new(device, ndim, shape, dtype, (size_t)nbytes, zero);
  ffk_storage *s = zero ? ffk_storage_new_zeroed(device, (size_t)nbytes, 0) : ffk_storage_new(device, (size_t)nbytes, 0);
  if (s == NULL) return NULL;
  ffk_tensor *t = tensor_alloc(ndim);
  if (t == NULL) {
    ffk_object_release((ffk_object *)s);
    return NULL;
  }
  tensor_init(t, s, ffk_storage_data(s), device, ndim, 0, dtype); /* takes our reference */
  set_contiguous_dims(t, ndim, shape);
  return t;
}

ffk_tensor *ffk_tensor_empty(int32_t ndim, const int64_t *shape, DLDataType dtype, DLDevice device) {
  return new_tensor("empty", ndim, shape, dtype, device, false);
}

ffk_tensor *ffk_tensor_zeros(int32_t ndim, const int64_t *shape, DLDataType dtype, DLDevice device) {
  return new_tensor("zeros", ndim, shape, dtype, device, true);
}

ffk_tensor *ffk_tensor_new_shared(const char *name, int32_t ndim, const int64_t *shape, DLDataType dtype) {
  int64_t nbytes = ffk_tensor__contiguous_nbytes("empty_shared", ndim, shape, dtype);
  if (nbytes < 0) return NULL;
  ffk_storage *s = ffk_storage_new_shared(name, (size_t)nbytes);
  if (s == NULL) return NULL;
  ffk_tensor *t = ffk_tensor_from_storage(s, ndim, shape, NULL, 0, dtype);
  ffk_object_release((ffk_object *)s);
  return t;
}

/*
 * The bytes [*first, *end) that the elements of (shape, strides) starting `offset` bytes
 * in cover, relative to the same origin as offset. Strides may be negative: an element
 * may lie before the first one. Without elements nothing is covered ([offset, offset)),
 * whatever the strides. False when a product or sum overflows int64_t.
 */
static bool element_extent(int32_t ndim, const int64_t *shape, const int64_t *strides, int64_t elsize, int64_t offset,
                           int64_t *first, int64_t *end) {
  *first = *end = offset;
  for (int32_t i = 0; i < ndim; ++i)
    if (shape[i] == 0) return true;
  int64_t low = 0, high = 0; /* the furthest element indices below and above the first */
  bool overflow = false;
  for (int32_t i = 0; i < ndim; ++i) {
    int64_t step = 0;
    overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &step) ||
                (step < 0 ? __builtin_add_overflow(low, step, &low) : __builtin_add_overflow(high, step, &high));
  }
  overflow |= __builtin_mul_overflow(low, elsize, first) || __builtin_add_overflow(*first, offset, first) ||
              __builtin_add_overflow(high, 1, &high) || __builtin_mul_overflow(high, elsize, end) ||
              __builtin_add_overflow(*end, offset, end);
  return !overflow;
}

/*
 * Checks that every element of (shape, strides) starting `offset` bytes from `data` lies
 * within the bytes [lo, hi) from `data`, then makes the view. Strides may be negative.
 * A view whose first element lies before `data` (possible only inside an imported
 * tensor, whose producer's elements may lie on both sides of its data pointer) gets
 * that element's address as its data pointer and byte_offset 0, since DLPack's
 * byte_offset is unsigned. `what` names the operation in errors.
 */
static ffk_tensor *make_view(const char *what, ffk_storage *storage, void *data, DLDevice device, int64_t lo,
                             int64_t hi, int32_t ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                             DLDataType dtype) {
  if (ffk_tensor_check_shape(what, ndim, shape, strides, dtype, NULL, NULL) != 0) return NULL;
  size_t elsize = ffk_dtype_itemsize(dtype);
  char sb[512], tb[512];
  int64_t first, end;
  bool fits = element_extent(ndim, shape, strides, (int64_t)elsize, offset, &first, &end);
  if (!fits || (first != end && (first < lo || end > hi))) { /* first == end: no elements, nothing addressed */
    const char *where = fits && first < lo ? "before the start" : "past the end";
    ffk_error_set(FFK_ERR_VALUE,
                  "%s: shape %s with strides %s at byte offset %lld reaches byte %s%lld, %s of its storage of %lld "
                  "bytes",
                  what, format_dims(sb, sizeof sb, ndim, shape), format_dims(tb, sizeof tb, ndim, strides),
                  (long long)(offset - lo), fits ? "" : "> ", (long long)(!fits ? hi - lo : first < lo ? first - lo : end - lo),
                  where, (long long)(hi - lo));
    return NULL;
  }
  if (offset < 0) {
    /* Only inside an import: data is the producer's pointer, and the bytes before it are its elements. */
    data = (char *)data + offset;
    offset = 0;
  }
  return ffk_tensor__new(storage, data, device, ndim, shape, strides, (uint64_t)offset, dtype);
}

/* A view of `t` with new shape/strides/offset (in bytes from t's data pointer) over the same memory. */
static ffk_tensor *view_of(const char *what, const ffk_tensor *t, int32_t ndim, const int64_t *shape,
                           const int64_t *strides, int64_t offset) {
  int64_t lo = 0, hi;
  if (t->storage != NULL) {
    hi = (int64_t)ffk_storage_nbytes(t->storage); /* at most PTRDIFF_MAX */
  } else {
    /*
     * An imported tensor: its own elements are all that is known to be valid (import
     * checked that their extent fits). Without elements that is nothing, and its strides
     * may be anything, so they are not multiplied out. (A view of a view measures the
     * view: the base's extent is not kept.)
     */
    element_extent(t->dl.ndim, t->dl.shape, t->dl.strides, (int64_t)ffk_dtype_itemsize(t->dl.dtype),
                   (int64_t)t->dl.byte_offset, &lo, &hi);
  }
  ffk_tensor *v =
      make_view(what, t->storage, t->dl.data, t->dl.device, lo, hi, ndim, shape, strides, offset, t->dl.dtype);
  if (v != NULL && t->storage == NULL) {
    /* The memory belongs to an imported tensor's producer: keep that tensor alive. */
    v->base = t->base != NULL ? t->base : (ffk_tensor *)t;
    ffk_object_retain(&v->base->header);
  }
  if (v != NULL) v->read_only = t->read_only;
  return v;
}

ffk_tensor *ffk_tensor_from_storage(ffk_storage *storage, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                    uint64_t byte_offset, DLDataType dtype) {
  if (storage == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "from_storage: the storage is NULL");
    return NULL;
  }
  if (ffk_tensor_check_shape("from_storage", ndim, shape, strides, dtype, NULL, NULL) != 0) return NULL;
  int64_t contiguous[FFK_TENSOR_MAX_NDIM];
  if (strides == NULL) {
    if (ffk_tensor__contiguous_strides("from_storage", ndim, shape, contiguous) != 0) return NULL;
    strides = contiguous;
  }
  int64_t nbytes = (int64_t)ffk_storage_nbytes(storage);
  if (byte_offset > (uint64_t)nbytes) {
    ffk_error_set(FFK_ERR_VALUE, "from_storage: byte offset %llu is past the end of its storage of %lld bytes",
                  (unsigned long long)byte_offset, (long long)nbytes);
    return NULL;
  }
  return make_view("from_storage", storage, ffk_storage_data(storage), ffk_storage_device(storage), 0, nbytes, ndim,
                   shape, strides, (int64_t)byte_offset, dtype);
}

int ffk_tensor_check_bytes(const char *what, int32_t ndim, const int64_t *shape, DLDataType dtype, const void *data,
                           uint64_t nbytes) {
  if (what == NULL) what = "from bytes";
  int64_t need = ffk_tensor__contiguous_nbytes(what, ndim, shape, dtype);
  if (need < 0) return -1;
  if ((uint64_t)need != nbytes) {
    char name[FFK_DTYPE_STR_MAX], dims[512];
    ffk_dtype_format(dtype, name, sizeof name);
    return ffk_error_set(FFK_ERR_VALUE, "%s: the buffer has %llu bytes, but a %s tensor of shape %s has %lld", what,
                         (unsigned long long)nbytes, name, format_dims(dims, sizeof dims, ndim, shape), (long long)need);
  }
  if (nbytes > 0 && data == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "%s: the buffer of %llu bytes has no address", what, (unsigned long long)nbytes);
  return 1; /* at any address: the CPU loops read and write elements through memcpy (copy.c) */
}

const DLTensor *ffk_tensor_dltensor_borrow(const ffk_tensor *t) { return &t->dl; }
ffk_storage *ffk_tensor_storage_borrow(const ffk_tensor *t) { return t->storage; }

int64_t ffk_tensor_numel(const ffk_tensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->dl.ndim; ++i) n *= t->dl.shape[i];
  return n;
}

int64_t ffk_tensor_nbytes(const ffk_tensor *t) { return ffk_tensor_numel(t) * (int64_t)ffk_dtype_itemsize(t->dl.dtype); }

bool ffk_tensor_is_contiguous(const ffk_tensor *t) {
  if (ffk_tensor_numel(t) == 0) return true;
  int64_t expected = 1;
  for (int32_t i = t->dl.ndim - 1; i >= 0; --i) {
    if (t->dl.shape[i] == 1) continue;
    if (t->dl.strides[i] != expected) return false;
    expected *= t->dl.shape[i];
  }
  return true;
}

void *ffk_tensor_data_ptr(const ffk_tensor *t) {
  return t->dl.data == NULL ? NULL : (char *)t->dl.data + t->dl.byte_offset; /* NULL + n is undefined */
}

/* ---- Views ----------------------------------------------------------------------------- */

/*
 * Normalises a dimension index in [-n, n) (or [-n-1, n] when `inclusive`, for a new
 * dimension's position); -1 with an IndexError naming the operation and the index as given.
 */
static int norm_dim(const char *what, int32_t dim, int32_t ndim, bool inclusive, int32_t *out) {
  int32_t n = inclusive ? ndim + 1 : ndim;
  if (dim < -n || dim >= n) {
    if (n == 0)
      return ffk_error_set(FFK_ERR_INDEX, "%s: dimension %d is out of range for a tensor with 0 dimensions", what,
                           (int)dim);
    return ffk_error_set(FFK_ERR_INDEX, "%s: dimension %d is out of range for a tensor with %d dimensions (%d to %d)",
                         what, (int)dim, (int)ndim, (int)-n, (int)(n - 1));
  }
  *out = dim < 0 ? dim + n : dim;
  return 0;
}

int64_t ffk_tensor_size(const ffk_tensor *t, int32_t dim) {
  int32_t d = 0;
  if (norm_dim("size", dim, t->dl.ndim, false, &d) != 0) return -1;
  return t->dl.shape[d];
}

/* Sets "cannot reshape a tensor of shape [2, 3] (6 elements) to [-1, 4]": no size fits the -1. */
static void no_inferred_size(const ffk_tensor *t, int32_t ndim, const int64_t *shape) {
  char ab[512], bb[512];
  ffk_error_set(FFK_ERR_VALUE, "cannot reshape a tensor of shape %s (%lld elements) to %s",
                format_dims(ab, sizeof ab, t->dl.ndim, t->dl.shape), (long long)ffk_tensor_numel(t),
                format_dims(bb, sizeof bb, ndim, shape));
}

ffk_tensor *ffk_tensor_reshape(const ffk_tensor *t, int32_t ndim, const int64_t *shape) {
  char ab[512], bb[512];
  int64_t want[FFK_TENSOR_MAX_NDIM], known = 1, numel = ffk_tensor_numel(t);
  int32_t infer = -1;
  /*
   * The shape rule, with the one -1 (the inferred dimension) read as 1 for it: a
   * multiplicative identity, so the rule's element count is the product of the others.
   */
  bool readable = ndim >= 0 && ndim <= FFK_TENSOR_MAX_NDIM && (ndim == 0 || shape != NULL);
  for (int32_t i = 0; readable && i < ndim; ++i) {
    want[i] = shape[i];
    if (shape[i] == -1 && infer < 0) {
      infer = i;
      want[i] = 1;
    }
  }
  /* With a -1 the others must multiply to a divisor of numel: when they overflow (or only
     their bytes do) no dimension fits, and the message names the shape as given, -1 and all. */
  if (readable && infer >= 0) {
    bool negative = false, fit = true;
    int64_t others = 1;
    for (int32_t i = 0; i < ndim; ++i) {
      if (want[i] < 0) negative = true; /* the shape rule's message, below */
      else if (fit && __builtin_mul_overflow(others, want[i], &others)) fit = false;
    }
    if (!negative && (!fit || (numel > 0 && others > numel))) {
      no_inferred_size(t, ndim, shape);
      return NULL;
    }
  }
  if (ffk_tensor_check_shape("reshape", ndim, readable ? want : shape, NULL, t->dl.dtype, &known, NULL) != 0)
    return NULL;
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      no_inferred_size(t, ndim, shape);
      return NULL;
    }
    want[infer] = numel / known;
    known = numel;
  }
  if (known != numel) {
    ffk_error_set(FFK_ERR_VALUE, "cannot reshape a tensor of shape %s (%lld elements) to %s (%lld elements)",
                  format_dims(ab, sizeof ab, t->dl.ndim, t->dl.shape), (long long)numel,
                  format_dims(bb, sizeof bb, ndim, shape), (long long)known);
    return NULL;
  }
  if (!ffk_tensor_is_contiguous(t)) {
    ffk_error_set(FFK_ERR_VALUE,
                  "cannot reshape a non-contiguous tensor of shape %s with strides %s; make a contiguous copy first",
                  format_dims(ab, sizeof ab, t->dl.ndim, t->dl.shape),
                  format_dims(bb, sizeof bb, t->dl.ndim, t->dl.strides));
    return NULL;
  }
  int64_t strides[FFK_TENSOR_MAX_NDIM];
  if (ffk_tensor__contiguous_strides("reshape", ndim, want, strides) != 0) return NULL;
  return view_of("reshape", t, ndim, want, strides, (int64_t)t->dl.byte_offset);
}

ffk_tensor *ffk_tensor_slice(const ffk_tensor *t, int32_t dim, int64_t start, int64_t stop, int64_t step) {
  int32_t d = 0;
  if (t->dl.ndim == 0) { /* select's words: t[a:b] and t[i] of a 0-d tensor fail alike */
    ffk_error_set(FFK_ERR_INDEX, "a 0-d tensor cannot be indexed");
    return NULL;
  }
  if (norm_dim("slice", dim, t->dl.ndim, false, &d) != 0) return NULL;
  if (step < 1) {
    ffk_error_set(FFK_ERR_VALUE, "slice: step %lld is not positive", (long long)step);
    return NULL;
  }
  int64_t n = t->dl.shape[d];
  if (start < 0) start = start + n < 0 ? 0 : start + n;
  if (stop < 0) stop = stop + n < 0 ? 0 : stop + n;
  if (start > n) start = n;
  if (stop > n) stop = n;
  int64_t len = stop > start ? (stop - start - 1) / step + 1 : 0;
  int64_t shape[FFK_TENSOR_MAX_NDIM], strides[FFK_TENSOR_MAX_NDIM];
  memcpy(shape, t->dl.shape, (size_t)t->dl.ndim * sizeof(int64_t));
  memcpy(strides, t->dl.strides, (size_t)t->dl.ndim * sizeof(int64_t));
  shape[d] = len;
  /* Without elements, or with one along d, the products below need not fit (a huge step,
   * or an import's huge strides beside an empty dimension): nothing is addressed by them.
   * With two or more elements they are bounded by the tensor's span, which fits. */
  bool addressed = len > 0 && ffk_tensor_numel(t) > 0;
  if (len > 1 && addressed) strides[d] = t->dl.strides[d] * step;
  int64_t offset = (int64_t)t->dl.byte_offset +
                   (addressed ? start * t->dl.strides[d] * (int64_t)ffk_dtype_itemsize(t->dl.dtype) : 0);
  return view_of("slice", t, t->dl.ndim, shape, strides, offset);
}

ffk_tensor *ffk_tensor_select(const ffk_tensor *t, int32_t dim, int64_t index) {
  int32_t d = 0;
  if (t->dl.ndim == 0) {
    ffk_error_set(FFK_ERR_INDEX, "a 0-d tensor cannot be indexed");
    return NULL;
  }
  if (norm_dim("select", dim, t->dl.ndim, false, &d) != 0) return NULL;
  int64_t n = t->dl.shape[d];
  if (index < -n || index >= n) {
    ffk_error_set(FFK_ERR_INDEX, "index %lld is out of range for dimension %d of size %lld", (long long)index, (int)d,
                  (long long)n);
    return NULL;
  }
  if (index < 0) index += n;
  int64_t shape[FFK_TENSOR_MAX_NDIM], strides[FFK_TENSOR_MAX_NDIM];
  for (int32_t i = 0, j = 0; i < t->dl.ndim; ++i) {
    if (i == d) continue;
    shape[j] = t->dl.shape[i];
    strides[j++] = t->dl.strides[i];
  }
  /* Bounded by the tensor's span (index < n) when it has elements; without any, nothing is addressed. */
  bool addressed = ffk_tensor_numel(t) > 0;
  int64_t offset = (int64_t)t->dl.byte_offset +
                   (addressed ? index * t->dl.strides[d] * (int64_t)ffk_dtype_itemsize(t->dl.dtype) : 0);
  return view_of("select", t, t->dl.ndim - 1, shape, strides, offset);
}

/* Permutes with the dimension indices already normalised by the caller (`what` names the user's operation). */
static ffk_tensor *permute(const char *what, const ffk_tensor *t, const int32_t *perm) {
  int32_t n = t->dl.ndim;
  bool seen[FFK_TENSOR_MAX_NDIM] = {false};
  int64_t shape[FFK_TENSOR_MAX_NDIM], strides[FFK_TENSOR_MAX_NDIM];
  if (perm == NULL && n > 0) {
    ffk_error_set(FFK_ERR_VALUE, "%s: the permutation is NULL", what);
    return NULL;
  }
  for (int32_t i = 0; i < n; ++i) {
    int32_t p;
    if (norm_dim(what, perm[i], n, false, &p) != 0) return NULL;
    if (seen[p]) {
      ffk_error_set(FFK_ERR_VALUE, "%s: dimension %d appears twice", what, (int)perm[i]);
      return NULL;
    }
    seen[p] = true;
    shape[i] = t->dl.shape[p];
    strides[i] = t->dl.strides[p];
  }
  return view_of(what, t, n, shape, strides, (int64_t)t->dl.byte_offset);
}

ffk_tensor *ffk_tensor_permute(const ffk_tensor *t, int32_t n, const int64_t *perm) {
  int32_t ndim = t->dl.ndim, p32[FFK_TENSOR_MAX_NDIM];
  if (n != ndim) {
    ffk_error_set(FFK_ERR_VALUE, "permute: %d dimensions given for a tensor with %d", (int)n, (int)ndim);
    return NULL;
  }
  if (perm == NULL) return permute("permute", t, NULL);
  for (int32_t i = 0; i < n; ++i) {
    if (perm[i] < -ndim || perm[i] >= ndim) { /* out of range, int32 or not: the message of norm_dim */
      ffk_error_set(FFK_ERR_INDEX, "permute: dimension %lld is out of range for a tensor with %d dimensions (%d to %d)",
                    (long long)perm[i], (int)ndim, (int)-ndim, (int)(ndim - 1));
      return NULL;
    }
    p32[i] = (int32_t)perm[i];
  }
  return permute("permute", t, p32);
}

ffk_tensor *ffk_tensor_transpose(const ffk_tensor *t, int32_t d0, int32_t d1) {
  int32_t a = 0, b = 0, perm[FFK_TENSOR_MAX_NDIM];
  if (norm_dim("transpose", d0, t->dl.ndim, false, &a) != 0 || norm_dim("transpose", d1, t->dl.ndim, false, &b) != 0)
    return NULL;
  for (int32_t i = 0; i < t->dl.ndim; ++i) perm[i] = i;
  perm[a] = b;
  perm[b] = a;
  return permute("transpose", t, perm);
}

ffk_tensor *ffk_tensor_squeeze(const ffk_tensor *t, int32_t dim) {
  int32_t d = 0;
  if (norm_dim("squeeze", dim, t->dl.ndim, false, &d) != 0) return NULL;
  if (t->dl.shape[d] != 1) {
    ffk_error_set(FFK_ERR_VALUE, "squeeze: dimension %d has size %lld, not 1", (int)dim, (long long)t->dl.shape[d]);
    return NULL;
  }
  int64_t shape[FFK_TENSOR_MAX_NDIM], strides[FFK_TENSOR_MAX_NDIM];
  for (int32_t i = 0, j = 0; i < t->dl.ndim; ++i) {
    if (i == d) continue;
    shape[j] = t->dl.shape[i];
    strides[j++] = t->dl.strides[i];
  }
  return view_of("squeeze", t, t->dl.ndim - 1, shape, strides, (int64_t)t->dl.byte_offset);
}

ffk_tensor *ffk_tensor_unsqueeze(const ffk_tensor *t, int32_t dim) {
  int32_t d = 0;
  if (t->dl.ndim == FFK_TENSOR_MAX_NDIM) {
    ffk_error_set(FFK_ERR_VALUE, "unsqueeze: a tensor has at most %d dimensions", FFK_TENSOR_MAX_NDIM);
    return NULL;
  }
  if (norm_dim("unsqueeze", dim, t->dl.ndim, true, &d) != 0) return NULL;
  int64_t shape[FFK_TENSOR_MAX_NDIM], strides[FFK_TENSOR_MAX_NDIM];
  for (int32_t i = 0, j = 0; j <= t->dl.ndim; ++j) {
    if (j == d) {
      shape[j] = 1;
      /* PyTorch's choice: the stride that keeps the tensor contiguous if it was. A
       * dimension of size 1 works with any stride: 1 when that product overflows (the
       * tensor cannot have been contiguous then). */
      if (d == t->dl.ndim || __builtin_mul_overflow(t->dl.shape[d], t->dl.strides[d], &strides[j])) strides[j] = 1;
      continue;
    }
    shape[j] = t->dl.shape[i];
    strides[j] = t->dl.strides[i++];
  }
  return view_of("unsqueeze", t, t->dl.ndim + 1, shape, strides, (int64_t)t->dl.byte_offset);
}

ffk_tensor *ffk_tensor_as_strided(const ffk_tensor *t, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                  int64_t offset) {
  if (strides == NULL && ndim > 0) { /* the shape and strides themselves: make_view's ffk_tensor_check_shape */
    ffk_error_set(FFK_ERR_VALUE, "as_strided: the strides are NULL");
    return NULL;
  }
  int64_t elsize = (int64_t)ffk_dtype_itemsize(t->dl.dtype), bytes;
  if (offset < 0 || __builtin_mul_overflow(offset, elsize, &bytes) ||
      (t->storage == NULL && __builtin_add_overflow(bytes, (int64_t)t->dl.byte_offset, &bytes))) {
    ffk_error_set(FFK_ERR_VALUE, "as_strided: bad storage offset %lld", (long long)offset);
    return NULL;
  }
  /* imported: offsets count from its first element (byte_offset added above) */
  return view_of("as_strided", t, ndim, shape, strides, bytes);
}

/* ---- repr: float32[2, 3]@cpu:0 ------------------------------------------------------- */

int ffk_tensor__repr(ffk_object *self, ffk_repr_ctx *ctx) {
  const ffk_tensor *t = (const ffk_tensor *)self;
  char dtype[FFK_DTYPE_STR_MAX], dev[FFK_DEVICE_STR_MAX], dims[1024];
  ffk_dtype_format(t->dl.dtype, dtype, sizeof dtype);
  ffk_device_format(t->dl.device, dev, sizeof dev);
  return ffk_repr_appendf(ctx, "%s%s@%s", dtype, format_dims(dims, sizeof dims, t->dl.ndim, t->dl.shape), dev);
}

__attribute__((constructor)) static void register_repr(void) { ffk_type_set_repr(FFK_TYPE_TENSOR, ffk_tensor__repr); }
