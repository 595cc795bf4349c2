/*
 * ffikit/repr.h - the text form of every value.
 *
 * Formats: None True 1 1.5 "text" b"raw" float32 cuda:0 Shape(2, 3), containers as
 * docs/design.md shows ((1, 2) Array, [1, 2] List, {"a": 1} Map/Dict), and
 * <mylib.Point at 0x55d0c0> for an object type with no repr slot. Floats print as the
 * shortest text that reads back to the same double, like Python.
 *
 * Reflected objects (ffikit/reflect.h) whose type has no repr slot (nor inherits one)
 * print from their fields, as tvm_ffi prints its reflected objects:
 * `mylib.Point(x=1, y=2.5)`: the type key, then `name=value` for every field in field
 * order (inherited ones first), leaving out fields with FFK_FIELD_REPR_OFF; values
 * print as anywhere else, so a field that leads back to an object being printed shows
 * "..." (`mylib.Node(next=mylib.Node(next=...))`) and an Optional field that is unset
 * shows None. A type with no field to show prints `mylib.Empty()`. Fields are read as
 * ffk_field_get reads them, so a concurrent write shows the old or the new value.
 *
 * Types print themselves through the repr slot of the type registry
 * (ffk_type_set_repr); a slot writes into an ffk_repr_ctx and recurses into
 * elements with ffk_repr_any, which prints an object already being printed as "..."
 * (so cycles end) and stops nesting deeper than FFK_REPR_MAX_DEPTH the same way.
 * Once the text passes FFK_REPR_MAX_SIZE bytes, every object still to print prints as
 * "..." too: structure shared along many paths (x = [y, y], y = [z, z], ...) would
 * otherwise print once per path, 2^depth times. The text then ends a little past the
 * limit (the closing brackets and separators of what is already open).
 */
#ifndef FFIKIT_REPR_H
#define FFIKIT_REPR_H

#include <ffikit/any.h>
#include <ffikit/string.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_repr_ctx ffk_repr_ctx;

#define FFK_REPR_MAX_DEPTH 256
#define FFK_REPR_MAX_SIZE (1u << 20)

/* The repr of `v` as a new String object, or NULL with a MemoryError (or what a slot raised). */
FFK_API ffk_string *ffk_any_repr(const ffk_any *v);

/* Appends `size` bytes. Returns 0, or -1 with a MemoryError. */
FFK_API int ffk_repr_append(ffk_repr_ctx *ctx, const char *data, size_t size);

/* Appends printf-style text. Returns 0, or -1 with a MemoryError. */
FFK_API int ffk_repr_appendf(ffk_repr_ctx *ctx, const char *fmt, ...) FFK_PRINTF(2, 3);

/* Appends the repr of a nested value (cycle- and depth-safe). Returns 0 or -1. */
FFK_API int ffk_repr_any(ffk_repr_ctx *ctx, const ffk_any *v);

/*
 * Appends `data` quoted: "..." for str, b"..." for bytes, escaping quotes, backslashes
 * and control characters (and, for bytes, every non-ASCII byte as \xNN). 0 or -1.
 */
FFK_API int ffk_repr_quoted(ffk_repr_ctx *ctx, const char *data, size_t size, bool is_bytes);

FFK_EXTERN_C_END

#endif /* FFIKIT_REPR_H */
