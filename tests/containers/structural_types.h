// The builders and reflected test types structural_test.cc and structural_mismatch_test.cc
// share: containers that steal the values they are given, test.structural.* types.
#ifndef FFIKIT_TESTS_CONTAINERS_STRUCTURAL_TYPES_H
#define FFIKIT_TESTS_CONTAINERS_STRUCTURAL_TYPES_H

#include <ffikit/ffikit.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace structural_types {

using ffk::test::FetchError;
using ffk::test::OwnedAny;


// Builders of containers that steal the values they are given (nested builders compose);
// Ref(v) passes a borrowed value.
inline ffk_any Ref(const ffk_any& v) {
  ffk_any_retain(&v);
  return v;
}
inline void ReleaseAll(std::vector<ffk_any>& items) {
  for (auto& v : items) ffk_any_release(&v);
}
inline ffk_any ArrayOf(std::vector<ffk_any> items) {
  ffk_any a = ffk_any_object_steal(&ffk_array_new(items.data(), (int64_t)items.size())->header);
  ReleaseAll(items);
  return a;
}
inline ffk_any TupleOf(std::vector<ffk_any> items) {
  ffk_any t = ffk_any_object_steal(&ffk_tuple_new((int64_t)items.size(), items.data())->header);
  ReleaseAll(items);
  return t;
}
inline ffk_any ListOf(std::vector<ffk_any> items) {
  ffk_any l =
      ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_from_items(items.data(), (int64_t)items.size())));
  ReleaseAll(items);
  return l;
}
inline ffk_list* L(const ffk_any& v) { return reinterpret_cast<ffk_list*>(v.v_obj); }
inline ffk_dict* D(const ffk_any& v) { return reinterpret_cast<ffk_dict*>(v.v_obj); }

inline ffk_any MapOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_map* m = ffk_map_new();
  for (auto& p : kv) {
    ffk_map_set(&m, &p.first, &p.second);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(m));
}
inline ffk_any DictOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_dict* d = ffk_dict_new();
  for (auto& p : kv) {
    ffk_dict_set(d, &p.first, &p.second);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(d));
}

inline int Eq(const ffk_any& a, const ffk_any& b) { return ffk_structural_equal(&a, &b); }
inline uint64_t H(const ffk_any& v) {
  uint64_t h = 0;
  EXPECT_EQ(ffk_structural_hash(&v, &h), 0);
  return h;
}
inline ffk_any I(int64_t x) { return ffk_any_int(x); }

// ---- Reflected objects (ffikit/reflect.h): field-wise, compare-off, cycles, deep copy. ----

struct SPair {
  ffk_object header;
  int64_t a, b;
};

inline ffk_field_def Field(const char* name, size_t offset, const char* type, uint32_t flags = 0,
                    ffk_any default_value = ffk_any_none()) {
  return ffk_field_def{name, offset, type, flags, default_value, nullptr};
}

inline int32_t Define(const char* key, int32_t parent, size_t size, const std::vector<ffk_field_def>& fields) {
  ffk_type_def def = {};
  def.key = key;
  def.parent_index = parent;
  def.instance_size = size;
  def.fields = fields.data();
  def.nfields = (int32_t)fields.size();
  int32_t t = ffk_type_define(&def);
  EXPECT_GE(t, 0) << FetchError();
  return t;
}

inline int32_t PairType() {
  static int32_t t = Define("test.structural.Pair", FFK_TYPE_OBJECT, sizeof(SPair),
                            {Field("a", offsetof(SPair, a), "int"), Field("b", offsetof(SPair, b), "int")});
  return t;
}

// The same fields under another key.
inline int32_t OtherPairType() {
  static int32_t t = Define("test.structural.OtherPair", FFK_TYPE_OBJECT, sizeof(SPair),
                            {Field("a", offsetof(SPair, a), "int"), Field("b", offsetof(SPair, b), "int")});
  return t;
}

struct STriple {
  SPair base;
  int64_t c;
};

inline int32_t TripleType() {
  static int32_t t = Define("test.structural.Triple", PairType(), sizeof(STriple),
                            {Field("c", offsetof(STriple, c), "int", FFK_FIELD_HAS_DEFAULT, I(0))});
  return t;
}

// One field of every storage, all writable, and a compare-off note.
struct SRecord {
  ffk_object header;
  int64_t i;
  double f;
  bool b;
  ffk_string* s;
  ffk_object* items;
  ffk_any any;
  ffk_object* maybe;
  ffk_string* note;
};

inline int32_t RecordType() {
  constexpr uint32_t W = FFK_FIELD_WRITABLE;
  PairType();  // `maybe` names it: defined first, whichever test runs first
  static int32_t t = Define(
      "test.structural.Record", FFK_TYPE_OBJECT, sizeof(SRecord),
      {Field("i", offsetof(SRecord, i), "int", W), Field("f", offsetof(SRecord, f), "float", W),
       Field("b", offsetof(SRecord, b), "bool", W), Field("s", offsetof(SRecord, s), "str", W),
       Field("items", offsetof(SRecord, items), "List<int>", W), Field("any", offsetof(SRecord, any), "Any", W),
       Field("maybe", offsetof(SRecord, maybe), "Optional<test.structural.Pair>", W | FFK_FIELD_HAS_DEFAULT),
       Field("note", offsetof(SRecord, note), "str", W | FFK_FIELD_COMPARE_OFF | FFK_FIELD_HAS_DEFAULT,
             ffk_any_raw_str(""))});
  return t;
}

struct SNode {
  ffk_object header;
  int64_t value;
  ffk_object* next;
};

inline int32_t NodeType() {
  static int32_t t = Define("test.structural.Node", FFK_TYPE_OBJECT, sizeof(SNode),
                            {Field("value", offsetof(SNode, value), "int"),
                             Field("next", offsetof(SNode, next), "Optional<test.structural.Node>",
                                   FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT)});
  return t;
}

// A reflected type whose objects the test allocates itself (not made by reflection).
struct SHandmade {
  ffk_object header;
  int64_t v;
};

inline int32_t HandmadeType() {
  static int32_t t = Define("test.structural.Handmade", FFK_TYPE_OBJECT, sizeof(SHandmade),
                            {Field("v", offsetof(SHandmade, v), "int")});
  return t;
}

inline ffk_any Handmade(int64_t v) {
  ffk_object* o = ffk_object_alloc(HandmadeType(), sizeof(SHandmade), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  reinterpret_cast<SHandmade*>(o)->v = v;
  return ffk_any_object_steal(o);
}

// Creates an object from positional values then named ones (all borrowed).
inline ffk_any Create(int32_t type, std::vector<ffk_any> args, std::vector<const char*> kwnames = {}) {
  ffk_object* out = nullptr;
  int32_t nkw = (int32_t)kwnames.size();
  int rc = ffk_object_create(type, args.data(), (int32_t)args.size() - nkw, kwnames.data(), nkw, &out);
  EXPECT_EQ(rc, 0) << FetchError();
  return out ? ffk_any_object_steal(out) : ffk_any_none();
}
inline ffk_any Pair(int64_t a, int64_t b) { return Create(PairType(), {I(a), I(b)}); }
inline ffk_any Node(int64_t value) { return Create(NodeType(), {I(value)}); }

// A Record with i, f, b, s as given, `items` a new List of ints, `any` (borrowed).
inline ffk_any Record(int64_t i, double f, bool b, const char* s, std::vector<int64_t> items, const ffk_any& any) {
  std::vector<ffk_any> values;
  for (int64_t x : items) values.push_back(I(x));
  OwnedAny list(ListOf(values));
  return Create(RecordType(), {I(i), ffk_any_float(f), ffk_any_bool(b), ffk_any_raw_str(s), list.v, any});
}

// Field access by name; a failure fails the test.
inline ffk_any GetField(const ffk_any& obj, const char* name) {
  ffk_any out = ffk_any_none();
  EXPECT_EQ(ffk_object_get_field(obj.v_obj, name, &out), 0) << FetchError();
  return out;
}
inline void SetField(const ffk_any& obj, const char* name, const ffk_any& value) {
  EXPECT_EQ(ffk_object_set_field(obj.v_obj, name, &value), 0) << name << ": " << FetchError();
}
inline const ffk_object* FieldObject(const ffk_any& obj, const char* name) {
  OwnedAny v(GetField(obj, name));
  return ffk_any_is_object(&v.v) ? v.v.v_obj : nullptr;  // compared by address only
}


// A chain of `n` Nodes: value n-1 -> ... -> value 0.
inline ffk_any Chain(int n) {
  ffk_any chain = Node(0);
  for (int i = 1; i < n; ++i) {
    ffk_any next = Create(NodeType(), {I(i), chain});
    ffk_any_release(&chain);
    chain = next;
  }
  return chain;
}

}  // namespace structural_types

#endif  // FFIKIT_TESTS_CONTAINERS_STRUCTURAL_TYPES_H
