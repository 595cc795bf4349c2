// ffikit/tensor.h: creation, metadata, every view against a reference computation of
// element addresses, contiguity rules, bounds checks, copies, fill and repr.
#include <ffikit/ffikit.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Tensor : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

const DLDevice kCpu = {kDLCPU, 0};
const DLDataType kF32 = {kDLFloat, 32, 1};
const DLDataType kI64 = {kDLInt, 64, 1};
const DLDataType kI32x = {kDLInt, 32, 1};
const DLDataType kU8x = {kDLUInt, 8, 1};
ffk_object* Obj(ffk_tensor* t) { return reinterpret_cast<ffk_object*>(t); }

struct T {  // owns a tensor
  ffk_tensor* t;
  explicit T(ffk_tensor* x) : t(x) {}
  ~T() { ffk_object_release(Obj(t)); }
  const DLTensor* dl() const { return ffk_tensor_dltensor_borrow(t); }
};

// An int64 tensor 0, 1, 2, ... of `shape`.
ffk_tensor* Iota(std::vector<int64_t> shape) {
  ffk_tensor* t = ffk_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), kI64, kCpu);
  int64_t* p = static_cast<int64_t*>(ffk_tensor_data_ptr(t));
  for (int64_t i = 0; i < ffk_tensor_numel(t); ++i) p[i] = i;
  return t;
}

// The element at a multi-index, computed from the DLTensor alone.
int64_t At(const ffk_tensor* t, std::vector<int64_t> idx) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * d->strides[i];
  return reinterpret_cast<const int64_t*>(static_cast<const char*>(d->data) + d->byte_offset)[off];
}

std::vector<int64_t> Shape(const ffk_tensor* t) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  return std::vector<int64_t>(d->shape, d->shape + d->ndim);
}
std::vector<int64_t> Strides(const ffk_tensor* t) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  return std::vector<int64_t>(d->strides, d->strides + d->ndim);
}

TEST_F(Tensor, EmptyAndZerosHaveContiguousLayout) {
  int64_t shape[3] = {2, 3, 4};
  T a(ffk_tensor_zeros(3, shape, kF32, kCpu));
  ASSERT_NE(a.t, nullptr);
  EXPECT_EQ(Strides(a.t), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ffk_tensor_numel(a.t), 24);
  EXPECT_EQ(ffk_tensor_nbytes(a.t), 96);
  EXPECT_TRUE(ffk_tensor_is_contiguous(a.t));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.dl()->data) % 64, 0u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(static_cast<float*>(ffk_tensor_data_ptr(a.t))[i], 0.0f);
  EXPECT_NE(ffk_tensor_storage_borrow(a.t), nullptr);
  ffk_any v = ffk_any_object(Obj(a.t));
  EXPECT_EQ(Repr(v), "float32[2, 3, 4]@cpu:0");
  ffk_any_release(&v);
  T scalar(ffk_tensor_empty(0, nullptr, kI64, kCpu));
  EXPECT_EQ(ffk_tensor_numel(scalar.t), 1);
  ffk_any s = ffk_any_object(Obj(scalar.t));
  EXPECT_EQ(Repr(s), "int64[]@cpu:0");
  ffk_any_release(&s);
}

TEST_F(Tensor, CreationErrorsNameTheValues) {
  int64_t bad[2] = {2, -3};
  EXPECT_EQ(ffk_tensor_empty(2, bad, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: shape[1] is -3, and a dimension cannot be negative");
  int64_t one[1] = {4};
  EXPECT_EQ(ffk_tensor_empty(1, one, DLDataType{kDLFloat, 32, 4}, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: tensors cannot hold dtype float32x4: an element has one lane, and "
                          "float32x4 has 4 (vector dtypes are not supported)");
  EXPECT_EQ(ffk_tensor_empty(1, one, DLDataType{FFK_DTYPE_FLOAT6_E2M3FN, 6, 1}, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: tensors cannot hold dtype float6_e2m3fn: its elements are 6 bits, not a "
                          "whole number of bytes");
  EXPECT_EQ(ffk_tensor_empty(33, one, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: shape has 33 dimensions; a tensor has 0 to 32");
  int64_t huge[3] = {1LL << 40, 1LL << 40, 1LL << 40};
  EXPECT_EQ(ffk_tensor_empty(3, huge, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(),
            "ValueError: empty: shape [1099511627776, 1099511627776, 1099511627776] has more elements than fit in 64 bits");
  int64_t bytes_overflow[1] = {INT64_C(1) << 61};  // 2^61 elements fit; 2^63 bytes do not
  EXPECT_EQ(ffk_tensor_zeros(1, bytes_overflow, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: zeros: shape [2305843009213693952] of float32 has more bytes than fit in 64 bits");
  // 2^63 - 4 bytes fit in 64 bits, but no block is larger than PTRDIFF_MAX: a MemoryError,
  // without malloc being asked for it (valgrind calls such a size a bad argument).
  int64_t past_ptrdiff[1] = {(INT64_C(1) << 61) - 1};
  EXPECT_EQ(ffk_tensor_zeros(1, past_ptrdiff, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError().rfind("MemoryError: ", 0), 0u);
  EXPECT_EQ(ffk_tensor_empty(2, nullptr, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: the shape of a 2-d tensor is NULL");
  int64_t negative_and_bad_dtype[1] = {-1};  // the shape is checked first
  EXPECT_EQ(ffk_tensor_empty(1, negative_and_bad_dtype, DLDataType{kDLFloat, 4, 1}, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty: shape[0] is -1, and a dimension cannot be negative");
  // No elements, but strides past 64 bits: refused, as PyTorch does ("Stride calculation overflowed").
  int64_t zero_then_huge[4] = {0, INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40};
  const char* strides_error =
      "ValueError: the contiguous strides of shape [0, 1099511627776, 1099511627776, 1099511627776] do not fit "
      "in 64 bits";
  EXPECT_EQ(ffk_tensor_empty(4, zero_then_huge, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), std::string("ValueError: empty: ") + (strides_error + 12));
  ffk_storage* storage = ffk_storage_new(kCpu, 16, 0);
  EXPECT_EQ(ffk_tensor_from_storage(storage, 4, zero_then_huge, nullptr, 0, kF32), nullptr);
  EXPECT_EQ(FetchError(), std::string("ValueError: from_storage: ") + (strides_error + 12));
  int64_t none[1] = {0};
  T nothing(ffk_tensor_empty(1, none, kF32, kCpu));
  EXPECT_EQ(ffk_tensor_reshape(nothing.t, 4, zero_then_huge), nullptr);
  EXPECT_EQ(FetchError(), std::string("ValueError: reshape: ") + (strides_error + 12));
  ffk_object_release(reinterpret_cast<ffk_object*>(storage));
  int64_t zero_then_large[3] = {0, INT64_C(1) << 31, INT64_C(1) << 31};  // the strides fit
  T empty(ffk_tensor_empty(3, zero_then_large, kF32, kCpu));
  ASSERT_NE(empty.t, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_numel(empty.t), 0);
  EXPECT_EQ(Strides(empty.t), (std::vector<int64_t>{INT64_C(1) << 62, INT64_C(1) << 31, 1}));
  int64_t large_zero_large[3] = {INT64_C(1) << 33, 0, INT64_C(1) << 31};  // the first size is in no stride
  T empty2(ffk_tensor_zeros(3, large_zero_large, kF32, kCpu));
  ASSERT_NE(empty2.t, nullptr) << FetchError();
  EXPECT_EQ(Strides(empty2.t), (std::vector<int64_t>{INT64_C(1) << 31, INT64_C(1) << 31, 1}));
}

TEST_F(Tensor, ContiguityFollowsPyTorchRules) {
  T a(Iota({3, 1, 4}));
  // Size-1 dimensions ignore their stride.
  T b(ffk_tensor_as_strided(a.t, 3, std::vector<int64_t>{3, 1, 4}.data(), std::vector<int64_t>{4, 99, 1}.data(), 0));
  ASSERT_NE(b.t, nullptr) << FetchError();
  EXPECT_TRUE(ffk_tensor_is_contiguous(b.t));
  // Zero-size tensors are contiguous whatever the strides.
  T z(ffk_tensor_as_strided(a.t, 2, std::vector<int64_t>{0, 5}.data(), std::vector<int64_t>{1, 7}.data(), 0));
  ASSERT_NE(z.t, nullptr);
  EXPECT_TRUE(ffk_tensor_is_contiguous(z.t));
  T tr(ffk_tensor_transpose(a.t, 0, 2));
  EXPECT_FALSE(ffk_tensor_is_contiguous(tr.t));
}

TEST_F(Tensor, SliceMatchesReferenceAddresses) {
  T a(Iota({4, 6}));
  T s(ffk_tensor_slice(a.t, 1, 1, 6, 2));  // columns 1, 3, 5
  ASSERT_NE(s.t, nullptr);
  EXPECT_EQ(Shape(s.t), (std::vector<int64_t>{4, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(At(s.t, {i, j}), i * 6 + 1 + 2 * j);
  T neg(ffk_tensor_slice(a.t, -2, -3, 100, 1));  // rows 1..3
  EXPECT_EQ(Shape(neg.t), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(At(neg.t, {0, 0}), 6);
  T empty(ffk_tensor_slice(a.t, 0, 3, 1, 1));
  EXPECT_EQ(Shape(empty.t), (std::vector<int64_t>{0, 6}));
  EXPECT_EQ(ffk_tensor_slice(a.t, 2, 0, 1, 1), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: slice: dimension 2 is out of range for a tensor with 2 dimensions (-2 to 1)");
  EXPECT_EQ(ffk_tensor_slice(a.t, 0, 0, 1, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: slice: step 0 is not positive");
  // Views share the storage: a write shows through the base.
  static_cast<int64_t*>(ffk_tensor_data_ptr(s.t))[0] = -1;
  EXPECT_EQ(At(a.t, {0, 1}), -1);
  EXPECT_EQ(ffk_tensor_storage_borrow(s.t), ffk_tensor_storage_borrow(a.t));
}

TEST_F(Tensor, PermuteTransposeSqueezeUnsqueeze) {
  T a(Iota({2, 3, 4}));
  int64_t perm[3] = {2, 0, 1};
  T p(ffk_tensor_permute(a.t, 3, perm));
  ASSERT_NE(p.t, nullptr);
  EXPECT_EQ(Shape(p.t), (std::vector<int64_t>{4, 2, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(At(p.t, {i, j, k}), j * 12 + k * 4 + i);
  int64_t dup[3] = {0, 0, 1};
  EXPECT_EQ(ffk_tensor_permute(a.t, 3, dup), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: permute: dimension 0 appears twice");
  T t(ffk_tensor_transpose(a.t, -1, 0));
  EXPECT_EQ(Shape(t.t), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(At(t.t, {3, 2, 1}), 1 * 12 + 2 * 4 + 3);
  T u(ffk_tensor_unsqueeze(a.t, 1));
  EXPECT_EQ(Shape(u.t), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_TRUE(ffk_tensor_is_contiguous(u.t));
  T ue(ffk_tensor_unsqueeze(a.t, -1));
  EXPECT_EQ(Shape(ue.t), (std::vector<int64_t>{2, 3, 4, 1}));
  T sq(ffk_tensor_squeeze(u.t, 1));
  EXPECT_EQ(Shape(sq.t), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(At(sq.t, {1, 2, 3}), 23);
  EXPECT_EQ(ffk_tensor_squeeze(a.t, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: squeeze: dimension 0 has size 2, not 1");
}

TEST_F(Tensor, ReshapeNeedsContiguityAndMatchingCounts) {
  T a(Iota({2, 6}));
  T r(ffk_tensor_reshape(a.t, 3, std::vector<int64_t>{3, -1, 2}.data()));
  ASSERT_NE(r.t, nullptr) << FetchError();
  EXPECT_EQ(Shape(r.t), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(At(r.t, {2, 1, 1}), 11);
  EXPECT_EQ(ffk_tensor_reshape(a.t, 2, std::vector<int64_t>{5, 2}.data()), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a tensor of shape [2, 6] (12 elements) to [5, 2] (10 elements)");
  EXPECT_EQ(ffk_tensor_reshape(a.t, 2, std::vector<int64_t>{5, -1}.data()), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a tensor of shape [2, 6] (12 elements) to [5, -1]");
  // Others that overflow beside a -1: the shape as given, the -1 shown as -1.
  EXPECT_EQ(ffk_tensor_reshape(a.t, 3, std::vector<int64_t>{-1, INT64_MAX, 2}.data()), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a tensor of shape [2, 6] (12 elements) to "
                          "[-1, 9223372036854775807, 2]");
  EXPECT_EQ(ffk_tensor_reshape(a.t, 2, std::vector<int64_t>{-1, INT64_MAX / 4}.data()), nullptr);  // bytes overflow
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a tensor of shape [2, 6] (12 elements) to [-1, 2305843009213693951]");
  T none(Iota({0, 3}));  // no elements: the -1 is 0, whatever the others
  T none5(ffk_tensor_reshape(none.t, 2, std::vector<int64_t>{-1, 5}.data()));
  ASSERT_NE(none5.t, nullptr) << FetchError();
  EXPECT_EQ(Shape(none5.t), (std::vector<int64_t>{0, 5}));
  T tr(ffk_tensor_transpose(a.t, 0, 1));
  EXPECT_EQ(ffk_tensor_reshape(tr.t, 1, std::vector<int64_t>{12}.data()), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a non-contiguous tensor of shape [6, 2] with strides [1, 6]; "
                          "make a contiguous copy first");
  T c(ffk_tensor_contiguous(tr.t));
  T flat(ffk_tensor_reshape(c.t, 1, std::vector<int64_t>{-1}.data()));
  ASSERT_NE(flat.t, nullptr);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(At(flat.t, {i}), (i % 2) * 6 + i / 2);
  T same(ffk_tensor_contiguous(a.t));
  EXPECT_EQ(same.t, a.t);  // already contiguous: no copy
}

TEST_F(Tensor, AsStridedChecksEveryElementAgainstTheStorage) {
  T a(Iota({10}));  // 80 bytes
  T ok(ffk_tensor_as_strided(a.t, 2, std::vector<int64_t>{3, 3}.data(), std::vector<int64_t>{3, 1}.data(), 1));
  ASSERT_NE(ok.t, nullptr) << FetchError();
  EXPECT_EQ(At(ok.t, {2, 2}), 9);
  EXPECT_EQ(ffk_tensor_as_strided(a.t, 2, std::vector<int64_t>{3, 3}.data(), std::vector<int64_t>{3, 1}.data(), 2),
            nullptr);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [3, 3] with strides [3, 1] at byte offset 16 "
                          "reaches byte 88, past the end of its storage of 80 bytes");
  T reversed(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{2}.data(), std::vector<int64_t>{-1}.data(), 5));
  ASSERT_NE(reversed.t, nullptr) << FetchError();  // elements 5, 4
  EXPECT_EQ(At(reversed.t, {1}), 4);
  EXPECT_EQ(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{7}.data(), std::vector<int64_t>{-1}.data(), 5),
            nullptr);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [7] with strides [-1] at byte offset 40 reaches byte -8, "
                          "before the start of its storage of 80 bytes");
  EXPECT_EQ(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{2}.data(), std::vector<int64_t>{INT64_MAX}.data(), 0),
            nullptr);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [2] with strides [9223372036854775807] of int64 reaches 2^63 "
                          "bytes or more from its first element");  // the shape rule, before any storage
  // Views of views are still checked against the whole storage, not the view.
  T tail(ffk_tensor_slice(a.t, 0, 8, 10, 1));
  T back(ffk_tensor_as_strided(tail.t, 1, std::vector<int64_t>{10}.data(), std::vector<int64_t>{1}.data(), 0));
  EXPECT_NE(back.t, nullptr);
  // Zero-size views may sit anywhere up to the end.
  T z(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{0}.data(), std::vector<int64_t>{1}.data(), 10));
  EXPECT_NE(z.t, nullptr);
}

TEST_F(Tensor, FromStorageChecksBounds) {
  ffk_storage* s = ffk_storage_new(kCpu, 64, 0);
  int64_t shape[2] = {2, 4};
  ffk_tensor* t = ffk_tensor_from_storage(s, 2, shape, nullptr, 32, kF32);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_object_release(reinterpret_cast<ffk_object*>(s));  // the tensor keeps it alive
  EXPECT_EQ(ffk_tensor_data_ptr(t), static_cast<char*>(ffk_storage_data(ffk_tensor_storage_borrow(t))) + 32);
  EXPECT_EQ(ffk_tensor_from_storage(ffk_tensor_storage_borrow(t), 2, shape, nullptr, 33, kF32), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_storage: shape [2, 4] with strides [4, 1] at byte offset 33 "
                          "reaches byte 65, past the end of its storage of 64 bytes");
  ffk_object_release(Obj(t));
}

TEST_F(Tensor, CheckBytesWantsTheExactLengthAtAnyAddress) {
  alignas(16) unsigned char block[64] = {};
  int64_t shape[2] = {2, 3};
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, shape, kF32, block, 24), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, shape, kF32, block + 4, 24), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, shape, kF32, block + 2, 24), 1);  // misaligned: wrapped all the same
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, shape, kF32, block, 12), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: the buffer has 12 bytes, but a float32 tensor of shape [2, 3] has 24");
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, shape, kF32, block, 25), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: the buffer has 25 bytes, but a float32 tensor of shape [2, 3] has 24");
  // Every dtype at every address: the CPU loops read elements unaligned-safely.
  int64_t one[1] = {1};
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{kDLComplex, 64, 1}, block + 4, 8), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{kDLComplex, 128, 1}, block + 8, 16), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{kDLComplex, 128, 1}, block + 4, 16), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, kI64, block + 4, 8), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{kDLBfloat, 16, 1}, block + 1, 2), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{kDLBool, 8, 1}, block + 1, 1), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 1, one, DLDataType{FFK_DTYPE_FLOAT4_E2M1FN, 4, 2}, block + 1, 1), 1);
  // A 0-d tensor has one element; a tensor without elements takes no bytes, at any address (or none).
  EXPECT_EQ(ffk_tensor_check_bytes("u", 0, nullptr, kF32, block + 1, 4), 1);
  int64_t empty[2] = {0, 5};
  EXPECT_EQ(ffk_tensor_check_bytes("u", 2, empty, kF32, nullptr, 0), 1);
  EXPECT_EQ(ffk_tensor_check_bytes("u", 2, empty, kF32, block + 1, 0), 1);
  // What makes no tensor is named, after the user's operation.
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 1, one, DLDataType{kDLFloat, 32, 4}, block, 16), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: tensors cannot hold dtype float32x4: an element has one lane, and "
                          "float32x4 has 4 (vector dtypes are not supported)");
  int64_t negative[2] = {2, -3};
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 2, negative, kF32, block, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: shape[1] is -3, and a dimension cannot be negative");
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 33, negative, kF32, block, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: shape has 33 dimensions; a tensor has 0 to 32");
  int64_t huge[1] = {INT64_C(1) << 61};
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 1, huge, kF32, block, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: shape [2305843009213693952] of float32 has more bytes than fit in 64 bits");
  EXPECT_EQ(ffk_tensor_check_bytes("unpickle", 1, one, kF32, nullptr, 4), -1);
  EXPECT_EQ(FetchError(), "ValueError: unpickle: the buffer of 4 bytes has no address");
}

TEST_F(Tensor, CopyAndFillAcrossLayouts) {
  T a(Iota({3, 4}));
  T tr(ffk_tensor_transpose(a.t, 0, 1));
  T dst(ffk_tensor_empty(2, std::vector<int64_t>{4, 3}.data(), kI64, kCpu));
  ASSERT_EQ(ffk_tensor_copy_from(dst.t, tr.t), 0);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(At(dst.t, {i, j}), j * 4 + i);
  // Into a strided destination.
  T col(ffk_tensor_slice(a.t, 1, 1, 2, 1));  // column 1, shape [3, 1]
  T src(Iota({3, 1}));
  ASSERT_EQ(ffk_tensor_copy_from(col.t, src.t), 0);
  EXPECT_EQ(At(a.t, {2, 1}), 2);
  EXPECT_EQ(At(a.t, {2, 2}), 10);
  EXPECT_EQ(ffk_tensor_copy_from(dst.t, a.t), -1);
  EXPECT_EQ(FetchError(), "ValueError: copy_from: shapes differ (destination int64[4, 3]@cpu:0, source "
                          "int64[3, 4]@cpu:0)");
  T f(ffk_tensor_empty(2, std::vector<int64_t>{4, 3}.data(), kF32, kCpu));
  EXPECT_EQ(ffk_tensor_copy_from(f.t, dst.t), -1);
  EXPECT_EQ(FetchError(), "ValueError: copy_from: dtypes differ (float32 destination, int64 source)");
  // Fill a strided view only.
  ffk_any v = ffk_any_float(2.5);
  T fcol(ffk_tensor_slice(f.t, 1, 0, 3, 2));
  ASSERT_EQ(ffk_tensor_fill(f.t, &v), 0);
  ffk_any z = ffk_any_int(0);
  ASSERT_EQ(ffk_tensor_fill(fcol.t, &z), 0);
  const float* fp = static_cast<const float*>(ffk_tensor_data_ptr(f.t));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(fp[i], i % 3 == 1 ? 2.5f : 0.0f) << i;
  ffk_any s = ffk_any_raw_str("x");
  EXPECT_EQ(ffk_tensor_fill(f.t, &s), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: expected an int, float or bool but got str");
}

// ---- Copies that transpose (copied in blocks and tiles, see copy.c) ----------------------------

const DLDataType kU8 = {kDLUInt, 8, 1};
const DLDataType kI16 = {kDLInt, 16, 1};
const DLDataType kI32 = {kDLInt, 32, 1};

// A tensor of `shape` whose storage bytes all differ from their neighbours': byte b is a
// hash of b, so an element copied from or to the wrong place shows.
ffk_tensor* Scrambled(std::vector<int64_t> shape, DLDataType dtype) {
  ffk_tensor* t = ffk_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), dtype, kCpu);
  auto* p = static_cast<unsigned char*>(ffk_tensor_data_ptr(t));
  for (int64_t b = 0; b < ffk_tensor_nbytes(t); ++b) p[b] = static_cast<unsigned char>((b * 2654435761u) >> 13);
  return t;
}

// Every element of `dst` equals the element of `src` at the same index, each read through
// its own shape and strides (nothing shared with the code under test).
::testing::AssertionResult SameElements(const ffk_tensor* dst, const ffk_tensor* src) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(dst);
  const DLTensor* s = ffk_tensor_dltensor_borrow(src);
  const auto* dp = static_cast<const char*>(ffk_tensor_data_ptr(dst));
  const auto* sp = static_cast<const char*>(ffk_tensor_data_ptr(src));
  const size_t size = d->dtype.bits / 8;
  std::vector<int64_t> idx(static_cast<size_t>(d->ndim), 0);
  for (int64_t n = 0; n < ffk_tensor_numel(dst); ++n) {
    int64_t doff = 0, soff = 0;
    for (int32_t i = 0; i < d->ndim; ++i) {
      doff += idx[i] * d->strides[i];
      soff += idx[i] * s->strides[i];
    }
    if (std::memcmp(dp + doff * static_cast<int64_t>(size), sp + soff * static_cast<int64_t>(size), size) != 0) {
      std::string at;
      for (int64_t v : idx) at += (at.empty() ? "" : ", ") + std::to_string(v);
      return ::testing::AssertionFailure() << "element [" << at << "] differs";
    }
    for (int32_t i = d->ndim - 1; i >= 0 && ++idx[i] == d->shape[i]; --i) idx[i] = 0;
  }
  return ::testing::AssertionSuccess();
}

// The bytes of `base` outside the elements of its view `v` (same storage) are all `fill`.
::testing::AssertionResult OnlyViewWritten(const ffk_tensor* base, const ffk_tensor* v, unsigned char fill) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(v);
  const size_t size = d->dtype.bits / 8;
  const auto* b = static_cast<const unsigned char*>(ffk_tensor_data_ptr(base));
  std::vector<bool> in(static_cast<size_t>(ffk_tensor_nbytes(base)), false);
  const int64_t start = static_cast<const char*>(ffk_tensor_data_ptr(v)) - reinterpret_cast<const char*>(b);
  std::vector<int64_t> idx(static_cast<size_t>(d->ndim), 0);
  for (int64_t n = 0; n < ffk_tensor_numel(v); ++n) {
    int64_t off = start;
    for (int32_t i = 0; i < d->ndim; ++i) off += idx[i] * d->strides[i] * static_cast<int64_t>(size);
    for (size_t k = 0; k < size; ++k) in[static_cast<size_t>(off) + k] = true;
    for (int32_t i = d->ndim - 1; i >= 0 && ++idx[i] == d->shape[i]; --i) idx[i] = 0;
  }
  for (size_t k = 0; k < in.size(); ++k)
    if (!in[k] && b[k] != fill) return ::testing::AssertionFailure() << "byte " << k << " outside the view was written";
  return ::testing::AssertionSuccess();
}

TEST_F(Tensor, TransposedCopiesMatchElementByElement) {
  // Sizes at and around the 4-element groups, 16-element tiles and 256-element blocks.
  const std::vector<std::vector<int64_t>> shapes = {{1, 1},  {7, 13},   {13, 7},   {4, 4},    {16, 16},
                                                    {64, 64}, {65, 130}, {130, 65}, {3, 300}, {257, 300}};
  for (DLDataType dtype : {kU8, kI16, kF32, kI64}) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(::testing::Message() << int(dtype.bits) << "-bit [" << shape[0] << ", " << shape[1] << "]");
      T src(Scrambled(shape, dtype));
      T src_t(ffk_tensor_transpose(src.t, 0, 1));
      ASSERT_NE(src_t.t, nullptr) << FetchError();
      // A transposed source into a dense destination.
      T dst(ffk_tensor_zeros(2, std::vector<int64_t>{shape[1], shape[0]}.data(), dtype, kCpu));
      ASSERT_EQ(ffk_tensor_copy_from(dst.t, src_t.t), 0) << FetchError();
      EXPECT_TRUE(SameElements(dst.t, src_t.t));
      // A dense source into a transposed destination: the same bytes come back.
      T back(ffk_tensor_zeros(2, shape.data(), dtype, kCpu));
      T back_t(ffk_tensor_transpose(back.t, 0, 1));
      ASSERT_EQ(ffk_tensor_copy_from(back_t.t, dst.t), 0) << FetchError();
      EXPECT_TRUE(SameElements(back_t.t, dst.t));
      EXPECT_EQ(std::memcmp(ffk_tensor_data_ptr(back.t), ffk_tensor_data_ptr(src.t),
                            static_cast<size_t>(ffk_tensor_nbytes(src.t))),
                0);
      // ffk_tensor_contiguous takes the same path.
      T c(ffk_tensor_contiguous(src_t.t));
      ASSERT_NE(c.t, nullptr) << FetchError();
      EXPECT_TRUE(SameElements(c.t, src_t.t));
    }
  }
}

TEST_F(Tensor, StridedTransposedViewsCopyOnlyTheirElements) {
  // Non-square views with a step on one side or both, so neither side has a unit stride
  // where the transpose's dense case has it; destinations are views inside a larger tensor
  // whose other bytes must stay as they were.
  struct Case {
    std::vector<int64_t> base;  // the source's base tensor
    int32_t dim;                // sliced with a step along this dimension
    int64_t start, stop, step;
  };
  for (const Case& k : {Case{{40, 70}, 1, 3, 70, 4}, Case{{70, 40}, 0, 1, 69, 3}, Case{{300, 20}, 0, 0, 300, 2},
                        Case{{33, 530}, 1, 5, 530, 2}}) {
    for (DLDataType dtype : {kU8, kI32, kI64}) {
      SCOPED_TRACE(::testing::Message() << int(dtype.bits) << "-bit base [" << k.base[0] << ", " << k.base[1]
                                        << "] dim " << k.dim << " step " << k.step);
      T base(Scrambled(k.base, dtype));
      T sliced(ffk_tensor_slice(base.t, k.dim, k.start, k.stop, k.step));
      ASSERT_NE(sliced.t, nullptr) << FetchError();
      T src(ffk_tensor_transpose(sliced.t, 0, 1));
      std::vector<int64_t> shape = Shape(src.t);
      // Into a dense tensor.
      T dense(ffk_tensor_zeros(2, shape.data(), dtype, kCpu));
      ASSERT_EQ(ffk_tensor_copy_from(dense.t, src.t), 0) << FetchError();
      EXPECT_TRUE(SameElements(dense.t, src.t));
      // Into a transposed view with a step of a bigger tensor: every 2nd row of its transpose.
      T big(ffk_tensor_empty(2, std::vector<int64_t>{shape[1], 2 * shape[0] + 1}.data(), dtype, kCpu));
      std::memset(ffk_tensor_data_ptr(big.t), 0xA5, static_cast<size_t>(ffk_tensor_nbytes(big.t)));
      T big_t(ffk_tensor_transpose(big.t, 0, 1));
      T dst(ffk_tensor_slice(big_t.t, 0, 1, 2 * shape[0] + 1, 2));
      ASSERT_NE(dst.t, nullptr) << FetchError();
      ASSERT_EQ(Shape(dst.t), shape);
      ASSERT_EQ(ffk_tensor_copy_from(dst.t, src.t), 0) << FetchError();
      EXPECT_TRUE(SameElements(dst.t, src.t));
      EXPECT_TRUE(OnlyViewWritten(big.t, dst.t, 0xA5));
    }
  }
}

TEST_F(Tensor, PermutedCopiesOfThreeDimensionsMatchElementByElement) {
  // The dimension copied together with the innermost one is not always the one before it.
  T src(Scrambled({5, 37, 19}, kI32));
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 2, 1}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}}) {
    SCOPED_TRACE(::testing::Message() << "perm " << perm[0] << perm[1] << perm[2]);
    T p(ffk_tensor_permute(src.t, 3, perm.data()));
    ASSERT_NE(p.t, nullptr) << FetchError();
    std::vector<int64_t> shape = Shape(p.t);
    T dst(ffk_tensor_zeros(3, shape.data(), kI32, kCpu));
    ASSERT_EQ(ffk_tensor_copy_from(dst.t, p.t), 0) << FetchError();
    EXPECT_TRUE(SameElements(dst.t, p.t));
    // And back through the permuted view of a fresh tensor: the source's bytes.
    T again(ffk_tensor_zeros(3, std::vector<int64_t>{5, 37, 19}.data(), kI32, kCpu));
    T again_p(ffk_tensor_permute(again.t, 3, perm.data()));
    ASSERT_EQ(ffk_tensor_copy_from(again_p.t, dst.t), 0) << FetchError();
    EXPECT_EQ(std::memcmp(ffk_tensor_data_ptr(again.t), ffk_tensor_data_ptr(src.t),
                          static_cast<size_t>(ffk_tensor_nbytes(src.t))),
              0);
  }
}

TEST_F(Tensor, FillOfATransposedViewSetsOnlyItsElements) {
  T base(ffk_tensor_empty(2, std::vector<int64_t>{65, 131}.data(), kF32, kCpu));
  std::memset(ffk_tensor_data_ptr(base.t), 0, static_cast<size_t>(ffk_tensor_nbytes(base.t)));
  T t(ffk_tensor_transpose(base.t, 0, 1));   // [131, 65], strides [1, 131]
  T v(ffk_tensor_slice(t.t, 0, 2, 131, 3));  // rows 2, 5, ..., 128 of it: strides [3, 131]
  ffk_any x = ffk_any_float(1.5);
  ASSERT_EQ(ffk_tensor_fill(v.t, &x), 0) << FetchError();
  const float* p = static_cast<const float*>(ffk_tensor_data_ptr(base.t));
  for (int64_t i = 0; i < 65; ++i)
    for (int64_t j = 0; j < 131; ++j) ASSERT_EQ(p[i * 131 + j], j % 3 == 2 ? 1.5f : 0.0f) << i << ", " << j;
}

// Negative dimension indices are normalised in C only; a message names the operation and
// the index as the user gave it (issue 21: "dimension -97" for transpose(-100, 0)).
TEST_F(Tensor, DimensionErrorsNameTheOperationAndTheIndexAsGiven) {
  T a(Iota({2, 3}));
  EXPECT_EQ(ffk_tensor_transpose(a.t, -100, 0), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: transpose: dimension -100 is out of range for a tensor with 2 dimensions (-2 to 1)");
  EXPECT_EQ(ffk_tensor_squeeze(a.t, 2), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: squeeze: dimension 2 is out of range for a tensor with 2 dimensions (-2 to 1)");
  EXPECT_EQ(ffk_tensor_unsqueeze(a.t, -4), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: unsqueeze: dimension -4 is out of range for a tensor with 2 dimensions (-3 to 2)");
  int64_t perm[2] = {0, -3};
  EXPECT_EQ(ffk_tensor_permute(a.t, 2, perm), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: permute: dimension -3 is out of range for a tensor with 2 dimensions (-2 to 1)");
  int64_t dup[2] = {1, -1};
  EXPECT_EQ(ffk_tensor_permute(a.t, 2, dup), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: permute: dimension -1 appears twice");
  // The count is checked first (the entries are not read), and an entry past int32 is out of range.
  EXPECT_EQ(ffk_tensor_permute(a.t, 3, perm), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: permute: 3 dimensions given for a tensor with 2");
  EXPECT_EQ(ffk_tensor_permute(a.t, 2, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: permute: the permutation is NULL");
  int64_t huge[2] = {INT64_C(1) << 32, 0};
  EXPECT_EQ(ffk_tensor_permute(a.t, 2, huge), nullptr);
  EXPECT_EQ(FetchError(),
            "IndexError: permute: dimension 4294967296 is out of range for a tensor with 2 dimensions (-2 to 1)");
  EXPECT_EQ(ffk_tensor_size(a.t, -1), 3);
  EXPECT_EQ(ffk_tensor_size(a.t, -3), -1);
  EXPECT_EQ(FetchError(), "IndexError: size: dimension -3 is out of range for a tensor with 2 dimensions (-2 to 1)");
  T t(ffk_tensor_transpose(a.t, -1, -2));
  ASSERT_NE(t.t, nullptr) << FetchError();
  EXPECT_EQ(Shape(t.t), (std::vector<int64_t>{3, 2}));
}

TEST_F(Tensor, SelectDropsADimensionAndChecksTheIndex) {
  T a(Iota({2, 3, 4}));
  T row(ffk_tensor_select(a.t, 0, 1));
  ASSERT_NE(row.t, nullptr) << FetchError();
  EXPECT_EQ(Shape(row.t), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(At(row.t, {2, 3}), 23);
  T last(ffk_tensor_select(a.t, -1, -1));  // [:, :, 3]
  ASSERT_NE(last.t, nullptr) << FetchError();
  EXPECT_EQ(Shape(last.t), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(At(last.t, {1, 2}), 23);
  EXPECT_EQ(ffk_tensor_storage_borrow(last.t), ffk_tensor_storage_borrow(a.t));
  EXPECT_EQ(ffk_tensor_select(a.t, 1, 3), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: index 3 is out of range for dimension 1 of size 3");
  EXPECT_EQ(ffk_tensor_select(a.t, 0, -3), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: index -3 is out of range for dimension 0 of size 2");
  EXPECT_EQ(ffk_tensor_select(a.t, 3, 0), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: select: dimension 3 is out of range for a tensor with 3 dimensions (-3 to 2)");
  T scalar(ffk_tensor_select(row.t, 0, 0));
  T elem(ffk_tensor_select(scalar.t, 0, 2));
  ASSERT_NE(elem.t, nullptr) << FetchError();
  EXPECT_EQ(elem.dl()->ndim, 0);
  EXPECT_EQ(At(elem.t, {}), 14);
  EXPECT_EQ(ffk_tensor_select(elem.t, 0, 0), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: a 0-d tensor cannot be indexed");
  // A slice of it fails in select's words (both bindings show this text for t[a:b]).
  EXPECT_EQ(ffk_tensor_slice(elem.t, 0, 0, 1, 1), nullptr);
  EXPECT_EQ(FetchError(), "IndexError: a 0-d tensor cannot be indexed");
}

// fill never changes a value silently: out of range is an OverflowError, as numpy's.
TEST_F(Tensor, FillRefusesValuesTheDtypeCannotHold) {
  auto fill = [](ffk_tensor* t, ffk_any v) { return ffk_tensor_fill(t, &v); };
  T i32(ffk_tensor_zeros(1, std::vector<int64_t>{3}.data(), kI32x, kCpu));
  EXPECT_EQ(fill(i32.t, ffk_any_int(INT64_C(1) << 40)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 1099511627776 is out of range for int32");
  EXPECT_EQ(fill(i32.t, ffk_any_int(INT32_MIN)), 0);
  EXPECT_EQ(static_cast<int32_t*>(ffk_tensor_data_ptr(i32.t))[2], INT32_MIN);
  EXPECT_EQ(fill(i32.t, ffk_any_int(INT64_C(-2147483649))), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: -2147483649 is out of range for int32");
  EXPECT_EQ(fill(i32.t, ffk_any_float(2.5)), -1);
  EXPECT_EQ(FetchError(), "ValueError: fill: 2.5 is not a whole number, so int32 cannot hold it");
  EXPECT_EQ(fill(i32.t, ffk_any_float(NAN)), -1);
  EXPECT_EQ(FetchError(), "ValueError: fill: cannot convert float NaN to an integer (int32)");
  EXPECT_EQ(fill(i32.t, ffk_any_float(-INFINITY)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: cannot convert float -inf to an integer (int32)");
  EXPECT_EQ(fill(i32.t, ffk_any_float(3e9)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 3000000000 is out of range for int32");
  EXPECT_EQ(fill(i32.t, ffk_any_float(-7.0)), 0);
  EXPECT_EQ(static_cast<int32_t*>(ffk_tensor_data_ptr(i32.t))[0], -7);
  EXPECT_EQ(fill(i32.t, ffk_any_bool(true)), 0);
  EXPECT_EQ(static_cast<int32_t*>(ffk_tensor_data_ptr(i32.t))[1], 1);
  T u8(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), kU8x, kCpu));
  EXPECT_EQ(fill(u8.t, ffk_any_int(-1)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: -1 is out of range for uint8");
  EXPECT_EQ(fill(u8.t, ffk_any_int(256)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 256 is out of range for uint8");
  EXPECT_EQ(fill(u8.t, ffk_any_int(255)), 0);
  EXPECT_EQ(static_cast<uint8_t*>(ffk_tensor_data_ptr(u8.t))[1], 255);
  T u64(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{kDLUInt, 64, 1}, kCpu));
  EXPECT_EQ(fill(u64.t, ffk_any_float(1.8446744073709552e19)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 1.8446744073709552e+19 is out of range for uint64");
  EXPECT_EQ(fill(u64.t, ffk_any_float(1.8446744073709550e19)), 0);
  EXPECT_EQ(static_cast<uint64_t*>(ffk_tensor_data_ptr(u64.t))[0], UINT64_C(18446744073709549568));
  T f32(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), kF32, kCpu));
  EXPECT_EQ(fill(f32.t, ffk_any_float(1e300)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 1e+300 is out of range for float32");
  EXPECT_EQ(fill(f32.t, ffk_any_float(INFINITY)), 0);  // infinities and NaN are float values
  EXPECT_EQ(fill(f32.t, ffk_any_int(INT64_C(1) << 40)), 0);
  EXPECT_EQ(static_cast<float*>(ffk_tensor_data_ptr(f32.t))[0], 1099511627776.0f);
  T f16(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{kDLFloat, 16, 1}, kCpu));
  EXPECT_EQ(fill(f16.t, ffk_any_float(1.5)), 0);
  EXPECT_EQ(static_cast<uint16_t*>(ffk_tensor_data_ptr(f16.t))[0], 0x3e00);
  EXPECT_EQ(fill(f16.t, ffk_any_int(70000)), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: 70000 is out of range for float16");
  T bf16(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{kDLBfloat, 16, 1}, kCpu));
  EXPECT_EQ(fill(bf16.t, ffk_any_float(-2.0)), 0);
  EXPECT_EQ(static_cast<uint16_t*>(ffk_tensor_data_ptr(bf16.t))[1], 0xc000);
  EXPECT_EQ(fill(f16.t, ffk_any_float(NAN)), 0);  // NaN carries over into float16 too
  EXPECT_EQ(static_cast<uint16_t*>(ffk_tensor_data_ptr(f16.t))[0] & 0x7c00, 0x7c00);
  EXPECT_NE(static_cast<uint16_t*>(ffk_tensor_data_ptr(f16.t))[0] & 0x3ff, 0);
  T f8(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{FFK_DTYPE_FLOAT8_E4M3FN, 8, 1}, kCpu));
  EXPECT_EQ(fill(f8.t, ffk_any_int(1)), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: fill: cannot fill a float8_e4m3fn tensor (fill takes integer, float, complex and bool dtypes)");
}

// Complex dtypes: ffk_tensor_fill puts a real value (imaginary part 0), ffk_tensor_fill_complex
// both parts, each part rounded like a float of half the element's size.
TEST_F(Tensor, FillOfComplexDtypesSetsBothParts) {
  const DLDataType c64 = {kDLComplex, 64, 1}, c128 = {kDLComplex, 128, 1};
  auto parts64 = [](const ffk_tensor* t, int64_t i) {
    const float* p = static_cast<const float*>(ffk_tensor_data_ptr(t)) + 2 * i;
    return std::make_pair(p[0], p[1]);
  };
  auto parts128 = [](const ffk_tensor* t, int64_t i) {
    const double* p = static_cast<const double*>(ffk_tensor_data_ptr(t)) + 2 * i;
    return std::make_pair(p[0], p[1]);
  };
  T a(ffk_tensor_zeros(1, std::vector<int64_t>{3}.data(), c64, kCpu));
  ASSERT_EQ(ffk_tensor_fill_complex(a.t, 1.5, -2.25), 0) << FetchError();
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(parts64(a.t, i), std::make_pair(1.5f, -2.25f)) << i;
  ASSERT_EQ(ffk_tensor_fill_complex(a.t, 0.1, 1.0 / 3), 0) << FetchError();  // rounded to float32 each
  EXPECT_EQ(parts64(a.t, 2), std::make_pair(0.1f, 1.0f / 3));
  ASSERT_EQ(ffk_tensor_fill_complex(a.t, INFINITY, NAN), 0) << FetchError();  // carried over
  EXPECT_TRUE(std::isinf(parts64(a.t, 0).first) && std::isnan(parts64(a.t, 0).second));
  ffk_any v = ffk_any_int(3);
  ASSERT_EQ(ffk_tensor_fill(a.t, &v), 0) << FetchError();
  EXPECT_EQ(parts64(a.t, 1), std::make_pair(3.0f, 0.0f));
  v = ffk_any_bool(true);
  ASSERT_EQ(ffk_tensor_fill(a.t, &v), 0) << FetchError();
  EXPECT_EQ(parts64(a.t, 0), std::make_pair(1.0f, 0.0f));
  // Out of range: an OverflowError naming the value, and nothing written.
  EXPECT_EQ(ffk_tensor_fill_complex(a.t, 1e300, 0), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: (1e+300+0j) is out of range for complex64");
  EXPECT_EQ(ffk_tensor_fill_complex(a.t, 1, -1e300), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: (1-1e+300j) is out of range for complex64");
  v = ffk_any_float(-1e300);
  EXPECT_EQ(ffk_tensor_fill(a.t, &v), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: -1e+300 is out of range for complex64");
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(parts64(a.t, i), std::make_pair(1.0f, 0.0f)) << i;
  // complex128 keeps doubles exactly.
  T b(ffk_tensor_zeros(2, std::vector<int64_t>{2, 2}.data(), c128, kCpu));
  ASSERT_EQ(ffk_tensor_fill_complex(b.t, 0.1, 1e300), 0) << FetchError();
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(parts128(b.t, i), std::make_pair(0.1, 1e300)) << i;
  v = ffk_any_float(-0.5);
  ASSERT_EQ(ffk_tensor_fill(b.t, &v), 0) << FetchError();
  EXPECT_EQ(parts128(b.t, 3), std::make_pair(-0.5, 0.0));
  v = ffk_any_int(INT64_MAX);
  ASSERT_EQ(ffk_tensor_fill(b.t, &v), 0) << FetchError();  // rounded to the nearest double
  EXPECT_EQ(parts128(b.t, 0), std::make_pair(9223372036854775808.0, 0.0));
  EXPECT_EQ(ffk_tensor_fill_complex(nullptr, 1, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: fill: the tensor is NULL");
}

// A complex value goes into a real float dtype only with an imaginary part of 0.
TEST_F(Tensor, FillComplexIntoRealDtypesNeedsAZeroImaginaryPart) {
  T f32(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), kF32, kCpu));
  const float* p = static_cast<const float*>(ffk_tensor_data_ptr(f32.t));
  ASSERT_EQ(ffk_tensor_fill_complex(f32.t, 2.5, 0.0), 0) << FetchError();
  EXPECT_EQ(p[1], 2.5f);
  ASSERT_EQ(ffk_tensor_fill_complex(f32.t, -1.0, -0.0), 0) << FetchError();  // -0 is 0
  EXPECT_EQ(p[0], -1.0f);
  EXPECT_EQ(ffk_tensor_fill_complex(f32.t, 1, 2), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value (1+2j) into float32");
  EXPECT_EQ(ffk_tensor_fill_complex(f32.t, 0, -2), -1);  // Python's repr: no real part when it is +0
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value -2j into float32");
  EXPECT_EQ(ffk_tensor_fill_complex(f32.t, 1, NAN), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value (1+nanj) into float32");
  EXPECT_EQ(ffk_tensor_fill_complex(f32.t, 1e300, 0), -1);
  EXPECT_EQ(FetchError(), "OverflowError: fill: (1e+300+0j) is out of range for float32");
  EXPECT_EQ(p[0], -1.0f) << "nothing was written";
  T f16(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{kDLFloat, 16, 1}, kCpu));
  ASSERT_EQ(ffk_tensor_fill_complex(f16.t, 1.5, 0), 0) << FetchError();
  EXPECT_EQ(static_cast<uint16_t*>(ffk_tensor_data_ptr(f16.t))[1], 0x3e00);
  T bf16(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{kDLBfloat, 16, 1}, kCpu));
  ASSERT_EQ(ffk_tensor_fill_complex(bf16.t, -2, 0), 0) << FetchError();
  EXPECT_EQ(static_cast<uint16_t*>(ffk_tensor_data_ptr(bf16.t))[0], 0xc000);
  T f64(ffk_tensor_zeros(0, nullptr, DLDataType{kDLFloat, 64, 1}, kCpu));
  ASSERT_EQ(ffk_tensor_fill_complex(f64.t, 0.1, 0), 0) << FetchError();
  EXPECT_EQ(*static_cast<double*>(ffk_tensor_data_ptr(f64.t)), 0.1);
  // Integer and bool dtypes take no complex value, even a real one.
  T i32(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), kI32x, kCpu));
  EXPECT_EQ(ffk_tensor_fill_complex(i32.t, 3, 0), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value (3+0j) into int32");
  T b(ffk_tensor_zeros(1, std::vector<int64_t>{2}.data(), DLDataType{FFK_DTYPE_BOOL, 8, 1}, kCpu));
  EXPECT_EQ(ffk_tensor_fill_complex(b.t, 1, 0), -1);
  EXPECT_EQ(FetchError(), "TypeError: fill: cannot put the complex value (1+0j) into bool");
  // Bool values into complex are 0 or 1.
  T c(ffk_tensor_zeros(0, nullptr, DLDataType{kDLComplex, 128, 1}, kCpu));
  ffk_any no = ffk_any_bool(false);
  ASSERT_EQ(ffk_tensor_fill_complex(c.t, 5, 5), 0);
  ASSERT_EQ(ffk_tensor_fill(c.t, &no), 0) << FetchError();
  EXPECT_EQ(static_cast<double*>(ffk_tensor_data_ptr(c.t))[0], 0.0);
  EXPECT_EQ(static_cast<double*>(ffk_tensor_data_ptr(c.t))[1], 0.0);
}

// fill_complex of a strided view writes its elements only (16-byte elements through the
// host copy's generic path).
TEST_F(Tensor, FillComplexOfAStridedViewSetsOnlyItsElements) {
  for (DLDataType dt : {DLDataType{kDLComplex, 64, 1}, DLDataType{kDLComplex, 128, 1}}) {
    T base(ffk_tensor_zeros(2, std::vector<int64_t>{7, 9}.data(), dt, kCpu));
    T t(ffk_tensor_transpose(base.t, 0, 1));  // [9, 7]
    T v(ffk_tensor_slice(t.t, 1, 1, 7, 2));   // columns 1, 3, 5 of it: rows 1, 3, 5 of base
    ASSERT_NE(v.t, nullptr) << FetchError();
    ASSERT_EQ(ffk_tensor_fill_complex(v.t, -1.0, 2.0), 0) << FetchError();
    EXPECT_TRUE(OnlyViewWritten(base.t, v.t, 0));
    for (int64_t r = 0; r < 7; ++r) {
      for (int64_t c = 0; c < 9; ++c) {
        double re, im;
        const char* at = static_cast<const char*>(ffk_tensor_data_ptr(base.t)) + (r * 9 + c) * (dt.bits / 8);
        if (dt.bits == 64) {
          float x[2];
          std::memcpy(x, at, sizeof x);
          re = x[0], im = x[1];
        } else {
          double x[2];
          std::memcpy(x, at, sizeof x);
          re = x[0], im = x[1];
        }
        bool in = r % 2 == 1 && r < 6;
        EXPECT_EQ(re, in ? -1.0 : 0.0) << r << ", " << c;
        EXPECT_EQ(im, in ? 2.0 : 0.0) << r << ", " << c;
      }
    }
  }
}

// item: the only element as a value, decoded in C for both bindings.
TEST_F(Tensor, ItemReadsTheOnlyElementAsAValue) {
  auto item = [](ffk_tensor* t) {
    ffk_any v;
    EXPECT_EQ(ffk_tensor_item(t, &v), 0) << FetchError();
    return v;
  };
  T u8(ffk_tensor_empty(1, std::vector<int64_t>{2}.data(), kU8x, kCpu));
  static_cast<uint8_t*>(ffk_tensor_data_ptr(u8.t))[0] = 49;  // "1": bytes are never read as text
  static_cast<uint8_t*>(ffk_tensor_data_ptr(u8.t))[1] = 250;
  ffk_any v;
  EXPECT_EQ(ffk_tensor_item(u8.t, &v), -1);
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "ValueError: item: a tensor with 2 elements has no single value (it needs exactly one)");
  T second(ffk_tensor_slice(u8.t, 0, 1, 2, 1));
  v = item(second.t);
  EXPECT_EQ(v.type_index, FFK_TYPE_INT);
  EXPECT_EQ(v.v_int, 250);
  T i8(ffk_tensor_empty(0, nullptr, DLDataType{kDLInt, 8, 1}, kCpu));
  *static_cast<int8_t*>(ffk_tensor_data_ptr(i8.t)) = -5;
  EXPECT_EQ(item(i8.t).v_int, -5);
  T h(ffk_tensor_empty(2, std::vector<int64_t>{1, 1}.data(), DLDataType{kDLFloat, 16, 1}, kCpu));
  *static_cast<uint16_t*>(ffk_tensor_data_ptr(h.t)) = 0xc100;  // -2.5
  v = item(h.t);
  EXPECT_EQ(v.type_index, FFK_TYPE_FLOAT);
  EXPECT_EQ(v.v_float, -2.5);
  T b(ffk_tensor_empty(0, nullptr, DLDataType{FFK_DTYPE_BOOL, 8, 1}, kCpu));
  *static_cast<uint8_t*>(ffk_tensor_data_ptr(b.t)) = 1;
  v = item(b.t);
  EXPECT_EQ(v.type_index, FFK_TYPE_BOOL);
  EXPECT_EQ(v.v_int, 1);
  T big(ffk_tensor_empty(0, nullptr, DLDataType{kDLUInt, 64, 1}, kCpu));
  *static_cast<uint64_t*>(ffk_tensor_data_ptr(big.t)) = UINT64_MAX;
  EXPECT_EQ(ffk_tensor_item(big.t, &v), -1);
  EXPECT_EQ(FetchError(), "OverflowError: item: the uint64 value 18446744073709551615 does not fit in an int64");
  T c(ffk_tensor_zeros(0, nullptr, DLDataType{kDLComplex, 64, 1}, kCpu));
  EXPECT_EQ(ffk_tensor_item(c.t, &v), -1);
  EXPECT_EQ(FetchError(), "TypeError: item: complex64 elements have no int, float or bool value");
  // A fill and an item agree for every dtype they share.
  for (DLDataType dt : {kI32x, kU8x, kF32, kI64, DLDataType{kDLFloat, 16, 1}, DLDataType{kDLBfloat, 16, 1},
                        DLDataType{kDLFloat, 64, 1}}) {
    T one(ffk_tensor_empty(0, nullptr, dt, kCpu));
    ffk_any seven = ffk_any_int(7);
    ASSERT_EQ(ffk_tensor_fill(one.t, &seven), 0) << FetchError();
    v = item(one.t);
    double got = v.type_index == FFK_TYPE_FLOAT ? v.v_float : static_cast<double>(v.v_int);
    EXPECT_EQ(got, 7.0);
  }
}

TEST_F(Tensor, TensorsLiveInContainersAndCrossCalls) {
  T a(Iota({2}));
  ffk_any v = ffk_any_object(Obj(a.t));
  ffk_list* l = ffk_list_from_items(&v, 1);
  ffk_any_release(&v);
  ffk_any lv = ffk_any_object_steal(reinterpret_cast<ffk_object*>(l));
  EXPECT_EQ(Repr(lv), "[int64[2]@cpu:0]");
  ffk_any_release(&lv);
}

TEST_F(Tensor, ConstructorsAndViewsSurviveEveryAllocationFailure) {
  ffk::test::SweepAllocationFailures([] {
    int64_t shape[2] = {3, 5};
    ffk_tensor* t = ffk_tensor_zeros(2, shape, kF32, kCpu);
    if (t == nullptr) return false;
    ffk_tensor* v = ffk_tensor_transpose(t, 0, 1);
    ffk_tensor* c = v ? ffk_tensor_contiguous(v) : nullptr;
    ffk_object_release(Obj(t));
    ffk_object_release(Obj(v));
    if (c == nullptr) return false;
    ffk_object_release(Obj(c));
    return true;
  });
}

TEST_F(Tensor, ViewsAreSharedAndReleasedAcrossThreads) {
  ffk_tensor* base = Iota({64, 64});
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([base, t, &bad] {
      for (int i = 0; i < 2000; ++i) {
        ffk_tensor* v = ffk_tensor_slice(base, t % 2, i % 64, 64, 1 + t);
        ffk_tensor* w = v ? ffk_tensor_transpose(v, 0, 1) : nullptr;
        if (w == nullptr || At(w, {0, 0}) != (t % 2 ? i % 64 : (i % 64) * 64)) ++bad;
        ffk_object_release(Obj(v));
        ffk_object_release(Obj(w));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  ffk_object_release(Obj(base));
}

// ---- Small CPU tensors: the Tensor, its Storage and the bytes in one block ----------------

// The references one small tensor hands out, released in every order below.
enum Holder { kTensor, kView, kStorage, kTensorWeak, kStorageWeak, kHolders };

void Drop(Holder h, ffk_tensor* t, ffk_tensor* v, ffk_storage* s) {
  ffk_object* storage = reinterpret_cast<ffk_object*>(s);
  switch (h) {
    case kTensor: ffk_object_release(Obj(t)); break;
    case kView: ffk_object_release(Obj(v)); break;
    case kStorage: ffk_object_release(storage); break;
    case kTensorWeak: ffk_weak_release(Obj(t)); break;
    case kStorageWeak: ffk_weak_release(storage); break;
    default: break;
  }
}

TEST_F(Tensor, SmallTensorStorageOutlivesItInEveryReleaseOrder) {
  std::vector<int> order = {kTensor, kView, kStorage, kTensorWeak, kStorageWeak};
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  int orders = 0;
  do {
    int64_t shape[2] = {2, 3};
    ffk_tensor* t = ffk_tensor_zeros(2, shape, kF32, kCpu);
    ASSERT_NE(t, nullptr);
    ffk_storage* s = ffk_tensor_storage_borrow(t);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(ffk_storage_nbytes(s), 24u);
    EXPECT_EQ(ffk_storage_data(s), ffk_tensor_data_ptr(t));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(s)) % 64, 0u);
    EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use - before.bytes_in_use, 24);
    EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use - before.blocks_in_use, 1);
    ffk_object_retain(reinterpret_cast<ffk_object*>(s));
    ffk_weak_retain(Obj(t));
    ffk_weak_retain(reinterpret_cast<ffk_object*>(s));
    ffk_tensor* v = ffk_tensor_transpose(t, 0, 1);
    ASSERT_NE(v, nullptr);
    float* data = static_cast<float*>(ffk_storage_data(s));
    for (size_t i = 0; i < order.size(); ++i) {
      Holder h = static_cast<Holder>(order[i]);
      Drop(h, t, v, s);
      bool tensor_gone = false, view_gone = false, storage_gone = false;
      for (size_t j = 0; j <= i; ++j) {
        tensor_gone |= order[j] == kTensor;
        view_gone |= order[j] == kView;
        storage_gone |= order[j] == kStorage;
      }
      if (!tensor_gone || !view_gone || !storage_gone) {  // someone still holds the bytes: intact
        data[5] = static_cast<float>(i);
        if (!view_gone) {
          EXPECT_EQ(static_cast<float*>(ffk_tensor_data_ptr(v))[5], static_cast<float>(i));
        }
        EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use - before.blocks_in_use, 1);
      } else {  // the Storage is destroyed once its last strong holder lets go
        EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, before.blocks_in_use);
        EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
      }
      bool tensor_weak_held = true;
      for (size_t j = 0; j <= i; ++j) tensor_weak_held &= order[j] != kTensorWeak;
      if (tensor_weak_held) {  // a weak holder sees the tensor die with its last strong reference
        ffk_object* locked = ffk_weak_lock(Obj(t));
        EXPECT_EQ(locked != nullptr, !tensor_gone);
        ffk_object_release(locked);
      }
    }
    EXPECT_EQ(ffk_debug_live_objects(-1), 0) << "order #" << orders;
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 120);
  EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
}

TEST_F(Tensor, SmallAndLargeTensorsBehaveAlike) {
  for (int64_t n : {0, 1, 64, 65, 1000}) {  // float32: 0, 4, 256 (one block), 260, 4000 bytes
    ffk_storage_stats before = ffk_storage_get_stats(kCpu);
    T e(ffk_tensor_empty(1, &n, kF32, kCpu)), z(ffk_tensor_zeros(1, &n, kF32, kCpu));
    ASSERT_NE(e.t, nullptr);
    ASSERT_NE(z.t, nullptr);
    for (const T* x : {&e, &z}) {
      EXPECT_EQ(Shape(x->t), std::vector<int64_t>{n});
      EXPECT_EQ(Strides(x->t), std::vector<int64_t>{1});
      EXPECT_EQ(reinterpret_cast<uintptr_t>(x->dl()->data) % 64, 0u) << n;
      EXPECT_EQ(ffk_storage_nbytes(ffk_tensor_storage_borrow(x->t)), static_cast<size_t>(4 * n));
    }
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(static_cast<float*>(ffk_tensor_data_ptr(z.t))[i], 0.0f);
    std::memset(ffk_tensor_data_ptr(e.t), 0xab, static_cast<size_t>(4 * n));  // ASan: all of it is ours
    EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use - before.bytes_in_use, 8 * n);
    EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use - before.blocks_in_use, 2);
  }
}

TEST_F(Tensor, SmallTensorsGoThroughAUserCpuAllocator) {
  static int allocs, frees;
  static ffk_allocator prev;
  allocs = frees = 0;
  ffk_allocator mine = {"counting", nullptr,
                        [](void*, DLDevice d, size_t n, size_t a) -> void* {
                          ++allocs;
                          return prev.allocate(prev.ctx, d, n, a);
                        },
                        [](void*, DLDevice d, void* p, size_t n) {
                          ++frees;
                          prev.free(prev.ctx, d, p, n);
                        },
                        nullptr};
  ASSERT_EQ(ffk_allocator_register(kDLCPU, &mine, &prev), 0);
  int64_t shape[1] = {4};
  ffk_tensor* t = ffk_tensor_empty(1, shape, kF32, kCpu);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(allocs, 1) << "16 bytes still come from the registered allocator";
  ASSERT_EQ(ffk_allocator_register(kDLCPU, &prev, nullptr), 0);  // the built-in one again
  ffk_tensor* u = ffk_tensor_empty(1, shape, kF32, kCpu);
  EXPECT_EQ(allocs, 1) << "back to the built-in shortcut";
  ffk_object_release(Obj(t));
  EXPECT_EQ(frees, 1);
  ffk_object_release(Obj(u));
  EXPECT_EQ(frees, 1);
}

TEST_F(Tensor, SmallTensorsReleasedFromManyThreadsInAnyOrder) {
  // Each small tensor hands out four strong references (itself, a view, its storage
  // twice) that four threads drop at the same time; TSan and ASan watch the block.
  constexpr int kTensors = 2000, kThreads = 4;
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  std::vector<std::vector<ffk_object*>> work(kThreads);
  for (int i = 0; i < kTensors; ++i) {
    int64_t shape[2] = {4, 4};
    ffk_tensor* t = ffk_tensor_zeros(2, shape, kI64, kCpu);
    ASSERT_NE(t, nullptr);
    ffk_object* s = reinterpret_cast<ffk_object*>(ffk_tensor_storage_borrow(t));
    ffk_object_retain(s);
    ffk_object_retain(s);
    ffk_object* refs[kThreads] = {Obj(t), Obj(ffk_tensor_transpose(t, 0, 1)), s, s};
    for (int k = 0; k < kThreads; ++k) work[(i + k) % kThreads].push_back(refs[k]);
  }
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k)
    threads.emplace_back([&go, &w = work[k]] {
      while (!go.load()) std::this_thread::yield();
      for (ffk_object* o : w) ffk_object_release(o);
    });
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, before.blocks_in_use);
}

}  // namespace
