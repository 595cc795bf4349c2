/*
 * registry.c - the global function registry: names to Functions, safe from any thread.
 *
 * 64 shards, chosen by the top bits of the name's hash. Each shard publishes one
 * open-addressing table (linear probing) of pointers to immutable entries {hash, name,
 * Function}. Lookups take no lock and write nothing shared but the found Function's
 * reference count: they run in an epoch read section (epoch.h), load the table and
 * its slots with sequentially consistent loads, and retain the Function before leaving the section.
 *
 * Writers serialise on the shard's mutex and change the table in place with single
 * pointer stores, which a concurrent reader sees either before or after:
 *   - insert: the new entry goes into the first empty or tombstone slot of its probe
 *     sequence (after checking the name is absent);
 *   - override: the slot gets a new entry;
 *   - remove: the slot gets the tombstone, which readers step over.
 * A replaced or removed entry is retired, not freed: its Function reference is dropped
 * when no reader can still see it (at once when none is reading). When live entries
 * plus tombstones would pass 3/4 of the slots, the shard gets a rebuilt table (no
 * tombstones, at most half full) and the old one is retired. So only an insert can
 * allocate, and a removal never fails.
 */
#include "epoch.h"

#include <ffikit/function.h>
#include <ffikit/string.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 64
#define MIN_SLOTS 16

typedef struct entry {
  ffk_epoch__retired retired;
  uint64_t hash;
  ffk_function *fn; /* owned */
  char name[];
} entry;

typedef struct table {
  ffk_epoch__retired retired;
  size_t mask; /* slots - 1, slots a power of two */
  entry *slots[];
} table;

typedef struct shard {
  _Alignas(64) table *table; /* read by lookups; NULL until the first insert */
  pthread_mutex_t lock;      /* serialises writers */
  size_t live, used;         /* entries; entries + tombstones */
} shard;

static shard g_shards[SHARDS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const char g_tombstone_byte;
#define TOMBSTONE ((entry *)(void *)&g_tombstone_byte)

static void init_shards(void) {
  for (int i = 0; i < SHARDS; ++i) pthread_mutex_init(&g_shards[i].lock, NULL);
}

static shard *shard_of(uint64_t hash) { return &g_shards[hash >> 58]; /* low bits pick the slot */ }

static shard *locked_shard(uint64_t hash) {
  pthread_once(&g_once, init_shards);
  shard *s = shard_of(hash);
  pthread_mutex_lock(&s->lock);
  return s;
}

/* Publishing and reading follow epoch.h: sequentially consistent loads and stores. */
static entry *load_slot(const table *t, size_t i) { return __atomic_load_n(&t->slots[i], __ATOMIC_SEQ_CST); }
static void store_slot(table *t, size_t i, entry *e) { __atomic_store_n(&t->slots[i], e, __ATOMIC_SEQ_CST); }

/*
 * The entry for `name` in `t`, or NULL; *slot receives its index. In a read section the
 * slot may change right after: use the returned entry, never a second load of the slot.
 */
static entry *find(const table *t, const char *name, uint64_t hash, size_t *slot) {
  if (t == NULL) return NULL;
  for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    entry *e = load_slot(t, i);
    if (e == NULL) return NULL;
    if (e != TOMBSTONE && e->hash == hash && strcmp(e->name, name) == 0) {
      *slot = i;
      return e;
    }
  }
}

/*
 * Entries and tables are read by every thread that looks names up, so they get whole
 * cache lines: a line shared with a Function's reference count (or anything else some
 * thread writes) would move between cores on every lookup. `size` bytes aligned to 64,
 * padded to a multiple of 64; the word before the block points to what to free.
 */
static void *alloc_lines(size_t size, bool zero) {
  size_t padded = (size + 63) & ~(size_t)63;
  char *raw = ffk_mem_alloc(padded + 64);
  if (raw == NULL) return NULL;
  char *p = raw + 64 - ((uintptr_t)raw & 63); /* at least one word of room before p */
  ((void **)p)[-1] = raw;
  if (zero) memset(p, 0, padded);
  return p;
}

static void free_lines(void *p) {
  if (p != NULL) ffk_mem_free(((void **)p)[-1]);
}

static void reclaim_entry(ffk_epoch__retired *item) {
  entry *e = (entry *)item;
  ffk_object_release((ffk_object *)e->fn);
  free_lines(e);
}

static void reclaim_table(ffk_epoch__retired *item) { free_lines(item); }

/* A new table of `nslots` (a power of two) holding the live entries of `old`. */
static table *rebuild(const table *old, size_t nslots) {
  table *t = alloc_lines(sizeof(table) + nslots * sizeof(entry *), true);
  if (t == NULL) return NULL;
  t->mask = nslots - 1;
  for (size_t i = 0; old != NULL && i <= old->mask; ++i) {
    entry *e = old->slots[i];
    if (e == NULL || e == TOMBSTONE) continue;
    size_t j = e->hash & t->mask;
    while (t->slots[j] != NULL) j = (j + 1) & t->mask;
    t->slots[j] = e;
  }
  return t;
}

/*
 * Makes room for one more entry in `s` (lock held): rebuilds the table when live
 * entries plus tombstones would pass 3/4 of it. *retired receives the old table to
 * retire after unlocking. 0, or -1 with a MemoryError.
 */
static int reserve(shard *s, table **retired) {
  *retired = NULL;
  table *t = s->table;
  if (t != NULL && (s->used + 1) * 4 <= (t->mask + 1) * 3) return 0;
  size_t n = MIN_SLOTS;
  while (n < (s->live + 1) * 2) n *= 2;
  table *fresh = rebuild(t, n);
  if (fresh == NULL) return -1;
  __atomic_store_n(&s->table, fresh, __ATOMIC_SEQ_CST);
  s->used = s->live;
  *retired = t;
  return 0;
}

/* Stores `e` into the first free slot (empty or tombstone) of its probe sequence. Lock held, room reserved. */
static void insert(shard *s, entry *e) {
  table *t = s->table;
  size_t i = e->hash & t->mask;
  entry *old;
  while ((old = t->slots[i]) != NULL && old != TOMBSTONE) i = (i + 1) & t->mask;
  if (old == NULL) ++s->used;
  ++s->live;
  store_slot(t, i, e);
}

/* `what` is the operation as a user asked for it ("register"): bindings show this text. */
static int check_name(const char *name, const char *what) {
  if (name == NULL || name[0] == '\0')
    return ffk_error_set(FFK_ERR_VALUE, "cannot %s a global Function: the name is %s", what,
                         name == NULL ? "NULL" : "empty");
  return 0;
}

int ffk_function_register(const char *name, ffk_function *f, bool override) {
  if (check_name(name, "register") != 0) return -1;
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_register: the function for `%s` is NULL", name);
  size_t len = strlen(name);
  uint64_t hash = ffk_hash_bytes(name, len);
  entry *e = alloc_lines(sizeof(entry) + len + 1, false); /* made before locking: allocation can fail */
  if (e == NULL) return -1;
  e->hash = hash;
  e->fn = f;
  memcpy(e->name, name, len + 1);

  shard *s = locked_shard(hash);
  entry *replaced = NULL;
  table *old_table = NULL;
  int rc = 0;
  size_t i;
  entry *found = find(s->table, name, hash, &i);
  if (found != NULL && !override) {
    rc = 1;
  } else if (found != NULL) {
    replaced = found;
    ffk_object_retain((ffk_object *)f);
    store_slot(s->table, i, e);
  } else if (reserve(s, &old_table) != 0) {
    rc = -1;
  } else {
    ffk_object_retain((ffk_object *)f);
    insert(s, e);
  }
  pthread_mutex_unlock(&s->lock);
  if (old_table != NULL) ffk_epoch__retire(&old_table->retired, reclaim_table);
  if (replaced != NULL) ffk_epoch__retire(&replaced->retired, reclaim_entry);
  if (rc != 0) free_lines(e); /* never published */
  /* tvm_ffi's kind and words, which its Python users match on; both bindings pass them on. */
  if (rc == 1) return ffk_error_set(FFK_ERR_RUNTIME, "Global Function `%s` is already registered", name);
  return rc;
}

int ffk_function_get_global(const char *name, ffk_function **out) {
  if (FFK_UNLIKELY(out == NULL))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_function_get_global: the out pointer is NULL");
  *out = NULL;
  if (FFK_UNLIKELY(check_name(name, "look up") != 0)) return -1;
  uint64_t hash = ffk_hash_bytes(name, strlen(name));
  shard *s = shard_of(hash);
  ffk_epoch__reader *r = ffk_epoch__enter();
  if (FFK_UNLIKELY(r == NULL)) return -1;
  size_t i;
  entry *e = find(__atomic_load_n(&s->table, __ATOMIC_SEQ_CST), name, hash, &i);
  if (e != NULL) {
    *out = e->fn;
    ffk_object_retain((ffk_object *)*out);
  }
  ffk_epoch__exit(r);
  return *out != NULL;
}

/* The entry mapping name `name` to `f` in the current tables, or NULL. In a read section. */
static const entry *entry_of(const char *name, const ffk_function *f) {
  uint64_t hash = ffk_hash_bytes(name, strlen(name));
  size_t i;
  const entry *e = find(__atomic_load_n(&shard_of(hash)->table, __ATOMIC_SEQ_CST), name, hash, &i);
  return e != NULL && e->fn == f ? e : NULL;
}

int ffk_function_global_name(const ffk_function *f, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (f == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_function_global_name: the %s is NULL", f == NULL ? "function" : "out");
  ffk_epoch__reader *r = ffk_epoch__enter();
  if (FFK_UNLIKELY(r == NULL)) return -1;
  const char *own = ffk_function_name(f);
  const entry *best = own != NULL && own[0] != '\0' ? entry_of(own, f) : NULL;
  bool scan = best == NULL; /* not under its own name: the first name in name order */
  for (int s = 0; scan && s < SHARDS; ++s) {
    const table *t = __atomic_load_n(&g_shards[s].table, __ATOMIC_SEQ_CST);
    for (size_t i = 0; t != NULL && i <= t->mask; ++i) {
      const entry *e = load_slot(t, i);
      if (e != NULL && e != TOMBSTONE && e->fn == f && (best == NULL || strcmp(e->name, best->name) < 0)) best = e;
    }
  }
  /* The entries stay alive until the section ends, even if removed meanwhile. */
  int rc = best == NULL ? 0 : ffk_any_cstr(best->name, out) == 0 ? 1 : -1;
  ffk_epoch__exit(r);
  return rc;
}

int ffk_function_remove_global(const char *name) {
  if (check_name(name, "remove") != 0) return -1;
  uint64_t hash = ffk_hash_bytes(name, strlen(name));
  shard *s = locked_shard(hash);
  size_t i;
  entry *gone = find(s->table, name, hash, &i);
  if (gone != NULL) {
    store_slot(s->table, i, TOMBSTONE);
    --s->live;
  }
  pthread_mutex_unlock(&s->lock);
  if (gone == NULL) return 0;
  ffk_epoch__retire(&gone->retired, reclaim_entry);
  return 1;
}

typedef struct named {
  char *name;
  ffk_function *fn;
} named;

static int by_name(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }

/* Appends a copy of every entry of `t` (name copied, function retained). In a read section. 0 or -1. */
static int snapshot_table(const table *t, named **all, size_t *n, size_t *cap) {
  for (size_t i = 0; t != NULL && i <= t->mask; ++i) {
    const entry *e = load_slot(t, i);
    if (e == NULL || e == TOMBSTONE) continue;
    if (*n == *cap) {
      size_t want = *cap ? *cap * 2 : 64;
      named *grown = ffk_mem_realloc(*all, want * sizeof(named));
      if (grown == NULL) return -1;
      *all = grown;
      *cap = want;
    }
    size_t len = strlen(e->name);
    char *name = ffk_mem_alloc(len + 1);
    if (name == NULL) return -1;
    memcpy(name, e->name, len + 1);
    ffk_object_retain((ffk_object *)e->fn);
    (*all)[(*n)++] = (named){name, e->fn};
  }
  return 0;
}

int ffk_function_for_each_global(int (*fn)(const char *name, ffk_function *f, void *ctx), void *ctx) {
  if (fn == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_for_each_global: the callback is NULL");
  named *all = NULL;
  size_t n = 0, cap = 0;
  ffk_epoch__reader *r = ffk_epoch__enter();
  if (r == NULL) return -1;
  int rc = 0;
  for (int i = 0; i < SHARDS && rc == 0; ++i)
    rc = snapshot_table(__atomic_load_n(&g_shards[i].table, __ATOMIC_SEQ_CST), &all, &n, &cap);
  ffk_epoch__exit(r);
  if (rc == 0 && n > 0) { /* an empty registry leaves `all` NULL, which qsort may not get */
    qsort(all, n, sizeof(named), by_name);
    for (size_t k = 0; k < n && rc == 0; ++k) rc = fn(all[k].name, all[k].fn, ctx);
  }
  for (size_t k = 0; k < n; ++k) {
    ffk_mem_free(all[k].name);
    ffk_object_release((ffk_object *)all[k].fn);
  }
  ffk_mem_free(all);
  return rc;
}
