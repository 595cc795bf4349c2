/*
 * ffikit/structural_visit.h - walking a value structurally, and rebuilding it bottom-up
 * with callbacks: what a compiler pass written in C or Rust needs (tvm_ffi's
 * structural_walk, structural_visit, structural_map and structural_mutate).
 *
 * What the walk looks inside ("nodes") is what structural equality looks inside
 * (ffikit/structural.h): the elements of an Array, Tuple or List in order, the values of
 * a Map or Dict in iteration order (never the keys), and the fields of a reflected object
 * in field order, fields with FFK_FIELD_COMPARE_OFF left out. Everything else (ints,
 * strings, Shapes, tensors, functions, objects without reflection) is a leaf.
 *
 * tvm_ffi 0.1.15's behaviour, as measured with py_class types (this is the spec):
 *
 *  - Walk. A callback runs once per occurrence (a node shared twice is visited twice; no
 *    memo), before its children (pre-order) or after them (post-order, the default of
 *    structural_walk). None is never visited, as root or anywhere. Lam(x, Add(x, [1, "s",
 *    None, {"k": 2.5}])) pre-order: Lam, x, Add, x, Array, 1, "s", Map, 2.5; post-order:
 *    x, x, 1, "s", 2.5, Map, Array, Add, Lam.
 *  - A callback returns None or WalkResult.ADVANCE (0) to go on, WalkResult.SKIP (1) to
 *    leave out the children (meaningful in pre-order only: post-order has already walked
 *    them), or a VisitInterrupt to stop the whole walk, which then returns that
 *    VisitInterrupt (its `value` is the payload; None when the walk completed). Any other
 *    int goes on; a value of another type is a TypeError. An error a callback raises ends
 *    the walk and is what it raises, type and text unchanged.
 *  - Definition regions: a callback can receive the DefRegionKind of the position:
 *    NONE (0) by default, DEF_PATTERN (1) for the value of a field declared "def"
 *    (FFK_FIELD_S_DEF) and everything under it, DEF_SIMPLE (2) for a "def-simple" field
 *    (FFK_FIELD_S_DEF_SIMPLE). The kind is the field value's own: the variable in
 *    Lam(x, ...).p is met with DEF_PATTERN. Inside a pattern region every nested region
 *    is a pattern. A variable (FFK_S_KIND_VAR) met in a simple region has its own fields
 *    walked under NONE (they are uses).
 *  - Visit (callback-owned descent): a callback receives (value, visitor) and returns
 *    None or a VisitInterrupt; it descends only by calling visitor.visit(child) (through
 *    the callbacks again) or visitor.default_visit(value) (the value's children, each
 *    through the callbacks). A value no callback matches gets the default descent.
 *  - Map: mutate(x) = post(D(pre(x))). A pre-order callback's result is then descended
 *    into (D runs over what it returned, and the callbacks fire on its children); a
 *    post-order callback sees the value after its children were mapped. Returning the
 *    value itself means unchanged. Unlike the walk, map and mutate callbacks run for None
 *    too ([1, None] post-order: 1, None, then the Array). A parent is rebuilt only when a
 *    child changed, so an unchanged subtree (and an unchanged root) comes back as the same
 *    object; Lists and Dicts are copied on write as the rest (the source List is never
 *    changed), and a reflected object is rebuilt as a shallow copy with the changed
 *    fields set.
 *  - Variable remapping (D, for FFK_S_KIND_VAR and FFK_S_KIND_DAG types): D first looks
 *    the object up in the mutator's remap table and returns the entry when there is one.
 *    A variable met outside any definition region (a use) is otherwise returned unchanged
 *    without looking inside. Otherwise D rebuilds its fields and records the result
 *    (always for a dag node or in a pattern region; in a simple region only when it
 *    changed), so the uses of a variable whose definition changed follow it:
 *    Lam(a, Add(a, a)) with a = TVar(1) and `int -> int + 100` maps to a Lam whose
 *    parameter and both uses are one new TVar(101). A free variable (no definition) stays.
 *    Callbacks fire at every occurrence; they are not memoised.
 *  - Type hooks. A type's FFK_ATTR_S_VISIT attribute ("__s_visit__", looked up through
 *    its parents) is a Function(visitor, value) -> None or VisitInterrupt that replaces
 *    the default descent of its objects: in walks, visits and default_visit, the hook is
 *    what visits the children, through visitor.visit(child) (the callbacks then run for
 *    the value itself as for any node). Its FFK_ATTR_S_MUTATE attribute ("__s_mutate__",
 *    the type's own, not inherited, as tvm_ffi copies only __s_visit__ to subclasses) is
 *    a Function(mutator, value) -> result that replaces D's rebuild of its objects (the
 *    variable remap still applies around it): in maps, mutates and default_mutate. Either
 *    gives a registered type that is not reflected children. The handle is an
 *    ffi.StructuralVisitor / ffi.StructuralMutator object (the one registered callbacks
 *    receive), usable only during the call; a hook that visits its own value again gets
 *    no descent there (as a cycle). A visit hook returning anything else is a TypeError.
 *  - Mutate (callback-owned): a callback receives (value, mutator) and returns the
 *    result; it descends with mutator.mutate(child) or mutator.default_mutate(value);
 *    var_remap_get(var) (None on a miss) and var_remap_set(var, value) read and write the
 *    same table D uses (a key must be an object: an int is a TypeError); def_region_kind()
 *    is the region of the value being mutated. A callback may ask for an inplace_mode
 *    argument: ALLOW (1) only when its value is uniquely owned, else DISALLOW (0).
 *
 * ffikit's differences, all on the safe side: nesting deeper than FFK_STRUCTURAL_MAX_DEPTH
 * is the RuntimeError of ffk_structural_too_deep(), never a stack overflow; a cycle (a
 * List holding itself, an object whose field leads back to it) ends, because a node met
 * again while it is being descended into is a leaf the second time (its callback runs,
 * its children are not walked again, a mutator keeps it unchanged); mutation never works
 * in place (every callback is told DISALLOW), so a source is never changed.
 *
 * Threads: a List or Dict is read through a snapshot taken under its lock, as structural
 * equality reads it, so other threads may change it during a walk; each List or Dict is
 * seen as of some moment, and the snapshot keeps what it holds alive while the walk is
 * below it. Reflected fields are seen whole or not at all under a concurrent write: the
 * visitor reads them borrowed inside a read section (ffikit/unstable/reflect.h) that lasts
 * the whole traversal, so a value replaced meanwhile, by another thread or a callback, stays
 * alive while the traversal is below it. The cost of that: an object field value replaced
 * anywhere in the process while a walk or visit runs is freed when the traversal ends, not
 * at once (a walk whose callbacks run long while other threads rewrite fields holds that
 * memory meanwhile; structural equality and hash do the same). The mutator reads fields
 * with ffk_field_get. The visitor and mutator handles belong to one call on one thread.
 */
#ifndef FFIKIT_STRUCTURAL_VISIT_H
#define FFIKIT_STRUCTURAL_VISIT_H

#include <ffikit/access_path.h>
#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/* The type attributes of the hooks above (ffikit/reflect.h's ffk_type_set_attr). */
#define FFK_ATTR_S_VISIT "__s_visit__"
#define FFK_ATTR_S_MUTATE "__s_mutate__"

/* The definition region of a position; the values are tvm_ffi's DefRegionKind. */
typedef enum {
  FFK_DEF_REGION_NONE = 0,    /* an ordinary position: variables met here are uses */
  FFK_DEF_REGION_PATTERN = 1, /* under a FFK_FIELD_S_DEF field ("def" / "def-pattern") */
  FFK_DEF_REGION_SIMPLE = 2,  /* under a FFK_FIELD_S_DEF_SIMPLE field ("def-simple") */
} ffk_def_region_kind;

/* Whether a walk's callback runs before or after the children; tvm_ffi's WalkOrder values. */
typedef enum {
  FFK_WALK_PREORDER = 0,
  FFK_WALK_POSTORDER = 1,
} ffk_walk_order;

/* What a walk callback returns (or -1 with an error set, which ends the walk). */
enum {
  FFK_WALK_ADVANCE = 0, /* go on, into the children (tvm_ffi's WalkResult.ADVANCE) */
  FFK_WALK_SKIP = 1,    /* go on, without this value's children (WalkResult.SKIP; pre-order) */
  FFK_WALK_STOP = 2,    /* end the whole walk now (tvm_ffi: a VisitInterrupt) */
};

/*
 * Where a value sits: the step from its parent, chained up to the root. Steps live on
 * the walker's stack and are valid only during the callback that received them.
 */
typedef struct ffk_walk_step {
  const struct ffk_walk_step *parent; /* NULL for the root */
  int32_t kind;                       /* FFK_ACCESS_ATTR, _ARRAY_ITEM or _MAP_ITEM; -1 for the
                                         root and for a value a callback passed to
                                         ffk_visitor_visit / ffk_mutator_mutate itself */
  int32_t depth;                      /* 0 for the root, the parent's + 1 otherwise */
  const char *field;                  /* FFK_ACCESS_ATTR: the field's name, else NULL */
  int64_t index;                      /* FFK_ACCESS_ARRAY_ITEM: the index, else 0 */
  const ffk_any *key;                 /* FFK_ACCESS_MAP_ITEM: the key (borrowed), else NULL */
} ffk_walk_step;

/*
 * The ffikit.AccessPath (ffikit/access_path.h) of `step` from the root: a new reference,
 * or NULL with a MemoryError, or a ValueError for NULL. Steps of kind -1 below the root
 * (a callback's own choice of child) add nothing to the path.
 */
FFK_API ffk_object *ffk_walk_step_path(const ffk_walk_step *step);

/* ---- Walk ------------------------------------------------------------------------- */

/*
 * A walk callback: `value` (borrowed, never None) at `where` in `region`. Returns
 * FFK_WALK_ADVANCE, FFK_WALK_SKIP or FFK_WALK_STOP, or -1 with an error set. Any other
 * return value is taken as FFK_WALK_ADVANCE (as tvm_ffi takes an int other than 1).
 */
typedef int (*ffk_walk_fn)(void *ctx, const ffk_any *value, const ffk_walk_step *where, ffk_def_region_kind region);

/*
 * Walks `root` (borrowed) calling `fn(ctx, ...)` at every value but None, in `order`.
 * Returns 0 when the walk completed, 1 when a callback returned FFK_WALK_STOP, or -1 with
 * the callback's error, a MemoryError, the RuntimeError of ffk_structural_too_deep(), or
 * a ValueError for a NULL root or fn or an order that is not an ffk_walk_order.
 */
FFK_API int ffk_structural_walk(const ffk_any *root, ffk_walk_order order, ffk_walk_fn fn, void *ctx);

/* ---- Visit (callback-owned descent) ----------------------------------------------- */

/* The traversal context a visit callback receives; valid only during that call. */
typedef struct ffk_visitor ffk_visitor;

/*
 * A visit callback: `value` (borrowed, never None) reached at `where`. It descends only
 * through ffk_visitor_visit or ffk_visitor_default_visit. Returns 0 to go on, 1 to stop
 * the whole visit (what a descent call's 1 should be passed on as), -1 with an error.
 */
typedef int (*ffk_visit_fn)(void *ctx, ffk_visitor *visitor, const ffk_any *value, const ffk_walk_step *where);

/*
 * Visits `root` (borrowed): the callback runs for it and owns its descent. Returns 0, 1
 * when a callback stopped the visit, or -1 with the errors of ffk_structural_walk.
 */
FFK_API int ffk_structural_visit(const ffk_any *root, ffk_visit_fn fn, void *ctx);

/*
 * Visits `value` (borrowed) through the visit's callback (nothing for None). 0, 1 when
 * the visit was stopped, -1 with an error (the depth limit, a callback's error, a
 * ValueError for a NULL visitor or value).
 */
FFK_API int ffk_visitor_visit(ffk_visitor *visitor, const ffk_any *value);

/*
 * The default descent of `value` (borrowed): each child through the callback, in the
 * region its field declares. A leaf, None, or a node already being descended into (a
 * cycle) has none. Returns as ffk_visitor_visit.
 */
FFK_API int ffk_visitor_default_visit(ffk_visitor *visitor, const ffk_any *value);

/* The region of the position being visited (FFK_DEF_REGION_NONE for NULL). Cannot fail. */
FFK_API ffk_def_region_kind ffk_visitor_region(const ffk_visitor *visitor);

/*
 * Enters `kind` for the descent calls that follow, and returns the region to pass to
 * ffk_visitor_leave_region afterwards. Inside a pattern region this changes nothing (a
 * pattern region holds for everything below it). Cannot fail (NULL is ignored).
 */
FFK_API ffk_def_region_kind ffk_visitor_enter_region(ffk_visitor *visitor, ffk_def_region_kind kind);
FFK_API void ffk_visitor_leave_region(ffk_visitor *visitor, ffk_def_region_kind previous);

/* ---- Map and mutate --------------------------------------------------------------- */

/* The rewriting context a map or mutate callback receives; valid only during that call. */
typedef struct ffk_mutator ffk_mutator;

/*
 * A map or mutate callback: stores the result for `value` (borrowed, maybe None) in *out
 * as a new reference (`value` itself, retained, means unchanged) and returns 0, or
 * returns -1 with an error (and *out left None). It must not change `value` in place.
 */
typedef int (*ffk_map_fn)(void *ctx, ffk_mutator *mutator, const ffk_any *value, ffk_any *out);

/*
 * Maps `root` (borrowed): mutate(x) = post(D(pre(x))) as above, with `fn` as the pre
 * callback (FFK_WALK_PREORDER) or the post callback (FFK_WALK_POSTORDER), run at every
 * value, None included. *out receives a new reference: `root` itself when nothing changed,
 * else a rebuilt value sharing every unchanged subtree. Returns 0, or -1 with *out None
 * and the callback's error, a MemoryError, the depth limit, a TypeError naming a type and
 * field that cannot be rebuilt (an object reflection did not make: ffk_object_shallow_copy
 * refuses it), what ffk_field_init raised for a replacement of the wrong type, or a
 * ValueError for NULL arguments or a bad order. The source is never changed.
 */
FFK_API int ffk_structural_map(const ffk_any *root, ffk_walk_order order, ffk_map_fn fn, void *ctx, ffk_any *out);

/*
 * Mutates `root` (borrowed) with a callback that owns descent: `fn` runs for the root
 * and every value the callbacks pass to ffk_mutator_mutate, and its result is final;
 * ffk_mutator_default_mutate gives a value's default rewrite. *out and errors as
 * ffk_structural_map.
 */
FFK_API int ffk_structural_mutate(const ffk_any *root, ffk_map_fn fn, void *ctx, ffk_any *out);

/*
 * Rewrites `value` (borrowed) as the call's policy does (map: pre, D, post; mutate: the
 * callback) into *out (a new reference). 0, or -1 with *out None and the errors above.
 */
FFK_API int ffk_mutator_mutate(ffk_mutator *mutator, const ffk_any *value, ffk_any *out);

/*
 * D: the default rewrite of `value` (borrowed): its children through ffk_mutator_mutate,
 * the parent rebuilt only when one changed, variables and dag nodes through the remap
 * table as above. *out a new reference; 0, or -1 with *out None and the errors above.
 */
FFK_API int ffk_mutator_default_mutate(ffk_mutator *mutator, const ffk_any *value, ffk_any *out);

/*
 * The replacement recorded for `var` (borrowed; identity of an object) in *out (a new
 * reference): 1, 0 with *out None when there is none, -1 with a TypeError when `var` is
 * not an object ("Variable-remap key must be an object-backed value, got int").
 */
FFK_API int ffk_mutator_var_remap_get(ffk_mutator *mutator, const ffk_any *var, ffk_any *out);

/*
 * Records `value` (borrowed; retained) as the replacement for `var` (borrowed, retained
 * until the call ends), replacing an earlier one. 0, or -1 with the TypeError of
 * ffk_mutator_var_remap_get or a MemoryError.
 */
FFK_API int ffk_mutator_var_remap_set(ffk_mutator *mutator, const ffk_any *var, const ffk_any *value);

/* The region of the value being rewritten, and scoped changes of it, as for visitors. */
FFK_API ffk_def_region_kind ffk_mutator_region(const ffk_mutator *mutator);
FFK_API ffk_def_region_kind ffk_mutator_enter_region(ffk_mutator *mutator, ffk_def_region_kind kind);
FFK_API void ffk_mutator_leave_region(ffk_mutator *mutator, ffk_def_region_kind previous);

FFK_EXTERN_C_END

#endif /* FFIKIT_STRUCTURAL_VISIT_H */
