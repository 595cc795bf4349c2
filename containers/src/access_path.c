/*
 * access_path.c - access paths (ffikit/access_path.h): where a value sits inside another,
 * as a chain of immutable ffikit.AccessPath objects, each holding its parent and one
 * ffikit.AccessStep.
 *
 * Invariants:
 *  - Both types are reflected types defined at load (ffk_access_path__register), so every
 *    binding sees their fields and methods through reflection; their objects are made by
 *    ffk_object_new_reflected and filled here, through the struct, while this file alone
 *    holds them. Once returned they never change (every field is read-only), so they are
 *    read through the struct without locks.
 *  - path->depth == parent's depth + 1; the root has no parent and no step, depth 0.
 *  - A step's key is owned and already checked against its kind: a str object for the
 *    attribute kinds, an int for the array kinds, any owned value for the map kinds.
 *  - repr follows tvm_ffi 0.1.15: `<root>` then `.name`, `[i]`, `[key]`, `[<missing:...>]`.
 */
#include "containers_internal.h"

#include <ffikit/access_path.h>
#include <ffikit/reflect.h>
#include <ffikit/repr.h>
#include <ffikit/structural_visit.h>

#include <stddef.h>
#include <string.h>

typedef struct access_step {
  ffk_object header;
  int64_t kind;
  ffk_any key;
} access_step;

typedef struct access_path {
  ffk_object header;
  ffk_object *parent; /* an access_path, NULL for the root */
  ffk_object *step;   /* an access_step, NULL for the root */
  int64_t depth;
} access_path;

static int32_t g_path_index = -1, g_step_index = -1;

int32_t ffk_access_path_type_index(void) { return g_path_index; }
int32_t ffk_access_step_type_index(void) { return g_step_index; }

static bool is_path(const ffk_object *o) { return o != NULL && o->type_index == g_path_index && g_path_index >= 0; }
static bool is_step(const ffk_object *o) { return o != NULL && o->type_index == g_step_index && g_step_index >= 0; }

static int not_a_path(const ffk_object *o) {
  return ffk_error_set(FFK_ERR_TYPE, "expected an ffikit.AccessPath, got a `%s`",
                       o != NULL ? ffk_type_name(o->type_index) : "None");
}

static const char *kind_name(int kind) {
  switch (kind) {
    case FFK_ACCESS_ATTR: return "attribute";
    case FFK_ACCESS_ARRAY_ITEM: return "array item";
    case FFK_ACCESS_MAP_ITEM: return "map item";
    case FFK_ACCESS_ATTR_MISSING: return "missing attribute";
    case FFK_ACCESS_ARRAY_ITEM_MISSING: return "missing array item";
    default: return "missing map item";
  }
}

/* ---- Making paths ------------------------------------------------------------------------- */

static access_path *path_new(void) {
  if (g_path_index < 0) {
    ffk_error_set(FFK_ERR_RUNTIME, "ffikit.AccessPath is not defined (its registration at load failed)");
    return NULL;
  }
  return (access_path *)ffk_object_new_reflected(g_path_index);
}

ffk_object *ffk_access_path_root(void) { return (ffk_object *)path_new(); }

/* A new step of `kind` with `key` (borrowed), checked; NULL with a TypeError, ValueError or MemoryError. */
static access_step *step_new(int kind, const ffk_any *key) {
  if (kind < FFK_ACCESS_ATTR || kind > FFK_ACCESS_MAP_ITEM_MISSING) {
    ffk_error_set(FFK_ERR_VALUE, "access step kind %d is not one of 0..5 (ffk_access_kind)", kind);
    return NULL;
  }
  if (key == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "the key of a %s step is NULL", kind_name(kind));
    return NULL;
  }
  ffk_any owned = ffk_any_none();
  if (kind == FFK_ACCESS_ATTR || kind == FFK_ACCESS_ATTR_MISSING) {
    const char *data;
    size_t size;
    if (ffk_any_as_str(key, &data, &size) != 0) {
      ffk_error_clear();
      ffk_error_set(FFK_ERR_TYPE, "the key of a %s step must be a str, not a `%s`", kind_name(kind),
                    ffk_any_type_name(key));
      return NULL;
    }
    ffk_string *s = ffk_string_new(data, size);
    if (s == NULL) return NULL;
    owned = ffk_any_object_steal((ffk_object *)s);
  } else if (kind == FFK_ACCESS_ARRAY_ITEM || kind == FFK_ACCESS_ARRAY_ITEM_MISSING) {
    if (key->type_index != FFK_TYPE_INT) {
      ffk_error_set(FFK_ERR_TYPE, "the key of a %s step must be an int, not a `%s`", kind_name(kind),
                    ffk_any_type_name(key));
      return NULL;
    }
    owned = *key;
  } else if (ffk_any_to_owned(key, &owned) != 0) {
    return NULL;
  }
  access_step *st = g_step_index >= 0 ? (access_step *)ffk_object_new_reflected(g_step_index) : NULL;
  if (st == NULL) {
    if (g_step_index < 0) ffk_error_set(FFK_ERR_RUNTIME, "ffikit.AccessStep is not defined (its registration at load failed)");
    ffk_any_release(&owned);
    return NULL;
  }
  st->kind = kind;
  ffk_any_release(&st->key);
  st->key = owned;
  return st;
}

/* A new path: `parent` (borrowed, a path) followed by `step` (stolen). NULL with a MemoryError. */
static ffk_object *path_child(const ffk_object *parent, access_step *step) {
  access_path *p = path_new();
  if (p == NULL) {
    ffk_object_release(&step->header);
    return NULL;
  }
  ffk_object_retain((ffk_object *)parent);
  p->parent = (ffk_object *)parent;
  p->step = &step->header;
  p->depth = ((const access_path *)parent)->depth + 1;
  return &p->header;
}

ffk_object *ffk_access_path_extend(const ffk_object *parent, int kind, const ffk_any *key) {
  if (!is_path(parent)) {
    not_a_path(parent);
    return NULL;
  }
  access_step *st = step_new(kind, key);
  return st != NULL ? path_child(parent, st) : NULL;
}

/* ---- Reading paths ------------------------------------------------------------------------ */

const ffk_object *ffk_access_path_parent(const ffk_object *path) {
  return is_path(path) ? ((const access_path *)path)->parent : NULL;
}

int32_t ffk_access_path_depth(const ffk_object *path) {
  if (!is_path(path)) return not_a_path(path);
  return (int32_t)((const access_path *)path)->depth;
}

int ffk_access_path_last_step(const ffk_object *path, int *kind, ffk_any *key) {
  if (key != NULL) *key = ffk_any_none();
  if (kind == NULL || key == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_access_path_last_step: the %s is NULL", kind == NULL ? "kind" : "key");
  if (!is_path(path)) return not_a_path(path);
  const access_step *st = (const access_step *)((const access_path *)path)->step;
  if (st == NULL) {
    *kind = -1;
    return 0;
  }
  *kind = (int)st->kind;
  ffk_any__copy(key, &st->key);
  ffk_any_retain(key);
  return 1;
}

static bool same_step(const access_step *x, const access_step *y) {
  return x == y || (x->kind == y->kind && ffk_any_equal(&x->key, &y->key));
}

/* Whether the two paths, of equal depth, have the same steps. */
static bool same_steps(const access_path *a, const access_path *b) {
  for (; a != b && a != NULL && b != NULL; a = (const access_path *)a->parent, b = (const access_path *)b->parent)
    if (!same_step((const access_step *)a->step, (const access_step *)b->step)) return false;
  return true;
}

int ffk_access_path_equal(const ffk_object *a, const ffk_object *b) {
  if (!is_path(a)) return not_a_path(a);
  if (!is_path(b)) return not_a_path(b);
  const access_path *x = (const access_path *)a, *y = (const access_path *)b;
  return x->depth == y->depth && same_steps(x, y);
}

int ffk_access_path_is_prefix_of(const ffk_object *prefix, const ffk_object *path) {
  if (!is_path(prefix)) return not_a_path(prefix);
  if (!is_path(path)) return not_a_path(path);
  const access_path *x = (const access_path *)prefix, *y = (const access_path *)path;
  if (x->depth > y->depth) return 0;
  while (y->depth > x->depth) y = (const access_path *)y->parent;
  return same_steps(x, y);
}

/* ---- repr --------------------------------------------------------------------------------- */

static int repr_step(ffk_repr_ctx *ctx, const access_step *st) {
  const char *data;
  size_t size;
  switch (st->kind) {
    case FFK_ACCESS_ATTR:
      if (ffk_any_as_str(&st->key, &data, &size) != 0) return -1;
      if (ffk_repr_append(ctx, ".", 1) != 0) return -1;
      return ffk_repr_append(ctx, data, size);
    case FFK_ACCESS_ARRAY_ITEM:
    case FFK_ACCESS_MAP_ITEM:
      if (ffk_repr_append(ctx, "[", 1) != 0 || ffk_repr_any(ctx, &st->key) != 0) return -1;
      return ffk_repr_append(ctx, "]", 1);
    default: /* the missing kinds: tvm_ffi prints an attribute's name quoted, as a map key */
      if (ffk_repr_append(ctx, "[<missing:", 10) != 0 || ffk_repr_any(ctx, &st->key) != 0) return -1;
      return ffk_repr_append(ctx, ">]", 2);
  }
}

static int repr_step_slot(ffk_object *self, ffk_repr_ctx *ctx) { return repr_step(ctx, (const access_step *)self); }

static int repr_path_slot(ffk_object *self, ffk_repr_ctx *ctx) {
  const access_path *p = (const access_path *)self;
  int64_t n = p->depth;
  if (ffk_repr_append(ctx, "<root>", 6) != 0) return -1;
  if (n == 0) return 0;
  const access_step **steps = ffk_mem_alloc((size_t)n * sizeof *steps);
  if (steps == NULL) return -1;
  for (int64_t i = n - 1; i >= 0; --i, p = (const access_path *)p->parent) steps[i] = (const access_step *)p->step;
  int rc = 0;
  for (int64_t i = 0; rc == 0 && i < n; ++i) rc = repr_step(ctx, steps[i]);
  ffk_mem_free(steps);
  return rc;
}

/* ---- Reflected methods (typed: `self` and the arguments arrive checked) --------------------- */

static ffk_object *self_of(const ffk_any *args) { return args[0].v_obj; }

static int ret_path(ffk_object *made, ffk_any *result) {
  if (made == NULL) return -1;
  *result = ffk_any_object_steal(made);
  return 0;
}

static int m_root(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)args, (void)nargs;
  return ret_path(ffk_access_path_root(), result);
}

#define EXTEND_METHOD(fn, kind)                                                       \
  static int fn(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {     \
    (void)ctx, (void)nargs;                                                           \
    return ret_path(ffk_access_path_extend(self_of(args), kind, &args[1]), result);   \
  }
EXTEND_METHOD(m_attr, FFK_ACCESS_ATTR)
EXTEND_METHOD(m_attr_missing, FFK_ACCESS_ATTR_MISSING)
EXTEND_METHOD(m_array_item, FFK_ACCESS_ARRAY_ITEM)
EXTEND_METHOD(m_array_item_missing, FFK_ACCESS_ARRAY_ITEM_MISSING)
EXTEND_METHOD(m_map_item, FFK_ACCESS_MAP_ITEM)
EXTEND_METHOD(m_map_item_missing, FFK_ACCESS_MAP_ITEM_MISSING)
#undef EXTEND_METHOD

static int m_extend(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  ffk_object *st = args[1].v_obj;
  if (!is_step(st)) return ffk_error_set(FFK_ERR_TYPE, "AccessPath._extend takes an ffikit.AccessStep, not a `%s`",
                                         ffk_any_type_name(&args[1]));
  ffk_object_retain(st);
  return ret_path(path_child(self_of(args), (access_step *)st), result);
}

static int m_is_prefix_of(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  int rc = ffk_access_path_is_prefix_of(self_of(args), args[1].v_obj);
  if (rc < 0) return -1;
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static int m_path_equal(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  int rc = ffk_access_path_equal(self_of(args), args[1].v_obj);
  if (rc < 0) return -1;
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static int m_to_steps(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  const access_path *p = (const access_path *)self_of(args);
  int64_t n = p->depth;
  ffk_any *steps = ffk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *steps);
  if (steps == NULL) return -1;
  for (int64_t i = n - 1; i >= 0; --i, p = (const access_path *)p->parent) {
    ffk_object_retain(p->step);
    steps[i] = ffk_any_object_steal(p->step);
  }
  ffk_array *arr = ffk_array_new_steal(steps, n);
  ffk_mem_free(steps);
  if (arr == NULL) return -1;
  *result = ffk_any_object_steal(&arr->header);
  return 0;
}

/* ---- Registration ----------------------------------------------------------------------- */

static const struct {
  const char *name;
  const char *signature;
  ffk_safe_call call;
  bool is_static;
  const char *doc;
} k_methods[] = {
    {"_root", "() -> ffikit.AccessPath", m_root, true, "The root path."},
    {"_extend", "(self: ffikit.AccessPath, step: ffikit.AccessStep) -> ffikit.AccessPath", m_extend, false,
     "This path followed by `step`."},
    {"_attr", "(self: ffikit.AccessPath, name: str) -> ffikit.AccessPath", m_attr, false,
     "This path followed by attribute `name`."},
    {"_attr_missing", "(self: ffikit.AccessPath, name: str) -> ffikit.AccessPath", m_attr_missing, false,
     "This path followed by a missing attribute `name`."},
    {"_array_item", "(self: ffikit.AccessPath, index: int) -> ffikit.AccessPath", m_array_item, false,
     "This path followed by array item `index`."},
    {"_array_item_missing", "(self: ffikit.AccessPath, index: int) -> ffikit.AccessPath", m_array_item_missing, false,
     "This path followed by a missing array item `index`."},
    {"_map_item", "(self: ffikit.AccessPath, key: Any) -> ffikit.AccessPath", m_map_item, false,
     "This path followed by map item `key`."},
    {"_map_item_missing", "(self: ffikit.AccessPath, key: Any) -> ffikit.AccessPath", m_map_item_missing, false,
     "This path followed by a missing map item `key`."},
    {"_is_prefix_of", "(self: ffikit.AccessPath, other: ffikit.AccessPath) -> bool", m_is_prefix_of, false,
     "Whether this path's steps begin `other`'s (a path is a prefix of itself)."},
    {"_path_equal", "(self: ffikit.AccessPath, other: ffikit.AccessPath) -> bool", m_path_equal, false,
     "Whether the two paths have the same steps."},
    {"_to_steps", "(self: ffikit.AccessPath) -> Array<ffikit.AccessStep>", m_to_steps, false,
     "The steps of this path, root first."},
};
#define N_METHODS (int32_t)(sizeof k_methods / sizeof k_methods[0])

static int define_step(void) {
  static const ffk_field_def fields[] = {
      {"kind", offsetof(access_step, kind), "int", 0, {0}, "The kind of step (an AccessKind value)."},
      {"key", offsetof(access_step, key), "Any", 0, {0},
       "The attribute name (str), the index (int) or the map key."},
  };
  ffk_type_def def = {.key = "ffikit.AccessStep",
                      .parent_index = FFK_TYPE_OBJECT,
                      .instance_size = sizeof(access_step),
                      .fields = fields,
                      .nfields = 2,
                      .doc = "One step of an access path: an attribute, an array item or a map item."};
  int32_t index = ffk_type_define(&def);
  if (index < 0 || ffk_type_set_repr(index, repr_step_slot) != 0) return -1;
  g_step_index = index;
  return 0;
}

static int define_path(void) {
  if (ffk_type_register("ffikit.AccessPath", FFK_TYPE_OBJECT) < 0) return -1; /* so signatures can name it */
  static const ffk_field_def fields[] = {
      {"parent", offsetof(access_path, parent), "Optional<ffikit.AccessPath>", 0, {0}, "The parent path; None for the root."},
      {"step", offsetof(access_path, step), "Optional<ffikit.AccessStep>", 0, {0}, "The last step; None for the root."},
      {"depth", offsetof(access_path, depth), "int", 0, {0}, "The number of steps (0 for the root)."},
  };
  ffk_method_def methods[N_METHODS];
  int rc = 0;
  int32_t made = 0;
  for (; made < N_METHODS; ++made) {
    char name[64] = "ffikit.AccessPath.";
    strncat(name, k_methods[made].name, sizeof name - strlen(name) - 1);
    ffk_function *f = ffk_function_new_typed(name, k_methods[made].signature, k_methods[made].call, NULL, NULL);
    if (f == NULL) {
      rc = -1;
      break;
    }
    methods[made] = (ffk_method_def){k_methods[made].name, f, k_methods[made].is_static, k_methods[made].doc};
  }
  int32_t index = -1;
  if (rc == 0) {
    ffk_type_def def = {.key = "ffikit.AccessPath",
                        .parent_index = FFK_TYPE_OBJECT,
                        .instance_size = sizeof(access_path),
                        .fields = fields,
                        .nfields = 3,
                        .methods = methods,
                        .nmethods = N_METHODS,
                        .doc = "Where a value sits inside another: a chain of steps from a root."};
    index = ffk_type_define(&def);
    rc = index < 0 || ffk_type_set_repr(index, repr_path_slot) != 0 ? -1 : 0;
  }
  for (int32_t i = 0; i < made; ++i) ffk_object_release((ffk_object *)methods[i].function);
  if (rc == 0) g_path_index = index;
  return rc;
}

int ffk_access_path__register(void) {
  if (define_step() != 0) return -1;
  return define_path();
}

/* The access path of a walk step (ffikit/structural_visit.h): its chain of steps from the root,
   each the kind and key the visitor recorded. */
ffk_object *ffk_walk_step_path(const ffk_walk_step *step) {
  if (step == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_walk_step_path: the step is NULL");
    return NULL;
  }
  int32_t n = 0;
  for (const ffk_walk_step *s = step; s != NULL; s = s->parent) ++n;
  const ffk_walk_step **chain = ffk_mem_alloc((size_t)n * sizeof *chain);
  if (chain == NULL) return NULL;
  int32_t i = n;
  for (const ffk_walk_step *s = step; s != NULL; s = s->parent) chain[--i] = s;
  ffk_object *path = ffk_access_path_root();
  for (i = 0; path != NULL && i < n; ++i) {
    const ffk_walk_step *s = chain[i];
    ffk_any key;
    switch (s->kind) {
      case FFK_ACCESS_ATTR: key = ffk_any_raw_str(s->field); break;
      case FFK_ACCESS_ARRAY_ITEM: key = ffk_any_int(s->index); break;
      case FFK_ACCESS_MAP_ITEM: key = *s->key; break;
      default: continue; /* the root, or a child a callback chose itself */
    }
    ffk_object *next = ffk_access_path_extend(path, s->kind, &key);
    ffk_object_release(path);
    path = next;
  }
  ffk_mem_free(chain);
  return path;
}
