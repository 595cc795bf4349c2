/*
 * cuda_kernels.c - the tensor operations that run on a CUDA device: fill and strided copy,
 * through the kernels of tensor/cuda/kernels.cu. Compiled only in a build with the CUDA
 * toolkit (FFK_HAS_CUDA). Like every CUDA entry point (see cuda.c), each makes the device
 * current for the call, restores the previous one, queues its kernel (or cudaMemsetAsync,
 * cudaMemcpyAsync) on the calling thread's current stream for the device and returns
 * without waiting for it (so it can be captured in a CUDA graph), and reports a failure
 * to queue the work as a RuntimeError naming the device and the CUDA error.
 */
#include "tensor_internal.h"

#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_internal.h"
#include "tensor/cuda/kernels.h"

int ffk_cuda__fill(ffk_tensor *t, const void *elem, size_t size) {
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(t->dl.device, dev, sizeof dev);
  snprintf(prefix, sizeof prefix, "cannot fill a tensor on device `%s`", dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, t->dl.device.device_id, &g) != 0) return -1;
  cudaError_t e = ffk_kernels__fill(ffk_tensor_data_ptr(t), t->dl.ndim, t->dl.shape, t->dl.strides, elem, size,
                                    ffk_cuda__stream(t->dl.device.device_id));
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : ffk_cuda__fail(prefix, e, "the fill kernel");
}

int ffk_cuda__copy(ffk_tensor *dst, const ffk_tensor *src) {
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(dst->dl.device, dev, sizeof dev);
  snprintf(prefix, sizeof prefix, "cannot copy between tensors on device `%s`", dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, dst->dl.device.device_id, &g) != 0) return -1;
  cudaError_t e = ffk_kernels__copy(ffk_tensor_data_ptr(dst), dst->dl.strides, ffk_tensor_data_ptr(src),
                                    src->dl.strides, dst->dl.ndim, dst->dl.shape, ffk_dtype_itemsize(dst->dl.dtype),
                                    ffk_cuda__stream(dst->dl.device.device_id));
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : ffk_cuda__fail(prefix, e, "the strided copy kernel");
}
