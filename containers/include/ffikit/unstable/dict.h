/*
 * ffikit/unstable/dict.h - the Dict's stamp: what a binding's key cache checks.
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
#ifndef FFIKIT_UNSTABLE_DICT_H
#define FFIKIT_UNSTABLE_DICT_H

#include <ffikit/dict.h>

FFK_EXTERN_C_BEGIN

/*
 * Stamps, the Dict's coherence signal, for a caller that keeps what it derived from the
 * entries (the Python binding keeps the value each str key read gave, or that it was
 * missing: ffkpy_Mapping.keys in bindings/python/src/container.h) and must know it is
 * still right: the List stamp pattern of ffikit/unstable/list.h. ffk_dict_stamp returns a number
 * that changes whenever the entries change at all (a key added or removed, a value
 * replaced, clear, an update that set anything), read without the lock (one acquire
 * load): two reads that return the same value saw the same entries. A change another
 * thread is making at that moment may not be visible yet: the read then counts as before
 * it. Cannot fail; `d` must be valid.
 *
 * ffk_dict_stamp_address: where ffk_dict_stamp reads, valid while the caller holds `d`,
 * to be read only with an atomic acquire load (__atomic_load_n(p, __ATOMIC_ACQUIRE)),
 * never written: for a caller that checks on every read and cannot afford the call.
 * NULL for a NULL `d`. Cannot fail.
 *
 * ffk_dict_get_str_stamped is ffk_dict_get_str that also sets *stamp to the stamp of the
 * entries the lookup saw (one lock hold), for a hit and a miss alike: while
 * ffk_dict_stamp still returns it, the key still has that value (or is still missing).
 * Returns and fails as ffk_dict_get_str, with *stamp 0 on failure.
 */
FFK_API uint64_t ffk_dict_stamp(ffk_dict *d);
FFK_API const uint64_t *ffk_dict_stamp_address(ffk_dict *d);
FFK_API int ffk_dict_get_str_stamped(ffk_dict *d, const char *data, size_t size, ffk_any *out, uint64_t *stamp);

FFK_EXTERN_C_END

#endif /* FFIKIT_UNSTABLE_DICT_H */
