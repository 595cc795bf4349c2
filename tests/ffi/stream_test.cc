// ffikit/stream.h: the current stream per (thread, device). Runs on every machine: the
// table stores handles and never calls a device runtime, so the handles here are made-up
// addresses. Each test runs its body on a fresh thread, whose table starts empty (the
// table is thread-local and would otherwise carry entries from one test to the next).
#include <ffikit/ffikit.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Stream : public ffk::test::Test {};
using ffk::test::FetchError;

const int32_t kCuda = FFK_DEVICE_CUDA;
const int32_t kRocm = FFK_DEVICE_ROCM;

// A made-up stream handle, distinct per (k), never NULL, 1 or 2.
void* Handle(int64_t k) { return reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + 16 * k)); }

// Runs `body` on a new thread (an empty table) and waits for it; any error it leaves
// pending fails the test.
void InThread(const std::function<void()>& body) {
  std::thread t([&] {
    body();
    EXPECT_EQ(FetchError(), "") << "the thread left an error pending";
  });
  t.join();
}

TEST_F(Stream, EveryDeviceStartsOnTheDefaultStream) {
  InThread([] {
    EXPECT_EQ(ffk_stream_get(kCuda, 0), nullptr);
    EXPECT_EQ(ffk_stream_get(kCuda, 7), nullptr);
    EXPECT_EQ(ffk_stream_get(FFK_DEVICE_CPU, 0), nullptr);
    EXPECT_EQ(ffk_stream_get(kRocm, 3), nullptr);
  });
}

TEST_F(Stream, SetReturnsThePreviousStreamAndGetTheCurrentOne) {
  InThread([] {
    void* previous = Handle(99);
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(1), &previous), 0) << FetchError();
    EXPECT_EQ(previous, nullptr);  // the default before
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(1));
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(2), &previous), 0) << FetchError();
    EXPECT_EQ(previous, Handle(1));
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(2));
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(3), nullptr), 0) << FetchError();  // previous is optional
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(3));
    // Restoring what was current before, as a context manager does on exit.
    ASSERT_EQ(ffk_stream_set(kCuda, 0, nullptr, &previous), 0) << FetchError();
    EXPECT_EQ(previous, Handle(3));
    EXPECT_EQ(ffk_stream_get(kCuda, 0), nullptr);
    // CUDA's special handles are stored as they are.
    for (uintptr_t special : {uintptr_t{1}, uintptr_t{2}}) {
      ASSERT_EQ(ffk_stream_set(kCuda, 0, reinterpret_cast<void*>(special), nullptr), 0) << FetchError();
      EXPECT_EQ(ffk_stream_get(kCuda, 0), reinterpret_cast<void*>(special));
    }
    ASSERT_EQ(ffk_stream_set(kCuda, 0, nullptr, nullptr), 0);
    // Setting the default on a device never set needs no entry and reports the default.
    previous = Handle(99);
    ASSERT_EQ(ffk_stream_set(kCuda, 5, nullptr, &previous), 0) << FetchError();
    EXPECT_EQ(previous, nullptr);
    EXPECT_EQ(ffk_stream_get(kCuda, 5), nullptr);
  });
}

TEST_F(Stream, EachDeviceTypeAndIdHasItsOwnStream) {
  InThread([] {
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(1), nullptr), 0) << FetchError();
    ASSERT_EQ(ffk_stream_set(kCuda, 1, Handle(2), nullptr), 0) << FetchError();
    ASSERT_EQ(ffk_stream_set(kRocm, 0, Handle(3), nullptr), 0) << FetchError();
    ASSERT_EQ(ffk_stream_set(FFK_DEVICE_CUDA_MANAGED, 0, Handle(4), nullptr), 0) << FetchError();
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(1));
    EXPECT_EQ(ffk_stream_get(kCuda, 1), Handle(2));
    EXPECT_EQ(ffk_stream_get(kRocm, 0), Handle(3));
    EXPECT_EQ(ffk_stream_get(FFK_DEVICE_CUDA_MANAGED, 0), Handle(4));
    EXPECT_EQ(ffk_stream_get(kRocm, 1), nullptr);
    EXPECT_EQ(ffk_stream_get(kCuda, 2), nullptr);
    EXPECT_EQ(ffk_stream_get(FFK_DEVICE_CUDA_HOST, 0), nullptr);
  });
}

// Past the 8 entries kept inline the table grows on the heap, doubling; every entry
// survives each move, and the block is freed when the thread exits (ASan's leak check).
TEST_F(Stream, MoreThanEightDevicesGrowTheTable) {
  InThread([] {
    const int32_t n = 100;
    for (int32_t id = 0; id < n; ++id) {
      ASSERT_EQ(ffk_stream_set(kCuda, id, Handle(id), nullptr), 0) << id << ": " << FetchError();
      // Everything set so far is still there after each growth.
      for (int32_t j = 0; j <= id; ++j) ASSERT_EQ(ffk_stream_get(kCuda, j), Handle(j)) << j << " after " << id;
    }
    EXPECT_EQ(ffk_stream_get(kCuda, n), nullptr);
    void* previous = nullptr;
    ASSERT_EQ(ffk_stream_set(kCuda, 77, Handle(1000), &previous), 0) << FetchError();
    EXPECT_EQ(previous, Handle(77));
    EXPECT_EQ(ffk_stream_get(kCuda, 77), Handle(1000));
    EXPECT_EQ(ffk_stream_get(kCuda, 76), Handle(76));
  });
}

TEST_F(Stream, WhatAThreadSetsIsInvisibleToOthers) {
  InThread([] {
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(1), nullptr), 0) << FetchError();
    for (int32_t id = 1; id < 12; ++id) ASSERT_EQ(ffk_stream_set(kCuda, id, Handle(id), nullptr), 0);
    std::atomic<int> seen{0};
    std::vector<std::thread> others;
    for (int k = 0; k < 4; ++k) {
      others.emplace_back([k, &seen] {
        if (ffk_stream_get(kCuda, 0) != nullptr || ffk_stream_get(kCuda, 11) != nullptr) ++seen;
        // Each sets its own, including past the inline entries, and sees only those.
        for (int32_t id = 0; id < 20; ++id) {
          if (ffk_stream_set(kCuda, id, Handle(100 * (k + 1) + id), nullptr) != 0) ++seen;
        }
        for (int32_t id = 0; id < 20; ++id) {
          if (ffk_stream_get(kCuda, id) != Handle(100 * (k + 1) + id)) ++seen;
        }
      });
    }
    for (std::thread& t : others) t.join();
    EXPECT_EQ(seen.load(), 0);
    // The other threads' sets did not touch this thread's table.
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(1));
    for (int32_t id = 1; id < 12; ++id) EXPECT_EQ(ffk_stream_get(kCuda, id), Handle(id));
    EXPECT_EQ(ffk_stream_get(kCuda, 12), nullptr);
  });
}

TEST_F(Stream, BadDeviceTypesAndIdsAreValueErrorsThatChangeNothing) {
  InThread([] {
    ASSERT_EQ(ffk_stream_set(kCuda, 0, Handle(1), nullptr), 0) << FetchError();
    void* previous = Handle(99);
    EXPECT_EQ(ffk_stream_set(99, 0, Handle(2), &previous), -1);
    EXPECT_EQ(FetchError(), "ValueError: cannot set a stream: unknown device type 99");
    EXPECT_EQ(ffk_stream_set(0, 0, Handle(2), nullptr), -1);
    EXPECT_EQ(FetchError(), "ValueError: cannot set a stream: unknown device type 0");
    EXPECT_EQ(ffk_stream_set(kCuda, -1, Handle(2), &previous), -1);
    EXPECT_EQ(FetchError(), "ValueError: cannot set a stream: device id -1 is negative");
    EXPECT_EQ(previous, Handle(99)) << "previous is left alone on failure";
    EXPECT_EQ(ffk_stream_get(kCuda, 0), Handle(1));
    EXPECT_EQ(ffk_stream_get(99, 0), nullptr);  // get cannot fail: NULL for a bad device
    EXPECT_EQ(ffk_stream_get(kCuda, -1), nullptr);
  });
}

// A failed growth (MemoryError) leaves every entry as it was, and a later set succeeds.
TEST_F(Stream, AFailedGrowthChangesNothing) {
  InThread([] {
    for (int32_t id = 0; id < 8; ++id) ASSERT_EQ(ffk_stream_set(kCuda, id, Handle(id), nullptr), 0);
    auto intact = [](int32_t count) {
      for (int32_t id = 0; id < count; ++id) EXPECT_EQ(ffk_stream_get(kCuda, id), Handle(id)) << id;
      EXPECT_EQ(ffk_stream_get(kCuda, count), nullptr);
    };
    // The first heap block.
    ASSERT_EQ(ffk_debug_fail_allocation(1), 0);
    EXPECT_EQ(ffk_stream_set(kCuda, 8, Handle(8), nullptr), -1);
    EXPECT_FALSE(ffk_debug_fail_allocation_armed());
    ffk_debug_fail_allocation(0);
    EXPECT_TRUE(ffk::test::PendingError("MemoryError"));
    intact(8);
    // Setting an existing entry needs no memory.
    ASSERT_EQ(ffk_debug_fail_allocation(1), 0);
    EXPECT_EQ(ffk_stream_set(kCuda, 3, Handle(3), nullptr), 0) << FetchError();
    EXPECT_TRUE(ffk_debug_fail_allocation_armed());
    ffk_debug_fail_allocation(0);
    for (int32_t id = 8; id < 16; ++id) ASSERT_EQ(ffk_stream_set(kCuda, id, Handle(id), nullptr), 0);
    intact(16);
    // The second growth, which moves the entries to a bigger block.
    ASSERT_EQ(ffk_debug_fail_allocation(1), 0);
    EXPECT_EQ(ffk_stream_set(kCuda, 16, Handle(16), nullptr), -1);
    ffk_debug_fail_allocation(0);
    EXPECT_TRUE(ffk::test::PendingError("MemoryError"));
    intact(16);
    for (int32_t id = 16; id < 40; ++id) ASSERT_EQ(ffk_stream_set(kCuda, id, Handle(id), nullptr), 0);
    intact(40);
  });
}

// Many threads that grow their tables and exit: each frees its own block (ASan, TSan).
TEST_F(Stream, ThreadsThatGrowTheirTablesExitCleanly) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int k = 0; k < 8; ++k) {
    threads.emplace_back([k, &failures] {
      for (int32_t id = 0; id < 9 + 7 * k; ++id) {
        if (ffk_stream_set(kCuda, id, Handle(id + k), nullptr) != 0) ++failures;
      }
      if (ffk_stream_get(kCuda, 8 + 7 * k) != Handle(8 + 8 * k)) ++failures;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
