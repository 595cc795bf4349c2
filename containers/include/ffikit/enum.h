/*
 * ffikit/enum.h - enum types: registered types whose members are singletons (tvm_ffi's
 * ffi.Enum, ffi.IntEnum, ffi.StrEnum and their registry, ffi.EnumState).
 *
 * An enum type is a reflected type derived from one of three base types the containers
 * library defines at load:
 *
 *   ffi.Enum      members carry an int index (their registration order unless given) and
 *                 a str index (their name); fields `_int_index: int`, `_str_index: str`
 *   ffi.IntEnum   (derives from ffi.Enum) the int index is the member's value, given
 *                 explicitly; a field of an IntEnum type converts an int to its member
 *   ffi.StrEnum   (derives from ffi.Enum) the str index is the member's value; a field of a
 *                 StrEnum type converts a str to its member
 *
 * An enum type may add fields of its own (ffk_type_define with the base as parent and a
 * struct that starts with ffk_enum_obj). Its members are made once, registered in the
 * type's registry and never removed: lookups by int or str index return the very same
 * object, so identity is equality. Structural equality and hash treat enum objects as
 * singletons (FFK_S_KIND_SINGLETON: by identity); repr prints `<type key>.<str index>`;
 * the JSON graph (ffikit/serialization.h) writes a member as its type key and its str
 * index (an IntEnum member: its int index) and reads it back as the registered singleton.
 *
 * The registry of a type is an `ffi.EnumState` object (fields `entries: List<Object>` in
 * registration order, `indexes: Dict<Any, Object>` from both indices to the member,
 * `attrs: Dict<str, Dict<Object, Any>>`: named attribute columns keyed by member), kept as
 * the type's own attribute FFK_ENUM_STATE_ATTR (not inherited by derived types). Its
 * containers are shared (List / Dict): reading them is safe from any thread; registering
 * goes through the functions below, which keep the entries and indexes consistent.
 *
 * Ownership and errors follow ffikit's rules: arguments are borrowed, results new
 * references; a function that fails returns -1 (or NULL) and leaves an error in the
 * thread's slot. Every function may be called from any thread: registration is serialised
 * by one lock, lookups take only the lock of the Dict they read.
 */
#ifndef FFIKIT_ENUM_H
#define FFIKIT_ENUM_H

#include <ffikit/array.h>
#include <ffikit/dict.h>
#include <ffikit/list.h>

FFK_EXTERN_C_BEGIN

/* The type attribute that holds a type's registry (tvm_ffi's name). */
#define FFK_ENUM_STATE_ATTR "__ffi_enum__"

/* The three kinds of enum type, by the base they derive from. */
typedef enum {
  FFK_ENUM_PLAIN = 0, /* ffi.Enum */
  FFK_ENUM_INT = 1,   /* ffi.IntEnum */
  FFK_ENUM_STR = 2,   /* ffi.StrEnum */
} ffk_enum_kind;

/* The layout every enum member starts with (fields read-only once registered). */
typedef struct ffk_enum_obj {
  ffk_object header;
  int64_t int_index;      /* field `_int_index` */
  ffk_string *str_index;  /* field `_str_index`; never NULL in a registered member */
} ffk_enum_obj;

/* The registry of one enum type (the fields of ffi.EnumState; none is ever NULL). */
typedef struct ffk_enum_state_obj {
  ffk_object header;
  ffk_list *entries;
  ffk_dict *indexes;
  ffk_dict *attrs;
} ffk_enum_state_obj;

/*
 * The type index of a base type (ffi.Enum, ffi.IntEnum or ffi.StrEnum for kind), or of
 * ffi.EnumState for ffk_enum_state_type_index. -1 with a RuntimeError when the type could
 * not be defined at load (out of memory), a ValueError for an unknown kind.
 */
FFK_API int32_t ffk_enum_base_index(ffk_enum_kind kind);
FFK_API int32_t ffk_enum_state_type_index(void);

/*
 * The kind of an enum type (FFK_ENUM_PLAIN, _INT, _STR: the nearest base it derives
 * from; the bases themselves included), or -1 when `type_index` is not an enum type
 * (no error set). Cannot fail.
 */
FFK_API int ffk_enum_kind_of(int32_t type_index);

/* True when `obj` (borrowed, may be NULL) is an object of an enum type. Cannot fail. */
FFK_API bool ffk_enum_is_member(const ffk_object *obj);

/*
 * Defines enum type `key` of `kind` with no fields of its own (ffk_type_define with the
 * kind's base as parent; defining it again returns the same index). Returns the type
 * index, or -1 with ffk_type_define's errors (a key defined before as another type is a
 * ValueError), a ValueError for an unknown kind.
 */
FFK_API int32_t ffk_enum_define(const char *key, ffk_enum_kind kind, const char *doc);

/*
 * The registry of enum type `type_index`: 1 with *out a new reference to its ffi.EnumState,
 * 0 when it has none yet and `create` is false (*out NULL, no error set). With `create` an
 * empty registry is made and attached first (once, even when threads race). -1 with *out
 * NULL and a TypeError when the type is not an enum type ("`mylib.Point` is not an enum
 * type"), a ValueError for an unknown index or NULL out, a MemoryError, or a TypeError
 * when the type's FFK_ENUM_STATE_ATTR holds something that is not an ffi.EnumState.
 */
FFK_API int ffk_enum_state(int32_t type_index, bool create, ffk_object **out);

/*
 * Makes and registers a member of enum type `type_index` named `name` (its str index, a
 * NUL-terminated UTF-8 string) with every other field at its default. `value` is the int
 * index: required (non-NULL) for an IntEnum type, and NULL for the others, whose int index
 * is the number of members registered before (tvm_ffi's EnumDef rules). On success returns
 * 0 and, when `out` is not NULL, *out is a new reference to the member. -1 with:
 *   ValueError  Duplicate enum index for type `mylib.Color`   (the name or the int index is taken)
 *   TypeError   `mylib.Color` is not an enum type
 *   TypeError   an IntEnum member needs an explicit int index / only an IntEnum member takes one
 *   ValueError  for a NULL name, invalid UTF-8, an unknown type index; a MemoryError; or
 *   what making the object raised (a default factory's error).
 */
FFK_API int ffk_enum_add(int32_t type_index, const char *name, const int64_t *value, ffk_object **out);

/*
 * Registers `member` (borrowed; the registry keeps a reference), an object of exactly
 * type `type_index` that its caller has made and filled (its `_int_index` and
 * `_str_index` fields set, as Python's py_class enums do through their constructor).
 * 0, or -1 with the Duplicate ValueError above, a TypeError for an object of another type
 * or a non-enum type, a ValueError for NULL, or a MemoryError. A failed call registers
 * nothing.
 */
FFK_API int ffk_enum_register(int32_t type_index, ffk_object *member);

/*
 * Lookups. By str index (`size` bytes of UTF-8 at `name`), by int index, or by an index
 * value (an int, a bool as 0/1, or a str): 1 with *out a new reference to the member, 0
 * when the type has no such member (*out NULL, no error set; a type without a registry has
 * none), -1 with *out NULL and a TypeError (not an enum type; ffk_enum_get: an index that
 * is neither int nor str), a ValueError (unknown type index, NULL out, NULL name with
 * size > 0).
 */
FFK_API int ffk_enum_get_str(int32_t type_index, const char *name, size_t size, ffk_object **out);
FFK_API int ffk_enum_get_int(int32_t type_index, int64_t value, ffk_object **out);
FFK_API int ffk_enum_get(int32_t type_index, const ffk_any *index, ffk_object **out);

/*
 * The number of members of enum type `type_index` (0 without a registry), or -1 with a
 * TypeError / ValueError as above.
 */
FFK_API int64_t ffk_enum_count(int32_t type_index);

/*
 * The members in registration order: a new Array (a snapshot), or NULL with a TypeError /
 * ValueError as above or a MemoryError. An empty Array for a type without a registry.
 */
FFK_API ffk_array *ffk_enum_members(int32_t type_index);

/*
 * A member's int index and str index (`_int_index`, `_str_index`). The str index is
 * borrowed from the member (valid while it is). -1 / NULL with a TypeError when `member`
 * is not an enum object (or NULL).
 */
FFK_API int ffk_enum_member_int(const ffk_object *member, int64_t *out);
FFK_API const ffk_string *ffk_enum_member_str_borrow(const ffk_object *member);

/*
 * Attribute columns: per-member values under a name (tvm_ffi's EnumAttrMap / set_attr).
 * ffk_enum_attr_set stores `value` (borrowed) for `member` in column `attr` of the type's
 * registry, making the registry and the column when needed: 0, or -1 with a TypeError
 * (not an enum type; a member that is not an object of exactly this type), a ValueError
 * (NULL arguments, unknown index) or a MemoryError. ffk_enum_attr_get: 1 with *out a new
 * reference, 0 when the member has no value in the column or there is no such column
 * (*out None, no error set), -1 with *out None and the errors of ffk_enum_attr_set.
 */
FFK_API int ffk_enum_attr_set(int32_t type_index, const char *attr, const ffk_object *member, const ffk_any *value);
FFK_API int ffk_enum_attr_get(int32_t type_index, const char *attr, const ffk_object *member, ffk_any *out);

FFK_EXTERN_C_END

#endif /* FFIKIT_ENUM_H */
