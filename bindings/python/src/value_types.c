/*
 * value_types.c - the plain values DataType (ffikit._core.DataType, carried by the
 * Python-level ffikit.dtype, a str subclass) and Device (ffikit.Device).
 *
 * Both are immutable, hashable and picklable. Device text is parsed by ffk_device_parse,
 * whose messages are tvm_ffi's ("Unknown device: gpu", "Invalid device index: ?"), and
 * names come from the C table (ffk_device_type_name), so every rule is decided once.
 */
#include "ffikit_py.h"

/* ---- DataType -------------------------------------------------------------------------- */

static PyObject *datatype_make(PyTypeObject *type, DLDataType t) {
  ffkpy_DataType *self = (ffkpy_DataType *)type->tp_alloc(type, 0);
  if (self != NULL) self->dtype = t;
  return (PyObject *)self;
}

static PyObject *datatype_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"dtype_str", NULL};
  PyObject *text;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "U:DataType", kwlist, &text)) return NULL;
  Py_ssize_t n;
  const char *data = PyUnicode_AsUTF8AndSize(text, &n);
  if (data == NULL) return NULL;
  DLDataType t;
  if (ffk_dtype_parse(data, (size_t)n, &t) != 0) return ffkpy_raise_from_ffk();
  return datatype_make(type, t);
}

static PyObject *datatype_str(PyObject *self) {
  char buf[FFK_DTYPE_STR_MAX];
  ffk_dtype_format(((ffkpy_DataType *)self)->dtype, buf, sizeof buf);
  return PyUnicode_FromString(buf);
}

static PyObject *datatype_repr(PyObject *self) {
  char buf[FFK_DTYPE_STR_MAX];
  ffk_dtype_format(((ffkpy_DataType *)self)->dtype, buf, sizeof buf);
  return PyUnicode_FromFormat("DataType('%s')", buf);
}

static uint32_t datatype_packed(DLDataType t) { return (uint32_t)t.code | (uint32_t)t.bits << 8 | (uint32_t)t.lanes << 16; }

static Py_hash_t datatype_hash(PyObject *self) {
  Py_hash_t h = (Py_hash_t)datatype_packed(((ffkpy_DataType *)self)->dtype) * 1000003;
  return h == -1 ? -2 : h;
}

static PyObject *datatype_richcompare(PyObject *self, PyObject *other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, &ffkpy_DataTypeType)) Py_RETURN_NOTIMPLEMENTED;
  int eq = ffk_dtype_equal(((ffkpy_DataType *)self)->dtype, ((ffkpy_DataType *)other)->dtype);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *datatype_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *s = datatype_str(self);
  PyObject *r = s ? Py_BuildValue("O(N)", (PyObject *)Py_TYPE(self), s) : NULL;
  return r;
}

#define DT(self) (((ffkpy_DataType *)(self))->dtype)
static PyObject *datatype_code(PyObject *self, void *c) { (void)c; return PyLong_FromLong(DT(self).code); }
static PyObject *datatype_bits(PyObject *self, void *c) { (void)c; return PyLong_FromLong(DT(self).bits); }
static PyObject *datatype_lanes(PyObject *self, void *c) { (void)c; return PyLong_FromLong(DT(self).lanes); }
static PyObject *datatype_itemsize(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(ffk_dtype_itemsize(DT(self)));
}

static PyMethodDef datatype_methods[] = {
    {"__reduce__", datatype_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef datatype_getset[] = {
    {"type_code", datatype_code, NULL, "The DLPack type code (0 int, 1 uint, 2 float, ...).", NULL},
    {"bits", datatype_bits, NULL, "Bits of one lane.", NULL},
    {"lanes", datatype_lanes, NULL, "Number of lanes (1 for scalars).", NULL},
    {"itemsize", datatype_itemsize, NULL, "Bytes of one element (all lanes), rounded up.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ffkpy_DataTypeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit._core.DataType",
    .tp_doc = "DataType(dtype_str): a DLPack data type (code, bits, lanes). Users meet ffikit.dtype.",
    .tp_basicsize = sizeof(ffkpy_DataType),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = datatype_new,
    .tp_str = datatype_str,
    .tp_repr = datatype_repr,
    .tp_hash = datatype_hash,
    .tp_richcompare = datatype_richcompare,
    .tp_methods = datatype_methods,
    .tp_getset = datatype_getset,
};

/* _datatype_from_tuple(code, bits, lanes) -> DataType (checked ranges). */
static PyObject *datatype_from_tuple(PyObject *mod, PyObject *args) {
  (void)mod;
  int code, bits, lanes;
  if (!PyArg_ParseTuple(args, "iii:_datatype_from_tuple", &code, &bits, &lanes)) return NULL;
  if (code < 0 || code > 255 || bits < 0 || bits > 255 || lanes < 0 || lanes > 65535)
    return PyErr_Format(PyExc_ValueError, "invalid DLPack data type (%d, %d, %d)", code, bits, lanes);
  return datatype_make(&ffkpy_DataTypeType, ffk_dtype((uint8_t)code, (uint8_t)bits, (uint16_t)lanes));
}

/* _datatype_from_numpy(typestr, name) -> DataType: numpy's dtype.str and dtype.name, by the C rules. */
static PyObject *datatype_from_numpy(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *typestr, *name;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "s#s:_datatype_from_numpy", &typestr, &n, &name)) return NULL;
  DLDataType t;
  if (ffk_dtype_from_numpy(typestr, (size_t)n, name, &t) != 0) return ffkpy_raise_from_ffk();
  return datatype_make(&ffkpy_DataTypeType, t);
}

PyObject *ffkpy_dtype_from_dl(DLDataType t) {
  PyObject *key = PyLong_FromUnsignedLong(datatype_packed(t));
  if (key == NULL) return NULL;
  PyObject *cached = PyDict_GetItemWithError(ffkpy_g.dtype_cache, key);
  if (cached != NULL) {
    Py_DECREF(key);
    Py_INCREF(cached);
    return cached;
  }
  PyObject *r = NULL;
  if (!PyErr_Occurred()) {
    PyObject *dt = datatype_make(&ffkpy_DataTypeType, t);
    if (dt != NULL && ffkpy_g.dtype_cls != NULL)
      r = PyObject_CallMethod(ffkpy_g.dtype_cls, "_from_datatype", "O", dt);
    else if (dt != NULL)
      r = Py_NewRef(dt);
    Py_XDECREF(dt);
    if (r != NULL && PyDict_Size(ffkpy_g.dtype_cache) < 1024 && PyDict_SetItem(ffkpy_g.dtype_cache, key, r) != 0)
      Py_CLEAR(r);
  }
  Py_DECREF(key);
  return r;
}

int ffkpy_dtype_read(PyObject *o, DLDataType *out) {
  if (ffkpy_g.dtype_cls != NULL && Py_IS_TYPE(o, (PyTypeObject *)ffkpy_g.dtype_cls) && ffkpy_g.dtype_slot >= 0) {
    PyObject *dt = *(PyObject **)((char *)o + ffkpy_g.dtype_slot);
    if (dt != NULL && Py_IS_TYPE(dt, &ffkpy_DataTypeType)) {
      *out = ((ffkpy_DataType *)dt)->dtype;
      return 1;
    }
  }
  if (PyObject_TypeCheck(o, &ffkpy_DataTypeType)) {
    *out = ((ffkpy_DataType *)o)->dtype;
    return 1;
  }
  if (ffkpy_g.dtype_cls != NULL && PyObject_TypeCheck(o, (PyTypeObject *)ffkpy_g.dtype_cls)) {
    PyObject *dt = PyObject_GetAttrString(o, "_ffikit_dtype");
    if (dt == NULL) return -1;
    int ok = PyObject_TypeCheck(dt, &ffkpy_DataTypeType);
    if (ok) *out = ((ffkpy_DataType *)dt)->dtype;
    Py_DECREF(dt);
    if (!ok) PyErr_SetString(PyExc_TypeError, "dtype._ffikit_dtype is not a DataType");
    return ok ? 1 : -1;
  }
  return 0;
}

/* ---- Device ---------------------------------------------------------------------------- */

static PyObject *device_make(PyTypeObject *type, DLDevice d) {
  ffkpy_Device *self = (ffkpy_Device *)type->tp_alloc(type, 0);
  if (self != NULL) self->device = d;
  return (PyObject *)self;
}

PyObject *ffkpy_device_from_dl(DLDevice d) { return device_make(&ffkpy_DeviceType, d); }

/* An index given as any integral (numpy ints too); None is 0. 0, or -1 with TypeError. */
static int read_index(PyObject *index, int32_t *out) {
  if (index == NULL || index == Py_None) {
    *out = 0;
    return 0;
  }
  if (PyBool_Check(index) || !PyIndex_Check(index)) {
    PyErr_Format(PyExc_TypeError, "Invalid device index: %R", index);
    return -1;
  }
  long long v = PyLong_AsLongLong(index);
  if (v == -1 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "Invalid device index: %R", index);
    }
    return -1;
  }
  if (v < INT32_MIN || v > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "Invalid device index: %R", index);
    return -1;
  }
  *out = (int32_t)v;
  return 0;
}

/* "cuda", "cuda:1" (ffk_device_parse decides, in tvm_ffi's words), with `index` for a bare name. */
static int parse_device_text(PyObject *text, PyObject *index, DLDevice *out) {
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(text, &n);
  if (s == NULL) return -1;
  if (ffk_device_parse(s, (size_t)n, out) != 0) return ffkpy_raise_from_ffk_int();
  bool has_index = memchr(s, ':', (size_t)n) != NULL;
  if (index == NULL || index == Py_None) return 0;
  if (has_index) {
    PyErr_Format(PyExc_ValueError, "Device %R already names an index; got index=%R too", text, index);
    return -1;
  }
  int32_t id;
  if (read_index(index, &id) != 0) return -1;
  out->device_id = id;
  return 0;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"device_type", "index", NULL};
  PyObject *dev_type, *index = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:Device", kwlist, &dev_type, &index)) return NULL;
  DLDevice d;
  if (PyObject_TypeCheck(dev_type, &ffkpy_DeviceType) && (index == NULL || index == Py_None)) {
    d = ((ffkpy_Device *)dev_type)->device;
  } else if (PyUnicode_Check(dev_type)) {
    if (parse_device_text(dev_type, index, &d) != 0) return NULL;
  } else if (PyIndex_Check(dev_type) && !PyBool_Check(dev_type)) {
    int overflow;
    long long t = PyLong_AsLongLongAndOverflow(dev_type, &overflow);
    if (t == -1 && PyErr_Occurred()) return NULL;
    if (overflow) /* past int64: a conversion, worded as C words the rule */
      return PyErr_Format(PyExc_ValueError, "Unknown device: %R", dev_type);
    if (ffk_device_check_type(t) != 0) return ffkpy_raise_from_ffk();
    int32_t id;
    if (read_index(index, &id) != 0) return NULL;
    d = ffk_device((int32_t)t, id);
  } else {
    return PyErr_Format(PyExc_TypeError, "Device type must be a str or an int, not %.200s", Py_TYPE(dev_type)->tp_name);
  }
  return device_make(type, d);
}

#define DV(self) (((ffkpy_Device *)(self))->device)

static PyObject *device_str(PyObject *self) {
  char buf[FFK_DEVICE_STR_MAX];
  ffk_device_format(DV(self), buf, sizeof buf);
  return PyUnicode_FromString(buf);
}

static PyObject *device_type_name(PyObject *self, void *c) {
  (void)c;
  const char *name = ffk_device_type_name(ffk_device_type(DV(self)));
  if (name != NULL) return PyUnicode_FromString(name);
  return PyUnicode_FromFormat("device(type=%d)", (int)ffk_device_type(DV(self)));
}

static PyObject *device_repr(PyObject *self) {
  PyObject *name = device_type_name(self, NULL);
  if (name == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("device(type='%U', index=%d)", name, (int)DV(self).device_id);
  Py_DECREF(name);
  return r;
}

static PyObject *device_index(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(DV(self).device_id);
}

static PyObject *device_dlpack_type(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(ffk_device_type(DV(self)));
}

static Py_hash_t device_hash(PyObject *self) {
  Py_hash_t h = (Py_hash_t)(((uint64_t)(uint32_t)ffk_device_type(DV(self)) << 32) | (uint32_t)DV(self).device_id);
  h ^= h >> 17;
  return h == -1 ? -2 : h;
}

static PyObject *device_richcompare(PyObject *self, PyObject *other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, &ffkpy_DeviceType)) Py_RETURN_NOTIMPLEMENTED;
  int eq = ffk_device_equal(DV(self), DV(other));
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *device_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("O(ii)", (PyObject *)Py_TYPE(self), (int)ffk_device_type(DV(self)), (int)DV(self).device_id);
}

static PyObject *device_dlpack_tuple(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("(ii)", (int)ffk_device_type(DV(self)), (int)DV(self).device_id);
}

static PyMethodDef device_methods[] = {
    {"dlpack_device_type", device_dlpack_type, METH_NOARGS, "dlpack_device_type() -> int: the DLPack device type."},
    {"__device_type_name__", (PyCFunction)(void (*)(void))device_type_name, METH_NOARGS, NULL},
    {"_dlpack_tuple", device_dlpack_tuple, METH_NOARGS, "(device_type, index), as __dlpack_device__ gives it."},
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef device_getset[] = {
    {"type", device_type_name, NULL, "The device type's name: 'cpu', 'cuda', ...", NULL},
    {"index", device_index, NULL, "The device index.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ffkpy_DeviceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ffikit.Device",
    .tp_doc = "Device(device_type, index=None)\n\n"
              "A device: Device('cuda:1'), Device('cuda', 1), Device(DLDeviceType.kDLCUDA, 1).\n"
              "str() gives 'cuda:1'. Unknown names raise ValueError('Unknown device: <name>'),\n"
              "malformed text ValueError, a non-integral index TypeError.",
    .tp_basicsize = sizeof(ffkpy_Device),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = device_new,
    .tp_str = device_str,
    .tp_repr = device_repr,
    .tp_hash = device_hash,
    .tp_richcompare = device_richcompare,
    .tp_methods = device_methods,
    .tp_getset = device_getset,
};

/* _device_type_names() -> {name: code} from the C table. */
static PyObject *device_type_names(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  PyObject *d = PyDict_New();
  for (int32_t t = 0; d != NULL && t < 64; ++t) {
    const char *name = ffk_device_type_name(t);
    if (name == NULL) continue;
    PyObject *v = PyLong_FromLong(t);
    if (v == NULL || PyDict_SetItemString(d, name, v) != 0) Py_CLEAR(d);
    Py_XDECREF(v);
  }
  return d;
}

PyMethodDef ffkpy_value_methods[] = {
    {"_datatype_from_tuple", datatype_from_tuple, METH_VARARGS, NULL},
    {"_datatype_from_numpy", datatype_from_numpy, METH_VARARGS, NULL},
    {"_device_type_names", device_type_names, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int ffkpy_value_types_init(PyObject *module) {
  if (PyType_Ready(&ffkpy_DataTypeType) < 0 || PyType_Ready(&ffkpy_DeviceType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "DataType", (PyObject *)&ffkpy_DataTypeType) < 0 ||
      PyModule_AddObjectRef(module, "Device", (PyObject *)&ffkpy_DeviceType) < 0)
    return -1;
  ffkpy_g.dtype_slot = -1;
  return 0;
}
