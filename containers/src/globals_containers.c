/*
 * globals_containers.c - tvm_ffi's container global functions (ffi.Array, ffi.ListAppend,
 * ffi.MapGetItem, ffi.DictForwardIterFunctor, ...), registered when the library loads
 * (init.c) so that C, Rust and Python callers find them by name.
 *
 * Each is a plain ffk_safe_call behind a typed signature written as tvm_ffi's metadata
 * writes it, so calls with the wrong number or type of arguments fail as tvm_ffi's do (a
 * TypeError naming the function and the argument). Indices are tvm_ffi's: no negative
 * index counts from the end, and every one out of range is an IndexError naming the index
 * and the size. The List and Dict functions work on the caller's shared object; the
 * Array and Map ones never change their argument (copy-on-write values).
 *
 * The iteration functors ffi.MapForwardIterFunctor / ffi.DictForwardIterFunctor return a
 * Function over a snapshot of the entries taken when the functor is made: called with 0
 * it gives the current key, with 1 the current value, with 2 it advances and returns
 * whether an entry remains. A Dict changed while iterated is therefore never read torn.
 */
#include "containers_internal.h"

#include <ffikit/dict.h>
#include <ffikit/list.h>

#include <stdatomic.h>

/* ---- Construction ---------------------------------------------------------------- */

static int array_new(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  ffk_array *a = ffk_array_new(args, nargs);
  if (a == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

static int list_new(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  ffk_list *l = ffk_list_from_items(args, nargs);
  if (l == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)l);
  return 0;
}

/* ffi.Map(k0, v0, k1, v1, ...) and ffi.Dict(...): keys and values alternate. */
static int mapping_new(bool dict, const ffk_any *args, int32_t nargs, ffk_any *result) {
  const char *fn = dict ? "ffi.Dict" : "ffi.Map";
  if (nargs % 2 != 0)
    return ffk_error_set(FFK_ERR_VALUE, "`%s` takes keys and values in pairs but got %d arguments", fn, (int)nargs);
  ffk_object *made;
  if (dict) {
    ffk_dict *d = ffk_dict_new();
    made = (ffk_object *)d;
    for (int32_t i = 0; d != NULL && i < nargs; i += 2)
      if (ffk_dict_set(d, &args[i], &args[i + 1]) != 0) {
        ffk_object_release(made);
        return -1;
      }
  } else {
    ffk_map *m = ffk_map_new();
    for (int32_t i = 0; m != NULL && i < nargs; i += 2)
      if (ffk_map_set(&m, &args[i], &args[i + 1]) != 0) {
        ffk_object_release((ffk_object *)m);
        return -1;
      }
    made = (ffk_object *)m;
  }
  if (made == NULL) return -1;
  *result = ffk_any_object_steal(made);
  return 0;
}

static int map_new(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  return mapping_new(false, args, nargs, result);
}

static int dict_new(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  return mapping_new(true, args, nargs, result);
}

/* ---- Array ---------------------------------------------------------------------- */

/* The IndexError of every element access: tvm_ffi counts no index from the end. */
static int index_error(const char *fn, int64_t index, int64_t size) {
  return ffk_error_set(FFK_ERR_INDEX, "`%s`: index %lld out of bounds for size %lld", fn, (long long)index,
                       (long long)size);
}

static int array_get_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Array, int) */
  const ffk_array *a = (const ffk_array *)args[0].v_obj;
  int64_t i = args[1].v_int;
  if (i < 0 || i >= a->size) return index_error("ffi.ArrayGetItem", i, a->size);
  return ffk_array_get(a, i, result);
}

static int array_size(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_int(((const ffk_array *)args[0].v_obj)->size);
  return 0;
}

static int array_contains(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_bool(ffk_array_contains((const ffk_array *)args[0].v_obj, &args[1]));
  return 0;
}

/* ---- List ----------------------------------------------------------------------- */

#define LIST(v) ((ffk_list *)(v).v_obj)

static int list_append(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_list_append(LIST(args[0]), &args[1]);
}

static int list_size(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_int(ffk_list_size(LIST(args[0])));
  return 0;
}

static int list_get_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  int64_t i = args[1].v_int, n = ffk_list_size(LIST(args[0]));
  if (i < 0 || i >= n) return index_error("ffi.ListGetItem", i, n);
  return ffk_list_get(LIST(args[0]), i, result);
}

static int list_set_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  int64_t i = args[1].v_int, n = ffk_list_size(LIST(args[0]));
  if (i < 0 || i >= n) return index_error("ffi.ListSetItem", i, n);
  return ffk_list_set(LIST(args[0]), i, &args[2]);
}

static int list_insert(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  int64_t i = args[1].v_int, n = ffk_list_size(LIST(args[0]));
  if (i < 0 || i > n)
    return ffk_error_set(FFK_ERR_INDEX, "`ffi.ListInsert`: index %lld out of bounds [0, %lld]", (long long)i,
                         (long long)n);
  return ffk_list_insert(LIST(args[0]), i, &args[2]);
}

static int list_pop(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  int64_t i = args[1].v_int, n = ffk_list_size(LIST(args[0]));
  if (i < 0 || i >= n) return index_error("ffi.ListPop", i, n);
  return ffk_list_pop(LIST(args[0]), i, result);
}

static int list_erase(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  int64_t i = args[1].v_int, n = ffk_list_size(LIST(args[0]));
  if (i < 0 || i >= n) return index_error("ffi.ListErase", i, n);
  return ffk_list_erase_at(LIST(args[0]), i);
}

/* The range check of ffi.ListEraseRange and ffi.ListReplaceSlice: 0 <= begin <= end <= size. */
static int check_range(const char *fn, ffk_list *l, int64_t begin, int64_t end) {
  int64_t n = ffk_list_size(l);
  if (begin < 0 || begin > end || end > n)
    return ffk_error_set(FFK_ERR_INDEX, "`%s`: range [%lld, %lld) out of bounds for size %lld", fn,
                         (long long)begin, (long long)end, (long long)n);
  return 0;
}

static int list_erase_range(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  if (check_range("ffi.ListEraseRange", LIST(args[0]), args[1].v_int, args[2].v_int) != 0) return -1;
  return ffk_list_erase(LIST(args[0]), args[1].v_int, args[2].v_int);
}

/* ffi.ListReplaceSlice(list, begin, end, items): items is an Array, Tuple or List (the list itself too). */
static int list_replace_slice(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  int32_t t = args[3].type_index;
  if (t != FFK_TYPE_ARRAY && t != FFK_TYPE_TUPLE && t != FFK_TYPE_LIST)
    return ffk_error_set(FFK_ERR_TYPE, "`ffi.ListReplaceSlice`: argument #3 expected an Array or List but got %s",
                         ffk_any_type_name(&args[3]));
  if (check_range("ffi.ListReplaceSlice", LIST(args[0]), args[1].v_int, args[2].v_int) != 0) return -1;
  return ffk_list_set_slice_from(LIST(args[0]), args[1].v_int, args[2].v_int, args[3].v_obj);
}

static int list_contains(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_bool(ffk_list_contains(LIST(args[0]), &args[1]));
  return 0;
}

static int list_reverse(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_list_reverse(LIST(args[0]));
}

static int list_clear(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_list_clear(LIST(args[0]));
}

/* ---- Map and Dict --------------------------------------------------------------- */

/* A lookup in a Map (dict false) or a Dict: 1 found, 0 missing, -1 error. */
static int mapping_get(bool dict, const ffk_any *m, const ffk_any *key, ffk_any *out) {
  return dict ? ffk_dict_get((ffk_dict *)m->v_obj, key, out) : ffk_map_get((const ffk_map *)m->v_obj, key, out);
}

static int get_item(bool dict, const ffk_any *args, ffk_any *result) {
  int rc = mapping_get(dict, &args[0], &args[1], result);
  if (rc != 0) return rc < 0 ? -1 : 0;
  ffk_string *r = ffk_any_repr(&args[1]);
  if (r == NULL) return -1;
  ffk_error_set(FFK_ERR_KEY, "`%s`: key %s is not in the %s", dict ? "ffi.DictGetItem" : "ffi.MapGetItem",
                r->data, dict ? "Dict" : "Map");
  ffk_object_release((ffk_object *)r);
  return -1;
}

/* tvm_ffi's ...GetItemOrMissing: the value, or the MISSING marker (ffi.GetInvalidObject). */
static int get_item_or_missing(bool dict, const ffk_any *args, ffk_any *result) {
  int rc = mapping_get(dict, &args[0], &args[1], result);
  if (rc < 0) return -1;
  if (rc == 0) *result = ffk_any_object(ffk_missing());
  return 0;
}

static int count(bool dict, const ffk_any *args, ffk_any *result) {
  ffk_any v = ffk_any_none();
  int rc = mapping_get(dict, &args[0], &args[1], &v);
  ffk_any_release(&v);
  if (rc < 0) return -1;
  *result = ffk_any_int(rc);
  return 0;
}

static int map_get_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return get_item(false, args, result);
}

static int map_get_item_or_missing(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return get_item_or_missing(false, args, result);
}

static int map_count(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return count(false, args, result);
}

static int map_size(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_int(ffk_map_size((const ffk_map *)args[0].v_obj));
  return 0;
}

static int dict_get_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return get_item(true, args, result);
}

static int dict_get_item_or_missing(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return get_item_or_missing(true, args, result);
}

static int dict_count(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return count(true, args, result);
}

static int dict_size(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  *result = ffk_any_int(ffk_dict_size((ffk_dict *)args[0].v_obj));
  return 0;
}

static int dict_set_item(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_dict_set((ffk_dict *)args[0].v_obj, &args[1], &args[2]);
}

/* Erasing a key that is not there does nothing, as in tvm_ffi. */
static int dict_erase(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_dict_erase((ffk_dict *)args[0].v_obj, &args[1]) < 0 ? -1 : 0;
}

static int dict_clear(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_dict_clear((ffk_dict *)args[0].v_obj);
}

/* ---- Iteration functors ----------------------------------------------------------- */

/* The state of one functor: (key, value) Tuples of the snapshot, and the current entry. */
typedef struct {
  ffk_array *items;
  _Atomic int64_t pos;
  const char *name;
} iter_state;

static void iter_state_free(void *ctx) {
  iter_state *st = (iter_state *)ctx;
  ffk_object_release((ffk_object *)st->items);
  ffk_mem_free(st);
}

static int iter_call(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  iter_state *st = (iter_state *)self;
  int64_t command;
  if (ffk_args_unpack(st->name, args, nargs, "i", &command) != 0) return -1;
  int64_t pos = atomic_load(&st->pos);
  if (command == 2) {
    if (pos < st->items->size) pos = atomic_fetch_add(&st->pos, 1) + 1;
    *result = ffk_any_bool(pos < st->items->size);
    return 0;
  }
  if (command != 0 && command != 1)
    return ffk_error_set(FFK_ERR_VALUE,
                         "`%s`: command %lld is not 0 (key), 1 (value) or 2 (advance)", st->name,
                         (long long)command);
  if (pos >= st->items->size)
    return ffk_error_set(FFK_ERR_INDEX, "`%s`: the iterator is past the last of %lld entries", st->name,
                         (long long)st->items->size);
  ffk_any pair = ffk_any_none();
  if (ffk_array_get(st->items, pos, &pair) != 0) return -1;
  int rc = ffk_array_get((const ffk_array *)pair.v_obj, command, result);
  ffk_any_release(&pair);
  return rc;
}

static int make_iter(bool dict, const ffk_any *m, ffk_any *result) {
  const char *name = dict ? "ffi.DictForwardIterFunctor" : "ffi.MapForwardIterFunctor";
  iter_state *st = (iter_state *)ffk_mem_alloc(sizeof *st);
  if (st == NULL) return -1;
  st->items = dict ? ffk_dict_items((ffk_dict *)m->v_obj) : ffk_map_items((const ffk_map *)m->v_obj);
  if (st->items == NULL) {
    ffk_mem_free(st);
    return -1;
  }
  atomic_init(&st->pos, 0);
  st->name = name;
  ffk_function *f = ffk_function_new(name, iter_call, st, iter_state_free);
  if (f == NULL) return -1; /* the deleter has freed st */
  *result = ffk_any_object_steal((ffk_object *)f);
  return 0;
}

static int map_iter(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return make_iter(false, &args[0], result);
}

static int dict_iter(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  return make_iter(true, &args[0], result);
}

/* ---- Registry and modules: the answers that are Arrays ------------------------------- */

/* ffi.GetRegisteredTypeKeys(): the key of every type, static ones included, by index. */
static int registered_type_keys(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  int32_t count = ffk_type_count(), found = 0;
  ffk_array *a = ffk_array_with_capacity(count);
  if (a == NULL) return -1;
  for (int32_t i = 0; found < count && i < FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC; ++i) {
    const char *key = ffk_type_key(i);
    if (key == NULL) continue;
    ++found;
    ffk_any k;
    if (ffk_any_cstr(key, &k) != 0 || ffk_array_push_steal(&a, &k) != 0) {
      ffk_object_release((ffk_object *)a);
      return -1;
    }
  }
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

/* ffi.ModuleGetWriteFormats(module): none, an ffikit module is not written out (globals_module.c). */
static int module_write_formats(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  ffk_array *a = ffk_array_new(NULL, 0);
  if (a == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)a);
  return 0;
}

/* ---- Registration ----------------------------------------------------------------- */

static const ffk_function_def k_globals[] = {
    {"ffi.Array", NULL, array_new},
    {"ffi.ArrayGetItem", "(Array, int) -> Any", array_get_item},
    {"ffi.ArraySize", "(Array) -> int", array_size},
    {"ffi.ArrayContains", "(Array, Any) -> bool", array_contains},
    {"ffi.List", NULL, list_new},
    {"ffi.ListAppend", "(List, Any) -> None", list_append},
    {"ffi.ListSize", "(List) -> int", list_size},
    {"ffi.ListGetItem", "(List, int) -> Any", list_get_item},
    {"ffi.ListSetItem", "(List, int, Any) -> None", list_set_item},
    {"ffi.ListInsert", "(List, int, Any) -> None", list_insert},
    {"ffi.ListPop", "(List, int) -> Any", list_pop},
    {"ffi.ListErase", "(List, int) -> None", list_erase},
    {"ffi.ListEraseRange", "(List, int, int) -> None", list_erase_range},
    {"ffi.ListReplaceSlice", "(List, int, int, Object) -> None", list_replace_slice},
    {"ffi.ListContains", "(List, Any) -> bool", list_contains},
    {"ffi.ListReverse", "(List) -> None", list_reverse},
    {"ffi.ListClear", "(List) -> None", list_clear},
    {"ffi.Map", NULL, map_new},
    {"ffi.MapGetItem", "(Map, Any) -> Any", map_get_item},
    {"ffi.MapGetItemOrMissing", "(Map, Any) -> Any", map_get_item_or_missing},
    {"ffi.MapCount", "(Map, Any) -> int", map_count},
    {"ffi.MapSize", "(Map) -> int", map_size},
    {"ffi.MapForwardIterFunctor", "(Map) -> Function", map_iter},
    {"ffi.Dict", NULL, dict_new},
    {"ffi.DictGetItem", "(Dict, Any) -> Any", dict_get_item},
    {"ffi.DictGetItemOrMissing", "(Dict, Any) -> Any", dict_get_item_or_missing},
    {"ffi.DictCount", "(Dict, Any) -> int", dict_count},
    {"ffi.DictSize", "(Dict) -> int", dict_size},
    {"ffi.DictSetItem", "(Dict, Any, Any) -> None", dict_set_item},
    {"ffi.DictErase", "(Dict, Any) -> None", dict_erase},
    {"ffi.DictClear", "(Dict) -> None", dict_clear},
    {"ffi.DictForwardIterFunctor", "(Dict) -> Function", dict_iter},
    {"ffi.GetRegisteredTypeKeys", "() -> Array<str>", registered_type_keys},
    {"ffi.ModuleGetWriteFormats", "(Module) -> Array<str>", module_write_formats},
};

int ffk_containers__register_container_globals(void) {
  return ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]);
}
