// tests/tensor/kernel_cases.h - the layouts the CUDA kernel tests share: cuda_layout_test
// (the kernels' planning and per-thread code emulated on the CPU) and cuda_kernels_test
// (the same calls on a device against a host reference) describe, walk and randomise
// their cases with these, so both test the same population of layouts.
#ifndef FFIKIT_TESTS_TENSOR_KERNEL_CASES_H
#define FFIKIT_TESTS_TENSOR_KERNEL_CASES_H

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ffk_kernel_cases {

// A copy (dst = operand 0, src = operand 1) or a fill (operand 0): shape, strides in
// elements, element size, and the operands' first-element addresses, whose value modulo
// 16 is the misalignment a test gives its pointers.
struct Case {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides[2];
  size_t elsize = 4;
  uintptr_t addr[2] = {0x100000, 0x200000};
};

// Element sizes the random tests draw from: every word size and some odd ones.
inline constexpr size_t kSizes[] = {1, 2, 4, 8, 16, 3, 6, 12};

inline std::string Describe(const Case& c) {
  std::string s = "shape (";
  for (int64_t x : c.shape) s += std::to_string(x) + ",";
  for (int op = 0; op < 2; ++op) {
    s += op == 0 ? ") dst strides (" : ") src strides (";
    for (int64_t x : c.strides[op]) s += std::to_string(x) + ",";
  }
  return s + ") elsize " + std::to_string(c.elsize) + " misalign " + std::to_string(c.addr[0] % 16) + "/" +
         std::to_string(c.addr[1] % 16);
}

// The lowest and highest element offsets of operand op.
inline void Extent(const Case& c, int op, int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    int64_t far = (c.shape[d] - 1) * c.strides[op][d];
    (far < 0 ? *lo : *hi) += far;
  }
}

// Calls f(dst element offset, src element offset) for every element, row-major.
template <class F>
void ForEachElement(const Case& c, F f) {
  int64_t n = 1;
  for (int64_t s : c.shape) n *= s;
  std::vector<int64_t> idx(c.shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t o[2] = {0, 0};
    for (size_t d = 0; d < c.shape.size(); ++d) {
      for (int op = 0; op < 2; ++op) o[op] += idx[d] * c.strides[op][d];
    }
    f(o[0], o[1]);
    for (int d = static_cast<int>(c.shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < c.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Strides for operand op of c's shape: a random order of the dimensions, with `gaps`
// optionally with gaps between rows (and a first stride above 1), with some dimensions
// reversed. With `transpose` (and ndim >= 2) the last dimension is never the innermost.
inline void RandomStrides(std::mt19937_64& rng, Case* c, int op, bool gaps, bool transpose = false) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  size_t ndim = c->shape.size();
  std::vector<size_t> perm(ndim);
  for (size_t d = 0; d < ndim; ++d) perm[d] = d;
  if (transpose && ndim >= 2) {
    while (perm.back() == ndim - 1) std::shuffle(perm.begin(), perm.end(), rng);
  } else if (pick(0, 2) > 0) {
    std::shuffle(perm.begin(), perm.end(), rng);
  }
  c->strides[op].assign(ndim, 0);
  int64_t s = gaps && pick(0, 1) == 1 ? pick(1, 3) : 1;
  for (size_t i = ndim; i-- > 0;) {
    c->strides[op][perm[i]] = s;
    s = s * c->shape[perm[i]] + (gaps && pick(0, 3) == 0 ? pick(1, 5) : 0);
  }
  if (pick(0, 3) == 0) {
    for (int64_t& x : c->strides[op]) x = pick(0, 2) == 0 ? -x : x;
  }
}

}  // namespace ffk_kernel_cases

#endif  // FFIKIT_TESTS_TENSOR_KERNEL_CASES_H
