/*
 * convert.c - Python values to ffk_any and back (the rules of docs/python-api.md).
 *
 * Python -> Any takes the first rule that matches, decided once per exact Python type
 * and cached in a dict (the builtin types are tested by pointer before the dict is
 * asked): None; ffikit wrappers; bool; integral (int, numbers.Integral such as numpy
 * ints); real (float, numbers.Real); dtype; Device; a numpy, torch or ml_dtypes dtype
 * or anything with __dlpack_data_type__ (a DataType, through ffikit.dtype); str (String passes its cached
 * object); bytes/bytearray (Bytes passes its object); Shape; list/tuple -> a new Array;
 * dict -> a new Map; an object with __dlpack__ -> a Tensor sharing its memory (zero
 * copy); callable -> a Function; exception -> an Error; anything else ->
 * an Opaque object holding a strong reference.
 *
 * In argument mode nothing is copied that need not be: small str/bytes are inline, a
 * longer str is a view of the Python object's UTF-8 (RAW_STR) and longer bytes a view of
 * its buffer (BYTE_ARRAY_PTR), valid for the call; wrappers lend their handle without a
 * reference count change. Objects made for the call live in the temps until it returns.
 */
#include "ffikit_py.h"

#include "dlpack_exchange.h"

#include <structmember.h> /* PyMemberDef, T_OBJECT_EX: in Python.h only from 3.12 */

#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* PyLongObject's digits (Python.h includes it from 3.11) */
#endif

enum kind {
  K_UNKNOWN = 0,
  K_NONE,
  K_WRAPPER,
  K_CONVERTIBLE, /* ffikit.ObjectConvertible: the Object its asobject() returns */
  K_BOOL,
  K_INT,
  K_INDEX, /* numbers.Integral that is not an int: via __index__ */
  K_FLOAT,
  K_REAL, /* numbers.Real that is not a float: via __float__ */
  K_DTYPE,
  K_DATATYPE,
  K_DEVICE,
  K_FOREIGN_DTYPE, /* numpy.dtype (ml_dtypes' too), torch.dtype, __dlpack_data_type__ */
  K_STRING, /* ffikit.String: its cached object */
  K_STR,
  K_BYTES_OBJ, /* ffikit.Bytes */
  K_BYTES,
  K_BYTEARRAY,
  K_SHAPE,
  K_SEQ,
  K_DICT,
  K_DLPACK, /* an object with __dlpack__: a Tensor sharing its memory */
  K_CALLABLE,
  K_EXCEPTION,
  K_OPAQUE,
};

static PyObject *g_integral, *g_real; /* numbers.Integral, numbers.Real */

void ffkpy_convert_reset_cache(void) {
  if (ffkpy_g.type_cache != NULL) PyDict_Clear(ffkpy_g.type_cache);
}

static int subtype(PyTypeObject *tp, PyObject *cls) {
  return cls != NULL && PyType_Check(cls) && PyType_IsSubtype(tp, (PyTypeObject *)cls);
}

/* Whether instances of tp are another library's dtype: torch.dtype, numpy.dtype (and so
 * ml_dtypes' dtypes, which are numpy dtypes), or a type with __dlpack_data_type__. Read
 * by name, so that neither library is imported here. -1 with an exception. */
static int is_foreign_dtype(PyTypeObject *tp) {
  if (strcmp(tp->tp_name, "torch.dtype") == 0) return 1;
  PyObject *mro = tp->tp_mro;
  for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); ++i)
    if (strcmp(((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_name, "numpy.dtype") == 0) return 1;
  return PyObject_HasAttrString((PyObject *)tp, "__dlpack_data_type__");
}

/* The kind of a type that is not one of the exact builtins (K_UNKNOWN with an exception). */
static int classify(PyTypeObject *tp) {
  if (PyType_IsSubtype(tp, &ffkpy_ObjectType)) return K_WRAPPER;
  if (subtype(tp, ffkpy_g.object_convertible_cls)) return K_CONVERTIBLE;
  if (PyType_IsSubtype(tp, &PyBool_Type)) return K_BOOL;
  if (strcmp(tp->tp_name, "numpy.bool_") == 0 || strcmp(tp->tp_name, "numpy.bool") == 0) return K_BOOL;
  if (subtype(tp, ffkpy_g.dtype_cls)) return K_DTYPE; /* a str subclass: before str and ints */
  if (subtype(tp, ffkpy_g.string_cls)) return K_STRING;
  if (subtype(tp, ffkpy_g.bytes_cls)) return K_BYTES_OBJ;
  if (subtype(tp, ffkpy_g.shape_cls)) return K_SHAPE;
  if (PyType_IsSubtype(tp, &PyLong_Type)) return K_INT;
  if (PyType_IsSubtype(tp, &PyFloat_Type)) return K_FLOAT;
  int r = g_integral ? PyObject_IsSubclass((PyObject *)tp, g_integral) : 0;
  if (r < 0) return K_UNKNOWN;
  if (r) return K_INDEX;
  r = g_real ? PyObject_IsSubclass((PyObject *)tp, g_real) : 0;
  if (r < 0) return K_UNKNOWN;
  if (r) return K_REAL;
  if (PyType_IsSubtype(tp, &ffkpy_DataTypeType)) return K_DATATYPE;
  if (PyType_IsSubtype(tp, &ffkpy_DeviceType)) return K_DEVICE;
  int foreign = is_foreign_dtype(tp);
  if (foreign < 0) return K_UNKNOWN;
  if (foreign) return K_FOREIGN_DTYPE;
  if (PyType_IsSubtype(tp, &PyUnicode_Type)) return K_STR;
  if (PyType_IsSubtype(tp, &PyBytes_Type)) return K_BYTES;
  if (PyType_IsSubtype(tp, &PyByteArray_Type)) return K_BYTEARRAY;
  if (PyType_IsSubtype(tp, &PyList_Type) || PyType_IsSubtype(tp, &PyTuple_Type)) return K_SEQ;
  if (PyType_IsSubtype(tp, &PyDict_Type)) return K_DICT;
  PyObject *dlpack = PyObject_GetAttr((PyObject *)tp, ffkpy_g.str_dlpack);
  if (dlpack != NULL) {
    Py_DECREF(dlpack);
    return K_DLPACK;
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return K_UNKNOWN;
  PyErr_Clear();
  if (PyType_IsSubtype(tp, (PyTypeObject *)PyExc_BaseException)) return K_EXCEPTION;
  if (tp->tp_call != NULL) return K_CALLABLE;
  return K_OPAQUE;
}

static int kind_of(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  if (o == Py_None) return K_NONE;
  if (tp == &PyLong_Type) return K_INT;
  if (tp == &PyFloat_Type) return K_FLOAT;
  if (tp == &PyBool_Type) return K_BOOL;
  if (tp == &PyUnicode_Type) return K_STR;
  if (tp == &PyBytes_Type) return K_BYTES;
  if (tp == ffkpy_up.function_type || tp == &ffkpy_ObjectType) return K_WRAPPER;
  PyObject *cached = PyDict_GetItemWithError(ffkpy_g.type_cache, (PyObject *)tp);
  if (cached != NULL) return (int)PyLong_AS_LONG(cached);
  if (PyErr_Occurred()) return K_UNKNOWN;
  int k = classify(tp);
  if (k == K_UNKNOWN) return K_UNKNOWN;
  PyObject *v = PyLong_FromLong(k);
  if (v == NULL || PyDict_SetItem(ffkpy_g.type_cache, (PyObject *)tp, v) != 0) k = K_UNKNOWN;
  Py_XDECREF(v);
  return k;
}

/* ---- Temps -------------------------------------------------------------------------- */

void ffkpy_temps_init(ffkpy_temps *t) {
  t->items = t->inline_items;
  t->size = 0;
  t->capacity = (Py_ssize_t)(sizeof t->inline_items / sizeof t->inline_items[0]);
  t->nbyte_views = 0;
}

void ffkpy_temps_release(ffkpy_temps *t) {
  if (t->size > 0) {
    /* A release may run a producer's DLPack deleter written in Python (ctypes), which must
       not run with the failed call's exception set: keep it aside meanwhile. PyErr_Fetch:
       Python 3.10 lacks PyErr_GetRaisedException. */
    PyObject *type = NULL, *exc = NULL, *tb = NULL;
    bool pending = PyErr_Occurred() != NULL;
    if (pending) PyErr_Fetch(&type, &exc, &tb);
    for (Py_ssize_t i = 0; i < t->size; ++i) ffk_any_release(&t->items[i]);
    if (pending) PyErr_Restore(type, exc, tb);
  }
  if (t->items != t->inline_items) PyMem_Free(t->items);
  ffkpy_temps_init(t);
}

/* Keeps the owned value `*v` alive for the call; *v becomes a borrowed copy. */
static int temps_keep(ffkpy_temps *t, ffk_any *v) {
  if (t->size == t->capacity) {
    Py_ssize_t cap = t->capacity * 2;
    ffk_any *items = PyMem_Malloc(sizeof(ffk_any) * (size_t)cap);
    if (items == NULL) {
      ffk_any_release(v);
      PyErr_NoMemory();
      return -1;
    }
    memcpy(items, t->items, sizeof(ffk_any) * (size_t)t->size);
    if (t->items != t->inline_items) PyMem_Free(t->items);
    t->items = items;
    t->capacity = cap;
  }
  t->items[t->size++] = *v;
  return 0;
}

/* ---- Python -> Any ----------------------------------------------------------------- */

static int overflow(PyObject *o) {
  PyErr_Format(PyExc_OverflowError, "%R does not fit in a 64-bit signed integer", o);
  return -1;
}

/* An exact int of one digit or none (nearly every int a call passes) read in place; 0 for
 * any other int, which PyLong_AsLongLongAndOverflow reads. */
static inline int compact_int(PyObject *o, long long *out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject *)o)) return 0;
  *out = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
#else
  Py_ssize_t size = Py_SIZE(o);
  if (size < -1 || size > 1) return 0;
  *out = (long long)size * (long long)((PyLongObject *)o)->ob_digit[0];
#endif
  return 1;
}

static int int_to_any(PyObject *o, ffk_any *out) {
  long long small;
  if (PyLong_CheckExact(o) && compact_int(o, &small)) {
    *out = ffk_any_int(small);
    return 0;
  }
  int of;
  long long x = PyLong_AsLongLongAndOverflow(o, &of);
  if (of != 0) return overflow(o);
  if (x == -1 && PyErr_Occurred()) return -1;
  *out = ffk_any_int(x);
  return 0;
}

static int str_to_any(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  Py_ssize_t n;
  const char *data = PyUnicode_AsUTF8AndSize(o, &n);
  if (data == NULL) return -1;
  if (temps != NULL && n > FFK_SMALL_STR_MAX && strlen(data) == (size_t)n) {
    *out = ffk_any_raw_str(data); /* a view of the Python object's UTF-8, for the call */
    return 0;
  }
  if (ffk_any_str(data, (size_t)n, out) != 0) return ffkpy_raise_from_ffk_int();
  if (temps != NULL && ffk_any_is_object(out)) return temps_keep(temps, out);
  return 0;
}

static int bytes_to_any(const char *data, Py_ssize_t n, ffk_any *out, ffkpy_temps *temps) {
  if (temps != NULL && n > FFK_SMALL_STR_MAX && temps->nbyte_views < 8) {
    ffk_byte_array *view = &temps->byte_views[temps->nbyte_views++];
    view->data = data;
    view->size = (size_t)n;
    *out = ffk_any_byte_array(view);
    return 0;
  }
  if (ffk_any_bytes(data, (size_t)n, out) != 0) return ffkpy_raise_from_ffk_int();
  if (temps != NULL && ffk_any_is_object(out)) return temps_keep(temps, out);
  return 0;
}

/* A wrapper's handle: lent in argument mode, retained in owned mode. */
static int handle_to_any(ffk_object *obj, ffk_any *out, ffkpy_temps *temps) {
  if (temps != NULL) {
    *out = ffk_any_none();
    out->type_index = obj->type_index;
    out->v_obj = obj;
  } else {
    *out = ffk_any_object(obj);
  }
  return 0;
}

/* An owned new object value: kept in the temps (argument mode) or handed over. */
static int new_object_to_any(ffk_object *obj, ffk_any *out, ffkpy_temps *temps) {
  if (obj == NULL) return ffkpy_raise_from_ffk_int();
  *out = ffk_any_object_steal(obj);
  return temps != NULL ? temps_keep(temps, out) : 0;
}

/* The C object a String/Bytes/Shape keeps (borrowed), or NULL when it has none. */
static ffk_object *cached_object(PyObject *o, int use_slot) {
  if (use_slot && ffkpy_g.string_slot >= 0 && Py_TYPE(o) == (PyTypeObject *)ffkpy_g.string_cls) {
    PyObject *w = *(PyObject **)((char *)o + ffkpy_g.string_slot);
    return w != NULL ? ffkpy_handle(w) : NULL;
  }
  PyObject *w = PyObject_GetAttr(o, ffkpy_g.str_ffikit_object);
  if (w == NULL) {
    PyErr_Clear();
    return NULL;
  }
  ffk_object *h = ffkpy_handle(w);
  Py_DECREF(w); /* the Python object keeps it alive */
  return h;
}

/*
 * Owned values of the first `n` items of `seq` (a list or tuple, as PySequence_Fast gives)
 * into out[0, n): 0, or -1 with an exception and nothing left owned. Exact ints and
 * floats, the common homogeneous case, are read in this loop (an int that does not fit
 * in 64 bits is the converter's OverflowError); everything else goes through
 * ffkpy_to_any, holding the item, and since that may run Python code that changes a
 * list, its items are read afresh each step and a list that shrank is a RuntimeError.
 */
/* An exact int's value when it has one digit (most ints), read without a call: 1, else 0. */
static inline int small_int(PyObject *x, long long *out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject *)x)) return 0;
  *out = (long long)PyUnstable_Long_CompactValue((PyLongObject *)x);
  return 1;
#else
  Py_ssize_t size = Py_SIZE(x); /* the digit count, negative for negative ints */
  if (size < -1 || size > 1) return 0;
  *out = size == 0 ? 0 : (long long)size * (long long)((PyLongObject *)x)->ob_digit[0];
  return 1;
#endif
}

int ffkpy_to_any_items(PyObject *seq, Py_ssize_t n, ffk_any *out) {
  if (Py_EnterRecursiveCall(" while converting a sequence to an ffikit Array") != 0) return -1;
  Py_ssize_t i = 0;
  int rc = 0;
  for (; i < n; ++i) {
    if (FFK_UNLIKELY(i >= PySequence_Fast_GET_SIZE(seq))) {
      PyErr_SetString(PyExc_RuntimeError, "the list changed size while it was converted");
      rc = -1;
      break;
    }
    PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
    if (Py_IS_TYPE(x, &PyLong_Type)) {
      long long v;
      int of = 0;
      if (small_int(x, &v) || ((v = PyLong_AsLongLongAndOverflow(x, &of)), of == 0 && !(v == -1 && PyErr_Occurred()))) {
        out[i] = ffk_any_int(v);
        continue;
      }
    } else if (Py_IS_TYPE(x, &PyFloat_Type)) {
      out[i] = ffk_any_float(PyFloat_AS_DOUBLE(x));
      continue;
    }
    Py_INCREF(x);
    rc = ffkpy_to_any(x, &out[i], NULL);
    Py_DECREF(x);
    if (rc != 0) break;
  }
  Py_LeaveRecursiveCall();
  if (rc != 0)
    while (i-- > 0) ffk_any_release(&out[i]);
  return rc;
}

static int seq_to_array(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  PyObject *seq = PySequence_Fast(o, "expected a sequence");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  ffk_any stack[8];
  ffk_any *items = n <= 8 ? stack : PyMem_Malloc(sizeof(ffk_any) * (size_t)n);
  if (items == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  int rc = ffkpy_to_any_items(seq, n, items);
  ffk_array *a = rc == 0 ? ffk_array_new_steal(items, n) : NULL; /* steals every item, also on failure */
  if (items != stack) PyMem_Free(items);
  Py_DECREF(seq);
  if (rc != 0) return -1;
  return new_object_to_any((ffk_object *)a, out, temps); /* NULL: the pending error */
}

/* An owned value for a dict's key or value: exact str, int and float inline (the common
 * keys and values), the rest through ffkpy_to_any. 0, or -1 with an exception. */
static inline int owned_item(PyObject *x, ffk_any *out) {
  PyTypeObject *tp = Py_TYPE(x);
  if (tp == &PyUnicode_Type) return str_to_any(x, out, NULL);
  if (tp == &PyLong_Type) {
    long long v;
    int of = 0;
    if (small_int(x, &v) || ((v = PyLong_AsLongLongAndOverflow(x, &of)), of == 0 && !(v == -1 && PyErr_Occurred()))) {
      *out = ffk_any_int(v);
      return 0;
    }
  } else if (tp == &PyFloat_Type) {
    *out = ffk_any_float(PyFloat_AS_DOUBLE(x));
    return 0;
  }
  Py_INCREF(x); /* a conversion may run Python code that drops the dict's reference */
  int rc = ffkpy_to_any(x, out, NULL);
  Py_DECREF(x);
  return rc;
}

/*
 * A dict -> a new Map in one pass: every key and value converted once into owned values
 * that ffk_map_from_pairs_steal takes over (one hash per key, no retain/release pair).
 * The exact str keys longer than a SmallStr become their Strings together, after the
 * pass, in one block (ffk_any_str_many: one allocation for all, not one each); the pass
 * keeps a reference to each such key meanwhile (converting a value may run Python code
 * that drops the dict's).
 */
static int dict_to_map(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  Py_ssize_t n = PyDict_Size(o);
  /* keys, values, then for the long str keys: their objects and positions, texts, sizes, values */
  size_t per = 2 * sizeof(ffk_any) + sizeof(PyObject *) + sizeof(Py_ssize_t) + sizeof(const char *) + sizeof(size_t) +
               sizeof(ffk_any);
  char *buf = PyMem_Malloc(per * (size_t)n + 1);
  if (buf == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  ffk_any *keys = (ffk_any *)buf, *values = keys + n, *made = values + n;
  PyObject **long_keys = (PyObject **)(made + n);
  Py_ssize_t *long_at = (Py_ssize_t *)(long_keys + n);
  const char **texts = (const char **)(long_at + n);
  size_t *sizes = (size_t *)(texts + n);
  Py_ssize_t pos = 0, i = 0, n_long = 0;
  PyObject *k, *v;
  int rc = 0;
  if (Py_EnterRecursiveCall(" while converting a dict to an ffikit Map") != 0) {
    rc = -1;
  } else {
    while (rc == 0 && i < n && PyDict_Next(o, &pos, &k, &v)) {
      if (Py_IS_TYPE(k, &PyUnicode_Type)) {
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(k, &size);
        if (text == NULL) {
          rc = -1;
          break;
        }
        if (size > FFK_SMALL_STR_MAX) {
          keys[i] = ffk_any_none(); /* made after the pass */
          long_keys[n_long] = Py_NewRef(k); /* keeps its UTF-8, which the str caches, alive */
          texts[n_long] = text;
          sizes[n_long] = (size_t)size;
          long_at[n_long++] = i;
        } else if (ffk_any_str(text, (size_t)size, &keys[i]) != 0) {
          rc = ffkpy_raise_from_ffk_int();
          break;
        }
      } else if ((rc = owned_item(k, &keys[i])) != 0) {
        break;
      }
      if ((rc = owned_item(v, &values[i])) != 0) {
        ffk_any_release(&keys[i]);
        break;
      }
      ++i;
    }
    Py_LeaveRecursiveCall();
  }
  if (rc == 0 && n_long > 0) {
    if (ffk_any_str_many(texts, sizes, n_long, made) != 0) rc = ffkpy_raise_from_ffk_int();
    else
      for (Py_ssize_t j = 0; j < n_long; ++j) keys[long_at[j]] = made[j];
  }
  for (Py_ssize_t j = 0; j < n_long; ++j) Py_DECREF(long_keys[j]);
  if (rc != 0) {
    for (Py_ssize_t j = 0; j < i; ++j) {
      ffk_any_release(&keys[j]);
      ffk_any_release(&values[j]);
    }
    PyMem_Free(buf);
    return -1;
  }
  ffk_map *m = ffk_map_from_pairs_steal(keys, values, i); /* takes every pair, also on failure */
  PyMem_Free(buf);
  return new_object_to_any((ffk_object *)m, out, temps); /* NULL: the pending error */
}

/* The ffikit.Error of an exception (new reference), from ffikit.error._to_c: the one it
 * carries, its backtrace grown by the Python frames passed since, or a new one. */
static PyObject *exception_error(PyObject *o) {
  if (ffkpy_g.error_to_c == NULL)
    return PyErr_Format(PyExc_TypeError, "cannot convert %R before the ffikit package is imported", o);
  PyObject *err = PyObject_CallOneArg(ffkpy_g.error_to_c, o);
  if (err != NULL && !PyObject_TypeCheck(err, &ffkpy_ErrorType)) {
    Py_DECREF(err);
    return PyErr_Format(PyExc_TypeError, "ffikit.error._to_c did not return an ffikit.Error");
  }
  return err;
}

static int exception_to_any(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  PyObject *err = exception_error(o);
  if (err == NULL) return -1;
  ffk_object *h = ffkpy_handle(err);
  /* The exception rides along, so it comes back as the very same object. */
  ffk_object *payload = ffkpy_opaque_new_steal(Py_NewRef(o));
  int rc = payload ? ffk_error_set_payload((ffk_error *)h, payload) : -1;
  ffk_object_release(payload);
  if (rc != 0) {
    Py_DECREF(err);
    return ffkpy_raise_from_ffk_int();
  }
  ffk_object_retain(h);
  Py_DECREF(err);
  return new_object_to_any(h, out, temps);
}

/* One argument on the call's fast path: 1 with *out set when `o` is a value that converts
 * without allocating, owning or telling the call's exchange state anything (None, an exact
 * bool, an exact int that fits in one digit, an exact float, or a constructed wrapper with
 * no exchange table, lent); 0 otherwise, *out untouched, for ffkpy_to_any to decide. The
 * values it takes convert exactly as ffkpy_to_any converts them in argument mode. */
static inline int to_any_plain(PyObject *o, ffk_any *out) {
  PyTypeObject *tp = Py_TYPE(o);
  long long small;
  if (tp == &PyLong_Type) {
    if (!compact_int(o, &small)) return 0;
    *out = ffk_any_int(small);
  } else if (tp == &PyFloat_Type) {
    *out = ffk_any_float(PyFloat_AS_DOUBLE(o));
  } else if (o == Py_None) {
    *out = ffk_any_none();
  } else if (tp == &PyBool_Type) {
    *out = ffk_any_bool(o == Py_True);
  } else if (tp == ffkpy_up.function_type || tp == &ffkpy_ObjectType || PyType_IsSubtype(tp, &ffkpy_ObjectType)) {
    const ffkpy_Object *w = (const ffkpy_Object *)o;
    if (w->obj == NULL || w->dlpack_api != NULL) return 0; /* an error, or a table to lend the call */
    *out = ffk_any_none();
    out->type_index = w->obj->type_index;
    out->v_obj = w->obj;
  } else {
    return 0;
  }
  return 1;
}

Py_ssize_t ffkpy_args_to_any_plain(PyObject *const *args, Py_ssize_t n, ffk_any *out) {
  Py_ssize_t i = 0;
  while (i < n && to_any_plain(args[i], &out[i])) ++i;
  return i;
}

/* An ffikit.ObjectConvertible: the ffikit Object its asobject() returns (tvm_ffi's rule;
 * anything else is a TypeError naming the class and what came back). */
static int convertible_to_any(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  PyObject *r = PyObject_CallMethod(o, "asobject", NULL);
  if (r == NULL) return -1;
  if (!PyObject_TypeCheck(r, &ffkpy_ObjectType) || ((ffkpy_Object *)r)->obj == NULL) {
    PyErr_Format(PyExc_TypeError, "%.200s.asobject() must return an ffikit Object, got %.200s", Py_TYPE(o)->tp_name,
                 Py_TYPE(r)->tp_name);
    Py_DECREF(r);
    return -1;
  }
  ffk_object *h = ((ffkpy_Object *)r)->obj;
  ffkpy_exchange_note_wrapper(r);
  ffk_object_retain(h); /* r may be the last holder: the value (or the call's temps) keeps it */
  Py_DECREF(r);
  return new_object_to_any(h, out, temps);
}

int ffkpy_to_any(PyObject *o, ffk_any *out, ffkpy_temps *temps) {
  *out = ffk_any_none();
  switch (kind_of(o)) {
    case K_NONE:
      return 0;
    case K_WRAPPER:
      if (((ffkpy_Object *)o)->obj == NULL) { /* a class's own __init__ has not constructed it yet */
        PyErr_Format(PyExc_TypeError, "this %s object has not been constructed (its __init__ did not call "
                     "__ffi_init__)", Py_TYPE(o)->tp_name);
        return -1;
      }
      ffkpy_exchange_note_wrapper(o);
      return handle_to_any(((ffkpy_Object *)o)->obj, out, temps);
    case K_CONVERTIBLE:
      return convertible_to_any(o, out, temps);
    case K_BOOL: {
      int b = PyObject_IsTrue(o);
      if (b < 0) return -1;
      *out = ffk_any_bool(b);
      return 0;
    }
    case K_INT:
      return int_to_any(o, out);
    case K_INDEX: {
      PyObject *i = PyNumber_Index(o);
      if (i == NULL) return -1;
      int rc = int_to_any(i, out);
      Py_DECREF(i);
      return rc;
    }
    case K_FLOAT:
    case K_REAL: {
      double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      *out = ffk_any_float(d);
      return 0;
    }
    case K_DTYPE:
    case K_DATATYPE: {
      DLDataType t;
      int rc = ffkpy_dtype_read(o, &t);
      if (rc < 0) return -1;
      if (rc == 0) return str_to_any(o, out, temps);
      *out = ffk_any_dtype(t);
      return 0;
    }
    case K_DEVICE:
      *out = ffk_any_device(((ffkpy_Device *)o)->device);
      return 0;
    case K_FOREIGN_DTYPE: { /* ffikit.dtype decides what it is (and refuses what has no DLPack type) */
      if (ffkpy_g.dtype_cls == NULL) {
        PyErr_Format(PyExc_TypeError, "cannot convert %R before the ffikit package is imported", o);
        return -1;
      }
      PyObject *d = PyObject_CallOneArg(ffkpy_g.dtype_cls, o);
      if (d == NULL) return -1;
      DLDataType t;
      int rc = ffkpy_dtype_read(d, &t);
      Py_DECREF(d);
      if (rc <= 0) {
        if (rc == 0) PyErr_Format(PyExc_TypeError, "ffikit.dtype(%R) did not give a dtype", o);
        return -1;
      }
      *out = ffk_any_dtype(t);
      return 0;
    }
    case K_STRING: {
      ffk_object *h = cached_object(o, 1);
      if (h != NULL) return handle_to_any(h, out, temps);
      return str_to_any(o, out, temps);
    }
    case K_STR:
      return str_to_any(o, out, temps);
    case K_BYTES_OBJ: {
      ffk_object *h = cached_object(o, 0);
      if (h != NULL) return handle_to_any(h, out, temps);
      return bytes_to_any(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o), out, temps);
    }
    case K_BYTES:
      return bytes_to_any(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o), out, temps);
    case K_BYTEARRAY:
      /* A bytearray may change under a view: always copy. */
      return bytes_to_any(PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o), out, NULL) != 0 ? -1
             : (temps != NULL && ffk_any_is_object(out))                                  ? temps_keep(temps, out)
                                                                                            : 0;
    case K_SHAPE: {
      ffk_object *h = cached_object(o, 0);
      if (h != NULL) return handle_to_any(h, out, temps);
      return seq_to_array(o, out, temps);
    }
    case K_SEQ:
      return seq_to_array(o, out, temps);
    case K_DICT:
      return dict_to_map(o, out, temps);
    case K_DLPACK: {
      if (ffkpy_exchange_note_tensor(o) != 0) return -1;
      ffk_tensor *t = ffkpy_tensor_from_dlpack(o, NULL);
      if (t == NULL) return -1;
      return new_object_to_any((ffk_object *)t, out, temps);
    }
    case K_CALLABLE: {
      ffk_function *f = ffkpy_up.function_from_callable(o); /* function.c */
      if (f == NULL) return -1;
      return new_object_to_any((ffk_object *)f, out, temps);
    }
    case K_EXCEPTION:
      return exception_to_any(o, out, temps);
    case K_OPAQUE: {
      return new_object_to_any(ffkpy_opaque_new_steal(Py_NewRef(o)), out, temps);
    }
    default:
      return -1;
  }
}

/* ---- Any -> Python ----------------------------------------------------------------- */

PyObject *ffkpy_str_from_utf8(const char *data, size_t size) {
  return PyUnicode_DecodeUTF8(data, (Py_ssize_t)size, "surrogateescape");
}

/* A String/Bytes/Shape instance: the Python value plus the C object it came from. */
static PyObject *cached_instance(PyObject *cls, PyTypeObject *base, PyObject *value, ffk_object *obj, int use_slot) {
  if (value == NULL) return NULL;
  if (cls == NULL) return value; /* the Python modules have not set the class: the plain value */
  PyObject *args = PyTuple_Pack(1, value);
  Py_DECREF(value);
  if (args == NULL) return NULL;
  PyObject *inst = base->tp_new((PyTypeObject *)cls, args, NULL);
  Py_DECREF(args);
  if (inst == NULL) return NULL;
  ffk_object_retain(obj);
  PyObject *w = ffkpy_wrap_steal(obj);
  if (w == NULL) {
    Py_DECREF(inst);
    return NULL;
  }
  if (use_slot && ffkpy_g.string_slot >= 0) {
    Py_XSETREF(*(PyObject **)((char *)inst + ffkpy_g.string_slot), w);
    return inst;
  }
  int rc = PyObject_SetAttr(inst, ffkpy_g.str_ffikit_object, w);
  Py_DECREF(w);
  if (rc != 0) Py_CLEAR(inst);
  return inst;
}

static PyObject *error_to_python(ffk_error *err) {
  PyObject *held = ffkpy_opaque_object(ffk_error_payload_borrow(err));
  if (held != NULL) return Py_NewRef(held);
  ffk_object_retain((ffk_object *)err);
  PyObject *w = ffkpy_wrap_steal((ffk_object *)err);
  if (w == NULL) return NULL;
  PyObject *exc = PyObject_CallFunctionObjArgs(ffkpy_g.error_from_c, w, Py_None, NULL);
  Py_DECREF(w);
  return exc;
}

PyObject *ffkpy_from_any(const ffk_any *v) {
  switch (v->type_index) {
    case FFK_TYPE_NONE:
      Py_RETURN_NONE;
    case FFK_TYPE_INT:
      return PyLong_FromLongLong(v->v_int);
    case FFK_TYPE_BOOL:
      return PyBool_FromLong(v->v_int != 0);
    case FFK_TYPE_FLOAT:
      return PyFloat_FromDouble(v->v_float);
    case FFK_TYPE_OPAQUE_PTR:
      if (v->v_ptr == NULL) Py_RETURN_NONE;
      return PyLong_FromVoidPtr(v->v_ptr);
    case FFK_TYPE_DATATYPE:
      return ffkpy_dtype_from_dl(v->v_dtype);
    case FFK_TYPE_DEVICE:
      return ffkpy_device_from_dl(v->v_device);
    case FFK_TYPE_SMALL_STR:
      return ffkpy_str_from_utf8(v->v_bytes, v->aux);
    case FFK_TYPE_SMALL_BYTES:
      return PyBytes_FromStringAndSize(v->v_bytes, v->aux);
    case FFK_TYPE_RAW_STR:
      return v->v_ptr ? ffkpy_str_from_utf8(v->v_ptr, strlen(v->v_ptr)) : Py_NewRef(Py_None);
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = v->v_ptr;
      return b ? PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size) : Py_NewRef(Py_None);
    }
    case FFK_TYPE_DLTENSOR_PTR:
      return PyLong_FromVoidPtr(v->v_ptr);
    default:
      break;
  }
  if (!ffk_any_is_object(v) || v->v_obj == NULL)
    return PyErr_Format(PyExc_TypeError, "cannot convert an ffikit value of type index %d to Python",
                        (int)v->type_index);
  ffk_object *obj = v->v_obj;
  switch (obj->type_index) {
    case FFK_TYPE_STRING: {
      const ffk_string *s = (const ffk_string *)obj;
      return cached_instance(ffkpy_g.string_cls, &PyUnicode_Type, ffkpy_str_from_utf8(s->data, s->size), obj, 1);
    }
    case FFK_TYPE_BYTES: {
      const ffk_bytes *b = (const ffk_bytes *)obj;
      return cached_instance(ffkpy_g.bytes_cls, &PyBytes_Type, PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size),
                             obj, 0);
    }
    case FFK_TYPE_SHAPE: {
      const ffk_shape *s = (const ffk_shape *)obj;
      PyObject *t = PyTuple_New((Py_ssize_t)s->size);
      for (size_t i = 0; t != NULL && i < s->size; ++i) {
        PyObject *d = PyLong_FromLongLong(s->data[i]);
        if (d == NULL) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
      }
      return cached_instance(ffkpy_g.shape_cls, &PyTuple_Type, t, obj, 0);
    }
    case FFK_TYPE_ERROR:
      return error_to_python((ffk_error *)obj);
    default: {
      PyObject *held = ffkpy_opaque_object(obj); /* one of ours: the very Python object */
      if (held != NULL) return Py_NewRef(held);
      break;
    }
  }
  ffk_object_retain(obj);
  return ffkpy_wrap_steal(obj);
}

PyObject *ffkpy_from_any_steal(ffk_any *v) {
  PyObject *r;
  if (!ffk_any_is_object(v)) { /* owns nothing: no release to call */
    r = ffkpy_from_any(v);
    *v = ffk_any_none();
    return r;
  }
  if (v->v_obj != NULL && v->v_obj->type_index != FFK_TYPE_STRING &&
      v->v_obj->type_index != FFK_TYPE_BYTES && v->v_obj->type_index != FFK_TYPE_SHAPE &&
      v->v_obj->type_index != FFK_TYPE_ERROR && ffkpy_opaque_object(v->v_obj) == NULL) {
    r = ffkpy_wrap_steal(v->v_obj); /* hand the reference over: no count traffic */
    *v = ffk_any_none();
    return r;
  }
  r = ffkpy_from_any(v);
  ffk_any_release(v);
  return r;
}

/* ---- Module functions ----------------------------------------------------------------- */

/* A String/Bytes object for text or bytes of any length (convert() gives the object form
 * even where a call would pass a short value inline, as tvm_ffi's convert does). */
static PyObject *string_object_of(PyObject *o, int k) {
  ffk_object *obj;
  if (k == K_STR) {
    Py_ssize_t n;
    const char *data = PyUnicode_AsUTF8AndSize(o, &n);
    if (data == NULL) return NULL;
    obj = (ffk_object *)ffk_string_new(data, (size_t)n);
  } else {
    const char *data = k == K_BYTES ? PyBytes_AS_STRING(o) : PyByteArray_AS_STRING(o);
    Py_ssize_t n = k == K_BYTES ? PyBytes_GET_SIZE(o) : PyByteArray_GET_SIZE(o);
    obj = (ffk_object *)ffk_bytes_new(data, (size_t)n);
  }
  if (obj == NULL) return ffkpy_raise_from_ffk();
  ffk_any v = ffk_any_object_steal(obj);
  return ffkpy_from_any_steal(&v);
}

/* convert(value): the ffikit form of a Python value, seen from Python. */
static PyObject *convert(PyObject *mod, PyObject *o) {
  (void)mod;
  int k = kind_of(o);
  if (k == K_UNKNOWN) return NULL;
  if (k == K_STR || k == K_BYTES || k == K_BYTEARRAY) return string_object_of(o, k);
  if (k == K_EXCEPTION) return exception_error(o); /* the Error itself, as tvm_ffi's convert */
  ffk_any v;
  if (ffkpy_to_any(o, &v, NULL) != 0) return NULL;
  return ffkpy_from_any_steal(&v);
}

/* _any_type_index(value) -> the type index the value converts to (for tests). */
static PyObject *any_type_index(PyObject *mod, PyObject *o) {
  (void)mod;
  ffk_any v;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  if (ffkpy_to_any(o, &v, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return NULL;
  }
  long t = v.type_index;
  ffkpy_temps_release(&temps);
  return PyLong_FromLong(t);
}

/* Sets a char switch from a Python truth value (a getset setter's body): 0, or -1 with a
   TypeError from the value's __bool__ or an AttributeError for `del` (v NULL). */
int ffkpy_set_switch(PyObject *v, char *flag, const char *name) {
  if (v == NULL) {
    PyErr_Format(PyExc_AttributeError, "cannot delete %s", name);
    return -1;
  }
  int b = PyObject_IsTrue(v);
  if (b < 0) return -1;
  *flag = (char)b;
  return 0;
}

/* ---- The classes conversion uses (set by the Python modules) ----------------------------- */

static int slot_offset(PyObject *cls, const char *name, Py_ssize_t *out) {
  *out = -1;
  PyObject *descr = PyObject_GetAttrString(cls, name);
  if (descr == NULL) return -1;
  if (Py_IS_TYPE(descr, &PyMemberDescr_Type) && ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX)
    *out = ((PyMemberDescrObject *)descr)->d_member->offset;
  Py_DECREF(descr);
  return 0;
}

/* _set_hooks(**classes and callables made by the Python modules). */
static PyObject *set_hooks(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  static char *kwlist[] = {"dtype",        "string",     "bytes", "shape", "error_to_c", "error_from_c",
                           "make_class", "object_convertible", NULL};
  enum { N = 8 };
  PyObject *v[N] = {NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOOOOOOO:_set_hooks", kwlist, &v[0], &v[1], &v[2], &v[3], &v[4],
                                   &v[5], &v[6], &v[7]))
    return NULL;
  PyObject **slots[N] = {&ffkpy_g.dtype_cls,  &ffkpy_g.string_cls,   &ffkpy_g.bytes_cls,  &ffkpy_g.shape_cls,
                         &ffkpy_g.error_to_c, &ffkpy_g.error_from_c, &ffkpy_g.make_class, &ffkpy_g.object_convertible_cls};
  for (int i = 0; i < N; ++i) {
    if (v[i] == NULL) continue;
    Py_INCREF(v[i]);
    Py_XSETREF(*slots[i], v[i]);
  }
  /* The offsets of String._ffikit_object and dtype._ffikit_dtype, read directly by conversion. */
  if (v[1] != NULL && slot_offset(v[1], "_ffikit_object", &ffkpy_g.string_slot) != 0) return NULL;
  if (v[0] != NULL && slot_offset(v[0], "_ffikit_dtype", &ffkpy_g.dtype_slot) != 0) return NULL;
  ffkpy_convert_reset_cache();
  Py_RETURN_NONE;
}

/* _make_string_object(value: str|bytes) -> the C String/Bytes object for a new String/Bytes. */
static PyObject *make_string_object(PyObject *mod, PyObject *arg) {
  (void)mod;
  ffk_any v;
  if (PyUnicode_Check(arg)) {
    Py_ssize_t n;
    const char *data = PyUnicode_AsUTF8AndSize(arg, &n);
    if (data == NULL) return NULL;
    ffk_string *s = ffk_string_new(data, (size_t)n);
    if (s == NULL) return ffkpy_raise_from_ffk();
    v = ffk_any_object_steal(&s->header);
  } else {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) != 0) return NULL;
    ffk_bytes *b = ffk_bytes_new(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (b == NULL) return ffkpy_raise_from_ffk();
    v = ffk_any_object_steal(&b->header);
  }
  return ffkpy_wrap_steal(v.v_obj);
}

PyMethodDef ffkpy_convert_methods[] = {
    {"convert", convert, METH_O,
     "convert(value) -> the value as ffikit stores it, seen from Python: str and bytes\n"
     "(and bytearray) become ffikit.String and ffikit.Bytes, lists and tuples Arrays, dicts\n"
     "Maps, callables Functions, an exception its ffikit.Error (kind, message, and a\n"
     "backtrace with the Python frames it passed through); other objects pass through an\n"
     "Opaque object unchanged."},
    {"_any_type_index", any_type_index, METH_O, NULL},
    {"_set_hooks", (PyCFunction)(void (*)(void))set_hooks, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_make_string_object", make_string_object, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int ffkpy_convert_init(void) {
  PyObject *numbers = PyImport_ImportModule("numbers");
  if (numbers == NULL) return -1;
  g_integral = PyObject_GetAttrString(numbers, "Integral");
  g_real = PyObject_GetAttrString(numbers, "Real");
  Py_DECREF(numbers);
  return g_integral && g_real ? 0 : -1;
}
