// function_bench: Functions (packed calls), the global registry and raising errors beside
// plain C calls, std::unordered_map and C/C++ error reporting, in one binary.
//
// Every group has one "<group>/ffikit" benchmark and one or more "<group>/<peer>" benchmarks
// doing equivalent work; bench/ratios.py pairs them by group and prints ffikit/peer ratios of
// CPU time per iteration (one call, one lookup, one error raised and dropped).
//
// Groups (ffikit side / peer sides)
//   call_0, call_2, call_8
//                  ffk_function_call of a Function whose callee checks that every argument
//                  is an int (type_index) and sums the v_int payloads into an int result;
//                  the caller packs N ffk_any_int arguments (the values change every
//                  iteration) and reads the int result back (checking its type_index)
//                  / direct: a call of a plain C function taking N int64_t and returning
//                  their sum (noinline, noipa: the call stays a call and nothing about the
//                  callee is propagated into the caller)
//                  / fnptr: the same function called through a volatile function pointer
//                  (one load and an indirect call, as ffk_function_call makes)
//   typed_call_2   ffk_function_call of a typed Function, signature "(int, int) -> int": the
//                  call checks the argument count and each argument against its schema, the
//                  callee reads v_int directly, the result is checked against `int`
//                  / tvm_ffi, tvm_ffi_cxx: TVM-FFI's Function::FromTyped of the same sum,
//                  called through TVMFFIFunctionCall or as f(x, x + 1) (tvm_ffi_peer.cc)
//   kw_call_2      ffk_function_call_kw of a typed Function "(a: int, b: int) -> int" (the
//                  same sum) with a positional and a keyword argument, f(x, b=x + 1): C binds
//                  the keyword to its parameter by name, then makes the typed call
//                  / typed_positional: the same Function called positionally, f(x, x + 1),
//                  with ffk_function_call (the ratio is what binding one keyword adds)
//                  / all_keywords: f(a=x, b=x + 1), both by keyword, in reverse order
//   call_N also has the peers tvm_ffi (TVMFFIFunctionCall of a C safe call doing what SumInts
//                  does) and tvm_ffi_cxx (the same Function called from C++)
//   call_2_unpack  the same 2-argument packed call, but the callee reads its arguments
//                  with ffk_args_unpack(name, args, nargs, "ii", &a, &b)
//                  / fnptr: as in call_2
//                  / packed_reads: the call_2 ffikit benchmark (direct v_int reads): the
//                  ratio is what the unpack helper adds to a packed call
//   registry_get   ffk_function_get_global of one of kNames = 1000 registered names
//                  ("bench.function_0000" ...: 19 bytes), round-robin over a precomputed
//                  list of C strings, plus ffk_object_release of the returned Function
//                  / umap: std::unordered_map<std::string, void *>::find of the same
//                  names (precomputed std::strings, the same order), the value read
//   registry_get_shared (scaling: ->Threads(1)->Threads(2), real time)
//                  the ffikit loop above on 1 and 2 threads (the threads start half the
//                  list apart); bench/ratios.py prints 2-thread over 1-thread throughput
//                  / umap_shared_mutex: the umap loop with a std::shared_lock on one
//                  std::shared_mutex around each find (the usual way to share a map)
//                  / umap: the umap loop with no lock, a control showing how far two
//                  threads can scale on this machine at all
//                  / umap_retain: the unlocked umap loop plus ffk_object_retain and
//                  _release of the Function found: what returning a new reference costs
//                  when both threads use the same Functions, with no registry involved
//   registry_get_disjoint (scaling, as above)
//                  the same loops, but thread t of n cycles over its own n-th of the names
//                  (one thread: all of them), so the threads share no Function: only the
//                  registry itself is shared. In registry_get_shared both threads go over
//                  every name, so each Function's reference count (written by the retain
//                  and the release) moves between the two cores about once per lookup
//                  / umap: the unlocked control over the same ranges
//   error_raise_bt, error_raise_nobt
//                  ffk_error_set(FFK_ERR_VALUE, "bad value %d", i) in a noinline callee
//                  returning -1, then ffk_error_fetch + ffk_object_release in the caller;
//                  native backtrace capture on (_bt, the default) or off (_nobt) with
//                  ffk_error_set_backtrace_enabled (the bt_lines counter: how many lines the
//                  backtrace has, which is what the capture cost grows with)
//                  / malloc_snprintf: a noinline callee mallocs 64 bytes and snprintf's
//                  the same message into them, the caller frees them
//                  / cxx_throw: a noinline callee throws std::runtime_error with the same
//                  message (snprintf'd into a stack buffer), the caller catches it by
//                  reference and reads what()
//
// Every Function, name and map is made before the timed loops (in main: the registry is
// shared by the benchmark threads) and checked once before timing (the result of a call,
// the kind and message of an error), so a broken path skips instead of timing an error.
//
// Run with: bench/run.sh --only=function_bench  (or bazel run -c opt //bench:function_bench)

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/tvm_ffi_peer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <ffikit/any.h>
#include <ffikit/error.h>
#include <ffikit/function.h>
#include <ffikit/object.h>

// The plain C peers must stay real calls with nothing known about them at the call site:
// gcc's noinline still lets IPA passes propagate constants and return values, noipa stops
// that. clang has no noipa; noinline plus external linkage (below) is its closest.
#if defined(__clang__)
#define BENCH_PLAIN_CALLEE __attribute__((noinline))
#else
#define BENCH_PLAIN_CALLEE __attribute__((noinline, noipa))
#endif

// Wrapping addition, the same instructions as `+`. The sums never overflow in an optimised
// build, but gcc -O1 with the sanitizers (--config=asan) can hand DoNotOptimize's operand
// back as any value, and the benchmarks must not turn that into undefined behaviour.
static inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// The plain functions, with external linkage (outside the anonymous namespace).
extern "C" {
BENCH_PLAIN_CALLEE int64_t ffk_bench_plain_sum0(void) { return 0; }
BENCH_PLAIN_CALLEE int64_t ffk_bench_plain_sum2(int64_t a, int64_t b) { return WrapAdd(a, b); }
BENCH_PLAIN_CALLEE int64_t ffk_bench_plain_sum8(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                                                int64_t g, int64_t h) {
  return WrapAdd(WrapAdd(WrapAdd(a, b), WrapAdd(c, d)), WrapAdd(WrapAdd(e, f), WrapAdd(g, h)));
}
}

namespace {

using ffk_bench::SkipWithFfkError;

constexpr int kNames = 1000;

// Keeps a value that is still used afterwards (freed, released) from being optimised away
// without letting the compiler assume it changed: Google Benchmark 1.7.1's read-write
// DoNotOptimize(T &) hands back a wrong value under gcc -O1 with the sanitizers
// (--config=asan), which turned a free() into a bad free.
template <typename T>
inline void Escape(const T &value) {
  benchmark::DoNotOptimize(value);
}

// Aborts setup (outside any timed region) with the pending ffikit error.
[[noreturn]] void Die(const char *what) {
  std::fprintf(stderr, "function_bench: setup failed: %s", what);
  if (ffk_error *err = ffk_error_peek_borrow())
    std::fprintf(stderr, ": %s: %s", ffk_error_kind(err), ffk_error_message(err));
  std::fprintf(stderr, "\n");
  std::abort();
}

ffk_object *Obj(ffk_function *f) { return reinterpret_cast<ffk_object *>(f); }
ffk_object *Obj(ffk_error *e) { return reinterpret_cast<ffk_object *>(e); }

// ---- callees ------------------------------------------------------------------------------

// Sums int arguments: the shape of a typical hand-written C callee.
int SumInts(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t sum = 0;
  for (int32_t k = 0; k < nargs; ++k) {
    if (FFK_UNLIKELY(args[k].type_index != FFK_TYPE_INT))
      return ffk_error_set(FFK_ERR_TYPE, "`bench.sum`: argument #%d is not an int", (int)k);
    sum = WrapAdd(sum, args[k].v_int);
  }
  *result = ffk_any_int(sum);
  return 0;
}

// Sums two int arguments read with ffk_args_unpack.
int SumTwoUnpacked(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t a, b;
  if (ffk_args_unpack("bench.sum2_unpack", args, nargs, "ii", &a, &b) != 0) return -1;
  *result = ffk_any_int(WrapAdd(a, b));
  return 0;
}

// Sums two ints the typed signature has checked: reads v_int directly.
int SumTwoTyped(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  (void)nargs;
  *result = ffk_any_int(WrapAdd(args[0].v_int, args[1].v_int));
  return 0;
}

// The Functions, made once in main.
ffk_function *g_sum_typed = nullptr;
ffk_function *g_sum_named = nullptr;
ffk_function *g_sum = nullptr;
ffk_function *g_sum2_unpack = nullptr;

// ---- call_N -------------------------------------------------------------------------------

// One packed call of `f` with n (<= 8) int arguments x, x+1, ..., x+n-1; the sum, or -1
// (with the error pending) when the call failed or the result is not an int.
inline int CallPacked(ffk_function *f, int n, int64_t x, ffk_any *args, int64_t *out) {
  for (int k = 0; k < n; ++k) args[k] = ffk_any_int(WrapAdd(x, k));
  ffk_any result;
  if (FFK_UNLIKELY(ffk_function_call(f, n ? args : nullptr, n, &result) != 0)) return -1;
  if (FFK_UNLIKELY(result.type_index != FFK_TYPE_INT)) {
    ffk_any_release(&result);
    return ffk_error_set(FFK_ERR_TYPE, "the callee returned a non-int");
  }
  *out = result.v_int;  // an int owns nothing: no release needed
  return 0;
}

// The sum CallPacked and the plain functions must return for x.
int64_t Expected(int n, int64_t x) { return n * x + n * (n - 1) / 2; }

template <int N>
void Call_ffikit(benchmark::State &state, ffk_function *f) {
  ffk_any args[8];
  {
    int64_t got = 0;
    if (CallPacked(f, N, 5, args, &got) != 0) return SkipWithFfkError(state, "ffk_function_call");
    if (got != Expected(N, 5)) return state.SkipWithError("wrong sum");
  }
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = 0;
    if (FFK_UNLIKELY(CallPacked(f, N, x, args, &sum) != 0)) return SkipWithFfkError(state, "ffk_function_call");
    benchmark::DoNotOptimize(sum);
  }
}

// ---- kw_call_2 -----------------------------------------------------------------------------

// f(x, b=x+1) (npos 1), or f(b=x+1, a=x) (npos 0), through ffk_function_call_kw; the sum or -1.
inline int CallKw(ffk_function *f, int npos, int64_t x, int64_t *out) {
  static const char *const kOne[] = {"b"};
  static const char *const kBoth[] = {"b", "a"};
  ffk_any args[2] = {ffk_any_int(npos == 1 ? x : WrapAdd(x, 1)), ffk_any_int(npos == 1 ? WrapAdd(x, 1) : x)};
  ffk_any result;
  if (FFK_UNLIKELY(ffk_function_call_kw(f, args, npos, npos == 1 ? kOne : kBoth, 2 - npos, &result) != 0)) return -1;
  if (FFK_UNLIKELY(result.type_index != FFK_TYPE_INT)) {
    ffk_any_release(&result);
    return ffk_error_set(FFK_ERR_TYPE, "the callee returned a non-int");
  }
  *out = result.v_int;
  return 0;
}

void KwCall_ffikit(benchmark::State &state, int npos) {
  {
    int64_t got = 0;
    if (CallKw(g_sum_named, npos, 5, &got) != 0) return SkipWithFfkError(state, "ffk_function_call_kw");
    if (got != Expected(2, 5)) return state.SkipWithError("wrong sum");
  }
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = 0;
    if (FFK_UNLIKELY(CallKw(g_sum_named, npos, x, &sum) != 0)) return SkipWithFfkError(state, "ffk_function_call_kw");
    benchmark::DoNotOptimize(sum);
  }
}

template <int N>
int64_t PlainCall(int64_t x) {
  if constexpr (N == 0) {
    (void)x;
    return ffk_bench_plain_sum0();
  } else if constexpr (N == 2) {
    return ffk_bench_plain_sum2(x, WrapAdd(x, 1));
  } else {
    static_assert(N == 8, "0, 2 or 8 arguments");
    return ffk_bench_plain_sum8(x, WrapAdd(x, 1), WrapAdd(x, 2), WrapAdd(x, 3), WrapAdd(x, 4), WrapAdd(x, 5),
                                WrapAdd(x, 6), WrapAdd(x, 7));
  }
}

template <int N>
void Call_direct(benchmark::State &state) {
  if (PlainCall<N>(5) != Expected(N, 5)) return state.SkipWithError("wrong sum");
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = PlainCall<N>(x);
    benchmark::DoNotOptimize(sum);
  }
}

void Call0_fnptr(benchmark::State &state) {
  int64_t (*volatile fp)(void) = ffk_bench_plain_sum0;
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = fp();
    benchmark::DoNotOptimize(sum);
  }
}

void Call2_fnptr(benchmark::State &state) {
  int64_t (*volatile fp)(int64_t, int64_t) = ffk_bench_plain_sum2;
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = fp(x, WrapAdd(x, 1));
    benchmark::DoNotOptimize(sum);
  }
}

void Call8_fnptr(benchmark::State &state) {
  int64_t (*volatile fp)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) =
      ffk_bench_plain_sum8;
  int64_t i = 0;
  for (auto _ : state) {
    int64_t x = i++;
    benchmark::DoNotOptimize(x);
    int64_t sum = fp(x, WrapAdd(x, 1), WrapAdd(x, 2), WrapAdd(x, 3), WrapAdd(x, 4), WrapAdd(x, 5), WrapAdd(x, 6),
                     WrapAdd(x, 7));
    benchmark::DoNotOptimize(sum);
  }
}

// ---- registry_get, registry_get_shared ------------------------------------------------------

struct Names {
  std::vector<std::string> str;    // "bench.function_0000", ...
  std::vector<const char *> c;     // str[k].c_str()
  std::unordered_map<std::string, void *> umap;  // the same names -> their Functions
  std::shared_mutex umap_mutex;
};

Names &TheNames() {
  static Names *names = [] {
    auto *n = new Names;
    for (int k = 0; k < kNames; ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "bench.function_%04d", k);
      n->str.emplace_back(buf);
    }
    for (const std::string &s : n->str) n->c.push_back(s.c_str());
    return n;
  }();
  return *names;
}

// Registers kNames distinct Functions (all calling SumInts) under the names; fills the umap.
void RegisterNames() {
  Names &n = TheNames();
  for (int k = 0; k < kNames; ++k) {
    ffk_function *f = ffk_function_new(n.c[k], SumInts, nullptr, nullptr);
    if (f == nullptr) Die("ffk_function_new");
    if (ffk_function_register(n.c[k], f, false) != 0) Die("ffk_function_register");
    n.umap.emplace(n.str[k], f);
    ffk_object_release(Obj(f));  // the registry keeps its own reference
  }
}

void UnregisterNames() {
  Names &n = TheNames();
  for (int k = 0; k < kNames; ++k) {
    if (ffk_function_remove_global(n.c[k]) != 1) Die("ffk_function_remove_global");
  }
  n.umap.clear();
}

// The order a benchmark thread looks names up in. Shared (registry_get, _shared): every
// thread cycles over all the names, thread t starting t/n of the way along, so the
// threads look up different names at any moment but use the same Functions. Disjoint
// (registry_get_disjoint): thread t cycles over its own n-th of the names.
class NameCursor {
 public:
  NameCursor(const benchmark::State &state, bool disjoint) {
    int t = state.thread_index(), n = state.threads();
    begin_ = disjoint ? kNames * t / n : 0;
    end_ = disjoint ? kNames * (t + 1) / n : kNames;
    k_ = disjoint ? begin_ : kNames * t / n;
  }
  // The next index: k, then k + 1, wrapping at the end of the range.
  int Next() {
    int k = k_;
    k_ = k + 1 == end_ ? begin_ : k + 1;
    return k;
  }

 private:
  int begin_, end_, k_;
};

void RegistryGet_ffikit(benchmark::State &state, bool disjoint) {
  const char *const *names = TheNames().c.data();
  NameCursor cursor(state, disjoint);
  for (auto _ : state) {
    ffk_function *f;
    if (FFK_UNLIKELY(ffk_function_get_global(names[cursor.Next()], &f) != 1))
      return SkipWithFfkError(state, "ffk_function_get_global did not find a registered name");
    Escape(f);
    ffk_object_release(Obj(f));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// How a umap peer treats what it found: read it, retain and release it (what a new
// reference costs), or find it under a shared lock.
enum class UmapMode { kPlain, kRetain, kSharedMutex };

void RegistryGet_umap(benchmark::State &state, bool disjoint, UmapMode mode) {
  Names &n = TheNames();
  const std::string *names = n.str.data();
  const auto &umap = n.umap;
  NameCursor cursor(state, disjoint);
  for (auto _ : state) {
    const std::string &name = names[cursor.Next()];
    void *f;
    if (mode == UmapMode::kSharedMutex) {
      std::shared_lock<std::shared_mutex> lock(n.umap_mutex);
      auto it = umap.find(name);
      if (FFK_UNLIKELY(it == umap.end())) return state.SkipWithError("umap did not find a name");
      f = it->second;
    } else {
      auto it = umap.find(name);
      if (FFK_UNLIKELY(it == umap.end())) return state.SkipWithError("umap did not find a name");
      f = it->second;
    }
    if (mode == UmapMode::kRetain) {
      ffk_object_retain(static_cast<ffk_object *>(f));
      Escape(f);
      ffk_object_release(static_cast<ffk_object *>(f));
    } else {
      benchmark::DoNotOptimize(f);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// ---- error_raise_bt, error_raise_nobt -----------------------------------------------------

// A callee that fails: what a C function of the API does on bad input.
FFK_NOINLINE int RaiseFfk(int i) { return ffk_error_set(FFK_ERR_VALUE, "bad value %d", i); }

void ErrorRaise_ffikit(benchmark::State &state, bool backtrace) {
  bool before = ffk_error_set_backtrace_enabled(backtrace);
  {  // the error is the one raised, with its message
    int rc = RaiseFfk(7);
    ffk_error *err = ffk_error_fetch();
    bool ok = rc == -1 && err != nullptr && std::strcmp(ffk_error_kind(err), FFK_ERR_VALUE) == 0 &&
              std::strcmp(ffk_error_message(err), "bad value 7") == 0;
    // The capture cost grows with the stack depth: report how many lines the backtrace has
    // (the raising location, the native frames, no appended ones).
    int lines = 0;
    if (ok) {
      for (const char *p = ffk_error_backtrace(err); *p; ++p) lines += *p == '\n';
    }
    ffk_object_release(Obj(err));
    if (!ok) {
      ffk_error_set_backtrace_enabled(before);
      return state.SkipWithError("unexpected error raised");
    }
    state.counters["bt_lines"] = lines;
  }
  int i = 0;
  for (auto _ : state) {
    int rc = RaiseFfk(i++);
    benchmark::DoNotOptimize(rc);
    ffk_error *err = ffk_error_fetch();
    Escape(err);
    ffk_object_release(Obj(err));
  }
  ffk_error_set_backtrace_enabled(before);
}

FFK_NOINLINE char *RaiseMalloc(int i) {
  char *msg = static_cast<char *>(std::malloc(64));
  if (msg != nullptr) std::snprintf(msg, 64, "bad value %d", i);
  return msg;
}

void ErrorRaise_malloc_snprintf(benchmark::State &state) {
  int i = 0;
  for (auto _ : state) {
    char *msg = RaiseMalloc(i++);
    Escape(msg);
    std::free(msg);
  }
}

[[noreturn]] FFK_NOINLINE void RaiseCxx(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "bad value %d", i);
  throw std::runtime_error(buf);
}

void ErrorRaise_cxx_throw(benchmark::State &state) {
  int i = 0;
  for (auto _ : state) {
    try {
      RaiseCxx(i++);
    } catch (const std::runtime_error &e) {
      const char *what = e.what();
      benchmark::DoNotOptimize(what);
    }
  }
}

// ---- registration -------------------------------------------------------------------------

void RegisterAll() {
  using benchmark::RegisterBenchmark;
  RegisterBenchmark("call_0/ffikit", Call_ffikit<0>, g_sum);
  RegisterBenchmark("call_0/direct", Call_direct<0>);
  RegisterBenchmark("call_0/fnptr", Call0_fnptr);
  RegisterBenchmark("call_2/ffikit", Call_ffikit<2>, g_sum);
  RegisterBenchmark("call_2/direct", Call_direct<2>);
  RegisterBenchmark("call_2/fnptr", Call2_fnptr);
  RegisterBenchmark("call_8/ffikit", Call_ffikit<8>, g_sum);
  RegisterBenchmark("call_8/direct", Call_direct<8>);
  RegisterBenchmark("call_8/fnptr", Call8_fnptr);

  RegisterBenchmark("typed_call_2/ffikit", Call_ffikit<2>, g_sum_typed);
  ffk_bench::tvm_ffi_peer::RegisterFunctionPeers();

  RegisterBenchmark("kw_call_2/ffikit", KwCall_ffikit, 1);
  RegisterBenchmark("kw_call_2/typed_positional", Call_ffikit<2>, g_sum_named);
  RegisterBenchmark("kw_call_2/all_keywords", KwCall_ffikit, 0);

  RegisterBenchmark("call_2_unpack/ffikit", Call_ffikit<2>, g_sum2_unpack);
  RegisterBenchmark("call_2_unpack/fnptr", Call2_fnptr);
  RegisterBenchmark("call_2_unpack/packed_reads", Call_ffikit<2>, g_sum);

  RegisterBenchmark("registry_get/ffikit", RegistryGet_ffikit, false);
  RegisterBenchmark("registry_get/umap", RegistryGet_umap, false, UmapMode::kPlain);
  // Thread scaling: 1 and 2 threads, real time.
  auto scaling = [](benchmark::internal::Benchmark *b) { b->Threads(1)->Threads(2)->UseRealTime(); };
  scaling(RegisterBenchmark("registry_get_shared/ffikit", RegistryGet_ffikit, false));
  scaling(RegisterBenchmark("registry_get_shared/umap_shared_mutex", RegistryGet_umap, false, UmapMode::kSharedMutex));
  scaling(RegisterBenchmark("registry_get_shared/umap", RegistryGet_umap, false, UmapMode::kPlain));
  scaling(RegisterBenchmark("registry_get_shared/umap_retain", RegistryGet_umap, false, UmapMode::kRetain));
  scaling(RegisterBenchmark("registry_get_disjoint/ffikit", RegistryGet_ffikit, true));
  scaling(RegisterBenchmark("registry_get_disjoint/umap", RegistryGet_umap, true, UmapMode::kPlain));

  for (bool bt : {true, false}) {
    std::string group = bt ? "error_raise_bt" : "error_raise_nobt";
    RegisterBenchmark((group + "/ffikit").c_str(), ErrorRaise_ffikit, bt);
    RegisterBenchmark((group + "/malloc_snprintf").c_str(), ErrorRaise_malloc_snprintf);
    RegisterBenchmark((group + "/cxx_throw").c_str(), ErrorRaise_cxx_throw);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (!ffk_bench::Start(&argc, argv)) return 1;

  // Everything the benchmarks share, made before any benchmark thread starts.
  g_sum = ffk_function_new("bench.sum", SumInts, nullptr, nullptr);
  if (g_sum == nullptr) Die("ffk_function_new");
  g_sum2_unpack = ffk_function_new("bench.sum2_unpack", SumTwoUnpacked, nullptr, nullptr);
  if (g_sum2_unpack == nullptr) Die("ffk_function_new");
  g_sum_typed = ffk_function_new_typed("bench.sum2_typed", "(int, int) -> int", SumTwoTyped, nullptr, nullptr);
  if (g_sum_typed == nullptr) Die("ffk_function_new_typed");
  g_sum_named = ffk_function_new_typed("bench.sum2_named", "(a: int, b: int) -> int", SumTwoTyped, nullptr, nullptr);
  if (g_sum_named == nullptr) Die("ffk_function_new_typed");
  RegisterNames();

  RegisterAll();
  ffk_bench::Run();

  UnregisterNames();
  ffk_object_release(Obj(g_sum2_unpack));
  ffk_object_release(Obj(g_sum));
  ffk_object_release(Obj(g_sum_typed));
  ffk_object_release(Obj(g_sum_named));
  return 0;
}
