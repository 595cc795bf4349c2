// ffikit/cycles.h: ffk_debug_find_cycles reports the reference cycles reachable from a value,
// and a WeakRef (ffikit/weak_ref.h) in a field breaks one.
#include <ffikit/ffikit.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class FindCycles : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

struct CNode {
  ffk_object header;
  int64_t value;
  ffk_object* next;
  ffk_any any;
};

int32_t NodeType() {
  static int32_t t = [] {
    ffk_field_def fields[] = {
        {"value", offsetof(CNode, value), "int", FFK_FIELD_HAS_DEFAULT, ffk_any_int(0), nullptr},
        {"next", offsetof(CNode, next), "Optional<test.cycles.Node>", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
         ffk_any_none(), nullptr},
        {"any", offsetof(CNode, any), "Any", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT, ffk_any_none(), nullptr},
    };
    ffk_type_def def = {};
    def.key = "test.cycles.Node";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(CNode);
    def.fields = fields;
    def.nfields = 3;
    int32_t index = ffk_type_define(&def);
    EXPECT_GE(index, 0) << FetchError();
    return index;
  }();
  return t;
}

ffk_any NewNode(int64_t value) {
  ffk_object* o = ffk_object_new_reflected(NodeType());
  EXPECT_NE(o, nullptr) << FetchError();
  reinterpret_cast<CNode*>(o)->value = value;
  return ffk_any_object_steal(o);
}

void Set(const ffk_any& obj, const char* field, const ffk_any& value) {
  ASSERT_EQ(ffk_object_set_field(obj.v_obj, field, &value), 0) << FetchError();
}

// The cycles found, as lists of object addresses.
std::vector<std::vector<ffk_object*>> Cycles(const ffk_any& root, int64_t max_cycles = 100) {
  std::vector<std::vector<ffk_object*>> out;
  ffk_list* found = ffk_debug_find_cycles(&root, max_cycles);
  EXPECT_NE(found, nullptr) << FetchError();
  if (found == nullptr) return out;
  for (int64_t i = 0; i < ffk_list_size(found); ++i) {
    OwnedAny cycle;
    EXPECT_EQ(ffk_list_get(found, i, &cycle.v), 0);
    std::vector<ffk_object*> objs;
    ffk_list* l = reinterpret_cast<ffk_list*>(cycle.v.v_obj);
    for (int64_t j = 0; j < ffk_list_size(l); ++j) {
      OwnedAny item;
      EXPECT_EQ(ffk_list_get(l, j, &item.v), 0);
      objs.push_back(item.v.v_obj);
    }
    out.push_back(objs);
  }
  ffk_object_release(reinterpret_cast<ffk_object*>(found));
  return out;
}

TEST_F(FindCycles, FindsNoneInATreeOrADagOrAPlainValue) {
  OwnedAny leaf(NewNode(1));
  OwnedAny a(NewNode(2)), b(NewNode(3));
  Set(a.v, "next", leaf.v);
  Set(b.v, "next", leaf.v);  // shared, not a cycle
  ffk_any items[2] = {a.v, b.v};
  OwnedAny root(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_from_items(items, 2))));
  EXPECT_TRUE(Cycles(root.v).empty());
  ffk_any seven = ffk_any_int(7);
  EXPECT_TRUE(Cycles(seven).empty());
  EXPECT_EQ(ffk_object_use_count(leaf.v.v_obj), 3u);  // the walk let go of what it held
}

TEST_F(FindCycles, FindsTwoObjectsThatHoldEachOther) {
  OwnedAny a(NewNode(1)), b(NewNode(2));
  Set(a.v, "next", b.v);
  Set(b.v, "next", a.v);
  auto cycles = Cycles(a.v);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<ffk_object*>{a.v.v_obj, b.v.v_obj}));  // a holds b holds a
  Set(b.v, "next", ffk_any_none());  // break it, or the test ends with both alive
}

TEST_F(FindCycles, FindsAListThatHoldsItself) {
  OwnedAny l(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(l.v.v_obj), &one), 0);
  ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(l.v.v_obj), &l.v), 0);
  auto cycles = Cycles(l.v);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<ffk_object*>{l.v.v_obj}));
  ASSERT_EQ(ffk_list_erase_at(reinterpret_cast<ffk_list*>(l.v.v_obj), 1), 0);
}

TEST_F(FindCycles, FindsACycleThroughADictValueAndAnAnyField) {
  OwnedAny d(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_dict_new())));
  OwnedAny n(NewNode(1));
  ffk_any key = ffk_any_raw_str("child");
  ASSERT_EQ(ffk_dict_set(reinterpret_cast<ffk_dict*>(d.v.v_obj), &key, &n.v), 0) << FetchError();
  Set(n.v, "any", d.v);
  auto cycles = Cycles(n.v);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<ffk_object*>{n.v.v_obj, d.v.v_obj}));
  Set(n.v, "any", ffk_any_none());
}

TEST_F(FindCycles, FindsALongCycleWithoutRecursing) {
  const int kLength = 200000;  // deeper than any C stack would take frame by frame
  OwnedAny first(NewNode(0));
  ffk_any prev = first.v;
  ffk_any_retain(&prev);
  for (int i = 1; i < kLength; ++i) {
    ffk_any node = NewNode(i);
    Set(prev, "next", node);
    ffk_any_release(&prev);
    prev = node;
  }
  Set(prev, "next", first.v);  // close the ring
  auto cycles = Cycles(first.v);
  ASSERT_EQ(cycles.size(), 1u);
  ASSERT_EQ(cycles[0].size(), static_cast<size_t>(kLength));
  EXPECT_EQ(cycles[0].front(), first.v.v_obj);
  EXPECT_EQ(cycles[0].back(), prev.v_obj);
  Set(prev, "next", ffk_any_none());  // open it: the chain then goes with `first`
  ffk_any_release(&prev);
}

TEST_F(FindCycles, AWeakRefToTheParentIsNoCycleAndLetsBothGo) {
  ffk_any parent = NewNode(1);
  ffk_any child = NewNode(2);
  Set(parent, "next", child);
  OwnedAny back(ffk_any_object_steal(ffk_weak_ref_new(parent.v_obj)));
  Set(child, "any", back.v);
  EXPECT_TRUE(Cycles(parent).empty());
  ffk_any_release(&back.v);
  ffk_any_release(&child);
  ffk_any_release(&parent);  // nothing holds it strongly: the whole tree goes
  EXPECT_EQ(ffk_debug_live_objects(NodeType()), 0);
}

TEST_F(FindCycles, StopsAtMaxCyclesAndReportsOnePerBackReference) {
  // Three self-loops under one List: one cycle each.
  OwnedAny root(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  std::vector<ffk_any> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(NewNode(i));
    Set(nodes.back(), "next", nodes.back());
    ASSERT_EQ(ffk_list_append(reinterpret_cast<ffk_list*>(root.v.v_obj), &nodes.back()), 0);
  }
  EXPECT_EQ(Cycles(root.v).size(), 3u);
  EXPECT_EQ(Cycles(root.v, 2).size(), 2u);
  for (auto& n : nodes) {
    Set(n, "next", ffk_any_none());
    ffk_any_release(&n);
  }
}

TEST_F(FindCycles, BadArgumentsAreClearErrors) {
  EXPECT_EQ(ffk_debug_find_cycles(nullptr, 1), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"find_cycles"}));
  ffk_any none = ffk_any_none();
  EXPECT_EQ(ffk_debug_find_cycles(&none, 0), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"max_cycles must be at least 1, got 0"}));
}

TEST_F(FindCycles, FailsCleanlyWhenMemoryRunsOut) {
  OwnedAny a(NewNode(1)), b(NewNode(2));
  Set(a.v, "next", b.v);
  Set(b.v, "next", a.v);
  ffk::test::SweepAllocationFailures([&] {
    ffk_list* found = ffk_debug_find_cycles(&a.v, 10);
    if (found == nullptr) return false;
    ffk_object_release(reinterpret_cast<ffk_object*>(found));
    return true;
  });
  Set(b.v, "next", ffk_any_none());
}

// Another thread changes the List the walk reads (through a snapshot): every answer is
// one the List passed through (a self-loop or none), and nothing is freed under the walk.
TEST_F(FindCycles, AListChangedByAnotherThreadDuringTheWalkGivesAnAnswerItHad) {
  OwnedAny l(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_list_new())));
  ffk_list* list = reinterpret_cast<ffk_list*>(l.v.v_obj);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) {
      ffk_any n = NewNode(1);
      ffk_list_append(list, &l.v);  // a self-loop ...
      ffk_list_append_steal(list, &n);
      ffk_list_clear(list);         // ... and none
    }
  });
  for (int i = 0; i < 2000; ++i) {
    auto cycles = Cycles(l.v);
    ASSERT_LE(cycles.size(), 1u);
    if (!cycles.empty()) {
      EXPECT_EQ(cycles[0], (std::vector<ffk_object*>{l.v.v_obj}));
    }
  }
  stop.store(true);
  writer.join();
  ffk_list_clear(list);
}

}  // namespace
