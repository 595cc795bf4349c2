// icount_tvm.cc - the TVM-FFI twin of icount_ffikit.c (bench/installed/icount.sh):
// `icount_tvm CASE N` runs N iterations of the C-ABI loop of installed_bench's
// "<CASE>/tvm_ffi" against the wheel's libtvm_ffi.so: call_0/2/8 (TVMFFIFunctionCall of a C
// safe call that checks and sums int arguments), typed_call_2 (TVMFFIFunctionCall of
// Function::FromTyped of the sum), retain_release (TVMFFIObjectIncRef + DecRef).
// Exits 1 on a failed call or a wrong result, 2 on bad usage.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/function.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

namespace ffi = ::tvm::ffi;

int64_t WrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }

int SumInts(void *, const TVMFFIAny *args, int32_t nargs, TVMFFIAny *result) {
  int64_t sum = 0;
  for (int32_t i = 0; i < nargs; ++i) {
    if (args[i].type_index != kTVMFFIInt) {
      TVMFFIErrorSetRaisedFromCStr("TypeError", "expected int arguments");
      return -1;
    }
    sum = WrapAdd(sum, args[i].v_int64);
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = sum;
  return 0;
}

volatile int64_t g_sink;

__attribute__((noinline)) int Calls(TVMFFIObjectHandle f, int n, int64_t iters) {
  TVMFFIAny args[8];
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < n; ++k) {
      args[k].type_index = kTVMFFIInt;
      args[k].zero_padding = 0;
      args[k].v_int64 = WrapAdd(i, k);
    }
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.zero_padding = 0;
    result.v_int64 = 0;
    if (__builtin_expect(TVMFFIFunctionCall(f, args, n, &result) != 0, 0) || result.type_index != kTVMFFIInt ||
        result.v_int64 != n * i + n * (n - 1) / 2) {
      std::fprintf(stderr, "icount_tvm: the call failed or returned a wrong result\n");
      return 1;
    }
    g_sink = result.v_int64;
  }
  return 0;
}

__attribute__((noinline)) int RetainRelease(TVMFFIObjectHandle obj, int64_t iters) {
  for (int64_t i = 0; i < iters; ++i) {
    TVMFFIObjectIncRef(obj);
    __asm__ volatile("" ::: "memory");
    TVMFFIObjectDecRef(obj);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: icount_tvm call_0|call_2|call_8|typed_call_2|retain_release N\n");
    return 2;
  }
  const char *c = argv[1];
  int64_t iters = std::strtoll(argv[2], nullptr, 10);
  TVMFFIObjectHandle sum = nullptr;
  if (TVMFFIFunctionCreate(nullptr, SumInts, nullptr, &sum) != 0) return 1;
  ffi::Function typed = ffi::Function::FromTyped([](int64_t a, int64_t b) { return WrapAdd(a, b); });
  TVMFFIObjectHandle typed_h = const_cast<void *>(static_cast<const void *>(typed.get()));  // the handle is the object
  int rc = 2;
  if (std::strcmp(c, "typed_call_2") == 0) rc = Calls(typed_h, 2, iters);
  else if (std::strcmp(c, "call_0") == 0) rc = Calls(sum, 0, iters);
  else if (std::strcmp(c, "call_2") == 0) rc = Calls(sum, 2, iters);
  else if (std::strcmp(c, "call_8") == 0) rc = Calls(sum, 8, iters);
  else if (std::strcmp(c, "retain_release") == 0) rc = RetainRelease(sum, iters);
  if (rc == 2) std::fprintf(stderr, "icount_tvm: unknown case `%s`\n", c);
  TVMFFIObjectDecRef(sum);
  return rc;
}
