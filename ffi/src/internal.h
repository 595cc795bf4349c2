/*
 * internal.h - helpers shared by the files of the ffi core; not installed.
 *
 * Names shared between files end in a double-underscore module prefix
 * (ffk_mem__raw_alloc); everything else private is static in its file.
 */
#ifndef FFIKIT_FFI_INTERNAL_H
#define FFIKIT_FFI_INTERNAL_H

#include <ffikit/ffi.h>

#include <assert.h>
#include <stdarg.h>
#include <string.h>

/* Atomics on the plain uint64_t header field (the header is shared with C++, which has no _Atomic). */
#define FFK_ATOMIC_LOAD(p, order) __atomic_load_n((p), (order))
#define FFK_ATOMIC_ADD(p, v, order) __atomic_fetch_add((p), (v), (order))
#define FFK_ATOMIC_SUB(p, v, order) __atomic_fetch_sub((p), (v), (order))

/*
 * Dropping a reference: a release decrement, and an acquire fence before destruction.
 * ThreadSanitizer does not model standalone fences, so under TSan the decrement itself
 * is acq_rel (as strong, slightly slower) and the fence disappears.
 */
#if defined(__SANITIZE_THREAD__)
#define FFK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FFK_TSAN 1
#endif
#endif
#ifdef FFK_TSAN
#define FFK_DECREMENT_ORDER __ATOMIC_ACQ_REL
#define FFK_ACQUIRE_FENCE() ((void)0)
#else
#define FFK_DECREMENT_ORDER __ATOMIC_RELEASE
#define FFK_ACQUIRE_FENCE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/*
 * The raw allocation path (memory_raw.c, below error.c, with ffk_mem_free): honours the
 * failing-allocator hook and counts, but raises nothing, so the error module can fall back
 * to its preallocated MemoryError. The realloc form leaves ptr untouched when it returns NULL.
 */
void *ffk_mem__raw_alloc(size_t size);
void *ffk_mem__raw_realloc(void *ptr, size_t size);

/*
 * The test hooks' internal side (debug_counters.c, below error.c: none raises): whether
 * this allocation must fail (counting it), the countdown ffk_debug_fail_allocation arms
 * (debug.c, after its check), and the live-object counters. Only FFK_TESTING builds have
 * them; release builds compile the calls to nothing.
 */
#ifdef FFK_TESTING
bool ffk_debug__allocation_fails(void);
void ffk_debug__set_fail_countdown(int64_t n);
void ffk_debug__object_born(int32_t type_index);
void ffk_debug__object_died(int32_t type_index);
#else
static inline bool ffk_debug__allocation_fails(void) { return false; }
static inline void ffk_debug__object_born(int32_t type_index) { (void)type_index; }
static inline void ffk_debug__object_died(int32_t type_index) { (void)type_index; }
#endif

/*
 * ffk_object_alloc for built-in types that fill every payload byte themselves (object.c):
 * the header is initialised, the rest is left as malloc returned it. Trusted callers only
 * (no argument checks beyond the public function's allocation failure, which raises).
 */
ffk_object *ffk_object__alloc_uninit(int32_t type_index, size_t size, ffk_deleter deleter);

/*
 * Initialises the header of freshly allocated object memory (strong 1, weak 1) and
 * counts the object live. Never raises and checks nothing: for allocators that cannot
 * raise (the error module) and after the checks of object.c. Inline, so the allocation
 * paths of object.c, string.c and error.c pay no call for it.
 */
static inline void ffk_object__init(ffk_object *obj, int32_t type_index, ffk_deleter deleter) {
  obj->refcount = FFK_REFCOUNT_INIT;
  obj->type_index = type_index;
  obj->flags = 0;
  obj->deleter = deleter;
  ffk_debug__object_born(type_index);
}

/*
 * The deleter of objects that own nothing but their own block (String, Bytes, Shape).
 * ffk_object_release recognises it: such a death runs no other deleter, so it skips the
 * stack bound of deep releases (object_core.c, "Releasing deep data") and frees the block directly.
 */
void ffk_object__leaf_deleter(void *self, int which);
/*
 * Leaf objects made together in one allocation (the Strings of ffk_any_str_many, string.c):
 * the block starts with the count of its objects not yet freed, and each object is
 * preceded by a pointer to its block. Their deleter, ffk_object__block_deleter (object_core.c,
 * beside the leaf deleter it is a variant of, so that it calls no string code),
 * frees the block with the last of them; ffk_object_release treats it as a leaf too.
 */
typedef struct ffk_object_block {
  uint64_t live; /* atomic */
} ffk_object_block;
void ffk_object__block_deleter(void *self, int which);

/*
 * The calling thread's pending error (error.c), and how the call path avoids reading it.
 *
 * In a shared library a thread-local variable is reached, in the compilers' default
 * (global-dynamic) model, by calling __tls_get_addr through the PLT on every access: that
 * was most of a packed call's fixed cost when ffk_function_call checked the slot before
 * and after the callee. The faster models do not fit every libffikit.so: initial-exec
 * needs the module's whole TLS block in glibc's static TLS surplus when the library is
 * dlopen'ed (CPython dlopens the extension, which pulls libffikit.so in), and a CUDA build
 * links the static CUDA runtime, whose TLS alone is a 4 KiB-aligned 4 KiB block, far over
 * the surplus (so dlopen would fail); TLS descriptors (-mtls-dialect=gnu2) are a GCC-only
 * flag on x86-64 (clang 14 rejects it).
 *
 * So the hot path touches no thread-local state at all: ffk_error__npending counts the
 * slots, over all threads, that hold an error. A slot's owner increments it when its
 * slot goes from empty to full and decrements it when the slot empties (error.c's
 * store(), ffk_error_fetch and the thread-exit release; relaxed atomics). A thread whose
 * own slot is full has incremented the count and not yet decremented it, and every other
 * thread's contribution is never negative, so by read-after-write coherence that thread
 * reads a non-zero count: a zero read proves the reader's slot is empty. Only a non-zero
 * count (an error pending somewhere, which is rare and short-lived) costs the real slot
 * read. The count is alone on its cache line: raising and fetching errors (already a
 * malloc and a stack walk) are the only writers.
 */
#if defined(__GNUC__) && !defined(_WIN32)
#define FFK_INTERNAL __attribute__((visibility("hidden"))) /* reached directly, not through the GOT */
#else
#define FFK_INTERNAL
#endif
extern FFK_INTERNAL _Thread_local ffk_error *ffk_error__slot;
typedef struct ffk_error__count {
  _Alignas(64) uint64_t n; /* 64-aligned, so the struct fills its cache line */
} ffk_error__count;
extern FFK_INTERNAL ffk_error__count ffk_error__npending;
#define FFK_ERROR__PENDING() \
  (FFK_UNLIKELY(__atomic_load_n(&ffk_error__npending.n, __ATOMIC_RELAXED) != 0) && ffk_error__slot != NULL)

/*
 * ffk_any_object_steal (any.c) inline, for the files below any.c that make Anys of the
 * objects they build (string.c): one definition of the rule, and no call up into any.c.
 */
static inline ffk_any ffk_any__object_steal(ffk_object *obj) {
  ffk_any v = ffk_any_none();
  if (obj == NULL) return v;
  v.type_index = obj->type_index;
  v.v_obj = obj;
  return v;
}

/*
 * The kind that key equality and hash compare (any.c, hash.c): folds the str forms
 * (SmallStr, String, raw C string) into FFK_TYPE_STRING and the bytes forms into
 * FFK_TYPE_BYTES; every other type index is its own kind.
 */
static inline int32_t ffk_any__key_kind(int32_t type_index) {
  switch (type_index) {
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_RAW_STR:
      return FFK_TYPE_STRING;
    case FFK_TYPE_SMALL_BYTES:
    case FFK_TYPE_BYTE_ARRAY_PTR:
      return FFK_TYPE_BYTES;
    default:
      return type_index;
  }
}

/* The content of a str or bytes value (any.c); "" and 0 for anything else. Never raises. */
void ffk_any__content(const ffk_any *v, const char **data, size_t *size);

/* Type registry internals used by repr and Any. */
ffk_repr_fn ffk_type__repr_slot(int32_t type_index);
/* The key operations of exactly `type_index` (ffk_type_set_key_ops), or NULL: identity. */
ffk_key_hash_fn ffk_type__key_hash(int32_t type_index);
ffk_key_equal_fn ffk_type__key_equal(int32_t type_index);

/* The converter slot set for exactly `type_index` (ffk_type_set_converter), or NULL. */
ffk_convert_fn ffk_type__convert_slot(int32_t type_index);

/*
 * A typed Function's signature: the parameter schemas, the return schema (NULL for
 * Any), the text used in messages, "name(0: int, y: Array<int>) -> int", and the
 * parameter names as written ("y"; NULL for a parameter without one). `names` and the
 * name strings live in the signature's own block; `nnamed` counts the non-NULL names.
 */
typedef struct ffk_signature {
  char *text;
  ffk_schema *ret;
  const char **names;
  int32_t nnamed;
  int32_t nparams;
  /*
   * Set by ffk_function_new_typed (function.c) once parsed; false from the parser:
   * every parameter is Any or a plain (non-object, non-Optional) type, so an argument
   * passes unchanged exactly when its type index is the parameter's (or the parameter
   * is Any). A call whose arguments all pass then skips the conversion frame.
   */
  bool plain_params;
  ffk_schema *params[];
} ffk_signature;

/*
 * Parses "(int, y: Array<int>) -> int" for the function `fn_name`. Returns a new
 * signature, or NULL with a ValueError naming the text and offset, or a MemoryError.
 */
ffk_signature *ffk_signature__parse(const char *fn_name, const char *text);
void ffk_signature__free(ffk_signature *sig);

/* The signature of a typed Function, NULL for an untyped one; borrowed from `f` (function.c). */
const ffk_signature *ffk_function__sig(const ffk_function *f);

/* Drops (and in test builds reports) an error pending when a call of `f` begins (function.c). */
void ffk_function__drop_stale_error(const ffk_function *f);

/*
 * A growable NUL-terminated byte buffer; zero-initialised is empty. On failure a buffer
 * keeps its previous contents. ffk_buf__free (buf_core.c) never raises.
 */
typedef struct ffk_buf {
  char *data;
  size_t size;
  size_t cap;
} ffk_buf;

void ffk_buf__free(ffk_buf *b);

/*
 * The appends everyone above error.c calls (buf.c): return 0, or -1 with a MemoryError
 * (out of memory, or a text past SIZE_MAX / 2) or a ValueError (a format vsnprintf rejects).
 */
int ffk_buf__append(ffk_buf *b, const char *data, size_t size);
int ffk_buf__vappendf(ffk_buf *b, const char *fmt, va_list ap);
int ffk_buf__appendf(ffk_buf *b, const char *fmt, ...) FFK_PRINTF(2, 3);

/*
 * The same appends without raising (buf_core.c), for error.c, which lies below the raising
 * ones: they return 0, or -1 with *fail saying why (nothing raised); the caller raises it
 * with ffk_error__raise_buf (error.c), the one place its errors are worded.
 */
typedef struct ffk_buf__fail {
  enum { FFK_BUF__TOO_LARGE = 1, FFK_BUF__NO_MEMORY, FFK_BUF__BAD_FORMAT } what;
  size_t want;     /* FFK_BUF__NO_MEMORY: the capacity that could not be allocated */
  const char *fmt; /* FFK_BUF__BAD_FORMAT: the format, borrowed from the caller */
} ffk_buf__fail;
int ffk_buf__try_append(ffk_buf *b, const char *data, size_t size, ffk_buf__fail *fail);
int ffk_buf__try_vappendf(ffk_buf *b, ffk_buf__fail *fail, const char *fmt, va_list ap);
int ffk_buf__try_appendf(ffk_buf *b, ffk_buf__fail *fail, const char *fmt, ...) FFK_PRINTF(3, 4);
/* Raises what *fail reports (a MemoryError or a ValueError, as above); returns -1 (error.c). */
int ffk_error__raise_buf(const ffk_buf__fail *fail);
/* The MemoryError of a failed allocation of `size` bytes ("out of memory allocating N
 * bytes", or "reallocating to N bytes" when `growing`), the one wording memory.c, the text
 * buffer and error.c's own allocations raise. Returns -1 (error.c). */
int ffk_error__no_memory(size_t size, bool growing);

/* Parses s[0..n) as a decimal of 1 to 10 digits only, at most `max`, into *out (parse.c). */
bool ffk_parse__u32(const char *s, size_t n, uint32_t max, uint32_t *out);

#endif /* FFIKIT_FFI_INTERNAL_H */
