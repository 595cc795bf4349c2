// Stress scenarios of List and Dict objects shared by many threads (the harness, the
// configuration and the rules every scenario follows: stress_harness.h):
//   2. List appends from many threads: every value is there exactly once;
//   3. Dict sets/erases of disjoint key ranges (int and String keys) from many threads;
//   4. List/Dict iteration while other threads mutate them (only stored values are seen, a
//      change is a RuntimeError, a pass that completes sees every element exactly once).
#include <ffikit/dict.h>
#include <ffikit/ffikit.h>
#include <ffikit/list.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

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

}  // namespace
}  // namespace ffk::stress
