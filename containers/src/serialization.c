/*
 * serialization.c - what the JSON graph writer and reader share (ffikit/serialization.h):
 * yyjson's allocator, the node type keys, the hook cache and the common errors.
 *
 * The format is TVM-FFI's JSON graph; the writer is serialization_write.c and the reader
 * serialization_read.c. Node type keys are tvm_ffi's ("ffi.Array", "DataType"), so a
 * document reads in either library; the reader also takes ffikit's own keys for the
 * built-in types ("ffikit.Array"), and ffikit's Tuple, which tvm_ffi lacks, is written as
 * "ffikit.Tuple".
 */
#include "serialization_internal.h"

#include <ffikit/reflect.h>
#include <ffikit/structural.h>

#include <string.h>

/* ---- yyjson's allocator -------------------------------------------------------------- */

static void *alc_malloc(void *ctx, size_t size) {
  (void)ctx;
  return ffk_mem_alloc(size);
}

static void *alc_realloc(void *ctx, void *ptr, size_t old_size, size_t size) {
  (void)ctx, (void)old_size;
  return ffk_mem_realloc(ptr, size);
}

static void alc_free(void *ctx, void *ptr) {
  (void)ctx;
  ffk_mem_free(ptr);
}

const yyjson_alc ffk_json__alc = {alc_malloc, alc_realloc, alc_free, NULL};

/* ---- Node type keys ------------------------------------------------------------------- */

/* A key and its length, so matching a node's key costs no strlen. */
typedef struct {
  const char *text;
  size_t len;
} key_text;
#define KEY(s) {s, sizeof(s) - 1}

static const struct {
  ffk_json_kind kind;
  key_text tvm_key;    /* what the writer writes */
  key_text ffikit_key; /* also read; {NULL, 0} when the same */
} k_kinds[] = {
    {FFK_JSON_NONE, KEY("None"), {NULL, 0}},
    {FFK_JSON_BOOL, KEY("bool"), {NULL, 0}},
    {FFK_JSON_INT, KEY("int"), {NULL, 0}},
    {FFK_JSON_FLOAT, KEY("float"), {NULL, 0}},
    {FFK_JSON_DTYPE, KEY("DataType"), {NULL, 0}},
    {FFK_JSON_DEVICE, KEY("Device"), {NULL, 0}},
    {FFK_JSON_STR, KEY("ffi.String"), KEY("ffikit.String")},
    {FFK_JSON_BYTES, KEY("ffi.Bytes"), KEY("ffikit.Bytes")},
    {FFK_JSON_SHAPE, KEY("ffi.Shape"), KEY("ffikit.Shape")},
    {FFK_JSON_ARRAY, KEY("ffi.Array"), KEY("ffikit.Array")},
    {FFK_JSON_LIST, KEY("ffi.List"), KEY("ffikit.List")},
    {FFK_JSON_MAP, KEY("ffi.Map"), KEY("ffikit.Map")},
    {FFK_JSON_DICT, KEY("ffi.Dict"), KEY("ffikit.Dict")},
    {FFK_JSON_TUPLE, KEY("ffikit.Tuple"), KEY("ffi.Tuple")},
};
#define N_KINDS (sizeof k_kinds / sizeof k_kinds[0])

const char *ffk_json__kind_key(ffk_json_kind kind) {
  for (size_t i = 0; i < N_KINDS; ++i)
    if (k_kinds[i].kind == kind) return k_kinds[i].tvm_key.text;
  return NULL;
}

static bool key_is(const char *key, size_t len, key_text name) {
  return name.len == len && memcmp(key, name.text, len) == 0;
}

ffk_json_kind ffk_json__kind_of_key(const char *key, size_t len) {
  /* Every built-in key starts with one of these letters; a type key ("mylib.Point") usually not. */
  if (len == 0 || strchr("NbifD", key[0]) == NULL) return FFK_JSON_OBJECT;
  for (size_t i = 0; i < N_KINDS; ++i)
    if (key_is(key, len, k_kinds[i].tvm_key) || key_is(key, len, k_kinds[i].ffikit_key)) return k_kinds[i].kind;
  return FFK_JSON_OBJECT;
}

ffk_json_kind ffk_json__kind_of_value(int32_t type_index) {
  switch (type_index) {
    case FFK_TYPE_NONE: return FFK_JSON_NONE;
    case FFK_TYPE_BOOL: return FFK_JSON_BOOL;
    case FFK_TYPE_INT: return FFK_JSON_INT;
    case FFK_TYPE_FLOAT: return FFK_JSON_FLOAT;
    case FFK_TYPE_DATATYPE: return FFK_JSON_DTYPE;
    case FFK_TYPE_DEVICE: return FFK_JSON_DEVICE;
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_STRING: return FFK_JSON_STR;
    case FFK_TYPE_SMALL_BYTES:
    case FFK_TYPE_BYTES: return FFK_JSON_BYTES;
    case FFK_TYPE_SHAPE: return FFK_JSON_SHAPE;
    case FFK_TYPE_ARRAY: return FFK_JSON_ARRAY;
    case FFK_TYPE_LIST: return FFK_JSON_LIST;
    case FFK_TYPE_MAP: return FFK_JSON_MAP;
    case FFK_TYPE_DICT: return FFK_JSON_DICT;
    case FFK_TYPE_TUPLE: return FFK_JSON_TUPLE;
    default: return FFK_JSON_OBJECT;
  }
}

/* ---- Hooks ---------------------------------------------------------------------------- */

int ffk_json__hook(ffk_json_hooks *c, int32_t type_index, ffk_function **out) {
  *out = NULL;
  ffk_json_hook_entry *e = NULL;
  for (int32_t i = 0; i < c->n; ++i)
    if (c->entries[i].type_index == type_index) {
      e = &c->entries[i];
      break;
    }
  if (e == NULL) {
    ffk_any hook;
    int found = ffk_type_get_attr(type_index, c->name, &hook);
    if (found < 0) return -1;
    if (found && hook.type_index != FFK_TYPE_FUNCTION) {
      int rc = ffk_error_set(FFK_ERR_TYPE, "the `%s` attribute of `%s` must be a Function, got `%s`", c->name,
                             ffk_type_key(type_index), ffk_any_type_name(&hook));
      ffk_any_release(&hook);
      return rc;
    }
    if (c->n == c->cap) {
      int32_t cap = c->cap == 0 ? 4 : c->cap * 2;
      ffk_json_hook_entry *grown = ffk_mem_realloc(c->entries, (size_t)cap * sizeof *grown);
      if (grown == NULL) {
        ffk_any_release(&hook);
        return -1;
      }
      c->entries = grown;
      c->cap = cap;
    }
    e = &c->entries[c->n++];
    e->type_index = type_index;
    e->hook = hook; /* None when not found */
  }
  if (e->hook.type_index != FFK_TYPE_FUNCTION) return 0;
  *out = (ffk_function *)e->hook.v_obj;
  return 1;
}

void ffk_json__hooks_free(ffk_json_hooks *c) {
  for (int32_t i = 0; i < c->n; ++i) ffk_any_release(&c->entries[i].hook);
  ffk_mem_free(c->entries);
  c->entries = NULL;
  c->n = c->cap = 0;
}

/* ---- Errors --------------------------------------------------------------------------- */

int ffk_json__no_memory(void) {
  if (ffk_error_matches(FFK_ERR_MEMORY)) return -1;
  return ffk_error_set(FFK_ERR_MEMORY, "out of memory while converting a JSON graph");
}
