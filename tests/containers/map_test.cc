// ffikit/map.h: key semantics, insertion order, copy-on-write identity, iteration,
// a random model check, and allocation failures.
#include <ffikit/ffikit.h>
#include <ffikit/unstable/map.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Map : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }

std::string R(ffk_map* m) {
  ffk_any v = ffk_any_object(Obj(m));
  std::string s = ffk::test::Repr(v);
  ffk_any_release(&v);
  return s;
}

int Set(ffk_map** m, ffk_any k, ffk_any v) { return ffk_map_set(m, &k, &v); }

TEST_F(Map, SetGetAndReprInInsertionOrder) {
  ffk_map* m = ffk_map_new();
  ASSERT_EQ(Set(&m, ffk_any_raw_str("a"), ffk_any_int(1)), 0);
  ASSERT_EQ(Set(&m, ffk_any_int(3), ffk_any_int(2)), 0);
  EXPECT_EQ(R(m), "{\"a\": 1, 3: 2}");
  EXPECT_EQ(ffk_map_size(m), 2);
  OwnedAny v;
  ffk_any key = ffk_any_raw_str("a");
  EXPECT_EQ(ffk_map_get(m, &key, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 1);
  ffk_any missing = ffk_any_int(4);
  EXPECT_EQ(ffk_map_get(m, &missing, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  ffk_object_release(Obj(m));
}

// The lookup convention of every container (ffk_dict_get too): 1 found, 0 missing, -1 error.
TEST_F(Map, GetReturnsOneZeroOrMinusOneLikeDictGet) {
  ffk_map* m = ffk_map_new();
  ffk_dict* d = ffk_dict_new();
  ffk_any key = ffk_any_int(1), val = ffk_any_raw_str("one"), missing = ffk_any_int(2);
  ASSERT_EQ(ffk_map_set(&m, &key, &val), 0);
  ASSERT_EQ(ffk_dict_set(d, &key, &val), 0);
  OwnedAny a, b;
  EXPECT_EQ(ffk_map_get(m, &key, &a.v), 1);
  EXPECT_EQ(ffk_dict_get(d, &key, &b.v), 1);
  EXPECT_TRUE(ffk_any_equal(&a.v, &b.v));
  EXPECT_EQ(ffk_map_get(m, &missing, &a.v), 0);
  EXPECT_EQ(ffk_dict_get(d, &missing, &b.v), 0);
  EXPECT_EQ(a.v.type_index, FFK_TYPE_NONE);
  a.v = ffk_any_int(7);
  EXPECT_EQ(ffk_map_get(nullptr, &key, &a.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(a.v.type_index, FFK_TYPE_NONE) << "*out is None after an error";
  EXPECT_EQ(ffk_dict_get(nullptr, &key, &b.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_map_get(m, nullptr, &a.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"key"}));
  ffk_object_release(Obj(m));
  ffk_object_release(reinterpret_cast<ffk_object*>(d));
}

// One enum selects keys, values or items for Map and Dict alike.
TEST_F(Map, CollectTakesTheMapPartEnum) {
  ffk_any keys[2] = {ffk_any_raw_str("a"), ffk_any_int(2)};
  ffk_any vals[2] = {ffk_any_int(1), ffk_any_float(2.5)};
  ffk_map* m = ffk_map_from_pairs(keys, vals, 2);
  ffk_dict* d = ffk_dict_from_pairs(keys, vals, 2);
  ASSERT_TRUE(m && d);
  struct {
    ffk_map_part part;
    const char* want;
  } cases[] = {
      {FFK_MAP_KEYS, "(\"a\", 2)"},
      {FFK_MAP_VALUES, "(1, 2.5)"},
      {FFK_MAP_ITEMS, "((\"a\", 1), (2, 2.5))"},
  };
  for (const auto& c : cases) {
    for (ffk_array* a : {ffk_map_collect(m, c.part), ffk_dict_collect(d, c.part)}) {
      ASSERT_NE(a, nullptr) << FetchError();
      ffk_any v = ffk_any_object_steal(&a->header);
      EXPECT_EQ(ffk::test::Repr(v), c.want) << "part " << c.part;
      ffk_any_release(&v);
    }
  }
  EXPECT_EQ(FFK_MAP_KEYS, 0);
  EXPECT_EQ(FFK_MAP_VALUES, 1);
  EXPECT_EQ(FFK_MAP_ITEMS, 2);
  EXPECT_EQ(ffk_map_collect(m, static_cast<ffk_map_part>(3)), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"3"}));
  EXPECT_EQ(ffk_dict_collect(d, static_cast<ffk_map_part>(-1)), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"-1"}));
  EXPECT_EQ(ffk_map_collect(nullptr, FFK_MAP_KEYS), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_map_keys(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_dict_collect(nullptr, FFK_MAP_ITEMS), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  ffk_object_release(Obj(m));
  ffk_object_release(reinterpret_cast<ffk_object*>(d));
}

TEST_F(Map, OneTrueAndOnePointZeroAreThreeKeys) {
  ffk_map* m = ffk_map_new();
  Set(&m, ffk_any_int(1), ffk_any_raw_str("int"));
  Set(&m, ffk_any_bool(true), ffk_any_raw_str("bool"));
  Set(&m, ffk_any_float(1.0), ffk_any_raw_str("float"));
  EXPECT_EQ(ffk_map_size(m), 3);
  EXPECT_EQ(R(m), "{1: \"int\", True: \"bool\", 1.0: \"float\"}");
  ffk_object_release(Obj(m));
}

TEST_F(Map, StringKeysMatchAcrossForms) {
  ffk_map* m = ffk_map_new();
  ffk_string* s = ffk_string_new("a key longer than seven", 23);
  ffk_any heap = ffk_any_object_steal(&s->header);
  ASSERT_EQ(Set(&m, heap, ffk_any_int(1)), 0);
  ffk_any raw = ffk_any_raw_str("a key longer than seven");
  EXPECT_TRUE(ffk_map_contains(m, &raw));
  ffk_any small_k;
  ffk_any_cstr("short", &small_k);
  Set(&m, small_k, ffk_any_int(2));
  ffk_string* s2 = ffk_string_new("short", 5);
  ffk_any heap_short = ffk_any_object_steal(&s2->header);
  EXPECT_TRUE(ffk_map_contains(m, &heap_short)) << "a String object finds an inline key";
  ffk_any bytes;
  ffk_any_bytes("short", 5, &bytes);
  EXPECT_FALSE(ffk_map_contains(m, &bytes)) << "bytes never equal str";
  ffk_any_release(&heap);
  ffk_any_release(&heap_short);
  ffk_object_release(Obj(m));
}

// The lookups by bytes agree with ffk_map_get on every form of str key, small and large
// tables (the linear scan and the index), and never match bytes keys.
TEST_F(Map, LookupsByBytesAgreeWithGetOnEveryStrForm) {
  for (int n : {3, 200}) {
    SCOPED_TRACE("entries " + std::to_string(n));
    ffk_map* m = ffk_map_new();
    for (int i = 0; i < n; ++i) {
      std::string k = (i % 2 ? "k" : "a longer key ") + std::to_string(i);  // SmallStr and String keys
      ffk_any key;
      ASSERT_EQ(ffk_any_str(k.data(), k.size(), &key), 0);
      ASSERT_EQ(Set(&m, key, ffk_any_int(i)), 0);
      ffk_any_release(&key);
    }
    ffk_any bytes_key;
    ASSERT_EQ(ffk_any_bytes("b1", 2, &bytes_key), 0);
    ASSERT_EQ(Set(&m, bytes_key, ffk_any_int(-1)), 0);
    for (int i = 0; i < n; ++i) {
      std::string k = (i % 2 ? "k" : "a longer key ") + std::to_string(i);
      OwnedAny v;
      ASSERT_EQ(ffk_map_get_str(m, k.data(), k.size(), &v.v), 1) << k;
      EXPECT_EQ(v.v.v_int, i);
      EXPECT_EQ(ffk_map_contains_str(m, k.data(), k.size()), 1);
      int64_t slot = ffk_map_find_str(m, k.data(), k.size());
      ffk_any key = ffk_any_raw_str(k.c_str());
      EXPECT_EQ(slot, ffk_map_find(m, &key)) << "one slot whichever way the key is given";
      const ffk_any *pk, *pv;
      ASSERT_TRUE(ffk_map_entry(m, slot, &pk, &pv));
      EXPECT_TRUE(ffk_any_equal(pk, &key));
      EXPECT_EQ(pv->v_int, i);
    }
    OwnedAny missing;
    EXPECT_EQ(ffk_map_get_str(m, "b1", 2, &missing.v), 0) << "a str never finds a bytes key";
    EXPECT_EQ(missing.v.type_index, FFK_TYPE_NONE);
    EXPECT_EQ(ffk_map_contains_str(m, "k1\0", 3), 0) << "an embedded NUL is part of the key";
    EXPECT_EQ(ffk_map_contains_str(m, "a longer key 0", 13), 0) << "a prefix is another key";
    EXPECT_EQ(ffk_map_find_str(m, "nope", 4), -1);
    EXPECT_EQ(ffk_map_contains_str(m, nullptr, 0), 0) << "the empty str, absent";
    ffk_object_release(Obj(m));
  }
}

TEST_F(Map, EmptyStrKeyAndEmbeddedNulsAreFoundByBytes) {
  ffk_map* m = ffk_map_new();
  ffk_any empty, nul;
  ASSERT_EQ(ffk_any_str("", 0, &empty), 0);
  ASSERT_EQ(ffk_any_str("a\0b-long-enough", 16, &nul), 0);
  ASSERT_EQ(Set(&m, empty, ffk_any_int(1)), 0);
  ASSERT_EQ(Set(&m, nul, ffk_any_int(2)), 0);
  ffk_any_release(&nul);
  OwnedAny v;
  EXPECT_EQ(ffk_map_get_str(m, nullptr, 0, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 1);
  OwnedAny w;
  EXPECT_EQ(ffk_map_get_str(m, "a\0b-long-enough", 16, &w.v), 1);
  EXPECT_EQ(w.v.v_int, 2);
  EXPECT_EQ(ffk_map_contains_str(m, "a", 1), 0) << "not the C string's prefix";
  ffk_object_release(Obj(m));
}

TEST_F(Map, SlotsFollowNextAndSkipErasedEntries) {
  ffk_map* m = ffk_map_new();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Set(&m, ffk_any_int(i), ffk_any_int(10 * i)), 0);
  ffk_any two = ffk_any_int(2);
  ASSERT_EQ(ffk_map_erase(&m, &two), 1);  // unique: erased in place, leaving a hole
  EXPECT_EQ(ffk_map_slot_count(m), 5);
  int64_t pos = 0;
  const ffk_any *k, *v;
  std::vector<int64_t> slots;
  while (ffk_map_next(m, &pos, &k, &v)) {
    const ffk_any *sk, *sv;
    ASSERT_TRUE(ffk_map_entry(m, pos - 1, &sk, &sv));
    EXPECT_EQ(sk, k) << "the slot of an entry is next's position less one";
    EXPECT_EQ(ffk_map_find(m, k), pos - 1);
    slots.push_back(pos - 1);
  }
  EXPECT_EQ(slots, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_FALSE(ffk_map_entry(m, 2, &k, &v)) << "an erased slot";
  EXPECT_FALSE(ffk_map_entry(m, 5, &k, &v));
  EXPECT_FALSE(ffk_map_entry(m, -1, &k, &v));
  EXPECT_EQ(ffk_map_find(m, &two), -1);
  EXPECT_EQ(ffk_map_find(nullptr, &two), -1);
  EXPECT_EQ(ffk_map_slot_count(nullptr), 0);
  ffk_object_release(Obj(m));
}

TEST_F(Map, LookupsByBytesRejectNullArguments) {
  OwnedAny v;
  EXPECT_EQ(ffk_map_get_str(nullptr, "a", 1, &v.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_map_get_str: the map handle is NULL");
  ffk_map* m = ffk_map_new();
  EXPECT_EQ(ffk_map_contains_str(m, nullptr, 3), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_map_contains_str: data is NULL but size is 3");
  EXPECT_EQ(ffk_map_get_str(m, nullptr, 3, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "ValueError: ffk_map_get_str: data is NULL but size is 3");
  EXPECT_EQ(ffk_map_find_str(m, nullptr, 3), -1);
  ffk_object_release(Obj(m));
}

TEST_F(Map, UpdateKeepsPositionEraseKeepsOrderReinsertGoesLast) {
  ffk_map* m = ffk_map_new();
  for (int i = 0; i < 5; ++i) Set(&m, ffk_any_int(i), ffk_any_int(i * 10));
  Set(&m, ffk_any_int(1), ffk_any_int(-1));
  EXPECT_EQ(R(m), "{0: 0, 1: -1, 2: 20, 3: 30, 4: 40}");
  ffk_any two = ffk_any_int(2);
  EXPECT_EQ(ffk_map_erase(&m, &two), 1);
  EXPECT_EQ(ffk_map_erase(&m, &two), 0);
  EXPECT_EQ(R(m), "{0: 0, 1: -1, 3: 30, 4: 40}");
  Set(&m, ffk_any_int(2), ffk_any_int(22));
  EXPECT_EQ(R(m), "{0: 0, 1: -1, 3: 30, 4: 40, 2: 22}");
  ffk_object_release(Obj(m));
}

TEST_F(Map, SetOnSharedCopiesAndLeavesOtherHandleUnchanged) {
  ffk_map* m = ffk_map_new();
  Set(&m, ffk_any_int(1), ffk_any_int(1));
  ffk_map* before = m;
  Set(&m, ffk_any_int(2), ffk_any_int(2));
  EXPECT_EQ(m, before) << "unique: in place";
  ffk_map* other = m;
  ffk_object_retain(Obj(other));
  ASSERT_EQ(Set(&m, ffk_any_int(1), ffk_any_int(100)), 0);
  EXPECT_NE(m, other);
  EXPECT_EQ(R(m), "{1: 100, 2: 2}");
  EXPECT_EQ(R(other), "{1: 1, 2: 2}");
  EXPECT_EQ(ffk_object_use_count(Obj(other)), 1u);
  ffk_any one = ffk_any_int(1);
  ffk_map* shared = other;
  ffk_object_retain(Obj(shared));
  ASSERT_EQ(ffk_map_erase(&other, &one), 1);
  EXPECT_NE(other, shared);
  EXPECT_EQ(R(shared), "{1: 1, 2: 2}");
  EXPECT_EQ(R(other), "{2: 2}");
  for (ffk_map* x : {m, other, shared}) ffk_object_release(Obj(x));
}

TEST_F(Map, IterationBorrowsInOrderWithoutRefcountTraffic) {
  ffk_map* m = ffk_map_new();
  ffk_string* s = ffk_string_new("a value string object", 21);
  ffk_any sv = ffk_any_object_steal(&s->header);
  for (int i = 0; i < 20; ++i) Set(&m, ffk_any_int(i), sv);
  uint32_t count = ffk_object_use_count(&s->header);
  int64_t pos = 0;
  const ffk_any *k, *v;
  int64_t expect = 0;
  while (ffk_map_next(m, &pos, &k, &v)) {
    EXPECT_EQ(k->v_int, expect++);
    EXPECT_EQ(v->v_obj, &s->header);
  }
  EXPECT_EQ(expect, 20);
  EXPECT_EQ(ffk_object_use_count(&s->header), count);
  ffk_any_release(&sv);
  ffk_object_release(Obj(m));
}

TEST_F(Map, KeysValuesItemsAndMerge) {
  ffk_any keys[3] = {ffk_any_raw_str("x"), ffk_any_raw_str("y"), ffk_any_raw_str("x")};
  ffk_any vals[3] = {ffk_any_int(1), ffk_any_int(2), ffk_any_int(3)};
  ffk_map* m = ffk_map_from_pairs(keys, vals, 3);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(R(m), "{\"x\": 3, \"y\": 2}") << "a later duplicate wins, at the first position";
  ffk_array* ks = ffk_map_keys(m);
  ffk_array* vs = ffk_map_values(m);
  ffk_array* items = ffk_map_items(m);
  ffk_any kv = ffk_any_object_steal(&ks->header), vv = ffk_any_object_steal(&vs->header),
          iv = ffk_any_object_steal(&items->header);
  EXPECT_EQ(ffk::test::Repr(kv), "(\"x\", \"y\")");
  EXPECT_EQ(ffk::test::Repr(vv), "(3, 2)");
  EXPECT_EQ(ffk::test::Repr(iv), "((\"x\", 3), (\"y\", 2))");
  ffk_any_release(&kv);
  ffk_any_release(&vv);
  ffk_any_release(&iv);
  ffk_any k2[2] = {ffk_any_raw_str("y"), ffk_any_raw_str("z")};
  ffk_any v2[2] = {ffk_any_int(20), ffk_any_int(30)};
  ffk_map* other = ffk_map_from_pairs(k2, v2, 2);
  ASSERT_EQ(ffk_map_merge(&m, other), 0);
  EXPECT_EQ(R(m), "{\"x\": 3, \"y\": 20, \"z\": 30}");
  ASSERT_EQ(ffk_map_merge(&m, m), 0) << "merging a map into itself changes nothing";
  EXPECT_EQ(R(m), "{\"x\": 3, \"y\": 20, \"z\": 30}");
  ffk_object_release(Obj(other));
  ffk_object_release(Obj(m));
}

TEST_F(Map, GrowsPastTheSmallTableAndShrinksBackAfterErasing) {
  ffk_map* m = ffk_map_new();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(Set(&m, ffk_any_int(i), ffk_any_int(-i)), 0);
  for (int i = 0; i < 1000; i += 2) {
    ffk_any k = ffk_any_int(i);
    ASSERT_EQ(ffk_map_erase(&m, &k), 1);
  }
  EXPECT_EQ(ffk_map_size(m), 500);
  for (int i = 0; i < 1000; ++i) {
    ffk_any k = ffk_any_int(i);
    EXPECT_EQ(ffk_map_contains(m, &k), i % 2 == 1) << i;
  }
  for (int round = 0; round < 20000; ++round) {  // churn: dummies must never fill the index
    ffk_any k = ffk_any_int(5000 + round);
    ASSERT_EQ(Set(&m, k, k), 0);
    ASSERT_EQ(ffk_map_erase(&m, &k), 1);
  }
  ffk_any absent = ffk_any_int(-5);
  EXPECT_FALSE(ffk_map_contains(m, &absent));
  ffk_object_release(Obj(m));
}

TEST_F(Map, FromPairsStealTakesEveryValueAndKeepsDuplicateRules) {
  ffk_any keys[3], vals[3];
  ASSERT_EQ(ffk_any_str("a key longer than seven", 23, &keys[0]), 0);
  keys[1] = ffk_any_int(2);
  ASSERT_EQ(ffk_any_str("a key longer than seven", 23, &keys[2]), 0);  // a duplicate: the later value wins
  ASSERT_EQ(ffk_any_str("a value longer than seven", 25, &vals[0]), 0);
  vals[1] = ffk_any_float(0.5);
  vals[2] = ffk_any_int(3);
  ffk_object* s0 = keys[0].v_obj;
  ffk_map* m = ffk_map_from_pairs_steal(keys, vals, 3);
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_EQ(R(m), "{\"a key longer than seven\": 3, 2: 0.5}");
  EXPECT_EQ(ffk_object_use_count(s0), 1) << "the Map holds the first key without a retain";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(keys[i].type_index, FFK_TYPE_NONE);  // taken over
  ffk_object_release(Obj(m));
  // A view owns nothing: the pair is named, and everything is released (ASan checks).
  ffk_any k2[2] = {ffk_any_int(1), ffk_any_raw_str("view")};
  ffk_any v2[2];
  ASSERT_EQ(ffk_any_str("another value longer than seven", 31, &v2[0]), 0);
  ASSERT_EQ(ffk_any_str("and one more longer than seven", 30, &v2[1]), 0);
  EXPECT_EQ(ffk_map_from_pairs_steal(k2, v2, 2), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"the key of pair 1 is a borrowed", "view"}));
  EXPECT_EQ(v2[1].type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_map_from_pairs_steal(nullptr, nullptr, 1), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"1 pairs"}));
  ffk::test::SweepAllocationFailures([] {
    ffk_any k[2] = {ffk_any_int(1), ffk_any_int(2)}, v[2];
    if (ffk_any_str("a value longer than seven", 25, &v[0]) != 0) return false;
    if (ffk_any_str("a value longer than seven", 25, &v[1]) != 0) {
      ffk_any_release(&v[0]);
      return false;
    }
    ffk_map* got = ffk_map_from_pairs_steal(k, v, 2);
    if (got == nullptr) return false;
    ffk_object_release(Obj(got));
    return true;
  });
}

TEST_F(Map, FromPairsStealOfKeysMadeTogetherKeepsDuplicateRulesAcrossForms) {
  // The bulk path of a binding: long str keys from ffk_any_str_many (one block), short
  // ones inline, int keys; later duplicates win at the first position, whatever the form.
  const char* texts[4] = {"a key longer than seven", "short", "a key longer than seven", "another long key"};
  size_t sizes[4] = {23, 5, 23, 16};
  ffk_any keys[6], vals[6];
  ASSERT_EQ(ffk_any_str_many(texts, sizes, 4, keys), 0) << FetchError();
  keys[4] = ffk_any_int(7);
  ASSERT_EQ(ffk_any_str("short", 5, &keys[5]), 0);
  for (int i = 0; i < 6; ++i) vals[i] = ffk_any_int(i);
  ffk_map* m = ffk_map_from_pairs_steal(keys, vals, 6);
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_EQ(R(m), "{\"a key longer than seven\": 2, \"short\": 5, \"another long key\": 3, 7: 4}");
  OwnedAny v;
  EXPECT_EQ(ffk_map_get_str(m, "another long key", 16, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 3);
  ffk_object_release(Obj(m));
  // Many int keys (past the small table), with duplicates: the inline int probe.
  std::vector<ffk_any> ks(300), vs(300);
  for (int i = 0; i < 300; ++i) {
    ks[i] = ffk_any_int(i % 200);
    vs[i] = ffk_any_int(i);
  }
  m = ffk_map_from_pairs_steal(ks.data(), vs.data(), 300);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ffk_map_size(m), 200);
  for (int i = 0; i < 200; ++i) {
    ffk_any k = ffk_any_int(i);
    OwnedAny got;
    ASSERT_EQ(ffk_map_get(m, &k, &got.v), 1);
    EXPECT_EQ(got.v.v_int, i < 100 ? i + 200 : i);
  }
  ffk_object_release(Obj(m));
}

TEST_F(Map, NullHandlesAndBadPairsAreErrors) {
  ffk_any k = ffk_any_int(1);
  EXPECT_EQ(ffk_map_set(nullptr, &k, &k), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_map_set: the map handle is NULL");
  EXPECT_EQ(ffk_map_from_pairs(nullptr, nullptr, 2), nullptr);
  EXPECT_NE(FetchError().find("2 pairs"), std::string::npos);
  ffk_map* m = ffk_map_new();
  ffk_any view = ffk_any_none();
  view.type_index = FFK_TYPE_DLTENSOR_PTR;
  EXPECT_EQ(ffk_map_set(&m, &k, &view), -1);
  EXPECT_NE(FetchError().find("DLTensor*"), std::string::npos);
  EXPECT_EQ(ffk_map_size(m), 0);
  ffk_object_release(Obj(m));
}

TEST_F(Map, MutatorsFailCleanlyAtEveryAllocation) {
  ffk_any raw_key = ffk_any_raw_str("a raw key long enough to become a String");
  struct Op {
    const char* name;
    std::function<int(ffk_map**)> run;
  } ops[] = {
      {"set new", [&](ffk_map** m) { return Set(m, raw_key, raw_key); }},
      {"set existing", [&](ffk_map** m) { return Set(m, ffk_any_int(3), raw_key); }},
      {"erase", [&](ffk_map** m) {
         ffk_any k = ffk_any_int(3);
         return ffk_map_erase(m, &k) < 0 ? -1 : 0;
       }},
      {"merge", [&](ffk_map** m) {
         ffk_map* other = ffk_map_new();
         if (other == nullptr) return -1;
         int rc = Set(&other, ffk_any_int(100), ffk_any_int(1));
         if (rc == 0) rc = ffk_map_merge(m, other);
         ffk_object_release(Obj(other));
         return rc;
       }},
  };
  for (int size : {3, 20}) {  // small (linear) and indexed tables
    for (bool shared : {false, true}) {
      for (const auto& op : ops) {
        SCOPED_TRACE(std::string(op.name) + " size " + std::to_string(size) + (shared ? " shared" : " unique"));
        ffk_map* m = ffk_map_new();
        for (int i = 0; i < size; ++i) ASSERT_EQ(Set(&m, ffk_any_int(i), ffk_any_int(i)), 0);
        ffk_map* other = shared ? m : nullptr;
        if (shared) ffk_object_retain(Obj(other));
        std::string before = R(m);
        ffk::test::SweepAllocationFailures(
            [&] {
              ffk_map* h = m;
              if (op.run(&h) != 0) {
                EXPECT_EQ(h, m);
                return false;
              }
              m = h;
              return true;
            },
            [&] { EXPECT_EQ(R(m), before); });
        if (shared) {
          EXPECT_EQ(R(other), before);
          ffk_object_release(Obj(other));
        }
        ffk_object_release(Obj(m));
      }
    }
  }
}

// 100,000 random operations against an insertion-ordered model; the seed is printed.
TEST_F(Map, RandomOperationsMatchAnOrderedModel) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int64_t, int64_t>> model;  // insertion order
  auto find = [&](int64_t k) {
    return std::find_if(model.begin(), model.end(), [&](const auto& e) { return e.first == k; });
  };
  ffk_map* m = ffk_map_new();
  ffk_map* pinned = nullptr;
  std::vector<std::pair<int64_t, int64_t>> pinned_model;
  for (int step = 0; step < 100000; ++step) {
    int64_t k = static_cast<int64_t>(rng() % 300), v = static_cast<int64_t>(rng());
    ffk_any key = ffk_any_int(k), val = ffk_any_int(v);
    switch (rng() % 5) {
      case 0:
      case 1: {
        ASSERT_EQ(ffk_map_set(&m, &key, &val), 0);
        auto it = find(k);
        if (it != model.end()) {
          it->second = v;
        } else {
          model.emplace_back(k, v);
        }
        break;
      }
      case 2: {
        int rc = ffk_map_erase(&m, &key);
        auto it = find(k);
        ASSERT_EQ(rc, it != model.end() ? 1 : 0);
        if (it != model.end()) model.erase(it);
        break;
      }
      case 3: {
        ffk_any out;
        int rc = ffk_map_get(m, &key, &out);
        auto it = find(k);
        ASSERT_EQ(rc, it != model.end() ? 1 : 0);
        if (rc == 1) {
          ASSERT_EQ(out.v_int, it->second);
        }
        break;
      }
      case 4:
        if (rng() % 50 == 0) {
          if (pinned) {
            std::vector<std::pair<int64_t, int64_t>> seen;
            int64_t pos = 0;
            const ffk_any *pk, *pv;
            while (ffk_map_next(pinned, &pos, &pk, &pv)) seen.emplace_back(pk->v_int, pv->v_int);
            ASSERT_EQ(seen, pinned_model) << "a pinned handle never changes";
            ffk_object_release(Obj(pinned));
            pinned = nullptr;
          } else {
            pinned = m;
            ffk_object_retain(Obj(m));
            pinned_model = model;
          }
        }
        break;
    }
    ASSERT_EQ(ffk_map_size(m), static_cast<int64_t>(model.size())) << "step " << step;
  }
  std::vector<std::pair<int64_t, int64_t>> seen;
  int64_t pos = 0;
  const ffk_any *pk, *pv;
  while (ffk_map_next(m, &pos, &pk, &pv)) seen.emplace_back(pk->v_int, pv->v_int);
  EXPECT_EQ(seen, model);
  if (pinned) ffk_object_release(Obj(pinned));
  ffk_object_release(Obj(m));
}

}  // namespace
