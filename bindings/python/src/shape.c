/*
 * shape.c - the C Shape object behind ffikit.Shape (a Python class, ffikit/_tensor.py):
 * made from Python dimensions, read back as a tuple. The dimensions are read by the
 * conversion every shape-taking function shares (ffkpy_read_int64s, tensor.c); C's
 * ffk_shape_new decides the values.
 */
#include "ffikit_py.h"

/* _make_shape_object(dims) -> the C Shape object for a new Shape (C's ffk_shape_new decides the values). */
static PyObject *make_shape_object(PyObject *mod, PyObject *arg) {
  (void)mod;
  int64_t stack[16], *heap = NULL;
  Py_ssize_t n;
  if (ffkpy_read_int64s(arg, "Shape", "dims", stack, 16, &heap, &n) != 0) return NULL;
  ffk_shape *s = ffk_shape_new(heap != NULL ? heap : stack, (size_t)n);
  PyMem_Free(heap);
  if (s == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal(&s->header);
}

/* _shape_dims(obj) -> tuple of the dimensions of a C Shape object. */
static PyObject *shape_dims(PyObject *mod, PyObject *arg) {
  (void)mod;
  ffk_object *h = ffkpy_handle(arg);
  if (h == NULL || h->type_index != FFK_TYPE_SHAPE) return PyErr_Format(PyExc_TypeError, "expected a Shape object");
  const ffk_shape *s = (const ffk_shape *)h;
  PyObject *t = PyTuple_New((Py_ssize_t)s->size);
  for (size_t i = 0; t != NULL && i < s->size; ++i) {
    PyObject *d = PyLong_FromLongLong(s->data[i]);
    if (d == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
  }
  return t;
}

PyMethodDef ffkpy_shape_methods[] = {
    {"_make_shape_object", make_shape_object, METH_O, NULL},
    {"_shape_dims", shape_dims, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};
