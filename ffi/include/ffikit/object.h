/*
 * ffikit/object.h - the object header, reference counting and weak references.
 *
 * Every ffikit object starts with ffk_object (24 bytes, bit-compatible with TVM-FFI's
 * TVMFFIObject). `refcount` packs two counts in one 64-bit word that is only ever
 * accessed atomically:
 *
 *     bits  0..31  strong count: owners of the object
 *     bits 32..63  weak count:   weak holders, plus 1 shared by all strong holders
 *
 * A new object starts at strong 1, weak 1. When the strong count reaches 0 the
 * deleter destroys the contents (which = FFK_DELETER_DESTROY) and the shared weak
 * unit is released; when the weak count reaches 0 the memory is freed
 * (FFK_DELETER_FREE). When both happen at once the deleter gets FFK_DELETER_BOTH.
 *
 * Orders: increments are relaxed, decrements release with an acquire fence before
 * destruction, the uniqueness test is an acquire load (so a copy-on-write mutation
 * after it cannot be reordered before another holder's last read), and upgrading a
 * weak reference is a CAS loop that only adds while the strong count is non-zero.
 */
#ifndef FFIKIT_OBJECT_H
#define FFIKIT_OBJECT_H

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/* Type indices (docs/design.md, "The ABI"). Values never change; new ones are added at the end of a range. */
typedef enum {
  /* Plain values stored inline in an ffk_any. */
  FFK_TYPE_NONE = 0,
  FFK_TYPE_INT = 1,
  FFK_TYPE_BOOL = 2,
  FFK_TYPE_FLOAT = 3,
  FFK_TYPE_OPAQUE_PTR = 4,
  FFK_TYPE_DATATYPE = 5,
  FFK_TYPE_DEVICE = 6,
  FFK_TYPE_DLTENSOR_PTR = 7,  /* borrowed DLTensor *, only as an argument view */
  FFK_TYPE_RAW_STR = 8,       /* borrowed const char * (NUL-terminated), never stored */
  FFK_TYPE_BYTE_ARRAY_PTR = 9,/* borrowed const ffk_byte_array *, never stored */
  FFK_TYPE_SMALL_STR = 11,    /* <= 7 UTF-8 bytes inline, aux = length */
  FFK_TYPE_SMALL_BYTES = 12,  /* <= 7 bytes inline, aux = length */
  /* Objects: the payload is an ffk_object *. */
  FFK_TYPE_OBJECT_BEGIN = 64,
  FFK_TYPE_OBJECT = 64,
  FFK_TYPE_STRING = 65,
  FFK_TYPE_BYTES = 66,
  FFK_TYPE_ERROR = 67,
  FFK_TYPE_FUNCTION = 68,
  FFK_TYPE_SHAPE = 69,
  FFK_TYPE_TENSOR = 70,
  FFK_TYPE_ARRAY = 71,
  FFK_TYPE_MAP = 72,
  FFK_TYPE_MODULE = 73,
  FFK_TYPE_OPAQUE = 74,
  FFK_TYPE_LIST = 75,
  FFK_TYPE_DICT = 76,
  FFK_TYPE_STORAGE = 77,
  FFK_TYPE_TUPLE = 78,
  FFK_TYPE_WEAK_REF = 79,   /* ffikit/weak_ref.h */
  FFK_TYPE_STATIC_END = 128, /* types registered at run time get indices from here */
} ffk_type_index;

/* Which parts of an object a deleter must release: contents, memory, or both. */
enum {
  FFK_DELETER_DESTROY = 1,
  FFK_DELETER_FREE = 2,
  FFK_DELETER_BOTH = 3,
};

typedef void (*ffk_deleter)(void *self, int which);

typedef struct ffk_object {
  uint64_t refcount;   /* strong (low 32) | weak (high 32); atomic access only */
  int32_t type_index;  /* an ffk_type_index or a registered type */
  uint32_t flags;      /* FFK_OBJECT_* bits */
  ffk_deleter deleter; /* releases the object; see FFK_DELETER_* */
} ffk_object;

FFK_STATIC_ASSERT(sizeof(ffk_object) == 24, "ffk_object must stay 24 bytes (TVM-FFI ABI)");
FFK_STATIC_ASSERT(offsetof(ffk_object, type_index) == 8, "type_index at offset 8");
FFK_STATIC_ASSERT(offsetof(ffk_object, deleter) == 16, "deleter at offset 16");

/* Object flags. */
enum {
  /* Statically allocated; its count never reaches zero and it is never freed. */
  FFK_OBJECT_IMMORTAL = 1u << 0,
};

#define FFK_REFCOUNT_STRONG_ONE UINT64_C(1)
#define FFK_REFCOUNT_WEAK_ONE (UINT64_C(1) << 32)
#define FFK_REFCOUNT_INIT (FFK_REFCOUNT_STRONG_ONE | FFK_REFCOUNT_WEAK_ONE)

/*
 * Allocates a zeroed object of `size` bytes (>= sizeof(ffk_object)) through ffikit's
 * one allocation path, with the header initialised: strong 1, weak 1, the given type
 * index and deleter. The deleter must end its FFK_DELETER_FREE part with
 * ffk_object_free(self). Returns a new reference, or NULL with a MemoryError (out of
 * memory, or the test hook failing this allocation) or a ValueError (size smaller
 * than the header, or a type index that is not an object type).
 */
FFK_API ffk_object *ffk_object_alloc(int32_t type_index, size_t size, ffk_deleter deleter);

/*
 * Moves a uniquely owned object made by ffk_object_alloc to a block of `size` bytes
 * (bytes past the old size are uninitialised). The caller must hold the only reference
 * (ffk_object_is_unique: no other strong or weak holder could see the move). Returns
 * the new address (the old one is no longer valid), or NULL with a MemoryError and
 * `obj` unchanged, or NULL with a ValueError when size is smaller than the header.
 */
FFK_API ffk_object *ffk_object_realloc(ffk_object *obj, size_t size);

/* Frees the memory of an object made by ffk_object_alloc. Only a deleter calls this. */
FFK_API void ffk_object_free(ffk_object *obj);

/*
 * Objects in memory the caller provides, such as a second object inside another
 * object's block. ffk_object_init sets up the header as ffk_object_alloc does (strong
 * 1, weak 1, the type index and deleter; the payload is left as it is) and counts the
 * object live in testing builds. The deleter's FFK_DELETER_FREE part must then call
 * ffk_object_forget(self) instead of ffk_object_free and give the memory back itself.
 * `obj` must be aligned for ffk_object. Returns 0, or -1 with a ValueError for a NULL
 * obj or deleter or a type index that is not an object type.
 */
FFK_API int ffk_object_init(ffk_object *obj, int32_t type_index, ffk_deleter deleter);

/*
 * Counts an object made by ffk_object_init as gone (only a deleter's FREE part calls
 * this); its memory is the caller's again. NULL is a no-op. Cannot fail.
 */
FFK_API void ffk_object_forget(ffk_object *obj);

/* Adds a strong reference. `obj` must be non-NULL and alive. Cannot fail. */
FFK_API void ffk_object_retain(ffk_object *obj);

/* Drops a strong reference (steals it); may run the deleter. NULL is a no-op. */
FFK_API void ffk_object_release(ffk_object *obj);

/* The strong count (a snapshot: other threads may change it at any time). NULL gives 0. */
FFK_API uint32_t ffk_object_use_count(const ffk_object *obj);

/* The weak count, without the unit shared by strong holders. NULL gives 0. */
FFK_API uint32_t ffk_object_weak_count(const ffk_object *obj);

/*
 * True when the caller's reference is the only one: strong == 1 and no weak
 * references (acquire load). Copy-on-write mutators change an object in place only
 * when this holds. NULL gives false.
 */
FFK_API bool ffk_object_is_unique(const ffk_object *obj);

/* Adds a weak reference to a live object (the caller holds a strong one). Cannot fail. */
FFK_API void ffk_weak_retain(ffk_object *obj);

/* Drops a weak reference (steals it); frees the memory when it was the last holder. NULL is a no-op. */
FFK_API void ffk_weak_release(ffk_object *obj);

/*
 * Upgrades a weak reference: a new strong reference when the object is still alive,
 * otherwise NULL (no error is set: a dead object is an answer, not a failure). The
 * weak reference stays owned by the caller.
 */
FFK_API ffk_object *ffk_weak_lock(ffk_object *obj);

/*
 * tvm_ffi's two marker objects, each one immortal object of its own type, borrowed (the
 * caller may retain and release it freely): ffk_missing() is `<MISSING>`, what
 * ffi.MapGetItemOrMissing returns for an absent key and ffi.GetInvalidObject returns
 * (type key "ffi.Missing"); ffk_kwargs_marker() is `<KWARGS>`, what ffi.GetKwargsObject
 * returns (type key "ffi.KwargsMarker"). Never fail, never NULL.
 */
FFK_API ffk_object *ffk_missing(void);
FFK_API ffk_object *ffk_kwargs_marker(void);

FFK_EXTERN_C_END

#endif /* FFIKIT_OBJECT_H */
