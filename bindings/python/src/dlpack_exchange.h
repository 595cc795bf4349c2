/*
 * dlpack_exchange.h - DLPack 1.3's C exchange API (`__dlpack_c_exchange_api__`), declared
 * from DLPack 1.3's definition: the vendored header (third_party/dlpack) is DLPack 1.1,
 * whose minor version ffikit stamps on its exports, and predates it.
 *
 * A framework sets, on its tensor type, a PyCapsule named "dlpack_exchange_api" that
 * points to a process-lifetime DLPackExchangeAPI: C function pointers that move tensors
 * between the framework's Python objects and DLManagedTensorVersioned without calling
 * __dlpack__ through Python. The layout below is DLPack 1.3's, field for field.
 */
#ifndef FFIKIT_PY_DLPACK_EXCHANGE_H
#define FFIKIT_PY_DLPACK_EXCHANGE_H

#include <ffikit/dlpack.h>

#define FFKPY_DLPACK_EXCHANGE_CAPSULE "dlpack_exchange_api"

typedef int (*DLPackManagedTensorAllocator)(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                                            void (*SetError)(void *error_ctx, const char *kind, const char *message));
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void *py_object, DLManagedTensorVersioned **out);
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void *py_object, DLTensor *out);
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id, void **out_current_stream);
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned *tensor, void **out_py_object);

typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

FFK_STATIC_ASSERT(sizeof(DLPackExchangeAPIHeader) == 16, "DLPackExchangeAPIHeader layout (DLPack 1.3)");
FFK_STATIC_ASSERT(offsetof(DLPackExchangeAPI, managed_tensor_allocator) == 16, "DLPackExchangeAPI layout");
FFK_STATIC_ASSERT(sizeof(DLPackExchangeAPI) == 56, "DLPackExchangeAPI layout (DLPack 1.3)");

/* What ffkpy_exchange_api_of returns when a Python exception is set. */
#define FFKPY_EXCHANGE_ERROR ((const DLPackExchangeAPI *)(uintptr_t)1)

/*
 * The exchange table (major version 1) on o's type, looked up once per type and cached:
 * borrowed, for the process's lifetime. NULL when the type has none; FFKPY_EXCHANGE_ERROR
 * with a Python exception set. Callers check the entry points they need.
 */
const DLPackExchangeAPI *ffkpy_exchange_api_of(PyObject *o);

/* The exchange capsule (a new reference) of the class `cls`, as ffkpy_exchange_api_of finds
 * it for an instance; Py_None (new reference) when it has none; NULL with an exception. */
PyObject *ffkpy_exchange_capsule_of_class(PyObject *cls);

/* ---- A call's exchange state (dlpack_exchange.c) ---- */

/*
 * A call's exchange state: the DLPack exchange table that its results go through (NULL:
 * none) and, as tvm_ffi does, the stream it runs on: when an argument is a framework
 * tensor on a device with streams, imported through a table with current_work_stream,
 * the framework's current stream becomes ffikit's current stream for that device for the
 * call (stream_set, the one before kept in previous_stream), so the work the function
 * queues follows the framework's; ffkpy_exchange_restore_stream puts it back.
 */
typedef struct {
  const struct DLPackExchangeAPI *api;
  bool stream_set;
  int32_t stream_device_type, stream_device_id;
  void *previous_stream;
} ffkpy_call_exchange;

/* The call whose arguments this thread converts, or NULL. */
ffkpy_call_exchange *ffkpy_exchange_current(void);

/* After a call and its results' conversion: the stream before it is current again. */
static inline void ffkpy_exchange_restore_stream(const ffkpy_call_exchange *call) {
  if (call->stream_set) (void)ffk_stream_set(call->stream_device_type, call->stream_device_id, call->previous_stream, NULL);
}

/* Makes `call` (api NULL) the call whose arguments this thread converts; returns the one
 * before it, for ffkpy_exchange_end. Cannot fail. */
ffkpy_call_exchange *ffkpy_exchange_begin(ffkpy_call_exchange *call);
void ffkpy_exchange_end(ffkpy_call_exchange *prev);

/* A DLPack producer `o` is being converted: when a call is converting its arguments and
 * o's type has an exchange table that gives tensors back, that table becomes the call's.
 * 0, or -1 with a Python exception. */
int ffkpy_exchange_note_tensor(PyObject *o);

/* A wrapper argument: a container that remembers a table lends it to a call that has none. */
void ffkpy_exchange_note_wrapper(PyObject *o);

#endif /* FFIKIT_PY_DLPACK_EXCHANGE_H */
