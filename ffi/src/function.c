/*
 * function.c - Function objects, the packed call, and argument unpacking.
 *
 * A Function is one block: the object, the head's entry and its context (function.h's
 * ffk_function_head, read by the inline call), the callee and its context and deleter,
 * then the NUL-terminated name. Both forms of ffk_function_call enforce the calling
 * convention around the callee (result None first, -1 always with an error) and append
 * a frame naming the Function to errors that pass through it; the checked form (the
 * exported symbol, defined here) also enforces "0 never with an error" and drops an
 * error left pending before the call.
 *
 * The cost of a call (bench/installed measures it from the installed libffikit.so). The
 * inline form (function.h), what C callers compile to: the argument checks, None into the
 * result, the indirect call of the head's entry, a test of its return; a failure goes to
 * ffk_function__call_failed. For an untyped Function the entry is the callee itself, so
 * that is the whole call, as TVM-FFI's. A typed one's entry is typed_entry, which checks
 * the arguments' type indices against the flat copy made at creation (fast_types) and
 * calls the callee from its small frame; only a call that needs a conversion (or fails
 * the check, or meets an error pending) takes call_general and call_typed's larger one.
 * The checked form adds two reads of the process-wide pending-error count (internal.h: no
 * thread-local access) and the PLT hop; the rest of it is out of line as well:
 * call_general (an error pending in some thread, bad arguments) and the failure side (a
 * stale error before the call, a stray one after, -1 without an error, the frame).
 */
#include "internal.h"

#include <ffikit/function.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct ffk_function {
  ffk_object header;
  ffk_safe_call entry;  /* ffk_function_head: what a call runs (function.h) */
  void *entry_context;
  ffk_safe_call call;   /* the callee given at creation, and its context */
  void *context;
  ffk_context_deleter context_deleter;
  ffk_signature *sig; /* NULL for an untyped Function */
  char *doc;          /* NULL when undocumented; set only while the Function is unshared */
  uint32_t flags;     /* FFK_FUNCTION_* bits; set only while the Function is unshared */
  /*
   * typed_entry's fast check, set at creation: when every parameter is plain (sig->plain_params)
   * and there are at most FAST_MAX, fast_nparams is their count and fast_types their type
   * indices (FFK_SCHEMA_ANY for Any), flat, so a call reads one array; else -1.
   */
  int32_t fast_nparams;
  int32_t fast_types[4];
  char name[];
};

FFK_STATIC_ASSERT(offsetof(ffk_function, entry) == offsetof(ffk_function_head, entry), "the head's entry");
FFK_STATIC_ASSERT(offsetof(ffk_function, entry_context) == offsetof(ffk_function_head, entry_context),
                  "the head's entry_context");

static int typed_entry(void *self, const ffk_any *args, int32_t nargs, ffk_any *result);

enum { FAST_MAX = 4 };

static void function_deleter(void *self, int which) {
  ffk_function *f = self;
  if ((which & FFK_DELETER_DESTROY) && f->context_deleter != NULL) {
    ffk_context_deleter d = f->context_deleter;
    f->context_deleter = NULL; /* exactly once */
    d(f->context);
  }
  if (which & FFK_DELETER_DESTROY) {
    ffk_signature__free(f->sig);
    f->sig = NULL;
    ffk_mem_free(f->doc);
    f->doc = NULL;
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&f->header);
}

ffk_function *ffk_function_new_typed(const char *name, const char *signature, ffk_safe_call call, void *context,
                                     ffk_context_deleter deleter) {
  if (name == NULL) name = "<anonymous>";
  if (call == NULL) {
    if (deleter != NULL) deleter(context);
    ffk_error_set(FFK_ERR_VALUE, "ffk_function_new: the call pointer of `%s` is NULL", name);
    return NULL;
  }
  ffk_signature *sig = NULL;
  if (signature != NULL && (sig = ffk_signature__parse(name, signature)) == NULL) {
    if (deleter != NULL) deleter(context);
    return NULL;
  }
  if (sig != NULL) {
    bool plain = true;
    for (int32_t i = 0; i < sig->nparams && plain; ++i) {
      int32_t t = sig->params[i]->type_index;
      plain = t == FFK_SCHEMA_ANY || (t >= 0 && t < FFK_TYPE_OBJECT_BEGIN);
    }
    sig->plain_params = plain;
  }
  size_t len = strlen(name);
  ffk_function *f = (ffk_function *)ffk_object_alloc(FFK_TYPE_FUNCTION, sizeof(ffk_function) + len + 1, function_deleter);
  if (f == NULL) {
    ffk_signature__free(sig);
    if (deleter != NULL) deleter(context);
    return NULL;
  }
  f->call = call;
  f->context = context;
  f->entry = sig != NULL ? typed_entry : call;
  f->entry_context = sig != NULL ? (void *)f : context;
  f->context_deleter = deleter;
  f->sig = sig;
  f->flags = 0;
  f->fast_nparams = -1;
  if (sig != NULL && sig->plain_params && sig->nparams <= FAST_MAX) {
    f->fast_nparams = sig->nparams;
    for (int32_t i = 0; i < sig->nparams; ++i) f->fast_types[i] = sig->params[i]->type_index;
  }
  memcpy(f->name, name, len + 1);
  return f;
}

ffk_function *ffk_function_new(const char *name, ffk_safe_call call, void *context, ffk_context_deleter deleter) {
  return ffk_function_new_typed(name, NULL, call, context, deleter);
}

const char *ffk_function_name(const ffk_function *f) { return f->name; }

const char *ffk_function_signature(const ffk_function *f) { return f->sig != NULL ? f->sig->text : NULL; }

const ffk_signature *ffk_function__sig(const ffk_function *f) { return f->sig; }

/* Reports a callee that raised and still returned 0: its error is dropped. */
static FFK_NOINLINE void drop_stray_error(const ffk_function *f) {
  ffk_error *stray = ffk_error_fetch();
#if defined(FFK_TESTING) || !defined(NDEBUG)
  fprintf(stderr, "ffikit: bug: Function `%s` returned 0 with an error pending (%s: %s); the error is dropped\n",
          f->name, ffk_error_kind(stray), ffk_error_message(stray));
#else
  (void)f;
#endif
  ffk_object_release((ffk_object *)stray);
}

/* Adds "  in call to Function `name`" to the pending error (best effort: never masks it). */
static void add_hop(const ffk_function *f) {
  ffk_error *err = ffk_error_fetch();
  char frame[256];
  snprintf(frame, sizeof frame, "  in call to Function `%s`", f->name);
  if (ffk_error_append_frame(err, frame) != 0) ffk_error_clear(); /* out of memory: keep the original */
  ffk_error_restore(err);
}

/* The failing side of finish_call: kept out of line so the successful path has no frame to speak of. */
static FFK_NOINLINE int finish_failed_call(ffk_function *f, int rc, ffk_any *result) {
  ffk_any_release(result);
  *result = ffk_any_none();
  if (!ffk_error_occurred())
    return ffk_error_set(FFK_ERR_RUNTIME, "Function `%s` returned %d without raising an error", f->name, rc);
  add_hop(f);
  return -1;
}

/*
 * The convention after a callee that did not return 0 with the slot empty: a stray error
 * after 0 is dropped (0 stands), anything else is a failure. Out of line: the successful
 * call only tests `rc == 0 && slot empty` and returns.
 */
static FFK_NOINLINE int finish_unusual_call(ffk_function *f, int rc, ffk_any *result) {
  if (rc == 0) {
    /* Here after a 0 also when another thread's error made the count non-zero. */
    if (ffk_error__slot != NULL) drop_stray_error(f);
    return 0;
  }
  return finish_failed_call(f, rc, result);
}

/* Enforces the convention on what the callee returned: 0 without an error, -1 with one. */
static inline int finish_call(ffk_function *f, int rc, ffk_any *result) {
  if (FFK_LIKELY(rc == 0 && !FFK_ERROR__PENDING())) return 0;
  return finish_unusual_call(f, rc, result);
}

/*
 * Rewrites the pending conversion error of argument `i` (or of the result when i < 0)
 * to name the call: a TypeError "Mismatched type on argument #0 when calling: `sig`.
 * Expected `int` but got `str`"; other kinds keep their kind and gain the same prefix.
 * A MemoryError passes unchanged.
 */
static int conversion_failed(const ffk_function *f, int32_t i) {
  if (ffk_error_matches(FFK_ERR_MEMORY)) return -1;
  ffk_error *err = ffk_error_fetch();
  const char *msg = ffk_error_message(err);
  char where[32];
  if (i >= 0) snprintf(where, sizeof where, "argument #%d", (int)i);
  else snprintf(where, sizeof where, "the return value");
  if (strcmp(ffk_error_kind(err), FFK_ERR_TYPE) == 0 && strncmp(msg, "expected ", 9) == 0)
    ffk_error_set(FFK_ERR_TYPE, "Mismatched type on %s when calling: `%s`. E%s", where, f->sig->text, msg + 1);
  else
    ffk_error_set(ffk_error_kind(err), "Invalid %s when calling: `%s`. %s", where, f->sig->text, msg);
  ffk_object_release((ffk_object *)err);
  return -1;
}

/* The result of a typed call whose callee succeeded but returned a value the return
 * schema does not pass as is: converted, or a conversion error naming the call. */
static FFK_NOINLINE int convert_typed_result(ffk_function *f, ffk_any *result) {
  ffk_any tmp;
  int c = ffk_schema_convert(f->sig->ret, result, &tmp);
  if (c > 0) {
    ffk_any_release(result);
    *result = tmp;
  } else if (c < 0) {
    ffk_any_release(result);
    *result = ffk_any_none();
    return conversion_failed(f, -1);
  }
  return 0;
}

/*
 * True when `v` passes `s` unchanged without asking ffk_schema_convert: Any, or a plain
 * (non-object) value of exactly the schema's type, which ffk_schema_convert returns 0 for
 * (an int for `int`, a Device for `Device`...). Objects and containers, whose element types
 * or converter slots may need a look, always take the full conversion.
 */
static inline bool passes_as_is(const ffk_schema *s, const ffk_any *v) {
  return (s->type_index == v->type_index && v->type_index < FFK_TYPE_OBJECT_BEGIN) || s->type_index == FFK_SCHEMA_ANY;
}

/* The call of a typed Function: check the arity, convert the arguments, call, convert the result. */
static FFK_NOINLINE int call_typed(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result) {
  const ffk_signature *sig = f->sig;
  if (nargs != sig->nparams)
    return ffk_error_set(FFK_ERR_TYPE, "Mismatched number of arguments when calling: `%s`. Expected %d but got %d",
                         sig->text, (int)sig->nparams, (int)nargs);
  enum { LOCAL = 8 };
  ffk_any local[LOCAL];
  bool local_owned[LOCAL];
  ffk_any *conv = NULL; /* a copy of args, made when the first argument is converted */
  bool *owned = NULL;
  int rc = 0;
  for (int32_t i = 0; i < nargs; ++i) {
    if (FFK_LIKELY(passes_as_is(sig->params[i], &args[i]))) continue;
    ffk_any tmp;
    int c = ffk_schema_convert(sig->params[i], &args[i], &tmp);
    if (FFK_LIKELY(c == 0)) continue;
    if (c < 0) {
      rc = conversion_failed(f, i);
      break;
    }
    if (conv == NULL) {
      if (nargs <= LOCAL) {
        conv = local;
        owned = local_owned;
      } else if ((conv = ffk_mem_alloc((size_t)nargs * (sizeof(ffk_any) + sizeof(bool)))) != NULL) {
        owned = (bool *)(conv + nargs);
      } else {
        ffk_any_release(&tmp);
        rc = -1;
        break;
      }
      memcpy(conv, args, (size_t)nargs * sizeof(ffk_any));
      memset(owned, 0, (size_t)nargs * sizeof(bool));
    }
    conv[i] = tmp;
    owned[i] = true;
  }
  if (rc == 0) {
    rc = finish_call(f, f->call(f->context, conv != NULL ? conv : args, nargs, result), result);
    if (rc == 0 && sig->ret != NULL && !passes_as_is(sig->ret, result)) rc = convert_typed_result(f, result);
  }
  if (conv != NULL) {
    for (int32_t i = 0; i < nargs; ++i)
      if (owned[i]) ffk_any_release(&conv[i]);
    if (conv != local) ffk_mem_free(conv);
  }
  return rc;
}

/* Drops an error that was pending before a call began: it belongs to the caller, not the callee. */
FFK_NOINLINE void ffk_function__drop_stale_error(const ffk_function *f) {
  ffk_error *stale = ffk_error_fetch();
#if defined(FFK_TESTING) || !defined(NDEBUG)
  fprintf(stderr, "ffikit: bug: an error was pending when Function `%s` was called (%s: %s); the error is dropped\n",
          f != NULL ? f->name : "NULL", ffk_error_kind(stale), ffk_error_message(stale));
#else
  (void)f;
#endif
  ffk_object_release((ffk_object *)stale);
}

/* The failing checks of ffk_function_call's arguments, out of line. */
static FFK_NOINLINE int bad_call(const ffk_function *f, const ffk_any *args, int32_t nargs) {
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_call: the function is NULL");
  return ffk_error_set(FFK_ERR_VALUE, "ffk_function_call: %d arguments at %p for `%s`", (int)nargs,
                       (const void *)args, f->name);
}

/* True when every argument of a plain_params signature passes unchanged (nargs checked). */
static inline bool plain_args_pass(const ffk_signature *sig, const ffk_any *args, int32_t nargs) {
  for (int32_t i = 0; i < nargs; ++i) {
    int32_t t = sig->params[i]->type_index;
    if (t != args[i].type_index && t != FFK_SCHEMA_ANY) return false;
  }
  return true;
}

/*
 * Every call that is not an untyped one with valid arguments and no error pending in any
 * thread: the stale-error drop, the argument checks, typed Functions (the plain fast path
 * or call_typed). Its own frame, so that ffk_function_call's stays two registers.
 */
static FFK_NOINLINE int call_general(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result) {
  if (FFK_UNLIKELY(FFK_ERROR__PENDING())) ffk_function__drop_stale_error(f);
  if (FFK_UNLIKELY(f == NULL || nargs < 0 || (args == NULL && nargs > 0))) return bad_call(f, args, nargs);
  const ffk_signature *sig = f->sig;
  if (sig == NULL) return finish_call(f, f->call(f->context, args, nargs, result), result);
  if (FFK_UNLIKELY(!sig->plain_params || nargs != sig->nparams || !plain_args_pass(sig, args, nargs)))
    return call_typed(f, args, nargs, result);
  int rc = finish_call(f, f->call(f->context, args, nargs, result), result);
  if (FFK_UNLIKELY(rc != 0)) return rc;
  if (sig->ret == NULL || FFK_LIKELY(passes_as_is(sig->ret, result))) return 0;
  return convert_typed_result(f, result);
}

/*
 * A typed call with no error pending anywhere and a non-NULL `f` (ffk_function_call
 * checked both): the plain fast path when the signature and arguments allow it, else
 * call_general. Its own frame, entered by a tail jump.
 */
static FFK_NOINLINE int call_typed_entry(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result) {
  const ffk_signature *sig = f->sig;
  if (FFK_UNLIKELY(!sig->plain_params || nargs != sig->nparams || (args == NULL && nargs > 0) ||
                   !plain_args_pass(sig, args, nargs)))
    return call_general(f, args, nargs, result);
  int rc = finish_call(f, f->call(f->context, args, nargs, result), result);
  if (FFK_UNLIKELY(rc != 0)) return rc;
  if (sig->ret == NULL || FFK_LIKELY(passes_as_is(sig->ret, result))) return 0;
  return convert_typed_result(f, result);
}

/*
 * The head's entry of a typed Function (`self` is the Function), as ffk_function_call_inline
 * runs it: the checked form's typed path, error-state rules included, so a typed call
 * behaves the same in both forms. It returns 0 or -1 with the error complete (frame
 * appended), which ffk_function__call_failed knows.
 */
static int typed_entry(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  ffk_function *f = self;
  if (FFK_UNLIKELY(nargs != f->fast_nparams || (args == NULL && nargs > 0) || FFK_ERROR__PENDING()))
    return call_general(f, args, nargs, result);
  for (int32_t i = 0; i < nargs; ++i) {
    int32_t t = f->fast_types[i];
    if (FFK_UNLIKELY(t != args[i].type_index && t != FFK_SCHEMA_ANY)) return call_general(f, args, nargs, result);
  }
  int rc = f->call(f->context, args, nargs, result);
  if (FFK_UNLIKELY(rc != 0 || FFK_ERROR__PENDING()) && (rc = finish_unusual_call(f, rc, result)) != 0) return rc;
  const ffk_schema *ret = f->sig->ret;
  if (ret == NULL || FFK_LIKELY(passes_as_is(ret, result))) return 0;
  return convert_typed_result(f, result);
}

int ffk_function__call_failed(ffk_function *f, int rc, ffk_any *result) {
  if (f->sig != NULL) return -1; /* typed_entry finished it */
  return finish_failed_call(f, rc, result);
}

/* True when no thread has an error pending: the call path's only look at error state. */
static inline bool no_error_anywhere(void) { return __atomic_load_n(&ffk_error__npending.n, __ATOMIC_RELAXED) == 0; }

/* The checked form (function.h); the parentheses keep the header's macro out. */
int(ffk_function_call)(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result) {
  *result = ffk_any_none();
  /* The common case inline: an untyped Function, plain arguments, no error anywhere. */
  if (FFK_UNLIKELY(!no_error_anywhere() || f == NULL)) return call_general(f, args, nargs, result);
  if (f->sig != NULL) return call_typed_entry(f, args, nargs, result);
  if (FFK_UNLIKELY((uint32_t)nargs > (args != NULL ? INT32_MAX : 0))) return call_general(f, args, nargs, result);
  int rc = f->call(f->context, args, nargs, result);
  if (FFK_LIKELY(rc == 0 && no_error_anywhere())) return 0;
  return finish_unusual_call(f, rc, result);
}

/* ---- ffk_args_unpack ---------------------------------------------------------------- */

/* Stores through the next pointer of `ap` when it is not NULL (a NULL output checks only). */
#define STORE(type, value)                \
  do {                                    \
    type *out_ = va_arg(*ap, type *);     \
    if (out_ != NULL) *out_ = (value);    \
  } while (0)

static int unpack_one(const char *fn, int32_t i, char code, const ffk_any *arg, va_list *ap) {
  int rc;
  switch (code) {
    case 'i': {
      int64_t x;
      if ((rc = ffk_any_as_int(arg, &x)) == 0) STORE(int64_t, x);
      break;
    }
    case 'f': {
      double x;
      if ((rc = ffk_any_as_float(arg, &x)) == 0) STORE(double, x);
      break;
    }
    case 'b': {
      bool x;
      if ((rc = ffk_any_as_bool(arg, &x)) == 0) STORE(bool, x);
      break;
    }
    case 'D': {
      DLDevice x;
      if ((rc = ffk_any_as_device(arg, &x)) == 0) STORE(DLDevice, x);
      break;
    }
    case 'T': {
      DLDataType x;
      if ((rc = ffk_any_as_dtype(arg, &x)) == 0) STORE(DLDataType, x);
      break;
    }
    case 's': {
      /* Inline strings are NUL-terminated too: the unused payload bytes are zero. */
      const char *x;
      size_t n;
      if ((rc = ffk_any_as_str(arg, &x, &n)) == 0) STORE(const char *, x);
      break;
    }
    case 'o':
    case 'F': {
      ffk_object *x;
      if ((rc = ffk_any_as_object(arg, code == 'F' ? FFK_TYPE_FUNCTION : FFK_TYPE_OBJECT, &x)) == 0) {
        ffk_object_release(x); /* borrowed: the argument holds it */
        if (code == 'F') STORE(ffk_function *, (ffk_function *)x);
        else STORE(ffk_object *, x);
      }
      break;
    }
    case 'a': STORE(const ffk_any *, arg); return 0;
    default: return ffk_error_set(FFK_ERR_VALUE, "`%s`: unknown letter '%c' in the argument format", fn, code);
  }
  if (rc == 0) return 0;
  /* Rewrite the accessor's "expected int but got str" with the function and position. */
  ffk_error *err = ffk_error_fetch();
  ffk_error_set(ffk_error_kind(err), "`%s`: argument #%d %s", fn, (int)i, ffk_error_message(err));
  ffk_object_release((ffk_object *)err);
  return -1;
}

int ffk_args_unpack(const char *fn_name, const ffk_any *args, int32_t nargs, const char *format, ...) {
  if (fn_name == NULL) fn_name = "<anonymous>";
  if (format == NULL || nargs < 0 || (args == NULL && nargs > 0))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_args_unpack: bad format or arguments for `%s`", fn_name);
  int32_t required = 0, total = 0;
  bool optional = false;
  for (const char *p = format; *p; ++p) {
    if (*p == '|') {
      optional = true;
      continue;
    }
    ++total;
    if (!optional) ++required;
  }
  if (nargs < required || nargs > total) {
    if (required == total)
      return ffk_error_set(FFK_ERR_TYPE, "`%s` takes %d argument%s but got %d", fn_name, (int)total,
                           total == 1 ? "" : "s", (int)nargs);
    return ffk_error_set(FFK_ERR_TYPE, "`%s` takes %d to %d arguments but got %d", fn_name, (int)required, (int)total,
                         (int)nargs);
  }
  va_list ap;
  va_start(ap, format);
  int rc = 0;
  int32_t i = 0;
  for (const char *p = format; *p && i < nargs; ++p) {
    if (*p == '|') continue;
    if ((rc = unpack_one(fn_name, i, *p, &args[i], &ap)) != 0) break;
    ++i;
  }
  va_end(ap);
  return rc;
}

/* ---- Docs ------------------------------------------------------------------------------ */

int ffk_function_set_doc(ffk_function *f, const char *doc) {
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot set the doc of a Function: the Function is NULL");
  /* Readers borrow the text without a lock: only a Function nobody else can see may change it. */
  if (!ffk_object_is_unique(&f->header))
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot set the doc of Function `%s`: it is shared (registered or held elsewhere); "
                         "set the doc before sharing it",
                         f->name);
  char *copy = NULL;
  if (doc != NULL && doc[0] != '\0') {
    size_t n = strlen(doc);
    if ((copy = ffk_mem_alloc(n + 1)) == NULL) return -1;
    memcpy(copy, doc, n + 1);
  }
  ffk_mem_free(f->doc);
  f->doc = copy;
  return 0;
}

const char *ffk_function_doc(const ffk_function *f) { return f != NULL ? f->doc : NULL; }

int ffk_function_set_flags(ffk_function *f, uint32_t flags) {
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot set the flags of a Function: the Function is NULL");
  if ((flags & ~FFK_FUNCTION_FLAGS_ALL) != 0)
    return ffk_error_set(FFK_ERR_VALUE, "cannot set the flags of Function `%s`: unknown flag bits 0x%x", f->name,
                         (unsigned)(flags & ~FFK_FUNCTION_FLAGS_ALL));
  /* Bindings read the flags without a lock when they wrap the Function: as the doc, only a
     Function nobody else can see may change them. */
  if (f->flags == flags) return 0;
  if (!ffk_object_is_unique(&f->header))
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot set the flags of Function `%s`: it is shared (registered or held elsewhere); "
                         "set them before sharing it",
                         f->name);
  f->flags = flags;
  return 0;
}

uint32_t ffk_function_flags(const ffk_function *f) { return f != NULL ? f->flags : 0; }
