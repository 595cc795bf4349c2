// ffikit/array.h: copy-on-write semantics (identity and use counts), every operation,
// error messages, a random model check against std::vector, and allocation failures.
#include <ffikit/ffikit.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Array : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::PendingError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

ffk_object* Obj(ffk_array* a) { return &a->header; }

ffk_array* Ints(std::initializer_list<int64_t> xs) {
  std::vector<ffk_any> v;
  for (int64_t x : xs) v.push_back(ffk_any_int(x));
  return ffk_array_new(v.data(), static_cast<int64_t>(v.size()));
}

std::vector<int64_t> Values(const ffk_array* a) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < ffk_array_size(a); ++i) out.push_back(ffk_array_items_borrow(a)[i].v_int);
  return out;
}

std::string R(ffk_array* a) {
  ffk_any v = ffk_any_object(Obj(a));
  std::string s = Repr(v);
  ffk_any_release(&v);
  return s;
}

TEST_F(Array, NewCopiesItemsAndRetainsObjects) {
  ffk_string* s = ffk_string_new("an element string", 17);
  ffk_any items[3] = {ffk_any_int(1), ffk_any_object_steal(&s->header), ffk_any_raw_str("view")};
  ffk_array* a = ffk_array_new(items, 3);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(ffk_array_size(a), 3);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  EXPECT_EQ(ffk_array_items_borrow(a)[2].type_index, FFK_TYPE_SMALL_STR) << "views become owned values";
  EXPECT_EQ(R(a), "(1, \"an element string\", \"view\")");
  ffk_object_release(Obj(a));
  EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
  ffk_any_release(&items[1]);
}

TEST_F(Array, ReprMatchesDesign) {
  ffk_array* e = ffk_array_new(nullptr, 0);
  ffk_array* one = Ints({7});
  ffk_array* three = Ints({1, 2, 3});
  EXPECT_EQ(R(e), "()");
  EXPECT_EQ(R(one), "(7,)");
  EXPECT_EQ(R(three), "(1, 2, 3)");
  for (ffk_array* a : {e, one, three}) ffk_object_release(Obj(a));
}

TEST_F(Array, GetReturnsNewReferenceAndNamesBadIndex) {
  ffk_array* a = Ints({10, 20, 30});
  OwnedAny v;
  ASSERT_EQ(ffk_array_get(a, -1, &v.v), 0);
  EXPECT_EQ(v.v.v_int, 30);
  EXPECT_EQ(ffk_array_get(a, 7, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "IndexError: Array index 7 out of range for size 3");
  EXPECT_EQ(ffk_array_get(a, -4, &v.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Array index -4 out of range for size 3");
  ffk_object_release(Obj(a));
}

TEST_F(Array, CheckIndexIsTheRuleBindingsCallAndWordsItsError) {
  ffk_array* a = Ints({10, 20, 30});
  int64_t i = -7;
  ASSERT_EQ(ffk_array_check_index(a, -1, &i), 0);
  EXPECT_EQ(i, 2);
  ASSERT_EQ(ffk_array_check_index(a, 0, &i), 0);
  EXPECT_EQ(i, 0);
  EXPECT_EQ(ffk_array_check_index(a, 3, &i), -1);
  EXPECT_EQ(i, 0) << "*out untouched on failure";
  EXPECT_EQ(FetchError(), "IndexError: Array index 3 out of range for size 3");
  EXPECT_EQ(ffk_array_check_index(a, INT64_MIN, &i), -1);
  EXPECT_EQ(FetchError(), "IndexError: Array index -9223372036854775808 out of range for size 3");
  EXPECT_EQ(ffk_array_index_error(a, -9), -1);
  EXPECT_EQ(FetchError(), "IndexError: Array index -9 out of range for size 3");
  ffk_tuple* t = ffk_tuple_pack(1, ffk_any_int(1));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(ffk_array_check_index(t, 1, &i), -1);
  EXPECT_EQ(FetchError(), "IndexError: Tuple index 1 out of range for size 1");
  EXPECT_EQ(ffk_array_index_error(nullptr, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_array_index_error: the array is NULL");
  ffk_object_release(&t->header);
  ffk_object_release(Obj(a));
}

TEST_F(Array, SetOnUniqueChangesInPlace) {
  ffk_array* a = Ints({1, 2, 3});
  ffk_array* before = a;
  ffk_any v = ffk_any_int(99);
  ASSERT_EQ(ffk_array_set(&a, 1, &v), 0);
  EXPECT_EQ(a, before);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 99, 3}));
  ffk_object_release(Obj(a));
}

TEST_F(Array, SetOnSharedCopiesAndLeavesOtherHandleUnchanged) {
  ffk_array* a = Ints({1, 2, 3});
  ffk_array* b = a;
  ffk_object_retain(Obj(b));
  ffk_any v = ffk_any_int(99);
  ASSERT_EQ(ffk_array_set(&a, 0, &v), 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(Values(a), std::vector<int64_t>({99, 2, 3}));
  EXPECT_EQ(Values(b), std::vector<int64_t>({1, 2, 3}));
  EXPECT_EQ(ffk_object_use_count(Obj(a)), 1u);
  EXPECT_EQ(ffk_object_use_count(Obj(b)), 1u) << "the caller's reference to the original was released";
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
}

TEST_F(Array, WeakReferenceCountsAsSharing) {
  ffk_array* a = Ints({1});
  ffk_weak_retain(Obj(a));
  ffk_array* original = a;
  ffk_any v = ffk_any_int(2);
  ASSERT_EQ(ffk_array_set(&a, 0, &v), 0);
  EXPECT_NE(a, original) << "a weak holder could upgrade and see an in-place change";
  EXPECT_EQ(ffk_object_use_count(Obj(original)), 0u) << "the original's last strong ref was the caller's";
  ffk_weak_release(Obj(original));
  ffk_object_release(Obj(a));
}

TEST_F(Array, SharedElementsAreRetainedByTheCopy) {
  ffk_string* s = ffk_string_new("element shared by copies", 24);
  ffk_any item = ffk_any_object_steal(&s->header);
  ffk_array* a = ffk_array_new(&item, 1);
  ffk_array* b = a;
  ffk_object_retain(Obj(b));
  ffk_any v = ffk_any_int(0);
  ASSERT_EQ(ffk_array_push(&a, &v), 0);
  EXPECT_EQ(ffk_object_use_count(&s->header), 3u);  // item, b's element, a's element
  ffk_object_release(Obj(b));
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  ffk_object_release(Obj(a));
  ffk_any_release(&item);
}

TEST_F(Array, PushGrowsUniqueArrayWithoutCopyingElements) {
  ffk_array* a = ffk_array_with_capacity(0);
  for (int i = 0; i < 1000; ++i) {
    ffk_any v = ffk_any_int(i);
    ASSERT_EQ(ffk_array_push(&a, &v), 0);
    EXPECT_TRUE(ffk_object_is_unique(Obj(a)));
  }
  EXPECT_EQ(ffk_array_size(a), 1000);
  EXPECT_GE(ffk_array_capacity(a), 1000);
  EXPECT_LT(ffk_array_capacity(a), 2100);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ARRAY), 1);
  ffk_object_release(Obj(a));
}

// array.h's inline push (the macro) and the exported function leave the same Arrays and
// refcounts: plain values in place, objects retained, shared Arrays copied, Tuples refused.
TEST_F(Array, InlinePushAndExportedPushAgree) {
  using PushFn = int (*)(ffk_array**, const ffk_any*);
  PushFn exported = &ffk_array_push;
  for (bool inline_form : {true, false}) {
    auto push = [&](ffk_array** a, const ffk_any* v) { return inline_form ? ffk_array_push(a, v) : exported(a, v); };
    ffk_array* a = ffk_array_with_capacity(4);
    ffk_any one = ffk_any_int(1), f = ffk_any_float(0.5);
    ASSERT_EQ(push(&a, &one), 0);
    ASSERT_EQ(push(&a, &f), 0);
    ffk_string* s = ffk_string_new("an element long enough", 22);
    ffk_any sv = ffk_any_object_steal(&s->header);
    ASSERT_EQ(push(&a, &sv), 0);
    EXPECT_EQ(ffk_object_use_count(&s->header), 2u) << "the Array retained the String";
    ffk_any raw = ffk_any_raw_str("raw");
    ASSERT_EQ(push(&a, &raw), 0);
    EXPECT_EQ(R(a), "(1, 0.5, \"an element long enough\", \"raw\")");
    ffk_array* b = a;
    ffk_object_retain(Obj(b));
    ASSERT_EQ(push(&a, &one), 0) << "full and shared: copied";
    EXPECT_NE(a, b);
    EXPECT_EQ(ffk_array_size(b), 4);
    EXPECT_EQ(ffk_array_size(a), 5);
    ASSERT_EQ(push(&a, &one), 0);
    EXPECT_EQ(ffk_array_size(b), 4) << "the other handle is unchanged";
    ffk_tuple* t = ffk_tuple_pack(1, ffk_any_int(0));
    ffk_array* ta = reinterpret_cast<ffk_array*>(t);
    EXPECT_EQ(push(&ta, &one), -1);
    EXPECT_EQ(FetchError(), "TypeError: ffk_array_push: a Tuple has a fixed size");
    ffk_object_release(Obj(ta));
    ffk_object_release(Obj(a));
    ffk_object_release(Obj(b));
    EXPECT_EQ(ffk_object_use_count(&s->header), 1u);
    ffk_any_release(&sv);
  }
}

TEST_F(Array, PushStealTakesOwnership) {
  ffk_array* a = ffk_array_new(nullptr, 0);
  ffk_any s;
  ASSERT_EQ(ffk_any_cstr("a stolen long string", &s), 0);
  ffk_object* obj = s.v_obj;
  ASSERT_EQ(ffk_array_push_steal(&a, &s), 0);
  EXPECT_EQ(s.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_object_use_count(obj), 1u);
  ffk_any view = ffk_any_raw_str("x");
  EXPECT_EQ(ffk_array_push_steal(&a, &view), -1);
  EXPECT_NE(FetchError().find("view owns nothing"), std::string::npos);
  ffk_object_release(Obj(a));
}

TEST_F(Array, PopInsertEraseFollowPython) {
  ffk_array* a = Ints({0, 1, 2, 3, 4});
  OwnedAny out;
  ASSERT_EQ(ffk_array_pop(&a, -1, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 4);
  ASSERT_EQ(ffk_array_pop(&a, 0, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 2, 3}));
  ffk_any v = ffk_any_int(-1);
  ASSERT_EQ(ffk_array_insert(&a, 100, &v), 0);  // clamped to the end
  ASSERT_EQ(ffk_array_insert(&a, -100, &v), 0);  // clamped to the start
  ASSERT_EQ(ffk_array_insert(&a, -1, &v), 0);  // before the last
  EXPECT_EQ(Values(a), std::vector<int64_t>({-1, 1, 2, 3, -1, -1}));
  ASSERT_EQ(ffk_array_erase(&a, 1, 4), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({-1, -1, -1}));
  EXPECT_EQ(ffk_array_erase(&a, 2, 5), -1);
  EXPECT_EQ(FetchError(), "IndexError: Array erase range [2, 5) out of range for size 3");
  EXPECT_EQ(ffk_array_erase(&a, 2, 1), -1);
  ffk_error_clear();
  ASSERT_EQ(ffk_array_erase(&a, 0, 3), 0);
  EXPECT_EQ(ffk_array_pop(&a, -1, &out.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: pop from empty Array");
  ffk_object_release(Obj(a));
}

TEST_F(Array, EraseOnSharedCopiesOnlyWhatStays) {
  ffk_array* a = Ints({1, 2, 3, 4});
  ffk_array* b = a;
  ffk_object_retain(Obj(b));
  ASSERT_EQ(ffk_array_erase(&a, 1, 3), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 4}));
  EXPECT_EQ(Values(b), std::vector<int64_t>({1, 2, 3, 4}));
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
}

TEST_F(Array, ResizeAndReserve) {
  ffk_array* a = Ints({1, 2});
  ASSERT_EQ(ffk_array_resize(&a, 4), 0);
  EXPECT_EQ(ffk_array_items_borrow(a)[3].type_index, FFK_TYPE_NONE);
  ASSERT_EQ(ffk_array_resize(&a, 1), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1}));
  EXPECT_EQ(ffk_array_resize(&a, -1), -1);
  EXPECT_EQ(FetchError(), "ValueError: Array size -1 is negative");
  ASSERT_EQ(ffk_array_reserve(&a, 100), 0);
  EXPECT_GE(ffk_array_capacity(a), 100);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1}));
  ffk_object_release(Obj(a));
}

TEST_F(Array, ExtendWithItselfIsSafeWhenUniqueAndWhenShared) {
  ffk_array* a = Ints({1, 2, 3});
  ASSERT_EQ(ffk_array_extend(&a, ffk_array_items_borrow(a), ffk_array_size(a)), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 2, 3, 1, 2, 3}));
  ffk_array* b = a;
  ffk_object_retain(Obj(b));
  ASSERT_EQ(ffk_array_extend(&a, ffk_array_items_borrow(a) + 4, 2), 0);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1, 2, 3, 1, 2, 3, 2, 3}));
  EXPECT_EQ(Values(b), std::vector<int64_t>({1, 2, 3, 1, 2, 3}));
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
}

TEST_F(Array, ExtendRejectsTensorViewsAndLeavesArrayUnchanged) {
  ffk_array* a = Ints({1});
  ffk_array* before = a;
  ffk_any items[2] = {ffk_any_int(2), ffk_any_none()};
  items[1].type_index = FFK_TYPE_DLTENSOR_PTR;
  EXPECT_EQ(ffk_array_extend(&a, items, 2), -1);
  EXPECT_EQ(FetchError(), "TypeError: a DLTensor* view cannot be stored (item 1)");
  EXPECT_EQ(a, before);
  EXPECT_EQ(Values(a), std::vector<int64_t>({1}));
  ffk_object_release(Obj(a));
}

TEST_F(Array, SliceFollowsPythonRules) {
  ffk_array* a = Ints({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  struct {
    int64_t start, stop, step;
    std::vector<int64_t> want;
  } cases[] = {
      {0, INT64_MAX, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {2, 5, 1, {2, 3, 4}},
      {-3, INT64_MAX, 1, {7, 8, 9}},
      {INT64_MAX, INT64_MIN, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
      {8, 1, -3, {8, 5, 2}},
      {0, INT64_MAX, 4, {0, 4, 8}},
      {5, 2, 1, {}},
      {-100, 100, 3, {0, 3, 6, 9}},
      {INT64_MAX, INT64_MIN, INT64_MIN, {9}},
  };
  for (const auto& c : cases) {
    ffk_array* s = ffk_array_slice(a, c.start, c.stop, c.step);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Values(s), c.want) << c.start << ":" << c.stop << ":" << c.step;
    ffk_object_release(Obj(s));
  }
  EXPECT_EQ(ffk_array_slice(a, 0, 1, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: slice step cannot be zero");
  ffk_object_release(Obj(a));
}

TEST_F(Array, ConcatIndexAndContainsUseKeySemantics) {
  ffk_array* a = Ints({1, 2});
  ffk_any items[2] = {ffk_any_bool(true), ffk_any_float(2.0)};
  ffk_array* b = ffk_array_new(items, 2);
  ffk_array* c = ffk_array_concat(a, b);
  EXPECT_EQ(R(c), "(1, 2, True, 2.0)");
  ffk_any t = ffk_any_bool(true), two = ffk_any_float(2.0), three = ffk_any_int(3);
  int64_t at = -1;
  EXPECT_EQ(ffk_array_index(c, &t, &at), 1);
  EXPECT_EQ(at, 2) << "True is not 1";
  EXPECT_EQ(ffk_array_index(c, &two, &at), 1);
  EXPECT_EQ(at, 3) << "2.0 is not 2";
  EXPECT_FALSE(ffk_array_contains(c, &three));
  for (ffk_array* x : {a, b, c}) ffk_object_release(Obj(x));
}

// ffk_array_find: Python's `in`/index(value, start, stop): structural equality, with leaf
// values (ints, strs in every form, bytes) found in one scan and containers walked.
TEST_F(Array, FindComparesStructurallyWithPythonBounds) {
  ffk_any inner_items[2] = {ffk_any_int(1), ffk_any_int(2)};
  ffk_array* inner = ffk_array_new(inner_items, 2);
  ffk_any small, big, bytes;
  ASSERT_EQ(ffk_any_cstr("abc", &small), 0);
  ASSERT_EQ(ffk_any_cstr("a string long enough to be an object", &big), 0);
  ASSERT_EQ(ffk_any_bytes("a string long enough to be an object", 36, &bytes), 0);
  ffk_any items[8] = {ffk_any_int(1), ffk_any_bool(true), ffk_any_float(1.0), small, big, bytes,
                      ffk_any_object(Obj(inner)), ffk_any_int(1)};
  ffk_array* a = ffk_array_new(items, 8);
  ffk_any_release(&items[6]);  // ffk_any_object's reference: the Array holds its own
  ASSERT_NE(a, nullptr) << FetchError();
  int64_t at = -1;
  ffk_any one = ffk_any_int(1), t = ffk_any_bool(true), f = ffk_any_float(1.0), two = ffk_any_int(2);
  EXPECT_EQ(ffk_array_find(a, &one, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 0);
  EXPECT_EQ(ffk_array_find(a, &t, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 1) << "True is not 1";
  EXPECT_EQ(ffk_array_find(a, &f, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 2) << "1.0 is not 1";
  EXPECT_EQ(ffk_array_find(a, &two, 0, INT64_MAX, &at), 0);
  ffk_any small_view = ffk_any_raw_str("abc"), big_view = ffk_any_raw_str("a string long enough to be an object");
  EXPECT_EQ(ffk_array_find(a, &small_view, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 3) << "a raw view finds the inline str";
  EXPECT_EQ(ffk_array_find(a, &big_view, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 4) << "a raw view finds the String object by content";
  ffk_string* other = ffk_string_new("a string long enough to be an object", 36);
  OwnedAny other_v(ffk_any_object_steal(&other->header));
  EXPECT_EQ(ffk_array_find(a, &other_v.v, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 4) << "another String object with the same text";
  ffk_byte_array view = {"a string long enough to be an object", 36};
  ffk_any bytes_view = ffk_any_byte_array(&view);
  EXPECT_EQ(ffk_array_find(a, &bytes_view, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 5) << "bytes never equal str: the Bytes element, not the String";
  ffk_array* equal_inner = ffk_array_new(inner_items, 2);
  OwnedAny needle(ffk_any_object_steal(Obj(equal_inner)));
  EXPECT_EQ(ffk_array_find(a, &needle.v, 0, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 6) << "a container is found structurally, not by identity";
  // Python's bounds: negative from the end, clamped, an empty range finds nothing.
  EXPECT_EQ(ffk_array_find(a, &one, 1, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 7);
  EXPECT_EQ(ffk_array_find(a, &one, -1, INT64_MAX, &at), 1);
  EXPECT_EQ(at, 7);
  EXPECT_EQ(ffk_array_find(a, &one, 1, -1, &at), 0);
  EXPECT_EQ(ffk_array_find(a, &one, -100, 1, &at), 1);
  EXPECT_EQ(at, 0);
  EXPECT_EQ(ffk_array_find(a, &one, 5, 2, &at), 0);
  EXPECT_EQ(ffk_array_find(a, &one, INT64_MIN, INT64_MIN, &at), 0);
  EXPECT_EQ(ffk_array_find(a, &one, 0, INT64_MAX, nullptr), 1) << "out may be NULL";
  EXPECT_EQ(ffk_array_find(nullptr, &one, 0, INT64_MAX, &at), -1);
  EXPECT_TRUE(PendingError("ValueError", {"array"}));
  EXPECT_EQ(ffk_array_find(a, nullptr, 0, INT64_MAX, &at), -1);
  EXPECT_TRUE(PendingError("ValueError", {"value"}));
  for (ffk_any* x : {&small, &big, &bytes}) ffk_any_release(x);
  ffk_object_release(Obj(inner));
  ffk_object_release(Obj(a));
}

TEST_F(Array, NullHandleAndBadArgumentsAreErrorsNotCrashes) {
  ffk_any v = ffk_any_int(1);
  EXPECT_EQ(ffk_array_push(nullptr, &v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_array_push: the array handle is NULL");
  ffk_array* null_array = nullptr;
  EXPECT_EQ(ffk_array_set(&null_array, 0, &v), -1);
  ffk_error_clear();
  EXPECT_EQ(ffk_array_new(nullptr, 3), nullptr);
  EXPECT_NE(FetchError().find("from 3 items"), std::string::npos);
  EXPECT_EQ(ffk_array_with_capacity(-5), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: Array capacity -5 is out of range");
}

// Every mutator, at every allocation it makes, on a shared and on a unique array:
// a MemoryError, the handle unchanged, nothing leaked.
TEST_F(Array, MutatorsFailCleanlyAtEveryAllocation) {
  ffk_any big;
  ASSERT_EQ(ffk_any_cstr("a string long enough to be an object", &big), 0);
  ffk_any raw = ffk_any_raw_str("a raw view that must be copied into a String");
  struct Op {
    const char* name;
    std::function<int(ffk_array**)> run;
  } ops[] = {
      {"set", [&](ffk_array** a) { return ffk_array_set(a, 1, &raw); }},
      {"push", [&](ffk_array** a) { return ffk_array_push(a, &raw); }},
      {"insert", [&](ffk_array** a) { return ffk_array_insert(a, 0, &raw); }},
      {"pop", [&](ffk_array** a) {
         ffk_any out;
         int rc = ffk_array_pop(a, 0, &out);
         ffk_any_release(&out);
         return rc;
       }},
      {"erase", [&](ffk_array** a) { return ffk_array_erase(a, 0, 1); }},
      {"resize", [&](ffk_array** a) { return ffk_array_resize(a, 40); }},
      {"reserve", [&](ffk_array** a) { return ffk_array_reserve(a, 40); }},
      {"extend", [&](ffk_array** a) {
         ffk_any items[3] = {raw, big, raw};
         return ffk_array_extend(a, items, 3);
       }},
  };
  for (bool shared : {false, true}) {
    for (const auto& op : ops) {
      SCOPED_TRACE(std::string(op.name) + (shared ? " (shared)" : " (unique)"));
      ffk_any init[3] = {ffk_any_int(1), big, ffk_any_int(3)};
      ffk_array* a = ffk_array_new(init, 3);
      ffk_array* other = shared ? a : nullptr;
      if (shared) ffk_object_retain(Obj(other));
      std::string before = R(a);
      ffk::test::SweepAllocationFailures(
          [&] {
            ffk_array* h = a;
            if (op.run(&h) != 0) {
              EXPECT_EQ(h, a) << "a failed mutator must leave the handle unchanged";
              return false;
            }
            a = h;
            return true;
          },
          [&] { EXPECT_EQ(R(a), before); });
      if (shared) {
        EXPECT_EQ(R(other), before) << "the other handle never changes";
        ffk_object_release(Obj(other));
      }
      ffk_object_release(Obj(a));
    }
  }
  ffk_any_release(&big);
}

// Random operations against std::vector<int64_t>, 100,000 of them; the seed is printed
// on failure so a failing sequence can be replayed.
TEST_F(Array, RandomOperationsMatchStdVector) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<int64_t> model;
  ffk_array* a = ffk_array_new(nullptr, 0);
  ffk_array* snapshot = nullptr;  // a second handle that pins the object now and then
  std::vector<int64_t> snapshot_model;
  for (int step = 0; step < 100000; ++step) {
    int64_t n = static_cast<int64_t>(model.size());
    int64_t x = static_cast<int64_t>(rng() % 1000);
    ffk_any v = ffk_any_int(x);
    switch (rng() % 9) {
      case 0:
      case 1:
        ASSERT_EQ(ffk_array_push(&a, &v), 0);
        model.push_back(x);
        break;
      case 2:
        if (n > 0) {
          int64_t i = static_cast<int64_t>(rng() % n);
          ASSERT_EQ(ffk_array_set(&a, i, &v), 0);
          model[i] = x;
        }
        break;
      case 3: {
        int64_t i = static_cast<int64_t>(rng() % (n + 1));
        ASSERT_EQ(ffk_array_insert(&a, i, &v), 0);
        model.insert(model.begin() + i, x);
        break;
      }
      case 4:
        if (n > 0) {
          int64_t i = static_cast<int64_t>(rng() % n);
          ffk_any out;
          ASSERT_EQ(ffk_array_pop(&a, i, &out), 0);
          ASSERT_EQ(out.v_int, model[i]);
          model.erase(model.begin() + i);
        }
        break;
      case 5: {
        int64_t b = static_cast<int64_t>(rng() % (n + 1));
        int64_t e = b + static_cast<int64_t>(rng() % (n - b + 1));
        if (rng() % 8 == 0) {  // keep erases rare so the array grows
          ASSERT_EQ(ffk_array_erase(&a, b, e), 0);
          model.erase(model.begin() + b, model.begin() + e);
        }
        break;
      }
      case 6:
        if (n < 50) {
          ASSERT_EQ(ffk_array_extend(&a, ffk_array_items_borrow(a), n), 0);
          model.insert(model.end(), model.begin(), model.end());
        }
        break;
      case 7:  // take or drop a snapshot: the next mutation must copy
        if (snapshot != nullptr) {
          ASSERT_EQ(Values(snapshot), snapshot_model);
          ffk_object_release(Obj(snapshot));
          snapshot = nullptr;
        } else {
          snapshot = a;
          ffk_object_retain(Obj(a));
          snapshot_model = model;
        }
        break;
      case 8: {
        int64_t m = static_cast<int64_t>(rng() % (n + 3));
        ASSERT_EQ(ffk_array_resize(&a, m), 0);
        model.resize(m, 0);
        for (int64_t i = n; i < m; ++i) {
          ffk_any z = ffk_any_int(0);
          ASSERT_EQ(ffk_array_set(&a, i, &z), 0);
        }
        break;
      }
    }
    ASSERT_EQ(ffk_array_size(a), static_cast<int64_t>(model.size())) << "step " << step;
    if (step % 997 == 0) {
      ASSERT_EQ(Values(a), model) << "step " << step;
    }
  }
  EXPECT_EQ(Values(a), model);
  if (snapshot) {
    EXPECT_EQ(Values(snapshot), snapshot_model);
    ffk_object_release(Obj(snapshot));
  }
  ffk_object_release(Obj(a));
}

}  // namespace
