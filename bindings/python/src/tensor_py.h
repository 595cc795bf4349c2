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

/* True for a tensor in memory the host reads directly (cpu, cuda_host): what exports a buffer. */
bool ffkpy_tensor_on_host(PyObject *tensor);

/*
 * A new pickle.PickleBuffer over the bytes of `tensor` (borrowed; a contiguous host
 * tensor, kept alive by the result) as one flat run of unsigned bytes, read-only when the
 * tensor is. NULL with a Python exception.
 */
PyObject *ffkpy_tensor_pickle_buffer(PyObject *tensor);

/*
 * The tensor of `shape` (ndim values), `dtype` and `device` over the bytes of `buf` (any
 * C-contiguous buffer: PickleBuffer, memoryview, bytes, bytearray, ...), as unpickling
 * rebuilds a protocol-5 Tensor: C checks the length (ffk_tensor_check_bytes); on the CPU
 * the buffer is wrapped without a copy, at any address (misaligned for the dtype too),
 * and kept alive, read-only when it is; copied once into a fresh tensor when `device` is
 * not the CPU (cuda_host: pinned memory), read-only all the same. New reference, or NULL with a
 * Python exception (ValueError for a length, shape or dtype that does not fit).
 */
PyObject *ffkpy_tensor_from_pickle_buffer(PyObject *buf, int32_t ndim, const int64_t *shape, DLDataType dtype,
                                          DLDevice device);

/* Readies the types of tensor_buffer.c. 0, or -1 with a Python exception. */
int ffkpy_tensor_buffer_init(PyObject *module);

/* Tensor.__array__(dtype=None, copy=None): numpy's conversion, host tensors only. */
PyObject *ffkpy_tensor_array(PyObject *self, PyObject *args, PyObject *kwds);

#endif /* FFIKIT_PY_TENSOR_H */
