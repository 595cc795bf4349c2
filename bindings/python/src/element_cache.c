/*
 * element_cache.c - the element caches of the container wrappers (element_cache.h): the
 * Python objects elements of an Array, List, Map or Dict became, handed out again while
 * still right. The types (sequence.c, mapping.c) and their iterators (views.c) all read
 * elements through here, so the caches have one home and the iterators need neither type's
 * file. The layouts and invariants are in container.h (ffkpy_Array, ffkpy_List,
 * ffkpy_Mapping); a wrapper's dealloc and GC slots, in its type's file, free them.
 */
#include "element_cache.h"

#include <string.h>

/* ---- Array and List ------------------------------------------------------------------- */

/* Whether an element's Python form may be cached (container.h, ffkpy_Array): an immutable
 * scalar made fresh by every conversion. Containers, tensors, functions and opaque
 * objects are not: their wrappers keep the identity rules they have always had. */
static int seq_cacheable(const ffk_any *v) {
  switch (v->type_index) {
    case FFK_TYPE_INT:
    case FFK_TYPE_FLOAT:
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_SMALL_BYTES:
      return 1;
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES:
      return v->v_obj != NULL;
    default:
      return 0;
  }
}

PyObject *ffkpy_array__item_slow(PyObject *self, int64_t i) {
  ffkpy_Array *w = (ffkpy_Array *)self;
  const ffk_any *v = &ARR(self)->data[i];
  if (!seq_cacheable(v)) return ffkpy_element(self, v);
  if (i >= FFKPY_ELEMENT_CACHE_MAX) return ffkpy_from_any(v); /* beyond the bound: converted each time */
  PyObject **cache = __atomic_load_n(&w->cache, __ATOMIC_ACQUIRE);
  if (cache == NULL) {
    Py_ssize_t n = (Py_ssize_t)ARR(self)->size;
    if (n > FFKPY_ELEMENT_CACHE_MAX) n = FFKPY_ELEMENT_CACHE_MAX;
    PyObject **made = PyMem_Calloc((size_t)n, sizeof(PyObject *));
    if (made == NULL) return ffkpy_from_any(v); /* no room for a cache: convert every time */
    PyObject **expected = NULL;
    if (__atomic_compare_exchange_n(&w->cache, &expected, made, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      w->cache_size = n;
      cache = made;
    } else {
      PyMem_Free(made); /* another thread's cache won */
      cache = expected;
    }
  }
  PyObject *x = ffkpy_from_any(v);
  if (x == NULL) return NULL;
  PyObject *expected = NULL;
  Py_INCREF(x); /* the cache's reference */
  if (!__atomic_compare_exchange_n(&cache[i], &expected, x, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    Py_DECREF(x); /* another thread filled the slot first: hand out its object */
    Py_DECREF(x);
    return Py_NewRef(expected);
  }
  return x;
}

/* Makes room for slot i in a List wrapper's cache; false (nothing cached) when there is none. */
static bool list_cache_room(ffkpy_List *w, int64_t i) {
  if (i < w->cache_size) return true;
  if (i >= FFKPY_ELEMENT_CACHE_MAX) return false;
  Py_ssize_t n = (Py_ssize_t)ffk_list_size((ffk_list *)w->base.obj);
  if (n <= i) n = (Py_ssize_t)i + 1;
  if (n < 2 * w->cache_size) n = 2 * w->cache_size;
  if (n > FFKPY_ELEMENT_CACHE_MAX) n = FFKPY_ELEMENT_CACHE_MAX;
  ffkpy_ListSlot *cache = PyMem_Realloc(w->cache, (size_t)n * sizeof(ffkpy_ListSlot));
  if (cache == NULL) return false;
  memset(&cache[w->cache_size], 0, (size_t)(n - w->cache_size) * sizeof(ffkpy_ListSlot));
  w->stamp = ffk_list_stamp_address((ffk_list *)w->base.obj);
  w->cache = cache;
  w->cache_size = n;
  return true;
}

PyObject *ffkpy_list__element_steal(PyObject *self, int64_t i, ffk_any *v, uint64_t stamp) {
  if (!seq_cacheable(v)) return ffkpy_element_steal(self, v);
  PyObject *x = ffkpy_from_any(v);
  ffk_any_release(v);
#if FFKPY_LIST_CACHE
  ffkpy_List *w = (ffkpy_List *)self;
  if (x != NULL && i >= 0 && list_cache_room(w, i)) {
    Py_INCREF(x);
    Py_XSETREF(w->cache[i].obj, x); /* a stale object goes (an immutable scalar: no code runs) */
    w->cache[i].stamp = stamp;
  }
#else
  (void)i, (void)stamp;
#endif
  return x;
}

/* ---- Map and Dict --------------------------------------------------------------------- */

/* The cache of a Map wrapper, made on first use; NULL with an exception (MemoryError). */
static PyObject **map_cache(PyObject *self) {
  PyObject **cache = __atomic_load_n(&MAPPING(self)->cache, __ATOMIC_ACQUIRE);
  if (cache != NULL) return cache;
  int64_t n = ffk_map_slot_count(MAP(self));
  PyObject **fresh = PyMem_Calloc((size_t)(2 * n + 1), sizeof(PyObject *));
  if (fresh == NULL) return (PyObject **)PyErr_NoMemory();
  PyObject **expected = NULL;
  if (__atomic_compare_exchange_n(&MAPPING(self)->cache, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  PyMem_Free(fresh); /* another thread made it first */
  return expected;
}

PyObject *ffkpy_map__element_slow(PyObject *self, int64_t slot, ffk_map_part part, const ffk_any *v) {
  if (!ffkpy_map__cacheable(v) || HANDLE(self)->type_index != FFK_TYPE_MAP) return ffkpy_element(self, v);
  PyObject **cache = map_cache(self);
  if (cache == NULL) return NULL;
  PyObject **at = &cache[2 * slot + (part == FFK_MAP_VALUES)];
  PyObject *s = __atomic_load_n(at, __ATOMIC_ACQUIRE);
  if (s != NULL) return Py_NewRef(s);
  PyObject *made = ffkpy_from_any(v);
  if (made == NULL) return NULL;
  PyObject *expected = NULL;
  if (!__atomic_compare_exchange_n(at, &expected, made, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    Py_DECREF(made); /* another thread's is the slot's: every read gives one object */
    return Py_NewRef(expected);
  }
  return Py_NewRef(made); /* one reference is the cache's */
}

PyObject *ffkpy_dict__element_steal(PyObject *self, ffk_any *v) {
#ifndef Py_GIL_DISABLED
  if (v->type_index == FFK_TYPE_STRING && ffkpy_g.string_cls != NULL && ffkpy_g.string_slot >= 0) {
    ffkpy_Mapping *m = MAPPING(self);
    if (m->cache == NULL) { /* sized once, 4 entries per key and value there are: more share them */
      int64_t want = 8 * ffk_dict_size(DCT(self)), n = 64;
      while (n < want && n < (INT64_C(1) << 16)) n *= 2;
      if ((m->cache = PyMem_Calloc((size_t)n, sizeof(PyObject *))) == NULL) return PyErr_NoMemory();
      m->cache_size = n;
    }
    uintptr_t id = (uintptr_t)v->v_obj;
    PyObject **at = &m->cache[(Py_ssize_t)((id >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 40) & (m->cache_size - 1)];
    PyObject *s = *at;
    if (s != NULL && Py_TYPE(s) == (PyTypeObject *)ffkpy_g.string_cls) {
      PyObject *w = *(PyObject **)((char *)s + ffkpy_g.string_slot);
      if (w != NULL && ffkpy_handle(w) == v->v_obj) { /* the String made for this very C object */
        ffk_any_release(v);
        return Py_NewRef(s);
      }
    }
    PyObject *made = ffkpy_from_any(v);
    ffk_any_release(v);
    if (made != NULL) Py_XSETREF(*at, Py_NewRef(made)); /* the slot's last String wins */
    return made;
  }
#endif
  return ffkpy_element_steal(self, v);
}
