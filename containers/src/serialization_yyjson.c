/*
 * serialization_yyjson.c - compiles the vendored yyjson 0.10.0 (third_party/yyjson/src/yyjson.c,
 * unmodified) into the containers library, with its symbols hidden (serialization_yyjson.h).
 *
 * ffikit builds with -Wall -Wextra -Wpedantic -Werror; yyjson is not ours to change, so
 * the warnings its code trips are silenced here, for this translation unit only.
 */
#include "serialization_yyjson.h"

#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpedantic"
#pragma clang diagnostic ignored "-Wshadow"
#pragma clang diagnostic ignored "-Wunused-function"
#pragma clang diagnostic ignored "-Wunused-parameter"
#pragma clang diagnostic ignored "-Wimplicit-fallthrough"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif

#include <yyjson.c>
