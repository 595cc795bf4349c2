// Reflected types (ffikit/reflect.h): defining, introspecting, constructing, field
// access by handle and by name, methods, copies, and every error the header names.
#include <ffikit/ffikit.h>

#include <cstddef>
#include <string>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

class Reflect : public ffk::test::Test {};

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

struct Point {
  ffk_object header;
  int64_t x;
  double y;
  ffk_string* name;
};

int PointNorm1(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const Point* p = reinterpret_cast<const Point*>(args[0].v_obj);
  *result = ffk_any_float(static_cast<double>(p->x) + p->y + args[1].v_float);
  return 0;
}

// Defines test.reflect.Point once: x (int, writable), y (float, default 2.5), name (str,
// read-only, default "pt"), method norm1(self, extra: float) -> float.
int32_t PointType() {
  static int32_t index = [] {
    int32_t i = ffk_type_register("test.reflect.Point", FFK_TYPE_OBJECT);
    ffk_function* f =
        ffk_function_new_typed("norm1", "(self: test.reflect.Point, extra: float) -> float", PointNorm1, nullptr, nullptr);
    ffk_field_def fields[] = {
        {"x", offsetof(Point, x), "int", FFK_FIELD_WRITABLE, ffk_any_none(), "The x coordinate."},
        {"y", offsetof(Point, y), "float", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT, ffk_any_float(2.5), nullptr},
        {"name", offsetof(Point, name), "str", FFK_FIELD_HAS_DEFAULT, ffk_any_raw_str("pt"), "A label."},
    };
    ffk_method_def methods[] = {{"norm1", f, false, "x + y + extra"}};
    ffk_type_def def = {};
    def.key = "test.reflect.Point";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(Point);
    def.fields = fields;
    def.nfields = 3;
    def.methods = methods;
    def.nmethods = 1;
    def.doc = "A point.";
    int32_t got = ffk_type_define(&def);
    ffk_object_release(Obj(f));
    EXPECT_EQ(got, i) << FetchError();
    return got;
  }();
  return index;
}

TEST_F(Reflect, DefineDescribesFieldsAndMethods) {
  int32_t t = PointType();
  ASSERT_GE(t, FFK_TYPE_STATIC_END);
  EXPECT_TRUE(ffk_type_is_reflected(t));
  EXPECT_FALSE(ffk_type_is_reflected(FFK_TYPE_ARRAY));
  EXPECT_EQ(ffk_type_instance_size(t), sizeof(Point));
  EXPECT_STREQ(ffk_type_doc(t), "A point.");
  EXPECT_EQ(ffk_type_constructor(t), nullptr);
  ASSERT_EQ(ffk_type_num_fields(t), 3);
  const ffk_field_info* y = ffk_type_field_at(t, 1);
  ASSERT_NE(y, nullptr);
  EXPECT_STREQ(y->name, "y");
  EXPECT_STREQ(y->type_text, "float");
  EXPECT_EQ(y->storage, FFK_FIELD_STORAGE_FLOAT);
  EXPECT_EQ(y->offset, offsetof(Point, y));
  EXPECT_EQ(y->position, 1);
  EXPECT_EQ(y->owner_index, t);
  EXPECT_EQ(y->default_value.v_float, 2.5);
  const ffk_field_info* found = nullptr;
  EXPECT_EQ(ffk_type_find_field(t, "name", &found), 1);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->storage, FFK_FIELD_STORAGE_OBJECT);
  EXPECT_STREQ(found->doc, "A label.");
  EXPECT_EQ(ffk_type_find_field(t, "z", &found), 0);
  EXPECT_EQ(found, nullptr);
  ASSERT_EQ(ffk_type_num_methods(t), 1);
  const ffk_method_info* m = ffk_type_method_at(t, 0);
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->name, "norm1");
  EXPECT_STREQ(m->doc, "x + y + extra");
  EXPECT_FALSE(m->is_static);
}

TEST_F(Reflect, CreateReadWriteAndCallAMethod) {
  int32_t t = PointType();
  ffk_any args[] = {ffk_any_int(3), ffk_any_raw_str("a longer name")};
  const char* names[] = {"name"};
  ffk_object* p = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 1, names, 1, &p), 0) << FetchError();
  OwnedAny x, y, name;
  ASSERT_EQ(ffk_object_get_field(p, "x", &x.v), 0);
  EXPECT_EQ(x.v.type_index, FFK_TYPE_INT);
  EXPECT_EQ(x.v.v_int, 3);
  ASSERT_EQ(ffk_object_get_field(p, "y", &y.v), 0);
  EXPECT_EQ(y.v.v_float, 2.5);
  ASSERT_EQ(ffk_object_get_field(p, "name", &name.v), 0);
  const char* data;
  size_t size;
  ASSERT_EQ(ffk_any_as_str(&name.v, &data, &size), 0);
  EXPECT_EQ(std::string(data, size), "a longer name");

  ffk_any seven = ffk_any_bool(true);
  ASSERT_EQ(ffk_object_set_field(p, "x", &seven), 0) << FetchError();
  EXPECT_EQ(reinterpret_cast<Point*>(p)->x, 1);  // a bool for an int field is stored as 0/1

  ffk_any extra = ffk_any_int(10);
  OwnedAny r;
  ASSERT_EQ(ffk_object_call_method(p, "norm1", &extra, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_float, 1 + 2.5 + 10);
  ffk_object_release(p);
}

TEST_F(Reflect, ErrorsNameTheFieldAndType) {
  int32_t t = PointType();
  ffk_object* p = nullptr;
  ffk_any bad = ffk_any_raw_str("s");
  EXPECT_EQ(ffk_object_create(t, &bad, 1, nullptr, 0, &p), -1);
  EXPECT_EQ(FetchError(), "TypeError: Mismatched type on field `x` of `test.reflect.Point`: expected `int` but got `str`");
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &p), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.Point.__init__() missing required argument: `x`");
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_object_create(t, &one, 1, nullptr, 0, &p), 0);
  EXPECT_EQ(ffk_object_set_field(p, "name", &bad), -1);
  EXPECT_EQ(FetchError(), "AttributeError: field `name` of `test.reflect.Point` is read-only");
  OwnedAny v;
  EXPECT_EQ(ffk_object_get_field(p, "z", &v.v), -1);
  EXPECT_EQ(FetchError(), "AttributeError: `test.reflect.Point` object has no field `z`");
  EXPECT_EQ(ffk_object_call_method(p, "norm", nullptr, 0, &v.v), -1);
  EXPECT_EQ(FetchError(), "AttributeError: `test.reflect.Point` object has no method `norm`");
  ffk_object_release(p);
}

}  // namespace
