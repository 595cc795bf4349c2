/*
 * icount_ffikit.c - a plain C driver for instruction counts (bench/installed/icount.sh):
 * `icount_ffikit CASE N` makes the case's Function or object once, then runs N iterations
 * of the same loop body as installed_bench.cc's "<CASE>/ffikit" (no Google Benchmark, so
 * the only instructions are the case's). icount.sh counts two runs with different N under
 * callgrind and divides the difference by the difference of N: the setup cancels out.
 * Built against the installed headers and libffikit.so (pkg-config), as a user builds.
 * The destroy_ cases build their value (an Array of 1,000 Strings, a tree of 1,000 Arrays,
 * as installed_bench.cc does) and release it, N times; icount.sh counts them with
 * --toggle-collect=ffk_object_release, so only the releases count.
 * Exits 1 with a message on a failed call or a wrong result, 2 on bad usage.
 */
#include <ffikit/ffikit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

static int sum_ints(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t sum = 0;
  for (int32_t k = 0; k < nargs; ++k) {
    if (FFK_UNLIKELY(args[k].type_index != FFK_TYPE_INT))
      return ffk_error_set(FFK_ERR_TYPE, "`bench.sum`: argument #%d is not an int", (int)k);
    sum = wrap_add(sum, args[k].v_int);
  }
  *result = ffk_any_int(sum);
  return 0;
}

static int sum_two_typed(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  (void)nargs;
  *result = ffk_any_int(wrap_add(args[0].v_int, args[1].v_int));
  return 0;
}

static volatile int64_t g_sink;

static int fail(const char *what) {
  ffk_error *err = ffk_error_fetch();
  fprintf(stderr, "icount_ffikit: %s: %s: %s\n", what, ffk_error_kind(err), ffk_error_message(err));
  ffk_object_release((ffk_object *)err);
  return 1;
}

static FFK_NOINLINE int calls(ffk_function *f, int n, int64_t iters) {
  ffk_any args[8];
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < n; ++k) args[k] = ffk_any_int(wrap_add(i, k));
    ffk_any result;
    if (FFK_UNLIKELY(ffk_function_call(f, n ? args : NULL, n, &result) != 0)) return fail("ffk_function_call");
    if (FFK_UNLIKELY(result.type_index != FFK_TYPE_INT || result.v_int != n * i + n * (n - 1) / 2)) {
      fprintf(stderr, "icount_ffikit: wrong result\n");
      return 1;
    }
    g_sink = result.v_int;
  }
  return 0;
}

static FFK_NOINLINE int box_unbox(int64_t iters) {
  for (int64_t i = 0; i < iters; ++i) {
    ffk_any v = ffk_any_int(i);
    int64_t out;
    if (FFK_UNLIKELY(ffk_any_as_int(&v, &out) != 0)) return fail("ffk_any_as_int");
    g_sink = out;
  }
  return 0;
}

static FFK_NOINLINE int retain_release(ffk_object *obj, int64_t iters) {
  for (int64_t i = 0; i < iters; ++i) {
    ffk_object_retain(obj);
    __asm__ volatile("" ::: "memory");
    ffk_object_release(obj);
  }
  return 0;
}

static ffk_object *new_string(int64_t i) {
  char text[24];
  int n = snprintf(text, sizeof text, "leaf-%lld", (long long)i);
  return (ffk_object *)ffk_string_new(text, (size_t)n);
}

static ffk_object *new_string_array(int64_t n) {
  ffk_any items[1000];
  for (int64_t i = 0; i < n; ++i) {
    ffk_object *s = new_string(i);
    if (s == NULL) return NULL;
    items[i] = ffk_any_object_steal(s);
  }
  return (ffk_object *)ffk_array_new_steal(items, n);
}

/* A tree of n Array nodes: [String, left subtree, right subtree], the rest split evenly. */
static ffk_object *new_tree(int64_t n, int64_t *label) {
  ffk_any items[3];
  int64_t k = 0, rest = n - 1, left = rest / 2 + rest % 2, right = rest / 2;
  ffk_object *s = new_string((*label)++);
  if (s == NULL) return NULL;
  items[k++] = ffk_any_object_steal(s);
  if (left > 0) items[k++] = ffk_any_object_steal(new_tree(left, label));
  if (right > 0) items[k++] = ffk_any_object_steal(new_tree(right, label));
  return (ffk_object *)ffk_array_new_steal(items, k);
}

static FFK_NOINLINE int destroys(int tree, int64_t iters) {
  for (int64_t i = 0; i < iters; ++i) {
    int64_t label = 0;
    ffk_object *root = tree ? new_tree(1000, &label) : new_string_array(1000);
    if (root == NULL) return fail("building the value");
    ffk_object_release(root);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: icount_ffikit call_0|call_2|call_8|typed_call_2|any_box_unbox|retain_release|"
                    "destroy_array_1000|destroy_tree_1000 N\n");
    return 2;
  }
  const char *c = argv[1];
  int64_t iters = strtoll(argv[2], NULL, 10);
  int rc = 2;
  if (strncmp(c, "call_", 5) == 0 || strcmp(c, "typed_call_2") == 0) {
    int typed = c[0] == 't';
    int n = typed ? 2 : atoi(c + 5);
    ffk_function *f = typed ? ffk_function_new_typed("bench.sum2", "(int, int) -> int", sum_two_typed, NULL, NULL)
                            : ffk_function_new("bench.sum", sum_ints, NULL, NULL);
    if (f == NULL) return fail("ffk_function_new");
    rc = (n == 0 || n == 2 || n == 8) ? calls(f, n, iters) : 2;
    ffk_object_release((ffk_object *)f);
  } else if (strcmp(c, "any_box_unbox") == 0) {
    rc = box_unbox(iters);
  } else if (strcmp(c, "retain_release") == 0) {
    ffk_string *s = ffk_string_new("xxxxxxxxxxxxxxxx", 16);
    if (s == NULL) return fail("ffk_string_new");
    rc = retain_release(&s->header, iters);
    ffk_object_release(&s->header);
  } else if (strcmp(c, "destroy_array_1000") == 0 || strcmp(c, "destroy_tree_1000") == 0) {
    rc = destroys(c[8] == 't', iters);
  }
  if (rc == 2) fprintf(stderr, "icount_ffikit: unknown case `%s`\n", c);
  return rc;
}
