/*
 * error_type.c - ffikit.Error: the wrapper of an ffikit Error object (kind, message,
 * backtrace), what a raised exception carries as `__ffikit_error__`.
 *
 * An exception passed as a value keeps its Error and the Error keeps the exception as
 * its payload: a cycle through C, which the collector is shown (tp_traverse) when this
 * wrapper is the only holder of the Error and the Error the only holder of the payload.
 * error.c moves errors between the C slot and Python exceptions; this file is the type.
 */
#include "ffikit_py.h"

static ffk_error *error_of(PyObject *self) { return (ffk_error *)((ffkpy_Object *)self)->obj; }

/* The exception this Error's payload holds, when only this wrapper can reach it (see the top). */
static PyObject *sole_payload(PyObject *self) {
  ffk_error *err = error_of(self);
  if (err == NULL || ffk_object_use_count((ffk_object *)err) != 1) return NULL;
  ffk_object *payload = ffk_error_payload_borrow(err);
  if (payload == NULL || ffk_opaque_release_fn(payload) != ffkpy_opaque_release || ffk_object_use_count(payload) != 1)
    return NULL;
  return ffk_opaque_handle(payload);
}

static int error_traverse(PyObject *self, visitproc visit, void *arg) {
  PyObject *payload = sole_payload(self);
  Py_VISIT(payload);
  return ffkpy_object_traverse(self, visit, arg);
}

static int error_clear(PyObject *self) {
  if (sole_payload(self) != NULL) ffk_error_set_payload(error_of(self), NULL);
  return 0;
}

static PyObject *error_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"kind", "message", "backtrace", NULL};
  const char *kind, *message, *backtrace = "";
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "ss|s:Error", kwlist, &kind, &message, &backtrace)) return NULL;
  ffk_error *err = ffk_error_new(kind, message);
  if (err == NULL) return ffkpy_raise_from_ffk();
  if (backtrace[0] != '\0' && ffk_error_append_frame(err, backtrace) != 0) {
    ffk_object_release((ffk_object *)err);
    return ffkpy_raise_from_ffk();
  }
  ffkpy_Object *self = (ffkpy_Object *)type->tp_alloc(type, 0);
  if (self == NULL) {
    ffk_object_release((ffk_object *)err);
    return NULL;
  }
  self->obj = (ffk_object *)err;
  return (PyObject *)self;
}

static PyObject *error_kind(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(ffk_error_kind(error_of(self)));
}
static PyObject *error_message(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_DecodeUTF8(ffk_error_message(error_of(self)), (Py_ssize_t)strlen(ffk_error_message(error_of(self))),
                              "replace");
}
static PyObject *error_backtrace(PyObject *self, void *c) {
  (void)c;
  const char *bt = ffk_error_backtrace(error_of(self));
  return PyUnicode_DecodeUTF8(bt, (Py_ssize_t)strlen(bt), "replace");
}

/* _frames: the backtrace without native frames (no symbol lookup; what error.py parses). */
static PyObject *error_frames(PyObject *self, void *c) {
  (void)c;
  size_t len = 0;
  if (ffk_error_frames(error_of(self), NULL, 0, &len) != 0) return ffkpy_raise_from_ffk();
  char *buf = PyMem_Malloc(len + 1);
  if (buf == NULL) return PyErr_NoMemory();
  ffk_error_frames(error_of(self), buf, len + 1, &len);
  PyObject *r = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
  PyMem_Free(buf);
  return r;
}

/* _append_frames(text): adds backtrace lines (as an error crosses into C from Python). */
static PyObject *error_append_frames(PyObject *self, PyObject *arg) {
  const char *text = PyUnicode_AsUTF8(arg);
  if (text == NULL) return NULL;
  if (text[0] != '\0' && ffk_error_append_frame(error_of(self), text) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *error_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *kind = error_kind(self, NULL), *msg = error_message(self, NULL), *bt = error_backtrace(self, NULL);
  PyObject *r = (kind && msg && bt) ? Py_BuildValue("O(OOO)", (PyObject *)Py_TYPE(self), kind, msg, bt) : NULL;
  Py_XDECREF(kind);
  Py_XDECREF(msg);
  Py_XDECREF(bt);
  return r;
}

static PyObject *error_deepcopy(PyObject *self, PyObject *memo) {
  (void)memo; /* immutable as far as Python can see: share it */
  Py_INCREF(self);
  return self;
}

static PyObject *error_py_error(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyObject_CallFunctionObjArgs(ffkpy_g.error_from_c, self, Py_None, NULL);
}

static PyMethodDef error_methods[] = {
    {"_append_frames", error_append_frames, METH_O, NULL},
    {"__reduce__", error_reduce, METH_NOARGS, NULL},
    {"__copy__", (PyCFunction)error_deepcopy, METH_NOARGS, NULL},
    {"__deepcopy__", error_deepcopy, METH_O, NULL},
    {"py_error", error_py_error, METH_NOARGS, "py_error() -> BaseException: the Python exception for this error."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef error_getset[] = {
    {"kind", error_kind, NULL, "The error kind (\"ValueError\", or a library's own name).", NULL},
    {"message", error_message, NULL, "The error message.", NULL},
    {"backtrace", error_backtrace, NULL, "The backtrace text, innermost frame first.", NULL},
    {"_frames", error_frames, NULL, "The backtrace without native frames (no symbol lookup).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ffkpy_ErrorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Error",
    .tp_doc = "Error(kind, message, backtrace='')\n\n"
              "An ffikit error object: what crosses C, Python and Rust when a call fails. A raised\n"
              "exception carries it as `__ffikit_error__` (and `__tvm_ffi_error__`).",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = error_new,
    .tp_traverse = error_traverse,
    .tp_clear = error_clear,
    .tp_methods = error_methods,
    .tp_getset = error_getset,
};

int ffkpy_error_type_init(PyObject *module) {
  ffkpy_ErrorType.tp_base = &ffkpy_ObjectType;
  if (PyType_Ready(&ffkpy_ErrorType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Error", (PyObject *)&ffkpy_ErrorType) < 0) return -1;
  PyObject *k = PyLong_FromLong(FFK_TYPE_ERROR);
  if (k == NULL) return -1;
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, k, (PyObject *)&ffkpy_ErrorType);
  Py_DECREF(k);
  return rc;
}
