/*
 * cycles.c - what Python sees of ffikit/weak_ref.h and ffikit/cycles.h: making and
 * upgrading WeakRef objects (the ffikit.WeakRef class is in ffikit/_object.py) and
 * ffikit.debug.find_cycles. Conversions only: the rules are the C functions'.
 */
#include "ffikit_py.h"

/* The C object a Python value stands for (borrowed): a wrapper's handle, or the cached
   object of a String/Bytes/Shape. NULL with a TypeError naming what was given otherwise. */
static ffk_object *target_of(PyObject *o, PyObject **keep) {
  *keep = NULL;
  ffk_object *h = ffkpy_handle(o);
  if (h == NULL && !PyObject_TypeCheck(o, &ffkpy_ObjectType)) {
    PyObject *cached = PyObject_GetAttr(o, ffkpy_g.str_ffikit_object);
    if (cached != NULL) {
      h = ffkpy_handle(cached);
      *keep = cached;
    } else {
      PyErr_Clear();
    }
  }
  if (h == NULL)
    PyErr_Format(PyExc_TypeError,
                 "cannot make a WeakRef to a %.200s: the target must be an ffikit object (an ffikit.Object, "
                 "or a String, Bytes or Shape that keeps one)",
                 Py_TYPE(o)->tp_name);
  return h;
}

/* _weak_ref_new(target) -> ffikit.WeakRef */
static PyObject *weak_ref_new(PyObject *mod, PyObject *arg) {
  (void)mod;
  PyObject *keep;
  ffk_object *target = target_of(arg, &keep);
  if (target == NULL) return NULL;
  ffk_object *w = ffk_weak_ref_new(target);
  Py_XDECREF(keep);
  if (w == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal(w);
}

/* _weak_ref_get(weak) -> the target, or None once it is gone */
static PyObject *weak_ref_get(PyObject *mod, PyObject *arg) {
  (void)mod;
  ffk_object *target;
  int rc = ffk_weak_ref_get(ffkpy_handle(arg), &target);
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0) Py_RETURN_NONE;
  ffk_any v = ffk_any_object_steal(target);
  return ffkpy_from_any_steal(&v);
}

/* _weak_ref_alive(weak) -> bool */
static PyObject *weak_ref_alive(PyObject *mod, PyObject *arg) {
  (void)mod;
  return PyBool_FromLong(ffk_weak_ref_alive(ffkpy_handle(arg)));
}

/* _weak_ref_key(weak) -> int: the target's identity, which WeakRefs compare and hash by */
static PyObject *weak_ref_key(PyObject *mod, PyObject *arg) {
  (void)mod;
  return PyLong_FromVoidPtr((void *)ffk_weak_ref_target_address(ffkpy_handle(arg)));
}

/* _find_cycles(value, max_cycles) -> List of Lists */
static PyObject *find_cycles(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *value;
  long long max_cycles;
  if (!PyArg_ParseTuple(args, "OL:find_cycles", &value, &max_cycles)) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  if (ffkpy_to_any(value, &v, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return NULL;
  }
  ffk_list *found;
  Py_BEGIN_ALLOW_THREADS /* a long walk need not hold up other Python threads */
  found = ffk_debug_find_cycles(&v, (int64_t)max_cycles);
  Py_END_ALLOW_THREADS
  ffkpy_temps_release(&temps);
  if (found == NULL) return ffkpy_raise_from_ffk();
  ffk_any out = ffk_any_object_steal((ffk_object *)found);
  return ffkpy_from_any_steal(&out);
}

PyMethodDef ffkpy_cycles_methods[] = {
    {"_weak_ref_new", weak_ref_new, METH_O, NULL},
    {"_weak_ref_get", weak_ref_get, METH_O, NULL},
    {"_weak_ref_alive", weak_ref_alive, METH_O, NULL},
    {"_weak_ref_key", weak_ref_key, METH_O, NULL},
    {"_find_cycles", find_cycles, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
