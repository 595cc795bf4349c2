/*
 * function.c - ffikit.Function: calling C from Python (vectorcall) and Python from C.
 *
 * Python -> C: through call.h, the path every call into C shares (a stack array in
 * argument mode, plain values on a fast path that skips the temps and the tensor exchange
 * state); a Function's call releases the GIL around ffk_function_call
 * (ffk_function_call_kw when there are keywords: C binds them to the signature's
 * parameter names) unless its release_gil is off, and given a framework's tensors (torch),
 * its tensor results go back as that framework's (tensor_results.c) unless
 * exchange_tensors is off.
 *
 * C -> Python: a Python callable becomes a Function whose safe-call takes the GIL with
 * PyGILState_Ensure, so it may be called from any thread, including native threads that
 * Python never saw (a thread that holds it already, under a C call made with release_gil
 * off, skips the round trip). A Python exception becomes the pending ffikit Error
 * (error.c). An argument wrapper that the callable did not keep becomes object.c's spare.
 */
#include "ffikit_py.h"
#include "call.h"
#include "dlpack_exchange.h"

#include <pthread.h>

/* ---- Python callables as Functions ----------------------------------------------- */

/* Calls `callable` with the arguments as Python values; tensors arrive through the
 * framework of the exchange capsule `cap` when it is not NULL (convert_func's tensor_cls),
 * else as ffikit.Tensor. */
static int call_python_with(PyObject *callable, PyObject *cap, const ffk_any *args, int32_t nargs, ffk_any *result) {
  /* A caller that kept the GIL (a traversal called with release_gil off calls back once per
     value) needs no PyGILState round trip: the thread state attached now is this thread's. */
  int ensured = !ffkpy_gil_held_here();
  PyGILState_STATE g = ensured ? PyGILState_Ensure() : PyGILState_LOCKED;
  const DLPackExchangeAPI *api = cap != NULL ? PyCapsule_GetPointer(cap, FFKPY_DLPACK_EXCHANGE_CAPSULE) : NULL;
  PyObject *stack[9];
  PyObject **argv = nargs <= 8 ? stack : PyMem_Malloc(sizeof(PyObject *) * (size_t)(nargs + 1));
  int rc = -1;
  int32_t i = 0, lent_at = -1;
  ffkpy_lent lent;
  if (argv == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (; i < nargs; ++i) {
    if (api == NULL && lent_at < 0 && ffkpy_wraps_registered(&args[i])) {
      lent.wrapper = NULL; /* maybe the spare, its handle lent (object.c) */
      argv[i + 1] = ffkpy_wrap_lent(args[i].v_obj, &lent);
      if (lent.wrapper != NULL && lent.wrapper == argv[i + 1]) lent_at = i;
    } else if (api == NULL) {
      argv[i + 1] = ffkpy_from_any(&args[i]);
    } else {
      ffk_any owned;
      argv[i + 1] = ffk_any_to_owned(&args[i], &owned) == 0 ? ffkpy_from_any_exchange_steal(&owned, api)
                                                             : ffkpy_raise_from_ffk();
    }
    if (argv[i + 1] == NULL) goto done;
  }
  PyObject *r = PyObject_Vectorcall(callable, argv + 1, (size_t)nargs | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
  if (r == Py_None) { /* most callbacks return nothing */
    *result = ffk_any_none();
    rc = 0;
    Py_DECREF(r);
  } else if (r != NULL) {
    rc = ffkpy_to_any(r, result, NULL);
    Py_DECREF(r);
  }
done:
  /* A wrapper the callback did not keep becomes the spare that the next call's wrapper
     reuses (object.c). The exchange path's arguments own other references: dropped plainly. */
  while (i-- > 0) {
    if (i == lent_at) ffkpy_wrapper_drop_lent(argv[i + 1], &lent);
    else if (api == NULL) ffkpy_wrapper_drop(argv[i + 1], &args[i]);
    else Py_DECREF(argv[i + 1]);
  }
  if (argv != stack) PyMem_Free(argv);
  if (rc != 0) ffkpy_set_ffk_from_py();
  if (ensured) PyGILState_Release(g);
  return rc;
}

static int call_python(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  return call_python_with((PyObject *)self, NULL, args, nargs, result);
}

/* self: the tuple (callable, exchange capsule) that convert_func made; a tuple never
 * changes, so its items are read before the GIL is taken. */
static int call_python_exchange(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  return call_python_with(PyTuple_GET_ITEM((PyObject *)self, 0), PyTuple_GET_ITEM((PyObject *)self, 1), args, nargs,
                          result);
}

static void release_python(void *context) { ffkpy_opaque_release(context); }

/* A Function whose safe-call is `call` on `context` (a Python object, stolen: released
 * with the Function, or now on failure), named after `callable` for backtraces. A plain
 * function's name is read from the object itself (the common case, once per call of C
 * with a Python callback); others ask __qualname__. NULL with a Python exception. */
static ffk_function *function_over(PyObject *callable, ffk_safe_call call, PyObject *context) {
  PyObject *name;
  if (PyFunction_Check(callable)) {
    name = Py_NewRef(((PyFunctionObject *)callable)->func_qualname);
  } else if ((name = PyObject_GetAttrString(callable, "__qualname__")) == NULL) {
    PyErr_Clear();
  }
  const char *cname = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (cname == NULL) PyErr_Clear();
  ffk_function *f = ffk_function_new(cname, call, context, release_python); /* steals context */
  Py_XDECREF(name);
  if (f == NULL) ffkpy_raise_from_ffk();
  return f;
}

ffk_function *ffkpy_function_from_callable(PyObject *callable) {
  return function_over(callable, call_python, Py_NewRef(callable));
}

/* convert_func(pyfunc, tensor_cls=None) -> Function */
static PyObject *convert_func(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  static char *kwlist[] = {"pyfunc", "tensor_cls", NULL};
  PyObject *callable, *tensor_cls = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:convert_func", kwlist, &callable, &tensor_cls)) return NULL;
  if (!PyCallable_Check(callable))
    return PyErr_Format(PyExc_TypeError, "convert_func expects a callable, got %.200s", Py_TYPE(callable)->tp_name);
  ffk_function *f;
  if (tensor_cls == Py_None) {
    f = ffkpy_function_from_callable(callable);
  } else {
    if (!PyType_Check(tensor_cls))
      return PyErr_Format(PyExc_TypeError, "tensor_cls must be a class, got %.200s", Py_TYPE(tensor_cls)->tp_name);
    PyObject *cap = ffkpy_exchange_capsule_of_class(tensor_cls);
    if (cap == NULL) return NULL;
    if (cap == Py_None) {
      Py_DECREF(cap);
      return PyErr_Format(PyExc_TypeError, "tensor_cls %R must expose __dlpack_c_exchange_api__", tensor_cls);
    }
    PyObject *context = PyTuple_Pack(2, callable, cap);
    Py_DECREF(cap);
    if (context == NULL) return NULL;
    f = function_over(callable, call_python_exchange, context);
  }
  if (f == NULL) return NULL;
  return ffkpy_wrap_steal((ffk_object *)f);
}

/* ---- Calling ---------------------------------------------------------------------- */

/*
 * f(...) and f(..., k=v): call.h's path, with the GIL released around the C call unless
 * release_gil is off, the arguments converted in the call's exchange state (a framework
 * tensor argument sets the table its tensor results go back through, and the stream the
 * call runs on), and the results through that table unless exchange_tensors is off.
 * Keywords go to ffk_function_call_kw, which binds them to the signature's names in C.
 * The converting side is a function of this file (call_converting) rather than
 * ffkpy_call's, so that it too is compiled for a Function's description alone.
 */

/* The description of a call of the Function wrapper `self`. */
static inline ffkpy_call_spec function_call(PyObject *self) {
  const ffkpy_Function *w = (const ffkpy_Function *)self;
  return (ffkpy_call_spec){
      .invoke = ffkpy_call_function,
      .finish = ffkpy_call_value,
      .function = (ffk_function *)w->base.obj,
      .type_index = -1,
      .release_gil = w->release_gil,
      .exchange = true,
      .exchange_results = w->exchange_tensors,
  };
}

/* Every call that is not plain: call.h's converting path compiled here, for Functions
   alone (the description's constants folded in, as the fast path's are). */
static FFK_NOINLINE PyObject *call_converting(PyObject *self, PyObject *const *args, Py_ssize_t n,
                                              PyObject *kwnames) {
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  return ffkpy_call__convert(function_call(self), args, n, nkw ? &PyTuple_GET_ITEM(kwnames, 0) : NULL, nkw);
}

/* The fast path as ffkpy_call_plain, the description read only after the scan (before it,
   the wrapper's switches would be loaded across the scan's call and kept on the stack). */
PyObject *ffkpy_function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  ffk_any argv[8];
  PyObject *r;
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) r = call_converting(self, args, n, kwnames);
  else if (n <= 8 && ffkpy_args_to_any_plain(args, n, argv) == n) r = ffkpy_call__plain(function_call(self), argv, n);
  else r = call_converting(self, args, n, NULL);
  ffkpy_wrapper_spare_flush(); /* what callbacks left (object.c): no class kept past the call */
  return r;
}


static PyObject *function_get_release_gil(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((ffkpy_Function *)self)->release_gil);
}

static int function_set_release_gil(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return ffkpy_set_switch(v, &((ffkpy_Function *)self)->release_gil, "release_gil");
}

static PyObject *function_get_quick(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong((ffk_function_flags((ffk_function *)((ffkpy_Object *)self)->obj) & FFK_FUNCTION_QUICK) != 0);
}

static PyObject *function_get_exchange_tensors(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((ffkpy_Function *)self)->exchange_tensors);
}

static int function_set_exchange_tensors(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return ffkpy_set_switch(v, &((ffkpy_Function *)self)->exchange_tensors, "exchange_tensors");
}

static PyObject *function_name(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(ffk_function_name((ffk_function *)((ffkpy_Object *)self)->obj));
}

static PyObject *function_signature(PyObject *self, void *c) {
  (void)c;
  const char *sig = ffk_function_signature((ffk_function *)((ffkpy_Object *)self)->obj);
  if (sig == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(sig);
}

/*
 * __signature__: an inspect.Signature for a typed Function, from the names and types C
 * keeps (annotations are the type texts, "Array<float>"); None for an untyped one, so
 * inspect.signature() reports that it has none. A parameter without a name is shown as
 * `_<position>` and is positional-only, and so is every parameter before it: only
 * positional arguments can reach them.
 */
static PyObject *function_get_signature_obj(PyObject *self, void *c) {
  (void)c;
  const ffk_function *f = (const ffk_function *)((ffkpy_Object *)self)->obj;
  int32_t n = ffk_function_num_params(f);
  if (n < 0) Py_RETURN_NONE;
  int32_t positional_only = 0; /* parameters [0, positional_only) */
  for (int32_t i = 0; i < n; ++i) {
    const char *name;
    int named = ffk_function_param_name(f, i, &name);
    if (named < 0) return ffkpy_raise_from_ffk();
    if (named == 0) positional_only = i + 1;
  }
  PyObject *inspect = PyImport_ImportModule("inspect");
  if (inspect == NULL) return NULL;
  PyObject *parameter = PyObject_GetAttrString(inspect, "Parameter");
  PyObject *signature = PyObject_GetAttrString(inspect, "Signature");
  PyObject *kind_po = parameter ? PyObject_GetAttrString(parameter, "POSITIONAL_ONLY") : NULL;
  PyObject *kind_pk = parameter ? PyObject_GetAttrString(parameter, "POSITIONAL_OR_KEYWORD") : NULL;
  PyObject *params = PyList_New(n);
  PyObject *r = NULL;
  if (signature == NULL || kind_po == NULL || kind_pk == NULL || params == NULL) goto done;
  for (int32_t i = 0; i < n; ++i) {
    const char *name;
    PyObject *pname = ffk_function_param_name(f, i, &name) == 1 ? PyUnicode_FromString(name)
                                                                  : PyUnicode_FromFormat("_%d", (int)i);
    PyObject *annotation = pname ? PyUnicode_FromString(ffk_function_param_type(f, i)) : NULL;
    PyObject *p = NULL;
    if (annotation != NULL) {
      PyObject *args = Py_BuildValue("(OO)", pname, i < positional_only ? kind_po : kind_pk);
      PyObject *kw = args ? Py_BuildValue("{sO}", "annotation", annotation) : NULL;
      if (kw != NULL) p = PyObject_Call(parameter, args, kw);
      Py_XDECREF(args);
      Py_XDECREF(kw);
    }
    Py_XDECREF(pname);
    Py_XDECREF(annotation);
    if (p == NULL) goto done;
    PyList_SET_ITEM(params, i, p);
  }
  PyObject *ret = PyUnicode_FromString(ffk_function_return_type(f));
  if (ret == NULL) goto done;
  PyObject *args = Py_BuildValue("(O)", params);
  PyObject *kw = args ? Py_BuildValue("{sO}", "return_annotation", ret) : NULL;
  if (kw != NULL) r = PyObject_Call(signature, args, kw);
  Py_XDECREF(args);
  Py_XDECREF(kw);
  Py_DECREF(ret);
done:
  Py_XDECREF(params);
  Py_XDECREF(kind_pk);
  Py_XDECREF(kind_po);
  Py_XDECREF(signature);
  Py_XDECREF(parameter);
  Py_DECREF(inspect);
  return r;
}

/* __from_extern_c__(address, *, keep_alive_object=None): a Function over a C safe-call. */
typedef struct {
  ffk_safe_call fn;
  PyObject *keep_alive;
} extern_fn;

static int call_extern(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  return ((extern_fn *)self)->fn(NULL, args, nargs, result);
}

static void release_extern(void *context) {
  extern_fn *e = context;
  if (e->keep_alive != NULL) ffkpy_opaque_release(e->keep_alive);
  PyMem_RawFree(e);
}

static PyObject *function_from_extern_c(PyObject *cls, PyObject *args, PyObject *kwds) {
  (void)cls;
  static char *kwlist[] = {"c_symbol", "keep_alive_object", NULL};
  PyObject *addr, *keep = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$O:__from_extern_c__", kwlist, &addr, &keep)) return NULL;
  void *p = PyLong_AsVoidPtr(addr);
  if (p == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "__from_extern_c__: the address is NULL");
    return NULL;
  }
  extern_fn *e = PyMem_RawMalloc(sizeof *e);
  if (e == NULL) return PyErr_NoMemory();
  memcpy(&e->fn, &p, sizeof p);
  e->keep_alive = keep == Py_None ? NULL : Py_NewRef(keep);
  ffk_function *f = ffk_function_new(NULL, call_extern, e, release_extern);
  if (f == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)f);
}

static PyObject *function_repr(PyObject *self) {
  const ffk_function *f = (const ffk_function *)((ffkpy_Object *)self)->obj;
  const char *sig = ffk_function_signature(f);
  return PyUnicode_FromFormat("<ffikit.Function %s>", sig ? sig : ffk_function_name(f));
}

/* ---- Pickling: a global Function by its registry name --------------------------------- */

static PyObject *g_from_pickle; /* _core._global_function_from_pickle (looked up at the first pickle) */

/* __reduce__: (_global_function_from_pickle, (name,)), the name ffk_function_global_name
   finds; TypeError for a Function that no name maps to. */
static PyObject *function_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  const ffk_function *f = (const ffk_function *)ffkpy_handle(self);
  if (f == NULL) return PyErr_Format(PyExc_TypeError, "cannot pickle a Function that has not been constructed");
  ffk_any name;
  int rc = ffk_function_global_name(f, &name);
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0)
    return PyErr_Format(PyExc_TypeError,
                        "cannot pickle Function `%s`: it is not registered as a global Function, and only global "
                        "Functions pickle (by name); register it with ffikit.register_global_func(name, f) in both "
                        "processes, or pass what it computes instead",
                        ffk_function_name(f));
  PyObject *s = ffkpy_from_any_steal(&name);
  if (s == NULL) return NULL;
  if (g_from_pickle == NULL) {
    PyObject *core = PyImport_ImportModule("ffikit._core");
    g_from_pickle = core != NULL ? PyObject_GetAttrString(core, "_global_function_from_pickle") : NULL;
    Py_XDECREF(core);
    if (g_from_pickle == NULL) {
      Py_DECREF(s);
      return NULL;
    }
  }
  return Py_BuildValue("(O(N))", g_from_pickle, s);
}

/* _global_function_from_pickle(name) -> the global Function `name`, or a ValueError. */
static PyObject *global_function_from_pickle(PyObject *mod, PyObject *arg) {
  (void)mod;
  const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
  if (name == NULL) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "_global_function_from_pickle: the name must be a str, not %.200s",
                   Py_TYPE(arg)->tp_name);
    return NULL;
  }
  ffk_function *f = NULL;
  int found = ffk_function_get_global(name, &f);
  if (found < 0) return ffkpy_raise_from_ffk();
  if (!found)
    return PyErr_Format(PyExc_ValueError,
                        "cannot unpickle Function `%s`: no global Function is registered under that name in this "
                        "process; register it (ffikit.register_global_func) or import the module that does before "
                        "unpickling",
                        name);
  return ffkpy_wrap_steal((ffk_object *)f);
}

static PyMethodDef function_methods[] = {
    {"__reduce__", function_reduce, METH_NOARGS,
     "A global Function pickles by its registry name (the name it is registered under) and is\n"
     "looked up again when unpickled: ValueError there when no Function has that name.\n"
     "Any other Function (a lambda, a closure, one not registered) cannot be pickled: TypeError."},
    {"__from_extern_c__", (PyCFunction)(void (*)(void))function_from_extern_c,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "__from_extern_c__(c_symbol: int, *, keep_alive_object=None) -> Function\n\n"
     "Wraps the address of a C function with the ffk_safe_call signature."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef function_getset[] = {
    {"release_gil", function_get_release_gil, function_set_release_gil,
     "Whether calls release the GIL around the C call: True unless the C Function carries\n"
     "FFK_FUNCTION_QUICK (see quick). Settable per wrapper.", NULL},
    {"quick", function_get_quick, NULL,
     "Whether the C Function carries FFK_FUNCTION_QUICK (set in C, by Rust or by\n"
     "cpp.load_inline(quick=...)): its author promises it returns quickly and never waits\n"
     "on Python, so its wrappers keep the GIL around calls (release_gil starts False).", NULL},
    {"exchange_tensors", function_get_exchange_tensors, function_set_exchange_tensors,
     "Whether a call given tensors of a framework with the DLPack C exchange API (torch)\n"
     "returns that framework's tensors, also as the elements of the containers it returns\n"
     "(default True, as tvm_ffi); False returns ffikit.Tensor.", NULL},
    {"name", function_name, NULL, "The Function's name (\"<anonymous>\" when it has none).", NULL},
    {"signature", function_signature, NULL, "The typed signature text, or None for an untyped Function.", NULL},
    {"__signature__", function_get_signature_obj, NULL,
     "The inspect.Signature of a typed Function (its parameter names and types), or None\n"
     "for an untyped Function.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ffkpy_FunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Function",
    .tp_doc = "An ffikit Function: a callable that C, Python and Rust can all call.\n\n"
              "Calling it converts the arguments (lists to Arrays, dicts to Maps, callables\n"
              "to Functions ...), releases the GIL around the C call unless\n"
              "release_gil is False (it starts False for a quick Function), and converts the result back. Errors raised anywhere\n"
              "along the call come back as the mapped Python exception. A typed Function\n"
              "also takes its parameters by name, f(xs=[1, 2], k=3), with Python's rules and\n"
              "TypeErrors; an untyped one takes positional arguments only.",
    .tp_basicsize = sizeof(ffkpy_Function),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ffkpy_Function, vectorcall),
    .tp_traverse = ffkpy_object_traverse,
    .tp_call = PyVectorcall_Call,
    .tp_repr = function_repr,
    .tp_methods = function_methods,
    .tp_getset = function_getset,
};

/* ---- The registry ------------------------------------------------------------------ */

static PyObject *to_function(PyObject *f) {
  if (PyObject_TypeCheck(f, &ffkpy_FunctionType)) return Py_NewRef(f);
  if (!PyCallable_Check(f))
    return PyErr_Format(PyExc_TypeError, "expected a callable or an ffikit.Function, got %.200s", Py_TYPE(f)->tp_name);
  ffk_function *fn = ffkpy_function_from_callable(f);
  return fn ? ffkpy_wrap_steal((ffk_object *)fn) : NULL;
}

/* _register_global_func(name, f, override) -> Function */
static PyObject *register_global(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *name;
  PyObject *f;
  int override = 0;
  if (!PyArg_ParseTuple(args, "sO|p:_register_global_func", &name, &f, &override)) return NULL;
  PyObject *w = to_function(f);
  if (w == NULL) return NULL;
  /* C decides a taken name and words it (tvm_ffi's RuntimeError). */
  if (ffk_function_register(name, (ffk_function *)((ffkpy_Object *)w)->obj, override != 0) != 0) {
    Py_DECREF(w);
    return ffkpy_raise_from_ffk();
  }
  return w;
}

/* _get_global_func(name, allow_missing) -> Function or None */
static PyObject *get_global(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *name;
  int allow_missing = 0;
  if (!PyArg_ParseTuple(args, "s|p:get_global_func", &name, &allow_missing)) return NULL;
  ffk_function *f = NULL;
  int found = ffk_function_get_global(name, &f);
  if (found < 0) return ffkpy_raise_from_ffk();
  if (!found) {
    if (allow_missing) Py_RETURN_NONE;
    return PyErr_Format(PyExc_ValueError, "Cannot find global function %s", name);
  }
  return ffkpy_wrap_steal((ffk_object *)f);
}

static PyObject *remove_global(PyObject *mod, PyObject *arg) {
  (void)mod;
  const char *name = PyUnicode_AsUTF8(arg);
  if (name == NULL) return NULL;
  int rc = ffk_function_remove_global(name);
  if (rc < 0) return ffkpy_raise_from_ffk();
  return PyBool_FromLong(rc);
}

static int collect_name(const char *name, ffk_function *f, void *ctx) {
  (void)f;
  PyObject *s = PyUnicode_FromString(name);
  if (s == NULL || PyList_Append((PyObject *)ctx, s) != 0) {
    Py_XDECREF(s);
    return 1;
  }
  Py_DECREF(s);
  return 0;
}

static PyObject *list_global_names(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  PyObject *names = PyList_New(0);
  if (names == NULL) return NULL;
  int rc = ffk_function_for_each_global(collect_name, names);
  if (rc == 1) {
    Py_DECREF(names);
    return NULL;
  }
  if (rc != 0) {
    Py_DECREF(names);
    return ffkpy_raise_from_ffk();
  }
  return names;
}

/* ---- Modules ------------------------------------------------------------------------ */

static PyObject *module_load(PyObject *mod, PyObject *arg) {
  (void)mod;
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(arg, &path)) return NULL;
  ffk_module *m;
  Py_BEGIN_ALLOW_THREADS;
  m = ffk_module_load(PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS;
  Py_DECREF(path);
  if (m == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)m);
}

static PyObject *module_keep_loaded(PyObject *mod, PyObject *m) {
  (void)mod;
  ffk_object *h = ffkpy_handle(m);
  if (h == NULL || h->type_index != FFK_TYPE_MODULE) return PyErr_Format(PyExc_TypeError, "expected an ffikit.Module");
  if (ffk_module_keep_loaded((ffk_module *)h) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *module_get_function(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *m;
  const char *name;
  if (!PyArg_ParseTuple(args, "O!s:_module_get_function", &ffkpy_ObjectType, &m, &name)) return NULL;
  ffk_object *h = ((ffkpy_Object *)m)->obj;
  if (h->type_index != FFK_TYPE_MODULE) return PyErr_Format(PyExc_TypeError, "expected an ffikit.Module");
  ffk_function *f = ffk_module_get_function((ffk_module *)h, name);
  if (f == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)f);
}

static PyObject *module_path(PyObject *mod, PyObject *m) {
  (void)mod;
  ffk_object *h = ffkpy_handle(m);
  if (h == NULL || h->type_index != FFK_TYPE_MODULE) return PyErr_Format(PyExc_TypeError, "expected an ffikit.Module");
  return PyUnicode_DecodeFSDefault(ffk_module_path((ffk_module *)h));
}

PyMethodDef ffkpy_function_methods[] = {
    {"_register_global_func", register_global, METH_VARARGS, NULL},
    {"_get_global_func", get_global, METH_VARARGS, NULL},
    {"remove_global_func", remove_global, METH_O,
     "remove_global_func(name) -> bool: removes a global Function; whether it was registered."},
    {"list_global_func_names", list_global_names, METH_NOARGS,
     "list_global_func_names() -> list[str]: the names of every global Function, sorted."},
    {"_global_function_from_pickle", global_function_from_pickle, METH_O,
     "_global_function_from_pickle(name) -> the global Function `name` (what a pickled Function loads as)."},
    {"convert_func", (PyCFunction)(void (*)(void))convert_func, METH_VARARGS | METH_KEYWORDS,
     "convert_func(pyfunc, tensor_cls=None) -> Function: a Function calling `pyfunc`. With `tensor_cls` (a class\n"
     "exposing __dlpack_c_exchange_api__, such as torch.Tensor), its tensor arguments arrive as that class's\n"
     "tensors (and containers read their tensors so), converted in C; else as ffikit.Tensor, as convert(pyfunc)."},
    {"_module_load", module_load, METH_O, NULL},
    {"_module_get_function", module_get_function, METH_VARARGS, NULL},
    {"_module_path", module_path, METH_O, NULL},
    {"_module_keep_loaded", module_keep_loaded, METH_O,
     "_module_keep_loaded(module): its library stays loaded for the life of the process (ffk_module_keep_loaded)."},
    {NULL, NULL, 0, NULL},
};

int ffkpy_function_types_init(PyObject *module) {
  ffkpy_FunctionType.tp_base = &ffkpy_ObjectType;
  if (PyType_Ready(&ffkpy_FunctionType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Function", (PyObject *)&ffkpy_FunctionType) < 0) return -1;
  PyObject *k = PyLong_FromLong(FFK_TYPE_FUNCTION);
  if (k == NULL) return -1;
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, k, (PyObject *)&ffkpy_FunctionType);
  Py_DECREF(k);
  return rc;
}
