/*
 * ffikit/access_path.h - where a value sits inside another: a path of attribute, item
 * and key steps from a root, as structural tools report it.
 *
 * An access path is an immutable reflected object of type "ffikit.AccessPath" with the
 * read-only fields
 *
 *     parent  Optional<ffikit.AccessPath>   None for the root
 *     step    Optional<ffikit.AccessStep>   None for the root
 *     depth   int                           0 for the root, the parent's + 1 otherwise
 *
 * and a step is an immutable reflected object of type "ffikit.AccessStep" with the
 * read-only fields `kind` (int, an ffk_access_kind) and `key` (Any: the attribute name
 * as a str, the index as an int, or the map key). Extending a path never changes it: it
 * makes a child that shares the parent, so the paths of one walk form a tree.
 *
 * Both types carry reflected methods with the names and meanings of tvm_ffi's
 * AccessPath, so every binding gets them from reflection rather than its own copy:
 * `_root` (static), `_attr`, `_attr_missing`, `_array_item`, `_array_item_missing`,
 * `_map_item`, `_map_item_missing`, `_extend` (with a step), `_is_prefix_of`,
 * `_path_equal`, `_to_steps` (an Array of the steps, root first).
 *
 * Printing (ffk_repr), tvm_ffi 0.1.15's text: the root is `<root>`, then one part per step:
 *
 *     attribute `body`                         .body
 *     array item 1                             [1]
 *     map item "k" / 3 / None                  ["k"] / [3] / [None]   (the key as ffk_repr writes it)
 *     missing array item 2                     [<missing:2>]
 *     missing map item "k"                     [<missing:"k">]
 *     missing attribute `x`                    [<missing:"x">]        (sic: tvm_ffi's text)
 *
 * so a mismatch deep in a tree prints `<root>.body[1]["k"]`.
 *
 * Two paths are equal (ffk_access_path_equal) when they have the same steps: same kinds
 * and keys equal by key semantics (ffk_any_equal). Paths are thread-safe (immutable).
 */
#ifndef FFIKIT_ACCESS_PATH_H
#define FFIKIT_ACCESS_PATH_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/* The kind of one step; the values are tvm_ffi's AccessKind. */
typedef enum {
  FFK_ACCESS_ATTR = 0,               /* .name: a field of an object */
  FFK_ACCESS_ARRAY_ITEM = 1,         /* [i]: an element of an Array, Tuple or List */
  FFK_ACCESS_MAP_ITEM = 2,           /* [key]: a value of a Map or Dict */
  FFK_ACCESS_ATTR_MISSING = 3,       /* a field the other side has and this one lacks */
  FFK_ACCESS_ARRAY_ITEM_MISSING = 4, /* an index past this side's end */
  FFK_ACCESS_MAP_ITEM_MISSING = 5,   /* a key this side lacks */
} ffk_access_kind;

/* The type indices of ffikit.AccessPath and ffikit.AccessStep (registered at load). Cannot fail. */
FFK_API int32_t ffk_access_path_type_index(void);
FFK_API int32_t ffk_access_step_type_index(void);

/* The root path (a new reference), or NULL with a MemoryError. */
FFK_API ffk_object *ffk_access_path_root(void);

/*
 * A new path: `parent` (borrowed, an AccessPath) followed by one step of `kind` with
 * `key` (borrowed; a str for the attribute kinds, an int for the array kinds, any value
 * for the map kinds). Returns a new reference, or NULL with a TypeError (parent not an
 * AccessPath, a key of the wrong type for the kind), a ValueError (a kind outside
 * ffk_access_kind) or a MemoryError.
 */
FFK_API ffk_object *ffk_access_path_extend(const ffk_object *parent, int kind, const ffk_any *key);

/* The parent of `path` (borrowed), or NULL for the root or a non-path. Cannot fail. */
FFK_API const ffk_object *ffk_access_path_parent(const ffk_object *path);

/* The depth of `path` (0 for the root), or -1 with a TypeError for a non-path. */
FFK_API int32_t ffk_access_path_depth(const ffk_object *path);

/*
 * The last step of `path`: its kind in *kind and its key in *key (a new reference).
 * Returns 1, 0 for the root (*key None), or -1 with a TypeError for a non-path.
 */
FFK_API int ffk_access_path_last_step(const ffk_object *path, int *kind, ffk_any *key);

/* 1 when the two paths have the same steps, 0 when not, -1 with a TypeError for a non-path. */
FFK_API int ffk_access_path_equal(const ffk_object *a, const ffk_object *b);

/* 1 when `prefix`'s steps begin `path`'s (a path is a prefix of itself), 0, or -1 as above. */
FFK_API int ffk_access_path_is_prefix_of(const ffk_object *prefix, const ffk_object *path);

FFK_EXTERN_C_END

#endif /* FFIKIT_ACCESS_PATH_H */
