/*
 * ffikit/ffikit.h - every public header of ffikit at once.
 */
#ifndef FFIKIT_FFIKIT_H
#define FFIKIT_FFIKIT_H

#include <ffikit/base.h>
#include <ffikit/object.h>
#include <ffikit/memory.h>
#include <ffikit/type.h>
#include <ffikit/any.h>
#include <ffikit/string.h>
#include <ffikit/error.h>
#include <ffikit/dtype.h>
#include <ffikit/device.h>
#include <ffikit/shape.h>
#include <ffikit/repr.h>
#include <ffikit/debug.h>

#endif /* FFIKIT_FFIKIT_H */
