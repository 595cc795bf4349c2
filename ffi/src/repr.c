/*
 * repr.c - text forms of values, with a context that nested reprs share.
 *
 * The context keeps the stack of objects being printed: an object met again while it
 * is on the stack (a cycle) prints as "...", and so does anything nested deeper than
 * FFK_REPR_MAX_DEPTH, and every object once the text passes FFK_REPR_MAX_SIZE bytes, so
 * repr always ends, in time linear in what it prints. Built-in object types (String, Bytes,
 * Shape, Error) print here; other types through their registry slot; a reflected type
 * (ffikit/reflect.h) without a slot as `key(field=value, ...)` from its fields; any other
 * type as <key at 0x...>.
 *
 * A reflected object's fields are read with ffk_field_get (a new reference each), so a
 * field another thread rewrites meanwhile prints its old or its new value, never a freed
 * one. Field values print through ffk_repr_any, so the object itself is on the stack
 * while they print and a field that leads back to it prints "...".
 */
#include "internal.h"

#include <ffikit/weak_ref.h>

#include <ffikit/reflect.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ffk_repr_ctx {
  ffk_buf buf;
  int depth;
  const ffk_object *stack[FFK_REPR_MAX_DEPTH];
};

int ffk_repr_append(ffk_repr_ctx *ctx, const char *data, size_t size) { return ffk_buf__append(&ctx->buf, data, size); }

int ffk_repr_appendf(ffk_repr_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ffk_buf__vappendf(&ctx->buf, fmt, ap);
  va_end(ap);
  return rc;
}

static int append_cstr(ffk_repr_ctx *ctx, const char *s) { return ffk_repr_append(ctx, s, strlen(s)); }

/*
 * Python's float repr: the fewest significant digits that read back to the same double;
 * positional notation for exponents in [-4, 16), scientific otherwise; ".0" on integers.
 */
static size_t repr_float(double x, char *buf, size_t cap) {
  char tmp[64];
  if (isnan(x)) return (size_t)snprintf(buf, cap, "nan");
  if (isinf(x)) return (size_t)snprintf(buf, cap, x > 0 ? "inf" : "-inf");
  int p = 0;
  for (; p < 17; ++p) {
    snprintf(tmp, sizeof tmp, "%.*e", p, x);
    if (strtod(tmp, NULL) == x) break;
  }
  int exp10 = atoi(strchr(tmp, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) {
    int decimals = p - exp10 > 0 ? p - exp10 : 0;
    snprintf(tmp, sizeof tmp, "%.*f", decimals, x);
    if (strchr(tmp, '.') == NULL) strcat(tmp, ".0");
  }
  return (size_t)snprintf(buf, cap, "%s", tmp);
}

int ffk_repr_quoted(ffk_repr_ctx *ctx, const char *data, size_t size, bool is_bytes) {
  if (ffk_repr_append(ctx, is_bytes ? "b\"" : "\"", is_bytes ? 2 : 1) != 0) return -1;
  size_t run = 0; /* bytes copied through unchanged, flushed before each escape */
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = (unsigned char)data[i];
    const char *esc = NULL;
    char hex[5];
    switch (c) {
      case '"': esc = "\\\""; break;
      case '\\': esc = "\\\\"; break;
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      case '\t': esc = "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f || (is_bytes && c >= 0x80)) {
          snprintf(hex, sizeof hex, "\\x%02x", c);
          esc = hex;
        }
    }
    if (esc == NULL) {
      ++run;
      continue;
    }
    if (ffk_repr_append(ctx, data + i - run, run) != 0 || append_cstr(ctx, esc) != 0) return -1;
    run = 0;
  }
  if (ffk_repr_append(ctx, data + size - run, run) != 0) return -1;
  return ffk_repr_append(ctx, "\"", 1);
}

static int repr_builtin_object(ffk_repr_ctx *ctx, ffk_object *obj) {
  switch (obj->type_index) {
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES: {
      const ffk_string *s = (const ffk_string *)obj;
      return ffk_repr_quoted(ctx, s->data, s->size, obj->type_index == FFK_TYPE_BYTES);
    }
    case FFK_TYPE_SHAPE: {
      const ffk_shape *s = (const ffk_shape *)obj;
      if (append_cstr(ctx, "Shape(") != 0) return -1;
      for (size_t i = 0; i < s->size; ++i)
        if (ffk_repr_appendf(ctx, i ? ", %" PRId64 : "%" PRId64, s->data[i]) != 0) return -1;
      return append_cstr(ctx, ")");
    }
    case FFK_TYPE_ERROR: {
      const ffk_error *e = (const ffk_error *)obj;
      const char *msg = ffk_error_message(e);
      if (append_cstr(ctx, ffk_error_kind(e)) != 0 || append_cstr(ctx, "(") != 0 ||
          ffk_repr_quoted(ctx, msg, strlen(msg), false) != 0)
        return -1;
      return append_cstr(ctx, ")");
    }
    case FFK_TYPE_WEAK_REF: {
      /* The target's header outlives its contents (the WeakRef holds the memory): its type can be read. */
      const ffk_object *t = ffk_weak_ref_target_address(obj);
      if (!ffk_weak_ref_alive(obj)) return ffk_repr_appendf(ctx, "<WeakRef at %p; dead>", (void *)obj);
      return ffk_repr_appendf(ctx, "<WeakRef at %p; to %s at %p>", (void *)obj, ffk_type_key(t->type_index), (const void *)t);
    }
    default:
      return ffk_repr_appendf(ctx, "<%s at %p>", ffk_type_name(obj->type_index), (void *)obj);
  }
}

/*
 * `mylib.Point(x=1, y=2.5)`: the type key, then every field without FFK_FIELD_REPR_OFF
 * in field order (the parents' first), as tvm_ffi prints its reflected objects. A type
 * with no field to show prints `mylib.Empty()`.
 */
static int repr_reflected(ffk_repr_ctx *ctx, ffk_object *obj) {
  int32_t t = obj->type_index;
  int32_t n = ffk_type_num_fields(t);
  if (n < 0 || append_cstr(ctx, ffk_type_key(t)) != 0 || append_cstr(ctx, "(") != 0) return -1;
  bool first = true;
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) return -1;
    if (f->flags & FFK_FIELD_REPR_OFF) continue;
    ffk_any value;
    if (ffk_repr_appendf(ctx, first ? "%s=" : ", %s=", f->name) != 0 || ffk_field_get(f, obj, &value) != 0)
      return -1;
    first = false;
    int rc = ffk_repr_any(ctx, &value);
    ffk_any_release(&value);
    if (rc != 0) return -1;
  }
  return append_cstr(ctx, ")");
}

static int repr_object(ffk_repr_ctx *ctx, ffk_object *obj) {
  if (obj == NULL) return append_cstr(ctx, "None");
  if (ctx->depth >= FFK_REPR_MAX_DEPTH || ctx->buf.size >= FFK_REPR_MAX_SIZE) return append_cstr(ctx, "...");
  for (int i = 0; i < ctx->depth; ++i)
    if (ctx->stack[i] == obj) return append_cstr(ctx, "...");
  ctx->stack[ctx->depth++] = obj;
  ffk_repr_fn slot = ffk_type__repr_slot(obj->type_index);
  int rc = slot                                    ? slot(obj, ctx)
           : ffk_type_is_reflected(obj->type_index) ? repr_reflected(ctx, obj)
                                                    : repr_builtin_object(ctx, obj);
  --ctx->depth;
  return rc;
}

int ffk_repr_any(ffk_repr_ctx *ctx, const ffk_any *v) {
  char tmp[64];
  switch (v->type_index) {
    case FFK_TYPE_NONE:
      return append_cstr(ctx, "None");
    case FFK_TYPE_BOOL:
      return append_cstr(ctx, v->v_int ? "True" : "False");
    case FFK_TYPE_INT:
      return ffk_repr_appendf(ctx, "%" PRId64, v->v_int);
    case FFK_TYPE_FLOAT:
      repr_float(v->v_float, tmp, sizeof tmp);
      return append_cstr(ctx, tmp);
    case FFK_TYPE_OPAQUE_PTR:
      return ffk_repr_appendf(ctx, "ptr(%p)", v->v_ptr);
    case FFK_TYPE_DLTENSOR_PTR:
      return ffk_repr_appendf(ctx, "DLTensor*(%p)", v->v_ptr);
    case FFK_TYPE_DATATYPE:
      ffk_dtype_format(v->v_dtype, tmp, sizeof tmp);
      return append_cstr(ctx, tmp);
    case FFK_TYPE_DEVICE:
      ffk_device_format(v->v_device, tmp, sizeof tmp);
      return append_cstr(ctx, tmp);
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_SMALL_BYTES:
      return ffk_repr_quoted(ctx, v->v_bytes, v->aux, v->type_index == FFK_TYPE_SMALL_BYTES);
    case FFK_TYPE_RAW_STR: {
      const char *s = v->v_ptr ? (const char *)v->v_ptr : "";
      return ffk_repr_quoted(ctx, s, strlen(s), false);
    }
    case FFK_TYPE_BYTE_ARRAY_PTR: {
      const ffk_byte_array *b = (const ffk_byte_array *)v->v_ptr;
      return ffk_repr_quoted(ctx, b ? b->data : "", b ? b->size : 0, true);
    }
    default:
      if (ffk_any_is_object(v)) return repr_object(ctx, v->v_obj);
      return ffk_repr_appendf(ctx, "<%s>", ffk_any_type_name(v));
  }
}

ffk_string *ffk_any_repr(const ffk_any *v) {
  if (v == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_any_repr: value is NULL");
    return NULL;
  }
  ffk_repr_ctx *ctx = ffk_mem_alloc(sizeof *ctx);
  if (ctx == NULL) return NULL;
  memset(ctx, 0, sizeof *ctx);
  ffk_string *out = NULL;
  if (ffk_repr_any(ctx, v) == 0) out = ffk_string_new(ctx->buf.data ? ctx->buf.data : "", ctx->buf.size);
  ffk_buf__free(&ctx->buf);
  ffk_mem_free(ctx);
  return out;
}
