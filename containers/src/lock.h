/*
 * lock.h - the small per-object lock of List and Dict (private to containers).
 *
 * One atomic word: 0 free, 1 held. Taking it is a compare-and-swap with acquire order;
 * releasing it is a plain store with release order (no read-modify-write, so an
 * uncontended lock/unlock pair costs one atomic instruction). A waiter spins with a
 * pause hint, then yields the CPU.
 *
 * A spin lock fits because what it guards is short and bounded: List and Dict never
 * hold it while foreign code runs (deleters, callbacks), only while they move their own
 * elements, compare keys (no foreign code: ffk_any_equal) or allocate. It is not
 * recursive: code holding it must not call a public List/Dict function.
 */
#ifndef FFIKIT_CONTAINERS_LOCK_H
#define FFIKIT_CONTAINERS_LOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct ffk_lock {
  _Atomic uint32_t held;
} ffk_lock;

static inline void ffk_lock__init(ffk_lock *l) { atomic_init(&l->held, 0); }

static inline void ffk_lock__pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static inline void ffk_lock__acquire(ffk_lock *l) {
  uint32_t expected = 0;
  if (atomic_compare_exchange_weak_explicit(&l->held, &expected, 1, memory_order_acquire, memory_order_relaxed))
    return;
  for (unsigned spins = 0;; ++spins) {
    /* Test before test-and-set: wait on a shared cache line, not with writes. */
    while (atomic_load_explicit(&l->held, memory_order_relaxed) != 0) {
      if (spins++ < 128)
        ffk_lock__pause();
      else
        sched_yield();
    }
    expected = 0;
    if (atomic_compare_exchange_weak_explicit(&l->held, &expected, 1, memory_order_acquire, memory_order_relaxed))
      return;
  }
}

static inline void ffk_lock__release(ffk_lock *l) { atomic_store_explicit(&l->held, 0, memory_order_release); }

/* Takes two locks in address order (one when they are the same), so two threads taking the same pair cannot deadlock. */
static inline void ffk_lock__acquire2(ffk_lock *a, ffk_lock *b) {
  if (a == b) {
    ffk_lock__acquire(a);
  } else if ((uintptr_t)a < (uintptr_t)b) {
    ffk_lock__acquire(a);
    ffk_lock__acquire(b);
  } else {
    ffk_lock__acquire(b);
    ffk_lock__acquire(a);
  }
}

static inline void ffk_lock__release2(ffk_lock *a, ffk_lock *b) {
  ffk_lock__release(a);
  if (a != b) ffk_lock__release(b);
}

#endif /* FFIKIT_CONTAINERS_LOCK_H */
