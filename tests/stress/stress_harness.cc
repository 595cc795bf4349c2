// The stress-test harness (see stress_harness.h): configuration, helpers, Scenario.
#include "tests/stress/stress_harness.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace ffk::stress {

// ---- Configuration -------------------------------------------------------------------

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

std::string Fmt(const char* fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

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

ffk_any OwnedStr(const std::string& s) {
  ffk_any v = ffk_any_none();
  if (ffk_any_str(s.data(), s.size(), &v) != 0) ADD_FAILURE() << "ffk_any_str: " << FetchError();
  EXPECT_EQ(v.type_index, FFK_TYPE_STRING) << s;
  return v;
}

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

// ---- Scenario ------------------------------------------------------------------------

Scenario::Scenario(int number, const char* name, bool header) : name_(name) {
  const Config& c = Cfg();
  seed_ = c.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(number);
  if (header)
    std::printf("[stress] scenario %d (%s): %d threads x %lld ops, seed %llu\n", number, name, c.threads,
                static_cast<long long>(c.ops), static_cast<unsigned long long>(seed_));
  std::fflush(stdout);
}

void Scenario::Fail(int line, const char* cond, const std::string& detail) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  if (messages_.size() < 20) messages_.push_back(Fmt("line %d: %s: %s", line, cond, detail.c_str()));
}

void Scenario::Note(const std::string& s) {
  std::lock_guard<std::mutex> lock(mu_);
  notes_.push_back(s);
}

void Scenario::Finish() {
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

void Scenario::Watch(const std::atomic<int>& done, int n) {
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

}  // namespace ffk::stress
