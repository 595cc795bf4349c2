/* Defines the header's static inline helpers as external functions (see ffikit_sys.h). */
#include "ffikit_sys.h"
