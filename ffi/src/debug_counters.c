/*
 * debug_counters.c - the state of the test hooks (ffikit/debug.h) and what reads it
 * without raising: the failing-allocator countdown, the allocation count and the
 * live-object counters.
 *
 * Only FFK_TESTING builds (the *_testing libraries that tests link) keep any state: a
 * per-thread countdown that makes the Nth allocation fail, a per-thread allocation count,
 * and process-wide live-object counts per type index. The raw allocator (memory_raw.c)
 * asks ffk_debug__allocation_fails before each allocation, and objects are counted born in
 * ffk_object__init and dead in ffk_object_free/ffk_object_forget (object_core.c). Those
 * lie below error.c, so this file raises nothing; the setter that checks its argument and
 * raises, and the release builds' functions that say the hooks are missing, are debug.c.
 * Release builds compile the internal calls to nothing (internal.h) and this file to
 * nothing at all.
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

void ffk_debug__set_fail_countdown(int64_t n) { t_fail_countdown = n; }

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

bool ffk_debug_fail_allocation_armed(void) { return t_fail_countdown > 0; }

int64_t ffk_debug_allocation_count(void) { return t_alloc_count; }
#endif
