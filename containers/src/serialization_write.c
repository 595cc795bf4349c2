/*
 * serialization_write.c - ffk_to_json_graph: a value as a TVM-FFI JSON graph document.
 *
 * The walk numbers nodes in post-order, as tvm_ffi's writer does: a value's children
 * (elements, keys and values, fields) get their nodes first, in order, then the value;
 * the root is the last node. A memo maps each value already written to its node, so a
 * value met again is written once: plain values and strings by value (a float by its
 * bits, so 0.0 and -0.0 stay two nodes as in tvm_ffi), other objects by identity. The memo
 * holds a reference to every object it maps, so no address is reused during the walk.
 *
 * Invariants: a container or object being written is in the memo as IN_PROGRESS and on
 * the stack; meeting it again is a cycle (an error, never an endless walk). Lists and
 * Dicts are read through snapshots (ffk_list_to_array, ffk_dict_to_map), Arrays, Tuples
 * and Maps in place (the memo's reference makes them shared, so nothing changes them),
 * reflected objects field by field, read-only fields in place and writable ones with
 * ffk_field_get. The document is built as a yyjson mutable document whose memory all
 * comes from ffk_mem_*; any failure frees it whole.
 */
#include "serialization_internal.h"

#include <ffikit/dict.h>
#include <ffikit/enum.h>
#include <ffikit/list.h>
#include <ffikit/reflect.h>
#include <ffikit/serialization.h>
#include <ffikit/structural.h>

#include <math.h>
#include <string.h>

#define SLOT_EMPTY INT64_MIN
#define IN_PROGRESS (-1)

typedef struct {
  ffk_any key;    /* the value; an object here holds a reference */
  uint64_t hash;
  int64_t index;  /* its node, IN_PROGRESS, or SLOT_EMPTY */
} memo_slot;

typedef struct {
  yyjson_mut_doc *doc;
  yyjson_mut_val *nodes;
  int64_t nnodes;
  memo_slot *slots;
  size_t mask; /* capacity - 1 (capacity a power of two) */
  size_t count;
  ffk_json_hooks hooks;
  int depth;
  const ffk_object *stack[FFK_STRUCTURAL_MAX_DEPTH]; /* the containers and objects being written */
  char *scratch;                                     /* base64 text */
  size_t scratch_cap;
} writer;

/* ---- The memo ------------------------------------------------------------------------- */

static uint64_t memo_hash(const ffk_any *v) {
  if (v->type_index == FFK_TYPE_FLOAT)
    return isnan(v->v_float) ? UINT64_C(0x7ff8) : ffk_any__mix64((uint64_t)v->v_int ^ UINT64_C(0x3c6ef372fe94f82b));
  return ffk_any_hash(v);
}

/*
 * Key semantics (ffk_any_equal), except that floats match by their bits (-0.0 is not 0.0),
 * every NaN matching every other: all are written as NaN, so one node serves them all and
 * a document read and written again keeps its nodes.
 */
static bool memo_equal(const ffk_any *a, const ffk_any *b) {
  if (a->type_index == FFK_TYPE_FLOAT || b->type_index == FFK_TYPE_FLOAT)
    return a->type_index == b->type_index &&
           (a->v_int == b->v_int || (isnan(a->v_float) && isnan(b->v_float)));
  return ffk_any_equal(a, b);
}

/* Room for one more entry, so that the slot memo_find returns stays valid for an insert. */
static int memo_reserve(writer *w) {
  size_t cap = w->slots == NULL ? 0 : w->mask + 1;
  if ((w->count + 1) * 2 <= cap) return 0;
  size_t ncap = cap == 0 ? 64 : cap * 2;
  memo_slot *slots = ffk_mem_alloc(ncap * sizeof *slots);
  if (slots == NULL) return -1;
  for (size_t i = 0; i < ncap; ++i) slots[i].index = SLOT_EMPTY;
  for (size_t i = 0; i < cap; ++i) {
    if (w->slots[i].index == SLOT_EMPTY) continue;
    size_t j = (size_t)w->slots[i].hash & (ncap - 1);
    while (slots[j].index != SLOT_EMPTY) j = (j + 1) & (ncap - 1);
    slots[j] = w->slots[i];
  }
  ffk_mem_free(w->slots);
  w->slots = slots;
  w->mask = ncap - 1;
  return 0;
}

/* The slot of `v`: its entry, or the free slot where it goes. Needs memo_reserve first. */
static memo_slot *memo_find(writer *w, const ffk_any *v, uint64_t h) {
  size_t j = (size_t)h & w->mask;
  for (;;) {
    memo_slot *s = &w->slots[j];
    if (s->index == SLOT_EMPTY || (s->hash == h && memo_equal(&s->key, v))) return s;
    j = (j + 1) & w->mask;
  }
}

static void memo_put(writer *w, memo_slot *s, const ffk_any *v, uint64_t h, int64_t index) {
  s->key = *v;
  ffk_any_retain(&s->key);
  s->hash = h;
  s->index = index;
  ++w->count;
}

static void memo_free(writer *w) {
  if (w->slots == NULL) return;
  for (size_t i = 0; i <= w->mask; ++i)
    if (w->slots[i].index != SLOT_EMPTY) ffk_any_release(&w->slots[i].key);
  ffk_mem_free(w->slots);
  w->slots = NULL;
}

/* ---- Errors --------------------------------------------------------------------------- */

static const char *kind_noun(int32_t type_index) {
  switch (type_index) {
    case FFK_TYPE_LIST: return "a List";
    case FFK_TYPE_DICT: return "a Dict";
    case FFK_TYPE_ARRAY: return "an Array";
    case FFK_TYPE_TUPLE: return "a Tuple";
    case FFK_TYPE_MAP: return "a Map";
    default: return NULL;
  }
}

/*
 * `obj`, on the stack, was met again. tvm_ffi tracks Lists and Dicts only, so its message
 * names the first List or Dict on the cycle; a cycle through objects alone names the first
 * object's type.
 */
static int cycle_error(const writer *w, const ffk_object *obj) {
  int from = 0;
  for (int i = w->depth - 1; i >= 0; --i)
    if (w->stack[i] == obj) {
      from = i;
      break;
    }
  for (int i = from; i < w->depth; ++i) {
    int32_t t = w->stack[i]->type_index;
    if (t == FFK_TYPE_LIST || t == FFK_TYPE_DICT)
      return ffk_error_set(FFK_ERR_VALUE, "Cycle detected during serialization: %s contains itself", kind_noun(t));
  }
  const char *noun = kind_noun(obj->type_index);
  if (noun != NULL)
    return ffk_error_set(FFK_ERR_VALUE, "Cycle detected during serialization: %s contains itself", noun);
  return ffk_error_set(FFK_ERR_VALUE,
                       "Cycle detected during serialization: a `%s` object reaches itself through its fields",
                       ffk_type_key(obj->type_index));
}

static int cannot_serialize(const ffk_any *v) {
  return ffk_error_set(FFK_ERR_TYPE, "cannot serialize `%s`", ffk_type_key(v->type_index));
}

/* ---- Plain JSON data (metadata, what a __data_to_json__ hook returns) ------------------ */

static int json_of_str(writer *w, const ffk_any *v, yyjson_mut_val **out) {
  const char *p;
  size_t n;
  if (ffk_any_as_str(v, &p, &n) != 0) return -1;
  size_t ok = ffk_utf8_valid_prefix(p, n);
  if (ok != n) return ffk_error_set(FFK_ERR_VALUE, "cannot write a str that is not valid UTF-8 (byte %zu) as JSON", ok);
  *out = yyjson_mut_strncpy(w->doc, p, n);
  return *out == NULL ? ffk_json__no_memory() : 0;
}

/*
 * `v` (borrowed) as plain JSON: None, bool, int, float, str, Array/List/Tuple of those,
 * Map/Dict with str keys. `what` names the value in errors ("metadata").
 */
static int json_of_plain(writer *w, const ffk_any *v, int depth, const char *what, yyjson_mut_val **out) {
  yyjson_mut_doc *doc = w->doc;
  *out = NULL;
  switch (v->type_index) {
    case FFK_TYPE_NONE: *out = yyjson_mut_null(doc); break;
    case FFK_TYPE_BOOL: *out = yyjson_mut_bool(doc, v->v_int != 0); break;
    case FFK_TYPE_INT: *out = yyjson_mut_sint(doc, v->v_int); break;
    case FFK_TYPE_FLOAT: *out = yyjson_mut_real(doc, v->v_float); break;
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_STRING: return json_of_str(w, v, out);
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_TUPLE:
    case FFK_TYPE_LIST: {
      if (depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
      ffk_array *snapshot = NULL;
      const ffk_array *a = (const ffk_array *)v->v_obj;
      if (v->type_index == FFK_TYPE_LIST) {
        if ((snapshot = ffk_list_to_array((ffk_list *)v->v_obj)) == NULL) return -1;
        a = snapshot;
      }
      yyjson_mut_val *arr = yyjson_mut_arr(doc);
      int rc = arr == NULL ? ffk_json__no_memory() : 0;
      const ffk_any *items = ffk_array_items_borrow(a);
      for (int64_t i = 0; rc == 0 && i < ffk_array_size(a); ++i) {
        yyjson_mut_val *item;
        rc = json_of_plain(w, &items[i], depth + 1, what, &item);
        if (rc == 0 && !yyjson_mut_arr_append(arr, item)) rc = ffk_json__no_memory();
      }
      if (snapshot != NULL) ffk_object_release(&snapshot->header);
      if (rc != 0) return -1;
      *out = arr;
      return 0;
    }
    case FFK_TYPE_MAP:
    case FFK_TYPE_DICT: {
      if (depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
      ffk_map *snapshot = NULL;
      const ffk_map *m = (const ffk_map *)v->v_obj;
      if (v->type_index == FFK_TYPE_DICT) {
        if ((snapshot = ffk_dict_to_map((ffk_dict *)v->v_obj)) == NULL) return -1;
        m = snapshot;
      }
      yyjson_mut_val *obj = yyjson_mut_obj(doc);
      int rc = obj == NULL ? ffk_json__no_memory() : 0;
      int64_t pos = 0;
      const ffk_any *key, *val;
      while (rc == 0 && ffk_map_next(m, &pos, &key, &val)) {
        if (key->type_index != FFK_TYPE_SMALL_STR && key->type_index != FFK_TYPE_STRING) {
          rc = ffk_error_set(FFK_ERR_TYPE, "%s must be JSON data: a key of type `%s` is not a str", what,
                             ffk_any_type_name(key));
          break;
        }
        yyjson_mut_val *k, *x;
        rc = json_of_str(w, key, &k);
        if (rc == 0) rc = json_of_plain(w, val, depth + 1, what, &x);
        if (rc == 0 && !yyjson_mut_obj_add(obj, k, x)) rc = ffk_json__no_memory();
      }
      if (snapshot != NULL) ffk_object_release(&snapshot->header);
      if (rc != 0) return -1;
      *out = obj;
      return 0;
    }
    default:
      return ffk_error_set(FFK_ERR_TYPE, "%s must be JSON data: a value of type `%s` is not JSON-able", what,
                           ffk_any_type_name(v));
  }
  return *out == NULL ? ffk_json__no_memory() : 0;
}

/* ---- Nodes ---------------------------------------------------------------------------- */

static int write_value(writer *w, const ffk_any *v, int64_t *out);

/* Appends {"type": key, "data": data} (no "data" when data is NULL) and returns its index in *out. */
static int append_node(writer *w, const char *key, yyjson_mut_val *data, int64_t *out) {
  yyjson_mut_val *node = yyjson_mut_obj(w->doc);
  if (node == NULL || !yyjson_mut_obj_add_str(w->doc, node, "type", key)) return ffk_json__no_memory();
  if (data != NULL && !yyjson_mut_obj_add_val(w->doc, node, "data", data)) return ffk_json__no_memory();
  if (!yyjson_mut_arr_append(w->nodes, node)) return ffk_json__no_memory();
  *out = w->nnodes++;
  return 0;
}

static const char k_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding (RFC 4648, as tvm_ffi writes bytes). */
static yyjson_mut_val *base64_of(writer *w, const unsigned char *p, size_t n) {
  size_t len = (n + 2) / 3 * 4;
  if (len + 1 > w->scratch_cap) {
    char *grown = ffk_mem_realloc(w->scratch, len + 1);
    if (grown == NULL) return NULL;
    w->scratch = grown;
    w->scratch_cap = len + 1;
  }
  char *o = w->scratch;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t x = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    *o++ = k_b64[x >> 18], *o++ = k_b64[(x >> 12) & 63], *o++ = k_b64[(x >> 6) & 63], *o++ = k_b64[x & 63];
  }
  if (n - i == 1) {
    uint32_t x = (uint32_t)p[i] << 16;
    *o++ = k_b64[x >> 18], *o++ = k_b64[(x >> 12) & 63], *o++ = '=', *o++ = '=';
  } else if (n - i == 2) {
    uint32_t x = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
    *o++ = k_b64[x >> 18], *o++ = k_b64[(x >> 12) & 63], *o++ = k_b64[(x >> 6) & 63], *o++ = '=';
  }
  return yyjson_mut_strncpy(w->doc, w->scratch, len);
}

/* A value without children: its "data" in *data (NULL for None). */
static int leaf_data(writer *w, const ffk_any *v, ffk_json_kind kind, yyjson_mut_val **data) {
  yyjson_mut_doc *doc = w->doc;
  *data = NULL;
  switch (kind) {
    case FFK_JSON_NONE: return 0;
    case FFK_JSON_BOOL: *data = yyjson_mut_bool(doc, v->v_int != 0); break;
    case FFK_JSON_INT: *data = yyjson_mut_sint(doc, v->v_int); break;
    case FFK_JSON_FLOAT: *data = yyjson_mut_real(doc, v->v_float); break;
    case FFK_JSON_DTYPE: {
      char text[FFK_DTYPE_STR_MAX];
      size_t n = ffk_dtype_format(v->v_dtype, text, sizeof text);
      *data = yyjson_mut_strncpy(doc, text, n);
      break;
    }
    case FFK_JSON_DEVICE: {
      int64_t pair[2] = {ffk_device_type(v->v_device), v->v_device.device_id};
      *data = yyjson_mut_arr_with_sint64(doc, pair, 2);
      break;
    }
    case FFK_JSON_STR: return json_of_str(w, v, data);
    case FFK_JSON_BYTES: {
      const char *p;
      size_t n;
      if (ffk_any_as_bytes(v, &p, &n) != 0) return -1;
      *data = base64_of(w, (const unsigned char *)p, n);
      break;
    }
    case FFK_JSON_SHAPE: {
      const ffk_shape *s = (const ffk_shape *)v->v_obj;
      *data = yyjson_mut_arr_with_sint64(doc, ffk_shape_data_borrow(s), ffk_shape_size(s));
      break;
    }
    default: return cannot_serialize(v);
  }
  return *data == NULL ? ffk_json__no_memory() : 0;
}

/* The elements of an Array, Tuple or List as node indices. */
static int sequence_data(writer *w, const ffk_any *v, yyjson_mut_val **data) {
  ffk_array *snapshot = NULL;
  const ffk_array *a = (const ffk_array *)v->v_obj;
  if (v->type_index == FFK_TYPE_LIST) {
    if ((snapshot = ffk_list_to_array((ffk_list *)v->v_obj)) == NULL) return -1;
    a = snapshot;
  }
  yyjson_mut_val *arr = yyjson_mut_arr(w->doc);
  int rc = arr == NULL ? ffk_json__no_memory() : 0;
  const ffk_any *items = ffk_array_items_borrow(a);
  for (int64_t i = 0; rc == 0 && i < ffk_array_size(a); ++i) {
    int64_t index;
    rc = write_value(w, &items[i], &index);
    if (rc == 0 && !yyjson_mut_arr_add_sint(w->doc, arr, index)) rc = ffk_json__no_memory();
  }
  if (snapshot != NULL) ffk_object_release(&snapshot->header);
  *data = arr;
  return rc;
}

/* The entries of a Map or Dict as [key, value, key, value...] node indices, in iteration order. */
static int mapping_data(writer *w, const ffk_any *v, yyjson_mut_val **data) {
  ffk_map *snapshot = NULL;
  const ffk_map *m = (const ffk_map *)v->v_obj;
  if (v->type_index == FFK_TYPE_DICT) {
    if ((snapshot = ffk_dict_to_map((ffk_dict *)v->v_obj)) == NULL) return -1;
    m = snapshot;
  }
  yyjson_mut_val *arr = yyjson_mut_arr(w->doc);
  int rc = arr == NULL ? ffk_json__no_memory() : 0;
  int64_t pos = 0;
  const ffk_any *key, *val;
  while (rc == 0 && ffk_map_next(m, &pos, &key, &val)) {
    int64_t ki, vi;
    rc = write_value(w, key, &ki);
    if (rc == 0) rc = write_value(w, val, &vi);
    if (rc == 0 && (!yyjson_mut_arr_add_sint(w->doc, arr, ki) || !yyjson_mut_arr_add_sint(w->doc, arr, vi)))
      rc = ffk_json__no_memory();
  }
  if (snapshot != NULL) ffk_object_release(&snapshot->header);
  *data = arr;
  return rc;
}

/*
 * Field `f` of `o`: read-only fields in place (borrowed: *owned false; nothing rewrites
 * them once the object is published), writable ones through ffk_field_get (a new
 * reference, *owned true), so a concurrent write is seen whole or not at all.
 */
static int read_field(const ffk_field_info *f, const ffk_object *o, ffk_any *out, bool *owned) {
  *owned = (f->flags & FFK_FIELD_WRITABLE) != 0;
  if (*owned) return ffk_field_get(f, o, out);
  const char *at = (const char *)o + f->offset;
  *out = ffk_any_none();
  switch (f->storage) {
    case FFK_FIELD_STORAGE_INT: *out = ffk_any_int(*(const int64_t *)at); break;
    case FFK_FIELD_STORAGE_FLOAT: *out = ffk_any_float(*(const double *)at); break;
    case FFK_FIELD_STORAGE_BOOL: *out = ffk_any_bool(*(const bool *)at); break;
    case FFK_FIELD_STORAGE_OBJECT: {
      ffk_object *x = *(ffk_object *const *)at;
      if (x != NULL) {
        out->type_index = x->type_index;
        out->v_obj = x;
      }
      break;
    }
    default: ffk_any__copy(out, (const ffk_any *)at); break;
  }
  return 0;
}

/* Whether a field is written inline (a JSON scalar) rather than as a node index. */
static bool field_is_inline(const ffk_field_info *f) {
  return f->storage == FFK_FIELD_STORAGE_INT || f->storage == FFK_FIELD_STORAGE_FLOAT ||
         f->storage == FFK_FIELD_STORAGE_BOOL || f->schema->type_index == FFK_TYPE_DATATYPE;
}

/* A reflected object's fields: {"name": inline value or node index, ...} in field order. */
static int object_data(writer *w, const ffk_any *v, yyjson_mut_val **data) {
  yyjson_mut_doc *doc = w->doc;
  const ffk_object *o = v->v_obj;
  yyjson_mut_val *obj = yyjson_mut_obj(doc);
  *data = obj;
  if (obj == NULL) return ffk_json__no_memory();
  int32_t nfields = ffk_type_num_fields(v->type_index);
  for (int32_t i = 0; i < nfields; ++i) {
    const ffk_field_info *f = ffk_type_field_at(v->type_index, i);
    if (f == NULL) return -1;
    ffk_any x;
    bool owned;
    if (read_field(f, o, &x, &owned) != 0) return -1;
    yyjson_mut_val *fv = NULL;
    int rc = 0;
    if (field_is_inline(f)) {
      switch (x.type_index) {
        case FFK_TYPE_INT: fv = yyjson_mut_sint(doc, x.v_int); break;
        case FFK_TYPE_FLOAT: fv = yyjson_mut_real(doc, x.v_float); break;
        case FFK_TYPE_BOOL: fv = yyjson_mut_bool(doc, x.v_int != 0); break;
        case FFK_TYPE_DATATYPE: {
          char text[FFK_DTYPE_STR_MAX];
          size_t n = ffk_dtype_format(x.v_dtype, text, sizeof text);
          fv = yyjson_mut_strncpy(doc, text, n);
          break;
        }
        default: fv = yyjson_mut_null(doc); break; /* a dtype field never set */
      }
      if (fv == NULL) rc = ffk_json__no_memory();
    } else {
      int64_t index;
      rc = write_value(w, &x, &index);
      if (rc == 0 && (fv = yyjson_mut_sint(doc, index)) == NULL) rc = ffk_json__no_memory();
    }
    if (owned) ffk_any_release(&x);
    if (rc != 0) return -1;
    if (!yyjson_mut_obj_add(obj, yyjson_mut_str(doc, f->name), fv)) return ffk_json__no_memory();
  }
  return 0;
}

/*
 * How an object that is not a built-in value is written: by its type's __data_to_json__
 * hook (*hook set), else field by field when reflection made it (*hook NULL); else a
 * TypeError.
 */
static int object_kind(writer *w, const ffk_any *v, ffk_function **hook) {
  int found = ffk_json__hook(&w->hooks, v->type_index, hook);
  if (found != 0) return found < 0 ? -1 : 0;
  if (ffk_type_is_reflected(v->type_index)) {
    if (ffk_object_is_reflection_made(v->v_obj)) return 0;
    return ffk_error_set(FFK_ERR_TYPE,
                         "cannot serialize `%s`: its objects are not made by reflection and its type has no `%s` hook",
                         ffk_type_key(v->type_index), FFK_ATTR_DATA_TO_JSON);
  }
  return cannot_serialize(v);
}

static int write_value(writer *w, const ffk_any *v, int64_t *out) {
  if (memo_reserve(w) != 0) return -1;
  uint64_t h = memo_hash(v);
  memo_slot *s = memo_find(w, v, h);
  if (s->index >= 0) {
    *out = s->index;
    return 0;
  }
  if (s->index == IN_PROGRESS) return cycle_error(w, v->v_obj);

  ffk_json_kind kind = ffk_json__kind_of_value(v->type_index);
  if (kind == FFK_JSON_OBJECT && ffk_any_is_object(v) && ffk_enum_is_member(v->v_obj)) {
    /* An enum member: its type key and its str index (an IntEnum's: its int index), as
       tvm_ffi writes it; the reader returns the registered singleton. */
    const ffk_enum_obj *e = (const ffk_enum_obj *)v->v_obj;
    yyjson_mut_val *data;
    if (ffk_enum_kind_of(v->type_index) == FFK_ENUM_INT)
      data = yyjson_mut_sint(w->doc, e->int_index);
    else if (e->str_index == NULL)
      return ffk_error_set(FFK_ERR_VALUE, "cannot serialize a `%s` enum member without a str index",
                           ffk_type_key(v->type_index));
    else
      data = yyjson_mut_strncpy(w->doc, e->str_index->data, e->str_index->size);
    if (data == NULL) return ffk_json__no_memory();
    int64_t index;
    if (append_node(w, ffk_type_key(v->type_index), data, &index) != 0) return -1;
    memo_put(w, s, v, h, index);
    *out = index;
    return 0;
  }
  ffk_function *hook = NULL;
  if (kind == FFK_JSON_OBJECT && object_kind(w, v, &hook) != 0) return -1;
  const char *key = kind == FFK_JSON_OBJECT ? ffk_type_key(v->type_index) : ffk_json__kind_key(kind);
  yyjson_mut_val *data = NULL;
  int64_t index;
  bool walks = kind == FFK_JSON_ARRAY || kind == FFK_JSON_TUPLE || kind == FFK_JSON_LIST || kind == FFK_JSON_MAP ||
               kind == FFK_JSON_DICT || (kind == FFK_JSON_OBJECT && hook == NULL);
  if (!walks) {
    if (hook != NULL) {
      ffk_any result = ffk_any_none();
      if (ffk_function_call(hook, v, 1, &result) != 0) return -1;
      int rc = json_of_plain(w, &result, w->depth, "the data a `__data_to_json__` hook returns", &data);
      ffk_any_release(&result);
      if (rc != 0) return -1;
    } else if (leaf_data(w, v, kind, &data) != 0) {
      return -1;
    }
    if (append_node(w, key, data, &index) != 0) return -1;
    memo_put(w, s, v, h, index);
    *out = index;
    return 0;
  }

  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  memo_put(w, s, v, h, IN_PROGRESS);
  w->stack[w->depth++] = v->v_obj;
  int rc;
  if (kind == FFK_JSON_MAP || kind == FFK_JSON_DICT)
    rc = mapping_data(w, v, &data);
  else if (kind == FFK_JSON_OBJECT)
    rc = object_data(w, v, &data);
  else
    rc = sequence_data(w, v, &data);
  --w->depth;
  if (rc != 0 || append_node(w, key, data, &index) != 0) return -1;
  memo_find(w, v, h)->index = index; /* the table may have grown meanwhile */
  *out = index;
  return 0;
}

/* ---- The document --------------------------------------------------------------------- */

/*
 * The document as a str in *out, in tvm_ffi's escapes: yyjson writes a control character as
 * \u001F and DEL raw, tvm_ffi as \u001f and \u007f. Outside strings JSON text holds no
 * backslash and no DEL, so a plain scan that steps over each escape is exact. `text` (len
 * bytes) is the writer's own buffer and may be changed in place.
 */
static int finish_text(char *text, size_t len, ffk_any *out) {
  size_t ndel = 0;
  for (const char *p = text; (p = memchr(p, 0x7f, (size_t)(text + len - p))) != NULL; ++p) ++ndel;
  char *buf = text;
  if (ndel != 0 && (buf = ffk_mem_alloc(len + 5 * ndel)) == NULL) return -1;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    char c = text[i];
    if (c == '\\' && i + 1 < len) {
      size_t n = text[i + 1] == 'u' && i + 6 <= len ? 6 : 2;
      for (size_t k = 0; k < n; ++k) {
        char e = text[i + k];
        buf[o++] = k >= 2 && e >= 'A' && e <= 'F' ? (char)(e - 'A' + 'a') : e;
      }
      i += n;
    } else if (c == 0x7f) {
      memcpy(buf + o, "\\u007f", 6);
      o += 6;
      ++i;
    } else {
      buf[o++] = c;
      ++i;
    }
  }
  int rc = ffk_any_str(buf, o, out);
  if (buf != text) ffk_mem_free(buf);
  return rc;
}

static int check_metadata(const ffk_any *metadata) {
  int32_t t = metadata->type_index;
  if (t == FFK_TYPE_MAP || t == FFK_TYPE_DICT) return 0;
  return ffk_error_set(FFK_ERR_TYPE, "metadata must be a Map or Dict with str keys, got `%s`",
                       ffk_any_type_name(metadata));
}

int ffk_to_json_graph(const ffk_any *value, const ffk_any *metadata, ffk_any *out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "to_json_graph: the output is NULL");
  *out = ffk_any_none();
  if (value == NULL) return ffk_error_set(FFK_ERR_VALUE, "to_json_graph: the value is NULL");
  bool has_metadata = metadata != NULL && metadata->type_index != FFK_TYPE_NONE;
  if (has_metadata && check_metadata(metadata) != 0) return -1;

  ffk_any owned; /* a view argument (a raw C string) becomes a value the memo can keep */
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  writer *w = ffk_mem_calloc(1, sizeof *w);
  if (w == NULL) {
    ffk_any_release(&owned);
    return -1;
  }
  w->hooks.name = FFK_ATTR_DATA_TO_JSON;
  int rc = -1;
  char *text = NULL;
  size_t len = 0;
  yyjson_mut_val *root = NULL, *meta = NULL;
  int64_t root_index;
  if ((w->doc = yyjson_mut_doc_new(&ffk_json__alc)) == NULL || (w->nodes = yyjson_mut_arr(w->doc)) == NULL ||
      (root = yyjson_mut_obj(w->doc)) == NULL) {
    ffk_json__no_memory();
    goto done;
  }
  if (has_metadata && json_of_plain(w, metadata, 0, "metadata", &meta) != 0) goto done;
  if (write_value(w, &owned, &root_index) != 0) goto done;
  if (!yyjson_mut_obj_add_sint(w->doc, root, "root_index", root_index) ||
      !yyjson_mut_obj_add_val(w->doc, root, "nodes", w->nodes) ||
      (meta != NULL && !yyjson_mut_obj_add_val(w->doc, root, "metadata", meta))) {
    ffk_json__no_memory();
    goto done;
  }
  yyjson_mut_doc_set_root(w->doc, root);
  yyjson_write_err err;
  text = yyjson_mut_write_opts(w->doc, YYJSON_WRITE_ALLOW_INF_AND_NAN | YYJSON_WRITE_ESCAPE_SLASHES, &ffk_json__alc,
                               &len, &err);
  if (text == NULL) {
    if (err.code == YYJSON_WRITE_ERROR_MEMORY_ALLOCATION)
      ffk_json__no_memory();
    else
      ffk_error_set(FFK_ERR_RUNTIME, "writing the JSON graph failed: %s", err.msg);
    goto done;
  }
  rc = finish_text(text, len, out);

done:
  ffk_mem_free(text);
  memo_free(w);
  ffk_json__hooks_free(&w->hooks);
  ffk_mem_free(w->scratch);
  yyjson_mut_doc_free(w->doc);
  ffk_mem_free(w);
  ffk_any_release(&owned);
  if (rc != 0) ffk_any_release(out);
  return rc;
}

/*
 * Re-indents yyjson's pretty text (4 spaces a level) to `indent` spaces a level, and writes
 * an empty array or object as tvm_ffi does: the brackets on two lines, the closing one at
 * the indentation of the line that opens it ("[\n  ]"). Inside strings JSON text holds no
 * raw newline, so every line's leading spaces are indentation. With buf NULL it only
 * counts: returns the length of the result either way.
 */
static size_t reindent_into(const char *text, size_t len, int64_t indent, char *buf) {
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t spaces = 0;
    while (i + spaces < len && text[i + spaces] == ' ') ++spaces;
    size_t lead = spaces / 4 * (size_t)indent;
    for (size_t k = 0; k < lead; ++k, ++o)
      if (buf != NULL) buf[o] = ' ';
    i += spaces;
    bool in_str = false;
    for (; i < len && text[i] != '\n'; ++i) {
      char c = text[i];
      if (buf != NULL) buf[o] = c;
      ++o;
      if (in_str) {
        if (c == '\\' && i + 1 < len) {
          if (buf != NULL) buf[o] = text[i + 1];
          ++o, ++i;
        } else if (c == '"') {
          in_str = false;
        }
      } else if (c == '"') {
        in_str = true;
      } else if ((c == '[' || c == '{') && i + 1 < len && text[i + 1] == (c == '[' ? ']' : '}')) {
        if (buf != NULL) buf[o] = '\n';
        ++o;
        for (size_t k = 0; k < lead; ++k, ++o)
          if (buf != NULL) buf[o] = ' ';
      }
    }
    if (i < len) {
      if (buf != NULL) buf[o] = '\n';
      ++o, ++i;
    }
  }
  return o;
}

static char *reindent(const char *text, size_t len, int64_t indent, size_t *out_len) {
  size_t n = reindent_into(text, len, indent, NULL);
  char *buf = ffk_mem_alloc(n + 1);
  if (buf == NULL) return NULL;
  *out_len = reindent_into(text, len, indent, buf);
  return buf;
}

int ffk_json__stringify(const ffk_any *value, int64_t indent, ffk_any *out) {
  *out = ffk_any_none();
  if (indent > 64) return ffk_error_set(FFK_ERR_VALUE, "JSON indent %lld is larger than 64", (long long)indent);
  writer *w = ffk_mem_calloc(1, sizeof *w);
  if (w == NULL) return -1;
  int rc = -1;
  char *text = NULL, *spaced = NULL;
  size_t len = 0;
  yyjson_mut_val *root;
  if ((w->doc = yyjson_mut_doc_new(&ffk_json__alc)) == NULL) {
    ffk_json__no_memory();
    goto done;
  }
  if (json_of_plain(w, value, 0, "the value", &root) != 0) goto done;
  yyjson_mut_doc_set_root(w->doc, root);
  yyjson_write_err err;
  yyjson_write_flag flags = YYJSON_WRITE_ALLOW_INF_AND_NAN | YYJSON_WRITE_ESCAPE_SLASHES;
  if (indent >= 0) flags |= YYJSON_WRITE_PRETTY;
  text = yyjson_mut_write_opts(w->doc, flags, &ffk_json__alc, &len, &err);
  if (text == NULL) {
    if (err.code == YYJSON_WRITE_ERROR_MEMORY_ALLOCATION)
      ffk_json__no_memory();
    else
      ffk_error_set(FFK_ERR_RUNTIME, "writing JSON failed: %s", err.msg);
    goto done;
  }
  if (indent >= 0) {
    if ((spaced = reindent(text, len, indent, &len)) == NULL) goto done;
    rc = finish_text(spaced, len, out);
  } else {
    rc = finish_text(text, len, out);
  }

done:
  ffk_mem_free(text);
  ffk_mem_free(spaced);
  yyjson_mut_doc_free(w->doc);
  ffk_mem_free(w);
  return rc;
}
