// ffikit/debug.h: live-object counters, and the fail-the-Nth-allocation sweep over every
// public function that creates something. Each constructor must fail with MemoryError and
// leak nothing at every allocation it makes.
#include <ffikit/ffikit.h>

#include <functional>
#include <string>
#include <thread>

#include "tests/support/ffk_test.h"

namespace {

class Debug : public ffk::test::Test {};

const std::string kLong(100, 'z');

// Wraps an object-returning constructor as a sweepable operation that releases its result.
template <class T>
std::function<bool()> Object(std::function<T*()> make) {
  return [make] {
    T* obj = make();
    if (obj == nullptr) return false;
    ffk_object_release(reinterpret_cast<ffk_object*>(obj));
    return true;
  };
}

std::function<bool()> Value(std::function<int(ffk_any*)> make) {
  return [make] {
    ffk_any v;
    if (make(&v) != 0) return false;
    ffk_any_release(&v);
    return true;
  };
}

TEST_F(Debug, LiveCountersTrackEachTypeAndTheTotal) {
  EXPECT_TRUE(ffk_debug_hooks_available());
  ffk_string* s = ffk_string_new("abc", 3);
  int64_t dims[1] = {4};
  ffk_shape* sh = ffk_shape_new(dims, 1);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 1);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 1);
  EXPECT_EQ(ffk_debug_live_objects(-1), 2);
  ffk_object_release(&s->header);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 0);
  ffk_object_release(&sh->header);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

TEST_F(Debug, EveryConstructorFailsCleanlyAtEachAllocation) {
  int64_t dims[3] = {2, 3, 4};
  struct Case {
    const char* name;
    std::function<bool()> op;
  } cases[] = {
      {"ffk_string_new", Object<ffk_string>([] { return ffk_string_new(kLong.data(), kLong.size()); })},
      {"ffk_string_from_cstr", Object<ffk_string>([] { return ffk_string_from_cstr(kLong.c_str()); })},
      {"ffk_bytes_new", Object<ffk_bytes>([] { return ffk_bytes_new(kLong.data(), kLong.size()); })},
      {"ffk_shape_new", Object<ffk_shape>([&] { return ffk_shape_new(dims, 3); })},
      {"ffk_error_new", Object<ffk_error>([] { return ffk_error_new("ValueError", kLong.c_str()); })},
      {"ffk_object_alloc", Object<ffk_object>([] {
         return ffk_object_alloc(FFK_TYPE_OBJECT, 64, [](void* self, int which) {
           if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
         });
       })},
      {"ffk_any_str", Value([](ffk_any* v) { return ffk_any_str(kLong.data(), kLong.size(), v); })},
      {"ffk_any_cstr", Value([](ffk_any* v) { return ffk_any_cstr(kLong.c_str(), v); })},
      {"ffk_any_bytes", Value([](ffk_any* v) { return ffk_any_bytes(kLong.data(), kLong.size(), v); })},
      {"ffk_any_to_owned", Value([](ffk_any* v) {
         ffk_any raw = ffk_any_raw_str(kLong.c_str());
         return ffk_any_to_owned(&raw, v);
       })},
      {"ffk_any_repr", Object<ffk_string>([&] {
         ffk_shape* s = ffk_shape_new(dims, 3);
         if (s == nullptr) return static_cast<ffk_string*>(nullptr);
         ffk_any v = ffk_any_object_steal(&s->header);
         ffk_string* r = ffk_any_repr(&v);
         ffk_any_release(&v);
         return r;
       })},
      {"ffk_mem_alloc", [] {
         void* p = ffk_mem_alloc(32);
         ffk_mem_free(p);
         return p != nullptr;
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    int allocations = ffk::test::SweepAllocationFailures(c.op);
    EXPECT_GE(allocations, 1) << c.name << " made no allocation to fail";
  }
}

TEST_F(Debug, SmallValuesAllocateNothing) {
  int64_t before = ffk_debug_allocation_count();
  ffk_any s, b;
  ASSERT_EQ(ffk_any_cstr("seven b", &s), 0);
  ASSERT_EQ(ffk_any_bytes("1234567", 7, &b), 0);
  EXPECT_EQ(ffk_debug_allocation_count(), before);
}

TEST_F(Debug, TheHookOnlyFailsTheArmingThread) {
  ffk_debug_fail_allocation(1);
  bool other_ok = false;
  std::thread t([&] {
    ffk_string* s = ffk_string_new("from another thread", 19);
    other_ok = s != nullptr;
    ffk_object_release(s ? &s->header : nullptr);
  });
  t.join();
  EXPECT_TRUE(other_ok);
  EXPECT_TRUE(ffk_debug_fail_allocation_armed());
  ffk_debug_fail_allocation(0);
}

TEST_F(Debug, FailAllocationCountsFromTheNextAllocation) {
  EXPECT_EQ(ffk_debug_fail_allocation(-1), -1);
  EXPECT_NE(ffk::test::FetchError().find("-1"), std::string::npos);
  int64_t before = ffk_debug_allocation_count();
  ASSERT_EQ(ffk_debug_fail_allocation(3), 0);
  void* a = ffk_mem_alloc(1);
  void* b = ffk_mem_alloc(1);
  EXPECT_TRUE(ffk_debug_fail_allocation_armed());
  void* c = ffk_mem_alloc(1);
  EXPECT_FALSE(ffk_debug_fail_allocation_armed());
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(c, nullptr);
  ffk_error_clear();
  void* d = ffk_mem_alloc(1);  // the hook fires once
  EXPECT_NE(d, nullptr);
  // a, b, c (failed), the MemoryError object c raised, d.
  EXPECT_EQ(ffk_debug_allocation_count() - before, 5);
  ffk_mem_free(a);
  ffk_mem_free(b);
  ffk_mem_free(d);
}

}  // namespace
