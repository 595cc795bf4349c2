// ffikit/structural.h, "Kinds and variables": structural kinds (FFK_ATTR_S_KIND),
// definition fields (FFK_FIELD_S_DEF / FFK_FIELD_S_DEF_SIMPLE) and
// FFK_STRUCTURAL_MAP_FREE_VARS in equality, hash and first mismatch. Every expectation
// below was checked against tvm_ffi 0.1.15 with the same types (py_class with
// structural_eq="var" / "dag" / ..., field(structural_eq="def") ...) on the same values.

#include <ffikit/ffikit.h>

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"
#include "tests/support/values.h"

namespace {

class StructuralVars : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
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

// Var(name): a variable whose name is not compared (tvm_ffi's usual Var).
int32_t VarType() {
  static int32_t t = DefineTwoFields("test.sv.Var", {AnyField("name", offsetof(TwoFields, x), FFK_FIELD_COMPARE_OFF)}, FFK_S_KIND_VAR);
  return t;
}
// NVar(name): a variable whose name is compared.
int32_t NVarType() {
  static int32_t t = DefineTwoFields("test.sv.NVar", {AnyField("name", offsetof(TwoFields, x))}, FFK_S_KIND_VAR);
  return t;
}
// TVar(ty): a variable with a type annotation that may hold variables.
int32_t TVarType() {
  static int32_t t = DefineTwoFields("test.sv.TVar", {AnyField("ty", offsetof(TwoFields, x))}, FFK_S_KIND_VAR);
  return t;
}
int32_t AddType() {  // no kind attribute: a tree
  static int32_t t = DefineTwoFields("test.sv.Add", {AnyField("a", offsetof(TwoFields, x)), AnyField("b", offsetof(TwoFields, y))}, 0);
  return t;
}
int32_t LamType() {
  static int32_t t =
      DefineTwoFields("test.sv.Lam", {AnyField("p", offsetof(TwoFields, x), FFK_FIELD_S_DEF), AnyField("body", offsetof(TwoFields, y))}, FFK_S_KIND_TREE);
  return t;
}
int32_t LamSType() {
  static int32_t t =
      DefineTwoFields("test.sv.LamS", {AnyField("p", offsetof(TwoFields, x), FFK_FIELD_S_DEF_SIMPLE), AnyField("body", offsetof(TwoFields, y))}, 0);
  return t;
}
int32_t NodeType() {
  static int32_t t = DefineTwoFields("test.sv.Node", {AnyField("v", offsetof(TwoFields, x))}, FFK_S_KIND_DAG);
  return t;
}
int32_t ConstType() {
  static int32_t t = DefineTwoFields("test.sv.Const", {AnyField("v", offsetof(TwoFields, x))}, FFK_S_KIND_CONST_TREE);
  return t;
}
int32_t SingleType() {
  static int32_t t = DefineTwoFields("test.sv.Single", {AnyField("v", offsetof(TwoFields, x))}, FFK_S_KIND_SINGLETON);
  return t;
}

ffk_any Var(const char* name) { return Make(VarType(), {S(name)}); }
ffk_any Add(ffk_any a, ffk_any b) { return Make(AddType(), {a, b}); }
ffk_any Lam(ffk_any p, ffk_any body) { return Make(LamType(), {p, body}); }

constexpr uint32_t kMap = FFK_STRUCTURAL_MAP_FREE_VARS;

uint64_t H(const ffk_any& v, uint32_t flags) {
  uint64_t h = 0;
  EXPECT_EQ(ffk_structural_hash_opts(&v, flags, &h), 0) << FetchError();
  return h;
}

// "equal" or the two mismatch paths; checks that equality and mismatch agree, and that
// equal values hash alike.
std::string Cmp(const ffk_any& a, const ffk_any& b, uint32_t flags = 0) {
  int eq = ffk_structural_equal_opts(&a, &b, flags);
  EXPECT_GE(eq, 0) << FetchError();
  if (flags == 0) {
    EXPECT_EQ(ffk_structural_equal(&a, &b), eq) << "the flags=0 form is the plain one";
  }
  ffk_object *l = nullptr, *r = nullptr;
  int rc = ffk_structural_first_mismatch_opts(&a, &b, flags, &l, &r);
  EXPECT_GE(rc, 0) << FetchError();
  EXPECT_EQ(rc == 0, eq == 1) << "first mismatch and equality agree";
  if (rc == 0) {
    EXPECT_EQ(H(a, flags), H(b, flags)) << "equal values hash alike";
    return "equal";
  }
  ffk_any la = ffk_any_object_steal(l), ra = ffk_any_object_steal(r);
  std::string out = ffk::test::Repr(la) + " | " + ffk::test::Repr(ra);
  ffk_any_release(&la);
  ffk_any_release(&ra);
  return out;
}

TEST_F(StructuralVars, ADefinitionFieldBindsItsVariable) {
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny lx(Lam(Ref(x.v), Add(Ref(x.v), I(1)))), ly(Lam(Ref(y.v), Add(Ref(y.v), I(1))));
  EXPECT_EQ(Cmp(lx.v, ly.v), "equal");
  EXPECT_EQ(H(lx.v, 0), H(ly.v, 0)) << "a bound variable hashes by its binding order, not its identity";
  OwnedAny wrong(Lam(Ref(y.v), Add(Ref(x.v), I(1))));
  EXPECT_EQ(Cmp(lx.v, wrong.v), "<root>.body.a | <root>.body.a") << "x is bound to y, not to x";
  EXPECT_EQ(Cmp(lx.v, wrong.v, kMap), "<root>.body.a | <root>.body.a");
}

TEST_F(StructuralVars, FreeVariablesCompareByIdentityUnlessMapped) {
  OwnedAny x(Var("x")), y(Var("y")), z(Var("z"));
  OwnedAny ax(Add(Ref(x.v), I(1))), ay(Add(Ref(y.v), I(1))), ax2(Add(Ref(x.v), I(1)));
  EXPECT_EQ(Cmp(ax.v, ay.v), "<root>.a | <root>.a");
  EXPECT_EQ(Cmp(ax.v, ay.v, kMap), "equal");
  EXPECT_EQ(Cmp(ax.v, ax2.v), "equal") << "a variable equals itself";
  EXPECT_EQ(Cmp(x.v, y.v), "<root> | <root>");
  EXPECT_EQ(Cmp(x.v, y.v, kMap), "equal");
  EXPECT_EQ(Cmp(x.v, x.v), "equal");
  EXPECT_NE(H(x.v, 0), H(y.v, 0)) << "free variables hash by identity";
  EXPECT_EQ(H(x.v, kMap), H(y.v, kMap));
  OwnedAny xy(Add(Ref(x.v), Ref(y.v))), zz(Add(Ref(z.v), Ref(z.v))), xx(Add(Ref(x.v), Ref(x.v))), yz(Add(Ref(y.v), Ref(z.v)));
  EXPECT_EQ(Cmp(xy.v, zz.v, kMap), "<root>.b | <root>.b") << "two variables cannot bind to one";
  EXPECT_EQ(Cmp(xx.v, yz.v, kMap), "<root>.b | <root>.b") << "nor one to two";
  EXPECT_NE(H(xy.v, kMap), H(zz.v, kMap));
  OwnedAny yx(Add(Ref(y.v), Ref(x.v)));
  EXPECT_EQ(Cmp(xy.v, yx.v, kMap), "equal") << "a consistent renaming";
}

// TNode(v: Var, a): a variable in a field typed as the variable's class (object storage,
// read in place, which equality answers for a bound variable without the general step).
int32_t TNodeType() {
  static int32_t t = DefineTwoFields(
      "test.sv.TNode",
      {ffk_field_def{"v", offsetof(TwoFields, x), "test.sv.Var", 0, ffk_any_none(), nullptr}, AnyField("a", offsetof(TwoFields, y))},
      0);
  return t;
}

TEST_F(StructuralVars, BoundVariablesInTypedFieldsCompareByTheirBinding) {
  OwnedAny x(Var("x")), y(Var("y")), z(Var("z"));
  auto t = [&](const OwnedAny& v) { return Make(TNodeType(), {Ref(v.v), I(1)}); };
  OwnedAny xx(Arr({t(x), t(x)})), yy(Arr({t(y), t(y)})), yz(Arr({t(y), t(z)})), xy(Arr({t(x), t(y)})), zz(Arr({t(z), t(z)}));
  EXPECT_EQ(Cmp(xx.v, yy.v, kMap), "equal");
  EXPECT_EQ(Cmp(xx.v, yz.v, kMap), "<root>[1].v | <root>[1].v") << "x is bound to y already";
  EXPECT_EQ(Cmp(xy.v, zz.v, kMap), "<root>[1].v | <root>[1].v") << "z is bound to x already";
  EXPECT_EQ(Cmp(xy.v, yz.v, kMap), "equal");
  EXPECT_EQ(Cmp(xx.v, yy.v), "<root>[0].v | <root>[0].v") << "free variables unmapped: identity";
  EXPECT_EQ(Cmp(xx.v, xx.v), "equal");
  OwnedAny lam1(Lam(Ref(x.v), Arr({t(x), t(x)}))), lam2(Lam(Ref(y.v), Arr({t(y), t(y)}))), lam3(Lam(Ref(y.v), Arr({t(y), t(z)})));
  EXPECT_EQ(Cmp(lam1.v, lam2.v), "equal") << "bound by the definition field";
  EXPECT_EQ(Cmp(lam1.v, lam3.v), "<root>.body[1].v | <root>.body[1].v");
}

TEST_F(StructuralVars, VariablesBindOnceAndStayBound) {
  OwnedAny x(Var("x")), y(Var("y")), z(Var("z"));
  OwnedAny a(Arr({Lam(Ref(x.v), Ref(x.v)), Lam(Ref(x.v), Ref(x.v))}));
  OwnedAny b(Arr({Lam(Ref(y.v), Ref(y.v)), Lam(Ref(z.v), Ref(z.v))}));
  EXPECT_EQ(Cmp(a.v, b.v), "<root>[1].p | <root>[1].p") << "x is bound to y already";
  OwnedAny nested1(Lam(Ref(x.v), Lam(Ref(y.v), Add(Ref(x.v), Ref(y.v)))));
  OwnedAny nested2(Lam(Ref(y.v), Lam(Ref(x.v), Add(Ref(y.v), Ref(x.v)))));
  OwnedAny nested3(Lam(Ref(y.v), Lam(Ref(x.v), Add(Ref(x.v), Ref(y.v)))));
  EXPECT_EQ(Cmp(nested1.v, nested2.v), "equal");
  EXPECT_EQ(Cmp(nested1.v, nested3.v), "<root>.body.body.a | <root>.body.body.a");
  OwnedAny arr1(Lam(Arr({Ref(x.v), Ref(y.v)}), Add(Ref(x.v), Ref(y.v))));
  OwnedAny arr2(Lam(Arr({Ref(y.v), Ref(x.v)}), Add(Ref(y.v), Ref(x.v))));
  OwnedAny arr3(Lam(Arr({Ref(y.v), Ref(x.v)}), Add(Ref(x.v), Ref(y.v))));
  EXPECT_EQ(Cmp(arr1.v, arr2.v), "equal") << "every variable inside a definition field binds";
  EXPECT_EQ(Cmp(arr1.v, arr3.v), "<root>.body.a | <root>.body.a");
}

TEST_F(StructuralVars, AVariableMetFreeFirstIsBoundToItself) {
  // tvm_ffi: x met outside a definition is bound to x, so it cannot bind to y later; and
  // an object compared with itself is looked into, so the same holds inside one.
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny a(Arr({Ref(x.v), Lam(Ref(x.v), Ref(x.v))})), b(Arr({Ref(x.v), Lam(Ref(y.v), Ref(y.v))}));
  EXPECT_EQ(Cmp(a.v, b.v), "<root>[1].p | <root>[1].p");
  OwnedAny t(Add(Ref(x.v), I(1)));
  OwnedAny tt(Arr({Ref(t.v), Ref(t.v)})), ty(Arr({Ref(t.v), Add(Ref(y.v), I(1))}));
  EXPECT_EQ(Cmp(tt.v, ty.v, kMap), "<root>[1].a | <root>[1].a");
  EXPECT_NE(H(tt.v, kMap), H(ty.v, kMap));
}

TEST_F(StructuralVars, AVariablesComparedFieldsMustMatchToBind) {
  OwnedAny a(Make(LamType(), {Make(NVarType(), {S("a")}), I(1)})), b(Make(LamType(), {Make(NVarType(), {S("b")}), I(1)}));
  EXPECT_EQ(Cmp(a.v, b.v), "<root>.p.name | <root>.p.name");
  OwnedAny c(Make(LamType(), {Make(NVarType(), {S("a")}), I(1)}));
  EXPECT_EQ(Cmp(a.v, c.v), "equal");
}

TEST_F(StructuralVars, ASimpleDefinitionWalksAVariablesFieldsAsUses) {
  OwnedAny n1(Make(TVarType(), {I(1)})), n2(Make(TVarType(), {I(1)}));
  OwnedAny x(Make(TVarType(), {Ref(n1.v)})), y(Make(TVarType(), {Ref(n2.v)}));
  OwnedAny p1(Lam(Ref(x.v), Arr({Ref(x.v), Ref(n1.v)}))), p2(Lam(Ref(y.v), Arr({Ref(y.v), Ref(n2.v)})));
  EXPECT_EQ(Cmp(p1.v, p2.v), "equal") << "a pattern binds the variables in x's type too";
  OwnedAny s1(Make(LamSType(), {Ref(x.v), Arr({Ref(x.v), Ref(n1.v)})}));
  OwnedAny s2(Make(LamSType(), {Ref(y.v), Arr({Ref(y.v), Ref(n2.v)})}));
  EXPECT_EQ(Cmp(s1.v, s2.v), "<root>.p.ty | <root>.p.ty") << "n1 and n2 are uses, and free";
  EXPECT_EQ(Cmp(s1.v, s2.v, kMap), "equal") << "map_free_vars makes everything a pattern";
}

TEST_F(StructuralVars, DagNodesMustBeSharedAlike) {
  OwnedAny n(Make(NodeType(), {I(1)})), n1(Make(NodeType(), {I(1)})), n2(Make(NodeType(), {I(1)}));
  OwnedAny nn(Arr({Ref(n.v), Ref(n.v)})), n1n1(Arr({Ref(n1.v), Ref(n1.v)})), n1n2(Arr({Ref(n1.v), Ref(n2.v)}));
  EXPECT_EQ(Cmp(nn.v, n1n1.v), "equal");
  EXPECT_EQ(Cmp(nn.v, n1n2.v), "<root>[1] | <root>[1]");
  EXPECT_EQ(Cmp(n1n2.v, nn.v), "<root>[1] | <root>[1]");
  EXPECT_EQ(Cmp(nn.v, nn.v), "equal");
  EXPECT_NE(H(nn.v, 0), H(n1n2.v, 0)) << "the sharing is part of the hash";
  OwnedAny cross1(Arr({Ref(n1.v), Ref(n2.v)})), cross2(Arr({Ref(n2.v), Ref(n1.v)}));
  EXPECT_EQ(Cmp(cross1.v, cross2.v), "equal");
  OwnedAny in1(Make(NodeType(), {Arr({Ref(n1.v), Ref(n1.v)})})), in2(Make(NodeType(), {Arr({Ref(n2.v), Make(NodeType(), {I(1)})})}));
  EXPECT_EQ(Cmp(in1.v, in2.v), "<root>.v[1] | <root>.v[1]");
  // A tree does not care about sharing.
  OwnedAny t1(Add(I(1), I(2))), t2(Add(I(1), I(2)));
  OwnedAny tt(Arr({Ref(t1.v), Ref(t1.v)})), tu(Arr({Ref(t1.v), Ref(t2.v)}));
  EXPECT_EQ(Cmp(tt.v, tu.v), "equal");
}

TEST_F(StructuralVars, ConstTreesAndSingletons) {
  OwnedAny c1(Make(ConstType(), {Arr({I(1)})})), c2(Make(ConstType(), {Arr({I(1)})}));
  EXPECT_EQ(Cmp(c1.v, c2.v), "equal");
  OwnedAny s1(Make(SingleType(), {I(1)})), s2(Make(SingleType(), {I(1)}));
  EXPECT_EQ(Cmp(s1.v, s2.v), "<root> | <root>") << "a singleton equals only itself";
  EXPECT_EQ(Cmp(s1.v, s1.v), "equal");
  EXPECT_EQ(H(s1.v, 0), H(s2.v, 0)) << "and hashes by its fields, as tvm_ffi's";
}

TEST_F(StructuralVars, SharedValuesWithoutVariablesAreNotLookedInto) {
  // A walk that meets no variable takes an object as equal to itself, so a chain past the
  // depth limit shared by both sides is no error, even next to a Lambda (a tree).
  ffk_any deep = I(0);
  for (int i = 0; i < FFK_STRUCTURAL_MAX_DEPTH + 5; ++i) deep = Arr({deep});
  OwnedAny d(deep);
  OwnedAny a(Arr({Ref(d.v), Lam(I(1), I(2))})), b(Arr({Ref(d.v), Lam(I(1), I(2))}));
  EXPECT_EQ(ffk_structural_equal(&a.v, &b.v), 1);
  EXPECT_EQ(ffk_structural_equal_opts(&a.v, &b.v, kMap), 1);
  ffk_object *l = nullptr, *r = nullptr;
  EXPECT_EQ(ffk_structural_first_mismatch(&a.v, &b.v, &l, &r), 0);
  // One that meets variables looks inside, and so reaches the limit.
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny c(Arr({Ref(d.v), Lam(Ref(x.v), Ref(x.v))})), e(Arr({Ref(d.v), Lam(Ref(y.v), Ref(y.v))}));
  EXPECT_EQ(ffk_structural_equal(&c.v, &e.v), -1);
  EXPECT_NE(FetchError().find("nested deeper than"), std::string::npos);
  EXPECT_EQ(ffk_structural_equal(&c.v, &c.v), 1) << "a value equals itself";
}

TEST_F(StructuralVars, MapKeysAreLookedUpAsWhatTheyAreBoundTo) {
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny a(Arr({Ref(x.v), MapOf({{Ref(x.v), I(1)}})})), b(Arr({Ref(y.v), MapOf({{Ref(y.v), I(1)}})}));
  EXPECT_EQ(Cmp(a.v, b.v, kMap), "equal");
  OwnedAny c(Arr({Ref(y.v), MapOf({{Ref(y.v), I(2)}})}));
  EXPECT_EQ(Cmp(a.v, c.v, kMap), "<root>[1][test.sv.Var(name=\"x\")] | <root>[1][test.sv.Var(name=\"y\")]");
  OwnedAny mx(MapOf({{Ref(x.v), I(1)}})), my(MapOf({{Ref(y.v), I(1)}}));
  EXPECT_EQ(Cmp(mx.v, my.v, kMap), "<root>[test.sv.Var(name=\"x\")] | <root>[<missing:test.sv.Var(name=\"x\")>]")
      << "a key is not walked, so it does not bind";
}

TEST_F(StructuralVars, EqualMapsBuiltInOtherOrdersHashAlikeWhatTheirValuesBind) {
  // {"a": LamS([p1, p0], p0), 2: Lam([p0, p3], p1)} and the same entries inserted the other
  // way: whichever value is hashed first binds p0 and p1, so values go in key-hash order
  // (found by the Hypothesis property in test_structural_hash_property.py). Big maps too:
  // the sort merges runs past 8 entries.
  OwnedAny p[4] = {OwnedAny(Var("p0")), OwnedAny(Var("p1")), OwnedAny(Var("p2")), OwnedAny(Var("p3"))};
  auto lams = Make(LamSType(), {Arr({Ref(p[1].v), Ref(p[0].v)}), Ref(p[0].v)});
  auto lam = Lam(Arr({Ref(p[0].v), Ref(p[3].v)}), Ref(p[1].v));
  OwnedAny m1(MapOf({{S("a"), Ref(lams)}, {I(2), Ref(lam)}})), m2(MapOf({{I(2), Ref(lam)}, {S("a"), Ref(lams)}}));
  ffk_any_release(&lams);
  ffk_any_release(&lam);
  for (uint32_t flags : {0u, kMap}) {
    EXPECT_EQ(Cmp(m1.v, m2.v, flags), "equal");
    EXPECT_EQ(H(m1.v, flags), H(m2.v, flags)) << flags;
  }
  std::vector<std::pair<ffk_any, ffk_any>> fwd, rev;
  for (int i = 0; i < 40; ++i) {
    fwd.push_back({I(i), Lam(Ref(p[i % 4].v), Ref(p[(i + 1) % 4].v))});
    rev.push_back({I(39 - i), Lam(Ref(p[(39 - i) % 4].v), Ref(p[(40 - i) % 4].v))});
  }
  OwnedAny big1(MapOf(fwd)), big2(MapOf(rev));
  for (uint32_t flags : {0u, kMap}) {
    EXPECT_EQ(Cmp(big1.v, big2.v, flags), "equal");
    EXPECT_EQ(H(big1.v, flags), H(big2.v, flags)) << flags;
  }
}

TEST_F(StructuralVars, OptionsAreChecked) {
  OwnedAny x(Var("x"));
  EXPECT_EQ(ffk_structural_equal_opts(&x.v, &x.v, 2), -1);
  EXPECT_NE(FetchError().find("unknown option flags 0x2"), std::string::npos);
  uint64_t h = 7;
  EXPECT_EQ(ffk_structural_hash_opts(&x.v, 4, &h), -1);
  EXPECT_EQ(h, 0u);
  FetchError();
  ffk_object *l = nullptr, *r = nullptr;
  EXPECT_EQ(ffk_structural_first_mismatch_opts(&x.v, &x.v, 8, &l, &r), -1);
  EXPECT_EQ(l, nullptr);
  FetchError();
}

TEST_F(StructuralVars, AKindThatIsNotOneIsAValueError) {
  int32_t t = DefineTwoFields("test.sv.BadKind", {AnyField("v", offsetof(TwoFields, x))}, 0);
  ffk_any k = ffk_any_int(9);
  ASSERT_EQ(ffk_type_set_attr(t, FFK_ATTR_S_KIND, &k), 0);
  OwnedAny a(Make(t, {I(1)})), b(Make(t, {I(1)}));
  EXPECT_EQ(ffk_structural_equal(&a.v, &b.v), -1);
  EXPECT_NE(FetchError().find("`__s_kind__` attribute of type `test.sv.BadKind` is not a structural kind"),
            std::string::npos);
  uint64_t h;
  EXPECT_EQ(ffk_structural_hash(&a.v, &h), -1);
  FetchError();
}

ffk_any Chain(const char* name, int n) {  // TVar(TVar(... Var(name)))
  ffk_any v = Var(name);
  for (int i = 0; i < n; ++i) v = Make(TVarType(), {v});
  return v;
}

TEST_F(StructuralVars, DeepVariableChainsEndAtTheDepthLimit) {
  OwnedAny v(Chain("v", FFK_STRUCTURAL_MAX_DEPTH + 5)), u(Chain("u", FFK_STRUCTURAL_MAX_DEPTH + 5));
  EXPECT_EQ(ffk_structural_equal_opts(&v.v, &u.v, kMap), -1);
  EXPECT_NE(FetchError().find("nested deeper than"), std::string::npos);
  uint64_t h;
  EXPECT_EQ(ffk_structural_hash_opts(&v.v, kMap, &h), -1);
  EXPECT_NE(FetchError().find("nested deeper than"), std::string::npos);
  OwnedAny s1(Chain("s", 50)), s2(Chain("t", 50));
  EXPECT_EQ(Cmp(s1.v, s2.v, kMap), "equal");
}

TEST_F(StructuralVars, ConcurrentWalksOverSharedVariables) {
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny a(Lam(Ref(x.v), Arr({Ref(x.v), Add(Ref(x.v), I(1))}))), b(Lam(Ref(y.v), Arr({Ref(y.v), Add(Ref(y.v), I(1))})));
  uint64_t ha = H(a.v, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        EXPECT_EQ(ffk_structural_equal_opts(&a.v, &b.v, (uint32_t)(i & 1)), 1);
        uint64_t h = 0;
        EXPECT_EQ(ffk_structural_hash_opts(&b.v, 0, &h), 0);
        EXPECT_EQ(h, ha);
      }
    });
  for (auto& th : threads) th.join();
}

}  // namespace

// HLam(p, body): a Lam compared and hashed by hooks written in tvm_ffi's form: the walk's
// equal called as equal(x, y, def_region, field_name) and its hash as
// hash(x, init_hash, def_region). def_region 1 binds the variables met in `p`.
int HLamEqual(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  EXPECT_EQ(nargs, 3);
  const TwoFields* a = reinterpret_cast<const TwoFields*>(args[0].v_obj);
  const TwoFields* b = reinterpret_cast<const TwoFields*>(args[1].v_obj);
  ffk_function* eq = reinterpret_cast<ffk_function*>(args[2].v_obj);
  ffk_any call[4] = {a->x, b->x, ffk_any_bool(true), ffk_any_raw_str("p")};
  if (ffk_function_call(eq, call, 4, result) != 0) return -1;
  if (result->v_int == 0) return 0;  /* a bool: nothing to release */
  ffk_any call2[4] = {a->y, b->y, ffk_any_int(0), ffk_any_raw_str("body")};
  return ffk_function_call(eq, call2, 4, result);
}

int HLamHash(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  EXPECT_EQ(nargs, 2);
  const TwoFields* o = reinterpret_cast<const TwoFields*>(args[0].v_obj);
  ffk_function* hash = reinterpret_cast<ffk_function*>(args[1].v_obj);
  ffk_any h;
  ffk_any call[3] = {o->x, ffk_any_int(7), ffk_any_bool(true)};
  if (ffk_function_call(hash, call, 3, &h) != 0) return -1;
  ffk_any call2[3] = {o->y, h, ffk_any_int(0)};
  return ffk_function_call(hash, call2, 3, result);
}

int32_t HLamType() {
  static int32_t t = [] {
    int32_t type = DefineTwoFields("test.sv.HLam", {AnyField("p", offsetof(TwoFields, x)), AnyField("body", offsetof(TwoFields, y))}, 0);
    ffk_function* eq = ffk_function_new("HLam.__s_equal__", HLamEqual, nullptr, nullptr);
    ffk_function* hash = ffk_function_new("HLam.__s_hash__", HLamHash, nullptr, nullptr);
    ffk_any e = ffk_any_object_steal(reinterpret_cast<ffk_object*>(eq));
    ffk_any h = ffk_any_object_steal(reinterpret_cast<ffk_object*>(hash));
    EXPECT_EQ(ffk_type_set_attr(type, FFK_ATTR_S_EQUAL, &e), 0) << FetchError();
    EXPECT_EQ(ffk_type_set_attr(type, FFK_ATTR_S_HASH, &h), 0) << FetchError();
    ffk_any_release(&e);
    ffk_any_release(&h);
    return type;
  }();
  return t;
}

TEST_F(StructuralVars, HooksInTvmFfiFormBindThroughTheirDefRegionArgument) {
  OwnedAny x(Var("x")), y(Var("y"));
  OwnedAny lx(Make(HLamType(), {Ref(x.v), Add(Ref(x.v), I(1))}));
  OwnedAny ly(Make(HLamType(), {Ref(y.v), Add(Ref(y.v), I(1))}));
  EXPECT_EQ(Cmp(lx.v, ly.v), "equal") << "def_region true binds x to y";
  EXPECT_EQ(H(lx.v, 0), H(ly.v, 0));
  OwnedAny wrong(Make(HLamType(), {Ref(y.v), Add(Ref(x.v), I(1))}));
  EXPECT_EQ(Cmp(lx.v, wrong.v), "<root>.body.a | <root>.body.a") << "the field name names the step";
  OwnedAny other(Make(HLamType(), {Ref(x.v), Add(Ref(x.v), I(2))}));
  EXPECT_NE(H(lx.v, 0), H(other.v, 0));
}

int BadRegionEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  ffk_any call[4] = {args[0], args[1], ffk_any_int(5), ffk_any_raw_str("p")};
  return ffk_function_call(reinterpret_cast<ffk_function*>(args[2].v_obj), call, 4, result);
}

TEST_F(StructuralVars, AHookPassingAnUnknownRegionKindIsAValueError) {
  int32_t type = DefineTwoFields("test.sv.BadRegion", {AnyField("p", offsetof(TwoFields, x))}, 0);
  ffk_function* eq = ffk_function_new("BadRegion.__s_equal__", BadRegionEqual, nullptr, nullptr);
  ffk_any e = ffk_any_object_steal(reinterpret_cast<ffk_object*>(eq));
  ASSERT_EQ(ffk_type_set_attr(type, FFK_ATTR_S_EQUAL, &e), 0) << FetchError();
  ffk_any_release(&e);
  OwnedAny a(Make(type, {I(1)})), b(Make(type, {I(1)}));
  EXPECT_EQ(ffk_structural_equal(&a.v, &b.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError", {"def_region 5 is not a DefRegionKind"}));
}
