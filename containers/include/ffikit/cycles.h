/*
 * ffikit/cycles.h - a debug helper that reports the reference cycles reachable from a value.
 *
 * ffikit counts references and has no tracing collector (as TVM-FFI): objects that reach
 * each other through reflected-object fields or container elements keep each other
 * alive once the last outside holder lets go, and are never reclaimed. Python's cycle
 * collector cannot help, because it does not see references that C objects hold. Break
 * such cycles with a WeakRef (ffikit/weak_ref.h) or by clearing a field before dropping
 * the value; ffk_debug_find_cycles checks that none is left.
 */
#ifndef FFIKIT_CYCLES_H
#define FFIKIT_CYCLES_H

#include <ffikit/list.h>

FFK_EXTERN_C_BEGIN

/*
 * Walks every object reachable from `root` (borrowed) through Array, Tuple, List, Map
 * and Dict elements (keys and values) and the fields of reflected objects, and reports
 * reference cycles. Returns a new List with one List per cycle found: the objects on
 * it, each holding the next and the last holding the first (a self-loop is a List of
 * one). At most `max_cycles` (>= 1) are reported; the walk is depth-first and reports
 * one cycle for each reference back to an object still on its path, so the answer is
 * empty exactly when nothing reachable lies on a cycle, and otherwise names at least one
 * cycle through every group of objects that reach each other (not every cycle: a dense
 * graph has exponentially many).
 *
 * Not followed: WeakRefs (they hold no strong reference), and what Functions, Opaques,
 * Modules and Tensors hold (C code that ffikit cannot look into). The walk is a loop
 * with a heap stack, so a value of any depth works; it holds a reference to each object
 * it has met until it returns (memory linear in the objects reached), and reads a List
 * or Dict through a snapshot, so other threads may change the value meanwhile (the
 * answer then describes some state the value passed through, one container at a time).
 *
 * Fails (NULL) with a ValueError when root is NULL or max_cycles < 1, or a MemoryError.
 */
FFK_API ffk_list *ffk_debug_find_cycles(const ffk_any *root, int64_t max_cycles);

FFK_EXTERN_C_END

#endif /* FFIKIT_CYCLES_H */
