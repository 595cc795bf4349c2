// Tests of ffikit/shape.h: the immutable Shape object.
#include <ffikit/shape.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;
using ffk::test::SweepAllocationFailures;

class Shape : public ffk::test::Test {};

ffk_object* Obj(ffk_shape* s) { return &s->header; }

// A Shape released on scope exit.
struct OwnedShape {
  ffk_shape* s;
  explicit OwnedShape(ffk_shape* x) : s(x) {}
  OwnedShape(const OwnedShape&) = delete;
  OwnedShape& operator=(const OwnedShape&) = delete;
  ~OwnedShape() {
    if (s != nullptr) ffk_object_release(&s->header);
  }
};

TEST_F(Shape, NewCopiesDimensionsAndComputesProduct) {
  int64_t dims[] = {2, 3, 4};
  OwnedShape shape(ffk_shape_new(dims, 3));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  ffk_shape* s = shape.s;
  EXPECT_EQ(s->header.type_index, FFK_TYPE_SHAPE);
  EXPECT_EQ(ffk_shape_size(s), 3u);
  EXPECT_EQ(ffk_shape_product(s), 24);
  const int64_t* data = ffk_shape_data_borrow(s);
  EXPECT_NE(data, dims) << "the dimensions must be copied";
  EXPECT_EQ(data, s->data);
  EXPECT_EQ(data[0], 2);
  EXPECT_EQ(data[1], 3);
  EXPECT_EQ(data[2], 4);
  dims[0] = 100;
  EXPECT_EQ(data[0], 2) << "the shape changed when the caller's array did";
}

TEST_F(Shape, DimensionsFollowTheHeaderInOneAllocation) {
  int64_t dims[] = {5, 6};
  int64_t allocs_before = ffk_debug_allocation_count();
  OwnedShape shape(ffk_shape_new(dims, 2));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_debug_allocation_count() - allocs_before, 1);
  EXPECT_EQ(ffk_shape_data_borrow(shape.s), reinterpret_cast<const int64_t*>(shape.s + 1));
}

TEST_F(Shape, NewObjectHasUseCountOneAndIsCountedLive) {
  int64_t dims[] = {7};
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 0);
  ffk_shape* s = ffk_shape_new(dims, 1);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u);
  EXPECT_TRUE(ffk_object_is_unique(Obj(s)));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 1);
  ffk_object_retain(Obj(s));
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 2u);
  ffk_object_release(Obj(s));
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u);
  ffk_object_release(Obj(s));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 0);
}

TEST_F(Shape, ZeroDimensionalShapeHasProductOne) {
  OwnedShape a(ffk_shape_new(nullptr, 0));
  ASSERT_NE(a.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_size(a.s), 0u);
  EXPECT_EQ(ffk_shape_product(a.s), 1);

  int64_t unused = 9;
  OwnedShape b(ffk_shape_new(&unused, 0));
  ASSERT_NE(b.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_size(b.s), 0u);
  EXPECT_EQ(ffk_shape_product(b.s), 1);
}

TEST_F(Shape, ZeroDimensionMakesProductZero) {
  int64_t dims[] = {3, 0, 5};
  OwnedShape shape(ffk_shape_new(dims, 3));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_product(shape.s), 0);
  EXPECT_EQ(ffk_shape_size(shape.s), 3u);
}

TEST_F(Shape, NegativeDimensionsAreAllowed) {
  int64_t dims[] = {-1, 4};
  OwnedShape shape(ffk_shape_new(dims, 2));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_data_borrow(shape.s)[0], -1);
  EXPECT_EQ(ffk_shape_data_borrow(shape.s)[1], 4);
  EXPECT_EQ(ffk_shape_product(shape.s), -4);
}

TEST_F(Shape, LargeProductThatFitsIsKept) {
  int64_t dims[] = {INT64_C(1) << 31, INT64_C(1) << 31, 2};  // 2^63 - would overflow by one
  int64_t fits[] = {INT64_C(1) << 31, INT64_C(1) << 31, 1};  // 2^62
  OwnedShape shape(ffk_shape_new(fits, 3));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_product(shape.s), INT64_C(1) << 62);

  EXPECT_EQ(ffk_shape_new(dims, 3), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();

  int64_t max_dims[] = {INT64_MAX, 1};
  OwnedShape max_shape(ffk_shape_new(max_dims, 2));
  ASSERT_NE(max_shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_product(max_shape.s), INT64_MAX);
}

TEST_F(Shape, ProductOverflowFailsWithValueErrorNamingTheDimension) {
  // The running product first overflows at index 13 (value 3).
  std::vector<int64_t> dims(12, 1);
  dims.push_back(INT64_MAX);
  dims.push_back(3);
  dims.push_back(1);
  EXPECT_EQ(ffk_shape_new(dims.data(), dims.size()), nullptr);
  std::string err = FetchError();
  EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
  EXPECT_NE(err.find("13"), std::string::npos) << "does not name dimension 13: " << err;
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 0);
}

TEST_F(Shape, NegativeProductOverflowFails) {
  int64_t dims[] = {INT64_MIN, -1};
  EXPECT_EQ(ffk_shape_new(dims, 2), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();

  int64_t big_negative[] = {-(INT64_C(1) << 32), INT64_C(1) << 32};
  EXPECT_EQ(ffk_shape_new(big_negative, 2), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();

  int64_t min_fits[] = {INT64_MIN, 1};
  OwnedShape shape(ffk_shape_new(min_fits, 2));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_product(shape.s), INT64_MIN);
}

// The product of dimensions that include a 0 is 0, which does not overflow, wherever
// the 0 is (c10's safe_multiplies_u64 and NumPy treat it the same way).
TEST_F(Shape, ZeroDimensionAfterHugeOnesIsNotAnOverflow) {
  int64_t zero_first[] = {0, INT64_MAX, INT64_MAX};
  OwnedShape a(ffk_shape_new(zero_first, 3));
  ASSERT_NE(a.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_shape_product(a.s), 0);

  int64_t zero_last[] = {INT64_MAX, INT64_MAX, 0};
  OwnedShape b(ffk_shape_new(zero_last, 3));
  EXPECT_NE(b.s, nullptr) << FetchError();
  if (b.s != nullptr) {
    EXPECT_EQ(ffk_shape_product(b.s), 0);
  }
}

TEST_F(Shape, NullDimsWithPositiveNdimFailsWithValueError) {
  EXPECT_EQ(ffk_shape_new(nullptr, 2), nullptr);
  std::string err = FetchError();
  EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

TEST_F(Shape, GetReturnsDimensionsWithNegativeIndicesFromTheEnd) {
  int64_t dims[] = {2, 3};
  OwnedShape shape(ffk_shape_new(dims, 2));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  int64_t v = -99;
  ASSERT_EQ(ffk_shape_get(shape.s, 0, &v), 0) << FetchError();
  EXPECT_EQ(v, 2);
  ASSERT_EQ(ffk_shape_get(shape.s, 1, &v), 0) << FetchError();
  EXPECT_EQ(v, 3);
  ASSERT_EQ(ffk_shape_get(shape.s, -1, &v), 0) << FetchError();
  EXPECT_EQ(v, 3);
  ASSERT_EQ(ffk_shape_get(shape.s, -2, &v), 0) << FetchError();
  EXPECT_EQ(v, 2);
}

TEST_F(Shape, GetOutOfRangeFailsWithIndexError) {
  int64_t dims[] = {2, 3};
  OwnedShape shape(ffk_shape_new(dims, 2));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  int64_t v = -99;
  EXPECT_EQ(ffk_shape_get(shape.s, 5, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index 5 out of range for size 2");
  EXPECT_EQ(ffk_shape_get(shape.s, 2, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index 2 out of range for size 2");
  EXPECT_EQ(ffk_shape_get(shape.s, -3, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index -3 out of range for size 2");
  EXPECT_EQ(ffk_shape_get(shape.s, INT64_MIN, &v), -1);
  EXPECT_EQ(FetchError(),
            "IndexError: Shape index -9223372036854775808 out of range for size 2");
  EXPECT_EQ(ffk_shape_get(shape.s, INT64_MAX, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index 9223372036854775807 out of range for size 2");
}

TEST_F(Shape, GetOnZeroDimensionalShapeAlwaysFails) {
  OwnedShape shape(ffk_shape_new(nullptr, 0));
  ASSERT_NE(shape.s, nullptr) << FetchError();
  int64_t v = -99;
  EXPECT_EQ(ffk_shape_get(shape.s, 0, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index 0 out of range for size 0");
  EXPECT_EQ(ffk_shape_get(shape.s, -1, &v), -1);
  EXPECT_EQ(FetchError(), "IndexError: Shape index -1 out of range for size 0");
}

TEST_F(Shape, EqualComparesDimensions) {
  int64_t a_dims[] = {2, 3};
  int64_t b_dims[] = {2, 3};
  int64_t c_dims[] = {3, 2};
  int64_t d_dims[] = {2, 3, 1};
  OwnedShape a(ffk_shape_new(a_dims, 2));
  OwnedShape b(ffk_shape_new(b_dims, 2));
  OwnedShape c(ffk_shape_new(c_dims, 2));
  OwnedShape d(ffk_shape_new(d_dims, 3));
  OwnedShape prefix(ffk_shape_new(d_dims, 2));
  OwnedShape e0(ffk_shape_new(nullptr, 0));
  OwnedShape f0(ffk_shape_new(nullptr, 0));
  for (ffk_shape* s : {a.s, b.s, c.s, d.s, prefix.s, e0.s, f0.s}) ASSERT_NE(s, nullptr);
  EXPECT_TRUE(ffk_shape_equal(a.s, a.s));
  EXPECT_TRUE(ffk_shape_equal(a.s, b.s));
  EXPECT_TRUE(ffk_shape_equal(b.s, a.s));
  EXPECT_TRUE(ffk_shape_equal(a.s, prefix.s));
  EXPECT_FALSE(ffk_shape_equal(a.s, c.s));
  EXPECT_FALSE(ffk_shape_equal(a.s, d.s));
  EXPECT_FALSE(ffk_shape_equal(d.s, a.s));
  EXPECT_FALSE(ffk_shape_equal(a.s, e0.s));
  EXPECT_TRUE(ffk_shape_equal(e0.s, f0.s));
  EXPECT_FALSE(ffk_error_occurred());
}

TEST_F(Shape, ReprListsDimensions) {
  int64_t dims[] = {2, 3};
  ffk_shape* s = ffk_shape_new(dims, 2);
  ASSERT_NE(s, nullptr) << FetchError();
  OwnedAny v(ffk_any_object_steal(Obj(s)));
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SHAPE);
  EXPECT_EQ(v.v.v_obj, Obj(s));
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u) << "steal must not add a reference";
  EXPECT_EQ(Repr(v.v), "Shape(2, 3)");
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u) << "repr leaked a reference";
}

TEST_F(Shape, ReprOfOneDimensionHasNoTrailingComma) {
  int64_t dims[] = {5};
  OwnedAny v(ffk_any_object_steal(Obj(ffk_shape_new(dims, 1))));
  ASSERT_EQ(v.v.type_index, FFK_TYPE_SHAPE) << FetchError();
  EXPECT_EQ(Repr(v.v), "Shape(5)");
}

TEST_F(Shape, ReprOfNegativeAndZeroDimensions) {
  int64_t dims[] = {-1, 0, INT64_MAX};
  OwnedAny v(ffk_any_object_steal(Obj(ffk_shape_new(dims, 3))));
  ASSERT_EQ(v.v.type_index, FFK_TYPE_SHAPE) << FetchError();
  EXPECT_EQ(Repr(v.v), "Shape(-1, 0, 9223372036854775807)");
}

// shape.h does not spell out the 0-d form; "Shape()" follows from "Shape(2, 3)".
TEST_F(Shape, ReprOfZeroDimensionalShapeIsEmptyCall) {
  OwnedAny v(ffk_any_object_steal(Obj(ffk_shape_new(nullptr, 0))));
  ASSERT_EQ(v.v.type_index, FFK_TYPE_SHAPE) << FetchError();
  EXPECT_EQ(Repr(v.v), "Shape()");
}

TEST_F(Shape, NewSurvivesEveryAllocationFailure) {
  int64_t dims[] = {4, 5, 6};
  int allocations = SweepAllocationFailures(
      [&] {
        ffk_shape* s = ffk_shape_new(dims, 3);
        if (s == nullptr) return false;
        bool ok = ffk_shape_product(s) == 120 && ffk_shape_size(s) == 3;
        ffk_object_release(Obj(s));
        return ok;
      },
      [&] { EXPECT_EQ(dims[0], 4); });
  EXPECT_GE(allocations, 1);
}

}  // namespace
