// The reflected testing types (testing/objects.c) match the spec (objects.md section 3)
// and tvm_ffi's testing objects: names, fields, flags, defaults, docs, methods.
#include <ffikit/ffikit.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "testing/testing.h"
#include "tests/support/ffk_test.h"
#include "tests/support/with_testing.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

class TestingObjects : public ffk::test::WithTesting {};

int32_t Index(const char* key) {
  int32_t index = -1;
  EXPECT_EQ(ffk_type_lookup(key, &index), 1) << key;
  return index;
}

const ffk_field_info* Field(int32_t t, const char* name) {
  const ffk_field_info* f = nullptr;
  EXPECT_EQ(ffk_type_find_field(t, name, &f), 1) << name;
  return f;
}

std::string Str(const ffk_any& v) {
  const char* data;
  size_t size;
  if (ffk_any_as_str(&v, &data, &size) != 0) return "<not a str: " + FetchError() + ">";
  return std::string(data, size);
}

TEST_F(TestingObjects, TestObjectBaseFieldsDefaultsAndMethod) {
  int32_t t = Index("testing.TestObjectBase");
  ASSERT_TRUE(ffk_type_is_reflected(t));
  EXPECT_EQ(ffk_type_parent(t), FFK_TYPE_OBJECT);
  ASSERT_EQ(ffk_type_num_fields(t), 3);
  const ffk_field_info* v_i64 = Field(t, "v_i64");
  const ffk_field_info* v_f64 = Field(t, "v_f64");
  const ffk_field_info* v_str = Field(t, "v_str");
  ASSERT_TRUE(v_i64 && v_f64 && v_str);
  EXPECT_EQ(v_i64->position, 0);
  EXPECT_EQ(v_f64->position, 1);
  EXPECT_EQ(v_str->position, 2);
  EXPECT_STREQ(v_i64->doc, "i64 field");
  EXPECT_EQ(v_i64->flags, unsigned(FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT));
  EXPECT_EQ(v_f64->flags, unsigned(FFK_FIELD_HAS_DEFAULT));
  EXPECT_EQ(v_str->flags, unsigned(FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT));
  EXPECT_STREQ(v_str->type_text, "str");

  ffk_object* obj = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &obj), 0) << FetchError();
  OwnedAny a, b, c, r;
  ASSERT_EQ(ffk_field_get(v_i64, obj, &a.v), 0);
  EXPECT_EQ(a.v.v_int, 10);
  ASSERT_EQ(ffk_field_get(v_f64, obj, &b.v), 0);
  EXPECT_EQ(b.v.v_float, 10.0);
  ASSERT_EQ(ffk_field_get(v_str, obj, &c.v), 0);
  EXPECT_EQ(Str(c.v), "hello");
  const ffk_method_info* m = nullptr;
  ASSERT_EQ(ffk_type_find_method(t, "add_i64", &m), 1);
  EXPECT_STREQ(m->doc, "add_i64 method");
  ffk_any x = ffk_any_int(5);
  ASSERT_EQ(ffk_object_call_method(obj, "add_i64", &x, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 15);
  ffk_any f = ffk_any_float(1.0);
  EXPECT_EQ(ffk_field_set(v_f64, obj, &f), -1);
  EXPECT_EQ(FetchError(), "AttributeError: field `v_f64` of `testing.TestObjectBase` is read-only");
  ffk_object_release(obj);
}

TEST_F(TestingObjects, TestObjectDerivedNeedsMapAndArray) {
  int32_t base = Index("testing.TestObjectBase");
  int32_t t = Index("testing.TestObjectDerived");
  EXPECT_EQ(ffk_type_parent(t), base);
  ASSERT_EQ(ffk_type_num_fields(t), 5);
  EXPECT_STREQ(ffk_type_field_at(t, 3)->name, "v_map");
  EXPECT_STREQ(ffk_type_field_at(t, 4)->name, "v_array");
  EXPECT_EQ(ffk_type_field_at(t, 3)->flags, unsigned(FFK_FIELD_WRITABLE));
  EXPECT_EQ(ffk_type_num_methods(t), 1);  // add_i64, inherited
  ffk_object* obj = nullptr;
  EXPECT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &obj), -1);
  EXPECT_EQ(FetchError(), "TypeError: testing.TestObjectDerived.__init__() missing required argument: `v_map`");
  ffk_object* map = Obj(ffk_map_new());
  ffk_object* arr = Obj(ffk_array_new(nullptr, 0));
  ffk_any kw[] = {ffk_any_object(map), ffk_any_object(arr)};
  const char* names[] = {"v_map", "v_array"};
  ASSERT_EQ(ffk_object_create(t, kw, 0, names, 2, &obj), 0) << FetchError();
  OwnedAny got;
  ASSERT_EQ(ffk_object_get_field(obj, "v_map", &got.v), 0);
  EXPECT_EQ(got.v.v_obj, map);  // not copied
  for (ffk_any& v : kw) ffk_any_release(&v);
  ffk_object_release(map);
  ffk_object_release(arr);
  ffk_object_release(obj);
}

TEST_F(TestingObjects, TestIntPairAndUnregisteredObject) {
  int32_t t = Index("testing.TestIntPair");
  EXPECT_STREQ(Field(t, "a")->doc, "Field `a`");
  EXPECT_STREQ(Field(t, "b")->doc, "Field `b`");
  EXPECT_EQ(Field(t, "a")->flags, 0u);
  ffk_any ab[] = {ffk_any_int(3), ffk_any_int(4)};
  ffk_object* p = nullptr;
  ASSERT_EQ(ffk_object_create(t, ab, 2, nullptr, 0, &p), 0) << FetchError();
  OwnedAny r;
  ASSERT_EQ(ffk_object_call_method(p, "sum", nullptr, 0, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 7);
  ffk_object_release(p);

  ffk_function* make = nullptr;
  ASSERT_EQ(ffk_function_get_global("testing.make_unregistered_object", &make), 1);
  OwnedAny u, v1, v2, plus;
  ASSERT_EQ(ffk_function_call(make, nullptr, 0, &u.v), 0) << FetchError();
  ffk_object_release(Obj(make));
  EXPECT_EQ(u.v.type_index, Index("testing.TestUnregisteredObject"));
  EXPECT_EQ(ffk_type_parent(u.v.type_index), Index("testing.TestUnregisteredBaseObject"));
  ASSERT_EQ(ffk_object_get_field(u.v.v_obj, "v1", &v1.v), 0);
  ASSERT_EQ(ffk_object_get_field(u.v.v_obj, "v2", &v2.v), 0);
  EXPECT_EQ(v1.v.v_int, 41);
  EXPECT_EQ(v2.v.v_int, 42);
  ASSERT_EQ(ffk_object_call_method(u.v.v_obj, "get_v1_plus_one", nullptr, 0, &plus.v), 0) << FetchError();
  EXPECT_EQ(plus.v.v_int, 42);
  ASSERT_EQ(ffk_object_call_method(u.v.v_obj, "get_v2_plus_two", nullptr, 0, &plus.v), 0) << FetchError();
  EXPECT_EQ(plus.v.v_int, 44);
}

TEST_F(TestingObjects, CreateObjectTakesNamedValues) {
  ffk_function* create = nullptr;
  ASSERT_EQ(ffk_function_get_global("testing.create_object", &create), 1);
  ffk_any args[] = {ffk_any_raw_str("testing.TestObjectBase"), ffk_any_raw_str("v_i64"), ffk_any_int(7),
                    ffk_any_raw_str("v_str"), ffk_any_raw_str("world")};
  OwnedAny obj, v;
  ASSERT_EQ(ffk_function_call(create, args, 5, &obj.v), 0) << FetchError();
  ASSERT_EQ(ffk_object_get_field(obj.v.v_obj, "v_i64", &v.v), 0);
  EXPECT_EQ(v.v.v_int, 7);
  ffk_any unknown[] = {ffk_any_raw_str("testing.Nope")};
  OwnedAny none;
  EXPECT_EQ(ffk_function_call(create, unknown, 1, &none.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError", {"Cannot find object type index for testing.Nope"}));
  ffk_object_release(Obj(create));
}

TEST_F(TestingObjects, RegisteringAgainKeepsTheTypes) {
  int32_t t = Index("testing.TestObjectBase");
  ASSERT_EQ(ffk_testing_register(), 0) << FetchError();
  EXPECT_EQ(Index("testing.TestObjectBase"), t);
  EXPECT_EQ(ffk_type_num_methods(t), 1);
}

// Calls global `name` with `args` (borrowed); returns the result (owned) or None with the error pending.
ffk_any CallGlobal(const char* name, std::initializer_list<ffk_any> args) {
  ffk_function* f = nullptr;
  EXPECT_EQ(ffk_function_get_global(name, &f), 1) << name;
  ffk_any out = ffk_any_none();
  if (f == nullptr) return out;
  std::vector<ffk_any> v(args);
  ffk_function_call(f, v.data(), (int32_t)v.size(), &out);
  ffk_object_release(Obj(f));
  return out;
}

TEST_F(TestingObjects, ReflectionGlobalsReadWriteAndCallThroughC) {
  OwnedAny pair(CallGlobal("testing.create_object", {ffk_any_raw_str("testing.TestObjectBase"),
                                                     ffk_any_raw_str("v_i64"), ffk_any_int(5)}));
  ASSERT_TRUE(ffk_any_is_object(&pair.v)) << FetchError();
  OwnedAny v(CallGlobal("testing.object_get_field", {pair.v, ffk_any_raw_str("v_i64")}));
  EXPECT_EQ(v.v.v_int, 5) << FetchError();
  OwnedAny none(CallGlobal("testing.object_set_field", {pair.v, ffk_any_raw_str("v_i64"), ffk_any_int(9)}));
  EXPECT_EQ(FetchError(), "");
  OwnedAny sum(CallGlobal("testing.object_call_method", {pair.v, ffk_any_raw_str("add_i64"), ffk_any_int(1)}));
  EXPECT_EQ(sum.v.v_int, 10) << FetchError();
  // Errors are the C API's.
  OwnedAny bad(CallGlobal("testing.object_get_field", {pair.v, ffk_any_raw_str("nope")}));
  EXPECT_TRUE(ffk::test::PendingError("AttributeError", {"has no field `nope`"}));
  OwnedAny ro(CallGlobal("testing.object_set_field", {pair.v, ffk_any_raw_str("v_f64"), ffk_any_float(1.0)}));
  EXPECT_TRUE(ffk::test::PendingError("AttributeError", {"read-only"}));
  OwnedAny nm(CallGlobal("testing.object_call_method", {pair.v, ffk_any_raw_str("nope")}));
  EXPECT_TRUE(ffk::test::PendingError("AttributeError", {"has no method `nope`"}));
  OwnedAny few(CallGlobal("testing.object_call_method", {pair.v}));
  EXPECT_TRUE(ffk::test::PendingError("TypeError", {"got 1 arguments"}));
  OwnedAny notobj(CallGlobal("testing.object_call_method", {ffk_any_int(1), ffk_any_raw_str("x")}));
  EXPECT_TRUE(ffk::test::PendingError("TypeError", {"expected an object"}));
  // A long name goes through the heap copy.
  std::string longname(100, 'z');
  OwnedAny lng(CallGlobal("testing.object_get_field", {pair.v, ffk_any_raw_str(longname.c_str())}));
  EXPECT_TRUE(ffk::test::PendingError("AttributeError", {longname}));
}

TEST_F(TestingObjects, TestCaseInsensitiveComparesThroughItsHooks) {
  int32_t t = Index("testing.TestCaseInsensitive");
  ffk_any hello = ffk_any_raw_str("Hello"), shout = ffk_any_raw_str("HELLO"), other = ffk_any_raw_str("help!");
  ffk_object *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(ffk_object_create(t, &hello, 1, nullptr, 0, &a), 0) << FetchError();
  ASSERT_EQ(ffk_object_create(t, &shout, 1, nullptr, 0, &b), 0) << FetchError();
  ASSERT_EQ(ffk_object_create(t, &other, 1, nullptr, 0, &c), 0) << FetchError();
  OwnedAny va(ffk_any_object_steal(a)), vb(ffk_any_object_steal(b)), vc(ffk_any_object_steal(c));
  EXPECT_EQ(ffk_structural_equal(&va.v, &vb.v), 1);
  EXPECT_EQ(ffk_structural_equal(&va.v, &vc.v), 0);
  uint64_t ha, hb, hc;
  ASSERT_EQ(ffk_structural_hash(&va.v, &ha), 0);
  ASSERT_EQ(ffk_structural_hash(&vb.v, &hb), 0);
  ASSERT_EQ(ffk_structural_hash(&vc.v, &hc), 0);
  EXPECT_EQ(ha, hb);
  EXPECT_NE(ha, hc);
  ffk_object *l = nullptr, *r = nullptr;
  ASSERT_EQ(ffk_structural_first_mismatch(&va.v, &vc.v, &l, &r), 1);
  EXPECT_EQ(ffk_access_path_depth(l), 0);
  ffk_object_release(l);
  ffk_object_release(r);
  // Registering again keeps the hooks (nothing new pinned or replaced).
  OwnedAny before;
  ASSERT_EQ(ffk_type_get_attr(t, FFK_ATTR_S_EQUAL, &before.v), 1);
  ASSERT_EQ(ffk_testing_register(), 0) << FetchError();
  OwnedAny after;
  ASSERT_EQ(ffk_type_get_attr(t, FFK_ATTR_S_EQUAL, &after.v), 1);
  EXPECT_EQ(before.v.v_obj, after.v.v_obj);
}

}  // namespace
