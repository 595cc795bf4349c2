// ffikit/module.h: loading modules built by Bazel from tests/ffi/test_module.c, the
// symbol convention, the ABI check, init entries, lifetimes, and errors across modules.
#include <ffikit/ffikit.h>

#include <dlfcn.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Module : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;

const char kModule[] = "tests/ffi/libtest_module.so";
const char kPlain[] = "tests/ffi/libtest_module_plain.so";

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

std::string Str(const ffk_any& v) {
  const char* data;
  size_t n;
  if (ffk_any_as_str(&v, &data, &n) != 0) return FetchError();
  return std::string(data, n);
}

TEST_F(Module, LoadsAndCallsATypedFunction) {
  ffk_module* m = ffk_module_load(kModule);
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_STREQ(ffk_module_path(m), kModule);
  ffk_function* f = ffk_module_get_function(m, "add_one");
  ASSERT_NE(f, nullptr) << FetchError();
  EXPECT_STREQ(ffk_function_name(f), "add_one");
  EXPECT_STREQ(ffk_function_signature(f), "add_one(0: int) -> int");
  ffk_any arg = ffk_any_int(41);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 42);
  arg = ffk_any_raw_str("x");
  EXPECT_EQ(ffk_function_call(f, &arg, 1, &r.v), -1);
  EXPECT_EQ(FetchError(),
            "TypeError: Mismatched type on argument #0 when calling: `add_one(0: int) -> int`. Expected `int` but got "
            "`str`");
  // Untyped exports get their Module as self.
  ffk_function* greet = ffk_module_get_function(m, "greet");
  ASSERT_NE(greet, nullptr);
  EXPECT_EQ(ffk_function_signature(greet), nullptr);
  ASSERT_EQ(ffk_function_call(greet, nullptr, 0, &r.v), 0);
  EXPECT_EQ(Str(r.v), std::string("hello from ") + kModule);
  ffk_object_release(Obj(greet));
  ffk_object_release(Obj(f));
  ffk_object_release(Obj(m));
  EXPECT_EQ(ffk_function_remove_global("test_module.hello"), 1);
}

TEST_F(Module, InitRunsOnceAndRegistersGlobals) {
  ffk_module* a = ffk_module_load(kModule);
  ffk_module* b = ffk_module_load(kModule);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ffk_function* count = ffk_module_get_function(b, "init_count");
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(count, nullptr, 0, &r.v), 0);
  // Once per process: earlier tests in this binary may have loaded it already.
  EXPECT_EQ(r.v.v_int, 1);
  ffk_object_release(Obj(count));
  ffk_object_release(Obj(a));
  ffk_object_release(Obj(b));
  // The init ran in an earlier test of this process, whose global was removed; the
  // library stays loaded (pinned) and its init does not run again.
  ffk_function* hello;
  int found = ffk_function_get_global("test_module.hello", &hello);
  if (found == 1) {
    ASSERT_EQ(ffk_function_call(hello, nullptr, 0, &r.v), 0);
    EXPECT_EQ(Str(r.v), "hello");
    ffk_object_release(Obj(hello));
    ffk_function_remove_global("test_module.hello");
  }
  void* still = dlopen(kModule, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still, nullptr) << "a module whose init ran must stay loaded";
  if (still) dlclose(still);
}

TEST_F(Module, AFunctionKeepsItsModuleLoaded) {
  ffk_module* m = ffk_module_load(kPlain);
  ASSERT_NE(m, nullptr) << FetchError();
  ffk_function* f = ffk_module_get_function(m, "add_one");
  ASSERT_NE(f, nullptr);
  ffk_object_release(Obj(m));  // only the Function holds it now
  void* h = dlopen(kPlain, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(h, nullptr);
  dlclose(h);
  ffk_any arg = ffk_any_int(1);
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0);
  EXPECT_EQ(r.v.v_int, 2);
  ffk_object_release(Obj(f));
  // The last holder is gone: the library without an init entry is closed.
  EXPECT_EQ(dlopen(kPlain, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST_F(Module, KeepLoadedOutlivesTheLastHolder) {
  // Its own copy of the plain module: once kept, it stays loaded for the whole process.
  const char kKept[] = "tests/ffi/libtest_module_kept.so";
  ffk_module* m = ffk_module_load(kKept);
  ASSERT_NE(m, nullptr) << FetchError();
  ffk_function* f = ffk_module_get_function(m, "add_one");
  ASSERT_NE(f, nullptr) << FetchError();
  ASSERT_EQ(ffk_module_keep_loaded(m), 0);
  ASSERT_EQ(ffk_module_keep_loaded(m), 0);  // idempotent
  ffk_object_release(Obj(f));
  ffk_object_release(Obj(m));
  void* h = dlopen(kKept, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(h, nullptr) << "a kept module must stay loaded after its last holder";
  if (h) dlclose(h);
  EXPECT_EQ(ffk_module_keep_loaded(nullptr), -1);
  EXPECT_TRUE(PendingError("ValueError", {"the module is NULL"}));
}

TEST_F(Module, ClearErrorsForMissingFilesSymbolsAndBadAbi) {
  EXPECT_EQ(ffk_module_load("tests/ffi/no_such_module.so"), nullptr);
  EXPECT_TRUE(PendingError("RuntimeError", {"cannot load module `tests/ffi/no_such_module.so`: ",
                                            "No such file or directory"}));
  EXPECT_EQ(ffk_module_load("tests/ffi/libtest_module_no_abi.so"), nullptr);
  EXPECT_EQ(FetchError(),
            "RuntimeError: `tests/ffi/libtest_module_no_abi.so` is not an ffikit module: it has no symbol "
            "`ffikit_abi_version`");
  EXPECT_EQ(ffk_module_load("tests/ffi/libtest_module_bad_abi.so"), nullptr);
  char expected[256];
  snprintf(expected, sizeof expected,
           "RuntimeError: module `tests/ffi/libtest_module_bad_abi.so` was built for ffikit ABI %d.0, but this "
           "library implements ABI %d.%d",
           FFK_ABI_VERSION_MAJOR + 1, FFK_ABI_VERSION_MAJOR, FFK_ABI_VERSION_MINOR);
  EXPECT_EQ(FetchError(), expected);
  EXPECT_EQ(ffk_module_load(nullptr), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot load a module: the path is NULL");
  EXPECT_EQ(ffk_module_load(""), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: cannot load a module: the path is empty");

  ffk_module* m = ffk_module_load(kPlain);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ffk_module_get_function(m, "nope"), nullptr);
  EXPECT_EQ(FetchError(), std::string("AttributeError: module `") + kPlain +
                              "` has no function `nope` (no symbol `ffikit_fn_nope`)");
  EXPECT_EQ(ffk_module_get_function(m, "a-b"), nullptr);
  EXPECT_EQ(FetchError(), std::string("ValueError: module `") + kPlain + "`: `a-b` is not a function name (an identifier)");
  EXPECT_EQ(ffk_module_get_function(nullptr, "x"), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: ffk_module_get_function: the module is NULL");
  ffk_object_release(Obj(m));
}

TEST_F(Module, InitFailureIsReportedWithTheModule) {
  EXPECT_EQ(ffk_module_load("tests/ffi/libtest_module_init_fails.so"), nullptr);
  ffk_error* err = ffk_error_fetch();
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(ffk_error_kind(err), "RuntimeError");
  EXPECT_STREQ(ffk_error_message(err), "test_module refuses to start");
  EXPECT_NE(std::string(ffk_error_backtrace(err)).find(
                "in the init entry of module `tests/ffi/libtest_module_init_fails.so`"),
            std::string::npos)
      << ffk_error_backtrace(err);
  ffk_object_release(Obj(err));
}

// A C closure that calls the module's `fail` with its argument.
int CallFail(void* self, const ffk_any* args, int32_t nargs, ffk_any* result) {
  return ffk_function_call(static_cast<ffk_function*>(self), args, nargs, result);
}

TEST_F(Module, ErrorsCrossModuleCallsWithEveryHop) {
  ffk_module* m = ffk_module_load(kPlain);
  ASSERT_NE(m, nullptr);
  ffk_function* fail = ffk_module_get_function(m, "fail");
  ffk_function* call_back = ffk_module_get_function(m, "call_back");
  ffk_function* closure = ffk_function_new("closure", CallFail, fail, nullptr);
  ASSERT_TRUE(fail && call_back && closure);
  // C -> module call_back -> C closure -> module fail -> test_module_fail_here raises.
  ffk_any args[2] = {ffk_any_object(Obj(closure)), ffk_any_int(7)};
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(call_back, args, 2, &r.v), -1);
  ffk_error* err = ffk_error_fetch();
  EXPECT_STREQ(ffk_error_kind(err), "ValueError");
  EXPECT_STREQ(ffk_error_message(err), "test_module failed with code 7");
  std::string bt = ffk_error_backtrace(err);
  size_t raiser = bt.find("test_module_fail_here");
  size_t hop1 = bt.find("in call to Function `fail`");
  size_t hop2 = bt.find("in call to Function `closure`");
  size_t hop3 = bt.find("in call to Function `call_back`");
  EXPECT_NE(raiser, std::string::npos) << bt;
  EXPECT_TRUE(hop1 != std::string::npos && hop1 < hop2 && hop2 < hop3 && hop3 != std::string::npos) << bt;
  ffk_object_release(Obj(err));
  ffk_any_release(&args[0]);
  ffk_object_release(Obj(closure));
  ffk_object_release(Obj(call_back));
  ffk_object_release(Obj(fail));
  ffk_object_release(Obj(m));
}

TEST_F(Module, TheTestingLibraryLoadsAsAModule) {
  ffk_module* m = ffk_module_load("testing/libffikit_testing.so");
  ASSERT_NE(m, nullptr) << FetchError();
  ffk_function* f;
  ASSERT_EQ(ffk_function_get_global("testing.schema_id_device", &f), 1);
  ffk_any arg = ffk_any_raw_str("cuda:1");
  OwnedAny r;
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0) << FetchError();
  EXPECT_EQ(r.v.type_index, FFK_TYPE_DEVICE);
  EXPECT_EQ(r.v.v_device.device_id, 1);
  ffk_object_release(Obj(f));
  ffk_object_release(Obj(m));
  // Remove what its init registered, so the test ends with no live objects.
  std::vector<std::string> names;
  ffk_function_for_each_global(
      [](const char* name, ffk_function*, void* ctx) {
        if (std::string(name).rfind("testing.", 0) == 0) static_cast<std::vector<std::string>*>(ctx)->push_back(name);
        return 0;
      },
      &names);
  EXPECT_EQ(names.size(), 62u);  // testing.c's 54, objects.c's 7 and the module's testing.doc_example
  for (const std::string& n : names) ffk_function_remove_global(n.c_str());
}

TEST_F(Module, ThreadsLoadLookUpAndCallConcurrently) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&failures, t] {
      for (int i = 0; i < 200; ++i) {
        ffk_module* m = ffk_module_load(t % 2 ? kPlain : kModule);
        ffk_function* f = m ? ffk_module_get_function(m, "add_one") : nullptr;
        ffk_object_release(Obj(m));
        ffk_any arg = ffk_any_int(i), r;
        if (f == nullptr || ffk_function_call(f, &arg, 1, &r) != 0 || r.v_int != i + 1) ++failures;
        ffk_object_release(Obj(f));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ffk_function_remove_global("test_module.hello");
}

TEST_F(Module, LoadAndLookupSurviveEveryAllocationFailure) {
  ffk::test::SweepAllocationFailures([] {
    ffk_module* m = ffk_module_load(kPlain);
    if (m == nullptr) return false;
    ffk_function* f = ffk_module_get_function(m, "call_back");
    ffk_object_release(Obj(m));
    if (f == nullptr) return false;
    ffk_object_release(Obj(f));
    return true;
  });
}

TEST_F(Module, ExportedDocsAndMetadata) {
  ffk_module* m = ffk_module_load(kPlain);
  ASSERT_NE(m, nullptr) << FetchError();
  EXPECT_EQ(ffk_module_implements_function(m, "add_one"), 1);
  EXPECT_EQ(ffk_module_implements_function(m, "greet"), 1);
  EXPECT_EQ(ffk_module_implements_function(m, "missing"), 0);
  ffk_function* f = ffk_module_get_function(m, "add_one");
  ASSERT_NE(f, nullptr) << FetchError();
  EXPECT_STREQ(ffk_function_doc(f), "Returns its argument plus one.");
  EXPECT_EQ(ffk_function_flags(f), FFK_FUNCTION_QUICK);  // ffikit_flags_add_one
  ffk_object_release(Obj(f));
  ffk_function* g = ffk_module_get_function(m, "greet");
  ASSERT_NE(g, nullptr) << FetchError();
  EXPECT_EQ(ffk_function_flags(g), 0u);  // no ffikit_flags_greet
  ffk_object_release(Obj(g));
  const char* doc = nullptr;
  EXPECT_EQ(ffk_module_get_function_doc(m, "add_one", &doc), 1);
  EXPECT_STREQ(doc, "Returns its argument plus one.");
  EXPECT_EQ(ffk_module_get_function_doc(m, "greet", &doc), 0);
  EXPECT_EQ(doc, nullptr);
  OwnedAny meta;
  ASSERT_EQ(ffk_module_get_function_metadata(m, "add_one", &meta.v), 1) << FetchError();
  EXPECT_EQ(Str(meta.v),
            R"({"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],)"
            R"(\"params\":[{\"type\":\"int\"}]}}","name":"add_one","arity":1,"arg_names":[null],)"
            R"("doc":"Returns its argument plus one."})");
  ffk_any_release(&meta.v);
  ASSERT_EQ(ffk_module_get_function_metadata(m, "greet", &meta.v), 1) << FetchError();
  EXPECT_EQ(Str(meta.v), R"({"type_schema":"{\"type\":\"ffi.Function\"}","name":"greet"})");
  ffk_any_release(&meta.v);
  EXPECT_EQ(ffk_module_get_function_metadata(m, "missing", &meta.v), 0);
  EXPECT_EQ(ffk_module_symbol_prefix(m), std::string());
  ffk_object_release(Obj(m));
}

}  // namespace
