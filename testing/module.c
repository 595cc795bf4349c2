/*
 * module.c - libffikit_testing.so: the testing library as a loadable module. Its init
 * entry registers the testing.* globals; it also exports add_one directly.
 */
#include "testing.h"

#include <ffikit/array.h>

FFK_MODULE_ABI_VERSION;

/*
 * Docs, and doc_example: a typed, documented function with named and unnamed parameters,
 * for the metadata and stub generator tests. doc_example is exported, and registered as
 * testing.doc_example by the init entry (so only when this module is loaded: the
 * testing.* globals of testing.c do not include it).
 */
FFK_MODULE_EXPORT_DOC(add_one, "Returns x + 1.")

#define DOC_EXAMPLE_SIGNATURE "(Optional<str>, x: int, y: float) -> float"
#define DOC_EXAMPLE_DOC "Returns x + y.\n\nThe first argument, a label, is ignored."

static int doc_example(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: three arguments of the declared types */
  *result = ffk_any_float((double)args[1].v_int + args[2].v_float);
  return 0;
}
FFK_MODULE_EXPORT_TYPED_DOC(doc_example, DOC_EXAMPLE_SIGNATURE, DOC_EXAMPLE_DOC, doc_example)

static int register_doc_example(void) {
  ffk_function *f = ffk_function_new_typed("testing.doc_example", DOC_EXAMPLE_SIGNATURE, doc_example, NULL, NULL);
  if (f == NULL) return -1;
  int rc = ffk_function_set_doc(f, DOC_EXAMPLE_DOC);
  if (rc == 0) rc = ffk_function_register("testing.doc_example", f, true);
  ffk_object_release((ffk_object *)f);
  return rc;
}

FFK_MODULE_EXPORT_TYPED(add_one, "(int) -> int", ffk_testing_add_one)

/* scale(xs, k): each element of xs times k. Its parameters have names, so callers in
   every language may pass them by keyword (scale(xs=[1, 2], k=3)); typed, so xs arrives
   as an Array of floats and k as a float. */
static int scale(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const ffk_array *xs = (const ffk_array *)args[0].v_obj;
  ffk_array *out = ffk_array_with_capacity(ffk_array_size(xs));
  if (out == NULL) return -1;
  for (int64_t i = 0; i < ffk_array_size(xs); ++i) {
    ffk_any v = ffk_any_float(ffk_array_items_borrow(xs)[i].v_float * args[1].v_float);
    if (ffk_array_push(&out, &v) != 0) {
      ffk_object_release((ffk_object *)out);
      return -1;
    }
  }
  *result = ffk_any_object_steal((ffk_object *)out);
  return 0;
}
FFK_MODULE_EXPORT_TYPED(scale, "(xs: Array<float>, k: float) -> Array<float>", scale)

FFK_MODULE_INIT(m) {
  (void)m;
  if (ffk_testing_register() != 0) return -1;
  return register_doc_example();
}
