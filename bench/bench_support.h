// bench_support.h - helpers the benchmark binaries share.
#ifndef FFIKIT_BENCH_BENCH_SUPPORT_H
#define FFIKIT_BENCH_BENCH_SUPPORT_H

#include <benchmark/benchmark.h>

#include <string>

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

}  // namespace ffk_bench

#endif  // FFIKIT_BENCH_BENCH_SUPPORT_H
