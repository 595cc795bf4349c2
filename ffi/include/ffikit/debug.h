/*
 * ffikit/debug.h - test hooks: live-object counters and a failing allocator.
 *
 * They work in builds compiled with FFK_TESTING=1 (the `*_testing` Bazel targets that
 * the test suites link). In a release build they cost nothing: the allocation path
 * has no counters, and these functions report that they are unavailable.
 *
 * The failure countdown is per thread, so an armed hook only fails allocations made
 * by the thread that armed it. The live counters are process-wide.
 */
#ifndef FFIKIT_DEBUG_H
#define FFIKIT_DEBUG_H

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/* True when this library was built with the test hooks (FFK_TESTING). */
FFK_API bool ffk_debug_hooks_available(void);

/*
 * Objects of `type_index` allocated and not yet freed; -1 counts every type.
 * Returns the count, or -1 with a RuntimeError in a build without the hooks.
 */
FFK_API int64_t ffk_debug_live_objects(int32_t type_index);

/*
 * Arms the calling thread's countdown so that its `n`-th next allocation (1 = the very
 * next) fails as if memory were exhausted; 0 disarms. Returns 0, or -1 with a
 * RuntimeError in a build without the hooks or a ValueError for negative n.
 */
FFK_API int ffk_debug_fail_allocation(int64_t n);

/* True while the calling thread's countdown is armed and has not fired yet. */
FFK_API bool ffk_debug_fail_allocation_armed(void);

/* The number of allocations the calling thread has made (successful or failed by the hook). */
FFK_API int64_t ffk_debug_allocation_count(void);

FFK_EXTERN_C_END

#endif /* FFIKIT_DEBUG_H */
