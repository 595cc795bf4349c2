/*
 * hash.c - ffk_any_hash and ffk_hash_bytes: the hash that agrees with ffk_any_equal.
 *
 * Equal keys hash equal: the hash folds the kinds the way equality does
 * (ffk_any__key_kind: the str forms are one kind, the bytes forms another), hashes str
 * and bytes content with XXH3 (xxHash, header-only, compiled in with XXH_INLINE_ALL),
 * canonicalises -0.0 to 0.0 and every NaN to one NaN, and gives each kind its own seed.
 * Plain values go through ffk_any__mix64 (any.h: murmur3's finaliser), so nearby integers
 * spread over a table. Objects hash by identity, unless their type has key operations
 * (ffk_type_set_key_ops: ffi.StructuralKey hashes by its value's structure).
 */
#include "internal.h"

#include <ffikit/weak_ref.h>

#include <math.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t ffk_any_hash(const ffk_any *v) {
  int32_t kind = ffk_any__key_kind(v->type_index);
  uint64_t seed = (uint64_t)(uint32_t)kind * UINT64_C(0x9e3779b97f4a7c15);
  switch (kind) {
    case FFK_TYPE_NONE:
      return ffk_any__mix64(seed);
    case FFK_TYPE_INT:
      return ffk_any__hash_int(v->v_int); /* the same function, inline for the containers */
    case FFK_TYPE_BOOL:
      return ffk_any__mix64(seed ^ (uint64_t)v->v_int);
    case FFK_TYPE_FLOAT: {
      double x = v->v_float;
      if (x == 0.0) x = 0.0;          /* -0.0 hashes like 0.0 */
      if (isnan(x)) x = NAN;          /* every NaN hashes alike */
      uint64_t bits;
      memcpy(&bits, &x, sizeof bits);
      return ffk_any__mix64(seed ^ bits);
    }
    case FFK_TYPE_DATATYPE:
      return ffk_any__mix64(seed ^ ((uint64_t)v->v_dtype.code << 24 | (uint64_t)v->v_dtype.bits << 16 | v->v_dtype.lanes));
    case FFK_TYPE_DEVICE:
      return ffk_any__mix64(seed ^ ((uint64_t)(uint32_t)ffk_device_type(v->v_device) << 32 | (uint32_t)v->v_device.device_id));
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES: {
      const char *data;
      size_t size;
      ffk_any__content(v, &data, &size);
      return XXH3_64bits_withSeed(data, size, seed);
    }
    case FFK_TYPE_WEAK_REF: /* as ffk_any_equal compares them: by target */
      return ffk_any__mix64(seed ^ (uint64_t)(uintptr_t)ffk_weak_ref_target_address(v->v_obj));
    default:
      if (kind >= FFK_TYPE_STATIC_END && v->v_obj != NULL) { /* a type may hash by content */
        ffk_key_hash_fn fn = ffk_type__key_hash(kind);
        if (fn != NULL) return fn(v->v_obj);
      }
      return ffk_any__mix64(seed ^ (uint64_t)(uintptr_t)v->v_ptr);
  }
}

uint64_t ffk_hash_bytes(const void *data, size_t size) { return XXH3_64bits(data, size); }

/* ffk_any_hash's str case (the seed of the str kind) for bare bytes. */
uint64_t ffk_hash_str(const char *data, size_t size) {
  uint64_t seed = (uint64_t)(uint32_t)FFK_TYPE_STRING * UINT64_C(0x9e3779b97f4a7c15);
  return XXH3_64bits_withSeed(size ? data : "", size, seed);
}
