/*
 * error.c - Error objects, the thread-local error slot, and backtraces.
 *
 * An Error is one block: the object, then the kind and the message (NUL-terminated).
 * Its backtrace has three parts, printed in this order, innermost first:
 *   1. the raising location (function, file:line), when raised by ffk_error_set;
 *   2. native return addresses captured with glibc's backtrace(), symbolised lazily
 *      (dladdr), so raising costs a stack walk but no symbol lookup;
 *   3. text frames appended as the error crosses calls and languages.
 *
 * Threads: an Error is an object, so any number of threads may hold it (a Rust closure
 * returns a clone of one it got from another thread). Everything but the appended frames,
 * the texts and the payload is fixed when the Error is made. A per-Error mutex guards
 * `appended` and `texts`: appends, ffk_error_frames and ffk_error_backtrace take it. A
 * backtrace text, once returned, is never changed or freed before the Error dies: it is
 * built on request, pushed on the `texts` list and reused until the next append makes it
 * stale; the next request builds a new one and the old one stays on the list. So the
 * pointer ffk_error_backtrace returns is valid for the Error's lifetime, whatever other
 * threads append meanwhile (the cost: one kept text per request that follows an append).
 *
 * The slot is a thread-local pointer; a pthread key releases what a thread leaves in
 * it when the thread exits. When an Error cannot be allocated the slot gets the
 * preallocated immortal MemoryError, which is never changed (appends are dropped).
 * Every write of the slot goes through set_slot, which keeps ffk_error__npending (the
 * number of full slots over all threads; internal.h says why the call path reads it
 * instead of the slot) in step: +1 when the slot fills, -1 when it empties.
 */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <execinfo.h>

#define MAX_NATIVE_FRAMES 48

/* A backtrace text handed out by ffk_error_backtrace: immutable, freed with its Error. */
typedef struct error_text {
  struct error_text *next; /* the text built before this one, or NULL */
  char data[];
} error_text;

struct ffk_error {
  ffk_object header;
  const char *kind;
  const char *message;
  const char *func; /* raising location; func NULL when unknown */
  const char *file;
  int line;
  int nframes;
  void *frames[MAX_NATIVE_FRAMES];
  pthread_mutex_t lock; /* guards appended, texts and texts_fresh */
  ffk_buf appended;     /* appended frames, each ending in '\n' */
  error_text *texts;    /* every text returned, newest first; freed when the Error dies */
  bool texts_fresh;     /* texts (the newest) shows every appended frame */
  ffk_object *payload; /* a binding's own error value (e.g. the Python exception), or NULL */
};

static bool g_backtrace_enabled = true;
static pthread_once_t g_backtrace_once = PTHREAD_ONCE_INIT;

static void read_backtrace_env(void) {
  const char *env = getenv("FFK_BACKTRACE");
  if (env != NULL && strcmp(env, "0") == 0) __atomic_store_n(&g_backtrace_enabled, false, __ATOMIC_RELAXED);
}

bool ffk_error_set_backtrace_enabled(bool enabled) {
  pthread_once(&g_backtrace_once, read_backtrace_env);
  return __atomic_exchange_n(&g_backtrace_enabled, enabled, __ATOMIC_RELAXED);
}

static bool backtrace_enabled(void) {
  pthread_once(&g_backtrace_once, read_backtrace_env);
  return __atomic_load_n(&g_backtrace_enabled, __ATOMIC_RELAXED);
}

/* ---- Objects. ---------------------------------------------------------------------- */

static void error_deleter(void *self, int which) {
  ffk_error *err = self;
  if (which & FFK_DELETER_DESTROY) {
    ffk_buf__free(&err->appended);
    for (error_text *t = err->texts, *next; t != NULL; t = next) {
      next = t->next;
      ffk_mem_free(t);
    }
    err->texts = NULL;
    pthread_mutex_destroy(&err->lock);
    ffk_object *payload = err->payload;
    err->payload = NULL;
    ffk_object_release(payload);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&err->header);
}

static void immortal_deleter(void *self, int which) {
  (void)self;
  (void)which;
}

static ffk_error g_no_memory = {
    .header = {.refcount = UINT64_C(1) << 30 | FFK_REFCOUNT_WEAK_ONE,
               .type_index = FFK_TYPE_ERROR,
               .flags = FFK_OBJECT_IMMORTAL,
               .deleter = immortal_deleter},
    .kind = FFK_ERR_MEMORY,
    .message = "out of memory (and no memory left to describe the error)",
};

/* An error with room for the message; NULL (no error raised) when memory is short. */
static ffk_error *alloc_error(const char *kind, size_t message_len) {
  size_t kind_len = strlen(kind);
  ffk_error *err = (ffk_error *)ffk_mem__raw_alloc(sizeof *err + kind_len + 1 + message_len + 1);
  if (err == NULL) return NULL;
  memset(err, 0, sizeof *err);
  pthread_mutex_init(&err->lock, NULL); /* cannot fail with default attributes on Linux */
  ffk_object__init(&err->header, FFK_TYPE_ERROR, error_deleter);
  char *k = (char *)(err + 1);
  memcpy(k, kind, kind_len + 1);
  err->kind = k;
  err->message = k + kind_len + 1;
  return err;
}

ffk_error *ffk_error_new(const char *kind, const char *message) {
  if (kind == NULL) kind = FFK_ERR_RUNTIME;
  if (message == NULL) message = "";
  size_t len = strlen(message);
  ffk_error *err = alloc_error(kind, len);
  if (err == NULL) {
    ffk_error_set(FFK_ERR_MEMORY, "out of memory creating a %s", kind);
    return NULL;
  }
  memcpy((char *)err->message, message, len + 1);
  return err;
}

/* ---- The slot. ---------------------------------------------------------------------- */

_Thread_local ffk_error *ffk_error__slot; /* see internal.h */
ffk_error__count ffk_error__npending; /* see internal.h */
static _Thread_local bool t_cleanup_registered;
static pthread_key_t g_cleanup_key;
static pthread_once_t g_cleanup_once = PTHREAD_ONCE_INIT;

/* Stores `err` (NULL to empty) in the slot and returns what it held, counting the change. */
static inline ffk_error *set_slot(ffk_error *err) {
  ffk_error *old = ffk_error__slot;
  ffk_error__slot = err;
  if (old == NULL && err != NULL) __atomic_fetch_add(&ffk_error__npending.n, 1, __ATOMIC_RELAXED);
  else if (old != NULL && err == NULL) __atomic_fetch_sub(&ffk_error__npending.n, 1, __ATOMIC_RELAXED);
  return old;
}

static void release_at_thread_exit(void *unused) {
  (void)unused;
  ffk_error *err = set_slot(NULL);
  ffk_object_release(err ? &err->header : NULL);
}

static void make_cleanup_key(void) { pthread_key_create(&g_cleanup_key, release_at_thread_exit); }

static void store(ffk_error *err) {
  ffk_error *old = set_slot(err);
  if (err != NULL && !t_cleanup_registered) {
    pthread_once(&g_cleanup_once, make_cleanup_key);
    /* Any non-NULL value makes the destructor run at thread exit. */
    t_cleanup_registered = pthread_setspecific(g_cleanup_key, &ffk_error__slot) == 0;
  }
  ffk_object_release(old ? &old->header : NULL);
}

/*
 * The one raising routine. Each public entry point passes its own return address,
 * which lies in the function that raised; the captured stack is cut so that it
 * starts there, whatever frames the capture itself added (an inlined helper, a
 * sanitizer's interceptor).
 */
static FFK_NOINLINE void raise_v(void *raiser, const char *file, int line, const char *func, const char *kind,
                                 const char *fmt, va_list ap) {
  if (kind == NULL) kind = FFK_ERR_RUNTIME;
  if (fmt == NULL) fmt = "";
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  ffk_error *err = alloc_error(kind, (size_t)n);
  if (err == NULL) {
    store(&g_no_memory);
    return;
  }
  vsnprintf((char *)err->message, (size_t)n + 1, fmt, ap);
  err->func = func;
  err->file = file;
  err->line = line;
  if (backtrace_enabled()) {
    enum { SLACK = 8 }; /* frames the capture may add before the raiser's */
    void *frames[MAX_NATIVE_FRAMES + SLACK];
    int got = backtrace(frames, MAX_NATIVE_FRAMES + SLACK);
    int first = 0;
    while (first < got && first < SLACK && frames[first] != raiser) ++first;
    if (first == got || first == SLACK) first = 0; /* not found: keep everything */
    got -= first;
    if (got > MAX_NATIVE_FRAMES) got = MAX_NATIVE_FRAMES;
    if (got > 0) {
      memcpy(err->frames, frames + first, sizeof(void *) * (size_t)got);
      err->nframes = got;
    }
  }
  store(err);
}

FFK_NOINLINE int ffk_error_setv_at(const char *file, int line, const char *func, const char *kind, const char *fmt,
                                   va_list ap) {
  raise_v(__builtin_return_address(0), file, line, func, kind, fmt, ap);
  return -1;
}

FFK_NOINLINE int ffk_error_set_at(const char *file, int line, const char *func, const char *kind, const char *fmt,
                                  ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(__builtin_return_address(0), file, line, func, kind, fmt, ap);
  va_end(ap);
  return -1;
}

FFK_NOINLINE int(ffk_error_set)(const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(__builtin_return_address(0), NULL, 0, NULL, kind, fmt, ap);
  va_end(ap);
  return -1;
}

int ffk_error__no_memory(size_t size, bool growing) {
  return growing ? ffk_error_set(FFK_ERR_MEMORY, "out of memory reallocating to %zu bytes", size)
                 : ffk_error_set(FFK_ERR_MEMORY, "out of memory allocating %zu bytes", size);
}

/* The errors of the text buffer's appends (internal.h): raised here, since error.c formats
   its own texts with the non-raising appends of buf_core.c, below it. */
int ffk_error__raise_buf(const ffk_buf__fail *fail) {
  switch (fail->what) {
    case FFK_BUF__TOO_LARGE:
      return ffk_error_set(FFK_ERR_MEMORY, "text buffer would exceed size_t");
    case FFK_BUF__NO_MEMORY:
      return ffk_error__no_memory(fail->want, true);
    case FFK_BUF__BAD_FORMAT:
      return ffk_error_set(FFK_ERR_VALUE, "invalid format string \"%s\"", fail->fmt);
  }
  return ffk_error_set(FFK_ERR_RUNTIME, "text buffer failed in an unknown way (%d)", (int)fail->what);
}

bool ffk_error_occurred(void) { return ffk_error__slot != NULL; }

ffk_error *ffk_error_peek_borrow(void) { return ffk_error__slot; }

ffk_error *ffk_error_fetch(void) { return ffk_error__slot != NULL ? set_slot(NULL) : NULL; }

void ffk_error_restore(ffk_error *err) { store(err); }

void ffk_error_clear(void) { store(NULL); }

bool ffk_error_matches(const char *kind) {
  return ffk_error__slot != NULL && kind != NULL && strcmp(ffk_error__slot->kind, kind) == 0;
}

const char *ffk_error_kind(const ffk_error *err) { return err ? err->kind : ""; }

const char *ffk_error_message(const ffk_error *err) { return err ? err->message : ""; }

/* ---- Backtraces. -------------------------------------------------------------------- */

static const char *basename_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int append_native_frame(ffk_buf *b, ffk_buf__fail *fail, void *ip) {
  Dl_info info;
  if (dladdr(ip, &info) == 0 || info.dli_fname == NULL) return ffk_buf__try_appendf(b, fail, "  at %p\n", ip);
  const char *module = basename_of(info.dli_fname);
  if (info.dli_sname != NULL)
    return ffk_buf__try_appendf(b, fail, "  at %s+0x%tx (%s)\n", info.dli_sname, (char *)ip - (char *)info.dli_saddr,
                                module);
  return ffk_buf__try_appendf(b, fail, "  at %s+0x%tx\n", module, (char *)ip - (char *)info.dli_fbase);
}

/* Builds a new text from the native frames and the appended ones and pushes it on
 * err->texts. Called with err->lock held. Returns 0, or -1 with a MemoryError. */
static int build_text(ffk_error *err) {
  ffk_buf b = {0};
  ffk_buf__fail fail;
  int rc = 0;
  if (err->func != NULL)
    rc = ffk_buf__try_appendf(&b, &fail, "  at %s (%s:%d)\n", err->func, err->file ? err->file : "?", err->line);
  int i = 0;
  Dl_info info;
  /* The raiser's own native frame repeats the location line above it: drop it. */
  if (err->func != NULL && err->nframes > 0 && dladdr(err->frames[0], &info) != 0 && info.dli_sname != NULL &&
      strcmp(info.dli_sname, err->func) == 0)
    i = 1;
  for (; rc == 0 && i < err->nframes; ++i) rc = append_native_frame(&b, &fail, err->frames[i]);
  if (rc == 0 && err->appended.size > 0) rc = ffk_buf__try_append(&b, err->appended.data, err->appended.size, &fail);
  if (rc != 0) ffk_error__raise_buf(&fail);
  error_text *t = NULL;
  if (rc == 0) {
    /* The raw allocator (error.c lies below memory.c), with ffk_mem_alloc's error. */
    t = ffk_mem__raw_alloc(sizeof *t + b.size + 1);
    if (t == NULL) rc = ffk_error__no_memory(sizeof *t + b.size + 1, false);
  }
  if (rc != 0) {
    ffk_buf__free(&b);
    return -1;
  }
  if (b.size > 0) memcpy(t->data, b.data, b.size);
  t->data[b.size] = '\0';
  ffk_buf__free(&b);
  t->next = err->texts;
  err->texts = t;
  err->texts_fresh = true;
  return 0;
}

int ffk_error_frames(ffk_error *err, char *buf, size_t cap, size_t *len) {
  if (err == NULL || len == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_error_frames: %s is NULL", err ? "len" : "err");
  if (err->header.flags & FFK_OBJECT_IMMORTAL) {
    *len = 0;
    if (buf != NULL && cap > 0) buf[0] = '\0';
    return 0;
  }
  int n = 0;
  if (err->func != NULL)
    n = snprintf(buf, buf ? cap : 0, "  at %s (%s:%d)\n", err->func, err->file ? err->file : "?", err->line);
  size_t head = n > 0 ? (size_t)n : 0;
  pthread_mutex_lock(&err->lock);
  size_t total = head + err->appended.size;
  if (buf != NULL && cap > 0) {
    if (head < cap) {
      size_t room = cap - head - 1;
      size_t take = err->appended.size < room ? err->appended.size : room;
      if (take > 0) memcpy(buf + head, err->appended.data, take);
      buf[head + take] = '\0';
    }
  }
  pthread_mutex_unlock(&err->lock);
  *len = total;
  return 0;
}

const char *ffk_error_backtrace(ffk_error *err) {
  if (err == NULL) return "";
  if (err->header.flags & FFK_OBJECT_IMMORTAL) return "";
  /* Building the text must not disturb the caller's pending error. */
  ffk_error *pending = ffk_error_fetch();
  pthread_mutex_lock(&err->lock);
  int rc = err->texts_fresh ? 0 : build_text(err);
  const char *text = rc == 0 ? err->texts->data : "";
  pthread_mutex_unlock(&err->lock);
  ffk_error_restore(pending); /* releases what a failed build raised: after the unlock */
  return text;
}

int ffk_error_set_payload(ffk_error *err, ffk_object *payload) {
  if (err == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_error_set_payload: err is NULL");
  if (err->header.flags & FFK_OBJECT_IMMORTAL) return 0;
  if (payload != NULL) ffk_object_retain(payload);
  ffk_object *old = err->payload;
  err->payload = payload;
  ffk_object_release(old); /* may run a binding's code: the error is consistent already */
  return 0;
}

ffk_object *ffk_error_payload_borrow(const ffk_error *err) { return err ? err->payload : NULL; }

int ffk_error_append_frame(ffk_error *err, const char *frame) {
  if (err == NULL || frame == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_error_append_frame: %s is NULL",
                                                         err == NULL ? "err" : "frame");
  if (err->header.flags & FFK_OBJECT_IMMORTAL) return 0;
  size_t len = strlen(frame);
  /* Raising under the lock must not release the slot's error (it may be err itself, or
     one whose payload runs a binding's code): move it out until the lock is dropped. */
  ffk_error *pending = ffk_error_fetch();
  pthread_mutex_lock(&err->lock);
  size_t before = err->appended.size;
  ffk_buf__fail fail;
  int rc = 0;
  if (ffk_buf__try_append(&err->appended, frame, len, &fail) != 0 ||
      ((len == 0 || frame[len - 1] != '\n') && ffk_buf__try_append(&err->appended, "\n", 1, &fail) != 0)) {
    err->appended.size = before;
    if (err->appended.data) err->appended.data[before] = '\0';
    rc = ffk_error__raise_buf(&fail);
  } else {
    err->texts_fresh = false; /* the texts already returned stay valid */
  }
  pthread_mutex_unlock(&err->lock);
  if (rc != 0) {
    ffk_object_release(pending ? &pending->header : NULL); /* the MemoryError replaces it */
  } else {
    ffk_error_restore(pending);
  }
  return rc;
}
