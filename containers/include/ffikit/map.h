/*
 * ffikit/map.h - Map: a copy-on-write mapping that keeps insertion order.
 *
 * Keys follow ffk_any_equal/ffk_any_hash: 1, True and 1.0 are three keys; str keys
 * match by content whatever their form (so a raw C string view finds a stored String);
 * other objects match by identity. Updating an existing key keeps its position; erasing
 * keeps the order of the rest.
 *
 * Mutators take the handle's address (`ffk_map **m`) and follow the copy-on-write rule
 * of ffikit/array.h: in place when the caller's reference is the only one, else on a
 * copy stored into *m once the change has succeeded. On failure *m is unchanged.
 * Any number of threads may read a shared Map. Conversion to and from the shared Dict:
 * ffk_dict_from_map and ffk_dict_to_map (ffikit/dict.h).
 */
#ifndef FFIKIT_MAP_H
#define FFIKIT_MAP_H

#include <ffikit/array.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_map ffk_map;

/*
 * Which part of each entry an operation on a whole mapping gives: the keys, the values,
 * or (key, value) Tuples. Map and Dict take it (ffk_map_collect, ffk_dict_collect), and
 * the bindings' keys/values/items views pass it through. Constants only ever grow at the end.
 */
typedef enum ffk_map_part {
  FFK_MAP_KEYS = 0,
  FFK_MAP_VALUES = 1,
  FFK_MAP_ITEMS = 2,
} ffk_map_part;

/* A new empty Map. New reference, or NULL with a MemoryError. */
FFK_API ffk_map *ffk_map_new(void);

/*
 * A new Map from `n` key/value pairs (borrowed; later duplicates win, keeping the first
 * position). New reference, or NULL with a ValueError (negative n, NULL arrays), a
 * TypeError (a DLTensor* view) or a MemoryError.
 */
FFK_API ffk_map *ffk_map_from_pairs(const ffk_any *keys, const ffk_any *values, int64_t n);

/*
 * Like ffk_map_from_pairs, but takes over the 2n owned values at `keys` and `values`
 * (steals them, even on failure: each is then released and reset to None), in one pass
 * with one hash per key and no reference-count traffic: the bulk path of a binding that
 * has just made the values (a Python dict -> Map). Views own nothing and are a TypeError
 * naming the pair. New reference, or NULL with a ValueError (negative n, NULL arrays), that
 * TypeError or a MemoryError.
 */
FFK_API ffk_map *ffk_map_from_pairs_steal(ffk_any *keys, ffk_any *values, int64_t n);

/* The number of entries. Cannot fail. */
FFK_API int64_t ffk_map_size(const ffk_map *m);

/*
 * Looks `key` (borrowed) up, with the convention of every lookup (ffk_dict_get too): 1
 * with a new reference to the value in *out, 0 when missing (*out None), or -1 with
 * *out None and a ValueError when `m` or `key` is NULL.
 */
FFK_API int ffk_map_get(const ffk_map *m, const ffk_any *key, ffk_any *out);

/* True when `key` is present. Cannot fail. */
FFK_API bool ffk_map_contains(const ffk_map *m, const ffk_any *key);

/*
 * Lookups by the UTF-8 bytes of a str key (`size` bytes at `data`; NULs allowed; data may
 * be NULL when size is 0), for a binding whose text is in another form (a Python str's
 * cached UTF-8): the result of ffk_map_get / ffk_map_contains with a str value of that
 * content, without making the value. The one rule, for every binding: the bytes are hashed
 * in place with ffk_hash_str (the hash every str key is stored with) and compared, hashes
 * first, with str keys only (never bytes keys; bytes that are not UTF-8 match nothing).
 * ffk_map_get_str returns 1 with a new reference to the value in *out, 0 when missing
 * (*out None), or -1 with *out None and a ValueError (NULL map, data NULL with size > 0).
 * ffk_map_contains_str returns 1, 0, or -1 with the same ValueError.
 */
FFK_API int ffk_map_get_str(const ffk_map *m, const char *data, size_t size, ffk_any *out);
FFK_API int ffk_map_contains_str(const ffk_map *m, const char *data, size_t size);

/*
 * Sets key -> value (owned copies of both). An existing key keeps its position.
 * 0, or -1 with *m unchanged (ValueError for a NULL handle, TypeError, MemoryError).
 */
FFK_API int ffk_map_set(ffk_map **m, const ffk_any *key, const ffk_any *value);

/* Removes `key`: 1 when it was present, 0 when not (*m untouched), -1 with *m unchanged (MemoryError). */
FFK_API int ffk_map_erase(ffk_map **m, const ffk_any *key);

/*
 * Iterates in insertion order without touching reference counts: start with *pos = 0;
 * each call that returns true sets *key and *value to pointers borrowed from `m` (valid
 * while it is held and not mutated through this handle). Returns false at the end.
 */
FFK_API bool ffk_map_next(const ffk_map *m, int64_t *pos, const ffk_any **key, const ffk_any **value);

/*
 * The keys, the values, or (key, value) Tuples (`part`), as a new Array in insertion
 * order. New reference, or NULL with a ValueError (NULL handle, `part` not one of the
 * ffk_map_part constants) or a MemoryError.
 */
FFK_API ffk_array *ffk_map_collect(const ffk_map *m, ffk_map_part part);

/* ffk_map_collect with FFK_MAP_KEYS, FFK_MAP_VALUES and FFK_MAP_ITEMS. */
FFK_API ffk_array *ffk_map_keys(const ffk_map *m);
FFK_API ffk_array *ffk_map_values(const ffk_map *m);
FFK_API ffk_array *ffk_map_items(const ffk_map *m);

/* Sets every entry of `other` into *m (other's values win). 0, or -1 with *m unchanged. */
FFK_API int ffk_map_merge(ffk_map **m, const ffk_map *other);

FFK_EXTERN_C_END

#endif /* FFIKIT_MAP_H */
