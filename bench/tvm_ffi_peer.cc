// tvm_ffi_peer.cc - the TVM-FFI side of the benchmarks (see tvm_ffi_peer.h for the naming).
//
// Each peer does what the ffikit benchmark of its group does (the group's comment in the
// binary's header says exactly what), with TVM-FFI:
//   call_N/tvm_ffi         TVMFFIFunctionCall of a Function made by TVMFFIFunctionCreate from a
//                          C safe call that checks every argument is an int and sums them; the
//                          caller packs N TVMFFIAny ints (changing every iteration) and checks
//                          the result's type index
//   call_N/tvm_ffi_cxx     the same checks and sum as a C++ packed Function (SumPackedCxx in
//                          tvm_ffi_calls.h), called as f(x, ...).cast<int64_t>()
//   typed_call_2/tvm_ffi   TVMFFIFunctionCall of Function::FromTyped([](int64_t a, int64_t b)
//                          { return a + b; }) (TVM-FFI converts and checks the arguments)
//   typed_call_2/tvm_ffi_cxx   the same typed Function called as f(x, x + 1).cast<int64_t>()
//   any_box_unbox/tvm_ffi_cxx  ffi::Any a(x); a.cast<int64_t>() (all inline)
//   retain_release/tvm_ffi     TVMFFIObjectIncRef + TVMFFIObjectDecRef of a live object (a Function)
//   retain_release/tvm_ffi_cxx an ffi::Function reference copied and destroyed (inline atomics)
//   push_1m_array/tvm_ffi_cxx  ffi::Array<int64_t>::push_back from empty, then its release
//   push_1m_list/tvm_ffi_cxx   ffi::List<int64_t>::push_back from empty
//   map_set_{int,str}/tvm_ffi_cxx, dict_set_*  ffi::Map / ffi::Dict Set from empty, 100k keys
//   map_get_{hit,miss}_{int,str}/tvm_ffi_cxx, dict_get_*   find() of each probe key, the value read
//   dlpack_roundtrip_{legacy,versioned}/tvm_ffi   TVMFFITensorToDLPack(Versioned) of a float32
//                          [2, 3] CPU tensor, TVMFFITensorFromDLPack(Versioned)(m, 0, 0, &h)
//                          (no alignment or contiguity requirement), TVMFFIObjectDecRef(h)
//   dlpack_import_foreign/tvm_ffi   the legacy round trip above: TVM-FFI's export imported by
//                          TVM-FFI (the ffikit side imports the same exports: TvmExportLegacy)
#include "bench/tvm_ffi_peer.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#if FFK_BENCH_HAS_TVM_FFI
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include "bench/tvm_ffi_calls.h"
#endif

namespace ffk_bench {
namespace tvm_ffi_peer {

#if !FFK_BENCH_HAS_TVM_FFI

bool Available() { return false; }

namespace {
void Skipped(benchmark::State &state) {
  state.SkipWithError(
      "TVM-FFI peer skipped: apache-tvm-ffi was not found when @tvm_ffi was configured "
      "(pip install apache-tvm-ffi into $FFK_PYTHON's environment, then `bazel sync --only=tvm_ffi`)");
  for (auto _ : state) {
  }
}
void RegisterSkipped() {
  static bool done = false;
  if (done) return;
  done = true;
  std::fprintf(stderr, "note: the TVM-FFI peer is not built in (apache-tvm-ffi not found); its rows are missing\n");
  benchmark::RegisterBenchmark("tvm_ffi/skipped", Skipped);
}
}  // namespace

void RegisterFunctionPeers() { RegisterSkipped(); }
void RegisterFfiPeers() { RegisterSkipped(); }
void RegisterContainerPeers(const ContainerInputs &) { RegisterSkipped(); }
void RegisterTensorPeers() { RegisterSkipped(); }
void *TvmExportLegacy() { return nullptr; }

#else  // FFK_BENCH_HAS_TVM_FFI

bool Available() { return true; }

namespace {

namespace ffi = ::tvm::ffi;

[[noreturn]] void Die(const char *what) {
  std::fprintf(stderr, "tvm_ffi_peer: setup failed: %s\n", what);
  std::abort();
}

using namespace ffk_tvm_calls;  // WrapAdd, SumInts, Call_c<N>, Call_cxx<N>, ... (tvm_ffi_calls.h)

TVMFFIObjectHandle g_sum = nullptr;     // C safe call SumInts
ffi::Function *g_typed_sum2 = nullptr;  // Function::FromTyped(int64_t(int64_t, int64_t))

// A live object to count references on (ffi::String is a value type with inline storage in
// this version, so a Function stands in for ffikit's String object: same header, same count).
const ffi::Function &LiveObject() {
  static const ffi::Function *f = new ffi::Function(ffi::Function::FromTyped([](int64_t a) { return a; }));
  return *f;
}

void RetainRelease_c(benchmark::State &state) {
  TVMFFIObjectHandle obj = Handle(LiveObject());
  for (auto _ : state) {
    benchmark::DoNotOptimize(obj);
    TVMFFIObjectIncRef(obj);
    benchmark::ClobberMemory();
    TVMFFIObjectDecRef(obj);
  }
}

void RetainRelease_cxx(benchmark::State &state) {
  const ffi::Function &f = LiveObject();
  for (auto _ : state) {
    ffi::Function copy(f);  // an atomic increment; the destructor decrements
    benchmark::DoNotOptimize(copy);
    benchmark::ClobberMemory();
  }
}

// ---- containers ----------------------------------------------------------------------------

ContainerInputs g_in;

void Items(benchmark::State &state, int64_t n) { state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n); }

void PushArray_cxx(benchmark::State &state) {
  for (auto _ : state) {
    ffi::Array<int64_t> a;
    for (int64_t i = 0; i < g_in.push_n; ++i) a.push_back(i);
    benchmark::DoNotOptimize(a.get());
    benchmark::ClobberMemory();
  }
  Items(state, g_in.push_n);
}

void PushList_cxx(benchmark::State &state) {
  for (auto _ : state) {
    ffi::List<int64_t> l;
    for (int64_t i = 0; i < g_in.push_n; ++i) l.push_back(i);
    benchmark::DoNotOptimize(l.get());
    benchmark::ClobberMemory();
  }
  Items(state, g_in.push_n);
}

// The keys as TVM-FFI values: ints as they are, strings as ffi::String objects of their own.
struct TvmInputs {
  std::vector<ffi::String> str_keys, str_hit, str_miss;
  TvmInputs() {
    for (const auto *src : {g_in.str_keys, g_in.str_hit, g_in.str_miss}) {
      std::vector<ffi::String> &dst = src == g_in.str_keys ? str_keys : src == g_in.str_hit ? str_hit : str_miss;
      for (const std::string &s : *src) dst.emplace_back(s);
    }
  }
};
const TvmInputs &Tin() {
  static const TvmInputs *t = new TvmInputs();
  return *t;
}

template <typename Container, typename K>
Container Build(const std::vector<K> &keys) {
  Container c;
  for (size_t i = 0; i < keys.size(); ++i) c.Set(keys[i], static_cast<int64_t>(i));
  return c;
}

template <typename Container, typename K>
void Set_cxx(benchmark::State &state, const std::vector<K> *keys) {
  for (auto _ : state) {
    Container c;
    for (size_t i = 0; i < keys->size(); ++i) c.Set((*keys)[i], static_cast<int64_t>(i));
    benchmark::DoNotOptimize(c.get());
    benchmark::ClobberMemory();
  }
  Items(state, static_cast<int64_t>(keys->size()));
}

template <typename Container, typename K>
void Get_cxx(benchmark::State &state, const Container *c, const std::vector<K> *probes, bool hit) {
  int64_t n = static_cast<int64_t>(probes->size());
  for (auto _ : state) {
    int64_t found = 0, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto it = c->find((*probes)[i]);
      if (it != c->end()) {
        ++found;
        sum += (*it).second;
      }
    }
    benchmark::DoNotOptimize(sum);
    if (__builtin_expect(found != (hit ? n : 0), 0)) return state.SkipWithError("wrong number of keys found");
  }
  Items(state, n);
}

// ---- dlpack_roundtrip ------------------------------------------------------------------------

struct CpuAlloc {
  void AllocData(DLTensor *t) {
    size_t bytes = ffi::GetDataSize(*t);
    t->data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (t->data == nullptr) Die("aligned_alloc");
  }
  void FreeData(DLTensor *t) { std::free(t->data); }
};

const ffi::Tensor &SmallTensor() {
  static const ffi::Tensor *t = new ffi::Tensor(ffi::Tensor::FromNDAlloc(
      CpuAlloc(), ffi::Shape({2, 3}), DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}));
  return *t;
}

template <bool kVersioned>
void DlpackRoundTrip_c(benchmark::State &state) {
  TVMFFIObjectHandle t = Handle(SmallTensor());
  for (auto _ : state) {
    TVMFFIObjectHandle u = nullptr;
    if constexpr (kVersioned) {
      DLManagedTensorVersioned *m = nullptr;
      if (__builtin_expect(TVMFFITensorToDLPackVersioned(t, &m) != 0, 0))
        return SkipWithTvmError(state, "TVMFFITensorToDLPackVersioned");
      if (__builtin_expect(TVMFFITensorFromDLPackVersioned(m, 0, 0, &u) != 0, 0))
        return SkipWithTvmError(state, "TVMFFITensorFromDLPackVersioned");
    } else {
      DLManagedTensor *m = nullptr;
      if (__builtin_expect(TVMFFITensorToDLPack(t, &m) != 0, 0)) return SkipWithTvmError(state, "TVMFFITensorToDLPack");
      if (__builtin_expect(TVMFFITensorFromDLPack(m, 0, 0, &u) != 0, 0))
        return SkipWithTvmError(state, "TVMFFITensorFromDLPack");
    }
    benchmark::DoNotOptimize(u);
    TVMFFIObjectDecRef(u);
  }
}

}  // namespace

void RegisterFunctionPeers() {
  using benchmark::RegisterBenchmark;
  if (g_sum == nullptr) {
    if (TVMFFIFunctionCreate(nullptr, SumInts, nullptr, &g_sum) != 0) Die("TVMFFIFunctionCreate");
    g_typed_sum2 = new ffi::Function(ffi::Function::FromTyped([](int64_t a, int64_t b) { return WrapAdd(a, b); }));
  }
  // The same sum as a C++ packed Function (never released, like g_sum).
  static const ffi::Function *sum_cxx = new ffi::Function(SumPackedCxx());
  RegisterBenchmark("call_0/tvm_ffi", Call_c<0>, g_sum);
  RegisterBenchmark("call_0/tvm_ffi_cxx", Call_cxx<0>, sum_cxx);
  RegisterBenchmark("call_2/tvm_ffi", Call_c<2>, g_sum);
  RegisterBenchmark("call_2/tvm_ffi_cxx", Call_cxx<2>, sum_cxx);
  RegisterBenchmark("call_8/tvm_ffi", Call_c<8>, g_sum);
  RegisterBenchmark("call_8/tvm_ffi_cxx", Call_cxx<8>, sum_cxx);
  TVMFFIObjectHandle typed = Handle(*g_typed_sum2);
  RegisterBenchmark("typed_call_2/tvm_ffi", Call_c<2>, typed);
  RegisterBenchmark("typed_call_2/tvm_ffi_cxx", Call_cxx<2>, static_cast<const ffi::Function *>(g_typed_sum2));
}

void RegisterFfiPeers() {
  LiveObject();
  benchmark::RegisterBenchmark("any_box_unbox/tvm_ffi_cxx", AnyBoxUnbox_cxx);
  benchmark::RegisterBenchmark("retain_release/tvm_ffi", RetainRelease_c);
  benchmark::RegisterBenchmark("retain_release/tvm_ffi_cxx", RetainRelease_cxx);
}

void RegisterContainerPeers(const ContainerInputs &in) {
  g_in = in;
  const TvmInputs &t = Tin();
  using IntMap = ffi::Map<int64_t, int64_t>;
  using StrMap = ffi::Map<ffi::String, int64_t>;
  using IntDict = ffi::Dict<int64_t, int64_t>;
  using StrDict = ffi::Dict<ffi::String, int64_t>;
  static const IntMap *int_map = new IntMap(Build<IntMap>(*in.int_keys));
  static const StrMap *str_map = new StrMap(Build<StrMap>(t.str_keys));
  static const IntDict *int_dict = new IntDict(Build<IntDict>(*in.int_keys));
  static const StrDict *str_dict = new StrDict(Build<StrDict>(t.str_keys));

  auto reg = [&](const std::string &name, auto fn, auto... args) {
    benchmark::RegisterBenchmark(name.c_str(), fn, args...)->Unit(benchmark::kMillisecond)->MinTime(in.min_time);
  };
  reg("push_1m_array/tvm_ffi_cxx", PushArray_cxx);
  reg("push_1m_list/tvm_ffi_cxx", PushList_cxx);
  reg("map_set_int/tvm_ffi_cxx", Set_cxx<IntMap, int64_t>, in.int_keys);
  reg("map_set_str/tvm_ffi_cxx", Set_cxx<StrMap, ffi::String>, &t.str_keys);
  reg("dict_set_int/tvm_ffi_cxx", Set_cxx<IntDict, int64_t>, in.int_keys);
  reg("dict_set_str/tvm_ffi_cxx", Set_cxx<StrDict, ffi::String>, &t.str_keys);
  for (bool hit : {true, false}) {
    std::string hn = hit ? "hit_" : "miss_";
    reg("map_get_" + hn + "int/tvm_ffi_cxx", Get_cxx<IntMap, int64_t>, int_map, hit ? in.int_hit : in.int_miss, hit);
    reg("map_get_" + hn + "str/tvm_ffi_cxx", Get_cxx<StrMap, ffi::String>, str_map, hit ? &t.str_hit : &t.str_miss,
        hit);
    reg("dict_get_" + hn + "int/tvm_ffi_cxx", Get_cxx<IntDict, int64_t>, int_dict, hit ? in.int_hit : in.int_miss,
        hit);
    reg("dict_get_" + hn + "str/tvm_ffi_cxx", Get_cxx<StrDict, ffi::String>, str_dict,
        hit ? &t.str_hit : &t.str_miss, hit);
  }
}

void RegisterTensorPeers() {
  SmallTensor();
  benchmark::RegisterBenchmark("dlpack_roundtrip_legacy/tvm_ffi", DlpackRoundTrip_c<false>);
  benchmark::RegisterBenchmark("dlpack_roundtrip_versioned/tvm_ffi", DlpackRoundTrip_c<true>);
  benchmark::RegisterBenchmark("dlpack_import_foreign/tvm_ffi", DlpackRoundTrip_c<false>);
}

void *TvmExportLegacy() {
  DLManagedTensor *m = nullptr;
  if (TVMFFITensorToDLPack(Handle(SmallTensor()), &m) != 0) {
    TVMFFIObjectHandle err = nullptr;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != nullptr) TVMFFIObjectDecRef(err);
    return nullptr;
  }
  return m;
}

#endif  // FFK_BENCH_HAS_TVM_FFI

}  // namespace tvm_ffi_peer
}  // namespace ffk_bench
