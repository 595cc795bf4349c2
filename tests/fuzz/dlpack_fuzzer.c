/*
 * tests/fuzz/dlpack_fuzzer.c - DLPack import, legacy and versioned, from a managed
 * tensor whose every field (version, flags, ndim, shape, strides, dtype, device,
 * byte_offset, data) is decoded from the fuzzer's bytes.
 *
 * The producer allocates exactly the bytes its description spans (when that is small),
 * so ASan reports any element address the import computes outside of it. Properties:
 *  - import succeeds or fails with a ValueError; on failure the deleter has not run and
 *    the managed tensor is still the caller's (the harness then deletes it itself);
 *  - on success the Tensor describes what the producer described (shape, strides or the
 *    compact strides for NULL, dtype, device, data + byte_offset, read-only flag), the
 *    span of its elements does not overflow, and a CPU tensor's every element can be read
 *    (ffk_tensor_contiguous copies them all);
 *  - the deleter runs exactly once, only after the Tensor and its views are gone;
 *  - no object stays alive.
 */
#include "fuzz_common.h"

#include <ffikit/dlpack.h>
#include <ffikit/tensor.h>

#include <stdbool.h>

enum { MAX_BUFFER = 1 << 16 };

typedef struct producer {
  int deleted;
  void *buffer;
} producer;

static void legacy_deleter(DLManagedTensor *self) {
  producer *p = self->manager_ctx;
  p->deleted++;
}

static void versioned_deleter(DLManagedTensorVersioned *self) {
  producer *p = self->manager_ctx;
  p->deleted++;
}

static const char *const kValueError[] = {FFK_ERR_VALUE, NULL};

/* A dimension or stride: mostly small, sometimes any 64-bit value. */
static int64_t fuzz_extent(fuzz_reader *r) {
  uint8_t b = fuzz_u8(r);
  if (b < 0xf0) return (int64_t)(b % 8) - (b >= 0xe8 ? 9 : 0);
  return (int64_t)fuzz_u64(r, 8);
}

/*
 * The extent of a description in bytes from data: *first to the first-placed element
 * (below 0 when negative strides put elements before data) and *end one past the
 * last-placed element's last byte; false when either reaches 2^63 bytes. Zero elements
 * cover [byte_offset, byte_offset).
 */
static bool span_of(int32_t ndim, const int64_t *shape, const int64_t *strides, uint64_t byte_offset, size_t itemsize,
                    int64_t *first, uint64_t *end) {
  if (byte_offset > (uint64_t)INT64_MAX) return false;
  *first = (int64_t)byte_offset;
  *end = byte_offset;
  for (int32_t i = 0; i < ndim; ++i)
    if (shape[i] == 0) return true;
  uint64_t below = 0, above = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    uint64_t step, magnitude = strides[i] < 0 ? -(uint64_t)strides[i] : (uint64_t)strides[i];
    uint64_t *side = strides[i] < 0 ? &below : &above;
    if (__builtin_mul_overflow((uint64_t)(shape[i] - 1), magnitude, &step) || __builtin_add_overflow(*side, step, side) ||
        *side > (uint64_t)INT64_MAX)
      return false;
  }
  uint64_t low;
  if (above >= (uint64_t)INT64_MAX || __builtin_mul_overflow(above + 1, (uint64_t)itemsize, end) ||
      __builtin_add_overflow(*end, byte_offset, end) || *end > (uint64_t)INT64_MAX ||
      __builtin_mul_overflow(below, (uint64_t)itemsize, &low) || low > (uint64_t)INT64_MAX)
    return false;
  *first = (int64_t)byte_offset - (int64_t)low;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live_before = ffk_debug_live_objects(-1);
  fuzz_reader r = fuzz_reader_make(data, size);

  uint8_t mode = fuzz_u8(&r);
  bool versioned = mode & 1, null_strides = mode & 2, null_shape = (mode & 0x1c) == 0x1c, null_data = (mode & 0xe0) == 0xe0;
  int32_t ndim = (int32_t)(fuzz_u8(&r) % 36) - 1; /* -1..34: FFK_TENSOR_MAX_NDIM is 32 */
  int64_t shape[40], strides[40];
  for (int32_t i = 0; i < ndim; ++i) shape[i] = fuzz_extent(&r);
  for (int32_t i = 0; i < ndim; ++i) strides[i] = fuzz_extent(&r);
  /* One read per statement: the order of a call's arguments is unspecified (gcc and clang differ). */
  uint8_t code = fuzz_u8(&r) % 8;
  DLDataType dtype = ffk_dtype(code, fuzz_u8(&r), 1);
  uint8_t lanes = fuzz_u8(&r);
  if (lanes >= 0xf0) dtype.lanes = lanes;
  int32_t dev_type = (int32_t)(fuzz_u8(&r) % 20), dev_id = (int32_t)(int8_t)fuzz_u8(&r);
  uint64_t byte_offset = fuzz_u8(&r);
  if (byte_offset >= 0xf0) byte_offset = fuzz_u64(&r, 8);
  uint8_t req_byte = fuzz_u8(&r);
  ffk_dlpack_requirements req = {(size_t)1 << (req_byte % 8), (req_byte & 8) != 0};
  if ((req_byte & 0x30) == 0x30) req.alignment = 3 + (req_byte >> 6); /* not a power of two */
  bool use_req = req_byte & 0x40;
  uint64_t flags = fuzz_u8(&r);
  uint32_t major = fuzz_u8(&r) % 3, minor = fuzz_u8(&r);

  /* The producer's memory: exactly the span it describes, when that is small. */
  int64_t compact[40];
  const int64_t *eff_strides = strides;
  if (null_strides && ndim > 0) {
    int64_t step = 1;
    bool ok = true;
    for (int32_t i = ndim - 1; i >= 0; --i) {
      compact[i] = step;
      /* dimension 0 multiplies nothing: its stride is the product of the others */
      if (i > 0) ok = ok && !__builtin_mul_overflow(step, shape[i] > 1 ? shape[i] : 1, &step);
    }
    eff_strides = ok ? compact : NULL;
  }
  size_t itemsize = ffk_dtype_itemsize(dtype);
  bool valid_shape = ndim >= 0 && ndim <= FFK_TENSOR_MAX_NDIM;
  for (int32_t i = 0; valid_shape && i < ndim; ++i) valid_shape = shape[i] >= 0;
  int64_t first = 0;
  uint64_t end = 0;
  bool spans = valid_shape && eff_strides != NULL && span_of(ndim, shape, eff_strides, byte_offset, itemsize, &first, &end);
  uint64_t before_data = first < 0 ? (uint64_t)-first : 0, span = end + before_data; /* the bytes a buffer needs */
  producer p = {0, NULL};
  void *base = NULL;
  if (!null_data) {
    if (spans && span <= MAX_BUFFER) {
      p.buffer = malloc(span ? span : 1);
      FUZZ_CHECK(p.buffer != NULL, "out of memory");
      memset(p.buffer, 0x5a, span);
      base = (char *)p.buffer + before_data; /* negative strides reach back into the buffer */
    } else {
      base = (void *)(uintptr_t)0x10000; /* never dereferenced: the span is not small */
    }
  }
  if (spans && (uintptr_t)base < before_data) spans = false; /* elements below address 0: refused */

  DLTensor dl;
  memset(&dl, 0, sizeof dl);
  dl.data = base;
  dl.device = ffk_device(dev_type, dev_id);
  dl.ndim = ndim;
  dl.dtype = dtype;
  dl.shape = null_shape ? NULL : shape;
  dl.strides = null_strides ? NULL : strides;
  dl.byte_offset = byte_offset;

  DLManagedTensor legacy = {dl, &p, legacy_deleter};
  DLManagedTensorVersioned vers;
  memset(&vers, 0, sizeof vers);
  vers.version.major = major;
  vers.version.minor = minor;
  vers.manager_ctx = &p;
  vers.deleter = versioned_deleter;
  vers.flags = flags;
  vers.dl_tensor = dl;

  const ffk_dlpack_requirements *rq = use_req ? &req : NULL;
  ffk_tensor *t = versioned ? ffk_tensor_from_dlpack_versioned(&vers, rq) : ffk_tensor_from_dlpack(&legacy, rq);
  FUZZ_CHECK(p.deleted == 0, "the deleter ran during import");
  if (t == NULL) {
    fuzz_expect_error("DLPack import", kValueError);
    if (versioned)
      vers.deleter(&vers);
    else
      legacy.deleter(&legacy);
    FUZZ_CHECK(p.deleted == 1, "deleter count %d", p.deleted);
    free(p.buffer);
    fuzz_expect_no_live_objects(live_before);
    return 0;
  }
  fuzz_expect_no_error("DLPack import");

  /* What was accepted is what the producer described. */
  const DLTensor *got = ffk_tensor_dltensor_borrow(t);
  FUZZ_CHECK(valid_shape && (!null_shape || ndim == 0), "accepted ndim %d with shape %p", ndim, (void *)dl.shape);
  FUZZ_CHECK(got->ndim == ndim, "ndim %d became %d", ndim, got->ndim);
  FUZZ_CHECK(got->data == base && got->byte_offset == byte_offset, "data %p + %llu became %p + %llu", base,
             (unsigned long long)byte_offset, got->data, (unsigned long long)got->byte_offset);
  FUZZ_CHECK(ffk_dtype_equal(got->dtype, dtype) && ffk_device_equal(got->device, dl.device), "dtype or device changed");
  FUZZ_CHECK(!versioned || major == 1, "accepted DLPack version %u.%u", major, minor);
  FUZZ_CHECK(ffk_tensor_is_read_only(t) == (versioned && (flags & DLPACK_FLAG_BITMASK_READ_ONLY)), "read-only flag");
  FUZZ_CHECK(eff_strides != NULL, "accepted compact strides that overflow");
  int64_t numel = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    FUZZ_CHECK(got->shape[i] == shape[i], "dim %d: size %lld became %lld", i, (long long)shape[i], (long long)got->shape[i]);
    if (numel != 0 && shape[i] != 0)
      FUZZ_CHECK(got->strides[i] == eff_strides[i], "dim %d: stride %lld became %lld", i, (long long)eff_strides[i],
                 (long long)got->strides[i]);
    numel *= shape[i];
  }
  FUZZ_CHECK(ffk_tensor_numel(t) == numel, "numel %lld, expected %lld", (long long)ffk_tensor_numel(t), (long long)numel);
  FUZZ_CHECK(spans, "accepted a tensor whose elements span more than 2^63 bytes (ndim %d, byte_offset %llu)", ndim,
             (unsigned long long)byte_offset);
  FUZZ_CHECK(numel == 0 || base != NULL, "accepted NULL data with %lld elements", (long long)numel);
  if (use_req && req.alignment > 1 && numel > 0)
    FUZZ_CHECK(((uintptr_t)base + byte_offset) % req.alignment == 0, "accepted a misaligned tensor");

  /* A view keeps the producer's memory alive after the tensor is gone. */
  ffk_tensor *view = NULL;
  if (ndim > 0) {
    view = ffk_tensor_slice(t, 0, 0, shape[0], 1);
    if (view == NULL) fuzz_expect_error("slice", kValueError);
  }
  /* Every element of a CPU tensor is readable: a contiguous copy reads them all. */
  if (p.buffer != NULL && ffk_device_type(dl.device) == kDLCPU && numel > 0 && numel <= MAX_BUFFER) {
    ffk_tensor *c = ffk_tensor_contiguous(t);
    if (c == NULL) {
      static const char *const kinds[] = {FFK_ERR_VALUE, FFK_ERR_MEMORY, NULL};
      fuzz_expect_error("ffk_tensor_contiguous", kinds);
    } else {
      const unsigned char *bytes = ffk_tensor_data_ptr(c);
      for (int64_t i = 0; i < numel * (int64_t)itemsize; ++i)
        FUZZ_CHECK(bytes[i] == 0x5a, "element byte %lld of the copy is 0x%02x", (long long)i, bytes[i]);
      ffk_object_release((ffk_object *)c);
    }
  }
  ffk_object_release((ffk_object *)t);
  if (view != NULL) {
    FUZZ_CHECK(p.deleted == 0, "the deleter ran while a view was alive");
    ffk_object_release((ffk_object *)view);
  }
  FUZZ_CHECK(p.deleted == 1, "deleter ran %d times", p.deleted);
  free(p.buffer);
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
