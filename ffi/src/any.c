/*
 * any.c - ffk_any: holding objects, owned copies, checked accessors and key equality.
 *
 * Key semantics (shared by Map and Dict): values of different kinds are never equal,
 * except that the three str forms (SmallStr, String, raw C string view) are one kind
 * and so are the three bytes forms (ffk_any__key_kind). Floats compare by value with
 * NaN == NaN and -0.0 == 0.0. The hash that agrees with this equality, ffk_any_hash, is
 * at the end of this file.
 */
#include "internal.h"

#include <ffikit/weak_ref.h>

#include <math.h>
#include <string.h>

#define XXH_INLINE_ALL /* the str and bytes hashes inline, as hash.c has them */
#include <xxhash.h>

ffk_any ffk_any_object(ffk_object *obj) {
  if (obj == NULL) return ffk_any_none();
  ffk_object_retain(obj);
  return ffk_any_object_steal(obj);
}

ffk_any ffk_any_object_steal(ffk_object *obj) { return ffk_any__object_steal(obj); }

void ffk_any_retain(const ffk_any *v) {
  if (v != NULL && ffk_any_is_object(v) && v->v_obj != NULL) ffk_object_retain(v->v_obj);
}

void ffk_any_release(ffk_any *v) {
  if (v == NULL) return;
  ffk_object *obj = ffk_any_is_object(v) ? v->v_obj : NULL;
  *v = ffk_any_none();
  ffk_object_release(obj);
}

int ffk_any_to_owned(const ffk_any *v, ffk_any *out) {
  *out = ffk_any_none();
  switch (v->type_index) {
    case FFK_TYPE_RAW_STR:
      return ffk_any_cstr((const char *)v->v_ptr, out);
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = (const ffk_byte_array *)v->v_ptr;
      if (b == NULL) return ffk_error_set(FFK_ERR_VALUE, "byte-array view is NULL");
      return ffk_any_bytes(b->data, b->size, out);
    }
    case FFK_TYPE_DLTENSOR_PTR:
      return ffk_error_set(FFK_ERR_TYPE, "a DLTensor* view cannot be stored; make a Tensor from it first");
    default:
      ffk_any__copy(out, v);
      ffk_any_retain(out);
      return 0;
  }
}

/* ---- Accessors. ------------------------------------------------------------------ */

static int mismatch(const char *expected, const ffk_any *v) {
  return ffk_error_set(FFK_ERR_TYPE, "expected %s but got %s", expected, ffk_any_type_name(v));
}

/* The parentheses keep any.h's inline macros off the definitions. */
int (ffk_any_as_int)(const ffk_any *v, int64_t *out) {
  if (FFK_LIKELY(v->type_index == FFK_TYPE_INT || v->type_index == FFK_TYPE_BOOL)) {
    *out = v->v_int;
    return 0;
  }
  *out = 0;
  return mismatch("int", v);
}

int (ffk_any_as_float)(const ffk_any *v, double *out) {
  switch (v->type_index) {
    case FFK_TYPE_FLOAT:
      *out = v->v_float;
      return 0;
    case FFK_TYPE_INT:
    case FFK_TYPE_BOOL:
      *out = (double)v->v_int;
      return 0;
    default:
      *out = 0.0;
      return mismatch("float", v);
  }
}

int (ffk_any_as_bool)(const ffk_any *v, bool *out) {
  if (v->type_index == FFK_TYPE_BOOL || v->type_index == FFK_TYPE_INT) {
    *out = v->v_int != 0;
    return 0;
  }
  *out = false;
  return mismatch("bool", v);
}

int ffk_any_as_ptr(const ffk_any *v, void **out) {
  switch (v->type_index) {
    case FFK_TYPE_OPAQUE_PTR:
    case FFK_TYPE_DLTENSOR_PTR:
      *out = v->v_ptr;
      return 0;
    case FFK_TYPE_NONE:
      *out = NULL;
      return 0;
    default:
      return mismatch("ptr", v);
  }
}

static bool is_str(const ffk_any *v) {
  return v->type_index == FFK_TYPE_SMALL_STR || v->type_index == FFK_TYPE_STRING ||
         v->type_index == FFK_TYPE_RAW_STR;
}

int ffk_any_as_dtype(const ffk_any *v, DLDataType *out) {
  if (v->type_index == FFK_TYPE_DATATYPE) {
    *out = v->v_dtype;
    return 0;
  }
  const char *s;
  size_t n;
  if (is_str(v) && ffk_any_as_str(v, &s, &n) == 0) return ffk_dtype_parse(s, n, out);
  return mismatch("dtype", v);
}

int ffk_any_as_device(const ffk_any *v, DLDevice *out) {
  if (v->type_index == FFK_TYPE_DEVICE) {
    *out = v->v_device;
    return 0;
  }
  const char *s;
  size_t n;
  if (is_str(v) && ffk_any_as_str(v, &s, &n) == 0) return ffk_device_parse(s, n, out);
  return mismatch("Device", v);
}

int ffk_any_as_object(const ffk_any *v, int32_t type_index, ffk_object **out) {
  if (ffk_any_is_object(v) && v->v_obj != NULL && ffk_type_is_instance(v->type_index, type_index)) {
    ffk_object_retain(v->v_obj);
    *out = v->v_obj;
    return 0;
  }
  *out = NULL;
  return mismatch(ffk_type_name(type_index), v);
}

int ffk_any_as_str(const ffk_any *v, const char **data, size_t *size) {
  switch (v->type_index) {
    case FFK_TYPE_SMALL_STR:
      *data = v->v_bytes;
      *size = v->aux;
      return 0;
    case FFK_TYPE_STRING: {
      const ffk_string *s = (const ffk_string *)v->v_obj;
      *data = s->data;
      *size = s->size;
      return 0;
    }
    case FFK_TYPE_RAW_STR:
      if (v->v_ptr == NULL) return ffk_error_set(FFK_ERR_VALUE, "raw string view is NULL");
      *data = (const char *)v->v_ptr;
      *size = strlen(*data);
      return 0;
    default:
      return mismatch("str", v);
  }
}

int ffk_any_as_bytes(const ffk_any *v, const char **data, size_t *size) {
  switch (v->type_index) {
    case FFK_TYPE_SMALL_BYTES:
      *data = v->v_bytes;
      *size = v->aux;
      return 0;
    case FFK_TYPE_BYTES: {
      const ffk_bytes *b = (const ffk_bytes *)v->v_obj;
      *data = b->data;
      *size = b->size;
      return 0;
    }
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = (const ffk_byte_array *)v->v_ptr;
      if (b == NULL) return ffk_error_set(FFK_ERR_VALUE, "byte-array view is NULL");
      *data = b->data;
      *size = b->size;
      return 0;
    }
    default:
      return mismatch("bytes", v);
  }
}

const char *ffk_any_type_name(const ffk_any *v) { return ffk_type_name(v->type_index); }

/* ---- Key equality. ----------------------------------------------------------------- */

void ffk_any__content(const ffk_any *v, const char **data, size_t *size) {
  switch (v->type_index) {
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_SMALL_BYTES:
      *data = v->v_bytes;
      *size = v->aux;
      return;
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES:
      *data = ((const ffk_string *)v->v_obj)->data;
      *size = ((const ffk_string *)v->v_obj)->size;
      return;
    case FFK_TYPE_RAW_STR:
      *data = v->v_ptr ? (const char *)v->v_ptr : "";
      *size = strlen(*data);
      return;
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = (const ffk_byte_array *)v->v_ptr;
      *data = b ? b->data : "";
      *size = b ? b->size : 0;
      return;
    }
    default:
      *data = "";
      *size = 0;
  }
}

bool ffk_any_equal(const ffk_any *a, const ffk_any *b) {
  int32_t kind = ffk_any__key_kind(a->type_index);
  if (kind != ffk_any__key_kind(b->type_index)) return false;
  switch (kind) {
    case FFK_TYPE_NONE:
      return true;
    case FFK_TYPE_INT:
    case FFK_TYPE_BOOL:
      return a->v_int == b->v_int;
    case FFK_TYPE_FLOAT:
      return a->v_float == b->v_float || (isnan(a->v_float) && isnan(b->v_float));
    case FFK_TYPE_DATATYPE:
      return ffk_dtype_equal(a->v_dtype, b->v_dtype);
    case FFK_TYPE_DEVICE:
      return ffk_device_equal(a->v_device, b->v_device);
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES: {
      if (a->type_index == b->type_index && ffk_any_is_object(a) && a->v_obj == b->v_obj) return true;
      const char *x, *y;
      size_t nx, ny;
      ffk_any__content(a, &x, &nx);
      ffk_any__content(b, &y, &ny);
      return nx == ny && memcmp(x, y, nx) == 0;
    }
    case FFK_TYPE_WEAK_REF: /* the identity of the targets, whose memory each WeakRef holds */
      return ffk_weak_ref_target_address(a->v_obj) == ffk_weak_ref_target_address(b->v_obj);
    default:
      /* Pointers and objects: identity, unless the type has key operations. */
      if (a->v_ptr == b->v_ptr) return true;
      if (kind >= FFK_TYPE_STATIC_END && a->type_index == b->type_index && a->v_obj != NULL && b->v_obj != NULL) {
        ffk_key_equal_fn fn = ffk_type__key_equal(kind);
        if (fn != NULL) return fn(a->v_obj, b->v_obj);
      }
      return false;
  }
}

/*
 * The hash that agrees with ffk_any_equal: equal keys hash equal. It folds the kinds the
 * way equality does (ffk_any__key_kind: the str forms are one kind, the bytes forms
 * another), hashes str and bytes content with XXH3 seeded per kind (as hash.c's ffk_hash_str),
 * canonicalises -0.0 to 0.0 and every NaN to one NaN, and gives each kind its own seed.
 * Plain values go through ffk_any__mix64 (any.h: murmur3's finaliser), so nearby integers
 * spread over a table. Objects hash by identity, unless their type has key operations
 * (ffk_type_set_key_ops: ffi.StructuralKey hashes by its value's structure).
 */
uint64_t ffk_any_hash(const ffk_any *v) {
  int32_t kind = ffk_any__key_kind(v->type_index);
  uint64_t seed = (uint64_t)(uint32_t)kind * UINT64_C(0x9e3779b97f4a7c15);
  switch (kind) {
    case FFK_TYPE_NONE:
      return ffk_any__mix64(seed);
    case FFK_TYPE_INT:
      return ffk_any__hash_int(v->v_int); /* the same function, inline for the containers */
    case FFK_TYPE_BOOL:
      return ffk_any__mix64(seed ^ (uint64_t)v->v_int);
    case FFK_TYPE_FLOAT: {
      double x = v->v_float;
      if (x == 0.0) x = 0.0;          /* -0.0 hashes like 0.0 */
      if (isnan(x)) x = NAN;          /* every NaN hashes alike */
      uint64_t bits;
      memcpy(&bits, &x, sizeof bits);
      return ffk_any__mix64(seed ^ bits);
    }
    case FFK_TYPE_DATATYPE:
      return ffk_any__mix64(seed ^ ((uint64_t)v->v_dtype.code << 24 | (uint64_t)v->v_dtype.bits << 16 | v->v_dtype.lanes));
    case FFK_TYPE_DEVICE:
      return ffk_any__mix64(seed ^ ((uint64_t)(uint32_t)ffk_device_type(v->v_device) << 32 | (uint32_t)v->v_device.device_id));
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES: {
      const char *data;
      size_t size;
      ffk_any__content(v, &data, &size);
      return XXH3_64bits_withSeed(data, size, seed);
    }
    case FFK_TYPE_WEAK_REF: /* as ffk_any_equal compares them: by target */
      return ffk_any__mix64(seed ^ (uint64_t)(uintptr_t)ffk_weak_ref_target_address(v->v_obj));
    default:
      if (kind >= FFK_TYPE_STATIC_END && v->v_obj != NULL) { /* a type may hash by content */
        ffk_key_hash_fn fn = ffk_type__key_hash(kind);
        if (fn != NULL) return fn(v->v_obj);
      }
      return ffk_any__mix64(seed ^ (uint64_t)(uintptr_t)v->v_ptr);
  }
}
