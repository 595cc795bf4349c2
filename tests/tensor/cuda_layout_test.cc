// tensor/cuda/layout.h: the planning and the per-thread arithmetic of the CUDA kernels,
// checked on the CPU in every build (no GPU needed). Random layouts (gapped, permuted,
// reversed, broadcast, size-1 and 0-d, odd sizes, sizes off the tile grid; elements of
// 1, 2, 4, 8, 16 and odd sizes; misaligned pointers) are planned, and the kernel bodies
// the plan selects are emulated over every (block, thread) of their grids, on an element
// type that records its value and counts its writes: every dst word must be written
// exactly once with the right src word, nothing else written, every vector access aligned
// (an assert in layout.h, and UBSan under --config=asan), and no tile may read shared
// memory its load phase did not write.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tensor/cuda/layout.h"
#include "tests/support/ffk_test.h"
#include "tests/tensor/kernel_cases.h"

namespace {

using ffk_kernels::Kind;
using ffk_kernels::Layout;
using ffk_kernels::Plan;
using ffk_kernel_cases::Case;
using ffk_kernel_cases::Describe;
using ffk_kernel_cases::Extent;
using ffk_kernel_cases::ForEachElement;
using ffk_kernel_cases::kSizes;
using ffk_kernel_cases::RandomStrides;

class CudaLayout : public ffk::test::Test {};

// Reads of poisoned words: memory outside the operands' views, which no kernel may read.
int g_poison_reads = 0;

// An emulated word: the arena index it was copied from (src words hold their own index),
// how many times it was assigned, and whether reading it is out of bounds.
struct Tag {
  int64_t v = -1;
  int32_t writes = 0;
  int32_t poison = 0;
  Tag() = default;
  Tag(const Tag& o) : v(o.v) { g_poison_reads += o.poison; }
  Tag& operator=(const Tag& o) {
    g_poison_reads += o.poison;
    v = o.v;
    ++writes;
    return *this;
  }
};
static_assert(sizeof(Tag) == 16, "vectors of Tags must have power-of-two alignment");

// `n` Tags whose element k is aligned like word k of memory starting at fake address
// `first` (a multiple of `word`), for vectors of up to 16 words.
struct Arena {
  std::vector<Tag> buf;
  Tag* at;
  Arena(size_t n, uintptr_t first, size_t word) : buf(n + 64) {
    size_t k = 0;
    while (reinterpret_cast<uintptr_t>(&buf[k]) % 256 != 0) ++k;
    at = &buf[k + (first / word) % 16];
  }
};

Plan MakePlan(const Case& c, int ops) {
  Plan p;
  const int64_t* strides[2] = {c.strides[0].data(), c.strides[1].data()};
  ffk_kernels::PlanLayout(&p, ops, static_cast<int32_t>(c.shape.size()), c.shape.data(), strides, c.elsize, c.addr);
  return p;
}

// ---- Emulated launches (the loops of kernels.cu, over every block and thread) ---------------

template <int V>
void EmulateTile(const Plan& p, Tag* dst, const Tag* src) {
  using Shape = ffk_kernels::TileShape<V>;
  ffk_kernels::TileArgs a;
  ffk_kernels::MakeTileArgs(p, &a);
  Arena smem(Shape::kEdge * Shape::kPitch, 0, 1);
  for (int64_t t = 0; t < a.tiles; ++t) {
    for (int k = 0; k < Shape::kEdge * Shape::kPitch; ++k) smem.at[k].v = -7;  // what a stale tile would leave
    for (int ty = 0; ty < ffk_kernels::kTileRowsPerPass; ++ty) {
      for (int tx = 0; tx < 32; ++tx) ffk_kernels::TileLoad<Tag, V>(a, src, smem.at, t, tx, ty);
    }
    for (int ty = 0; ty < ffk_kernels::kTileRowsPerPass; ++ty) {
      for (int tx = 0; tx < 32; ++tx) ffk_kernels::TileStore<Tag, V>(a, dst, smem.at, t, tx, ty);
    }
  }
}

template <int V>
void EmulateRows(const Plan& p, Tag* dst, const Tag* src) {
  ffk_kernels::RowsArgs a;
  ffk_kernels::MakeRowsArgs(p, &a);
  for (int64_t c = 0; c < a.chunks; ++c) {
    for (int t = 0; t < ffk_kernels::kThreads; ++t) ffk_kernels::RowsChunk<Tag, V>(a, dst, src, c, t);
  }
}

void EmulateCopy(const Plan& p, Tag* dst, const Tag* src) {
  switch (p.kind) {
    case ffk_kernels::kEmpty:
      return;
    case ffk_kernels::kDense:  // cudaMemcpyAsync of count words
      for (int64_t k = 0; k < p.count; ++k) dst[k] = src[k];
      return;
    case ffk_kernels::kTile:
      switch (p.vec) {
        case 4: return EmulateTile<4>(p, dst, src);
        case 2: return EmulateTile<2>(p, dst, src);
        default: return EmulateTile<1>(p, dst, src);
      }
    case ffk_kernels::kRows:
      switch (p.vec) {
        case 16: return EmulateRows<16>(p, dst, src);
        case 8: return EmulateRows<8>(p, dst, src);
        case 4: return EmulateRows<4>(p, dst, src);
        case 2: return EmulateRows<2>(p, dst, src);
        default: return EmulateRows<1>(p, dst, src);
      }
    default:
      for (int64_t i = 0; i < p.count; ++i) {
        if (p.l.ndim > ffk_kernels::kSmallDims) {
          ffk_kernels::CopyAt<Tag, ffk_kernels::kMaxDims, int64_t>(p.l, dst, src, i);
        } else if (ffk_kernels::Fits32(p)) {
          ffk_kernels::CopyAt<Tag, ffk_kernels::kSmallDims, int32_t>(p.l, dst, src, static_cast<int32_t>(i));
        } else {
          ffk_kernels::CopyAt<Tag, ffk_kernels::kSmallDims, int64_t>(p.l, dst, src, i);
        }
      }
  }
}

// Plans and emulates the copy of case c; fails the test on any wrong, missing or extra write.
// Returns the plan.
Plan CheckCopy(const Case& c) {
  Plan p = MakePlan(c, 2);
  int64_t per = p.per, lo[2], hi[2], origin[2];
  size_t word = p.word;
  EXPECT_EQ(ffk_kernels::WordSize(c.elsize, c.addr[0] | c.addr[1]), word);
  std::vector<Arena> arenas;
  for (int op = 0; op < 2; ++op) {
    Extent(c, op, &lo[op], &hi[op]);
    origin[op] = 16 + (-lo[op]) * per;
    size_t n = static_cast<size_t>(origin[op] + (hi[op] + 1) * per + 16);
    arenas.emplace_back(n, c.addr[op] - static_cast<uintptr_t>(origin[op]) * word, word);
    for (size_t k = 0; k < n; ++k) {
      arenas[op].at[k].v = op == 1 ? static_cast<int64_t>(k) : -1;
      arenas[op].at[k].poison = 1;
    }
  }
  Tag* dst = arenas[0].at;
  Tag* src = arenas[1].at;
  ForEachElement(c, [&](int64_t od, int64_t os) {
    for (int64_t j = 0; j < per; ++j) dst[origin[0] + od * per + j].poison = src[origin[1] + os * per + j].poison = 0;
  });
  g_poison_reads = 0;
  EmulateCopy(p, dst + origin[0] + p.base[0], src + origin[1] + p.base[1]);
  EXPECT_EQ(g_poison_reads, 0) << Describe(c) << " kind " << p.kind << " vec " << p.vec
                               << ": reads outside the source view";
  std::vector<bool> want(arenas[0].buf.size(), false);
  bool ok = true;
  ForEachElement(c, [&](int64_t od, int64_t os) {
    for (int64_t j = 0; j < per && ok; ++j) {
      int64_t d = origin[0] + od * per + j, s = origin[1] + os * per + j;
      want[static_cast<size_t>(d)] = true;
      if (dst[d].v != s || dst[d].writes != 1) {
        ADD_FAILURE() << Describe(c) << " kind " << p.kind << " vec " << p.vec << ": dst word " << d << " got "
                      << dst[d].v << " in " << dst[d].writes << " writes, want " << s;
        ok = false;
      }
    }
  });
  for (size_t k = 0; k + 64 < arenas[0].buf.size() && ok; ++k) {
    if (!want[k] && dst[k].writes != 0) {
      ADD_FAILURE() << Describe(c) << " kind " << p.kind << ": word " << k << " outside dst written";
      ok = false;
    }
  }
  return p;
}

TEST_F(CudaLayout, PlannedCopiesOfRandomLayoutsWriteEveryDstWordOnceFromItsSrcWord) {
  std::mt19937_64 rng(20261126);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int kinds[5] = {0, 0, 0, 0, 0}, vec_tiles = 0, scalar_tiles = 0, vec_rows = 0, split = 0;
  for (int iter = 0; iter < 2500; ++iter) {
    Case c;
    int shape_kind = static_cast<int>(iter % 4);
    int ndim = static_cast<int>(shape_kind == 1 ? pick(2, 3) : pick(0, 4));
    for (int d = 0; d < ndim; ++d) {
      int64_t n = shape_kind == 0 ? pick(1, 6)                       // small: general
                  : shape_kind == 1 ? pick(14, 70)                    // around the tile edges
                  : (d == ndim - 1 ? pick(500, 9000) : pick(1, 3));   // long rows
      if (shape_kind == 3) n = pick(1, 40);
      c.shape.push_back(iter % 97 == 0 && d == 0 ? 0 : n);
    }
    int64_t total = 1;
    for (int64_t n : c.shape) total *= n;
    if (total > 40000) continue;  // keeps the emulation quick
    RandomStrides(rng, &c, 0, pick(0, 2) == 0);
    if (shape_kind == 1 && pick(0, 1) == 0) {  // src transposed against dst
      c.strides[1] = c.strides[0];
      RandomStrides(rng, &c, 1, pick(0, 2) == 0, true);
    } else if (pick(0, 5) == 0) {  // arbitrary (overlapping, broadcast) source strides
      c.strides[1].clear();
      for (int d = 0; d < ndim; ++d) c.strides[1].push_back(pick(-3, 5));
    } else {
      RandomStrides(rng, &c, 1, pick(0, 2) == 0);
    }
    c.elsize = kSizes[pick(0, 7)];
    for (int op = 0; op < 2; ++op) c.addr[op] += pick(0, 2) == 0 ? static_cast<uintptr_t>(pick(1, 15)) : 0;
    Plan p = CheckCopy(c);
    if (HasFailure()) return;
    ++kinds[p.kind];
    vec_tiles += p.kind == ffk_kernels::kTile && (p.vec_op[0] || p.vec_op[1]);
    scalar_tiles += p.kind == ffk_kernels::kTile && p.vec > 1 && !(p.vec_op[0] && p.vec_op[1]);
    vec_rows += p.kind == ffk_kernels::kRows && p.vec > 1;
    split += p.per > 1;
  }
  std::printf("kinds: empty %d dense %d tile %d rows %d general %d; tiles vec %d scalar %d; rows vec %d; split %d\n",
              kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], vec_tiles, scalar_tiles, vec_rows, split);
  // The cases reach every path, vectorised and not.
  EXPECT_GT(kinds[ffk_kernels::kDense], 20);
  EXPECT_GT(kinds[ffk_kernels::kTile], 50);
  EXPECT_GT(kinds[ffk_kernels::kRows], 50);
  EXPECT_GT(kinds[ffk_kernels::kGeneral], 100);
  EXPECT_GT(kinds[ffk_kernels::kEmpty], 3);
  EXPECT_GT(vec_tiles, 10);
  EXPECT_GT(scalar_tiles, 5);
  EXPECT_GT(vec_rows, 10);
  EXPECT_GT(split, 50);
}

// The benchmark rows, scaled down: each takes the path meant for it.
TEST_F(CudaLayout, TheBenchmarkLayoutsTakeTheirFastPaths) {
  for (size_t elsize : {1, 2, 4, 8, 16}) {
    Case t;  // transposed source: dst (48, 80) contiguous, src its transpose's storage
    t.shape = {48, 80};
    t.strides[0] = {80, 1};
    t.strides[1] = {1, 48};
    t.elsize = elsize;
    Plan p = CheckCopy(t);
    EXPECT_EQ(p.kind, ffk_kernels::kTile) << elsize;
    EXPECT_EQ(p.tile_j, 0);
    EXPECT_EQ(p.vec, elsize >= 4 ? 1 : static_cast<int32_t>(4 / elsize));
    EXPECT_EQ(p.vec_op[0] && p.vec_op[1], elsize < 4) << "aligned rows use vectors";
    std::swap(t.strides[0], t.strides[1]);  // transposed destination
    p = CheckCopy(t);
    EXPECT_EQ(p.kind, ffk_kernels::kTile) << elsize;
    t.addr[1] += elsize;  // an odd element offset: no vectors on that side, still a tile
    p = CheckCopy(t);
    EXPECT_EQ(p.kind, ffk_kernels::kTile);
    EXPECT_FALSE(p.vec_op[1]);
  }
  Case s;  // f32 x[:, ::2] -> contiguous
  s.shape = {3, 2200};
  s.strides[0] = {2200, 1};
  s.strides[1] = {4400, 2};
  Plan p = CheckCopy(s);
  EXPECT_EQ(p.kind, ffk_kernels::kRows);
  EXPECT_EQ(p.vec, 4);
  EXPECT_TRUE(p.vec_op[0]);
  EXPECT_FALSE(p.vec_op[1]);
  Case m;  // f32 x.permute(2, 0, 1) -> contiguous, x of shape (8, 16, 32)
  m.shape = {32, 8, 16};
  m.strides[0] = {128, 16, 1};
  m.strides[1] = {1, 512, 32};
  p = CheckCopy(m);
  EXPECT_EQ(p.kind, ffk_kernels::kTile);
  EXPECT_EQ(p.l.ndim, 2) << "the two dims that stay together merge";
  Case k;  // x.permute(1, 0, 2): the last dimension stays, rows
  k.shape = {4, 3, 2400};
  k.strides[0] = {7200, 2400, 1};
  k.strides[1] = {2400, 9600, 1};
  p = CheckCopy(k);
  EXPECT_EQ(p.kind, ffk_kernels::kRows);
  EXPECT_TRUE(p.vec_op[0] && p.vec_op[1]);
  Case d;  // contiguous, and a reversed contiguous pair: one run either way
  d.shape = {7, 9};
  d.strides[0] = d.strides[1] = {9, 1};
  EXPECT_EQ(CheckCopy(d).kind, ffk_kernels::kDense);
  d.strides[0] = d.strides[1] = {-9, -1};
  EXPECT_EQ(CheckCopy(d).kind, ffk_kernels::kDense);
}

// ---- Fill --------------------------------------------------------------------------------

template <int V>
void EmulateRowsFill(const Plan& p, Tag* dst, const Tag& value) {
  ffk_kernels::RowsArgs a;
  ffk_kernels::MakeRowsArgs(p, &a);
  for (int64_t c = 0; c < a.chunks; ++c) {
    for (int t = 0; t < ffk_kernels::kThreads; ++t) ffk_kernels::RowsFillChunk<Tag, V>(a, dst, value, c, t);
  }
}

// Plans and emulates a fill through the row kernel (kRows plans) or FillAt (the general
// kernel, also run on dense plans here: FillDense is checked bytewise below). Each word
// gets 1000 + its place in the element.
Plan CheckFill(const Case& fill) {
  Case c = fill;
  c.strides[1] = c.strides[0];  // ForEachElement walks two operands
  Plan p = MakePlan(c, 1);
  int64_t per = p.per, lo, hi;
  Extent(c, 0, &lo, &hi);
  int64_t origin = 16 + (-lo) * per;
  size_t n = static_cast<size_t>(origin + (hi + 1) * per + 16);
  Arena arena(n, c.addr[0] - static_cast<uintptr_t>(origin) * p.word, p.word);
  ffk_kernels::Pattern<Tag> pat;
  for (int k = 0; k < ffk_kernels::kMaxPer; ++k) pat.word[k].v = 1000 + k;
  pat.period = static_cast<int32_t>(per);
  Tag* dst = arena.at + origin + p.base[0];
  if (p.kind == ffk_kernels::kRows) {
    switch (p.vec) {
      case 16: EmulateRowsFill<16>(p, dst, pat.word[0]); break;
      case 8: EmulateRowsFill<8>(p, dst, pat.word[0]); break;
      case 4: EmulateRowsFill<4>(p, dst, pat.word[0]); break;
      case 2: EmulateRowsFill<2>(p, dst, pat.word[0]); break;
      default: EmulateRowsFill<1>(p, dst, pat.word[0]); break;
    }
  }
  for (int64_t i = 0; i < p.count && p.kind != ffk_kernels::kRows; ++i) {
    if (p.l.ndim > ffk_kernels::kSmallDims) {
      ffk_kernels::FillAt<Tag, ffk_kernels::kMaxDims, int64_t>(p.l, dst, pat, i);
    } else if (ffk_kernels::Fits32(p)) {
      ffk_kernels::FillAt<Tag, ffk_kernels::kSmallDims, int32_t>(p.l, dst, pat, static_cast<int32_t>(i));
    } else {
      ffk_kernels::FillAt<Tag, ffk_kernels::kSmallDims, int64_t>(p.l, dst, pat, i);
    }
  }
  std::vector<bool> want(n, false);
  bool ok = true;
  ForEachElement(c, [&](int64_t od, int64_t) {
    for (int64_t j = 0; j < per && ok; ++j) {
      size_t d = static_cast<size_t>(origin + od * per + j);
      want[d] = true;
      if (arena.at[d].v != 1000 + j || arena.at[d].writes != 1) {
        ADD_FAILURE() << Describe(c) << ": word " << d << " got " << arena.at[d].v << " in " << arena.at[d].writes
                      << " writes";
        ok = false;
      }
    }
  });
  for (size_t k = 0; k < n && ok; ++k) {
    if (!want[k] && arena.at[k].writes != 0) {
      ADD_FAILURE() << Describe(c) << ": word " << k << " outside the view written";
      ok = false;
    }
  }
  return p;
}

TEST_F(CudaLayout, PlannedFillsWriteEveryWordOfTheViewOnceInMemoryOrder) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int dense = 0, rows = 0, vec_rows = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    Case c;
    bool long_rows = iter % 3 == 0;
    int ndim = static_cast<int>(long_rows ? pick(1, 3) : pick(0, 5));
    for (int d = 0; d < ndim; ++d) {
      int64_t n = long_rows ? (d == ndim - 1 ? pick(500, 5000) : pick(1, 3)) : pick(1, 7);
      c.shape.push_back(iter % 89 == 0 && d == 0 ? 0 : n);
    }
    RandomStrides(rng, &c, 0, pick(0, 2) == 0);
    for (int64_t& s : c.strides[0]) s = pick(0, 6) == 0 ? 0 : s;  // broadcast dims: one element each
    c.elsize = kSizes[pick(0, 7)];
    if (long_rows && ndim >= 2) {  // rows of a wider matrix (x[:, :n] or x[:, ::2]), maybe reversed
      int64_t inner = pick(1, 4) == 1 ? 2 : 1, pitch = (c.shape[ndim - 1] + pick(1, 40)) * inner;
      c.strides[0][ndim - 1] = inner;
      for (int d = ndim - 2; d >= 0; --d, pitch *= c.shape[d + 1] + 1) c.strides[0][d] = pitch * (pick(0, 3) == 0 ? -1 : 1);
      c.elsize = kSizes[pick(0, 4)];
    }
    c.strides[1] = c.strides[0];
    c.addr[0] += pick(0, 2) == 0 ? static_cast<uintptr_t>(pick(1, 15)) : 0;
    Plan p = CheckFill(c);
    if (HasFailure()) return;
    dense += p.kind == ffk_kernels::kDense;
    rows += p.kind == ffk_kernels::kRows;
    vec_rows += p.kind == ffk_kernels::kRows && p.vec > 1;
    if (p.kind == ffk_kernels::kEmpty) continue;
    // Memory order: the innermost dimension has the smallest stride, and none is negative.
    for (int d = 0; d + 1 < p.l.ndim; ++d) ASSERT_GE(p.l.stride[0][d], p.l.stride[0][d + 1]) << Describe(c);
    ASSERT_GE(p.l.stride[0][p.l.ndim - 1], 0);
  }
  EXPECT_GT(dense, 200);
  EXPECT_GT(rows, 50);
  EXPECT_GT(vec_rows, 10);
}

TEST_F(CudaLayout, FillOfATransposedViewIsOneDenseRun) {
  Case c;
  c.shape = {64, 96};
  c.strides[0] = {1, 64};
  c.elsize = 4;
  Plan p = CheckFill(c);
  EXPECT_EQ(p.kind, ffk_kernels::kDense);
  EXPECT_EQ(p.count, 64 * 96);
  EXPECT_TRUE(ffk_kernels::FillDenseFits(p));
  c.strides[0] = {-1, -64};  // and reversed: the run starts at the last element
  p = CheckFill(c);
  EXPECT_EQ(p.kind, ffk_kernels::kDense);
  EXPECT_EQ(p.base[0], -(63 + 95 * 64));
}

// The 16-byte dense fill, bytewise: every misalignment of an element-aligned start, every
// length around the 16-byte words, grids of one thread per word and of 16 threads.
TEST_F(CudaLayout, DenseFillWritesTheViewsBytesAndNoOthers) {
  std::vector<unsigned char> buf(4096 + 512);
  size_t k0 = 0;
  while (reinterpret_cast<uintptr_t>(&buf[k0]) % 256 != 0) ++k0;
  for (size_t elsize : {2, 4, 8, 16}) {
    unsigned char elem[16];
    for (size_t b = 0; b < elsize; ++b) elem[b] = static_cast<unsigned char>(0x11 * (b + 1));
    for (size_t mis = 0; mis < 32; mis += elsize) {
      for (int64_t n = 0; n <= 40; ++n) {
        for (int64_t threads : {int64_t{16}, int64_t{256}}) {
          std::fill(buf.begin(), buf.end(), 0xEE);
          unsigned char* dst = &buf[k0 + 64 + mis];
          Case c;
          c.shape = {n};
          c.strides[0] = {1};
          c.elsize = elsize;
          c.addr[0] = reinterpret_cast<uintptr_t>(dst);
          Plan p = MakePlan(c, 1);
          if (n == 0) {
            EXPECT_EQ(p.kind, ffk_kernels::kEmpty);
            continue;
          }
          ASSERT_TRUE(ffk_kernels::FillDenseFits(p)) << elsize << " " << mis;
          ffk_kernels::FillDenseArgs a;
          ffk_kernels::MakeFillDenseArgs(p, c.addr[0], elem, &a);
          for (int64_t t = 0; t < threads; ++t) ffk_kernels::FillDenseThread(a, dst, t, threads);
          for (size_t b = 0; b < buf.size(); ++b) {
            int64_t rel = static_cast<int64_t>(b) - static_cast<int64_t>(k0 + 64 + mis);
            unsigned char want = rel >= 0 && rel < n * static_cast<int64_t>(elsize) ? elem[rel % elsize] : 0xEE;
            ASSERT_EQ(buf[b], want) << "elsize " << elsize << " misalign " << mis << " n " << n << " byte " << rel;
          }
        }
      }
    }
  }
}

TEST_F(CudaLayout, WordSizesAndEdgeLayouts) {
  EXPECT_EQ(ffk_kernels::WordSize(16, 0x1000), 16u);
  EXPECT_EQ(ffk_kernels::WordSize(16, 0x1008), 8u);
  EXPECT_EQ(ffk_kernels::WordSize(8, 0x1004), 4u);
  EXPECT_EQ(ffk_kernels::WordSize(6, 0x1000), 2u);
  EXPECT_EQ(ffk_kernels::WordSize(4, 0x1001), 1u);
  Case zero_d;  // a 0-d tensor: one element, one run
  zero_d.elsize = 8;
  Plan p = CheckCopy(zero_d);
  EXPECT_EQ(p.kind, ffk_kernels::kDense);
  EXPECT_EQ(p.count, 1);
  zero_d.addr[1] += 4;  // moved as two 4-byte words
  p = CheckCopy(zero_d);
  EXPECT_EQ(p.kind, ffk_kernels::kDense);
  EXPECT_EQ(p.count, 2);
  Case ones;  // only size-1 dimensions, any strides
  ones.shape = {1, 1, 1};
  ones.strides[0] = {5, -3, 7};
  ones.strides[1] = {0, 9, 1};
  EXPECT_EQ(CheckCopy(ones).kind, ffk_kernels::kDense);
  Case empty;
  empty.shape = {3, 0, 2};
  empty.strides[0] = empty.strides[1] = {0, 2, 1};
  EXPECT_EQ(MakePlan(empty, 2).kind, ffk_kernels::kEmpty);
  Case big;  // 32 dimensions that do not merge: the general path with the 33-dim arithmetic
  for (int d = 0; d < 32; ++d) big.shape.push_back(d % 6 == 0 ? 2 : 1);
  big.strides[0].assign(32, 0);
  big.strides[1].assign(32, 0);
  int64_t s0 = 1, s1 = 1;
  for (int d = 31; d >= 0; --d) {  // gapped: no two dims merge; src's order reversed
    big.strides[0][d] = s0;
    big.strides[1][31 - d] = s1;
    s0 *= big.shape[d] > 1 ? 3 : 1;
    s1 *= big.shape[31 - d] > 1 ? 3 : 1;
  }
  p = CheckCopy(big);
  EXPECT_EQ(p.kind, ffk_kernels::kGeneral);
  EXPECT_EQ(p.l.ndim, 6);
  // 32-bit arithmetic exactly while every index and offset stays below 2^31.
  Case wide;
  wide.shape = {2, 3};
  wide.strides[0] = {3, 1};
  wide.elsize = 1;
  for (int64_t far : {int64_t{0x7fffffff}, int64_t{0x80000000}, int64_t{0x3fffffff} + 1}) {
    wide.strides[1] = {far, 2};
    Plan q = MakePlan(wide, 2);
    ASSERT_EQ(q.kind, ffk_kernels::kGeneral);
    EXPECT_EQ(ffk_kernels::Fits32(q), far + 4 <= 0x7fffffff) << far;
  }
  wide.strides[1] = {-0x7ffffff0, 2};  // reversed: the reach counts, not the sign
  EXPECT_TRUE(ffk_kernels::Fits32(MakePlan(wide, 2)));
  wide.strides[1] = {-0x7ffffffe, 2};
  EXPECT_FALSE(ffk_kernels::Fits32(MakePlan(wide, 2)));
}

}  // namespace
