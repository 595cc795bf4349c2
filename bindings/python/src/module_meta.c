/*
 * module_meta.c - what a Module and the registry tell about their Functions: whether a
 * module implements a name, its docs, the metadata JSON of module and global Functions,
 * and the system library. Each entry converts and calls one C function, which decides
 * (ffikit/module.h, ffikit/function.h); the Python layer (_object.py, registry.py)
 * parses the JSON and shapes the API as tvm_ffi's.
 */
#include "ffikit_py.h"

/* The ffk_module behind a Python Module, or NULL with a TypeError. */
static ffk_module *module_arg(PyObject *m) {
  ffk_object *h = ffkpy_handle(m);
  if (h == NULL || h->type_index != FFK_TYPE_MODULE) {
    PyErr_Format(PyExc_TypeError, "expected an ffikit.Module, got %.200s", Py_TYPE(m)->tp_name);
    return NULL;
  }
  return (ffk_module *)h;
}

static PyObject *implements_function(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *m;
  const char *name;
  if (!PyArg_ParseTuple(args, "Os:_module_implements_function", &m, &name)) return NULL;
  ffk_module *h = module_arg(m);
  if (h == NULL) return NULL;
  int found = ffk_module_implements_function(h, name);
  if (found < 0) return ffkpy_raise_from_ffk();
  return PyBool_FromLong(found);
}

static PyObject *get_function_doc(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *m;
  const char *name;
  if (!PyArg_ParseTuple(args, "Os:_module_get_function_doc", &m, &name)) return NULL;
  ffk_module *h = module_arg(m);
  if (h == NULL) return NULL;
  const char *doc;
  int found = ffk_module_get_function_doc(h, name, &doc);
  if (found < 0) return ffkpy_raise_from_ffk();
  if (found == 0) Py_RETURN_NONE;
  return ffkpy_str_from_utf8(doc, strlen(doc));
}

static PyObject *get_function_metadata(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *m;
  const char *name;
  if (!PyArg_ParseTuple(args, "Os:_module_get_function_metadata", &m, &name)) return NULL;
  ffk_module *h = module_arg(m);
  if (h == NULL) return NULL;
  ffk_any out;
  int found = ffk_module_get_function_metadata(h, name, &out);
  if (found < 0) return ffkpy_raise_from_ffk();
  if (found == 0) Py_RETURN_NONE;
  return ffkpy_from_any_steal(&out);
}

static PyObject *global_metadata(PyObject *mod, PyObject *arg) {
  (void)mod;
  if (!PyUnicode_Check(arg))
    return PyErr_Format(PyExc_TypeError, "get_global_func_metadata: name must be a str, got %.200s",
                        Py_TYPE(arg)->tp_name);
  const char *name = PyUnicode_AsUTF8(arg);
  if (name == NULL) return NULL;
  ffk_any out;
  if (ffk_function_global_metadata(name, &out) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&out);
}

static PyObject *function_metadata(PyObject *mod, PyObject *f) {
  (void)mod;
  ffk_object *h = ffkpy_handle(f);
  if (h == NULL || h->type_index != FFK_TYPE_FUNCTION)
    return PyErr_Format(PyExc_TypeError, "expected an ffikit.Function, got %.200s", Py_TYPE(f)->tp_name);
  ffk_any out;
  if (ffk_function_metadata((ffk_function *)h, &out) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&out);
}

static PyObject *system_lib(PyObject *mod, PyObject *arg) {
  (void)mod;
  if (!PyUnicode_Check(arg))
    return PyErr_Format(PyExc_TypeError, "system_lib: symbol_prefix must be a str, got %.200s", Py_TYPE(arg)->tp_name);
  const char *prefix = PyUnicode_AsUTF8(arg);
  if (prefix == NULL) return NULL;
  ffk_module *m = ffk_module_system_lib(prefix);
  if (m == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)m);
}

PyMethodDef ffkpy_module_meta_methods[] = {
    {"_module_implements_function", implements_function, METH_VARARGS, NULL},
    {"_module_get_function_doc", get_function_doc, METH_VARARGS, NULL},
    {"_module_get_function_metadata", get_function_metadata, METH_VARARGS, NULL},
    {"_global_func_metadata", global_metadata, METH_O, NULL},
    {"_function_metadata", function_metadata, METH_O, NULL},
    {"_system_lib", system_lib, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};
