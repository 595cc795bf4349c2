/*
 * ffikit/unstable/list.h - the List's stamp: what a binding's element cache checks.
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
#ifndef FFIKIT_UNSTABLE_LIST_H
#define FFIKIT_UNSTABLE_LIST_H

#include <ffikit/list.h>

FFK_EXTERN_C_BEGIN

/*
 * Stamps, the List's coherence signal, for a caller that keeps what it derived from the
 * elements (the Python binding keeps the Python objects it converted them to:
 * ffkpy_List.cache in bindings/python/src/container.h) and wants to know it is still right.
 * ffk_list_stamp returns a number that changes whenever any element changes (set,
 * added, removed, moved, cleared, reversed), read without the lock (one acquire load):
 * two reads that return the same value saw the same elements. A change another thread
 * is making at that moment may not be visible yet: the read then counts as before it.
 * Cannot fail; `l` must be valid.
 *
 * ffk_list_get_stamped is ffk_list_get that also sets *stamp to the stamp of the List
 * the element was read from (one lock hold; 0 on failure): while ffk_list_stamp still
 * returns it, l[index] is still that element.
 */
FFK_API uint64_t ffk_list_stamp(ffk_list *l);

/*
 * Where ffk_list_stamp reads: the address of the List's stamp word, valid while the
 * caller holds `l`, to be read only with an atomic acquire load
 * (__atomic_load_n(p, __ATOMIC_ACQUIRE)), never written. For a caller that checks the
 * stamp on every read and cannot afford the call. NULL for a NULL `l`. Cannot fail.
 */
FFK_API const uint64_t *ffk_list_stamp_address(ffk_list *l);
FFK_API int ffk_list_get_stamped(ffk_list *l, int64_t index, ffk_any *out, uint64_t *stamp);

/*
 * ffk_list_iter_next that also sets *stamp to the List's stamp at that step when the
 * shape had not changed (0 otherwise): while ffk_list_stamp still returns it, the List
 * is exactly as this step saw it, so the iterator is still valid, and a caller holding
 * what element it->index was at that stamp may take it and advance it->index itself.
 */
FFK_API int ffk_list_iter_next_stamped(ffk_list_iter *it, ffk_any *out, uint64_t *stamp);

FFK_EXTERN_C_END

#endif /* FFIKIT_UNSTABLE_LIST_H */
