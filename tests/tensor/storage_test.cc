// ffikit/storage.h: Storage objects, the allocator registry, alignment and statistics.
#include <ffikit/ffikit.h>

#include <cstdint>
#include <cstring>

#include "tests/support/ffk_test.h"

namespace {

class Storage : public ffk::test::Test {};
using ffk::test::FetchError;

const DLDevice kCpu = {kDLCPU, 0};
ffk_object* Obj(ffk_storage* s) { return reinterpret_cast<ffk_object*>(s); }

TEST_F(Storage, CpuStorageIsAlignedAndCounted) {
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  ffk_storage* s = ffk_storage_new(kCpu, 1000, 0);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(s)) % 64, 0u);
  EXPECT_EQ(ffk_storage_nbytes(s), 1000u);
  EXPECT_EQ(ffk_storage_device(s).device_type, kDLCPU);
  memset(ffk_storage_data(s), 0xab, 1000);
  ffk_storage* big = ffk_storage_new_zeroed(kCpu, 4096, 256);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(big)) % 256, 0u);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(static_cast<char*>(ffk_storage_data(big))[i], 0);
  ffk_storage_stats during = ffk_storage_get_stats(kCpu);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 5096);
  EXPECT_EQ(during.blocks_in_use - before.blocks_in_use, 2);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  ffk_object_release(Obj(s));
  ffk_object_release(Obj(big));
  ffk_storage_stats after = ffk_storage_get_stats(kCpu);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.blocks_in_use, before.blocks_in_use);
  EXPECT_GE(after.peak_bytes_in_use, during.bytes_in_use);
  ffk_storage_reset_peak(kCpu);
  EXPECT_EQ(ffk_storage_get_stats(kCpu).peak_bytes_in_use, after.bytes_in_use);
}

TEST_F(Storage, SmallAndLargeCpuStorageAlikeAreAlignedZeroableAndCounted) {
  // Small CPU storage keeps its bytes inside the Storage object; larger storage or a
  // larger alignment goes through the allocator. Both must look the same from outside.
  for (size_t nbytes : {0, 1, 24, 255, 256, 257, 1000}) {
    for (size_t alignment : {0, 8, 64, 128, 256, 512, 4096}) {
      size_t want = alignment == 0 ? 64 : alignment;
      ffk_storage_stats before = ffk_storage_get_stats(kCpu);
      ffk_storage* s = ffk_storage_new(kCpu, nbytes, alignment);
      ffk_storage* z = ffk_storage_new_zeroed(kCpu, nbytes, alignment);
      ASSERT_NE(s, nullptr) << FetchError();
      ASSERT_NE(z, nullptr) << FetchError();
      for (ffk_storage* x : {s, z}) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(x)) % want, 0u) << nbytes << " " << alignment;
        EXPECT_EQ(ffk_storage_nbytes(x), nbytes);
      }
      for (size_t i = 0; i < nbytes; ++i) ASSERT_EQ(static_cast<char*>(ffk_storage_data(z))[i], 0) << i;
      if (nbytes > 0) memset(ffk_storage_data(s), 0x5a, nbytes);  // every byte writable (ASan)
      ffk_storage_stats during = ffk_storage_get_stats(kCpu);
      EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, static_cast<int64_t>(2 * nbytes));
      EXPECT_EQ(during.blocks_in_use - before.blocks_in_use, 2);
      ffk_object_release(Obj(s));
      ffk_object_release(Obj(z));
      EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
    }
  }
}

TEST_F(Storage, EmptyStorageIsValid) {
  ffk_storage* s = ffk_storage_new(kCpu, 0, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ffk_storage_nbytes(s), 0u);
  ffk_object_release(Obj(s));
}

TEST_F(Storage, BadRequestsNameTheValue) {
  EXPECT_EQ(ffk_storage_new(kCpu, 8, 48), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: storage alignment 48 is not a power of two up to 4096");
  EXPECT_EQ(ffk_storage_new(kCpu, 8, 8192), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: storage alignment 8192 is not a power of two up to 4096");
  EXPECT_EQ(ffk_storage_new(kCpu, SIZE_MAX, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: storage of 18446744073709551615 bytes is larger than PTRDIFF_MAX");
  EXPECT_EQ(ffk_storage_new(DLDevice{static_cast<DLDeviceType>(99), 0}, 8, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot make storage on device type 99, id 0");
  EXPECT_EQ(ffk_storage_new(DLDevice{kDLVulkan, 0}, 8, 0), nullptr);
  EXPECT_EQ(FetchError(), "RuntimeError: cannot allocate on device `vulkan:0`: no allocator is registered for it");
}

TEST_F(Storage, CudaWithoutCudaIsAClearError) {
  ffk_allocator a;
  if (ffk_allocator_get(kDLCUDA, &a) == 1) GTEST_SKIP() << "built with CUDA; covered by the gpu tests";
  EXPECT_EQ(ffk_device_count(kDLCUDA), 0);
  EXPECT_EQ(ffk_device_count(kDLCUDAHost), 0);
  EXPECT_EQ(ffk_storage_new(DLDevice{kDLCUDA, 0}, 8, 0), nullptr);
  EXPECT_EQ(FetchError(), "RuntimeError: cannot allocate on device `cuda:0`: ffikit was built without CUDA");
  EXPECT_EQ(ffk_storage_new(DLDevice{kDLCUDAHost, 0}, 8, 0), nullptr);
  EXPECT_EQ(FetchError(), "RuntimeError: cannot allocate on device `cuda_host:0`: ffikit was built without CUDA");
}

TEST_F(Storage, DeviceCountKnowsTheCpuAndRefusesUnknownTypes) {
  EXPECT_EQ(ffk_device_count(kDLCPU), 1);
  EXPECT_EQ(ffk_device_count(kDLVulkan), 0);  // known, but ffikit cannot enumerate it
  EXPECT_GE(ffk_device_count(kDLCUDA), 0);    // 0 without CUDA, a driver or a device: never an error
  EXPECT_FALSE(ffk_error_occurred()) << FetchError();
  EXPECT_EQ(ffk_device_count(99), -1);
  EXPECT_EQ(FetchError(), "ValueError: device_count: unknown device type 99");
  EXPECT_EQ(ffk_device_count(0), -1);
  EXPECT_EQ(FetchError(), "ValueError: device_count: unknown device type 0");
}

// A user allocator that counts and delegates to the previous one.
ffk_allocator g_prev;
int g_allocs, g_frees;
void* CountingAllocate(void*, DLDevice d, size_t n, size_t align) {
  ++g_allocs;
  return g_prev.allocate(g_prev.ctx, d, n, align);
}
void CountingFree(void*, DLDevice d, void* p, size_t n) {
  ++g_frees;
  g_prev.free(g_prev.ctx, d, p, n);
}

TEST_F(Storage, UserAllocatorsPlugInAndStorageKeepsItsOwn) {
  ffk_allocator mine = {"counting", nullptr, CountingAllocate, CountingFree, nullptr};
  g_allocs = g_frees = 0;
  ASSERT_EQ(ffk_allocator_register(kDLCPU, &mine, &g_prev), 0);
  ffk_storage* s = ffk_storage_new(kCpu, 64, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(g_allocs, 1);
  ffk_allocator restored;
  ASSERT_EQ(ffk_allocator_register(kDLCPU, &g_prev, &restored), 0);  // put the CPU one back
  EXPECT_STREQ(restored.name, "counting");
  ffk_object_release(Obj(s));  // freed by the allocator that made it
  EXPECT_EQ(g_frees, 1);
  ffk_allocator bad = {"bad", nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(ffk_allocator_register(kDLCPU, &bad, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: allocator_register: the allocator for cpu lacks allocate or free");
  EXPECT_EQ(ffk_allocator_register(0, &mine, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: allocator_register: unknown device type 0");
}

TEST_F(Storage, ConstructorsSurviveEveryAllocationFailure) {
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  ffk::test::SweepAllocationFailures(
      [] {
        ffk_storage* s = ffk_storage_new_zeroed(kCpu, 100, 128);
        if (s == nullptr) return false;
        ffk_object_release(Obj(s));
        return true;
      },
      [&] {
        EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
        EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, before.blocks_in_use);
      });
}

}  // namespace
