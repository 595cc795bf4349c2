/*
 * serialization_internal.h - what the JSON graph writer (serialization_write.c) and reader
 * (serialization_read.c) share: the allocator they hand yyjson, the node type keys, the
 * per-walk cache of type hooks, and the errors both raise.
 *
 * Invariants: every byte yyjson allocates goes through ffk_mem_* (so the failing
 * allocator of ffikit/debug.h reaches it and a test sees every leak); a hook cache owns a
 * reference to each hook it holds until ffk_json__hooks_free.
 */
#ifndef FFIKIT_SERIALIZATION_INTERNAL_H
#define FFIKIT_SERIALIZATION_INTERNAL_H

#include "containers_internal.h"
#include "serialization_yyjson.h"

#include <ffikit/function.h>

/* yyjson's allocator: ffk_mem_alloc / ffk_mem_realloc / ffk_mem_free. */
extern const yyjson_alc ffk_json__alc;

/* The kinds of value that have a node type of their own (the others are objects by type key). */
typedef enum {
  FFK_JSON_NONE,
  FFK_JSON_BOOL,
  FFK_JSON_INT,
  FFK_JSON_FLOAT,
  FFK_JSON_DTYPE,
  FFK_JSON_DEVICE,
  FFK_JSON_STR,
  FFK_JSON_BYTES,
  FFK_JSON_SHAPE,
  FFK_JSON_ARRAY,
  FFK_JSON_LIST,
  FFK_JSON_MAP,
  FFK_JSON_DICT,
  FFK_JSON_TUPLE,
  FFK_JSON_OBJECT, /* any other type key */
} ffk_json_kind;

/* The node type key the writer gives a kind (tvm_ffi's spelling: "ffi.Array"), or NULL for FFK_JSON_OBJECT. */
const char *ffk_json__kind_key(ffk_json_kind kind);

/* The kind a node's type key names: both spellings of the containers ("ffi.Array", "ffikit.Array"). */
ffk_json_kind ffk_json__kind_of_key(const char *key, size_t len);

/* The kind of a value (by its type index; a SmallStr and a String are both FFK_JSON_STR). */
ffk_json_kind ffk_json__kind_of_value(int32_t type_index);

/* A per-walk cache of one type attribute (a hook) by type index, so a tree of 10,000
   objects of one type looks the attribute up once. */
typedef struct {
  int32_t type_index;
  ffk_any hook; /* owned; None when the type has none */
} ffk_json_hook_entry;

typedef struct {
  const char *name; /* FFK_ATTR_DATA_TO_JSON or FFK_ATTR_DATA_FROM_JSON */
  ffk_json_hook_entry *entries;
  int32_t n, cap;
} ffk_json_hooks;

/*
 * The hook `c->name` of type `type_index`: 1 with *out borrowed from the cache (a Function,
 * valid until ffk_json__hooks_free), 0 when the type has none, -1 with a MemoryError, or a
 * TypeError when the attribute is not a Function.
 */
int ffk_json__hook(ffk_json_hooks *c, int32_t type_index, ffk_function **out);
void ffk_json__hooks_free(ffk_json_hooks *c);

/* MemoryError after a yyjson call returned NULL (ffk_mem_alloc already said why). Returns -1. */
int ffk_json__no_memory(void);


/*
 * Plain JSON (ffi.json.Parse / ffi.json.Stringify): text to values (objects become Maps
 * with str keys, arrays Arrays; ValueError "not JSON: ..." naming the byte), and values
 * (None, bool, int, float, str, Array/List/Tuple, Map/Dict with str keys) to text, compact
 * when indent < 0, else with `indent` spaces a level (at most 64). *out an owned value /
 * str; 0, or -1 with *out None (TypeError for a value that is not JSON-able, RuntimeError
 * for nesting deeper than FFK_STRUCTURAL_MAX_DEPTH, MemoryError).
 */
int ffk_json__parse(const char *text, size_t len, ffk_any *out);
int ffk_json__stringify(const ffk_any *value, int64_t indent, ffk_any *out);

#endif /* FFIKIT_SERIALIZATION_INTERNAL_H */
