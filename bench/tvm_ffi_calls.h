// tvm_ffi_calls.h - TVM-FFI's side of the call benchmarks, shared by the in-tree peer
// (tvm_ffi_peer.cc, Bazel) and the installed-library benchmark (installed/tvm_side.cc, built by
// installed/run.sh against the wheel): the C safe call SumInts, the packers that call a
// Function through the C ABI (Call_c<N>) and from C++ (Call_cxx<N>), and Any box + unbox.
// Public API of the wheel only. Include it after <benchmark/benchmark.h>, <tvm/ffi/c_api.h>
// and <tvm/ffi/function.h>.
#ifndef FFIKIT_BENCH_TVM_FFI_CALLS_H
#define FFIKIT_BENCH_TVM_FFI_CALLS_H

#include <benchmark/benchmark.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <exception>
#include <string>

namespace ffk_tvm_calls {

namespace ffi = ::tvm::ffi;

// Wrapping addition, as the ffikit side's WrapAdd.
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Skips with TVM-FFI's raised error as the reason.
inline void SkipWithTvmError(benchmark::State &state, const char *what) {
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  std::string msg = what;
  if (err != nullptr) {
    TVMFFIErrorCell *cell = TVMFFIErrorGetCellPtr(err);
    msg += ": " + std::string(cell->kind.data, cell->kind.size) + ": " +
           std::string(cell->message.data, cell->message.size);
    TVMFFIObjectDecRef(err);
  }
  state.SkipWithError(msg.c_str());
}

inline int SumInts(void *, const TVMFFIAny *args, int32_t nargs, TVMFFIAny *result) {
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

inline int64_t Expected(int n, int64_t x) { return n * x + n * (n - 1) / 2; }

// One call through the C ABI with n int arguments x, x+1, ...; -1 on failure.
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
  if (__builtin_expect(result.type_index != kTVMFFIInt, 0)) return -1;  // ints own nothing
  *out = result.v_int64;
  return 0;
}

template <int N>
inline void Call_c(benchmark::State &state, TVMFFIObjectHandle f) {
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
inline void Call_cxx(benchmark::State &state, const ffi::Function *f) {
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

inline void AnyBoxUnbox_cxx(benchmark::State &state) {
  int64_t i = 0;
  for (auto _ : state) {
    ffi::Any v(i++);
    benchmark::DoNotOptimize(v);
    int64_t out = v.cast<int64_t>();
    benchmark::DoNotOptimize(out);
  }
}

// The C handle of an object reference (borrowed): the address of its object, which starts
// with its TVMFFIObject header (TVM-FFI's ABI; no detail namespace, whose name changes).
inline TVMFFIObjectHandle Handle(const ffi::ObjectRef &ref) {
  return const_cast<void *>(static_cast<const void *>(ref.get()));
}

// SumInts as a C++ packed Function (the same checks and sum), for the `_cxx` call rows.
inline ffi::Function SumPackedCxx() {
  return ffi::Function::FromPacked([](ffi::PackedArgs args, ffi::Any *rv) {
    int64_t sum = 0;
    for (int i = 0; i < args.size(); ++i) {
      if (args[i].type_index() != kTVMFFIInt) TVM_FFI_THROW(TypeError) << "expected int arguments";
      sum = WrapAdd(sum, args[i].cast<int64_t>());
    }
    *rv = sum;
  });
}

}  // namespace ffk_tvm_calls

#endif  // FFIKIT_BENCH_TVM_FFI_CALLS_H
