// ffikit/access_path.h: making, reading, comparing and printing access paths, and their
// reflected methods (what every binding calls).
#include <ffikit/ffikit.h>
#include <ffikit/access_path.h>

#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

class AccessPath : public ffk::test::Test {};

// A path as an owned ffk_any (releases on scope exit).
struct Path {
  ffk_object* p;
  explicit Path(ffk_object* x) : p(x) { EXPECT_NE(x, nullptr) << FetchError(); }
  Path(const Path&) = delete;
  ~Path() { ffk_object_release(p); }
  ffk_any any() const {
    ffk_any v = ffk_any_none();
    v.type_index = p->type_index;
    v.v_obj = p;
    return v;
  }
  std::string repr() const { return ffk::test::Repr(any()); }
};

ffk_object* Ext(ffk_object* parent, int kind, ffk_any key) {
  ffk_object* out = ffk_access_path_extend(parent, kind, &key);
  ffk_any_release(&key);
  return out;
}

TEST_F(AccessPath, PrintsAsTvmFfiDoes) {
  Path root(ffk_access_path_root());
  EXPECT_EQ(root.repr(), "<root>");
  Path body(Ext(root.p, FFK_ACCESS_ATTR, ffk_any_raw_str("body")));
  Path one(Ext(body.p, FFK_ACCESS_ARRAY_ITEM, ffk_any_int(1)));
  Path k(Ext(one.p, FFK_ACCESS_MAP_ITEM, ffk_any_raw_str("k")));
  EXPECT_EQ(k.repr(), "<root>.body[1][\"k\"]");
  Path three(Ext(k.p, FFK_ACCESS_MAP_ITEM, ffk_any_int(3)));
  Path none(Ext(three.p, FFK_ACCESS_MAP_ITEM, ffk_any_none()));
  EXPECT_EQ(none.repr(), "<root>.body[1][\"k\"][3][None]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_ATTR_MISSING, ffk_any_raw_str("x"))).repr(), "<root>[<missing:\"x\">]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_ARRAY_ITEM_MISSING, ffk_any_int(2))).repr(), "<root>[<missing:2>]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_MAP_ITEM_MISSING, ffk_any_raw_str("k"))).repr(), "<root>[<missing:\"k\">]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_MAP_ITEM, ffk_any_float(1.5))).repr(), "<root>[1.5]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_MAP_ITEM, ffk_any_bool(true))).repr(), "<root>[True]");
  EXPECT_EQ(Path(Ext(root.p, FFK_ACCESS_MAP_ITEM, ffk_any_raw_str("a\"b"))).repr(), "<root>[\"a\\\"b\"]");
  // A step prints as its part of the path.
  int kind;
  OwnedAny key;
  ASSERT_EQ(ffk_access_path_last_step(k.p, &kind, &key.v), 1);
  EXPECT_EQ(kind, FFK_ACCESS_MAP_ITEM);
  EXPECT_EQ(ffk::test::Repr(key.v), "\"k\"");
}

TEST_F(AccessPath, ParentDepthAndStepsShareTheParent) {
  Path root(ffk_access_path_root());
  Path a(Ext(root.p, FFK_ACCESS_ATTR, ffk_any_raw_str("a")));
  Path b(Ext(a.p, FFK_ACCESS_ARRAY_ITEM, ffk_any_int(0)));
  EXPECT_EQ(ffk_access_path_depth(root.p), 0);
  EXPECT_EQ(ffk_access_path_depth(b.p), 2);
  EXPECT_EQ(ffk_access_path_parent(b.p), a.p);  // shared, not copied
  EXPECT_EQ(ffk_access_path_parent(root.p), nullptr);
  int kind = 7;
  OwnedAny key;
  EXPECT_EQ(ffk_access_path_last_step(root.p, &kind, &key.v), 0);
  EXPECT_EQ(key.v.type_index, FFK_TYPE_NONE);
  // Reflection sees the fields.
  OwnedAny depth, parent;
  ASSERT_EQ(ffk_object_get_field(b.p, "depth", &depth.v), 0) << FetchError();
  EXPECT_EQ(depth.v.v_int, 2);
  ASSERT_EQ(ffk_object_get_field(b.p, "parent", &parent.v), 0);
  EXPECT_EQ(parent.v.v_obj, a.p);
  OwnedAny step;
  ASSERT_EQ(ffk_object_get_field(root.p, "step", &step.v), 0);
  EXPECT_EQ(step.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(ffk_type_key(ffk_access_path_type_index()), std::string("ffikit.AccessPath"));
  EXPECT_EQ(ffk_type_key(ffk_access_step_type_index()), std::string("ffikit.AccessStep"));
}

TEST_F(AccessPath, EqualityAndPrefixCompareSteps) {
  Path r1(ffk_access_path_root()), r2(ffk_access_path_root());
  Path x1(Ext(r1.p, FFK_ACCESS_ATTR, ffk_any_raw_str("x")));
  ffk_string* s = ffk_string_new("x", 1);
  Path x2(Ext(r2.p, FFK_ACCESS_ATTR, ffk_any_object_steal(reinterpret_cast<ffk_object*>(s))));
  Path x1i(Ext(x1.p, FFK_ACCESS_ARRAY_ITEM, ffk_any_int(1)));
  Path x2i(Ext(x2.p, FFK_ACCESS_ARRAY_ITEM, ffk_any_int(1)));
  Path x2m(Ext(x2.p, FFK_ACCESS_MAP_ITEM, ffk_any_int(1)));  // same key, another kind
  EXPECT_EQ(ffk_access_path_equal(r1.p, r2.p), 1);
  EXPECT_EQ(ffk_access_path_equal(x1i.p, x2i.p), 1);
  EXPECT_EQ(ffk_access_path_equal(x1i.p, x2m.p), 0);
  EXPECT_EQ(ffk_access_path_equal(x1.p, x1i.p), 0);
  EXPECT_EQ(ffk_access_path_is_prefix_of(r1.p, x2i.p), 1);
  EXPECT_EQ(ffk_access_path_is_prefix_of(x1.p, x2i.p), 1);
  EXPECT_EQ(ffk_access_path_is_prefix_of(x1i.p, x2i.p), 1);
  EXPECT_EQ(ffk_access_path_is_prefix_of(x1i.p, x1.p), 0);
  EXPECT_EQ(ffk_access_path_is_prefix_of(x2m.p, x1i.p), 0);
}

TEST_F(AccessPath, BadArgumentsAreErrors) {
  Path root(ffk_access_path_root());
  EXPECT_EQ(ffk_access_path_extend(root.p, 6, nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"kind 6"}));
  ffk_any i = ffk_any_int(1), s = ffk_any_raw_str("a");
  EXPECT_EQ(ffk_access_path_extend(root.p, FFK_ACCESS_ATTR, &i), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"must be a str", "int"}));
  EXPECT_EQ(ffk_access_path_extend(root.p, FFK_ACCESS_ARRAY_ITEM_MISSING, &s), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"must be an int", "str"}));
  ffk_array* arr = ffk_array_new(nullptr, 0);
  ffk_object* not_path = reinterpret_cast<ffk_object*>(arr);
  EXPECT_EQ(ffk_access_path_extend(not_path, FFK_ACCESS_ATTR, &s), nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"AccessPath", "Array"}));
  EXPECT_EQ(ffk_access_path_depth(not_path), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  EXPECT_EQ(ffk_access_path_equal(root.p, not_path), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  EXPECT_EQ(ffk_access_path_is_prefix_of(nullptr, root.p), -1);
  EXPECT_TRUE(PendingError("TypeError", {"None"}));
  EXPECT_EQ(ffk_access_path_parent(not_path), nullptr);
  ffk_object_release(not_path);
}

// The reflected methods, called as a binding calls them (by name through reflection).
TEST_F(AccessPath, ReflectedMethodsMirrorTvmFfis) {
  Path root(ffk_access_path_root());
  OwnedAny out;
  ffk_any name = ffk_any_raw_str("body");
  ASSERT_EQ(ffk_object_call_method(root.p, "_attr", &name, 1, &out.v), 0) << FetchError();
  Path body(out.v.v_obj);
  out.v = ffk_any_none();
  ffk_any idx = ffk_any_int(2);
  ASSERT_EQ(ffk_object_call_method(body.p, "_array_item_missing", &idx, 1, &out.v), 0) << FetchError();
  Path missing(out.v.v_obj);
  out.v = ffk_any_none();
  EXPECT_EQ(missing.repr(), "<root>.body[<missing:2>]");
  for (const char* m : {"_attr_missing", "_map_item", "_map_item_missing"}) {
    ASSERT_EQ(ffk_object_call_method(root.p, m, &name, 1, &out.v), 0) << m << FetchError();
    ffk_any_release(&out.v);
  }
  ASSERT_EQ(ffk_object_call_method(root.p, "_array_item", &idx, 1, &out.v), 0) << FetchError();
  ffk_any_release(&out.v);
  // _root is static.
  ASSERT_EQ(ffk_object_call_method(body.p, "_root", nullptr, 0, &out.v), 0) << FetchError();
  EXPECT_EQ(ffk::test::Repr(out.v), "<root>");
  ffk_any_release(&out.v);
  ffk_any arg = body.any();
  ASSERT_EQ(ffk_object_call_method(root.p, "_is_prefix_of", &arg, 1, &out.v), 0);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_BOOL);
  EXPECT_EQ(out.v.v_int, 1);
  ASSERT_EQ(ffk_object_call_method(body.p, "_path_equal", &arg, 1, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 1);
  arg = root.any();
  ASSERT_EQ(ffk_object_call_method(body.p, "_path_equal", &arg, 1, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 0);
  ASSERT_EQ(ffk_object_call_method(missing.p, "_to_steps", nullptr, 0, &out.v), 0) << FetchError();
  EXPECT_EQ(ffk::test::Repr(out.v), "(.body, [<missing:2>])");
  ffk_array* steps = reinterpret_cast<ffk_array*>(out.v.v_obj);
  ASSERT_EQ(steps->size, 2);
  ffk_any step0 = steps->data[0];
  OwnedAny extended;
  ASSERT_EQ(ffk_object_call_method(root.p, "_extend", &step0, 1, &extended.v), 0) << FetchError();
  EXPECT_EQ(ffk::test::Repr(extended.v), "<root>.body");
  ffk_any_release(&out.v);
  out.v = ffk_any_none();
  // A wrong argument type is the typed call's TypeError.
  ASSERT_EQ(ffk_object_call_method(root.p, "_attr", &idx, 1, &out.v), -1);
  EXPECT_TRUE(PendingError("TypeError"));
  ASSERT_EQ(ffk_object_call_method(root.p, "_extend", &arg, 1, &out.v), -1);
  EXPECT_TRUE(PendingError("TypeError"));
}

TEST_F(AccessPath, AllocationFailuresLeaveNothingBehind) {
  Path root(ffk_access_path_root());
  ffk::test::SweepAllocationFailures([&] {
    ffk_any key = ffk_any_raw_str("some key");
    ffk_object* p = ffk_access_path_extend(root.p, FFK_ACCESS_MAP_ITEM, &key);
    if (p == nullptr) return false;
    ffk_object* q = ffk_access_path_extend(p, FFK_ACCESS_ATTR, &key);
    ffk_object_release(p);
    if (q == nullptr) return false;
    OwnedAny repr(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_any_repr(&key))));
    ffk_object_release(q);
    return repr.v.v_obj != nullptr;
  });
}

}  // namespace
