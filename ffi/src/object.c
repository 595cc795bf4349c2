/*
 * object.c - the allocation path, test hooks, reference counting and weak references.
 *
 * Invariants:
 *  - Every ffikit object and buffer is allocated by ffk_mem__raw_alloc; in FFK_TESTING
 *    builds that is where the failing-allocator countdown fires and where objects are
 *    counted live (per type, process-wide).
 *  - The refcount word holds strong (low 32 bits) and weak (high 32 bits) counts, the
 *    strong holders sharing one weak unit. Memory is freed only when the weak count
 *    reaches zero, so a weak holder can always read the header of a dead object.
 */
#include "internal.h"

#include <stdlib.h>

#define STRONG_MASK UINT64_C(0xffffffff)

/* ---- The allocation path and the test hooks. ------------------------------------ */

#ifdef FFK_TESTING
/* Per-thread countdown: when it goes from 1 to 0 the allocation fails. */
static _Thread_local int64_t t_fail_countdown;
static _Thread_local int64_t t_alloc_count;
/* Live objects per type index (untouched pages of this table cost no memory). */
#define LIVE_SLOTS (FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC + 1)
static int64_t g_live[LIVE_SLOTS];
static int64_t g_live_total;

static bool hook_fires(void) {
  ++t_alloc_count;
  return t_fail_countdown > 0 && --t_fail_countdown == 0;
}

static size_t live_slot(int32_t type_index) {
  return type_index >= 0 && type_index < LIVE_SLOTS - 1 ? (size_t)type_index : LIVE_SLOTS - 1;
}

static void object_born(int32_t type_index) {
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

static inline bool hook_fires(void) { return false; }
static void object_born(int32_t type_index) { (void)type_index; }
void ffk_debug__object_died(int32_t type_index) { (void)type_index; }

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

void *ffk_mem__raw_alloc(size_t size) {
  if (hook_fires()) return NULL;
  return malloc(size ? size : 1);
}

static void *raw_realloc(void *ptr, size_t size) {
  if (hook_fires()) return NULL;
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
  void *p = raw_realloc(ptr, size);
  if (FFK_UNLIKELY(p == NULL)) ffk_error_set(FFK_ERR_MEMORY, "out of memory reallocating to %zu bytes", size);
  return p;
}

void ffk_mem_free(void *ptr) { free(ptr); }

/* ---- Objects. --------------------------------------------------------------------- */

/*
 * Object type indices already seen in the registry, a bit each. Types are never
 * removed, so a set bit stays true and the allocation paths test it instead of asking
 * the registry every time.
 */
#define KNOWN_TYPES (FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC)
static uint64_t g_known_object_types[(KNOWN_TYPES + 63) / 64];

/* Asks the registry, the first time for each type. */
static FFK_NOINLINE bool learn_object_type(int32_t type_index) {
  if (!ffk_type_exists(type_index)) return false;
  __atomic_fetch_or(&g_known_object_types[type_index / 64], UINT64_C(1) << (type_index % 64), __ATOMIC_RELAXED);
  return true;
}

static inline bool is_object_type(int32_t type_index) {
  if (type_index < FFK_TYPE_OBJECT_BEGIN || type_index >= KNOWN_TYPES) return false;
  uint64_t word = __atomic_load_n(&g_known_object_types[type_index / 64], __ATOMIC_RELAXED);
  return FFK_LIKELY(word & (UINT64_C(1) << (type_index % 64))) || learn_object_type(type_index);
}

void ffk_object__init(ffk_object *obj, int32_t type_index, ffk_deleter deleter) {
  obj->refcount = FFK_REFCOUNT_INIT;
  obj->type_index = type_index;
  obj->flags = 0;
  obj->deleter = deleter;
  object_born(type_index);
}

ffk_object *ffk_object__alloc_uninit(int32_t type_index, size_t size, ffk_deleter deleter) {
  ffk_object *obj = ffk_mem__raw_alloc(size);
  if (FFK_UNLIKELY(obj == NULL)) {
    ffk_error_set(FFK_ERR_MEMORY, "out of memory allocating a %zu-byte %s", size, ffk_type_name(type_index));
    return NULL;
  }
  ffk_object__init(obj, type_index, deleter);
  return obj;
}

ffk_object *ffk_object_alloc(int32_t type_index, size_t size, ffk_deleter deleter) {
  if (FFK_UNLIKELY(!is_object_type(type_index))) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_object_alloc: type index %d is not an object type", (int)type_index);
    return NULL;
  }
  if (FFK_UNLIKELY(size < sizeof(ffk_object) || deleter == NULL)) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_object_alloc: size %zu is smaller than the header or deleter is NULL", size);
    return NULL;
  }
  ffk_object *obj = ffk_object__alloc_uninit(type_index, size, deleter);
  if (obj != NULL) memset(obj + 1, 0, size - sizeof(ffk_object));
  return obj;
}

ffk_object *ffk_object_realloc(ffk_object *obj, size_t size) {
  if (FFK_UNLIKELY(size < sizeof(ffk_object))) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_object_realloc: size %zu is smaller than the header", size);
    return NULL;
  }
  assert(ffk_object_is_unique(obj) && !(obj->flags & FFK_OBJECT_IMMORTAL));
  ffk_object *moved = raw_realloc(obj, size);
  if (FFK_UNLIKELY(moved == NULL))
    ffk_error_set(FFK_ERR_MEMORY, "out of memory growing a %s to %zu bytes", ffk_type_name(obj->type_index), size);
  return moved;
}

static FFK_NOINLINE int init_error(const ffk_object *obj, int32_t type_index, ffk_deleter deleter) {
  if (obj == NULL || deleter == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_object_init: the %s is NULL", obj == NULL ? "object" : "deleter");
  return ffk_error_set(FFK_ERR_VALUE, "ffk_object_init: type index %d is not an object type", (int)type_index);
}

int ffk_object_init(ffk_object *obj, int32_t type_index, ffk_deleter deleter) {
  if (FFK_UNLIKELY(obj == NULL || deleter == NULL || !is_object_type(type_index)))
    return init_error(obj, type_index, deleter);
  ffk_object__init(obj, type_index, deleter);
  return 0;
}

void ffk_object_forget(ffk_object *obj) {
  if (obj != NULL && !(obj->flags & FFK_OBJECT_IMMORTAL)) ffk_debug__object_died(obj->type_index);
}

void ffk_object_free(ffk_object *obj) {
  if (obj == NULL || (obj->flags & FFK_OBJECT_IMMORTAL)) return;
  ffk_debug__object_died(obj->type_index);
  free(obj);
}

void ffk_object_retain(ffk_object *obj) {
  assert(obj != NULL);
  FFK_ATOMIC_ADD(&obj->refcount, FFK_REFCOUNT_STRONG_ONE, __ATOMIC_RELAXED);
}

void ffk_object_release(ffk_object *obj) {
  if (obj == NULL) return;
  /*
   * The only strong reference and no weak one: no other thread can reach the count
   * (only holders retain, and weak holders upgrade), so the object goes without a
   * read-modify-write. The acquire load pairs with earlier holders' release decrements.
   */
  if (FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT) {
    obj->deleter(obj, FFK_DELETER_BOTH);
    return;
  }
  uint64_t before = FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_STRONG_ONE, FFK_DECREMENT_ORDER);
  if (FFK_LIKELY((before & STRONG_MASK) != 1)) return;
  FFK_ACQUIRE_FENCE();
  if (before == FFK_REFCOUNT_INIT) {
    /* No weak holders: nobody can observe the object any more. */
    obj->deleter(obj, FFK_DELETER_BOTH);
    return;
  }
  obj->deleter(obj, FFK_DELETER_DESTROY);
  /* Give back the weak unit the strong holders shared. */
  if (FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, FFK_DECREMENT_ORDER) == FFK_REFCOUNT_WEAK_ONE) {
    FFK_ACQUIRE_FENCE();
    obj->deleter(obj, FFK_DELETER_FREE);
  }
}

uint32_t ffk_object_use_count(const ffk_object *obj) {
  if (obj == NULL) return 0;
  return (uint32_t)(FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED) & STRONG_MASK);
}

uint32_t ffk_object_weak_count(const ffk_object *obj) {
  if (obj == NULL) return 0;
  uint64_t rc = FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED);
  uint32_t weak = (uint32_t)(rc >> 32);
  /* The strong holders share one weak unit while any of them is alive. */
  return (rc & STRONG_MASK) != 0 && weak > 0 ? weak - 1 : weak;
}

bool ffk_object_is_unique(const ffk_object *obj) {
  return obj != NULL && FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT;
}

void ffk_weak_retain(ffk_object *obj) {
  assert(obj != NULL);
  FFK_ATOMIC_ADD(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, __ATOMIC_RELAXED);
}

void ffk_weak_release(ffk_object *obj) {
  if (obj == NULL) return;
  if (FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, FFK_DECREMENT_ORDER) == FFK_REFCOUNT_WEAK_ONE) {
    FFK_ACQUIRE_FENCE();
    obj->deleter(obj, FFK_DELETER_FREE);
  }
}

ffk_object *ffk_weak_lock(ffk_object *obj) {
  if (obj == NULL) return NULL;
  uint64_t rc = FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED);
  do {
    if ((rc & STRONG_MASK) == 0) return NULL;
  } while (!__atomic_compare_exchange_n(&obj->refcount, &rc, rc + FFK_REFCOUNT_STRONG_ONE, true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
  return obj;
}

uint32_t ffk_abi_version(void) { return FFK_ABI_VERSION; }

const char *ffk_version(void) { return FFK_VERSION; }
