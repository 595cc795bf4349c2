// The base fixture of suites that call the testing.* library (testing/testing.h): it
// registers the library's types and globals before each test and unregisters them after,
// so each test still ends with no live objects.
//
//   class Enum : public ffk::test::WithTesting {};
#ifndef FFIKIT_TESTS_SUPPORT_WITH_TESTING_H
#define FFIKIT_TESTS_SUPPORT_WITH_TESTING_H

#include "testing/testing.h"
#include "tests/support/ffk_test.h"

namespace ffk {
namespace test {

class WithTesting : public Test {
 protected:
  void SetUp() override {
    Test::SetUp();
    ASSERT_EQ(ffk_testing_register(), 0) << FetchError();
  }
  void TearDown() override {
    ffk_testing_unregister();
    Test::TearDown();
  }
};

}  // namespace test
}  // namespace ffk

#endif  // FFIKIT_TESTS_SUPPORT_WITH_TESTING_H
