// ffikit/weak_ref.h: WeakRef objects, a weak handle that a field or an element can hold.
#include <ffikit/ffikit.h>

#include <atomic>
#include <string>
#include <thread>

#include "tests/support/ffk_test.h"

namespace {

class WeakRef : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::PendingError;

ffk_object* NewShape() {
  int64_t dims[2] = {2, 3};
  return &ffk_shape_new(dims, 2)->header;
}

TEST_F(WeakRef, GetGivesTheTargetWhileAliveWithoutKeepingItAlive) {
  ffk_object* target = NewShape();
  ffk_object* w = ffk_weak_ref_new(target);
  ASSERT_NE(w, nullptr) << FetchError();
  EXPECT_EQ(w->type_index, FFK_TYPE_WEAK_REF);
  EXPECT_EQ(ffk_object_use_count(target), 1u);  // no strong reference taken
  EXPECT_EQ(ffk_object_weak_count(target), 1u);
  EXPECT_TRUE(ffk_weak_ref_alive(w));
  EXPECT_EQ(ffk_weak_ref_target_address(w), target);

  ffk_object* got = nullptr;
  EXPECT_EQ(ffk_weak_ref_get(w, &got), 1);
  EXPECT_EQ(got, target);
  EXPECT_EQ(ffk_object_use_count(target), 2u);
  ffk_object_release(got);

  ffk_object_release(target);  // the last strong holder: contents go, memory stays for w
  EXPECT_FALSE(ffk_weak_ref_alive(w));
  EXPECT_EQ(ffk_weak_ref_get(w, &got), 0);
  EXPECT_EQ(got, nullptr);
  EXPECT_EQ(FetchError(), "");  // dead is an answer, not an error
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 1);  // the memory, held by the WeakRef
  ffk_object_release(w);
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_SHAPE), 0);
}

TEST_F(WeakRef, OutlivedByItsTargetGivesTheWeakUnitBack) {
  ffk_object* target = NewShape();
  ffk_object* w = ffk_weak_ref_new(target);
  ASSERT_NE(w, nullptr) << FetchError();
  ffk_object_release(w);
  EXPECT_EQ(ffk_object_weak_count(target), 0u);
  EXPECT_TRUE(ffk_object_is_unique(target));  // copy-on-write sees it unique again
  ffk_object_release(target);
}

TEST_F(WeakRef, BadInputIsAClearError) {
  EXPECT_EQ(ffk_weak_ref_new(nullptr), nullptr);
  EXPECT_TRUE(PendingError("ValueError", {"WeakRef to None"}));
  ffk_object* got = reinterpret_cast<ffk_object*>(1);
  EXPECT_EQ(ffk_weak_ref_get(nullptr, &got), -1);
  EXPECT_EQ(got, nullptr);
  EXPECT_TRUE(PendingError("TypeError", {"expected a WeakRef, got None"}));
  ffk_object* s = NewShape();
  EXPECT_EQ(ffk_weak_ref_get(s, &got), -1);
  EXPECT_TRUE(PendingError("TypeError", {"expected a WeakRef, got Shape"}));
  EXPECT_FALSE(ffk_weak_ref_alive(s));
  EXPECT_EQ(ffk_weak_ref_target_address(s), nullptr);
  EXPECT_EQ(ffk_weak_ref_target_address(nullptr), nullptr);
  ffk_object_release(s);
}

TEST_F(WeakRef, EqualAndHashByTheIdentityOfTheTargetAliveOrDead) {
  ffk_object* a = NewShape();
  ffk_object* b = NewShape();
  ffk::test::OwnedAny wa1(ffk_any_object_steal(ffk_weak_ref_new(a)));
  ffk::test::OwnedAny wa2(ffk_any_object_steal(ffk_weak_ref_new(a)));
  ffk::test::OwnedAny wb(ffk_any_object_steal(ffk_weak_ref_new(b)));
  EXPECT_TRUE(ffk_any_equal(&wa1.v, &wa2.v));
  EXPECT_EQ(ffk_any_hash(&wa1.v), ffk_any_hash(&wa2.v));
  EXPECT_FALSE(ffk_any_equal(&wa1.v, &wb.v));
  ffk::test::OwnedAny sa(ffk_any_object(a));
  EXPECT_FALSE(ffk_any_equal(&wa1.v, &sa.v));  // a WeakRef is not its target
  ffk_any_release(&sa.v);
  ffk_object_release(a);
  ffk_object_release(b);
  EXPECT_TRUE(ffk_any_equal(&wa1.v, &wa2.v));  // still one target: its memory is held
  EXPECT_EQ(ffk_any_hash(&wa1.v), ffk_any_hash(&wa2.v));
  EXPECT_FALSE(ffk_any_equal(&wa1.v, &wb.v));
}

TEST_F(WeakRef, PrintsItsTargetOrDead) {
  ffk_object* a = NewShape();
  ffk::test::OwnedAny w(ffk_any_object_steal(ffk_weak_ref_new(a)));
  std::string alive = ffk::test::Repr(w.v);
  EXPECT_EQ(alive.rfind("<WeakRef at 0x", 0), 0u) << alive;
  EXPECT_NE(alive.find("; to ffikit.Shape at 0x"), std::string::npos) << alive;
  ffk_object_release(a);
  std::string dead = ffk::test::Repr(w.v);
  EXPECT_NE(dead.find("; dead>"), std::string::npos) << dead;
}

TEST_F(WeakRef, IsABuiltInObjectType) {
  EXPECT_STREQ(ffk_type_key(FFK_TYPE_WEAK_REF), "ffikit.WeakRef");
  EXPECT_TRUE(ffk_type_is_instance(FFK_TYPE_WEAK_REF, FFK_TYPE_OBJECT));
  int32_t index = -1;
  ASSERT_EQ(ffk_type_lookup("ffikit.WeakRef", &index), 1) << FetchError();
  EXPECT_EQ(index, FFK_TYPE_WEAK_REF);
}

TEST_F(WeakRef, CreationFailsCleanlyWhenMemoryRunsOut) {
  ffk_object* a = NewShape();
  ffk::test::SweepAllocationFailures(
      [&] {
        ffk_object* w = ffk_weak_ref_new(a);
        if (w == nullptr) return false;
        ffk_object_release(w);
        return true;
      },
      [&] { EXPECT_TRUE(ffk_object_is_unique(a)); });
  ffk_object_release(a);
}

// One thread drops the last strong reference while another upgrades: the upgrade gets a
// live object or nothing, never a destroyed one (run under TSan and ASan too).
TEST_F(WeakRef, GetRacingTheLastReleaseGivesALiveTargetOrNone) {
  for (int round = 0; round < 2000; ++round) {
    ffk_object* target = NewShape();
    ffk_object* w = ffk_weak_ref_new(target);
    ASSERT_NE(w, nullptr) << FetchError();
    std::atomic<bool> go{false};
    std::thread dropper([&] {
      while (!go.load()) {
      }
      ffk_object_release(target);
    });
    go.store(true);
    for (int i = 0; i < 50; ++i) {
      ffk_object* got = nullptr;
      int rc = ffk_weak_ref_get(w, &got);
      ASSERT_GE(rc, 0);
      if (rc == 1) {
        EXPECT_EQ(ffk_shape_size(reinterpret_cast<ffk_shape*>(got)), 2u);  // contents intact
        ffk_object_release(got);
      }
    }
    dropper.join();
    ffk_object* got = nullptr;
    EXPECT_EQ(ffk_weak_ref_get(w, &got), 0);
    ffk_object_release(w);
  }
}

}  // namespace
