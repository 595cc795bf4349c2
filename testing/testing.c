/*
 * testing.c - the testing.* Functions (see testing.h). Each is a plain ffk_safe_call;
 * ffk_testing_register turns them into Functions and registers them.
 */
#include "testing.h"

#include <ffikit/array.h>
#include <ffikit/dict.h>
#include <ffikit/list.h>
#include <ffikit/map.h>

#include <stdio.h>
#include <string.h>

static int echo(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  if (ffk_args_unpack("testing.echo", args, nargs, "a", NULL) != 0) return -1;
  return ffk_any_to_owned(&args[0], result);
}

static int nop(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs, (void)result;
  return 0;
}

static int apply(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  if (nargs < 1)
    return ffk_error_set(FFK_ERR_TYPE, "`testing.apply` takes a Function and its arguments but got %d arguments",
                         (int)nargs);
  ffk_function *f;
  if (ffk_args_unpack("testing.apply", args, 1, "F", &f) != 0) return -1;
  return ffk_function_call(f, args + 1, nargs - 1, result);
}

FFK_NOINLINE int ffk_testing_raise_error(const char *kind, const char *message) {
  return ffk_error_set(kind, "%s", message);
}

/* tvm_ffi's name for its raising function, so backtraces read the same in both. */
static FFK_NOINLINE int TestRaiseError(const char *kind, const char *message) {
  return ffk_error_set(kind, "%s", message);
}

/* testing.test_raise_error(kind: str, message: str): tvm_ffi's spelling of raise_error. */
static int test_raise_error(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)result;
  const char *kind, *message;
  if (ffk_args_unpack("testing.test_raise_error", args, nargs, "ss", &kind, &message) != 0) return -1;
  return TestRaiseError(kind, message);
}

static int raise_error(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)result;
  const char *kind, *message;
  if (ffk_args_unpack("testing.raise_error", args, nargs, "ss", &kind, &message) != 0) return -1;
  return ffk_testing_raise_error(kind, message);
}

int ffk_testing_add_one(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t x;
  if (ffk_args_unpack("testing.add_one", args, nargs, "i", &x) != 0) return -1;
  if (x == INT64_MAX) /* x + 1 would overflow: undefined behaviour in C, so refuse it */
    return ffk_error_set(FFK_ERR_OVERFLOW,
                         "`testing.add_one(%lld)`: the result does not fit in a 64-bit signed integer", (long long)x);
  *result = ffk_any_int(x + 1);
  return 0;
}

static int object_use_count(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: exactly one Object */
  *result = ffk_any_int((int64_t)ffk_object_use_count(args[0].v_obj));
  return 0;
}

static int get_add_one_c_symbol(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  ffk_safe_call fn = ffk_testing_add_one;
  void *p;
  memcpy(&p, &fn, sizeof p);
  *result = ffk_any_ptr(p);
  return 0;
}

/* The typed identities: the signature has already converted the argument. */
static int identity(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return ffk_any_to_owned(&args[0], result);
}

/* ---- Containers holding a tensor (typed: args[0] is a Tensor) ---------------------- */

static int make_array_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_array *a = ffk_array_new(&args[0], 1);
  if (a == NULL) return -1;
  *result = ffk_any_object((ffk_object *)a);
  ffk_object_release((ffk_object *)a);
  return 0;
}

/* An empty Array; the signature has checked that the argument is a Tensor. */
static int make_empty_array_with_tensor_input(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  ffk_array *a = ffk_array_new(NULL, 0);
  if (a == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

/* {"tensor": t} in a Map (copy-on-write) or a Dict (shared). */
static int make_mapping_with_tensor(bool dict, const ffk_any *tensor, ffk_any *result) {
  ffk_any key;
  if (ffk_any_cstr("tensor", &key) != 0) return -1;
  ffk_object *made;
  int rc;
  if (dict) {
    ffk_dict *d = ffk_dict_new();
    made = (ffk_object *)d;
    rc = d != NULL ? ffk_dict_set(d, &key, tensor) : -1;
  } else {
    ffk_map *m = ffk_map_new();
    rc = m != NULL ? ffk_map_set(&m, &key, tensor) : -1;
    made = (ffk_object *)m;
  }
  ffk_any_release(&key);
  if (rc == 0) *result = ffk_any_object(made);
  ffk_object_release(made);
  return rc;
}

static int make_map_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return make_mapping_with_tensor(false, &args[0], result);
}

static int make_dict_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return make_mapping_with_tensor(true, &args[0], result);
}

static int make_list_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Tensor, Any) */
  ffk_list *l = ffk_list_new();
  if (l == NULL) return -1;
  int rc = ffk_list_append(l, &args[0]);
  if (rc == 0) rc = ffk_list_append(l, &args[1]);
  if (rc == 0) *result = ffk_any_object((ffk_object *)l);
  ffk_object_release((ffk_object *)l);
  return rc;
}

/* [t, n, "hello"] (typed: (Tensor, int)). */
static int make_array_with_mixed(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_any items[3] = {args[0], args[1], ffk_any_none()};
  if (ffk_any_cstr("hello", &items[2]) != 0) return -1;
  ffk_array *a = ffk_array_new(items, 3);
  ffk_any_release(&items[2]);
  if (a == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

/* [[t, 42], t] (typed: (Tensor)). */
static int make_nested_array_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_any inner_items[2] = {args[0], ffk_any_int(42)};
  ffk_array *inner = ffk_array_new(inner_items, 2);
  if (inner == NULL) return -1;
  ffk_any outer_items[2] = {ffk_any_object_steal((ffk_object *)inner), args[0]};
  ffk_array *outer = ffk_array_new(outer_items, 2);
  ffk_any_release(&outer_items[0]);
  if (outer == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)outer);
  return 0;
}

/* Sets key `k` (a C string) of *m to `v`; 0 or -1. */
static int map_set_cstr(ffk_map **m, const char *k, const ffk_any *v) {
  ffk_any key;
  if (ffk_any_cstr(k, &key) != 0) return -1;
  int rc = ffk_map_set(m, &key, v);
  ffk_any_release(&key);
  return rc;
}

/* {"array": [t1, t2], "map": {"t": t1}, "scalar": 99} (typed: (Tensor, Tensor)). */
static int make_nested_map_with_tensor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  ffk_map *outer = ffk_map_new(), *inner = ffk_map_new();
  ffk_array *arr = ffk_array_new(args, 2);
  int rc = outer != NULL && inner != NULL && arr != NULL ? 0 : -1;
  if (rc == 0) rc = map_set_cstr(&inner, "t", &args[0]);
  if (rc == 0) {
    ffk_any a = ffk_any_object((ffk_object *)arr), i = ffk_any_object((ffk_object *)inner), n = ffk_any_int(99);
    rc = map_set_cstr(&outer, "array", &a);
    if (rc == 0) rc = map_set_cstr(&outer, "map", &i);
    if (rc == 0) rc = map_set_cstr(&outer, "scalar", &n);
    ffk_any_release(&a);
    ffk_any_release(&i);
  }
  if (rc == 0) *result = ffk_any_object((ffk_object *)outer);
  if (outer != NULL) ffk_object_release((ffk_object *)outer);
  if (inner != NULL) ffk_object_release((ffk_object *)inner);
  if (arr != NULL) ffk_object_release((ffk_object *)arr);
  return rc;
}

/* True for a Tensor or DLTensor* view; false for None (tvm_ffi's Optional<DLTensor*>). */
static int optional_tensor_view_has_value(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  const ffk_any *v;
  if (ffk_args_unpack("testing.optional_tensor_view_has_value", args, nargs, "a", &v) != 0) return -1;
  if (v->type_index == FFK_TYPE_NONE) {
    *result = ffk_any_bool(false);
    return 0;
  }
  if (v->type_index != FFK_TYPE_TENSOR && v->type_index != FFK_TYPE_DLTENSOR_PTR)
    return ffk_error_set(FFK_ERR_TYPE,
                         "`testing.optional_tensor_view_has_value`: argument #0 expected a Tensor or None but got %s",
                         ffk_any_type_name(v));
  *result = ffk_any_bool(true);
  return 0;
}

/* testing.schema_tensor_view_input(t): checks that t is a tensor and returns None. */
static int schema_tensor_view_input(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)result;
  const ffk_any *v;
  if (ffk_args_unpack("testing.schema_tensor_view_input", args, nargs, "a", &v) != 0) return -1;
  if (v->type_index != FFK_TYPE_TENSOR && v->type_index != FFK_TYPE_DLTENSOR_PTR)
    return ffk_error_set(FFK_ERR_TYPE, "`testing.schema_tensor_view_input`: argument #0 expected a Tensor but got %s",
                         ffk_any_type_name(v));
  return 0;
}

static int schema_no_args(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  *result = ffk_any_int(1);
  return 0;
}

/* tvm_ffi's Variant<int, str> (and <int, str, Array<int>>): ffikit's schemas have no
   Variant, so the functions are untyped and check their one argument here. */
static int variant_identity(const char *fn, bool allow_array, const ffk_any *args, int32_t nargs, ffk_any *result) {
  const ffk_any *v;
  if (ffk_args_unpack(fn, args, nargs, "a", &v) != 0) return -1;
  const char *s;
  bool ok = v->type_index == FFK_TYPE_INT || ffk_any_as_str(v, &s, &(size_t){0}) == 0;
  if (!ok) ffk_error_clear();
  if (!ok && allow_array && v->type_index == FFK_TYPE_ARRAY) {
    ok = true;
    const ffk_array *a = (const ffk_array *)v->v_obj;
    for (int64_t i = 0; i < a->size && ok; ++i) ok = a->data[i].type_index == FFK_TYPE_INT;
  }
  if (!ok)
    return ffk_error_set(FFK_ERR_TYPE, "`%s`: argument #0 expected %s but got %s", fn,
                         allow_array ? "int, str or Array<int>" : "int or str", ffk_any_type_name(v));
  return ffk_any_to_owned(v, result);
}

static int schema_id_variant_int_str(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  return variant_identity("testing.schema_id_variant_int_str", false, args, nargs, result);
}

static int schema_variant_mix(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  return variant_identity("testing.schema_variant_mix", true, args, nargs, result);
}

/* (arr, map, key): map, with map[key] = the ints of arr (its None items dropped) when key is not None. */
static int schema_arr_map_opt(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed */
  ffk_map *m = (ffk_map *)args[1].v_obj;
  ffk_object_retain((ffk_object *)m);
  int rc = 0;
  if (args[2].type_index != FFK_TYPE_NONE) {
    const ffk_array *arr = (const ffk_array *)args[0].v_obj;
    ffk_array *ints = ffk_array_with_capacity(arr->size);
    rc = ints == NULL ? -1 : 0;
    for (int64_t i = 0; rc == 0 && i < arr->size; ++i)
      if (arr->data[i].type_index != FFK_TYPE_NONE) rc = ffk_array_push(&ints, &arr->data[i]);
    if (rc == 0) {
      ffk_any v = ffk_any_object((ffk_object *)ints);
      rc = ffk_map_set(&m, &args[2], &v);
      ffk_any_release(&v);
    }
    if (ints != NULL) ffk_object_release((ffk_object *)ints);
  }
  if (rc == 0) *result = ffk_any_object((ffk_object *)m);
  ffk_object_release((ffk_object *)m);
  return rc;
}

/* Changes a container through the callee's own handle: COW for Array/Map, shared for List/Dict. */
static int mutate(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Object, Any, Any) */
  ffk_object *own = args[0].v_obj;
  ffk_object_retain(own);
  int rc;
  switch (own->type_index) {
    case FFK_TYPE_ARRAY: rc = ffk_array_push((ffk_array **)&own, &args[2]); break;
    case FFK_TYPE_MAP: rc = ffk_map_set((ffk_map **)&own, &args[1], &args[2]); break;
    case FFK_TYPE_LIST: rc = ffk_list_append((ffk_list *)own, &args[2]); break;
    case FFK_TYPE_DICT: rc = ffk_dict_set((ffk_dict *)own, &args[1], &args[2]); break;
    default: rc = ffk_error_set(FFK_ERR_TYPE, "`testing.mutate` expects an Array, Map, List or Dict, got %s",
                                ffk_type_name(own->type_index));
  }
  if (rc == 0) *result = ffk_any_object(own);
  ffk_object_release(own);
  return rc;
}

static const struct {
  const char *name, *signature;
  ffk_safe_call call;
} k_functions[] = {
    {"testing.echo", NULL, echo},
    {"testing.nop", NULL, nop},
    {"testing.apply", NULL, apply},
    {"testing.raise_error", NULL, raise_error},
    {"testing.test_raise_error", "(str, str) -> None", test_raise_error},
    {"testing.add_one", "(int) -> int", ffk_testing_add_one},
    {"testing.object_use_count", "(Object) -> int", object_use_count},
    {"testing.get_add_one_c_symbol", "() -> ptr", get_add_one_c_symbol},
    {"testing.schema_id_int", "(int) -> int", identity},
    {"testing.schema_id_float", "(float) -> float", identity},
    {"testing.schema_id_bool", "(bool) -> bool", identity},
    {"testing.schema_id_device", "(Device) -> Device", identity},
    {"testing.schema_id_dtype", "(dtype) -> dtype", identity},
    {"testing.schema_id_string", "(str) -> str", identity},
    {"testing.schema_id_bytes", "(bytes) -> bytes", identity},
    {"testing.schema_id_func", "(Function) -> Function", identity},
    {"testing.schema_id_any", "(Any) -> Any", identity},
    {"testing.schema_id_object", "(Object) -> Object", identity},
    {"testing.schema_id_tensor", "(Tensor) -> Tensor", identity},
    {"testing.schema_id_arr_int", "(Array<int>) -> Array<int>", identity},
    {"testing.schema_id_arr_str", "(Array<str>) -> Array<str>", identity},
    {"testing.schema_id_arr", "(Array) -> Array", identity},
    {"testing.schema_id_list_int", "(List<int>) -> List<int>", identity},
    {"testing.schema_id_map_str_int", "(Map<str, int>) -> Map<str, int>", identity},
    {"testing.schema_id_map", "(Map) -> Map", identity},
    {"testing.schema_id_dict_str_int", "(Dict<str, int>) -> Dict<str, int>", identity},
    {"testing.schema_id_list_str", "(List<str>) -> List<str>", identity},
    {"testing.schema_id_map_str_str", "(Map<str, str>) -> Map<str, str>", identity},
    {"testing.schema_id_dict_str_str", "(Dict<str, str>) -> Dict<str, str>", identity},
    {"testing.make_array_with_tensor", "(Tensor) -> Array", make_array_with_tensor},
    {"testing.make_empty_array_with_tensor_input", "(Tensor) -> Array", make_empty_array_with_tensor_input},
    {"testing.make_map_with_tensor", "(Tensor) -> Map<str, Tensor>", make_map_with_tensor},
    {"testing.make_dict_with_tensor", "(Tensor) -> Dict<str, Tensor>", make_dict_with_tensor},
    {"testing.make_list_with_tensor", "(Tensor, Any) -> List", make_list_with_tensor},
    {"testing.mutate", "(Object, Any, Any) -> Object", mutate},
    {"testing.schema_id_arr_obj", "(Array<Object>) -> Array<Object>", identity},
    {"testing.schema_id_list_obj", "(List<Object>) -> List<Object>", identity},
    {"testing.schema_id_map_str_obj", "(Map<str, Object>) -> Map<str, Object>", identity},
    {"testing.schema_id_opt_int", "(Optional<int>) -> Optional<int>", identity},
    {"testing.schema_id_opt_str", "(Optional<str>) -> Optional<str>", identity},
    {"testing.schema_id_opt_obj", "(Optional<Object>) -> Optional<Object>", identity},
    {"testing.schema_id_func_typed", "(Function) -> Function", identity},
    {"testing.schema_id_variant_int_str", NULL, schema_id_variant_int_str},
    {"testing.schema_variant_mix", NULL, schema_variant_mix},
    {"testing.schema_arr_map_opt", "(Array<Optional<int>>, Map<str, Array<int>>, Optional<str>) -> Map<str, Array<int>>",
     schema_arr_map_opt},
    {"testing.schema_no_args", "() -> int", schema_no_args},
    {"testing.schema_no_args_no_return", "() -> None", nop},
    {"testing.schema_no_return", "(int) -> None", nop},
    {"testing.schema_packed", NULL, nop},
    {"testing.schema_tensor_view_input", NULL, schema_tensor_view_input},
    {"testing.optional_tensor_view_has_value", NULL, optional_tensor_view_has_value},
    {"testing.make_array_with_mixed", "(Tensor, int) -> Array", make_array_with_mixed},
    {"testing.make_nested_array_with_tensor", "(Tensor) -> Array", make_nested_array_with_tensor},
    {"testing.make_nested_map_with_tensor", "(Tensor, Tensor) -> Map<str, Any>", make_nested_map_with_tensor},
};
#define N_FUNCTIONS (sizeof k_functions / sizeof k_functions[0])

int ffk_testing_register(void) {
  for (size_t i = 0; i < N_FUNCTIONS; ++i) {
    ffk_function *f = ffk_function_new_typed(k_functions[i].name, k_functions[i].signature, k_functions[i].call,
                                             NULL, NULL);
    if (f == NULL) return -1;
    /* testing.nop is the call-overhead benchmark's function: it returns at once and never
       waits on Python, so the bindings may keep their interpreter lock around it. */
    if (k_functions[i].call == nop && ffk_function_set_flags(f, FFK_FUNCTION_QUICK) != 0) {
      ffk_object_release((ffk_object *)f);
      return -1;
    }
    int rc = ffk_function_register(k_functions[i].name, f, true);
    ffk_object_release((ffk_object *)f);
    if (rc != 0) return -1;
  }
  return ffk_testing_register_objects();
}

void ffk_testing_unregister(void) {
  for (size_t i = 0; i < N_FUNCTIONS; ++i) ffk_function_remove_global(k_functions[i].name);
  ffk_testing_unregister_objects();
}
