/*
 * reflect.c - the Python face of reflected types (ffikit/reflect.h): field descriptors,
 * method descriptors and construction by the type's constructor, which register_object
 * and the auto-made classes install (copy / pickle are ffikit.Object's: structural.c).
 *
 * Invariants:
 *  - A class of a reflected type carries `__ffi_type_index__` (an int; None on a class
 *    of a type without reflection, so that a subclass never constructs its parent's
 *    type by inheritance). Construction reads it through the type's attribute cache.
 *  - Descriptors hold registry pointers (const ffk_field_info / ffk_method_info), which
 *    the C library keeps until exit, and no ffikit object: installing them on a class
 *    changes no live-object count.
 *  - Every access goes through the checked C API (ffk_field_get / ffk_field_set /
 *    ffk_function_call): C decides read-only, types and conversions, and its message is
 *    what Python raises. No Python code runs per field read, write or method call. One
 *    exception, for speed: a writable int, float or bool field is read from its atomic
 *    word directly (the storage reflect.h documents, loaded as ffk_field_get loads it,
 *    after the same instance check), which saves a fifth of `obj.x`.
 *  - Methods keep the GIL during the C call unless their descriptor's release_gil is set:
 *    they are mostly short accessors, for which releasing and taking the GIL costs more
 *    than the call (CPython's own C methods keep it too). A method that runs long, or that
 *    waits for threads calling back into Python, needs release_gil on.
 *  - A wrapper's handle may be NULL only for an instance of a class whose own __init__
 *    has not constructed it yet (see object.c); everything here checks for that.
 *  - Read-only int, float and bool fields never change once an object is constructed
 *    (ffk_field_init is for fresh objects only), so a class keeps them as Python values in
 *    slots of the wrapper itself, filled when a wrapper is made (ffkpy_reflect_fill) and
 *    read by a read-only member descriptor: CPython's specialized slot read (LOAD_ATTR_SLOT)
 *    then serves obj.<field> with no call at all. The slots are added to the class when it
 *    is bound, before it has subclasses (its instance size grows by one pointer per field;
 *    `__ffi_field_cache__` lists them, inherited ones included); writes to them go to C
 *    through the class's tp_setattro (which raises C's read-only error), and the wrapper's
 *    dealloc drops the values. A class that already has subclasses keeps Field descriptors.
 *    (A wrapper made of an object still under construction, one a C constructor hands to
 *    a Python callback before its last ffk_field_init, keeps the values it saw then.)
 *  - A py_class (ffikit.dataclasses) class is bound "tracked": its writable int, float and
 *    bool fields are cached in slots too, which stay coherent with every write because
 *    (1) a tracked C object has exactly one live wrapper, found through the identity map
 *    of object.c (filled here, emptied in the wrapper's dealloc), and (2) C calls the
 *    type's field write hook (ffkpy_reflect__field_written in reflect_cache.c, installed by _reflect_class) after every
 *    ffk_field_set / ffk_object_set_field / ffk_field_init, from Python (tp_setattro, the
 *    Field descriptors), C or Rust, on any thread: the hook takes the GIL, finds the
 *    wrapper and reloads the slot from C. It reloads rather than storing the value it was
 *    told, so that of two racing writers the last reload sees the last write; a reader
 *    (under the GIL) sees a whole old or new Python value. The wrapper registers itself
 *    before reading its fields and a writer stores before it checks for a wrapper, each
 *    with seq_cst operations on one shared word between (a Dekker pair; object.c, g_id_maybe):
 *    a write racing a wrapper's creation is either
 *    read by the fill or reloaded by the hook. py_class fields are laid out by ffikit and
 *    reached only through the field API, which is what makes the hook see every write;
 *    a c_class type's own C code may write its struct directly, so it is not tracked.
 *    A wrapper whose handle a C constructor returns already wrapped is that wrapper.
 *    A write from Python (obj.x = v) writes C, then stores the slot itself under the GIL,
 *    and the hook skips that one write (ffkpy_reflect__py_writing, thread-local). A failed reload in
 *    the hook (a MemoryError) is reported as unraisable and keeps the old value: CPython's
 *    slot read cannot fall back to C without losing LOAD_ATTR_SLOT for every read.
 */
#include "ffikit_py.h"
#include "call.h"
#include "reflect_internal.h"


#include <ffikit/reflect.h>
#include <ffikit/unstable/reflect.h>

static PyObject *g_str_type_index; /* interned "__ffi_type_index__" */

/* Gives a class that keeps Object's __new__ and __init__ the vectorcall that constructs
   directly (ffkpy_reflect_class_vectorcall). 0. */
int ffkpy_reflect_enable_vectorcall(PyTypeObject *type) {
  if (ffkpy_reflect_ready(type)) type->tp_vectorcall = ffkpy_reflect_class_vectorcall;
  return 0;
}

/* ---- Field descriptors -------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  const ffk_field_info *field; /* registry-owned, valid until exit */
  PyObject *name;              /* str */
  PyObject *doc;               /* str or None */
} ffkpy_FieldDescr;

static PyTypeObject FieldDescrType;

static PyObject *field_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (obj == NULL || obj == Py_None) return Py_NewRef(self); /* Class.field: the descriptor */
  const ffk_field_info *f = ((ffkpy_FieldDescr *)self)->field;
  ffk_object *h = ffkpy_instance_handle(obj, f->name, f->owner_index);
  if (h == NULL) return NULL;
  /* Writable int / float / bool fields (read-only ones are cached in slots): the atomic
     word that reflect.h documents as their storage, read as ffk_field_get reads it, without
     the round trip through an ffk_any. The instance check is ffk_field_get's. */
  if (FFK_LIKELY(h->type_index == f->owner_index || ffk_type_is_instance(h->type_index, f->owner_index))) {
    const char *slot = (const char *)h + f->offset;
    switch (f->storage) {
      case FFK_FIELD_STORAGE_INT:
        return PyLong_FromLongLong(__atomic_load_n((const int64_t *)slot, __ATOMIC_RELAXED));
      case FFK_FIELD_STORAGE_FLOAT: {
        double d;
        __atomic_load((const double *)slot, &d, __ATOMIC_RELAXED);
        return PyFloat_FromDouble(d);
      }
      case FFK_FIELD_STORAGE_BOOL:
        return PyBool_FromLong(__atomic_load_n((const bool *)slot, __ATOMIC_RELAXED));
      default:
        break;
    }
  }
  ffk_any v;
  if (ffk_field_get(f, h, &v) != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&v);
}


static int set_field(const ffk_field_info *f, PyObject *obj, PyObject *value) {
  return ffkpy_reflect__set_field_as(f, obj, value, 0);
}

static int field_descr_set(PyObject *self, PyObject *obj, PyObject *value) {
  return set_field(((ffkpy_FieldDescr *)self)->field, obj, value);
}

static void field_descr_dealloc(PyObject *self) {
  ffkpy_FieldDescr *d = (ffkpy_FieldDescr *)self;
  Py_XDECREF(d->name);
  Py_XDECREF(d->doc);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *field_descr_repr(PyObject *self) {
  const ffk_field_info *f = ((ffkpy_FieldDescr *)self)->field;
  return PyUnicode_FromFormat("<field `%s: %s` of `%s`>", f->name, f->type_text, ffk_type_key(f->owner_index));
}

static PyObject *field_get_type(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(((ffkpy_FieldDescr *)self)->field->type_text);
}
static PyObject *field_get_owner(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(ffk_type_key(((ffkpy_FieldDescr *)self)->field->owner_index));
}
static PyObject *field_get_flag(PyObject *self, void *c) {
  return PyBool_FromLong((((ffkpy_FieldDescr *)self)->field->flags & (uint32_t)(uintptr_t)c) != 0);
}
static PyObject *field_get_position(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((ffkpy_FieldDescr *)self)->field->position);
}
static PyObject *field_get_default(PyObject *self, void *c) {
  (void)c;
  const ffk_field_info *f = ((ffkpy_FieldDescr *)self)->field;
  if (!(f->flags & FFK_FIELD_HAS_DEFAULT) || (f->flags & FFK_FIELD_DEFAULT_FACTORY)) Py_RETURN_NONE;
  return ffkpy_from_any(&f->default_value);
}

/* get(obj) / set(obj, value): the descriptor's two operations as methods (tvm_ffi's
   FieldGetter / FieldSetter do the same work). */
static PyObject *field_method_get(PyObject *self, PyObject *obj) { return field_descr_get(self, obj, NULL); }
static PyObject *field_method_set(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "set(obj, value) takes 2 arguments (%zd given)", nargs);
  if (field_descr_set(self, args[0], args[1]) != 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *field_get_frozen(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong((((ffkpy_FieldDescr *)self)->field->flags & FFK_FIELD_WRITABLE) == 0);
}

static PyMemberDef field_members[] = {
    {"__doc__", T_OBJECT, offsetof(ffkpy_FieldDescr, doc), READONLY, "The field's doc text (None when it has none)."},
    {"__name__", T_OBJECT, offsetof(ffkpy_FieldDescr, name), READONLY, "The field's name."},
    {"name", T_OBJECT, offsetof(ffkpy_FieldDescr, name), READONLY, "The field's name."},
    {NULL},
};

static PyGetSetDef field_getset[] = {
    {"type", field_get_type, NULL, "The field's type in the signature language (\"int\", \"Array<str>\").", NULL},
    {"owner", field_get_owner, NULL, "The type key of the type that declares the field.", NULL},
    {"position", field_get_position, NULL, "The field's index among its type's fields (parents' first).", NULL},
    {"writable", field_get_flag, NULL, "Whether the field may be set after construction.",
     (void *)(uintptr_t)FFK_FIELD_WRITABLE},
    {"frozen", field_get_frozen, NULL, "Whether the field is read-only (not writable).", NULL},
    {"has_default", field_get_flag, NULL, "Whether the field has a default (or a default factory).",
     (void *)(uintptr_t)FFK_FIELD_HAS_DEFAULT},
    {"init_off", field_get_flag, NULL, "Whether the field is left out of the constructor's parameters.",
     (void *)(uintptr_t)FFK_FIELD_INIT_OFF},
    {"kw_only", field_get_flag, NULL, "Whether the constructor takes the field by name only.",
     (void *)(uintptr_t)FFK_FIELD_KW_ONLY},
    {"repr_off", field_get_flag, NULL, "Whether repr leaves the field out.", (void *)(uintptr_t)FFK_FIELD_REPR_OFF},
    {"compare_off", field_get_flag, NULL, "Whether structural equality and hash ignore the field.",
     (void *)(uintptr_t)FFK_FIELD_COMPARE_OFF},
    {"default", field_get_default, NULL,
     "The field's default value (None without one, or when a factory makes it per object).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef field_methods[] = {
    {"get", field_method_get, METH_O, "get(obj): the field's value on obj (as obj.<name>)."},
    {"set", (PyCFunction)(void (*)(void))field_method_set, METH_FASTCALL,
     "set(obj, value): writes the field (as obj.<name> = value); AttributeError for a read-only field."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FieldDescrType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.core.Field",
    .tp_doc = "A field of a reflected type, as a class attribute: reading obj.<name> calls the C field "
              "getter, writing it the C setter (AttributeError for a read-only field, TypeError for a "
              "value that does not convert to the field's type).",
    .tp_basicsize = sizeof(ffkpy_FieldDescr),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = field_descr_dealloc,
    .tp_repr = field_descr_repr,
    .tp_descr_get = field_descr_get,
    .tp_descr_set = field_descr_set,
    .tp_members = field_members,
    .tp_getset = field_getset,
    .tp_methods = field_methods,
};

static PyObject *field_descr_new(const ffk_field_info *f) {
  ffkpy_FieldDescr *d = PyObject_New(ffkpy_FieldDescr, &FieldDescrType);
  if (d == NULL) return NULL;
  d->field = f;
  d->name = PyUnicode_FromString(f->name);
  d->doc = f->doc != NULL ? PyUnicode_FromString(f->doc) : Py_NewRef(Py_None);
  if (d->name == NULL || d->doc == NULL) {
    Py_DECREF(d);
    return NULL;
  }
  return (PyObject *)d;
}

/* ---- Construction ------------------------------------------------------------------------ */

/* invoke of a construction (call.h): ffk_object_create of type_index, whose new
   object is the result. */
static int construct(ffk_function *function, int32_t type_index, const ffk_any *argv, int32_t npos,
                     const char *const *names, int32_t nkw, ffk_any *result) {
  (void)function;
  ffk_object *obj;
  if (ffk_object_create(type_index, argv, npos, names, nkw, &obj) != 0) return -1;
  *result = ffk_any_none();
  result->type_index = obj->type_index;
  result->v_obj = obj;
  return 0;
}

/* finish of Class(...): the new object in a wrapper of the class `owner`. */
static PyObject *finish_new(PyObject *owner, ffk_any *result, const struct DLPackExchangeAPI *api) {
  (void)api;
  return ffkpy_wrap_as((PyTypeObject *)owner, result->v_obj);
}

/* finish of _object_create: the new object in the wrapper of its type's class. */
static PyObject *finish_wrap(PyObject *owner, ffk_any *result, const struct DLPackExchangeAPI *api) {
  (void)owner, (void)api;
  return ffkpy_wrap_steal(result->v_obj);
}

/* finish of Object.__init__: the new object becomes the handle of the wrapper `self`
   (replacing one made before, as a second __init__ call does). None, or NULL. */
static PyObject *finish_init(PyObject *self, ffk_any *result, const struct DLPackExchangeAPI *api) {
  (void)api;
  ffk_object *old = ((ffkpy_Object *)self)->obj;
  if (old != NULL) {
    ffkpy_wrapper_own(self); /* a callback's argument may have a lent handle */
    ffkpy_identity_remove(old, self);
  }
  ((ffkpy_Object *)self)->obj = result->v_obj;
  ffk_object_release(old);
  if (ffkpy_reflect_fill(self) != 0) return NULL;
  Py_RETURN_NONE;
}

/* The description of a construction of type `index` finished by `finish` on `owner`. */
static inline ffkpy_call_spec construction(int32_t index, ffkpy_call_finish finish, PyObject *owner) {
  return (ffkpy_call_spec){.invoke = construct, .finish = finish, .type_index = index, .owner = owner};
}

/* A wrapper of class `type` around obj (steals it, also on failure; NULL obj: NULL, the error
   already set). A py_class object keeps its one wrapper. Declared in ffikit_py.h. */
PyObject *ffkpy_wrap_as(PyTypeObject *type, ffk_object *obj) {
  if (obj == NULL) return NULL;
  PyObject *existing = ffkpy_identity_find(obj); /* a py_class object keeps its one wrapper */
  if (existing != NULL) {
    Py_INCREF(existing);
    ffk_object_release(obj);
    return existing;
  }
  ffkpy_Object *self = (ffkpy_Object *)type->tp_alloc(type, 0);
  if (self == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  self->obj = obj;
  if (ffkpy_reflect_fill((PyObject *)self) != 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

PyObject *ffkpy_reflect_new(PyTypeObject *type, int32_t index, PyObject *args, PyObject *kwds) {
  const ffkpy_call_spec call = construction(index, finish_new, (PyObject *)type);
  return ffkpy_call_tuple(&call, args, kwds);
}

int ffkpy_reflect_init(PyObject *self, int32_t index, PyObject *args, PyObject *kwds) {
  const ffkpy_call_spec call = construction(index, finish_init, self);
  PyObject *r = ffkpy_call_tuple(&call, args, kwds);
  if (r == NULL) return -1;
  Py_DECREF(r);
  return 0;
}

/*
 * The vectorcall of a reflected class (Class(a, b, k=v)): constructs without the argument
 * tuple and without a second call through tp_init. Only while the class's __new__ and
 * __init__ are Object's (object.c checks before installing and here at each call: a
 * class body or a later assignment may replace them); otherwise it is type's own call.
 */
PyObject *ffkpy_reflect_class_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames) {
  PyTypeObject *type = (PyTypeObject *)callable;
  int32_t index = ffkpy_reflect_ready(type) ? ffkpy_reflect_index(type) : -1;
  if (index < 0) { /* the generic path: tp_new then tp_init, as type.__call__ does */
    PyObject *tuple = PyTuple_New(PyVectorcall_NARGS(nargsf));
    if (tuple == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    PyObject *kw = NULL;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
      kw = PyDict_New();
      for (Py_ssize_t j = 0; kw != NULL && j < PyTuple_GET_SIZE(kwnames); ++j)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, j), args[PyTuple_GET_SIZE(tuple) + j]) != 0) Py_CLEAR(kw);
      if (kw == NULL) {
        Py_DECREF(tuple);
        return NULL;
      }
    }
    PyObject *r = PyType_Type.tp_call(callable, tuple, kw);
    Py_DECREF(tuple);
    Py_XDECREF(kw);
    return r;
  }
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  const ffkpy_call_spec call = construction(index, finish_new, callable);
  return ffkpy_call(call, args, PyVectorcall_NARGS(nargsf), nkw ? &PyTuple_GET_ITEM(kwnames, 0) : NULL, nkw);
}

/* ---- Module functions -------------------------------------------------------------------- */

static int32_t index_of_key(PyObject *key_obj) {
  const char *key = PyUnicode_AsUTF8(key_obj);
  if (key == NULL) return -1;
  int32_t index;
  int rc = ffk_type_lookup(key, &index);
  if (rc < 0) return ffkpy_raise_from_ffk_int();
  if (rc == 0) {
    PyErr_Format(PyExc_ValueError, "Cannot find object type index for %s", key);
    return -1;
  }
  return index;
}

static int32_t reflected_index_of_key(PyObject *key_obj) {
  int32_t index = index_of_key(key_obj);
  if (index >= 0 && ffk_type_check_reflected(index) != 0) return ffkpy_raise_from_ffk_int();
  return index;
}

/* _object_from_fields(type_key, fields: dict): a new object at its defaults with each
   field set (read-only ones too), as unpickling rebuilds one. */
static PyObject *object_from_fields(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *key, *fields;
  if (!PyArg_ParseTuple(args, "UO!:_object_from_fields", &key, &PyDict_Type, &fields)) return NULL;
  int32_t index = reflected_index_of_key(key);
  if (index < 0) return NULL;
  ffk_object *obj = ffk_object_new_reflected(index);
  if (obj == NULL) return ffkpy_raise_from_ffk();
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(fields, &pos, &k, &v)) {
    const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    const ffk_field_info *f = NULL;
    if (name == NULL) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "field names must be str, not %R", k);
      goto fail;
    }
    if (ffk_type_get_field(index, name, &f) != 0) {
      ffkpy_raise_from_ffk();
      goto fail;
    }
    ffkpy_temps temps;
    ffkpy_temps_init(&temps);
    ffk_any a;
    int rc = ffkpy_to_any(v, &a, &temps);
    if (rc == 0 && ffk_field_init(f, obj, &a) != 0) rc = ffkpy_raise_from_ffk_int();
    ffkpy_temps_release(&temps);
    if (rc != 0) goto fail;
  }
  return ffkpy_wrap_steal(obj);
fail:
  ffk_object_release(obj);
  return NULL;
}

/* _object_is_reflection_made(obj) -> bool (ffk_object_is_reflection_made; False for a
   value that is not a constructed ffikit object). */
static PyObject *object_is_reflection_made(PyObject *mod, PyObject *o) {
  (void)mod;
  return PyBool_FromLong(ffk_object_is_reflection_made(ffkpy_handle(o)));
}

/* The handle of a constructed wrapper, or NULL with a TypeError naming `what`. */
static ffk_object *wrapper_handle(PyObject *o, const char *what) {
  ffk_object *h = ffkpy_handle(o);
  if (h == NULL) PyErr_Format(PyExc_TypeError, "%s needs a constructed ffikit object, not %.200s", what, Py_TYPE(o)->tp_name);
  return h;
}

/* _object_field_values(obj) -> tuple of every field's value in field order
   (ffk_object_field_values: TypeError for an object not made by reflection). */
static PyObject *object_field_values(PyObject *mod, PyObject *o) {
  (void)mod;
  ffk_object *h = wrapper_handle(o, "_object_field_values");
  if (h == NULL) return NULL;
  int32_t n = ffk_type_num_fields(h->type_index);
  if (n < 0) return ffkpy_raise_from_ffk();
  ffk_any stack[16], *v = n <= 16 ? stack : PyMem_Malloc((size_t)n * sizeof *v);
  if (v == NULL) return PyErr_NoMemory();
  PyObject *t = NULL;
  if (ffk_object_field_values(h, v, n) != 0) {
    ffkpy_raise_from_ffk();
  } else if ((t = PyTuple_New(n)) == NULL) {
    for (int32_t i = 0; i < n; ++i) ffk_any_release(&v[i]);
  } else {
    for (int32_t i = 0; i < n; ++i) {
      PyObject *x = t != NULL ? ffkpy_from_any_steal(&v[i]) : (ffk_any_release(&v[i]), NULL);
      if (x == NULL) Py_CLEAR(t);
      else PyTuple_SET_ITEM(t, i, x);
    }
  }
  if (v != stack) PyMem_Free(v);
  return t;
}

/* _object_init_fields(obj, values: sequence) -> None: ffk_object_init_fields, for an
   object unpickling has just made; then reloads the wrapper's cached fields. */
static PyObject *object_init_fields(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o, *values;
  if (!PyArg_ParseTuple(args, "OO:_object_init_fields", &o, &values)) return NULL;
  ffk_object *h = wrapper_handle(o, "_object_init_fields");
  if (h == NULL) return NULL;
  PyObject *seq = PySequence_Fast(values, "_object_init_fields: the values must be a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > INT32_MAX) {
    Py_DECREF(seq);
    return PyErr_Format(PyExc_ValueError, "_object_init_fields: %zd values", n);
  }
  ffk_any stack[16], *v = n <= 16 ? stack : PyMem_Malloc((size_t)n * sizeof *v);
  if (v == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  int rc = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < n; ++i) rc = ffkpy_to_any(PySequence_Fast_GET_ITEM(seq, i), &v[i], &temps);
  if (rc == 0 && ffk_object_init_fields(h, v, (int32_t)n) != 0) rc = ffkpy_raise_from_ffk_int();
  ffkpy_temps_release(&temps);
  if (v != stack) PyMem_Free(v);
  Py_DECREF(seq);
  if (rc == 0) rc = ffkpy_reflect_fill(o); /* the read-only values a wrapper caches */
  if (rc != 0) return NULL;
  Py_RETURN_NONE;
}

/* _object_create(type_key, *args, **kwargs): ffk_object_create by key. */
static PyObject *object_create(PyObject *mod, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  (void)mod;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 1 || !PyUnicode_Check(args[0])) return PyErr_Format(PyExc_TypeError, "_object_create(type_key: str, ...)");
  int32_t index = reflected_index_of_key(args[0]);
  if (index < 0) return NULL;
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
  const ffkpy_call_spec call = construction(index, finish_wrap, NULL);
  return ffkpy_call(call, args + 1, n - 1, nkw ? &PyTuple_GET_ITEM(kwnames, 0) : NULL, nkw);
}

/* Sets cls.<name> = value unless cls's own dict has the name. 0 or -1. */
static int set_unless_own(PyObject *cls, PyObject *dict, PyObject *name, PyObject *value) {
  int has = PyDict_Contains(dict, name);
  if (has != 0) return has < 0 ? -1 : 0;
  return PyObject_SetAttr(cls, name, value);
}

/* _reflect_class(cls, type_index, tracked=False): installs on cls (not over what its own
 * body defines), for a reflected type, a descriptor per field (inherited ones too) and the
 * methods (static ones as static methods); and __ffi_type_index__ (None for a type without
 * reflection: such a class constructs nothing). `tracked` (py_class types, whose fields
 * only the field API writes): one wrapper per object, writable POD fields cached too, and
 * the type's field write hook set. The first call decides; a class bound again keeps its
 * cache. (__copy__/__deepcopy__/__reduce__ live on the Object base, structural.c.) */
static PyObject *reflect_class(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *cls;
  int index, tracked = 0;
  if (!PyArg_ParseTuple(args, "O!i|p:_reflect_class", &PyType_Type, &cls, &index, &tracked)) return NULL;
  if (!PyType_IsSubtype((PyTypeObject *)cls, &ffkpy_ObjectType))
    return PyErr_Format(PyExc_TypeError, "_reflect_class: %R is not a subclass of ffikit.Object", cls);
  if (ffk_type_check_index(index) != 0) return ffkpy_raise_from_ffk();
  PyObject *dict = ((PyTypeObject *)cls)->tp_dict; /* read only: writes go through setattr */
  if (!ffk_type_is_reflected(index)) {
    if (PyObject_SetAttr(cls, g_str_type_index, Py_None) != 0) return NULL;
    Py_RETURN_NONE;
  }
  int32_t nf = ffk_type_num_fields(index), nm = ffk_type_num_methods(index);
  if (nf < 0 || nm < 0) return ffkpy_raise_from_ffk();
  int cached = ffkpy_reflect__add_cache((PyTypeObject *)cls, dict, index, nf, tracked);
  if (cached < 0) return NULL;
  if (tracked && ffk_type_set_field_write_hook(index, ffkpy_reflect__field_written) != 0) return ffkpy_raise_from_ffk();
  const ffkpy_field_cache *cache = cached ? ffkpy_reflect__cache_of((PyTypeObject *)cls) : NULL;
  for (int32_t i = 0; i < nf; ++i) {
    const ffk_field_info *f = ffk_type_field_at(index, i);
    if (f == NULL) return ffkpy_raise_from_ffk();
    if (ffkpy_reflect__cached_by(cache, f->name)) continue; /* a slot member serves it */
    PyObject *d = field_descr_new(f);
    int rc = d != NULL ? set_unless_own(cls, dict, ((ffkpy_FieldDescr *)d)->name, d) : -1;
    Py_XDECREF(d);
    if (rc != 0) return NULL;
  }
  for (int32_t i = 0; i < nm; ++i) {
    const ffk_method_info *m = ffk_type_method_at(index, i);
    if (m == NULL) return ffkpy_raise_from_ffk();
    PyObject *d = ffkpy_reflect__method_descr_new(m, index);
    int rc = d != NULL ? set_unless_own(cls, dict, ((ffkpy_MethodDescr *)d)->name, d) : -1;
    Py_XDECREF(d);
    if (rc != 0) return NULL;
  }
  PyObject *i = PyLong_FromLong(index);
  int rc = i != NULL ? PyObject_SetAttr(cls, g_str_type_index, i) : -1;
  Py_XDECREF(i);
  if (rc != 0) return NULL;
  if (ffkpy_reflect_enable_vectorcall((PyTypeObject *)cls) != 0) return NULL;
  Py_RETURN_NONE;
}

/* The type index an int argument names: 0, or -1 with a conversion error. An int outside
 * int32_t is an OverflowError naming it (a cast would read 2**32 + 1 as 1, another type);
 * a negative or unregistered index in range is C's to refuse (ffk_type_check_index). */
static int type_index_arg(PyObject *arg, int32_t *out) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow || v < INT32_MIN || v > INT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "type index %R is out of range", arg);
    return -1;
  }
  *out = (int32_t)v;
  return 0;
}

/* _type_fields(type_index) -> tuple of the Field descriptors of a type (inherited first). */
static PyObject *type_fields(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t index;
  if (type_index_arg(arg, &index) != 0) return NULL;
  int32_t n = ffk_type_num_fields(index);
  if (n < 0) return ffkpy_raise_from_ffk();
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(index, i);
    PyObject *d = f != NULL ? field_descr_new(f) : ffkpy_raise_from_ffk();
    if (d == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

/* _type_methods(type_index) -> tuple of the Method / StaticMethod descriptors of a type. */
static PyObject *type_methods(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t index;
  if (type_index_arg(arg, &index) != 0) return NULL;
  int32_t n = ffk_type_num_methods(index);
  if (n < 0) return ffkpy_raise_from_ffk();
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; ++i) {
    const ffk_method_info *m = ffk_type_method_at(index, i);
    PyObject *d = m != NULL ? ffkpy_reflect__method_descr_new(m, index) : ffkpy_raise_from_ffk();
    if (d == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

/* _type_info(type_index) -> (key, parent index or -1, is_reflected, doc or None). */
static PyObject *type_info(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t index;
  if (type_index_arg(arg, &index) != 0) return NULL;
  if (ffk_type_check_index(index) != 0) return ffkpy_raise_from_ffk();
  const char *key = ffk_type_key(index), *doc = ffk_type_doc(index);
  return Py_BuildValue("(siOz)", key ? key : "", (int)ffk_type_parent(index),
                       ffk_type_is_reflected(index) ? Py_True : Py_False, doc);
}

static int collect_key(int32_t index, const char *key, void *ctx) {
  (void)index;
  if (key == NULL) return 0;
  PyObject *s = PyUnicode_FromString(key);
  int rc = s != NULL ? PyList_Append((PyObject *)ctx, s) : -1;
  Py_XDECREF(s);
  return rc != 0 ? 1 : 0;
}

/* _registered_type_keys() -> list of every type key, in index order. */
static PyObject *registered_type_keys(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  PyObject *list = PyList_New(0);
  if (list != NULL && ffk_type_for_each(collect_key, list) != 0) Py_CLEAR(list);
  return list;
}

/* _class_for(type_index) -> the wrapper class of a type (making one for an unbound type). */
static PyObject *class_for(PyObject *mod, PyObject *arg) {
  (void)mod;
  int32_t index;
  if (type_index_arg(arg, &index) != 0) return NULL;
  if (ffk_type_check_index(index) != 0) return ffkpy_raise_from_ffk();
  PyObject *cls = ffkpy_class_for(index);
  return Py_XNewRef(cls);
}

PyMethodDef ffkpy_reflect_methods[] = {
    {"_class_for", class_for, METH_O, NULL},
    {"_reflect_class", reflect_class, METH_VARARGS, NULL},
    {"_object_from_fields", object_from_fields, METH_VARARGS,
     "_object_from_fields(type_key, fields): rebuilds a pickled reflected object."},
    {"_object_create", (PyCFunction)(void (*)(void))object_create, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"_object_is_reflection_made", object_is_reflection_made, METH_O,
     "_object_is_reflection_made(obj) -> bool: whether obj's state is its fields (pickled through them)."},
    {"_object_field_values", object_field_values, METH_O,
     "_object_field_values(obj) -> tuple: every field's value, in the type's field order."},
    {"_object_init_fields", object_init_fields, METH_VARARGS,
     "_object_init_fields(obj, values): sets every field (read-only ones too) of an object just made."},
    {"_type_fields", type_fields, METH_O, NULL},
    {"_type_methods", type_methods, METH_O, NULL},
    {"_type_info", type_info, METH_O, NULL},
    {"_registered_type_keys", registered_type_keys, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int ffkpy_reflect_types_init(PyObject *module) {
  if (PyType_Ready(&FieldDescrType) < 0 || PyModule_AddObjectRef(module, "Field", (PyObject *)&FieldDescrType) < 0 ||
      ffkpy_reflect__method_types_init(module) < 0)
    return -1;
  g_str_type_index = PyUnicode_InternFromString("__ffi_type_index__");
  if (g_str_type_index == NULL || ffkpy_reflect__cache_init() < 0) return -1;
  /* What ffikit.dataclasses builds type descriptions from: C's numbers, never copied. */
  static const struct {
    const char *name;
    long value;
  } k_constants[] = {
      {"FIELD_WRITABLE", FFK_FIELD_WRITABLE},       {"FIELD_HAS_DEFAULT", FFK_FIELD_HAS_DEFAULT},
      {"FIELD_INIT_OFF", FFK_FIELD_INIT_OFF},       {"FIELD_KW_ONLY", FFK_FIELD_KW_ONLY},
      {"FIELD_REPR_OFF", FFK_FIELD_REPR_OFF},       {"FIELD_COMPARE_OFF", FFK_FIELD_COMPARE_OFF},
      {"FIELD_DEFAULT_FACTORY", FFK_FIELD_DEFAULT_FACTORY}, {"FIELD_S_DEF", FFK_FIELD_S_DEF},
      {"FIELD_S_DEF_SIMPLE", FFK_FIELD_S_DEF_SIMPLE}, {"TYPE_OBJECT", FFK_TYPE_OBJECT},
      {"S_KIND_TREE", FFK_S_KIND_TREE},             {"S_KIND_VAR", FFK_S_KIND_VAR},
      {"S_KIND_DAG", FFK_S_KIND_DAG},               {"S_KIND_CONST_TREE", FFK_S_KIND_CONST_TREE},
      {"S_KIND_SINGLETON", FFK_S_KIND_SINGLETON},
  };
  for (size_t i = 0; i < sizeof k_constants / sizeof k_constants[0]; ++i)
    if (PyModule_AddIntConstant(module, k_constants[i].name, k_constants[i].value) < 0) return -1;
  if (PyModule_AddFunctions(module, ffkpy_reflect_methods) < 0) return -1;
  return 0;
}
