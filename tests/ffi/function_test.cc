// ffikit/function.h: Function objects, the calling convention, errors across calls,
// and ffk_args_unpack.
// The convention tests below are of the checked form (function.h), the exported symbol;
// the inline form, which plain C calls compile to, has its own tests (InlineForm*).
#define FFK_CHECKED_CALLS
#include <ffikit/ffikit.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Function : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

ffk_object* Obj(ffk_function* f) { return reinterpret_cast<ffk_object*>(f); }

// self is an int64_t added to the first argument.
int AddContext(void* self, const ffk_any* args, int32_t nargs, ffk_any* result) {
  int64_t x;
  if (ffk_args_unpack("add", args, nargs, "i", &x) != 0) return -1;
  *result = ffk_any_int(x + *static_cast<int64_t*>(self));
  return 0;
}

void DeleteInt(void* p) { delete static_cast<int64_t*>(p); }

int g_deleted = 0;
void CountDelete(void*) { ++g_deleted; }

TEST_F(Function, ClosureSeesItsContextAndDeletesItOnce) {
  g_deleted = 0;
  ffk_function* f = ffk_function_new("add_ten", AddContext, new int64_t(10), DeleteInt);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(ffk_function_name(f), "add_ten");
  ffk_any arg = ffk_any_int(5);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 15);
  ffk_object_release(Obj(f));

  ffk_function* g = ffk_function_new(nullptr, AddContext, nullptr, CountDelete);
  EXPECT_STREQ(ffk_function_name(g), "<anonymous>");
  ffk_object_retain(Obj(g));
  ffk_object_release(Obj(g));
  EXPECT_EQ(g_deleted, 0);
  ffk_object_release(Obj(g));
  EXPECT_EQ(g_deleted, 1);
}

TEST_F(Function, FlagsAreSetWhileUnsharedAndReadBack) {
  ffk_function* f = ffk_function_new("quick", AddContext, new int64_t(1), DeleteInt);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ffk_function_flags(f), 0u);  // none by default
  ASSERT_EQ(ffk_function_set_flags(f, FFK_FUNCTION_QUICK), 0) << FetchError();
  EXPECT_EQ(ffk_function_flags(f), FFK_FUNCTION_QUICK);
  ffk_any arg = ffk_any_int(2);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);  // calls are unchanged
  EXPECT_EQ(r.v.v_int, 3);

  // A bit this version does not know: refused, naming the Function and the bits; unchanged.
  EXPECT_EQ(ffk_function_set_flags(f, FFK_FUNCTION_QUICK | 0x80u), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot set the flags of Function `quick`: unknown flag bits 0x80");
  EXPECT_EQ(ffk_function_flags(f), FFK_FUNCTION_QUICK);

  // Shared (a second reference, as registering takes): fixed, as the doc is.
  ffk_object_retain(Obj(f));
  EXPECT_EQ(ffk_function_set_flags(f, 0), -1);
  EXPECT_EQ(FetchError(),
            "ValueError: cannot set the flags of Function `quick`: it is shared (registered or held elsewhere); "
            "set them before sharing it");
  EXPECT_EQ(ffk_function_set_flags(f, FFK_FUNCTION_QUICK), 0);  // no change asked: fine
  EXPECT_EQ(ffk_function_flags(f), FFK_FUNCTION_QUICK);
  ffk_object_release(Obj(f));
  ASSERT_EQ(ffk_function_set_flags(f, 0), 0) << FetchError();  // unique again
  EXPECT_EQ(ffk_function_flags(f), 0u);
  ffk_object_release(Obj(f));

  EXPECT_EQ(ffk_function_set_flags(nullptr, FFK_FUNCTION_QUICK), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot set the flags of a Function: the Function is NULL");
  EXPECT_EQ(ffk_function_flags(nullptr), 0u);
}

TEST_F(Function, FailedCreationStillDeletesTheContext) {
  g_deleted = 0;
  EXPECT_EQ(ffk_function_new("f", nullptr, nullptr, CountDelete), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_new: the call pointer of `f` is NULL");
  EXPECT_EQ(g_deleted, 1);
  g_deleted = 0;
  ffk::test::SweepAllocationFailures([] {
    int before = g_deleted;
    ffk_function* f = ffk_function_new("f", AddContext, nullptr, CountDelete);
    if (f == nullptr) {
      EXPECT_EQ(g_deleted, before + 1);
      return false;
    }
    ffk_object_release(Obj(f));
    return true;
  });
}

int ReturnsMinusOneSilently(void*, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_int(3);  // a callee that also leaves a value behind
  return -1;
}
int RaisesButReturnsZero(void*, const ffk_any*, int32_t, ffk_any* result) {
  ffk_error_set(FFK_ERR_VALUE, "stray");
  *result = ffk_any_int(1);
  return 0;
}

TEST_F(Function, TheConventionIsEnforcedAroundTheCallee) {
  ffk_function* silent = ffk_function_new("silent", ReturnsMinusOneSilently, nullptr, nullptr);
  OwnedAny r;
  EXPECT_EQ(ffk_function_call(silent, nullptr, 0, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: Function `silent` returned -1 without raising an error");
  ffk_function* stray = ffk_function_new("stray", RaisesButReturnsZero, nullptr, nullptr);
  EXPECT_EQ(ffk_function_call(stray, nullptr, 0, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 1);
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_function_call(nullptr, nullptr, 0, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call: the function is NULL");
  EXPECT_EQ(ffk_function_call(silent, nullptr, 2, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call: 2 arguments at (nil) for `silent`");
  ffk_object_release(Obj(silent));
  ffk_object_release(Obj(stray));
}

TEST_F(Function, InlineFormGivesTheCheckedFormsResultsAndErrors) {
  ffk_function* silent = ffk_function_new("silent", ReturnsMinusOneSilently, nullptr, nullptr);
  ffk_function* sum = ffk_function_new("sum", [](void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
    int64_t s = 0;
    for (int32_t i = 0; i < nargs; ++i) {
      if (args[i].type_index != FFK_TYPE_INT) return ffk_error_set(FFK_ERR_TYPE, "argument #%d is not an int", (int)i);
      s += args[i].v_int;
    }
    *result = ffk_any_int(s);
    return 0;
  }, nullptr, nullptr);
  OwnedAny r;
  r.v = ffk_any_int(99);  // not None: the inline form sets it to None first, as the checked one
  ffk_any args[2] = {ffk_any_int(2), ffk_any_int(40)};
  ASSERT_EQ(ffk_function_call_inline(sum, args, 2, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 42);
  args[1] = ffk_any_float(1.5);
  EXPECT_EQ(ffk_function_call_inline(sum, args, 2, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  // The callee's error, with the frame naming the Function appended, as the checked form.
  ffk_error* err = ffk_error_fetch();
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(ffk_error_message(err), "argument #1 is not an int");
  EXPECT_NE(std::string(ffk_error_backtrace(err)).find("in call to Function `sum`"), std::string::npos);
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
  EXPECT_EQ(ffk_function_call_inline(silent, nullptr, 0, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: Function `silent` returned -1 without raising an error");
  // Bad arguments reach the checked form's messages, never the callee.
  EXPECT_EQ(ffk_function_call_inline(nullptr, nullptr, 0, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call: the function is NULL");
  EXPECT_EQ(ffk_function_call_inline(sum, nullptr, 2, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call: 2 arguments at (nil) for `sum`");
  EXPECT_EQ(ffk_function_call_inline(sum, args, -1, &r.v), -1);
  std::string negative = FetchError();
  EXPECT_EQ(negative.rfind("ValueError: ffk_function_call: -1 arguments at 0x", 0), 0u) << negative;
  ffk_object_release(Obj(silent));
  ffk_object_release(Obj(sum));
}

TEST_F(Function, InlineFormOfATypedFunctionChecksAndConverts) {
  ffk_function* add = ffk_function_new_typed("add", "(int, int) -> int", [](void*, const ffk_any* args, int32_t, ffk_any* result) {
    *result = ffk_any_int(args[0].v_int + args[1].v_int);
    return 0;
  }, nullptr, nullptr);
  ffk_function* stray = ffk_function_new_typed("stray_typed", "() -> int", RaisesButReturnsZero, nullptr, nullptr);
  OwnedAny r;
  ffk_any args[2] = {ffk_any_int(1), ffk_any_bool(true)};  // a bool where an int belongs: converted
  ASSERT_EQ(ffk_function_call_inline(add, args, 2, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 2);
  args[1] = ffk_any_float(0.5);
  EXPECT_EQ(ffk_function_call_inline(add, args, 2, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #1 when calling: `add(0: int, 1: int) -> int`. Expected `int` but got `float`");
  EXPECT_EQ(ffk_function_call_inline(add, args, 1, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched number of arguments when calling: `add(0: int, 1: int) -> int`. Expected 2 but got 1");
  // A typed Function keeps both error-state rules in the inline form: a stale error is
  // dropped before the call, a stray one after it.
  ffk_error_set(FFK_ERR_VALUE, "stale");
  args[1] = ffk_any_int(5);
  ASSERT_EQ(ffk_function_call_inline(add, args, 2, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 6);
  EXPECT_FALSE(ffk_error_occurred());
  ASSERT_EQ(ffk_function_call_inline(stray, nullptr, 0, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 1);
  EXPECT_FALSE(ffk_error_occurred());
  ffk_object_release(Obj(add));
  ffk_object_release(Obj(stray));
}

TEST_F(Function, InlineFormTrustsAnUntypedCallee) {
  // The documented difference: a stray error after 0 stays pending for the caller.
  ffk_function* stray = ffk_function_new("stray", RaisesButReturnsZero, nullptr, nullptr);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call_inline(stray, nullptr, 0, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 1);
  EXPECT_EQ(FetchError(), "ValueError: stray");
  ffk_object_release(Obj(stray));
}

// Records whether an error was pending when the callee started; raises when its context is non-null.
bool g_pending_at_entry = false;
int RecordsPendingAtEntry(void* self, const ffk_any*, int32_t, ffk_any* result) {
  g_pending_at_entry = ffk_error_occurred();
  if (self != nullptr) return ffk_error_set(FFK_ERR_KEY, "the callee's own");
  *result = ffk_any_int(2);
  return 0;
}

TEST_F(Function, AnErrorPendingBeforeTheCallIsDroppedNotBlamedOnTheCallee) {
  ffk_function* ok = ffk_function_new("ok", RecordsPendingAtEntry, nullptr, nullptr);
  ffk_function* typed = ffk_function_new_typed("typed", "(Optional<int>) -> int", RecordsPendingAtEntry, nullptr,
                                               nullptr);
  ffk_function* fails = ffk_function_new("fails", RecordsPendingAtEntry, &g_pending_at_entry, nullptr);
  ASSERT_NE(ok, nullptr);
  ASSERT_NE(typed, nullptr);
  ASSERT_NE(fails, nullptr);
  OwnedAny r;
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(ok, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(g_pending_at_entry) << "the callee starts with an empty slot";
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(r.v.v_int, 2);
  ffk_any arg = ffk_any_bool(true);
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(typed, &arg, 1, &r.v), 0) << FetchError();
  EXPECT_FALSE(g_pending_at_entry);
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(fails, nullptr, 0, &r.v), -1);
  EXPECT_FALSE(g_pending_at_entry);
  EXPECT_EQ(FetchError(), "KeyError: the callee's own");
  ffk_object_release(Obj(ok));
  ffk_object_release(Obj(typed));
  ffk_object_release(Obj(fails));
}

// ---- The typed fast path (plain signatures) and its fallback --------------------------

// Records the type indices it was called with; returns what its context says.
enum class TypedReturn { kSum, kSumAsFloat, kStr, kMinusOneSilently, kRaise, kStrayError };
int32_t g_seen_types[4];
int RecordTypes(void* self, const ffk_any* args, int32_t nargs, ffk_any* result) {
  for (int32_t i = 0; i < nargs && i < 4; ++i) g_seen_types[i] = args[i].type_index;
  int64_t sum = 0;
  for (int32_t i = 0; i < nargs; ++i) sum += args[i].type_index == FFK_TYPE_FLOAT ? (int64_t)args[i].v_float : args[i].v_int;
  switch (*static_cast<TypedReturn*>(self)) {
    case TypedReturn::kSum: *result = ffk_any_int(sum); return 0;
    case TypedReturn::kSumAsFloat: *result = ffk_any_float((double)sum); return 0;
    case TypedReturn::kStr: {
      static const char kLong[] = "a str long enough to be a String object, not inline";
      return ffk_any_str(kLong, sizeof kLong - 1, result);
    }
    case TypedReturn::kMinusOneSilently: *result = ffk_any_int(sum); return -1;
    case TypedReturn::kRaise: return ffk_error_set(FFK_ERR_KEY, "typed callee failed");
    case TypedReturn::kStrayError:
      ffk_error_set(FFK_ERR_VALUE, "stray");
      *result = ffk_any_int(sum);
      return 0;
  }
  return -1;
}

TEST_F(Function, PlainTypedArgumentsPassUnchangedAndOthersStillConvert) {
  TypedReturn mode = TypedReturn::kSum;
  // Plain: every parameter is a non-object type or Any.
  ffk_function* f = ffk_function_new_typed("plain", "(int, float, Any) -> int", RecordTypes, &mode, nullptr);
  ASSERT_NE(f, nullptr);
  OwnedAny r;
  ffk_any args[3] = {ffk_any_int(1), ffk_any_float(2.0), ffk_any_bool(true)};
  ASSERT_EQ(ffk_function_call(f, args, 3, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.type_index, FFK_TYPE_INT);
  EXPECT_EQ(r.v.v_int, 4);
  EXPECT_EQ(g_seen_types[0], FFK_TYPE_INT);
  EXPECT_EQ(g_seen_types[1], FFK_TYPE_FLOAT);
  EXPECT_EQ(g_seen_types[2], FFK_TYPE_BOOL) << "Any passes everything unchanged";
  // An int for `float` does not pass as is: the fallback converts it (the callee sees a float).
  args[1] = ffk_any_int(2);
  ASSERT_EQ(ffk_function_call(f, args, 3, &r.v), 0) << FetchError();
  EXPECT_EQ(g_seen_types[1], FFK_TYPE_FLOAT);
  EXPECT_EQ(r.v.v_int, 4);
  // A mismatch the fallback cannot convert names the call and the argument.
  ASSERT_EQ(ffk_any_str("one", 3, &args[0]), 0);  // inline: owns nothing
  EXPECT_EQ(ffk_function_call(f, args, 3, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #0 when calling: `plain(0: int, 1: float, 2: Any) -> int`. "
            "Expected `int` but got `str`");
  // The arity is checked before the fast path reads any argument.
  args[0] = ffk_any_int(1);
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched number of arguments when calling: `plain(0: int, 1: float, 2: Any) -> int`. "
            "Expected 3 but got 2");
  // The result: a float for `int` is refused; an int passes.
  mode = TypedReturn::kSumAsFloat;
  EXPECT_EQ(ffk_function_call(f, args, 3, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on the return value when calling: `plain(0: int, 1: float, 2: Any) -> int`. "
            "Expected `int` but got `float`");
  ffk_object_release(Obj(f));

  // A result converted on the fast path: an int returned for `float`.
  mode = TypedReturn::kSum;
  ffk_function* g = ffk_function_new_typed("to_float", "(int, int) -> float", RecordTypes, &mode, nullptr);
  ASSERT_NE(g, nullptr);
  ffk_any two[2] = {ffk_any_int(3), ffk_any_int(4)};
  ASSERT_EQ(ffk_function_call(g, two, 2, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.type_index, FFK_TYPE_FLOAT);
  EXPECT_EQ(r.v.v_float, 7.0);
  // A str result (an object the callee owns) refused for `float` is released, not leaked
  // (the fixture checks no object is left alive).
  mode = TypedReturn::kStr;
  EXPECT_EQ(ffk_function_call(g, two, 2, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on the return value when calling: `to_float(0: int, 1: int) -> float`. "
            "Expected `float` but got `str`");
  ffk_object_release(Obj(g));

  // Not plain (an object parameter): always the full conversion, same results.
  mode = TypedReturn::kSum;
  ffk_function* h = ffk_function_new_typed("objects", "(int, Optional<int>) -> int", RecordTypes, &mode, nullptr);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(ffk_function_call(h, two, 2, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.v_int, 7);
  ffk_object_release(Obj(h));
}

TEST_F(Function, TheConventionHoldsOnTheTypedFastPath) {
  TypedReturn mode = TypedReturn::kMinusOneSilently;
  ffk_function* f = ffk_function_new_typed("typed_fast", "(int, int) -> int", RecordTypes, &mode, nullptr);
  ASSERT_NE(f, nullptr);
  ffk_any args[2] = {ffk_any_int(1), ffk_any_int(2)};
  OwnedAny r;
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), "RuntimeError: Function `typed_fast` returned -1 without raising an error");
  mode = TypedReturn::kRaise;
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  EXPECT_TRUE(PendingError(FFK_ERR_KEY, {"typed callee failed"}));
  mode = TypedReturn::kStrayError;
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 3);
  EXPECT_FALSE(ffk_error_occurred());
  mode = TypedReturn::kSum;
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(f, args, 2, &r.v), 0);
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(r.v.v_int, 3);
  ffk_object_release(Obj(f));
}

// The call path reads a process-wide count of pending errors before it reads its own slot
// (ffi/src/internal.h): an error pending in another thread must neither be seen nor hide
// this thread's own.
TEST_F(Function, AnErrorPendingInAnotherThreadIsNeitherSeenNorHidesThisThreads) {
  ffk_function* ok = ffk_function_new("ok", RecordsPendingAtEntry, nullptr, nullptr);
  ffk_function* silent = ffk_function_new("silent", ReturnsMinusOneSilently, nullptr, nullptr);
  ffk_function* stray = ffk_function_new("stray", RaisesButReturnsZero, nullptr, nullptr);
  ASSERT_NE(ok, nullptr);
  std::atomic<int> stage{0};
  std::thread other([&] {
    ffk_error_set(FFK_ERR_VALUE, "the other thread's");
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    EXPECT_TRUE(PendingError(FFK_ERR_VALUE, {"the other thread's"})) << "untouched by this thread's calls";
    ffk_error_set(FFK_ERR_VALUE, "left at thread exit");  // released by the thread-exit hook
  });
  while (stage.load() != 1) std::this_thread::yield();
  OwnedAny r;
  EXPECT_EQ(ffk_function_call(ok, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(g_pending_at_entry);
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_function_call(silent, nullptr, 0, &r.v), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: Function `silent` returned -1 without raising an error");
  EXPECT_EQ(ffk_function_call(stray, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(ffk_error_occurred());
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(ok, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(g_pending_at_entry);
  EXPECT_FALSE(ffk_error_occurred());
  stage = 2;
  other.join();
  // With every other slot empty again, the same guarantees.
  ffk_error_set(FFK_ERR_VALUE, "left over by the caller");
  EXPECT_EQ(ffk_function_call(ok, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(g_pending_at_entry);
  EXPECT_EQ(ffk_function_call(stray, nullptr, 0, &r.v), 0);
  EXPECT_FALSE(ffk_error_occurred());
  ffk_object_release(Obj(ok));
  ffk_object_release(Obj(silent));
  ffk_object_release(Obj(stray));
}

// Many threads raising, fetching and calling at once: every thread's calls see exactly its
// own errors (the count is shared, the slots are not). Run under TSan too.
std::atomic<int> g_dirty_entries{0};
int CountsDirtyEntries(void* self, const ffk_any*, int32_t, ffk_any* result) {
  if (ffk_error_occurred()) ++g_dirty_entries;
  if (self != nullptr) return ffk_error_set(FFK_ERR_KEY, "the callee's own");
  *result = ffk_any_int(2);
  return 0;
}

TEST_F(Function, ConcurrentRaisersKeepEveryThreadsConventionExact) {
  static int raise = 1;
  g_dirty_entries = 0;
  ffk_function* ok = ffk_function_new("ok", CountsDirtyEntries, nullptr, nullptr);
  ffk_function* fails = ffk_function_new("fails", CountsDirtyEntries, &raise, nullptr);
  ASSERT_NE(ok, nullptr);
  ASSERT_NE(fails, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        ffk_any r = ffk_any_none();
        if ((i + t) % 3 == 0) ffk_error_set(FFK_ERR_VALUE, "stale %d", i);
        if (ffk_function_call((i & 1) ? fails : ok, nullptr, 0, &r) != ((i & 1) ? -1 : 0)) ++wrong;
        if ((i & 1) != ffk_error_occurred()) ++wrong;
        ffk_error_clear();
        ffk_any_release(&r);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(g_dirty_entries.load(), 0) << "a callee started with an error pending";
  EXPECT_FALSE(ffk_error_occurred());
  ffk_object_release(Obj(ok));
  ffk_object_release(Obj(fails));
}

// A chain: outer(f, x) calls f(x); inner raises from a named, non-inlined function.
ffk_error* g_raised = nullptr;

__attribute__((noinline)) int raise_deep_inside(const char* msg) {
  ffk_error_set(FFK_ERR_KEY, "%s", msg);
  g_raised = ffk_error_peek_borrow();
  return -1;
}

int Inner(void*, const ffk_any*, int32_t, ffk_any*) { return raise_deep_inside("deep trouble"); }

int Outer(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  ffk_function* f;
  if (ffk_args_unpack("outer", args, nargs, "F|a", &f, nullptr) != 0) return -1;
  return ffk_function_call(f, args + 1, nargs - 1, result);
}

TEST_F(Function, AnErrorCrossesEveryHopAsTheSameObject) {
  ffk_function* inner = ffk_function_new("inner", Inner, nullptr, nullptr);
  ffk_function* outer = ffk_function_new("outer", Outer, nullptr, nullptr);
  ffk_any args[2] = {ffk_any_object(Obj(outer)), ffk_any_object(Obj(inner))};
  OwnedAny r;
  // outer(outer, inner): outer -> outer -> inner.
  ASSERT_EQ(ffk_function_call(outer, args, 2, &r.v), -1);
  ffk_error* err = ffk_error_fetch();
  EXPECT_EQ(err, g_raised) << "the caller fetches the very Error the callee raised";
  EXPECT_STREQ(ffk_error_kind(err), "KeyError");
  EXPECT_STREQ(ffk_error_message(err), "deep trouble");
  std::string bt = ffk_error_backtrace(err);
  EXPECT_NE(bt.find("raise_deep_inside"), std::string::npos) << bt;
  size_t in_inner = bt.find("in call to Function `inner`");
  size_t in_outer = bt.find("in call to Function `outer`");
  ASSERT_NE(in_inner, std::string::npos) << bt;
  ASSERT_NE(in_outer, std::string::npos) << bt;
  EXPECT_LT(in_inner, in_outer) << "innermost hop first";
  EXPECT_NE(bt.find("in call to Function `outer`", in_outer + 1), std::string::npos) << "outer is crossed twice";
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
  ffk_any_release(&args[0]);
  ffk_any_release(&args[1]);
  ffk_object_release(Obj(inner));
  ffk_object_release(Obj(outer));
}

TEST_F(Function, UnpackConvertsEveryLetter) {
  ffk_function* f = ffk_function_new("f", AddContext, nullptr, nullptr);
  OwnedAny s;
  ASSERT_EQ(ffk_any_str("a string longer than seven", 26, &s.v), 0);
  ffk_any args[10] = {ffk_any_int(7),        ffk_any_int(2),          ffk_any_bool(true),
                      ffk_any_raw_str("cuda:1"), ffk_any_raw_str("float16"), s.v,
                      ffk_any_raw_str("short"),  ffk_any_object(Obj(f)), ffk_any_object(Obj(f)),
                      ffk_any_none()};
  int64_t i;
  double x;
  bool b;
  DLDevice dev;
  DLDataType dt;
  const char *longs, *shorts;
  ffk_object* o;
  ffk_function* fn;
  const ffk_any* any;
  ASSERT_EQ(ffk_args_unpack("f", args, 10, "ifbDTssoFa", &i, &x, &b, &dev, &dt, &longs, &shorts, &o, &fn, &any), 0);
  EXPECT_EQ(i, 7);
  EXPECT_EQ(x, 2.0);
  EXPECT_TRUE(b);
  EXPECT_EQ(dev.device_type, kDLCUDA);
  EXPECT_EQ(dev.device_id, 1);
  EXPECT_EQ(dt.code, kDLFloat);
  EXPECT_EQ(dt.bits, 16);
  EXPECT_STREQ(longs, "a string longer than seven");
  EXPECT_STREQ(shorts, "short");
  EXPECT_EQ(o, Obj(f));
  EXPECT_EQ(fn, f);
  EXPECT_EQ(any, &args[9]);
  EXPECT_EQ(ffk_object_use_count(Obj(f)), 3u) << "borrowed outputs take no reference";
  ffk_any_release(&args[7]);
  ffk_any_release(&args[8]);
  ffk_object_release(Obj(f));
}

TEST_F(Function, UnpackNamesTheFunctionThePositionAndTheTypes) {
  ffk_any args[3] = {ffk_any_int(1), ffk_any_raw_str("x"), ffk_any_int(3)};
  int64_t a, c = -1;
  const char* s;
  EXPECT_EQ(ffk_args_unpack("testing.f", args, 2, "ii", &a, &c), -1);
  EXPECT_EQ(FetchError(), "TypeError: `testing.f`: argument #1 expected int but got str");
  EXPECT_EQ(ffk_args_unpack("testing.f", args, 3, "is", &a, &s), -1);
  EXPECT_EQ(FetchError(), "TypeError: `testing.f` takes 2 arguments but got 3");
  EXPECT_EQ(ffk_args_unpack("testing.f", args, 0, "i", &a), -1);
  EXPECT_EQ(FetchError(), "TypeError: `testing.f` takes 1 argument but got 0");
  EXPECT_EQ(ffk_args_unpack("testing.f", args, 0, "i|si", &a, &s, &c), -1);
  EXPECT_EQ(FetchError(), "TypeError: `testing.f` takes 1 to 3 arguments but got 0");
  ASSERT_EQ(ffk_args_unpack("testing.f", args, 2, "i|si", &a, &s, &c), 0);
  EXPECT_EQ(a, 1);
  EXPECT_STREQ(s, "x");
  EXPECT_EQ(c, -1) << "an optional argument not given leaves its output alone";
  EXPECT_EQ(ffk_args_unpack("testing.f", args, 1, "q", &a), -1);
  EXPECT_EQ(FetchError(), "ValueError: `testing.f`: unknown letter 'q' in the argument format");
  ffk_any dev = ffk_any_raw_str("tpu:0");
  DLDevice d;
  EXPECT_EQ(ffk_args_unpack("g", &dev, 1, "D", &d), -1);
  std::string e = FetchError();
  EXPECT_EQ(e.rfind("ValueError: `g`: argument #0 ", 0), 0u) << e;
}

}  // namespace
