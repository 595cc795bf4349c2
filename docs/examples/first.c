/*
 * first.c - the getting-started page's first C program: a value, a container, a typed
 * function called through the global registry, and an error read from the thread's slot.
 * A test (docs:first_c_test) builds and runs it; its output is checked there.
 */
#include <ffikit/ffikit.h>

#include <stdio.h>

/* The packed calling convention: arguments in, one result out, 0 or -1. */
static int scale(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  /* The signature below has checked and converted both arguments already. */
  *result = ffk_any_float(args[0].v_float * args[1].v_float);
  return 0;
}

/* Prints the pending error and clears it. */
static void print_error(void) {
  ffk_error *err = ffk_error_fetch(); /* new reference */
  printf("%s: %s\n", ffk_error_kind(err), ffk_error_message(err));
  ffk_object_release((ffk_object *)err);
}

int main(void) {
  /* A List is shared and mutable: every handle sees every change. */
  ffk_list *xs = ffk_list_new();
  for (int64_t i = 1; i <= 3; ++i) {
    ffk_any v = ffk_any_int(i * 10);
    if (ffk_list_append(xs, &v) != 0) return 1;
  }
  ffk_any list = ffk_any_object((ffk_object *)xs); /* a second reference to the List */
  ffk_string *text = ffk_any_repr(&list);           /* new reference */
  printf("list: %s\n", ffk_string_data(text));
  ffk_object_release(&text->header);
  ffk_any_release(&list);

  /* A typed Function in the global registry: any language can now call "demo.scale". */
  ffk_function *f = ffk_function_new_typed("demo.scale", "(x: float, k: float) -> float", scale, NULL, NULL);
  if (f == NULL || ffk_function_register("demo.scale", f, false) != 0) return 1;
  ffk_object_release((ffk_object *)f);

  ffk_function *g;
  if (ffk_function_get_global("demo.scale", &g) != 1) return 1; /* 1: found, a new reference */
  ffk_any args[2] = {ffk_any_int(3), ffk_any_float(0.5)};  /* the int converts to float */
  ffk_any out = ffk_any_none();
  if (ffk_function_call(g, args, 2, &out) != 0) return 1;
  printf("demo.scale(3, 0.5) = %g\n", out.v_float);

  /* A wrong argument fails with -1 and leaves a TypeError in the thread's slot. */
  args[0] = ffk_any_raw_str("three");
  if (ffk_function_call(g, args, 2, &out) != 0) print_error();

  ffk_object_release((ffk_object *)g);
  ffk_object_release((ffk_object *)xs);
  return 0;
}
