/*
 * map.c - Map: a copy-on-write ordered mapping over the shared hash table (table.c).
 *
 * The same copy-on-write protocol as array.c: writable() gives the object itself when
 * unique, else a copy that commit() installs only after the edit succeeded. Every step
 * that can fail (owned copies of views, growing the table) happens before the table
 * changes, so a failure leaves *m exactly as it was.
 */
#include "containers_internal.h"

#include <ffikit/unstable/map.h>

static void map_deleter(void *self, int which) {
  ffk_map *m = self;
  if (which & FFK_DELETER_DESTROY) ffk_table__free(&m->table);
  if (which & FFK_DELETER_FREE) ffk_object_free(&m->header);
}

ffk_map *ffk_map_new(void) {
  ffk_map *m = (ffk_map *)ffk_object_alloc(FFK_TYPE_MAP, sizeof(ffk_map), map_deleter);
  if (m != NULL) ffk_table__init(&m->table);
  return m;
}

int64_t ffk_map_size(const ffk_map *m) { return m->table.size; }

int ffk_map_get(const ffk_map *m, const ffk_any *key, ffk_any *out) {
  if (m == NULL || key == NULL) {
    *out = ffk_any_none();
    return ffk_error_set(FFK_ERR_VALUE, "ffk_map_get: the %s is NULL", m == NULL ? "map handle" : "key");
  }
  int64_t pos = ffk_table__lookup(&m->table, key);
  if (pos < 0) {
    *out = ffk_any_none();
    return 0;
  }
  ffk_table__value_at(&m->table, pos, out);
  return 1;
}

bool ffk_map_contains(const ffk_map *m, const ffk_any *key) {
  return ffk_table__lookup(&m->table, key) >= 0;
}

int ffk_map__check_str_args(const char *fn, const void *handle, const char *data, size_t size, const char *what) {
  if (handle == NULL) return ffk_error_set(FFK_ERR_VALUE, "%s: the %s handle is NULL", fn, what);
  if (data == NULL && size > 0) return ffk_error_set(FFK_ERR_VALUE, "%s: data is NULL but size is %zu", fn, size);
  return 0;
}

int ffk_map_get_str(const ffk_map *m, const char *data, size_t size, ffk_any *out) {
  *out = ffk_any_none();
  if (ffk_map__check_str_args("ffk_map_get_str", m, data, size, "map") != 0) return -1;
  int64_t pos = ffk_table__find_str(&m->table, data, size, ffk_hash_str(data, size));
  if (pos < 0) return 0;
  ffk_table__value_at(&m->table, pos, out);
  return 1;
}

int ffk_map_contains_str(const ffk_map *m, const char *data, size_t size) {
  if (ffk_map__check_str_args("ffk_map_contains_str", m, data, size, "map") != 0) return -1;
  return ffk_table__find_str(&m->table, data, size, ffk_hash_str(data, size)) >= 0;
}

int64_t ffk_map_find(const ffk_map *m, const ffk_any *key) {
  if (m == NULL || key == NULL) return -1;
  return ffk_table__lookup(&m->table, key);
}

int64_t ffk_map_find_str(const ffk_map *m, const char *data, size_t size) {
  if (m == NULL || (data == NULL && size > 0)) return -1;
  return ffk_table__find_str(&m->table, data, size, ffk_hash_str(data, size));
}

int64_t ffk_map_slot_count(const ffk_map *m) { return m == NULL ? 0 : m->table.used; }

bool ffk_map_entry(const ffk_map *m, int64_t slot, const ffk_any **key, const ffk_any **value) {
  if (m == NULL || slot < 0 || slot >= m->table.used || m->table.entries[slot].key.type_index == TABLE_DELETED)
    return false;
  *key = &m->table.entries[slot].key;
  *value = &m->table.entries[slot].value;
  return true;
}

bool ffk_map_next(const ffk_map *m, int64_t *pos, const ffk_any **key, const ffk_any **value) {
  ffk_table_entry *e = ffk_table__next(&m->table, pos);
  if (e == NULL) return false;
  *key = &e->key;
  *value = &e->value;
  return true;
}

ffk_map *ffk_map__from_table(const ffk_table *t, int64_t extra) {
  ffk_map *copy = (ffk_map *)ffk_object_alloc(FFK_TYPE_MAP, sizeof(ffk_map), map_deleter);
  if (copy == NULL) return NULL;
  if (ffk_table__copy(&copy->table, t, extra) != 0) {
    ffk_table__init(&copy->table);
    ffk_object_release(&copy->header);
    return NULL;
  }
  return copy;
}

/* *pm itself when unique, else a copy with room for `extra` more entries (NULL on MemoryError). */
static ffk_map *writable(ffk_map **pm, int64_t extra) {
  return ffk_object_is_unique(&(*pm)->header) ? *pm : ffk_map__from_table(&(*pm)->table, extra);
}

static void commit(ffk_map **pm, ffk_map *w) {
  if (w == *pm) return;
  ffk_map *old = *pm;
  *pm = w;
  ffk_object_release(&old->header);
}

static void abandon(ffk_map **pm, ffk_map *w) {
  if (w != *pm) ffk_object_release(&w->header);
}

/*
 * Sets an owned key/value in a writable map, taking them over (released on failure).
 * The old value of an existing key is moved to *old for the caller to release once
 * everything is consistent.
 */
static int put(ffk_map *w, ffk_any key, ffk_any value, ffk_any *old) {
  *old = ffk_any_none();
  uint64_t hash = ffk_any_hash(&key);
  int64_t pos = ffk_table__find(&w->table, &key, hash);
  if (pos >= 0) {
    *old = w->table.entries[pos].value;
    w->table.entries[pos].value = value; /* store the new value before the old one goes */
    ffk_any_release(&key);
    return 0;
  }
  if (ffk_table__reserve(&w->table, 1) != 0) {
    ffk_any_release(&key);
    ffk_any_release(&value);
    return -1;
  }
  ffk_table__append(&w->table, hash, key, value);
  return 0;
}

int ffk_map_set(ffk_map **pm, const ffk_any *key, const ffk_any *value) {
  if (pm == NULL || *pm == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_map_set: the map handle is NULL");
  ffk_any k, v;
  if (ffk_any_to_owned(key, &k) != 0) return -1;
  if (ffk_any_to_owned(value, &v) != 0) {
    ffk_any_release(&k);
    return -1;
  }
  ffk_map *w = writable(pm, 1);
  if (w == NULL) {
    ffk_any_release(&k);
    ffk_any_release(&v);
    return -1;
  }
  ffk_any old;
  if (put(w, k, v, &old) != 0) {
    abandon(pm, w);
    return -1;
  }
  commit(pm, w);
  ffk_any_release(&old);
  return 0;
}

int ffk_map_erase(ffk_map **pm, const ffk_any *key) {
  if (pm == NULL || *pm == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_map_erase: the map handle is NULL");
  uint64_t hash = ffk_any_hash(key);
  int64_t pos = ffk_table__find(&(*pm)->table, key, hash);
  if (pos < 0) return 0;
  ffk_map *w = writable(pm, 0);
  if (w == NULL) return -1;
  if (w != *pm) pos = ffk_table__find(&w->table, key, hash); /* a copy is compacted: positions move */
  ffk_any old_key, old_value;
  ffk_table__erase_at(&w->table, pos, &old_key, &old_value);
  commit(pm, w);
  ffk_any_release(&old_key);
  ffk_any_release(&old_value);
  return 1;
}

ffk_map *ffk_map_from_pairs(const ffk_any *keys, const ffk_any *values, int64_t n) {
  if (n < 0 || ((keys == NULL || values == NULL) && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_map_from_pairs: %lld pairs from %p and %p", (long long)n, (const void *)keys,
                  (const void *)values);
    return NULL;
  }
  ffk_map *m = ffk_map_new();
  if (m == NULL) return NULL;
  if (n > 0 && ffk_table__reserve(&m->table, n) != 0) goto fail;
  for (int64_t i = 0; i < n; ++i)
    if (ffk_map_set(&m, &keys[i], &values[i]) != 0) goto fail;
  return m;
fail:
  ffk_object_release(&m->header);
  return NULL;
}

/* Whether a value of this type is a borrowed view (ffk_array__is_view, without the call). */
static inline bool is_view_kind(int32_t type_index) {
  return type_index == FFK_TYPE_RAW_STR || type_index == FFK_TYPE_BYTE_ARRAY_PTR || type_index == FFK_TYPE_DLTENSOR_PTR;
}

/* Releases the 2n values not yet moved (from position `from`), views included (which own nothing). */
static void drop_pairs(ffk_any *keys, ffk_any *values, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i) {
    if (ffk_array__is_view(&keys[i])) keys[i] = ffk_any_none();
    if (ffk_array__is_view(&values[i])) values[i] = ffk_any_none();
    ffk_any_release(&keys[i]);
    ffk_any_release(&values[i]);
  }
}

ffk_map *ffk_map_from_pairs_steal(ffk_any *keys, ffk_any *values, int64_t n) {
  if (n < 0 || ((keys == NULL || values == NULL) && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_map_from_pairs_steal: %lld pairs from %p and %p", (long long)n, (void *)keys,
                  (void *)values);
    return NULL;
  }
  ffk_map *m = ffk_map_new();
  if (m == NULL || (n > 0 && ffk_table__presize(&m->table, n) != 0)) {
    drop_pairs(keys, values, 0, n);
    if (m != NULL) ffk_object_release(&m->header);
    return NULL;
  }
  ffk_table *t = &m->table;
  for (int64_t i = 0; i < n; ++i) {
    ffk_any k = keys[i], v = values[i];
    if (FFK_UNLIKELY(is_view_kind(k.type_index) || is_view_kind(v.type_index))) {
      const ffk_any *view = is_view_kind(k.type_index) ? &keys[i] : &values[i];
      ffk_error_set(FFK_ERR_TYPE, "ffk_map_from_pairs_steal: the %s of pair %lld is a borrowed %s view, which owns nothing",
                    view == &keys[i] ? "key" : "value", (long long)i, ffk_any_type_name(view));
      drop_pairs(keys, values, i, n);
      ffk_object_release(&m->header);
      return NULL;
    }
    keys[i] = values[i] = ffk_any_none();
    /* One hash per key, the int and str kinds probed inline (the keys a binding's dict has). */
    uint64_t hash;
    int64_t pos;
    if (k.type_index == FFK_TYPE_INT) {
      hash = ffk_any__hash_int(k.v_int);
      pos = ffk_table__find_int(t, k.v_int, hash);
    } else if (k.type_index == FFK_TYPE_STRING) {
      const ffk_string *str = (const ffk_string *)k.v_obj;
      hash = ffk_hash_str(str->data, str->size);
      pos = ffk_table__find_str(t, str->data, str->size, hash);
    } else if (k.type_index == FFK_TYPE_SMALL_STR) {
      hash = ffk_hash_str(k.v_bytes, k.aux);
      pos = ffk_table__find_str(t, k.v_bytes, k.aux, hash);
    } else {
      hash = ffk_any_hash(&k);
      pos = ffk_table__find(t, &k, hash);
    }
    if (FFK_LIKELY(pos < 0)) {
      ffk_table__append(t, hash, k, v); /* presized above: cannot fail */
      continue;
    }
    ffk_any old = t->entries[pos].value; /* a duplicate key: the later value wins, in the first position */
    t->entries[pos].value = v;
    ffk_any_release(&k);
    ffk_any_release(&old);
  }
  return m;
}

int ffk_map_merge(ffk_map **pm, const ffk_map *other) {
  if (pm == NULL || *pm == NULL || other == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_map_merge: a map is NULL");
  if (other->table.size == 0) return 0;
  /* All-or-nothing: merge into a private copy (entries in `other` are owned: no views). */
  ffk_map *w = ffk_map__from_table(&(*pm)->table, other->table.size);
  if (w == NULL) return -1;
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(&other->table, &pos)) != NULL;) {
    ffk_any k = e->key, v = e->value, old;
    ffk_any_retain(&k);
    ffk_any_retain(&v);
    if (put(w, k, v, &old) != 0) { /* cannot run out of room: reserved above */
      ffk_object_release(&w->header);
      return -1;
    }
    ffk_any_release(&old);
  }
  commit(pm, w);
  return 0;
}

ffk_array *ffk_map__collect(const ffk_table *t, ffk_map_part part) {
  if (part != FFK_MAP_KEYS && part != FFK_MAP_VALUES && part != FFK_MAP_ITEMS) {
    ffk_error_set(FFK_ERR_VALUE, "map part %d is not FFK_MAP_KEYS, FFK_MAP_VALUES or FFK_MAP_ITEMS", (int)part);
    return NULL;
  }
  ffk_array *out = ffk_array_with_capacity(t->size);
  if (out == NULL) return NULL;
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(t, &pos)) != NULL;) {
    ffk_any item;
    if (part == FFK_MAP_ITEMS) {
      ffk_tuple *pair = ffk_tuple_pack(2, e->key, e->value);
      if (pair == NULL) {
        ffk_object_release(&out->header);
        return NULL;
      }
      item = ffk_any_object_steal(&pair->header);
    } else {
      item = part == FFK_MAP_KEYS ? e->key : e->value;
      ffk_any_retain(&item);
    }
    ffk_array_push_steal(&out, &item); /* room reserved: cannot fail */
  }
  return out;
}

ffk_array *ffk_map_collect(const ffk_map *m, ffk_map_part part) {
  if (m == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_map_collect: the map handle is NULL");
    return NULL;
  }
  return ffk_map__collect(&m->table, part);
}

ffk_array *ffk_map_keys(const ffk_map *m) { return ffk_map_collect(m, FFK_MAP_KEYS); }
ffk_array *ffk_map_values(const ffk_map *m) { return ffk_map_collect(m, FFK_MAP_VALUES); }
ffk_array *ffk_map_items(const ffk_map *m) { return ffk_map_collect(m, FFK_MAP_ITEMS); }

/* repr: {"a": 1, 3: 2} */
int ffk_map__repr_table(ffk_repr_ctx *ctx, const ffk_table *t) {
  if (ffk_repr_append(ctx, "{", 1) != 0) return -1;
  int64_t pos = 0;
  bool first = true;
  for (ffk_table_entry *e; (e = ffk_table__next(t, &pos)) != NULL; first = false) {
    if ((!first && ffk_repr_append(ctx, ", ", 2) != 0) || ffk_repr_any(ctx, &e->key) != 0 ||
        ffk_repr_append(ctx, ": ", 2) != 0 || ffk_repr_any(ctx, &e->value) != 0)
      return -1;
  }
  return ffk_repr_append(ctx, "}", 1);
}

int ffk_map__repr(ffk_object *self, ffk_repr_ctx *ctx) { return ffk_map__repr_table(ctx, &((const ffk_map *)self)->table); }
