/*
 * ffikit/structural.h - equality, hashing and copying that look inside containers.
 *
 * ffk_any_equal/ffk_any_hash (ffikit/any.h) are key semantics: containers compare by
 * identity. The functions here compare by contents, as Python's == does:
 *
 *  - Two containers are equal when they have the same type (Array, Tuple, List, Map or
 *    Dict: an Array never equals a List) and equal contents: element-wise in order for
 *    the sequences, the same keys (by key semantics) with structurally equal values,
 *    whatever the order, for Map and Dict.
 *  - Two objects of reflected types (ffikit/reflect.h) are equal when they have the same
 *    type (a derived type never equals its parent) and every field without
 *    FFK_FIELD_COMPARE_OFF is structurally equal, in field order (inherited fields
 *    included). A type with no compared field makes all its objects equal. Fields are
 *    read as ffk_field_get reads them, so a concurrent write is seen whole or not at all.
 *  - Two Shapes are equal when they have the same dimensions (a Shape is a value, as in
 *    tvm_ffi), and hash by them.
 *  - Everything else compares with ffk_any_equal: 1, True and 1.0 stay distinct, NaN
 *    equals NaN, -0.0 equals 0.0, strings compare by content, other objects (those of
 *    types without reflection: functions, tensors, opaque handles) by identity.
 *  - Equal values hash alike, wherever they sit: one rule per value kind decides both
 *    equality and hash, the same for a container element, a Map or Dict value, a field of
 *    any storage or declared type (int, float, bool, an object type, Optional, Any) and
 *    a hook's argument (so a Shape hashes by its dimensions in a field as in an Array).
 *    Map and Dict keys follow key semantics (ffk_any_equal / ffk_any_hash) in both.
 *    Map and Dict hash without regard to order. A reflected object hashes its type key
 *    (the text, so a hash does not depend on registration order) and its compared fields
 *    in order; compare-off fields leave it unchanged.
 *  - A List or Dict is read through a snapshot taken under its lock, so another thread
 *    may change it during the call without harm; each List or Dict reflects some moment.
 *    The walk keeps every snapshot (and what it holds) until it ends, so no container or
 *    object it has met can be freed and its address taken by another meanwhile.
 *  - Cycles end, whether they run through containers or through the fields of reflected
 *    objects: a pair met again while being compared is taken as equal (the answer
 *    Python's identity shortcut gives for self-containing lists), so a = [1, a] equals
 *    b = [1, [1, b]]. For the hash to agree, a container or object that reaches a cycle
 *    contributes only its type to what holds it; the value hashed itself still mixes in
 *    its type and what its elements or fields contribute. Nesting (containers and
 *    objects together) deeper than FFK_STRUCTURAL_MAX_DEPTH is a RuntimeError, never a
 *    stack overflow.
 *
 * Kinds and variables (tvm_ffi's structural equality, whose numbers and rules these are).
 * A reflected type's FFK_ATTR_S_KIND (ffikit/reflect.h) says how its objects compare:
 *
 *  - tree (the default): as above. const-tree: the same, and an object equals itself
 *    without a look inside. singleton: by identity alone (and hashes by its address).
 *  - var: a variable. Two variables are equal when they are bound to each other. A walk
 *    binds a to b (both ways: a one-to-one map) when it meets them, with equal fields, in
 *    a definition region (a field with FFK_FIELD_S_DEF or FFK_FIELD_S_DEF_SIMPLE, or
 *    everywhere with FFK_STRUCTURAL_MAP_FREE_VARS), or when a is b. Once bound, a equals b
 *    and nothing else, wherever met, and a variable another is bound to equals no other:
 *    Lambda(x, x + 1) equals Lambda(y, y + 1) (the parameter a FFK_FIELD_S_DEF field),
 *    x + 1 equals y + 1 only with FFK_STRUCTURAL_MAP_FREE_VARS, and [x, x] never equals
 *    [y, z]. A variable's own fields are walked in the region it was met in, except that
 *    a simple region (FFK_FIELD_S_DEF_SIMPLE) walks them as uses.
 *  - dag: by fields, and the sharing must match: once a and b are found equal they are
 *    bound as variables are, so [n, n] equals [m, m] but not [m, m2] even when m2 equals m.
 *  - A Map or Dict key that is a bound variable (or dag node) is looked up on the other
 *    side as what it is bound to.
 *  - Hash: a variable met in a definition region (or with FFK_STRUCTURAL_MAP_FREE_VARS)
 *    hashes by its fields and the order in which the walk first met it; elsewhere by its
 *    address. A dag node mixes in the order it was first met. So values equal under the
 *    same flags hash alike under them, provided Maps and Dicts holding variables or dag
 *    nodes iterate alike on both sides (binding order is walk order).
 *  - A variable met inside an object compared with itself is bound to itself, as in
 *    tvm_ffi: [x, Lambda(x, x)] does not equal [x, Lambda(y, y)], since x is bound to x.
 *    (A walk that compares no variable or dag node still takes an object as equal to
 *    itself without a look inside; one that does is run again looking inside. A value
 *    always equals itself.)
 *
 * A structural hook takes part in the walk's bindings through `equal` and `hash`, in the
 * region of the object it was called for.
 */
#ifndef FFIKIT_STRUCTURAL_H
#define FFIKIT_STRUCTURAL_H

#include <ffikit/access_path.h>
#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/*
 * How deep the walks that must see a whole value may nest (containers and reflected
 * objects together): structural equality, hashing and mismatch, deep copy, the JSON
 * graph both ways, and the bindings' own graph walks (Python's pickle). Each walk recurses
 * once per level, so the bound is what keeps the C stack bounded; deeper is the one
 * RuntimeError of ffk_structural_too_deep. Release (ffikit/object.h) and repr
 * (ffikit/repr.h) need no such error: release works at any depth, repr prints "...".
 */
#define FFK_STRUCTURAL_MAX_DEPTH 1000

/*
 * Sets the error every depth-bounded walk raises, in C and in the bindings, so that
 * one text names the limit everywhere: RuntimeError "containers and objects nested
 * deeper than 1000 levels" (FFK_STRUCTURAL_MAX_DEPTH). Returns -1, for `return
 * ffk_structural_too_deep();`. Cannot fail.
 */
FFK_API int ffk_structural_too_deep(void);

/* Options of the _opts forms (combine with |). */
enum {
  FFK_STRUCTURAL_MAP_FREE_VARS = 1u << 0, /* the whole value is a definition region: variables met
                                             outside any (free variables) bind on first meeting
                                             instead of comparing by identity (tvm_ffi's map_free_vars) */
};

/*
 * 1 when `a` and `b` (borrowed) are structurally equal, 0 when not, -1 with a MemoryError,
 * a RuntimeError (the depth limit), what a hook raised (below), a ValueError for NULL,
 * or a ValueError naming a type whose FFK_ATTR_S_KIND is not an ffk_s_kind.
 * ffk_structural_equal_opts(a, b, 0).
 */
FFK_API int ffk_structural_equal(const ffk_any *a, const ffk_any *b);

/*
 * ffk_structural_equal with options: `flags` is 0 or FFK_STRUCTURAL_MAP_FREE_VARS.
 * Other bits are a ValueError. Same ownership (both borrowed) and errors.
 */
FFK_API int ffk_structural_equal_opts(const ffk_any *a, const ffk_any *b, uint32_t flags);

/* The structural hash of `v` (borrowed) in *out. 0, or -1 with the errors of ffk_structural_equal. */
FFK_API int ffk_structural_hash(const ffk_any *v, uint64_t *out);

/*
 * ffk_structural_hash with the options of ffk_structural_equal_opts: values equal under
 * `flags` hash alike under the same `flags`. 0, or -1 with *out 0 and the errors of
 * ffk_structural_equal_opts.
 */
FFK_API int ffk_structural_hash_opts(const ffk_any *v, uint32_t flags, uint64_t *out);

/*
 * Where `a` and `b` (borrowed) first differ structurally. Returns 0 when they are equal
 * (*lhs_path and *rhs_path NULL), 1 with two new ffikit.AccessPath references
 * (ffikit/access_path.h) locating the first difference in `a` and in `b`, or -1 with
 * both NULL and the error ffk_structural_equal would raise. "First" follows the order of
 * the equality walk: sequence elements by index, fields in field order, map entries in
 * `a`'s iteration order, then the keys only `b` has. The paths are tvm_ffi's:
 *
 *   values of different types, or unequal leaves      both paths end at that value
 *   sequences of lengths 2 and 3                       [<missing:2>] in a, [2] in b
 *   a key `k` in a but not in b                        [k] in a, [<missing:k>] in b
 *   a key `k` in b but not in a                        [<missing:k>] in a, [k] in b
 *   field `x` of two objects of one type               .x in both
 *   a hook that reports a difference                   where the hook's `equal` calls put it
 *
 * Cycles and the depth limit as ffk_structural_equal; a pair met again while being
 * compared counts as equal, so a mismatch is always reported where it lies, not where a
 * cycle re-enters.
 */
FFK_API int ffk_structural_first_mismatch(const ffk_any *a, const ffk_any *b, ffk_object **lhs_path,
                                          ffk_object **rhs_path);

/*
 * ffk_structural_first_mismatch with the options of ffk_structural_equal_opts: 0 exactly
 * when ffk_structural_equal_opts(a, b, flags) is 1. A variable bound elsewhere, or not
 * bound, is reported where it was met (the path ends at it); a definition field whose
 * variables fail to bind ends at that field's variable.
 */
FFK_API int ffk_structural_first_mismatch_opts(const ffk_any *a, const ffk_any *b, uint32_t flags,
                                               ffk_object **lhs_path, ffk_object **rhs_path);

/*
 * Per-type hooks (type attributes, ffikit/reflect.h; looked up through the parent chain):
 *
 *  - FFK_ATTR_S_EQUAL ("__s_equal__"): a Function called as hook(a, b, equal) for two
 *    objects of the same type, which returns a bool. `equal` is a Function the walk passes
 *    in: equal(x, y, attr) compares two sub-values structurally within the same walk (same
 *    cycle tracking, depth limit and mismatch paths) and returns a bool; `attr` is a str
 *    naming the step (the mismatch path gains `.attr`) or None (no step). A hook that
 *    returns False without a failing `equal` call reports its object as the mismatch.
 *    tvm_ffi's form equal(x, y, def_region, field_name=None) is accepted too (a bool or
 *    int third argument): def_region 0 / False keeps the hook's region, 1 / True walks x
 *    and y in a pattern definition region (FFK_DEF_REGION_PATTERN), 2 in a simple one
 *    (a pattern region stays one, as for fields); another value is a ValueError.
 *  - FFK_ATTR_S_HASH ("__s_hash__"): a Function called as hook(v, hash) that returns an
 *    int, where hash(x) is the structural hash of a sub-value within the same walk;
 *    tvm_ffi's form hash(x, init_hash, def_region=0) returns x's hash combined into the
 *    int init_hash, x walked in the region def_region names (as for `equal`).
 *    Equal objects must hash alike; the walk mixes in the type key as for other objects.
 *    A type with __s_equal__ and no __s_hash__ hashes by its type key alone (the walk
 *    cannot know what the hook ignores; objects it finds equal share their type), and a
 *    plain registered type with __s_hash__ alone compares by identity.
 *
 * A hook replaces the field-wise walk for its type (reflected or not: a hook gives a
 * plain registered type structural semantics). Hooks are consulted for registered types
 * only: ffikit's built-in types (containers, strings, tensors...) keep their built-in
 * semantics. An error a hook raises ends the walk and is what the walk returns; a hook
 * that returns something else than a bool (equal) or an int (hash), or an attribute that
 * is not a Function, is a TypeError naming the type. The `equal` and `hash` Functions are
 * valid only while the hook that received them runs (a later call is a RuntimeError).
 * Objects of types without reflection and without hooks keep identity semantics, as do
 * tensors, functions and opaque handles.
 */

/*
 * A deep copy of `v` (borrowed) in *out (owned): every List and Dict reachable from it
 * is copied, and so is every Array, Tuple and Map with a List or Dict somewhere inside;
 * an Array, Tuple or Map with none inside is shared, not copied (it can never change:
 * copy-on-write copies it before any change, as CPython's deepcopy shares a tuple of
 * immutables). Other values (strings, tensors, functions, foreign objects) are shared,
 * and so are the keys of a Map or Dict (a container key compares by identity, so a copy of
 * it would be another key: the copy stays structurally equal to `v`).
 * Sharing and cycles are kept: a container reached twice is copied
 * once, and a List that contains itself yields a copy that contains itself.
 *
 * Reflected objects: an object made by reflection (ffk_object_new_reflected,
 * ffk_object_create) is always copied, field by field: ffk_object_shallow_copy, then
 * each object or Any field whose deep copy is another value set on the copy through
 * ffk_field_init; int, float and bool fields are copied by value. The rule is Python's
 * deepcopy of user objects (and tvm_ffi's): the copy is a new object even when every
 * field is read-only and nothing below can change, so an Array, Tuple or Map holding a
 * reflected object is copied too. Sharing and cycles hold for objects as for Lists: an
 * object reached twice is copied once, and one that reaches itself through its fields
 * yields a copy that reaches the copy. An object of a reflected type that reflection did
 * not make (ffk_object_shallow_copy refuses it) is shared, like other foreign objects.
 *
 * Returns 0, or -1 with *out None (MemoryError, RuntimeError for nesting deeper than the
 * limit, or what ffk_object_shallow_copy or ffk_field_init raised, such as a default
 * factory's error). A failure part-way frees every partial copy, even those that already
 * refer to themselves (a List copy holding itself, an object copy whose field leads back
 * to it), and never changes the source.
 */
FFK_API int ffk_deep_copy(const ffk_any *v, ffk_any *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_STRUCTURAL_H */
