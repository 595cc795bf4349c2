// Tests of ffikit/dtype.h: parsing and printing DataType text.
#include <ffikit/dtype.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;

class DataType : public ffk::test::Test {};

std::string Format(DLDataType t) {
  char buf[128];
  std::memset(buf, 'Z', sizeof buf);
  size_t n = ffk_dtype_format(t, buf, sizeof buf);
  EXPECT_EQ(std::strlen(buf), n) << "returned length differs from the text written";
  return std::string(buf, std::strlen(buf));
}

struct Named {
  const char* text;
  uint8_t code;
  uint8_t bits;
};

const std::vector<Named>& AllNames() {
  static const std::vector<Named> names = {
      {"int8", FFK_DTYPE_INT, 8},
      {"int16", FFK_DTYPE_INT, 16},
      {"int32", FFK_DTYPE_INT, 32},
      {"int64", FFK_DTYPE_INT, 64},
      {"uint8", FFK_DTYPE_UINT, 8},
      {"uint16", FFK_DTYPE_UINT, 16},
      {"uint32", FFK_DTYPE_UINT, 32},
      {"uint64", FFK_DTYPE_UINT, 64},
      {"float16", FFK_DTYPE_FLOAT, 16},
      {"float32", FFK_DTYPE_FLOAT, 32},
      {"float64", FFK_DTYPE_FLOAT, 64},
      {"bfloat16", FFK_DTYPE_BFLOAT, 16},
      {"complex64", FFK_DTYPE_COMPLEX, 64},
      {"complex128", FFK_DTYPE_COMPLEX, 128},
      {"bool", FFK_DTYPE_BOOL, 8},
      {"float8_e3m4", FFK_DTYPE_FLOAT8_E3M4, 8},
      {"float8_e4m3", FFK_DTYPE_FLOAT8_E4M3, 8},
      {"float8_e4m3b11fnuz", FFK_DTYPE_FLOAT8_E4M3B11FNUZ, 8},
      {"float8_e4m3fn", FFK_DTYPE_FLOAT8_E4M3FN, 8},
      {"float8_e4m3fnuz", FFK_DTYPE_FLOAT8_E4M3FNUZ, 8},
      {"float8_e5m2", FFK_DTYPE_FLOAT8_E5M2, 8},
      {"float8_e5m2fnuz", FFK_DTYPE_FLOAT8_E5M2FNUZ, 8},
      {"float8_e8m0fnu", FFK_DTYPE_FLOAT8_E8M0FNU, 8},
      {"float6_e2m3fn", FFK_DTYPE_FLOAT6_E2M3FN, 6},
      {"float6_e3m2fn", FFK_DTYPE_FLOAT6_E3M2FN, 6},
      {"float4_e2m1fn", FFK_DTYPE_FLOAT4_E2M1FN, 4},
  };
  return names;
}

TEST_F(DataType, CodesMatchDlpackForTheFirstSix) {
  EXPECT_EQ(FFK_DTYPE_INT, kDLInt);
  EXPECT_EQ(FFK_DTYPE_UINT, kDLUInt);
  EXPECT_EQ(FFK_DTYPE_FLOAT, kDLFloat);
  EXPECT_EQ(FFK_DTYPE_BFLOAT, kDLBfloat);
  EXPECT_EQ(FFK_DTYPE_COMPLEX, kDLComplex);
  EXPECT_EQ(FFK_DTYPE_FLOAT4_E2M1FN, 17);
}

TEST_F(DataType, EveryNameParsesToItsCodeAndBitsAndPrintsBack) {
  for (const Named& n : AllNames()) {
    SCOPED_TRACE(n.text);
    DLDataType t = ffk_dtype(99, 99, 99);
    if (ffk_dtype_parse(n.text, std::strlen(n.text), &t) != 0) {
      ADD_FAILURE() << "parse failed: " << FetchError();
      continue;
    }
    EXPECT_EQ(t.code, n.code);
    EXPECT_EQ(t.bits, n.bits);
    EXPECT_EQ(t.lanes, 1);
    EXPECT_EQ(Format(t), n.text);
  }
}

TEST_F(DataType, EveryNameFormatsFromItsCodeAndBits) {
  for (const Named& n : AllNames()) {
    EXPECT_EQ(Format(ffk_dtype(n.code, n.bits, 1)), n.text);
  }
}

TEST_F(DataType, HandleParsesToHandleCodeAndPrintsBack) {
  DLDataType t = ffk_dtype(99, 99, 99);
  ASSERT_EQ(ffk_dtype_parse("handle", 6, &t), 0) << FetchError();
  EXPECT_EQ(t.code, FFK_DTYPE_HANDLE);
  EXPECT_EQ(t.lanes, 1);
  EXPECT_EQ(Format(t), "handle");
}

TEST_F(DataType, BoolIsCodeSixWithEightBits) {
  DLDataType t;
  ASSERT_EQ(ffk_dtype_parse("bool", 4, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_BOOL, 8, 1)));
  EXPECT_EQ(t.code, 6);
  EXPECT_EQ(ffk_dtype_itemsize(t), 1u);
}

TEST_F(DataType, ParsesLanesSuffix) {
  DLDataType t;
  ASSERT_EQ(ffk_dtype_parse("float32x4", 9, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_FLOAT, 32, 4)));
  EXPECT_EQ(Format(t), "float32x4");
}

TEST_F(DataType, LanesRoundTripForSeveralTypes) {
  for (const char* text : {"int8x16", "uint16x2", "bfloat16x8", "float8_e4m3fnx4", "boolx3", "complex64x2",
                           "float64x65535"}) {
    SCOPED_TRACE(text);
    DLDataType t;
    ASSERT_EQ(ffk_dtype_parse(text, std::strlen(text), &t), 0) << FetchError();
    EXPECT_GT(t.lanes, 1);
    EXPECT_EQ(Format(t), text);
  }
  DLDataType t;
  ASSERT_EQ(ffk_dtype_parse("float64x65535", 13, &t), 0) << FetchError();
  EXPECT_EQ(t.lanes, 65535);
}

// "complex64" ends in digits after an 'x' ("...lex64"), which must not be read as lanes.
TEST_F(DataType, ComplexNamesAreNotMistakenForLaneSuffix) {
  DLDataType t = ffk_dtype(99, 99, 99);
  EXPECT_EQ(ffk_dtype_parse("complex64", 9, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_COMPLEX, 64, 1)));
  t = ffk_dtype(99, 99, 99);
  EXPECT_EQ(ffk_dtype_parse("complex128", 10, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_COMPLEX, 128, 1)));
  t = ffk_dtype(99, 99, 99);
  EXPECT_EQ(ffk_dtype_parse("complex128x2", 12, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_COMPLEX, 128, 2)));
}

TEST_F(DataType, SingleLaneSuffixPrintsWithoutIt) {
  DLDataType t;
  ASSERT_EQ(ffk_dtype_parse("int8x1", 6, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_INT, 8, 1)));
  EXPECT_EQ(Format(t), "int8");
}

TEST_F(DataType, MisspelledNameFailsWithDocumentedMessage) {
  DLDataType t = ffk_dtype(1, 2, 3);
  EXPECT_EQ(ffk_dtype_parse("flaot32", 7, &t), -1);
  EXPECT_EQ(FetchError(), "ValueError: Invalid dtype \"flaot32\"");
}

TEST_F(DataType, MalformedTextFailsWithValueErrorQuotingIt) {
  for (const char* text :
       {"", "int", "float", "flaot32", "float32x0", "float32x", "int8x-1", "float32 ", " float32",
        "float32x4x2", "float32_junk", "int8x4junk", "Float32", "float32x65536",
        "int8x99999999999999999999", "float8", "x4", "uint", "float32x+4"}) {
    SCOPED_TRACE(text);
    DLDataType t;
    EXPECT_EQ(ffk_dtype_parse(text, std::strlen(text), &t), -1);
    EXPECT_EQ(FetchError(), std::string("ValueError: Invalid dtype \"") + text + "\"");
  }
}

TEST_F(DataType, TvmFfiShortSpellingsParseToCanonicalTypes) {
  const struct {
    const char* text;
    const char* canonical;
  } cases[] = {{"i8", "int8"},           {"u16", "uint16"},
               {"f32", "float32"},       {"f16x4", "float16x4"},
               {"bf16", "bfloat16"},     {"fp8_e4m3fn", "float8_e4m3fn"},
               {"f8_e5m2", "float8_e5m2"}, {"fp6_e2m3fn", "float6_e2m3fn"},
               {"f6_e3m2fn", "float6_e3m2fn"}, {"fp4_e2m1fn", "float4_e2m1fn"},
               {"f4_e2m1fnx2", "float4_e2m1fnx2"}, {"float4_e2m1fn_x2", "float4_e2m1fnx2"},
               {"f4_e2m1fn_x2", "float4_e2m1fnx2"}, {"fp4_e2m1fn_x2", "float4_e2m1fnx2"},
               {"fp4_e2m1fn_x4", "float4_e2m1fnx4"}, {"float4_e2m1fn_x1", "float4_e2m1fn"},
               {"fp4_e2m1fnx2", "float4_e2m1fnx2"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    DLDataType t;
    ASSERT_EQ(ffk_dtype_parse(c.text, std::strlen(c.text), &t), 0) << FetchError();
    EXPECT_EQ(Format(t), c.canonical);
  }
}

TEST_F(DataType, AliasPrefixWithoutItsDigitsStaysInvalidAndQuotesTheGivenText) {
  // tvm_ffi takes "_x<lanes>" after float4 only, and lanes of at least one.
  for (const char* text : {"i", "ix4", "bf", "f", "fp8_", "fp8_e9m9", "f32_x2", "float4_e2m1fn_", "u", "fp4_e2m1fn_x",
                           "fp4_e2m1fn_x0", "f4_e2m1fn_x2x2", "fp8_e4m3fn_x2", "bf16_x2", "float32_x2",
                           "fp4_e2m1fn_X2"}) {
    SCOPED_TRACE(text);
    DLDataType t;
    EXPECT_EQ(ffk_dtype_parse(text, std::strlen(text), &t), -1);
    EXPECT_EQ(FetchError(), std::string("ValueError: Invalid dtype \"") + text + "\"");
  }
}

TEST_F(DataType, NumpyTypeStringsMapToTheirTypes) {
  const struct {
    const char* typestr;
    const char* name;
    const char* canonical;
  } cases[] = {{"|b1", "bool", "bool"},          {"|i1", "int8", "int8"},         {"<i2", "int16", "int16"},
               {"<i8", "int64", "int64"},        {"|u1", "uint8", "uint8"},       {"=u4", "uint32", "uint32"},
               {"<f2", "float16", "float16"},    {"<f4", "float32", "float32"},   {"<f8", "float64", "float64"},
               {"<c8", "complex64", "complex64"}, {"<c16", "complex128", "complex128"},
               {">i1", "int8", "int8"},          // one byte has no order
               {"<V2", "bfloat16", "bfloat16"},  {"<V1", "float8_e4m3fn", "float8_e4m3fn"},
               {"<V1", "int4", "int4"},          {"<V1", "float4_e2m1fn", "float4_e2m1fn"},
               {"<f1", "float8_e5m2", "float8_e5m2"}};  // ml_dtypes gives some of its types kind 'f'

  for (const auto& c : cases) {
    SCOPED_TRACE(c.typestr);
    DLDataType t;
    ASSERT_EQ(ffk_dtype_from_numpy(c.typestr, std::strlen(c.typestr), c.name, &t), 0) << FetchError();
    EXPECT_EQ(Format(t), c.canonical);
  }
}

TEST_F(DataType, NumpyNonNativeByteOrderIsAnErrorNeverAReinterpretation) {
  for (const char* typestr : {">f4", ">i8", ">c8", ">u2"}) {
    SCOPED_TRACE(typestr);
    DLDataType t = ffk_dtype(1, 2, 3);
    EXPECT_EQ(ffk_dtype_from_numpy(typestr, std::strlen(typestr), "ignored", &t), -1);
    EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(0, 0, 0)));
    std::string want = std::string("ValueError: numpy dtype \"") + typestr +
                       "\" is big-endian, not this machine's byte order (little-endian): ffikit shares data as it is "
                       "and never swaps bytes; convert it first (astype(\"=" + (typestr + 1) + "\"))";
    EXPECT_EQ(FetchError(), want);
  }
  DLDataType t;
  EXPECT_EQ(ffk_dtype_from_numpy(">V2", 3, "bfloat16", &t), -1);  // an extension type too
  EXPECT_NE(FetchError().find("is big-endian"), std::string::npos);
}

TEST_F(DataType, NumpyKindsWithoutADLPackTypeNameTheDtype) {
  const struct {
    const char* typestr;
    const char* name;
    const char* error;
  } cases[] = {
      {"<U3", "str96", "ValueError: numpy dtype \"<U3\" (unicode text) has no DLPack data type"},
      {"|S4", "bytes32", "ValueError: numpy dtype \"|S4\" (byte strings) has no DLPack data type"},
      {"|O", "object", "ValueError: Invalid numpy dtype \"|O\""},
      {"|O8", "object", "ValueError: numpy dtype \"|O8\" (Python objects) has no DLPack data type"},
      {"<M8[ns]", "datetime64[ns]", "ValueError: numpy dtype \"<M8[ns]\" (datetimes) has no DLPack data type"},
      {"|V8", "void64", "ValueError: numpy dtype \"|V8\" (void64) has no DLPack data type"},
      {"<V2", "float8_e4m3fn", "ValueError: numpy dtype \"<V2\" (float8_e4m3fn) has no DLPack data type"},
      {"|V4", nullptr, "ValueError: numpy dtype \"|V4\" has no DLPack data type"},
      {"<f3", "float24", "ValueError: numpy dtype \"<f3\" (float24) has no DLPack data type"},
      {"<f16", "float128", "ValueError: numpy dtype \"<f16\" (float128) has no DLPack data type"},
      {"|b2", nullptr, "ValueError: numpy dtype \"|b2\" has no DLPack data type"},
      {"f4", "float32", "ValueError: Invalid numpy dtype \"f4\""},
      {"<f", "float32", "ValueError: Invalid numpy dtype \"<f\""},
      {"<f0", "float32", "ValueError: Invalid numpy dtype \"<f0\""},
      {"?f4", "float32", "ValueError: Invalid numpy dtype \"?f4\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.typestr);
    DLDataType t;
    EXPECT_EQ(ffk_dtype_from_numpy(c.typestr, std::strlen(c.typestr), c.name, &t), -1);
    EXPECT_EQ(FetchError(), c.error);
  }
  DLDataType t;
  EXPECT_EQ(ffk_dtype_from_numpy(nullptr, 3, "x", &t), -1);
  EXPECT_EQ(FetchError(), "ValueError: Invalid numpy dtype: the type string is NULL");
}

TEST_F(DataType, NullTextFailsWithValueError) {
  DLDataType t;
  EXPECT_EQ(ffk_dtype_parse(nullptr, 0, &t), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(ffk_dtype_parse(nullptr, 7, &t), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

TEST_F(DataType, ParseReadsOnlySizeBytes) {
  DLDataType t;
  ASSERT_EQ(ffk_dtype_parse("float32garbage", 7, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_FLOAT, 32, 1)));

  // Not NUL-terminated at all: the buffer ends exactly where size says.
  const char exact[9] = {'f', 'l', 'o', 'a', 't', '1', '6', 'x', '2'};
  char* heap = new char[sizeof exact];
  std::memcpy(heap, exact, sizeof exact);
  ASSERT_EQ(ffk_dtype_parse(heap, sizeof exact, &t), 0) << FetchError();
  EXPECT_TRUE(ffk_dtype_equal(t, ffk_dtype(FFK_DTYPE_FLOAT, 16, 2)));
  delete[] heap;

  // A prefix that is not itself a name fails.
  EXPECT_EQ(ffk_dtype_parse("float32", 5, &t), -1);
  EXPECT_EQ(FetchError(), "ValueError: Invalid dtype \"float\"");
}

TEST_F(DataType, EmbeddedNulInsideSizeIsRejected) {
  DLDataType t;
  EXPECT_EQ(ffk_dtype_parse("int8\0x4", 7, &t), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

TEST_F(DataType, UnknownCodeFormatsAsDtypeCall) {
  EXPECT_EQ(Format(ffk_dtype(99, 7, 3)), "dtype(code=99, bits=7, lanes=3)");
  EXPECT_EQ(Format(ffk_dtype(200, 32, 1)), "dtype(code=200, bits=32, lanes=1)");
}

TEST_F(DataType, FormatTruncatesToCapAndReturnsFullLength) {
  DLDataType t = ffk_dtype(FFK_DTYPE_FLOAT, 32, 4);  // "float32x4", 9 chars
  char buf[16];
  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 4), 9u);
  EXPECT_STREQ(buf, "flo");
  EXPECT_EQ(buf[4], 'Z') << "wrote past cap";

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 1), 9u);
  EXPECT_EQ(buf[0], '\0');
  EXPECT_EQ(buf[1], 'Z');

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 0), 9u);
  EXPECT_EQ(buf[0], 'Z') << "cap 0 must write nothing";
  EXPECT_EQ(ffk_dtype_format(t, nullptr, 0), 9u);

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 10), 9u);  // exactly enough
  EXPECT_STREQ(buf, "float32x4");
  EXPECT_EQ(buf[10], 'Z');

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 9), 9u);  // one short: loses the last char
  EXPECT_STREQ(buf, "float32x");
}

TEST_F(DataType, UnknownFormTruncatesToCap) {
  DLDataType t = ffk_dtype(99, 7, 3);
  const std::string full = "dtype(code=99, bits=7, lanes=3)";
  char buf[64];
  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_dtype_format(t, buf, 8), full.size());
  EXPECT_STREQ(buf, "dtype(c");
  EXPECT_EQ(buf[8], 'Z');
}

TEST_F(DataType, StrMaxHoldsEveryNamedTypeWithMaximalLanes) {
  for (const Named& n : AllNames()) {
    char buf[FFK_DTYPE_STR_MAX];
    size_t len = ffk_dtype_format(ffk_dtype(n.code, n.bits, 65535), buf, sizeof buf);
    EXPECT_LT(len, sizeof buf) << n.text;
    EXPECT_EQ(std::string(buf), std::string(n.text) + "x65535");
  }
}

// The header says FFK_DTYPE_STR_MAX bytes suffice for any text ffk_dtype_format writes;
// the widest unnamed type is the one with every field at its maximum.
TEST_F(DataType, StrMaxHoldsTheWidestUnknownForm) {
  char buf[FFK_DTYPE_STR_MAX];
  size_t len = ffk_dtype_format(ffk_dtype(255, 255, 65535), buf, sizeof buf);
  EXPECT_LT(len, sizeof buf) << "full text would be "
                             << Format(ffk_dtype(255, 255, 65535));
}

TEST_F(DataType, ItemsizeRoundsBitsTimesLanesUpToBytes) {
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT, 32, 1)), 4u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT, 32, 4)), 16u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_COMPLEX, 128, 1)), 16u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_INT, 8, 3)), 3u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT4_E2M1FN, 4, 1)), 1u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT4_E2M1FN, 4, 2)), 1u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT4_E2M1FN, 4, 3)), 2u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT6_E2M3FN, 6, 4)), 3u);
  EXPECT_EQ(ffk_dtype_itemsize(ffk_dtype(FFK_DTYPE_FLOAT, 64, 65535)), 8u * 65535u);
}

TEST_F(DataType, EqualComparesCodeBitsAndLanes) {
  DLDataType a = ffk_dtype(FFK_DTYPE_INT, 32, 1);
  EXPECT_TRUE(ffk_dtype_equal(a, ffk_dtype(FFK_DTYPE_INT, 32, 1)));
  EXPECT_FALSE(ffk_dtype_equal(a, ffk_dtype(FFK_DTYPE_UINT, 32, 1)));
  EXPECT_FALSE(ffk_dtype_equal(a, ffk_dtype(FFK_DTYPE_INT, 64, 1)));
  EXPECT_FALSE(ffk_dtype_equal(a, ffk_dtype(FFK_DTYPE_INT, 32, 2)));
}

}  // namespace
