/*
 * cuda_internal.h - what cuda.c (allocators, device and stream helpers) shares with
 * cuda_kernels.c (fill, strided copy); a build with CUDA only, not installed.
 */
#ifndef FFIKIT_CUDA_INTERNAL_H
#define FFIKIT_CUDA_INTERNAL_H

#include <cuda_runtime.h>
#include <stdint.h>

#include <ffikit/stream.h>

/* The thread's current device before ffk_cuda__enter, and the one it made current. */
typedef struct device_guard {
  int previous, id;
} device_guard;

/*
 * Raises "<prefix>: <why> (<name> <number>: <text>)" for `e`, worded for the common
 * causes (no driver, no device, no such device; out of memory is a MemoryError); `call`
 * names the failed call. Clears CUDA's last error. Always returns -1.
 */
int ffk_cuda__fail(const char *prefix, cudaError_t e, const char *call);

/*
 * Checks that CUDA device `id` exists and makes it current, remembering the previous one
 * in *g for ffk_cuda__leave. 0, or -1 with the error prefixed by `prefix`.
 */
int ffk_cuda__enter(const char *prefix, int32_t id, device_guard *g);

/* Makes the device current before ffk_cuda__enter current again. Cannot fail. */
void ffk_cuda__leave(const device_guard *g);

/*
 * The calling thread's current stream for CUDA device `id` (ffk_stream_get): where every
 * operation on that device queues its work. NULL (the legacy default stream) when none
 * was set. Cannot fail.
 */
static inline cudaStream_t ffk_cuda__stream(int32_t id) { return (cudaStream_t)ffk_stream_get(FFK_DEVICE_CUDA, id); }

#endif /* FFIKIT_CUDA_INTERNAL_H */
