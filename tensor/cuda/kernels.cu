/*
 * kernels.cu - fill and strided copy on a CUDA device, for tensors of any layout.
 *
 * The host side simplifies the layout first (layout.h: size-1 dimensions dropped, an
 * element that is not a whole number of aligned 8/4/2-byte words moved as narrower
 * words, dimensions that form one run merged, so a contiguous tensor becomes one
 * dimension) and passes it to the kernel by value, in parameter space. A result that is
 * one dense run goes to cudaMemset/cudaMemcpy instead of a kernel.
 *
 * The kernels are grid-stride loops over a linear int64 index, turned into per-operand
 * offsets by layout.h's Offsets; one instantiation per word size (1, 2, 4, 8 bytes).
 * Every call queues its work on the caller's stream and returns without waiting.
 */
#include "kernels.h"

#include <cstring>

#include "layout.h"

namespace {

using ffk_kernels::Dense;
using ffk_kernels::Layout;
using ffk_kernels::Offsets;
using ffk_kernels::Simplify;
using ffk_kernels::WordSize;

static_assert(ffk_kernels::kMaxTensorDims == FFK_KERNELS_MAX_NDIM, "layout.h and kernels.h disagree");

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;  // grid-stride loops cover the rest

// The bytes of one element as `period` words (period = element size / word size).
template <typename T>
struct Pattern {
  T word[FFK_KERNELS_MAX_FILL_ELSIZE / sizeof(T)];
  int32_t period;
};

template <typename T>
__global__ void FillKernel(T* dst, Layout l, int64_t n, Pattern<T> p) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    int64_t off[1];
    Offsets<1>(l, i, off);
    // An element starts at a multiple of period words; with negative strides off[0] may be
    // negative, and C++'s % keeps the sign, so the word within the element is brought to 0..period-1.
    int64_t w = p.period == 1 ? 0 : off[0] % p.period;
    dst[off[0]] = p.word[w < 0 ? w + p.period : w];
  }
}

template <typename T>
__global__ void CopyKernel(T* dst, const T* src, Layout l, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    int64_t off[2];
    Offsets<2>(l, i, off);
    dst[off[0]] = src[off[1]];
  }
}

unsigned Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxBlocks ? b : kMaxBlocks);
}


template <typename T>
cudaError_t LaunchFill(void* dst, const Layout& l, int64_t n, const unsigned char* value, size_t elsize,
                       cudaStream_t stream) {
  Pattern<T> p;
  std::memset(&p, 0, sizeof p);
  std::memcpy(p.word, value, elsize);
  p.period = static_cast<int32_t>(elsize / sizeof(T));
  FillKernel<T><<<Blocks(n), kThreads, 0, stream>>>(static_cast<T*>(dst), l, n, p);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchCopy(void* dst, const void* src, const Layout& l, int64_t n, cudaStream_t stream) {
  CopyKernel<T><<<Blocks(n), kThreads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src), l, n);
  return cudaGetLastError();
}

bool BadLayout(int32_t ndim, const int64_t* shape, size_t elsize) {
  return ndim < 0 || ndim > FFK_KERNELS_MAX_NDIM || (ndim > 0 && shape == nullptr) || elsize == 0;
}

}  // namespace

extern "C" cudaError_t ffk_kernels__fill(void* dst, int32_t ndim, const int64_t* shape, const int64_t* strides,
                                         const void* value, size_t elsize, cudaStream_t stream) {
  if (BadLayout(ndim, shape, elsize) || elsize > FFK_KERNELS_MAX_FILL_ELSIZE || value == nullptr ||
      (ndim > 0 && strides == nullptr)) {
    return cudaErrorInvalidValue;
  }
  size_t word = WordSize(elsize, reinterpret_cast<uintptr_t>(dst));
  Layout l;
  const int64_t* const ops[1] = {strides};
  int64_t n = Simplify(&l, 1, ndim, shape, ops, elsize, word);
  if (n == 0) return cudaSuccess;
  const unsigned char* bytes = static_cast<const unsigned char*>(value);
  bool same_bytes = true;
  for (size_t i = 1; i < elsize; ++i) same_bytes = same_bytes && bytes[i] == bytes[0];
  if (Dense(l, 1) && same_bytes) return cudaMemsetAsync(dst, bytes[0], static_cast<size_t>(n) * word, stream);
  switch (word) {
    case 8: return LaunchFill<unsigned long long>(dst, l, n, bytes, elsize, stream);
    case 4: return LaunchFill<uint32_t>(dst, l, n, bytes, elsize, stream);
    case 2: return LaunchFill<uint16_t>(dst, l, n, bytes, elsize, stream);
    default: return LaunchFill<uint8_t>(dst, l, n, bytes, elsize, stream);
  }
}

extern "C" cudaError_t ffk_kernels__copy(void* dst, const int64_t* dst_strides, const void* src,
                                         const int64_t* src_strides, int32_t ndim, const int64_t* shape,
                                         size_t elsize, cudaStream_t stream) {
  if (BadLayout(ndim, shape, elsize) || (ndim > 0 && (dst_strides == nullptr || src_strides == nullptr))) {
    return cudaErrorInvalidValue;
  }
  size_t word = WordSize(elsize, reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src));
  Layout l;
  const int64_t* const ops[2] = {dst_strides, src_strides};
  int64_t n = Simplify(&l, 2, ndim, shape, ops, elsize, word);
  if (n == 0) return cudaSuccess;
  if (Dense(l, 2)) return cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * word, cudaMemcpyDefault, stream);
  switch (word) {
    case 8: return LaunchCopy<unsigned long long>(dst, src, l, n, stream);
    case 4: return LaunchCopy<uint32_t>(dst, src, l, n, stream);
    case 2: return LaunchCopy<uint16_t>(dst, src, l, n, stream);
    default: return LaunchCopy<uint8_t>(dst, src, l, n, stream);
  }
}
