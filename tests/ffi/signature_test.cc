// ffikit/schema.h and typed Functions (ffk_function_new_typed): parsing type schemas and
// signatures, converting arguments and results, and the exact mismatch messages.
#include <ffikit/ffikit.h>

#include <string>

#include "tests/support/ffk_test.h"

namespace {

class Signature : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

ffk_object* Obj(ffk_function* f) { return reinterpret_cast<ffk_object*>(f); }

// Returns its first argument (or None), after recording what it saw.
ffk_any g_seen[4];
int Identity(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  for (int32_t i = 0; i < nargs && i < 4; ++i) g_seen[i] = args[i];
  if (nargs > 0) return ffk_any_to_owned(&args[0], result);
  return 0;
}

// Returns whatever its context points at (for checking result conversion).
int ReturnContext(void* self, const ffk_any*, int32_t, ffk_any* result) {
  return ffk_any_to_owned(static_cast<const ffk_any*>(self), result);
}

std::string SchemaText(const char* text) {
  ffk_schema* s = ffk_schema_parse(text);
  if (s == nullptr) return FetchError();
  std::string out = s->text;
  ffk_schema_free(s);
  return out;
}

TEST_F(Signature, ParsesTypesIntoCanonicalText) {
  EXPECT_EQ(SchemaText("int"), "int");
  EXPECT_EQ(SchemaText("  Map< str ,Array<float> >  "), "Map<str, Array<float>>");
  EXPECT_EQ(SchemaText("DataType"), "dtype");
  EXPECT_EQ(SchemaText("Optional<Device>"), "Optional<Device>");
  EXPECT_EQ(SchemaText("Function"), "Function");
  EXPECT_EQ(SchemaText("Tensor"), "Tensor");
  EXPECT_EQ(SchemaText("ffikit.Shape"), "Shape");
  EXPECT_EQ(SchemaText("Array"), "Array");
  int32_t point = ffk_type_register("sigtest.Point", FFK_TYPE_OBJECT);
  ASSERT_GE(point, FFK_TYPE_STATIC_END);
  EXPECT_EQ(SchemaText("List<sigtest.Point>"), "List<sigtest.Point>");
}

TEST_F(Signature, RejectsMalformedTypesNamingTheProblem) {
  EXPECT_EQ(SchemaText("flaot"), "ValueError: bad type `flaot`: unknown type `flaot` at offset 0");
  EXPECT_EQ(SchemaText("Map<str>"), "ValueError: bad type `Map<str>`: `Map` takes 0 or 2 type parameters but got 1 at offset 0");
  EXPECT_EQ(SchemaText("int<int>"), "ValueError: bad type `int<int>`: `int` takes 0 type parameters but got 1 at offset 0");
  EXPECT_EQ(SchemaText("Optional"), "ValueError: bad type `Optional`: `Optional` takes 1 type parameter but got 0 at offset 0");
  EXPECT_EQ(SchemaText("Array<int"), "ValueError: bad type `Array<int`: expected ',' or '>' at offset 9");
  EXPECT_EQ(SchemaText("Array<>"), "ValueError: bad type `Array<>`: expected a type at offset 6");
  EXPECT_EQ(SchemaText("int int"), "ValueError: bad type `int int`: unexpected text after the type at offset 4");
  EXPECT_EQ(SchemaText(""), "ValueError: bad type ``: expected a type at offset 0");
  EXPECT_EQ(SchemaText("Map<int, int, int>"),
            "ValueError: bad type `Map<int, int, int>`: too many type parameters at offset 13");
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "Array<";
  deep += "int";
  for (int i = 0; i < 40; ++i) deep += ">";
  EXPECT_NE(SchemaText(deep.c_str()).find("types nest too deeply"), std::string::npos);
  EXPECT_EQ(ffk_schema_parse(nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_schema_parse: the text is NULL");
}

TEST_F(Signature, AddOneMismatchHasTheExactMessage) {
  ffk_function* f = ffk_function_new_typed("testing.add_one", "(int) -> int", Identity, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(ffk_function_signature(f), "testing.add_one(0: int) -> int");
  OwnedAny arg, r;
  ASSERT_EQ(ffk_any_cstr("x", &arg.v), 0);
  EXPECT_EQ(ffk_function_call(f, &arg.v, 1, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. "
            "Expected `int` but got `str`");
  ffk_any two[2] = {ffk_any_int(1), ffk_any_int(2)};
  EXPECT_EQ(ffk_function_call(f, two, 2, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched number of arguments when calling: `testing.add_one(0: int) -> int`. "
            "Expected 1 but got 2");
  ffk_object_release(Obj(f));
}

TEST_F(Signature, ConvertsArgumentsTheWayAccessorsDo) {
  ffk_function* f = ffk_function_new_typed("conv", "(a: int, b: float, c: bool, d: Device)", Identity, nullptr,
                                           nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(ffk_function_signature(f), "conv(a: int, b: float, c: bool, d: Device) -> Any");
  ffk_any args[4] = {ffk_any_bool(true), ffk_any_int(3), ffk_any_int(7), ffk_any_raw_str("cuda:1")};
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, args, 4, &r.v), 0) << FetchError();
  EXPECT_EQ(g_seen[0].type_index, FFK_TYPE_INT);
  EXPECT_EQ(g_seen[0].v_int, 1);
  EXPECT_EQ(g_seen[1].type_index, FFK_TYPE_FLOAT);
  EXPECT_EQ(g_seen[1].v_float, 3.0);
  EXPECT_EQ(g_seen[2].type_index, FFK_TYPE_BOOL);
  EXPECT_EQ(g_seen[2].v_int, 1);
  EXPECT_EQ(g_seen[3].type_index, FFK_TYPE_DEVICE);
  EXPECT_EQ(g_seen[3].v_device.device_type, kDLCUDA);
  EXPECT_EQ(g_seen[3].v_device.device_id, 1);
  // The caller's array is never written.
  EXPECT_EQ(args[0].type_index, FFK_TYPE_BOOL);

  // A malformed device string keeps its kind and names the call.
  args[3] = ffk_any_raw_str("cuda:x");
  EXPECT_EQ(ffk_function_call(f, args, 4, &r.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Invalid argument #3 when calling: `conv(a: int, b: float, c: bool, "
                                          "d: Device) -> Any`.", "Invalid device index: x"}));
  // A float is not an int: no silent truncation.
  args[0] = ffk_any_float(1.5);
  args[3] = ffk_any_raw_str("cpu");
  EXPECT_EQ(ffk_function_call(f, args, 4, &r.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"argument #0", "Expected `int` but got `float`"}));
  ffk_object_release(Obj(f));
}

TEST_F(Signature, MatchingArgumentsPassThroughUntouched) {
  ffk_function* f = ffk_function_new_typed("same", "(str, Any, Object)", Identity, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_string* s = ffk_string_from_cstr("a string longer than seven");
  ffk_any args[3] = {ffk_any_object_steal(reinterpret_cast<ffk_object*>(s)), ffk_any_ptr(&g_seen),
                     ffk_any_object(reinterpret_cast<ffk_object*>(f))};
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, args, 3, &r.v), 0);
  EXPECT_EQ(g_seen[0].v_obj, args[0].v_obj);
  EXPECT_EQ(ffk_object_use_count(args[0].v_obj), 2);  // args[0] and the result
  ffk_any_release(&args[0]);
  ffk_any_release(&args[2]);
  ffk_object_release(Obj(f));
}

// schema.h: a 0 return leaves *out untouched, so a value the caller keeps there is not leaked.
TEST_F(Signature, ConvertLeavesOutUntouchedWhenTheValueAlreadyHasTheType) {
  struct Case {
    const char* schema;
    ffk_any value;
  } cases[] = {{"None", ffk_any_none()},
               {"Optional<int>", ffk_any_none()},
               {"Any", ffk_any_float(1.5)},
               {"str", ffk_any_raw_str("text")},
               {"int", ffk_any_int(3)},
               {"Optional<float>", ffk_any_float(2.5)}};
  ffk_string* held = ffk_string_from_cstr("what the caller keeps in *out");
  ASSERT_NE(held, nullptr);
  ffk_object* held_obj = reinterpret_cast<ffk_object*>(held);
  for (const Case& c : cases) {
    ffk_schema* s = ffk_schema_parse(c.schema);
    ASSERT_NE(s, nullptr) << c.schema;
    ffk_any out = ffk_any_object(held_obj);
    EXPECT_EQ(ffk_schema_convert(s, &c.value, &out), 0) << c.schema;
    EXPECT_EQ(out.type_index, FFK_TYPE_STRING) << c.schema;
    EXPECT_EQ(out.v_obj, held_obj) << c.schema;
    ffk_any_release(&out);
    EXPECT_EQ(ffk_object_use_count(held_obj), 1) << c.schema;
    ffk_schema_free(s);
  }
  ffk_object_release(held_obj);
}

TEST_F(Signature, OptionalAndNone) {
  ffk_function* f = ffk_function_new_typed("opt", "(Optional<int>) -> Optional<float>", Identity, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_any arg = ffk_any_none();
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  arg = ffk_any_int(4);
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_FLOAT);  // the result converts too
  EXPECT_EQ(r.v.v_float, 4.0);
  arg = ffk_any_raw_str("no");
  EXPECT_EQ(ffk_function_call(f, &arg, 1, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #0 when calling: `opt(0: Optional<int>) -> Optional<float>`. "
            "Expected `Optional<int>` but got `str`");
  ffk_object_release(Obj(f));
}

TEST_F(Signature, ResultIsCheckedAndReleasedOnMismatch) {
  OwnedAny bad;
  ASSERT_EQ(ffk_any_cstr("a result string long enough to be an object", &bad.v), 0);
  ffk_function* f = ffk_function_new_typed("f", "() -> int", ReturnContext, &bad.v, nullptr);
  ASSERT_NE(f, nullptr);
  OwnedAny r;
  EXPECT_EQ(ffk_function_call(f, nullptr, 0, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on the return value when calling: `f() -> int`. Expected `int` but got `str`");
  EXPECT_EQ(ffk_object_use_count(bad.v.v_obj), 1);
  ffk_object_release(Obj(f));
}

TEST_F(Signature, ObjectTypesUseInstanceChecks) {
  int32_t base = ffk_type_register("sigtest.Base", FFK_TYPE_OBJECT);
  int32_t derived = ffk_type_register("sigtest.Derived", base);
  ASSERT_GE(derived, 0);
  ffk_function* f = ffk_function_new_typed("g", "(sigtest.Base, Function)", Identity, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_object* d = ffk_object_alloc(derived, sizeof(ffk_object), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  ASSERT_NE(d, nullptr) << FetchError();
  ffk_any args[2] = {ffk_any_object_steal(d), ffk_any_object(Obj(f))};
  OwnedAny r;
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), 0) << FetchError();
  ffk_any_release(&r.v);
  std::swap(args[0], args[1]);
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"argument #0", "Expected `sigtest.Base` but got `Function`"}));
  ffk_any_release(&args[0]);
  ffk_any_release(&args[1]);
  ffk_object_release(Obj(f));
}

TEST_F(Signature, MalformedSignatureFailsAndDeletesTheContext) {
  int deleted = 0;
  auto count = [](void* p) { ++*static_cast<int*>(p); };
  EXPECT_EQ(ffk_function_new_typed("h", "(int, ) -> int", Identity, &deleted, count), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: bad signature `(int, ) -> int`: expected a type at offset 6");
  EXPECT_EQ(ffk_function_new_typed("h", "int -> int", Identity, &deleted, count), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: bad signature `int -> int`: expected '(' at offset 0");
  EXPECT_EQ(ffk_function_new_typed("h", "(int) -> int junk", Identity, &deleted, count), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: bad signature `(int) -> int junk`: unexpected text after the signature at offset 13");
  EXPECT_EQ(deleted, 3);
}

TEST_F(Signature, ManyArgumentsConvertOnTheHeap) {
  std::string sig = "(";
  for (int i = 0; i < 12; ++i) sig += i ? ", float" : "float";
  sig += ")";
  ffk_function* f = ffk_function_new_typed("many", sig.c_str(), Identity, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_any args[12];
  for (int i = 0; i < 12; ++i) args[i] = ffk_any_int(i);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, args, 12, &r.v), 0);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_FLOAT);
  ffk::test::SweepAllocationFailures([&] {
    ffk_any out;
    if (ffk_function_call(f, args, 12, &out) != 0) return false;
    ffk_any_release(&out);
    return true;
  });
  ffk_object_release(Obj(f));
}

TEST_F(Signature, CreationSurvivesEveryAllocationFailure) {
  ffk::test::SweepAllocationFailures([] {
    ffk_function* f = ffk_function_new_typed("t", "(x: Map<str, Array<int>>, Optional<Device>) -> List<float>",
                                             Identity, nullptr, nullptr);
    if (f == nullptr) return false;
    ffk_object_release(Obj(f));
    return true;
  });
}

// ffk_schema_accepts as 1/0, or the error it raised.
std::string Accepts(const char* declared, const char* given) {
  int rc = ffk_schema_accepts(declared, given);
  if (rc < 0) return FetchError();
  return rc == 1 ? "yes" : "no";
}

TEST_F(Signature, AcceptsKeepsTheRulesPythonsCClassCheckHad) {
  // The cases bindings/python's string comparison decided, decided the same.
  EXPECT_EQ(Accepts("int", "int"), "yes");
  EXPECT_EQ(Accepts("str", "int"), "no");
  EXPECT_EQ(Accepts("float", "int"), "no");
  EXPECT_EQ(Accepts("Any", "Map<str, int>"), "yes");
  EXPECT_EQ(Accepts("Optional<int>", "int"), "no");
  EXPECT_EQ(Accepts("Optional<int>", "Optional<int>"), "yes");
  EXPECT_EQ(Accepts("Array", "Array<Any>"), "yes");
  EXPECT_EQ(Accepts("Array", "List<int>"), "yes");
  EXPECT_EQ(Accepts("Array", "Tuple"), "yes");
  EXPECT_EQ(Accepts("Array<int>", "List<int>"), "yes");
  EXPECT_EQ(Accepts("Array<int>", "List<float>"), "no");
  EXPECT_EQ(Accepts("Array<int>", "Tuple"), "no");
  EXPECT_EQ(Accepts("Map", "Map<Any, Any>"), "yes");
  EXPECT_EQ(Accepts("Map<str, int>", "Dict<str, int>"), "yes");
  EXPECT_EQ(Accepts("List<int>", "Array<int>"), "no");
  EXPECT_EQ(Accepts("Dict", "Map"), "no");
  EXPECT_EQ(Accepts("Object", "Function"), "yes");
  EXPECT_EQ(Accepts("Object", "Array<int>"), "yes");
  EXPECT_EQ(Accepts("Object", "Tensor"), "yes");
  for (const char* plain : {"int", "float", "bool", "str", "bytes", "Device", "dtype", "Any", "None"})
    EXPECT_EQ(Accepts("Object", plain), "no") << plain;
  EXPECT_EQ(ffk_error_peek_borrow(), nullptr);
}

TEST_F(Signature, AcceptsComparesParsedTypesNotTheirSpelling) {
  // Where the string comparison went wrong: spellings, nesting, subtypes and "ptr".
  EXPECT_EQ(Accepts("Map< str ,int >", "Map<str, int>"), "yes");
  EXPECT_EQ(Accepts("DataType", "dtype"), "yes");
  EXPECT_EQ(Accepts("ffikit.Tensor", "Tensor"), "yes");
  EXPECT_EQ(Accepts("Array<Array<int>>", "List<List<int>>"), "yes");
  EXPECT_EQ(Accepts("Array<Array<int>>", "List<List<str>>"), "no");
  EXPECT_EQ(Accepts("Optional<Array<int>>", "Optional<List<int>>"), "yes");
  EXPECT_EQ(Accepts("Map<str, Array<Any>>", "Dict<str, List<float>>"), "yes");
  EXPECT_EQ(Accepts("List", "List<int>"), "yes");
  EXPECT_EQ(Accepts("Array<Any>", "Array"), "yes");
  EXPECT_EQ(Accepts("Array<int>", "Array"), "no");
  ASSERT_GE(ffk_type_register("Arrayish.Thing", FFK_TYPE_OBJECT), FFK_TYPE_STATIC_END);
  EXPECT_EQ(Accepts("Array", "Arrayish.Thing"), "no");  // the strings began alike
  EXPECT_EQ(Accepts("Object", "ptr"), "no");
  EXPECT_EQ(Accepts("Object", "Optional<Function>"), "yes");
  EXPECT_EQ(Accepts("Object", "Optional<int>"), "no");
  EXPECT_EQ(Accepts("Function", "Optional<Function>"), "no");
  int32_t base = ffk_type_register("sigtest.AcceptBase", FFK_TYPE_OBJECT);
  int32_t derived = ffk_type_register("sigtest.AcceptDerived", base);
  ASSERT_GE(base, FFK_TYPE_STATIC_END);
  ASSERT_GE(derived, FFK_TYPE_STATIC_END);
  EXPECT_EQ(Accepts("sigtest.AcceptBase", "sigtest.AcceptDerived"), "yes");
  EXPECT_EQ(Accepts("sigtest.AcceptDerived", "sigtest.AcceptBase"), "no");
  EXPECT_EQ(Accepts("Array<sigtest.AcceptBase>", "List<sigtest.AcceptDerived>"), "yes");
}

TEST_F(Signature, AcceptsNamesTheTextThatDoesNotParse) {
  EXPECT_EQ(Accepts("flaot", "int"), "ValueError: bad type `flaot`: unknown type `flaot` at offset 0");
  EXPECT_EQ(Accepts("int", "Array<int"), "ValueError: bad type `Array<int`: expected ',' or '>' at offset 9");
  EXPECT_EQ(Accepts(nullptr, "int"), "ValueError: ffk_schema_parse: the text is NULL");
  ffk::test::SweepAllocationFailures([] { return ffk_schema_accepts("Map<str, Array<int>>", "Dict<str, List<int>>") == 1; });
}

}  // namespace
