// ffikit/repr.h: the text of every value, floats like Python, quoting, cycles and depth.
#include <ffikit/ffikit.h>

#include <cmath>
#include <limits>
#include <string>

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

}  // namespace
