/*
 * tensor_py.h - what the files of ffikit.Tensor share (tensor.c: the type, views,
 * constructors; tensor_dlpack.c: DLPack exchange; tensor_buffer.c: the buffer protocol).
 * Private to the extension.
 */
#ifndef FFIKIT_PY_TENSOR_H
#define FFIKIT_PY_TENSOR_H

#include "ffikit_py.h"

/* The Tensor a ffikit.Tensor wraps, and its DLTensor; borrowed from `self`. */
static inline ffk_tensor *ffkpy_tensor_of(PyObject *self) { return (ffk_tensor *)((ffkpy_Object *)self)->obj; }
static inline const DLTensor *ffkpy_dl_of(PyObject *self) { return ffk_tensor_dltensor_borrow(ffkpy_tensor_of(self)); }

/* ffikit.from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False). */
PyObject *ffkpy_from_dlpack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* Tensor.__dlpack__(*, stream, max_version, dl_device, copy) and Tensor.__dlpack_device__(). */
PyObject *ffkpy_tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ffkpy_tensor_dlpack_device(PyObject *self, PyObject *unused);

/* Interns the DLPack keywords. 0, or -1 with a Python exception. */
int ffkpy_tensor_dlpack_init(void);

/* The buffer protocol of ffikit.Tensor, and Tensor.from_buffer(obj) (a classmethod). */
extern PyBufferProcs ffkpy_tensor_as_buffer;
PyObject *ffkpy_tensor_from_buffer(PyObject *cls, PyObject *obj);

/* Tensor.__array__(dtype=None, copy=None): numpy's conversion, host tensors only. */
PyObject *ffkpy_tensor_array(PyObject *self, PyObject *args, PyObject *kwds);

#endif /* FFIKIT_PY_TENSOR_H */
