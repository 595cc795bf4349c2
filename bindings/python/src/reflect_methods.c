/*
 * reflect_methods.c - method descriptors of reflected classes (ffikit.Method,
 * ffikit.StaticMethod): a type's methods (ffk_type_method_at) as Python descriptors that
 * call the C Function through call.h's path, vectorcall, keeping the GIL unless
 * the descriptor's release_gil is set (reflect.c's header says why).
 */
#include "ffikit_py.h"
#include "call.h"
#include "reflect_internal.h"


#include <ffikit/reflect.h>


static PyTypeObject MethodDescrType, StaticMethodDescrType;

/* The method's Function called through call.h, `self` (when not NULL) lent as argument 0
   in place of args[0]; the GIL kept unless the descriptor's release_gil is set, and no
   tensor exchange (a method's results are ffikit values). */
static inline PyObject *call_method(const ffkpy_MethodDescr *d, PyObject *const *args, Py_ssize_t n,
                                    PyObject *kwnames, ffk_object *self) {
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  const ffkpy_call_spec call = {
      .invoke = ffkpy_call_function,
      .finish = ffkpy_call_value,
      .function = d->method->function,
      .type_index = -1,
      .callee = d->qualname,
      .self = self,
      .release_gil = d->release_gil,
  };
  return ffkpy_call(call, args, n, nkw ? &PyTuple_GET_ITEM(kwnames, 0) : NULL, nkw);
}

/* obj.method(*args) (or Class.method(obj, *args)): the object is argument 0. */
static PyObject *method_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  ffkpy_MethodDescr *d = (ffkpy_MethodDescr *)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 1)
    return PyErr_Format(PyExc_TypeError, "%U() needs a `%s` object as its first argument", d->qualname,
                        ffk_type_key(d->method->owner_index));
  ffk_object *h = ffkpy_instance_handle(args[0], d->method->name, d->method->owner_index);
  if (h == NULL) return NULL;
  if (ffk_method_check_self(d->method, h) != 0) return ffkpy_raise_from_ffk();
  return call_method(d, args, n, kwnames, h);
}

static PyObject *static_method_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  ffkpy_MethodDescr *d = (ffkpy_MethodDescr *)self;
  return call_method(d, args, PyVectorcall_NARGS(nargsf), kwnames, NULL);
}

static PyObject *method_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (obj == NULL || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static PyObject *static_method_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)obj, (void)type;
  return Py_NewRef(self);
}

static void method_descr_dealloc(PyObject *self) {
  ffkpy_MethodDescr *d = (ffkpy_MethodDescr *)self;
  Py_XDECREF(d->name);
  Py_XDECREF(d->qualname);
  Py_XDECREF(d->doc);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *method_descr_repr(PyObject *self) {
  ffkpy_MethodDescr *d = (ffkpy_MethodDescr *)self;
  return PyUnicode_FromFormat("<%smethod `%s` of `%s`>", d->method->is_static ? "static " : "", d->method->name,
                              ffk_type_key(d->type_index));
}

static PyObject *method_get_is_static(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((ffkpy_MethodDescr *)self)->method->is_static);
}
static PyObject *method_get_owner(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(ffk_type_key(((ffkpy_MethodDescr *)self)->method->owner_index));
}
static PyObject *method_get_func(PyObject *self, void *c) {
  (void)c;
  ffk_function *f = ((ffkpy_MethodDescr *)self)->method->function;
  ffk_object_retain((ffk_object *)f);
  return ffkpy_wrap_steal((ffk_object *)f);
}

static PyObject *method_get_release_gil(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((ffkpy_MethodDescr *)self)->release_gil);
}

static int method_set_release_gil(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return ffkpy_set_switch(v, &((ffkpy_MethodDescr *)self)->release_gil, "release_gil");
}

static PyMemberDef method_members[] = {
    {"__doc__", T_OBJECT, offsetof(ffkpy_MethodDescr, doc), READONLY, "The method's doc text (None when it has none)."},
    {"__name__", T_OBJECT, offsetof(ffkpy_MethodDescr, name), READONLY, "The method's name."},
    {"__qualname__", T_OBJECT, offsetof(ffkpy_MethodDescr, qualname), READONLY, "<type key>.<name>."},
    {"name", T_OBJECT, offsetof(ffkpy_MethodDescr, name), READONLY, "The method's name."},
    {NULL},
};

static PyGetSetDef method_getset[] = {
    {"release_gil", method_get_release_gil, method_set_release_gil,
     "Whether calls release the GIL around the C call. Off by default: methods are mostly short, and\n"
     "releasing costs more than they do. Turn it on for a long-running method, or one that waits\n"
     "for other threads that call back into Python.", NULL},
    {"is_static", method_get_is_static, NULL, "Whether it is a static method (no object argument).", NULL},
    {"owner", method_get_owner, NULL, "The type key of the type that declares the method.", NULL},
    {"func", method_get_func, NULL, "The method's Function (an instance method takes the object first).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject MethodDescrType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.core.Method",
    .tp_doc = "An instance method of a reflected type: obj.name(*args) calls its C Function with obj first.",
    .tp_basicsize = sizeof(ffkpy_MethodDescr),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ffkpy_MethodDescr, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = method_descr_dealloc,
    .tp_repr = method_descr_repr,
    .tp_descr_get = method_descr_get,
    .tp_members = method_members,
    .tp_getset = method_getset,
};

static PyTypeObject StaticMethodDescrType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.core.StaticMethod",
    .tp_doc = "A static method of a reflected type: Class.name(*args) calls its C Function.",
    .tp_basicsize = sizeof(ffkpy_MethodDescr),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ffkpy_MethodDescr, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = method_descr_dealloc,
    .tp_repr = method_descr_repr,
    .tp_descr_get = static_method_descr_get,
    .tp_members = method_members,
    .tp_getset = method_getset,
};

PyObject *ffkpy_reflect__method_descr_new(const ffk_method_info *m, int32_t type_index) {
  ffkpy_MethodDescr *d = PyObject_New(ffkpy_MethodDescr, m->is_static ? &StaticMethodDescrType : &MethodDescrType);
  if (d == NULL) return NULL;
  d->vectorcall = m->is_static ? static_method_vectorcall : method_vectorcall;
  d->method = m;
  d->type_index = type_index;
  d->release_gil = 0;
  d->name = PyUnicode_FromString(m->name);
  d->qualname = PyUnicode_FromFormat("%s.%s", ffk_type_key(type_index), m->name);
  d->doc = m->doc != NULL ? PyUnicode_FromString(m->doc) : Py_NewRef(Py_None);
  if (d->name == NULL || d->qualname == NULL || d->doc == NULL) {
    Py_DECREF(d);
    return NULL;
  }
  return (PyObject *)d;
}

/* copy, deepcopy and pickle: ffikit.Object's own methods (structural.c), for every class. */

int ffkpy_reflect__method_types_init(PyObject *module) {
  if (PyType_Ready(&MethodDescrType) < 0 || PyType_Ready(&StaticMethodDescrType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Method", (PyObject *)&MethodDescrType) < 0 ||
      PyModule_AddObjectRef(module, "StaticMethod", (PyObject *)&StaticMethodDescrType) < 0)
    return -1;
  return 0;
}
