/*
 * cuda.c - the CUDA allocators (kDLCUDA device memory, kDLCUDAHost pinned host memory,
 * and their copy routine), the CUDA device count, zeroing device memory, and the CUDA
 * error and current-device helpers that cuda_kernels.c (fill and strided copy) shares.
 *
 * Compiled only in a build with the CUDA toolkit (FFK_HAS_CUDA); the rest of the tensor
 * layer reaches it through the ffk_cuda__ functions of tensor_internal.h and never
 * includes cuda_runtime.h. Invariants:
 *  - Every entry point that touches a device makes it current for the call and then
 *    restores the thread's previous current device, so a caller's CUDA state is kept.
 *    Before that it checks the device id against cudaGetDeviceCount, which is also what
 *    reports a missing driver.
 *  - A CUDA failure becomes a RuntimeError (a MemoryError for out of memory) that names
 *    the operation, the device, and the CUDA error's name, number and text, worded for
 *    the common causes (no driver, no device, no such device). The failed call's error
 *    is then cleared with cudaGetLastError so that no later call reports it again.
 *  - Everything is synchronous: work goes to the legacy default stream and each
 *    operation has finished on the device when it returns.
 */
#include "tensor_internal.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

/* cudaMalloc's pointers are aligned to at least this many bytes. */
#define CUDA_ALIGNMENT 256

/* ---- Errors ------------------------------------------------------------------------------ */

/*
 * Raises "<prefix>: <why>[, <detail>] (<name> <number>: <text>)" for `e`; `call` names
 * the failed call. Always returns -1.
 */
static int fail_detail(const char *prefix, cudaError_t e, const char *call, const char *detail) {
  const char *kind = FFK_ERR_RUNTIME;
  char why[160];
  int driver = 0, runtime = 0;
  switch (e) {
    case cudaErrorStubLibrary:
      snprintf(why, sizeof why, "no CUDA driver is installed (only its stub library was found)");
      break;
    case cudaErrorInsufficientDriver:
      if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        snprintf(why, sizeof why, "no CUDA driver is installed");
      } else {
        cudaRuntimeGetVersion(&runtime);
        snprintf(why, sizeof why, "the CUDA driver (version %d) is older than the CUDA runtime (version %d)", driver,
                 runtime);
      }
      break;
    case cudaErrorNoDevice: snprintf(why, sizeof why, "no CUDA device is present"); break;
    case cudaErrorInvalidDevice: snprintf(why, sizeof why, "no such CUDA device"); break;
    case cudaErrorMemoryAllocation:
      kind = FFK_ERR_MEMORY;
      snprintf(why, sizeof why, "out of memory");
      break;
    default: snprintf(why, sizeof why, "%s failed", call); break;
  }
  (void)cudaGetLastError(); /* a non-sticky error must not resurface in a later call */
  return ffk_error_set(kind, "%s: %s%s%s (%s %d: %s)", prefix, why, detail ? ", " : "", detail ? detail : "",
                       cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
}

int ffk_cuda__fail(const char *prefix, cudaError_t e, const char *call) { return fail_detail(prefix, e, call, NULL); }
static int fail(const char *prefix, cudaError_t e, const char *call) { return ffk_cuda__fail(prefix, e, call); }

/* ---- The current device ------------------------------------------------------------------ */

/* Checks that CUDA device `id` exists; 0, or -1 with the error prefixed by `prefix`. */
static int check_device(const char *prefix, int32_t id) {
  int count = 0; /* cudaGetDeviceCount leaves it unchanged when it fails */
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return fail(prefix, e, "cudaGetDeviceCount");
  if (count <= 0) return fail(prefix, cudaErrorNoDevice, "cudaGetDeviceCount");
  if (id < 0 || id >= count) {
    char detail[64];
    snprintf(detail, sizeof detail, "this machine has %d", count);
    return fail_detail(prefix, cudaErrorInvalidDevice, "cudaSetDevice", detail);
  }
  return 0;
}

int ffk_cuda__enter(const char *prefix, int32_t id, device_guard *g) {
  if (check_device(prefix, id) != 0) return -1;
  cudaError_t e = cudaGetDevice(&g->previous);
  if (e != cudaSuccess) return fail(prefix, e, "cudaGetDevice");
  g->id = id;
  if (g->previous != id && (e = cudaSetDevice(id)) != cudaSuccess) return fail(prefix, e, "cudaSetDevice");
  return 0;
}

void ffk_cuda__leave(const device_guard *g) {
  if (g->previous != g->id) (void)cudaSetDevice(g->previous);
}

/* ---- The allocators ---------------------------------------------------------------------- */

static void *cuda_allocate(void *ctx, DLDevice device, size_t nbytes, size_t alignment) {
  (void)ctx;
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(device, dev, sizeof dev);
  if (alignment > CUDA_ALIGNMENT) {
    ffk_error_set(FFK_ERR_VALUE, "cannot allocate on device `%s`: alignment %zu is larger than the %d bytes CUDA "
                                 "allocations are aligned to", dev, alignment, CUDA_ALIGNMENT);
    return NULL;
  }
  snprintf(prefix, sizeof prefix, "cannot allocate on device `%s`", dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, device.device_id, &g) != 0) return NULL;
  void *p = NULL;
  cudaError_t e = nbytes > 0 ? cudaMalloc(&p, nbytes) : cudaSuccess;
  ffk_cuda__leave(&g);
  if (e != cudaSuccess) {
    snprintf(prefix, sizeof prefix, "cannot allocate %zu bytes on device `%s`", nbytes, dev);
    fail(prefix, e, "cudaMalloc");
    return NULL;
  }
  return p;
}

/* Frees with `release` on `device` current; free cannot fail, so errors are dropped. */
static void release_on(DLDevice device, void *ptr, cudaError_t (*release)(void *)) {
  if (ptr == NULL) return;
  int previous = 0;
  bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device.device_id &&
                  cudaSetDevice(device.device_id) == cudaSuccess;
  (void)release(ptr);
  if (switched) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
}

static void cuda_free(void *ctx, DLDevice device, void *ptr, size_t nbytes) {
  (void)ctx, (void)nbytes;
  release_on(device, ptr, cudaFree);
}

/*
 * Pinned memory: cudaHostAlloc documents no alignment, so the block is over-allocated
 * and aligned by hand (ffk_aligned__place, as for the CPU allocator).
 * Portable: pinned for every device's context.
 */
static void *cuda_host_allocate(void *ctx, DLDevice device, size_t nbytes, size_t alignment) {
  (void)ctx;
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(device, dev, sizeof dev);
  snprintf(prefix, sizeof prefix, "cannot allocate on device `%s`", dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, device.device_id, &g) != 0) return NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  size_t extra = FFK_ALIGNED__ROOM(alignment);
  void *raw = NULL;
  cudaError_t e = cudaSuccess;
  if (nbytes > SIZE_MAX - extra) e = cudaErrorMemoryAllocation;
  else if (nbytes > 0) e = cudaHostAlloc(&raw, nbytes + extra, cudaHostAllocPortable);
  ffk_cuda__leave(&g);
  if (e != cudaSuccess) {
    snprintf(prefix, sizeof prefix, "cannot allocate %zu bytes on device `%s`", nbytes, dev);
    fail(prefix, e, "cudaHostAlloc");
    return NULL;
  }
  return raw != NULL ? ffk_aligned__place(raw, alignment) : NULL; /* NULL: nbytes == 0 */
}

static void cuda_host_free(void *ctx, DLDevice device, void *ptr, size_t nbytes) {
  (void)ctx, (void)nbytes;
  if (ptr != NULL) release_on(device, ffk_aligned__raw(ptr), cudaFreeHost);
}

static bool is_host(DLDevice d) { return d.device_type == kDLCPU || d.device_type == kDLCUDAHost; }

/*
 * The copy routine of both allocators: dense bytes between the CPU, pinned host memory
 * and CUDA devices, in any direction.
 */
static int cuda_copy(void *ctx, void *dst, DLDevice dst_device, const void *src, DLDevice src_device, size_t nbytes) {
  (void)ctx;
  char a[FFK_DEVICE_STR_MAX], b[FFK_DEVICE_STR_MAX], prefix[192];
  ffk_device_format(src_device, a, sizeof a);
  ffk_device_format(dst_device, b, sizeof b);
  snprintf(prefix, sizeof prefix, "cannot copy %zu bytes from `%s` to `%s`", nbytes, a, b);
  bool dst_cuda = dst_device.device_type == kDLCUDA, src_cuda = src_device.device_type == kDLCUDA;
  if ((!dst_cuda && !is_host(dst_device)) || (!src_cuda && !is_host(src_device)))
    return ffk_error_set(FFK_ERR_RUNTIME, "%s: the CUDA allocators copy between cpu, cuda_host and cuda only", prefix);
  if (nbytes == 0) return 0;
  if (!dst_cuda && !src_cuda) { /* host memory, pinned or not */
    memmove(dst, src, nbytes);
    return 0;
  }
  device_guard g;
  cudaError_t e;
  if (dst_cuda && src_cuda && dst_device.device_id != src_device.device_id) {
    if (check_device(prefix, src_device.device_id) != 0 || ffk_cuda__enter(prefix, dst_device.device_id, &g) != 0) return -1;
    e = cudaMemcpyPeer(dst, dst_device.device_id, src, src_device.device_id, nbytes);
    if (e == cudaSuccess) e = cudaDeviceSynchronize(); /* the peer copy is asynchronous to the host */
    ffk_cuda__leave(&g);
    return e == cudaSuccess ? 0 : fail(prefix, e, "cudaMemcpyPeer");
  }
  if (ffk_cuda__enter(prefix, dst_cuda ? dst_device.device_id : src_device.device_id, &g) != 0) return -1;
  e = cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault);
  if (e == cudaSuccess && dst_cuda && src_cuda) e = cudaStreamSynchronize(0); /* device to device is asynchronous */
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, "cudaMemcpy");
}

static const ffk_allocator k_cuda_allocator = {"cuda", NULL, cuda_allocate, cuda_free, cuda_copy};
static const ffk_allocator k_cuda_host_allocator = {"cuda_host", NULL, cuda_host_allocate, cuda_host_free, cuda_copy};

void ffk_cuda__register_allocators(ffk_allocator *table) {
  table[kDLCUDA] = k_cuda_allocator;
  table[kDLCUDAHost] = k_cuda_host_allocator;
}

int ffk_cuda__device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

/* ---- Tensor operations ------------------------------------------------------------------- */

int ffk_cuda__zero(DLDevice device, void *data, size_t nbytes) {
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(device, dev, sizeof dev);
  snprintf(prefix, sizeof prefix, "cannot zero %zu bytes on device `%s`", nbytes, dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, device.device_id, &g) != 0) return -1;
  cudaError_t e = cudaMemset(data, 0, nbytes);
  if (e == cudaSuccess) e = cudaStreamSynchronize(0);
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, "cudaMemset");
}

int ffk_cuda__stream_order(DLDevice device, void *producer, void *consumer) {
  char dev[FFK_DEVICE_STR_MAX], prefix[128];
  ffk_device_format(device, dev, sizeof dev);
  snprintf(prefix, sizeof prefix, "cannot order streams on device `%s`", dev);
  device_guard g;
  if (ffk_cuda__enter(prefix, device.device_id, &g) != 0) return -1;
  cudaEvent_t ev;
  const char *call = "cudaEventCreateWithFlags";
  cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (e == cudaSuccess) {
    call = "cudaEventRecord";
    e = cudaEventRecord(ev, (cudaStream_t)producer);
    if (e == cudaSuccess) call = "cudaStreamWaitEvent", e = cudaStreamWaitEvent((cudaStream_t)consumer, ev, 0);
    (void)cudaEventDestroy(ev); /* released once the wait has happened */
  }
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, call);
}
