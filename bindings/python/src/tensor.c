/*
 * tensor.c - ffikit.Tensor: properties, views, element conversions (int(), float(),
 * bool(), operator.index), constructors and pickling (by value, or as a shared-memory
 * handle another process attaches to). DLPack exchange lives in tensor_dlpack.c, the
 * buffer protocol in tensor_buffer.c.
 *
 * Bindings convert, C decides: every rule about a tensor (dimension and index ranges,
 * read-only writes, fill values, element values, shared-memory sizes) is a C function
 * called here, whose error message names the operation and the value.
 */
#include "ffikit_py.h"

#include <limits.h>

#include "tensor_py.h"

PyTypeObject ffkpy_TensorType;

static PyObject *wrap_tensor(ffk_tensor *t) {
  if (t == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal((ffk_object *)t);
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
  PyObject *t = int_tuple(ffkpy_dl_of(self)->shape, ffkpy_dl_of(self)->ndim);
  if (t == NULL || ffkpy_g.shape_cls == NULL) return t;
  PyObject *s = PyObject_CallOneArg(ffkpy_g.shape_cls, t);
  Py_DECREF(t);
  return s;
}
static PyObject *tensor_strides(PyObject *self, void *c) {
  (void)c;
  return int_tuple(ffkpy_dl_of(self)->strides, ffkpy_dl_of(self)->ndim);
}
static PyObject *tensor_ndim(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(ffkpy_dl_of(self)->ndim);
}
static PyObject *tensor_dtype(PyObject *self, void *c) {
  (void)c;
  return ffkpy_dtype_from_dl(ffkpy_dl_of(self)->dtype);
}
static PyObject *tensor_device(PyObject *self, void *c) {
  (void)c;
  return ffkpy_device_from_dl(ffkpy_dl_of(self)->device);
}
static PyObject *tensor_byte_offset(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(ffkpy_dl_of(self)->byte_offset);
}
static PyObject *tensor_read_only(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(ffk_tensor_is_read_only(ffkpy_tensor_of(self)));
}
static PyObject *tensor_shared_name(PyObject *self, void *c) {
  (void)c;
  const char *name = ffk_storage_shared_name(ffk_tensor_storage_borrow(ffkpy_tensor_of(self)));
  if (name == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(name);
}

static PyObject *tensor_numel(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromLongLong(ffk_tensor_numel(ffkpy_tensor_of(self)));
}
static PyObject *tensor_nbytes(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromLongLong(ffk_tensor_nbytes(ffkpy_tensor_of(self)));
}
static PyObject *tensor_is_contiguous(PyObject *self, PyObject *u) {
  (void)u;
  return PyBool_FromLong(ffk_tensor_is_contiguous(ffkpy_tensor_of(self)));
}
static PyObject *tensor_data_ptr(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromVoidPtr(ffk_tensor_data_ptr(ffkpy_tensor_of(self)));
}

/*
 * A dimension index as given (negative ones too: C normalises and range-checks them).
 * Only an int that does not fit C's int32_t is refused here, as an OverflowError.
 */
static int read_dim(const char *what, PyObject *arg, int32_t *out) {
  if (PyBool_Check(arg) || !PyIndex_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "%s: a dimension must be an int, not %.200s", what, Py_TYPE(arg)->tp_name);
    return -1;
  }
  long long d = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
  if (d == -1 && PyErr_Occurred()) return -1;
  if (d < INT32_MIN || d > INT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s: dimension %lld is out of range", what, d);
    return -1;
  }
  *out = (int32_t)d;
  return 0;
}

static PyObject *tensor_size(PyObject *self, PyObject *arg) {
  int32_t d;
  if (read_dim("size", arg, &d) != 0) return NULL;
  int64_t n = ffk_tensor_size(ffkpy_tensor_of(self), d);
  return n < 0 ? ffkpy_raise_from_ffk() : PyLong_FromLongLong(n);
}

int ffkpy_read_int64s(PyObject *obj, const char *what, const char *arg, int64_t *dims, Py_ssize_t cap,
                      int64_t **heap, Py_ssize_t *n) {
  if (heap != NULL) *heap = NULL;
  /* A str is a sequence of strs, each again a sequence: never a sequence of ints. */
  if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of ints, not %.200s", what, arg, Py_TYPE(obj)->tp_name);
    return -1;
  }
  /* A tuple as it is; anything else copied into one, so that an item's __index__ cannot
     shrink the sequence under the loop below (PySequence_Fast would hand a list itself). */
  PyObject *seq = PyTuple_Check(obj) ? (Py_INCREF(obj), obj) : PySequence_Tuple(obj);
  if (seq == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1; /* the iterable's own error, as it raised it */
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of ints, not %.200s", what, arg, Py_TYPE(obj)->tp_name);
    return -1;
  }
  Py_ssize_t count = PyTuple_GET_SIZE(seq);
  *n = count;
  if (count > cap) {
    if (heap == NULL) { /* too long to hold: the caller's C rule names the length */
      Py_DECREF(seq);
      return 0;
    }
    if ((size_t)count > PY_SSIZE_T_MAX / sizeof(int64_t) || (*heap = PyMem_Malloc(sizeof(int64_t) * (size_t)count)) == NULL) {
      Py_DECREF(seq);
      PyErr_NoMemory();
      return -1;
    }
    dims = *heap;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *x = PyTuple_GET_ITEM(seq, i);
    if (PyBool_Check(x) || !PyIndex_Check(x)) {
      PyErr_Format(PyExc_TypeError, "%s: %s[%zd] must be an int, not %.200s", what, arg, i, Py_TYPE(x)->tp_name);
      goto fail;
    }
    PyObject *index = PyNumber_Index(x);
    if (index == NULL) goto fail;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (overflow != 0) {
      PyErr_Format(PyExc_OverflowError, "%s: %s[%zd] is %R, which does not fit in 64 bits", what, arg, i, index);
      Py_DECREF(index);
      goto fail;
    }
    Py_DECREF(index);
    if (v == -1 && PyErr_Occurred()) goto fail;
    dims[i] = v;
  }
  Py_DECREF(seq);
  return 0;
fail:
  Py_DECREF(seq);
  if (heap != NULL && *heap != NULL) {
    PyMem_Free(*heap);
    *heap = NULL;
  }
  return -1;
}

/*
 * A tensor's shape (or strides) into dims, at most FFK_TENSOR_MAX_NDIM of them; a longer
 * one is refused by C's shape rule, which names the length. 0, or -1 with an exception.
 */
static int read_shape(PyObject *obj, const char *what, const char *arg, int64_t *dims, int32_t *n) {
  Py_ssize_t count;
  if (ffkpy_read_int64s(obj, what, arg, dims, FFK_TENSOR_MAX_NDIM, NULL, &count) != 0) return -1;
  if (count > FFK_TENSOR_MAX_NDIM) {
    ffk_tensor_check_shape(what, count, NULL, NULL, ffk_dtype(FFK_DTYPE_UINT, 8, 1), NULL, NULL); /* refuses it */
    return ffkpy_raise_from_ffk_int();
  }
  *n = (int32_t)count;
  return 0;
}

/*
 * A method's shape given either as its arguments or as one sequence: f(2, 3) and
 * f((2, 3)) read alike. Exactly one level is unwrapped, and only there.
 */
static PyObject *args_or_only(PyObject *args) {
  if (PyTuple_GET_SIZE(args) != 1) return args;
  PyObject *only = PyTuple_GET_ITEM(args, 0);
  /* A sequence (numpy arrays have __index__ too) or anything that is not an int is the shape itself. */
  return !PyIndex_Check(only) || PySequence_Check(only) ? only : args;
}

/* ---- Views and element operations --------------------------------------------------------- */

static PyObject *tensor_reshape(PyObject *self, PyObject *args) {
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n;
  if (read_shape(args_or_only(args), "reshape", "shape", dims, &n) != 0) return NULL;
  return wrap_tensor(ffk_tensor_reshape(ffkpy_tensor_of(self), n, dims));
}

static PyObject *tensor_permute(PyObject *self, PyObject *args) {
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  Py_ssize_t n;
  if (ffkpy_read_int64s(args_or_only(args), "permute", "dims", dims, FFK_TENSOR_MAX_NDIM, NULL, &n) != 0) return NULL;
  /* C checks the count before it reads an entry, so a count past the buffer is refused unread */
  return wrap_tensor(ffk_tensor_permute(ffkpy_tensor_of(self), n > INT32_MAX ? INT32_MAX : (int32_t)n, dims));
}

static PyObject *tensor_transpose(PyObject *self, PyObject *args) {
  PyObject *a, *b;
  int32_t d0, d1;
  if (!PyArg_UnpackTuple(args, "transpose", 2, 2, &a, &b)) return NULL;
  if (read_dim("transpose", a, &d0) != 0 || read_dim("transpose", b, &d1) != 0) return NULL;
  return wrap_tensor(ffk_tensor_transpose(ffkpy_tensor_of(self), d0, d1));
}

static PyObject *tensor_squeeze(PyObject *self, PyObject *arg) {
  int32_t d;
  if (read_dim("squeeze", arg, &d) != 0) return NULL;
  return wrap_tensor(ffk_tensor_squeeze(ffkpy_tensor_of(self), d));
}

static PyObject *tensor_unsqueeze(PyObject *self, PyObject *arg) {
  int32_t d;
  if (read_dim("unsqueeze", arg, &d) != 0) return NULL;
  return wrap_tensor(ffk_tensor_unsqueeze(ffkpy_tensor_of(self), d));
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
  return wrap_tensor(ffk_tensor_slice(ffkpy_tensor_of(self), dim, start, stop, step));
}

/* t[i] is select(0, i), t[a:b:c] is slice(0, a, b, c): C checks the index and the step. */
static PyObject *tensor_getitem(PyObject *self, PyObject *key) {
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    return wrap_tensor(ffk_tensor_slice(ffkpy_tensor_of(self), 0, start, stop, step));
  }
  if (PyIndex_Check(key) && !PyBool_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    return wrap_tensor(ffk_tensor_select(ffkpy_tensor_of(self), 0, i));
  }
  return PyErr_Format(PyExc_TypeError, "tensor indices must be integers or slices, not %.200s", Py_TYPE(key)->tp_name);
}

static PyObject *tensor_select(PyObject *self, PyObject *args) {
  PyObject *dim;
  long long index;
  int32_t d;
  if (!PyArg_ParseTuple(args, "OL:select", &dim, &index) || read_dim("select", dim, &d) != 0) return NULL;
  return wrap_tensor(ffk_tensor_select(ffkpy_tensor_of(self), d, index));
}

/* ---- One element as a Python number --------------------------------------------------------- */

/* The only element as int, float or bool (ffk_tensor_item decides: exactly one element, a dtype with a value). */
static PyObject *tensor_item(PyObject *self, PyObject *u) {
  (void)u;
  ffk_any v;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = ffk_tensor_item(ffkpy_tensor_of(self), &v);
  Py_END_ALLOW_THREADS;
  if (rc != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&v);
}

static PyObject *tensor_int(PyObject *self) {
  PyObject *v = tensor_item(self, NULL);
  if (v == NULL) return NULL;
  PyObject *r = PyNumber_Long(v); /* int(nan) is Python's ValueError, int(inf) its OverflowError */
  Py_DECREF(v);
  return r;
}

static PyObject *tensor_float(PyObject *self) {
  PyObject *v = tensor_item(self, NULL);
  if (v == NULL) return NULL;
  PyObject *r = PyNumber_Float(v);
  Py_DECREF(v);
  return r;
}

static int tensor_bool(PyObject *self) {
  PyObject *v = tensor_item(self, NULL);
  if (v == NULL) return -1;
  int r = PyObject_IsTrue(v);
  Py_DECREF(v);
  return r;
}

/* operator.index(t): integer tensors only, as numpy and PyTorch have it. */
static PyObject *tensor_index(PyObject *self) {
  PyObject *v = tensor_item(self, NULL);
  if (v == NULL) return NULL;
  if (!PyLong_CheckExact(v)) {
    PyObject *dtype = ffkpy_dtype_from_dl(ffkpy_dl_of(self)->dtype);
    PyErr_Format(PyExc_TypeError, "only integer tensors can be used as an index, not a %S tensor", dtype ? dtype : Py_None);
    Py_XDECREF(dtype);
    Py_CLEAR(v);
  }
  return v;
}

static PyObject *tensor_as_strided(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"shape", "strides", "offset", NULL};
  PyObject *shape, *strides;
  long long offset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|L:as_strided", kwlist, &shape, &strides, &offset)) return NULL;
  int64_t dims[FFK_TENSOR_MAX_NDIM], st[FFK_TENSOR_MAX_NDIM];
  int32_t n, m;
  if (read_shape(shape, "as_strided", "shape", dims, &n) != 0 || read_shape(strides, "as_strided", "strides", st, &m) != 0)
    return NULL;
  if (n != m) return PyErr_Format(PyExc_ValueError, "as_strided: %d dimensions but %d strides", (int)n, (int)m);
  return wrap_tensor(ffk_tensor_as_strided(ffkpy_tensor_of(self), n, dims, st, offset));
}

static PyObject *tensor_contiguous(PyObject *self, PyObject *u) {
  (void)u;
  ffk_tensor *t;
  Py_BEGIN_ALLOW_THREADS;
  t = ffk_tensor_contiguous(ffkpy_tensor_of(self));
  Py_END_ALLOW_THREADS;
  return wrap_tensor(t);
}

static PyObject *tensor_copy_(PyObject *self, PyObject *src) {
  ffk_dlpack_requirements none = {0, false};
  ffk_tensor *s = ffkpy_tensor_from_dlpack(src, &none);
  if (s == NULL) return NULL;
  int rc; /* C refuses a read-only destination */
  Py_BEGIN_ALLOW_THREADS;
  rc = ffk_tensor_copy_from(ffkpy_tensor_of(self), s);
  Py_END_ALLOW_THREADS;
  ffk_object_release((ffk_object *)s);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return Py_NewRef(self);
}

/* C decides which values fit the dtype and refuses a read-only tensor. */
static PyObject *tensor_fill_(PyObject *self, PyObject *value) {
  int rc;
  /* complex, and numbers with __complex__ that are not int or float (numpy.complex64):
     both parts, to C's complex fill, which decides what each dtype takes. */
  if (PyComplex_Check(value) || (!PyLong_Check(value) && !PyFloat_Check(value) &&
                                 PyObject_HasAttrString((PyObject *)Py_TYPE(value), "__complex__"))) {
    Py_complex c = PyComplex_AsCComplex(value);
    if (c.real == -1.0 && PyErr_Occurred()) return NULL;
    Py_BEGIN_ALLOW_THREADS;
    rc = ffk_tensor_fill_complex(ffkpy_tensor_of(self), c.real, c.imag);
    Py_END_ALLOW_THREADS;
    if (rc != 0) return ffkpy_raise_from_ffk();
    return Py_NewRef(self);
  }
  ffk_any v;
  if (ffkpy_to_any(value, &v, NULL) != 0) return NULL;
  Py_BEGIN_ALLOW_THREADS;
  rc = ffk_tensor_fill(ffkpy_tensor_of(self), &v);
  Py_END_ALLOW_THREADS;
  ffk_any_release(&v);
  if (rc != 0) return ffkpy_raise_from_ffk();
  return Py_NewRef(self);
}

/* ---- Pickle -------------------------------------------------------------------------- */

/*
 * Three formats, ffikit._tensor's loaders rebuilding each:
 *  - shared memory (at every protocol): (_attach_shared, (name, shape, strides, dtype,
 *    byte_offset)), no bytes;
 *  - protocol >= 5, a host tensor (cpu, cuda_host): (_from_pickle_buffer, (PickleBuffer,
 *    shape, dtype, device)), the bytes of the tensor itself when contiguous (else of one
 *    contiguous copy) handed to the pickler, out of band when it has a buffer_callback;
 *  - otherwise (protocols 0-4, and __reduce__): (_from_bytes, (bytes, shape, dtype,
 *    device)); a tensor on a device is a TypeError (copy it to the host first).
 */

/* The text of the dtype and of the device of a tensor, as the loaders take them. */
static PyObject *dtype_text(const DLTensor *dl) {
  PyObject *dtype = ffkpy_dtype_from_dl(dl->dtype);
  PyObject *text = dtype ? PyObject_Str(dtype) : NULL;
  Py_XDECREF(dtype);
  return text;
}
static PyObject *device_text(const DLTensor *dl) {
  PyObject *device = ffkpy_device_from_dl(dl->device);
  PyObject *text = device ? PyObject_Str(device) : NULL;
  Py_XDECREF(device);
  return text;
}

/* The attribute `name` of ffikit._tensor: a new reference, or NULL with an exception. */
static PyObject *tensor_module_attr(const char *name) {
  PyObject *mod = PyImport_ImportModule("ffikit._tensor");
  if (mod == NULL) return NULL;
  PyObject *fn = PyObject_GetAttrString(mod, name);
  Py_DECREF(mod);
  return fn;
}

/* `self` when it is contiguous, else one contiguous copy: a new reference, or NULL with an exception. */
static PyObject *contiguous_of(PyObject *self) {
  ffk_tensor *t = ffkpy_tensor_of(self), *c;
  if (ffk_tensor_is_contiguous(t)) return Py_NewRef(self);
  Py_BEGIN_ALLOW_THREADS;
  c = ffk_tensor_contiguous(t);
  Py_END_ALLOW_THREADS;
  return wrap_tensor(c);
}

static PyObject *tensor_reduce(PyObject *self, PyObject *u) {
  (void)u;
  const DLTensor *dl = ffkpy_dl_of(self);
  const char *shm = ffk_storage_shared_name(ffk_tensor_storage_borrow(ffkpy_tensor_of(self)));
  PyObject *r = NULL, *shape = int_tuple(dl->shape, dl->ndim), *dtext = dtype_text(dl);
  PyObject *fn = shape && dtext ? tensor_module_attr(shm != NULL ? "_attach_shared" : "_from_bytes") : NULL;
  if (fn && shm != NULL) {
    PyObject *strides = int_tuple(dl->strides, dl->ndim);
    if (strides) r = Py_BuildValue("O(sOOOK)", fn, shm, shape, strides, dtext, (unsigned long long)dl->byte_offset);
    Py_XDECREF(strides);
  } else if (fn) {
    PyObject *dev_text = device_text(dl);
    if (dev_text && !ffkpy_tensor_on_host(self)) {
      PyErr_Format(PyExc_TypeError, "only host tensors pickle by value; this one is on %U", dev_text);
    } else if (dev_text) {
      PyObject *c = contiguous_of(self); /* its bytes, copied into the pickle (every dtype: no buffer format needed) */
      PyObject *bytes = c ? PyBytes_FromStringAndSize(ffk_tensor_data_ptr(ffkpy_tensor_of(c)),
                                                      (Py_ssize_t)ffk_tensor_nbytes(ffkpy_tensor_of(c)))
                          : NULL;
      if (bytes) r = Py_BuildValue("O(OOOO)", fn, bytes, shape, dtext, dev_text);
      Py_XDECREF(c);
      Py_XDECREF(bytes);
    }
    Py_XDECREF(dev_text);
  }
  Py_XDECREF(fn);
  Py_XDECREF(shape);
  Py_XDECREF(dtext);
  return r;
}

/* __reduce_ex__(protocol): the protocol-5 format where it applies, else __reduce__'s. */
static PyObject *tensor_reduce_ex(PyObject *self, PyObject *arg) {
  long protocol = PyLong_AsLong(arg);
  if (protocol == -1 && PyErr_Occurred()) return NULL;
  ffk_tensor *t = ffkpy_tensor_of(self);
  if (protocol < 5 || ffk_storage_shared_name(ffk_tensor_storage_borrow(t)) != NULL || !ffkpy_tensor_on_host(self))
    return tensor_reduce(self, NULL);
  const DLTensor *dl = ffkpy_dl_of(self);
  PyObject *r = NULL, *fn = tensor_module_attr("_from_pickle_buffer");
  PyObject *c = fn ? contiguous_of(self) : NULL; /* made contiguous once; the pickler gets those bytes */
  PyObject *pb = c ? ffkpy_tensor_pickle_buffer(c) : NULL;
  PyObject *shape = pb ? int_tuple(dl->shape, dl->ndim) : NULL;
  PyObject *dtext = shape ? dtype_text(dl) : NULL;
  PyObject *dev_text = dtext ? device_text(dl) : NULL;
  if (dev_text) r = Py_BuildValue("O(OOOO)", fn, pb, shape, dtext, dev_text);
  Py_XDECREF(fn);
  Py_XDECREF(c);
  Py_XDECREF(pb);
  Py_XDECREF(shape);
  Py_XDECREF(dtext);
  Py_XDECREF(dev_text);
  return r;
}

/* ---- Constructors ------------------------------------------------------------------------ */

/* A dtype given as an ffikit.dtype, its text, or anything ffikit.dtype() takes. 0, or -1 with an exception. */
static int read_dtype(PyObject *dtype, DLDataType *dt) {
  int rc = ffkpy_dtype_read(dtype, dt);
  if (rc != 0) return rc < 0 ? -1 : 0;
  PyObject *d = ffkpy_g.dtype_cls ? PyObject_CallOneArg(ffkpy_g.dtype_cls, dtype) : NULL;
  if (d == NULL) return -1;
  rc = ffkpy_dtype_read(d, dt);
  Py_DECREF(d);
  return rc > 0 ? 0 : -1;
}

/* A device given as an ffikit.Device or anything Device() takes ("cpu", "cuda:0"). 0, or -1 with an exception. */
static int read_device(PyObject *device, DLDevice *dev) {
  PyObject *d = PyObject_TypeCheck(device, &ffkpy_DeviceType) ? Py_NewRef(device)
                                                              : PyObject_CallOneArg((PyObject *)&ffkpy_DeviceType, device);
  if (d == NULL) return -1;
  *dev = ((ffkpy_Device *)d)->device;
  Py_DECREF(d);
  return 0;
}

static int read_alloc_args(PyObject *args, PyObject *kwds, const char *fname, int64_t *dims, int32_t *n, DLDataType *dt,
                           DLDevice *dev, PyObject **name) {
  static char *kwlist[] = {"shape", "dtype", "device", "name", NULL};
  PyObject *shape, *dtype, *device = Py_None, *nm = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO", kwlist, &shape, &dtype, &device, &nm)) return -1;
  if (read_shape(shape, fname, "shape", dims, n) != 0 || read_dtype(dtype, dt) != 0) return -1;
  *dev = ffk_device(FFK_DEVICE_CPU, 0);
  if (device != Py_None && read_device(device, dev) != 0) return -1;
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
  return wrap_tensor(ffk_tensor_new_shared(cname, n, dims, dt)); /* C computes and checks the size */
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
  if (read_shape(shape, "attach_shared", "shape", dims, &n) != 0 ||
      read_shape(strides, "attach_shared", "strides", st, &m) != 0 || read_dtype(dtype, &dt) != 0)
    return NULL;
  if (n != m) return PyErr_Format(PyExc_ValueError, "attach_shared: %d dimensions but %d strides", (int)n, (int)m);
  ffk_storage *s = ffk_storage_attach_shared(name);
  if (s == NULL) return ffkpy_raise_from_ffk();
  ffk_tensor *t = ffk_tensor_from_storage(s, n, dims, st, offset, dt);
  ffk_object_release((ffk_object *)s);
  return wrap_tensor(t);
}

/* _tensor_from_pickle_buffer(buf, shape, dtype, device): what a protocol-5 pickle rebuilds (tensor_buffer.c). */
static PyObject *tensor_from_pickle_buffer(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 4)
    return PyErr_Format(PyExc_TypeError, "_tensor_from_pickle_buffer expected 4 arguments, got %zd", nargs);
  int64_t dims[FFK_TENSOR_MAX_NDIM];
  int32_t n;
  DLDataType dt;
  DLDevice dev;
  if (read_shape(args[1], "unpickle", "shape", dims, &n) != 0 || read_dtype(args[2], &dt) != 0 ||
      read_device(args[3], &dev) != 0)
    return NULL;
  return ffkpy_tensor_from_pickle_buffer(args[0], n, dims, dt, dev);
}

static PyObject *sweep_shared(PyObject *mod, PyObject *u) {
  (void)mod, (void)u;
  int64_t n = ffk_storage_sweep_shared();
  if (n < 0) return ffkpy_raise_from_ffk();
  return PyLong_FromLongLong(n);
}

/* ---- The type ------------------------------------------------------------------------ */

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))ffkpy_tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> PyCapsule\n\n"
     "A legacy capsule without max_version, a versioned one for max_version >= (1, 0);\n"
     "copy=True copies on the tensor's device (and flags IS_COPIED); BufferError for moves\n"
     "to another device. stream is the consumer's, as the array API standard says: on CUDA\n"
     "None or 1 the legacy default stream, 2 the per-thread one, a larger int a handle, -1\n"
     "no ordering; ffikit's pending work on its current stream is made to happen before it.\n"
     "Elsewhere only None or -1. TypeError for a stream that is not an int, ValueError for\n"
     "a value the device does not take (0 is ambiguous)."},
    {"__dlpack_device__", ffkpy_tensor_dlpack_device, METH_NOARGS, "(device_type, device_id) as DLPack numbers them."},
    {"__array__", (PyCFunction)(void (*)(void))ffkpy_tensor_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None) -> numpy.ndarray: numpy's view of a host tensor (cpu,\n"
     "cuda_host), through the buffer protocol. TypeError for a tensor on a device (copy it to\n"
     "the CPU first), BufferError for a dtype numpy has no buffer format for (bfloat16)."},
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
    {"fill_", tensor_fill_, METH_O,
     "fill_(value) -> self: sets every element to an int, float, bool or complex. A value\n"
     "the dtype cannot hold exactly is refused: OverflowError when out of range (2**40 into\n"
     "int32, -1 into uint8), ValueError for NaN or a fraction into an integer dtype,\n"
     "TypeError for a complex with an imaginary part into a real dtype. ValueError for a\n"
     "read-only tensor. On a CUDA device the fill is queued on the current stream\n"
     "(ffikit.stream) and the call returns without waiting for it."},
    {"select", tensor_select, METH_VARARGS,
     "select(dim, index) -> Tensor: the view at index along dim, without that dimension\n"
     "(t[i] is select(0, i)); negative dim and index count from the end. IndexError when\n"
     "either is out of range."},
    {"item", tensor_item, METH_NOARGS,
     "item() -> int | float | bool: the value of the only element (any device). ValueError\n"
     "unless the tensor has exactly one element; TypeError for complex and float8 dtypes."},
    {"from_buffer", ffkpy_tensor_from_buffer, METH_O | METH_CLASS,
     "Tensor.from_buffer(obj) -> Tensor: a zero-copy CPU tensor over any buffer (kept alive)."},
    {"__reduce_ex__", tensor_reduce_ex, METH_O,
     "__reduce_ex__(protocol): at protocol 5 and above a host tensor pickles its bytes as a\n"
     "pickle.PickleBuffer (out of band when the pickler has a buffer_callback; one contiguous\n"
     "copy first when the tensor is not contiguous), which unpickling wraps without a copy;\n"
     "lower protocols give __reduce__'s format. A shared-memory tensor pickles its name."},
    {"__reduce__", tensor_reduce, METH_NOARGS,
     "__reduce__(): the by-value format of protocols 0-4 (the bytes, copied into the pickle)."},
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

/* int(t), float(t), bool(t), operator.index(t): the value of a one-element tensor, never its bytes. */
static PyNumberMethods tensor_as_number = {
    .nb_bool = tensor_bool,
    .nb_int = tensor_int,
    .nb_float = tensor_float,
    .nb_index = tensor_index,
};

PyTypeObject ffkpy_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Tensor",
    .tp_doc = "An n-dimensional view of typed memory on a device, shared with numpy and PyTorch\n"
              "through DLPack without copying. Views (reshape, slicing, permute ...) share the\n"
              "storage. Make one with ffikit.from_dlpack, ffikit.empty/zeros/empty_shared or\n"
              "Tensor.from_buffer.",
    .tp_basicsize = sizeof(ffkpy_Object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = ffkpy_object_traverse,
    .tp_as_buffer = &ffkpy_tensor_as_buffer,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_as_number = &tensor_as_number,
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
};

PyMethodDef ffkpy_tensor_methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))ffkpy_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False) -> Tensor\n\n"
     "Shares the memory of any object with __dlpack__ (numpy, PyTorch, ...) or of a raw\n"
     "'dltensor'/'dltensor_versioned' capsule, which is consumed exactly once."},
    {"empty", (PyCFunction)(void (*)(void))empty, METH_VARARGS | METH_KEYWORDS,
     "empty(shape, dtype, device='cpu') -> Tensor: uninitialised elements."},
    {"zeros", (PyCFunction)(void (*)(void))zeros, METH_VARARGS | METH_KEYWORDS,
     "zeros(shape, dtype, device='cpu') -> Tensor: zeroed elements."},
    {"empty_shared", (PyCFunction)(void (*)(void))empty_shared, METH_VARARGS | METH_KEYWORDS,
     "empty_shared(shape, dtype, name=None) -> Tensor: zeroed CPU memory other processes\n"
     "attach to by name (pickling the tensor sends the name, not the bytes). A name is\n"
     "POSIX's: it starts with '/' and has no other '/', at most 200 characters\n"
     "(\"/my-tensor\"); None makes one up (read it from shared_name). ValueError for a bad\n"
     "name, a name in use, or a shape whose byte size overflows."},
    {"_attach_shared", attach_shared, METH_VARARGS, NULL},
    {"_sweep_shared", sweep_shared, METH_NOARGS, NULL},
    {"_tensor_from_pickle_buffer", (PyCFunction)(void (*)(void))tensor_from_pickle_buffer, METH_FASTCALL,
     "_tensor_from_pickle_buffer(buf, shape, dtype, device) -> Tensor: the tensor over a received buffer\n"
     "(no copy on the CPU; read-only when the buffer is). ValueError when its length does not match."},
    {NULL, NULL, 0, NULL},
};

int ffkpy_tensor_types_init(PyObject *module) {
  ffkpy_TensorType.tp_base = &ffkpy_ObjectType;
  if (PyType_Ready(&ffkpy_TensorType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Tensor", (PyObject *)&ffkpy_TensorType) < 0) return -1;
  if (ffkpy_tensor_dlpack_init() != 0 || ffkpy_tensor_buffer_init(module) != 0) return -1;
  PyObject *k = PyLong_FromLong(FFK_TYPE_TENSOR);
  if (k == NULL) return -1;
  int rc = PyDict_SetItem(ffkpy_g.dynamic_classes, k, (PyObject *)&ffkpy_TensorType);
  Py_DECREF(k);
  return rc == 0 ? ffkpy_dlpack_exchange_init() : -1;
}
