// ffikit/tensor.h: ffk_tensor_check_shape, the one rule for a shape (and strides) that
// every function taking a shape applies, and that bindings ask before building anything.
// Each class of bad shape is tried through the rule itself and through every C entry that
// takes a shape, which must give the same answer with its own operation in front.
#include <ffikit/ffikit.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class ShapeRule : public ffk::test::Test {};
using ffk::test::FetchError;

const DLDevice kCpu = {kDLCPU, 0};
const DLDataType kF32 = {kDLFloat, 32, 1};
const DLDataType kU8 = {kDLUInt, 8, 1};
ffk_object* Obj(void* t) { return reinterpret_cast<ffk_object*>(t); }

struct Case {
  std::vector<int64_t> shape;
  int64_t ndim;  // the length given (may differ from shape.size())
  const char* message;  // after "ValueError: <what>: "
};

const std::vector<Case>& BadShapes() {
  static const std::vector<Case> cases = {
      {{2, -3}, 2, "shape[1] is -3, and a dimension cannot be negative"},
      {{INT64_MIN}, 1, "shape[0] is -9223372036854775808, and a dimension cannot be negative"},
      {std::vector<int64_t>(33, 1), 33, "shape has 33 dimensions; a tensor has 0 to 32"},
      {{}, -1, "shape has -1 dimensions; a tensor has 0 to 32"},
      {{}, INT64_C(1) << 40, "shape has 1099511627776 dimensions; a tensor has 0 to 32"},
      {{INT64_MAX, 2}, 2, "shape [9223372036854775807, 2] has more elements than fit in 64 bits"},
      {{INT64_C(1) << 40, INT64_C(1) << 40}, 2,
       "shape [1099511627776, 1099511627776] has more elements than fit in 64 bits"},
      {{INT64_C(1) << 61}, 1, "shape [2305843009213693952] of float32 has more bytes than fit in 64 bits"},
      {{0, INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40}, 4,
       "the contiguous strides of shape [0, 1099511627776, 1099511627776, 1099511627776] do not fit in 64 bits"},
  };
  return cases;
}

TEST_F(ShapeRule, GoodShapesGiveTheirElementsAndBytes) {
  int64_t shape[3] = {2, 3, 4}, numel = -1, nbytes = -1;
  EXPECT_EQ(ffk_tensor_check_shape("empty", 3, shape, nullptr, kF32, &numel, &nbytes), 0);
  EXPECT_EQ(numel, 24);
  EXPECT_EQ(nbytes, 96);
  EXPECT_EQ(ffk_tensor_check_shape("empty", 0, nullptr, nullptr, kF32, &numel, &nbytes), 0);
  EXPECT_EQ(numel, 1);
  EXPECT_EQ(nbytes, 4);
  int64_t zero[2] = {0, INT64_MAX};  // no elements: nothing overflows
  EXPECT_EQ(ffk_tensor_check_shape(nullptr, 2, zero, nullptr, kF32, &numel, nullptr), 0);
  EXPECT_EQ(numel, 0);
  int64_t strides[2] = {INT64_MIN, INT64_MAX};  // any strides where nothing is addressed
  EXPECT_EQ(ffk_tensor_check_shape(nullptr, 2, zero, strides, kF32, nullptr, nullptr), 0);
  EXPECT_FALSE(ffk_error_occurred());
}

// Found by tensor_shape_fuzzer: the rule multiplied the bytes dimension by dimension, so
// 4 * 2^62 overflowed before the 0 made them 0, while its error path (elements first, then
// bytes) found nothing wrong and returned 0 without the sizes: zeros allocated garbage.
TEST_F(ShapeRule, AZeroDimensionAfterAHugeOneHasNoBytes) {
  int64_t shape[2] = {INT64_C(1) << 62, 0}, numel = -1, nbytes = -1;
  EXPECT_EQ(ffk_tensor_check_shape("zeros", 2, shape, nullptr, kF32, &numel, &nbytes), 0) << FetchError();
  EXPECT_EQ(numel, 0);
  EXPECT_EQ(nbytes, 0);
  ffk_tensor* t = ffk_tensor_zeros(2, shape, kF32, kCpu);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_nbytes(t), 0);
  ffk_object_release(Obj(t));
}

TEST_F(ShapeRule, EveryBadShapeIsNamedWithTheOperationArgumentAndValue) {
  for (const Case& c : BadShapes()) {
    SCOPED_TRACE(c.message);
    // The rule reads nothing when ndim is out of range: a NULL shape must be fine there.
    const int64_t* p = c.shape.empty() ? nullptr : c.shape.data();
    EXPECT_EQ(ffk_tensor_check_shape("empty", c.ndim, p, nullptr, kF32, nullptr, nullptr), -1);
    EXPECT_EQ(FetchError(), std::string("ValueError: empty: ") + c.message);
    EXPECT_EQ(ffk_tensor_check_shape(nullptr, c.ndim, p, nullptr, kF32, nullptr, nullptr), -1);
    EXPECT_EQ(FetchError(), std::string("ValueError: ") + c.message);
  }
}

TEST_F(ShapeRule, EveryEntryTakingAShapeAppliesTheRule) {
  ffk_storage* storage = ffk_storage_new(kCpu, 64, 0);
  ffk_tensor* base = ffk_tensor_zeros(1, std::vector<int64_t>{16}.data(), kF32, kCpu);
  ASSERT_NE(storage, nullptr);
  ASSERT_NE(base, nullptr);
  for (const Case& c : BadShapes()) {
    if (c.ndim < 0 || c.ndim > INT32_MAX) continue;  // the C entries take an int32 ndim
    SCOPED_TRACE(c.message);
    int32_t n = static_cast<int32_t>(c.ndim);
    const int64_t* p = c.shape.empty() ? nullptr : c.shape.data();
    std::string m = c.message;
    EXPECT_EQ(ffk_tensor_empty(n, p, kF32, kCpu), nullptr);
    EXPECT_EQ(FetchError(), "ValueError: empty: " + m);
    EXPECT_EQ(ffk_tensor_zeros(n, p, kF32, kCpu), nullptr);
    EXPECT_EQ(FetchError(), "ValueError: zeros: " + m);
    EXPECT_EQ(ffk_tensor_new_shared(nullptr, n, p, kF32), nullptr);
    EXPECT_EQ(FetchError(), "ValueError: empty_shared: " + m);
    EXPECT_EQ(ffk_tensor_from_storage(storage, n, p, nullptr, 0, kF32), nullptr);
    EXPECT_EQ(FetchError(), "ValueError: from_storage: " + m);
    EXPECT_EQ(ffk_tensor_check_bytes("unpickle", n, p, kF32, nullptr, 0), -1);
    EXPECT_EQ(FetchError(), "ValueError: unpickle: " + m);
    if (m.find("negative") == std::string::npos) {  // reshape reads -1 as "inferred"; its own case below
      EXPECT_EQ(ffk_tensor_reshape(base, n, p), nullptr);
      EXPECT_EQ(FetchError(), "ValueError: reshape: " + m);
    }
    if (m.find("contiguous strides") == std::string::npos) {  // as_strided has strides of its own
      std::vector<int64_t> strides(c.shape.size(), 1);
      EXPECT_EQ(ffk_tensor_as_strided(base, n, p, strides.empty() ? nullptr : strides.data(), 0), nullptr);
      EXPECT_EQ(FetchError(), "ValueError: as_strided: " + m);
    }
  }
  ffk_object_release(Obj(base));
  ffk_object_release(Obj(storage));
}

TEST_F(ShapeRule, ReshapeInfersOneDimensionAndRefusesOtherNegatives) {
  ffk_tensor* base = ffk_tensor_zeros(1, std::vector<int64_t>{6}.data(), kU8, kCpu);
  ASSERT_NE(base, nullptr);
  int64_t infer[2] = {-1, 3}, two[2] = {-1, -1}, other[2] = {2, -3};
  ffk_tensor* r = ffk_tensor_reshape(base, 2, infer);
  ASSERT_NE(r, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_dltensor_borrow(r)->shape[0], 2);
  ffk_object_release(Obj(r));
  EXPECT_EQ(ffk_tensor_reshape(base, 2, two), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: reshape: shape[1] is -1, and a dimension cannot be negative");
  EXPECT_EQ(ffk_tensor_reshape(base, 2, other), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: reshape: shape[1] is -3, and a dimension cannot be negative");
  ffk_object_release(Obj(base));
}

TEST_F(ShapeRule, StridesMayBeAnythingWhoseReachFits) {
  int64_t shape[2] = {3, 2}, far[2] = {INT64_MAX / 2 + 1, 1}, back[2] = {-2, -1};
  EXPECT_EQ(ffk_tensor_check_shape("as_strided", 2, shape, back, kF32, nullptr, nullptr), 0);
  EXPECT_EQ(ffk_tensor_check_shape("as_strided", 2, shape, far, kF32, nullptr, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [3, 2] with strides [4611686018427387904, 1] of float32 "
                          "reaches 2^63 bytes or more from its first element");
  ffk_tensor* base = ffk_tensor_zeros(1, std::vector<int64_t>{16}.data(), kF32, kCpu);
  EXPECT_EQ(ffk_tensor_as_strided(base, 2, shape, far, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [3, 2] with strides [4611686018427387904, 1] of float32 "
                          "reaches 2^63 bytes or more from its first element");
  ffk_object_release(Obj(base));
}

}  // namespace
