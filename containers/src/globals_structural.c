/*
 * globals_structural.c - tvm_ffi's structural and JSON global functions
 * (ffi.StructuralEqual, ffi.StructuralHash, ffi.GetFirstStructuralMismatch, ffi.DeepCopy,
 * ffi.Recursive{Eq,Lt,Le,Gt,Ge,Hash}, ffi.ToJSONGraph and its kin, ffi.json.Parse and
 * ffi.json.Stringify), registered when the library loads (init.c), over the functions of
 * ffikit/structural.h and ffikit/serialization.h.
 *
 * tvm_ffi's structural functions take two flags besides the values: map_free_vars and
 * skip_tensor_content. Both are read in one place, read_options(), into a
 * structural_options that every structural call receives; equal_with(), hash_with() and
 * mismatch_with() pass map_free_vars on to the walker (FFK_STRUCTURAL_MAP_FREE_VARS).
 * Tensors are compared by identity (ffikit/structural.h), never by content, so
 * skip_tensor_content changes nothing.
 *
 * The Recursive* functions order values as tvm_ffi does: None before anything; two
 * values of different types are a TypeError; ints, floats (NaN is a TypeError), strs and
 * bytes by value; Arrays, Lists and Shapes lexicographically; objects of one reflected type
 * field by field; Maps, Dicts and other objects only when equal (else a TypeError).
 */
#include "serialization_internal.h"

#include <ffikit/dict.h>
#include <ffikit/list.h>
#include <ffikit/reflect.h>
#include <ffikit/serialization.h>
#include <ffikit/shape.h>
#include <ffikit/structural.h>

#include <math.h>
#include <string.h>

/* ---- Structural equality and hashing --------------------------------------------- */

typedef struct {
  bool map_free_vars;       /* tvm_ffi: free variables on both sides may be mapped to each other */
  bool skip_tensor_content; /* tvm_ffi: compare tensors by shape/dtype only */
} structural_options;

/* The flags after the values (the signature has made them bools). */
static structural_options read_options(const ffk_any *flags) {
  structural_options o = {flags[0].v_int != 0, flags[1].v_int != 0};
  return o;
}

/* The walker's flags for the options (skip_tensor_content has no flag: see above). */
static uint32_t walk_flags(const structural_options *o) {
  return o->map_free_vars ? FFK_STRUCTURAL_MAP_FREE_VARS : 0;
}

static int equal_with(const structural_options *o, const ffk_any *a, const ffk_any *b) {
  return ffk_structural_equal_opts(a, b, walk_flags(o));
}

static int hash_with(const structural_options *o, const ffk_any *v, uint64_t *out) {
  return ffk_structural_hash_opts(v, walk_flags(o), out);
}

static int mismatch_with(const structural_options *o, const ffk_any *a, const ffk_any *b, ffk_object **lhs,
                         ffk_object **rhs) {
  return ffk_structural_first_mismatch_opts(a, b, walk_flags(o), lhs, rhs);
}

static int structural_equal(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Any, Any, bool, bool) */
  structural_options o = read_options(&args[2]);
  int rc = equal_with(&o, &args[0], &args[1]);
  if (rc < 0) return -1;
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static int structural_hash(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Any, bool, bool) */
  structural_options o = read_options(&args[1]);
  uint64_t h;
  if (hash_with(&o, &args[0], &h) != 0) return -1;
  *result = ffk_any_int((int64_t)h);
  return 0;
}

/* None when equal, else an Array of the two AccessPaths (tvm_ffi's pair). */
static int first_mismatch(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Any, Any, bool, bool) */
  structural_options o = read_options(&args[2]);
  ffk_object *lhs, *rhs;
  int rc = mismatch_with(&o, &args[0], &args[1], &lhs, &rhs);
  if (rc <= 0) return rc;
  ffk_any pair[2] = {ffk_any_object_steal(lhs), ffk_any_object_steal(rhs)};
  ffk_array *a = ffk_array_new_steal(pair, 2);
  if (a == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

static int deep_copy(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ffk_deep_copy(&args[0], result);
}

/* ---- Recursive comparison ---------------------------------------------------------- */

static int different_types(const ffk_any *a, const ffk_any *b) {
  return ffk_error_set(FFK_ERR_TYPE, "Cannot compare values of different types: %s vs %s", ffk_any_type_name(a),
                       ffk_any_type_name(b));
}

/* The kind of value for ordering: strs (inline or object) are one kind, bytes another. */
static int32_t order_kind(const ffk_any *v) {
  switch (v->type_index) {
    case FFK_TYPE_SMALL_STR:
    case FFK_TYPE_RAW_STR: return FFK_TYPE_STRING;
    case FFK_TYPE_SMALL_BYTES:
    case FFK_TYPE_BYTE_ARRAY_PTR: return FFK_TYPE_BYTES;
    case FFK_TYPE_TUPLE: return FFK_TYPE_ARRAY;
    default: return v->type_index;
  }
}

static int compare(const ffk_any *a, const ffk_any *b, int depth, int *out);

static int compare_bytes(const char *p, size_t n, const char *q, size_t m) {
  int c = memcmp(p, q, n < m ? n : m);
  return c != 0 ? (c < 0 ? -1 : 1) : (n < m ? -1 : n > m);
}

/* Lexicographic order of two element arrays. */
static int compare_items(const ffk_any *x, int64_t n, const ffk_any *y, int64_t m, int depth, int *out) {
  for (int64_t i = 0; i < n && i < m; ++i) {
    if (compare(&x[i], &y[i], depth + 1, out) != 0) return -1;
    if (*out != 0) return 0;
  }
  *out = n < m ? -1 : n > m;
  return 0;
}

/* Two objects of one reflected type, field by field in field order. */
static int compare_fields(const ffk_object *a, const ffk_object *b, int depth, int *out) {
  int32_t n = ffk_type_num_fields(a->type_index);
  *out = 0;
  for (int32_t i = 0; i < n && *out == 0; ++i) {
    const ffk_field_info *f = ffk_type_field_at(a->type_index, i);
    ffk_any x = ffk_any_none(), y = ffk_any_none();
    int rc = f == NULL ? -1 : ffk_field_get(f, a, &x);
    if (rc == 0) rc = ffk_field_get(f, b, &y);
    if (rc == 0) rc = compare(&x, &y, depth + 1, out);
    ffk_any_release(&x);
    ffk_any_release(&y);
    if (rc != 0) return -1;
  }
  return n < 0 ? -1 : 0;
}

static int compare_sequences(const ffk_any *a, const ffk_any *b, int depth, int *out) {
  ffk_array *sa = NULL, *sb = NULL; /* Lists are read through snapshots */
  const ffk_array *x = (const ffk_array *)a->v_obj, *y = (const ffk_array *)b->v_obj;
  if (a->type_index == FFK_TYPE_LIST && (x = sa = ffk_list_to_array((ffk_list *)a->v_obj)) == NULL) return -1;
  int rc = 0;
  if (b->type_index == FFK_TYPE_LIST && (y = sb = ffk_list_to_array((ffk_list *)b->v_obj)) == NULL) rc = -1;
  if (rc == 0) rc = compare_items(x->data, x->size, y->data, y->size, depth, out);
  if (sa != NULL) ffk_object_release((ffk_object *)sa);
  if (sb != NULL) ffk_object_release((ffk_object *)sb);
  return rc;
}

/* *out = -1, 0 or 1 as a orders before, with or after b. 0, or -1 (TypeError, depth). */
static int compare(const ffk_any *a, const ffk_any *b, int depth, int *out) {
  *out = 0;
  if (depth > FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  bool none_a = a->type_index == FFK_TYPE_NONE, none_b = b->type_index == FFK_TYPE_NONE;
  if (none_a || none_b) {
    *out = none_a == none_b ? 0 : none_a ? -1 : 1;
    return 0;
  }
  int32_t k = order_kind(a);
  if (k != order_kind(b)) return different_types(a, b);
  switch (k) {
    case FFK_TYPE_INT:
    case FFK_TYPE_BOOL: *out = a->v_int < b->v_int ? -1 : a->v_int > b->v_int; return 0;
    case FFK_TYPE_FLOAT:
      if (isnan(a->v_float) || isnan(b->v_float)) return ffk_error_set(FFK_ERR_TYPE, "Cannot order NaN values");
      *out = a->v_float < b->v_float ? -1 : a->v_float > b->v_float;
      return 0;
    case FFK_TYPE_STRING:
    case FFK_TYPE_BYTES: {
      const char *p, *q;
      size_t n, m;
      int (*view)(const ffk_any *, const char **, size_t *) = k == FFK_TYPE_STRING ? ffk_any_as_str : ffk_any_as_bytes;
      if (view(a, &p, &n) != 0 || view(b, &q, &m) != 0) return -1;
      *out = compare_bytes(p, n, q, m);
      return 0;
    }
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_LIST: return compare_sequences(a, b, depth, out);
    case FFK_TYPE_SHAPE: {
      const ffk_shape *x = (const ffk_shape *)a->v_obj, *y = (const ffk_shape *)b->v_obj;
      size_t n = x->size < y->size ? x->size : y->size, i = 0;
      while (i < n && x->data[i] == y->data[i]) ++i;
      *out = i < n ? (x->data[i] < y->data[i] ? -1 : 1) : (x->size < y->size ? -1 : x->size > y->size);
      return 0;
    }
    default: break;
  }
  if (ffk_any_is_object(a) && ffk_type_is_reflected(k) && a->v_obj != b->v_obj)
    return compare_fields(a->v_obj, b->v_obj, depth, out);
  /* Maps, Dicts, dtypes, Devices, other objects: equal, or not ordered */
  int eq = ffk_structural_equal(a, b);
  if (eq < 0) return -1;
  if (eq == 1) return 0;
  if (k == FFK_TYPE_MAP || k == FFK_TYPE_DICT) return ffk_error_set(FFK_ERR_TYPE, "Cannot order Map/Dict values");
  return ffk_error_set(FFK_ERR_TYPE, "Cannot order values of type %s", ffk_any_type_name(a));
}

/* The Recursive* orderings: which results of compare() mean true. */
enum { LT = 1, EQ = 2, GT = 4 };

static int ordering(int accept, const ffk_any *args, ffk_any *result) {
  int c;
  if (compare(&args[0], &args[1], 0, &c) != 0) return -1;
  *result = ffk_any_bool(accept & (c < 0 ? LT : c == 0 ? EQ : GT));
  return 0;
}

static int recursive_eq(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  int rc = ffk_structural_equal(&args[0], &args[1]);
  if (rc < 0) return -1;
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static int recursive_lt(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ordering(LT, args, result);
}

static int recursive_le(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ordering(LT | EQ, args, result);
}

static int recursive_gt(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ordering(GT, args, result);
}

static int recursive_ge(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ordering(GT | EQ, args, result);
}

static int recursive_hash(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  uint64_t h;
  if (ffk_structural_hash(&args[0], &h) != 0) return -1;
  *result = ffk_any_int((int64_t)h);
  return 0;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* ffi.ToJSONGraphString(value, metadata): the document as text; metadata None for none. */
static int to_json_graph_string(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ffk_to_json_graph(&args[0], &args[1], result);
}

/* ffi.ToJSONGraph(value, metadata): the document as JSON values (a Map). */
static int to_json_graph(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_any text;
  if (ffk_to_json_graph(&args[0], &args[1], &text) != 0) return -1;
  const char *p;
  size_t n;
  int rc = ffk_any_as_str(&text, &p, &n);
  if (rc == 0) rc = ffk_json__parse(p, n, result);
  ffk_any_release(&text);
  return rc;
}

static int from_json_graph_string(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (str) */
  const char *p;
  size_t n;
  if (ffk_any_as_str(&args[0], &p, &n) != 0) return -1;
  return ffk_from_json_graph(p, n, result, NULL);
}

/* ffi.FromJSONGraph(document): the document as JSON values (a Map, as ToJSONGraph gives). */
static int from_json_graph(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  if (args[0].type_index != FFK_TYPE_MAP && args[0].type_index != FFK_TYPE_DICT)
    return ffk_error_set(FFK_ERR_VALUE, "Invalid JSON Object Graph: expected a Map but got %s",
                         ffk_any_type_name(&args[0]));
  ffk_any text;
  if (ffk_json__stringify(&args[0], -1, &text) != 0) return -1;
  const char *p;
  size_t n;
  int rc = ffk_any_as_str(&text, &p, &n);
  if (rc == 0) rc = ffk_from_json_graph(p, n, result, NULL);
  ffk_any_release(&text);
  return rc;
}

static int json_parse(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (str) */
  const char *p;
  size_t n;
  if (ffk_any_as_str(&args[0], &p, &n) != 0) return -1;
  return ffk_json__parse(p, n, result);
}

/* ffi.json.Stringify(value, indent): compact when indent is None or 0, as in tvm_ffi. */
static int json_stringify(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Any, Optional<int>) */
  int64_t indent = args[1].type_index == FFK_TYPE_NONE ? 0 : args[1].v_int;
  if (indent < 0)
    return ffk_error_set(FFK_ERR_VALUE, "`ffi.json.Stringify`: indent %lld is negative", (long long)indent);
  return ffk_json__stringify(&args[0], indent == 0 ? -1 : indent, result);
}

/* ---- Registration ----------------------------------------------------------------- */

static const ffk_function_def k_globals[] = {
    {"ffi.StructuralEqual", "(Any, Any, bool, bool) -> bool", structural_equal},
    {"ffi.StructuralHash", "(Any, bool, bool) -> int", structural_hash},
    {"ffi.GetFirstStructuralMismatch", "(Any, Any, bool, bool) -> Optional<Array>", first_mismatch},
    {"ffi.DeepCopy", "(Any) -> Any", deep_copy},
    {"ffi.RecursiveEq", "(Any, Any) -> bool", recursive_eq},
    {"ffi.RecursiveLt", "(Any, Any) -> bool", recursive_lt},
    {"ffi.RecursiveLe", "(Any, Any) -> bool", recursive_le},
    {"ffi.RecursiveGt", "(Any, Any) -> bool", recursive_gt},
    {"ffi.RecursiveGe", "(Any, Any) -> bool", recursive_ge},
    {"ffi.RecursiveHash", "(Any) -> int", recursive_hash},
    {"ffi.ToJSONGraph", "(Any, Any) -> Any", to_json_graph},
    {"ffi.FromJSONGraph", "(Any) -> Any", from_json_graph},
    {"ffi.ToJSONGraphString", "(Any, Any) -> str", to_json_graph_string},
    {"ffi.FromJSONGraphString", "(str) -> Any", from_json_graph_string},
    {"ffi.json.Parse", "(str) -> Any", json_parse},
    {"ffi.json.Stringify", "(Any, Optional<int>) -> str", json_stringify},
};

int ffk_containers__register_structural_globals(void) {
  return ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]);
}
