/*
 * tensor/cuda/kernels.h - the tensor layer's CUDA kernels, callable from C: fill and
 * strided copy. Private to ffikit (not installed; hidden in libffikit.so); cuda.c is
 * the only caller and owns the device selection and the error messages.
 *
 * Both work on the calling thread's current device and queue their work on `stream`
 * (any handle: NULL/1 the legacy default stream, 2 the per-thread one, or a created
 * stream) without waiting for it and without synchronising the host, so they may run
 * inside a CUDA graph capture. They return cudaSuccess or the error of queueing the work
 * (cudaErrorInvalidValue for arguments out of range, the launch's error from
 * cudaGetLastError); errors of the work itself surface at a later synchronisation. Layouts are DLPack's: a shape and
 * strides counted in elements (any sign: a reversed view has negative ones), at most FFK_KERNELS_MAX_NDIM dimensions;
 * an element is `elsize` bytes of any alignment the pointers allow (the kernels move
 * 16, 8, 4, 2 or 1-byte words, the widest that the pointers and elsize are multiples of).
 */
#ifndef FFIKIT_TENSOR_CUDA_KERNELS_H
#define FFIKIT_TENSOR_CUDA_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most dimensions a layout may have (FFK_TENSOR_MAX_NDIM). */
#define FFK_KERNELS_MAX_NDIM 32

/* The largest element fill accepts, in bytes (complex128). */
#define FFK_KERNELS_MAX_FILL_ELSIZE 16

/*
 * Sets each element of the `ndim`-d array at `dst` (device memory; `shape` and
 * `strides` are host arrays) to the `elsize` bytes at `value` (host memory, 1 to
 * FFK_KERNELS_MAX_FILL_ELSIZE bytes). An array with no elements is left alone.
 */
cudaError_t ffk_kernels__fill(void *dst, int32_t ndim, const int64_t *shape, const int64_t *strides,
                              const void *value, size_t elsize, cudaStream_t stream);

/*
 * Copies each element of the array at `src` (strides `src_strides`) to the same index
 * of the array at `dst` (strides `dst_strides`); both have `shape` and live on the
 * current device (or are memory it can address). Overlapping arrays get unspecified
 * values.
 */
cudaError_t ffk_kernels__copy(void *dst, const int64_t *dst_strides, const void *src, const int64_t *src_strides,
                              int32_t ndim, const int64_t *shape, size_t elsize, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* FFIKIT_TENSOR_CUDA_KERNELS_H */
