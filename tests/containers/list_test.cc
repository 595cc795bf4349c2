// ffikit/list.h: shared (not copy-on-write) semantics, every operation with Python's
// index and slice rules, error messages, views, repr with cycles, iterators that notice
// changes, deleters that re-enter the List, a random model check against std::vector,
// allocation failures (the threads are in
// list_threads_test.cc).
#include <ffikit/ffikit.h>
#include <ffikit/list.h>
#include <ffikit/unstable/list.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/containers/list_test_support.h"
#include "tests/support/ffk_test.h"

namespace {

using namespace list_test;  // NOLINT: the shared List helpers
class List : public ffk::test::Test {};

// ---------------------------------------------------------------------------------

TEST_F(List, NewWithCapacityAndRepr) {
  ffk_list* e = ffk_list_new();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(ffk_list_size(e), 0);
  EXPECT_EQ(R(e), "[]");
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_LIST), 1);
  EXPECT_EQ(Obj(e)->type_index, FFK_TYPE_LIST);
  ffk_list* c = ffk_list_with_capacity(100);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ffk_list_size(c), 0);
  ffk_any items[3] = {ffk_any_int(1), ffk_any_int(2), ffk_any_raw_str("a")};
  ffk_list* l = ffk_list_from_items(items, 3);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(R(l), "[1, 2, \"a\"]");
  ffk_list* one = Ints({7});
  EXPECT_EQ(R(one), "[7]") << "no trailing comma: that is a Tuple's";
  EXPECT_EQ(ffk_list_with_capacity(-1), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"-1"}));
  for (ffk_list* x : {e, c, l, one}) ffk_object_release(Obj(x));
}

TEST_F(List, TwoHandlesShareOneObject) {
  ffk_list* a = Ints({1, 2, 3});
  ffk_list* b = a;
  ffk_object_retain(Obj(b));
  EXPECT_EQ(ffk_object_use_count(Obj(a)), 2u);
  ffk_any v = ffk_any_int(4);
  ASSERT_EQ(ffk_list_append(a, &v), 0);
  EXPECT_EQ(a, b) << "mutators never replace the handle";
  EXPECT_EQ(Values(b), std::vector<int64_t>({1, 2, 3, 4})) << "a change through one handle is seen through the other";
  v = ffk_any_int(20);
  ASSERT_EQ(ffk_list_set(b, 1, &v), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 20, 3, 4}));
  ASSERT_EQ(ffk_list_insert(b, 0, &v), 0);
  OwnedAny out;
  ASSERT_EQ(ffk_list_pop(a, -1, &out.v), 0);
  ASSERT_EQ(ffk_list_reverse(b), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({3, 20, 1, 20}));
  EXPECT_EQ(ffk_object_use_count(Obj(a)), 2u) << "mutation neither copies nor changes the use count";
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_LIST), 1) << "no copy was made";
  ASSERT_EQ(ffk_list_clear(a), 0);
  EXPECT_EQ(ffk_list_size(b), 0);
  ffk_object_release(Obj(a));
  EXPECT_EQ(ffk_object_use_count(Obj(b)), 1u);
  ffk_object_release(Obj(b));
}

TEST_F(List, GetReturnsNewReferenceAndNamesBadIndex) {
  ffk_string* s = ffk_string_new("an element string object", 25);
  ffk_any items[3] = {ffk_any_int(10), ffk_any_object_steal(&s->header), ffk_any_int(30)};
  ffk_list* l = ffk_list_from_items(items, 3);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  OwnedAny v;
  ASSERT_EQ(ffk_list_get(l, 1, &v.v), 0);
  EXPECT_EQ(v.v.v_obj, &s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 3u) << "get returns a new reference";
  ffk_any_release(&v.v);
  ASSERT_EQ(ffk_list_get(l, -1, &v.v), 0);
  EXPECT_EQ(v.v.v_int, 30);
  ASSERT_EQ(ffk_list_get(l, -3, &v.v), 0);
  EXPECT_EQ(v.v.v_int, 10);
  EXPECT_EQ(ffk_list_get(l, 7, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "IndexError: List index 7 out of range for size 3");
  EXPECT_EQ(ffk_list_get(l, -4, &v.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: List index -4 out of range for size 3");
  EXPECT_EQ(ffk_list_get(l, INT64_MIN, &v.v), -1);
  EXPECT_TRUE(PendingError("IndexError", {std::to_string(INT64_MIN)}));
  ffk_object_release(Obj(l));
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
  ffk_any_release(&items[1]);
}

TEST_F(List, SetReplacesReleasesOldAndNamesBadIndex) {
  ffk_string* s = ffk_string_new("the value that gets replaced", 28);
  ffk_any sv = ffk_any_object_steal(&s->header);
  ffk_list* l = Ints({1, 2, 3});
  ASSERT_EQ(ffk_list_set(l, -2, &sv), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  ffk_any v = ffk_any_int(22);
  ASSERT_EQ(ffk_list_set(l, 1, &v), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "the replaced value is released";
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 22, 3}));
  EXPECT_EQ(ffk_list_set(l, 3, &v), -1);
  EXPECT_TRUE(PendingError("IndexError", {"3", "size 3"}));
  EXPECT_EQ(ffk_list_set(l, -4, &v), -1);
  EXPECT_TRUE(PendingError("IndexError", {"-4", "size 3"}));
  ffk_any t = TensorView();
  EXPECT_EQ(ffk_list_set(l, 0, &t), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 22, 3}));
  ffk_any_release(&sv);
  ffk_object_release(Obj(l));
}

TEST_F(List, AppendGrowsAndAppendStealTakesOwnership) {
  ffk_list* l = ffk_list_new();
  std::vector<int64_t> want;
  for (int i = 0; i < 1000; ++i) {
    ffk_any v = ffk_any_int(i);
    ASSERT_EQ(ffk_list_append(l, &v), 0);
    want.push_back(i);
  }
  EXPECT_EQ(Values(l), want);
  ASSERT_EQ(ffk_list_clear(l), 0);

  ffk_any s;
  ASSERT_EQ(ffk_any_cstr("a stolen long string", &s), 0);
  ffk_object* obj = s.v_obj;
  ASSERT_EQ(ffk_list_append_steal(l, &s), 0);
  EXPECT_EQ(s.type_index, FFK_TYPE_NONE) << "the caller's value was taken";
  EXPECT_EQ(ffk_object_use_count(obj), 1u) << "the List holds the only reference";
  ffk_any i = ffk_any_int(5);
  ASSERT_EQ(ffk_list_append_steal(l, &i), 0);
  EXPECT_EQ(ffk_list_size(l), 2);

  ffk_any t = TensorView();
  EXPECT_EQ(ffk_list_append_steal(l, &t), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  EXPECT_EQ(ffk_list_size(l), 2);

  // Stolen even on failure: the String must not leak (TearDown counts live objects).
  ffk_any lost;
  ASSERT_EQ(ffk_any_cstr("a value given to a NULL List", &lost), 0);
  EXPECT_EQ(ffk_list_append_steal(nullptr, &lost), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 1) << "only the List's element is alive";
  ffk_object_release(Obj(l));
}

TEST_F(List, InsertClampsLikePython) {
  struct {
    int64_t index;
    std::vector<int64_t> want;  // after inserting 9 into [0, 1, 2]
  } cases[] = {
      {0, {9, 0, 1, 2}},        {1, {0, 9, 1, 2}},        {3, {0, 1, 2, 9}},
      {100, {0, 1, 2, 9}},      {-1, {0, 1, 9, 2}},       {-3, {9, 0, 1, 2}},
      {-100, {9, 0, 1, 2}},     {INT64_MAX, {0, 1, 2, 9}}, {INT64_MIN, {9, 0, 1, 2}},
  };
  for (const auto& c : cases) {
    ffk_list* l = Ints({0, 1, 2});
    ffk_any v = ffk_any_int(9);
    ASSERT_EQ(ffk_list_insert(l, c.index, &v), 0) << FetchError();
    EXPECT_EQ(Values(l), c.want) << "insert at " << c.index;
    ffk_object_release(Obj(l));
  }
  ffk_list* e = ffk_list_new();
  ffk_any v = ffk_any_int(1);
  ASSERT_EQ(ffk_list_insert(e, -5, &v), 0);
  ASSERT_EQ(ffk_list_insert(e, 5, &v), 0);
  EXPECT_EQ(Values(e), std::vector<int64_t>({1, 1}));
  ffk_any t = TensorView();
  EXPECT_EQ(ffk_list_insert(e, 0, &t), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_list_size(e), 2);
  ffk_object_release(Obj(e));
}

TEST_F(List, PopMovesTheElementOutAndNamesBadIndex) {
  ffk_string* s = ffk_string_new("a popped string object", 22);
  ffk_any items[4] = {ffk_any_int(0), ffk_any_object_steal(&s->header), ffk_any_int(2), ffk_any_int(3)};
  ffk_list* l = ffk_list_from_items(items, 4);
  ffk_any_release(&items[1]);
  OwnedAny out;
  ASSERT_EQ(ffk_list_pop(l, -1, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 3) << "-1 is the last";
  ASSERT_EQ(ffk_list_pop(l, 1, &out.v), 0);
  EXPECT_EQ(out.v.v_obj, &s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "moved, not copied: the caller owns the only reference";
  ffk_any_release(&out.v);
  EXPECT_EQ(Values(l), std::vector<int64_t>({0, 2}));
  EXPECT_EQ(ffk_list_pop(l, 5, &out.v), -1);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "IndexError: List index 5 out of range for size 2");
  EXPECT_EQ(ffk_list_pop(l, -3, &out.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: List index -3 out of range for size 2");
  ASSERT_EQ(ffk_list_pop(l, -2, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 0);
  ASSERT_EQ(ffk_list_pop(l, 0, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 2);
  EXPECT_EQ(ffk_list_pop(l, -1, &out.v), -1);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "IndexError: pop from empty List");
  EXPECT_EQ(ffk_list_pop(l, 0, &out.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: pop from empty List");
  ffk_object_release(Obj(l));
}

TEST_F(List, EraseAtAndEraseRange) {
  ffk_list* l = Ints({0, 1, 2, 3, 4, 5});
  ASSERT_EQ(ffk_list_erase_at(l, -1), 0);
  ASSERT_EQ(ffk_list_erase_at(l, 0), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 2, 3, 4}));
  EXPECT_EQ(ffk_list_erase_at(l, 4), -1);
  EXPECT_TRUE(PendingError("IndexError", {"4", "size 4"}));
  EXPECT_EQ(ffk_list_erase_at(l, -5), -1);
  EXPECT_TRUE(PendingError("IndexError", {"-5", "size 4"}));
  ASSERT_EQ(ffk_list_erase(l, 1, 3), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 4}));
  ASSERT_EQ(ffk_list_erase(l, 2, 2), 0) << "an empty range at the end is fine";
  ASSERT_EQ(ffk_list_erase(l, 0, 0), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 4}));
  ffk_object_release(Obj(l));

  l = Ints({0, 1, 2, 3, 4, 5});
  EXPECT_EQ(ffk_list_erase(l, 4, 9), -1);
  EXPECT_TRUE(PendingError("IndexError", {"4", "9", "6"})) << "names the range and the size";
  EXPECT_EQ(ffk_list_erase(l, 5, 3), -1);
  EXPECT_TRUE(PendingError("IndexError", {"5", "3", "6"}));
  EXPECT_EQ(ffk_list_erase(l, -1, 2), -1) << "erase takes no negative bounds";
  EXPECT_TRUE(PendingError("IndexError", {"-1", "2", "6"}));
  EXPECT_EQ(ffk_list_erase(l, 0, INT64_MAX), -1);
  EXPECT_TRUE(PendingError("IndexError"));
  EXPECT_EQ(Values(l), std::vector<int64_t>({0, 1, 2, 3, 4, 5})) << "a failed erase changes nothing";
  ASSERT_EQ(ffk_list_erase(l, 0, 6), 0);
  EXPECT_EQ(ffk_list_size(l), 0);
  ffk_object_release(Obj(l));

  // A range longer than 64 elements, holding objects: all released.
  ffk_list* big = ffk_list_new();
  for (int i = 0; i < 150; ++i) {
    ffk_any s;
    ASSERT_EQ(ffk_any_cstr(("a string object number " + std::to_string(i)).c_str(), &s), 0);
    ASSERT_EQ(ffk_list_append_steal(big, &s), 0);
  }
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 150);
  ASSERT_EQ(ffk_list_erase(big, 20, 120), 0);
  EXPECT_EQ(ffk_list_size(big), 50);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 50);
  OwnedAny v;
  ASSERT_EQ(ffk_list_get(big, 20, &v.v), 0);
  EXPECT_EQ(Repr(v.v), "\"a string object number 120\"");
  ffk_object_release(Obj(big));
}

// l[start:stop] = items, compared with what Python does on [0, 1, 2, 3, 4].
TEST_F(List, SetSliceFollowsPythonSliceAssignment) {
  struct {
    int64_t start, stop;
    std::vector<int64_t> items, want;
  } cases[] = {
      {1, 3, {10, 11, 12}, {0, 10, 11, 12, 3, 4}},
      {0, 0, {9}, {9, 0, 1, 2, 3, 4}},
      {5, 5, {9}, {0, 1, 2, 3, 4, 9}},
      {100, 200, {9}, {0, 1, 2, 3, 4, 9}},
      {-2, INT64_MAX, {}, {0, 1, 2}},
      {-100, 2, {7}, {7, 2, 3, 4}},
      {3, 1, {8, 8}, {0, 1, 2, 8, 8, 3, 4}},
      {-1, -3, {8}, {0, 1, 2, 3, 8, 4}},
      {INT64_MIN, INT64_MAX, {}, {}},
      {2, 2, {}, {0, 1, 2, 3, 4}},
      {0, 5, {1}, {1}},
      {-3, -1, {5, 6, 7, 8}, {0, 1, 5, 6, 7, 8, 4}},
      {4, -100, {6}, {0, 1, 2, 3, 6, 4}},
      {INT64_MAX, INT64_MIN, {1, 2}, {0, 1, 2, 3, 4, 1, 2}},
      {-5, -4, {}, {1, 2, 3, 4}},
      {-6, 1, {}, {1, 2, 3, 4}},
  };
  for (const auto& c : cases) {
    ffk_list* l = Ints({0, 1, 2, 3, 4});
    std::vector<ffk_any> items;
    for (int64_t x : c.items) items.push_back(ffk_any_int(x));
    ASSERT_EQ(ffk_list_set_slice(l, c.start, c.stop, items.data(), static_cast<int64_t>(items.size())), 0)
        << FetchError();
    EXPECT_EQ(Values(l), c.want) << "l[" << c.start << ":" << c.stop << "] = " << ::testing::PrintToString(c.items);
    ffk_object_release(Obj(l));
  }
}

TEST_F(List, SetSliceCopiesViewsAndFailsWithoutChanging) {
  ffk_list* l = Ints({0, 1, 2});
  ffk_any items[2] = {ffk_any_raw_str("a raw string view to copy"), ffk_any_int(5)};
  ASSERT_EQ(ffk_list_set_slice(l, 1, 2, items, 2), 0);
  EXPECT_EQ(R(l), "[0, \"a raw string view to copy\", 5, 2]");
  OwnedAny v;
  ASSERT_EQ(ffk_list_get(l, 1, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING) << "a view becomes an owned String";
  ffk_any bad[3] = {ffk_any_int(1), ffk_any_int(2), TensorView()};
  std::string before = R(l);
  EXPECT_EQ(ffk_list_set_slice(l, 0, 4, bad, 3), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(R(l), before) << "all or nothing";
  EXPECT_EQ(ffk_list_set_slice(l, 0, 1, nullptr, 2), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_set_slice(l, 0, 1, items, -1), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(R(l), before);
  ASSERT_EQ(ffk_list_set_slice(l, 0, 1, nullptr, 0), 0) << "no items may be NULL";
  EXPECT_EQ(ffk_list_size(l), 3);
  ffk_object_release(Obj(l));
}

TEST_F(List, SetSliceFromArrayTupleListAndItself) {
  ffk_list* l = Ints({0, 1, 2, 3, 4});
  ffk_array* arr = IntArray({7, 8});
  ASSERT_EQ(ffk_list_set_slice_from(l, 1, 3, Obj(arr)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({0, 7, 8, 3, 4}));
  ffk_tuple* tup = ffk_tuple_pack(1, ffk_any_int(9));
  ASSERT_EQ(ffk_list_set_slice_from(l, 0, 0, Obj(tup)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({9, 0, 7, 8, 3, 4}));
  ffk_list* other = Ints({5, 6, 7});
  ASSERT_EQ(ffk_list_set_slice_from(l, -1, INT64_MAX, Obj(other)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({9, 0, 7, 8, 3, 5, 6, 7}));
  EXPECT_EQ(Values(other), std::vector<int64_t>({5, 6, 7})) << "the source is only read";
  ffk_object_release(Obj(l));

  struct {
    int64_t start, stop;
    std::vector<int64_t> want;  // Python: l = [0, 1, 2, 3, 4]; l[start:stop] = l
  } self_cases[] = {
      {1, 3, {0, 0, 1, 2, 3, 4, 3, 4}},
      {0, 5, {0, 1, 2, 3, 4}},
      {5, 5, {0, 1, 2, 3, 4, 0, 1, 2, 3, 4}},
      {-2, 1, {0, 1, 2, 0, 1, 2, 3, 4, 3, 4}},
      {0, 0, {0, 1, 2, 3, 4, 0, 1, 2, 3, 4}},
  };
  for (const auto& c : self_cases) {
    ffk_list* s = Ints({0, 1, 2, 3, 4});
    ASSERT_EQ(ffk_list_set_slice_from(s, c.start, c.stop, Obj(s)), 0) << FetchError();
    EXPECT_EQ(Values(s), c.want) << "l[" << c.start << ":" << c.stop << "] = l";
    EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u);
    ffk_object_release(Obj(s));
  }

  l = Ints({1, 2});
  ffk_map* m = ffk_map_new();
  EXPECT_EQ(ffk_list_set_slice_from(l, 0, 1, Obj(m)), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Map"}));
  EXPECT_EQ(ffk_list_set_slice_from(l, 0, 1, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_set_slice_from(nullptr, 0, 1, Obj(arr)), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 2}));
  for (ffk_object* o : {Obj(l), Obj(arr), Obj(tup), Obj(other), Obj(m)}) ffk_object_release(o);
}

TEST_F(List, ExtendAndExtendFrom) {
  ffk_list* l = Ints({1});
  ffk_any items[3] = {ffk_any_int(2), ffk_any_raw_str("three"), ffk_any_float(4.0)};
  ASSERT_EQ(ffk_list_extend(l, items, 3), 0);
  EXPECT_EQ(R(l), "[1, 2, \"three\", 4.0]");
  ASSERT_EQ(ffk_list_extend(l, nullptr, 0), 0);
  EXPECT_EQ(ffk_list_extend(l, nullptr, 2), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_extend(l, items, -1), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_any bad[2] = {ffk_any_int(5), TensorView()};
  EXPECT_EQ(ffk_list_extend(l, bad, 2), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(R(l), "[1, 2, \"three\", 4.0]") << "the List unchanged";
  ffk_object_release(Obj(l));

  l = Ints({1, 2});
  ffk_array* arr = IntArray({3});
  ffk_tuple* tup = ffk_tuple_pack(2, ffk_any_int(4), ffk_any_int(5));
  ffk_list* other = Ints({6});
  ASSERT_EQ(ffk_list_extend_from(l, Obj(arr)), 0);
  ASSERT_EQ(ffk_list_extend_from(l, Obj(tup)), 0);
  ASSERT_EQ(ffk_list_extend_from(l, Obj(other)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(ffk_list_extend_from(l, Obj(l)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6})) << "extending with itself doubles";
  ffk_list* e = ffk_list_new();
  ASSERT_EQ(ffk_list_extend_from(e, Obj(e)), 0);
  EXPECT_EQ(ffk_list_size(e), 0);
  ffk_map* m = ffk_map_new();
  EXPECT_EQ(ffk_list_extend_from(l, Obj(m)), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Map"}));
  EXPECT_EQ(ffk_list_extend_from(l, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"ffk_list_extend_from: the sequence is NULL"}));
  EXPECT_EQ(ffk_list_extend_from(l, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_size(l), 12);
  for (ffk_object* o : {Obj(l), Obj(arr), Obj(tup), Obj(other), Obj(e), Obj(m)}) ffk_object_release(o);
}

TEST_F(List, ClearAndReverse) {
  ffk_string* s = ffk_string_new("an element released by clear", 28);
  ffk_any sv = ffk_any_object_steal(&s->header);
  ffk_list* l = ffk_list_new();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(ffk_list_append(l, &sv), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 11u);
  ASSERT_EQ(ffk_list_clear(l), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
  EXPECT_EQ(ffk_list_size(l), 0);
  ASSERT_EQ(ffk_list_clear(l), 0) << "clearing an empty List is fine";
  ASSERT_EQ(ffk_list_reverse(l), 0);
  EXPECT_EQ(ffk_list_size(l), 0);
  ffk_any v = ffk_any_int(1);
  ASSERT_EQ(ffk_list_append(l, &v), 0) << "a cleared List is usable";
  ASSERT_EQ(ffk_list_reverse(l), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({1}));
  ffk_object_release(Obj(l));
  ffk_any_release(&sv);

  ffk_list* odd = Ints({1, 2, 3, 4, 5});
  ffk_list* even = Ints({1, 2, 3, 4});
  ASSERT_EQ(ffk_list_reverse(odd), 0);
  ASSERT_EQ(ffk_list_reverse(even), 0);
  EXPECT_EQ(Values(odd), std::vector<int64_t>({5, 4, 3, 2, 1}));
  EXPECT_EQ(Values(even), std::vector<int64_t>({4, 3, 2, 1}));
  ffk_object_release(Obj(odd));
  ffk_object_release(Obj(even));
}

TEST_F(List, IndexAndContainsUseKeySemantics) {
  ffk_any items[5] = {ffk_any_int(1), ffk_any_bool(true), ffk_any_float(1.0), ffk_any_raw_str("a long string value"),
                      ffk_any_int(1)};
  ffk_list* l = ffk_list_from_items(items, 5);
  ASSERT_NE(l, nullptr);
  int64_t at = -1;
  ffk_any one = ffk_any_int(1), t = ffk_any_bool(true), f = ffk_any_float(1.0), two = ffk_any_int(2);
  EXPECT_EQ(ffk_list_index(l, &one, &at), 1);
  EXPECT_EQ(at, 0) << "the first match";
  EXPECT_EQ(ffk_list_index(l, &t, &at), 1);
  EXPECT_EQ(at, 1) << "True is not 1";
  EXPECT_EQ(ffk_list_index(l, &f, &at), 1);
  EXPECT_EQ(at, 2) << "1.0 is not 1";
  ffk_string* s = ffk_string_new("a long string value", 19);
  ffk_any sv = ffk_any_object_steal(&s->header);
  EXPECT_EQ(ffk_list_index(l, &sv, &at), 1);
  EXPECT_EQ(at, 3) << "strings match by content";
  ffk_any_release(&sv);
  at = 42;
  EXPECT_EQ(ffk_list_index(l, &two, &at), 0);
  EXPECT_EQ(ffk_list_index(l, &t, nullptr), 1) << "out may be NULL";
  EXPECT_TRUE(ffk_list_contains(l, &f));
  EXPECT_FALSE(ffk_list_contains(l, &two));
  ffk_any bytes;
  ASSERT_EQ(ffk_any_bytes("a long string value", 19, &bytes), 0);
  EXPECT_FALSE(ffk_list_contains(l, &bytes)) << "bytes never equal str";
  ffk_any_release(&bytes);
  EXPECT_EQ(ffk_list_index(nullptr, &one, &at), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_FALSE(ffk_list_contains(nullptr, &one));
  ffk_error_clear();  // whether contains(NULL) leaves an error is not specified
  ffk_object_release(Obj(l));
}

// ffk_list_find: ffk_array_find on the List as it is (leaf values scanned under the lock,
// containers walked on a snapshot), with Python's bounds.
TEST_F(List, FindComparesStructurallyWithPythonBounds) {
  ffk_array* inner = IntArray({1, 2});
  ffk_any big;
  ASSERT_EQ(ffk_any_cstr("a string long enough to be an object", &big), 0);
  ffk_any items[5] = {ffk_any_int(1), ffk_any_bool(true), big, ffk_any_object(Obj(inner)), ffk_any_int(1)};
  ffk_list* l = ffk_list_from_items(items, 5);
  ffk_any_release(&items[3]);  // ffk_any_object's reference: the List holds its own
  ASSERT_NE(l, nullptr);
  int64_t at = -1;
  ffk_any one = ffk_any_int(1), t = ffk_any_bool(true), view = ffk_any_raw_str("a string long enough to be an object");
  EXPECT_EQ(ffk_list_find(l, &one, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 0);
  EXPECT_EQ(ffk_list_find(l, &t, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 1) << "True is not 1";
  EXPECT_EQ(ffk_list_find(l, &view, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 2);
  ffk_array* equal_inner = IntArray({1, 2});
  OwnedAny needle(ffk_any_object_steal(Obj(equal_inner)));
  EXPECT_EQ(ffk_list_find(l, &needle.v, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 3) << "a container is found structurally";
  EXPECT_EQ(ffk_list_find(l, &needle.v, 4, INT64_MAX, &at), 0) << "the walk honours the bounds";
  EXPECT_EQ(ffk_list_find(l, &one, -2, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 4);
  EXPECT_EQ(ffk_list_find(l, &one, 1, 4, &at), 0);
  EXPECT_EQ(ffk_list_find(l, &one, 0, INT64_MAX, nullptr), 1);
  EXPECT_EQ(ffk_list_find(nullptr, &one, 0, INT64_MAX, &at), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_find(l, nullptr, 0, INT64_MAX, &at), -1);
  EXPECT_TRUE(PendingError("ValueError", {"value"}));
  ffk_any_release(&big);
  ffk_object_release(Obj(inner));
  ffk_object_release(Obj(l));
}

// ffk_list_from_items_steal moves owned values in (no retain, sources reset to None) and
// refuses a view by position, releasing everything it was given.
TEST_F(List, FromItemsStealMovesValuesAndRefusesViews) {
  ffk_string* s = ffk_string_new("a string long enough to be an object", 36);
  ffk_any items[3] = {ffk_any_int(7), ffk_any_object(&s->header), ffk_any_float(2.5)};
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  ffk_list* l = ffk_list_from_items_steal(items, 3);
  ASSERT_NE(l, nullptr) << FetchError();
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u) << "moved, not retained";
  for (const ffk_any& x : items) EXPECT_EQ(x.type_index, FFK_TYPE_NONE) << "sources reset to None";
  EXPECT_EQ(ffk_list_size(l), 3);
  ffk_object_release(Obj(l));
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
  ffk_any bad[3] = {ffk_any_object(&s->header), ffk_any_raw_str("a view"), ffk_any_object(&s->header)};
  EXPECT_EQ(ffk_list_from_items_steal(bad, 3), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"item 1", "view"}));
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "both stolen references released on failure";
  for (const ffk_any& x : bad) EXPECT_EQ(x.type_index, FFK_TYPE_NONE);
  ffk_list* empty = ffk_list_from_items_steal(nullptr, 0);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(ffk_list_size(empty), 0);
  ffk_object_release(Obj(empty));
  EXPECT_EQ(ffk_list_from_items_steal(nullptr, 2), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"2 items"}));
  ffk_object_release(&s->header);
}

// The stamp moves with every change of any element (sets included) and with nothing else;
// the stamped reads report the stamp their element was read at.
TEST_F(List, StampMovesWithEveryChangeAndOnlyThen) {
  ffk_list* l = Ints({0, 1, 2, 3, 4, 5});
  ffk_any v = ffk_any_int(9), items[2] = {ffk_any_int(7), ffk_any_int(8)};
  uint64_t seen = ffk_list_stamp(l);
  auto moved = [&](const char* what) {
    uint64_t now = ffk_list_stamp(l);
    EXPECT_NE(now, seen) << what << " must move the stamp";
    seen = now;
  };
  auto still = [&](const char* what) { EXPECT_EQ(ffk_list_stamp(l), seen) << what << " must not move the stamp"; };
  ffk_any out;
  uint64_t at = 0;
  ASSERT_EQ(ffk_list_get_stamped(l, -1, &out, &at), 0);
  EXPECT_EQ(out.v_int, 5);
  EXPECT_EQ(at, seen);
  ffk_array* snap = ffk_list_slice(l, 0, INT64_MAX, 2);
  ffk_object_release(Obj(snap));
  EXPECT_EQ(ffk_list_find(l, &v, 0, INT64_MAX, nullptr), 0);
  still("reads");
  ASSERT_EQ(ffk_list_set(l, 0, &v), 0);
  moved("set");
  ASSERT_EQ(ffk_list_append(l, &v), 0);
  moved("append");
  ASSERT_EQ(ffk_list_insert(l, 0, &v), 0);
  moved("insert");
  ASSERT_EQ(ffk_list_pop(l, -1, &out), 0);
  moved("pop");
  ASSERT_EQ(ffk_list_set_slice_step(l, 0, INT64_MAX, 4, items, 2), 0);  // 7 elements: [0] and [4]
  moved("extended slice assignment (moves nothing)");
  ASSERT_EQ(ffk_list_set_slice(l, 1, 2, items, 2), 0);
  moved("slice assignment");
  ASSERT_EQ(ffk_list_erase_slice(l, 0, INT64_MAX, 2), 0);
  moved("erase_slice");
  ASSERT_EQ(ffk_list_extend(l, items, 2), 0);
  moved("extend");
  ASSERT_EQ(ffk_list_reverse(l), 0);
  moved("reverse");
  ffk_list_iter it;
  ffk_list_iter_init(&it, l);
  ASSERT_EQ(ffk_list_iter_next_stamped(&it, &out, &at), 1);
  EXPECT_EQ(at, seen) << "a step reports the stamp it read at";
  ASSERT_EQ(ffk_list_set(l, 1, &v), 0);
  moved("set during iteration");
  ASSERT_EQ(ffk_list_iter_next_stamped(&it, &out, &at), 1) << "a set does not stop an iterator";
  EXPECT_EQ(at, seen);
  ASSERT_EQ(ffk_list_append(l, &v), 0);
  moved("append during iteration");
  EXPECT_EQ(ffk_list_iter_next_stamped(&it, &out, &at), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"changed during iteration"}));
  EXPECT_EQ(at, 0u) << "no stamp for a step that found the List changed";
  ASSERT_EQ(ffk_list_clear(l), 0);
  moved("clear");
  const uint64_t* word = ffk_list_stamp_address(l);
  ASSERT_NE(word, nullptr);
  EXPECT_EQ(__atomic_load_n(word, __ATOMIC_ACQUIRE), seen) << "the address is where ffk_list_stamp reads";
  EXPECT_EQ(ffk_list_stamp_address(nullptr), nullptr);
  ASSERT_EQ(ffk_list_clear(l), 0);
  still("clearing an empty List");
  EXPECT_EQ(ffk_list_get_stamped(l, 0, &out, &at), -1);
  EXPECT_TRUE(PendingError("IndexError", {"index 0", "size 0"}));
  EXPECT_EQ(at, 0u);
  EXPECT_EQ(ffk_list_get_stamped(nullptr, 0, &out, &at), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_object_release(Obj(l));
}

TEST_F(List, SliceFollowsPythonRules) {
  ffk_list* l = Ints({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  struct {
    int64_t start, stop, step;
    std::vector<int64_t> want;
  } cases[] = {
      {0, INT64_MAX, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {2, 5, 1, {2, 3, 4}},
      {INT64_MAX, INT64_MIN, -2, {9, 7, 5, 3, 1}},
      {-1, -11, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
      {1, 9, 2, {1, 3, 5, 7}},
      {9, 0, -3, {9, 6, 3}},
      {-3, 100, 1, {7, 8, 9}},
      {0, 0, 1, {}},
      {3, -3, -1, {}},
      {INT64_MIN, INT64_MAX, 3, {0, 3, 6, 9}},
      {5, INT64_MIN, -1, {5, 4, 3, 2, 1, 0}},
      {INT64_MIN, 5, -1, {}},
      {5, 2, 1, {}},
      {INT64_MAX, INT64_MIN, INT64_MIN, {9}},
      {0, INT64_MAX, INT64_MAX, {0}},
      {1, INT64_MAX, INT64_MAX, {1}},       // one step past the element would overflow
      {-2, INT64_MIN, INT64_MIN, {8}},
  };
  for (const auto& c : cases) {
    ffk_array* s = ffk_list_slice(l, c.start, c.stop, c.step);
    ASSERT_NE(s, nullptr) << FetchError();
    EXPECT_EQ(Obj(s)->type_index, FFK_TYPE_ARRAY);
    EXPECT_EQ(Values(s), c.want) << c.start << ":" << c.stop << ":" << c.step;
    ffk_object_release(Obj(s));
  }
  EXPECT_EQ(ffk_list_slice(l, 0, 1, 0), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"step"}));
  EXPECT_EQ(ffk_list_slice(nullptr, 0, 1, 1), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_array* snap = ffk_list_slice(l, 0, 3, 1);
  ffk_any v = ffk_any_int(100);
  ASSERT_EQ(ffk_list_set(l, 0, &v), 0);
  EXPECT_EQ(Values(snap), std::vector<int64_t>({0, 1, 2})) << "a slice is a snapshot";
  ffk_object_release(Obj(snap));
  ffk_object_release(Obj(l));
}

// l[start:stop:step] = items and del l[start:stop:step] for a grid of bounds and steps on
// Lists of 0 to 7 elements, against the Python reference: extended slices need exactly
// as many items as they select, and a wrong count leaves the List unchanged.
TEST_F(List, SetSliceStepAndEraseSliceFollowPythonOnAGrid) {
  const int64_t bounds[] = {INT64_MIN, -9, -3, -1, 0, 1, 2, 5, 8, INT64_MAX};
  const int64_t steps[] = {INT64_MIN, -3, -2, -1, 1, 2, 3, INT64_MAX};
  for (int64_t n = 0; n < 8; ++n) {
    for (int64_t start : bounds) {
      for (int64_t stop : bounds) {
        for (int64_t step : steps) {
          SCOPED_TRACE(::testing::Message() << "n " << n << ", l[" << start << ":" << stop << ":" << step << "]");
          std::vector<int64_t> idx = PySliceIndices(n, start, stop, step);
          int64_t k = static_cast<int64_t>(idx.size());

          std::vector<int64_t> want, base = Iota(n);
          for (int64_t i = 0; i < n; ++i)
            if (std::find(idx.begin(), idx.end(), i) == idx.end()) want.push_back(i);
          ffk_list* l = Ints(base);
          ASSERT_EQ(ffk_list_erase_slice(l, start, stop, step), 0) << FetchError();
          EXPECT_EQ(Values(l), want) << "del";
          ffk_object_release(Obj(l));

          l = Ints(base);
          if (step == 1) {  // any length: the slice is replaced by two items
            std::vector<ffk_any> items = IntAnys({100, 101});
            ASSERT_EQ(ffk_list_set_slice_step(l, start, stop, 1, items.data(), 2), 0) << FetchError();
            int64_t a = Clamp(start, n), b = std::max(a, Clamp(stop, n));
            want = base;
            want.erase(want.begin() + a, want.begin() + b);
            want.insert(want.begin() + a, {100, 101});
            EXPECT_EQ(Values(l), want) << "assign";
          } else {
            std::vector<int64_t> xs;
            for (int64_t j = 0; j <= k; ++j) xs.push_back(100 + j);
            std::vector<ffk_any> items = IntAnys(xs);
            want = base;
            for (int64_t j = 0; j < k; ++j) want[static_cast<size_t>(idx[static_cast<size_t>(j)])] = 100 + j;
            EXPECT_EQ(ffk_list_set_slice_step(l, start, stop, step, items.data(), k + 1), -1) << "one too many";
            EXPECT_EQ(FetchError(), "ValueError: attempt to assign sequence of size " + std::to_string(k + 1) +
                                        " to extended slice of size " + std::to_string(k));
            EXPECT_EQ(Values(l), base) << "unchanged after the error";
            ASSERT_EQ(ffk_list_set_slice_step(l, start, stop, step, items.data(), k), 0) << FetchError();
            EXPECT_EQ(Values(l), want) << "assign";
          }
          ffk_object_release(Obj(l));
        }
      }
    }
  }
}

TEST_F(List, SetSliceStepCopiesViewsAndRefusesBadInput) {
  ffk_list* l = Ints({0, 1, 2, 3});
  ffk_any items[2] = {ffk_any_raw_str("a raw string view to copy"), ffk_any_int(5)};
  ASSERT_EQ(ffk_list_set_slice_step(l, 1, INT64_MAX, 2, items, 2), 0) << FetchError();
  EXPECT_EQ(R(l), "[0, \"a raw string view to copy\", 2, 5]");
  OwnedAny v;
  ASSERT_EQ(ffk_list_get(l, 1, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING) << "a view becomes an owned String";
  std::string before = R(l);
  ffk_any bad[2] = {ffk_any_int(1), TensorView()};
  EXPECT_EQ(ffk_list_set_slice_step(l, 0, INT64_MAX, 2, bad, 2), -1);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));
  EXPECT_EQ(ffk_list_set_slice_step(l, 0, INT64_MAX, 0, items, 2), -1);
  EXPECT_EQ(FetchError(), "ValueError: slice step cannot be zero");
  EXPECT_EQ(ffk_list_erase_slice(l, 0, INT64_MAX, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: slice step cannot be zero");
  EXPECT_EQ(ffk_list_set_slice_step(l, 0, 2, 2, nullptr, 1), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_set_slice_step(l, 0, 2, 2, items, -1), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(R(l), before) << "every refusal leaves the List unchanged";
  ASSERT_EQ(ffk_list_set_slice_step(l, 3, 1, 2, nullptr, 0), 0) << "an empty extended slice takes no items";
  ASSERT_EQ(ffk_list_erase_slice(l, 3, 1, 2), 0);
  EXPECT_EQ(R(l), before);
  ffk_object_release(Obj(l));
}

TEST_F(List, SetSliceStepFromArrayListAndItself) {
  ffk_list* l = Ints({0, 1, 2, 3, 4});
  ffk_array* arr = IntArray({7, 8});
  ASSERT_EQ(ffk_list_set_slice_step_from(l, 1, INT64_MAX, 2, Obj(arr)), 0) << FetchError();
  EXPECT_EQ(Values(l), std::vector<int64_t>({0, 7, 2, 8, 4}));
  ffk_list* other = Ints({5, 6, 9});
  ASSERT_EQ(ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MIN, -2, Obj(other)), 0) << FetchError();
  EXPECT_EQ(Values(l), std::vector<int64_t>({9, 7, 6, 8, 5}));
  EXPECT_EQ(Values(other), std::vector<int64_t>({5, 6, 9})) << "the source is only read";
  ASSERT_EQ(ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MIN, -1, Obj(l)), 0) << "l[::-1] = l";
  EXPECT_EQ(Values(l), std::vector<int64_t>({5, 8, 6, 7, 9}));
  EXPECT_EQ(ffk_object_use_count(Obj(l)), 1u);
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, INT64_MAX, 2, Obj(l)), -1) << "l[::2] = l";
  EXPECT_EQ(FetchError(), "ValueError: attempt to assign sequence of size 5 to extended slice of size 3");
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, INT64_MAX, 2, Obj(other)), 0);
  EXPECT_EQ(Values(l), std::vector<int64_t>({5, 8, 6, 7, 9}));
  ffk_map* m = ffk_map_new();
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, 1, 2, Obj(m)), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Map"}));
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, 1, 2, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, 1, 0, Obj(arr)), -1);
  EXPECT_EQ(FetchError(), "ValueError: slice step cannot be zero");
  EXPECT_EQ(ffk_list_set_slice_step_from(l, 0, INT64_MAX, 3, Obj(arr)), 0) << "[0::3] selects 2";
  EXPECT_EQ(Values(l), std::vector<int64_t>({7, 8, 6, 8, 9}));
  for (ffk_object* o : {Obj(l), Obj(arr), Obj(other), Obj(m)}) ffk_object_release(o);
}

TEST_F(List, FromItemsFromArrayAndToArraySnapshot) {
  ffk_list* e = ffk_list_from_items(nullptr, 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(ffk_list_size(e), 0);
  ffk_array* ea = ffk_list_to_array(e);
  ASSERT_NE(ea, nullptr);
  EXPECT_EQ(ffk_array_size(ea), 0);
  ffk_object_release(Obj(ea));
  ffk_object_release(Obj(e));
  EXPECT_EQ(ffk_list_from_items(nullptr, 3), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"3"}));
  ffk_any one = ffk_any_int(1);
  EXPECT_EQ(ffk_list_from_items(&one, -1), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"-1"}));
  ffk_any bad[2] = {ffk_any_int(1), TensorView()};
  EXPECT_EQ(ffk_list_from_items(bad, 2), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"DLTensor*"}));

  ffk_array* arr = IntArray({1, 2, 3});
  ffk_list* la = ffk_list_from_array(arr);
  ASSERT_NE(la, nullptr);
  ffk_tuple* tup = ffk_tuple_pack(2, ffk_any_int(4), ffk_any_raw_str("five"));
  ffk_list* lt = ffk_list_from_array(tup);
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(R(lt), "[4, \"five\"]");
  ffk_any v = ffk_any_int(10);
  ASSERT_EQ(ffk_list_set(la, 0, &v), 0);
  EXPECT_EQ(Values(arr), std::vector<int64_t>({1, 2, 3})) << "the List is independent of its source";
  EXPECT_EQ(ffk_list_from_array(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));

  ffk_array* snap = ffk_list_to_array(la);
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(Obj(snap)->type_index, FFK_TYPE_ARRAY);
  EXPECT_EQ(Values(snap), std::vector<int64_t>({10, 2, 3}));
  ASSERT_EQ(ffk_list_append(la, &v), 0);
  ASSERT_EQ(ffk_list_set(la, 1, &v), 0);
  ASSERT_EQ(ffk_list_reverse(la), 0);
  EXPECT_EQ(Values(snap), std::vector<int64_t>({10, 2, 3})) << "a snapshot never changes";
  ASSERT_EQ(ffk_list_clear(la), 0);
  EXPECT_EQ(Values(snap), std::vector<int64_t>({10, 2, 3}));
  EXPECT_EQ(ffk_list_to_array(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  for (ffk_object* o : {Obj(arr), Obj(la), Obj(tup), Obj(lt), Obj(snap)}) ffk_object_release(o);
}

TEST_F(List, StoredViewsBecomeOwnedValues) {
  char text[] = "hello world long";
  char small_text[] = "hi";
  ffk_byte_array ba = {"\x01\x02\x03", 3};
  ffk_list* l = ffk_list_new();
  ffk_any raw = ffk_any_raw_str(text), small = ffk_any_raw_str(small_text), bytes = ffk_any_byte_array(&ba);
  ASSERT_EQ(ffk_list_append(l, &raw), 0);
  ASSERT_EQ(ffk_list_insert(l, 0, &small), 0);
  ASSERT_EQ(ffk_list_append(l, &bytes), 0);
  text[0] = 'J';
  small_text[0] = 'o';
  OwnedAny v;
  ASSERT_EQ(ffk_list_get(l, 1, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING) << "a long raw string becomes a String object";
  EXPECT_EQ(Repr(v.v), "\"hello world long\"") << "copied, not borrowed";
  ffk_any_release(&v.v);
  ASSERT_EQ(ffk_list_get(l, 0, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(Repr(v.v), "\"hi\"");
  ffk_any_release(&v.v);
  ASSERT_EQ(ffk_list_get(l, 2, &v.v), 0);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SMALL_BYTES);
  EXPECT_EQ(R(l), "[\"hi\", \"hello world long\", b\"\\x01\\x02\\x03\"]");
  ffk_object_release(Obj(l));
}

TEST_F(List, NullHandleIsAValueErrorForEveryFallibleFunction) {
  ffk_any v = ffk_any_int(1);
  ffk_any out = ffk_any_none();
  ffk_array* arr = IntArray({1});
  struct {
    const char* name;
    std::function<int()> call;
  } calls[] = {
      {"get", [&] { return ffk_list_get(nullptr, 0, &out); }},
      {"set", [&] { return ffk_list_set(nullptr, 0, &v); }},
      {"append", [&] { return ffk_list_append(nullptr, &v); }},
      {"append_steal", [&] {
         ffk_any x = ffk_any_int(1);
         return ffk_list_append_steal(nullptr, &x);
       }},
      {"insert", [&] { return ffk_list_insert(nullptr, 0, &v); }},
      {"pop", [&] { return ffk_list_pop(nullptr, -1, &out); }},
      {"erase_at", [&] { return ffk_list_erase_at(nullptr, 0); }},
      {"erase", [&] { return ffk_list_erase(nullptr, 0, 0); }},
      {"set_slice", [&] { return ffk_list_set_slice(nullptr, 0, 0, &v, 1); }},
      {"set_slice_from", [&] { return ffk_list_set_slice_from(nullptr, 0, 0, Obj(arr)); }},
      {"set_slice_step", [&] { return ffk_list_set_slice_step(nullptr, 0, 1, 2, &v, 1); }},
      {"set_slice_step_from", [&] { return ffk_list_set_slice_step_from(nullptr, 0, 1, 2, Obj(arr)); }},
      {"erase_slice", [&] { return ffk_list_erase_slice(nullptr, 0, 1, 2); }},
      {"extend", [&] { return ffk_list_extend(nullptr, &v, 1); }},
      {"extend_from", [&] { return ffk_list_extend_from(nullptr, Obj(arr)); }},
      {"clear", [&] { return ffk_list_clear(nullptr); }},
      {"reverse", [&] { return ffk_list_reverse(nullptr); }},
      {"index", [&] { return ffk_list_index(nullptr, &v, nullptr); }},
      {"to_array", [&] { return ffk_list_to_array(nullptr) == nullptr ? -1 : 0; }},
      {"slice", [&] { return ffk_list_slice(nullptr, 0, 1, 1) == nullptr ? -1 : 0; }},
      {"from_array", [&] { return ffk_list_from_array(nullptr) == nullptr ? -1 : 0; }},
  };
  for (const auto& c : calls) {
    EXPECT_EQ(c.call(), -1) << c.name;
    EXPECT_TRUE(PendingError("ValueError", {"NULL"})) << c.name;
    EXPECT_EQ(out.type_index, FFK_TYPE_NONE) << c.name;
  }
  ffk_object_release(Obj(arr));
}

TEST_F(List, ReprOfNestedAndSelfContainingLists) {
  ffk_list* l = Ints({1});
  ffk_any self = ffk_any_object(Obj(l));
  ASSERT_EQ(ffk_list_append(l, &self), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(l)), 3u);  // ours, `self`'s and the element's
  EXPECT_EQ(R(l), "[1, ...]") << "an object met again while printing prints as ...";
  ffk_list* outer = ffk_list_new();
  ASSERT_EQ(ffk_list_append(outer, &self), 0);
  ffk_array* arr = IntArray({2, 3});
  ffk_any av = ffk_any_object_steal(Obj(arr));
  ASSERT_EQ(ffk_list_append(outer, &av), 0);
  EXPECT_EQ(R(outer), "[[1, ...], (2, 3)]");
  ffk_any_release(&av);
  // Break the cycle, or the List would keep itself alive.
  ASSERT_EQ(ffk_list_clear(l), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(l)), 3u);  // ours, `self`'s and outer's element
  EXPECT_EQ(R(outer), "[[], (2, 3)]");
  ffk_any_release(&self);
  ffk_object_release(Obj(outer));
  ffk_object_release(Obj(l));
}

TEST_F(List, IteratorWalksInOrderAndStaysAtTheEnd) {
  ffk_string* s = ffk_string_new("an element seen by the iterator", 31);
  ffk_any items[3] = {ffk_any_int(1), ffk_any_object_steal(&s->header), ffk_any_int(3)};
  ffk_list* l = ffk_list_from_items(items, 3);
  ffk_any_release(&items[1]);
  ffk_list_iter it;
  ffk_list_iter_init(&it, l);
  std::vector<std::string> seen;
  OwnedAny v;
  int rc;
  while ((rc = ffk_list_iter_next(&it, &v.v)) == 1) {
    seen.push_back(Repr(v.v));
    ffk_any_release(&v.v);
  }
  EXPECT_EQ(rc, 0) << FetchError();
  EXPECT_EQ(seen, std::vector<std::string>({"1", "\"an element seen by the iterator\"", "3"}));
  EXPECT_EQ(ffk_list_iter_next(&it, &v.v), 0) << "the end stays the end";
  EXPECT_EQ(ffk_list_iter_next(&it, &v.v), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u) << "each element was a new reference, released above";
  ffk_list* e = ffk_list_new();
  ffk_list_iter_init(&it, e);
  EXPECT_EQ(ffk_list_iter_next(&it, &v.v), 0);
  EXPECT_EQ(ffk_list_iter_next(&it, &v.v), 0);
  ffk_object_release(Obj(e));
  ffk_object_release(Obj(l));
}

TEST_F(List, IteratorReportsChangesOfShapeButSeesSets) {
  ffk_any nine = ffk_any_int(9);
  ffk_array* arr = IntArray({7});
  struct {
    const char* name;
    std::function<int(ffk_list*)> change;
  } changes[] = {
      {"append", [&](ffk_list* l) { return ffk_list_append(l, &nine); }},
      {"append_steal", [&](ffk_list* l) {
         ffk_any x = ffk_any_int(9);
         return ffk_list_append_steal(l, &x);
       }},
      {"insert", [&](ffk_list* l) { return ffk_list_insert(l, 0, &nine); }},
      {"pop", [&](ffk_list* l) {
         ffk_any out;
         int rc = ffk_list_pop(l, -1, &out);
         ffk_any_release(&out);
         return rc;
       }},
      {"erase_at", [&](ffk_list* l) { return ffk_list_erase_at(l, 0); }},
      {"erase", [&](ffk_list* l) { return ffk_list_erase(l, 1, 3); }},
      {"clear", [&](ffk_list* l) { return ffk_list_clear(l); }},
      {"reverse", [&](ffk_list* l) { return ffk_list_reverse(l); }},
      {"extend", [&](ffk_list* l) { return ffk_list_extend(l, &nine, 1); }},
      {"extend_from", [&](ffk_list* l) { return ffk_list_extend_from(l, Obj(arr)); }},
      {"set_slice growing", [&](ffk_list* l) {
         int rc = ffk_list_set_slice(l, 0, 1, &nine, 1);
         return rc == 0 ? ffk_list_set_slice(l, 0, 0, &nine, 1) : rc;
       }},
      {"set_slice shrinking", [&](ffk_list* l) { return ffk_list_set_slice(l, 0, 2, nullptr, 0); }},
      {"set_slice_from", [&](ffk_list* l) { return ffk_list_set_slice_from(l, 0, 3, Obj(arr)); }},
      {"erase_slice step 2", [&](ffk_list* l) { return ffk_list_erase_slice(l, 0, INT64_MAX, 2); }},
      {"erase_slice step -1", [&](ffk_list* l) { return ffk_list_erase_slice(l, -1, 1, -1); }},
      {"set_slice_step step 1 growing", [&](ffk_list* l) { return ffk_list_set_slice_step(l, 0, 0, 1, &nine, 1); }},
      {"set_slice_step_from self",
       [&](ffk_list* l) { return ffk_list_set_slice_step_from(l, 0, INT64_MAX, 1, Obj(l)); }},
  };
  for (const auto& c : changes) {
    SCOPED_TRACE(c.name);
    ffk_list* l = Ints({1, 2, 3, 4});
    ffk_list_iter it;
    ffk_list_iter_init(&it, l);
    OwnedAny v;
    ASSERT_EQ(ffk_list_iter_next(&it, &v.v), 1);
    EXPECT_EQ(v.v.v_int, 1);
    ffk_any_release(&v.v);
    ASSERT_EQ(c.change(l), 0) << FetchError();
    EXPECT_EQ(ffk_list_iter_next(&it, &v.v), -1);
    EXPECT_EQ(FetchError(), "RuntimeError: List changed during iteration");
    ffk_any_release(&v.v);
    ffk_object_release(Obj(l));
  }
  {
    SCOPED_TRACE("a change before the first next");
    ffk_list* l = Ints({1, 2});
    ffk_list_iter it;
    ffk_list_iter_init(&it, l);
    ASSERT_EQ(ffk_list_append(l, &nine), 0);
    OwnedAny v;
    EXPECT_EQ(ffk_list_iter_next(&it, &v.v), -1);
    EXPECT_EQ(FetchError(), "RuntimeError: List changed during iteration");
    ffk_object_release(Obj(l));
  }
  {
    SCOPED_TRACE("set is allowed and seen");
    ffk_list* l = Ints({1, 2, 3});
    ffk_list_iter it;
    ffk_list_iter_init(&it, l);
    std::vector<int64_t> seen;
    OwnedAny v;
    int rc;
    while ((rc = ffk_list_iter_next(&it, &v.v)) == 1) {
      seen.push_back(v.v.v_int);
      if (seen.size() == 1) {
        ffk_any x = ffk_any_int(20);
        ASSERT_EQ(ffk_list_set(l, 1, &x), 0);
        x = ffk_any_int(10);
        ASSERT_EQ(ffk_list_set(l, 0, &x), 0);  // behind the iterator: not seen
      }
    }
    EXPECT_EQ(rc, 0) << FetchError();
    EXPECT_EQ(seen, std::vector<int64_t>({1, 20, 3}));
    ffk_object_release(Obj(l));
  }
  {
    SCOPED_TRACE("an extended slice assignment replaces elements: allowed and seen, like set");
    ffk_list* l = Ints({1, 2, 3, 4});
    ffk_list_iter it;
    ffk_list_iter_init(&it, l);
    std::vector<int64_t> seen;
    OwnedAny v;
    int rc;
    while ((rc = ffk_list_iter_next(&it, &v.v)) == 1) {
      seen.push_back(v.v.v_int);
      if (seen.size() == 1) {
        ffk_any xs[2] = {ffk_any_int(10), ffk_any_int(30)};
        ASSERT_EQ(ffk_list_set_slice_step(l, 0, INT64_MAX, 2, xs, 2), 0) << FetchError();
      }
    }
    EXPECT_EQ(rc, 0) << FetchError();
    EXPECT_EQ(seen, std::vector<int64_t>({1, 2, 30, 4}));
    ffk_object_release(Obj(l));
  }
  ffk_object_release(Obj(arr));
}

// An object whose deleter uses the List that held it: it reads the List and appends
// 1000 + the size it saw. With no lock held while the deleter runs, and the List
// consistent before the release, every removal below completes (no deadlock) and the
// deleter sees the List after the operation.
struct Reentrant {
  ffk_object header;
  ffk_list* list;  // borrowed: the test keeps the List alive
  int* destroyed;
};

int32_t ReentrantType() {
  static const int32_t type = ffk_type_register("ffk_test.ListReentrant", FFK_TYPE_OBJECT);
  return type;
}

void ReentrantDeleter(void* self, int which) {
  Reentrant* r = static_cast<Reentrant*>(self);
  if (which & FFK_DELETER_DESTROY) {
    ++*r->destroyed;
    int64_t n = ffk_list_size(r->list);
    ffk_any first;
    if (n > 0 && ffk_list_get(r->list, 0, &first) == 0) ffk_any_release(&first);
    ffk_list_iter it;
    ffk_list_iter_init(&it, r->list);
    ffk_any x;
    while (ffk_list_iter_next(&it, &x) == 1) ffk_any_release(&x);
    ffk_any v = ffk_any_int(1000 + n);
    if (ffk_list_append(r->list, &v) != 0) ffk_error_clear();
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&r->header);
}

ffk_any NewReentrant(ffk_list* l, int* destroyed) {
  ffk_object* o = ffk_object_alloc(ReentrantType(), sizeof(Reentrant), ReentrantDeleter);
  EXPECT_NE(o, nullptr) << FetchError();
  Reentrant* r = reinterpret_cast<Reentrant*>(o);
  r->list = l;
  r->destroyed = destroyed;
  return ffk_any_object_steal(o);
}

TEST_F(List, DeleterMayUseTheListAgain) {
  ASSERT_GE(ReentrantType(), FFK_TYPE_STATIC_END) << FetchError();
  struct {
    const char* name;
    std::function<int(ffk_list*)> op;
    std::vector<int64_t> want;  // the List starts as [R, 1, 2] where R holds the only reference
  } cases[] = {
      {"set", [](ffk_list* l) { ffk_any v = ffk_any_int(5); return ffk_list_set(l, 0, &v); }, {5, 1, 2, 1003}},
      {"pop", [](ffk_list* l) {
         ffk_any out;
         int rc = ffk_list_pop(l, 0, &out);
         ffk_any_release(&out);
         return rc;
       }, {1, 2, 1002}},
      {"erase_at", [](ffk_list* l) { return ffk_list_erase_at(l, -3); }, {1, 2, 1002}},
      {"erase", [](ffk_list* l) { return ffk_list_erase(l, 0, 2); }, {2, 1001}},
      {"clear", [](ffk_list* l) { return ffk_list_clear(l); }, {1000}},
      {"set_slice", [](ffk_list* l) {
         ffk_any items[2] = {ffk_any_int(8), ffk_any_int(9)};
         return ffk_list_set_slice(l, 0, 1, items, 2);
       }, {8, 9, 1, 2, 1004}},
      {"set_slice_from", [](ffk_list* l) {
         ffk_array* a = IntArray({7});
         int rc = ffk_list_set_slice_from(l, 0, 2, Obj(a));
         ffk_object_release(Obj(a));
         return rc;
       }, {7, 2, 1002}},
      {"erase_slice", [](ffk_list* l) { return ffk_list_erase_slice(l, 0, INT64_MAX, 2); }, {1, 1001}},
      {"set_slice_step", [](ffk_list* l) {
         ffk_any items[2] = {ffk_any_int(8), ffk_any_int(9)};
         return ffk_list_set_slice_step(l, 0, INT64_MAX, 2, items, 2);
       }, {8, 1, 9, 1003}},
      {"set_slice_step_from", [](ffk_list* l) {
         ffk_array* a = IntArray({7, 6});
         int rc = ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MIN, -2, Obj(a));
         ffk_object_release(Obj(a));
         return rc;
       }, {6, 1, 7, 1003}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    int destroyed = 0;
    ffk_list* l = ffk_list_new();
    ffk_any r = NewReentrant(l, &destroyed);
    ASSERT_EQ(ffk_list_append_steal(l, &r), 0);
    ffk_any one = ffk_any_int(1), two = ffk_any_int(2);
    ASSERT_EQ(ffk_list_append(l, &one), 0);
    ASSERT_EQ(ffk_list_append(l, &two), 0);
    ASSERT_EQ(c.op(l), 0) << FetchError();
    EXPECT_EQ(destroyed, 1);
    EXPECT_EQ(Values(l), c.want);
    ffk_object_release(Obj(l));
  }
  {
    SCOPED_TRACE("the List holds two: the second deleter sees the first one's append");
    int destroyed = 0;
    ffk_list* l = ffk_list_new();
    for (int i = 0; i < 2; ++i) {
      ffk_any r = NewReentrant(l, &destroyed);
      ASSERT_EQ(ffk_list_append_steal(l, &r), 0);
    }
    ASSERT_EQ(ffk_list_clear(l), 0);
    EXPECT_EQ(destroyed, 2);
    EXPECT_EQ(Values(l), std::vector<int64_t>({1000, 1001}));
    ffk_object_release(Obj(l));
  }
}

TEST_F(List, RemovalsCannotFailForLackOfMemory) {
  // pop, erase_at, erase of up to 64 elements, clear and reverse list no MemoryError.
  struct {
    const char* name;
    std::function<int(ffk_list*)> op;
  } ops[] = {
      {"pop", [](ffk_list* l) {
         ffk_any out;
         int rc = ffk_list_pop(l, 3, &out);
         ffk_any_release(&out);
         return rc;
       }},
      {"erase_at", [](ffk_list* l) { return ffk_list_erase_at(l, 0); }},
      {"erase 64", [](ffk_list* l) { return ffk_list_erase(l, 0, 64); }},
      {"clear", [](ffk_list* l) { return ffk_list_clear(l); }},
      {"reverse", [](ffk_list* l) { return ffk_list_reverse(l); }},
  };
  for (const auto& op : ops) {
    SCOPED_TRACE(op.name);
    ffk_list* l = ffk_list_new();
    for (int i = 0; i < 200; ++i) {
      ffk_any s;
      ASSERT_EQ(ffk_any_cstr(("string object " + std::to_string(i) + " of the list").c_str(), &s), 0);
      ASSERT_EQ(ffk_list_append_steal(l, &s), 0);
    }
    for (int n = 1; n <= 3; ++n) {
      ffk_debug_fail_allocation(n);
      EXPECT_EQ(op.op(l), 0) << FetchError();
      ffk_debug_fail_allocation(0);
    }
    ffk_object_release(Obj(l));
  }
}

// Every operation that may allocate, failed at each allocation in turn: a MemoryError,
// nothing leaked, and the List exactly as before (compared element by element through
// ffk_list_get, which does not allocate).
TEST_F(List, OperationsFailCleanlyAtEveryAllocation) {
  ffk_any big;
  ASSERT_EQ(ffk_any_cstr("a string long enough to be an object", &big), 0);
  ffk_any raw = ffk_any_raw_str("a raw view that must be copied into a String");
  ffk_any three[3] = {raw, big, raw};
  ffk_any init_src[4] = {ffk_any_int(1), big, raw, ffk_any_int(3)};
  ffk_array* arr = ffk_array_new(three, 3);
  ffk_tuple* tup = ffk_tuple_new(3, three);
  ffk_list* other = ffk_list_from_items(three, 3);
  ASSERT_TRUE(arr && tup && other);
  struct Op {
    const char* name;
    std::function<int(ffk_list*)> run;
  } ops[] = {
      {"set", [&](ffk_list* l) { return ffk_list_size(l) > 0 ? ffk_list_set(l, -1, &raw) : 0; }},
      {"append", [&](ffk_list* l) { return ffk_list_append(l, &raw); }},
      {"append_steal", [&](ffk_list* l) {
         ffk_any s;
         if (ffk_any_cstr("a string made for append_steal, long", &s) != 0) return -1;
         return ffk_list_append_steal(l, &s);
       }},
      {"insert", [&](ffk_list* l) { return ffk_list_insert(l, 1, &raw); }},
      {"extend", [&](ffk_list* l) { return ffk_list_extend(l, three, 3); }},
      {"extend_from array", [&](ffk_list* l) { return ffk_list_extend_from(l, Obj(arr)); }},
      {"extend_from list", [&](ffk_list* l) { return ffk_list_extend_from(l, Obj(other)); }},
      {"extend_from self", [&](ffk_list* l) { return ffk_list_extend_from(l, Obj(l)); }},
      {"set_slice grow", [&](ffk_list* l) { return ffk_list_set_slice(l, 1, 2, three, 3); }},
      {"set_slice shrink", [&](ffk_list* l) { return ffk_list_set_slice(l, 0, 3, three, 1); }},
      {"set_slice_from tuple", [&](ffk_list* l) { return ffk_list_set_slice_from(l, 1, 1, Obj(tup)); }},
      {"set_slice_from list", [&](ffk_list* l) { return ffk_list_set_slice_from(l, -1, INT64_MAX, Obj(other)); }},
      {"set_slice_from self", [&](ffk_list* l) { return ffk_list_set_slice_from(l, 1, 2, Obj(l)); }},
      {"erase", [&](ffk_list* l) { return ffk_list_erase(l, 0, ffk_list_size(l) > 80 ? 80 : ffk_list_size(l)); }},
      {"erase_slice step 2", [&](ffk_list* l) { return ffk_list_erase_slice(l, 0, INT64_MAX, 2); }},
      {"erase_slice all, reversed", [&](ffk_list* l) { return ffk_list_erase_slice(l, INT64_MAX, INT64_MIN, -1); }},
      {"set_slice_step step 2", [&](ffk_list* l) {
         std::vector<ffk_any> xs(static_cast<size_t>((ffk_list_size(l) + 1) / 2), raw);
         return ffk_list_set_slice_step(l, 0, INT64_MAX, 2, xs.data(), static_cast<int64_t>(xs.size()));
       }},
      {"set_slice_step every element, reversed", [&](ffk_list* l) {
         std::vector<ffk_any> xs(static_cast<size_t>(ffk_list_size(l)), big);
         return ffk_list_set_slice_step(l, INT64_MAX, INT64_MIN, -1, xs.data(), static_cast<int64_t>(xs.size()));
       }},
      {"set_slice_step_from self reversed",
       [&](ffk_list* l) { return ffk_list_set_slice_step_from(l, INT64_MAX, INT64_MIN, -1, Obj(l)); }},
      {"pop", [&](ffk_list* l) {
         if (ffk_list_size(l) == 0) return 0;
         ffk_any out;
         int rc = ffk_list_pop(l, 0, &out);
         ffk_any_release(&out);
         return rc;
       }},
      {"clear", [&](ffk_list* l) { return ffk_list_clear(l); }},
      {"reverse", [&](ffk_list* l) { return ffk_list_reverse(l); }},
      {"find a container (a snapshot)", [&](ffk_list* l) {
         OwnedAny needle(ffk_any_object(Obj(arr)));
         return ffk_list_find(l, &needle.v, 0, INT64_MAX, nullptr) < 0 ? -1 : 0;
       }},
  };
  for (int size : {0, 1, 4, 8, 16, 100}) {
    for (const auto& op : ops) {
      SCOPED_TRACE(std::string(op.name) + " on a List of " + std::to_string(size));
      ffk_list* l = ffk_list_new();
      ASSERT_NE(l, nullptr);
      for (int i = 0; i < size; ++i) ASSERT_EQ(ffk_list_append(l, &init_src[i % 4]), 0);
      std::vector<ffk_any> before;  // owned copies, taken before the sweep
      auto take = [&] {
        for (ffk_any& x : before) ffk_any_release(&x);
        before.assign(static_cast<size_t>(ffk_list_size(l)), ffk_any_none());
        for (size_t i = 0; i < before.size(); ++i) ffk_list_get(l, static_cast<int64_t>(i), &before[i]);
      };
      take();
      ffk::test::SweepAllocationFailures(
          [&] {
            if (op.run(l) != 0) return false;
            take();  // a success that absorbed the failure changed the List: the new "before"
            return true;
          },
          [&] {
            ASSERT_EQ(ffk_list_size(l), static_cast<int64_t>(before.size()));
            for (size_t i = 0; i < before.size(); ++i) {
              ffk_any x;
              ASSERT_EQ(ffk_list_get(l, static_cast<int64_t>(i), &x), 0);
              EXPECT_TRUE(ffk_any_equal(&x, &before[i])) << "element " << i;
              EXPECT_EQ(x.type_index, before[i].type_index) << "element " << i;
              ffk_any_release(&x);
            }
          });
      for (ffk_any& x : before) ffk_any_release(&x);
      ffk_object_release(Obj(l));
    }
  }
  ffk_any items[3] = {ffk_any_int(1), raw, big};
  struct Ctor {
    const char* name;
    std::function<ffk_object*()> make;
  } ctors[] = {
      {"new", [] { return Obj(ffk_list_new()); }},
      {"with_capacity", [] { return Obj(ffk_list_with_capacity(1000)); }},
      {"from_items", [&] { return Obj(ffk_list_from_items(items, 3)); }},
      {"from_array", [&] { return Obj(ffk_list_from_array(arr)); }},
      {"from_items_steal", [&] {
         ffk_any owned[3];
         for (int i = 0; i < 3; ++i)
           if (ffk_any_to_owned(&items[i], &owned[i]) != 0) {
             while (i-- > 0) ffk_any_release(&owned[i]);
             return static_cast<ffk_object*>(nullptr);
           }
         return Obj(ffk_list_from_items_steal(owned, 3));
       }},
      {"from_array tuple", [&] { return Obj(ffk_list_from_array(tup)); }},
      {"to_array", [&] { return Obj(ffk_list_to_array(other)); }},
      {"slice", [&] { return Obj(ffk_list_slice(other, INT64_MAX, INT64_MIN, -1)); }},
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
  EXPECT_EQ(Values(arr).size(), 3u);
  ffk_object_release(Obj(arr));
  ffk_object_release(Obj(tup));
  ffk_object_release(Obj(other));
  ffk_any_release(&big);
}

// 100,000 random operations against std::vector<int64_t>; the seed is printed on failure.
TEST_F(List, RandomOperationsMatchStdVector) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<int64_t> model;
  ffk_list* l = ffk_list_new();
  ffk_list* alias = l;  // a second handle: it must see everything
  ffk_object_retain(Obj(alias));
  auto any_step = [&]() -> int64_t {
    static const int64_t steps[] = {INT64_MIN, -3, -2, -1, 1, 2, 3, 7, INT64_MAX};
    return steps[rng() % (sizeof steps / sizeof steps[0])];
  };
  auto any_index = [&](int64_t n) -> int64_t {  // anything from well below -n to well above n
    switch (rng() % 8) {
      case 0: return INT64_MIN + static_cast<int64_t>(rng() % 3);
      case 1: return INT64_MAX - static_cast<int64_t>(rng() % 3);
      default: return static_cast<int64_t>(rng() % (2 * n + 7)) - n - 3;
    }
  };
  for (int step = 0; step < 100000; ++step) {
    int64_t n = static_cast<int64_t>(model.size());
    int64_t x = static_cast<int64_t>(rng() % 1000);
    ffk_any v = ffk_any_int(x);
    int op = static_cast<int>(rng() % 14);
    if (n > 400 && op < 4) op = 4 + static_cast<int>(rng() % 2);  // keep the size moderate
    switch (op) {
      case 0:
      case 1:
        ASSERT_EQ(ffk_list_append(l, &v), 0);
        model.push_back(x);
        break;
      case 2: {
        int64_t i = any_index(n);
        ASSERT_EQ(ffk_list_insert(l, i, &v), 0);
        model.insert(model.begin() + Clamp(i, n), x);
        break;
      }
      case 3: {
        int64_t k = static_cast<int64_t>(rng() % 5);
        std::vector<ffk_any> items;
        for (int64_t j = 0; j < k; ++j) items.push_back(ffk_any_int(x + j));
        ASSERT_EQ(ffk_list_extend(l, items.data(), k), 0);
        for (int64_t j = 0; j < k; ++j) model.push_back(x + j);
        break;
      }
      case 4: {
        ffk_any out;
        if (n == 0) {
          ASSERT_EQ(ffk_list_pop(l, -1, &out), -1);
          ASSERT_EQ(FetchError(), "IndexError: pop from empty List");
          break;
        }
        int64_t i = static_cast<int64_t>(rng() % (2 * n)) - n;  // [-n, n)
        ASSERT_EQ(ffk_list_pop(l, i, &out), 0);
        int64_t at = i < 0 ? i + n : i;
        ASSERT_EQ(out.v_int, model[at]);
        model.erase(model.begin() + at);
        break;
      }
      case 5: {
        int64_t b = static_cast<int64_t>(rng() % (n + 1));
        int64_t e = b + static_cast<int64_t>(rng() % (std::min<int64_t>(n - b, 20) + 1));
        ASSERT_EQ(ffk_list_erase(l, b, e), 0);
        model.erase(model.begin() + b, model.begin() + e);
        break;
      }
      case 6:
        if (n > 0) {
          int64_t i = static_cast<int64_t>(rng() % (2 * n)) - n;
          ASSERT_EQ(ffk_list_set(l, i, &v), 0);
          model[i < 0 ? i + n : i] = x;
        }
        break;
      case 7: {
        int64_t start = any_index(n), stop = any_index(n);
        int64_t k = static_cast<int64_t>(rng() % 4);
        std::vector<ffk_any> items;
        for (int64_t j = 0; j < k; ++j) items.push_back(ffk_any_int(x + j));
        ASSERT_EQ(ffk_list_set_slice(l, start, stop, items.data(), k), 0);
        int64_t a = Clamp(start, n), b = std::max(a, Clamp(stop, n));
        model.erase(model.begin() + a, model.begin() + b);
        for (int64_t j = 0; j < k; ++j) model.insert(model.begin() + a + j, x + j);
        break;
      }
      case 8:
        ASSERT_EQ(ffk_list_reverse(alias), 0);
        std::reverse(model.begin(), model.end());
        break;
      case 9:
        if (n < 40) {
          ASSERT_EQ(ffk_list_extend_from(l, Obj(alias)), 0);
          model.insert(model.end(), model.begin(), model.end());
        } else if (rng() % 4 == 0) {
          int64_t start = any_index(n), stop = any_index(n);
          ASSERT_EQ(ffk_list_set_slice_from(l, start, stop, Obj(l)), 0);
          std::vector<int64_t> copy = model;
          int64_t a = Clamp(start, n), b = std::max(a, Clamp(stop, n));
          model.erase(model.begin() + a, model.begin() + b);
          model.insert(model.begin() + a, copy.begin(), copy.end());
        }
        break;
      case 10: {
        int64_t at = -1;
        int found = ffk_list_index(l, &v, &at);
        auto it = std::find(model.begin(), model.end(), x);
        ASSERT_EQ(found, it != model.end() ? 1 : 0);
        if (found == 1) {
          ASSERT_EQ(at, it - model.begin());
        }
        break;
      }
      case 11:
        if (rng() % 200 == 0) {
          ASSERT_EQ(ffk_list_clear(alias), 0);
          model.clear();
        }
        break;      case 12: {  // del l[start:stop:step]
        int64_t start = any_index(n), stop = any_index(n), st = any_step();
        std::vector<int64_t> idx = PySliceIndices(n, start, stop, st);
        ASSERT_EQ(ffk_list_erase_slice(l, start, stop, st), 0) << FetchError();
        std::vector<int64_t> kept;
        std::vector<bool> gone(static_cast<size_t>(n), false);
        for (int64_t i : idx) gone[static_cast<size_t>(i)] = true;
        for (int64_t i = 0; i < n; ++i)
          if (!gone[static_cast<size_t>(i)]) kept.push_back(model[static_cast<size_t>(i)]);
        model = kept;
        break;
      }
      case 13: {  // l[start:stop:step] = items, of the right length or (step != 1) one too many
        int64_t start = any_index(n), stop = any_index(n), st = any_step();
        if (st == 1) break;  // case 7
        std::vector<int64_t> idx = PySliceIndices(n, start, stop, st);
        int64_t k = static_cast<int64_t>(idx.size()), extra = rng() % 8 == 0 ? 1 : 0;
        std::vector<ffk_any> items;
        for (int64_t j = 0; j < k + extra; ++j) items.push_back(ffk_any_int(x + j));
        int rc = ffk_list_set_slice_step(l, start, stop, st, items.data(), k + extra);
        if (extra) {
          ASSERT_EQ(rc, -1);
          ASSERT_TRUE(PendingError("ValueError", {"extended slice"}));
          break;
        }
        ASSERT_EQ(rc, 0) << FetchError();
        for (int64_t j = 0; j < k; ++j) model[static_cast<size_t>(idx[static_cast<size_t>(j)])] = x + j;
        break;
      }
    }
    ASSERT_EQ(ffk_list_size(l), static_cast<int64_t>(model.size())) << "step " << step << " op " << op;
    if (step % 997 == 0) {
      ASSERT_EQ(Values(alias), model) << "step " << step;
      ffk_array* snap = ffk_list_to_array(l);
      ASSERT_NE(snap, nullptr);
      ASSERT_EQ(Values(snap), model);
      ffk_object_release(Obj(snap));
    }
  }
  EXPECT_EQ(Values(l), model);
  ffk_object_release(Obj(alias));
  ffk_object_release(Obj(l));
}

}  // namespace
