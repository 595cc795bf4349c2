// ffikit/structural_visit.h: walk, visit, map and mutate. The orders, regions and
// rewrites expected below are what tvm_ffi 0.1.15 answers for the same py_class types
// and values (structural_walk / structural_map / structural_mutate); the cycle and depth
// cases are ffikit's (tvm_ffi has no answer there but a crash).

#include <ffikit/ffikit.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"
#include "tests/support/values.h"

namespace {

class StructuralVisit : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;
using ffk::test::Repr;
using ffk::test::AnyField;
using ffk::test::Arr;
using ffk::test::DefineTwoFields;
using ffk::test::DictOf;
using ffk::test::ListOf;
using ffk::test::I;
using ffk::test::Make;
using ffk::test::MapOf;
using ffk::test::Ref;
using ffk::test::S;
using ffk::test::TwoFields;

int32_t VarType() {
  static int32_t t = DefineTwoFields("test.vis.Var", {AnyField("name", offsetof(TwoFields, x), FFK_FIELD_COMPARE_OFF)}, FFK_S_KIND_VAR);
  return t;
}
int32_t TVarType() {
  static int32_t t = DefineTwoFields("test.vis.TVar", {AnyField("ty", offsetof(TwoFields, x))}, FFK_S_KIND_VAR);
  return t;
}
int32_t AddType() {
  static int32_t t = DefineTwoFields("test.vis.Add", {AnyField("a", offsetof(TwoFields, x)), AnyField("b", offsetof(TwoFields, y))}, 0);
  return t;
}
int32_t LamType() {
  static int32_t t =
      DefineTwoFields("test.vis.Lam", {AnyField("p", offsetof(TwoFields, x), FFK_FIELD_S_DEF), AnyField("body", offsetof(TwoFields, y))}, 0);
  return t;
}
int32_t LamSType() {
  static int32_t t =
      DefineTwoFields("test.vis.LamS", {AnyField("p", offsetof(TwoFields, x), FFK_FIELD_S_DEF_SIMPLE), AnyField("body", offsetof(TwoFields, y))}, 0);
  return t;
}
int32_t IgnType() {
  static int32_t t =
      DefineTwoFields("test.vis.Ign", {AnyField("a", offsetof(TwoFields, x)), AnyField("b", offsetof(TwoFields, y), FFK_FIELD_COMPARE_OFF)}, 0);
  return t;
}
int32_t BoxType() {  // a writable field, so a test can close a cycle through an object
  static int32_t t = DefineTwoFields("test.vis.Box", {AnyField("v", offsetof(TwoFields, x), FFK_FIELD_WRITABLE)}, 0);
  return t;
}

ffk_any Var(const char* name) { return Make(VarType(), {S(name)}); }
ffk_any TVar(ffk_any ty) { return Make(TVarType(), {ty}); }
ffk_any Add(ffk_any a, ffk_any b) { return Make(AddType(), {a, b}); }
ffk_any Lam(ffk_any p, ffk_any body) { return Make(LamType(), {p, body}); }
ffk_any LamS(ffk_any p, ffk_any body) { return Make(LamSType(), {p, body}); }
ffk_any Field(const ffk_any& obj, const char* name) {
  ffk_any out = ffk_any_none();
  EXPECT_EQ(ffk_object_get_field(obj.v_obj, name, &out), 0) << FetchError();
  return out;
}
bool Same(const ffk_any& a, const ffk_any& b) { return a.type_index == b.type_index && a.v_obj == b.v_obj; }

// What the spec's example prints for one visited value: the type key of an object, the
// value of a leaf.
std::string Label(const ffk_any* v) {
  if (v->type_index == FFK_TYPE_INT) return std::to_string(v->v_int);
  const char* p;
  size_t n;
  if (ffk_any_as_str(v, &p, &n) == 0) return std::string(p, n);
  ffk_error_clear();
  if (ffk_any_is_object(v)) return ffk_type_key(v->type_index);
  return Repr(*v);
}

// Lam(x, Add(x, [1, "s", None, {"k": 2.5}])), tvm_ffi's example.
ffk_any Example(ffk_any* x_out = nullptr) {
  ffk_any x = Var("x");
  if (x_out) *x_out = Ref(x);
  return Lam(Ref(x), Add(x, Arr({I(1), S("s"), ffk_any_none(), MapOf({{S("k"), ffk_any_float(2.5)}})})));
}

struct Recorder {
  std::vector<std::string> seen;
  std::vector<int> regions;
  std::string skip_at, stop_at;
  bool fail_at_add = false;
};

int Record(void* ctx, const ffk_any* value, const ffk_walk_step*, ffk_def_region_kind region) {
  auto* r = static_cast<Recorder*>(ctx);
  std::string label = Label(value);
  r->seen.push_back(label);
  r->regions.push_back(region);
  if (r->fail_at_add && label == "test.vis.Add")
    return ffk_error_set(FFK_ERR_VALUE, "boom at %s", label.c_str());
  if (label == r->stop_at) return FFK_WALK_STOP;
  if (label == r->skip_at) return FFK_WALK_SKIP;
  return 7;  // any other value goes on, as tvm_ffi takes an int other than 1
}

std::vector<std::string> Walk(const ffk_any& root, ffk_walk_order order, Recorder* r = nullptr) {
  Recorder local;
  if (r == nullptr) r = &local;
  EXPECT_EQ(ffk_structural_walk(&root, order, Record, r), 0) << FetchError();
  return r->seen;
}

using Strings = std::vector<std::string>;

TEST_F(StructuralVisit, WalkPreAndPostOrderMatchTvmFfi) {
  OwnedAny t(Example());
  EXPECT_EQ(Walk(t.v, FFK_WALK_PREORDER), (Strings{"test.vis.Lam", "test.vis.Var", "test.vis.Add", "test.vis.Var",
                                                    "ffikit.Array", "1", "s", "ffikit.Map", "2.5"}));
  EXPECT_EQ(Walk(t.v, FFK_WALK_POSTORDER), (Strings{"test.vis.Var", "test.vis.Var", "1", "s", "2.5", "ffikit.Map",
                                                     "ffikit.Array", "test.vis.Add", "test.vis.Lam"}));
}

TEST_F(StructuralVisit, WalkSkipsNoneMapKeysAndIgnoredFields) {
  OwnedAny none(ffk_any_none());
  EXPECT_EQ(Walk(none.v, FFK_WALK_PREORDER), Strings{});
  OwnedAny m(MapOf({{S("a"), Arr({I(1)})}}));
  EXPECT_EQ(Walk(m.v, FFK_WALK_PREORDER), (Strings{"ffikit.Map", "ffikit.Array", "1"}));
  OwnedAny ign(Make(IgnType(), {I(1), I(2)}));
  EXPECT_EQ(Walk(ign.v, FFK_WALK_POSTORDER), (Strings{"1", "test.vis.Ign"}));
}

TEST_F(StructuralVisit, WalkRegionsFollowDefinitionFields) {
  OwnedAny t(Example());
  Recorder r;
  Walk(t.v, FFK_WALK_PREORDER, &r);
  EXPECT_EQ(r.regions, (std::vector<int>{0, FFK_DEF_REGION_PATTERN, 0, 0, 0, 0, 0, 0, 0}));
  // A variable defined in a simple region is met there; its own fields are uses.
  OwnedAny x(Var("x"));
  OwnedAny tv(TVar(Ref(x.v)));
  OwnedAny s(LamS(Ref(tv.v), Ref(tv.v)));
  Recorder rs;
  Walk(s.v, FFK_WALK_PREORDER, &rs);
  EXPECT_EQ(rs.seen, (Strings{"test.vis.LamS", "test.vis.TVar", "test.vis.Var", "test.vis.TVar", "test.vis.Var"}));
  EXPECT_EQ(rs.regions, (std::vector<int>{0, FFK_DEF_REGION_SIMPLE, 0, 0, 0}));
  // Inside a pattern region everything is a pattern, a nested simple field too.
  OwnedAny p(Lam(LamS(Ref(x.v), I(1)), I(2)));
  Recorder rp;
  Walk(p.v, FFK_WALK_PREORDER, &rp);
  EXPECT_EQ(rp.regions, (std::vector<int>{0, 1, 1, 1, 0}));
}

TEST_F(StructuralVisit, WalkSkipLeavesOutChildrenOnlyInPreOrder) {
  OwnedAny t(Example());
  Recorder r;
  r.skip_at = "test.vis.Add";
  EXPECT_EQ(Walk(t.v, FFK_WALK_PREORDER, &r), (Strings{"test.vis.Lam", "test.vis.Var", "test.vis.Add"}));
  Recorder post;
  post.skip_at = "test.vis.Add";
  EXPECT_EQ(Walk(t.v, FFK_WALK_POSTORDER, &post).size(), 9u);
}

TEST_F(StructuralVisit, WalkStopEndsTheWholeWalk) {
  OwnedAny t(Example());
  Recorder r;
  r.stop_at = "1";
  EXPECT_EQ(ffk_structural_walk(&t.v, FFK_WALK_PREORDER, Record, &r), 1);
  EXPECT_EQ(r.seen, (Strings{"test.vis.Lam", "test.vis.Var", "test.vis.Add", "test.vis.Var", "ffikit.Array", "1"}));
}

TEST_F(StructuralVisit, WalkPassesACallbackErrorThroughUnchanged) {
  OwnedAny t(Example());
  Recorder r;
  r.fail_at_add = true;
  EXPECT_EQ(ffk_structural_walk(&t.v, FFK_WALK_POSTORDER, Record, &r), -1);
  EXPECT_TRUE(PendingError("ValueError", {"boom at test.vis.Add"}));
}

TEST_F(StructuralVisit, WalkRefusesBadArguments) {
  OwnedAny t(I(1));
  EXPECT_EQ(ffk_structural_walk(&t.v, (ffk_walk_order)5, Record, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Unknown structural walk order: 5"}));
  EXPECT_EQ(ffk_structural_walk(nullptr, FFK_WALK_PREORDER, Record, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
}

struct PathRecorder {
  std::vector<std::string> paths;
  std::vector<std::string> names;
};

int RecordPath(void* ctx, const ffk_any*, const ffk_walk_step* where, ffk_def_region_kind) {
  auto* r = static_cast<PathRecorder*>(ctx);
  ffk_object* path = ffk_walk_step_path(where);
  if (path == nullptr) return -1;
  ffk_any p = ffk_any_object_steal(path);
  r->paths.push_back(Repr(p));
  ffk_any_release(&p);
  r->names.push_back(where->kind == FFK_ACCESS_ATTR ? where->field : "");
  return FFK_WALK_ADVANCE;
}

TEST_F(StructuralVisit, WalkStepsGiveFieldNamesAndAccessPaths) {
  OwnedAny t(Example());
  PathRecorder r;
  ASSERT_EQ(ffk_structural_walk(&t.v, FFK_WALK_PREORDER, RecordPath, &r), 0) << FetchError();
  EXPECT_EQ(r.paths, (Strings{"<root>", "<root>.p", "<root>.body", "<root>.body.a", "<root>.body.b",
                              "<root>.body.b[0]", "<root>.body.b[1]", "<root>.body.b[3]", "<root>.body.b[3][\"k\"]"}));
  EXPECT_EQ(r.names, (Strings{"", "p", "body", "a", "b", "", "", "", ""}));
}

TEST_F(StructuralVisit, WalkEndsOnCyclesThroughListsAndObjects) {
  OwnedAny l(ListOf({I(1)}));
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(l.v.v_obj), &l.v), 0);  // l = [1, l]
  EXPECT_EQ(Walk(l.v, FFK_WALK_PREORDER), (Strings{"ffikit.List", "1", "ffikit.List"}));
  OwnedAny box(Make(BoxType(), {I(0)}));
  ASSERT_EQ(ffk_object_set_field(box.v.v_obj, "v", &box.v), 0) << FetchError();  // box.v = box
  EXPECT_EQ(Walk(box.v, FFK_WALK_POSTORDER), (Strings{"test.vis.Box", "test.vis.Box"}));
  // Break the cycles so that the fixture finds nothing alive.
  ffk_list_clear(reinterpret_cast<ffk_list*>(l.v.v_obj));
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_object_set_field(box.v.v_obj, "v", &none), 0);
}

// An object whose one field is a writable Array: stored as an object pointer, read by
// the walk borrowed, inside its read section.
struct Holder {
  ffk_object header;
  ffk_object* items;
};
int32_t HolderType() {
  static int32_t t = [] {
    ffk_field_def f = {"items", offsetof(Holder, items), "Array", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr};
    ffk_type_def def = {};
    def.key = "test.vis.Holder";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(Holder);
    def.fields = &f;
    def.nfields = 1;
    int32_t t = ffk_type_define(&def);
    EXPECT_GE(t, 0) << FetchError();
    return t;
  }();
  return t;
}

TEST_F(StructuralVisit, WalkKeepsAFieldValueACallbackReplacesAliveWhileBelowIt) {
  // The walk reads fields without a reference: a callback that drops the last one of the
  // Array it is walking (holder.items = []) must not free it under the walk (ASan).
  OwnedAny holder(Make(HolderType(), {Arr({S("element one"), S("element two"), S("element three")})}));
  ASSERT_EQ(ffk_object_use_count(holder.v.v_obj), 1u);
  for (ffk_walk_order order : {FFK_WALK_PREORDER, FFK_WALK_POSTORDER}) {
    struct Ctx {
      ffk_object* holder;
      Strings seen;
    } ctx{holder.v.v_obj, {}};
    auto cb = [](void* p, const ffk_any* v, const ffk_walk_step*, ffk_def_region_kind) {
      auto* c = static_cast<Ctx*>(p);
      c->seen.push_back(Label(v));
      if (c->seen.back() == "element one") {
        ffk_any empty = Arr({});
        int rc = ffk_object_set_field(c->holder, "items", &empty);  // the walked Array's last reference goes
        ffk_any_release(&empty);
        if (rc != 0) return -1;
      }
      return (int)FFK_WALK_ADVANCE;
    };
    ffk_any fresh = Arr({S("element one"), S("element two"), S("element three")});
    ASSERT_EQ(ffk_object_set_field(holder.v.v_obj, "items", &fresh), 0) << FetchError();
    ffk_any_release(&fresh);
    ASSERT_EQ(ffk_structural_walk(&holder.v, order, cb, &ctx), 0) << FetchError();
    Strings expected = order == FFK_WALK_PREORDER
                           ? Strings{"test.vis.Holder", "ffikit.Array", "element one", "element two", "element three"}
                           : Strings{"element one", "element two", "element three", "ffikit.Array", "test.vis.Holder"};
    EXPECT_EQ(ctx.seen, expected);
    OwnedAny now(Field(holder.v, "items"));
    EXPECT_EQ(Repr(now.v), "()");
  }
}

ffk_any Nested(int levels) {
  ffk_any v = I(0);
  for (int i = 0; i < levels; ++i) v = Arr({v});
  return v;
}

TEST_F(StructuralVisit, DepthLimitIsARuntimeErrorNotACrash) {
  OwnedAny ok(Nested(FFK_STRUCTURAL_MAX_DEPTH - 1));
  EXPECT_EQ(Walk(ok.v, FFK_WALK_POSTORDER).size(), (size_t)FFK_STRUCTURAL_MAX_DEPTH);
  OwnedAny deep(Nested(FFK_STRUCTURAL_MAX_DEPTH + 50));
  Recorder r;
  EXPECT_EQ(ffk_structural_walk(&deep.v, FFK_WALK_PREORDER, Record, &r), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"deeper than 1000"}));
  OwnedAny out;
  auto keep = [](void*, ffk_mutator*, const ffk_any* v, ffk_any* o) { return ffk_any_to_owned(v, o); };
  EXPECT_EQ(ffk_structural_map(&deep.v, FFK_WALK_POSTORDER, keep, nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"deeper than 1000"}));
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
}

// ---- Visit ------------------------------------------------------------------------------

struct VisitLog {
  std::vector<std::string> seen;
  std::vector<int> regions;
};

// Descends into Add's `a` only, and into everything else by default (tvm_ffi's example).
int OwnDescent(void* ctx, ffk_visitor* v, const ffk_any* value, const ffk_walk_step*) {
  auto* log = static_cast<VisitLog*>(ctx);
  log->seen.push_back(Label(value));
  log->regions.push_back(ffk_visitor_region(v));
  if (value->type_index == AddType()) {
    ffk_any a = Field(*value, "a");
    int rc = ffk_visitor_visit(v, &a);
    ffk_any_release(&a);
    return rc;
  }
  if (value->type_index == FFK_TYPE_INT && value->v_int == 2) return 1;  // stop
  return ffk_visitor_default_visit(v, value);
}

TEST_F(StructuralVisit, VisitCallbackOwnsTheDescent) {
  OwnedAny t(Lam(Var("x"), Add(Arr({I(1)}), Arr({I(3)}))));
  VisitLog log;
  EXPECT_EQ(ffk_structural_visit(&t.v, OwnDescent, &log), 0) << FetchError();
  EXPECT_EQ(log.seen, (Strings{"test.vis.Lam", "test.vis.Var", "test.vis.Add", "ffikit.Array", "1"}));
  EXPECT_EQ(log.regions, (std::vector<int>{0, 1, 0, 0, 0}));
  OwnedAny s(Arr({I(1), I(2), I(3)}));
  VisitLog stop;
  EXPECT_EQ(ffk_structural_visit(&s.v, OwnDescent, &stop), 1);
  EXPECT_EQ(stop.seen, (Strings{"ffikit.Array", "1", "2"}));
}

int VisitSelf(void*, ffk_visitor* v, const ffk_any* value, const ffk_walk_step*) {
  return ffk_visitor_visit(v, value);  // never ends by itself
}

TEST_F(StructuralVisit, VisitThatRevisitsItsOwnValueEndsAtTheDepthLimit) {
  OwnedAny t(Arr({I(1)}));
  EXPECT_EQ(ffk_structural_visit(&t.v, VisitSelf, nullptr), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"deeper than 1000"}));
}

TEST_F(StructuralVisit, VisitorRegionsNestWithPatternPrecedence) {
  auto check = [](void*, ffk_visitor* v, const ffk_any*, const ffk_walk_step*) {
    EXPECT_EQ(ffk_visitor_region(v), FFK_DEF_REGION_NONE);
    ffk_def_region_kind a = ffk_visitor_enter_region(v, FFK_DEF_REGION_SIMPLE);
    EXPECT_EQ(ffk_visitor_region(v), FFK_DEF_REGION_SIMPLE);
    ffk_def_region_kind b = ffk_visitor_enter_region(v, FFK_DEF_REGION_PATTERN);
    ffk_def_region_kind c = ffk_visitor_enter_region(v, FFK_DEF_REGION_NONE);
    EXPECT_EQ(ffk_visitor_region(v), FFK_DEF_REGION_PATTERN);
    ffk_visitor_leave_region(v, c);
    ffk_visitor_leave_region(v, b);
    EXPECT_EQ(ffk_visitor_region(v), FFK_DEF_REGION_SIMPLE);
    ffk_visitor_leave_region(v, a);
    EXPECT_EQ(ffk_visitor_region(v), FFK_DEF_REGION_NONE);
    return 0;
  };
  OwnedAny t(I(1));
  EXPECT_EQ(ffk_structural_visit(&t.v, check, nullptr), 0);
}

// ---- Map --------------------------------------------------------------------------------

// int -> int + `add`, everything else unchanged; counts calls.
struct IntAdder {
  int64_t add = 1;
  int calls = 0;
  std::vector<std::string> seen;
};

int AddToInts(void* ctx, ffk_mutator*, const ffk_any* v, ffk_any* out) {
  auto* a = static_cast<IntAdder*>(ctx);
  ++a->calls;
  a->seen.push_back(Label(v));
  if (v->type_index == FFK_TYPE_INT) {
    *out = ffk_any_int(v->v_int + a->add);
    return 0;
  }
  return ffk_any_to_owned(v, out);
}

TEST_F(StructuralVisit, MapRebuildsOnlyChangedParentsAndSharesTheRest) {
  // Add([1, 2], Add("s", "t")): ints change, the inner Add does not.
  OwnedAny inner(Add(S("s"), S("t")));
  OwnedAny t(Add(Arr({I(1), I(2)}), Ref(inner.v)));
  IntAdder adder;
  OwnedAny out;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out.v), 0) << FetchError();
  EXPECT_EQ(Repr(out.v), "test.vis.Add(a=(2, 3), b=test.vis.Add(a=\"s\", b=\"t\"))");
  EXPECT_FALSE(Same(out.v, t.v));
  OwnedAny b(Field(out.v, "b"));
  EXPECT_TRUE(Same(b.v, inner.v)) << "the unchanged subtree is shared";
  EXPECT_EQ(Repr(t.v), "test.vis.Add(a=(1, 2), b=test.vis.Add(a=\"s\", b=\"t\"))") << "the source is unchanged";
  // Nothing changes: the very same root comes back.
  OwnedAny strs(Add(S("a"), Arr({S("b")})));
  OwnedAny same;
  ASSERT_EQ(ffk_structural_map(&strs.v, FFK_WALK_POSTORDER, AddToInts, &adder, &same.v), 0);
  EXPECT_TRUE(Same(same.v, strs.v));
}

TEST_F(StructuralVisit, MapCallbacksRunForNoneInPostAndPreOrder) {
  OwnedAny t(Arr({I(1), ffk_any_none()}));
  IntAdder post, pre;
  OwnedAny a, b;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_POSTORDER, AddToInts, &post, &a.v), 0);
  EXPECT_EQ(post.seen, (Strings{"1", "None", "ffikit.Array"}));
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_PREORDER, AddToInts, &pre, &b.v), 0);
  EXPECT_EQ(pre.seen, (Strings{"ffikit.Array", "1", "None"}));
}

// Pre-order: Add(a, b) -> Add(a, 7), then the callbacks run on what it returned.
int PreRewrite(void* ctx, ffk_mutator*, const ffk_any* v, ffk_any* out) {
  auto* log = static_cast<Strings*>(ctx);
  log->push_back(Label(v));
  if (v->type_index == AddType()) {
    *out = Add(Field(*v, "a"), I(7));
    return 0;
  }
  if (v->type_index == FFK_TYPE_INT) {
    *out = I(v->v_int * 10);
    return 0;
  }
  return ffk_any_to_owned(v, out);
}

TEST_F(StructuralVisit, MapPreOrderDescendsIntoTheCallbacksResult) {
  OwnedAny t(Add(I(1), I(2)));
  Strings log;
  OwnedAny out;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_PREORDER, PreRewrite, &log, &out.v), 0) << FetchError();
  EXPECT_EQ(Repr(out.v), "test.vis.Add(a=10, b=70)");
  EXPECT_EQ(log, (Strings{"test.vis.Add", "1", "7"}));
}

TEST_F(StructuralVisit, MapCopiesListsAndDictsOnWriteAndKeepsThemWhenUnchanged) {
  OwnedAny l(ListOf({I(1), I(2)}));
  OwnedAny d(DictOf({{S("a"), I(1)}, {S("b"), S("x")}}));
  IntAdder adder;
  OwnedAny l2, d2;
  ASSERT_EQ(ffk_structural_map(&l.v, FFK_WALK_POSTORDER, AddToInts, &adder, &l2.v), 0);
  ASSERT_EQ(ffk_structural_map(&d.v, FFK_WALK_POSTORDER, AddToInts, &adder, &d2.v), 0);
  EXPECT_EQ(l2.v.type_index, FFK_TYPE_LIST);
  EXPECT_FALSE(Same(l2.v, l.v));
  EXPECT_EQ(Repr(l2.v), "[2, 3]");
  EXPECT_EQ(Repr(l.v), "[1, 2]");
  EXPECT_EQ(d2.v.type_index, FFK_TYPE_DICT);
  EXPECT_EQ(Repr(d2.v), "{\"a\": 2, \"b\": \"x\"}");
  EXPECT_EQ(Repr(d.v), "{\"a\": 1, \"b\": \"x\"}");
  OwnedAny strs(ListOf({S("q")}));
  OwnedAny same;
  ASSERT_EQ(ffk_structural_map(&strs.v, FFK_WALK_POSTORDER, AddToInts, &adder, &same.v), 0);
  EXPECT_TRUE(Same(same.v, strs.v));
}

TEST_F(StructuralVisit, MapVariableWhoseDefinitionChangesIsFollowedByItsUses) {
  // Lam(a, Add(a, a)) with a = TVar(1), int -> int + 100 (tvm_ffi: one new TVar(101) everywhere).
  OwnedAny a(TVar(I(1)));
  OwnedAny t(Lam(Ref(a.v), Add(Ref(a.v), Ref(a.v))));
  IntAdder adder;
  adder.add = 100;
  OwnedAny out;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out.v), 0) << FetchError();
  OwnedAny p(Field(out.v, "p")), body(Field(out.v, "body"));
  OwnedAny ua(Field(body.v, "a")), ub(Field(body.v, "b"));
  EXPECT_FALSE(Same(p.v, a.v));
  EXPECT_TRUE(Same(ua.v, p.v));
  EXPECT_TRUE(Same(ub.v, p.v));
  EXPECT_EQ(Repr(p.v), "test.vis.TVar(ty=101)");
  // A free variable (no definition) is a use: it stays.
  OwnedAny free(Add(Ref(a.v), Ref(a.v)));
  OwnedAny out2;
  ASSERT_EQ(ffk_structural_map(&free.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out2.v), 0);
  EXPECT_TRUE(Same(out2.v, free.v));
}

struct Rename {
  ffk_any from, to;
};

int RenameVar(void* ctx, ffk_mutator*, const ffk_any* v, ffk_any* out) {
  auto* r = static_cast<Rename*>(ctx);
  return ffk_any_to_owned(Same(*v, r->from) ? &r->to : v, out);
}

TEST_F(StructuralVisit, MapPreOrderRenamesAVariableAtEveryOccurrence) {
  OwnedAny x(Var("x")), y(Var("y")), z(Var("z"));
  OwnedAny t(Lam(Ref(x.v), Add(Ref(x.v), Ref(y.v))));
  Rename r{x.v, z.v};
  OwnedAny out;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_PREORDER, RenameVar, &r, &out.v), 0) << FetchError();
  OwnedAny p(Field(out.v, "p")), body(Field(out.v, "body"));
  OwnedAny ua(Field(body.v, "a")), ub(Field(body.v, "b"));
  EXPECT_TRUE(Same(p.v, z.v));
  EXPECT_TRUE(Same(ua.v, z.v));
  EXPECT_TRUE(Same(ub.v, y.v));
}

TEST_F(StructuralVisit, MapEndsOnACycle) {
  OwnedAny l(ListOf({I(1)}));
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(l.v.v_obj), &l.v), 0);  // l = [1, l]
  IntAdder adder;
  OwnedAny out;
  ASSERT_EQ(ffk_structural_map(&l.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out.v), 0) << FetchError();
  // [2, l]: the inner occurrence is met on the path, so it is kept as it is.
  ffk_any second;
  ASSERT_EQ(ffk_list_get(reinterpret_cast<ffk_list*>(out.v.v_obj), 1, &second), 0);
  EXPECT_TRUE(Same(second, l.v));
  ffk_any_release(&second);
  ffk_list_clear(reinterpret_cast<ffk_list*>(l.v.v_obj));
}

int FailAtThree(void*, ffk_mutator*, const ffk_any* v, ffk_any* out) {
  if (v->type_index == FFK_TYPE_INT && v->v_int == 3) return ffk_error_set(FFK_ERR_VALUE, "no threes");
  if (v->type_index == FFK_TYPE_INT) {
    *out = ffk_any_int(v->v_int + 1);
    return 0;
  }
  return ffk_any_to_owned(v, out);
}

TEST_F(StructuralVisit, MapErrorLeavesOutNoneAndNothingAlive) {
  OwnedAny t(Add(ListOf({I(1), I(2)}), DictOf({{S("k"), Arr({I(3)})}})));
  OwnedAny out;
  EXPECT_EQ(ffk_structural_map(&t.v, FFK_WALK_POSTORDER, FailAtThree, nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"no threes"}));
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
}

TEST_F(StructuralVisit, MapSurvivesEveryAllocationFailure) {
  OwnedAny t(Lam(TVar(I(1)), Add(ListOf({I(1), S("s")}), DictOf({{S("k"), Arr({I(3)})}}))));
  int allocations = ffk::test::SweepAllocationFailures([&] {
    IntAdder adder;
    ffk_any out;
    if (ffk_structural_map(&t.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out) != 0) return false;
    ffk_any_release(&out);
    return true;
  });
  EXPECT_GT(allocations, 10) << "the sweep failed the map's own allocations";
}


void PlainDeleter(void* self, int which) {
  if (which & FFK_DELETER_DESTROY) ffk_any_release(&static_cast<TwoFields*>(self)->x);
  if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
}

TEST_F(StructuralVisit, MapRefusesToRebuildAnObjectReflectionDidNotMake) {
  // A Box its library allocated itself: shallow copy refuses it, so a change below is a
  // TypeError naming the type and the field, and an unchanged one is shared.
  ffk_object* raw = ffk_object_alloc(BoxType(), sizeof(TwoFields), PlainDeleter);
  ASSERT_NE(raw, nullptr) << FetchError();
  OwnedAny box(ffk_any_object_steal(raw));
  ffk_any one = I(1);
  ASSERT_EQ(ffk_object_set_field(raw, "v", &one), 0) << FetchError();
  IntAdder adder;
  OwnedAny out;
  EXPECT_EQ(ffk_structural_map(&box.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out.v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"test.vis.Box", "`v`", "not made by reflection"}));
  ffk_any s = S("text");
  ASSERT_EQ(ffk_object_set_field(raw, "v", &s), 0) << FetchError();
  ffk_any_release(&s);
  OwnedAny same;
  ASSERT_EQ(ffk_structural_map(&box.v, FFK_WALK_POSTORDER, AddToInts, &adder, &same.v), 0) << FetchError();
  EXPECT_TRUE(Same(same.v, box.v));
}

// ---- Mutate -----------------------------------------------------------------------------

// Swaps Add's operands (descending into each), doubles ints, default elsewhere.
int SwapAndDouble(void*, ffk_mutator* m, const ffk_any* v, ffk_any* out) {
  if (v->type_index == AddType()) {
    ffk_any a = Field(*v, "a"), b = Field(*v, "b"), na, nb;
    int rc = ffk_mutator_mutate(m, &b, &nb);
    if (rc == 0 && (rc = ffk_mutator_mutate(m, &a, &na)) != 0) ffk_any_release(&nb);
    ffk_any_release(&a);
    ffk_any_release(&b);
    if (rc != 0) return -1;
    *out = Add(nb, na);
    return 0;
  }
  if (v->type_index == FFK_TYPE_INT) {
    *out = ffk_any_int(v->v_int * 2);
    return 0;
  }
  return ffk_mutator_default_mutate(m, v, out);
}

TEST_F(StructuralVisit, MutateCallbackOwnsTheRewrite) {
  OwnedAny t(Arr({Add(I(1), I(2)), I(3), S("q")}));
  OwnedAny out;
  ASSERT_EQ(ffk_structural_mutate(&t.v, SwapAndDouble, nullptr, &out.v), 0) << FetchError();
  EXPECT_EQ(Repr(out.v), "(test.vis.Add(a=4, b=2), 6, \"q\")");
}

// tvm_ffi's mutate2: a variable met first (in its definition) gets TVar(999) recorded; D
// then returns the recorded value at the definition and at every use.
struct RemapLog {
  std::vector<int> regions;
  int misses = 0, hits = 0;
};

int RemapVars(void* ctx, ffk_mutator* m, const ffk_any* v, ffk_any* out) {
  auto* log = static_cast<RemapLog*>(ctx);
  log->regions.push_back(ffk_mutator_region(m));
  if (v->type_index == TVarType()) {
    ffk_any got;
    int found = ffk_mutator_var_remap_get(m, v, &got);
    if (found < 0) return -1;
    (found ? log->hits : log->misses)++;
    ffk_any_release(&got);
    if (found) return ffk_mutator_default_mutate(m, v, out);
    ffk_any repl = TVar(I(999));
    int rc = ffk_mutator_var_remap_set(m, v, &repl);
    ffk_any_release(&repl);
    if (rc != 0) return -1;
  }
  return ffk_mutator_default_mutate(m, v, out);
}

TEST_F(StructuralVisit, MutateVarRemapIsWhatDefaultMutateReturns) {
  OwnedAny a(TVar(I(1)));
  OwnedAny t(Lam(Ref(a.v), Add(Ref(a.v), Ref(a.v))));
  RemapLog log;
  OwnedAny out;
  ASSERT_EQ(ffk_structural_mutate(&t.v, RemapVars, &log, &out.v), 0) << FetchError();
  EXPECT_EQ(log.regions, (std::vector<int>{0, 1, 0, 0, 0}));
  EXPECT_EQ(log.misses, 1);
  EXPECT_EQ(log.hits, 2);
  OwnedAny p(Field(out.v, "p")), body(Field(out.v, "body"));
  OwnedAny ua(Field(body.v, "a"));
  EXPECT_EQ(Repr(p.v), "test.vis.TVar(ty=999)");
  EXPECT_TRUE(Same(ua.v, p.v));
}

int RemapAnInt(void*, ffk_mutator* m, const ffk_any* v, ffk_any* out) {
  ffk_any five = ffk_any_int(5), got;
  if (ffk_mutator_var_remap_set(m, &five, v) == 0) return ffk_error_set(FFK_ERR_RUNTIME, "accepted an int key");
  if (!PendingError("TypeError", {"Variable-remap key must be an object-backed value, got int"}))
    return ffk_error_set(FFK_ERR_RUNTIME, "wrong error");
  if (ffk_mutator_var_remap_get(m, &five, &got) != -1) return ffk_error_set(FFK_ERR_RUNTIME, "get accepted an int");
  ffk_error_clear();
  return ffk_any_to_owned(v, out);
}

TEST_F(StructuralVisit, MutateVarRemapRefusesANonObjectKey) {
  OwnedAny t(Add(I(1), I(2)));
  OwnedAny out;
  EXPECT_EQ(ffk_structural_mutate(&t.v, RemapAnInt, nullptr, &out.v), 0) << FetchError();
  EXPECT_TRUE(Same(out.v, t.v));
}

// ---- Threads ----------------------------------------------------------------------------

TEST_F(StructuralVisit, WalkAndMapReadSharedListsThroughSnapshots) {
  OwnedAny l(ListOf({I(1), DictOf({{S("k"), I(2)}})}));
  OwnedAny root(Arr({Ref(l.v), Ref(l.v)}));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    auto* list = reinterpret_cast<ffk_list*>(l.v.v_obj);
    for (int i = 0; !done.load(); ++i) {
      ffk_any v = i % 3 == 0 ? DictOf({{I(i), I(i)}}) : ffk_any_int(i);
      if (ffk_list_size(list) > 50) ffk_list_clear(list);
      ffk_list_append_steal(list, &v);
    }
  });
  for (int round = 0; round < 200; ++round) {
    Recorder r;
    EXPECT_EQ(ffk_structural_walk(&root.v, FFK_WALK_POSTORDER, Record, &r), 0) << FetchError();
    IntAdder adder;
    ffk_any out;
    EXPECT_EQ(ffk_structural_map(&root.v, FFK_WALK_POSTORDER, AddToInts, &adder, &out), 0) << FetchError();
    ffk_any_release(&out);
  }
  done = true;
  writer.join();
  ffk_list_clear(reinterpret_cast<ffk_list*>(l.v.v_obj));
}

// ---- Properties over generated values ----------------------------------------------------

// A seeded generator of nested values: Arrays, Lists, Maps, Dicts and objects, with ints,
// strings and None at the leaves, and shared subvalues.
struct Gen {
  uint64_t state;
  std::vector<ffk_any> made;  // earlier values, to share
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  ffk_any Value(int depth) {
    uint64_t r = Next() % 10;
    if (depth == 0 || r < 3) {
      if (r == 0) return ffk_any_none();
      if (r == 1) return S("leaf");
      return I((int64_t)(Next() % 100));
    }
    if (r == 3 && !made.empty()) return Ref(made[Next() % made.size()]);
    ffk_any v;
    switch (r) {
      case 4: v = Arr({Value(depth - 1), Value(depth - 1)}); break;
      case 5: v = ListOf({Value(depth - 1), Value(depth - 1), Value(depth - 1)}); break;
      case 6: v = MapOf({{I(1), Value(depth - 1)}, {S("k"), Value(depth - 1)}}); break;
      case 7: v = DictOf({{I(2), Value(depth - 1)}}); break;
      case 8: v = Add(Value(depth - 1), Value(depth - 1)); break;
      default: v = Lam(TVar(Value(depth - 1)), Value(depth - 1)); break;
    }
    made.push_back(Ref(v));
    return v;
  }
  ~Gen() {
    for (auto& v : made) ffk_any_release(&v);
  }
};

int CountAll(void* ctx, const ffk_any*, const ffk_walk_step*, ffk_def_region_kind) {
  ++*static_cast<int*>(ctx);
  return FFK_WALK_ADVANCE;
}

int KeepAll(void*, ffk_mutator*, const ffk_any* v, ffk_any* out) { return ffk_any_to_owned(v, out); }

int SubtractFromInts(void* ctx, ffk_mutator*, const ffk_any* v, ffk_any* out) {
  if (v->type_index == FFK_TYPE_INT) {
    *out = ffk_any_int(v->v_int - static_cast<IntAdder*>(ctx)->add);
    return 0;
  }
  return ffk_any_to_owned(v, out);
}

TEST_F(StructuralVisit, GeneratedValuesWalkAlikeInBothOrdersAndMapBackToEqualValues) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Gen g{seed * 0x9E3779B97F4A7C15ull, {}};
    OwnedAny v(g.Value(5));
    int pre = 0, post = 0;
    ASSERT_EQ(ffk_structural_walk(&v.v, FFK_WALK_PREORDER, CountAll, &pre), 0) << FetchError();
    ASSERT_EQ(ffk_structural_walk(&v.v, FFK_WALK_POSTORDER, CountAll, &post), 0) << FetchError();
    EXPECT_EQ(pre, post);
    // Keeping every value rebuilds nothing.
    OwnedAny same;
    ASSERT_EQ(ffk_structural_map(&v.v, FFK_WALK_POSTORDER, KeepAll, nullptr, &same.v), 0) << FetchError();
    EXPECT_TRUE(Same(same.v, v.v) || memcmp(&same.v, &v.v, sizeof(ffk_any)) == 0);
    // +1 then -1 gives a value equal to the source (variables rebuilt consistently both ways).
    IntAdder adder;
    OwnedAny up, down;
    ASSERT_EQ(ffk_structural_map(&v.v, FFK_WALK_POSTORDER, AddToInts, &adder, &up.v), 0) << FetchError();
    ASSERT_EQ(ffk_structural_map(&up.v, FFK_WALK_PREORDER, SubtractFromInts, &adder, &down.v), 0) << FetchError();
    bool any_int = std::any_of(adder.seen.begin(), adder.seen.end(),
                               [](const std::string& l) { return !l.empty() && l[0] >= '0' && l[0] <= '9'; });
    if (any_int) {
      EXPECT_EQ(ffk_structural_equal(&up.v, &v.v), 0) << "the ints changed: " << Repr(up.v);
    }
    EXPECT_EQ(ffk_structural_equal_opts(&down.v, &v.v, FFK_STRUCTURAL_MAP_FREE_VARS), 1)
        << Repr(v.v) << " -> " << Repr(up.v) << " -> " << Repr(down.v);
  }
}

// ---- The ffi.* globals ---------------------------------------------------------------------

// Calls global `name` with `args` (owned, released after the call); None when it failed.
ffk_any CallGlobal(const char* name, std::vector<ffk_any> args) {
  ffk_function* f = nullptr;
  EXPECT_EQ(ffk_function_get_global(name, &f), 1) << name << ": " << FetchError();
  ffk_any out = ffk_any_none();
  if (f != nullptr && ffk_function_call(f, args.data(), (int32_t)args.size(), &out) != 0) out = ffk_any_none();
  if (f != nullptr) ffk_object_release(reinterpret_cast<ffk_object*>(f));
  for (auto& a : args) ffk_any_release(&a);
  return out;
}

// A Function over a C++ callable (which must outlive the Function's use).
using Body = std::function<int(const ffk_any*, int32_t, ffk_any*)>;
ffk_any Fn(Body* body) {
  auto call = [](void* self, const ffk_any* args, int32_t n, ffk_any* out) {
    return (*static_cast<Body*>(self))(args, n, out);
  };
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_function_new("test.cb", call, body, nullptr)));
}
ffk_any Entry(int32_t type, ffk_any fn) { return Arr({I(type), fn}); }

TEST_F(StructuralVisit, GlobalWalkDispatchesByTypeAndReturnsTheInterrupt) {
  OwnedAny t(Example());
  Strings seen;
  Body on_int = [&](const ffk_any* a, int32_t, ffk_any* out) {
    seen.push_back("int " + Label(&a[0]));
    *out = a[0].v_int == 1 ? CallGlobal("ffi.VisitInterrupt", {I(42)}) : ffk_any_none();
    return 0;
  };
  Body on_any = [&](const ffk_any* a, int32_t n, ffk_any* out) {
    seen.push_back(Label(&a[0]) + "@" + std::to_string(n == 2 ? a[1].v_int : -1));
    *out = ffk_any_none();
    return 0;
  };
  OwnedAny r(CallGlobal("ffi.StructuralWalk", {Ref(t.v), Arr({Entry(FFK_TYPE_INT, Fn(&on_int))}),
                                               Arr({Entry(-1, Fn(&on_any))}), I(FFK_WALK_PREORDER)}));
  ASSERT_NE(r.v.type_index, FFK_TYPE_NONE) << FetchError();
  EXPECT_STREQ(ffk_type_key(r.v.type_index), "ffi.VisitInterrupt");
  OwnedAny payload(Field(r.v, "value"));
  EXPECT_EQ(payload.v.v_int, 42);
  EXPECT_EQ(seen, (Strings{"test.vis.Lam@0", "test.vis.Var@1", "test.vis.Add@0", "test.vis.Var@0", "ffikit.Array@0",
                           "int 1"}));
  // A callback returning something else than None, an int or a VisitInterrupt.
  Body bad = [](const ffk_any*, int32_t, ffk_any* out) {
    *out = S("bad");
    return 0;
  };
  OwnedAny e(CallGlobal("ffi.StructuralWalk", {Ref(t.v), Arr({Entry(-1, Fn(&bad))}), Arr({}), I(1)}));
  EXPECT_TRUE(PendingError("TypeError", {"must return None, a WalkResult or a VisitInterrupt, got str"}));
}

TEST_F(StructuralVisit, GlobalWalkCallsAnEntryForEveryValueItMatchesAndNoOther) {
  // The walk spares callbacks the values no entry matches: what runs must stay what
  // tvm_ffi's matching gives (a str entry takes inline and heap strs; -1 takes all).
  OwnedAny t(Add(Arr({I(1), S("s"), S("a longer string")}), Add(I(2), ffk_any_float(0.5))));
  auto walk = [&](int32_t type, ffk_walk_order order) {
    Strings seen;
    Body cb = [&](const ffk_any* a, int32_t, ffk_any* out) {
      seen.push_back(Label(&a[0]));
      *out = ffk_any_none();
      return 0;
    };
    OwnedAny r(CallGlobal("ffi.StructuralWalk", {Ref(t.v), Arr({Entry(type, Fn(&cb))}), Arr({}), I(order)}));
    EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE) << FetchError();
    return seen;
  };
  for (ffk_walk_order order : {FFK_WALK_PREORDER, FFK_WALK_POSTORDER}) {
    SCOPED_TRACE(order);
    bool pre = order == FFK_WALK_PREORDER;
    EXPECT_EQ(walk(AddType(), order), (Strings{"test.vis.Add", "test.vis.Add"}));
    EXPECT_EQ(walk(FFK_TYPE_ARRAY, order), (Strings{"ffikit.Array"}));
    EXPECT_EQ(walk(FFK_TYPE_STRING, order), (Strings{"s", "a longer string"}));
    EXPECT_EQ(walk(FFK_TYPE_INT, order), (Strings{"1", "2"}));
    EXPECT_EQ(walk(FFK_TYPE_OBJECT, order), pre ? (Strings{"test.vis.Add", "ffikit.Array", "a longer string", "test.vis.Add"})
                                                : (Strings{"a longer string", "ffikit.Array", "test.vis.Add", "test.vis.Add"}));
    EXPECT_EQ(walk(-1, order).size(), 8u);
  }
}

TEST_F(StructuralVisit, GlobalMapAndMutateRewriteThroughFunctions) {
  OwnedAny inner(Add(S("s"), S("t")));
  OwnedAny t(Add(Arr({I(1), I(2)}), Ref(inner.v)));
  Body inc = [](const ffk_any* a, int32_t, ffk_any* out) {
    *out = I(a[0].v_int + 1);
    return 0;
  };
  OwnedAny m(CallGlobal("ffi.StructuralMap", {Ref(t.v), Arr({Entry(FFK_TYPE_INT, Fn(&inc))}), Arr({}), I(1)}));
  EXPECT_EQ(Repr(m.v), "test.vis.Add(a=(2, 3), b=test.vis.Add(a=\"s\", b=\"t\"))") << FetchError();
  OwnedAny b(Field(m.v, "b"));
  EXPECT_TRUE(Same(b.v, inner.v));
  // Mutate: the callback descends through the handle, which dies with the call.
  OwnedAny kept;
  Body swap = [&](const ffk_any* a, int32_t n, ffk_any* out) {
    EXPECT_EQ(n, 3);  // asked for the inplace mode
    EXPECT_EQ(a[2].v_int, 0);
    ffk_any_release(&kept.v);
    kept.v = Ref(a[1]);
    ffk_any x = Field(a[0], "a"), y = Field(a[0], "b");
    ffk_any nx = CallGlobal("ffi.StructuralMutatorMutate", {Ref(a[1]), x});
    ffk_any ny = CallGlobal("ffi.StructuralMutatorMutate", {Ref(a[1]), y});
    *out = Add(ny, nx);
    return 0;
  };
  OwnedAny r(CallGlobal("ffi.StructuralMutate", {Ref(t.v), Arr({Arr({I(AddType()), Fn(&swap), ffk_any_bool(true)})})}));
  EXPECT_EQ(Repr(r.v), "test.vis.Add(a=test.vis.Add(a=\"t\", b=\"s\"), b=(1, 2))") << FetchError();
  EXPECT_STREQ(ffk_type_key(kept.v.type_index), "ffi.StructuralMutator");
  OwnedAny late(CallGlobal("ffi.StructuralMutatorMutate", {Ref(kept.v), I(1)}));
  EXPECT_TRUE(PendingError("RuntimeError", {"belongs to a traversal that has ended"}));
}

TEST_F(StructuralVisit, GlobalStructuralKeyComparesStructurally) {
  OwnedAny k0(CallGlobal("ffi.StructuralKey", {Arr({I(1), I(2)})}));
  OwnedAny k1(CallGlobal("ffi.StructuralKey", {ListOf({I(1), I(2)})}));
  OwnedAny k2(CallGlobal("ffi.StructuralKey", {Arr({I(1), I(2)})}));
  OwnedAny h0(Field(k0.v, "hash_i64")), h2(Field(k2.v, "hash_i64"));
  EXPECT_EQ(h0.v.v_int, h2.v.v_int);
  OwnedAny eq(CallGlobal("ffi.StructuralKeyEqual", {Ref(k0.v), Ref(k2.v)}));
  OwnedAny ne(CallGlobal("ffi.StructuralKeyEqual", {Ref(k0.v), Ref(k1.v)}));  // an Array never equals a List
  EXPECT_EQ(eq.v.type_index, FFK_TYPE_BOOL);
  EXPECT_TRUE(eq.v.v_int);
  EXPECT_FALSE(ne.v.v_int);
  OwnedAny bad(CallGlobal("ffi.StructuralKeyEqual", {Ref(k0.v), I(3)}));
  EXPECT_TRUE(PendingError("TypeError", {"expected ffi.StructuralKey, got int"}));
}

TEST_F(StructuralVisit, StructuralKeysFindEachOtherInMapsAndDicts) {
  // tvm_ffi's Map looks inside a StructuralKey: an equal structure finds the entry.
  OwnedAny k0(CallGlobal("ffi.StructuralKey", {Arr({I(1), Arr({S("x")})})}));
  OwnedAny k1(CallGlobal("ffi.StructuralKey", {Arr({I(1), Arr({S("x")})})}));
  OwnedAny k2(CallGlobal("ffi.StructuralKey", {Arr({I(1), Arr({S("y")})})}));
  ASSERT_NE(k0.v.v_obj, k1.v.v_obj);
  EXPECT_TRUE(ffk_any_equal(&k0.v, &k1.v));
  EXPECT_EQ(ffk_any_hash(&k0.v), ffk_any_hash(&k1.v));
  EXPECT_FALSE(ffk_any_equal(&k0.v, &k2.v));
  OwnedAny m(MapOf({{Ref(k0.v), S("a")}}));
  ffk_any out = ffk_any_none();
  EXPECT_EQ(ffk_map_get(reinterpret_cast<ffk_map*>(m.v.v_obj), &k1.v, &out), 1);
  EXPECT_EQ(Repr(out), "\"a\"");
  ffk_any_release(&out);
  EXPECT_EQ(ffk_map_get(reinterpret_cast<ffk_map*>(m.v.v_obj), &k2.v, &out), 0);
  OwnedAny d(DictOf({{Ref(k0.v), I(1)}}));
  ffk_any one = I(2);
  ASSERT_EQ(ffk_dict_set(reinterpret_cast<ffk_dict*>(d.v.v_obj), &k1.v, &one), 0);  // replaces, no new entry
  EXPECT_EQ(ffk_dict_size(reinterpret_cast<ffk_dict*>(d.v.v_obj)), 1);
  // The operations are set once, on exactly that type; a built-in or unknown type refuses them.
  EXPECT_EQ(ffk_type_set_key_ops(FFK_TYPE_ARRAY, nullptr, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"is not a registered object type"}));
  EXPECT_EQ(ffk_type_set_key_ops(k0.v.type_index, nullptr, +[](const ffk_object*, const ffk_object*) { return false; }), -1);
  EXPECT_TRUE(PendingError("ValueError", {"ffi.StructuralKey", "both a hash and an equality"}));
}

}  // namespace

// ---- Type hooks: __s_visit__ and __s_mutate__ ------------------------------------------------

int32_t HookedType() {
  static int32_t t = DefineTwoFields("test.vis.Hooked", {AnyField("a", offsetof(TwoFields, x)), AnyField("b", offsetof(TwoFields, y))}, 0);
  return t;
}
ffk_any Hooked(ffk_any a, ffk_any b) { return Make(HookedType(), {a, b}); }

// Sets the type attribute `name` of `type` for the scope of one test (None at the end, so
// the hook's Function does not outlive it).
struct ScopedAttr {
  int32_t type;
  const char* name;
  ScopedAttr(int32_t t, const char* n, ffk_any value) : type(t), name(n) {
    EXPECT_EQ(ffk_type_set_attr(type, name, &value), 0) << FetchError();
    ffk_any_release(&value);
  }
  ~ScopedAttr() {
    ffk_any none = ffk_any_none();
    EXPECT_EQ(ffk_type_set_attr(type, name, &none), 0) << FetchError();
  }
};

TEST_F(StructuralVisit, VisitHookReplacesTheDescentOfItsType) {
  // tvm_ffi: hook(visitor, obj) visits what it chooses; the callbacks still run for obj itself.
  std::vector<std::string> hook_seen;
  Body hook = [&](const ffk_any* a, int32_t n, ffk_any* out) {
    EXPECT_EQ(n, 2);
    EXPECT_STREQ(ffk_type_key(a[0].type_index), "ffi.StructuralVisitor");
    hook_seen.push_back(Label(&a[1]));
    ffk_any b = Field(a[1], "b");
    *out = CallGlobal("ffi.StructuralVisitorVisit", {Ref(a[0]), b});  // None, or the interrupt: passed on
    return ffk_error_occurred() ? -1 : 0;
  };
  ScopedAttr attr(HookedType(), FFK_ATTR_S_VISIT, Fn(&hook));
  OwnedAny t(Arr({Hooked(Add(I(1), I(2)), I(3))}));
  EXPECT_EQ(Walk(t.v, FFK_WALK_POSTORDER), (Strings{"3", "test.vis.Hooked", "ffikit.Array"}));
  EXPECT_EQ(Walk(t.v, FFK_WALK_PREORDER), (Strings{"ffikit.Array", "test.vis.Hooked", "3"}));
  EXPECT_EQ(hook_seen.size(), 2u);
  // A stop inside the hook's descent ends the whole walk, and the payload reaches the caller.
  Recorder r;
  r.stop_at = "3";
  EXPECT_EQ(ffk_structural_walk(&t.v, FFK_WALK_POSTORDER, Record, &r), 1) << FetchError();
  EXPECT_EQ(r.seen, (Strings{"3"}));
  Body on_int = [&](const ffk_any* a, int32_t, ffk_any* out) {
    *out = CallGlobal("ffi.VisitInterrupt", {I(a[0].v_int * 10)});
    return 0;
  };
  OwnedAny res(CallGlobal("ffi.StructuralWalk", {Ref(t.v), Arr({Entry(FFK_TYPE_INT, Fn(&on_int))}), Arr({}), I(1)}));
  ASSERT_NE(res.v.type_index, FFK_TYPE_NONE) << FetchError();
  EXPECT_STREQ(ffk_type_key(res.v.type_index), "ffi.VisitInterrupt");
  OwnedAny payload(Field(res.v, "value"));
  EXPECT_EQ(payload.v.v_int, 30);
}

TEST_F(StructuralVisit, VisitHookIsCheckedBoundedAndItsHandleDiesWithTheCall) {
  OwnedAny kept;
  int calls = 0;
  Body hook = [&](const ffk_any* a, int32_t, ffk_any* out) {
    ++calls;
    ffk_any_release(&kept.v);
    kept.v = Ref(a[0]);
    // Its own value again: no second descent (as a cycle), so this ends.
    OwnedAny again(CallGlobal("ffi.StructuralVisitorDefaultVisit", {Ref(a[0]), Ref(a[1])}));
    *out = Field(a[1], "a");  // neither None nor a VisitInterrupt
    return 0;
  };
  ScopedAttr attr(HookedType(), FFK_ATTR_S_VISIT, Fn(&hook));
  OwnedAny t(Hooked(I(1), I(2)));
  Recorder r;
  EXPECT_EQ(ffk_structural_walk(&t.v, FFK_WALK_POSTORDER, Record, &r), -1);
  EXPECT_TRUE(PendingError("TypeError", {"__s_visit__ hook of `test.vis.Hooked` returned a `int`", "not None or a VisitInterrupt"}));
  EXPECT_EQ(calls, 1);
  OwnedAny late(CallGlobal("ffi.StructuralVisitorVisit", {Ref(kept.v), I(1)}));
  EXPECT_TRUE(PendingError("RuntimeError", {"belongs to a traversal that has ended"}));
  // A hook that is not a Function.
  ffk_any_release(&kept.v);
  kept.v = ffk_any_none();
  ScopedAttr bad(HookedType(), FFK_ATTR_S_VISIT, I(5));
  EXPECT_EQ(ffk_structural_walk(&t.v, FFK_WALK_POSTORDER, Record, &r), -1);
  EXPECT_TRUE(PendingError("TypeError", {"`__s_visit__` attribute of type `test.vis.Hooked` is a `int`, not a Function"}));
}

TEST_F(StructuralVisit, MutateHookReplacesTheRebuildOfItsType) {
  Body hook = [&](const ffk_any* a, int32_t n, ffk_any* out) {  // hook(mutator, obj): swaps a and b
    EXPECT_EQ(n, 2);
    EXPECT_STREQ(ffk_type_key(a[0].type_index), "ffi.StructuralMutator");
    ffk_any na = CallGlobal("ffi.StructuralMutatorMutate", {Ref(a[0]), Field(a[1], "a")});
    ffk_any nb = CallGlobal("ffi.StructuralMutatorMutate", {Ref(a[0]), Field(a[1], "b")});
    *out = Hooked(nb, na);
    return 0;
  };
  ScopedAttr attr(HookedType(), FFK_ATTR_S_MUTATE, Fn(&hook));
  OwnedAny t(Arr({Hooked(I(1), Add(I(2), I(3)))}));
  IntAdder adder;
  OwnedAny up;
  ASSERT_EQ(ffk_structural_map(&t.v, FFK_WALK_POSTORDER, AddToInts, &adder, &up.v), 0) << FetchError();
  EXPECT_EQ(Repr(up.v), "(test.vis.Hooked(a=test.vis.Add(a=3, b=4), b=2),)");
  // default_mutate of the hooked value itself goes through the hook too.
  Body owner = [&](const ffk_any* a, int32_t, ffk_any* out) {
    *out = CallGlobal("ffi.StructuralMutatorDefaultMutate", {Ref(a[1]), Ref(a[0])});
    return ffk_error_occurred() ? -1 : 0;
  };
  OwnedAny m(CallGlobal("ffi.StructuralMutate", {Ref(t.v), Arr({Arr({I(HookedType()), Fn(&owner), ffk_any_bool(false)})})}));
  EXPECT_EQ(Repr(m.v), "(test.vis.Hooked(a=test.vis.Add(a=2, b=3), b=1),)") << FetchError();
}
