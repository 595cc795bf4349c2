/*
 * tensor.c - ffikit.Tensor and DLPack exchange with numpy, PyTorch and any producer.
 *
 * Import (from_dlpack, and arguments with __dlpack__) asks the producer for a versioned
 * capsule (max_version=(1, 1)) and falls back to a legacy one when it raises TypeError;
 * the capsule is consumed exactly once (renamed "used_dltensor[_versioned]") and the
 * Tensor owns the producer's managed tensor from then on: its deleter runs once, when
 * the Tensor and every view are gone. Export (__dlpack__) follows the array API
 * standard's keywords. CPU tensors also speak the buffer protocol both ways, and
 * pickle: by value, or as a shared-memory handle another process attaches to.
 */
#include "ffikit_py.h"

#include <limits.h>

static const char *const k_legacy = "dltensor", *const k_versioned = "dltensor_versioned";
static const char *const k_used_legacy = "used_dltensor", *const k_used_versioned = "used_dltensor_versioned";

PyTypeObject ffkpy_TensorType;

static ffk_tensor *tensor_of(PyObject *self) { return (ffk_tensor *)((ffkpy_Object *)self)->obj; }
static const DLTensor *dl_of(PyObject *self) { return ffk_tensor_dltensor_borrow(tensor_of(self)); }

static PyObject *wrap_tensor(ffk_tensor *t) {
  if (t == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)t);
}

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

static PyObject *g_max_version_kwnames; /* ("max_version",) */
static PyObject *g_max_version;         /* (1, 1) */

/* The capsule of an object with __dlpack__: versioned when the producer can. New reference or NULL. */
static PyObject *capsule_of(PyObject *obj) {
  PyObject *args[2] = {obj, g_max_version};
  PyObject *capsule = PyObject_VectorcallMethod(ffkpy_g.str_dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                                g_max_version_kwnames);
  if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear(); /* a producer older than DLPack 1.0 does not know max_version */
    capsule = PyObject_VectorcallMethod(ffkpy_g.str_dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
  }
  if (capsule != NULL && !PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "%.200s.__dlpack__() returned %.200s, not a DLPack capsule", Py_TYPE(obj)->tp_name,
                 Py_TYPE(capsule)->tp_name);
    Py_CLEAR(capsule);
  }
  return capsule;
}

/* A Tensor for any DLPack producer or capsule (new reference), or NULL with an exception. */
ffk_tensor *ffkpy_tensor_from_dlpack(PyObject *obj, const ffk_dlpack_requirements *req) {
  if (PyObject_TypeCheck(obj, &ffkpy_TensorType)) {
    ffk_tensor *t = tensor_of(obj);
    ffk_object_retain((ffk_object *)t);
    return t;
  }
  if (PyCapsule_CheckExact(obj)) return import_capsule(obj, req);
  ffk_tensor *fast;
  int rc = ffkpy_tensor_from_exchange_api(obj, req, &fast);
  if (rc != 0) return rc > 0 ? fast : NULL;
  PyObject *capsule = capsule_of(obj);
  if (capsule == NULL) return NULL;
  ffk_tensor *t = import_capsule(capsule, req);
  Py_DECREF(capsule);
  return t;
}

static PyObject *from_dlpack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  (void)mod;
  if (nargs != 1) return PyErr_Format(PyExc_TypeError, "from_dlpack() takes 1 positional argument (%zd given)", nargs);
  PyObject *obj = args[0];
  PyObject *names[2] = {kw_alignment, kw_contiguous}, *given[2] = {NULL, NULL};
  if (parse_keywords("from_dlpack", kwnames, args + nargs, names, given, 2) != 0) return NULL;
  Py_ssize_t alignment = 0;
  int contiguous = 0;
  if (given[0] != NULL && (alignment = PyNumber_AsSsize_t(given[0], PyExc_OverflowError)) == -1 && PyErr_Occurred())
    return NULL;
  if (given[1] != NULL && (contiguous = PyObject_IsTrue(given[1])) < 0) return NULL;
  if (alignment < 0 || (alignment & (alignment - 1)) != 0)
    return PyErr_Format(PyExc_ValueError, "require_alignment must be 0 or a power of two, not %zd", alignment);
  ffk_dlpack_requirements req = {.alignment = (size_t)alignment, .contiguous = contiguous != 0};
  if (PyObject_TypeCheck(obj, &ffkpy_TensorType) && (alignment > 1 || contiguous)) {
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

static PyObject *tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs != 0) return PyErr_Format(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
  PyObject *names[4] = {kw_stream, kw_max_version, kw_dl_device, kw_copy};
  PyObject *given[4] = {Py_None, Py_None, Py_None, Py_None};
  if (parse_keywords("__dlpack__", kwnames, args, names, given, 4) != 0) return NULL;
  PyObject *stream = given[0], *max_version = given[1], *dl_device = given[2], *copy = given[3];
  const DLTensor *dl = dl_of(self);
  int32_t dev_type = ffk_device_type(dl->device);
  if (stream != Py_None && (dev_type == FFK_DEVICE_CPU || dev_type == FFK_DEVICE_CUDA_HOST)) {
    if (!PyLong_Check(stream) || PyLong_AsLong(stream) != -1) {
      PyErr_Clear();
      return PyErr_Format(PyExc_BufferError, "stream must be None for a tensor on %s, got %R",
                          ffk_device_type_name(dev_type), stream);
    }
  }
  if (dl_device != Py_None) {
    int t, id;
    if (!PyArg_ParseTuple(dl_device, "ii:dl_device", &t, &id)) return NULL;
    if (t != dev_type || id != dl->device.device_id)
      return PyErr_Format(PyExc_BufferError, "cannot export a tensor on %R to device (%d, %d): ffikit does not move "
                                             "tensors between devices in __dlpack__",
                          ffkpy_device_from_dl(dl->device), t, id);
  }
  long major, minor;
  if (read_version(max_version, &major, &minor) != 0) return NULL;
  int do_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
  if (do_copy < 0) return NULL;
  ffk_tensor *t = tensor_of(self);
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
  PyObject *capsule;
  if (major >= 1) {
    DLManagedTensorVersioned *m = ffk_tensor_to_dlpack_versioned(t);
    ffk_object_release((ffk_object *)t);
    if (m == NULL) return ffkpy_raise_from_ffk();
    if (do_copy) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    capsule = PyCapsule_New(m, k_versioned, capsule_destructor);
    if (capsule == NULL) m->deleter(m);
  } else {
    if (do_copy == 0 && ffk_tensor_is_read_only(t)) {
      ffk_object_release((ffk_object *)t);
      return PyErr_Format(PyExc_BufferError, "a read-only tensor can only be exported as a versioned capsule "
                                             "(pass max_version=(1, 0) or newer)");
    }
    DLManagedTensor *m = ffk_tensor_to_dlpack(t);
    ffk_object_release((ffk_object *)t);
    if (m == NULL) return ffkpy_raise_from_ffk();
    capsule = PyCapsule_New(m, k_legacy, capsule_destructor);
    if (capsule == NULL) m->deleter(m);
  }
  return capsule;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  const DLTensor *dl = dl_of(self);
  return Py_BuildValue("(ii)", (int)ffk_device_type(dl->device), (int)dl->device.device_id);
}

/* ---- Properties -------------------------------------------------------------------- */

static PyObject *int_tuple(const int64_t *v, int32_t n) {
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; ++i) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (x == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

static PyObject *tensor_shape(PyObject *self, void *c) {
  (void)c;
  PyObject *t = int_tuple(dl_of(self)->shape, dl_of(self)->ndim);
  if (t == NULL || ffkpy_g.shape_cls == NULL) return t;
  PyObject *s = PyObject_CallOneArg(ffkpy_g.shape_cls, t);
  Py_DECREF(t);
  return s;
}
static PyObject *tensor_strides(PyObject *self, void *c) {
  (void)c;
  return int_tuple(dl_of(self)->strides, dl_of(self)->ndim);
}
static PyObject *tensor_ndim(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(dl_of(self)->ndim);
}
static PyObject *tensor_dtype(PyObject *self, void *c) {
  (void)c;
  return ffkpy_dtype_from_dl(dl_of(self)->dtype);
}
static PyObject *tensor_device(PyObject *self, void *c) {
  (void)c;
  return ffkpy_device_from_dl(dl_of(self)->device);
}
static PyObject *tensor_byte_offset(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(dl_of(self)->byte_offset);
}
static PyObject *tensor_read_only(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(ffk_tensor_is_read_only(tensor_of(self)));
}
static PyObject *tensor_shared_name(PyObject *self, void *c) {
  (void)c;
  const char *name = ffk_storage_shared_name(ffk_tensor_storage_borrow(tensor_of(self)));
  if (name == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(name);
}

static PyObject *tensor_numel(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromLongLong(ffk_tensor_numel(tensor_of(self)));
}
static PyObject *tensor_nbytes(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromLongLong(ffk_tensor_nbytes(tensor_of(self)));
}
static PyObject *tensor_is_contiguous(PyObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(ffk_tensor_is_contiguous(tensor_of(self)));
}
static PyObject *tensor_data_ptr(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromVoidPtr(ffk_tensor_data_ptr(tensor_of(self)));
}

static int read_dim(PyObject *arg, int32_t ndim, int32_t *out, int allow_end) {
  long d = PyLong_AsLong(arg);
  if (d == -1 && PyErr_Occurred()) return -1;
  int32_t limit = ndim + (allow_end ? 1 : 0);
  if (d < -limit || d >= limit) {
    PyErr_Format(PyExc_IndexError, "dimension %ld out of range for a tensor of %d dimensions", d, (int)ndim);
    return -1;
  }
  *out = (int32_t)(d < 0 ? d + limit : d);
  return 0;
}

static PyObject *tensor_size(PyObject *self, PyObject *arg) {
  const DLTensor *dl = dl_of(self);
  int32_t d;
  if (read_dim(arg, dl->ndim, &d, 0) != 0) return NULL;
  return PyLong_FromLongLong(dl->shape[d]);
}

/* Reads a shape given as ints or one sequence of ints into dims (at most FFK_TENSOR_MAX_NDIM). */
static int read_ints(PyObject *seq_or_args, int64_t *dims, int32_t *n, const char *what) {
  PyObject *seq = PySequence_Fast(seq_or_args, what);
  if (seq == NULL) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  if (count == 1 && !PyIndex_Check(PySequence_Fast_GET_ITEM(seq, 0))) { /* f((2, 3)) as well as f(2, 3) */
    PyObject *inner = PySequence_Fast_GET_ITEM(seq, 0);
    Py_INCREF(inner);
    Py_DECREF(seq);
    int rc = read_ints(inner, dims, n, what);
    Py_DECREF(inner);
    return rc;
  }
  if (count > FFK_TENSOR_MAX_NDIM) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "%s: %zd dimensions, more than the %d ffikit supports", what, count,
                 FFK_TENSOR_MAX_NDIM);
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
    if (PyBool_Check(x) || !PyIndex_Check(x)) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "%s: expected ints, got %.200s", what, Py_TYPE(x)->tp_name);
      return -1;
    }
    long long v = PyLong_AsLongLong(x);
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
    dims[i] = v;
  }
  *n = (int32_t)count;
  Py_DECREF(seq);
  return 0;
}

/* ---- Views and element operations --------------------------------------------------------- */

static PyObject *tensor_reshape(PyObject *self, PyObject *args) {
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n;
  if (read_ints(args, dims, &n, "reshape") != 0) return NULL;
  return wrap_tensor(ffk_tensor_reshape(tensor_of(self), n, dims));
}

static PyObject *tensor_permute(PyObject *self, PyObject *args) {
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n, perm[FFK_TENSOR_MAX_NDIM];
  if (read_ints(args, dims, &n, "permute") != 0) return NULL;
  if (n != dl_of(self)->ndim)
    return PyErr_Format(PyExc_ValueError, "permute: %d dimensions given for a tensor of %d", (int)n, (int)dl_of(self)->ndim);
  for (int32_t i = 0; i < n; ++i) perm[i] = (int32_t)(dims[i] < 0 ? dims[i] + n : dims[i]);
  return wrap_tensor(ffk_tensor_permute(tensor_of(self), perm));
}

static PyObject *tensor_transpose(PyObject *self, PyObject *args) {
  int d0, d1;
  if (!PyArg_ParseTuple(args, "ii:transpose", &d0, &d1)) return NULL;
  int32_t n = dl_of(self)->ndim;
  return wrap_tensor(ffk_tensor_transpose(tensor_of(self), d0 < 0 ? d0 + n : d0, d1 < 0 ? d1 + n : d1));
}

static PyObject *tensor_squeeze(PyObject *self, PyObject *arg) {
  int32_t d;
  if (read_dim(arg, dl_of(self)->ndim, &d, 0) != 0) return NULL;
  return wrap_tensor(ffk_tensor_squeeze(tensor_of(self), d));
}

static PyObject *tensor_unsqueeze(PyObject *self, PyObject *arg) {
  int32_t d;
  if (read_dim(arg, dl_of(self)->ndim, &d, 1) != 0) return NULL;
  return wrap_tensor(ffk_tensor_unsqueeze(tensor_of(self), d));
}

static PyObject *tensor_slice(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"dim", "start", "stop", "step", NULL};
  int dim = 0;
  long long start = 0, stop = LLONG_MAX, step = 1;
  PyObject *stop_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "i|LOL:slice", kwlist, &dim, &start, &stop_obj, &step)) return NULL;
  if (stop_obj != Py_None) {
    stop = PyLong_AsLongLong(stop_obj);
    if (stop == -1 && PyErr_Occurred()) return NULL;
  }
  int32_t n = dl_of(self)->ndim;
  return wrap_tensor(ffk_tensor_slice(tensor_of(self), dim < 0 ? dim + n : dim, start, stop, step));
}

static PyObject *tensor_getitem(PyObject *self, PyObject *key) {
  const DLTensor *dl = dl_of(self);
  if (dl->ndim == 0) return PyErr_Format(PyExc_IndexError, "a 0-d tensor cannot be indexed");
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    if (step < 1) return PyErr_Format(PyExc_ValueError, "tensor slices need a positive step, got %zd", step);
    return wrap_tensor(ffk_tensor_slice(tensor_of(self), 0, start, stop, step));
  }
  if (PyIndex_Check(key) && !PyBool_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    int64_t size = dl->shape[0];
    if (i < -size || i >= size)
      return PyErr_Format(PyExc_IndexError, "index %zd out of range for dimension 0 of size %lld", i, (long long)size);
    if (i < 0) i += (Py_ssize_t)size;
    ffk_tensor *row = ffk_tensor_slice(tensor_of(self), 0, i, i + 1, 1);
    if (row == NULL) return ffkpy_raise_from_ffk();
    ffk_tensor *sq = ffk_tensor_squeeze(row, 0);
    ffk_object_release((ffk_object *)row);
    return wrap_tensor(sq);
  }
  return PyErr_Format(PyExc_TypeError, "tensor indices must be integers or slices, not %.200s", Py_TYPE(key)->tp_name);
}

static PyObject *tensor_as_strided(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"shape", "strides", "offset", NULL};
  PyObject *shape, *strides;
  long long offset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|L:as_strided", kwlist, &shape, &strides, &offset)) return NULL;
  int64_t dims[FFK_TENSOR_MAX_NDIM], st[FFK_TENSOR_MAX_NDIM];
  int32_t n, m;
  if (read_ints(shape, dims, &n, "as_strided shape") != 0 || read_ints(strides, st, &m, "as_strided strides") != 0)
    return NULL;
  if (n != m) return PyErr_Format(PyExc_ValueError, "as_strided: %d dimensions but %d strides", (int)n, (int)m);
  return wrap_tensor(ffk_tensor_as_strided(tensor_of(self), n, dims, st, offset));
}

static PyObject *tensor_contiguous(PyObject *self, PyObject *u) {
  (void)u;
  ffk_tensor *t;
  Py_BEGIN_ALLOW_THREADS;
  t = ffk_tensor_contiguous(tensor_of(self));
  Py_END_ALLOW_THREADS;
  return wrap_tensor(t);
}

static PyObject *tensor_copy_(PyObject *self, PyObject *src) {
  ffk_dlpack_requirements none = {0, false};
  ffk_tensor *s = ffkpy_tensor_from_dlpack(src, &none);
  if (s == NULL) return NULL;
  if (ffk_tensor_is_read_only(tensor_of(self))) {
    ffk_object_release((ffk_object *)s);
    return PyErr_Format(PyExc_ValueError, "copy_: the destination tensor is read-only");
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = ffk_tensor_copy_from(tensor_of(self), s);
  Py_END_ALLOW_THREADS;
  ffk_object_release((ffk_object *)s);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return Py_NewRef(self);
}

static PyObject *tensor_fill_(PyObject *self, PyObject *value) {
  if (ffk_tensor_is_read_only(tensor_of(self)))
    return PyErr_Format(PyExc_ValueError, "fill_: the tensor is read-only");
  ffk_any v;
  if (ffkpy_to_any(value, &v, NULL) != 0) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = ffk_tensor_fill(tensor_of(self), &v);
  Py_END_ALLOW_THREADS;
  ffk_any_release(&v);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return Py_NewRef(self);
}

/* ---- Buffer protocol ---------------------------------------------------------------- */

/* The struct-module format of a dtype, or NULL when Python has none for it. */
static const char *buffer_format(DLDataType t) {
  if (t.lanes != 1) return NULL;
  switch (t.code) {
    case FFK_DTYPE_INT:
      return t.bits == 8 ? "b" : t.bits == 16 ? "h" : t.bits == 32 ? "i" : t.bits == 64 ? "q" : NULL;
    case FFK_DTYPE_UINT:
      return t.bits == 8 ? "B" : t.bits == 16 ? "H" : t.bits == 32 ? "I" : t.bits == 64 ? "Q" : NULL;
    case FFK_DTYPE_FLOAT:
      return t.bits == 16 ? "e" : t.bits == 32 ? "f" : t.bits == 64 ? "d" : NULL;
    case FFK_DTYPE_COMPLEX:
      return t.bits == 64 ? "Zf" : t.bits == 128 ? "Zd" : NULL;
    case FFK_DTYPE_BOOL:
      return t.bits == 8 ? "?" : NULL;
    default:
      return NULL;
  }
}

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  const DLTensor *dl = dl_of(self);
  int32_t dev = ffk_device_type(dl->device);
  if (dev != FFK_DEVICE_CPU && dev != FFK_DEVICE_CUDA_HOST) {
    PyErr_Format(PyExc_BufferError, "only host tensors export a buffer; this one is on %s", ffk_device_type_name(dev));
    return -1;
  }
  const char *format = buffer_format(dl->dtype);
  if (format == NULL) {
    char name[FFK_DTYPE_STR_MAX];
    ffk_dtype_format(dl->dtype, name, sizeof name);
    PyErr_Format(PyExc_BufferError, "dtype %s has no buffer-protocol format", name);
    return -1;
  }
  int read_only = ffk_tensor_is_read_only(tensor_of(self));
  if ((flags & PyBUF_WRITABLE) && read_only) {
    PyErr_SetString(PyExc_BufferError, "the tensor is read-only");
    return -1;
  }
  Py_ssize_t itemsize = (Py_ssize_t)ffk_dtype_itemsize(dl->dtype);
  Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(2 * dl->ndim + 1));
  if (dims == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (int32_t i = 0; i < dl->ndim; ++i) {
    dims[i] = (Py_ssize_t)dl->shape[i];
    /* In bytes. It overflows only where no two elements are that far apart (a dimension
     * of size 1, or a tensor without elements): any stride serves there. */
    if (__builtin_mul_overflow((Py_ssize_t)dl->strides[i], itemsize, &dims[dl->ndim + i])) dims[dl->ndim + i] = 0;
  }
  int contiguous = ffk_tensor_is_contiguous(tensor_of(self));
  if (!contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    PyMem_Free(dims);
    PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous: ask for a strided buffer");
    return -1;
  }
  view->buf = ffk_tensor_data_ptr(tensor_of(self));
  view->obj = Py_NewRef(self);
  view->len = (Py_ssize_t)ffk_tensor_nbytes(tensor_of(self));
  view->readonly = read_only;
  view->itemsize = itemsize;
  view->format = (flags & PyBUF_FORMAT) ? (char *)format : NULL;
  view->ndim = dl->ndim;
  view->shape = (flags & PyBUF_ND) ? dims : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? dims + dl->ndim : NULL;
  view->suboffsets = NULL;
  view->internal = dims;
  return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  PyMem_Free(view->internal);
}

static PyBufferProcs tensor_as_buffer = {tensor_getbuffer, tensor_releasebuffer};

/* Tensor.from_buffer(obj): a zero-copy Tensor over any buffer (kept alive with it). */
typedef struct {
  DLManagedTensorVersioned managed;
  Py_buffer view;
  int64_t shape[FFK_TENSOR_MAX_NDIM];
  int64_t strides[FFK_TENSOR_MAX_NDIM];
} buffer_ctx;

static void buffer_deleter(DLManagedTensorVersioned *m) {
  buffer_ctx *ctx = (buffer_ctx *)m;
  if (Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(&ctx->view);
    PyGILState_Release(g);
  }
  PyMem_RawFree(ctx);
}

static int format_dtype(const char *format, Py_ssize_t itemsize, DLDataType *out) {
  if (format == NULL) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  const struct {
    const char *f;
    uint8_t code;
  } table[] = {{"b", FFK_DTYPE_INT},   {"h", FFK_DTYPE_INT},   {"i", FFK_DTYPE_INT},   {"l", FFK_DTYPE_INT},
               {"q", FFK_DTYPE_INT},   {"n", FFK_DTYPE_INT},   {"B", FFK_DTYPE_UINT},  {"H", FFK_DTYPE_UINT},
               {"I", FFK_DTYPE_UINT},  {"L", FFK_DTYPE_UINT},  {"Q", FFK_DTYPE_UINT},  {"N", FFK_DTYPE_UINT},
               {"c", FFK_DTYPE_UINT},  {"e", FFK_DTYPE_FLOAT}, {"f", FFK_DTYPE_FLOAT}, {"d", FFK_DTYPE_FLOAT},
               {"?", FFK_DTYPE_BOOL},  {"Zf", FFK_DTYPE_COMPLEX}, {"Zd", FFK_DTYPE_COMPLEX}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (strcmp(format, table[i].f) == 0) {
      *out = ffk_dtype(table[i].code, (uint8_t)(itemsize * 8), 1);
      return 0;
    }
  }
  PyErr_Format(PyExc_TypeError, "from_buffer: unsupported buffer format %s", format);
  return -1;
}

static PyObject *tensor_from_buffer(PyObject *cls, PyObject *obj) {
  (void)cls;
  buffer_ctx *ctx = PyMem_RawCalloc(1, sizeof *ctx);
  if (ctx == NULL) return PyErr_NoMemory();
  if (PyObject_GetBuffer(obj, &ctx->view, PyBUF_RECORDS_RO) != 0) {
    PyMem_RawFree(ctx);
    return NULL;
  }
  Py_buffer *v = &ctx->view;
  DLDataType dtype;
  if (v->ndim > FFK_TENSOR_MAX_NDIM || format_dtype(v->format, v->itemsize, &dtype) != 0) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "from_buffer: %d dimensions is too many", v->ndim);
    PyBuffer_Release(v);
    PyMem_RawFree(ctx);
    return NULL;
  }
  for (int i = 0; i < v->ndim; ++i) {
    ctx->shape[i] = v->shape ? v->shape[i] : v->len / v->itemsize;
    Py_ssize_t st = v->strides ? v->strides[i] : v->itemsize;
    if (st % v->itemsize != 0 || st < 0) {
      PyErr_Format(PyExc_ValueError, "from_buffer: stride %zd is not a non-negative multiple of the item size %zd", st,
                   v->itemsize);
      PyBuffer_Release(v);
      PyMem_RawFree(ctx);
      return NULL;
    }
    ctx->strides[i] = st / v->itemsize;
  }
  DLManagedTensorVersioned *m = &ctx->managed;
  m->version.major = 1;
  m->version.minor = 1;
  m->manager_ctx = ctx;
  m->deleter = buffer_deleter;
  m->flags = v->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  m->dl_tensor.data = v->buf;
  m->dl_tensor.device = ffk_device(FFK_DEVICE_CPU, 0);
  m->dl_tensor.ndim = v->ndim;
  m->dl_tensor.dtype = dtype;
  m->dl_tensor.shape = ctx->shape;
  m->dl_tensor.strides = ctx->strides;
  m->dl_tensor.byte_offset = 0;
  ffk_tensor *t = ffk_tensor_from_dlpack_versioned(m, NULL);
  if (t == NULL) {
    PyBuffer_Release(v);
    PyMem_RawFree(ctx);
    return ffkpy_raise_from_ffk();
  }
  return ffkpy_wrap_steal((ffk_object *)t);
}

/* ---- Pickle -------------------------------------------------------------------------- */

static PyObject *tensor_reduce(PyObject *self, PyObject *u) {
  (void)u;
  const DLTensor *dl = dl_of(self);
  PyObject *mod = PyImport_ImportModule("ffikit._tensor");
  if (mod == NULL) return NULL;
  PyObject *r = NULL, *shape = int_tuple(dl->shape, dl->ndim), *dtype = ffkpy_dtype_from_dl(dl->dtype);
  PyObject *dtext = dtype ? PyObject_Str(dtype) : NULL;
  const char *shm = ffk_storage_shared_name(ffk_tensor_storage_borrow(tensor_of(self)));
  if (shape && dtext && shm != NULL) {
    PyObject *strides = int_tuple(dl->strides, dl->ndim);
    PyObject *fn = PyObject_GetAttrString(mod, "_attach_shared");
    if (strides && fn)
      r = Py_BuildValue("O(sOOOK)", fn, shm, shape, strides, dtext, (unsigned long long)dl->byte_offset);
    Py_XDECREF(strides);
    Py_XDECREF(fn);
  } else if (shape && dtext) {
    PyObject *fn = PyObject_GetAttrString(mod, "_from_bytes");
    PyObject *bytes = PyObject_CallMethod(mod, "_to_bytes", "O", self);
    PyObject *device = ffkpy_device_from_dl(dl->device);
    PyObject *dev_text = device ? PyObject_Str(device) : NULL;
    if (fn && bytes && dev_text) r = Py_BuildValue("O(OOOO)", fn, bytes, shape, dtext, dev_text);
    Py_XDECREF(fn);
    Py_XDECREF(bytes);
    Py_XDECREF(device);
    Py_XDECREF(dev_text);
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(dtext);
  Py_DECREF(mod);
  return r;
}

/* ---- Constructors ------------------------------------------------------------------------ */

static int read_alloc_args(PyObject *args, PyObject *kwds, const char *fname, int64_t *dims, int32_t *n, DLDataType *dt,
                           DLDevice *dev, PyObject **name) {
  static char *kwlist[] = {"shape", "dtype", "device", "name", NULL};
  PyObject *shape, *dtype, *device = Py_None, *nm = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO", kwlist, &shape, &dtype, &device, &nm)) return -1;
  if (read_ints(shape, dims, n, fname) != 0) return -1;
  int rc = ffkpy_dtype_read(dtype, dt);
  if (rc < 0) return -1;
  if (rc == 0) {
    PyObject *d = ffkpy_g.dtype_cls ? PyObject_CallOneArg(ffkpy_g.dtype_cls, dtype) : NULL;
    if (d == NULL) return -1;
    rc = ffkpy_dtype_read(d, dt);
    Py_DECREF(d);
    if (rc <= 0) return -1;
  }
  *dev = ffk_device(FFK_DEVICE_CPU, 0);
  if (device != Py_None) {
    PyObject *d = PyObject_TypeCheck(device, &ffkpy_DeviceType) ? Py_NewRef(device)
                                                                : PyObject_CallOneArg((PyObject *)&ffkpy_DeviceType, device);
    if (d == NULL) return -1;
    *dev = ((ffkpy_Device *)d)->device;
    Py_DECREF(d);
  }
  if (name != NULL) *name = nm;
  return 0;
}

static PyObject *make_tensor(PyObject *args, PyObject *kwds, int zeros) {
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n;
  DLDataType dt;
  DLDevice dev;
  if (read_alloc_args(args, kwds, zeros ? "zeros" : "empty", dims, &n, &dt, &dev, NULL) != 0) return NULL;
  ffk_tensor *t;
  Py_BEGIN_ALLOW_THREADS;
  t = zeros ? ffk_tensor_zeros(n, dims, dt, dev) : ffk_tensor_empty(n, dims, dt, dev);
  Py_END_ALLOW_THREADS;
  return wrap_tensor(t);
}

static PyObject *empty(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  return make_tensor(args, kwds, 0);
}
static PyObject *zeros(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  return make_tensor(args, kwds, 1);
}

/* empty_shared(shape, dtype, name=None): a zeroed tensor in POSIX shared memory. */
static PyObject *empty_shared(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n;
  DLDataType dt;
  DLDevice dev;
  PyObject *name = Py_None;
  if (read_alloc_args(args, kwds, "empty_shared", dims, &n, &dt, &dev, &name) != 0) return NULL;
  if (ffk_device_type(dev) != FFK_DEVICE_CPU) return PyErr_Format(PyExc_ValueError, "shared memory lives on the cpu");
  const char *cname = name == Py_None ? NULL : PyUnicode_AsUTF8(name);
  if (name != Py_None && cname == NULL) return NULL;
  size_t nbytes = ffk_dtype_itemsize(dt);
  for (int32_t i = 0; i < n; ++i) {
    if (dims[i] < 0) return PyErr_Format(PyExc_ValueError, "empty_shared: negative dimension %lld", (long long)dims[i]);
    if (dims[i] != 0 && nbytes > SIZE_MAX / (size_t)dims[i])
      return PyErr_Format(PyExc_ValueError, "empty_shared: the shape is too large");
    nbytes *= (size_t)dims[i];
  }
  ffk_storage *s = ffk_storage_new_shared(cname, nbytes);
  if (s == NULL) return ffkpy_raise_from_ffk();
  ffk_tensor *t = ffk_tensor_from_storage(s, n, dims, NULL, 0, dt);
  ffk_object_release((ffk_object *)s);
  return wrap_tensor(t);
}

/* _attach_shared(name, shape, strides, dtype, byte_offset): a tensor over a segment by name. */
static PyObject *attach_shared(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *name;
  PyObject *shape, *strides, *dtype;
  unsigned long long offset;
  if (!PyArg_ParseTuple(args, "sOOOK:_attach_shared", &name, &shape, &strides, &dtype, &offset)) return NULL;
  int64_t dims[FFK_TENSOR_MAX_NDIM], st[FFK_TENSOR_MAX_NDIM];
  int32_t n, m;
  DLDataType dt;
  if (read_ints(shape, dims, &n, "shape") != 0 || read_ints(strides, st, &m, "strides") != 0) return NULL;
  PyObject *d = ffkpy_g.dtype_cls ? PyObject_CallOneArg(ffkpy_g.dtype_cls, dtype) : NULL;
  if (d == NULL || ffkpy_dtype_read(d, &dt) <= 0) {
    Py_XDECREF(d);
    return NULL;
  }
  Py_DECREF(d);
  ffk_storage *s = ffk_storage_attach_shared(name);
  if (s == NULL) return ffkpy_raise_from_ffk();
  ffk_tensor *t = ffk_tensor_from_storage(s, n, dims, st, offset, dt);
  ffk_object_release((ffk_object *)s);
  return wrap_tensor(t);
}

static PyObject *sweep_shared(PyObject *mod, PyObject *u) {
  (void)mod, (void)u;
  int64_t n = ffk_storage_sweep_shared();
  if (n < 0) return ffkpy_raise_from_ffk();
  return PyLong_FromLongLong(n);
}

/* ---- The type ------------------------------------------------------------------------ */

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> PyCapsule\n\n"
     "A legacy capsule without max_version, a versioned one for max_version >= (1, 0);\n"
     "copy=True copies (and flags IS_COPIED); BufferError for moves to another device."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(device_type, device_id) as DLPack numbers them."},
    {"numel", tensor_numel, METH_NOARGS, "numel() -> int: the number of elements."},
    {"nbytes", tensor_nbytes, METH_NOARGS, "nbytes() -> int: the bytes the elements span."},
    {"size", tensor_size, METH_O, "size(dim) -> int: the extent of one dimension (negative counts from the end)."},
    {"is_contiguous", tensor_is_contiguous, METH_NOARGS,
     "is_contiguous() -> bool: row-major without gaps (a tensor without elements always is)."},
    {"data_ptr", tensor_data_ptr, METH_NOARGS, "data_ptr() -> int: the address of element [0, ..., 0]."},
    {"reshape", tensor_reshape, METH_VARARGS, "reshape(*shape) -> Tensor: a view with another shape (-1 inferred)."},
    {"permute", tensor_permute, METH_VARARGS, "permute(*dims) -> Tensor: a view with the dimensions reordered."},
    {"transpose", tensor_transpose, METH_VARARGS, "transpose(d0, d1) -> Tensor: a view with two dimensions swapped."},
    {"squeeze", tensor_squeeze, METH_O, "squeeze(dim) -> Tensor: a view without that size-1 dimension."},
    {"unsqueeze", tensor_unsqueeze, METH_O, "unsqueeze(dim) -> Tensor: a view with a new size-1 dimension."},
    {"slice", (PyCFunction)(void (*)(void))tensor_slice, METH_VARARGS | METH_KEYWORDS,
     "slice(dim, start=0, stop=None, step=1) -> Tensor: a view of every step-th element along dim."},
    {"as_strided", (PyCFunction)(void (*)(void))tensor_as_strided, METH_VARARGS | METH_KEYWORDS,
     "as_strided(shape, strides, offset=0) -> Tensor: any view inside the storage (checked)."},
    {"contiguous", tensor_contiguous, METH_NOARGS, "contiguous() -> Tensor: self when contiguous, else a copy."},
    {"copy_", tensor_copy_, METH_O, "copy_(src) -> self: copies the elements of src (any DLPack producer)."},
    {"fill_", tensor_fill_, METH_O, "fill_(value) -> self: sets every element."},
    {"from_buffer", tensor_from_buffer, METH_O | METH_CLASS,
     "Tensor.from_buffer(obj) -> Tensor: a zero-copy CPU tensor over any buffer (kept alive)."},
    {"__reduce__", tensor_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_shape, NULL, "The shape, a Shape (tuple of ints).", NULL},
    {"strides", tensor_strides, NULL, "The strides in elements, a tuple of ints.", NULL},
    {"ndim", tensor_ndim, NULL, "The number of dimensions.", NULL},
    {"dtype", tensor_dtype, NULL, "The element type, an ffikit.dtype.", NULL},
    {"device", tensor_device, NULL, "The device, an ffikit.Device.", NULL},
    {"byte_offset", tensor_byte_offset, NULL, "Bytes from the data pointer to element [0, ..., 0] (DLPack's).", NULL},
    {"is_read_only", tensor_read_only, NULL, "Whether the producer marked the elements read-only.", NULL},
    {"shared_name", tensor_shared_name, NULL, "The shared-memory name of its storage, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMappingMethods tensor_as_mapping = {.mp_subscript = tensor_getitem};

PyTypeObject ffkpy_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Tensor",
    .tp_doc = "An n-dimensional view of typed memory on a device, shared with numpy and PyTorch\n"
              "through DLPack without copying. Views (reshape, slicing, permute ...) share the\n"
              "storage. Make one with ffikit.from_dlpack, ffikit.empty/zeros/empty_shared or\n"
              "Tensor.from_buffer.",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
};

PyMethodDef ffkpy_tensor_methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False) -> Tensor\n\n"
     "Shares the memory of any object with __dlpack__ (numpy, PyTorch, ...) or of a raw\n"
     "'dltensor'/'dltensor_versioned' capsule, which is consumed exactly once."},
    {"empty", (PyCFunction)(void (*)(void))empty, METH_VARARGS | METH_KEYWORDS,
     "empty(shape, dtype, device='cpu') -> Tensor: uninitialised elements."},
    {"zeros", (PyCFunction)(void (*)(void))zeros, METH_VARARGS | METH_KEYWORDS,
     "zeros(shape, dtype, device='cpu') -> Tensor: zeroed elements."},
    {"empty_shared", (PyCFunction)(void (*)(void))empty_shared, METH_VARARGS | METH_KEYWORDS,
     "empty_shared(shape, dtype, name=None) -> Tensor: zeroed CPU memory other processes\n"
     "attach to by name (pickling the tensor sends the name, not the bytes)."},
    {"_attach_shared", attach_shared, METH_VARARGS, NULL},
    {"_sweep_shared", sweep_shared, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int ffkpy_tensor_types_init(PyObject *module) {
  ffkpy_TensorType.tp_base = &ffkpy_ObjectType;
  if (PyType_Ready(&ffkpy_TensorType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Tensor", (PyObject *)&ffkpy_TensorType) < 0) return -1;
  kw_stream = PyUnicode_InternFromString("stream");
  kw_max_version = PyUnicode_InternFromString("max_version");
  kw_dl_device = PyUnicode_InternFromString("dl_device");
  kw_copy = PyUnicode_InternFromString("copy");
  kw_alignment = PyUnicode_InternFromString("require_alignment");
  kw_contiguous = PyUnicode_InternFromString("require_contiguous");
  if (!kw_stream || !kw_max_version || !kw_dl_device || !kw_copy || !kw_alignment || !kw_contiguous) return -1;
  g_max_version_kwnames = PyTuple_Pack(1, kw_max_version);
  g_max_version = Py_BuildValue("(ii)", 1, 1);
  if (g_max_version_kwnames == NULL || g_max_version == NULL) return -1;
  PyObject *k = PyLong_FromLong(FFK_TYPE_TENSOR);
  if (k == NULL) return -1;
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, k, (PyObject *)&ffkpy_TensorType);
  Py_DECREF(k);
  return rc == 0 ? ffkpy_dlpack_exchange_init() : -1;
}
