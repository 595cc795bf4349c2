// The harness of the multi-threaded container stress tests (docs/design.md "Thread safety"):
// the configuration, small helpers, the Scenario machinery (threads, watchdog, failures,
// timing) and the Stress fixture. The scenarios, numbered as in their output:
//   cow_stress_test.cc     1. copy-on-write sharing of one Array and one Map by every thread,
//                          7. weak observers of a copy-on-write Array never see an in-place change;
//   shared_stress_test.cc  2. List appends from many threads,
//                          3. Dict sets/erases of disjoint key ranges from many threads,
//                          4. List/Dict iteration while other threads mutate them;
//   object_stress_test.cc  5. retain/release and weak-reference storms on shared containers,
//                          6. two-container operations in both orders (no deadlock).
//
// The same sources build two targets (tests/stress/BUILD):
//   containers_stress_test        small configuration (4 threads x 20,000 ops), in CI
//   containers_stress_large_test  FFK_STRESS_LARGE=1 (8 threads x 1,000,000 ops), manual
// The environment overrides the configuration (bazel test --test_env=NAME=VALUE):
//   FFK_STRESS_THREADS, FFK_STRESS_OPS (operations per thread per scenario), FFK_STRESS_SEED.
//
// Worker threads never call gtest assertions in their loops: they record failures in the
// scenario (STRESS_CHECK: count + the first messages), and the main thread fails the test
// with them (Scenario::Finish). Every scenario prints its seed, elapsed time, operation
// count and ops/s (information only: timing is never asserted). A watchdog aborts a
// scenario whose threads make no progress for a long time and says so (a deadlock or
// livelock), instead of a bare Bazel timeout.
#ifndef FFIKIT_TESTS_STRESS_STRESS_HARNESS_H
#define FFIKIT_TESTS_STRESS_STRESS_HARNESS_H

#include <ffikit/dict.h>
#include <ffikit/ffikit.h>
#include <ffikit/list.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

// 1 selects the large configuration (containers_stress_large_test defines it).
#ifndef FFK_STRESS_LARGE
#define FFK_STRESS_LARGE 0
#endif

namespace ffk::stress {

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

// The positive integer in environment variable `name` (and *set = true), else `dflt` (an
// invalid value is reported on stderr and ignored).
int64_t EnvInt(const char* name, int64_t dflt, bool* set);

// The configuration of this run: FFK_STRESS_LARGE's defaults with the environment's
// overrides and a seed. Computed and printed on the first call.
const Config& Cfg();

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

// printf into a std::string (at most 767 bytes).
std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The repr of a value for failure messages; never fails the test itself.
std::string Show(const ffk_any& v);

inline bool IsInt(const ffk_any& v, int64_t x) { return v.type_index == FFK_TYPE_INT && v.v_int == x; }

// True when `v` is a str value (inline or a String object) with exactly the bytes of `s`.
bool IsStr(const ffk_any& v, const char* s, size_t n);
inline bool IsStr(const ffk_any& v, const std::string& s) { return IsStr(v, s.data(), s.size()); }

// True when `v` is a str value that starts with `prefix`.
bool StrStartsWith(const ffk_any& v, const char* prefix);

// An owned str value (a String object: every string used here is longer than 7 bytes).
ffk_any OwnedStr(const std::string& s);

// A container's object header.
inline ffk_object* Obj(ffk_array* a) { return &a->header; }
inline ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }
inline ffk_object* Obj(ffk_list* l) { return reinterpret_cast<ffk_object*>(l); }
inline ffk_object* Obj(ffk_dict* d) { return reinterpret_cast<ffk_object*>(d); }

// Consumes this thread's pending error. True when it is of `kind` and its message contains
// `needle` (nullptr: any message); otherwise *text gets "Kind: message" ("" for none).
bool TakeError(const char* kind, const char* needle, std::string* text);

// ---- Scenario: threads, watchdog, failures, timing -----------------------------------

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

// One scenario of a test: its seed (the run's seed and `number`), its threads, the
// failures they record and the operations they count.
class Scenario {
 public:
  // Prints the scenario's number, name, configuration and seed unless `header` is false.
  Scenario(int number, const char* name, bool header = true);

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

  // Records a failure (any thread): counts it and keeps the first 20 messages.
  void Fail(int line, const char* cond, const std::string& detail);

  // Adds a line to print with the results (any thread).
  void Note(const std::string& s);

  int64_t ops() const { return ops_.load(); }

  // Prints the timing and counters, and fails the test with the recorded failures.
  void Finish();

 private:
  // Waits until `n` threads have counted themselves in `done`; aborts the process when no
  // operation is counted for Cfg().stall_seconds.
  void Watch(const std::atomic<int>& done, int n);

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

// The fixture of every scenario (test suite "Stress"): ffk::test::Test's checks that no
// error is left pending and no object alive.
class Stress : public ffk::test::Test {};

}  // namespace ffk::stress

#endif  // FFIKIT_TESTS_STRESS_STRESS_HARNESS_H
