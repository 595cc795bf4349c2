/*
 * structural_visit.c - structural walk, visit, map and mutate (ffikit/structural_visit.h).
 *
 * Two engines. The visitor recurses over nodes (containers and reflected objects, as
 * structural_internal.h defines them) calling a walk callback before or after the
 * children, or a visit callback that owns the descent. The mutator rebuilds bottom-up:
 * each node's children are rewritten first, and the node is rebuilt only when one of them
 * came back as another value, so unchanged subtrees are shared by identity.
 *
 * Invariants:
 *  - Every recursion goes through visit_value / mutate_value, which count the depth and
 *    refuse to pass FFK_STRUCTURAL_MAX_DEPTH: the C stack stays bounded whatever the
 *    callbacks do (a callback that visits its own value again ends at the limit).
 *  - The nodes being descended into are kept on a path stack; a node met again while on
 *    it (a cycle) gets no descent the second time, so cycles end. A node on the path is
 *    alive: the root is held by the caller and each node below by its parent's snapshot,
 *    its container, or (the visitor's field reads are borrowed) the read section that the
 *    traversal holds open from start to end, which keeps a field value replaced meanwhile
 *    alive; the mutator's field values are owned until the descent into them returns.
 *  - A List or Dict is read through a snapshot (seq_open / map_open), never under its
 *    lock while a callback runs. A rebuilt List or Dict is a new one: the source is never
 *    changed, nor is any reflected object (a changed object is a shallow copy).
 *  - The mutator's remap table holds a reference to each key object and to each value
 *    until the call ends; a value is stored before the one it replaces is released.
 */
#include "structural_internal.h"

#include <ffikit/structural_visit.h>
#include <ffikit/unstable/reflect.h>

#include <stddef.h>
#include <string.h>

/* ---- What the two engines share ----------------------------------------------------- */

/*
 * The handle a hook or a registered callback receives (ffi.StructuralVisitor,
 * ffi.StructuralMutator): made on first need, it points at its engine only while the call
 * that made the engine runs; afterwards its methods are a RuntimeError, so a callback
 * that keeps the handle cannot reach freed state.
 */
typedef struct engine_handle {
  ffk_object header;
  void *engine; /* the ffk_visitor or ffk_mutator; NULL once the call has ended */
} engine_handle;

typedef struct visit_interrupt {
  ffk_object header;
  ffk_any value;
} visit_interrupt;

static int32_t g_interrupt_type = -1, g_visitor_type = -1, g_mutator_type = -1;

static void handle_deleter(void *self, int which) {
  if (which & FFK_DELETER_FREE) ffk_object_free(&((engine_handle *)self)->header);
}

int ffk_containers__define_visit_types(void) {
  static const ffk_field_def interrupt_fields[] = {
      {"value", offsetof(visit_interrupt, value), "Any", FFK_FIELD_HAS_DEFAULT, {0},
       "The payload returned to the caller when the traversal stops."},
  };
  ffk_type_def interrupt = {.key = "ffi.VisitInterrupt",
                            .parent_index = FFK_TYPE_OBJECT,
                            .instance_size = sizeof(visit_interrupt),
                            .fields = interrupt_fields,
                            .nfields = 1,
                            .doc = "A signal, with an optional payload, that stops a structural visit."};
  if ((g_interrupt_type = ffk_type_define(&interrupt)) < 0) return -1;
  if ((g_visitor_type = ffk_type_register("ffi.StructuralVisitor", FFK_TYPE_OBJECT)) < 0) return -1;
  if ((g_mutator_type = ffk_type_register("ffi.StructuralMutator", FFK_TYPE_OBJECT)) < 0) return -1;
  return 0;
}

int ffk_containers__make_interrupt(const ffk_any *payload, ffk_any *out) {
  ffk_object *o;
  if (ffk_object_create(g_interrupt_type, payload, payload ? 1 : 0, NULL, 0, &o) != 0) return -1;
  *out = ffk_any_object_steal(o);
  return 0;
}

bool ffk_containers__is_interrupt(const ffk_any *v) {
  return ffk_any_is_object(v) && v->type_index == g_interrupt_type;
}

/* A new reference to the handle of `engine` in *slot (made on first need). 0, or -1 (MemoryError). */
static int handle_get(engine_handle **slot, int32_t type, void *engine, ffk_any *out) {
  if (*slot == NULL) {
    *slot = (engine_handle *)ffk_object_alloc(type, sizeof(engine_handle), handle_deleter);
    if (*slot == NULL) return -1;
    (*slot)->engine = engine;
  }
  ffk_object_retain(&(*slot)->header);
  *out = ffk_any_object_steal(&(*slot)->header);
  return 0;
}

static void handle_end(engine_handle *h) {
  if (h == NULL) return;
  h->engine = NULL;
  ffk_object_release(&h->header);
}

/* The live engine behind handle `h` of `type`, or NULL with a TypeError / RuntimeError. */
static void *handle_engine(const char *api, const ffk_any *h, int32_t type) {
  if (!ffk_any_is_object(h) || h->type_index != type) {
    ffk_error_set(FFK_ERR_TYPE, "%s: expected %s, got %s", api, ffk_type_key(type), ffk_any_type_name(h));
    return NULL;
  }
  void *engine = ((engine_handle *)h->v_obj)->engine;
  if (engine == NULL)
    ffk_error_set(FFK_ERR_RUNTIME, "%s: this %s belongs to a traversal that has ended", api, ffk_type_key(type));
  return engine;
}

typedef struct path_stack {
  const ffk_object **items;
  int32_t size, cap;
} path_stack;

static bool on_path(const path_stack *p, const ffk_object *o) {
  for (int32_t i = p->size - 1; i >= 0; --i)
    if (p->items[i] == o) return true;
  return false;
}

static FFK_NOINLINE int path_grow(path_stack *p) {
  int32_t cap = p->cap ? 2 * p->cap : 32;
  const ffk_object **items = ffk_mem_alloc((size_t)cap * sizeof *items);
  if (items == NULL) return -1;
  if (p->size > 0) memcpy(items, p->items, (size_t)p->size * sizeof *items);
  ffk_mem_free(p->items);
  p->items = items;
  p->cap = cap;
  return 0;
}

static inline int path_push(path_stack *p, const ffk_object *o) {
  if (p->size == p->cap && path_grow(p) != 0) return -1;
  p->items[p->size++] = o;
  return 0;
}

static void path_free(path_stack *p) { ffk_mem_free(p->items); }

/* A pattern region holds for everything below it: entering another kind inside it changes nothing. */
static ffk_def_region_kind region_enter(ffk_def_region_kind *cur, ffk_def_region_kind kind) {
  ffk_def_region_kind previous = *cur;
  if (previous != FFK_DEF_REGION_PATTERN) *cur = kind;
  return previous;
}

/* The region a field's flags open; NONE for an ordinary field (which keeps the region it is in). */
static bool field_opens_region(uint32_t flags, ffk_def_region_kind *kind) {
  if (flags & FFK_FIELD_S_DEF_SIMPLE) *kind = FFK_DEF_REGION_SIMPLE;
  else if (flags & FFK_FIELD_S_DEF) *kind = FFK_DEF_REGION_PATTERN;
  else return false;
  return true;
}

/* The ffk_s_kind of reflected type `t` into *kind (TREE without the attribute). 0, or -1 (ValueError). */
static int s_kind_of(int32_t t, int *kind) {
  *kind = FFK_S_KIND_TREE;
  ffk_any attr;
  int found = ffk_type_get_attr(t, FFK_ATTR_S_KIND, &attr);
  if (found <= 0) return found;
  bool valid = attr.type_index == FFK_TYPE_INT && attr.v_int >= FFK_S_KIND_TREE && attr.v_int <= FFK_S_KIND_SINGLETON;
  if (valid) *kind = (int)attr.v_int;
  ffk_any_release(&attr);
  if (!valid)
    return ffk_error_set(FFK_ERR_VALUE, "the `%s` attribute of type `%s` is not a structural kind (an int from 1 to 5)",
                         FFK_ATTR_S_KIND, ffk_type_key(t));
  return 0;
}

/* The same value: one object, or the same bits for a value that is not an object. */
static bool same_value(const ffk_any *a, const ffk_any *b) {
  if (ffk_any_is_object(a) || ffk_any_is_object(b))
    return a->type_index == b->type_index && a->v_obj == b->v_obj;
  return memcmp(a, b, sizeof(ffk_any)) == 0;
}

static inline ffk_walk_step child_step(const ffk_walk_step *parent, int32_t kind) {
  ffk_walk_step s = {parent, kind, parent ? parent->depth + 1 : 0, NULL, 0, NULL};
  return s;
}

/* ---- The visitor ------------------------------------------------------------------------ */

/*
 * What the visitor knows about an object type, gathered on first meeting: whether it is
 * reflected and its compared fields. Asking the type registry for these at every object
 * (whether its type is reflected, its field count, each field by index) was a fifth of
 * the C side of a walk. Field descriptions never change once defined. An entry, once
 * made, stays at its address until the traversal ends, so a frame iterating its fields
 * may recurse into objects of other types.
 */
typedef struct visit_type {
  int32_t type; /* 0 (None, never an object's type): an empty slot */
  int32_t n;    /* compared fields (those without FFK_FIELD_COMPARE_OFF) */
  bool reflected;
  bool regions; /* a compared field opens a definition region (field_opens_region) */
  const ffk_field_info **fields; /* n entries, in this allocation */
  ffk_function *hook;            /* its __s_visit__ hook (retained), or NULL */
} visit_type;

#define VISIT_TYPES 8 /* direct-mapped by type index, in front of the list of every type met */
#define WANT_TYPES 16 /* the walk filter's answers, direct-mapped by type index */

struct ffk_visitor {
  ffk_walk_fn walk_fn;   /* a walk: called before or after the default descent */
  const ffk_walk_filter *filter; /* a walk: the values walk_fn can act on (NULL: all) */
  bool skip_plain;               /* filter && !filter->plain_values: leaves that are not objects need no visit */
  ffk_visit_fn visit_fn; /* a visit: owns the descent */
  ffk_walk_order order;
  void *ctx;
  ffk_def_region_kind region;
  int depth;
  path_stack path;
  const ffk_any *current;     /* the value whose callback runs (borrowed) */
  const ffk_walk_step *where; /* and its step */
  engine_handle *handle;      /* the ffi.StructuralVisitor hooks receive, made on first need */
  ffk_any interrupt;          /* the VisitInterrupt that stopped the visit (owned), or None */
  visit_type *recent[VISIT_TYPES];
  visit_type **types; /* every type met, owned */
  int32_t ntypes, captypes;
  int8_t static_wants[FFK_TYPE_STATIC_END]; /* with a filter: 1 or 0 per built-in type, -1 not asked yet */
  struct {
    int32_t type_plus1; /* 0: an empty slot */
    bool wanted;        /* filter->object_wanted's answer for the type */
  } wants[WANT_TYPES];  /* and for the registered types met last, direct-mapped */
};

/* Object type `t`'s hook named `name` (a Function, retained) into *hook, or NULL. 0, or -1 (TypeError). */
static int type_hook(int32_t t, const char *name, bool inherited, ffk_function **hook) {
  *hook = NULL;
  ffk_any attr;
  int found = inherited ? ffk_type_get_attr(t, name, &attr) : ffk_type_get_own_attr(t, name, &attr);
  if (found <= 0) return found;
  if (attr.type_index != FFK_TYPE_FUNCTION) {
    ffk_error_set(FFK_ERR_TYPE, "the `%s` attribute of type `%s` is a `%s`, not a Function", name, ffk_type_key(t),
                  ffk_any_type_name(&attr));
    ffk_any_release(&attr);
    return -1;
  }
  *hook = (ffk_function *)attr.v_obj;
  return 0;
}

static void visit_type_free(visit_type *vt) {
  if (vt->hook != NULL) ffk_object_release((ffk_object *)vt->hook);
  ffk_mem_free(vt);
}

/* What the visitor knows about object type `t`: found among the types met, or made (visit_type_of's slow path). NULL with an error. */
static FFK_NOINLINE const visit_type *visit_type_make(ffk_visitor *v, int32_t t) {
  visit_type **recent = &v->recent[(uint32_t)t % VISIT_TYPES];
  for (int32_t i = 0; i < v->ntypes; ++i)
    if (v->types[i]->type == t) return *recent = v->types[i];
  if (v->ntypes == v->captypes) {
    int32_t cap = v->captypes ? 2 * v->captypes : 8;
    visit_type **types = ffk_mem_alloc((size_t)cap * sizeof *types);
    if (types == NULL) return NULL;
    if (v->ntypes > 0) memcpy(types, v->types, (size_t)v->ntypes * sizeof *types);
    ffk_mem_free(v->types);
    v->types = types;
    v->captypes = cap;
  }
  bool reflected = ffk_type_is_reflected(t);
  ffk_function *hook;
  if (type_hook(t, FFK_ATTR_S_VISIT, true, &hook) != 0) return NULL;
  int32_t n = reflected && hook == NULL ? ffk_type_num_fields(t) : 0; /* a hook replaces the fields */
  visit_type *made = n < 0 ? NULL : ffk_mem_alloc(sizeof *made + (size_t)n * sizeof *made->fields);
  if (made == NULL) {
    if (hook != NULL) ffk_object_release((ffk_object *)hook);
    return NULL;
  }
  *made = (visit_type){t, 0, reflected, false, (const ffk_field_info **)(made + 1), hook};
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) {
      visit_type_free(made);
      return NULL;
    }
    if (f->flags & FFK_FIELD_COMPARE_OFF) continue;
    made->fields[made->n++] = f;
    if (f->flags & (FFK_FIELD_S_DEF | FFK_FIELD_S_DEF_SIMPLE)) made->regions = true;
  }
  v->types[v->ntypes++] = made;
  return *recent = made;
}

/* What the visitor knows about object type `t`. NULL with an error. */
static inline const visit_type *visit_type_of(ffk_visitor *v, int32_t t) {
  visit_type *hit = v->recent[(uint32_t)t % VISIT_TYPES];
  return hit != NULL && hit->type == t ? hit : visit_type_make(v, t);
}

static void visit_types_free(ffk_visitor *v) {
  for (int32_t i = 0; i < v->ntypes; ++i) visit_type_free(v->types[i]);
  ffk_mem_free(v->types);
}

int ffk_containers__visitor_handle(ffk_visitor *v, ffk_any *out) {
  return handle_get(&v->handle, g_visitor_type, v, out);
}

ffk_visitor *ffk_containers__handle_visitor(const char *api, const ffk_any *handle) {
  return handle_engine(api, handle, g_visitor_type);
}

int ffk_containers__visitor_stop(ffk_visitor *v, const ffk_any *interrupt) {
  ffk_any old = v->interrupt;
  v->interrupt = *interrupt;
  ffk_any_retain(&v->interrupt);
  ffk_any_release(&old);
  return 1;
}

int ffk_containers__visitor_interrupt(ffk_visitor *v, ffk_any *out) {
  if (v->interrupt.type_index == FFK_TYPE_NONE && ffk_containers__make_interrupt(NULL, &v->interrupt) != 0) return -1;
  return ffk_any_to_owned(&v->interrupt, out);
}

/*
 * Object `value`'s descent through its type's __s_visit__ hook: hook(visitor, value) ->
 * None or a VisitInterrupt. 0, 1 when it returned an interrupt, -1 with its error or a
 * TypeError for another result. Counted in the depth: a hook that visits its own value
 * again ends at the limit.
 */
static int visit_by_hook(ffk_visitor *v, ffk_function *hook, const ffk_any *value) {
  if (v->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ffk_any args[2] = {ffk_any_none(), *value}, r;
  if (ffk_containers__visitor_handle(v, &args[0]) != 0) return -1;
  ++v->depth;
  int rc = ffk_function_call(hook, args, 2, &r);
  --v->depth;
  ffk_any_release(&args[0]);
  if (rc != 0) return -1;
  if (ffk_containers__is_interrupt(&r)) rc = ffk_containers__visitor_stop(v, &r);
  else if (r.type_index != FFK_TYPE_NONE)
    rc = ffk_error_set(FFK_ERR_TYPE, "the %s hook of `%s` returned a `%s`, not None or a VisitInterrupt",
                       FFK_ATTR_S_VISIT, ffk_type_key(value->type_index), ffk_any_type_name(&r));
  ffk_any_release(&r);
  return rc;
}

/* `held`: the references the walk itself holds on `value` (an owned field read: 1), or -1 when unknown (on_path_may). */
static int visit_value(ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where, int held);

/*
 * visit_value for a child, without the call for a value that has nothing to visit: None,
 * or a value that is not an object (no children) which the walk's filter keeps from its
 * callback. Below the depth limit only, so that such a leaf there still fails as before.
 */
static inline int visit_child(ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where, int held) {
  int32_t t = value->type_index;
  if (t == FFK_TYPE_NONE) return 0;
  if (t < FFK_TYPE_OBJECT_BEGIN && v->skip_plain && v->depth < FFK_STRUCTURAL_MAX_DEPTH)
    return 0;
  return visit_value(v, value, where, held);
}

static inline __attribute__((always_inline)) int visit_sequence(ffk_visitor *v, ffk_object *o, const ffk_walk_step *where) {
  seq_view s;
  if (seq_open(o, &s) != 0) return -1;
  int rc = 0;
  ffk_walk_step step = child_step(where, FFK_ACCESS_ARRAY_ITEM); /* one per element in turn: a step outlives no callback */
  for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
    step.index = i;
    rc = visit_child(v, &s.data[i], &step, 0); /* borrowed from the container */
  }
  seq_close(&s);
  return rc;
}

static inline int visit_mapping(ffk_visitor *v, ffk_object *o, const ffk_walk_step *where) {
  map_view m;
  if (map_open(o, &m) != 0) return -1;
  int rc = 0;
  int64_t pos = 0;
  ffk_walk_step step = child_step(where, FFK_ACCESS_MAP_ITEM);
  for (ffk_table_entry *e; rc == 0 && (e = ffk_table__next(m.table, &pos)) != NULL;) {
    step.key = &e->key;
    rc = visit_child(v, &e->value, &step, 0);
  }
  map_close(&m);
  return rc;
}

/*
 * Field `f` of `o` (an instance of its owner type), read inside the traversal's read
 * section (run_visitor) with ffk_field_peek_unchecked, as structural equality reads fields
 * (structural_walk.h's read_field): borrowed (0), so a walk over a tree makes no
 * reference-count traffic, and a value another thread or a callback replaces meanwhile
 * stays alive until the section ends, so it stays alive while the walk is below it. Only a
 * writable field of ffk_any storage (two words, read whole under its lock) comes back as a
 * new reference (1: the caller releases it). -1 with ffk_field_peek's error.
 */
static inline int read_field(const ffk_field_info *f, const ffk_object *o, ffk_any *out) {
  return ffk_field_peek_unchecked(f, o, out);
}

static inline __attribute__((always_inline)) int visit_fields(ffk_visitor *v, ffk_object *o, const visit_type *vt, const ffk_walk_step *where) {
  int32_t t = o->type_index, n = vt->n;
  bool regions = vt->regions;
  /* A variable defined in a simple region: the definition is the variable; its fields are uses. */
  ffk_def_region_kind outer = v->region;
  if (v->region == FFK_DEF_REGION_SIMPLE) {
    int skind;
    if (s_kind_of(t, &skind) != 0) return -1;
    if (skind == FFK_S_KIND_VAR) v->region = FFK_DEF_REGION_NONE;
  }
  int rc = 0;
  const ffk_field_info *const *fields = vt->fields; /* stays put while the children are visited (visit_type) */
  ffk_walk_step step = child_step(where, FFK_ACCESS_ATTR);
  for (int32_t i = 0; rc == 0 && i < n; ++i) {
    const ffk_field_info *f = fields[i];
    ffk_any value;
    int owned = read_field(f, o, &value);
    if (owned < 0) {
      rc = -1;
      break;
    }
    step.field = f->name;
    int held = owned && ffk_any_is_object(&value) ? 1 : 0; /* the read's reference, if any */
    ffk_def_region_kind kind, previous = v->region;
    if (!regions) {
      rc = visit_child(v, &value, &step, held);
    } else {
      if (field_opens_region(f->flags, &kind)) region_enter(&v->region, kind);
      rc = visit_child(v, &value, &step, held);
      v->region = previous;
    }
    if (owned) ffk_any_release(&value);
  }
  v->region = outer;
  return rc;
}

/*
 * Whether object `o`, held `held` times by the walk itself (-1: unknown), may be on the
 * path. Only a node referenced from two places can be met again inside itself: one whose
 * use count is its parent's reference (plus the walk's own) cannot, so the path is not
 * scanned for it (in a tree, most nodes; the scan was a sixth of a walk's C side). A
 * count another thread raises meanwhile only makes this conservative.
 */
static inline bool on_path_may(const path_stack *p, const ffk_object *o, int held) {
  if (p->size == 0 || (held >= 0 && use_count_of(o) <= 1 + (uint32_t)held)) return false;
  return on_path(p, o);
}

/* The default descent of `value` at `where`: each child through visit_value. Inlined into
 * visit_value, so that a node costs the walk one call, not two. */
static inline __attribute__((always_inline)) int default_visit(ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where, int held) {
  const visit_type *vt = NULL;
  if (!is_container(value)) { /* else a node when reflected or with a hook */
    if (value->type_index < FFK_TYPE_OBJECT_BEGIN || value->v_obj == NULL) return 0;
    if ((vt = visit_type_of(v, value->type_index)) == NULL) return -1;
    if (!vt->reflected && vt->hook == NULL) return 0;
  }
  if (on_path_may(&v->path, value->v_obj, held)) return 0; /* also a hook's own value, visited again */
  if (path_push(&v->path, value->v_obj) != 0) return -1;
  int rc;
  if (is_sequence(value->type_index)) {
    rc = visit_sequence(v, value->v_obj, where);
  } else if (is_mapping(value->type_index)) {
    rc = visit_mapping(v, value->v_obj, where);
  } else if (vt->hook != NULL) {
    rc = visit_by_hook(v, vt->hook, value); /* held by its visit_type until the traversal ends */
  } else {
    rc = visit_fields(v, value->v_obj, vt, where);
  }
  --v->path.size;
  return rc;
}

/* The filter's answer for object type `t`, asked now and kept (wanted's slow path). */
static FFK_NOINLINE bool wanted_slow(ffk_visitor *v, int32_t t) {
  bool w = v->filter->object_wanted(v->ctx, t);
  if (t < FFK_TYPE_STATIC_END) {
    v->static_wants[t] = w;
  } else {
    size_t slot = (uint32_t)t % WANT_TYPES;
    v->wants[slot].type_plus1 = t + 1;
    v->wants[slot].wanted = w;
  }
  return w;
}

/* Whether the walk's callback may act on `value` (the filter's answer, kept per type). */
static inline bool wanted(ffk_visitor *v, const ffk_any *value) {
  if (v->filter == NULL) return true;
  int32_t t = value->type_index;
  if (t < FFK_TYPE_STATIC_END) return v->static_wants[t] >= 0 ? v->static_wants[t] : wanted_slow(v, t);
  size_t slot = (uint32_t)t % WANT_TYPES;
  return v->wants[slot].type_plus1 == t + 1 ? v->wants[slot].wanted : wanted_slow(v, t);
}

/* The walk's callback on `value`: 0 to go on, 1 when stopped, 2 to skip the children, -1 on error. */
static inline int walk_callback(ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where) {
  if (!wanted(v, value)) return 0;
  int r = v->walk_fn(v->ctx, value, where, v->region);
  if (r < 0) return -1;
  return r == FFK_WALK_STOP ? 1 : r == FFK_WALK_SKIP ? 2 : 0;
}

/* One value: 0 to go on, 1 when stopped, -1 on error. */
static int visit_value(ffk_visitor *v, const ffk_any *value, const ffk_walk_step *where, int held) {
  if (value->type_index == FFK_TYPE_NONE) return 0;
  if (v->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ++v->depth;
  int rc;
  if (v->visit_fn != NULL) {
    const ffk_any *outer_value = v->current;
    const ffk_walk_step *outer_where = v->where;
    v->current = value;
    v->where = where;
    rc = v->visit_fn(v->ctx, v, value, where);
    rc = rc < 0 ? -1 : rc > 0;
    v->current = outer_value;
    v->where = outer_where;
  } else {
    bool pre = v->order == FFK_WALK_PREORDER;
    rc = pre ? walk_callback(v, value, where) : 0;
    if (rc == 0) rc = default_visit(v, value, where, held); /* one call site: inlined once */
    else if (rc == 2) rc = 0; /* pre-order: skip the children */
    if (!pre && rc == 0) rc = walk_callback(v, value, where);
    if (rc == 2) rc = 0; /* after the children, a skip has nothing left to skip */
  }
  --v->depth;
  return rc;
}

/* Runs `v` from `root`; *live (when not NULL) is `v` meanwhile, *interrupt (when not NULL) what stopped it. */
static int run_visitor(ffk_visitor *v, const ffk_any *root, ffk_visitor **live, ffk_any *interrupt) {
  ffk_walk_step root_step = child_step(NULL, -1);
  void *section = ffk_read_section_enter(); /* the fields read meanwhile are borrowed (read_field) */
  int rc = section == NULL ? -1 : 0;
  if (live != NULL) *live = v;
  if (rc == 0) rc = visit_value(v, root, &root_step, -1);
  if (live != NULL) *live = NULL;
  ffk_read_section_exit(section);
  if (interrupt != NULL && rc == 1) {
    *interrupt = v->interrupt;
    v->interrupt = ffk_any_none();
  }
  ffk_any_release(&v->interrupt);
  handle_end(v->handle);
  path_free(&v->path);
  visit_types_free(v);
  return rc;
}

int ffk_containers__walk(const ffk_any *root, ffk_walk_order order, ffk_walk_fn fn, void *ctx,
                         const ffk_walk_filter *filter, ffk_visitor **live, ffk_any *interrupt) {
  if (interrupt != NULL) *interrupt = ffk_any_none();
  if (root == NULL || fn == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_walk: root and fn must not be NULL");
  if (order != FFK_WALK_PREORDER && order != FFK_WALK_POSTORDER)
    return ffk_error_set(FFK_ERR_VALUE, "Unknown structural walk order: %d (0: pre-order, 1: post-order)", (int)order);
  ffk_visitor v;
  memset(&v, 0, sizeof v);
  v.walk_fn = fn;
  v.filter = filter;
  v.skip_plain = filter != NULL && !filter->plain_values;
  if (filter != NULL) { /* values that are not objects: plain_values; the built-in object types: asked when met */
    memset(v.static_wants, filter->plain_values ? 1 : 0, FFK_TYPE_OBJECT_BEGIN);
    memset(v.static_wants + FFK_TYPE_OBJECT_BEGIN, -1, FFK_TYPE_STATIC_END - FFK_TYPE_OBJECT_BEGIN);
  }
  v.order = order;
  v.ctx = ctx;
  return run_visitor(&v, root, live, interrupt);
}

int ffk_structural_walk(const ffk_any *root, ffk_walk_order order, ffk_walk_fn fn, void *ctx) {
  return ffk_containers__walk(root, order, fn, ctx, NULL, NULL, NULL);
}

int ffk_containers__visit(const ffk_any *root, ffk_visit_fn fn, void *ctx, ffk_any *interrupt) {
  if (interrupt != NULL) *interrupt = ffk_any_none();
  if (root == NULL || fn == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_structural_visit: root and fn must not be NULL");
  ffk_visitor v;
  memset(&v, 0, sizeof v);
  v.visit_fn = fn;
  v.ctx = ctx;
  return run_visitor(&v, root, NULL, interrupt);
}

int ffk_structural_visit(const ffk_any *root, ffk_visit_fn fn, void *ctx) {
  return ffk_containers__visit(root, fn, ctx, NULL);
}

int ffk_visitor_visit(ffk_visitor *visitor, const ffk_any *value) {
  if (visitor == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_visitor_visit: visitor and value must not be NULL");
  ffk_walk_step step = child_step(visitor->where, -1);
  void *section = ffk_read_section_enter(); /* nested in the traversal's: see read_field */
  if (section == NULL) return -1;
  int rc = visit_value(visitor, value, &step, -1);
  ffk_read_section_exit(section);
  return rc;
}

int ffk_visitor_default_visit(ffk_visitor *visitor, const ffk_any *value) {
  if (visitor == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_visitor_default_visit: visitor and value must not be NULL");
  /* The children of the value whose callback runs sit below its step; another value's below a step of its own. */
  bool current = visitor->current != NULL && same_value(visitor->current, value);
  ffk_walk_step step = child_step(visitor->where, -1);
  void *section = ffk_read_section_enter(); /* nested in the traversal's: see read_field */
  if (section == NULL) return -1;
  int rc = default_visit(visitor, value, current ? visitor->where : &step, -1);
  ffk_read_section_exit(section);
  return rc;
}

ffk_def_region_kind ffk_visitor_region(const ffk_visitor *visitor) {
  return visitor ? visitor->region : FFK_DEF_REGION_NONE;
}

ffk_def_region_kind ffk_visitor_enter_region(ffk_visitor *visitor, ffk_def_region_kind kind) {
  return visitor ? region_enter(&visitor->region, kind) : FFK_DEF_REGION_NONE;
}

void ffk_visitor_leave_region(ffk_visitor *visitor, ffk_def_region_kind previous) {
  if (visitor) visitor->region = previous;
}

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
    if (ffk_type_is_reflected(t) && s_kind_of(t, &k) != 0) return -1;
    if (type_hook(t, FFK_ATTR_S_MUTATE, false, &h) != 0) return -1;
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
  return handle_get(&m->handle, g_mutator_type, m, out);
}

ffk_mutator *ffk_containers__handle_mutator(const char *api, const ffk_any *handle) {
  return handle_engine(api, handle, g_mutator_type);
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
  handle_end(m->handle);
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
