/*
 * serialization_read.c - ffk_from_json_graph: a TVM-FFI JSON graph document back into values.
 *
 * The text is untrusted. yyjson parses it (no recursion, so any nesting parses); then the
 * nodes are decoded from the root down, each at most once: a node referred to from several
 * places gives one value, shared, as it was when written. Each node is in one of three
 * states, NEW, BUSY (its children are being decoded) and DONE (values[i] holds it); meeting
 * a BUSY node again means the node is reachable from itself, which is refused, so decoding
 * always ends. Nesting is bounded by FFK_STRUCTURAL_MAX_DEPTH, so the C stack is too. Every
 * index, type and count is checked before use. Nodes the root does not reach are not
 * decoded (as in tvm_ffi).
 *
 * Ownership: values[i] owns node i's value once DONE; containers retain their elements, so
 * on any failure releasing every DONE value and the yyjson document frees everything.
 */
#include "serialization_internal.h"

#include <ffikit/dict.h>
#include <ffikit/enum.h>
#include <ffikit/list.h>
#include <ffikit/reflect.h>
#include <ffikit/serialization.h>
#include <ffikit/structural.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { NODE_NEW = 0, NODE_BUSY = 1, NODE_DONE = 2 };

/* The last type keys looked up, so a document of 10,000 objects of one type looks it up once. */
#define TYPE_CACHE 8

typedef struct {
  yyjson_val **nodes; /* the "nodes" array, for O(1) access by index */
  size_t n;
  uint8_t *state;
  ffk_any *values;
  int depth;
  ffk_json_hooks hooks;
  ffk_any *scratch; /* a container's elements while it is built (never across a recursion) */
  size_t scratch_cap;
  struct {
    const char *key; /* borrowed from the document */
    size_t len;
    int32_t index;
  } types[TYPE_CACHE];
  int ntypes, next_type;
} reader;

/* ---- Errors --------------------------------------------------------------------------- */

#define GRAPH_ERROR "Invalid JSON Object Graph: "

static int bad(const char *fmt, ...) FFK_PRINTF(1, 2);
static int bad(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ffk_error_set(FFK_ERR_VALUE, GRAPH_ERROR "%s", msg);
}

/*
 * Restates the pending error of a conversion (a dtype that does not parse, a field value
 * of the wrong type) as a ValueError about node `i`; a MemoryError or RuntimeError stays
 * what it is.
 */
static int bad_conversion(size_t i) {
  if (ffk_error_matches(FFK_ERR_MEMORY) || ffk_error_matches(FFK_ERR_RUNTIME)) return -1;
  ffk_error *e = ffk_error_fetch();
  int rc = bad("node %zu: %s", i, e != NULL ? ffk_error_message(e) : "conversion failed");
  if (e != NULL) ffk_object_release((ffk_object *)e);
  return rc;
}

/* What a JSON value is, for messages. */
static const char *json_kind(yyjson_val *v) {
  switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_NULL: return "null";
    case YYJSON_TYPE_BOOL: return "a bool";
    case YYJSON_TYPE_NUM: return yyjson_is_real(v) ? "a float" : "an int";
    case YYJSON_TYPE_STR: return "a string";
    case YYJSON_TYPE_ARR: return "an array";
    case YYJSON_TYPE_OBJ: return "an object";
    default: return "nothing";
  }
}

/* A JSON integer that fits int64 (1 / 0 when `v` is not one). */
static bool json_int64(yyjson_val *v, int64_t *out) {
  if (yyjson_is_sint(v)) {
    *out = yyjson_get_sint(v);
    return true;
  }
  if (yyjson_is_uint(v) && yyjson_get_uint(v) <= (uint64_t)INT64_MAX) {
    *out = (int64_t)yyjson_get_uint(v);
    return true;
  }
  return false;
}

/* ---- Plain JSON data (metadata, what a __data_from_json__ hook receives) -------------- */

/* JSON as values: objects become Maps with str keys, arrays Arrays. *out owned. */
static int plain_of_json(yyjson_val *v, int depth, ffk_any *out) {
  *out = ffk_any_none();
  switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_NULL: return 0;
    case YYJSON_TYPE_BOOL: *out = ffk_any_bool(yyjson_get_bool(v)); return 0;
    case YYJSON_TYPE_NUM: {
      int64_t x;
      if (yyjson_is_real(v)) {
        *out = ffk_any_float(yyjson_get_real(v));
      } else if (json_int64(v, &x)) {
        *out = ffk_any_int(x);
      } else {
        return bad("the integer %llu is out of range", (unsigned long long)yyjson_get_uint(v));
      }
      return 0;
    }
    case YYJSON_TYPE_STR: return ffk_any_str(yyjson_get_str(v), yyjson_get_len(v), out);
    case YYJSON_TYPE_ARR: {
      if (depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
      size_t n = yyjson_arr_size(v);
      ffk_any *items = ffk_mem_calloc(n == 0 ? 1 : n, sizeof *items);
      if (items == NULL) return -1;
      size_t idx, max;
      yyjson_val *item;
      int rc = 0;
      yyjson_arr_foreach(v, idx, max, item) {
        if ((rc = plain_of_json(item, depth + 1, &items[idx])) != 0) break;
      }
      ffk_array *a = NULL;
      if (rc == 0) {
        a = ffk_array_new_steal(items, (int64_t)n); /* steals the items even when it fails */
      } else {
        for (size_t i = 0; i < n; ++i) ffk_any_release(&items[i]);
      }
      ffk_mem_free(items);
      if (a == NULL) return -1;
      *out = ffk_any_object_steal(&a->header);
      return 0;
    }
    case YYJSON_TYPE_OBJ: {
      if (depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
      size_t n = yyjson_obj_size(v);
      ffk_any *kv = ffk_mem_calloc(n == 0 ? 2 : 2 * n, sizeof *kv);
      if (kv == NULL) return -1;
      size_t idx, max;
      yyjson_val *key, *val;
      int rc = 0;
      yyjson_obj_foreach(v, idx, max, key, val) {
        rc = ffk_any_str(yyjson_get_str(key), yyjson_get_len(key), &kv[idx]);
        if (rc == 0) rc = plain_of_json(val, depth + 1, &kv[n + idx]);
        if (rc != 0) break;
      }
      ffk_map *m = rc == 0 ? ffk_map_from_pairs(kv, kv + n, (int64_t)n) : NULL;
      for (size_t i = 0; i < 2 * n; ++i) ffk_any_release(&kv[i]);
      ffk_mem_free(kv);
      if (m == NULL) return -1;
      *out = ffk_any_object_steal(&m->header);
      return 0;
    }
    default: return bad("unexpected JSON value");
  }
}

/* ---- Nodes ---------------------------------------------------------------------------- */

static int get_node(reader *r, yyjson_val *ref, const ffk_any **out);

/* The node index `ref` (a JSON integer naming an existing node). */
static int node_index(reader *r, yyjson_val *ref, size_t *out) {
  int64_t i;
  if (!json_int64(ref, &i)) {
    if (yyjson_is_uint(ref)) return bad("invalid node index %llu", (unsigned long long)yyjson_get_uint(ref));
    return bad("a node index must be an integer, got %s", json_kind(ref));
  }
  if (i < 0 || (uint64_t)i >= r->n) return bad("invalid node index %lld (the document has %zu nodes)", (long long)i, r->n);
  *out = (size_t)i;
  return 0;
}

/*
 * An Array, Tuple, List, Map or Dict from node i's data, a JSON array of node indices. The
 * elements are decoded first (the recursion), then copied, borrowed, into the scratch
 * buffer (no recursion there, so one buffer serves every level) and the container made.
 */
static int decode_container(reader *r, size_t i, ffk_json_kind kind, const char *key, yyjson_val *data, ffk_any *out) {
  if (!yyjson_is_arr(data)) return bad("node %zu (`%s`): \"data\" must be an array, got %s", i, key, json_kind(data));
  size_t n = yyjson_arr_size(data);
  bool mapping = kind == FFK_JSON_MAP || kind == FFK_JSON_DICT;
  if (mapping && n % 2 != 0)
    return bad("node %zu (`%s`): Map/Dict data must contain an even number of [key, value] entries, got %zu", i, key, n);
  if (r->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  size_t idx, max;
  yyjson_val *ref;
  const ffk_any *unused;
  ++r->depth;
  yyjson_arr_foreach(data, idx, max, ref) {
    if (get_node(r, ref, &unused) != 0) {
      --r->depth;
      return -1;
    }
  }
  --r->depth;
  if (n > r->scratch_cap) {
    ffk_any *grown = ffk_mem_realloc(r->scratch, n * sizeof *grown);
    if (grown == NULL) return -1;
    r->scratch = grown;
    r->scratch_cap = n;
  }
  ffk_any *items = r->scratch;
  yyjson_arr_foreach(data, idx, max, ref) {
    int64_t j = 0;
    (void)json_int64(ref, &j); /* an index get_node checked above */
    if (mapping) /* keys at even positions, values at odd: keys first, then values */
      items[idx % 2 == 0 ? idx / 2 : n / 2 + idx / 2] = r->values[j];
    else
      items[idx] = r->values[j];
  }
  int64_t m = (int64_t)n;
  /* items is NULL before the scratch buffer first grows (an empty container first):
     no arithmetic on it then */
  const ffk_any *values = items != NULL ? items + m / 2 : NULL;
  ffk_object *made;
  switch (kind) {
    case FFK_JSON_ARRAY: made = (ffk_object *)ffk_array_new(items, m); break;
    case FFK_JSON_TUPLE: made = (ffk_object *)ffk_tuple_new(m, items); break;
    case FFK_JSON_LIST: made = (ffk_object *)ffk_list_from_items(items, m); break;
    case FFK_JSON_MAP: made = (ffk_object *)ffk_map_from_pairs(items, values, m / 2); break;
    default: made = (ffk_object *)ffk_dict_from_pairs(items, values, m / 2); break;
  }
  if (made == NULL) return -1;
  *out = ffk_any_object_steal(made);
  return 0;
}

static const signed char *b64_table(void) {
  static signed char table[256];
  static int ready; /* benign: every thread computes the same bytes */
  if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    signed char t[256];
    memset(t, -1, sizeof t);
    for (int k = 0; k < 64; ++k) t[(unsigned char)digits[k]] = (signed char)k;
    for (int k = 0; k < 256; ++k) __atomic_store_n(&table[k], t[k], __ATOMIC_RELAXED);
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  return table;
}

/* Bytes from standard padded base64 (what tvm_ffi and ffikit write). */
static int decode_bytes(size_t i, yyjson_val *data, ffk_any *out) {
  if (!yyjson_is_str(data)) return bad("node %zu (`ffi.Bytes`): \"data\" must be a base64 string, got %s", i, json_kind(data));
  const unsigned char *s = (const unsigned char *)yyjson_get_str(data);
  size_t n = yyjson_get_len(data);
  if (n % 4 != 0) return bad("node %zu (`ffi.Bytes`): invalid base64 text: its length %zu is not a multiple of 4", i, n);
  size_t pad = n >= 1 && s[n - 1] == '=' ? (n >= 2 && s[n - 2] == '=' ? 2 : 1) : 0;
  const signed char *t = b64_table();
  unsigned char *bytes = ffk_mem_alloc(n / 4 * 3 + 1);
  if (bytes == NULL) return -1;
  size_t o = 0;
  for (size_t k = 0; k < n; k += 4) {
    uint32_t x = 0;
    for (size_t j = 0; j < 4; ++j) {
      bool padding = k + j >= n - pad;
      int d = padding ? 0 : t[s[k + j]];
      if (d < 0) {
        ffk_mem_free(bytes);
        return bad("node %zu (`ffi.Bytes`): invalid base64 text: byte 0x%02x at offset %zu", i, s[k + j], k + j);
      }
      x = x << 6 | (uint32_t)d;
    }
    bytes[o++] = (unsigned char)(x >> 16), bytes[o++] = (unsigned char)(x >> 8), bytes[o++] = (unsigned char)x;
  }
  int rc = ffk_any_bytes(bytes, o - pad, out);
  ffk_mem_free(bytes);
  return rc;
}

static int decode_object(reader *r, size_t i, int32_t type_index, const char *key, yyjson_val *data, ffk_any *out);

/*
 * The object type a node's key names, in *out (-1 when none does: an unknown key, or one of
 * a type that is not an object type). Keys hold no NUL (one would cut the lookup short).
 */
static int lookup_type(reader *r, const char *key, size_t len, int32_t *out) {
  for (int k = 0; k < r->ntypes; ++k)
    if (r->types[k].len == len && memcmp(r->types[k].key, key, len) == 0) {
      *out = r->types[k].index;
      return 0;
    }
  int32_t index = -1;
  int found = strlen(key) == len ? ffk_type_lookup(key, &index) : 0;
  if (found < 0) return -1;
  *out = found == 1 && index >= FFK_TYPE_OBJECT_BEGIN ? index : -1;
  int slot = r->ntypes < TYPE_CACHE ? r->ntypes++ : (r->next_type++ % TYPE_CACHE);
  r->types[slot].key = key;
  r->types[slot].len = len;
  r->types[slot].index = *out;
  return 0;
}

static int decode_node(reader *r, size_t i, ffk_any *out) {
  yyjson_val *node = r->nodes[i];
  if (!yyjson_is_obj(node)) return bad("node %zu must be an object, got %s", i, json_kind(node));
  yyjson_val *type = yyjson_obj_get(node, "type");
  if (type == NULL) return bad("node %zu has no \"type\"", i);
  if (!yyjson_is_str(type)) return bad("node %zu: \"type\" must be a string, got %s", i, json_kind(type));
  const char *key = yyjson_get_str(type);
  size_t key_len = yyjson_get_len(type);
  yyjson_val *data = yyjson_obj_get(node, "data");
  ffk_json_kind kind = ffk_json__kind_of_key(key, key_len);
  if (kind != FFK_JSON_NONE && data == NULL) return bad("node %zu (`%s`) has no \"data\"", i, key);
  int64_t x;
  switch (kind) {
    case FFK_JSON_NONE: *out = ffk_any_none(); return 0;
    case FFK_JSON_BOOL:
      if (!yyjson_is_bool(data)) return bad("node %zu (`bool`): \"data\" must be true or false, got %s", i, json_kind(data));
      *out = ffk_any_bool(yyjson_get_bool(data));
      return 0;
    case FFK_JSON_INT:
      if (!json_int64(data, &x)) return bad("node %zu (`int`): \"data\" must be a 64-bit integer, got %s", i, json_kind(data));
      *out = ffk_any_int(x);
      return 0;
    case FFK_JSON_FLOAT:
      if (!yyjson_is_num(data)) return bad("node %zu (`float`): \"data\" must be a number, got %s", i, json_kind(data));
      *out = ffk_any_float(yyjson_get_num(data));
      return 0;
    case FFK_JSON_DTYPE: {
      if (!yyjson_is_str(data)) return bad("node %zu (`DataType`): \"data\" must be a string, got %s", i, json_kind(data));
      DLDataType t;
      if (ffk_dtype_parse(yyjson_get_str(data), yyjson_get_len(data), &t) != 0) return bad_conversion(i);
      *out = ffk_any_dtype(t);
      return 0;
    }
    case FFK_JSON_DEVICE: {
      int64_t pair[2];
      if (!yyjson_is_arr(data) || yyjson_arr_size(data) != 2 || !json_int64(yyjson_arr_get_first(data), &pair[0]) ||
          !json_int64(yyjson_arr_get_last(data), &pair[1]))
        return bad("node %zu (`Device`): \"data\" must be [device_type, device_id]", i);
      if (pair[0] < 0 || pair[0] > INT32_MAX || pair[1] < INT32_MIN || pair[1] > INT32_MAX)
        return bad("node %zu (`Device`): [%lld, %lld] is out of range", i, (long long)pair[0], (long long)pair[1]);
      *out = ffk_any_device(ffk_device((int32_t)pair[0], (int32_t)pair[1]));
      return 0;
    }
    case FFK_JSON_STR:
      if (!yyjson_is_str(data)) return bad("node %zu (`ffi.String`): \"data\" must be a string, got %s", i, json_kind(data));
      return ffk_any_str(yyjson_get_str(data), yyjson_get_len(data), out);
    case FFK_JSON_BYTES: return decode_bytes(i, data, out);
    case FFK_JSON_SHAPE: {
      if (!yyjson_is_arr(data)) return bad("node %zu (`ffi.Shape`): \"data\" must be an array, got %s", i, json_kind(data));
      size_t n = yyjson_arr_size(data);
      int64_t *dims = ffk_mem_alloc((n == 0 ? 1 : n) * sizeof *dims);
      if (dims == NULL) return -1;
      size_t idx, max;
      yyjson_val *d;
      yyjson_arr_foreach(data, idx, max, d) {
        if (!json_int64(d, &dims[idx])) {
          ffk_mem_free(dims);
          return bad("node %zu (`ffi.Shape`): a dimension must be an integer, got %s", i, json_kind(d));
        }
      }
      ffk_shape *s = ffk_shape_new(dims, n);
      ffk_mem_free(dims);
      if (s == NULL) return bad_conversion(i);
      *out = ffk_any_object_steal(&s->header);
      return 0;
    }
    case FFK_JSON_ARRAY:
    case FFK_JSON_TUPLE:
    case FFK_JSON_LIST:
    case FFK_JSON_MAP:
    case FFK_JSON_DICT: return decode_container(r, i, kind, key, data, out);
    case FFK_JSON_OBJECT: break;
  }
  int32_t type_index;
  if (lookup_type(r, key, key_len, &type_index) != 0) return -1;
  if (type_index < 0) return bad("node %zu: unknown type key `%s`", i, key);
  return decode_object(r, i, type_index, key, data, out);
}

/* A reflected field's inline value (an int, float or bool field, or a dtype one) as a value. */
static int inline_field(size_t i, const ffk_field_info *f, yyjson_val *v, ffk_any *out) {
  if (f->schema->type_index == FFK_TYPE_DATATYPE && yyjson_is_str(v)) {
    DLDataType t;
    if (ffk_dtype_parse(yyjson_get_str(v), yyjson_get_len(v), &t) != 0) return bad_conversion(i);
    *out = ffk_any_dtype(t);
    return 0;
  }
  int64_t x;
  switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_BOOL: *out = ffk_any_bool(yyjson_get_bool(v)); return 0;
    case YYJSON_TYPE_NUM:
      if (yyjson_is_real(v))
        *out = ffk_any_float(yyjson_get_real(v));
      else if (json_int64(v, &x))
        *out = ffk_any_int(x);
      else
        break;
      return 0;
    default: break;
  }
  return bad("node %zu: field `%s` must be a JSON %s, got %s", i, f->name,
             f->schema->type_index == FFK_TYPE_DATATYPE ? "string" : f->type_text, json_kind(v));
}

/* An object of a reflected type, rebuilt field by field (its constructor is not called). */
static int decode_fields(reader *r, size_t i, int32_t type_index, const char *key, yyjson_val *data, ffk_any *out) {
  if (!yyjson_is_obj(data)) return bad("node %zu (`%s`): \"data\" must be an object, got %s", i, key, json_kind(data));
  int32_t nfields = ffk_type_num_fields(type_index);
  if (nfields < 0) return -1;
  if (r->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  bool given_small[64] = {false};
  bool *given = nfields <= 64 ? given_small : ffk_mem_calloc((size_t)nfields, sizeof *given);
  if (given == NULL) return -1;
  ffk_object *obj = ffk_object_new_reflected(type_index);
  int rc = obj == NULL ? -1 : 0;
  ++r->depth;
  size_t idx, max;
  yyjson_val *name, *v;
  yyjson_obj_foreach(data, idx, max, name, v) {
    if (rc != 0) break;
    const char *fname = yyjson_get_str(name);
    const ffk_field_info *f = NULL;
    int has = strlen(fname) == yyjson_get_len(name) ? ffk_type_find_field(type_index, fname, &f) : 0;
    if (has <= 0) {
      rc = has < 0 ? -1 : bad("node %zu: `%s` has no field `%s`", i, key, fname);
      break;
    }
    ffk_any value = ffk_any_none();
    const ffk_any *ref = &value;
    if (f->storage == FFK_FIELD_STORAGE_INT || f->storage == FFK_FIELD_STORAGE_FLOAT ||
        f->storage == FFK_FIELD_STORAGE_BOOL || f->schema->type_index == FFK_TYPE_DATATYPE) {
      if (f->schema->type_index == FFK_TYPE_DATATYPE && yyjson_is_null(v)) { /* a dtype field never set */
        given[f->position] = true;
        continue;
      }
      rc = inline_field(i, f, v, &value);
    } else {
      rc = get_node(r, v, &ref);
    }
    if (rc == 0 && ffk_field_init(f, obj, ref) != 0) rc = bad_conversion(i);
    if (rc == 0) given[f->position] = true;
  }
  --r->depth;
  for (int32_t k = 0; rc == 0 && k < nfields; ++k) {
    const ffk_field_info *f = ffk_type_field_at(type_index, k);
    if (f == NULL)
      rc = -1;
    else if (!given[k] && !(f->flags & FFK_FIELD_HAS_DEFAULT))
      rc = bad("node %zu: required field `%s` of `%s` is missing", i, f->name, key);
  }
  if (given != given_small) ffk_mem_free(given);
  if (rc != 0) {
    if (obj != NULL) ffk_object_release(obj);
    return -1;
  }
  *out = ffk_any_object_steal(obj);
  return 0;
}

/* An enum member: the registered singleton at the node's index (an IntEnum's int index,
   another enum's str index), tvm_ffi's rule and errors. */
static int decode_enum(size_t i, int32_t type_index, const char *key, yyjson_val *data, ffk_any *out) {
  if (data == NULL) return bad("node %zu (`%s`) has no \"data\"", i, key);
  ffk_object *m = NULL;
  int rc;
  char shown[64];
  if (ffk_enum_kind_of(type_index) == FFK_ENUM_INT) {
    if (!yyjson_is_int(data) || (yyjson_is_uint(data) && yyjson_get_uint(data) > (uint64_t)INT64_MAX))
      return ffk_error_set(FFK_ERR_TYPE, "node %zu: the data of the IntEnum `%s` must be an int64", i, key);
    int64_t value = yyjson_is_sint(data) ? yyjson_get_sint(data) : (int64_t)yyjson_get_uint(data);
    rc = ffk_enum_get_int(type_index, value, &m);
    snprintf(shown, sizeof shown, "%lld", (long long)value);
  } else {
    if (!yyjson_is_str(data))
      return ffk_error_set(FFK_ERR_TYPE, "node %zu: the data of the enum `%s` must be a str", i, key);
    rc = ffk_enum_get_str(type_index, yyjson_get_str(data), yyjson_get_len(data), &m);
    snprintf(shown, sizeof shown, "%.*s", (int)(yyjson_get_len(data) > 60 ? 60 : yyjson_get_len(data)),
             yyjson_get_str(data));
  }
  if (rc < 0) return -1;
  if (rc == 0) return ffk_error_set(FFK_ERR_VALUE, "Enum `%s` has no instance with index %s", key, shown);
  *out = ffk_any_object_steal(m);
  return 0;
}

static int decode_object(reader *r, size_t i, int32_t type_index, const char *key, yyjson_val *data, ffk_any *out) {
  if (ffk_enum_kind_of(type_index) >= 0) return decode_enum(i, type_index, key, data, out);
  ffk_function *hook;
  int found = ffk_json__hook(&r->hooks, type_index, &hook);
  if (found < 0) return -1;
  if (found) {
    if (data == NULL) return bad("node %zu (`%s`) has no \"data\"", i, key);
    ffk_any arg, result = ffk_any_none();
    if (plain_of_json(data, r->depth, &arg) != 0) return -1;
    int rc = ffk_function_call(hook, &arg, 1, &result);
    ffk_any_release(&arg);
    if (rc != 0) return -1;
    if (!ffk_any_is_object(&result) || !ffk_type_is_instance(result.type_index, type_index)) {
      rc = ffk_error_set(FFK_ERR_TYPE, "the `%s` hook of `%s` returned `%s`, not a `%s`", FFK_ATTR_DATA_FROM_JSON, key,
                         ffk_any_type_name(&result), key);
      ffk_any_release(&result);
      return rc;
    }
    *out = result;
    return 0;
  }
  if (!ffk_type_is_reflected(type_index))
    return ffk_error_set(FFK_ERR_TYPE, "cannot deserialize `%s`: its type is not reflected and has no `%s` hook", key,
                         FFK_ATTR_DATA_FROM_JSON);
  if (data == NULL) return bad("node %zu (`%s`) has no \"data\"", i, key);
  return decode_fields(r, i, type_index, key, data, out);
}

/* The value of the node `ref` refers to, borrowed from r->values (decoded on first use). */
static int get_node(reader *r, yyjson_val *ref, const ffk_any **out) {
  size_t i = 0;
  if (node_index(r, ref, &i) != 0) return -1;
  if (r->state[i] == NODE_BUSY) return bad("node %zu is reachable from itself", i);
  if (r->state[i] == NODE_NEW) {
    r->state[i] = NODE_BUSY;
    ffk_any v;
    if (decode_node(r, i, &v) != 0) return -1;
    r->values[i] = v;
    r->state[i] = NODE_DONE;
  }
  *out = &r->values[i];
  return 0;
}

/* ---- The document --------------------------------------------------------------------- */

static int read_document(reader *r, yyjson_val *root, ffk_any *out, ffk_any *metadata) {
  if (!yyjson_is_obj(root)) return bad("expected a JSON object, got %s", json_kind(root));
  yyjson_val *root_index = yyjson_obj_get(root, "root_index");
  yyjson_val *nodes = yyjson_obj_get(root, "nodes");
  if (root_index == NULL || !yyjson_is_int(root_index)) return bad("expected `root_index` integer field");
  if (nodes == NULL || !yyjson_is_arr(nodes)) return bad("expected `nodes` array field");
  r->n = yyjson_arr_size(nodes);
  size_t cap = r->n == 0 ? 1 : r->n;
  if ((r->nodes = ffk_mem_alloc(cap * sizeof *r->nodes)) == NULL ||
      (r->state = ffk_mem_calloc(cap, sizeof *r->state)) == NULL ||
      (r->values = ffk_mem_calloc(cap, sizeof *r->values)) == NULL)
    return -1;
  size_t idx, max;
  yyjson_val *node;
  yyjson_arr_foreach(nodes, idx, max, node) { r->nodes[idx] = node; }
  const ffk_any *value;
  if (get_node(r, root_index, &value) != 0) return -1;
  yyjson_val *meta = yyjson_obj_get(root, "metadata");
  if (metadata != NULL && meta != NULL && plain_of_json(meta, 0, metadata) != 0) return -1;
  *out = *value;
  ffk_any_retain(out);
  return 0;
}

int ffk_from_json_graph(const char *text, size_t len, ffk_any *out, ffk_any *metadata) {
  if (metadata != NULL) *metadata = ffk_any_none();
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "from_json_graph: the output is NULL");
  *out = ffk_any_none();
  if (text == NULL && len != 0) return ffk_error_set(FFK_ERR_VALUE, "from_json_graph: the text is NULL");
  yyjson_read_err err;
  /* Without YYJSON_READ_INSITU yyjson copies the text and never writes to it. */
  yyjson_doc *doc = yyjson_read_opts((char *)(uintptr_t)(text == NULL ? "" : text), len,
                                     YYJSON_READ_ALLOW_INF_AND_NAN, &ffk_json__alc, &err);
  if (doc == NULL) {
    if (err.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) return ffk_json__no_memory();
    return bad("not JSON: %s at byte %zu", err.msg, err.pos);
  }
  reader r = {0};
  r.hooks.name = FFK_ATTR_DATA_FROM_JSON;
  int rc = read_document(&r, yyjson_doc_get_root(doc), out, metadata);
  for (size_t i = 0; r.state != NULL && i < r.n; ++i)
    if (r.state[i] == NODE_DONE) ffk_any_release(&r.values[i]);
  ffk_mem_free(r.nodes);
  ffk_mem_free(r.state);
  ffk_mem_free(r.values);
  ffk_json__hooks_free(&r.hooks);
  ffk_mem_free(r.scratch);
  yyjson_doc_free(doc);
  if (rc != 0) {
    ffk_any_release(out);
    if (metadata != NULL) ffk_any_release(metadata);
  }
  return rc;
}

int ffk_json__parse(const char *text, size_t len, ffk_any *out) {
  *out = ffk_any_none();
  yyjson_read_err err;
  yyjson_doc *doc = yyjson_read_opts((char *)(uintptr_t)(text == NULL ? "" : text), len,
                                     YYJSON_READ_ALLOW_INF_AND_NAN, &ffk_json__alc, &err);
  if (doc == NULL) {
    if (err.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION) return ffk_json__no_memory();
    return ffk_error_set(FFK_ERR_VALUE, "not JSON: %s at byte %zu", err.msg, err.pos);
  }
  int rc = plain_of_json(yyjson_doc_get_root(doc), 0, out);
  yyjson_doc_free(doc);
  return rc;
}
