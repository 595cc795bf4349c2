// The reflected test types and helpers reflect_test.cc and reflect_fields_test.cc share:
// test.reflect.Point, Point3 (derived), Bag (defaults, factories, kw-only), and the
// allocation-failure sweep of a definition.
#ifndef FFIKIT_TESTS_FFI_REFLECT_TYPES_H
#define FFIKIT_TESTS_FFI_REFLECT_TYPES_H

#include <ffikit/ffikit.h>
#include <ffikit/array.h>
#include <ffikit/list.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace reflect_types {

using ffk::test::FetchError;

inline ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

struct Point {
  ffk_object header;
  int64_t x;
  double y;
  ffk_string* name;
};

inline int PointNorm1(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const Point* p = reinterpret_cast<const Point*>(args[0].v_obj);
  *result = ffk_any_float(static_cast<double>(p->x) + p->y + args[1].v_float);
  return 0;
}

// Defines test.reflect.Point once: x (int, writable), y (float, default 2.5), name (str,
// read-only, default "pt"), method norm1(self, extra: float) -> float.
inline int32_t PointType() {
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

inline int ReturnNone(void*, const ffk_any*, int32_t, ffk_any*) { return 0; }

inline ffk_function* NoneFunction(const char* name = "none") {
  return ffk_function_new(name, ReturnNone, nullptr, nullptr);
}


struct Point3 {
  Point base;
  int64_t z;
};

inline int ReturnInt(void* ctx, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_int(reinterpret_cast<intptr_t>(ctx));
  return 0;
}

inline ffk_function* IntFunction(intptr_t value) {
  return ffk_function_new("const", ReturnInt, reinterpret_cast<void*>(value), nullptr);
}

// test.reflect.Point3: Point plus z (kw-only, default 0); overrides norm1, adds a static `origin`.
inline int32_t Point3Type() {
  static int32_t index = [] {
    ffk_function* norm = IntFunction(33);
    ffk_function* origin = IntFunction(0);
    ffk_field_def fields[] = {
        {"z", offsetof(Point3, z), "int", FFK_FIELD_WRITABLE | FFK_FIELD_KW_ONLY | FFK_FIELD_HAS_DEFAULT,
         ffk_any_int(0), nullptr},
    };
    ffk_method_def methods[] = {{"origin", origin, true, nullptr}, {"norm1", norm, false, "overridden"}};
    ffk_type_def def = {};
    def.key = "test.reflect.Point3";
    def.parent_index = PointType();
    def.instance_size = sizeof(Point3);
    def.fields = fields;
    def.nfields = 1;
    def.methods = methods;
    def.nmethods = 2;
    int32_t got = ffk_type_define(&def);
    EXPECT_GT(got, 0) << FetchError();
    ffk_object_release(Obj(norm));
    ffk_object_release(Obj(origin));
    return got;
  }();
  return index;
}


struct Bag {
  ffk_object header;
  ffk_object* items;    // List<int>, default factory
  int64_t hidden;       // init-off, default 7
  int64_t counter;      // init-off, no default: 0
  ffk_any device;       // Device, kw-only, default "cpu:0"
  ffk_object* label;    // Optional<str>, default None
  bool on;              // bool, default false
  ffk_any anything;     // Any, default None
  ffk_object* ints;     // Array<int>, writable, default factory
};

inline int MakeList(void*, const ffk_any*, int32_t, ffk_any* result) {
  ffk_list* l = ffk_list_new();
  if (l == nullptr) return -1;
  *result = ffk_any_object_steal(Obj(l));
  return 0;
}

inline int MakeArray(void*, const ffk_any*, int32_t, ffk_any* result) {
  ffk_array* a = ffk_array_new(nullptr, 0);
  if (a == nullptr) return -1;
  *result = ffk_any_object_steal(Obj(a));
  return 0;
}

inline int32_t BagType() {
  static int32_t index = [] {
    ffk_function* list = ffk_function_new("make_list", MakeList, nullptr, nullptr);
    ffk_function* arr = ffk_function_new("make_array", MakeArray, nullptr, nullptr);
    ffk_any factory = ffk_any_object(Obj(list));
    ffk_any arr_factory = ffk_any_object(Obj(arr));
    ffk_field_def fields[] = {
        {"items", offsetof(Bag, items), "List<int>", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_DEFAULT_FACTORY, factory,
         nullptr},
        {"hidden", offsetof(Bag, hidden), "int", FFK_FIELD_INIT_OFF | FFK_FIELD_HAS_DEFAULT, ffk_any_int(7), nullptr},
        {"counter", offsetof(Bag, counter), "int", FFK_FIELD_INIT_OFF | FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
        {"device", offsetof(Bag, device), "Device", FFK_FIELD_KW_ONLY | FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE,
         ffk_any_raw_str("cpu:0"), nullptr},
        {"label", offsetof(Bag, label), "Optional<str>", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE, ffk_any_none(),
         nullptr},
        {"on", offsetof(Bag, on), "bool", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE, ffk_any_bool(false), nullptr},
        {"anything", offsetof(Bag, anything), "Any", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE, ffk_any_none(),
         nullptr},
        {"ints", offsetof(Bag, ints), "Array<int>",
         FFK_FIELD_HAS_DEFAULT | FFK_FIELD_DEFAULT_FACTORY | FFK_FIELD_WRITABLE, arr_factory, nullptr},
    };
    ffk_type_def def = {};
    def.key = "test.reflect.Bag";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(Bag);
    def.fields = fields;
    def.nfields = 8;
    int32_t got = ffk_type_define(&def);
    EXPECT_GT(got, 0) << FetchError();
    ffk_any_release(&factory);
    ffk_any_release(&arr_factory);
    ffk_object_release(Obj(list));
    ffk_object_release(Obj(arr));
    return got;
  }();
  return index;
}


struct Sweep {
  ffk_object header;
  ffk_object* name;   // str, default a long string
  ffk_object* items;  // List<int>, default factory
  ffk_any any;        // Any
  int64_t n;
};

// A definition exercising every allocating part: text, schemas, a converted default, a
// factory, a method and a constructor-free generated init.
inline void SweepDefinition(const char* key, ffk_function* factory, ffk_function* method) {
  ffk_field_def fields[] = {
      {"name", offsetof(Sweep, name), "str", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE,
       ffk_any_raw_str("a default longer than seven bytes"), "The name."},
      {"items", offsetof(Sweep, items), "Optional<List<int>>", FFK_FIELD_HAS_DEFAULT | FFK_FIELD_DEFAULT_FACTORY,
       ffk_any_object(Obj(factory)), nullptr},
      {"any", offsetof(Sweep, any), "Any", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
      {"n", offsetof(Sweep, n), "int", FFK_FIELD_KW_ONLY | FFK_FIELD_HAS_DEFAULT, ffk_any_int(1), nullptr},
  };
  ffk_method_def methods[] = {{"m", method, false, "A method."}};
  ffk_type_def def = {};
  def.key = key;
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(Sweep);
  def.fields = fields;
  def.nfields = 4;
  def.methods = methods;
  def.nmethods = 1;
  def.doc = "Swept.";
  int32_t index = -1;
  int allocations = ffk::test::SweepAllocationFailures([&] {
    index = ffk_type_define(&def);
    return index >= 0;
  });
  EXPECT_GE(allocations, 1);
  ASSERT_GT(index, 0);
  // Defining it again (the comparison path) fails cleanly too.
  allocations = ffk::test::SweepAllocationFailures([&] { return ffk_type_define(&def) == index; });
  EXPECT_GE(allocations, 1);
  ffk_any_release(&fields[1].default_value);
}


}  // namespace reflect_types

#endif  // FFIKIT_TESTS_FFI_REFLECT_TYPES_H
