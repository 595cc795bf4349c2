/*
 * element_cache.h - the element caches of the container wrappers (element_cache.c;
 * private to the extension): reading an element of an Array, List, Map or Dict as the
 * Python object an earlier read made, while it is still right. The caches' layouts and
 * what keeps them coherent (copy-on-write, the List and Dict stamps) are in container.h.
 * Used by the types (sequence.c, mapping.c) and their iterators (views.c); calls neither.
 */
#ifndef FFIKIT_PY_ELEMENT_CACHE_H
#define FFIKIT_PY_ELEMENT_CACHE_H

#include "container.h"

/* ---- Array and List ------------------------------------------------------------------- */

/* ffkpy_array__item when the slot is empty: converts, and fills the slot when cacheable. */
PyObject *ffkpy_array__item_slow(PyObject *self, int64_t i);

/* Element i (0 <= i < size, unchecked) of an ArrayBase wrapper as a Python object (new
 * reference; NULL with an exception), through the wrapper's element cache. */
static inline PyObject *ffkpy_array__item(PyObject *self, int64_t i) {
  PyObject **cache = __atomic_load_n(&((ffkpy_Array *)self)->cache, __ATOMIC_ACQUIRE);
  if (cache != NULL && i < FFKPY_ELEMENT_CACHE_MAX) { /* the cache has min(size, bound) slots */
    PyObject *hit = __atomic_load_n(&cache[i], __ATOMIC_ACQUIRE);
    if (hit != NULL) return Py_NewRef(hit);
  }
  return ffkpy_array__item_slow(self, i);
}

/* The Python object of element `v` (stolen: an owned value read from the List wrapper
 * `self` at index i, 0 <= i, when the List's stamp was `stamp`), remembered in the
 * wrapper's cache when cacheable. New reference, or NULL with an exception. */
PyObject *ffkpy_list__element_steal(PyObject *self, int64_t i, ffk_any *v, uint64_t stamp);

/* The cached object of l[i] (borrowed) when slot i is still valid at the List's current
 * stamp, which must also be `want` unless want is UINT64_MAX; else NULL. No exception. */
static inline PyObject *ffkpy_list__cached(PyObject *self, int64_t i, uint64_t want) {
#if FFKPY_LIST_CACHE
  ffkpy_List *w = (ffkpy_List *)self;
  if ((uint64_t)i >= (uint64_t)w->cache_size) return NULL; /* negative too */
  /* The slot is read once, before the List's stamp: only this wrapper writes it, under the
     GIL, so the order is free; the one check is the slot's stamp against the List's now. */
  const ffkpy_ListSlot *slot = &w->cache[i];
  PyObject *obj = slot->obj;
  uint64_t at = slot->stamp;
  if (obj == NULL) return NULL;
  uint64_t now = __atomic_load_n(w->stamp, __ATOMIC_ACQUIRE); /* set: the cache has an object */
  if (at != now || (want != UINT64_MAX && want != now)) return NULL;
  return obj;
#else
  (void)self, (void)i, (void)want;
  return NULL;
#endif
}

/* ---- Map and Dict --------------------------------------------------------------------- */

/* Whether a Map or Dict element's Python form is worth keeping (in the element cache, or
 * with a Dict's key cache entry): immutable and made on every read. */
static inline bool ffkpy_map__cacheable(const ffk_any *v) {
  return v->type_index == FFK_TYPE_INT || v->type_index == FFK_TYPE_FLOAT ||
         (v->type_index == FFK_TYPE_STRING && ffkpy_g.string_cls != NULL);
}

/* ffkpy_map__element when the slot is empty (or the element is not cached): converts, and
 * fills the slot when cacheable. */
PyObject *ffkpy_map__element_slow(PyObject *self, int64_t slot, ffk_map_part part, const ffk_any *v);

/* The Python object for the key (part FFK_MAP_KEYS) or value (FFK_MAP_VALUES) `v` of slot
 * `slot` of the Map wrapper `self` (v borrowed from the Map): a cacheable element through
 * the cache, anything else by ffkpy_element. New reference, or NULL with an exception.
 * The hit is inline here (m[k] after the key cache, iteration), like ffkpy_array__item. */
static inline PyObject *ffkpy_map__element(PyObject *self, int64_t slot, ffk_map_part part, const ffk_any *v) {
  PyObject **cache = __atomic_load_n(&MAPPING(self)->cache, __ATOMIC_ACQUIRE);
  if (cache != NULL && HANDLE(self)->type_index == FFK_TYPE_MAP) { /* a Dict's cache is keyed otherwise */
    PyObject *hit = __atomic_load_n(&cache[2 * slot + (part == FFK_MAP_VALUES)], __ATOMIC_ACQUIRE);
    if (hit != NULL) return Py_NewRef(hit); /* only cacheable elements are ever stored */
  }
  return ffkpy_map__element_slow(self, slot, part, v);
}

/* ffkpy_element_steal for a Dict wrapper's element: a String through the Dict's cache. */
PyObject *ffkpy_dict__element_steal(PyObject *self, ffk_any *v);

#endif /* FFIKIT_PY_ELEMENT_CACHE_H */
