/*
 * structural_copy.c - deep copy (ffk_deep_copy, ffikit/structural.h): every List and Dict
 * reachable from a value is copied, immutable containers only when something below them
 * changed, and reflected objects made by reflection field by field; sharing and cycles
 * are kept through a memo from each source node to its copy. The memo holds a reference
 * to each source node it names, so that under concurrent writers a node dropped from the
 * source during the copy cannot be freed and its address reused by another node.
 *
 * Objects of types without reflection, and reflected objects their library allocated
 * itself (ffk_object_is_reflection_made false), are leaves: shared by the copy.
 */
#include "structural_internal.h"

#include <ffikit/enum.h>

#include <string.h>

/* ---- Deep copy. ----------------------------------------------------------------- */

/*
 * The memo maps each container already copied (its address, as an opaque-pointer key)
 * to its copy, so shared containers stay shared and cycles close. A List or Dict copy
 * enters the memo empty, before its elements are copied; an Array, Tuple or Map copy can
 * only be built from finished elements, so it enters after them, and a cycle through it
 * (possible only via a List or Dict) is closed by whichever copy was made first.
 */
typedef struct copier {
  ffk_table memo;
  int depth;
} copier;

static int copy(copier *c, const ffk_any *v, ffk_any *out);

static bool memo_get(copier *c, const ffk_object *o, ffk_any *out) {
  ffk_any key = ffk_any_ptr((void *)o);
  int64_t pos = ffk_table__find(&c->memo, &key, ffk_any_hash(&key));
  if (pos < 0) return false;
  *out = c->memo.entries[pos].value;
  ffk_any_retain(out);
  return true;
}

/*
 * Remembers o -> copy (both retained by the memo: a source node another thread drops
 * while the copy runs must not die and leave its address to a new node, which the memo
 * would take for it). 0, or -1 with a MemoryError.
 */
static int memo_put(copier *c, const ffk_object *o, const ffk_any *copy_value) {
  if (ffk_table__reserve(&c->memo, 1) != 0) return -1;
  ffk_any key = ffk_any_ptr((void *)o), value = *copy_value;
  ffk_object_retain((ffk_object *)o);
  ffk_any_retain(&value);
  ffk_table__append(&c->memo, ffk_any_hash(&key), key, value);
  return 0;
}

static int copy_list(copier *c, ffk_object *o, ffk_any *out) {
  seq_view s;
  if (seq_open(o, &s) != 0) return -1;
  ffk_list *l = ffk_list_with_capacity(s.size);
  int rc = l == NULL ? -1 : 0;
  if (rc == 0) {
    *out = ffk_any_object_steal((ffk_object *)l);
    rc = memo_put(c, o, out);
  }
  for (int64_t i = 0; rc == 0 && i < s.size; ++i) {
    ffk_any e;
    rc = copy(c, &s.data[i], &e);
    if (rc == 0) rc = ffk_list_append_steal(l, &e);
  }
  seq_close(&s);
  return rc;
}

static int copy_dict(copier *c, ffk_object *o, ffk_any *out) {
  map_view m;
  if (map_open(o, &m) != 0) return -1;
  ffk_dict *d = ffk_dict_new();
  int rc = d == NULL ? -1 : 0;
  if (rc == 0) {
    *out = ffk_any_object_steal((ffk_object *)d);
    rc = memo_put(c, o, out);
  }
  int64_t pos = 0;
  for (ffk_table_entry *e; rc == 0 && (e = ffk_table__next(m.table, &pos)) != NULL;) {
    ffk_any k = e->key, v = ffk_any_none();
    ffk_any_retain(&k); /* keys are kept: see copy_values */
    rc = copy(c, &e->value, &v);
    if (rc == 0) rc = ffk_dict_set(d, &k, &v);
    ffk_any_release(&k);
    ffk_any_release(&v);
  }
  map_close(&m);
  return rc;
}

/*
 * Array, Tuple or Map: copies the `n` values at `src` into `dst` first. When every copy
 * is the very same value (no mutable container below), the original is shared instead:
 * it can never change, so sharing it is indistinguishable from copying it.
 * `keys`: src holds a Map's keys and values interleaved. The keys (even positions) are
 * kept, not copied, here and in copy_dict: a container key compares by identity, so a
 * copy of it would be another key and the copy would not equal its source.
 */
static int copy_values(copier *c, const ffk_any *src, int64_t n, bool keys, ffk_any *dst, bool *same) {
  *same = true;
  for (int64_t i = 0; i < n; ++i) {
    if (keys && i % 2 == 0) {
      dst[i] = src[i];
      ffk_any_retain(&dst[i]);
      continue;
    }
    if (copy(c, &src[i], &dst[i]) != 0) {
      for (int64_t j = 0; j < i; ++j) ffk_any_release(&dst[j]);
      return -1;
    }
    *same = *same && memcmp(&src[i], &dst[i], sizeof(ffk_any)) == 0;
  }
  return 0;
}

static void release_values(ffk_any *v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ffk_any_release(&v[i]);
}

/* A new Map, Tuple or Array of type `t` from the copied values (released either way); NULL on error. */
static ffk_object *build(int32_t t, ffk_any *copies, int64_t n) {
  if (t == FFK_TYPE_ARRAY) {
    ffk_array *arr = ffk_array_new_steal(copies, n);
    return arr ? &arr->header : NULL;
  }
  ffk_object *made = NULL;
  if (t == FFK_TYPE_TUPLE) {
    ffk_tuple *tup = ffk_tuple_new(n, copies);
    made = tup ? &tup->header : NULL;
  } else {
    ffk_map *m = ffk_map_new();
    for (int64_t k = 0; m != NULL && k < n; k += 2) { /* keys and values interleaved */
      if (ffk_map_set(&m, &copies[k], &copies[k + 1]) != 0) {
        ffk_object_release(&m->header);
        m = NULL;
      }
    }
    made = m ? &m->header : NULL;
  }
  release_values(copies, n);
  return made;
}

static int copy_immutable(copier *c, ffk_object *o, ffk_any *out) {
  const ffk_array *a = (const ffk_array *)o;
  const ffk_map *m = (const ffk_map *)o;
  bool is_map = o->type_index == FFK_TYPE_MAP;
  int64_t n = is_map ? 2 * m->table.size : a->size;
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(ffk_any);
  /* The values to copy: the Array's own elements, or a Map's keys and values interleaved (borrowed). */
  ffk_any *gathered = is_map ? ffk_mem_alloc(bytes) : NULL;
  const ffk_any *src = is_map ? gathered : a->data;
  ffk_any *copies = ffk_mem_alloc(bytes);
  int rc = copies == NULL || (is_map && gathered == NULL) ? -1 : 0;
  if (rc == 0 && is_map) {
    int64_t pos = 0, k = 0;
    for (ffk_table_entry *e; (e = ffk_table__next(&m->table, &pos)) != NULL; k += 2) {
      gathered[k] = e->key;
      gathered[k + 1] = e->value;
    }
  }
  bool same = false;
  if (rc == 0) rc = copy_values(c, src, n, is_map, copies, &same);
  if (rc == 0 && memo_get(c, o, out)) { /* a cycle below made the copy already */
    release_values(copies, n);
  } else if (rc == 0) {
    ffk_object *made;
    if (same) {
      release_values(copies, n);
      ffk_object_retain(o);
      made = o;
    } else {
      made = build(o->type_index, copies, n);
    }
    rc = made == NULL ? -1 : 0;
    if (rc == 0) {
      *out = ffk_any_object_steal(made);
      rc = memo_put(c, o, out);
    }
  }
  ffk_mem_free(copies);
  ffk_mem_free(gathered);
  return rc;
}

/*
 * A reflected object: a shallow copy (same field values, retained), entered in the memo
 * before its fields are copied so that a cycle back to `o` closes on the copy, then each
 * object or Any field whose deep copy differs replaced through ffk_field_init. The copy
 * is always a new object, even when every field is read-only and nothing below changes:
 * like Python's deepcopy of user objects and tvm_ffi's, the copy is a distinct identity
 * (one a caller may then change by ffk_field_set). An object of a reflected type that
 * reflection did not make (ffk_object_is_reflection_made is false: its state is more
 * than its fields) is shared, as any other foreign object is.
 * The fields are read from the copy, so they are the values the shallow copy took
 * together even if another thread writes `o` meanwhile.
 */
static int copy_object(copier *c, ffk_object *o, ffk_any *out) {
  if (!ffk_object_is_reflection_made(o) || ffk_enum_is_member(o)) { /* an enum member: the singleton itself */
    ffk_object_retain(o);
    *out = ffk_any_object_steal(o);
    return memo_put(c, o, out);
  }
  ffk_object *dup = ffk_object_shallow_copy(o);
  if (dup == NULL) return -1;
  *out = ffk_any_object_steal(dup);
  if (memo_put(c, o, out) != 0) return -1;
  int32_t t = o->type_index;
  int32_t n = ffk_type_num_fields(t);
  int rc = n < 0 ? -1 : 0;
  for (int32_t i = 0; rc == 0 && i < n; ++i) {
    const ffk_field_info *f = ffk_type_field_at(t, i);
    if (f == NULL) return -1;
    if (f->storage != FFK_FIELD_STORAGE_OBJECT && f->storage != FFK_FIELD_STORAGE_ANY) continue;
    ffk_any value, copied;
    if (ffk_field_get(f, dup, &value) != 0) return -1;
    rc = copy(c, &value, &copied);
    if (rc == 0 && memcmp(&value, &copied, sizeof(ffk_any)) != 0) rc = ffk_field_init(f, dup, &copied);
    ffk_any_release(&copied);
    ffk_any_release(&value);
  }
  return rc;
}

static int copy(copier *c, const ffk_any *v, ffk_any *out) {
  *out = ffk_any_none();
  if (!is_node(v)) return ffk_any_to_owned(v, out);
  if (memo_get(c, v->v_obj, out)) return 0;
  if (c->depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ++c->depth;
  int rc;
  switch (v->type_index) {
    case FFK_TYPE_LIST: rc = copy_list(c, v->v_obj, out); break;
    case FFK_TYPE_DICT: rc = copy_dict(c, v->v_obj, out); break;
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_TUPLE:
    case FFK_TYPE_MAP: rc = copy_immutable(c, v->v_obj, out); break;
    default: rc = copy_object(c, v->v_obj, out); break;
  }
  --c->depth;
  if (rc != 0) {
    ffk_any_release(out);
    *out = ffk_any_none();
  }
  return rc;
}

/*
 * After a failed copy: the partial copies in the memo may already refer to one another
 * in a cycle (a List copy that holds itself, a reflected copy whose field leads back to
 * it), which releasing the memo would not free. Each is emptied first: a List or Dict
 * copy cleared, a reflected copy's object and Any fields set back to the source's values
 * (which lie outside the partial copy), so every partial copy dies with the memo. The
 * copy's error is kept; this is best effort (a field that cannot be set back keeps its
 * value), and touches only copies, never the source.
 */
static void unlink_partial(copier *c) {
  ffk_error *err = ffk_error_fetch();
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(&c->memo, &pos)) != NULL;) {
    ffk_object *src = (ffk_object *)e->key.v_ptr, *dup = e->value.v_obj;
    if (dup == src) continue; /* shared, not copied */
    if (dup->type_index == FFK_TYPE_LIST) {
      ffk_list_clear((ffk_list *)dup);
    } else if (dup->type_index == FFK_TYPE_DICT) {
      ffk_dict_clear((ffk_dict *)dup);
    } else if (ffk_type_is_reflected(dup->type_index)) {
      int32_t n = ffk_type_num_fields(dup->type_index);
      for (int32_t i = 0; i < n; ++i) {
        const ffk_field_info *f = ffk_type_field_at(dup->type_index, i);
        if (f == NULL || (f->storage != FFK_FIELD_STORAGE_OBJECT && f->storage != FFK_FIELD_STORAGE_ANY)) continue;
        ffk_any original;
        if (ffk_field_get(f, src, &original) == 0) ffk_field_init(f, dup, &original);
        ffk_any_release(&original);
      }
    }
  }
  ffk_error_clear();
  ffk_error_restore(err);
}

int ffk_deep_copy(const ffk_any *v, ffk_any *out) {
  copier c;
  ffk_table__init(&c.memo);
  c.depth = 0;
  int rc = copy(&c, v, out);
  if (rc != 0) unlink_partial(&c);
  int64_t pos = 0;
  for (ffk_table_entry *e; (e = ffk_table__next(&c.memo, &pos)) != NULL;) ffk_object_release(e->key.v_ptr);
  ffk_table__free(&c.memo);
  return rc;
}
