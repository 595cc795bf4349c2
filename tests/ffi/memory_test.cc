// ffikit/memory.h: the allocation functions and their MemoryErrors.
#include <ffikit/ffikit.h>

#include "tests/support/ffk_test.h"

namespace {

class Memory : public ffk::test::Test {};

TEST_F(Memory, FunctionsRaiseMemoryErrorWhenHookFires) {
  ffk_debug_fail_allocation(1);
  EXPECT_EQ(ffk_mem_alloc(100), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "MemoryError: out of memory allocating 100 bytes");
  void* p = ffk_mem_alloc(10);
  ASSERT_NE(p, nullptr);
  ffk_debug_fail_allocation(1);
  EXPECT_EQ(ffk_mem_realloc(p, 1000), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "MemoryError: out of memory reallocating to 1000 bytes");
  ffk_mem_free(p);  // the old block is still the caller's
  EXPECT_EQ(ffk_mem_calloc(SIZE_MAX / 2, 4), nullptr);
  EXPECT_NE(ffk::test::FetchError().find("overflows size_t"), std::string::npos);
  int* z = static_cast<int*>(ffk_mem_calloc(16, sizeof(int)));
  ASSERT_NE(z, nullptr);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(z[i], 0);
  ffk_mem_free(z);
  ffk_mem_free(nullptr);
}

}  // namespace
