/*
 * call.c - the out-of-line parts of the one call path (call.h): the error for a keyword
 * no parameter can have, and calls given a tuple and a dict. The path itself is in call.h, compiled into
 * each caller with its description folded to constants (see there).
 *
 * Invariants of the converting path:
 *  - Arguments are converted in argument mode: argv's values borrow (wrappers lend their
 *    handle, str values view the Python UTF-8) and what conversion makes is owned by the
 *    temps, released after the result is converted (a returned view may still need them).
 *    So a failure anywhere releases the temps and frees the arrays, and nothing else.
 *  - The exchange state is the call's only while its arguments convert (nested calls made
 *    by a conversion keep their own); the stream it set is put back after the result is
 *    converted, also when the call failed.
 *  - Keyword names are the UTF-8 that CPython caches on each str, borrowed for the call.
 */
#include "call.h"

void ffkpy_call__bad_keyword(PyObject *callee, ffk_function *function, int32_t type_index, PyObject *key) {
  if (callee != NULL)
    PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument %R", callee, key);
  else if (function != NULL)
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", ffk_function_name(function), key);
  else
    PyErr_Format(PyExc_TypeError, "%s.__init__() got an unexpected keyword argument %R", ffk_type_key(type_index),
                 key);
}

PyObject *ffkpy_call_tuple(const ffkpy_call_spec *call, PyObject *args, PyObject *kwds) {
  Py_ssize_t npos = args != NULL ? PyTuple_GET_SIZE(args) : 0;
  Py_ssize_t nkw = kwds != NULL ? PyDict_GET_SIZE(kwds) : 0;
  PyObject *const *pos = args != NULL ? &PyTuple_GET_ITEM(args, 0) : NULL;
  if (nkw == 0) return ffkpy_call(*call, pos, npos, NULL, 0);
  if (npos > PY_SSIZE_T_MAX / 2 - nkw) return PyErr_NoMemory();
  Py_ssize_t total = npos + nkw;
  PyObject *stack[16]; /* values, then names */
  PyObject **vals = total <= 8 ? stack : PyMem_Malloc(sizeof(PyObject *) * (size_t)(2 * total));
  if (vals == NULL) return PyErr_NoMemory();
  PyObject **keys = vals == stack ? stack + 8 : vals + total;
  for (Py_ssize_t i = 0; i < npos; ++i) vals[i] = pos[i];
  Py_ssize_t at = 0, j = 0;
  PyObject *k, *v;
  while (PyDict_Next(kwds, &at, &k, &v)) { /* borrowed: the dict holds them for the call */
    keys[j] = k;
    vals[npos + j] = v;
    ++j;
  }
  PyObject *r = ffkpy_call__converting(*call, vals, npos, keys, nkw);
  if (vals != stack) PyMem_Free(vals);
  return r;
}
