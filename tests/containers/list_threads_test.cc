// ffikit/list.h under threads: appends from several threads, iteration during them,
// two Lists copied into each other (lock order), and readers that never see half of a
// slice operation or an extend.
#include <ffikit/ffikit.h>
#include <ffikit/list.h>
#include <ffikit/unstable/list.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/containers/list_test_support.h"
#include "tests/support/ffk_test.h"

namespace {

using namespace list_test;  // NOLINT: the shared List helpers

class List : public ffk::test::Test {};

// Threads sharing Lists: appends from several threads all land, each thread's in its
// order; iteration during them either works or reports the change; two threads copying
// two Lists into each other (lock order) finish.
TEST_F(List, ThreadsShareAListSafely) {
  constexpr int kThreads = 4, kPer = 3000;
  ffk_list* l = ffk_list_new();
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([l, t] {
      for (int i = 0; i < kPer; ++i) {
        ffk_any v = ffk_any_int(t * kPer + i);
        if (ffk_list_append(l, &v) != 0) {
          ADD_FAILURE() << FetchError();
          return;
        }
      }
    });
  }
  std::thread reader([l, &done] {
    while (!done.load()) {
      ffk_list_iter it;
      ffk_list_iter_init(&it, l);
      ffk_any v;
      int rc;
      while ((rc = ffk_list_iter_next(&it, &v)) == 1) ffk_any_release(&v);
      if (rc == -1) {
        std::string e = FetchError();
        if (e != "RuntimeError: List changed during iteration") ADD_FAILURE() << e;
      }
      ffk_array* snap = ffk_list_to_array(l);
      if (snap == nullptr) {
        ADD_FAILURE() << FetchError();
        return;
      }
      ffk_object_release(Obj(snap));
    }
  });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  std::vector<int64_t> all = Values(l);
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kPer));
  std::vector<int64_t> last(kThreads, -1);
  for (int64_t x : all) {
    int t = static_cast<int>(x / kPer);
    ASSERT_GT(x, last[t]) << "thread " << t << "'s appends out of order";
    last[t] = x;
  }
  ffk_object_release(Obj(l));

  ffk_list* a = Ints({1, 2, 3});
  ffk_list* b = Ints({4, 5});
  auto copier = [](ffk_list* dst, ffk_list* src) {
    for (int i = 0; i < 2000; ++i) {
      if (ffk_list_set_slice_from(dst, 0, INT64_MAX, Obj(src)) != 0 || ffk_list_extend_from(dst, Obj(src)) != 0 ||
          ffk_list_set_slice(dst, 4, INT64_MAX, nullptr, 0) != 0) {
        ADD_FAILURE() << FetchError();
        return;
      }
    }
  };
  std::thread t1(copier, a, b), t2(copier, b, a);
  t1.join();
  t2.join();
  EXPECT_LE(ffk_list_size(a), 4);
  EXPECT_LE(ffk_list_size(b), 4);
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
}


// One writer cycles a List through five states with one slice operation each (del of an
// extended slice, extend, assignment to an extended slice, reversing assignment from the
// List itself, and a whole replacement); readers take snapshots (whole, reversed, every
// other element) all the while. Every snapshot is one of the five states: no reader
// ever sees part of a slice deleted, assigned or appended.
TEST_F(List, ReadersNeverSeeHalfASliceOperation) {
  constexpr int64_t kN = 100;  // more than the 64 removed elements held on the stack
  constexpr int kCycles = 1500;
  std::vector<std::vector<int64_t>> states;
  std::vector<int64_t> s0;
  for (int64_t i = 0; i < kN; ++i) s0.insert(s0.end(), {1, 2});  // [1, 2, 1, 2, ...]
  std::vector<int64_t> s1(kN, 2);                                 // del l[::2]
  std::vector<int64_t> s2 = s1;                                   // l.extend([3] * kN)
  s2.insert(s2.end(), kN, 3);
  std::vector<int64_t> s3 = s2;                                   // l[1::2] = [4] * kN
  for (int64_t i = 1; i < 2 * kN; i += 2) s3[static_cast<size_t>(i)] = 4;
  std::vector<int64_t> s4(s3.rbegin(), s3.rend());                // l[::-1] = l
  states = {s0, s1, s2, s3, s4};
  std::vector<ffk_any> s0_items = IntAnys(s0), threes(kN, ffk_any_int(3)), fours(kN, ffk_any_int(4));

  ffk_list* l = Ints(s0);
  std::atomic<bool> done{false};
  std::atomic<int64_t> seen_states[5] = {};
  auto which_state = [&](const std::vector<int64_t>& got) -> int {
    for (size_t i = 0; i < states.size(); ++i)
      if (got == states[i]) return static_cast<int>(i);
    return -1;
  };
  auto reader = [&] {
    int failures = 0;
    while (!done.load() && failures < 3) {
      ffk_array* whole = ffk_list_to_array(l);
      ffk_array* reversed = ffk_list_slice(l, INT64_MAX, INT64_MIN, -1);
      ffk_array* evens = ffk_list_slice(l, 0, INT64_MAX, 2);
      if (whole == nullptr || reversed == nullptr || evens == nullptr) {
        ADD_FAILURE() << FetchError();
        return;
      }
      std::vector<int64_t> w = Values(whole), r = Values(reversed), e = Values(evens);
      std::reverse(r.begin(), r.end());
      int sw = which_state(w), sr = which_state(r);
      bool evens_ok = false;
      for (const auto& st : states) {
        std::vector<int64_t> every_other;
        for (size_t i = 0; i < st.size(); i += 2) every_other.push_back(st[i]);
        evens_ok = evens_ok || e == every_other;
      }
      if (sw < 0 || sr < 0 || !evens_ok) {
        ADD_FAILURE() << "a reader saw a state between two: whole " << sw << ", reversed " << sr << ", evens "
                      << evens_ok << " (sizes " << w.size() << ", " << r.size() << ", " << e.size() << ")";
        ++failures;
      } else {
        seen_states[sw].fetch_add(1);
      }
      for (ffk_array* a : {whole, reversed, evens}) ffk_object_release(Obj(a));
    }
  };
  std::thread r1(reader), r2(reader);
  // On a loaded machine the readers may not be scheduled before kCycles are over: keep
  // cycling (whole cycles, so the List ends in state 0) until they have read a few times.
  auto reads = [&] {
    int64_t n = 0;
    for (auto& s : seen_states) n += s.load();
    return n;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int c = 0; c < kCycles || (reads() < 10 && std::chrono::steady_clock::now() < give_up); ++c) {
    int rc = ffk_list_erase_slice(l, 0, INT64_MAX, 2);
    if (rc == 0) rc = ffk_list_extend(l, threes.data(), kN);
    if (rc == 0) rc = ffk_list_set_slice_step(l, 1, INT64_MAX, 2, fours.data(), kN);
    if (rc == 0) rc = ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MIN, -1, Obj(l));
    if (rc == 0) rc = ffk_list_set_slice(l, 0, INT64_MAX, s0_items.data(), 2 * kN);
    if (rc != 0) {
      ADD_FAILURE() << "cycle " << c << ": " << FetchError();
      break;
    }
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(Values(l), s0);
  int64_t total = 0;
  for (auto& n : seen_states) total += n.load();
  EXPECT_GT(total, 0) << "the readers read";
  ffk_object_release(Obj(l));
}

// ffk_list_find (what Python's `in` and index call) while a writer appends past the
// capacity (the buffer moves), pops String elements (released as they leave) and clears
// (the buffer is freed): a reader scanning ints and strs under the lock, or walking a
// snapshot for a container, never reads freed storage (ASan, TSan) and only reports
// positions that exist.
TEST_F(List, FindRacesAppendsPopsAndClears) {
  ffk_list* l = ffk_list_new();
  ASSERT_NE(l, nullptr);
  ffk_array* pair = IntArray({5, 6});
  std::atomic<bool> done{false};
  std::atomic<int64_t> found{0};
  auto reader = [&](int kind) {
    ffk_any needle = kind == 0   ? ffk_any_int(150)
                     : kind == 1 ? ffk_any_raw_str("a string long enough to be an object")
                                 : ffk_any_object(Obj(pair));
    OwnedAny hold(needle);  // releases the Array reference ffk_any_object took
    while (!done.load()) {
      int64_t at = -1;
      int rc = ffk_list_find(l, &needle, 0, INT64_MAX, &at);
      if (rc < 0) {
        ADD_FAILURE() << FetchError();
        return;
      }
      if (rc == 1) {
        if (at < 0 || at > 300) ADD_FAILURE() << "found at " << at;
        found.fetch_add(1);
      }
    }
  };
  std::thread r1(reader, 0), r2(reader, 1), r3(reader, 2);
  ffk_any text;
  ASSERT_EQ(ffk_any_cstr("a string long enough to be an object", &text), 0);
  ffk_any pair_v = ffk_any_object(Obj(pair));
  for (int cycle = 0; cycle < 300; ++cycle) {
    for (int64_t i = 0; i < 200; ++i) {
      ffk_any v = ffk_any_int(i);
      ASSERT_EQ(ffk_list_append(l, i % 50 == 0 ? &text : &v), 0);
    }
    ASSERT_EQ(ffk_list_append(l, &pair_v), 0);
    for (int k = 0; k < 60; ++k) ASSERT_EQ(ffk_list_erase_at(l, 0), 0);
    ASSERT_EQ(ffk_list_clear(l), 0);
  }
  done = true;
  r1.join();
  r2.join();
  r3.join();
  ffk_any_release(&text);
  ffk_any_release(&pair_v);
  EXPECT_EQ(ffk_list_size(l), 0);
  ffk_object_release(Obj(pair));
  ffk_object_release(Obj(l));
}

// Stamped reads against a writer that sets, appends and pops: equal stamps always come
// with equal elements (what the Python binding's List cache relies on), and the stamp
// read without the lock never goes backwards.
TEST_F(List, EqualStampsMeanEqualElementsUnderWriters) {
  ffk_list* l = Ints({0, 1, 2, 3});
  std::atomic<bool> done{false};
  std::atomic<int64_t> checks{0};
  auto reader = [&] {
    uint64_t last = 0;
    while (!done.load()) {
      uint64_t before = ffk_list_stamp(l);
      if (before < last) ADD_FAILURE() << "the stamp went backwards";
      last = before;
      ffk_any a, b;
      uint64_t sa, sb;
      if (ffk_list_get_stamped(l, 1, &a, &sa) != 0 || ffk_list_get_stamped(l, 1, &b, &sb) != 0) {
        ADD_FAILURE() << FetchError();
        return;
      }
      if (sa < before) ADD_FAILURE() << "a stamped read older than the stamp read before it";
      if (sa == sb) {
        if (a.v_int != b.v_int) ADD_FAILURE() << "equal stamps, different elements";
        checks.fetch_add(1);
      }
    }
  };
  std::thread r1(reader), r2(reader);
  for (int64_t k = 0; k < 20000 || (checks.load() < 100 && k < 20000000); ++k) {  // until the readers read
    ffk_any v = ffk_any_int(k);
    ASSERT_EQ(ffk_list_set(l, 1, &v), 0);
    if (k % 7 == 0) {
      ASSERT_EQ(ffk_list_append(l, &v), 0);
      ffk_any out;
      ASSERT_EQ(ffk_list_pop(l, -1, &out), 0);
    }
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_GT(checks.load(), 0);
  ffk_object_release(Obj(l));
}

}  // namespace
