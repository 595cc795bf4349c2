// ffikit/enum.h: enum types, their registries and members, seen from C: definition, lookups,
// attribute columns, conversion into fields, repr, structural equality, deep copy, the JSON
// graph (tvm_ffi's format), threads, and the testing library's C-defined enums.
#include <ffikit/ffikit.h>
#include <ffikit/enum.h>

#include <atomic>
#include <cstring>
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

class Enum : public ffk::test::WithTesting {};

ffk_any Obj(ffk_object* o) {
  ffk_any v = ffk_any_none();
  v.type_index = o->type_index;
  v.v_obj = o;
  return v;
}

std::string Name(const ffk_object* m) {
  const ffk_string* s = ffk_enum_member_str_borrow(m);
  return s ? std::string(s->data, s->size) : std::string("<error>");
}

// A fresh type key per use, so tests do not see each other's members.
int32_t TypeIndex(const char* key) {
  int32_t index = -1;
  EXPECT_EQ(ffk_type_lookup(key, &index), 1) << key;
  return index;
}

std::string Key(const char* base) {
  static std::atomic<int> n{0};
  return std::string("ctest.enum.") + base + "." + std::to_string(n++);
}

TEST_F(Enum, BaseTypesAndKinds) {
  int32_t plain = ffk_enum_base_index(FFK_ENUM_PLAIN);
  int32_t ints = ffk_enum_base_index(FFK_ENUM_INT);
  int32_t strs = ffk_enum_base_index(FFK_ENUM_STR);
  ASSERT_GE(plain, 0) << FetchError();
  EXPECT_STREQ(ffk_type_key(plain), "ffi.Enum");
  EXPECT_STREQ(ffk_type_key(ints), "ffi.IntEnum");
  EXPECT_STREQ(ffk_type_key(strs), "ffi.StrEnum");
  EXPECT_STREQ(ffk_type_key(ffk_enum_state_type_index()), "ffi.EnumState");
  EXPECT_EQ(ffk_type_parent(ints), plain);
  EXPECT_EQ(ffk_enum_kind_of(plain), FFK_ENUM_PLAIN);
  EXPECT_EQ(ffk_enum_kind_of(ints), FFK_ENUM_INT);
  EXPECT_EQ(ffk_enum_kind_of(strs), FFK_ENUM_STR);
  EXPECT_EQ(ffk_enum_kind_of(FFK_TYPE_ARRAY), -1);
  EXPECT_EQ(ffk_enum_kind_of(-5), -1);
  EXPECT_EQ(ffk_enum_base_index((ffk_enum_kind)7), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  const ffk_field_info* f;
  ASSERT_EQ(ffk_type_find_field(plain, "_int_index", &f), 1);
  EXPECT_EQ(f->offset, offsetof(ffk_enum_obj, int_index));
  ASSERT_EQ(ffk_type_find_field(plain, "_str_index", &f), 1);
  EXPECT_EQ(f->offset, offsetof(ffk_enum_obj, str_index));
  OwnedAny kind;
  ASSERT_EQ(ffk_type_get_attr(plain, FFK_ATTR_S_KIND, &kind.v), 1);
  EXPECT_EQ(kind.v.v_int, FFK_S_KIND_SINGLETON);
}

TEST_F(Enum, AddLookUpAndList) {
  std::string key = Key("Color");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, "colors");
  ASSERT_GE(t, 0) << FetchError();
  EXPECT_EQ(ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, "colors"), t);  // idempotent
  EXPECT_EQ(ffk_enum_kind_of(t), FFK_ENUM_PLAIN);
  EXPECT_EQ(ffk_enum_count(t), 0);  // no registry yet
  ffk_object* none = reinterpret_cast<ffk_object*>(1);
  EXPECT_EQ(ffk_enum_get_str(t, "RED", 3, &none), 0);
  EXPECT_EQ(none, nullptr);

  ffk_object *red, *green;
  ASSERT_EQ(ffk_enum_add(t, "RED", nullptr, &red), 0) << FetchError();
  ASSERT_EQ(ffk_enum_add(t, "GREEN", nullptr, &green), 0) << FetchError();
  EXPECT_EQ(ffk_enum_add(t, "BLUE", nullptr, nullptr), 0);
  EXPECT_EQ(ffk_enum_count(t), 3);
  int64_t v;
  ASSERT_EQ(ffk_enum_member_int(green, &v), 0);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(Name(green), "GREEN");

  ffk_object* m;
  ASSERT_EQ(ffk_enum_get_str(t, "GREEN", 5, &m), 1);
  EXPECT_EQ(m, green);
  ffk_object_release(m);
  ASSERT_EQ(ffk_enum_get_int(t, 0, &m), 1);
  EXPECT_EQ(m, red);
  ffk_object_release(m);
  OwnedAny by_str(ffk_any_raw_str("BLUE"));
  ASSERT_EQ(ffk_enum_get(t, &by_str.v, &m), 1);
  EXPECT_EQ(Name(m), "BLUE");
  ffk_object_release(m);
  ffk_any b = ffk_any_bool(true);
  ASSERT_EQ(ffk_enum_get(t, &b, &m), 1);
  EXPECT_EQ(m, green);
  ffk_object_release(m);
  EXPECT_EQ(ffk_enum_get_str(t, "PINK", 4, &m), 0);
  EXPECT_EQ(ffk_enum_get_int(t, 7, &m), 0);
  ffk_any f = ffk_any_float(1.5);
  EXPECT_EQ(ffk_enum_get(t, &f, &m), -1);
  EXPECT_TRUE(PendingError("TypeError", {"must be int or str"}));

  ffk_array* all = ffk_enum_members(t);
  ASSERT_NE(all, nullptr);
  ASSERT_EQ(ffk_array_size(all), 3);
  EXPECT_EQ(ffk_array_items_borrow(all)[0].v_obj, red);
  EXPECT_EQ(ffk_array_items_borrow(all)[1].v_obj, green);
  ffk_object_release((ffk_object*)all);

  // The registry object: entries and both indexes.
  ffk_object* st;
  ASSERT_EQ(ffk_enum_state(t, false, &st), 1);
  EXPECT_EQ(ffk_list_size(((ffk_enum_state_obj*)st)->entries), 3);
  EXPECT_EQ(ffk_dict_size(((ffk_enum_state_obj*)st)->indexes), 6);
  OwnedAny own;
  ASSERT_EQ(ffk_type_get_own_attr(t, FFK_ENUM_STATE_ATTR, &own.v), 1);
  EXPECT_EQ(own.v.v_obj, st);
  ffk_object_release(st);
  ffk_object_release(red);
  ffk_object_release(green);
}

TEST_F(Enum, RefusalsNameTheProblem) {
  std::string key = Key("Refuse");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, nullptr);
  ASSERT_EQ(ffk_enum_add(t, "A", nullptr, nullptr), 0) << FetchError();
  EXPECT_EQ(ffk_enum_add(t, "A", nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Duplicate enum index", key}));
  int64_t one = 1;
  EXPECT_EQ(ffk_enum_add(t, "B", &one, nullptr), -1);
  EXPECT_TRUE(PendingError("TypeError", {"not an IntEnum"}));
  EXPECT_EQ(ffk_enum_add(t, nullptr, nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_enum_add(t, "\xff", nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_enum_count(t), 1);

  std::string ikey = Key("Int");
  int32_t it = ffk_enum_define(ikey.c_str(), FFK_ENUM_INT, nullptr);
  EXPECT_EQ(ffk_enum_add(it, "X", nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("TypeError", {"explicit int index"}));
  int64_t big = INT64_MIN;
  ASSERT_EQ(ffk_enum_add(it, "MIN", &big, nullptr), 0) << FetchError();
  EXPECT_EQ(ffk_enum_add(it, "OTHER", &big, nullptr), -1);  // the int index is taken
  EXPECT_TRUE(PendingError("ValueError", {"Duplicate"}));

  // Not an enum type.
  ffk_object* m;
  EXPECT_EQ(ffk_enum_get_str(FFK_TYPE_ARRAY, "A", 1, &m), -1);
  EXPECT_TRUE(PendingError("TypeError", {"is not an enum type"}));
  EXPECT_EQ(ffk_enum_count(ffk_enum_state_type_index()), -1);
  EXPECT_TRUE(PendingError("TypeError", {"ffi.EnumState", "is not an enum type"}));
  EXPECT_EQ(ffk_enum_members(12345), nullptr);
  EXPECT_TRUE(PendingError("ValueError"));
  int64_t v;
  EXPECT_EQ(ffk_enum_member_int(nullptr, &v), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  EXPECT_EQ(ffk_enum_state(t, false, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError"));
}

TEST_F(Enum, RegisterAMemberTheCallerMade) {
  std::string key = Key("Made");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_STR, nullptr);
  ffk_any args[2] = {ffk_any_int(0), ffk_any_raw_str("+")};
  const char* names[2] = {"_int_index", "_str_index"};
  ffk_object* plus;
  ASSERT_EQ(ffk_object_create(t, args, 0, names, 2, &plus), 0) << FetchError();
  ASSERT_EQ(ffk_enum_register(t, plus), 0) << FetchError();
  ffk_object* m;
  ASSERT_EQ(ffk_enum_get_str(t, "+", 1, &m), 1);
  EXPECT_EQ(m, plus);
  ffk_object_release(m);
  EXPECT_EQ(ffk_enum_register(t, plus), -1);  // its indices are taken now
  EXPECT_TRUE(PendingError("ValueError", {"Duplicate"}));
  ffk_object* other;
  std::string okey = Key("Other");
  int32_t ot = ffk_enum_define(okey.c_str(), FFK_ENUM_STR, nullptr);
  ASSERT_EQ(ffk_object_create(ot, args, 0, names, 2, &other), 0);
  EXPECT_EQ(ffk_enum_register(t, other), -1);
  EXPECT_TRUE(PendingError("TypeError", {"cannot register"}));
  ffk_object_release(other);
  ffk_object_release(plus);
}

TEST_F(Enum, AttributeColumns) {
  std::string key = Key("Attr");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, nullptr);
  ffk_object *a, *b;
  ASSERT_EQ(ffk_enum_add(t, "A", nullptr, &a), 0);
  ASSERT_EQ(ffk_enum_add(t, "B", nullptr, &b), 0);
  OwnedAny out;
  EXPECT_EQ(ffk_enum_attr_get(t, "cost", a, &out.v), 0);  // no column yet
  ffk_any seven = ffk_any_int(7), none = ffk_any_none();
  ASSERT_EQ(ffk_enum_attr_set(t, "cost", a, &seven), 0) << FetchError();
  ASSERT_EQ(ffk_enum_attr_set(t, "cost", b, &none), 0);
  ASSERT_EQ(ffk_enum_attr_get(t, "cost", a, &out.v), 1);
  EXPECT_EQ(out.v.v_int, 7);
  ASSERT_EQ(ffk_enum_attr_get(t, "cost", b, &out.v), 1);  // a stored None is a value
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_enum_attr_get(t, "other", a, &out.v), 0);

  std::string okey = Key("AttrOther");
  int32_t ot = ffk_enum_define(okey.c_str(), FFK_ENUM_PLAIN, nullptr);
  ffk_object* x;
  ASSERT_EQ(ffk_enum_add(ot, "X", nullptr, &x), 0);
  EXPECT_EQ(ffk_enum_attr_set(t, "cost", x, &seven), -1);
  EXPECT_TRUE(PendingError("TypeError", {"expected a member of"}));
  EXPECT_EQ(ffk_enum_attr_set(t, nullptr, a, &seven), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  ffk_object_release(x);
  ffk_object_release(a);
  ffk_object_release(b);
}

TEST_F(Enum, ReprEqualityAndDeepCopy) {
  std::string key = Key("Eq");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, nullptr);
  ffk_object *a, *b;
  ASSERT_EQ(ffk_enum_add(t, "A", nullptr, &a), 0);
  ASSERT_EQ(ffk_enum_add(t, "B", nullptr, &b), 0);
  ffk_any va = Obj(a), vb = Obj(b);
  EXPECT_EQ(ffk::test::Repr(va), key + ".A");
  EXPECT_EQ(ffk_structural_equal(&va, &va), 1);
  EXPECT_EQ(ffk_structural_equal(&va, &vb), 0);
  ffk_object* dup = ffk_object_shallow_copy(a);  // same fields, another object: not equal
  ASSERT_NE(dup, nullptr);
  ffk_any vd = Obj(dup);
  EXPECT_EQ(ffk_structural_equal(&va, &vd), 0);
  ffk_object_release(dup);
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&va, &copy.v), 0);
  EXPECT_EQ(copy.v.v_obj, a);  // the singleton itself
  ffk_object_release(a);
  ffk_object_release(b);
}

TEST_F(Enum, JsonGraphWritesTheIndexAndReadsTheSingleton) {
  std::string key = Key("Json");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, nullptr);
  std::string ikey = Key("JsonInt");
  int32_t it = ffk_enum_define(ikey.c_str(), FFK_ENUM_INT, nullptr);
  ffk_object *red, *low;
  ASSERT_EQ(ffk_enum_add(t, "RED", nullptr, &red), 0);
  int64_t nine = -9;
  ASSERT_EQ(ffk_enum_add(it, "LOW", &nine, &low), 0);
  ffk_any items[3] = {Obj(red), Obj(red), Obj(low)};
  OwnedAny arr(ffk_any_object_steal((ffk_object*)ffk_array_new(items, 3)));
  OwnedAny text;
  ASSERT_EQ(ffk_to_json_graph(&arr.v, nullptr, &text.v), 0) << FetchError();
  const char* data;
  size_t size;
  ASSERT_EQ(ffk_any_as_str(&text.v, &data, &size), 0);
  std::string expected = "{\"root_index\":2,\"nodes\":[{\"type\":\"" + key + "\",\"data\":\"RED\"},{\"type\":\"" + ikey +
                         "\",\"data\":-9},{\"type\":\"ffi.Array\",\"data\":[0,0,1]}]}";
  EXPECT_EQ(std::string(data, size), expected);
  OwnedAny back;
  ASSERT_EQ(ffk_from_json_graph(data, size, &back.v, nullptr), 0) << FetchError();
  const ffk_any* got = ffk_array_items_borrow((ffk_array*)back.v.v_obj);
  EXPECT_EQ(got[0].v_obj, red);
  EXPECT_EQ(got[1].v_obj, red);
  EXPECT_EQ(got[2].v_obj, low);

  std::string bad = "{\"root_index\":0,\"nodes\":[{\"type\":\"" + key + "\",\"data\":\"BLUE\"}]}";
  OwnedAny none;
  EXPECT_EQ(ffk_from_json_graph(bad.data(), bad.size(), &none.v, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"has no instance with index BLUE"}));
  bad = "{\"root_index\":0,\"nodes\":[{\"type\":\"" + ikey + "\",\"data\":\"LOW\"}]}";
  EXPECT_EQ(ffk_from_json_graph(bad.data(), bad.size(), &none.v, nullptr), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  ffk_object_release(red);
  ffk_object_release(low);
}

TEST_F(Enum, TestingTypesAndFieldConversion) {
  int32_t variant = TypeIndex("testing.TestEnumVariant");
  ASSERT_GE(variant, 0);
  EXPECT_EQ(ffk_enum_count(variant), 2);
  ffk_object* beta;
  ASSERT_EQ(ffk_enum_get_str(variant, "Beta", 4, &beta), 1);
  OwnedAny code;
  ASSERT_EQ(ffk_enum_attr_get(variant, "code", beta, &code.v), 1);
  EXPECT_EQ(code.v.v_int, 20);
  ffk_function* get;
  ASSERT_EQ(ffk_function_get_global("testing.enum_variant_get", &get), 1);
  ffk_any arg = ffk_any_raw_str("Beta");
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(get, &arg, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_obj, beta);
  arg = ffk_any_raw_str("Gamma");
  EXPECT_EQ(ffk_function_call(get, &arg, 1, &r.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"has no instance with index Gamma"}));
  ffk_object_release((ffk_object*)get);
  ffk_object_release(beta);

  // An IntEnum / StrEnum field converts an int / a str to the member.
  int32_t ints = TypeIndex("testing.TestCxxIntEnum");
  int32_t strs = TypeIndex("testing.TestCxxStrEnum");
  int64_t ten = 10;
  ffk_object *low, *add;
  if (ffk_enum_get_int(ints, 10, &low) != 1) {
    ASSERT_EQ(ffk_enum_add(ints, "low", &ten, &low), 0) << FetchError();
  }
  if (ffk_enum_get_str(strs, "+", 1, &add) != 1) {
    ASSERT_EQ(ffk_enum_add(strs, "+", nullptr, &add), 0) << FetchError();
  }
  int32_t holder = TypeIndex("testing.TestCxxEnumHolder");
  ffk_any args[2] = {ffk_any_int(10), ffk_any_raw_str("+")};
  ffk_object* h;
  ASSERT_EQ(ffk_object_create(holder, args, 2, nullptr, 0, &h), 0) << FetchError();
  OwnedAny p, o;
  ASSERT_EQ(ffk_object_get_field(h, "priority", &p.v), 0);
  ASSERT_EQ(ffk_object_get_field(h, "opcode", &o.v), 0);
  EXPECT_EQ(p.v.v_obj, low);
  EXPECT_EQ(o.v.v_obj, add);
  ffk_any bad = ffk_any_int(11);
  EXPECT_EQ(ffk_object_set_field(h, "priority", &bad), -1);
  EXPECT_TRUE(PendingError("TypeError", {"testing.TestCxxIntEnum"}));
  bad = ffk_any_raw_str("low");  // an IntEnum field takes no str
  EXPECT_EQ(ffk_object_set_field(h, "priority", &bad), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  ffk_object_release(h);
  ffk_object_release(low);
  ffk_object_release(add);
}

TEST_F(Enum, ThreadsRacingToAddOneNameAddItOnce) {
  std::string key = Key("Race");
  int32_t t = ffk_enum_define(key.c_str(), FFK_ENUM_PLAIN, nullptr);
  std::atomic<int> added{0}, refused{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        std::string name = "M" + std::to_string(i);
        if (ffk_enum_add(t, name.c_str(), nullptr, nullptr) == 0) {
          ++added;
        } else {
          ffk_error_clear();
          ++refused;
        }
        ffk_object* m;
        if (ffk_enum_get_str(t, name.c_str(), name.size(), &m) == 1) ffk_object_release(m);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(added.load(), 50);
  EXPECT_EQ(refused.load(), 150);
  EXPECT_EQ(ffk_enum_count(t), 50);
  for (int64_t i = 0; i < 50; ++i) {  // int indices are the registration order, without gaps
    ffk_object* m;
    ASSERT_EQ(ffk_enum_get_int(t, i, &m), 1);
    ffk_object_release(m);
  }
}

}  // namespace
