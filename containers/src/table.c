/*
 * table.c - the ordered hash table shared by Map and Dict (CPython's compact dict).
 *
 * Invariants:
 *  - entries[0, used) are in insertion order; `size` of them are live.
 *  - With an index (capacity > TABLE_SMALL), every live entry is reachable from its
 *    hash's probe sequence before an empty (-1) slot; erased entries leave -2 dummies.
 *    index_size is a power of two of at least 3/2 * capacity, so probes always end.
 *  - Growing rebuilds entries densely (dropping deleted ones) and the index from scratch.
 */
#include "table.h"

#include <string.h>

#define EMPTY (-1)
#define DUMMY (-2)
#define MAX_ENTRIES ((int64_t)INT32_MAX / 2)

void ffk_table__init(ffk_table *t) { memset(t, 0, sizeof *t); }

void ffk_table__free(ffk_table *t) {
  ffk_table_entry *entries = t->entries;
  int64_t used = t->used;
  int32_t *index = t->index;
  ffk_table__init(t); /* consistent (empty) before any release runs foreign code */
  for (int64_t i = 0; i < used; ++i) {
    if (entries[i].key.type_index == TABLE_DELETED) continue;
    /* Plain keys and values (ints, SmallStr) own nothing: no call for them. */
    if (ffk_any_is_object(&entries[i].key)) ffk_any_release(&entries[i].key);
    if (ffk_any_is_object(&entries[i].value)) ffk_any_release(&entries[i].value);
  }
  ffk_mem_free(entries);
  ffk_mem_free(index);
}

static int64_t index_size_for(int64_t capacity) {
  if (capacity <= TABLE_SMALL) return 0;
  int64_t n = 16;
  while (n < capacity + capacity / 2) n *= 2;
  return n;
}


/* Fresh arrays for `capacity` entries (index all EMPTY). 0, or -1 with nothing allocated. */
static int alloc_arrays(int64_t capacity, ffk_table_entry **entries, int32_t **index, int64_t *index_size) {
  if (capacity > MAX_ENTRIES)
    return ffk_error_set(FFK_ERR_MEMORY, "hash table of %lld entries is too large", (long long)capacity);
  *index_size = index_size_for(capacity);
  *index = NULL;
  *entries = ffk_mem_alloc((size_t)capacity * sizeof **entries);
  if (*entries == NULL) return -1;
  if (*index_size > 0) {
    *index = ffk_mem_alloc((size_t)*index_size * sizeof **index);
    if (*index == NULL) {
      ffk_mem_free(*entries);
      return -1;
    }
    memset(*index, 0xff, (size_t)*index_size * sizeof **index); /* all EMPTY */
  }
  return 0;
}

/* Copies the live entries of `src` densely into fresh arrays and indexes them. Returns the count. */
static int64_t fill(ffk_table_entry *entries, int32_t *index, int64_t index_size, const ffk_table *src) {
  int64_t n = 0;
  for (int64_t i = 0; i < src->used; ++i) {
    if (src->entries[i].key.type_index == TABLE_DELETED) continue;
    entries[n] = src->entries[i];
    if (index) ffk_table__index_insert(index, index_size, entries[n].hash, n);
    ++n;
  }
  return n;
}

static int64_t capacity_for(int64_t live) {
  int64_t capacity = 4;
  while (capacity < live) capacity *= 2;
  return capacity;
}

/* Moves the live entries into arrays sized for `capacity`. 0, or -1 with t unchanged. */
static int rebuild(ffk_table *t, int64_t capacity) {
  ffk_table_entry *entries;
  int32_t *index;
  int64_t index_size;
  if (alloc_arrays(capacity, &entries, &index, &index_size) != 0) return -1;
  int64_t n = fill(entries, index, index_size, t);
  ffk_mem_free(t->entries);
  ffk_mem_free(t->index);
  t->entries = entries;
  t->index = index;
  t->used = n;
  t->capacity = capacity;
  t->index_size = index_size;
  return 0;
}

int ffk_table__reserve(ffk_table *t, int64_t n) {
  if (t->used + n <= t->capacity) return 0;
  int64_t live = t->size + n;
  if (live > MAX_ENTRIES) return ffk_error_set(FFK_ERR_MEMORY, "hash table of %lld entries is too large", (long long)live);
  /* Room for twice what will be live; when deletions alone make room this also compacts. */
  return rebuild(t, capacity_for(live * 2));
}

int ffk_table__copy(ffk_table *dst, const ffk_table *src, int64_t extra_room) {
  ffk_table__init(dst);
  int64_t capacity = capacity_for(src->size + extra_room);
  if (alloc_arrays(capacity, &dst->entries, &dst->index, &dst->index_size) != 0) return -1;
  dst->used = dst->size = fill(dst->entries, dst->index, dst->index_size, src);
  dst->capacity = capacity;
  for (int64_t i = 0; i < dst->used; ++i) {
    ffk_any_retain(&dst->entries[i].key);
    ffk_any_retain(&dst->entries[i].value);
  }
  return 0;
}

int64_t ffk_table__find(const ffk_table *t, const ffk_any *key, uint64_t hash) {
  if (t->index == NULL) {
    for (int64_t i = 0; i < t->used; ++i) {
      const ffk_table_entry *e = &t->entries[i];
      if (e->hash == hash && e->key.type_index != TABLE_DELETED && ffk_any_equal(&e->key, key)) return i;
    }
    return -1;
  }
  uint64_t mask = (uint64_t)t->index_size - 1, perturb = hash, i = hash & mask;
  for (;;) {
    int32_t slot = t->index[i];
    if (slot == EMPTY) return -1;
    if (slot >= 0) {
      const ffk_table_entry *e = &t->entries[slot];
      if (e->hash == hash && ffk_any_equal(&e->key, key)) return slot;
    }
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & mask;
  }
}

int ffk_table__presize(ffk_table *t, int64_t n) {
  if (n <= t->capacity - t->used) return 0;
  if (t->size + n > MAX_ENTRIES)
    return ffk_error_set(FFK_ERR_MEMORY, "hash table of %lld entries is too large", (long long)(t->size + n));
  return rebuild(t, capacity_for(t->size + n));
}

void ffk_table__erase_at(ffk_table *t, int64_t pos, ffk_any *key, ffk_any *value) {
  ffk_table_entry *e = &t->entries[pos];
  if (t->index) {
    uint64_t mask = (uint64_t)t->index_size - 1, perturb = e->hash, i = e->hash & mask;
    while (t->index[i] != (int32_t)pos) {
      perturb >>= 5;
      i = (i * 5 + perturb + 1) & mask;
    }
    t->index[i] = DUMMY;
  }
  *key = e->key;
  *value = e->value;
  e->key = ffk_any_none();
  e->key.type_index = TABLE_DELETED;
  e->value = ffk_any_none();
  --t->size;
  /* Trailing deleted entries are reclaimed at once (a pop from the end stays O(1)). */
  while (t->used > 0 && t->entries[t->used - 1].key.type_index == TABLE_DELETED && t->index == NULL) --t->used;
}

ffk_table_entry *ffk_table__next(const ffk_table *t, int64_t *pos) {
  while (*pos < t->used) {
    ffk_table_entry *e = &t->entries[(*pos)++];
    if (e->key.type_index != TABLE_DELETED) return e;
  }
  return NULL;
}
