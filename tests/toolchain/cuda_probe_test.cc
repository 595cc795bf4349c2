// Built only when the CUDA toolkit was found (otherwise Bazel reports it SKIPPED).
// Without a GPU or driver every CUDA call fails (error 35, insufficient driver, here):
// the test then skips visibly with the reason instead of passing silently.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

TEST(CudaToolchain, DeviceCountOrVisibleSkip) {
  int count = 0;  // cudaGetDeviceCount leaves it unchanged on failure
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    GTEST_SKIP() << "no CUDA device: " << cudaGetErrorName(rc) << " (" << static_cast<int>(rc)
                 << "): " << cudaGetErrorString(rc);
  }
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemset(p, 0x5a, 1 << 20), cudaSuccess);
  unsigned char host[16];
  ASSERT_EQ(cudaMemcpy(host, p, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned char b : host) EXPECT_EQ(b, 0x5a);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}
