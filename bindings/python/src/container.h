/*
 * container.h - what the files behind ffikit.Array, List, Map and Dict share (private to
 * the extension): container.c (shared helpers, structural equality and hash, set-up),
 * sequence.c (Array, List), mapping.c (Map, Dict) and views.c (the iterators and the
 * snapshot lists behind ffikit.container's KeysView/ValuesView/ItemsView).
 *
 * Invariants, for all four:
 *  - Array/Tuple/Map are copy-on-write in C and never changed through a Python handle, so
 *    their element storage is read borrowed (ffk_array_items_borrow, ffk_map_next) while
 *    the wrapper (or an iterator holding it) keeps its reference: the object is then
 *    shared (use count >= 2 once anyone else looks), so nobody changes it in place.
 *  - List/Dict are shared and mutable from any thread: they are read only through their
 *    locked C accessors (new references) and iterated with the C iterators, which report
 *    a change during iteration as RuntimeError. Every change is one C call, which C makes
 *    atomic; a rule about a value (an index, a slice's bounds, a part of the entries) is
 *    decided by that call, not here.
 *  - Keys and `in` follow the C semantics (ffk_any_equal): 1, True and 1.0 are distinct.
 *    Sequence `in`, index and count compare elements structurally (ffk_structural_equal),
 *    which is ffk_any_equal for everything but containers.
 */
#ifndef FFIKIT_PY_CONTAINER_H
#define FFIKIT_PY_CONTAINER_H

#include "ffikit_py.h"

extern PyTypeObject ffkpy_ArrayBaseType, ffkpy_ListBaseType, ffkpy_MapBaseType, ffkpy_DictBaseType, ffkpy_IterType;

#define HANDLE(self) (((ffkpy_Object *)(self))->obj)
#define ARR(self) ((ffk_array *)HANDLE(self))
#define LST(self) ((ffk_list *)HANDLE(self))
#define MAP(self) ((ffk_map *)HANDLE(self))
#define DCT(self) ((ffk_dict *)HANDLE(self))

/*
 * The C layout of MapBase and DictBase instances, with a cache of the Python objects made
 * for elements, so that reading the same entry again hands out the same object, as a dict
 * hands out its stored ones (m[k], get, iteration).
 *
 * Map: a Map never changes while its wrapper holds it (copy-on-write), so every entry
 * keeps its slot (ffk_map_find, ffk_map_entry). `cache` has 2 entries per slot (key,
 * value), made on the first read of an int, float or String element; each entry is set
 * once with a compare-and-swap and dropped only with the wrapper (or by the GC's
 * tp_clear), so a reader may use it while it holds the wrapper, on any build.
 *
 * Dict: the entries change in place, so the cache is keyed by the C String object itself:
 * `cache_size` entries (a power of two: 8 per entry of the Dict at the first read, 64 to
 * 65536), each the ffikit.String last made for a C String whose address hashes there,
 * reused when its _ffikit_object is still that very C object (a collision just makes one).
 * It may keep up to cache_size Strings that left the Dict alive until their entry is
 * reused, clear() is called, or the wrapper goes. Only with the GIL (a replaced entry is
 * released under it); free-threaded builds read Dicts without it.
 */
typedef struct {
  ffkpy_Object base;
  PyObject **cache;
  Py_ssize_t cache_size; /* Dict: the number of cache entries */
} ffkpy_Mapping;

/* Containers this large release the GIL around whole-container C work. */
#define RELEASE_GIL_MIN 4096

/* ---- container.c ---------------------------------------------------------------------- */

/* True when `o` is a wrapper of an object of type index `a` or `b` (no exception set). */
int ffkpy_container__is_kind(PyObject *o, int32_t a, int32_t b);

/* True for an Array, Tuple or List wrapper. */
int ffkpy_container__is_seq(PyObject *o);

/* A wrapper around a new C object of the class of `type` (steals obj, also on failure;
 * obj NULL: raises the pending ffikit error). NULL with a Python exception. */
PyObject *ffkpy_container__wrap(PyTypeObject *type, ffk_object *obj);

/* A new Array snapshot of a sequence wrapper (an Array: a new reference to itself), or
 * NULL with the ffikit error pending. */
ffk_array *ffkpy_container__seq_snapshot(PyObject *o);

/* Owned Python -> Any for storing; a list/tuple becomes an Array, a dict a Map. 0 or -1. */
static inline int ffkpy_container__owned(PyObject *o, ffk_any *out) { return ffkpy_to_any(o, out, NULL); }

/* Checks a positional argument count like the builtins do: 1 fine, 0 with a TypeError. */
int ffkpy_container__check_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t lo, Py_ssize_t hi);

/* ffk_structural_equal, the GIL released for large containers: 1, 0, or -1 with an exception. */
int ffkpy_container__equal(const ffk_any *a, const ffk_any *b, int64_t size_hint);

/* The number of elements (entries) of an Array, Tuple, Map or Dict. */
int64_t ffkpy_container__size(ffk_object *h);

/* tp_hash of the four types: structural (a List hashes as the Array of its elements). */
Py_hash_t ffkpy_container__hash(PyObject *self);

/* __deepcopy__ of the four types: in C, sharing and cycles kept. */
PyObject *ffkpy_container__deepcopy(PyObject *self, PyObject *memo);

/* ---- mapping.c -------------------------------------------------------------------------- */

/* The Python object for the key (part FFK_MAP_KEYS) or value (FFK_MAP_VALUES) `v` of slot
 * `slot` of the Map wrapper `self` (v borrowed from the Map): a String through the cache,
 * anything else by ffkpy_element. New reference, or NULL with an exception. */
PyObject *ffkpy_map__element(PyObject *self, int64_t slot, ffk_map_part part, const ffk_any *v);

/* ffkpy_element_steal for a Dict wrapper's element: a String through the Dict's cache. */
PyObject *ffkpy_dict__element_steal(PyObject *self, ffk_any *v);

/* ---- views.c ---------------------------------------------------------------------------- */

/* What an iterator walks: an Array (forwards or backwards), a Map, a List or a Dict. */
enum { FFKPY_IT_ARRAY, FFKPY_IT_ARRAY_REV, FFKPY_IT_MAP, FFKPY_IT_LIST, FFKPY_IT_DICT };

/* A new iterator over the container wrapper `owner` (kept alive by it); `part` selects
 * keys, values or items for a Map or Dict and is ignored otherwise. */
PyObject *ffkpy_iter__new(PyObject *owner, int kind, ffk_map_part part);

/* MapBase._list(part): a snapshot of the keys, values or items as a Python list. */
PyObject *ffkpy_view__list(PyObject *self, PyObject *part);

#endif /* FFIKIT_PY_CONTAINER_H */
