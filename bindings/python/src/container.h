/*
 * container.h - what the files behind ffikit.Array, List, Map and Dict share (private to
 * the extension): the wrappers' layouts and container.c (shared helpers, structural
 * equality and hash, deep copy). Beside it, one header per topic: element_cache.h (the
 * element caches, element_cache.c) and views.h (the iterators and the snapshot lists
 * behind ffikit.container's KeysView/ValuesView/ItemsView, views.c). The types are
 * sequence.c (Array, List) and mapping.c (Map, Dict); container_init.c sets them up.
 * The files call one way only (tests/layering/check_cycles.py): container_init ->
 * sequence, mapping -> views -> element_cache; sequence and mapping also call
 * element_cache and container.c, and those two call no container file.
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
 *  - Element caches: an Array wrapper keeps the Python objects its scalar elements became
 *    (valid for the wrapper's life: the Array never changes under it); a List wrapper
 *    keeps them with the List's stamp (ffk_list_stamp) and reuses one only while that
 *    stamp holds, i.e. while no element of the List has changed (ffkpy_Array, ffkpy_List).
 *  - Keys and `in` follow the C semantics (ffk_any_equal): 1, True and 1.0 are distinct.
 *    Sequence `in`, index and count compare elements structurally (ffk_structural_equal),
 *    which is ffk_any_equal for everything but containers.
 */
#ifndef FFIKIT_PY_CONTAINER_H
#define FFIKIT_PY_CONTAINER_H

#include "ffikit_py.h"

/* The binding-only C API the caches below stay coherent through (docs/design.md, "Bindings"). */
#include <ffikit/unstable/dict.h>
#include <ffikit/unstable/list.h>
#include <ffikit/unstable/map.h>

/* The four types (sequence.c, mapping.c), set up by container_init.c. */
extern PyTypeObject ffkpy_ArrayBaseType, ffkpy_ListBaseType, ffkpy_MapBaseType, ffkpy_DictBaseType;

/*
 * An Array wrapper (ArrayBase and its Python subclasses). `cache` is filled lazily, one
 * slot per element, with the Python object an element read gave, for elements whose
 * Python form is an immutable scalar that can hold no reference back (int, float, str,
 * bytes, ffikit.String/Bytes; see ffkpy_array__item): the C Array never changes while
 * this wrapper holds it (copy-on-write), so the slot stays right for the wrapper's
 * life, and a read hands out the same object again instead of making a new one (as
 * tuple does). NULL until the first such read; `cache_size` is the element count it
 * was made for (at most FFKPY_ELEMENT_CACHE_MAX: later elements convert every time). Slots are published with a compare-and-swap (release) and read with
 * acquire, so two threads filling the same slot (free-threaded Python, or a conversion
 * that let another thread run) keep one object and drop the other. Freed with the
 * wrapper; the GC visits the slots (an ffikit.String could carry attributes).
 */
typedef struct {
  ffkpy_Object base;
  PyObject **cache;
  Py_ssize_t cache_size;
} ffkpy_Array;

/*
 * The element caches' bound: an Array or List wrapper caches the elements at indices
 * below this only. A cached element keeps its Python object alive (8 bytes of slot, 16
 * for a List, plus some 32 for an int or 60 for a String, against 16 bytes an element in
 * C): bounded, the cost stays below about 6 MB a wrapper, and a huge container read
 * once does not keep a Python object for every element it holds.
 */
#define FFKPY_ELEMENT_CACHE_MAX ((Py_ssize_t)1 << 16)

/*
 * A List wrapper (ListBase and its Python subclasses). A List is shared and mutable, so
 * its cache is checked on every use: slot i holds the Python object l[i] became and the
 * List's stamp then (ffk_list_get_stamped, ffk_list_iter_next_stamped); it is handed out
 * again only while ffk_list_stamp still returns that stamp, which any change of any
 * element, by any handle or thread, moves. A stale slot is replaced by the next read.
 * Only the cacheable scalars of ffkpy_Array are kept. The slots cover the indices read
 * so far, below FFKPY_ELEMENT_CACHE_MAX (grown, never shrunk, freed with the wrapper). Without the GIL (a free-threaded
 * build) there is no cache: two threads could fill one slot.
 */
typedef struct {
  PyObject *obj; /* NULL: empty */
  uint64_t stamp;
} ffkpy_ListSlot;

typedef struct {
  ffkpy_Object base;
  ffkpy_ListSlot *cache;
  Py_ssize_t cache_size;
  const uint64_t *stamp; /* ffk_list_stamp_address of the List, set with the cache */
} ffkpy_List;

#ifndef Py_GIL_DISABLED
#define FFKPY_LIST_CACHE 1
#else
#define FFKPY_LIST_CACHE 0
#endif

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
/*
 * The key cache of a MapBase or DictBase wrapper, beside the element cache: what a
 * lookup by an exact str key found, so that reading with the same key object again
 * (the usual case: the key a program keeps in a variable) needs neither the C lookup
 * (its XXH3 hash, and for a Dict its lock) nor a conversion. Direct-mapped by the str's
 * own cached Python hash: `keys_size` entries (a power of two: the entry count of the
 * mapping at the first lookup, 16 to 1024), each the last lookup that landed there,
 * holding its key (a strong reference: the address cannot be reused while it is here)
 * and compared by identity.
 *
 * Map: `slot` is where the key is (ffk_map_find_str), -1 when missing; right for the
 * wrapper's life (copy-on-write: its Map never changes). Dict: `value` is the Python
 * object the value became (an int, float or ffikit.String: the element cache's
 * cacheable kinds; anything else is not kept), NULL for a missing key, read at the
 * Dict's stamp `stamp` (ffk_dict_get_str_stamped) and handed out again only while
 * ffk_dict_stamp (read through `dict_stamp`) still returns it: any change of the Dict,
 * through any handle, from any thread, moves the stamp, so a cached value is never older
 * than the last change the reader could know of. Only with the GIL, which serialises
 * the wrapper's readers (free-threaded builds look every key up).
 */
typedef struct {
  PyObject *key; /* an exact str (owned), NULL: an empty entry */
  PyObject *value; /* Dict: the value (owned), NULL: missing */
  int64_t slot; /* Map: the key's slot, -1: missing */
  uint64_t stamp; /* Dict: the stamp `value` was read at */
} ffkpy_KeySlot;

typedef struct {
  ffkpy_Object base;
  PyObject **cache;
  Py_ssize_t cache_size; /* Dict: the number of cache entries */
  ffkpy_KeySlot *keys; /* the key cache, NULL until the first str lookup */
  Py_ssize_t keys_size;
  const uint64_t *dict_stamp; /* Dict: ffk_dict_stamp_address, set with `keys` */
} ffkpy_Mapping;

#define MAPPING(self) ((ffkpy_Mapping *)(self))

#ifndef Py_GIL_DISABLED
#define FFKPY_KEY_CACHE 1
#else
#define FFKPY_KEY_CACHE 0
#endif

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

/* (convert.c) Owned values of the first `n` items of `seq` (a list or tuple from
 * PySequence_Fast) into out[0, n), exact ints and floats read in the loop itself: 0, or
 * -1 with an exception and nothing left owned. */
int ffkpy_to_any_items(PyObject *seq, Py_ssize_t n, ffk_any *out);

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

/* ---- Subscripts (sequence.c) ------------------------------------------------------------ */

/* The value of an exact int subscript that fits one digit (most indices), read with no
 * call: 1, else 0 (the caller takes the general path). */
static inline int ffkpy_container__small_index(PyObject *key, Py_ssize_t *out) {
  if (!PyLong_CheckExact(key)) return 0;
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject *)key)) return 0;
  *out = (Py_ssize_t)PyUnstable_Long_CompactValue((PyLongObject *)key);
#else
  Py_ssize_t size = Py_SIZE(key); /* the digit count, negative for negative ints */
  if (size < -1 || size > 1) return 0;
  *out = size == 0 ? 0 : size * (Py_ssize_t)((PyLongObject *)key)->ob_digit[0];
#endif
  return 1;
}

#endif /* FFIKIT_PY_CONTAINER_H */
