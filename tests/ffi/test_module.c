/*
 * test_module.c - a module for module_test.cc, built in several variants (tests/ffi/BUILD):
 *   libtest_module.so            add_one (typed), greet, fail, call_back, init_count; an init
 *                                entry registering the global `test_module.hello`
 *   libtest_module_plain.so      the same without an init entry (so it can be unloaded)
 *   libtest_module_init_fails.so an init entry that raises
 *   libtest_module_bad_abi.so    built "for" the next major ABI
 *   libtest_module_no_abi.so     no ffikit_abi_version at all: not a module
 */
#include <ffikit/ffi.h>

#include <stdio.h>

#if defined(TEST_MODULE_BAD_ABI)
FFK_MODULE_SYMBOL const uint32_t ffikit_abi_version = (uint32_t)(FFK_ABI_VERSION_MAJOR + 1) << 16;
#elif !defined(TEST_MODULE_NO_ABI)
FFK_MODULE_ABI_VERSION;
#endif

static int add_one(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: one int */
  *result = ffk_any_int(args[0].v_int + 1);
  return 0;
}
FFK_MODULE_EXPORT_TYPED(add_one, "(int) -> int", add_one)
FFK_MODULE_EXPORT_DOC(add_one, "Returns its argument plus one.")
FFK_MODULE_EXPORT_FLAGS(add_one, FFK_FUNCTION_QUICK)

/* Reports the Module it was called with (self), so the test can check it. */
static int greet(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)args, (void)nargs;
  char text[512];
  snprintf(text, sizeof text, "hello from %s", ffk_module_path((ffk_module *)self));
  return ffk_any_cstr(text, result);
}
FFK_MODULE_EXPORT(greet, greet)

/* Raises from a named frame: the backtrace must show test_module_fail_here. */
__attribute__((noinline)) int test_module_fail_here(int64_t code);
__attribute__((noinline)) int test_module_fail_here(int64_t code) {
  return ffk_error_set(FFK_ERR_VALUE, "test_module failed with code %lld", (long long)code);
}
static int fail(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)result;
  int64_t code;
  if (ffk_args_unpack("fail", args, nargs, "i", &code) != 0) return -1;
  return test_module_fail_here(code);
}
FFK_MODULE_EXPORT(fail, fail)

/* call_back(f, x) = f(x): lets a caller's Function re-enter through the module. */
static int call_back(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ffk_function_call((ffk_function *)args[0].v_obj, &args[1], 1, result);
}
FFK_MODULE_EXPORT_TYPED(call_back, "(f: Function, x: Any)", call_back)

static int g_init_count;
static int init_count(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  *result = ffk_any_int(g_init_count);
  return 0;
}
FFK_MODULE_EXPORT(init_count, init_count)

#if defined(TEST_MODULE_INIT_FAILS)
FFK_MODULE_INIT(m) {
  (void)m;
  return ffk_error_set(FFK_ERR_RUNTIME, "test_module refuses to start");
}
#elif !defined(TEST_MODULE_NO_INIT)
static int hello(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  return ffk_any_cstr("hello", result);
}
FFK_MODULE_INIT(m) {
  (void)m;
  ++g_init_count;
  ffk_function *f = ffk_function_new("test_module.hello", hello, NULL, NULL);
  if (f == NULL) return -1;
  int rc = ffk_function_register("test_module.hello", f, false);
  ffk_object_release((ffk_object *)f);
  return rc;
}
#endif
