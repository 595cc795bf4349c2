// ffikit/error.h: the thread-local slot, error objects, backtraces and appended frames.
#include <ffikit/ffikit.h>

#include <string>
#include <thread>

#include "tests/support/ffk_test.h"

namespace {

class Error : public ffk::test::Test {};
using ffk::test::FetchError;

void release(ffk_error* err) { ffk_object_release(reinterpret_cast<ffk_object*>(err)); }

// A named, non-inlined raiser: its name must appear in the backtrace.
__attribute__((noinline)) int raise_from_named_function(int x) {
  return ffk_error_set(FFK_ERR_INDEX, "index %d out of range", x);
}

TEST_F(Error, SetReturnsMinusOneAndFillsTheSlot) {
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_error_set(FFK_ERR_VALUE, "bad value %d in \"%s\"", 7, "x"), -1);
  EXPECT_TRUE(ffk_error_occurred());
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  EXPECT_FALSE(ffk_error_matches("TypeError"));
  ffk_error* peek = ffk_error_peek_borrow();
  ASSERT_NE(peek, nullptr);
  EXPECT_STREQ(ffk_error_message(peek), "bad value 7 in \"x\"");
  ffk_error* err = ffk_error_fetch();
  EXPECT_EQ(err, peek);
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_error_fetch(), nullptr);
  EXPECT_STREQ(ffk_error_kind(err), "ValueError");
  EXPECT_EQ(ffk_object_use_count(reinterpret_cast<ffk_object*>(err)), 1u);
  EXPECT_EQ(reinterpret_cast<ffk_object*>(err)->type_index, FFK_TYPE_ERROR);
  release(err);
}

TEST_F(Error, RaisingReplacesAndReleasesThePendingError) {
  ffk_error_set(FFK_ERR_VALUE, "first");
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ERROR), 1);
  ffk_error_set(FFK_ERR_TYPE, "second");
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ERROR), 1);
  EXPECT_EQ(FetchError(), "TypeError: second");
}

TEST_F(Error, RestoreStealsAndClearDrops) {
  ffk_error_set(FFK_ERR_KEY, "k");
  ffk_error* err = ffk_error_fetch();
  ffk_error_restore(err);  // the slot owns it again
  EXPECT_EQ(ffk_error_peek_borrow(), err);
  ffk_error_clear();
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ERROR), 0);
  ffk_error_restore(nullptr);
  EXPECT_FALSE(ffk_error_occurred());
}

TEST_F(Error, NullKindIsRuntimeErrorAndUserKindsAreKeptVerbatim) {
  ffk_error_set(nullptr, "no kind");
  EXPECT_EQ(FetchError(), "RuntimeError: no kind");
  ffk_error_set("mylib.ParseError", "line %d", 3);
  EXPECT_EQ(FetchError(), "mylib.ParseError: line 3");
}

TEST_F(Error, LongMessagesAreKeptWhole) {
  std::string big(5000, 'm');
  ffk_error_set(FFK_ERR_VALUE, "%s", big.c_str());
  EXPECT_EQ(FetchError(), "ValueError: " + big);
}

TEST_F(Error, BacktraceStartsAtTheRaisingFunctionWithFileAndLine) {
  raise_from_named_function(9);
  ffk_error* err = ffk_error_fetch();
  std::string bt = ffk_error_backtrace(err);
  EXPECT_EQ(bt.rfind("  at raise_from_named_function (tests/ffi/error_test.cc:", 0), 0u) << bt;
  EXPECT_NE(bt.find("\n  at "), std::string::npos) << "native frames follow the raise location:\n" << bt;
  EXPECT_EQ(bt.find("ffk_error_set"), std::string::npos) << "the raising machinery is not shown:\n" << bt;
  release(err);
}

TEST_F(Error, AppendedFramesFollowTheNativeOnesInOrder) {
  raise_from_named_function(1);
  ffk_error* err = ffk_error_peek_borrow();
  ASSERT_EQ(ffk_error_append_frame(err, "  File \"app.py\", line 3, in main"), 0);
  ASSERT_EQ(ffk_error_append_frame(err, "  at rust::caller (lib.rs:10)\n"), 0);
  std::string bt = ffk_error_backtrace(err);
  size_t py = bt.find("  File \"app.py\", line 3, in main\n");
  size_t rs = bt.find("  at rust::caller (lib.rs:10)\n");
  ASSERT_NE(py, std::string::npos) << bt;
  ASSERT_NE(rs, std::string::npos) << bt;
  EXPECT_LT(bt.find("raise_from_named_function"), py);
  EXPECT_LT(py, rs);
  EXPECT_EQ(bt.substr(bt.size() - 1), "\n");
  EXPECT_EQ(ffk_error_append_frame(nullptr, "x"), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_error_append_frame: err is NULL");
}

TEST_F(Error, FramesAreTheLocationAndTheAppendedFramesWithoutNativeOnes) {
  raise_from_named_function(2);
  ffk_error* err = ffk_error_peek_borrow();
  ASSERT_EQ(ffk_error_append_frame(err, "  in call to Function `f`"), 0);
  size_t len = 0;
  ASSERT_EQ(ffk_error_frames(err, nullptr, 0, &len), 0);
  std::string text(len + 1, '?');
  ASSERT_EQ(ffk_error_frames(err, &text[0], text.size(), &len), 0);
  text.resize(len);
  EXPECT_EQ(text.rfind("  at raise_from_named_function (", 0), 0u) << text;
  EXPECT_NE(text.find("error_test.cc:"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.find('\n') + 1), "  in call to Function `f`\n");
  // The full backtrace has the same lines, with the native frames between them.
  std::string bt = ffk_error_backtrace(err);
  EXPECT_EQ(bt.rfind(text.substr(0, text.find('\n')), 0), 0u);
  EXPECT_GT(bt.size(), text.size());
  // A small buffer gets a NUL-terminated prefix and the full length.
  char small[8];
  ASSERT_EQ(ffk_error_frames(err, small, sizeof small, &len), 0);
  EXPECT_EQ(std::string(small), text.substr(0, 7));
  EXPECT_EQ(len, text.size());
  ffk_error_clear();
  ffk_error* bare = ffk_error_new(FFK_ERR_VALUE, "m");
  ASSERT_EQ(ffk_error_frames(bare, small, sizeof small, &len), 0);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(std::string(small), "");
  release(bare);
  EXPECT_EQ(ffk_error_frames(nullptr, nullptr, 0, &len), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_error_frames: err is NULL");
}

TEST_F(Error, FailedAppendLeavesTheBacktraceUnchanged) {
  ffk_error* err = ffk_error_new(FFK_ERR_RUNTIME, "m");
  ASSERT_EQ(ffk_error_append_frame(err, "one"), 0);
  std::string before = ffk_error_backtrace(err);
  ffk::test::SweepAllocationFailures([&] { return ffk_error_append_frame(err, std::string(500, 'f').c_str()) == 0; },
                                     [&] { EXPECT_EQ(ffk_error_backtrace(err), before); });
  EXPECT_EQ(std::string(ffk_error_backtrace(err)), before + std::string(500, 'f') + "\n");
  release(err);
}

// error.c appends with the non-raising buffer (buf_core.c, below it) and raises what that
// reports itself: the same MemoryError as the raising appends everyone else calls (buf.c).
TEST_F(Error, FailedAppendRaisesTheBuffersMemoryError) {
  ffk_error* err = ffk_error_new(FFK_ERR_RUNTIME, "m");
  ffk_debug_fail_allocation(1);
  EXPECT_EQ(ffk_error_append_frame(err, std::string(500, 'f').c_str()), -1);
  ffk_debug_fail_allocation(0);
  EXPECT_EQ(FetchError(), "MemoryError: out of memory reallocating to 512 bytes");
  release(err);
}

TEST_F(Error, BacktraceTextStaysValidAfterLaterAppends) {
  ffk_error* err = ffk_error_new(FFK_ERR_RUNTIME, "m");
  ASSERT_EQ(ffk_error_append_frame(err, "one"), 0);
  const char* first = ffk_error_backtrace(err);
  const std::string first_copy = first;
  EXPECT_EQ(ffk_error_backtrace(err), first);  // no append in between: the same text
  ASSERT_EQ(ffk_error_append_frame(err, "two"), 0);
  const char* second = ffk_error_backtrace(err);
  EXPECT_NE(second, first);
  EXPECT_EQ(std::string(second), "one\ntwo\n");
  // The text returned before the append is still there, unchanged (it used to be freed).
  EXPECT_EQ(std::string(first), first_copy);
  EXPECT_EQ(first_copy, "one\n");
  release(err);
}

TEST_F(Error, AppendingToThePendingErrorKeepsItPendingAndAFailureReplacesIt) {
  ffk_error_set(FFK_ERR_KEY, "k");
  ASSERT_EQ(ffk_error_append_frame(ffk_error_peek_borrow(), "  hop"), 0);
  ASSERT_TRUE(ffk_error_matches(FFK_ERR_KEY));
  EXPECT_NE(std::string(ffk_error_backtrace(ffk_error_peek_borrow())).find("  hop\n"), std::string::npos);
  // The slot held the only reference: the MemoryError that replaces it must not free the
  // Error while the append still works on it (ASan: heap-use-after-free before the fix).
  ffk_debug_fail_allocation(1);
  EXPECT_EQ(ffk_error_append_frame(ffk_error_peek_borrow(), std::string(500, 'f').c_str()), -1);
  ffk_debug_fail_allocation(0);
  EXPECT_TRUE(ffk::test::PendingError(FFK_ERR_MEMORY));
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ERROR), 0);
}

TEST_F(Error, NewMakesAnUnraisedErrorWithoutNativeFrames) {
  ffk_error* err = ffk_error_new("KeyError", "'missing'");
  ASSERT_NE(err, nullptr);
  EXPECT_FALSE(ffk_error_occurred());
  EXPECT_STREQ(ffk_error_kind(err), "KeyError");
  EXPECT_STREQ(ffk_error_message(err), "'missing'");
  EXPECT_STREQ(ffk_error_backtrace(err), "");
  release(err);
}

TEST_F(Error, BacktraceCaptureCanBeTurnedOff) {
  bool was = ffk_error_set_backtrace_enabled(false);
  EXPECT_TRUE(was);
  raise_from_named_function(2);
  ffk_error* err = ffk_error_fetch();
  std::string bt = ffk_error_backtrace(err);
  EXPECT_EQ(bt.rfind("  at raise_from_named_function", 0), 0u) << "the raise location is kept";
  EXPECT_EQ(bt.find('\n'), bt.size() - 1) << "but no native frames:\n" << bt;
  release(err);
  ffk_error_set_backtrace_enabled(true);
}

TEST_F(Error, ReadingTheBacktraceKeepsThePendingError) {
  ffk_error_set(FFK_ERR_VALUE, "pending");
  ffk_error* err = ffk_error_peek_borrow();
  EXPECT_NE(std::string(ffk_error_backtrace(err)), "");
  EXPECT_EQ(ffk_error_peek_borrow(), err);
  EXPECT_EQ(FetchError(), "ValueError: pending");
}

TEST_F(Error, OutOfMemoryWhileRaisingGivesThePreallocatedMemoryError) {
  ffk_debug_fail_allocation(1);  // the error object itself cannot be allocated
  EXPECT_EQ(ffk_error_set(FFK_ERR_VALUE, "lost"), -1);
  ffk_error* err = ffk_error_fetch();
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(ffk_error_kind(err), "MemoryError");
  EXPECT_EQ(ffk_error_append_frame(err, "dropped"), 0);
  EXPECT_STREQ(ffk_error_backtrace(err), "");
  EXPECT_EQ(ffk_debug_live_objects(-1), 0) << "the preallocated error is not a live allocation";
  release(err);
  release(err);  // immortal: extra releases never free it
}

TEST_F(Error, EachThreadHasItsOwnSlot) {
  ffk_error_set(FFK_ERR_VALUE, "main thread");
  std::string seen;
  std::thread t([&] {
    seen = ffk_error_occurred() ? "pending" : "empty";
    ffk_error_set(FFK_ERR_TYPE, "other thread");
  });
  t.join();
  EXPECT_EQ(seen, "empty");
  EXPECT_EQ(FetchError(), "ValueError: main thread");
}

TEST_F(Error, AnErrorLeftPendingByAnExitingThreadIsReleased) {
  std::thread t([] { ffk_error_set(FFK_ERR_VALUE, "left behind"); });
  t.join();
  EXPECT_EQ(ffk_debug_live_objects(FFK_TYPE_ERROR), 0);
}

TEST_F(Error, FunctionFormOfSetWorksForOtherLanguages) {
  EXPECT_EQ((ffk_error_set)(FFK_ERR_ATTRIBUTE, "no attribute %s", "x"), -1);
  ffk_error* err = ffk_error_fetch();
  EXPECT_STREQ(ffk_error_message(err), "no attribute x");
  std::string bt = ffk_error_backtrace(err);
  EXPECT_EQ(bt.find("ffk_error_set"), std::string::npos) << bt;
  release(err);
}

TEST_F(Error, ErrorReprShowsKindAndQuotedMessage) {
  ffk_error* err = ffk_error_new("ValueError", "bad \"x\"");
  ffk::test::OwnedAny v(ffk_any_object_steal(reinterpret_cast<ffk_object*>(err)));
  EXPECT_EQ(ffk::test::Repr(v.v), "ValueError(\"bad \\\"x\\\"\")");
}

}  // namespace
