/*
 * dict.c - Dict: a shared, mutable ordered mapping guarded by a per-object lock.
 *
 * The table is the one Map uses (table.c). The rules of list.c hold here too: every
 * access to the table and to version happens under the lock; version changes whenever
 * a key is added or removed; keys are hashed and values made owned before the lock is
 * taken; replaced and removed keys and values are released after it is dropped.
 * `stamp` changes (under the lock, a release store) with every change at all: version's
 * changes, a value replaced, clear(); a reader that kept what it derived from an entry
 * (the Python wrapper's key cache) checks it with one acquire load (ffk_dict_stamp).
 */
#include "containers_internal.h"
#include "lock.h"

#include <ffikit/dict.h>
#include <ffikit/unstable/dict.h>

struct ffk_dict {
  ffk_object header;
  ffk_lock lock;
  uint64_t version;
  uint64_t stamp; /* atomic accesses only */
  ffk_table table;
};

/* Any change to the entries (lock held): the stamp moves. */
static void touch(ffk_dict *d) { __atomic_store_n(&d->stamp, d->stamp + 1, __ATOMIC_RELEASE); }

static void dict_deleter(void *self, int which) {
  ffk_dict *d = self;
  if (which & FFK_DELETER_DESTROY) {
    ffk_table t = d->table;
    ffk_table__init(&d->table);
    ffk_table__free(&t);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&d->header);
}

static int null_handle(const char *fn) { return ffk_error_set(FFK_ERR_VALUE, "%s: the dict handle is NULL", fn); }

ffk_dict *ffk_dict_new(void) {
  ffk_dict *d = (ffk_dict *)ffk_object_alloc(FFK_TYPE_DICT, sizeof(ffk_dict), dict_deleter);
  if (d == NULL) return NULL;
  ffk_lock__init(&d->lock);
  ffk_table__init(&d->table);
  return d;
}

ffk_dict *ffk_dict_from_pairs(const ffk_any *keys, const ffk_any *values, int64_t n) {
  if (n < 0 || ((keys == NULL || values == NULL) && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_dict_from_pairs: %lld pairs from %p and %p", (long long)n, (const void *)keys,
                  (const void *)values);
    return NULL;
  }
  ffk_dict *d = ffk_dict_new();
  if (d == NULL) return NULL;
  if (n > 0 && ffk_table__reserve(&d->table, n) != 0) goto fail;
  for (int64_t i = 0; i < n; ++i)
    if (ffk_dict_set(d, &keys[i], &values[i]) != 0) goto fail;
  return d;
fail:
  ffk_object_release(&d->header);
  return NULL;
}

ffk_dict *ffk_dict_from_map(const ffk_map *m) {
  if (m == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_dict_from_map: the map is NULL");
    return NULL;
  }
  ffk_dict *d = ffk_dict_new();
  if (d == NULL) return NULL;
  if (ffk_table__copy(&d->table, &m->table, 0) != 0) {
    ffk_table__init(&d->table);
    ffk_object_release(&d->header);
    return NULL;
  }
  return d;
}

ffk_dict *ffk_dict_from_map_steal(ffk_map *m) {
  if (m == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_dict_from_map_steal: the map is NULL");
    return NULL;
  }
  if (!ffk_object_is_unique(&m->header)) { /* shared: its entries stay with the other holders */
    ffk_dict *d = ffk_dict_from_map(m);
    ffk_object_release(&m->header);
    return d;
  }
  ffk_dict *d = ffk_dict_new();
  if (d != NULL) { /* the only reference: its table moves, entries and all */
    ffk_table__free(&d->table);
    d->table = m->table;
    ffk_table__init(&m->table);
  }
  ffk_object_release(&m->header);
  return d;
}

ffk_map *ffk_dict_to_map(ffk_dict *d) {
  if (d == NULL) {
    null_handle("ffk_dict_to_map");
    return NULL;
  }
  ffk_lock__acquire(&d->lock);
  ffk_map *m = ffk_map__from_table(&d->table, 0);
  ffk_lock__release(&d->lock);
  return m;
}

/* ---- Reading. --------------------------------------------------------------------- */

int64_t ffk_dict_size(ffk_dict *d) {
  ffk_lock__acquire(&d->lock);
  int64_t size = d->table.size;
  ffk_lock__release(&d->lock);
  return size;
}

int ffk_dict_get(ffk_dict *d, const ffk_any *key, ffk_any *out) {
  *out = ffk_any_none();
  if (d == NULL) return null_handle("ffk_dict_get");
  bool is_int = key->type_index == FFK_TYPE_INT; /* an Int takes the inline hash and probe */
  uint64_t hash = is_int ? ffk_any__hash_int(key->v_int) : ffk_any_hash(key); /* outside the lock */
  ffk_lock__acquire(&d->lock);
  int64_t pos = is_int ? ffk_table__find_int(&d->table, key->v_int, hash) : ffk_table__find(&d->table, key, hash);
  if (pos >= 0) ffk_table__value_at(&d->table, pos, out);
  ffk_lock__release(&d->lock);
  return pos >= 0;
}

bool ffk_dict_contains(ffk_dict *d, const ffk_any *key) {
  bool is_int = key->type_index == FFK_TYPE_INT; /* an Int takes the inline hash and probe */
  uint64_t hash = is_int ? ffk_any__hash_int(key->v_int) : ffk_any_hash(key);
  ffk_lock__acquire(&d->lock);
  int64_t pos = is_int ? ffk_table__find_int(&d->table, key->v_int, hash) : ffk_table__find(&d->table, key, hash);
  ffk_lock__release(&d->lock);
  return pos >= 0;
}

/* ffk_dict_get_str and its stamped form: the lookup and the stamp in one lock hold. */
static int get_str(const char *fn, ffk_dict *d, const char *data, size_t size, ffk_any *out, uint64_t *stamp) {
  *out = ffk_any_none();
  if (stamp != NULL) *stamp = 0;
  if (ffk_map__check_str_args(fn, d, data, size, "dict") != 0) return -1;
  uint64_t hash = ffk_hash_str(data, size); /* outside the lock */
  ffk_lock__acquire(&d->lock);
  int64_t pos = ffk_table__find_str(&d->table, data, size, hash);
  if (pos >= 0) ffk_table__value_at(&d->table, pos, out);
  if (stamp != NULL) *stamp = d->stamp;
  ffk_lock__release(&d->lock);
  return pos >= 0;
}

int ffk_dict_get_str(ffk_dict *d, const char *data, size_t size, ffk_any *out) {
  return get_str("ffk_dict_get_str", d, data, size, out, NULL);
}

int ffk_dict_get_str_stamped(ffk_dict *d, const char *data, size_t size, ffk_any *out, uint64_t *stamp) {
  return get_str("ffk_dict_get_str_stamped", d, data, size, out, stamp);
}

uint64_t ffk_dict_stamp(ffk_dict *d) { return __atomic_load_n(&d->stamp, __ATOMIC_ACQUIRE); }

const uint64_t *ffk_dict_stamp_address(ffk_dict *d) { return d != NULL ? &d->stamp : NULL; }

int ffk_dict_contains_str(ffk_dict *d, const char *data, size_t size) {
  if (ffk_map__check_str_args("ffk_dict_contains_str", d, data, size, "dict") != 0) return -1;
  uint64_t hash = ffk_hash_str(data, size);
  ffk_lock__acquire(&d->lock);
  int64_t pos = ffk_table__find_str(&d->table, data, size, hash);
  ffk_lock__release(&d->lock);
  return pos >= 0;
}

ffk_array *ffk_dict_collect(ffk_dict *d, ffk_map_part part) {
  if (d == NULL) {
    null_handle("ffk_dict_collect");
    return NULL;
  }
  ffk_lock__acquire(&d->lock);
  ffk_array *a = ffk_map__collect(&d->table, part);
  ffk_lock__release(&d->lock);
  return a;
}

ffk_array *ffk_dict_keys(ffk_dict *d) { return ffk_dict_collect(d, FFK_MAP_KEYS); }
ffk_array *ffk_dict_values(ffk_dict *d) { return ffk_dict_collect(d, FFK_MAP_VALUES); }
ffk_array *ffk_dict_items(ffk_dict *d) { return ffk_dict_collect(d, FFK_MAP_ITEMS); }

/* ---- Mutation. -------------------------------------------------------------------- */

/*
 * Sets the owned key -> value (taken over). With `keep_existing`, an existing entry is
 * left alone and its value returned retained in *found (setdefault); otherwise the old
 * value is replaced. Whatever leaves the table is released after unlocking. Returns 1
 * when the key existed, 0 when it was added, -1 on MemoryError (both released).
 */
static int put(ffk_dict *d, ffk_any key, ffk_any value, bool keep_existing, ffk_any *found) {
  uint64_t hash = ffk_any_hash(&key);
  ffk_any drop_key = key, drop_value = ffk_any_none();
  ffk_lock__acquire(&d->lock);
  int64_t pos = ffk_table__find(&d->table, &key, hash);
  int rc;
  if (pos >= 0) {
    ffk_any *slot = &d->table.entries[pos].value;
    if (keep_existing) {
      *found = *slot;
      ffk_any_retain(found);
      drop_value = value;
    } else {
      drop_value = *slot;
      *slot = value; /* store the new value before the old one goes */
      touch(d);
    }
    rc = 1;
  } else if (ffk_table__reserve(&d->table, 1) == 0) {
    ffk_table__append(&d->table, hash, key, value);
    ++d->version;
    touch(d);
    drop_key = ffk_any_none();
    rc = 0;
  } else {
    drop_value = value;
    rc = -1;
  }
  ffk_lock__release(&d->lock);
  ffk_any_release(&drop_key);
  ffk_any_release(&drop_value);
  return rc;
}

/* Owned copies of a key and a value; 0, or -1 with nothing left over. */
static int owned_pair(const ffk_any *key, const ffk_any *value, ffk_any *k, ffk_any *v) {
  if (ffk_any_to_owned(key, k) != 0) return -1;
  if (ffk_any_to_owned(value, v) != 0) {
    ffk_any_release(k);
    return -1;
  }
  return 0;
}

int ffk_dict_set(ffk_dict *d, const ffk_any *key, const ffk_any *value) {
  if (d == NULL) return null_handle("ffk_dict_set");
  ffk_any k, v;
  if (owned_pair(key, value, &k, &v) != 0) return -1;
  return put(d, k, v, false, NULL) < 0 ? -1 : 0;
}

int ffk_dict_setdefault(ffk_dict *d, const ffk_any *key, const ffk_any *dflt, ffk_any *out) {
  *out = ffk_any_none();
  if (d == NULL) return null_handle("ffk_dict_setdefault");
  ffk_any k, v;
  if (owned_pair(key, dflt, &k, &v) != 0) return -1;
  ffk_any inserted = v;
  ffk_any_retain(&inserted); /* the caller's reference if v goes in */
  int rc = put(d, k, v, true, out);
  if (rc == 0) *out = inserted;
  else ffk_any_release(&inserted);
  return rc;
}

/* Removes `key` under the lock, moving key and value out. 1 found, 0 missing. */
static int take(ffk_dict *d, const ffk_any *key, ffk_any *old_key, ffk_any *old_value) {
  uint64_t hash = ffk_any_hash(key);
  ffk_lock__acquire(&d->lock);
  int64_t pos = ffk_table__find(&d->table, key, hash);
  if (pos >= 0) {
    ffk_table__erase_at(&d->table, pos, old_key, old_value);
    ++d->version;
    touch(d);
  }
  ffk_lock__release(&d->lock);
  return pos >= 0;
}

int ffk_dict_pop(ffk_dict *d, const ffk_any *key, ffk_any *out) {
  *out = ffk_any_none();
  if (d == NULL) return null_handle("ffk_dict_pop");
  ffk_any old_key;
  if (take(d, key, &old_key, out)) {
    ffk_any_release(&old_key);
    return 0;
  }
  ffk_string *r = ffk_any_repr(key);
  if (r == NULL) return -1;
  ffk_error_set(FFK_ERR_KEY, "key %s is not in the Dict", ffk_string_data(r));
  ffk_object_release(&r->header);
  return -1;
}

int ffk_dict_pop_default(ffk_dict *d, const ffk_any *key, const ffk_any *dflt, ffk_any *out) {
  *out = ffk_any_none();
  if (d == NULL) return null_handle("ffk_dict_pop_default");
  ffk_any old_key;
  if (take(d, key, &old_key, out)) {
    ffk_any_release(&old_key);
    return 1;
  }
  return ffk_any_to_owned(dflt, out) == 0 ? 0 : -1;
}

int ffk_dict_erase(ffk_dict *d, const ffk_any *key) {
  if (d == NULL) return null_handle("ffk_dict_erase");
  ffk_any old_key, old_value;
  if (!take(d, key, &old_key, &old_value)) return 0;
  ffk_any_release(&old_key);
  ffk_any_release(&old_value);
  return 1;
}

int ffk_dict_clear(ffk_dict *d) {
  if (d == NULL) return null_handle("ffk_dict_clear");
  ffk_lock__acquire(&d->lock);
  ffk_table old = d->table;
  ffk_table__init(&d->table);
  if (old.size > 0) {
    ++d->version;
    touch(d);
  }
  ffk_lock__release(&d->lock);
  ffk_table__free(&old);
  return 0;
}

int ffk_dict_update(ffk_dict *d, const ffk_object *other) {
  if (d == NULL) return null_handle("ffk_dict_update");
  if (other == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_dict_update: the other mapping is NULL");
  if (other == &d->header) return 0;
  const ffk_table *src;
  ffk_lock *src_lock;
  if (other->type_index == FFK_TYPE_MAP) {
    src = &((const ffk_map *)other)->table; /* never changes while we borrow it */
    src_lock = &d->lock;
  } else if (other->type_index == FFK_TYPE_DICT) {
    ffk_dict *o = (ffk_dict *)other;
    src = &o->table;
    src_lock = &o->lock;
  } else {
    return ffk_error_set(FFK_ERR_TYPE, "expected a Map or Dict but got %s", ffk_type_name(other->type_index));
  }
  /* All or nothing: room for every entry and a place for every replaced value come first. */
  ffk_lock__acquire2(&d->lock, src_lock);
  /*
   * Reserve for the new keys only: when none is new the table must not be rebuilt, which
   * would move entries under an iterator that has no reason to stop.
   */
  int64_t n = src->size, n_new = 0, n_replaced = 0, pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(src, &pos)) != NULL;)
    n_new += ffk_table__find(&d->table, &e->key, e->hash) < 0;
  ffk_any *replaced = n > n_new ? ffk_mem_alloc((size_t)(n - n_new) * sizeof(ffk_any)) : NULL;
  int rc = (n > n_new && replaced == NULL) || (n_new > 0 && ffk_table__reserve(&d->table, n_new) != 0) ? -1 : 0;
  if (rc == 0) {
    pos = 0;
    for (ffk_table_entry *e; (e = ffk_table__next(src, &pos)) != NULL;) {
      ffk_any v = e->value;
      ffk_any_retain(&v);
      int64_t at = ffk_table__find(&d->table, &e->key, e->hash);
      if (at >= 0) {
        replaced[n_replaced++] = d->table.entries[at].value;
        d->table.entries[at].value = v;
      } else {
        ffk_any k = e->key;
        ffk_any_retain(&k);
        ffk_table__append(&d->table, e->hash, k, v); /* room reserved above */
      }
    }
    if (n_new > 0) ++d->version;
    if (n > 0) touch(d);
  }
  ffk_lock__release2(&d->lock, src_lock);
  for (int64_t i = 0; i < n_replaced; ++i) ffk_any_release(&replaced[i]);
  ffk_mem_free(replaced);
  return rc;
}

/* ---- Iteration. ----------------------------------------------------------------- */

void ffk_dict_iter_init(ffk_dict_iter *it, ffk_dict *d) {
  it->dict = d;
  it->pos = 0;
  it->version = 0;
  if (d != NULL) {
    ffk_lock__acquire(&d->lock);
    it->version = d->version;
    ffk_lock__release(&d->lock);
  }
}

int ffk_dict_iter_next(ffk_dict_iter *it, ffk_any *key, ffk_any *value) {
  if (key) *key = ffk_any_none();
  if (value) *value = ffk_any_none();
  ffk_dict *d = it->dict;
  if (d == NULL) return null_handle("ffk_dict_iter_next");
  ffk_lock__acquire(&d->lock);
  bool changed = d->version != it->version;
  ffk_table_entry *e = changed ? NULL : ffk_table__next(&d->table, &it->pos);
  if (e != NULL) {
    if (key) {
      *key = e->key;
      ffk_any_retain(key);
    }
    if (value) {
      *value = e->value;
      ffk_any_retain(value);
    }
  }
  ffk_lock__release(&d->lock);
  if (changed) return ffk_error_set(FFK_ERR_RUNTIME, "Dict changed during iteration");
  return e != NULL;
}

/* ---- repr: {"a": 1, 3: 2} --------------------------------------------------------- */

int ffk_dict__repr(ffk_object *self, ffk_repr_ctx *ctx) {
  ffk_map *snapshot = ffk_dict_to_map((ffk_dict *)self); /* prints with no lock held */
  if (snapshot == NULL) return -1;
  int rc = ffk_map__repr_table(ctx, &snapshot->table);
  ffk_object_release(&snapshot->header);
  return rc;
}
