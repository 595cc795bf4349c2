/*
 * ffikit/opaque.h - Opaque objects (type 74): a foreign value held by reference.
 *
 * An Opaque object carries a pointer that ffikit never dereferences (a PyObject *, a
 * boxed Rust value) and the routine that releases it. Bindings turn values that have no
 * ffikit form into Opaque objects so they can cross C and come back as the very same
 * value: the binding recognises its own objects by their release routine. Opaque
 * objects compare and hash by identity and print as <Opaque at 0x...>.
 *
 * A binding may register a subtype of Opaque (ffk_type_register(key, FFK_TYPE_OPAQUE))
 * and make its objects with ffk_opaque_new_typed, so that messages name what the handle
 * is: the Python binding's objects are `ffi.OpaquePyObject`, as in tvm_ffi. Every
 * accessor below accepts such subtypes.
 */
#ifndef FFIKIT_OPAQUE_H
#define FFIKIT_OPAQUE_H

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

/* Releases an Opaque object's handle; runs exactly once, on the thread that drops the last reference. */
typedef void (*ffk_opaque_release)(void *handle);

/*
 * A new Opaque object holding `handle`. `release` (may be NULL) is called on `handle`
 * exactly once: when the object is destroyed, or right away when this fails. Returns a
 * new reference, or NULL with a MemoryError.
 */
FFK_API ffk_object *ffk_opaque_new(void *handle, ffk_opaque_release release);

/*
 * Like ffk_opaque_new, for an object of `type_index`: FFK_TYPE_OPAQUE or a registered
 * subtype of it. `release` is called on `handle` exactly once, also when this fails.
 * Returns a new reference, or NULL with a TypeError (type_index is not Opaque or one of
 * its subtypes; the message names it) or a MemoryError.
 */
FFK_API ffk_object *ffk_opaque_new_typed(int32_t type_index, void *handle, ffk_opaque_release release);

/* The handle of an Opaque object (or a subtype's), or NULL (no error) when obj is NULL or not an Opaque. Cannot fail. */
FFK_API void *ffk_opaque_handle(const ffk_object *obj);

/*
 * The release routine of an Opaque object (what a binding compares with its own to know
 * the handle is one of its values), or NULL when obj is NULL or not an Opaque. Cannot fail.
 */
FFK_API ffk_opaque_release ffk_opaque_release_fn(const ffk_object *obj);

FFK_EXTERN_C_END

#endif /* FFIKIT_OPAQUE_H */
