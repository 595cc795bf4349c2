/*
 * Built outside Bazel against an installed ffikit (see install_check.sh), once against the
 * shared library and once against libffikit.a; both builds must print the same lines. Besides
 * the core it touches what the containers set up when the library loads (their repr and
 * converter slots), which a static link loses if that setup is not pulled from the archive.
 */
#include <ffikit/ffikit.h>
#include <stdio.h>

/* Prints the repr of `v` (borrowed), or the pending error. */
static void print_repr(const char *label, const ffk_any *v) {
  ffk_string *r = ffk_any_repr(v);
  if (r == NULL) {
    printf("%s: error\n", label);
    ffk_error_clear();
    return;
  }
  printf("%s: %s\n", label, ffk_string_data(r));
  ffk_object_release(&r->header);
}

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

  /* The containers' repr slots. */
  ffk_tuple *t = ffk_tuple_pack(3, ffk_any_int(1), ffk_any_int(2), ffk_any_int(3));
  ffk_any items[2] = {ffk_any_float(0.5), ffk_any_int(2)};
  ffk_list *l = ffk_list_from_items(items, 2);
  if (t == NULL || l == NULL) return 1;
  ffk_any tv = ffk_any_object_steal(&t->header), lv = ffk_any_object_steal((ffk_object *)l);
  print_repr("tuple", &tv);
  print_repr("list", &lv);

  /* The containers' converter slots: Array<float> converts a List, and an element error has detail. */
  ffk_schema *floats = ffk_schema_parse("Array<float>"), *ints = ffk_schema_parse("Array<int>");
  if (floats == NULL || ints == NULL) return 1;
  ffk_any out = ffk_any_none();
  int rc = ffk_schema_convert(floats, &lv, &out);
  printf("Array<float> <- list: %d\n", rc);
  print_repr("converted", &out);
  ffk_any_release(&out);
  rc = ffk_schema_convert(ints, &lv, &out);
  ffk_error *err = ffk_error_fetch();
  printf("Array<int> <- list: %d %s\n", rc, err ? ffk_error_message(err) : "(no error)");
  if (err) ffk_object_release((ffk_object *)err);
  ffk_any_release(&out);
  ffk_schema_free(floats);
  ffk_schema_free(ints);
  ffk_any_release(&tv);
  ffk_any_release(&lv);
  return 0;
}
