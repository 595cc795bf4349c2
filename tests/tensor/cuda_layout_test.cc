// tensor/cuda/layout.h: the layout arithmetic of the CUDA kernels, checked on the CPU in
// every build. For random shapes, strides (gapped, permuted, overlapping, negative), element
// sizes (also 3, 6, 12 and 16 bytes) and base-address misalignments, the simplified layout must
// visit exactly the words a plain row-major walk of the original layout visits, in the
// same order, with each word's place in its element recoverable as offset % per.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tensor/cuda/layout.h"
#include "tests/support/ffk_test.h"

namespace {

using ffk_kernels::Layout;

class CudaLayout : public ffk::test::Test {};

struct Case {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides[2];
  size_t elsize;
};

// (dst word offset, src word offset) of every word, walking the original layout row-major.
std::vector<std::pair<int64_t, int64_t>> Reference(const Case& c, size_t word) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t per = static_cast<int64_t>(c.elsize / word), n = 1;
  for (int64_t s : c.shape) n *= s;
  std::vector<int64_t> idx(c.shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t o[2] = {0, 0};
    for (size_t d = 0; d < c.shape.size(); ++d) {
      for (int op = 0; op < 2; ++op) o[op] += idx[d] * c.strides[op][d];
    }
    for (int64_t j = 0; j < per; ++j) out.push_back({o[0] * per + j, o[1] * per + j});
    for (int d = static_cast<int>(c.shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < c.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// What the kernels visit: Offsets over every linear index of the simplified layout.
std::vector<std::pair<int64_t, int64_t>> Simplified(const Case& c, size_t word, Layout* l) {
  const int64_t* strides[2] = {c.strides[0].data(), c.strides[1].data()};
  int64_t n = ffk_kernels::Simplify(l, 2, static_cast<int32_t>(c.shape.size()), c.shape.data(), strides, c.elsize,
                                    word);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off[2];
    ffk_kernels::Offsets<2>(*l, i, off);
    out.push_back({off[0], off[1]});
  }
  return out;
}

TEST_F(CudaLayout, SimplifiedLayoutsVisitTheSameWordsInTheSameOrder) {
  std::mt19937_64 rng(20240607);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const size_t sizes[] = {1, 2, 4, 8, 16, 3, 6, 12};
  int merged = 0, split = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Case c;
    int ndim = static_cast<int>(iter % 100 == 0 ? 32 : pick(0, 5));
    for (int d = 0; d < ndim; ++d) c.shape.push_back(ndim > 8 ? (pick(0, 3) == 0 ? 2 : 1) : pick(iter % 37 == 0 ? 0 : 1, 5));
    for (int op = 0; op < 2; ++op) {
      // Row-major over a permutation of the dimensions, with gaps (not for 32-d), or
      // arbitrary (overlapping) strides for the source.
      std::vector<int> perm(ndim);
      for (int d = 0; d < ndim; ++d) perm[d] = d;
      if (pick(0, 1) == 1) std::shuffle(perm.begin(), perm.end(), rng);
      bool gaps = ndim <= 8 && pick(0, 1) == 1;
      c.strides[op].assign(ndim, 0);
      int64_t s = 1;
      for (int i = ndim - 1; i >= 0; --i) {
        c.strides[op][perm[i]] = s * (gaps ? pick(1, 2) : 1);
        s = c.strides[op][perm[i]] * c.shape[perm[i]] + (gaps ? pick(0, 1) : 0);
      }
      if (op == 1 && ndim <= 8 && pick(0, 3) == 0) {
        for (int64_t& x : c.strides[op]) x = pick(0, 4);
      }
      if (pick(0, 3) == 0) {  // reversed dimensions (numpy's a[::-1]): negative strides
        for (int64_t& x : c.strides[op]) x = pick(0, 1) == 1 ? -x : x;
      }
    }
    c.elsize = sizes[pick(0, 7)];
    uintptr_t misalign = static_cast<uintptr_t>(pick(0, 1) == 1 ? pick(0, 15) : 0);
    size_t word = ffk_kernels::WordSize(c.elsize, 4096 | misalign);
    ASSERT_EQ(c.elsize % word, 0u);
    ASSERT_EQ(misalign % word, 0u);
    Layout l;
    std::vector<std::pair<int64_t, int64_t>> want = Reference(c, word), got = Simplified(c, word, &l);
    ASSERT_EQ(got, want) << "iteration " << iter << ", ndim " << ndim << ", elsize " << c.elsize << ", word "
                         << word;
    ASSERT_GE(l.ndim, 1);
    ASSERT_LE(l.ndim, ffk_kernels::kMaxDims);
    int64_t per = static_cast<int64_t>(c.elsize / word);
    for (size_t i = 0; i < got.size(); ++i) {  // as the fill kernel computes it, also for negative offsets
      int64_t w = got[i].first % per;
      ASSERT_EQ(w < 0 ? w + per : w, static_cast<int64_t>(i) % per) << "the fill pattern index";
    }
    merged += l.ndim < static_cast<int>(c.shape.size());
    split += per > 1;
  }
  EXPECT_GT(merged, 100);  // the cases exercise merging and splitting, not only the trivial path
  EXPECT_GT(split, 100);
}

TEST_F(CudaLayout, DenseLayoutsBecomeOneRun) {
  Layout l;
  int64_t shape[3] = {4, 1, 6}, strides[3] = {6, 99, 1}, trans[3] = {1, 99, 4};
  const int64_t* both[2] = {strides, strides};
  EXPECT_EQ(ffk_kernels::Simplify(&l, 2, 3, shape, both, 16, 8), 48);  // complex128 in 8-byte words
  EXPECT_EQ(l.ndim, 1);
  EXPECT_EQ(l.shape[0], 48);
  EXPECT_TRUE(ffk_kernels::Dense(l, 2));
  const int64_t* mixed[2] = {strides, trans};
  EXPECT_EQ(ffk_kernels::Simplify(&l, 2, 3, shape, mixed, 4, 4), 24);
  EXPECT_EQ(l.ndim, 2);
  EXPECT_FALSE(ffk_kernels::Dense(l, 2));
  EXPECT_EQ(ffk_kernels::Simplify(&l, 1, 0, nullptr, both, 8, 8), 1);  // a 0-d tensor: one word
  EXPECT_TRUE(ffk_kernels::Dense(l, 1));
  int64_t empty[2] = {3, 0};
  EXPECT_EQ(ffk_kernels::Simplify(&l, 2, 2, empty, both, 4, 4), 0);
  EXPECT_EQ(ffk_kernels::WordSize(8, 0x1000), 8u);
  EXPECT_EQ(ffk_kernels::WordSize(8, 0x1004), 4u);
  EXPECT_EQ(ffk_kernels::WordSize(6, 0x1000), 2u);
  EXPECT_EQ(ffk_kernels::WordSize(4, 0x1001), 1u);
}

}  // namespace
