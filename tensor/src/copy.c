/*
 * copy.c - contiguous copies, element-wise copies between tensors, and fill.
 *
 * On the CPU both copy and fill walk the destination in row-major order with an
 * odometer over the outer dimensions; the innermost dimension is a tight loop
 * specialised for 1, 2, 4 and 8-byte elements (or one memcpy when both sides are dense
 * along it). Device memory is reached through the allocators' copy routine, which moves
 * dense byte ranges; strided layouts on a device are staged through a dense tensor on
 * that side when the other side is the CPU.
 */
#include "tensor_internal.h"

#include <string.h>

static const DLDevice kCpu = {kDLCPU, 0};

static bool on_host(DLDevice d) { return d.device_type == kDLCPU || d.device_type == kDLCUDAHost; }

/* Copies `n` elements of `size` bytes from src (stride ss elements) to dst (stride ds). */
static void copy_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t size) {
  if (ds == 1 && ss == 1) {
    memcpy(dst, src, (size_t)n * size);
    return;
  }
  switch (size) {
#define ROW(T)                                                                 \
  for (int64_t i = 0; i < n; ++i) ((T *)dst)[i * ds] = ((const T *)src)[i * ss]; \
  return;
    case 1: ROW(uint8_t)
    case 2: ROW(uint16_t)
    case 4: ROW(uint32_t)
    case 8: ROW(uint64_t)
#undef ROW
    default:
      for (int64_t i = 0; i < n; ++i) memcpy(dst + i * ds * (int64_t)size, src + i * ss * (int64_t)size, size);
  }
}

/* Element-wise copy between two host tensors of one shape and element size. */
static void host_copy(const ffk_tensor *dst, const ffk_tensor *src, size_t size) {
  int32_t nd = dst->dl.ndim;
  if (ffk_tensor_numel(dst) == 0) return;
  char *d = ffk_tensor_data_ptr(dst);
  const char *s = ffk_tensor_data_ptr(src);
  if (nd == 0) {
    memcpy(d, s, size);
    return;
  }
  if (ffk_tensor_is_contiguous(dst) && ffk_tensor_is_contiguous(src)) {
    memcpy(d, s, (size_t)ffk_tensor_numel(dst) * size);
    return;
  }
  const int64_t *shape = dst->dl.shape, *dstr = dst->dl.strides, *sstr = src->dl.strides;
  int64_t index[FFK_TENSOR_MAX_NDIM] = {0};
  int64_t inner = shape[nd - 1];
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int32_t i = 0; i < nd - 1; ++i) {
      doff += index[i] * dstr[i];
      soff += index[i] * sstr[i];
    }
    copy_row(d + doff * (int64_t)size, dstr[nd - 1], s + soff * (int64_t)size, sstr[nd - 1], inner, size);
    int32_t i = nd - 2;
    for (; i >= 0; --i) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

/* The allocator that can copy to or from device `d`. */
static int device_copier(DLDevice d, ffk_allocator *out) {
  int rc = ffk_allocator_get((int32_t)d.device_type, out);
  if (rc < 0) return -1;
  if (rc == 0 || out->copy == NULL) {
    char dev[FFK_DEVICE_STR_MAX];
    ffk_device_format(d, dev, sizeof dev);
    return ffk_error_set(FFK_ERR_RUNTIME, "cannot copy to or from `%s`: no allocator with a copy routine for it", dev);
  }
  return 0;
}

static ffk_tensor *dense_like(const ffk_tensor *t, DLDevice device) {
  return ffk_tensor_empty(t->dl.ndim, t->dl.shape, t->dl.dtype, device);
}

int ffk_tensor_copy_from(ffk_tensor *dst, const ffk_tensor *src) {
  if (dst == NULL || src == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_tensor_copy_from: the %s tensor is NULL", dst == NULL ? "destination" : "source");
  char a[FFK_DTYPE_STR_MAX], b[FFK_DTYPE_STR_MAX];
  if (!ffk_dtype_equal(dst->dl.dtype, src->dl.dtype)) {
    ffk_dtype_format(dst->dl.dtype, a, sizeof a);
    ffk_dtype_format(src->dl.dtype, b, sizeof b);
    return ffk_error_set(FFK_ERR_VALUE, "ffk_tensor_copy_from: dtypes differ (%s destination, %s source)", a, b);
  }
  bool same = dst->dl.ndim == src->dl.ndim;
  for (int32_t i = 0; same && i < dst->dl.ndim; ++i) same = dst->dl.shape[i] == src->dl.shape[i];
  if (!same) {
    ffk_string *x = NULL, *y = NULL;
    ffk_any xv = ffk_any_object((ffk_object *)dst), yv = ffk_any_object((ffk_object *)src);
    x = ffk_any_repr(&xv);
    y = ffk_any_repr(&yv);
    ffk_any_release(&xv);
    ffk_any_release(&yv);
    int rc = ffk_error_set(FFK_ERR_VALUE, "ffk_tensor_copy_from: shapes differ (destination %s, source %s)",
                           x ? x->data : "?", y ? y->data : "?");
    ffk_object_release((ffk_object *)x);
    ffk_object_release((ffk_object *)y);
    return rc;
  }
  size_t size = dst->dl.dtype.bits / 8;
  if (on_host(dst->dl.device) && on_host(src->dl.device)) {
    host_copy(dst, src, size);
    return 0;
  }
  if (ffk_tensor_numel(dst) == 0) return 0;
  /* A device is involved: move dense bytes with its allocator, staging strided sides on the host. */
  if (!ffk_tensor_is_contiguous(src)) {
    if (!on_host(src->dl.device))
      return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "ffk_tensor_copy_from: a strided source on a device needs its "
                                                    "kernels (this build has none for it)");
    ffk_tensor *tmp = dense_like(src, kCpu);
    if (tmp == NULL) return -1;
    host_copy(tmp, src, size);
    int rc = ffk_tensor_copy_from(dst, tmp);
    ffk_object_release((ffk_object *)tmp);
    return rc;
  }
  if (!ffk_tensor_is_contiguous(dst)) {
    if (!on_host(dst->dl.device))
      return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "ffk_tensor_copy_from: a strided destination on a device needs "
                                                    "its kernels (this build has none for it)");
    ffk_tensor *tmp = dense_like(dst, kCpu);
    if (tmp == NULL) return -1;
    int rc = ffk_tensor_copy_from(tmp, src);
    if (rc == 0) host_copy(dst, tmp, size);
    ffk_object_release((ffk_object *)tmp);
    return rc;
  }
  ffk_allocator alloc;
  if (device_copier(on_host(dst->dl.device) ? src->dl.device : dst->dl.device, &alloc) != 0) return -1;
  return alloc.copy(alloc.ctx, ffk_tensor_data_ptr(dst), dst->dl.device, ffk_tensor_data_ptr(src), src->dl.device,
                    (size_t)ffk_tensor_nbytes(dst));
}

ffk_tensor *ffk_tensor_contiguous(const ffk_tensor *t) {
  if (ffk_tensor_is_contiguous(t)) {
    ffk_object_retain((ffk_object *)&t->header);
    return (ffk_tensor *)t;
  }
  ffk_tensor *out = dense_like(t, t->dl.device);
  if (out != NULL && ffk_tensor_copy_from(out, t) != 0) {
    ffk_object_release((ffk_object *)out);
    return NULL;
  }
  return out;
}

/* The bytes of `value` as one element of `dtype`. 0, or -1 with a TypeError/ValueError. */
static int element_bytes(const ffk_any *value, DLDataType dtype, unsigned char *out) {
  double f;
  int64_t i;
  bool is_float = value->type_index == FFK_TYPE_FLOAT;
  if (is_float) f = value->v_float;
  else if (ffk_any_as_int(value, &i) == 0) f = (double)i;
  else return ffk_error_set(FFK_ERR_TYPE, "ffk_tensor_fill: expected an int, float or bool but got %s",
                            ffk_any_type_name(value));
#define PUT(T, x)              \
  do {                         \
    T v_ = (T)(x);             \
    memcpy(out, &v_, sizeof v_); \
  } while (0)
  switch (dtype.code * 1000 + dtype.bits) {
    case kDLInt * 1000 + 8: PUT(int8_t, is_float ? (int64_t)f : i); return 0;
    case kDLInt * 1000 + 16: PUT(int16_t, is_float ? (int64_t)f : i); return 0;
    case kDLInt * 1000 + 32: PUT(int32_t, is_float ? (int64_t)f : i); return 0;
    case kDLInt * 1000 + 64: PUT(int64_t, is_float ? (int64_t)f : i); return 0;
    case kDLUInt * 1000 + 8: PUT(uint8_t, is_float ? (int64_t)f : i); return 0;
    case kDLUInt * 1000 + 16: PUT(uint16_t, is_float ? (int64_t)f : i); return 0;
    case kDLUInt * 1000 + 32: PUT(uint32_t, is_float ? (int64_t)f : i); return 0;
    case kDLUInt * 1000 + 64: PUT(uint64_t, is_float ? (int64_t)f : i); return 0;
    case kDLFloat * 1000 + 32: PUT(float, f); return 0;
    case kDLFloat * 1000 + 64: PUT(double, f); return 0;
    case 6 * 1000 + 8: PUT(uint8_t, f != 0.0); return 0; /* kDLBool */
    default: {
      char name[FFK_DTYPE_STR_MAX];
      ffk_dtype_format(dtype, name, sizeof name);
      return ffk_error_set(FFK_ERR_VALUE, "ffk_tensor_fill: cannot fill a %s tensor", name);
    }
  }
#undef PUT
}

int ffk_tensor_fill(ffk_tensor *t, const ffk_any *value) {
  if (t == NULL || value == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_tensor_fill: NULL argument");
  unsigned char elem[16];
  if (element_bytes(value, t->dl.dtype, elem) != 0) return -1;
  size_t size = t->dl.dtype.bits / 8;
  int64_t n = ffk_tensor_numel(t);
  if (n == 0) return 0;
  /* One element on the host, broadcast with a zero stride through the ordinary copy. */
  ffk_tensor *one = ffk_tensor_empty(0, NULL, t->dl.dtype, kCpu);
  if (one == NULL) return -1;
  memcpy(ffk_tensor_data_ptr(one), elem, size);
  int64_t zeros[FFK_TENSOR_MAX_NDIM] = {0};
  ffk_tensor *wide = ffk_tensor__new(one->storage, one->dl.data, kCpu, t->dl.ndim, t->dl.shape, zeros, 0, t->dl.dtype);
  ffk_object_release((ffk_object *)one);
  if (wide == NULL) return -1;
  int rc = ffk_tensor_copy_from(t, wide);
  ffk_object_release((ffk_object *)wide);
  return rc;
}
