#include "tests/support/ffk_test.h"

namespace ffk {
namespace test {

void Test::SetUp() {
  ASSERT_TRUE(ffk_debug_hooks_available()) << "tests must link the *_testing libraries";
  ASSERT_FALSE(ffk_error_occurred()) << "an error was pending before the test: " << FetchError();
  ASSERT_EQ(ffk_debug_live_objects(-1), 0) << "objects alive before the test started";
}

void Test::TearDown() {
  ffk_debug_fail_allocation(0);
  EXPECT_FALSE(ffk_error_occurred()) << "the test left an error pending: " << FetchError();
  ffk_error_clear();
  EXPECT_EQ(ffk_debug_live_objects(-1), 0) << "the test left ffikit objects alive";
}

::testing::AssertionResult PendingError(const std::string& kind, std::initializer_list<std::string> parts) {
  std::string e = FetchError();
  if (e.rfind(kind + ": ", 0) != 0) {
    return ::testing::AssertionFailure() << "expected a " << kind << ", got \"" << e << "\"";
  }
  for (const std::string& p : parts) {
    if (e.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "\"" << e << "\" does not mention " << p;
    }
  }
  return ::testing::AssertionSuccess() << e;
}

ffk_any TensorView() {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_DLTENSOR_PTR;
  return v;
}

std::string FetchError() {
  ffk_error* err = ffk_error_fetch();
  if (err == nullptr) return "";
  std::string text = std::string(ffk_error_kind(err)) + ": " + ffk_error_message(err);
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
  return text;
}

int SweepAllocationFailures(const std::function<bool()>& op,
                            const std::function<void()>& check_unchanged) {
  for (int n = 1; n < 100000; ++n) {
    int64_t live_before = ffk_debug_live_objects(-1);
    ffk_debug_fail_allocation(n);
    bool ok = op();
    bool fired = !ffk_debug_fail_allocation_armed();
    ffk_debug_fail_allocation(0);
    if (!fired) {
      EXPECT_TRUE(ok) << "the operation failed without an allocation failure: " << FetchError();
      return n - 1;
    }
    if (ok) {
      // The failure was absorbed (e.g. a cache that is allowed to miss); keep sweeping.
      continue;
    }
    ffk_error* err = ffk_error_fetch();
    EXPECT_NE(err, nullptr) << "failing allocation #" << n << " returned failure without an error";
    if (err != nullptr) {
      EXPECT_STREQ(ffk_error_kind(err), FFK_ERR_MEMORY)
          << "failing allocation #" << n << ": " << ffk_error_message(err);
      ffk_object_release(reinterpret_cast<ffk_object*>(err));
    }
    EXPECT_EQ(ffk_debug_live_objects(-1), live_before) << "failing allocation #" << n << " leaked";
    if (check_unchanged) check_unchanged();
    if (::testing::Test::HasFailure()) return -1;
  }
  ADD_FAILURE() << "operation never completed";
  return -1;
}

std::string Repr(const ffk_any& v) {
  ffk_string* s = ffk_any_repr(&v);
  if (s == nullptr) {
    ADD_FAILURE() << "repr failed: " << FetchError();
    return "";
  }
  std::string out(ffk_string_data(s), ffk_string_size(s));
  ffk_object_release(&s->header);
  return out;
}

}  // namespace test
}  // namespace ffk
