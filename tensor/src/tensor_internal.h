/*
 * tensor_internal.h - what the files of the tensor layer share about tensors (the Storage
 * internals they build on are storage_internal.h); not installed.
 */
#ifndef FFIKIT_TENSOR_INTERNAL_H
#define FFIKIT_TENSOR_INTERNAL_H

#include <ffikit/ffi.h>
#include <ffikit/storage.h>

#include "storage_internal.h"

#include <ffikit/tensor.h>

/*
 * A Tensor: the DLTensor, what owns its memory, and the shape and strides inline
 * (dims[0..ndim) is the shape, dims[ndim..2*ndim) the strides).
 */
struct ffk_tensor {
  ffk_object header;
  DLTensor dl;
  ffk_storage *storage;            /* NULL for an imported DLPack tensor */
  void *owner;                     /* an imported tensor's manager, released by owner_release */
  void (*owner_release)(void *owner);
  ffk_tensor *base;                /* a view of an imported tensor holds its base instead */
  bool read_only;                  /* imported with DLPack's read-only flag */
  bool fused;                      /* storage and bytes share this block (tensor.c) */
  int64_t dims[];
};

/*
 * A new Tensor over `data` with the given layout, retaining `storage` (NULL for an
 * imported tensor, whose caller then sets owner/owner_release or base). No bounds
 * checks: trusted callers. NULL with a MemoryError.
 */
ffk_tensor *ffk_tensor__new(ffk_storage *storage, void *data, DLDevice device, int32_t ndim, const int64_t *shape,
                            const int64_t *strides, uint64_t byte_offset, DLDataType dtype);

/*
 * A new Tensor over `data` with `shape` and its row-major strides (ffk_tensor__contiguous_strides'),
 * byte_offset 0 and no storage: an import's, whose caller then sets owner/owner_release. The
 * caller has checked that the strides fit. NULL with a MemoryError.
 */
ffk_tensor *ffk_tensor__new_compact(void *data, DLDevice device, int32_t ndim, const int64_t *shape, DLDataType dtype);

/*
 * True for a dtype tensors can hold: one lane of whole bytes, or sub-byte lanes packed
 * into exactly one byte (float4_e2m1fn_x2). Its element size is ffk_dtype_itemsize.
 */
bool ffk_tensor__holds(DLDataType dtype);

/*
 * The element size in bytes of a dtype tensors can hold, or 0 with a ValueError that
 * names the dtype and the rule it breaks (one lane; whole bytes).
 */
size_t ffk_tensor__element_size(DLDataType dtype);

/*
 * The bytes of a contiguous `shape` of `dtype`, or -1 with ffk_tensor_check_shape's
 * ValueError (prefixed "what: " when `what` is not NULL). The row-major strides are known
 * to fit in 64 bits when this succeeds.
 */
int64_t ffk_tensor__contiguous_nbytes(const char *what, int32_t ndim, const int64_t *shape, DLDataType dtype);

/*
 * Row-major strides for `shape` (dimensions >= 0) into `strides`. 0, or -1 with a
 * ValueError, prefixed "what: " when `what` is not NULL, when a stride does not fit in
 * 64 bits, which a zero-size shape with huge other dimensions can reach (PyTorch
 * refuses these too).
 */
int ffk_tensor__contiguous_strides(const char *what, int32_t ndim, const int64_t *shape, int64_t *strides);

int ffk_tensor__repr(ffk_object *self, ffk_repr_ctx *ctx);

/*
 * scalar.c: packs `value` (borrowed) as one element of `dtype` into `out` (at least 16
 * bytes), refusing what would change the value (see ffk_tensor_fill's rules); `what`
 * names the user's operation in errors. 0, or -1 with a TypeError, ValueError or
 * OverflowError.
 */
int ffk_tensor__pack_value(const char *what, const ffk_any *value, DLDataType dtype, unsigned char *out);

/*
 * scalar.c: packs the complex number real + imag*i as one element of `dtype` into `out`
 * (at least 16 bytes): complex64/complex128 take both parts, a real float dtype only an
 * imag of 0 (ffk_tensor_fill_complex's rules). 0, or -1 with a TypeError or OverflowError.
 */
int ffk_tensor__pack_complex(const char *what, double real, double imag, DLDataType dtype, unsigned char *out);

/*
 * The element of `dtype` at host address `p` as an Int, Float or Bool into *out
 * (scalar.c; ffk_tensor_item's conversion). 0, or -1 with a TypeError naming the dtype.
 */
int ffk_tensor__unpack_value(const unsigned char *p, DLDataType dtype, ffk_any *out);

#ifdef FFK_HAS_CUDA
/*
 * cuda.c (allocators, device count, zeroing) and cuda_kernels.c (fill, copy), in a build
 * with the CUDA toolkit only. Each function makes the device current for the call,
 * queues its work on the calling thread's current stream for the device without waiting
 * (cuda.c's header says which copies wait), and fails with a RuntimeError (MemoryError
 * for out of memory) naming the device and the CUDA error.
 */

/* Sets every element of `t` (on a CUDA device) to the `size` bytes at `elem` (host). 0 or -1. */
int ffk_cuda__fill(ffk_tensor *t, const void *elem, size_t size);

/* Copies `src` into `dst`, any strides, both on one CUDA device with the same shape and dtype. 0 or -1. */
int ffk_cuda__copy(ffk_tensor *dst, const ffk_tensor *src);

/* ffk_stream_order on a CUDA device (two different streams): event record + wait. 0 or -1. */
int ffk_cuda__stream_order(DLDevice device, void *producer, void *consumer);
#endif

#endif /* FFIKIT_TENSOR_INTERNAL_H */
