/*
 * call.c - the converting path of every call from Python into C (call.h has the fast
 * path and says which calls come here): keyword names, ffkpy_to_any into a stack array,
 * the call's exchange state, the C call, the result, and the release of everything the
 * conversion made, on every path.
 *
 * Invariants:
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

/* "<callee>() got an unexpected keyword argument <key>": a key no parameter can have. */
static void bad_keyword(const ffkpy_call_spec *call, PyObject *key) {
  if (call->callee != NULL)
    PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument %R", call->callee, key);
  else if (call->function != NULL)
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", ffk_function_name(call->function),
                 key);
  else
    PyErr_Format(PyExc_TypeError, "%s.__init__() got an unexpected keyword argument %R",
                 ffk_type_key(call->type_index), key);
}

/* The UTF-8 of the nkw names at `keys` into `names`. 0, or -1 with a Python exception. */
static int keyword_names(const ffkpy_call_spec *call, PyObject *const *keys, Py_ssize_t nkw, const char **names) {
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    Py_ssize_t size;
    int ok = PyUnicode_Check(keys[j]);
    if (ok && (names[j] = PyUnicode_AsUTF8AndSize(keys[j], &size)) == NULL) return -1;
    if (ok && (size_t)size == strlen(names[j])) continue;
    bad_keyword(call, keys[j]); /* not a str, or an embedded NUL: no parameter has such a name */
    return -1;
  }
  return 0;
}

PyObject *ffkpy_call__converting(const ffkpy_call_spec *call, PyObject *const *args, Py_ssize_t npos,
                                 PyObject *const *keys, Py_ssize_t nkw) {
  if (npos > INT32_MAX - nkw) return PyErr_Format(PyExc_ValueError, "too many arguments: %zd", npos + nkw);
  Py_ssize_t total = npos + nkw;
  ffk_any stack[8];
  const char *name_stack[8];
  ffk_any *argv = total <= 8 ? stack : PyMem_Malloc(sizeof(ffk_any) * (size_t)total);
  const char **names = nkw <= 8 ? name_stack : PyMem_Malloc(sizeof(const char *) * (size_t)nkw);
  PyObject *r = NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffkpy_call_exchange exchange;
  exchange.api = NULL;
  exchange.stream_set = false; /* for `done` when the call fails before converting */
  if (argv == NULL || names == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (keyword_names(call, keys, nkw, names) != 0) goto done;
  Py_ssize_t first = 0;
  if (call->self != NULL) { /* lent, as a wrapper argument is */
    argv[0] = ffk_any_none();
    argv[0].type_index = call->self->type_index;
    argv[0].v_obj = call->self;
    first = 1;
  }
  ffkpy_call_exchange *outer = call->exchange ? ffkpy_exchange_begin(&exchange) : NULL;
  Py_ssize_t converted = first;
  for (; converted < total; ++converted)
    if (ffkpy_to_any(args[converted], &argv[converted], &temps) != 0) break;
  if (call->exchange) ffkpy_exchange_end(outer);
  if (converted < total) goto done;
  ffk_any result;
  if (ffkpy_call__invoke(*call, argv, (int32_t)npos, names, (int32_t)nkw, &result) != 0)
    r = ffkpy_raise_from_ffk();
  else
    r = call->finish(call->owner, &result, call->exchange_results ? exchange.api : NULL);
done:
  ffkpy_exchange_restore_stream(&exchange);
  ffkpy_temps_release(&temps);
  if (argv != stack) PyMem_Free(argv);
  if (names != name_stack) PyMem_Free(names);
  return r;
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
  PyObject *r = ffkpy_call__converting(call, vals, npos, keys, nkw);
  if (vals != stack) PyMem_Free(vals);
  return r;
}
