/*
 * sequence.c - ffikit.Array and ffikit.List: the C types ArrayBase and ListBase.
 *
 * The hot operations are type slots: len, a[i], slices, `in`, iteration, construction
 * from a list or any iterable, List.append. Every List mutation is one C call, atomic in
 * C: slice writes pass Python's bounds to ffk_list_erase_slice / ffk_list_set_slice_step,
 * which normalise them and apply list's rules; extend converts every element first, so it
 * is all or nothing. See container.h for the invariants.
 *
 * Reads as fast as tuple's and list's (issue 27): an element read hands out the Python
 * object of an earlier read of that element when it is still right (the Array and List
 * element caches, container.h); `in` and index() are one C call (ffk_array_find,
 * ffk_list_find: ints and strs in one scan, a List's under its lock); building from a
 * list or tuple reads exact ints and floats in one loop and moves the values into the C
 * object once.
 */
#include "container.h"
#include "element_cache.h"
#include "views.h"

PyTypeObject ffkpy_ArrayBaseType, ffkpy_ListBaseType;

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

/* A Python list of the elements items[start + k*step], k < n (borrowed storage). */
static PyObject *list_of(PyObject *owner, const ffk_any *items, Py_ssize_t start, Py_ssize_t step, Py_ssize_t n) {
  PyObject *list = PyList_New(n);
  for (Py_ssize_t k = 0; list != NULL && k < n; ++k) {
    PyObject *x = ffkpy_element(owner, &items[start + k * step]);
    if (x == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, k, x);
  }
  return list;
}

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
  if (ffkpy_to_any_items(seq, size, items) != 0) {
    PyMem_Free(items);
    Py_DECREF(seq);
    return NULL;
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
  if (ffkpy_container__is_seq(iterable)) {
    ffk_array *a = ffkpy_container__seq_snapshot(iterable);
    if (a == NULL) ffkpy_raise_from_ffk();
    return a;
  }
  if (PyList_CheckExact(iterable) || PyTuple_CheckExact(iterable)) { /* the converter's own loop */
    ffk_any v;
    if (ffkpy_container__owned(iterable, &v) != 0) return NULL;
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

/* A slice bound given to index(): an int (clamped to Py_ssize_t), else TypeError. */
static int slice_bound(PyObject *o, Py_ssize_t *out) {
  if (!PyIndex_Check(o)) {
    PyErr_SetString(PyExc_TypeError, "slice indices must be integers or have an __index__ method");
    return 0;
  }
  *out = PyNumber_AsSsize_t(o, NULL);
  return !(*out == -1 && PyErr_Occurred());
}

/* Array/List == any sequence that is not str/bytes/bytearray or a mapping: element-wise. */
static PyObject *seq_richcompare(PyObject *self, PyObject *other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  if (!ffkpy_container__is_seq(other) && (PyUnicode_Check(other) || PyBytes_Check(other) || PyByteArray_Check(other) ||
                         ffkpy_handle(other) != NULL || PyDict_Check(other) || !PySequence_Check(other)))
    Py_RETURN_NOTIMPLEMENTED;
  ffk_array *a = ffkpy_container__seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  ffk_array *b = array_of(other, "expected a sequence");
  if (b == NULL) {
    ffk_object_release(&a->header);
    return NULL;
  }
  ffk_any x = ffk_any_object_steal(&a->header), y = ffk_any_object_steal(&b->header);
  int rc = ffkpy_container__equal(&x, &y, a->size);
  ffk_any_release(&x);
  ffk_any_release(&y);
  if (rc < 0) return NULL;
  return PyBool_FromLong(op == Py_EQ ? rc : !rc);
}

/* ---- Array ----------------------------------------------------------------------------- */

static void array_dealloc(PyObject *self) {
  ffkpy_Array *w = (ffkpy_Array *)self;
  PyObject_GC_UnTrack(self);
  PyObject **cache = w->cache;
  Py_ssize_t n = w->cache_size;
  w->cache = NULL;
  w->cache_size = 0;
  if (cache != NULL) {
    for (Py_ssize_t i = 0; i < n; ++i) Py_XDECREF(cache[i]);
    PyMem_Free(cache);
  }
  ffkpy_ObjectType.tp_dealloc(self);
}

static int array_traverse(PyObject *self, visitproc visit, void *arg) {
  ffkpy_Array *w = (ffkpy_Array *)self;
  PyObject **cache = w->cache;
  for (Py_ssize_t i = 0; cache != NULL && i < w->cache_size; ++i) Py_VISIT(cache[i]);
  return ffkpy_object_traverse(self, visit, arg);
}

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *iterable = NULL;
  static char *kwlist[] = {"iterable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Array", kwlist, &iterable)) return NULL;
  if (iterable == NULL) return ffkpy_container__wrap(type, (ffk_object *)ffk_array_new(NULL, 0));
  if (ffkpy_container__is_kind(iterable, FFK_TYPE_ARRAY, -1)) { /* copy-on-write: share it */
    ffk_object_retain(HANDLE(iterable));
    return ffkpy_container__wrap(type, HANDLE(iterable));
  }
  ffk_array *a = array_of(iterable, "Array() expects an iterable");
  return a == NULL ? NULL : ffkpy_container__wrap(type, &a->header);
}

static Py_ssize_t array_len(PyObject *self) { return (Py_ssize_t)ARR(self)->size; }

/* sq_item: CPython has already added the size to a negative index, so a negative one
 * left is out of range (normalising it again would wrap it in); C words the error. */
static PyObject *array_item(PyObject *self, Py_ssize_t i) {
  const ffk_array *a = ARR(self);
  if (i < 0 || i >= a->size) {
    ffk_array_index_error(a, i);
    return ffkpy_raise_from_ffk();
  }
  return ffkpy_array__item(self, i);
}

static PyObject *array_subscript(PyObject *self, PyObject *key) {
  const ffk_array *a = ARR(self);
  Py_ssize_t k;
  int64_t j;
  if (ffkpy_container__small_index(key, &k)) { /* a[i]: the common case first */
    if (ffk_array_check_index(a, k, &j) != 0) return ffkpy_raise_from_ffk();
    return ffkpy_array__item(self, (Py_ssize_t)j);
  }
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t n = PySlice_AdjustIndices((Py_ssize_t)a->size, &start, &stop, step);
    return list_of(self, a->data, start, step, n);
  }
  Py_ssize_t i;
  if (read_index(self, key, &i) != 0) return NULL;
  if (ffk_array_check_index(a, i, &j) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_array__item(self, (Py_ssize_t)j);
}

/* `value` as a probe in *v, its temporaries in *temps (the caller releases them): 1, or 0
 * with temps released and no exception when ffikit cannot hold it (it is then in no
 * container). */
static int probe_value(PyObject *value, ffk_any *v, ffkpy_temps *temps) {
  ffkpy_temps_init(temps);
  if (ffkpy_to_any(value, v, temps) == 0) return 1;
  ffkpy_temps_release(temps);
  PyErr_Clear();
  return 0;
}

/* How many of items[0:n) are structurally equal to `value` in *count: 0, or -1 with an exception. */
static int count_equal(const ffk_any *items, int64_t n, PyObject *value, int64_t *count) {
  ffkpy_temps temps;
  ffk_any v;
  *count = 0;
  if (!probe_value(value, &v, &temps)) return 0;
  int rc = 0;
  for (int64_t i = 0; i < n; ++i) {
    int eq = ffk_structural_equal(&items[i], &v);
    if (eq < 0) {
      rc = -1;
      ffkpy_raise_from_ffk();
      break;
    }
    *count += eq;
  }
  ffkpy_temps_release(&temps);
  return rc;
}

/*
 * Where `value` first is in self[start:stop] (Python's bounds, which C clamps): 1 with
 * *where, 0 when absent, -1 with an exception. C decides (ffk_array_find, ffk_list_find:
 * ints and strs in one scan, a List's under its lock with no snapshot).
 */
static int seq_find(PyObject *self, PyObject *value, Py_ssize_t start, Py_ssize_t stop, int64_t *where) {
  ffkpy_temps temps;
  ffk_any v;
  if (!probe_value(value, &v, &temps)) return 0;
  ffk_object *h = HANDLE(self);
  int rc = h->type_index == FFK_TYPE_LIST ? ffk_list_find((ffk_list *)h, &v, start, stop, where)
                                          : ffk_array_find((ffk_array *)h, &v, start, stop, where);
  if (rc < 0) ffkpy_raise_from_ffk();
  ffkpy_temps_release(&temps);
  return rc;
}

static int seq_contains(PyObject *self, PyObject *value) {
  int64_t where;
  return seq_find(self, value, 0, PY_SSIZE_T_MAX, &where);
}

/* index(value, start=0, stop=len) -> the first index; ValueError when absent. */
static PyObject *seq_index(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  Py_ssize_t start = 0, stop = PY_SSIZE_T_MAX;
  if (!ffkpy_container__check_nargs("index", nargs, 1, 3)) return NULL;
  if (nargs > 1 && !slice_bound(args[1], &start)) return NULL;
  if (nargs > 2 && !slice_bound(args[2], &stop)) return NULL;
  int64_t where = -1;
  int rc = seq_find(self, args[0], start, stop, &where);
  if (rc < 0) return NULL;
  if (rc == 0) return PyErr_Format(PyExc_ValueError, "%R is not in %s", args[0], Py_TYPE(self)->tp_name);
  return PyLong_FromLongLong(where);
}

static PyObject *seq_count(PyObject *self, PyObject *value) {
  ffk_array *a = ffkpy_container__seq_snapshot(self);
  if (a == NULL) return ffkpy_raise_from_ffk();
  int64_t count = 0;
  int rc = count_equal(a->data, a->size, value, &count);
  ffk_object_release(&a->header);
  return rc < 0 ? NULL : PyLong_FromLongLong(count);
}

/* `self + other` and `other + self`: a new container of self's kind (any iterable). */
static PyObject *seq_add(PyObject *left, PyObject *right) {
  int self_left = ffkpy_container__is_seq(left);
  PyObject *self = self_left ? left : right, *other = self_left ? right : left;
  if (!ffkpy_container__is_seq(self)) Py_RETURN_NOTIMPLEMENTED;
  if (!ffkpy_container__is_seq(other) &&
      (PyUnicode_Check(other) || PyBytes_Check(other) || !PyObject_HasAttrString(other, "__iter__")))
    Py_RETURN_NOTIMPLEMENTED;
  ffk_array *a = ffkpy_container__seq_snapshot(self);
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
  if (HANDLE(self)->type_index != FFK_TYPE_LIST) return ffkpy_container__wrap(Py_TYPE(self), &r->header);
  ffk_list *l = ffk_list_from_array(r);
  ffk_object_release(&r->header);
  return ffkpy_container__wrap(Py_TYPE(self), (ffk_object *)l);
}

static PyObject *array_iter(PyObject *self) { return ffkpy_iter__new(self, FFKPY_IT_ARRAY, FFK_MAP_KEYS); }

static PyObject *array_reversed(PyObject *self, PyObject *unused) {
  return ffkpy_iter__new(self, FFKPY_IT_ARRAY_REV, FFK_MAP_KEYS);
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
    {"__deepcopy__", ffkpy_container__deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ffkpy_ArrayBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.ArrayBase",
    .tp_basicsize = sizeof(ffkpy_Array),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_SEQUENCE,
    .tp_new = array_new,
    .tp_dealloc = array_dealloc,
    .tp_traverse = array_traverse,
    .tp_as_number = &seq_as_number,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &array_as_mapping,
    .tp_hash = ffkpy_container__hash,
    .tp_richcompare = seq_richcompare,
    .tp_iter = array_iter,
    .tp_methods = array_methods,
};

/* ---- List ------------------------------------------------------------------------------ */

static PyObject *list_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *iterable = NULL;
  static char *kwlist[] = {"iterable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:List", kwlist, &iterable)) return NULL;
  if (iterable == NULL) return ffkpy_container__wrap(type, (ffk_object *)ffk_list_new());
  if (PyList_CheckExact(iterable) || PyTuple_CheckExact(iterable)) { /* converted once, moved in */
    Py_ssize_t n;
    ffk_any *items = owned_items(iterable, &n, "List() expects an iterable");
    if (items == NULL) return NULL;
    ffk_list *l = ffk_list_from_items_steal(items, n);
    PyMem_Free(items);
    return ffkpy_container__wrap(type, (ffk_object *)l);
  }
  ffk_array *a = array_of(iterable, "List() expects an iterable");
  if (a == NULL) return NULL;
  ffk_list *l = ffk_list_from_array(a);
  ffk_object_release(&a->header);
  return ffkpy_container__wrap(type, (ffk_object *)l);
}

static Py_ssize_t list_len(PyObject *self) { return (Py_ssize_t)ffk_list_size(LST(self)); }

/* l[i] when the cache has no current object for i: a locked C read (which also checks i). */
static FFK_NOINLINE PyObject *list_item_read(PyObject *self, Py_ssize_t i) {
  ffk_any v;
  uint64_t stamp;
  if (ffk_list_get_stamped(LST(self), i, &v, &stamp) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_list__element_steal(self, i, &v, stamp);
}

static PyObject *list_item(PyObject *self, Py_ssize_t i) {
  PyObject *hit = ffkpy_list__cached(self, i, UINT64_MAX);
  if (hit != NULL) return Py_NewRef(hit);
  return list_item_read(self, i);
}

static void list_dealloc(PyObject *self) {
  ffkpy_List *w = (ffkpy_List *)self;
  PyObject_GC_UnTrack(self);
  ffkpy_ListSlot *cache = w->cache;
  Py_ssize_t n = w->cache_size;
  w->cache = NULL;
  w->cache_size = 0;
  if (cache != NULL) {
    for (Py_ssize_t i = 0; i < n; ++i) Py_XDECREF(cache[i].obj);
    PyMem_Free(cache);
  }
  ffkpy_ObjectType.tp_dealloc(self);
}

static int list_traverse(PyObject *self, visitproc visit, void *arg) {
  ffkpy_List *w = (ffkpy_List *)self;
  for (Py_ssize_t i = 0; w->cache != NULL && i < w->cache_size; ++i) Py_VISIT(w->cache[i].obj);
  return ffkpy_object_traverse(self, visit, arg);
}

/* l[key] for everything but a cached l[i]: slices, large and non-int indices, misses. */
static FFK_NOINLINE PyObject *list_subscript_slow(PyObject *self, PyObject *key) {
  Py_ssize_t k;
  if (ffkpy_container__small_index(key, &k)) return list_item_read(self, k);
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

/*
 * l[key]. The common case first, in a function that needs no frame of its own: an exact
 * one-digit int whose element the cache holds at the List's current stamp (one compare,
 * ffkpy_list__cached); everything else, a miss included, is list_subscript_slow's.
 */
static PyObject *list_subscript(PyObject *self, PyObject *key) {
  Py_ssize_t k;
  if (ffkpy_container__small_index(key, &k)) {
    PyObject *hit = ffkpy_list__cached(self, k, UINT64_MAX);
    if (hit != NULL) return Py_NewRef(hit);
  }
  return list_subscript_slow(self, key);
}

/*
 * l[a:b:c] = iterable / del l[a:b:c]: one C call each, which normalises the bounds against
 * the size at that moment and applies list's rules (an extended slice needs as many
 * items as it selects) atomically, so other threads never see half of the change.
 */
static int list_ass_slice(PyObject *self, PyObject *key, PyObject *value) {
  ffk_list *l = LST(self);
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return -1;
  int rc;
  if (value == NULL) {
    rc = ffk_list_erase_slice(l, start, stop, step);
  } else if (ffkpy_container__is_seq(value)) { /* the C call reads a self-aliased List as it was */
    rc = ffk_list_set_slice_step_from(l, start, stop, step, HANDLE(value));
  } else {
    Py_ssize_t n;
    ffk_any *items =
        owned_items(value, &n, step == 1 ? "can only assign an iterable" : "must assign iterable to extended slice");
    if (items == NULL) return -1;
    rc = ffk_list_set_slice_step(l, start, stop, step, items, n);
    release_items(items, n);
  }
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
  if (ffkpy_container__owned(value, &v) != 0) return NULL;
  if (ffk_list_append_steal(LST(self), &v) != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *list_insert(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!ffkpy_container__check_nargs("insert", nargs, 2, 2)) return NULL;
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
  if (!ffkpy_container__check_nargs("pop", nargs, 0, 1)) return NULL;
  Py_ssize_t i = -1;
  if (nargs == 1 && read_index(self, args[0], &i) != 0) return NULL;
  ffk_any v;
  if (ffk_list_pop(LST(self), i, &v) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_element_steal(self, &v);
}

static PyObject *list_extend(PyObject *self, PyObject *iterable) {
  int rc;
  if (ffkpy_container__is_seq(iterable)) {
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

static PyObject *list_iter(PyObject *self) { return ffkpy_iter__new(self, FFKPY_IT_LIST, FFK_MAP_KEYS); }

/* A snapshot Array of the List (for pickling, reversed, repr helpers in Python). */
static PyObject *list_snapshot(PyObject *self, PyObject *unused) {
  return ffkpy_wrap_steal((ffk_object *)ffk_list_to_array(LST(self)));
}

static PyObject *list_copy(PyObject *self, PyObject *unused) {
  ffk_array *a = ffk_list_to_array(LST(self));
  if (a == NULL) return ffkpy_raise_from_ffk();
  ffk_list *l = ffk_list_from_array(a);
  ffk_object_release(&a->header);
  return ffkpy_container__wrap(Py_TYPE(self), (ffk_object *)l);
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
    {"__deepcopy__", ffkpy_container__deepcopy, METH_O, NULL},
    {"_snapshot", list_snapshot, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ffkpy_ListBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.ListBase",
    .tp_basicsize = sizeof(ffkpy_List),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_SEQUENCE,
    .tp_new = list_new,
    .tp_dealloc = list_dealloc,
    .tp_traverse = list_traverse,
    .tp_as_number = &list_as_number,
    .tp_as_sequence = &list_as_sequence,
    .tp_as_mapping = &list_as_mapping,
    .tp_hash = ffkpy_container__hash,
    .tp_richcompare = seq_richcompare,
    .tp_iter = list_iter,
    .tp_methods = list_methods,
};
