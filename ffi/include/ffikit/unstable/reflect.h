/*
 * ffikit/unstable/reflect.h - borrowed field reads (read sections, peeks) and the field write hook.
 *
 * This header is ffikit's UNSTABLE tier: the API that bindings (the Python extension, a
 * binding of another language) and ffikit's own components build their speed on, with no
 * stability promise: a minor release may change or remove any of it, and its names stay
 * out of <ffikit/ffikit.h> and of every stable header, which never include this one. User
 * code should not need it; a binding that does includes it by name and rebuilds with each
 * ffikit release. The rule for a binding's copies of C state, and every cache that relies
 * on this tier, is in docs/design.md, "Bindings: what a binding may keep": a binding keeps
 * a copy only through a coherence signal documented here, and relies on exactly what these
 * comments promise.
 */
#ifndef FFIKIT_UNSTABLE_REFLECT_H
#define FFIKIT_UNSTABLE_REFLECT_H

#include <ffikit/reflect.h>

FFK_EXTERN_C_BEGIN

/*
 * Read sections: borrowed field reads for walks over many objects (structural equality,
 * hash, first mismatch). Inside a section, ffk_field_peek reads a field without taking a
 * reference or a lock, and the value it returns stays alive until the section ends even
 * if another thread rewrites the field meanwhile (the writer retires the old value; its
 * reference is dropped when every section that could have seen it has ended). What is
 * reached from a borrowed value (its read-only fields, Array/Tuple/Map elements, further
 * peeks) is kept alive the same way, by its holder.
 *
 * The structural walk of ffikit's containers (containers/src/structural_walk.h) reads
 * fields this way. The protocol is in this tier, not in ffikit/reflect.h, because it ties
 * its caller to how ffikit reclaims retired values (ffi/src/epoch.c), which may change;
 * code outside ffikit reads fields with ffk_field_get.
 *
 * ffk_read_section_enter begins a section on the calling thread and returns its handle
 * (NULL with a MemoryError when the thread's first section cannot register its record;
 * never fails afterwards). ffk_read_section_exit(handle) ends it, on the same thread; NULL
 * is ignored. Sections nest (an inner exit ends only the inner one) and cost two
 * uncontended atomic stores. A section may span calls into user code (a structural hook,
 * a Python callback): no thread ever waits for a reader, so a long call only delays the
 * reclamation of values retired meanwhile; code that may run long (or block) should still
 * not sit in one needlessly. The thread leaving the last section that held back retired
 * values drops their references, so their deleters may run inside
 * ffk_read_section_exit: call it with no lock held that a deleter might need.
 */
FFK_API void *ffk_read_section_enter(void);
FFK_API void ffk_read_section_exit(void *section);

/*
 * Reads field `field` of `obj` (borrowed) into *out without taking a reference where it
 * can. Returns 0 with *out borrowed: valid while obj is, and for a writable object field
 * until the calling thread's read section ends (calling it outside a section is a
 * RuntimeError naming the field). Read-only fields are read in place (they change only
 * while a constructor fills an object it alone holds), int/float/bool fields as atomic
 * words. Returns 1 with *out a new reference for a writable field of ffk_any storage
 * (Any, Optional<int>, Device...): two words are read whole only under the field's lock,
 * so the value is retained there as ffk_field_get does, and the caller releases it.
 * -1 with *out None: a TypeError when obj is NULL or not an instance of the field's owner
 * type, a ValueError for a NULL field or out, or the RuntimeError above.
 */
FFK_API int ffk_field_peek(const ffk_field_info *field, const ffk_object *obj, ffk_any *out);

/*
 * ffk_field_peek without its checks, inline, for walks that read many fields of objects
 * whose types they have already checked (structural equality and hash): `obj` must be an
 * instance of the field's owner type (not NULL), `field` and `out` not NULL, and the
 * calling thread inside a read section (not needed for an int, float or bool field: "Direct
 * reads" below). Reads as ffk_field_peek does: int/float/bool
 * fields as atomic words, object fields with the load the lock-free writers pair with
 * (0, *out borrowed, None for NULL); a writable field of ffk_any storage goes to
 * ffk_field_peek (1, *out a new reference). Breaking the preconditions is undefined.
 */
static inline int ffk_field_peek_unchecked(const ffk_field_info *field, const ffk_object *obj, ffk_any *out) {
  const char *p = (const char *)obj + field->offset;
  switch (field->storage) {
    case FFK_FIELD_STORAGE_INT:
      *out = ffk_any_int(__atomic_load_n((const int64_t *)p, __ATOMIC_RELAXED));
      return 0;
    case FFK_FIELD_STORAGE_FLOAT: {
      double d;
      __atomic_load((const double *)p, &d, __ATOMIC_RELAXED);
      *out = ffk_any_float(d);
      return 0;
    }
    case FFK_FIELD_STORAGE_BOOL:
      *out = ffk_any_bool(__atomic_load_n((const bool *)p, __ATOMIC_RELAXED));
      return 0;
    case FFK_FIELD_STORAGE_OBJECT: {
      ffk_object *o = __atomic_load_n((ffk_object *const *)p, __ATOMIC_SEQ_CST);
      *out = ffk_any_none();
      if (o != NULL) {
        out->type_index = o->type_index;
        out->v_obj = o;
      }
      return 0;
    }
    default:
      if (field->flags & FFK_FIELD_WRITABLE) return ffk_field_peek(field, obj, out);
      *out = *(const ffk_any *)p;
      return 0;
  }
}

/*
 * Direct reads of int, float and bool fields. Their storage (ffikit/reflect.h's table) is
 * one aligned word that every writer stores atomically, so a binding may read a field at
 * (const char *)obj + field->offset with a relaxed atomic load of its storage type
 * (int64_t, double, bool) once it has checked that obj is an instance of the field's owner
 * type, and get what ffk_field_get would give, without a call: the Python field descriptor
 * (bindings/python/src/reflect.c) does. Object and ffk_any fields have no such promise:
 * read them with ffk_field_get, or ffk_field_peek inside a read section.
 */

/*
 * Field write notification, the coherence signal of a binding's copies of field values:
 * ffk_type_set_field_write_hook sets the hook of type `type_index`. `hook` (NULL removes
 * it) is called after every successful ffk_field_set, ffk_object_set_field,
 * ffk_field_init and ffk_object_init_fields write on an object of type
 * `type_index` or of a subtype without a hook of its own (the nearest type's hook wins),
 * with the object and the field written (both borrowed for the call). It runs on the
 * writer's thread, after the value is stored, with no ffikit lock held; it must not fail
 * and may be called concurrently from several threads. Writes a library makes to its own
 * struct members (p->x = 1) and constructors filling a fresh object are not seen. A
 * binding uses it to keep copies of field values (Python's cached field slots) coherent.
 * Returns 0, or -1 with a ValueError for a type index that is not registered.
 */
typedef void (*ffk_field_write_hook)(ffk_object *obj, const ffk_field_info *field);
FFK_API int ffk_type_set_field_write_hook(int32_t type_index, ffk_field_write_hook hook);

FFK_EXTERN_C_END

#endif /* FFIKIT_UNSTABLE_REFLECT_H */
