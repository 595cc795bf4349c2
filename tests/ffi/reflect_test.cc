// Reflected types (ffikit/reflect.h): defining, introspecting, constructing, field
// access by handle and by name, methods, copies, and every error the header names.
#include <ffikit/ffikit.h>
#include <ffikit/array.h>
#include <ffikit/list.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"
#include "tests/ffi/reflect_types.h"

namespace {

using namespace reflect_types;  // NOLINT: the shared test types

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

class Reflect : public ffk::test::Test {};

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

// Fields {a = 1, b, c = 3 (kw_only), d = 4, e}: positional values bind to b, e, a, d
// (required first, then defaulted, each in field order); c by name only.
TEST_F(Reflect, PositionalValuesBindRequiredFieldsFirst) {
  struct Five {
    ffk_object header;
    int64_t a, b, c, d, e;
  };
  static int32_t t = [] {
    ffk_field_def fields[] = {
        {"a", offsetof(Five, a), "int", FFK_FIELD_HAS_DEFAULT, ffk_any_int(1), nullptr},
        {"b", offsetof(Five, b), "int", 0, ffk_any_none(), nullptr},
        {"c", offsetof(Five, c), "int", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_KW_ONLY, ffk_any_int(3), nullptr},
        {"d", offsetof(Five, d), "int", FFK_FIELD_HAS_DEFAULT, ffk_any_int(4), nullptr},
        {"e", offsetof(Five, e), "int", 0, ffk_any_none(), nullptr},
    };
    ffk_type_def def = {};
    def.key = "test.reflect.RequiredFirst";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(Five);
    def.fields = fields;
    def.nfields = 5;
    return ffk_type_define(&def);
  }();
  ASSERT_GE(t, 0) << FetchError();
  auto values = [](ffk_object* o) {
    const Five* f = reinterpret_cast<const Five*>(o);
    return std::vector<int64_t>{f->a, f->b, f->c, f->d, f->e};
  };
  ffk_any args[] = {ffk_any_int(10), ffk_any_int(20), ffk_any_int(30), ffk_any_int(40), ffk_any_int(50)};
  ffk_object* o = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 2, nullptr, 0, &o), 0) << FetchError();
  EXPECT_EQ(values(o), (std::vector<int64_t>{1, 10, 3, 4, 20}));
  ffk_object_release(o);
  ASSERT_EQ(ffk_object_create(t, args, 4, nullptr, 0, &o), 0) << FetchError();
  EXPECT_EQ(values(o), (std::vector<int64_t>{30, 10, 3, 40, 20}));
  ffk_object_release(o);
  const char* names[] = {"c"};
  ASSERT_EQ(ffk_object_create(t, args, 2, names, 1, &o), 0) << FetchError();
  EXPECT_EQ(values(o), (std::vector<int64_t>{1, 10, 30, 4, 20}));
  ffk_object_release(o);
  EXPECT_EQ(ffk_object_create(t, args, 1, nullptr, 0, &o), -1);
  EXPECT_TRUE(PendingError("TypeError", {"test.reflect.RequiredFirst.__init__() missing required argument: `e`"}));
  EXPECT_EQ(ffk_object_create(t, args, 5, nullptr, 0, &o), -1);
  EXPECT_TRUE(PendingError("TypeError", {"takes 4 positional arguments but 5 were given"}));
}

// A default of another type than its field's (`b: int = "x"`) defines the type (tvm_ffi
// checks defaults when an object is built); a constructor that needs it fails then.
TEST_F(Reflect, ADefaultOfTheWrongTypeFailsWhenAnObjectNeedsIt) {
  struct IntPair {
    ffk_object header;
    int64_t a, b;
  };
  static int32_t t = [] {
    ffk_field_def fields[] = {
        {"a", offsetof(IntPair, a), "int", 0, ffk_any_none(), nullptr},
        {"b", offsetof(IntPair, b), "int", FFK_FIELD_HAS_DEFAULT, ffk_any_raw_str("not an int"), nullptr},
    };
    ffk_type_def def = {};
    def.key = "test.reflect.UncheckedDefault";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(IntPair);
    def.fields = fields;
    def.nfields = 2;
    return ffk_type_define(&def);
  }();
  ASSERT_GE(t, 0) << FetchError();
  const ffk_field_info* b = ffk_type_field_at(t, 1);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->flags & FFK_FIELD_DEFAULT_UNCHECKED);
  ffk_any args[] = {ffk_any_int(1), ffk_any_int(2)};
  ffk_object* o = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 2, nullptr, 0, &o), 0) << FetchError();  // b given: no default needed
  EXPECT_EQ(reinterpret_cast<IntPair*>(o)->b, 2);
  ffk_object_release(o);
  EXPECT_EQ(ffk_object_create(t, args, 1, nullptr, 0, &o), -1);
  EXPECT_EQ(o, nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"field `b` of `test.reflect.UncheckedDefault`", "expected `int` but got `str`"}));
  EXPECT_EQ(ffk_object_new_reflected(t), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"field `b`"}));
  // A default that converts keeps its converted form and no flag.
  EXPECT_FALSE(ffk_type_field_at(PointType(), 1)->flags & FFK_FIELD_DEFAULT_UNCHECKED);
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
  // A method called through its Function (Python's Class.method(obj)) checks its self here.
  const ffk_method_info* norm1 = ffk_type_method_at(t, 0);
  ASSERT_NE(norm1, nullptr);
  EXPECT_EQ(ffk_method_check_self(norm1, p), 0);
  EXPECT_EQ(ffk_method_check_self(norm1, nullptr), -1);
  EXPECT_EQ(FetchError(), "TypeError: `norm1` of `test.reflect.Point` does not apply to a `None` object");
  auto noop = [](void*, const ffk_any*, int32_t, ffk_any*) { return 0; };
  ffk_object* other = reinterpret_cast<ffk_object*>(ffk_function_new("other", noop, nullptr, nullptr));
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(ffk_method_check_self(norm1, other), -1);
  EXPECT_EQ(FetchError(), "TypeError: `norm1` of `test.reflect.Point` does not apply to a `ffikit.Function` object");
  ffk_object_release(other);
  EXPECT_EQ(ffk_method_check_self(nullptr, p), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_method_check_self: method is NULL");
  ffk_object_release(p);
}


// ---- Storage -------------------------------------------------------------------------------

TEST_F(Reflect, StorageFollowsTheHeaderTable) {
  struct Case {
    const char* text;
    int storage;
  } cases[] = {
      {"int", FFK_FIELD_STORAGE_INT},
      {"float", FFK_FIELD_STORAGE_FLOAT},
      {"bool", FFK_FIELD_STORAGE_BOOL},
      {"str", FFK_FIELD_STORAGE_OBJECT},
      {"bytes", FFK_FIELD_STORAGE_OBJECT},
      {"Object", FFK_FIELD_STORAGE_OBJECT},
      {"Function", FFK_FIELD_STORAGE_OBJECT},
      {"Tensor", FFK_FIELD_STORAGE_OBJECT},
      {"Shape", FFK_FIELD_STORAGE_OBJECT},
      {"Array<int>", FFK_FIELD_STORAGE_OBJECT},
      {"Tuple", FFK_FIELD_STORAGE_OBJECT},
      {"List<str>", FFK_FIELD_STORAGE_OBJECT},
      {"Map<str, int>", FFK_FIELD_STORAGE_OBJECT},
      {"Dict<str, Any>", FFK_FIELD_STORAGE_OBJECT},
      {"Optional<Array<str>>", FFK_FIELD_STORAGE_OBJECT},
      {"Optional<str>", FFK_FIELD_STORAGE_OBJECT},
      {"Optional<bytes>", FFK_FIELD_STORAGE_OBJECT},
      {"Any", FFK_FIELD_STORAGE_ANY},
      {"Device", FFK_FIELD_STORAGE_ANY},
      {"dtype", FFK_FIELD_STORAGE_ANY},
      {"ptr", FFK_FIELD_STORAGE_ANY},
      {"Optional<int>", FFK_FIELD_STORAGE_ANY},
      {"Optional<float>", FFK_FIELD_STORAGE_ANY},
  };
  for (const Case& c : cases) EXPECT_EQ(ffk_field_storage_for(c.text), c.storage) << c.text;
  EXPECT_EQ(ffk_field_storage_for("test.reflect.Point"), PointType() > 0 ? FFK_FIELD_STORAGE_OBJECT : -2);
  EXPECT_EQ(ffk_field_storage_for("flaot"), -1);
  EXPECT_TRUE(PendingError("ValueError", {"unknown type `flaot`"}));
  EXPECT_EQ(ffk_field_storage_for(nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
}

// ---- Bad definitions -------------------------------------------------------------------------

struct Two {
  ffk_object header;
  int64_t a;
  int64_t b;
  bool flag;
};

// A definition of `key` with fields a and b of Two, for tests that spoil one part.
struct TwoDef {
  ffk_field_def fields[2] = {
      {"a", offsetof(Two, a), "int", 0, ffk_any_none(), nullptr},
      {"b", offsetof(Two, b), "int", 0, ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  explicit TwoDef(const char* key) {
    def.key = key;
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(Two);
    def.fields = fields;
    def.nfields = 2;
  }
};

// Defines `d` expecting failure with `kind` and every part in the message.
::testing::AssertionResult DefineFails(const ffk_type_def& d, const std::string& kind,
                                       std::initializer_list<std::string> parts) {
  int32_t got = ffk_type_define(&d);
  if (got != -1) return ::testing::AssertionFailure() << "defined as " << got;
  return PendingError(kind, parts);
}

TEST_F(Reflect, DefineRefusesNullsAndBadParents) {
  EXPECT_EQ(ffk_type_define(nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"definition is NULL"}));
  TwoDef d("test.reflect.bad.nullkey");
  d.def.key = nullptr;
  EXPECT_TRUE(DefineFails(d.def, "ValueError", {"type key is NULL"}));
  TwoDef p("test.reflect.bad.parent");
  p.def.parent_index = FFK_TYPE_INT;
  EXPECT_TRUE(DefineFails(p.def, "ValueError", {"test.reflect.bad.parent", "not a registered object type"}));
  TwoDef s("test.reflect.bad.size");
  s.def.instance_size = sizeof(ffk_object) - 1;
  EXPECT_TRUE(DefineFails(s.def, "ValueError", {"test.reflect.bad.size", "instance size 23"}));
  TwoDef builtin("ffikit.Array");
  EXPECT_TRUE(DefineFails(builtin.def, "ValueError", {"cannot define type `ffikit.Array`: it is a built-in type"}));
  EXPECT_FALSE(ffk_type_is_reflected(FFK_TYPE_ARRAY));
    TwoDef n("test.reflect.bad.counts");
  n.def.fields = nullptr;
  EXPECT_TRUE(DefineFails(n.def, "ValueError", {"test.reflect.bad.counts", "2 fields"}));
}

TEST_F(Reflect, DefineRefusesBadFields) {
  {
    TwoDef d("test.reflect.bad.noname");
    d.fields[1].name = nullptr;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"test.reflect.bad.noname", "field #1 has no name"}));
  }
  {
    TwoDef d("test.reflect.bad.ident");
    d.fields[0].name = "1x";
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field name `1x` is not an identifier"}));
  }
  {
    TwoDef d("test.reflect.bad.repeat");
    d.fields[1].name = "a";
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"test.reflect.bad.repeat", "field `a` is defined twice"}));
  }
  {
    TwoDef d("test.reflect.bad.type");
    d.fields[1].type = "Map<int>";
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"test.reflect.bad.type", "field `b`", "`Map` takes"}));
  }
  {
    TwoDef d("test.reflect.bad.notype");
    d.fields[1].type = nullptr;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `b` has no type"}));
  }
  {
    TwoDef d("test.reflect.bad.header");
    d.fields[0].offset = 16;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `a` at offset 16 overlaps the object header"}));
  }
  {
    TwoDef d("test.reflect.bad.overlap");
    d.fields[1].offset = offsetof(Two, a);
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `b` at offset 24 overlaps field `a` at offset 24"}));
  }
  {
    TwoDef d("test.reflect.bad.end");
    d.fields[1].offset = sizeof(Two);
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `b`", "passes the end of the 48-byte instance"}));
  }
  {
    TwoDef d("test.reflect.bad.align");
    d.fields[1].offset = offsetof(Two, b) + 4;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `b` at offset 36 is misaligned"}));
  }
  {
    TwoDef d("test.reflect.bad.unchecked_flag");
    d.fields[1].flags = FFK_FIELD_HAS_DEFAULT | FFK_FIELD_DEFAULT_UNCHECKED;  // ffk_type_define's to set
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `b` has unknown flags 0x8000"}));
  }
  {
    TwoDef d("test.reflect.bad.flags");
    d.fields[0].flags = 1u << 12;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"field `a` has unknown flags 0x1000"}));
  }
  {
    TwoDef d("test.reflect.bad.factory");
    d.fields[0].flags = FFK_FIELD_HAS_DEFAULT | FFK_FIELD_DEFAULT_FACTORY;
    d.fields[0].default_value = ffk_any_int(3);
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"default factory of field `a` is a `int`, not a Function"}));
  }
  {
    TwoDef d("test.reflect.bad.factoryflag");
    d.fields[0].flags = FFK_FIELD_DEFAULT_FACTORY;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"FFK_FIELD_DEFAULT_FACTORY without FFK_FIELD_HAS_DEFAULT"}));
  }
  // A failed definition leaves at most the registered key, undescribed.
  int32_t index = -1;
  ASSERT_EQ(ffk_type_lookup("test.reflect.bad.end", &index), 1);
  EXPECT_FALSE(ffk_type_is_reflected(index));
  EXPECT_EQ(ffk_type_num_fields(index), 0);
}

TEST_F(Reflect, DefineRefusesBadMethodsAndAnotherDescription) {
  ffk_function* f = NoneFunction();
  {
    TwoDef d("test.reflect.bad.mname");
    ffk_method_def m[] = {{nullptr, f, false, nullptr}};
    d.def.methods = m;
    d.def.nmethods = 1;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"method #0 has no name"}));
  }
  {
    TwoDef d("test.reflect.bad.mfunc");
    ffk_method_def m[] = {{"go", nullptr, false, nullptr}};
    d.def.methods = m;
    d.def.nmethods = 1;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"method #0 has no Function"}));
  }
  {
    TwoDef d("test.reflect.bad.mtwice");
    ffk_method_def m[] = {{"go", f, false, nullptr}, {"go", f, true, nullptr}};
    d.def.methods = m;
    d.def.nmethods = 2;
    EXPECT_TRUE(DefineFails(d.def, "ValueError", {"method `go` is defined twice"}));
  }
  {
    TwoDef d("test.reflect.redefine");
    int32_t index = ffk_type_define(&d.def);
    ASSERT_GT(index, 0) << FetchError();
    EXPECT_EQ(ffk_type_define(&d.def), index);  // the same description again: the same index
    TwoDef other("test.reflect.redefine");
    other.fields[1].flags = FFK_FIELD_WRITABLE;
    EXPECT_TRUE(DefineFails(other.def, "ValueError", {"test.reflect.redefine", "another description"}));
    TwoDef other_parent("test.reflect.redefine");
    other_parent.def.parent_index = PointType();
    other_parent.def.instance_size = sizeof(Point) + 16;
    EXPECT_TRUE(DefineFails(other_parent.def, "ValueError", {"test.reflect.redefine", "already registered"}));
  }
  ffk_object_release(Obj(f));
}

TEST_F(Reflect, APlainRegisteredTypeGainsADescription) {
  int32_t plain = ffk_type_register("test.reflect.plain", FFK_TYPE_OBJECT);
  ASSERT_GT(plain, 0);
  EXPECT_FALSE(ffk_type_is_reflected(plain));
  EXPECT_EQ(ffk_type_num_fields(plain), 0);
  EXPECT_EQ(ffk_type_num_methods(plain), 0);
  const ffk_field_info* f = nullptr;
  EXPECT_EQ(ffk_type_find_field(plain, "a", &f), 0);
  EXPECT_EQ(ffk_type_field_at(plain, 0), nullptr);
  EXPECT_TRUE(PendingError("IndexError", {"field index 0 out of range for `test.reflect.plain`, which has 0 fields"}));
  TwoDef d("test.reflect.plain");
  EXPECT_EQ(ffk_type_define(&d.def), plain);
  EXPECT_TRUE(ffk_type_is_reflected(plain));
  EXPECT_EQ(ffk_type_num_fields(plain), 2);
}

TEST_F(Reflect, LookupsOfUnknownTypesAndNulls) {
  const int32_t unknown = FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC - 1;
  EXPECT_EQ(ffk_type_num_fields(unknown), -1);
  EXPECT_TRUE(PendingError("ValueError", {"not a registered type"}));
  EXPECT_EQ(ffk_type_num_methods(-5), -1);
  EXPECT_TRUE(PendingError("ValueError", {"-5"}));
  EXPECT_EQ(ffk_type_field_at(unknown, 0), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_method_at(unknown, 0), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  const ffk_field_info* f = nullptr;
  const ffk_method_info* m = nullptr;
  EXPECT_EQ(ffk_type_find_field(unknown, "a", &f), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_find_field(PointType(), nullptr, &f), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name is NULL"}));
  EXPECT_EQ(ffk_type_find_field(PointType(), "x", nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"out is NULL"}));
  EXPECT_EQ(ffk_type_find_method(unknown, "a", &m), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_find_method(PointType(), nullptr, &m), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_field_at(PointType(), 3), nullptr);
  EXPECT_TRUE(PendingError("IndexError", {"field index 3 out of range for `test.reflect.Point`, which has 3 fields"}));
  EXPECT_EQ(ffk_type_method_at(PointType(), -1), nullptr);
  EXPECT_TRUE(PendingError("IndexError", {"method index -1"}));
  EXPECT_EQ(ffk_type_instance_size(FFK_TYPE_ARRAY), 0u);
  EXPECT_EQ(ffk_type_doc(unknown), nullptr);
  EXPECT_EQ(ffk_type_constructor(unknown), nullptr);
  EXPECT_FALSE(ffk_type_is_reflected(-1));
}

// ---- Inheritance and methods -------------------------------------------------------------

TEST_F(Reflect, DerivedTypesListParentFieldsFirstAndOverrideMethodsInPlace) {
  int32_t t = Point3Type();
  EXPECT_EQ(ffk_type_parent(t), PointType());
  ASSERT_EQ(ffk_type_num_fields(t), 4);
  const char* names[] = {"x", "y", "name", "z"};
  for (int32_t i = 0; i < 4; ++i) {
    const ffk_field_info* f = ffk_type_field_at(t, i);
    ASSERT_NE(f, nullptr);
    EXPECT_STREQ(f->name, names[i]);
    EXPECT_EQ(f->position, i);
    EXPECT_EQ(f->owner_index, i < 3 ? PointType() : t);
  }
  // The parent's field handles are the derived type's too.
  EXPECT_EQ(ffk_type_field_at(t, 0), ffk_type_field_at(PointType(), 0));
  ASSERT_EQ(ffk_type_num_methods(t), 2);
  const ffk_method_info* m0 = ffk_type_method_at(t, 0);
  const ffk_method_info* m1 = ffk_type_method_at(t, 1);
  ASSERT_TRUE(m0 && m1);
  EXPECT_STREQ(m0->name, "norm1");  // the override, in its parent's place
  EXPECT_EQ(m0->owner_index, t);
  EXPECT_STREQ(m0->doc, "overridden");
  EXPECT_STREQ(m1->name, "origin");
  EXPECT_TRUE(m1->is_static);
  const ffk_method_info* found = nullptr;
  ASSERT_EQ(ffk_type_find_method(PointType(), "norm1", &found), 1);
  EXPECT_EQ(found->owner_index, PointType());
  EXPECT_EQ(ffk_type_find_method(PointType(), "origin", &found), 0);

  ffk_any args[] = {ffk_any_int(1), ffk_any_int(5)};
  const char* kw[] = {"z"};
  ffk_object* p = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 1, kw, 1, &p), 0) << FetchError();
  EXPECT_EQ(reinterpret_cast<Point3*>(p)->z, 5);
  EXPECT_TRUE(ffk_object_is_instance(p, PointType()));
  OwnedAny r;
  ASSERT_EQ(ffk_object_call_method(p, "norm1", nullptr, 0, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 33);
  ASSERT_EQ(ffk_object_call_method(p, "origin", nullptr, 0, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 0);
  // Parent field handles work on the derived object; derived ones refuse the parent's.
  OwnedAny x;
  ASSERT_EQ(ffk_field_get(ffk_type_field_at(PointType(), 0), p, &x.v), 0);
  EXPECT_EQ(x.v.v_int, 1);
  ffk_object* base = nullptr;
  ASSERT_EQ(ffk_object_create(PointType(), args, 1, nullptr, 0, &base), 0);
  EXPECT_EQ(ffk_field_get(ffk_type_field_at(t, 3), base, &x.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"field `z` belongs to `test.reflect.Point3`, not to a `test.reflect.Point`"}));
  EXPECT_EQ(x.v.type_index, FFK_TYPE_NONE);
  // z is kw-only: a fourth positional value is one too many.
  ffk_object* bad = nullptr;
  ffk_any four[] = {ffk_any_int(1), ffk_any_float(2), ffk_any_raw_str("n"), ffk_any_int(4)};
  EXPECT_EQ(ffk_object_create(t, four, 4, nullptr, 0, &bad), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.Point3.__init__() takes 3 positional arguments but 4 were given");
  ffk_object_release(base);
  ffk_object_release(p);
}

TEST_F(Reflect, AddMethodAddsAndReplacesAndSubtypesSeeIt) {
  TwoDef parent_def("test.reflect.addm.Parent");
  int32_t parent = ffk_type_define(&parent_def.def);
  ASSERT_GT(parent, 0) << FetchError();
  TwoDef child_def("test.reflect.addm.Child");
  child_def.def.parent_index = parent;
  child_def.def.nfields = 0;
  int32_t child = ffk_type_define(&child_def.def);
  ASSERT_GT(child, 0) << FetchError();
  EXPECT_EQ(ffk_type_num_methods(child), 0);

  ffk_function* one = IntFunction(1);
  ffk_function* two = IntFunction(2);
  ffk_function* three = IntFunction(3);
  ffk_method_def m1 = {"value", one, false, "first"};
  ASSERT_EQ(ffk_type_add_method(parent, &m1), 0) << FetchError();
  ASSERT_EQ(ffk_type_num_methods(child), 1);
  const ffk_method_info* old = nullptr;
  ASSERT_EQ(ffk_type_find_method(child, "value", &old), 1);
  EXPECT_STREQ(old->doc, "first");

  ffk_method_def m2 = {"value", two, false, "second"};
  ASSERT_EQ(ffk_type_add_method(parent, &m2), 0) << FetchError();
  EXPECT_STREQ(old->doc, "first");  // an earlier lookup stays valid
  EXPECT_EQ(old->function, one);
  ASSERT_EQ(ffk_type_num_methods(parent), 1);
  EXPECT_STREQ(ffk_type_method_at(child, 0)->doc, "second");

  ffk_method_def m3 = {"value", three, false, nullptr};
  ASSERT_EQ(ffk_type_add_method(child, &m3), 0) << FetchError();
  const ffk_method_info* found = nullptr;
  ASSERT_EQ(ffk_type_find_method(child, "value", &found), 1);
  EXPECT_EQ(found->function, three);
  ASSERT_EQ(ffk_type_find_method(parent, "value", &found), 1);
  EXPECT_EQ(found->function, two);

  ffk_object* obj = nullptr;
  ffk_any ab[] = {ffk_any_int(1), ffk_any_int(2)};
  ASSERT_EQ(ffk_object_create(child, ab, 2, nullptr, 0, &obj), 0) << FetchError();
  OwnedAny r;
  ASSERT_EQ(ffk_object_call_method(obj, "value", nullptr, 0, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 3);
  ffk_object_release(obj);

  ffk_method_def nameless = {nullptr, one, false, nullptr};
  EXPECT_EQ(ffk_type_add_method(parent, &nameless), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name"}));
  ffk_method_def fnless = {"f", nullptr, false, nullptr};
  EXPECT_EQ(ffk_type_add_method(parent, &fnless), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Function"}));
  EXPECT_EQ(ffk_type_add_method(parent, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_add_method(FFK_TYPE_ARRAY, &m1), -1);
  EXPECT_TRUE(PendingError("ValueError", {"method `value`", "not a reflected type"}));
  for (ffk_function* f : {one, two, three}) ffk_object_release(Obj(f));
}

// ---- Construction --------------------------------------------------------------------------

TEST_F(Reflect, DefaultsFactoriesInitOffAndKwOnly) {
  int32_t t = BagType();
  ffk_object* a = nullptr;
  ffk_object* b = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &a), 0) << FetchError();
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &b), 0) << FetchError();
  const Bag* ba = reinterpret_cast<const Bag*>(a);
  const Bag* bb = reinterpret_cast<const Bag*>(b);
  ASSERT_NE(ba->items, nullptr);
  EXPECT_NE(ba->items, bb->items);  // a fresh List per object
  EXPECT_EQ(ffk_object_use_count(ba->items), 1u);
  EXPECT_EQ(ba->hidden, 7);
  EXPECT_EQ(ba->counter, 0);
  EXPECT_EQ(ba->device.type_index, FFK_TYPE_DEVICE);  // "cpu:0" converted once, at definition
  EXPECT_EQ(ba->device.v_device.device_type, kDLCPU);
  EXPECT_EQ(ba->label, nullptr);
  EXPECT_FALSE(ba->on);
  EXPECT_EQ(ba->anything.type_index, FFK_TYPE_NONE);
  ASSERT_NE(ba->ints, nullptr);

  // The only positional parameters: items, label, on, anything, ints.
  ffk_any pos[] = {ffk_any_none(), ffk_any_raw_str("a label longer than seven"), ffk_any_int(1)};
  ffk_object* c = nullptr;
  EXPECT_EQ(ffk_object_create(t, pos, 1, nullptr, 0, &c), -1);
  EXPECT_EQ(FetchError(), "TypeError: Mismatched type on field `items` of `test.reflect.Bag`: expected `List<int>` but got `None`");
  ffk_list* l = ffk_list_new();
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_list_append(l, &one), 0);
  pos[0] = ffk_any_object(Obj(l));
  const char* dev[] = {"device"};
  ffk_any with_dev[] = {pos[0], pos[1], pos[2], ffk_any_raw_str("cuda:1")};
  ASSERT_EQ(ffk_object_create(t, with_dev, 3, dev, 1, &c), 0) << FetchError();
  const Bag* bc = reinterpret_cast<const Bag*>(c);
  EXPECT_EQ(bc->items, Obj(l));
  EXPECT_EQ(bc->device.v_device.device_type, kDLCUDA);
  EXPECT_EQ(bc->device.v_device.device_id, 1);
  EXPECT_TRUE(bc->on);  // 1 for a bool field
  OwnedAny label;
  ASSERT_EQ(ffk_object_get_field(c, "label", &label.v), 0);
  EXPECT_EQ(label.v.type_index, FFK_TYPE_STRING);

  ffk_object* d = nullptr;
  ffk_any six[] = {pos[0], ffk_any_none(), ffk_any_bool(true), ffk_any_none(), pos[0], ffk_any_int(9)};
  EXPECT_EQ(ffk_object_create(t, six, 6, nullptr, 0, &d), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.Bag.__init__() takes 5 positional arguments but 6 were given");
  const char* hidden[] = {"hidden"};
  EXPECT_EQ(ffk_object_create(t, six, 0, hidden, 1, &d), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.Bag.__init__() got an unexpected keyword argument `hidden`");
  const char* items[] = {"items"};
  EXPECT_EQ(ffk_object_create(t, six, 1, items, 1, &d), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.Bag.__init__() got multiple values for argument `items`");
  // A List of ints for an Array<int> field is stored as an Array<int>.
  const char* ints[] = {"ints"};
  ASSERT_EQ(ffk_object_create(t, pos, 0, ints, 1, &d), 0) << FetchError();
  EXPECT_EQ(reinterpret_cast<const Bag*>(d)->ints->type_index, FFK_TYPE_ARRAY);
  ffk_any bad_dev = ffk_any_raw_str("cuda:x");
  EXPECT_EQ(ffk_object_set_field(d, "device", &bad_dev), -1);
  EXPECT_TRUE(PendingError("ValueError", {"field `device` of `test.reflect.Bag`"}));
  EXPECT_EQ(d->type_index, t);

  ffk_any_release(&pos[0]);
  ffk_object_release(Obj(l));
  for (ffk_object* o : {a, b, c, d}) ffk_object_release(o);
}

TEST_F(Reflect, NewReflectedFillsDefaultsAndRefusesOtherTypes) {
  ffk_object* p = ffk_object_new_reflected(PointType());
  ASSERT_NE(p, nullptr) << FetchError();
  const Point* pt = reinterpret_cast<const Point*>(p);
  EXPECT_EQ(pt->x, 0);
  EXPECT_EQ(pt->y, 2.5);
  ASSERT_NE(pt->name, nullptr);
  EXPECT_EQ(std::string(pt->name->data, pt->name->size), "pt");
  ffk_object_release(p);
  EXPECT_EQ(ffk_object_new_reflected(FFK_TYPE_ARRAY), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: `ffikit.Array` is not a reflected type (it has no fields or constructor)");
  EXPECT_EQ(ffk_type_check_reflected(PointType()), 0);
  EXPECT_EQ(ffk_type_check_reflected(FFK_TYPE_ARRAY), -1);
  EXPECT_EQ(FetchError(), "ValueError: `ffikit.Array` is not a reflected type (it has no fields or constructor)");
  EXPECT_EQ(ffk_type_check_reflected(99999), -1);
  EXPECT_EQ(FetchError(), "ValueError: type index 99999 is not a registered type");
  ffk_object* out = reinterpret_cast<ffk_object*>(1);
  EXPECT_EQ(ffk_object_create(FFK_TYPE_ARRAY, nullptr, 0, nullptr, 0, &out), -1);
  EXPECT_EQ(out, nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"not a reflected type"}));
  EXPECT_EQ(ffk_object_create(PointType(), nullptr, 0, nullptr, 0, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"out is NULL"}));
  EXPECT_EQ(ffk_object_create(PointType(), nullptr, 2, nullptr, 0, &out), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_any one = ffk_any_int(1);
  const char* null_name[] = {nullptr};
  EXPECT_EQ(ffk_object_create(PointType(), &one, 0, null_name, 1, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name of value #0 is NULL"}));
}

// A supplied constructor: Pair(total) makes a with total / 2 and b with the rest.
struct Pair {
  ffk_object header;
  int64_t a;
  int64_t b;
};

int32_t g_pair_type = -1;

int PairInit(void*, const ffk_any* args, int32_t, ffk_any* result) {
  ffk_object* obj = ffk_object_new_reflected(g_pair_type);
  if (obj == nullptr) return -1;
  ffk_any a = ffk_any_int(args[0].v_int / 2), b = ffk_any_int(args[0].v_int - args[0].v_int / 2);
  if (ffk_field_init(ffk_type_field_at(g_pair_type, 0), obj, &a) != 0 ||
      ffk_field_init(ffk_type_field_at(g_pair_type, 1), obj, &b) != 0) {
    ffk_object_release(obj);
    return -1;
  }
  *result = ffk_any_object_steal(obj);
  return 0;
}

int NotAPair(void*, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_int(5);
  return 0;
}

TEST_F(Reflect, ASuppliedConstructorIsCalledWithTheCallersValues) {
  g_pair_type = ffk_type_register("test.reflect.Pair", FFK_TYPE_OBJECT);
  ffk_function* init = ffk_function_new_typed("Pair.__init__", "(total: int) -> test.reflect.Pair", PairInit, nullptr, nullptr);
  ASSERT_NE(init, nullptr) << FetchError();
  ffk_field_def fields[] = {
      {"a", offsetof(Pair, a), "int", 0, ffk_any_none(), nullptr},
      {"b", offsetof(Pair, b), "int", 0, ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "test.reflect.Pair";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(Pair);
  def.fields = fields;
  def.nfields = 2;
  def.constructor = init;
  ASSERT_EQ(ffk_type_define(&def), g_pair_type) << FetchError();
  EXPECT_EQ(ffk_type_constructor(g_pair_type), init);
  ffk_object_release(Obj(init));

  ffk_any seven = ffk_any_int(7);
  const char* total[] = {"total"};
  ffk_object* p = nullptr;
  ASSERT_EQ(ffk_object_create(g_pair_type, &seven, 0, total, 1, &p), 0) << FetchError();
  EXPECT_EQ(reinterpret_cast<Pair*>(p)->a, 3);
  EXPECT_EQ(reinterpret_cast<Pair*>(p)->b, 4);
  ffk_any one = ffk_any_int(1);
  EXPECT_EQ(ffk_field_set(ffk_type_field_at(g_pair_type, 0), p, &one), -1);
  EXPECT_EQ(FetchError(), "AttributeError: field `a` of `test.reflect.Pair` is read-only");
  ffk_object_release(p);

  ffk_function* wrong = ffk_function_new("wrong", NotAPair, nullptr, nullptr);
  TwoDef bad("test.reflect.WrongInit");
  bad.def.constructor = wrong;
  int32_t t = ffk_type_define(&bad.def);
  ASSERT_GT(t, 0) << FetchError();
  ffk_object_release(Obj(wrong));
  EXPECT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &p), -1);
  EXPECT_EQ(FetchError(), "TypeError: test.reflect.WrongInit.__init__() returned a `int`, not a `test.reflect.WrongInit`");
  EXPECT_EQ(p, nullptr);
}

// ---- Fields by handle ----------------------------------------------------------------------

TEST_F(Reflect, FieldAccessRefusesNullsAndStrangers) {
  const ffk_field_info* x = ffk_type_field_at(PointType(), 0);
  ffk_any one = ffk_any_int(1);
  OwnedAny v;
  v.v = ffk_any_int(99);
  EXPECT_EQ(ffk_field_get(x, nullptr, &v.v), -1);
  EXPECT_EQ(v.v.type_index, FFK_TYPE_NONE);
  EXPECT_TRUE(PendingError("TypeError", {"field `x`", "None"}));
  ffk_array* arr = ffk_array_new(nullptr, 0);
  EXPECT_EQ(ffk_field_get(x, Obj(arr), &v.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"field `x` belongs to `test.reflect.Point`, not to a `Array`"}));
  EXPECT_EQ(ffk_field_set(x, Obj(arr), &one), -1);
  EXPECT_TRUE(PendingError("TypeError", {"not to a `Array`"}));
  EXPECT_EQ(ffk_field_set(nullptr, Obj(arr), &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"field is NULL"}));
  EXPECT_EQ(ffk_field_set(x, nullptr, &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"object is NULL"}));
  EXPECT_EQ(ffk_field_init(x, Obj(arr), nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"value is NULL"}));
  EXPECT_EQ(ffk_object_get_field(Obj(arr), "x", &v.v), -1);
  EXPECT_EQ(FetchError(), "AttributeError: `Array` object has no field `x`");
  EXPECT_EQ(ffk_object_get_field(nullptr, "x", &v.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_object_set_field(Obj(arr), nullptr, &one), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_object_call_method(Obj(arr), "size", nullptr, 0, &v.v), -1);
  EXPECT_EQ(FetchError(), "AttributeError: `Array` object has no method `size`");
  EXPECT_EQ(ffk_object_call_method(nullptr, "size", nullptr, 0, &v.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_object_call_method(Obj(arr), "size", nullptr, 0, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_object_release(Obj(arr));
}

TEST_F(Reflect, WritesReplaceAndReleaseTheOldValue) {
  int32_t t = BagType();
  ffk_object* bag = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &bag), 0) << FetchError();
  ffk_array* a1 = ffk_array_new(nullptr, 0);
  ffk_any v = ffk_any_object(Obj(a1));
  ASSERT_EQ(ffk_object_set_field(bag, "anything", &v), 0) << FetchError();
  EXPECT_EQ(ffk_object_use_count(Obj(a1)), 3u);  // ours, v's, the field's
  ffk_any s = ffk_any_raw_str("a string longer than 7 bytes");
  ASSERT_EQ(ffk_object_set_field(bag, "anything", &s), 0) << FetchError();
  EXPECT_EQ(ffk_object_use_count(Obj(a1)), 2u);
  OwnedAny got;
  ASSERT_EQ(ffk_object_get_field(bag, "anything", &got.v), 0);
  EXPECT_EQ(got.v.type_index, FFK_TYPE_STRING);  // the raw view was made an owned str
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_object_set_field(bag, "label", &s), 0);
  ASSERT_EQ(ffk_object_set_field(bag, "label", &none), 0);
  EXPECT_EQ(reinterpret_cast<Bag*>(bag)->label, nullptr);
  ffk_any two = ffk_any_int(2);
  EXPECT_EQ(ffk_object_set_field(bag, "label", &two), -1);
  EXPECT_EQ(FetchError(), "TypeError: Mismatched type on field `label` of `test.reflect.Bag`: expected `Optional<str>` but got `int`");
  ASSERT_EQ(ffk_object_set_field(bag, "counter", &two), 0);  // writable though init-off
  EXPECT_EQ(reinterpret_cast<Bag*>(bag)->counter, 2);
  ffk_any_release(&v);
  ffk_object_release(Obj(a1));
  ffk_object_release(bag);
}

// ---- Copies, finalizers, the type walk ------------------------------------------------------

TEST_F(Reflect, ShallowCopySharesFieldValues) {
  int32_t t = BagType();
  ffk_object* bag = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &bag), 0) << FetchError();
  ffk_any two = ffk_any_int(2);
  ASSERT_EQ(ffk_object_set_field(bag, "counter", &two), 0);
  ffk_object* copy = ffk_object_shallow_copy(bag);
  ASSERT_NE(copy, nullptr) << FetchError();
  EXPECT_NE(copy, bag);
  EXPECT_EQ(copy->type_index, t);
  const Bag* b = reinterpret_cast<const Bag*>(bag);
  const Bag* c = reinterpret_cast<const Bag*>(copy);
  EXPECT_EQ(c->items, b->items);  // shared, not copied
  EXPECT_EQ(ffk_object_use_count(b->items), 2u);
  EXPECT_EQ(c->counter, 2);
  EXPECT_EQ(c->hidden, 7);
  ffk_object_release(bag);
  EXPECT_EQ(ffk_object_use_count(c->items), 1u);
  ffk_object_release(copy);

  ffk_array* arr = ffk_array_new(nullptr, 0);
  EXPECT_EQ(ffk_object_shallow_copy(Obj(arr)), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"cannot shallow-copy a `Array`"}));
  ffk_object_release(Obj(arr));
  EXPECT_EQ(ffk_object_shallow_copy(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
}

std::vector<std::string> g_finalized;

void FinalizeBase(ffk_object* self) {
  // The fields are still there when a finalize hook runs.
  OwnedAny a;
  EXPECT_EQ(ffk_object_get_field(self, "a", &a.v), 0);
  g_finalized.push_back("base a=" + std::to_string(a.v.v_int));
}
void FinalizeDerived(ffk_object*) { g_finalized.push_back("derived"); }

TEST_F(Reflect, FinalizeHooksRunMostDerivedFirst) {
  TwoDef base("test.reflect.fin.Base");
  base.def.finalize = FinalizeBase;
  int32_t b = ffk_type_define(&base.def);
  ASSERT_GT(b, 0) << FetchError();
  TwoDef derived("test.reflect.fin.Derived");
  derived.def.parent_index = b;
  derived.def.nfields = 0;
  derived.def.finalize = FinalizeDerived;
  int32_t d = ffk_type_define(&derived.def);
  ASSERT_GT(d, 0) << FetchError();
  ffk_any ab[] = {ffk_any_int(5), ffk_any_int(6)};
  ffk_object* obj = nullptr;
  ASSERT_EQ(ffk_object_create(d, ab, 2, nullptr, 0, &obj), 0);
  g_finalized.clear();
  ffk_object_release(obj);
  EXPECT_EQ(g_finalized, (std::vector<std::string>{"derived", "base a=5"}));
  // A failed construction runs no hook.
  g_finalized.clear();
  ffk_any bad[] = {ffk_any_int(5), ffk_any_raw_str("x")};
  EXPECT_EQ(ffk_object_create(d, bad, 2, nullptr, 0, &obj), -1);
  EXPECT_TRUE(PendingError("TypeError", {"field `b`"}));
  EXPECT_TRUE(g_finalized.empty());
}

int CountTypes(int32_t index, const char* key, void* ctx) {
  auto* seen = static_cast<std::vector<std::pair<int32_t, std::string>>*>(ctx);
  seen->emplace_back(index, key);
  return 0;
}

int StopAtArray(int32_t index, const char*, void*) { return index == FFK_TYPE_ARRAY ? 42 : 0; }

TEST_F(Reflect, ForEachWalksEveryTypeInIndexOrder) {
  int32_t point = PointType();
  std::vector<std::pair<int32_t, std::string>> seen;
  ASSERT_EQ(ffk_type_for_each(CountTypes, &seen), 0);
  EXPECT_EQ(static_cast<int32_t>(seen.size()), ffk_type_count());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1].first, seen[i].first);
  bool found = false;
  for (auto& s : seen) found = found || (s.first == point && s.second == "test.reflect.Point");
  EXPECT_TRUE(found);
  EXPECT_EQ(seen[0], (std::pair<int32_t, std::string>{FFK_TYPE_NONE, "None"}));
  EXPECT_EQ(ffk_type_for_each(StopAtArray, nullptr), 42);
}


// ---- Allocation failures -------------------------------------------------------------------

TEST_F(Reflect, EveryAllocationFailureInDefineAndCreateIsAMemoryErrorAndLeaksNothing) {
  ffk_function* factory = ffk_function_new("make_list", MakeList, nullptr, nullptr);
  ffk_function* method = NoneFunction("m");
  SweepDefinition("test.reflect.sweep.Swept", factory, method);
  int32_t t = -1;
  ASSERT_EQ(ffk_type_lookup("test.reflect.sweep.Swept", &t), 1);
  ffk_object_release(Obj(factory));
  ffk_object_release(Obj(method));

  // Positionally: the required `any`, then `name` and `items` (required fields bind first).
  ffk_any values[] = {ffk_any_raw_str("another long string value"), ffk_any_raw_str("a name longer than seven bytes"),
                      ffk_any_none(), ffk_any_int(3)};
  const char* names[] = {"n"};
  ffk::test::SweepAllocationFailures([&] {
    ffk_object* obj = nullptr;
    if (ffk_object_create(t, values, 3, names, 1, &obj) != 0) {
      EXPECT_EQ(obj, nullptr);
      return false;
    }
    ffk_object_release(obj);
    return true;
  });
  ffk::test::SweepAllocationFailures([&] {
    ffk_object* obj = ffk_object_new_reflected(t);
    ffk_object_release(obj);
    return obj != nullptr;
  });
  ffk::test::SweepAllocationFailures([&] {
    ffk_object* obj = nullptr;
    const char* any_name[] = {"any"};
    if (ffk_object_create(t, &values[0], 0, any_name, 1, &obj) != 0) return false;
    ffk_object_release(obj);
    return true;
  });

  ffk_object* obj = nullptr;
  ASSERT_EQ(ffk_object_create(t, values, 3, nullptr, 0, &obj), 0) << FetchError();
  const ffk_field_info* name = ffk_type_field_at(t, 0);
  ffk_object* before = reinterpret_cast<Sweep*>(obj)->name;
  ffk::test::SweepAllocationFailures([&] { return ffk_field_set(name, obj, &values[0]) == 0; },
                                     [&] { EXPECT_EQ(reinterpret_cast<Sweep*>(obj)->name, before); });
  ffk::test::SweepAllocationFailures([&] {
    ffk_object* copy = ffk_object_shallow_copy(obj);
    ffk_object_release(copy);
    return copy != nullptr;
  });
  std::vector<ffk_any> many(12, ffk_any_int(1));
  ffk::test::SweepAllocationFailures([&] {
    OwnedAny r;
    return ffk_object_call_method(obj, "m", many.data(), 12, &r.v) == 0;
  });
  ffk_object_release(obj);

  ffk_function* extra = NoneFunction("extra");
  ffk_method_def m = {"extra", extra, false, "added"};
  ffk::test::SweepAllocationFailures([&] { return ffk_type_add_method(t, &m) == 0; });
  ffk::test::SweepAllocationFailures([&] { return ffk_type_num_methods(t) == 2; });
  ffk_object_release(Obj(extra));
}


TEST_F(Reflect, AFunctionSharedByTwoDescriptionsIsPinnedOnce) {
  // Pinned objects stop counting as live once each; TearDown checks the total is back to 0.
  ffk_function* shared = NoneFunction("shared");
  ffk_method_def m[] = {{"shared", shared, false, nullptr}};
  TwoDef a("test.reflect.pin.A");
  a.def.methods = m;
  a.def.nmethods = 1;
  TwoDef b("test.reflect.pin.B");
  b.def.methods = m;
  b.def.nmethods = 1;
  int32_t ta = ffk_type_define(&a.def);
  ASSERT_GT(ta, 0) << FetchError();
  ASSERT_GT(ffk_type_define(&b.def), 0) << FetchError();
  ASSERT_EQ(ffk_type_add_method(ta, &m[0]), 0);
  ASSERT_EQ(ffk_type_add_method(ta, &m[0]), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(shared)), 5u);
  ffk_object_release(Obj(shared));
}

TEST_F(Reflect, APlainTypeBetweenTwoReflectedOnesPassesTheFieldsOn) {
  TwoDef top("test.reflect.chain.Top");
  int32_t t = ffk_type_define(&top.def);
  ASSERT_GT(t, 0) << FetchError();
  int32_t middle = ffk_type_register("test.reflect.chain.Middle", t);
  ASSERT_GT(middle, 0);
  TwoDef bottom("test.reflect.chain.Bottom");
  bottom.def.parent_index = middle;
  bottom.fields[0] = {"flag", sizeof(Two), "bool", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr};
  bottom.def.nfields = 1;
  bottom.def.instance_size = sizeof(Two) + 8;
  int32_t b = ffk_type_define(&bottom.def);
  ASSERT_GT(b, 0) << FetchError();
  ASSERT_EQ(ffk_type_num_fields(b), 3);
  EXPECT_STREQ(ffk_type_field_at(b, 2)->name, "flag");
  EXPECT_EQ(ffk_type_field_at(b, 0)->owner_index, t);
  // Describing the middle type now would change Bottom's fields under it: refused.
  TwoDef late("test.reflect.chain.Middle");
  late.def.parent_index = t;
  late.def.nfields = 0;
  EXPECT_TRUE(DefineFails(late.def, "ValueError", {"test.reflect.chain.Middle", "`test.reflect.chain.Bottom` already derives from it"}));
  EXPECT_FALSE(ffk_type_is_reflected(middle));
  // The bottom type's own field overlapping its ancestor's is refused.
  TwoDef overlap("test.reflect.chain.Overlap");
  overlap.def.parent_index = t;
  overlap.fields[0] = {"c", offsetof(Two, b), "int", 0, ffk_any_none(), nullptr};
  overlap.def.nfields = 1;
  EXPECT_TRUE(DefineFails(overlap.def, "ValueError", {"field `c` at offset 32 lies inside its parent's 48-byte instance"}));
  TwoDef repeat("test.reflect.chain.Repeat");
  repeat.def.parent_index = t;
  repeat.fields[0] = {"a", sizeof(Two), "bool", 0, ffk_any_none(), nullptr};
  repeat.def.instance_size = sizeof(Two) + 8;
  repeat.def.nfields = 1;
  EXPECT_TRUE(DefineFails(repeat.def, "ValueError", {"field `a` is defined twice (its parent has it)"}));
  TwoDef small("test.reflect.chain.Small");
  small.def.parent_index = t;
  small.def.nfields = 0;
  small.def.instance_size = sizeof(ffk_object) + 8;
  EXPECT_TRUE(DefineFails(small.def, "ValueError", {"instance size 32 is smaller than test.reflect.chain.Top's 48"}));
}

struct Node {
  ffk_object header;
  int64_t value;
  ffk_object* next;  // Optional<test.reflect.Node>
};

TEST_F(Reflect, AFieldMayNameItsOwnType) {
  ffk_field_def fields[] = {
      {"value", offsetof(Node, value), "int", 0, ffk_any_none(), nullptr},
      {"next", offsetof(Node, next), "Optional<test.reflect.Node>", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE,
       ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "test.reflect.Node";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(Node);
  def.fields = fields;
  def.nfields = 2;
  int32_t t = ffk_type_define(&def);
  ASSERT_GT(t, 0) << FetchError();
  EXPECT_STREQ(ffk_type_field_at(t, 1)->type_text, "Optional<test.reflect.Node>");
  ffk_object* head = nullptr;
  for (int64_t i = 0; i < 100; ++i) {
    ffk_any args[] = {ffk_any_int(i), head != nullptr ? ffk_any_object_steal(head) : ffk_any_none()};
    ffk_object* node = nullptr;
    ASSERT_EQ(ffk_object_create(t, args, 2, nullptr, 0, &node), 0) << FetchError();
    ffk_any_release(&args[1]);
    head = node;
  }
  OwnedAny next;
  ASSERT_EQ(ffk_object_get_field(head, "next", &next.v), 0);
  EXPECT_EQ(next.v.type_index, t);
  EXPECT_EQ(reinterpret_cast<Node*>(next.v.v_obj)->value, 98);
  ffk_any wrong = ffk_any_object(Obj(ffk_type_constructor(t)));  // None: no constructor
  EXPECT_EQ(wrong.type_index, FFK_TYPE_NONE);
  ffk_array* arr = ffk_array_new(nullptr, 0);
  ffk_any not_node = ffk_any_object(Obj(arr));
  EXPECT_EQ(ffk_object_set_field(head, "next", &not_node), -1);
  EXPECT_EQ(FetchError(), "TypeError: Mismatched type on field `next` of `test.reflect.Node`: expected `Optional<test.reflect.Node>` but got `Array`");
  ffk_any_release(&not_node);
  ffk_object_release(Obj(arr));
  ffk_object_release(head);  // releases the whole chain
}

// ---- Automatic layout --------------------------------------------------------------------

// Fields placed in order after the header, each aligned for its storage; size rounded up to 8.
TEST_F(Reflect, AutomaticLayoutPlacesFieldsInOrderAlignedForTheirStorage) {
  ffk_field_def fields[] = {
      {"flag", 0, "bool", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
      {"count", 0, "int", FFK_FIELD_HAS_DEFAULT, ffk_any_int(3), nullptr},
      {"flag2", 0, "bool", 0, ffk_any_none(), nullptr},
      {"anything", 0, "Any", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
      {"name", 0, "str", FFK_FIELD_HAS_DEFAULT, ffk_any_raw_str("n"), nullptr},
      {"last", 0, "bool", 0, ffk_any_none(), nullptr},
  };
  ffk_type_def def = {};
  def.key = "test.reflect.Auto";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = 0;
  def.fields = fields;
  def.nfields = 6;
  int32_t t = ffk_type_define(&def);
  ASSERT_GT(t, 0) << FetchError();
  const size_t h = sizeof(ffk_object);
  std::vector<size_t> want = {h, h + 8, h + 16, h + 24, h + 40, h + 48};
  for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(ffk_type_field_at(t, i)->offset, want[i]) << i;
  EXPECT_EQ(ffk_type_instance_size(t), h + 56);
  // Idempotent: the same automatic description again gives the same index.
  EXPECT_EQ(ffk_type_define(&def), t) << FetchError();
  // The same fields at explicit offsets are another description.
  ffk_field_def placed[6];
  for (int i = 0; i < 6; ++i) {
    placed[i] = fields[i];
    placed[i].offset = want[i];
  }
  ffk_type_def explicit_def = def;
  explicit_def.fields = placed;
  explicit_def.instance_size = h + 56;
  EXPECT_EQ(ffk_type_define(&explicit_def), -1);
  EXPECT_TRUE(PendingError("ValueError", {"test.reflect.Auto", "another description"}));

  // Objects work as for a C struct: defaults, writes, reads.
  ffk_any args[] = {ffk_any_bool(true), ffk_any_bool(false), ffk_any_none(), ffk_any_bool(true)};
  const char* names[] = {"flag", "flag2", "anything", "last"};
  ffk_object* obj = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 0, names, 4, &obj), 0) << FetchError();
  OwnedAny v;
  ASSERT_EQ(ffk_object_get_field(obj, "count", &v.v), 0);
  EXPECT_EQ(v.v.v_int, 3);
  ffk_any some = ffk_any_raw_str("some text");
  ASSERT_EQ(ffk_object_set_field(obj, "anything", &some), 0) << FetchError();
  OwnedAny held(ffk_any_object(obj));
  std::string text = ffk::test::Repr(held.v);
  EXPECT_NE(text.find("anything=\"some text\""), std::string::npos) << text;
  ffk_object_release(obj);
}

TEST_F(Reflect, AutomaticLayoutFollowsTheParentsInstanceAndRefusesOffsets) {
  int32_t parent = PointType();
  ffk_field_def fields[] = {{"z", 0, "float", 0, ffk_any_none(), nullptr}};
  ffk_type_def def = {};
  def.key = "test.reflect.AutoChild";
  def.parent_index = parent;
  def.fields = fields;
  def.nfields = 1;
  int32_t t = ffk_type_define(&def);
  ASSERT_GT(t, 0) << FetchError();
  EXPECT_EQ(ffk_type_field_at(t, 3)->offset, sizeof(Point));
  EXPECT_EQ(ffk_type_instance_size(t), sizeof(Point) + 8);
  EXPECT_EQ(ffk_type_num_fields(t), 4);

  ffk_field_def bad[] = {{"z", 24, "float", 0, ffk_any_none(), nullptr}};
  def.key = "test.reflect.AutoBadOffset";
  def.fields = bad;
  EXPECT_EQ(ffk_type_define(&def), -1);
  EXPECT_TRUE(PendingError("ValueError", {"test.reflect.AutoBadOffset", "`z`", "offset 24", "automatic layout"}));
  ffk_field_def bad_type[] = {{"z", 0, "NoSuchType<", 0, ffk_any_none(), nullptr}};
  def.key = "test.reflect.AutoBadType";
  def.fields = bad_type;
  EXPECT_EQ(ffk_type_define(&def), -1);
  EXPECT_TRUE(PendingError("ValueError", {"test.reflect.AutoBadType", "`z`"}));
  ffk_field_def twice[] = {{"x", 0, "int", 0, ffk_any_none(), nullptr}};
  def.key = "test.reflect.AutoTwice";
  def.fields = twice;
  EXPECT_EQ(ffk_type_define(&def), -1);
  EXPECT_TRUE(PendingError("ValueError", {"`x` is defined twice"}));
  def.key = "test.reflect.AutoBadCount";
  def.nfields = -1;
  EXPECT_EQ(ffk_type_define(&def), -1);
  EXPECT_TRUE(PendingError("ValueError", {"test.reflect.AutoBadCount", "-1 fields"}));
  // No fields at all: the instance is the parent's.
  def.key = "test.reflect.AutoEmpty";
  def.fields = nullptr;
  def.nfields = 0;
  int32_t empty = ffk_type_define(&def);
  ASSERT_GT(empty, 0) << FetchError();
  EXPECT_EQ(ffk_type_instance_size(empty), sizeof(Point));
}

}  // namespace
