/*
 * object.c - checked object allocation and initialisation: ffk_object_alloc,
 * ffk_object_realloc, ffk_object_init and the built-in types' ffk_object__alloc_uninit.
 * They raise, and the checks ask the type registry (type.c), so this file lies above
 * error.c; the header initialisation, reference counting and weak references, which raise
 * nothing, are object_core.c, below it.
 */
#include "internal.h"

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
  ffk_object *moved = ffk_mem__raw_realloc(obj, size);
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
