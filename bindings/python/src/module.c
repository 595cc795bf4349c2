/*
 * module.c - the extension module ffikit._core: its types and functions.
 *
 * The extension carries the C library inside it (linked statically) together with the
 * testing.* Functions, so `pip install` gives a self-contained package. The Python
 * modules of the package finish the set-up through _set_hooks and _register_class.
 */
#include "ffikit_py.h"

int ffkpy_convert_init(void);
extern PyMethodDef ffkpy_module_meta_methods[]; /* module_meta.c */
/* structural.c: structural tools, JSON graph, copy/pickle of ffikit.Object */
extern PyMethodDef ffkpy_structural_methods[];
int ffkpy_structural_init(PyObject *module);
/* dataclass.c: types defined from Python (ffikit.dataclasses) */
extern PyMethodDef ffkpy_dataclass_methods[];
/* stream.c: the current stream per (thread, device) (ffikit.stream) */
extern PyMethodDef ffkpy_stream_methods[];
/* cycles.c: WeakRef objects and find_cycles (ffikit.WeakRef, ffikit.debug) */
extern PyMethodDef ffkpy_cycles_methods[];
/* shape.c: the C Shape object behind ffikit.Shape */
extern PyMethodDef ffkpy_shape_methods[];

static PyObject *abi_version(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  uint32_t v = ffk_abi_version();
  return Py_BuildValue("(II)", (unsigned)(v >> 16), (unsigned)(v & 0xffff));
}

static PyMethodDef core_methods[] = {
    {"_abi_version", abi_version, METH_NOARGS, "The (major, minor) ffikit ABI of the C library inside."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ffikit._core",
    .m_doc = "The C core of the ffikit package: wrappers, conversions, Functions and errors.",
    .m_size = -1,
    .m_methods = core_methods,
};

static int add_methods(PyObject *m, PyMethodDef *defs) {
  return PyModule_AddFunctions(m, defs);
}

/* The calls up (ffikit_py.h, ffkpy_up): what the bottom files reach above themselves. */
static void fill_calls_up(void) {
  ffkpy_up = (ffkpy_up_table){
      .raise_from_ffk = ffkpy_raise_from_ffk,
      .function_type = &ffkpy_FunctionType,
      .function_vectorcall = ffkpy_function_vectorcall,
      .function_from_callable = ffkpy_function_from_callable,
      .tensor_type = &ffkpy_TensorType,
      .reflect_new = ffkpy_reflect_new,
      .reflect_init = ffkpy_reflect_init,
      .reflect_fill = ffkpy_reflect_fill,
      .reflect_clear = ffkpy_reflect_clear,
      .reflect_fill_unwrapped = ffkpy_reflect__fill_unwrapped,
      .reflect_plain_layout = ffkpy_reflect__plain_layout,
  };
}

PyMODINIT_FUNC PyInit__core(void) {
  fill_calls_up();
  PyObject *m = PyModule_Create(&core_module);
  if (m == NULL) return NULL;
  if (ffkpy_object_types_init(m) < 0 || ffkpy_error_type_init(m) < 0 || ffkpy_value_types_init(m) < 0 ||
      ffkpy_function_types_init(m) < 0 ||
      ffkpy_tensor_types_init(m) < 0 || ffkpy_container_types_init(m) < 0 || ffkpy_reflect_types_init(m) < 0 ||
      ffkpy_convert_init() < 0 ||
      add_methods(m, ffkpy_object_methods) < 0 ||
      add_methods(m, ffkpy_function_methods) < 0 || add_methods(m, ffkpy_error_methods) < 0 ||
      add_methods(m, ffkpy_convert_methods) < 0 || add_methods(m, ffkpy_value_methods) < 0 ||
      add_methods(m, ffkpy_testing_methods) < 0 || add_methods(m, ffkpy_hook_methods) < 0 ||
      add_methods(m, ffkpy_container_methods) < 0 ||
      add_methods(m, ffkpy_tensor_methods) < 0 || add_methods(m, ffkpy_module_meta_methods) < 0 ||
      add_methods(m, ffkpy_structural_methods) < 0 || ffkpy_structural_init(m) < 0 || /* structural.c */
      add_methods(m, ffkpy_dataclass_methods) < 0 || /* dataclass.c */
      add_methods(m, ffkpy_stream_methods) < 0 ||    /* stream.c */
      add_methods(m, ffkpy_cycles_methods) < 0 ||    /* cycles.c */
      add_methods(m, ffkpy_shape_methods) < 0 ||     /* shape.c */
      add_methods(m, ffkpy_enum_methods) < 0 ||      /* enum.c */
      PyModule_AddStringConstant(m, "__version__", ffk_version()) < 0 ||
      PyModule_AddIntConstant(m, "HOOKS_AVAILABLE", ffk_debug_hooks_available()) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
