/*
 * storage.c - Storage objects, the allocator registry, the CPU allocator and statistics.
 *
 * The registry is an array indexed by DLPack device type. Each slot is published whole
 * under g_lock; ffk_storage_new copies the slot under the lock into the Storage (or, for
 * the CPU while its built-in allocator is in place, takes that one without the lock;
 * small CPU storage then keeps its bytes inside the Storage object), so the
 * Storage frees with the allocator it came from even if the slot is replaced later.
 * Embedded storage (ffk_storage__init_embedded) lives inside a small tensor's block and
 * owns no allocation; tensor.c lays the block out.
 * Statistics are relaxed atomics per (device type, device id) slot; the peak is raised
 * with a CAS loop. The CUDA allocators and the CUDA device count live in cuda.c, which a
 * build without the CUDA toolkit leaves out (FFK_HAS_CUDA undefined).
 */
#include "storage_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define MAX_DEVICE_TYPES 64
#define MAX_DEVICE_IDS 64

static ffk_allocator g_allocators[MAX_DEVICE_TYPES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* True while the CPU allocator is the built-in one: CPU storage then skips g_lock. */
static bool g_cpu_is_builtin = true;

typedef struct stats_slot {
  int64_t bytes, blocks, peak;
} stats_slot;
static stats_slot g_stats[MAX_DEVICE_TYPES][MAX_DEVICE_IDS];

static stats_slot *stats_for(DLDevice d) {
  uint32_t type = (uint32_t)d.device_type, id = (uint32_t)d.device_id;
  if (type >= MAX_DEVICE_TYPES) type = 0; /* unknown types share slot 0, never used by a real device */
  if (id >= MAX_DEVICE_IDS) id = MAX_DEVICE_IDS - 1;
  return &g_stats[type][id];
}

void ffk_storage__count(DLDevice device, int64_t bytes, int64_t blocks) {
  stats_slot *s = stats_for(device);
  int64_t now = __atomic_add_fetch(&s->bytes, bytes, __ATOMIC_RELAXED) ;
  __atomic_add_fetch(&s->blocks, blocks, __ATOMIC_RELAXED);
  int64_t peak = __atomic_load_n(&s->peak, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&s->peak, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

ffk_storage_stats ffk_storage_get_stats(DLDevice device) {
  const stats_slot *s = stats_for(device);
  ffk_storage_stats out = {__atomic_load_n(&s->bytes, __ATOMIC_RELAXED), __atomic_load_n(&s->blocks, __ATOMIC_RELAXED),
                           __atomic_load_n(&s->peak, __ATOMIC_RELAXED)};
  return out;
}

void ffk_storage_reset_peak(DLDevice device) {
  stats_slot *s = stats_for(device);
  __atomic_store_n(&s->peak, __atomic_load_n(&s->bytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* ---- The CPU allocator ------------------------------------------------------------------ */

/*
 * Large CPU blocks ask Linux for transparent huge pages, as numpy does for its arrays
 * (same threshold, 4 MiB): where THP is "madvise" (a common default), a block without the
 * hint lies on 4 KiB pages, and every pass over it (an engine copying it into its store,
 * Ray's ray.put) takes a TLB miss per 4 KiB, measured 6-16% slower per 256 MiB memcpy on a
 * 2-core VM. Only the whole 2 MiB pages inside the block are advised; the hint is best
 * effort (a kernel without THP answers EINVAL) and changes no contents.
 */
#define HUGE_HINT_MIN ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void advise_huge_pages(void *block, size_t nbytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (nbytes < HUGE_HINT_MIN) return;
  uintptr_t lo = ((uintptr_t)block + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)block + nbytes) & ~(HUGE_PAGE - 1);
  if (hi > lo) {
    int saved = errno;
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    errno = saved;
  }
#else
  (void)block, (void)nbytes;
#endif
}

/*
 * CPU memory comes from ffikit's allocation path (so tests can fail it and leaks are
 * counted), over-allocated and aligned by hand; the word before the aligned block holds
 * the pointer to free.
 */
static void *cpu_allocate(void *ctx, DLDevice device, size_t nbytes, size_t alignment) {
  (void)ctx, (void)device;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  if (nbytes > SIZE_MAX - FFK_ALIGNED__ROOM(alignment)) {
    ffk_error_set(FFK_ERR_MEMORY, "cannot allocate %zu bytes on cpu", nbytes);
    return NULL;
  }
  void *raw = ffk_mem_alloc(nbytes + FFK_ALIGNED__ROOM(alignment));
  if (raw == NULL) return NULL;
  void *block = ffk_aligned__place(raw, alignment);
  advise_huge_pages(block, nbytes);
  return block;
}

static void cpu_free(void *ctx, DLDevice device, void *ptr, size_t nbytes) {
  (void)ctx, (void)device, (void)nbytes;
  if (ptr != NULL) ffk_mem_free(ffk_aligned__raw(ptr));
}

static int cpu_copy(void *ctx, void *dst, DLDevice dst_device, const void *src, DLDevice src_device, size_t nbytes) {
  (void)ctx;
  if (dst_device.device_type != kDLCPU || src_device.device_type != kDLCPU)
    return ffk_error_set(FFK_ERR_RUNTIME, "the cpu allocator cannot copy between these devices");
  if (nbytes > 0) memmove(dst, src, nbytes);
  return 0;
}

static const ffk_allocator k_cpu_allocator = {"cpu", NULL, cpu_allocate, cpu_free, cpu_copy};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void register_builtins(void) {
  g_allocators[kDLCPU] = k_cpu_allocator;
#ifdef FFK_HAS_CUDA
  ffk_cuda__register_allocators(g_allocators);
#endif
}

/* ---- The registry ----------------------------------------------------------------------- */

static int check_device_type(const char *fn, int32_t device_type) {
  if (device_type <= 0 || device_type >= MAX_DEVICE_TYPES || ffk_device_type_name(device_type) == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "%s: unknown device type %d", fn, (int)device_type);
  return 0;
}

int ffk_allocator_register(int32_t device_type, const ffk_allocator *allocator, ffk_allocator *previous) {
  pthread_once(&g_once, register_builtins);
  if (check_device_type("allocator_register", device_type) != 0) return -1;
  if (allocator == NULL || allocator->allocate == NULL || allocator->free == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "allocator_register: the allocator for %s %s",
                         ffk_device_type_name(device_type), allocator == NULL ? "is NULL" : "lacks allocate or free");
  pthread_mutex_lock(&g_lock);
  if (previous != NULL) *previous = g_allocators[device_type];
  g_allocators[device_type] = *allocator;
  if (device_type == kDLCPU) {
    /* Putting the built-in one back (a `previous` saved earlier) turns the fast paths on again. */
    bool builtin = allocator->allocate == cpu_allocate && allocator->free == cpu_free && allocator->ctx == NULL;
    __atomic_store_n(&g_cpu_is_builtin, builtin, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_lock);
  return 0;
}

int ffk_device_count(int32_t device_type) {
  if (check_device_type("device_count", device_type) != 0) return -1;
  if (device_type == kDLCPU) return 1;
#ifdef FFK_HAS_CUDA
  if (device_type == kDLCUDA || device_type == kDLCUDAHost) return ffk_cuda__device_count();
#endif
  return 0; /* CUDA in a build without it, or a device type ffikit cannot enumerate */
}

int ffk_allocator_get(int32_t device_type, ffk_allocator *out) {
  pthread_once(&g_once, register_builtins);
  if (check_device_type("allocator_get", device_type) != 0) return -1;
  pthread_mutex_lock(&g_lock);
  *out = g_allocators[device_type];
  pthread_mutex_unlock(&g_lock);
  return out->allocate != NULL;
}

/* ---- Storage ------------------------------------------------------------------------------ */

/* Takes counted storage out of the statistics, once. */
static void uncount(ffk_storage *s) {
  if (s->counted) {
    s->counted = false;
    ffk_storage__count(s->device, -(int64_t)s->nbytes, -1);
  }
}

static void storage_deleter(void *self, int which) {
  ffk_storage *s = self;
  if ((which & FFK_DELETER_DESTROY) && s->counted) {
    uncount(s);
    if (s->release != NULL) s->release(s);
    else if (s->data != NULL) s->alloc.free(s->alloc.ctx, s->device, s->data, s->nbytes);
    s->data = NULL;
    s->extra = NULL;
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&s->header);
}

/* Makes `s` the owner of `data` and counts it; from here on the deleter gives it back. */
static ffk_storage *own(ffk_storage *s, DLDevice device, void *data, size_t nbytes) {
  s->data = data;
  s->nbytes = nbytes;
  s->device = device;
  s->counted = true;
  ffk_storage__count(device, (int64_t)nbytes, 1);
  return s;
}

ffk_storage *ffk_storage__wrap(DLDevice device, void *data, size_t nbytes, void (*release)(ffk_storage *),
                               void *extra) {
  ffk_storage *s = (ffk_storage *)ffk_object_alloc(FFK_TYPE_STORAGE, sizeof(ffk_storage), storage_deleter);
  if (s == NULL) return NULL;
  s->release = release;
  s->extra = extra;
  return own(s, device, data, nbytes);
}

/* Small CPU storage keeps its bytes in the Storage object's own block: one allocation, not two. */
#define INLINE_MAX 256

/* The bytes live inside the Storage object: nothing to give back. */
static void release_inline(ffk_storage *s) { (void)s; }

/*
 * Storage of the built-in CPU allocator with its bytes after the object, aligned. They
 * are zero either way: ffk_object_alloc zeroes the whole block.
 */
static ffk_storage *storage_new_inline(DLDevice device, size_t nbytes, size_t alignment) {
  size_t size = sizeof(ffk_storage) + alignment - 1 + nbytes;
  ffk_storage *s = (ffk_storage *)ffk_object_alloc(FFK_TYPE_STORAGE, size, storage_deleter);
  if (s == NULL) return NULL;
  uintptr_t data = ((uintptr_t)(s + 1) + alignment - 1) & ~(uintptr_t)(alignment - 1);
  s->release = release_inline;
  return own(s, device, (void *)data, nbytes);
}

/* ---- Storage inside another object's block --------------------------------------------- */

bool ffk_storage__cpu_is_builtin(void) { return __atomic_load_n(&g_cpu_is_builtin, __ATOMIC_ACQUIRE); }

static void embedded_deleter(void *self, int which) {
  ffk_storage *s = self;
  if (which & FFK_DELETER_DESTROY) uncount(s);
  if (which & FFK_DELETER_FREE) {
    void (*done)(void *) = s->embedded_done;
    void *owner = s->extra;
    ffk_object_forget(&s->header);
    done(owner); /* may give back the block that holds s */
  }
}

void ffk_storage__init_embedded(ffk_storage *s, DLDevice device, void *data, size_t nbytes, void (*done)(void *),
                                void *owner) {
  ffk_object_init(&s->header, FFK_TYPE_STORAGE, embedded_deleter); /* cannot fail: a built-in type */
  memset(&s->alloc, 0, sizeof s->alloc);
  s->release = NULL;
  s->extra = owner;
  s->embedded_done = done;
  own(s, device, data, nbytes);
}

void ffk_storage__drop_embedded(ffk_storage *s) {
  uncount(s);
  ffk_object_forget(&s->header);
}

/* "`cuda:0`" for messages; formatted only on the paths that raise. */
static const char *device_text(DLDevice device, char (*buf)[FFK_DEVICE_STR_MAX]) {
  ffk_device_format(device, *buf, sizeof *buf);
  return *buf;
}

static ffk_storage *storage_new(DLDevice device, size_t nbytes, size_t alignment, bool zero) {
  pthread_once(&g_once, register_builtins);
  char dev[FFK_DEVICE_STR_MAX];
  if (alignment == 0) alignment = FFK_STORAGE_DEFAULT_ALIGNMENT;
  if ((alignment & (alignment - 1)) != 0 || alignment > FFK_STORAGE_MAX_ALIGNMENT) {
    ffk_error_set(FFK_ERR_VALUE, "storage alignment %zu is not a power of two up to %d", alignment,
                  FFK_STORAGE_MAX_ALIGNMENT);
    return NULL;
  }
  if (nbytes > (size_t)PTRDIFF_MAX) {
    ffk_error_set(FFK_ERR_VALUE, "storage of %zu bytes is larger than PTRDIFF_MAX", nbytes);
    return NULL;
  }
  int32_t type = (int32_t)device.device_type;
  if (type <= 0 || type >= MAX_DEVICE_TYPES || ffk_device_type_name(type) == NULL || device.device_id < 0) {
    ffk_error_set(FFK_ERR_VALUE, "cannot make storage on device type %d, id %d", (int)type, (int)device.device_id);
    return NULL;
  }
  ffk_allocator alloc;
  if (type == kDLCPU && __atomic_load_n(&g_cpu_is_builtin, __ATOMIC_ACQUIRE)) {
    if (nbytes <= INLINE_MAX && alignment <= INLINE_MAX) return storage_new_inline(device, nbytes, alignment);
    alloc = k_cpu_allocator;
  } else {
    pthread_mutex_lock(&g_lock);
    alloc = g_allocators[type];
    pthread_mutex_unlock(&g_lock);
  }
  if (alloc.allocate == NULL) {
#ifdef FFK_HAS_CUDA
    const char *why = "no allocator is registered for it";
#else
    const char *why = type == kDLCUDA || type == kDLCUDAHost || type == kDLCUDAManaged
                          ? "ffikit was built without CUDA"
                          : "no allocator is registered for it";
#endif
    ffk_error_set(FFK_ERR_RUNTIME, "cannot allocate on device `%s`: %s", device_text(device, &dev), why);
    return NULL;
  }
  ffk_storage *s = (ffk_storage *)ffk_object_alloc(FFK_TYPE_STORAGE, sizeof(ffk_storage), storage_deleter);
  if (s == NULL) return NULL;
  void *data = alloc.allocate(alloc.ctx, device, nbytes, alignment);
  if (data == NULL && (nbytes > 0 || ffk_error_occurred())) {
    if (!ffk_error_occurred())
      ffk_error_set(FFK_ERR_MEMORY, "cannot allocate %zu bytes on `%s`", nbytes, device_text(device, &dev));
    ffk_object_release(&s->header);
    return NULL;
  }
  if (zero && nbytes > 0) {
    if (ffk_device_is_host(device)) {
      memset(data, 0, nbytes);
#ifdef FFK_HAS_CUDA
    } else if (type == kDLCUDA) {
      if (ffk_cuda__zero(device, data, nbytes) != 0) {
        alloc.free(alloc.ctx, device, data, nbytes);
        ffk_object_release(&s->header);
        return NULL;
      }
#endif
    } else if (alloc.copy == NULL) {
      alloc.free(alloc.ctx, device, data, nbytes);
      ffk_object_release(&s->header);
      ffk_error_set(FFK_ERR_NOT_IMPLEMENTED, "cannot zero storage on `%s`: its allocator has no copy",
                    device_text(device, &dev));
      return NULL;
    } else {
      /* Zero through a host buffer in chunks. */
      enum { CHUNK = 1 << 20 };
      void *zeros = ffk_mem_calloc(1, nbytes < CHUNK ? nbytes : CHUNK);
      int rc = zeros != NULL ? 0 : -1;
      DLDevice cpu = {kDLCPU, 0};
      for (size_t off = 0; rc == 0 && off < nbytes; off += CHUNK)
        rc = alloc.copy(alloc.ctx, (char *)data + off, device, zeros, cpu, nbytes - off < CHUNK ? nbytes - off : CHUNK);
      ffk_mem_free(zeros);
      if (rc != 0) {
        alloc.free(alloc.ctx, device, data, nbytes);
        ffk_object_release(&s->header);
        return NULL;
      }
    }
  }
  s->alloc = alloc;
  return own(s, device, data, nbytes);
}

ffk_storage *ffk_storage_new(DLDevice device, size_t nbytes, size_t alignment) {
  return storage_new(device, nbytes, alignment, false);
}

ffk_storage *ffk_storage_new_zeroed(DLDevice device, size_t nbytes, size_t alignment) {
  return storage_new(device, nbytes, alignment, true);
}

void *ffk_storage_data(const ffk_storage *s) { return s->data; }
size_t ffk_storage_nbytes(const ffk_storage *s) { return s->nbytes; }
DLDevice ffk_storage_device(const ffk_storage *s) { return s->device; }
