// ffikit/dict.h: shared (not copy-on-write) semantics, key semantics, insertion order,
// every operation and its errors, repr with cycles, iterators that notice changes,
// deleters that re-enter the Dict, a random model check, allocation failures, and a
// few threads sharing Dicts.
#include <ffikit/ffikit.h>
#include <ffikit/dict.h>
#include <ffikit/list.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Dict : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

ffk_object* Obj(ffk_dict* d) { return reinterpret_cast<ffk_object*>(d); }
ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }
ffk_object* Obj(ffk_list* l) { return reinterpret_cast<ffk_object*>(l); }
ffk_object* Obj(ffk_array* a) { return reinterpret_cast<ffk_object*>(a); }

template <typename T>
std::string R(T* x) {
  ffk_any v = ffk_any_object(Obj(x));
  std::string s = Repr(v);
  ffk_any_release(&v);
  return s;
}

int Set(ffk_dict* d, ffk_any k, ffk_any v) { return ffk_dict_set(d, &k, &v); }
int MapSet(ffk_map** m, ffk_any k, ffk_any v) { return ffk_map_set(m, &k, &v); }

using ffk::test::PendingError;
using ffk::test::TensorView;

// The entries in iteration order, as owned copies (the caller releases them).
std::vector<std::pair<ffk_any, ffk_any>> Entries(ffk_dict* d) {
  std::vector<std::pair<ffk_any, ffk_any>> out;
  ffk_dict_iter it;
  ffk_dict_iter_init(&it, d);
  ffk_any k, v;
  int rc;
  while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) out.emplace_back(k, v);
  if (rc != 0) ADD_FAILURE() << "iteration failed: " << FetchError();
  return out;
}

void Release(std::vector<std::pair<ffk_any, ffk_any>>* entries) {
  for (auto& e : *entries) {
    ffk_any_release(&e.first);
    ffk_any_release(&e.second);
  }
  entries->clear();
}

// ---------------------------------------------------------------------------------

TEST_F(Dict, SetGetTriStateAndRepr) {
  ffk_dict* d = ffk_dict_new();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(Obj(d)->type_index, FFK_TYPE_DICT);
  EXPECT_EQ(R(d), "{}");
  ASSERT_EQ(Set(d, ffk_any_raw_str("a"), ffk_any_int(1)), 0);
  ASSERT_EQ(Set(d, ffk_any_int(3), ffk_any_int(2)), 0);
  EXPECT_EQ(R(d), "{\"a\": 1, 3: 2}");
  EXPECT_EQ(ffk_dict_size(d), 2);
  OwnedAny v;
  ffk_any key = ffk_any_raw_str("a");
  EXPECT_EQ(ffk_dict_get(d, &key, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 1);
  ffk_any missing = ffk_any_int(4);
  EXPECT_EQ(ffk_dict_get(d, &missing, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_FALSE(ffk_error_occurred()) << "a missing key is an answer, not an error";
  EXPECT_EQ(ffk_dict_get(nullptr, &key, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_TRUE(ffk_dict_contains(d, &key));
  EXPECT_FALSE(ffk_dict_contains(d, &missing));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, GetReturnsNewReference) {
  ffk_dict* d = ffk_dict_new();
  ffk_string* s = ffk_string_new("a value string object", 21);
  ffk_any sv = ffk_any_object_steal(&s->header);
  ASSERT_EQ(Set(d, ffk_any_int(1), sv), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  OwnedAny v;
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_dict_get(d, &one, &v.v), 1);
  EXPECT_EQ(v.v.v_obj, &s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 3u);
  ffk_any_release(&v.v);
  ASSERT_EQ(Set(d, ffk_any_int(1), ffk_any_int(2)), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "the replaced value is released";
  ffk_any_release(&sv);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, TwoHandlesShareOneObject) {
  ffk_dict* a = ffk_dict_new();
  ffk_dict* b = a;
  ffk_object_retain(Obj(b));
  EXPECT_EQ(ffk_object_use_count(Obj(a)), 2u);
  ASSERT_EQ(Set(a, ffk_any_int(1), ffk_any_int(10)), 0);
  EXPECT_EQ(R(b), "{1: 10}") << "a change through one handle is seen through the other";
  ASSERT_EQ(Set(b, ffk_any_int(1), ffk_any_int(11)), 0);
  ASSERT_EQ(Set(b, ffk_any_int(2), ffk_any_int(20)), 0);
  EXPECT_EQ(R(a), "{1: 11, 2: 20}");
  ffk_any one = ffk_any_int(1);
  EXPECT_EQ(ffk_dict_erase(a, &one), 1);
  EXPECT_EQ(R(b), "{2: 20}");
  EXPECT_EQ(a, b);
  EXPECT_EQ(ffk_object_use_count(Obj(a)), 2u) << "mutation neither copies nor changes the use count";
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_DICT), 1) << "no copy was made";
  ASSERT_EQ(ffk_dict_clear(b), 0);
  EXPECT_EQ(ffk_dict_size(a), 0);
  ffk_object_release(Obj(a));
  EXPECT_EQ(ffk_object_use_count(Obj(b)), 1u);
  ffk_object_release(Obj(b));
}

TEST_F(Dict, OneTrueAndOnePointZeroAreThreeKeys) {
  ffk_dict* d = ffk_dict_new();
  ASSERT_EQ(Set(d, ffk_any_int(1), ffk_any_raw_str("int")), 0);
  ASSERT_EQ(Set(d, ffk_any_bool(true), ffk_any_raw_str("bool")), 0);
  ASSERT_EQ(Set(d, ffk_any_float(1.0), ffk_any_raw_str("float")), 0);
  EXPECT_EQ(ffk_dict_size(d), 3);
  EXPECT_EQ(R(d), "{1: \"int\", True: \"bool\", 1.0: \"float\"}");
  ffk_any t = ffk_any_bool(true);
  OwnedAny v;
  ASSERT_EQ(ffk_dict_get(d, &t, &v.v), 1);
  EXPECT_EQ(Repr(v.v), "\"bool\"");
  // Floats by value: -0.0 is 0.0 and every NaN is the same key.
  ASSERT_EQ(Set(d, ffk_any_float(0.0), ffk_any_int(1)), 0);
  ASSERT_EQ(Set(d, ffk_any_float(-0.0), ffk_any_int(2)), 0);
  ASSERT_EQ(Set(d, ffk_any_float(std::nan("")), ffk_any_int(3)), 0);
  ASSERT_EQ(Set(d, ffk_any_float(-std::nan("1")), ffk_any_int(4)), 0);
  EXPECT_EQ(ffk_dict_size(d), 5);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, StringKeysMatchAcrossForms) {
  ffk_dict* d = ffk_dict_new();
  ffk_string* s = ffk_string_new("a key longer than seven", 23);
  ffk_any heap = ffk_any_object_steal(&s->header);
  ASSERT_EQ(Set(d, heap, ffk_any_int(1)), 0);
  ffk_any raw = ffk_any_raw_str("a key longer than seven");
  EXPECT_TRUE(ffk_dict_contains(d, &raw)) << "a raw C string view finds a String key";
  ASSERT_EQ(Set(d, raw, ffk_any_int(2)), 0);
  EXPECT_EQ(ffk_dict_size(d), 1) << "the same key in another form";
  OwnedAny v;
  ASSERT_EQ(ffk_dict_get(d, &heap, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 2);

  char buf[] = "a raw key stored as an owned String";
  ffk_any raw2 = ffk_any_raw_str(buf);
  ASSERT_EQ(Set(d, raw2, ffk_any_int(3)), 0);
  buf[0] = 'X';  // the Dict copied the key
  ffk_string* s2 = ffk_string_new("a raw key stored as an owned String", 35);
  ffk_any heap2 = ffk_any_object_steal(&s2->header);
  EXPECT_TRUE(ffk_dict_contains(d, &heap2));
  ffk_any_release(&heap2);

  ffk_any small_k;
  ASSERT_EQ(ffk_any_cstr("short", &small_k), 0);
  ASSERT_EQ(Set(d, small_k, ffk_any_int(4)), 0);
  ffk_string* s3 = ffk_string_new("short", 5);
  ffk_any heap_short = ffk_any_object_steal(&s3->header);
  EXPECT_TRUE(ffk_dict_contains(d, &heap_short)) << "a String object finds an inline key";
  ffk_any raw_short = ffk_any_raw_str("short");
  EXPECT_TRUE(ffk_dict_contains(d, &raw_short));
  ffk_any bytes;
  ASSERT_EQ(ffk_any_bytes("short", 5, &bytes), 0);
  EXPECT_FALSE(ffk_dict_contains(d, &bytes)) << "bytes never equal str";
  ASSERT_EQ(ffk_dict_set(d, &bytes, &bytes), 0);
  EXPECT_EQ(ffk_dict_size(d), 4);
  EXPECT_EQ(R(d),
            "{\"a key longer than seven\": 2, \"a raw key stored as an owned String\": 3, \"short\": 4, "
            "b\"short\": b\"short\"}");
  std::vector<std::pair<ffk_any, ffk_any>> entries = Entries(d);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[1].first.type_index, FFK_TYPE_STRING) << "a stored raw key becomes an owned String";
  Release(&entries);
  ffk_any_release(&bytes);
  ffk_any_release(&heap);
  ffk_any_release(&heap_short);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, LookupsByBytesAgreeWithGetAndRejectNulls) {
  ffk_dict* d = ffk_dict_new();
  for (int i = 0; i < 100; ++i) {
    std::string k = (i % 2 ? "k" : "a longer key ") + std::to_string(i);
    ffk_any key;
    ASSERT_EQ(ffk_any_str(k.data(), k.size(), &key), 0);
    ASSERT_EQ(Set(d, key, ffk_any_int(i)), 0);
    ffk_any_release(&key);
  }
  ffk_any bytes_key;
  ASSERT_EQ(ffk_any_bytes("k1", 2, &bytes_key), 0);
  ASSERT_EQ(Set(d, bytes_key, ffk_any_int(-1)), 0);
  for (int i = 0; i < 100; ++i) {
    std::string k = (i % 2 ? "k" : "a longer key ") + std::to_string(i);
    OwnedAny v;
    ASSERT_EQ(ffk_dict_get_str(d, k.data(), k.size(), &v.v), 1) << k;
    EXPECT_EQ(v.v.v_int, i) << "the str key, not the bytes key of the same content";
    EXPECT_EQ(ffk_dict_contains_str(d, k.data(), k.size()), 1);
  }
  OwnedAny v;
  EXPECT_EQ(ffk_dict_get_str(d, "k1000", 5, &v.v), 0);
  EXPECT_EQ(ffk_dict_contains_str(d, "k1\0", 3), 0);
  EXPECT_EQ(ffk_dict_get_str(nullptr, "a", 1, &v.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_dict_get_str: the dict handle is NULL");
  EXPECT_EQ(ffk_dict_contains_str(d, nullptr, 2), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_dict_contains_str: data is NULL but size is 2");
  ffk_any one = ffk_any_int(1);
  EXPECT_FALSE(ffk_dict_contains(d, &one));
  ASSERT_EQ(Set(d, one, ffk_any_int(7)), 0);
  EXPECT_TRUE(ffk_dict_contains(d, &one)) << "the int path of contains";
  ffk_any big = ffk_any_int(1000);
  EXPECT_FALSE(ffk_dict_contains(d, &big));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, UpdateKeepsPositionEraseKeepsOrderReinsertGoesLast) {
  ffk_dict* d = ffk_dict_new();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Set(d, ffk_any_int(i), ffk_any_int(i * 10)), 0);
  ASSERT_EQ(Set(d, ffk_any_int(1), ffk_any_int(-1)), 0);
  EXPECT_EQ(R(d), "{0: 0, 1: -1, 2: 20, 3: 30, 4: 40}");
  ffk_any two = ffk_any_int(2);
  EXPECT_EQ(ffk_dict_erase(d, &two), 1);
  EXPECT_EQ(ffk_dict_erase(d, &two), 0);
  EXPECT_EQ(R(d), "{0: 0, 1: -1, 3: 30, 4: 40}");
  ASSERT_EQ(Set(d, ffk_any_int(2), ffk_any_int(22)), 0);
  EXPECT_EQ(R(d), "{0: 0, 1: -1, 3: 30, 4: 40, 2: 22}");
  ffk_any zero = ffk_any_int(0);
  OwnedAny v;
  ASSERT_EQ(ffk_dict_pop(d, &zero, &v.v), 0);
  ASSERT_EQ(Set(d, ffk_any_int(0), ffk_any_int(0)), 0);
  EXPECT_EQ(R(d), "{1: -1, 3: 30, 4: 40, 2: 22, 0: 0}");
  ffk_object_release(Obj(d));
}

TEST_F(Dict, SetdefaultBothBranches) {
  ffk_dict* d = ffk_dict_new();
  ASSERT_EQ(Set(d, ffk_any_raw_str("k"), ffk_any_int(1)), 0);
  ffk_any k = ffk_any_raw_str("k"), other = ffk_any_raw_str("another key, long"),
          dflt = ffk_any_raw_str("a default value, long enough");
  OwnedAny v;
  EXPECT_EQ(ffk_dict_setdefault(d, &k, &dflt, &v.v), 1) << "present: its value";
  EXPECT_EQ(v.v.v_int, 1);
  EXPECT_EQ(R(d), "{\"k\": 1}") << "unchanged";
  ffk_any_release(&v.v);
  EXPECT_EQ(ffk_dict_setdefault(d, &other, &dflt, &v.v), 0) << "missing: set to the default";
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING) << "an owned copy of the default view";
  EXPECT_EQ(Repr(v.v), "\"a default value, long enough\"");
  EXPECT_EQ(ffk_object_use_count(v.v.v_obj), 2u) << "the Dict's and ours";
  EXPECT_EQ(R(d), "{\"k\": 1, \"another key, long\": \"a default value, long enough\"}");
  ffk_any_release(&v.v);
  ffk_any t = TensorView();
  ffk_any third = ffk_any_int(3);
  EXPECT_EQ(ffk_dict_setdefault(d, &third, &t, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_dict_size(d), 2);
  EXPECT_EQ(ffk_dict_setdefault(nullptr, &k, &dflt, &v.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, PopAndPopDefault) {
  ffk_dict* d = ffk_dict_new();
  ffk_string* s = ffk_string_new("a popped value object", 21);
  ffk_any sv = ffk_any_object_steal(&s->header);
  ASSERT_EQ(Set(d, ffk_any_raw_str("a"), sv), 0);
  ASSERT_EQ(Set(d, ffk_any_raw_str("b"), ffk_any_int(2)), 0);
  ffk_any_release(&sv);
  ffk_any a = ffk_any_raw_str("a"), b = ffk_any_raw_str("b"), missing = ffk_any_raw_str("missing");
  OwnedAny v;
  ASSERT_EQ(ffk_dict_pop(d, &a, &v.v), 0);
  EXPECT_EQ(v.v.v_obj, &s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "moved out: the caller owns the only reference";
  ffk_any_release(&v.v);
  EXPECT_EQ(ffk_dict_pop(d, &missing, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_TRUE(PendingError("KeyError", {"\"missing\""})) << "names the key, as its repr";
  ffk_any num = ffk_any_int(12345);
  EXPECT_EQ(ffk_dict_pop(d, &num, &v.v), -1);
  EXPECT_TRUE(PendingError("KeyError", {"12345"}));
  EXPECT_EQ(R(d), "{\"b\": 2}");

  ffk_any dflt = ffk_any_raw_str("a default that is copied");
  EXPECT_EQ(ffk_dict_pop_default(d, &missing, &dflt, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING) << "an owned copy of the default";
  EXPECT_EQ(Repr(v.v), "\"a default that is copied\"");
  ffk_any_release(&v.v);
  EXPECT_EQ(R(d), "{\"b\": 2}") << "pop_default of a missing key changes nothing";
  EXPECT_EQ(ffk_dict_pop_default(d, &b, &dflt, &v.v), 1);
  EXPECT_EQ(v.v.v_int, 2);
  EXPECT_EQ(ffk_dict_size(d), 0);
  ffk_any t = TensorView();
  EXPECT_EQ(ffk_dict_pop_default(d, &b, &t, &v.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_dict_pop(nullptr, &b, &v.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_dict_pop_default(nullptr, &b, &dflt, &v.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, EraseAndClear) {
  ffk_dict* d = ffk_dict_new();
  ffk_string* s = ffk_string_new("a value released by clear", 25);
  ffk_any sv = ffk_any_object_steal(&s->header);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Set(d, ffk_any_int(i), sv), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 21u);
  ffk_any k = ffk_any_int(5);
  EXPECT_EQ(ffk_dict_erase(d, &k), 1);
  EXPECT_EQ(ffk_object_use_count(&s->header), 20u);
  EXPECT_EQ(ffk_dict_erase(d, &k), 0);
  EXPECT_FALSE(ffk_error_occurred());
  ASSERT_EQ(ffk_dict_clear(d), 0);
  EXPECT_EQ(ffk_dict_size(d), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
  EXPECT_EQ(R(d), "{}");
  ASSERT_EQ(ffk_dict_clear(d), 0);
  ASSERT_EQ(Set(d, ffk_any_int(7), ffk_any_int(8)), 0) << "a cleared Dict is usable";
  EXPECT_EQ(R(d), "{7: 8}");
  EXPECT_EQ(ffk_dict_erase(nullptr, &k), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_dict_clear(nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_any_release(&sv);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, UpdateFromMapDictItselfAndWrongType) {
  ffk_dict* d = ffk_dict_new();
  ASSERT_EQ(Set(d, ffk_any_raw_str("x"), ffk_any_int(1)), 0);
  ASSERT_EQ(Set(d, ffk_any_raw_str("y"), ffk_any_int(2)), 0);
  ffk_map* m = ffk_map_new();
  ASSERT_EQ(MapSet(&m, ffk_any_raw_str("z"), ffk_any_int(30)), 0);
  ASSERT_EQ(MapSet(&m, ffk_any_raw_str("x"), ffk_any_int(10)), 0);
  ASSERT_EQ(ffk_dict_update(d, Obj(m)), 0);
  EXPECT_EQ(R(d), "{\"x\": 10, \"y\": 2, \"z\": 30}") << "other's values win; new keys in other's order";
  EXPECT_EQ(R(m), "{\"z\": 30, \"x\": 10}") << "the source is only read";

  ffk_dict* o = ffk_dict_new();
  ASSERT_EQ(Set(o, ffk_any_int(5), ffk_any_int(50)), 0);
  ASSERT_EQ(Set(o, ffk_any_raw_str("y"), ffk_any_int(20)), 0);
  ASSERT_EQ(Set(o, ffk_any_int(4), ffk_any_int(40)), 0);
  ASSERT_EQ(ffk_dict_update(d, Obj(o)), 0);
  EXPECT_EQ(R(d), "{\"x\": 10, \"y\": 20, \"z\": 30, 5: 50, 4: 40}");
  EXPECT_EQ(R(o), "{5: 50, \"y\": 20, 4: 40}");

  ASSERT_EQ(ffk_dict_update(d, Obj(d)), 0) << "updating from itself";
  EXPECT_EQ(R(d), "{\"x\": 10, \"y\": 20, \"z\": 30, 5: 50, 4: 40}") << "changes nothing";
  ffk_dict_iter it;
  ffk_dict_iter_init(&it, d);
  ASSERT_EQ(ffk_dict_update(d, Obj(d)), 0);
  EXPECT_EQ(ffk_dict_iter_next(&it, nullptr, nullptr), 1) << "not even a change an iterator notices";
  ffk_error_clear();

  ffk_list* l = ffk_list_new();
  EXPECT_EQ(ffk_dict_update(d, Obj(l)), -1);
  EXPECT_TRUE(PendingError("TypeError", {"List"}));
  ffk_array* arr = ffk_array_new(nullptr, 0);
  EXPECT_EQ(ffk_dict_update(d, Obj(arr)), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Array"}));
  EXPECT_EQ(ffk_dict_update(d, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_dict_update(nullptr, Obj(m)), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_dict_size(d), 5);
  for (ffk_object* x : {Obj(d), Obj(m), Obj(o), Obj(l), Obj(arr)}) ffk_object_release(x);
}

TEST_F(Dict, FromPairsLaterDuplicatesWinAtTheFirstPosition) {
  ffk_any keys[5] = {ffk_any_raw_str("x"), ffk_any_raw_str("y"), ffk_any_raw_str("x"), ffk_any_int(1),
                     ffk_any_bool(true)};
  ffk_any vals[5] = {ffk_any_int(1), ffk_any_int(2), ffk_any_int(3), ffk_any_int(4), ffk_any_int(5)};
  ffk_dict* d = ffk_dict_from_pairs(keys, vals, 5);
  ASSERT_NE(d, nullptr) << FetchError();
  EXPECT_EQ(R(d), "{\"x\": 3, \"y\": 2, 1: 4, True: 5}");
  ffk_dict* e = ffk_dict_from_pairs(nullptr, nullptr, 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(ffk_dict_size(e), 0);
  EXPECT_EQ(ffk_dict_from_pairs(nullptr, nullptr, 2), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"2"}));
  EXPECT_EQ(ffk_dict_from_pairs(keys, vals, -1), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"-1"}));
  ffk_any bad[2] = {ffk_any_int(1), TensorView()};
  EXPECT_EQ(ffk_dict_from_pairs(keys, bad, 2), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_dict_from_pairs(bad, vals, 2), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  ffk_object_release(Obj(d));
  ffk_object_release(Obj(e));
}

TEST_F(Dict, FromMapStealMovesTheEntriesOfAnUnsharedMap) {
  ffk_map* m = ffk_map_new();
  for (int i = 0; i < 12; ++i) ASSERT_EQ(MapSet(&m, ffk_any_int(11 - i), ffk_any_int(i)), 0);
  ffk_any big;
  ASSERT_EQ(ffk_any_str("a string longer than seven bytes", 32, &big), 0);
  ASSERT_EQ(MapSet(&m, ffk_any_int(99), big), 0);
  EXPECT_EQ(ffk_object_use_count(big.v_obj), 2);
  std::string mrepr = R(m);
  // The only reference: the entries move (no retain), the Map goes.
  ffk_dict* d = ffk_dict_from_map_steal(m);
  ASSERT_NE(d, nullptr) << FetchError();
  EXPECT_EQ(R(d), mrepr);
  EXPECT_EQ(ffk_object_use_count(big.v_obj), 2) << "moved, not copied";
  // Shared: copied, and the caller's reference released; the other holder's Map is unchanged.
  ffk_map* shared = ffk_dict_to_map(d);
  ASSERT_NE(shared, nullptr);
  ffk_object_retain(Obj(shared));
  ffk_dict* e = ffk_dict_from_map_steal(shared);
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(Set(e, ffk_any_int(1000), ffk_any_int(1)), 0);
  EXPECT_EQ(R(shared), mrepr);
  EXPECT_EQ(ffk_object_use_count(Obj(shared)), 1);
  EXPECT_EQ(ffk_dict_from_map_steal(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"the map is NULL"}));
  ffk_any_release(&big);
  for (ffk_object* x : {Obj(shared), Obj(d), Obj(e)}) ffk_object_release(x);
}

TEST_F(Dict, FromMapAndToMapAreSnapshots) {
  ffk_map* m = ffk_map_new();
  for (int i = 0; i < 12; ++i) ASSERT_EQ(MapSet(&m, ffk_any_int(11 - i), ffk_any_int(i)), 0);
  std::string mrepr = R(m);
  ffk_dict* d = ffk_dict_from_map(m);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(R(d), mrepr) << "in the Map's order";
  ASSERT_EQ(Set(d, ffk_any_int(100), ffk_any_int(100)), 0);
  ASSERT_EQ(Set(d, ffk_any_int(0), ffk_any_int(-1)), 0);
  EXPECT_EQ(R(m), mrepr) << "the Map never changes";

  ffk_map* snap = ffk_dict_to_map(d);
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(Obj(snap)->type_index, FFK_TYPE_MAP);
  std::string drepr = R(d);
  EXPECT_EQ(R(snap), drepr);
  ASSERT_EQ(Set(d, ffk_any_int(1), ffk_any_int(-2)), 0);
  ffk_any k = ffk_any_int(5);
  ASSERT_EQ(ffk_dict_erase(d, &k), 1);
  ASSERT_EQ(Set(d, ffk_any_int(200), ffk_any_int(200)), 0);
  EXPECT_EQ(R(snap), drepr) << "a snapshot never changes";
  ASSERT_EQ(ffk_dict_clear(d), 0);
  EXPECT_EQ(R(snap), drepr);
  EXPECT_EQ(ffk_map_size(snap), 13);

  ffk_map* empty = ffk_dict_to_map(d);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(ffk_map_size(empty), 0);
  EXPECT_EQ(ffk_dict_from_map(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_dict_to_map(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  for (ffk_object* x : {Obj(m), Obj(d), Obj(snap), Obj(empty)}) ffk_object_release(x);
}

TEST_F(Dict, KeysValuesItems) {
  ffk_any keys[3] = {ffk_any_raw_str("x"), ffk_any_int(7), ffk_any_raw_str("a longer key string")};
  ffk_any vals[3] = {ffk_any_int(1), ffk_any_raw_str("seven"), ffk_any_float(2.5)};
  ffk_dict* d = ffk_dict_from_pairs(keys, vals, 3);
  ASSERT_NE(d, nullptr);
  ffk_array* ks = ffk_dict_keys(d);
  ffk_array* vs = ffk_dict_values(d);
  ffk_array* items = ffk_dict_items(d);
  ASSERT_TRUE(ks && vs && items);
  EXPECT_EQ(Obj(ks)->type_index, FFK_TYPE_ARRAY);
  EXPECT_EQ(R(ks), "(\"x\", 7, \"a longer key string\")");
  EXPECT_EQ(R(vs), "(1, \"seven\", 2.5)");
  EXPECT_EQ(R(items), "((\"x\", 1), (7, \"seven\"), (\"a longer key string\", 2.5))");
  EXPECT_EQ(ffk_array_items_borrow(items)[0].type_index, FFK_TYPE_TUPLE);
  ffk_any k = ffk_any_int(7);
  ASSERT_EQ(ffk_dict_erase(d, &k), 1);
  EXPECT_EQ(ffk_array_size(ks), 3) << "snapshots";
  ffk_array* ks2 = ffk_dict_keys(d);
  EXPECT_EQ(R(ks2), "(\"x\", \"a longer key string\")");
  ASSERT_EQ(ffk_dict_clear(d), 0);
  ffk_array* none = ffk_dict_items(d);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(R(none), "()");
  for (auto f : {ffk_dict_keys, ffk_dict_values, ffk_dict_items}) {
    EXPECT_EQ(f(nullptr), nullptr);
    EXPECT_TRUE(PendingError("ValueError"));
  }
  for (ffk_object* x : {Obj(d), Obj(ks), Obj(vs), Obj(items), Obj(ks2), Obj(none)}) ffk_object_release(x);
}

TEST_F(Dict, TensorViewsAreRejectedAndTheDictUnchanged) {
  ffk_dict* d = ffk_dict_new();
  ASSERT_EQ(Set(d, ffk_any_int(1), ffk_any_int(1)), 0);
  ffk_any t = TensorView(), k = ffk_any_int(2), one = ffk_any_int(1);
  EXPECT_EQ(ffk_dict_set(d, &k, &t), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_dict_set(d, &t, &k), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_dict_set(d, &one, &t), -1) << "replacing a value";
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(R(d), "{1: 1}");
  ffk_object_release(Obj(d));
}

TEST_F(Dict, NullHandleIsAValueErrorForEveryFallibleFunction) {
  ffk_any k = ffk_any_int(1);
  ffk_any out = ffk_any_none();
  ffk_map* m = ffk_map_new();
  struct {
    const char* name;
    std::function<int()> call;
  } calls[] = {
      {"get", [&] { return ffk_dict_get(nullptr, &k, &out); }},
      {"set", [&] { return ffk_dict_set(nullptr, &k, &k); }},
      {"setdefault", [&] { return ffk_dict_setdefault(nullptr, &k, &k, &out); }},
      {"pop", [&] { return ffk_dict_pop(nullptr, &k, &out); }},
      {"pop_default", [&] { return ffk_dict_pop_default(nullptr, &k, &k, &out); }},
      {"erase", [&] { return ffk_dict_erase(nullptr, &k); }},
      {"clear", [&] { return ffk_dict_clear(nullptr); }},
      {"update", [&] { return ffk_dict_update(nullptr, Obj(m)); }},
      {"keys", [&] { return ffk_dict_keys(nullptr) == nullptr ? -1 : 0; }},
      {"values", [&] { return ffk_dict_values(nullptr) == nullptr ? -1 : 0; }},
      {"items", [&] { return ffk_dict_items(nullptr) == nullptr ? -1 : 0; }},
      {"collect", [&] { return ffk_dict_collect(nullptr, FFK_MAP_VALUES) == nullptr ? -1 : 0; }},
      {"to_map", [&] { return ffk_dict_to_map(nullptr) == nullptr ? -1 : 0; }},
      {"from_map", [&] { return ffk_dict_from_map(nullptr) == nullptr ? -1 : 0; }},
  };
  for (const auto& c : calls) {
    EXPECT_EQ(c.call(), -1) << c.name;
    EXPECT_TRUE(PendingError("ValueError", {"NULL"})) << c.name;
    EXPECT_EQ(out.type_index, FFK_TYPE_NONE) << c.name;
  }
  ffk_object_release(Obj(m));
}

TEST_F(Dict, ReprOfSelfContainingDicts) {
  ffk_dict* d = ffk_dict_new();
  ffk_any self = ffk_any_object(Obj(d));
  ASSERT_EQ(Set(d, ffk_any_raw_str("self"), self), 0);
  EXPECT_EQ(R(d), "{\"self\": ...}");
  ffk_list* l = ffk_list_new();
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_list_append(l, &one), 0);
  ASSERT_EQ(ffk_list_append(l, &self), 0);
  ffk_any lv = ffk_any_object(Obj(l));
  ASSERT_EQ(Set(d, ffk_any_raw_str("l"), lv), 0);
  EXPECT_EQ(R(d), "{\"self\": ..., \"l\": [1, ...]}");
  EXPECT_EQ(R(l), "[1, {\"self\": ..., \"l\": ...}]");
  // Break the cycles, or they would keep each other alive.
  ASSERT_EQ(ffk_dict_clear(d), 0);
  ASSERT_EQ(ffk_list_clear(l), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(d)), 2u);  // ours and `self`'s
  ffk_any_release(&self);
  ffk_any_release(&lv);
  ffk_object_release(Obj(l));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, IteratorWalksInOrderAndStaysAtTheEnd) {
  ffk_dict* d = ffk_dict_new();
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Set(d, ffk_any_int(19 - i), ffk_any_int(i)), 0);
  for (int i = 0; i < 20; i += 3) {
    ffk_any k = ffk_any_int(i);
    ASSERT_EQ(ffk_dict_erase(d, &k), 1);
  }
  ASSERT_EQ(Set(d, ffk_any_int(0), ffk_any_int(100)), 0);  // goes last
  std::vector<std::pair<int64_t, int64_t>> want;
  for (int i = 0; i < 20; ++i) {
    if ((19 - i) % 3 != 0) want.emplace_back(19 - i, i);
  }
  want.emplace_back(0, 100);
  ffk_dict_iter it;
  ffk_dict_iter_init(&it, d);
  std::vector<std::pair<int64_t, int64_t>> seen;
  ffk_any k, v;
  int rc;
  while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) seen.emplace_back(k.v_int, v.v_int);
  EXPECT_EQ(rc, 0) << FetchError();
  EXPECT_EQ(seen, want);
  EXPECT_EQ(ffk_dict_iter_next(&it, &k, &v), 0) << "the end stays the end";
  EXPECT_EQ(ffk_dict_iter_next(&it, &k, &v), 0);

  // Key or value may be NULL; the other is still a new reference.
  ffk_dict* s = ffk_dict_new();
  ffk_string* str = ffk_string_new("a value the iterator returns", 28);
  ffk_any sv = ffk_any_object_steal(&str->header);
  ASSERT_EQ(Set(s, sv, sv), 0);
  ffk_dict_iter_init(&it, s);
  OwnedAny only_value;
  ASSERT_EQ(ffk_dict_iter_next(&it, nullptr, &only_value.v), 1);
  EXPECT_EQ(only_value.v.v_obj, &str->header);
  EXPECT_EQ(ffk_object_use_count(&str->header), 4u);  // sv, the key, the value, only_value
  ffk_any_release(&only_value.v);
  ffk_dict_iter_init(&it, s);
  OwnedAny only_key;
  ASSERT_EQ(ffk_dict_iter_next(&it, &only_key.v, nullptr), 1);
  EXPECT_EQ(only_key.v.v_obj, &str->header);
  ffk_any_release(&only_key.v);
  ffk_dict_iter_init(&it, s);
  ASSERT_EQ(ffk_dict_iter_next(&it, nullptr, nullptr), 1);
  EXPECT_EQ(ffk_dict_iter_next(&it, nullptr, nullptr), 0);
  EXPECT_EQ(ffk_object_use_count(&str->header), 3u);
  ffk_any_release(&sv);
  ffk_object_release(Obj(s));

  ffk_dict* e = ffk_dict_new();
  ffk_dict_iter_init(&it, e);
  EXPECT_EQ(ffk_dict_iter_next(&it, &k, &v), 0);
  ffk_object_release(Obj(e));
  ffk_object_release(Obj(d));
}

TEST_F(Dict, IteratorReportsAddedOrRemovedKeysButNotNewValues) {
  ffk_map* m_new = ffk_map_new();
  ASSERT_EQ(MapSet(&m_new, ffk_any_int(100), ffk_any_int(1)), 0);
  ffk_map* m_old = ffk_map_new();
  ASSERT_EQ(MapSet(&m_old, ffk_any_int(3), ffk_any_int(33)), 0);
  struct {
    const char* name;
    std::function<int(ffk_dict*)> change;
    bool reported;
    int64_t value_of_3 = 3;  // what the rest of an unreported iteration sees for key 3
  } changes[] = {
      {"set a new key", [](ffk_dict* d) { return Set(d, ffk_any_int(50), ffk_any_int(0)); }, true},
      {"erase", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(3);
         return ffk_dict_erase(d, &k) == 1 ? 0 : -1;
       }, true},
      {"pop", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(0), out;
         return ffk_dict_pop(d, &k, &out);
       }, true},
      {"pop_default present", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(0), dflt = ffk_any_none(), out;
         return ffk_dict_pop_default(d, &k, &dflt, &out) == 1 ? 0 : -1;
       }, true},
      {"clear", [](ffk_dict* d) { return ffk_dict_clear(d); }, true},
      {"setdefault new", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(60), out;
         return ffk_dict_setdefault(d, &k, &k, &out) == 0 ? 0 : -1;
       }, true},
      {"update with a new key", [&](ffk_dict* d) { return ffk_dict_update(d, Obj(m_new)); }, true},
      {"erase, then set the same key again", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(3);
         if (ffk_dict_erase(d, &k) != 1) return -1;
         return Set(d, k, k);
       }, true},
      {"set an existing key", [](ffk_dict* d) { return Set(d, ffk_any_int(3), ffk_any_int(33)); }, false, 33},
      {"setdefault existing", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(3), out;
         return ffk_dict_setdefault(d, &k, &k, &out) == 1 ? 0 : -1;
       }, false},
      {"update existing keys only", [&](ffk_dict* d) { return ffk_dict_update(d, Obj(m_old)); }, false, 33},
      {"erase a missing key", [](ffk_dict* d) {
         ffk_any k = ffk_any_int(1000);
         return ffk_dict_erase(d, &k) == 0 ? 0 : -1;
       }, false},
  };
  for (const auto& c : changes) {
    SCOPED_TRACE(c.name);
    ffk_dict* d = ffk_dict_new();
    for (int i = 0; i < 5; ++i) ASSERT_EQ(Set(d, ffk_any_int(i), ffk_any_int(i)), 0);
    ffk_dict_iter it;
    ffk_dict_iter_init(&it, d);
    ffk_any k, v;
    ASSERT_EQ(ffk_dict_iter_next(&it, &k, &v), 1);
    EXPECT_EQ(k.v_int, 0);
    ASSERT_EQ(c.change(d), 0) << FetchError();
    if (c.reported) {
      EXPECT_EQ(ffk_dict_iter_next(&it, &k, &v), -1);
      EXPECT_EQ(FetchError(), "RuntimeError: Dict changed during iteration");
    } else {
      std::vector<std::pair<int64_t, int64_t>> rest;
      int rc;
      while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) rest.emplace_back(k.v_int, v.v_int);
      EXPECT_EQ(rc, 0) << FetchError();
      EXPECT_EQ(rest, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 2}, {3, c.value_of_3}, {4, 4}}))
          << "a new value is seen";
    }
    ffk_object_release(Obj(d));
  }
  ffk_object_release(Obj(m_new));
  ffk_object_release(Obj(m_old));
}

// An update that only replaces values is not a change an iterator reports, so it must not
// move the entries under it either: whatever room it makes (which may compact away the
// erased entries), the iteration goes on with the next key, no key skipped or repeated.
TEST_F(Dict, IteratorSurvivesAnUpdateOfExistingKeysAfterErasures) {
  for (bool from_dict : {false, true}) {
    for (int n = 2; n <= 70; ++n) {
      SCOPED_TRACE(std::string(from_dict ? "from a Dict" : "from a Map") + ", " + std::to_string(n) + " keys");
      ffk_dict* d = ffk_dict_new();
      for (int i = 0; i < n; ++i) ASSERT_EQ(Set(d, ffk_any_int(i), ffk_any_int(i)), 0);
      ffk_any zero = ffk_any_int(0);
      ASSERT_EQ(ffk_dict_erase(d, &zero), 1);  // an erased entry before the iterator's position
      ffk_dict_iter it;
      ffk_dict_iter_init(&it, d);
      ffk_any k, v;
      ASSERT_EQ(ffk_dict_iter_next(&it, &k, &v), 1);
      ASSERT_EQ(k.v_int, 1);
      ffk_map* m = ffk_map_new();
      for (int i = 1; i < n; ++i) ASSERT_EQ(MapSet(&m, ffk_any_int(i), ffk_any_int(100 + i)), 0);
      ffk_dict* o = ffk_dict_from_map(m);
      ASSERT_EQ(ffk_dict_update(d, from_dict ? Obj(o) : Obj(m)), 0) << FetchError();
      std::vector<int64_t> keys, values;
      int rc;
      while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) {
        keys.push_back(k.v_int);
        values.push_back(v.v_int);
      }
      EXPECT_EQ(rc, 0) << FetchError();
      std::vector<int64_t> want_keys, want_values;
      for (int i = 2; i < n; ++i) {
        want_keys.push_back(i);
        want_values.push_back(100 + i);
      }
      EXPECT_EQ(keys, want_keys);
      EXPECT_EQ(values, want_values);
      ffk_object_release(Obj(o));
      ffk_object_release(Obj(m));
      ffk_object_release(Obj(d));
      if (HasFailure()) return;
    }
  }
}

// An object whose deleter uses the Dict that held it: it reads the Dict, iterates it,
// and sets "deleted" to 1000 + the size it saw. With no lock held while the deleter
// runs and the Dict consistent before the release, every removal below completes
// (no deadlock) and the deleter sees the Dict after the operation.
struct Reentrant {
  ffk_object header;
  ffk_dict* dict;  // borrowed: the test keeps the Dict alive
  int* destroyed;
};

int32_t ReentrantType() {
  static const int32_t type = ffk_type_register("ffk_test.DictReentrant", FFK_TYPE_OBJECT);
  return type;
}

void ReentrantDeleter(void* self, int which) {
  Reentrant* r = static_cast<Reentrant*>(self);
  if (which & FFK_DELETER_DESTROY) {
    ++*r->destroyed;
    int64_t n = ffk_dict_size(r->dict);
    ffk_any probe = ffk_any_raw_str("b"), out;
    if (ffk_dict_get(r->dict, &probe, &out) == 1) ffk_any_release(&out);
    ffk_dict_iter it;
    ffk_dict_iter_init(&it, r->dict);
    while (ffk_dict_iter_next(&it, nullptr, nullptr) == 1) {
    }
    if (Set(r->dict, ffk_any_raw_str("deleted"), ffk_any_int(1000 + n)) != 0) ffk_error_clear();
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&r->header);
}

ffk_any NewReentrant(ffk_dict* d, int* destroyed) {
  ffk_object* o = ffk_object_alloc(ReentrantType(), sizeof(Reentrant), ReentrantDeleter);
  EXPECT_NE(o, nullptr) << FetchError();
  Reentrant* r = reinterpret_cast<Reentrant*>(o);
  r->dict = d;
  r->destroyed = destroyed;
  return ffk_any_object_steal(o);
}

TEST_F(Dict, DeleterMayUseTheDictAgain) {
  ASSERT_GE(ReentrantType(), FFK_TYPE_STATIC_END) << FetchError();
  ffk_any a = ffk_any_raw_str("a");
  struct {
    const char* name;
    std::function<int(ffk_dict*)> op;
    std::string want;  // the Dict starts as {"a": R, "b": 1} where R holds the only reference
  } cases[] = {
      {"set", [&](ffk_dict* d) { return Set(d, a, ffk_any_int(5)); }, "{\"a\": 5, \"b\": 1, \"deleted\": 1002}"},
      {"pop", [&](ffk_dict* d) {
         ffk_any out;
         int rc = ffk_dict_pop(d, &a, &out);
         ffk_any_release(&out);
         return rc;
       }, "{\"b\": 1, \"deleted\": 1001}"},
      {"pop_default", [&](ffk_dict* d) {
         ffk_any out, dflt = ffk_any_none();
         int rc = ffk_dict_pop_default(d, &a, &dflt, &out);
         ffk_any_release(&out);
         return rc == 1 ? 0 : -1;
       }, "{\"b\": 1, \"deleted\": 1001}"},
      {"erase", [&](ffk_dict* d) { return ffk_dict_erase(d, &a) == 1 ? 0 : -1; }, "{\"b\": 1, \"deleted\": 1001}"},
      {"clear", [](ffk_dict* d) { return ffk_dict_clear(d); }, "{\"deleted\": 1000}"},
      {"update from a Map", [&](ffk_dict* d) {
         ffk_map* m = ffk_map_new();
         int rc = MapSet(&m, a, ffk_any_int(7));
         if (rc == 0) rc = ffk_dict_update(d, Obj(m));
         ffk_object_release(Obj(m));
         return rc;
       }, "{\"a\": 7, \"b\": 1, \"deleted\": 1002}"},
      {"update from a Dict", [&](ffk_dict* d) {
         ffk_dict* o = ffk_dict_new();
         int rc = Set(o, a, ffk_any_int(8));
         if (rc == 0) rc = ffk_dict_update(d, Obj(o));
         ffk_object_release(Obj(o));
         return rc;
       }, "{\"a\": 8, \"b\": 1, \"deleted\": 1002}"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    int destroyed = 0;
    ffk_dict* d = ffk_dict_new();
    ffk_any r = NewReentrant(d, &destroyed);
    ASSERT_EQ(Set(d, a, r), 0);
    ffk_any_release(&r);
    ASSERT_EQ(Set(d, ffk_any_raw_str("b"), ffk_any_int(1)), 0);
    ASSERT_EQ(c.op(d), 0) << FetchError();
    EXPECT_EQ(destroyed, 1);
    EXPECT_EQ(R(d), c.want);
    ffk_object_release(Obj(d));
  }
  {
    SCOPED_TRACE("a key object whose deleter uses the Dict");
    int destroyed = 0;
    ffk_dict* d = ffk_dict_new();
    ffk_any r = NewReentrant(d, &destroyed);
    ASSERT_EQ(Set(d, r, ffk_any_int(1)), 0);
    ffk_any borrowed = r;  // a plain copy: the Dict's reference keeps it alive until erase
    ffk_any_release(&r);
    ASSERT_EQ(Set(d, ffk_any_raw_str("b"), ffk_any_int(1)), 0);
    EXPECT_EQ(ffk_dict_erase(d, &borrowed), 1);
    EXPECT_EQ(destroyed, 1);
    EXPECT_EQ(R(d), "{\"b\": 1, \"deleted\": 1001}");
    ffk_object_release(Obj(d));
  }
  {
    SCOPED_TRACE("two values: the second deleter sees the first one's change");
    int destroyed = 0;
    ffk_dict* d = ffk_dict_new();
    for (int i = 0; i < 2; ++i) {
      ffk_any r = NewReentrant(d, &destroyed);
      ASSERT_EQ(Set(d, ffk_any_int(i), r), 0);
      ffk_any_release(&r);
    }
    ASSERT_EQ(ffk_dict_clear(d), 0);
    EXPECT_EQ(destroyed, 2);
    EXPECT_EQ(R(d), "{\"deleted\": 1001}") << "the first set 1000 into the empty Dict, the second saw 1 entry";
    ffk_object_release(Obj(d));
  }
}

TEST_F(Dict, GrowsPastTheSmallTableAndSurvivesChurn) {
  ffk_dict* d = ffk_dict_new();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(Set(d, ffk_any_int(i), ffk_any_int(-i)), 0);
  for (int i = 0; i < 1000; i += 2) {
    ffk_any k = ffk_any_int(i);
    ASSERT_EQ(ffk_dict_erase(d, &k), 1);
  }
  EXPECT_EQ(ffk_dict_size(d), 500);
  for (int i = 0; i < 1000; ++i) {
    ffk_any k = ffk_any_int(i);
    EXPECT_EQ(ffk_dict_contains(d, &k), i % 2 == 1) << i;
  }
  for (int round = 0; round < 20000; ++round) {  // churn: dummies must never fill the index
    ffk_any k = ffk_any_int(5000 + round);
    ASSERT_EQ(Set(d, k, k), 0);
    ASSERT_EQ(ffk_dict_erase(d, &k), 1);
  }
  ffk_any absent = ffk_any_int(-5);
  EXPECT_FALSE(ffk_dict_contains(d, &absent));
  std::vector<std::pair<ffk_any, ffk_any>> entries = Entries(d);
  ASSERT_EQ(entries.size(), 500u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].first.v_int, static_cast<int64_t>(2 * i + 1));
    EXPECT_EQ(entries[i].second.v_int, -static_cast<int64_t>(2 * i + 1));
  }
  Release(&entries);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, RemovalsCannotFailForLackOfMemory) {
  // erase, pop and clear list no MemoryError.
  struct {
    const char* name;
    std::function<int(ffk_dict*, int)> op;
  } ops[] = {
      {"erase", [](ffk_dict* d, int i) {
         ffk_any k = ffk_any_int(i);
         return ffk_dict_erase(d, &k) == 1 ? 0 : -1;
       }},
      {"pop", [](ffk_dict* d, int i) {
         ffk_any k = ffk_any_int(i), out;
         int rc = ffk_dict_pop(d, &k, &out);
         ffk_any_release(&out);
         return rc;
       }},
      {"pop_default", [](ffk_dict* d, int i) {
         ffk_any k = ffk_any_int(i), out, dflt = ffk_any_int(0);
         int rc = ffk_dict_pop_default(d, &k, &dflt, &out);
         ffk_any_release(&out);
         return rc == 1 ? 0 : -1;
       }},
      {"clear", [](ffk_dict* d, int) { return ffk_dict_clear(d); }},
  };
  for (int size : {5, 200}) {
    for (const auto& op : ops) {
      SCOPED_TRACE(std::string(op.name) + " size " + std::to_string(size));
      ffk_dict* d = ffk_dict_new();
      for (int i = 0; i < size; ++i) {
        ffk_any s;
        ASSERT_EQ(ffk_any_cstr(("string value number " + std::to_string(i)).c_str(), &s), 0);
        ASSERT_EQ(Set(d, ffk_any_int(i), s), 0);
        ffk_any_release(&s);
      }
      for (int n = 1; n <= 3; ++n) {
        ffk_debug_fail_allocation(n);
        EXPECT_EQ(op.op(d, n), 0) << FetchError();
        ffk_debug_fail_allocation(0);
      }
      ffk_object_release(Obj(d));
    }
  }
}

// Every operation that may allocate, failed at each allocation in turn: a MemoryError,
// nothing leaked, and the Dict exactly as before (entries and order).
TEST_F(Dict, OperationsFailCleanlyAtEveryAllocation) {
  ffk_any raw_key = ffk_any_raw_str("a raw key long enough to become a String");
  ffk_any raw_val = ffk_any_raw_str("a raw value long enough to become a String");
  ffk_map* m = ffk_map_new();
  ASSERT_EQ(MapSet(&m, raw_key, raw_val), 0);
  ASSERT_EQ(MapSet(&m, ffk_any_int(2), raw_val), 0);
  ASSERT_EQ(MapSet(&m, ffk_any_int(1000), ffk_any_int(1)), 0);
  ffk_dict* other = ffk_dict_from_map(m);
  ASSERT_NE(other, nullptr);
  struct Op {
    const char* name;
    std::function<int(ffk_dict*)> run;
  } ops[] = {
      {"set new", [&](ffk_dict* d) { return ffk_dict_set(d, &raw_key, &raw_val); }},
      {"set existing", [&](ffk_dict* d) { return Set(d, ffk_any_int(2), raw_val); }},
      {"setdefault new", [&](ffk_dict* d) {
         ffk_any out;
         int rc = ffk_dict_setdefault(d, &raw_key, &raw_val, &out);
         ffk_any_release(&out);
         return rc < 0 ? -1 : 0;
       }},
      {"setdefault existing", [&](ffk_dict* d) {
         ffk_any k = ffk_any_int(1), out;
         int rc = ffk_dict_setdefault(d, &k, &raw_val, &out);
         ffk_any_release(&out);
         return rc < 0 ? -1 : 0;
       }},
      {"update from a Map", [&](ffk_dict* d) { return ffk_dict_update(d, Obj(m)); }},
      {"update from a Dict", [&](ffk_dict* d) { return ffk_dict_update(d, Obj(other)); }},
      {"update from itself", [&](ffk_dict* d) { return ffk_dict_update(d, Obj(d)); }},
      {"pop_default missing", [&](ffk_dict* d) {
         ffk_any k = ffk_any_int(-1), out;
         int rc = ffk_dict_pop_default(d, &k, &raw_val, &out);
         ffk_any_release(&out);
         return rc < 0 ? -1 : 0;
       }},
      {"pop", [&](ffk_dict* d) {
         ffk_any k = ffk_any_int(1), out;
         int rc = ffk_dict_pop(d, &k, &out);
         ffk_any_release(&out);
         if (rc != 0 && ffk_error_matches(FFK_ERR_KEY)) {
           ffk_error_clear();
           return 0;
         }
         return rc;
       }},
      {"erase", [&](ffk_dict* d) {
         ffk_any k = ffk_any_int(1);
         return ffk_dict_erase(d, &k) < 0 ? -1 : 0;
       }},
      {"clear", [&](ffk_dict* d) { return ffk_dict_clear(d); }},
  };
  for (int size : {0, 3, 8, 9, 20, 100}) {
    for (const auto& op : ops) {
      SCOPED_TRACE(std::string(op.name) + " on a Dict of " + std::to_string(size));
      ffk_dict* d = ffk_dict_new();
      ASSERT_NE(d, nullptr);
      for (int i = 0; i < size; ++i) {
        ASSERT_EQ(Set(d, ffk_any_int(i), i % 2 ? raw_val : ffk_any_int(i)), 0);
      }
      std::vector<std::pair<ffk_any, ffk_any>> before = Entries(d);
      ffk::test::SweepAllocationFailures(
          [&] {
            if (op.run(d) != 0) return false;
            Release(&before);  // a success that absorbed the failure changed the Dict
            before = Entries(d);
            return true;
          },
          [&] {
            std::vector<std::pair<ffk_any, ffk_any>> now = Entries(d);
            EXPECT_EQ(now.size(), before.size());
            for (size_t i = 0; i < now.size() && i < before.size(); ++i) {
              EXPECT_TRUE(ffk_any_equal(&now[i].first, &before[i].first)) << "key " << i;
              EXPECT_TRUE(ffk_any_equal(&now[i].second, &before[i].second)) << "value " << i;
            }
            EXPECT_EQ(ffk_dict_size(d), static_cast<int64_t>(before.size()));
            Release(&now);
          });
      Release(&before);
      ffk_object_release(Obj(d));
    }
  }
  ffk_any keys[3] = {raw_key, ffk_any_int(1), raw_key};
  ffk_any vals[3] = {raw_val, raw_val, ffk_any_int(3)};
  ffk_dict* big = ffk_dict_new();
  for (int i = 0; i < 30; ++i) ASSERT_EQ(Set(big, ffk_any_int(i), raw_val), 0);
  struct Ctor {
    const char* name;
    std::function<ffk_object*()> make;
  } ctors[] = {
      {"new", [] { return Obj(ffk_dict_new()); }},
      {"from_pairs", [&] { return Obj(ffk_dict_from_pairs(keys, vals, 3)); }},
      {"from_map", [&] { return Obj(ffk_dict_from_map(m)); }},
      {"to_map", [&] { return Obj(ffk_dict_to_map(big)); }},
      {"keys", [&] { return Obj(ffk_dict_keys(big)); }},
      {"values", [&] { return Obj(ffk_dict_values(big)); }},
      {"items", [&] { return Obj(ffk_dict_items(big)); }},
  };
  for (const auto& c : ctors) {
    SCOPED_TRACE(c.name);
    ffk::test::SweepAllocationFailures([&] {
      ffk_object* o = c.make();
      if (o == nullptr) return false;
      ffk_object_release(o);
      return true;
    });
  }
  EXPECT_EQ(ffk_dict_size(big), 30);
  ffk_object_release(Obj(big));
  ffk_object_release(Obj(other));
  ffk_object_release(Obj(m));
}

// Model keys: 0..999 are ints, 1000..1249 short strs "s<k>" (inline), 1250..1499 long
// strs (String objects), so int, SmallStr and String keys all take part.
std::string KeyText(int64_t k) {
  return k < 1250 ? "s" + std::to_string(k) : "a long string key, number " + std::to_string(k);
}

int64_t KeyOf(const ffk_any& key) {
  if (key.type_index == FFK_TYPE_INT) return key.v_int;
  const char* data;
  size_t size;
  if (ffk_any_as_str(&key, &data, &size) != 0) {
    ADD_FAILURE() << "unexpected key " << Repr(key) << ": " << FetchError();
    return -1;
  }
  std::string s(data, size);
  return std::stoll(s.substr(s.find_first_of("0123456789")));
}

// 100,000 random operations against an insertion-ordered model; the seed is printed.
TEST_F(Dict, RandomOperationsMatchAnOrderedModel) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int64_t, int64_t>> model;  // insertion order
  auto find = [&](int64_t k) {
    return std::find_if(model.begin(), model.end(), [&](const auto& e) { return e.first == k; });
  };
  auto model_set = [&](int64_t k, int64_t v) {
    auto it = find(k);
    if (it != model.end()) {
      it->second = v;
    } else {
      model.emplace_back(k, v);
    }
  };
  ffk_dict* d = ffk_dict_new();
  ffk_dict* alias = d;
  ffk_object_retain(Obj(alias));
  std::string text;
  auto key_any = [&](int64_t k) {
    if (k < 1000) return ffk_any_int(k);
    text = KeyText(k);
    return ffk_any_raw_str(text.c_str());
  };
  for (int step = 0; step < 100000; ++step) {
    int64_t k = static_cast<int64_t>(rng() % 1500), v = static_cast<int64_t>(rng() % 1000000);
    ffk_any key = key_any(k), val = ffk_any_int(v);
    auto it = find(k);
    bool present = it != model.end();
    int op = static_cast<int>(rng() % 11);
    switch (op) {
      case 0:
      case 1:
        ASSERT_EQ(ffk_dict_set(d, &key, &val), 0);
        model_set(k, v);
        break;
      case 2:
        ASSERT_EQ(ffk_dict_erase(alias, &key), present ? 1 : 0);
        if (present) model.erase(it);
        break;
      case 3: {
        ffk_any out;
        ASSERT_EQ(ffk_dict_get(d, &key, &out), present ? 1 : 0);
        if (present) {
          ASSERT_EQ(out.v_int, it->second);
        } else {
          ASSERT_EQ(out.type_index, FFK_TYPE_NONE);
        }
        break;
      }
      case 4: {
        ffk_any out;
        if (present) {
          ASSERT_EQ(ffk_dict_pop(d, &key, &out), 0);
          ASSERT_EQ(out.v_int, it->second);
          model.erase(it);
        } else {
          ASSERT_EQ(ffk_dict_pop(d, &key, &out), -1);
          ASSERT_EQ(FetchError().rfind("KeyError: ", 0), 0u);
        }
        break;
      }
      case 5: {
        ffk_any out, dflt = ffk_any_int(-1);
        ASSERT_EQ(ffk_dict_pop_default(alias, &key, &dflt, &out), present ? 1 : 0);
        ASSERT_EQ(out.v_int, present ? it->second : -1);
        if (present) model.erase(it);
        break;
      }
      case 6: {
        ffk_any out;
        ASSERT_EQ(ffk_dict_setdefault(d, &key, &val, &out), present ? 1 : 0);
        ASSERT_EQ(out.v_int, present ? it->second : v);
        if (!present) model.emplace_back(k, v);
        break;
      }
      case 7:
        ASSERT_EQ(ffk_dict_contains(d, &key), present);
        break;
      case 8:
        if (rng() % 10 == 0) {  // update from a small Map: its order, later duplicates in place
          ffk_map* m = ffk_map_new();
          std::vector<std::string> texts(3);
          for (int j = 0; j < 3; ++j) {
            int64_t mk = static_cast<int64_t>(rng() % 1500), mv = static_cast<int64_t>(rng() % 1000000);
            ffk_any mkey = mk < 1000 ? ffk_any_int(mk) : (texts[j] = KeyText(mk), ffk_any_raw_str(texts[j].c_str()));
            ASSERT_EQ(MapSet(&m, mkey, ffk_any_int(mv)), 0);
          }
          std::vector<std::pair<int64_t, int64_t>> entries;
          int64_t pos = 0;
          const ffk_any *pk, *pv;
          while (ffk_map_next(m, &pos, &pk, &pv)) entries.emplace_back(KeyOf(*pk), pv->v_int);
          ASSERT_EQ(ffk_dict_update(d, Obj(m)), 0);
          ffk_object_release(Obj(m));
          for (const auto& e : entries) model_set(e.first, e.second);
        } else if (rng() % 10 == 0) {
          ASSERT_EQ(ffk_dict_update(d, Obj(alias)), 0);  // from itself: no change
        }
        break;
      case 9:
        if (rng() % 500 == 0) {
          ASSERT_EQ(ffk_dict_clear(alias), 0);
          model.clear();
        }
        break;
      case 10:
        if (rng() % 100 == 0) {  // iterate and compare the order
          std::vector<std::pair<ffk_any, ffk_any>> entries = Entries(d);
          std::vector<std::pair<int64_t, int64_t>> seen;
          for (const auto& e : entries) seen.emplace_back(KeyOf(e.first), e.second.v_int);
          Release(&entries);
          ASSERT_EQ(seen, model) << "step " << step;
        }
        break;
    }
    ASSERT_EQ(ffk_dict_size(d), static_cast<int64_t>(model.size())) << "step " << step << " op " << op;
  }
  std::vector<std::pair<ffk_any, ffk_any>> entries = Entries(d);
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (const auto& e : entries) seen.emplace_back(KeyOf(e.first), e.second.v_int);
  Release(&entries);
  EXPECT_EQ(seen, model);
  ffk_map* snap = ffk_dict_to_map(d);
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(ffk_map_size(snap), static_cast<int64_t>(model.size()));
  ffk_object_release(Obj(snap));
  ffk_object_release(Obj(alias));
  ffk_object_release(Obj(d));
}

// Threads sharing Dicts: sets from several threads all land; iteration during them
// either works or reports the change; two threads updating two Dicts from each other
// (lock order) finish.
// Readers by bytes race writers that grow the table, erase and clear: a found value is
// always the one stored with its key (no torn entry, no freed storage under TSan/ASan).
TEST_F(Dict, LookupsByBytesRaceGrowingErasingAndClearing) {
  ffk_dict* d = ffk_dict_new();
  std::atomic<bool> done{false};
  auto key_of = [](int i) { return "a str key number " + std::to_string(i); };
  std::thread writer([&] {
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 300; ++i) {
        std::string k = key_of(i);
        ffk_any key, val = ffk_any_int(i);
        if (ffk_any_str(k.data(), k.size(), &key) != 0 || ffk_dict_set(d, &key, &val) != 0) {
          ADD_FAILURE() << FetchError();
          return;
        }
        ffk_any_release(&key);
        if (i % 3 == 0) {
          ffk_any raw = ffk_any_raw_str(k.c_str());
          ffk_dict_erase(d, &raw);
        }
      }
      ffk_dict_clear(d);
    }
    done = true;
  });
  std::thread reader([&] {
    while (!done.load()) {
      for (int i = 0; i < 300; i += 7) {
        std::string k = key_of(i);
        ffk_any v;
        int rc = ffk_dict_get_str(d, k.data(), k.size(), &v);
        if (rc < 0) ADD_FAILURE() << FetchError();
        if (rc == 1 && v.v_int != i) ADD_FAILURE() << "a torn entry for " << k;
        ffk_any_release(&v);
        if (ffk_dict_contains_str(d, k.data(), k.size()) < 0) ADD_FAILURE() << FetchError();
      }
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(ffk_dict_size(d), 0);
  ffk_object_release(Obj(d));
}

TEST_F(Dict, ThreadsShareADictSafely) {
  constexpr int kThreads = 4, kPer = 2000;
  ffk_dict* d = ffk_dict_new();
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([d, t] {
      for (int i = 0; i < kPer; ++i) {
        ffk_any k = ffk_any_int(t * kPer + i);
        if (ffk_dict_set(d, &k, &k) != 0) {
          ADD_FAILURE() << FetchError();
          return;
        }
        if (i % 2 == 1) {  // erase every other key again, so the table also shrinks and reuses
          ffk_any prev = ffk_any_int(t * kPer + i - 1);
          if (ffk_dict_erase(d, &prev) != 1) {
            ADD_FAILURE() << "erase " << prev.v_int << ": " << FetchError();
            return;
          }
        }
      }
    });
  }
  std::thread reader([d, &done] {
    while (!done.load()) {
      ffk_dict_iter it;
      ffk_dict_iter_init(&it, d);
      ffk_any k, v;
      int rc;
      while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) {
        if (!ffk_any_equal(&k, &v)) ADD_FAILURE() << "a torn entry";
      }
      if (rc == -1) {
        std::string e = FetchError();
        if (e != "RuntimeError: Dict changed during iteration") ADD_FAILURE() << e;
      }
      ffk_map* snap = ffk_dict_to_map(d);
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
  EXPECT_EQ(ffk_dict_size(d), kThreads * kPer / 2);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 1; i < kPer; i += 2) {
      ffk_any k = ffk_any_int(t * kPer + i);
      ASSERT_TRUE(ffk_dict_contains(d, &k)) << k.v_int;
    }
  }
  ffk_object_release(Obj(d));

  ffk_dict* a = ffk_dict_new();
  ffk_dict* b = ffk_dict_new();
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(Set(a, ffk_any_int(i), ffk_any_int(i)), 0);
    ASSERT_EQ(Set(b, ffk_any_int(i + 5), ffk_any_int(i)), 0);
  }
  auto updater = [](ffk_dict* dst, ffk_dict* src) {
    for (int i = 0; i < 2000; ++i) {
      if (ffk_dict_update(dst, Obj(src)) != 0) {
        ADD_FAILURE() << FetchError();
        return;
      }
    }
  };
  std::thread t1(updater, a, b), t2(updater, b, a);
  t1.join();
  t2.join();
  EXPECT_EQ(ffk_dict_size(a), 15);
  EXPECT_EQ(ffk_dict_size(b), 15);
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
}

}  // namespace
