/*
 * tensor_dlpack.c - DLPack exchange for ffikit.Tensor: from_dlpack and __dlpack__.
 *
 * Import (from_dlpack, and arguments with __dlpack__) asks the producer for a versioned
 * capsule (max_version=(1, 1)) and falls back to a legacy one when it raises TypeError;
 * the capsule is consumed exactly once (renamed "used_dltensor[_versioned]") and the
 * Tensor owns the producer's managed tensor from then on: its deleter runs once, when
 * the Tensor and every view are gone. Export (__dlpack__) follows the array API
 * standard's keywords. What a tensor may be (dtype, strides, bounds) is decided by the C
 * import (ffikit/dlpack.h); this file only moves capsules and keywords.
 *
 * Streams, as the array API standard has them: import passes `stream=` to the producer's
 * __dlpack__ (ffk_dlpack_consumer_stream: ffikit's current stream for the device from
 * __dlpack_device__, None for a device without streams), so the producer orders its
 * pending work before ours; export hands the consumer's `stream` to
 * ffk_tensor_dlpack_export_stream, which validates it and orders ffikit's current stream
 * before it. The C exchange API path orders by the producer's current_work_stream
 * instead (dlpack_exchange.c).
 */
#include "ffikit_py.h"

#include <limits.h>

#include "tensor_py.h"

static const char *const k_legacy = "dltensor", *const k_versioned = "dltensor_versioned";
static const char *const k_used_legacy = "used_dltensor", *const k_used_versioned = "used_dltensor_versioned";

/* ---- Keyword-only arguments without building a dict --------------------------------------- */

/*
 * Matches the keyword arguments of a vectorcall (kwnames, values after the positional
 * ones) against `names` (interned strings) and stores them in `out` (borrowed). 0, or -1
 * with a TypeError naming an unknown keyword.
 */
static int parse_keywords(const char *fname, PyObject *kwnames, PyObject *const *values, PyObject *const *names,
                          PyObject **out, int n) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int i = 0;
    while (i < n && key != names[i]) ++i; /* callers' keywords are interned: identity first */
    if (i == n)
      for (i = 0; i < n && PyUnicode_Compare(key, names[i]) != 0; ++i) {
      }
    if (i == n) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, key);
      return -1;
    }
    out[i] = values[k];
  }
  return 0;
}

static PyObject *kw_stream, *kw_max_version, *kw_dl_device, *kw_copy, *kw_alignment, *kw_contiguous;
/* ---- Import ----------------------------------------------------------------------- */

/* Takes over the managed tensor in `capsule`; renames it on success. New reference or NULL. */
static ffk_tensor *import_capsule(PyObject *capsule, const ffk_dlpack_requirements *req) {
  const char *name = PyCapsule_GetName(capsule);
  if (name == NULL) return NULL;
  ffk_tensor *t;
  const char *used;
  if (strcmp(name, k_versioned) == 0) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, k_versioned);
    if (m == NULL) return NULL;
    t = ffk_tensor_from_dlpack_versioned(m, req);
    used = k_used_versioned;
  } else if (strcmp(name, k_legacy) == 0) {
    DLManagedTensor *m = PyCapsule_GetPointer(capsule, k_legacy);
    if (m == NULL) return NULL;
    t = ffk_tensor_from_dlpack(m, req);
    used = k_used_legacy;
  } else if (strncmp(name, "used_", 5) == 0) {
    PyErr_Format(PyExc_ValueError, "the DLPack capsule was already consumed (it is named \"%s\")", name);
    return NULL;
  } else {
    PyErr_Format(PyExc_ValueError, "not a DLPack capsule: its name is \"%s\", not \"dltensor\" or \"dltensor_versioned\"",
                 name);
    return NULL;
  }
  if (t == NULL) { /* refused: the capsule still owns the managed tensor */
    ffkpy_raise_from_ffk();
    return NULL;
  }
  if (PyCapsule_SetName(capsule, used) != 0) {
    /* Cannot happen for a valid capsule; the tensor owns the memory either way. */
    PyErr_Clear();
  }
  return t;
}

static PyObject *g_max_version_kwnames;        /* ("max_version",) */
static PyObject *g_stream_max_version_kwnames; /* ("stream", "max_version") */
static PyObject *g_stream_kwnames;             /* ("stream",) */
static PyObject *g_max_version;                /* (1, 1) */
static PyObject *str_dlpack_device;            /* "__dlpack_device__" */

/*
 * The `stream` to pass to obj.__dlpack__ (a new reference): ffikit's current stream for
 * the device obj.__dlpack_device__() names, as ffk_dlpack_consumer_stream gives it (an
 * int), or None for a device without streams. NULL with *absent set (and no exception)
 * when obj has no __dlpack_device__, or is a numpy array (always on the CPU, where None,
 * the keyword's default, is the stream): the keyword is not passed then. NULL with an
 * exception when __dlpack_device__ fails or returns something else than (type, id).
 */
/* One int of a (device_type, device_id) tuple; 0, or -1 when it is not an int in range. */
static int device_int(PyObject *v, int *out) {
  if (!PyLong_Check(v)) return -1;
  int overflow;
  long x = PyLong_AsLongAndOverflow(v, &overflow);
  if (overflow != 0 || x < INT_MIN || x > INT_MAX) return -1;
  *out = (int)x;
  return 0;
}

static PyTypeObject *g_ndarray; /* numpy.ndarray once met (a strong reference), else NULL */

static PyObject *consumer_stream(PyObject *obj, int *absent) {
  *absent = 0;
  /* A numpy array is always on the CPU, which has no streams: its __dlpack_device__ call
     (a Python method call, the largest cost of importing a small array) is skipped.
     Recognised by exact type name, so numpy is never imported here, and then by address. */
  PyTypeObject *tp = Py_TYPE(obj);
  if (tp == g_ndarray || (g_ndarray == NULL && strcmp(tp->tp_name, "numpy.ndarray") == 0)) {
    if (g_ndarray == NULL) g_ndarray = (PyTypeObject *)Py_NewRef(tp);
    *absent = 1; /* stream=None is __dlpack__'s default: not passing it saves numpy a keyword */
    return NULL;
  }
  PyObject *dev = PyObject_CallMethodNoArgs(obj, str_dlpack_device);
  if (dev == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
    PyErr_Clear();
    *absent = 1;
    return NULL;
  }
  int type, id;
  int ok = PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2 && device_int(PyTuple_GET_ITEM(dev, 0), &type) == 0 &&
           device_int(PyTuple_GET_ITEM(dev, 1), &id) == 0;
  if (!ok) {
    PyErr_Format(PyExc_TypeError, "%.200s.__dlpack_device__() returned %R, not a (device_type, device_id) tuple",
                 Py_TYPE(obj)->tp_name, dev);
    Py_DECREF(dev);
    return NULL;
  }
  Py_DECREF(dev);
  int64_t stream;
  if (!ffk_dlpack_consumer_stream(ffk_device(type, id), &stream)) return Py_NewRef(Py_None);
  return PyLong_FromLongLong(stream);
}

/*
 * The capsule of an object with __dlpack__: versioned when the producer can, made after
 * the producer ordered its work before ffikit's current stream. Producers that predate
 * DLPack 1.0 (no max_version) are asked again without it, and, when the stream is None
 * anyway, ones that take no keyword at all. New reference or NULL.
 */
static PyObject *capsule_of(PyObject *obj, PyObject *method) {
  int absent;
  PyObject *stream = consumer_stream(obj, &absent);
  if (stream == NULL && !absent) return NULL;
  PyObject *with_stream[3] = {obj, stream, g_max_version}, *without[2] = {obj, g_max_version};
  const size_t nargsf = 1 | PY_VECTORCALL_ARGUMENTS_OFFSET;
  PyObject *capsule;
  if (stream == NULL && PyType_HasFeature(Py_TYPE(method), Py_TPFLAGS_METHOD_DESCRIPTOR) &&
      Py_TYPE(obj)->tp_dictoffset == 0) {
    /* The usual call, __dlpack__(max_version=(1, 1)), made on the method the class lookup
       found, as PyObject_VectorcallMethod would after looking it up again: an instance
       without a __dict__ cannot shadow it, and a method descriptor takes self first. */
    capsule = PyObject_Vectorcall(method, without, 1, g_max_version_kwnames);
  } else {
    capsule = stream != NULL
                  ? PyObject_VectorcallMethod(ffkpy_g.str_dlpack, with_stream, nargsf, g_stream_max_version_kwnames)
                  : PyObject_VectorcallMethod(ffkpy_g.str_dlpack, without, nargsf, g_max_version_kwnames);
  }
  if (capsule == NULL && stream != NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear(); /* a producer older than DLPack 1.0 does not know max_version */
    capsule = PyObject_VectorcallMethod(ffkpy_g.str_dlpack, with_stream, nargsf, g_stream_kwnames);
  }
  /* No keyword at all: a producer older than DLPack 1.0 without __dlpack_device__, or one
     that takes no stream, which still serves a device without streams. */
  if (capsule == NULL && (stream == NULL || stream == Py_None) && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_VectorcallMethod(ffkpy_g.str_dlpack, without, nargsf, NULL);
  }
  Py_XDECREF(stream);
  if (capsule != NULL && !PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "%.200s.__dlpack__() returned %.200s, not a DLPack capsule", Py_TYPE(obj)->tp_name,
                 Py_TYPE(capsule)->tp_name);
    Py_CLEAR(capsule);
  }
  return capsule;
}

/* A Tensor for any DLPack producer or capsule (new reference), or NULL with an exception. */
ffk_tensor *ffkpy_tensor_from_dlpack(PyObject *obj, const ffk_dlpack_requirements *req) {
  if (PyObject_TypeCheck(obj, ffkpy_up.tensor_type)) {
    ffk_tensor *t = ffkpy_tensor_of(obj);
    ffk_object_retain((ffk_object *)t);
    return t;
  }
  if (PyCapsule_CheckExact(obj)) return import_capsule(obj, req);
  /* The class attribute through CPython's type cache (a miss raises nothing). */
  PyObject *method = _PyType_Lookup(Py_TYPE(obj), ffkpy_g.str_dlpack); /* borrowed */
  if (method == NULL) {
    PyErr_Format(PyExc_TypeError,
                 "expected a tensor (an object with __dlpack__, such as a numpy array or a torch.Tensor) or a "
                 "DLPack capsule, not %.200s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  ffk_tensor *fast;
  int rc = ffkpy_tensor_from_exchange_api(obj, req, &fast);
  if (rc != 0) return rc > 0 ? fast : NULL;
  Py_INCREF(method); /* Python code before the call (__dlpack_device__) may replace it on the class */
  PyObject *capsule = capsule_of(obj, method);
  Py_DECREF(method);
  if (capsule == NULL) return NULL;
  ffk_tensor *t = import_capsule(capsule, req);
  Py_DECREF(capsule);
  return t;
}

PyObject *ffkpy_from_dlpack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  (void)mod;
  if (nargs != 1) return PyErr_Format(PyExc_TypeError, "from_dlpack() takes 1 positional argument (%zd given)", nargs);
  PyObject *obj = args[0];
  PyObject *names[2] = {kw_alignment, kw_contiguous}, *given[2] = {NULL, NULL};
  if (kwnames != NULL && parse_keywords("from_dlpack", kwnames, args + nargs, names, given, 2) != 0) return NULL;
  Py_ssize_t alignment = 0;
  int contiguous = 0;
  if (given[0] != NULL && (alignment = PyNumber_AsSsize_t(given[0], PyExc_OverflowError)) == -1 && PyErr_Occurred())
    return NULL;
  if (given[1] != NULL && (contiguous = PyObject_IsTrue(given[1])) < 0) return NULL;
  if (alignment < 0) /* a conversion: size_t holds no sign */
    return PyErr_Format(PyExc_ValueError, "from_dlpack: require_alignment %zd is negative", alignment);
  ffk_dlpack_requirements req = {.alignment = (size_t)alignment, .contiguous = contiguous != 0};
  if (ffk_dlpack_check_requirements("from_dlpack", &req) != 0) return ffkpy_raise_from_ffk(); /* before the producer works */
  if ((alignment > 1 || contiguous) && PyObject_TypeCheck(obj, ffkpy_up.tensor_type)) {
    /* Our own tensor: check the requirements the way an import would. */
    PyObject *capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (capsule == NULL) return NULL;
    ffk_tensor *t = import_capsule(capsule, &req);
    Py_DECREF(capsule);
    return t ? ffkpy_wrap_steal((ffk_object *)t) : NULL;
  }
  ffk_tensor *t = ffkpy_tensor_from_dlpack(obj, &req);
  return t ? ffkpy_wrap_steal((ffk_object *)t) : NULL;
}

/* ---- Export ----------------------------------------------------------------------- */

/* C's export error, as the array API standard's __dlpack__ raises one: a tensor that cannot
 * be exported as asked is a BufferError (C's ValueError, its text kept and chained); a
 * MemoryError stays one. Only the class is the protocol's, the rule and the words C's. */
static PyObject *raise_export_error(void) {
  ffkpy_raise_from_ffk();
  if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
  PyObject *type, *cause, *tb;
  PyErr_Fetch(&type, &cause, &tb);
  PyErr_NormalizeException(&type, &cause, &tb);
  if (tb != NULL) PyException_SetTraceback(cause, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  PyObject *text = PyObject_Str(cause);
  PyObject *exc = text != NULL ? PyObject_CallOneArg(PyExc_BufferError, text) : NULL;
  Py_XDECREF(text);
  if (exc == NULL) {
    Py_DECREF(cause);
    return NULL;
  }
  PyException_SetCause(exc, cause); /* steals cause */
  PyErr_SetObject(PyExc_BufferError, exc);
  Py_DECREF(exc);
  return NULL;
}

static void capsule_destructor(PyObject *capsule) {
  /* Only an unconsumed capsule still owns its managed tensor. */
  if (PyCapsule_IsValid(capsule, k_versioned)) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, k_versioned);
    if (m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, k_legacy)) {
    DLManagedTensor *m = PyCapsule_GetPointer(capsule, k_legacy);
    if (m->deleter) m->deleter(m);
  }
}

static int read_version(PyObject *v, long *major, long *minor) {
  if (v == Py_None) {
    *major = *minor = -1;
    return 0;
  }
  if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) {
    PyErr_SetString(PyExc_TypeError, "max_version must be a (major, minor) tuple or None");
    return -1;
  }
  *major = PyLong_AsLong(PyTuple_GET_ITEM(v, 0));
  *minor = PyLong_AsLong(PyTuple_GET_ITEM(v, 1));
  return PyErr_Occurred() ? -1 : 0;
}

PyObject *ffkpy_tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs != 0) return PyErr_Format(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
  PyObject *names[4] = {kw_stream, kw_max_version, kw_dl_device, kw_copy};
  PyObject *given[4] = {Py_None, Py_None, Py_None, Py_None};
  if (parse_keywords("__dlpack__", kwnames, args, names, given, 4) != 0) return NULL;
  PyObject *stream = given[0], *max_version = given[1], *dl_device = given[2], *copy = given[3];
  const DLTensor *dl = ffkpy_dl_of(self);
  int32_t dev_type = ffk_device_type(dl->device);
  /* The argument's type here; its value (None, -1, 1, 2, a handle) is C's to judge. */
  bool has_stream = stream != Py_None;
  int64_t stream_value = 0;
  if (has_stream) {
    if (PyBool_Check(stream) || !PyLong_Check(stream))
      return PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be an int or None, not %.200s",
                          Py_TYPE(stream)->tp_name);
    int overflow;
    stream_value = PyLong_AsLongLongAndOverflow(stream, &overflow);
    if (stream_value == -1 && PyErr_Occurred()) return NULL;
    if (overflow != 0) return PyErr_Format(PyExc_ValueError, "__dlpack__: stream %R is out of range", stream);
  }
  if (dl_device != Py_None) {
    int t, id;
    if (!PyArg_ParseTuple(dl_device, "ii:dl_device", &t, &id)) return NULL;
    if (t != dev_type || id != dl->device.device_id) {
      char dev[FFK_DEVICE_STR_MAX];
      ffk_device_format(dl->device, dev, sizeof dev);
      return PyErr_Format(PyExc_BufferError, "cannot export a tensor on %s to device (%d, %d): ffikit does not move "
                                             "tensors between devices in __dlpack__ (copy it with copy_ first)",
                          dev, t, id);
    }
  }
  long major, minor;
  if (read_version(max_version, &major, &minor) != 0) return NULL;
  int do_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
  if (do_copy < 0) return NULL;
  /* A bad stream is refused before the copy it would waste (the export checks it otherwise). */
  if (do_copy && ffk_dlpack_check_stream(dl->device, has_stream, stream_value) != 0) return ffkpy_raise_from_ffk();
  ffk_tensor *t = ffkpy_tensor_of(self);
  ffk_object_retain((ffk_object *)t);
  if (do_copy) {
    ffk_tensor *fresh = ffk_tensor_empty(dl->ndim, dl->shape, dl->dtype, dl->device);
    if (fresh == NULL || ffk_tensor_copy_from(fresh, t) != 0) {
      ffk_object_release((ffk_object *)fresh);
      ffk_object_release((ffk_object *)t);
      return ffkpy_raise_from_ffk();
    }
    ffk_object_release((ffk_object *)t);
    t = fresh;
  }
  /* After the copy: the consumer's stream waits for it too. */
  if (ffk_tensor_dlpack_export_stream(t, has_stream, stream_value) != 0) {
    ffk_object_release((ffk_object *)t);
    return ffkpy_raise_from_ffk();
  }
  PyObject *capsule;
  if (major >= 1) {
    DLManagedTensorVersioned *m = ffk_tensor_to_dlpack_versioned(t);
    ffk_object_release((ffk_object *)t);
    if (m == NULL) return ffkpy_raise_from_ffk();
    if (do_copy) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    capsule = PyCapsule_New(m, k_versioned, capsule_destructor);
    if (capsule == NULL) m->deleter(m);
  } else {
    DLManagedTensor *m = ffk_tensor_to_dlpack(t); /* C refuses a read-only tensor (ValueError) */
    ffk_object_release((ffk_object *)t);
    if (m == NULL) return raise_export_error();
    capsule = PyCapsule_New(m, k_legacy, capsule_destructor);
    if (capsule == NULL) m->deleter(m);
  }
  return capsule;
}

PyObject *ffkpy_tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  const DLTensor *dl = ffkpy_dl_of(self);
  return Py_BuildValue("(ii)", (int)ffk_device_type(dl->device), (int)dl->device.device_id);
}

int ffkpy_tensor_dlpack_init(void) {
  kw_stream = PyUnicode_InternFromString("stream");
  kw_max_version = PyUnicode_InternFromString("max_version");
  kw_dl_device = PyUnicode_InternFromString("dl_device");
  kw_copy = PyUnicode_InternFromString("copy");
  kw_alignment = PyUnicode_InternFromString("require_alignment");
  kw_contiguous = PyUnicode_InternFromString("require_contiguous");
  if (!kw_stream || !kw_max_version || !kw_dl_device || !kw_copy || !kw_alignment || !kw_contiguous) return -1;
  g_max_version_kwnames = PyTuple_Pack(1, kw_max_version);
  g_stream_max_version_kwnames = PyTuple_Pack(2, kw_stream, kw_max_version);
  g_stream_kwnames = PyTuple_Pack(1, kw_stream);
  g_max_version = Py_BuildValue("(ii)", 1, 1);
  str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  return g_max_version_kwnames == NULL || g_stream_max_version_kwnames == NULL || g_stream_kwnames == NULL ||
                 g_max_version == NULL || str_dlpack_device == NULL
             ? -1
             : 0;
}
