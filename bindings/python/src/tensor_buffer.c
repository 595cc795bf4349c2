/*
 * tensor_buffer.c - the buffer protocol both ways for host tensors: a Tensor exports a
 * (possibly strided, possibly negatively strided) buffer, and Tensor.from_buffer wraps
 * any buffer as a zero-copy Tensor through the C DLPack import, which decides what a
 * tensor may be. Tensor.__array__ is numpy's conversion over the same buffer.
 *
 * Only host memory (cpu, cuda_host) is exported. numpy ignores a failing buffer export
 * and goes on to __array__, and without it would wrap a device tensor in an object
 * array; so __array__ refuses a device tensor with a TypeError that says what to do.
 */
#include "ffikit_py.h"

#include "tensor_py.h"

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

/* Memory the host reads directly: what the buffer protocol and __array__ export. */
/* Whether the CPU may address the memory: C's rule (ffk_device_is_host). */
static bool on_host(const DLTensor *dl) { return ffk_device_is_host(dl->device); }

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  const DLTensor *dl = ffkpy_dl_of(self);
  int32_t dev = ffk_device_type(dl->device);
  if (!on_host(dl)) {
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
  int read_only = ffk_tensor_is_read_only(ffkpy_tensor_of(self));
  if ((flags & PyBUF_WRITABLE) && ffk_tensor_check_writable(ffkpy_tensor_of(self), "a writable buffer") != 0) {
    /* C's rule and message; the buffer protocol's exception */
    ffk_error *err = ffk_error_fetch();
    PyErr_SetString(PyExc_BufferError, err != NULL ? ffk_error_message(err) : "the tensor is read-only");
    ffk_object_release((ffk_object *)err);
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
  int contiguous = ffk_tensor_is_contiguous(ffkpy_tensor_of(self));
  if (!contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    PyMem_Free(dims);
    PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous: ask for a strided buffer");
    return -1;
  }
  view->buf = ffk_tensor_data_ptr(ffkpy_tensor_of(self));
  view->obj = Py_NewRef(self);
  view->len = (Py_ssize_t)ffk_tensor_nbytes(ffkpy_tensor_of(self));
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

PyBufferProcs ffkpy_tensor_as_buffer = {tensor_getbuffer, tensor_releasebuffer};

/* ---- numpy's __array__ ---------------------------------------------------------------- */

PyObject *ffkpy_tensor_array(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist, &dtype, &copy)) return NULL;
  const DLTensor *dl = ffkpy_dl_of(self);
  if (!on_host(dl)) {
    char dev[FFK_DEVICE_STR_MAX];
    ffk_device_format(dl->device, dev, sizeof dev);
    return PyErr_Format(PyExc_TypeError,
                        "cannot convert a tensor on %s to a numpy array: numpy arrays live in host memory. Copy "
                        "it to the CPU first (ffikit.empty(t.shape, t.dtype).copy_(t)), or hand it to a library "
                        "on that device through DLPack (torch.from_dlpack(t), cupy.from_dlpack(t))",
                        dev);
  }
  PyObject *view = PyMemoryView_FromObject(self); /* BufferError for a dtype without a format */
  if (view == NULL) return NULL;
  PyObject *numpy = PyImport_ImportModule("numpy");
  PyObject *asarray = numpy ? PyObject_GetAttrString(numpy, "asarray") : NULL;
  PyObject *kw = asarray ? PyDict_New() : NULL, *r = NULL;
  if (kw != NULL && (dtype == Py_None || PyDict_SetItemString(kw, "dtype", dtype) == 0) &&
      (copy == Py_None || PyDict_SetItemString(kw, "copy", copy) == 0)) {
    PyObject *pos[1] = {view};
    r = PyObject_VectorcallDict(asarray, pos, 1, kw); /* the array's base keeps the view, which keeps self */
  }
  Py_XDECREF(kw);
  Py_XDECREF(asarray);
  Py_XDECREF(numpy);
  Py_DECREF(view);
  return r;
}

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
  const char *kind = strpbrk(format, "wusp") ? " (text)" : strpbrk(format, "O") ? " (Python objects)" : "";
  PyErr_Format(PyExc_TypeError, "from_buffer: buffer format '%s'%s has no ffikit dtype; tensors hold numbers and bools",
               format, kind);
  return -1;
}

/*
 * Makes ctx->view (acquired) a CPU tensor of `ndim` dimensions ctx->shape, strides
 * ctx->strides or compact (strides NULL), through the C DLPack import, which validates
 * it. The tensor owns ctx: its deleter releases the view. NULL with the ffikit error set
 * and ctx released and freed.
 */
static ffk_tensor *wrap_view(buffer_ctx *ctx, int32_t ndim, DLDataType dtype, const int64_t *strides) {
  Py_buffer *v = &ctx->view;
  DLManagedTensorVersioned *m = &ctx->managed;
  m->version.major = 1;
  m->version.minor = 1;
  m->manager_ctx = ctx;
  m->deleter = buffer_deleter;
  m->flags = v->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  m->dl_tensor.data = v->buf;
  m->dl_tensor.device = ffk_device(FFK_DEVICE_CPU, 0);
  m->dl_tensor.ndim = ndim;
  m->dl_tensor.dtype = dtype;
  m->dl_tensor.shape = ctx->shape;
  m->dl_tensor.strides = (int64_t *)strides;
  m->dl_tensor.byte_offset = 0;
  ffk_tensor *t = ffk_tensor_from_dlpack_versioned(m, NULL);
  if (t == NULL) {
    PyBuffer_Release(v);
    PyMem_RawFree(ctx);
  }
  return t;
}

PyObject *ffkpy_tensor_from_buffer(PyObject *cls, PyObject *obj) {
  (void)cls;
  buffer_ctx *ctx = PyMem_RawCalloc(1, sizeof *ctx);
  if (ctx == NULL) return PyErr_NoMemory();
  if (PyObject_GetBuffer(obj, &ctx->view, PyBUF_RECORDS_RO) != 0) {
    PyMem_RawFree(ctx);
    return NULL;
  }
  Py_buffer *v = &ctx->view;
  DLDataType dtype;
  /* C's shape rule before the copy into ctx->shape, which has room for the most dimensions
   * it allows (it reads no shape when ndim is out of range; the strides, in bytes, come
   * to it as elements below). PyBUF_RECORDS_RO asks for the shape, so it is there. */
  _Static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "a buffer's shape is read as int64_t");
  if (format_dtype(v->format, v->itemsize, &dtype) != 0 ||
      ffk_tensor_check_shape("from_buffer", v->ndim, (const int64_t *)v->shape, NULL, dtype, NULL, NULL) != 0) {
    if (!PyErr_Occurred()) ffkpy_raise_from_ffk();
    PyBuffer_Release(v);
    PyMem_RawFree(ctx);
    return NULL;
  }
  for (int i = 0; i < v->ndim; ++i) {
    ctx->shape[i] = v->shape ? v->shape[i] : v->len / v->itemsize;
    Py_ssize_t st = v->strides ? v->strides[i] : v->itemsize;
    if (st % v->itemsize != 0) { /* negative strides (a reversed numpy view) are fine: C checks the layout */
      PyErr_Format(PyExc_ValueError, "from_buffer: stride %zd is not a multiple of the item size %zd", st,
                   v->itemsize);
      PyBuffer_Release(v);
      PyMem_RawFree(ctx);
      return NULL;
    }
    ctx->strides[i] = st / v->itemsize;
  }
  ffk_tensor *t = wrap_view(ctx, v->ndim, dtype, ctx->strides);
  return t != NULL ? ffkpy_wrap_steal((ffk_object *)t) : ffkpy_raise_from_ffk();
}

/* ---- Pickle protocol 5: the bytes out, a received buffer back in --------------------------- */

/*
 * _TensorBytes: the bytes of a contiguous host tensor as a one-dimensional buffer of
 * unsigned bytes, whatever the dtype (bfloat16 and the float8 family have no buffer
 * format, so the tensor itself cannot be handed to pickle.PickleBuffer), read-only when
 * the tensor is. It holds the tensor, so a PickleBuffer over it keeps the bytes alive.
 * Made only by Tensor.__reduce_ex__ for a contiguous tensor, whose layout never changes.
 */
typedef struct {
  PyObject_HEAD
  PyObject *tensor;
} tensor_bytes;

static int tensor_bytes_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  static char nothing; /* a tensor without elements may have no address; a buffer always has one */
  ffk_tensor *t = ffkpy_tensor_of(((tensor_bytes *)self)->tensor);
  void *data = ffk_tensor_data_ptr(t);
  Py_ssize_t len = (Py_ssize_t)ffk_tensor_nbytes(t);
  return PyBuffer_FillInfo(view, self, len > 0 && data != NULL ? data : &nothing, len, ffk_tensor_is_read_only(t),
                           flags); /* BufferError for a writable request on a read-only tensor */
}

static void tensor_bytes_dealloc(PyObject *self) {
  Py_XDECREF(((tensor_bytes *)self)->tensor);
  Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs tensor_bytes_as_buffer = {tensor_bytes_getbuffer, NULL};

static PyTypeObject tensor_bytes_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core._TensorBytes",
    .tp_doc = "The bytes of a contiguous host tensor as a flat buffer (what Tensor pickles out of band).",
    .tp_basicsize = sizeof(tensor_bytes),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_dealloc = tensor_bytes_dealloc,
    .tp_as_buffer = &tensor_bytes_as_buffer,
};

PyObject *ffkpy_tensor_pickle_buffer(PyObject *tensor) {
  tensor_bytes *b = PyObject_New(tensor_bytes, &tensor_bytes_type);
  if (b == NULL) return NULL;
  b->tensor = Py_NewRef(tensor);
  PyObject *pb = PyPickleBuffer_FromObject((PyObject *)b);
  Py_DECREF(b);
  return pb;
}

/*
 * A read-only tensor over the elements of `t` (stolen; it lives on inside the result):
 * its own DLPack export, flagged read-only and imported back, which C's import makes a
 * new tensor with the flag rather than `t` again. NULL with the ffikit error set.
 */
static ffk_tensor *read_only_view_steal(ffk_tensor *t) {
  DLManagedTensorVersioned *m = ffk_tensor_to_dlpack_versioned(t);
  ffk_object_release((ffk_object *)t); /* the export holds its own reference */
  if (m == NULL) return NULL;
  m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  ffk_tensor *r = ffk_tensor_from_dlpack_versioned(m, NULL);
  if (r == NULL) m->deleter(m);
  return r;
}

bool ffkpy_tensor_on_host(PyObject *tensor) { return on_host(ffkpy_dl_of(tensor)); }

PyObject *ffkpy_tensor_from_pickle_buffer(PyObject *buf, int32_t ndim, const int64_t *shape, DLDataType dtype,
                                          DLDevice device) {
  buffer_ctx *ctx = PyMem_RawCalloc(1, sizeof *ctx);
  if (ctx == NULL) return PyErr_NoMemory();
  if (PyObject_GetBuffer(buf, &ctx->view, PyBUF_SIMPLE) != 0) { /* C-contiguous bytes, with their read-only flag */
    PyMem_RawFree(ctx);
    return NULL;
  }
  int wrap = ffk_tensor_check_bytes("unpickle", ndim, shape, dtype, ctx->view.buf, (uint64_t)ctx->view.len);
  if (wrap < 0) {
    PyBuffer_Release(&ctx->view);
    PyMem_RawFree(ctx);
    return ffkpy_raise_from_ffk();
  }
  if (ndim > 0) memcpy(ctx->shape, shape, sizeof(int64_t) * (size_t)ndim);
  int read_only = ctx->view.readonly;
  ffk_tensor *t = wrap_view(ctx, ndim, dtype, NULL); /* owns ctx from here on */
  if (t == NULL) return ffkpy_raise_from_ffk();
  /* At any address, aligned for the dtype or not (a slice of a Dask frame): C's loops read it unaligned-safely. */
  if (ffk_device_type(device) == FFK_DEVICE_CPU) return ffkpy_wrap_steal((ffk_object *)t);
  /*
   * Copied once into pinned memory for cuda_host (the device is kept); the copy is
   * read-only when the buffer was, as the wrapped buffer would have been.
   */
  ffk_tensor *c;
  int rc = -1;
  Py_BEGIN_ALLOW_THREADS;
  c = ffk_tensor_empty(ndim, shape, dtype, device);
  if (c != NULL) rc = ffk_tensor_copy_from(c, t);
  Py_END_ALLOW_THREADS;
  ffk_object_release((ffk_object *)t); /* releases the buffer */
  if (rc != 0) {
    ffk_object_release((ffk_object *)c);
    return ffkpy_raise_from_ffk();
  }
  if (read_only) c = read_only_view_steal(c);
  return c != NULL ? ffkpy_wrap_steal((ffk_object *)c) : ffkpy_raise_from_ffk();
}

int ffkpy_tensor_buffer_init(PyObject *module) {
  (void)module;
  return PyType_Ready(&tensor_bytes_type);
}
