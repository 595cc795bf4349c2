/*
 * ffikit/any.h - ffk_any, the 16-byte tagged value that crosses every boundary.
 *
 * Layout (bit-compatible with TVM-FFI's TVMFFIAny):
 *
 *     bytes 0..3   type_index  an ffk_type_index or a registered object type
 *     bytes 4..7   aux         length (0..7) of an inline SmallStr/SmallBytes, else 0
 *     bytes 8..15  payload     by type: v_int (Int, Bool as 0/1), v_float (Float),
 *                              v_ptr (OpaquePtr, DLTensor*, raw C string, byte array),
 *                              v_dtype (DataType), v_device (Device),
 *                              v_bytes (SmallStr/SmallBytes, NUL-padded), v_obj (objects)
 *
 * Unused payload bytes are zero, so two equal PODs compare equal bytewise.
 *
 * Ownership: an ffk_any holding an object owns one strong reference unless the text
 * says it is borrowed. Functions taking `const ffk_any *` borrow it. ffk_any_release
 * drops what a value owns and resets it to None. Plain struct copies do not retain:
 * call ffk_any_retain on the copy when both must live.
 *
 * Views (RAW_STR, BYTE_ARRAY_PTR, DLTENSOR_PTR) borrow memory from the caller; they
 * are legal as function arguments only and are never stored: ffk_any_to_owned turns
 * them into owned values.
 */
#ifndef FFIKIT_ANY_H
#define FFIKIT_ANY_H

#include <dlpack/dlpack.h>
#include <string.h>

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

typedef struct ffk_any {
  int32_t type_index;
  uint32_t aux;
  union {
    int64_t v_int;
    double v_float;
    void *v_ptr;
    ffk_object *v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
  };
} ffk_any;

FFK_STATIC_ASSERT(sizeof(ffk_any) == 16, "ffk_any must stay 16 bytes (TVM-FFI ABI)");
FFK_STATIC_ASSERT(offsetof(ffk_any, aux) == 4, "aux at offset 4");
FFK_STATIC_ASSERT(offsetof(ffk_any, v_int) == 8, "payload at offset 8");

/* A borrowed (pointer, length) view of bytes, the target of a BYTE_ARRAY_PTR value. */
typedef struct ffk_byte_array {
  const char *data;
  size_t size;
} ffk_byte_array;

/* The longest string or bytes kept inline in an ffk_any. */
#define FFK_SMALL_STR_MAX 7

/* ---- Constructors of plain values: cannot fail, own nothing. ------------------ */

static inline ffk_any ffk_any_none(void) {
  /* Member by member, not memset: every byte is written (v_int spans the union) and no
     address is taken, so callers stay free of stack-protector canaries. */
  ffk_any v;
  v.type_index = FFK_TYPE_NONE;
  v.aux = 0;
  v.v_int = 0;
  return v;
}
static inline ffk_any ffk_any_int(int64_t x) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_INT;
  v.v_int = x;
  return v;
}
static inline ffk_any ffk_any_bool(bool x) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_BOOL;
  v.v_int = x ? 1 : 0;
  return v;
}
static inline ffk_any ffk_any_float(double x) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_FLOAT;
  v.v_float = x;
  return v;
}
/* An opaque pointer: compared by address, never dereferenced by ffikit. */
static inline ffk_any ffk_any_ptr(void *p) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_OPAQUE_PTR;
  v.v_ptr = p;
  return v;
}
static inline ffk_any ffk_any_dtype(DLDataType t) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_DATATYPE;
  v.v_dtype = t;
  return v;
}
static inline ffk_any ffk_any_device(DLDevice d) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_DEVICE;
  v.v_device = d;
  return v;
}
/* A borrowed view of a NUL-terminated UTF-8 string; valid while `s` is. */
static inline ffk_any ffk_any_raw_str(const char *s) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_RAW_STR;
  v.v_ptr = (void *)s;
  return v;
}
/* A borrowed view of bytes; valid while `b` and its data are. */
static inline ffk_any ffk_any_byte_array(const ffk_byte_array *b) {
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_BYTE_ARRAY_PTR;
  v.v_ptr = (void *)b;
  return v;
}

/* True when the value holds an object (and so may own a reference). */
static inline bool ffk_any_is_object(const ffk_any *v) {
  return v->type_index >= FFK_TYPE_OBJECT_BEGIN;
}

/* ---- Objects. ------------------------------------------------------------------ */

/* A value holding `obj` with a new reference (borrows obj, retains it); NULL gives None. */
FFK_API ffk_any ffk_any_object(ffk_object *obj);

/* A value holding `obj`, taking over the caller's reference (steals obj); NULL gives None. */
FFK_API ffk_any ffk_any_object_steal(ffk_object *obj);

/* Adds a reference to what `v` holds (a no-op for plain values and views). */
FFK_API void ffk_any_retain(const ffk_any *v);

/* Drops what `v` owns and sets it to None (steals). NULL is a no-op. */
FFK_API void ffk_any_release(ffk_any *v);

/*
 * Makes `*out` an owned copy of `v`: objects are retained, a RAW_STR or
 * BYTE_ARRAY_PTR view becomes a str/bytes value (inline or an object), other plain
 * values are copied. This is what containers do before storing a value. Returns 0, or
 * -1 with *out set to None and a MemoryError, a ValueError (invalid UTF-8 in a raw
 * string) or a TypeError (a DLTensor* view, which only a Tensor constructor can own).
 */
FFK_API int ffk_any_to_owned(const ffk_any *v, ffk_any *out);

/* ---- Accessors: convert where users expect it, else TypeError naming both types. --- */

/* Int, or Bool as 0/1. TypeError "expected int but got str" otherwise (*out 0). */
FFK_API int ffk_any_as_int(const ffk_any *v, int64_t *out);

/* Float, or Int/Bool converted. TypeError otherwise (*out 0.0). */
FFK_API int ffk_any_as_float(const ffk_any *v, double *out);

/* Bool, or Int (non-zero is true). TypeError otherwise (*out false). */
FFK_API int ffk_any_as_bool(const ffk_any *v, bool *out);

/*
 * The three accessors above are also inline: in C and C++ a call `ffk_any_as_int(v, &x)`
 * is a macro for the inline form below, which does every successful case in place and
 * calls the exported function only to raise the TypeError, so errors are raised in one
 * place (and `out` never escapes, so it can stay in a register). Same contract, same
 * results. The exported symbols stay, for bindings (bindgen, dlsym), for a function
 * pointer (`&ffk_any_as_int`, or a call spelled `(ffk_any_as_int)(v, &x)`), and for
 * code compiled with FFK_NO_INLINE_ACCESSORS defined.
 */
static inline int ffk_any__as_int_inline(const ffk_any *v, int64_t *out) {
  if (FFK_LIKELY(v->type_index == FFK_TYPE_INT || v->type_index == FFK_TYPE_BOOL)) {
    *out = v->v_int;
    return 0;
  }
  int64_t unused; /* the exported function raises the error; `out` does not escape */
  (void)(ffk_any_as_int)(v, &unused);
  *out = 0;
  return -1;
}

static inline int ffk_any__as_float_inline(const ffk_any *v, double *out) {
  if (FFK_LIKELY(v->type_index == FFK_TYPE_FLOAT)) {
    *out = v->v_float;
    return 0;
  }
  if (v->type_index == FFK_TYPE_INT || v->type_index == FFK_TYPE_BOOL) {
    *out = (double)v->v_int;
    return 0;
  }
  double unused; /* the exported function raises the error; `out` does not escape */
  (void)(ffk_any_as_float)(v, &unused);
  *out = 0.0;
  return -1;
}

static inline int ffk_any__as_bool_inline(const ffk_any *v, bool *out) {
  if (FFK_LIKELY(v->type_index == FFK_TYPE_BOOL || v->type_index == FFK_TYPE_INT)) {
    *out = v->v_int != 0;
    return 0;
  }
  bool unused; /* the exported function raises the error; `out` does not escape */
  (void)(ffk_any_as_bool)(v, &unused);
  *out = false;
  return -1;
}

#ifndef FFK_NO_INLINE_ACCESSORS
#define ffk_any_as_int(v, out) ffk_any__as_int_inline((v), (out))
#define ffk_any_as_float(v, out) ffk_any__as_float_inline((v), (out))
#define ffk_any_as_bool(v, out) ffk_any__as_bool_inline((v), (out))
#endif

/*
 * Helpers of ffikit's inline fast paths (here and in the container headers); not API.
 *
 * ffk_any__is_plain: a value that owns nothing and may be stored as is: not an object and
 * not one of the borrowed views (raw C string, byte array, DLTensor*).
 *
 * ffk_any__copy: copies a value's 16 bytes as two 8-byte words, no reference counting.
 * A struct assignment becomes one 16-byte load, which the CPU cannot forward from the two
 * 8-byte stores a caller has just made (ffk_any_int(i) into a local): each copy then
 * waits for those stores to retire (~5 ns). Two 8-byte loads forward at once; the empty
 * asm keeps the compiler from fusing them back into one.
 */
/* ffk_any__mix64: the finaliser ffk_any_hash applies to every plain value (murmur3's). */
static inline uint64_t ffk_any__mix64(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

/* ffk_any__hash_int: what ffk_any_hash gives an Int `x` (for the containers' int-key paths). */
static inline uint64_t ffk_any__hash_int(int64_t x) {
  return ffk_any__mix64(UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)x); /* the seed of kind Int (1), as in any.c */
}

static inline bool ffk_any__is_plain(const ffk_any *v) {
  int32_t t = v->type_index;
  return t < FFK_TYPE_OBJECT_BEGIN && t != FFK_TYPE_RAW_STR && t != FFK_TYPE_BYTE_ARRAY_PTR &&
         t != FFK_TYPE_DLTENSOR_PTR;
}

static inline void ffk_any__copy(ffk_any *dst, const ffk_any *src) {
  uint64_t lo, hi;
  memcpy(&lo, src, 8);
  memcpy(&hi, (const char *)src + 8, 8);
#if defined(__GNUC__)
  __asm__("" : "+r"(lo), "+r"(hi));
#endif
  memcpy(dst, &lo, 8);
  memcpy((char *)dst + 8, &hi, 8);
}

/* OpaquePtr, None (NULL), or a DLTensor* view. TypeError otherwise. */
FFK_API int ffk_any_as_ptr(const ffk_any *v, void **out);

/* DataType, or a string parsed as one (ValueError if malformed). TypeError otherwise. */
FFK_API int ffk_any_as_dtype(const ffk_any *v, DLDataType *out);

/* Device, or a string parsed as one ("cuda:1"; ValueError if malformed). TypeError otherwise. */
FFK_API int ffk_any_as_device(const ffk_any *v, DLDevice *out);

/*
 * The object in `v` if it is an instance of `type_index` (FFK_TYPE_OBJECT accepts any
 * object): *out gets a new reference. TypeError "expected Array but got int" otherwise.
 */
FFK_API int ffk_any_as_object(const ffk_any *v, int32_t type_index, ffk_object **out);

/*
 * A borrowed view of a str value (SmallStr, String or a raw C string): *data is
 * NUL-terminated UTF-8 and stays valid while `v` holds it unchanged (for a SmallStr,
 * it points into `v` itself). TypeError otherwise.
 */
FFK_API int ffk_any_as_str(const ffk_any *v, const char **data, size_t *size);

/* Like ffk_any_as_str for bytes values (SmallBytes, Bytes or a byte-array view). */
FFK_API int ffk_any_as_bytes(const ffk_any *v, const char **data, size_t *size);

/*
 * The user-facing type name of a value: "None", "int", "bool", "float", "ptr",
 * "dtype", "Device", "DLTensor*", "str", "bytes", and for objects the type's name.
 * Borrowed, static. Cannot fail.
 */
FFK_API const char *ffk_any_type_name(const ffk_any *v);

/* ---- Key semantics (what Map and Dict use). ------------------------------------- */

/*
 * Key equality: same kind and same value. Int 1, Bool true and Float 1.0 are three
 * different keys; str values (SmallStr, String, raw C string) compare by content with
 * each other, bytes likewise, and str never equals bytes; floats compare by value with
 * every NaN equal to every NaN and -0.0 equal to 0.0; other objects by identity.
 * Cannot fail.
 */
FFK_API bool ffk_any_equal(const ffk_any *a, const ffk_any *b);

/* A hash consistent with ffk_any_equal (strings hashed with XXH3). Cannot fail. */
FFK_API uint64_t ffk_any_hash(const ffk_any *v);

FFK_EXTERN_C_END

#endif /* FFIKIT_ANY_H */
