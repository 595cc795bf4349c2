// ffikit/structural.h's promise "equal values hash alike", as a property: a seeded
// generator builds values of every kind (None, bool, int, float with -0.0 and NaN, str,
// bytes, Shape, dtype, Device, Tensor, Function, Opaque, Array, Tuple, List, Map, Dict,
// reflected objects with a field of every storage, objects with hooks) nested in every
// position (container element, Map key, each field of a reflected object, Any and
// Optional fields), and checks that structural_equal(a, b) implies equal
// structural_hashes. Each case builds one value twice from one seed (distinct objects
// that must be equal), varying what equality ignores (the sign of a zero, a NaN's
// payload, small or heap strings, letter case a hook ignores, compare-off fields), and
// also compares values built from unrelated seeds over small alphabets, so that equal
// pairs arise by chance too. A failure prints the seed.
#include <ffikit/ffikit.h>

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class StructuralProperty : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

// ---- Types ---------------------------------------------------------------------------

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

// One field of every storage and of the declared types that matter: a Shape held directly
// (object storage), an Optional<Shape>, Any, Object, Optional<int> (ffk_any storage), and
// a compare-off note that equality and hash must both ignore.
struct SHolder {
  ffk_object header;
  int64_t i;
  double f;
  bool b;
  ffk_object* s;
  ffk_object* shape;
  ffk_object* maybe_shape;
  ffk_any any;
  ffk_object* obj;
  ffk_any maybe_int;
  ffk_object* note;
};

int32_t HolderType() {
  static int32_t t = Define(
      "test.sprop.Holder", sizeof(SHolder),
      {Field("i", offsetof(SHolder, i), "int"), Field("f", offsetof(SHolder, f), "float", FFK_FIELD_WRITABLE),
       Field("b", offsetof(SHolder, b), "bool"), Field("s", offsetof(SHolder, s), "str"),
       Field("shape", offsetof(SHolder, shape), "Shape"),
       Field("maybe_shape", offsetof(SHolder, maybe_shape), "Optional<Shape>", FFK_FIELD_WRITABLE),
       Field("any", offsetof(SHolder, any), "Any", FFK_FIELD_WRITABLE), Field("obj", offsetof(SHolder, obj), "Object"),
       Field("maybe_int", offsetof(SHolder, maybe_int), "Optional<int>"),
       Field("note", offsetof(SHolder, note), "str", FFK_FIELD_COMPARE_OFF)});
  return t;
}

// Objects with both hooks: equal when their names match ignoring case and their bodies
// are structurally equal; the hash agrees (it lowercases the name).
struct SHooked {
  ffk_object header;
  ffk_object* name;
  ffk_any body;
};

std::string LowerStr(const ffk_object* s) {
  const ffk_string* str = reinterpret_cast<const ffk_string*>(s);
  std::string out(str->data, str->size);
  for (char& c : out) c = (char)tolower((unsigned char)c);
  return out;
}

int HookedEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const SHooked* a = reinterpret_cast<const SHooked*>(args[0].v_obj);
  const SHooked* b = reinterpret_cast<const SHooked*>(args[1].v_obj);
  if (LowerStr(a->name) != LowerStr(b->name)) {
    *result = ffk_any_bool(false);
    return 0;
  }
  ffk_any call[3] = {a->body, b->body, ffk_any_raw_str("body")};
  return ffk_function_call(reinterpret_cast<ffk_function*>(args[2].v_obj), call, 3, result);
}

int HookedHash(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const SHooked* o = reinterpret_cast<const SHooked*>(args[0].v_obj);
  ffk_any body_hash;
  if (ffk_function_call(reinterpret_cast<ffk_function*>(args[1].v_obj), &o->body, 1, &body_hash) != 0) return -1;
  *result = ffk_any_int((int64_t)(std::hash<std::string>()(LowerStr(o->name)) * 31 + (uint64_t)body_hash.v_int));
  return 0;
}

void SetHook(int32_t t, const char* name, ffk_safe_call call) {
  OwnedAny f(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_function_new(name, call, nullptr, nullptr))));
  EXPECT_EQ(ffk_type_set_attr(t, name, &f.v), 0) << FetchError();
}

int32_t HookedType() {
  static int32_t t = [] {
    int32_t i = Define("test.sprop.Hooked", sizeof(SHooked),
                       {Field("name", offsetof(SHooked, name), "str"), Field("body", offsetof(SHooked, body), "Any")});
    SetHook(i, FFK_ATTR_S_EQUAL, HookedEqual);
    SetHook(i, FFK_ATTR_S_HASH, HookedHash);
    return i;
  }();
  return t;
}

// Objects with an __s_equal__ hook and no __s_hash__: equal when their `v` agree modulo 3
// (a rule the field-wise hash cannot know).
struct SEqOnly {
  ffk_object header;
  int64_t v;
};

int EqOnlyEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  int64_t a = reinterpret_cast<const SEqOnly*>(args[0].v_obj)->v, b = reinterpret_cast<const SEqOnly*>(args[1].v_obj)->v;
  *result = ffk_any_bool(a % 3 == b % 3);
  return 0;
}

int32_t EqOnlyType() {
  static int32_t t = [] {
    int32_t i = Define("test.sprop.EqOnly", sizeof(SEqOnly), {Field("v", offsetof(SEqOnly, v), "int")});
    SetHook(i, FFK_ATTR_S_EQUAL, EqOnlyEqual);
    return i;
  }();
  return t;
}

ffk_any Create(int32_t type, std::vector<ffk_any> args) {
  ffk_object* out = nullptr;
  EXPECT_EQ(ffk_object_create(type, args.data(), (int32_t)args.size(), nullptr, 0, &out), 0) << FetchError();
  for (ffk_any& a : args) ffk_any_release(&a);
  return out ? ffk_any_object_steal(out) : ffk_any_none();
}

// ---- The generator -------------------------------------------------------------------

int NoCall(void*, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_none();
  return 0;
}

// Values compared by identity: made once, shared by both builds of a case.
struct Pool {
  std::vector<ffk_any> items;
  Pool() {
    int64_t dims[1] = {2};
    items.push_back(ffk_any_object_steal(reinterpret_cast<ffk_object*>(
        ffk_tensor_empty(1, dims, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}))));
    items.push_back(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_function_new("f", NoCall, nullptr, nullptr))));
    items.push_back(ffk_any_object_steal(ffk_opaque_new(reinterpret_cast<void*>(0x10), nullptr)));
    items.push_back(ffk_any_object_steal(&ffk_shape_new(dims, 1)->header)); /* as a Map key: by identity */
  }
  ~Pool() {
    for (ffk_any& v : items) ffk_any_release(&v);
  }
};

// Builds one value from `seed`; `variant` picks among the forms equality ignores, so two
// builds of one seed with different variants are equal but share no container or object.
class Gen {
 public:
  Gen(uint64_t seed, uint64_t variant, const Pool& pool) : rng_(seed), var_(variant), pool_(pool) {}

  ffk_any Value(int depth) {
    int kind = (int)Below(depth > 0 ? 20 : 13);
    switch (kind) {
      case 0: return ffk_any_none();
      case 1: return ffk_any_bool(Below(2) == 1);
      case 2: return ffk_any_int((int64_t)Below(4) - 1);
      case 3: return Float();
      case 4: return Str();
      case 5: return Bytes();
      case 6: return Shape();
      case 7: return ffk_any_dtype(DLDataType{(uint8_t)kDLFloat, (uint8_t)(Below(2) ? 32 : 64), 1});
      case 8: return ffk_any_device(DLDevice{kDLCPU, (int32_t)Below(2)});
      case 9: case 10: case 11: return Shared((size_t)(kind - 9));
      case 12: return Below(2) ? Hooked(0) : EqOnly();
      case 13: return Seq(depth, FFK_TYPE_ARRAY);
      case 14: return Seq(depth, FFK_TYPE_TUPLE);
      case 15: return Seq(depth, FFK_TYPE_LIST);
      case 16: return Mapping(depth, false);
      case 17: return Mapping(depth, true);
      case 18: return Holder(depth);
      default: return Hooked(depth);
    }
  }

 private:
  uint64_t Below(uint64_t n) { return rng_() % n; }
  // A choice equality ignores: differs between the variants of one seed.
  bool Vary(uint64_t salt) { return ((var_ * 0x9E3779B97F4A7C15ull ^ salt) >> 17) & 1; }

  ffk_any Float() {
    switch (Below(4)) {
      case 0: return ffk_any_float(Vary(rng_()) ? -0.0 : 0.0);
      case 1: {
        double nan = std::numeric_limits<double>::quiet_NaN();
        return ffk_any_float(Vary(rng_()) ? -nan : nan);
      }
      case 2: return ffk_any_float(1.5);
      default: return ffk_any_float(-2.0);
    }
  }
  std::string Text() {
    static const char* words[] = {"a", "b", "seven77", "a string longer than a small one"};
    return words[Below(4)];
  }
  ffk_any Str() {
    std::string s = Text();
    if (s.size() <= 7 && Vary(rng_())) return ffk_any_raw_str(s == "a" ? "a" : s == "b" ? "b" : "seven77");
    return ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_string_new(s.data(), s.size())));
  }
  ffk_any Bytes() {
    std::string s = Text();
    return ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_bytes_new(s.data(), s.size())));
  }
  ffk_any Shape() {
    int64_t dims[3] = {(int64_t)Below(3), 3, (int64_t)Below(2)};
    return ffk_any_object_steal(&ffk_shape_new(dims, (size_t)Below(4))->header);
  }
  ffk_any Shared(size_t i) {
    ffk_any v = pool_.items[i];
    ffk_any_retain(&v);
    return v;
  }
  ffk_any Key() {
    switch (Below(7)) {
      case 0: return ffk_any_int((int64_t)Below(5));
      case 1: return Str();
      case 2: return Float();
      case 3: return ffk_any_bool(Below(2) == 1);
      case 4: return Bytes();
      case 5: return ffk_any_dtype(DLDataType{(uint8_t)kDLInt, 8, 1});
      default: return Shared((size_t)Below(pool_.items.size()));  // a Shape key compares by identity
    }
  }
  ffk_any Seq(int depth, int32_t type) {
    std::vector<ffk_any> items;
    for (uint64_t n = Below(4); n > 0; --n) items.push_back(Value(depth - 1));
    ffk_object* o = type == FFK_TYPE_ARRAY   ? &ffk_array_new(items.data(), (int64_t)items.size())->header
                     : type == FFK_TYPE_TUPLE ? &ffk_tuple_new((int64_t)items.size(), items.data())->header
                                              : reinterpret_cast<ffk_object*>(
                                                    ffk_list_from_items(items.data(), (int64_t)items.size()));
    for (ffk_any& v : items) ffk_any_release(&v);
    ffk_any out = ffk_any_object_steal(o);
    if (type == FFK_TYPE_LIST && Below(8) == 0) {  // a List that holds itself: a cycle
      EXPECT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(o), &out), 0) << FetchError();
      cycles_.push_back(o);
    }
    return out;
  }
  ffk_any Mapping(int depth, bool dict) {
    ffk_map* m = dict ? nullptr : ffk_map_new();
    ffk_dict* d = dict ? ffk_dict_new() : nullptr;
    for (uint64_t n = Below(4); n > 0; --n) {
      OwnedAny k(Key()), v(Value(depth - 1));
      EXPECT_EQ(dict ? ffk_dict_set(d, &k.v, &v.v) : ffk_map_set(&m, &k.v, &v.v), 0) << FetchError();
    }
    return ffk_any_object_steal(dict ? reinterpret_cast<ffk_object*>(d) : reinterpret_cast<ffk_object*>(m));
  }
  // An object value for an Object field.
  ffk_any ObjectValue(int depth) {
    switch (Below(5)) {
      case 0: return Shape();
      case 1: return Seq(depth, FFK_TYPE_ARRAY);
      case 2: return Mapping(depth, true);
      case 3: return Holder(depth);
      default: return Shared(0);
    }
  }
  ffk_any Holder(int depth) {
    int d = depth > 0 ? depth - 1 : 0;
    ffk_any maybe_shape = Below(2) ? Shape() : ffk_any_none();
    ffk_any any = Value(d);
    ffk_any obj = ObjectValue(d);
    ffk_any maybe_int = Below(2) ? ffk_any_int((int64_t)Below(3)) : ffk_any_none();
    std::string note = Vary(rng_()) ? "one note" : "another";
    ffk_any shape = Shape(), s = Str(), f = Float();
    int64_t i = (int64_t)Below(3);
    bool b = Below(2) == 1;
    return Create(HolderType(), {ffk_any_int(i), f, ffk_any_bool(b), s, shape, maybe_shape, any, obj, maybe_int,
                                 ffk_any_object_steal(reinterpret_cast<ffk_object*>(
                                     ffk_string_new(note.data(), note.size())))});
  }
  ffk_any Hooked(int depth) {
    std::string name = Below(2) ? "Name" : "other";
    for (char& c : name)
      if (Vary(rng_())) c = (char)toupper((unsigned char)c);
    ffk_any body = depth > 0 ? Value(depth - 1) : Shape();
    return Create(HookedType(), {ffk_any_object_steal(reinterpret_cast<ffk_object*>(
                                     ffk_string_new(name.data(), name.size()))),
                                 body});
  }
  ffk_any EqOnly() {
    int64_t v = (int64_t)Below(3) + (Vary(rng_()) ? 3 : 0);
    return Create(EqOnlyType(), {ffk_any_int(v)});
  }

  std::mt19937_64 rng_;
  uint64_t var_;
  const Pool& pool_;

 public:
  std::vector<ffk_object*> cycles_;  // Lists that hold themselves (borrowed): the test breaks them
};

// A generated value that breaks its own cycles when it goes.
struct Built {
  OwnedAny v;
  std::vector<ffk_object*> cycles;
  ~Built() {
    for (ffk_object* l : cycles) ffk_list_clear(reinterpret_cast<ffk_list*>(l));
  }
};

void Build(uint64_t seed, uint64_t variant, const Pool& pool, int depth, Built* out) {
  Gen g(seed, variant, pool);
  out->v.v = g.Value(depth);
  out->cycles = g.cycles_;
}

uint64_t Hash(const ffk_any& v, uint64_t seed) {
  uint64_t h = 0;
  EXPECT_EQ(ffk_structural_hash(&v, &h), 0) << "seed " << seed << ": " << FetchError();
  return h;
}

TEST_F(StructuralProperty, TwoBuildsOfOneValueAreEqualAndHashAlike) {
  HolderType(), HookedType(), EqOnlyType();
  Pool pool;
  const uint64_t base = 0x5eed0000;
  int failures = 0;
  for (uint64_t c = 0; c < 3000 && failures < 5; ++c) {
    uint64_t seed = base + c;
    Built a, b;
    Build(seed, 1, pool, 4, &a);
    Build(seed, 2, pool, 4, &b);
    int eq = ffk_structural_equal(&a.v.v, &b.v.v);
    ASSERT_GE(eq, 0) << "seed " << seed << ": " << FetchError();
    EXPECT_EQ(eq, 1) << "seed " << seed << ": two builds of one value differ";
    uint64_t ha = Hash(a.v.v, seed), hb = Hash(b.v.v, seed);
    if (eq == 1 && ha != hb) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << ": equal values hash differently (" << ha << " vs " << hb << ")";
    }
    if (eq != 1) ++failures;
  }
}

TEST_F(StructuralProperty, EqualValuesFromUnrelatedSeedsHashAlike) {
  Pool pool;
  int equal_pairs = 0, failures = 0;
  for (uint64_t c = 0; c < 20000 && failures < 5; ++c) {
    Built a, b;
    Build(c * 2, c, pool, 2, &a);
    Build(c * 2 + 1, c + 7, pool, 2, &b);
    int eq = ffk_structural_equal(&a.v.v, &b.v.v);
    ASSERT_GE(eq, 0) << "case " << c << ": " << FetchError();
    if (eq != 1) continue;
    ++equal_pairs;
    if (Hash(a.v.v, c) != Hash(b.v.v, c)) {
      ++failures;
      ADD_FAILURE() << "seeds " << c * 2 << " and " << c * 2 + 1 << ": equal values hash differently";
    }
  }
  EXPECT_GT(equal_pairs, 200);  // the alphabets are small enough for equal pairs to arise
}

// Key semantics (ffk_any_equal / ffk_any_hash, what Map and Dict keys use) agree too.
TEST_F(StructuralProperty, KeyEqualityImpliesKeyHash) {
  Pool pool;
  for (uint64_t c = 0; c < 2000; ++c) {
    Built a, b;
    Build(c * 2, c, pool, 0, &a);
    Build(c * 2 + 1, c + 1, pool, 0, &b);
    if (ffk_any_equal(&a.v.v, &b.v.v)) {
      EXPECT_EQ(ffk_any_hash(&a.v.v), ffk_any_hash(&b.v.v)) << "case " << c;
      EXPECT_EQ(ffk_structural_equal(&a.v.v, &b.v.v), 1) << "case " << c << ": key-equal but not structurally";
    }
  }
}

// A cycle unrolled once more is the same infinite value: a = [1, a] equals
// b = [1, [1, b]], and must hash alike although the hash walk meets their cycles at
// different depths.
TEST_F(StructuralProperty, ACycleAndItsUnrollingHashAlike) {
  OwnedAny one(ffk_any_int(1));
  OwnedAny a(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(a.v.v_obj), &one.v), 0);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(a.v.v_obj), &a.v), 0);
  OwnedAny b(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  OwnedAny inner(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(b.v.v_obj), &one.v), 0);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(b.v.v_obj), &inner.v), 0);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(inner.v.v_obj), &one.v), 0);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(inner.v.v_obj), &b.v), 0);
  ASSERT_EQ(ffk_structural_equal(&a.v, &b.v), 1) << FetchError();
  ASSERT_EQ(ffk_structural_equal(&a.v, &inner.v), 1) << FetchError();
  EXPECT_EQ(Hash(a.v, 0), Hash(b.v, 0));
  EXPECT_EQ(Hash(a.v, 0), Hash(inner.v, 0));
  // Held in an acyclic value, the cycle still hashes alike.
  OwnedAny wrap_a(ffk_any_object_steal(&ffk_array_new(&a.v, 1)->header));
  OwnedAny wrap_b(ffk_any_object_steal(&ffk_array_new(&b.v, 1)->header));
  EXPECT_EQ(Hash(wrap_a.v, 0), Hash(wrap_b.v, 0));
  ffk_list_clear(reinterpret_cast<ffk_list*>(a.v.v_obj));
  ffk_list_clear(reinterpret_cast<ffk_list*>(inner.v.v_obj));
}

// The case of issue 35: two equal objects each holding its own Shape((2, 3)) in a field.
TEST_F(StructuralProperty, AShapeInAFieldHashesByItsDimensions) {
  int64_t dims[2] = {2, 3};
  auto make = [&] {
    return Create(HolderType(), {ffk_any_int(1), ffk_any_float(0.5), ffk_any_bool(true), ffk_any_raw_str("s"),
                                 ffk_any_object_steal(&ffk_shape_new(dims, 2)->header),
                                 ffk_any_object_steal(&ffk_shape_new(dims, 2)->header),
                                 ffk_any_object_steal(&ffk_shape_new(dims, 2)->header),
                                 ffk_any_object_steal(&ffk_shape_new(dims, 2)->header), ffk_any_none(),
                                 ffk_any_raw_str("")});
  };
  OwnedAny a(make()), b(make());
  ASSERT_EQ(ffk_structural_equal(&a.v, &b.v), 1) << FetchError();
  EXPECT_EQ(Hash(a.v, 0), Hash(b.v, 0));
}

}  // namespace
