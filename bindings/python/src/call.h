/*
 * call.h - Python arguments -> ffk_any[] -> a C call -> the Python result: the one path
 * that Function.__call__ (function.c), reflected methods (reflect_methods.c) and reflected
 * construction (reflect.c) share; private to the extension.
 *
 * A call is described by an ffkpy_call_spec: what runs in C (`invoke`), what becomes of its
 * result (`finish`) and the few switches in which callers differ (the GIL, the tensor
 * exchange state, an object lent as argument 0, the callee's name in messages). ffkpy_call
 * takes the arguments in vectorcall layout, positional values then keyword values with
 * their names, and converts them in one pass:
 *
 *   - the fast path (inline here): no keywords and at most 8 positional values that are
 *     all plain (ffkpy_args_to_any_plain: None, bool, small int, float, a wrapper without
 *     an exchange table, lent): nothing is made for the call, so there are no temps, no
 *     exchange state, no names; the stack array is the arguments;
 *   - anything else (ffkpy_call__convert): ffkpy_to_any into a stack array
 *     (8 values and 8 names; PyMem beyond), what it makes kept in the temps until the
 *     result is converted, inside the call's exchange state when `exchange` is set, and
 *     everything released on every path, the failing ones included.
 *
 * Why in the header: Function.__call__ with plain arguments is the package's hottest path,
 * and a description built at the call site with constant `invoke` and `finish` folds away
 * (the compiler calls them directly and drops the switches, as the hand-written copies
 * did). call.c holds what gains nothing from that: the bad-keyword error, tuple-and-dict
 * calls.
 */
#ifndef FFIKIT_PY_CALL_H
#define FFIKIT_PY_CALL_H

#include "ffikit_py.h"

#include "dlpack_exchange.h"

typedef struct ffkpy_call_spec ffkpy_call_spec;

/*
 * The C call of `function` or of type `type_index` (the spec's): `argv` holds npos
 * positional values, then nkw values named by `names` (the UTF-8 of the keyword names,
 * borrowed). 0 with *result set (owned), or -1 with the ffikit error pending. Runs without
 * the GIL when the spec's release_gil is set, so it touches no Python object.
 */
typedef int (*ffkpy_call_invoke)(ffk_function *function, int32_t type_index, const ffk_any *argv, int32_t npos,
                                 const char *const *names, int32_t nkw, ffk_any *result);

/*
 * The result (stolen: released also on failure) to Python, on the spec's `owner`, tensors
 * through `api` (NULL: none). A new reference, or NULL with a Python exception.
 */
typedef PyObject *(*ffkpy_call_finish)(PyObject *owner, ffk_any *result, const struct DLPackExchangeAPI *api);

struct ffkpy_call_spec {
  ffkpy_call_invoke invoke;
  ffkpy_call_finish finish;
  ffk_function *function; /* the callee of ffkpy_call_function (borrowed); NULL for a construction */
  int32_t type_index;     /* the type a construction makes (its messages name it); -1 otherwise */
  PyObject *owner;        /* what `finish` builds on (the class constructed, the wrapper initialised), or NULL */
  PyObject *callee;       /* the callee's name in messages (a str, borrowed), or NULL: the Function's name,
                             or "<type key>.__init__" for a construction */
  ffk_object *self;       /* lent as argument 0 in place of converting args[0] (a method's checked
                             object, borrowed), or NULL */
  bool release_gil;       /* the GIL is released around `invoke` */
  bool exchange;          /* conversion runs in an exchange state (tensor_results.c): a framework
                             tensor argument sets the call's stream and result table */
  bool exchange_results;  /* the result goes back through that table (Function.exchange_tensors) */
};

/* invoke of a Function call: ffk_function_call, or ffk_function_call_kw given names. */
static inline int ffkpy_call_function(ffk_function *function, int32_t type_index, const ffk_any *argv, int32_t npos,
                                      const char *const *names, int32_t nkw, ffk_any *result) {
  (void)type_index;
  if (nkw == 0) return ffk_function_call(function, argv, npos, result);
  return ffk_function_call_kw(function, argv, npos, names, nkw, result);
}

/* finish of a Function call: the value as Python (None, the usual result, first). */
static inline PyObject *ffkpy_call_value(PyObject *owner, ffk_any *result, const struct DLPackExchangeAPI *api) {
  (void)owner;
  if (api != NULL) return ffkpy_from_any_exchange_steal(result, api);
  if (result->type_index == FFK_TYPE_NONE) Py_RETURN_NONE; /* owns nothing */
  return ffkpy_from_any_steal(result);
}

/* `invoke` with the GIL released around it when the spec says so. */
static inline __attribute__((always_inline)) int ffkpy_call__invoke(const ffkpy_call_spec call, const ffk_any *argv,
                                                                    int32_t npos, const char *const *names,
                                                                    int32_t nkw, ffk_any *result) {
  if (!call.release_gil) return call.invoke(call.function, call.type_index, argv, npos, names, nkw, result);
  PyThreadState *ts = PyEval_SaveThread();
  int rc = call.invoke(call.function, call.type_index, argv, npos, names, nkw, result);
  PyEval_RestoreThread(ts);
  return rc;
}

/* "<callee>() got an unexpected keyword argument <key>" (call.c), naming `callee`, else the
   Function's name, else "<type key>.__init__": a key that is not a str or holds a NUL. */
void ffkpy_call__bad_keyword(PyObject *callee, ffk_function *function, int32_t type_index, PyObject *key);

/* The UTF-8 of the nkw keyword names at `keys` into `names`. 0, or -1 with a Python
   exception (ffkpy_call__bad_keyword's, or the error of reading a name). */
static inline int ffkpy_call__keyword_names(PyObject *callee, ffk_function *function, int32_t type_index,
                                            PyObject *const *keys, Py_ssize_t nkw, const char **names) {
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    Py_ssize_t size;
    int ok = PyUnicode_Check(keys[j]);
    if (ok && (names[j] = PyUnicode_AsUTF8AndSize(keys[j], &size)) == NULL) return -1;
    if (ok && (size_t)size == strlen(names[j])) continue;
    ffkpy_call__bad_keyword(callee, function, type_index, keys[j]);
    return -1;
  }
  return 0;
}

/*
 * Every call that is not the fast path: converts args[0..npos) and the nkw values after
 * them, named by keys[0..nkw) (str objects, borrowed; the caller holds them for the call),
 * calls and finishes. A new reference, or NULL with a Python exception: a ValueError for
 * more than INT32_MAX arguments, a TypeError naming the callee for a keyword that is not a
 * str or holds a NUL, the conversion's error, the C call's mapped error, finish's.
 *
 * Inline: each caller puts it in an out-of-line function of its own (ffkpy_call__converting,
 * or Function.__call__'s), so that the fast path stays small and the converting path is
 * compiled for the caller's constant description: one shared out-of-line copy reading the
 * description from memory cost a keyword call of a Function about 4% more instructions than
 * its own copy did, and one taking the description as arguments about 3%.
 */
static inline __attribute__((always_inline)) PyObject *ffkpy_call__convert(const ffkpy_call_spec call,
                                                                          PyObject *const *args, Py_ssize_t npos,
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
  if (ffkpy_call__keyword_names(call.callee, call.function, call.type_index, keys, nkw, names) != 0) goto done;
  Py_ssize_t first = 0;
  if (call.self != NULL) { /* lent, as a wrapper argument is */
    argv[0] = ffk_any_none();
    argv[0].type_index = call.self->type_index;
    argv[0].v_obj = call.self;
    first = 1;
  }
  ffkpy_call_exchange *outer = call.exchange ? ffkpy_exchange_begin(&exchange) : NULL;
  Py_ssize_t converted = first;
  for (; converted < total; ++converted)
    if (ffkpy_to_any(args[converted], &argv[converted], &temps) != 0) break;
  if (call.exchange) ffkpy_exchange_end(outer);
  if (converted < total) goto done;
  ffk_any result;
  if (ffkpy_call__invoke(call, argv, (int32_t)npos, names, (int32_t)nkw, &result) != 0)
    r = ffkpy_raise_from_ffk();
  else
    r = call.finish(call.owner, &result, call.exchange_results ? exchange.api : NULL);
done:
  ffkpy_exchange_restore_stream(&exchange);
  ffkpy_temps_release(&temps);
  if (argv != stack) PyMem_Free(argv);
  if (names != name_stack) PyMem_Free(names);
  return r;
}

/* ffkpy_call__convert out of line, static in each caller: GCC specialises it for the
   caller's description where it can (ffkpy_call's converting side). */
static FFK_NOINLINE __attribute__((unused)) PyObject *ffkpy_call__converting(const ffkpy_call_spec call,
                                                                             PyObject *const *args, Py_ssize_t npos,
                                                                             PyObject *const *keys, Py_ssize_t nkw) {
  return ffkpy_call__convert(call, args, npos, keys, nkw);
}

/* The fast path's call: argv holds the npos plain values (argument 0 already lent when
   call.self is set). A new reference, or NULL with a Python exception. */
static inline __attribute__((always_inline)) PyObject *ffkpy_call__plain(const ffkpy_call_spec call,
                                                                         const ffk_any *argv, Py_ssize_t npos) {
  ffk_any result;
  if (ffkpy_call__invoke(call, argv, (int32_t)npos, NULL, 0, &result) != 0) return ffkpy_raise_from_ffk();
  return call.finish(call.owner, &result, NULL);
}

/*
 * The fast path alone: when there are at most 8 positional arguments (after call.self's)
 * and all are plain, makes the call and stores its result (a new reference, or NULL with a
 * Python exception) in *out and returns 1; otherwise returns 0 and does nothing, for the
 * caller's converting side.
 */
static inline __attribute__((always_inline)) int ffkpy_call_plain(const ffkpy_call_spec call, PyObject *const *args,
                                                                  Py_ssize_t npos, PyObject **out) {
  ffk_any argv[8];
  Py_ssize_t first = call.self != NULL;
  if (npos > 8 || ffkpy_args_to_any_plain(args + first, npos - first, argv + first) != npos - first) return 0;
  if (first) {
    argv[0] = ffk_any_none();
    argv[0].type_index = call.self->type_index;
    argv[0].v_obj = call.self;
  }
  *out = ffkpy_call__plain(call, argv, npos);
  return 1;
}

/*
 * The call: `call` with the arguments in vectorcall layout (see ffkpy_call__convert;
 * when call.self is set, args[0] is its wrapper and is not converted). A new reference,
 * or NULL with a Python exception.
 *
 * The spec is taken by value and its address is never taken, so that its fields stay
 * constants and registers: passing its address kept the whole spec in memory and called
 * invoke and finish indirectly.
 */
static inline __attribute__((always_inline)) PyObject *ffkpy_call(const ffkpy_call_spec call, PyObject *const *args,
                                                                  Py_ssize_t npos, PyObject *const *keys,
                                                                  Py_ssize_t nkw) {
  PyObject *r;
  if (nkw == 0 && ffkpy_call_plain(call, args, npos, &r)) return r;
  return ffkpy_call__converting(call, args, npos, keys, nkw);
}

/* ffkpy_call with a tuple and a dict (tp_new, tp_init: NULL for none), as type.__call__
   hands them over (call.c). */
PyObject *ffkpy_call_tuple(const ffkpy_call_spec *call, PyObject *args, PyObject *kwds);

#endif /* FFIKIT_PY_CALL_H */
