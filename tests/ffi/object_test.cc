// ffikit/object.h: reference counting, the deleter protocol, weak references, uniqueness.
#include <ffikit/ffikit.h>

#include <cstring>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Object : public ffk::test::Test {};

// A registered type whose deleter records the order of its calls.
struct Probe {
  ffk_object header;
  std::vector<int>* calls;
};

void probe_deleter(void* self, int which) {
  Probe* p = static_cast<Probe*>(self);
  p->calls->push_back(which);
  if (which & FFK_DELETER_FREE) ffk_object_free(&p->header);
}

int32_t ProbeType() {
  static int32_t index = ffk_type_register("test.Probe", FFK_TYPE_OBJECT);
  return index;
}

Probe* NewProbe(std::vector<int>* calls) {
  Probe* p = reinterpret_cast<Probe*>(ffk_object_alloc(ProbeType(), sizeof(Probe), probe_deleter));
  if (p != nullptr) p->calls = calls;
  return p;
}

TEST_F(Object, NewObjectStartsWithOneStrongAndNoWeakReference) {
  std::vector<int> calls;
  Probe* p = NewProbe(&calls);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->header.refcount, FFK_REFCOUNT_INIT);
  EXPECT_EQ(p->header.type_index, ProbeType());
  EXPECT_EQ(ffk_object_use_count(&p->header), 1u);
  EXPECT_EQ(ffk_object_weak_count(&p->header), 0u);
  EXPECT_TRUE(ffk_object_is_unique(&p->header));
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 1);
  ffk_object_release(&p->header);
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 0);
}

TEST_F(Object, LastReleaseWithoutWeakHoldersCallsDeleterOnceWithBoth) {
  std::vector<int> calls;
  Probe* p = NewProbe(&calls);
  ffk_object_retain(&p->header);
  EXPECT_EQ(ffk_object_use_count(&p->header), 2u);
  EXPECT_FALSE(ffk_object_is_unique(&p->header));
  ffk_object_release(&p->header);
  EXPECT_TRUE(calls.empty());
  EXPECT_TRUE(ffk_object_is_unique(&p->header));
  ffk_object_release(&p->header);
  EXPECT_EQ(calls, std::vector<int>({FFK_DELETER_BOTH}));
}

TEST_F(Object, WeakHolderDelaysFreeButNotDestroy) {
  std::vector<int> calls;
  Probe* p = NewProbe(&calls);
  ffk_weak_retain(&p->header);
  EXPECT_EQ(ffk_object_weak_count(&p->header), 1u);
  EXPECT_FALSE(ffk_object_is_unique(&p->header)) << "a weak reference counts as sharing";
  ffk_object_release(&p->header);
  EXPECT_EQ(calls, std::vector<int>({FFK_DELETER_DESTROY}));
  EXPECT_EQ(ffk_object_use_count(&p->header), 0u);
  EXPECT_EQ(ffk_weak_lock(&p->header), nullptr);
  ffk_weak_release(&p->header);
  EXPECT_EQ(calls, std::vector<int>({FFK_DELETER_DESTROY, FFK_DELETER_FREE}));
}

TEST_F(Object, WeakLockOnLiveObjectGivesNewStrongReference) {
  std::vector<int> calls;
  Probe* p = NewProbe(&calls);
  ffk_weak_retain(&p->header);
  ffk_object* locked = ffk_weak_lock(&p->header);
  ASSERT_EQ(locked, &p->header);
  EXPECT_EQ(ffk_object_use_count(locked), 2u);
  ffk_object_release(locked);
  ffk_weak_release(&p->header);  // the weak ref goes first: the object stays alive
  EXPECT_TRUE(calls.empty());
  EXPECT_TRUE(ffk_object_is_unique(&p->header));
  ffk_object_release(&p->header);
  EXPECT_EQ(calls, std::vector<int>({FFK_DELETER_BOTH}));
}

TEST_F(Object, NullIsANoOpForReleaseAndCountsZero) {
  ffk_object_release(nullptr);
  ffk_weak_release(nullptr);
  EXPECT_EQ(ffk_object_use_count(nullptr), 0u);
  EXPECT_EQ(ffk_object_weak_count(nullptr), 0u);
  EXPECT_FALSE(ffk_object_is_unique(nullptr));
  EXPECT_EQ(ffk_weak_lock(nullptr), nullptr);
}

TEST_F(Object, AllocRejectsPodTypeIndexNamingIt) {
  EXPECT_EQ(ffk_object_alloc(FFK_TYPE_INT, 64, probe_deleter), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_alloc: type index 1 is not an object type");
  EXPECT_EQ(ffk_object_alloc(999999, 64, probe_deleter), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_alloc: type index 999999 is not an object type");
}

TEST_F(Object, AllocRejectsSizeSmallerThanHeaderAndNullDeleter) {
  EXPECT_EQ(ffk_object_alloc(FFK_TYPE_OBJECT, 8, probe_deleter), nullptr);
  EXPECT_NE(ffk::test::FetchError().find("size 8"), std::string::npos);
  EXPECT_EQ(ffk_object_alloc(FFK_TYPE_OBJECT, 64, nullptr), nullptr);
  EXPECT_NE(ffk::test::FetchError().find("deleter is NULL"), std::string::npos);
}

TEST_F(Object, AllocFailureIsMemoryErrorNamingTypeAndSize) {
  ffk_debug_fail_allocation(1);
  EXPECT_EQ(ffk_object_alloc(ProbeType(), sizeof(Probe), probe_deleter), nullptr);
  EXPECT_EQ(ffk::test::FetchError(), "MemoryError: out of memory allocating a 32-byte test.Probe");
}

void free_only(void* self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(static_cast<ffk_object*>(self));
}

TEST_F(Object, AllocZeroesThePayloadEvenOfAReusedBlock) {
  constexpr size_t kSize = 96;
  for (int round = 0; round < 8; ++round) {
    // Dirty a block of the same size and free it: malloc tends to hand it straight back.
    ffk_object* dirty = ffk_object_alloc(FFK_TYPE_OBJECT, kSize, free_only);
    memset(dirty + 1, 0xAB, kSize - sizeof(ffk_object));
    ffk_object_release(dirty);
    ffk_object* fresh = ffk_object_alloc(FFK_TYPE_OBJECT, kSize, free_only);
    const unsigned char* payload = reinterpret_cast<const unsigned char*>(fresh + 1);
    for (size_t i = 0; i < kSize - sizeof(ffk_object); ++i) ASSERT_EQ(payload[i], 0) << "byte " << i;
    EXPECT_EQ(fresh->flags, 0u);
    ffk_object_release(fresh);
  }
}

// Two objects in one caller-owned block, as a small tensor and its storage are: each
// counts on its own, and the block goes back when both are freed.
struct Pair {
  Probe first, second;
  int parties = 2;
};

void pair_leave(Pair* pair) {
  if (--pair->parties == 0) delete pair;
}

void pair_first_deleter(void* self, int which) {
  Probe* p = static_cast<Probe*>(self);
  p->calls->push_back(which);
  if (which & FFK_DELETER_FREE) {
    ffk_object_forget(&p->header);
    pair_leave(reinterpret_cast<Pair*>(p));  // first is at the start of the Pair
  }
}

void pair_second_deleter(void* self, int which) {
  Probe* p = static_cast<Probe*>(self);
  p->calls->push_back(which);
  if (which & FFK_DELETER_FREE) {
    ffk_object_forget(&p->header);
    pair_leave(reinterpret_cast<Pair*>(reinterpret_cast<char*>(p) - offsetof(Pair, second)));
  }
}

TEST_F(Object, InitMakesObjectsInCallerMemoryThatCountAndForget) {
  std::vector<int> first_calls, second_calls;
  Pair* pair = new Pair;
  ASSERT_EQ(ffk_object_init(&pair->first.header, ProbeType(), pair_first_deleter), 0);
  ASSERT_EQ(ffk_object_init(&pair->second.header, ProbeType(), pair_second_deleter), 0);
  pair->first.calls = &first_calls;
  pair->second.calls = &second_calls;
  EXPECT_EQ(pair->first.header.refcount, FFK_REFCOUNT_INIT);
  EXPECT_EQ(pair->second.header.type_index, ProbeType());
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 2);
  ffk_object* second = &pair->second.header;
  ffk_weak_retain(second);
  ffk_object_release(&pair->first.header);
  EXPECT_EQ(first_calls, std::vector<int>({FFK_DELETER_BOTH}));
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 1);
  ffk_object_release(second);  // destroyed; the weak reference keeps the memory
  EXPECT_EQ(second_calls, std::vector<int>({FFK_DELETER_DESTROY}));
  EXPECT_EQ(ffk_weak_lock(second), nullptr);
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 1);
  ffk_weak_release(second);  // frees the Pair (ASan checks it is gone, and once)
  EXPECT_EQ(second_calls, std::vector<int>({FFK_DELETER_DESTROY, FFK_DELETER_FREE}));
  EXPECT_EQ(ffk_debug_live_objects(ProbeType()), 0);
}

TEST_F(Object, InitRejectsNullsAndTypesThatAreNotObjects) {
  ffk_object header;
  EXPECT_EQ(ffk_object_init(nullptr, ProbeType(), probe_deleter), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_init: the object is NULL");
  EXPECT_EQ(ffk_object_init(&header, ProbeType(), nullptr), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_init: the deleter is NULL");
  EXPECT_EQ(ffk_object_init(&header, FFK_TYPE_INT, probe_deleter), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_init: type index 1 is not an object type");
  EXPECT_EQ(ffk_object_init(&header, 100000, probe_deleter), -1);
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_init: type index 100000 is not an object type");
  EXPECT_EQ(ffk_object_init(&header, FFK_TYPE_STATIC_END + 60000, probe_deleter), -1)
      << "an index no type was registered at";
  EXPECT_EQ(ffk::test::FetchError(), "ValueError: ffk_object_init: type index 60128 is not an object type");
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

TEST_F(Object, ReleasingTheOnlyReferenceOfASharedObjectStillWaitsForOthers) {
  // The last release takes a shortcut when it holds the only reference; a count that
  // was shared a moment ago must still end in exactly one deleter call.
  std::vector<int> calls;
  Probe* p = NewProbe(&calls);
  for (int i = 0; i < 3; ++i) ffk_object_retain(&p->header);
  for (int i = 0; i < 3; ++i) ffk_object_release(&p->header);
  EXPECT_TRUE(calls.empty());
  ffk_object_release(&p->header);
  EXPECT_EQ(calls, std::vector<int>({FFK_DELETER_BOTH}));
}

}  // namespace
