/*
 * tensor_internal.h - what the files of the tensor layer share; not installed.
 */
#ifndef FFIKIT_TENSOR_INTERNAL_H
#define FFIKIT_TENSOR_INTERNAL_H

#include <ffikit/ffi.h>
#include <ffikit/storage.h>

/*
 * A Storage. Memory from an allocator is given back through `alloc`; other memory
 * (shared memory) through `release`, which also frees `extra`.
 */
struct ffk_storage {
  ffk_object header;
  void *data;
  size_t nbytes;
  DLDevice device;
  ffk_allocator alloc;                   /* valid when release is NULL */
  void (*release)(struct ffk_storage *); /* NULL: alloc.free(data) */
  void *extra;                           /* owned by `release` (the shm bookkeeping) */
  bool counted;                          /* in the statistics: set once the memory is owned */
};

/*
 * Wraps memory that is freed by `release(s)` into a new Storage and counts it in the
 * device's statistics. On failure (MemoryError) returns NULL and does not call release:
 * the caller still owns the memory.
 */
ffk_storage *ffk_storage__wrap(DLDevice device, void *data, size_t nbytes, void (*release)(ffk_storage *),
                               void *extra);

/* Adds to the statistics of `device` (negative to subtract). */
void ffk_storage__count(DLDevice device, int64_t bytes, int64_t blocks);

#endif /* FFIKIT_TENSOR_INTERNAL_H */
