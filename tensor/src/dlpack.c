/*
 * dlpack.c - DLPack export and import, legacy and versioned.
 *
 * An export is one allocation: the managed struct followed by the Tensor it keeps alive;
 * its deleter releases the Tensor and frees the block. An import validates everything a
 * producer could get wrong before it takes ownership, then becomes a Tensor whose owner
 * is the managed struct (see ffk_tensor__new: the owner's deleter runs exactly once,
 * when the Tensor and every view of it are gone).
 *
 * A round trip short-cuts: importing one of our own exports whose DLTensor is still the
 * exported Tensor's, field for field, gives back that Tensor. The export's reference
 * becomes the importer's and its block is freed at once, which is what its deleter would
 * do later; the validation and the requirements are checked all the same. (PyTorch does
 * the same for its own capsules.) The import then makes no allocation and no Tensor.
 */
#include "tensor_internal.h"

#include <ffikit/dlpack.h>

#include <stdio.h>
#include <string.h>

typedef struct legacy_export {
  DLManagedTensor managed;
  ffk_tensor *tensor;
} legacy_export;

typedef struct versioned_export {
  DLManagedTensorVersioned managed;
  ffk_tensor *tensor;
} versioned_export;

static void legacy_deleter(DLManagedTensor *self) {
  if (self == NULL) return;
  legacy_export *e = (legacy_export *)self;
  ffk_object_release(&e->tensor->header);
  ffk_mem_free(e);
}

static void versioned_deleter(DLManagedTensorVersioned *self) {
  if (self == NULL) return;
  versioned_export *e = (versioned_export *)self;
  ffk_object_release(&e->tensor->header);
  ffk_mem_free(e);
}

DLManagedTensor *ffk_tensor_to_dlpack(ffk_tensor *t) {
  if (t == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "to_dlpack: the tensor is NULL");
    return NULL;
  }
  if (t->read_only) {
    ffk_error_set(FFK_ERR_VALUE, "to_dlpack: a read-only tensor cannot be exported as a legacy DLManagedTensor "
                                 "(it has no read-only flag); export a versioned one (DLPack 1.0 or newer)");
    return NULL;
  }
  legacy_export *e = ffk_mem_alloc(sizeof *e);
  if (e == NULL) return NULL;
  ffk_object_retain(&t->header);
  e->tensor = t;
  e->managed.dl_tensor = t->dl;
  e->managed.manager_ctx = t;
  e->managed.deleter = legacy_deleter;
  return &e->managed;
}

DLManagedTensorVersioned *ffk_tensor_to_dlpack_versioned(ffk_tensor *t) {
  if (t == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "to_dlpack: the tensor is NULL");
    return NULL;
  }
  versioned_export *e = ffk_mem_alloc(sizeof *e);
  if (e == NULL) return NULL;
  ffk_object_retain(&t->header);
  e->tensor = t;
  e->managed.version.major = DLPACK_MAJOR_VERSION;
  e->managed.version.minor = DLPACK_MINOR_VERSION;
  e->managed.manager_ctx = t;
  e->managed.deleter = versioned_deleter;
  e->managed.flags = t->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  e->managed.dl_tensor = t->dl;
  return &e->managed;
}

bool ffk_tensor_is_read_only(const ffk_tensor *t) { return t->read_only; }

/* ---- Import --------------------------------------------------------------------------- */

/*
 * The type codes DLPack defines for tensor elements: int, uint, float, bfloat, complex,
 * bool (DLPack 0.8), and the float8/float6/float4 family (DLPack 1.1: codes 7 to 17,
 * float8_e3m4 to float4_e2m1fn). kDLOpaqueHandle (3) is not an element type.
 */
static bool known_dtype_code(uint8_t code) {
  return code == FFK_DTYPE_INT || code == FFK_DTYPE_UINT || code == FFK_DTYPE_FLOAT ||
         (code >= FFK_DTYPE_BFLOAT && code <= FFK_DTYPE_FLOAT4_E2M1FN);
}

/* Validates a DLTensor from a producer. 0, or -1 with a ValueError naming the problem. */
static int validate(const char *what, const DLTensor *d, const ffk_dlpack_requirements *req) {
  if (!known_dtype_code(d->dtype.code))
    return ffk_error_set(FFK_ERR_VALUE, "%s: unsupported dtype (code %u, %u bits, %u lanes)", what,
                         (unsigned)d->dtype.code, (unsigned)d->dtype.bits, (unsigned)d->dtype.lanes);
  if (!ffk_tensor__holds(d->dtype)) {
    char name[FFK_DTYPE_STR_MAX];
    ffk_dtype_format(d->dtype, name, sizeof name);
    if (d->dtype.lanes != 1)
      return ffk_error_set(FFK_ERR_VALUE, "%s: unsupported dtype %s: an element has one lane, and it has %u", what,
                           name, (unsigned)d->dtype.lanes);
    return ffk_error_set(FFK_ERR_VALUE, "%s: unsupported dtype %s: its elements are %u bits, not a whole number of bytes",
                         what, name, (unsigned)d->dtype.bits);
  }
  /* The shape rule every function taking a shape applies (with byte_offset and addresses: check_span, below). */
  int64_t numel = 1;
  if (ffk_tensor_check_shape(what, d->ndim, d->shape, d->strides, d->dtype, &numel, NULL) != 0) return -1;
  int32_t type = (int32_t)d->device.device_type;
  if (ffk_device_type_name(type) == NULL || d->device.device_id < 0)
    return ffk_error_set(FFK_ERR_VALUE, "%s: unknown device (type %d, id %d)", what, (int)type,
                         (int)d->device.device_id);
  if (d->data == NULL && numel > 0)
    return ffk_error_set(FFK_ERR_VALUE, "%s: data is NULL but the tensor has %lld elements", what, (long long)numel);
  if (req != NULL && req->alignment > 1) { /* a power of two: ffk_dlpack_check_requirements came first */
    uintptr_t addr = (uintptr_t)d->data + (uintptr_t)d->byte_offset;
    if (numel > 0 && addr % req->alignment != 0)
      return ffk_error_set(FFK_ERR_VALUE, "%s: the data at %p + %llu is not aligned to %zu bytes", what, d->data,
                           (unsigned long long)d->byte_offset, req->alignment);
  }
  return 0;
}

/*
 * Checks that the bytes the elements cover, measured from data (byte_offset plus, for
 * each dimension, the furthest step below and above the first element: strides may be
 * negative; byte_offset alone without elements), lie within 2^63 bytes on either side
 * of data and inside the address space, so that no offset, size or address computed
 * from the tensor later overflows (ffk_tensor_data_ptr adds byte_offset to data). A
 * producer's strides or byte_offset, or a shape whose compact strides fit but whose bytes
 * do not, can describe more. 0, or -1 with a ValueError.
 */
static int check_span(const char *what, const DLTensor *d, const int64_t *strides) {
  bool empty = false;
  for (int32_t i = 0; i < d->ndim; ++i) empty |= d->shape[i] == 0;
  uint64_t below = 0, above = 0, low = 0, end = 0; /* elements below and above the first; bytes */
  bool overflow = d->byte_offset > (uint64_t)INT64_MAX;
  if (!empty) {
    for (int32_t i = 0; i < d->ndim; ++i) {
      uint64_t step, magnitude = strides[i] < 0 ? -(uint64_t)strides[i] : (uint64_t)strides[i];
      overflow |= __builtin_mul_overflow((uint64_t)(d->shape[i] - 1), magnitude, &step) ||
                  __builtin_add_overflow(strides[i] < 0 ? below : above, step, strides[i] < 0 ? &below : &above);
    }
    uint64_t elsize = ffk_dtype_itemsize(d->dtype);
    overflow |= above >= (uint64_t)INT64_MAX || __builtin_mul_overflow(above + 1, elsize, &end) ||
                __builtin_mul_overflow(below, elsize, &low);
  }
  uintptr_t reach;
  overflow |= __builtin_add_overflow(end, d->byte_offset, &end) || end > (uint64_t)INT64_MAX ||
              low > (uint64_t)INT64_MAX || __builtin_add_overflow((uintptr_t)d->data, (uintptr_t)end, &reach) ||
              (uintptr_t)d->data + (uintptr_t)d->byte_offset < (uintptr_t)low; /* no wrap below address 0 */
  if (overflow)
    return ffk_error_set(FFK_ERR_VALUE,
                         "%s: the elements reach more than 2^63 bytes from data, or outside the address space "
                         "(data %p, byte_offset %llu)",
                         what, d->data, (unsigned long long)d->byte_offset);
  return 0;
}

/* Checks the requirements against `t`, our own Tensor coming back. 0, or -1 with the ValueError import gives. */
static int check_requirements(const char *what, ffk_tensor *t, const ffk_dlpack_requirements *req) {
  if (req != NULL && req->contiguous && !ffk_tensor_is_contiguous(t))
    return ffk_error_set(FFK_ERR_VALUE, "%s: the tensor is not contiguous", what);
  return 0;
}

/*
 * The Tensor a managed struct made by our exporter (its deleter is `ours`) still describes
 * exactly, with its DLTensor validated and the requirements met, or NULL (not ours, changed
 * since the export: the ordinary import runs). -1 in *rc when a check failed (error raised).
 */
static ffk_tensor *own_export(const char *what, const DLTensor *d, ffk_tensor *t, const ffk_dlpack_requirements *req,
                              int *rc) {
  *rc = 0;
  if (memcmp(d, &t->dl, sizeof *d) != 0) return NULL;
  if (validate(what, d, req) != 0 || check_requirements(what, t, req) != 0) {
    *rc = -1;
    return NULL;
  }
  return t;
}

/*
 * The usual import in one pass: a CPU tensor at byte_offset 0 whose elements are one lane
 * of whole bytes, with compact strides (NULL, or exactly the row-major ones), asked for no
 * alignment: what numpy hands over for an ordinary array. For that layout validate,
 * check_span and check_requirements reduce to the loop below (the dimensions are not
 * negative, their product and its bytes fit in int64_t, the row-major strides fit, data is
 * not NULL with elements and its bytes stay inside the address space; compact strides are
 * contiguous), instead of three passes over the shape, and the Tensor gets the row-major
 * strides without a copy. Anything else, and anything the loop doubts, goes to the general
 * path (*general set, nothing raised), which decides and names the problem: this path
 * never refuses. NULL without *general only after a MemoryError.
 */
static ffk_tensor *import_compact(const DLTensor *d, const ffk_dlpack_requirements *req, bool *general) {
  *general = true;
  DLDataType dt = d->dtype;
  int32_t n = d->ndim;
  if (d->device.device_type != kDLCPU || d->device.device_id < 0 || d->byte_offset != 0 || dt.lanes != 1 ||
      dt.bits == 0 || (dt.bits & 7) != 0 || !known_dtype_code(dt.code) || n < 0 || n > FFK_TENSOR_MAX_NDIM ||
      (n > 0 && d->shape == NULL) || (req != NULL && req->alignment > 1))
    return NULL;
  int64_t step = 1, numel = 1, nbytes;
  bool bad = false;
  for (int32_t i = n - 1; i >= 0; --i) {
    int64_t dim = d->shape[i];
    bad |= dim < 0 || (d->strides != NULL && d->strides[i] != step) || __builtin_mul_overflow(numel, dim, &numel) ||
           __builtin_mul_overflow(step, dim > 1 ? dim : 1, &step);
  }
  /* `step` ends as the product of the whole shape, the first dimension included, which no
     stride needs: with a zero dimension elsewhere it may overflow where the general path
     accepts, so its overflow is a doubt like any other. */
  uintptr_t reach;
  bad |= __builtin_mul_overflow(numel, (int64_t)(dt.bits / 8), &nbytes) ||
         (numel > 0 && (d->data == NULL || __builtin_add_overflow((uintptr_t)d->data, (uintptr_t)nbytes, &reach)));
  if (bad) return NULL;
  *general = false;
  return ffk_tensor__new_compact(d->data, d->device, n, d->shape, dt);
}

static ffk_tensor *import(const char *what, const DLTensor *d, const ffk_dlpack_requirements *req) {
  bool general;
  ffk_tensor *quick = import_compact(d, req, &general);
  if (!general) return quick;
  if (validate(what, d, req) != 0) return NULL;
  int64_t compact[FFK_TENSOR_MAX_NDIM];
  const int64_t *strides = d->strides;
  if (strides == NULL) {
    if (ffk_tensor__contiguous_strides(what, d->ndim, d->shape, compact) != 0) return NULL;
    strides = compact;
  }
  if (check_span(what, d, strides) != 0) return NULL;
  ffk_tensor *t = ffk_tensor__new(NULL, d->data, d->device, d->ndim, d->shape, strides, d->byte_offset, d->dtype);
  if (t != NULL && check_requirements(what, t, req) != 0) {
    ffk_object_release(&t->header);
    return NULL;
  }
  return t;
}

static void release_legacy(void *owner) {
  DLManagedTensor *m = owner;
  if (m->deleter != NULL) m->deleter(m);
}

static void release_versioned(void *owner) {
  DLManagedTensorVersioned *m = owner;
  if (m->deleter != NULL) m->deleter(m);
}

int ffk_dlpack_check_requirements(const char *what, const ffk_dlpack_requirements *req) {
  if (req == NULL || (req->alignment & (req->alignment - 1)) == 0) return 0; /* 0 passes too */
  return ffk_error_set(FFK_ERR_VALUE, "%s%srequired alignment %zu is not a power of two", what ? what : "",
                       what ? ": " : "", req->alignment);
}

ffk_tensor *ffk_tensor_from_dlpack(DLManagedTensor *m, const ffk_dlpack_requirements *req) {
  if (m == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "from_dlpack: the managed tensor is NULL");
    return NULL;
  }
  if (ffk_dlpack_check_requirements("from_dlpack", req) != 0) return NULL;
  if (m->deleter == legacy_deleter) {
    legacy_export *e = (legacy_export *)m;
    int rc;
    ffk_tensor *own = own_export("from_dlpack", &m->dl_tensor, e->tensor, req, &rc);
    if (rc != 0) return NULL;
    if (own != NULL) {
      ffk_mem_free(e); /* the export's reference to `own` is now the caller's */
      return own;
    }
  }
  ffk_tensor *t = import("from_dlpack", &m->dl_tensor, req);
  if (t == NULL) return NULL;
  t->owner = m; /* from here on the tensor owns m */
  t->owner_release = release_legacy;
  return t;
}

ffk_tensor *ffk_tensor_from_dlpack_versioned(DLManagedTensorVersioned *m, const ffk_dlpack_requirements *req) {
  if (m == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "from_dlpack: the managed tensor is NULL");
    return NULL;
  }
  if (ffk_dlpack_check_requirements("from_dlpack", req) != 0) return NULL;
  if (m->version.major != 1) {
    ffk_error_set(FFK_ERR_VALUE, "from_dlpack: DLPack version %u.%u is not supported (1.x is)",
                  (unsigned)m->version.major, (unsigned)m->version.minor);
    return NULL;
  }
  if (m->deleter == versioned_deleter) {
    versioned_export *e = (versioned_export *)m;
    int rc;
    ffk_tensor *own = own_export("from_dlpack", &m->dl_tensor, e->tensor, req, &rc);
    if (rc != 0) return NULL;
    bool read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    if (own != NULL && read_only == own->read_only) {
      ffk_mem_free(e);
      return own;
    }
  }
  ffk_tensor *t = import("from_dlpack", &m->dl_tensor, req);
  if (t == NULL) return NULL;
  t->owner = m;
  t->owner_release = release_versioned;
  t->read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return t;
}
