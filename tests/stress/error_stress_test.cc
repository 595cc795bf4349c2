// Errors shared across threads (ffikit/error.h "Threads"): while some threads append
// frames to one Error, others read ffk_error_backtrace and ffk_error_frames, retain and
// release it. Every text a reader got must stay readable and unchanged until the Error
// dies, and every read must show a prefix of each appender's frames, in order. Before the
// per-Error lock, an append freed the cached text a reader was still scanning (TSan:
// data race / heap-use-after-free; ASan: heap-use-after-free).
//
// Sizes (FFK_STRESS_ROUNDS, FFK_STRESS_APPENDS override them through --test_env) keep it
// to a few seconds under TSan on 2 cores.
#include <ffikit/ffikit.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class ErrorStress : public ffk::test::Test {};

ffk_object* Obj(ffk_error* err) { return reinterpret_cast<ffk_object*>(err); }

int64_t EnvOr(const char* name, int64_t dflt) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return dflt;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  return (*end == '\0' && v > 0) ? v : dflt;
}

constexpr int kAppenders = 2;
constexpr int kReaders = 2;

// The frame appender `t` adds as its `i`-th.
std::string FrameText(int t, int64_t i) { return "  appended by thread " + std::to_string(t) + " #" + std::to_string(i); }

// Checks that `text` holds, for each appender, frames #0, #1, ... in order and nothing else
// appended; returns "" or what is wrong.
std::string CheckFrames(const std::string& text, int64_t max_per_thread) {
  std::vector<int64_t> next(kAppenders, 0);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return "a line without its newline: " + text.substr(pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    int t = -1;
    long long i = -1;
    if (std::sscanf(line.c_str(), "  appended by thread %d #%lld", &t, &i) != 2) continue;  // location, native
    if (t < 0 || t >= kAppenders) return "a frame of an unknown thread: " + line;
    if (i != next[t] || i >= max_per_thread) return "frame out of order: " + line;
    ++next[t];
  }
  return "";
}

TEST_F(ErrorStress, BacktraceAndFramesStayReadableWhileOtherThreadsAppend) {
  const int64_t rounds = EnvOr("FFK_STRESS_ROUNDS", 60);
  const int64_t appends = EnvOr("FFK_STRESS_APPENDS", 150);
  std::atomic<int64_t> failures{0};
  std::string first_failure;
  std::atomic<bool> first_taken{false};
  auto fail = [&](const std::string& what) {
    if (failures.fetch_add(1) == 0 && !first_taken.exchange(true)) first_failure = what;
  };

  for (int64_t round = 0; round < rounds; ++round) {
    ASSERT_EQ(ffk_error_set(FFK_ERR_VALUE, "round %lld", static_cast<long long>(round)), -1);
    ffk_error* err = ffk_error_fetch();
    ASSERT_NE(err, nullptr);
    std::atomic<int> appenders_left{kAppenders};
    std::vector<std::thread> threads;
    for (int t = 0; t < kAppenders; ++t) {
      ffk_object_retain(Obj(err));  // each thread owns a reference and drops it at the end
      threads.emplace_back([&, t] {
        for (int64_t i = 0; i < appends; ++i) {
          if (ffk_error_append_frame(err, FrameText(t, i).c_str()) != 0) fail("append: " + ffk::test::FetchError());
        }
        appenders_left.fetch_sub(1);
        ffk_object_release(Obj(err));
      });
    }
    for (int r = 0; r < kReaders; ++r) {
      ffk_object_retain(Obj(err));
      threads.emplace_back([&, r] {
        // Texts returned earlier, with the copy taken when they were returned: they must
        // read the same while the Error lives, whatever was appended since.
        std::vector<std::pair<const char*, std::string>> kept;
        size_t last_len = 0;
        bool done = false;
        while (!done) {
          done = appenders_left.load() == 0;  // one more pass after the last append
          if (r == 0) {
            const char* bt = ffk_error_backtrace(err);
            std::string copy(bt);
            if (copy.size() < last_len) fail("the backtrace shrank");
            last_len = copy.size();
            std::string bad = CheckFrames(copy, appends);
            if (!bad.empty()) fail("backtrace: " + bad);
            if (kept.size() < 64) kept.emplace_back(bt, copy);
          } else {
            size_t len = 0;
            if (ffk_error_frames(err, nullptr, 0, &len) != 0) fail("frames: " + ffk::test::FetchError());
            std::string buf(len + 64, '\0');  // frames may grow between the two calls
            size_t full = 0;
            if (ffk_error_frames(err, &buf[0], buf.size(), &full) != 0) fail("frames: " + ffk::test::FetchError());
            buf.resize(std::strlen(buf.c_str()));
            if (full < len) fail("the frames shrank");
            if (full >= buf.size() + 1) buf.resize(buf.rfind('\n') + 1);  // truncated: whole lines only
            std::string bad = CheckFrames(buf, appends);
            if (!bad.empty()) fail("frames: " + bad);
          }
          ffk_object_retain(Obj(err));  // retain/release storms next to the reads
          ffk_object_release(Obj(err));
        }
        for (const auto& [ptr, copy] : kept) {
          if (copy != ptr) fail("a backtrace text changed after it was returned");
        }
        ffk_object_release(Obj(err));
      });
    }
    for (std::thread& th : threads) th.join();
    // Every frame arrived, once.
    std::string all = ffk_error_backtrace(err);
    EXPECT_EQ(CheckFrames(all, appends), "");
    for (int t = 0; t < kAppenders; ++t) {
      EXPECT_NE(all.find(FrameText(t, appends - 1) + "\n"), std::string::npos) << all;
    }
    EXPECT_EQ(ffk_object_use_count(Obj(err)), 1u);
    ffk_object_release(Obj(err));
  }
  EXPECT_EQ(failures.load(), 0) << "first failure: " << first_failure;
}

}  // namespace
