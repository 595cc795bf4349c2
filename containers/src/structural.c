/*
 * structural.c - equality and first mismatch that look inside containers and reflected
 * objects (ffikit/structural.h), and the walk they share with hashing (structural_hash.c;
 * its state and hot helpers are structural_walk.h); deep copy is structural_copy.c.
 *
 * The walks recurse over "nodes": the five container types, objects of reflected types
 * (ffikit/reflect.h) and objects of registered types with a structural hook (the type
 * attributes FFK_ATTR_S_EQUAL / FFK_ATTR_S_HASH). A reflected object's fields are read
 * one at a time (read_field), so a concurrent field write is seen whole or not at all.
 * Each walk runs inside one read section (ffikit/reflect.h), hooks included: fields are
 * borrowed, never retained, and a value a concurrent writer replaces stays alive until
 * the walk ends, and so does everything the walk reached through it.
 * Each walk keeps the stack of nodes it is inside, which is how cycles end, and a depth
 * limit so that deep nesting is an error rather than a stack overflow.
 *
 * First mismatch is the equality walk with `paths` on: when a comparison fails, each
 * enclosing level pushes its step (index, key or field) for both sides on the way out,
 * so the steps are collected deepest first and only on the failing path; a walk that
 * finds everything equal records nothing. Hooks take part through two Functions the
 * walk hands them (walk_fn), which call back into the same walk.
 *
 * Objects of other types (functions, tensors, opaque handles, types without reflection
 * or hooks) are leaves: they compare by identity. ffikit's built-in types keep their
 * built-in semantics: hooks are consulted for registered types only.
 */
#include "structural_walk.h"

#include <stdlib.h>
#include <string.h>

static void memo_place(walk_memo *m, memo_slot slot) {
  uint64_t i = memo_index(m, slot.a, slot.b);
  while (m->slots[i].a != NULL) i = (i + 1) & (uint64_t)(m->cap - 1);
  m->slots[i] = slot;
  ++m->size;
}

int ffk_walk__memo_add(walk_memo *m, const ffk_object *a, const ffk_object *b, uint64_t value, bool cyclic) {
  if (2 * (m->size + 1) > m->cap) { /* at most half full */
    walk_memo bigger = {ffk_mem_calloc((size_t)(m->cap ? 2 * m->cap : 64), sizeof(memo_slot)), m->cap ? 2 * m->cap : 64, 0};
    if (bigger.slots == NULL) return -1;
    for (int64_t i = 0; i < m->cap; ++i)
      if (m->slots[i].a != NULL) memo_place(&bigger, m->slots[i]);
    ffk_mem_free(m->slots);
    *m = bigger;
  }
  memo_place(m, (memo_slot){a, b, value, cyclic});
  return 0;
}

walk *ffk_walk__new(bool paths, uint32_t flags, bool look_inside) {
  walk *w = ffk_mem_alloc(sizeof(walk));
  if (w == NULL) return NULL;
  w->depth = 0;
  w->done = (walk_memo){NULL, 0, 0};
  memset(w->recent, 0, sizeof w->recent);
  w->infos = NULL;
  w->ninfos = w->capinfos = 0;
  w->paths = paths;
  w->hook_failed = false;
  w->steps = NULL;
  w->nsteps = w->capsteps = 0;
  w->fn_ctx[0] = w->fn_ctx[1] = NULL;
  w->fns[0] = w->fns[1] = NULL;
  w->cyclic = false;
  w->kept = NULL;
  w->nkept = w->capkept = 0;
  w->region = (flags & FFK_STRUCTURAL_MAP_FREE_VARS) ? REGION_PATTERN : REGION_NONE;
  w->look_inside = look_inside;
  w->met_binding = false;
  w->took_same = false;
  w->bound_a = w->bound_b = (walk_memo){NULL, 0, 0};
  w->var_order = w->dag_order = 0;
  return w;
}

int ffk_walk__keep(walk *w, ffk_object *o) {
  if (w->nkept == w->capkept) {
    int64_t cap = w->capkept ? 2 * w->capkept : 16;
    ffk_object **more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) {
      ffk_object_release(o);
      return -1;
    }
    if (w->nkept > 0) memcpy(more, w->kept, (size_t)w->nkept * sizeof *more);
    ffk_mem_free(w->kept);
    w->kept = more;
    w->capkept = cap;
  }
  w->kept[w->nkept++] = o;
  return 0;
}

/* Drops the recorded steps past the first `mark`. */
static void steps_truncate(walk *w, int32_t mark) {
  for (; w->nsteps > mark; --w->nsteps) {
    step_pair *s = &w->steps[w->nsteps - 1];
    ffk_any_release(&s->key[0]);
    ffk_any_release(&s->key[1]);
  }
}

void ffk_walk__free(walk *w) {
  ffk_mem_free(w->done.slots);
  ffk_mem_free(w->bound_a.slots);
  ffk_mem_free(w->bound_b.slots);
  for (int64_t i = 0; i < w->nkept; ++i) ffk_object_release(w->kept[i]);
  ffk_mem_free(w->kept);
  for (int32_t i = 0; i < w->ninfos; ++i) {
    ffk_object_release((ffk_object *)w->infos[i]->eq_hook);
    ffk_object_release((ffk_object *)w->infos[i]->hash_hook);
    ffk_mem_free(w->infos[i]);
  }
  ffk_mem_free(w->infos);
  steps_truncate(w, 0);
  ffk_mem_free(w->steps);
  for (int i = 0; i < 2; ++i) {
    if (w->fns[i] == NULL) continue;
    w->fn_ctx[i]->w = NULL; /* a hook that kept the Function gets an error from it from now on */
    ffk_object_release((ffk_object *)w->fns[i]);
  }
  ffk_mem_free(w);
}

/* FNV-1a of a type key, so that a hash does not depend on the order types were registered. */
static uint64_t hash_key(const char *key) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (const unsigned char *p = (const unsigned char *)key; *p; ++p) h = (h ^ *p) * UINT64_C(0x100000001b3);
  return h;
}

/* Looks hook `name` up on type `t` into *out (a new reference or NULL). 0, or -1 with a TypeError or the lookup's error. */
static int find_hook(int32_t t, const char *name, ffk_function **out) {
  *out = NULL;
  if (t < FFK_TYPE_STATIC_END) return 0; /* built-in types keep built-in semantics */
  ffk_any v;
  int found = ffk_type_get_attr(t, name, &v);
  if (found <= 0) return found;
  if (!ffk_any_is_object(&v) || !ffk_type_is_instance(v.type_index, FFK_TYPE_FUNCTION)) {
    ffk_error_set(FFK_ERR_TYPE, "the `%s` attribute of type `%s` is a `%s`, not a Function", name, ffk_type_key(t),
                  ffk_any_type_name(&v));
    ffk_any_release(&v);
    return -1;
  }
  *out = (ffk_function *)v.v_obj;
  return 0;
}

FFK_NOINLINE const type_info *ffk_walk__info_make(walk *w, int32_t t) {
  type_info **slot = &w->recent[(uint32_t)t % RECENT_TYPES];
  for (int32_t i = 0; i < w->ninfos; ++i)
    if (w->infos[i]->type == t) return *slot = w->infos[i];
  if (w->ninfos == w->capinfos) {
    int32_t cap = w->capinfos ? 2 * w->capinfos : 8;
    type_info **more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) return NULL;
    if (w->ninfos > 0) memcpy(more, w->infos, (size_t)w->ninfos * sizeof *more);
    ffk_mem_free(w->infos);
    w->infos = more;
    w->capinfos = cap;
  }
  int32_t n = ffk_type_num_fields(t);
  if (n < 0) return NULL;
  type_info *info = ffk_mem_alloc(sizeof(type_info) + (size_t)n * sizeof(const ffk_field_info *));
  if (info == NULL) return NULL;
  info->type = t;
  info->n = 0;
  info->fields = (const ffk_field_info **)(info + 1);
  info->eq_hook = info->hash_hook = NULL;
  info->reflected = ffk_type_is_reflected(t);
  info->has_def = false;
  info->key_hash = hash_key(ffk_type_key(t));
  info->skind = FFK_S_KIND_TREE;
  ffk_any kind;
  int found = ffk_type_get_attr(t, FFK_ATTR_S_KIND, &kind);
  if (found < 0) {
    ffk_mem_free(info);
    return NULL;
  }
  if (found == 1) {
    bool valid = kind.type_index == FFK_TYPE_INT && kind.v_int >= FFK_S_KIND_TREE && kind.v_int <= FFK_S_KIND_SINGLETON;
    if (valid) info->skind = (int)kind.v_int;
    else
      ffk_error_set(FFK_ERR_VALUE, "the `%s` attribute of type `%s` is not a structural kind (an int from 1 to 5)",
                    FFK_ATTR_S_KIND, ffk_type_key(t));
    ffk_any_release(&kind);
    if (!valid) {
      ffk_mem_free(info);
      return NULL;
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) {
      ffk_mem_free(info);
      return NULL;
    }
    if (f->flags & FFK_FIELD_COMPARE_OFF) continue;
    info->fields[info->n++] = f;
    if (f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE)) info->has_def = true;
  }
  if (find_hook(t, FFK_ATTR_S_EQUAL, &info->eq_hook) != 0 || find_hook(t, FFK_ATTR_S_HASH, &info->hash_hook) != 0) {
    ffk_object_release((ffk_object *)info->eq_hook);
    ffk_mem_free(info);
    return NULL;
  }
  info->vkind = !info->reflected && info->eq_hook == NULL && info->hash_hook == NULL && info->skind == FFK_S_KIND_TREE
                    ? KIND_KEY
                    : KIND_OBJECT;
  w->infos[w->ninfos++] = info;
  return *slot = info;
}

int ffk_structural_too_deep(void) {
  return ffk_error_set(FFK_ERR_RUNTIME, "containers and objects nested deeper than %d levels", FFK_STRUCTURAL_MAX_DEPTH);
}

/* ---- Mismatch steps. ------------------------------------------------------------ */

/* Records one step for each side (keys borrowed, retained). 0, or -1 with a MemoryError. */
static int push_step(walk *w, int kind_a, const ffk_any *key_a, int kind_b, const ffk_any *key_b) {
  if (w->nsteps == w->capsteps) {
    int32_t cap = w->capsteps ? 2 * w->capsteps : 16;
    step_pair *more = ffk_mem_alloc((size_t)cap * sizeof *more);
    if (more == NULL) return -1;
    if (w->nsteps > 0) memcpy(more, w->steps, (size_t)w->nsteps * sizeof *more);
    ffk_mem_free(w->steps);
    w->steps = more;
    w->capsteps = cap;
  }
  step_pair *s = &w->steps[w->nsteps];
  if (ffk_any_to_owned(key_a, &s->key[0]) != 0) return -1;
  if (ffk_any_to_owned(key_b, &s->key[1]) != 0) {
    ffk_any_release(&s->key[0]);
    return -1;
  }
  s->kind[0] = kind_a;
  s->kind[1] = kind_b;
  ++w->nsteps;
  return 0;
}

static int push_index(walk *w, int kind_a, int kind_b, int64_t i) {
  ffk_any key = ffk_any_int(i);
  return push_step(w, kind_a, &key, kind_b, &key);
}

/* An attribute step `.name` on both sides. */
static int push_attr(walk *w, const char *name, size_t size) {
  ffk_string *s = ffk_string_new(name, size);
  if (s == NULL) return -1;
  ffk_any key = ffk_any_object_steal((ffk_object *)s);
  int rc = push_step(w, FFK_ACCESS_ATTR, &key, FFK_ACCESS_ATTR, &key);
  ffk_any_release(&key);
  return rc;
}

/* ---- The Functions hooks receive. ------------------------------------------------- */

static int equal(walk *w, const ffk_any *x, const ffk_any *y);
static int equal_node(walk *w, const ffk_any *x, const ffk_any *y, int kx, const type_info *info);

walk *ffk_walk__of(void *self, const char *what) {
  walk *w = ((walk_fn_ctx *)self)->w;
  if (w == NULL)
    ffk_error_set(FFK_ERR_RUNTIME, "the `%s` Function a structural hook receives is valid only during that hook's call",
                  what);
  return w;
}

/*
 * Keeps an object a hook passes to `equal` or `hash` until the walk ends: the hook may
 * have made it (and what it holds) for the call alone, and the memo may name it.
 */
int ffk_walk__keep_argument(walk *w, const ffk_any *v) {
  if (!ffk_any_is_object(v) || v->v_obj == NULL) return 0;
  ffk_object_retain(v->v_obj);
  return ffk_walk__keep(w, v->v_obj);
}

/*
 * A region kind a hook passes to `equal` or `hash` (tvm_ffi's def_region argument: a
 * bool or ffk_def_region_kind's int) as the REGION_* the call walks in: 0 (False) keeps
 * the hook's own region, 1 (True) is a pattern region, 2 a simple one (inside a pattern
 * region the pattern stays, as for fields). 0, or -1 with a TypeError / ValueError naming
 * the value and `what` (the callback's name).
 */
int ffk_walk__hook_region(const walk *w, const ffk_any *v, const char *what, int *region) {
  if (v->type_index != FFK_TYPE_BOOL && v->type_index != FFK_TYPE_INT)
    return ffk_error_set(FFK_ERR_TYPE, "%s: def_region must be a bool or an int (DefRegionKind), not a `%s`", what,
                         ffk_any_type_name(v));
  switch (v->v_int) {
    case 0: *region = w->region; return 0;
    case 1: *region = REGION_PATTERN; return 0;
    case 2: *region = w->region == REGION_PATTERN ? REGION_PATTERN : REGION_SIMPLE; return 0;
    default:
      return ffk_error_set(FFK_ERR_VALUE, "%s: def_region %lld is not a DefRegionKind (0 NONE, 1 DEF_PATTERN, "
                           "2 DEF_SIMPLE)", what, (long long)v->v_int);
  }
}

/* A step name a hook passes (str or None: no step) in *name. 0, or -1 with a TypeError. */
static int hook_step_name(const ffk_any *v, const char *what, const char **name, size_t *size) {
  *name = NULL;
  *size = 0;
  if (v->type_index == FFK_TYPE_NONE || ffk_any_as_str(v, name, size) == 0) return 0;
  ffk_error_clear();
  return ffk_error_set(FFK_ERR_TYPE, "%s: the field name must be a str or None, not a `%s`", what,
                       ffk_any_type_name(v));
}

/*
 * equal(x, y[, attr]) or, tvm_ffi's form, equal(x, y, def_region[, field_name]) -> bool,
 * inside the walk of the hook that received it: a bool or int third argument is a region
 * kind (ffk_walk__hook_region), a str or None one a step name.
 */
static int walk_equal_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  walk *w = ffk_walk__of(self, "equal");
  if (w == NULL) return -1;
  if (nargs < 2 || nargs > 4)
    return ffk_error_set(FFK_ERR_TYPE, "equal(x, y, attr=None) or equal(x, y, def_region, field_name=None) takes "
                         "2 to 4 arguments, got %d", (int)nargs);
  const char *attr = NULL;
  size_t attr_size = 0;
  int region = w->region;
  if (nargs >= 3) {
    bool kind_given = args[2].type_index == FFK_TYPE_BOOL || args[2].type_index == FFK_TYPE_INT;
    if (!kind_given && nargs == 4)
      return ffk_error_set(FFK_ERR_TYPE, "equal(x, y, def_region, field_name): def_region must be a bool or an int "
                           "(DefRegionKind), not a `%s`", ffk_any_type_name(&args[2]));
    if (kind_given) {
      if (ffk_walk__hook_region(w, &args[2], "equal(x, y, def_region, field_name)", &region) != 0) return -1;
      if (nargs == 4 && hook_step_name(&args[3], "equal(x, y, def_region, field_name)", &attr, &attr_size) != 0)
        return -1;
    } else if (hook_step_name(&args[2], "equal(x, y, attr)", &attr, &attr_size) != 0) {
      return -1;
    }
  }
  if (ffk_walk__keep_argument(w, &args[0]) != 0 || ffk_walk__keep_argument(w, &args[1]) != 0) return -1;
  int32_t mark = w->nsteps;
  int outer = w->region;
  w->region = region;
  int rc = equal(w, &args[0], &args[1]);
  w->region = outer;
  if (rc < 0) return -1;
  if (rc == 0 && w->paths) {
    if (w->hook_failed) {
      steps_truncate(w, mark); /* an earlier call of this hook found the first mismatch */
    } else {
      if (attr != NULL && push_attr(w, attr, attr_size) != 0) return -1;
      w->hook_failed = true;
    }
  }
  *result = ffk_any_bool(rc == 1);
  return 0;
}

ffk_function *ffk_walk__fn(walk *w, int which, ffk_safe_call call) {
  if (w->fns[which] != NULL) return w->fns[which];
  walk_fn_ctx *c = ffk_mem_alloc(sizeof *c);
  if (c == NULL) return NULL;
  c->w = w;
  ffk_function *f = ffk_function_new(which == 0 ? "structural_equal.equal" : "structural_hash.hash", call, c, ffk_mem_free);
  if (f == NULL) return NULL;
  w->fn_ctx[which] = c;
  w->fns[which] = f;
  return f;
}


/* ---- Equality. ------------------------------------------------------------------ */

static int equal_sequences(walk *w, ffk_object *a, ffk_object *b) {
  seq_view sa, sb;
  if (seq_open(a, &sa) != 0) return -1;
  if (seq_open(b, &sb) != 0) {
    seq_close(&sa); /* nothing read through it yet */
    return -1;
  }
  int64_t mark = w->done.size;
  int64_t n = sa.size < sb.size ? sa.size : sb.size, i = 0;
  int rc = w->paths || sa.size == sb.size ? 1 : 0; /* without paths a length difference answers at once */
  while (rc == 1 && i < n) {
    rc = equal(w, &sa.data[i], &sb.data[i]);
    if (rc == 1) ++i;
  }
  if (rc == 0 && w->paths && push_index(w, FFK_ACCESS_ARRAY_ITEM, FFK_ACCESS_ARRAY_ITEM, i) != 0) rc = -1;
  if (rc == 1 && sa.size != sb.size) {
    rc = 0;
    bool a_short = sa.size < sb.size;
    if (push_index(w, a_short ? FFK_ACCESS_ARRAY_ITEM_MISSING : FFK_ACCESS_ARRAY_ITEM,
                   a_short ? FFK_ACCESS_ARRAY_ITEM : FFK_ACCESS_ARRAY_ITEM_MISSING, n) != 0)
      rc = -1;
  }
  if (close_seq(w, &sa, mark) != 0) rc = -1;
  if (close_seq(w, &sb, mark) != 0) rc = -1;
  return rc;
}

/*
 * `key` (borrowed) as the other side names it: what it is bound to when it is a bound
 * variable or dag node (`bound` is bound_a or bound_b), else itself; *hash becomes the
 * returned key's hash.
 */
static ffk_any bound_key(const walk_memo *bound, const ffk_any *key, uint64_t *hash) {
  if (bound->size == 0 || !ffk_any_is_object(key) || key->v_obj == NULL) return *key;
  const memo_slot *s = memo_find(bound, key->v_obj, NULL);
  if (s == NULL) return *key;
  ffk_any other = borrowed_object((ffk_object *)(uintptr_t)s->value);
  *hash = ffk_any_hash(&other);
  return other;
}

/* Binds a to b both ways (a variable or dag node pair), keeping both alive. 0, or -1 with a MemoryError. */
static int bind(walk *w, ffk_object *a, ffk_object *b) {
  ffk_object_retain(a);
  if (ffk_walk__keep(w, a) != 0) return -1;
  ffk_object_retain(b);
  if (ffk_walk__keep(w, b) != 0) return -1;
  if (ffk_walk__memo_add(&w->bound_a, a, NULL, (uint64_t)(uintptr_t)b, false) != 0) return -1;
  return ffk_walk__memo_add(&w->bound_b, b, NULL, (uint64_t)(uintptr_t)a, false);
}

static int equal_mappings(walk *w, ffk_object *a, ffk_object *b) {
  map_view ma, mb;
  if (map_open(a, &ma) != 0) return -1;
  if (map_open(b, &mb) != 0) {
    map_close(&ma);
    return -1;
  }
  int64_t mark = w->done.size;
  int rc = w->paths || ma.table->size == mb.table->size ? 1 : 0;
  int64_t pos = 0;
  for (ffk_table_entry *e; rc == 1 && (e = ffk_table__next(ma.table, &pos)) != NULL;) {
    uint64_t kh = e->hash;
    ffk_any key = bound_key(&w->bound_a, &e->key, &kh); /* a's key as b names it */
    int64_t at = ffk_table__find(mb.table, &key, kh);
    if (at < 0) {
      rc = 0;
      if (w->paths && push_step(w, FFK_ACCESS_MAP_ITEM, &e->key, FFK_ACCESS_MAP_ITEM_MISSING, &key) != 0) rc = -1;
      break;
    }
    rc = equal(w, &e->value, &mb.table->entries[at].value);
    if (rc == 0 && w->paths && push_step(w, FFK_ACCESS_MAP_ITEM, &e->key, FFK_ACCESS_MAP_ITEM, &key) != 0) rc = -1;
  }
  if (rc == 1 && ma.table->size != mb.table->size) { /* paths only: the first key b has and a lacks */
    pos = 0;
    for (ffk_table_entry *e; rc == 1 && (e = ffk_table__next(mb.table, &pos)) != NULL;) {
      uint64_t kh = e->hash;
      ffk_any key = bound_key(&w->bound_b, &e->key, &kh);
      if (ffk_table__find(ma.table, &key, kh) >= 0) continue;
      rc = push_step(w, FFK_ACCESS_MAP_ITEM_MISSING, &key, FFK_ACCESS_MAP_ITEM, &e->key) != 0 ? -1 : 0;
    }
  }
  if (close_map(w, &ma, mark) != 0) rc = -1;
  if (close_map(w, &mb, mark) != 0) rc = -1;
  return rc;
}

/*
 * Field `f` of two objects of its type: 1, 0 or -1. Fields are borrowed (see read_field).
 * Inlined into its one caller, the field loop of equal_objects: a call per field was a
 * third of a tree walk's instructions.
 */
static inline __attribute__((always_inline)) int equal_field(walk *w, const ffk_field_info *f, const ffk_object *a, const ffk_object *b) {
  ffk_any fa, fb;
  if (f->storage == FFK_FIELD_STORAGE_INT || f->storage == FFK_FIELD_STORAGE_OBJECT) { /* the common cases inline */
    (void)ffk_field_peek_unchecked(f, a, &fa); /* 0, borrowed: these storages cannot fail */
    (void)ffk_field_peek_unchecked(f, b, &fb);
    if (f->storage == FFK_FIELD_STORAGE_INT) return fa.v_int == fb.v_int;
    if (fa.v_obj == fb.v_obj && (fa.v_obj == NULL || !w->look_inside)) { /* one object (or both None) equals itself */
      if (fa.v_obj != NULL && fa.type_index != FFK_TYPE_STRING) w->took_same = true; /* a str compares alike either way */
      return 1;
    }
    if (fa.type_index == FFK_TYPE_NONE || fb.type_index == FFK_TYPE_NONE) return 0;
    if (fa.type_index == FFK_TYPE_STRING && fb.type_index == FFK_TYPE_STRING) { /* ffk_any_equal's answer, inline */
      const ffk_string *sa = (const ffk_string *)fa.v_obj, *sb = (const ffk_string *)fb.v_obj;
      return sa->size == sb->size && memcmp(sa->data, sb->data, sa->size) == 0;
    }
    if (w->bound_a.size != 0 && fa.type_index == fb.type_index) { /* a bound variable or dag node: equal_node's answer */
      const type_info *hit = w->recent[(uint32_t)fa.type_index % RECENT_TYPES];
      if (hit != NULL && hit->type == fa.type_index && hit->vkind == KIND_OBJECT &&
          (hit->skind == FFK_S_KIND_VAR || hit->skind == FFK_S_KIND_DAG)) {
        const memo_slot *s = memo_find(&w->bound_a, fa.v_obj, NULL);
        if (s != NULL) {
          w->met_binding = true;
          return s->value == (uint64_t)(uintptr_t)fb.v_obj;
        }
      }
    }
    return equal(w, &fa, &fb);
  }
  bool owned_a, owned_b;
  if (read_field(f, a, &fa, &owned_a) != 0) return -1;
  if (read_field(f, b, &fb, &owned_b) != 0) {
    drop_field(&fa, owned_a);
    return -1;
  }
  int rc;
  if (!w->look_inside && fa.type_index == fb.type_index && fa.type_index >= FFK_TYPE_OBJECT_BEGIN &&
      fa.v_obj == fb.v_obj) {
    w->took_same = true;
    rc = 1; /* one object equals itself */
  } else {
    rc = equal(w, &fa, &fb);
  }
  drop_field(&fa, owned_a);
  drop_field(&fb, owned_b);
  return rc;
}

/*
 * Two objects of one type through its __s_equal__ hook: hook(a, b, equal) -> bool. The
 * steps a failing `equal` call recorded stay when the hook answers False; a True answer
 * drops any, and a False answer without a failing call reports the objects themselves.
 */
static int equal_by_hook(walk *w, ffk_object *a, ffk_object *b, ffk_function *hook) {
  ffk_function *fn = ffk_walk__fn(w, 0, walk_equal_call);
  if (fn == NULL) return -1;
  ffk_any args[3] = {borrowed_object(a), borrowed_object(b), borrowed_object((ffk_object *)fn)};
  int32_t mark = w->nsteps;
  bool outer_failed = w->hook_failed;
  w->hook_failed = false;
  ffk_any result;
  int rc = ffk_function_call(hook, args, 3, &result);
  if (rc == 0) {
    if (result.type_index == FFK_TYPE_BOOL || result.type_index == FFK_TYPE_INT) {
      rc = result.v_int != 0;
    } else {
      rc = ffk_error_set(FFK_ERR_TYPE, "the __s_equal__ hook of `%s` returned a `%s`, not a bool",
                         ffk_type_key(a->type_index), ffk_any_type_name(&result));
    }
    ffk_any_release(&result);
  }
  if (rc != 0 || !w->hook_failed) steps_truncate(w, mark);
  w->hook_failed = outer_failed;
  return rc;
}

/*
 * Two distinct objects of one type: its __s_equal__ hook, or (a reflected type) every
 * field without FFK_FIELD_COMPARE_OFF equal, in field order, stopping at the first
 * difference (whose `.name` step is recorded), or (a plain type with only __s_hash__)
 * identity. hash_object follows the same choice.
 */
static int equal_objects(walk *w, ffk_object *a, ffk_object *b, const type_info *info) {
  if (info->eq_hook != NULL) return equal_by_hook(w, a, b, info->eq_hook); /* info lives as long as the walk */
  if (!info->reflected) return a == b; /* a plain type with only a hash hook or a kind: identity */
  int rc = 1;
  int32_t i = 0;
  int outer = w->region;
  for (; i < info->n; ++i) { /* one call site of equal_field, so that it is inlined */
    const ffk_field_info *f = info->fields[i];
    if (FFK_UNLIKELY(info->has_def)) w->region = f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE) ? field_region(f, outer) : outer;
    rc = equal_field(w, f, a, b);
    if (rc != 1) break;
  }
  w->region = outer;
  if (rc == 0 && w->paths) {
    const char *name = info->fields[i]->name;
    if (push_attr(w, name, strlen(name)) != 0) return -1;
  }
  return rc;
}

static int equal(walk *w, const ffk_any *x, const ffk_any *y) {
  if (x->type_index == y->type_index && (x->type_index == FFK_TYPE_INT || x->type_index == FFK_TYPE_NONE))
    return x->type_index == FFK_TYPE_NONE || x->v_int == y->v_int; /* ffk_any_equal's answer, without the call */
  const type_info *info = NULL, *info_y = NULL;
  int kx = value_kind(w, x, &info);
  if (kx < 0) return -1;
  int ky = y->type_index == x->type_index ? kx : value_kind(w, y, &info_y); /* one type, one kind */
  if (ky < 0) return -1;
  if (kx != ky) return 0; /* values of different kinds never compare equal */
  if (kx == KIND_KEY) return ffk_any_equal(x, y);
  if (kx == KIND_SHAPE) return ffk_shape_equal((const ffk_shape *)x->v_obj, (const ffk_shape *)y->v_obj);
  if (x->type_index != y->type_index) return 0; /* another container or object type */
  /* A TREE node (every container, most objects) needs none of equal_node's kind steps: for
     it they change nothing, and out of line they stay out of a plain tree's way. */
  if (FFK_UNLIKELY(kx == KIND_OBJECT && info->skind != FFK_S_KIND_TREE)) return equal_node(w, x, y, kx, info);
  ffk_object *a = x->v_obj, *b = y->v_obj;
  if (a == b && (!w->look_inside || w->depth == 0)) {
    if (w->depth > 0 && !w->look_inside) w->took_same = true;
    return 1;
  }
  bool may_recur = shareable(a) && shareable(b); /* else (a, b) is neither on the stack nor recorded */
  if (may_recur && (on_stack(w, a, b) || memo_find(&w->done, a, b) != NULL)) return 1;
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = a;
  w->b[w->depth] = b;
  ++w->depth;
  int rc = kx == KIND_OBJECT            ? equal_objects(w, a, b, info)
           : is_sequence(x->type_index) ? equal_sequences(w, a, b)
                                        : equal_mappings(w, a, b);
  --w->depth;
  if (rc == 1 && may_recur && ffk_walk__memo_add(&w->done, a, b, 0, false) != 0) return -1;
  return rc;
}

/*
 * Two nodes of one type and kind `kx` (a container or KIND_OBJECT with `info`): their
 * structural kind decides (singleton, const-tree, var, dag), and a variable or dag node
 * binds. Out of line, so that equal's path for TREE nodes stays small.
 */
static FFK_NOINLINE int equal_node(walk *w, const ffk_any *x, const ffk_any *y, int kx, const type_info *info) {
  ffk_object *a = x->v_obj, *b = y->v_obj;
  int sk = kx == KIND_OBJECT ? info->skind : FFK_S_KIND_TREE;
  if (sk == FFK_S_KIND_SINGLETON) return a == b;
  /* An object equals itself; a walk that looks inside (equal_walk) still walks it below the
     top, so that the variables inside bind to themselves (and a later x != y). */
  if (a == b && (!w->look_inside || w->depth == 0 || sk == FFK_S_KIND_CONST_TREE)) {
    if (!w->look_inside && w->depth > 0 && sk != FFK_S_KIND_CONST_TREE) w->took_same = true;
    return 1;
  }
  bool binds = sk == FFK_S_KIND_VAR || sk == FFK_S_KIND_DAG;
  if (binds) { /* bound already: to b and nothing else */
    w->met_binding = true;
    const memo_slot *s = memo_find(&w->bound_a, a, NULL);
    if (s != NULL) return s->value == (uint64_t)(uintptr_t)b;
    if (memo_find(&w->bound_b, b, NULL) != NULL) return 0;
  }
  bool may_recur = shareable(a) && shareable(b); /* else (a, b) is neither on the stack nor recorded */
  if (may_recur && (on_stack(w, a, b) || memo_find(&w->done, a, b) != NULL)) return 1;
  if (w->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  w->a[w->depth] = a;
  w->b[w->depth] = b;
  ++w->depth;
  int outer = w->region;
  if (sk == FFK_S_KIND_VAR && outer == REGION_SIMPLE) w->region = REGION_NONE; /* its fields are uses */
  int rc = kx == KIND_OBJECT            ? equal_objects(w, a, b, info)
           : is_sequence(x->type_index) ? equal_sequences(w, a, b)
                                        : equal_mappings(w, a, b);
  w->region = outer;
  --w->depth;
  if (rc == 1 && sk == FFK_S_KIND_VAR && a != b && outer == REGION_NONE) rc = 0; /* a free variable: itself only */
  if (rc == 1 && binds && bind(w, a, b) != 0) return -1;
  if (rc == 1 && may_recur && ffk_walk__memo_add(&w->done, a, b, 0, false) != 0) return -1;
  return rc;
}

int ffk_walk__check_flags(uint32_t flags) {
  if ((flags & ~(uint32_t)FFK_STRUCTURAL_MAP_FREE_VARS) == 0) return 0;
  return ffk_error_set(FFK_ERR_VALUE, "structural equality and hash: unknown option flags 0x%x",
                       (unsigned)(flags & ~(uint32_t)FFK_STRUCTURAL_MAP_FREE_VARS));
}

/* Builds the two paths from the walk's steps (deepest first). 0, or -1 with both NULL. */
static int build_paths(walk *w, ffk_object **lhs, ffk_object **rhs) {
  ffk_object *p[2] = {ffk_access_path_root(), ffk_access_path_root()};
  for (int side = 0; side < 2; ++side) {
    for (int32_t i = w->nsteps - 1; p[side] != NULL && i >= 0; --i) {
      ffk_object *next = ffk_access_path_extend(p[side], w->steps[i].kind[side], &w->steps[i].key[side]);
      ffk_object_release(p[side]);
      p[side] = next;
    }
  }
  if (p[0] == NULL || p[1] == NULL) {
    ffk_object_release(p[0]);
    ffk_object_release(p[1]);
    return -1;
  }
  *lhs = p[0];
  *rhs = p[1];
  return 0;
}

/*
 * The equality walk (with paths into *lhs / *rhs when they are not NULL): 1, 0 or -1.
 *
 * Identity. tvm_ffi looks into an object compared with itself, so that the variables in
 * it bind to themselves: [x, Lambda(x, x)] differs from [x, Lambda(y, y)], since x is
 * bound to x. Doing so always would make every comparison of shared structure walk it
 * (and Python's `l == l` reach the depth limit). So the first walk takes an object as
 * equal to itself at once; if it compared no variable or dag node, bindings played no
 * part in what it walked, and a variable inside a skipped object could only have bound
 * to itself, which nothing met: its answer is the looking walk's. Nor does it matter when
 * the walk took no object as equal to itself without looking inside (w->took_same): the
 * looking walk would then have made every step it made, in the same order, so it would
 * answer alike (two trees built apart, the common case with free variables, are walked
 * once). Otherwise the walk runs again, looking inside; the two agree wherever no
 * variable is met, so the first mismatch is the same place either way.
 */
static int equal_walk(const ffk_any *a, const ffk_any *b, uint32_t flags, ffk_object **lhs, ffk_object **rhs) {
  void *section = ffk_read_section_enter();
  if (section == NULL) return -1;
  bool paths = lhs != NULL;
  walk *w = ffk_walk__new(paths, flags, false);
  int rc = w == NULL ? -1 : equal(w, a, b);
  if (rc >= 0 && w->met_binding && w->took_same) {
    ffk_walk__free(w);
    w = ffk_walk__new(paths, flags, true);
    rc = w == NULL ? -1 : equal(w, a, b);
  }
  if (paths && rc == 0) rc = build_paths(w, lhs, rhs) == 0 ? 0 : -1;
  if (w != NULL) ffk_walk__free(w);
  ffk_read_section_exit(section);
  return rc;
}

int ffk_structural_equal(const ffk_any *a, const ffk_any *b) { return ffk_structural_equal_opts(a, b, 0); }

int ffk_structural_equal_opts(const ffk_any *a, const ffk_any *b, uint32_t flags) {
  if (a == NULL || b == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_equal: a value is NULL");
  if (ffk_walk__check_flags(flags) != 0) return -1;
  return equal_walk(a, b, flags, NULL, NULL);
}

int ffk_structural_first_mismatch(const ffk_any *a, const ffk_any *b, ffk_object **lhs_path,
                                  ffk_object **rhs_path) {
  return ffk_structural_first_mismatch_opts(a, b, 0, lhs_path, rhs_path);
}

int ffk_structural_first_mismatch_opts(const ffk_any *a, const ffk_any *b, uint32_t flags, ffk_object **lhs_path,
                                       ffk_object **rhs_path) {
  if (lhs_path != NULL) *lhs_path = NULL;
  if (rhs_path != NULL) *rhs_path = NULL;
  if (a == NULL || b == NULL || lhs_path == NULL || rhs_path == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_first_mismatch: the %s is NULL",
                         a == NULL || b == NULL ? "value" : "path out");
  if (ffk_walk__check_flags(flags) != 0) return -1;
  int rc = equal_walk(a, b, flags, lhs_path, rhs_path);
  return rc < 0 ? -1 : !rc; /* 1: a mismatch, with its paths */
}

