// ffikit/structural.h, part 2: first mismatch paths, __s_equal__ / __s_hash__ hooks, and
// walks inside a read section (borrowed writable fields). Part 1 is structural_test.cc.
#include <ffikit/ffikit.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"
#include "tests/containers/structural_types.h"

namespace {

using namespace structural_types;  // NOLINT: the shared builders and types
class Structural : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

// ---- First mismatch --------------------------------------------------------------------

// "equal", or the two paths as "lhs | rhs"; an error as "error: Kind: message".
std::string Mismatch(const ffk_any& a, const ffk_any& b) {
  ffk_object *l = nullptr, *r = nullptr;
  int rc = ffk_structural_first_mismatch(&a, &b, &l, &r);
  if (rc < 0) {
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(r, nullptr);
    return "error: " + FetchError();
  }
  if (rc == 0) {
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(Eq(a, b), 1);
    return "equal";
  }
  EXPECT_EQ(Eq(a, b), 0) << "first mismatch and equality agree";
  ffk_any la = ffk_any_object_steal(l), ra = ffk_any_object_steal(r);
  std::string out = ffk::test::Repr(la) + " | " + ffk::test::Repr(ra);
  ffk_any_release(&la);
  ffk_any_release(&ra);
  return out;
}

ffk_any S(const char* s) { return ffk_any_raw_str(s); }

// Every row of the header's table, checked against tvm_ffi 0.1.15's
// get_first_structural_mismatch on the same inputs.
TEST_F(Structural, FirstMismatchFollowsTheHeadersTable) {
  OwnedAny l12(ArrayOf({I(1), I(2)})), l123(ArrayOf({I(1), I(2), I(3)})), l15(ArrayOf({I(1), I(5)}));
  EXPECT_EQ(Mismatch(l12.v, l123.v), "<root>[<missing:2>] | <root>[2]");
  EXPECT_EQ(Mismatch(l123.v, l12.v), "<root>[2] | <root>[<missing:2>]");
  EXPECT_EQ(Mismatch(l15.v, l123.v), "<root>[1] | <root>[1]") << "elements before lengths";
  OwnedAny ak(MapOf({{S("a"), I(1)}, {S("k"), I(2)}})), a(MapOf({{S("a"), I(1)}})), b(MapOf({{S("b"), I(1)}}));
  EXPECT_EQ(Mismatch(ak.v, a.v), "<root>[\"k\"] | <root>[<missing:\"k\">]");
  EXPECT_EQ(Mismatch(a.v, ak.v), "<root>[<missing:\"k\">] | <root>[\"k\"]");
  EXPECT_EQ(Mismatch(a.v, b.v), "<root>[\"a\"] | <root>[<missing:\"a\">]");
  OwnedAny x(ListOf({I(1), ListOf({I(2), DictOf({{S("k"), I(3)}})})}));
  OwnedAny y(ListOf({I(1), ListOf({I(2), DictOf({{S("k"), I(4)}})})}));
  EXPECT_EQ(Mismatch(x.v, y.v), "<root>[1][1][\"k\"] | <root>[1][1][\"k\"]");
  OwnedAny a3(MapOf({{S("a"), I(3)}}));
  EXPECT_EQ(Mismatch(ak.v, a3.v), "<root>[\"a\"] | <root>[\"a\"]") << "a's entries first, in a's order";
  EXPECT_EQ(Mismatch(a3.v, ak.v), "<root>[\"a\"] | <root>[\"a\"]");
  OwnedAny n12(ArrayOf({ArrayOf({I(1), I(2)})})), n123(ArrayOf({ArrayOf({I(1), I(2), I(3)})}));
  EXPECT_EQ(Mismatch(n12.v, n123.v), "<root>[0][<missing:2>] | <root>[0][2]");
  OwnedAny x1(MapOf({{S("x"), ArrayOf({I(1)})}})), x12(MapOf({{S("x"), ArrayOf({I(1), I(2)})}}));
  EXPECT_EQ(Mismatch(x1.v, x12.v), "<root>[\"x\"][<missing:1>] | <root>[\"x\"][1]");
  OwnedAny i1(MapOf({{I(1), I(2)}})), i2(MapOf({{I(1), I(3)}}));
  EXPECT_EQ(Mismatch(i1.v, i2.v), "<root>[1] | <root>[1]");
  EXPECT_EQ(Mismatch(I(1), I(2)), "<root> | <root>");
  EXPECT_EQ(Mismatch(l12.v, a.v), "<root> | <root>") << "another type";
  EXPECT_EQ(Mismatch(S("a"), I(1)), "<root> | <root>");
  OwnedAny lx(ArrayOf({I(1), S("x")}));
  EXPECT_EQ(Mismatch(l12.v, lx.v), "<root>[1] | <root>[1]");
  OwnedAny same(ArrayOf({I(1), I(2)}));
  EXPECT_EQ(Mismatch(l12.v, same.v), "equal");
  EXPECT_EQ(Mismatch(I(3), I(3)), "equal");
}

TEST_F(Structural, FirstMismatchNamesFieldsOfReflectedObjects) {
  OwnedAny p(Pair(1, 2)), q(Pair(1, 3)), o(Create(OtherPairType(), {I(1), I(2)}));
  EXPECT_EQ(Mismatch(p.v, q.v), "<root>.b | <root>.b");
  EXPECT_EQ(Mismatch(p.v, o.v), "<root> | <root>") << "another type";
  OwnedAny body1(DictOf({{S("body"), ListOf({Pair(0, 0), MapOf({{S("k"), Pair(1, 2)}})})}}));
  OwnedAny body2(DictOf({{S("body"), ListOf({Pair(0, 0), MapOf({{S("k"), Pair(7, 2)}})})}}));
  EXPECT_EQ(Mismatch(body1.v, body2.v), "<root>[\"body\"][1][\"k\"].a | <root>[\"body\"][1][\"k\"].a");
  // Compare-off fields never mismatch; writable fields are named like read-only ones.
  OwnedAny none;
  OwnedAny r1(Record(1, 2.0, true, "s", {1, 2}, none.v)), r2(Record(1, 2.0, true, "s", {1, 3}, none.v));
  SetField(r1.v, "note", S("one"));
  EXPECT_EQ(Mismatch(r1.v, r2.v), "<root>.items[1] | <root>.items[1]");
  OwnedAny items(GetField(r1.v, "items"));
  SetField(r2.v, "items", items.v);
  EXPECT_EQ(Mismatch(r1.v, r2.v), "equal");
}

TEST_F(Structural, FirstMismatchInCyclesIsReportedWhereItLies) {
  OwnedAny a(ListOf({I(1)})), b(ListOf({I(1)}));
  ffk_list_append(L(a.v), &a.v);
  ffk_list_append(L(b.v), &b.v);
  EXPECT_EQ(Mismatch(a.v, b.v), "equal");
  ffk_any two = I(2), three = I(3);
  ffk_list_append(L(a.v), &two);
  ffk_list_append(L(b.v), &three);
  EXPECT_EQ(Mismatch(a.v, b.v), "<root>[2] | <root>[2]");
  ffk_list_clear(L(a.v));
  ffk_list_clear(L(b.v));
  // Through object fields: n1 -> n2 -> n1, m1 -> m2 -> m1 with one value apart.
  OwnedAny n1(Node(1)), n2(Node(2)), m1(Node(1)), m2(Node(5));
  SetField(n1.v, "next", n2.v);
  SetField(n2.v, "next", n1.v);
  SetField(m1.v, "next", m2.v);
  SetField(m2.v, "next", m1.v);
  EXPECT_EQ(Mismatch(n1.v, m1.v), "<root>.next.value | <root>.next.value");
  SetField(n2.v, "next", ffk_any_none());
  SetField(m2.v, "next", ffk_any_none());
}

TEST_F(Structural, FirstMismatchStopsAtTheDepthLimit) {
  OwnedAny deep(Chain(FFK_STRUCTURAL_MAX_DEPTH + 1)), deep2(Chain(FFK_STRUCTURAL_MAX_DEPTH + 1));
  EXPECT_EQ(Mismatch(deep.v, deep2.v), "error: RuntimeError: containers and objects nested deeper than 1000 levels");
  ffk_object* l = nullptr;
  EXPECT_EQ(ffk_structural_first_mismatch(nullptr, &deep.v, &l, &l), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError"));
  EXPECT_EQ(ffk_structural_first_mismatch(&deep.v, &deep.v, nullptr, &l), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError"));
}

TEST_F(Structural, FirstMismatchAllocationFailuresLeaveNothingBehind) {
  OwnedAny x(DictOf({{S("body"), ListOf({Pair(0, 0), DictOf({{S("k"), Pair(1, 2)}})})}}));
  OwnedAny y(DictOf({{S("body"), ListOf({Pair(0, 0), DictOf({{S("k"), Pair(7, 2)}})})}}));
  ffk::test::SweepAllocationFailures([&] {
    ffk_object *l = nullptr, *r = nullptr;
    int rc = ffk_structural_first_mismatch(&x.v, &y.v, &l, &r);
    if (rc < 0) {
      EXPECT_TRUE(l == nullptr && r == nullptr);
      return false;
    }
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(ffk_access_path_depth(l), 4);
    EXPECT_EQ(ffk_access_path_depth(r), 4);
    ffk_object_release(l);
    ffk_object_release(r);
    return true;
  });
}

// ---- Hooks ------------------------------------------------------------------------------

// A reflected type compared by a hook: `name` case-insensitively, then `body` through the
// walk's equal (attr "body"); hashed by the lower-cased name and the walk's hash of body.
struct SHooked {
  ffk_object header;
  ffk_string* name;
  ffk_any body;
};

std::string Lower(const ffk_any& v) {
  const char* data;
  size_t size;
  EXPECT_EQ(ffk_any_as_str(&v, &data, &size), 0);
  std::string s(data, size);
  for (char& c : s) c = (char)tolower((unsigned char)c);
  return s;
}

int HookedEqual(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  EXPECT_EQ(nargs, 3);
  const SHooked* a = reinterpret_cast<const SHooked*>(args[0].v_obj);
  const SHooked* b = reinterpret_cast<const SHooked*>(args[1].v_obj);
  ffk_any na = ffk_any_object(reinterpret_cast<ffk_object*>(a->name));
  ffk_any nb = ffk_any_object(reinterpret_cast<ffk_object*>(b->name));
  bool same = Lower(na) == Lower(nb);
  ffk_any_release(&na);
  ffk_any_release(&nb);
  if (!same) {
    *result = ffk_any_bool(false);
    return 0;
  }
  ffk_any call[3] = {a->body, b->body, ffk_any_raw_str("body")};
  return ffk_function_call(reinterpret_cast<ffk_function*>(args[2].v_obj), call, 3, result);
}

int HookedHash(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  EXPECT_EQ(nargs, 2);
  const SHooked* o = reinterpret_cast<const SHooked*>(args[0].v_obj);
  ffk_any n = ffk_any_object(reinterpret_cast<ffk_object*>(o->name));
  std::string lower = Lower(n);
  ffk_any_release(&n);
  ffk_any body_hash;
  if (ffk_function_call(reinterpret_cast<ffk_function*>(args[1].v_obj), &o->body, 1, &body_hash) != 0) return -1;
  *result = ffk_any_int((int64_t)(std::hash<std::string>()(lower) * 31 + (uint64_t)body_hash.v_int));
  return 0;
}

void SetHook(int32_t t, const char* name, ffk_safe_call call) {
  ffk_function* f = ffk_function_new(name, call, nullptr, nullptr);
  ffk_any v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(f));
  EXPECT_EQ(ffk_type_set_attr(t, name, &v), 0) << FetchError();
  ffk_any_release(&v);
}

int32_t HookedType() {
  static int32_t t = [] {
    int32_t i = Define("test.structural.Hooked", FFK_TYPE_OBJECT, sizeof(SHooked),
                       {Field("name", offsetof(SHooked, name), "str"), Field("body", offsetof(SHooked, body), "Any")});
    SetHook(i, FFK_ATTR_S_EQUAL, HookedEqual);
    SetHook(i, FFK_ATTR_S_HASH, HookedHash);
    return i;
  }();
  return t;
}

ffk_any Hooked(const char* name, ffk_any body) {
  ffk_any out = Create(HookedType(), {S(name), body});
  ffk_any_release(&body);
  return out;
}

TEST_F(Structural, HooksReplaceTheFieldWiseWalk) {
  OwnedAny a(Hooked("Alpha", ArrayOf({I(1)}))), b(Hooked("ALPHA", ArrayOf({I(1)}))), c(Hooked("beta", ArrayOf({I(1)})));
  EXPECT_EQ(Eq(a.v, b.v), 1) << "case-insensitive by the hook";
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(Eq(a.v, c.v), 0);
  EXPECT_NE(H(a.v), H(c.v));
  // The hook's equal call recurses in the same walk and names its step.
  OwnedAny d(Hooked("alpha", ArrayOf({I(2)})));
  EXPECT_EQ(Eq(a.v, d.v), 0);
  EXPECT_NE(H(a.v), H(d.v));
  EXPECT_EQ(Mismatch(a.v, d.v), "<root>.body[0] | <root>.body[0]");
  // A hook that answers False by itself reports its objects.
  EXPECT_EQ(Mismatch(a.v, c.v), "<root> | <root>");
  OwnedAny la(ListOf({I(0), Ref(a.v)})), lc(ListOf({I(0), Ref(c.v)}));
  EXPECT_EQ(Mismatch(la.v, lc.v), "<root>[1] | <root>[1]");
  OwnedAny lb(ListOf({I(0), Ref(b.v)}));
  EXPECT_EQ(Mismatch(la.v, lb.v), "equal");
  EXPECT_EQ(H(la.v), H(lb.v));
}

TEST_F(Structural, HookedWalksSurviveEveryAllocationFailure) {
  OwnedAny a(ListOf({Hooked("Alpha", ArrayOf({I(1), I(2)}))})), d(ListOf({Hooked("alpha", ArrayOf({I(1), I(3)}))}));
  ffk::test::SweepAllocationFailures([&] {
    ffk_object *l = nullptr, *r = nullptr;
    int rc = ffk_structural_first_mismatch(&a.v, &d.v, &l, &r);
    if (rc < 0) return false;
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(ffk_access_path_depth(l), 3);  // [0].body[1]
    ffk_object_release(l);
    ffk_object_release(r);
    uint64_t h;
    return ffk_structural_hash(&a.v, &h) == 0 && ffk_structural_equal(&a.v, &d.v) == 0;
  });
}

// A plain registered type (no reflection) given hooks gains structural semantics.
struct SOpaque {
  ffk_object header;
  int64_t v;
};

int OpaqueEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  *result = ffk_any_bool(reinterpret_cast<const SOpaque*>(args[0].v_obj)->v ==
                         reinterpret_cast<const SOpaque*>(args[1].v_obj)->v);
  return 0;
}
int OpaqueHash(void*, const ffk_any* args, int32_t, ffk_any* result) {
  *result = ffk_any_int(reinterpret_cast<const SOpaque*>(args[0].v_obj)->v);
  return 0;
}

ffk_any Opaque(int32_t t, int64_t v) {
  ffk_object* o = ffk_object_alloc(t, sizeof(SOpaque), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  reinterpret_cast<SOpaque*>(o)->v = v;
  return ffk_any_object_steal(o);
}

TEST_F(Structural, HooksGiveAPlainTypeStructuralSemantics) {
  int32_t t = ffk_type_register("test.structural.OpaqueHooked", FFK_TYPE_OBJECT);
  OwnedAny a(Opaque(t, 4)), b(Opaque(t, 4)), c(Opaque(t, 5));
  EXPECT_EQ(Eq(a.v, b.v), 0) << "identity before the hooks";
  SetHook(t, FFK_ATTR_S_EQUAL, OpaqueEqual);
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(Eq(a.v, c.v), 0);
  OwnedAny la(ArrayOf({Ref(a.v)})), lb(ArrayOf({Ref(b.v)}));
  EXPECT_EQ(Eq(la.v, lb.v), 1);
  // No hash hook yet: the type key alone, which objects the equal hook finds equal share
  // (issue 35: this was the address, so equal objects hashed differently).
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(H(a.v), H(c.v));
  EXPECT_EQ(H(la.v), H(lb.v));
  SetHook(t, FFK_ATTR_S_HASH, OpaqueHash);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(H(la.v), H(lb.v));
  EXPECT_NE(H(a.v), H(c.v));
  // A subtype inherits the hooks; None on it hides them.
  int32_t sub = ffk_type_register("test.structural.OpaqueHookedSub", t);
  OwnedAny s1(Opaque(sub, 1)), s2(Opaque(sub, 1));
  EXPECT_EQ(Eq(s1.v, s2.v), 1);
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_type_set_attr(sub, FFK_ATTR_S_EQUAL, &none), 0);
  EXPECT_EQ(Eq(s1.v, s2.v), 0);
  EXPECT_EQ(Eq(s1.v, s1.v), 1);
}

int RaisingHook(void*, const ffk_any*, int32_t, ffk_any*) {
  return ffk_error_set(FFK_ERR_VALUE, "the hook refuses");
}
int StringHook(void*, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_raw_str("yes");
  return 0;
}
ffk_any g_kept = ffk_any_none();
int KeepingHook(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  ffk_any_release(&g_kept);
  g_kept = args[nargs - 1];
  ffk_any_retain(&g_kept);
  *result = ffk_any_bool(true);
  return 0;
}

TEST_F(Structural, HookErrorsEndTheWalk) {
  int32_t t = ffk_type_register("test.structural.OpaqueRaising", FFK_TYPE_OBJECT);
  SetHook(t, FFK_ATTR_S_EQUAL, RaisingHook);
  SetHook(t, FFK_ATTR_S_HASH, RaisingHook);
  OwnedAny a(Opaque(t, 1)), b(Opaque(t, 1));
  OwnedAny la(ListOf({I(1), Ref(a.v)})), lb(ListOf({I(1), Ref(b.v)}));
  EXPECT_EQ(Eq(la.v, lb.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError", {"the hook refuses"}));
  uint64_t h;
  EXPECT_EQ(ffk_structural_hash(&la.v, &h), -1);
  EXPECT_TRUE(ffk::test::PendingError("ValueError", {"the hook refuses"}));
  EXPECT_EQ(Mismatch(la.v, lb.v).rfind("error: ValueError", 0), 0u);

  int32_t u = ffk_type_register("test.structural.OpaqueBadResult", FFK_TYPE_OBJECT);
  SetHook(u, FFK_ATTR_S_EQUAL, StringHook);
  SetHook(u, FFK_ATTR_S_HASH, StringHook);
  OwnedAny c(Opaque(u, 1)), d(Opaque(u, 1));
  EXPECT_EQ(Eq(c.v, d.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("TypeError", {"__s_equal__", "test.structural.OpaqueBadResult", "not a bool"}));
  EXPECT_EQ(ffk_structural_hash(&c.v, &h), -1);
  EXPECT_TRUE(ffk::test::PendingError("TypeError", {"__s_hash__", "not an int"}));

  int32_t v = ffk_type_register("test.structural.OpaqueNotAFunction", FFK_TYPE_OBJECT);
  ffk_any seven = I(7);
  ASSERT_EQ(ffk_type_set_attr(v, FFK_ATTR_S_EQUAL, &seven), 0);
  OwnedAny e(Opaque(v, 1)), f(Opaque(v, 1));
  EXPECT_EQ(Eq(e.v, f.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("TypeError", {"__s_equal__", "not a Function"}));

  // The walk's Function is valid only during the hook's call.
  int32_t w = ffk_type_register("test.structural.OpaqueKeeping", FFK_TYPE_OBJECT);
  SetHook(w, FFK_ATTR_S_EQUAL, KeepingHook);
  OwnedAny g(Opaque(w, 1)), k(Opaque(w, 2));
  EXPECT_EQ(Eq(g.v, k.v), 1);
  ASSERT_EQ(g_kept.type_index, FFK_TYPE_FUNCTION);
  ffk_any call[2] = {I(1), I(1)};
  OwnedAny out;
  EXPECT_EQ(ffk_function_call(reinterpret_cast<ffk_function*>(g_kept.v_obj), call, 2, &out.v), -1);
  EXPECT_TRUE(ffk::test::PendingError("RuntimeError", {"only during that hook's call"}));
  ffk_any_release(&g_kept);
  g_kept = ffk_any_none();
}

// Two reflected types whose indices share a slot of the walk's per-type cache, one
// nested in the other: the outer type's field list must survive the inner's lookup.
struct SOuter {
  ffk_object header;
  int64_t x;
  ffk_object* inner;
  int64_t y;
};
struct SInner {
  ffk_object header;
  int64_t unused[2];  // so that the inner fields' offsets lie past the outer type's instance
  int64_t p, q, r, s, t;
};

TEST_F(Structural, NestedTypesSharingACacheSlotKeepTheirFields) {
  int32_t outer_index = ffk_type_register("test.structural.SlotOuter", FFK_TYPE_OBJECT);
  char name[64];
  for (int i = 0, last = outer_index; (last + 1) % 8 != outer_index % 8; ++i) {
    snprintf(name, sizeof name, "test.structural.SlotFiller%d", i);
    last = ffk_type_register(name, FFK_TYPE_OBJECT);
    ASSERT_GT(last, 0);
  }
  int32_t inner = Define("test.structural.SlotInner", FFK_TYPE_OBJECT, sizeof(SInner),
                         {Field("p", offsetof(SInner, p), "int"), Field("q", offsetof(SInner, q), "int"),
                          Field("r", offsetof(SInner, r), "int"), Field("s", offsetof(SInner, s), "int"),
                          Field("t", offsetof(SInner, t), "int")});
  ASSERT_EQ(inner % 8, outer_index % 8);
  int32_t outer = Define("test.structural.SlotOuter", FFK_TYPE_OBJECT, sizeof(SOuter),
                         {Field("x", offsetof(SOuter, x), "int"), Field("inner", offsetof(SOuter, inner), "Object"),
                          Field("y", offsetof(SOuter, y), "int")});
  OwnedAny i1(Create(inner, {I(1), I(2), I(3), I(4), I(5)})), i2(Create(inner, {I(1), I(2), I(3), I(4), I(5)}));
  OwnedAny o1(Create(outer, {I(1), i1.v, I(2)})), o2(Create(outer, {I(1), i2.v, I(3)}));
  EXPECT_EQ(Eq(o1.v, o2.v), 0) << "y differs";
  EXPECT_EQ(Mismatch(o1.v, o2.v), "<root>.y | <root>.y");
  EXPECT_NE(H(o1.v), H(o2.v));
  OwnedAny o3(Create(outer, {I(1), i2.v, I(2)}));
  EXPECT_EQ(Eq(o1.v, o3.v), 1);
  EXPECT_EQ(H(o1.v), H(o3.v));
}


// ---- Walks inside a read section ----------------------------------------------------------

// A reflected type with hooks that watch their arguments: they record the use counts of
// the objects they receive, may replace the field that led the walk to them (so the
// object being compared is retired in the middle of the hook), and compare `v`.
struct SWatched {
  ffk_object header;
  int64_t v;
};

struct SHolder {
  ffk_object header;
  ffk_object* item;  // writable
};

uint32_t g_seen_counts[2];
ffk_object* g_rewrite;  // a Holder whose item the hooks replace, or nullptr

int32_t WatchedType();
int32_t HolderType();

// Replaces g_rewrite's item with a new Watched of the same v.
void RewriteHolder(const SWatched* like) {
  if (g_rewrite == nullptr) return;
  ffk_any v = ffk_any_int(like->v);
  ffk_object* fresh = nullptr;
  ASSERT_EQ(ffk_object_create(WatchedType(), &v, 1, nullptr, 0, &fresh), 0) << FetchError();
  ffk_any item = ffk_any_object_steal(fresh);
  EXPECT_EQ(ffk_object_set_field(g_rewrite, "item", &item), 0) << FetchError();
  ffk_any_release(&item);
}

int WatchedEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const SWatched* a = reinterpret_cast<const SWatched*>(args[0].v_obj);
  const SWatched* b = reinterpret_cast<const SWatched*>(args[1].v_obj);
  g_seen_counts[0] = ffk_object_use_count(&a->header);
  g_seen_counts[1] = ffk_object_use_count(&b->header);
  RewriteHolder(a);
  *result = ffk_any_bool(a->v == b->v);  // a was retired, not freed: the walk's section keeps it
  return 0;
}

int WatchedHash(void*, const ffk_any* args, int32_t, ffk_any* result) {
  const SWatched* a = reinterpret_cast<const SWatched*>(args[0].v_obj);
  g_seen_counts[0] = ffk_object_use_count(&a->header);
  RewriteHolder(a);
  *result = ffk_any_int(a->v);
  return 0;
}

int32_t WatchedType() {
  static int32_t t = [] {
    int32_t i = Define("test.structural.Watched", FFK_TYPE_OBJECT, sizeof(SWatched),
                       {Field("v", offsetof(SWatched, v), "int")});
    SetHook(i, FFK_ATTR_S_EQUAL, WatchedEqual);
    SetHook(i, FFK_ATTR_S_HASH, WatchedHash);
    return i;
  }();
  return t;
}

int32_t HolderType() {
  static int32_t t = Define("test.structural.Holder", FFK_TYPE_OBJECT, sizeof(SHolder),
                            {Field("item", offsetof(SHolder, item), "Object", FFK_FIELD_WRITABLE)});
  return t;
}

ffk_any Holder(int64_t v) {
  OwnedAny w(Create(WatchedType(), {I(v)}));
  return Create(HolderType(), {w.v});
}

TEST_F(Structural, WalksBorrowWritableFieldsAndKeepAValueAHookReplacesAlive) {
  OwnedAny a(Holder(5)), b(Holder(5)), c(Holder(6));
  // Borrowed: the hooks see the objects with the field's reference only.
  g_rewrite = nullptr;
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(g_seen_counts[0], 1u);
  EXPECT_EQ(g_seen_counts[1], 1u);
  uint64_t h5 = H(a.v);
  EXPECT_EQ(g_seen_counts[0], 1u);
  EXPECT_EQ(Eq(a.v, c.v), 0);

  // The hook replaces the field that led to its object: the walk's read section keeps the
  // old object alive until the walk ends (ASan checks the hook's read after the write),
  // and then it is gone.
  ffk_object* old = reinterpret_cast<SHolder*>(a.v.v_obj)->item;
  ffk_weak_retain(old);
  g_rewrite = a.v.v_obj;
  EXPECT_EQ(Eq(a.v, b.v), 1) << FetchError();
  ffk_object* back = ffk_weak_lock(old);
  EXPECT_EQ(back, nullptr) << "reclaimed when the walk's section ended";
  ffk_object_release(back);
  ffk_weak_release(old);
  EXPECT_NE(reinterpret_cast<SHolder*>(a.v.v_obj)->item, old);
  old = reinterpret_cast<SHolder*>(a.v.v_obj)->item;
  ffk_weak_retain(old);
  uint64_t h = 0;
  EXPECT_EQ(ffk_structural_hash(&a.v, &h), 0) << FetchError();
  EXPECT_EQ(h, h5);
  back = ffk_weak_lock(old);
  EXPECT_EQ(back, nullptr);
  ffk_object_release(back);
  ffk_weak_release(old);
  ffk_object *lhs = nullptr, *rhs = nullptr;
  EXPECT_EQ(ffk_structural_first_mismatch(&a.v, &c.v, &lhs, &rhs), 1) << FetchError();
  ffk_object_release(lhs);
  ffk_object_release(rhs);
  g_rewrite = nullptr;
  EXPECT_EQ(Eq(a.v, b.v), 1);
}

TEST_F(Structural, ChainsOfWritableFieldsWalkWithoutTakingReferences) {
  // 900 nodes linked through a writable field: every node is held by its predecessor only,
  // and stays so during and after the walks.
  auto chain = [](int n, int64_t bottom) {
    ffk_any t = Node(bottom);
    for (int k = 1; k < n; ++k) {
      ffk_any next = Node(k);
      SetField(next, "next", t);
      ffk_any_release(&t);
      t = next;
    }
    return t;
  };
  OwnedAny a(chain(900, 0)), b(chain(900, 0)), c(chain(900, 1));
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(Eq(a.v, c.v), 0);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_NE(H(a.v), H(c.v));
  EXPECT_EQ(Mismatch(a.v, c.v), Mismatch(b.v, c.v));
  const ffk_object* second = FieldObject(a.v, "next");
  EXPECT_EQ(ffk_object_use_count(second), 1u);
}

}  // namespace
