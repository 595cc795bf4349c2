/*
 * ffikit/weak_ref.h - WeakRef objects (type 79): a weak handle that a field can hold.
 *
 * ffikit counts references and has no tracing collector (as TVM-FFI), so objects that
 * reach each other through fields or List/Dict elements keep each other alive after
 * the last outside holder lets go. A WeakRef breaks such a cycle: it is an ordinary
 * object (it goes in an Any or Object field, a List, a Dict) that holds a *weak*
 * reference to its target (ffk_weak_retain), so it never keeps the target alive. A
 * parent pointer is the usual case: the parent holds its children, each child holds a
 * WeakRef to the parent.
 *
 * A WeakRef keeps the target's memory (not its contents) until the WeakRef itself goes,
 * so the target's address cannot be reused meanwhile: WeakRefs compare and hash by the
 * identity of their targets (two WeakRefs to one object are equal, dead or alive), in
 * ffk_any_equal/ffk_any_hash and so in Map and Dict keys and the structural walks.
 * They print as <WeakRef at 0x...; to ffikit.List at 0x...> or <WeakRef at 0x...; dead>.
 * Walks that follow references (ffk_debug_find_cycles, the structural walks) do not
 * follow a WeakRef to its target.
 */
#ifndef FFIKIT_WEAK_REF_H
#define FFIKIT_WEAK_REF_H

#include <ffikit/object.h>

FFK_EXTERN_C_BEGIN

/*
 * A new WeakRef to `target` (borrowed; the caller holds a strong reference, so it is
 * alive). Any object can be a target, a WeakRef too. Returns a new reference, or NULL
 * with a ValueError (target is NULL) or a MemoryError.
 */
FFK_API ffk_object *ffk_weak_ref_new(ffk_object *target);

/*
 * Upgrades a WeakRef (borrowed): 1 with *out a new strong reference to the target while
 * it is alive; 0 with *out NULL and no error when it is dead (an answer, not a failure);
 * -1 with *out NULL and a TypeError when `weak` is NULL or not a WeakRef (the message
 * names its type).
 */
FFK_API int ffk_weak_ref_get(const ffk_object *weak, ffk_object **out);

/*
 * True while the target of the WeakRef `weak` has a strong holder (a snapshot: another
 * thread may drop the last one right after). False for NULL or a non-WeakRef. Cannot fail.
 */
FFK_API bool ffk_weak_ref_alive(const ffk_object *weak);

/*
 * The target's address, whether alive or dead (the WeakRef keeps the memory, so the
 * address names that one object for as long as `weak` lives; never dereference it once
 * dead). This is the identity WeakRefs compare and hash by. NULL for NULL or a
 * non-WeakRef. Cannot fail.
 */
FFK_API const ffk_object *ffk_weak_ref_target_address(const ffk_object *weak);

FFK_EXTERN_C_END

#endif /* FFIKIT_WEAK_REF_H */
