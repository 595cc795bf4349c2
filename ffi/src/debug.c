/*
 * debug.c - the test hooks of ffikit/debug.h: live-object counters and the failing
 * allocator.
 *
 * Only FFK_TESTING builds (the *_testing libraries that tests link) keep any state: a
 * per-thread countdown that makes the Nth allocation fail, a per-thread allocation count,
 * and process-wide live-object counts per type index. The allocator (memory.c) asks
 * ffk_debug__allocation_fails before each allocation, and objects are counted born in
 * ffk_object__init and dead in ffk_object_free/ffk_object_forget (object.c). Release
 * builds compile those internal calls to nothing (internal.h) and the public functions
 * here say that the hooks are missing.
 */
#include "internal.h"

#ifdef FFK_TESTING
/* Per-thread countdown: when it goes from 1 to 0 the allocation fails. */
static _Thread_local int64_t t_fail_countdown;
static _Thread_local int64_t t_alloc_count;
/* Live objects per type index (untouched pages of this table cost no memory). */
#define LIVE_SLOTS (FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC + 1)
static int64_t g_live[LIVE_SLOTS];
static int64_t g_live_total;

bool ffk_debug__allocation_fails(void) {
  ++t_alloc_count;
  return t_fail_countdown > 0 && --t_fail_countdown == 0;
}

static size_t live_slot(int32_t type_index) {
  return type_index >= 0 && type_index < LIVE_SLOTS - 1 ? (size_t)type_index : LIVE_SLOTS - 1;
}

void ffk_debug__object_born(int32_t type_index) {
  __atomic_fetch_add(&g_live[live_slot(type_index)], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_live_total, 1, __ATOMIC_RELAXED);
}

void ffk_debug__object_died(int32_t type_index) {
  __atomic_fetch_sub(&g_live[live_slot(type_index)], 1, __ATOMIC_RELAXED);
  __atomic_fetch_sub(&g_live_total, 1, __ATOMIC_RELAXED);
}

bool ffk_debug_hooks_available(void) { return true; }

int64_t ffk_debug_live_objects(int32_t type_index) {
  if (type_index < 0) return __atomic_load_n(&g_live_total, __ATOMIC_RELAXED);
  return __atomic_load_n(&g_live[live_slot(type_index)], __ATOMIC_RELAXED);
}

int ffk_debug_fail_allocation(int64_t n) {
  if (n < 0) return ffk_error_set(FFK_ERR_VALUE, "fail_allocation count must be >= 0, got %lld", (long long)n);
  t_fail_countdown = n;
  return 0;
}

bool ffk_debug_fail_allocation_armed(void) { return t_fail_countdown > 0; }

int64_t ffk_debug_allocation_count(void) { return t_alloc_count; }

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
