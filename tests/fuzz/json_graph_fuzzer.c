/*
 * tests/fuzz/json_graph_fuzzer.c - JSON graph documents from arbitrary bytes
 * (ffk_from_json_graph, then ffk_to_json_graph on what it read).
 *
 * Properties:
 *  - reading any bytes either succeeds or fails with a ValueError, TypeError or
 *    RuntimeError (the depth limit) carrying a message, never anything else, and a failed
 *    read leaves its outputs None;
 *  - what reads writes back: ffk_to_json_graph of the value and metadata succeeds (a read
 *    value has no cycle; the depth limit aside, see check_rewrite), and the text it writes
 *    is a fixed point: it reads back, and writing that again gives the same bytes;
 *  - no object stays alive, on any path.
 * Two reflected types (fuzz.Node and its subtype fuzz.Leaf) give documents objects to
 * build: fields of every storage, an optional link to another node, defaults and a
 * required field. Two enum types (ffikit/enum.h: fuzz.Color, a plain Enum with RED and
 * GREEN, and fuzz.Level, an IntEnum with LOW = -1 and HIGH = 7) give nodes that must read
 * as their registered singletons (or fail with a ValueError / TypeError).
 */
#include "fuzz_common.h"

#include <ffikit/enum.h>
#include <ffikit/reflect.h>
#include <ffikit/serialization.h>

#include <stddef.h>

static const char *const kReadErrors[] = {FFK_ERR_VALUE, FFK_ERR_TYPE, FFK_ERR_RUNTIME, NULL};

typedef struct {
  ffk_object header;
  int64_t i;
  double f;
  bool b;
  ffk_any dt;
  ffk_string *s;
  ffk_any any;
  ffk_object *next;
  ffk_object *items;
} fuzz_node;

typedef struct {
  fuzz_node base;
  int64_t required;
} fuzz_leaf;

static void define_types(void) {
  static int defined;
  if (defined) return;
  const uint32_t D = FFK_FIELD_HAS_DEFAULT | FFK_FIELD_WRITABLE;
  ffk_field_def node_fields[] = {
      {"i", offsetof(fuzz_node, i), "int", D, {.type_index = FFK_TYPE_INT, .v_int = 0}, NULL},
      {"f", offsetof(fuzz_node, f), "float", D, {.type_index = FFK_TYPE_FLOAT, .v_float = 0.5}, NULL},
      {"b", offsetof(fuzz_node, b), "bool", D, {.type_index = FFK_TYPE_BOOL, .v_int = 0}, NULL},
      {"dt", offsetof(fuzz_node, dt), "dtype", D, {.type_index = FFK_TYPE_RAW_STR, .v_ptr = (void *)"int8"}, NULL},
      {"s", offsetof(fuzz_node, s), "str", D, {.type_index = FFK_TYPE_RAW_STR, .v_ptr = (void *)"s"}, NULL},
      {"any", offsetof(fuzz_node, any), "Any", D, {.type_index = FFK_TYPE_NONE}, NULL},
      {"next", offsetof(fuzz_node, next), "Optional<fuzz.Node>", D, {.type_index = FFK_TYPE_NONE}, NULL},
      {"items", offsetof(fuzz_node, items), "Optional<Array<int>>", D, {.type_index = FFK_TYPE_NONE}, NULL},
  };
  ffk_type_def node = {.key = "fuzz.Node",
                       .parent_index = FFK_TYPE_OBJECT,
                       .instance_size = sizeof(fuzz_node),
                       .fields = node_fields,
                       .nfields = (int32_t)(sizeof node_fields / sizeof node_fields[0])};
  int32_t node_index = ffk_type_define(&node);
  FUZZ_CHECK(node_index >= 0, "defining fuzz.Node failed");
  ffk_field_def leaf_fields[] = {
      {"required", offsetof(fuzz_leaf, required), "int", 0, {.type_index = FFK_TYPE_NONE}, NULL},
  };
  ffk_type_def leaf = {.key = "fuzz.Leaf",
                       .parent_index = node_index,
                       .instance_size = sizeof(fuzz_leaf),
                       .fields = leaf_fields,
                       .nfields = 1};
  FUZZ_CHECK(ffk_type_define(&leaf) >= 0, "defining fuzz.Leaf failed");
  int32_t color = ffk_enum_define("fuzz.Color", FFK_ENUM_PLAIN, NULL);
  int32_t level = ffk_enum_define("fuzz.Level", FFK_ENUM_INT, NULL);
  FUZZ_CHECK(color >= 0 && level >= 0, "defining the fuzz enums failed");
  int64_t low = -1, high = 7;
  FUZZ_CHECK(ffk_enum_add(color, "RED", NULL, NULL) == 0 && ffk_enum_add(color, "GREEN", NULL, NULL) == 0 &&
                 ffk_enum_add(level, "LOW", &low, NULL) == 0 && ffk_enum_add(level, "HIGH", &high, NULL) == 0,
             "adding the fuzz enum members failed");
  defined = 1;
}

/* Writes value and metadata; the text must be a fixed point of reading and writing. */
static void check_rewrite(const ffk_any *value, const ffk_any *metadata) {
  ffk_any text;
  int rc = ffk_to_json_graph(value, metadata, &text);
  if (rc != 0 && ffk_error_matches(FFK_ERR_RUNTIME)) {
    /* The depth limit: a node shared by a shallow and a deep path is first met by the
       reader in document order and by the writer in field (or surviving entry) order, so
       one walk may go deeper than the other. */
    ffk_error_clear();
    return;
  }
  if (rc != 0) {
    ffk_error *e = ffk_error_fetch();
    FUZZ_CHECK(0, "a value that was read does not write: %s: %s", e ? ffk_error_kind(e) : "?",
               e ? ffk_error_message(e) : "?");
  }
  const char *p;
  size_t n;
  FUZZ_CHECK(ffk_any_as_str(&text, &p, &n) == 0, "the document is not a str");
  ffk_any again, again_meta;
  rc = ffk_from_json_graph(p, n, &again, &again_meta);
  if (rc != 0) {
    ffk_error *e = ffk_error_fetch();
    FUZZ_CHECK(0, "a written document does not read: %s: %s\n  %.*s", e ? ffk_error_kind(e) : "?",
               e ? ffk_error_message(e) : "?", (int)(n < 2000 ? n : 2000), p);
  }
  ffk_any text2;
  FUZZ_CHECK(ffk_to_json_graph(&again, &again_meta, &text2) == 0, "a value read from a written document does not write");
  const char *p2;
  size_t n2;
  FUZZ_CHECK(ffk_any_as_str(&text2, &p2, &n2) == 0, "the second document is not a str");
  FUZZ_CHECK(n == n2 && memcmp(p, p2, n) == 0, "writing is not a fixed point:\n  %.*s\n  %.*s", (int)(n < 2000 ? n : 2000),
             p, (int)(n2 < 2000 ? n2 : 2000), p2);
  ffk_any_release(&text2);
  ffk_any_release(&again);
  ffk_any_release(&again_meta);
  ffk_any_release(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  define_types();
  int64_t live_before = ffk_debug_live_objects(-1);
  ffk_any value, metadata;
  int rc = ffk_from_json_graph((const char *)data, size, &value, &metadata);
  if (rc != 0) {
    FUZZ_CHECK(value.type_index == FFK_TYPE_NONE && metadata.type_index == FFK_TYPE_NONE,
               "a failed read left its outputs set");
    fuzz_expect_error("ffk_from_json_graph", kReadErrors);
  } else {
    fuzz_expect_no_error("ffk_from_json_graph");
    /* Metadata that is not a Map is read but is not metadata the writer takes. */
    bool map = metadata.type_index == FFK_TYPE_MAP || metadata.type_index == FFK_TYPE_NONE;
    ffk_any none = ffk_any_none();
    check_rewrite(&value, map ? &metadata : &none);
    fuzz_expect_no_error("the rewrite");
    ffk_any_release(&value);
    ffk_any_release(&metadata);
  }
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
