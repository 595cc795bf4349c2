/*
 * hash.c - the byte hashes: ffk_hash_bytes and ffk_hash_str (XXH3, from xxHash,
 * header-only, compiled in with XXH_INLINE_ALL). Values hash in any.c (ffk_any_hash,
 * beside ffk_any_equal), whose str and bytes cases are the same seeded XXH3, inline there.
 */
#include "internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t ffk_hash_bytes(const void *data, size_t size) { return XXH3_64bits(data, size); }

/* ffk_any_hash's str case (the seed of the str kind) for bare bytes. */
uint64_t ffk_hash_str(const char *data, size_t size) {
  uint64_t seed = (uint64_t)(uint32_t)FFK_TYPE_STRING * UINT64_C(0x9e3779b97f4a7c15);
  return XXH3_64bits_withSeed(size ? data : "", size, seed);
}
