/*
 * ffikit/reflect.h - reflected object types: fields, methods and constructors that every
 * language can see.
 *
 * A reflected type is an object type (ffikit/type.h) whose insides are described: its
 * instance size, an ordered list of fields, a list of methods and a constructor. With
 * that, C, Python and Rust code can make its objects from positional and named values,
 * read and write their fields by name, call their methods, and the generic operations
 * (repr, structural equality and hash, deep copy) work on them field by field.
 *
 *     typedef struct { ffk_object header; int64_t x; double y; } point;  // header first
 *
 *     static const ffk_field_def k_point_fields[] = {
 *         {"x", offsetof(point, x), "int", FFK_FIELD_WRITABLE, {0}, "The x coordinate."},
 *         {"y", offsetof(point, y), "float", FFK_FIELD_HAS_DEFAULT,
 *          {.type_index = FFK_TYPE_FLOAT, .v_float = 2.5}, NULL},
 *     };
 *     ffk_type_def def = {.key = "mylib.Point", .parent_index = FFK_TYPE_OBJECT,
 *                         .instance_size = sizeof(point), .fields = k_point_fields, .nfields = 2};
 *     int32_t index = ffk_type_define(&def);          // then: ffk_object_create(index, ...)
 *
 * Fields. A field has a name, a byte offset inside the instance, a type in the signature
 * language of ffikit/schema.h ("int", "Optional<str>", "Array<float>", "mylib.Point"),
 * flags, an optional default and an optional doc text. Its storage, the C type at its
 * offset, follows from its type (ffk_field_storage_for):
 *
 *     int                                   int64_t
 *     float                                 double
 *     bool                                  bool
 *     str, bytes                            ffk_string * / ffk_bytes * (never NULL)
 *     an object type: Object, Function, Tensor, Shape, Array<T>, Tuple, List<T>,
 *       Map<K, V>, Dict<K, V>, a registered type key          ffk_object * (never NULL)
 *     Optional<an object type, str or bytes>                 ffk_object * (NULL is None)
 *     anything else: Any, Device, dtype, ptr, Optional<int>...  ffk_any
 *
 * A value stored in a field has already been converted to the field's type with the
 * rules of typed calls (a bool for an int field is stored as 0/1, "cuda:0" for a Device
 * field as a Device, a List of ints for an Array<int> field as an Array<int>). A field
 * of an object storage owns one strong reference; an ffk_any field owns what it holds.
 *
 * Inheritance. A type's parent is its ffk_type_def's parent_index. A derived type has
 * its parent's fields first, in the parent's order, then its own; it has its parent's
 * methods, where one of its own with the same name replaces the parent's. Its instance
 * size is at least its parent's, and its struct starts with the parent's struct.
 *
 * Constructors. By default a type is constructed from its fields: the positional
 * arguments bind to the fields without FFK_FIELD_INIT_OFF and FFK_FIELD_KW_ONLY, first
 * those without FFK_FIELD_HAS_DEFAULT, then those with one, each group in field order
 * (inherited fields first; tvm_ffi's order: fields {a = 1, b, c = 3, d} take (b, d, a, c)),
 * the named ones to any field without FFK_FIELD_INIT_OFF, defaults fill the rest,
 * and a missing field without a default is a TypeError naming it. A type may supply its
 * own constructor instead: a Function called with the caller's arguments (positional and
 * named, through ffk_function_call_kw) that returns the new object, usually made with
 * ffk_object_new_reflected and filled in. Either way the constructor is callable from
 * every language as the type's `__ffi_init__` method is in TVM-FFI.
 *
 * Lifetime. Type descriptions are never removed: every pointer this header returns
 * (ffk_field_info, ffk_method_info, names, docs) is valid until exit. The objects a
 * description holds (method and constructor Functions, default values and factories)
 * live until exit too, and test builds do not count them in ffk_debug_live_objects. Objects made by
 * ffk_object_new_reflected and ffk_object_create carry ffikit's reflection deleter:
 * when the last strong reference goes it runs the type's `finalize` hooks (most derived
 * first), then releases what every field owns.
 *
 * Threads. Every function here may be called from any thread. Defining a type publishes
 * its description with release order; later readers take no lock. Any number of threads
 * may read fields of a shared object while others write its writable fields: a reader
 * sees the old or the new value, never a torn or freed one (POD fields are atomic words;
 * object fields are swapped without a lock, the old value's reference being dropped
 * once no read section that may have seen it is open; ffk_any fields are swapped under a
 * small striped lock, and the old value is released after the swap). Code that reads a
 * field through a struct pointer directly (p->x) gets no such guarantee for a writable
 * field; ffk_field_get does (and ffk_field_peek, ffikit/unstable/reflect.h). A writable
 * object field's old value may therefore outlive ffk_field_set for as long as another
 * thread's read section (ffikit/unstable/reflect.h) lasts: its deleter then runs on the
 * thread that leaves the last such section.
 */
#ifndef FFIKIT_REFLECT_H
#define FFIKIT_REFLECT_H

#include <ffikit/function.h>
#include <ffikit/schema.h>
#include <ffikit/type.h>

FFK_EXTERN_C_BEGIN

/* Field flags (combine with |). A field is read-only unless FFK_FIELD_WRITABLE. */
enum {
  FFK_FIELD_WRITABLE = 1u << 0,        /* ffk_field_set may change it after construction */
  FFK_FIELD_HAS_DEFAULT = 1u << 1,     /* default_value fills it when a constructor is not given it */
  FFK_FIELD_INIT_OFF = 1u << 2,        /* not a constructor parameter: always its default (or zero/None) */
  FFK_FIELD_KW_ONLY = 1u << 3,         /* a constructor parameter by name only */
  FFK_FIELD_REPR_OFF = 1u << 4,        /* left out of repr */
  FFK_FIELD_COMPARE_OFF = 1u << 5,     /* ignored by structural equality and hash */
  FFK_FIELD_DEFAULT_FACTORY = 1u << 6, /* with HAS_DEFAULT: default_value is a Function called with no
                                          arguments for each new object (a fresh List per object) */
  FFK_FIELD_S_DEF = 1u << 7,           /* structural equality and hash: a definition region (tvm_ffi's
                                          "def" / "def-pattern"): variables met inside it, and inside
                                          the fields of those variables, are bound (ffikit/structural.h) */
  FFK_FIELD_S_DEF_SIMPLE = 1u << 8,    /* a simple definition region ("def-simple"): the variables met
                                          inside it are bound, but their own fields are walked as uses;
                                          inside a FFK_FIELD_S_DEF region it acts as FFK_FIELD_S_DEF.
                                          Takes precedence over FFK_FIELD_S_DEF when both are set */
  /* Set by ffk_type_define alone (an unknown flag in an ffk_field_def): the default does not convert
     to the field's type (`name: str = None`), so it is kept as given and a constructor that
     needs it fails with the conversion's TypeError, naming the field (tvm_ffi checks defaults
     when an object is built, not when its class is defined). */
  FFK_FIELD_DEFAULT_UNCHECKED = 1u << 15,
};

/* The C type stored at a field's offset (see the table above). */
typedef enum {
  FFK_FIELD_STORAGE_INT = 1,    /* int64_t */
  FFK_FIELD_STORAGE_FLOAT = 2,  /* double */
  FFK_FIELD_STORAGE_BOOL = 3,   /* bool */
  FFK_FIELD_STORAGE_OBJECT = 4, /* ffk_object *, owning; NULL only for an Optional type (None) */
  FFK_FIELD_STORAGE_ANY = 5,    /* ffk_any, owning */
} ffk_field_storage;

/* What a type author writes for one field. Every pointer is borrowed and copied. */
typedef struct ffk_field_def {
  const char *name;          /* a C identifier, unique in the type and its ancestors */
  size_t offset;             /* byte offset in the instance; aligned for its storage, past the header */
  const char *type;          /* signature-language type text ("int", "Optional<Array<str>>", "mylib.Point") */
  uint32_t flags;            /* FFK_FIELD_* */
  ffk_any default_value;     /* with FFK_FIELD_HAS_DEFAULT: converted to the field's type when defined */
  const char *doc;           /* may be NULL */
} ffk_field_def;

/* What a type author writes for one method. */
typedef struct ffk_method_def {
  const char *name;          /* unique among the type's own methods */
  ffk_function *function;    /* borrowed; the type keeps a reference */
  bool is_static;            /* false: an instance method, called with the object as argument 0 */
  const char *doc;           /* may be NULL (then the Function's own doc, if any, is used) */
} ffk_method_def;

/* Runs when an object of the type dies, before its fields are released (may be NULL). */
typedef void (*ffk_finalize_fn)(ffk_object *self);

/* A whole type description, for ffk_type_define. Every pointer is borrowed and copied. */
typedef struct ffk_type_def {
  const char *key;                /* the type key, as ffk_type_register takes it */
  int32_t parent_index;           /* FFK_TYPE_OBJECT, or a (reflected or plain) object type */
  size_t instance_size;           /* sizeof the struct; >= the parent's instance size; 0: laid out by ffikit (below) */
  const ffk_field_def *fields;    /* the type's own fields, in order (not the parent's) */
  int32_t nfields;
  const ffk_method_def *methods;  /* the type's own methods */
  int32_t nmethods;
  ffk_function *constructor;      /* borrowed; NULL: constructed from the fields */
  ffk_finalize_fn finalize;       /* may be NULL */
  const char *doc;                /* may be NULL */
} ffk_type_def;

/* A resolved field: the handle the fast paths keep. Immutable, valid until exit. */
typedef struct ffk_field_info {
  const char *name;
  const char *doc;                /* NULL when none */
  const char *type_text;          /* the canonical spelling, as schema->text */
  const ffk_schema *schema;       /* the parsed type */
  int32_t owner_index;            /* the type that declared the field */
  int32_t position;               /* its index in the owner's full field list (parents' first) */
  uint32_t flags;
  int32_t storage;                /* an ffk_field_storage */
  size_t offset;
  ffk_any default_value;          /* owned by the registry; None without FFK_FIELD_HAS_DEFAULT */
} ffk_field_info;

/* A resolved method. Immutable, valid until exit. */
typedef struct ffk_method_info {
  const char *name;
  const char *doc;                /* NULL when none */
  ffk_function *function;         /* borrowed from the registry */
  int32_t owner_index;            /* the type that declared it */
  bool is_static;
} ffk_method_info;

/* The layouts the Rust and Python bindings mirror (LP64). */
#if UINTPTR_MAX == UINT64_MAX
FFK_STATIC_ASSERT(sizeof(ffk_field_def) == 56 && offsetof(ffk_field_def, default_value) == 32, "ffk_field_def layout");
FFK_STATIC_ASSERT(sizeof(ffk_method_def) == 32 && offsetof(ffk_method_def, doc) == 24, "ffk_method_def layout");
FFK_STATIC_ASSERT(sizeof(ffk_type_def) == 80 && offsetof(ffk_type_def, constructor) == 56, "ffk_type_def layout");
FFK_STATIC_ASSERT(sizeof(ffk_field_info) == 72 && offsetof(ffk_field_info, offset) == 48 &&
                      offsetof(ffk_field_info, default_value) == 56,
                  "ffk_field_info layout");
FFK_STATIC_ASSERT(sizeof(ffk_method_info) == 32 && offsetof(ffk_method_info, is_static) == 28, "ffk_method_info layout");
#endif

/* ---- Defining types ------------------------------------------------------------------ */

/*
 * The storage of a field of type `type_text`, or -1 with a ValueError when the text does
 * not parse. Cannot fail otherwise.
 */
FFK_API int ffk_field_storage_for(const char *type_text);

/*
 * Registers `def->key` (as ffk_type_register does) and describes it. Defining the same key
 * again with the same description returns the existing index, so a library may define
 * its types on every load; a plain type registered earlier with ffk_type_register (same
 * parent) gains the description. Returns the type index, or -1 with a ValueError naming
 * the type and the bad part: NULL def or key; a built-in type's key ("ffikit.Array"); a
 * parent that is not an object type; an instance size smaller than the parent's; a field
 * whose name is missing, repeated or not an identifier, whose type text does not parse,
 * whose offset overlaps the header, the parent's instance, another field or the end of
 * the instance or is misaligned for its storage, whose default does not convert to its
 * type (the conversion's message) or whose default factory is not a Function, or whose
 * flags are outside FFK_FIELD_*; a method without a name or Function or named twice; a
 * key defined before with another description, or a plain type that a reflected type
 * already derives from; or a MemoryError. A failed call leaves no type behind beyond
 * what ffk_type_register may have made.
 */
FFK_API int32_t ffk_type_define(const ffk_type_def *def);

/*
 * Adds a method to a defined type after the fact, or replaces the type's own method of
 * that name (callers that looked the old one up keep a valid ffk_method_info). Subtypes
 * see it unless they define the name themselves. Returns 0, or -1 with a ValueError (not
 * a reflected type, no name or Function) or a MemoryError.
 */
FFK_API int ffk_type_add_method(int32_t type_index, const ffk_method_def *method);

/*
 * Automatic layout, for bindings that define types from a language without C structs
 * (Python's py_class). When def->instance_size is 0, ffikit lays the instance out: every
 * field's def offset must be 0, and the fields are placed in order after the parent's
 * instance (after the object header for a type without a reflected parent), each at the
 * next offset aligned for its storage; the instance size is the end rounded up to 8.
 * ffk_type_instance_size and ffk_type_field_at report the result. Defining such a type
 * again with the same description (instance_size 0 again) returns the existing index.
 * Errors as ffk_type_define, and a ValueError for a non-zero offset.
 */

/* ---- Type attributes ----------------------------------------------------------------- */

/*
 * Named values attached to a type, the hooks generic operations look up (tvm_ffi's type
 * attribute columns). Names ffikit itself consults:
 *
 *   "__s_equal__"        Function(a, b, equal) -> bool: structural equality of two objects of
 *                        the type (ffikit/structural.h says how `equal` recurses)
 *   "__s_hash__"         Function(v, hash) -> int: its structural hash
 *   "__s_kind__"         int, an ffk_s_kind: how structural equality treats it (below)
 *   "__data_to_json__"   Function(v) -> a JSON-able value: its data in a JSON graph
 *                        (ffikit/serialization.h)
 *   "__data_from_json__" Function(data) -> object: rebuilds it from that data
 *   "__s_visit__", "__s_mutate__"  the descent of structural walks and rewrites
 *                        (ffikit/structural_visit.h)
 *
 * Other names are free for libraries (a name starting "__" is reserved for ffikit).
 * Lookup walks the parent chain, most derived first, so a hook on a base type applies to
 * its subtypes unless one of them sets its own; a None value set on a subtype hides the
 * parent's (the subtype then has no such attribute).
 */
#define FFK_ATTR_S_EQUAL "__s_equal__"
#define FFK_ATTR_S_HASH "__s_hash__"
#define FFK_ATTR_S_KIND "__s_kind__"

/*
 * The value of the "__s_kind__" type attribute (an int): how structural equality and
 * hash (ffikit/structural.h) treat objects of the type. The numbers are tvm_ffi's. A type
 * without the attribute (or a parent's) is FFK_S_KIND_TREE; another value is a
 * ValueError naming the type when a walk meets one of its objects. Hooks (__s_equal__ /
 * __s_hash__) replace the field-wise comparison of tree, const-tree, var and dag kinds
 * alike, the kind still deciding how the object is bound.
 *
 *   FFK_S_KIND_TREE        by type and compared fields (the default)
 *   FFK_S_KIND_VAR         a variable: equal to another only where bound to it (a
 *                          definition region, FFK_FIELD_S_DEF, or map_free_vars), or to
 *                          itself; hashes by binding order there, by identity elsewhere
 *   FFK_S_KIND_DAG         by fields, and the sharing must match: an object met twice on
 *                          one side corresponds to one object on the other
 *   FFK_S_KIND_CONST_TREE  as TREE, and an object equals itself without a look inside
 *                          (for types that never hold variables)
 *   FFK_S_KIND_SINGLETON   by identity only
 */
typedef enum {
  FFK_S_KIND_TREE = 1,
  FFK_S_KIND_VAR = 2,
  FFK_S_KIND_DAG = 3,
  FFK_S_KIND_CONST_TREE = 4,
  FFK_S_KIND_SINGLETON = 5,
} ffk_s_kind;
#define FFK_ATTR_DATA_TO_JSON "__data_to_json__"
#define FFK_ATTR_DATA_FROM_JSON "__data_from_json__"

/*
 * Sets attribute `name` of a type (registered or static) to `value` (borrowed; the
 * registry keeps an owned copy until exit), replacing an earlier value (which stays
 * alive until exit, so a concurrent reader of it is safe). Test builds do not count the
 * kept values in ffk_debug_live_objects. Returns 0, or -1 with a ValueError (unknown
 * type index, NULL or empty name, NULL value) or a MemoryError.
 */
FFK_API int ffk_type_set_attr(int32_t type_index, const char *name, const ffk_any *value);

/*
 * Looks attribute `name` up on the type and then its ancestors. Returns 1 with *out a
 * new reference, 0 when none has it (or the nearest has None; *out None, no error set),
 * or -1 with a ValueError (unknown type index, NULL name or out). Takes no lock and
 * writes nothing shared but the found value's reference count (a type's attributes are
 * a small immutable table, replaced whole by ffk_type_set_attr); a walk over many
 * objects of a few types still does well to look a hook up once per type.
 */
FFK_API int ffk_type_get_attr(int32_t type_index, const char *name, ffk_any *out);

/*
 * ffk_type_get_attr on the type alone, its ancestors not consulted: for attributes that
 * describe one type and must not be inherited (an enum's registry, ffikit/enum.h).
 * Returns 1 with *out a new reference, 0 when the type itself has none (or None; *out
 * None, no error set), or -1 with a ValueError (unknown type index, NULL name or out).
 * Lock-free, as ffk_type_get_attr.
 */
FFK_API int ffk_type_get_own_attr(int32_t type_index, const char *name, ffk_any *out);

/* ---- Looking types up ---------------------------------------------------------------- */

/* True when `type_index` was described by ffk_type_define. Cannot fail. */
FFK_API bool ffk_type_is_reflected(int32_t type_index);

/*
 * ffk_type_is_reflected as a check, for an operation that needs a reflected type (making
 * one from its fields, ffk_object_new_reflected, ffk_object_create). Returns 0, or -1 with
 * a ValueError: ffk_type_check_index's for an unknown index, else "`K` is not a reflected
 * type (it has no fields or constructor)" naming the type's key K.
 */
FFK_API int ffk_type_check_reflected(int32_t type_index);

/* The instance size of a reflected type, or 0 for another index. Cannot fail. */
FFK_API size_t ffk_type_instance_size(int32_t type_index);

/* The doc text of a reflected type, or NULL. Borrowed, valid until exit. Cannot fail. */
FFK_API const char *ffk_type_doc(int32_t type_index);

/* The supplied constructor of a reflected type (borrowed), or NULL when constructed from its fields. */
FFK_API ffk_function *ffk_type_constructor(int32_t type_index);

/*
 * The number of fields of a type, inherited ones included: 0 for a type without
 * fields (a plain registered type, a static type). -1 with a ValueError for an unknown
 * index.
 */
FFK_API int32_t ffk_type_num_fields(int32_t type_index);

/* Field `i` of the full list (parents' first), or NULL with an IndexError / ValueError. */
FFK_API const ffk_field_info *ffk_type_field_at(int32_t type_index, int32_t i);

/*
 * Finds a field by name among a type's fields (inherited included). Returns 1 and sets
 * *out, 0 when there is none (no error set), -1 with a ValueError (unknown type, NULL
 * name or out).
 */
FFK_API int ffk_type_find_field(int32_t type_index, const char *name, const ffk_field_info **out);

/*
 * ffk_type_find_field for a name that must be there: 0 and *out set (borrowed, valid
 * while the type is registered), or -1 with *out NULL and an AttributeError
 * "`mylib.Point` object has no field `z`" (the type's ffk_type_name) when the type has no
 * such field, or a ValueError as ffk_type_find_field (unknown type, NULL name or out).
 * The one text both bindings raise for a missing field.
 */
FFK_API int ffk_type_get_field(int32_t type_index, const char *name, const ffk_field_info **out);

/* The number of methods of a type, inherited (and not overridden) ones included; 0 or -1 as above. */
FFK_API int32_t ffk_type_num_methods(int32_t type_index);

/* Method `i` (parents' first, an override in its parent's place), or NULL with an IndexError / ValueError. */
FFK_API const ffk_method_info *ffk_type_method_at(int32_t type_index, int32_t i);

/* Finds a method by name, most derived first. 1 / 0 / -1 as ffk_type_find_field. */
FFK_API int ffk_type_find_method(int32_t type_index, const char *name, const ffk_method_info **out);

/*
 * Calls `fn(index, key, ctx)` for every type, static and registered, in index order,
 * stopping early when it returns non-zero (that value is returned). Types registered
 * during the walk may or may not be seen. Returns 0 after a full walk, or -1 with a
 * ValueError when fn is NULL.
 */
FFK_API int ffk_type_for_each(int (*fn)(int32_t type_index, const char *key, void *ctx), void *ctx);

/* ---- Objects ------------------------------------------------------------------------- */

/*
 * A new object of a reflected type with every field at its default (defaults from a
 * factory are called), and zero, 0.0, false or None where a field has none. An object
 * field of a non-Optional type without a default is NULL until set: a supplied
 * constructor must set it. Returns a new reference, or NULL with a ValueError (not a
 * reflected type), a MemoryError or what a default factory raised.
 */
FFK_API ffk_object *ffk_object_new_reflected(int32_t type_index);

/*
 * Creates an object of a reflected type by its constructor, from `npos` positional values
 * followed by `nkw` named ones (args[npos + j] is named kwnames[j]), all borrowed, as
 * ffk_function_call_kw takes them. Values convert to the fields' types; errors:
 *   TypeError  Mismatched type on field `x` of `mylib.Point`: expected `int` but got `str`
 *   TypeError  mylib.Point.__init__() missing required argument: `y`
 *   TypeError  mylib.Point.__init__() takes 2 positional arguments but 3 were given
 *   TypeError  mylib.Point.__init__() got an unexpected keyword argument `z`
 *   TypeError  mylib.Point.__init__() got multiple values for argument `x`
 *   ValueError for an unknown or non-reflected type index, or a NULL out;
 * a MemoryError, or what a supplied constructor raised (and a TypeError if it returned
 * something that is not an instance of the type). On success *out is a new reference;
 * on failure *out is NULL and nothing is left alive.
 */
FFK_API int ffk_object_create(int32_t type_index, const ffk_any *args, int32_t npos, const char *const *kwnames,
                              int32_t nkw, ffk_object **out);

/*
 * Reads field `field` of `obj` (borrowed) into *out (a new reference: containers are not
 * copied). Returns 0, or -1 with *out None and a TypeError when obj is NULL or not an
 * instance of the field's owner type, or a MemoryError when a writable object field is
 * read on a thread whose first read section (ffikit/unstable/reflect.h) cannot register
 * its record.
 */
FFK_API int ffk_field_get(const ffk_field_info *field, const ffk_object *obj, ffk_any *out);

/*
 * Writes `value` (borrowed) to field `field` of `obj`, converting it to the field's type.
 * Returns 0, or -1 with the field unchanged and an AttributeError for a read-only field
 * ("field `v_f64` of `testing.TestObjectBase` is read-only"), a TypeError for a value of
 * the wrong type (the message of ffk_object_create) or an obj that is not an instance of
 * the owner type, a ValueError for NULL arguments, or a MemoryError.
 */
FFK_API int ffk_field_set(const ffk_field_info *field, ffk_object *obj, const ffk_any *value);

/*
 * ffk_field_set without the writable check, for constructors that fill a fresh object
 * they alone hold (a supplied constructor setting read-only fields). Same errors
 * otherwise.
 */
FFK_API int ffk_field_init(const ffk_field_info *field, ffk_object *obj, const ffk_any *value);

/*
 * By name: ffk_field_get/ffk_field_set after ffk_type_find_field on obj's type. An
 * unknown name is an AttributeError: "`mylib.Point` object has no field `z`".
 */
FFK_API int ffk_object_get_field(const ffk_object *obj, const char *name, ffk_any *out);
FFK_API int ffk_object_set_field(ffk_object *obj, const char *name, const ffk_any *value);

/*
 * Calls method `name` of obj's type: an instance method receives obj as argument 0
 * followed by args, a static one receives args only. *result as ffk_function_call.
 * Returns 0, or -1 with an AttributeError ("`mylib.Point` object has no method `norm`"),
 * a ValueError for NULL arguments, or what the method raised.
 */
FFK_API int ffk_object_call_method(ffk_object *obj, const char *name, const ffk_any *args, int32_t nargs,
                                   ffk_any *result);

/*
 * Whether `self` (borrowed, may be NULL) may be the object an instance method of
 * `method` is called on: an instance of the method's owner type. For a binding that calls
 * a method's Function itself (Python's `Class.method(obj, ...)`), where
 * ffk_object_call_method's look-up on obj's own type does not apply. Returns 0, or -1
 * with a TypeError "`m` of `T` does not apply to a `U` object" (U is the key of self's
 * type, or None), or a ValueError for a NULL method. Lock-free.
 */
FFK_API int ffk_method_check_self(const ffk_method_info *method, const ffk_object *self);

/*
 * A new object of obj's type holding the same field values (references retained, not
 * copied); what deep copy builds on. Only for objects made by reflection (whose state is
 * their fields): another object is a TypeError naming its type. NULL with an error, or
 * a new reference.
 */
FFK_API ffk_object *ffk_object_shallow_copy(const ffk_object *obj);

/*
 * True when `obj` (borrowed, may be NULL) was made by reflection (ffk_object_new_reflected,
 * ffk_object_create, ffk_object_shallow_copy): its whole state is its fields, so generic
 * operations may copy and rebuild it field by field (deep copy, JSON graph). An object of
 * a reflected type that its library allocated itself is not. Cannot fail.
 */
FFK_API bool ffk_object_is_reflection_made(const ffk_object *obj);

/*
 * Field-wise encoding, for encoders that write an object as its type key and its field
 * values and rebuild it elsewhere (Python's pickle, a binding's own format): the pair
 * reads and writes every field of an object made by reflection, inherited ones included,
 * in the type's field order (ffk_type_field_at), read-only ones too.
 *
 * ffk_object_field_values stores the value of each of the `n` fields of `obj` (borrowed)
 * in out[0..n), each a new reference (containers are not copied: the caller gets the very
 * List a field holds); `n` must be ffk_type_num_fields(obj->type_index). Each field is
 * read as ffk_field_get reads it; the values are not one atomic snapshot of an object
 * that other threads write meanwhile. Returns 0, or -1 with out[0..n) None and:
 *   TypeError  cannot read the fields of a `mylib.Plain`: only objects made by reflection are field-wise
 *   ValueError `mylib.Point` has 2 fields, not 3        (n is not the field count)
 *   ValueError for a NULL obj, or a NULL out with n > 0; a MemoryError.
 *
 * ffk_object_init_fields writes `values` (n borrowed values, field order) into the fields
 * of `obj`, read-only ones too, converting each to its field's type as ffk_field_init
 * does. It is for an object its caller alone holds and has just made with
 * ffk_object_new_reflected (a decoder fills the fields after making every object of a
 * graph, so that a cycle through any field can be rebuilt). Every value is converted
 * before any field is written, so a value of the wrong type leaves obj unchanged. The
 * type's field write hook (ffikit/unstable/reflect.h) is called for each field
 * written. Returns 0, or -1 with:
 *   TypeError  Mismatched type on field `x` of `mylib.Point`: expected `int` but got `str`
 *   TypeError  cannot set the fields of a `mylib.Plain`: only objects made by reflection are field-wise
 *   ValueError `mylib.Point` has 2 fields, not 3
 *   ValueError for a NULL obj, or NULL values with n > 0;
 *   MemoryError (converting, or storing a writable object field that held a value: then
 *   the fields before it have their new values, the others their old ones).
 */
FFK_API int ffk_object_field_values(const ffk_object *obj, ffk_any *out, int32_t n);
FFK_API int ffk_object_init_fields(ffk_object *obj, const ffk_any *values, int32_t n);

FFK_EXTERN_C_END

#endif /* FFIKIT_REFLECT_H */
