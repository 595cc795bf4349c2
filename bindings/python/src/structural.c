/*
 * structural.c - the Python side of the structural tools and the JSON graph format:
 * conversions only, over ffk_structural_equal / ffk_structural_hash /
 * ffk_structural_first_mismatch (ffikit/structural.h), ffk_to_json_graph /
 * ffk_from_json_graph (ffikit/serialization.h), ffk_deep_copy and
 * ffk_object_shallow_copy; and the copy / deepcopy / pickle methods of ffikit.Object
 * built on them (object.c puts ffkpy_object_copy_methods on the base class).
 *
 * Arguments convert as function arguments do (ffkpy_to_any: a list becomes an Array, a
 * dict a Map, ...), so a Python value and the ffikit value it converts to give the same
 * answers. The walks run without the GIL: they read C objects only, and a hook written
 * in Python takes the GIL itself (function.c). The rules themselves (what is equal, what
 * a path prints as, what a document holds) are the C library's; nothing here decides one.
 *
 * Pickling: an object made by reflection (ffk_object_is_reflection_made: its state is its
 * fields) pickles through its fields, by the graph encoder that containers use
 * (ffikit/_pickle.py `_reduce`): every container and reflection-made object reachable
 * from it is a node (type key, the module to import first, field values in field order),
 * so sharing and cycles survive, and tensors, Functions and other objects are leaves that
 * pickle themselves (a tensor out-of-band at protocol 5). Any other object pickles as
 * (_core._unpickle_object, (document, module)): the JSON graph of the object (its type's
 * __data_to_json__ hook; tvm_ffi pickles through the same format) and the module of its
 * Python class, imported first when unpickling so that types a Python module defines
 * (py_class) exist; the types must have the same keys. What that format cannot hold (a
 * tensor, a Function, an opaque object, a cycle) is a TypeError naming the object's type
 * and the C reason. Pickles made before field-wise pickling existed (_unpickle_object)
 * still load.
 */
#include "ffikit_py.h"

#include <ffikit/enum.h>

#include <ffikit/access_path.h>
#include <ffikit/serialization.h>
#include <ffikit/structural.h>

/* Converts two Python values in argument mode: the results are borrowed (wrappers lend
   their handles, what the conversion makes lives in `temps`), valid until
   ffkpy_temps_release, which the caller runs. 0, or -1 with a Python exception (temps
   already released). */
static int to_any2(PyObject *a, PyObject *b, ffk_any *x, ffk_any *y, ffkpy_temps *temps) {
  ffkpy_temps_init(temps);
  if (ffkpy_to_any(a, x, temps) != 0) {
    ffkpy_temps_release(temps);
    return -1;
  }
  if (ffkpy_to_any(b, y, temps) != 0) {
    ffkpy_temps_release(temps);
    return -1;
  }
  return 0;
}

/* The options tvm_ffi's signatures carry, as the C walk's flags in *flags: map_free_vars
   (FFK_STRUCTURAL_MAP_FREE_VARS when true) and skip_tensor_content, which changes nothing
   (ffikit compares tensors by identity, never by their data; the Python module documents
   this). 0, or -1 when a truth test raised. */
static int check_options(PyObject *map_free_vars, PyObject *skip_tensor_content, uint32_t *flags) {
  *flags = 0;
  int map = map_free_vars != NULL ? PyObject_IsTrue(map_free_vars) : 0;
  if (map < 0) return -1;
  if (map) *flags |= FFK_STRUCTURAL_MAP_FREE_VARS;
  if (skip_tensor_content != NULL && PyObject_IsTrue(skip_tensor_content) < 0) return -1;
  return 0;
}

/* _structural_equal(lhs, rhs, map_free_vars=False, skip_tensor_content=False) -> bool */
static PyObject *py_structural_equal(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *a, *b, *mfv = NULL, *stc = NULL;
  if (!PyArg_ParseTuple(args, "OO|OO:structural_equal", &a, &b, &mfv, &stc)) return NULL;
  uint32_t flags;
  if (check_options(mfv, stc, &flags) != 0) return NULL;
  ffkpy_temps temps;
  ffk_any x, y;
  if (to_any2(a, b, &x, &y, &temps) != 0) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_structural_equal_opts(&x, &y, flags);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (rc < 0) return ffkpy_raise_from_ffk();
  return PyBool_FromLong(rc);
}

/* _structural_hash(value, map_free_vars=False, skip_tensor_content=False) -> int in [0, 2**64) */
static PyObject *py_structural_hash(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o, *mfv = NULL, *stc = NULL;
  if (!PyArg_ParseTuple(args, "O|OO:structural_hash", &o, &mfv, &stc)) return NULL;
  uint32_t flags;
  if (check_options(mfv, stc, &flags) != 0) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  if (ffkpy_to_any(o, &v, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return NULL;
  }
  uint64_t h = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_structural_hash_opts(&v, flags, &h);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return PyLong_FromUnsignedLongLong((unsigned long long)h);
}

/* _first_structural_mismatch(lhs, rhs, ...) -> None or (AccessPath, AccessPath) */
static PyObject *py_first_mismatch(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *a, *b, *mfv = NULL, *stc = NULL;
  if (!PyArg_ParseTuple(args, "OO|OO:get_first_structural_mismatch", &a, &b, &mfv, &stc)) return NULL;
  uint32_t flags;
  if (check_options(mfv, stc, &flags) != 0) return NULL;
  ffkpy_temps temps;
  ffk_any x, y;
  if (to_any2(a, b, &x, &y, &temps) != 0) return NULL;
  ffk_object *lp = NULL, *rp = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_structural_first_mismatch_opts(&x, &y, flags, &lp, &rp);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0) Py_RETURN_NONE;
  PyObject *l = ffkpy_wrap_steal(lp);
  PyObject *r = ffkpy_wrap_steal(rp); /* steals also when the first failed */
  if (l == NULL || r == NULL) {
    Py_XDECREF(l);
    Py_XDECREF(r);
    return NULL;
  }
  return Py_BuildValue("(NN)", l, r);
}

/* The text of a str Any as a Python str (borrowed Any), or NULL with an exception. */
static PyObject *str_of(const ffk_any *v) {
  const char *data;
  size_t size;
  if (ffk_any_as_str(v, &data, &size) != 0) return ffkpy_raise_from_ffk();
  return PyUnicode_DecodeUTF8(data, (Py_ssize_t)size, "strict");
}

/* The JSON graph document of `o` (with `metadata`, NULL or None for none), or NULL. */
static PyObject *to_json_graph(PyObject *o, PyObject *metadata) {
  ffkpy_temps temps;
  ffk_any v, m = ffk_any_none(), out;
  int has_meta = metadata != NULL && metadata != Py_None;
  if (has_meta) {
    if (to_any2(o, metadata, &v, &m, &temps) != 0) return NULL;
  } else {
    ffkpy_temps_init(&temps);
    if (ffkpy_to_any(o, &v, &temps) != 0) {
      ffkpy_temps_release(&temps);
      return NULL;
    }
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_to_json_graph(&v, has_meta ? &m : NULL, &out);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (rc != 0) return ffkpy_raise_from_ffk();
  PyObject *s = str_of(&out);
  ffk_any_release(&out);
  return s;
}

/* _to_json_graph_str(obj, metadata=None) -> str */
static PyObject *py_to_json_graph_str(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o, *metadata = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:to_json_graph_str", &o, &metadata)) return NULL;
  return to_json_graph(o, metadata);
}

/* The bytes of a document given as str, bytes or a buffer; fills *view (release it). 0 or -1. */
static int document_bytes(PyObject *s, Py_buffer *view, const char **data, Py_ssize_t *size) {
  view->obj = NULL;
  if (PyUnicode_Check(s)) {
    *data = PyUnicode_AsUTF8AndSize(s, size);
    return *data != NULL ? 0 : -1;
  }
  if (PyObject_CheckBuffer(s) && PyObject_GetBuffer(s, view, PyBUF_SIMPLE) == 0) {
    *data = view->buf;
    *size = view->len;
    return 0;
  }
  if (!PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "from_json_graph_str expects a str (or bytes), not %.200s", Py_TYPE(s)->tp_name);
  return -1;
}

/* Reads a document; with want_meta, returns (value, metadata). */
static PyObject *from_json_graph(PyObject *s, int want_meta) {
  Py_buffer view;
  const char *data;
  Py_ssize_t size;
  if (document_bytes(s, &view, &data, &size) != 0) return NULL;
  ffk_any out, meta;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_from_json_graph(data, (size_t)size, &out, want_meta ? &meta : NULL);
  Py_END_ALLOW_THREADS
  if (view.obj != NULL) PyBuffer_Release(&view);
  if (rc != 0) return ffkpy_raise_from_ffk();
  PyObject *value = ffkpy_from_any_steal(&out);
  if (!want_meta) return value;
  PyObject *m = ffkpy_from_any_steal(&meta);
  if (value == NULL || m == NULL) {
    Py_XDECREF(value);
    Py_XDECREF(m);
    return NULL;
  }
  return Py_BuildValue("(NN)", value, m);
}

/* _from_json_graph_str(s) -> value */
static PyObject *py_from_json_graph_str(PyObject *mod, PyObject *s) {
  (void)mod;
  return from_json_graph(s, 0);
}

/* _from_json_graph_str_with_metadata(s) -> (value, metadata Map or None) */
static PyObject *py_from_json_graph_str_meta(PyObject *mod, PyObject *s) {
  (void)mod;
  return from_json_graph(s, 1);
}

/* _deep_copy(value) -> a deep copy (ffk_deep_copy's rules) */
static PyObject *py_deep_copy(PyObject *mod, PyObject *o) {
  (void)mod;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v, out;
  if (ffkpy_to_any(o, &v, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return NULL;
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_deep_copy(&v, &out);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&out);
}

/* The handle of a constructed wrapper (borrowed), or NULL with a TypeError naming `what`
   (object.c's message for a wrapper whose own __init__ has not constructed it). */
static ffk_object *handle_of(PyObject *self, const char *what) {
  ffk_object *h = ffkpy_handle(self);
  if (h != NULL) return h;
  if (PyObject_TypeCheck(self, &ffkpy_ObjectType))
    PyErr_Format(PyExc_TypeError, "%s: this %s object has not been constructed (its __init__ did not call "
                 "__ffi_init__)", what, Py_TYPE(self)->tp_name);
  else
    PyErr_Format(PyExc_TypeError, "%s needs an ffikit object, not %.200s", what, Py_TYPE(self)->tp_name);
  return NULL;
}

/* A wrapper for `obj` (stolen) of `like`'s class when both have the same type (a subclass
   made in Python stays itself), else of the class the type registry gives. */
static PyObject *wrap_like(PyObject *like, ffk_object *obj) {
  ffk_object *h = ffkpy_handle(like);
  PyTypeObject *tp = Py_TYPE(like);
  if (h == NULL || obj->type_index != h->type_index || obj->type_index < FFK_TYPE_STATIC_END ||
      !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) || PyType_IsSubtype(tp, &ffkpy_FunctionType))
    return ffkpy_wrap_steal(obj);
  return ffkpy_wrap_as(tp, obj);
}

/* _shallow_copy(obj) -> a new object of its type sharing its field values */
static PyObject *py_shallow_copy(PyObject *mod, PyObject *o) {
  (void)mod;
  ffk_object *h = handle_of(o, "shallow copy");
  if (h == NULL) return NULL;
  ffk_object *c = ffk_object_shallow_copy(h);
  if (c == NULL) return ffkpy_raise_from_ffk();
  return wrap_like(o, c);
}

static PyObject *py_unpickle_object(PyObject *mod, PyObject *args);

/* _structural_too_deep(): raises the depth error (ffk_structural_too_deep), for the graph
   walks written in Python (container.py's pickle), so its text is C's. Always NULL. */
static PyObject *py_structural_too_deep(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  ffk_structural_too_deep();
  return ffkpy_raise_from_ffk();
}

PyMethodDef ffkpy_structural_methods[] = {
    {"_structural_equal", py_structural_equal, METH_VARARGS,
     "_structural_equal(lhs, rhs, map_free_vars=False, skip_tensor_content=False) -> bool (ffk_structural_equal)."},
    {"_structural_hash", py_structural_hash, METH_VARARGS,
     "_structural_hash(value, map_free_vars=False, skip_tensor_content=False) -> int in [0, 2**64)."},
    {"_first_structural_mismatch", py_first_mismatch, METH_VARARGS,
     "_first_structural_mismatch(lhs, rhs, ...) -> None or (lhs_path, rhs_path), two AccessPath."},
    {"_to_json_graph_str", py_to_json_graph_str, METH_VARARGS,
     "_to_json_graph_str(obj, metadata=None) -> str: the JSON graph document of obj."},
    {"_from_json_graph_str", py_from_json_graph_str, METH_O,
     "_from_json_graph_str(s) -> the value a JSON graph document (str or bytes) holds."},
    {"_from_json_graph_str_with_metadata", py_from_json_graph_str_meta, METH_O,
     "_from_json_graph_str_with_metadata(s) -> (value, metadata): metadata a Map, or None."},
    {"_deep_copy", py_deep_copy, METH_O, "_deep_copy(value) -> a deep copy (ffk_deep_copy)."},
    {"_shallow_copy", py_shallow_copy, METH_O, "_shallow_copy(obj) -> ffk_object_shallow_copy(obj)."},
    {"_unpickle_object", py_unpickle_object, METH_VARARGS,
     "_unpickle_object(document, module): imports module (if not None), then reads the document."},
    {"_structural_too_deep", py_structural_too_deep, METH_NOARGS,
     "_structural_too_deep(): raises the RuntimeError for nesting deeper than STRUCTURAL_MAX_DEPTH."},
    {NULL, NULL, 0, NULL},
};

/* ---- copy, deepcopy, pickle of ffikit.Object ----------------------------------------- */

static PyObject *g_unpickle; /* _core._unpickle_object, what pickles reconstruct with */

/* __copy__: a shallow copy (TypeError for a type reflection does not copy). */
static PyObject *object_copy(PyObject *self, PyObject *unused) {
  (void)unused;
  return py_shallow_copy(NULL, self);
}

/* __deepcopy__(memo): ffk_deep_copy. copy.deepcopy already looks `memo` up by id(self) and
   records the result; the memo is also keyed by the C object, so two wrappers of one C
   object copied under one memo give one copy, as one Python object would. */
static PyObject *object_deepcopy(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs > 1) return PyErr_Format(PyExc_TypeError, "__deepcopy__ takes at most 1 argument (%zd given)", nargs);
  PyObject *memo = nargs == 1 && args[0] != Py_None ? args[0] : NULL;
  ffk_object *h = handle_of(self, "__deepcopy__");
  if (h == NULL) return NULL;
  if (memo != NULL && !PyDict_Check(memo))
    return PyErr_Format(PyExc_TypeError, "__deepcopy__ memo must be a dict, not %.200s", Py_TYPE(memo)->tp_name);
  PyObject *key = NULL;
  if (memo != NULL) {
    key = Py_BuildValue("(sN)", "ffikit.Object", PyLong_FromVoidPtr(h));
    if (key == NULL) return NULL;
    PyObject *hit = PyDict_GetItemWithError(memo, key);
    if (hit != NULL || PyErr_Occurred()) {
      Py_DECREF(key);
      return Py_XNewRef(hit);
    }
  }
  ffk_any v = ffk_any_object(h), out;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_deep_copy(&v, &out);
  Py_END_ALLOW_THREADS
  ffk_any_release(&v);
  PyObject *copy = NULL;
  if (rc != 0) ffkpy_raise_from_ffk();
  else if (ffk_any_is_object(&out) && out.v_obj != NULL) copy = wrap_like(self, out.v_obj);
  else copy = ffkpy_from_any_steal(&out);
  if (copy != NULL && key != NULL && PyDict_SetItem(memo, key, copy) != 0) Py_CLEAR(copy);
  Py_XDECREF(key);
  return copy;
}

/* _unpickle_object(document, module): imports `module` (None: none; a failed import is
   ignored, the read then names the unknown type), so that types a Python module defines
   exist before the document is read, as when pickle imports a class, then reads it. */
static PyObject *py_unpickle_object(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *doc, *module;
  if (!PyArg_ParseTuple(args, "OO:_unpickle_object", &doc, &module)) return NULL;
  if (module != Py_None) {
    if (!PyUnicode_Check(module)) return PyErr_Format(PyExc_TypeError, "_unpickle_object: module must be a str or None");
    PyObject *m = PyImport_Import(module);
    if (m == NULL) {
      if (!PyErr_ExceptionMatches(PyExc_ImportError)) return NULL;
      PyErr_Clear();
    }
    Py_XDECREF(m);
  }
  return from_json_graph(doc, 0);
}

static PyObject *g_graph_reduce; /* ffikit._pickle._reduce, looked up at the first use */

/* __reduce__: an object made by reflection goes to the graph encoder of ffikit._pickle
   (imported here, not at load: the package's Python modules import _core first); any other
   is (_unpickle_object, (document, the module of the object's class)), the module None
   for a class ffikit made itself (it lives in no importable module). */
static PyObject *object_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  ffk_object *h = handle_of(self, "pickling");
  if (h == NULL) return NULL;
  if (ffk_object_is_reflection_made(h) && !ffk_enum_is_member(h)) { /* a member: its graph names the singleton */
    if (g_graph_reduce == NULL) {
      PyObject *m = PyImport_ImportModule("ffikit._pickle");
      if (m == NULL) return NULL;
      g_graph_reduce = PyObject_GetAttrString(m, "_reduce");
      Py_DECREF(m);
      if (g_graph_reduce == NULL) return NULL;
    }
    return PyObject_CallOneArg(g_graph_reduce, self);
  }
  PyObject *doc = to_json_graph(self, NULL);
  if (doc == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
    PyObject *type, *exc, *tb; /* PyErr_Fetch: Python 3.10 lacks PyErr_GetRaisedException */
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    const char *key = ffk_type_key(h->type_index);
    PyErr_Format(PyExc_TypeError, "cannot pickle a `%s` object: %S", key ? key : "?", exc);
    PyObject *type2, *now, *tb2;
    PyErr_Fetch(&type2, &now, &tb2);
    PyErr_NormalizeException(&type2, &now, &tb2);
    if (tb != NULL) PyException_SetTraceback(exc, tb);
    PyException_SetCause(now, exc); /* steals exc */
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(type2, now, tb2);
    return NULL;
  }
  PyObject *module = NULL;
  int auto_made = PyObject_HasAttrString((PyObject *)Py_TYPE(self), "__ffi_auto_class__");
  if (!auto_made) module = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "__module__");
  if (module == NULL) {
    PyErr_Clear();
    module = Py_NewRef(Py_None);
  }
  return Py_BuildValue("(O(NN))", g_unpickle, doc, module);
}

static PyMethodDef ffkpy_object_copy_methods[] = {
    {"__copy__", object_copy, METH_NOARGS,
     "copy.copy(obj): a new object of the same type sharing the field values (ffk_object_shallow_copy);\n"
     "TypeError for a type whose objects reflection does not make."},
    {"__deepcopy__", (PyCFunction)(void (*)(void))object_deepcopy, METH_FASTCALL,
     "copy.deepcopy(obj, memo): a deep copy made in C (ffk_deep_copy: sharing and cycles kept); the\n"
     "memo is honoured for this object (by id and by C object)."},
    {"__reduce__", object_reduce, METH_NOARGS,
     "An object made by reflection pickles through its fields (every field, read-only and\n"
     "inherited ones too), with the containers and objects it reaches as one graph: sharing\n"
     "and cycles are kept, and tensors inside go out-of-band at protocol 5. Any other object\n"
     "pickles through its JSON graph document (to_json_graph_str), a TypeError for what that\n"
     "format cannot hold. Unpickling imports the module of each object's class first, and\n"
     "needs the types registered under the same keys with the same fields."},
    {NULL, NULL, 0, NULL},
};

/* Puts ffkpy_object_copy_methods on ffikit.Object (after the module's functions are added,
   so that _from_json_graph_str exists). 0, or -1 with a Python exception. */
int ffkpy_structural_init(PyObject *module) {
  if (PyModule_AddIntConstant(module, "STRUCTURAL_MAX_DEPTH", FFK_STRUCTURAL_MAX_DEPTH) < 0) return -1;
  g_unpickle = PyObject_GetAttrString(module, "_unpickle_object");
  if (g_unpickle == NULL) return -1;
  for (PyMethodDef *def = ffkpy_object_copy_methods; def->ml_name != NULL; ++def) {
    PyObject *d = PyDescr_NewMethod(&ffkpy_ObjectType, def);
    int rc = d != NULL ? PyDict_SetItemString(ffkpy_ObjectType.tp_dict, def->ml_name, d) : -1;
    Py_XDECREF(d);
    if (rc != 0) return -1;
  }
  PyType_Modified(&ffkpy_ObjectType);
  return 0;
}
