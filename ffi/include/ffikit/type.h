/*
 * ffikit/type.h - the type registry: static type indices and types registered at run time.
 *
 * Every type has an index, a key ("ffikit.String", "mylib.Point") and at most one
 * parent (single inheritance; object types descend from FFK_TYPE_OBJECT unless they
 * name another parent). The indices below FFK_TYPE_STATIC_END are fixed by the ABI;
 * registered types get indices from FFK_TYPE_STATIC_END upwards, in registration order.
 *
 * Thread safety: every function here may be called from any thread at any time.
 * Entries are never removed, so a key or type name pointer stays valid until exit.
 * Looking up by index takes no lock.
 */
#ifndef FFIKIT_TYPE_H
#define FFIKIT_TYPE_H

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

struct ffk_repr_ctx;

/*
 * A repr slot writes the text of one object into a repr context (see ffikit/repr.h).
 * Returns 0, or -1 with an error set.
 */
typedef int (*ffk_repr_fn)(ffk_object *self, struct ffk_repr_ctx *ctx);

/* The most types a process can register at run time. */
#define FFK_TYPE_MAX_DYNAMIC 65536

/*
 * Registers an object type under `key` with parent `parent_index` (an object type;
 * pass FFK_TYPE_OBJECT for none in particular). Registering the same key again with the
 * same parent returns the existing index, so libraries may register on every load.
 * Returns the type index (>= FFK_TYPE_STATIC_END), or -1 with a ValueError (key NULL,
 * empty or longer than 255 bytes; parent unknown or not an object type; key already
 * registered with another parent) or a MemoryError (registry full or out of memory).
 */
FFK_API int32_t ffk_type_register(const char *key, int32_t parent_index);

/*
 * Finds a type by key. Returns 1 and sets *out_index when found, 0 when no type has
 * that key, -1 with a ValueError when key is NULL.
 */
FFK_API int ffk_type_lookup(const char *key, int32_t *out_index);

/* True when `type_index` names a type (static or registered). Cannot fail. */
FFK_API bool ffk_type_exists(int32_t type_index);

/*
 * The checked form of ffk_type_exists, for a binding that takes a type index from its
 * user: 0 when `type_index` names a type (static or registered), or -1 with a ValueError
 * "type index 42 is not a registered type" (the text every type query of reflect.h
 * raises for an unknown index). Both bindings raise this one text for this one rule.
 */
FFK_API int ffk_type_check_index(int32_t type_index);

/*
 * The key of a type ("ffikit.String", "mylib.Point"), or NULL for an unknown index.
 * Borrowed: static storage, valid until exit. Cannot fail.
 */
FFK_API const char *ffk_type_key(int32_t type_index);

/*
 * The short name used in messages ("int", "str", "Array", "mylib.Point"); for an
 * unknown index, the text "<unknown type>". Borrowed, valid until exit. Cannot fail.
 */
FFK_API const char *ffk_type_name(int32_t type_index);

/* The parent of a type, or -1 for a root (POD types, FFK_TYPE_OBJECT) or unknown index. */
FFK_API int32_t ffk_type_parent(int32_t type_index);

/*
 * True when `type_index` is `base_index` or descends from it. Every object type is
 * an instance of FFK_TYPE_OBJECT. Unknown indices are instances of nothing. Cannot fail.
 */
FFK_API bool ffk_type_is_instance(int32_t type_index, int32_t base_index);

/* True when an object of `type_index` is an instance of `base_index` (NULL gives false). */
FFK_API bool ffk_object_is_instance(const ffk_object *obj, int32_t base_index);

/*
 * How instances of a type behave as keys: the hash and the equality that ffk_any_hash
 * and ffk_any_equal (and so every Map and Dict, and the identity of Map keys in every
 * binding) use for them instead of the object's identity. Both see objects of exactly
 * the type they are set for (not its subtypes) and must agree: equal objects hash
 * alike. They must not fail or change anything, and the hash must not change while the
 * object lives (so a type with key operations should have no writable field that the
 * hash reads). Equality is only asked of two distinct objects of the type.
 */
typedef uint64_t (*ffk_key_hash_fn)(const ffk_object *obj);
typedef bool (*ffk_key_equal_fn)(const ffk_object *a, const ffk_object *b);

/*
 * Sets the key operations of a registered object type (index >= FFK_TYPE_STATIC_END);
 * NULL for both restores identity. Set them once, before any instance is used as a key:
 * a table that already holds an instance keeps it where its old hash put it. Returns 0,
 * or -1 with a ValueError for an unknown or built-in type index, or only one of the two
 * functions NULL.
 */
FFK_API int ffk_type_set_key_ops(int32_t type_index, ffk_key_hash_fn hash, ffk_key_equal_fn equal);

/*
 * Sets the repr slot of an object type (NULL restores the default `<mylib.Point at
 * 0x...>`). Subtypes without a slot of their own use their parent's. Returns 0, or -1
 * with a ValueError for an unknown or non-object type index.
 */
FFK_API int ffk_type_set_repr(int32_t type_index, ffk_repr_fn repr);

/* The number of registered types, static ones included. Cannot fail. */
FFK_API int32_t ffk_type_count(void);

FFK_EXTERN_C_END

#endif /* FFIKIT_TYPE_H */
