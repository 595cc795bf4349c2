// ffikit/function.h "Docs and metadata" and ffikit/module.h's system library: Function
// docs, the metadata JSON (its escaping and every schema kind), and functions compiled
// into this test program found by ffk_module_system_lib (the program links with -rdynamic).
#include <ffikit/ffikit.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Metadata : public ffk::test::Test {};
class SystemLib : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;
using ffk::test::SweepAllocationFailures;

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

int Nop(void*, const ffk_any*, int32_t, ffk_any*) { return 0; }

std::string Str(const ffk_any& v) {
  const char* data;
  size_t n;
  if (ffk_any_as_str(&v, &data, &n) != 0) return FetchError();
  return std::string(data, n);
}

// The metadata text of a Function made with `signature` (NULL: untyped) and `doc`.
std::string MetadataOf(const char* name, const char* signature, const char* doc = nullptr) {
  ffk_function* f = ffk_function_new_typed(name, signature, Nop, nullptr, nullptr);
  if (f == nullptr) return FetchError();
  if (doc != nullptr && ffk_function_set_doc(f, doc) != 0) {
    ffk_object_release(Obj(f));
    return FetchError();
  }
  OwnedAny out;
  std::string text = ffk_function_metadata(f, &out.v) == 0 ? Str(out.v) : FetchError();
  ffk_object_release(Obj(f));
  return text;
}

// The type schema of a one-parameter function taking `type`, as the metadata quotes it.
std::string ParamSchema(const char* type) {
  std::string sig = std::string("(") + type + ")";
  std::string meta = MetadataOf("f", sig.c_str());
  const std::string head = R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"Any\"}],\"params\":[)";
  if (meta.compare(0, head.size(), head) != 0) return "unexpected metadata: " + meta;
  size_t end = meta.find(R"(]}}","name")");
  return meta.substr(head.size(), end - head.size());
}

TEST_F(Metadata, DocIsSetOnAnUnsharedFunctionAndRemovedWithNull) {
  ffk_function* f = ffk_function_new("f", Nop, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ffk_function_doc(f), nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "Adds one.\nReturns an int."), 0);
  EXPECT_STREQ(ffk_function_doc(f), "Adds one.\nReturns an int.");
  ASSERT_EQ(ffk_function_set_doc(f, "Replaced."), 0);
  EXPECT_STREQ(ffk_function_doc(f), "Replaced.");
  ASSERT_EQ(ffk_function_set_doc(f, ""), 0);
  EXPECT_EQ(ffk_function_doc(f), nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "Again."), 0);
  ASSERT_EQ(ffk_function_set_doc(f, nullptr), 0);
  EXPECT_EQ(ffk_function_doc(f), nullptr);
  ffk_object_release(Obj(f));
  EXPECT_EQ(ffk_function_doc(nullptr), nullptr);
}

TEST_F(Metadata, DocOfASharedFunctionCannotChange) {
  ffk_function* f = ffk_function_new("shared_fn", Nop, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "First."), 0);
  ffk_object_retain(Obj(f));  // a second holder
  EXPECT_EQ(ffk_function_set_doc(f, "Second."), -1);
  EXPECT_TRUE(PendingError("ValueError", {"`shared_fn`", "shared"}));
  EXPECT_STREQ(ffk_function_doc(f), "First.");
  ffk_object_release(Obj(f));
  ffk_object_release(Obj(f));
  EXPECT_EQ(ffk_function_set_doc(nullptr, "x"), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
}

TEST_F(Metadata, TypedFunctionGivesSchemaNameArityNamesAndDoc) {
  EXPECT_EQ(MetadataOf("demo.scale", "(xs: Array<float>, k: float) -> Array<float>", "Scales xs by k."),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"ffi.Array\",)"
            R"(\"args\":[{\"type\":\"float\"}]}],\"params\":[{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"float\"}]},)"
            R"({\"type\":\"float\"}]}}","name":"demo.scale","arity":2,"arg_names":["xs","k"],"doc":"Scales xs by k."})");
}

TEST_F(Metadata, UnnamedParametersHaveNullNamesAndNoParametersGiveEmptyLists) {
  EXPECT_EQ(MetadataOf("g", "(int, y: str, bool) -> None"),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"None\"}],)"
            R"(\"params\":[{\"type\":\"int\"},{\"type\":\"ffi.String\"},{\"type\":\"bool\"}]}}","name":"g",)"
            R"("arity":3,"arg_names":[null,"y",null]})");
  EXPECT_EQ(MetadataOf("h", "()"),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"Any\"}],)"
            R"(\"params\":[]}}","name":"h","arity":0,"arg_names":[]})");
}

TEST_F(Metadata, UntypedFunctionHasTheBareFunctionSchema) {
  EXPECT_EQ(MetadataOf("testing.echo_like", nullptr),
            R"({"type_schema":"{\"type\":\"ffi.Function\"}","name":"testing.echo_like"})");
  EXPECT_EQ(MetadataOf("<anon>", nullptr, "Echo."),
            R"({"type_schema":"{\"type\":\"ffi.Function\"}","name":"<anon>","doc":"Echo."})");
}

TEST_F(Metadata, EverySchemaKindHasItsTvmFfiSpelling) {
  const std::pair<const char*, const char*> cases[] = {
      {"int", R"({\"type\":\"int\"})"},
      {"float", R"({\"type\":\"float\"})"},
      {"bool", R"({\"type\":\"bool\"})"},
      {"str", R"({\"type\":\"ffi.String\"})"},
      {"bytes", R"({\"type\":\"ffi.Bytes\"})"},
      {"Device", R"({\"type\":\"Device\"})"},
      {"dtype", R"({\"type\":\"DataType\"})"},
      {"ptr", R"({\"type\":\"void*\"})"},
      {"None", R"({\"type\":\"None\"})"},
      {"Any", R"({\"type\":\"Any\"})"},
      {"Object", R"({\"type\":\"ffi.Object\"})"},
      {"Optional<int>", R"({\"type\":\"Optional\",\"args\":[{\"type\":\"int\"}]})"},
      {"Array", R"({\"type\":\"ffi.Array\"})"},
      {"Array<str>", R"({\"type\":\"ffi.Array\",\"args\":[{\"type\":\"ffi.String\"}]})"},
      {"List<Optional<float>>",
       R"({\"type\":\"ffi.List\",\"args\":[{\"type\":\"Optional\",\"args\":[{\"type\":\"float\"}]}]})"},
      {"Map<str, Array<int>>",
       R"({\"type\":\"ffi.Map\",\"args\":[{\"type\":\"ffi.String\"},{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"int\"}]}]})"},
      {"Dict<int, bytes>", R"({\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"int\"},{\"type\":\"ffi.Bytes\"}]})"},
      {"Tuple", R"({\"type\":\"Tuple\"})"},
      {"Function", R"({\"type\":\"ffi.Function\"})"},
      {"Tensor", R"({\"type\":\"ffi.Tensor\"})"},
      {"Shape", R"({\"type\":\"ffi.Shape\"})"},
      {"Module", R"({\"type\":\"ffi.Module\"})"},
      {"Error", R"({\"type\":\"ffi.Error\"})"},
  };
  for (const auto& c : cases) EXPECT_EQ(ParamSchema(c.first), c.second) << c.first;
  // A registered type is named by its key.
  int32_t index;
  if (ffk_type_lookup("metadata_test.Point", &index) != 1) {
    ASSERT_GE(ffk_type_register("metadata_test.Point", FFK_TYPE_OBJECT), FFK_TYPE_STATIC_END) << FetchError();
  }
  EXPECT_EQ(ParamSchema("Optional<metadata_test.Point>"),
            R"({\"type\":\"Optional\",\"args\":[{\"type\":\"metadata_test.Point\"}]})");
}

TEST_F(Metadata, StringsAreEscapedOnceInMetadataAndTwiceInTheSchema) {
  // Quotes, backslashes and control bytes in a doc; non-ASCII UTF-8 passes through.
  std::string doc = "say \"hi\" \\ back\n\ttab\r\x01\x1f\b\f end \xc3\xa9";
  EXPECT_EQ(MetadataOf("q\"uote", nullptr, doc.c_str()),
            "{\"type_schema\":\"{\\\"type\\\":\\\"ffi.Function\\\"}\",\"name\":\"q\\\"uote\","
            "\"doc\":\"say \\\"hi\\\" \\\\ back\\n\\ttab\\r\\u0001\\u001f\\b\\f end \xc3\xa9\"}");
}

TEST_F(Metadata, ErrorsNameTheProblem) {
  OwnedAny out;
  EXPECT_EQ(ffk_function_metadata(nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Function is NULL"}));
  EXPECT_EQ(ffk_function_global_metadata("metadata_test.missing", &out.v), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"`metadata_test.missing`", "not registered"}));
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_function_global_metadata(nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name is NULL"}));
}

TEST_F(Metadata, GlobalMetadataReadsTheRegisteredFunction) {
  ffk_function* f = ffk_function_new_typed("metadata_test.add", "(a: int, b: int) -> int", Nop, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "Adds."), 0);
  ASSERT_EQ(ffk_function_register("metadata_test.add", f, false), 0);
  ffk_object_release(Obj(f));
  OwnedAny out;
  ASSERT_EQ(ffk_function_global_metadata("metadata_test.add", &out.v), 0) << FetchError();
  EXPECT_EQ(Str(out.v),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],)"
            R"(\"params\":[{\"type\":\"int\"},{\"type\":\"int\"}]}}","name":"metadata_test.add","arity":2,)"
            R"("arg_names":["a","b"],"doc":"Adds."})");
  EXPECT_EQ(ffk_function_remove_global("metadata_test.add"), 1);
}

TEST_F(Metadata, ReadsFromManyThreadsAtOnce) {
  ffk_function* f = ffk_function_new_typed("t", "(x: Map<str, int>) -> int", Nop, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "Doc."), 0);
  std::string expected;
  {
    OwnedAny out;
    ASSERT_EQ(ffk_function_metadata(f, &out.v), 0);
    expected = Str(out.v);
  }
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        ffk_any out = ffk_any_none();
        if (ffk_function_metadata(f, &out) != 0) return;
        const char* data;
        size_t n;
        bool same = ffk_any_as_str(&out, &data, &n) == 0 && std::string(data, n) == expected &&
                    std::string(ffk_function_doc(f)) == "Doc.";
        ffk_any_release(&out);
        if (!same) return;
      }
      ok[t] = 1;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
  ffk_object_release(Obj(f));
}

TEST_F(Metadata, AllocationFailuresAreMemoryErrors) {
  ffk_function* f = ffk_function_new_typed("m", "(xs: Array<float>, Optional<str>) -> Map<str, int>", Nop, nullptr,
                                           nullptr);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ffk_function_set_doc(f, "A doc long enough to need its own allocation."), 0);
  SweepAllocationFailures([&] {
    ffk_any out = ffk_any_none();
    if (ffk_function_metadata(f, &out) != 0) return false;
    ffk_any_release(&out);
    return true;
  });
  SweepAllocationFailures([&] { return ffk_function_set_doc(f, "Another doc.") == 0; },
                          [&] { EXPECT_NE(ffk_function_doc(f), nullptr); });
  ffk_object_release(Obj(f));
}

}  // namespace

// ---- Functions compiled into this program, for the system library ------------------------

static int twice(void*, const ffk_any* args, int32_t, ffk_any* result) {
  *result = ffk_any_int(2 * args[0].v_int);
  return 0;
}
FFK_MODULE_EXPORT_TYPED_DOC(metadata_test_twice, "(x: int) -> int", "Doubles x.", twice)

static int whoami(void* self, const ffk_any*, int32_t, ffk_any* result) {
  return ffk_any_cstr(ffk_module_symbol_prefix(static_cast<ffk_module*>(self)), result);
}
FFK_MODULE_EXPORT(metadata_test_whoami, whoami)

namespace {

TEST_F(SystemLib, FindsAFunctionOfTheProgramByPrefixAndName) {
  ffk_module* m = ffk_module_system_lib("metadata_test_");
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_STREQ(ffk_module_path(m), FFK_MODULE_SYSTEM_LIB_PATH);
  EXPECT_STREQ(ffk_module_symbol_prefix(m), "metadata_test_");
  EXPECT_EQ(ffk_module_implements_function(m, "twice"), 1);
  EXPECT_EQ(ffk_module_implements_function(m, "absent"), 0);
  EXPECT_EQ(ffk_module_implements_function(m, "not a name"), 0);
  ffk_function* f = ffk_module_get_function(m, "twice");
  ASSERT_NE(f, nullptr) << FetchError();
  EXPECT_STREQ(ffk_function_name(f), "twice");
  EXPECT_STREQ(ffk_function_signature(f), "twice(x: int) -> int");
  EXPECT_STREQ(ffk_function_doc(f), "Doubles x.");
  ffk_any arg = ffk_any_int(21);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 42);
  ffk_object_release(Obj(f));
  // The Function holds the Module: self is the system library.
  ffk_function* who = ffk_module_get_function(m, "whoami");
  ASSERT_NE(who, nullptr) << FetchError();
  ffk_object_release(Obj(m));
  ASSERT_EQ(ffk_function_call(who, nullptr, 0, &r.v), 0) << FetchError();
  EXPECT_EQ(Str(r.v), "metadata_test_");
  ffk_object_release(Obj(who));
}

TEST_F(SystemLib, FallsBackToTheNameWithoutPrefixAndReportsBothSymbols) {
  ffk_module* m = ffk_module_system_lib("other_");
  ASSERT_NE(m, nullptr) << FetchError();
  ffk_function* f = ffk_module_get_function(m, "metadata_test_twice");
  ASSERT_NE(f, nullptr) << FetchError();
  EXPECT_STREQ(ffk_function_doc(f), "Doubles x.");
  ffk_object_release(Obj(f));
  EXPECT_EQ(ffk_module_get_function(m, "nothing"), nullptr);
  EXPECT_EQ(FetchError(),
            "AttributeError: module `<system_lib>` has no function `nothing` (no symbol `ffikit_fn_other_nothing` or "
            "`ffikit_fn_nothing`)");
  ffk_object_release(Obj(m));
  // No prefix: the exported name as is.
  m = ffk_module_system_lib(nullptr);
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_STREQ(ffk_module_symbol_prefix(m), "");
  EXPECT_EQ(ffk_module_implements_function(m, "metadata_test_twice"), 1);
  EXPECT_EQ(ffk_module_get_function(m, "twice"), nullptr);
  EXPECT_EQ(FetchError(), "AttributeError: module `<system_lib>` has no function `twice` (no symbol `ffikit_fn_twice`)");
  ffk_object_release(Obj(m));
}

TEST_F(SystemLib, DocAndMetadataLookups) {
  ffk_module* m = ffk_module_system_lib("metadata_test_");
  ASSERT_NE(m, nullptr) << FetchError();
  const char* doc = nullptr;
  EXPECT_EQ(ffk_module_get_function_doc(m, "twice", &doc), 1);
  EXPECT_STREQ(doc, "Doubles x.");
  EXPECT_EQ(ffk_module_get_function_doc(m, "whoami", &doc), 0);  // exported without a doc
  EXPECT_EQ(doc, nullptr);
  EXPECT_EQ(ffk_module_get_function_doc(m, "absent", &doc), 0);
  OwnedAny out;
  EXPECT_EQ(ffk_module_get_function_metadata(m, "twice", &out.v), 1) << FetchError();
  EXPECT_EQ(Str(out.v),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],)"
            R"(\"params\":[{\"type\":\"int\"}]}}","name":"twice","arity":1,"arg_names":["x"],"doc":"Doubles x."})");
  ffk_any_release(&out.v);
  EXPECT_EQ(ffk_module_get_function_metadata(m, "absent", &out.v), 0);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_module_get_function_doc(m, "not a name", &doc), 0);  // no symbol can have it
  EXPECT_EQ(ffk_module_get_function_metadata(m, "not a name", &out.v), 0);
  EXPECT_EQ(ffk_module_get_function_doc(m, "twice", nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"output is NULL"}));
  EXPECT_EQ(ffk_module_implements_function(nullptr, "x"), -1);
  EXPECT_TRUE(PendingError("ValueError", {"module is NULL"}));
  ffk_object_release(Obj(m));
}

TEST_F(SystemLib, RefusesAPrefixThatCannotBeInASymbol) {
  EXPECT_EQ(ffk_module_system_lib("testing."), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"`testing.`", "prefix"}));
  std::string long_prefix(101, 'a');
  EXPECT_EQ(ffk_module_system_lib(long_prefix.c_str()), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"at most 100"}));
}

TEST_F(SystemLib, AllocationFailuresAreMemoryErrors) {
  SweepAllocationFailures([] {
    ffk_module* m = ffk_module_system_lib("metadata_test_");
    if (m == nullptr) return false;
    ffk_function* f = ffk_module_get_function(m, "twice");
    ffk_object_release(Obj(m));
    if (f == nullptr) return false;
    ffk_object_release(Obj(f));
    return true;
  });
}

}  // namespace
