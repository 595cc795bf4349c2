/*
 * enum.c - the C face of ffikit.dataclasses' enums (ffikit/_enum.py): thin calls into
 * ffikit/enum.h, whose registry every language shares.
 *
 *   _enum_get(cls, index)             the member of enum class `cls` at an int or str index
 *                                     (Enum.get, a classmethod of this builtin): KeyError(index)
 *                                     for none, OverflowError outside int64, TypeError for
 *                                     another index type
 *   _enum_lookup(cls, index)          the same, None for none (Enum(...)'s fast path)
 *   _enum_state(type_index, create)   the type's ffi.EnumState, or None
 *   _enum_register(type_index, obj)   ffk_enum_register
 *   _enum_add(type_index, name, value or None)   ffk_enum_add: the new member
 *   _enum_members(type_index)         a list of the members, in registration order
 *   _enum_count(type_index)           how many
 *   _enum_attr_get(type_index, attr, member, default)   the column value, or default
 *   _enum_attr_has(type_index, attr, member)            whether the column has the member
 *   _enum_attr_set(type_index, attr, member, value)
 *   _enum_kind(type_index)            FFK_ENUM_* of an enum type, -1 for another
 *   _enum_is_member(obj)              whether obj is an object of an enum type
 */
#include "ffikit_py.h"

#include <ffikit/enum.h>

/* The enum type index of class `cls` (its __ffi_type_index__), or -1 with a TypeError. */
static int32_t class_index(PyObject *cls) {
  if (PyType_Check(cls)) {
    int32_t index = ffkpy_reflect_index((PyTypeObject *)cls);
    if (index >= 0) return index;
  }
  PyErr_Format(PyExc_TypeError, "%R is not bound to an ffikit enum type", cls);
  return -1;
}

static int32_t int_arg(PyObject *o) {
  long v = PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v < 0 || v > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "bad type index %ld", v);
    return -1;
  }
  return (int32_t)v;
}

/* 1 with *out the member at `index`, 0 for none, -1 with a Python exception. */
static int lookup(int32_t type_index, PyObject *index, PyObject **out) {
  *out = NULL;
  ffk_object *m = NULL;
  int rc;
  if (PyUnicode_Check(index)) {
    Py_ssize_t size;
    const char *data = PyUnicode_AsUTF8AndSize(index, &size);
    if (data == NULL) return -1;
    rc = ffk_enum_get_str(type_index, data, (size_t)size, &m);
  } else if (PyLong_Check(index)) { /* bool included, as 0/1 */
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "enum integer index %S is outside int64", index);
      return -1;
    }
    rc = ffk_enum_get_int(type_index, (int64_t)v, &m);
  } else {
    PyErr_Format(PyExc_TypeError, "enum index must be int or str, got %s", Py_TYPE(index)->tp_name);
    return -1;
  }
  if (rc < 0) return ffkpy_raise_from_ffk_int();
  if (rc == 0) return 0;
  *out = ffkpy_wrap_steal(m);
  return *out == NULL ? -1 : 1;
}

static PyObject *enum_get(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "get() takes exactly one argument (%zd given)", nargs - 1);
  int32_t type_index = class_index(args[0]);
  if (type_index < 0) return NULL;
  PyObject *out;
  int rc = lookup(type_index, args[1], &out);
  if (rc < 0) return NULL;
  if (rc == 0) {
    PyObject *index = PyBool_Check(args[1]) ? PyNumber_Long(args[1]) : Py_NewRef(args[1]);
    if (index != NULL) {
      PyErr_SetObject(PyExc_KeyError, index);
      Py_DECREF(index);
    }
    return NULL;
  }
  return out;
}

static PyObject *enum_lookup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_enum_lookup takes 2 arguments");
  int32_t type_index = class_index(args[0]);
  if (type_index < 0) return NULL;
  PyObject *out;
  int rc = lookup(type_index, args[1], &out);
  if (rc < 0) return NULL;
  return rc == 0 ? Py_NewRef(Py_None) : out;
}

static PyObject *enum_state(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_enum_state takes 2 arguments");
  int32_t type_index = int_arg(args[0]);
  int create = PyObject_IsTrue(args[1]);
  if (type_index < 0 || create < 0) return NULL;
  ffk_object *st;
  int rc = ffk_enum_state(type_index, create != 0, &st);
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0) Py_RETURN_NONE;
  return ffkpy_wrap_steal(st);
}

static PyObject *enum_register(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_enum_register takes 2 arguments");
  int32_t type_index = int_arg(args[0]);
  if (type_index < 0) return NULL;
  ffk_object *h = ffkpy_handle(args[1]);
  if (h == NULL) return PyErr_Format(PyExc_TypeError, "_enum_register: expected an ffikit object");
  if (ffk_enum_register(type_index, h) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *enum_add(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_enum_add takes 3 arguments");
  int32_t type_index = int_arg(args[0]);
  if (type_index < 0) return NULL;
  const char *name = PyUnicode_AsUTF8(args[1]);
  if (name == NULL) return NULL;
  int64_t value = 0;
  if (args[2] != Py_None) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(args[2], &overflow);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (overflow) return PyErr_Format(PyExc_OverflowError, "enum integer index %S is outside int64", args[2]);
    value = (int64_t)v;
  }
  ffk_object *m;
  if (ffk_enum_add(type_index, name, args[2] == Py_None ? NULL : &value, &m) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal(m);
}

static PyObject *enum_members(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t type_index = int_arg(arg);
  if (type_index < 0) return NULL;
  ffk_array *a = ffk_enum_members(type_index);
  if (a == NULL) return ffkpy_raise_from_ffk();
  int64_t n = ffk_array_size(a);
  const ffk_any *items = ffk_array_items_borrow(a);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; list != NULL && i < n; ++i) {
    PyObject *x = ffkpy_from_any(&items[i]);
    if (x == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  ffk_object_release((ffk_object *)a);
  return list;
}

static PyObject *enum_count(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t type_index = int_arg(arg);
  if (type_index < 0) return NULL;
  int64_t n = ffk_enum_count(type_index);
  if (n < 0) return ffkpy_raise_from_ffk();
  return PyLong_FromLongLong(n);
}

/* The member handle of args[2] for the attribute functions, or NULL with a TypeError. */
static ffk_object *member_arg(PyObject *o) {
  ffk_object *h = ffkpy_handle(o);
  if (h == NULL) PyErr_Format(PyExc_TypeError, "expected an enum member, got %s", Py_TYPE(o)->tp_name);
  return h;
}

/* ffk_enum_attr_get: 1 (*out new), 0, -1 with a Python exception. */
static int attr_get(PyObject *const *args, PyObject **out) {
  int32_t type_index = int_arg(args[0]);
  if (type_index < 0) return -1;
  const char *attr = PyUnicode_AsUTF8(args[1]);
  if (attr == NULL) return -1;
  ffk_object *h = member_arg(args[2]);
  if (h == NULL) return -1;
  ffk_any v;
  int rc = ffk_enum_attr_get(type_index, attr, h, &v);
  if (rc < 0) return ffkpy_raise_from_ffk_int();
  if (rc == 0) return 0;
  *out = ffkpy_from_any_steal(&v);
  return *out == NULL ? -1 : 1;
}

static PyObject *enum_attr_get(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 4) return PyErr_Format(PyExc_TypeError, "_enum_attr_get takes 4 arguments");
  PyObject *out;
  int rc = attr_get(args, &out);
  if (rc < 0) return NULL;
  return rc == 0 ? Py_NewRef(args[3]) : out;
}

static PyObject *enum_attr_has(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_enum_attr_has takes 3 arguments");
  PyObject *out;
  int rc = attr_get(args, &out);
  if (rc < 0) return NULL;
  if (rc == 1) Py_DECREF(out);
  return PyBool_FromLong(rc);
}

static PyObject *enum_attr_set(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 4) return PyErr_Format(PyExc_TypeError, "_enum_attr_set takes 4 arguments");
  int32_t type_index = int_arg(args[0]);
  if (type_index < 0) return NULL;
  const char *attr = PyUnicode_AsUTF8(args[1]);
  if (attr == NULL) return NULL;
  ffk_object *h = member_arg(args[2]);
  if (h == NULL) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  int rc = ffkpy_to_any(args[3], &v, &temps);
  if (rc == 0 && ffk_enum_attr_set(type_index, attr, h, &v) != 0) rc = ffkpy_raise_from_ffk_int();
  ffkpy_temps_release(&temps);
  if (rc != 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *enum_kind(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t type_index = int_arg(arg);
  if (type_index < 0) return NULL;
  return PyLong_FromLong(ffk_enum_kind_of(type_index));
}

static PyObject *enum_is_member(PyObject *mod, PyObject *arg) {
  (void)mod;
  return PyBool_FromLong(ffk_enum_is_member(ffkpy_handle(arg)));
}

PyMethodDef ffkpy_enum_methods[] = {
    {"_enum_get", (PyCFunction)(void (*)(void))enum_get, METH_FASTCALL,
     "_enum_get(cls, index): the member of enum class cls at an int or str index (KeyError for none)."},
    {"_enum_lookup", (PyCFunction)(void (*)(void))enum_lookup, METH_FASTCALL,
     "_enum_lookup(cls, index): the member of enum class cls at an int or str index, or None."},
    {"_enum_state", (PyCFunction)(void (*)(void))enum_state, METH_FASTCALL,
     "_enum_state(type_index, create): the type's ffi.EnumState registry (ffk_enum_state), or None."},
    {"_enum_register", (PyCFunction)(void (*)(void))enum_register, METH_FASTCALL,
     "_enum_register(type_index, member): registers a member made by the caller (ffk_enum_register)."},
    {"_enum_add", (PyCFunction)(void (*)(void))enum_add, METH_FASTCALL,
     "_enum_add(type_index, name, value): makes and registers a member (ffk_enum_add)."},
    {"_enum_members", enum_members, METH_O, "_enum_members(type_index): the members in registration order."},
    {"_enum_count", enum_count, METH_O, "_enum_count(type_index): the number of members."},
    {"_enum_attr_get", (PyCFunction)(void (*)(void))enum_attr_get, METH_FASTCALL,
     "_enum_attr_get(type_index, attr, member, default): the member's value in column attr, or default."},
    {"_enum_attr_has", (PyCFunction)(void (*)(void))enum_attr_has, METH_FASTCALL,
     "_enum_attr_has(type_index, attr, member): whether column attr has a value for the member."},
    {"_enum_attr_set", (PyCFunction)(void (*)(void))enum_attr_set, METH_FASTCALL,
     "_enum_attr_set(type_index, attr, member, value): sets the member's value in column attr."},
    {"_enum_kind", enum_kind, METH_O, "_enum_kind(type_index): 0 Enum, 1 IntEnum, 2 StrEnum, -1 not an enum."},
    {"_enum_is_member", enum_is_member, METH_O, "_enum_is_member(obj): whether obj is an enum member."},
    {NULL, NULL, 0, NULL},
};
