// tvm_side.cc - TVM-FFI's side of installed_bench (see tvm_side.h and installed_bench.cc).
//
// Written against the public API of the installed wheel only (no detail namespaces, whose
// name changes between versions): a Function's C handle is the address of its object
// (TVM-FFI's ABI: the object starts with its TVMFFIObject header).
//   call_N/tvm_ffi          TVMFFIFunctionCall of TVMFFIFunctionCreate(SumInts): a C safe call
//                           that checks every argument is an int and sums them
//   call_N/tvm_ffi_cxx      an ffi::Function::FromPacked doing the same checks and sum, called
//                           from C++ as f(x, ...).cast<int64_t>() (informational)
//   typed_call_2/tvm_ffi    TVMFFIFunctionCall of Function::FromTyped(int64_t(int64_t, int64_t))
//   typed_call_2/tvm_ffi_cxx   that Function called as f(x, x + 1).cast<int64_t>()
//   any_box_unbox/tvm_ffi_cxx  ffi::Any a(x); a.cast<int64_t>() (inline C++)
//   retain_release/tvm_ffi     TVMFFIObjectIncRef + TVMFFIObjectDecRef of a live Function
//   retain_release/tvm_ffi_cxx an ffi::Function copied and destroyed (inline atomics)
#include "bench/installed/tvm_side.h"

#include <benchmark/benchmark.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/function.h>

#include "bench/tvm_ffi_calls.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ffk_installed {
namespace {

namespace ffi = ::tvm::ffi;

using namespace ffk_tvm_calls;  // WrapAdd, SumInts, Call_c<N>, Call_cxx<N>, AnyBoxUnbox_cxx (tvm_ffi_calls.h)

void RetainRelease_c(benchmark::State &state, const ffi::Function *f) {
  TVMFFIObjectHandle obj = Handle(*f);
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    TVMFFIObjectIncRef(obj);
    benchmark::ClobberMemory();
    TVMFFIObjectDecRef(obj);
  }
}

void RetainRelease_cxx(benchmark::State &state, const ffi::Function *f) {
  for (auto _ : state) {
    ffi::Function copy(*f);
    benchmark::DoNotOptimize(copy);
    benchmark::ClobberMemory();
  }
}

}  // namespace

void RegisterTvmPeers() {
  using benchmark::RegisterBenchmark;
  // Made once and never released (the process ends after the benchmarks).
  static TVMFFIObjectHandle sum_c = [] {
    TVMFFIObjectHandle h = nullptr;
    if (TVMFFIFunctionCreate(nullptr, SumInts, nullptr, &h) != 0) {
      std::fprintf(stderr, "tvm_side: TVMFFIFunctionCreate failed\n");
      std::abort();
    }
    return h;
  }();
  static const ffi::Function *sum_cxx = new ffi::Function(SumPackedCxx());
  static const ffi::Function *typed =
      new ffi::Function(ffi::Function::FromTyped([](int64_t a, int64_t b) { return WrapAdd(a, b); }));
  RegisterBenchmark("call_0/tvm_ffi", Call_c<0>, sum_c);
  RegisterBenchmark("call_0/tvm_ffi_cxx", Call_cxx<0>, sum_cxx);
  RegisterBenchmark("call_2/tvm_ffi", Call_c<2>, sum_c);
  RegisterBenchmark("call_2/tvm_ffi_cxx", Call_cxx<2>, sum_cxx);
  RegisterBenchmark("call_8/tvm_ffi", Call_c<8>, sum_c);
  RegisterBenchmark("call_8/tvm_ffi_cxx", Call_cxx<8>, sum_cxx);
  RegisterBenchmark("typed_call_2/tvm_ffi", Call_c<2>, Handle(*typed));
  RegisterBenchmark("typed_call_2/tvm_ffi_cxx", Call_cxx<2>, typed);
  RegisterBenchmark("any_box_unbox/tvm_ffi_cxx", AnyBoxUnbox_cxx);
  RegisterBenchmark("retain_release/tvm_ffi", RetainRelease_c, typed);
  RegisterBenchmark("retain_release/tvm_ffi_cxx", RetainRelease_cxx, typed);
}

}  // namespace ffk_installed
