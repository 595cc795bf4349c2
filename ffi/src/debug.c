/*
 * debug.c - the test hooks of ffikit/debug.h that raise: the failing-allocator setter,
 * which checks its count, and, in release builds, every public hook, which says that the
 * hooks are missing.
 *
 * The hooks' state and what reads it without raising are debug_counters.c, below error.c
 * (the raw allocator and the object counters call into it); only FFK_TESTING builds (the
 * *_testing libraries that tests link) have them.
 */
#include "internal.h"

#ifdef FFK_TESTING

int ffk_debug_fail_allocation(int64_t n) {
  if (n < 0) return ffk_error_set(FFK_ERR_VALUE, "fail_allocation count must be >= 0, got %lld", (long long)n);
  ffk_debug__set_fail_countdown(n);
  return 0;
}

#else /* !FFK_TESTING: the hooks cost nothing and say so when asked. */

static int hooks_missing(const char *what) {
  return ffk_error_set(FFK_ERR_RUNTIME, "%s needs a build with FFK_TESTING=1 (link a *_testing target)", what);
}

bool ffk_debug_hooks_available(void) { return false; }
int64_t ffk_debug_live_objects(int32_t type_index) {
  (void)type_index;
  return hooks_missing("ffk_debug_live_objects");
}
int ffk_debug_fail_allocation(int64_t n) {
  (void)n;
  return hooks_missing("ffk_debug_fail_allocation");
}
bool ffk_debug_fail_allocation_armed(void) { return false; }
int64_t ffk_debug_allocation_count(void) { return 0; }

#endif
