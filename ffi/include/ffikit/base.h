/*
 * ffikit/base.h - macros every public header shares: export, extern "C", ABI version.
 *
 * ffikit's C API is C11 with fixed-width integers. Every exported function is marked
 * FFK_API; everything else in the library is hidden (-fvisibility=hidden).
 */
#ifndef FFIKIT_BASE_H
#define FFIKIT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define FFK_EXTERN_C_BEGIN extern "C" {
#define FFK_EXTERN_C_END }
#define FFK_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define FFK_EXTERN_C_BEGIN
#define FFK_EXTERN_C_END
#define FFK_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#if defined(_WIN32)
#define FFK_API __declspec(dllexport)
#else
#define FFK_API __attribute__((visibility("default")))
#endif

#if defined(__GNUC__)
#define FFK_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define FFK_NOINLINE __attribute__((noinline))
#define FFK_LIKELY(x) __builtin_expect(!!(x), 1)
#define FFK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FFK_PRINTF(fmt_index, first_arg)
#define FFK_NOINLINE
#define FFK_LIKELY(x) (x)
#define FFK_UNLIKELY(x) (x)
#endif

/*
 * The ABI version: the major changes when a layout (ffk_any, the object header) or the
 * meaning of an exported function changes incompatibly; the minor when something is
 * added. Modules record the version they were built against (see ffk_abi_version()).
 */
#define FFK_ABI_VERSION_MAJOR 0
#define FFK_ABI_VERSION_MINOR 1
#define FFK_ABI_VERSION ((FFK_ABI_VERSION_MAJOR << 16) | FFK_ABI_VERSION_MINOR)

/* The release of these headers (the installed pkg-config file carries the same text). */
#define FFK_VERSION "0.1.0"

FFK_EXTERN_C_BEGIN

/* The ABI version the loaded library implements (FFK_ABI_VERSION at its build). Cannot fail. */
FFK_API uint32_t ffk_abi_version(void);

/* The FFK_VERSION the loaded library was built with. Borrowed, static. Cannot fail. */
FFK_API const char *ffk_version(void);

FFK_EXTERN_C_END

#endif /* FFIKIT_BASE_H */
