// ffikit/structural.h: structural equality and hash across every container and reflected
// object type, cycles, the depth limit, deep copy (sharing and cycles kept), and
// allocation failures.
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

TEST_F(Structural, ScalarsFollowKeySemantics) {
  EXPECT_EQ(Eq(I(1), I(1)), 1);
  EXPECT_EQ(Eq(I(1), ffk_any_float(1.0)), 0);
  EXPECT_EQ(Eq(I(1), ffk_any_bool(true)), 0);
  EXPECT_EQ(Eq(ffk_any_float(NAN), ffk_any_float(NAN)), 1);
  EXPECT_EQ(Eq(ffk_any_float(-0.0), ffk_any_float(0.0)), 1);
  EXPECT_EQ(H(ffk_any_float(-0.0)), H(ffk_any_float(0.0)));
  EXPECT_EQ(H(ffk_any_float(NAN)), H(ffk_any_float(-NAN)));
  OwnedAny heap;
  ASSERT_EQ(ffk_any_str("a string longer than 7", 22, &heap.v), 0);
  EXPECT_EQ(Eq(heap.v, ffk_any_raw_str("a string longer than 7")), 1);
  EXPECT_EQ(H(heap.v), H(ffk_any_raw_str("a string longer than 7")));
}

TEST_F(Structural, ShapesCompareByTheirDimensions) {
  const int64_t d23[] = {2, 3}, d32[] = {3, 2};
  OwnedAny a, b, c;
  a.v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_shape_new(d23, 2)));
  b.v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_shape_new(d23, 2)));
  c.v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_shape_new(d32, 2)));
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(Eq(a.v, c.v), 0);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_NE(H(a.v), H(c.v));
}

TEST_F(Structural, SequencesCompareElementWiseWithinOneType) {
  OwnedAny a(ArrayOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("x")}));
  OwnedAny b(ArrayOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("x")}));
  OwnedAny c(ArrayOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("y")}));
  OwnedAny shorter(ArrayOf({I(1), ffk_any_float(NAN)}));
  OwnedAny t(TupleOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("x")}));
  OwnedAny l(ListOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("x")}));
  OwnedAny l2(ListOf({I(1), ffk_any_float(NAN), ffk_any_raw_str("x")}));
  EXPECT_NE(a.v.v_obj, b.v.v_obj);
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(Eq(a.v, c.v), 0);
  EXPECT_EQ(Eq(a.v, shorter.v), 0);
  EXPECT_EQ(Eq(a.v, t.v), 0) << "an Array never equals a Tuple";
  EXPECT_EQ(Eq(a.v, l.v), 0) << "an Array never equals a List";
  EXPECT_EQ(Eq(l.v, l2.v), 1);
  EXPECT_EQ(H(l.v), H(l2.v));
  EXPECT_EQ(Eq(a.v, I(1)), 0);
  OwnedAny ab(ArrayOf({I(1), I(2)})), ba(ArrayOf({I(2), I(1)}));
  EXPECT_EQ(Eq(ab.v, ba.v), 0);
  EXPECT_NE(H(ab.v), H(ba.v)) << "order matters for sequences";
}

TEST_F(Structural, MappingsIgnoreOrderButNotKind) {
  OwnedAny m1(MapOf({{ffk_any_raw_str("a"), I(1)}, {I(3), ffk_any_float(-0.0)}}));
  OwnedAny m2(MapOf({{I(3), ffk_any_float(0.0)}, {ffk_any_raw_str("a"), I(1)}}));
  OwnedAny m3(MapOf({{I(3), ffk_any_float(0.0)}, {ffk_any_raw_str("a"), I(2)}}));
  OwnedAny m4(MapOf({{I(3), ffk_any_float(0.0)}, {ffk_any_raw_str("b"), I(1)}}));
  OwnedAny d1(DictOf({{ffk_any_raw_str("a"), I(1)}, {I(3), ffk_any_float(0.0)}}));
  OwnedAny d2(DictOf({{I(3), ffk_any_float(0.0)}, {ffk_any_raw_str("a"), I(1)}}));
  EXPECT_EQ(Eq(m1.v, m2.v), 1);
  EXPECT_EQ(H(m1.v), H(m2.v));
  EXPECT_EQ(Eq(m1.v, m3.v), 0);
  EXPECT_EQ(Eq(m1.v, m4.v), 0);
  EXPECT_EQ(Eq(m1.v, d1.v), 0) << "a Map never equals a Dict";
  EXPECT_EQ(Eq(d1.v, d2.v), 1);
  EXPECT_EQ(H(d1.v), H(d2.v));
}

TEST_F(Structural, NestedContainersCompareDeeply) {
  OwnedAny x(ListOf({ArrayOf({I(1)}), MapOf({{I(1), ListOf({I(2)})}})}));
  OwnedAny y(ListOf({ArrayOf({I(1)}), MapOf({{I(1), ListOf({I(2)})}})}));
  OwnedAny z(ListOf({ArrayOf({I(1)}), MapOf({{I(1), ListOf({I(3)})}})}));
  EXPECT_EQ(Eq(x.v, y.v), 1);
  EXPECT_EQ(H(x.v), H(y.v));
  EXPECT_EQ(Eq(x.v, z.v), 0);
}

TEST_F(Structural, SelfContainingListsEndAndEqualEachOther) {
  OwnedAny a(ListOf({I(1)})), b(ListOf({I(1)}));
  ASSERT_EQ(ffk_list_append(L(a.v), &a.v), 0);
  ASSERT_EQ(ffk_list_append(L(b.v), &b.v), 0);
  EXPECT_EQ(Eq(a.v, a.v), 1);
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(ffk::test::Repr(a.v), "[1, ...]");
  OwnedAny d(DictOf({}));
  ASSERT_EQ(ffk_dict_set(D(d.v), &a.v, &d.v), 0);
  H(d.v);
  EXPECT_EQ(Eq(d.v, d.v), 1);
  // Break the cycles so nothing stays alive.
  ASSERT_EQ(ffk_list_clear(L(a.v)), 0);
  ASSERT_EQ(ffk_list_clear(L(b.v)), 0);
  ASSERT_EQ(ffk_dict_clear(D(d.v)), 0);
}

// Nests `depth` Lists: [[[...[1]...]]].
ffk_any Nested(int depth) {
  ffk_any v = ListOf({I(1)});
  for (int i = 1; i < depth; ++i) {
    ffk_list* outer = ffk_list_new();
    ffk_list_append_steal(outer, &v);
    v = ffk_any_object_steal(reinterpret_cast<ffk_object*>(outer));
  }
  return v;
}

TEST_F(Structural, NestingBeyondTheLimitIsAnErrorNotACrash) {
  OwnedAny ok(Nested(FFK_STRUCTURAL_MAX_DEPTH)), ok2(Nested(FFK_STRUCTURAL_MAX_DEPTH));
  EXPECT_EQ(Eq(ok.v, ok2.v), 1);
  OwnedAny deep(Nested(FFK_STRUCTURAL_MAX_DEPTH + 1)), deep2(Nested(FFK_STRUCTURAL_MAX_DEPTH + 1));
  EXPECT_EQ(Eq(deep.v, deep2.v), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
  uint64_t h = 7;
  EXPECT_EQ(ffk_structural_hash(&deep.v, &h), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
  OwnedAny copy;
  EXPECT_EQ(ffk_deep_copy(&deep.v, &copy.v), -1);
  EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
}

TEST_F(Structural, DeepCopyCopiesMutableContainersAndSharesImmutableLeaves) {
  OwnedAny leaf(ArrayOf({I(1), ffk_any_raw_str("a string longer than 7")}));
  ffk_any inner = ListOf({I(2)});
  OwnedAny src(ListOf({Ref(leaf.v), Ref(inner), DictOf({{I(1), Ref(inner)}})}));
  ffk_any_release(&inner);
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&src.v, &copy.v), 0);
  EXPECT_NE(copy.v.v_obj, src.v.v_obj);
  EXPECT_EQ(Eq(copy.v, src.v), 1);
  OwnedAny c0, c1, c2, s1;
  ASSERT_EQ(ffk_list_get(L(copy.v), 0, &c0.v), 0);
  ASSERT_EQ(ffk_list_get(L(copy.v), 1, &c1.v), 0);
  ASSERT_EQ(ffk_list_get(L(copy.v), 2, &c2.v), 0);
  ASSERT_EQ(ffk_list_get(L(src.v), 1, &s1.v), 0);
  EXPECT_EQ(c0.v.v_obj, leaf.v.v_obj) << "an Array of plain values cannot change: shared";
  EXPECT_NE(c1.v.v_obj, s1.v.v_obj) << "a List is copied";
  OwnedAny in_dict;
  ffk_any one = I(1);
  ASSERT_EQ(ffk_dict_get(D(c2.v), &one, &in_dict.v), 1);
  EXPECT_EQ(in_dict.v.v_obj, c1.v.v_obj) << "a List reached twice is copied once";
  // Changing the copy leaves the original alone.
  ffk_any nine = I(9);
  ASSERT_EQ(ffk_list_append(L(c1.v), &nine), 0);
  EXPECT_EQ(ffk_list_size(L(s1.v)), 1);
  EXPECT_EQ(Eq(copy.v, src.v), 0);
}

TEST_F(Structural, DeepCopyKeepsCyclesThroughImmutableContainers) {
  // l = [1, l] and a = (l,) with l.append(a): l -> a -> l.
  OwnedAny l(ListOf({I(1)}));
  ASSERT_EQ(ffk_list_append(L(l.v), &l.v), 0);
  OwnedAny a(ArrayOf({Ref(l.v)}));
  ASSERT_EQ(ffk_list_append(L(l.v), &a.v), 0);
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&a.v, &copy.v), 0);
  ASSERT_EQ(copy.v.type_index, FFK_TYPE_ARRAY);
  EXPECT_NE(copy.v.v_obj, a.v.v_obj);
  OwnedAny cl;
  ASSERT_EQ(ffk_array_get(reinterpret_cast<ffk_array*>(copy.v.v_obj), 0, &cl.v), 0);
  EXPECT_NE(cl.v.v_obj, l.v.v_obj);
  OwnedAny self, back;
  ASSERT_EQ(ffk_list_get(L(cl.v), 1, &self.v), 0);
  ASSERT_EQ(ffk_list_get(L(cl.v), 2, &back.v), 0);
  EXPECT_EQ(self.v.v_obj, cl.v.v_obj) << "the copied List contains itself";
  EXPECT_EQ(back.v.v_obj, copy.v.v_obj) << "and the copied Array";
  EXPECT_EQ(Eq(copy.v, a.v), 1);
  ASSERT_EQ(ffk_list_clear(L(l.v)), 0);
  ASSERT_EQ(ffk_list_clear(L(cl.v)), 0);
}

TEST_F(Structural, DeepCopyKeepsContainerKeysSoTheCopyStaysEqual) {
  // Found by the containers fuzzer: a container key compares by identity, so copying it
  // made the copy's key another key, and the copy was not equal to its source.
  OwnedAny key_map(MapOf({{ffk_any_raw_str("a key long enough for the heap"), ListOf({ArrayOf({})})}}));
  OwnedAny key_list(ListOf({I(1)}));
  OwnedAny d(DictOf({{Ref(key_map.v), ListOf({I(2)})}, {Ref(key_list.v), I(3)}}));
  OwnedAny m(MapOf({{Ref(key_list.v), Ref(d.v)}}));
  for (const OwnedAny* v : {&d, &m}) {
    OwnedAny copy;
    ASSERT_EQ(ffk_deep_copy(&v->v, &copy.v), 0);
    EXPECT_NE(copy.v.v_obj, v->v.v_obj);
    EXPECT_EQ(Eq(copy.v, v->v), 1);
    EXPECT_EQ(Eq(v->v, copy.v), 1);
    EXPECT_EQ(H(copy.v), H(v->v));
  }
  OwnedAny copy, value;
  ASSERT_EQ(ffk_deep_copy(&d.v, &copy.v), 0);
  ASSERT_EQ(ffk_dict_get(D(copy.v), &key_map.v, &value.v), 1) << "the same key object finds the copied value";
  OwnedAny source_value;
  ASSERT_EQ(ffk_dict_get(D(d.v), &key_map.v, &source_value.v), 1);
  EXPECT_NE(value.v.v_obj, source_value.v.v_obj) << "values are still copied";
}

TEST_F(Structural, SharedContainersAreWalkedOncePerPairNotOncePerPath) {
  // Found by the containers fuzzer (a timeout): l_k = [l_k-1, l_k-1] has 2^k paths to
  // l_0. Equality and hashing walked every path (each List visit takes a snapshot, one
  // allocation), so their cost doubled per level; now they remember finished pairs and
  // containers. Counting allocations keeps the test free of timing.
  auto chain = [](int64_t bottom) {
    ffk_any l = ListOf({I(bottom)});
    for (int k = 0; k < 18; ++k) {
      ffk_any next = ListOf({Ref(l), Ref(l)});
      ffk_any_release(&l);
      l = next;
    }
    return l;
  };
  OwnedAny l(chain(0));
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&l.v, &copy.v), 0);
  int64_t before = ffk_debug_allocation_count();
  EXPECT_EQ(Eq(l.v, copy.v), 1);
  EXPECT_EQ(H(l.v), H(copy.v));
  EXPECT_LT(ffk_debug_allocation_count() - before, 1000) << "allocations for 19 levels";
  // A difference at the bottom is still found through the shared structure.
  OwnedAny other(chain(1));
  EXPECT_EQ(Eq(l.v, other.v), 0);
  EXPECT_NE(H(l.v), H(other.v));
}

TEST_F(Structural, ReprOfSharedContainersStopsAtTheSizeLimit) {
  // Found by the containers fuzzer (a timeout): the repr of l_k = [l_k-1, l_k-1] prints
  // l_0 once per path, 2^k times. Past FFK_REPR_MAX_SIZE bytes the rest prints as "...".
  ffk_any l = ListOf({ffk_any_raw_str("a leaf of some length")});
  for (int k = 0; k < 60; ++k) {
    ffk_any next = ListOf({Ref(l), Ref(l)});
    ffk_any_release(&l);
    l = next;
  }
  OwnedAny top(l);
  std::string text = ffk::test::Repr(top.v);
  EXPECT_GE(text.size(), FFK_REPR_MAX_SIZE);
  EXPECT_LT(text.size(), FFK_REPR_MAX_SIZE + 4096) << "only the open brackets follow the limit";
  EXPECT_EQ(text.compare(0, 3, "[[["), 0);
  EXPECT_EQ(text.compare(text.size() - 12, 12, ", ...], ...]"), 0) << text.substr(text.size() - 40);
}

TEST_F(Structural, DeepCopyOfEveryKindAndOfScalars) {
  OwnedAny m(MapOf({{ffk_any_raw_str("k"), ListOf({I(1)})}}));
  OwnedAny t(TupleOf({ListOf({I(1)}), I(2)}));
  OwnedAny d(DictOf({{I(1), ArrayOf({I(1)})}}));
  for (const OwnedAny* v : {&m, &t, &d}) {
    OwnedAny copy;
    ASSERT_EQ(ffk_deep_copy(&v->v, &copy.v), 0);
    EXPECT_EQ(copy.v.type_index, v->v.type_index);
    EXPECT_NE(copy.v.v_obj, v->v.v_obj);
    EXPECT_EQ(Eq(copy.v, v->v), 1);
  }
  OwnedAny s;
  ffk_any view = ffk_any_raw_str("a view becomes owned");
  ASSERT_EQ(ffk_deep_copy(&view, &s.v), 0);
  EXPECT_EQ(s.v.type_index, FFK_TYPE_STRING);
}

TEST_F(Structural, AllocationFailuresLeaveNothingBehind) {
  OwnedAny x(ListOf({ArrayOf({I(1), ListOf({I(2)})}), MapOf({{I(1), DictOf({{I(2), I(3)}})}})}));
  OwnedAny y;
  ASSERT_EQ(ffk_deep_copy(&x.v, &y.v), 0);
  ffk::test::SweepAllocationFailures([&] { return ffk_structural_equal(&x.v, &y.v) == 1; });
  ffk::test::SweepAllocationFailures([&] {
    uint64_t h;
    return ffk_structural_hash(&x.v, &h) == 0;
  });
  ffk::test::SweepAllocationFailures([&] {
    OwnedAny copy;
    if (ffk_deep_copy(&x.v, &copy.v) != 0) {
      EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
      return false;
    }
    return Eq(copy.v, x.v) == 1;
  });
}

TEST_F(Structural, ReadersOfAListAnotherThreadChanges) {
  OwnedAny l(ListOf({I(1), I(2)}));
  OwnedAny other(ListOf({I(1), I(2)}));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      ffk_any v = I(i);
      ffk_list_append(L(l.v), &v);
      if (ffk_list_size(L(l.v)) > 8) ffk_list_erase(L(l.v), 2, ffk_list_size(L(l.v)));
    }
    stop = true;
  });
  int equal_seen = 0;
  while (!stop) {
    int rc = Eq(l.v, other.v);
    ASSERT_GE(rc, 0);
    equal_seen += rc;
    uint64_t h;
    ASSERT_EQ(ffk_structural_hash(&l.v, &h), 0);
    OwnedAny copy;
    ASSERT_EQ(ffk_deep_copy(&l.v, &copy.v), 0);
    EXPECT_GE(ffk_list_size(L(copy.v)), 2);
  }
  writer.join();
  (void)equal_seen;
}

TEST_F(Structural, ReflectedObjectsCompareAndHashFieldWise) {
  OwnedAny p(Pair(1, 2)), same(Pair(1, 2)), other(Pair(1, 3)), swapped(Pair(2, 1));
  EXPECT_NE(p.v.v_obj, same.v.v_obj);
  EXPECT_FALSE(ffk_any_equal(&p.v, &same.v)) << "key semantics stay identity";
  EXPECT_EQ(Eq(p.v, same.v), 1);
  EXPECT_EQ(H(p.v), H(same.v));
  EXPECT_EQ(Eq(p.v, p.v), 1);
  EXPECT_EQ(Eq(p.v, other.v), 0);
  EXPECT_EQ(Eq(p.v, swapped.v), 0);
  EXPECT_NE(H(p.v), H(swapped.v)) << "field order matters";
  // Inside containers, element-wise comparison reaches the fields.
  OwnedAny l1(ListOf({Ref(p.v), ArrayOf({Ref(other.v)})})), l2(ListOf({Ref(same.v), ArrayOf({Pair(1, 3)})}));
  EXPECT_EQ(Eq(l1.v, l2.v), 1);
  EXPECT_EQ(H(l1.v), H(l2.v));
  OwnedAny m1(MapOf({{ffk_any_raw_str("k"), Ref(p.v)}})), m2(MapOf({{ffk_any_raw_str("k"), Pair(1, 2)}}));
  EXPECT_EQ(Eq(m1.v, m2.v), 1);
  EXPECT_EQ(H(m1.v), H(m2.v));
}

TEST_F(Structural, ReflectedObjectsOfDifferentTypesAreNeverEqual) {
  OwnedAny p(Pair(1, 2)), o(Create(OtherPairType(), {I(1), I(2)}));
  OwnedAny t(Create(TripleType(), {I(1), I(2)}));
  EXPECT_EQ(Eq(p.v, o.v), 0) << "same fields, another type";
  EXPECT_NE(H(p.v), H(o.v)) << "the type key is mixed into the hash";
  EXPECT_EQ(Eq(p.v, t.v), 0) << "a derived type never equals its parent";
  EXPECT_EQ(Eq(t.v, p.v), 0);
  OwnedAny arr(ArrayOf({I(1), I(2)}));
  EXPECT_EQ(Eq(p.v, arr.v), 0);
  EXPECT_EQ(Eq(arr.v, p.v), 0);
  EXPECT_EQ(Eq(p.v, I(1)), 0);
  EXPECT_EQ(Eq(ffk_any_none(), p.v), 0);
}

TEST_F(Structural, InheritedFieldsAreCompared) {
  OwnedAny t(Create(TripleType(), {I(1), I(2), I(3)})), same(Create(TripleType(), {I(1), I(2), I(3)}));
  OwnedAny parent_differs(Create(TripleType(), {I(9), I(2), I(3)}));
  OwnedAny own_differs(Create(TripleType(), {I(1), I(2), I(4)}));
  EXPECT_EQ(Eq(t.v, same.v), 1);
  EXPECT_EQ(H(t.v), H(same.v));
  EXPECT_EQ(Eq(t.v, parent_differs.v), 0);
  EXPECT_EQ(Eq(t.v, own_differs.v), 0);
  EXPECT_NE(H(t.v), H(own_differs.v));
}

TEST_F(Structural, EveryFieldStorageIsComparedAndCompareOffIsIgnored) {
  OwnedAny inner(Pair(5, 6)), inner_twin(Pair(5, 6));
  OwnedAny a(Record(1, NAN, true, "text", {1, 2}, inner.v)), b(Record(1, NAN, true, "text", {1, 2}, inner_twin.v));
  SetField(a.v, "maybe", inner.v);
  SetField(b.v, "maybe", inner_twin.v);
  EXPECT_EQ(Eq(a.v, b.v), 1) << "NaN equals NaN; an equal Pair in another object is equal";
  EXPECT_EQ(H(a.v), H(b.v));
  // The compare-off note changes neither equality nor hash.
  uint64_t before = H(b.v);
  SetField(b.v, "note", ffk_any_raw_str("a note that does not count"));
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(H(b.v), before);
  // Each compared field, changed alone, makes them unequal.
  OwnedAny list(ListOf({I(1), I(2), I(3)})), pair(Pair(5, 7));
  struct {
    const char* name;
    ffk_any value;
  } changes[] = {{"i", I(2)},
                 {"f", ffk_any_float(0.0)},
                 {"b", ffk_any_bool(false)},
                 {"s", ffk_any_raw_str("other")},
                 {"items", list.v},
                 {"any", I(5)},
                 {"maybe", ffk_any_none()},
                 {"maybe", pair.v}};
  for (const auto& change : changes) {
    OwnedAny c(Record(1, NAN, true, "text", {1, 2}, inner.v));
    SetField(c.v, "maybe", inner.v);
    ASSERT_EQ(Eq(a.v, c.v), 1) << change.name;
    SetField(c.v, change.name, change.value);
    EXPECT_EQ(Eq(a.v, c.v), 0) << change.name;
    EXPECT_EQ(Eq(c.v, a.v), 0) << change.name;
    EXPECT_NE(H(a.v), H(c.v)) << change.name;
  }
  // A change inside a List field is seen too.
  OwnedAny items(GetField(b.v, "items"));
  ffk_any nine = I(9);
  ASSERT_EQ(ffk_list_append(L(items.v), &nine), 0);
  EXPECT_EQ(Eq(a.v, b.v), 0);
}

TEST_F(Structural, ObjectsWithoutReflectionKeepIdentity) {
  int32_t plain = ffk_type_register("test.structural.Plain", FFK_TYPE_OBJECT);
  auto make = [&] {
    return ffk_any_object_steal(ffk_object_alloc(plain, sizeof(ffk_object), [](void* self, int which) {
      if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
    }));
  };
  OwnedAny x(make()), y(make());
  EXPECT_EQ(Eq(x.v, x.v), 1);
  EXPECT_EQ(Eq(x.v, y.v), 0);
  OwnedAny rx(Record(0, 0.0, false, "", {}, x.v)), rx2(Record(0, 0.0, false, "", {}, x.v));
  OwnedAny ry(Record(0, 0.0, false, "", {}, y.v));
  EXPECT_EQ(Eq(rx.v, rx2.v), 1) << "the very same plain object in both";
  EXPECT_EQ(H(rx.v), H(rx2.v));
  EXPECT_EQ(Eq(rx.v, ry.v), 0) << "two plain objects differ by identity";
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&rx.v, &copy.v), 0);
  EXPECT_EQ(FieldObject(copy.v, "any"), x.v.v_obj) << "a plain object is shared by deep copy";
}

TEST_F(Structural, CyclesThroughWritableFieldsEnd) {
  OwnedAny a(Node(1)), b(Node(1)), c(Node(2));
  SetField(a.v, "next", a.v);  // a -> a
  SetField(b.v, "next", b.v);  // b -> b
  SetField(c.v, "next", c.v);  // c -> c
  EXPECT_EQ(Eq(a.v, a.v), 1);
  EXPECT_EQ(Eq(a.v, b.v), 1) << "a pair met again counts as equal";
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(Eq(a.v, c.v), 0);
  // Mutual: x -> y -> x against z -> w -> z, same values.
  OwnedAny x(Node(1)), y(Node(2)), z(Node(1)), w(Node(2)), w_other(Node(3));
  SetField(x.v, "next", y.v);
  SetField(y.v, "next", x.v);
  SetField(z.v, "next", w.v);
  SetField(w.v, "next", z.v);
  EXPECT_EQ(Eq(x.v, z.v), 1);
  EXPECT_EQ(H(x.v), H(z.v));
  SetField(w.v, "next", w_other.v);
  EXPECT_EQ(Eq(x.v, z.v), 0);
  // A cycle through a container in an Any field.
  OwnedAny r1(Record(1, 0.0, false, "", {}, ffk_any_none())), r2(Record(1, 0.0, false, "", {}, ffk_any_none()));
  OwnedAny l1(ListOf({Ref(r1.v)})), l2(ListOf({Ref(r2.v)}));
  SetField(r1.v, "any", l1.v);
  SetField(r2.v, "any", l2.v);
  EXPECT_EQ(Eq(r1.v, r2.v), 1);
  EXPECT_EQ(H(r1.v), H(r2.v));
  // Break the cycles so nothing stays alive.
  for (const OwnedAny* n : {&a, &b, &c, &x, &y, &z, &w}) SetField(n->v, "next", ffk_any_none());
  ASSERT_EQ(ffk_list_clear(L(l1.v)), 0);
  ASSERT_EQ(ffk_list_clear(L(l2.v)), 0);
}

TEST_F(Structural, ObjectNestingBeyondTheLimitIsAnErrorNotACrash) {
  OwnedAny ok(Chain(FFK_STRUCTURAL_MAX_DEPTH)), ok2(Chain(FFK_STRUCTURAL_MAX_DEPTH));
  EXPECT_EQ(Eq(ok.v, ok2.v), 1);
  EXPECT_EQ(H(ok.v), H(ok2.v));
  OwnedAny deep(Chain(FFK_STRUCTURAL_MAX_DEPTH + 1)), deep2(Chain(FFK_STRUCTURAL_MAX_DEPTH + 1));
  EXPECT_EQ(Eq(deep.v, deep2.v), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
  uint64_t h = 7;
  EXPECT_EQ(ffk_structural_hash(&deep.v, &h), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
  OwnedAny copy;
  EXPECT_EQ(ffk_deep_copy(&deep.v, &copy.v), -1);
  EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: containers and objects nested deeper than 1000 levels");
}

TEST_F(Structural, DeepCopyCopiesReflectedObjectsFieldByField) {
  OwnedAny immutable(ArrayOf({I(1), I(2)}));
  OwnedAny inner(Pair(5, 6));
  OwnedAny src(Record(1, 2.5, true, "a string longer than seven", {1, 2}, immutable.v));
  SetField(src.v, "maybe", inner.v);
  SetField(src.v, "note", ffk_any_raw_str("copied too, though not compared"));
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&src.v, &copy.v), 0);
  ASSERT_EQ(copy.v.type_index, RecordType());
  EXPECT_NE(copy.v.v_obj, src.v.v_obj);
  EXPECT_EQ(Eq(copy.v, src.v), 1);
  EXPECT_EQ(H(copy.v), H(src.v));
  EXPECT_NE(FieldObject(copy.v, "items"), FieldObject(src.v, "items")) << "a List field is copied";
  EXPECT_EQ(FieldObject(copy.v, "any"), immutable.v.v_obj) << "an Array of plain values is shared";
  EXPECT_EQ(FieldObject(copy.v, "s"), FieldObject(src.v, "s")) << "strings are shared";
  EXPECT_NE(FieldObject(copy.v, "maybe"), inner.v.v_obj) << "a reflected object is copied";
  OwnedAny note(GetField(copy.v, "note"));
  EXPECT_EQ(ffk::test::Repr(note.v), "\"copied too, though not compared\"");
  // Changing the copy leaves the original alone.
  OwnedAny items(GetField(copy.v, "items"));
  ffk_any nine = I(9);
  ASSERT_EQ(ffk_list_append(L(items.v), &nine), 0);
  SetField(copy.v, "i", I(42));
  OwnedAny src_items(GetField(src.v, "items")), src_i(GetField(src.v, "i"));
  EXPECT_EQ(ffk_list_size(L(src_items.v)), 2);
  EXPECT_EQ(src_i.v.v_int, 1);
  EXPECT_EQ(Eq(copy.v, src.v), 0);
}

TEST_F(Structural, DeepCopyCopiesReadOnlyObjectsOnceEach) {
  // The rule: every object made by reflection is copied, read-only fields or not (as
  // Python's deepcopy copies user objects), and so is a container that holds one.
  OwnedAny p(Pair(1, 2));
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&p.v, &copy.v), 0);
  EXPECT_NE(copy.v.v_obj, p.v.v_obj);
  EXPECT_EQ(Eq(copy.v, p.v), 1);
  OwnedAny arr(ArrayOf({Ref(p.v), Ref(p.v), I(3)}));
  OwnedAny arr_copy;
  ASSERT_EQ(ffk_deep_copy(&arr.v, &arr_copy.v), 0);
  ASSERT_NE(arr_copy.v.v_obj, arr.v.v_obj) << "an Array holding a reflected object is copied";
  OwnedAny c0, c1;
  ASSERT_EQ(ffk_array_get(reinterpret_cast<ffk_array*>(arr_copy.v.v_obj), 0, &c0.v), 0);
  ASSERT_EQ(ffk_array_get(reinterpret_cast<ffk_array*>(arr_copy.v.v_obj), 1, &c1.v), 0);
  EXPECT_NE(c0.v.v_obj, p.v.v_obj);
  EXPECT_EQ(c0.v.v_obj, c1.v.v_obj) << "an object reached twice is copied once";
  EXPECT_EQ(Eq(arr_copy.v, arr.v), 1);
  // Derived types keep their type and inherited fields.
  OwnedAny t(Create(TripleType(), {I(1), I(2), I(3)})), t_copy;
  ASSERT_EQ(ffk_deep_copy(&t.v, &t_copy.v), 0);
  EXPECT_EQ(t_copy.v.type_index, TripleType());
  EXPECT_EQ(Eq(t_copy.v, t.v), 1);
}

TEST_F(Structural, DeepCopyKeepsCyclesThroughFields) {
  OwnedAny n(Node(1));
  SetField(n.v, "next", n.v);  // n -> n
  OwnedAny c;
  ASSERT_EQ(ffk_deep_copy(&n.v, &c.v), 0);
  EXPECT_NE(c.v.v_obj, n.v.v_obj);
  EXPECT_EQ(FieldObject(c.v, "next"), c.v.v_obj) << "the copy reaches itself";
  EXPECT_EQ(Eq(c.v, n.v), 1);
  EXPECT_EQ(H(c.v), H(n.v));
  // a -> b -> a
  OwnedAny a(Node(1)), b(Node(2));
  SetField(a.v, "next", b.v);
  SetField(b.v, "next", a.v);
  OwnedAny ca;
  ASSERT_EQ(ffk_deep_copy(&a.v, &ca.v), 0);
  OwnedAny cb(GetField(ca.v, "next"));
  EXPECT_NE(ca.v.v_obj, a.v.v_obj);
  EXPECT_NE(cb.v.v_obj, b.v.v_obj);
  EXPECT_EQ(FieldObject(cb.v, "next"), ca.v.v_obj);
  EXPECT_EQ(Eq(ca.v, a.v), 1);
  // r -> (r,) through an immutable Array in an Any field.
  OwnedAny r(Record(1, 0.0, false, "", {}, ffk_any_none()));
  OwnedAny arr(ArrayOf({Ref(r.v)}));
  SetField(r.v, "any", arr.v);
  OwnedAny cr;
  ASSERT_EQ(ffk_deep_copy(&r.v, &cr.v), 0);
  OwnedAny carr(GetField(cr.v, "any"));
  ASSERT_EQ(carr.v.type_index, FFK_TYPE_ARRAY);
  EXPECT_NE(carr.v.v_obj, arr.v.v_obj);
  OwnedAny back;
  ASSERT_EQ(ffk_array_get(reinterpret_cast<ffk_array*>(carr.v.v_obj), 0, &back.v), 0);
  EXPECT_EQ(back.v.v_obj, cr.v.v_obj) << "the copied Array holds the copied Record";
  EXPECT_EQ(Eq(cr.v, r.v), 1);
  // Break the cycles so nothing stays alive.
  for (const OwnedAny* x : {&n, &c, &a, &b, &ca, &cb}) SetField(x->v, "next", ffk_any_none());
  SetField(r.v, "any", ffk_any_none());
  SetField(cr.v, "any", ffk_any_none());
}

TEST_F(Structural, ObjectsReflectionDidNotMakeCompareFieldWiseAndAreShared) {
  OwnedAny h1(Handmade(4)), h2(Handmade(4)), h3(Handmade(5));
  EXPECT_EQ(Eq(h1.v, h2.v), 1);
  EXPECT_EQ(H(h1.v), H(h2.v));
  EXPECT_EQ(Eq(h1.v, h3.v), 0);
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&h1.v, &copy.v), 0);
  EXPECT_EQ(copy.v.v_obj, h1.v.v_obj) << "ffk_object_shallow_copy refuses it, so it is shared";
  EXPECT_EQ(FetchError(), "") << "the refusal leaves no error behind";
}

struct STwin {
  ffk_object header;
  int64_t value;
  ffk_object *left, *right;
};

// Read-only children: the walks borrow them without a reference of their own.
int32_t TwinType() {
  static int32_t t = Define("test.structural.Twin", FFK_TYPE_OBJECT, sizeof(STwin),
                            {Field("value", offsetof(STwin, value), "int"),
                             Field("left", offsetof(STwin, left), "Optional<test.structural.Twin>",
                                   FFK_FIELD_HAS_DEFAULT),
                             Field("right", offsetof(STwin, right), "Optional<test.structural.Twin>",
                                   FFK_FIELD_HAS_DEFAULT)});
  return t;
}

// t_k = Twin(k, t_k-1, t_k-1): 2^levels paths to t_0.
ffk_any TwinChain(int levels, int64_t bottom) {
  ffk_any t = Create(TwinType(), {I(bottom)});
  for (int k = 1; k <= levels; ++k) {
    ffk_any next = Create(TwinType(), {I(k), t, t});
    ffk_any_release(&t);
    t = next;
  }
  return t;
}

// A complete binary tree of `n` Twins (node i has children 2i+1, 2i+2), no sharing.
ffk_any TwinTree(int i, int n, int odd_one_out) {
  if (i >= n) return ffk_any_none();
  OwnedAny l(TwinTree(2 * i + 1, n, odd_one_out)), r(TwinTree(2 * i + 2, n, odd_one_out));
  return Create(TwinType(), {I(i == odd_one_out ? -1 : i), l.v, r.v});
}

TEST_F(Structural, SharedObjectsAreWalkedOncePerPairNotOncePerPath) {
  // 60 levels: walking every path would never end, so this passes only if the walks
  // remember shared objects (and pairs) they finished.
  OwnedAny a(TwinChain(60, 0)), b(TwinChain(60, 0)), c(TwinChain(60, 1));
  EXPECT_EQ(Eq(a.v, b.v), 1);
  EXPECT_EQ(H(a.v), H(b.v));
  EXPECT_EQ(Eq(a.v, c.v), 0) << "a difference at the bottom is found through the sharing";
  EXPECT_NE(H(a.v), H(c.v));
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&a.v, &copy.v), 0);
  EXPECT_EQ(FieldObject(copy.v, "left"), FieldObject(copy.v, "right")) << "the shared child is copied once";
  EXPECT_NE(FieldObject(copy.v, "left"), FieldObject(a.v, "left"));
  EXPECT_EQ(Eq(copy.v, a.v), 1);
}

TEST_F(Structural, TreesOfUniquelyHeldObjectsCompareNodeByNode) {
  // Nodes held by one parent each are neither recorded nor looked for on the stack; the
  // answers are the same as for shared ones.
  OwnedAny x(TwinTree(0, 1000, -1)), y(TwinTree(0, 1000, -1)), z(TwinTree(0, 1000, 999));
  EXPECT_EQ(Eq(x.v, y.v), 1);
  EXPECT_EQ(H(x.v), H(y.v));
  EXPECT_EQ(Eq(x.v, z.v), 0) << "the last leaf differs";
  EXPECT_NE(H(x.v), H(z.v));
  OwnedAny fewer(TwinTree(0, 999, -1));
  EXPECT_EQ(Eq(x.v, fewer.v), 0) << "a child against None";
  EXPECT_EQ(Eq(fewer.v, x.v), 0);
  EXPECT_NE(H(x.v), H(fewer.v));
  OwnedAny copy;
  ASSERT_EQ(ffk_deep_copy(&x.v, &copy.v), 0);
  EXPECT_EQ(Eq(copy.v, x.v), 1);
  EXPECT_EQ(H(copy.v), H(x.v));
}

struct SGraph {
  ffk_object header;
  int64_t value;
  ffk_any a, b;
};

int32_t GraphType() {
  constexpr uint32_t W = FFK_FIELD_WRITABLE;
  static int32_t t = Define("test.structural.GraphNode", FFK_TYPE_OBJECT, sizeof(SGraph),
                            {Field("value", offsetof(SGraph, value), "int", W),
                             Field("a", offsetof(SGraph, a), "Any", W | FFK_FIELD_HAS_DEFAULT),
                             Field("b", offsetof(SGraph, b), "Any", W | FFK_FIELD_HAS_DEFAULT)});
  return t;
}

// Every reflected object and List reachable from `v`, through object and Any fields, List
// and Array elements and Dict values.
void Reach(const ffk_any& v, std::set<const ffk_object*>* nodes, std::set<const ffk_object*>* lists) {
  auto walk_array = [&](ffk_array* a) {
    for (int64_t i = 0; a != nullptr && i < ffk_array_size(a); ++i) Reach(a->data[i], nodes, lists);
  };
  if (ffk_any_is_object(&v) && ffk_type_is_reflected(v.type_index)) {
    if (!nodes->insert(v.v_obj).second) return;
    for (int32_t i = 0; i < ffk_type_num_fields(v.type_index); ++i) {
      const ffk_field_info* f = ffk_type_field_at(v.type_index, i);
      if (f->storage != FFK_FIELD_STORAGE_OBJECT && f->storage != FFK_FIELD_STORAGE_ANY) continue;
      OwnedAny value;
      ASSERT_EQ(ffk_field_get(f, v.v_obj, &value.v), 0);
      Reach(value.v, nodes, lists);
    }
  } else if (v.type_index == FFK_TYPE_LIST) {
    if (!lists->insert(v.v_obj).second) return;
    ffk_array* items = ffk_list_to_array(L(v));
    walk_array(items);
    ffk_object_release(&items->header);
  } else if (v.type_index == FFK_TYPE_ARRAY) {
    walk_array(reinterpret_cast<ffk_array*>(v.v_obj));
  } else if (v.type_index == FFK_TYPE_DICT) {
    ffk_array* values = ffk_dict_values(D(v));
    walk_array(values);
    ffk_object_release(&values->header);
  }
}

// Empties every reflected object (its writable Any and Optional fields) and List reachable
// from `v`, so cycles end and everything is freed.
void Unlink(const ffk_any& v) {
  std::set<const ffk_object*> nodes, lists;
  Reach(v, &nodes, &lists);
  std::vector<ffk_any> held;  // a reference to each, so none dies while the others are emptied
  for (const auto* set : {&nodes, &lists})
    for (const ffk_object* o : *set) held.push_back(ffk_any_object(const_cast<ffk_object*>(o)));
  for (const ffk_any& o : held) {
    if (o.type_index == FFK_TYPE_LIST) {
      ffk_list_clear(L(o));
      continue;
    }
    for (int32_t i = 0; i < ffk_type_num_fields(o.type_index); ++i) {
      const ffk_field_info* f = ffk_type_field_at(o.type_index, i);
      bool can_be_none = f->storage == FFK_FIELD_STORAGE_ANY ||
                         (f->storage == FFK_FIELD_STORAGE_OBJECT && std::string(f->type_text).rfind("Optional<", 0) == 0);
      ffk_any none = ffk_any_none();
      if ((f->flags & FFK_FIELD_WRITABLE) && can_be_none) {
        EXPECT_EQ(ffk_field_set(f, o.v_obj, &none), 0);
      }
    }
  }
  ReleaseAll(held);
}

TEST_F(Structural, RandomGraphsOfObjectsCopyToEqualIsomorphicGraphs) {
  // Random graphs of reflected nodes whose Any fields hold None, ints, nodes (cycles and
  // sharing included), Lists and Arrays of nodes. Their deep copy must be equal both ways,
  // hash and print alike, have as many nodes and Lists, share none of them with the
  // source, and stop being equal once one copied node changes.
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    int n = 1 + (int)(rng() % 10);
    std::vector<ffk_any> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back(Create(GraphType(), {I(rng() % 3)}));
    auto pick = [&]() -> ffk_any {
      switch (rng() % 5) {
        case 0: return ffk_any_none();
        case 1: return I(rng() % 3);
        case 2: return Ref(nodes[rng() % n]);
        case 3: return ListOf({Ref(nodes[rng() % n]), I(rng() % 2)});
        default: return ArrayOf({Ref(nodes[rng() % n])});
      }
    };
    for (const ffk_any& node : nodes) {
      for (const char* name : {"a", "b"}) {
        OwnedAny value(pick());
        SetField(node, name, value.v);
      }
    }
    const ffk_any& root = nodes[0];
    OwnedAny copy;
    ASSERT_EQ(ffk_deep_copy(&root, &copy.v), 0);
    EXPECT_EQ(Eq(root, copy.v), 1);
    EXPECT_EQ(Eq(copy.v, root), 1);
    EXPECT_EQ(H(root), H(copy.v));
    EXPECT_EQ(ffk::test::Repr(root), ffk::test::Repr(copy.v));
    std::set<const ffk_object*> src_nodes, src_lists, copy_nodes, copy_lists;
    Reach(root, &src_nodes, &src_lists);
    Reach(copy.v, &copy_nodes, &copy_lists);
    EXPECT_EQ(copy_nodes.size(), src_nodes.size());
    EXPECT_EQ(copy_lists.size(), src_lists.size());
    for (const ffk_object* c : copy_nodes) EXPECT_EQ(src_nodes.count(c), 0u) << "a node of the source in the copy";
    for (const ffk_object* c : copy_lists) EXPECT_EQ(src_lists.count(c), 0u) << "a List of the source in the copy";
    // Change one copied node: the copy is no longer equal.
    auto it = copy_nodes.begin();
    std::advance(it, rng() % copy_nodes.size());
    ffk_any changed = ffk_any_none();
    changed.type_index = (*it)->type_index;
    changed.v_obj = const_cast<ffk_object*>(*it);
    SetField(changed, "value", I(7));
    EXPECT_EQ(Eq(root, copy.v), 0);
    for (const ffk_any& node : nodes) Unlink(node);  // some may be out of the root's reach
    Unlink(copy.v);
    for (ffk_any& node : nodes) ffk_any_release(&node);
  }
}

TEST_F(Structural, ReflectedAllocationFailuresLeaveNothingBehind) {
  OwnedAny inner(Pair(1, 2));
  OwnedAny r(Record(3, 0.5, true, "a string longer than seven", {4, 5}, inner.v));
  SetField(r.v, "maybe", inner.v);
  OwnedAny x(ArrayOf({Ref(r.v), Chain(3), DictOf({{I(1), Pair(6, 7)}})}));
  OwnedAny y;
  ASSERT_EQ(ffk_deep_copy(&x.v, &y.v), 0);
  ffk::test::SweepAllocationFailures([&] { return ffk_structural_equal(&x.v, &y.v) == 1; });
  ffk::test::SweepAllocationFailures([&] {
    uint64_t h;
    return ffk_structural_hash(&x.v, &h) == 0;
  });
  ffk::test::SweepAllocationFailures([&] {
    OwnedAny copy;
    if (ffk_deep_copy(&x.v, &copy.v) != 0) {
      EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
      return false;
    }
    return Eq(copy.v, x.v) == 1;
  });
}

TEST_F(Structural, AFailedDeepCopyOfACycleLeavesNothingBehind) {
  // A partial copy may already refer to itself when an allocation fails (a node whose
  // copied field leads back to its copy, a List that holds it): the failure must still
  // free every partial copy, and leave the source as it was.
  OwnedAny n(Node(1)), m(Node(2));
  SetField(n.v, "next", m.v);
  SetField(m.v, "next", n.v);  // n -> m -> n
  OwnedAny r(Record(3, 0.5, false, "a string longer than seven", {4}, ffk_any_none()));
  OwnedAny arr(ArrayOf({Ref(r.v), Ref(n.v)}));
  SetField(r.v, "any", arr.v);  // r -> (r, n)
  OwnedAny l(ListOf({Ref(r.v), I(5)}));
  ASSERT_EQ(ffk_list_append(L(l.v), &l.v), 0);  // l -> l, l -> r
  OwnedAny x(ArrayOf({Ref(l.v), DictOf({{I(1), Ref(l.v)}, {I(2), Ref(m.v)}})}));
  OwnedAny before;
  ASSERT_EQ(ffk_deep_copy(&x.v, &before.v), 0);
  ffk::test::SweepAllocationFailures(
      [&] {
        OwnedAny copy;
        if (ffk_deep_copy(&x.v, &copy.v) != 0) {
          EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
          return false;
        }
        // Check and empty the copy with the hook off (both allocate), then re-arm it if it
        // had not fired, so that the sweep still sees a run no allocation failure reached.
        bool armed = ffk_debug_fail_allocation_armed();
        ffk_debug_fail_allocation(0);
        bool ok = Eq(copy.v, x.v) == 1;
        Unlink(copy.v);
        if (armed) ffk_debug_fail_allocation(INT64_MAX);
        return ok;
      },
      [&] { EXPECT_EQ(Eq(x.v, before.v), 1) << "the source is unchanged"; });
  Unlink(before.v);
  Unlink(x.v);
}

TEST_F(Structural, WalksOfAnObjectAnotherThreadWrites) {
  OwnedAny r(Record(1, 0.0, false, "s", {1}, ffk_any_none()));
  OwnedAny other(Record(1, 0.0, false, "s", {1}, ffk_any_none()));
  OwnedAny pair(Pair(1, 2));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 3000; ++i) {
      ffk_any v = I(i % 3);
      ffk_object_set_field(r.v.v_obj, "i", &v);
      ffk_any l = ListOf({I(i)});
      ffk_object_set_field(r.v.v_obj, "items", &l);
      ffk_any_release(&l);
      ffk_object_set_field(r.v.v_obj, "any", i % 2 ? &pair.v : &v);
      ffk_any none = ffk_any_none();
      ffk_object_set_field(r.v.v_obj, "maybe", i % 2 ? &none : &pair.v);
    }
    stop = true;
  });
  while (!stop) {
    ASSERT_GE(Eq(r.v, other.v), 0);
    uint64_t h;
    ASSERT_EQ(ffk_structural_hash(&r.v, &h), 0);
    OwnedAny copy;
    ASSERT_EQ(ffk_deep_copy(&r.v, &copy.v), 0);
    EXPECT_EQ(copy.v.type_index, RecordType());
    EXPECT_EQ(ffk::test::Repr(r.v).rfind("test.structural.Record(i=", 0), 0u);
  }
  writer.join();
}

}  // namespace
