/*
 * memory.c - the allocator of ffikit/memory.h: the raising forms. They take the raw path
 * (memory_raw.c, below error.c, which also has ffk_mem_free) and raise a MemoryError
 * when it returns NULL.
 */
#include "internal.h"

void *ffk_mem_alloc(size_t size) {
  void *p = ffk_mem__raw_alloc(size);
  if (FFK_UNLIKELY(p == NULL)) ffk_error__no_memory(size, false);
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
  if (FFK_UNLIKELY(p == NULL)) ffk_error__no_memory(size, true);
  return p;
}
