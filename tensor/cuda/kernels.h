/*
 * tensor/cuda/kernels.h - the tensor layer's CUDA kernels, callable from C: fill and
 * strided copy. Private to ffikit (not installed; hidden in libffikit.so); cuda.c is
 * the only caller and owns the device selection and the error messages.
 *
 * Both work on the calling thread's current device, on the legacy default stream, and
 * return once the device has finished, with cudaSuccess or the first CUDA error
 * (cudaErrorInvalidValue for arguments out of range). Layouts are DLPack's: a shape and
 * strides counted in elements (any sign: a reversed view has negative ones), at most FFK_KERNELS_MAX_NDIM dimensions;
 * an element is `elsize` bytes of any alignment the pointers allow (the kernels move
 * 8, 4, 2 or 1-byte words, the widest that the pointers and elsize are multiples of).
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
                              const void *value, size_t elsize);

/*
 * Copies each element of the array at `src` (strides `src_strides`) to the same index
 * of the array at `dst` (strides `dst_strides`); both have `shape` and live on the
 * current device (or are memory it can address). Overlapping arrays get unspecified
 * values.
 */
cudaError_t ffk_kernels__copy(void *dst, const int64_t *dst_strides, const void *src, const int64_t *src_strides,
                              int32_t ndim, const int64_t *shape, size_t elsize);

#ifdef __cplusplus
}
#endif

#endif /* FFIKIT_TENSOR_CUDA_KERNELS_H */
