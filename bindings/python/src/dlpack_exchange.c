/*
 * dlpack_exchange.c - the DLPack C exchange API, both ways.
 *
 * Producer: ffikit.Tensor carries `__dlpack_c_exchange_api__`, so a framework that knows
 * the protocol takes our tensors (and allocates through our allocators) without calling
 * __dlpack__ from Python. Consumer: a producer type that offers the capsule (PyTorch does)
 * is asked through it first; the table is looked up once per type and cached.
 *
 * Streams: the table's entry points do not synchronise ("no_sync"); each side reports the
 * stream its pending work is on through current_work_stream (ours: ffk_stream_get, the
 * calling thread's current stream), and the consumer orders it before its own. Importing
 * a tensor on a device with streams, ffikit orders the producer's current_work_stream
 * before its current stream with ffk_stream_order (an event, no host sync); a table
 * without current_work_stream is not used for such a tensor (__dlpack__(stream=) is).
 * Inside a Function call's argument conversion, the first such tensor instead makes the
 * producer's stream ffikit's current stream for the call (tvm_ffi's rule: a kernel called
 * with torch tensors runs on torch's current stream), so nothing needs an event; the
 * call puts the previous stream back when it returns (ffkpy_call_exchange).
 */
#include "ffikit_py.h"

#include "dlpack_exchange.h"

#include <ffikit/stream.h>

/* ---- Producer --------------------------------------------------------------------- */

static int api_allocate(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                        void (*set_error)(void *error_ctx, const char *kind, const char *message)) {
  *out = NULL;
  ffk_tensor *t = ffk_tensor_empty(prototype->ndim, prototype->shape, prototype->dtype, prototype->device);
  DLManagedTensorVersioned *m = t ? ffk_tensor_to_dlpack_versioned(t) : NULL;
  ffk_object_release((ffk_object *)t);
  if (m == NULL) {
    ffk_error *err = ffk_error_fetch();
    if (set_error != NULL) set_error(error_ctx, ffk_error_kind(err), ffk_error_message(err));
    ffk_object_release((ffk_object *)err);
    return -1;
  }
  *out = m;
  return 0;
}

static int api_from_py(void *py_object, DLManagedTensorVersioned **out) {
  PyObject *o = py_object;
  if (!PyObject_TypeCheck(o, ffkpy_up.tensor_type)) {
    PyErr_Format(PyExc_TypeError, "expected an ffikit.Tensor, got %.200s", Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = ffk_tensor_to_dlpack_versioned((ffk_tensor *)((ffkpy_Object *)o)->obj);
  return *out ? 0 : ffkpy_raise_from_ffk_int();
}

static int api_dltensor_from_py(void *py_object, DLTensor *out) {
  PyObject *o = py_object;
  if (!PyObject_TypeCheck(o, ffkpy_up.tensor_type)) {
    PyErr_Format(PyExc_TypeError, "expected an ffikit.Tensor, got %.200s", Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = *ffk_tensor_dltensor_borrow((ffk_tensor *)((ffkpy_Object *)o)->obj); /* shape/strides live in the Tensor */
  return 0;
}

static int api_to_py(DLManagedTensorVersioned *m, void **out) {
  ffk_tensor *t = ffk_tensor_from_dlpack_versioned(m, NULL);
  if (t == NULL) {
    m->deleter(m); /* the table's contract: ownership is stolen, also on failure */
    return ffkpy_raise_from_ffk_int();
  }
  PyObject *w = ffkpy_wrap_steal((ffk_object *)t);
  *out = w;
  return w ? 0 : -1;
}

static int api_current_stream(DLDeviceType device_type, int32_t device_id, void **out) {
  *out = ffk_stream_get((int32_t)device_type, device_id); /* NULL: the default stream */
  return 0;
}

static DLPackExchangeAPI g_api = {
    .header = {.version = {DLPACK_MAJOR_VERSION, 3}, .prev_api = NULL},
    .managed_tensor_allocator = api_allocate,
    .managed_tensor_from_py_object_no_sync = api_from_py,
    .managed_tensor_to_py_object_no_sync = api_to_py,
    .dltensor_from_py_object_no_sync = api_dltensor_from_py,
    .current_work_stream = api_current_stream,
};

int ffkpy_dlpack_exchange_init(void) {
  PyObject *capsule = PyCapsule_New(&g_api, FFKPY_DLPACK_EXCHANGE_CAPSULE, NULL);
  if (capsule == NULL) return -1;
  int rc = PyDict_SetItemString(ffkpy_up.tensor_type->tp_dict, "__dlpack_c_exchange_api__", capsule);
  Py_DECREF(capsule);
  PyType_Modified(ffkpy_up.tensor_type);
  return rc;
}

/* ---- Consumer ----------------------------------------------------------------------- */

static PyObject *g_api_cache; /* dict: type -> capsule, or None when the type has no table */

/* The exchange capsule of the class `tp` (borrowed from the cache), Py_None when it has
 * none that this code speaks, NULL with an exception. */
static PyObject *capsule_of_type(PyObject *tp) {
  if (g_api_cache == NULL && (g_api_cache = PyDict_New()) == NULL) return NULL;
  PyObject *cap = PyDict_GetItemWithError(g_api_cache, tp);
  if (cap == NULL) {
    if (PyErr_Occurred()) return NULL;
    cap = PyObject_GetAttrString(tp, "__dlpack_c_exchange_api__");
    if (cap == NULL) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
      PyErr_Clear();
      cap = Py_NewRef(Py_None);
    } else {
      const DLPackExchangeAPI *api = PyCapsule_IsValid(cap, FFKPY_DLPACK_EXCHANGE_CAPSULE)
                                         ? PyCapsule_GetPointer(cap, FFKPY_DLPACK_EXCHANGE_CAPSULE)
                                         : NULL;
      /* Not the protocol's capsule, or a major version we do not know: use __dlpack__. */
      if (api == NULL || api->header.version.major != 1) Py_SETREF(cap, Py_NewRef(Py_None));
    }
    int rc = PyDict_SetItem(g_api_cache, tp, cap);
    Py_DECREF(cap); /* the cache keeps it */
    if (rc != 0) return NULL;
  }
  return cap;
}

/* The class met last and its table, in front of the cache: an import from numpy, which has
 * no table, then costs one comparison instead of hashing the class and probing the dict
 * (about 130 instructions of the ~3,000 an import took). The class is kept alive by the
 * cache's key, and both are dropped together (ffkpy_dlpack_exchange_forget). */
static PyTypeObject *g_last_type;
static const DLPackExchangeAPI *g_last_api;

const DLPackExchangeAPI *ffkpy_exchange_api_of(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  if (tp == g_last_type) return g_last_api;
  PyObject *cap = capsule_of_type((PyObject *)tp);
  if (cap == NULL) return FFKPY_EXCHANGE_ERROR;
  const DLPackExchangeAPI *api = cap == Py_None ? NULL : PyCapsule_GetPointer(cap, FFKPY_DLPACK_EXCHANGE_CAPSULE);
  g_last_type = tp; /* borrowed: the cache holds tp as a key */
  g_last_api = api;
  return api;
}

PyObject *ffkpy_exchange_capsule_of_class(PyObject *cls) {
  PyObject *cap = capsule_of_type(cls);
  return cap == NULL ? NULL : Py_NewRef(cap);
}

/* Gives a managed tensor back to its producer (the table's contract: it is ours to release). */
static void give_back(DLManagedTensorVersioned *m) {
  if (m->deleter != NULL) m->deleter(m);
}

int ffkpy_tensor_from_exchange_api(PyObject *o, const ffk_dlpack_requirements *req, ffk_tensor **out) {
  *out = NULL;
  const DLPackExchangeAPI *api = ffkpy_exchange_api_of(o);
  if (api == FFKPY_EXCHANGE_ERROR) return -1;
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL) return 0;
  DLManagedTensorVersioned *m = NULL;
  if (api->managed_tensor_from_py_object_no_sync(o, &m) != 0 || m == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "the producer's DLPack exchange API failed");
    return -1;
  }
  DLDevice device = m->dl_tensor.device;
  if (ffk_device_has_streams(device) && api->current_work_stream == NULL) {
    give_back(m); /* no way to order its work: the Python protocol passes our stream instead */
    return 0;
  }
  ffk_tensor *t = ffk_tensor_from_dlpack_versioned(m, req);
  if (t == NULL) {
    give_back(m); /* refused: we own it now, so give it back */
    return ffkpy_raise_from_ffk_int();
  }
  if (ffk_device_has_streams(device)) {
    /* The producer's pending work (on its current stream) before anything on ours. */
    void *producer = NULL;
    if (api->current_work_stream((DLDeviceType)ffk_device_type(device), device.device_id, &producer) != 0) {
      ffk_object_release((ffk_object *)t);
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_BufferError, "the producer's DLPack exchange API could not name its current stream "
                                        "for device (%d, %d)",
                     (int)ffk_device_type(device), (int)device.device_id);
      return -1;
    }
    int32_t type = ffk_device_type(device);
    ffkpy_call_exchange *call = ffkpy_exchange_current();
    if (call != NULL && !call->stream_set) {
      /* The first such argument of a call: the call runs on the producer's stream (tvm_ffi's
         rule), so nothing needs ordering; ffkpy_exchange_restore_stream undoes it. */
      if (ffk_stream_set(type, device.device_id, producer, &call->previous_stream) != 0) {
        ffk_object_release((ffk_object *)t);
        return ffkpy_raise_from_ffk_int();
      }
      call->stream_set = true, call->stream_device_type = type, call->stream_device_id = device.device_id;
    }
    void *ours = ffk_stream_get(type, device.device_id);
    if (ffk_stream_order(device, producer, ours) != 0) {
      ffk_object_release((ffk_object *)t);
      return ffkpy_raise_from_ffk_int();
    }
  }
  *out = t;
  return 1;
}

/* ---- A call's exchange state ---------------------------------------------------------
 *
 * The call being converted is kept in a thread-local slot that each call sets around its
 * argument conversion (and restores, so nested calls keep their own): the tensors the
 * conversion imports (above, tensor_dlpack.c) and the containers it lends note their
 * table there, and the call's results go back through it (tensor_results.c).
 */

/* The call whose arguments this thread is converting, or NULL. */
static _Thread_local ffkpy_call_exchange *g_current;

ffkpy_call_exchange *ffkpy_exchange_begin(ffkpy_call_exchange *call) {
  ffkpy_call_exchange *prev = g_current;
  call->api = NULL;
  call->stream_set = false;
  g_current = call;
  return prev;
}

ffkpy_call_exchange *ffkpy_exchange_current(void) { return g_current; }

void ffkpy_exchange_end(ffkpy_call_exchange *prev) { g_current = prev; }

int ffkpy_exchange_note_tensor(PyObject *o) {
  if (g_current == NULL) return 0;
  const DLPackExchangeAPI *api = ffkpy_exchange_api_of(o);
  if (api == FFKPY_EXCHANGE_ERROR) return -1;
  /* A table that can give tensors back; the last one wins, as in tvm_ffi. */
  if (api != NULL && api->managed_tensor_to_py_object_no_sync != NULL) g_current->api = api;
  return 0;
}

void ffkpy_exchange_note_wrapper(PyObject *o) {
  const struct DLPackExchangeAPI *api = ((ffkpy_Object *)o)->dlpack_api;
  if (g_current != NULL && g_current->api == NULL && api != NULL) g_current->api = api;
}

void ffkpy_dlpack_exchange_forget(void) {
  g_last_type = NULL;
  g_last_api = NULL;
  Py_CLEAR(g_api_cache);
}
