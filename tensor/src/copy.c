/*
 * copy.c - contiguous copies, element-wise copies between tensors, and fill.
 *
 * On the CPU both copy and fill walk the destination in row-major order with an
 * odometer over the outer dimensions; the innermost dimension is a tight loop
 * specialised for 1, 2, 4 and 8-byte elements (or one memcpy when both sides are dense
 * along it). Every element is loaded and stored through a fixed-size memcpy (LOAD and
 * STORE below), never through a typed pointer: a tensor may start at any address (a
 * slice of a Dask frame, a numpy view at an odd offset, DLPack's data + byte_offset), and
 * a fixed-size memcpy is one plain move on every target we build for (x86-64 and arm64
 * load and store unaligned), so the aligned path costs the same and a misaligned one is
 * neither undefined behaviour nor a reason to copy. A copy that transposes (one side's elements lie closer together along
 * another dimension than along the row, as in a transpose view) would touch a new cache
 * line and page for every element of a row on that side; it is copied in blocks and
 * tiles of those two dimensions instead (see copy_panel). A device with kernels (CUDA,
 * in a build with it: cuda.c) copies between any layouts on itself and fills in place.
 * Between devices, dense bytes move through the allocators' copy routine; a strided side
 * is gathered into (or scattered from) a dense tensor on its own side first: by the loops
 * here on the host, by a kernel on a device with kernels. A strided side on a device
 * without kernels is NotImplemented.
 */
#include "tensor_internal.h"

#include <assert.h>
#include <string.h>

static const DLDevice kCpu = {kDLCPU, 0};


/* The devices with kernels, and the calls into them. */
#ifdef FFK_HAS_CUDA
static bool has_kernels(DLDevice d) { return d.device_type == kDLCUDA; }
static int kernel_copy(ffk_tensor *dst, const ffk_tensor *src) { return ffk_cuda__copy(dst, src); }
static int kernel_fill(ffk_tensor *t, const void *elem, size_t size) { return ffk_cuda__fill(t, elem, size); }
#else
static bool has_kernels(DLDevice d) {
  (void)d;
  return false;
}
static int kernel_copy(ffk_tensor *dst, const ffk_tensor *src) {
  (void)dst, (void)src;
  return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "this build has no device kernels");
}
static int kernel_fill(ffk_tensor *t, const void *elem, size_t size) {
  (void)t, (void)elem, (void)size;
  return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "this build has no device kernels");
}
#endif

/* One element of type T at `p`, any alignment: a fixed-size memcpy, which compilers make one move. */
#define DEFINE_LOAD_STORE(T)                                                                                         \
  static inline T load_##T(const char *p) {                                                                          \
    T v;                                                                                                             \
    memcpy(&v, p, sizeof v);                                                                                         \
    return v;                                                                                                        \
  }                                                                                                                  \
  static inline void store_##T(char *p, T v) { memcpy(p, &v, sizeof v); }
DEFINE_LOAD_STORE(uint8_t)
DEFINE_LOAD_STORE(uint16_t)
DEFINE_LOAD_STORE(uint32_t)
DEFINE_LOAD_STORE(uint64_t)
#undef DEFINE_LOAD_STORE

/* Copies `n` elements of `size` bytes from src (stride ss elements) to dst (stride ds), at any alignment. */
static void copy_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t size) {
  if (ds == 1 && ss == 1) {
    memmove(dst, src, (size_t)n * size); /* the two may overlap: see host_copy */
    return;
  }
  switch (size) {
#define ROW(T)                                                                                                       \
  for (int64_t i = 0; i < n; ++i)                                                                                    \
    store_##T(dst + i * ds * (int64_t)sizeof(T), load_##T(src + i * ss * (int64_t)sizeof(T)));                       \
  return;
    case 1: ROW(uint8_t)
    case 2: ROW(uint16_t)
    case 4: ROW(uint32_t)
    case 8: ROW(uint64_t)
#undef ROW
    default: /* any other size (complex128, a DLPack int24 or float160): memmove, so overlapping elements are defined too */
      for (int64_t i = 0; i < n; ++i) memmove(dst + i * ds * (int64_t)size, src + i * ss * (int64_t)size, size);
  }
}

/* ---- Transposing copies ------------------------------------------------------------------ */

/*
 * A panel is rows x cols elements, element [i, j] copied from s[i*sr + j*sc] to
 * d[i*dr + j*dc] (strides in elements). It is walked in BLOCK x BLOCK blocks, each in
 * TILE x TILE tiles, each in 4 x 4 groups whose 16 elements are all loaded into registers
 * before any is stored. A block's rows span about 2 x BLOCK pages on the two sides,
 * which stay in the L2 TLB while the block is copied (a whole 4096-row column spans 4096
 * pages, more than it holds); a tile row of 4-byte elements is one cache line. In a
 * standalone program timing a float32 4096 x 4096 transpose (2-core Zen 4 VM; memcpy of
 * the 64 MiB 6.4 ms): element by element along the rows 130 ms, 16 x 16 tiles 35 ms, tiles
 * in 256-element blocks 21 ms, with the 4 x 4 register groups 19 ms, and 14 ms when the
 * compiler knows the two unit strides of the transpose of a dense tensor (dc = sr = 1, or
 * dr = sc = 1 with rows and columns swapped): PANEL_UNIT.
 */
enum { BLOCK = 256, TILE = 16 };

#define MIN64(a, b) ((a) < (b) ? (a) : (b))
/* Strides below are in bytes (element strides times sizeof(elem)); p and q are char pointers. */
#define LOAD4(r)                                                                                                     \
  const elem r##0 = LD(p), r##1 = LD(p + sc_), r##2 = LD(p + 2 * sc_), r##3 = LD(p + 3 * sc_);                       \
  p += sr_;
#define STORE4(r)                                                                                                    \
  ST(q, r##0), ST(q + dc_, r##1), ST(q + 2 * dc_, r##2), ST(q + 3 * dc_, r##3);                                      \
  q += dr_;

/* Defines `name`, copying a panel of T elements; DC and SR are dc and sr, or the constant 1. */
#define DEFINE_PANEL(name, T, DC, SR)                                                                                \
  static void name(char *dst, int64_t dr, int64_t dc, const char *src, int64_t sr, int64_t sc, int64_t rows,         \
                   int64_t cols) {                                                                                   \
    typedef T elem;                                                                                                  \
    enum { Z = sizeof(T) };                                                                                          \
    const int64_t dr_ = dr * Z, dc_ = (DC) * Z, sr_ = (SR) * Z, sc_ = sc * Z;                                        \
    (void)dc, (void)sr;                                                                                              \
    char *d = dst;                                                                                                   \
    const char *s = src;                                                                                             \
    for (int64_t bi = 0; bi < rows; bi += BLOCK) {                                                                   \
      for (int64_t bj = 0; bj < cols; bj += BLOCK) {                                                                 \
        int64_t bi_end = MIN64(bi + BLOCK, rows), bj_end = MIN64(bj + BLOCK, cols);                                  \
        for (int64_t ti = bi; ti < bi_end; ti += TILE) {                                                             \
          for (int64_t tj = bj; tj < bj_end; tj += TILE) {                                                           \
            int64_t ti_end = MIN64(ti + TILE, bi_end), tj_end = MIN64(tj + TILE, bj_end), i = ti;                    \
            for (; i + 4 <= ti_end; i += 4) {                                                                        \
              int64_t j = tj;                                                                                        \
              for (; j + 4 <= tj_end; j += 4) {                                                                      \
                const char *p = s + i * sr_ + j * sc_;                                                               \
                char *q = d + i * dr_ + j * dc_;                                                                     \
                LOAD4(a) LOAD4(b) LOAD4(c) LOAD4(e) STORE4(a) STORE4(b) STORE4(c) STORE4(e)                          \
              }                                                                                                      \
              for (int64_t r = i; r < i + 4; ++r) /* the columns left over at the tile's right edge */               \
                for (int64_t c = j; c < tj_end; ++c) ST(d + r * dr_ + c * dc_, LD(s + r * sr_ + c * sc_));           \
            }                                                                                                        \
            for (; i < ti_end; ++i) /* the rows left over at its bottom edge */                                      \
              for (int64_t c = tj; c < tj_end; ++c) ST(d + i * dr_ + c * dc_, LD(s + i * sr_ + c * sc_));            \
          }                                                                                                          \
        }                                                                                                            \
      }                                                                                                              \
    }                                                                                                                \
  }
#define PANEL_ANY(T) DEFINE_PANEL(panel_##T, T, dc, sr)
#define PANEL_UNIT(T) DEFINE_PANEL(panel_unit_##T, T, 1, 1)
#define LD(p) load_uint8_t(p)
#define ST(p, v) store_uint8_t(p, v)
PANEL_ANY(uint8_t)
PANEL_UNIT(uint8_t)
#undef LD
#undef ST
#define LD(p) load_uint16_t(p)
#define ST(p, v) store_uint16_t(p, v)
PANEL_ANY(uint16_t)
PANEL_UNIT(uint16_t)
#undef LD
#undef ST
#define LD(p) load_uint32_t(p)
#define ST(p, v) store_uint32_t(p, v)
PANEL_ANY(uint32_t)
PANEL_UNIT(uint32_t)
#undef LD
#undef ST
#define LD(p) load_uint64_t(p)
#define ST(p, v) store_uint64_t(p, v)
PANEL_ANY(uint64_t)
PANEL_UNIT(uint64_t)
#undef LD
#undef ST
#undef PANEL_UNIT
#undef PANEL_ANY
#undef DEFINE_PANEL
#undef STORE4
#undef LOAD4
#undef MIN64

/* Copies a panel (see above) of `size`-byte elements, size 1, 2, 4 or 8. */
static void copy_panel(char *d, int64_t dr, int64_t dc, const char *s, int64_t sr, int64_t sc, int64_t rows,
                       int64_t cols, size_t size) {
  if (dr == 1 && sc == 1 && !(dc == 1 && sr == 1)) {
    /* The same copy with rows and columns swapped has the unit strides where PANEL_UNIT wants them. */
    int64_t t;
    t = dr, dr = dc, dc = t;
    t = sr, sr = sc, sc = t;
    t = rows, rows = cols, cols = t;
  }
  bool unit = dc == 1 && sr == 1;
#define CASE(n, T)                                                                                                   \
  case n:                                                                                                            \
    (unit ? panel_unit_##T : panel_##T)(d, dr, dc, s, sr, sc, rows, cols);                                           \
    return;
  switch (size) {
    CASE(1, uint8_t)
    CASE(2, uint16_t)
    CASE(4, uint32_t)
    CASE(8, uint64_t)
    default:
      assert(!"copy_panel: element size not 1, 2, 4 or 8");
  }
#undef CASE
}

/*
 * The dimension to copy in panels together with the innermost one (c = nd - 1), or -1 to
 * copy row by row. Of the two sides, the one with the longer step along a row is the one
 * a row walk would stride across; when that step is more than one element and some other
 * dimension k (of size 2 or more) has a shorter step on that side, panels over (k, c)
 * keep its accesses together. Of several such k, the one with the shortest step.
 */
static int32_t panel_dim(int32_t nd, const int64_t *shape, const int64_t *dstr, const int64_t *sstr, size_t size) {
  if (nd < 2 || !(size == 1 || size == 2 || size == 4 || size == 8)) return -1;
  int32_t c = nd - 1;
  /* Distances: a negative stride (a reversed view) walks as far per step as its magnitude. */
#define DIST(s) ((s) < 0 ? -(uint64_t)(s) : (uint64_t)(s))
  const int64_t *far = DIST(sstr[c]) >= DIST(dstr[c]) ? sstr : dstr;
  if (DIST(far[c]) <= 1 || shape[c] < 2) return -1;
  int32_t k = -1;
  for (int32_t i = 0; i < c; ++i)
    if (shape[i] >= 2 && DIST(far[i]) < DIST(far[c]) && (k < 0 || DIST(far[i]) < DIST(far[k]))) k = i;
#undef DIST
  return k;
}

/* Copies one panel over dimensions k and nd - 1 for every index of the other dimensions. */
static void panel_copy(char *d, const int64_t *dstr, const char *s, const int64_t *sstr, const int64_t *shape,
                       int32_t nd, int32_t k, size_t size) {
  int32_t c = nd - 1;
  int64_t index[FFK_TENSOR_MAX_NDIM] = {0}; /* index[k] and index[c] stay 0 */
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int32_t i = 0; i < c; ++i) {
      doff += index[i] * dstr[i];
      soff += index[i] * sstr[i];
    }
    copy_panel(d + doff * (int64_t)size, dstr[k], dstr[c], s + soff * (int64_t)size, sstr[k], sstr[c], shape[k],
               shape[c], size);
    int32_t i = c - 1;
    for (; i >= 0; --i) {
      if (i == k) continue;
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

/* ---- Host copies ------------------------------------------------------------------------- */

/* Element-wise copy between two host tensors of one shape and element size. */
static void host_copy(const ffk_tensor *dst, const ffk_tensor *src, size_t size) {
  int32_t nd = dst->dl.ndim;
  if (ffk_tensor_numel(dst) == 0) return;
  char *d = ffk_tensor_data_ptr(dst);
  const char *s = ffk_tensor_data_ptr(src);
  /*
   * Two views of one storage may overlap (the header leaves the values unspecified but
   * promises no crash): dense runs move with memmove, which is defined for any overlap and
   * as fast as memcpy when there is none; single elements go through a register.
   * Found by tensor_shape_fuzzer (ASan: memcpy-param-overlap).
   */
  if (nd == 0) {
    memmove(d, s, size);
    return;
  }
  if (ffk_tensor_is_contiguous(dst) && ffk_tensor_is_contiguous(src)) {
    memmove(d, s, (size_t)ffk_tensor_numel(dst) * size);
    return;
  }
  const int64_t *shape = dst->dl.shape, *dstr = dst->dl.strides, *sstr = src->dl.strides;
  /* Any alignment: the loops load and store through memcpy (see the top of the file). */
  int32_t k = panel_dim(nd, shape, dstr, sstr, size);
  if (k >= 0) {
    panel_copy(d, dstr, s, sstr, shape, nd, k, size);
    return;
  }
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

int ffk_tensor_check_writable(const ffk_tensor *t, const char *operation) {
  if (!t->read_only) return 0;
  return ffk_error_set(FFK_ERR_VALUE, "%s: the tensor is read-only (its DLPack producer marked it so)",
                       operation != NULL ? operation : "write");
}

int ffk_tensor_copy_from(ffk_tensor *dst, const ffk_tensor *src) {
  if (dst == NULL || src == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "copy_from: the %s tensor is NULL", dst == NULL ? "destination" : "source");
  if (dst->read_only)
    return ffk_error_set(FFK_ERR_VALUE, "copy_from: the destination tensor is read-only (its DLPack producer marked it "
                                        "so)");
  char a[FFK_DTYPE_STR_MAX], b[FFK_DTYPE_STR_MAX];
  if (!ffk_dtype_equal(dst->dl.dtype, src->dl.dtype)) {
    ffk_dtype_format(dst->dl.dtype, a, sizeof a);
    ffk_dtype_format(src->dl.dtype, b, sizeof b);
    return ffk_error_set(FFK_ERR_VALUE, "copy_from: dtypes differ (%s destination, %s source)", a, b);
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
    int rc = ffk_error_set(FFK_ERR_VALUE, "copy_from: shapes differ (destination %s, source %s)",
                           x ? x->data : "?", y ? y->data : "?");
    ffk_object_release((ffk_object *)x);
    ffk_object_release((ffk_object *)y);
    return rc;
  }
  size_t size = ffk_dtype_itemsize(dst->dl.dtype);
  if (ffk_device_is_host(dst->dl.device) && ffk_device_is_host(src->dl.device)) {
    host_copy(dst, src, size);
    return 0;
  }
  if (ffk_tensor_numel(dst) == 0) return 0;
  /* A device is involved. On one device with kernels a single kernel handles any layouts. */
  if (ffk_device_equal(dst->dl.device, src->dl.device) && has_kernels(dst->dl.device)) return kernel_copy(dst, src);
  /* Otherwise dense bytes move with an allocator's copy; a strided side is staged on its own side first. */
  if (!ffk_tensor_is_contiguous(src)) {
    bool host = ffk_device_is_host(src->dl.device);
    if (!host && !has_kernels(src->dl.device))
      return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "copy_from: a strided source on a device needs its "
                                                    "kernels (this build has none for it)");
    ffk_tensor *tmp = dense_like(src, host ? kCpu : src->dl.device);
    if (tmp == NULL) return -1;
    int rc = 0;
    if (host) host_copy(tmp, src, size);
    else rc = kernel_copy(tmp, src);
    if (rc == 0) rc = ffk_tensor_copy_from(dst, tmp);
    ffk_object_release((ffk_object *)tmp);
    return rc;
  }
  if (!ffk_tensor_is_contiguous(dst)) {
    bool host = ffk_device_is_host(dst->dl.device);
    if (!host && !has_kernels(dst->dl.device))
      return ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "copy_from: a strided destination on a device needs "
                                                    "its kernels (this build has none for it)");
    ffk_tensor *tmp = dense_like(dst, host ? kCpu : dst->dl.device);
    if (tmp == NULL) return -1;
    int rc = ffk_tensor_copy_from(tmp, src);
    if (rc == 0) {
      if (host) host_copy(dst, tmp, size);
      else rc = kernel_copy(dst, tmp);
    }
    ffk_object_release((ffk_object *)tmp);
    return rc;
  }
  ffk_allocator alloc;
  if (device_copier(ffk_device_is_host(dst->dl.device) ? src->dl.device : dst->dl.device, &alloc) != 0) return -1;
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

/* Sets every element of `t` to the `size` packed bytes at `elem`. 0 or -1. */
static int fill_packed(ffk_tensor *t, const unsigned char *elem, size_t size) {
  if (ffk_tensor_numel(t) == 0) return 0;
  if (has_kernels(t->dl.device)) return kernel_fill(t, elem, size);
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

int ffk_tensor_fill(ffk_tensor *t, const ffk_any *value) {
  if (t == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "fill: the %s is NULL", t == NULL ? "tensor" : "value");
  if (ffk_tensor_check_writable(t, "fill") != 0) return -1;
  unsigned char elem[16];
  if (ffk_tensor__pack_value("fill", value, t->dl.dtype, elem) != 0) return -1;
  return fill_packed(t, elem, ffk_dtype_itemsize(t->dl.dtype));
}

int ffk_tensor_fill_complex(ffk_tensor *t, double real, double imag) {
  if (t == NULL) return ffk_error_set(FFK_ERR_VALUE, "fill: the tensor is NULL");
  if (ffk_tensor_check_writable(t, "fill") != 0) return -1;
  unsigned char elem[16];
  if (ffk_tensor__pack_complex("fill", real, imag, t->dl.dtype, elem) != 0) return -1;
  return fill_packed(t, elem, ffk_dtype_itemsize(t->dl.dtype));
}

/* The only element of `t` as an Int, Float or Bool; a device tensor's is copied to the host first. */
int ffk_tensor_item(const ffk_tensor *t, ffk_any *out) {
  *out = ffk_any_none();
  int64_t n = ffk_tensor_numel(t);
  if (n != 1)
    return ffk_error_set(FFK_ERR_VALUE, "item: a tensor with %lld elements has no single value (it needs exactly one)",
                         (long long)n);
  if (ffk_device_is_host(t->dl.device)) return ffk_tensor__unpack_value(ffk_tensor_data_ptr(t), t->dl.dtype, out);
  /* On a device: copy the element to the host first, through a 0-d view of it. */
  size_t size = ffk_tensor__element_size(t->dl.dtype);
  if (size == 0) return -1;
  ffk_tensor *one = ffk_tensor_empty(0, NULL, t->dl.dtype, (DLDevice){kDLCPU, 0});
  if (one == NULL) return -1;
  ffk_tensor *src = ffk_tensor__new(t->storage, t->dl.data, t->dl.device, 0, NULL, NULL, t->dl.byte_offset, t->dl.dtype);
  int rc = src == NULL ? -1 : ffk_tensor_copy_from(one, src);
  if (rc == 0) rc = ffk_tensor__unpack_value(ffk_tensor_data_ptr(one), t->dl.dtype, out);
  ffk_object_release((ffk_object *)src);
  ffk_object_release((ffk_object *)one);
  return rc;
}
