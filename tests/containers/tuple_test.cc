// ffikit/tuple.h: fixed-size Arrays: packing, copy-on-write set, size changes refused.
#include <ffikit/ffikit.h>

#include "tests/support/ffk_test.h"

namespace {

class Tuple : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

std::string R(ffk_tuple* t) {
  ffk_any v = ffk_any_object(&t->header);
  std::string s = ffk::test::Repr(v);
  ffk_any_release(&v);
  return s;
}

TEST_F(Tuple, PackBuildsOneObjectOfTypeTuple) {
  ffk_tuple* t = ffk_tuple_pack(3, ffk_any_int(1), ffk_any_float(2.5), ffk_any_raw_str("three"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->header.type_index, FFK_TYPE_TUPLE);
  EXPECT_EQ(ffk_tuple_size(t), 3);
  EXPECT_EQ(ffk_array_capacity(t), 3) << "exactly N elements in one allocation";
  EXPECT_EQ(R(t), "(1, 2.5, \"three\")");
  OwnedAny v;
  ASSERT_EQ(ffk_tuple_get(t, 1, &v.v), 0);
  EXPECT_EQ(v.v.v_float, 2.5);
  EXPECT_EQ(ffk_tuple_get(t, 3, &v.v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Tuple index 3 out of range for size 3");
  ffk_object_release(&t->header);
}

TEST_F(Tuple, EmptyAndSingleReprs) {
  ffk_tuple* e = ffk_tuple_new(0, nullptr);
  ffk_tuple* one = ffk_tuple_pack(1, ffk_any_none());
  EXPECT_EQ(R(e), "()");
  EXPECT_EQ(R(one), "(None,)");
  ffk_object_release(&e->header);
  ffk_object_release(&one->header);
}

TEST_F(Tuple, SetIsCopyOnWriteAndKeepsTheType) {
  ffk_tuple* t = ffk_tuple_pack(2, ffk_any_int(1), ffk_any_int(2));
  ffk_tuple* other = t;
  ffk_object_retain(&other->header);
  ffk_any v = ffk_any_int(9);
  ASSERT_EQ(ffk_tuple_set(&t, 0, &v), 0);
  EXPECT_NE(t, other);
  EXPECT_EQ(t->header.type_index, FFK_TYPE_TUPLE);
  EXPECT_EQ(R(t), "(9, 2)");
  EXPECT_EQ(R(other), "(1, 2)");
  ffk_tuple* before = t;
  ASSERT_EQ(ffk_tuple_set(&t, 1, &v), 0);
  EXPECT_EQ(t, before) << "unique: in place";
  ffk_object_release(&t->header);
  ffk_object_release(&other->header);
}

TEST_F(Tuple, SizeChangingArrayFunctionsAreRefused) {
  ffk_tuple* t = ffk_tuple_pack(1, ffk_any_int(1));
  ffk_any v = ffk_any_int(2);
  EXPECT_EQ(ffk_array_push(&t, &v), -1);
  EXPECT_EQ(FetchError(), "TypeError: ffk_array_push: a Tuple has a fixed size");
  EXPECT_EQ(ffk_array_resize(&t, 3), -1);
  EXPECT_EQ(FetchError(), "TypeError: ffk_array_resize: a Tuple has a fixed size");
  EXPECT_EQ(ffk_array_erase(&t, 0, 1), -1);
  ffk_error_clear();
  EXPECT_EQ(ffk_tuple_size(t), 1);
  ffk_object_release(&t->header);
}

TEST_F(Tuple, SetOnAnArrayThroughTheTupleApiIsATypeError) {
  ffk_array* a = ffk_array_new(nullptr, 0);
  ffk_any v = ffk_any_int(1);
  ASSERT_EQ(ffk_array_push(&a, &v), 0);
  EXPECT_EQ(ffk_tuple_set(&a, 0, &v), -1);
  EXPECT_EQ(FetchError(), "TypeError: ffk_tuple_set: expected Tuple but got Array");
  ffk_object_release(&a->header);
}

TEST_F(Tuple, PackRejectsTooManyValues) {
  EXPECT_EQ(ffk_tuple_pack(65), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_tuple_pack packs 0 to 64 values, not 65");
}

TEST_F(Tuple, ConstructionFailsCleanlyAtEveryAllocation) {
  ffk::test::SweepAllocationFailures([] {
    ffk_tuple* t = ffk_tuple_pack(2, ffk_any_raw_str("a view copied into a String"), ffk_any_int(1));
    if (t == nullptr) return false;
    ffk_object_release(&t->header);
    return true;
  });
}

}  // namespace
