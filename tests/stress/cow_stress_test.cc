// Copy-on-write stress scenarios (the harness, the configuration and the rules every
// scenario follows: stress_harness.h):
//   1. copy-on-write sharing of one Array and one Map by every thread: variants derived
//      from them copy, and the shared originals never change;
//   7. weak observers of a copy-on-write Array never see an in-place change.
#include <ffikit/ffikit.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

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
// 7. Weak observers of a copy-on-write Array never see it change in place (docs/design.md:
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
}  // namespace ffk::stress
