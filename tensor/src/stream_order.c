/*
 * stream_order.c - ordering work across streams for DLPack exchanges (ffikit/dlpack.h):
 * the array API's `stream` argument on both sides, and ffk_stream_order, which hands the
 * CUDA work to cuda.c (ffk_cuda__stream_order) in a build with CUDA.
 */
#include "tensor_internal.h"

#include <ffikit/dlpack.h>
#include <ffikit/stream.h>

/* NULL and 1 (cudaStreamLegacy) both name the legacy default stream. */
static bool same_stream(void *a, void *b) {
  return a == b || ((a == NULL || a == (void *)1) && (b == NULL || b == (void *)1));
}

int ffk_stream_order(DLDevice device, void *producer, void *consumer) {
  if (same_stream(producer, consumer) || !ffk_device_has_streams(device)) return 0;
#ifdef FFK_HAS_CUDA
  return ffk_cuda__stream_order(device, producer, consumer);
#else
  char dev[FFK_DEVICE_STR_MAX];
  ffk_device_format(device, dev, sizeof dev);
  return ffk_error_set(FFK_ERR_RUNTIME, "cannot order streams on device `%s`: ffikit was built without CUDA", dev);
#endif
}

int ffk_dlpack_check_stream(DLDevice device, bool has_stream, int64_t stream) {
  if (!ffk_device_has_streams(device)) {
    if (!has_stream || stream == -1) return 0;
    return ffk_error_set(FFK_ERR_VALUE, "stream must be None for a tensor on %s, got %lld",
                         ffk_device_type_name(ffk_device_type(device)), (long long)stream);
  }
  if (has_stream && stream != -1 && stream < 1) {
    char dev[FFK_DEVICE_STR_MAX];
    ffk_device_format(device, dev, sizeof dev);
    return ffk_error_set(FFK_ERR_VALUE, "stream %lld is not a valid DLPack stream for a tensor on `%s`%s",
                         (long long)stream, dev,
                         stream == 0 ? " (0 is ambiguous: pass 1 for the legacy default stream, 2 for the "
                                       "per-thread default stream)"
                                     : " (use None, -1, 1, 2 or a stream handle)");
  }
  return 0;
}

int ffk_tensor_dlpack_export_stream(const ffk_tensor *t, bool has_stream, int64_t stream) {
  DLDevice device = t->dl.device;
  if (ffk_dlpack_check_stream(device, has_stream, stream) != 0) return -1;
  /* No stream to wait on: a device without streams, or -1 (the consumer asked for no synchronisation). */
  if (!ffk_device_has_streams(device) || (has_stream && stream == -1)) return 0;
  void *consumer = (void *)(uintptr_t)(has_stream ? stream : 1); /* None: the legacy default stream */
  void *producer = ffk_stream_get(ffk_device_type(device), device.device_id);
  return ffk_stream_order(device, producer, consumer);
}

bool ffk_dlpack_consumer_stream(DLDevice device, int64_t *out) {
  if (!ffk_device_has_streams(device)) return false;
  void *s = ffk_stream_get(ffk_device_type(device), device.device_id);
  *out = s == NULL ? 1 : (int64_t)(uintptr_t)s;
  return true;
}
