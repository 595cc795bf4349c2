/*
 * registry.c - the global function registry: names to Functions, safe from any thread.
 *
 * 64 shards, chosen by the name's hash, each a chained hash table behind its own
 * reader-writer lock, so lookups of different names rarely touch the same lock and
 * concurrent lookups of the same name share it. A lookup retains the Function before
 * the shard is unlocked, so a concurrent removal cannot free it under the reader. The
 * registry's references are released outside the locks (a context deleter may use the
 * registry).
 */
#include "internal.h"

#include <ffikit/function.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 64
#define MIN_BUCKETS 16

typedef struct entry {
  struct entry *next;
  uint64_t hash;
  ffk_function *fn; /* owned */
  char name[];
} entry;

typedef struct shard {
  pthread_rwlock_t lock;
  entry **buckets;
  size_t nbuckets; /* 0 or a power of two */
  size_t size;
  char pad[64]; /* keeps neighbouring shards' locks off one cache line */
} shard;

static shard g_shards[SHARDS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_shards(void) {
  for (int i = 0; i < SHARDS; ++i) pthread_rwlock_init(&g_shards[i].lock, NULL);
}

static shard *shard_of(uint64_t hash) {
  pthread_once(&g_once, init_shards);
  return &g_shards[hash >> 58]; /* the top bits: the low ones pick the bucket */
}

static entry **slot_of(shard *s, const char *name, uint64_t hash) {
  if (s->nbuckets == 0) return NULL;
  entry **p = &s->buckets[hash & (s->nbuckets - 1)];
  while (*p != NULL && ((*p)->hash != hash || strcmp((*p)->name, name) != 0)) p = &(*p)->next;
  return p;
}

/* Doubles the buckets when the load passes 1. Write lock held. 0, or -1 (MemoryError). */
static int grow(shard *s) {
  if (s->size < s->nbuckets) return 0;
  size_t n = s->nbuckets ? s->nbuckets * 2 : MIN_BUCKETS;
  entry **b = ffk_mem_calloc(n, sizeof(entry *));
  if (b == NULL) return -1;
  for (size_t i = 0; i < s->nbuckets; ++i) {
    for (entry *e = s->buckets[i], *next; e != NULL; e = next) {
      next = e->next;
      e->next = b[e->hash & (n - 1)];
      b[e->hash & (n - 1)] = e;
    }
  }
  ffk_mem_free(s->buckets);
  s->buckets = b;
  s->nbuckets = n;
  return 0;
}

static int check_name(const char *name, const char *fn) {
  if (name == NULL || name[0] == '\0')
    return ffk_error_set(FFK_ERR_VALUE, "%s: the function name is %s", fn, name == NULL ? "NULL" : "empty");
  return 0;
}

int ffk_function_register(const char *name, ffk_function *f, bool override) {
  if (check_name(name, "ffk_function_register") != 0) return -1;
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_register: the function for `%s` is NULL", name);
  size_t len = strlen(name);
  uint64_t hash = ffk_hash_bytes(name, len);
  entry *e = ffk_mem_alloc(sizeof(entry) + len + 1); /* made before locking: allocation can fail */
  if (e == NULL) return -1;
  e->hash = hash;
  e->fn = f;
  memcpy(e->name, name, len + 1);
  ffk_object_retain((ffk_object *)f);

  shard *s = shard_of(hash);
  ffk_function *replaced = NULL;
  int rc = 0;
  pthread_rwlock_wrlock(&s->lock);
  entry **p = slot_of(s, name, hash);
  if (p != NULL && *p != NULL) {
    if (override) {
      replaced = (*p)->fn;
      (*p)->fn = f; /* keep the old entry; drop the new one */
    } else {
      rc = 1;
    }
  } else if (grow(s) != 0) {
    rc = -1;
  } else {
    p = slot_of(s, name, hash);
    e->next = NULL;
    *p = e;
    ++s->size;
    e = NULL;
  }
  pthread_rwlock_unlock(&s->lock);
  if (e != NULL) {
    if (rc == 1 || rc == -1) ffk_object_release((ffk_object *)e->fn);
    ffk_mem_free(e);
  }
  if (replaced != NULL) ffk_object_release((ffk_object *)replaced);
  if (rc == 1) return ffk_error_set(FFK_ERR_VALUE, "global function `%s` is already registered", name);
  return rc;
}

int ffk_function_get_global(const char *name, ffk_function **out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_get_global: the out pointer is NULL");
  *out = NULL;
  if (check_name(name, "ffk_function_get_global") != 0) return -1;
  uint64_t hash = ffk_hash_bytes(name, strlen(name));
  shard *s = shard_of(hash);
  pthread_rwlock_rdlock(&s->lock);
  entry **p = slot_of(s, name, hash);
  if (p != NULL && *p != NULL) {
    *out = (*p)->fn;
    ffk_object_retain((ffk_object *)*out);
  }
  pthread_rwlock_unlock(&s->lock);
  return *out != NULL;
}

int ffk_function_remove_global(const char *name) {
  if (check_name(name, "ffk_function_remove_global") != 0) return -1;
  uint64_t hash = ffk_hash_bytes(name, strlen(name));
  shard *s = shard_of(hash);
  entry *gone = NULL;
  pthread_rwlock_wrlock(&s->lock);
  entry **p = slot_of(s, name, hash);
  if (p != NULL && *p != NULL) {
    gone = *p;
    *p = gone->next;
    --s->size;
  }
  pthread_rwlock_unlock(&s->lock);
  if (gone == NULL) return 0;
  ffk_object_release((ffk_object *)gone->fn);
  ffk_mem_free(gone);
  return 1;
}

typedef struct named {
  char *name;
  ffk_function *fn;
} named;

static int by_name(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }

/* Appends a copy of every entry of `s` (name copied, function retained). Read lock held. 0 or -1. */
static int snapshot_shard(const shard *s, named **all, size_t *n, size_t *cap) {
  if (*n + s->size > *cap) {
    size_t want = (*n + s->size) * 2;
    named *grown = ffk_mem_realloc(*all, want * sizeof(named));
    if (grown == NULL) return -1;
    *all = grown;
    *cap = want;
  }
  for (size_t b = 0; b < s->nbuckets; ++b) {
    for (const entry *e = s->buckets[b]; e != NULL; e = e->next) {
      size_t len = strlen(e->name);
      char *name = ffk_mem_alloc(len + 1);
      if (name == NULL) return -1;
      memcpy(name, e->name, len + 1);
      ffk_object_retain((ffk_object *)e->fn);
      (*all)[(*n)++] = (named){name, e->fn};
    }
  }
  return 0;
}

int ffk_function_for_each_global(int (*fn)(const char *name, ffk_function *f, void *ctx), void *ctx) {
  if (fn == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_for_each_global: the callback is NULL");
  named *all = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (int i = 0; i < SHARDS && rc == 0; ++i) {
    shard *s = shard_of((uint64_t)i << 58);
    pthread_rwlock_rdlock(&s->lock);
    rc = snapshot_shard(s, &all, &n, &cap);
    pthread_rwlock_unlock(&s->lock);
  }
  if (rc == 0) {
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
