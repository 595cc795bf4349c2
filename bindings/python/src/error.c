/*
 * error.c - ffikit errors as Python exceptions and back.
 *
 * Which exception class a kind maps to, and how backtrace lines become traceback
 * entries, is decided in ffikit/error.py (one table, kept by register_error); this file
 * moves errors between the two slots:
 *
 *   C -> Python  the pending Error is fetched; if it carries a Python exception as its
 *                payload (raised by a callback), that very object is raised again and
 *                the payload is detached (so the exception and the Error do not keep
 *                each other alive); else error._from_c builds the mapped exception.
 *   Python -> C  error._to_c gives the exception's Error (the one it already carries,
 *                so identity survives every hop, or a new one), with the Python frames
 *                appended; the exception becomes its payload and the Error is raised.
 */
#include "ffikit_py.h"

static PyObject *fetch_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (type == NULL) return NULL;
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
#endif
}

static void raise_exception(PyObject *exc) {
  /* Steals exc. The traceback it carries (with the C frames added) is kept. */
  PyObject *tb = PyException_GetTraceback(exc);
  PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, tb);
}

PyObject *ffkpy_raise_from_ffk(void) {
  ffk_error *err = ffk_error_fetch();
  if (err == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "an ffikit call failed without raising an error");
    return NULL;
  }
  PyObject *exc = Py_None;
  ffk_object *payload = ffk_error_payload_borrow(err);
  if (payload != NULL && ffk_opaque_release_fn(payload) == ffkpy_opaque_release) {
    exc = Py_NewRef((PyObject *)ffk_opaque_handle(payload));
    ffk_error_set_payload(err, NULL); /* cannot fail for a non-NULL err */
  } else {
    Py_INCREF(exc);
  }
  if (ffkpy_g.error_from_c == NULL) { /* before ffikit.error is imported */
    PyErr_Format(PyExc_RuntimeError, "%s: %s", ffk_error_kind(err), ffk_error_message(err));
    ffk_object_release((ffk_object *)err);
    Py_DECREF(exc);
    return NULL;
  }
  PyObject *w = ffkpy_wrap_steal((ffk_object *)err);
  if (w == NULL) {
    Py_DECREF(exc);
    return NULL;
  }
  PyObject *r = PyObject_CallFunctionObjArgs(ffkpy_g.error_from_c, w, exc, NULL);
  Py_DECREF(w);
  Py_DECREF(exc);
  if (r == NULL) return NULL;
  if (!PyExceptionInstance_Check(r)) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_TypeError, "ffikit.error._from_c did not return an exception");
    return NULL;
  }
  raise_exception(r);
  return NULL;
}

int ffkpy_raise_from_ffk_int(void) {
  ffkpy_raise_from_ffk();
  return -1;
}

int ffkpy_set_ffk_from_py(void) {
  PyObject *exc = fetch_exception();
  if (exc == NULL) return ffk_error_set(FFK_ERR_RUNTIME, "a Python call failed without raising an exception");
  PyObject *w = ffkpy_g.error_to_c ? PyObject_CallOneArg(ffkpy_g.error_to_c, exc) : NULL;
  ffk_object *h = w ? ffkpy_handle(w) : NULL;
  if (h == NULL || h->type_index != FFK_TYPE_ERROR) {
    /* Converting failed (or ffikit.error is not loaded). Out of memory is what happened
       then; otherwise keep the original's text at least. */
    int no_memory = PyErr_ExceptionMatches(PyExc_MemoryError);
    PyErr_Clear();
    if (no_memory) {
      ffk_error_set(FFK_ERR_MEMORY, "out of memory while passing a %s raised in Python to C", Py_TYPE(exc)->tp_name);
      Py_XDECREF(w);
      Py_DECREF(exc);
      return -1;
    }
    PyObject *text = PyObject_Str(exc);
    const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
    if (msg == NULL) PyErr_Clear();
    ffk_error_set(FFK_ERR_RUNTIME, "%s: %s", Py_TYPE(exc)->tp_name, msg ? msg : "<unprintable>");
    Py_XDECREF(text);
    Py_XDECREF(w);
    Py_DECREF(exc);
    return -1;
  }
  ffk_object *payload = ffkpy_opaque_new_steal(exc);
  if (payload != NULL) {
    ffk_error_set_payload((ffk_error *)h, payload);
    ffk_object_release(payload);
  }
  ffk_object_retain(h);
  Py_DECREF(w);
  if (payload == NULL) { /* out of memory: the MemoryError is pending; keep the original error instead */
    ffk_error_clear();
  }
  ffk_error_restore((ffk_error *)h);
  return -1;
}

/* _raise_ffk(kind, message): raises an error from C (for tests of the C -> Python path). */
static PyObject *raise_ffk(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *kind, *message;
  if (!PyArg_ParseTuple(args, "ss:_raise_ffk", &kind, &message)) return NULL;
  ffk_error_set(kind, "%s", message);
  return ffkpy_raise_from_ffk();
}

/* _error_payload(error) -> the Python object an Error carries, or None. */
static PyObject *error_payload(PyObject *mod, PyObject *arg) {
  (void)mod;
  ffk_object *h = ffkpy_handle(arg);
  if (h == NULL || h->type_index != FFK_TYPE_ERROR) return PyErr_Format(PyExc_TypeError, "expected an ffikit.Error");
  ffk_object *payload = ffk_error_payload_borrow((ffk_error *)h);
  if (payload != NULL && ffk_opaque_release_fn(payload) == ffkpy_opaque_release)
    return Py_NewRef((PyObject *)ffk_opaque_handle(payload));
  Py_RETURN_NONE;
}

PyMethodDef ffkpy_error_methods[] = {
    {"_raise_ffk", raise_ffk, METH_VARARGS, NULL},
    {"_error_payload", error_payload, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};
