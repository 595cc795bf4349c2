// ffikit/any.h: layout, constructors, accessors and their conversions, ownership,
// key equality and hash.
#include <ffikit/ffikit.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <limits>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Any : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

TEST_F(Any, PodConstructorsSetTypeAndLeaveUnusedBytesZero) {
  ffk_any v = ffk_any_bool(true);
  EXPECT_EQ(v.type_index, FFK_TYPE_BOOL);
  EXPECT_EQ(v.aux, 0u);
  EXPECT_EQ(v.v_int, 1);
  ffk_any d = ffk_any_dtype(ffk_dtype(FFK_DTYPE_FLOAT, 32, 1));
  unsigned char bytes[16];
  memcpy(bytes, &d, 16);
  for (int i = 12; i < 16; ++i) EXPECT_EQ(bytes[i], 0) << "byte " << i;  // DLDataType is 4 bytes
  ffk_any none = ffk_any_none();
  memcpy(bytes, &none, 16);
  for (unsigned char b : bytes) EXPECT_EQ(b, 0);
}

TEST_F(Any, IntAccessorAcceptsBoolAndRejectsOthersNamingBothTypes) {
  int64_t out = 0;
  ffk_any i = ffk_any_int(-5), b = ffk_any_bool(true), f = ffk_any_float(1.0);
  ASSERT_EQ(ffk_any_as_int(&i, &out), 0);
  EXPECT_EQ(out, -5);
  ASSERT_EQ(ffk_any_as_int(&b, &out), 0);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(ffk_any_as_int(&f, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected int but got float");
  OwnedAny s;
  ASSERT_EQ(ffk_any_cstr("text", &s.v), 0);
  EXPECT_EQ(ffk_any_as_int(&s.v, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected int but got str");
}

TEST_F(Any, FloatAccessorConvertsIntAndBool) {
  double out = 0;
  ffk_any i = ffk_any_int(3), b = ffk_any_bool(false), n = ffk_any_none();
  ASSERT_EQ(ffk_any_as_float(&i, &out), 0);
  EXPECT_EQ(out, 3.0);
  ASSERT_EQ(ffk_any_as_float(&b, &out), 0);
  EXPECT_EQ(out, 0.0);
  EXPECT_EQ(ffk_any_as_float(&n, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected float but got None");
}

TEST_F(Any, BoolAccessorTreatsNonZeroIntAsTrue) {
  bool out = false;
  ffk_any i = ffk_any_int(-7), f = ffk_any_float(0.5);
  ASSERT_EQ(ffk_any_as_bool(&i, &out), 0);
  EXPECT_TRUE(out);
  EXPECT_EQ(ffk_any_as_bool(&f, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected bool but got float");
}

// any.h's inline accessors (the macros) and the exported functions give the same results and errors.
TEST_F(Any, InlineAccessorsAgreeWithTheExportedFunctions) {
  const ffk_any values[] = {ffk_any_int(-7), ffk_any_bool(true), ffk_any_bool(false), ffk_any_float(2.5),
                            ffk_any_none(), ffk_any_raw_str("x")};
  for (const ffk_any& v : values) {
    int64_t i1 = 11, i2 = 11;
    double f1 = 1.5, f2 = 1.5;
    bool b1 = false, b2 = false;
    int rc = ffk_any_as_int(&v, &i1);
    std::string e1 = FetchError();
    EXPECT_EQ(rc, (ffk_any_as_int)(&v, &i2));
    EXPECT_EQ(e1, FetchError());
    EXPECT_EQ(i1, i2);
    rc = ffk_any_as_float(&v, &f1);
    e1 = FetchError();
    EXPECT_EQ(rc, (ffk_any_as_float)(&v, &f2));
    EXPECT_EQ(e1, FetchError());
    EXPECT_EQ(f1, f2);
    rc = ffk_any_as_bool(&v, &b1);
    e1 = FetchError();
    EXPECT_EQ(rc, (ffk_any_as_bool)(&v, &b2));
    EXPECT_EQ(e1, FetchError());
    EXPECT_EQ(b1, b2);
  }
  int (*exported)(const ffk_any*, int64_t*) = &ffk_any_as_int;  // the symbol stays
  int64_t x = 0;
  ffk_any v = ffk_any_int(3);
  EXPECT_EQ(exported(&v, &x), 0);
  EXPECT_EQ(x, 3);
}

TEST_F(Any, PtrAccessorAcceptsNoneAsNull) {
  int x;
  void* out = &x;
  ffk_any n = ffk_any_none(), p = ffk_any_ptr(&x), i = ffk_any_int(1);
  ASSERT_EQ(ffk_any_as_ptr(&n, &out), 0);
  EXPECT_EQ(out, nullptr);
  ASSERT_EQ(ffk_any_as_ptr(&p, &out), 0);
  EXPECT_EQ(out, &x);
  EXPECT_EQ(ffk_any_as_ptr(&i, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected ptr but got int");
}

TEST_F(Any, DtypeAndDeviceAccessorsParseStrings) {
  DLDataType t;
  DLDevice d;
  ffk_any s = ffk_any_raw_str("float16x2");
  ASSERT_EQ(ffk_any_as_dtype(&s, &t), 0);
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_FLOAT, 16, 2)));
  ffk_any dev = ffk_any_raw_str("cuda:1");
  ASSERT_EQ(ffk_any_as_device(&dev, &d), 0);
  EXPECT_TRUE(ffk_device_equal(d, ffk_device(FFK_DEVICE_CUDA, 1)));
  ffk_any bad = ffk_any_raw_str("gpu:1");
  EXPECT_EQ(ffk_any_as_device(&bad, &d), -1);
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: gpu");
  ffk_any i = ffk_any_int(1);
  EXPECT_EQ(ffk_any_as_dtype(&i, &t), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected dtype but got int");
  EXPECT_EQ(ffk_any_as_device(&i, &d), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected Device but got int");
}

TEST_F(Any, ObjectHoldingBorrowsOrStealsAsNamed) {
  ffk_string* s = ffk_string_new("shared text", 11);
  ffk_any borrowed = ffk_any_object(&s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  EXPECT_EQ(borrowed.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(borrowed.v_obj, &s->header);
  ffk_any stolen = ffk_any_object_steal(&s->header);
  EXPECT_EQ(ffk_object_use_count(&s->header), 2u);
  ffk_any copy = borrowed;
  ffk_any_retain(&copy);
  EXPECT_EQ(ffk_object_use_count(&s->header), 3u);
  ffk_any_release(&copy);
  EXPECT_EQ(copy.type_index, FFK_TYPE_NONE) << "release resets the value to None";
  ffk_any_release(&borrowed);
  ffk_any_release(&stolen);
  ffk_any null_obj = ffk_any_object(nullptr);
  EXPECT_EQ(null_obj.type_index, FFK_TYPE_NONE);
  ffk_any_release(nullptr);
}

TEST_F(Any, AsObjectChecksInstanceAndReturnsNewReference) {
  int32_t base = ffk_type_register("test.any.Base", FFK_TYPE_OBJECT);
  ffk_string* s = ffk_string_new("0123456789", 10);
  OwnedAny v(ffk_any_object_steal(&s->header));
  ffk_object* out = nullptr;
  ASSERT_EQ(ffk_any_as_object(&v.v, FFK_TYPE_STRING, &out), 0);
  EXPECT_EQ(out, &s->header);
  EXPECT_EQ(ffk_object_use_count(out), 2u);
  ffk_object_release(out);
  ASSERT_EQ(ffk_any_as_object(&v.v, FFK_TYPE_OBJECT, &out), 0);
  ffk_object_release(out);
  EXPECT_EQ(ffk_any_as_object(&v.v, FFK_TYPE_ARRAY, &out), -1);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(FetchError(), "TypeError: expected Array but got str");
  EXPECT_EQ(ffk_any_as_object(&v.v, base, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected test.any.Base but got str");
  ffk_any i = ffk_any_int(1);
  EXPECT_EQ(ffk_any_as_object(&i, FFK_TYPE_OBJECT, &out), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected Object but got int");
}

TEST_F(Any, ToOwnedTurnsViewsIntoValuesAndRetainsObjects) {
  ffk_any raw = ffk_any_raw_str("a raw C string view");
  OwnedAny owned;
  ASSERT_EQ(ffk_any_to_owned(&raw, &owned.v), 0);
  EXPECT_EQ(owned.v.type_index, FFK_TYPE_STRING);
  EXPECT_TRUE(ffk_any_equal(&raw, &owned.v));
  ffk_byte_array ba = {"\x01\x02", 2};
  ffk_any view = ffk_any_byte_array(&ba);
  OwnedAny small;
  ASSERT_EQ(ffk_any_to_owned(&view, &small.v), 0);
  EXPECT_EQ(small.v.type_index, FFK_TYPE_SMALL_BYTES);
  EXPECT_EQ(small.v.aux, 2u);
  OwnedAny again;
  ASSERT_EQ(ffk_any_to_owned(&owned.v, &again.v), 0);
  EXPECT_EQ(again.v.v_obj, owned.v.v_obj);
  EXPECT_EQ(ffk_object_use_count(owned.v.v_obj), 2u);
  ffk_any tensor_view = ffk_any_none();
  tensor_view.type_index = FFK_TYPE_DLTENSOR_PTR;
  OwnedAny out;
  EXPECT_EQ(ffk_any_to_owned(&tensor_view, &out.v), -1);
  EXPECT_NE(FetchError().find("DLTensor* view cannot be stored"), std::string::npos);
  ffk_any bad_utf8 = ffk_any_raw_str("\xff");
  EXPECT_EQ(ffk_any_to_owned(&bad_utf8, &out.v), -1);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_NE(FetchError().find("invalid UTF-8"), std::string::npos);
}

TEST_F(Any, OneTrueAndOnePointZeroAreThreeDistinctKeys) {
  ffk_any one = ffk_any_int(1), yes = ffk_any_bool(true), onef = ffk_any_float(1.0);
  EXPECT_FALSE(ffk_any_equal(&one, &yes));
  EXPECT_FALSE(ffk_any_equal(&one, &onef));
  EXPECT_FALSE(ffk_any_equal(&yes, &onef));
  EXPECT_NE(ffk_any_hash(&one), ffk_any_hash(&yes));
  EXPECT_NE(ffk_any_hash(&one), ffk_any_hash(&onef));
  ffk_any one_again = ffk_any_int(1);
  EXPECT_TRUE(ffk_any_equal(&one, &one_again));
  EXPECT_EQ(ffk_any_hash(&one), ffk_any_hash(&one_again));
}

TEST_F(Any, FloatKeysTreatNanAsEqualAndNegativeZeroAsZero) {
  ffk_any nan1 = ffk_any_float(std::nan("1")), nan2 = ffk_any_float(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(ffk_any_equal(&nan1, &nan2));
  EXPECT_EQ(ffk_any_hash(&nan1), ffk_any_hash(&nan2));
  ffk_any z = ffk_any_float(0.0), nz = ffk_any_float(-0.0);
  EXPECT_TRUE(ffk_any_equal(&z, &nz));
  EXPECT_EQ(ffk_any_hash(&z), ffk_any_hash(&nz));
}

TEST_F(Any, StringFormsCompareByContentAndNeverEqualBytes) {
  OwnedAny small, heap, bytes;
  ASSERT_EQ(ffk_any_cstr("key", &small.v), 0);
  ffk_string* obj = ffk_string_new("key", 3);
  heap.v = ffk_any_object_steal(&obj->header);
  ffk_any raw = ffk_any_raw_str("key");
  ASSERT_EQ(ffk_any_bytes("key", 3, &bytes.v), 0);
  EXPECT_TRUE(ffk_any_equal(&small.v, &heap.v));
  EXPECT_TRUE(ffk_any_equal(&raw, &heap.v));
  EXPECT_EQ(ffk_any_hash(&small.v), ffk_any_hash(&heap.v));
  EXPECT_EQ(ffk_any_hash(&raw), ffk_any_hash(&small.v));
  EXPECT_FALSE(ffk_any_equal(&small.v, &bytes.v));
  EXPECT_NE(ffk_any_hash(&small.v), ffk_any_hash(&bytes.v));
}

TEST_F(Any, OtherObjectsAndPointersCompareByIdentity) {
  int64_t dims[2] = {2, 3};
  OwnedAny a(ffk_any_object_steal(&ffk_shape_new(dims, 2)->header));
  OwnedAny b(ffk_any_object_steal(&ffk_shape_new(dims, 2)->header));
  EXPECT_FALSE(ffk_any_equal(&a.v, &b.v));
  EXPECT_TRUE(ffk_any_equal(&a.v, &a.v));
  int x, y;
  ffk_any px = ffk_any_ptr(&x), py = ffk_any_ptr(&y), px2 = ffk_any_ptr(&x);
  EXPECT_FALSE(ffk_any_equal(&px, &py));
  EXPECT_TRUE(ffk_any_equal(&px, &px2));
  EXPECT_EQ(ffk_any_hash(&px), ffk_any_hash(&px2));
  ffk_any n1 = ffk_any_none(), n2 = ffk_any_none();
  EXPECT_TRUE(ffk_any_equal(&n1, &n2));
}

TEST_F(Any, DtypeAndDeviceKeysCompareByValue) {
  ffk_any a = ffk_any_dtype(ffk_dtype(FFK_DTYPE_INT, 8, 1)), b = ffk_any_dtype(ffk_dtype(FFK_DTYPE_INT, 8, 1));
  ffk_any c = ffk_any_dtype(ffk_dtype(FFK_DTYPE_INT, 8, 4));
  EXPECT_TRUE(ffk_any_equal(&a, &b));
  EXPECT_EQ(ffk_any_hash(&a), ffk_any_hash(&b));
  EXPECT_FALSE(ffk_any_equal(&a, &c));
  ffk_any d0 = ffk_any_device(ffk_device(FFK_DEVICE_CUDA, 0)), d1 = ffk_any_device(ffk_device(FFK_DEVICE_CUDA, 1));
  EXPECT_FALSE(ffk_any_equal(&d0, &d1));
  EXPECT_NE(ffk_any_hash(&d0), ffk_any_hash(&d1));
}

// any.h's inline int hash (the containers' int-key lookups) is exactly ffk_any_hash of an Int.
TEST_F(Any, InlineIntHashIsTheHashOfAnInt) {
  for (int64_t x : {INT64_C(0), INT64_C(1), INT64_C(-1), INT64_C(123456789), INT64_MIN, INT64_MAX}) {
    ffk_any v = ffk_any_int(x);
    EXPECT_EQ(ffk_any__hash_int(x), ffk_any_hash(&v)) << x;
  }
  ffk_any t = ffk_any_bool(true), one = ffk_any_int(1);
  EXPECT_NE(ffk_any_hash(&t), ffk_any_hash(&one)) << "True and 1 stay distinct keys";
}

TEST_F(Any, IntHashesSpreadConsecutiveKeys) {
  // A hash table masks the low bits: consecutive ints must not collide there.
  const int n = 4096;
  std::vector<int> buckets(n, 0);
  for (int i = 0; i < n; ++i) {
    ffk_any v = ffk_any_int(i * 1024);
    ++buckets[ffk_any_hash(&v) & (n - 1)];
  }
  int worst = *std::max_element(buckets.begin(), buckets.end());
  EXPECT_LT(worst, 12) << "keys that differ only in high bits pile into few buckets";
}

TEST_F(Any, TypeNamesAreUserFacing) {
  OwnedAny s, b;
  ffk_any_cstr("hello, long string", &s.v);
  ffk_any_bytes("x", 1, &b.v);
  EXPECT_STREQ(ffk_any_type_name(&s.v), "str");
  EXPECT_STREQ(ffk_any_type_name(&b.v), "bytes");
  ffk_any p = ffk_any_ptr(nullptr), n = ffk_any_none();
  EXPECT_STREQ(ffk_any_type_name(&p), "ptr");
  EXPECT_STREQ(ffk_any_type_name(&n), "None");
}

}  // namespace
