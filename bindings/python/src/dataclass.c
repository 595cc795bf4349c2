/*
 * dataclass.c - the C half of ffikit.dataclasses: defining a reflected type from Python
 * (py_class), adding Python callables to it as methods, and reading and writing its type
 * attributes (the structural hooks).
 *
 * Only conversion happens here. Python computes each field's type text, flags and
 * default from the class's annotations; ffk_type_define (ffikit/reflect.h) decides
 * whether the description is valid and lays the instance out (instance_size 0), and its
 * error text is what the user reads. A type defined again with the same description (a
 * module reloaded) gets the same index back; a different description under the same key
 * is C's ValueError.
 *
 * Invariants:
 *  - Every value handed to C here is borrowed for the call: defaults are converted in
 *    argument mode into a temps list released after ffk_type_define, which keeps its own
 *    converted copies; Functions made from Python callables are released after the call
 *    that registered them (the registry keeps a reference until exit).
 *  - A Python callable becomes a Function with ffkpy_function_from_callable: C code that
 *    calls a method or a default factory of a py_class runs the Python code under the GIL,
 *    from any thread.
 *  - Nothing here keeps state between calls.
 */
#include "ffikit_py.h"

#include <ffikit/reflect.h>

/* A Function for `o` (a Function wrapper, lent: retained here; or a Python callable),
 * as a new reference, or NULL with a Python exception naming `what`. */
static ffk_function *function_of(PyObject *o, const char *what) {
  ffk_object *h = ffkpy_handle(o);
  if (h != NULL && ffk_type_is_instance(h->type_index, FFK_TYPE_FUNCTION)) {
    ffk_object_retain(h);
    return (ffk_function *)h;
  }
  if (!PyCallable_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be callable, got %.200s", what, Py_TYPE(o)->tp_name);
    return NULL;
  }
  ffk_function *f = ffkpy_function_from_callable(o);
  if (f == NULL && !PyErr_Occurred()) ffkpy_raise_from_ffk();
  return f;
}

/* The UTF-8 of a str or None (NULL), with a TypeError naming `what` for anything else.
 * Returns 0 or -1; *out borrows from the object. */
static int optional_utf8(PyObject *o, const char **out, const char *what) {
  *out = NULL;
  if (o == Py_None) return 0;
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str or None, got %.200s", what, Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = PyUnicode_AsUTF8(o);
  return *out != NULL ? 0 : -1;
}

/*
 * _type_define(type_key, parent_index, fields, doc) -> type index.
 *
 * fields: a sequence of (name, type_text, flags, default, doc) tuples, the type's own
 * fields in order; `default` is read only with FFK_FIELD_HAS_DEFAULT (a callable or
 * Function with FFK_FIELD_DEFAULT_FACTORY too). Offsets are left to C (automatic layout).
 * Raises C's ValueError for a bad description, TypeError for a malformed tuple.
 */
static PyObject *type_define(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *key, *doc = NULL;
  int parent;
  PyObject *fields_arg, *doc_obj = Py_None;
  if (!PyArg_ParseTuple(args, "siO|O:_type_define", &key, &parent, &fields_arg, &doc_obj)) return NULL;
  if (optional_utf8(doc_obj, &doc, "doc") != 0) return NULL;
  PyObject *seq = PySequence_Fast(fields_arg, "_type_define: fields must be a sequence of tuples");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > INT32_MAX) {
    Py_DECREF(seq);
    return PyErr_Format(PyExc_ValueError, "too many fields: %zd", n);
  }
  ffk_field_def *defs = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(ffk_field_def));
  ffk_function **factories = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(ffk_function *));
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  PyObject *result = NULL;
  if (defs == NULL || factories == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    const char *name, *type_text;
    unsigned int flags;
    PyObject *dflt, *fdoc;
    if (!PyTuple_Check(item) ||
        !PyArg_ParseTuple(item, "ssIOO:_type_define field", &name, &type_text, &flags, &dflt, &fdoc)) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "_type_define: field %zd must be a (name, type, flags, default, doc) tuple", i);
      goto done;
    }
    defs[i].name = name;
    defs[i].offset = 0;
    defs[i].type = type_text;
    defs[i].flags = flags;
    defs[i].default_value = ffk_any_none();
    if (optional_utf8(fdoc, &defs[i].doc, "field doc") != 0) goto done;
    if (!(flags & FFK_FIELD_HAS_DEFAULT)) continue;
    if (flags & FFK_FIELD_DEFAULT_FACTORY) {
      if ((factories[i] = function_of(dflt, "default_factory")) == NULL) goto done;
      defs[i].default_value.type_index = ((ffk_object *)factories[i])->type_index; /* lent: factories[] owns it */
      defs[i].default_value.v_obj = (ffk_object *)factories[i];
    } else if (ffkpy_to_any(dflt, &defs[i].default_value, &temps) != 0) {
      goto done;
    }
  }
  ffk_type_def def = {.key = key, .parent_index = parent, .instance_size = 0, .fields = defs,
                      .nfields = (int32_t)n, .doc = doc};
  int32_t index = ffk_type_define(&def);
  result = index >= 0 ? PyLong_FromLong(index) : ffkpy_raise_from_ffk();
done:
  ffkpy_temps_release(&temps);
  for (Py_ssize_t i = 0; factories != NULL && i < n; ++i)
    if (factories[i] != NULL) ffk_object_release((ffk_object *)factories[i]);
  PyMem_Free(factories);
  PyMem_Free(defs);
  Py_DECREF(seq);
  return result;
}

/* _type_add_method(type_index, name, func, is_static, doc): adds (or replaces) a method
 * whose Function is `func` (a Function, or a Python callable made into one). */
static PyObject *type_add_method(PyObject *mod, PyObject *args) {
  (void)mod;
  int index, is_static;
  const char *name, *doc = NULL;
  PyObject *func, *doc_obj = Py_None;
  if (!PyArg_ParseTuple(args, "isOp|O:_type_add_method", &index, &name, &func, &is_static, &doc_obj)) return NULL;
  if (optional_utf8(doc_obj, &doc, "doc") != 0) return NULL;
  ffk_function *f = function_of(func, "a method");
  if (f == NULL) return NULL;
  ffk_method_def m = {.name = name, .function = f, .is_static = is_static != 0, .doc = doc};
  int rc = ffk_type_add_method(index, &m);
  ffk_object_release((ffk_object *)f);
  if (rc != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

/* _type_set_attr(type_index, name, value): ffk_type_set_attr; a Python callable value
 * is stored as a Function. */
static PyObject *type_set_attr(PyObject *mod, PyObject *args) {
  (void)mod;
  int index;
  const char *name;
  PyObject *value;
  if (!PyArg_ParseTuple(args, "isO:_type_set_attr", &index, &name, &value)) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  int rc;
  if (ffkpy_handle(value) == NULL && PyCallable_Check(value) && !PyType_Check(value)) {
    ffk_function *f = function_of(value, "a type attribute");
    if (f == NULL) return NULL;
    v = ffk_any_none();
    v.type_index = ((ffk_object *)f)->type_index; /* lent: f is released below */
    v.v_obj = (ffk_object *)f;
    rc = ffk_type_set_attr(index, name, &v) != 0 ? ffkpy_raise_from_ffk_int() : 0;
    ffk_object_release((ffk_object *)f);
  } else {
    rc = ffkpy_to_any(value, &v, &temps);
    if (rc == 0 && ffk_type_set_attr(index, name, &v) != 0) rc = ffkpy_raise_from_ffk_int();
  }
  ffkpy_temps_release(&temps);
  if (rc != 0) return NULL;
  Py_RETURN_NONE;
}

/* _type_get_attr(type_index, name) -> the attribute (walking the parents), or None. */
static PyObject *type_get_attr(PyObject *mod, PyObject *args) {
  (void)mod;
  int index;
  const char *name;
  if (!PyArg_ParseTuple(args, "is:_type_get_attr", &index, &name)) return NULL;
  ffk_any v;
  int rc = ffk_type_get_attr(index, name, &v);
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0) Py_RETURN_NONE;
  return ffkpy_from_any_steal(&v);
}

/* _schema_accepts(declared, given) -> bool: ffk_schema_accepts, C's judgment of whether a
 * field annotated `declared` holds what C's field of type `given` does (c_class's check). */
static PyObject *schema_accepts(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *declared, *given;
  if (!PyArg_ParseTuple(args, "ss:_schema_accepts", &declared, &given)) return NULL;
  int rc = ffk_schema_accepts(declared, given);
  if (rc < 0) return ffkpy_raise_from_ffk();
  return PyBool_FromLong(rc);
}

PyMethodDef ffkpy_dataclass_methods[] = {
    {"_type_define", type_define, METH_VARARGS,
     "_type_define(type_key, parent_index, fields, doc=None) -> int: defines a reflected type laid out by "
     "ffikit; fields are (name, type_text, flags, default, doc) tuples."},
    {"_type_add_method", type_add_method, METH_VARARGS,
     "_type_add_method(type_index, name, func, is_static, doc=None): adds a method (a Function or callable)."},
    {"_type_set_attr", type_set_attr, METH_VARARGS,
     "_type_set_attr(type_index, name, value): sets a type attribute (a callable is stored as a Function)."},
    {"_type_get_attr", type_get_attr, METH_VARARGS,
     "_type_get_attr(type_index, name): the type attribute, looked up through the parents, or None."},
    {"_schema_accepts", schema_accepts, METH_VARARGS,
     "_schema_accepts(declared, given) -> bool: whether a field of type text `declared` accepts one of `given`."},
    {NULL, NULL, 0, NULL},
};
