/*
 * structural_visit.c - structural walk and visit (ffikit/structural_visit.h), and what the
 * visitor shares with the mutator (structural_mutate.c, through structural_engine.h): the
 * ffi.VisitInterrupt / StructuralVisitor / StructuralMutator types and their handles.
 *
 * The visitor recurses over nodes (containers and reflected objects, as
 * structural_internal.h defines them) calling a walk callback before or after the
 * children, or a visit callback that owns the descent.
 *
 * Invariants:
 *  - Every recursion goes through visit_value, which counts the depth and refuses to pass
 *    FFK_STRUCTURAL_MAX_DEPTH: the C stack stays bounded whatever the callbacks do (a
 *    callback that visits its own value again ends at the limit).
 *  - The nodes being descended into are kept on a path stack; a node met again while on
 *    it (a cycle) gets no descent the second time, so cycles end. A node on the path is
 *    alive: the root is held by the caller and each node below by its parent's snapshot,
 *    its container, or (field reads are borrowed) the read section that the traversal
 *    holds open from start to end, which keeps a field value replaced meanwhile alive.
 *  - A List or Dict is read through a snapshot (seq_open / map_open), never under its
 *    lock while a callback runs.
 */
#include "structural_engine.h"

#include <ffikit/structural_visit.h>
#include <ffikit/unstable/reflect.h>

#include <stddef.h>
#include <string.h>

/* ---- What the two engines share ----------------------------------------------------- */

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

int32_t ffk_containers__mutator_type(void) { return g_mutator_type; }

int ffk_containers__handle_get(engine_handle **slot, int32_t type, void *engine, ffk_any *out) {
  if (*slot == NULL) {
    *slot = (engine_handle *)ffk_object_alloc(type, sizeof(engine_handle), handle_deleter);
    if (*slot == NULL) return -1;
    (*slot)->engine = engine;
  }
  ffk_object_retain(&(*slot)->header);
  *out = ffk_any_object_steal(&(*slot)->header);
  return 0;
}

void ffk_containers__handle_end(engine_handle *h) {
  if (h == NULL) return;
  h->engine = NULL;
  ffk_object_release(&h->header);
}

void *ffk_containers__handle_engine(const char *api, const ffk_any *h, int32_t type) {
  if (!ffk_any_is_object(h) || h->type_index != type) {
    ffk_error_set(FFK_ERR_TYPE, "%s: expected %s, got %s", api, ffk_type_key(type), ffk_any_type_name(h));
    return NULL;
  }
  void *engine = ((engine_handle *)h->v_obj)->engine;
  if (engine == NULL)
    ffk_error_set(FFK_ERR_RUNTIME, "%s: this %s belongs to a traversal that has ended", api, ffk_type_key(type));
  return engine;
}

int ffk_containers__path_grow(path_stack *p) {
  int32_t cap = p->cap ? 2 * p->cap : 32;
  const ffk_object **items = ffk_mem_alloc((size_t)cap * sizeof *items);
  if (items == NULL) return -1;
  if (p->size > 0) memcpy(items, p->items, (size_t)p->size * sizeof *items);
  ffk_mem_free(p->items);
  p->items = items;
  p->cap = cap;
  return 0;
}

int ffk_containers__s_kind_of(int32_t t, int *kind) {
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

int ffk_containers__type_hook(int32_t t, const char *name, bool inherited, ffk_function **hook) {
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

/* ---- The visitor ------------------------------------------------------------------------ */

static inline ffk_walk_step child_step(const ffk_walk_step *parent, int32_t kind) {
  ffk_walk_step s = {parent, kind, parent ? parent->depth + 1 : 0, NULL, 0, NULL};
  return s;
}

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
  if (ffk_containers__type_hook(t, FFK_ATTR_S_VISIT, true, &hook) != 0) return NULL;
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
  return ffk_containers__handle_get(&v->handle, g_visitor_type, v, out);
}

ffk_visitor *ffk_containers__handle_visitor(const char *api, const ffk_any *handle) {
  return ffk_containers__handle_engine(api, handle, g_visitor_type);
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
    if (ffk_containers__s_kind_of(t, &skind) != 0) return -1;
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
  ffk_containers__handle_end(v->handle);
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
