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

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ffk_installed {
namespace {

namespace ffi = ::tvm::ffi;

inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

inline int64_t Expected(int n, int64_t x) { return n * x + n * (n - 1) / 2; }

void SkipWithTvmError(benchmark::State &state, const char *what) {
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  std::string msg = what;
  if (err != nullptr) {
    TVMFFIErrorCell *cell = TVMFFIErrorGetCellPtr(err);
    msg += ": " + std::string(cell->kind.data, cell->kind.size) + ": " + std::string(cell->message.data, cell->message.size);
    TVMFFIObjectDecRef(err);
  }
  state.SkipWithError(msg.c_str());
}

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

TVMFFIObjectHandle Handle(const ffi::Function &f) { return const_cast<void *>(static_cast<const void *>(f.get())); }

inline int CallC(TVMFFIObjectHandle f, int n, int64_t x, TVMFFIAny *args, int64_t *out) {
  for (int k = 0; k < n; ++k) {
    args[k].type_index = kTVMFFIInt;
    args[k].zero_padding = 0;
    args[k].v_int64 = WrapAdd(x, k);
  }
  TVMFFIAny result;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  if (__builtin_expect(TVMFFIFunctionCall(f, args, n, &result) != 0, 0)) return -1;
  if (__builtin_expect(result.type_index != kTVMFFIInt, 0)) return -1;
  *out = result.v_int64;
  return 0;
}

template <int N>
void Call_c(benchmark::State &state, TVMFFIObjectHandle f) {
  TVMFFIAny args[8];
  int64_t got = 0;
  if (CallC(f, N, 5, args, &got) != 0) return SkipWithTvmError(state, "TVMFFIFunctionCall");
  if (got != Expected(N, 5)) return state.SkipWithError("wrong sum");
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = 0;
    if (__builtin_expect(CallC(f, N, x, args, &sum) != 0, 0)) return SkipWithTvmError(state, "TVMFFIFunctionCall");
    benchmark::DoNotOptimize(sum);
  }
}

template <int N>
inline int64_t CallCxx(const ffi::Function &f, int64_t x) {
  if constexpr (N == 0) {
    (void)x;
    return f().cast<int64_t>();
  } else if constexpr (N == 2) {
    return f(x, WrapAdd(x, 1)).cast<int64_t>();
  } else {
    static_assert(N == 8, "0, 2 or 8 arguments");
    return f(x, WrapAdd(x, 1), WrapAdd(x, 2), WrapAdd(x, 3), WrapAdd(x, 4), WrapAdd(x, 5), WrapAdd(x, 6),
             WrapAdd(x, 7))
        .cast<int64_t>();
  }
}

template <int N>
void Call_cxx(benchmark::State &state, const ffi::Function *f) {
  try {
    if (CallCxx<N>(*f, 5) != Expected(N, 5)) return state.SkipWithError("wrong sum");
    int64_t i = 0;
    for (auto _ : state) {
      int64_t x = i++;
      benchmark::DoNotOptimize(x);
      int64_t sum = CallCxx<N>(*f, x);
      benchmark::DoNotOptimize(sum);
    }
  } catch (const std::exception &e) {
    state.SkipWithError(e.what());
  }
}

void AnyBoxUnbox_cxx(benchmark::State &state) {
  int64_t i = 0;
  for (auto _ : state) {
    ffi::Any v(i++);
    benchmark::DoNotOptimize(v);
    int64_t out = v.cast<int64_t>();
    benchmark::DoNotOptimize(out);
  }
}

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
  static const ffi::Function *sum_cxx = new ffi::Function(ffi::Function::FromPacked([](ffi::PackedArgs args, ffi::Any *rv) {
    int64_t sum = 0;
    for (int i = 0; i < args.size(); ++i) {
      if (args[i].type_index() != kTVMFFIInt) TVM_FFI_THROW(TypeError) << "expected int arguments";
      sum = WrapAdd(sum, args[i].cast<int64_t>());
    }
    *rv = sum;
  }));
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
