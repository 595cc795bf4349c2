/*
 * ffikit/unstable/map.h - a Map's entries by slot: what a binding's entry cache indexes.
 *
 * This header is ffikit's UNSTABLE tier: the API that bindings (the Python extension, a
 * binding of another language) and ffikit's own components build their speed on, with no
 * stability promise: a minor release may change or remove any of it, and its names stay
 * out of <ffikit/ffikit.h> and of every stable header, which never include this one. User
 * code should not need it; a binding that does includes it by name and rebuilds with each
 * ffikit release. The rule for a binding's copies of C state, and every cache that relies
 * on this tier, is in docs/design.md, "Bindings: what a binding may keep": a binding keeps
 * a copy only through a coherence signal documented here, and relies on exactly what these
 * comments promise.
 */
#ifndef FFIKIT_UNSTABLE_MAP_H
#define FFIKIT_UNSTABLE_MAP_H

#include <ffikit/map.h>

FFK_EXTERN_C_BEGIN

/*
 * Slots, for a binding that keeps something per entry (the Python Map's converted keys and
 * values: ffkpy_Map.cache in bindings/python/src/container.h), with copy-on-write as the
 * coherence signal: every entry has a slot in [0, ffk_map_slot_count(m)), fixed while `m` is not
 * mutated (a Map shared with anyone never is: copy-on-write). ffk_map_find and
 * ffk_map_find_str give the slot of a key (as ffk_map_get / ffk_map_get_str find it) or -1
 * when missing or when an argument is NULL; ffk_map_next's *pos - 1, after it returns true,
 * is the slot of the entry it gave. ffk_map_entry sets *key and *value to the slot's key
 * and value, borrowed from `m` like ffk_map_next's, and returns true; false (nothing set)
 * for a slot out of range or of an erased entry. None of them can fail; a NULL map has no
 * slots.
 */
FFK_API int64_t ffk_map_find(const ffk_map *m, const ffk_any *key);
FFK_API int64_t ffk_map_find_str(const ffk_map *m, const char *data, size_t size);
FFK_API int64_t ffk_map_slot_count(const ffk_map *m);
FFK_API bool ffk_map_entry(const ffk_map *m, int64_t slot, const ffk_any **key, const ffk_any **value);

FFK_EXTERN_C_END

#endif /* FFIKIT_UNSTABLE_MAP_H */
