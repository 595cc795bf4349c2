// Multi-threaded stress tests of the containers (DESIGN.md "Thread safety"):
//   1. copy-on-write sharing of one Array and one Map by every thread,
//   2. List appends from many threads,
//   3. Dict sets/erases of disjoint key ranges from many threads,
//   4. List/Dict iteration while other threads mutate them (only stored values are seen, a
//      change is a RuntimeError, a pass that completes sees every element exactly once),
//   5. retain/release and weak-reference storms on shared containers,
//   6. two-container operations in both orders (address-ordered locking, no deadlock),
//   7. weak observers of a copy-on-write Array never see an in-place change.
//
// One source, two targets (tests/stress/BUILD):
//   containers_stress_test        small configuration (4 threads x 20,000 ops), in CI
//   containers_stress_large_test  FFK_STRESS_LARGE=1 (8 threads x 1,000,000 ops), manual
// The environment overrides the configuration (bazel test --test_env=NAME=VALUE):
//   FFK_STRESS_THREADS, FFK_STRESS_OPS (operations per thread per scenario), FFK_STRESS_SEED.
//
// Worker threads never call gtest assertions in their loops: they record failures in the
// scenario (count + the first messages), and the main thread fails the test with them.
// Every scenario prints its seed, elapsed time, operation count and ops/s (information
// only: timing is never asserted). A watchdog aborts a scenario whose threads make no
// progress for a long time and says so (a deadlock or livelock), instead of a bare
// Bazel timeout.
#include <ffikit/dict.h>
#include <ffikit/ffikit.h>
#include <ffikit/list.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

#ifndef FFK_STRESS_LARGE
#define FFK_STRESS_LARGE 0
#endif

namespace {

using ffk::test::FetchError;
using Clock = std::chrono::steady_clock;

// ---- Configuration -------------------------------------------------------------------

struct Config {
  const char* name;
  int threads;
  int64_t ops;             // operations per thread in each scenario
  int64_t shared_entries;  // size of the shared Array and Map of scenario 1
  int derive_percent;      // scenario 1: % of operations deriving an Array variant (as many a Map one)
  int stall_seconds;       // no progress at all for this long: report a deadlock and abort
  uint64_t seed;
};

int64_t EnvInt(const char* name, int64_t dflt, bool* set) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return dflt;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 0);
  if (*end != '\0' || v <= 0) {
    std::fprintf(stderr, "[stress] ignoring %s=%s (want a positive integer)\n", name, s);
    return dflt;
  }
  *set = true;
  return v;
}

const Config& Cfg() {
  static const Config cfg = [] {
    Config c;
    c.name = FFK_STRESS_LARGE ? "large" : "small";
    c.threads = FFK_STRESS_LARGE ? 8 : 4;
    c.ops = FFK_STRESS_LARGE ? 1000000 : 20000;
    c.shared_entries = 1000;
    c.derive_percent = FFK_STRESS_LARGE ? 10 : 4;  // each derivation copies 1,000 entries: slow under TSan
    c.stall_seconds = FFK_STRESS_LARGE ? 600 : 120;
    bool custom = false;
    c.threads = static_cast<int>(EnvInt("FFK_STRESS_THREADS", c.threads, &custom));
    if (c.threads < 2) c.threads = 2;  // scenarios 4-7 need a writer and a reader
    c.ops = EnvInt("FFK_STRESS_OPS", c.ops, &custom);
    if (custom) c.name = FFK_STRESS_LARGE ? "large+env" : "small+env";
    c.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}() ^
             static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    if (const char* s = std::getenv("FFK_STRESS_SEED"); s != nullptr && *s != '\0')
      c.seed = std::strtoull(s, nullptr, 0);
    std::printf("[stress] configuration %s: %d threads x %lld ops per thread per scenario, %lld shared "
                "entries, seed %llu (repeat with --test_env=FFK_STRESS_SEED=%llu)\n",
                c.name, c.threads, static_cast<long long>(c.ops), static_cast<long long>(c.shared_entries),
                static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(c.seed));
    std::fflush(stdout);
    return c;
  }();
  return cfg;
}

// ---- Small helpers -------------------------------------------------------------------

// splitmix64: fast, and good enough to pick operations.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
  bool Percent(int p) { return Below(100) < p; }

 private:
  uint64_t state_;
};

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// The repr of a value for failure messages; never fails the test itself.
std::string Show(const ffk_any& v) {
  ffk_string* s = ffk_any_repr(&v);
  if (s == nullptr) {
    std::string err = FetchError();
    return "<repr failed: " + err + ">";
  }
  std::string out(ffk_string_data(s), ffk_string_size(s));
  ffk_object_release(&s->header);
  return out;
}

bool IsInt(const ffk_any& v, int64_t x) { return v.type_index == FFK_TYPE_INT && v.v_int == x; }

// True when `v` is a str value (inline or a String object) with exactly the bytes of `s`.
bool IsStr(const ffk_any& v, const char* s, size_t n) {
  if (v.type_index != FFK_TYPE_SMALL_STR && v.type_index != FFK_TYPE_STRING) return false;
  const char* data = nullptr;
  size_t size = 0;
  if (ffk_any_as_str(&v, &data, &size) != 0) {
    ffk_error_clear();
    return false;
  }
  return size == n && std::memcmp(data, s, n) == 0;
}
bool IsStr(const ffk_any& v, const std::string& s) { return IsStr(v, s.data(), s.size()); }

// True when `v` is a str value that starts with `prefix`.
bool StrStartsWith(const ffk_any& v, const char* prefix) {
  if (v.type_index != FFK_TYPE_SMALL_STR && v.type_index != FFK_TYPE_STRING) return false;
  const char* data = nullptr;
  size_t size = 0;
  if (ffk_any_as_str(&v, &data, &size) != 0) {
    ffk_error_clear();
    return false;
  }
  size_t n = std::strlen(prefix);
  return size >= n && std::memcmp(data, prefix, n) == 0;
}

// An owned str value (a String object: every string used here is longer than 7 bytes).
ffk_any OwnedStr(const std::string& s) {
  ffk_any v = ffk_any_none();
  if (ffk_any_str(s.data(), s.size(), &v) != 0) ADD_FAILURE() << "ffk_any_str: " << FetchError();
  EXPECT_EQ(v.type_index, FFK_TYPE_STRING) << s;
  return v;
}

ffk_object* Obj(ffk_array* a) { return &a->header; }
ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }
ffk_object* Obj(ffk_list* l) { return reinterpret_cast<ffk_object*>(l); }
ffk_object* Obj(ffk_dict* d) { return reinterpret_cast<ffk_object*>(d); }

// Consumes this thread's pending error. True when it is of `kind` and its message contains
// `needle` (nullptr: any message); otherwise *text gets "Kind: message" ("" for none).
bool TakeError(const char* kind, const char* needle, std::string* text) {
  ffk_error* e = ffk_error_peek_borrow();
  bool ok = e != nullptr && std::strcmp(ffk_error_kind(e), kind) == 0 &&
            (needle == nullptr || std::strstr(ffk_error_message(e), needle) != nullptr);
  if (ok) {
    ffk_error_clear();
  } else {
    *text = FetchError();
  }
  return ok;
}

// ---- Scenario: threads, watchdog, failures, timing -----------------------------------

class Scenario;

// Counts a thread's operations, publishing them to the scenario in batches (the watchdog
// reads the total) so that counting does not itself become a contended hot spot.
class Ticker {
 public:
  explicit Ticker(std::atomic<int64_t>* total) : total_(total) {}
  ~Ticker() { Flush(); }
  void operator()(int64_t n = 1) {
    pending_ += n;
    count_ += n;
    if (pending_ >= 256) Flush();
  }
  void Flush() {
    total_->fetch_add(pending_, std::memory_order_relaxed);
    pending_ = 0;
  }
  int64_t count() const { return count_; }

 private:
  std::atomic<int64_t>* total_;
  int64_t pending_ = 0;
  int64_t count_ = 0;
};

class Scenario {
 public:
  Scenario(int number, const char* name, bool header = true) : name_(name) {
    const Config& c = Cfg();
    seed_ = c.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(number);
    if (header)
      std::printf("[stress] scenario %d (%s): %d threads x %lld ops, seed %llu\n", number, name, c.threads,
                static_cast<long long>(c.ops), static_cast<unsigned long long>(seed_));
    std::fflush(stdout);
  }

  // Runs body(t, rng, tick) on `n` threads and waits for them (watchdog included).
  template <class Body>
  void Run(int n, Body body) {
    std::atomic<int> done{0}, ready{0};
    Clock::time_point start = Clock::now();
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([this, t, n, &body, &done, &ready] {
        ready.fetch_add(1);  // start together, so that the threads' work overlaps
        while (ready.load() < n) std::this_thread::yield();
        {
          Rng rng(seed_ + 0xD1B54A32D192ED03ull * static_cast<uint64_t>(t + 1));
          Ticker tick(&ops_);
          body(t, rng, tick);
        }
        if (ffk_error_occurred()) Fail(__LINE__, "no error pending when a thread ends", FetchError());
        done.fetch_add(1, std::memory_order_release);
      });
    }
    Watch(done, n);
    for (auto& th : threads) th.join();
    elapsed_ += std::chrono::duration<double>(Clock::now() - start).count();
  }

  void Fail(int line, const char* cond, const std::string& detail) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    if (messages_.size() < 20) messages_.push_back(Fmt("line %d: %s: %s", line, cond, detail.c_str()));
  }

  void Note(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu_);
    notes_.push_back(s);
  }

  int64_t ops() const { return ops_.load(); }

  // Prints the timing and counters, and fails the test with the recorded failures.
  void Finish() {
    double secs = elapsed_;
    long long ops = static_cast<long long>(ops_.load());
    std::printf("[stress]   %s: %lld ops in %.3f s of concurrent work = %.0f ops/s, %lld failures\n", name_, ops,
                secs, secs > 0 ? static_cast<double>(ops) / secs : 0.0,
                static_cast<long long>(failures_.load()));
    for (const auto& n : notes_) std::printf("[stress]   %s: %s\n", name_, n.c_str());
    std::fflush(stdout);
    std::string all;
    for (const auto& m : messages_) all += "\n  " + m;
    EXPECT_EQ(failures_.load(), 0) << "seed " << seed_ << "; the first failures:" << all;
  }

 private:
  void Watch(const std::atomic<int>& done, int n) {
    const int stall = Cfg().stall_seconds;
    int64_t last_ops = -1;
    Clock::time_point last_change = Clock::now();
    while (done.load(std::memory_order_acquire) < n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      int64_t now_ops = ops_.load(std::memory_order_relaxed);
      if (now_ops != last_ops) {
        last_ops = now_ops;
        last_change = Clock::now();
      } else if (Clock::now() - last_change > std::chrono::seconds(stall)) {
        std::fprintf(stderr,
                     "[stress] %s: no progress for %d s (%lld ops done, %d of %d threads finished): "
                     "deadlock or livelock suspected; seed %llu. Aborting.\n",
                     name_, stall, static_cast<long long>(now_ops), done.load(), n,
                     static_cast<unsigned long long>(seed_));
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  const char* name_;
  uint64_t seed_;
  std::atomic<int64_t> ops_{0};
  std::atomic<int64_t> failures_{0};
  double elapsed_ = 0;
  std::mutex mu_;
  std::vector<std::string> messages_;
  std::vector<std::string> notes_;
};

// Records a failure in scenario `sc` (any thread) when `cond` is false.
#define STRESS_CHECK(sc, cond, ...)                                  \
  do {                                                               \
    if (!(cond)) (sc).Fail(__LINE__, #cond, Fmt(__VA_ARGS__));       \
  } while (0)

class Stress : public ffk::test::Test {};

// =======================================================================================
// 1. Copy-on-write sharing: one Array and one Map shared by every thread.
// =======================================================================================

struct CowData {
  int64_t n = 0;
  std::vector<std::string> array_strs;  // element i when i % 4 == 3
  std::vector<std::string> map_keys;    // key i when i is odd (even keys are ints)
  std::vector<std::string> map_vals;    // value of key i when i is odd (else int 7 * i)
  ffk_array* array = nullptr;
  ffk_map* map = nullptr;
  const ffk_any* array_items = nullptr;  // the original's elements never move
};

bool ArrayElementOk(const CowData& d, int64_t i, const ffk_any& v) {
  return i % 4 == 3 ? IsStr(v, d.array_strs[i]) : IsInt(v, 3 * i + 1);
}
ffk_any MapKey(const CowData& d, int64_t i) {
  return i % 2 == 0 ? ffk_any_int(i) : ffk_any_raw_str(d.map_keys[i].c_str());
}
bool MapKeyOk(const CowData& d, int64_t i, const ffk_any& k) {
  return i % 2 == 0 ? IsInt(k, i) : IsStr(k, d.map_keys[i]);
}
bool MapValueOk(const CowData& d, int64_t i, const ffk_any& v) {
  return i % 2 == 0 ? IsInt(v, 7 * i) : IsStr(v, d.map_vals[i]);
}

// "" when the shared Array still has exactly its initial contents, else what differs.
std::string CheckWholeArray(const CowData& d) {
  if (ffk_array_size(d.array) != d.n) return Fmt("size %lld", static_cast<long long>(ffk_array_size(d.array)));
  const ffk_any* items = ffk_array_items_borrow(d.array);
  if (items != d.array_items) return "the shared Array's elements moved";
  for (int64_t i = 0; i < d.n; ++i)
    if (!ArrayElementOk(d, i, items[i])) return Fmt("element %lld is %s", static_cast<long long>(i), Show(items[i]).c_str());
  return "";
}

// "" when the shared Map still has exactly its initial entries in order, else what differs.
std::string CheckWholeMap(const CowData& d) {
  if (ffk_map_size(d.map) != d.n) return Fmt("size %lld", static_cast<long long>(ffk_map_size(d.map)));
  int64_t pos = 0, e = 0;
  const ffk_any *k, *v;
  while (ffk_map_next(d.map, &pos, &k, &v)) {
    if (e >= d.n) return "more entries than its size";
    if (!MapKeyOk(d, e, *k) || !MapValueOk(d, e, *v))
      return Fmt("entry %lld is %s: %s", static_cast<long long>(e), Show(*k).c_str(), Show(*v).c_str());
    ++e;
  }
  if (e != d.n) return Fmt("iteration gave %lld entries", static_cast<long long>(e));
  return "";
}

void DeriveArrayVariant(Scenario& sc, const CowData& d, Rng& rng) {
  ffk_array* const shared = d.array;
  ffk_array* h = shared;
  ffk_object_retain(Obj(h));
  uint32_t uses = ffk_object_use_count(Obj(shared));
  STRESS_CHECK(sc, uses >= 2, "use count %u while this thread holds a second reference", uses);
  const int64_t n = d.n;
  const int64_t i = rng.Below(n);
  const int64_t j = (i + 1 + rng.Below(n - 1)) % n;  // != i
  switch (rng.Below(3)) {
    case 0: {  // set: copies; a second set on the now unique copy is in place
      ffk_any v = ffk_any_int(-1 - i);
      int rc = ffk_array_set(&h, i, &v);
      STRESS_CHECK(sc, rc == 0, "ffk_array_set: %s", FetchError().c_str());
      if (rc != 0) break;
      STRESS_CHECK(sc, h != shared, "ffk_array_set changed a shared Array in place");
      STRESS_CHECK(sc, ffk_array_size(h) == n, "variant size %lld", static_cast<long long>(ffk_array_size(h)));
      const ffk_any* items = ffk_array_items_borrow(h);
      STRESS_CHECK(sc, IsInt(items[i], -1 - i), "variant[%lld] = %s", static_cast<long long>(i), Show(items[i]).c_str());
      STRESS_CHECK(sc, ArrayElementOk(d, j, items[j]), "variant[%lld] = %s", static_cast<long long>(j),
                   Show(items[j]).c_str());
      ffk_array* before = h;
      ffk_any w = ffk_any_int(-1 - j);
      rc = ffk_array_set(&h, j, &w);
      STRESS_CHECK(sc, rc == 0, "second ffk_array_set: %s", FetchError().c_str());
      STRESS_CHECK(sc, h == before, "ffk_array_set copied a uniquely owned Array");
      items = ffk_array_items_borrow(h);
      STRESS_CHECK(sc, IsInt(items[j], -1 - j), "variant[%lld] = %s", static_cast<long long>(j), Show(items[j]).c_str());
      break;
    }
    case 1: {  // push (copies) then pop it again (in place)
      ffk_any v = ffk_any_raw_str("pushed onto a private variant");
      int rc = ffk_array_push(&h, &v);
      STRESS_CHECK(sc, rc == 0, "ffk_array_push: %s", FetchError().c_str());
      if (rc != 0) break;
      STRESS_CHECK(sc, h != shared, "ffk_array_push changed a shared Array in place");
      STRESS_CHECK(sc, ffk_array_size(h) == n + 1, "variant size %lld", static_cast<long long>(ffk_array_size(h)));
      const ffk_any* items = ffk_array_items_borrow(h);
      STRESS_CHECK(sc, ArrayElementOk(d, i, items[i]), "variant[%lld] = %s", static_cast<long long>(i),
                   Show(items[i]).c_str());
      ffk_any out;
      rc = ffk_array_pop(&h, -1, &out);
      STRESS_CHECK(sc, rc == 0 && IsStr(out, "pushed onto a private variant", 29), "ffk_array_pop: rc %d, %s %s", rc,
                   Show(out).c_str(), FetchError().c_str());
      ffk_any_release(&out);
      STRESS_CHECK(sc, ffk_array_size(h) == n, "variant size %lld", static_cast<long long>(ffk_array_size(h)));
      break;
    }
    case 2: {  // erase a short range
      const int64_t end = std::min(n, i + 1 + rng.Below(8));
      int rc = ffk_array_erase(&h, i, end);
      STRESS_CHECK(sc, rc == 0, "ffk_array_erase: %s", FetchError().c_str());
      if (rc != 0) break;
      STRESS_CHECK(sc, h != shared, "ffk_array_erase changed a shared Array in place");
      STRESS_CHECK(sc, ffk_array_size(h) == n - (end - i), "variant size %lld after erasing [%lld, %lld)",
                   static_cast<long long>(ffk_array_size(h)), static_cast<long long>(i), static_cast<long long>(end));
      const ffk_any* items = ffk_array_items_borrow(h);
      if (end < n)
        STRESS_CHECK(sc, ArrayElementOk(d, end, items[i]), "variant[%lld] = %s after erasing [%lld, %lld)",
                     static_cast<long long>(i), Show(items[i]).c_str(), static_cast<long long>(i),
                     static_cast<long long>(end));
      if (i > 0)
        STRESS_CHECK(sc, ArrayElementOk(d, i - 1, items[i - 1]), "variant[%lld] = %s", static_cast<long long>(i - 1),
                     Show(items[i - 1]).c_str());
      break;
    }
  }
  // The original is untouched.
  STRESS_CHECK(sc, ffk_array_size(shared) == n && ffk_array_items_borrow(shared) == d.array_items,
               "the shared Array changed: size %lld", static_cast<long long>(ffk_array_size(shared)));
  const ffk_any* orig = d.array_items;
  STRESS_CHECK(sc, ArrayElementOk(d, i, orig[i]) && ArrayElementOk(d, j, orig[j]),
               "shared[%lld] = %s, shared[%lld] = %s", static_cast<long long>(i), Show(orig[i]).c_str(),
               static_cast<long long>(j), Show(orig[j]).c_str());
  ffk_object_release(Obj(h));
}

void DeriveMapVariant(Scenario& sc, const CowData& d, Rng& rng) {
  ffk_map* const shared = d.map;
  ffk_map* h = shared;
  ffk_object_retain(Obj(h));
  uint32_t uses = ffk_object_use_count(Obj(shared));
  STRESS_CHECK(sc, uses >= 2, "use count %u while this thread holds a second reference", uses);
  const int64_t n = d.n;
  const int64_t i = rng.Below(n);
  const int64_t j = (i + 1 + rng.Below(n - 1)) % n;  // != i
  const ffk_any key = MapKey(d, i);
  const ffk_any key_j = MapKey(d, j);
  ffk::test::OwnedAny got;
  int expect_size = 0;
  switch (rng.Below(3)) {
    case 0: {  // overwrite an existing key
      ffk_any v = ffk_any_int(-1);
      int rc = ffk_map_set(&h, &key, &v);
      STRESS_CHECK(sc, rc == 0, "ffk_map_set: %s", FetchError().c_str());
      if (rc != 0) break;
      STRESS_CHECK(sc, h != shared, "ffk_map_set changed a shared Map in place");
      expect_size = 0;
      ffk_any_release(&got.v);
      STRESS_CHECK(sc, ffk_map_get(h, &key, &got.v) == 1 && IsInt(got.v, -1), "variant value %s", Show(got.v).c_str());
      break;
    }
    case 1: {  // add a new key (negative ints are never in the shared Map)
      ffk_any nk = ffk_any_int(-1 - rng.Below(1 << 30));
      ffk_any v = ffk_any_raw_str("a value only this variant has");
      int rc = ffk_map_set(&h, &nk, &v);
      STRESS_CHECK(sc, rc == 0, "ffk_map_set: %s", FetchError().c_str());
      if (rc != 0) break;
      STRESS_CHECK(sc, h != shared, "ffk_map_set changed a shared Map in place");
      expect_size = 1;
      STRESS_CHECK(sc, ffk_map_contains(h, &nk), "the new key is missing from the variant");
      STRESS_CHECK(sc, !ffk_map_contains(shared, &nk), "the new key appeared in the shared Map");
      break;
    }
    case 2: {  // erase
      int rc = ffk_map_erase(&h, &key);
      STRESS_CHECK(sc, rc == 1, "ffk_map_erase returned %d: %s", rc, FetchError().c_str());
      if (rc != 1) break;
      STRESS_CHECK(sc, h != shared, "ffk_map_erase changed a shared Map in place");
      expect_size = -1;
      STRESS_CHECK(sc, !ffk_map_contains(h, &key), "the erased key is still in the variant");
      break;
    }
  }
  STRESS_CHECK(sc, ffk_map_size(h) == n + expect_size, "variant size %lld, expected %lld",
               static_cast<long long>(ffk_map_size(h)), static_cast<long long>(n + expect_size));
  if (h != shared) {  // now unique: a second change is in place
    ffk_map* before = h;
    ffk_any v = ffk_any_int(-2);
    int rc = ffk_map_set(&h, &key_j, &v);
    STRESS_CHECK(sc, rc == 0, "second ffk_map_set: %s", FetchError().c_str());
    STRESS_CHECK(sc, h == before, "ffk_map_set copied a uniquely owned Map");
    ffk_any_release(&got.v);
    STRESS_CHECK(sc, ffk_map_get(h, &key_j, &got.v) == 1 && IsInt(got.v, -2), "variant value %s",
                 Show(got.v).c_str());
  }
  // The original is untouched.
  STRESS_CHECK(sc, ffk_map_size(shared) == n, "the shared Map's size is %lld", static_cast<long long>(ffk_map_size(shared)));
  ffk_any_release(&got.v);
  STRESS_CHECK(sc, ffk_map_get(shared, &key, &got.v) == 1 && MapValueOk(d, i, got.v), "shared[%s] = %s",
               Show(key).c_str(), Show(got.v).c_str());
  ffk_any_release(&got.v);
  STRESS_CHECK(sc, ffk_map_get(shared, &key_j, &got.v) == 1 && MapValueOk(d, j, got.v), "shared[%s] = %s",
               Show(key_j).c_str(), Show(got.v).c_str());
  ffk_object_release(Obj(h));
}

void ReadSharedArray(Scenario& sc, const CowData& d, Rng& rng) {
  const int64_t start = rng.Below(d.n);
  const ffk_any* items = ffk_array_items_borrow(d.array);
  for (int64_t k = 0; k < 32; ++k) {
    const int64_t i = (start + k) % d.n;
    STRESS_CHECK(sc, ArrayElementOk(d, i, items[i]), "shared[%lld] = %s", static_cast<long long>(i),
                 Show(items[i]).c_str());
  }
  ffk::test::OwnedAny v;
  int rc = ffk_array_get(d.array, start - d.n, &v.v);  // a negative index
  STRESS_CHECK(sc, rc == 0 && ArrayElementOk(d, start, v.v), "ffk_array_get(%lld) = %s %s",
               static_cast<long long>(start - d.n), Show(v.v).c_str(), FetchError().c_str());
}

void ReadSharedMap(Scenario& sc, const CowData& d, Rng& rng) {
  for (int k = 0; k < 4; ++k) {
    const int64_t i = rng.Below(d.n);
    ffk_any key = MapKey(d, i);
    ffk::test::OwnedAny v;
    int rc = ffk_map_get(d.map, &key, &v.v);
    STRESS_CHECK(sc, rc == 1 && MapValueOk(d, i, v.v), "ffk_map_get(%s) = %d, %s", Show(key).c_str(), rc,
                 Show(v.v).c_str());
  }
  ffk_any absent = ffk_any_int(-7);
  STRESS_CHECK(sc, !ffk_map_contains(d.map, &absent), "the shared Map contains -7");
  int64_t pos = 0;
  const ffk_any *k, *v;
  for (int64_t e = 0; e < 16; ++e) {
    bool more = ffk_map_next(d.map, &pos, &k, &v);
    STRESS_CHECK(sc, more, "ffk_map_next ended after %lld entries", static_cast<long long>(e));
    if (!more) break;
    STRESS_CHECK(sc, MapKeyOk(d, e, *k) && MapValueOk(d, e, *v), "entry %lld is %s: %s", static_cast<long long>(e),
                 Show(*k).c_str(), Show(*v).c_str());
  }
}

TEST_F(Stress, CowSharedArrayAndMapNeverChangeUnderDerivedVariants) {
  Scenario sc(1, "COW sharing");
  CowData d;
  d.n = Cfg().shared_entries;
  std::vector<ffk_any> items, keys, vals;
  for (int64_t i = 0; i < d.n; ++i) {
    d.array_strs.push_back(Fmt("array-element-%06lld", static_cast<long long>(i)));
    d.map_keys.push_back(Fmt("map-key-%06lld", static_cast<long long>(i)));
    d.map_vals.push_back(Fmt("map-value-%06lld", static_cast<long long>(i)));
  }
  for (int64_t i = 0; i < d.n; ++i) {
    items.push_back(i % 4 == 3 ? ffk_any_raw_str(d.array_strs[i].c_str()) : ffk_any_int(3 * i + 1));
    keys.push_back(MapKey(d, i));
    vals.push_back(i % 2 == 0 ? ffk_any_int(7 * i) : ffk_any_raw_str(d.map_vals[i].c_str()));
  }
  d.array = ffk_array_new(items.data(), d.n);
  ASSERT_NE(d.array, nullptr) << FetchError();
  d.map = ffk_map_from_pairs(keys.data(), vals.data(), d.n);
  ASSERT_NE(d.map, nullptr) << FetchError();
  d.array_items = ffk_array_items_borrow(d.array);
  ASSERT_EQ(CheckWholeArray(d), "");
  ASSERT_EQ(CheckWholeMap(d), "");

  const int64_t ops = Cfg().ops;
  const int derive = Cfg().derive_percent;
  sc.Note(Fmt("%d%% of operations derive an Array variant, %d%% a Map variant, the rest read", derive, derive));
  sc.Run(Cfg().threads, [&](int, Rng& rng, Ticker& tick) {
    for (int64_t op = 0; op < ops; ++op, tick()) {
      const int64_t r = rng.Below(100);
      if (r < derive) {
        DeriveArrayVariant(sc, d, rng);
      } else if (r < 2 * derive) {
        DeriveMapVariant(sc, d, rng);
      } else if (r < 60) {
        ReadSharedArray(sc, d, rng);
      } else {
        ReadSharedMap(sc, d, rng);
      }
      if ((op & 1023) == 1023) {
        std::string a = CheckWholeArray(d), m = CheckWholeMap(d);
        STRESS_CHECK(sc, a.empty(), "the shared Array: %s", a.c_str());
        STRESS_CHECK(sc, m.empty(), "the shared Map: %s", m.c_str());
        uint32_t ua = ffk_object_use_count(Obj(d.array)), um = ffk_object_use_count(Obj(d.map));
        STRESS_CHECK(sc, ua >= 1 && um >= 1, "use counts %u and %u", ua, um);
      }
    }
  });
  sc.Finish();
  EXPECT_EQ(CheckWholeArray(d), "");
  EXPECT_EQ(CheckWholeMap(d), "");
  EXPECT_EQ(ffk_object_use_count(Obj(d.array)), 1u);
  EXPECT_EQ(ffk_object_use_count(Obj(d.map)), 1u);
  EXPECT_TRUE(ffk_object_is_unique(Obj(d.array)));
  EXPECT_TRUE(ffk_object_is_unique(Obj(d.map)));
  ffk_object_release(Obj(d.array));
  ffk_object_release(Obj(d.map));
}

// =======================================================================================
// 2. List append: every value appended by every thread is there exactly once.
// =======================================================================================

TEST_F(Stress, ListAppendsFromManyThreadsKeepEveryValueExactlyOnce) {
  Scenario sc(2, "List append");
  const int nthreads = Cfg().threads;
  const int64_t per = Cfg().ops;
  const int64_t total = nthreads * per;
  ffk_list* l = ffk_list_new();
  ASSERT_NE(l, nullptr) << FetchError();
  sc.Run(nthreads, [&](int t, Rng& rng, Ticker& tick) {
    for (int64_t i = 0; i < per; ++i, tick()) {
      ffk_any v = ffk_any_int(t * per + i);
      int rc = i % 16 == 15 ? ffk_list_append_steal(l, &v) : ffk_list_append(l, &v);
      STRESS_CHECK(sc, rc == 0, "append %lld: %s", static_cast<long long>(t * per + i), FetchError().c_str());
      if (i % 64 == 63) {  // read while the buffer grows under other threads' appends
        int64_t size = ffk_list_size(l);
        STRESS_CHECK(sc, size >= i + 1 && size <= total, "size %lld after this thread's %lld appends",
                     static_cast<long long>(size), static_cast<long long>(i + 1));
        if (size < 1) continue;
        ffk_any got = ffk_any_none();
        const int64_t idx = rng.Percent(50) ? rng.Below(size) : -1 - rng.Below(size);
        rc = ffk_list_get(l, idx, &got);
        STRESS_CHECK(sc, rc == 0 && got.type_index == FFK_TYPE_INT && got.v_int >= 0 && got.v_int < total,
                     "ffk_list_get(%lld) = %d, %s %s", static_cast<long long>(idx), rc, Show(got).c_str(),
                     FetchError().c_str());
        ffk_any_release(&got);
      }
    }
  });
  sc.Finish();

  Clock::time_point vstart = Clock::now();
  ASSERT_EQ(ffk_list_size(l), total);
  ffk_array* snap = ffk_list_to_array(l);
  ASSERT_NE(snap, nullptr) << FetchError();
  ASSERT_EQ(ffk_array_size(snap), total);
  std::vector<uint8_t> seen(total, 0);
  std::vector<int64_t> last(nthreads, -1);
  int64_t bad = 0, dup = 0, order = 0;
  const ffk_any* items = ffk_array_items_borrow(snap);
  for (int64_t k = 0; k < total; ++k) {
    const ffk_any& v = items[k];
    if (v.type_index != FFK_TYPE_INT || v.v_int < 0 || v.v_int >= total) {
      if (bad++ == 0) ADD_FAILURE() << "element " << k << " is " << Show(v);
      continue;
    }
    if (seen[v.v_int]++ != 0 && dup++ == 0) ADD_FAILURE() << "value " << v.v_int << " appears twice";
    const int t = static_cast<int>(v.v_int / per);
    if (v.v_int <= last[t] && order++ == 0)
      ADD_FAILURE() << "thread " << t << "'s value " << v.v_int << " comes after its " << last[t];
    last[t] = v.v_int;
  }
  int64_t missing = 0;
  for (int64_t x = 0; x < total; ++x) missing += seen[x] == 0;
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(dup, 0);
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(order, 0) << "one thread's appends must stay in its order";
  ffk_object_release(Obj(snap));
  // The iterator sees the same sequence when nobody changes the List.
  ffk_list_iter it;
  ffk_list_iter_init(&it, l);
  int64_t count = 0;
  for (ffk_any v; ffk_list_iter_next(&it, &v) == 1; ++count) ffk_any_release(&v);
  EXPECT_FALSE(ffk_error_occurred()) << FetchError();
  EXPECT_EQ(count, total);
  std::printf("[stress]   List append: verified %lld elements in %.3f s\n", static_cast<long long>(total),
              std::chrono::duration<double>(Clock::now() - vstart).count());
  EXPECT_EQ(ffk_object_use_count(Obj(l)), 1u);
  ffk_object_release(Obj(l));
}

// =======================================================================================
// 3. Dict: threads set disjoint key ranges (int and String keys), half erase half.
// =======================================================================================

struct DictKeys {
  int64_t per;
  // Thread t's i-th key: the int t * per + i when i is even, else a String key.
  static void StrKey(int t, int64_t i, char* buf, size_t n) {
    std::snprintf(buf, n, "dict-key-t%02d-%010lld", t, static_cast<long long>(i));
  }
  static bool Erased(int t, int64_t i) { return t % 2 == 0 && i % 4 < 2; }  // even threads erase half
  int64_t Id(int t, int64_t i) const { return t * per + i; }
};

TEST_F(Stress, DictDisjointKeyRangesFromManyThreadsGiveExactContents) {
  Scenario sc(3, "Dict disjoint keys");
  const int nthreads = Cfg().threads;
  const DictKeys dk{Cfg().ops};
  const int64_t per = dk.per;
  ffk_dict* d = ffk_dict_new();
  ASSERT_NE(d, nullptr) << FetchError();
  sc.Run(nthreads, [&](int t, Rng& rng, Ticker& tick) {
    char buf[64];
    auto key_of = [&](int64_t i) {
      if (i % 2 == 0) return ffk_any_int(dk.Id(t, i));
      DictKeys::StrKey(t, i, buf, sizeof buf);
      return ffk_any_raw_str(buf);
    };
    for (int64_t i = 0; i < per; ++i, tick()) {
      ffk_any k = key_of(i);
      ffk_any v = ffk_any_int(2 * dk.Id(t, i));
      int rc = ffk_dict_set(d, &k, &v);
      STRESS_CHECK(sc, rc == 0, "ffk_dict_set(%s): %s", Show(k).c_str(), FetchError().c_str());
      if (i % 64 == 63) {  // read back one of this thread's keys
        const int64_t j = rng.Below(i + 1);
        ffk_any kj = key_of(j);
        ffk::test::OwnedAny got;
        rc = ffk_dict_get(d, &kj, &got.v);
        STRESS_CHECK(sc, rc == 1 && IsInt(got.v, 2 * dk.Id(t, j)), "ffk_dict_get(%s) = %d, %s %s", Show(kj).c_str(),
                     rc, Show(got.v).c_str(), FetchError().c_str());
        tick();
      }
    }
    for (int64_t i = 0; i < per; ++i) {  // erase half (even threads), or re-read with setdefault
      ffk_any k = key_of(i);
      if (DictKeys::Erased(t, i)) {
        if (i % 8 < 4) {
          int rc = ffk_dict_erase(d, &k);
          STRESS_CHECK(sc, rc == 1, "ffk_dict_erase(%s) = %d %s", Show(k).c_str(), rc, FetchError().c_str());
        } else {
          ffk::test::OwnedAny got;
          int rc = ffk_dict_pop(d, &k, &got.v);
          STRESS_CHECK(sc, rc == 0 && IsInt(got.v, 2 * dk.Id(t, i)), "ffk_dict_pop(%s) = %d, %s %s", Show(k).c_str(),
                       rc, Show(got.v).c_str(), FetchError().c_str());
        }
        tick();
      } else if (i % 4 == 3) {
        ffk::test::OwnedAny got;
        ffk_any dflt = ffk_any_int(-1);
        int rc = ffk_dict_setdefault(d, &k, &dflt, &got.v);
        STRESS_CHECK(sc, rc == 1 && IsInt(got.v, 2 * dk.Id(t, i)), "ffk_dict_setdefault(%s) = %d, %s %s",
                     Show(k).c_str(), rc, Show(got.v).c_str(), FetchError().c_str());
        tick();
      }
    }
  });
  sc.Finish();

  Clock::time_point vstart = Clock::now();
  int64_t expected = 0;
  for (int t = 0; t < nthreads; ++t)
    for (int64_t i = 0; i < per; ++i) expected += !DictKeys::Erased(t, i);
  EXPECT_EQ(ffk_dict_size(d), expected);
  // Every key: present with its value, or erased.
  int64_t wrong = 0;
  char buf[64];
  for (int t = 0; t < nthreads; ++t) {
    for (int64_t i = 0; i < per; ++i) {
      ffk_any k = ffk_any_int(dk.Id(t, i));
      if (i % 2 == 1) {
        DictKeys::StrKey(t, i, buf, sizeof buf);
        k = ffk_any_raw_str(buf);
      }
      ffk::test::OwnedAny got;
      int rc = ffk_dict_get(d, &k, &got.v);
      bool ok = DictKeys::Erased(t, i) ? rc == 0 : rc == 1 && IsInt(got.v, 2 * dk.Id(t, i));
      if (!ok && wrong++ < 5) ADD_FAILURE() << "key " << Show(k) << ": rc " << rc << ", " << Show(got.v);
    }
  }
  EXPECT_EQ(wrong, 0);
  // Iteration: exactly the expected entries, and each thread's keys in its insertion order.
  std::vector<int64_t> last(nthreads, -1);
  int64_t count = 0, bad = 0;
  ffk_dict_iter it;
  ffk_dict_iter_init(&it, d);
  for (;;) {
    ffk::test::OwnedAny k, v;
    int rc = ffk_dict_iter_next(&it, &k.v, &v.v);
    if (rc != 1) {
      EXPECT_EQ(rc, 0) << FetchError();
      break;
    }
    ++count;
    int t = -1;
    long long i = -1;
    if (k.v.type_index == FFK_TYPE_INT) {
      t = static_cast<int>(k.v.v_int / per);
      i = k.v.v_int % per;
      if (i % 2 != 0) t = -1;
    } else {
      const char* s = nullptr;
      size_t n = 0;
      if (ffk_any_as_str(&k.v, &s, &n) != 0 || std::sscanf(s, "dict-key-t%d-%lld", &t, &i) != 2 || i % 2 != 1) t = -1;
      ffk_error_clear();
    }
    bool ok = t >= 0 && t < nthreads && i >= 0 && i < per && !DictKeys::Erased(t, i) &&
              IsInt(v.v, 2 * dk.Id(t, i)) && i > last[t];
    if (!ok && bad++ < 5) ADD_FAILURE() << "entry " << Show(k.v) << ": " << Show(v.v);
    if (t >= 0 && t < nthreads) last[t] = i;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(count, expected);
  std::printf("[stress]   Dict disjoint keys: verified %lld keys (%lld remain) in %.3f s\n",
              static_cast<long long>(nthreads * per), static_cast<long long>(expected),
              std::chrono::duration<double>(Clock::now() - vstart).count());
  ffk_object_release(Obj(d));
}

// =======================================================================================
// 4. Iterating a Dict and a List while other threads change them.
// =======================================================================================

// Writers only ever store, in the Dict: int key k -> 2 * k, and String key iter-key-N ->
// the String "value-of-iter-key-N"; in the List: even ints and "list-value-N" Strings.
// The int keys below kPinned are never erased or popped: only ffk_dict_clear removes them,
// and the writer that clears puts them back at once, between two counters that let a
// reader tell whether a clear overlapped its pass. Half of the writers' ffk_dict_update
// calls merge a Map of pinned keys only, which never adds a key (so it must not disturb an
// iteration). A pass that completes without a clear overlapping it must see every pinned
// key exactly once, and no pass that completes may see any key twice.
struct IterData {
  static constexpr int64_t kIntKeys = 512;
  static constexpr int64_t kStrKeys = 128;
  static constexpr int64_t kKeys = kIntKeys + kStrKeys;
  static constexpr int64_t kPinned = 64;
  static constexpr int64_t kListBound = 256;
  std::atomic<int64_t> clears_started{0}, clears_done{0};
  std::vector<std::string> key_strs, val_strs;
  std::vector<ffk_any> val_objs;   // "value-of-iter-key-N" String objects (owned here)
  std::vector<ffk_any> list_objs;  // "list-value-N" String objects (owned here)
  ffk_dict* dict = nullptr;
  ffk_list* list = nullptr;

  ffk_any Key(int64_t k) const {
    return k < kIntKeys ? ffk_any_int(k) : ffk_any_raw_str(key_strs[k - kIntKeys].c_str());
  }
  const ffk_any* ValuePtr(int64_t k, ffk_any* tmp) const {
    if (k < kIntKeys) {
      *tmp = ffk_any_int(2 * k);
      return tmp;
    }
    return &val_objs[k - kIntKeys];
  }
  bool EntryOk(const ffk_any& k, const ffk_any& v) const {
    if (k.type_index == FFK_TYPE_INT) return k.v_int >= 0 && k.v_int < kIntKeys && IsInt(v, 2 * k.v_int);
    if (!StrStartsWith(k, "iter-key-")) return false;
    const char* s = nullptr;
    size_t n = 0;
    if (ffk_any_as_str(&k, &s, &n) != 0) {
      ffk_error_clear();
      return false;
    }
    long long idx = std::atoll(s + 9);
    if (idx < 0 || idx >= kStrKeys) return false;
    return IsStr(v, val_strs[idx]);
  }
  // The key number (0 .. kKeys-1) of a stored key, or -1.
  int64_t KeyNumber(const ffk_any& k) const {
    if (k.type_index == FFK_TYPE_INT) return k.v_int >= 0 && k.v_int < kIntKeys ? k.v_int : -1;
    if (!StrStartsWith(k, "iter-key-")) return -1;
    const char* s = nullptr;
    size_t n = 0;
    if (ffk_any_as_str(&k, &s, &n) != 0) {
      ffk_error_clear();
      return -1;
    }
    long long idx = std::atoll(s + 9);
    return idx >= 0 && idx < kStrKeys ? kIntKeys + idx : -1;
  }
  // `v` is the value writers store for key number k.
  bool ValueOkFor(int64_t k, const ffk_any& v) const {
    return k < kIntKeys ? IsInt(v, 2 * k) : IsStr(v, val_strs[k - kIntKeys]);
  }
  static bool ListValueOk(const ffk_any& v) {
    if (v.type_index == FFK_TYPE_INT) return v.v_int % 2 == 0 && v.v_int >= 0;
    return StrStartsWith(v, "list-value-");
  }
};

void SetPinnedKeys(Scenario& sc, IterData& id) {
  for (int64_t k = 0; k < IterData::kPinned; ++k) {
    ffk_any key = ffk_any_int(k), value = ffk_any_int(2 * k);
    STRESS_CHECK(sc, ffk_dict_set(id.dict, &key, &value) == 0, "ffk_dict_set: %s", FetchError().c_str());
  }
}

void DictWriterOp(Scenario& sc, IterData& id, Rng& rng, ffk_map* own_map, ffk_map* pinned_map) {
  ffk_dict* d = id.dict;
  const int64_t r = rng.Below(1000);
  const bool removes = r >= 450 && r < 950;  // erase, pop, setdefault, pop_default: never a pinned key
  const int64_t k = removes ? IterData::kPinned + rng.Below(IterData::kKeys - IterData::kPinned)
                            : rng.Below(IterData::kKeys);
  const ffk_any key = id.Key(k);
  ffk_any tmp;
  const ffk_any* value = id.ValuePtr(k, &tmp);
  std::string err;
  if (r < 450) {
    int rc = ffk_dict_set(d, &key, value);
    STRESS_CHECK(sc, rc == 0, "ffk_dict_set: %s", FetchError().c_str());
  } else if (r < 700) {
    int rc = ffk_dict_erase(d, &key);
    STRESS_CHECK(sc, rc == 0 || rc == 1, "ffk_dict_erase = %d: %s", rc, FetchError().c_str());
  } else if (r < 800) {
    ffk::test::OwnedAny out;
    int rc = ffk_dict_pop(d, &key, &out.v);
    if (rc == 0) {
      STRESS_CHECK(sc, id.ValueOkFor(k, out.v), "popped %s: %s", Show(key).c_str(), Show(out.v).c_str());
    } else {
      STRESS_CHECK(sc, TakeError(FFK_ERR_KEY, nullptr, &err), "ffk_dict_pop of a missing key: %s", err.c_str());
      STRESS_CHECK(sc, out.v.type_index == FFK_TYPE_NONE, "ffk_dict_pop failed with *out %s", Show(out.v).c_str());
    }
  } else if (r < 900) {
    ffk::test::OwnedAny out;
    int rc = ffk_dict_setdefault(d, &key, value, &out.v);
    STRESS_CHECK(sc, (rc == 0 || rc == 1) && ffk_any_equal(&out.v, value), "ffk_dict_setdefault = %d, %s: %s", rc,
                 Show(out.v).c_str(), FetchError().c_str());
  } else if (r < 950) {
    ffk::test::OwnedAny out;
    int rc = ffk_dict_pop_default(d, &key, value, &out.v);
    STRESS_CHECK(sc, (rc == 0 || rc == 1) && ffk_any_equal(&out.v, value), "ffk_dict_pop_default = %d, %s: %s", rc,
                 Show(out.v).c_str(), FetchError().c_str());
  } else if (r < 995) {
    ffk_map* m = rng.Percent(50) ? own_map : pinned_map;
    int rc = ffk_dict_update(d, reinterpret_cast<const ffk_object*>(m));
    STRESS_CHECK(sc, rc == 0, "ffk_dict_update from a Map: %s", FetchError().c_str());
  } else {
    id.clears_started.fetch_add(1);
    int rc = ffk_dict_clear(d);
    STRESS_CHECK(sc, rc == 0, "ffk_dict_clear: %s", FetchError().c_str());
    SetPinnedKeys(sc, id);
    id.clears_done.fetch_add(1);
  }
}

ffk_any ListValue(const IterData& id, Rng& rng);

// Changes that never add or remove a key or an element, so they must never make an
// iteration fail or skip: merging a Map of (normally present) pinned keys, setting a
// pinned key's value, replacing a List element.
void ValueOnlyWriterOp(Scenario& sc, IterData& id, Rng& rng, ffk_map* pinned_map) {
  const int64_t r = rng.Below(3);
  if (r == 0) {
    int rc = ffk_dict_update(id.dict, reinterpret_cast<const ffk_object*>(pinned_map));
    STRESS_CHECK(sc, rc == 0, "ffk_dict_update from a Map: %s", FetchError().c_str());
  } else if (r == 1) {
    const int64_t k = rng.Below(IterData::kPinned);
    ffk_any key = ffk_any_int(k), value = ffk_any_int(2 * k);
    STRESS_CHECK(sc, ffk_dict_set(id.dict, &key, &value) == 0, "ffk_dict_set: %s", FetchError().c_str());
  } else {
    const int64_t size = ffk_list_size(id.list);
    ffk_any v = ListValue(id, rng);
    std::string err;
    if (size > 0 && ffk_list_set(id.list, rng.Below(size), &v) != 0)
      STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, nullptr, &err), "ffk_list_set: %s", err.c_str());
  }
}

ffk_any ListValue(const IterData& id, Rng& rng) {
  if (rng.Percent(25)) {
    ffk_any v = id.list_objs[rng.Below(static_cast<int64_t>(id.list_objs.size()))];
    return v;  // borrowed: the List makes its own reference
  }
  return ffk_any_int(2 * rng.Below(1 << 20));
}

void ListWriterOp(Scenario& sc, const IterData& id, Rng& rng) {
  ffk_list* l = id.list;
  std::string err;
  const int64_t size = ffk_list_size(l);  // may be stale by the time it is used
  const int64_t r = rng.Below(100);
  if (r < 35) {
    ffk_any v = ListValue(id, rng);
    STRESS_CHECK(sc, ffk_list_append(l, &v) == 0, "ffk_list_append: %s", FetchError().c_str());
  } else if (r < 45) {
    ffk_any v = ListValue(id, rng);
    int rc = ffk_list_insert(l, rng.Below(size + 3) - 1, &v);
    STRESS_CHECK(sc, rc == 0, "ffk_list_insert: %s", FetchError().c_str());
  } else if (r < 60) {
    ffk::test::OwnedAny out;
    int rc = ffk_list_pop(l, rng.Percent(50) ? -1 : 0, &out.v);
    if (rc == 0) {
      STRESS_CHECK(sc, IterData::ListValueOk(out.v), "popped %s", Show(out.v).c_str());
    } else {
      STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, nullptr, &err), "ffk_list_pop: %s", err.c_str());
    }
  } else if (r < 70) {
    ffk_any v = ListValue(id, rng);
    int rc = ffk_list_set(l, size > 0 ? rng.Below(size) : 0, &v);
    if (rc != 0) STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, nullptr, &err), "ffk_list_set: %s", err.c_str());
  } else if (r < 78) {
    int rc = ffk_list_erase_at(l, size > 0 ? -1 - rng.Below(size) : 0);
    if (rc != 0) STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, nullptr, &err), "ffk_list_erase_at: %s", err.c_str());
  } else if (r < 82) {
    const int64_t b = size > 0 ? rng.Below(size) : 0;
    const int64_t e = std::min(size, b + rng.Below(4));
    int rc = ffk_list_erase(l, b, e);
    if (rc != 0) STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, nullptr, &err), "ffk_list_erase: %s", err.c_str());
  } else if (r < 84) {
    STRESS_CHECK(sc, ffk_list_reverse(l) == 0, "ffk_list_reverse: %s", FetchError().c_str());
  } else if (r < 92) {
    ffk_any vs[4] = {ListValue(id, rng), ListValue(id, rng), ListValue(id, rng), ListValue(id, rng)};
    STRESS_CHECK(sc, ffk_list_extend(l, vs, 4) == 0, "ffk_list_extend: %s", FetchError().c_str());
  } else if (r < 97) {
    ffk_any vs[3] = {ListValue(id, rng), ListValue(id, rng), ListValue(id, rng)};
    const int64_t start = rng.Below(size + 2) - 1;
    int rc = ffk_list_set_slice(l, start, start + rng.Below(4), vs, rng.Below(4));
    STRESS_CHECK(sc, rc == 0, "ffk_list_set_slice: %s", FetchError().c_str());
  } else {
    STRESS_CHECK(sc, ffk_list_clear(l) == 0, "ffk_list_clear: %s", FetchError().c_str());
  }
  if (ffk_list_size(l) > IterData::kListBound)
    STRESS_CHECK(sc, ffk_list_clear(l) == 0, "ffk_list_clear: %s", FetchError().c_str());
}

struct IterCounters {
  std::atomic<int64_t> dict_done{0}, dict_changed{0}, list_done{0}, list_changed{0};
  std::atomic<int64_t> dict_entries{0}, list_elements{0};
  std::atomic<int64_t> dict_pinned_checked{0};  // completed passes checked for every pinned key
  std::atomic<int64_t> dict_size_checked{0}, list_size_checked{0};  // completed passes checked against the size
};

// One pass of a Dict iterator; stops early after `budget` steps.
void IterateDict(Scenario& sc, IterData& id, Rng& rng, Ticker& tick, int64_t budget, IterCounters& c,
                 std::string* sample) {
  // No clear in progress or finished since these loads, up to the end of the pass: the
  // pinned keys are all there throughout.
  const int64_t started = id.clears_started.load();
  const bool no_clear_running = started == id.clears_done.load();
  ffk_dict_iter it;
  ffk_dict_iter_init(&it, id.dict);
  const bool keys_only = rng.Percent(10), values_only = !keys_only && rng.Percent(10);
  std::vector<uint8_t> seen(values_only ? 0 : IterData::kKeys, 0);
  int64_t count = 0;
  for (int64_t step = 0; step < budget; ++step) {
    ffk_any k = ffk_any_none(), v = ffk_any_none();
    int rc = ffk_dict_iter_next(&it, values_only ? nullptr : &k, keys_only ? nullptr : &v);
    tick();
    if (rc == 1) {
      ++count;
      c.dict_entries.fetch_add(1, std::memory_order_relaxed);
      if (!values_only) {
        const int64_t number = id.KeyNumber(k);
        if (number >= 0) ++seen[number];
      }
      if (keys_only) {
        STRESS_CHECK(sc, id.KeyNumber(k) >= 0, "iterated key %s", Show(k).c_str());
      } else if (values_only) {
        STRESS_CHECK(sc, v.type_index == FFK_TYPE_INT ? v.v_int % 2 == 0 : StrStartsWith(v, "value-of-iter-key-"),
                     "iterated value %s", Show(v).c_str());
      } else {
        STRESS_CHECK(sc, id.EntryOk(k, v), "iterated entry %s: %s", Show(k).c_str(), Show(v).c_str());
      }
      ffk_any_release(&k);
      ffk_any_release(&v);
      continue;
    }
    ffk_any_release(&k);
    ffk_any_release(&v);
    if (rc == 0) {
      c.dict_done.fetch_add(1, std::memory_order_relaxed);
      // If the iterator still reports the end after the size is read, no key was added or
      // removed from ffk_dict_iter_init until then: the pass saw every entry exactly once.
      const int64_t size = ffk_dict_size(id.dict);
      const int rc2 = ffk_dict_iter_next(&it, nullptr, nullptr);
      if (rc2 == 0) {
        c.dict_size_checked.fetch_add(1, std::memory_order_relaxed);
        STRESS_CHECK(sc, count == size,
                     "a Dict pass that completed without an error gave %lld entries of %lld (entries skipped or "
                     "repeated with no 'changed during iteration' error)",
                     static_cast<long long>(count), static_cast<long long>(size));
      } else {
        std::string err;
        STRESS_CHECK(sc, rc2 == -1 && TakeError(FFK_ERR_RUNTIME, "changed during iteration", &err),
                     "ffk_dict_iter_next after the end = %d: %s", rc2, err.c_str());
      }
      if (values_only) return;
      // No key was added or removed during this pass (else it had failed): each key once.
      for (int64_t n = 0; n < IterData::kKeys; ++n)
        STRESS_CHECK(sc, seen[n] <= 1, "a Dict pass that completed without an error gave key %s %d times",
                     Show(id.Key(n)).c_str(), seen[n]);
      if (no_clear_running && id.clears_started.load() == started) {
        c.dict_pinned_checked.fetch_add(1, std::memory_order_relaxed);
        for (int64_t n = 0; n < IterData::kPinned; ++n)
          STRESS_CHECK(sc, seen[n] == 1,
                       "a Dict pass that completed without an error gave the always-present key %lld %d times "
                       "(an entry was skipped or repeated with no 'changed during iteration' error)",
                       static_cast<long long>(n), seen[n]);
      }
    } else {
      std::string err;
      if (sample->empty() && ffk_error_peek_borrow() != nullptr)
        *sample = Fmt("%s: %s", ffk_error_kind(ffk_error_peek_borrow()), ffk_error_message(ffk_error_peek_borrow()));
      STRESS_CHECK(sc, rc == -1 && TakeError(FFK_ERR_RUNTIME, "changed during iteration", &err),
                   "ffk_dict_iter_next = %d: %s", rc, err.c_str());
      c.dict_changed.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
}

void IterateList(Scenario& sc, Rng&, ffk_list* l, Ticker& tick, int64_t budget, IterCounters& c,
                 std::string* sample) {
  ffk_list_iter it;
  ffk_list_iter_init(&it, l);
  int64_t count = 0;
  for (int64_t step = 0; step < budget; ++step) {
    ffk_any v = ffk_any_none();
    int rc = ffk_list_iter_next(&it, &v);
    tick();
    if (rc == 1) {
      ++count;
      c.list_elements.fetch_add(1, std::memory_order_relaxed);
      STRESS_CHECK(sc, IterData::ListValueOk(v), "iterated element %s", Show(v).c_str());
      ffk_any_release(&v);
      continue;
    }
    ffk_any_release(&v);
    if (rc == 0) {
      c.list_done.fetch_add(1, std::memory_order_relaxed);
      // If the iterator still reports the end after the size is read, nothing was added or
      // removed from ffk_list_iter_init until then: the pass saw every element once.
      const int64_t size = ffk_list_size(l);
      ffk_any extra = ffk_any_none();
      const int rc2 = ffk_list_iter_next(&it, &extra);
      ffk_any_release(&extra);
      if (rc2 == 0) {
        c.list_size_checked.fetch_add(1, std::memory_order_relaxed);
        STRESS_CHECK(sc, count == size, "a List pass that completed without an error gave %lld elements of %lld",
                     static_cast<long long>(count), static_cast<long long>(size));
      } else {
        std::string err;
        STRESS_CHECK(sc, rc2 == -1 && TakeError(FFK_ERR_RUNTIME, "changed during iteration", &err),
                     "ffk_list_iter_next after the end = %d: %s", rc2, err.c_str());
      }
    } else {
      std::string err;
      if (sample->empty() && ffk_error_peek_borrow() != nullptr)
        *sample = Fmt("%s: %s", ffk_error_kind(ffk_error_peek_borrow()), ffk_error_message(ffk_error_peek_borrow()));
      STRESS_CHECK(sc, rc == -1 && TakeError(FFK_ERR_RUNTIME, "changed during iteration", &err),
                   "ffk_list_iter_next = %d: %s", rc, err.c_str());
      c.list_changed.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
}

void ReadSnapshots(Scenario& sc, IterData& id, Rng& rng) {
  const int64_t r = rng.Below(4);
  if (r == 0) {
    ffk_map* m = ffk_dict_to_map(id.dict);
    STRESS_CHECK(sc, m != nullptr, "ffk_dict_to_map: %s", FetchError().c_str());
    if (m == nullptr) return;
    int64_t pos = 0, n = 0;
    const ffk_any *k, *v;
    while (ffk_map_next(m, &pos, &k, &v)) {
      ++n;
      STRESS_CHECK(sc, id.EntryOk(*k, *v), "snapshot entry %s: %s", Show(*k).c_str(), Show(*v).c_str());
    }
    STRESS_CHECK(sc, n == ffk_map_size(m), "snapshot iteration gave %lld of %lld", static_cast<long long>(n),
                 static_cast<long long>(ffk_map_size(m)));
    ffk_object_release(Obj(m));
  } else if (r == 1) {
    ffk_array* a = ffk_list_to_array(id.list);
    STRESS_CHECK(sc, a != nullptr, "ffk_list_to_array: %s", FetchError().c_str());
    if (a == nullptr) return;
    const ffk_any* items = ffk_array_items_borrow(a);
    for (int64_t i = 0; i < ffk_array_size(a); ++i)
      STRESS_CHECK(sc, IterData::ListValueOk(items[i]), "snapshot element %s", Show(items[i]).c_str());
    ffk_object_release(Obj(a));
  } else if (r == 2) {
    const int64_t k = rng.Below(IterData::kIntKeys + IterData::kStrKeys);
    ffk_any key = id.Key(k);
    ffk::test::OwnedAny got;
    int rc = ffk_dict_get(id.dict, &key, &got.v);
    STRESS_CHECK(sc, rc == 0 || (rc == 1 && id.ValueOkFor(k, got.v)), "ffk_dict_get(%s) = %d, %s %s", Show(key).c_str(), rc, Show(got.v).c_str(), FetchError().c_str());
  } else {
    ffk::test::OwnedAny got;
    const int64_t idx = rng.Below(IterData::kListBound) - IterData::kListBound / 2;
    int rc = ffk_list_get(id.list, idx, &got.v);
    std::string err;
    if (rc == 0) {
      STRESS_CHECK(sc, IterData::ListValueOk(got.v), "ffk_list_get(%lld) = %s", static_cast<long long>(idx),
                   Show(got.v).c_str());
    } else {
      STRESS_CHECK(sc, TakeError(FFK_ERR_INDEX, "out of range", &err), "ffk_list_get(%lld): %s",
                   static_cast<long long>(idx), err.c_str());
    }
  }
}

TEST_F(Stress, IterationWhileOtherThreadsMutateSeesOnlyStoredValuesOrAnError) {
  Scenario sc(4, "iterate while mutating");
  IterData id;
  for (int64_t s = 0; s < IterData::kStrKeys; ++s) {
    id.key_strs.push_back(Fmt("iter-key-%05lld", static_cast<long long>(s)));
    id.val_strs.push_back("value-of-" + id.key_strs.back());
    id.val_objs.push_back(OwnedStr(id.val_strs.back()));
  }
  for (int s = 0; s < 16; ++s) id.list_objs.push_back(OwnedStr(Fmt("list-value-%03d", s)));
  id.dict = ffk_dict_new();
  id.list = ffk_list_new();
  ASSERT_TRUE(id.dict != nullptr && id.list != nullptr) << FetchError();
  for (int64_t k = 0; k < IterData::kKeys; ++k) {
    if (k >= IterData::kPinned && k % 3 != 0) continue;
    ffk_any key = id.Key(k), tmp;
    ASSERT_EQ(ffk_dict_set(id.dict, &key, id.ValuePtr(k, &tmp)), 0) << FetchError();
  }
  for (int64_t i = 0; i < 64; ++i) {
    ffk_any v = ffk_any_int(2 * i);
    ASSERT_EQ(ffk_list_append(id.list, &v), 0) << FetchError();
  }

  const int nthreads = Cfg().threads;
  const int writers = nthreads / 2;
  const int64_t ops = Cfg().ops;
  IterCounters c;
  std::mutex sample_mu;
  std::string dict_sample, list_sample;
  const Clock::time_point run_start = Clock::now();
  std::atomic<int64_t> writers_end_us{0}, readers_end_us{0};  // when the last of each finished
  std::atomic<int> writers_running{writers};
  auto finished = [&](std::atomic<int64_t>& end_us) {
    int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - run_start).count();
    int64_t prev = end_us.load();
    while (prev < us && !end_us.compare_exchange_weak(prev, us)) {
    }
  };
  sc.Run(nthreads, [&](int t, Rng& rng, Ticker& tick) {
    if (t < writers) {
      // Maps of valid entries for ffk_dict_update: 8 random keys, and every pinned key (a
      // merge that adds no key but needs room for 64: a large window in which the table is
      // too full for it).
      ffk_map* own = ffk_map_new();
      ffk_map* pinned = ffk_map_new();
      STRESS_CHECK(sc, own != nullptr && pinned != nullptr, "ffk_map_new: %s", FetchError().c_str());
      for (int64_t e = 0; e < IterData::kPinned && own != nullptr && pinned != nullptr; ++e) {
        ffk_any key = id.Key(e), tmp;
        STRESS_CHECK(sc, ffk_map_set(&pinned, &key, id.ValuePtr(e, &tmp)) == 0, "ffk_map_set: %s",
                     FetchError().c_str());
        if (e >= 8) continue;
        const int64_t k = rng.Below(IterData::kKeys);
        key = id.Key(k);
        STRESS_CHECK(sc, ffk_map_set(&own, &key, id.ValuePtr(k, &tmp)) == 0, "ffk_map_set: %s", FetchError().c_str());
      }
      const bool value_only = writers >= 2 && t == writers - 1;
      for (int64_t op = 0; own != nullptr && pinned != nullptr && op < ops; ++op, tick()) {
        if (value_only) {
          ValueOnlyWriterOp(sc, id, rng, pinned);
        } else if (rng.Percent(50)) {
          DictWriterOp(sc, id, rng, own, pinned);
        } else {
          ListWriterOp(sc, id, rng);
        }
      }
      ffk_object_release(Obj(own));
      ffk_object_release(Obj(pinned));
      writers_running.fetch_sub(1);
      finished(writers_end_us);
      return;
    }
    // Readers iterate as long as any writer runs, and for at least `ops` steps.
    std::string ds, ls;
    while (tick.count() < ops || writers_running.load(std::memory_order_relaxed) > 0) {
      const int64_t budget = std::max<int64_t>(ops - tick.count(), 4 * IterData::kKeys);
      const int64_t r = rng.Below(100);
      if (r < 45) {
        IterateDict(sc, id, rng, tick, budget, c, &ds);
      } else if (r < 90) {
        IterateList(sc, rng, id.list, tick, budget, c, &ls);
      } else {
        ReadSnapshots(sc, id, rng);
        tick();
      }
    }
    finished(readers_end_us);
    std::lock_guard<std::mutex> lock(sample_mu);
    if (dict_sample.empty()) dict_sample = ds;
    if (list_sample.empty()) list_sample = ls;
  });
  sc.Note(Fmt("Dict passes: %lld completed (%lld checked against the size, %lld for every pinned key), %lld "
              "stopped by a change (%lld entries seen); List passes: %lld completed (%lld checked against the "
              "size), %lld stopped (%lld elements seen)",
              static_cast<long long>(c.dict_done.load()), static_cast<long long>(c.dict_size_checked.load()),
              static_cast<long long>(c.dict_pinned_checked.load()), static_cast<long long>(c.dict_changed.load()),
              static_cast<long long>(c.dict_entries.load()), static_cast<long long>(c.list_done.load()),
              static_cast<long long>(c.list_size_checked.load()), static_cast<long long>(c.list_changed.load()),
              static_cast<long long>(c.list_elements.load())));
  sc.Note(Fmt("%d writer threads (%d changing only values) finished after %.3f s, %d readers after %.3f s", writers,
              writers >= 2 ? 1 : 0, writers_end_us.load() / 1e6, nthreads - writers, readers_end_us.load() / 1e6));
  if (!dict_sample.empty()) sc.Note("a Dict iteration error: " + dict_sample);
  if (!list_sample.empty()) sc.Note("a List iteration error: " + list_sample);
  sc.Finish();

  // Quiet now: a full pass must complete and see only stored values.
  Scenario quiet(4, "iterate while mutating (final single-threaded pass)", false);
  quiet.Run(1, [&](int, Rng& rng, Ticker& tick) {
    IterCounters c2;
    std::string s1, s2;
    IterateDict(quiet, id, rng, tick, INT64_MAX, c2, &s1);
    IterateList(quiet, rng, id.list, tick, INT64_MAX, c2, &s2);
    STRESS_CHECK(quiet, c2.dict_done == 1 && c2.list_done == 1, "quiet passes: dict %lld list %lld",
                 static_cast<long long>(c2.dict_done.load()), static_cast<long long>(c2.list_done.load()));
    STRESS_CHECK(quiet, c2.dict_entries == ffk_dict_size(id.dict), "a quiet Dict pass saw %lld of %lld",
                 static_cast<long long>(c2.dict_entries.load()), static_cast<long long>(ffk_dict_size(id.dict)));
    STRESS_CHECK(quiet, c2.list_elements == ffk_list_size(id.list), "a quiet List pass saw %lld of %lld",
                 static_cast<long long>(c2.list_elements.load()), static_cast<long long>(ffk_list_size(id.list)));
  });
  quiet.Finish();
  EXPECT_LE(ffk_list_size(id.list), IterData::kListBound + 16);
  EXPECT_LE(ffk_dict_size(id.dict), IterData::kIntKeys + IterData::kStrKeys);
  EXPECT_EQ(ffk_object_use_count(Obj(id.dict)), 1u);
  EXPECT_EQ(ffk_object_use_count(Obj(id.list)), 1u);
  ffk_object_release(Obj(id.dict));
  ffk_object_release(Obj(id.list));
  for (int64_t s = 0; s < IterData::kStrKeys; ++s) {
    EXPECT_EQ(ffk_object_use_count(id.val_objs[s].v_obj), 1u) << "the Dict released what it held";
    ffk_any_release(&id.val_objs[s]);
  }
  for (auto& v : id.list_objs) {
    EXPECT_EQ(ffk_object_use_count(v.v_obj), 1u) << "the List released what it held";
    ffk_any_release(&v);
  }
}

// =======================================================================================
// 5. Retain/release and weak-reference storms on shared containers.
// =======================================================================================

TEST_F(Stress, RetainReleaseAndWeakStormsReturnCountsToBaseline) {
  Scenario sc(5, "retain/release storm");
  std::vector<ffk_any> items;
  for (int64_t i = 0; i < 100; ++i) items.push_back(ffk_any_int(2 * i));
  ffk_array* array = ffk_array_new(items.data(), 100);
  ffk_map* map = ffk_map_from_pairs(items.data(), items.data(), 100);
  ffk_list* list = ffk_list_from_items(items.data(), 100);
  ffk_dict* dict = ffk_dict_from_pairs(items.data(), items.data(), 100);
  ASSERT_TRUE(array && map && list && dict) << FetchError();
  // An entry k -> 2k for ffk_dict_set / ffk_map_get checks.
  for (int64_t k = 0; k < 256; ++k) {
    ffk_any key = ffk_any_int(k), v = ffk_any_int(2 * k);
    ASSERT_EQ(ffk_dict_set(dict, &key, &v), 0);
  }
  ffk_object* const objs[4] = {Obj(array), Obj(map), Obj(list), Obj(dict)};
  const int32_t types[4] = {FFK_TYPE_ARRAY, FFK_TYPE_MAP, FFK_TYPE_LIST, FFK_TYPE_DICT};
  for (ffk_object* o : objs) {
    ASSERT_EQ(ffk_object_use_count(o), 1u);
    ASSERT_EQ(ffk_object_weak_count(o), 0u);
  }
  const int64_t ops = Cfg().ops;
  std::atomic<int64_t> weak_locks{0};
  sc.Run(Cfg().threads, [&](int t, Rng& rng, Ticker& tick) {
    if (t == 0) {  // the mutator
      for (int64_t op = 0; op < ops; ++op, tick()) {
        const int64_t r = rng.Below(100);
        if (r < 30) {
          ffk_any v = ffk_any_int(2 * rng.Below(1000));
          STRESS_CHECK(sc, ffk_list_append(list, &v) == 0, "ffk_list_append: %s", FetchError().c_str());
          if (ffk_list_size(list) > 256) {
            ffk::test::OwnedAny out;
            STRESS_CHECK(sc, ffk_list_pop(list, 0, &out.v) == 0, "ffk_list_pop: %s", FetchError().c_str());
          }
        } else if (r < 45) {
          ffk::test::OwnedAny out;
          if (ffk_list_pop(list, -1, &out.v) != 0) ffk_error_clear();
        } else if (r < 75) {
          const int64_t k = rng.Below(256);
          ffk_any key = ffk_any_int(k), v = ffk_any_int(2 * k);
          STRESS_CHECK(sc, ffk_dict_set(dict, &key, &v) == 0, "ffk_dict_set: %s", FetchError().c_str());
        } else if (r < 90) {
          ffk_any key = ffk_any_int(rng.Below(256));
          STRESS_CHECK(sc, ffk_dict_erase(dict, &key) >= 0, "ffk_dict_erase: %s", FetchError().c_str());
        } else if (r < 95) {  // a private variant of the shared Array: must copy
          ffk_array* h = array;
          ffk_object_retain(Obj(h));
          ffk_any v = ffk_any_int(-1);
          STRESS_CHECK(sc, ffk_array_push(&h, &v) == 0, "ffk_array_push: %s", FetchError().c_str());
          STRESS_CHECK(sc, h != array && ffk_array_size(array) == 100, "the shared Array changed");
          ffk_object_release(Obj(h));
        } else {
          ffk_map* h = map;
          ffk_object_retain(Obj(h));
          ffk_any key = ffk_any_int(-1);
          STRESS_CHECK(sc, ffk_map_set(&h, &key, &key) == 0, "ffk_map_set: %s", FetchError().c_str());
          STRESS_CHECK(sc, h != map && ffk_map_size(map) == 100, "the shared Map changed");
          ffk_object_release(Obj(h));
        }
      }
      return;
    }
    std::vector<ffk_object*> held, weak;
    for (int64_t op = 0; op < ops; ++op, tick()) {
      const int c = static_cast<int>(rng.Below(4));
      ffk_object* o = objs[c];
      switch (rng.Below(6)) {
        case 0:
          ffk_object_retain(o);
          ffk_object_retain(o);
          ffk_object_release(o);
          ffk_object_release(o);
          break;
        case 1: {
          ffk_weak_retain(o);
          ffk_object* p = ffk_weak_lock(o);
          STRESS_CHECK(sc, p == o, "ffk_weak_lock of a live object gave %p, not %p", static_cast<void*>(p),
                       static_cast<void*>(o));
          if (p != nullptr) {
            STRESS_CHECK(sc, p->type_index == types[c], "type %d", p->type_index);
            ffk_object_release(p);
          }
          ffk_weak_release(o);
          weak_locks.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        case 2: {
          ffk_any a = ffk_any_object(o);
          ffk_any b = a;
          ffk_any_retain(&b);
          uint32_t uses = ffk_object_use_count(o);
          STRESS_CHECK(sc, uses >= 3, "use count %u while this thread holds two references", uses);
          ffk_any_release(&a);
          ffk_any_release(&b);
          break;
        }
        case 3:  // hold references and weak references for a while
          ffk_object_retain(o);
          held.push_back(o);
          ffk_weak_retain(o);
          weak.push_back(o);
          if (held.size() >= 16) {
            for (ffk_object* h : held) ffk_object_release(h);
            held.clear();
            for (ffk_object* w : weak) {
              ffk_object* p = ffk_weak_lock(w);
              STRESS_CHECK(sc, p == w, "ffk_weak_lock of a live object failed");
              ffk_object_release(p);
              ffk_weak_release(w);
            }
            weak.clear();
          }
          break;
        case 4: {  // read through the shared handle
          if (c == 0) {
            const ffk_any* it = ffk_array_items_borrow(array);
            STRESS_CHECK(sc, ffk_array_size(array) == 100 && IsInt(it[7], 14), "the shared Array changed");
          } else if (c == 1) {
            ffk_any key = ffk_any_int(2 * rng.Below(100));
            ffk::test::OwnedAny v;
            STRESS_CHECK(sc, ffk_map_get(map, &key, &v.v) == 1 && IsInt(v.v, key.v_int), "map value %s",
                         Show(v.v).c_str());
          } else if (c == 2) {
            ffk::test::OwnedAny v;
            if (ffk_list_get(list, 0, &v.v) == 0) {
              STRESS_CHECK(sc, v.v.type_index == FFK_TYPE_INT && v.v.v_int % 2 == 0, "list[0] = %s", Show(v.v).c_str());
            } else {
              ffk_error_clear();
            }
          } else {
            const int64_t k = rng.Below(256);
            ffk_any key = ffk_any_int(k);
            ffk::test::OwnedAny v;
            int rc = ffk_dict_get(dict, &key, &v.v);
            STRESS_CHECK(sc, rc == 0 || (rc == 1 && IsInt(v.v, 2 * k)), "dict[%lld] = %s", static_cast<long long>(k),
                         Show(v.v).c_str());
          }
          break;
        }
        default: {  // weak reference outliving a strong one taken and dropped through it
          ffk_object_retain(o);
          ffk_weak_retain(o);
          ffk_object_release(o);
          ffk_object* p = ffk_weak_lock(o);  // the main thread's reference keeps it alive
          STRESS_CHECK(sc, p == o, "ffk_weak_lock of a live object failed");
          ffk_object_release(p);
          ffk_weak_release(o);
          break;
        }
      }
      uint32_t uses = ffk_object_use_count(o);
      STRESS_CHECK(sc, uses >= 1, "use count %u", uses);
    }
    for (ffk_object* h : held) ffk_object_release(h);
    for (ffk_object* w : weak) ffk_weak_release(w);
  });
  sc.Note(Fmt("%lld weak lock round trips", static_cast<long long>(weak_locks.load())));
  sc.Finish();
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(ffk_object_use_count(objs[c]), 1u) << "container " << c;
    EXPECT_EQ(ffk_object_weak_count(objs[c]), 0u) << "container " << c;
    EXPECT_TRUE(ffk_object_is_unique(objs[c])) << "container " << c;
  }
  EXPECT_EQ(ffk_array_size(array), 100);
  EXPECT_EQ(ffk_map_size(map), 100);
  ffk_array* snap = ffk_list_to_array(list);
  ASSERT_NE(snap, nullptr);
  for (int64_t i = 0; i < ffk_array_size(snap); ++i) {
    const ffk_any& v = ffk_array_items_borrow(snap)[i];
    EXPECT_TRUE(v.type_index == FFK_TYPE_INT && v.v_int % 2 == 0) << Show(v);
  }
  ffk_object_release(Obj(snap));
  for (ffk_object* o : objs) ffk_object_release(o);
}

// =======================================================================================
// 6. Operations on two containers, in both orders at once, must not deadlock.
// =======================================================================================

TEST_F(Stress, TwoContainerOperationsInBothOrdersDoNotDeadlock) {
  Scenario sc(6, "two-container operations");
  constexpr int64_t kListBound = 256;
  constexpr int64_t kIntKeys = 64, kStrKeys = 16;
  std::vector<std::string> key_strs, val_strs;
  std::vector<ffk_any> val_objs;
  for (int64_t s = 0; s < kStrKeys; ++s) {
    key_strs.push_back(Fmt("pair-key-%04lld", static_cast<long long>(s)));
    val_strs.push_back("value-of-" + key_strs.back());
    val_objs.push_back(OwnedStr(val_strs.back()));
  }
  auto key_of = [&](int64_t k) {
    return k < kIntKeys ? ffk_any_int(k) : ffk_any_raw_str(key_strs[k - kIntKeys].c_str());
  };
  auto value_of = [&](int64_t k) { return k < kIntKeys ? ffk_any_int(2 * k) : val_objs[k - kIntKeys]; };
  auto entry_ok = [&](const ffk_any& k, const ffk_any& v) {
    if (k.type_index == FFK_TYPE_INT) return k.v_int >= 0 && k.v_int < kIntKeys && IsInt(v, 2 * k.v_int);
    for (int64_t s = 0; s < kStrKeys; ++s)
      if (IsStr(k, key_strs[s])) return IsStr(v, val_strs[s]);
    return false;
  };
  ffk_list* lists[2] = {ffk_list_new(), ffk_list_new()};
  ffk_dict* dicts[2] = {ffk_dict_new(), ffk_dict_new()};
  ASSERT_TRUE(lists[0] && lists[1] && dicts[0] && dicts[1]) << FetchError();
  for (int side = 0; side < 2; ++side) {
    for (int64_t i = 0; i < 8; ++i) {
      ffk_any v = ffk_any_int(2 * i + side);  // even in a, odd in b: both are fine
      ASSERT_EQ(ffk_list_append(lists[side], &v), 0);
      ffk_any k = key_of(i * 9 + side), val = value_of(i * 9 + side);
      ASSERT_EQ(ffk_dict_set(dicts[side], &k, &val), 0);
    }
  }
  const int64_t ops = Cfg().ops;
  std::atomic<int64_t> kinds[10] = {};
  sc.Run(Cfg().threads, [&](int t, Rng& rng, Ticker& tick) {
    int64_t local[10] = {};
    for (int64_t op = 0; op < ops; ++op, tick()) {
      const int64_t kind = rng.Percent(60) ? t % 4 : rng.Below(10);
      const int side = static_cast<int>(rng.Below(2));
      ffk_list* la = lists[side];
      ffk_list* lb = lists[1 - side];
      ffk_dict* da = dicts[side];
      ffk_dict* db = dicts[1 - side];
      ++local[kind];
      int rc = 0;
      switch (kind) {
        case 0:
          rc = ffk_list_extend_from(lists[0], Obj(lists[1]));
          break;
        case 1:
          rc = ffk_list_extend_from(lists[1], Obj(lists[0]));
          break;
        case 2:
          rc = ffk_dict_update(dicts[0], Obj(dicts[1]));
          break;
        case 3:
          rc = ffk_dict_update(dicts[1], Obj(dicts[0]));
          break;
        case 4:  // a container with itself
          rc = rng.Percent(50) ? ffk_list_extend_from(la, Obj(la)) : ffk_dict_update(da, Obj(da));
          break;
        case 5: {
          const int64_t start = rng.Below(8) - 2;
          rc = ffk_list_set_slice_from(la, start, start + rng.Below(6), Obj(lb));
          break;
        }
        case 6: {  // element operations on both sides
          ffk_any v = ffk_any_int(2 * rng.Below(100));
          rc = ffk_list_append(la, &v);
          if (rc == 0) {
            ffk::test::OwnedAny out;
            if (ffk_list_pop(lb, 0, &out.v) != 0) ffk_error_clear();
          }
          break;
        }
        case 7: {
          const int64_t k = rng.Below(kIntKeys + kStrKeys);
          ffk_any key = key_of(k), val = value_of(k);
          rc = ffk_dict_set(da, &key, &val);
          if (rc == 0) rc = ffk_dict_erase(db, &key) >= 0 ? 0 : -1;
          break;
        }
        case 8: {  // snapshots of one side applied to the other
          ffk_array* a = ffk_list_to_array(lb);
          ffk_map* m = ffk_dict_to_map(db);
          rc = a != nullptr && m != nullptr ? 0 : -1;
          if (rc == 0) rc = ffk_list_extend_from(la, Obj(a));
          if (rc == 0) rc = ffk_dict_update(da, Obj(m));
          ffk_object_release(Obj(a));
          ffk_object_release(Obj(m));
          break;
        }
        default:
          rc = rng.Percent(50) ? ffk_list_clear(la) : ffk_dict_clear(da);
          break;
      }
      STRESS_CHECK(sc, rc == 0, "operation %lld failed: %s", static_cast<long long>(kind), FetchError().c_str());
      for (ffk_list* l : lists)
        if (ffk_list_size(l) > kListBound) STRESS_CHECK(sc, ffk_list_clear(l) == 0, "clear: %s", FetchError().c_str());
    }
    for (int k = 0; k < 10; ++k) kinds[k].fetch_add(local[k]);
  });
  std::string mix;
  for (int k = 0; k < 10; ++k) mix += Fmt(" %d:%lld", k, static_cast<long long>(kinds[k].load()));
  sc.Note("operations by kind (0 a+=b, 1 b+=a, 2 x|=y, 3 y|=x, 4 self, 5 slice, 6 list elems, 7 dict elems, "
          "8 snapshots, 9 clear):" + mix);
  sc.Finish();
  for (ffk_list* l : lists) {
    ffk_array* a = ffk_list_to_array(l);
    ASSERT_NE(a, nullptr);
    for (int64_t i = 0; i < ffk_array_size(a); ++i) {
      const ffk_any& v = ffk_array_items_borrow(a)[i];
      EXPECT_TRUE(v.type_index == FFK_TYPE_INT && v.v_int >= 0 && v.v_int < 200) << Show(v);
    }
    ffk_object_release(Obj(a));
    EXPECT_EQ(ffk_object_use_count(Obj(l)), 1u);
    ffk_object_release(Obj(l));
  }
  for (ffk_dict* d : dicts) {
    ffk_map* m = ffk_dict_to_map(d);
    ASSERT_NE(m, nullptr);
    int64_t pos = 0;
    const ffk_any *k, *v;
    while (ffk_map_next(m, &pos, &k, &v)) EXPECT_TRUE(entry_ok(*k, *v)) << Show(*k) << ": " << Show(*v);
    ffk_object_release(Obj(m));
    EXPECT_EQ(ffk_object_use_count(Obj(d)), 1u);
    ffk_object_release(Obj(d));
  }
  for (auto& v : val_objs) {
    EXPECT_EQ(ffk_object_use_count(v.v_obj), 1u);
    ffk_any_release(&v);
  }
}

// =======================================================================================
// 7. Weak observers of a copy-on-write Array never see it change in place (DESIGN.md:
//    uniqueness also requires no weak references).
// =======================================================================================

TEST_F(Stress, WeakObserversOfACowArrayNeverSeeAnInPlaceChange) {
  Scenario sc(7, "COW array with weak observers");
  constexpr int64_t kLen = 64;
  std::mutex mu;
  ffk_object* slot = nullptr;  // a weak reference to the owner's latest published Array
  const int64_t ops = Cfg().ops;
  std::atomic<bool> owner_done{false};
  std::atomic<int64_t> observed{0};
  sc.Run(Cfg().threads, [&](int t, Rng&, Ticker& tick) {
    if (t == 0) {  // the owner: publishes its Array weakly, then rewrites every element
      std::vector<ffk_any> zeros(kLen, ffk_any_int(0));
      ffk_array* own = ffk_array_new(zeros.data(), kLen);
      STRESS_CHECK(sc, own != nullptr, "ffk_array_new: %s", FetchError().c_str());
      for (int64_t version = 1; own != nullptr && version * kLen <= ops; ++version) {
        ffk_weak_retain(Obj(own));
        ffk_object* old;
        {
          std::lock_guard<std::mutex> lock(mu);
          old = slot;
          slot = Obj(own);
        }
        ffk_weak_release(old);
        std::this_thread::yield();  // let observers catch this version
        ffk_array* published = own;
        for (int64_t i = 0; i < kLen; ++i, tick()) {
          ffk_any v = ffk_any_int(version);
          STRESS_CHECK(sc, ffk_array_set(&own, i, &v) == 0, "ffk_array_set: %s", FetchError().c_str());
          if (i == 0)
            STRESS_CHECK(sc, own != published, "ffk_array_set changed an Array in place while a weak reference "
                                               "to it existed");
        }
      }
      ffk_object* old;
      {
        std::lock_guard<std::mutex> lock(mu);
        old = slot;
        slot = nullptr;
      }
      ffk_weak_release(old);
      ffk_object_release(Obj(own));
      owner_done = true;
      return;
    }
    while (!owner_done.load() && tick.count() < ops) {  // observers, at most `ops` looks each
      ffk_object* o = nullptr;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (slot != nullptr) o = ffk_weak_lock(slot);
      }
      tick();
      if (o == nullptr) {
        std::this_thread::yield();
        continue;
      }
      ffk_array* a = reinterpret_cast<ffk_array*>(o);
      for (int pass = 0; pass < 2; ++pass) {
        const ffk_any* items = ffk_array_items_borrow(a);
        const int64_t first = items[0].v_int;
        bool same = ffk_array_size(a) == kLen;
        for (int64_t i = 1; same && i < kLen; ++i) same = IsInt(items[i], first);
        STRESS_CHECK(sc, same, "an Array reached through a weak reference changed while observed (element 0 is "
                               "%lld)", static_cast<long long>(first));
      }
      observed.fetch_add(1, std::memory_order_relaxed);
      ffk_object_release(o);
    }
  });
  sc.Note(Fmt("%lld observations through weak references", static_cast<long long>(observed.load())));
  sc.Finish();
}

}  // namespace
