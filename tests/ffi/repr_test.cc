// ffikit/repr.h: the text of every value, floats like Python, quoting, cycles and depth, and
// reflected objects printed from their fields.
#include <ffikit/ffikit.h>

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Repr : public ffk::test::Test {};
using ffk::test::OwnedAny;

std::string R(ffk_any v) { return ffk::test::Repr(v); }

TEST_F(Repr, PlainValues) {
  EXPECT_EQ(R(ffk_any_none()), "None");
  EXPECT_EQ(R(ffk_any_bool(true)), "True");
  EXPECT_EQ(R(ffk_any_bool(false)), "False");
  EXPECT_EQ(R(ffk_any_int(-42)), "-42");
  EXPECT_EQ(R(ffk_any_int(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(R(ffk_any_dtype(ffk_dtype(FFK_DTYPE_INT, 8, 4))), "int8x4");
  EXPECT_EQ(R(ffk_any_device(ffk_device(FFK_DEVICE_CPU, 0))), "cpu:0");
  EXPECT_EQ(R(ffk_any_ptr(nullptr)).rfind("ptr(", 0), 0u);
}

TEST_F(Repr, FloatsPrintLikePython) {
  struct {
    double x;
    const char* text;
  } cases[] = {
      {0.1, "0.1"},       {1.0, "1.0"},         {-0.0, "-0.0"},         {1e16, "1e+16"},
      {1e15, "1000000000000000.0"}, {123456789.0, "123456789.0"}, {1e-05, "1e-05"},
      {0.0001, "0.0001"}, {1.5e-7, "1.5e-07"},  {5e-324, "5e-324"},     {1.7976931348623157e308, "1.7976931348623157e+308"},
      {2.0 / 3.0, "0.6666666666666666"},        {100.5, "100.5"},
  };
  for (const auto& c : cases) EXPECT_EQ(R(ffk_any_float(c.x)), c.text) << c.text;
  EXPECT_EQ(R(ffk_any_float(std::numeric_limits<double>::infinity())), "inf");
  EXPECT_EQ(R(ffk_any_float(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(R(ffk_any_float(std::nan(""))), "nan");
}

TEST_F(Repr, StringsAreQuotedWithEscapes) {
  OwnedAny s, b, long_s;
  ffk_any_cstr("a\"b\\c\n\x01", &s.v);
  EXPECT_EQ(R(s.v), "\"a\\\"b\\\\c\\n\\x01\"");
  ffk_any_bytes("\x00\xff" "A", 3, &b.v);
  EXPECT_EQ(R(b.v), "b\"\\x00\\xffA\"");
  ffk_any_cstr("caf\xc3\xa9 and a long tail", &long_s.v);
  EXPECT_EQ(R(long_s.v), "\"caf\xc3\xa9 and a long tail\"") << "str keeps UTF-8 as is";
  EXPECT_EQ(R(ffk_any_raw_str("raw")), "\"raw\"");
}

struct Node {
  ffk_object header;
  ffk_any child;
};

int32_t NodeType();

void node_deleter(void* self, int which) {
  Node* n = static_cast<Node*>(self);
  if (which & FFK_DELETER_DESTROY) ffk_any_release(&n->child);
  if (which & FFK_DELETER_FREE) ffk_object_free(&n->header);
}

int node_repr(ffk_object* self, ffk_repr_ctx* ctx) {
  Node* n = reinterpret_cast<Node*>(self);
  if (ffk_repr_append(ctx, "Node(", 5) != 0 || ffk_repr_any(ctx, &n->child) != 0) return -1;
  return ffk_repr_append(ctx, ")", 1);
}

int32_t NodeType() {
  static int32_t t = [] {
    int32_t index = ffk_type_register("test.repr.Node", FFK_TYPE_OBJECT);
    ffk_type_set_repr(index, node_repr);
    return index;
  }();
  return t;
}

Node* NewNode(ffk_any child) {
  Node* n = reinterpret_cast<Node*>(ffk_object_alloc(NodeType(), sizeof(Node), node_deleter));
  n->child = child;
  return n;
}

TEST_F(Repr, NestedObjectsPrintThroughTheirSlots) {
  Node* inner = NewNode(ffk_any_int(1));
  OwnedAny outer(ffk_any_object_steal(&NewNode(ffk_any_object_steal(&inner->header))->header));
  EXPECT_EQ(R(outer.v), "Node(Node(1))");
}

TEST_F(Repr, ACycleEndsInEllipsis) {
  Node* a = NewNode(ffk_any_none());
  Node* b = NewNode(ffk_any_object(&a->header));
  a->child = ffk_any_object(&b->header);  // a -> b -> a
  ffk_any va = ffk_any_object_steal(&a->header);
  EXPECT_EQ(R(va), "Node(Node(...))");
  // Break the cycle so both are freed.
  ffk_any child = a->child;
  a->child = ffk_any_none();
  ffk_any_release(&child);
  ffk_object_release(&b->header);
  ffk_any_release(&va);
}

TEST_F(Repr, DeepNestingStopsAtTheDepthLimit) {
  ffk_any v = ffk_any_int(0);
  for (int i = 0; i < FFK_REPR_MAX_DEPTH + 50; ++i) v = ffk_any_object_steal(&NewNode(v)->header);
  std::string text = R(v);
  EXPECT_NE(text.find("..."), std::string::npos);
  EXPECT_EQ(text.find("0"), std::string::npos) << "the innermost value is past the limit";
  ffk_any_release(&v);  // recursion in the deleters: 306 levels is fine
}

TEST_F(Repr, ObjectsWithoutASlotShowTypeAndAddress) {
  int32_t plain = ffk_type_register("test.repr.Plain", FFK_TYPE_OBJECT);
  ffk_object* o = ffk_object_alloc(plain, sizeof(ffk_object), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  OwnedAny v(ffk_any_object_steal(o));
  char expect[64];
  snprintf(expect, sizeof expect, "<test.repr.Plain at %p>", static_cast<void*>(o));
  EXPECT_EQ(R(v.v), expect);
}

TEST_F(Repr, ReprFailsCleanlyWhenMemoryRunsOut) {
  OwnedAny s;
  ffk_any_cstr(std::string(300, 'q').c_str(), &s.v);
  ffk::test::SweepAllocationFailures([&] {
    ffk_string* r = ffk_any_repr(&s.v);
    if (r == nullptr) return false;
    ffk_object_release(&r->header);
    return true;
  });
  EXPECT_EQ(ffk_any_repr(nullptr), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_any_repr: value is NULL");
}

// ---- Reflected objects print from their fields. ------------------------------------------

struct RPoint {
  ffk_object header;
  int64_t x;
  double y;
};

int32_t RPointType() {
  static const ffk_field_def fields[] = {
      {"x", offsetof(RPoint, x), "int", FFK_FIELD_WRITABLE, ffk_any_none(), "The x coordinate."},
      {"y", offsetof(RPoint, y), "float", FFK_FIELD_HAS_DEFAULT, ffk_any_float(2.5), nullptr},
  };
  static int32_t t = [] {
    ffk_type_def def = {};
    def.key = "test.repr.Point";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(RPoint);
    def.fields = fields;
    def.nfields = 2;
    return ffk_type_define(&def);
  }();
  return t;
}

// A derived type: the parent's fields first, a repr-off field left out.
struct RLabelled {
  RPoint base;
  int64_t secret;
  ffk_string* label;
};

int32_t RLabelledType() {
  static const ffk_field_def fields[] = {
      {"secret", offsetof(RLabelled, secret), "int", FFK_FIELD_REPR_OFF | FFK_FIELD_HAS_DEFAULT, ffk_any_int(7),
       nullptr},
      {"label", offsetof(RLabelled, label), "str", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
  };
  static int32_t t = [] {
    ffk_type_def def = {};
    def.key = "test.repr.Labelled";
    def.parent_index = RPointType();
    def.instance_size = sizeof(RLabelled);
    def.fields = fields;
    def.nfields = 2;
    return ffk_type_define(&def);
  }();
  return t;
}

int32_t REmptyType() {
  static int32_t t = [] {
    ffk_type_def def = {};
    def.key = "test.repr.Empty";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(ffk_object);
    return ffk_type_define(&def);
  }();
  return t;
}

// One field of every storage: int, float, bool, object (str, Array, Optional), Any.
struct RAll {
  ffk_object header;
  int64_t i;
  double f;
  bool b;
  ffk_string* s;
  ffk_object* arr;
  ffk_object* maybe;
  ffk_any any;
  ffk_any dev;
};

int32_t RAllType() {
  static const ffk_field_def fields[] = {
      {"i", offsetof(RAll, i), "int", 0, ffk_any_none(), nullptr},
      {"f", offsetof(RAll, f), "float", 0, ffk_any_none(), nullptr},
      {"b", offsetof(RAll, b), "bool", 0, ffk_any_none(), nullptr},
      {"s", offsetof(RAll, s), "str", 0, ffk_any_none(), nullptr},
      {"arr", offsetof(RAll, arr), "Array<int>", 0, ffk_any_none(), nullptr},
      {"maybe", offsetof(RAll, maybe), "Optional<test.repr.Point>", FFK_FIELD_HAS_DEFAULT, ffk_any_none(), nullptr},
      {"any", offsetof(RAll, any), "Any", FFK_FIELD_HAS_DEFAULT, ffk_any_none(), nullptr},
      {"dev", offsetof(RAll, dev), "Device", FFK_FIELD_HAS_DEFAULT, ffk_any_device(ffk_device(FFK_DEVICE_CPU, 0)),
       nullptr},
  };
  static int32_t t = [] {
    RPointType();
    ffk_type_def def = {};
    def.key = "test.repr.All";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(RAll);
    def.fields = fields;
    def.nfields = 8;
    return ffk_type_define(&def);
  }();
  return t;
}

// A linked node whose writable `next` field can close a cycle.
struct RNode {
  ffk_object header;
  int64_t value;
  ffk_object* next;
};

int32_t RNodeType() {
  static const ffk_field_def fields[] = {
      {"value", offsetof(RNode, value), "int", 0, ffk_any_none(), nullptr},
      {"next", offsetof(RNode, next), "Optional<test.repr.RNode>", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       ffk_any_none(), nullptr},
  };
  static int32_t t = [] {
    ffk_type_def def = {};
    def.key = "test.repr.RNode";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(RNode);
    def.fields = fields;
    def.nfields = 2;
    return ffk_type_define(&def);
  }();
  return t;
}

// Creates an object of `type` from positional values (borrowed); fails the test on error.
ffk_any Create(int32_t type, std::initializer_list<ffk_any> args, std::initializer_list<const char*> kwnames = {}) {
  std::vector<ffk_any> values(args);
  std::vector<const char*> names(kwnames);
  ffk_object* out = nullptr;
  int32_t nkw = (int32_t)names.size();
  int rc = ffk_object_create(type, values.data(), (int32_t)values.size() - nkw, names.data(), nkw, &out);
  EXPECT_EQ(rc, 0) << ffk::test::FetchError();
  return out ? ffk_any_object_steal(out) : ffk_any_none();
}

TEST_F(Repr, ReflectedObjectsPrintTheirFieldsInOrder) {
  ASSERT_GE(RPointType(), 0) << ffk::test::FetchError();
  OwnedAny p(Create(RPointType(), {ffk_any_int(1), ffk_any_float(2.5)}));
  EXPECT_EQ(R(p.v), "test.repr.Point(x=1, y=2.5)");
  OwnedAny q(Create(RPointType(), {ffk_any_int(-3)}));
  EXPECT_EQ(R(q.v), "test.repr.Point(x=-3, y=2.5)") << "a default prints like a given value";
  ffk_any ten = ffk_any_int(10);
  ASSERT_EQ(ffk_object_set_field(q.v.v_obj, "x", &ten), 0);
  EXPECT_EQ(R(q.v), "test.repr.Point(x=10, y=2.5)") << "repr reads the current value";
}

TEST_F(Repr, ATypeWithoutFieldsPrintsEmptyParentheses) {
  ASSERT_GE(REmptyType(), 0) << ffk::test::FetchError();
  OwnedAny e(Create(REmptyType(), {}));
  EXPECT_EQ(R(e.v), "test.repr.Empty()");
}

TEST_F(Repr, DerivedTypesPrintParentFieldsFirstAndLeaveOutReprOff) {
  ASSERT_GE(RLabelledType(), 0) << ffk::test::FetchError();
  OwnedAny o(Create(RLabelledType(), {ffk_any_int(1), ffk_any_float(0.5), ffk_any_raw_str("a \"quoted\" label")},
                    {"y", "label"}));
  EXPECT_EQ(R(o.v), "test.repr.Labelled(x=1, y=0.5, label=\"a \\\"quoted\\\" label\")");
  OwnedAny secret;
  ASSERT_EQ(ffk_object_get_field(o.v.v_obj, "secret", &secret.v), 0);
  EXPECT_EQ(secret.v.v_int, 7) << "the field exists; repr only leaves it out";
}

TEST_F(Repr, EveryFieldStoragePrints) {
  ASSERT_GE(RAllType(), 0) << ffk::test::FetchError();
  ffk_any items[] = {ffk_any_int(1), ffk_any_int(2)};
  OwnedAny arr(ffk_any_object_steal(&ffk_array_new(items, 2)->header));
  OwnedAny o(Create(RAllType(), {ffk_any_int(-1), ffk_any_float(0.25), ffk_any_bool(true),
                                 ffk_any_raw_str("s"), arr.v}));
  EXPECT_EQ(R(o.v), "test.repr.All(i=-1, f=0.25, b=True, s=\"s\", arr=(1, 2), maybe=None, any=None, dev=cpu:0)");
  OwnedAny p(Create(RPointType(), {ffk_any_int(4)}));
  OwnedAny full(Create(RAllType(), {ffk_any_int(0), ffk_any_float(1.0), ffk_any_bool(false), ffk_any_raw_str(""),
                                    arr.v, p.v, p.v, ffk_any_device(ffk_device(FFK_DEVICE_CUDA, 1))}));
  EXPECT_EQ(R(full.v),
            "test.repr.All(i=0, f=1.0, b=False, s=\"\", arr=(1, 2), maybe=test.repr.Point(x=4, y=2.5), "
            "any=test.repr.Point(x=4, y=2.5), dev=cuda:1)")
      << "an object reached twice (not a cycle) prints in full both times";
}

TEST_F(Repr, ReflectedObjectsInsideContainers) {
  OwnedAny p(Create(RPointType(), {ffk_any_int(1)}));
  ffk_any items[] = {p.v, p.v};
  OwnedAny arr(ffk_any_object_steal(&ffk_array_new(items, 2)->header));
  EXPECT_EQ(R(arr.v), "(test.repr.Point(x=1, y=2.5), test.repr.Point(x=1, y=2.5))");
}

TEST_F(Repr, ACycleThroughAWritableFieldEndsInEllipsis) {
  ASSERT_GE(RNodeType(), 0) << ffk::test::FetchError();
  OwnedAny a(Create(RNodeType(), {ffk_any_int(1)}));
  OwnedAny b(Create(RNodeType(), {ffk_any_int(2), a.v}));
  EXPECT_EQ(R(b.v), "test.repr.RNode(value=2, next=test.repr.RNode(value=1, next=None))");
  ASSERT_EQ(ffk_object_set_field(a.v.v_obj, "next", &b.v), 0);  // a -> b -> a
  EXPECT_EQ(R(a.v), "test.repr.RNode(value=1, next=test.repr.RNode(value=2, next=...))");
  OwnedAny self(Create(RNodeType(), {ffk_any_int(3)}));
  ASSERT_EQ(ffk_object_set_field(self.v.v_obj, "next", &self.v), 0);
  EXPECT_EQ(R(self.v), "test.repr.RNode(value=3, next=...)");
  // Break the cycles so every object is freed.
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_object_set_field(a.v.v_obj, "next", &none), 0);
  ASSERT_EQ(ffk_object_set_field(self.v.v_obj, "next", &none), 0);
}

TEST_F(Repr, ARegisteredSlotWinsOverTheFields) {
  static const ffk_field_def fields[] = {{"v", sizeof(ffk_object), "int", 0, ffk_any_none(), nullptr}};
  ffk_type_def def = {};
  def.key = "test.repr.Slotted";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(ffk_object) + sizeof(int64_t);
  def.fields = fields;
  def.nfields = 1;
  int32_t t = ffk_type_define(&def);
  ASSERT_GE(t, 0) << ffk::test::FetchError();
  ASSERT_EQ(ffk_type_set_repr(t, [](ffk_object*, ffk_repr_ctx* ctx) { return ffk_repr_append(ctx, "<slotted>", 9); }),
            0);
  OwnedAny o(Create(t, {ffk_any_int(5)}));
  EXPECT_EQ(R(o.v), "<slotted>");
  ASSERT_EQ(ffk_type_set_repr(t, nullptr), 0);
  EXPECT_EQ(R(o.v), "test.repr.Slotted(v=5)") << "without the slot it prints from its fields";
}

TEST_F(Repr, ReflectedReprFailsCleanlyWhenMemoryRunsOut) {
  OwnedAny p(Create(RPointType(), {ffk_any_int(1)}));
  OwnedAny o(Create(RLabelledType(), {ffk_any_int(2), ffk_any_float(3.0), ffk_any_raw_str(std::string(100, 'l').c_str())},
                    {"y", "label"}));
  ffk_any items[] = {p.v, o.v};
  OwnedAny arr(ffk_any_object_steal(&ffk_array_new(items, 2)->header));
  ffk::test::SweepAllocationFailures([&] {
    ffk_string* r = ffk_any_repr(&arr.v);
    if (r == nullptr) return false;
    ffk_object_release(&r->header);
    return true;
  });
}

}  // namespace
