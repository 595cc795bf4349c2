/*
 * globals_visit.c - tvm_ffi's structural visiting and rewriting globals over
 * ffikit/structural_visit.h: ffi.StructuralWalk, ffi.StructuralVisit, ffi.StructuralMap,
 * ffi.StructuralMutate, the ffi.StructuralVisitor* and ffi.StructuralMutator* methods,
 * ffi.VisitInterrupt, and ffi.StructuralKey / ffi.StructuralKeyEqual; and the types they
 * hand out (ffi.VisitInterrupt, ffi.StructuralVisitor, ffi.StructuralMutator,
 * ffi.StructuralKey), registered when the library loads (init.c).
 *
 * Callbacks arrive as tvm_ffi passes them: a sequence of (type_index, Function) entries
 * (and (type_index, Function, accepts_inplace_mode) for StructuralMutate), tried in order,
 * the first whose type matches the value running; type index -1 matches everything.
 *
 * A handle (the object a callback or a type's hook receives) points at the C engine only
 * while the call that made it runs; afterwards its methods are a RuntimeError.
 */
#include "structural_internal.h"

#include <ffikit/function.h>
#include <ffikit/structural_visit.h>

#include <stddef.h>
#include <string.h>

/* ---- Types -------------------------------------------------------------------------- */

typedef struct structural_key {
  ffk_object header;
  ffk_any key;
  int64_t hash_i64;
} structural_key;

static int32_t g_key_type = -1;

/* ffi.StructuralKey as a key of a Map or Dict: its cached structural hash, structural equality. */
static uint64_t structural_key_hash(const ffk_object *o) { return (uint64_t)((const structural_key *)o)->hash_i64; }

static bool structural_key_same(const ffk_object *a, const ffk_object *b) {
  const structural_key *x = (const structural_key *)a, *y = (const structural_key *)b;
  if (x->hash_i64 != y->hash_i64) return false;
  int eq = ffk_structural_equal(&x->key, &y->key);
  if (eq < 0) { /* only a raising __s_equal__ hook gets here: its keys are unequal */
    ffk_error_clear();
    return false;
  }
  return eq == 1;
}

static int define_types(void) {
  static const ffk_field_def key_fields[] = {
      {"key", offsetof(structural_key, key), "Any", 0, {0}, "The value compared and hashed structurally."},
      {"hash_i64", offsetof(structural_key, hash_i64), "int", 0, {0}, "Its structural hash (as an int64)."},
  };
  ffk_type_def key = {.key = "ffi.StructuralKey",
                      .parent_index = FFK_TYPE_OBJECT,
                      .instance_size = sizeof(structural_key),
                      .fields = key_fields,
                      .nfields = 2,
                      .doc = "A value with its structural hash cached, compared structurally."};
  if (ffk_containers__define_visit_types() != 0) return -1;
  if ((g_key_type = ffk_type_define(&key)) < 0) return -1;
  return ffk_type_set_key_ops(g_key_type, structural_key_hash, structural_key_same);
}

/* ---- Callback entries ----------------------------------------------------------------- */

typedef struct entry {
  int32_t type_index;  /* -1: any */
  ffk_function *fn;    /* borrowed from the entries' container, held by the caller */
  bool with_mode;      /* StructuralMutate: called with the inplace mode too */
  bool with_region;    /* StructuralWalk/Map: called with the region kind too */
} entry;

#define MATCH_CACHE 64

typedef struct entries {
  entry *items;
  int64_t size;
  bool plain_values; /* an entry may match a value that is not an object (int, float, str, ...) */
  /* The entry the types met last match (direct-mapped by type index): whether a value
     matches depends on its type alone, and asking the type registry whether an Array is
     an instance of the callback's class at every value was most of the matching cost. */
  struct {
    int32_t type_plus1; /* 0: an empty slot */
    int32_t at;         /* the first matching entry, or -1: none */
  } match[MATCH_CACHE];
} entries;

/* The entries of `seq` (a sequence of (int, Function[, bool]) sequences) appended to *out. */
static int read_entries(const char *api, const ffk_any *seq, int width, bool with_region, entries *out) {
  if (!is_sequence(seq->type_index))
    return ffk_error_set(FFK_ERR_TYPE, "%s: the callbacks must be a sequence of (type_index, callback) entries, got %s",
                         api, ffk_any_type_name(seq));
  seq_view s;
  if (seq_open(seq->v_obj, &s) != 0) return -1;
  entry *items = ffk_mem_alloc((size_t)(out->size + s.size + 1) * sizeof(entry));
  int rc = items == NULL ? -1 : 0;
  if (rc == 0 && out->size > 0) memcpy(items, out->items, (size_t)out->size * sizeof(entry));
  for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
    const ffk_any *e = &s.data[i];
    const ffk_array *tuple = is_sequence(e->type_index) && e->type_index != FFK_TYPE_LIST ? (const ffk_array *)e->v_obj : NULL;
    bool ok = tuple != NULL && tuple->size == width && tuple->data[0].type_index == FFK_TYPE_INT &&
              tuple->data[1].type_index == FFK_TYPE_FUNCTION && (width == 2 || tuple->data[2].type_index == FFK_TYPE_BOOL);
    if (!ok) {
      rc = ffk_error_set(FFK_ERR_TYPE, "%s: callback entry %lld must be a (type_index, callback%s) tuple, got %s", api,
                         (long long)i, width == 3 ? ", accepts_inplace_mode" : "", ffk_any_type_name(e));
      break;
    }
    entry *x = &items[out->size + i];
    x->type_index = (int32_t)tuple->data[0].v_int;
    if (x->type_index < FFK_TYPE_OBJECT_BEGIN || x->type_index == FFK_TYPE_STRING || x->type_index == FFK_TYPE_BYTES)
      out->plain_values = true; /* type_matches: -1, a POD type, or str / bytes (inline forms too) */
    x->fn = (ffk_function *)tuple->data[1].v_obj;
    x->with_mode = width == 3 && tuple->data[2].v_int != 0;
    x->with_region = with_region;
  }
  seq_close(&s); /* the Functions stay alive: the argument holds the container, which holds them */
  if (rc != 0) {
    ffk_mem_free(items);
    return -1;
  }
  ffk_mem_free(out->items);
  out->items = items;
  out->size += s.size;
  return 0;
}

/*
 * Whether a value of type `t` matches an entry for `want`, as tvm_ffi matches: -1 matches
 * everything, a str entry every str (inline or object) and a bytes entry all bytes, an
 * object type its subtypes. An inline str is not an object, so an Object entry leaves it.
 */
static bool type_matches(int32_t t, int32_t want) {
  if (want == -1 || want == t) return true;
  if (want == FFK_TYPE_STRING) return t == FFK_TYPE_SMALL_STR || t == FFK_TYPE_RAW_STR;
  if (want == FFK_TYPE_BYTES) return t == FFK_TYPE_SMALL_BYTES || t == FFK_TYPE_BYTE_ARRAY_PTR;
  return t >= FFK_TYPE_OBJECT_BEGIN && want >= FFK_TYPE_OBJECT_BEGIN && ffk_type_is_instance(t, want);
}

static FFK_NOINLINE const entry *find_entry_slow(entries *es, int32_t t, size_t slot);

/* The first entry matching v's type, or NULL: the cached answer inline, else find_entry_slow. */
static inline const entry *find_entry(entries *es, const ffk_any *v) {
  int32_t t = v->type_index;
  if (t < FFK_TYPE_OBJECT_BEGIN && !es->plain_values) return NULL; /* a walk's ints and strs, for object callbacks */
  size_t slot = ((uint32_t)t * UINT32_C(2654435761)) >> 26; /* 64 slots, spread: 71 (Array) and 135 differ */
  if (es->match[slot].type_plus1 == t + 1) return es->match[slot].at < 0 ? NULL : &es->items[es->match[slot].at];
  return find_entry_slow(es, t, slot);
}

static FFK_NOINLINE const entry *find_entry_slow(entries *es, int32_t t, size_t slot) {
  int64_t i = 0;
  while (i < es->size && !type_matches(t, es->items[i].type_index)) ++i;
  if (es->size <= INT32_MAX) {
    es->match[slot].type_plus1 = t + 1;
    es->match[slot].at = i < es->size ? (int32_t)i : -1;
  }
  return i < es->size ? &es->items[i] : NULL;
}

/* ---- The state of one call --------------------------------------------------------------- */

typedef struct call_state {
  const char *api;
  entries callbacks;
  ffk_visitor *visitor; /* while a walk or visit runs */
} call_state;

static void state_end(call_state *st) { ffk_mem_free(st->callbacks.items); }

/* ---- Walk and visit ------------------------------------------------------------------- */

static int walk_cb(void *ctx, const ffk_any *value, const ffk_walk_step *where, ffk_def_region_kind region) {
  (void)where;
  call_state *st = ctx;
  const entry *e = find_entry(&st->callbacks, value);
  if (e == NULL) return FFK_WALK_ADVANCE;
  ffk_any args[2] = {*value, ffk_any_int(region)}, r;
  if (ffk_function_call(e->fn, args, e->with_region ? 2 : 1, &r) != 0) return -1;
  if (r.type_index == FFK_TYPE_NONE) return FFK_WALK_ADVANCE; /* the usual result: nothing to release */
  int out = FFK_WALK_ADVANCE;
  if (ffk_containers__is_interrupt(&r)) out = ffk_containers__visitor_stop(st->visitor, &r) ? FFK_WALK_STOP : 0;
  else if (r.type_index == FFK_TYPE_INT) out = r.v_int == FFK_WALK_SKIP ? FFK_WALK_SKIP : FFK_WALK_ADVANCE;
  else if (r.type_index != FFK_TYPE_NONE)
    out = ffk_error_set(FFK_ERR_TYPE, "structural_walk: a callback must return None, a WalkResult or a VisitInterrupt, got %s",
                        ffk_any_type_name(&r));
  ffk_any_release(&r);
  return out;
}

/* The walk's filter (ffk_walk_filter): an object type some entry matches. */
static bool walk_wants(void *ctx, int32_t t) {
  call_state *st = ctx;
  ffk_any probe = ffk_any_none();
  probe.type_index = t; /* find_entry looks at the type alone */
  return find_entry(&st->callbacks, &probe) != NULL;
}

static int order_of(const char *api, const ffk_any *v, ffk_walk_order *order) {
  if (v->type_index != FFK_TYPE_INT || (v->v_int != FFK_WALK_PREORDER && v->v_int != FFK_WALK_POSTORDER))
    return ffk_error_set(FFK_ERR_VALUE, "%s: unknown walk order %s (0: pre-order, 1: post-order)", api,
                         ffk_any_type_name(v));
  *order = (ffk_walk_order)v->v_int;
  return 0;
}

/* ffi.StructuralWalk(root, callbacks, callbacks_with_def_region_kind, order) -> Optional<VisitInterrupt> */
static int structural_walk(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  call_state st = {"ffi.StructuralWalk", {NULL, 0, false, {{0, 0}}}, NULL};
  ffk_walk_order order = FFK_WALK_POSTORDER;
  int rc = order_of(st.api, &args[3], &order);
  if (rc == 0) rc = read_entries(st.api, &args[1], 2, false, &st.callbacks);
  if (rc == 0) rc = read_entries(st.api, &args[2], 2, true, &st.callbacks);
  ffk_walk_filter filter = {st.callbacks.plain_values, walk_wants}; /* walk_cb does nothing for the rest */
  if (rc == 0) rc = ffk_containers__walk(&args[0], order, walk_cb, &st, &filter, &st.visitor, result);
  state_end(&st);
  return rc < 0 ? -1 : 0;
}

static int visit_cb(void *ctx, ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where) {
  (void)where;
  call_state *st = ctx;
  const entry *e = find_entry(&st->callbacks, value);
  if (e == NULL) return ffk_visitor_default_visit(v, value);
  ffk_any args[2] = {*value, ffk_any_none()}, r;
  if (ffk_containers__visitor_handle(v, &args[1]) != 0) return -1;
  int rc = ffk_function_call(e->fn, args, 2, &r);
  ffk_any_release(&args[1]);
  if (rc != 0) return -1;
  if (ffk_containers__is_interrupt(&r)) rc = ffk_containers__visitor_stop(v, &r);
  else if (r.type_index != FFK_TYPE_NONE)
    rc = ffk_error_set(FFK_ERR_TYPE, "structural_visit: a callback must return None or a VisitInterrupt, got %s",
                       ffk_any_type_name(&r));
  ffk_any_release(&r);
  return rc;
}

/* ffi.StructuralVisit(root, callbacks) -> Optional<VisitInterrupt> */
static int structural_visit(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  call_state st = {"ffi.StructuralVisit", {NULL, 0, false, {{0, 0}}}, NULL};
  int rc = read_entries(st.api, &args[1], 2, false, &st.callbacks);
  if (rc == 0) rc = ffk_containers__visit(&args[0], visit_cb, &st, result);
  state_end(&st);
  return rc < 0 ? -1 : 0;
}

/* A descent's result as the handle's method returns it: None, or what stopped the visit. */
static int visit_result(ffk_visitor *v, int rc, ffk_any *result) {
  *result = ffk_any_none();
  if (rc < 0) return -1;
  return rc == 1 ? ffk_containers__visitor_interrupt(v, result) : 0;
}

static int visitor_visit(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_visitor *v = ffk_containers__handle_visitor("ffi.StructuralVisitorVisit", &args[0]);
  return v == NULL ? -1 : visit_result(v, ffk_visitor_visit(v, &args[1]), result);
}

static int visitor_default_visit(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_visitor *v = ffk_containers__handle_visitor("ffi.StructuralVisitorDefaultVisit", &args[0]);
  return v == NULL ? -1 : visit_result(v, ffk_visitor_default_visit(v, &args[1]), result);
}

static int region_arg(const char *api, const ffk_any *v, ffk_def_region_kind *kind) {
  if (v->type_index != FFK_TYPE_INT || v->v_int < FFK_DEF_REGION_NONE || v->v_int > FFK_DEF_REGION_SIMPLE)
    return ffk_error_set(FFK_ERR_VALUE, "%s: not a DefRegionKind (0, 1 or 2): %s", api, ffk_any_type_name(v));
  *kind = (ffk_def_region_kind)v->v_int;
  return 0;
}

static int visitor_region(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_visitor *v = ffk_containers__handle_visitor("ffi.StructuralVisitorDefRegionKind", &args[0]);
  if (v == NULL) return -1;
  *result = ffk_any_int(ffk_visitor_region(v));
  return 0;
}

static int visitor_with_region(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const char *api = "ffi.StructuralVisitorWithDefRegionKind";
  ffk_visitor *v = ffk_containers__handle_visitor(api, &args[0]);
  ffk_def_region_kind kind;
  if (v == NULL || region_arg(api, &args[1], &kind) != 0) return -1;
  if (args[2].type_index != FFK_TYPE_FUNCTION)
    return ffk_error_set(FFK_ERR_TYPE, "%s: the callback must be a Function, got %s", api, ffk_any_type_name(&args[2]));
  ffk_def_region_kind previous = ffk_visitor_enter_region(v, kind);
  int rc = ffk_function_call((ffk_function *)args[2].v_obj, NULL, 0, result);
  ffk_visitor_leave_region(v, previous);
  return rc;
}

/* ---- Map and mutate --------------------------------------------------------------------- */

static int map_cb(void *ctx, ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  (void)m;
  call_state *st = ctx;
  const entry *e = find_entry(&st->callbacks, value);
  if (e == NULL) return ffk_any_to_owned(value, out);
  ffk_any args[2] = {*value, ffk_any_int(ffk_mutator_region(m))};
  return ffk_function_call(e->fn, args, e->with_region ? 2 : 1, out);
}

/* ffi.StructuralMap(root, callbacks, callbacks_with_def_region_kind, order) -> Any */
static int structural_map(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  call_state st = {"ffi.StructuralMap", {NULL, 0, false, {{0, 0}}}, NULL};
  ffk_walk_order order = FFK_WALK_POSTORDER;
  int rc = order_of(st.api, &args[3], &order);
  if (rc == 0) rc = read_entries(st.api, &args[1], 2, false, &st.callbacks);
  if (rc == 0) rc = read_entries(st.api, &args[2], 2, true, &st.callbacks);
  if (rc == 0) rc = ffk_structural_map(&args[0], order, map_cb, &st, result);
  state_end(&st);
  return rc;
}

static int mutate_cb(void *ctx, ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  call_state *st = ctx;
  const entry *e = find_entry(&st->callbacks, value);
  if (e == NULL) return ffk_mutator_default_mutate(m, value, out);
  ffk_any args[3] = {*value, ffk_any_none(), ffk_any_int(0)}; /* inplace mode: always DISALLOW */
  if (ffk_containers__mutator_handle(m, &args[1]) != 0) return -1;
  int rc = ffk_function_call(e->fn, args, e->with_mode ? 3 : 2, out);
  ffk_any_release(&args[1]);
  return rc;
}

/* ffi.StructuralMutate(root, callbacks) -> Any */
static int structural_mutate(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  call_state st = {"ffi.StructuralMutate", {NULL, 0, false, {{0, 0}}}, NULL};
  int rc = read_entries(st.api, &args[1], 3, false, &st.callbacks);
  if (rc == 0) rc = ffk_structural_mutate(&args[0], mutate_cb, &st, result);
  state_end(&st);
  return rc;
}

static int mutator_mutate(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_mutator *m = ffk_containers__handle_mutator("ffi.StructuralMutatorMutate", &args[0]);
  return m == NULL ? -1 : ffk_mutator_mutate(m, &args[1], result);
}

static int mutator_default_mutate(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_mutator *m = ffk_containers__handle_mutator("ffi.StructuralMutatorDefaultMutate", &args[0]);
  return m == NULL ? -1 : ffk_mutator_default_mutate(m, &args[1], result);
}

static int mutator_remap_get(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_mutator *m = ffk_containers__handle_mutator("ffi.StructuralMutatorVarRemapGet", &args[0]);
  return m == NULL || ffk_mutator_var_remap_get(m, &args[1], result) < 0 ? -1 : 0;
}

static int mutator_remap_set(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_mutator *m = ffk_containers__handle_mutator("ffi.StructuralMutatorVarRemapSet", &args[0]);
  *result = ffk_any_none();
  return m == NULL ? -1 : ffk_mutator_var_remap_set(m, &args[1], &args[2]);
}

static int mutator_region(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_mutator *m = ffk_containers__handle_mutator("ffi.StructuralMutatorDefRegionKind", &args[0]);
  if (m == NULL) return -1;
  *result = ffk_any_int(ffk_mutator_region(m));
  return 0;
}

static int mutator_with_region(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const char *api = "ffi.StructuralMutatorWithDefRegionKind";
  ffk_mutator *m = ffk_containers__handle_mutator(api, &args[0]);
  ffk_def_region_kind kind;
  if (m == NULL || region_arg(api, &args[1], &kind) != 0) return -1;
  if (args[2].type_index != FFK_TYPE_FUNCTION)
    return ffk_error_set(FFK_ERR_TYPE, "%s: the callback must be a Function, got %s", api, ffk_any_type_name(&args[2]));
  ffk_def_region_kind previous = ffk_mutator_enter_region(m, kind);
  int rc = ffk_function_call((ffk_function *)args[2].v_obj, NULL, 0, result);
  ffk_mutator_leave_region(m, previous);
  return rc;
}

/* ---- VisitInterrupt and StructuralKey --------------------------------------------------- */

static int new_visit_interrupt(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  return ffk_containers__make_interrupt(nargs > 0 ? &args[0] : NULL, result);
}

static int new_structural_key(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  uint64_t h;
  if (ffk_structural_hash(&args[0], &h) != 0) return -1;
  ffk_any init[2] = {args[0], ffk_any_int((int64_t)h)};
  ffk_object *o;
  if (ffk_object_create(g_key_type, init, 2, NULL, 0, &o) != 0) return -1;
  *result = ffk_any_object_steal(o);
  return 0;
}

static int structural_key_equal(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  for (int i = 0; i < 2; ++i)
    if (!ffk_any_is_object(&args[i]) || args[i].type_index != g_key_type)
      return ffk_error_set(FFK_ERR_TYPE, "ffi.StructuralKeyEqual: expected ffi.StructuralKey, got %s",
                           ffk_any_type_name(&args[i]));
  const structural_key *a = (const structural_key *)args[0].v_obj, *b = (const structural_key *)args[1].v_obj;
  int eq = a == b ? 1 : a->hash_i64 != b->hash_i64 ? 0 : ffk_structural_equal(&a->key, &b->key);
  if (eq < 0) return -1;
  *result = ffk_any_bool(eq == 1);
  return 0;
}

/* ---- Registration ----------------------------------------------------------------------- */

static const ffk_function_def k_globals[] = {
    {"ffi.StructuralWalk", "(Any, Any, Any, int) -> Any", structural_walk},
    {"ffi.StructuralVisit", "(Any, Any) -> Any", structural_visit},
    {"ffi.StructuralMap", "(Any, Any, Any, int) -> Any", structural_map},
    {"ffi.StructuralMutate", "(Any, Any) -> Any", structural_mutate},
    {"ffi.StructuralVisitorVisit", "(Any, Any) -> Any", visitor_visit},
    {"ffi.StructuralVisitorDefaultVisit", "(Any, Any) -> Any", visitor_default_visit},
    {"ffi.StructuralVisitorDefRegionKind", "(Any) -> int", visitor_region},
    {"ffi.StructuralVisitorWithDefRegionKind", "(Any, int, Any) -> Any", visitor_with_region},
    {"ffi.StructuralMutatorMutate", "(Any, Any) -> Any", mutator_mutate},
    {"ffi.StructuralMutatorDefaultMutate", "(Any, Any) -> Any", mutator_default_mutate},
    {"ffi.StructuralMutatorVarRemapGet", "(Any, Any) -> Any", mutator_remap_get},
    {"ffi.StructuralMutatorVarRemapSet", "(Any, Any, Any) -> None", mutator_remap_set},
    {"ffi.StructuralMutatorDefRegionKind", "(Any) -> int", mutator_region},
    {"ffi.StructuralMutatorWithDefRegionKind", "(Any, int, Any) -> Any", mutator_with_region},
    {"ffi.VisitInterrupt", "(Any) -> Any", new_visit_interrupt},
    {"ffi.StructuralKey", "(Any) -> Any", new_structural_key},
    {"ffi.StructuralKeyEqual", "(Any, Any) -> bool", structural_key_equal},
};

int ffk_containers__register_visit_globals(void) {
  if (define_types() != 0) return -1;
  return ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]);
}
