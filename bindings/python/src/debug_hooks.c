/*
 * debug_hooks.c - the test hooks of ffikit/debug.h seen from Python: live-object counts
 * and the failing allocator (both answer only in the testing build of the C library,
 * HOOKS_AVAILABLE), and bare objects of run-time types for tests of the class table.
 * Nothing here is part of the package's API.
 */
#include "ffikit_py.h"

/* _new_object(type_index) -> a bare object of a registered type (for tests of the class table). */
static void plain_deleter(void *self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(self);
}
static PyObject *new_object(PyObject *mod, PyObject *arg) {
  (void)mod;
  long index = PyLong_AsLong(arg);
  if (index == -1 && PyErr_Occurred()) return NULL;
  if (index < FFK_TYPE_STATIC_END || index > INT32_MAX || !ffk_type_exists((int32_t)index))
    return PyErr_Format(PyExc_ValueError, "_new_object: %ld is not a type registered at run time", index);
  ffk_object *o = ffk_object_alloc((int32_t)index, sizeof(ffk_object), plain_deleter);
  if (o == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal(o);
}

/* _live_objects(type_index=-1) -> int, or None without the test hooks. */
static PyObject *live_objects(PyObject *mod, PyObject *args) {
  (void)mod;
  int index = -1;
  if (!PyArg_ParseTuple(args, "|i:_live_objects", &index)) return NULL;
  if (!ffk_debug_hooks_available()) Py_RETURN_NONE;
  return PyLong_FromLongLong(ffk_debug_live_objects(index));
}

/* _fail_allocation(n): the n-th next C allocation of this thread fails (0 disarms). */
static PyObject *fail_allocation(PyObject *mod, PyObject *arg) {
  (void)mod;
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (ffk_debug_fail_allocation(n) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *fail_allocation_armed(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  return PyBool_FromLong(ffk_debug_fail_allocation_armed());
}

PyMethodDef ffkpy_hook_methods[] = {
    {"_new_object", new_object, METH_O, NULL},
    {"_live_objects", live_objects, METH_VARARGS, NULL},
    {"_fail_allocation", fail_allocation, METH_O, NULL},
    {"_fail_allocation_armed", fail_allocation_armed, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
