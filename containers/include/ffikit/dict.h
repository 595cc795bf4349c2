/*
 * ffikit/dict.h - Dict: a shared, mutable mapping that keeps insertion order.
 *
 * Keys follow the same rules as Map (ffikit/map.h): 1, True and 1.0 are three keys; str
 * and bytes keys match by content whatever their form; other objects by identity.
 * Updating an existing key keeps its position; erasing keeps the order of the rest.
 *
 * Unlike Map, a Dict is changed in place and every handle sees every change. Each single
 * operation is atomic with respect to every other on the same Dict, from any thread (a
 * small per-object lock). Getters return new references; ffk_dict_to_map gives a
 * consistent snapshot. No lock is held while foreign code runs: replaced or removed
 * keys and values are released once the Dict is consistent and unlocked. An update
 * from another Dict locks both in address order.
 *
 * Every function taking a Dict fails with a ValueError when the handle is NULL, except
 * ffk_dict_size and ffk_dict_contains, which cannot fail and require a valid handle.
 */
#ifndef FFIKIT_DICT_H
#define FFIKIT_DICT_H

#include <ffikit/map.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_dict ffk_dict;

/* A new empty Dict. New reference, or NULL with a MemoryError. */
FFK_API ffk_dict *ffk_dict_new(void);

/*
 * A new Dict from `n` key/value pairs (borrowed; later duplicates win, keeping the first
 * position). New reference, or NULL (ValueError, TypeError, MemoryError).
 */
FFK_API ffk_dict *ffk_dict_from_pairs(const ffk_any *keys, const ffk_any *values, int64_t n);

/* A new Dict with the entries of a Map (borrowed), in its order. New reference or NULL (ValueError, MemoryError). */
FFK_API ffk_dict *ffk_dict_from_map(const ffk_map *m);

/*
 * Like ffk_dict_from_map, but takes over the reference `m` (steals it, also on failure):
 * when it is the only one, the Map's entries move into the Dict without a copy or any
 * reference-count traffic (a Map just built for it); otherwise they are copied. New
 * reference, or NULL with a ValueError (m NULL) or a MemoryError.
 */
FFK_API ffk_dict *ffk_dict_from_map_steal(ffk_map *m);

/* A snapshot of the entries as a new Map. New reference, or NULL (ValueError, MemoryError). */
FFK_API ffk_map *ffk_dict_to_map(ffk_dict *d);

/* The number of entries at the moment of the call. Cannot fail; `d` must be valid. */
FFK_API int64_t ffk_dict_size(ffk_dict *d);

/* Looks `key` up: 1 with a new reference to the value in *out, 0 when missing (*out None), -1 (ValueError). */
FFK_API int ffk_dict_get(ffk_dict *d, const ffk_any *key, ffk_any *out);

/* True when `key` is present. Cannot fail; `d` must be valid. */
FFK_API bool ffk_dict_contains(ffk_dict *d, const ffk_any *key);

/*
 * ffk_dict_get and ffk_dict_contains for the str key whose UTF-8 is `size` bytes at `data`
 * (NULs allowed; data may be NULL when size is 0), without making a key value: the rule of
 * ffk_map_get_str (ffikit/map.h), hashed before the lock is taken. ffk_dict_get_str: 1
 * with a new reference in *out, 0 missing (*out None), -1 with *out None and a ValueError
 * (NULL dict, data NULL with size > 0). ffk_dict_contains_str: 1, 0, or -1 (the same).
 */
FFK_API int ffk_dict_get_str(ffk_dict *d, const char *data, size_t size, ffk_any *out);
FFK_API int ffk_dict_contains_str(ffk_dict *d, const char *data, size_t size);

/* Sets key -> value (owned copies). 0, or -1 with the Dict unchanged (ValueError, TypeError, MemoryError). */
FFK_API int ffk_dict_set(ffk_dict *d, const ffk_any *key, const ffk_any *value);

/*
 * Python's setdefault: when `key` is present, 1 with its value (new reference) in *out;
 * otherwise sets key -> `dflt` and returns 0 with a new reference to it in *out. -1 on
 * error (*out None; ValueError, TypeError, MemoryError).
 */
FFK_API int ffk_dict_setdefault(ffk_dict *d, const ffk_any *key, const ffk_any *dflt, ffk_any *out);

/* Removes `key` and moves its value to *out. 0, or -1 with *out None and a KeyError naming the key. */
FFK_API int ffk_dict_pop(ffk_dict *d, const ffk_any *key, ffk_any *out);

/*
 * Removes `key`: 1 with its value moved to *out; 0 when missing, with an owned copy of
 * `dflt` in *out; -1 on error (ValueError, TypeError or MemoryError from copying dflt).
 */
FFK_API int ffk_dict_pop_default(ffk_dict *d, const ffk_any *key, const ffk_any *dflt, ffk_any *out);

/* Removes `key`: 1 when it was present, 0 when not, -1 (ValueError). */
FFK_API int ffk_dict_erase(ffk_dict *d, const ffk_any *key);

/* Removes every entry. 0, or -1 (ValueError). */
FFK_API int ffk_dict_clear(ffk_dict *d);

/*
 * Sets every entry of `other`, a Map or a Dict (borrowed; may be `d` itself, which
 * changes nothing), in other's order; other's values win. All or nothing: 0, or -1
 * with `d` unchanged (ValueError, TypeError for another kind of object, MemoryError).
 */
FFK_API int ffk_dict_update(ffk_dict *d, const ffk_object *other);

/*
 * A snapshot of the keys, the values, or (key, value) Tuples (`part`, see ffikit/map.h),
 * as a new Array in insertion order, taken in one atomic step. New reference, or NULL
 * with a ValueError (NULL handle, `part` not an ffk_map_part constant) or a MemoryError.
 */
FFK_API ffk_array *ffk_dict_collect(ffk_dict *d, ffk_map_part part);

/* ffk_dict_collect with FFK_MAP_KEYS, FFK_MAP_VALUES and FFK_MAP_ITEMS. */
FFK_API ffk_array *ffk_dict_keys(ffk_dict *d);
FFK_API ffk_array *ffk_dict_values(ffk_dict *d);
FFK_API ffk_array *ffk_dict_items(ffk_dict *d);

/*
 * Iteration in insertion order that notices changes. The iterator borrows the Dict: the
 * caller keeps it alive. ffk_dict_iter_next returns 1 with new references in *key and
 * *value (either may be NULL when unwanted), 0 at the end, or -1 with a RuntimeError
 * "Dict changed during iteration" once a key was added or removed (by any thread) since
 * ffk_dict_iter_init. Setting the value of an existing key is not such a change.
 */
typedef struct ffk_dict_iter {
  ffk_dict *dict;
  int64_t pos;
  uint64_t version;
} ffk_dict_iter;

FFK_API void ffk_dict_iter_init(ffk_dict_iter *it, ffk_dict *d);
FFK_API int ffk_dict_iter_next(ffk_dict_iter *it, ffk_any *key, ffk_any *value);

FFK_EXTERN_C_END

#endif /* FFIKIT_DICT_H */
