/*
 * ffikit/dlpack.h - exchanging tensors through DLPack, legacy and versioned.
 *
 * Export hands a consumer a DLManagedTensor (or DLManagedTensorVersioned) that keeps
 * the Tensor alive until the consumer calls its deleter, exactly once. Import takes
 * over a producer's managed tensor: on success the returned Tensor owns it and calls its
 * deleter when the Tensor (and every view of it) is gone; on failure nothing is taken
 * and the caller still owns it.
 *
 * The DLPack header is DLPack 1.1's, vendored in third_party/dlpack and installed beside
 * ffikit's headers; the layouts ffikit relies on are checked by static asserts below.
 */
#ifndef FFIKIT_DLPACK_H
#define FFIKIT_DLPACK_H

#include <ffikit/tensor.h>

#include <stddef.h>

FFK_EXTERN_C_BEGIN

/* DLPack 1.1's header (third_party/dlpack, installed beside ffikit's) declares the
   versioned struct without a typedef name in C. */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;

FFK_STATIC_ASSERT(sizeof(DLPackVersion) == 8, "DLPackVersion layout");
FFK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "DLManagedTensorVersioned layout");
FFK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, flags) == 24, "DLManagedTensorVersioned layout");
FFK_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "DLManagedTensorVersioned layout");
FFK_STATIC_ASSERT(sizeof(DLTensor) == 48, "DLTensor layout");

/* What import may demand of a tensor beyond validity. */
typedef struct ffk_dlpack_requirements {
  size_t alignment;     /* of the first element's address, a power of two; 0 or 1 for none */
  bool contiguous;      /* row-major without gaps (ffk_tensor_is_contiguous) */
} ffk_dlpack_requirements;

/*
 * Whether `req` (borrowed, may be NULL: no requirements) is one import can apply: its
 * alignment is 0 or a power of two. Both imports below check it first, before looking at
 * the tensor; a binding calls it before asking a producer for a tensor (Python's
 * from_dlpack(require_alignment=...)). `what` (may be NULL) starts the message. 0, or -1
 * with a ValueError "from_dlpack: required alignment 6 is not a power of two".
 */
FFK_API int ffk_dlpack_check_requirements(const char *what, const ffk_dlpack_requirements *req);

/*
 * Exports `t` (borrowed; the export holds its own reference) as a legacy DLManagedTensor.
 * Shape and strides point into the Tensor (strides never NULL). A read-only tensor cannot
 * be exported this way (the legacy struct cannot say so): ValueError. Returns new memory
 * the consumer frees by calling its deleter, or NULL with a MemoryError.
 * Alignment: data and byte_offset are the tensor's own, as numpy and PyTorch export them.
 * A tensor wrapped over a misaligned buffer (ffikit's CPU loops take any address) is
 * exported misaligned: DLPack's header asks for a 256-byte aligned `data` but notes that
 * producers do not keep that promise and consumers should not rely on it; a consumer that
 * needs alignment checks data + byte_offset (ffikit's own import: `req->alignment`).
 */
FFK_API DLManagedTensor *ffk_tensor_to_dlpack(ffk_tensor *t);

/* Exports `t` as a DLManagedTensorVersioned (version 1.1); its read-only flag is set when t is read-only. */
FFK_API DLManagedTensorVersioned *ffk_tensor_to_dlpack_versioned(ffk_tensor *t);

/*
 * Imports a legacy managed tensor. Validates ndim (0..FFK_TENSOR_MAX_NDIM), shape (not
 * NULL when ndim > 0, no negative dimension), strides (NULL means compact; any sign),
 * dtype (one a tensor holds: see tensor.h), device (a known type, id >= 0), data (NULL
 * only with zero elements) and `req` (may be NULL; ffk_dlpack_check_requirements first,
 * then the alignment of data + byte_offset). Returns a new Tensor that owns `m`,
 * or NULL with a ValueError naming the problem and `m` untouched (still the caller's).
 * A round trip returns the original: when `m` is one of ffikit's own exports and its
 * DLTensor is unchanged, the result is the exported Tensor itself (a new reference: the
 * export's), after the same validation, and `m` is freed at once.
 * Cost: the usual layout (CPU, byte_offset 0, one-lane whole-byte elements, NULL or
 * row-major strides, no alignment asked: an ordinary numpy array's) is validated and made
 * into a Tensor in one pass over the shape, one allocation; any other layout, or a bad
 * one, takes the full checks above, with the same result and the same errors.
 */
FFK_API ffk_tensor *ffk_tensor_from_dlpack(DLManagedTensor *m, const ffk_dlpack_requirements *req);

/*
 * Like ffk_tensor_from_dlpack for a versioned tensor. Major versions other than 1 are
 * refused; the read-only flag carries over (ffk_tensor_is_read_only).
 */
FFK_API ffk_tensor *ffk_tensor_from_dlpack_versioned(DLManagedTensorVersioned *m, const ffk_dlpack_requirements *req);

/* True when the tensor came from a producer that marked it read-only (and its views). */
FFK_API bool ffk_tensor_is_read_only(const ffk_tensor *t);

/* ---- Streams: ordering work across producers and consumers ------------------------------- */

/* Device types whose work runs on streams that the functions below order (CUDA's). */
static inline bool ffk_device_has_streams(DLDevice d) {
  int32_t t = ffk_device_type(d);
  return t == FFK_DEVICE_CUDA || t == FFK_DEVICE_CUDA_MANAGED;
}

/*
 * Makes the work queued so far on stream `producer` of `device` happen before any work
 * queued later on stream `consumer` of the same device: on CUDA, an event recorded on
 * producer that consumer waits for (cudaEventRecord + cudaStreamWaitEvent), without
 * synchronising the host; legal inside a CUDA graph capture. Streams are handles as in
 * ffikit/stream.h (NULL the legacy default stream, 1 cudaStreamLegacy, 2
 * cudaStreamPerThread). Nothing to do (returns 0) when producer and consumer are the same
 * stream (NULL and 1 are two names of the legacy default stream) or the device
 * has no streams (ffk_device_has_streams). 0, or -1 with a RuntimeError naming the device
 * and the CUDA error (also "ffikit was built without CUDA" in a build without it).
 */
FFK_API int ffk_stream_order(DLDevice device, void *producer, void *consumer);

/*
 * The producer's side of the DLPack `stream` argument (the array API standard's
 * __dlpack__(stream=...)) for exporting `t` (borrowed): validates the argument and makes
 * ffikit's pending work on t's device (the calling thread's current stream,
 * ffk_stream_get) visible to the consumer's stream. `has_stream` false means the consumer
 * passed None. For a device with streams (ffk_device_has_streams): None means the legacy
 * default stream, -1 asks for no synchronisation, 1 is the legacy default stream, 2 the
 * per-thread default stream, and a value above 2 a stream handle; 0 (ambiguous) and other
 * negative values are a ValueError naming the value and the device. For any other device
 * the argument must be None or -1 (ValueError "stream must be None for a tensor on cpu,
 * got 5"). 0, or -1 with that ValueError or ffk_stream_order's error.
 */
FFK_API int ffk_tensor_dlpack_export_stream(const ffk_tensor *t, bool has_stream, int64_t stream);

/*
 * The check alone of ffk_tensor_dlpack_export_stream: whether `stream` is a valid DLPack
 * `stream` argument for a tensor on `device` (the same rule and the same ValueErrors),
 * without ordering anything. A binding calls it before work that the argument would make
 * useless, such as __dlpack__(copy=True)'s copy. 0, or -1 with that ValueError.
 */
FFK_API int ffk_dlpack_check_stream(DLDevice device, bool has_stream, int64_t stream);

/*
 * The consumer's side: the `stream` value to pass to a producer's __dlpack__ for a tensor
 * on `device`, so the producer orders its work before ffikit's current stream for that
 * device (ffk_stream_get): true with *out set (1 for the legacy default stream, the
 * handle as an integer otherwise) for a device with streams, false (pass None) for any
 * other. Cannot fail.
 */
FFK_API bool ffk_dlpack_consumer_stream(DLDevice device, int64_t *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_DLPACK_H */
