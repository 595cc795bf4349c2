/*
 * views.h - the iterators of the container wrappers and the snapshot lists behind
 * ffikit.container's KeysView/ValuesView/ItemsView (views.c; private to the extension).
 * Used by the types (sequence.c, mapping.c); reads elements through element_cache.h.
 */
#ifndef FFIKIT_PY_VIEWS_H
#define FFIKIT_PY_VIEWS_H

#include "container.h"

extern PyTypeObject ffkpy_IterType;

/* What an iterator walks: an Array (forwards or backwards), a Map, a List or a Dict. */
enum { FFKPY_IT_ARRAY, FFKPY_IT_ARRAY_REV, FFKPY_IT_MAP, FFKPY_IT_LIST, FFKPY_IT_DICT };

/* A new iterator over the container wrapper `owner` (kept alive by it); `part` selects
 * keys, values or items for a Map or Dict and is ignored otherwise. */
PyObject *ffkpy_iter__new(PyObject *owner, int kind, ffk_map_part part);

/* MapBase._list(part): a snapshot of the keys, values or items as a Python list. */
PyObject *ffkpy_view__list(PyObject *self, PyObject *part);

#endif /* FFIKIT_PY_VIEWS_H */
