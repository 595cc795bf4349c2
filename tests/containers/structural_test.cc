// ffikit/structural.h: structural equality and hash across every container, cycles,
// the depth limit, deep copy (sharing and cycles kept), and allocation failures.
#include <ffikit/ffikit.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Structural : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

// Builders of containers that steal the values they are given (nested builders compose);
// Ref(v) passes a borrowed value.
ffk_any Ref(const ffk_any& v) {
  ffk_any_retain(&v);
  return v;
}
void ReleaseAll(std::vector<ffk_any>& items) {
  for (auto& v : items) ffk_any_release(&v);
}
ffk_any ArrayOf(std::vector<ffk_any> items) {
  ffk_any a = ffk_any_object_steal(&ffk_array_new(items.data(), (int64_t)items.size())->header);
  ReleaseAll(items);
  return a;
}
ffk_any TupleOf(std::vector<ffk_any> items) {
  ffk_any t = ffk_any_object_steal(&ffk_tuple_new((int64_t)items.size(), items.data())->header);
  ReleaseAll(items);
  return t;
}
ffk_any ListOf(std::vector<ffk_any> items) {
  ffk_any l =
      ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_from_items(items.data(), (int64_t)items.size())));
  ReleaseAll(items);
  return l;
}
ffk_list* L(const ffk_any& v) { return reinterpret_cast<ffk_list*>(v.v_obj); }
ffk_dict* D(const ffk_any& v) { return reinterpret_cast<ffk_dict*>(v.v_obj); }

ffk_any MapOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_map* m = ffk_map_new();
  for (auto& p : kv) {
    ffk_map_set(&m, &p.first, &p.second);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(m));
}
ffk_any DictOf(std::vector<std::pair<ffk_any, ffk_any>> kv) {
  ffk_dict* d = ffk_dict_new();
  for (auto& p : kv) {
    ffk_dict_set(d, &p.first, &p.second);
    ffk_any_release(&p.first);
    ffk_any_release(&p.second);
  }
  return ffk_any_object_steal(reinterpret_cast<ffk_object*>(d));
}

int Eq(const ffk_any& a, const ffk_any& b) { return ffk_structural_equal(&a, &b); }
uint64_t H(const ffk_any& v) {
  uint64_t h = 0;
  EXPECT_EQ(ffk_structural_hash(&v, &h), 0);
  return h;
}
ffk_any I(int64_t x) { return ffk_any_int(x); }

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
  EXPECT_EQ(FetchError(), "RuntimeError: containers nested deeper than 1000 levels");
  uint64_t h = 7;
  EXPECT_EQ(ffk_structural_hash(&deep.v, &h), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: containers nested deeper than 1000 levels");
  OwnedAny copy;
  EXPECT_EQ(ffk_deep_copy(&deep.v, &copy.v), -1);
  EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: containers nested deeper than 1000 levels");
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

}  // namespace
