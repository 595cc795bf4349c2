/*
 * ffikit/memory.h - the one allocation path every ffikit object and buffer takes.
 *
 * Going through these functions is what lets tests fail the Nth allocation
 * (ffikit/debug.h) and count live objects. Libraries that define their own object
 * types should allocate their objects with ffk_object_alloc and their buffers here.
 */
#ifndef FFIKIT_MEMORY_H
#define FFIKIT_MEMORY_H

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/* `size` bytes (size 0 allocates 1). New memory, or NULL with a MemoryError naming the size. */
FFK_API void *ffk_mem_alloc(size_t size);

/* `size` zeroed bytes. New memory, or NULL with a MemoryError. */
FFK_API void *ffk_mem_calloc(size_t count, size_t size);

/*
 * Resizes `ptr` (NULL allocates). Returns the new block, or NULL with a MemoryError
 * and `ptr` untouched and still owned by the caller.
 */
FFK_API void *ffk_mem_realloc(void *ptr, size_t size);

/* Frees memory from the functions above. NULL is a no-op. */
FFK_API void ffk_mem_free(void *ptr);

FFK_EXTERN_C_END

#endif /* FFIKIT_MEMORY_H */
