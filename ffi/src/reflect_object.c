/*
 * reflect_object.c - objects of reflected types: construction (from defaults, from
 * positional and named values, or by a supplied constructor), field reads and writes,
 * method calls, shallow copies and field-wise encoding (ffikit/reflect.h). Converting a
 * value to a field's type is reflect_convert.c (the type registry uses it for defaults too).
 *
 * Invariants:
 *  - A field holds a value already converted to its type, in its storage: int64_t,
 *    double, bool, an owning ffk_object * (NULL only for an Optional type, or before a
 *    supplied constructor fills it) or an owning ffk_any.
 *  - POD fields are read and written with atomic word accesses. Writable object fields
 *    are lock-free (the epoch scheme of epoch.h): a writer retains the new value,
 *    swaps the slot with a seq_cst exchange and retires the old pointer, whose
 *    reference is dropped once no read section that could have loaded it is open; a
 *    reader loads the slot seq_cst inside a read section and either retains the value
 *    (ffk_field_get) or borrows it until its section ends (ffk_field_peek). The retire
 *    record is allocated before the swap, so a MemoryError leaves the field unchanged;
 *    a slot that holds NULL (a fresh object, None) is filled by a CAS and retires
 *    nothing. Writable ffk_any fields (two words) are read and swapped under a striped
 *    spin lock chosen by the field's address; readers retain under the lock, writers
 *    release the old value after unlocking, so no lock is held while a deleter runs.
 *    Read-only fields change only while their object is private to its constructor and
 *    are read without a lock.
 *  - An object under construction carries `unfinished_deleter`, which releases the
 *    fields but runs no finalize hook; the finished object gets `reflect_deleter`,
 *    which runs the finalize hooks (most derived first) and then releases the fields.
 */
#include "epoch.h"
#include "reflect_internal.h"

#include <ffikit/unstable/reflect.h>

#include <stdio.h>
#include <string.h>

/* ---- The striped lock ------------------------------------------------------------------- */

#define NSTRIPES 128

static struct {
  int locked;
  char pad[60]; /* one stripe per cache line */
} g_stripes[NSTRIPES];

static inline int *stripe_for(const void *addr) {
  uintptr_t a = (uintptr_t)addr;
  return &g_stripes[((a >> 3) ^ (a >> 10)) & (NSTRIPES - 1)].locked;
}

static inline void stripe_lock(int *l) {
  while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
}

static inline void stripe_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* ---- Field slots ------------------------------------------------------------------------ */

static inline char *slot_at(const ffk_object *obj, const ffk_field_info *f) { return (char *)obj + f->offset; }

/* Releases what a field owns (the object is dying: no other thread can read it). */
static void release_slot(ffk_object *obj, const ffk_field_info *f) {
  char *p = slot_at(obj, f);
  if (f->storage == FFK_FIELD_STORAGE_OBJECT) {
    ffk_object *o = *(ffk_object **)p;
    *(ffk_object **)p = NULL;
    ffk_object_release(o);
  } else if (f->storage == FFK_FIELD_STORAGE_ANY) {
    ffk_any_release((ffk_any *)p);
  }
}

static void release_fields(ffk_object *obj) {
  const ffk_rtype *rt = ffk_reflect__type(obj->type_index);
  if (rt == NULL || rt->object_fields == 0) return;
  for (int32_t i = 0; i < rt->nfields; ++i) release_slot(obj, rt->fields[i]);
}

static void unfinished_deleter(void *self, int which) {
  if (which & FFK_DELETER_DESTROY) release_fields(self);
  if (which & FFK_DELETER_FREE) ffk_object_free(self);
}

static void reflect_deleter(void *self, int which) {
  ffk_object *obj = self;
  if (which & FFK_DELETER_DESTROY) {
    for (const ffk_rtype *r = ffk_reflect__type(obj->type_index); r != NULL; r = r->base)
      if (r->finalize != NULL) r->finalize(obj);
    release_fields(obj);
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(obj);
}

/* ---- Lock-free object fields ---------------------------------------------------------------- */

/* An old field value waiting for the read sections that may still borrow it to end. */
typedef struct retired_value {
  ffk_epoch__retired item; /* first */
  ffk_object *value;       /* the field's former reference */
} retired_value;

static void reclaim_value(ffk_epoch__retired *item) {
  retired_value *r = (retired_value *)item;
  ffk_object_release(r->value);
  ffk_mem_free(r);
}

/*
 * Writes `nv` (owned, may be NULL) into the writable object slot `p`, taking it over.
 * 0, or -1 with a MemoryError and the slot unchanged (nv is then still the caller's).
 */
static int exchange_object_slot(ffk_object **p, ffk_object *nv) {
  ffk_object *expected = NULL;
  if (__atomic_load_n(p, __ATOMIC_SEQ_CST) == NULL &&
      __atomic_compare_exchange_n(p, &expected, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return 0; /* nothing to retire */
  retired_value *r = ffk_mem_alloc(sizeof *r);
  if (r == NULL) return -1;
  ffk_object *old = __atomic_exchange_n(p, nv, __ATOMIC_SEQ_CST);
  if (old == NULL) {
    ffk_mem_free(r);
    return 0;
  }
  r->value = old;
  ffk_epoch__retire(&r->item, reclaim_value);
  return 0;
}

/* The value of a writable object slot, for a thread inside a read section (borrowed). */
static inline ffk_object *peek_object_slot(const char *p) {
  return __atomic_load_n((ffk_object *const *)p, __ATOMIC_SEQ_CST);
}

/*
 * Stores an owned value (as ffk_reflect__convert makes it) into a field, taking it over.
 * `locked` (writable) object fields swap lock-free and retire the old value, ffk_any ones
 * swap under the stripe and release the old value after unlocking. 0, or -1 with a
 * MemoryError (locked object fields only), *v then still owned by the caller and the
 * field unchanged.
 */
static int store_slot(ffk_object *obj, const ffk_field_info *f, ffk_any *v, bool locked) {
  char *p = slot_at(obj, f);
  switch (f->storage) {
    case FFK_FIELD_STORAGE_INT:
      __atomic_store_n((int64_t *)p, v->v_int, __ATOMIC_RELAXED);
      return 0;
    case FFK_FIELD_STORAGE_FLOAT: {
      double d = v->v_float;
      __atomic_store((double *)p, &d, __ATOMIC_RELAXED);
      return 0;
    }
    case FFK_FIELD_STORAGE_BOOL:
      __atomic_store_n((bool *)p, v->v_int != 0, __ATOMIC_RELAXED);
      return 0;
    case FFK_FIELD_STORAGE_OBJECT: {
      ffk_object *nv = ffk_any_is_object(v) ? v->v_obj : NULL;
      if (locked) {
        if (exchange_object_slot((ffk_object **)p, nv) != 0) return -1;
      } else {
        ffk_object *old = *(ffk_object **)p;
        *(ffk_object **)p = nv;
        ffk_object_release(old);
      }
      *v = ffk_any_none();
      return 0;
    }
    default: {
      ffk_any old;
      if (locked) {
        int *l = stripe_for(p);
        stripe_lock(l);
        ffk_any__copy(&old, (ffk_any *)p);
        ffk_any__copy((ffk_any *)p, v);
        stripe_unlock(l);
      } else {
        ffk_any__copy(&old, (ffk_any *)p);
        ffk_any__copy((ffk_any *)p, v);
      }
      ffk_any_release(&old);
      *v = ffk_any_none();
      return 0;
    }
  }
}

/* Reads a field into *out (a new reference). 0, or -1 with *out None and a MemoryError
 * (a writable object field read by a thread whose first read section cannot begin). */
static int load_slot(const ffk_object *obj, const ffk_field_info *f, ffk_any *out) {
  const char *p = slot_at(obj, f);
  bool locked = (f->flags & FFK_FIELD_WRITABLE) != 0;
  switch (f->storage) {
    case FFK_FIELD_STORAGE_INT:
    case FFK_FIELD_STORAGE_FLOAT:
    case FFK_FIELD_STORAGE_BOOL:
      return ffk_field_peek_unchecked(f, obj, out); /* atomic words: by value, no section needed */
    case FFK_FIELD_STORAGE_OBJECT: {
      if (locked) {
        ffk_epoch__reader *r = ffk_epoch__enter();
        if (FFK_UNLIKELY(r == NULL)) {
          *out = ffk_any_none();
          return -1;
        }
        ffk_object *o = peek_object_slot(p);
        if (o != NULL) ffk_object_retain(o);
        ffk_epoch__exit(r);
        *out = ffk_any_object_steal(o);
      } else {
        *out = ffk_any_object(*(ffk_object *const *)p);
      }
      return 0;
    }
    default:
      if (locked) {
        int *l = stripe_for(p);
        stripe_lock(l);
        ffk_any__copy(out, (const ffk_any *)p);
        ffk_any_retain(out);
        stripe_unlock(l);
      } else {
        ffk_any__copy(out, (const ffk_any *)p);
        ffk_any_retain(out);
      }
      return 0;
  }
}

/* ---- Construction ---------------------------------------------------------------------------- */


/* Fills a field that got no value: its default, a factory's result, or nothing (zero/None). */
static int fill_default(ffk_object *obj, const ffk_rtype *rt, const ffk_field_info *f) {
  if (!(f->flags & FFK_FIELD_HAS_DEFAULT)) return 0;
  ffk_any v = ffk_any_none();
  if (f->flags & FFK_FIELD_DEFAULT_FACTORY) {
    ffk_any made = ffk_any_none();
    if (ffk_function_call((ffk_function *)f->default_value.v_obj, NULL, 0, &made) != 0) return -1;
    int rc = ffk_reflect__convert(f, ffk_type_key(rt->index), &made, &v);
    ffk_any_release(&made);
    if (rc != 0) return -1;
  } else if (f->flags & FFK_FIELD_DEFAULT_UNCHECKED) { /* refused now, with the conversion's error */
    if (ffk_reflect__convert(f, ffk_type_key(rt->index), &f->default_value, &v) != 0) return -1;
  } else {
    ffk_any__copy(&v, &f->default_value);
    ffk_any_retain(&v);
  }
  (void)store_slot(obj, f, &v, false); /* unlocked: cannot fail */
  return 0;
}

/* A zeroed object of the type, with the deleter that runs no finalize hook. */
static ffk_object *alloc_unfinished(const ffk_rtype *rt) {
  return ffk_object_alloc(rt->index, rt->instance_size, unfinished_deleter);
}

ffk_object *ffk_object_new_reflected(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt == NULL) {
    ffk_type_check_reflected(type_index);
    return NULL;
  }
  ffk_object *obj = alloc_unfinished(rt);
  if (obj == NULL) return NULL;
  for (int32_t i = 0; i < rt->nfields; ++i) {
    if (fill_default(obj, rt, rt->fields[i]) != 0) {
      ffk_object_release(obj);
      return NULL;
    }
  }
  obj->deleter = reflect_deleter;
  return obj;
}

/* Whether field f is a positional constructor parameter / a named one. */
static inline bool is_positional(const ffk_field_info *f) {
  return !(f->flags & (FFK_FIELD_INIT_OFF | FFK_FIELD_KW_ONLY));
}

static int create_from_fields(const ffk_rtype *rt, const ffk_any *args, int32_t npos, const char *const *kwnames,
                              int32_t nkw, ffk_object **out) {
  const char *key = ffk_type_key(rt->index);
  enum { LOCAL = 16 };
  const ffk_any *local[LOCAL];
  const ffk_any **bound = local;
  if (rt->nfields > LOCAL) {
    bound = ffk_mem_alloc((size_t)rt->nfields * sizeof *bound);
    if (bound == NULL) return -1;
  }
  int rc = -1;
  ffk_object *obj = NULL;
  for (int32_t i = 0; i < rt->nfields; ++i) bound[i] = NULL;
  /* The positional parameters: the required fields, then those with a default, each in
     field order (tvm_ffi's order, so a required field may follow a defaulted one). */
  int32_t nparams = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int32_t i = 0; i < rt->nfields; ++i) {
      const ffk_field_info *f = rt->fields[i];
      if (!is_positional(f) || ((f->flags & FFK_FIELD_HAS_DEFAULT) != 0) != (pass == 1)) continue;
      if (nparams < npos) bound[i] = &args[nparams];
      ++nparams;
    }
  if (npos > nparams) {
    ffk_error_set(FFK_ERR_TYPE, "%s.__init__() takes %d positional argument%s but %d %s given", key, (int)nparams,
                  nparams == 1 ? "" : "s", (int)npos, npos == 1 ? "was" : "were");
    goto done;
  }
  for (int32_t j = 0; j < nkw; ++j) {
    const char *name = kwnames[j];
    int32_t at = -1;
    for (int32_t i = 0; i < rt->nfields && at < 0; ++i)
      if (!(rt->fields[i]->flags & FFK_FIELD_INIT_OFF) && strcmp(rt->fields[i]->name, name) == 0) at = i;
    if (at < 0) {
      ffk_error_set(FFK_ERR_TYPE, "%s.__init__() got an unexpected keyword argument `%s`", key, name);
      goto done;
    }
    if (bound[at] != NULL) {
      ffk_error_set(FFK_ERR_TYPE, "%s.__init__() got multiple values for argument `%s`", key, name);
      goto done;
    }
    bound[at] = &args[npos + j];
  }
  for (int32_t i = 0; i < rt->nfields; ++i) {
    const ffk_field_info *f = rt->fields[i];
    if (bound[i] == NULL && !(f->flags & (FFK_FIELD_HAS_DEFAULT | FFK_FIELD_INIT_OFF))) {
      ffk_error_set(FFK_ERR_TYPE, "%s.__init__() missing required argument: `%s`", key, f->name);
      goto done;
    }
  }
  if ((obj = alloc_unfinished(rt)) == NULL) goto done;
  for (int32_t i = 0; i < rt->nfields; ++i) {
    const ffk_field_info *f = rt->fields[i];
    if (bound[i] == NULL) {
      if (fill_default(obj, rt, f) != 0) goto done;
      continue;
    }
    ffk_any v;
    if (ffk_reflect__convert(f, key, bound[i], &v) != 0) goto done;
    (void)store_slot(obj, f, &v, false); /* unlocked: cannot fail */
  }
  obj->deleter = reflect_deleter;
  *out = obj;
  obj = NULL;
  rc = 0;
done:
  ffk_object_release(obj);
  if (bound != local) ffk_mem_free(bound);
  return rc;
}

int ffk_object_create(int32_t type_index, const ffk_any *args, int32_t npos, const char *const *kwnames,
                      int32_t nkw, ffk_object **out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_object_create: out is NULL");
  *out = NULL;
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt == NULL) return ffk_type_check_reflected(type_index);
  if (npos < 0 || nkw < 0 || npos > INT32_MAX - nkw || (args == NULL && npos + nkw > 0) ||
      (kwnames == NULL && nkw > 0))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_object_create: %d positional and %d named values at %p (names at %p) for `%s`",
                         (int)npos, (int)nkw, (const void *)args, (const void *)kwnames, ffk_type_key(type_index));
  for (int32_t j = 0; j < nkw; ++j)
    if (kwnames[j] == NULL)
      return ffk_error_set(FFK_ERR_VALUE, "ffk_object_create: the name of value #%d is NULL for `%s`", (int)j,
                           ffk_type_key(type_index));
  if (rt->constructor == NULL) return create_from_fields(rt, args, npos, kwnames, nkw, out);
  ffk_any result;
  if (ffk_function_call_kw(rt->constructor, args, npos, kwnames, nkw, &result) != 0) return -1;
  if (!ffk_any_is_object(&result) || !ffk_type_is_instance(result.type_index, type_index)) {
    ffk_error_set(FFK_ERR_TYPE, "%s.__init__() returned a `%s`, not a `%s`", ffk_type_key(type_index),
                  ffk_any_type_name(&result), ffk_type_key(type_index));
    ffk_any_release(&result);
    return -1;
  }
  *out = result.v_obj;
  return 0;
}

/* ---- Fields ------------------------------------------------------------------------------- */

static FFK_NOINLINE int not_instance(const ffk_field_info *f, const ffk_object *obj) {
  return ffk_error_set(FFK_ERR_TYPE, "field `%s` belongs to `%s`, not to a `%s`", f->name, ffk_type_key(f->owner_index),
                       obj != NULL ? ffk_type_name(obj->type_index) : "None");
}

int ffk_field_get(const ffk_field_info *field, const ffk_object *obj, ffk_any *out) {
  if (out == NULL || field == NULL) {
    if (out != NULL) *out = ffk_any_none();
    return ffk_error_set(FFK_ERR_VALUE, "ffk_field_get: the %s is NULL", out == NULL ? "out" : "field");
  }
  if (FFK_UNLIKELY(obj == NULL ||
                   (obj->type_index != field->owner_index && !ffk_type_is_instance(obj->type_index, field->owner_index)))) {
    *out = ffk_any_none();
    return not_instance(field, obj);
  }
  return load_slot(obj, field, out);
}

static int set_field(const ffk_field_info *field, ffk_object *obj, const ffk_any *value, bool check_writable) {
  if (field == NULL || obj == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot set a field: the %s is NULL",
                         field == NULL ? "field" : obj == NULL ? "object" : "value");
  if (FFK_UNLIKELY(!ffk_type_is_instance(obj->type_index, field->owner_index))) return not_instance(field, obj);
  const char *key = ffk_type_key(obj->type_index);
  if (check_writable && !(field->flags & FFK_FIELD_WRITABLE))
    return ffk_error_set(FFK_ERR_ATTRIBUTE, "field `%s` of `%s` is read-only", field->name, key);
  ffk_any v;
  if (ffk_reflect__convert(field, key, value, &v) != 0) return -1;
  if (store_slot(obj, field, &v, (field->flags & FFK_FIELD_WRITABLE) != 0) != 0) {
    ffk_any_release(&v);
    return -1;
  }
  ffk_reflect__field_written(obj, field); /* the type's write hook, no lock held */
  return 0;
}

int ffk_field_set(const ffk_field_info *field, ffk_object *obj, const ffk_any *value) {
  return set_field(field, obj, value, true);
}

int ffk_field_init(const ffk_field_info *field, ffk_object *obj, const ffk_any *value) {
  return set_field(field, obj, value, false);
}

static int find_named_field(const ffk_object *obj, const char *name, const ffk_field_info **f) {
  return ffk_type_get_field(obj->type_index, name, f);
}

int ffk_object_get_field(const ffk_object *obj, const char *name, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (obj == NULL || name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_object_get_field: the %s is NULL",
                         obj == NULL ? "object" : name == NULL ? "name" : "out");
  const ffk_field_info *f;
  if (find_named_field(obj, name, &f) != 0) return -1;
  return load_slot(obj, f, out);
}

int ffk_object_set_field(ffk_object *obj, const char *name, const ffk_any *value) {
  if (obj == NULL || name == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_object_set_field: the %s is NULL",
                         obj == NULL ? "object" : name == NULL ? "name" : "value");
  const ffk_field_info *f;
  if (find_named_field(obj, name, &f) != 0) return -1;
  return ffk_field_set(f, obj, value);
}

/* ---- Methods and copies ------------------------------------------------------------------- */

int ffk_method_check_self(const ffk_method_info *method, const ffk_object *self) {
  if (method == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_method_check_self: method is NULL");
  if (self != NULL && ffk_object_is_instance(self, method->owner_index)) return 0;
  return ffk_error_set(FFK_ERR_TYPE, "`%s` of `%s` does not apply to a `%s` object", method->name,
                       ffk_type_key(method->owner_index), self != NULL ? ffk_type_key(self->type_index) : "None");
}

int ffk_object_call_method(ffk_object *obj, const char *name, const ffk_any *args, int32_t nargs, ffk_any *result) {
  if (result != NULL) *result = ffk_any_none();
  if (obj == NULL || name == NULL || result == NULL || nargs < 0 || (args == NULL && nargs > 0))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_object_call_method: %s", obj == NULL ? "the object is NULL"
                                                                      : name == NULL ? "the name is NULL"
                                                                      : result == NULL ? "result is NULL"
                                                                                       : "bad argument array");
  const ffk_method_info *m;
  int found = ffk_type_find_method(obj->type_index, name, &m);
  if (found < 0) return -1;
  if (found == 0)
    return ffk_error_set(FFK_ERR_ATTRIBUTE, "`%s` object has no method `%s`", ffk_type_name(obj->type_index), name);
  if (m->is_static) return ffk_function_call(m->function, args, nargs, result);
  enum { LOCAL = 8 };
  ffk_any local[LOCAL];
  ffk_any *all = local;
  if (nargs >= LOCAL) {
    if (nargs == INT32_MAX) return ffk_error_set(FFK_ERR_VALUE, "ffk_object_call_method: too many arguments");
    if ((all = ffk_mem_alloc(((size_t)nargs + 1) * sizeof *all)) == NULL) return -1;
  }
  all[0] = ffk_any_none();
  all[0].type_index = obj->type_index;
  all[0].v_obj = obj;
  for (int32_t i = 0; i < nargs; ++i) ffk_any__copy(&all[i + 1], &args[i]);
  int rc = ffk_function_call(m->function, all, nargs + 1, result);
  if (all != local) ffk_mem_free(all);
  return rc;
}

ffk_object *ffk_object_shallow_copy(const ffk_object *obj) {
  if (obj == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_object_shallow_copy: the object is NULL");
    return NULL;
  }
  const ffk_rtype *rt = ffk_reflect__type(obj->type_index);
  if (rt == NULL || obj->deleter != reflect_deleter) {
    ffk_error_set(FFK_ERR_TYPE, "cannot shallow-copy a `%s`: only objects made by reflection can be copied",
                  ffk_type_name(obj->type_index));
    return NULL;
  }
  ffk_object *copy = alloc_unfinished(rt);
  if (copy == NULL) return NULL;
  for (int32_t i = 0; i < rt->nfields; ++i) {
    ffk_any v;
    if (load_slot(obj, rt->fields[i], &v) != 0) {
      ffk_object_release(copy);
      return NULL;
    }
    (void)store_slot(copy, rt->fields[i], &v, false); /* unlocked: cannot fail */
  }
  copy->deleter = reflect_deleter;
  return copy;
}

bool ffk_object_is_reflection_made(const ffk_object *obj) {
  return obj != NULL && obj->deleter == reflect_deleter && ffk_reflect__type(obj->type_index) != NULL;
}

/* ---- Field-wise encoding ------------------------------------------------------------------- */

/* The description of obj's type when obj is made by reflection and has n fields; else NULL
   with the error ffk_object_field_values / ffk_object_init_fields document (`what`: "read"
   or "set"). */
static const ffk_rtype *fieldwise_type(const ffk_object *obj, int32_t n, const void *values, const char *what) {
  if (obj == NULL || (values == NULL && n > 0)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot %s the fields of an object: the %s is NULL", what,
                  obj == NULL ? "object" : "value array");
    return NULL;
  }
  if (!ffk_object_is_reflection_made(obj)) {
    ffk_error_set(FFK_ERR_TYPE, "cannot %s the fields of a `%s`: only objects made by reflection are field-wise",
                  what, ffk_type_name(obj->type_index));
    return NULL;
  }
  const ffk_rtype *rt = ffk_reflect__type(obj->type_index);
  if (n != rt->nfields) {
    ffk_error_set(FFK_ERR_VALUE, "`%s` has %d field%s, not %d", ffk_type_key(rt->index), (int)rt->nfields,
                  rt->nfields == 1 ? "" : "s", (int)n);
    return NULL;
  }
  return rt;
}

int ffk_object_field_values(const ffk_object *obj, ffk_any *out, int32_t n) {
  for (int32_t i = 0; out != NULL && i < n; ++i) out[i] = ffk_any_none();
  const ffk_rtype *rt = fieldwise_type(obj, n, out, "read");
  if (rt == NULL) return -1;
  for (int32_t i = 0; i < n; ++i) {
    if (load_slot(obj, rt->fields[i], &out[i]) != 0) {
      while (i-- > 0) ffk_any_release(&out[i]); /* out[i] itself is None */
      return -1;
    }
  }
  return 0;
}

int ffk_object_init_fields(ffk_object *obj, const ffk_any *values, int32_t n) {
  const ffk_rtype *rt = fieldwise_type(obj, n, values, "set");
  if (rt == NULL) return -1;
  const char *key = ffk_type_key(rt->index);
  enum { LOCAL = 16 };
  ffk_any local[LOCAL];
  ffk_any *conv = local;
  if (n > LOCAL && (conv = ffk_mem_alloc((size_t)n * sizeof *conv)) == NULL) return -1;
  int32_t done = 0; /* conv[0..done) are owned converted values not yet stored */
  int rc = 0;
  for (; done < n; ++done)
    if ((rc = ffk_reflect__convert(rt->fields[done], key, &values[done], &conv[done])) != 0) break;
  for (int32_t i = 0; rc == 0 && i < n; ++i) {
    const ffk_field_info *f = rt->fields[i];
    if (store_slot(obj, f, &conv[i], (f->flags & FFK_FIELD_WRITABLE) != 0) != 0) {
      rc = -1;
      break;
    }
    ffk_reflect__field_written(obj, f); /* the type's write hook, no lock held */
  }
  for (int32_t i = 0; i < done; ++i) ffk_any_release(&conv[i]); /* stored ones are None now */
  if (conv != local) ffk_mem_free(conv);
  return rc;
}

/* ---- Read sections and borrowed reads ----------------------------------------------------- */

void *ffk_read_section_enter(void) { return ffk_epoch__enter(); }

void ffk_read_section_exit(void *section) {
  if (section != NULL) ffk_epoch__exit(section);
}

int ffk_field_peek(const ffk_field_info *field, const ffk_object *obj, ffk_any *out) {
  if (out == NULL || field == NULL) {
    if (out != NULL) *out = ffk_any_none();
    return ffk_error_set(FFK_ERR_VALUE, "ffk_field_peek: the %s is NULL", out == NULL ? "out" : "field");
  }
  if (FFK_UNLIKELY(obj == NULL ||
                   (obj->type_index != field->owner_index && !ffk_type_is_instance(obj->type_index, field->owner_index)))) {
    *out = ffk_any_none();
    return not_instance(field, obj);
  }
  const char *p = slot_at(obj, field);
  bool writable = (field->flags & FFK_FIELD_WRITABLE) != 0;
  switch (field->storage) {
    case FFK_FIELD_STORAGE_OBJECT: {
      ffk_object *o;
      if (writable) {
        ffk_epoch__reader *self = ffk_epoch__self;
        if (FFK_UNLIKELY(self == NULL || self->depth == 0)) {
          *out = ffk_any_none();
          return ffk_error_set(FFK_ERR_RUNTIME,
                               "ffk_field_peek: field `%s` of `%s` is writable and must be read inside a read section "
                               "(ffk_read_section_enter)",
                               field->name, ffk_type_key(field->owner_index));
        }
        o = peek_object_slot(p);
      } else {
        o = *(ffk_object *const *)p;
      }
      *out = ffk_any_none();
      if (o != NULL) {
        out->type_index = o->type_index;
        out->v_obj = o;
      }
      return 0;
    }
    case FFK_FIELD_STORAGE_ANY:
      if (writable) {
        (void)load_slot(obj, field, out); /* two words, read whole under the stripe lock; cannot fail */
        return 1;
      }
      *out = *(const ffk_any *)p;
      return 0;
    default:
      (void)load_slot(obj, field, out); /* a POD field: one atomic word, nothing to own; cannot fail */
      return 0;
  }
}
