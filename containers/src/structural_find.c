/*
 * structural_find.c - ffk_array_find and ffk_list_find (Python's `in` and index(value,
 * start, stop)): a leaf value is found in one scan by the containers themselves
 * (ffk_array__find_leaf, ffk_list__find_leaf); any other value is compared element by
 * element with ffk_structural_equal. Here, above both, so that array.c and list.c never
 * call up into the structural walker.
 */
#include "structural_internal.h"

int ffk_array_find(const ffk_array *a, const ffk_any *value, int64_t start, int64_t stop, int64_t *out) {
  if (a == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_array_find: the %s is NULL", a == NULL ? "array" : "value");
  ffk_array__clamp_bounds(a->size, &start, &stop);
  int rc = ffk_array__find_leaf(a->data, start, stop, value, out);
  if (rc != -2) return rc;
  for (int64_t i = start; i < stop; ++i) {
    int eq = ffk_structural_equal(&a->data[i], value);
    if (eq < 0) return -1;
    if (eq) {
      if (out) *out = i;
      return 1;
    }
  }
  return 0;
}

int ffk_list_find(ffk_list *l, const ffk_any *value, int64_t start, int64_t stop, int64_t *out) {
  if (l == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_list_find: the list handle is NULL");
  if (value == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_list_find: the value is NULL");
  int rc = ffk_list__find_leaf(l, value, start, stop, out);
  if (rc != -2) return rc;
  ffk_array *snapshot = ffk_list_to_array(l); /* no lock held while the walk runs hooks */
  if (snapshot == NULL) return -1;
  rc = ffk_array_find(snapshot, value, start, stop, out);
  ffk_object_release(&snapshot->header);
  return rc;
}
