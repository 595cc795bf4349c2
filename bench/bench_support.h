// bench_support.h - helpers the benchmark binaries share.
#ifndef FFIKIT_BENCH_BENCH_SUPPORT_H
#define FFIKIT_BENCH_BENCH_SUPPORT_H

#include <benchmark/benchmark.h>

#include <string>
#include <thread>

#include <ffikit/error.h>

namespace ffk_bench {

// Skips the benchmark with the pending ffikit error (kind: message) as the reason.
inline void SkipWithFfkError(benchmark::State &state, const char *what) {
  std::string msg = what;
  if (ffk_error *err = ffk_error_peek_borrow()) {
    msg += ": ";
    msg += ffk_error_kind(err);
    msg += ": ";
    msg += ffk_error_message(err);
  }
  ffk_error_clear();
  state.SkipWithError(msg.c_str());
}

// The start of every benchmark main. libstdc++ skips the atomic instructions of
// shared_ptr's count while glibc reports the process single-threaded
// (__libc_single_threaded), and Google Benchmark runs one-thread benchmarks on the main
// thread. ffikit's count is always atomic (objects may be shared across threads at any
// time), so one thread is started and joined first: from then on the process counts as
// threaded, as any real host of ffikit is, and the peers' atomics are atomic too. Then
// Google Benchmark takes its flags. False when a flag was not understood (exit 1).
inline bool Start(int *argc, char **argv) {
  std::thread([] {}).join();
  benchmark::Initialize(argc, argv);
  return !benchmark::ReportUnrecognizedArguments(*argc, argv);
}

// Runs the registered benchmarks and shuts Google Benchmark down.
inline void Run() {
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}

}  // namespace ffk_bench

#endif  // FFIKIT_BENCH_BENCH_SUPPORT_H
