/*
 * reflect_cache.c - the field cache of reflected classes: int, float and bool fields kept
 * as Python values in slots of the wrapper itself (read-only ones always; writable ones of
 * py_class "tracked" classes too), filled when a wrapper is made, kept coherent with C
 * by the type's field write hook (ffk_type_set_field_write_hook) and the identity map of
 * object.c. reflect.c's header states the invariants; docs/design.md, "Bindings", the
 * contract.
 */
#include "ffikit_py.h"
#include "reflect_internal.h"

#include <string.h>

#include <ffikit/reflect.h>
#include <ffikit/unstable/reflect.h>

static PyObject *g_str_cache; /* interned "__ffi_field_cache__" */

_Thread_local const ffk_object *ffkpy_reflect__py_writing;

/* obj.<f> = value (or del obj.<f> when value is NULL), decided by C: 0, or -1 with C's
   error. Here, beside the write hook, because of `quiet` (ffkpy_reflect__py_writing). `quiet`: the write hook does not reload obj's slot for this write (the caller
   does). */
int ffkpy_reflect__set_field_as(const ffk_field_info *f, PyObject *obj, PyObject *value, int quiet) {
  if (value == NULL) {
    PyErr_Format(PyExc_AttributeError, "cannot delete field `%s` of `%s`", f->name, ffk_type_key(f->owner_index));
    return -1;
  }
  ffk_object *h = ffkpy_instance_handle(obj, f->name, f->owner_index);
  if (h == NULL) return -1;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any v;
  int rc = ffkpy_to_any(value, &v, &temps);
  if (rc == 0) {
    const ffk_object *outer = ffkpy_reflect__py_writing;
    if (quiet) ffkpy_reflect__py_writing = h;
    if (ffk_field_set(f, h, &v) != 0) rc = ffkpy_raise_from_ffk_int();
    ffkpy_reflect__py_writing = outer;
  }
  ffkpy_temps_release(&temps);
  return rc;
}

int ffkpy_reflect__cache_init(void) {
  g_str_cache = PyUnicode_InternFromString("__ffi_field_cache__");
  return g_str_cache == NULL ? -1 : 0;
}

/* The capsule's name, recognized by address: cache_of runs on every write and reload, and
   PyCapsule_IsValid / GetPointer compare names with strcmp. The pointer is also the
   capsule's context, which PyCapsule_GetContext returns without comparing names. */
static const char CACHE_CAPSULE[] = "ffikit.field_cache";


const ffkpy_field_cache *ffkpy_reflect__cache_of(PyTypeObject *type) {
  PyObject *cap = ffkpy_type_lookup(type, g_str_cache);
  if (cap == NULL || !PyCapsule_CheckExact(cap) || PyCapsule_GetName(cap) != CACHE_CAPSULE) return NULL;
  return PyCapsule_GetContext(cap);
}

/* Loads slot `s` of wrapper `self` from C. 0, or -1 with a Python exception (the slot
   keeps its old value). A cached field is an int, float or bool word (cacheable): read
   with ffk_field_peek_unchecked when h is of the field's own type, which is every fill
   of a wrapper of that type's class; through ffk_field_get, which checks, otherwise. */
static int load_cached(PyObject *self, ffk_object *h, const ffkpy_cache_slot *s) {
  ffk_any v;
  if (h->type_index == s->field->owner_index) {
    ffk_field_peek_unchecked(s->field, h, &v);
  } else if (ffk_field_get(s->field, h, &v) != 0) {
    return ffkpy_raise_from_ffk_int();
  }
  /* ffkpy_from_any's first cases, inline: 20 of a walk's instructions per node (s_walk) */
  PyObject *value = v.type_index == FFK_TYPE_INT     ? PyLong_FromLongLong(v.v_int)
                    : v.type_index == FFK_TYPE_FLOAT ? PyFloat_FromDouble(v.v_float)
                                                     : ffkpy_from_any(&v); /* a word: owns nothing */
  if (value == NULL) return -1;
  Py_XSETREF(*(PyObject **)((char *)self + s->offset), value);
  return 0;
}

/* ffkpy_reflect_fill; `unwrapped`: the caller knows that the handle has no wrapper, and
   the wrapper's field_cache, when set, is its class's (a spare's, object.c). */
static int fill(PyObject *self, int unwrapped) {
  const ffkpy_field_cache *c = ((ffkpy_Object *)self)->field_cache;
  if (!unwrapped || c == NULL) c = ffkpy_reflect__cache_of(Py_TYPE(self));
  ffk_object *h = ((ffkpy_Object *)self)->obj;
  if (c != NULL) ((ffkpy_Object *)self)->field_cache = c; /* for ffkpy_reflect_clear */
  if (c == NULL || h == NULL) return 0;
  if (c->tracked) {
    PyObject *other = unwrapped ? NULL : ffkpy_identity_find(h);
    if (other != NULL && other != self) {
      PyErr_Format(PyExc_TypeError, "this `%s` object already has a Python wrapper (a %s); a py_class object "
                   "has one wrapper, so no second one can take its handle", ffk_type_key(h->type_index),
                   Py_TYPE(other)->tp_name);
      return -1;
    }
    if (other == NULL && ffkpy_identity_add(h, self) != 0) return -1; /* before the reads */
  }
  for (Py_ssize_t i = 0; i < c->n; ++i)
    if (load_cached(self, h, &c->slots[i]) != 0) return -1;
  return 0;
}

int ffkpy_reflect_fill(PyObject *self) { return fill(self, 0); }

int ffkpy_reflect__fill_unwrapped(PyObject *self) { return fill(self, 1); }

int ffkpy_reflect__plain_layout(PyTypeObject *type, const void *cache) {
  return type->tp_basicsize == ((const ffkpy_field_cache *)cache)->end && type->tp_itemsize == 0;
}

void ffkpy_reflect_clear(PyObject *self) {
  const ffkpy_field_cache *c = ((ffkpy_Object *)self)->field_cache; /* no class lookup in a dealloc (ffikit_py.h) */
  if (c != NULL && c->tracked) ffkpy_identity_remove(((ffkpy_Object *)self)->obj, self);
  for (Py_ssize_t i = 0; c != NULL && i < c->n; ++i) Py_CLEAR(*(PyObject **)((char *)self + c->slots[i].offset));
}

static int interpreter_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* The field write hook of tracked types (ffk_type_set_field_write_hook): on the writer's
   thread, with or without the GIL; reloads the slot of obj's wrapper, if it has one and
   its class caches the field. A failed reload (a MemoryError making the Python value) is
   reported as unraisable and keeps the old value. Nothing while the interpreter exits. */
void ffkpy_reflect__field_written(ffk_object *obj, const ffk_field_info *field) {
  if (obj == ffkpy_reflect__py_writing) return; /* cached_setattro's own write: it sets the slot */
  if (!ffkpy_identity_maybe(obj) || !Py_IsInitialized() || interpreter_finalizing()) return;
  PyGILState_STATE g = PyGILState_Ensure(); /* reentrant for a writer holding it already */
  PyObject *w = ffkpy_identity_find(obj);
  const ffkpy_field_cache *c = w != NULL ? ffkpy_reflect__cache_of(Py_TYPE(w)) : NULL;
  for (Py_ssize_t i = 0; c != NULL && i < c->n; ++i) {
    const ffk_field_info *f = c->slots[i].field;
    if (f != field && (f->owner_index != field->owner_index || f->position != field->position)) continue;
    PyObject *exc_type, *exc_value, *exc_tb; /* the writer's own pending error, if any, stays */
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    if (load_cached(w, obj, &c->slots[i]) != 0) PyErr_WriteUnraisable(w);
    PyErr_Restore(exc_type, exc_value, exc_tb);
    break;
  }
  PyGILState_Release(g);
}

/* tp_setattro of a class with cached fields: a write to one goes to C, which raises its
   read-only error or writes and calls the write hook that reloads the slot (a tracked
   class; an untracked one caches only read-only fields); everything else is the generic
   path. */
static int cached_setattro(PyObject *self, PyObject *name, PyObject *value) {
  PyObject *d = ffkpy_type_lookup(Py_TYPE(self), name);
  if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)) {
    const ffkpy_field_cache *c = ffkpy_reflect__cache_of(Py_TYPE(self));
    for (Py_ssize_t i = 0; c != NULL && i < c->n; ++i) {
      const ffkpy_cache_slot *s = &c->slots[i];
      if (s->member != ((PyMemberDescrObject *)d)->d_member) continue;
      if (!c->tracked || value == NULL || !(s->field->flags & FFK_FIELD_WRITABLE))
        return ffkpy_reflect__set_field_as(s->field, self, value, 0); /* C's errors; a tracked write reloads by the hook */
      /* C first (conversion, checks, errors), then the slot, under the GIL throughout: a
         racing write from another thread reloads the slot after this (its hook waits for
         the GIL). A value of the field's exact Python type is what C stored; another
         (3 for a float field, True for an int one) is read back converted. */
      if (ffkpy_reflect__set_field_as(s->field, self, value, 1) != 0) return -1;
      PyObject **slot = (PyObject **)((char *)self + s->offset);
      int32_t st = s->field->storage;
      if ((st == FFK_FIELD_STORAGE_INT && PyLong_CheckExact(value)) ||
          (st == FFK_FIELD_STORAGE_FLOAT && PyFloat_CheckExact(value)) ||
          (st == FFK_FIELD_STORAGE_BOOL && PyBool_Check(value))) {
        Py_XSETREF(*slot, Py_NewRef(value));
        return 0;
      }
      return load_cached(self, ((ffkpy_Object *)self)->obj, s);
    }
  }
  return PyObject_GenericSetAttr(self, name, value);
}

/*
 * Makes cached_setattro the tp_setattro of cls and of every subclass made later, the way
 * CPython itself does for a C type's slot: `__setattr__` and `__delattr__` wrapper
 * descriptors (object's, pointing at cached_setattro) in the class dict, from which type
 * creation and assignment fill the slot. Kept when the class body defines either. 0 or -1.
 */
static int install_setattro(PyTypeObject *cls, PyObject *dict) {
  static const char *names[] = {"__setattr__", "__delattr__"};
  for (int i = 0; i < 2; ++i) {
    PyObject *own = PyDict_GetItemString(dict, names[i]);
    if (own != NULL) return 0;
  }
  for (int i = 0; i < 2; ++i) {
    /* Looked up, not read from tp_dict: CPython 3.12+ keeps a static type's dict elsewhere. */
    PyObject *key = PyUnicode_InternFromString(names[i]);
    if (key == NULL) return -1;
    PyObject *base = ffkpy_type_lookup(&PyBaseObject_Type, key); /* borrowed */
    Py_DECREF(key);
    if (base == NULL || !Py_IS_TYPE(base, &PyWrapperDescr_Type)) {
      PyErr_Format(PyExc_RuntimeError, "object.%s is not a slot wrapper", names[i]);
      return -1;
    }
    PyObject *d = PyDescr_NewWrapper(cls, ((PyWrapperDescrObject *)base)->d_base, (void *)cached_setattro);
    int rc = d != NULL ? PyObject_SetAttrString((PyObject *)cls, names[i], d) : -1;
    Py_XDECREF(d);
    if (rc != 0) return -1;
  }
  return 0;
}

static int cacheable(const ffk_field_info *f, int tracked) {
  return (tracked || !(f->flags & FFK_FIELD_WRITABLE)) &&
         (f->storage == FFK_FIELD_STORAGE_INT || f->storage == FFK_FIELD_STORAGE_FLOAT ||
          f->storage == FFK_FIELD_STORAGE_BOOL);
}

int ffkpy_reflect__cached_by(const ffkpy_field_cache *c, const char *name) {
  for (Py_ssize_t i = 0; c != NULL && i < c->n; ++i)
    if (strcmp(c->slots[i].field->name, name) == 0) return 1;
  return 0;
}

/* Adds slots for the read-only POD fields of `index` (all POD fields when `tracked`) that
 * cls does not cache yet (see the top of this file), and marks a tracked class. 1 when
 * cls has a cache after the call, 0 when it cannot (it has subclasses, or is not a plain
 * heap class), -1 with an exception. */
int ffkpy_reflect__add_cache(PyTypeObject *cls, PyObject *dict, int32_t index, int32_t nf, int tracked) {
  const ffkpy_field_cache *base = ffkpy_reflect__cache_of(cls);
  if (PyDict_GetItemWithError(dict, g_str_cache) != NULL) return 1; /* bound before */
  if (PyErr_Occurred()) return -1;
  int retrack = tracked && (base == NULL || !base->tracked); /* a capsule of its own even without new slots */
  const ffk_field_info *fresh[64];
  Py_ssize_t nfresh = 0;
  for (int32_t i = 0; i < nf && nfresh < 64; ++i) {
    const ffk_field_info *f = ffk_type_field_at(index, i);
    if (f == NULL) return ffkpy_raise_from_ffk_int();
    if (!cacheable(f, tracked) || ffkpy_reflect__cached_by(base, f->name)) continue;
    PyObject *key = PyUnicode_FromString(f->name);
    int own = key != NULL ? PyDict_Contains(dict, key) : -1;
    Py_XDECREF(key);
    if (own < 0) return -1;
    if (!own) fresh[nfresh++] = f; /* what the class body defines itself stays */
  }
  if (nfresh == 0 && !retrack) return base != NULL;
  if (!(cls->tp_flags & Py_TPFLAGS_HEAPTYPE) || cls->tp_itemsize != 0) nfresh = 0;
  if (nfresh != 0) {
    PyObject *subs = PyObject_CallMethod((PyObject *)cls, "__subclasses__", NULL);
    if (subs == NULL) return -1;
    Py_ssize_t nsubs = PyList_GET_SIZE(subs);
    Py_DECREF(subs);
    if (nsubs != 0) nfresh = 0; /* their layouts follow the current size */
  }
  if (nfresh == 0 && !retrack) return base != NULL;
  Py_ssize_t nbase = base != NULL ? base->n : 0;
  ffkpy_field_cache *c = PyMem_RawMalloc(sizeof(ffkpy_field_cache) + sizeof(ffkpy_cache_slot) * (size_t)(nbase + nfresh));
  PyMemberDef *defs = PyMem_RawCalloc((size_t)(nfresh > 0 ? nfresh : 1), sizeof(PyMemberDef));
  if (c == NULL || defs == NULL) {
    PyMem_RawFree(c);
    PyMem_RawFree(defs);
    PyErr_NoMemory();
    return -1;
  }
  c->tracked = tracked || (base != NULL && base->tracked);
  c->n = nbase + nfresh;
  for (Py_ssize_t i = 0; i < nbase; ++i) c->slots[i] = base->slots[i];
  Py_ssize_t at = (cls->tp_basicsize + (Py_ssize_t)sizeof(PyObject *) - 1) & ~(Py_ssize_t)(sizeof(PyObject *) - 1);
  for (Py_ssize_t j = 0; j < nfresh; ++j) {
    Py_ssize_t offset = at + j * (Py_ssize_t)sizeof(PyObject *);
    defs[j] = (PyMemberDef){(char *)fresh[j]->name, T_OBJECT_EX, offset, READONLY, (char *)fresh[j]->doc};
    c->slots[nbase + j] = (ffkpy_cache_slot){offset, fresh[j], &defs[j]};
  }
  PyObject *cap = PyCapsule_New(c, CACHE_CAPSULE, NULL);
  if (cap == NULL || PyCapsule_SetContext(cap, c) != 0) {
    Py_XDECREF(cap);
    return -1; /* c and defs stay allocated: harmless */
  }
  /* From here on the class's instances are larger; no instance or subclass exists yet. */
  if (nfresh > 0) cls->tp_basicsize = at + nfresh * (Py_ssize_t)sizeof(PyObject *);
  c->end = nfresh > 0 ? cls->tp_basicsize : base != NULL ? base->end : (Py_ssize_t)sizeof(ffkpy_Object);
  int rc = PyObject_SetAttr((PyObject *)cls, g_str_cache, cap);
  Py_DECREF(cap);
  if (rc == 0 && nfresh > 0 && (base == NULL || base->n == 0)) rc = install_setattro(cls, dict);
  for (Py_ssize_t j = 0; rc == 0 && j < nfresh; ++j) {
    PyObject *d = PyDescr_NewMember(cls, &defs[j]);
    rc = d != NULL ? PyObject_SetAttrString((PyObject *)cls, defs[j].name, d) : -1;
    Py_XDECREF(d);
  }
  PyType_Modified(cls);
  return rc == 0 ? 1 : -1;
}
