// Releasing deep data (issue 35, item 2): a chain of any depth, of any kind of holder,
// is released with a bounded stack, in any thread (ffk_object_release in ffi/src/object.c
// queues a dying object nested more than DIE_STACK_MAX bytes of stack below the outermost death).
//
// Each test builds a chain kDepth objects deep, each holding the next, and releases its
// head. Before the queue, every level nested one deleter call in the next one's, so the
// release overflowed the stack at a few hundred thousand levels (8 MiB main stack; the
// issue's Python List chain crashed at 200,000): every test here crashed at fb008ea.
// A release must also return only when the whole chain is gone: the live-object counters
// read zero right after it, not later.
//
// Sanitizers slow a chain down about tenfold and fatten every frame, so under them the
// chains are kSanitizerDepth deep: still far past what the recursion survived (ASan's
// frames are larger, so it overflows sooner), at a cost a test run can pay.
#include <ffikit/ffikit.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEEP_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DEEP_UNDER_SANITIZER 1
#endif
#endif

constexpr int64_t kPlainDepth = 10'000'000;  // the depth
constexpr int64_t kSanitizerDepth = 200'000;
#ifdef DEEP_UNDER_SANITIZER
constexpr int64_t kDepth = kSanitizerDepth;
#else
constexpr int64_t kDepth = kPlainDepth;
#endif
// The threaded test releases kThreads chains at once, each kDepth / kThreads deep (the
// machine's memory, not the stack, bounds it: ten million Lists take about 1.5 GB).
constexpr int kThreads = 8;
// A thread's stack in the small-stack tests: a sixteenth of glibc's default, where the
// old recursion overflowed after about a thousand levels.
constexpr size_t kSmallStack = 256 * 1024;

class DeepRelease : public ffk::test::Test {};

// ---- One holder of each kind: each takes over `inner` (a new reference, may be NULL for
// ---- the innermost) and returns a new holder of it, or NULL (the test then fails).

ffk_any Steal(ffk_object* inner) { return inner != nullptr ? ffk_any_object_steal(inner) : ffk_any_none(); }

ffk_object* InArray(ffk_object* inner) {
  ffk_any v = Steal(inner);
  return (ffk_object*)ffk_array_new_steal(&v, 1);
}

ffk_object* InTuple(ffk_object* inner) {
  ffk_any v = Steal(inner);
  ffk_tuple* t = ffk_tuple_new(1, &v);
  ffk_any_release(&v);
  return (ffk_object*)t;
}

ffk_object* InMap(ffk_object* inner) {  // nested as a value
  ffk_any v = Steal(inner);
  ffk_any key = ffk_any_int(1);
  ffk_map* m = ffk_map_new();
  if (m != nullptr && ffk_map_set(&m, &key, &v) != 0) {
    ffk_object_release((ffk_object*)m);
    m = nullptr;
  }
  ffk_any_release(&v);
  return (ffk_object*)m;
}

ffk_object* InList(ffk_object* inner) {
  ffk_any v = Steal(inner);
  ffk_list* l = ffk_list_new();
  if (l != nullptr && ffk_list_append_steal(l, &v) != 0) {
    ffk_object_release((ffk_object*)l);
    l = nullptr;
  }
  ffk_any_release(&v);
  return (ffk_object*)l;
}

ffk_object* InDict(ffk_object* inner) {
  ffk_any v = Steal(inner);
  ffk_any key = ffk_any_raw_str("next");
  ffk_dict* d = ffk_dict_new();
  if (d != nullptr && ffk_dict_set(d, &key, &v) != 0) {
    ffk_object_release((ffk_object*)d);
    d = nullptr;
  }
  ffk_any_release(&v);
  return (ffk_object*)d;
}

// A reflected type whose one field holds the next node.
int32_t NodeType() {
  static const int32_t index = [] {
    static const ffk_field_def fields[] = {
        {"next", 0, "Optional<Object>", FFK_FIELD_WRITABLE, {}, "the next node, or None"},
    };
    ffk_type_def def = {};
    def.key = "tests.DeepNode";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = 0;  // laid out by ffikit
    def.fields = fields;
    def.nfields = 1;
    return ffk_type_define(&def);
  }();
  return index;
}

ffk_object* InNode(ffk_object* inner) {
  ffk_any v = Steal(inner);
  const ffk_field_info* next = nullptr;
  ffk_object* node = NodeType() >= 0 ? ffk_object_new_reflected(NodeType()) : nullptr;
  if (node != nullptr && (ffk_type_find_field(NodeType(), "next", &next) != 1 || ffk_field_init(next, node, &v) != 0)) {
    ffk_object_release(node);
    node = nullptr;
  }
  ffk_any_release(&v);
  return node;
}

// A reflected type whose finalize hook (user code, run by its deleter) makes and drops a
// List of a List while the chain dies: deaths inside deaths, at every depth, queued or not.
std::atomic<int64_t> g_finalized{0};

void FinalizeWithReleases(ffk_object*) {
  ffk_list* inner = ffk_list_new();
  ffk_list* outer = ffk_list_new();
  ffk_any v = ffk_any_object_steal((ffk_object*)inner);
  if (outer != nullptr && inner != nullptr) ffk_list_append_steal(outer, &v);
  ffk_any_release(&v);
  ffk_object_release((ffk_object*)outer);
  g_finalized.fetch_add(1, std::memory_order_relaxed);
}

int32_t FinalizingNodeType() {
  static const int32_t index = [] {
    static const ffk_field_def fields[] = {
        {"next", 0, "Optional<Object>", FFK_FIELD_WRITABLE, {}, "the next node, or None"},
    };
    ffk_type_def def = {};
    def.key = "tests.DeepFinalizingNode";
    def.parent_index = FFK_TYPE_OBJECT;
    def.fields = fields;
    def.nfields = 1;
    def.finalize = FinalizeWithReleases;
    return ffk_type_define(&def);
  }();
  return index;
}

ffk_object* InFinalizingNode(ffk_object* inner) {
  ffk_any v = Steal(inner);
  const ffk_field_info* next = nullptr;
  int32_t t = FinalizingNodeType();
  ffk_object* node = t >= 0 ? ffk_object_new_reflected(t) : nullptr;
  if (node != nullptr && (ffk_type_find_field(t, "next", &next) != 1 || ffk_field_init(next, node, &v) != 0)) {
    ffk_object_release(node);
    node = nullptr;
  }
  ffk_any_release(&v);
  return node;
}

int NeverCalled(void*, const ffk_any*, int32_t, ffk_any*) {
  return ffk_error_set(FFK_ERR_RUNTIME, "deep_release_test: not called");
}
void ReleaseContext(void* context) { ffk_object_release((ffk_object*)context); }

// A Function whose closure context holds the next link (released by the context deleter).
ffk_object* InClosure(ffk_object* inner) {
  return (ffk_object*)ffk_function_new("link", NeverCalled, inner, ReleaseContext);
}

using Wrap = ffk_object* (*)(ffk_object*);

// A chain `depth` holders deep, the innermost holding None; level i is wrapped by
// kinds[i % kinds.size()]. NULL when a step failed (the error is left pending).
ffk_object* Chain(int64_t depth, const std::vector<Wrap>& kinds, const std::function<void(ffk_object*)>& each = {}) {
  ffk_object* head = nullptr;
  for (int64_t i = 0; i < depth; ++i) {
    head = kinds[(size_t)(i % (int64_t)kinds.size())](head);
    if (head == nullptr) return nullptr;
    if (each) each(head);
  }
  return head;
}

// Releases the chain and checks it is gone when the release returns.
void ReleaseAll(ffk_object* head) {
  ASSERT_GE(ffk_debug_live_objects(-1), 1);
  ffk_object_release(head);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0) << "the release returned before the chain was gone";
}

void ExpectReleasesDeep(const std::vector<Wrap>& kinds) {
  ffk_object* head = Chain(kDepth, kinds);
  ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  ASSERT_EQ(ffk_object_use_count(head), 1u);
  ReleaseAll(head);
}

// Runs `fn` on a new thread with a `stack`-byte stack and waits for it.
void RunOnThread(size_t stack, void (*fn)(void*), void* arg) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack), 0);
  struct Call {
    void (*fn)(void*);
    void* arg;
  } call{fn, arg};
  pthread_t tid;
  int rc = pthread_create(
      &tid, &attr,
      [](void* p) -> void* {
        auto* c = static_cast<Call*>(p);
        c->fn(c->arg);
        return nullptr;
      },
      &call);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(pthread_join(tid, nullptr), 0);
}

void ReleaseObject(void* obj) { ffk_object_release(static_cast<ffk_object*>(obj)); }

TEST_F(DeepRelease, ArrayChain) { ExpectReleasesDeep({InArray}); }
TEST_F(DeepRelease, TupleChain) { ExpectReleasesDeep({InTuple}); }
TEST_F(DeepRelease, MapChainThroughValues) { ExpectReleasesDeep({InMap}); }
TEST_F(DeepRelease, ListChain) { ExpectReleasesDeep({InList}); }
TEST_F(DeepRelease, DictChain) { ExpectReleasesDeep({InDict}); }
TEST_F(DeepRelease, ReflectedObjectChainThroughAnObjectField) { ExpectReleasesDeep({InNode}); }
TEST_F(DeepRelease, FunctionChainThroughClosureContexts) { ExpectReleasesDeep({InClosure}); }

TEST_F(DeepRelease, MixedChain) {
  ExpectReleasesDeep({InArray, InTuple, InMap, InList, InDict, InNode, InClosure});
}

// Deleters that run code which itself makes and releases objects, at every depth: each
// finalize hook runs exactly once and nothing is left behind.
TEST_F(DeepRelease, DeletersThatReleaseOtherObjectsWhileTheChainDies) {
  g_finalized = 0;
  ffk_object* head = Chain(kDepth / 10, {InFinalizingNode, InList});
  ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  ReleaseAll(head);
  EXPECT_EQ(g_finalized.load(), kDepth / 20);
}

// Every node also has a weak holder: each dies through DESTROY (its weak holders can
// still read the header), and its memory is freed only when the last weak holder lets go.
TEST_F(DeepRelease, ChainWithAWeakHolderOnEveryNode) {
  std::vector<ffk_object*> weak;
  weak.reserve((size_t)kDepth);
  ffk_object* head = Chain(kDepth, {InList, InNode, InArray}, [&](ffk_object* node) {
    ffk_weak_retain(node);
    weak.push_back(node);
  });
  ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  EXPECT_EQ(ffk_object_weak_count(head), 1u);
  ffk_object_release(head);
  // Every node is destroyed (its parent's deleter dropped its strong count to 0, checked
  // below) but its memory stays for the weak holder: the counters count frees.
  EXPECT_EQ(ffk_debug_live_objects(-1), kDepth);
  size_t locked = 0;
  for (ffk_object* w : weak) {
    ffk_object* strong = ffk_weak_lock(w);
    if (strong != nullptr) {
      ++locked;
      ffk_object_release(strong);
    }
    EXPECT_EQ(ffk_object_use_count(w), 0u);
    ffk_weak_release(w);
  }
  EXPECT_EQ(locked, 0u);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

// Only the holder of the head dies with it: a chain whose middle someone else holds is
// released down to that node, which stays whole.
TEST_F(DeepRelease, StopsAtANodeHeldElsewhere) {
  ffk_object* kept = nullptr;
  int64_t n = 0;
  ffk_object* head = Chain(kDepth, {InList}, [&](ffk_object* node) {
    if (++n == kDepth / 2) {
      ffk_object_retain(node);
      kept = node;
    }
  });
  ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  ffk_object_release(head);
  EXPECT_EQ(ffk_debug_live_objects(-1), kDepth / 2);
  EXPECT_EQ(ffk_object_use_count(kept), 1u);
  ReleaseAll(kept);
}

TEST_F(DeepRelease, OnAThreadWithASmallStack) {
  ffk_object* head = Chain(kDepth, {InList, InNode, InClosure});
  ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  RunOnThread(kSmallStack, ReleaseObject, head);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

// A chain whose links are wide: past DIE_STACK_MAX each node holds many dying leaves, so
// the queue holds a whole node's worth at once. Still a small stack.
TEST_F(DeepRelease, WideNodesOnAThreadWithASmallStack) {
  constexpr int kWidth = 1000;
  ffk_object* head = nullptr;
  for (int64_t i = 0; i < kDepth / kWidth; ++i) {
    std::vector<ffk_any> items((size_t)kWidth + 1);
    items[0] = Steal(head);
    for (int j = 1; j <= kWidth; ++j) items[(size_t)j] = ffk_any_object_steal((ffk_object*)ffk_string_new("leaf", 4));
    head = (ffk_object*)ffk_array_new_steal(items.data(), kWidth + 1);
    ASSERT_NE(head, nullptr) << ffk::test::FetchError();
  }
  RunOnThread(kSmallStack, ReleaseObject, head);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

// Several threads release their own chains at once: each thread's depth count and queue
// are its own (a data race here would show under TSan).
TEST_F(DeepRelease, ManyThreadsAtOnce) {
  std::vector<ffk_object*> heads;
  for (int t = 0; t < kThreads; ++t) {
    std::vector<Wrap> kinds = {InList, InNode, InArray, InDict};
    std::rotate(kinds.begin(), kinds.begin() + t % 4, kinds.end());
    heads.push_back(Chain(kDepth / kThreads, kinds));
    ASSERT_NE(heads.back(), nullptr) << ffk::test::FetchError();
  }
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (ffk_object* head : heads)
    threads.emplace_back([head, &ready] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      ffk_object_release(head);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

// The shared part of two chains dies with the last one released, on whichever thread.
TEST_F(DeepRelease, SharedTailDiesWithTheLastHolderOnAnotherThread) {
  ffk_object* tail = Chain(kDepth / 2, {InList});
  ASSERT_NE(tail, nullptr) << ffk::test::FetchError();
  ffk_object_retain(tail);
  ffk_object* a = InArray(tail);
  ffk_object* b = InNode(tail);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ffk_object_release(a);
  EXPECT_EQ(ffk_object_use_count(tail), 1u);
  RunOnThread(kSmallStack, ReleaseObject, b);
  EXPECT_EQ(ffk_debug_live_objects(-1), 0);
}

}  // namespace
