/*
 * globals.c - tvm_ffi's core global functions that need nothing but the ffi core
 * (ffi.String, ffi.Shape, ffi.ReprPrint, the registry's ffi.Function* functions, the
 * MISSING and KWARGS markers, ffi.MakeObjectFromPackedArgs), registered when the library
 * loads; and ffk_function_register_table, which every component uses for its own.
 *
 * The markers are two statically allocated immortal objects whose types ("ffi.Missing",
 * "ffi.KwargsMarker") are registered on first use, whichever constructor or caller comes
 * first (constructors of different files run in no fixed order). A registration that
 * fails at load (out of memory) is dropped: the names it did not reach are then simply
 * not registered, and the load goes on.
 */
#include "internal.h"

#include <ffikit/function.h>
#include <ffikit/reflect.h>
#include <ffikit/repr.h>
#include <ffikit/shape.h>
#include <ffikit/string.h>

#include <pthread.h>
#include <string.h>

/*
 * A library's own Functions live as long as the process: each is made immortal (a
 * reference count no release reaches zero from, and not counted live by the testing
 * builds' leak checks, like the registry's pinned type objects), so a test that starts
 * with no live objects is not charged for what the library registered at load.
 */
static void make_immortal(ffk_object *obj) {
  FFK_ATOMIC_ADD(&obj->refcount, FFK_REFCOUNT_STRONG_ONE << 30, __ATOMIC_RELAXED);
  obj->flags |= FFK_OBJECT_IMMORTAL;
  ffk_debug__object_died(obj->type_index);
}

int ffk_function_register_table(const ffk_function_def *defs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    ffk_function *f = ffk_function_new_typed(defs[i].name, defs[i].signature, defs[i].call, NULL, NULL);
    if (f == NULL) return -1;
    make_immortal((ffk_object *)f);
    int rc = ffk_function_register(defs[i].name, f, true);
    ffk_object_release((ffk_object *)f);
    if (rc != 0) return -1;
  }
  return 0;
}

/* ---- The MISSING and KWARGS markers ------------------------------------------------ */

static void marker_deleter(void *self, int which) {
  (void)self, (void)which; /* immortal: never called with a count that reached zero */
}

static ffk_object g_missing = {.refcount = UINT64_C(1) << 30 | FFK_REFCOUNT_WEAK_ONE,
                               .type_index = FFK_TYPE_OBJECT,
                               .flags = FFK_OBJECT_IMMORTAL,
                               .deleter = marker_deleter};
static ffk_object g_kwargs = {.refcount = UINT64_C(1) << 30 | FFK_REFCOUNT_WEAK_ONE,
                              .type_index = FFK_TYPE_OBJECT,
                              .flags = FFK_OBJECT_IMMORTAL,
                              .deleter = marker_deleter};
static pthread_once_t g_markers_once = PTHREAD_ONCE_INIT;

static int repr_missing(ffk_object *self, ffk_repr_ctx *ctx) {
  (void)self;
  return ffk_repr_append(ctx, "<MISSING>", 9);
}

static int repr_kwargs(ffk_object *self, ffk_repr_ctx *ctx) {
  (void)self;
  return ffk_repr_append(ctx, "<KWARGS>", 8);
}

/* Gives each marker its own type; without memory for one it stays a plain Object. */
static void init_markers(void) {
  int32_t t = ffk_type_register("ffi.Missing", FFK_TYPE_OBJECT);
  if (t >= 0 && ffk_type_set_repr(t, repr_missing) == 0) g_missing.type_index = t;
  t = ffk_type_register("ffi.KwargsMarker", FFK_TYPE_OBJECT);
  if (t >= 0 && ffk_type_set_repr(t, repr_kwargs) == 0) g_kwargs.type_index = t;
  ffk_error_clear();
}

ffk_object *ffk_missing(void) {
  pthread_once(&g_markers_once, init_markers);
  return &g_missing;
}

ffk_object *ffk_kwargs_marker(void) {
  pthread_once(&g_markers_once, init_markers);
  return &g_kwargs;
}

static int get_invalid_object(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  *result = ffk_any_object(ffk_missing());
  return 0;
}

static int get_kwargs_object(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  *result = ffk_any_object(ffk_kwargs_marker());
  return 0;
}

/* ---- Values ----------------------------------------------------------------------- */

/* ffi.String(str) / ffi.Bytes(bytes): the signature has checked the type; an owned copy. */
static int identity(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ffk_any_to_owned(&args[0], result);
}

/* ffi.Shape(d0, d1, ...): every argument an int (a bool is not a dimension). */
static int shape_new(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t small[8] = {0}, *dims = nargs <= 8 ? small : (int64_t *)ffk_mem_alloc((size_t)nargs * sizeof *dims);
  if (dims == NULL) return -1;
  int rc = 0;
  for (int32_t i = 0; i < nargs && rc == 0; ++i) {
    if (args[i].type_index != FFK_TYPE_INT)
      rc = ffk_error_set(FFK_ERR_VALUE, "`ffi.Shape` takes int dimensions but argument #%d is %s", (int)i,
                         ffk_any_type_name(&args[i]));
    else
      dims[i] = args[i].v_int;
  }
  if (rc == 0) {
    ffk_shape *s = ffk_shape_new(dims, (size_t)nargs);
    if (s == NULL) rc = -1;
    else *result = ffk_any_object_steal((ffk_object *)s);
  }
  if (dims != small) ffk_mem_free(dims);
  return rc;
}

static int repr_print(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_string *s = ffk_any_repr(&args[0]);
  if (s == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)s);
  return 0;
}

/* ---- The registry ---------------------------------------------------------------- */

static int remove_global(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const char *name;
  if (ffk_args_unpack("ffi.FunctionRemoveGlobal", args, nargs, "s", &name) != 0) return -1;
  int rc = ffk_function_remove_global(name);
  if (rc < 0) return -1;
  *result = ffk_any_bool(rc == 1);
  return 0;
}

static int global_metadata(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  const char *name;
  if (ffk_args_unpack("ffi.GetGlobalFuncMetadata", args, nargs, "s", &name) != 0) return -1;
  return ffk_function_global_metadata(name, result);
}

/* The names functor's state: a snapshot of the registered names (owned strs). */
typedef struct {
  ffk_any *names;
  int64_t n, cap;
} name_list;

static void name_list_free(void *ctx) {
  name_list *nl = (name_list *)ctx;
  for (int64_t i = 0; i < nl->n; ++i) ffk_any_release(&nl->names[i]);
  ffk_mem_free(nl->names);
  ffk_mem_free(nl);
}

static int collect_name(const char *name, ffk_function *f, void *ctx) {
  (void)f;
  name_list *nl = (name_list *)ctx;
  if (nl->n == nl->cap) {
    int64_t cap = nl->cap ? nl->cap * 2 : 64;
    ffk_any *grown = (ffk_any *)ffk_mem_realloc(nl->names, (size_t)cap * sizeof *grown);
    if (grown == NULL) return -1;
    nl->names = grown;
    nl->cap = cap;
  }
  if (ffk_any_cstr(name, &nl->names[nl->n]) != 0) return -1;
  ++nl->n;
  return 0;
}

/* functor(-1) is the number of names, functor(i) the i-th (in name order). */
static int names_functor_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  const name_list *nl = (const name_list *)self;
  int64_t i;
  if (ffk_args_unpack("ffi.FunctionListGlobalNamesFunctor", args, nargs, "i", &i) != 0) return -1;
  if (i == -1) {
    *result = ffk_any_int(nl->n);
    return 0;
  }
  if (i < 0 || i >= nl->n)
    return ffk_error_set(FFK_ERR_INDEX,
                         "`ffi.FunctionListGlobalNamesFunctor`: index %lld out of bounds for %lld names (-1 "
                         "gives the count)",
                         (long long)i, (long long)nl->n);
  return ffk_any_to_owned(&nl->names[i], result);
}

static int list_global_names(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  name_list *nl = (name_list *)ffk_mem_alloc(sizeof *nl);
  if (nl == NULL) return -1;
  memset(nl, 0, sizeof *nl);
  if (ffk_function_for_each_global(collect_name, nl) != 0) {
    name_list_free(nl);
    return -1;
  }
  ffk_function *f = ffk_function_new("ffi.FunctionListGlobalNamesFunctor", names_functor_call, nl, name_list_free);
  if (f == NULL) return -1; /* the deleter has freed nl */
  *result = ffk_any_object_steal((ffk_object *)f);
  return 0;
}

/* A C address argument: an opaque pointer, an int (Python gives addresses as ints) or None (NULL). */
static int address_arg(const ffk_any *args, int i, void **out) {
  switch (args[i].type_index) {
    case FFK_TYPE_NONE: *out = NULL; return 0;
    case FFK_TYPE_OPAQUE_PTR: *out = args[i].v_ptr; return 0;
    case FFK_TYPE_INT: *out = (void *)(uintptr_t)args[i].v_int; return 0;
    default:
      return ffk_error_set(FFK_ERR_TYPE,
                           "`ffi.FunctionFromExternC`: argument #%d expected a pointer, int address or None but got %s",
                           i, ffk_any_type_name(&args[i]));
  }
}

/*
 * ffi.FunctionFromExternC(self, safe_call, deleter): a Function over a C routine with
 * ffikit's (and tvm_ffi's) safe-call convention. safe_call must not be NULL; deleter may be.
 */
static int function_from_extern_c(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  void *ctx, *call, *deleter;
  if (ffk_args_unpack("ffi.FunctionFromExternC", args, nargs, "aaa", NULL, NULL, NULL) != 0) return -1;
  if (address_arg(args, 0, &ctx) != 0 || address_arg(args, 1, &call) != 0 || address_arg(args, 2, &deleter) != 0)
    return -1;
  if (call == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "`ffi.FunctionFromExternC`: the safe-call pointer (argument #1) is NULL");
  ffk_safe_call fn;
  void (*del)(void *) = NULL;
  memcpy(&fn, &call, sizeof fn);
  if (deleter != NULL) memcpy(&del, &deleter, sizeof del);
  ffk_function *f = ffk_function_new("ffi.FunctionFromExternC", fn, ctx, del);
  if (f == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)f);
  return 0;
}

/* ---- Objects ---------------------------------------------------------------------- */

/*
 * ffi.MakeObjectFromPackedArgs(type_key, name0, value0, name1, value1, ...): an object of a
 * reflected type built by its constructor from named values.
 */
static int make_object_from_packed_args(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  static const char fn[] = "ffi.MakeObjectFromPackedArgs";
  const char *key;
  if (nargs < 1 || nargs % 2 != 1)
    return ffk_error_set(FFK_ERR_TYPE, "`%s` takes a type key and name/value pairs but got %d arguments", fn,
                         (int)nargs);
  if (ffk_args_unpack(fn, args, 1, "s", &key) != 0) return -1;
  int32_t type_index;
  int found = ffk_type_lookup(key, &type_index);
  if (found <= 0)
    return found < 0 ? -1 : ffk_error_set(FFK_ERR_VALUE, "`%s`: no type is registered as `%s`", fn, key);
  int32_t nkw = (nargs - 1) / 2;
  const char *names_small[8];
  const char **names = nkw <= 8 ? names_small : (const char **)ffk_mem_alloc((size_t)nkw * sizeof *names);
  ffk_any values_small[8];
  ffk_any *values = nkw <= 8 ? values_small : (ffk_any *)ffk_mem_alloc((size_t)nkw * sizeof *values);
  int rc = names == NULL || values == NULL ? -1 : 0;
  for (int32_t j = 0; j < nkw && rc == 0; ++j) {
    if (ffk_any_as_str(&args[1 + 2 * j], &names[j], &(size_t){0}) != 0) {
      ffk_error_clear();
      rc = ffk_error_set(FFK_ERR_TYPE, "`%s`: argument #%d, a field name, expected str but got %s", fn,
                         (int)(1 + 2 * j), ffk_any_type_name(&args[1 + 2 * j]));
    }
    values[j] = args[2 + 2 * j]; /* borrowed views, not owned */
  }
  ffk_object *obj = NULL;
  if (rc == 0) rc = ffk_object_create(type_index, values, 0, names, nkw, &obj);
  if (rc == 0) *result = ffk_any_object_steal(obj);
  if (names != names_small) ffk_mem_free((void *)names);
  if (values != values_small) ffk_mem_free(values);
  return rc;
}

/* ---- Registration ----------------------------------------------------------------- */

static const ffk_function_def k_globals[] = {
    {"ffi.String", "(str) -> str", identity},
    {"ffi.Bytes", "(bytes) -> bytes", identity},
    {"ffi.Shape", NULL, shape_new},
    {"ffi.ReprPrint", "(Any) -> str", repr_print},
    {"ffi.GetInvalidObject", "() -> Object", get_invalid_object},
    {"ffi.GetKwargsObject", "() -> Object", get_kwargs_object},
    {"ffi.FunctionRemoveGlobal", NULL, remove_global},
    {"ffi.GetGlobalFuncMetadata", NULL, global_metadata},
    {"ffi.FunctionListGlobalNamesFunctor", "() -> Function", list_global_names},
    {"ffi.FunctionFromExternC", NULL, function_from_extern_c},
    {"ffi.MakeObjectFromPackedArgs", NULL, make_object_from_packed_args},
};

__attribute__((constructor)) static void ffi_globals_init(void) {
  if (ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]) != 0) ffk_error_clear();
}
