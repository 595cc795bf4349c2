// tests/support/values.h - building test values in one expression: ints, owned strs,
// Arrays, Lists, Maps, Dicts, and reflected objects of two Any fields whose structural
// kind and field flags a suite chooses. Every builder returns a new reference and steals
// the references it is given, so `Arr({I(1), S("s")})` leaks nothing.
#ifndef FFIKIT_TESTS_SUPPORT_VALUES_H
#define FFIKIT_TESTS_SUPPORT_VALUES_H

#include <ffikit/ffikit.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"

namespace ffk::test {

inline ffk_any I(int64_t x) { return ffk_any_int(x); }

// An owned str (a SmallStr or a String), so it may outlive `s`.
inline ffk_any S(const char* s) {
  ffk_any out = ffk_any_none();
  ffk_any raw = ffk_any_raw_str(s);
  EXPECT_EQ(ffk_any_to_owned(&raw, &out), 0);
  return out;
}

// A new reference to what `v` holds.
inline ffk_any Ref(const ffk_any& v) {
  ffk_any_retain(&v);
  return v;
}

inline ffk_any Arr(std::vector<ffk_any> items) {
  ffk_any a = ffk_any_object_steal(&ffk_array_new(items.data(), (int64_t)items.size())->header);
  for (auto& v : items) ffk_any_release(&v);
  return a;
}

inline ffk_any ListOf(std::vector<ffk_any> items) {
  ffk_list* l = ffk_list_new();
  for (auto& v : items) EXPECT_EQ(ffk_list_append_steal(l, &v), 0);
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(l));
}

inline ffk_any MapOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_map* m = ffk_map_new();
  for (auto& p : kv) {
    EXPECT_EQ(ffk_map_set(&m, &p.first, &p.second), 0);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(m));
}

inline ffk_any DictOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_dict* d = ffk_dict_new();
  for (auto& p : kv) {
    EXPECT_EQ(ffk_dict_set(d, &p.first, &p.second), 0);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(d));
}

// The layout of every two-field test type: which fields exist, and how they compare, is
// the type's (DefineTwoFields).
struct TwoFields {
  ffk_object header;
  ffk_any x, y;
};

// An Any field of TwoFields at `offset` (offsetof(TwoFields, x) or y).
inline ffk_field_def AnyField(const char* name, size_t offset, uint32_t flags = 0) {
  return ffk_field_def{name, offset, "Any", flags, ffk_any_none(), nullptr};
}

// Defines `key` over TwoFields with `fields`, and its structural kind (an ffk_s_kind; 0 leaves
// the attribute unset: a tree).
inline int32_t DefineTwoFields(const char* key, std::vector<ffk_field_def> fields, int kind) {
  ffk_type_def def = {};
  def.key = key;
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(TwoFields);
  def.fields = fields.data();
  def.nfields = (int32_t)fields.size();
  int32_t t = ffk_type_define(&def);
  EXPECT_GE(t, 0) << FetchError();
  if (kind != 0) {
    ffk_any k = ffk_any_int(kind);
    EXPECT_EQ(ffk_type_set_attr(t, FFK_ATTR_S_KIND, &k), 0) << FetchError();
  }
  return t;
}

// A new object of `type` from `args` (stolen), or None after a failed expectation.
inline ffk_any Make(int32_t type, std::vector<ffk_any> args) {
  ffk_object* out = nullptr;
  int rc = ffk_object_create(type, args.data(), (int32_t)args.size(), nullptr, 0, &out);
  EXPECT_EQ(rc, 0) << FetchError();
  for (auto& a : args) ffk_any_release(&a);
  return out ? ffk_any_object_steal(out) : ffk_any_none();
}

}  // namespace ffk::test

#endif  // FFIKIT_TESTS_SUPPORT_VALUES_H
