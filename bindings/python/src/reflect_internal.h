/*
 * reflect_internal.h - what reflect.c (field descriptors, construction, the module
 * functions), reflect_cache.c (the field cache) and reflect_methods.c (method
 * descriptors) share; private to the extension.
 */
#ifndef FFIKIT_PY_REFLECT_INTERNAL_H
#define FFIKIT_PY_REFLECT_INTERNAL_H

#include "ffikit_py.h"

#include <structmember.h> /* PyMemberDef: in Python.h only from 3.12 */

#include <ffikit/reflect.h>

/* A method descriptor (ffikit.Method / ffikit.StaticMethod). */
typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  const ffk_method_info *method; /* registry-owned, valid until exit */
  int32_t type_index;            /* the class's type (for messages and the instance check) */
  char release_gil;              /* release the GIL around the C call (default off, see below) */
  PyObject *name, *qualname, *doc;
} ffkpy_MethodDescr;

/* A new descriptor for method `m` of type `type_index`, or NULL with an exception. */
PyObject *ffkpy_reflect__method_descr_new(const ffk_method_info *m, int32_t type_index);

/* Readies ffikit.Method and ffikit.StaticMethod and adds them to `module`. 0, or -1. */
int ffkpy_reflect__method_types_init(PyObject *module);

/*
 * obj.<f> = value, decided by C (reflect_cache.c): 0, or -1 with C's error. `quiet`: the write
 * hook does not reload obj's slot for this write (the caller does).
 */
int ffkpy_reflect__set_field_as(const ffk_field_info *f, PyObject *obj, PyObject *value, int quiet);

/* ---- The field cache (reflect_cache.c) ---- */

/* The C object whose field this thread is writing from a cached slot's setter, which
   updates the slot itself: the write hook skips that one write. Set only around
   ffk_field_set of a POD field, which runs no Python code. */
extern _Thread_local const ffk_object *ffkpy_reflect__py_writing;

typedef struct {
  Py_ssize_t offset;           /* of the PyObject * in the wrapper */
  const ffk_field_info *field; /* registry-owned */
  const PyMemberDef *member;   /* the descriptor's definition */
} ffkpy_cache_slot;

/* A class's cached fields, inherited ones included. Never freed: the member descriptors
   keep pointers into the PyMemberDefs, and a descriptor may outlive its class. */
typedef struct {
  int tracked; /* a py_class: writable fields cached too, one wrapper per object */
  Py_ssize_t end; /* where the last slot ends: the basic size of a class that adds no slot of its own */
  Py_ssize_t n;
  ffkpy_cache_slot slots[];
} ffkpy_field_cache;

/* Interns the class attribute name of the cache. 0, or -1 with an exception. */
int ffkpy_reflect__cache_init(void);

/* The field cache of `type` (inherited through the MRO), or NULL. */
const ffkpy_field_cache *ffkpy_reflect__cache_of(PyTypeObject *type);

/* Whether field `name` is served by a slot of cache `c` (NULL: none). */
int ffkpy_reflect__cached_by(const ffkpy_field_cache *c, const char *name);

/*
 * Adds the slots of the `nf` fields of type `index` that are cacheable (read-only PODs;
 * writable ones too when `tracked`) to class `cls` before it has subclasses: 1 when
 * added, 0 when the class keeps Field descriptors, -1 with an exception.
 */
int ffkpy_reflect__add_cache(PyTypeObject *cls, PyObject *dict, int32_t index, int32_t nf, int tracked);

/* The field write hook of tracked classes: reloads the written slot of obj's wrapper. */
void ffkpy_reflect__field_written(ffk_object *obj, const ffk_field_info *field);

#endif /* FFIKIT_PY_REFLECT_INTERNAL_H */
