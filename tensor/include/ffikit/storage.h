/*
 * ffikit/storage.h - Storage: reference-counted memory on one device, and the allocators
 * that make it.
 *
 * A Storage owns `nbytes` bytes at `data` on `device`, obtained from the allocator
 * registered for the device's type when the Storage was made; it gives them back to
 * that same allocator when the last reference goes. Tensors and their views hold a
 * Storage; the bytes never move.
 *
 * Allocators are a small C vtable registered per DLPack device type, so a user can plug
 * in a caching allocator. Built in: kDLCPU (aligned host memory), and, when ffikit was
 * built with the CUDA toolkit, kDLCUDA (device memory) and kDLCUDAHost (pinned host
 * memory). Shared-memory storage (ffk_storage_new_shared) is host memory other processes
 * can map by name.
 *
 * The CUDA allocators (a build with CUDA only; ffk_allocator_get says whether there is one):
 *  - kDLCUDA, device `cuda:N`: cudaMalloc/cudaFree on CUDA device N, made current for
 *    the call (the thread's current device is restored after). The bytes are aligned to
 *    256, and an alignment over 256 is refused with a ValueError ("cannot allocate on
 *    device `cuda:0`: alignment 512 is larger than the 256 bytes CUDA allocations are
 *    aligned to"), before any CUDA call. Zeroed storage is set with cudaMemsetAsync on
 *    the calling thread's current stream for the device (ffikit/stream.h), without
 *    waiting: work queued later on that stream sees the zeros, and so does the host
 *    through ffikit's copies (below). Allocation and freeing (cudaMalloc, cudaFree) are
 *    not permitted inside a CUDA graph capture: make tensors before capturing and
 *    release them after. cudaFree waits for the device, so storage may be released
 *    while work on it is still queued.
 *  - kDLCUDAHost, device `cuda_host:N`: page-locked host memory (cudaHostAlloc, portable
 *    to every device; cudaFreeHost), aligned as asked up to FFK_STORAGE_MAX_ALIGNMENT,
 *    readable and writable from the host like CPU memory and copied to and from devices
 *    by DMA. N must name an existing CUDA device (use 0).
 *  - Their copy routine moves dense bytes between cpu, cuda_host and cuda memory in any
 *    direction with cudaMemcpyAsync on the calling thread's current stream of the CUDA
 *    side. A copy with a host side (to or from cpu or cuda_host memory) has finished
 *    when it returns: it waits for that stream (cudaStreamSynchronize), so the host may
 *    read the destination, or reuse or free the source, at once; while the stream is
 *    capturing a CUDA graph it is refused before anything is queued ("RuntimeError:
 *    cannot copy 64 bytes from `cuda:0` to `cpu:0`: the current stream is capturing a
 *    CUDA graph, ..."). A copy within one device is queued without waiting. Between two
 *    devices, cudaMemcpyPeerAsync runs on the destination's current stream after the
 *    work queued so far on the source's current stream, and later work on the source's
 *    stream waits for it (two events); the call returns without waiting.
 *  - Failures are RuntimeErrors naming the operation, the device and the CUDA error's
 *    name, number and text, worded for the usual causes: "cannot allocate on device
 *    `cuda:0`: no CUDA driver is installed (cudaErrorInsufficientDriver 35: CUDA driver
 *    version is insufficient for CUDA runtime version)", "... no CUDA device is present
 *    (cudaErrorNoDevice 100: ...)", "... no such CUDA device, this machine has 1
 *    (cudaErrorInvalidDevice 101: ...)". Out of device memory is a MemoryError: "cannot
 *    allocate 1099511627776 bytes on device `cuda:0`: out of memory
 *    (cudaErrorMemoryAllocation 2: out of memory)". These allocations do not go through
 *    ffikit's host allocation path, so the failing-allocator hook (ffikit/debug.h) does
 *    not fail them.
 * In a build without CUDA there is no allocator for kDLCUDA/kDLCUDAHost and storage on
 * them fails with "RuntimeError: cannot allocate on device `cuda:0`: ffikit was built
 * without CUDA".
 *
 * Thread safety: every function here may be called from any thread. Registering an
 * allocator while others allocate from the same device type is safe: each Storage keeps
 * the allocator it came from.
 */
#ifndef FFIKIT_STORAGE_H
#define FFIKIT_STORAGE_H

#include <ffikit/ffi.h>

FFK_EXTERN_C_BEGIN

/* The default alignment of CPU storage, and the largest alignment an allocation may ask. */
#define FFK_STORAGE_DEFAULT_ALIGNMENT 64
#define FFK_STORAGE_MAX_ALIGNMENT 4096

/*
 * An allocator for one device type. `allocate` returns `nbytes` bytes aligned to
 * `alignment` (a power of two) on `device`, or NULL with an error raised (MemoryError,
 * or RuntimeError naming the device problem); nbytes may be 0 (return a unique non-NULL
 * pointer or NULL without an error). `free` gives them back and cannot fail. `copy`
 * (optional, NULL for none) copies nbytes between two pointers of which at least one is
 * on this device type; 0, or -1 with an error. `ctx` is passed to each. The struct is
 * copied when registered; `name` must stay valid until exit.
 */
typedef struct ffk_allocator {
  const char *name;
  void *ctx;
  void *(*allocate)(void *ctx, DLDevice device, size_t nbytes, size_t alignment);
  void (*free)(void *ctx, DLDevice device, void *ptr, size_t nbytes);
  int (*copy)(void *ctx, void *dst, DLDevice dst_device, const void *src, DLDevice src_device, size_t nbytes);
} ffk_allocator;

/*
 * Registers `allocator` (copied) for `device_type`, replacing the current one; storage
 * made earlier keeps the allocator it came from. If `previous` is not NULL it receives
 * the replaced allocator (all zero when there was none), so a wrapper can delegate to it.
 * While the built-in CPU allocator is in place, small CPU storage and tensors skip it:
 * up to 256 bytes live inside the Storage object, or inside the block of a tensor made
 * by ffk_tensor_empty/zeros. Registering another CPU allocator routes every CPU
 * allocation through it; registering the built-in one again (a saved `previous`)
 * restores the shortcut.
 * 0, or -1 with a ValueError (unknown device type, NULL allocator or allocate/free).
 */
FFK_API int ffk_allocator_register(int32_t device_type, const ffk_allocator *allocator, ffk_allocator *previous);

/*
 * Copies the allocator registered for `device_type` into *out: 1 when there is one, 0
 * when none is (the device type is not supported by this build), -1 with a ValueError.
 */
FFK_API int ffk_allocator_get(int32_t device_type, ffk_allocator *out);

/*
 * The number of devices of `device_type` this process can use: 1 for kDLCPU; for
 * kDLCUDA and kDLCUDAHost the number of CUDA devices (cudaGetDeviceCount), which is 0,
 * not an error, when ffikit was built without CUDA, no CUDA driver is installed, or no
 * device is present; 0 for other known device types, which ffikit cannot enumerate.
 * -1 with a ValueError ("device_count: unknown device type 99") for a device type
 * that DLPack does not define. Takes and returns no references.
 */
FFK_API int ffk_device_count(int32_t device_type);

typedef struct ffk_storage ffk_storage;

/*
 * A new Storage of `nbytes` bytes on `device`, aligned to `alignment` (0 for the default
 * of FFK_STORAGE_DEFAULT_ALIGNMENT; a power of two up to FFK_STORAGE_MAX_ALIGNMENT, and
 * up to 256 on a CUDA device). The bytes are uninitialised. On a CUDA device the device
 * is checked even when nbytes is 0. Returns a new reference, or NULL with: ValueError
 * (bad alignment, nbytes over PTRDIFF_MAX, an unknown device), RuntimeError "cannot
 * allocate on device `cuda:0`: ffikit was built without CUDA" or the device's own error
 * (no driver, no device, no such device: see above), MemoryError (host or device memory
 * exhausted).
 */
FFK_API ffk_storage *ffk_storage_new(DLDevice device, size_t nbytes, size_t alignment);

/* Like ffk_storage_new, with the bytes set to zero. */
FFK_API ffk_storage *ffk_storage_new_zeroed(DLDevice device, size_t nbytes, size_t alignment);

/* The first byte (NULL only for an empty storage that owns nothing). Borrowed from `s`. */
FFK_API void *ffk_storage_data(const ffk_storage *s);

/* The size in bytes. */
FFK_API size_t ffk_storage_nbytes(const ffk_storage *s);

/* The device the bytes live on. */
FFK_API DLDevice ffk_storage_device(const ffk_storage *s);

/*
 * Per-device statistics of storage made through ffikit's allocators (and shared
 * memory, counted on the CPU): bytes and blocks in use now, and the peak of bytes in use
 * since start or the last reset.
 */
typedef struct ffk_storage_stats {
  int64_t bytes_in_use;
  int64_t blocks_in_use;
  int64_t peak_bytes_in_use;
} ffk_storage_stats;

/* The statistics of one device (device ids above 63 share one slot per type). Cannot fail. */
FFK_API ffk_storage_stats ffk_storage_get_stats(DLDevice device);

/* Sets the device's peak to its current use. Cannot fail. */
FFK_API void ffk_storage_reset_peak(DLDevice device);

/* ---- Shared memory ----------------------------------------------------------------- */

/*
 * A new Storage of `nbytes` zeroed bytes of POSIX shared memory (shm_open + mmap) on
 * the CPU, under `name` ("/ffikit-..." is made up when NULL; a given name must start
 * with '/', contain no other '/' and be at most 200 characters long). The segment is
 * readable and writable by the same user only; the bytes are aligned to 4096. Another
 * process attaches with ffk_storage_attach_shared and sees the same bytes.
 *
 * Lifetime policy: each process that holds the segment is recorded (by PID) in a small
 * header inside the segment. The name is unlinked when the last recorded holder lets
 * go. A holder that died without letting go (a crash, SIGKILL) is pruned by the next
 * create, attach or release of that name, so a crash leaves the name behind only until
 * another process touches it; ffk_storage_sweep_shared() removes every ffikit segment
 * whose holders are all dead. (An exited child counts as alive until it is reaped.)
 * Returns a new reference, or NULL with a ValueError (bad name, name already exists,
 * nbytes too large), RuntimeError (the system call and errno), or MemoryError.
 */
FFK_API ffk_storage *ffk_storage_new_shared(const char *name, size_t nbytes);

/*
 * Attaches to the shared-memory storage `name` made by ffk_storage_new_shared in this or
 * another process; `name` is the one given there (or ffk_storage_shared_name), with its
 * leading '/'. Returns a new reference, or NULL with a FileNotFoundError "no shared
 * memory named `/x`" (no such segment, or one whose holders are all dead: it is
 * unlinked), ValueError (bad name: no leading '/', another '/', too long; not an ffikit
 * segment), RuntimeError (a system call, or 64 processes hold it already) or MemoryError.
 */
FFK_API ffk_storage *ffk_storage_attach_shared(const char *name);

/* The shared-memory name of `s` (as given, or the made-up "/ffikit-..."), or NULL when it
   is not shared. Borrowed from `s`. */
FFK_API const char *ffk_storage_shared_name(const ffk_storage *s);

/*
 * Unlinks every ffikit shared-memory segment in /dev/shm whose recorded holders have
 * all exited. Returns how many were removed, or -1 with a RuntimeError.
 */
FFK_API int64_t ffk_storage_sweep_shared(void);

FFK_EXTERN_C_END

#endif /* FFIKIT_STORAGE_H */
