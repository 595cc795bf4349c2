/*
 * table.h - the ordered hash table Map and Dict share (private to containers).
 *
 * CPython's compact dict layout: `entries` holds {hash, key, value} in insertion order;
 * `index` maps hash slots to entry positions. Tables of at most TABLE_SMALL entries have
 * no index and are scanned linearly. Erasing marks the entry deleted (its key gets type
 * TABLE_DELETED) and leaves a dummy in the index, so the order of the rest is kept;
 * deleted entries are reclaimed when the entries array is rebuilt.
 *
 * Keys and values in live entries are owned. Functions that can fail return 0/-1 with
 * a MemoryError and leave the table unchanged.
 */
#ifndef FFIKIT_CONTAINERS_TABLE_H
#define FFIKIT_CONTAINERS_TABLE_H

#include <ffikit/ffi.h>

#include <string.h>

#define TABLE_SMALL 8
#define TABLE_DELETED (-1)

typedef struct ffk_table_entry {
  uint64_t hash;
  ffk_any key; /* key.type_index == TABLE_DELETED marks an erased entry */
  ffk_any value;
} ffk_table_entry;

typedef struct ffk_table {
  ffk_table_entry *entries;
  int32_t *index;    /* NULL while small; else index_size slots: -1 empty, -2 dummy, else entry position */
  int64_t size;      /* live entries */
  int64_t used;      /* entries[0, used) are live or deleted */
  int64_t capacity;  /* room in entries */
  int64_t index_size;
} ffk_table;

/* An empty table (allocates nothing). */
void ffk_table__init(ffk_table *t);

/* Releases every key and value and frees the arrays, leaving an empty table. */
void ffk_table__free(ffk_table *t);

/* Makes `dst` (uninitialised) a copy of `src` with every key and value retained. 0 or -1. */
int ffk_table__copy(ffk_table *dst, const ffk_table *src, int64_t extra_room);

/* The position of the live entry whose key equals `key`, or -1. Cannot fail. */
int64_t ffk_table__find(const ffk_table *t, const ffk_any *key, uint64_t hash);

/*
 * ffk_table__find for an Int key `x` with hash ffk_any__hash_int(x): the same probe
 * sequence, inline in the caller, comparing keys without a call (an Int equals only an
 * Int of the same value). Map and Dict lookups of int keys take it.
 */
static inline int64_t ffk_table__find_int(const ffk_table *t, int64_t x, uint64_t hash) {
  if (t->index == NULL) {
    ffk_any key = ffk_any_int(x);
    return ffk_table__find(t, &key, hash);
  }
  uint64_t mask = (uint64_t)t->index_size - 1, perturb = hash, i = hash & mask;
  for (;;) {
    int32_t slot = t->index[i];
    if (slot == -1) return -1; /* empty */
    if (slot >= 0) {           /* else -2, a dummy */
      const ffk_table_entry *e = &t->entries[slot];
      if (e->hash == hash && e->key.type_index == FFK_TYPE_INT && e->key.v_int == x) return slot;
    }
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & mask;
  }
}

/* Whether the stored (owned) key `k` is the str whose UTF-8 is data[0, size). */
static inline bool ffk_table__is_str(const ffk_any *k, const char *data, size_t size) {
  if (k->type_index == FFK_TYPE_SMALL_STR) return k->aux == size && (size == 0 || memcmp(k->v_bytes, data, size) == 0);
  if (k->type_index != FFK_TYPE_STRING) return false;
  const ffk_string *s = (const ffk_string *)k->v_obj;
  return s->size == size && memcmp(s->data, data, size) == 0;
}

/*
 * ffk_table__find for the str key whose UTF-8 is data[0, size), with hash
 * ffk_hash_str(data, size): the same probe sequence, comparing hashes first and then
 * the bytes of str keys (a stored key is SmallStr or String: keys are owned). Map and
 * Dict lookups by bytes take it, without making a key value.
 */
static inline int64_t ffk_table__find_str(const ffk_table *t, const char *data, size_t size, uint64_t hash) {
  if (t->index == NULL) {
    for (int64_t i = 0; i < t->used; ++i) {
      const ffk_table_entry *e = &t->entries[i];
      if (e->hash == hash && ffk_table__is_str(&e->key, data, size)) return i; /* an erased key is no str */
    }
    return -1;
  }
  uint64_t mask = (uint64_t)t->index_size - 1, perturb = hash, i = hash & mask;
  for (;;) {
    int32_t slot = t->index[i];
    if (slot == -1) return -1; /* empty */
    if (slot >= 0) {           /* else -2, a dummy */
      const ffk_table_entry *e = &t->entries[slot];
      if (e->hash == hash && ffk_table__is_str(&e->key, data, size)) return slot;
    }
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & mask;
  }
}

/* The position of `key` (any value), by the int path for an Int. Cannot fail. */
static inline int64_t ffk_table__lookup(const ffk_table *t, const ffk_any *key) {
  if (key->type_index == FFK_TYPE_INT) return ffk_table__find_int(t, key->v_int, ffk_any__hash_int(key->v_int));
  return ffk_table__find(t, key, ffk_any_hash(key));
}

/* Copies the value at `pos` into *out as a new reference. */
static inline void ffk_table__value_at(const ffk_table *t, int64_t pos, ffk_any *out) {
  const ffk_any *v = &t->entries[pos].value;
  ffk_any__copy(out, v);
  if (ffk_any_is_object(v)) ffk_any_retain(out);
}

/* Makes room for `n` more entries without another allocation. 0 or -1 (table unchanged). */
int ffk_table__reserve(ffk_table *t, int64_t n);

/*
 * Makes room for exactly `n` more entries (no doubling: a bulk build that knows its size).
 * 0 or -1 (table unchanged).
 */
int ffk_table__presize(ffk_table *t, int64_t n);

/* Puts entry `pos` into the first empty or dummy slot of its probe sequence. */
static inline void ffk_table__index_insert(int32_t *index, int64_t index_size, uint64_t hash, int64_t pos) {
  uint64_t mask = (uint64_t)index_size - 1, perturb = hash, i = hash & mask;
  while (index[i] >= 0) {
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & mask;
  }
  index[i] = (int32_t)pos;
}

/*
 * Appends an entry for a key known to be absent, taking over `key` and `value` (owned,
 * no views). Requires room (ffk_table__reserve(t, 1) succeeded). Cannot fail. Inline:
 * the bulk build appends once per entry.
 */
static inline void ffk_table__append(ffk_table *t, uint64_t hash, ffk_any key, ffk_any value) {
  int64_t pos = t->used++;
  t->entries[pos].hash = hash;
  t->entries[pos].key = key;
  t->entries[pos].value = value;
  if (t->index) ffk_table__index_insert(t->index, t->index_size, hash, pos);
  ++t->size;
}

/*
 * Erases the live entry at `pos`, moving its key and value to *key and *value (the
 * caller releases them once its container is consistent). Cannot fail.
 */
void ffk_table__erase_at(ffk_table *t, int64_t pos, ffk_any *key, ffk_any *value);

/* Advances *pos to the next live entry and returns it, or NULL at the end. Start at 0. */
ffk_table_entry *ffk_table__next(const ffk_table *t, int64_t *pos);

#endif /* FFIKIT_CONTAINERS_TABLE_H */
