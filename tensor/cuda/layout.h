// tensor/cuda/layout.h - the layout arithmetic of the CUDA kernels (kernels.cu).
//
// Plain C++17 that nvcc compiles for the device and any C++ compiler for the host, so a
// CPU test (tests/tensor/cuda_layout_test.cc) checks it in every build, GPU or not.
//
// Before a launch the host simplifies a layout shared by one or two operands (a
// destination, and a source for copies): dimensions of size 1 go; an element is moved
// as `per` words of `word` bytes (the widest of 8, 4, 2, 1 that the element size and
// every base address are multiples of), which adds an innermost dimension of `per`
// words when per > 1; and a dimension merges into the kept one outside it when, in
// every operand, one step of the outer dimension equals a full run of the inner one.
// None of this changes the row-major order in which elements and their words are
// visited. The kernel turns a linear index in [0, numel * per) into per-operand word
// offsets with Offsets. Since every element starts at a multiple of `per` words, a word
// offset modulo `per` is the word's place inside its element (how fill finds the byte
// pattern to write).
#ifndef FFIKIT_TENSOR_CUDA_LAYOUT_H
#define FFIKIT_TENSOR_CUDA_LAYOUT_H

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define FFK_LAYOUT_FN __host__ __device__ __forceinline__
#else
#define FFK_LAYOUT_FN inline
#endif

namespace ffk_kernels {

// The tensor limit (FFK_TENSOR_MAX_NDIM) plus the dimension of words an element may add.
constexpr int kMaxTensorDims = 32;
constexpr int kMaxDims = kMaxTensorDims + 1;

// A simplified layout in words: shape, and strides for up to two operands (0 = dst, 1 = src).
// Passed to kernels by value. After Simplify: ndim >= 1 and every shape[d] >= 1.
struct Layout {
  int32_t ndim;
  int64_t shape[kMaxDims];
  int64_t stride[2][kMaxDims];
};

// The widest word (8, 4, 2 or 1 bytes) that `elsize` and every address in `addresses`
// (OR-ed together) are multiples of.
inline size_t WordSize(size_t elsize, uintptr_t addresses) {
  uintptr_t all = addresses | static_cast<uintptr_t>(elsize);
  for (size_t w = 8; w > 1; w /= 2) {
    if (all % w == 0) return w;
  }
  return 1;
}

// Fills `l` with the simplified layout of `ops` operands (strides[op] in elements, any sign)
// counted in words of `word` bytes, and returns the number of words each operand visits
// (0 when the shape has a zero). ndim <= kMaxTensorDims; word divides elsize.
inline int64_t Simplify(Layout* l, int ops, int32_t ndim, const int64_t* shape, const int64_t* const* strides,
                        size_t elsize, size_t word) {
  int64_t per = static_cast<int64_t>(elsize / word), n = 1;
  int k = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return 0;
    n *= shape[i];
    if (shape[i] == 1) continue;
    l->shape[k] = shape[i];
    for (int op = 0; op < ops; ++op) l->stride[op][k] = strides[op][i] * per;
    ++k;
  }
  if (per > 1) {
    l->shape[k] = per;
    for (int op = 0; op < ops; ++op) l->stride[op][k] = 1;
    ++k;
    n *= per;
  }
  int m = 0;
  for (int i = 0; i < k; ++i) {
    bool merge = m > 0;
    for (int op = 0; merge && op < ops; ++op) merge = l->stride[op][m - 1] == l->shape[i] * l->stride[op][i];
    if (merge) {
      l->shape[m - 1] *= l->shape[i];
      for (int op = 0; op < ops; ++op) l->stride[op][m - 1] = l->stride[op][i];
    } else {
      l->shape[m] = l->shape[i];
      for (int op = 0; op < ops; ++op) l->stride[op][m] = l->stride[op][i];
      ++m;
    }
  }
  if (m == 0) {  // a single element of a single word
    l->shape[0] = 1;
    for (int op = 0; op < ops; ++op) l->stride[op][0] = 0;
    m = 1;
  }
  l->ndim = m;
  return n;
}

// True when every operand is one run of consecutive words (or a single word): a
// cudaMemset or cudaMemcpy does the job.
inline bool Dense(const Layout& l, int ops) {
  if (l.ndim != 1) return false;
  if (l.shape[0] == 1) return true;
  for (int op = 0; op < ops; ++op) {
    if (l.stride[op][0] != 1) return false;
  }
  return true;
}

// The word offsets of linear index `i` (0 <= i < the count Simplify returned) in each of
// the first kOps operands. The fixed-bound unrolled loop keeps the layout's arrays out
// of local memory on the device; the outermost dimension needs no division, since what
// is left of the index is already below its size.
template <int kOps>
FFK_LAYOUT_FN void Offsets(const Layout& l, int64_t i, int64_t* off) {
  for (int op = 0; op < kOps; ++op) off[op] = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int d = kMaxDims - 1; d > 0; --d) {
    if (d < l.ndim) {
      int64_t q = i / l.shape[d];
      int64_t idx = i - q * l.shape[d];
      i = q;
      for (int op = 0; op < kOps; ++op) off[op] += idx * l.stride[op][d];
    }
  }
  for (int op = 0; op < kOps; ++op) off[op] += i * l.stride[op][0];
}

}  // namespace ffk_kernels

#endif  // FFIKIT_TENSOR_CUDA_LAYOUT_H
