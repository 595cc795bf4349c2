/*
 * mapping.c - ffikit.Map and ffikit.Dict: the C types MapBase and DictBase.
 *
 * The hot operations are type slots: len, m[k], get, `in`, iteration, construction from
 * a dict or anything with items(). Dict changes are one C call each (update from another
 * mapping too: all or nothing). Keys follow C's semantics: 1, True and 1.0 are three
 * keys. See container.h for the invariants; the iterators and views are in views.c.
 */
#include "container.h"
#include "element_cache.h"
#include "views.h"

PyTypeObject ffkpy_MapBaseType, ffkpy_DictBaseType;

/* ---- The key cache (container.h: ffkpy_KeySlot) ----------------------------------------- */

#if FFKPY_KEY_CACHE
/* The key cache's entry for the exact str `key` (the cache made on first use), or NULL when
 * there is none to use (no memory: the lookup just goes to C). Never an exception. */
static ffkpy_KeySlot *key_entry(PyObject *self, PyObject *key) {
  ffkpy_Mapping *m = MAPPING(self);
  if (FFK_UNLIKELY(m->keys == NULL)) {
    ffk_object *h = HANDLE(self);
    bool is_map = h->type_index == FFK_TYPE_MAP;
    int64_t want = is_map ? ffk_map_size((ffk_map *)h) : ffk_dict_size((ffk_dict *)h), n = 16;
    while (n < want && n < 1024) n *= 2;
    if ((m->keys = PyMem_Calloc((size_t)n, sizeof(ffkpy_KeySlot))) == NULL) return NULL;
    m->keys_size = n;
    m->dict_stamp = is_map ? NULL : ffk_dict_stamp_address((ffk_dict *)h);
  }
  Py_hash_t hash = PyObject_Hash(key); /* a str's is cached after its first use */
  if (FFK_UNLIKELY(hash == -1)) {
    PyErr_Clear();
    return NULL;
  }
  return &m->keys[(size_t)hash & (size_t)(m->keys_size - 1)];
}

/* Remembers what a lookup of `key` found: value (stolen; NULL for none), slot, stamp. The
 * entry is found afresh: a conversion since key_entry may have run code that cleared the
 * cache. The old key and value go after the entry is whole (a release may run code). */
static void key_remember(PyObject *self, PyObject *key, PyObject *value, int64_t slot, uint64_t stamp) {
  ffkpy_KeySlot *e = key_entry(self, key);
  if (e == NULL) {
    Py_XDECREF(value);
    return;
  }
  PyObject *old_key = e->key, *old_value = e->value;
  e->key = Py_NewRef(key);
  e->value = value;
  e->slot = slot;
  e->stamp = stamp;
  Py_XDECREF(old_key);
  Py_XDECREF(old_value);
}

/* The cached answer for `key`: 1 with *value (borrowed) the value's Python object, or NULL
 * and *slot the key's slot (a Map's value that is not kept; -1 for a missing key of either);
 * 0 when the cache cannot answer. */
static inline int key_cached(PyObject *self, PyObject *key, bool is_map, int64_t *slot, PyObject **value) {
  ffkpy_Mapping *m = MAPPING(self);
  if (m->keys == NULL) return 0;
  Py_hash_t hash = PyObject_Hash(key);
  if (FFK_UNLIKELY(hash == -1)) {
    PyErr_Clear();
    return 0;
  }
  const ffkpy_KeySlot *e = &m->keys[(size_t)hash & (size_t)(m->keys_size - 1)];
  if (e->key != key) return 0;
  if (!is_map && e->stamp != __atomic_load_n(m->dict_stamp, __ATOMIC_ACQUIRE)) return 0; /* the Dict changed since */
  *slot = e->slot;
  *value = e->value;
  return 1;
}

static void key_cache_clear(PyObject *self) {
  ffkpy_Mapping *m = MAPPING(self);
  ffkpy_KeySlot *keys = m->keys;
  Py_ssize_t n = m->keys_size;
  m->keys = NULL;
  m->keys_size = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_XDECREF(keys[i].key);
    Py_XDECREF(keys[i].value);
  }
  PyMem_Free(keys);
}
#endif

/* The number of entries of the cache: 2 per slot of a Map, cache_size for a Dict. */
static int64_t cache_len(PyObject *self) {
  if (MAPPING(self)->cache == NULL || HANDLE(self) == NULL) return 0;
  return HANDLE(self)->type_index == FFK_TYPE_MAP ? 2 * ffk_map_slot_count(MAP(self)) : MAPPING(self)->cache_size;
}

static int map_traverse(PyObject *self, visitproc visit, void *arg) {
  int64_t n = cache_len(self);
  for (int64_t i = 0; i < n; ++i) Py_VISIT(MAPPING(self)->cache[i]); /* a String's _ffikit_object may be set to anything */
  for (Py_ssize_t i = 0; i < MAPPING(self)->keys_size; ++i) Py_VISIT(MAPPING(self)->keys[i].value);
  return ffkpy_object_traverse(self, visit, arg);
}

static int map_clear(PyObject *self) {
  int64_t n = cache_len(self);
  PyObject **cache = MAPPING(self)->cache;
  MAPPING(self)->cache = NULL;
  MAPPING(self)->cache_size = 0;
  for (int64_t i = 0; i < n; ++i) Py_XDECREF(cache[i]);
  PyMem_Free(cache);
#if FFKPY_KEY_CACHE
  key_cache_clear(self);
#endif
  return 0;
}

static void map_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  map_clear(self);
  ffkpy_ObjectType.tp_dealloc(self);
}

/* Map only against Map, Dict only against Dict. */
static PyObject *map_richcompare(PyObject *self, PyObject *other, int op) {
  ffk_object *h = ffkpy_handle(other);
  if ((op != Py_EQ && op != Py_NE) || h == NULL || h->type_index != HANDLE(self)->type_index)
    Py_RETURN_NOTIMPLEMENTED;
  ffk_any x = ffk_any_object(HANDLE(self)), y = ffk_any_object(h);
  int rc = ffkpy_container__equal(&x, &y, ffkpy_container__size(HANDLE(self)));
  ffk_any_release(&x);
  ffk_any_release(&y);
  if (rc < 0) return NULL;
  return PyBool_FromLong(op == Py_EQ ? rc : !rc);
}

/* ---- Map and what Dict inherits ---------------------------------------------------- */

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
    return ffkpy_container__owned(mapping, &v) == 0 ? (ffk_map *)v.v_obj : NULL;
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
    if (ffkpy_container__owned(PyTuple_GET_ITEM(p, 0), &kv[done]) != 0) break;
    if (ffkpy_container__owned(PyTuple_GET_ITEM(p, 1), &kv[n + done]) != 0) {
      ffk_any_release(&kv[done]);
      break;
    }
  }
  if (kv != NULL && done == n) {
    if ((m = ffk_map_from_pairs_steal(kv, kv + n, n)) == NULL) ffkpy_raise_from_ffk(); /* took every pair */
  } else {
    for (Py_ssize_t i = 0; i < done; ++i) {
      ffk_any_release(&kv[i]);
      ffk_any_release(&kv[n + i]);
    }
  }
  PyMem_Free(kv);
  Py_DECREF(seq);
  return m;
}

static PyObject *map_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *mapping = NULL;
  static char *kwlist[] = {"mapping", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Map", kwlist, &mapping)) return NULL;
  if (mapping == NULL || mapping == Py_None) return ffkpy_container__wrap(type, (ffk_object *)ffk_map_new());
  ffk_map *m = map_of(mapping);
  return m == NULL ? NULL : ffkpy_container__wrap(type, (ffk_object *)m);
}

static PyObject *dict_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *mapping = NULL;
  static char *kwlist[] = {"mapping", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Dict", kwlist, &mapping)) return NULL;
  if (mapping == NULL || mapping == Py_None) return ffkpy_container__wrap(type, (ffk_object *)ffk_dict_new());
  ffk_map *m = map_of(mapping);
  if (m == NULL) return NULL;
  ffk_dict *d = ffk_dict_from_map_steal(m); /* a Map made here: its entries move */
  return ffkpy_container__wrap(type, (ffk_object *)d);
}

static Py_ssize_t map_len(PyObject *self) {
  ffk_object *h = HANDLE(self);
  return (Py_ssize_t)(h->type_index == FFK_TYPE_MAP ? ffk_map_size((ffk_map *)h) : ffk_dict_size((ffk_dict *)h));
}

/*
 * Looks `key` up: 1 with a new reference in *out, 0 missing, -1 with an exception. A str
 * is looked up by its cached UTF-8 (ffk_map_find_str / ffk_dict_get_str: no key value is
 * made), an int by its value; anything else is converted as a call argument. A Map's value
 * comes through its slot, so a String value is the cached one (ffkpy_map__element).
 */
static int lookup(PyObject *self, PyObject *key, PyObject **out) {
  ffk_object *h = HANDLE(self);
  bool is_map = h->type_index == FFK_TYPE_MAP;
  PyTypeObject *tp = Py_TYPE(key);
  ffk_any k, v;
  int rc;
  if (tp == &PyUnicode_Type) {
#if FFKPY_KEY_CACHE
    int64_t hit_slot;
    PyObject *hit;
    if (key_cached(self, key, is_map, &hit_slot, &hit)) {
      if (hit != NULL) {
        *out = Py_NewRef(hit);
        return 1;
      }
      if (hit_slot < 0) return 0;
      const ffk_any *pk, *pv; /* a Map's value that is not kept: converted from its slot */
      if (!ffk_map_entry((ffk_map *)h, hit_slot, &pk, &pv)) return 0;
      return (*out = ffkpy_map__element(self, hit_slot, FFK_MAP_VALUES, pv)) == NULL ? -1 : 1;
    }
#endif
    Py_ssize_t n;
    const char *data = PyUnicode_AsUTF8AndSize(key, &n);
    if (data == NULL) return -1;
    if (is_map) {
      int64_t slot = ffk_map_find_str((ffk_map *)h, data, (size_t)n);
      const ffk_any *pk, *pv;
      if (!ffk_map_entry((ffk_map *)h, slot, &pk, &pv)) {
#if FFKPY_KEY_CACHE
        key_remember(self, key, NULL, -1, 0);
#endif
        return 0;
      }
      if ((*out = ffkpy_map__element(self, slot, FFK_MAP_VALUES, pv)) == NULL) return -1;
#if FFKPY_KEY_CACHE
      key_remember(self, key, ffkpy_map__cacheable(pv) ? Py_NewRef(*out) : NULL, slot, 0);
#endif
      return 1;
    }
#if FFKPY_KEY_CACHE
    uint64_t stamp;
    rc = ffk_dict_get_str_stamped((ffk_dict *)h, data, (size_t)n, &v, &stamp);
    if (rc == 0) key_remember(self, key, NULL, -1, stamp);
    if (rc == 1 && ffkpy_map__cacheable(&v)) {
      if ((*out = ffkpy_dict__element_steal(self, &v)) == NULL) return -1;
      key_remember(self, key, Py_NewRef(*out), 0, stamp);
      return 1;
    }
#else
    rc = ffk_dict_get_str((ffk_dict *)h, data, (size_t)n, &v);
#endif
  } else {
    ffkpy_temps temps;
    ffkpy_temps_init(&temps);
    int of = 1;
    if (tp == &PyLong_Type) { /* the common int key, without the temps (a large one: the general path) */
      long long x = PyLong_AsLongLongAndOverflow(key, &of);
      if (x == -1 && PyErr_Occurred()) return -1;
      k = ffk_any_int(x);
    }
    if (of != 0 && ffkpy_to_any(key, &k, &temps) != 0) {
      ffkpy_temps_release(&temps);
      return -1;
    }
    if (is_map) {
      int64_t slot = ffk_map_find((ffk_map *)h, &k);
      ffkpy_temps_release(&temps);
      const ffk_any *pk, *pv;
      if (!ffk_map_entry((ffk_map *)h, slot, &pk, &pv)) return 0;
      return (*out = ffkpy_map__element(self, slot, FFK_MAP_VALUES, pv)) == NULL ? -1 : 1;
    }
    rc = ffk_dict_get((ffk_dict *)h, &k, &v);
    ffkpy_temps_release(&temps);
  }
  if (rc < 0) return ffkpy_raise_from_ffk_int();
  if (rc == 0) return 0;
  *out = ffkpy_dict__element_steal(self, &v);
  return *out == NULL ? -1 : 1;
}

static PyObject *map_subscript(PyObject *self, PyObject *key) {
  PyObject *r = NULL;
  int rc = lookup(self, key, &r);
  if (rc == 0) PyErr_SetObject(PyExc_KeyError, key);
  return r;
}

static PyObject *map_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!ffkpy_container__check_nargs("get", nargs, 1, 2)) return NULL;
  PyObject *r = NULL;
  int rc = lookup(self, args[0], &r);
  if (rc == 0) return Py_NewRef(nargs > 1 ? args[1] : Py_None);
  return r;
}

/* `key in m`: the paths of lookup() without reading the value. */
static int map_contains(PyObject *self, PyObject *key) {
  ffk_object *h = HANDLE(self);
  bool is_map = h->type_index == FFK_TYPE_MAP;
  PyTypeObject *tp = Py_TYPE(key);
  if (tp == &PyUnicode_Type) {
#if FFKPY_KEY_CACHE
    int64_t slot;
    PyObject *hit;
    if (key_cached(self, key, is_map, &slot, &hit)) return hit != NULL || slot >= 0;
#endif
    Py_ssize_t n;
    const char *data = PyUnicode_AsUTF8AndSize(key, &n);
    if (data == NULL) return -1;
    int rc = is_map ? ffk_map_contains_str((ffk_map *)h, data, (size_t)n)
                    : ffk_dict_contains_str((ffk_dict *)h, data, (size_t)n);
    return rc < 0 ? ffkpy_raise_from_ffk_int() : rc;
  }
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k;
  int of = 1;
  if (tp == &PyLong_Type) {
    long long x = PyLong_AsLongLongAndOverflow(key, &of);
    if (x == -1 && PyErr_Occurred()) return -1;
    k = ffk_any_int(x);
  }
  if (of != 0 && ffkpy_to_any(key, &k, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return -1;
  }
  int rc = is_map ? ffk_map_contains((ffk_map *)h, &k) : ffk_dict_contains((ffk_dict *)h, &k);
  ffkpy_temps_release(&temps);
  return rc;
}

static PyObject *map_iter_what(PyObject *self, ffk_map_part what) {
  return ffkpy_iter__new(self, HANDLE(self)->type_index == FFK_TYPE_MAP ? FFKPY_IT_MAP : FFKPY_IT_DICT, what);
}
static PyObject *map_iter(PyObject *self) { return map_iter_what(self, FFK_MAP_KEYS); }
static PyObject *map_iter_keys(PyObject *self, PyObject *unused) { return map_iter_what(self, FFK_MAP_KEYS); }
static PyObject *map_iter_values(PyObject *self, PyObject *unused) { return map_iter_what(self, FFK_MAP_VALUES); }
static PyObject *map_iter_items(PyObject *self, PyObject *unused) { return map_iter_what(self, FFK_MAP_ITEMS); }

/* A snapshot Map (a Map: itself). */
static PyObject *map_snapshot(PyObject *self, PyObject *unused) {
  ffk_map *m = map_of(self);
  return m == NULL ? NULL : ffkpy_wrap_steal((ffk_object *)m);
}


static PyMethodDef map_methods[] = {
    {"get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL,
     "get(key, default=None): the value for key, or default when missing."},
    {"_iter_keys", map_iter_keys, METH_NOARGS, NULL},
    {"_iter_values", map_iter_values, METH_NOARGS, NULL},
    {"_iter_items", map_iter_items, METH_NOARGS, NULL},
    {"_snapshot", map_snapshot, METH_NOARGS, NULL},
    {"_list", ffkpy_view__list, METH_O, NULL},
    {"__deepcopy__", ffkpy_container__deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods map_as_sequence = {.sq_contains = map_contains};
static PyMappingMethods map_as_mapping = {.mp_length = map_len, .mp_subscript = map_subscript};

PyTypeObject ffkpy_MapBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.MapBase",
    .tp_basicsize = sizeof(ffkpy_Mapping),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MAPPING,
    .tp_new = map_new,
    .tp_dealloc = map_dealloc,
    .tp_traverse = map_traverse,
    .tp_clear = map_clear,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &map_as_mapping,
    .tp_hash = ffkpy_container__hash,
    .tp_richcompare = map_richcompare,
    .tp_iter = map_iter,
    .tp_methods = map_methods,
};

/* ---- Dict ------------------------------------------------------------------------------ */

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
  if (!ffkpy_container__check_nargs("pop", nargs, 1, 2)) return NULL;
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
  if (!ffkpy_container__check_nargs("setdefault", nargs, 1, 2)) return NULL;
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
#ifndef Py_GIL_DISABLED
  map_clear(self); /* the Strings of the entries that went (the cache keeps them alive) */
#endif
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
  ffk_dict *d = ffk_dict_from_map_steal(m); /* the snapshot's entries move */
  return ffkpy_container__wrap(Py_TYPE(self), (ffk_object *)d);
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
    .tp_basicsize = sizeof(ffkpy_Mapping), /* MapBase's layout; the cache stays NULL */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MAPPING,
    .tp_new = dict_new,
    .tp_traverse = map_traverse,
    .tp_clear = map_clear,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &dict_as_mapping,
    .tp_hash = ffkpy_container__hash,
    .tp_richcompare = map_richcompare,
    .tp_iter = map_iter,
    .tp_methods = dict_methods,
};
