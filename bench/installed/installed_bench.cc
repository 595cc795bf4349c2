// installed_bench.cc - ffikit's calls measured from the library a user installs, beside
// TVM-FFI's wheel library in the same process (bench/installed/run.sh builds and runs it).
//
// This file sees ffikit only through the installed headers (<ffikit/ffikit.h> from
// `pkg-config --cflags ffikit`) and links libffikit.so the README's way (`pkg-config --libs
// ffikit`); the TVM-FFI side is tvm_side.cc, compiled against the wheel's headers and linked
// to its libtvm_ffi.so (the two never share a file: each brings its dlpack.h).
// The cases are those of bench/function_bench.cc and bench/ffi_bench.cc, named the same way
// so bench/ratios.py pairs "<case>/ffikit" with "<case>/tvm_ffi" and "<case>/tvm_ffi_cxx":
//   call_0, call_2, call_8   ffk_function_call of an untyped Function whose C callee checks
//                            every argument is an int and sums them; the caller packs N
//                            ffk_any_int (changing every iteration) and checks the result
//                            / tvm_ffi: TVMFFIFunctionCall of the same C callee (C ABI)
//                            / tvm_ffi_cxx: a FromPacked Function doing the same, from C++ (informational)
//   typed_call_2             ffk_function_call of a Function typed "(int, int) -> int" whose
//                            callee reads v_int directly (ffikit checks the arguments)
//                            / tvm_ffi: TVMFFIFunctionCall of Function::FromTyped of the sum
//                            / tvm_ffi_cxx: that Function called from C++ (informational)
//   any_box_unbox            ffk_any_int + ffk_any_as_int (a call into libffikit.so)
//                            / tvm_ffi_cxx: ffi::Any a(x); a.cast<int64_t>() (inline C++)
//   retain_release           ffk_object_retain + ffk_object_release of a live String
//                            / tvm_ffi: TVMFFIObjectIncRef + TVMFFIObjectDecRef
//                            / tvm_ffi_cxx: an ffi::Function copied and destroyed (inline)
//   destroy_array_1000       the last ffk_object_release of an Array of 1,000 distinct
//                            Strings (the Array's death and 1,000 leaf deaths); the Array is
//                            built with the timer paused (ffikit only)
//   destroy_tree_1000        the last ffk_object_release of a tree of 1,000 Arrays, each
//                            holding a String and up to two child Arrays (1,000 deaths of
//                            objects that hold others, nested up to 10 deep, and 1,000
//                            leaf deaths); built with the timer paused (ffikit only)
// The two destroy_ cases compare builds (a baseline installed with --prefix): releasing
// deep data without growing the stack (ffi/src/object.c) must cost nothing measurable here.
#include <ffikit/ffikit.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/installed/tvm_side.h"

namespace {

inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

[[noreturn]] void Die(const char *what) {
  std::fprintf(stderr, "installed_bench: setup failed: %s", what);
  if (ffk_error *err = ffk_error_peek_borrow())
    std::fprintf(stderr, ": %s: %s", ffk_error_kind(err), ffk_error_message(err));
  std::fprintf(stderr, "\n");
  std::abort();
}

void SkipWithFfkError(benchmark::State &state, const char *what) {
  ffk_error *err = ffk_error_fetch();
  std::string msg = std::string(what) + ": " + ffk_error_kind(err) + ": " + ffk_error_message(err);
  ffk_object_release(reinterpret_cast<ffk_object *>(err));
  state.SkipWithError(msg.c_str());
}

int SumInts(void *, const ffk_any *args, int32_t nargs, ffk_any *result) {
  int64_t sum = 0;
  for (int32_t k = 0; k < nargs; ++k) {
    if (FFK_UNLIKELY(args[k].type_index != FFK_TYPE_INT))
      return ffk_error_set(FFK_ERR_TYPE, "`bench.sum`: argument #%d is not an int", (int)k);
    sum = WrapAdd(sum, args[k].v_int);
  }
  *result = ffk_any_int(sum);
  return 0;
}

int SumTwoTyped(void *, const ffk_any *args, int32_t, ffk_any *result) {
  *result = ffk_any_int(WrapAdd(args[0].v_int, args[1].v_int));
  return 0;
}

ffk_function *g_sum = nullptr;
ffk_function *g_sum_typed = nullptr;

inline int CallPacked(ffk_function *f, int n, int64_t x, ffk_any *args, int64_t *out) {
  for (int k = 0; k < n; ++k) args[k] = ffk_any_int(WrapAdd(x, k));
  ffk_any result;
  if (FFK_UNLIKELY(ffk_function_call(f, n ? args : nullptr, n, &result) != 0)) return -1;
  if (FFK_UNLIKELY(result.type_index != FFK_TYPE_INT)) {
    ffk_any_release(&result);
    return ffk_error_set(FFK_ERR_TYPE, "the callee returned a non-int");
  }
  *out = result.v_int;
  return 0;
}

int64_t Expected(int n, int64_t x) { return n * x + n * (n - 1) / 2; }

template <int N>
void Call_ffikit(benchmark::State &state, ffk_function *f) {
  ffk_any args[8];
  int64_t got = 0;
  if (CallPacked(f, N, 5, args, &got) != 0) return SkipWithFfkError(state, "ffk_function_call");
  if (got != Expected(N, 5)) return state.SkipWithError("wrong sum");
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = 0;
    if (FFK_UNLIKELY(CallPacked(f, N, x, args, &sum) != 0)) return SkipWithFfkError(state, "ffk_function_call");
    benchmark::DoNotOptimize(sum);
  }
}

void AnyBoxUnbox_ffikit(benchmark::State &state) {
  int64_t i = 0;
  for (auto _ : state) {
    ffk_any v = ffk_any_int(i++);
    benchmark::DoNotOptimize(v);
    int64_t out;
    if (ffk_any_as_int(&v, &out) != 0) return SkipWithFfkError(state, "ffk_any_as_int");
    benchmark::DoNotOptimize(out);
  }
}

void RetainRelease_ffikit(benchmark::State &state) {
  const std::string text(16, 'x');
  ffk_string *s = ffk_string_new(text.data(), text.size());
  if (s == nullptr) return SkipWithFfkError(state, "ffk_string_new");
  ffk_object *obj = &s->header;
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    ffk_object_retain(obj);
    benchmark::ClobberMemory();
    ffk_object_release(obj);
  }
  if (ffk_object_use_count(obj) != 1) state.SkipWithError("refcount drifted");
  ffk_object_release(obj);
}

ffk_object *NewString(int64_t i) {
  char text[24];
  int n = std::snprintf(text, sizeof text, "leaf-%lld", static_cast<long long>(i));
  return reinterpret_cast<ffk_object *>(ffk_string_new(text, static_cast<size_t>(n)));
}

ffk_object *NewStringArray(int64_t n) {
  ffk_any items[1000];
  for (int64_t i = 0; i < n; ++i) {
    ffk_object *s = NewString(i);
    if (s == nullptr) Die("ffk_string_new");
    items[i] = ffk_any_object_steal(s);
  }
  ffk_array *a = ffk_array_new_steal(items, n);
  if (a == nullptr) Die("ffk_array_new_steal");
  return reinterpret_cast<ffk_object *>(a);
}

// A tree of `n` Array nodes: [String, left subtree, right subtree], the rest split evenly.
ffk_object *NewTree(int64_t n, int64_t *label) {
  ffk_any items[3];
  int64_t k = 0;
  ffk_object *s = NewString((*label)++);
  if (s == nullptr) Die("ffk_string_new");
  items[k++] = ffk_any_object_steal(s);
  int64_t rest = n - 1, left = rest / 2 + rest % 2, right = rest / 2;
  if (left > 0) items[k++] = ffk_any_object_steal(NewTree(left, label));
  if (right > 0) items[k++] = ffk_any_object_steal(NewTree(right, label));
  ffk_array *a = ffk_array_new_steal(items, k);
  if (a == nullptr) Die("ffk_array_new_steal");
  return reinterpret_cast<ffk_object *>(a);
}

template <bool kTree>
void Destroy_ffikit(benchmark::State &state) {
  for (auto _ : state) {
    state.PauseTiming();
    int64_t label = 0;
    ffk_object *root = kTree ? NewTree(1000, &label) : NewStringArray(1000);
    state.ResumeTiming();
    ffk_object_release(root);
  }
}

}  // namespace

int main(int argc, char **argv) {
  using benchmark::RegisterBenchmark;
  g_sum = ffk_function_new("bench.sum", SumInts, nullptr, nullptr);
  g_sum_typed = ffk_function_new_typed("bench.sum2", "(int, int) -> int", SumTwoTyped, nullptr, nullptr);
  if (g_sum == nullptr || g_sum_typed == nullptr) Die("ffk_function_new");
  RegisterBenchmark("call_0/ffikit", Call_ffikit<0>, g_sum);
  RegisterBenchmark("call_2/ffikit", Call_ffikit<2>, g_sum);
  RegisterBenchmark("call_8/ffikit", Call_ffikit<8>, g_sum);
  RegisterBenchmark("typed_call_2/ffikit", Call_ffikit<2>, g_sum_typed);
  RegisterBenchmark("any_box_unbox/ffikit", AnyBoxUnbox_ffikit);
  RegisterBenchmark("retain_release/ffikit", RetainRelease_ffikit);
  RegisterBenchmark("destroy_array_1000/ffikit", Destroy_ffikit<false>);
  RegisterBenchmark("destroy_tree_1000/ffikit", Destroy_ffikit<true>);
  ffk_installed::RegisterTvmPeers();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  ffk_object_release(reinterpret_cast<ffk_object *>(g_sum));
  ffk_object_release(reinterpret_cast<ffk_object *>(g_sum_typed));
  return 0;
}
