/*
 * cuda.c - the CUDA allocators (kDLCUDA device memory, kDLCUDAHost pinned host memory,
 * and their copy routine), the CUDA device count, zeroing device memory, ordering two
 * streams, and the CUDA error, current-device and stream helpers that cuda_kernels.c
 * (fill and strided copy) shares.
 *
 * Compiled only in a build with the CUDA toolkit (FFK_HAS_CUDA); the rest of the tensor
 * layer reaches it through the ffk_cuda__ functions of tensor_internal.h and never
 * includes cuda_runtime.h. The CUDA runtime is linked statically (libcudart_static.a),
 * and it loads the driver (libcuda.so.1) at the first CUDA call: a build with CUDA loads
 * and runs without a driver, and every CUDA entry point then fails with "no CUDA driver
 * is installed". Invariants:
 *  - Every entry point that touches a device makes it current for the call and then
 *    restores the thread's previous current device, so a caller's CUDA state is kept.
 *    Before that it checks the device id against cudaGetDeviceCount, which is also what
 *    reports a missing driver.
 *  - A CUDA failure becomes a RuntimeError (a MemoryError for out of memory) that names
 *    the operation, the device, and the CUDA error's name, number and text, worded for
 *    the common causes (no driver, no device, no such device, graph capture). The failed
 *    call's error is then cleared with cudaGetLastError so that no later call reports it
 *    again.
 *  - Device work is asynchronous: it is queued on the calling thread's current stream
 *    for the device (ffk_stream_get; NULL, the legacy default stream, when none was set)
 *    and the call returns without waiting, so a CUDA graph capture on that stream
 *    records it. What the host reads next is the exception: a copy whose destination is
 *    host memory waits for that stream before returning, and so does a copy from host
 *    memory (its source may be reused or freed as soon as the call returns, and pinned
 *    memory is read by DMA after cudaMemcpyAsync returns). Neither can happen while the
 *    stream is capturing a graph: they are refused, before any work is queued, with a
 *    RuntimeError. Freeing device memory needs no wait: cudaFree waits for the device.
 *  - Between two devices, the copy runs on the destination's current stream after the
 *    work queued so far on the source's current stream (an event), and later work on the
 *    source's stream waits for the copy (a second event), so neither side races it.
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
    case cudaErrorStreamCaptureImplicit:
      snprintf(why, sizeof why, "the legacy default stream cannot be used while another stream of the device captures "
                                "a CUDA graph (make another stream current for this device first)");
      break;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
      snprintf(why, sizeof why, "%s is not permitted while a CUDA graph is being captured", call);
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


/*
 * Refuses, before anything is queued, work that would make the host wait for `stream`
 * while it captures a CUDA graph (a wait there would fail and invalidate the capture);
 * `what` says why the host would wait. 0, or -1 with a RuntimeError.
 */
static int refuse_if_capturing(const char *prefix, cudaStream_t stream, const char *what) {
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &status);
  if (e != cudaSuccess) return fail(prefix, e, "cudaStreamIsCapturing");
  if (status == cudaStreamCaptureStatusNone) return 0;
  return ffk_error_set(FFK_ERR_RUNTIME,
                       "%s: the current stream is capturing a CUDA graph, and %s (copy between host and device "
                       "memory outside the capture)",
                       prefix, what);
}

/*
 * Peer copy between two devices, ordered on both devices' current streams (see the
 * header). Each event is created and recorded with its stream's device current.
 */
static int copy_peer(const char *prefix, void *dst, int32_t dst_id, const void *src, int32_t src_id, size_t nbytes) {
  if (check_device(prefix, src_id) != 0 || check_device(prefix, dst_id) != 0) return -1;
  cudaStream_t src_stream = ffk_cuda__stream(src_id), dst_stream = ffk_cuda__stream(dst_id);
  cudaEvent_t read_ready = NULL, copied = NULL;
  int previous = 0;
  cudaError_t e = cudaGetDevice(&previous);
  if (e != cudaSuccess) return fail(prefix, e, "cudaGetDevice");
  const char *call = "cudaSetDevice";
  /* Each step runs only when all before it succeeded; `call` names the one that failed. */
#define STEP(name, expr) \
  if (e == cudaSuccess) call = name, e = (expr)
  STEP("cudaSetDevice", cudaSetDevice(src_id));
  STEP("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&read_ready, cudaEventDisableTiming));
  STEP("cudaEventRecord", cudaEventRecord(read_ready, src_stream)); /* the source's pending writes */
  STEP("cudaSetDevice", cudaSetDevice(dst_id));
  STEP("cudaStreamWaitEvent", cudaStreamWaitEvent(dst_stream, read_ready, 0));
  STEP("cudaMemcpyPeerAsync", cudaMemcpyPeerAsync(dst, dst_id, src, src_id, nbytes, dst_stream));
  STEP("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  STEP("cudaEventRecord", cudaEventRecord(copied, dst_stream));
  STEP("cudaSetDevice", cudaSetDevice(src_id));
  STEP("cudaStreamWaitEvent", cudaStreamWaitEvent(src_stream, copied, 0)); /* later writes to the source */
#undef STEP
  /* Destroying a recorded event is safe: CUDA releases it once its work has completed. */
  if (read_ready != NULL) (void)cudaEventDestroy(read_ready);
  if (copied != NULL) (void)cudaEventDestroy(copied);
  (void)cudaSetDevice(previous);
  return e == cudaSuccess ? 0 : fail(prefix, e, call);
}

/*
 * The copy routine of both allocators: dense bytes between the CPU, pinned host memory
 * and CUDA devices, in any direction, on the current stream of the CUDA side (see the
 * header for what waits).
 */
static int cuda_copy(void *ctx, void *dst, DLDevice dst_device, const void *src, DLDevice src_device, size_t nbytes) {
  (void)ctx;
  char a[FFK_DEVICE_STR_MAX], b[FFK_DEVICE_STR_MAX], prefix[192];
  ffk_device_format(src_device, a, sizeof a);
  ffk_device_format(dst_device, b, sizeof b);
  snprintf(prefix, sizeof prefix, "cannot copy %zu bytes from `%s` to `%s`", nbytes, a, b);
  bool dst_cuda = dst_device.device_type == kDLCUDA, src_cuda = src_device.device_type == kDLCUDA;
  if ((!dst_cuda && !ffk_device_is_host(dst_device)) || (!src_cuda && !ffk_device_is_host(src_device)))
    return ffk_error_set(FFK_ERR_RUNTIME, "%s: the CUDA allocators copy between cpu, cuda_host and cuda only", prefix);
  if (nbytes == 0) return 0;
  if (!dst_cuda && !src_cuda) { /* host memory, pinned or not */
    memmove(dst, src, nbytes);
    return 0;
  }
  if (dst_cuda && src_cuda && dst_device.device_id != src_device.device_id)
    return copy_peer(prefix, dst, dst_device.device_id, src, src_device.device_id, nbytes);
  int32_t id = dst_cuda ? dst_device.device_id : src_device.device_id;
  cudaStream_t stream = ffk_cuda__stream(id);
  bool host_side = !dst_cuda || !src_cuda;
  device_guard g;
  if (ffk_cuda__enter(prefix, id, &g) != 0) return -1;
  if (host_side && refuse_if_capturing(prefix, stream,
                                       dst_cuda ? "the host memory a copy reads must stay valid until it has run"
                                                : "a copy into host memory must wait for it") != 0) {
    ffk_cuda__leave(&g);
    return -1;
  }
  const char *call = "cudaMemcpyAsync";
  cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream);
  if (e == cudaSuccess && host_side) call = "cudaStreamSynchronize", e = cudaStreamSynchronize(stream);
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, call);
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
  cudaError_t e = cudaMemsetAsync(data, 0, nbytes, ffk_cuda__stream(device.device_id));
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, "cudaMemsetAsync");
}

/*
 * An event recorded on `producer` that `consumer` waits for, created and destroyed here:
 * destroying it right after the wait is safe (CUDA releases it once the recorded work is
 * done), and neither call waits on the host, so this is legal inside a graph capture
 * (where the wait joins the consumer to the capture, as CUDA's fork/join does).
 */
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
    (void)cudaEventDestroy(ev);
  }
  ffk_cuda__leave(&g);
  return e == cudaSuccess ? 0 : fail(prefix, e, call);
}
