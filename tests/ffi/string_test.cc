// Tests of ffikit/string.h: str and bytes values, inline and as objects, UTF-8 checks.
#include <ffikit/string.h>
#include <ffikit/weak_ref.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;
using ffk::test::Repr;
using ffk::test::SweepAllocationFailures;

class String : public ffk::test::Test {};

ffk_object* Obj(ffk_string* s) { return &s->header; }

// The str or bytes content of a value as std::string (fails the test on error).
std::string StrOf(const ffk_any& v) {
  const char* data = nullptr;
  size_t size = 0;
  if (ffk_any_as_str(&v, &data, &size) != 0) {
    ADD_FAILURE() << FetchError();
    return "<error>";
  }
  EXPECT_EQ(data[size], '\0') << "str view is not NUL-terminated";
  return std::string(data, size);
}

std::string BytesOf(const ffk_any& v) {
  const char* data = nullptr;
  size_t size = 0;
  if (ffk_any_as_bytes(&v, &data, &size) != 0) {
    ADD_FAILURE() << FetchError();
    return "<error>";
  }
  return std::string(data, size);
}

bool PayloadIs(const ffk_any& v, const char* bytes8) {
  return std::memcmp(v.v_bytes, bytes8, 8) == 0;
}

// ---- Inline and object forms ------------------------------------------------------

TEST_F(String, ShortStrIsInlineWithLengthInAuxAndZeroPadding) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("abc", 3, &v.v), 0) << FetchError();
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(v.v.aux, 3u);
  EXPECT_TRUE(PayloadIs(v.v, "abc\0\0\0\0\0"));
  EXPECT_EQ(ffk_debug_live_objects(-1), 0) << "a short str must not allocate an object";
}

TEST_F(String, SevenByteStrIsStillInline) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("1234567", 7, &v.v), 0) << FetchError();
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(v.v.aux, 7u);
  EXPECT_TRUE(PayloadIs(v.v, "1234567\0"));
  EXPECT_EQ(StrOf(v.v), "1234567");
}

TEST_F(String, EmptyStrIsInlineWithAllZeroPayload) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("", 0, &v.v), 0) << FetchError();
  EXPECT_EQ(v.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(v.v.aux, 0u);
  EXPECT_EQ(v.v.v_int, 0);
  OwnedAny w;
  ASSERT_EQ(ffk_any_str(nullptr, 0, &w.v), 0) << FetchError();
  EXPECT_EQ(w.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(StrOf(w.v), "");
}

TEST_F(String, InlineStrOverwritesGarbageInOut) {
  ffk_any v;
  std::memset(&v, 0xAB, sizeof v);
  ASSERT_EQ(ffk_any_str("xy", 2, &v), 0) << FetchError();
  EXPECT_EQ(v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(v.aux, 2u);
  EXPECT_TRUE(PayloadIs(v, "xy\0\0\0\0\0\0"));
}

TEST_F(String, EightByteStrIsAStringObject) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("12345678", 8, &v.v), 0) << FetchError();
  EXPECT_EQ(v.v.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(v.v.aux, 0u);
  ASSERT_NE(v.v.v_obj, nullptr);
  EXPECT_EQ(v.v.v_obj->type_index, FFK_TYPE_STRING);
  EXPECT_EQ(ffk_object_use_count(v.v.v_obj), 1u);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 1);
  auto* s = reinterpret_cast<ffk_string*>(v.v.v_obj);
  EXPECT_EQ(ffk_string_size(s), 8u);
  EXPECT_EQ(std::string(ffk_string_data(s), 8), "12345678");
  EXPECT_EQ(ffk_string_data(s)[8], '\0');
  EXPECT_EQ(ffk_string_data(s), reinterpret_cast<const char*>(s + 1))
      << "the bytes must follow the struct in the same allocation";
}

TEST_F(String, StringNewAlwaysMakesAnObject) {
  int64_t allocs_before = ffk_debug_allocation_count();
  ffk_string* s = ffk_string_new("ab", 2);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(ffk_debug_allocation_count() - allocs_before, 1) << "one allocation per String";
  EXPECT_EQ(s->header.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u);
  EXPECT_EQ(ffk_string_size(s), 2u);
  EXPECT_STREQ(ffk_string_data(s), "ab");
  EXPECT_EQ(ffk_string_data(s), reinterpret_cast<const char*>(s + 1));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 1);
  ffk_object_release(Obj(s));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_STRING), 0);
}

TEST_F(String, StringNewOfNothingIsAnEmptyObject) {
  ffk_string* s = ffk_string_new(nullptr, 0);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(s->header.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(ffk_string_size(s), 0u);
  EXPECT_EQ(ffk_string_data(s)[0], '\0');
  ffk_object_release(Obj(s));
}

TEST_F(String, StringNewCopiesItsInput) {
  char buf[] = "hello world";
  ffk_string* s = ffk_string_new(buf, 11);
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_NE(ffk_string_data(s), buf);
  buf[0] = 'J';
  EXPECT_STREQ(ffk_string_data(s), "hello world");
  ffk_object_release(Obj(s));
}

TEST_F(String, FromCstrMeasuresTheString) {
  ffk_string* s = ffk_string_from_cstr("caf\xC3\xA9");
  ASSERT_NE(s, nullptr) << FetchError();
  EXPECT_EQ(ffk_string_size(s), 5u);
  EXPECT_STREQ(ffk_string_data(s), "caf\xC3\xA9");
  ffk_object_release(Obj(s));

  EXPECT_EQ(ffk_string_from_cstr(nullptr), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

TEST_F(String, AnyCstrPicksTheFormByLength) {
  OwnedAny small, big;
  ASSERT_EQ(ffk_any_cstr("short", &small.v), 0) << FetchError();
  EXPECT_EQ(small.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(small.v.aux, 5u);
  ASSERT_EQ(ffk_any_cstr("not so short", &big.v), 0) << FetchError();
  EXPECT_EQ(big.v.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(StrOf(big.v), "not so short");

  ffk_any v = ffk_any_int(5);
  EXPECT_EQ(ffk_any_cstr(nullptr, &v), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE) << "*out must be None on failure";
}

TEST_F(String, AnyStrOfNullDataWithSizeFailsWithValueError) {
  ffk_any v = ffk_any_int(5);
  EXPECT_EQ(ffk_any_str(nullptr, 3, &v), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_any_str(nullptr, 30, &v), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
}

TEST_F(String, AnyBytesOfNullDataWithSizeFailsWithValueError) {
  ffk_any v = ffk_any_int(5);
  EXPECT_EQ(ffk_any_bytes(nullptr, 3, &v), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(ffk_any_bytes(nullptr, 30, &v), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

// docs/design.md: bad input (a NULL pointer) is an error, never a crash.
TEST_F(String, ObjectConstructorsRejectNullDataWithSize) {
  EXPECT_EQ(ffk_string_new(nullptr, 3), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(ffk_bytes_new(nullptr, 3), nullptr);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

// ---- Views -----------------------------------------------------------------------

TEST_F(String, AsStrOfInlineValuePointsIntoTheValue) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("hi!", 3, &v.v), 0) << FetchError();
  const char* data = nullptr;
  size_t size = 99;
  ASSERT_EQ(ffk_any_as_str(&v.v, &data, &size), 0) << FetchError();
  EXPECT_EQ(data, v.v.v_bytes);
  EXPECT_EQ(size, 3u);
  EXPECT_STREQ(data, "hi!");
}

TEST_F(String, AsStrOfObjectPointsAtItsBytes) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("a longer string", 15, &v.v), 0) << FetchError();
  const char* data = nullptr;
  size_t size = 99;
  ASSERT_EQ(ffk_any_as_str(&v.v, &data, &size), 0) << FetchError();
  EXPECT_EQ(data, ffk_string_data(reinterpret_cast<ffk_string*>(v.v.v_obj)));
  EXPECT_EQ(size, 15u);
  EXPECT_EQ(ffk_object_use_count(v.v.v_obj), 1u) << "a borrowed view must not retain";
}

TEST_F(String, AsStrOfRawCStringIsTheSamePointer) {
  const char* text = "raw \xE2\x82\xAC text";
  ffk_any v = ffk_any_raw_str(text);
  EXPECT_EQ(v.type_index, FFK_TYPE_RAW_STR);
  const char* data = nullptr;
  size_t size = 99;
  ASSERT_EQ(ffk_any_as_str(&v, &data, &size), 0) << FetchError();
  EXPECT_EQ(data, text);
  EXPECT_EQ(size, std::strlen(text));
}

TEST_F(String, AsStrOfNonStrFailsWithTypeError) {
  OwnedAny b;
  ASSERT_EQ(ffk_any_bytes("abc", 3, &b.v), 0) << FetchError();
  const char* data;
  size_t size;
  EXPECT_EQ(ffk_any_as_str(&b.v, &data, &size), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected str but got bytes");
  ffk_any i = ffk_any_int(1);
  EXPECT_EQ(ffk_any_as_str(&i, &data, &size), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected str but got int");
}

TEST_F(String, AsBytesOfStrFailsWithTypeError) {
  OwnedAny small, big;
  ASSERT_EQ(ffk_any_str("abc", 3, &small.v), 0) << FetchError();
  ASSERT_EQ(ffk_any_str("abcdefghij", 10, &big.v), 0) << FetchError();
  const char* data;
  size_t size;
  EXPECT_EQ(ffk_any_as_bytes(&small.v, &data, &size), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected bytes but got str");
  EXPECT_EQ(ffk_any_as_bytes(&big.v, &data, &size), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected bytes but got str");
  ffk_any raw = ffk_any_raw_str("abc");
  EXPECT_EQ(ffk_any_as_bytes(&raw, &data, &size), -1);
  EXPECT_EQ(FetchError(), "TypeError: expected bytes but got str");
}

TEST_F(String, TypeNamesOfStrAndBytesValues) {
  OwnedAny s1, s2, b1, b2;
  ASSERT_EQ(ffk_any_str("a", 1, &s1.v), 0);
  ASSERT_EQ(ffk_any_str("abcdefghij", 10, &s2.v), 0);
  ASSERT_EQ(ffk_any_bytes("a", 1, &b1.v), 0);
  ASSERT_EQ(ffk_any_bytes("abcdefghij", 10, &b2.v), 0);
  ffk_any raw = ffk_any_raw_str("a");
  EXPECT_STREQ(ffk_any_type_name(&s1.v), "str");
  EXPECT_STREQ(ffk_any_type_name(&s2.v), "str");
  EXPECT_STREQ(ffk_any_type_name(&raw), "str");
  EXPECT_STREQ(ffk_any_type_name(&b1.v), "bytes");
  EXPECT_STREQ(ffk_any_type_name(&b2.v), "bytes");
}

// ---- Bytes -------------------------------------------------------------------------

TEST_F(String, BytesKeepEmbeddedNuls) {
  OwnedAny small, big;
  ASSERT_EQ(ffk_any_bytes("a\0b", 3, &small.v), 0) << FetchError();
  EXPECT_EQ(small.v.type_index, FFK_TYPE_SMALL_BYTES);
  EXPECT_EQ(small.v.aux, 3u);
  EXPECT_TRUE(PayloadIs(small.v, "a\0b\0\0\0\0\0"));
  EXPECT_EQ(BytesOf(small.v), std::string("a\0b", 3));

  const std::string content("\0\0\0x\0\0\0y\0\0", 10);
  ASSERT_EQ(ffk_any_bytes(content.data(), content.size(), &big.v), 0) << FetchError();
  EXPECT_EQ(big.v.type_index, FFK_TYPE_BYTES);
  EXPECT_EQ(BytesOf(big.v), content);
}

TEST_F(String, StrKeepsEmbeddedNuls) {
  OwnedAny small, big;
  ASSERT_EQ(ffk_any_str("a\0b", 3, &small.v), 0) << FetchError();
  EXPECT_EQ(small.v.type_index, FFK_TYPE_SMALL_STR);
  EXPECT_EQ(small.v.aux, 3u);
  EXPECT_EQ(StrOf(small.v), std::string("a\0b", 3));
  const std::string content("hello\0world\0", 12);
  ASSERT_EQ(ffk_any_str(content.data(), content.size(), &big.v), 0) << FetchError();
  EXPECT_EQ(big.v.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(StrOf(big.v), content);
}

TEST_F(String, BytesAcceptEveryByteValue) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  ffk_bytes* b = ffk_bytes_new(all.data(), all.size());
  ASSERT_NE(b, nullptr) << FetchError();
  EXPECT_EQ(b->header.type_index, FFK_TYPE_BYTES);
  EXPECT_EQ(ffk_object_use_count(Obj(b)), 1u);
  EXPECT_EQ(std::string(ffk_string_data(b), ffk_string_size(b)), all);
  EXPECT_EQ(ffk_string_data(b)[256], '\0');
  ffk_object_release(Obj(b));

  OwnedAny small;
  ASSERT_EQ(ffk_any_bytes("\xC0\xAF\xFF", 3, &small.v), 0) << FetchError();
  EXPECT_EQ(small.v.type_index, FFK_TYPE_SMALL_BYTES);
  EXPECT_EQ(BytesOf(small.v), "\xC0\xAF\xFF");
}

TEST_F(String, BytesNewAlwaysMakesAnObject) {
  ffk_bytes* b = ffk_bytes_new("ab", 2);
  ASSERT_NE(b, nullptr) << FetchError();
  EXPECT_EQ(b->header.type_index, FFK_TYPE_BYTES);
  EXPECT_EQ(ffk_string_size(b), 2u);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_BYTES), 1);
  ffk_object_release(Obj(b));
  ffk_bytes* empty = ffk_bytes_new(nullptr, 0);
  ASSERT_NE(empty, nullptr) << FetchError();
  EXPECT_EQ(ffk_string_size(empty), 0u);
  ffk_object_release(Obj(empty));
}

TEST_F(String, AsBytesOfByteArrayViewIsTheSamePointer) {
  const char data[] = {'x', '\0', 'y'};
  ffk_byte_array arr{data, 3};
  ffk_any v = ffk_any_byte_array(&arr);
  const char* out = nullptr;
  size_t size = 0;
  ASSERT_EQ(ffk_any_as_bytes(&v, &out, &size), 0) << FetchError();
  EXPECT_EQ(out, data);
  EXPECT_EQ(size, 3u);
}

// ---- UTF-8 -------------------------------------------------------------------------

struct BadUtf8 {
  const char* what;
  std::string text;
  size_t offset;  // of the first invalid byte
};

std::vector<BadUtf8> BadCases() {
  return {
      {"overlong slash", "ab\xC0\xAF", 2},
      {"overlong 2-byte C1", "\xC1\xBF", 0},
      {"overlong 3-byte", "x\xE0\x80\xAF", 1},
      {"overlong 4-byte", "\xF0\x80\x80\xAF", 0},
      {"high surrogate", "abc\xED\xA0\x80", 3},
      {"low surrogate", "\xED\xBF\xBF", 0},
      {"past U+10FFFF", "\xF4\x90\x80\x80", 0},
      {"F5 lead byte", "zz\xF5\x80\x80\x80", 2},
      {"FF byte", "\xFF", 0},
      {"lone continuation", "a\x80", 1},
      {"truncated at end", "ab\xE2\x82", 2},
      {"truncated before ASCII", "\xE2\x82z", 0},
      {"truncated 4-byte", "\xF0\x9D\x84", 0},
  };
}

TEST_F(String, InvalidUtf8IsRejectedWithValueErrorNamingTheOffset) {
  // Offset 13 is distinctive enough to find in any message format.
  const std::string prefix = "hello, world!";
  for (const BadUtf8& c : BadCases()) {
    SCOPED_TRACE(c.what);
    std::string text = prefix + c.text;
    std::string offset = std::to_string(prefix.size() + c.offset);
    ffk_any v = ffk_any_int(5);
    EXPECT_EQ(ffk_any_str(text.data(), text.size(), &v), -1);
    std::string err = FetchError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    EXPECT_NE(err.find(offset), std::string::npos) << "no offset " << offset << " in: " << err;
    EXPECT_EQ(v.type_index, FFK_TYPE_NONE) << "*out must be None on failure";

    EXPECT_EQ(ffk_string_new(text.data(), text.size()), nullptr);
    err = FetchError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    EXPECT_NE(err.find(offset), std::string::npos) << "no offset " << offset << " in: " << err;
  }
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

TEST_F(String, InvalidUtf8IsRejectedInInlineStrings) {
  for (const BadUtf8& c : BadCases()) {
    if (c.text.size() > FFK_SMALL_STR_MAX) continue;
    SCOPED_TRACE(c.what);
    ffk_any v = ffk_any_int(5);
    EXPECT_EQ(ffk_any_str(c.text.data(), c.text.size(), &v), -1);
    std::string err = FetchError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    EXPECT_NE(err.find(std::to_string(c.offset)), std::string::npos) << err;
    EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
  }
}

TEST_F(String, ValidPrefixStopsAtTheFirstInvalidByte) {
  for (const BadUtf8& c : BadCases()) {
    EXPECT_EQ(ffk_utf8_valid_prefix(c.text.data(), c.text.size()), c.offset) << c.what;
  }
}

TEST_F(String, ValidMultiByteSequencesAreAccepted) {
  const std::vector<std::string> good = {
      "caf\xC3\xA9",          // U+00E9, 2 bytes
      "\xC2\x80",             // U+0080, smallest 2-byte
      "\xE0\xA0\x80",         // U+0800, smallest 3-byte
      "\xE2\x82\xAC",         // U+20AC euro
      "\xED\x9F\xBF",         // U+D7FF, just below the surrogates
      "\xEE\x80\x80",         // U+E000, just above them
      "\xEF\xBF\xBF",         // U+FFFF
      "\xF0\x90\x80\x80",     // U+10000, smallest 4-byte
      "\xF0\x9D\x84\x9E",     // U+1D11E
      "\xF4\x8F\xBF\xBF",     // U+10FFFF, the largest
      "\x7F",                 // DEL is ASCII
      "mixed \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E text \xF0\x9F\x98\x80",
  };
  for (const std::string& text : good) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ffk_utf8_valid_prefix(text.data(), text.size()), text.size());
    OwnedAny v;
    ASSERT_EQ(ffk_any_str(text.data(), text.size(), &v.v), 0) << FetchError();
    EXPECT_EQ(StrOf(v.v), text);
    ffk_string* s = ffk_string_new(text.data(), text.size());
    ASSERT_NE(s, nullptr) << FetchError();
    EXPECT_EQ(std::string(ffk_string_data(s), ffk_string_size(s)), text);
    ffk_object_release(Obj(s));
  }
}

TEST_F(String, ValidPrefixRespectsSize) {
  EXPECT_EQ(ffk_utf8_valid_prefix("", 0), 0u);
  EXPECT_EQ(ffk_utf8_valid_prefix(nullptr, 0), 0u);
  EXPECT_EQ(ffk_utf8_valid_prefix("abc\xFF", 3), 3u);
  // A sequence cut by size is incomplete even if the bytes after it would complete it.
  EXPECT_EQ(ffk_utf8_valid_prefix("ab\xE2\x82\xAC", 4), 2u);
  EXPECT_EQ(ffk_utf8_valid_prefix("ab\xE2\x82\xAC", 5), 5u);
  EXPECT_EQ(ffk_utf8_valid_prefix("abc\xC0\xAF" "def", 8), 3u);
}

TEST_F(String, ValidPrefixOnLongTextFindsLateError) {
  std::string text(10000, 'a');
  text += "\xE2\x82\xAC";
  text += std::string(5000, 'b');
  EXPECT_EQ(ffk_utf8_valid_prefix(text.data(), text.size()), text.size());
  text[12345] = '\xFF';
  EXPECT_EQ(ffk_utf8_valid_prefix(text.data(), text.size()), 12345u);
}

// ---- Equality and hashing --------------------------------------------------------

TEST_F(String, StrAndBytesWithSameContentAreNotEqual) {
  OwnedAny s, b, big_s, big_b;
  ASSERT_EQ(ffk_any_str("abc", 3, &s.v), 0);
  ASSERT_EQ(ffk_any_bytes("abc", 3, &b.v), 0);
  ASSERT_EQ(ffk_any_str("abcdefghijk", 11, &big_s.v), 0);
  ASSERT_EQ(ffk_any_bytes("abcdefghijk", 11, &big_b.v), 0);
  EXPECT_FALSE(ffk_any_equal(&s.v, &b.v));
  EXPECT_FALSE(ffk_any_equal(&b.v, &s.v));
  EXPECT_FALSE(ffk_any_equal(&big_s.v, &big_b.v));
  EXPECT_FALSE(ffk_any_equal(&big_b.v, &big_s.v));
  EXPECT_TRUE(ffk_any_equal(&s.v, &s.v));
}

TEST_F(String, InlineAndObjectFormsOfSameStrAreEqualAndHashEqual) {
  OwnedAny small;
  ASSERT_EQ(ffk_any_str("abc", 3, &small.v), 0) << FetchError();
  ASSERT_EQ(small.v.type_index, FFK_TYPE_SMALL_STR);
  ffk_string* s = ffk_string_new("abc", 3);
  ASSERT_NE(s, nullptr) << FetchError();
  OwnedAny heap(ffk_any_object_steal(Obj(s)));
  ASSERT_EQ(heap.v.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(ffk_object_use_count(Obj(s)), 1u);
  ffk_any raw = ffk_any_raw_str("abc");

  EXPECT_TRUE(ffk_any_equal(&small.v, &heap.v));
  EXPECT_TRUE(ffk_any_equal(&heap.v, &small.v));
  EXPECT_TRUE(ffk_any_equal(&raw, &heap.v));
  EXPECT_TRUE(ffk_any_equal(&small.v, &raw));
  EXPECT_EQ(ffk_any_hash(&small.v), ffk_any_hash(&heap.v));
  EXPECT_EQ(ffk_any_hash(&small.v), ffk_any_hash(&raw));
}

TEST_F(String, InlineAndObjectFormsOfSameBytesAreEqualAndHashEqual) {
  OwnedAny small;
  ASSERT_EQ(ffk_any_bytes("a\0c", 3, &small.v), 0) << FetchError();
  ASSERT_EQ(small.v.type_index, FFK_TYPE_SMALL_BYTES);
  ffk_bytes* b = ffk_bytes_new("a\0c", 3);
  ASSERT_NE(b, nullptr) << FetchError();
  OwnedAny heap(ffk_any_object_steal(Obj(b)));
  ffk_byte_array arr{"a\0c", 3};
  ffk_any view = ffk_any_byte_array(&arr);
  EXPECT_TRUE(ffk_any_equal(&small.v, &heap.v));
  EXPECT_TRUE(ffk_any_equal(&view, &heap.v));
  EXPECT_EQ(ffk_any_hash(&small.v), ffk_any_hash(&heap.v));
  EXPECT_EQ(ffk_any_hash(&small.v), ffk_any_hash(&view));
}

TEST_F(String, DifferentContentIsNotEqual) {
  OwnedAny a, b, c, d;
  ASSERT_EQ(ffk_any_str("abc", 3, &a.v), 0);
  ASSERT_EQ(ffk_any_str("abd", 3, &b.v), 0);
  ASSERT_EQ(ffk_any_str("ab", 2, &c.v), 0);
  ASSERT_EQ(ffk_any_str("ab\0", 3, &d.v), 0);
  EXPECT_FALSE(ffk_any_equal(&a.v, &b.v));
  EXPECT_FALSE(ffk_any_equal(&a.v, &c.v));
  EXPECT_FALSE(ffk_any_equal(&c.v, &d.v)) << "a trailing NUL is content";
  OwnedAny long1, long2;
  ASSERT_EQ(ffk_any_str("0123456789a", 11, &long1.v), 0);
  ASSERT_EQ(ffk_any_str("0123456789b", 11, &long2.v), 0);
  EXPECT_FALSE(ffk_any_equal(&long1.v, &long2.v));
}

TEST_F(String, TwoObjectsWithSameContentAreEqual) {
  OwnedAny a, b;
  ASSERT_EQ(ffk_any_str("the same long text", 18, &a.v), 0);
  ASSERT_EQ(ffk_any_str("the same long text", 18, &b.v), 0);
  ASSERT_NE(a.v.v_obj, b.v.v_obj);
  EXPECT_TRUE(ffk_any_equal(&a.v, &b.v));
  EXPECT_EQ(ffk_any_hash(&a.v), ffk_any_hash(&b.v));
}

TEST_F(String, HashBytesIsXxh3) {
  std::string long_text(1000, '\0');
  for (size_t i = 0; i < long_text.size(); ++i) long_text[i] = static_cast<char>(i * 31);
  const std::vector<std::string> inputs = {"", "a", "abc", "1234567", "12345678",
                                           std::string("\0\xff", 2), long_text};
  for (const std::string& in : inputs) {
    EXPECT_EQ(ffk_hash_bytes(in.data(), in.size()), XXH3_64bits(in.data(), in.size()))
        << "size " << in.size();
  }
  EXPECT_EQ(ffk_hash_bytes(nullptr, 0), XXH3_64bits("", 0));
}

TEST_F(String, HashStrIsWhatAnyHashGivesEveryStrForm) {
  const std::vector<std::string> inputs = {"", "a", "1234567", "12345678", "a key longer than seven",
                                           std::string("nul\0inside", 10)};
  for (const std::string& in : inputs) {
    OwnedAny v;  // SmallStr up to 7 bytes, else a String object
    ASSERT_EQ(ffk_any_str(in.data(), in.size(), &v.v), 0);
    EXPECT_EQ(ffk_hash_str(in.data(), in.size()), ffk_any_hash(&v.v)) << "size " << in.size();
    if (in.find('\0') == std::string::npos) {
      ffk_any raw = ffk_any_raw_str(in.c_str());
      EXPECT_EQ(ffk_hash_str(in.data(), in.size()), ffk_any_hash(&raw));
    }
    OwnedAny b;
    ASSERT_EQ(ffk_any_bytes(in.data(), in.size(), &b.v), 0);
    EXPECT_NE(ffk_hash_str(in.data(), in.size()), ffk_any_hash(&b.v)) << "str and bytes hash apart";
  }
  EXPECT_EQ(ffk_hash_str(nullptr, 0), ffk_hash_str("", 0));
}

// ---- Repr --------------------------------------------------------------------------

TEST_F(String, ReprQuotesAndEscapesStr) {
  OwnedAny v;
  const char text[] = "a\"b\\c\n";
  ASSERT_EQ(ffk_any_str(text, sizeof text - 1, &v.v), 0) << FetchError();
  EXPECT_EQ(Repr(v.v), "\"a\\\"b\\\\c\\n\"");
  OwnedAny plain;
  ASSERT_EQ(ffk_any_str("text", 4, &plain.v), 0);
  EXPECT_EQ(Repr(plain.v), "\"text\"");
}

TEST_F(String, ReprOfObjectStrMatchesInlineForm) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("a long \"quoted\" str", 19, &v.v), 0) << FetchError();
  ASSERT_EQ(v.v.type_index, FFK_TYPE_STRING);
  EXPECT_EQ(Repr(v.v), "\"a long \\\"quoted\\\" str\"");
  EXPECT_EQ(ffk_object_use_count(v.v.v_obj), 1u);
}

TEST_F(String, ReprKeepsNonAsciiStrAsIs) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_str("caf\xC3\xA9", 5, &v.v), 0) << FetchError();
  EXPECT_EQ(Repr(v.v), "\"caf\xC3\xA9\"");
}

TEST_F(String, ReprOfBytesEscapesNonAsciiAsHex) {
  OwnedAny v;
  ASSERT_EQ(ffk_any_bytes("\x00\xff", 2, &v.v), 0) << FetchError();
  EXPECT_EQ(Repr(v.v), "b\"\\x00\\xff\"");
  OwnedAny w;
  ASSERT_EQ(ffk_any_bytes("raw", 3, &w.v), 0) << FetchError();
  EXPECT_EQ(Repr(w.v), "b\"raw\"");
  OwnedAny big;
  ASSERT_EQ(ffk_any_bytes("quote\"back\\\x80", 12, &big.v), 0) << FetchError();
  ASSERT_EQ(big.v.type_index, FFK_TYPE_BYTES);
  EXPECT_EQ(Repr(big.v), "b\"quote\\\"back\\\\\\x80\"");
}

// ---- Allocation failures and size -------------------------------------------------

TEST_F(String, InlineStrAllocatesNothing) {
  ffk_any v = ffk_any_none();
  int allocations = SweepAllocationFailures([&] { return ffk_any_str("tiny", 4, &v) == 0; });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(v.type_index, FFK_TYPE_SMALL_STR);
}

TEST_F(String, AnyStrOfLongStringSurvivesEveryAllocationFailure) {
  const std::string text(100, 'q');
  ffk_any v = ffk_any_none();
  int allocations = SweepAllocationFailures(
      [&] {
        v = ffk_any_int(5);
        if (ffk_any_str(text.data(), text.size(), &v) != 0) return false;
        bool ok = v.type_index == FFK_TYPE_STRING && StrOf(v) == text;
        ffk_any_release(&v);
        return ok;
      },
      [&] { EXPECT_EQ(v.type_index, FFK_TYPE_NONE) << "*out must be None on failure"; });
  EXPECT_GE(allocations, 1);
}

TEST_F(String, StringNewSurvivesEveryAllocationFailure) {
  int allocations = SweepAllocationFailures([&] {
    ffk_string* s = ffk_string_new("ab", 2);
    if (s == nullptr) return false;
    bool ok = ffk_string_size(s) == 2;
    ffk_object_release(Obj(s));
    return ok;
  });
  EXPECT_GE(allocations, 1);
}

TEST_F(String, BytesNewSurvivesEveryAllocationFailure) {
  int allocations = SweepAllocationFailures([&] {
    ffk_bytes* b = ffk_bytes_new("\x00\x01\x02", 3);
    if (b == nullptr) return false;
    bool ok = ffk_string_size(b) == 3;
    ffk_object_release(Obj(b));
    return ok;
  });
  EXPECT_GE(allocations, 1);
}

TEST_F(String, AnyBytesOfLongBytesSurvivesEveryAllocationFailure) {
  const std::string content(50, '\xEE');
  int allocations = SweepAllocationFailures([&] {
    ffk_any v = ffk_any_none();
    if (ffk_any_bytes(content.data(), content.size(), &v) != 0) return false;
    bool ok = v.type_index == FFK_TYPE_BYTES && BytesOf(v) == content;
    ffk_any_release(&v);
    return ok;
  });
  EXPECT_GE(allocations, 1);
}

TEST_F(String, OneMebibyteStrRoundTrips) {
  std::string text;
  text.reserve(1 << 20);
  while (text.size() + 4 <= (1u << 20)) text += "ab\xC3\xA9";  // 4 bytes, 3 characters
  ASSERT_EQ(text.size(), 1u << 20);
  OwnedAny v;
  ASSERT_EQ(ffk_any_str(text.data(), text.size(), &v.v), 0) << FetchError();
  ASSERT_EQ(v.v.type_index, FFK_TYPE_STRING);
  const char* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(ffk_any_as_str(&v.v, &data, &size), 0) << FetchError();
  ASSERT_EQ(size, text.size());
  EXPECT_EQ(std::memcmp(data, text.data(), size), 0);
  EXPECT_EQ(data[size], '\0');
  EXPECT_EQ(ffk_any_hash(&v.v), ffk_any_hash(&v.v));
  OwnedAny copy;
  ASSERT_EQ(ffk_any_str(data, size, &copy.v), 0) << FetchError();
  EXPECT_TRUE(ffk_any_equal(&v.v, &copy.v));
}

// ---- Many at once (ffk_any_str_many) -------------------------------------------------

TEST_F(String, ManyAtOnceAreTheValuesOfAnyStrAndShareOneBlock) {
  const std::vector<std::string> texts = {"short", "a key longer than seven", "", "1234567", "12345678",
                                          "\xc3\xa9 a longer one with a NUL \0 inside"};
  std::vector<const char*> data;
  std::vector<size_t> sizes;
  for (const auto& t : texts) {
    data.push_back(t.data());
    sizes.push_back(t.size());
  }
  std::vector<ffk_any> out(texts.size());
  ASSERT_EQ(ffk_any_str_many(data.data(), sizes.data(), (int64_t)texts.size(), out.data()), 0) << FetchError();
  for (size_t i = 0; i < texts.size(); ++i) {
    OwnedAny one;
    ASSERT_EQ(ffk_any_str(texts[i].data(), texts[i].size(), &one.v), 0);
    EXPECT_EQ(out[i].type_index, one.v.type_index) << "the form ffk_any_str gives, for " << i;
    EXPECT_EQ(StrOf(out[i]), texts[i]);
    EXPECT_TRUE(ffk_any_equal(&out[i], &one.v));
    EXPECT_EQ(ffk_any_hash(&out[i]), ffk_any_hash(&one.v));
    if (ffk_any_is_object(&out[i])) {
      EXPECT_EQ(ffk_object_use_count(out[i].v_obj), 1);
    }
  }
  // The block stays while any String of it lives: strong and weak holders alike.
  ffk_object* weak = ffk_weak_ref_new(out[4].v_obj);
  ASSERT_NE(weak, nullptr);
  ffk_object* kept = out[5].v_obj;
  ffk_object_retain(kept);
  for (auto& v : out) ffk_any_release(&v);
  EXPECT_FALSE(ffk_weak_ref_alive(weak));
  EXPECT_EQ(std::string(((ffk_string*)kept)->data, ((ffk_string*)kept)->size), texts[5]);
  ffk_object_release(kept);
  ffk_object_release(weak);  // the last holder of the block: ASan sees it freed once
}

TEST_F(String, ManyAtOnceFailsWholeNamingTheStr) {
  const char* data[3] = {"a key longer than seven", "ok", "bad \xff byte here"};
  size_t sizes[3] = {23, 2, 17};
  ffk_any out[3];
  EXPECT_EQ(ffk_any_str_many(data, sizes, 3, out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"str 2", "0xff", "offset 4"}));
  for (auto& v : out) EXPECT_EQ(v.type_index, FFK_TYPE_NONE) << "nothing is left owned";
  // A bad str first: the entries after it are None too, whatever they held before.
  const char* bad_first[2] = {"\xff", "a key longer than seven"};
  size_t bad_first_sizes[2] = {1, 23};
  out[0] = out[1] = ffk_any_int(7);
  EXPECT_EQ(ffk_any_str_many(bad_first, bad_first_sizes, 2, out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"str 0", "0xff"}));
  EXPECT_EQ(out[0].type_index, FFK_TYPE_NONE);
  EXPECT_EQ(out[1].type_index, FFK_TYPE_NONE) << "an entry after the bad one";
  const char* null_data[2] = {"fine", nullptr};
  size_t null_sizes[2] = {4, 3};
  EXPECT_EQ(ffk_any_str_many(null_data, null_sizes, 2, out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"str 1", "data is NULL but size is 3"}));
  EXPECT_EQ(ffk_any_str_many(nullptr, nullptr, -1, out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"-1 strs"}));
  EXPECT_EQ(ffk_any_str_many(nullptr, nullptr, 0, nullptr), 0) << "none is no error";
  SweepAllocationFailures([&] {
    ffk_any got[3];
    data[2] = "a third longer one";
    sizes[2] = 18;
    if (ffk_any_str_many(data, sizes, 3, got) != 0) {
      for (auto& v : got) EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
      return false;
    }
    for (auto& v : got) ffk_any_release(&v);
    return true;
  });
}

}  // namespace
