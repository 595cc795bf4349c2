/* Loads the Rust-built module from C, calls its functions, and uses the reflected type it
 * defines in Rust (rustmod.Vec2) through the C API alone. */
#include <ffikit/ffikit.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what) {
  ffk_error *e = ffk_error_fetch();
  printf("FAILED %s: %s: %s\n", what, e ? ffk_error_kind(e) : "?", e ? ffk_error_message(e) : "?");
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  ffk_module *m = ffk_module_load(argv[1]);
  if (!m) return fail("load");
  ffk_function *add = ffk_module_get_function(m, "rs_add");
  if (!add) return fail("get rs_add");
  ffk_any args[2] = {ffk_any_int(40), ffk_any_int(2)}, r = ffk_any_none();
  if (ffk_function_call(add, args, 2, &r) != 0) return fail("rs_add");
  printf("%s = %lld\n", ffk_function_signature(add), (long long)r.v_int);
  /* The typed signature's check runs in C before Rust sees the call. */
  ffk_any bad[2] = {ffk_any_raw_str("x"), ffk_any_int(1)};
  if (ffk_function_call(add, bad, 2, &r) == 0) return 1;
  ffk_error *e = ffk_error_fetch();
  printf("%s\n", ffk_error_kind(e));
  ffk_object_release((ffk_object *)e);
  /* An error raised in Rust arrives with its kind and message. */
  ffk_function *f = ffk_module_get_function(m, "rs_fail");
  ffk_any fa[2] = {ffk_any_raw_str("mylib.Error"), ffk_any_raw_str("from Rust")};
  if (!f || ffk_function_call(f, fa, 2, &r) == 0) return 1;
  e = ffk_error_fetch();
  printf("%s: %s\n", ffk_error_kind(e), ffk_error_message(e));
  ffk_object_release((ffk_object *)e);
  /* The init entry registered a global. */
  ffk_function *greet = NULL;
  if (ffk_function_get_global("rustmod.greet", &greet) != 1) return fail("greet lookup");
  ffk_any name = ffk_any_raw_str("C");
  if (ffk_function_call(greet, &name, 1, &r) != 0) return fail("greet");
  const char *s; size_t n;
  ffk_any_as_str(&r, &s, &n);
  printf("%s\n", s);
  ffk_any_release(&r);
  ffk_function_remove_global("rustmod.greet");
  /* A type defined in Rust (rustmod.Vec2), made and used through the C API alone. */
  int32_t vec2;
  const ffk_field_info *fx;
  if (ffk_type_lookup("rustmod.Vec2", &vec2) != 1) return fail("Vec2 lookup");
  if (ffk_type_find_field(vec2, "x", &fx) != 1) return fail("find x");
  ffk_any vargs[3] = {ffk_any_float(3.0), ffk_any_int(4), ffk_any_raw_str("c")};
  const char *kw[1] = {"label"};
  ffk_object *v = NULL;
  if (ffk_object_create(vec2, vargs, 2, kw, 1, &v) != 0) return fail("create Vec2");
  if (ffk_object_call_method(v, "norm", NULL, 0, &r) != 0) return fail("norm");
  printf("%s.norm() = %g\n", ffk_type_key(v->type_index), r.v_float);
  ffk_any nx = ffk_any_float(6.0);
  if (ffk_field_set(fx, v, &nx) != 0) return fail("set x");
  if (ffk_object_call_method(v, "describe", NULL, 0, &r) != 0) return fail("describe");
  ffk_any_as_str(&r, &s, &n);
  printf("describe() = %s\n", s);
  ffk_any_release(&r);
  ffk_any lbl = ffk_any_int(1);
  if (ffk_object_set_field(v, "label", &lbl) == 0) return 1;
  e = ffk_error_fetch();
  printf("%s: %s\n", ffk_error_kind(e), ffk_error_message(e));
  ffk_object_release((ffk_object *)e);
  ffk_object_release(v);
  ffk_object_release((ffk_object *)greet);
  ffk_object_release((ffk_object *)f);
  ffk_object_release((ffk_object *)add);
  ffk_object_release((ffk_object *)m);
  return 0;
}
