/*
 * ffikit/stream.h - the current stream, one per (thread, device), the way TVM-FFI's
 * environment stream API (TVMFFIEnvSetStream/TVMFFIEnvGetStream) keeps it.
 *
 * A stream is an opaque handle (a cudaStream_t on CUDA devices); ffikit never creates or
 * destroys one here. Every ffikit operation on a device with streams (on CUDA: the
 * zeroing of new storage, fill, copy, contiguous, DLPack ordering) queues its work on the
 * calling thread's current stream for that device, so a caller that sets the stream its
 * framework uses (torch's current stream, a CUDA graph capture's stream) gets ffikit's work
 * ordered with its own. A stream never set is NULL: on CUDA the legacy default stream.
 * CUDA's special handles are accepted as they are: 1 (cudaStreamLegacy) and
 * 2 (cudaStreamPerThread).
 *
 * The table is thread-local: a thread starts with every stream NULL, and what one thread
 * sets is never seen by another. Its memory is released when the thread exits.
 */
#ifndef FFIKIT_STREAM_H
#define FFIKIT_STREAM_H

#include <stdint.h>

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/*
 * Makes `stream` (borrowed: ffikit neither keeps it alive nor destroys it) the calling
 * thread's current stream for device (`device_type`, an FFK_DEVICE_* value, and
 * `device_id`). When `previous` is not NULL it receives the stream that was current
 * before, for restoring it later. NULL resets to the default. 0, or -1 with a ValueError
 * naming the bad value for a device type that is not a DLPack one or a negative
 * device_id (then nothing changes); a MemoryError when the table cannot grow.
 */
FFK_API int ffk_stream_set(int32_t device_type, int32_t device_id, void *stream, void **previous);

/*
 * The calling thread's current stream for the device (borrowed), NULL when none was set
 * (the default stream) or the device is not a valid one. Cannot fail; takes no lock.
 */
FFK_API void *ffk_stream_get(int32_t device_type, int32_t device_id);

FFK_EXTERN_C_END

#endif /* FFIKIT_STREAM_H */
