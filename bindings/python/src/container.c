/*
 * container.c - what the C types behind ffikit.Array, List, Map and Dict share: handle
 * tests and wrapping, structural equality and hash, deep copy. The bottom of the
 * container files: it calls none of them. The types themselves: sequence.c and
 * mapping.c; element caches: element_cache.c; iterators: views.c; the module set-up of
 * the four types: container_init.c. The invariants are at the top of container.h.
 */
#include "container.h"

int ffkpy_container__is_kind(PyObject *o, int32_t a, int32_t b) {
  ffk_object *h = ffkpy_handle(o);
  return h != NULL && (h->type_index == a || h->type_index == b);
}

int ffkpy_container__is_seq(PyObject *o) {
  return ffkpy_container__is_kind(o, FFK_TYPE_ARRAY, FFK_TYPE_TUPLE) || ffkpy_container__is_kind(o, FFK_TYPE_LIST, -1);
}

/* A wrapper around a new C object of the class of `type` (steals obj, also on failure). */
PyObject *ffkpy_container__wrap(PyTypeObject *type, ffk_object *obj) {
  if (obj == NULL) return ffkpy_raise_from_ffk();
  ffkpy_Object *self = (ffkpy_Object *)type->tp_alloc(type, 0);
  if (self == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  self->obj = obj;
  return (PyObject *)self;
}

/* A new Array snapshot of a sequence wrapper (Array: a new reference to itself). */
ffk_array *ffkpy_container__seq_snapshot(PyObject *o) {
  ffk_object *h = HANDLE(o);
  if (h->type_index == FFK_TYPE_LIST) return ffk_list_to_array((ffk_list *)h);
  ffk_object_retain(h);
  return (ffk_array *)h;
}

/* Checks a positional argument count like the builtins do (TypeError). */
int ffkpy_container__check_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t lo, Py_ssize_t hi) {
  if (nargs >= lo && nargs <= hi) return 1;
  if (lo == hi) PyErr_Format(PyExc_TypeError, "%s expected %zd argument%s, got %zd", name, lo, lo == 1 ? "" : "s", nargs);
  else if (nargs < lo) PyErr_Format(PyExc_TypeError, "%s expected at least %zd argument%s, got %zd", name, lo, lo == 1 ? "" : "s", nargs);
  else PyErr_Format(PyExc_TypeError, "%s expected at most %zd argument%s, got %zd", name, hi, hi == 1 ? "" : "s", nargs);
  return 0;
}

/* ---- Structural equality, hash and deep copy ------------------------------------------ */

int ffkpy_container__equal(const ffk_any *a, const ffk_any *b, int64_t size_hint) {
  int rc;
  if (size_hint >= RELEASE_GIL_MIN) {
    Py_BEGIN_ALLOW_THREADS rc = ffk_structural_equal(a, b);
    Py_END_ALLOW_THREADS
  } else {
    rc = ffk_structural_equal(a, b);
  }
  if (rc < 0) ffkpy_raise_from_ffk();
  return rc;
}

/* The number of elements (entries) of an Array, Tuple, Map or Dict. */
int64_t ffkpy_container__size(ffk_object *h) {
  switch (h->type_index) {
    case FFK_TYPE_MAP: return ffk_map_size((ffk_map *)h);
    case FFK_TYPE_DICT: return ffk_dict_size((ffk_dict *)h);
    default: return ((ffk_array *)h)->size;
  }
}

/* Structural hash; a List hashes as the Array of its elements, since they compare equal. */
Py_hash_t ffkpy_container__hash(PyObject *self) {
  ffk_any v;
  if (HANDLE(self)->type_index == FFK_TYPE_LIST) {
    ffk_array *a = ffkpy_container__seq_snapshot(self);
    if (a == NULL) return ffkpy_raise_from_ffk_int();
    v = ffk_any_object_steal(&a->header);
  } else {
    v = ffk_any_object(HANDLE(self));
  }
  uint64_t h;
  int rc;
  if (ffkpy_container__size(v.v_obj) >= RELEASE_GIL_MIN) {
    Py_BEGIN_ALLOW_THREADS rc = ffk_structural_hash(&v, &h);
    Py_END_ALLOW_THREADS
  } else {
    rc = ffk_structural_hash(&v, &h);
  }
  ffk_any_release(&v);
  if (rc != 0) return ffkpy_raise_from_ffk_int();
  Py_hash_t r = (Py_hash_t)h;
  return r == -1 ? -2 : r;
}

/* Deep copy in C (sharing and cycles kept), GIL released: the memo is not needed. */
PyObject *ffkpy_container__deepcopy(PyObject *self, PyObject *memo) {
  ffk_any v = ffk_any_object(HANDLE(self)), out;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_deep_copy(&v, &out);
  Py_END_ALLOW_THREADS
  ffk_any_release(&v);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&out);
}
