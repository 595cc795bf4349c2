/*
 * kernels.cu - fill and strided copy on a CUDA device, for tensors of any layout.
 *
 * The host plans each call (layout.h: the layout normalised to dst's memory order,
 * merged, split into aligned words, and classified) and launches one of four paths on
 * the caller's stream; nothing here waits for the stream or synchronises the host, so
 * every path can be captured in a CUDA graph.
 *
 *   dense      cudaMemcpyAsync / cudaMemsetAsync, or (fill with a pattern that is not one
 *              repeated byte) a grid-stride loop of aligned 16-byte stores: both run at the
 *              device's copy / write bandwidth.
 *   tile       (copy) the transposes: dst contiguous along one dimension, src along another.
 *              A block moves a (32 V) x (32 V) tile through shared memory (32 x 8 threads;
 *              V = 4 for 1-byte and 2 for 2-byte elements, so every access moves 4+ bytes,
 *              1 otherwise; 16-byte elements move as one 16-byte word), both global sides
 *              coalesced: the load reads rows of src, the store writes rows of dst. The
 *              row pitch is padded by V elements against bank conflicts on the column reads.
 *              Without a tile every access of a transpose touches a different sector on
 *              one side: the element-at-a-time kernel wrote a transposed destination at
 *              0.11-0.28x torch's speed (issue 25).
 *   rows       long rows (copies of slices like [:, ::2], permutes that keep the last
 *              dimension; fills of such views): a block moves a chunk of one row, its
 *              offsets computed once per chunk rather than per element; a side with
 *              stride 1 whose rows are 16-byte aligned moves 16-byte vectors, and each
 *              thread issues its 4 loads before its 4 stores. A strided side (the ::2 of
 *              [:, ::2]) is read word by word; a thread's words share sectors, which L1
 *              serves after the first, so DRAM sees each sector once.
 *   general    the rest: a grid-stride loop turning a linear index into offsets. Layouts
 *              of at most 4 dimensions (after merging, almost all) unroll the index
 *              arithmetic over 4 and compute in 32 bits when every index and offset fits
 *              (layout.h's Fits32); others unroll over 33 dimensions in 64 bits.
 * Fills always run in dst's memory order (the plan sorts by stride), so a strided view's
 * stores coalesce and a transposed view is filled as the dense block it is.
 *
 * The tile and row kernels keep 64-bit offsets (a 1 GiB u8 tensor is already 2^30
 * elements, and strided views of larger storage reach further): their per-element work is
 * one multiply-add per side, the divisions happen once per tile or chunk. Grids are capped
 * at 8 blocks of 256 threads per SM (the SM count cached per device) and loop over the
 * rest: full occupancy without launching millions of blocks. `-Xptxas -v` reports no
 * spills and no stack frame for any kernel (sm_75 and sm_90, at most 74 registers: the
 * 1-byte row kernels with 16-byte vectors; the tile kernels 31-40).
 */
#include "kernels.h"

#include <atomic>
#include <cstring>

#include "layout.h"

namespace {

using ffk_kernels::FillDenseArgs;
using ffk_kernels::Layout;
using ffk_kernels::Pattern;
using ffk_kernels::Plan;
using ffk_kernels::RowsArgs;
using ffk_kernels::TileArgs;
using ffk_kernels::Vec;
using ffk_kernels::Word16;
using ffk_kernels::kSmallDims;
using ffk_kernels::kThreads;

static_assert(ffk_kernels::kMaxTensorDims == FFK_KERNELS_MAX_NDIM, "layout.h and kernels.h disagree");
static_assert(FFK_KERNELS_MAX_FILL_ELSIZE <= ffk_kernels::kMaxPer, "a fill element must fit a Pattern");

constexpr int kBlocksPerSm = 8;  // 8 x 256 threads: an SM's 2048 resident threads (sm_75..sm_90)
constexpr int kCachedDevices = 64;

// The word types moved, by size.
template <size_t kBytes>
struct WordOf;
template <>
struct WordOf<1> { using type = uint8_t; };
template <>
struct WordOf<2> { using type = uint16_t; };
template <>
struct WordOf<4> { using type = uint32_t; };
template <>
struct WordOf<8> { using type = unsigned long long; };
template <>
struct WordOf<16> { using type = Word16; };

// ---- Kernels: thin loops around layout.h's per-thread bodies ---------------------------------

template <class T, int V>
__global__ void __launch_bounds__(kThreads) TileKernel(T* dst, const T* src, TileArgs a) {
  __shared__ __align__(16) T smem[ffk_kernels::TileShape<V>::kEdge * ffk_kernels::TileShape<V>::kPitch];
  for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    ffk_kernels::TileLoad<T, V>(a, src, smem, t, threadIdx.x, threadIdx.y);
    __syncthreads();
    ffk_kernels::TileStore<T, V>(a, dst, smem, t, threadIdx.x, threadIdx.y);
    __syncthreads();  // the next tile's loads overwrite smem
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads) RowsKernel(T* dst, const T* src, RowsArgs a) {
  for (int64_t c = blockIdx.x; c < a.chunks; c += gridDim.x) ffk_kernels::RowsChunk<T, V>(a, dst, src, c, threadIdx.x);
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads) RowsFillKernel(T* dst, RowsArgs a, T value) {
  for (int64_t c = blockIdx.x; c < a.chunks; c += gridDim.x) {
    ffk_kernels::RowsFillChunk<T, V>(a, dst, value, c, threadIdx.x);
  }
}

// The loop counter stays 64-bit (i + step may pass 2^31 even where every index fits I).
template <class T, int kDims, class I>
__global__ void __launch_bounds__(kThreads) CopyKernel(T* dst, const T* src, Layout l, int64_t n) {
  int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    ffk_kernels::CopyAt<T, kDims, I>(l, dst, src, static_cast<I>(i));
  }
}

template <class T, int kDims, class I>
__global__ void __launch_bounds__(kThreads) FillKernel(T* dst, Layout l, int64_t n, Pattern<T> p) {
  int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    ffk_kernels::FillAt<T, kDims, I>(l, dst, p, static_cast<I>(i));
  }
}

__global__ void __launch_bounds__(kThreads) FillDenseKernel(unsigned char* dst, FillDenseArgs a) {
  ffk_kernels::FillDenseThread(a, dst, blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x,
                               static_cast<int64_t>(blockDim.x) * gridDim.x);
}

// ---- Launching -------------------------------------------------------------------------------

// The most blocks worth launching on the current device: kBlocksPerSm per SM.
cudaError_t BlockCap(int64_t* cap) {
  static std::atomic<int> sms[kCachedDevices];  // 0 = not asked yet
  int dev = 0, n = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev >= 0 && dev < kCachedDevices) n = sms[dev].load(std::memory_order_relaxed);
  if (n <= 0) {
    e = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    if (n <= 0) n = 1;
    if (dev >= 0 && dev < kCachedDevices) sms[dev].store(n, std::memory_order_relaxed);
  }
  *cap = static_cast<int64_t>(n) * kBlocksPerSm;
  return cudaSuccess;
}

cudaError_t Grid(int64_t work_blocks, unsigned* grid) {
  int64_t cap = 0;
  cudaError_t e = BlockCap(&cap);
  if (e != cudaSuccess) return e;
  int64_t g = work_blocks < cap ? work_blocks : cap;
  *grid = static_cast<unsigned>(g < 1 ? 1 : g);
  return cudaSuccess;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <class T>
T* At(void* base, int64_t words) { return static_cast<T*>(base) + words; }
template <class T>
const T* At(const void* base, int64_t words) { return static_cast<const T*>(base) + words; }

template <size_t kElsize>
cudaError_t LaunchTile(void* dst, const void* src, const Plan& p, cudaStream_t stream) {
  using T = typename WordOf<kElsize>::type;
  constexpr int V = kElsize >= 4 ? 1 : static_cast<int>(4 / kElsize);
  TileArgs a;
  ffk_kernels::MakeTileArgs(p, &a);
  unsigned grid;
  cudaError_t e = Grid(a.tiles, &grid);
  if (e != cudaSuccess) return e;
  TileKernel<T, V><<<grid, dim3(32, ffk_kernels::kTileRowsPerPass), 0, stream>>>(At<T>(dst, p.base[0]),
                                                                                 At<T>(src, p.base[1]), a);
  return cudaGetLastError();
}

template <size_t kWord>
cudaError_t LaunchRows(void* dst, const void* src, const Plan& p, cudaStream_t stream) {
  using T = typename WordOf<kWord>::type;
  constexpr int V = kWord < 16 ? static_cast<int>(16 / kWord) : 1;
  RowsArgs a;
  ffk_kernels::MakeRowsArgs(p, &a);
  unsigned grid;
  cudaError_t e = Grid(a.chunks, &grid);
  if (e != cudaSuccess) return e;
  T* d = At<T>(dst, p.base[0]);
  const T* s = At<T>(src, p.base[1]);
  if (p.vec == V) {
    RowsKernel<T, V><<<grid, kThreads, 0, stream>>>(d, s, a);
  } else {
    RowsKernel<T, 1><<<grid, kThreads, 0, stream>>>(d, s, a);
  }
  return cudaGetLastError();
}

template <size_t kWord>
cudaError_t LaunchRowsFill(void* dst, const Plan& p, const unsigned char* value, cudaStream_t stream) {
  using T = typename WordOf<kWord>::type;
  constexpr int V = kWord < 16 ? static_cast<int>(16 / kWord) : 1;
  RowsArgs a;
  ffk_kernels::MakeRowsArgs(p, &a);
  T v;
  std::memcpy(&v, value, kWord);  // per == 1: the word is the element
  unsigned grid;
  cudaError_t e = Grid(a.chunks, &grid);
  if (e != cudaSuccess) return e;
  T* d = At<T>(dst, p.base[0]);
  if (p.vec == V) {
    RowsFillKernel<T, V><<<grid, kThreads, 0, stream>>>(d, a, v);
  } else {
    RowsFillKernel<T, 1><<<grid, kThreads, 0, stream>>>(d, a, v);
  }
  return cudaGetLastError();
}

template <size_t kWord>
cudaError_t LaunchGeneralCopy(void* dst, const void* src, const Plan& p, cudaStream_t stream) {
  using T = typename WordOf<kWord>::type;
  unsigned grid;
  cudaError_t e = Grid(CeilDiv(p.count, kThreads), &grid);
  if (e != cudaSuccess) return e;
  T* d = At<T>(dst, p.base[0]);
  const T* s = At<T>(src, p.base[1]);
  if (p.l.ndim > kSmallDims) {
    CopyKernel<T, ffk_kernels::kMaxDims, int64_t><<<grid, kThreads, 0, stream>>>(d, s, p.l, p.count);
  } else if (ffk_kernels::Fits32(p)) {
    CopyKernel<T, kSmallDims, int32_t><<<grid, kThreads, 0, stream>>>(d, s, p.l, p.count);
  } else {
    CopyKernel<T, kSmallDims, int64_t><<<grid, kThreads, 0, stream>>>(d, s, p.l, p.count);
  }
  return cudaGetLastError();
}

template <size_t kWord>
cudaError_t LaunchGeneralFill(void* dst, const Plan& p, const unsigned char* value, cudaStream_t stream) {
  using T = typename WordOf<kWord>::type;
  Pattern<T> pat;
  std::memset(&pat, 0, sizeof pat);
  std::memcpy(pat.word, value, p.elsize);
  pat.period = static_cast<int32_t>(p.per);
  unsigned grid;
  cudaError_t e = Grid(CeilDiv(p.count, kThreads), &grid);
  if (e != cudaSuccess) return e;
  T* d = At<T>(dst, p.base[0]);
  if (p.l.ndim > kSmallDims) {
    FillKernel<T, ffk_kernels::kMaxDims, int64_t><<<grid, kThreads, 0, stream>>>(d, p.l, p.count, pat);
  } else if (ffk_kernels::Fits32(p)) {
    FillKernel<T, kSmallDims, int32_t><<<grid, kThreads, 0, stream>>>(d, p.l, p.count, pat);
  } else {
    FillKernel<T, kSmallDims, int64_t><<<grid, kThreads, 0, stream>>>(d, p.l, p.count, pat);
  }
  return cudaGetLastError();
}

cudaError_t LaunchFillDense(void* dst, const Plan& p, const unsigned char* value, cudaStream_t stream) {
  unsigned char* first = At<unsigned char>(dst, p.base[0] * static_cast<int64_t>(p.word));
  FillDenseArgs a;
  ffk_kernels::MakeFillDenseArgs(p, reinterpret_cast<uintptr_t>(first), value, &a);
  unsigned grid;
  cudaError_t e = Grid(CeilDiv(a.nvec, kThreads), &grid);
  if (e != cudaSuccess) return e;
  FillDenseKernel<<<grid, kThreads, 0, stream>>>(first, a);
  return cudaGetLastError();
}

// Calls F<word>(args...) for the plan's word size.
#define FFK_BY_SIZE(size, F, ...)                  \
  switch (size) {                                  \
    case 16: return F<16>(__VA_ARGS__);            \
    case 8: return F<8>(__VA_ARGS__);              \
    case 4: return F<4>(__VA_ARGS__);              \
    case 2: return F<2>(__VA_ARGS__);              \
    default: return F<1>(__VA_ARGS__);             \
  }

bool BadLayout(int32_t ndim, const int64_t* shape, size_t elsize) {
  if (ndim < 0 || ndim > FFK_KERNELS_MAX_NDIM || (ndim > 0 && shape == nullptr) || elsize == 0) return true;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return true;
  }
  return false;
}

}  // namespace

extern "C" cudaError_t ffk_kernels__fill(void* dst, int32_t ndim, const int64_t* shape, const int64_t* strides,
                                         const void* value, size_t elsize, cudaStream_t stream) {
  if (BadLayout(ndim, shape, elsize) || elsize > FFK_KERNELS_MAX_FILL_ELSIZE || value == nullptr ||
      (ndim > 0 && strides == nullptr)) {
    return cudaErrorInvalidValue;
  }
  Plan p;
  const int64_t* const ops[1] = {strides};
  const uintptr_t addr[1] = {reinterpret_cast<uintptr_t>(dst)};
  ffk_kernels::PlanLayout(&p, 1, ndim, shape, ops, elsize, addr);
  if (p.kind == ffk_kernels::kEmpty) return cudaSuccess;
  const unsigned char* bytes = static_cast<const unsigned char*>(value);
  bool same_bytes = true;
  for (size_t i = 1; i < elsize; ++i) same_bytes = same_bytes && bytes[i] == bytes[0];
  if (p.kind == ffk_kernels::kDense && same_bytes) {
    void* first = At<unsigned char>(dst, p.base[0] * static_cast<int64_t>(p.word));
    return cudaMemsetAsync(first, bytes[0], static_cast<size_t>(p.count) * p.word, stream);
  }
  if (ffk_kernels::FillDenseFits(p)) return LaunchFillDense(dst, p, bytes, stream);
  if (p.kind == ffk_kernels::kRows) {
    FFK_BY_SIZE(p.word, LaunchRowsFill, dst, p, bytes, stream)
  }
  FFK_BY_SIZE(p.word, LaunchGeneralFill, dst, p, bytes, stream)
}

extern "C" cudaError_t ffk_kernels__copy(void* dst, const int64_t* dst_strides, const void* src,
                                         const int64_t* src_strides, int32_t ndim, const int64_t* shape,
                                         size_t elsize, cudaStream_t stream) {
  if (BadLayout(ndim, shape, elsize) || (ndim > 0 && (dst_strides == nullptr || src_strides == nullptr))) {
    return cudaErrorInvalidValue;
  }
  Plan p;
  const int64_t* const ops[2] = {dst_strides, src_strides};
  const uintptr_t addr[2] = {reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src)};
  ffk_kernels::PlanLayout(&p, 2, ndim, shape, ops, elsize, addr);
  switch (p.kind) {
    case ffk_kernels::kEmpty:
      return cudaSuccess;
    case ffk_kernels::kDense: {
      size_t w = p.word;
      return cudaMemcpyAsync(At<unsigned char>(dst, p.base[0] * static_cast<int64_t>(w)),
                             At<unsigned char>(src, p.base[1] * static_cast<int64_t>(w)),
                             static_cast<size_t>(p.count) * w, cudaMemcpyDefault, stream);
    }
    case ffk_kernels::kTile:
      FFK_BY_SIZE(p.elsize, LaunchTile, dst, src, p, stream)
    case ffk_kernels::kRows:
      FFK_BY_SIZE(p.word, LaunchRows, dst, src, p, stream)
    default:
      FFK_BY_SIZE(p.word, LaunchGeneralCopy, dst, src, p, stream)
  }
}
