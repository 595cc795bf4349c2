// Container parameters of typed Functions: the converter slots of Array, Tuple, List,
// Map and Dict (containers/src/convert.c) as ffk_schema_convert and typed calls use them.
#include <ffikit/ffikit.h>

#include <string>

#include "tests/support/ffk_test.h"

namespace {

class Convert : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

struct Schema {
  ffk_schema* s;
  explicit Schema(const char* text) : s(ffk_schema_parse(text)) {}
  ~Schema() { ffk_schema_free(s); }
};

ffk_any Str(const char* s) {
  ffk_any v;
  EXPECT_EQ(ffk_any_cstr(s, &v), 0);
  return v;
}

// Converts `v` against `text`: "same" when it passes as is, the repr of the converted
// value with its type name when converted, or the error.
std::string Conv(const char* text, const ffk_any& v) {
  Schema s(text);
  if (s.s == nullptr) return FetchError();
  OwnedAny out;
  int rc = ffk_schema_convert(s.s, &v, &out.v);
  if (rc < 0) return FetchError();
  if (rc == 0) return "same";
  return std::string(ffk_any_type_name(&out.v)) + " " + Repr(out.v);
}

TEST_F(Convert, ArrayOfIntAcceptsListsAndTuplesAndConverts) {
  ffk_any items[3] = {ffk_any_int(1), ffk_any_bool(true), ffk_any_int(3)};
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(items, 3))));
  OwnedAny array(ffk_any_object_steal(Obj(ffk_array_new(items, 3))));
  OwnedAny tuple(ffk_any_object_steal(Obj(ffk_tuple_new(3, items))));
  EXPECT_EQ(Conv("Array<int>", list.v), "Array (1, 1, 3)");
  EXPECT_EQ(Conv("Array<int>", array.v), "Array (1, 1, 3)");  // True becomes 1
  EXPECT_EQ(Conv("Array<int>", tuple.v), "Array (1, 1, 3)");
  EXPECT_EQ(Conv("Array", array.v), "same");
  EXPECT_EQ(Conv("Array<Any>", array.v), "same");
  EXPECT_EQ(Conv("Array<bool>", array.v), "Array (True, True, True)");
  EXPECT_EQ(Conv("Array", list.v), "Array (1, True, 3)");
  EXPECT_EQ(Conv("Tuple", list.v), "Tuple (1, True, 3)");
  EXPECT_EQ(Conv("Tuple", tuple.v), "same");
  EXPECT_EQ(Conv("List<int>", array.v), "List [1, 1, 3]");
  ffk_any ints[2] = {ffk_any_int(1), ffk_any_int(2)};
  OwnedAny int_array(ffk_any_object_steal(Obj(ffk_array_new(ints, 2))));
  EXPECT_EQ(Conv("Array<int>", int_array.v), "same");
  EXPECT_EQ(Conv("Array<float>", int_array.v), "Array (1.0, 2.0)");
}

TEST_F(Convert, MatchingListIsSharedNotCopied) {
  ffk_any items[2] = {ffk_any_int(1), ffk_any_int(2)};
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(items, 2))));
  EXPECT_EQ(Conv("List<int>", list.v), "same");
  EXPECT_EQ(Conv("List", list.v), "same");
  EXPECT_EQ(Conv("List<float>", list.v), "List [1.0, 2.0]");
}

TEST_F(Convert, MismatchesNameTheItem) {
  ffk_any items[3] = {ffk_any_int(1), Str("two"), ffk_any_int(3)};
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(items, 3))));
  EXPECT_EQ(Conv("Array<int>", list.v),
            "TypeError: expected `Array<int>` but got `List` (item #1: expected `int` but got `str`)");
  EXPECT_EQ(Conv("Map<str, int>", list.v), "TypeError: expected `Map<str, int>` but got `List`");
  EXPECT_EQ(Conv("Array<int>", items[0]), "TypeError: expected `Array<int>` but got `int`");
  // Nested: the path reads outside in.
  OwnedAny outer(ffk_any_object_steal(Obj(ffk_array_new(&list.v, 1))));
  EXPECT_EQ(Conv("Array<List<int>>", outer.v),
            "TypeError: expected `Array<List<int>>` but got `Array` (item #0: expected `List<int>` but got `List` "
            "(item #1: expected `int` but got `str`))");
  ffk_any_release(&items[1]);
}

TEST_F(Convert, MapsAndDictsCheckKeysAndValues) {
  ffk_any keys[2] = {Str("a"), Str("b")};
  ffk_any values[2] = {ffk_any_int(1), ffk_any_bool(false)};
  OwnedAny map(ffk_any_object_steal(Obj(ffk_map_from_pairs(keys, values, 2))));
  OwnedAny dict(ffk_any_object_steal(Obj(ffk_dict_from_pairs(keys, values, 2))));
  EXPECT_EQ(Conv("Map<str, int>", map.v), "Map {\"a\": 1, \"b\": 0}");
  EXPECT_EQ(Conv("Map<str, Any>", map.v), "same");
  EXPECT_EQ(Conv("Map", map.v), "same");
  EXPECT_EQ(Conv("Map", dict.v), "Map {\"a\": 1, \"b\": False}");
  EXPECT_EQ(Conv("Dict<str, int>", map.v), "Dict {\"a\": 1, \"b\": 0}");
  EXPECT_EQ(Conv("Dict<str, Any>", dict.v), "same");
  EXPECT_EQ(Conv("Dict", map.v), "Dict {\"a\": 1, \"b\": False}");
  EXPECT_EQ(Conv("Map<int, int>", map.v),
            "TypeError: expected `Map<int, int>` but got `Map` (key \"a\": expected `int` but got `str`)");
  EXPECT_EQ(Conv("Dict<str, str>", dict.v),
            "TypeError: expected `Dict<str, str>` but got `Dict` (value for key \"a\": expected `str` but got `int`)");
  ffk_any_release(&keys[0]);
  ffk_any_release(&keys[1]);
}

// A typed Function that returns the size of its container argument and records it.
ffk_any g_arg;
int Size(void*, const ffk_any* args, int32_t, ffk_any* result) {
  g_arg = args[0];
  const ffk_array* a = reinterpret_cast<const ffk_array*>(args[0].v_obj);
  *result = ffk_any_int(ffk_array_size(a));
  return 0;
}

TEST_F(Convert, TypedCallConvertsAListForAnArrayParameter) {
  ffk_function* f = ffk_function_new_typed("testing.schema_id_arr_int", "(Array<int>) -> int", Size, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_any items[2] = {ffk_any_int(5), ffk_any_int(6)};
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(items, 2))));
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &list.v, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 2);
  EXPECT_EQ(g_arg.type_index, FFK_TYPE_ARRAY);
  EXPECT_NE(g_arg.v_obj, list.v.v_obj);

  ffk_any bad[2] = {ffk_any_int(5), ffk_any_float(0.5)};
  OwnedAny bad_list(ffk_any_object_steal(Obj(ffk_list_from_items(bad, 2))));
  EXPECT_EQ(ffk_function_call(f, &bad_list.v, 1, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_arr_int(0: Array<int>) -> int`. "
            "Expected `Array<int>` but got `List` (item #1: expected `int` but got `float`)");
  ffk_object_release(Obj(f));
}

TEST_F(Convert, ConversionSurvivesEveryAllocationFailure) {
  ffk_any keys[3] = {Str("a"), Str("a key long enough for an object"), ffk_any_int(3)};
  ffk_any values[3] = {ffk_any_bool(true), ffk_any_int(2), ffk_any_bool(false)};
  OwnedAny dict(ffk_any_object_steal(Obj(ffk_dict_from_pairs(keys, values, 3))));
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(values, 3))));
  for (const char* text : {"Map<Any, int>", "Dict<Any, float>", "Array<int>", "List<float>", "Tuple"}) {
    Schema s(text);
    ASSERT_NE(s.s, nullptr);
    const ffk_any& v = text[0] == 'M' || text[0] == 'D' ? dict.v : list.v;
    ffk::test::SweepAllocationFailures([&] {
      ffk_any out;
      if (ffk_schema_convert(s.s, &v, &out) < 0) return false;
      ffk_any_release(&out);
      return true;
    });
  }
  ffk_any_release(&keys[0]);
  ffk_any_release(&keys[1]);
}

}  // namespace
