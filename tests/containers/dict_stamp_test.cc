// ffikit/dict.h's stamps: ffk_dict_stamp moves with every change of the entries and with
// nothing else, ffk_dict_get_str_stamped reports the stamp its lookup saw (hit or miss),
// and a reader that trusts what it read only while the stamp holds never sees a value
// older than the last write it knows of, with a writer in another thread.
#include <ffikit/ffikit.h>
#include <ffikit/dict.h>
#include <ffikit/unstable/dict.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "tests/support/ffk_test.h"

namespace {

class DictStamp : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

ffk_object* Obj(ffk_dict* d) { return reinterpret_cast<ffk_object*>(d); }
ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }

int Set(ffk_dict* d, ffk_any k, ffk_any v) { return ffk_dict_set(d, &k, &v); }

TEST_F(DictStamp, MovesWithEveryChangeOfTheEntriesAndOnlyThen) {
  ffk_dict* d = ffk_dict_new();
  ffk_any a = ffk_any_raw_str("a"), b = ffk_any_raw_str("b"), one = ffk_any_int(1), two = ffk_any_int(2);
  uint64_t seen = ffk_dict_stamp(d);
  auto moved = [&](const char* what) {
    uint64_t now = ffk_dict_stamp(d);
    EXPECT_NE(now, seen) << what << " must move the stamp";
    seen = now;
  };
  auto still = [&](const char* what) { EXPECT_EQ(ffk_dict_stamp(d), seen) << what << " must not move the stamp"; };
  ASSERT_EQ(Set(d, a, one), 0);
  moved("adding a key");
  ASSERT_EQ(Set(d, a, two), 0);
  moved("replacing a value (the version, the shape, stays)");
  OwnedAny out;
  uint64_t at = 0;
  ASSERT_EQ(ffk_dict_get_str_stamped(d, "a", 1, &out.v, &at), 1);
  EXPECT_EQ(out.v.v_int, 2);
  EXPECT_EQ(at, seen) << "a hit reports the stamp it read at";
  OwnedAny miss;
  at = 0;
  ASSERT_EQ(ffk_dict_get_str_stamped(d, "b", 1, &miss.v, &at), 0);
  EXPECT_EQ(miss.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(at, seen) << "a miss reports the stamp too: b stays missing while it holds";
  EXPECT_TRUE(ffk_dict_contains(d, &a));
  ffk_array* keys = ffk_dict_keys(d);
  ffk_object_release(reinterpret_cast<ffk_object*>(keys));
  ffk_map* snap = ffk_dict_to_map(d);
  still("reads");
  ffk_any dflt = ffk_any_int(3), got;
  ASSERT_EQ(ffk_dict_setdefault(d, &a, &dflt, &got), 1);
  ffk_any_release(&got);
  still("setdefault of a present key");
  ASSERT_EQ(ffk_dict_setdefault(d, &b, &dflt, &got), 0);
  ffk_any_release(&got);
  moved("setdefault that adds");
  ASSERT_EQ(ffk_dict_erase(d, &b), 1);
  moved("erase");
  EXPECT_EQ(ffk_dict_erase(d, &b), 0);
  still("erasing a missing key");
  ASSERT_EQ(ffk_dict_pop(d, &a, &got), 0);
  ffk_any_release(&got);
  moved("pop");
  ASSERT_EQ(ffk_dict_update(d, Obj(snap)), 0);
  moved("update that adds");
  ASSERT_EQ(ffk_dict_update(d, Obj(snap)), 0);
  moved("update that only replaces values (with equal ones: still a store)");
  ffk_map* empty = ffk_map_new();
  ASSERT_EQ(ffk_dict_update(d, Obj(empty)), 0);
  still("update from an empty Map");
  ASSERT_EQ(ffk_dict_clear(d), 0);
  moved("clear");
  ASSERT_EQ(ffk_dict_clear(d), 0);
  still("clearing an empty Dict");
  const uint64_t* word = ffk_dict_stamp_address(d);
  ASSERT_NE(word, nullptr);
  EXPECT_EQ(__atomic_load_n(word, __ATOMIC_ACQUIRE), seen) << "the address is where ffk_dict_stamp reads";
  EXPECT_EQ(ffk_dict_stamp_address(nullptr), nullptr);
  at = 7;
  EXPECT_EQ(ffk_dict_get_str_stamped(nullptr, "a", 1, &out.v, &at), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_dict_get_str_stamped: the dict handle is NULL");
  EXPECT_EQ(at, 0u);
  EXPECT_EQ(ffk_dict_get_str_stamped(d, nullptr, 3, &out.v, &at), -1);
  EXPECT_TRUE(PendingError("ValueError", {"data is NULL but size is 3"}));
  (void)two;
  ffk_object_release(Obj(empty));
  ffk_object_release(Obj(snap));
  ffk_object_release(Obj(d));
}

// The Python binding's key cache in miniature: keep (value, stamp) from a stamped read and
// hand the value out again while ffk_dict_stamp still returns the stamp. A writer stores
// 1, 2, 3, ... under one key and then publishes the number; the reader, having seen the
// number published, must never be handed an older value by its cache.
TEST_F(DictStamp, ACacheCheckedAgainstTheStampIsNeverStale) {
  ffk_dict* d = ffk_dict_new();
  const std::string key = "the shared key";
  ffk_any k;
  ASSERT_EQ(ffk_any_str(key.data(), key.size(), &k), 0);
  ASSERT_EQ(Set(d, k, ffk_any_int(0)), 0);
  std::atomic<int64_t> published{0};
  constexpr int64_t kWrites = 20000;
  std::thread writer([&] {
    for (int64_t i = 1; i <= kWrites; ++i) {
      ffk_any v = ffk_any_int(i);
      if (ffk_dict_set(d, &k, &v) != 0) ADD_FAILURE() << FetchError();
      published.store(i, std::memory_order_release);
    }
  });
  int64_t cached = -1, stale = 0, hits = 0;
  uint64_t cached_stamp = 0;
  for (;;) {
    int64_t floor = published.load(std::memory_order_acquire);
    int64_t got;
    if (cached >= 0 && ffk_dict_stamp(d) == cached_stamp) {
      got = cached;
      ++hits;
    } else {
      ffk_any v;
      uint64_t at;
      ASSERT_EQ(ffk_dict_get_str_stamped(d, key.data(), key.size(), &v, &at), 1);
      got = cached = v.v_int;
      cached_stamp = at;
    }
    if (got < floor) ++stale;
    if (floor == kWrites) break;
  }
  writer.join();
  EXPECT_EQ(stale, 0) << "values older than a write already published";
  EXPECT_EQ(cached, kWrites);
  (void)hits;
  ffk_any_release(&k);
  ffk_object_release(Obj(d));
}

}  // namespace
