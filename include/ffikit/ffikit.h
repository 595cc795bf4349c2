/*
 * ffikit/ffikit.h - every public header of ffikit at once: the ffi core, the
 * containers and the tensor core. Link libffikit (or the component libraries) for the definitions.
 */
#ifndef FFIKIT_FFIKIT_H
#define FFIKIT_FFIKIT_H

#include <ffikit/ffi.h>

#include <ffikit/array.h>
#include <ffikit/dict.h>
#include <ffikit/enum.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/serialization.h>
#include <ffikit/structural.h>
#include <ffikit/structural_visit.h>
#include <ffikit/cycles.h>
#include <ffikit/tuple.h>

#include <ffikit/storage.h>
#include <ffikit/tensor.h>
#include <ffikit/dlpack.h>

#endif /* FFIKIT_FFIKIT_H */
