// tensor/cuda/kernels.h on a device: ffk_kernels__copy and ffk_kernels__fill against a
// host reference, for random layouts reaching every path (dense, tile, rows, general),
// every element size (1, 2, 4, 8, 16 and odd sizes), misaligned pointers and reversed
// and broadcast strides; the benchmark layouts at sizes that fill several tiles
// and chunks; work queued on a created stream; and both calls captured in a CUDA graph
// (they must not synchronise). Built only with the CUDA toolkit; on a machine without a
// device every test skips, saying why. (cuda_layout_test checks the same arithmetic on
// the CPU in every build.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensor/cuda/kernels.h"
#include "tests/support/ffk_test.h"
#include "tests/tensor/kernel_cases.h"

namespace {

using ffk_kernel_cases::Case;
using ffk_kernel_cases::Describe;
using ffk_kernel_cases::Extent;
using ffk_kernel_cases::ForEachElement;
using ffk_kernel_cases::kSizes;
using ffk_kernel_cases::RandomStrides;

std::string CudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " " + std::to_string(static_cast<int>(e)) + ": " + cudaGetErrorString(e);
}

class CudaKernels : public ffk::test::Test {
 protected:
  void SetUp() override {
    ffk::test::Test::SetUp();
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    std::string why = rc != cudaSuccess ? CudaText(rc) : "cudaGetDeviceCount found 0 devices";
    if (rc != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA device: " << why;
    }
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    }
    ffk::test::Test::TearDown();
  }
  cudaStream_t stream_ = nullptr;
};

// Device memory that frees itself.
struct DeviceBytes {
  unsigned char* p = nullptr;
  size_t n = 0;
  explicit DeviceBytes(size_t bytes) : n(bytes) { EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), n), cudaSuccess); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes() { EXPECT_EQ(cudaFree(p), cudaSuccess); }
};

// Byte offsets of the lowest element and the byte count spanned, per operand.
void Span(const Case& c, int op, int64_t* lo_bytes, size_t* bytes) {
  int64_t lo = 0, hi = 0;
  Extent(c, op, &lo, &hi);
  *lo_bytes = lo * static_cast<int64_t>(c.elsize);
  *bytes = static_cast<size_t>((hi - lo + 1) * static_cast<int64_t>(c.elsize));
}

constexpr size_t kPad = 64;  // bytes before and after each operand's span, checked untouched

// Runs the copy (fill when `fill`) of case c on the device and compares every byte of the
// destination arena with the host reference.
void Check(const Case& c, cudaStream_t stream, bool fill) {
  int64_t lo[2];
  size_t span[2];
  for (int op = 0; op < 2; ++op) Span(c, op, &lo[op], &span[op]);
  std::vector<unsigned char> src(span[1] + 2 * kPad + 16), want(span[0] + 2 * kPad + 16, 0xEE), got(want.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>((i * 7 + 3) % 251);
  DeviceBytes dsrc(src.size()), ddst(want.size());
  ASSERT_EQ(cudaMemcpy(dsrc.p, src.data(), src.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(ddst.p, want.data(), want.size(), cudaMemcpyHostToDevice), cudaSuccess);
  int64_t origin[2] = {static_cast<int64_t>(kPad + c.addr[0] % 16) - lo[0],
                       static_cast<int64_t>(kPad + c.addr[1] % 16) - lo[1]};
  unsigned char value[16];
  for (size_t b = 0; b < 16; ++b) value[b] = static_cast<unsigned char>(0x30 + b);
  int64_t es = static_cast<int64_t>(c.elsize);
  ForEachElement(c, [&](int64_t od, int64_t os) {
    std::memcpy(&want[static_cast<size_t>(origin[0] + od * es)], fill ? value : &src[static_cast<size_t>(origin[1] + os * es)],
                c.elsize);
  });
  cudaError_t e = fill ? ffk_kernels__fill(ddst.p + origin[0], static_cast<int32_t>(c.shape.size()), c.shape.data(),
                                           c.strides[0].data(), value, c.elsize, stream)
                       : ffk_kernels__copy(ddst.p + origin[0], c.strides[0].data(), dsrc.p + origin[1],
                                           c.strides[1].data(), static_cast<int32_t>(c.shape.size()), c.shape.data(),
                                           c.elsize, stream);
  ASSERT_EQ(e, cudaSuccess) << Describe(c) << ": " << CudaText(e);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << Describe(c);
  ASSERT_EQ(cudaMemcpy(got.data(), ddst.p, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << (fill ? "fill " : "copy ") << Describe(c) << ": dst byte "
                               << static_cast<int64_t>(i) - origin[0];
  }
}

TEST_F(CudaKernels, RandomLayoutsCopyAndFillLikeTheHostReference) {
  std::mt19937_64 rng(25);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int iter = 0; iter < 400; ++iter) {
    Case c;
    int kind = iter % 4, ndim = static_cast<int>(kind == 1 ? pick(2, 3) : pick(0, 4));
    for (int d = 0; d < ndim; ++d) {
      c.shape.push_back(kind == 0   ? pick(1, 6)
                        : kind == 1 ? pick(14, 140)
                        : kind == 2 ? (d == ndim - 1 ? pick(500, 9000) : pick(1, 3))
                                    : pick(1, 40));
    }
    int64_t total = 1;
    for (int64_t n : c.shape) total *= n;
    if (total > 200000) continue;
    RandomStrides(rng, &c, 0, pick(0, 2) == 0);
    c.strides[1] = c.strides[0];
    if (kind != 2 && pick(0, 5) == 0) {
      for (int64_t& s : c.strides[1]) s = pick(-3, 5);
    } else {
      RandomStrides(rng, &c, 1, pick(0, 2) == 0, kind == 1 && pick(0, 1) == 0);
    }
    c.elsize = kSizes[pick(0, 7)];
    for (uintptr_t& a : c.addr) a += pick(0, 2) == 0 ? static_cast<uintptr_t>(pick(1, 15)) : 0;
    Check(c, stream_, false);
    if (HasFailure()) return;
    for (int64_t& s : c.strides[0]) s = pick(0, 6) == 0 ? 0 : s;  // broadcast dims for the fill
    Check(c, stream_, true);
    if (HasFailure()) return;
  }
}

TEST_F(CudaKernels, TheBenchmarkLayoutsAtTileAndChunkSizes) {
  for (size_t elsize : {1, 2, 4, 8, 16}) {
    Case t;  // transposed source and destination, sizes off the tile grid
    t.shape = {1000, 777};
    t.strides[0] = {777, 1};
    t.strides[1] = {1, 1000};
    t.elsize = elsize;
    Check(t, stream_, false);
    std::swap(t.strides[0], t.strides[1]);
    Check(t, stream_, false);
    Check(t, stream_, true);  // fill of a transposed view
    t.addr[1] += elsize;      // an odd element offset: no vector loads
    Check(t, stream_, false);
  }
  Case s;  // f32 x[:, ::2] -> contiguous
  s.shape = {300, 8192};
  s.strides[0] = {8192, 1};
  s.strides[1] = {16384, 2};
  Check(s, stream_, false);
  Case m;  // f32 permute(2, 0, 1) -> contiguous, x of shape (64, 32, 128)
  m.shape = {128, 64, 32};
  m.strides[0] = {2048, 32, 1};
  m.strides[1] = {1, 4096, 128};
  Check(m, stream_, false);
  Case d;  // contiguous, the 16-byte fill with head and tail
  d.shape = {100003};
  d.strides[0] = d.strides[1] = {1};
  for (size_t elsize : {2, 4, 8, 16}) {
    d.elsize = elsize;
    d.addr[0] = 0x100000 + elsize;
    Check(d, stream_, true);
    Check(d, stream_, false);
  }
}

TEST_F(CudaKernels, CopyAndFillCanBeCapturedInAGraph) {
  const int64_t shape[2] = {257, 300}, dense[2] = {300, 1}, trans[2] = {1, 257};
  const size_t bytes = 257 * 300 * 4;
  DeviceBytes a(bytes), b(bytes);
  std::vector<uint32_t> host(257 * 300);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i);
  ASSERT_EQ(cudaMemcpy(a.p, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  uint32_t seven = 7;
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(ffk_kernels__fill(b.p, 2, shape, trans, &seven, 4, stream_), cudaSuccess);
  EXPECT_EQ(ffk_kernels__copy(b.p, trans, a.p, dense, 2, shape, 4, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(b.p, 0, bytes, stream_), cudaSuccess);  // the graph must redo the work
  EXPECT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<uint32_t> got(host.size());
  EXPECT_EQ(cudaMemcpy(got.data(), b.p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int64_t i = 0; i < 257; ++i) {
    for (int64_t j = 0; j < 300; ++j) {
      ASSERT_EQ(got[static_cast<size_t>(i + j * 257)], host[static_cast<size_t>(i * 300 + j)]) << i << "," << j;
    }
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST_F(CudaKernels, BadArgumentsAreInvalidValueAndQueueNothing) {
  int64_t shape[1] = {-1}, strides[1] = {1};
  uint32_t v = 0;
  DeviceBytes a(64);
  EXPECT_EQ(ffk_kernels__copy(a.p, strides, a.p, strides, 1, shape, 4, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(ffk_kernels__fill(a.p, 1, shape, strides, &v, 4, stream_), cudaErrorInvalidValue);
  shape[0] = 4;
  EXPECT_EQ(ffk_kernels__fill(a.p, 1, shape, strides, &v, 17, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(ffk_kernels__fill(a.p, 1, shape, strides, nullptr, 4, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(ffk_kernels__copy(a.p, strides, a.p, strides, 33, shape, 4, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(ffk_kernels__copy(a.p, nullptr, a.p, strides, 1, shape, 4, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(ffk_kernels__copy(a.p, strides, a.p, strides, 1, shape, 0, stream_), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

}  // namespace
