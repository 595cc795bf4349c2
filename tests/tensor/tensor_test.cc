// ffikit/tensor.h: creation, metadata, every view against a reference computation of
// element addresses, contiguity rules, bounds checks, copies, fill and repr.
#include <ffikit/ffikit.h>

#include <cstring>
#include <thread>
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
  EXPECT_EQ(FetchError(), "ValueError: negative dimension -3 in shape [2, -3]");
  int64_t one[1] = {4};
  EXPECT_EQ(ffk_tensor_empty(1, one, DLDataType{kDLFloat, 32, 4}, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: tensors cannot hold dtype float32x4 (32 bits x 4 lanes): elements must be whole bytes");
  EXPECT_EQ(ffk_tensor_empty(33, one, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: a tensor has 0 to 32 dimensions, not 33");
  int64_t huge[3] = {1LL << 40, 1LL << 40, 1LL << 40};
  EXPECT_EQ(ffk_tensor_empty(3, huge, kF32, kCpu), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: shape [1099511627776, 1099511627776, 1099511627776] has too many elements");
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
  EXPECT_EQ(FetchError(), "IndexError: ffk_tensor_slice: dimension 2 is out of range for a 2-d tensor");
  EXPECT_EQ(ffk_tensor_slice(a.t, 0, 0, 1, 0), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_slice: step 0 is not positive");
  // Views share the storage: a write shows through the base.
  static_cast<int64_t*>(ffk_tensor_data_ptr(s.t))[0] = -1;
  EXPECT_EQ(At(a.t, {0, 1}), -1);
  EXPECT_EQ(ffk_tensor_storage_borrow(s.t), ffk_tensor_storage_borrow(a.t));
}

TEST_F(Tensor, PermuteTransposeSqueezeUnsqueeze) {
  T a(Iota({2, 3, 4}));
  int32_t perm[3] = {2, 0, 1};
  T p(ffk_tensor_permute(a.t, perm));
  ASSERT_NE(p.t, nullptr);
  EXPECT_EQ(Shape(p.t), (std::vector<int64_t>{4, 2, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(At(p.t, {i, j, k}), j * 12 + k * 4 + i);
  int32_t dup[3] = {0, 0, 1};
  EXPECT_EQ(ffk_tensor_permute(a.t, dup), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_permute: dimension 0 appears twice");
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
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_squeeze: dimension 0 has size 2, not 1");
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
  T tr(ffk_tensor_transpose(a.t, 0, 1));
  EXPECT_EQ(ffk_tensor_reshape(tr.t, 1, std::vector<int64_t>{12}.data()), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot reshape a non-contiguous tensor of shape [6, 2] with strides [1, 6]; "
                          "call ffk_tensor_contiguous first");
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
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_as_strided: shape [3, 3] with strides [3, 1] at byte offset 16 "
                          "reaches byte 88, past the end of its storage of 80 bytes");
  EXPECT_EQ(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{2}.data(), std::vector<int64_t>{-1}.data(), 5),
            nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_as_strided: negative stride -1 in strides [-1]");
  EXPECT_EQ(ffk_tensor_as_strided(a.t, 1, std::vector<int64_t>{2}.data(), std::vector<int64_t>{INT64_MAX}.data(), 0),
            nullptr);
  EXPECT_NE(FetchError().find("past the end of its storage of 80 bytes"), std::string::npos);
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
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_from_storage: shape [2, 4] with strides [4, 1] at byte offset 33 "
                          "reaches byte 65, past the end of its storage of 64 bytes");
  ffk_object_release(Obj(t));
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
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_copy_from: shapes differ (destination int64[4, 3]@cpu:0, source "
                          "int64[3, 4]@cpu:0)");
  T f(ffk_tensor_empty(2, std::vector<int64_t>{4, 3}.data(), kF32, kCpu));
  EXPECT_EQ(ffk_tensor_copy_from(f.t, dst.t), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_tensor_copy_from: dtypes differ (float32 destination, int64 source)");
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
  EXPECT_EQ(FetchError(), "TypeError: ffk_tensor_fill: expected an int, float or bool but got str");
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

}  // namespace
