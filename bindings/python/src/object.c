/*
 * object.c - ffikit.Object (the base of every wrapper), the class table that maps ffikit
 * type indices to wrapper classes, and the Opaque objects that carry Python objects
 * through C. ffikit.Error lives in error_type.c, the test hooks in debug_hooks.c.
 *
 * A wrapper's class is looked up by its object's type index: classes registered by the
 * Python modules for the static types (Array, Map, ...), and for a type registered at
 * run time an auto-made subclass named after its type key, cached. A wrapper holds one
 * strong reference and releases it in tp_dealloc; identity (same_as, ==, hash) is the
 * handle's address unless a subclass decides otherwise.
 *
 * Construction: ffikit.Object's __new__/__init__ construct objects of reflected types
 * (reflect.c) from the class's __ffi_type_index__. A class that keeps both constructs in
 * __new__ (its vectorcall skips the argument tuple); one whose body defines __init__ gets
 * a wrapper with no handle from __new__, which that __init__ fills by calling
 * self.__ffi_init__(...) (or super().__init__(...), or tvm_ffi's
 * __init_handle_by_constructor__). Only such a not-yet-constructed wrapper has a NULL
 * handle; every method here and the conversions check for it.
 *
 * Identity map (py_class types, see reflect.c): a table from a C object to its one live
 * wrapper, guarded by the GIL; an entry is added when a wrapper of a tracked class gets
 * its handle (ffkpy_reflect_fill) and removed in the wrapper's dealloc before the handle
 * is released. Converting such an object to Python returns its wrapper. Beside it, a
 * small array of counters indexed by a hash of the C address (atomic, readable without
 * the GIL) says which objects may have a wrapper, so that a field write hook on a thread
 * without the GIL takes it only when a wrapper may exist.
 *
 * This file is the bottom of the extension: it calls no file above it directly. What it
 * needs from them (raising an ffikit error, a Function wrapper's vectorcall, a reflected
 * class's construction and field slots, the Tensor class) it reaches through the table
 * ffkpy_up (ffikit_py.h), which module.c fills before any type is readied.
 */
#include "ffikit_py.h"

#include <structmember.h>

ffkpy_state ffkpy_g;
ffkpy_up_table ffkpy_up;

/* ---- Opaque objects holding Python objects ------------------------------------------ */

void ffkpy_opaque_release(void *handle) {
  /* The last reference may be dropped on any thread, with or without the GIL. */
  if (!Py_IsInitialized()) return; /* at exit: the interpreter has gone; leak quietly */
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)handle);
  PyGILState_Release(g);
}

ffk_object *ffkpy_opaque_new_steal(PyObject *o) {
  return ffk_opaque_new_typed(ffkpy_g.opaque_py_type, o, ffkpy_opaque_release);
}

/* ---- The class table ----------------------------------------------------------------- */

static PyObject *ffkpy_class_for_slow(int32_t type_index);

/* The classes of the static type indices (borrowed from dynamic_classes), so that wrapping
 * a container's element costs no dict lookup; cleared whenever the table changes. */
static PyObject *g_static_classes[FFK_TYPE_STATIC_END];

/* The same for the registered types met last (direct-mapped by type index), so that
 * wrapping a py_class object costs no PyLong key and dict lookup either (a structural walk
 * hands its callback a new wrapper at every node); cleared with g_static_classes. */
#define DYNAMIC_CLASS_CACHE 64
static struct {
  int32_t type_index; /* 0 (a static type, never cached here): an empty slot */
  PyObject *cls;      /* borrowed from dynamic_classes */
} g_dynamic_classes[DYNAMIC_CLASS_CACHE];

PyObject *ffkpy_class_for(int32_t type_index) {
  if (type_index >= 0 && type_index < FFK_TYPE_STATIC_END && g_static_classes[type_index] != NULL)
    return g_static_classes[type_index];
  size_t slot = (uint32_t)type_index % DYNAMIC_CLASS_CACHE;
  if (type_index >= FFK_TYPE_STATIC_END && g_dynamic_classes[slot].type_index == type_index)
    return g_dynamic_classes[slot].cls;
  PyObject *cls = ffkpy_class_for_slow(type_index);
  if (cls != NULL && type_index >= 0 && type_index < FFK_TYPE_STATIC_END) g_static_classes[type_index] = cls;
  if (cls != NULL && type_index >= FFK_TYPE_STATIC_END) {
    g_dynamic_classes[slot].type_index = type_index;
    g_dynamic_classes[slot].cls = cls;
  }
  return cls;
}

static PyObject *ffkpy_class_for_slow(int32_t type_index) {
  PyObject *key = PyLong_FromLong(type_index);
  if (key == NULL) return NULL;
  PyObject *cls = PyDict_GetItemWithError(ffkpy_g.dynamic_classes, key);
  if (cls != NULL || PyErr_Occurred()) {
    Py_DECREF(key);
    return cls;
  }
  /* Not yet known: the nearest registered ancestor's class, or a new subclass of it. */
  int32_t parent = ffk_type_parent(type_index);
  PyObject *parent_cls = parent >= 0 ? ffkpy_class_for(parent) : (PyObject *)&ffkpy_ObjectType;
  if (parent_cls == NULL) {
    Py_DECREF(key);
    return NULL;
  }
  const char *type_key = ffk_type_key(type_index);
  if (type_index < FFK_TYPE_STATIC_END || type_key == NULL || ffkpy_g.make_class == NULL) {
    cls = parent_cls; /* a static type without a class of its own: its parent's */
    Py_INCREF(cls);
  } else {
    cls = PyObject_CallFunction(ffkpy_g.make_class, "sO", type_key, parent_cls);
    if (cls == NULL) {
      Py_DECREF(key);
      return NULL;
    }
  }
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, key, cls);
  Py_DECREF(key);
  Py_DECREF(cls); /* the table keeps it */
  return rc == 0 ? cls : NULL;
}

/* ---- Class attributes, the reflected type index, a reflected instance's handle -------- */

/*
 * _PyType_Lookup (borrowed, cached by CPython), keeping an exception that is pending when
 * it is called. On a miss of CPython's type attribute cache it walks the MRO and takes
 * any exception set after a dict lookup as its own, and clears it: a wrapper freed while
 * an error propagates (the arguments of a call that raised are released after it
 * returned) lost that error, and the caller got "SystemError: error return without
 * exception set" (pickle.dumps of an object whose __reduce__ raised, whenever the cache
 * missed). Deallocs and write hooks run with such errors pending.
 */
PyObject *ffkpy_type_lookup(PyTypeObject *type, PyObject *name) {
  if (FFK_LIKELY(!PyErr_Occurred())) return _PyType_Lookup(type, name);
  PyObject *exc_type, *exc_value, *exc_tb; /* PyErr_Fetch: Python 3.10 lacks PyErr_GetRaisedException */
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
  PyObject *found = _PyType_Lookup(type, name);
  PyErr_Restore(exc_type, exc_value, exc_tb);
  return found;
}

static PyObject *g_str_type_index; /* interned "__ffi_type_index__" */

int32_t ffkpy_reflect_index(PyTypeObject *type) {
  PyObject *v = ffkpy_type_lookup(type, g_str_type_index);
  if (v == NULL || !PyLong_CheckExact(v)) return -1;
  int overflow; /* no exception of its own: a pending one stays (see ffkpy_type_lookup) */
  long index = PyLong_AsLongAndOverflow(v, &overflow);
  if (overflow || index < 0 || index > INT32_MAX) return -1;
  return (int32_t)index;
}

/* The handle of `o` when it is an initialized wrapper, else NULL with a TypeError naming
 * what the descriptor `what` of type `type_index` was applied to. */
ffk_object *ffkpy_instance_handle(PyObject *o, const char *what, int32_t type_index) {
  if (PyObject_TypeCheck(o, &ffkpy_ObjectType)) {
    ffk_object *h = ((ffkpy_Object *)o)->obj;
    if (h != NULL) return h;
    PyErr_Format(PyExc_TypeError, "`%s` of `%s`: the %s object has not been constructed (its __init__ did not "
                 "call __ffi_init__)", what, ffk_type_key(type_index), Py_TYPE(o)->tp_name);
    return NULL;
  }
  PyErr_Format(PyExc_TypeError, "`%s` of `%s` does not apply to a '%s' object", what, ffk_type_key(type_index),
               Py_TYPE(o)->tp_name);
  return NULL;
}

/* ---- Identity map: one wrapper per C object of a tracked (py_class) class -------------- */

typedef struct {
  ffk_object *key; /* NULL empty, ID_GONE removed */
  PyObject *wrapper;
} id_entry;

#define ID_GONE ((ffk_object *)(uintptr_t)1)
#define ID_MAYBE 1024

static id_entry *g_ids;
static size_t g_ids_cap, g_ids_used, g_ids_live; /* used counts removed entries too */
/*
 * Per hash bucket, how many entries of the map fall in it: atomic words that only the
 * GIL holder changes, and that a field writer on any thread reads with a seq_cst RMW
 * (ffkpy_identity_maybe). They also order a wrapper's registration against such a write
 * (a Dekker pair on the bucket's word): the registering thread raises the count with a
 * seq_cst RMW, then reads the fields; the writing thread stores the field, then does its
 * seq_cst RMW on the same word. RMWs on one word are totally ordered and each reads the
 * one before it, so whichever comes second synchronizes with the first: either the
 * registering thread reads the new field value, or the writer sees the count and reloads
 * the slot. A removal lowers the count with a plain release store (an RMW cannot lose
 * it): a writer that still sees the old count only reloads a slot it did not need to.
 * (RMWs rather than fences, which ThreadSanitizer does not model; one locked instruction
 * per registration and none per removal, where a shared order word took three.)
 */
static uint32_t g_id_maybe[ID_MAYBE];

static inline size_t id_hash(const ffk_object *obj) {
  return (size_t)(((uintptr_t)obj >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 24);
}

int ffkpy_identity_maybe(const ffk_object *obj) {
  return __atomic_fetch_add(&g_id_maybe[id_hash(obj) & (ID_MAYBE - 1)], 0, __ATOMIC_SEQ_CST) != 0; /* g_id_maybe */
}

PyObject *ffkpy_identity_find(const ffk_object *obj) {
  if (g_ids_live == 0) return NULL;
  size_t mask = g_ids_cap - 1;
  for (size_t i = id_hash(obj) & mask;; i = (i + 1) & mask) {
    if (g_ids[i].key == obj) return g_ids[i].wrapper;
    if (g_ids[i].key == NULL) return NULL;
  }
}

/* Rebuilds the table with room for one more live entry (at most half full). 0 or -1. */
static int id_grow(void) {
  size_t cap = g_ids_cap ? g_ids_cap : 64;
  while ((g_ids_live + 1) * 2 > cap) cap *= 2;
  id_entry *fresh = PyMem_RawCalloc(cap, sizeof *fresh);
  if (fresh == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t j = 0; j < g_ids_cap; ++j) {
    if (g_ids[j].key == NULL || g_ids[j].key == ID_GONE) continue;
    size_t i = id_hash(g_ids[j].key) & (cap - 1);
    while (fresh[i].key != NULL) i = (i + 1) & (cap - 1);
    fresh[i] = g_ids[j];
  }
  PyMem_RawFree(g_ids);
  g_ids = fresh;
  g_ids_cap = cap;
  g_ids_used = g_ids_live;
  return 0;
}

int ffkpy_identity_add(ffk_object *obj, PyObject *wrapper) {
  if ((g_ids_used + 1) * 2 > g_ids_cap && id_grow() != 0) return -1;
  size_t mask = g_ids_cap - 1, i = id_hash(obj) & mask;
  while (g_ids[i].key != NULL && g_ids[i].key != ID_GONE) i = (i + 1) & mask;
  if (g_ids[i].key == NULL) ++g_ids_used;
  g_ids[i] = (id_entry){obj, wrapper};
  ++g_ids_live;
  __atomic_add_fetch(&g_id_maybe[id_hash(obj) & (ID_MAYBE - 1)], 1, __ATOMIC_SEQ_CST); /* before the caller reads the fields */
  return 0;
}

void ffkpy_identity_remove(const ffk_object *obj, PyObject *wrapper) {
  if (g_ids_live == 0 || obj == NULL) return;
  size_t mask = g_ids_cap - 1;
  for (size_t i = id_hash(obj) & mask; g_ids[i].key != NULL; i = (i + 1) & mask) {
    if (g_ids[i].key != obj) continue;
    if (g_ids[i].wrapper != wrapper) return; /* another wrapper's entry */
    g_ids[i] = (id_entry){ID_GONE, NULL};
    /* An entry that ends a probe chain (an empty slot next) and the removed ones before it
       become empty again, so that a table whose wrappers come and go (a walk handing each
       node to a callback) keeps short chains instead of filling with removed entries. */
    if (g_ids[(i + 1) & mask].key == NULL) {
      for (size_t j = i; g_ids[j].key == ID_GONE; j = (j - 1) & mask) {
        g_ids[j].key = NULL;
        --g_ids_used;
      }
    }
    --g_ids_live;
    uint32_t *count = &g_id_maybe[id_hash(obj) & (ID_MAYBE - 1)];
    __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) - 1, __ATOMIC_RELEASE);
    return;
  }
}

Py_ssize_t ffkpy_identity_count(void) { return (Py_ssize_t)g_ids_live; }

/*
 * A wrapper of a static class whose instances can never be part of a reference cycle
 * (ffikit.Tensor exactly: no __dict__, and its traverse visits nothing), left untracked by
 * the garbage collector as CPython leaves an atomic tuple: the class stays a GC type for
 * its Python subclasses, and dealloc's PyObject_GC_UnTrack is a no-op for it. Making it
 * costs no zeroing of the whole object and no tracking or untracking (about 60 of the
 * instructions of a from_dlpack). Steals `obj`; new reference or NULL.
 */
static PyObject *wrap_untracked(PyTypeObject *tp, ffk_object *obj) {
  ffkpy_Object *self = PyObject_GC_New(ffkpy_Object, tp);
  if (self == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  self->obj = obj;
  self->weakreflist = NULL;
  self->dlpack_api = NULL;
  self->field_cache = NULL;
  return (PyObject *)self;
}

/* ---- A spare wrapper for callbacks ---------------------------------------------------- */

/*
 * A structural walk hands each node to a Python callback as a new wrapper, which the
 * callback usually drops: making and freeing it was a third of a no-op callback's cost.
 * ffkpy_wrapper_drop keeps one such wrapper, once nothing else holds it, as a spare that
 * ffkpy_wrap_steal takes for the next object of the same class. A spare is dead to Python:
 * no reference, no weak reference, no __dict__, no finalizer, no slot of its own beyond the
 * field cache (all checked), untracked by the garbage collector, its handle released and
 * its identity map entry removed when it was kept; it holds a reference to its class only.
 * Guarded by the GIL; ffkpy_wrapper_spare_flush frees it (after each Function call from
 * Python, so a class is not kept alive past the call that used it). Not in a free-threaded
 * build, where a count of 1 proves nothing.
 */
#ifndef Py_GIL_DISABLED
PyObject *ffkpy_spare; /* read inline by ffkpy_wrapper_spare_flush (ffikit_py.h) */
#endif

/* Whether wrapper `o`, which nothing else holds, can be the spare (see above). */
static int spare_fits(PyObject *o) {
  ffkpy_Object *w = (ffkpy_Object *)o;
  PyTypeObject *tp = Py_TYPE(o);
  return w->obj != NULL && w->field_cache != NULL && w->weakreflist == NULL && w->dlpack_api == NULL &&
         (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && tp->tp_dictoffset == 0 && tp->tp_finalize == NULL &&
         tp->tp_del == NULL && ffkpy_up.reflect_plain_layout(tp, w->field_cache);
}

void ffkpy_wrapper_drop(PyObject *o, const ffk_any *from) {
#ifndef Py_GIL_DISABLED
  if (ffkpy_spare == NULL && Py_REFCNT(o) == 1 && ffkpy_wraps_registered(from)) { /* o is an ffkpy_Object */
    ffkpy_Object *w = (ffkpy_Object *)o;
    if (spare_fits(o)) {
      ffk_object *obj = w->obj;
      ffkpy_up.reflect_clear(o); /* the slots and the identity map entry, before the release */
      w->obj = NULL; /* field_cache stays: the class's, which the reuse's fill takes as is */
      PyObject_GC_UnTrack(o);
      ffkpy_spare = o;
      ffk_object_release(obj); /* deleters may run Python: the spare is already out of reach */
      return;
    }
  }
  (void)from;
#endif
  Py_DECREF(o);
}

void ffkpy_wrapper__spare_free(void) {
#ifndef Py_GIL_DISABLED
  PyObject *o = ffkpy_spare;
  if (o == NULL) return;
  ffkpy_spare = NULL;
  Py_DECREF(o); /* a handle-less wrapper: its dealloc releases nothing */
#endif
}

/* The spare, when it is of class `tp`, with `obj` (stolen) as its handle and tracked again;
   NULL when there is none of that class. */
static ffkpy_Object *take_spare(PyTypeObject *tp, ffk_object *obj) {
#ifndef Py_GIL_DISABLED
  if (ffkpy_spare == NULL || Py_TYPE(ffkpy_spare) != tp) return NULL;
  ffkpy_Object *self = (ffkpy_Object *)ffkpy_spare;
  ffkpy_spare = NULL;
  self->obj = obj;
  PyObject_GC_Track(self);
  return self;
#else
  (void)tp, (void)obj;
  return NULL;
#endif
}

/* ---- A lent handle for a callback's argument -------------------------------------------- */

/*
 * A callback's arguments are borrowed from its caller for the call (the packed-call rule),
 * so a wrapper that the spare becomes for one of them can borrow its handle too: no
 * reference taken before the call and none released after it, which were two of a walk's
 * atomic count updates per node. The record `lent` (the caller's, on its stack) names the
 * one wrapper so made, innermost call first in g_lent; after the call
 * ffkpy_wrapper_drop_lent makes it the spare again, or, when the callback kept it, takes
 * the reference it then needs. Code that releases or replaces a wrapper's handle before
 * (a second __init__, a dealloc) first calls ffkpy_wrapper_own, which takes the reference
 * and strikes the record. Guarded by the GIL, as the spare is.
 */
#ifndef Py_GIL_DISABLED
static ffkpy_lent *g_lent;
#endif

void ffkpy_wrapper_own(PyObject *self) {
#ifndef Py_GIL_DISABLED
  for (ffkpy_lent *l = g_lent; l != NULL; l = l->outer) {
    if (l->wrapper != self) continue;
    ffk_object_retain(l->obj);
    l->wrapper = NULL;
    return;
  }
#endif
  (void)self;
}

PyObject *ffkpy_wrap_lent(ffk_object *obj, ffkpy_lent *lent) {
#ifndef Py_GIL_DISABLED
  if (ffkpy_spare != NULL && obj->type_index >= FFK_TYPE_STATIC_END) {
    PyObject *cls = ffkpy_class_for(obj->type_index);
    if (cls == NULL) return NULL;
    PyObject *existing = g_ids_live != 0 ? ffkpy_identity_find(obj) : NULL;
    if (existing != NULL) return Py_NewRef(existing); /* holds its own reference */
    ffkpy_Object *self = take_spare((PyTypeObject *)cls, obj);
    if (self != NULL) {
      *lent = (ffkpy_lent){(PyObject *)self, obj, g_lent};
      g_lent = lent;
      if (ffkpy_up.reflect_fill_unwrapped((PyObject *)self) != 0) {
        ffkpy_wrapper_drop_lent((PyObject *)self, lent); /* the spare again, slots and entry cleared */
        return NULL;
      }
      return (PyObject *)self;
    }
  }
#endif
  ffk_object_retain(obj);
  return ffkpy_wrap_steal(obj);
}

void ffkpy_wrapper_drop_lent(PyObject *o, ffkpy_lent *lent) {
#ifndef Py_GIL_DISABLED
  /* Innermost first as a rule, but not always (a greenlet switching inside a callback):
     unlinked wherever it is. */
  for (ffkpy_lent **at = &g_lent; *at != NULL; at = &(*at)->outer) {
    if (*at != lent) continue;
    *at = lent->outer;
    break;
  }
  if (lent->wrapper == o) { /* still lent: the spare again, or owned from now on */
    ffkpy_Object *w = (ffkpy_Object *)o;
    if (ffkpy_spare == NULL && Py_REFCNT(o) == 1 && spare_fits(o)) {
      ffkpy_up.reflect_clear(o);
      w->obj = NULL;
      PyObject_GC_UnTrack(o);
      ffkpy_spare = o;
      return;
    }
    ffk_object_retain(lent->obj);
  }
#else
  (void)lent;
#endif
  Py_DECREF(o);
}

PyObject *ffkpy_wrap_steal(ffk_object *obj) {
  PyObject *cls = ffkpy_class_for(obj->type_index); /* first: making a class runs Python */
  if (cls == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  if (obj->type_index >= FFK_TYPE_STATIC_END && g_ids_live != 0) {
    PyObject *existing = ffkpy_identity_find(obj); /* a py_class object's one wrapper */
    if (existing != NULL) {
      Py_INCREF(existing);
      ffk_object_release(obj); /* the wrapper holds its own reference */
      return existing;
    }
  }
  /* obj has no wrapper here; tp_alloc below may run a collection (and finalizers), so only
     the spare's path, which allocates nothing, fills without looking again. */
  PyTypeObject *tp = (PyTypeObject *)cls;
  if (tp == ffkpy_up.tensor_type) return wrap_untracked(tp, obj);
  ffkpy_Object *self = obj->type_index >= FFK_TYPE_STATIC_END ? take_spare(tp, obj) : NULL;
  if (self != NULL) { /* a reflected class's wrapper (the spare's class is one): no wrapper yet */
    if (ffkpy_up.reflect_fill_unwrapped((PyObject *)self) != 0) {
      Py_DECREF(self);
      return NULL;
    }
    return (PyObject *)self;
  }
  self = (ffkpy_Object *)tp->tp_alloc(tp, 0);
  if (self == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  self->obj = obj;
  if (tp == ffkpy_up.function_type || PyType_IsSubtype(tp, ffkpy_up.function_type)) {
    ((ffkpy_Function *)self)->vectorcall = ffkpy_up.function_vectorcall;
    /* A quick Function (FFK_FUNCTION_QUICK: never waits on Python) keeps the GIL. */
    ((ffkpy_Function *)self)->release_gil = (ffk_function_flags((ffk_function *)obj) & FFK_FUNCTION_QUICK) == 0;
    ((ffkpy_Function *)self)->exchange_tensors = 1;
  } else if (obj->type_index >= FFK_TYPE_STATIC_END && (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) &&
             ffkpy_up.reflect_fill((PyObject *)self) != 0) { /* a reflected class's field slots */
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

/* _register_class(type_index, cls): cls wraps objects of that type (and untaken subtypes). */
static PyObject *register_class(PyObject *mod, PyObject *args) {
  (void)mod;
  int type_index;
  PyObject *cls;
  if (!PyArg_ParseTuple(args, "iO!:_register_class", &type_index, &PyType_Type, &cls)) return NULL;
  if (!PyType_IsSubtype((PyTypeObject *)cls, &ffkpy_ObjectType))
    return PyErr_Format(PyExc_TypeError, "_register_class: %R is not a subclass of ffikit.Object", cls);
  PyObject *key = PyLong_FromLong(type_index);
  if (key == NULL || PyDict_SetItem(ffkpy_g.dynamic_classes, key, cls) != 0) {
    Py_XDECREF(key);
    return NULL;
  }
  Py_DECREF(key);
  memset(g_static_classes, 0, sizeof g_static_classes); /* subtypes may have taken the old class */
  memset(g_dynamic_classes, 0, sizeof g_dynamic_classes); /* and the entries below may be dropped */
  /* Auto-made classes of subtypes were made from the old class: drop them, so that they
     are made again under cls (isinstance follows the C parent chain). */
  PyObject *stale = PyList_New(0);
  if (stale == NULL) return NULL;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(ffkpy_g.dynamic_classes, &pos, &k, &v)) {
    int32_t sub = (int32_t)PyLong_AsLong(k);
    if (sub != type_index && PyType_Check(v) && ((PyTypeObject *)v)->tp_dict != NULL &&
        PyDict_GetItemString(((PyTypeObject *)v)->tp_dict, "__ffi_auto_class__") != NULL &&
        ffk_type_is_instance(sub, type_index) && PyList_Append(stale, k) != 0) {
      Py_DECREF(stale);
      return NULL;
    }
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(stale); ++i)
    if (PyDict_DelItem(ffkpy_g.dynamic_classes, PyList_GET_ITEM(stale, i)) != 0) {
      Py_DECREF(stale);
      return NULL;
    }
  Py_DECREF(stale);
  Py_RETURN_NONE;
}

/* ---- ffikit.Object -------------------------------------------------------------------- */

static void object_dealloc(PyObject *self) {
  ffkpy_Object *o = (ffkpy_Object *)self;
  PyObject_GC_UnTrack(self);
  if (o->weakreflist != NULL) PyObject_ClearWeakRefs(self);
  ffk_object *obj = o->obj;
  if ((Py_TYPE(self)->tp_flags & Py_TPFLAGS_HEAPTYPE) && (obj == NULL || obj->type_index >= FFK_TYPE_STATIC_END))
    ffkpy_up.reflect_clear(self); /* the field slots and the identity map entry, before the release */
#ifndef Py_GIL_DISABLED
  if (g_lent != NULL) ffkpy_wrapper_own(self); /* a lent handle (never while its call runs: its caller holds it) */
#endif
  o->obj = NULL;
  /* Releasing may run deleters (a Python callable's, an Opaque's) that take the GIL: we hold it. */
  ffk_object_release(obj);
  Py_TYPE(self)->tp_free(self);
}

int ffkpy_object_traverse(PyObject *self, visitproc visit, void *arg) {
  if (Py_TYPE(self)->tp_flags & Py_TPFLAGS_HEAPTYPE) Py_VISIT(Py_TYPE(self)); /* subclasses made in Python */
  return 0;
}

static int object_init(PyObject *self, PyObject *args, PyObject *kwds);

static PyObject *object_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  int32_t index = ffkpy_reflect_index(type);
  if (index < 0) return PyErr_Format(PyExc_TypeError, "cannot create '%s' instances directly", type->tp_name);
  if (type->tp_init == object_init) return ffkpy_up.reflect_new(type, index, args, kwds);
  return type->tp_alloc(type, 0); /* the class's own __init__ constructs (handle NULL until then) */
}

/* Object.__init__: constructs a wrapper that __new__ left without a handle (a class with
   its own __init__ calling super().__init__(...)); a no-op for a constructed one. */
static int object_init(PyObject *self, PyObject *args, PyObject *kwds) {
  if (((ffkpy_Object *)self)->obj != NULL) return 0;
  int32_t index = ffkpy_reflect_index(Py_TYPE(self));
  if (index < 0) {
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances directly", Py_TYPE(self)->tp_name);
    return -1;
  }
  return ffkpy_up.reflect_init(self, index, args, kwds);
}

int ffkpy_reflect_ready(PyTypeObject *type) { return type->tp_new == object_new && type->tp_init == object_init; }

/* __ffi_init__(*args, **kwargs): constructs a wrapper whose class's __init__ is its own,
   by the constructor of the class's reflected type. */
static PyObject *object_ffi_init(PyObject *self, PyObject *args, PyObject *kwds) {
  if (((ffkpy_Object *)self)->obj != NULL)
    return PyErr_Format(PyExc_RuntimeError, "__ffi_init__: this %s object is constructed already",
                        Py_TYPE(self)->tp_name);
  if (object_init(self, args, kwds) != 0) return NULL;
  Py_RETURN_NONE;
}

/* __init_handle_by_constructor__(constructor, *args): tvm_ffi's way for an __init__ to
   construct: calls constructor(*args) and takes the object it returns as the handle. */
static PyObject *object_init_by_constructor(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1 || !PyCallable_Check(args[0]))
    return PyErr_Format(PyExc_TypeError, "__init_handle_by_constructor__(constructor, *args) needs a callable");
  if (((ffkpy_Object *)self)->obj != NULL)
    return PyErr_Format(PyExc_RuntimeError, "__init_handle_by_constructor__: this %s object is constructed already",
                        Py_TYPE(self)->tp_name);
  PyObject *r = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
  if (r == NULL) return NULL;
  ffk_object *h = ffkpy_handle(r);
  if (h == NULL || !PyObject_TypeCheck(r, &ffkpy_ObjectType)) {
    PyErr_Format(PyExc_TypeError, "__init_handle_by_constructor__: the constructor returned %R, not an ffikit object",
                 r);
    Py_DECREF(r);
    return NULL;
  }
  int32_t want = ffkpy_reflect_index(Py_TYPE(self));
  if (want >= 0 && !ffk_object_is_instance(h, want)) {
    PyErr_Format(PyExc_TypeError, "__init_handle_by_constructor__: the constructor returned a `%s`, not a `%s`",
                 ffk_type_key(h->type_index), ffk_type_key(want));
    Py_DECREF(r);
    return NULL;
  }
  ffk_object_retain(h);
  ((ffkpy_Object *)self)->obj = h;
  Py_DECREF(r);
  if (ffkpy_up.reflect_fill(self) != 0) return NULL;
  Py_RETURN_NONE;
}

/* The handle of self for a method, or NULL with a TypeError for a wrapper not constructed yet. */
static ffk_object *constructed(PyObject *self) {
  ffk_object *h = ((ffkpy_Object *)self)->obj;
  if (h == NULL)
    PyErr_Format(PyExc_TypeError, "this %s object has not been constructed (its __init__ did not call __ffi_init__)",
                 Py_TYPE(self)->tp_name);
  return h;
}

static PyObject *object_repr(PyObject *self) {
  if (((ffkpy_Object *)self)->obj == NULL) return PyUnicode_FromFormat("<%s (not constructed)>", Py_TYPE(self)->tp_name);
  ffk_any v = ffk_any_object(((ffkpy_Object *)self)->obj); /* a new reference for the repr */
  ffk_string *r = ffk_any_repr(&v);
  ffk_any_release(&v);
  if (r == NULL) return ffkpy_up.raise_from_ffk();
  PyObject *s = PyUnicode_DecodeUTF8(ffk_string_data(r), (Py_ssize_t)ffk_string_size(r), "replace");
  ffk_object_release(&r->header);
  return s;
}

static Py_hash_t object_hash(PyObject *self) {
  if (((ffkpy_Object *)self)->obj == NULL) return ffkpy_hash_pointer(self); /* not constructed: itself */
  return ffkpy_hash_pointer(((ffkpy_Object *)self)->obj);
}

static PyObject *object_richcompare(PyObject *self, PyObject *other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, &ffkpy_ObjectType)) Py_RETURN_NOTIMPLEMENTED;
  ffk_object *a = ((ffkpy_Object *)self)->obj, *b = ((ffkpy_Object *)other)->obj;
  int same = a != NULL ? a == b : self == other;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

/* same_as(other): the same C object (a String/Bytes/Shape passes through its cached object). */
static PyObject *object_same_as(PyObject *self, PyObject *other) {
  ffk_object *h = ffkpy_handle(other);
  if (h == NULL && !PyObject_TypeCheck(other, &ffkpy_ObjectType)) {
    PyObject *cached = PyObject_GetAttr(other, ffkpy_g.str_ffikit_object);
    if (cached == NULL) {
      PyErr_Clear();
      Py_RETURN_FALSE;
    }
    h = ffkpy_handle(cached);
    Py_DECREF(cached);
  }
  return PyBool_FromLong(h != NULL && h == ((ffkpy_Object *)self)->obj); /* NULL handles are never the same */
}

static PyObject *object_chandle(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromVoidPtr(((ffkpy_Object *)self)->obj);
}

static PyObject *object_type_index(PyObject *self, void *closure) {
  (void)closure;
  ffk_object *h = constructed(self);
  return h != NULL ? PyLong_FromLong(h->type_index) : NULL;
}

static PyObject *object_type_key(PyObject *self, void *closure) {
  (void)closure;
  ffk_object *h = constructed(self);
  if (h == NULL) return NULL;
  const char *key = ffk_type_key(h->type_index);
  return PyUnicode_FromString(key ? key : "<unknown>");
}

static PyObject *object_use_count(PyObject *self, PyObject *unused) {
  (void)unused;
  ffk_object *h = constructed(self);
  if (h == NULL) return NULL;
  return PyLong_FromUnsignedLong(ffk_object_use_count(h));
}

static PyMethodDef object_methods[] = {
    {"same_as", object_same_as, METH_O, "same_as(other) -> bool: whether both stand for the same C object."},
    {"__chandle__", object_chandle, METH_NOARGS, "The address of the C object, as an int."},
    {"_use_count", object_use_count, METH_NOARGS, "The C object's strong reference count (a snapshot)."},
    {"__ffi_init__", (PyCFunction)(void (*)(void))object_ffi_init, METH_VARARGS | METH_KEYWORDS,
     "__ffi_init__(*args, **kwargs): constructs this object by its reflected type's constructor; for an\n"
     "__init__ that a class defines itself. RuntimeError when it is constructed already."},
    {"__init_handle_by_constructor__", (PyCFunction)(void (*)(void))object_init_by_constructor, METH_FASTCALL,
     "__init_handle_by_constructor__(constructor, *args): constructs this object as constructor(*args)\n"
     "(tvm_ffi's protocol for a custom __init__); TypeError when it returns something else."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef object_getset[] = {
    {"type_index", object_type_index, NULL, "The ffikit type index of the C object.", NULL},
    {"type_key", object_type_key, NULL, "The ffikit type key (\"ffikit.Array\", \"mylib.Point\").", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ffkpy_ObjectType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Object",
    .tp_doc = "The base class of every ffikit object: a handle holding one reference to a C object.\n\n"
              "Equality and hashing are by identity of the C object unless a subclass says otherwise.",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = object_new,
    .tp_init = object_init,
    .tp_dealloc = object_dealloc,
    .tp_traverse = ffkpy_object_traverse,
    .tp_repr = object_repr,
    .tp_hash = object_hash,
    .tp_richcompare = object_richcompare,
    .tp_weaklistoffset = offsetof(ffkpy_Object, weakreflist),
    .tp_methods = object_methods,
    .tp_getset = object_getset,
};

/* ---- Module functions ------------------------------------------------------------------ */

/* _type_key_to_index(key) -> int or None. */
static PyObject *type_key_to_index(PyObject *mod, PyObject *arg) {
  (void)mod;
  const char *key = PyUnicode_AsUTF8(arg);
  if (key == NULL) return NULL;
  int32_t index;
  int rc = ffk_type_lookup(key, &index);
  if (rc < 0) return ffkpy_up.raise_from_ffk();
  if (rc == 0) Py_RETURN_NONE;
  return PyLong_FromLong(index);
}

/* _type_register(key, parent_index) -> the type index (for tests and user types). */
static PyObject *type_register(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *key;
  int parent = FFK_TYPE_OBJECT;
  if (!PyArg_ParseTuple(args, "s|i:_type_register", &key, &parent)) return NULL;
  int32_t index = ffk_type_register(key, parent);
  if (index < 0) return ffkpy_up.raise_from_ffk();
  return PyLong_FromLong(index);
}

PyMethodDef ffkpy_object_methods[] = {
    {"_register_class", register_class, METH_VARARGS, NULL},
    {"_type_key_to_index", type_key_to_index, METH_O, NULL},
    {"_type_register", type_register, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int ffkpy_object_types_init(PyObject *module) {
  if (PyType_Ready(&ffkpy_ObjectType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Object", (PyObject *)&ffkpy_ObjectType) < 0) return -1;
  ffkpy_g.dynamic_classes = PyDict_New();
  ffkpy_g.type_cache = PyDict_New();
  ffkpy_g.dtype_cache = PyDict_New();
  ffkpy_g.str_ffikit_object = PyUnicode_InternFromString("_ffikit_object");
  ffkpy_g.str_dlpack = PyUnicode_InternFromString("__dlpack__");
  g_str_type_index = PyUnicode_InternFromString("__ffi_type_index__");
  ffkpy_g.string_slot = -1;
  /* tvm_ffi's type key for Python objects in C: typed-call messages name it. */
  ffkpy_g.opaque_py_type = ffk_type_register("ffi.OpaquePyObject", FFK_TYPE_OPAQUE);
  if (ffkpy_g.opaque_py_type < 0) {
    ffkpy_up.raise_from_ffk();
    return -1;
  }
  if (!ffkpy_g.dynamic_classes || !ffkpy_g.type_cache || !ffkpy_g.dtype_cache || !ffkpy_g.str_ffikit_object ||
      !ffkpy_g.str_dlpack || !g_str_type_index)
    return -1;
  /* The static wrapper class of this file; error_type.c and the Python modules register the rest. */
  PyObject *k = PyLong_FromLong(FFK_TYPE_OBJECT);
  if (k == NULL) return -1;
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, k, (PyObject *)&ffkpy_ObjectType);
  Py_DECREF(k);
  return rc;
}
