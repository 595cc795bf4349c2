/*
 * module.c - libffikit_testing.so: the testing library as a loadable module. Its init
 * entry registers the testing.* globals; it also exports add_one directly.
 */
#include "testing.h"

FFK_MODULE_ABI_VERSION;

FFK_MODULE_EXPORT_TYPED(add_one, "(int) -> int", ffk_testing_add_one)
FFK_MODULE_EXPORT_DOC(add_one, "Returns x + 1.")

FFK_MODULE_INIT(m) {
  (void)m;
  return ffk_testing_register();
}
