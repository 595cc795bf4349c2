/*
 * memory_raw.c - the raw allocation path every object and buffer of the core takes, and
 * ffk_mem_free. Nothing here raises: this file lies below error.c, which allocates its
 * Errors through it (and falls back to its preallocated MemoryError when it returns NULL);
 * the raising forms of ffikit/memory.h are in memory.c, above error.c.
 *
 * Invariant: every ffikit object and buffer is allocated by ffk_mem__raw_alloc or
 * reallocated by ffk_mem__raw_realloc, so the failing-allocator hook (debug_counters.c,
 * FFK_TESTING builds only) sees every allocation.
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

/* No block can be larger than PTRDIFF_MAX bytes (a difference of two pointers into it must
   fit): such a size fails here, as malloc would, without asking malloc (valgrind reports a
   size past it as a bad argument). */
void *ffk_mem__raw_alloc(size_t size) {
  if (ffk_debug__allocation_fails() || size > PTRDIFF_MAX) return NULL;
  return malloc(size ? size : 1);
}

void *ffk_mem__raw_realloc(void *ptr, size_t size) {
  if (ffk_debug__allocation_fails() || size > PTRDIFF_MAX) return NULL;
  return realloc(ptr, size ? size : 1);
}

void ffk_mem_free(void *ptr) { free(ptr); }
