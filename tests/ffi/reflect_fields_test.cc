// Reflected types (ffikit/reflect.h), part 2: type attributes, reflection-made objects,
// field write hooks, read sections and borrowed reads, and the field-wise encoding
// (ffk_object_field_values / ffk_object_init_fields). Part 1 is reflect_test.cc.
#include <ffikit/ffikit.h>
#include <ffikit/array.h>
#include <ffikit/list.h>
#include <ffikit/unstable/reflect.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/ffk_test.h"
#include "tests/ffi/reflect_types.h"

namespace {

using namespace reflect_types;  // NOLINT: the shared test types
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

class Reflect : public ffk::test::Test {};

// ---- Type attributes -----------------------------------------------------------------------

TEST_F(Reflect, TypeAttributesFollowTheParentChainAndNoneHides) {
  int32_t base = ffk_type_register("test.reflect.AttrBase", FFK_TYPE_OBJECT);
  int32_t mid = ffk_type_register("test.reflect.AttrMid", base);
  int32_t leaf = ffk_type_register("test.reflect.AttrLeaf", mid);
  ASSERT_GT(leaf, 0) << FetchError();
  ffk_any one = ffk_any_int(1), none = ffk_any_none();
  OwnedAny out;
  EXPECT_EQ(ffk_type_get_attr(leaf, "lib_attr", &out.v), 0);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  ASSERT_EQ(ffk_type_set_attr(base, "lib_attr", &one), 0) << FetchError();
  EXPECT_EQ(ffk_type_get_attr(leaf, "lib_attr", &out.v), 1);
  EXPECT_EQ(out.v.v_int, 1);
  // None on the middle type hides the base's value from it and from the leaf.
  ASSERT_EQ(ffk_type_set_attr(mid, "lib_attr", &none), 0);
  EXPECT_EQ(ffk_type_get_attr(leaf, "lib_attr", &out.v), 0);
  EXPECT_EQ(ffk_type_get_attr(mid, "lib_attr", &out.v), 0);
  EXPECT_EQ(ffk_type_get_attr(base, "lib_attr", &out.v), 1);
  // The leaf's own value wins over the hiding.
  ffk_any two = ffk_any_int(2);
  ASSERT_EQ(ffk_type_set_attr(leaf, "lib_attr", &two), 0);
  EXPECT_EQ(ffk_type_get_attr(leaf, "lib_attr", &out.v), 1);
  EXPECT_EQ(out.v.v_int, 2);
  // Names are distinct; a static type takes attributes too.
  EXPECT_EQ(ffk_type_get_attr(leaf, "lib_attr2", &out.v), 0);
  ASSERT_EQ(ffk_type_set_attr(FFK_TYPE_TENSOR, "lib_attr", &two), 0);
  EXPECT_EQ(ffk_type_get_attr(FFK_TYPE_TENSOR, "lib_attr", &out.v), 1);
}

TEST_F(Reflect, OwnTypeAttributesAreNotInherited) {
  int32_t base = ffk_type_register("test.reflect.OwnBase", FFK_TYPE_OBJECT);
  int32_t leaf = ffk_type_register("test.reflect.OwnLeaf", base);
  ASSERT_GT(leaf, 0) << FetchError();
  ffk_any one = ffk_any_int(1), two = ffk_any_int(2), none = ffk_any_none();
  OwnedAny out;
  ASSERT_EQ(ffk_type_set_attr(base, "own_attr", &one), 0) << FetchError();
  EXPECT_EQ(ffk_type_get_own_attr(base, "own_attr", &out.v), 1);
  EXPECT_EQ(out.v.v_int, 1);
  EXPECT_EQ(ffk_type_get_own_attr(leaf, "own_attr", &out.v), 0);  // the base's is not the leaf's own
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  ASSERT_EQ(ffk_type_set_attr(leaf, "own_attr", &two), 0);
  EXPECT_EQ(ffk_type_get_own_attr(leaf, "own_attr", &out.v), 1);
  EXPECT_EQ(out.v.v_int, 2);
  ASSERT_EQ(ffk_type_set_attr(leaf, "own_attr", &none), 0);  // None: none of its own
  EXPECT_EQ(ffk_type_get_own_attr(leaf, "own_attr", &out.v), 0);
  EXPECT_EQ(ffk_type_get_own_attr(leaf, nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError"));
  EXPECT_EQ(ffk_type_get_own_attr(999999, "own_attr", &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"not a registered type"}));
}

TEST_F(Reflect, GetFieldFindsAFieldOrNamesTheMissingOneAndItsType) {
  int32_t t = PointType();
  const ffk_field_info* f = nullptr;
  ASSERT_EQ(ffk_type_get_field(t, "x", &f), 0) << FetchError();
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(f->name, "x");
  EXPECT_EQ(ffk_type_get_field(t, "z", &f), -1);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(FetchError(), "AttributeError: `test.reflect.Point` object has no field `z`");
  // A type without a description has no fields; an unknown one is C's ValueError.
  EXPECT_EQ(ffk_type_get_field(FFK_TYPE_ARRAY, "x", &f), -1);
  EXPECT_EQ(FetchError(), "AttributeError: `Array` object has no field `x`");
  EXPECT_EQ(ffk_type_get_field(999999, "x", &f), -1);
  EXPECT_TRUE(PendingError("ValueError", {"999999", "not a registered type"}));
  EXPECT_EQ(ffk_type_get_field(t, nullptr, &f), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name"}));
}

TEST_F(Reflect, ReplacedTypeAttributesStayAliveAndAreNotCountedLive) {
  int32_t t = ffk_type_register("test.reflect.AttrReplace", FFK_TYPE_OBJECT);
  int64_t live = ffk_debug_live_objects(-1);
  ffk_string* first = ffk_string_new("first", 5);
  ffk_any v = ffk_any_object_steal(Obj(first));
  ASSERT_EQ(ffk_type_set_attr(t, "label", &v), 0) << FetchError();
  OwnedAny got;
  ASSERT_EQ(ffk_type_get_attr(t, "label", &got.v), 1);
  EXPECT_EQ(got.v.v_obj, Obj(first));
  ffk_any_release(&v);
  ffk_any_release(&got.v);
  got.v = ffk_any_none();
  EXPECT_EQ(ffk_object_use_count(Obj(first)), 1u);  // the registry's reference
  ffk_any second = ffk_any_raw_str("second");        // a borrowed view: stored as a String
  ASSERT_EQ(ffk_type_set_attr(t, "label", &second), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(first)), 1u);  // replaced, still alive
  ASSERT_EQ(ffk_type_get_attr(t, "label", &got.v), 1);
  EXPECT_EQ(ffk::test::Repr(got.v), "\"second\"");
  EXPECT_EQ(ffk_debug_live_objects(-1), live);  // both values are the registry's, not counted
}

TEST_F(Reflect, TypeAttributeErrorsNameTheBadArgument) {
  ffk_any one = ffk_any_int(1);
  OwnedAny out;
  EXPECT_EQ(ffk_type_set_attr(99999, "x", &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"99999"}));
  EXPECT_EQ(ffk_type_set_attr(FFK_TYPE_OBJECT, nullptr, &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_type_set_attr(FFK_TYPE_OBJECT, "", &one), -1);
  EXPECT_TRUE(PendingError("ValueError", {"empty"}));
  EXPECT_EQ(ffk_type_set_attr(FFK_TYPE_OBJECT, "x", nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"value"}));
  EXPECT_EQ(ffk_type_get_attr(-5, "x", &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"-5"}));
  EXPECT_EQ(ffk_type_get_attr(FFK_TYPE_OBJECT, nullptr, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"name"}));
  EXPECT_EQ(ffk_type_get_attr(FFK_TYPE_OBJECT, "x", nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"out"}));
}

TEST_F(Reflect, SetAttrAllocationFailuresLeaveTheOldValue) {
  int32_t t = ffk_type_register("test.reflect.AttrFail", FFK_TYPE_OBJECT);
  ffk_any one = ffk_any_int(1);
  ASSERT_EQ(ffk_type_set_attr(t, "a", &one), 0);
  int n = 0;
  ffk::test::SweepAllocationFailures(
      [&] {
        ffk_any v = ffk_any_int(++n + 1);
        return ffk_type_set_attr(t, "a", &v) == 0;
      },
      [&] {
        OwnedAny got;
        EXPECT_EQ(ffk_type_get_attr(t, "a", &got.v), 1);
        EXPECT_EQ(got.v.v_int, n == 1 ? 1 : n);
      });
}

// ---- Reflection-made objects ---------------------------------------------------------------

void PlainDeleter(void* self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
}

TEST_F(Reflect, IsReflectionMadeTellsReflectionsObjectsFromLibraryOnes) {
  int32_t t = PointType();
  ffk_any args[] = {ffk_any_int(1)};
  ffk_object* made = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 1, nullptr, 0, &made), 0) << FetchError();
  ffk_object* fresh = ffk_object_new_reflected(t);
  ffk_object* copy = ffk_object_shallow_copy(made);
  EXPECT_TRUE(ffk_object_is_reflection_made(made));
  EXPECT_TRUE(ffk_object_is_reflection_made(fresh));
  EXPECT_TRUE(ffk_object_is_reflection_made(copy));
  // The library allocated this one itself: not reflection's.
  ffk_object* own = ffk_object_alloc(t, sizeof(Point), PlainDeleter);
  ASSERT_NE(own, nullptr);
  EXPECT_FALSE(ffk_object_is_reflection_made(own));
  ffk_array* arr = ffk_array_new(nullptr, 0);
  EXPECT_FALSE(ffk_object_is_reflection_made(Obj(arr)));
  EXPECT_FALSE(ffk_object_is_reflection_made(nullptr));
  for (ffk_object* o : {made, fresh, copy, own, Obj(arr)}) ffk_object_release(o);
}

// ---- Field write hooks ------------------------------------------------------------------

struct HookLog {
  std::vector<std::pair<ffk_object*, std::string>> calls;
};
HookLog g_hook_log;
void LogWrite(ffk_object* obj, const ffk_field_info* field) { g_hook_log.calls.emplace_back(obj, field->name); }
std::atomic<int> g_hook_count{0};
void CountWrite(ffk_object*, const ffk_field_info* field) {
  if (std::string(field->name) == "x") g_hook_count.fetch_add(1, std::memory_order_relaxed);
}

// A parent and a child type (automatic layout) for the hook tests; defined once.
std::pair<int32_t, int32_t> HookTypes() {
  static std::pair<int32_t, int32_t> types = [] {
    ffk_field_def parent_fields[] = {{"x", 0, "int", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
                                     {"frozen", 0, "int", FFK_FIELD_HAS_DEFAULT, ffk_any_int(1), nullptr}};
    ffk_type_def def = {};
    def.key = "test.reflect.Hooked";
    def.parent_index = FFK_TYPE_OBJECT;
    def.fields = parent_fields;
    def.nfields = 2;
    int32_t parent = ffk_type_define(&def);
    ffk_field_def child_fields[] = {{"y", 0, "float", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr}};
    ffk_type_def child = {};
    child.key = "test.reflect.HookedChild";
    child.parent_index = parent;
    child.fields = child_fields;
    child.nfields = 1;
    return std::make_pair(parent, ffk_type_define(&child));
  }();
  return types;
}

TEST_F(Reflect, WriteHooksSeeEverySuccessfulWriteOnTheTypeAndItsSubtypes) {
  auto [parent, child] = HookTypes();
  ASSERT_GT(parent, 0) << FetchError();
  ASSERT_GT(child, 0) << FetchError();
  g_hook_log.calls.clear();
  ffk_object* p = ffk_object_new_reflected(parent);
  ffk_object* c = ffk_object_new_reflected(child);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(c, nullptr);
  ffk_any one = ffk_any_int(1), half = ffk_any_float(0.5), text = ffk_any_raw_str("no");
  // No hook yet: nothing is logged.
  ASSERT_EQ(ffk_object_set_field(p, "x", &one), 0) << FetchError();
  EXPECT_TRUE(g_hook_log.calls.empty());

  ASSERT_EQ(ffk_type_set_field_write_hook(parent, LogWrite), 0) << FetchError();
  ASSERT_EQ(ffk_object_set_field(p, "x", &one), 0) << FetchError();              // by name
  ASSERT_EQ(ffk_field_set(ffk_type_field_at(child, 2), c, &half), 0) << FetchError();  // subtype, by handle
  ASSERT_EQ(ffk_field_init(ffk_type_field_at(parent, 1), p, &one), 0) << FetchError();  // read-only, init
  // Failed writes are not reported: read-only, wrong type.
  EXPECT_EQ(ffk_object_set_field(p, "frozen", &one), -1);
  EXPECT_TRUE(PendingError("AttributeError", {"frozen", "read-only"}));
  EXPECT_EQ(ffk_object_set_field(c, "y", &text), -1);
  EXPECT_TRUE(PendingError("TypeError", {"y"}));
  std::vector<std::pair<ffk_object*, std::string>> want = {{p, "x"}, {c, "y"}, {p, "frozen"}};
  EXPECT_EQ(g_hook_log.calls, want);

  // The nearest type's hook wins; NULL removes a hook and the parent's applies again.
  g_hook_log.calls.clear();
  ASSERT_EQ(ffk_type_set_field_write_hook(child, CountWrite), 0);
  g_hook_count = 0;
  ASSERT_EQ(ffk_object_set_field(c, "x", &one), 0);
  EXPECT_EQ(g_hook_count.load(), 1);
  EXPECT_TRUE(g_hook_log.calls.empty());
  ASSERT_EQ(ffk_type_set_field_write_hook(child, nullptr), 0);
  ASSERT_EQ(ffk_object_set_field(c, "x", &one), 0);
  EXPECT_EQ(g_hook_log.calls.size(), 1u);
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, nullptr), 0);
  ASSERT_EQ(ffk_object_set_field(c, "x", &one), 0);
  EXPECT_EQ(g_hook_log.calls.size(), 1u);

  // Construction fills fields without notifying.
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, LogWrite), 0);
  g_hook_log.calls.clear();
  ffk_any args[] = {ffk_any_int(4)};
  ffk_object* made = nullptr;
  ASSERT_EQ(ffk_object_create(parent, args, 1, nullptr, 0, &made), 0) << FetchError();
  EXPECT_TRUE(g_hook_log.calls.empty());
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, nullptr), 0);
  ffk_object_release(made);
  ffk_object_release(p);
  ffk_object_release(c);
}

TEST_F(Reflect, WriteHookErrorsNameTheTypeIndex) {
  EXPECT_EQ(ffk_type_set_field_write_hook(-3, LogWrite), -1);
  EXPECT_TRUE(PendingError("ValueError", {"-3", "not a registered type"}));
  EXPECT_EQ(ffk_type_set_field_write_hook(1 << 30, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"1073741824"}));
}

TEST_F(Reflect, WriteHooksRunOnTheWritersThreadsConcurrently) {
  auto [parent, child] = HookTypes();
  (void)child;
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, CountWrite), 0);
  g_hook_count = 0;
  ffk_object* p = ffk_object_new_reflected(parent);
  ASSERT_NE(p, nullptr);
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([p, t, &failed] {
      for (int i = 0; i < 1000; ++i) {
        ffk_any v = ffk_any_int(t * 1000 + i);
        if (ffk_object_set_field(p, "x", &v) != 0) failed.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(g_hook_count.load(), 4000);
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, nullptr), 0);
  ffk_object_release(p);
}

// ---- Read sections and borrowed reads -------------------------------------------------------

TEST_F(Reflect, PeekBorrowsWhereItCanAndOwnsAWritableAny) {
  int32_t t = BagType();
  ffk_object* bag = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &bag), 0) << FetchError();
  const ffk_field_info *items, *hidden, *label, *on, *anything, *ints;
  ASSERT_EQ(ffk_type_find_field(t, "items", &items), 1);
  ASSERT_EQ(ffk_type_find_field(t, "hidden", &hidden), 1);
  ASSERT_EQ(ffk_type_find_field(t, "label", &label), 1);
  ASSERT_EQ(ffk_type_find_field(t, "on", &on), 1);
  ASSERT_EQ(ffk_type_find_field(t, "anything", &anything), 1);
  ASSERT_EQ(ffk_type_find_field(t, "ints", &ints), 1);
  ffk_any s = ffk_any_raw_str("a label longer than seven");
  ASSERT_EQ(ffk_field_set(label, bag, &s), 0) << FetchError();
  ffk_any seven = ffk_any_int(7);
  ASSERT_EQ(ffk_field_set(anything, bag, &seven), 0) << FetchError();
  Bag* b = reinterpret_cast<Bag*>(bag);

  void* section = ffk_read_section_enter();
  ASSERT_NE(section, nullptr) << FetchError();
  ffk_any v;
  ASSERT_EQ(ffk_field_peek(items, bag, &v), 0);  // read-only object: in place
  EXPECT_EQ(v.v_obj, b->items);
  EXPECT_EQ(ffk_object_use_count(b->items), 1u);  // borrowed: no reference taken
  ASSERT_EQ(ffk_field_peek(ints, bag, &v), 0);    // writable object: borrowed too
  EXPECT_EQ(v.type_index, FFK_TYPE_ARRAY);
  EXPECT_EQ(v.v_obj, b->ints);
  EXPECT_EQ(ffk_object_use_count(b->ints), 1u);
  ASSERT_EQ(ffk_field_peek(label, bag, &v), 0);
  const char* text = nullptr;
  size_t size = 0;
  ASSERT_EQ(ffk_any_as_str(&v, &text, &size), 0);
  EXPECT_EQ(std::string(text, size), "a label longer than seven");
  ASSERT_EQ(ffk_field_peek(hidden, bag, &v), 0);
  EXPECT_EQ(v.type_index, FFK_TYPE_INT);
  EXPECT_EQ(v.v_int, 7);
  ASSERT_EQ(ffk_field_peek(on, bag, &v), 0);
  EXPECT_EQ(v.type_index, FFK_TYPE_BOOL);
  OwnedAny any;
  ASSERT_EQ(ffk_field_peek(anything, bag, &any.v), 1);  // writable Any: a new reference
  EXPECT_EQ(any.v.type_index, FFK_TYPE_INT);
  EXPECT_EQ(any.v.v_int, 7);
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_field_set(label, bag, &none), 0);
  ASSERT_EQ(ffk_field_peek(label, bag, &v), 0);  // a None Optional
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
  ffk_read_section_exit(section);
  ffk_read_section_exit(nullptr);  // ignored
  ffk_object_release(bag);
}

TEST_F(Reflect, PeekRefusesAWritableObjectFieldOutsideASectionAndBadArguments) {
  int32_t t = BagType();
  ffk_object* bag = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &bag), 0) << FetchError();
  const ffk_field_info *ints, *items;
  ASSERT_EQ(ffk_type_find_field(t, "ints", &ints), 1);
  ASSERT_EQ(ffk_type_find_field(t, "items", &items), 1);
  ffk_any v = ffk_any_int(5);
  EXPECT_EQ(ffk_field_peek(ints, bag, &v), -1);
  EXPECT_EQ(v.type_index, FFK_TYPE_NONE);
  EXPECT_TRUE(PendingError("RuntimeError", {"field `ints` of `test.reflect.Bag`", "read section"}));
  EXPECT_EQ(ffk_field_peek(items, bag, &v), 0);  // a read-only field needs no section
  ffk_array* arr = ffk_array_new(nullptr, 0);
  void* section = ffk_read_section_enter();
  ASSERT_NE(section, nullptr) << FetchError();
  EXPECT_EQ(ffk_field_peek(ints, Obj(arr), &v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"field `ints` belongs to `test.reflect.Bag`, not to a `Array`"}));
  EXPECT_EQ(ffk_field_peek(ints, nullptr, &v), -1);
  EXPECT_TRUE(PendingError("TypeError", {"None"}));
  EXPECT_EQ(ffk_field_peek(nullptr, bag, &v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"field is NULL"}));
  EXPECT_EQ(ffk_field_peek(ints, bag, nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"out is NULL"}));
  ffk_read_section_exit(section);
  ffk_object_release(Obj(arr));
  ffk_object_release(bag);
}

TEST_F(Reflect, AValueReplacedUnderAReadSectionLivesUntilTheOutermostSectionEnds) {
  int32_t t = BagType();
  ffk_object* bag = nullptr;
  ASSERT_EQ(ffk_object_create(t, nullptr, 0, nullptr, 0, &bag), 0) << FetchError();
  const ffk_field_info* ints;
  ASSERT_EQ(ffk_type_find_field(t, "ints", &ints), 1);
  ffk_object* old = reinterpret_cast<Bag*>(bag)->ints;
  ffk_weak_retain(old);
  ffk::test::OwnedAny fresh(ffk_any_object_steal(Obj(ffk_array_new(nullptr, 0))));

  void* outer = ffk_read_section_enter();
  ASSERT_NE(outer, nullptr) << FetchError();
  void* inner = ffk_read_section_enter();  // sections nest
  ASSERT_NE(inner, nullptr) << FetchError();
  ffk_any seen;
  ASSERT_EQ(ffk_field_peek(ints, bag, &seen), 0);
  ASSERT_EQ(seen.v_obj, old);
  ASSERT_EQ(ffk_field_set(ints, bag, &fresh.v), 0) << FetchError();  // retires `old`, does not free it
  EXPECT_EQ(reinterpret_cast<Bag*>(bag)->ints, fresh.v.v_obj);
  EXPECT_EQ(ffk_object_use_count(old), 1u);  // the retired reference
  EXPECT_EQ(ffk_array_size(reinterpret_cast<ffk_array*>(seen.v_obj)), 0);
  ffk_read_section_exit(inner);
  EXPECT_EQ(ffk_object_use_count(old), 1u);  // the outer section may still use it
  ffk_read_section_exit(outer);
  ffk_object* back = ffk_weak_lock(old);  // reclaimed when the last section ended
  EXPECT_EQ(back, nullptr);
  ffk_object_release(back);
  ffk_weak_release(old);

  // Outside any section a write releases the old value at once, and ffk_field_get retains.
  ffk::test::OwnedAny got;
  ASSERT_EQ(ffk_field_get(ints, bag, &got.v), 0);
  EXPECT_EQ(ffk_object_use_count(got.v.v_obj), 3u);  // the field's, fresh's, got's
  ffk_any none = ffk_any_none();
  const ffk_field_info* label;
  ASSERT_EQ(ffk_type_find_field(t, "label", &label), 1);
  ffk::test::OwnedAny s;
  ASSERT_EQ(ffk_any_str("a label longer than seven", 25, &s.v), 0);
  ASSERT_EQ(ffk_field_set(label, bag, &s.v), 0);  // None -> a str: nothing to retire
  EXPECT_EQ(ffk_object_use_count(s.v.v_obj), 2u);
  ASSERT_EQ(ffk_field_set(label, bag, &none), 0);
  EXPECT_EQ(ffk_object_use_count(s.v.v_obj), 1u);
  ffk_object_release(bag);
}

// ---- Field-wise encoding ---------------------------------------------------------------------

// Releases n values (the out array of ffk_object_field_values).
void ReleaseAll(ffk_any* v, int32_t n) {
  for (int32_t i = 0; i < n; ++i) ffk_any_release(&v[i]);
}

TEST_F(Reflect, FieldValuesReadEveryFieldInOrderInheritedOnesFirst) {
  int32_t t = Point3Type();
  ffk_any args[] = {ffk_any_int(4), ffk_any_float(0.5), ffk_any_raw_str("a name longer than seven"),
                    ffk_any_int(9)};
  const char* kw[] = {"z"};
  ffk_object* p = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 3, kw, 1, &p), 0) << FetchError();
  ffk_any v[4];
  ASSERT_EQ(ffk_object_field_values(p, v, 4), 0) << FetchError();
  EXPECT_EQ(v[0].type_index, FFK_TYPE_INT);
  EXPECT_EQ(v[0].v_int, 4);
  EXPECT_EQ(v[1].type_index, FFK_TYPE_FLOAT);
  EXPECT_EQ(v[1].v_float, 0.5);
  ASSERT_EQ(v[2].type_index, FFK_TYPE_STRING);  // the very String the read-only field holds, retained
  EXPECT_EQ(v[2].v_obj, Obj(reinterpret_cast<Point3*>(p)->base.name));
  EXPECT_EQ(ffk_object_use_count(v[2].v_obj), 2u);
  EXPECT_EQ(v[3].v_int, 9);
  ReleaseAll(v, 4);
  EXPECT_EQ(ffk_object_use_count(Obj(reinterpret_cast<Point3*>(p)->base.name)), 1u);

  // Containers come back as themselves, not copied.
  ffk_object* bag = ffk_object_new_reflected(BagType());
  ASSERT_NE(bag, nullptr) << FetchError();
  ffk_any b[8];
  ASSERT_EQ(ffk_object_field_values(bag, b, 8), 0) << FetchError();
  EXPECT_EQ(b[0].v_obj, reinterpret_cast<Bag*>(bag)->items);
  EXPECT_EQ(b[4].type_index, FFK_TYPE_NONE);  // an Optional<str> at None
  EXPECT_EQ(b[3].type_index, FFK_TYPE_DEVICE);
  ReleaseAll(b, 8);
  ffk_object_release(bag);
  ffk_object_release(p);
}

TEST_F(Reflect, InitFieldsWritesReadOnlyFieldsOfAFreshObjectAndRoundTrips) {
  int32_t t = Point3Type();
  ffk_any args[] = {ffk_any_int(4), ffk_any_float(0.5), ffk_any_raw_str("a name longer than seven")};
  ffk_object* src = nullptr;
  ASSERT_EQ(ffk_object_create(t, args, 3, nullptr, 0, &src), 0) << FetchError();
  ffk_any v[4];
  ASSERT_EQ(ffk_object_field_values(src, v, 4), 0) << FetchError();
  ffk_object* dst = ffk_object_new_reflected(t);
  ASSERT_NE(dst, nullptr) << FetchError();
  ASSERT_EQ(ffk_object_init_fields(dst, v, 4), 0) << FetchError();
  const Point3* d = reinterpret_cast<const Point3*>(dst);
  EXPECT_EQ(d->base.x, 4);
  EXPECT_EQ(d->base.y, 0.5);
  EXPECT_EQ(Obj(d->base.name), v[2].v_obj);  // the read-only field, set; the String shared
  EXPECT_EQ(ffk_object_use_count(v[2].v_obj), 3u);
  EXPECT_EQ(d->z, 0);
  ReleaseAll(v, 4);

  // Values convert as ffk_field_init converts them: a bool for an int, an inline str for a str field.
  ffk_any raw[] = {ffk_any_bool(true), ffk_any_int(3), ffk_any_raw_str("short"), ffk_any_int(-1)};
  ASSERT_EQ(ffk_object_init_fields(dst, raw, 4), 0) << FetchError();
  EXPECT_EQ(d->base.x, 1);
  EXPECT_EQ(d->base.y, 3.0);
  EXPECT_EQ(std::string(d->base.name->data, d->base.name->size), "short");
  EXPECT_EQ(d->z, -1);
  ffk_object_release(dst);
  ffk_object_release(src);
}

TEST_F(Reflect, InitFieldsRebuildsACycleThroughAFieldSetAfterCreation) {
  // The decoder's order: make the object, put it into a List, then fill its fields.
  ffk_object* bag = ffk_object_new_reflected(BagType());
  ASSERT_NE(bag, nullptr) << FetchError();
  ffk_list* l = ffk_list_new();
  ASSERT_NE(l, nullptr);
  ffk_any self = ffk_any_object(bag);
  ASSERT_EQ(ffk_list_append(l, &self), 0) << FetchError();
  ffk_any_release(&self);
  ffk_any v[8];
  ASSERT_EQ(ffk_object_field_values(bag, v, 8), 0) << FetchError();
  ffk_any_release(&v[6]);
  v[6] = ffk_any_object(Obj(l));  // anything: the List holding the bag
  ASSERT_EQ(ffk_object_init_fields(bag, v, 8), 0) << FetchError();
  EXPECT_EQ(reinterpret_cast<Bag*>(bag)->anything.v_obj, Obj(l));
  OwnedAny first;
  ASSERT_EQ(ffk_list_get(l, 0, &first.v), 0);
  EXPECT_EQ(first.v.v_obj, bag);
  ReleaseAll(v, 8);
  ffk_any none = ffk_any_none();
  ASSERT_EQ(ffk_object_set_field(bag, "anything", &none), 0) << FetchError();  // break the cycle
  ffk_object_release(Obj(l));
  ffk_object_release(bag);
}

TEST_F(Reflect, InitFieldsConvertsEveryValueBeforeWritingAny) {
  int32_t t = Point3Type();
  ffk_object* p = ffk_object_new_reflected(t);
  ASSERT_NE(p, nullptr) << FetchError();
  ffk_any bad[] = {ffk_any_int(1), ffk_any_float(1), ffk_any_raw_str("n"), ffk_any_raw_str("not an int")};
  EXPECT_EQ(ffk_object_init_fields(p, bad, 4), -1);
  EXPECT_EQ(FetchError(), "TypeError: Mismatched type on field `z` of `test.reflect.Point3`: expected `int` but got `str`");
  const Point3* d = reinterpret_cast<const Point3*>(p);
  EXPECT_EQ(d->base.x, 0);  // the fields before the bad one are untouched
  EXPECT_EQ(d->base.y, 2.5);
  EXPECT_EQ(std::string(d->base.name->data, d->base.name->size), "pt");
  ffk_object_release(p);
}

TEST_F(Reflect, FieldWiseFunctionsRefuseOtherObjectsWrongCountsAndNulls) {
  int32_t t = PointType();
  ffk_object* p = ffk_object_new_reflected(t);
  ASSERT_NE(p, nullptr) << FetchError();
  ffk_any v[4] = {ffk_any_int(1), ffk_any_int(2), ffk_any_int(3), ffk_any_int(4)};
  EXPECT_EQ(ffk_object_field_values(p, v, 2), -1);
  EXPECT_EQ(FetchError(), "ValueError: `test.reflect.Point` has 3 fields, not 2");
  EXPECT_EQ(v[0].type_index, FFK_TYPE_NONE);  // out[0..n) set to None on failure
  EXPECT_EQ(v[1].type_index, FFK_TYPE_NONE);
  ffk_any ints[4] = {ffk_any_int(1), ffk_any_int(2), ffk_any_int(3), ffk_any_int(4)};
  EXPECT_EQ(ffk_object_init_fields(p, ints, 4), -1);
  EXPECT_EQ(FetchError(), "ValueError: `test.reflect.Point` has 3 fields, not 4");
  EXPECT_EQ(ffk_object_field_values(nullptr, v, 3), -1);
  EXPECT_TRUE(PendingError("ValueError", {"the object is NULL"}));
  EXPECT_EQ(ffk_object_field_values(p, nullptr, 3), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_object_init_fields(p, nullptr, 3), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
  EXPECT_EQ(ffk_object_init_fields(nullptr, ints, 3), -1);
  EXPECT_TRUE(PendingError("ValueError", {"the object is NULL"}));

  // An object the library allocated itself, and a built-in one: not field-wise.
  ffk_object* own = ffk_object_alloc(t, sizeof(Point), PlainDeleter);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(ffk_object_field_values(own, v, 3), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: cannot read the fields of a `test.reflect.Point`: only objects made by reflection are field-wise");
  EXPECT_EQ(ffk_object_init_fields(own, ints, 3), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: cannot set the fields of a `test.reflect.Point`: only objects made by reflection are field-wise");
  ffk_array* arr = ffk_array_new(nullptr, 0);
  EXPECT_EQ(ffk_object_field_values(Obj(arr), nullptr, 0), -1);
  EXPECT_TRUE(PendingError("TypeError", {"`Array`"}));
  for (ffk_object* o : {p, own, Obj(arr)}) ffk_object_release(o);
}

TEST_F(Reflect, InitFieldsCallsTheWriteHookForEachField) {
  auto [parent, child] = HookTypes();
  ASSERT_GT(child, 0) << FetchError();
  ffk_object* c = ffk_object_new_reflected(child);
  ASSERT_NE(c, nullptr) << FetchError();
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, LogWrite), 0) << FetchError();
  g_hook_log.calls.clear();
  ffk_any v[] = {ffk_any_int(5), ffk_any_int(6), ffk_any_float(0.25)};
  ASSERT_EQ(ffk_object_init_fields(c, v, 3), 0) << FetchError();
  std::vector<std::pair<ffk_object*, std::string>> want = {{c, "x"}, {c, "frozen"}, {c, "y"}};
  EXPECT_EQ(g_hook_log.calls, want);
  ASSERT_EQ(ffk_type_set_field_write_hook(parent, nullptr), 0);
  ffk_object_release(c);
}

TEST_F(Reflect, FieldWiseAllocationFailuresAreMemoryErrorsAndLeakNothing) {
  ffk_function* factory = ffk_function_new("make_list", MakeList, nullptr, nullptr);
  ffk_function* method = NoneFunction("m");
  SweepDefinition("test.reflect.sweep.FieldWise", factory, method);
  ffk_object_release(Obj(factory));
  ffk_object_release(Obj(method));
  int32_t t = -1;
  ASSERT_EQ(ffk_type_lookup("test.reflect.sweep.FieldWise", &t), 1);
  // In field order: name, items, any, n.
  ffk_any values[] = {ffk_any_raw_str("a name longer than seven bytes"), ffk_any_none(),
                      ffk_any_raw_str("another long string value"), ffk_any_int(3)};
  ffk::test::SweepAllocationFailures([&] {
    ffk_object* obj = ffk_object_new_reflected(t);
    if (obj == nullptr) return false;
    int rc = ffk_object_init_fields(obj, values, 4);
    ffk_object_release(obj);
    return rc == 0;
  });
  ffk_object* obj = ffk_object_new_reflected(t);
  ASSERT_NE(obj, nullptr) << FetchError();
  ASSERT_EQ(ffk_object_init_fields(obj, values, 4), 0) << FetchError();
  ffk::test::SweepAllocationFailures([&] {
    ffk_any out[4];
    if (ffk_object_field_values(obj, out, 4) != 0) return false;
    ReleaseAll(out, 4);
    return true;
  });
  ffk_object_release(obj);
}

}  // namespace
