/*
 * storage_internal.h - the Storage internals the tensor layer's files share (storage.c,
 * shm.c, cuda.c's allocators; tensor.c's embedded storage through tensor_internal.h),
 * below the tensor internals, so that storage.c and shm.c see nothing of tensors. Not
 * installed.
 */
#ifndef FFIKIT_STORAGE_INTERNAL_H
#define FFIKIT_STORAGE_INTERNAL_H

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
  void (*embedded_done)(void *owner);    /* embedded storage: called at FREE with `extra` */
};

/*
 * Wraps memory that is freed by `release(s)` into a new Storage and counts it in the
 * device's statistics. On failure (MemoryError) returns NULL and does not call release:
 * the caller still owns the memory.
 */
ffk_storage *ffk_storage__wrap(DLDevice device, void *data, size_t nbytes, void (*release)(ffk_storage *),
                               void *extra);

/*
 * Hand-aligned blocks, for allocators whose raw allocation promises less alignment than
 * asked (the CPU's ffk_mem_alloc, cudaHostAlloc): allocate nbytes plus
 * FFK_ALIGNED__ROOM(alignment), place the block with ffk_aligned__place, and give back
 * ffk_aligned__raw(block). The word before the block holds the raw pointer. `alignment`
 * is a power of two of at least sizeof(void *).
 */
#define FFK_ALIGNED__ROOM(alignment) ((alignment) - 1 + sizeof(void *))
static inline void *ffk_aligned__place(void *raw, size_t alignment) {
  uintptr_t aligned = ((uintptr_t)raw + sizeof(void *) + alignment - 1) & ~(uintptr_t)(alignment - 1);
  ((void **)aligned)[-1] = raw;
  return (void *)aligned;
}
static inline void *ffk_aligned__raw(void *block) { return ((void **)block)[-1]; }

/*
 * Storage that lives inside another object's block (a small tensor's, see tensor.c).
 * ffk_storage__init_embedded makes `s` a new Storage (strong 1, weak 1) owning the
 * `nbytes` at `data`, which are the owner's memory, and counts them. Its last release
 * takes it down as usual, and its FREE step calls `done(owner)` instead of freeing:
 * the owner gives the block back. ffk_storage__drop_embedded is for an owner that
 * holds the only reference and no weak one (ffk_object_is_unique): it takes the bytes
 * out of the statistics and counts the object gone without touching its reference
 * count, and `done` is not called. Neither fails.
 */
void ffk_storage__init_embedded(ffk_storage *s, DLDevice device, void *data, size_t nbytes, void (*done)(void *),
                                void *owner);
void ffk_storage__drop_embedded(ffk_storage *s);

/* True while the CPU allocator is the built-in one (memory of the CPU may come from anywhere). */
bool ffk_storage__cpu_is_builtin(void);

/* Adds to the statistics of `device` (negative to subtract). */
void ffk_storage__count(DLDevice device, int64_t bytes, int64_t blocks);

#ifdef FFK_HAS_CUDA
/* cuda.c's storage side, in a build with the CUDA toolkit only (tensor_internal.h says how its functions fail). */

/* Stores the kDLCUDA and kDLCUDAHost allocators into the registry's `table` (indexed by device type). */
void ffk_cuda__register_allocators(ffk_allocator *table);

/* The number of CUDA devices; 0 when there is no driver or no device. Never raises. */
int ffk_cuda__device_count(void);

/* Sets `nbytes` bytes of device memory at `data` on CUDA `device` to zero. 0 or -1. */
int ffk_cuda__zero(DLDevice device, void *data, size_t nbytes);
#endif

#endif /* FFIKIT_STORAGE_INTERNAL_H */
