/*
 * ffikit_py.h - what the files of the extension `ffikit._core` share.
 *
 * The extension is a thin layer over the C API: every Python object that stands for an
 * ffikit object (a wrapper) holds one strong reference to it (`ffkpy_Object.obj`, never
 * NULL once the wrapper is built, except in an object of a reflected class that defines
 * __init__ and has not constructed it yet: conversions and methods raise TypeError then). Values cross with two conversions:
 *
 *   ffkpy_to_any    Python -> ffk_any, by the ordered rules of docs/python-api.md, decided
 *                   once per exact Python type and cached. In argument mode (a temps
 *                   list is given) the result may borrow: wrappers lend their handle,
 *                   strings are views of the Python object's UTF-8, and objects made for
 *                   the call go into the temps, released when the call returns. In owned
 *                   mode (temps NULL) the result owns what it holds.
 *   ffkpy_from_any  ffk_any -> Python (a new reference), by the spec's table.
 *
 * Errors: an ffikit error becomes a Python exception through ffkpy_raise_from_ffk (one
 * table of kinds, kept by ffikit.error.register_error), and a Python exception becomes an
 * ffikit error through ffkpy_set_ffk_from_py (the exception rides along as the Error's
 * payload so that it comes back as the same object).
 *
 * Every function here runs with the GIL held unless it says otherwise.
 */
#ifndef FFIKIT_PY_H
#define FFIKIT_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/*
 * Every call the extension makes is the checked ffk_function_call (function.h): a Python
 * callee's stray error, or one left pending, is cleared and reported, never surfacing as
 * a later call's exception. Its cost is small beside a Python call's.
 */
#define FFK_CHECKED_CALLS
#include <ffikit/ffikit.h>

/* ---- Wrappers ------------------------------------------------------------------------ */

struct DLPackExchangeAPI; /* dlpack_exchange.h */

typedef struct {
  PyObject_HEAD
  ffk_object *obj; /* owned; NULL only while a wrapper is being built, or in an object of a
                       reflected class whose own __init__ has not constructed it (object.c) */
  PyObject *weakreflist;
  /* A container returned by a call given a framework's tensors: that framework's DLPack
     exchange table, through which its tensor elements are read (tensor_results.c); NULL
     otherwise. Process lifetime, never owned. */
  const struct DLPackExchangeAPI *dlpack_api;
  /* The field cache of the wrapper's class (reflect.c), set when the wrapper is filled and
     read when it is freed: a dealloc must not look the class up, since the garbage collector
     may be clearing that class's dict (stale type-cache entries then point at freed values).
     Process lifetime, never owned; NULL for a wrapper never filled. */
  const void *field_cache;
} ffkpy_Object;

typedef struct {
  ffkpy_Object base;
  vectorcallfunc vectorcall;
  char release_gil;      /* release the GIL around the C call (default on) */
  char exchange_tensors; /* return tensors as the framework's that was given (default on) */
} ffkpy_Function;

typedef struct {
  PyObject_HEAD
  DLDataType dtype;
} ffkpy_DataType;

typedef struct {
  PyObject_HEAD
  DLDevice device;
} ffkpy_Device;

extern PyTypeObject ffkpy_ObjectType;
extern PyTypeObject ffkpy_FunctionType;
extern PyTypeObject ffkpy_ErrorType;
extern PyTypeObject ffkpy_DataTypeType;
extern PyTypeObject ffkpy_DeviceType;
extern PyTypeObject ffkpy_TensorType;

/* Module state shared by the files (one interpreter: the extension is single-phase). */
typedef struct {
  PyObject *dtype_cls;      /* ffikit.dtype (a str subclass made in Python) */
  PyObject *string_cls;     /* ffikit.String */
  PyObject *bytes_cls;      /* ffikit.Bytes */
  PyObject *shape_cls;      /* ffikit.Shape */
  PyObject *error_to_c;     /* ffikit.error._to_c(exc) -> Error */
  PyObject *error_from_c;   /* ffikit.error._from_c(error, exc_or_None) -> exception */
  PyObject *type_cache;     /* dict: exact Python type -> conversion kind (int) */
  PyObject *dynamic_classes;/* dict: type index (int) -> wrapper class, for every type */
  PyObject *make_class;     /* ffikit._make_class(type_key, parent_cls) -> new class */
  PyObject *object_convertible_cls; /* ffikit.ObjectConvertible: converted through asobject() */
  PyObject *dtype_cache;    /* dict: packed DLDataType -> dtype instance */
  Py_ssize_t string_slot;   /* offset of String._ffikit_object, or -1 */
  Py_ssize_t dtype_slot;    /* offset of dtype._ffikit_dtype, or -1 */
  PyObject *str_ffikit_object; /* interned "_ffikit_object" */
  PyObject *str_dlpack;        /* interned "__dlpack__" */
  int32_t opaque_py_type;      /* the type index of ffi.OpaquePyObject (a subtype of Opaque) */
} ffkpy_state;

extern ffkpy_state ffkpy_g;

/*
 * Calls up: the files at the bottom of the extension reach the files above them only
 * through this table (object.c defines it), so that no file calls one that calls it back
 * (tests/layering:python_cycles_test). object.c raises ffikit errors, gives a Function
 * wrapper its vectorcall, fills and clears a reflected class's field slots and constructs
 * reflected objects through it; convert.c makes a Function of a Python callable through
 * it; convert.c, dlpack_exchange.c and tensor_dlpack.c find the Function and Tensor
 * classes in it. module.c fills every entry before the first type is readied; none is
 * NULL afterwards. Each entry is the function or type object of the file named.
 */
typedef struct {
  PyObject *(*raise_from_ffk)(void);                   /* error.c: ffkpy_raise_from_ffk */
  PyTypeObject *function_type;                         /* function.c: ffkpy_FunctionType */
  vectorcallfunc function_vectorcall;                  /* function.c: ffkpy_function_vectorcall */
  ffk_function *(*function_from_callable)(PyObject *callable); /* function.c */
  PyTypeObject *tensor_type;                           /* tensor.c: ffkpy_TensorType */
  PyObject *(*reflect_new)(PyTypeObject *type, int32_t index, PyObject *args, PyObject *kwds); /* reflect.c */
  int (*reflect_init)(PyObject *self, int32_t index, PyObject *args, PyObject *kwds);         /* reflect.c */
  int (*reflect_fill)(PyObject *self);                 /* reflect_cache.c: ffkpy_reflect_fill */
  void (*reflect_clear)(PyObject *self);               /* reflect_cache.c: ffkpy_reflect_clear */
  int (*reflect_fill_unwrapped)(PyObject *self);       /* reflect_cache.c: ffkpy_reflect__fill_unwrapped */
  int (*reflect_plain_layout)(PyTypeObject *type, const void *cache); /* reflect_cache.c */
} ffkpy_up_table;

extern ffkpy_up_table ffkpy_up;

/* A new wrapper for `obj` (steals the reference, also on failure) of the class that the
 * type registry maps its type index to. NULL with a Python exception. */
PyObject *ffkpy_wrap_steal(ffk_object *obj);
/* A wrapper of class `type` (a class bound to obj's type) around obj (steals it, also on
   failure; NULL obj: NULL, the error already set); a py_class object keeps its one wrapper
   (reflect.c). */
PyObject *ffkpy_wrap_as(PyTypeObject *type, ffk_object *obj);

/* The handle of a wrapper (borrowed), or NULL when `o` is not one (no exception set). */
static inline ffk_object *ffkpy_handle(PyObject *o) {
  return PyObject_TypeCheck(o, &ffkpy_ObjectType) ? ((ffkpy_Object *)o)->obj : NULL;
}

/* CPython's pointer hash (rotated so the alignment bits do not collide), never -1. */
static inline Py_hash_t ffkpy_hash_pointer(const void *p) {
  size_t y = (size_t)p;
  y = (y >> 4) | (y << (8 * sizeof(void *) - 4));
  Py_hash_t h = (Py_hash_t)y;
  return h == -1 ? -2 : h;
}

/* tp_traverse of every wrapper type (visits a Python-made subclass). */
int ffkpy_object_traverse(PyObject *self, visitproc visit, void *arg);

/* The wrapper class for a type index (borrowed), making one for a run-time type. */
PyObject *ffkpy_class_for(int32_t type_index);

/* _PyType_Lookup (borrowed), keeping an exception that is pending when it is called. */
PyObject *ffkpy_type_lookup(PyTypeObject *type, PyObject *name);

/* The handle of `o` when it is a constructed wrapper (borrowed), else NULL with a
 * TypeError naming `what`, the member of type `type_index` applied to it. */
ffk_object *ffkpy_instance_handle(PyObject *o, const char *what, int32_t type_index);

/* ---- Conversions --------------------------------------------------------------------- */

/* Owned values made for one call, released when it returns. Small calls never allocate. */
typedef struct {
  ffk_any inline_items[8];
  ffk_any *items;
  Py_ssize_t size, capacity;
  ffk_byte_array byte_views[8]; /* targets of BYTE_ARRAY_PTR argument views */
  int nbyte_views;
} ffkpy_temps;

void ffkpy_temps_init(ffkpy_temps *t);
void ffkpy_temps_release(ffkpy_temps *t);

/* Python -> Any (see the top of this file). 0, or -1 with a Python exception (*out None). */
int ffkpy_to_any(PyObject *o, ffk_any *out, ffkpy_temps *temps);

/* The call's fast path: converts args[0..n) while each is a plain value (None, exact bool,
 * one-digit int, float, a constructed wrapper lent without an exchange table) and returns
 * how many it converted; the rest is ffkpy_to_any's. The values it converts own nothing
 * (no temps, no release), so a caller may drop them or convert them again. Cannot fail. */
Py_ssize_t ffkpy_args_to_any_plain(PyObject *const *args, Py_ssize_t n, ffk_any *out);

/* Any (borrowed) -> Python (new reference), or NULL with a Python exception. */
PyObject *ffkpy_from_any(const ffk_any *v);

/* Any (stolen: released also on failure) -> Python. */
PyObject *ffkpy_from_any_steal(ffk_any *v);

/* Sets a char switch from a Python truth value (a getset setter's body): 0, or -1 with a
 * TypeError from the value's __bool__ or an AttributeError for `del` (v NULL) naming it. */
int ffkpy_set_switch(PyObject *v, char *flag, const char *name);

/* Forgets the cached conversion kinds (types changed, or a dtype/Device class was set). */
void ffkpy_convert_reset_cache(void);

/* The Python str of a str value (SmallStr, String, raw string), or NULL with an exception. */
PyObject *ffkpy_str_from_utf8(const char *data, size_t size);

/* DataType / Device values as Python objects (new references). */
PyObject *ffkpy_dtype_from_dl(DLDataType t);
PyObject *ffkpy_device_from_dl(DLDevice d);
/* Reads a dtype given as an ffikit.dtype or a _core.DataType: 1 done, 0 not such a value
 * (text included: callers parse it through ffikit.dtype), -1 with a Python exception. */
int ffkpy_dtype_read(PyObject *o, DLDataType *out);

/* ---- Tensors back to their framework (tensor_results.c) ------------------------------- */

/* Any (stolen) -> Python, tensors through `api` (may be NULL: plain ffkpy_from_any_steal)
 * and containers remembering it. New reference, or NULL with a Python exception. */
PyObject *ffkpy_from_any_exchange_steal(ffk_any *v, const struct DLPackExchangeAPI *api);

/* An element read from the container wrapper `owner` (borrowed value / stolen value):
 * ffkpy_from_any, through the table the container remembers. */
PyObject *ffkpy_element(PyObject *owner, const ffk_any *v);
PyObject *ffkpy_element_steal(PyObject *owner, ffk_any *v);

/* ---- Errors -------------------------------------------------------------------------- */

/* Raises the pending ffikit error (fetched from the slot) as a Python exception. Returns NULL. */
PyObject *ffkpy_raise_from_ffk(void);

/*
 * Reads `obj`, a sequence of ints (a shape, strides, a permutation), into int64 values:
 * the conversion every function taking one shares, which decides nothing about the values
 * (C's rules do: ffk_tensor_check_shape, ffk_shape_new). Any iterable but str, bytes and
 * bytearray; each item an int or an object with __index__ (numpy's ints), never a bool.
 * Nothing is recursed into: a nested sequence is an item of the wrong type. `dims` has
 * room for `cap` values; a longer sequence is read into a new PyMem block stored in *heap
 * when `heap` is not NULL, and otherwise is not read at all (only its length is stored,
 * for the caller's C rule to refuse). *n is the length. 0, or -1 with a TypeError naming
 * `what` (the user's operation), `arg` and the item's type ("empty: shape must be a
 * sequence of ints, not str", "reshape: shape[0] must be an int, not tuple"), or an
 * OverflowError for an int outside int64 ("empty: shape[1] is 10**30, ...").
 */
int ffkpy_read_int64s(PyObject *obj, const char *what, const char *arg, int64_t *dims, Py_ssize_t cap,
                      int64_t **heap, Py_ssize_t *n);
/* Same, returning -1. */
int ffkpy_raise_from_ffk_int(void);

/* Moves the pending Python exception into the ffikit slot. Returns -1. */
int ffkpy_set_ffk_from_py(void);


/* ---- Functions ----------------------------------------------------------------------- */

/* Function.__call__ (the vectorcall slot of every Function wrapper). */
PyObject *ffkpy_function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* A Function wrapping a Python callable (new reference), or NULL with a Python exception. */
ffk_function *ffkpy_function_from_callable(PyObject *callable);

/* The release routine of the Opaque objects that hold Python objects. */
void ffkpy_opaque_release(void *handle);

/* A new ffi.OpaquePyObject holding `o` (steals the reference, also on failure), as tvm_ffi
 * names Python objects in C; NULL with a pending ffikit error. */
ffk_object *ffkpy_opaque_new_steal(PyObject *o);

/* The Python object an ffi.OpaquePyObject holds (borrowed), or NULL when obj is not one. */
static inline PyObject *ffkpy_opaque_object(const ffk_object *obj) {
  /* Only ffkpy_opaque_new_steal makes them, all of type ffi.OpaquePyObject: the type index
     first, so that a wrapped object of another type costs no type-registry walk. */
  if (obj == NULL || obj->type_index != ffkpy_g.opaque_py_type) return NULL;
  return ffk_opaque_release_fn(obj) == ffkpy_opaque_release ? (PyObject *)ffk_opaque_handle(obj) : NULL;
}

/* Whether ffkpy_from_any makes a wrapper (an ffkpy_Object) of `v` by way of ffkpy_wrap_steal:
 * an object of a registered type that is not an Opaque holding a Python object. */
static inline int ffkpy_wraps_registered(const ffk_any *v) {
  return ffk_any_is_object(v) && v->v_obj != NULL && v->v_obj->type_index >= FFK_TYPE_STATIC_END &&
         ffkpy_opaque_object(v->v_obj) == NULL;
}

/* ---- Reflected types (reflect.c) -------------------------------------------------------- */

/* The reflected type index a class constructs (its __ffi_type_index__), or -1 when it has
 * none (no exception set). Cheap: CPython's attribute cache (object.c). */
int32_t ffkpy_reflect_index(PyTypeObject *type);

/* Object.__new__ for a reflected class: a new wrapper of `type` around a new object made by
 * the constructor of `index` from args/kwds; NULL with a Python exception (the C text). */
PyObject *ffkpy_reflect_new(PyTypeObject *type, int32_t index, PyObject *args, PyObject *kwds);

/* Object.__init__ of a wrapper without a handle: constructs it in place. 0 or -1. */
int ffkpy_reflect_init(PyObject *self, int32_t index, PyObject *args, PyObject *kwds);

/* Whether `type` keeps Object's __new__ and __init__ (so Class(...) may construct directly;
 * object.c), and installing the class vectorcall that does so (reflect.c). */
int ffkpy_reflect_ready(PyTypeObject *type);
int ffkpy_reflect_enable_vectorcall(PyTypeObject *type);
PyObject *ffkpy_reflect_class_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames);

/* Fills the slots in which a reflected class keeps read-only int/float/bool fields, from
 * the wrapper's handle (just set); a no-op for other classes and for a NULL handle. 0, or
 * -1 with a Python exception. Every path that gives a wrapper of a reflected class its
 * handle calls it. */
int ffkpy_reflect_fill(PyObject *self);

/* Drops the values of those slots (the wrapper's dealloc). Cannot fail. */
void ffkpy_reflect_clear(PyObject *self);

/* ffkpy_reflect_fill for a wrapper whose handle the caller knows has no wrapper (no look in
 * the identity map first) and whose field_cache, when set, is its class's (object.c's spare).
 * 0, or -1 with a Python exception. */
int ffkpy_reflect__fill_unwrapped(PyObject *self);

/* Whether instances of `type`, whose field cache is `cache` (an ffkpy_field_cache), hold
 * nothing beyond ffkpy_Object and the cache's slots (no slot a subclass added). */
int ffkpy_reflect__plain_layout(PyTypeObject *type, const void *cache);

/* Drops `o` (a reference the caller owns) that ffkpy_from_any made of `from`: when nothing
 * else holds it and it is a plain wrapper of a reflected class, it is kept as the spare that
 * the next ffkpy_wrap_steal of its class reuses (object.c); else Py_DECREF. Needs the GIL. */
void ffkpy_wrapper_drop(PyObject *o, const ffk_any *from);

/* Frees the spare wrapper, if any (after a call from Python into C). Needs the GIL. Inline:
 * every Function call from Python asks, and there is seldom a spare. */
void ffkpy_wrapper__spare_free(void);
#ifndef Py_GIL_DISABLED
extern PyObject *ffkpy_spare; /* object.c's spare wrapper, or NULL */
static inline void ffkpy_wrapper_spare_flush(void) {
  if (ffkpy_spare != NULL) ffkpy_wrapper__spare_free();
}
#else
static inline void ffkpy_wrapper_spare_flush(void) {}
#endif

/* A callback argument's wrapper with a lent handle (object.c): `lent`, the caller's record
 * (on its stack, unused before), names the one wrapper made that way. ffkpy_wrap_lent
 * wraps obj (borrowed; the caller keeps it alive until ffkpy_wrapper_drop_lent): the spare,
 * its handle lent and *lent filled, when the spare fits; else as ffkpy_wrap_steal does,
 * with a reference of its own. New reference or NULL. ffkpy_wrapper_drop_lent ends the
 * call for the wrapper o that *lent names (it releases the caller's reference to o);
 * after a failed ffkpy_wrap_lent it is not called. ffkpy_wrapper_own, before a wrapper's
 * handle is released or replaced: takes a reference for a lent handle. All under the GIL. */
typedef struct ffkpy_lent {
  PyObject *wrapper;
  ffk_object *obj;
  struct ffkpy_lent *outer;
} ffkpy_lent;
PyObject *ffkpy_wrap_lent(ffk_object *obj, ffkpy_lent *lent);
void ffkpy_wrapper_drop_lent(PyObject *o, ffkpy_lent *lent);
void ffkpy_wrapper_own(PyObject *self);

/* Whether the running thread holds the GIL (its thread state is the attached one), with no
 * PyGILState round trip: one thread-local read. Before 3.13 the attached thread state may
 * be another thread's (the GIL holder's, a global): compared by address with this thread's,
 * never read. */
static inline int ffkpy_gil_held_here(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != NULL;
#else
  PyThreadState *ts = _PyThreadState_UncheckedGet();
  return ts != NULL && ts == PyGILState_GetThisThreadState();
#endif
}

int ffkpy_reflect_types_init(PyObject *module);

/* The identity map of py_class wrappers (object.c), all under the GIL except _maybe:
 * _find returns obj's live wrapper (borrowed) or NULL; _add maps obj to wrapper (0, or -1
 * with a MemoryError); _remove drops the entry if it maps obj to that wrapper; _maybe
 * (any thread, no GIL) is 0 only when obj surely has no entry; _count is the number of
 * entries. */
PyObject *ffkpy_identity_find(const ffk_object *obj);
int ffkpy_identity_add(ffk_object *obj, PyObject *wrapper);
void ffkpy_identity_remove(const ffk_object *obj, PyObject *wrapper);
int ffkpy_identity_maybe(const ffk_object *obj);
Py_ssize_t ffkpy_identity_count(void);

/* Module-level functions defined in each file, gathered by module.c. */
extern PyMethodDef ffkpy_function_methods[];
extern PyMethodDef ffkpy_object_methods[];
extern PyMethodDef ffkpy_error_methods[];
extern PyMethodDef ffkpy_convert_methods[];
extern PyMethodDef ffkpy_testing_methods[];
extern PyMethodDef ffkpy_hook_methods[];
extern PyMethodDef ffkpy_value_methods[];
extern PyMethodDef ffkpy_container_methods[];
extern PyMethodDef ffkpy_tensor_methods[];
extern PyMethodDef ffkpy_enum_methods[]; /* enum.c */

int ffkpy_object_types_init(PyObject *module);
int ffkpy_error_type_init(PyObject *module); /* after ffkpy_object_types_init */
int ffkpy_value_types_init(PyObject *module);
int ffkpy_function_types_init(PyObject *module);
int ffkpy_tensor_types_init(PyObject *module);

/* A Tensor for a DLPack producer, a capsule or an ffikit.Tensor (new reference), or NULL
 * with a Python exception; a capsule is consumed exactly once. A producer's pending work
 * is ordered before ffikit's current stream for the tensor's device (tensor_dlpack.c). */
ffk_tensor *ffkpy_tensor_from_dlpack(PyObject *obj, const ffk_dlpack_requirements *req);

/* Through the producer type's DLPack C exchange API: 1 with *out a new Tensor (the
 * producer's current_work_stream ordered before ffikit's current stream), 0 when the type
 * offers none or cannot name its stream for a device tensor (use __dlpack__), -1 with a
 * Python exception. */
int ffkpy_tensor_from_exchange_api(PyObject *o, const ffk_dlpack_requirements *req, ffk_tensor **out);
/* Sets ffikit.Tensor.__dlpack_c_exchange_api__. 0 or -1. */
int ffkpy_dlpack_exchange_init(void);
int ffkpy_container_types_init(PyObject *module);

#endif /* FFIKIT_PY_H */
