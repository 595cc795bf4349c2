// ffikit/type.h: static type indices, registration, lookup, inheritance, repr slots.
#include <ffikit/ffikit.h>

#include <string>

#include "tests/support/ffk_test.h"

namespace {

class Type : public ffk::test::Test {};

TEST_F(Type, StaticTypesHaveTheirDesignedKeysAndNames) {
  struct {
    int32_t index;
    const char* key;
    const char* name;
  } cases[] = {
      {FFK_TYPE_NONE, "None", "None"},          {FFK_TYPE_INT, "int", "int"},
      {FFK_TYPE_BOOL, "bool", "bool"},          {FFK_TYPE_FLOAT, "float", "float"},
      {FFK_TYPE_SMALL_STR, "ffikit.SmallStr", "str"},
      {FFK_TYPE_OBJECT, "ffikit.Object", "Object"},
      {FFK_TYPE_STRING, "ffikit.String", "str"}, {FFK_TYPE_BYTES, "ffikit.Bytes", "bytes"},
      {FFK_TYPE_ERROR, "ffikit.Error", "Error"}, {FFK_TYPE_SHAPE, "ffikit.Shape", "Shape"},
      {FFK_TYPE_ARRAY, "ffikit.Array", "Array"}, {FFK_TYPE_DICT, "ffikit.Dict", "Dict"},
      {FFK_TYPE_TUPLE, "ffikit.Tuple", "Tuple"},
  };
  for (const auto& c : cases) {
    EXPECT_STREQ(ffk_type_key(c.index), c.key);
    EXPECT_STREQ(ffk_type_name(c.index), c.name);
    int32_t found = -1;
    EXPECT_EQ(ffk_type_lookup(c.key, &found), 1) << c.key;
    EXPECT_EQ(found, c.index);
  }
  EXPECT_EQ(FFK_TYPE_DICT, 76);
  EXPECT_EQ(FFK_TYPE_SMALL_BYTES, 12);
}

TEST_F(Type, ObjectTypesDescendFromObjectAndPodsAreRoots) {
  EXPECT_EQ(ffk_type_parent(FFK_TYPE_STRING), FFK_TYPE_OBJECT);
  EXPECT_EQ(ffk_type_parent(FFK_TYPE_OBJECT), -1);
  EXPECT_EQ(ffk_type_parent(FFK_TYPE_INT), -1);
  EXPECT_TRUE(ffk_type_is_instance(FFK_TYPE_MAP, FFK_TYPE_OBJECT));
  EXPECT_TRUE(ffk_type_is_instance(FFK_TYPE_INT, FFK_TYPE_INT));
  EXPECT_FALSE(ffk_type_is_instance(FFK_TYPE_INT, FFK_TYPE_OBJECT));
  EXPECT_FALSE(ffk_type_is_instance(FFK_TYPE_STRING, FFK_TYPE_BYTES));
}

TEST_F(Type, RegisteredTypesGetIndicesFromStaticEndAndChainParents) {
  int32_t base = ffk_type_register("test.type.Base", FFK_TYPE_OBJECT);
  int32_t child = ffk_type_register("test.type.Child", base);
  int32_t grandchild = ffk_type_register("test.type.Grandchild", child);
  ASSERT_GE(base, FFK_TYPE_STATIC_END);
  EXPECT_GT(child, base);
  EXPECT_EQ(ffk_type_parent(grandchild), child);
  EXPECT_TRUE(ffk_type_is_instance(grandchild, base));
  EXPECT_TRUE(ffk_type_is_instance(grandchild, FFK_TYPE_OBJECT));
  EXPECT_FALSE(ffk_type_is_instance(base, grandchild));
  EXPECT_FALSE(ffk_type_is_instance(child, FFK_TYPE_STRING));
  EXPECT_STREQ(ffk_type_key(grandchild), "test.type.Grandchild");
  EXPECT_STREQ(ffk_type_name(grandchild), "test.type.Grandchild");
  int32_t found = -1;
  EXPECT_EQ(ffk_type_lookup("test.type.Child", &found), 1);
  EXPECT_EQ(found, child);
  EXPECT_TRUE(ffk_type_exists(child));
}

TEST_F(Type, RegisteringTheSameKeyAndParentAgainReturnsTheSameIndex) {
  int32_t a = ffk_type_register("test.type.Again", FFK_TYPE_OBJECT);
  int32_t count = ffk_type_count();
  EXPECT_EQ(ffk_type_register("test.type.Again", FFK_TYPE_OBJECT), a);
  EXPECT_EQ(ffk_type_count(), count);
}

TEST_F(Type, RegisteringAKeyWithAnotherParentFailsNamingBoth) {
  ffk_type_register("test.type.Conflict", FFK_TYPE_OBJECT);
  EXPECT_EQ(ffk_type_register("test.type.Conflict", FFK_TYPE_MAP), -1);
  EXPECT_EQ(ffk::test::FetchError(),
            "ValueError: type \"test.type.Conflict\" is already registered with parent ffikit.Object, not "
            "ffikit.Map");
  EXPECT_EQ(ffk_type_register("ffikit.String", FFK_TYPE_MAP), -1) << "static keys are taken too";
  ffk_error_clear();
}

TEST_F(Type, RegisterRejectsBadKeysAndParents) {
  EXPECT_EQ(ffk_type_register(nullptr, FFK_TYPE_OBJECT), -1);
  EXPECT_NE(ffk::test::FetchError().find("non-empty"), std::string::npos);
  EXPECT_EQ(ffk_type_register("", FFK_TYPE_OBJECT), -1);
  ffk_error_clear();
  EXPECT_EQ(ffk_type_register(std::string(300, 'k').c_str(), FFK_TYPE_OBJECT), -1);
  EXPECT_NE(ffk::test::FetchError().find("300 bytes"), std::string::npos);
  EXPECT_EQ(ffk_type_register("test.type.BadParent", FFK_TYPE_INT), -1);
  EXPECT_EQ(ffk::test::FetchError(),
            "ValueError: cannot register type \"test.type.BadParent\": its parent 1 is not a registered object type");
  EXPECT_EQ(ffk_type_register("test.type.NoParent", 99999), -1);
  EXPECT_NE(ffk::test::FetchError().find("parent 99999"), std::string::npos);
}

TEST_F(Type, DeepHierarchyStopsAtTheDepthLimit) {
  int32_t parent = FFK_TYPE_OBJECT;
  int levels = 0;
  for (; levels < 64; ++levels) {
    int32_t t = ffk_type_register(("test.type.Deep" + std::to_string(levels)).c_str(), parent);
    if (t < 0) break;
    parent = t;
  }
  EXPECT_LT(levels, 64);
  EXPECT_NE(ffk::test::FetchError().find("deeper than"), std::string::npos);
  EXPECT_TRUE(ffk_type_is_instance(parent, FFK_TYPE_OBJECT));
}

TEST_F(Type, CheckIndexAcceptsKnownTypesAndNamesAnUnknownIndex) {
  EXPECT_EQ(ffk_type_check_index(FFK_TYPE_INT), 0);
  EXPECT_EQ(ffk_type_check_index(FFK_TYPE_ARRAY), 0);
  int32_t t = ffk_type_register("test.type.Checked", FFK_TYPE_OBJECT);
  ASSERT_GT(t, 0) << ffk::test::FetchError();
  EXPECT_EQ(ffk_type_check_index(t), 0);
  EXPECT_EQ(ffk_type_check_index(5000), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: type index 5000 is not a registered type");
  EXPECT_EQ(ffk_type_check_index(-3), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: type index -3 is not a registered type");
}

TEST_F(Type, UnknownIndicesAreNamedAndInstancesOfNothing) {
  EXPECT_EQ(ffk_type_key(5000), nullptr);
  EXPECT_STREQ(ffk_type_name(5000), "<unknown type>");
  EXPECT_STREQ(ffk_type_name(-3), "<unknown type>");
  EXPECT_FALSE(ffk_type_exists(5000));
  EXPECT_FALSE(ffk_type_is_instance(5000, FFK_TYPE_OBJECT));
  EXPECT_FALSE(ffk_type_is_instance(5000, 5000));
  EXPECT_EQ(ffk_type_parent(5000), -1);
  int32_t out = 7;
  EXPECT_EQ(ffk_type_lookup("no.such.Type", &out), 0);
  EXPECT_EQ(out, 7);
  EXPECT_EQ(ffk_type_lookup(nullptr, &out), -1);
  ffk_error_clear();
}

struct Point {
  ffk_object header;
  int64_t x, y;
};

void point_deleter(void* self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
}

int point_repr(ffk_object* self, ffk_repr_ctx* ctx) {
  Point* p = reinterpret_cast<Point*>(self);
  return ffk_repr_appendf(ctx, "Point(%lld, %lld)", (long long)p->x, (long long)p->y);
}

TEST_F(Type, ReprSlotIsUsedBySubtypesUntilTheyOverrideIt) {
  int32_t point = ffk_type_register("test.type.Point", FFK_TYPE_OBJECT);
  int32_t point3 = ffk_type_register("test.type.Point3", point);
  Point* p = reinterpret_cast<Point*>(ffk_object_alloc(point3, sizeof(Point), point_deleter));
  p->x = 1;
  p->y = -2;
  ffk::test::OwnedAny v(ffk_any_object_steal(&p->header));
  EXPECT_EQ(ffk::test::Repr(v.v).rfind("<test.type.Point3 at 0x", 0), 0u);
  ASSERT_EQ(ffk_type_set_repr(point, point_repr), 0);
  EXPECT_EQ(ffk::test::Repr(v.v), "Point(1, -2)");
  ASSERT_EQ(ffk_type_set_repr(point, nullptr), 0);
  EXPECT_EQ(ffk::test::Repr(v.v).rfind("<test.type.Point3 at 0x", 0), 0u);
  EXPECT_EQ(ffk_type_set_repr(FFK_TYPE_INT, point_repr), -1);
  EXPECT_NE(ffk::test::FetchError().find("1 is not a registered object type"), std::string::npos);
}

TEST_F(Type, ObjectIsInstanceChecksTheObjectsType) {
  ffk_string* s = ffk_string_new("hello world", 11);
  EXPECT_TRUE(ffk_object_is_instance(&s->header, FFK_TYPE_STRING));
  EXPECT_TRUE(ffk_object_is_instance(&s->header, FFK_TYPE_OBJECT));
  EXPECT_FALSE(ffk_object_is_instance(&s->header, FFK_TYPE_BYTES));
  EXPECT_FALSE(ffk_object_is_instance(nullptr, FFK_TYPE_OBJECT));
  ffk_object_release(&s->header);
}

TEST_F(Type, RegistrationSurvivesAllocationFailures) {
  int n = 0;
  ffk::test::SweepAllocationFailures([&] {
    return ffk_type_register(("test.type.Sweep" + std::to_string(n++)).c_str(), FFK_TYPE_OBJECT) >= 0;
  });
}

}  // namespace
