/*
 * epoch.h - epoch-based reclamation for read-mostly shared structures (internal).
 *
 * Readers bracket their reads with ffk_epoch__enter/exit and never write a cache line
 * another thread reads: each thread announces itself in its own 64-byte record. A
 * writer unpublishes an item (an old table, a removed entry) and hands it to
 * ffk_epoch__retire instead of freeing it; the item is reclaimed once every read
 * section that could still see it has ended. Nobody waits: the reclaim runs in the
 * writer when no such reader is active, otherwise in the last of those readers when it
 * leaves its section (so a reclaim callback, which may drop object references and run
 * their deleters, can run on a reader's thread).
 *
 * The protocol (G the global epoch, R a reader's record, P the count of retired items;
 * "sc" marks sequentially consistent atomics):
 *   reader enter:  e = G (acquire); R = e (sc); ...load the structure's pointers (sc)...
 *   reader exit:   R = 0 (sc); if P (sc) != 0: reclaim
 *   writer:        unpublish (sc store); s = ++G (sc); stamp the item with s; P++ (sc);
 *                  reclaim: free the items whose stamp <= every nonzero R (sc loads)
 * A reader whose R >= s read G after the increment, so it sees the structure without
 * the item. Otherwise the single total order of sc operations makes the writer's scan
 * and a reader's announcement a Dekker pair: either the scan sees the reader, or the
 * reader's loads see the unpublished structure; likewise P and a leaving reader, so an
 * item is never left behind with nobody to reclaim it. (sc atomics rather than fences:
 * ThreadSanitizer understands them; on x86 the stores are one xchg, the loads plain.)
 * So a structure protected this way must be loaded and unpublished with
 * __ATOMIC_SEQ_CST.
 *
 * Read sections nest, and do not survive fork() in the child for threads other than the
 * forking one (their records are reset there). A section may be held across a call into
 * user code (structural walks call hooks inside the section that keeps their borrowed
 * field values alive, reflect.h "Read sections"). That is safe: no thread ever waits
 * for a reader (retire stamps, queues and returns; reclaim frees only what no open
 * section can see), so user code that blocks, enters sections of its own (they nest:
 * only the outermost exit announces the end) or retires items (they wait in the list)
 * cannot deadlock or corrupt anything; it only delays the reclamation of every item
 * retired while the section is open, in all threads, by as long as it runs. Reclaim
 * callbacks run in whichever thread leaves last, so the outermost exit may run
 * deleters: leave a section with no lock held that a deleter might take.
 */
#ifndef FFIKIT_FFI_EPOCH_H
#define FFIKIT_FFI_EPOCH_H

#include "internal.h"

#include <stdint.h>

/* A retired item: embed it in the structure to be freed, so retiring never allocates. */
typedef struct ffk_epoch__retired {
  struct ffk_epoch__retired *next;
  uint64_t stamp;
  void (*reclaim)(struct ffk_epoch__retired *item);
} ffk_epoch__retired;

/* One thread's announcement, alone on its cache line. Records are reused, never freed. */
typedef struct ffk_epoch__reader {
  _Alignas(64) uint64_t epoch; /* the epoch its read section began in; 0 outside one */
  uint32_t depth;              /* nesting, touched by the owner only */
  uint32_t in_use;             /* owned by a live thread */
  struct ffk_epoch__reader *next; /* in the list of all records; set once */
} ffk_epoch__reader;

/* The words every reader loads, alone on their cache line (writers write them rarely). */
typedef struct ffk_epoch__shared {
  _Alignas(64) uint64_t global; /* G: starts at 1, so 0 means "not reading" */
  uint64_t pending;             /* P */
} ffk_epoch__shared;
extern ffk_epoch__shared ffk_epoch__g;
extern _Thread_local ffk_epoch__reader *ffk_epoch__self;

/* Slow paths (epoch.c): the first section of a thread, and reclaiming. */
ffk_epoch__reader *ffk_epoch__attach(void);
void ffk_epoch__reclaim(void);

/*
 * Begins a read section; returns the thread's record for ffk_epoch__exit, or NULL with a
 * MemoryError when the thread's first record cannot be allocated.
 */
static inline ffk_epoch__reader *ffk_epoch__enter(void) {
  ffk_epoch__reader *r = ffk_epoch__self;
  if (FFK_UNLIKELY(r == NULL) && (r = ffk_epoch__attach()) == NULL) return NULL;
  if (r->depth++ == 0)
    __atomic_store_n(&r->epoch, __atomic_load_n(&ffk_epoch__g.global, __ATOMIC_ACQUIRE), __ATOMIC_SEQ_CST);
  return r;
}

/* Ends the read section begun by the ffk_epoch__enter that returned `r`. */
static inline void ffk_epoch__exit(ffk_epoch__reader *r) {
  if (--r->depth != 0) return;
  __atomic_store_n(&r->epoch, 0, __ATOMIC_SEQ_CST);
  if (FFK_UNLIKELY(__atomic_load_n(&ffk_epoch__g.pending, __ATOMIC_SEQ_CST) != 0)) ffk_epoch__reclaim();
}

/*
 * Hands `item`, already unreachable for new readers, to the reclaimer: `reclaim(item)`
 * runs exactly once, when no read section that began before this call is still open
 * (possibly before this returns). Never fails.
 */
void ffk_epoch__retire(ffk_epoch__retired *item, void (*reclaim)(ffk_epoch__retired *item));

#endif /* FFIKIT_FFI_EPOCH_H */
