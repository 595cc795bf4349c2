/*
 * tests/fuzz/tensor_shape_fuzzer.c - every public C function that takes a size, a shape,
 * strides, a dimension index or an offset, with values decoded from the fuzzer's bytes:
 * the shape rule itself (ffk_tensor_check_shape), tensor creation (empty, zeros,
 * new_shared, from_storage), check_bytes, storage sizes, Shape objects, and every view
 * (reshape, as_strided, permute, transpose, squeeze, unsqueeze, select, slice), chained on
 * each other's results, with copies, fills and item reads of what they make.
 *
 * Properties:
 *  - every call returns, or fails with an error of a kind its header names (ValueError,
 *    IndexError, TypeError, OverflowError, MemoryError) and a message; a success leaves no
 *    error behind;
 *  - the shape rule and the functions that apply it agree: empty/zeros succeed exactly
 *    when ffk_tensor_check_shape does (up to allocation), and check_shape's element count
 *    and byte size are the exact products (checked in 128 bits);
 *  - every view's elements lie inside its storage (ASan: copying a view reads them all);
 *  - no object stays alive.
 * Allocations are kept small (the rule is asked first; a shape over MAX_BYTES is only
 * passed to functions that must refuse it), so libFuzzer's malloc limit never trips.
 */
#include "fuzz_common.h"

#include <ffikit/shape.h>
#include <ffikit/storage.h>
#include <ffikit/tensor.h>

#include <stdbool.h>

enum { MAX_BYTES = 1 << 16, POOL = 4, MAX_OPS = 24 };

static const char *const kErrors[] = {FFK_ERR_VALUE, FFK_ERR_INDEX, FFK_ERR_TYPE, FFK_ERR_OVERFLOW, FFK_ERR_MEMORY, NULL};

/* A dimension, stride or offset: mostly small, sometimes near a power of two, sometimes any 64-bit value. */
static int64_t fuzz_extent(fuzz_reader *r) {
  uint8_t b = fuzz_u8(r);
  if (b < 0xe0) return (int64_t)(b % 9) - (b >= 0xd0 ? 10 : 0);
  if (b < 0xf0) {
    int64_t p = (int64_t)1 << (fuzz_u8(r) % 63);
    return b & 1 ? -p : p + (int64_t)(b % 3) - 1;
  }
  return (int64_t)fuzz_u64(r, 8);
}

/* ndim: mostly 0..4, sometimes around FFK_TENSOR_MAX_NDIM, negative, or any int32. */
static int32_t fuzz_ndim(fuzz_reader *r) {
  uint8_t b = fuzz_u8(r);
  if (b < 0xc0) return b % 5;
  if (b < 0xf0) return (int32_t)(b % 36) - 1;
  return (int32_t)fuzz_u64(r, 4);
}

static DLDataType fuzz_dtype(fuzz_reader *r) {
  static const DLDataType kinds[] = {
      {kDLUInt, 8, 1},      {kDLInt, 16, 1}, {kDLFloat, 32, 1}, {kDLInt, 64, 1}, {kDLFloat, 64, 1},
      {kDLComplex, 128, 1}, {kDLBool, 8, 1}, {kDLBfloat, 16, 1}, {kDLFloat, 32, 4}, {kDLFloat, 12, 1},
      {kDLInt, 0, 1},
  };
  return kinds[fuzz_below(r, sizeof kinds / sizeof kinds[0])];
}

__extension__ typedef __int128 wide; /* gcc and clang have it; -Wpedantic is told so */

/* The element count and bytes of a contiguous shape in 128 bits; false when the shape is not one the rule accepts. */
static bool exact_size(int64_t ndim, const int64_t *shape, size_t itemsize, int64_t *numel, int64_t *nbytes) {
  if (ndim < 0 || ndim > FFK_TENSOR_MAX_NDIM) return false;
  wide n = 1;
  bool zero = false;
  for (int64_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return false;
    zero |= shape[i] == 0;
  }
  for (int64_t i = 0; i < ndim; ++i) {
    n *= shape[i];
    if (n > INT64_MAX) return false; /* the rule multiplies left to right, as here */
  }
  wide b = n * (wide)itemsize;
  if (b > INT64_MAX) return false;
  (void)zero;
  *numel = (int64_t)n;
  *nbytes = (int64_t)b;
  return true;
}

static void expect(const char *what, bool ok) {
  if (ok) fuzz_expect_no_error(what);
  else fuzz_expect_error(what, kErrors);
}

typedef struct {
  ffk_tensor *t[POOL];
  int n;
} pool;

/* Keeps `t` (stolen) when there is room; the rest are released. Reads all its elements first (ASan checks each). */
static void keep(pool *p, ffk_tensor *t) {
  if (t == NULL) return;
  const DLTensor *d = ffk_tensor_dltensor_borrow(t);
  if (d->device.device_type == kDLCPU && ffk_tensor_numel(t) <= MAX_BYTES / 16) {
    ffk_tensor *c = ffk_tensor_contiguous(t);
    expect("contiguous", c != NULL);
    ffk_object_release((ffk_object *)c);
  }
  if (p->n < POOL) p->t[p->n++] = t;
  else ffk_object_release((ffk_object *)t);
}

static ffk_tensor *pick(pool *p, fuzz_reader *r) { return p->n ? p->t[fuzz_below(r, (uint32_t)p->n)] : NULL; }

/* Small enough to walk every element: a stride-0 view may have 2^40 elements over 4 bytes, legitimately. */
static bool walkable(const ffk_tensor *t) { return t != NULL && ffk_tensor_numel(t) <= MAX_BYTES / 16; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live_before = ffk_debug_live_objects(-1);
  fuzz_reader r = fuzz_reader_make(data, size);
  pool p = {{NULL}, 0};
  /* A storage of a few sizes: what from_storage and as_strided measure against. */
  size_t storage_bytes = fuzz_u8(&r) * 8u;
  ffk_storage *storage = ffk_storage_new_zeroed((DLDevice){kDLCPU, 0}, storage_bytes, 0);
  FUZZ_CHECK(storage != NULL, "storage of %zu bytes", storage_bytes);

  for (int op = 0; op < MAX_OPS && fuzz_left(&r) > 0; ++op) {
    int32_t ndim = fuzz_ndim(&r);
    int64_t shape[40] = {0}, strides[40] = {0};
    int32_t held = ndim < 0 ? 0 : ndim > 40 ? 40 : ndim; /* what the arrays hold; C must read no further */
    for (int32_t i = 0; i < held; ++i) shape[i] = fuzz_extent(&r);
    for (int32_t i = 0; i < held; ++i) strides[i] = fuzz_extent(&r);
    bool null_strides = fuzz_u8(&r) & 1;
    DLDataType dtype = fuzz_dtype(&r);
    size_t itemsize = ffk_dtype_itemsize(dtype);
    bool holds = dtype.lanes == 1 && dtype.bits != 0 && dtype.bits % 8 == 0;
    /* A length beyond what the arrays hold is passed only where C must refuse it unread. */
    bool readable = ndim <= 40;
    int64_t numel = -1, nbytes = -1, want_numel = 0, want_bytes = 0;
    uint8_t which = fuzz_u8(&r) % 14;
    switch (which) {
      case 0: { /* the rule itself, with an int64 length */
        int64_t n64 = ndim;
        if (fuzz_u8(&r) == 0xff) n64 = (int64_t)fuzz_u64(&r, 8);
        if (n64 >= 0 && n64 <= 40 && n64 > held) break; /* C would read past what the arrays hold */
        int rc = ffk_tensor_check_shape("fuzz", n64, shape, null_strides ? NULL : strides, dtype, &numel, &nbytes);
        expect("check_shape", rc == 0);
        bool exact = holds && exact_size(n64, shape, itemsize, &want_numel, &want_bytes);
        if (rc == 0) {
          FUZZ_CHECK(exact, "check_shape accepted ndim %lld", (long long)n64);
          FUZZ_CHECK(numel == want_numel && nbytes == want_bytes, "numel %lld nbytes %lld, want %lld %lld",
                     (long long)numel, (long long)nbytes, (long long)want_numel, (long long)want_bytes);
        } else if (exact && null_strides && want_numel != 0) {
          FUZZ_CHECK(false, "check_shape refused a good shape of %lld elements", (long long)want_numel);
        }
        break;
      }
      case 1:
      case 2: { /* empty / zeros: exactly when the rule says yes */
        if (!readable) break;
        int rc = ffk_tensor_check_shape(NULL, ndim, shape, NULL, dtype, &numel, &nbytes);
        ffk_error_clear();
        if (rc == 0 && nbytes > MAX_BYTES) break;
        ffk_tensor *t = which == 1 ? ffk_tensor_empty(ndim, shape, dtype, (DLDevice){kDLCPU, 0})
                                   : ffk_tensor_zeros(ndim, shape, dtype, (DLDevice){kDLCPU, 0});
        expect(which == 1 ? "empty" : "zeros", t != NULL);
        FUZZ_CHECK((t != NULL) == (rc == 0), "empty/zeros and check_shape disagree (%d)", rc);
        if (t != NULL) FUZZ_CHECK(ffk_tensor_nbytes(t) == nbytes, "nbytes");
        keep(&p, t);
        break;
      }
      case 3: { /* new_shared only where the rule refuses: nothing may be created */
        if (!readable) break;
        if (ffk_tensor_check_shape(NULL, ndim, shape, NULL, dtype, NULL, NULL) == 0) {
          ffk_error_clear();
          break;
        }
        ffk_error_clear();
        ffk_tensor *t = ffk_tensor_new_shared(NULL, ndim, shape, dtype);
        FUZZ_CHECK(t == NULL, "new_shared accepted a shape the rule refuses");
        fuzz_expect_error("new_shared", kErrors);
        break;
      }
      case 4: { /* from_storage */
        if (!readable) break;
        uint64_t offset = (uint64_t)fuzz_extent(&r);
        ffk_tensor *t = ffk_tensor_from_storage(storage, ndim, shape, null_strides ? NULL : strides, offset, dtype);
        expect("from_storage", t != NULL);
        keep(&p, t);
        break;
      }
      case 5: { /* check_bytes at any address, any length */
        if (!readable) break;
        static unsigned char block[64];
        uint64_t len = (uint64_t)fuzz_extent(&r);
        int rc = ffk_tensor_check_bytes("fuzz", ndim, shape, dtype, len ? block + fuzz_u8(&r) % 8 : NULL, len);
        FUZZ_CHECK(rc == -1 || rc == 1, "check_bytes returned %d", rc);
        expect("check_bytes", rc == 1);
        break;
      }
      case 6: { /* reshape of a pooled tensor */
        ffk_tensor *t = pick(&p, &r);
        if (t == NULL || !readable) break;
        ffk_tensor *v = ffk_tensor_reshape(t, ndim, shape);
        expect("reshape", v != NULL);
        keep(&p, v);
        break;
      }
      case 7: { /* as_strided of a pooled tensor */
        ffk_tensor *t = pick(&p, &r);
        if (t == NULL || !readable) break;
        int64_t offset = fuzz_extent(&r);
        ffk_tensor *v = ffk_tensor_as_strided(t, ndim, shape, null_strides ? NULL : strides, offset);
        expect("as_strided", v != NULL);
        keep(&p, v);
        break;
      }
      case 8: { /* permute: exactly ndim entries, any values */
        ffk_tensor *t = pick(&p, &r);
        if (t == NULL) break;
        int64_t perm[FFK_TENSOR_MAX_NDIM];
        int32_t t_ndim = ffk_tensor_dltensor_borrow(t)->ndim;
        for (int32_t i = 0; i < t_ndim; ++i) perm[i] = fuzz_extent(&r);
        ffk_tensor *v = ffk_tensor_permute(t, t_ndim, perm);
        expect("permute", v != NULL);
        keep(&p, v);
        break;
      }
      case 9: { /* the dimension-index views */
        ffk_tensor *t = pick(&p, &r);
        if (t == NULL) break;
        int32_t d0 = (int32_t)fuzz_extent(&r), d1 = (int32_t)fuzz_extent(&r);
        int64_t a = fuzz_extent(&r), b = fuzz_extent(&r), c = fuzz_extent(&r);
        ffk_tensor *v = NULL;
        bool view = true;
        switch (fuzz_u8(&r) % 6) {
          case 0: v = ffk_tensor_transpose(t, d0, d1); break;
          case 1: v = ffk_tensor_squeeze(t, d0); break;
          case 2: v = ffk_tensor_unsqueeze(t, d0); break;
          case 3: v = ffk_tensor_select(t, d0, a); break;
          case 4: v = ffk_tensor_slice(t, d0, a, b, c); break;
          default: {
            int64_t n = ffk_tensor_size(t, d0);
            expect("size", n >= 0);
            view = false;
            break;
          }
        }
        if (view) expect("view", v != NULL);
        keep(&p, v);
        break;
      }
      case 10: { /* fill and item on a pooled tensor */
        ffk_tensor *t = pick(&p, &r);
        if (!walkable(t)) break;
        ffk_any value = ffk_any_int(fuzz_extent(&r));
        expect("fill", ffk_tensor_fill(t, &value) == 0);
        ffk_any out;
        int rc = ffk_tensor_item(t, &out);
        expect("item", rc == 0);
        ffk_any_release(&out);
        break;
      }
      case 11: { /* copy between two pooled tensors */
        ffk_tensor *a = pick(&p, &r), *b = pick(&p, &r);
        if (!walkable(a) || !walkable(b)) break;
        expect("copy_from", ffk_tensor_copy_from(a, b) == 0);
        break;
      }
      case 12: { /* Shape objects: any length up to 40, any values */
        size_t n = (size_t)(held);
        ffk_shape *s = ffk_shape_new(n ? shape : NULL, n);
        expect("shape_new", s != NULL);
        if (s != NULL) {
          int64_t got;
          int64_t index = fuzz_extent(&r);
          expect("shape_get", ffk_shape_get(s, index, &got) == 0);
          ffk_object_release((ffk_object *)s);
        }
        break;
      }
      default: { /* storage sizes: small ones, or ones past PTRDIFF_MAX that must be refused before any allocation */
        uint64_t want = (uint64_t)fuzz_extent(&r);
        if (want > MAX_BYTES && want <= (uint64_t)PTRDIFF_MAX) break;
        size_t align = (size_t)1 << (fuzz_u8(&r) % 16);
        ffk_storage *s = fuzz_u8(&r) & 1 ? ffk_storage_new((DLDevice){kDLCPU, 0}, (size_t)want, align)
                                         : ffk_storage_new_zeroed((DLDevice){kDLCPU, 0}, (size_t)want, align);
        expect("storage_new", s != NULL);
        ffk_object_release((ffk_object *)s);
        break;
      }
    }
  }
  for (int i = 0; i < p.n; ++i) ffk_object_release((ffk_object *)p.t[i]);
  ffk_object_release((ffk_object *)storage);
  fuzz_expect_no_error("the run");
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
