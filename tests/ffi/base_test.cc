// ffikit/base.h: versions.
#include <ffikit/ffikit.h>

#include "tests/support/ffk_test.h"

namespace {

class Base : public ffk::test::Test {};

TEST_F(Base, AbiVersionAndVersionMatchTheHeaders) {
  EXPECT_EQ(ffk_abi_version(), static_cast<uint32_t>(FFK_ABI_VERSION));
  EXPECT_STREQ(ffk_version(), FFK_VERSION);
}

}  // namespace
