/*
 * convert.c - the converter slots of the containers, used by typed Function signatures
 * (ffikit/schema.h) to check and convert Array<T>, Tuple, List<T>, Map<K, V> and Dict<K, V>.
 *
 * What each accepts:
 *   Array<T>    an Array (passed as is when every item has type T), a Tuple or a List
 *               (a snapshot, converted to a new Array)
 *   Tuple       a Tuple as is; an Array or a List becomes a new Tuple
 *   List<T>     a List as is when every item has type T (the callee shares it); a List whose
 *               items need converting, an Array or a Tuple becomes a new List
 *   Map<K, V>   a Map as is when every key and value has its type; a Dict (a snapshot) becomes a Map
 *   Dict<K, V>  a Dict as is when every entry has its types; otherwise, or from a Map, a new Dict
 * Items are checked recursively (Array<Map<str, List<int>>> works), and a mismatch
 * names where it is: "expected `Array<int>` but got `List` (item #1: expected `int` but got `str`)".
 * List and Dict values are read through one snapshot, so a concurrent change cannot tear the check.
 */
#include "containers_internal.h"

#include <ffikit/dict.h>
#include <ffikit/list.h>

#include <stdio.h>

/* The element schema that needs checking, or NULL when any element will do. */
static const ffk_schema *param(const ffk_schema *s, int32_t i) {
  if (s->nparams <= i || s->params[i]->type_index == FFK_SCHEMA_ANY) return NULL;
  return s->params[i];
}

/*
 * Rewrites a pending TypeError from an element as one about the whole value,
 * "expected `Array<int>` but got `List` (item #1: expected `int` but got `str`)". Other
 * errors pass unchanged. Always returns -1.
 */
static int nested_mismatch(const ffk_schema *s, const ffk_any *value, const char *where) {
  if (!ffk_error_matches(FFK_ERR_TYPE)) return -1;
  ffk_error *err = ffk_error_fetch();
  ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `%s` (%s: %s)", s->text, ffk_any_type_name(value), where,
                ffk_error_message(err));
  ffk_object_release((ffk_object *)err);
  return -1;
}

static int mismatch(const ffk_schema *s, const ffk_any *value) {
  return ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `%s`", s->text, ffk_any_type_name(value));
}

/* Releases the first `n` values of a lazily made copy and frees it. */
static void drop_items(ffk_any *items, int64_t n) {
  if (items == NULL) return;
  for (int64_t i = 0; i < n; ++i) ffk_any_release(&items[i]);
  ffk_mem_free(items);
}

/*
 * Converts items[i] against `elem` into (*copy)[i]. The copy is made (owned references
 * to items[0..i)) the first time an item changes, so an all-matching sequence costs no
 * allocation. Returns 0 or -1; on -1 the caller drops the copy.
 */
static int convert_item(const ffk_schema *elem, const ffk_any *items, int64_t n, int64_t i, ffk_any **copy) {
  ffk_any tmp;
  int rc = ffk_schema_convert(elem, &items[i], &tmp);
  if (rc < 0) return -1;
  if (rc == 0) {
    if (*copy != NULL) {
      (*copy)[i] = items[i];
      ffk_any_retain(&items[i]);
    }
    return 0;
  }
  if (*copy == NULL) {
    if ((*copy = ffk_mem_alloc((size_t)n * sizeof(ffk_any))) == NULL) {
      ffk_any_release(&tmp);
      return -1;
    }
    for (int64_t j = 0; j < i; ++j) {
      (*copy)[j] = items[j];
      ffk_any_retain(&items[j]);
    }
  }
  (*copy)[i] = tmp;
  return 0;
}

/*
 * Checks the items of a sequence against `elem` (NULL: anything). Returns 0 when none
 * changes, 1 with *copy an owned converted copy of all n items, -1 with an error about `value`.
 */
static int convert_items(const ffk_schema *s, const ffk_any *value, const ffk_schema *elem, const ffk_any *items,
                         int64_t n, ffk_any **copy) {
  *copy = NULL;
  if (elem == NULL) return 0;
  for (int64_t i = 0; i < n; ++i) {
    if (convert_item(elem, items, n, i, copy) != 0) {
      drop_items(*copy, i);
      *copy = NULL;
      char where[48];
      snprintf(where, sizeof where, "item #%lld", (long long)i);
      return nested_mismatch(s, value, where);
    }
  }
  return *copy != NULL;
}

/* The items of an Array, Tuple or List value; a List is snapshotted into *snapshot (owned). */
static int sequence_items(const ffk_any *value, ffk_array **snapshot, const ffk_any **items, int64_t *n) {
  *snapshot = NULL;
  if (value->type_index == FFK_TYPE_LIST) {
    if ((*snapshot = ffk_list_to_array((ffk_list *)value->v_obj)) == NULL) return -1;
    *items = ffk_array_items_borrow(*snapshot);
    *n = ffk_array_size(*snapshot);
  } else {
    const ffk_array *a = (const ffk_array *)value->v_obj;
    *items = ffk_array_items_borrow(a);
    *n = ffk_array_size(a);
  }
  return 0;
}

/* Builds the container `target` from n owned items (steals them) or borrowed ones. */
static ffk_object *make_sequence(int32_t target, ffk_any *owned, const ffk_any *borrowed, int64_t n) {
  if (target == FFK_TYPE_ARRAY && owned != NULL) {
    ffk_object *obj = (ffk_object *)ffk_array_new_steal(owned, n); /* takes the values, not the buffer */
    ffk_mem_free(owned);
    return obj;
  }
  const ffk_any *items = owned != NULL ? owned : borrowed;
  ffk_object *obj = target == FFK_TYPE_LIST    ? (ffk_object *)ffk_list_from_items(items, n)
                    : target == FFK_TYPE_TUPLE ? (ffk_object *)ffk_tuple_new(n, items)
                                               : (ffk_object *)ffk_array_new(items, n);
  drop_items(owned, n);
  return obj;
}

static bool is_sequence(int32_t t) { return t == FFK_TYPE_ARRAY || t == FFK_TYPE_TUPLE || t == FFK_TYPE_LIST; }

/* The slot for Array, Tuple and List schemas. */
static int convert_sequence(const ffk_schema *s, const ffk_any *value, ffk_any *out) {
  int32_t target = s->type_index, t = value->type_index;
  if (!is_sequence(t)) return mismatch(s, value);
  const ffk_schema *elem = target == FFK_TYPE_TUPLE ? NULL : param(s, 0);
  if (t == target && elem == NULL) return 0;

  ffk_array *snapshot;
  const ffk_any *items;
  int64_t n;
  if (sequence_items(value, &snapshot, &items, &n) != 0) return -1;
  ffk_any *copy;
  int rc = convert_items(s, value, elem, items, n, &copy);
  if (rc < 0) goto done;
  if (rc == 0 && t == target) goto done; /* every item matched: pass the value itself */
  if (rc == 0 && snapshot != NULL && target == FFK_TYPE_ARRAY) {
    *out = ffk_any_object_steal((ffk_object *)snapshot); /* a List's snapshot is the Array */
    return 1;
  }
  ffk_object *obj = make_sequence(target, rc == 1 ? copy : NULL, items, n);
  rc = obj != NULL ? 1 : -1;
  if (obj != NULL) *out = ffk_any_object_steal(obj);
done:
  ffk_object_release((ffk_object *)snapshot);
  return rc;
}

/* Converts one key or value into *slot: an owned copy, converted or retained. 0 or -1. */
static int convert_into(const ffk_schema *schema, const ffk_any *v, ffk_any *slot) {
  int rc = schema != NULL ? ffk_schema_convert(schema, v, slot) : 0;
  if (rc == 0) {
    *slot = *v;
    ffk_any_retain(slot);
  }
  return rc < 0 ? -1 : 0;
}

/* Raises the mismatch of the key or value of entry `k` as one about the whole `value`. */
static int entry_mismatch(const ffk_schema *s, const ffk_any *value, const char *what, const ffk_any *k) {
  ffk_error *inner = ffk_error_fetch(); /* the repr below must not disturb it */
  ffk_string *r = ffk_any_repr(k);
  if (r == NULL) ffk_error_clear();
  char where[160];
  snprintf(where, sizeof where, "%s %.100s", what, r != NULL ? r->data : "?");
  ffk_object_release((ffk_object *)r);
  ffk_error_restore(inner);
  return nested_mismatch(s, value, where);
}

/*
 * Checks every entry of the Map `m` against the key and value schemas. Returns 0 when
 * nothing changes, 1 with *keys and *values owned converted copies of all entries, -1
 * with an error about `value`. The first pass only checks, so a matching Map costs no
 * allocation; the second, rare one builds the copies.
 */
static int convert_entries(const ffk_schema *s, const ffk_any *value, const ffk_map *m, ffk_any **keys,
                           ffk_any **values) {
  const ffk_schema *ks = param(s, 0), *vs = param(s, 1);
  *keys = *values = NULL;
  if (ks == NULL && vs == NULL) return 0;
  int64_t pos = 0;
  const ffk_any *k, *v;
  bool changes = false;
  while (ffk_map_next(m, &pos, &k, &v)) {
    ffk_any tmp;
    int rc = ks != NULL ? ffk_schema_convert(ks, k, &tmp) : 0;
    if (rc < 0) return entry_mismatch(s, value, "key", k);
    if (rc > 0) ffk_any_release(&tmp);
    changes |= rc > 0;
    rc = vs != NULL ? ffk_schema_convert(vs, v, &tmp) : 0;
    if (rc < 0) return entry_mismatch(s, value, "value for key", k);
    if (rc > 0) ffk_any_release(&tmp);
    changes |= rc > 0;
  }
  if (!changes) return 0;

  int64_t n = ffk_map_size(m), i = 0;
  ffk_any *kc = ffk_mem_alloc((size_t)n * sizeof(ffk_any));
  ffk_any *vc = kc != NULL ? ffk_mem_alloc((size_t)n * sizeof(ffk_any)) : NULL;
  if (vc == NULL) goto fail;
  for (pos = 0; ffk_map_next(m, &pos, &k, &v); ++i) {
    if (convert_into(ks, k, &kc[i]) != 0) goto fail;
    if (convert_into(vs, v, &vc[i]) != 0) {
      ffk_any_release(&kc[i]);
      goto fail;
    }
  }
  *keys = kc;
  *values = vc;
  return 1;
fail:
  drop_items(kc, i);
  drop_items(vc, i);
  return -1;
}

/* The slot for Map and Dict schemas. */
static int convert_mapping(const ffk_schema *s, const ffk_any *value, ffk_any *out) {
  int32_t target = s->type_index, t = value->type_index;
  if (t != FFK_TYPE_MAP && t != FFK_TYPE_DICT) return mismatch(s, value);
  bool typed = param(s, 0) != NULL || param(s, 1) != NULL;
  if (t == target && !typed) return 0;

  ffk_map *snapshot = NULL;
  const ffk_map *m = (const ffk_map *)value->v_obj;
  if (t == FFK_TYPE_DICT) {
    if ((snapshot = ffk_dict_to_map((ffk_dict *)value->v_obj)) == NULL) return -1;
    m = snapshot;
  }
  ffk_any *keys, *values;
  int rc = convert_entries(s, value, m, &keys, &values);
  if (rc < 0 || (rc == 0 && t == target)) goto done;
  int64_t n = ffk_map_size(m);
  ffk_object *obj = NULL;
  if (rc == 0 && target == FFK_TYPE_MAP) {
    obj = (ffk_object *)snapshot; /* a Dict's snapshot is the Map */
    snapshot = NULL;
  } else if (rc == 0) {
    obj = (ffk_object *)ffk_dict_from_map(m);
  } else {
    obj = target == FFK_TYPE_MAP ? (ffk_object *)ffk_map_from_pairs(keys, values, n)
                                 : (ffk_object *)ffk_dict_from_pairs(keys, values, n);
    drop_items(keys, n);
    drop_items(values, n);
  }
  rc = obj != NULL ? 1 : -1;
  if (obj != NULL) *out = ffk_any_object_steal(obj);
done:
  ffk_object_release((ffk_object *)snapshot);
  return rc;
}

void ffk_containers__register_converters(void) {
  ffk_type_set_converter(FFK_TYPE_ARRAY, convert_sequence);
  ffk_type_set_converter(FFK_TYPE_TUPLE, convert_sequence);
  ffk_type_set_converter(FFK_TYPE_LIST, convert_sequence);
  ffk_type_set_converter(FFK_TYPE_MAP, convert_mapping);
  ffk_type_set_converter(FFK_TYPE_DICT, convert_mapping);
}
