/*
 * stream.c - the current stream per (thread, device) of ffikit/stream.h.
 *
 * Each thread keeps a small table of (device type, device id, stream) entries: the first
 * FIXED live in thread-local storage, so a program that uses a few devices never
 * allocates; more go to a heap array that a pthread key's destructor frees when the
 * thread exits. Entries are never removed (setting NULL keeps the entry), and lookups scan
 * the table, which holds one entry per device the thread ever set a stream for.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>

#include <ffikit/stream.h>

#define FIXED 8

typedef struct entry {
  int32_t type, id;
  void *stream;
} entry;

typedef struct table {
  entry fixed[FIXED];
  entry *more; /* heap, `cap` entries, registered with k_more_key for release at thread exit */
  int32_t count, cap;
} table;

static _Thread_local table t_streams;

static pthread_key_t k_more_key;
static pthread_once_t k_more_once = PTHREAD_ONCE_INIT;
static int k_more_key_made;

/*
 * The key's destructor, run in the exiting thread: the table forgets the heap block
 * (keeping its first FIXED entries), so a stream call from a later destructor of the same
 * thread finds a consistent table and never reads freed memory.
 */
static void free_more(void *p) {
  table *t = &t_streams;
  if (t->more == p) {
    if (t->count > FIXED) t->count = FIXED;
    t->more = NULL, t->cap = 0;
  }
  ffk_mem_free(p);
}
static void make_key(void) { k_more_key_made = pthread_key_create(&k_more_key, free_more) == 0; }

static entry *find(table *t, int32_t type, int32_t id) {
  int32_t n = t->count < FIXED ? t->count : FIXED;
  for (int32_t i = 0; i < n; ++i)
    if (t->fixed[i].type == type && t->fixed[i].id == id) return &t->fixed[i];
  for (int32_t i = 0; i < t->count - FIXED; ++i)
    if (t->more[i].type == type && t->more[i].id == id) return &t->more[i];
  return NULL;
}

/* A new entry for (type, id), or NULL with a MemoryError. */
static entry *add(table *t, int32_t type, int32_t id) {
  entry *e;
  if (t->count < FIXED) {
    e = &t->fixed[t->count];
  } else {
    int32_t k = t->count - FIXED;
    if (k == t->cap) {
      pthread_once(&k_more_once, make_key);
      int32_t cap = t->cap ? t->cap * 2 : FIXED;
      /* A new block, registered before the old one goes, so the key never names freed memory. */
      if (!k_more_key_made) {
        ffk_error_set(FFK_ERR_MEMORY, "cannot set the stream of a device: no thread-specific key is left");
        return NULL;
      }
      entry *more = ffk_mem_alloc((size_t)cap * sizeof *more);
      if (more == NULL) return NULL;
      if (pthread_setspecific(k_more_key, more) != 0) {
        ffk_mem_free(more);
        ffk_error_set(FFK_ERR_MEMORY, "cannot set the stream of a device: out of memory");
        return NULL;
      }
      if (k > 0) memcpy(more, t->more, (size_t)k * sizeof *more);
      ffk_mem_free(t->more);
      t->more = more, t->cap = cap;
    }
    e = &t->more[k];
  }
  e->type = type, e->id = id, e->stream = NULL;
  t->count++;
  return e;
}

int ffk_stream_set(int32_t device_type, int32_t device_id, void *stream, void **previous) {
  if (ffk_device_type_name(device_type) == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot set a stream: unknown device type %d", (int)device_type);
  if (device_id < 0)
    return ffk_error_set(FFK_ERR_VALUE, "cannot set a stream: device id %d is negative", (int)device_id);
  table *t = &t_streams;
  entry *e = find(t, device_type, device_id);
  if (e == NULL) {
    if (stream == NULL) { /* the default already: no entry needed */
      if (previous != NULL) *previous = NULL;
      return 0;
    }
    if ((e = add(t, device_type, device_id)) == NULL) return -1;
  }
  if (previous != NULL) *previous = e->stream;
  e->stream = stream;
  return 0;
}

void *ffk_stream_get(int32_t device_type, int32_t device_id) {
  entry *e = find(&t_streams, device_type, device_id);
  return e != NULL ? e->stream : NULL;
}
