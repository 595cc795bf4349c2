/* Built outside Bazel against an installed ffikit (see install_check.sh). */
#include <ffikit/ffikit.h>
#include <stdio.h>

int main(void) {
  ffk_any s;
  if (ffk_any_cstr("installed", &s) != 0) return 1;
  ffk_any n = ffk_any_int(7);
  ffk_string *a = ffk_any_repr(&s), *b = ffk_any_repr(&n);
  printf("ffikit %s: [%s, %s] %s\n", ffk_version(), ffk_string_data(a), ffk_string_data(b),
         ffk_abi_version() == FFK_ABI_VERSION ? "ok" : "ABI mismatch");
  ffk_object_release(&a->header);
  ffk_object_release(&b->header);
  ffk_any_release(&s);
  return 0;
}
