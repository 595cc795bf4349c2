// The base fixture of every ffikit test suite, and helpers for common checks.
//
// Each suite declares `class Foo : public ffk::test::Test {};` and writes TEST_F(Foo, ...).
// TearDown fails the test when it left an error pending in the thread's slot or left
// any ffikit object alive, so every test ends with zero live objects.
#ifndef FFIKIT_TESTS_SUPPORT_FFK_TEST_H
#define FFIKIT_TESTS_SUPPORT_FFK_TEST_H

#include <ffikit/ffikit.h>
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

namespace ffk {
namespace test {

class Test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
};

// Moves the pending error out and returns "Kind: message" ("" when none is pending).
std::string FetchError();

// Runs `op` once per allocation it makes, failing the 1st, then the 2nd, ... allocation,
// until a run completes without the hook firing. `op` returns true on success. Each
// failed run must report a MemoryError and leave no new live objects; `check_unchanged`
// (optional) is called after each failed run to verify the inputs are intact. Returns the
// number of allocations the successful run made.
int SweepAllocationFailures(const std::function<bool()>& op,
                            const std::function<void()>& check_unchanged = nullptr);

// Checks the pending error: its kind, and that its message mentions each of `parts`.
// Moves the error out of the slot either way.
::testing::AssertionResult PendingError(const std::string& kind, std::initializer_list<std::string> parts = {});

// A DLTensor* view with a NULL pointer: a value containers must refuse to store.
ffk_any TensorView();

// The repr of a value as std::string (fails the test if repr fails).
std::string Repr(const ffk_any& v);

// An ffk_any that releases what it owns on scope exit (tests stay leak-free when an
// assertion returns early).
struct OwnedAny {
  ffk_any v = ffk_any_none();
  OwnedAny() = default;
  explicit OwnedAny(ffk_any x) : v(x) {}
  OwnedAny(const OwnedAny&) = delete;
  OwnedAny& operator=(const OwnedAny&) = delete;
  ~OwnedAny() { ffk_any_release(&v); }
};

}  // namespace test
}  // namespace ffk

#endif  // FFIKIT_TESTS_SUPPORT_FFK_TEST_H
