// tensor/cuda/layout.h - the planning and the per-thread address arithmetic of the CUDA
// kernels (kernels.cu).
//
// Plain C++17 that nvcc compiles for the device and any C++ compiler for the host, so CPU
// tests (tests/tensor/cuda_layout_test.cc) check it in every build, GPU or not: they run
// the planner on random layouts and emulate every kernel body below over every (block,
// thread) of its grid, with an element type that counts its writes.
//
// Planning (Plan, on the host, before a launch). A layout shared by one operand (fill) or
// two (copy: 0 = dst, 1 = src) is normalised at element level: dimensions of size 1 go
// (and, for fill, dimensions of stride 0, which rewrite the same element); a dimension
// whose dst stride is negative is reversed in every operand (the first visited element
// moves, recorded in `base`); the dimensions are sorted by dst stride, largest first, so
// the walk follows dst's memory order and stores coalesce (a transposed view is filled
// as the dense block it is); and a dimension merges into the one outside it when, in
// every operand, one outer step is a full run of the inner one. Then an element is moved
// as `per` words of `word` bytes (the widest of 16, 8, 4, 2, 1 that the element size and
// every start address are multiples of), which appends a dimension of `per` words when
// per > 1. Reordering and reversing change the order in which elements are visited,
// never which dst element receives which src element. The result is classified:
//   kDense    one run of words in every operand: cudaMemcpy / cudaMemset or the 16-byte fill;
//   kTile     (copy) dst is contiguous along its innermost dimension i, src along another
//             dimension j: a shared-memory tile transpose over (i, j), batched over the rest;
//   kRows     rows of at least kMinRow words (for fill: of whole elements): a block moves
//             (or fills) a chunk of one row, the row's offsets computed once per chunk,
//             with 16-byte vectors where aligned;
//   kGeneral  anything else: a grid-stride loop turning a linear index into offsets
//             (in 32-bit arithmetic where Fits32).
//
// Invariants the kernel bodies rely on (and the tests check): a vector access happens only
// where the plan found its operand's start address and every stride but the contiguous
// one to be multiples of the vector, so every vector is aligned; every shared-memory
// element a tile's store phase reads was written by its load phase (edge tiles read
// nothing outside the tensor); every dst word of the layout is written exactly once.
#ifndef FFIKIT_TENSOR_CUDA_LAYOUT_H
#define FFIKIT_TENSOR_CUDA_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define FFK_LAYOUT_FN __host__ __device__ __forceinline__
#else
#define FFK_LAYOUT_FN inline
#endif

#ifdef __CUDA_ARCH__
#define FFK_UNROLL _Pragma("unroll")
#define FFK_LAYOUT_ASSERT(cond) ((void)0)
#else
#include <cassert>
#define FFK_UNROLL
// Host emulation only: a vector access must be aligned (the device would fault).
#define FFK_LAYOUT_ASSERT(cond) assert(cond)
#endif

namespace ffk_kernels {

// The tensor limit (FFK_TENSOR_MAX_NDIM) plus the dimension of words an element may add.
constexpr int kMaxTensorDims = 32;
constexpr int kMaxDims = kMaxTensorDims + 1;

// Launch geometry, shared by kernels.cu and the host emulation.
constexpr int kThreads = 256;        // threads per block (tile blocks are 32 x kTileRowsPerPass)
constexpr int kTileRowsPerPass = 8;  // a tile block's rows of threads
constexpr int kUnroll = 4;           // vectors a thread moves per row chunk (all loads, then all stores)
constexpr int64_t kMinTileDim = 16;  // both transposed dimensions at least this long for a tile
constexpr int64_t kMinRow = 512;     // rows at least this long (words) for the row kernel
constexpr int kMaxPer = 16;          // the most words an element is moved as (16 one-byte words)
constexpr int kSmallDims = 4;        // general kernels unroll their index arithmetic over 4 dims when that is enough

// A layout in words: shape, and strides for up to two operands (0 = dst, 1 = src).
// Passed to kernels by value. A plan's layout has ndim >= 1 and every shape[d] >= 1; the
// batch / outer layouts of the tile and row kernels may have ndim 0 (one batch, one row).
struct Layout {
  int32_t ndim;
  int64_t shape[kMaxDims];
  int64_t stride[2][kMaxDims];
};

enum Kind : int32_t { kEmpty, kDense, kTile, kRows, kGeneral };

struct Plan {
  Kind kind;
  int32_t ops;       // 1 (fill) or 2 (copy)
  size_t elsize;     // bytes per element
  size_t word;       // bytes per word moved
  int64_t per;       // words per element
  int64_t count;     // words visited per operand (0 for kEmpty)
  int64_t base[2];   // word offset, from each operand's address, of the first word visited
  Layout l;          // in words, dims in dst memory order, merged
  int32_t tile_j;    // kTile: the dimension along which src is contiguous (i is l.ndim - 1)
  int32_t vec;       // kTile / kRows: elements (tile) or words (rows) per vector access
  bool vec_op[2];    // kTile / kRows: operand op uses vector accesses (aligned)
};

// The widest word (16, 8, 4, 2 or 1 bytes) that `elsize` and every address in `addresses`
// (OR-ed together) are multiples of.
inline size_t WordSize(size_t elsize, uintptr_t addresses) {
  uintptr_t all = addresses | static_cast<uintptr_t>(elsize);
  for (size_t w = 16; w > 1; w /= 2) {
    if (all % w == 0) return w;
  }
  return 1;
}

// Merges each dimension into the kept one outside it when every operand allows.
inline void MergeDims(Layout* l, int ops) {
  int m = 0;
  for (int i = 0; i < l->ndim; ++i) {
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
  l->ndim = m;
}

// The element-level normalisation (see the file comment): drops, reverses, sorts and
// merges. Returns the number of elements of the original shape (0 when it has a zero).
inline int64_t Normalize(Layout* l, int64_t base[2], int ops, int32_t ndim, const int64_t* shape,
                         const int64_t* const* strides) {
  int64_t n = 1;
  int k = 0;
  base[0] = base[1] = 0;
  l->ndim = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return 0;
    n *= shape[i];
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 1 || (ops == 1 && strides[0][i] == 0)) continue;
    l->shape[k] = shape[i];
    bool flip = strides[0][i] < 0;
    for (int op = 0; op < ops; ++op) {
      int64_t s = strides[op][i];
      if (flip) base[op] += (shape[i] - 1) * s;
      l->stride[op][k] = flip ? -s : s;
    }
    ++k;
  }
  // Stable insertion sort by dst stride, largest first (at most 32 dimensions).
  for (int i = 1; i < k; ++i) {
    int64_t sh = l->shape[i], st[2] = {l->stride[0][i], ops > 1 ? l->stride[1][i] : 0};
    int j = i;
    for (; j > 0 && l->stride[0][j - 1] < st[0]; --j) {
      l->shape[j] = l->shape[j - 1];
      for (int op = 0; op < ops; ++op) l->stride[op][j] = l->stride[op][j - 1];
    }
    l->shape[j] = sh;
    for (int op = 0; op < ops; ++op) l->stride[op][j] = st[op];
  }
  l->ndim = k;
  MergeDims(l, ops);
  return n;
}

inline bool IsPow2Upto16(size_t x) { return x == 1 || x == 2 || x == 4 || x == 8 || x == 16; }

// Operand op's vectors of `v` units (of `unit` bytes) are all aligned: its first unit's
// address is a multiple of v * unit and every stride but dimension `contiguous` is a
// multiple of v (the kernels start vectors at multiples of v along `contiguous`).
inline bool VectorsAligned(const Plan& p, int op, uintptr_t first, int contiguous, int64_t v, size_t unit) {
  if (v <= 1 || first % (static_cast<uintptr_t>(v) * unit) != 0) return false;
  for (int d = 0; d < p.l.ndim; ++d) {
    if (d != contiguous && p.l.stride[op][d] % v != 0) return false;
  }
  return true;
}

// The elements per vector of a tile (so that a thread moves 4+ bytes per access).
inline int32_t TileVec(size_t elsize) { return elsize >= 4 ? 1 : static_cast<int32_t>(4 / elsize); }

// The words per vector of the row kernel for rows of n words: 16 bytes, except that
// short rows keep one word per access, so that a chunk (kThreads * vec * kUnroll words)
// is not mostly past the row's end.
inline int32_t RowsVec(const Plan& p, int64_t n) {
  int32_t v = p.word < 16 ? static_cast<int32_t>(16 / p.word) : 1;
  return n < static_cast<int64_t>(kThreads) * v * kUnroll / 2 ? 1 : v;
}

// Plans a fill (ops = 1: strides[0], addresses[0]) or a copy (ops = 2) of `ndim`
// dimensions (ndim <= kMaxTensorDims; strides in elements, any sign) of `elsize`-byte
// elements. `addresses` are the operands' data pointers (only their alignment matters).
inline void PlanLayout(Plan* p, int ops, int32_t ndim, const int64_t* shape, const int64_t* const* strides,
                       size_t elsize, const uintptr_t* addresses) {
  p->ops = ops;
  p->elsize = elsize;
  p->tile_j = -1;
  p->vec = 1;
  p->vec_op[0] = p->vec_op[1] = false;
  int64_t n = Normalize(&p->l, p->base, ops, ndim, shape, strides);
  uintptr_t first[2] = {0, 0}, all = 0;
  for (int op = 0; op < ops; ++op) {
    // Unsigned arithmetic wraps like the device's pointer arithmetic; only alignment is read.
    first[op] = addresses[op] + static_cast<uintptr_t>(p->base[op]) * elsize;
    all |= first[op];
  }
  p->word = WordSize(elsize, all);
  p->per = static_cast<int64_t>(elsize / p->word);
  if (n == 0) {
    p->kind = kEmpty;
    p->count = 0;
    return;
  }
  Layout* l = &p->l;
  for (int op = 0; op < ops; ++op) {
    p->base[op] *= p->per;
    for (int d = 0; d < l->ndim; ++d) l->stride[op][d] *= p->per;
  }
  if (p->per > 1) {
    l->shape[l->ndim] = p->per;
    for (int op = 0; op < ops; ++op) l->stride[op][l->ndim] = 1;
    ++l->ndim;
    MergeDims(l, ops);
  }
  if (l->ndim == 0) {  // a single element of a single word
    l->ndim = 1;
    l->shape[0] = 1;
    l->stride[0][0] = l->stride[1][0] = 0;
  }
  p->count = 1;
  for (int d = 0; d < l->ndim; ++d) p->count *= l->shape[d];
  int last = l->ndim - 1;
  bool dense = l->ndim == 1 && (l->shape[0] == 1 || (l->stride[0][0] == 1 && (ops == 1 || l->stride[1][0] == 1)));
  if (dense) {
    p->kind = kDense;
    return;
  }
  p->kind = kGeneral;
  if (ops == 1) {
    // A strided fill with long rows of whole elements: the row kernel's stores.
    if (p->per == 1 && l->shape[last] >= kMinRow) {
      int32_t v = RowsVec(*p, l->shape[last]);
      p->kind = kRows;
      p->vec_op[0] = l->stride[0][last] == 1 && VectorsAligned(*p, 0, first[0], last, v, p->word);
      p->vec = p->vec_op[0] ? v : 1;
    }
    return;
  }
  if (p->per == 1 && IsPow2Upto16(elsize) && l->ndim >= 2 && l->stride[0][last] == 1 && l->stride[1][last] != 1 &&
      l->shape[last] >= kMinTileDim) {
    for (int d = last - 1; d >= 0; --d) {
      if (l->stride[1][d] == 1 && l->shape[d] >= kMinTileDim) {
        p->kind = kTile;
        p->tile_j = d;
        p->vec = TileVec(elsize);
        p->vec_op[0] = VectorsAligned(*p, 0, first[0], last, p->vec, elsize);
        p->vec_op[1] = VectorsAligned(*p, 1, first[1], d, p->vec, elsize);
        return;
      }
    }
  }
  if (l->shape[last] >= kMinRow) {
    p->kind = kRows;
    int32_t v = RowsVec(*p, l->shape[last]);
    for (int op = 0; op < 2; ++op) {
      p->vec_op[op] = l->stride[op][last] == 1 && VectorsAligned(*p, op, first[op], last, v, p->word);
    }
    p->vec = p->vec_op[0] || p->vec_op[1] ? v : 1;
  }
}

// ---- Per-thread arithmetic, shared by the kernels and their host emulation -----------------

// `v` consecutive units moved as one aligned access.
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// One aligned vector access. On the device a vector of 4, 8 or 16 bytes is stored as one
// integer (or Word16) of that size: nvcc splits a vector assembled element by element
// (the tile's column gather) into per-element stores otherwise.
template <class T, int V>
FFK_LAYOUT_FN Vec<T, V> LoadVec(const T* p) {
  FFK_LAYOUT_ASSERT(reinterpret_cast<uintptr_t>(p) % alignof(Vec<T, V>) == 0);
  return *reinterpret_cast<const Vec<T, V>*>(p);
}

struct alignas(16) Word16 {
  uint64_t lo, hi;
};

template <class T, int V>
FFK_LAYOUT_FN void StoreVec(T* p, const Vec<T, V>& w) {
  FFK_LAYOUT_ASSERT(reinterpret_cast<uintptr_t>(p) % alignof(Vec<T, V>) == 0);
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(Vec<T, V>) == 4) {
    uint32_t u;
    memcpy(&u, &w, 4);
    *reinterpret_cast<uint32_t*>(p) = u;
  } else if constexpr (sizeof(Vec<T, V>) == 8) {
    unsigned long long u;
    memcpy(&u, &w, 8);
    *reinterpret_cast<unsigned long long*>(p) = u;
  } else if constexpr (sizeof(Vec<T, V>) == 16) {
    Word16 u;
    memcpy(&u, &w, 16);
    *reinterpret_cast<Word16*>(p) = u;
  } else {
    *reinterpret_cast<Vec<T, V>*>(p) = w;
  }
#else
  *reinterpret_cast<Vec<T, V>*>(p) = w;
#endif
}

// The offsets of linear index `i` (0 <= i < the product of l's shape; l.ndim >= 1) in the
// first kOps operands, for a layout of at most kDims dimensions. The fixed-bound unrolled
// loop keeps the layout's arrays in parameter space on the device; the outermost
// dimension needs no division, since what is left of the index is already below its size.
// I is the index type: int64_t, or int32_t where Fits32 says every index and offset fits
// (a 32-bit division is a fraction of the cost of a 64-bit one on the device).
template <int kOps, int kDims, class I = int64_t>
FFK_LAYOUT_FN void Offsets(const Layout& l, I i, I* off) {
  for (int op = 0; op < kOps; ++op) off[op] = 0;
  FFK_UNROLL
  for (int d = kDims - 1; d > 0; --d) {
    if (d < l.ndim) {
      I n = static_cast<I>(l.shape[d]);
      I q = i / n;
      I idx = i - q * n;
      i = q;
      for (int op = 0; op < kOps; ++op) off[op] += idx * static_cast<I>(l.stride[op][d]);
    }
  }
  for (int op = 0; op < kOps; ++op) off[op] += i * static_cast<I>(l.stride[op][0]);
}

// True when the plan's word count and every partial offset sum of each operand are below
// 2^31, so that the general kernels may compute in int32_t.
inline bool Fits32(const Plan& p) {
  const int64_t kMax = 0x7fffffff;
  if (p.count > kMax) return false;
  for (int op = 0; op < p.ops; ++op) {
    int64_t reach = 0;
    for (int d = 0; d < p.l.ndim; ++d) {
      int64_t s = p.l.stride[op][d] < 0 ? -p.l.stride[op][d] : p.l.stride[op][d];
      if (s > kMax || (p.l.shape[d] - 1) > kMax / (s > 0 ? s : 1)) return false;
      reach += (p.l.shape[d] - 1) * s;
      if (reach > kMax) return false;
    }
  }
  return true;
}

// As Offsets, for an outer layout that may have no dimensions (then i is 0 and so are the offsets).
FFK_LAYOUT_FN void OuterOffsets(const Layout& l, int64_t i, int64_t* off) {
  off[0] = off[1] = 0;
  FFK_UNROLL
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < l.ndim) {
      int64_t q = i / l.shape[d];
      int64_t idx = i - q * l.shape[d];
      i = q;
      off[0] += idx * l.stride[0][d];
      off[1] += idx * l.stride[1][d];
    }
  }
}

// Copies `src - dims {skip0, skip1}` of l into out (the batch / outer layout).
inline void RestOf(const Layout& l, int skip0, int skip1, Layout* out) {
  int k = 0;
  for (int d = 0; d < l.ndim; ++d) {
    if (d == skip0 || d == skip1) continue;
    out->shape[k] = l.shape[d];
    out->stride[0][k] = l.stride[0][d];
    out->stride[1][k] = l.stride[1][d];
    ++k;
  }
  out->ndim = k;
}

// -- kTile: a (32 V) x (32 V) tile of elements through shared memory, 32 x 8 threads. --------
// Load: each warp reads rows i of the tile along j (src's contiguous dimension), V
// elements per thread, into smem[i][j]. Store: each warp writes columns j along i (dst's
// contiguous dimension), gathering smem[i .. i + V - 1][j]. The row pitch is 32 V + V
// elements (33 four-byte words for 1-, 2- and 4-byte elements), so a warp's column reads
// fall in distinct banks for 4-byte elements and at most 4-way for 1-byte ones.

template <int V>
struct TileShape {
  static constexpr int kEdge = 32 * V;       // elements along each side
  static constexpr int kPitch = 32 * V + V;  // elements per shared-memory row
};

struct TileArgs {
  int64_t ni, nj;            // the tile dims' sizes: i (dst contiguous), j (src contiguous)
  int64_t src_si, dst_sj;    // src's stride along i, dst's along j (the other two are 1)
  int64_t tiles_i, tiles_j;  // tiles along i and j
  int64_t tiles;             // tiles_i * tiles_j * batches
  Layout batch;              // the other dimensions (ndim may be 0)
  bool vec_dst, vec_src;
};

inline void MakeTileArgs(const Plan& p, TileArgs* a) {
  const Layout& l = p.l;
  int i = l.ndim - 1, j = p.tile_j;
  int64_t edge = 32 * static_cast<int64_t>(p.vec), batches = 1;
  a->ni = l.shape[i];
  a->nj = l.shape[j];
  a->src_si = l.stride[1][i];
  a->dst_sj = l.stride[0][j];
  a->tiles_i = (a->ni + edge - 1) / edge;
  a->tiles_j = (a->nj + edge - 1) / edge;
  RestOf(l, i, j, &a->batch);
  for (int d = 0; d < a->batch.ndim; ++d) batches *= a->batch.shape[d];
  a->tiles = a->tiles_i * a->tiles_j * batches;
  a->vec_dst = p.vec_op[0];
  a->vec_src = p.vec_op[1];
}

// Tile `tile`'s origin (i0, j0) and its batch's offsets.
FFK_LAYOUT_FN void TileOrigin(const TileArgs& a, int64_t tile, int64_t edge, int64_t* i0, int64_t* j0, int64_t* off) {
  int64_t rest = tile / a.tiles_j;
  *j0 = (tile - rest * a.tiles_j) * edge;
  int64_t b = rest / a.tiles_i;
  *i0 = (rest - b * a.tiles_i) * edge;
  OuterOffsets(a.batch, b, off);
}

// The load phase of thread (tx, ty) (tx < 32, ty < kTileRowsPerPass) for tile `tile`:
// src (the first element's address) into smem (TileEdge * TilePitch elements).
template <class T, int V>
FFK_LAYOUT_FN void TileLoad(const TileArgs& a, const T* src, T* smem, int64_t tile, int tx, int ty) {
  constexpr int kT = TileShape<V>::kEdge, kP = TileShape<V>::kPitch;
  int64_t i0, j0, off[2];
  TileOrigin(a, tile, kT, &i0, &j0, off);
  int64_t j = j0 + static_cast<int64_t>(tx) * V;
  bool vec = a.vec_src && j + V <= a.nj;
  const T* s = src + off[1] + j;
  FFK_UNROLL
  for (int rr = 0; rr < kT / kTileRowsPerPass; ++rr) {
    int r = ty + rr * kTileRowsPerPass;
    int64_t i = i0 + r;
    if (i < a.ni) {
      const T* p = s + i * a.src_si;
      T* q = smem + r * kP + tx * V;
      if (vec) {
        StoreVec<T, V>(q, LoadVec<T, V>(p));
      } else {
        for (int k = 0; k < V; ++k) {
          if (j + k < a.nj) q[k] = p[k];
        }
      }
    }
  }
}

// The store phase of thread (tx, ty) for tile `tile`: smem into dst (the first element's address).
template <class T, int V>
FFK_LAYOUT_FN void TileStore(const TileArgs& a, T* dst, const T* smem, int64_t tile, int tx, int ty) {
  constexpr int kT = TileShape<V>::kEdge, kP = TileShape<V>::kPitch;
  int64_t i0, j0, off[2];
  TileOrigin(a, tile, kT, &i0, &j0, off);
  int64_t i = i0 + static_cast<int64_t>(tx) * V;
  bool vec = a.vec_dst && i + V <= a.ni;
  T* d = dst + off[0] + i;
  const T* q0 = smem + tx * V * kP;
  FFK_UNROLL
  for (int cc = 0; cc < kT / kTileRowsPerPass; ++cc) {
    int c = ty + cc * kTileRowsPerPass;
    int64_t j = j0 + c;
    if (j < a.nj) {
      T* p = d + j * a.dst_sj;
      const T* q = q0 + c;
      if (vec) {
        Vec<T, V> w;
        for (int k = 0; k < V; ++k) w.v[k] = q[k * kP];
        StoreVec<T, V>(p, w);
      } else {
        for (int k = 0; k < V; ++k) {
          if (i + k < a.ni) p[k] = q[k * kP];
        }
      }
    }
  }
}

// -- kRows: a chunk of kThreads * V * kUnroll words of one row per block. --------------------
// Thread t moves the V-word vectors t, t + kThreads, ... of the chunk, so a warp's accesses
// to a side with stride 1 are consecutive; all its loads are issued before its stores.

struct RowsArgs {
  Layout outer;           // the dimensions outside the row (ndim may be 0)
  int64_t n;              // row length (words)
  int64_t sd, ss;         // the row's strides (words) in dst and src
  int64_t chunk;          // words per chunk: kThreads * vec * kUnroll
  int64_t chunks_per_row, chunks;
  bool vec_dst, vec_src;  // the side has stride 1 and aligned vectors
};

inline void MakeRowsArgs(const Plan& p, RowsArgs* a) {
  const Layout& l = p.l;
  int last = l.ndim - 1;
  int64_t rows = 1;
  a->n = l.shape[last];
  a->sd = l.stride[0][last];
  a->ss = p.ops == 2 ? l.stride[1][last] : 0;
  a->chunk = static_cast<int64_t>(kThreads) * p.vec * kUnroll;
  a->chunks_per_row = (a->n + a->chunk - 1) / a->chunk;
  RestOf(l, last, -1, &a->outer);
  if (p.ops == 1) {
    for (int d = 0; d < a->outer.ndim; ++d) a->outer.stride[1][d] = 0;  // no source
  }
  for (int d = 0; d < a->outer.ndim; ++d) rows *= a->outer.shape[d];
  a->chunks = a->chunks_per_row * rows;
  a->vec_dst = p.vec_op[0];
  a->vec_src = p.vec_op[1];
}

// Thread `tid`'s share of chunk `c`; dst and src point at each operand's first word.
template <class T, int V>
FFK_LAYOUT_FN void RowsChunk(const RowsArgs& a, T* dst, const T* src, int64_t c, int tid) {
  int64_t row = c / a.chunks_per_row, off[2];
  OuterOffsets(a.outer, row, off);
  T* d = dst + off[0];
  const T* s = src + off[1];
  int64_t e0 = (c - row * a.chunks_per_row) * a.chunk + static_cast<int64_t>(tid) * V;
  Vec<T, V> w[kUnroll];
  FFK_UNROLL
  for (int u = 0; u < kUnroll; ++u) {
    int64_t e = e0 + static_cast<int64_t>(u) * kThreads * V;
    if (a.vec_src && e + V <= a.n) {
      w[u] = LoadVec<T, V>(s + e);
    } else {
      for (int k = 0; k < V; ++k) {
        if (e + k < a.n) w[u].v[k] = s[(e + k) * a.ss];
      }
    }
  }
  FFK_UNROLL
  for (int u = 0; u < kUnroll; ++u) {
    int64_t e = e0 + static_cast<int64_t>(u) * kThreads * V;
    if (a.vec_dst && e + V <= a.n) {
      StoreVec<T, V>(d + e, w[u]);
    } else {
      for (int k = 0; k < V; ++k) {
        if (e + k < a.n) d[(e + k) * a.sd] = w[u].v[k];
      }
    }
  }
}

// Thread `tid`'s share of chunk `c` of a fill (plans with per == 1: every word is `value`).
template <class T, int V>
FFK_LAYOUT_FN void RowsFillChunk(const RowsArgs& a, T* dst, const T& value, int64_t c, int tid) {
  int64_t row = c / a.chunks_per_row, off[2];
  OuterOffsets(a.outer, row, off);
  T* d = dst + off[0];
  int64_t e0 = (c - row * a.chunks_per_row) * a.chunk + static_cast<int64_t>(tid) * V;
  Vec<T, V> w;
  for (int k = 0; k < V; ++k) w.v[k] = value;
  FFK_UNROLL
  for (int u = 0; u < kUnroll; ++u) {
    int64_t e = e0 + static_cast<int64_t>(u) * kThreads * V;
    if (a.vec_dst && e + V <= a.n) {
      StoreVec<T, V>(d + e, w);
    } else {
      for (int k = 0; k < V; ++k) {
        if (e + k < a.n) d[(e + k) * a.sd] = value;
      }
    }
  }
}

// -- kGeneral: one word per index of a grid-stride loop. -------------------------------------

template <class T, int kDims, class I = int64_t>
FFK_LAYOUT_FN void CopyAt(const Layout& l, T* dst, const T* src, I i) {
  I off[2];
  Offsets<2, kDims, I>(l, i, off);
  dst[off[0]] = src[off[1]];
}

// The bytes of one element as `period` words (period = per <= kMaxPer).
template <class T>
struct Pattern {
  T word[kMaxPer];
  int32_t period;
};

// Every element starts at a multiple of `period` words from dst (the plan's first word),
// so a word's offset modulo period is its place in the element. After Normalize fill
// offsets are never negative; the sign fix keeps the rule true for any layout.
template <class T, int kDims, class I = int64_t>
FFK_LAYOUT_FN void FillAt(const Layout& l, T* dst, const Pattern<T>& p, I i) {
  I off[1];
  Offsets<1, kDims, I>(l, i, off);
  if (p.period == 1) {
    dst[off[0]] = p.word[0];
    return;
  }
  I w = off[0] % static_cast<I>(p.period);
  w = w < 0 ? w + p.period : w;
  // A select, not p.word[w]: a dynamic index would copy the pattern to local memory.
  T v = p.word[0];
  FFK_UNROLL
  for (int k = 1; k < kMaxPer; ++k) {
    if (k == w) v = p.word[k];
  }
  dst[off[0]] = v;
}

// -- kDense fill with a pattern that is not one repeated byte: 16-byte stores. ---------------
// The element size divides 16 and dst is element-aligned, so the first 16-byte-aligned
// address is a whole number of elements in (head bytes), and every 16-byte word there
// holds the same bytes. The head and the tail (under 16 bytes each) are written bytewise.

struct FillDenseArgs {
  int64_t nbytes, head, nvec;  // bytes in all, before the first aligned word, aligned words
  Word16 vec;                  // the element repeated over 16 bytes (little-endian, as host and device are)
};

// Byte b (< 16) of the repeated element, by shifts (an array index would go through local memory).
FFK_LAYOUT_FN unsigned char PatternByte(const Word16& v, int64_t b) {
  return static_cast<unsigned char>((b < 8 ? v.lo >> (8 * b) : v.hi >> (8 * (b - 8))) & 0xff);
}

inline bool FillDenseFits(const Plan& p) { return p.kind == kDense && p.per == 1 && 16 % p.elsize == 0; }

// `first` is the address of the plan's first byte; `elem` the element's bytes.
inline void MakeFillDenseArgs(const Plan& p, uintptr_t first, const unsigned char* elem, FillDenseArgs* a) {
  a->nbytes = p.count * static_cast<int64_t>(p.word);
  int64_t head = static_cast<int64_t>((16 - first % 16) % 16);
  a->head = head < a->nbytes ? head : a->nbytes;
  a->nvec = (a->nbytes - a->head) / 16;
  unsigned char* v = reinterpret_cast<unsigned char*>(&a->vec);
  for (int b = 0; b < 16; ++b) v[b] = elem[static_cast<size_t>(b) % p.elsize];
}

// Thread `gtid` of `nthreads` (nthreads >= 16).
FFK_LAYOUT_FN void FillDenseThread(const FillDenseArgs& a, unsigned char* dst, int64_t gtid, int64_t nthreads) {
  Word16* v = reinterpret_cast<Word16*>(dst + a.head);
  FFK_LAYOUT_ASSERT(reinterpret_cast<uintptr_t>(v) % 16 == 0 || a.nvec == 0);
  for (int64_t k = gtid; k < a.nvec; k += nthreads) v[k] = a.vec;
  int64_t tail = a.head + a.nvec * 16;
  if (gtid < a.head) dst[gtid] = PatternByte(a.vec, gtid);
  if (gtid < a.nbytes - tail) dst[tail + gtid] = PatternByte(a.vec, gtid);
}

}  // namespace ffk_kernels

#endif  // FFIKIT_TENSOR_CUDA_LAYOUT_H
