/*
 * views.c - the iterators of ffikit.Array, List, Map and Dict, and the snapshot lists
 * behind ffikit.container's KeysView, ValuesView and ItemsView (MapBase._list).
 *
 * An iterator holds its container's wrapper. Over an Array or Map it reads the borrowed
 * storage (never changed while shared, see container.h): a Map iterator walks the Map's
 * slots itself and hands out the wrapper's cached key and value objects without a call
 * into C (map_next); over a List or Dict it steps
 * the C iterator, which reports a change of shape as RuntimeError, after which the
 * iterator is exhausted. Array and List iterators read through their wrapper's element
 * cache (container.h); a List iterator takes a cached element only while the List's
 * stamp is the one its last locked step saw (so a change is still noticed). Which part
 * of a mapping's entries (keys, values, items) is C's ffk_map_part, also what _list()
 * takes.
 */
#include "container.h"
#include "element_cache.h"
#include "views.h"

#include <limits.h>

PyTypeObject ffkpy_IterType;

typedef struct {
  PyObject_HEAD
  PyObject *owner; /* the container's wrapper (strong), NULL once exhausted */
  int kind;
  ffk_map_part what; /* keys, values or items, for the mapping iterators */
  int64_t pos;
  int64_t end; /* a Map's slot count: its iterator walks slots [pos, end) */
  uint64_t stamp; /* a List's stamp when this iterator last stepped under its lock */
  /* items(): the first (key, value) tuple given, kept and refilled whenever nobody else
     holds it (as CPython's dict items iterator does); NULL until the first and on
     free-threaded builds. */
  PyObject *result;
  union {
    ffk_list_iter l;
    ffk_dict_iter d;
  } it;
} ffkpy_Iter;

PyObject *ffkpy_iter__new(PyObject *owner, int kind, ffk_map_part what) {
  ffkpy_Iter *it = PyObject_GC_New(ffkpy_Iter, &ffkpy_IterType);
  if (it == NULL) return NULL;
  it->owner = Py_NewRef(owner);
  it->kind = kind;
  it->what = what;
  it->pos = 0;
  it->result = NULL;
  it->end = kind == FFKPY_IT_MAP ? ffk_map_slot_count(MAP(owner)) : 0;
  if (kind == FFKPY_IT_ARRAY_REV) it->pos = ARR(owner)->size - 1;
  if (kind == FFKPY_IT_LIST) { /* the stamp first: if it still holds later, init saw that List */
    it->stamp = ffk_list_stamp(LST(owner));
    ffk_list_iter_init(&it->it.l, LST(owner));
  }
  if (kind == FFKPY_IT_DICT) ffk_dict_iter_init(&it->it.d, DCT(owner));
  PyObject_GC_Track(it);
  return (PyObject *)it;
}

static void iter_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  Py_CLEAR(((ffkpy_Iter *)self)->owner);
  Py_CLEAR(((ffkpy_Iter *)self)->result);
  PyObject_GC_Del(self);
}

static int iter_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((ffkpy_Iter *)self)->owner);
  Py_VISIT(((ffkpy_Iter *)self)->result);
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

/*
 * The (k, v) pair of an items iterator (steals both; NULL when either is): the iterator's
 * tuple refilled when it holds the only reference, the old items released after the new
 * are in, else a new tuple that the iterator does not keep (CPython's
 * dictiter_iternextitem: in `for t in m.items()` the loop variable holds the last tuple,
 * so every other step finds the kept one free again and allocates nothing).
 */
static PyObject *item(ffkpy_Iter *it, PyObject *k, PyObject *v) {
#ifndef Py_GIL_DISABLED /* a count of 1 proves nothing where other threads run freely */
  PyObject *t = it->result;
  if (t != NULL && k != NULL && v != NULL && Py_REFCNT(t) == 1) {
    PyObject *old_k = PyTuple_GET_ITEM(t, 0), *old_v = PyTuple_GET_ITEM(t, 1);
    PyTuple_SET_ITEM(t, 0, k);
    PyTuple_SET_ITEM(t, 1, v);
    Py_INCREF(t);
    Py_DECREF(old_k);
    Py_DECREF(old_v);
    if (!PyObject_GC_IsTracked(t)) PyObject_GC_Track(t); /* the GC may have untracked it */
    return t;
  }
  PyObject *fresh = pair(k, v);
  if (fresh != NULL && t == NULL) it->result = Py_NewRef(fresh); /* the first: kept for reuse */
  return fresh;
#else
  (void)it;
  return pair(k, v);
#endif
}

/* A Dict's element (stolen): a String through the Dict's cache, the rest directly. */
static inline PyObject *dict_element(PyObject *owner, ffk_any *v) {
  return v->type_index == FFK_TYPE_STRING ? ffkpy_dict__element_steal(owner, v) : ffkpy_element_steal(owner, v);
}

/*
 * A Map step. The Map cannot change under its wrapper (copy-on-write, container.h), so the
 * iterator walks the Map's slots [pos, end) itself (end: ffk_map_slot_count when it was
 * made) and takes each key and value from the wrapper's per-slot cache (ffkpy_Mapping: 2
 * entries a slot, set once, never cleared while the wrapper lives), with no call into C.
 * Only a slot whose objects are not cached yet (or not cacheable) asks C: ffk_map_entry,
 * which also says when a slot is an erased entry (skipped), then ffkpy_map__element, which
 * fills the cache. Insertion order is slot order (ffk_map_next walks the same slots).
 * NULL at the end (no exception) or with an exception.
 */
static PyObject *map_next(ffkpy_Iter *it) {
  PyObject *owner = it->owner;
  PyObject **cache = __atomic_load_n(&((ffkpy_Mapping *)owner)->cache, __ATOMIC_ACQUIRE);
  for (int64_t s = it->pos; s < it->end; ++s) {
    if (cache != NULL) {
      PyObject *k = it->what == FFK_MAP_VALUES ? NULL : __atomic_load_n(&cache[2 * s], __ATOMIC_ACQUIRE);
      PyObject *v = it->what == FFK_MAP_KEYS ? NULL : __atomic_load_n(&cache[2 * s + 1], __ATOMIC_ACQUIRE);
      if (it->what == FFK_MAP_KEYS ? k != NULL : it->what == FFK_MAP_VALUES ? v != NULL : k != NULL && v != NULL) {
        it->pos = s + 1;
        if (it->what == FFK_MAP_KEYS) return Py_NewRef(k);
        if (it->what == FFK_MAP_VALUES) return Py_NewRef(v);
        return item(it, Py_NewRef(k), Py_NewRef(v));
      }
    }
    const ffk_any *k, *v;
    if (!ffk_map_entry(MAP(owner), s, &k, &v)) continue; /* an erased entry's slot */
    it->pos = s + 1;
    if (it->what == FFK_MAP_KEYS) return ffkpy_map__element(owner, s, FFK_MAP_KEYS, k);
    if (it->what == FFK_MAP_VALUES) return ffkpy_map__element(owner, s, FFK_MAP_VALUES, v);
    PyObject *pk = ffkpy_map__element(owner, s, FFK_MAP_KEYS, k);
    if (pk == NULL) return NULL;
    return item(it, pk, ffkpy_map__element(owner, s, FFK_MAP_VALUES, v));
  }
  it->pos = it->end;
  return NULL;
}

/* Every step iter_next does not finish itself: the C iterators, cache misses, the end. */
static FFK_NOINLINE PyObject *iter_next_slow(PyObject *self) {
  ffkpy_Iter *it = (ffkpy_Iter *)self;
  if (it->owner == NULL) return NULL;
  if (it->kind == FFKPY_IT_MAP) {
    PyObject *r = map_next(it);
    if (r != NULL || PyErr_Occurred()) return r;
    Py_CLEAR(it->owner);
    Py_CLEAR(it->result);
    return NULL;
  }
  switch (it->kind) {
    case FFKPY_IT_ARRAY: {
      const ffk_array *a = ARR(it->owner);
      if (it->pos < a->size) return ffkpy_array__item(it->owner, it->pos++);
      break;
    }
    case FFKPY_IT_ARRAY_REV: {
      const ffk_array *a = ARR(it->owner);
      if (it->pos >= 0 && it->pos < a->size) return ffkpy_array__item(it->owner, it->pos--);
      break;
    }
    case FFKPY_IT_LIST: {
      int64_t i = it->it.l.index;
      PyObject *hit = ffkpy_list__cached(it->owner, i, it->stamp); /* the List as the last step saw it */
      if (hit != NULL) {
        it->it.l.index = i + 1;
        return Py_NewRef(hit);
      }
      ffk_any v;
      uint64_t stamp;
      int rc = ffk_list_iter_next_stamped(&it->it.l, &v, &stamp);
      if (rc > 0) {
        it->stamp = stamp;
        return ffkpy_list__element_steal(it->owner, i, &v, stamp);
      }
      if (rc < 0) {
        Py_CLEAR(it->owner);
        return ffkpy_raise_from_ffk();
      }
      break;
    }
    default: {
      ffk_any k, v;
      int rc = ffk_dict_iter_next(&it->it.d, it->what == FFK_MAP_VALUES ? NULL : &k, it->what == FFK_MAP_KEYS ? NULL : &v);
      if (rc > 0) {
        if (it->what == FFK_MAP_KEYS) return dict_element(it->owner, &k);
        if (it->what == FFK_MAP_VALUES) return dict_element(it->owner, &v);
        PyObject *pk = dict_element(it->owner, &k);
        if (pk == NULL) {
          ffk_any_release(&v);
          return NULL;
        }
        return item(it, pk, dict_element(it->owner, &v));
      }
      if (rc < 0) {
        Py_CLEAR(it->owner);
        return ffkpy_raise_from_ffk();
      }
      break;
    }
  }
  Py_CLEAR(it->owner);
  Py_CLEAR(it->result);
  return NULL;
}

/*
 * tp_iternext. The steps that only hand out a cached object run here, in a function that
 * needs no frame of its own: an Array element (ffkpy_Array's cache), a List element still
 * current at the stamp of the iterator's last locked step, and a Map key (the Map's
 * per-slot cache, map_next's first check). Everything else is iter_next_slow's.
 */
static PyObject *iter_next(PyObject *self) {
  ffkpy_Iter *it = (ffkpy_Iter *)self;
  PyObject *owner = it->owner;
  int64_t i = it->pos;
  if (owner != NULL && it->kind == FFKPY_IT_ARRAY && i < ARR(owner)->size && i < FFKPY_ELEMENT_CACHE_MAX) {
    PyObject **cache = __atomic_load_n(&((ffkpy_Array *)owner)->cache, __ATOMIC_ACQUIRE);
    PyObject *hit = cache != NULL ? __atomic_load_n(&cache[i], __ATOMIC_ACQUIRE) : NULL;
    if (hit != NULL) {
      it->pos = i + 1;
      return Py_NewRef(hit);
    }
  } else if (owner != NULL && it->kind == FFKPY_IT_LIST) { /* as iter_next_slow's first check */
    int64_t j = it->it.l.index;
    PyObject *hit = ffkpy_list__cached(owner, j, it->stamp);
    if (hit != NULL) {
      it->it.l.index = j + 1;
      return Py_NewRef(hit);
    }
  } else if (owner != NULL && it->kind == FFKPY_IT_MAP && it->what == FFK_MAP_KEYS && i < it->end) {
    PyObject **cache = __atomic_load_n(&((ffkpy_Mapping *)owner)->cache, __ATOMIC_ACQUIRE);
    PyObject *hit = cache != NULL ? __atomic_load_n(&cache[2 * i], __ATOMIC_ACQUIRE) : NULL;
    if (hit != NULL) {
      it->pos = i + 1;
      return Py_NewRef(hit);
    }
  }
  return iter_next_slow(self);
}

/* __length_hint__ (Array and Map iterators: what is left; the shared ones: the size). */
static PyObject *iter_length_hint(PyObject *self, PyObject *unused) {
  ffkpy_Iter *it = (ffkpy_Iter *)self;
  if (it->owner == NULL) return PyLong_FromLong(0);
  switch (it->kind) {
    case FFKPY_IT_ARRAY: return PyLong_FromLongLong(ARR(it->owner)->size - it->pos);
    case FFKPY_IT_ARRAY_REV: return PyLong_FromLongLong(it->pos + 1);
    case FFKPY_IT_MAP: return PyLong_FromLongLong(ffk_map_size(MAP(it->owner)));
    case FFKPY_IT_LIST: return PyLong_FromLongLong(ffk_list_size(LST(it->owner)));
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

/* ---- The views' snapshots ------------------------------------------------------------- */

/*
 * _list(part): a snapshot of the keys, values or items (part: _core.MAP_KEYS, MAP_VALUES or
 * MAP_ITEMS, the C ffk_map_part) as a Python list in order; items as (key, value) tuples.
 * C checks the part and takes the snapshot (a Dict's in one locked step).
 */
PyObject *ffkpy_view__list(PyObject *self, PyObject *part_o) {
  int overflow;
  long part = PyLong_AsLongAndOverflow(part_o, &overflow);
  if (part == -1 && PyErr_Occurred()) return NULL;
  if (overflow || part < INT_MIN || part > INT_MAX) part = -1; /* C names it as out of range */
  ffk_object *h = HANDLE(self);
  ffk_array *a = h->type_index == FFK_TYPE_MAP ? ffk_map_collect((ffk_map *)h, (ffk_map_part)part)
                                               : ffk_dict_collect((ffk_dict *)h, (ffk_map_part)part);
  if (a == NULL) return ffkpy_raise_from_ffk();
  PyObject *list = PyList_New((Py_ssize_t)a->size);
  for (int64_t i = 0; list != NULL && i < a->size; ++i) {
    PyObject *x;
    if (part == FFK_MAP_ITEMS) {
      const ffk_array *kv = (const ffk_array *)a->data[i].v_obj; /* a (key, value) Tuple */
      x = pair(ffkpy_element(self, &kv->data[0]), ffkpy_element(self, &kv->data[1]));
    } else {
      x = ffkpy_element(self, &a->data[i]);
    }
    if (x == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  ffk_object_release(&a->header);
  return list;
}
