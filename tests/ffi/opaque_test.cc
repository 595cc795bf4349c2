// ffikit/opaque.h: foreign handles held by reference, released exactly once.
#include <ffikit/ffikit.h>

#include "tests/support/ffk_test.h"

namespace {

class Opaque : public ffk::test::Test {};
using ffk::test::FetchError;

int g_released = 0;
void* g_last_released = nullptr;
void count_release(void* handle) {
  ++g_released;
  g_last_released = handle;
}
void other_release(void*) {}

TEST_F(Opaque, HoldsTheHandleAndReleasesItOnceWhenDestroyed) {
  g_released = 0;
  int target = 7;
  ffk_object* o = ffk_opaque_new(&target, count_release);
  ASSERT_NE(o, nullptr) << FetchError();
  EXPECT_EQ(o->type_index, FFK_TYPE_OPAQUE);
  EXPECT_EQ(ffk_opaque_handle(o), &target);
  EXPECT_EQ(ffk_opaque_release_fn(o), &count_release);
  ffk_object_retain(o);
  ffk_object_release(o);
  EXPECT_EQ(g_released, 0);
  ffk_object_release(o);
  EXPECT_EQ(g_released, 1);
  EXPECT_EQ(g_last_released, &target);
}

TEST_F(Opaque, ComparesByIdentityAndPrintsAsOpaque) {
  int a = 0;
  ffk_any x = ffk_any_object_steal(ffk_opaque_new(&a, other_release));
  ffk_any y = ffk_any_object_steal(ffk_opaque_new(&a, other_release));
  EXPECT_TRUE(ffk_any_equal(&x, &x));
  EXPECT_FALSE(ffk_any_equal(&x, &y));
  EXPECT_EQ(ffk::test::Repr(x).rfind("<Opaque at 0x", 0), 0u) << ffk::test::Repr(x);
  ffk_any_release(&x);
  ffk_any_release(&y);
}

TEST_F(Opaque, AccessorsAnswerNullForOtherObjectsAndNull) {
  ffk_shape* s = ffk_shape_new(nullptr, 0);
  EXPECT_EQ(ffk_opaque_handle(&s->header), nullptr);
  EXPECT_EQ(ffk_opaque_release_fn(&s->header), nullptr);
  EXPECT_EQ(ffk_opaque_handle(nullptr), nullptr);
  EXPECT_EQ(ffk_opaque_release_fn(nullptr), nullptr);
  EXPECT_FALSE(ffk_error_occurred());
  ffk_object_release(&s->header);
}

TEST_F(Opaque, FailedAllocationReleasesTheHandleRightAway) {
  g_released = 0;
  int target = 1;
  int calls = ffk::test::SweepAllocationFailures([&] {
    ffk_object* o = ffk_opaque_new(&target, count_release);
    if (o == nullptr) return false;
    ffk_object_release(o);
    return true;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(g_released, 2);  // once for the failed run, once for the successful one
}

TEST_F(Opaque, ARegisteredSubtypeNamesItselfAndKeepsEveryAccessor) {
  g_released = 0;
  int32_t sub = ffk_type_register("test.OpaqueThing", FFK_TYPE_OPAQUE);
  ASSERT_GE(sub, FFK_TYPE_STATIC_END) << FetchError();
  int target = 3;
  ffk_object* o = ffk_opaque_new_typed(sub, &target, count_release);
  ASSERT_NE(o, nullptr) << FetchError();
  EXPECT_EQ(o->type_index, sub);
  EXPECT_EQ(ffk_opaque_handle(o), &target);
  EXPECT_EQ(ffk_opaque_release_fn(o), &count_release);
  ffk_any v = ffk_any_object_steal(o);
  EXPECT_STREQ(ffk_any_type_name(&v), "test.OpaqueThing");  // what typed-call mismatches print
  ffk_any_release(&v);
  EXPECT_EQ(g_released, 1);
}

TEST_F(Opaque, TypedConstructionRefusesOtherTypesAndReleasesTheHandle) {
  g_released = 0;
  int target = 4;
  int32_t other = ffk_type_register("test.NotOpaque", FFK_TYPE_OBJECT);
  ASSERT_GE(other, FFK_TYPE_STATIC_END) << FetchError();
  for (int32_t index : {static_cast<int32_t>(FFK_TYPE_ARRAY), other, static_cast<int32_t>(FFK_TYPE_INT), -5}) {
    EXPECT_EQ(ffk_opaque_new_typed(index, &target, count_release), nullptr) << index;
    EXPECT_EQ(FetchError().rfind("TypeError: cannot make an Opaque object of type ", 0), 0u) << index;
  }
  EXPECT_EQ(g_released, 4);
  ffk_object* o = ffk_object_alloc(other, sizeof(ffk_object), [](void* self, int which) {
    if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
  });
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(ffk_opaque_handle(o), nullptr);  // an unrelated run-time type is no Opaque
  ffk_object_release(o);
}

TEST_F(Opaque, ErrorPayloadIsKeptReplacedAndReleasedWithTheError) {
  g_released = 0;
  int a = 0, b = 0;
  ffk_error* err = ffk_error_new("ValueError", "boom");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(ffk_error_payload_borrow(err), nullptr);
  ffk_object* pa = ffk_opaque_new(&a, count_release);
  ASSERT_EQ(ffk_error_set_payload(err, pa), 0);
  ffk_object_release(pa);  // the error keeps its own reference
  EXPECT_EQ(ffk_error_payload_borrow(err), pa);
  EXPECT_EQ(g_released, 0);
  ffk_object* pb = ffk_opaque_new(&b, count_release);
  ASSERT_EQ(ffk_error_set_payload(err, pb), 0);
  ffk_object_release(pb);
  EXPECT_EQ(g_released, 1);  // the replaced payload went at once
  EXPECT_EQ(g_last_released, &a);
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
  EXPECT_EQ(g_released, 2);
  EXPECT_EQ(g_last_released, &b);
}

TEST_F(Opaque, ErrorPayloadCanBeDetachedAndNullErrorIsAValueError) {
  g_released = 0;
  int a = 0;
  ffk_error* err = ffk_error_new("ValueError", "boom");
  ffk_object* pa = ffk_opaque_new(&a, count_release);
  ASSERT_EQ(ffk_error_set_payload(err, pa), 0);
  ASSERT_EQ(ffk_error_set_payload(err, nullptr), 0);
  EXPECT_EQ(ffk_error_payload_borrow(err), nullptr);
  EXPECT_EQ(g_released, 0);  // the caller still holds pa
  ffk_object_release(pa);
  EXPECT_EQ(g_released, 1);
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
  EXPECT_EQ(ffk_error_set_payload(nullptr, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_error_set_payload: err is NULL");
  EXPECT_EQ(ffk_error_payload_borrow(nullptr), nullptr);
}

}  // namespace
