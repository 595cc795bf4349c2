/*
 * ffikit/function.h - Function objects, packed calls, and the global registry.
 *
 * Every callable that crosses a language boundary is a Function: a pointer to a
 * safe-call routine, a context pointer passed to it as `self`, and the context's
 * deleter. C closures, and the Python and Rust callables of the bindings, are all
 * Functions, so any of them can call any other.
 *
 * The calling convention (ffk_safe_call): arguments are borrowed views valid for the
 * call; the caller sets *result to None first and owns what the callee stores there;
 * the callee returns 0, or -1 with an error raised in the calling thread's slot.
 *
 * Errors travel through calls unchanged: the Error object a callee raised is the one the
 * caller fetches, with its kind and message, and each Function it crosses appends a
 * frame naming itself ("  in call to Function `testing.apply`") to the backtrace.
 *
 * The global registry maps names to Functions. Every registry function is safe to call
 * from any number of threads at once. Lookups take no lock and write no shared memory
 * except the found Function's reference count, so they scale with threads; writers
 * serialise per shard (64 shards by name hash).
 */
#ifndef FFIKIT_FUNCTION_H
#define FFIKIT_FUNCTION_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/* The packed calling convention shared by C, Python and Rust. */
typedef int (*ffk_safe_call)(void *self, const ffk_any *args, int32_t nargs, ffk_any *result);

/* Releases a Function's context; runs exactly once, when the Function is destroyed. */
typedef void (*ffk_context_deleter)(void *context);

typedef struct ffk_function ffk_function;

/*
 * A new Function calling `call(context, ...)`. `name` (borrowed, copied; may be NULL
 * for "<anonymous>") names it in errors and backtraces. `deleter` (may be NULL) is
 * called on `context` exactly once: when the Function is destroyed, or right away when
 * this function fails. Returns a new reference, or NULL with a ValueError (call NULL)
 * or a MemoryError.
 */
FFK_API ffk_function *ffk_function_new(const char *name, ffk_safe_call call, void *context,
                                       ffk_context_deleter deleter);

/*
 * A new typed Function: like ffk_function_new, with a signature such as
 * "(int) -> int" or "(x: int, Array<float>, Optional<str>) -> Map<str, int>" (types as in
 * ffikit/schema.h; parameter names are optional, the return type defaults to Any; NULL
 * makes the Function untyped). Calls then check the number of arguments and convert
 * each one to its declared type before `call` sees it (an int for a bool, a Device for
 * "cuda:1", an Array<int> for a List of ints), and check and convert the result. A
 * mismatch is a TypeError naming the call:
 *   Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. Expected `int` but got `str`
 *   Mismatched number of arguments when calling: `testing.add_one(0: int) -> int`. Expected 1 but got 2
 *   Mismatched type on the return value when calling: `f() -> int`. Expected `int` but got `str`
 * Arguments that already have their type are passed through untouched (no copy, no
 * reference counting). `deleter` runs exactly once, also when this fails. Returns a new
 * reference, or NULL with a ValueError (NULL call; a malformed signature, naming the text
 * and the offset) or a MemoryError.
 */
FFK_API ffk_function *ffk_function_new_typed(const char *name, const char *signature, ffk_safe_call call,
                                             void *context, ffk_context_deleter deleter);

/* The name given at creation ("<anonymous>" when none), borrowed from `f` while it lives. */
FFK_API const char *ffk_function_name(const ffk_function *f);

/*
 * The signature of a typed Function as messages print it ("testing.add_one(0: int) ->
 * int"), borrowed from `f` while it lives; NULL for an untyped Function.
 */
FFK_API const char *ffk_function_signature(const ffk_function *f);

/*
 * Calls `f` with `nargs` borrowed arguments. *result is set to None first and receives
 * an owned value. Returns 0, or -1 with *result None and the callee's error pending,
 * with a frame naming `f` appended to its backtrace. A callee that returns -1 (or any
 * non-zero value) without raising gets a RuntimeError saying so. ValueError for a NULL
 * function or a bad argument array (NULL with nargs > 0, or nargs < 0).
 *
 * Two forms, the same call. Written as a call, `ffk_function_call(...)` compiles to
 * ffk_function_call_inline below (unless FFK_CHECKED_CALLS is defined before the first
 * ffikit header): an indirect call through the Function's head, as TVM-FFI's
 * TVMFFIFunctionCall compiles, with everything but the argument checks out of line on
 * the failing side. The exported symbol, what `(ffk_function_call)(...)`, a function
 * pointer, dlsym, bindgen and ctypes reach, is the checked form, which also enforces the
 * convention's two error-state rules, at the cost of two reads of a process-wide count
 * per call:
 *   - a callee that raises but returns 0 has the stray error cleared (and, in builds
 *     with FFK_TESTING or without NDEBUG, reported on stderr as the bug it is), where
 *     the inline form trusts the callee and leaves it pending;
 *   - an error already pending when the call starts (a bug of the caller's: it should
 *     have been handled or cleared) is dropped before anything else (reported on stderr
 *     in the same builds), so the callee starts with an empty slot and an error after
 *     the call is always the call's own; the inline form leaves it to be replaced by the
 *     callee's error, if any.
 * Typed Functions check both rules in either form. Code that calls untrusted callees
 * and wants the rules enforced defines FFK_CHECKED_CALLS (the Python and Rust bindings
 * and ffikit's own convention tests use the checked form).
 */
FFK_API int ffk_function_call(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result);

/*
 * The head every Function starts with: what ffk_function_call_inline reads. Part of the
 * ABI (stable across releases like the ffk_any layout): `entry(entry_context, ...)` runs
 * a call (the callee itself for an untyped Function; for a typed one, ffikit's routine
 * that checks and converts the arguments, with the Function as its context). Read-only
 * to users: set once when the Function is made, never changed while it lives.
 */
typedef struct ffk_function_head {
  ffk_object header;
  ffk_safe_call entry;
  void *entry_context;
} ffk_function_head;

/*
 * The failing side of ffk_function_call_inline, out of line: `rc` (non-zero) is what the
 * entry returned. Enforces the convention on failure (a RuntimeError for a non-zero
 * return without an error), appends the frame naming `f`, releases *result and leaves
 * it None. Returns -1. Not for direct use.
 */
FFK_API int ffk_function__call_failed(ffk_function *f, int rc, ffk_any *result);

/* ffk_function_call compiled into the caller (see above); the same results and errors. */
static inline int ffk_function_call_inline(ffk_function *f, const ffk_any *args, int32_t nargs, ffk_any *result) {
  /* NULL with nargs > 0, or nargs < 0: the checked form reports it. */
  if (FFK_UNLIKELY(f == NULL || (uint32_t)nargs > (args != NULL ? (uint32_t)INT32_MAX : 0u)))
    return (ffk_function_call)(f, args, nargs, result);
  const ffk_function_head *h = (const ffk_function_head *)(const void *)f;
  *result = ffk_any_none();
  int rc = h->entry(h->entry_context, args, nargs, result);
  if (FFK_LIKELY(rc == 0)) return 0;
  return ffk_function__call_failed(f, rc, result);
}

#ifndef FFK_CHECKED_CALLS
/* A call written `ffk_function_call(...)` is the inline form (see ffk_function_call). */
#define ffk_function_call(f, args, nargs, result) ffk_function_call_inline((f), (args), (nargs), (result))
#endif

/* ---- The global registry. --------------------------------------------------------- */

/*
 * Registers `f` (borrowed; the registry keeps its own reference) under `name`. An
 * existing name is replaced only when `override` is true; otherwise a RuntimeError
 * "Global Function `name` is already registered" (tvm_ffi's kind and text; the one
 * message both bindings raise). 0, or -1 (that RuntimeError, a ValueError for a NULL or
 * empty name or a NULL function, MemoryError).
 */
FFK_API int ffk_function_register(const char *name, ffk_function *f, bool override);

/* Looks `name` up: 1 with a new reference in *out, 0 when absent (*out NULL), -1 (ValueError for a NULL name or out). */
FFK_API int ffk_function_get_global(const char *name, ffk_function **out);

/*
 * Removes `name`: 1 when it was registered, 0 when not, -1 (ValueError for a NULL or
 * empty name). Never fails otherwise. The registry's reference to the Function (and one
 * it replaced through `override`) is dropped at once when no lookup is running, else as
 * soon as the lookups that may still see it have finished, by the last of them.
 */
FFK_API int ffk_function_remove_global(const char *name);

/*
 * Calls `fn(name, f, ctx)` for every registered function, in name order, on a snapshot
 * of the registry (so `fn` may use the registry). `name` and `f` are
 * borrowed for the duration of that one call of `fn`. Stops early and
 * returns what `fn` returned when that is not 0. -1 with a MemoryError when the
 * snapshot cannot be made.
 */
FFK_API int ffk_function_for_each_global(int (*fn)(const char *name, ffk_function *f, void *ctx), void *ctx);

/*
 * The name under which this very Function `f` (borrowed) is registered, for encoders that
 * write a global Function as its name (Python's pickle): its own name (ffk_function_name)
 * when the registry maps that name to f, else the first name in name order that maps to
 * f. Returns 1 with *out a new owned str, 0 with *out None when no name maps to f (an
 * anonymous closure, a Function whose name was removed or overridden by another), or -1
 * with *out None and a ValueError (f or out NULL) or a MemoryError. Identity, not
 * equality: a Function made the same way but not registered has no global name. The
 * fallback walk visits every registered name (a pickle-time cost, not a call-time one).
 */
FFK_API int ffk_function_global_name(const ffk_function *f, ffk_any *out);

/* ---- Docs and metadata. ------------------------------------------------------------ */

/*
 * Sets the doc string of `f` (borrowed, copied; NULL or "" removes it). Only the holder of
 * the one reference to `f` may do this, before sharing it: the doc is read without a lock,
 * so a Function that is registered or held elsewhere keeps the doc it was shared with.
 * Returns 0, or -1 with a ValueError (f NULL; f shared, naming it) or a MemoryError.
 */
FFK_API int ffk_function_set_doc(ffk_function *f, const char *doc);

/* The doc string of `f`, or NULL when it has none (or f is NULL). Borrowed from `f` while it lives. */
FFK_API const char *ffk_function_doc(const ffk_function *f);

/*
 * Stores in *out (a new owned str) the metadata of `f` as a JSON object, the text that
 * Python's get_function_metadata/get_global_func_metadata parse and Rust reads:
 *
 *   {"type_schema": "<the type schema, itself JSON, as a string>",
 *    "name": "testing.add_one", "arity": 1, "arg_names": ["x"], "doc": "..."}
 *
 * "type_schema" has tvm_ffi's form, so tools written for it read ours:
 *   {"type":"ffi.Function","named_args":{"return":[R],"params":[P0, P1, ...]}}
 * with each type {"type": T} or {"type": T, "args": [...]}, T being "int", "float", "bool",
 * "None", "Any", "Device", "DataType", "void*", "ffi.String", "ffi.Bytes", "ffi.Object",
 * "Optional", "ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict", "Tuple", "ffi.<static type>"
 * ("ffi.Function", "ffi.Tensor", "ffi.Shape"...) or a registered type's key. An untyped
 * Function has the schema {"type":"ffi.Function"} and neither "arity" nor "arg_names";
 * an unnamed parameter's name is null; "doc" is there only when the Function has one.
 * Returns 0, or -1 with *out None and a ValueError (f or out NULL) or a MemoryError.
 */
FFK_API int ffk_function_metadata(const ffk_function *f, ffk_any *out);

/*
 * ffk_function_metadata of the global Function registered as `name`, in *out (a new owned
 * str). Returns 0, or -1 with *out None and a RuntimeError "global function `name` is not
 * registered" (as tvm_ffi's get_global_func_metadata fails), a ValueError (name or out
 * NULL) or a MemoryError.
 */
FFK_API int ffk_function_global_metadata(const char *name, ffk_any *out);

/* ---- Flags ------------------------------------------------------------------------ */

/*
 * FFK_FUNCTION_QUICK: the Function returns quickly and never waits on Python, nor on
 * anything a Python thread may hold: it does not call into Python, block on a lock or a
 * condition another thread releases, wait for another thread, or do blocking I/O. A
 * binding may then keep its interpreter lock around the call: the Python binding does
 * (no release and retake of the GIL per call, which costs more than a small call itself),
 * so the Function's wrappers start with `release_gil` off. Without the flag the Python
 * binding releases the GIL around every call, which a Function that waits for a thread
 * calling back into Python needs: with the GIL kept, such a Function deadlocks. The flag
 * is a promise by the Function's author; ffikit does not check it.
 */
#define FFK_FUNCTION_QUICK 0x1u
/* Every flag this version knows. */
#define FFK_FUNCTION_FLAGS_ALL FFK_FUNCTION_QUICK

/*
 * Replaces the flags of `f` (FFK_FUNCTION_* bits; 0 clears them). Set them before the
 * Function is shared, as its doc: bindings read them without a lock when they wrap it.
 * Returns 0 (also when the flags are already `flags`, shared or not), or -1 with a
 * ValueError: `f` NULL, a bit this version does not know, or `f` shared (registered or
 * held by another reference).
 */
FFK_API int ffk_function_set_flags(ffk_function *f, uint32_t flags);

/* The FFK_FUNCTION_* flags of `f` (0 for NULL or when none are set). */
FFK_API uint32_t ffk_function_flags(const ffk_function *f);

/*
 * One entry of a table of global Functions that a library registers when it loads: the
 * name, the signature (as ffk_function_new_typed takes it; NULL for untyped) and the call.
 */
typedef struct ffk_function_def {
  const char *name, *signature;
  ffk_safe_call call;
} ffk_function_def;

/*
 * Makes a Function of each of the `n` entries of `defs` (context NULL) and registers it
 * under its name, replacing what was there. The Functions are immortal (never freed,
 * not counted by ffk_debug_live_objects): a library's functions live as long as the
 * process. Stops at the first failure: returns 0, or -1 (MemoryError; ValueError for a
 * malformed signature) with the entries before it registered.
 */
FFK_API int ffk_function_register_table(const ffk_function_def *defs, size_t n);

/* ---- Unpacking arguments. --------------------------------------------------------- */

/*
 * Checks and converts the `nargs` arguments of a call against `format`, one letter per
 * argument, storing through the pointers that follow:
 *
 *   i int64_t*   f double*   b bool*   s const char** (NUL-terminated, borrowed)
 *   D DLDevice*  T DLDataType*   o ffk_object** (borrowed)   F ffk_function** (borrowed)
 *   a const ffk_any** (borrowed, anything)   | the arguments after it are optional
 *
 * A NULL pointer checks the argument without storing it. Conversions are those of the
 * ffk_any_as_* accessors (an int is accepted as a float, a str "cuda:1" as a Device).
 * `fn_name` names the function in errors: a TypeError
 * "`f`: argument #1 expected int but got str", or "`f` takes 2 arguments but got 3".
 * Returns 0 or -1. Borrowed outputs live as long as the arguments.
 */
FFK_API int ffk_args_unpack(const char *fn_name, const ffk_any *args, int32_t nargs, const char *format, ...);

/* ---- Keyword arguments and parameter names. --------------------------------------- */

/*
 * The number of parameters of a typed Function's signature, or -1 for an untyped
 * Function (which takes any number). Never fails.
 */
FFK_API int32_t ffk_function_num_params(const ffk_function *f);

/*
 * The name of parameter `i` of a typed Function as its signature writes it ("xs" in
 * "(xs: Array<float>, k: float) -> Array<float>"): 1 with the name in *out (borrowed
 * from `f` while it lives), 0 with *out NULL for a parameter written without a name
 * ("(int) -> int"), which can be passed by position only; -1 with *out NULL and a
 * TypeError for an untyped Function or an IndexError for `i` out of range (ValueError
 * for a NULL `f` or `out`).
 */
FFK_API int ffk_function_param_name(const ffk_function *f, int32_t i, const char **out);

/*
 * The declared type of parameter `i` of a typed Function as messages print it
 * ("Array<float>"), borrowed from `f` while it lives; NULL for an untyped Function or an
 * index out of range. Never fails (raises nothing).
 */
FFK_API const char *ffk_function_param_type(const ffk_function *f, int32_t i);

/*
 * The declared return type of a typed Function as messages print it ("Any" when the
 * signature gives none), borrowed from `f` while it lives; NULL for an untyped Function.
 * Never fails (raises nothing).
 */
FFK_API const char *ffk_function_return_type(const ffk_function *f);

/*
 * Calls `f` with positional and keyword arguments, as Python's `f(1, k=2.0)`: `args`
 * holds `npos` positional values followed by `nkw` keyword values (all borrowed), and
 * `kwnames[j]` (borrowed, NUL-terminated) names the value args[npos + j]. The keywords
 * bind to the parameter names of a typed Function's signature; the bound arguments then
 * go through ffk_function_call, so conversion and the result are exactly those of a
 * positional call (a type mismatch names the parameter's position). With nkw == 0 this
 * is ffk_function_call. *result is set to None first and receives an owned value.
 * Returns 0, or -1 with *result None and an error pending: the callee's, a conversion
 * error, a MemoryError, a ValueError for a NULL function or a bad argument array, or a
 * TypeError with CPython's texts, naming the function:
 *   demo.scale() got an unexpected keyword argument 'q'
 *   demo.scale() got multiple values for argument 'xs'
 *   demo.scale() missing 1 required positional argument: 'k'
 *   demo.scale() missing 3 required positional arguments: 'a', 'b', and 'c'
 *   demo.f() takes no keyword arguments      (an untyped Function, or a signature
 *                                            whose parameters have no names)
 * A parameter written without a name can be given by position only; a missing one is
 * named by its position ('0') as in the signature text. Calls with at most 8 parameters
 * allocate nothing for the binding.
 */
FFK_API int ffk_function_call_kw(ffk_function *f, const ffk_any *args, int32_t npos, const char *const *kwnames,
                                 int32_t nkw, ffk_any *result);

FFK_EXTERN_C_END

#endif /* FFIKIT_FUNCTION_H */
