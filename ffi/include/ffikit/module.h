/*
 * ffikit/module.h - loading shared libraries of Functions at run time.
 *
 * A module is a shared library that follows one symbol convention:
 *
 *   ffikit_abi_version        (required) a `const uint32_t` holding the FFK_ABI_VERSION
 *                             the module was compiled against;
 *   ffikit_fn_<name>          a function exported as `name`: an ffk_safe_call routine;
 *   ffikit_sig_<name>         (optional) a `const char *const` with its signature,
 *                             "(int) -> int", making the Function typed;
 *   ffikit_doc_<name>         (optional) a `const char *const` with its doc string, which
 *                             the Function carries (ffk_function_doc) and tools show;
 *   ffikit_flags_<name>       (optional) a `const uint32_t` of FFK_FUNCTION_* flags
 *                             (ffikit/function.h: FFK_FUNCTION_QUICK) the Function gets;
 *   ffikit_module_init        (optional) `int ffikit_module_init(ffk_module *m)`, run once
 *                             per process when the library is first loaded; it typically
 *                             registers global Functions. 0, or -1 with an error raised.
 *
 * The macros at the end of this header write these symbols, so a module reads:
 *
 *   #include <ffikit/ffikit.h>
 *   FFK_MODULE_ABI_VERSION;
 *   static int add_one(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {...}
 *   FFK_MODULE_EXPORT_TYPED(add_one, "(int) -> int", add_one)
 *   FFK_MODULE_EXPORT_DOC(add_one, "Returns x + 1.")
 *
 * and is built as a shared library, in one of two ways:
 *   - linked against libffikit.so (`-lffikit`, e.g. with `python -m ffikit.config --libs`):
 *     it binds by soname (libffikit.so, the one name every ffikit install uses) to the copy
 *     already loaded in the process, so the process keeps one runtime;
 *   - left with undefined ffk_* symbols and no dependency: it binds to the runtime that
 *     loads it. ffk_module_load makes the library holding that runtime global first, so
 *     this works even when the runtime was itself loaded RTLD_LOCAL (as the dependency of
 *     a Python extension); a program linked against libffikit.a exports the symbols with
 *     -rdynamic.
 *
 * Lifetime: a Module holds the library open, and every Function taken from it holds
 * the Module, so the code stays mapped while any of them is alive; the library is closed
 * when the last of them goes. A library whose init entry ran is never closed: what its
 * init registered may be called at any time until the process exits (CPython treats
 * extension modules the same way).
 *
 * A module's functions receive their Module as `self` (ffk_module *).
 *
 * Thread safety: loading, looking up and calling are safe from any thread. Loading
 * serialises on one process-wide lock while a module's init runs (an init may itself
 * load modules).
 */
#ifndef FFIKIT_MODULE_H
#define FFIKIT_MODULE_H

#include <ffikit/function.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_module ffk_module;

/*
 * Loads the shared library at `path` (as dlopen finds it: a path with a '/' is used as
 * is, a bare name is searched for). Checks that it is a module of a compatible ABI (the
 * same major version, a minor version no newer than this library's) and runs its init
 * entry the first time. Returns a new reference, or NULL with:
 *   ValueError    path NULL or empty;
 *   RuntimeError  "cannot load module `path`: <the loader's reason>" (missing file, missing
 *                 dependency, not a shared library);
 *   RuntimeError  "`path` is not an ffikit module: it has no symbol `ffikit_abi_version`";
 *   RuntimeError  "module `path` was built for ffikit ABI 1.0, but this library implements ABI 0.1";
 *   the error its init raised, with a frame naming the module appended; MemoryError.
 */
FFK_API ffk_module *ffk_module_load(const char *path);

/*
 * Keeps the module's library loaded for the life of the process, whatever becomes of `m`
 * and its Functions (tvm_ffi's load_module(keep_module_alive=True)): use it when the
 * library's code may still run after the last Module and Function are gone, through
 * objects it made or callbacks it handed out. A library whose init entry ran is kept
 * already, as is the system library. Returns 0, or -1 with a ValueError for NULL.
 * Idempotent; the Module itself stays an ordinary reference-counted object.
 */
FFK_API int ffk_module_keep_loaded(ffk_module *m);

/* The path the module was loaded from, as given. Borrowed from `m` while it lives. */
FFK_API const char *ffk_module_path(const ffk_module *m);

/*
 * The Function the module exports as `name` (symbol ffikit_fn_<name>), typed when it
 * exports ffikit_sig_<name>, documented (ffk_function_doc) when it exports
 * ffikit_doc_<name>, with the flags of ffikit_flags_<name> (ffk_function_flags) when it
 * exports that; its name is "<name>". The Function keeps the module
 * loaded. Returns a new reference, or NULL with an AttributeError "module `path` has no
 * function `name` (no symbol `ffikit_fn_name`)", a ValueError (m or name NULL, a name
 * that is not an identifier, a malformed signature, flag bits this version does not
 * know) or a MemoryError. Each call makes a
 * new Function: look a function up once and keep it.
 */
FFK_API ffk_function *ffk_module_get_function(ffk_module *m, const char *name);

/* ---- Inspecting functions; the system library --------------------------------------- */

/*
 * Whether the module exports a function `name`: 1 yes, 0 no (also for a name that is not
 * an identifier, which no symbol can have), -1 with a ValueError (m or name NULL).
 */
FFK_API int ffk_module_implements_function(const ffk_module *m, const char *name);

/*
 * The doc string the module exports for `name` (symbol ffikit_doc_<name>): 1 with *out
 * borrowed from the module's code, valid while `m` lives; 0 when the function or its doc
 * is missing (*out NULL; also for a name that is not an identifier); -1 with a ValueError
 * (m, name or out NULL).
 */
FFK_API int ffk_module_get_function_doc(const ffk_module *m, const char *name, const char **out);

/*
 * The metadata of the function `name` (ffk_function_metadata's JSON text): 1 with a new
 * owned str in *out; 0 when the module has no such function (*out None; also for a name
 * that is not an identifier); -1 with *out None and a ValueError (NULL arguments, a
 * malformed exported signature) or a MemoryError.
 */
FFK_API int ffk_module_get_function_metadata(ffk_module *m, const char *name, ffk_any *out);

/* The path of the system library's Modules (ffk_module_path). */
#define FFK_MODULE_SYSTEM_LIB_PATH "<system_lib>"

/*
 * A Module over the functions linked into the running process: its get_function finds
 * `name` as the symbol ffikit_fn_<prefix><name>, else ffikit_fn_<name> (tvm_ffi's
 * system_lib looks up the prefixed name first the same way), with its ffikit_sig_ and
 * ffikit_doc_ symbols beside it. It sees the symbols of the process's global scope: the
 * program (linked with -rdynamic, or -Wl,--export-dynamic, so its symbols are exported),
 * the libraries it was linked with, and libraries loaded with RTLD_GLOBAL; not those
 * loaded RTLD_LOCAL (ffk_module_load's modules: use their Module). No ABI symbol is
 * needed and no init entry runs. `prefix` (borrowed, copied; NULL is "") is made of
 * letters, digits and '_'. Returns a new reference whose path is
 * FFK_MODULE_SYSTEM_LIB_PATH, or NULL with a ValueError (a bad prefix, naming it), a
 * RuntimeError (dlopen of the process failed) or a MemoryError.
 */
FFK_API ffk_module *ffk_module_system_lib(const char *prefix);

/* The symbol prefix of a system library ("" for modules loaded from a file). Borrowed from `m`. */
FFK_API const char *ffk_module_symbol_prefix(const ffk_module *m);

/* ---- Writing a module ------------------------------------------------------------ */

#if defined(__GNUC__) || defined(__clang__)
#define FFK_MODULE_VISIBLE __attribute__((visibility("default"), used))
#else
#define FFK_MODULE_VISIBLE
#endif
#ifdef __cplusplus
#define FFK_MODULE_SYMBOL extern "C" FFK_MODULE_VISIBLE
#else
#define FFK_MODULE_SYMBOL FFK_MODULE_VISIBLE
#endif

/* Records the ABI this module is compiled against. Write it once, at file scope. */
#define FFK_MODULE_ABI_VERSION FFK_MODULE_SYMBOL const uint32_t ffikit_abi_version = FFK_ABI_VERSION

/* Exports the ffk_safe_call routine `fn` as the function `name` (an identifier). */
#define FFK_MODULE_EXPORT(name, fn)                                                                       \
  FFK_MODULE_SYMBOL int ffikit_fn_##name(void *self, const ffk_any *args, int32_t nargs, ffk_any *result); \
  FFK_MODULE_SYMBOL int ffikit_fn_##name(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) { \
    return fn(self, args, nargs, result);                                                                 \
  }

/* Exports `fn` as `name` with a signature such as "(int) -> int" (see ffk_function_new_typed). */
#define FFK_MODULE_EXPORT_TYPED(name, signature, fn) \
  FFK_MODULE_EXPORT(name, fn)                        \
  FFK_MODULE_SYMBOL const char *const ffikit_sig_##name = signature;

/* Exports the doc string `doc` (a string literal) of the function `name`. */
#define FFK_MODULE_EXPORT_DOC(name, doc) FFK_MODULE_SYMBOL const char *const ffikit_doc_##name = doc;

/* Exports the FFK_FUNCTION_* flags of the function `name`, e.g.
   FFK_MODULE_EXPORT_FLAGS(add, FFK_FUNCTION_QUICK) for a call that never waits on Python. */
#define FFK_MODULE_EXPORT_FLAGS(name, flags) FFK_MODULE_SYMBOL const uint32_t ffikit_flags_##name = (flags);

/* Exports `fn` as `name` with a signature and a doc string. */
#define FFK_MODULE_EXPORT_TYPED_DOC(name, signature, doc, fn) \
  FFK_MODULE_EXPORT_TYPED(name, signature, fn)                \
  FFK_MODULE_EXPORT_DOC(name, doc)

/* Declares the init entry: `FFK_MODULE_INIT(m) { ...register globals...; return 0; }`. */
#define FFK_MODULE_INIT(m)                              \
  FFK_MODULE_SYMBOL int ffikit_module_init(ffk_module *m); \
  FFK_MODULE_SYMBOL int ffikit_module_init(ffk_module *m)

FFK_EXTERN_C_END

#endif /* FFIKIT_MODULE_H */
