// ffikit on CUDA: the kDLCUDA and kDLCUDAHost allocators, ffk_device_count, and the fill
// and strided-copy kernels behind ffk_tensor_fill, ffk_tensor_copy_from and
// ffk_tensor_contiguous. Built only with the CUDA toolkit (otherwise SKIPPED by Bazel).
//
// Three fixtures:
//   CudaAnywhere  runs with or without a device (checks that make no device call, or
//                 that hold either way);
//   CudaNoDevice  the clear errors when no device can be used (no driver here); skipped
//                 where a device is present;
//   CudaDevice    everything that needs a device; skipped visibly with the reason
//                 ("no CUDA device: cudaErrorInsufficientDriver 35: ...") without one.
// Results computed on a device are always compared with the same operation on the CPU.
#include <cuda_runtime.h>
#include <ffikit/ffikit.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::PendingError;

const DLDevice kCpu = {kDLCPU, 0};
const DLDevice kCuda0 = {kDLCUDA, 0};
const DLDevice kPinned0 = {kDLCUDAHost, 0};
const DLDataType kI8 = {kDLInt, 8, 1};
const DLDataType kU8 = {kDLUInt, 8, 1};
const DLDataType kI16 = {kDLInt, 16, 1};
const DLDataType kI32 = {kDLInt, 32, 1};
const DLDataType kI64 = {kDLInt, 64, 1};
const DLDataType kF32 = {kDLFloat, 32, 1};
const DLDataType kF64 = {kDLFloat, 64, 1};
const DLDataType kC128 = {kDLComplex, 128, 1};
const DLDataType kBool = {6, 8, 1};  // kDLBool (newer than Debian's dlpack.h)

ffk_object* Obj(ffk_tensor* t) { return reinterpret_cast<ffk_object*>(t); }
ffk_object* Obj(ffk_storage* s) { return reinterpret_cast<ffk_object*>(s); }

struct T {  // owns a tensor (or nothing)
  ffk_tensor* t;
  explicit T(ffk_tensor* x) : t(x) {}
  T(const T&) = delete;
  T& operator=(const T&) = delete;
  ~T() { ffk_object_release(Obj(t)); }
  const DLTensor* dl() const { return ffk_tensor_dltensor_borrow(t); }
};

std::string CudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " " + std::to_string(static_cast<int>(e)) + ": " + cudaGetErrorString(e);
}

// What cudaGetDeviceCount says, for skip messages.
std::string CudaStatus() {
  int count = 0;  // left unchanged when the call fails
  cudaError_t rc = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (rc != cudaSuccess) return CudaText(rc);
  return "cudaGetDeviceCount found " + std::to_string(count) + " devices";
}

// The error ffikit reports for any device call when no device can be used, after `prefix`.
std::string NoDeviceError(const std::string& prefix) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (rc == cudaSuccess) rc = cudaErrorNoDevice;  // ffikit reports a count of 0 as no device
  std::string why;
  switch (rc) {
    case cudaErrorInsufficientDriver: {
      int driver = 0, runtime = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        why = "no CUDA driver is installed";
      } else {
        (void)cudaRuntimeGetVersion(&runtime);
        why = "the CUDA driver (version " + std::to_string(driver) + ") is older than the CUDA runtime (version " +
              std::to_string(runtime) + ")";
      }
      break;
    }
    case cudaErrorStubLibrary: why = "no CUDA driver is installed (only its stub library was found)"; break;
    case cudaErrorNoDevice: why = "no CUDA device is present"; break;
    default: why = "cudaGetDeviceCount failed"; break;
  }
  return "RuntimeError: " + prefix + ": " + why + " (" + CudaText(rc) + ")";
}

::testing::AssertionResult IsNoDeviceError(const std::string& error, const std::string& prefix) {
  std::string want = NoDeviceError(prefix);
  if (error == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got \"" << error << "\", expected \"" << want << "\"";
}

bool SameStats(ffk_storage_stats a, ffk_storage_stats b) {
  return a.bytes_in_use == b.bytes_in_use && a.blocks_in_use == b.blocks_in_use;
}

// A CPU tensor whose bytes follow a pattern with a long period, so misplaced elements show.
ffk_tensor* Pattern(std::vector<int64_t> shape, DLDataType dtype, int seed = 0) {
  ffk_tensor* t = ffk_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), dtype, kCpu);
  if (t == nullptr) return nullptr;
  auto* p = static_cast<unsigned char*>(ffk_tensor_data_ptr(t));
  for (int64_t i = 0; i < ffk_tensor_nbytes(t); ++i) p[i] = static_cast<unsigned char>((i * 7 + seed * 13 + 3) % 251);
  return t;
}

// A new contiguous tensor on `device` with the elements of `t`.
ffk_tensor* CopyTo(const ffk_tensor* t, DLDevice device) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  ffk_tensor* out = ffk_tensor_empty(d->ndim, d->shape, d->dtype, device);
  if (out == nullptr) {
    ADD_FAILURE() << FetchError();
    return nullptr;
  }
  if (ffk_tensor_copy_from(out, t) != 0) {
    ADD_FAILURE() << FetchError();
    ffk_object_release(Obj(out));
    return nullptr;
  }
  return out;
}

// The bytes of `t`'s elements in row-major order, read through a dense CPU copy.
std::vector<unsigned char> Bytes(const ffk_tensor* t) {
  T host(CopyTo(t, kCpu));
  if (host.t == nullptr) return {};
  auto* p = static_cast<unsigned char*>(ffk_tensor_data_ptr(host.t));
  return std::vector<unsigned char>(p, p + ffk_tensor_nbytes(host.t));
}

std::vector<int64_t> Shape(const ffk_tensor* t) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  return std::vector<int64_t>(d->shape, d->shape + d->ndim);
}

template <typename V>
std::vector<V> Values(const ffk_tensor* t) {
  std::vector<unsigned char> b = Bytes(t);
  std::vector<V> out(b.size() / sizeof(V));
  if (!out.empty()) memcpy(out.data(), b.data(), out.size() * sizeof(V));
  return out;
}

int Fill(ffk_tensor* t, ffk_any v) { return ffk_tensor_fill(t, &v); }

// ---- With or without a device --------------------------------------------------------------

class CudaAnywhere : public ffk::test::Test {};

TEST_F(CudaAnywhere, DeviceCountAgreesWithTheRuntime) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  int expected = rc == cudaSuccess ? count : 0;
  EXPECT_EQ(ffk_device_count(kDLCUDA), expected) << CudaStatus();
  EXPECT_EQ(ffk_device_count(kDLCUDAHost), expected);
  EXPECT_EQ(ffk_device_count(kDLCPU), 1);
  EXPECT_FALSE(ffk_error_occurred()) << FetchError();
  ffk_allocator a;
  ASSERT_EQ(ffk_allocator_get(kDLCUDA, &a), 1);
  EXPECT_STREQ(a.name, "cuda");
  EXPECT_NE(a.copy, nullptr);
  ASSERT_EQ(ffk_allocator_get(kDLCUDAHost, &a), 1);
  EXPECT_STREQ(a.name, "cuda_host");
}

// The CUDA runtime is linked statically: no libcudart.so is mapped, even after CUDA calls
// (it loads only the driver, libcuda.so.1, and only where one is installed).
TEST_F(CudaAnywhere, TheCudaRuntimeIsLinkedStatically) {
  (void)ffk_device_count(kDLCUDA);
  int runtime = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_GT(runtime, 0);
  std::ifstream maps("/proc/self/maps");
  ASSERT_TRUE(maps.good());
  std::string line;
  while (std::getline(maps, line)) EXPECT_EQ(line.find("libcudart.so"), std::string::npos) << line;
}

TEST_F(CudaAnywhere, AlignmentOver256IsRefusedBeforeAnyCudaCall) {
  ffk_storage_stats before = ffk_storage_get_stats(kCuda0);
  EXPECT_EQ(ffk_storage_new(kCuda0, 64, 512), nullptr);
  EXPECT_EQ(FetchError(),
            "ValueError: cannot allocate on device `cuda:0`: alignment 512 is larger than the 256 bytes CUDA "
            "allocations are aligned to");
  EXPECT_EQ(ffk_storage_new_zeroed(DLDevice{kDLCUDA, 3}, 64, 4096), nullptr);
  EXPECT_EQ(FetchError(),
            "ValueError: cannot allocate on device `cuda:3`: alignment 4096 is larger than the 256 bytes CUDA "
            "allocations are aligned to");
  EXPECT_EQ(ffk_storage_new(kCuda0, 64, 8192), nullptr);  // over FFK_STORAGE_MAX_ALIGNMENT for every device
  EXPECT_TRUE(PendingError("ValueError", {"alignment 8192"}));
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), before));
}

// Makes something with `make` and releases it. A failure other than a MemoryError must be
// the device's own error for `device` (no device here): that is the run's outcome, not an
// allocation failure, so it counts as success.
bool MadeOrDeviceError(ffk_object* made, const char* device) {
  if (made != nullptr) {
    ffk_object_release(made);
    return true;
  }
  if (ffk_error_matches(FFK_ERR_MEMORY)) return false;  // left pending for the sweep to check
  std::string e = FetchError();
  EXPECT_NE(e.find(std::string("RuntimeError: cannot allocate on device `") + device + "`"), std::string::npos) << e;
  return true;
}

TEST_F(CudaAnywhere, ConstructorsSurviveEveryAllocationFailure) {
  int64_t shape[2] = {3, 5};
  struct Case {
    const char* device;
    std::function<ffk_object*()> make;
  };
  std::vector<Case> cases = {
      {"cuda:0", [] { return Obj(ffk_storage_new(kCuda0, 100, 0)); }},
      {"cuda:0", [] { return Obj(ffk_storage_new_zeroed(kCuda0, 100, 256)); }},
      {"cuda_host:0", [] { return Obj(ffk_storage_new(kPinned0, 100, 0)); }},
      {"cuda_host:0", [] { return Obj(ffk_storage_new_zeroed(kPinned0, 100, 4096)); }},
      {"cuda:0", [&] { return Obj(ffk_tensor_empty(2, shape, kF32, kCuda0)); }},
      {"cuda:0", [&] { return Obj(ffk_tensor_zeros(2, shape, kF64, kCuda0)); }},
      {"cuda_host:0", [&] { return Obj(ffk_tensor_zeros(2, shape, kI16, kPinned0)); }},
  };
  ffk_storage_stats cuda = ffk_storage_get_stats(kCuda0), pinned = ffk_storage_get_stats(kPinned0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.device);
    ffk::test::SweepAllocationFailures([&] { return MadeOrDeviceError(c.make(), c.device); },
                                       [&] {
                                         EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), cuda));
                                         EXPECT_TRUE(SameStats(ffk_storage_get_stats(kPinned0), pinned));
                                       });
  }
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), cuda));
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kPinned0), pinned));
}

// ---- Without a usable device -----------------------------------------------------------------

class CudaNoDevice : public ffk::test::Test {
 protected:
  void SetUp() override {
    ffk::test::Test::SetUp();
    if (ffk_device_count(kDLCUDA) > 0) GTEST_SKIP() << "a CUDA device is present; these tests need a machine without one";
  }
};

TEST_F(CudaNoDevice, StorageFailsWithTheDeviceErrorAndLeavesNothing) {
  ffk_storage_stats cpu = ffk_storage_get_stats(kCpu), cuda = ffk_storage_get_stats(kCuda0),
                    pinned = ffk_storage_get_stats(kPinned0);
  int64_t live = ffk_debug_live_objects(-1);
  EXPECT_EQ(ffk_storage_new(kCuda0, 1024, 0), nullptr);
  std::string e = FetchError();
  EXPECT_TRUE(IsNoDeviceError(e, "cannot allocate on device `cuda:0`"));
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver) {  // this machine: no driver at all
    EXPECT_NE(e.find("no CUDA driver"), std::string::npos) << e;
    EXPECT_NE(e.find("cudaErrorInsufficientDriver 35"), std::string::npos) << e;
  }
  (void)cudaGetLastError();
  EXPECT_EQ(ffk_storage_new_zeroed(kCuda0, 1024, 256), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_storage_new(kCuda0, 0, 0), nullptr);  // the device is checked even for no bytes
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_storage_new(DLDevice{kDLCUDA, 5}, 8, 0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:5`"));
  EXPECT_EQ(ffk_storage_new(kPinned0, 1024, 0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda_host:0`"));
  EXPECT_EQ(ffk_storage_new_zeroed(kPinned0, 1024, 4096), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda_host:0`"));
  EXPECT_EQ(ffk_debug_live_objects(-1), live);
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCpu), cpu));
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), cuda));
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kPinned0), pinned));
  EXPECT_EQ(ffk_device_count(kDLCUDA), 0);  // and asking again is still not an error
  EXPECT_FALSE(ffk_error_occurred());
}

TEST_F(CudaNoDevice, TensorConstructorsFailCleanly) {
  int64_t shape[2] = {2, 3}, none[1] = {0};
  EXPECT_EQ(ffk_tensor_empty(2, shape, kF32, kCuda0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_tensor_zeros(2, shape, kF32, kCuda0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_tensor_empty(1, none, kF32, kCuda0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_tensor_zeros(2, shape, kI64, kPinned0), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda_host:0`"));
  T cpu(Pattern({2, 3}, kF32));
  T same(ffk_tensor_contiguous(cpu.t));  // nothing on the CPU needs CUDA
  EXPECT_EQ(same.t, cpu.t);
}

// A producer's CUDA tensor whose data pointer is never dereferenced: with no device
// every operation must fail before touching it.
int g_fake_deletes = 0;

TEST_F(CudaNoDevice, OperationsOnAnImportedCudaTensorFailBeforeTouchingIt) {
  static int64_t shape[2] = {2, 3};
  DLManagedTensor m = {}, m2 = {};
  m.dl_tensor = {reinterpret_cast<void*>(uintptr_t{0x7f0000001000}), kCuda0, 2, kF32, shape, nullptr, 0};
  m.deleter = [](DLManagedTensor*) { ++g_fake_deletes; };
  m2 = m;
  g_fake_deletes = 0;
  T t(ffk_tensor_from_dlpack(&m, nullptr));
  ASSERT_NE(t.t, nullptr) << FetchError();
  EXPECT_EQ(Fill(t.t, ffk_any_float(1.5)), -1);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot fill a tensor on device `cuda:0`"));
  T cpu(Pattern({2, 3}, kF32));
  EXPECT_EQ(ffk_tensor_copy_from(t.t, cpu.t), -1);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot copy 24 bytes from `cpu:0` to `cuda:0`"));
  EXPECT_EQ(ffk_tensor_copy_from(cpu.t, t.t), -1);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot copy 24 bytes from `cuda:0` to `cpu:0`"));
  T view(ffk_tensor_transpose(t.t, 0, 1));
  ASSERT_NE(view.t, nullptr);
  T cpu_t(Pattern({3, 2}, kF32));
  EXPECT_EQ(ffk_tensor_copy_from(view.t, cpu_t.t), -1);  // needs a dense staging tensor on cuda:0
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  EXPECT_EQ(ffk_tensor_contiguous(view.t), nullptr);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot allocate on device `cuda:0`"));
  T other(ffk_tensor_from_dlpack(&m2, nullptr));  // a second tensor on cuda:0: a same-device copy is one kernel
  ASSERT_NE(other.t, nullptr);
  T other_t(ffk_tensor_transpose(other.t, 0, 1));
  EXPECT_EQ(ffk_tensor_copy_from(view.t, other_t.t), -1);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot copy between tensors on device `cuda:0`"));
  ffk_object_release(Obj(other_t.t));
  other_t.t = nullptr;
  ffk_object_release(Obj(other.t));
  other.t = nullptr;
  EXPECT_EQ(g_fake_deletes, 1);
  ffk_object_release(Obj(view.t));
  view.t = nullptr;
  ffk_object_release(Obj(t.t));
  t.t = nullptr;
  EXPECT_EQ(g_fake_deletes, 2);  // each import's deleter exactly once
}

// Ordering two streams needs the device too: the same error, named for the operation.
TEST_F(CudaNoDevice, StreamOrderingFailsWithTheDeviceError) {
  void* a = reinterpret_cast<void*>(uintptr_t{0x5000});
  EXPECT_EQ(ffk_stream_order(kCuda0, a, nullptr), -1);
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot order streams on device `cuda:0`"));
  static int64_t shape[1] = {4};
  DLManagedTensor m = {};
  m.dl_tensor = {reinterpret_cast<void*>(uintptr_t{0x7f0000001000}), kCuda0, 1, kF32, shape, nullptr, 0};
  T t(ffk_tensor_from_dlpack(&m, nullptr));
  ASSERT_NE(t.t, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t.t, true, 2), -1);  // the legacy stream before the per-thread one
  EXPECT_TRUE(IsNoDeviceError(FetchError(), "cannot order streams on device `cuda:0`"));
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t.t, true, 1), 0) << "the same stream: nothing to do";
  EXPECT_EQ(ffk_stream_order(kCuda0, nullptr, cudaStreamLegacy), 0) << "two names of one stream: " << FetchError();
  EXPECT_EQ(ffk_stream_order(kCuda0, cudaStreamLegacy, nullptr), 0) << FetchError();
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t.t, true, -1), 0) << "no synchronisation asked";
}

// ---- With a device ---------------------------------------------------------------------------

class CudaDevice : public ffk::test::Test {
 protected:
  void SetUp() override {
    ffk::test::Test::SetUp();
    if (HasFatalFailure()) return;
    if (ffk_device_count(kDLCUDA) <= 0) GTEST_SKIP() << "no CUDA device: " << CudaStatus();
  }
};

TEST_F(CudaDevice, AllocationIsAlignedCountedAndFreed) {
  ffk_storage_stats before = ffk_storage_get_stats(kCuda0);
  ffk_storage* s = ffk_storage_new(kCuda0, 1000, 0);
  ASSERT_NE(s, nullptr) << FetchError();
  ffk_storage* t = ffk_storage_new(kCuda0, 24, 256);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(s)) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(t)) % 256, 0u);
  EXPECT_EQ(ffk_storage_nbytes(s), 1000u);
  EXPECT_EQ(ffk_storage_device(s).device_type, kDLCUDA);
  EXPECT_EQ(ffk_storage_device(s).device_id, 0);
  cudaPointerAttributes attr;
  ASSERT_EQ(cudaPointerGetAttributes(&attr, ffk_storage_data(s)), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  ffk_storage_stats during = ffk_storage_get_stats(kCuda0);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 1024);
  EXPECT_EQ(during.blocks_in_use - before.blocks_in_use, 2);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  ffk_object_release(Obj(s));
  ffk_object_release(Obj(t));
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), before));
  ffk_storage* empty = ffk_storage_new(kCuda0, 0, 0);
  ASSERT_NE(empty, nullptr) << FetchError();
  EXPECT_EQ(ffk_storage_nbytes(empty), 0u);
  ffk_object_release(Obj(empty));
}

TEST_F(CudaDevice, AMissingDeviceIdIsNamed) {
  int count = ffk_device_count(kDLCUDA);
  DLDevice missing = {kDLCUDA, count};
  EXPECT_EQ(ffk_storage_new(missing, 64, 0), nullptr);
  std::string want = "RuntimeError: cannot allocate on device `cuda:" + std::to_string(count) +
                     "`: no such CUDA device, this machine has " + std::to_string(count) + " (" +
                     CudaText(cudaErrorInvalidDevice) + ")";
  EXPECT_EQ(FetchError(), want);
  EXPECT_EQ(ffk_storage_new(DLDevice{kDLCUDAHost, count}, 64, 0), nullptr);
  EXPECT_TRUE(PendingError("RuntimeError", {"`cuda_host:" + std::to_string(count) + "`", "no such CUDA device"}));
}

TEST_F(CudaDevice, OutOfDeviceMemoryIsAMemoryErrorAndLeavesNoErrorBehind) {
  size_t huge = size_t{1} << 50;  // 1 PiB
  EXPECT_EQ(ffk_storage_new(kCuda0, huge, 0), nullptr);
  EXPECT_EQ(FetchError(), "MemoryError: cannot allocate 1125899906842624 bytes on device `cuda:0`: out of memory (" +
                              CudaText(cudaErrorMemoryAllocation) + ")");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // cleared, so the next call does not see it
  ffk_storage* s = ffk_storage_new(kCuda0, 64, 0);
  EXPECT_NE(s, nullptr) << FetchError();
  ffk_object_release(Obj(s));
}

TEST_F(CudaDevice, TheCallersCurrentDeviceIsKept) {
  int count = ffk_device_count(kDLCUDA);
  ASSERT_EQ(cudaSetDevice(count - 1), cudaSuccess);
  for (int id = 0; id < count; ++id) {
    int64_t shape[1] = {10};
    T t(ffk_tensor_zeros(1, shape, kF32, DLDevice{kDLCUDA, id}));
    ASSERT_NE(t.t, nullptr) << FetchError();
    EXPECT_EQ(Fill(t.t, ffk_any_int(2)), 0) << FetchError();
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, count - 1);
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

TEST_F(CudaDevice, ZerosAreZero) {
  for (int64_t n : {int64_t{15}, int64_t{3} << 20}) {  // small, and larger than any host staging chunk
    int64_t shape[1] = {n};
    T t(ffk_tensor_zeros(1, shape, kU8, kCuda0));
    ASSERT_NE(t.t, nullptr) << FetchError();
    std::vector<unsigned char> b = Bytes(t.t);
    ASSERT_EQ(b.size(), static_cast<size_t>(n));
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], 0) << "byte " << i;
  }
}

TEST_F(CudaDevice, HostToDeviceToHostRoundTrip) {
  for (DLDataType dt : {kI8, kI16, kF32, kF64, kC128}) {
    T host(Pattern({4, 6, 5}, dt));
    T dev(CopyTo(host.t, kCuda0));
    ASSERT_NE(dev.t, nullptr);
    EXPECT_EQ(dev.dl()->device.device_type, kDLCUDA);
    EXPECT_EQ(Bytes(dev.t), Bytes(host.t)) << "dtype bits " << dt.bits;
  }
}

TEST_F(CudaDevice, PinnedMemoryIsHostMemoryThatCopiesToTheDevice) {
  ffk_storage_stats before = ffk_storage_get_stats(kPinned0);
  ffk_storage* s = ffk_storage_new(kPinned0, 32 * 32 * 4, 4096);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(s)) % 4096, 0u);
  EXPECT_EQ(ffk_storage_get_stats(kPinned0).bytes_in_use - before.bytes_in_use, 4096);
  cudaPointerAttributes attr;
  ASSERT_EQ(cudaPointerGetAttributes(&attr, ffk_storage_data(s)), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  float* p = static_cast<float*>(ffk_storage_data(s));
  for (int i = 0; i < 32 * 32; ++i) p[i] = static_cast<float>(i) * 0.5f;  // written directly from the host
  int64_t shape[2] = {32, 32};
  T pinned(ffk_tensor_from_storage(s, 2, shape, nullptr, 0, kF32));
  ffk_object_release(Obj(s));
  ASSERT_NE(pinned.t, nullptr) << FetchError();
  T dev(CopyTo(pinned.t, kCuda0));
  ASSERT_NE(dev.t, nullptr);
  T back(ffk_tensor_zeros(2, shape, kF32, kPinned0));
  ASSERT_NE(back.t, nullptr) << FetchError();
  ASSERT_EQ(ffk_tensor_copy_from(back.t, dev.t), 0) << FetchError();
  const float* q = static_cast<const float*>(ffk_tensor_data_ptr(back.t));
  for (int i = 0; i < 32 * 32; ++i) ASSERT_EQ(q[i], static_cast<float>(i) * 0.5f) << i;
  T cpu(CopyTo(pinned.t, kCpu));  // pinned <-> cpu is a host copy
  EXPECT_EQ(Bytes(cpu.t), Bytes(back.t));
  T strided(ffk_tensor_transpose(pinned.t, 0, 1));  // a strided pinned source to the device
  T dev_t(CopyTo(strided.t, kCuda0));
  ASSERT_NE(dev_t.t, nullptr);
  T want(ffk_tensor_contiguous(strided.t));
  EXPECT_EQ(Bytes(dev_t.t), Bytes(want.t));
}

TEST_F(CudaDevice, FillSetsEveryElementOfEachDtype) {
  int64_t shape[2] = {5, 7};
  struct Case {
    DLDataType dtype;
    ffk_any value;
  };
  for (const Case& c : {Case{kI8, ffk_any_int(-3)}, Case{kI16, ffk_any_int(-300)}, Case{kF32, ffk_any_float(1.5)},
                        Case{kF64, ffk_any_float(-2.25)}, Case{kI64, ffk_any_int(int64_t{1} << 40)},
                        Case{kU8, ffk_any_int(255)}, Case{kBool, ffk_any_bool(true)}, Case{kI32, ffk_any_int(-1)},
                        Case{kF32, ffk_any_int(0)}}) {
    SCOPED_TRACE(testing::Message() << "code " << int(c.dtype.code) << " bits " << int(c.dtype.bits));
    T dev(ffk_tensor_empty(2, shape, c.dtype, kCuda0));
    T cpu(ffk_tensor_empty(2, shape, c.dtype, kCpu));
    ASSERT_NE(dev.t, nullptr) << FetchError();
    ASSERT_EQ(Fill(dev.t, c.value), 0) << FetchError();
    ASSERT_EQ(Fill(cpu.t, c.value), 0) << FetchError();
    EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t));
  }
  T f(ffk_tensor_empty(2, shape, kF32, kCuda0));
  ASSERT_EQ(Fill(f.t, ffk_any_float(1.5)), 0);
  for (float v : Values<float>(f.t)) ASSERT_EQ(v, 1.5f);
  T d(ffk_tensor_empty(2, shape, kF64, kCuda0));
  ASSERT_EQ(Fill(d.t, ffk_any_float(-2.25)), 0);
  for (double v : Values<double>(d.t)) ASSERT_EQ(v, -2.25);
  T b(ffk_tensor_empty(2, shape, kI8, kCuda0));
  ASSERT_EQ(Fill(b.t, ffk_any_int(-3)), 0);
  for (int8_t v : Values<int8_t>(b.t)) ASSERT_EQ(v, -3);
  T h(ffk_tensor_empty(2, shape, kI16, kCuda0));
  ASSERT_EQ(Fill(h.t, ffk_any_int(-300)), 0);
  for (int16_t v : Values<int16_t>(h.t)) ASSERT_EQ(v, -300);
}

TEST_F(CudaDevice, FillOfAStridedViewTouchesOnlyItsElements) {
  int64_t shape[3] = {4, 6, 8};
  for (DLDataType dt : {kI8, kI16, kF32, kF64}) {
    T dev(ffk_tensor_zeros(3, shape, dt, kCuda0));
    T cpu(ffk_tensor_zeros(3, shape, dt, kCpu));
    ASSERT_NE(dev.t, nullptr) << FetchError();
    // Every other row, every third column, then the last two dimensions swapped.
    T dv1(ffk_tensor_slice(dev.t, 1, 0, 6, 2)), cv1(ffk_tensor_slice(cpu.t, 1, 0, 6, 2));
    T dv2(ffk_tensor_slice(dv1.t, 2, 1, 8, 3)), cv2(ffk_tensor_slice(cv1.t, 2, 1, 8, 3));
    T dv(ffk_tensor_transpose(dv2.t, 1, 2)), cv(ffk_tensor_transpose(cv2.t, 1, 2));
    ASSERT_NE(dv.t, nullptr) << FetchError();
    ASSERT_FALSE(ffk_tensor_is_contiguous(dv.t));
    ASSERT_EQ(Fill(dv.t, ffk_any_int(7)), 0) << FetchError();
    ASSERT_EQ(Fill(cv.t, ffk_any_int(7)), 0) << FetchError();
    EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t)) << "bits " << int(dt.bits);
  }
}

// float16/bfloat16 (2-byte elements), complex64 (8) and complex128 (16) through the fill
// kernel: the device's bytes equal the CPU's fill of the same value, dense and strided.
TEST_F(CudaDevice, FillOfHalfAndComplexDtypesMatchesTheCpu) {
  const DLDataType kF16 = {kDLFloat, 16, 1}, kBF16 = {kDLBfloat, 16, 1}, kC64 = {kDLComplex, 64, 1};
  int64_t shape[2] = {33, 65};
  for (DLDataType dt : {kF16, kBF16, kC64, kC128}) {
    SCOPED_TRACE(testing::Message() << "code " << int(dt.code) << " bits " << int(dt.bits));
    T dev(ffk_tensor_zeros(2, shape, dt, kCuda0));
    T cpu(ffk_tensor_zeros(2, shape, dt, kCpu));
    ASSERT_NE(dev.t, nullptr) << FetchError();
    ASSERT_EQ(Fill(dev.t, ffk_any_float(-1.75)), 0) << FetchError();
    ASSERT_EQ(Fill(cpu.t, ffk_any_float(-1.75)), 0) << FetchError();
    EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t));
    // A strided view: every other row, transposed.
    T dv1(ffk_tensor_slice(dev.t, 0, 1, 33, 2)), cv1(ffk_tensor_slice(cpu.t, 0, 1, 33, 2));
    T dv(ffk_tensor_transpose(dv1.t, 0, 1)), cv(ffk_tensor_transpose(cv1.t, 0, 1));
    ASSERT_NE(dv.t, nullptr) << FetchError();
    bool complex = dt.code == kDLComplex;
    ASSERT_EQ(ffk_tensor_fill_complex(dv.t, 0.1, complex ? -3.0 : 0.0), 0) << FetchError();
    ASSERT_EQ(ffk_tensor_fill_complex(cv.t, 0.1, complex ? -3.0 : 0.0), 0) << FetchError();
    EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t));
  }
  T c(ffk_tensor_empty(1, std::vector<int64_t>{1000}.data(), kC64, kCuda0));
  ASSERT_EQ(ffk_tensor_fill_complex(c.t, 1.5, -2.5), 0) << FetchError();
  std::vector<float> parts = Values<float>(c.t);
  ASSERT_EQ(parts.size(), 2000u);
  for (size_t i = 0; i < parts.size(); i += 2) ASSERT_EQ(parts[i], 1.5f) << i;
  for (size_t i = 1; i < parts.size(); i += 2) ASSERT_EQ(parts[i], -2.5f) << i;
  // The same refusals as on the CPU, before any device work.
  EXPECT_EQ(ffk_tensor_fill_complex(c.t, 1e300, 0), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: (1e+300+0j) is out of range for complex64");
  T f(ffk_tensor_empty(1, std::vector<int64_t>{4}.data(), kF32, kCuda0));
  EXPECT_EQ(ffk_tensor_fill_complex(f.t, 1, 2), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value (1+2j) into float32");
}

// The same view of a CPU tensor and of its copy on the device.
struct ViewCase {
  const char* name;
  std::vector<int64_t> shape;
  std::function<ffk_tensor*(const ffk_tensor*)> view;
};

std::vector<ViewCase> ViewCases() {
  return {
      {"transposed", {5, 7}, [](const ffk_tensor* t) { return ffk_tensor_transpose(t, 0, 1); }},
      {"sliced with a step",
       {9, 10},
       [](const ffk_tensor* t) {
         T a(ffk_tensor_slice(t, 0, 1, 9, 3));
         return ffk_tensor_slice(a.t, 1, 2, 10, 2);
       }},
      {"permuted 3-d",
       {3, 4, 5},
       [](const ffk_tensor* t) {
         int64_t perm[3] = {2, 0, 1};
         return ffk_tensor_permute(t, 3, perm);
       }},
      {"overlapping (as_strided)",
       {6, 6},
       [](const ffk_tensor* t) {
         int64_t shape[2] = {4, 5}, strides[2] = {2, 1};
         return ffk_tensor_as_strided(t, 2, shape, strides, 3);
       }},
      {"sliced rows (contiguous runs)", {8, 16}, [](const ffk_tensor* t) { return ffk_tensor_slice(t, 0, 2, 7, 1); }},
  };
}

TEST_F(CudaDevice, StridedCopyKernelMatchesTheCpu) {
  for (DLDataType dt : {kI8, kI16, kF32, kF64, kC128}) {
    for (const ViewCase& c : ViewCases()) {
      SCOPED_TRACE(testing::Message() << c.name << ", bits " << int(dt.bits));
      T cpu(Pattern(c.shape, dt));
      T dev(CopyTo(cpu.t, kCuda0));
      ASSERT_NE(dev.t, nullptr);
      T cv(c.view(cpu.t)), dv(c.view(dev.t));
      ASSERT_NE(dv.t, nullptr) << FetchError();
      // Gather: a strided device source into a dense device tensor.
      T dense(ffk_tensor_contiguous(dv.t));
      ASSERT_NE(dense.t, nullptr) << FetchError();
      EXPECT_EQ(dense.dl()->device.device_type, kDLCUDA);
      T want(ffk_tensor_contiguous(cv.t));
      EXPECT_EQ(Bytes(dense.t), Bytes(want.t));
      // Scatter: a dense device source into a strided device destination (no overlap).
      if (std::string(c.name).find("overlapping") != std::string::npos) continue;
      T src_cpu(Pattern(Shape(cv.t), dt, 1));
      T src_dev(CopyTo(src_cpu.t, kCuda0));
      ASSERT_EQ(ffk_tensor_copy_from(dv.t, src_dev.t), 0) << FetchError();
      ASSERT_EQ(ffk_tensor_copy_from(cv.t, src_cpu.t), 0) << FetchError();
      EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t));
      // Strided to strided on the device: the view back into a transposed buffer.
      std::vector<int64_t> vs = Shape(cv.t);
      std::vector<int64_t> rev(vs.rbegin(), vs.rend());
      T dst_dev(ffk_tensor_zeros(static_cast<int32_t>(rev.size()), rev.data(), dt, kCuda0));
      T dst_cpu(ffk_tensor_zeros(static_cast<int32_t>(rev.size()), rev.data(), dt, kCpu));
      std::vector<int64_t> perm(rev.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
      const int32_t np = static_cast<int32_t>(perm.size());
      T ddv(ffk_tensor_permute(dst_dev.t, np, perm.data())), dcv(ffk_tensor_permute(dst_cpu.t, np, perm.data()));
      ASSERT_EQ(ffk_tensor_copy_from(ddv.t, dv.t), 0) << FetchError();
      ASSERT_EQ(ffk_tensor_copy_from(dcv.t, cv.t), 0) << FetchError();
      EXPECT_EQ(Bytes(dst_dev.t), Bytes(dst_cpu.t));
    }
  }
}

TEST_F(CudaDevice, MisalignedElementsAreMovedInSmallerWords) {
  // 2- and 4-byte elements starting at odd addresses: the kernels must fall back to
  // narrower words instead of faulting. Bytes are compared through memcpy on the host.
  T raw_cpu(Pattern({200}, kU8));
  T raw(CopyTo(raw_cpu.t, kCuda0));
  ASSERT_NE(raw.t, nullptr);
  ffk_storage* s = ffk_tensor_storage_borrow(raw.t);
  const unsigned char* host = static_cast<const unsigned char*>(ffk_tensor_data_ptr(raw_cpu.t));
  for (DLDataType dt : {kI16, kF32, kF64}) {
    for (uint64_t offset : {uint64_t{1}, uint64_t{2}, uint64_t{3}}) {
      SCOPED_TRACE(testing::Message() << "bits " << int(dt.bits) << " offset " << offset);
      size_t size = dt.bits / 8;
      int64_t shape[2] = {4, 5};
      T t(ffk_tensor_from_storage(s, 2, shape, nullptr, offset, dt));
      ASSERT_NE(t.t, nullptr) << FetchError();
      T tt(ffk_tensor_transpose(t.t, 0, 1));
      T dense(ffk_tensor_contiguous(tt.t));
      ASSERT_NE(dense.t, nullptr) << FetchError();
      std::vector<unsigned char> got = Bytes(dense.t), want;
      for (int j = 0; j < 5; ++j) {
        for (int i = 0; i < 4; ++i) {
          const unsigned char* e = host + offset + (i * 5 + j) * size;
          want.insert(want.end(), e, e + size);
        }
      }
      EXPECT_EQ(got, want);
    }
  }
  // Fill at an odd address: the element's bytes go out as a pattern of single bytes.
  int64_t shape[1] = {9};
  T odd(ffk_tensor_from_storage(s, 1, shape, nullptr, 101, kF32));
  ASSERT_EQ(Fill(odd.t, ffk_any_float(1.5)), 0) << FetchError();
  std::vector<unsigned char> all = Bytes(raw.t);
  float one_and_half = 1.5f;
  for (int i = 0; i < 9; ++i) EXPECT_EQ(memcmp(all.data() + 101 + 4 * i, &one_and_half, 4), 0) << i;
  EXPECT_EQ(all[100], host[100]);
  EXPECT_EQ(all[137], host[137]);
}

TEST_F(CudaDevice, DeviceToDeviceCopies) {
  T cpu(Pattern({6, 10}, kF32));
  T a(CopyTo(cpu.t, kCuda0));
  T b(CopyTo(a.t, kCuda0));  // contiguous: one cudaMemcpy
  ASSERT_NE(b.t, nullptr);
  EXPECT_NE(b.dl()->data, a.dl()->data);
  EXPECT_EQ(Bytes(b.t), Bytes(cpu.t));
  T at(ffk_tensor_transpose(a.t, 0, 1));
  T c(CopyTo(at.t, kCuda0));
  T ct(ffk_tensor_transpose(cpu.t, 0, 1));
  T want(ffk_tensor_contiguous(ct.t));
  EXPECT_EQ(Bytes(c.t), Bytes(want.t));
}

TEST_F(CudaDevice, CopiesBetweenTwoDevicesStageStridedSides) {
  if (ffk_device_count(kDLCUDA) < 2) GTEST_SKIP() << "needs two CUDA devices";
  DLDevice cuda1 = {kDLCUDA, 1};
  T cpu(Pattern({6, 10}, kI16));
  T a(CopyTo(cpu.t, kCuda0));
  T b(CopyTo(a.t, cuda1));  // cudaMemcpyPeer
  ASSERT_NE(b.t, nullptr);
  EXPECT_EQ(b.dl()->device.device_id, 1);
  EXPECT_EQ(Bytes(b.t), Bytes(cpu.t));
  int64_t tshape[2] = {10, 6};
  T dst(ffk_tensor_zeros(2, tshape, kI16, cuda1));
  T dst_cpu(ffk_tensor_zeros(2, tshape, kI16, kCpu));
  T dv(ffk_tensor_slice(dst.t, 1, 0, 6, 2)), dcv(ffk_tensor_slice(dst_cpu.t, 1, 0, 6, 2));  // [10, 3]
  T sv1(ffk_tensor_slice(a.t, 0, 0, 6, 2)), scv1(ffk_tensor_slice(cpu.t, 0, 0, 6, 2));       // [3, 10]
  T sv(ffk_tensor_transpose(sv1.t, 0, 1)), scv(ffk_tensor_transpose(scv1.t, 0, 1));          // [10, 3]
  ASSERT_EQ(ffk_tensor_copy_from(dv.t, sv.t), 0) << FetchError();
  ASSERT_EQ(ffk_tensor_copy_from(dcv.t, scv.t), 0) << FetchError();
  EXPECT_EQ(Bytes(dst.t), Bytes(dst_cpu.t));
}

TEST_F(CudaDevice, StridedHostSidesAndCudaSides) {
  T cpu(Pattern({6, 4}, kF64));
  T cpu_t(ffk_tensor_transpose(cpu.t, 0, 1));  // [4, 6], strided host source
  T want(ffk_tensor_contiguous(cpu_t.t));
  // strided host -> dense cuda
  T dense(CopyTo(cpu_t.t, kCuda0));
  ASSERT_NE(dense.t, nullptr);
  EXPECT_EQ(Bytes(dense.t), Bytes(want.t));
  // strided host -> strided cuda
  int64_t shape[2] = {6, 4};
  T dev(ffk_tensor_zeros(2, shape, kF64, kCuda0));
  T dev_t(ffk_tensor_transpose(dev.t, 0, 1));
  ASSERT_EQ(ffk_tensor_copy_from(dev_t.t, cpu_t.t), 0) << FetchError();
  EXPECT_EQ(Bytes(dev.t), Bytes(cpu.t));
  // dense host -> strided cuda, and strided cuda -> strided host
  T other(Pattern({4, 6}, kF64, 2));
  ASSERT_EQ(ffk_tensor_copy_from(dev_t.t, other.t), 0) << FetchError();
  T host_dst(ffk_tensor_zeros(2, shape, kF64, kCpu));
  T host_dst_t(ffk_tensor_transpose(host_dst.t, 0, 1));
  ASSERT_EQ(ffk_tensor_copy_from(host_dst_t.t, dev_t.t), 0) << FetchError();
  T host_back(ffk_tensor_contiguous(host_dst_t.t));
  EXPECT_EQ(Bytes(host_back.t), Bytes(other.t));
  // strided cuda -> dense host
  T dense_host(CopyTo(dev_t.t, kCpu));
  EXPECT_EQ(Bytes(dense_host.t), Bytes(other.t));
}

TEST_F(CudaDevice, ZeroSizeTensorsNeedNoDeviceWork) {
  int64_t shape[2] = {0, 3};
  T dev(ffk_tensor_empty(2, shape, kF32, kCuda0));
  ASSERT_NE(dev.t, nullptr) << FetchError();
  EXPECT_EQ(Fill(dev.t, ffk_any_float(1.0)), 0);
  T cpu(ffk_tensor_empty(2, shape, kF32, kCpu));
  EXPECT_EQ(ffk_tensor_copy_from(cpu.t, dev.t), 0);
  EXPECT_EQ(ffk_tensor_copy_from(dev.t, cpu.t), 0);
  T tt(ffk_tensor_transpose(dev.t, 0, 1));
  T c(ffk_tensor_contiguous(tt.t));
  EXPECT_NE(c.t, nullptr) << FetchError();
}

// A producer's deleter that counts its calls and releases the storage it was given.
int g_cuda_deletes = 0;
void CountingDeleter(DLManagedTensor* m) {
  ++g_cuda_deletes;
  ffk_object_release(static_cast<ffk_object*>(m->manager_ctx));
}

TEST_F(CudaDevice, DLPackKeepsTheCudaDeviceAndPointer) {
  int64_t shape[2] = {2, 3};
  ffk_tensor* t = ffk_tensor_empty(2, shape, kF32, kCuda0);
  ASSERT_NE(t, nullptr) << FetchError();
  ASSERT_EQ(Fill(t, ffk_any_float(4.0)), 0) << FetchError();
  void* data = ffk_tensor_dltensor_borrow(t)->data;
  DLManagedTensor* m = ffk_tensor_to_dlpack(t);
  DLManagedTensorVersioned* mv = ffk_tensor_to_dlpack_versioned(t);
  ffk_object_release(Obj(t));  // the exports keep it alive
  ASSERT_NE(m, nullptr);
  ASSERT_NE(mv, nullptr);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  EXPECT_EQ(m->dl_tensor.data, data);
  EXPECT_EQ(mv->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(mv->dl_tensor.data, data);
  T back(ffk_tensor_from_dlpack(m, nullptr));
  ASSERT_NE(back.t, nullptr) << FetchError();
  EXPECT_EQ(back.t, t) << "our own unchanged export comes back as the exported Tensor";
  EXPECT_EQ(back.dl()->device.device_type, kDLCUDA);
  EXPECT_EQ(back.dl()->data, data);
  EXPECT_NE(ffk_tensor_storage_borrow(back.t), nullptr) << "the exported Tensor keeps its CUDA storage";
  for (float v : Values<float>(back.t)) EXPECT_EQ(v, 4.0f);
  T vback(ffk_tensor_from_dlpack_versioned(mv, nullptr));
  ASSERT_NE(vback.t, nullptr) << FetchError();
  EXPECT_EQ(vback.t, t);
  EXPECT_EQ(vback.dl()->data, data);
  // A producer's CUDA tensor: imported, viewed, filled; its deleter runs once, at the end.
  ffk_storage_stats before = ffk_storage_get_stats(kCuda0);
  ffk_storage* s = ffk_storage_new(kCuda0, 6 * sizeof(float), 0);
  ASSERT_NE(s, nullptr) << FetchError();
  static int64_t pshape[2] = {3, 2};
  DLManagedTensor producer = {};
  producer.dl_tensor = {ffk_storage_data(s), kCuda0, 2, kF32, pshape, nullptr, 0};
  producer.manager_ctx = s;
  producer.deleter = CountingDeleter;
  g_cuda_deletes = 0;
  ffk_tensor* imported = ffk_tensor_from_dlpack(&producer, nullptr);
  ASSERT_NE(imported, nullptr) << FetchError();
  ffk_tensor* view = ffk_tensor_transpose(imported, 0, 1);
  ffk_object_release(Obj(imported));
  EXPECT_EQ(g_cuda_deletes, 0);  // the view keeps the import alive
  ASSERT_EQ(Fill(view, ffk_any_int(9)), 0) << FetchError();
  for (float v : Values<float>(view)) EXPECT_EQ(v, 9.0f);
  ffk_object_release(Obj(view));
  EXPECT_EQ(g_cuda_deletes, 1);
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), before));
}

TEST_F(CudaDevice, FourThreadsAllocateFillAndFree) {
  ffk_storage_stats before = ffk_storage_get_stats(kCuda0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([k, &failures] {
      for (int i = 0; i < 50; ++i) {
        int64_t shape[1] = {64 + 37 * i + k};
        ffk_tensor* t = ffk_tensor_empty(1, shape, kI32, kCuda0);
        ffk_any v = ffk_any_int(k * 1000 + i);
        if (t == nullptr || ffk_tensor_fill(t, &v) != 0) {
          ++failures;
          ffk_error_clear();
        } else if (i % 10 == 0) {
          for (int32_t x : Values<int32_t>(t)) {
            if (x != k * 1000 + i) {
              ++failures;
              break;
            }
          }
        }
        ffk_object_release(Obj(t));
        ffk_storage* s = ffk_storage_new(kCuda0, static_cast<size_t>(1 + i * k), 0);
        if (s == nullptr) {
          ++failures;
          ffk_error_clear();
        }
        ffk_object_release(Obj(s));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(SameStats(ffk_storage_get_stats(kCuda0), before));
}

// ---- Streams --------------------------------------------------------------------------------
//
// ffikit queues its CUDA work on the thread's current stream (ffikit/stream.h) and does not
// wait for it. The tests block a created stream with a host function (a Gate) until they
// open it, queue ffikit work behind it, and check through a second stream, or through
// CUDA's own calls, that nothing happened before the gate opened and everything did after.

// A host function that holds a stream until Open() (or 30 s, so a wrong wait in ffikit
// fails the test instead of hanging it). Must outlive the stream's work.
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> timed_out{false};
  static void CUDART_CB Hold(void* p) {
    auto* g = static_cast<Gate*>(p);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!g->open.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        g->timed_out = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  cudaError_t Block(cudaStream_t s) { return cudaLaunchHostFunc(s, Hold, this); }
  void Open() { open = true; }
};

// A created non-blocking stream (no implicit order with the legacy default stream),
// synchronised and destroyed at the end of its scope.
struct OwnedStream {
  cudaStream_t s = nullptr;
  OwnedStream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() {
    if (s != nullptr) {
      (void)cudaStreamSynchronize(s);
      (void)cudaStreamDestroy(s);
    }
  }
  int64_t handle() const { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(s)); }
};

// Makes `s` ffikit's current stream for cuda:0 for its scope, then restores the previous one.
struct CurrentStream {
  void* previous = nullptr;
  explicit CurrentStream(cudaStream_t s) {
    EXPECT_EQ(ffk_stream_set(kDLCUDA, 0, reinterpret_cast<void*>(s), &previous), 0) << FetchError();
  }
  CurrentStream(const CurrentStream&) = delete;
  CurrentStream& operator=(const CurrentStream&) = delete;
  ~CurrentStream() { EXPECT_EQ(ffk_stream_set(kDLCUDA, 0, previous, nullptr), 0) << FetchError(); }
};

// Pinned host floats: a device-to-host cudaMemcpyAsync into them returns at once (into
// pageable memory it would wait for the copy, and so for whatever the stream waits for).
struct PinnedFloats {
  float* p = nullptr;
  size_t n;
  PinnedFloats(size_t count, float init) : n(count) {
    EXPECT_EQ(cudaMallocHost(reinterpret_cast<void**>(&p), n * sizeof(float)), cudaSuccess);
    if (p != nullptr)
      for (size_t i = 0; i < n; ++i) p[i] = init;
  }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  ~PinnedFloats() {
    if (p != nullptr) (void)cudaFreeHost(p);
  }
  std::vector<float> values() const { return p != nullptr ? std::vector<float>(p, p + n) : std::vector<float>(); }
};

// The bytes of a dense device tensor, read with CUDA's own copy on stream `side` (not
// through ffikit, and not waiting for any other stream).
template <typename V>
std::vector<V> RawValues(const ffk_tensor* t, cudaStream_t side) {
  std::vector<V> out(static_cast<size_t>(ffk_tensor_nbytes(t)) / sizeof(V));
  EXPECT_EQ(cudaMemcpyAsync(out.data(), ffk_tensor_data_ptr(t), out.size() * sizeof(V), cudaMemcpyDeviceToHost, side),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(side), cudaSuccess);
  return out;
}

template <typename V>
bool AllEqual(const std::vector<V>& v, V x) {
  for (const V& e : v)
    if (!(e == x)) return false;
  return !v.empty();
}

TEST_F(CudaDevice, FillAndCopiesRunOnTheCurrentStreamWithoutWaiting) {
  int64_t shape[2] = {64, 48}, shape_t[2] = {48, 64};
  T a(ffk_tensor_zeros(2, shape, kF32, kCuda0)), b(ffk_tensor_zeros(2, shape, kF32, kCuda0));
  T c(ffk_tensor_zeros(2, shape_t, kF32, kCuda0)), d(ffk_tensor_zeros(2, shape, kF32, kCuda0));
  ASSERT_NE(d.t, nullptr) << FetchError();
  T at(ffk_tensor_transpose(a.t, 0, 1));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gate gate;
  OwnedStream s, side;
  {
    CurrentStream current(s.s);
    ASSERT_EQ(gate.Block(s.s), cudaSuccess);
    // Queued behind the gate: none of it may have run when the calls return.
    ASSERT_EQ(Fill(a.t, ffk_any_float(2.5)), 0) << FetchError();  // the fill kernel
    ASSERT_EQ(ffk_tensor_copy_from(b.t, a.t), 0) << FetchError();  // dense: cudaMemcpyAsync
    ASSERT_EQ(ffk_tensor_copy_from(c.t, at.t), 0) << FetchError();  // transposed: the copy kernel
    ASSERT_EQ(Fill(d.t, ffk_any_int(0)), 0) << FetchError();  // equal bytes: cudaMemsetAsync
    EXPECT_EQ(cudaStreamQuery(s.s), cudaErrorNotReady);
    // d gets ones from another stream now; ffikit's zeros, queued earlier, land after them.
    std::vector<float> ones(static_cast<size_t>(ffk_tensor_numel(d.t)), 1.0f);
    ASSERT_EQ(cudaMemcpyAsync(ffk_tensor_data_ptr(d.t), ones.data(), ones.size() * sizeof(float),
                              cudaMemcpyHostToDevice, side.s),
              cudaSuccess);
    EXPECT_TRUE(AllEqual(RawValues<float>(a.t, side.s), 0.0f)) << "the fill ran before its stream reached it";
    EXPECT_TRUE(AllEqual(RawValues<float>(b.t, side.s), 0.0f));
    EXPECT_TRUE(AllEqual(RawValues<float>(c.t, side.s), 0.0f));
    EXPECT_TRUE(AllEqual(RawValues<float>(d.t, side.s), 1.0f));
    gate.Open();
    // A copy to the host waits for the current stream: every result is there when it returns.
    EXPECT_TRUE(AllEqual(Values<float>(a.t), 2.5f));
    EXPECT_TRUE(AllEqual(Values<float>(b.t), 2.5f));
    EXPECT_TRUE(AllEqual(Values<float>(c.t), 2.5f));
    EXPECT_TRUE(AllEqual(Values<float>(d.t), 0.0f));
  }
  EXPECT_FALSE(gate.timed_out.load()) << "ffikit waited for a blocked stream";
}

// The zeroing of new storage and contiguous also go to the current stream (both allocate,
// which CUDA does without waiting for any stream).
TEST_F(CudaDevice, ZeroingAndContiguousRunOnTheCurrentStream) {
  int64_t shape[2] = {32, 40};
  T src(ffk_tensor_zeros(2, shape, kI32, kCuda0));
  ASSERT_NE(src.t, nullptr) << FetchError();
  T view(ffk_tensor_transpose(src.t, 0, 1));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gate gate;
  OwnedStream s, side;
  {
    CurrentStream current(s.s);
    ASSERT_EQ(gate.Block(s.s), cudaSuccess);
    T z(ffk_tensor_zeros(2, shape, kI32, kCuda0));  // cudaMalloc, then cudaMemsetAsync on s
    ASSERT_NE(z.t, nullptr) << FetchError();
    ASSERT_EQ(cudaMemsetAsync(ffk_tensor_data_ptr(z.t), 0x7f, static_cast<size_t>(ffk_tensor_nbytes(z.t)), side.s),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(side.s), cudaSuccess);
    ASSERT_EQ(Fill(src.t, ffk_any_int(-9)), 0) << FetchError();
    T dense(ffk_tensor_contiguous(view.t));  // the copy kernel, after the fill on the same stream
    ASSERT_NE(dense.t, nullptr) << FetchError();
    EXPECT_EQ(cudaStreamQuery(s.s), cudaErrorNotReady);
    gate.Open();
    EXPECT_TRUE(AllEqual(Values<int32_t>(z.t), 0)) << "the zeroing did not wait for its stream";
    EXPECT_TRUE(AllEqual(Values<int32_t>(dense.t), -9)) << "contiguous ran before the fill it follows";
  }
  EXPECT_FALSE(gate.timed_out.load()) << "ffikit waited for a blocked stream";
}

// __dlpack__(stream=consumer) on the producer's side: the consumer's stream waits for what
// ffikit queued on its own stream (an event), and the host does not.
TEST_F(CudaDevice, ExportStreamOrdersFfikitsWorkBeforeTheConsumersStream) {
  int64_t shape[1] = {4096};
  T t(ffk_tensor_zeros(1, shape, kF32, kCuda0));
  ASSERT_NE(t.t, nullptr) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gate gate;
  PinnedFloats seen(4096, -1.0f);
  OwnedStream s, consumer;
  {
    CurrentStream current(s.s);
    ASSERT_EQ(gate.Block(s.s), cudaSuccess);
    ASSERT_EQ(Fill(t.t, ffk_any_float(7.0)), 0) << FetchError();
    ASSERT_EQ(ffk_tensor_dlpack_export_stream(t.t, true, consumer.handle()), 0) << FetchError();
    // The consumer reads on its stream: it must wait for the gate, then see the fill.
    ASSERT_EQ(cudaMemcpyAsync(seen.p, ffk_tensor_data_ptr(t.t), seen.n * sizeof(float), cudaMemcpyDeviceToHost,
                              consumer.s),
              cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(consumer.s), cudaErrorNotReady) << "the consumer did not wait for ffikit's stream";
    gate.Open();
    ASSERT_EQ(cudaStreamSynchronize(consumer.s), cudaSuccess);
    EXPECT_TRUE(AllEqual(seen.values(), 7.0f));
  }
  EXPECT_FALSE(gate.timed_out.load());
}

TEST_F(CudaDevice, StreamOrderMakesTheConsumerWaitForTheProducer) {
  Gate gate;
  OwnedStream producer, consumer;
  ASSERT_EQ(gate.Block(producer.s), cudaSuccess);
  ASSERT_EQ(ffk_stream_order(kCuda0, producer.s, consumer.s), 0) << FetchError();
  EXPECT_EQ(cudaStreamQuery(consumer.s), cudaErrorNotReady);  // the wait is queued, not done by the host
  gate.Open();
  EXPECT_EQ(cudaStreamSynchronize(consumer.s), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(producer.s), cudaSuccess);
  // The special handles are accepted as they are.
  EXPECT_EQ(ffk_stream_order(kCuda0, nullptr, consumer.s), 0) << FetchError();
  EXPECT_EQ(ffk_stream_order(kCuda0, cudaStreamPerThread, cudaStreamLegacy), 0) << FetchError();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDA, 99}, producer.s, consumer.s), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"cannot order streams on device `cuda:99`", "no such CUDA device"}));
  EXPECT_FALSE(gate.timed_out.load());
}

// ffikit's fill and copies inside a CUDA graph capture on its current stream: recorded, not
// run; the graph then runs them, each launch reading the inputs anew.
TEST_F(CudaDevice, FillAndCopiesAreCapturedInACudaGraph) {
  int64_t shape[2] = {96, 80}, shape_t[2] = {80, 96};
  T src(ffk_tensor_zeros(2, shape, kF64, kCuda0)), dense(ffk_tensor_zeros(2, shape, kF64, kCuda0));
  T transposed(ffk_tensor_zeros(2, shape_t, kF64, kCuda0)), filled(ffk_tensor_zeros(2, shape, kI16, kCuda0));
  ASSERT_NE(filled.t, nullptr) << FetchError();
  T src_t(ffk_tensor_transpose(src.t, 0, 1));
  T host(ffk_tensor_zeros(2, shape, kF64, kCpu));
  ASSERT_EQ(Fill(src.t, ffk_any_float(1.25)), 0) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  OwnedStream s;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  {
    CurrentStream current(s.s);
    ASSERT_EQ(cudaStreamBeginCapture(s.s, cudaStreamCaptureModeGlobal), cudaSuccess);
    EXPECT_EQ(ffk_tensor_copy_from(dense.t, src.t), 0) << FetchError();
    EXPECT_EQ(ffk_tensor_copy_from(transposed.t, src_t.t), 0) << FetchError();
    EXPECT_EQ(Fill(filled.t, ffk_any_int(-3)), 0) << FetchError();
    // Copies with a host side would have to wait: refused, and the capture goes on.
    EXPECT_EQ(ffk_tensor_copy_from(host.t, dense.t), -1);
    EXPECT_EQ(FetchError(),
              "RuntimeError: cannot copy 61440 bytes from `cuda:0` to `cpu:0`: the current stream is capturing a "
              "CUDA graph, and a copy into host memory must wait for it (copy between host and device memory "
              "outside the capture)");
    EXPECT_EQ(ffk_tensor_copy_from(dense.t, host.t), -1);
    EXPECT_TRUE(PendingError("RuntimeError", {"capturing a CUDA graph", "from `cpu:0` to `cuda:0`"}));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    EXPECT_EQ(cudaStreamIsCapturing(s.s, &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusActive) << "the refusals must not invalidate the capture";
    ASSERT_EQ(cudaStreamEndCapture(s.s, &graph), cudaSuccess);
  }
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_GE(nodes, 3u) << "a node (or more) per captured operation";
  // Captured, not run.
  EXPECT_TRUE(AllEqual(Values<double>(dense.t), 0.0));
  EXPECT_TRUE(AllEqual(Values<double>(transposed.t), 0.0));
  EXPECT_TRUE(AllEqual(Values<int16_t>(filled.t), int16_t{0}));
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.s), cudaSuccess);
  EXPECT_TRUE(AllEqual(Values<double>(dense.t), 1.25));
  EXPECT_TRUE(AllEqual(Values<double>(transposed.t), 1.25));
  EXPECT_TRUE(AllEqual(Values<int16_t>(filled.t), int16_t{-3}));
  // A second launch copies the source's new values.
  ASSERT_EQ(Fill(src.t, ffk_any_float(-4.5)), 0) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.s), cudaSuccess);
  EXPECT_TRUE(AllEqual(Values<double>(dense.t), -4.5));
  EXPECT_TRUE(AllEqual(Values<double>(transposed.t), -4.5));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

// ffikit left on the legacy default stream while a blocking stream captures: the legacy
// stream is unusable then (CUDA's rule), and the error says what to do; the capture goes on.
TEST_F(CudaDevice, TheLegacyStreamDuringAnotherStreamsCaptureIsAClearError) {
  int64_t shape[1] = {16};
  T dev(ffk_tensor_zeros(1, shape, kF32, kCuda0)), host(ffk_tensor_zeros(1, shape, kF32, kCpu));
  ASSERT_NE(dev.t, nullptr) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t blocking = nullptr;  // created without cudaStreamNonBlocking: ordered with the legacy stream
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(ffk_tensor_copy_from(host.t, dev.t), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"cannot copy 64 bytes from `cuda:0` to `cpu:0`",
                                            "the legacy default stream cannot be used while another stream of the "
                                            "device captures a CUDA graph",
                                            "cudaErrorStreamCaptureImplicit 906"}));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_EQ(cudaStreamIsCapturing(blocking, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(blocking, &graph), cudaSuccess);
  if (graph != nullptr) {
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  }
  EXPECT_EQ(cudaStreamDestroy(blocking), cudaSuccess);
  (void)cudaGetLastError();
}

// cudaStreamPerThread (2) as ffikit's stream: each thread's work on its own default stream,
// ordered before a consumer's stream on export, and passed on as 2 to producers.
TEST_F(CudaDevice, PerThreadDefaultStreamWorks) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([k, &failures] {
      if (ffk_stream_set(kDLCUDA, 0, cudaStreamPerThread, nullptr) != 0) ++failures;
      int64_t out = 0;
      if (!ffk_dlpack_consumer_stream(kCuda0, &out) || out != 2) ++failures;
      int64_t shape[1] = {1000 + k};
      ffk_tensor* t = ffk_tensor_zeros(1, shape, kI32, kCuda0);
      ffk_any v = ffk_any_int(100 + k);
      if (t == nullptr || ffk_tensor_fill(t, &v) != 0) {
        ++failures;
        ffk_error_clear();
      } else {
        for (int32_t x : Values<int32_t>(t))
          if (x != 100 + k) ++failures;
        // The consumer passes ffikit's own stream: nothing to order.
        if (ffk_tensor_dlpack_export_stream(t, true, 2) != 0) ++failures;
      }
      ffk_object_release(Obj(t));
      (void)ffk_stream_set(kDLCUDA, 0, nullptr, nullptr);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  // Blocked per-thread stream: an export to a created stream makes that stream wait.
  int64_t shape[1] = {512};
  T t(ffk_tensor_zeros(1, shape, kF32, kCuda0));
  ASSERT_NE(t.t, nullptr) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gate gate;
  PinnedFloats seen(512, 0.0f);
  OwnedStream consumer;
  {
    CurrentStream current(cudaStreamPerThread);
    ASSERT_EQ(gate.Block(cudaStreamPerThread), cudaSuccess);
    ASSERT_EQ(Fill(t.t, ffk_any_float(3.0)), 0) << FetchError();
    ASSERT_EQ(ffk_tensor_dlpack_export_stream(t.t, true, consumer.handle()), 0) << FetchError();
    ASSERT_EQ(cudaMemcpyAsync(seen.p, ffk_tensor_data_ptr(t.t), seen.n * sizeof(float), cudaMemcpyDeviceToHost,
                              consumer.s),
              cudaSuccess);
    EXPECT_EQ(cudaStreamQuery(consumer.s), cudaErrorNotReady);
    gate.Open();
    ASSERT_EQ(cudaStreamSynchronize(consumer.s), cudaSuccess);
    EXPECT_TRUE(AllEqual(seen.values(), 3.0f));
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  }
  EXPECT_FALSE(gate.timed_out.load());
}

// Between two devices the copy runs after the source's stream has written the source.
TEST_F(CudaDevice, CopyBetweenDevicesWaitsForTheSourcesStream) {
  if (ffk_device_count(kDLCUDA) < 2) GTEST_SKIP() << "needs two CUDA devices";
  const DLDevice kCuda1 = {kDLCUDA, 1};
  int64_t shape[1] = {2048};
  T src(ffk_tensor_zeros(1, shape, kF32, kCuda0)), dst(ffk_tensor_zeros(1, shape, kF32, kCuda1));
  ASSERT_NE(dst.t, nullptr) << FetchError();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gate gate;
  OwnedStream s0;  // on device 0, the current device here
  {
    CurrentStream current(s0.s);
    ASSERT_EQ(gate.Block(s0.s), cudaSuccess);
    ASSERT_EQ(Fill(src.t, ffk_any_float(5.0)), 0) << FetchError();
    ASSERT_EQ(ffk_tensor_copy_from(dst.t, src.t), 0) << FetchError();  // on cuda:1's (legacy) stream
    gate.Open();
    EXPECT_TRUE(AllEqual(Values<float>(dst.t), 5.0f)) << "the peer copy read the source before its fill";
  }
  EXPECT_FALSE(gate.timed_out.load());
}

}  // namespace
