/*
 * tensor_results.c - tensors go back to the framework that gave them (tvm_ffi's rule).
 *
 * When a Function is called with tensors of a framework that offers the DLPack C exchange
 * API on its tensor type (PyTorch: torch.Tensor.__dlpack_c_exchange_api__), the tensors it
 * returns come back as that framework's tensors, zero copy, through the table's
 * managed_tensor_to_py_object_no_sync:
 *
 *   - the call's table is that of the last tensor argument converted through a table
 *     (nested ones too: a list of torch tensors counts); a container argument that came
 *     back from such a call supplies its table when no tensor argument did;
 *   - a container the call returns remembers the table (ffkpy_Object.dlpack_api), so the
 *     tensors read from it, and from containers nested in it, come back the same way;
 *   - a Function whose `exchange_tensors` is False returns ffikit.Tensor (and containers
 *     that remember nothing), whatever it was given;
 *   - when the framework refuses a tensor (a dtype it has no type for), the result is the
 *     ffikit.Tensor, as tvm_ffi does; so is a tensor with negative strides, which PyTorch
 *     cannot hold (its import would end the process);
 *   - on a device with streams, ffikit's current stream is ordered before the framework's
 *     current_work_stream first (an event, no host wait), so the framework never reads
 *     the tensor before ffikit's pending work on it; a table that cannot name its stream
 *     gets the ffikit.Tensor instead, whose __dlpack__(stream=) orders.
 *
 * The table of the call being converted is the call's exchange state (dlpack_exchange.c),
 * which each call sets around its argument conversion. Everything here runs with the GIL
 * held.
 */
#include "ffikit_py.h"

#include "dlpack_exchange.h"

static int is_container(int32_t type_index) {
  return type_index == FFK_TYPE_ARRAY || type_index == FFK_TYPE_TUPLE || type_index == FFK_TYPE_MAP ||
         type_index == FFK_TYPE_LIST || type_index == FFK_TYPE_DICT;
}

/* Whether a dimension of more than one element steps backwards (numpy's a[::-1]). PyTorch
 * cannot hold such a tensor and its import throws a C++ exception through the C table,
 * which ends the process: such tensors stay ffikit.Tensor. */
static int steps_backwards(const ffk_tensor *t) {
  const DLTensor *dl = ffk_tensor_dltensor_borrow(t);
  for (int32_t i = 0; dl->strides != NULL && i < dl->ndim; ++i)
    if (dl->strides[i] < 0 && dl->shape[i] > 1) return 1;
  return 0;
}

/* The framework's tensor for t (borrowed), or the ffikit.Tensor when the framework refuses it. */
static PyObject *framework_tensor(ffk_tensor *t, const DLPackExchangeAPI *api) {
  if (steps_backwards(t)) {
    ffk_object_retain((ffk_object *)t);
    return ffkpy_wrap_steal((ffk_object *)t);
  }
  DLDevice device = ffk_tensor_dltensor_borrow(t)->device;
  if (ffk_device_has_streams(device)) {
    /* ffikit's pending work on the tensor (its current stream) before the framework's. A
       table that cannot name its stream gets the ffikit.Tensor, whose __dlpack__ orders. */
    void *consumer = NULL;
    if (api->current_work_stream == NULL ||
        api->current_work_stream((DLDeviceType)ffk_device_type(device), device.device_id, &consumer) != 0) {
      PyErr_Clear();
      ffk_object_retain((ffk_object *)t);
      return ffkpy_wrap_steal((ffk_object *)t);
    }
    if (ffk_stream_order(device, ffk_stream_get(ffk_device_type(device), device.device_id), consumer) != 0)
      return ffkpy_raise_from_ffk();
  }
  DLManagedTensorVersioned *m = ffk_tensor_to_dlpack_versioned(t); /* holds its own reference */
  if (m == NULL) return ffkpy_raise_from_ffk();
  void *out = NULL;
  if (api->managed_tensor_to_py_object_no_sync(m, &out) == 0 && out != NULL) return out; /* m is the framework's now */
  /* The table took m also on failure (DLPack: "the ownership is stolen"). */
  PyErr_Clear();
  ffk_object_retain((ffk_object *)t);
  return ffkpy_wrap_steal((ffk_object *)t);
}

PyObject *ffkpy_from_any_exchange_steal(ffk_any *v, const struct DLPackExchangeAPI *api) {
  if (api == NULL || !ffk_any_is_object(v) || v->v_obj == NULL) return ffkpy_from_any_steal(v);
  int32_t type_index = v->v_obj->type_index;
  if (type_index == FFK_TYPE_TENSOR) {
    PyObject *r = framework_tensor((ffk_tensor *)v->v_obj, api);
    if (r != NULL) {
      ffk_any_release(v);
      return r;
    }
    /* The release may run a producer's deleter written in Python (ctypes): not with our
       exception set. PyErr_Fetch: Python 3.10 lacks PyErr_GetRaisedException. */
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    ffk_any_release(v);
    PyErr_Restore(type, exc, tb);
    return NULL;
  }
  PyObject *r = ffkpy_from_any_steal(v);
  if (r != NULL && is_container(type_index) && PyObject_TypeCheck(r, &ffkpy_ObjectType))
    ((ffkpy_Object *)r)->dlpack_api = api;
  return r;
}

PyObject *ffkpy_element(PyObject *owner, const ffk_any *v) {
  const struct DLPackExchangeAPI *api = ((ffkpy_Object *)owner)->dlpack_api;
  if (api == NULL || !ffk_any_is_object(v) || v->v_obj == NULL) return ffkpy_from_any(v);
  ffk_any own = *v; /* a container's element: a stored object value, retained for the conversion */
  ffk_object_retain(own.v_obj);
  return ffkpy_from_any_exchange_steal(&own, api);
}

PyObject *ffkpy_element_steal(PyObject *owner, ffk_any *v) {
  return ffkpy_from_any_exchange_steal(v, ((ffkpy_Object *)owner)->dlpack_api);
}
