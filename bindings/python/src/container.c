/*
 * container.c - the C types behind ffikit.Array, List, Map and Dict (ffikit/container.py
 * subclasses them and adds the collections.abc mixins and the rarely used methods).
 *
 * The hot operations are type slots here: len, a[i], d[k], get, `in`, iteration,
 * construction from a list or dict, List.append.
 *
 * Invariants:
 *  - Array/Tuple/Map are copy-on-write in C and never changed through a Python handle, so
 *    their element storage is read borrowed (ffk_array_items_borrow, ffk_map_next) while
 *    the wrapper (or an iterator holding it) keeps its reference: the object is then
 *    shared (use count >= 2 once anyone else looks), so nobody changes it in place.
 *  - List/Dict are shared and mutable from any thread: they are read only through their
 *    locked C accessors (new references) and iterated with the C iterators, which report
 *    a change during iteration as RuntimeError.
 *  - Keys and `in` follow the C semantics (ffk_any_equal): 1, True and 1.0 are distinct.
 *    Sequence `in`, index and count compare elements structurally (ffk_structural_equal),
 *    which is ffk_any_equal for everything but containers.
 */
#include "ffikit_py.h"

PyTypeObject ffkpy_ArrayBaseType, ffkpy_ListBaseType, ffkpy_MapBaseType, ffkpy_DictBaseType, ffkpy_IterType;

#define HANDLE(self) (((ffkpy_Object *)(self))->obj)
#define ARR(self) ((ffk_array *)HANDLE(self))
#define LST(self) ((ffk_list *)HANDLE(self))
#define MAP(self) ((ffk_map *)HANDLE(self))
#define DCT(self) ((ffk_dict *)HANDLE(self))

/* Containers this large release the GIL around whole-container C work. */
#define RELEASE_GIL_MIN 4096

static int is_kind(PyObject *o, int32_t a, int32_t b) {
  ffk_object *h = ffkpy_handle(o);
  return h != NULL && (h->type_index == a || h->type_index == b);
}
static int is_seq(PyObject *o) { return is_kind(o, FFK_TYPE_ARRAY, FFK_TYPE_TUPLE) || is_kind(o, FFK_TYPE_LIST, -1); }

/* A wrapper around a new C object of the class of `type` (steals obj, also on failure). */
static PyObject *wrap_as(PyTypeObject *type, ffk_object *obj) {
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
static ffk_array *seq_snapshot(PyObject *o) {
  ffk_object *h = HANDLE(o);
  if (h->type_index == FFK_TYPE_LIST) return ffk_list_to_array((ffk_list *)h);
  ffk_object_retain(h);
  return (ffk_array *)h;
}

/* Python's index of a subscript (anything with __index__), or -1 with a TypeError. */
static int read_index(PyObject *self, PyObject *key, Py_ssize_t *out) {
  if (PyLong_CheckExact(key)) {
    *out = PyLong_AsSsize_t(key);
  } else if (PyIndex_Check(key)) {
    *out = PyNumber_AsSsize_t(key, PyExc_IndexError);
  } else {
    PyErr_Format(PyExc_TypeError, "%s indices must be integers or slices, not %.200s", Py_TYPE(self)->tp_name,
                 Py_TYPE(key)->tp_name);
    return -1;
  }
  return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* A Python list of the elements items[start + k*step], k < n (borrowed storage) of owner. */
static PyObject *list_of(PyObject *owner, const ffk_any *items, Py_ssize_t start, Py_ssize_t step, Py_ssize_t n) {
  PyObject *list = PyList_New(n);
  for (Py_ssize_t k = 0; list != NULL && k < n; ++k) {
    PyObject *x = ffkpy_element(owner, &items[start + k * step]);
    if (x == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, k, x);
  }
  return list;
}

/* Owned Python -> Any for storing; a list/tuple becomes an Array, a dict a Map. */
static int owned(PyObject *o, ffk_any *out) { return ffkpy_to_any(o, out, NULL); }

/* Owned values of every element of an iterable (a PyMem array of *n; NULL with an exception). */
static ffk_any *owned_items(PyObject *iterable, Py_ssize_t *n, const char *what) {
  PyObject *seq = PySequence_Fast(iterable, what);
  if (seq == NULL) return NULL;
  Py_ssize_t size = PySequence_Fast_GET_SIZE(seq);
  ffk_any *items = PyMem_Malloc(sizeof(ffk_any) * (size_t)(size + 1));
  if (items == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (owned(PySequence_Fast_GET_ITEM(seq, i), &items[i]) != 0) {
      while (i-- > 0) ffk_any_release(&items[i]);
      PyMem_Free(items);
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  *n = size;
  return items;
}

static void release_items(ffk_any *items, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) ffk_any_release(&items[i]);
  PyMem_Free(items);
}

/* A new Array of any iterable (an Array/List wrapper: a snapshot, no conversion). */
static ffk_array *array_of(PyObject *iterable, const char *what) {
  if (is_seq(iterable)) {
    ffk_array *a = seq_snapshot(iterable);
    if (a == NULL) ffkpy_raise_from_ffk();
    return a;
  }
  if (PyList_CheckExact(iterable) || PyTuple_CheckExact(iterable)) { /* the converter's own loop */
    ffk_any v;
    if (owned(iterable, &v) != 0) return NULL;
    return (ffk_array *)v.v_obj;
  }
  Py_ssize_t n;
  ffk_any *items = owned_items(iterable, &n, what);
  if (items == NULL) return NULL;
  ffk_array *a = ffk_array_new_steal(items, n);
  PyMem_Free(items);
  if (a == NULL) ffkpy_raise_from_ffk();
  return a;
}

/* Checks a positional argument count like the builtins do (TypeError). */
static int check_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t lo, Py_ssize_t hi) {
  if (nargs >= lo && nargs <= hi) return 1;
  if (lo == hi) PyErr_Format(PyExc_TypeError, "%s expected %zd argument%s, got %zd", name, lo, lo == 1 ? "" : "s", nargs);
  else if (nargs < lo) PyErr_Format(PyExc_TypeError, "%s expected at least %zd argument%s, got %zd", name, lo, lo == 1 ? "" : "s", nargs);
  else PyErr_Format(PyExc_TypeError, "%s expected at most %zd argument%s, got %zd", name, hi, hi == 1 ? "" : "s", nargs);
  return 0;
}

/* A slice bound given to index(): an int (clamped to Py_ssize_t), else TypeError. */
static int slice_bound(PyObject *o, Py_ssize_t *out) {
  if (!PyIndex_Check(o)) {
    PyErr_SetString(PyExc_TypeError, "slice indices must be integers or have an __index__ method");
    return 0;
  }
  *out = PyNumber_AsSsize_t(o, NULL);
  return !(*out == -1 && PyErr_Occurred());
}

/* ---- Structural equality and hash ----------------------------------------------------- */

static int structural_equal_any(const ffk_any *a, const ffk_any *b, int64_t size_hint) {
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
static int64_t top_size(ffk_object *h) {
  switch (h->type_index) {
    case FFK_TYPE_MAP: return ffk_map_size((ffk_map *)h);
    case FFK_TYPE_DICT: return ffk_dict_size((ffk_dict *)h);
    default: return ((ffk_array *)h)->size;
  }
}

/* Structural hash; a List hashes as the Array of its elements, since they compare equal. */
static Py_hash_t structural_hash(PyObject *self) {
  ffk_any v;
  if (HANDLE(self)->type_index == FFK_TYPE_LIST) {
    ffk_array *a = seq_snapshot(self);
    if (a == NULL) return ffkpy_raise_from_ffk_int();
    v = ffk_any_object_steal(&a->header);
  } else {
    v = ffk_any_object(HANDLE(self));
  }
  uint64_t h;
  int rc;
  if (top_size(v.v_obj) >= RELEASE_GIL_MIN) {
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

/* Array/List == any sequence that is not str/bytes/bytearray or a mapping: element-wise. */
static PyObject *seq_richcompare(PyObject *self, PyObject *other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  if (!is_seq(other) && (PyUnicode_Check(other) || PyBytes_Check(other) || PyByteArray_Check(other) ||
                         ffkpy_handle(other) != NULL || PyDict_Check(other) || !PySequence_Check(other)))
    Py_RETURN_NOTIMPLEMENTED;
  ffk_array *a = seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  ffk_array *b = array_of(other, "expected a sequence");
  if (b == NULL) {
    ffk_object_release(&a->header);
    return NULL;
  }
  ffk_any x = ffk_any_object_steal(&a->header), y = ffk_any_object_steal(&b->header);
  int rc = structural_equal_any(&x, &y, a->size);
  ffk_any_release(&x);
  ffk_any_release(&y);
  if (rc < 0) return NULL;
  return PyBool_FromLong(op == Py_EQ ? rc : !rc);
}

/* Map only against Map, Dict only against Dict. */
static PyObject *map_richcompare(PyObject *self, PyObject *other, int op) {
  ffk_object *h = ffkpy_handle(other);
  if ((op != Py_EQ && op != Py_NE) || h == NULL || h->type_index != HANDLE(self)->type_index)
    Py_RETURN_NOTIMPLEMENTED;
  ffk_any x = ffk_any_object(HANDLE(self)), y = ffk_any_object(h);
  int rc = structural_equal_any(&x, &y, top_size(HANDLE(self)));
  ffk_any_release(&x);
  ffk_any_release(&y);
  if (rc < 0) return NULL;
  return PyBool_FromLong(op == Py_EQ ? rc : !rc);
}

/* ---- Iterators -------------------------------------------------------------------------- */

enum { IT_ARRAY, IT_ARRAY_REV, IT_MAP, IT_LIST, IT_DICT };
enum { WHAT_KEYS, WHAT_VALUES, WHAT_ITEMS };

typedef struct {
  PyObject_HEAD
  PyObject *owner; /* the container's wrapper (strong), NULL once exhausted */
  int kind, what;
  int64_t pos;
  union {
    ffk_list_iter l;
    ffk_dict_iter d;
  } it;
} ffkpy_Iter;

static PyObject *iter_new(PyObject *owner, int kind, int what) {
  ffkpy_Iter *it = PyObject_GC_New(ffkpy_Iter, &ffkpy_IterType);
  if (it == NULL) return NULL;
  it->owner = Py_NewRef(owner);
  it->kind = kind;
  it->what = what;
  it->pos = 0;
  if (kind == IT_ARRAY_REV) it->pos = ARR(owner)->size - 1;
  if (kind == IT_LIST) ffk_list_iter_init(&it->it.l, LST(owner));
  if (kind == IT_DICT) ffk_dict_iter_init(&it->it.d, DCT(owner));
  PyObject_GC_Track(it);
  return (PyObject *)it;
}

static void iter_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  Py_CLEAR(((ffkpy_Iter *)self)->owner);
  PyObject_GC_Del(self);
}

static int iter_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((ffkpy_Iter *)self)->owner);
  return 0;
}

static PyObject *pair(PyObject *k, PyObject *v) {
  if (k == NULL || v == NULL) {
    Py_XDECREF(k);
    Py_XDECREF(v);
    return NULL;
  }
  PyObject *t = PyTuple_New(2);
  if (t == NULL) {
    Py_DECREF(k);
    Py_DECREF(v);
    return NULL;
  }
  PyTuple_SET_ITEM(t, 0, k);
  PyTuple_SET_ITEM(t, 1, v);
  return t;
}

static PyObject *iter_next(PyObject *self) {
  ffkpy_Iter *it = (ffkpy_Iter *)self;
  if (it->owner == NULL) return NULL;
  switch (it->kind) {
    case IT_ARRAY: {
      const ffk_array *a = ARR(it->owner);
      if (it->pos < a->size) return ffkpy_element(it->owner, &a->data[it->pos++]);
      break;
    }
    case IT_ARRAY_REV: {
      const ffk_array *a = ARR(it->owner);
      if (it->pos >= 0 && it->pos < a->size) return ffkpy_element(it->owner, &a->data[it->pos--]);
      break;
    }
    case IT_MAP: {
      const ffk_any *k, *v;
      if (ffk_map_next(MAP(it->owner), &it->pos, &k, &v)) {
        if (it->what == WHAT_KEYS) return ffkpy_element(it->owner, k);
        if (it->what == WHAT_VALUES) return ffkpy_element(it->owner, v);
        return pair(ffkpy_element(it->owner, k), ffkpy_element(it->owner, v));
      }
      break;
    }
    case IT_LIST: {
      ffk_any v;
      int rc = ffk_list_iter_next(&it->it.l, &v);
      if (rc > 0) return ffkpy_element_steal(it->owner, &v);
      if (rc < 0) {
        Py_CLEAR(it->owner);
        return ffkpy_raise_from_ffk();
      }
      break;
    }
    default: {
      ffk_any k, v;
      int rc = ffk_dict_iter_next(&it->it.d, it->what == WHAT_VALUES ? NULL : &k, it->what == WHAT_KEYS ? NULL : &v);
      if (rc > 0) {
        if (it->what == WHAT_KEYS) return ffkpy_element_steal(it->owner, &k);
        if (it->what == WHAT_VALUES) return ffkpy_element_steal(it->owner, &v);
        return pair(ffkpy_element_steal(it->owner, &k), ffkpy_element_steal(it->owner, &v));
      }
      if (rc < 0) {
        Py_CLEAR(it->owner);
        return ffkpy_raise_from_ffk();
      }
      break;
    }
  }
  Py_CLEAR(it->owner);
  return NULL;
}

/* __length_hint__ (Array and Map iterators: what is left; the shared ones: the size). */
static PyObject *iter_length_hint(PyObject *self, PyObject *unused) {
  ffkpy_Iter *it = (ffkpy_Iter *)self;
  if (it->owner == NULL) return PyLong_FromLong(0);
  switch (it->kind) {
    case IT_ARRAY: return PyLong_FromLongLong(ARR(it->owner)->size - it->pos);
    case IT_ARRAY_REV: return PyLong_FromLongLong(it->pos + 1);
    case IT_MAP: return PyLong_FromLongLong(ffk_map_size(MAP(it->owner)));
    case IT_LIST: return PyLong_FromLongLong(ffk_list_size(LST(it->owner)));
    default: return PyLong_FromLongLong(ffk_dict_size(DCT(it->owner)));
  }
}

static PyMethodDef iter_methods[] = {
    {"__length_hint__", iter_length_hint, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ffkpy_IterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.Iterator",
    .tp_basicsize = sizeof(ffkpy_Iter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = iter_dealloc,
    .tp_traverse = iter_traverse,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = iter_next,
    .tp_methods = iter_methods,
};

/* ---- Array ----------------------------------------------------------------------------- */

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *iterable = NULL;
  static char *kwlist[] = {"iterable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Array", kwlist, &iterable)) return NULL;
  if (iterable == NULL) return wrap_as(type, (ffk_object *)ffk_array_new(NULL, 0));
  if (is_kind(iterable, FFK_TYPE_ARRAY, -1)) { /* copy-on-write: share it */
    ffk_object_retain(HANDLE(iterable));
    return wrap_as(type, HANDLE(iterable));
  }
  ffk_array *a = array_of(iterable, "Array() expects an iterable");
  return a == NULL ? NULL : wrap_as(type, &a->header);
}

static Py_ssize_t array_len(PyObject *self) { return (Py_ssize_t)ARR(self)->size; }

static PyObject *index_error(PyObject *self, Py_ssize_t i, int64_t size) {
  return PyErr_Format(PyExc_IndexError, "%s index %zd out of range for size %lld",
                      HANDLE(self)->type_index == FFK_TYPE_LIST ? "List" : "Array", i, (long long)size);
}

static PyObject *array_item(PyObject *self, Py_ssize_t i) {
  const ffk_array *a = ARR(self);
  if (i < 0 || i >= a->size) return index_error(self, i, a->size);
  return ffkpy_element(self, &a->data[i]);
}

static PyObject *array_subscript(PyObject *self, PyObject *key) {
  const ffk_array *a = ARR(self);
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t n = PySlice_AdjustIndices((Py_ssize_t)a->size, &start, &stop, step);
    return list_of(self, a->data, start, step, n);
  }
  Py_ssize_t i;
  if (read_index(self, key, &i) != 0) return NULL;
  Py_ssize_t j = i < 0 ? i + (Py_ssize_t)a->size : i;
  if (j < 0 || j >= a->size) return index_error(self, i, a->size);
  return ffkpy_element(self, &a->data[j]);
}

/* The first index in items[0:n) structurally equal to `value`: 1 found, 0 not, -1 error. */
static int find(const ffk_any *items, int64_t n, PyObject *value, int64_t from, int64_t *where, int64_t *count) {
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  if (ffkpy_to_any(value, &v, &temps) != 0) {
    ffkpy_temps_release(&temps);
    PyErr_Clear(); /* a value ffikit cannot hold is in no container */
    if (count) *count = 0;
    return 0;
  }
  int found = 0;
  for (int64_t i = from; i < n; ++i) {
    int rc = ffk_structural_equal(&items[i], &v);
    if (rc < 0) {
      found = -1;
      ffkpy_raise_from_ffk();
      break;
    }
    if (rc) {
      if (count == NULL) {
        *where = i;
        found = 1;
        break;
      }
      ++*count;
    }
  }
  ffkpy_temps_release(&temps);
  return found;
}

static int seq_contains(PyObject *self, PyObject *value) {
  ffk_array *a = seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk_int();
  int64_t where;
  int rc = find(a->data, a->size, value, 0, &where, NULL);
  ffk_object_release(&a->header);
  return rc;
}

/* index(value, start=0, stop=len) -> the first index; ValueError when absent. */
static PyObject *seq_index(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  Py_ssize_t start = 0, stop = PY_SSIZE_T_MAX;
  if (!check_nargs("index", nargs, 1, 3)) return NULL;
  if (nargs > 1 && !slice_bound(args[1], &start)) return NULL;
  if (nargs > 2 && !slice_bound(args[2], &stop)) return NULL;
  ffk_array *a = seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  Py_ssize_t n = (Py_ssize_t)a->size;
  if (start < 0 && (start += n) < 0) start = 0;
  if (stop < 0 && (stop += n) < 0) stop = 0;
  if (stop > n) stop = n;
  int64_t where = -1;
  int rc = start < stop ? find(a->data, stop, args[0], start, &where, NULL) : 0;
  ffk_object_release(&a->header);
  if (rc < 0) return NULL;
  if (rc == 0) return PyErr_Format(PyExc_ValueError, "%R is not in %s", args[0], Py_TYPE(self)->tp_name);
  return PyLong_FromLongLong(where);
}

static PyObject *seq_count(PyObject *self, PyObject *value) {
  ffk_array *a = seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  int64_t count = 0, where;
  int rc = find(a->data, a->size, value, 0, &where, &count);
  ffk_object_release(&a->header);
  return rc < 0 ? NULL : PyLong_FromLongLong(count);
}

/* `self + other` and `other + self`: a new container of self's kind (any iterable). */
static PyObject *seq_add(PyObject *left, PyObject *right) {
  int self_left = is_seq(left);
  PyObject *self = self_left ? left : right, *other = self_left ? right : left;
  if (!is_seq(self)) Py_RETURN_NOTIMPLEMENTED;
  if (!is_seq(other) && (PyUnicode_Check(other) || PyBytes_Check(other) || !PyObject_HasAttrString(other, "__iter__")))
    Py_RETURN_NOTIMPLEMENTED;
  ffk_array *a = seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  ffk_array *b = array_of(other, "can only concatenate an iterable");
  if (b == NULL) {
    ffk_object_release(&a->header);
    return NULL;
  }
  ffk_array *r = self_left ? ffk_array_concat(a, b) : ffk_array_concat(b, a);
  ffk_object_release(&a->header);
  ffk_object_release(&b->header);
  if (r == NULL) return ffkpy_raise_from_ffk();
  if (HANDLE(self)->type_index != FFK_TYPE_LIST) return wrap_as(Py_TYPE(self), &r->header);
  ffk_list *l = ffk_list_from_array(r);
  ffk_object_release(&r->header);
  return wrap_as(Py_TYPE(self), (ffk_object *)l);
}

static PyObject *array_iter(PyObject *self) { return iter_new(self, IT_ARRAY, 0); }

static PyObject *array_reversed(PyObject *self, PyObject *unused) { return iter_new(self, IT_ARRAY_REV, 0); }

/* Deep copy in C (sharing and cycles kept), GIL released: the memo is not needed. */
static PyObject *container_deepcopy(PyObject *self, PyObject *memo) {
  ffk_any v = ffk_any_object(HANDLE(self)), out;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = ffk_deep_copy(&v, &out);
  Py_END_ALLOW_THREADS
  ffk_any_release(&v);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&out);
}

static PyNumberMethods seq_as_number = {.nb_add = seq_add};

static PySequenceMethods array_as_sequence = {
    .sq_length = array_len,
    .sq_item = array_item,
    .sq_contains = seq_contains,
};

static PyMappingMethods array_as_mapping = {.mp_length = array_len, .mp_subscript = array_subscript};

static PyMethodDef array_methods[] = {
    {"index", (PyCFunction)(void (*)(void))seq_index, METH_FASTCALL,
     "index(value, start=0, stop=len) -> int: the first position of an element equal to value (ValueError if none)."},
    {"count", seq_count, METH_O, "count(value) -> int: how many elements equal value."},
    {"__reversed__", array_reversed, METH_NOARGS, NULL},
    {"__deepcopy__", container_deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ffkpy_ArrayBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.ArrayBase",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_SEQUENCE,
    .tp_new = array_new,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_number = &seq_as_number,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &array_as_mapping,
    .tp_hash = structural_hash,
    .tp_richcompare = seq_richcompare,
    .tp_iter = array_iter,
    .tp_methods = array_methods,
};

/* ---- List ------------------------------------------------------------------------------ */

static PyObject *list_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *iterable = NULL;
  static char *kwlist[] = {"iterable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:List", kwlist, &iterable)) return NULL;
  if (iterable == NULL) return wrap_as(type, (ffk_object *)ffk_list_new());
  ffk_array *a = array_of(iterable, "List() expects an iterable");
  if (a == NULL) return NULL;
  ffk_list *l = ffk_list_from_array(a);
  ffk_object_release(&a->header);
  return wrap_as(type, (ffk_object *)l);
}

static Py_ssize_t list_len(PyObject *self) { return (Py_ssize_t)ffk_list_size(LST(self)); }

static PyObject *list_item(PyObject *self, Py_ssize_t i) {
  ffk_any v;
  if (ffk_list_get(LST(self), i, &v) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_element_steal(self, &v);
}

static PyObject *list_subscript(PyObject *self, PyObject *key) {
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    ffk_array *a = ffk_list_slice(LST(self), start, stop, step);
    if (a == NULL) return ffkpy_raise_from_ffk();
    PyObject *r = list_of(self, a->data, 0, 1, (Py_ssize_t)a->size);
    ffk_object_release(&a->header);
    return r;
  }
  Py_ssize_t i;
  if (read_index(self, key, &i) != 0) return NULL;
  return list_item(self, i);
}

/* l[a:b:c] = iterable / del l[a:b:c], with list's rules. */
static int list_ass_slice(PyObject *self, PyObject *key, PyObject *value) {
  ffk_list *l = LST(self);
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return -1;
  if (step == 1 && value != NULL) {
    if (is_seq(value)) /* the C call reads a self-aliased List as it was */
      return ffk_list_set_slice_from(l, start, stop, HANDLE(value)) == 0 ? 0 : ffkpy_raise_from_ffk_int();
    Py_ssize_t n;
    ffk_any *items = owned_items(value, &n, "can only assign an iterable");
    if (items == NULL) return -1;
    int rc = ffk_list_set_slice(l, start, stop, items, n);
    release_items(items, n);
    return rc == 0 ? 0 : ffkpy_raise_from_ffk_int();
  }
  Py_ssize_t size = (Py_ssize_t)ffk_list_size(l);
  Py_ssize_t n = PySlice_AdjustIndices(size, &start, &stop, step);
  if (value == NULL) {
    if (step == 1 || n == 0) return n == 0 ? 0 : (ffk_list_erase(l, start, stop) == 0 ? 0 : ffkpy_raise_from_ffk_int());
    /* highest index first, so the lower ones keep their place */
    Py_ssize_t first = step > 0 ? start + (n - 1) * step : start, delta = step > 0 ? -step : step;
    for (Py_ssize_t k = 0, i = first; k < n; ++k, i += delta)
      if (ffk_list_erase_at(l, i) != 0) return ffkpy_raise_from_ffk_int();
    return 0;
  }
  ffk_array *src = array_of(value, "must assign iterable to extended slice");
  if (src == NULL) return -1;
  if (src->size != n) {
    PyErr_Format(PyExc_ValueError, "attempt to assign sequence of size %lld to extended slice of size %zd",
                 (long long)src->size, n);
    ffk_object_release(&src->header);
    return -1;
  }
  int rc = 0;
  for (Py_ssize_t k = 0; rc == 0 && k < n; ++k) rc = ffk_list_set(l, start + k * step, &src->data[k]);
  ffk_object_release(&src->header);
  return rc == 0 ? 0 : ffkpy_raise_from_ffk_int();
}

static int list_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
  if (PySlice_Check(key)) return list_ass_slice(self, key, value);
  Py_ssize_t i;
  if (read_index(self, key, &i) != 0) return -1;
  if (value == NULL) return ffk_list_erase_at(LST(self), i) == 0 ? 0 : ffkpy_raise_from_ffk_int();
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  int rc = ffkpy_to_any(value, &v, &temps);
  if (rc == 0 && ffk_list_set(LST(self), i, &v) != 0) rc = ffkpy_raise_from_ffk_int();
  ffkpy_temps_release(&temps);
  return rc;
}

static int list_ass_item(PyObject *self, Py_ssize_t i, PyObject *value) {
  PyObject *key = PyLong_FromSsize_t(i);
  if (key == NULL) return -1;
  int rc = list_ass_subscript(self, key, value);
  Py_DECREF(key);
  return rc;
}

static PyObject *list_append(PyObject *self, PyObject *value) {
  ffk_any v;
  if (owned(value, &v) != 0) return NULL;
  if (ffk_list_append_steal(LST(self), &v) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *list_insert(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_nargs("insert", nargs, 2, 2)) return NULL;
  Py_ssize_t i;
  if (read_index(self, args[0], &i) != 0) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  int rc = ffkpy_to_any(args[1], &v, &temps);
  if (rc == 0 && ffk_list_insert(LST(self), i, &v) != 0) rc = ffkpy_raise_from_ffk_int();
  ffkpy_temps_release(&temps);
  if (rc != 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *list_pop(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_nargs("pop", nargs, 0, 1)) return NULL;
  Py_ssize_t i = -1;
  if (nargs == 1 && read_index(self, args[0], &i) != 0) return NULL;
  ffk_any v;
  if (ffk_list_pop(LST(self), i, &v) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_element_steal(self, &v);
}

static PyObject *list_extend(PyObject *self, PyObject *iterable) {
  int rc;
  if (is_seq(iterable)) {
    ffk_list *l = LST(self);
    const ffk_object *src = HANDLE(iterable);
    Py_BEGIN_ALLOW_THREADS rc = ffk_list_extend_from(l, src);
    Py_END_ALLOW_THREADS
  } else {
    Py_ssize_t n;
    ffk_any *items = owned_items(iterable, &n, "List.extend() expects an iterable");
    if (items == NULL) return NULL;
    rc = ffk_list_extend(LST(self), items, n);
    release_items(items, n);
  }
  if (rc != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *list_iadd(PyObject *self, PyObject *other) {
  PyObject *r = list_extend(self, other);
  if (r == NULL) return NULL;
  Py_DECREF(r);
  return Py_NewRef(self);
}

static PyObject *list_clear(PyObject *self, PyObject *unused) {
  if (ffk_list_clear(LST(self)) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *list_reverse(PyObject *self, PyObject *unused) {
  if (ffk_list_reverse(LST(self)) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *list_iter(PyObject *self) { return iter_new(self, IT_LIST, 0); }

/* A snapshot Array of the List (for pickling, reversed, repr helpers in Python). */
static PyObject *list_snapshot(PyObject *self, PyObject *unused) {
  return ffkpy_wrap_steal((ffk_object *)ffk_list_to_array(LST(self)));
}

static PyObject *list_copy(PyObject *self, PyObject *unused) {
  ffk_array *a = ffk_list_to_array(LST(self));
  if (a == NULL) return ffkpy_raise_from_ffk();
  ffk_list *l = ffk_list_from_array(a);
  ffk_object_release(&a->header);
  return wrap_as(Py_TYPE(self), (ffk_object *)l);
}

static PyNumberMethods list_as_number = {.nb_add = seq_add, .nb_inplace_add = list_iadd};

static PySequenceMethods list_as_sequence = {
    .sq_length = list_len,
    .sq_item = list_item,
    .sq_ass_item = list_ass_item,
    .sq_contains = seq_contains,
};

static PyMappingMethods list_as_mapping = {
    .mp_length = list_len,
    .mp_subscript = list_subscript,
    .mp_ass_subscript = list_ass_subscript,
};

static PyMethodDef list_methods[] = {
    {"append", list_append, METH_O, "append(value): adds value at the end."},
    {"insert", (PyCFunction)(void (*)(void))list_insert, METH_FASTCALL,
     "insert(index, value): inserts before index, clamped to [0, len] like list.insert."},
    {"pop", (PyCFunction)(void (*)(void))list_pop, METH_FASTCALL,
     "pop(index=-1) -> value: removes and returns an element (IndexError when empty or out of range)."},
    {"extend", list_extend, METH_O, "extend(iterable): appends every element (all or nothing)."},
    {"clear", list_clear, METH_NOARGS, "clear(): removes every element."},
    {"reverse", list_reverse, METH_NOARGS, "reverse(): reverses the elements in place."},
    {"index", (PyCFunction)(void (*)(void))seq_index, METH_FASTCALL,
     "index(value, start=0, stop=len) -> int: the first position of an element equal to value (ValueError if none)."},
    {"count", seq_count, METH_O, "count(value) -> int: how many elements equal value."},
    {"copy", list_copy, METH_NOARGS, "copy() -> List: a new List with the same elements (shallow)."},
    {"__copy__", list_copy, METH_NOARGS, NULL},
    {"__deepcopy__", container_deepcopy, METH_O, NULL},
    {"_snapshot", list_snapshot, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ffkpy_ListBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.ListBase",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_SEQUENCE,
    .tp_new = list_new,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_number = &list_as_number,
    .tp_as_sequence = &list_as_sequence,
    .tp_as_mapping = &list_as_mapping,
    .tp_hash = structural_hash,
    .tp_richcompare = seq_richcompare,
    .tp_iter = list_iter,
    .tp_methods = list_methods,
};

/* ---- Map and Dict ---------------------------------------------------------------------- */

/* A new Map of `mapping`: a dict converts directly, a Map is shared, a Dict snapshotted,
 * anything else is read through .items() (AttributeError when it has none). */
static ffk_map *map_of(PyObject *mapping) {
  ffk_object *h = ffkpy_handle(mapping);
  if (h != NULL && h->type_index == FFK_TYPE_MAP) {
    ffk_object_retain(h);
    return (ffk_map *)h;
  }
  if (h != NULL && h->type_index == FFK_TYPE_DICT) {
    ffk_map *m = ffk_dict_to_map((ffk_dict *)h);
    if (m == NULL) ffkpy_raise_from_ffk();
    return m;
  }
  if (PyDict_CheckExact(mapping)) {
    ffk_any v;
    return owned(mapping, &v) == 0 ? (ffk_map *)v.v_obj : NULL;
  }
  PyObject *items = PyObject_CallMethod(mapping, "items", NULL);
  if (items == NULL) return NULL;
  PyObject *seq = PySequence_Fast(items, "items() must return an iterable of (key, value) pairs");
  Py_DECREF(items);
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), done = 0;
  ffk_any *kv = PyMem_Malloc(sizeof(ffk_any) * (size_t)(2 * n + 1));
  ffk_map *m = NULL;
  if (kv == NULL) PyErr_NoMemory();
  for (; kv != NULL && done < n; ++done) {
    PyObject *p = PySequence_Fast_GET_ITEM(seq, done);
    if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 2) {
      PyErr_Format(PyExc_ValueError, "items() must give (key, value) pairs, got %.200s", Py_TYPE(p)->tp_name);
      break;
    }
    if (owned(PyTuple_GET_ITEM(p, 0), &kv[done]) != 0) break;
    if (owned(PyTuple_GET_ITEM(p, 1), &kv[n + done]) != 0) {
      ffk_any_release(&kv[done]);
      break;
    }
  }
  if (kv != NULL && done == n && (m = ffk_map_from_pairs(kv, kv + n, n)) == NULL) ffkpy_raise_from_ffk();
  for (Py_ssize_t i = 0; i < done; ++i) {
    ffk_any_release(&kv[i]);
    ffk_any_release(&kv[n + i]);
  }
  PyMem_Free(kv);
  Py_DECREF(seq);
  return m;
}

static PyObject *map_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *mapping = NULL;
  static char *kwlist[] = {"mapping", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Map", kwlist, &mapping)) return NULL;
  if (mapping == NULL || mapping == Py_None) return wrap_as(type, (ffk_object *)ffk_map_new());
  ffk_map *m = map_of(mapping);
  return m == NULL ? NULL : wrap_as(type, (ffk_object *)m);
}

static PyObject *dict_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *mapping = NULL;
  static char *kwlist[] = {"mapping", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Dict", kwlist, &mapping)) return NULL;
  if (mapping == NULL || mapping == Py_None) return wrap_as(type, (ffk_object *)ffk_dict_new());
  ffk_map *m = map_of(mapping);
  if (m == NULL) return NULL;
  ffk_dict *d = ffk_dict_from_map(m);
  ffk_object_release((ffk_object *)m);
  return wrap_as(type, (ffk_object *)d);
}

static Py_ssize_t map_len(PyObject *self) {
  ffk_object *h = HANDLE(self);
  return (Py_ssize_t)(h->type_index == FFK_TYPE_MAP ? ffk_map_size((ffk_map *)h) : ffk_dict_size((ffk_dict *)h));
}

/* Looks `key` up: 1 with a new reference in *out, 0 missing, -1 with an exception. */
static int lookup(PyObject *self, PyObject *key, PyObject **out) {
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k, v;
  if (ffkpy_to_any(key, &k, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return -1;
  }
  ffk_object *h = HANDLE(self);
  int rc = h->type_index == FFK_TYPE_MAP ? ffk_map_get((ffk_map *)h, &k, &v) : ffk_dict_get((ffk_dict *)h, &k, &v);
  ffkpy_temps_release(&temps);
  if (rc < 0) return ffkpy_raise_from_ffk_int();
  if (rc == 0) return 0;
  *out = ffkpy_element_steal(self, &v);
  return *out == NULL ? -1 : 1;
}

static PyObject *map_subscript(PyObject *self, PyObject *key) {
  PyObject *r = NULL;
  int rc = lookup(self, key, &r);
  if (rc == 0) PyErr_SetObject(PyExc_KeyError, key);
  return r;
}

static PyObject *map_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_nargs("get", nargs, 1, 2)) return NULL;
  PyObject *r = NULL;
  int rc = lookup(self, args[0], &r);
  if (rc == 0) return Py_NewRef(nargs > 1 ? args[1] : Py_None);
  return r;
}

static int map_contains(PyObject *self, PyObject *key) {
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k;
  if (ffkpy_to_any(key, &k, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return -1;
  }
  ffk_object *h = HANDLE(self);
  int rc = h->type_index == FFK_TYPE_MAP ? ffk_map_contains((ffk_map *)h, &k) : ffk_dict_contains((ffk_dict *)h, &k);
  ffkpy_temps_release(&temps);
  return rc;
}

static PyObject *map_iter_what(PyObject *self, int what) {
  return iter_new(self, HANDLE(self)->type_index == FFK_TYPE_MAP ? IT_MAP : IT_DICT, what);
}
static PyObject *map_iter(PyObject *self) { return map_iter_what(self, WHAT_KEYS); }
static PyObject *map_iter_keys(PyObject *self, PyObject *unused) { return map_iter_what(self, WHAT_KEYS); }
static PyObject *map_iter_values(PyObject *self, PyObject *unused) { return map_iter_what(self, WHAT_VALUES); }
static PyObject *map_iter_items(PyObject *self, PyObject *unused) { return map_iter_what(self, WHAT_ITEMS); }

/* A snapshot Map (a Map: itself). */
static PyObject *map_snapshot(PyObject *self, PyObject *unused) {
  ffk_map *m = map_of(self);
  return m == NULL ? NULL : ffkpy_wrap_steal((ffk_object *)m);
}

/* A snapshot of the keys (0), values (1) or items (2) as a Python list, in order. */
static PyObject *map_list(PyObject *self, PyObject *which_o) {
  long which = PyLong_AsLong(which_o);
  if (which == -1 && PyErr_Occurred()) return NULL;
  ffk_map *m = map_of(self);
  if (m == NULL) return NULL;
  PyObject *list = PyList_New(0);
  int64_t pos = 0;
  const ffk_any *k, *v;
  while (list != NULL && ffk_map_next(m, &pos, &k, &v)) {
    PyObject *x = which == 0   ? ffkpy_element(self, k)
                  : which == 1 ? ffkpy_element(self, v)
                               : pair(ffkpy_element(self, k), ffkpy_element(self, v));
    if (x == NULL || PyList_Append(list, x) != 0) Py_CLEAR(list);
    Py_XDECREF(x);
  }
  ffk_object_release((ffk_object *)m);
  return list;
}

static PyMethodDef map_methods[] = {
    {"get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL,
     "get(key, default=None): the value for key, or default when missing."},
    {"_iter_keys", map_iter_keys, METH_NOARGS, NULL},
    {"_iter_values", map_iter_values, METH_NOARGS, NULL},
    {"_iter_items", map_iter_items, METH_NOARGS, NULL},
    {"_snapshot", map_snapshot, METH_NOARGS, NULL},
    {"_list", map_list, METH_O, NULL},
    {"__deepcopy__", container_deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods map_as_sequence = {.sq_contains = map_contains};
static PyMappingMethods map_as_mapping = {.mp_length = map_len, .mp_subscript = map_subscript};

PyTypeObject ffkpy_MapBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.MapBase",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MAPPING,
    .tp_new = map_new,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &map_as_mapping,
    .tp_hash = structural_hash,
    .tp_richcompare = map_richcompare,
    .tp_iter = map_iter,
    .tp_methods = map_methods,
};

/* d[k] = v / del d[k] */
static int dict_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k, v = ffk_any_none();
  int rc = ffkpy_to_any(key, &k, &temps);
  if (rc == 0 && value != NULL) rc = ffkpy_to_any(value, &v, &temps);
  if (rc == 0) {
    if (value != NULL) {
      if (ffk_dict_set(DCT(self), &k, &v) != 0) rc = ffkpy_raise_from_ffk_int();
    } else {
      int erased = ffk_dict_erase(DCT(self), &k);
      if (erased < 0) rc = ffkpy_raise_from_ffk_int();
      else if (erased == 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        rc = -1;
      }
    }
  }
  ffkpy_temps_release(&temps);
  return rc;
}

/* pop(key[, default]) */
static PyObject *dict_pop(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_nargs("pop", nargs, 1, 2)) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k, v;
  PyObject *r = NULL;
  if (ffkpy_to_any(args[0], &k, &temps) == 0) {
    ffk_any none = ffk_any_none();
    int rc = ffk_dict_pop_default(DCT(self), &k, &none, &v);
    if (rc < 0) ffkpy_raise_from_ffk();
    else if (rc == 1) r = ffkpy_element_steal(self, &v);
    else if (nargs > 1) r = Py_NewRef(args[1]);
    else PyErr_SetObject(PyExc_KeyError, args[0]);
  }
  ffkpy_temps_release(&temps);
  return r;
}

/* setdefault(key, default=None) */
static PyObject *dict_setdefault(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_nargs("setdefault", nargs, 1, 2)) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k, dflt = ffk_any_none(), out;
  PyObject *r = NULL;
  if (ffkpy_to_any(args[0], &k, &temps) == 0 && (nargs < 2 || ffkpy_to_any(args[1], &dflt, &temps) == 0)) {
    if (ffk_dict_setdefault(DCT(self), &k, &dflt, &out) < 0) ffkpy_raise_from_ffk();
    else r = ffkpy_element_steal(self, &out);
  }
  ffkpy_temps_release(&temps);
  return r;
}

static PyObject *dict_clear(PyObject *self, PyObject *unused) {
  if (ffk_dict_clear(DCT(self)) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

/* _update(mapping): every entry of a Map/Dict/mapping, all or nothing (one C operation). */
static PyObject *dict_update_from(PyObject *self, PyObject *mapping) {
  ffk_object *h = ffkpy_handle(mapping);
  ffk_map *m = NULL;
  if (h == NULL || (h->type_index != FFK_TYPE_MAP && h->type_index != FFK_TYPE_DICT)) {
    if ((m = map_of(mapping)) == NULL) return NULL;
    h = (ffk_object *)m;
  }
  int rc;
  ffk_dict *d = DCT(self);
  Py_BEGIN_ALLOW_THREADS rc = ffk_dict_update(d, h);
  Py_END_ALLOW_THREADS
  if (m != NULL) ffk_object_release((ffk_object *)m);
  if (rc != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *dict_copy(PyObject *self, PyObject *unused) {
  ffk_map *m = ffk_dict_to_map(DCT(self));
  if (m == NULL) return ffkpy_raise_from_ffk();
  ffk_dict *d = ffk_dict_from_map(m);
  ffk_object_release((ffk_object *)m);
  return wrap_as(Py_TYPE(self), (ffk_object *)d);
}

static PyMethodDef dict_methods[] = {
    {"pop", (PyCFunction)(void (*)(void))dict_pop, METH_FASTCALL,
     "pop(key[, default]) -> value: removes key and returns its value (KeyError when missing and no default)."},
    {"setdefault", (PyCFunction)(void (*)(void))dict_setdefault, METH_FASTCALL,
     "setdefault(key, default=None) -> value: the value for key, first setting it to default when missing."},
    {"clear", dict_clear, METH_NOARGS, "clear(): removes every entry."},
    {"copy", dict_copy, METH_NOARGS, "copy() -> Dict: a new Dict with the same entries (shallow)."},
    {"__copy__", dict_copy, METH_NOARGS, NULL},
    {"_update", dict_update_from, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods dict_as_mapping = {
    .mp_length = map_len,
    .mp_subscript = map_subscript,
    .mp_ass_subscript = dict_ass_subscript,
};

PyTypeObject ffkpy_DictBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.DictBase",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MAPPING,
    .tp_new = dict_new,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &dict_as_mapping,
    .tp_hash = structural_hash,
    .tp_richcompare = map_richcompare,
    .tp_iter = map_iter,
    .tp_methods = dict_methods,
};

/* ---- Module functions and set-up ------------------------------------------------------- */

PyMethodDef ffkpy_container_methods[] = {
    {NULL, NULL, 0, NULL},
};

int ffkpy_container_types_init(PyObject *module) {
  PyTypeObject *types[] = {&ffkpy_ArrayBaseType, &ffkpy_ListBaseType, &ffkpy_MapBaseType, &ffkpy_DictBaseType};
  const char *names[] = {"ArrayBase", "ListBase", "MapBase", "DictBase"};
  if (PyType_Ready(&ffkpy_IterType) < 0) return -1;
  ffkpy_DictBaseType.tp_base = &ffkpy_MapBaseType;
  for (int i = 0; i < 4; ++i) {
    if (types[i]->tp_base == NULL) types[i]->tp_base = &ffkpy_ObjectType;
    if (PyType_Ready(types[i]) < 0 || PyModule_AddObjectRef(module, names[i], (PyObject *)types[i]) < 0) return -1;
  }
  return 0;
}
