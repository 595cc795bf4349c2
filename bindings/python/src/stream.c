/*
 * stream.c - ffikit._core's view of the current stream (ffikit/stream.h):
 * _env_set_current_stream and _env_get_current_stream, the two primitives ffikit.stream
 * (StreamContext, use_raw_stream, use_torch_stream, get_raw_stream) is written with, under
 * the names and signatures tvm_ffi's core gives them.
 *
 * A stream crosses into Python as a plain int: the handle's address, 0 for NULL (the
 * default stream). The table itself is C's, per thread: these functions only convert.
 */
#include "ffikit_py.h"

#include <limits.h>

#include <ffikit/stream.h>

/* A device type or id: an int that fits int32_t. 0, or -1 with a TypeError/OverflowError naming `what`. */
static int read_int32(PyObject *o, const char *what, int32_t *out) {
  if (PyBool_Check(o) || !PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.200s", what, Py_TYPE(o)->tp_name);
    return -1;
  }
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0 || v < INT32_MIN || v > INT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s %R is out of range", what, o);
    return -1;
  }
  *out = (int32_t)v;
  return 0;
}

/* A stream handle: None (the default stream) or an int in [0, 2**64). 0, or -1 with an exception. */
static int read_stream(PyObject *o, void **out) {
  if (o == Py_None) {
    *out = NULL;
    return 0;
  }
  if (PyBool_Check(o) || !PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "a stream handle must be an int (or None for the default stream), not %.200s",
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  int overflow;
  long long sv = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (sv == -1 && PyErr_Occurred()) return -1;
  if (overflow < 0 || (overflow == 0 && sv < 0)) {
    PyErr_Format(PyExc_ValueError, "stream handle %R is negative", o);
    return -1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "stream handle %R is too large for a pointer", o);
    return -1;
  }
#if UINTPTR_MAX < ULLONG_MAX
  if (v > UINTPTR_MAX) {
    PyErr_Format(PyExc_OverflowError, "stream handle %R is too large for a pointer", o);
    return -1;
  }
#endif
  *out = (void *)(uintptr_t)v;
  return 0;
}

static PyObject *stream_to_int(void *s) { return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)s); }

/* _env_set_current_stream(device_type, device_id, stream) -> int: the stream that was current. */
static PyObject *env_set_current_stream(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3)
    return PyErr_Format(PyExc_TypeError, "_env_set_current_stream() takes 3 arguments (%zd given)", nargs);
  int32_t type, id;
  void *stream, *previous = NULL;
  if (read_int32(args[0], "device_type", &type) != 0 || read_int32(args[1], "device_id", &id) != 0 ||
      read_stream(args[2], &stream) != 0)
    return NULL;
  if (ffk_stream_set(type, id, stream, &previous) != 0) return ffkpy_raise_from_ffk();
  return stream_to_int(previous);
}

/* _env_get_current_stream(device_type, device_id) -> int: 0 when none was set. */
static PyObject *env_get_current_stream(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2)
    return PyErr_Format(PyExc_TypeError, "_env_get_current_stream() takes 2 arguments (%zd given)", nargs);
  int32_t type, id;
  if (read_int32(args[0], "device_type", &type) != 0 || read_int32(args[1], "device_id", &id) != 0) return NULL;
  return stream_to_int(ffk_stream_get(type, id));
}

PyMethodDef ffkpy_stream_methods[] = {
    {"_env_set_current_stream", (PyCFunction)(void (*)(void))env_set_current_stream, METH_FASTCALL,
     "_env_set_current_stream(device_type, device_id, stream) -> int\n\n"
     "Makes `stream` (an int handle; 0 or None for the default stream) the calling thread's\n"
     "current stream for the device and returns the one that was current (0 for the\n"
     "default). ValueError for an unknown device type or a negative id or handle."},
    {"_env_get_current_stream", (PyCFunction)(void (*)(void))env_get_current_stream, METH_FASTCALL,
     "_env_get_current_stream(device_type, device_id) -> int\n\n"
     "The calling thread's current stream for the device as an int; 0 when none was set."},
    {NULL, NULL, 0, NULL},
};
