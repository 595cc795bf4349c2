// ffikit/dlpack.h: export and import, legacy and versioned: ownership (each deleter
// exactly once), data pointers kept, the read-only flag, and malformed input rejected
// without anything freed.
#include <ffikit/ffikit.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "tests/support/ffk_test.h"

namespace {

class DLPack : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::PendingError;

const DLDevice kCpu = {kDLCPU, 0};
const DLDataType kF32 = {kDLFloat, 32, 1};
ffk_object* Obj(ffk_tensor* t) { return reinterpret_cast<ffk_object*>(t); }

// A producer's tensor: malloc'd data and shape, a deleter that counts its calls.
struct Producer {
  static int deletes;
  float data[12];
  int64_t shape[2] = {3, 4};
  int64_t strides[2] = {4, 1};
  DLManagedTensor legacy;
  DLManagedTensorVersioned versioned;
  Producer() { Reset(); }
  Producer(const Producer&) = delete;  // the structs point into this object
  void Reset() {
    shape[0] = 3, shape[1] = 4, strides[0] = 4, strides[1] = 1;
    for (int i = 0; i < 12; ++i) data[i] = static_cast<float>(i);
    DLTensor d = {data, kCpu, 2, kF32, shape, nullptr, 0};
    legacy = {d, this, [](DLManagedTensor*) { ++deletes; }};
    versioned = {{1, 1}, this, [](DLManagedTensorVersioned*) { ++deletes; }, 0, d};
  }
};
int Producer::deletes = 0;

TEST_F(DLPack, ExportImportRoundTripKeepsThePointerAndDeletesOnce) {
  int64_t shape[2] = {2, 3};
  ffk_tensor* t = ffk_tensor_zeros(2, shape, kF32, kCpu);
  DLManagedTensor* m = ffk_tensor_to_dlpack(t);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dl_tensor.data, ffk_tensor_dltensor_borrow(t)->data);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_NE(m->dl_tensor.strides, nullptr);
  ffk_object_release(Obj(t));  // the export keeps it alive
  m->dl_tensor.byte_offset = 0;  // rewritten unchanged: still our export as it was
  ffk_tensor* back = ffk_tensor_from_dlpack(m, nullptr);
  ASSERT_NE(back, nullptr) << FetchError();
  EXPECT_EQ(back, t) << "our own unchanged export comes back as the exported Tensor";
  EXPECT_EQ(ffk_object_use_count(Obj(back)), 1u) << "with the export's reference, the export freed";
  ffk_tensor* view = ffk_tensor_slice(back, 1, 1, 3, 1);
  ffk_object_release(Obj(back));  // the view keeps the import (and so the export) alive
  static_cast<float*>(ffk_tensor_data_ptr(view))[0] = 7.0f;
  ffk_object_release(Obj(view));  // last holder: export deleter runs, the original tensor goes
}

// The round-trip short cut applies only to an unchanged export of ours, and still checks
// the requirements; anything else takes the ordinary import.
TEST_F(DLPack, RoundTripShortCutOnlyForAnUnchangedExport) {
  int64_t shape[2] = {2, 3};
  ffk_tensor* t = ffk_tensor_zeros(2, shape, kF32, kCpu);
  ffk_tensor* tt = ffk_tensor_transpose(t, 0, 1);
  ASSERT_NE(tt, nullptr);
  DLManagedTensorVersioned* m = ffk_tensor_to_dlpack_versioned(tt);
  ASSERT_NE(m, nullptr);
  ffk_dlpack_requirements contiguous = {0, true};
  EXPECT_EQ(ffk_tensor_from_dlpack_versioned(m, &contiguous), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"not contiguous"}));
  m->dl_tensor.ndim = 1;  // changed by its holder: a 1-d view of the first column
  ffk_tensor* u = ffk_tensor_from_dlpack_versioned(m, nullptr);  // m untouched by the failure above
  ASSERT_NE(u, nullptr) << FetchError();
  EXPECT_NE(u, tt) << "a changed export is imported as a new Tensor";
  EXPECT_EQ(ffk_tensor_dltensor_borrow(u)->ndim, 1);
  EXPECT_EQ(ffk_tensor_storage_borrow(u), nullptr);
  EXPECT_EQ(ffk_object_use_count(Obj(tt)), 2u) << "tt and the export the import owns";
  ffk_object_release(Obj(u));
  EXPECT_EQ(ffk_object_use_count(Obj(tt)), 1u);
  uint32_t before = ffk_object_use_count(Obj(t));
  DLManagedTensor* lm = ffk_tensor_to_dlpack(t);
  ASSERT_NE(lm, nullptr);
  ffk_tensor* back = ffk_tensor_from_dlpack(lm, &contiguous);
  EXPECT_EQ(back, t);
  EXPECT_EQ(ffk_object_use_count(Obj(t)), before + 1) << "back holds the export's reference";
  ffk_object_release(Obj(back));
  ffk_object_release(Obj(tt));
  ffk_object_release(Obj(t));
}

TEST_F(DLPack, VersionedExportCarriesReadOnly) {
  Producer p;
  Producer::deletes = 0;
  p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ffk_tensor* t = ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_TRUE(ffk_tensor_is_read_only(t));
  EXPECT_EQ(ffk_tensor_data_ptr(t), p.data);
  EXPECT_TRUE(ffk_tensor_is_contiguous(t));  // null strides mean compact
  ffk_tensor* v = ffk_tensor_transpose(t, 0, 1);
  EXPECT_TRUE(ffk_tensor_is_read_only(v));
  EXPECT_EQ(ffk_tensor_to_dlpack(v), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"read-only tensor cannot be exported as a legacy DLManagedTensor"}));
  DLManagedTensorVersioned* out = ffk_tensor_to_dlpack_versioned(v);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->version.major, 1u);
  EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(out->dl_tensor.strides[0], 1);
  ffk_object_release(Obj(t));
  ffk_object_release(Obj(v));
  EXPECT_EQ(Producer::deletes, 0);  // the export still holds the view, which holds the import
  out->deleter(out);
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, MisalignedImportCopiesElementByElement) {
  // Found by the DLPack fuzzer: data + byte_offset need not be aligned to the element,
  // and the strided copy loaded such float32 elements as uint32_t (UBSan: misaligned
  // load). A transposed 2 x 3 float32 view starting one byte into the buffer.
  alignas(8) unsigned char buf[1 + 6 * sizeof(float)];
  for (int i = 0; i < 6; ++i) {
    float f = static_cast<float>(i);
    std::memcpy(buf + 1 + i * sizeof(float), &f, sizeof f);
  }
  int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  int deletes = 0;
  DLManagedTensor m = {{buf, kCpu, 2, kF32, shape, strides, 1}, &deletes,
                       [](DLManagedTensor* self) { ++*static_cast<int*>(self->manager_ctx); }};
  ffk_tensor* t = ffk_tensor_from_dlpack(&m, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_tensor* c = ffk_tensor_contiguous(t);
  ASSERT_NE(c, nullptr) << FetchError();
  const float* got = static_cast<const float*>(ffk_tensor_data_ptr(c));
  const float want[6] = {0, 2, 4, 1, 3, 5};  // element [i, j] is at i + 2 j
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
  // And back into the misaligned view, through the same loops.
  ASSERT_EQ(ffk_tensor_fill(t, &(const ffk_any&)ffk_any_float(7.0)), 0) << FetchError();
  float seven;
  std::memcpy(&seven, buf + 1 + 5 * sizeof(float), sizeof seven);
  EXPECT_EQ(seven, 7.0f);
  ffk_object_release(Obj(c));
  ffk_object_release(Obj(t));
  EXPECT_EQ(deletes, 1);
}

TEST_F(DLPack, ElementsSpanningMoreThan2To63BytesAreRejected) {
  // Found by the DLPack fuzzer: import checked that the shape's element count fits but
  // not where the strides (or the bytes of a huge compact shape) put the last element.
  Producer p;
  Producer::deletes = 0;
  int64_t shape[1] = {3}, strides[1] = {INT64_MAX / 2 + 1};  // last element at index 2^63
  p.legacy.dl_tensor.ndim = 1;
  p.legacy.dl_tensor.shape = shape;
  p.legacy.dl_tensor.strides = strides;
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"from_dlpack: ", "2^63 bytes"}));
  shape[0] = INT64_C(1) << 62;  // compact strides fit; 2^62 float32 are 2^64 bytes
  p.versioned.dl_tensor.ndim = 1;
  p.versioned.dl_tensor.shape = shape;
  EXPECT_EQ(ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"from_dlpack: ", "of float32 has more bytes than fit in 64 bits"}));
  shape[0] = 2;
  strides[0] = INT64_C(1) << 40;
  p.legacy.dl_tensor.byte_offset = INT64_MAX - ((INT64_C(1) << 40) + 1) * 4;  // ends at byte 2^63 - 1
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();  // large but representable: accepted (never read here)
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, ViewsOfAnEmptyImportIgnoreItsStrides) {
  // Found by the DLPack fuzzer: a tensor without elements may carry any strides (they
  // address nothing), but taking a view multiplied them out to measure the import's
  // extent: a signed overflow (UBSan) for shape [0, 4] with a stride near 2^61.5.
  Producer p;
  Producer::deletes = 0;
  int64_t shape[2] = {0, 4}, strides[2] = {1, INT64_C(3485786115930260222)};
  p.legacy.dl_tensor.shape = shape;
  p.legacy.dl_tensor.strides = strides;
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_tensor* v = ffk_tensor_slice(t, 1, 0, 2, 1);
  ASSERT_NE(v, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_numel(v), 0);
  ffk_object_release(Obj(v));
  // Found by the Python DLPack fuzzer: a view along the empty dimension keeps the other
  // dimension's size, and (4 - 1) * stride overflows; the view has no elements either.
  strides[1] = INT64_C(7166633235769540655);
  ffk_object_release(Obj(t));
  t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  v = ffk_tensor_slice(t, 0, 0, 0, 2);
  ASSERT_NE(v, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_numel(v), 0);
  ffk_object_release(Obj(v));
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 2);
}

TEST_F(DLPack, AByteOffsetPastTwoTo63IsRefusedEvenWithoutElements) {
  // Found by the Python DLPack fuzzer (UBSan): a tensor without elements skipped the span
  // check, so a byte_offset near 2^64 was accepted and data + byte_offset wrapped around.
  Producer p;
  Producer::deletes = 0;
  p.shape[0] = 0;
  p.legacy.dl_tensor.byte_offset = UINT64_MAX;
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"from_dlpack: ", "2^63 bytes", "byte_offset 18446744073709551615"}));
  p.legacy.dl_tensor.byte_offset = INT64_C(1) << 40;  // far, but representable: accepted, never read
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_tensor_data_ptr(t)), reinterpret_cast<uintptr_t>(p.data) + (UINT64_C(1) << 40));
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);
  p.Reset();
  // Data near the top of the address space: data + the elements' extent wraps around.
  p.legacy.dl_tensor.data = reinterpret_cast<void*>(UINTPTR_MAX - 16);
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"address space"}));
  EXPECT_EQ(Producer::deletes, 1) << "refused imports are not deleted";
}

TEST_F(DLPack, UnsqueezeBesideAHugeStrideDoesNotOverflow) {
  // Found by the Python DLPack fuzzer (UBSan): unsqueeze gives the new dimension the stride
  // shape[d] * strides[d], which overflows for a stride near 2^62 that the import accepts
  // (2 int8 elements, 2^62 bytes apart, end inside 2^63).
  Producer p;
  Producer::deletes = 0;
  int64_t shape[1] = {2}, strides[1] = {INT64_C(1) << 62};
  p.legacy.dl_tensor.ndim = 1;
  p.legacy.dl_tensor.shape = shape;
  p.legacy.dl_tensor.strides = strides;
  p.legacy.dl_tensor.dtype = ffk_dtype(kDLInt, 8, 1);
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_tensor* u = ffk_tensor_unsqueeze(t, 0);
  ASSERT_NE(u, nullptr) << FetchError();
  const DLTensor* dl = ffk_tensor_dltensor_borrow(u);
  EXPECT_EQ(dl->shape[0], 1);
  EXPECT_EQ(dl->strides[0], 1) << "any stride serves a dimension of size 1";
  EXPECT_EQ(dl->strides[1], INT64_C(1) << 62);
  ffk_object_release(Obj(u));
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, SlicesWithHugeStepsOrBesideAnEmptyDimensionDoNotOverflow) {
  // The same family as above, found reading ffk_tensor_slice: stride * step for a step
  // that leaves one element, and start * stride along a dimension whose neighbour is empty.
  Producer p;
  Producer::deletes = 0;
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);  // 3 x 4 float32
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_tensor* v = ffk_tensor_slice(t, 0, 1, 3, INT64_C(1) << 62);
  ASSERT_NE(v, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_dltensor_borrow(v)->shape[0], 1);
  EXPECT_EQ(ffk_tensor_data_ptr(v), static_cast<void*>(p.data + 4));
  ffk_object_release(Obj(v));
  ffk_object_release(Obj(t));
  Producer q;
  int64_t shape[2] = {5, 0}, strides[2] = {INT64_C(1) << 62, 1};
  q.legacy.dl_tensor.shape = shape;
  q.legacy.dl_tensor.strides = strides;
  t = ffk_tensor_from_dlpack(&q.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  v = ffk_tensor_slice(t, 0, 4, 5, 1);
  ASSERT_NE(v, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_numel(v), 0);
  ffk_object_release(Obj(v));
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 2);
}

TEST_F(DLPack, LegacyImportOwnsOnlyOnSuccess) {
  Producer p;
  Producer::deletes = 0;
  p.legacy.dl_tensor.strides = p.strides;
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr);
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, MalformedTensorsAreRejectedAndNotFreed) {
  Producer p;
  Producer::deletes = 0;
  auto reject = [&](const char* expected) {
    EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
    EXPECT_EQ(FetchError(), expected);
    p.Reset();
  };
  p.shape[1] = -4;
  reject("ValueError: from_dlpack: shape[1] is -4, and a dimension cannot be negative");
  p.legacy.dl_tensor.ndim = 33;
  reject("ValueError: from_dlpack: shape has 33 dimensions; a tensor has 0 to 32");
  p.legacy.dl_tensor.data = nullptr;
  reject("ValueError: from_dlpack: data is NULL but the tensor has 12 elements");
  p.legacy.dl_tensor.dtype = DLDataType{kDLFloat, 12, 1};
  reject("ValueError: from_dlpack: unsupported dtype dtype(code=2, bits=12, lanes=1): its elements are 12 bits, not a "
         "whole number of bytes");
  p.legacy.dl_tensor.dtype = DLDataType{kDLFloat, 32, 4};
  reject("ValueError: from_dlpack: unsupported dtype float32x4: an element has one lane, and it has 4");
  p.legacy.dl_tensor.dtype = DLDataType{77, 32, 1};
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"unsupported dtype", "code 77"}));
  p.Reset();
  p.legacy.dl_tensor.device = DLDevice{static_cast<DLDeviceType>(99), 0};
  reject("ValueError: from_dlpack: unknown device (type 99, id 0)");
  // Negative strides are accepted (numpy's a[::-1]), but not below address 0.
  p.legacy.dl_tensor.strides = p.strides;
  p.strides[0] = -4;
  p.legacy.dl_tensor.data = reinterpret_cast<void*>(16);
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"from_dlpack: ", "outside the address space"}));
  p.Reset();
  p.legacy.dl_tensor.shape = nullptr;
  reject("ValueError: from_dlpack: the shape of a 2-d tensor is NULL");
  p.versioned.version.major = 2;
  EXPECT_EQ(ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: DLPack version 2.1 is not supported (1.x is)");
  EXPECT_EQ(ffk_tensor_from_dlpack(nullptr, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: the managed tensor is NULL");
  // No elements and NULL strides, but the compact strides would not fit in 64 bits.
  int64_t huge[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  p.legacy.dl_tensor.ndim = 3;
  p.legacy.dl_tensor.shape = huge;
  reject("ValueError: from_dlpack: the contiguous strides of shape [0, 1099511627776, 1099511627776] "
         "do not fit in 64 bits");
  EXPECT_EQ(Producer::deletes, 0);
}

// The float at a multi-index of a float32 tensor, computed from the DLTensor alone.
float FloatAt(const ffk_tensor* t, std::initializer_list<int64_t> idx) {
  const DLTensor* d = ffk_tensor_dltensor_borrow(t);
  int64_t off = 0, i = 0;
  for (int64_t x : idx) off += x * d->strides[i++];
  return reinterpret_cast<const float*>(static_cast<const char*>(d->data) + d->byte_offset)[off];
}

// numpy exports a[::-1] and 2-d flips with negative strides: data points at element
// [0, 0] and the other elements lie before it. They import, view, copy and export.
TEST_F(DLPack, NegativeStridesImportViewCopyAndExport) {
  Producer p;
  Producer::deletes = 0;
  p.strides[0] = -4, p.strides[1] = -1;  // [i, j] holds 11 - 4i - j
  p.legacy.dl_tensor.data = p.data + 11;
  p.legacy.dl_tensor.strides = p.strides;
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_FALSE(ffk_tensor_is_contiguous(t));
  EXPECT_EQ(FloatAt(t, {2, 3}), 0.0f);
  ffk_tensor* c = ffk_tensor_contiguous(t);
  ASSERT_NE(c, nullptr) << FetchError();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(static_cast<const float*>(ffk_tensor_data_ptr(c))[i], 11.0f - i);
  ffk_tensor* row = ffk_tensor_select(t, 0, -2);  // row 1: 7, 6, 5, 4
  ASSERT_NE(row, nullptr) << FetchError();
  EXPECT_EQ(FloatAt(row, {0}), 7.0f);
  EXPECT_EQ(FloatAt(row, {3}), 4.0f);
  ffk_tensor* cols = ffk_tensor_slice(t, 1, 1, 4, 2);  // columns 1 and 3
  ASSERT_NE(cols, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_dltensor_borrow(cols)->strides[1], -2);
  EXPECT_EQ(FloatAt(cols, {0, 0}), 10.0f);
  EXPECT_EQ(FloatAt(cols, {2, 1}), 0.0f);
  ffk_tensor* last = ffk_tensor_select(t, 0, 2);  // row 2: 3, 2, 1, 0 (below the import's data pointer)
  ASSERT_NE(last, nullptr) << FetchError();
  EXPECT_EQ(FloatAt(last, {3}), 0.0f);
  ffk_tensor* tail = ffk_tensor_slice(last, 0, 3, 4, 1);  // a view of a view that starts before the original data
  ASSERT_NE(tail, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_data_ptr(tail), static_cast<void*>(p.data));
  EXPECT_EQ(ffk_tensor_dltensor_borrow(tail)->byte_offset, 0u);
  // Views stay inside the import: one element further back is refused.
  int64_t shape13[1] = {13}, back[1] = {-1};
  EXPECT_EQ(ffk_tensor_as_strided(t, 1, shape13, back, 0), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"as_strided: ", "before the start"}));
  // Copies into and out of a reversed layout; fill writes every element.
  ASSERT_EQ(ffk_tensor_copy_from(c, t), 0) << FetchError();
  ffk_any two = ffk_any_float(2.0);
  ASSERT_EQ(ffk_tensor_fill(cols, &two), 0) << FetchError();
  EXPECT_EQ(p.data[10], 2.0f);
  EXPECT_EQ(p.data[0], 2.0f);
  EXPECT_EQ(p.data[1], 1.0f);
  // Export keeps the strides; the import of that export is the same tensor.
  DLManagedTensorVersioned* m = ffk_tensor_to_dlpack_versioned(cols);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dl_tensor.strides[0], -4);
  EXPECT_EQ(m->dl_tensor.strides[1], -2);
  ffk_tensor* again = ffk_tensor_from_dlpack_versioned(m, nullptr);
  EXPECT_EQ(again, cols);
  for (ffk_tensor* x : {again, cols, last, tail, row, c, t}) ffk_object_release(Obj(x));
  EXPECT_EQ(Producer::deletes, 1);
}

// A storage-backed tensor reversed with as_strided: bounds are checked at both ends.
TEST_F(DLPack, NegativeStridesOverStorageAreBoundsCheckedAtBothEnds) {
  int64_t shape[1] = {4};
  ffk_tensor* t = ffk_tensor_empty(1, shape, kF32, kCpu);
  for (int i = 0; i < 4; ++i) static_cast<float*>(ffk_tensor_data_ptr(t))[i] = static_cast<float>(i);
  int64_t rev[1] = {-1};
  ffk_tensor* r = ffk_tensor_as_strided(t, 1, shape, rev, 3);
  ASSERT_NE(r, nullptr) << FetchError();
  EXPECT_EQ(FloatAt(r, {0}), 3.0f);
  EXPECT_EQ(FloatAt(r, {3}), 0.0f);
  EXPECT_EQ(ffk_tensor_as_strided(t, 1, shape, rev, 2), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: as_strided: shape [4] with strides [-1] at byte offset 8 reaches byte -4, "
                          "before the start of its storage of 16 bytes");
  ffk_object_release(Obj(r));
  ffk_object_release(Obj(t));
}

// DLPack 1.1's float8/float6/float4 codes: ffikit re-imports its own float8 export, and a
// producer's; sub-byte elements that are not packed into whole bytes are refused by rule.
TEST_F(DLPack, Float8AndPackedFloat4CodesImport) {
  int64_t shape[1] = {4};
  const DLDataType f8 = {FFK_DTYPE_FLOAT8_E4M3FN, 8, 1}, f4x2 = {FFK_DTYPE_FLOAT4_E2M1FN, 4, 2};
  for (DLDataType dt : {f8, DLDataType{FFK_DTYPE_FLOAT8_E5M2, 8, 1}, DLDataType{FFK_DTYPE_FLOAT8_E8M0FNU, 8, 1}, f4x2}) {
    ffk_tensor* t = ffk_tensor_zeros(1, shape, dt, kCpu);
    ASSERT_NE(t, nullptr) << FetchError();
    EXPECT_EQ(ffk_tensor_nbytes(t), 4);
    DLManagedTensorVersioned* m = ffk_tensor_to_dlpack_versioned(t);
    m->dl_tensor.shape = shape;  // no longer field for field ours: the ordinary import runs
    ffk_tensor* back = ffk_tensor_from_dlpack_versioned(m, nullptr);
    ASSERT_NE(back, nullptr) << FetchError();
    EXPECT_NE(back, t);
    EXPECT_TRUE(ffk_dtype_equal(ffk_tensor_dltensor_borrow(back)->dtype, dt));
    ffk_object_release(Obj(back));
    ffk_object_release(Obj(t));
  }
  Producer p;
  p.legacy.dl_tensor.dtype = DLDataType{FFK_DTYPE_FLOAT6_E2M3FN, 6, 1};
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: unsupported dtype float6_e2m3fn: its elements are 6 bits, not a "
                          "whole number of bytes");
}

// The one-pass import (a CPU tensor at byte_offset 0, one-lane whole-byte elements,
// compact or NULL strides, no alignment asked) and the general one give the same Tensor:
// each layout the quick path takes, and each it must leave to the general path, keeps
// every field of the producer's DLTensor (strides as given, or the compact ones for NULL).
TEST_F(DLPack, EveryLayoutKeepsItsFieldsWhicheverPathImportsIt) {
  struct Case {
    const char* name;
    void (*change)(Producer&, DLTensor&);
    int64_t strides[2];  // what the Tensor must have
  };
  const Case cases[] = {
      {"compact, NULL strides", [](Producer&, DLTensor&) {}, {4, 1}},
      {"compact strides given", [](Producer& p, DLTensor& d) { d.strides = p.strides; }, {4, 1}},
      {"float8 elements", [](Producer&, DLTensor& d) { d.dtype = {FFK_DTYPE_FLOAT8_E4M3FN, 8, 1}; }, {4, 1}},
      {"size-one dimension", [](Producer& p, DLTensor&) { p.shape[0] = 1; }, {4, 1}},
      {"zero-size, NULL data",
       [](Producer& p, DLTensor& d) {
         p.shape[0] = 0;
         d.data = nullptr;
       },
       {4, 1}},
      // The general path's: each would be wrong if the quick one took it as compact.
      {"column-major",
       [](Producer& p, DLTensor& d) {
         p.strides[0] = 1, p.strides[1] = 3;
         d.strides = p.strides;
       },
       {1, 3}},
      {"stride of a size-one dimension",
       [](Producer& p, DLTensor& d) {
         p.shape[0] = 1, p.strides[0] = 99;
         d.strides = p.strides;
       },
       {99, 1}},
      {"byte_offset", [](Producer&, DLTensor& d) { d.byte_offset = 4; }, {4, 1}},
      {"CUDA device", [](Producer&, DLTensor& d) { d.device = {kDLCUDA, 1}; }, {4, 1}},
      {"packed float4 (two lanes)", [](Producer&, DLTensor& d) { d.dtype = {FFK_DTYPE_FLOAT4_E2M1FN, 4, 2}; }, {4, 1}},
      {"0-d, NULL shape",
       [](Producer&, DLTensor& d) {
         d.ndim = 0;
         d.shape = nullptr;
       },
       {0, 0}},
  };
  for (const Case& c : cases) {
    for (bool versioned : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (versioned ? ", versioned" : ", legacy"));
      Producer p;
      Producer::deletes = 0;
      DLTensor& d = versioned ? p.versioned.dl_tensor : p.legacy.dl_tensor;
      c.change(p, d);
      if (versioned) p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;  // carried over on either path
      ffk_tensor* t = versioned ? ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr)
                                : ffk_tensor_from_dlpack(&p.legacy, nullptr);
      ASSERT_NE(t, nullptr) << FetchError();
      const DLTensor* got = ffk_tensor_dltensor_borrow(t);
      EXPECT_EQ(got->data, d.data);
      EXPECT_EQ(got->byte_offset, d.byte_offset);
      EXPECT_EQ(got->device.device_type, d.device.device_type);
      EXPECT_EQ(got->device.device_id, d.device.device_id);
      EXPECT_TRUE(ffk_dtype_equal(got->dtype, d.dtype));
      ASSERT_EQ(got->ndim, d.ndim);
      for (int32_t i = 0; i < d.ndim; ++i) {
        EXPECT_EQ(got->shape[i], d.shape[i]) << "dimension " << i;
        EXPECT_EQ(got->strides[i], c.strides[i]) << "dimension " << i;
      }
      EXPECT_EQ(ffk_tensor_is_read_only(t), versioned);
      EXPECT_EQ(ffk_tensor_storage_borrow(t), nullptr);
      ffk_object_release(Obj(t));
      EXPECT_EQ(Producer::deletes, 1) << "the Tensor owned the managed tensor";
    }
  }
}

// What the quick path doubts, the general path decides: the same errors as before it, and
// nothing taken.
TEST_F(DLPack, TheQuickPathLeavesEveryRefusalToTheGeneralOne) {
  Producer p;
  Producer::deletes = 0;
  // Compact, but the bytes run past the end of the address space.
  p.legacy.dl_tensor.data = reinterpret_cast<void*>(UINTPTR_MAX - 15);
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"from_dlpack: ", "outside the address space"}));
  p.Reset();
  // Compact and 12 elements, but no data.
  p.versioned.dl_tensor.data = nullptr;
  EXPECT_EQ(ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: data is NULL but the tensor has 12 elements");
  p.Reset();
  // Compact strides given, one dimension negative.
  p.shape[0] = -3;
  p.legacy.dl_tensor.strides = p.strides;
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: shape[0] is -3, and a dimension cannot be negative");
  p.Reset();
  // A CPU device with a negative id.
  p.legacy.dl_tensor.device = {kDLCPU, -1};
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: unknown device (type 1, id -1)");
  p.Reset();
  // An alignment the data does not have: compact, but asked for more.
  ffk_dlpack_requirements aligned = {1024, false};
  p.legacy.dl_tensor.data = reinterpret_cast<char*>(p.data) + 4;
  p.shape[0] = 2;
  if (reinterpret_cast<uintptr_t>(p.legacy.dl_tensor.data) % 1024 != 0) {
    EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, &aligned), nullptr);
    EXPECT_TRUE(PendingError("ValueError", {"is not aligned to 1024 bytes"}));
  }
  EXPECT_EQ(Producer::deletes, 0);
}

// The requirements are checked first, whatever the tensor, and alone for a binding.
TEST_F(DLPack, ImportRefusesAnAlignmentThatIsNotAPowerOfTwoBeforeTheTensor) {
  Producer p;
  Producer::deletes = 0;
  ffk_dlpack_requirements six = {6, false}, none = {0, true}, one = {1, false}, big = {size_t{1} << 63, false};
  EXPECT_EQ(ffk_dlpack_check_requirements("from_dlpack", &six), -1);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: required alignment 6 is not a power of two");
  EXPECT_EQ(ffk_dlpack_check_requirements(nullptr, &six), -1);
  EXPECT_EQ(FetchError(), "ValueError: required alignment 6 is not a power of two");
  for (const ffk_dlpack_requirements* ok : {&none, &one, &big}) EXPECT_EQ(ffk_dlpack_check_requirements("x", ok), 0);
  EXPECT_EQ(ffk_dlpack_check_requirements("x", nullptr), 0);
  p.shape[0] = -3;  // a bad tensor too: the requirement is named, as the binding's check named it
  EXPECT_EQ(ffk_tensor_from_dlpack(&p.legacy, &six), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: required alignment 6 is not a power of two");
  EXPECT_EQ(ffk_tensor_from_dlpack_versioned(&p.versioned, &six), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: required alignment 6 is not a power of two");
  EXPECT_EQ(Producer::deletes, 0);
}

// Writers refuse a read-only tensor and its views, in C, whatever the binding.
TEST_F(DLPack, WritersRefuseReadOnlyTensors) {
  Producer p;
  Producer::deletes = 0;
  p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ffk_tensor* t = ffk_tensor_from_dlpack_versioned(&p.versioned, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_tensor* v = ffk_tensor_transpose(t, 0, 1);
  ffk_any one = ffk_any_int(1);
  EXPECT_EQ(ffk_tensor_fill(t, &one), -1);
  EXPECT_EQ(FetchError(), "ValueError: fill: the tensor is read-only (its DLPack producer marked it so)");
  EXPECT_EQ(ffk_tensor_fill(v, &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"read-only"}));
  EXPECT_EQ(ffk_tensor_fill_complex(v, 1, 0), -1);
  EXPECT_EQ(FetchError(), "ValueError: fill: the tensor is read-only (its DLPack producer marked it so)");
  int64_t shape[2] = {3, 4};
  ffk_tensor* src = ffk_tensor_zeros(2, shape, kF32, kCpu);
  EXPECT_EQ(ffk_tensor_copy_from(t, src), -1);
  EXPECT_EQ(FetchError(), "ValueError: copy_from: the destination tensor is read-only (its DLPack producer marked it so)");
  EXPECT_EQ(ffk_tensor_check_writable(v, "write_from"), -1);
  EXPECT_EQ(FetchError(), "ValueError: write_from: the tensor is read-only (its DLPack producer marked it so)");
  EXPECT_EQ(ffk_tensor_check_writable(src, "write_from"), 0);
  ASSERT_EQ(ffk_tensor_copy_from(src, t), 0) << "reading is fine";
  for (int i = 0; i < 12; ++i) EXPECT_EQ(p.data[i], static_cast<float>(i)) << "nothing was written";
  for (ffk_tensor* x : {src, v, t}) ffk_object_release(Obj(x));
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, ZeroSizeAndRequirements) {
  Producer p;
  Producer::deletes = 0;
  p.shape[0] = 0;
  p.legacy.dl_tensor.data = nullptr;  // allowed: no elements
  p.legacy.dl_tensor.byte_offset = 26;
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_numel(t), 0);
  // Found by the Python DLPack fuzzer (UBSan): NULL + byte_offset is undefined.
  EXPECT_EQ(ffk_tensor_data_ptr(t), nullptr) << "no data: no element address, whatever the offset";
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);

  Producer q;
  q.legacy.dl_tensor.byte_offset = 4;  // data + 4 is 4-aligned, not 64-aligned
  ffk_dlpack_requirements aligned = {64, false};
  if ((reinterpret_cast<uintptr_t>(q.data) + 4) % 64 != 0) {
    EXPECT_EQ(ffk_tensor_from_dlpack(&q.legacy, &aligned), nullptr);
    EXPECT_TRUE(PendingError("ValueError", {"is not aligned to 64 bytes"}));
  }
  q.legacy.dl_tensor.byte_offset = 0;
  q.legacy.dl_tensor.strides = q.strides;
  q.strides[0] = 1;
  q.strides[1] = 3;  // column-major
  ffk_dlpack_requirements contiguous = {0, true};
  EXPECT_EQ(ffk_tensor_from_dlpack(&q.legacy, &contiguous), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: from_dlpack: the tensor is not contiguous");
  EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DLPack, SharedMemoryTensorsRoundTrip) {
  ffk_storage* s = ffk_storage_new_shared(nullptr, 64);
  ASSERT_NE(s, nullptr) << FetchError();
  int64_t shape[2] = {4, 4};
  ffk_tensor* t = ffk_tensor_from_storage(s, 2, shape, nullptr, 0, kF32);
  ffk_object_release(reinterpret_cast<ffk_object*>(s));
  DLManagedTensor* legacy = ffk_tensor_to_dlpack(t);
  DLManagedTensorVersioned* versioned = ffk_tensor_to_dlpack_versioned(t);
  ffk_tensor* a = ffk_tensor_from_dlpack(legacy, nullptr);
  ffk_tensor* b = ffk_tensor_from_dlpack_versioned(versioned, nullptr);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ffk_tensor_data_ptr(a), ffk_tensor_data_ptr(t));
  EXPECT_EQ(ffk_tensor_data_ptr(b), ffk_tensor_data_ptr(t));
  std::string name = ffk_storage_shared_name(ffk_tensor_storage_borrow(t));
  ffk_object_release(Obj(t));
  ffk_object_release(Obj(a));
  ffk_storage* again = ffk_storage_attach_shared(name.c_str());  // b still holds the segment
  ASSERT_NE(again, nullptr) << FetchError();
  ffk_object_release(reinterpret_cast<ffk_object*>(again));
  ffk_object_release(Obj(b));  // the last holder: the name goes
  EXPECT_EQ(ffk_storage_attach_shared(name.c_str()), nullptr);
  EXPECT_TRUE(PendingError("FileNotFoundError"));
}

TEST_F(DLPack, ExportAndImportSurviveEveryAllocationFailure) {
  int64_t shape[1] = {5};
  ffk_tensor* t = ffk_tensor_zeros(1, shape, kF32, kCpu);
  ffk::test::SweepAllocationFailures([t] {
    DLManagedTensorVersioned* m = ffk_tensor_to_dlpack_versioned(t);
    if (m == nullptr) return false;
    ffk_tensor* back = ffk_tensor_from_dlpack_versioned(m, nullptr);
    if (back == nullptr) {
      m->deleter(m);  // import failed: still ours
      return false;
    }
    ffk_object_release(Obj(back));
    return true;
  });
  ffk_object_release(Obj(t));
}

}  // namespace

// ---- Streams: the DLPack `stream` argument on both sides, without a device --------------------

namespace {

// A made-up CUDA stream handle (never dereferenced: the cases below queue no device work).
void* const kFakeStream = reinterpret_cast<void*>(uintptr_t{0x5000});

// Sets (and on destruction restores) the thread's current CUDA stream for device 0.
struct CurrentStream {
  void* previous = nullptr;
  explicit CurrentStream(void* s) { EXPECT_EQ(ffk_stream_set(FFK_DEVICE_CUDA, 0, s, &previous), 0) << FetchError(); }
  ~CurrentStream() { EXPECT_EQ(ffk_stream_set(FFK_DEVICE_CUDA, 0, previous, nullptr), 0) << FetchError(); }
};

// On a device without streams the argument must be None or -1, whatever the integer.
TEST_F(DLPack, ExportStreamOnTheCpuTakesNoneOrMinusOneOnly) {
  int64_t shape[1] = {4};
  ffk_tensor* t = ffk_tensor_zeros(1, shape, kF32, kCpu);
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, false, 0), 0) << FetchError();  // None
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, false, 12345), 0) << "the value is ignored with has_stream false";
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, -1), 0) << FetchError();
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{5}, int64_t{-2}, INT64_MAX, INT64_MIN}) {
    EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, bad), -1) << bad;
    EXPECT_EQ(FetchError(), "ValueError: stream must be None for a tensor on cpu, got " + std::to_string(bad));
  }
  // Host memory of CUDA (pinned) has no streams either.
  DLDevice pinned = {kDLCUDAHost, 0};
  int64_t out = 77;
  EXPECT_FALSE(ffk_dlpack_consumer_stream(pinned, &out));
  EXPECT_FALSE(ffk_dlpack_consumer_stream(kCpu, &out));
  EXPECT_EQ(out, 77) << "left alone when there is nothing to pass";
  ffk_object_release(Obj(t));
}

// The check alone (what __dlpack__(copy=True) asks before copying): the export's rule and
// texts, for any device, with no tensor and no stream work.
TEST_F(DLPack, CheckStreamIsTheExportsRuleAlone) {
  EXPECT_EQ(ffk_dlpack_check_stream(kCpu, false, 0), 0) << FetchError();
  EXPECT_EQ(ffk_dlpack_check_stream(kCpu, true, -1), 0) << FetchError();
  EXPECT_EQ(ffk_dlpack_check_stream(kCpu, true, 5), -1);
  EXPECT_EQ(FetchError(), "ValueError: stream must be None for a tensor on cpu, got 5");
  DLDevice cuda = {kDLCUDA, 1};
  for (int64_t ok : {int64_t{-1}, int64_t{1}, int64_t{2}, int64_t{0x7f00}})
    EXPECT_EQ(ffk_dlpack_check_stream(cuda, true, ok), 0) << ok << ": " << FetchError();
  EXPECT_EQ(ffk_dlpack_check_stream(cuda, false, 0), 0) << FetchError();
  EXPECT_EQ(ffk_dlpack_check_stream(cuda, true, 0), -1);
  EXPECT_EQ(FetchError(),
            "ValueError: stream 0 is not a valid DLPack stream for a tensor on `cuda:1` (0 is ambiguous: pass 1 for "
            "the legacy default stream, 2 for the per-thread default stream)");
  EXPECT_EQ(ffk_dlpack_check_stream(cuda, true, -3), -1);
  EXPECT_EQ(FetchError(),
            "ValueError: stream -3 is not a valid DLPack stream for a tensor on `cuda:1` (use None, -1, 1, 2 or a "
            "stream handle)");
}

// A CUDA tensor's export validates its argument before any device work; the cases that
// need no event (no synchronisation asked, the same stream on both sides) queue nothing,
// so they hold on any machine, with or without a driver or CUDA in the build.
TEST_F(DLPack, ExportStreamOnCudaValidatesAndSkipsWhatNeedsNoOrdering) {
  Producer p;
  Producer::deletes = 0;
  p.legacy.dl_tensor.device = DLDevice{kDLCUDA, 0};  // never touched: no device work below
  ffk_tensor* t = ffk_tensor_from_dlpack(&p.legacy, nullptr);
  ASSERT_NE(t, nullptr) << FetchError();
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, 0), -1);
  EXPECT_EQ(FetchError(),
            "ValueError: stream 0 is not a valid DLPack stream for a tensor on `cuda:0` (0 is ambiguous: pass 1 for "
            "the legacy default stream, 2 for the per-thread default stream)");
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, -7), -1);
  EXPECT_EQ(FetchError(),
            "ValueError: stream -7 is not a valid DLPack stream for a tensor on `cuda:0` (use None, -1, 1, 2 or a "
            "stream handle)");
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, -1), 0) << FetchError();  // no synchronisation asked
  // ffikit on the legacy default stream (none set): None and 1 name that same stream.
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, false, 0), 0) << FetchError();
  EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, 1), 0) << FetchError();
  {
    CurrentStream current(kFakeStream);  // the consumer passes ffikit's own stream back
    EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, static_cast<int64_t>(reinterpret_cast<uintptr_t>(kFakeStream))),
              0)
        << FetchError();
    EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, 0), -1) << "still validated first";
    EXPECT_TRUE(PendingError("ValueError", {"stream 0"}));
  }
  {
    CurrentStream current(reinterpret_cast<void*>(uintptr_t{1}));  // cudaStreamLegacy set explicitly
    EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, false, 0), 0) << FetchError();
    EXPECT_EQ(ffk_tensor_dlpack_export_stream(t, true, 1), 0) << FetchError();
  }
  ffk_object_release(Obj(t));
  EXPECT_EQ(Producer::deletes, 1);
}

// The consumer's side: the value ffikit passes to a producer's __dlpack__.
TEST_F(DLPack, ConsumerStreamIsTheCurrentStreamOrOneForTheLegacyDefault) {
  int64_t out = 0;
  const DLDevice cuda0 = {kDLCUDA, 0}, cuda1 = {kDLCUDA, 1}, managed = {kDLCUDAManaged, 0};
  ASSERT_TRUE(ffk_dlpack_consumer_stream(cuda0, &out));
  EXPECT_EQ(out, 1) << "no stream set: the legacy default stream, passed as 1 (0 is ambiguous)";
  ASSERT_TRUE(ffk_dlpack_consumer_stream(managed, &out));
  EXPECT_EQ(out, 1);
  {
    CurrentStream current(kFakeStream);
    ASSERT_TRUE(ffk_dlpack_consumer_stream(cuda0, &out));
    EXPECT_EQ(out, static_cast<int64_t>(reinterpret_cast<uintptr_t>(kFakeStream)));
    ASSERT_TRUE(ffk_dlpack_consumer_stream(cuda1, &out));
    EXPECT_EQ(out, 1) << "device 1 keeps its own (default) stream";
  }
  {
    CurrentStream current(reinterpret_cast<void*>(uintptr_t{2}));  // cudaStreamPerThread
    ASSERT_TRUE(ffk_dlpack_consumer_stream(cuda0, &out));
    EXPECT_EQ(out, 2);
  }
  ASSERT_TRUE(ffk_dlpack_consumer_stream(cuda0, &out));
  EXPECT_EQ(out, 1) << "restored";
}

// ffk_stream_order has nothing to do (and calls no runtime) for one stream or a device
// without streams.
TEST_F(DLPack, StreamOrderWithNothingToOrderSucceeds) {
  EXPECT_EQ(ffk_stream_order(kCpu, kFakeStream, nullptr), 0) << FetchError();
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDAHost, 0}, kFakeStream, nullptr), 0) << FetchError();
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDA, 0}, kFakeStream, kFakeStream), 0) << FetchError();
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDA, 3}, nullptr, nullptr), 0) << FetchError();
  // NULL and 1 (cudaStreamLegacy) are two names of the legacy default stream: no event,
  // so no runtime call either (without a driver one would fail).
  void *legacy = reinterpret_cast<void *>(uintptr_t{1});
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDA, 0}, nullptr, legacy), 0) << FetchError();
  EXPECT_EQ(ffk_stream_order(DLDevice{kDLCUDA, 0}, legacy, nullptr), 0) << FetchError();
  EXPECT_TRUE(ffk_device_has_streams(DLDevice{kDLCUDA, 0}));
  EXPECT_TRUE(ffk_device_has_streams(DLDevice{kDLCUDAManaged, 0}));
  EXPECT_FALSE(ffk_device_has_streams(kCpu));
  EXPECT_FALSE(ffk_device_has_streams(DLDevice{kDLCUDAHost, 0}));
}

}  // namespace
