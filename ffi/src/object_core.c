/*
 * object_core.c - the half of the objects that raises nothing: reference counting,
 * releasing (and the deaths of deep data), weak references. It lies below error.c, which
 * releases its Errors here (and initialises them with ffk_object__init, inline in
 * internal.h); the checked allocation and initialisation, which raise and ask the type
 * registry, are object.c, above error.c. The allocator is memory_raw.c, the live-object
 * counters debug_counters.c.
 *
 * Invariants:
 *  - Every object is allocated by ffk_mem__raw_alloc (memory_raw.c) and counted live by
 *    ffk_object__init until ffk_object_free or ffk_object_forget (FFK_TESTING builds).
 *  - The refcount word holds strong (low 32 bits) and weak (high 32 bits) counts, the
 *    strong holders sharing one weak unit. Memory is freed only when the weak count
 *    reaches zero, so a weak holder can always read the header of a dead object.
 */
#include "internal.h"

#include <stdlib.h>

#define STRONG_MASK UINT64_C(0xffffffff)

void ffk_object_forget(ffk_object *obj) {
  if (obj != NULL && !(obj->flags & FFK_OBJECT_IMMORTAL)) ffk_debug__object_died(obj->type_index);
}

void ffk_object_free(ffk_object *obj) {
  if (obj == NULL || (obj->flags & FFK_OBJECT_IMMORTAL)) return;
  ffk_debug__object_died(obj->type_index);
  free(obj);
}

void ffk_object_retain(ffk_object *obj) {
  assert(obj != NULL);
  FFK_ATOMIC_ADD(&obj->refcount, FFK_REFCOUNT_STRONG_ONE, __ATOMIC_RELAXED);
}

/*
 * Releasing deep data. A deleter releases what its object holds, and the last release of
 * a child runs the child's deleter inside the parent's: a chain N objects deep (a List
 * holding a List holding ...) would nest N deleter calls and overflow the stack long
 * before N reaches ten million. So each thread notes the stack address of its outermost
 * death; a death nested more than DIE_STACK_MAX bytes below it queues the dying object
 * instead of destroying it there, and the outermost death destroys the queued ones one at
 * a time before it returns, each starting again near the top (CPython's "trashcan",
 * without its per-type opt-in). The stack a release uses stays within DIE_STACK_MAX and one
 * more deleter, whatever the depth of the data and however large the deleters' frames; the
 * queue holds at most what the data holds; and a release still returns only when
 * everything it made unreachable is gone (the live-object counters see no lag).
 *
 * Only the outermost death drains, last-in first-out, so a chain keeps the queue at about
 * one entry. The queue grows with malloc and is freed when it empties (a thread that exits
 * leaves nothing behind); when malloc fails the object is destroyed in place, recursing as
 * before, rather than leaked. That memory is libc's, not ffk_mem's: a release neither uses
 * up nor trips the failing-allocation hook of the fail-Nth tests (ffikit/debug.h). A death
 * on another stack than its outermost one (a deleter that switches stacks) is queued too:
 * the distance is only ever a reason to queue, never to recurse.
 *
 * What a deleter may rely on. Past DIE_STACK_MAX a child that a deleter releases is
 * destroyed after that deleter has returned (and its object's memory is gone), though
 * still before the outermost release returns. So a deleter must not, right after
 * releasing a child, tear down something the child's deleter needs (unload the code a
 * Function's context deleter lives in, free a pool the child returns memory to): that
 * held before only when the deleter was the child's last holder anyway. Locks: the queue
 * is drained in the frame of the outermost call, where the recursion ran it before, so
 * no deleter runs under a lock it did not run under before (some run under fewer: those
 * a deeper deleter held while it released). Weak holders: a queued object's strong count
 * is already 0 (or it was never shared), so ffk_weak_lock fails while it waits, as it
 * does once it is destroyed; its memory stays until the last weak holder lets go, as ever.
 *
 * What it costs. A nested death reads the thread's outermost address, compares, and
 * tail-calls the deleter: no frame, nothing to restore after. Only the outermost death
 * keeps a frame across its deleter (to drain and to clear the address). Leaves (String,
 * Bytes, Shape: one shared deleter that owns nothing) skip all of it.
 */
#define DIE_STACK_MAX (32 * 1024)

typedef struct dying {
  ffk_object *obj;
  bool weak_held; /* weak holders remain: destroy, then give back the strong holders' weak unit */
} dying;

/* A thread's deaths: read and written only by that thread (relaxed atomics). */
typedef struct die_state {
  uintptr_t top;   /* the stack address of the thread's outermost death; 0 outside one */
  uint32_t queued; /* entries in the thread's queue */
} die_state;

static _Thread_local struct {
  die_state state; /* for a thread that has no slot (below) */
  uint32_t cap;
  dying *queue;
} t_die;

/*
 * Where a thread finds its state. A thread-local variable costs a __tls_get_addr call in a
 * shared library (internal.h says why the faster TLS models do not fit libffikit.so), on
 * every death of an object that can hold others. So the state lives in a slot of a small
 * process-wide table, found from the thread pointer (one instruction: %fs:0 on x86-64,
 * tpidr_el0 on AArch64), which no two live threads share. A thread claims the slot its
 * thread pointer hashes to (a CAS from 0) the first time it needs one, and keeps it:
 * between releases its state is empty, so a later thread that inherits the same thread
 * pointer (glibc reuses a dead thread's stack and TCB) inherits a correct slot. A thread
 * whose slot another owns, or where the thread pointer cannot be read, uses t_die.state all
 * its life. One slot per cache line: threads never write each other's lines.
 */
#define DIE_SLOTS 256

typedef struct die_slot {
  _Alignas(64) uintptr_t owner; /* the owner's thread pointer; 0 while free */
  die_state state;
} die_slot;

static die_slot g_die_slots[DIE_SLOTS];

static inline uintptr_t thread_pointer(void) {
  uintptr_t tp = 0;
#if defined(__x86_64__) && defined(__linux__)
  __asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__) && defined(__linux__)
  __asm__("mrs %0, tpidr_el0" : "=r"(tp));
#endif
  return tp;
}

static inline die_slot *slot_of(uintptr_t tp) { return &g_die_slots[(tp * UINT64_C(0x9e3779b97f4a7c15)) >> 56]; }

/* The state of a thread whose slot is not (yet) its own: claims it when free. */
static die_state *claim_state(die_slot *s, uintptr_t tp) {
  /* A load first: a thread whose slot another owns must not take the owner's cache line
     with a failing CAS on every death. */
  uintptr_t owner = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
  if (tp != 0 && owner == 0 &&
      __atomic_compare_exchange_n(&s->owner, &owner, tp, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return &s->state;
  return &t_die.state;
}

#define STATE_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STATE_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Destroys an object whose weak holders outlive it, and frees it when the last has gone. */
static FFK_NOINLINE void finish_weak_held(ffk_object *obj) {
  obj->deleter(obj, FFK_DELETER_DESTROY);
  /* Give back the weak unit the strong holders shared. */
  if (FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, FFK_DECREMENT_ORDER) == FFK_REFCOUNT_WEAK_ONE) {
    FFK_ACQUIRE_FENCE();
    obj->deleter(obj, FFK_DELETER_FREE);
  }
}

/* Destroys an object whose strong count reached 0, and frees it when no weak holder remains. */
static inline void finish(ffk_object *obj, bool weak_held) {
  if (FFK_LIKELY(!weak_held))
    obj->deleter(obj, FFK_DELETER_BOTH);
  else
    finish_weak_held(obj);
}

/* Queues obj for the outermost death. False when the queue cannot grow. */
static FFK_NOINLINE bool defer(die_state *st, ffk_object *obj, bool weak_held) {
  uint32_t n = STATE_LOAD(&st->queued);
  if (n == t_die.cap) {
    uint32_t cap = t_die.cap ? 2 * t_die.cap : 64;
    dying *more = cap > t_die.cap ? realloc(t_die.queue, (size_t)cap * sizeof *more) : NULL;
    if (more == NULL) return false;
    t_die.queue = more;
    t_die.cap = cap;
  }
  t_die.queue[n] = (dying){obj, weak_held};
  STATE_STORE(&st->queued, n + 1);
  return true;
}

/* The outermost death's last part: destroys what the nested ones queued, then drops the queue. */
static FFK_NOINLINE void drain(die_state *st) {
  for (uint32_t n; (n = STATE_LOAD(&st->queued)) > 0;) {
    dying d = t_die.queue[n - 1];
    STATE_STORE(&st->queued, n - 1);
    finish(d.obj, d.weak_held);
  }
  free(t_die.queue);
  t_die.queue = NULL;
  t_die.cap = 0;
}

/* The thread's outermost death: notes where its stack stands, destroys, drains. */
static FFK_NOINLINE void die_outermost(die_state *st, ffk_object *obj, bool weak_held) {
  STATE_STORE(&st->top, (uintptr_t)__builtin_frame_address(0));
  finish(obj, weak_held);
  if (FFK_UNLIKELY(STATE_LOAD(&st->queued) != 0)) drain(st);
  STATE_STORE(&st->top, 0);
}

/* A death nested DIE_STACK_MAX below the outermost (or on another stack): queued. */
static FFK_NOINLINE void die_far(die_state *st, ffk_object *obj, bool weak_held) {
  if (!defer(st, obj, weak_held)) finish(obj, weak_held);
}

void ffk_object__leaf_deleter(void *self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(self);
}

void ffk_object__block_deleter(void *self, int which) {
  if (!(which & FFK_DELETER_FREE)) return;
  ffk_object *obj = self;
  ffk_object_block *b = ((ffk_object_block **)obj)[-1];
  ffk_debug__object_died(obj->type_index);
  if (__atomic_sub_fetch(&b->live, 1, __ATOMIC_ACQ_REL) == 0) ffk_mem_free(b);
}

/*
 * The death of an object that can hold others, given the thread's state. Nested (the
 * thread is inside a death): the deleter runs here unless the stack has grown
 * DIE_STACK_MAX since the outermost death (the unsigned difference is huge, so queues, on
 * any other stack). Every call is a tail call, so the nested path keeps nothing in a frame
 * and has nothing to restore.
 */
static inline void die_with(die_state *st, ffk_object *obj, bool weak_held) {
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  uintptr_t top = STATE_LOAD(&st->top);
  if (FFK_UNLIKELY(top == 0))
    die_outermost(st, obj, weak_held);
  else if (FFK_UNLIKELY(top - here > DIE_STACK_MAX))
    die_far(st, obj, weak_held);
  else
    finish(obj, weak_held);
}

static FFK_NOINLINE void die_unslotted(ffk_object *obj, bool weak_held) {
  uintptr_t tp = thread_pointer();
  die_with(claim_state(slot_of(tp), tp), obj, weak_held);
}

static FFK_NOINLINE void die_nesting(ffk_object *obj, bool weak_held) {
  uintptr_t tp = thread_pointer();
  die_slot *s = slot_of(tp);
  if (FFK_UNLIKELY(__atomic_load_n(&s->owner, __ATOMIC_RELAXED) != tp || tp == 0))
    die_unslotted(obj, weak_held);
  else
    die_with(&s->state, obj, weak_held);
}

/* A leaf (an object whose deleter owns nothing else) cannot nest a death: freed without any of the above. */
static inline void die(ffk_object *obj, bool weak_held) {
  if (obj->deleter == ffk_object__block_deleter && FFK_LIKELY(!weak_held))
    ffk_object__block_deleter(obj, FFK_DELETER_BOTH); /* an object of a block: a leaf as well */
  else if (obj->deleter != ffk_object__leaf_deleter)
    die_nesting(obj, weak_held);
  else if (FFK_LIKELY(!weak_held))
    ffk_object_free(obj); /* all that the leaf deleter does */
  else
    finish_weak_held(obj);
}

void ffk_object_release(ffk_object *obj) {
  if (obj == NULL) return;
  /*
   * The only strong reference and no weak one: no other thread can reach the count
   * (only holders retain, and weak holders upgrade), so the object goes without a
   * read-modify-write. The acquire load pairs with earlier holders' release decrements.
   */
  if (FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT) {
    die(obj, false);
    return;
  }
  uint64_t before = FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_STRONG_ONE, FFK_DECREMENT_ORDER);
  if (FFK_LIKELY((before & STRONG_MASK) != 1)) return;
  FFK_ACQUIRE_FENCE();
  /* No weak holders (before == INIT): nobody can observe the object any more. */
  die(obj, before != FFK_REFCOUNT_INIT);
}

uint32_t ffk_object_use_count(const ffk_object *obj) {
  if (obj == NULL) return 0;
  return (uint32_t)(FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED) & STRONG_MASK);
}

uint32_t ffk_object_weak_count(const ffk_object *obj) {
  if (obj == NULL) return 0;
  uint64_t rc = FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED);
  uint32_t weak = (uint32_t)(rc >> 32);
  /* The strong holders share one weak unit while any of them is alive. */
  return (rc & STRONG_MASK) != 0 && weak > 0 ? weak - 1 : weak;
}

bool ffk_object_is_unique(const ffk_object *obj) {
  return obj != NULL && FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_ACQUIRE) == FFK_REFCOUNT_INIT;
}

void ffk_weak_retain(ffk_object *obj) {
  assert(obj != NULL);
  FFK_ATOMIC_ADD(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, __ATOMIC_RELAXED);
}

void ffk_weak_release(ffk_object *obj) {
  if (obj == NULL) return;
  if (FFK_ATOMIC_SUB(&obj->refcount, FFK_REFCOUNT_WEAK_ONE, FFK_DECREMENT_ORDER) == FFK_REFCOUNT_WEAK_ONE) {
    FFK_ACQUIRE_FENCE();
    obj->deleter(obj, FFK_DELETER_FREE);
  }
}

ffk_object *ffk_weak_lock(ffk_object *obj) {
  if (obj == NULL) return NULL;
  uint64_t rc = FFK_ATOMIC_LOAD(&obj->refcount, __ATOMIC_RELAXED);
  do {
    if ((rc & STRONG_MASK) == 0) return NULL;
  } while (!__atomic_compare_exchange_n(&obj->refcount, &rc, rc + FFK_REFCOUNT_STRONG_ONE, true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
  return obj;
}

uint32_t ffk_abi_version(void) { return FFK_ABI_VERSION; }

const char *ffk_version(void) { return FFK_VERSION; }
