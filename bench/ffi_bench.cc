// ffi_bench: the ffi core beside its C++ standard-library peers, in one binary.
//
// Every group has one "<group>/ffikit" benchmark and one "<group>/<peer>" benchmark doing
// equivalent work; bench/ratios.py pairs them by group and prints ffikit/peer ratios.
//
//   retain_release     ffk_object_retain + ffk_object_release on a live String
//                      vs a std::shared_ptr<int> copy constructed and destroyed
//   any_box_unbox      ffk_any_int + ffk_any_as_int (checked)
//                      vs a {tag, value} struct built and read with a tag check
//   str_small_create   ffk_any_str (5 bytes, inline SmallStr) + ffk_any_release
//                      vs std::string of the same 5 bytes (SSO)
//   str_heap_create    ffk_any_str (64 bytes, a String object) + ffk_any_release
//                      vs std::string of the same 64 bytes (heap)
//   hash_8/64/1024     ffk_hash_bytes (XXH3) vs std::hash<std::string_view> over N bytes
//   any_hash_str       ffk_any_hash of a 64-byte String value vs std::hash<std::string>
//
// Inputs change every iteration so that nothing can be hoisted out of the loop, and each peer
// sees the same change: the bytes start at one of 16 offsets into a longer buffer, or the
// value is one of 16 prebuilt strings. (Writing one byte of the input before each call would
// also work, but the following wide load of that byte misses store-to-load forwarding and
// adds ~5 ns of stall to every iteration of both peers, hiding the difference between them.)
//
// Run with: bench/run.sh  (or bazel run -c opt //bench:ffi_bench -- <benchmark flags>)

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/tvm_ffi_peer.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ffikit/any.h>
#include <ffikit/error.h>
#include <ffikit/object.h>
#include <ffikit/string.h>

namespace {

using ffk_bench::SkipWithFfkError;

// `n` bytes of printable ASCII (valid UTF-8), different for each `seed`.
std::string MakeText(size_t n, unsigned seed) {
  std::string s(n, ' ');
  for (size_t k = 0; k < n; ++k) s[k] = static_cast<char>('a' + (k * 7 + seed * 13) % 26);
  return s;
}

// Inputs start at one of kNumOffsets offsets into a buffer of n + kNumOffsets bytes.
constexpr uint64_t kNumOffsets = 16;  // power of two
inline size_t Offset(uint64_t i) { return static_cast<size_t>(i & (kNumOffsets - 1)); }

// ---- retain_release ---------------------------------------------------------------------

void RetainRelease_ffikit(benchmark::State &state) {
  std::string text = MakeText(16, 1);
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

void RetainRelease_shared_ptr(benchmark::State &state) {
  auto p = std::make_shared<int>(42);
  for (auto _ : state) {
    std::shared_ptr<int> copy(p);  // atomic increment (see main: the process is threaded)
    benchmark::DoNotOptimize(copy);
    benchmark::ClobberMemory();
  }  // copy destroyed: atomic decrement
  if (p.use_count() != 1) state.SkipWithError("use_count drifted");
}

// ---- any_box_unbox ----------------------------------------------------------------------

struct Tagged {
  int32_t tag;
  int64_t v;
};
constexpr int32_t kTagInt = 1;

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

void AnyBoxUnbox_tagged_struct(benchmark::State &state) {
  int64_t i = 0;
  for (auto _ : state) {
    Tagged v{kTagInt, i++};
    benchmark::DoNotOptimize(v);
    int64_t out;
    if (v.tag == kTagInt) {
      out = v.v;
    } else {
      state.SkipWithError("bad tag");
      return;
    }
    benchmark::DoNotOptimize(out);
  }
}

// ---- str_small_create / str_heap_create -------------------------------------------------

void StrCreate_ffikit(benchmark::State &state, size_t n, int32_t expected_type) {
  std::string text = MakeText(n + kNumOffsets, 2);
  const char *p = text.data();
  {  // the value has the intended form (inline SmallStr or a String object)
    ffk_any v;
    if (ffk_any_str(p, n, &v) != 0) return SkipWithFfkError(state, "ffk_any_str");
    int32_t got = v.type_index;
    ffk_any_release(&v);
    if (got != expected_type) return state.SkipWithError("unexpected str representation");
  }
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    ffk_any v;
    if (ffk_any_str(p + Offset(i++), n, &v) != 0) return SkipWithFfkError(state, "ffk_any_str");
    benchmark::DoNotOptimize(v);
    ffk_any_release(&v);
  }
}

void StrCreate_std_string(benchmark::State &state, size_t n) {
  std::string text = MakeText(n + kNumOffsets, 2);
  const char *p = text.data();
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    std::string s(p + Offset(i++), n);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
}

// ---- hash_N -----------------------------------------------------------------------------

void HashBytes_ffikit(benchmark::State &state, size_t n) {
  std::string buf = MakeText(n + kNumOffsets, 3);
  const char *p = buf.data();
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    uint64_t h = ffk_hash_bytes(p + Offset(i++), n);
    benchmark::DoNotOptimize(h);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

void HashBytes_std_hash(benchmark::State &state, size_t n) {
  std::string buf = MakeText(n + kNumOffsets, 3);
  const char *p = buf.data();
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    size_t h = std::hash<std::string_view>{}(std::string_view(p + Offset(i++), n));
    benchmark::DoNotOptimize(h);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

// ---- any_hash_str -----------------------------------------------------------------------

constexpr size_t kNumHashStrings = 16;  // power of two

void AnyHashStr_ffikit(benchmark::State &state) {
  std::vector<ffk_any> values(kNumHashStrings);
  for (size_t k = 0; k < kNumHashStrings; ++k) {
    std::string text = MakeText(64, static_cast<unsigned>(k));
    values[k] = ffk_any_none();
    if (ffk_any_str(text.data(), text.size(), &values[k]) != 0) {
      for (ffk_any &v : values) ffk_any_release(&v);
      return SkipWithFfkError(state, "ffk_any_str");
    }
  }
  if (values[0].type_index != FFK_TYPE_STRING) {
    for (ffk_any &v : values) ffk_any_release(&v);
    return state.SkipWithError("64-byte str is not a String object");
  }
  const ffk_any *base = values.data();
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(base);
    uint64_t h = ffk_any_hash(&base[i++ & (kNumHashStrings - 1)]);
    benchmark::DoNotOptimize(h);
  }
  for (ffk_any &v : values) ffk_any_release(&v);
}

void AnyHashStr_std_hash(benchmark::State &state) {
  std::vector<std::string> values;
  for (size_t k = 0; k < kNumHashStrings; ++k) {
    values.push_back(MakeText(64, static_cast<unsigned>(k)));
  }
  const std::string *base = values.data();
  uint64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(base);
    size_t h = std::hash<std::string>{}(base[i++ & (kNumHashStrings - 1)]);
    benchmark::DoNotOptimize(h);
  }
}

void RegisterAll() {
  benchmark::RegisterBenchmark("retain_release/ffikit", RetainRelease_ffikit);
  benchmark::RegisterBenchmark("retain_release/std_shared_ptr", RetainRelease_shared_ptr);

  benchmark::RegisterBenchmark("any_box_unbox/ffikit", AnyBoxUnbox_ffikit);
  benchmark::RegisterBenchmark("any_box_unbox/tagged_struct", AnyBoxUnbox_tagged_struct);
  ffk_bench::tvm_ffi_peer::RegisterFfiPeers();

  benchmark::RegisterBenchmark("str_small_create/ffikit", StrCreate_ffikit, size_t{5},
                               int32_t{FFK_TYPE_SMALL_STR});
  benchmark::RegisterBenchmark("str_small_create/std_string", StrCreate_std_string, size_t{5});
  benchmark::RegisterBenchmark("str_heap_create/ffikit", StrCreate_ffikit, size_t{64},
                               int32_t{FFK_TYPE_STRING});
  benchmark::RegisterBenchmark("str_heap_create/std_string", StrCreate_std_string, size_t{64});

  for (size_t n : {size_t{8}, size_t{64}, size_t{1024}}) {
    std::string group = "hash_" + std::to_string(n);
    benchmark::RegisterBenchmark((group + "/ffikit").c_str(), HashBytes_ffikit, n);
    benchmark::RegisterBenchmark((group + "/std_hash").c_str(), HashBytes_std_hash, n);
  }

  benchmark::RegisterBenchmark("any_hash_str/ffikit", AnyHashStr_ffikit);
  benchmark::RegisterBenchmark("any_hash_str/std_hash", AnyHashStr_std_hash);
}

}  // namespace

int main(int argc, char **argv) {
  if (!ffk_bench::Start(&argc, argv)) return 1;
  RegisterAll();
  ffk_bench::Run();
  return 0;
}
