/*
 * structural_mutate.c - structural map and mutate (ffikit/structural_visit.h).
 *
 * The mutator rebuilds bottom-up: each node's children are rewritten first, and the node
 * is rebuilt only when one of them came back as another value, so unchanged subtrees are
 * shared by identity.
 *
 * Invariants:
 *  - Every recursion goes through mutate_value, which counts the depth and refuses to pass
 *    FFK_STRUCTURAL_MAX_DEPTH.
 *  - The nodes being descended into are kept on a path stack (structural_engine.h); a node
 *    met again while on it (a cycle) is kept unchanged. A node on the path is alive: the
 *    root is held by the caller and each node below by its parent's snapshot, its
 *    container, or the field value read (owned) until the descent into it returns.
 *  - A List or Dict is read through a snapshot (seq_open / map_open), never under its
 *    lock while a callback runs. A rebuilt List or Dict is a new one: the source is never
 *    changed, nor is any reflected object (a changed object is a shallow copy).
 *  - The remap table holds a reference to each key object and to each value until the
 *    call ends; a value is stored before the one it replaces is released.
 */
#include "structural_engine.h"

#include <stddef.h>
#include <string.h>

/* ---- The mutator ------------------------------------------------------------------------ */

enum { MODE_MAP_PRE, MODE_MAP_POST, MODE_MUTATE };

struct ffk_mutator {
  int mode;
  ffk_map_fn fn;
  void *ctx;
  ffk_def_region_kind region;
  int depth;
  path_stack path;
  ffk_table remap;       /* object identity (an opaque-pointer key, object retained) -> replacement */
  engine_handle *handle; /* the ffi.StructuralMutator hooks receive, made on first need */
  struct {
    int32_t type; /* 0: empty */
    int kind;
    ffk_function *hook; /* the type's own __s_mutate__ (retained), or NULL */
  } types[8]; /* what the types met last need (a type attribute lookup each is slow) */
};

/* The ffk_s_kind (TREE for a type that is not reflected) and __s_mutate__ hook (borrowed) of object type `t`. */
static int mutator_type(ffk_mutator *m, int32_t t, int *kind, ffk_function **hook) {
  size_t slot = (size_t)t % (sizeof m->types / sizeof m->types[0]);
  if (m->types[slot].type != t) {
    int k = FFK_S_KIND_TREE;
    ffk_function *h;
    if (ffk_type_is_reflected(t) && ffk_containers__s_kind_of(t, &k) != 0) return -1;
    if (ffk_containers__type_hook(t, FFK_ATTR_S_MUTATE, false, &h) != 0) return -1;
    if (m->types[slot].hook != NULL) ffk_object_release((ffk_object *)m->types[slot].hook);
    m->types[slot].type = t;
    m->types[slot].kind = k;
    m->types[slot].hook = h;
  }
  *kind = m->types[slot].kind;
  *hook = m->types[slot].hook;
  return 0;
}

int ffk_containers__mutator_handle(ffk_mutator *m, ffk_any *out) {
  return ffk_containers__handle_get(&m->handle, ffk_containers__mutator_type(), m, out);
}

ffk_mutator *ffk_containers__handle_mutator(const char *api, const ffk_any *handle) {
  return ffk_containers__handle_engine(api, handle, ffk_containers__mutator_type());
}

static int mutate_value(ffk_mutator *m, const ffk_any *value, ffk_any *out);

static void release_all(ffk_any *v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ffk_any_release(&v[i]);
  ffk_mem_free(v);
}

/* Rewrites the `n` values at `src` into a lazily made `*dst`: NULL while every one comes back the same. */
static int mutate_values(ffk_mutator *m, const ffk_any *src, int64_t n, int64_t stride, ffk_any **dst) {
  *dst = NULL;
  for (int64_t i = 0; i < n; ++i) {
    ffk_any r;
    int rc = mutate_value(m, &src[i * stride], &r);
    if (rc == 0 && *dst == NULL && same_value(&r, &src[i * stride])) {
      ffk_any_release(&r);
      continue;
    }
    if (rc == 0 && *dst == NULL) {
      if ((*dst = ffk_mem_alloc((size_t)n * sizeof(ffk_any))) == NULL) {
        ffk_any_release(&r);
        return -1;
      }
      for (int64_t j = 0; j < i; ++j) {
        (*dst)[j] = src[j * stride];
        ffk_any_retain(&(*dst)[j]);
      }
    }
    if (rc != 0) {
      if (*dst != NULL) release_all(*dst, i);
      *dst = NULL;
      return -1;
    }
    (*dst)[i] = r;
  }
  return 0;
}

/* A sequence: the same object when no element changed, else a new one of its type (List copied on write). */
static int mutate_sequence(ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  seq_view s;
  if (seq_open(value->v_obj, &s) != 0) return -1;
  ffk_any *items;
  int rc = mutate_values(m, s.data, s.size, 1, &items);
  int64_t n = s.size;
  seq_close(&s);
  if (rc != 0) return -1;
  if (items == NULL) return ffk_any_to_owned(value, out);
  ffk_object *made = NULL;
  switch (value->type_index) {
    case FFK_TYPE_ARRAY: {
      ffk_array *a = ffk_array_new_steal(items, n);
      ffk_mem_free(items);
      made = a ? &a->header : NULL;
      break;
    }
    case FFK_TYPE_TUPLE: {
      ffk_tuple *t = ffk_tuple_new(n, items);
      release_all(items, n);
      made = t ? &t->header : NULL;
      break;
    }
    default: {
      ffk_list *l = ffk_list_with_capacity(n);
      for (int64_t i = 0; i < n; ++i) {
        if (l == NULL) { /* consumed even on failure, so only the ones not yet handed over */
          ffk_any_release(&items[i]);
        } else if (ffk_list_append_steal(l, &items[i]) != 0) {
          ffk_object_release((ffk_object *)l);
          l = NULL;
        }
      }
      ffk_mem_free(items);
      made = (ffk_object *)l;
      break;
    }
  }
  if (made == NULL) return -1;
  *out = ffk_any_object_steal(made);
  return 0;
}

/* A Map or Dict: its values rewritten, keys kept; the same object when no value changed. */
static int mutate_mapping(ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  map_view mv;
  if (map_open(value->v_obj, &mv) != 0) return -1;
  int64_t n = mv.table->size;
  ffk_any *pairs = ffk_mem_alloc((size_t)(n > 0 ? 2 * n : 1) * sizeof(ffk_any)); /* borrowed keys and values */
  ffk_any *values = NULL;
  int rc = pairs == NULL ? -1 : 0;
  if (rc == 0) {
    int64_t pos = 0, k = 0;
    for (ffk_table_entry *e; (e = ffk_table__next(mv.table, &pos)) != NULL; k += 2) {
      pairs[k] = e->key;
      pairs[k + 1] = e->value;
    }
    rc = mutate_values(m, pairs + 1, n, 2, &values);
  }
  if (rc == 0 && values == NULL) rc = ffk_any_to_owned(value, out);
  else if (rc == 0 && value->type_index == FFK_TYPE_MAP) {
    ffk_map *map = ffk_map_new();
    for (int64_t i = 0; map != NULL && i < n; ++i) {
      if (ffk_map_set(&map, &pairs[2 * i], &values[i]) != 0) {
        ffk_object_release(&map->header);
        map = NULL;
      }
    }
    rc = map == NULL ? -1 : 0;
    if (rc == 0) *out = ffk_any_object_steal(&map->header);
  } else if (rc == 0) {
    ffk_dict *d = ffk_dict_new();
    for (int64_t i = 0; d != NULL && i < n; ++i) {
      if (ffk_dict_set(d, &pairs[2 * i], &values[i]) != 0) {
        ffk_object_release((ffk_object *)d);
        d = NULL;
      }
    }
    rc = d == NULL ? -1 : 0;
    if (rc == 0) *out = ffk_any_object_steal((ffk_object *)d);
  }
  if (values != NULL) release_all(values, n);
  ffk_mem_free(pairs);
  map_close(&mv);
  return rc;
}

/*
 * A reflected object: each compared field rewritten in its region; when one changed, a
 * shallow copy with the changed fields set through ffk_field_init (read-only ones too),
 * as ffk_deep_copy rebuilds objects. Each field is read once; under a concurrent writer
 * the copy has each field as of some moment.
 */
static int mutate_fields(ffk_mutator *m, const ffk_any *value, int skind, ffk_any *out) {
  ffk_object *o = value->v_obj;
  int32_t t = o->type_index, n = ffk_type_num_fields(t);
  if (n < 0) return -1;
  const ffk_field_info **changed_fields = ffk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *changed_fields);
  ffk_any *changed = ffk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *changed);
  int32_t nchanged = 0;
  int rc = changed_fields == NULL || changed == NULL ? -1 : 0;
  ffk_def_region_kind outer = m->region;
  if (skind == FFK_S_KIND_VAR && m->region == FFK_DEF_REGION_SIMPLE) m->region = FFK_DEF_REGION_NONE;
  for (int32_t i = 0; rc == 0 && i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) {
      rc = -1;
      break;
    }
    if (f->flags & FFK_FIELD_COMPARE_OFF) continue;
    ffk_any field_value, r;
    if (ffk_field_get(f, o, &field_value) != 0) {
      rc = -1;
      break;
    }
    ffk_def_region_kind kind, previous = m->region;
    if (field_opens_region(f->flags, &kind)) region_enter(&m->region, kind);
    rc = mutate_value(m, &field_value, &r);
    m->region = previous;
    if (rc == 0 && !same_value(&r, &field_value)) {
      changed_fields[nchanged] = f;
      changed[nchanged++] = r;
    } else if (rc == 0) {
      ffk_any_release(&r);
    }
    ffk_any_release(&field_value);
  }
  m->region = outer;
  if (rc == 0 && nchanged == 0) {
    rc = ffk_any_to_owned(value, out);
  } else if (rc == 0 && !ffk_object_is_reflection_made(o)) {
    rc = ffk_error_set(FFK_ERR_TYPE,
                       "Cannot structurally rebuild an object of type `%s` (its field `%s` changed): "
                       "it was not made by reflection, so it cannot be copied field by field",
                       ffk_type_key(t), changed_fields[0]->name);
  } else if (rc == 0) {
    ffk_object *dup = ffk_object_shallow_copy(o);
    rc = dup == NULL ? -1 : 0;
    for (int32_t i = 0; rc == 0 && i < nchanged; ++i) rc = ffk_field_init(changed_fields[i], dup, &changed[i]);
    if (rc == 0) *out = ffk_any_object_steal(dup);
    else if (dup != NULL) ffk_object_release(dup);
  }
  for (int32_t i = 0; i < nchanged; ++i) ffk_any_release(&changed[i]);
  ffk_mem_free(changed);
  ffk_mem_free(changed_fields);
  return rc;
}

/* The remap entry of object `o`, or -1. */
static int64_t remap_find(const ffk_mutator *m, const ffk_object *o) {
  ffk_any key = ffk_any_ptr((void *)o);
  return ffk_table__find(&m->remap, &key, ffk_any_hash(&key));
}

static int remap_put(ffk_mutator *m, ffk_object *o, const ffk_any *value) {
  ffk_any stored;
  if (ffk_any_to_owned(value, &stored) != 0) return -1;
  int64_t pos = remap_find(m, o);
  if (pos >= 0) { /* store the new value, then release the old */
    ffk_any old = m->remap.entries[pos].value;
    m->remap.entries[pos].value = stored;
    ffk_any_release(&old);
    return 0;
  }
  if (ffk_table__reserve(&m->remap, 1) != 0) {
    ffk_any_release(&stored);
    return -1;
  }
  ffk_any key = ffk_any_ptr(o);
  ffk_object_retain(o);
  ffk_table__append(&m->remap, ffk_any_hash(&key), key, stored);
  return 0;
}

/* Object `value` rewritten by its type's __s_mutate__ hook: hook(mutator, value) -> the result. */
static int mutate_by_hook(ffk_mutator *m, ffk_function *hook, const ffk_any *value, ffk_any *out) {
  ffk_any args[2] = {ffk_any_none(), *value};
  if (ffk_containers__mutator_handle(m, &args[0]) != 0) return -1;
  ffk_object_retain((ffk_object *)hook); /* the cache slot may be remade by what the hook rewrites */
  int rc = ffk_function_call(hook, args, 2, out);
  ffk_object_release((ffk_object *)hook);
  ffk_any_release(&args[0]);
  return rc;
}

/* D: the default rewrite. */
static int default_mutate(ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  *out = ffk_any_none();
  bool object = value->type_index >= FFK_TYPE_OBJECT_BEGIN && value->v_obj != NULL && !is_container(value);
  int skind = FFK_S_KIND_TREE;
  ffk_function *hook = NULL;
  if (object && mutator_type(m, value->type_index, &skind, &hook) != 0) return -1;
  bool node = is_container(value) || hook != NULL || (object && ffk_type_is_reflected(value->type_index));
  if (!node || on_path(&m->path, value->v_obj)) return ffk_any_to_owned(value, out); /* also a hook's own value again */
  bool var = skind == FFK_S_KIND_VAR, dag = skind == FFK_S_KIND_DAG;
  if (var || dag) {
    int64_t pos = remap_find(m, value->v_obj);
    if (pos >= 0) return ffk_any_to_owned(&m->remap.entries[pos].value, out);
    /* a use whose definition was unchanged (or a free variable): nothing to rewrite */
    if (var && m->region == FFK_DEF_REGION_NONE) return ffk_any_to_owned(value, out);
  }
  if (path_push(&m->path, value->v_obj) != 0) return -1;
  int rc;
  if (is_sequence(value->type_index)) rc = mutate_sequence(m, value, out);
  else if (is_mapping(value->type_index)) rc = mutate_mapping(m, value, out);
  else if (hook != NULL) rc = mutate_by_hook(m, hook, value, out);
  else rc = mutate_fields(m, value, skind, out);
  --m->path.size;
  if (rc == 0 && (dag || (var && (m->region == FFK_DEF_REGION_PATTERN || !same_value(out, value)))))
    rc = remap_put(m, value->v_obj, out);
  if (rc != 0) {
    ffk_any_release(out);
    *out = ffk_any_none();
  }
  return rc;
}

/* The callback's result for `value` into *out, checked to be set on success. */
static int call_fn(ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  *out = ffk_any_none();
  if (m->fn(m->ctx, m, value, out) == 0) return 0;
  ffk_any_release(out);
  *out = ffk_any_none();
  return -1;
}

static int mutate_value(ffk_mutator *m, const ffk_any *value, ffk_any *out) {
  *out = ffk_any_none();
  if (m->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ++m->depth;
  int rc;
  if (m->mode == MODE_MUTATE) {
    rc = call_fn(m, value, out);
  } else if (m->mode == MODE_MAP_PRE) {
    ffk_any pre;
    rc = call_fn(m, value, &pre);
    if (rc == 0) rc = default_mutate(m, &pre, out);
    ffk_any_release(&pre);
  } else {
    ffk_any descended;
    rc = default_mutate(m, value, &descended);
    if (rc == 0) rc = call_fn(m, &descended, out);
    ffk_any_release(&descended);
  }
  --m->depth;
  return rc;
}

static int run_mutator(ffk_mutator *m, const ffk_any *root, ffk_any *out) {
  ffk_table__init(&m->remap);
  int rc = mutate_value(m, root, out);
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(&m->remap, &pos)) != NULL;) {
    ffk_any_release(&e->value);
    ffk_object_release(e->key.v_ptr);
  }
  ffk_table__free(&m->remap);
  path_free(&m->path);
  ffk_containers__handle_end(m->handle);
  for (size_t i = 0; i < sizeof m->types / sizeof m->types[0]; ++i)
    if (m->types[i].hook != NULL) ffk_object_release((ffk_object *)m->types[i].hook);
  return rc;
}

int ffk_structural_map(const ffk_any *root, ffk_walk_order order, ffk_map_fn fn, void *ctx, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (root == NULL || fn == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_map: root, fn and out must not be NULL");
  if (order != FFK_WALK_PREORDER && order != FFK_WALK_POSTORDER)
    return ffk_error_set(FFK_ERR_VALUE, "Unknown structural map order: %d (0: pre-order, 1: post-order)", (int)order);
  ffk_mutator m;
  memset(&m, 0, sizeof m);
  m.mode = order == FFK_WALK_PREORDER ? MODE_MAP_PRE : MODE_MAP_POST;
  m.fn = fn;
  m.ctx = ctx;
  return run_mutator(&m, root, out);
}

int ffk_structural_mutate(const ffk_any *root, ffk_map_fn fn, void *ctx, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (root == NULL || fn == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_mutate: root, fn and out must not be NULL");
  ffk_mutator m;
  memset(&m, 0, sizeof m);
  m.mode = MODE_MUTATE;
  m.fn = fn;
  m.ctx = ctx;
  return run_mutator(&m, root, out);
}

int ffk_mutator_mutate(ffk_mutator *mutator, const ffk_any *value, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (mutator == NULL || value == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_mutator_mutate: mutator, value and out must not be NULL");
  return mutate_value(mutator, value, out);
}

int ffk_mutator_default_mutate(ffk_mutator *mutator, const ffk_any *value, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (mutator == NULL || value == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_mutator_default_mutate: mutator, value and out must not be NULL");
  /* Not counted by mutate_value: bounded as the children it rewrites go through mutate_value. */
  if (mutator->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ++mutator->depth;
  int rc = default_mutate(mutator, value, out);
  --mutator->depth;
  return rc;
}

static int remap_key_check(const char *fn, ffk_mutator *m, const ffk_any *var) {
  if (m == NULL || var == NULL) return ffk_error_set(FFK_ERR_VALUE, "%s: mutator and var must not be NULL", fn);
  if (!ffk_any_is_object(var) || var->v_obj == NULL)
    return ffk_error_set(FFK_ERR_TYPE, "Variable-remap key must be an object-backed value, got %s",
                         ffk_any_type_name(var));
  return 0;
}

int ffk_mutator_var_remap_get(ffk_mutator *mutator, const ffk_any *var, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_mutator_var_remap_get: out must not be NULL");
  if (remap_key_check("ffk_mutator_var_remap_get", mutator, var) != 0) return -1;
  int64_t pos = remap_find(mutator, var->v_obj);
  if (pos < 0) return 0;
  return ffk_any_to_owned(&mutator->remap.entries[pos].value, out) == 0 ? 1 : -1;
}

int ffk_mutator_var_remap_set(ffk_mutator *mutator, const ffk_any *var, const ffk_any *value) {
  if (remap_key_check("ffk_mutator_var_remap_set", mutator, var) != 0) return -1;
  if (value == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_mutator_var_remap_set: value must not be NULL");
  return remap_put(mutator, var->v_obj, value);
}

ffk_def_region_kind ffk_mutator_region(const ffk_mutator *mutator) {
  return mutator ? mutator->region : FFK_DEF_REGION_NONE;
}

ffk_def_region_kind ffk_mutator_enter_region(ffk_mutator *mutator, ffk_def_region_kind kind) {
  return mutator ? region_enter(&mutator->region, kind) : FFK_DEF_REGION_NONE;
}

void ffk_mutator_leave_region(ffk_mutator *mutator, ffk_def_region_kind previous) {
  if (mutator) mutator->region = previous;
}
