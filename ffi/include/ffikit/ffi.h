/*
 * ffikit/ffi.h - every public header of the ffi core (ffikit/ffikit.h adds the layers above).
 */
#ifndef FFIKIT_FFI_H
#define FFIKIT_FFI_H

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
#include <ffikit/schema.h>
#include <ffikit/function.h>
#include <ffikit/module.h>
#include <ffikit/opaque.h>
#include <ffikit/weak_ref.h>
#include <ffikit/reflect.h>
#include <ffikit/stream.h>

#endif /* FFIKIT_FFI_H */
