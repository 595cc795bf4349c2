/*
 * ffikit/tensor.h - Tensor: an n-dimensional view of typed memory, and its views.
 *
 * A Tensor embeds a DLTensor whose shape and strides live inside the Tensor object, and
 * holds a reference to the Storage that owns the bytes. Views (reshape, slice, permute,
 * transpose, squeeze, unsqueeze, as_strided) are new Tensors over the same Storage: a
 * write through one is seen through every other. Strides are in elements, as in DLPack;
 * `byte_offset` is where element [0, ..., 0] starts inside the storage's bytes.
 *
 * Tensors are ordinary objects (type FFK_TYPE_TENSOR): they sit in containers, cross
 * Function calls, and print as `float32[2, 3]@cpu:0`. A Tensor's metadata never changes
 * after creation, so any number of threads may read it; the elements are plain memory
 * with no synchronisation of their own.
 *
 * Work on a CUDA device (zeroing new storage, fill, copies, contiguous) is queued on the
 * calling thread's current stream for the device (ffk_stream_get in ffikit/stream.h;
 * the legacy default stream when none was set) and the call returns without waiting,
 * so it orders with the caller's own work on that stream and can be captured in a CUDA
 * graph. The host sees the results through ffikit's copies into host memory, which wait
 * for the stream (and are refused while it captures a graph). Work queued on another
 * stream is not ordered with it: set that stream current, or order the two with
 * ffk_stream_order (ffikit/dlpack.h).
 *
 * Dimensions: at most FFK_TENSOR_MAX_NDIM. Strides may be negative (a reversed view, or
 * numpy's a[::-1] through DLPack): element [i0, i1, ...] is at data + byte_offset +
 * (i0*s0 + i1*s1 + ...) * itemsize, and every element still lies inside the storage.
 * Shape, dtype and stride errors are ValueErrors (IndexError for a dimension or index
 * out of range) whose messages start with the operation as a user names it ("transpose:",
 * "select:", "fill:") and name the offending values: "transpose: dimension -100 is out of
 * range for a tensor with 2 dimensions (-2 to 1)". Negative dimension indices count from
 * the end, and are normalised here only: bindings pass them through as given.
 *
 * Dtypes: an element has one lane of whole bytes (bool, int8..uint64, float16/32/64,
 * bfloat16, complex64/128, the float8 family), or sub-byte lanes packed into one byte
 * (float4_e2m1fn_x2). Vector dtypes (float32x4) and elements that are not whole bytes
 * (float6_e2m3fn, float4_e2m1fn) are refused with a ValueError that says which rule.
 *
 * Read-only tensors (imported through DLPack with the read-only flag, and their views)
 * are refused by every function that writes elements: ffk_tensor_fill and
 * ffk_tensor_copy_from (as the destination).
 */
#ifndef FFIKIT_TENSOR_H
#define FFIKIT_TENSOR_H

#include <ffikit/storage.h>

FFK_EXTERN_C_BEGIN

#define FFK_TENSOR_MAX_NDIM 32

typedef struct ffk_tensor ffk_tensor;

/*
 * The rule for a shape, and for strides beside it, that every function here taking a
 * shape applies (empty, zeros, new_shared, from_storage, reshape after reading its -1,
 * as_strided, the views, check_bytes, DLPack import) and that bindings call where they
 * need the answer before anything exists (Rust's from_slice):
 *  - `ndim` is 0 to FFK_TENSOR_MAX_NDIM (an int64, so a binding passes the length it has
 *    without narrowing it first), and `shape` is not NULL when it is above 0;
 *  - every dimension is 0 or more;
 *  - `dtype` is one tensors hold (see above);
 *  - the element count and the byte size (elements times the item size) fit in int64;
 *  - with `strides` NULL, the row-major strides fit in int64 (only a shape without
 *    elements can break this: [0, 2^40, 2^40, 2^40]); with `strides` (any int64 values,
 *    `ndim` of them), the elements' reach from the first one fits in 2^63 bytes. Whether
 *    they stay inside some storage is the view functions' question, not this one's.
 * `what` (borrowed, may be NULL) names the user's operation and starts every message, and
 * the message names the argument and the value: "empty: shape[1] is -3, and a dimension
 * cannot be negative", "reshape: shape has 40 dimensions; a tensor has 0 to 32",
 * "empty: shape [2305843009213693952] of float32 has more bytes than fit in 64 bits".
 * Returns 0 and stores the element count and byte size (either pointer may be NULL), or
 * -1 with that ValueError. Reads nothing past what `ndim` says, and never `shape` when
 * `ndim` is out of range.
 */
FFK_API int ffk_tensor_check_shape(const char *what, int64_t ndim, const int64_t *shape, const int64_t *strides,
                                   DLDataType dtype, int64_t *numel, int64_t *nbytes);

/*
 * A new contiguous (row-major) tensor of `shape` (ndim values, each >= 0) and `dtype`
 * on `device`, over fresh storage aligned to 64 bytes; the elements are uninitialised.
 * `dtype` must be one tensors hold (see above). Returns a new reference, or NULL with a
 * ValueError (ndim, a negative dimension, a dtype, a total size that overflows), the
 * allocator's error, or a MemoryError.
 * A CPU tensor of up to 256 bytes made while the built-in CPU allocator is in place is
 * one allocation holding the Tensor, its Storage and the bytes; the Storage is still an
 * object of its own that may outlive the Tensor (a view or a retained
 * ffk_tensor_storage_borrow), and the block goes back when both are gone.
 */
FFK_API ffk_tensor *ffk_tensor_empty(int32_t ndim, const int64_t *shape, DLDataType dtype, DLDevice device);

/* Like ffk_tensor_empty with every byte zero. */
FFK_API ffk_tensor *ffk_tensor_zeros(int32_t ndim, const int64_t *shape, DLDataType dtype, DLDevice device);

/*
 * A zeroed contiguous CPU tensor of `shape` and `dtype` in POSIX shared memory under
 * `name` (borrowed; NULL makes one up). The name must start with '/' and contain no
 * other '/' (POSIX's rule for portable names), at most 200 characters: "/my-tensor".
 * The byte size is computed here, overflow-checked: a ValueError names the shape when
 * its elements or bytes do not fit in 64 bits. Another process attaches with
 * ffk_storage_attach_shared and ffk_tensor_from_storage. Returns a new reference, or
 * NULL with the errors of ffk_tensor_empty (shape, dtype) and ffk_storage_new_shared.
 */
FFK_API ffk_tensor *ffk_tensor_new_shared(const char *name, int32_t ndim, const int64_t *shape, DLDataType dtype);

/*
 * A tensor over `storage` (borrowed; the tensor keeps a reference): `shape`, `strides`
 * (in elements, any sign; NULL for contiguous) and `byte_offset`. Every element must lie
 * inside the storage: a ValueError names the shape, strides, offset and storage size
 * otherwise. New reference or NULL.
 */
FFK_API ffk_tensor *ffk_tensor_from_storage(ffk_storage *storage, int32_t ndim, const int64_t *shape,
                                            const int64_t *strides, uint64_t byte_offset, DLDataType dtype);

/*
 * Checks received bytes against the tensor they should hold: whether the `nbytes` bytes at
 * `data` (host memory) are exactly a contiguous (row-major) tensor of `shape` (ndim values)
 * and `dtype`, as a deserializer that received a tensor's bytes (Python's unpickler, with a
 * protocol-5 buffer) asks before wrapping them. Returns 1 when they are: the bytes can be
 * wrapped as they are, at any address. A buffer misaligned for its dtype (a slice of a
 * larger frame, as Dask hands them) is wrapped too, as numpy wraps it: ffikit's CPU loops
 * (copy, fill, item) read and write elements through unaligned-safe accesses. (Versions
 * before this one returned 0 for a misaligned buffer, asking the caller to copy; 0 is no
 * longer returned.) Or -1 with ffk_tensor_check_shape's ValueError, prefixed "`what`: "
 * (`what` names the user's operation), or one for a length that differs ("unpickle: the
 * buffer has 12 bytes, but a float32 tensor of shape [2, 3] has 24").
 * All arguments borrowed; `data` is only compared, never read (NULL only with nbytes 0).
 */
FFK_API int ffk_tensor_check_bytes(const char *what, int32_t ndim, const int64_t *shape, DLDataType dtype,
                                   const void *data, uint64_t nbytes);

/*
 * The DLTensor inside `t`, borrowed for as long as `t` lives: data, device, ndim, dtype,
 * shape, strides (never NULL) and byte_offset. Do not modify it.
 */
FFK_API const DLTensor *ffk_tensor_dltensor_borrow(const ffk_tensor *t);

/* The storage behind `t`, borrowed from `t` (NULL for a tensor imported through DLPack). */
FFK_API ffk_storage *ffk_tensor_storage_borrow(const ffk_tensor *t);

/*
 * The size of dimension `dim` (negative counts from the end), or -1 with an IndexError
 * ("size: dimension 3 is out of range for a tensor with 2 dimensions (-2 to 1)").
 */
FFK_API int64_t ffk_tensor_size(const ffk_tensor *t, int32_t dim);

/* The number of elements (the product of the shape; 1 for ndim 0). */
FFK_API int64_t ffk_tensor_numel(const ffk_tensor *t);

/* numel times the element size. */
FFK_API int64_t ffk_tensor_nbytes(const ffk_tensor *t);

/*
 * True when the elements are laid out row-major without gaps. As in PyTorch, the
 * strides of dimensions of size 1 are ignored, and a tensor with no elements is
 * contiguous whatever its strides.
 */
FFK_API bool ffk_tensor_is_contiguous(const ffk_tensor *t);

/* The address of element [0, ..., 0] (data + byte_offset); NULL when data is NULL (an
 * imported tensor without elements may have no data, whatever its byte_offset). Borrowed. */
FFK_API void *ffk_tensor_data_ptr(const ffk_tensor *t);

/* ---- Views: new tensors over the same storage (new references, or NULL with an error) ---- */

/*
 * The same elements with another shape; one dimension may be -1 (inferred). Needs a
 * contiguous tensor: a ValueError "cannot reshape a non-contiguous tensor of shape [3, 2]
 * with strides [1, 3]; make a contiguous copy first" otherwise (ffk_tensor_contiguous),
 * and a ValueError naming both shapes when the element counts differ.
 */
FFK_API ffk_tensor *ffk_tensor_reshape(const ffk_tensor *t, int32_t ndim, const int64_t *shape);

/*
 * Elements start, start+step, ... below stop along `dim` (negative dim counts from the
 * end; start and stop are clamped like Python's slices, negative ones count from the
 * end; step >= 1). A new view, or NULL with an IndexError "a 0-d tensor cannot be
 * indexed" (as ffk_tensor_select) or "slice: dimension 3 is out of range for a tensor
 * with 2 dimensions (-2 to 1)", or a ValueError "slice: step 0 is not positive".
 */
FFK_API ffk_tensor *ffk_tensor_slice(const ffk_tensor *t, int32_t dim, int64_t start, int64_t stop, int64_t step);

/*
 * The sub-tensor at `index` along `dim`, without that dimension: t[index] for dim 0, as
 * in PyTorch's select. Negative dim and index count from the end. An IndexError for a
 * 0-d tensor ("a 0-d tensor cannot be indexed"), a dimension out of range, or an index
 * out of range ("index 5 is out of range for dimension 0 of size 3").
 */
FFK_API ffk_tensor *ffk_tensor_select(const ffk_tensor *t, int32_t dim, int64_t index);

/*
 * Dimensions reordered: result dim i is t's dim perm[i], for the `n` entries of `perm`
 * (borrowed), a permutation of 0..ndim-1 where negative entries count from the end. A new
 * view, or NULL with a ValueError when n is not t's ndim ("permute: 3 dimensions given
 * for a tensor with 2", perm is not read then) or perm is NULL, an IndexError naming an
 * entry out of range, or a ValueError naming one that appears twice.
 */
FFK_API ffk_tensor *ffk_tensor_permute(const ffk_tensor *t, int32_t n, const int64_t *perm);

/* Dimensions d0 and d1 swapped. */
FFK_API ffk_tensor *ffk_tensor_transpose(const ffk_tensor *t, int32_t d0, int32_t d1);

/* Without dimension `dim`, which must have size 1. */
FFK_API ffk_tensor *ffk_tensor_squeeze(const ffk_tensor *t, int32_t dim);

/* With a new dimension of size 1 before position `dim` (0..ndim; negative counts from the end). */
FFK_API ffk_tensor *ffk_tensor_unsqueeze(const ffk_tensor *t, int32_t dim);

/*
 * A view with any shape and strides (in elements, any sign) starting `offset` (>= 0)
 * elements into t's storage (measured from the storage start, as in PyTorch; for a
 * tensor imported through DLPack, from its first element). Every element must lie
 * inside the storage (for an import: inside its elements). A ValueError otherwise.
 */
FFK_API ffk_tensor *ffk_tensor_as_strided(const ffk_tensor *t, int32_t ndim, const int64_t *shape,
                                          const int64_t *strides, int64_t offset);

/* ---- Copies ----------------------------------------------------------------------------- */

/*
 * `t` itself (a new reference) when it is contiguous, otherwise a contiguous copy on the
 * same device (on a CUDA device, made by the strided-copy kernel). NULL with the errors
 * of ffk_tensor_empty and ffk_tensor_copy_from.
 */
FFK_API ffk_tensor *ffk_tensor_contiguous(const ffk_tensor *t);

/*
 * 0 when the elements of `t` may be written, or -1 with a ValueError "<operation>: the
 * tensor is read-only (its DLPack producer marked it so)" (`operation`, borrowed, names
 * the user's operation). The rule every writer here applies; a binding that writes
 * elements itself (a mutable slice) asks this first.
 */
FFK_API int ffk_tensor_check_writable(const ffk_tensor *t, const char *operation);

/*
 * Copies the elements of `src` into `dst` (same shape and dtype, any strides; both
 * borrowed). A read-only `dst` is refused (ValueError, see ffk_tensor_check_writable). Between host tensors (cpu, cuda_host) any layout works. To, from and
 * between devices, dense bytes go through the devices' allocators, and a strided side
 * is first gathered into (or afterwards scattered from) a temporary dense tensor on its
 * own side: on the host by ffikit's loops, on a device by its kernels. In a build with
 * CUDA, two tensors on one CUDA device are copied by one strided-copy kernel whatever
 * their layouts; between two CUDA devices a strided side is staged on its own device and
 * the dense bytes move with cudaMemcpyPeerAsync. CUDA work is queued on the current
 * stream and not waited for, except that a copy to or from host memory (cpu,
 * cuda_host) has finished when the call returns, so the host may read `dst` or reuse
 * `src` at once; such a copy is refused (RuntimeError) while the current stream is
 * capturing a CUDA graph. See ffikit/storage.h for the ordering between two devices.
 * A strided side on a device without kernels is a NotImplementedError. 0, or
 * -1 with a ValueError naming the mismatch, a RuntimeError from the device (naming it
 * and the CUDA error), or a MemoryError (also for a temporary). Overlapping src and dst
 * give unspecified element values but never a crash.
 */
FFK_API int ffk_tensor_copy_from(ffk_tensor *dst, const ffk_tensor *src);

/*
 * Sets every element of `t` to `value` (an int, float or bool; both borrowed). Any
 * strides. The value must be exactly representable in t's dtype, as numpy requires:
 *  - into integer dtypes: an int in the dtype's range (OverflowError "fill: 1099511627776
 *    is out of range for int32", also for a negative value into an unsigned dtype), a
 *    bool, or a float with an integral value in range (a fraction or NaN is a ValueError,
 *    an infinity an OverflowError);
 *  - into float16/bfloat16/float32/float64: any int, bool or float whose magnitude the
 *    dtype can hold (rounded to the nearest); a finite value beyond its largest finite
 *    one is an OverflowError; NaN and infinities carry over;
 *  - into bool: an int, float or bool (nonzero is true).
 * Complex dtypes take the value with an imaginary part of 0 (ffk_tensor_fill_complex sets
 * both parts); other dtypes (float8 ...) are a TypeError. A read-only tensor is refused
 * (ValueError). On a CUDA device the fill kernel writes in place (cudaMemsetAsync when
 * the tensor is dense and the element's bytes are all equal), queued on the current
 * stream without waiting (capturable in a CUDA graph); on other devices the element is
 * broadcast from the host through
 * ffk_tensor_copy_from. 0, or -1 with a TypeError (value, dtype), ValueError, OverflowError
 * or the device's error (a RuntimeError naming the device and the CUDA error).
 */
FFK_API int ffk_tensor_fill(ffk_tensor *t, const ffk_any *value);

/*
 * Sets every element of `t` to the complex number real + imag*i. Into complex64 and
 * complex128 the parts are rounded to the part's float type (a finite part beyond its
 * range is an OverflowError); into a real float dtype only an imag of 0 is accepted (else
 * a TypeError "fill: cannot put the complex value (1+2j) into float32"), then as
 * ffk_tensor_fill with a Float; other dtypes are a TypeError. ffk_tensor_fill itself
 * fills complex dtypes from an Int, Float or Bool (imaginary part 0). Same devices,
 * read-only rule and errors as ffk_tensor_fill.
 */
FFK_API int ffk_tensor_fill_complex(ffk_tensor *t, double real, double imag);

/*
 * The value of the only element of `t` (any device, any layout) into *out, a new
 * reference: an Int for integer dtypes, a Float for float16/bfloat16/float32/float64, a
 * Bool for bool. 0, or -1 with *out None and a ValueError when t does not have exactly
 * one element ("item: a tensor with 6 elements has no single value"), a TypeError for a
 * dtype with no ffikit value (complex, float8 ...), an OverflowError for a uint64 above
 * INT64_MAX, or the device's error from copying the element to the host.
 */
FFK_API int ffk_tensor_item(const ffk_tensor *t, ffk_any *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_TENSOR_H */
