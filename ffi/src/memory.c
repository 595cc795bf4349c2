/*
 * memory.c - the allocator: ffikit/memory.h and the raw path every object and buffer
 * of the core takes.
 *
 * Invariant: every ffikit object and buffer is allocated by ffk_mem__raw_alloc or
 * reallocated by ffk_mem__raw_realloc, so the failing-allocator hook (debug.c, FFK_TESTING
 * builds only) sees every allocation. The raw functions raise nothing, so the error
 * module can fall back to its preallocated MemoryError; the public ones raise.
 */
#include "internal.h"

#include <stdlib.h>

void *ffk_mem__raw_alloc(size_t size) {
  if (ffk_debug__allocation_fails()) return NULL;
  return malloc(size ? size : 1);
}

void *ffk_mem__raw_realloc(void *ptr, size_t size) {
  if (ffk_debug__allocation_fails()) return NULL;
  return realloc(ptr, size ? size : 1);
}

void *ffk_mem_alloc(size_t size) {
  void *p = ffk_mem__raw_alloc(size);
  if (FFK_UNLIKELY(p == NULL)) ffk_error_set(FFK_ERR_MEMORY, "out of memory allocating %zu bytes", size);
  return p;
}

void *ffk_mem_calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) {
    ffk_error_set(FFK_ERR_MEMORY, "allocation of %zu x %zu bytes overflows size_t", count, size);
    return NULL;
  }
  void *p = ffk_mem_alloc(count * size);
  if (p != NULL) memset(p, 0, count * size);
  return p;
}

void *ffk_mem_realloc(void *ptr, size_t size) {
  void *p = ffk_mem__raw_realloc(ptr, size);
  if (FFK_UNLIKELY(p == NULL)) ffk_error_set(FFK_ERR_MEMORY, "out of memory reallocating to %zu bytes", size);
  return p;
}

void ffk_mem_free(void *ptr) { free(ptr); }
