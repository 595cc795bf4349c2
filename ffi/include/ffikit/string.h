/*
 * ffikit/string.h - strings (UTF-8) and bytes, inline when short, objects otherwise.
 *
 * A str or bytes value of at most FFK_SMALL_STR_MAX (7) bytes lives inside the
 * ffk_any (SmallStr / SmallBytes, NUL-padded, aux = length); a longer one is an
 * ffk_string object whose bytes follow the header in the same allocation, always
 * NUL-terminated. Both forms hash and compare by content; str never equals bytes.
 * Strings are immutable once made, so any thread may read them.
 */
#ifndef FFIKIT_STRING_H
#define FFIKIT_STRING_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/* String (type 65) and Bytes (type 66) objects share this layout (TVM-FFI's). */
typedef struct ffk_string {
  ffk_object header;
  const char *data; /* points just past this struct; data[size] == '\0' */
  size_t size;
} ffk_string;

typedef ffk_string ffk_bytes;

FFK_STATIC_ASSERT(sizeof(ffk_string) == 40, "ffk_string layout");

/*
 * A new String object holding a copy of `size` bytes at `data` (data may be NULL when
 * size is 0). Always an object, even when short: use ffk_any_str for values. Returns
 * a new reference, or NULL with a ValueError (invalid UTF-8, naming the byte offset)
 * or a MemoryError.
 */
FFK_API ffk_string *ffk_string_new(const char *data, size_t size);

/* Like ffk_string_new for a NUL-terminated C string (ValueError if s is NULL). */
FFK_API ffk_string *ffk_string_from_cstr(const char *s);

/*
 * A new Bytes object holding a copy of the bytes (any content; data may be NULL when size
 * is 0). New reference, or NULL with a ValueError (data NULL with size > 0) or a MemoryError.
 */
FFK_API ffk_bytes *ffk_bytes_new(const void *data, size_t size);

/*
 * Sets *out to a str value: SmallStr when size <= 7, else a new String object
 * (*out owns it). Returns 0, or -1 with *out None and a ValueError (invalid UTF-8,
 * data NULL with size > 0) or a MemoryError.
 */
FFK_API int ffk_any_str(const char *data, size_t size, ffk_any *out);

/*
 * ffk_any_str for `n` strs at once: out[i] is the str value of the sizes[i] bytes at
 * data[i] (SmallStr when at most 7 bytes), and the String objects of the longer ones share
 * one allocation, which goes with the last of them: one malloc and one free for n keys
 * (the bulk build of a Map from a binding's dict). Each String is an ordinary String to
 * every reader; the memory of all stays allocated while any of them is alive. Returns 0
 * with every out[i] owned, or -1 with every out[i] None and a ValueError (n negative,
 * arrays NULL with n > 0, data[i] NULL with sizes[i] > 0, invalid UTF-8: each naming i)
 * or a MemoryError.
 */
FFK_API int ffk_any_str_many(const char *const *data, const size_t *sizes, int64_t n, ffk_any *out);

/* ffk_any_str for a NUL-terminated C string (ValueError if s is NULL). */
FFK_API int ffk_any_cstr(const char *s, ffk_any *out);

/*
 * Sets *out to a bytes value: SmallBytes or a new Bytes object (data may be NULL when size
 * is 0). Returns 0, or -1 with *out None and a ValueError (data NULL with size > 0) or a
 * MemoryError.
 */
FFK_API int ffk_any_bytes(const void *data, size_t size, ffk_any *out);

/* The bytes of a String/Bytes object, NUL-terminated. Borrowed from `s`. */
static inline const char *ffk_string_data(const ffk_string *s) { return s->data; }

/* The length in bytes of a String/Bytes object. */
static inline size_t ffk_string_size(const ffk_string *s) { return s->size; }

/* The XXH3 64-bit hash of bytes; what ffk_any_hash uses for str and bytes content. Cannot fail. */
FFK_API uint64_t ffk_hash_bytes(const void *data, size_t size);

/*
 * The hash ffk_any_hash gives a str value (SmallStr, String or raw C string) whose UTF-8
 * is `size` bytes at `data` (any bytes, NULs included; data may be NULL when size is 0):
 * what a Map or Dict lookup by bytes (ffk_map_get_str, ffk_dict_get_str) probes with,
 * without making a value. Cannot fail.
 */
FFK_API uint64_t ffk_hash_str(const char *data, size_t size);

/*
 * Checks that `size` bytes are valid UTF-8 (no overlongs, no surrogates, nothing past
 * U+10FFFF). Returns the length of the valid prefix: `size` when all is valid.
 */
FFK_API size_t ffk_utf8_valid_prefix(const char *data, size_t size);

FFK_EXTERN_C_END

#endif /* FFIKIT_STRING_H */
