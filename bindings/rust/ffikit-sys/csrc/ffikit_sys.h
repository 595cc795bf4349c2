/*
 * ffikit_sys.h - what bindgen reads: ffikit's public headers with every `static inline`
 * helper turned into an ordinary external declaration, so bindgen 0.60 (which skips
 * internal linkage) binds them; ffikit_sys.c compiles the same text once to define them.
 *
 * The system headers that ffikit's headers include come first: their include guards then
 * keep them out of the #defines below. A new system header in ffikit's headers must be
 * added here. This works because `static` appears in the public headers only as
 * `static inline`.
 */
#include <dlpack/dlpack.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define static
#define inline
#include <ffikit/ffikit.h>
/* Not in ffikit.h's list: the JSON graph format (access_path.h comes with structural.h). */
#include <ffikit/access_path.h>
#include <ffikit/serialization.h>
#undef static
#undef inline

/* Constants bindgen 0.60 cannot take from macros (UINT64_C is a function-like macro). */
static const uint64_t FFKRS_REFCOUNT_STRONG_ONE = FFK_REFCOUNT_STRONG_ONE;
static const uint64_t FFKRS_REFCOUNT_WEAK_ONE = FFK_REFCOUNT_WEAK_ONE;
static const uint64_t FFKRS_REFCOUNT_INIT = FFK_REFCOUNT_INIT;
static const uint64_t FFKRS_DLPACK_FLAG_BITMASK_READ_ONLY = DLPACK_FLAG_BITMASK_READ_ONLY;
static const uint64_t FFKRS_DLPACK_FLAG_BITMASK_IS_COPIED = DLPACK_FLAG_BITMASK_IS_COPIED;
