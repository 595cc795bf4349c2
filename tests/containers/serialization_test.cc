// ffikit/serialization.h: TVM-FFI's JSON graph format. Documents tvm_ffi 0.1.15 wrote
// (golden texts) are written byte for byte and read back; every kind of value round-trips
// with its sharing; cycles, the depth limit, unwritable values and every class of
// malformed document are errors with their messages; allocation failures leave nothing.
#include <ffikit/ffikit.h>
#include <ffikit/serialization.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "testing/testing.h"
#include "tests/support/ffk_test.h"
#include "tests/support/with_testing.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

class Serialization : public ffk::test::WithTesting {};

// ---- Builders: each steals the values it is given. ------------------------------------

ffk_any I(int64_t x) { return ffk_any_int(x); }
ffk_any F(double x) { return ffk_any_float(x); }
ffk_any B(bool x) { return ffk_any_bool(x); }
ffk_any S(const std::string& s) {
  ffk_any v;
  EXPECT_EQ(ffk_any_str(s.data(), s.size(), &v), 0) << FetchError();
  return v;
}
ffk_any Bytes(const std::string& s) {
  ffk_any v;
  EXPECT_EQ(ffk_any_bytes(s.data(), s.size(), &v), 0) << FetchError();
  return v;
}
ffk_any Dtype(const char* text) {
  DLDataType t;
  EXPECT_EQ(ffk_dtype_parse(text, strlen(text), &t), 0) << FetchError();
  return ffk_any_dtype(t);
}
ffk_any Ref(const ffk_any& v) {
  ffk_any_retain(&v);
  return v;
}
void ReleaseAll(std::vector<ffk_any>& items) {
  for (auto& v : items) ffk_any_release(&v);
}
ffk_any ArrayOf(std::vector<ffk_any> items) {
  ffk_any a = ffk_any_object_steal(&ffk_array_new(items.data(), (int64_t)items.size())->header);
  ReleaseAll(items);
  return a;
}
ffk_any TupleOf(std::vector<ffk_any> items) {
  ffk_any t = ffk_any_object_steal(&ffk_tuple_new((int64_t)items.size(), items.data())->header);
  ReleaseAll(items);
  return t;
}
ffk_any ListOf(std::vector<ffk_any> items) {
  ffk_any l =
      ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_from_items(items.data(), (int64_t)items.size())));
  ReleaseAll(items);
  return l;
}
ffk_any MapOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_map* m = ffk_map_new();
  for (auto& p : kv) {
    EXPECT_EQ(ffk_map_set(&m, &p.first, &p.second), 0);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(m));
}
ffk_any DictOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_dict* d = ffk_dict_new();
  for (auto& p : kv) {
    EXPECT_EQ(ffk_dict_set(d, &p.first, &p.second), 0);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(d));
}
ffk_list* L(const ffk_any& v) { return reinterpret_cast<ffk_list*>(v.v_obj); }
ffk_dict* D(const ffk_any& v) { return reinterpret_cast<ffk_dict*>(v.v_obj); }

int32_t TypeIndex(const char* key) {
  int32_t t = -1;
  EXPECT_EQ(ffk_type_lookup(key, &t), 1) << key;
  return t;
}

// Creates an object from positional values then named ones (all stolen).
ffk_any Create(const char* key, std::vector<ffk_any> args, std::vector<const char*> kwnames = {}) {
  ffk_object* out = nullptr;
  int32_t nkw = (int32_t)kwnames.size();
  int rc = ffk_object_create(TypeIndex(key), args.data(), (int32_t)args.size() - nkw, kwnames.data(), nkw, &out);
  EXPECT_EQ(rc, 0) << FetchError();
  ReleaseAll(args);
  return out ? ffk_any_object_steal(out) : ffk_any_none();
}
ffk_any IntPair(int64_t a, int64_t b) { return Create("testing.TestIntPair", {I(a), I(b)}); }
ffk_any Derived(int64_t v_i64, ffk_any v_map, ffk_any v_array, const char* v_str) {
  return Create("testing.TestObjectDerived", {I(v_i64), v_map, v_array, S(v_str)},
                {"v_i64", "v_map", "v_array", "v_str"});
}

ffk_any GetField(const ffk_any& obj, const char* name) {
  ffk_any out = ffk_any_none();
  EXPECT_EQ(ffk_object_get_field(obj.v_obj, name, &out), 0) << FetchError();
  return out;
}

// ---- Test types --------------------------------------------------------------------------

ffk_field_def Field(const char* name, size_t offset, const char* type, uint32_t flags = 0,
                    ffk_any default_value = ffk_any_none()) {
  return ffk_field_def{name, offset, type, flags, default_value, nullptr};
}

int32_t Define(const char* key, size_t size, const std::vector<ffk_field_def>& fields) {
  ffk_type_def def = {};
  def.key = key;
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = size;
  def.fields = fields.data();
  def.nfields = (int32_t)fields.size();
  int32_t t = ffk_type_define(&def);
  EXPECT_GE(t, 0) << FetchError();
  return t;
}

// A linked node whose `next` and `payload` may be rewritten, so it can reach itself.
struct JNode {
  ffk_object header;
  int64_t value;
  ffk_object* next;
  ffk_any payload;
};

int32_t NodeType() {
  constexpr uint32_t W = FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT;
  static int32_t t = Define("test.json.Node", sizeof(JNode),
                            {Field("value", offsetof(JNode, value), "int"),
                             Field("next", offsetof(JNode, next), "Optional<test.json.Node>", W),
                             Field("payload", offsetof(JNode, payload), "Any", W)});
  return t;
}
ffk_any Node(int64_t value) { return Create("test.json.Node", {I(value)}); }

// One field of every storage and flag; every field has a default.
struct JRecord {
  ffk_object header;
  int64_t i;
  double f;
  bool b;
  ffk_any dt;
  ffk_any dev;
  ffk_string* s;
  ffk_bytes* by;
  ffk_any maybe_int;
  ffk_object* items;
  ffk_string* note;
  int64_t hidden;
};

const ffk_byte_array kXy = {"xy", 2};

int32_t RecordType() {
  constexpr uint32_t H = FFK_FIELD_HAS_DEFAULT;
  static int32_t t = Define(
      "test.json.Record", sizeof(JRecord),
      {Field("i", offsetof(JRecord, i), "int", H, I(1)), Field("f", offsetof(JRecord, f), "float", H, F(0.5)),
       Field("b", offsetof(JRecord, b), "bool", H, B(true)),
       Field("dt", offsetof(JRecord, dt), "dtype", H, ffk_any_raw_str("float16")),
       Field("dev", offsetof(JRecord, dev), "Device", H, ffk_any_raw_str("cuda:3")),
       Field("s", offsetof(JRecord, s), "str", H, ffk_any_raw_str("a string longer than seven")),
       Field("by", offsetof(JRecord, by), "bytes", H, ffk_any_byte_array(&kXy)),
       Field("maybe_int", offsetof(JRecord, maybe_int), "Optional<int>", H),
       Field("items", offsetof(JRecord, items), "Optional<List<int>>", H),
       Field("note", offsetof(JRecord, note), "str", H | FFK_FIELD_COMPARE_OFF | FFK_FIELD_REPR_OFF,
             ffk_any_raw_str("note")),
       Field("hidden", offsetof(JRecord, hidden), "int", H | FFK_FIELD_INIT_OFF, I(7))});
  return t;
}

// ---- Running the functions ----------------------------------------------------------------

std::string ToJson(const ffk_any& v, const ffk_any* metadata = nullptr) {
  ffk_any out;
  if (ffk_to_json_graph(&v, metadata, &out) != 0) {
    ADD_FAILURE() << "to_json_graph failed: " << FetchError();
    return "";
  }
  const char* p;
  size_t n;
  EXPECT_EQ(ffk_any_as_str(&out, &p, &n), 0);
  std::string s(p, n);
  ffk_any_release(&out);
  return s;
}

ffk_any FromJson(const std::string& text, ffk_any* metadata = nullptr) {
  ffk_any out;
  if (ffk_from_json_graph(text.data(), text.size(), &out, metadata) != 0) {
    ADD_FAILURE() << "from_json_graph failed on " << text << ": " << FetchError();
    return ffk_any_none();
  }
  return out;
}

// The error of writing `v`, as "Kind: message" ("" when it succeeds).
std::string WriteError(const ffk_any& v, const ffk_any* metadata = nullptr) {
  ffk_any out;
  if (ffk_to_json_graph(&v, metadata, &out) == 0) {
    ffk_any_release(&out);
    return "";
  }
  EXPECT_EQ(out.type_index, FFK_TYPE_NONE);
  return FetchError();
}

// The error of reading `text`, as "Kind: message" ("" when it succeeds).
std::string ReadError(const std::string& text) {
  ffk_any out, meta;
  if (ffk_from_json_graph(text.data(), text.size(), &out, &meta) == 0) {
    ffk_any_release(&out);
    ffk_any_release(&meta);
    return "";
  }
  EXPECT_EQ(out.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(meta.type_index, FFK_TYPE_NONE);
  return FetchError();
}

// Structural equality, with what it leaves to identity compared by value where a document
// rebuilds it: a Shape by its dimensions, a container used as a Map/Dict key by its repr.
bool StructEq(const ffk_any& a, const ffk_any& b) {
  if (a.type_index == FFK_TYPE_SHAPE && b.type_index == FFK_TYPE_SHAPE)
    return ffk_shape_equal(reinterpret_cast<ffk_shape*>(a.v_obj), reinterpret_cast<ffk_shape*>(b.v_obj));
  int rc = ffk_structural_equal(&a, &b);
  EXPECT_GE(rc, 0) << FetchError();
  return rc == 1;
}
bool ReprEq(const ffk_any& a, const ffk_any& b) { return ffk::test::Repr(a) == ffk::test::Repr(b); }

// ---- Golden documents: what tvm_ffi 0.1.15's to_json_graph_str wrote for the same values. ----

struct Golden {
  const char* name;
  std::function<ffk_any()> value;
  std::function<ffk_any()> metadata;  // may be empty
  const char* text;
};

std::vector<Golden> Goldens() {
  const double nan = std::nan(""), inf = INFINITY;
  return {
      {"Int", [] { return I(1); }, nullptr, R"({"root_index":0,"nodes":[{"type":"int","data":1}]})"},
      {"Scalars",
       [=] {
         return ArrayOf({I(1), F(2.5), S("a"), I(1), S("a"), ffk_any_none(), B(true), F(nan), F(inf), F(-inf), F(-0.0),
                         F(0.0)});
       },
       nullptr,
       R"({"root_index":10,"nodes":[{"type":"int","data":1},{"type":"float","data":2.5},{"type":"ffi.String","data":"a"},{"type":"None"},{"type":"bool","data":true},{"type":"float","data":NaN},{"type":"float","data":Infinity},{"type":"float","data":-Infinity},{"type":"float","data":-0.0},{"type":"float","data":0.0},{"type":"ffi.Array","data":[0,1,2,0,2,3,4,5,6,7,8,9]}]})"},
      {"MapWithMetadata",
       [] {
         return MapOf({{S("a"), S("h\xc3\xa9\"\\\n\t\x01 \xe2\x80\xa8 \xf0\x9f\x98\x80")},
                       {S("b"), Bytes(std::string("\x00\x01" "abc", 5))}});
       },
       [] { return MapOf({{S("v"), I(1)}, {S("x"), ArrayOf({I(1), I(2)})}}); },
       "{\"root_index\":4,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"a\"},{\"type\":\"ffi.String\",\"data\":"
       "\"h\xc3\xa9\\\"\\\\\\n\\t\\u0001 \xe2\x80\xa8 \xf0\x9f\x98\x80\"},{\"type\":\"ffi.String\",\"data\":\"b\"},"
       "{\"type\":\"ffi.Bytes\",\"data\":\"AAFhYmM=\"},{\"type\":\"ffi.Map\",\"data\":[0,1,2,3]}],"
       "\"metadata\":{\"v\":1,\"x\":[1,2]}}"},
      {"Shape",
       [] {
         int64_t dims[] = {2, 3};
         return ffk_any_object_steal(&ffk_shape_new(dims, 2)->header);
       },
       nullptr, R"({"root_index":0,"nodes":[{"type":"ffi.Shape","data":[2,3]}]})"},
      {"Dtypes", [] { return ArrayOf({Dtype("float32"), Dtype("bfloat16"), Dtype("int32x4"), Dtype("bool")}); },
       nullptr,
       R"({"root_index":4,"nodes":[{"type":"DataType","data":"float32"},{"type":"DataType","data":"bfloat16"},{"type":"DataType","data":"int32x4"},{"type":"DataType","data":"bool"},{"type":"ffi.Array","data":[0,1,2,3]}]})"},
      {"Device", [] { return ffk_any_device(ffk_device(FFK_DEVICE_CUDA, 1)); }, nullptr,
       R"({"root_index":0,"nodes":[{"type":"Device","data":[2,1]}]})"},
      {"IntPair", [] { return IntPair(1, 2); }, nullptr,
       R"({"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2}}]})"},
      {"SharedPairs",
       [] {
         ffk_any p = IntPair(1, 2);
         return ArrayOf({Ref(p), p, IntPair(3, 4)});
       },
       nullptr,
       R"({"root_index":2,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2}},{"type":"testing.TestIntPair","data":{"a":3,"b":4}},{"type":"ffi.Array","data":[0,0,1]}]})"},
      {"Derived", [] { return Derived(20, MapOf({{S("a"), I(1)}}), ArrayOf({I(1), S("x")}), "hi"); }, nullptr,
       R"({"root_index":6,"nodes":[{"type":"ffi.String","data":"hi"},{"type":"ffi.String","data":"a"},{"type":"int","data":1},{"type":"ffi.Map","data":[1,2]},{"type":"ffi.String","data":"x"},{"type":"ffi.Array","data":[2,4]},{"type":"testing.TestObjectDerived","data":{"v_i64":20,"v_f64":10.0,"v_str":0,"v_map":3,"v_array":5}}]})"},
      {"ListDict", [] { return ListOf({I(1), DictOf({{S("k"), ListOf({})}})}); }, nullptr,
       R"({"root_index":4,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"k"},{"type":"ffi.List","data":[]},{"type":"ffi.Dict","data":[1,2]},{"type":"ffi.List","data":[0,3]}]})"},
      {"None", [] { return ffk_any_none(); }, nullptr, R"({"root_index":0,"nodes":[{"type":"None"}]})"},
      {"BoolIntFloat", [] { return ArrayOf({B(true), I(1), F(1.0)}); }, nullptr,
       R"({"root_index":3,"nodes":[{"type":"bool","data":true},{"type":"int","data":1},{"type":"float","data":1.0},{"type":"ffi.Array","data":[0,1,2]}]})"},
      {"MetadataKinds", [] { return I(1); },
       [] {
         return MapOf({{S("a"), ffk_any_none()}, {S("f"), F(1.5)}, {S("b"), B(true)}, {S("n"), MapOf({{S("x"), S("y")}})}});
       },
       R"({"root_index":0,"nodes":[{"type":"int","data":1}],"metadata":{"a":null,"f":1.5,"b":true,"n":{"x":"y"}}})"},
      {"EmptyStrBytes", [] { return ArrayOf({S(""), Bytes(""), Bytes("a"), Bytes("ab"), Bytes("abc"), Bytes("abcd")}); },
       nullptr,
       R"({"root_index":6,"nodes":[{"type":"ffi.String","data":""},{"type":"ffi.Bytes","data":""},{"type":"ffi.Bytes","data":"YQ=="},{"type":"ffi.Bytes","data":"YWI="},{"type":"ffi.Bytes","data":"YWJj"},{"type":"ffi.Bytes","data":"YWJjZA=="},{"type":"ffi.Array","data":[0,1,2,3,4,5]}]})"},
      {"SharedArrayAndLongStrings",
       [] {
         ffk_any shared = ArrayOf({I(1), I(2)});
         return ArrayOf({Ref(shared), S("hello world"), shared, S("hello world"), ArrayOf({I(1), I(2)})});
       },
       nullptr,
       R"({"root_index":5,"nodes":[{"type":"int","data":1},{"type":"int","data":2},{"type":"ffi.Array","data":[0,1]},{"type":"ffi.String","data":"hello world"},{"type":"ffi.Array","data":[0,1]},{"type":"ffi.Array","data":[2,3,2,3,4]}]})"},
      {"ControlCharacters", [] { return ArrayOf({S(std::string("\b\f\r\0\x7f\x1b a\x7f" "b", 10)), S("\x7f")}); },
       nullptr,
       R"({"root_index":2,"nodes":[{"type":"ffi.String","data":"\b\f\r\u0000\u007f\u001b a\u007fb"},{"type":"ffi.String","data":"\u007f"},{"type":"ffi.Array","data":[0,1]}]})"},
      {"Slash", [] { return S("a/b\x1f"); }, nullptr,
       R"({"root_index":0,"nodes":[{"type":"ffi.String","data":"a\/b\u001f"}]})"},
  };
}

TEST_F(Serialization, WritesWhatTvmFfiWritesByteForByte) {
  for (const Golden& g : Goldens()) {
    OwnedAny v(g.value());
    OwnedAny meta(g.metadata ? g.metadata() : ffk_any_none());
    EXPECT_EQ(ToJson(v.v, g.metadata ? &meta.v : nullptr), g.text) << g.name;
  }
}

TEST_F(Serialization, ReadsWhatTvmFfiWroteBackToEqualValues) {
  for (const Golden& g : Goldens()) {
    OwnedAny expected(g.value());
    OwnedAny meta;
    OwnedAny got(FromJson(g.text, &meta.v));
    EXPECT_EQ(got.v.type_index == FFK_TYPE_SMALL_STR ? FFK_TYPE_STRING : got.v.type_index,
              expected.v.type_index == FFK_TYPE_SMALL_STR ? FFK_TYPE_STRING : expected.v.type_index)
        << g.name;
    EXPECT_TRUE(StructEq(got.v, expected.v)) << g.name << ": " << ffk::test::Repr(got.v);
    if (g.metadata) {
      OwnedAny expected_meta(g.metadata());
      EXPECT_TRUE(StructEq(meta.v, expected_meta.v)) << g.name << ": " << ffk::test::Repr(meta.v);
    } else {
      EXPECT_EQ(meta.v.type_index, FFK_TYPE_NONE) << g.name;
    }
    // And writing what was read gives the same document again.
    EXPECT_EQ(ToJson(got.v, g.metadata ? &meta.v : nullptr), g.text) << g.name;
  }
}

TEST_F(Serialization, FloatsAreWrittenShortestAndTvmFfisLongerTextsReadBack) {
  // tvm_ffi writes %.17g; ffikit the shortest text that reads back to the same double.
  OwnedAny v(ArrayOf({F(1e300), F(0.1), F(1e16), F(5e-324)}));
  std::string text = ToJson(v.v);
  EXPECT_NE(text.find(R"({"type":"float","data":0.1})"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.10000000000000001"), std::string::npos) << text;
  OwnedAny back(FromJson(text));
  EXPECT_TRUE(StructEq(back.v, v.v)) << text;
  // tvm_ffi wrote 1e16 as the integer 10000000000000000: a float node takes an integer.
  OwnedAny from_tvm(FromJson(
      R"({"root_index":4,"nodes":[{"type":"float","data":1.0000000000000001e+300},{"type":"float","data":0.10000000000000001},{"type":"float","data":10000000000000000},{"type":"float","data":4.9406564584124654e-324},{"type":"ffi.Array","data":[0,1,2,3]}]})"));
  ASSERT_EQ(from_tvm.v.type_index, FFK_TYPE_ARRAY);
  const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(from_tvm.v.v_obj));
  const double expected[] = {1e300, 0.1, 1e16, 5e-324};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(items[i].type_index, FFK_TYPE_FLOAT) << i;
    EXPECT_EQ(items[i].v_float, expected[i]) << i;
  }
}

// ---- Round trips -------------------------------------------------------------------------

TEST_F(Serialization, EveryKindOfValueRoundTrips) {
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes.push_back((char)c);
  int64_t dims[] = {4, -1, 0};
  std::vector<std::function<ffk_any()>> values = {
      [] { return ffk_any_none(); },
      [] { return B(false); },
      [] { return I(INT64_MIN); },
      [] { return I(INT64_MAX); },
      [] { return F(-0.0); },
      [] { return F(std::nan("")); },
      [] { return F(-INFINITY); },
      [] { return F(1.0 / 3.0); },
      [] { return Dtype("float8_e4m3fn"); },
      [] { return ffk_any_device(ffk_device(FFK_DEVICE_CPU, 0)); },
      [] { return S(""); },
      [] { return S("short"); },
      [] { return S(std::string("with\0nul and \xe2\x82\xac", 16)); },
      [&] { return Bytes(all_bytes); },
      [&] { return ffk_any_object_steal(&ffk_shape_new(dims, 3)->header); },
      [] { return ffk_any_object_steal(&ffk_shape_new(nullptr, 0)->header); },
      [] { return ArrayOf({}); },
      [] { return TupleOf({I(1), S("two"), TupleOf({})}); },
      [] { return ListOf({ListOf({}), ArrayOf({I(1)}), MapOf({})}); },
      [] { return MapOf({{I(1), S("int key")}, {B(true), S("bool key")}, {F(1.0), S("float key")}, {S("k"), ffk_any_none()}}); },
      [] { return DictOf({{S("a"), DictOf({})}, {ffk_any_none(), TupleOf({})}}); },
      [] { return IntPair(-5, 9); },
      [] { return Derived(3, MapOf({{S("k"), IntPair(1, 2)}}), ArrayOf({ListOf({I(1)})}), "text"); },
      [] { return Create("test.json.Record", {}); },
      [] {
        return Create("test.json.Record", {I(-1), F(NAN), B(false), Dtype("int4"), S("cpu"), S(""), Bytes(""), I(3),
                                            ListOf({I(1), I(2)}), S("")},
                      {"i", "f", "b", "dt", "dev", "s", "by", "maybe_int", "items", "note"});
      },
  };
  RecordType();
  for (size_t k = 0; k < values.size(); ++k) {
    OwnedAny v(values[k]());
    std::string text = ToJson(v.v);
    OwnedAny back(FromJson(text));
    int32_t want = v.v.type_index == FFK_TYPE_SMALL_STR ? FFK_TYPE_STRING
                   : v.v.type_index == FFK_TYPE_SMALL_BYTES ? FFK_TYPE_BYTES
                                                            : v.v.type_index;
    int32_t got = back.v.type_index == FFK_TYPE_SMALL_STR ? FFK_TYPE_STRING
                  : back.v.type_index == FFK_TYPE_SMALL_BYTES ? FFK_TYPE_BYTES
                                                              : back.v.type_index;
    EXPECT_EQ(got, want) << k << ": " << text;
    EXPECT_TRUE(StructEq(back.v, v.v)) << k << ": " << text << " -> " << ffk::test::Repr(back.v);
    EXPECT_EQ(ToJson(back.v), text) << k;
  }
  // A container key is another object after a round trip (keys compare by identity), equal in value.
  OwnedAny keyed(DictOf({{ArrayOf({I(1)}), DictOf({})}, {TupleOf({}), I(2)}}));
  OwnedAny keyed_back(FromJson(ToJson(keyed.v)));
  EXPECT_EQ(keyed_back.v.type_index, FFK_TYPE_DICT);
  EXPECT_TRUE(ReprEq(keyed_back.v, keyed.v)) << ffk::test::Repr(keyed_back.v);
  // -0.0 keeps its sign (structural equality would not notice).
  OwnedAny neg(FromJson(ToJson(F(-0.0))));
  EXPECT_TRUE(std::signbit(neg.v.v_float));
}

TEST_F(Serialization, ObjectFieldsAreWrittenInlineOrAsNodesAsTvmFfiDoes) {
  RecordType();
  OwnedAny r(Create("test.json.Record", {}));
  // int, float, bool and dtype fields inline; Device, str, bytes, Optional<int>, containers as nodes;
  // compare-off, repr-off and init-off fields are written too.
  EXPECT_EQ(ToJson(r.v),
            R"({"root_index":5,"nodes":[{"type":"Device","data":[2,3]},{"type":"ffi.String","data":"a string longer than seven"},{"type":"ffi.Bytes","data":"eHk="},{"type":"None"},{"type":"ffi.String","data":"note"},{"type":"test.json.Record","data":{"i":1,"f":0.5,"b":true,"dt":"float16","dev":0,"s":1,"by":2,"maybe_int":3,"items":3,"note":4,"hidden":7}}]})");
}

TEST_F(Serialization, SharingSurvivesARoundTrip) {
  NodeType();
  OwnedAny shared_list(ListOf({I(1)}));
  OwnedAny shared_obj(IntPair(1, 2));
  OwnedAny v(ArrayOf({Ref(shared_list.v), Ref(shared_obj.v), Ref(shared_list.v), Ref(shared_obj.v), ListOf({I(1)})}));
  OwnedAny back(FromJson(ToJson(v.v)));
  ASSERT_EQ(back.v.type_index, FFK_TYPE_ARRAY);
  const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(back.v.v_obj));
  EXPECT_EQ(items[0].v_obj, items[2].v_obj);  // one List, twice
  EXPECT_EQ(items[1].v_obj, items[3].v_obj);  // one object, twice
  EXPECT_NE(items[0].v_obj, items[4].v_obj);  // an equal but distinct List stays distinct
  // A List changed through one reference shows through the other, as before writing.
  ffk_any two = I(2);
  ASSERT_EQ(ffk_list_append(L(items[0]), &two), 0);
  EXPECT_EQ(ffk_list_size(L(items[2])), 2);
  // Two fields of two objects holding one object.
  OwnedAny a(Node(1)), b(Node(2)), tail(Node(3));
  ASSERT_EQ(ffk_object_set_field(a.v.v_obj, "next", &tail.v), 0);
  ASSERT_EQ(ffk_object_set_field(b.v.v_obj, "payload", &tail.v), 0);
  OwnedAny pair(TupleOf({Ref(a.v), Ref(b.v)}));
  OwnedAny pair_back(FromJson(ToJson(pair.v)));
  const ffk_any* ab = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(pair_back.v.v_obj));
  OwnedAny next(GetField(ab[0], "next")), payload(GetField(ab[1], "payload"));
  EXPECT_EQ(next.v.v_obj, payload.v.v_obj);
  EXPECT_EQ(ffk_object_use_count(next.v.v_obj), 4u);  // a.next, b.payload, `next` and `payload`
}

// ---- Errors of the writer -------------------------------------------------------------------

TEST_F(Serialization, CyclesAreRefused) {
  OwnedAny list(ListOf({I(1)}));
  ASSERT_EQ(ffk_list_append(L(list.v), &list.v), 0);
  EXPECT_EQ(WriteError(list.v), "ValueError: Cycle detected during serialization: a List contains itself");
  ASSERT_EQ(ffk_list_clear(L(list.v)), 0);

  OwnedAny dict(DictOf({}));
  ffk_any key = I(0);
  ASSERT_EQ(ffk_dict_set(D(dict.v), &key, &dict.v), 0);
  OwnedAny outer(ArrayOf({Ref(dict.v)}));
  EXPECT_EQ(WriteError(outer.v), "ValueError: Cycle detected during serialization: a Dict contains itself");
  ASSERT_EQ(ffk_dict_clear(D(dict.v)), 0);

  // Through an Array: tvm_ffi names the List on the cycle.
  OwnedAny l2(ListOf({}));
  OwnedAny arr(ArrayOf({Ref(l2.v)}));
  ASSERT_EQ(ffk_list_append(L(l2.v), &arr.v), 0);
  EXPECT_EQ(WriteError(arr.v), "ValueError: Cycle detected during serialization: a List contains itself");
  ASSERT_EQ(ffk_list_clear(L(l2.v)), 0);

  // An object reaching itself through its fields.
  NodeType();
  OwnedAny n1(Node(1)), n2(Node(2));
  ASSERT_EQ(ffk_object_set_field(n1.v.v_obj, "next", &n2.v), 0);
  ASSERT_EQ(ffk_object_set_field(n2.v.v_obj, "payload", &n1.v), 0);
  EXPECT_EQ(WriteError(n1.v),
            "ValueError: Cycle detected during serialization: a `test.json.Node` object reaches itself through its "
            "fields");
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_object_set_field(n2.v.v_obj, "payload", &none), 0);
  // Shared but acyclic is fine: a diamond.
  OwnedAny diamond(ArrayOf({Ref(n1.v), Ref(n2.v)}));
  EXPECT_EQ(WriteError(diamond.v), "");
}

ffk_any Nested(int levels) {
  ffk_any v = I(0);
  for (int i = 0; i < levels; ++i) v = ArrayOf({v});
  return v;
}

TEST_F(Serialization, NestingDeeperThanTheLimitIsAnError) {
  OwnedAny ok(Nested(FFK_STRUCTURAL_MAX_DEPTH));
  std::string text = ToJson(ok.v);
  OwnedAny back(FromJson(text));
  EXPECT_TRUE(StructEq(back.v, ok.v));
  OwnedAny deep(Nested(FFK_STRUCTURAL_MAX_DEPTH + 1));
  EXPECT_EQ(WriteError(deep.v), "RuntimeError: containers and objects nested deeper than 1000 levels");
  // The same document, written by hand one level deeper.
  std::string doc = R"({"root_index":)" + std::to_string(FFK_STRUCTURAL_MAX_DEPTH + 1) +
                    R"(,"nodes":[{"type":"int","data":0})";
  for (int i = 0; i <= FFK_STRUCTURAL_MAX_DEPTH; ++i) doc += R"(,{"type":"ffi.Array","data":[)" + std::to_string(i) + "]}";
  doc += "]}";
  EXPECT_EQ(ReadError(doc), "RuntimeError: containers and objects nested deeper than 1000 levels");
  // Metadata counts too.
  OwnedAny meta(MapOf({{S("deep"), Nested(FFK_STRUCTURAL_MAX_DEPTH + 1)}}));
  EXPECT_EQ(WriteError(I(1), &meta.v), "RuntimeError: containers and objects nested deeper than 1000 levels");
}

int Noop(void*, const ffk_any*, int32_t, ffk_any*) { return 0; }

TEST_F(Serialization, ValuesWithoutAJsonFormAreTypeErrors) {
  ffk_function* f = ffk_function_new("noop", Noop, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  OwnedAny fn(ffk_any_object_steal(reinterpret_cast<ffk_object*>(f)));
  EXPECT_EQ(WriteError(fn.v), "TypeError: cannot serialize `ffikit.Function`");
  OwnedAny in_list(ListOf({I(1), Ref(fn.v)}));
  EXPECT_EQ(WriteError(in_list.v), "TypeError: cannot serialize `ffikit.Function`");
  int x = 0;
  EXPECT_EQ(WriteError(ffk_any_ptr(&x)), "TypeError: cannot serialize `void*`");
  // A raw C string argument is a str.
  EXPECT_EQ(ToJson(ffk_any_raw_str("raw")), R"({"root_index":0,"nodes":[{"type":"ffi.String","data":"raw"}]})");
}

TEST_F(Serialization, MetadataMustBeAMapOfJsonData) {
  ffk_any three = I(3);
  EXPECT_EQ(WriteError(I(1), &three),
            "TypeError: metadata must be a Map or Dict with str keys, got `int`");
  OwnedAny int_key(MapOf({{I(1), I(2)}}));
  EXPECT_EQ(WriteError(I(1), &int_key.v), "TypeError: metadata must be JSON data: a key of type `int` is not a str");
  OwnedAny shape_value(DictOf({{S("s"), ffk_any_object_steal(&ffk_shape_new(nullptr, 0)->header)}}));
  EXPECT_EQ(WriteError(I(1), &shape_value.v),
            "TypeError: metadata must be JSON data: a value of type `Shape` is not JSON-able");
  // None means none; a Dict and Lists inside are fine, and come back as Map and Arrays.
  ffk_any none = ffk_any_none();
  EXPECT_EQ(ToJson(I(1), &none), R"({"root_index":0,"nodes":[{"type":"int","data":1}]})");
  OwnedAny dict(DictOf({{S("l"), ListOf({S("a"), TupleOf({})})}}));
  std::string text = ToJson(I(1), &dict.v);
  EXPECT_EQ(text, R"({"root_index":0,"nodes":[{"type":"int","data":1}],"metadata":{"l":["a",[]]}})");
  OwnedAny meta;
  OwnedAny back(FromJson(text, &meta.v));
  OwnedAny expected(MapOf({{S("l"), ArrayOf({S("a"), ArrayOf({})})}}));
  EXPECT_TRUE(StructEq(meta.v, expected.v)) << ffk::test::Repr(meta.v);
  // Reading without asking for the metadata ignores it.
  OwnedAny no_meta(FromJson(text));
  EXPECT_EQ(no_meta.v.v_int, 1);
}

// ---- Malformed documents: every one an error naming what is wrong. ---------------------------

TEST_F(Serialization, MalformedDocumentsAreValueErrorsNamingTheProblem) {
  const std::string P = "ValueError: Invalid JSON Object Graph: ";
  auto doc = [](const std::string& nodes, const std::string& root = "0") {
    return R"({"root_index":)" + root + R"(,"nodes":[)" + nodes + "]}";
  };
  struct Case {
    std::string text, error;
  };
  std::vector<Case> cases = {
      {"", P + "not JSON: input length is 0 at byte 0"},
      {"{", P + "not JSON: unexpected end of data at byte 1"},
      {"{\"root_index\":0,\"nodes\":[]} x", P + "not JSON: unexpected content after document at byte 28"},
      {"[]", P + "expected a JSON object, got an array"},
      {"{}", P + "expected `root_index` integer field"},
      {R"({"root_index":"0","nodes":[]})", P + "expected `root_index` integer field"},
      {R"({"root_index":0.0,"nodes":[]})", P + "expected `root_index` integer field"},
      {R"({"root_index":0})", P + "expected `nodes` array field"},
      {R"({"root_index":0,"nodes":{}})", P + "expected `nodes` array field"},
      {doc("", "0"), P + "invalid node index 0 (the document has 0 nodes)"},
      {doc(R"({"type":"None"})", "1"), P + "invalid node index 1 (the document has 1 nodes)"},
      {doc(R"({"type":"None"})", "-1"), P + "invalid node index -1 (the document has 1 nodes)"},
      {doc(R"({"type":"None"})", "18446744073709551615"), P + "invalid node index 18446744073709551615"},
      {doc("1"), P + "node 0 must be an object, got an int"},
      {doc("{}"), P + "node 0 has no \"type\""},
      {doc(R"({"type":1})"), P + "node 0: \"type\" must be a string, got an int"},
      {doc(R"({"type":"int"})"), P + "node 0 (`int`) has no \"data\""},
      {doc(R"({"type":"int","data":"1"})"), P + "node 0 (`int`): \"data\" must be a 64-bit integer, got a string"},
      {doc(R"({"type":"int","data":1.5})"), P + "node 0 (`int`): \"data\" must be a 64-bit integer, got a float"},
      {doc(R"({"type":"int","data":9223372036854775808})"),
       P + "node 0 (`int`): \"data\" must be a 64-bit integer, got an int"},
      {doc(R"({"type":"bool","data":1})"), P + "node 0 (`bool`): \"data\" must be true or false, got an int"},
      {doc(R"({"type":"float","data":"x"})"), P + "node 0 (`float`): \"data\" must be a number, got a string"},
      {doc(R"({"type":"DataType","data":"flaot32"})"), P + "node 0: Invalid dtype \"flaot32\""},
      {doc(R"({"type":"DataType","data":3})"), P + "node 0 (`DataType`): \"data\" must be a string, got an int"},
      {doc(R"({"type":"Device","data":[1]})"), P + "node 0 (`Device`): \"data\" must be [device_type, device_id]"},
      {doc(R"({"type":"Device","data":[1,"x"]})"), P + "node 0 (`Device`): \"data\" must be [device_type, device_id]"},
      {doc(R"({"type":"Device","data":[1,2147483648]})"), P + "node 0 (`Device`): [1, 2147483648] is out of range"},
      {doc(R"({"type":"Device","data":[-1,0]})"), P + "node 0 (`Device`): [-1, 0] is out of range"},
      {doc(R"({"type":"ffi.String","data":1})"), P + "node 0 (`ffi.String`): \"data\" must be a string, got an int"},
      {doc(R"({"type":"ffi.Bytes","data":"abc"})"),
       P + "node 0 (`ffi.Bytes`): invalid base64 text: its length 3 is not a multiple of 4"},
      {doc(R"({"type":"ffi.Bytes","data":"ab!="})"),
       P + "node 0 (`ffi.Bytes`): invalid base64 text: byte 0x21 at offset 2"},
      {doc(R"({"type":"ffi.Bytes","data":"a=bc"})"),
       P + "node 0 (`ffi.Bytes`): invalid base64 text: byte 0x3d at offset 1"},
      {doc(R"({"type":"ffi.Bytes","data":null})"),
       P + "node 0 (`ffi.Bytes`): \"data\" must be a base64 string, got null"},
      {doc(R"({"type":"ffi.Shape","data":["a"]})"),
       P + "node 0 (`ffi.Shape`): a dimension must be an integer, got a string"},
      {doc(R"({"type":"ffi.Shape","data":{}})"), P + "node 0 (`ffi.Shape`): \"data\" must be an array, got an object"},
      {doc(R"({"type":"ffi.Array","data":"x"})"), P + "node 0 (`ffi.Array`): \"data\" must be an array, got a string"},
      {doc(R"({"type":"ffi.List","data":[1.5]})"), P + "a node index must be an integer, got a float"},
      {doc(R"({"type":"ffikit.Array","data":[5]})"), P + "invalid node index 5 (the document has 1 nodes)"},
      {doc(R"({"type":"ffi.Array","data":[0]})"), P + "node 0 is reachable from itself"},
      {doc(R"({"type":"ffi.List","data":[1]},{"type":"ffi.Dict","data":[1,0]})"), P + "node 1 is reachable from itself"},
      {doc(R"({"type":"int","data":1},{"type":"ffi.Map","data":[0,0,0]})", "1"),
       P + "node 1 (`ffi.Map`): Map/Dict data must contain an even number of [key, value] entries, got 3"},
      {doc(R"({"type":"no.such.Type","data":{}})"), P + "node 0: unknown type key `no.such.Type`"},
      {doc(R"({"type":"void*","data":0})"), P + "node 0: unknown type key `void*`"},
      {doc(R"({"type":"testing.TestIntPair","data":[1,2]})"),
       P + "node 0 (`testing.TestIntPair`): \"data\" must be an object, got an array"},
      {doc(R"({"type":"testing.TestIntPair","data":{"a":1,"b":2,"c":3}})"),
       P + "node 0: `testing.TestIntPair` has no field `c`"},
      {doc(R"({"type":"testing.TestIntPair","data":{"a":1,"b\u0000":2}})"),
       P + "node 0: `testing.TestIntPair` has no field `b`"},
      {doc(R"({"type":"testing.TestIntPair","data":{"a":1}})"),
       P + "node 0: required field `b` of `testing.TestIntPair` is missing"},
      {doc(R"({"type":"testing.TestIntPair","data":{"a":"x","b":2}})"),
       P + "node 0: field `a` must be a JSON int, got a string"},
      {doc(R"({"type":"testing.TestIntPair","data":{"a":1.5,"b":2}})"),
       P + "node 0: Mismatched type on field `a` of `testing.TestIntPair`: expected `int` but got `float`"},
      {doc(R"({"type":"int","data":1},{"type":"testing.TestObjectDerived","data":{"v_map":0,"v_array":0}})", "1"),
       P + "node 1: Mismatched type on field `v_map` of `testing.TestObjectDerived`: expected `Map<Any, Any>` but got "
           "`int`"},
      {doc(R"({"type":"testing.TestObjectDerived","data":{"v_map":7}})"),
       P + "invalid node index 7 (the document has 1 nodes)"},
      {R"({"root_index":0,"nodes":[{"type":"None"}],"metadata":{"big":18446744073709551615}})",
       P + "the integer 18446744073709551615 is out of range"},
      {"{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"\xff\"}]}",
       P + "not JSON: invalid UTF-8 encoding in string at byte 54"},
  };
  for (const Case& c : cases) EXPECT_EQ(ReadError(c.text), c.error) << c.text;
}

TEST_F(Serialization, ObjectsOfTypesWithoutReflectionCannotBeRead) {
  EXPECT_EQ(ReadError(R"({"root_index":0,"nodes":[{"type":"ffikit.Function","data":{}}]})"),
            "TypeError: cannot deserialize `ffikit.Function`: its type is not reflected and has no "
            "`__data_from_json__` hook");
}

TEST_F(Serialization, ReadingIsLenientWhereTvmFfiIs) {
  // Nodes the root does not reach are not decoded; "data" of None is ignored; key order is free;
  // the text need not end in NUL; both spellings of container keys read.
  std::string text =
      R"({"nodes":[{"type":"bogus"},{"data":[2,3],"type":"ffikit.Tuple"},{"type":"None","data":5},{"type":"ffikit.String","data":"s"}],"root_index":1})";
  std::string padded = text + "garbage";
  ffk_any out;
  ASSERT_EQ(ffk_from_json_graph(padded.data(), text.size(), &out, nullptr), 0) << FetchError();
  OwnedAny v(out);
  OwnedAny expected(TupleOf({ffk_any_none(), S("s")}));
  EXPECT_EQ(v.v.type_index, FFK_TYPE_TUPLE);
  EXPECT_TRUE(StructEq(v.v, expected.v));
  // A missing field with a default takes it; fields in any order; NaN bare tokens.
  OwnedAny base(FromJson(R"({"root_index":0,"nodes":[{"type":"testing.TestObjectBase","data":{"v_f64":NaN}}]})"));
  OwnedAny v_i64(GetField(base.v, "v_i64")), v_f64(GetField(base.v, "v_f64")), v_str(GetField(base.v, "v_str"));
  EXPECT_EQ(v_i64.v.v_int, 10);
  EXPECT_TRUE(std::isnan(v_f64.v.v_float));
  EXPECT_EQ(ffk::test::Repr(v_str.v), "\"hello\"");
}

TEST_F(Serialization, BadArgumentsAreValueErrors) {
  ffk_any out;
  EXPECT_EQ(ffk_to_json_graph(nullptr, nullptr, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"value is NULL"}));
  ffk_any one = I(1);
  EXPECT_EQ(ffk_to_json_graph(&one, nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"output is NULL"}));
  EXPECT_EQ(ffk_from_json_graph(nullptr, 3, &out, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"text is NULL"}));
  EXPECT_EQ(ffk_from_json_graph("{}", 2, nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"output is NULL"}));
  EXPECT_EQ(ffk_from_json_graph(nullptr, 0, &out, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"not JSON"}));
}

// ---- Type hooks (__data_to_json__ / __data_from_json__) and objects reflection did not make ----

// A plain registered type (no reflection) whose objects the test allocates: a temperature.
struct JTemp {
  ffk_object header;
  double celsius;
};

int32_t TempType();

ffk_any Temp(double celsius) {
  ffk_object* o = ffk_object_alloc(TempType(), sizeof(JTemp), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  EXPECT_NE(o, nullptr) << FetchError();
  reinterpret_cast<JTemp*>(o)->celsius = celsius;
  return ffk_any_object_steal(o);
}

// Temp -> {"celsius": x, "unit": "C"}; a temperature of 999 raises; one of -1 returns a Function.
int TempToJson(void*, const ffk_any* args, int32_t, ffk_any* result) {
  double c = reinterpret_cast<const JTemp*>(args[0].v_obj)->celsius;
  if (c == 999) return ffk_error_set(FFK_ERR_VALUE, "too hot to write");
  if (c == -1) {
    *result = Ref(args[0]);  // a Temp is not JSON data
    return 0;
  }
  // Allocation-failure safe (the fail-Nth sweep runs through it).
  ffk_map* m = ffk_map_new();
  ffk_any k1 = ffk_any_raw_str("celsius"), v1 = F(c), k2 = ffk_any_raw_str("unit"), v2 = ffk_any_raw_str("C");
  if (m == nullptr || ffk_map_set(&m, &k1, &v1) != 0 || ffk_map_set(&m, &k2, &v2) != 0) {
    if (m != nullptr) ffk_object_release(reinterpret_cast<ffk_object*>(m));
    return -1;
  }
  *result = ffk_any_object_steal(reinterpret_cast<ffk_object*>(m));
  return 0;
}

// {"celsius": x} -> Temp; {"celsius": 0} returns an int instead.
int TempFromJson(void*, const ffk_any* args, int32_t, ffk_any* result) {
  if (args[0].type_index != FFK_TYPE_MAP) return ffk_error_set(FFK_ERR_TYPE, "a Temp's data must be a Map");
  ffk_any key = ffk_any_raw_str("celsius"), c;
  int found = ffk_map_get(reinterpret_cast<ffk_map*>(args[0].v_obj), &key, &c);
  if (found != 1) return found < 0 ? -1 : ffk_error_set(FFK_ERR_KEY, "no celsius");
  if (c.v_float == 0) {
    *result = I(0);
    return 0;
  }
  ffk_object* o = ffk_object_alloc(TempType(), sizeof(JTemp), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  if (o == nullptr) return -1;
  reinterpret_cast<JTemp*>(o)->celsius = c.v_float;
  *result = ffk_any_object_steal(o);
  return 0;
}

void SetHook(int32_t type, const char* name, ffk_safe_call call) {
  ffk_function* f = ffk_function_new(name, call, nullptr, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_any v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(f));
  EXPECT_EQ(ffk_type_set_attr(type, name, &v), 0) << FetchError();
  ffk_any_release(&v);
}

int32_t TempType() {
  static int32_t t = [] {
    int32_t index = ffk_type_register("test.json.Temp", FFK_TYPE_OBJECT);
    EXPECT_GE(index, 0) << FetchError();
    SetHook(index, FFK_ATTR_DATA_TO_JSON, TempToJson);
    SetHook(index, FFK_ATTR_DATA_FROM_JSON, TempFromJson);
    return index;
  }();
  return t;
}

TEST_F(Serialization, TypeHooksWriteAndReadTheirOwnData) {
  OwnedAny t(Temp(21.5));
  OwnedAny v(ArrayOf({Ref(t.v), Ref(t.v), Temp(-3)}));
  std::string text = ToJson(v.v);
  EXPECT_EQ(text,
            R"({"root_index":2,"nodes":[{"type":"test.json.Temp","data":{"celsius":21.5,"unit":"C"}},{"type":"test.json.Temp","data":{"celsius":-3.0,"unit":"C"}},{"type":"ffi.Array","data":[0,0,1]}]})");
  OwnedAny back(FromJson(text));
  const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(back.v.v_obj));
  ASSERT_EQ(items[0].type_index, TempType());
  EXPECT_EQ(items[0].v_obj, items[1].v_obj);  // shared, as written
  EXPECT_EQ(reinterpret_cast<const JTemp*>(items[0].v_obj)->celsius, 21.5);
  EXPECT_EQ(reinterpret_cast<const JTemp*>(items[2].v_obj)->celsius, -3.0);
}

TEST_F(Serialization, TypeHookErrorsReachTheCaller) {
  OwnedAny hot(Temp(999));
  EXPECT_EQ(WriteError(hot.v), "ValueError: too hot to write");
  OwnedAny self(Temp(-1));
  EXPECT_EQ(WriteError(self.v),
            "TypeError: the data a `__data_to_json__` hook returns must be JSON data: a value of type "
            "`test.json.Temp` is not JSON-able");
  TempType();
  EXPECT_EQ(ReadError(R"({"root_index":0,"nodes":[{"type":"test.json.Temp","data":[1]}]})"),
            "TypeError: a Temp's data must be a Map");
  EXPECT_EQ(ReadError(R"({"root_index":0,"nodes":[{"type":"test.json.Temp","data":{"celsius":0.0}}]})"),
            "TypeError: the `__data_from_json__` hook of `test.json.Temp` returned `int`, not a `test.json.Temp`");
  // An attribute that is not a Function.
  int32_t odd = ffk_type_register("test.json.OddHook", FFK_TYPE_OBJECT);
  ASSERT_GE(odd, 0);
  ffk_any not_fn = I(5);
  ASSERT_EQ(ffk_type_set_attr(odd, FFK_ATTR_DATA_FROM_JSON, &not_fn), 0);
  EXPECT_EQ(ReadError(R"({"root_index":0,"nodes":[{"type":"test.json.OddHook","data":{}}]})"),
            "TypeError: the `__data_from_json__` attribute of `test.json.OddHook` must be a Function, got `int`");
}

// A reflected type whose objects the test allocates itself: reflection did not make them.
struct JHandmade {
  ffk_object header;
  int64_t v;
};

TEST_F(Serialization, ObjectsReflectionDidNotMakeNeedAHook) {
  static int32_t t = Define("test.json.Handmade", sizeof(JHandmade), {Field("v", offsetof(JHandmade, v), "int")});
  ffk_object* o = ffk_object_alloc(t, sizeof(JHandmade), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  ASSERT_NE(o, nullptr);
  OwnedAny h(ffk_any_object_steal(o));
  EXPECT_EQ(WriteError(h.v),
            "TypeError: cannot serialize `test.json.Handmade`: its objects are not made by reflection and its type "
            "has no `__data_to_json__` hook");
  // One made by reflection writes field by field.
  OwnedAny made(Create("test.json.Handmade", {I(4)}));
  EXPECT_EQ(ToJson(made.v), R"({"root_index":0,"nodes":[{"type":"test.json.Handmade","data":{"v":4}}]})");
}

// ---- Allocation failures ------------------------------------------------------------------

TEST_F(Serialization, AllocationFailuresLeaveNothingBehind) {
  RecordType();
  OwnedAny v(ArrayOf({Derived(3, MapOf({{S("key longer than seven"), IntPair(1, 2)}}), ArrayOf({ListOf({I(1)})}), "t"),
                      DictOf({{S("b"), Bytes("bytes bytes bytes")}}), Create("test.json.Record", {}), F(0.25),
                      TupleOf({Dtype("int8"), ffk_any_device(ffk_device(FFK_DEVICE_CPU, 0))}), Temp(36.6)}));
  OwnedAny meta(MapOf({{S("meta"), ListOf({S("x"), F(1.5)})}}));
  std::string text = ToJson(v.v, &meta.v);
  int writes = ffk::test::SweepAllocationFailures([&] {
    ffk_any out;
    if (ffk_to_json_graph(&v.v, &meta.v, &out) != 0) return false;
    ffk_any_release(&out);
    return true;
  });
  EXPECT_GT(writes, 5);
  int reads = ffk::test::SweepAllocationFailures([&] {
    ffk_any out, m;
    if (ffk_from_json_graph(text.data(), text.size(), &out, &m) != 0) return false;
    ffk_any_release(&out);
    ffk_any_release(&m);
    return true;
  });
  EXPECT_GT(reads, 5);
}

// ---- Threads ----------------------------------------------------------------------------

TEST_F(Serialization, AListChangedByAnotherThreadIsWrittenAsSomeMomentOfIt) {
  OwnedAny list(ListOf({I(0)}));
  OwnedAny holder(ArrayOf({Ref(list.v), Ref(list.v)}));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int64_t i = 1; !stop.load(); ++i) {
      ffk_any x = I(i);
      EXPECT_EQ(ffk_list_append(L(list.v), &x), 0);
      if (ffk_list_size(L(list.v)) > 64) {
        EXPECT_EQ(ffk_list_erase(L(list.v), 0, 32), 0);
      }
    }
  });
  for (int k = 0; k < 200; ++k) {
    std::string text = ToJson(holder.v);
    OwnedAny back(FromJson(text));
    const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(back.v.v_obj));
    EXPECT_EQ(items[0].v_obj, items[1].v_obj);
  }
  stop = true;
  writer.join();
}

}  // namespace
