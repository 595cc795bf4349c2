// Stress scenarios of object lifetimes and locking across containers (the harness, the
// configuration and the rules every scenario follows: stress_harness.h):
//   5. retain/release and weak-reference storms on shared containers: the counts return
//      to their baseline;
//   6. two-container operations in both orders at once (address-ordered locking, no
//      deadlock).
#include <ffikit/dict.h>
#include <ffikit/ffikit.h>
#include <ffikit/list.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

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

}  // namespace
}  // namespace ffk::stress
