/*
 * tests/fuzz/containers_fuzzer.c - programs of container operations against a model.
 *
 * The input is a program over 8 registers, each empty or holding an Array, List, Map or
 * Dict together with its model: a plain C vector of values (keys and values for the
 * maps) that the harness keeps in the order the documented semantics say. Values are
 * ints, bools, floats, None, short and long strings, bytes, and the containers held in
 * registers, so programs build nested containers and, through List and Dict, cycles.
 * Registers may share one container (COW for Array/Map: a change through one handle
 * never shows through the other; List/Dict: both see it, so they share one model).
 *
 * Properties, checked after operations and at the end:
 *  - every operation succeeds, or fails with the documented error and leaves the
 *    container unchanged; contents and order always match the model (ffk_any_equal:
 *    identity for containers, content for strings, 1 / True / 1.0 distinct);
 *  - an iterator over a List/Dict reports a RuntimeError after the shape changed;
 *  - structural equality is reflexive and symmetric; a deep copy is structurally equal
 *    to its source, hashes alike and shares no List or Dict with it; repr is valid UTF-8;
 *  - once the harness has cleared every List and Dict (breaking cycles) and dropped its
 *    references, no object is alive.
 */
#include "fuzz_common.h"

#include <ffikit/array.h>
#include <ffikit/dict.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/repr.h>
#include <ffikit/string.h>
#include <ffikit/structural.h>

enum { NREG = 8, MAX_TRACKED = 4096 };
enum kind { EMPTY, ARRAY, LIST, MAP, DICT };

typedef struct model {
  int users; /* registers sharing it: a List/Dict aliased through two registers */
  int64_t n, cap;
  ffk_any *keys; /* the elements of a sequence; the keys of a map */
  ffk_any *vals; /* the values of a map */
} model;

typedef struct reg {
  enum kind kind;
  ffk_object *obj; /* owned */
  model *m;
} reg;

static reg regs[NREG];
/* Every List and Dict made, so that the end can clear them all and break cycles. */
static ffk_object *tracked[MAX_TRACKED];
static int ntracked;
static int64_t fresh_key;
/*
 * Containers stored into containers so far in this program. A structure like
 * a = (a_old, a_old) doubles its number of paths per level: structural equality and
 * hashing once walked every path (the fuzzer found a timeout; they now remember what
 * they finished), and repr still prints every path, as Python's does. The cap keeps
 * each program's output, and so its run time, small.
 */
enum { MAX_NESTINGS = 16 };
/* The most elements an extend or concatenation may produce. */
enum { MAX_ELEMENTS = 1024 };
static int nestings;

static const char *const kIndexError[] = {FFK_ERR_INDEX, NULL};
static const char *const kKeyError[] = {FFK_ERR_KEY, NULL};
static const char *const kValueError[] = {FFK_ERR_VALUE, NULL};
static const char *const kRuntimeError[] = {FFK_ERR_RUNTIME, NULL};

/* ---- the model ------------------------------------------------------------------------ */

static model *model_new(void) {
  model *m = calloc(1, sizeof *m);
  FUZZ_CHECK(m != NULL, "out of memory");
  m->users = 1;
  return m;
}

static void model_reserve(model *m, int64_t n) {
  if (n <= m->cap) return;
  int64_t cap = m->cap ? m->cap * 2 : 8;
  while (cap < n) cap *= 2;
  m->keys = realloc(m->keys, (size_t)cap * sizeof(ffk_any));
  m->vals = realloc(m->vals, (size_t)cap * sizeof(ffk_any));
  FUZZ_CHECK(m->keys != NULL && m->vals != NULL, "out of memory");
  m->cap = cap;
}

/* Inserts copies (retained) of k (and v, for maps) at position i. */
static void model_insert(model *m, int64_t i, const ffk_any *k, const ffk_any *v) {
  model_reserve(m, m->n + 1);
  memmove(m->keys + i + 1, m->keys + i, (size_t)(m->n - i) * sizeof(ffk_any));
  memmove(m->vals + i + 1, m->vals + i, (size_t)(m->n - i) * sizeof(ffk_any));
  m->keys[i] = *k;
  ffk_any_retain(k);
  m->vals[i] = v ? *v : ffk_any_none();
  if (v) ffk_any_retain(v);
  m->n++;
}

static void model_remove(model *m, int64_t i) {
  ffk_any k = m->keys[i], v = m->vals[i];
  memmove(m->keys + i, m->keys + i + 1, (size_t)(m->n - i - 1) * sizeof(ffk_any));
  memmove(m->vals + i, m->vals + i + 1, (size_t)(m->n - i - 1) * sizeof(ffk_any));
  m->n--;
  ffk_any_release(&k);
  ffk_any_release(&v);
}

static void model_set(ffk_any *slot, const ffk_any *v) {
  ffk_any old = *slot;
  *slot = *v;
  ffk_any_retain(v);
  ffk_any_release(&old);
}

static int64_t model_find(const model *m, const ffk_any *key) {
  for (int64_t i = 0; i < m->n; ++i)
    if (ffk_any_equal(&m->keys[i], key)) return i;
  return -1;
}

static model *model_copy(const model *m) {
  model *c = model_new();
  for (int64_t i = 0; i < m->n; ++i) model_insert(c, i, &m->keys[i], &m->vals[i]);
  return c;
}

static void model_drop(model *m) {
  if (m == NULL || --m->users > 0) return;
  while (m->n > 0) model_remove(m, m->n - 1);
  free(m->keys);
  free(m->vals);
  free(m);
}

/* ---- registers ------------------------------------------------------------------------ */

static void reg_clear(reg *r) {
  if (r->obj) ffk_object_release(r->obj);
  model_drop(r->m);
  r->obj = NULL;
  r->m = NULL;
  r->kind = EMPTY;
}

static void track(ffk_object *o) {
  if (ntracked < MAX_TRACKED) {
    ffk_object_retain(o);
    tracked[ntracked++] = o;
  }
}

static void reg_set(reg *r, enum kind kind, ffk_object *obj, model *m) {
  FUZZ_CHECK(obj != NULL, "making a container failed: %s",
             ffk_error_peek_borrow() ? ffk_error_message(ffk_error_peek_borrow()) : "");
  reg_clear(r);
  r->kind = kind;
  r->obj = obj;
  r->m = m;
  if (kind == LIST || kind == DICT) track(obj);
}

/* A value decoded from two bytes (owned by the caller). */
static ffk_any make_value(fuzz_reader *in) {
  uint8_t kind = fuzz_u8(in) % 8, p = fuzz_u8(in) % 8;
  ffk_any v = ffk_any_none();
  char text[64];
  switch (kind) {
    case 0: return ffk_any_int(p);
    case 1: return ffk_any_bool(p & 1);
    case 2: return ffk_any_float(p);
    case 3: snprintf(text, sizeof text, "k%d", p); ffk_any_cstr(text, &v); return v;
    case 4: snprintf(text, sizeof text, "a key long enough for the heap, number %d", p); ffk_any_cstr(text, &v); return v;
    case 5: return ffk_any_none();
    case 6: snprintf(text, sizeof text, "b%d", p); ffk_any_bytes(text, strlen(text), &v); return v;
    default:
      if (regs[p].obj == NULL || nestings >= MAX_NESTINGS) return ffk_any_none();
      ++nestings;
      return ffk_any_object(regs[p].obj);
  }
}

/* Checks a register's container against its model. */
static void check_reg(const reg *r) {
  const model *m = r->m;
  switch (r->kind) {
    case EMPTY: return;
    case ARRAY: {
      const ffk_array *a = (const ffk_array *)r->obj;
      FUZZ_CHECK(ffk_array_size(a) == m->n, "Array size %lld, model %lld", (long long)ffk_array_size(a), (long long)m->n);
      const ffk_any *items = ffk_array_items_borrow(a);
      for (int64_t i = 0; i < m->n; ++i) FUZZ_CHECK(ffk_any_equal(&items[i], &m->keys[i]), "Array element %lld", (long long)i);
      return;
    }
    case LIST: {
      ffk_list *l = (ffk_list *)r->obj;
      FUZZ_CHECK(ffk_list_size(l) == m->n, "List size %lld, model %lld", (long long)ffk_list_size(l), (long long)m->n);
      for (int64_t i = 0; i < m->n; ++i) {
        ffk_any v;
        FUZZ_CHECK(ffk_list_get(l, i, &v) == 0, "List get %lld", (long long)i);
        FUZZ_CHECK(ffk_any_equal(&v, &m->keys[i]), "List element %lld", (long long)i);
        ffk_any_release(&v);
      }
      return;
    }
    case MAP: {
      const ffk_map *mp = (const ffk_map *)r->obj;
      FUZZ_CHECK(ffk_map_size(mp) == m->n, "Map size %lld, model %lld", (long long)ffk_map_size(mp), (long long)m->n);
      int64_t pos = 0, i = 0;
      const ffk_any *k, *v;
      while (ffk_map_next(mp, &pos, &k, &v)) {
        FUZZ_CHECK(i < m->n && ffk_any_equal(k, &m->keys[i]) && ffk_any_equal(v, &m->vals[i]), "Map entry %lld", (long long)i);
        ++i;
      }
      FUZZ_CHECK(i == m->n, "Map iterated %lld entries, model %lld", (long long)i, (long long)m->n);
      return;
    }
    case DICT: {
      ffk_dict *d = (ffk_dict *)r->obj;
      FUZZ_CHECK(ffk_dict_size(d) == m->n, "Dict size %lld, model %lld", (long long)ffk_dict_size(d), (long long)m->n);
      ffk_dict_iter it;
      ffk_dict_iter_init(&it, d);
      ffk_any k, v;
      int64_t i = 0;
      int rc;
      while ((rc = ffk_dict_iter_next(&it, &k, &v)) == 1) {
        FUZZ_CHECK(i < m->n && ffk_any_equal(&k, &m->keys[i]) && ffk_any_equal(&v, &m->vals[i]), "Dict entry %lld", (long long)i);
        ffk_any_release(&k);
        ffk_any_release(&v);
        ++i;
      }
      FUZZ_CHECK(rc == 0 && i == m->n, "Dict iterated %lld entries (rc %d), model %lld", (long long)i, rc, (long long)m->n);
      return;
    }
  }
}

/* Python's slice rules: the indices a[start:stop:step] selects (step != 0). */
static int64_t slice_indices(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *out) {
  if (start < 0) start = start + n < 0 ? (step < 0 ? -1 : 0) : start + n;
  else if (start >= n) start = step < 0 ? n - 1 : n;
  if (stop < 0) stop = stop + n < 0 ? (step < 0 ? -1 : 0) : stop + n;
  else if (stop >= n) stop = step < 0 ? n - 1 : n;
  int64_t k = 0;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step) out[k++] = i;
  else
    for (int64_t i = start; i > stop; i += step) out[k++] = i;
  return k;
}

/* ---- structural checks ---------------------------------------------------------------- */

/*
 * Collects (retained) every container reachable from v through elements and values
 * that is not in seen[0..*n). Keys are not followed: a deep copy keeps the source's keys.
 */
static void collect_mutables(const ffk_any *v, ffk_object ***seen, int64_t *n, int64_t *cap) {
  if (v->type_index < FFK_TYPE_OBJECT_BEGIN) return;
  ffk_object *o = v->v_obj;
  int32_t t = o->type_index;
  if (t != FFK_TYPE_ARRAY && t != FFK_TYPE_TUPLE && t != FFK_TYPE_MAP && t != FFK_TYPE_LIST && t != FFK_TYPE_DICT) return;
  for (int64_t i = 0; i < *n; ++i)
    if ((*seen)[i] == o) return;
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    *seen = realloc(*seen, (size_t)*cap * sizeof(ffk_object *));
    FUZZ_CHECK(*seen != NULL, "out of memory");
  }
  ffk_object_retain(o);
  (*seen)[(*n)++] = o;
  ffk_array *items = NULL;
  if (t == FFK_TYPE_LIST) items = ffk_list_to_array((ffk_list *)o);
  else if (t == FFK_TYPE_DICT) items = ffk_dict_values((ffk_dict *)o);
  else if (t == FFK_TYPE_MAP) items = ffk_map_values((const ffk_map *)o);
  else ffk_object_retain(o), items = (ffk_array *)o;
  FUZZ_CHECK(items != NULL, "reading a container failed");
  for (int64_t i = 0; i < ffk_array_size(items); ++i) collect_mutables(&ffk_array_items_borrow(items)[i], seen, n, cap);
  ffk_object_release((ffk_object *)items);
}

/* Releases v after clearing every List and Dict it reaches, so that its cycles go too. */
static void release_breaking_cycles(ffk_any *v) {
  ffk_object **seen = NULL;
  int64_t n = 0, cap = 0;
  collect_mutables(v, &seen, &n, &cap);
  for (int64_t i = 0; i < n; ++i) {
    if (seen[i]->type_index == FFK_TYPE_LIST) ffk_list_clear((ffk_list *)seen[i]);
    if (seen[i]->type_index == FFK_TYPE_DICT) ffk_dict_clear((ffk_dict *)seen[i]);
  }
  for (int64_t i = 0; i < n; ++i) ffk_object_release(seen[i]);
  free(seen);
  ffk_any_release(v);
}

static ffk_string *repr_of(const ffk_any *v) {
  ffk_string *s = ffk_any_repr(v);
  FUZZ_CHECK(s != NULL, "repr failed");
  FUZZ_CHECK(ffk_utf8_valid_prefix(s->data, s->size) == s->size, "repr is not valid UTF-8");
  return s;
}

static void check_structural(const reg *a, const reg *b) {
  if (a->kind == EMPTY || b->kind == EMPTY) return;
  ffk_any x = ffk_any_object(a->obj), y = ffk_any_object(b->obj);
  int self = ffk_structural_equal(&x, &x);
  if (self < 0) {
    fuzz_expect_error("structural_equal", kRuntimeError); /* nested deeper than the limit */
  } else {
    FUZZ_CHECK(self == 1, "a container is not structurally equal to itself");
    int xy = ffk_structural_equal(&x, &y), yx = ffk_structural_equal(&y, &x);
    FUZZ_CHECK(xy == yx, "structural equality is not symmetric: %d, %d", xy, yx);
    if (xy < 0) fuzz_expect_error("structural_equal", kRuntimeError);
    if (a->obj == b->obj) FUZZ_CHECK(xy == 1, "a container is not equal to itself through another register");

    ffk_any c;
    if (ffk_deep_copy(&x, &c) != 0) {
      fuzz_expect_error("deep_copy", kRuntimeError);
    } else {
      FUZZ_CHECK(c.type_index == x.type_index, "deep copy changed the type");
      if (a->kind == LIST || a->kind == DICT) FUZZ_CHECK(c.v_obj != x.v_obj, "deep copy of a List/Dict is the same object");
      if (ffk_structural_equal(&x, &c) != 1 || ffk_structural_equal(&c, &x) != 1) {
        ffk_string *rx = repr_of(&x), *rc = repr_of(&c);
        FUZZ_CHECK(0, "deep copy %s is not equal to its source %s", rc->data, rx->data);
      }
      uint64_t hx, hc;
      FUZZ_CHECK(ffk_structural_hash(&x, &hx) == 0 && ffk_structural_hash(&c, &hc) == 0, "structural hash failed");
      FUZZ_CHECK(hx == hc, "deep copy hashes differently");
      /*
       * Both print (not necessarily alike: a key that reaches back to its own Dict prints
       * as "..." in the source, where it is on the stack, and in full in the copy).
       */
      ffk_string *rx = repr_of(&x), *rc = repr_of(&c);
      ffk_object_release((ffk_object *)rx);
      ffk_object_release((ffk_object *)rc);
      /*
       * The copy shares no List or Dict with the source: clearing all of its own (which
       * also breaks the cycles it copied) leaves the source as its model says.
       */
      release_breaking_cycles(&c);
      check_reg(a);
    }
  }
  ffk_any_release(&x);
  ffk_any_release(&y);
}

/* ---- operations ----------------------------------------------------------------------- */

static void op_add(reg *r, fuzz_reader *in) {
  ffk_any v = make_value(in);
  model *m = r->m;
  switch (r->kind) {
    case ARRAY: FUZZ_CHECK(ffk_array_push((ffk_array **)&r->obj, &v) == 0, "Array push"); model_insert(m, m->n, &v, NULL); break;
    case LIST: FUZZ_CHECK(ffk_list_append((ffk_list *)r->obj, &v) == 0, "List append"); model_insert(m, m->n, &v, NULL); break;
    case MAP:
    case DICT: {
      ffk_any val = make_value(in);
      int rc = r->kind == MAP ? ffk_map_set((ffk_map **)&r->obj, &v, &val) : ffk_dict_set((ffk_dict *)r->obj, &v, &val);
      FUZZ_CHECK(rc == 0, "set");
      int64_t i = model_find(m, &v);
      if (i >= 0) model_set(&m->vals[i], &val);
      else model_insert(m, m->n, &v, &val);
      ffk_any_release(&val);
      break;
    }
    case EMPTY: break;
  }
  ffk_any_release(&v);
}

static void op_set(reg *r, fuzz_reader *in) {
  if (r->kind != ARRAY && r->kind != LIST) {
    op_add(r, in);
    return;
  }
  int64_t i = (int8_t)fuzz_u8(in) % 12;
  ffk_any v = make_value(in);
  int64_t n = r->m->n, at = i < 0 ? i + n : i;
  int rc = r->kind == ARRAY ? ffk_array_set((ffk_array **)&r->obj, i, &v) : ffk_list_set((ffk_list *)r->obj, i, &v);
  if (at >= 0 && at < n) {
    FUZZ_CHECK(rc == 0, "set [%lld] of %lld", (long long)i, (long long)n);
    model_set(&r->m->keys[at], &v);
  } else {
    FUZZ_CHECK(rc == -1, "set [%lld] of %lld succeeded", (long long)i, (long long)n);
    fuzz_expect_error("set", kIndexError);
  }
  ffk_any_release(&v);
}

static void op_insert(reg *r, fuzz_reader *in) {
  if (r->kind == MAP || r->kind == DICT) { /* erase a key */
    ffk_any k = make_value(in);
    int64_t i = model_find(r->m, &k);
    int rc = r->kind == MAP ? ffk_map_erase((ffk_map **)&r->obj, &k) : ffk_dict_erase((ffk_dict *)r->obj, &k);
    FUZZ_CHECK(rc == (i >= 0), "erase of a %s key: %d", i >= 0 ? "present" : "missing", rc);
    if (i >= 0) model_remove(r->m, i);
    ffk_any_release(&k);
    return;
  }
  if (r->kind == EMPTY) return;
  int64_t i = (int8_t)fuzz_u8(in) % 12;
  ffk_any v = make_value(in);
  int64_t n = r->m->n, at = i < 0 ? (i + n < 0 ? 0 : i + n) : (i > n ? n : i);
  int rc = r->kind == ARRAY ? ffk_array_insert((ffk_array **)&r->obj, i, &v) : ffk_list_insert((ffk_list *)r->obj, i, &v);
  FUZZ_CHECK(rc == 0, "insert at %lld of %lld", (long long)i, (long long)n);
  model_insert(r->m, at, &v, NULL);
  ffk_any_release(&v);
}

static void op_pop(reg *r, fuzz_reader *in) {
  if (r->kind == MAP || r->kind == DICT) {
    ffk_any k = make_value(in), out = ffk_any_none();
    int64_t i = model_find(r->m, &k);
    int rc = r->kind == MAP ? ffk_map_get((const ffk_map *)r->obj, &k, &out) : ffk_dict_pop((ffk_dict *)r->obj, &k, &out);
    int found = r->kind == MAP ? 1 : 0, missing = r->kind == MAP ? 0 : -1; /* Map get, Dict pop */
    if (i >= 0) {
      FUZZ_CHECK(rc == found && ffk_any_equal(&out, &r->m->vals[i]), "get/pop of a present key: %d", rc);
      if (r->kind == DICT) model_remove(r->m, i);
    } else {
      FUZZ_CHECK(rc == missing && out.type_index == FFK_TYPE_NONE, "get/pop of a missing key: %d", rc);
      if (rc < 0) fuzz_expect_error("pop", kKeyError);
    }
    ffk_any_release(&out);
    ffk_any_release(&k);
    return;
  }
  if (r->kind == EMPTY) return;
  int64_t i = (int8_t)fuzz_u8(in) % 12;
  int64_t n = r->m->n, at = i < 0 ? i + n : i;
  ffk_any out = ffk_any_none();
  int rc = r->kind == ARRAY ? ffk_array_pop((ffk_array **)&r->obj, i, &out) : ffk_list_pop((ffk_list *)r->obj, i, &out);
  if (at >= 0 && at < n) {
    FUZZ_CHECK(rc == 0 && ffk_any_equal(&out, &r->m->keys[at]), "pop [%lld] of %lld", (long long)i, (long long)n);
    model_remove(r->m, at);
  } else {
    FUZZ_CHECK(rc == -1 && out.type_index == FFK_TYPE_NONE, "pop [%lld] of %lld succeeded", (long long)i, (long long)n);
    fuzz_expect_error("pop", kIndexError);
  }
  ffk_any_release(&out);
}

static void op_erase(reg *r, fuzz_reader *in) {
  int64_t b = fuzz_u8(in) % 10, e = fuzz_u8(in) % 10, n = r->m ? r->m->n : 0;
  int rc;
  switch (r->kind) {
    case ARRAY:
    case LIST:
      rc = r->kind == ARRAY ? ffk_array_erase((ffk_array **)&r->obj, b, e) : ffk_list_erase((ffk_list *)r->obj, b, e);
      if (b <= e && e <= n) {
        FUZZ_CHECK(rc == 0, "erase [%lld, %lld) of %lld", (long long)b, (long long)e, (long long)n);
        for (int64_t i = e - 1; i >= b; --i) model_remove(r->m, i);
      } else {
        FUZZ_CHECK(rc == -1, "erase [%lld, %lld) of %lld succeeded", (long long)b, (long long)e, (long long)n);
        fuzz_expect_error("erase", kIndexError);
      }
      return;
    case DICT:
      FUZZ_CHECK(ffk_dict_clear((ffk_dict *)r->obj) == 0, "Dict clear");
      while (r->m->n > 0) model_remove(r->m, r->m->n - 1);
      return;
    default: return;
  }
}

static void op_share(reg *dst, const reg *src) {
  if (src->kind == EMPTY || dst == src) return;
  ffk_object_retain(src->obj);
  model *m;
  if (src->kind == LIST || src->kind == DICT) {
    m = src->m;
    m->users++;
  } else {
    m = model_copy(src->m);
  }
  ffk_object *obj = src->obj;
  enum kind kind = src->kind;
  reg_clear(dst);
  dst->kind = kind, dst->obj = obj, dst->m = m;
}

static void op_iterate(reg *r) {
  if (r->kind == LIST) {
    ffk_list *l = (ffk_list *)r->obj;
    ffk_list_iter it;
    ffk_list_iter_init(&it, l);
    ffk_any v = ffk_any_none();
    int rc = ffk_list_iter_next(&it, &v);
    FUZZ_CHECK(rc == (r->m->n > 0 ? 1 : 0), "first step: %d", rc);
    ffk_any_release(&v);
    ffk_any x = ffk_any_int(fresh_key++);
    FUZZ_CHECK(ffk_list_append(l, &x) == 0, "append");
    model_insert(r->m, r->m->n, &x, NULL);
    FUZZ_CHECK(ffk_list_iter_next(&it, &v) == -1, "the iterator missed an append");
    fuzz_expect_error("iterate", kRuntimeError);
  } else if (r->kind == DICT) {
    ffk_dict *d = (ffk_dict *)r->obj;
    ffk_dict_iter it;
    ffk_dict_iter_init(&it, d);
    int rc = ffk_dict_iter_next(&it, NULL, NULL);
    FUZZ_CHECK(rc == (r->m->n > 0 ? 1 : 0), "first step: %d", rc);
    ffk_any k = ffk_any_int(1000000 + fresh_key++), v = ffk_any_none();
    FUZZ_CHECK(ffk_dict_set(d, &k, &v) == 0, "set");
    model_insert(r->m, r->m->n, &k, &v);
    FUZZ_CHECK(ffk_dict_iter_next(&it, NULL, NULL) == -1, "the iterator missed a new key");
    fuzz_expect_error("iterate", kRuntimeError);
  }
}

static void op_slice(reg *dst, const reg *src, fuzz_reader *in) {
  if (src->kind != ARRAY && src->kind != LIST) return;
  int64_t start = (int8_t)fuzz_u8(in) % 12, stop = (int8_t)fuzz_u8(in) % 12, step = (int8_t)fuzz_u8(in) % 4;
  ffk_array *a = src->kind == ARRAY ? ffk_array_slice((const ffk_array *)src->obj, start, stop, step)
                                    : ffk_list_slice((ffk_list *)src->obj, start, stop, step);
  if (step == 0) {
    FUZZ_CHECK(a == NULL, "a slice with step 0");
    fuzz_expect_error("slice", kValueError);
    return;
  }
  model *m = model_new();
  int64_t idx[64];
  int64_t *ix = src->m->n <= 64 ? idx : malloc((size_t)src->m->n * sizeof(int64_t));
  FUZZ_CHECK(ix != NULL, "out of memory");
  int64_t k = slice_indices(src->m->n, start, stop, step, ix);
  for (int64_t i = 0; i < k; ++i) model_insert(m, i, &src->m->keys[ix[i]], NULL);
  if (ix != idx) free(ix);
  reg_set(dst, ARRAY, (ffk_object *)a, m);
}

static void op_convert(reg *dst, const reg *src) {
  switch (src->kind) {
    case ARRAY: reg_set(dst, LIST, (ffk_object *)ffk_list_from_array((const ffk_array *)src->obj), model_copy(src->m)); return;
    case LIST: reg_set(dst, ARRAY, (ffk_object *)ffk_list_to_array((ffk_list *)src->obj), model_copy(src->m)); return;
    case MAP: reg_set(dst, DICT, (ffk_object *)ffk_dict_from_map((const ffk_map *)src->obj), model_copy(src->m)); return;
    case DICT: reg_set(dst, MAP, (ffk_object *)ffk_dict_to_map((ffk_dict *)src->obj), model_copy(src->m)); return;
    case EMPTY: return;
  }
}

static void op_misc(reg *r, fuzz_reader *in) {
  uint8_t n = fuzz_u8(in) % 10;
  switch (r->kind) {
    case ARRAY: { /* resize: new elements are None */
      FUZZ_CHECK(ffk_array_resize((ffk_array **)&r->obj, n) == 0, "resize");
      ffk_any none = ffk_any_none();
      while (r->m->n > n) model_remove(r->m, r->m->n - 1);
      while (r->m->n < n) model_insert(r->m, r->m->n, &none, NULL);
      return;
    }
    case LIST: { /* reverse */
      FUZZ_CHECK(ffk_list_reverse((ffk_list *)r->obj) == 0, "reverse");
      for (int64_t i = 0, j = r->m->n - 1; i < j; ++i, --j) {
        ffk_any t = r->m->keys[i];
        r->m->keys[i] = r->m->keys[j];
        r->m->keys[j] = t;
      }
      return;
    }
    case DICT: { /* setdefault */
      ffk_any k = make_value(in), d = make_value(in), out;
      int64_t i = model_find(r->m, &k);
      int rc = ffk_dict_setdefault((ffk_dict *)r->obj, &k, &d, &out);
      FUZZ_CHECK(rc == (i >= 0), "setdefault of a %s key: %d", i >= 0 ? "present" : "missing", rc);
      FUZZ_CHECK(ffk_any_equal(&out, i >= 0 ? &r->m->vals[i] : &d), "setdefault returned another value");
      if (i < 0) model_insert(r->m, r->m->n, &k, &d);
      ffk_any_release(&out);
      ffk_any_release(&k);
      ffk_any_release(&d);
      return;
    }
    default: return;
  }
}

static void op_extend(reg *dst, const reg *src) {
  if (src->kind != ARRAY && src->kind != LIST) return;
  /* A List extended with itself doubles: a few dozen steps would exhaust memory. */
  if (dst->kind != EMPTY && dst->m->n + src->m->n > MAX_ELEMENTS) return;
  if (dst->kind == LIST) {
    FUZZ_CHECK(ffk_list_extend_from((ffk_list *)dst->obj, src->obj) == 0, "extend_from");
    model *from = src->m == dst->m ? model_copy(src->m) : src->m; /* a List extended with itself */
    for (int64_t i = 0; i < from->n; ++i) model_insert(dst->m, dst->m->n, &from->keys[i], NULL);
    if (from != src->m) model_drop(from);
  } else if (dst->kind == ARRAY && src->kind == ARRAY) {
    ffk_array *c = ffk_array_concat((const ffk_array *)dst->obj, (const ffk_array *)src->obj);
    model *m = model_copy(dst->m);
    for (int64_t i = 0; i < src->m->n; ++i) model_insert(m, m->n, &src->m->keys[i], NULL);
    reg_set(dst, ARRAY, (ffk_object *)c, m);
  } else if ((dst->kind == MAP || dst->kind == DICT) && (src->kind == MAP || src->kind == DICT)) {
    /* unreachable: src is a sequence here */
  }
}

static void op_update(reg *dst, const reg *src) {
  if ((dst->kind != MAP && dst->kind != DICT) || (src->kind != MAP && src->kind != DICT)) return;
  if (dst->kind == MAP && src->kind != MAP) return;
  int rc = dst->kind == MAP ? ffk_map_merge((ffk_map **)&dst->obj, (const ffk_map *)src->obj)
                            : ffk_dict_update((ffk_dict *)dst->obj, src->obj);
  FUZZ_CHECK(rc == 0, "update/merge");
  model *from = src->m == dst->m ? model_copy(src->m) : src->m;
  for (int64_t i = 0; i < from->n; ++i) {
    int64_t at = model_find(dst->m, &from->keys[i]);
    if (at >= 0) model_set(&dst->m->vals[at], &from->vals[i]);
    else model_insert(dst->m, dst->m->n, &from->keys[i], &from->vals[i]);
  }
  if (from != src->m) model_drop(from);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live_before = ffk_debug_live_objects(-1);
  fuzz_reader in = fuzz_reader_make(data, size);
  fresh_key = 100;
  nestings = 0;
  int steps = 0;
  while (fuzz_left(&in) > 0 && steps++ < 2000) {
    uint8_t op = fuzz_u8(&in);
    reg *r = &regs[fuzz_u8(&in) % NREG];
    switch (op % 14) {
      case 0: {
        switch (fuzz_u8(&in) % 4) {
          case 0: reg_set(r, ARRAY, (ffk_object *)ffk_array_new(NULL, 0), model_new()); break;
          case 1: reg_set(r, LIST, (ffk_object *)ffk_list_new(), model_new()); break;
          case 2: reg_set(r, MAP, (ffk_object *)ffk_map_new(), model_new()); break;
          default: reg_set(r, DICT, (ffk_object *)ffk_dict_new(), model_new()); break;
        }
        break;
      }
      case 1: op_add(r, &in); break;
      case 2: op_set(r, &in); break;
      case 3: op_insert(r, &in); break;
      case 4: op_pop(r, &in); break;
      case 5: op_erase(r, &in); break;
      case 6: op_share(&regs[fuzz_u8(&in) % NREG], r); break;
      case 7: check_reg(r); break;
      case 8: check_structural(r, &regs[fuzz_u8(&in) % NREG]); break;
      case 9: op_iterate(r); break;
      case 10: op_slice(&regs[fuzz_u8(&in) % NREG], r, &in); break;
      case 11: op_convert(&regs[fuzz_u8(&in) % NREG], r); break;
      case 12: op_misc(r, &in); break;
      default: {
        reg *src = &regs[fuzz_u8(&in) % NREG];
        if (op & 0x80) op_update(r, src);
        else op_extend(r, src);
        break;
      }
    }
    fuzz_expect_no_error("an operation");
  }
  for (int i = 0; i < NREG; ++i) check_reg(&regs[i]);
  for (int i = 0; i < NREG; ++i) check_structural(&regs[i], &regs[(i + 1) % NREG]);

  /* Break every cycle, then drop every reference. */
  for (int i = 0; i < ntracked; ++i) {
    if (tracked[i]->type_index == FFK_TYPE_LIST) ffk_list_clear((ffk_list *)tracked[i]);
    else ffk_dict_clear((ffk_dict *)tracked[i]);
  }
  for (int i = 0; i < NREG; ++i) reg_clear(&regs[i]);
  for (int i = 0; i < ntracked; ++i) ffk_object_release(tracked[i]);
  ntracked = 0;
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
