/*
 * epoch.c - the slow paths of epoch-based reclamation: per-thread records and the
 * list of retired items. The protocol is described in epoch.h.
 *
 * Records live in a singly linked list that only grows (a push is one CAS); a thread
 * claims a free one or pushes a new one on its first read section and gives it back
 * from a thread-exit destructor. They are plain calloc'd memory, not ffikit
 * allocations: they belong to threads, not to any object, and stay for reuse.
 * Retired items wait in one list under g_retired_lock.
 */
#include "epoch.h"

#include <pthread.h>
#include <stdlib.h>

ffk_epoch__shared ffk_epoch__g = {.global = 1};
_Thread_local ffk_epoch__reader *ffk_epoch__self;

static ffk_epoch__reader *g_readers; /* every record ever made */
static pthread_key_t g_exit_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t g_retired_lock = PTHREAD_MUTEX_INITIALIZER;
static ffk_epoch__retired *g_retired;

/* Thread exit: the record goes back for another thread (the thread is outside any section). */
static void detach(void *record) {
  ffk_epoch__reader *r = record;
  __atomic_store_n(&r->epoch, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&r->in_use, 0, __ATOMIC_RELEASE);
  ffk_epoch__self = NULL;
}

/* In a forked child only the forking thread lives on: the others' records are free. */
static void after_fork_in_child(void) {
  for (ffk_epoch__reader *r = __atomic_load_n(&g_readers, __ATOMIC_ACQUIRE); r != NULL; r = r->next) {
    if (r == ffk_epoch__self) continue;
    r->depth = 0;
    __atomic_store_n(&r->epoch, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->in_use, 0, __ATOMIC_RELAXED);
  }
  pthread_mutex_init(&g_retired_lock, NULL);
}

static void init_once(void) {
  pthread_key_create(&g_exit_key, detach);
  pthread_atfork(NULL, NULL, after_fork_in_child);
}

ffk_epoch__reader *ffk_epoch__attach(void) {
  pthread_once(&g_once, init_once);
  ffk_epoch__reader *r = __atomic_load_n(&g_readers, __ATOMIC_ACQUIRE);
  for (; r != NULL; r = r->next) {
    uint32_t free_ = 0;
    if (__atomic_load_n(&r->in_use, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(&r->in_use, &free_, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      break;
  }
  if (r == NULL) {
    r = aligned_alloc(_Alignof(ffk_epoch__reader), sizeof *r);
    if (r == NULL) {
      ffk_error_set(FFK_ERR_MEMORY, "out of memory registering a thread's read-section record");
      return NULL;
    }
    r->epoch = 0;
    r->depth = 0;
    r->in_use = 1;
    r->next = __atomic_load_n(&g_readers, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&g_readers, &r->next, r, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
  }
  if (pthread_setspecific(g_exit_key, r) != 0) {
    __atomic_store_n(&r->in_use, 0, __ATOMIC_RELEASE);
    ffk_error_set(FFK_ERR_MEMORY, "out of memory registering a thread's read-section record");
    return NULL;
  }
  ffk_epoch__self = r;
  return r;
}

/*
 * The oldest epoch any open read section began in, or UINT64_MAX when none is open.
 * The list head is loaded sc, and records are pushed with an sc CAS before their first
 * announcement: a record the scan misses belongs to a reader that will see the
 * unpublished structure.
 */
static uint64_t oldest_reader(void) {
  uint64_t oldest = UINT64_MAX;
  for (ffk_epoch__reader *r = __atomic_load_n(&g_readers, __ATOMIC_SEQ_CST); r != NULL; r = r->next) {
    uint64_t e = __atomic_load_n(&r->epoch, __ATOMIC_SEQ_CST);
    if (e != 0 && e < oldest) oldest = e;
  }
  return oldest;
}

void ffk_epoch__reclaim(void) {
  ffk_epoch__retired *ready = NULL;
  pthread_mutex_lock(&g_retired_lock);
  uint64_t oldest = oldest_reader();
  uint64_t n = 0;
  for (ffk_epoch__retired **p = &g_retired; *p != NULL;) {
    ffk_epoch__retired *item = *p;
    if (item->stamp <= oldest) {
      *p = item->next;
      item->next = ready;
      ready = item;
      ++n;
    } else {
      p = &item->next;
    }
  }
  if (n != 0) __atomic_sub_fetch(&ffk_epoch__g.pending, n, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_retired_lock);
  /* Outside the lock: a reclaim may drop references whose deleters retire more items. */
  while (ready != NULL) {
    ffk_epoch__retired *item = ready;
    ready = item->next;
    item->reclaim(item);
  }
}

void ffk_epoch__retire(ffk_epoch__retired *item, void (*reclaim)(ffk_epoch__retired *item)) {
  item->reclaim = reclaim;
  item->stamp = __atomic_add_fetch(&ffk_epoch__g.global, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&g_retired_lock);
  item->next = g_retired;
  g_retired = item;
  __atomic_add_fetch(&ffk_epoch__g.pending, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&g_retired_lock);
  ffk_epoch__reclaim();
}
