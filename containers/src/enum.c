/*
 * enum.c - enum types and their registries (ffikit/enum.h): the types ffi.EnumState,
 * ffi.Enum, ffi.IntEnum and ffi.StrEnum, defined at load; registration, lookups,
 * attribute columns; the repr and converter slots of enum types.
 *
 * A type's registry is its own type attribute FFK_ENUM_STATE_ATTR (ffk_type_get_own_attr:
 * a derived enum type has a registry of its own). Registration (state creation, adding a
 * member, making an attribute column) is serialised by g_lock so the check for a taken
 * index and the insertion are one step; lookups read the shared Dict under its own lock.
 */
#include "containers_internal.h"

#include <ffikit/enum.h>
#include <ffikit/structural.h>

#include <pthread.h>
#include <stddef.h>
#include <string.h>

static int32_t g_state_index = -1;
static int32_t g_base_index[3] = {-1, -1, -1};
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const k_base_keys[3] = {"ffi.Enum", "ffi.IntEnum", "ffi.StrEnum"};

int32_t ffk_enum_base_index(ffk_enum_kind kind) {
  if ((int)kind < 0 || (int)kind > 2) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_base_index: unknown kind %d", (int)kind);
  int32_t index = __atomic_load_n(&g_base_index[kind], __ATOMIC_ACQUIRE);
  if (index < 0) return ffk_error_set(FFK_ERR_RUNTIME, "the enum type `%s` could not be defined at load", k_base_keys[kind]);
  return index;
}

int32_t ffk_enum_state_type_index(void) {
  int32_t index = __atomic_load_n(&g_state_index, __ATOMIC_ACQUIRE);
  if (index < 0) return ffk_error_set(FFK_ERR_RUNTIME, "the type `ffi.EnumState` could not be defined at load");
  return index;
}

int ffk_enum_kind_of(int32_t type_index) {
  int32_t base = __atomic_load_n(&g_base_index[FFK_ENUM_PLAIN], __ATOMIC_ACQUIRE);
  if (base < 0 || !ffk_type_is_instance(type_index, base)) return -1;
  if (ffk_type_is_instance(type_index, g_base_index[FFK_ENUM_INT])) return FFK_ENUM_INT;
  if (ffk_type_is_instance(type_index, g_base_index[FFK_ENUM_STR])) return FFK_ENUM_STR;
  return FFK_ENUM_PLAIN;
}

bool ffk_enum_is_member(const ffk_object *obj) {
  int32_t base = __atomic_load_n(&g_base_index[FFK_ENUM_PLAIN], __ATOMIC_ACQUIRE);
  return obj != NULL && base >= 0 && ffk_object_is_instance(obj, base);
}

/* 0 when `type_index` is an enum type; -1 with a ValueError (unknown) or TypeError. */
static int check_enum_type(int32_t type_index) {
  if (ffk_enum_kind_of(type_index) >= 0) return 0;
  const char *key = ffk_type_key(type_index);
  if (key == NULL) return ffk_error_set(FFK_ERR_VALUE, "type index %d is not a registered type", (int)type_index);
  return ffk_error_set(FFK_ERR_TYPE, "`%s` is not an enum type", key);
}

/*
 * What a registry holds lives until exit, as type descriptions do: registered members, their
 * str indices, the registry's containers and its attribute columns are made immortal (a
 * count no release reaches zero from, and not counted live by the testing builds' leak
 * checks), so a member removed from a registry's List by hand stays valid. The caller
 * holds g_lock (the check and the marking are one step). Attribute values are not.
 */
static void keep_forever(ffk_object *obj) {
  if (obj == NULL || (__atomic_load_n(&obj->flags, __ATOMIC_RELAXED) & FFK_OBJECT_IMMORTAL)) return;
  ffk_object_forget(obj);
  __atomic_fetch_add(&obj->refcount, FFK_REFCOUNT_STRONG_ONE << 30, __ATOMIC_RELAXED);
  __atomic_fetch_or(&obj->flags, (uint32_t)FFK_OBJECT_IMMORTAL, __ATOMIC_RELAXED);
}

static void keep_state_forever(ffk_enum_state_obj *st) {
  keep_forever((ffk_object *)st->entries);
  keep_forever((ffk_object *)st->indexes);
  keep_forever((ffk_object *)st->attrs);
}

/* ---- The registry --------------------------------------------------------------------- */

/* A new empty ffi.EnumState, or NULL with an error. */
static ffk_object *state_new(void) {
  int32_t index = ffk_enum_state_type_index();
  if (index < 0) return NULL;
  ffk_object *obj = ffk_object_new_reflected(index);
  if (obj == NULL) return NULL;
  ffk_enum_state_obj *s = (ffk_enum_state_obj *)obj;
  s->entries = ffk_list_new();
  s->indexes = ffk_dict_new();
  s->attrs = ffk_dict_new();
  if (s->entries == NULL || s->indexes == NULL || s->attrs == NULL) {
    ffk_object_release(obj);
    return NULL;
  }
  return obj;
}

static int enum_convert(const ffk_schema *s, const ffk_any *v, ffk_any *out);

/* The registry attached to the type itself: 1 (*out new), 0, -1 (TypeError for a foreign value). */
static int own_state(int32_t type_index, ffk_object **out) {
  *out = NULL;
  ffk_any v;
  int rc = ffk_type_get_own_attr(type_index, FFK_ENUM_STATE_ATTR, &v);
  if (rc <= 0) return rc;
  if (!ffk_any_is_object(&v) || v.type_index != g_state_index) {
    ffk_error_set(FFK_ERR_TYPE, "Expected `ffi.EnumState` in the `%s` attribute of `%s`, but got `%s`",
                  FFK_ENUM_STATE_ATTR, ffk_type_key(type_index), ffk_any_type_name(&v));
    ffk_any_release(&v);
    return -1;
  }
  *out = v.v_obj;
  return 1;
}

int ffk_enum_state(int32_t type_index, bool create, ffk_object **out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_state: out is NULL");
  *out = NULL;
  if (check_enum_type(type_index) != 0) return -1;
  int rc = own_state(type_index, out);
  if (rc != 0 || !create) return rc;
  pthread_mutex_lock(&g_lock);
  rc = own_state(type_index, out); /* another thread may have made it meanwhile */
  if (rc == 0) {
    ffk_object *s = state_new();
    ffk_any v = ffk_any_object(s);
    if (s == NULL || ffk_type_set_attr(type_index, FFK_ENUM_STATE_ATTR, &v) != 0 ||
        ffk_type_set_converter(type_index, enum_convert) != 0) {
      rc = -1;
      if (s != NULL) ffk_object_release(s);
    } else {
      keep_state_forever((ffk_enum_state_obj *)s);
      ffk_object_release(s); /* the registry keeps its own */
      rc = own_state(type_index, out);
    }
    ffk_any_release(&v);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

static int duplicate(int32_t type_index) {
  return ffk_error_set(FFK_ERR_VALUE, "Duplicate enum index for type `%s`", ffk_type_key(type_index));
}

/* Inserts `m` (a filled member of the type) under g_lock. 0, or -1 (duplicate, memory). */
static int register_locked(int32_t type_index, ffk_enum_state_obj *st, ffk_object *m) {
  ffk_enum_obj *e = (ffk_enum_obj *)m;
  if (e->str_index == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "an enum member of `%s` has no str index", ffk_type_key(type_index));
  ffk_any ikey = ffk_any_int(e->int_index);
  ffk_any skey = ffk_any_object((ffk_object *)e->str_index);
  ffk_any val = ffk_any_object(m);
  int rc = 0;
  keep_state_forever(st);
  if (ffk_dict_contains(st->indexes, &ikey) ||
      ffk_dict_contains_str(st->indexes, e->str_index->data, e->str_index->size) != 0) {
    rc = duplicate(type_index);
  } else if (ffk_list_append(st->entries, &val) != 0) {
    rc = -1;
  } else if (ffk_dict_set(st->indexes, &ikey, &val) != 0 || ffk_dict_set(st->indexes, &skey, &val) != 0) {
    /* undo: the member must be in all three or none (g_lock keeps other registrations out) */
    ffk_error *err = ffk_error_fetch();
    ffk_any drop = ffk_any_none();
    int64_t n = ffk_list_size(st->entries);
    if (n > 0 && ffk_list_pop(st->entries, n - 1, &drop) == 0) ffk_any_release(&drop);
    ffk_any none = ffk_any_none();
    ffk_dict_pop_default(st->indexes, &ikey, &none, &drop);
    ffk_any_release(&drop);
    ffk_error_clear();
    ffk_error_restore(err);
    rc = -1;
  }
  if (rc == 0) {
    keep_forever(m);
    keep_forever((ffk_object *)e->str_index);
  }
  ffk_any_release(&skey);
  ffk_any_release(&val);
  return rc;
}

int ffk_enum_register(int32_t type_index, ffk_object *member) {
  if (member == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_register: member is NULL");
  if (check_enum_type(type_index) != 0) return -1;
  if (member->type_index != type_index)
    return ffk_error_set(FFK_ERR_TYPE, "cannot register a `%s` as a member of `%s`", ffk_type_key(member->type_index),
                         ffk_type_key(type_index));
  ffk_object *st;
  if (ffk_enum_state(type_index, true, &st) < 0) return -1;
  pthread_mutex_lock(&g_lock);
  int rc = register_locked(type_index, (ffk_enum_state_obj *)st, member);
  pthread_mutex_unlock(&g_lock);
  ffk_object_release(st);
  return rc;
}

int ffk_enum_add(int32_t type_index, const char *name, const int64_t *value, ffk_object **out) {
  if (out != NULL) *out = NULL;
  if (name == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_add: name is NULL");
  if (check_enum_type(type_index) != 0) return -1;
  int kind = ffk_enum_kind_of(type_index);
  if (kind == FFK_ENUM_INT && value == NULL)
    return ffk_error_set(FFK_ERR_TYPE, "`%s` is an IntEnum: its member `%s` needs an explicit int index",
                         ffk_type_key(type_index), name);
  if (kind != FFK_ENUM_INT && value != NULL)
    return ffk_error_set(FFK_ERR_TYPE, "`%s` is not an IntEnum: the int index of `%s` is its registration order",
                         ffk_type_key(type_index), name);
  ffk_string *str = ffk_string_new(name, strlen(name));
  if (str == NULL) return -1;
  ffk_object *st;
  if (ffk_enum_state(type_index, true, &st) < 0) {
    ffk_object_release((ffk_object *)str);
    return -1;
  }
  ffk_object *m = ffk_object_new_reflected(type_index);
  int rc = m == NULL ? -1 : 0;
  if (rc == 0) {
    ffk_enum_obj *e = (ffk_enum_obj *)m;
    pthread_mutex_lock(&g_lock);
    e->int_index = value != NULL ? *value : ffk_list_size(((ffk_enum_state_obj *)st)->entries);
    ffk_string *old = e->str_index; /* the field's default "" */
    e->str_index = str;
    str = NULL;
    if (old != NULL) ffk_object_release((ffk_object *)old);
    rc = register_locked(type_index, (ffk_enum_state_obj *)st, m);
    pthread_mutex_unlock(&g_lock);
  }
  if (str != NULL) ffk_object_release((ffk_object *)str);
  ffk_object_release(st);
  if (rc == 0 && out != NULL) {
    *out = m;
    m = NULL;
  }
  if (m != NULL) ffk_object_release(m);
  return rc;
}

/* The type's registry for a lookup: 1 (*st new), 0 (none), -1. */
static int lookup_state(int32_t type_index, ffk_object **out, ffk_object **st) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_get: out is NULL");
  *out = NULL;
  if (check_enum_type(type_index) != 0) return -1;
  return own_state(type_index, st);
}

/* *out <- the member in `v` (a lookup's result): 1, or 0 for None. */
static int take_member(ffk_any *v, ffk_object **out) {
  if (!ffk_any_is_object(v)) {
    ffk_any_release(v);
    return 0;
  }
  *out = v->v_obj;
  return 1;
}

int ffk_enum_get_str(int32_t type_index, const char *name, size_t size, ffk_object **out) {
  ffk_object *st;
  int rc = lookup_state(type_index, out, &st);
  if (rc <= 0) return rc;
  if (name == NULL && size > 0) {
    ffk_object_release(st);
    return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_get_str: name is NULL");
  }
  ffk_any v;
  rc = ffk_dict_get_str(((ffk_enum_state_obj *)st)->indexes, name, size, &v);
  ffk_object_release(st);
  return rc <= 0 ? rc : take_member(&v, out);
}

int ffk_enum_get_int(int32_t type_index, int64_t value, ffk_object **out) {
  ffk_object *st;
  int rc = lookup_state(type_index, out, &st);
  if (rc <= 0) return rc;
  ffk_any key = ffk_any_int(value), v;
  rc = ffk_dict_get(((ffk_enum_state_obj *)st)->indexes, &key, &v);
  ffk_object_release(st);
  return rc <= 0 ? rc : take_member(&v, out);
}

int ffk_enum_get(int32_t type_index, const ffk_any *index, ffk_object **out) {
  if (out != NULL) *out = NULL;
  if (index == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_get: index is NULL");
  if (index->type_index == FFK_TYPE_INT || index->type_index == FFK_TYPE_BOOL)
    return ffk_enum_get_int(type_index, index->v_int, out);
  const char *data;
  size_t size;
  if (index->type_index == FFK_TYPE_SMALL_STR || index->type_index == FFK_TYPE_STRING ||
      index->type_index == FFK_TYPE_RAW_STR) {
    if (ffk_any_as_str(index, &data, &size) != 0) return -1;
    return ffk_enum_get_str(type_index, data, size, out);
  }
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_get: out is NULL");
  if (check_enum_type(type_index) != 0) return -1;
  return ffk_error_set(FFK_ERR_TYPE, "enum index must be int or str, got %s", ffk_any_type_name(index));
}

int64_t ffk_enum_count(int32_t type_index) {
  if (check_enum_type(type_index) != 0) return -1;
  ffk_object *st;
  int rc = own_state(type_index, &st);
  if (rc <= 0) return rc;
  int64_t n = ffk_list_size(((ffk_enum_state_obj *)st)->entries);
  ffk_object_release(st);
  return n;
}

ffk_array *ffk_enum_members(int32_t type_index) {
  if (check_enum_type(type_index) != 0) return NULL;
  ffk_object *st;
  int rc = own_state(type_index, &st);
  if (rc < 0) return NULL;
  if (rc == 0) return ffk_array_new(NULL, 0);
  ffk_array *a = ffk_list_to_array(((ffk_enum_state_obj *)st)->entries);
  ffk_object_release(st);
  return a;
}

int ffk_enum_member_int(const ffk_object *member, int64_t *out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_member_int: out is NULL");
  if (!ffk_enum_is_member(member))
    return ffk_error_set(FFK_ERR_TYPE, "expected an enum member but got `%s`",
                         member == NULL ? "None" : ffk_type_key(member->type_index));
  *out = ((const ffk_enum_obj *)member)->int_index;
  return 0;
}

const ffk_string *ffk_enum_member_str_borrow(const ffk_object *member) {
  if (!ffk_enum_is_member(member)) {
    ffk_error_set(FFK_ERR_TYPE, "expected an enum member but got `%s`",
                  member == NULL ? "None" : ffk_type_key(member->type_index));
    return NULL;
  }
  const ffk_string *s = ((const ffk_enum_obj *)member)->str_index;
  if (s == NULL) ffk_error_set(FFK_ERR_VALUE, "the enum member has no str index");
  return s;
}

/* ---- Attribute columns ----------------------------------------------------------------- */

static int check_attr_args(int32_t type_index, const char *attr, const ffk_object *member, const void *value) {
  if (attr == NULL || member == NULL || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_attr: the %s is NULL",
                         attr == NULL ? "attribute name" : member == NULL ? "member" : "value");
  if (check_enum_type(type_index) != 0) return -1;
  if (member->type_index != type_index)
    return ffk_error_set(FFK_ERR_TYPE, "expected a member of `%s` but got `%s`", ffk_type_key(type_index),
                         ffk_type_key(member->type_index));
  return 0;
}

int ffk_enum_attr_set(int32_t type_index, const char *attr, const ffk_object *member, const ffk_any *value) {
  if (check_attr_args(type_index, attr, member, value) != 0) return -1;
  ffk_object *st;
  if (ffk_enum_state(type_index, true, &st) < 0) return -1;
  ffk_dict *attrs = ((ffk_enum_state_obj *)st)->attrs;
  ffk_any col = ffk_any_none();
  pthread_mutex_lock(&g_lock); /* one column per name, even when threads race */
  keep_state_forever((ffk_enum_state_obj *)st);
  int rc = ffk_dict_get_str(attrs, attr, strlen(attr), &col);
  if (rc == 0 || (rc == 1 && col.type_index != FFK_TYPE_DICT)) {
    ffk_any_release(&col);
    ffk_dict *d = ffk_dict_new();
    ffk_any key;
    rc = d == NULL ? -1 : ffk_any_cstr(attr, &key);
    if (rc == 0) {
      keep_forever((ffk_object *)d);
      col = ffk_any_object_steal((ffk_object *)d);
      d = NULL;
      rc = ffk_dict_set(attrs, &key, &col);
      ffk_any_release(&key);
    }
    if (d != NULL) ffk_object_release((ffk_object *)d);
  } else if (rc == 1) {
    rc = 0;
  }
  pthread_mutex_unlock(&g_lock);
  ffk_object_release(st);
  if (rc == 0) {
    ffk_any m = ffk_any_object((ffk_object *)member);
    rc = ffk_dict_set((ffk_dict *)col.v_obj, &m, value);
    ffk_any_release(&m);
  }
  ffk_any_release(&col);
  return rc;
}

int ffk_enum_attr_get(int32_t type_index, const char *attr, const ffk_object *member, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (check_attr_args(type_index, attr, member, out) != 0) return -1;
  ffk_object *st;
  int rc = own_state(type_index, &st);
  if (rc <= 0) return rc;
  ffk_any col;
  rc = ffk_dict_get_str(((ffk_enum_state_obj *)st)->attrs, attr, strlen(attr), &col);
  ffk_object_release(st);
  if (rc <= 0) return rc;
  if (col.type_index != FFK_TYPE_DICT) {
    ffk_any_release(&col);
    return 0;
  }
  ffk_any m = ffk_any_object((ffk_object *)member);
  rc = ffk_dict_get((ffk_dict *)col.v_obj, &m, out);
  ffk_any_release(&m);
  ffk_any_release(&col);
  return rc;
}

/* ---- Slots --------------------------------------------------------------------------- */

/* repr: `<type key>.<str index>` (tvm_ffi's default for enum objects). */
static int enum_repr(ffk_object *self, ffk_repr_ctx *ctx) {
  const ffk_string *s = ((ffk_enum_obj *)self)->str_index;
  const char *key = ffk_type_key(self->type_index);
  if (ffk_repr_append(ctx, key, strlen(key)) != 0 || ffk_repr_append(ctx, ".", 1) != 0) return -1;
  return s == NULL ? 0 : ffk_repr_append(ctx, s->data, s->size);
}

/* The converter of an enum type with a registry: an instance passes; for an IntEnum type an
   int (or bool) converts to the member with that int index, for a StrEnum type a str to the
   member with that str index (tvm_ffi's payload conversion); anything else is a mismatch. */
static int enum_convert(const ffk_schema *s, const ffk_any *v, ffk_any *out) {
  if (ffk_any_is_object(v) && ffk_type_is_instance(v->type_index, s->type_index)) return 0;
  int kind = ffk_enum_kind_of(s->type_index);
  ffk_object *m = NULL;
  int rc = 0;
  if (kind == FFK_ENUM_INT && (v->type_index == FFK_TYPE_INT || v->type_index == FFK_TYPE_BOOL))
    rc = ffk_enum_get_int(s->type_index, v->v_int, &m);
  else if (kind == FFK_ENUM_STR && (v->type_index == FFK_TYPE_SMALL_STR || v->type_index == FFK_TYPE_STRING ||
                                    v->type_index == FFK_TYPE_RAW_STR))
    rc = ffk_enum_get(s->type_index, v, &m);
  if (rc < 0) return -1;
  if (rc == 1) {
    *out = ffk_any_object_steal(m);
    return 1;
  }
  if (kind == FFK_ENUM_INT && v->type_index == FFK_TYPE_INT)
    return ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `int` (%lld is not a valid %s)", s->text,
                         (long long)v->v_int, s->text);
  if (kind == FFK_ENUM_STR && (v->type_index == FFK_TYPE_SMALL_STR || v->type_index == FFK_TYPE_STRING ||
                               v->type_index == FFK_TYPE_RAW_STR)) {
    const char *data = "";
    size_t size = 0;
    ffk_any_as_str(v, &data, &size);
    return ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `str` (\"%.*s\" is not a valid %s)", s->text,
                         (int)(size > 200 ? 200 : size), data, s->text);
  }
  return ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `%s`", s->text, ffk_any_type_name(v));
}

/* ---- Definitions at load ----------------------------------------------------------------- */

/* ffi.EnumState(): an empty registry. */
static int state_ctor(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  (void)args;
  (void)nargs;
  ffk_object *s = state_new();
  if (s == NULL) return -1;
  *result = ffk_any_object_steal(s);
  return 0;
}

static int define_state(void) {
  static const ffk_field_def fields[] = {
      {"entries", offsetof(ffk_enum_state_obj, entries), "List<Object>", FFK_FIELD_INIT_OFF, {0},
       "Enum singletons in registration order."},
      {"indexes", offsetof(ffk_enum_state_obj, indexes), "Dict<Any, Object>", FFK_FIELD_INIT_OFF, {0},
       "Canonical integer and string indices to enum singletons."},
      {"attrs", offsetof(ffk_enum_state_obj, attrs), "Dict<str, Dict<Object, Any>>", FFK_FIELD_INIT_OFF, {0},
       "Extensible-attribute columns keyed by enum singleton."},
  };
  /* registered first, so the constructor's signature can name it */
  if (ffk_type_register("ffi.EnumState", FFK_TYPE_OBJECT) < 0) return -1;
  ffk_function *ctor = ffk_function_new_typed("ffi.EnumState.__ffi_init__", "() -> ffi.EnumState", state_ctor, NULL,
                                              NULL);
  if (ctor == NULL) return -1;
  ffk_type_def def = {.key = "ffi.EnumState",
                      .parent_index = FFK_TYPE_OBJECT,
                      .instance_size = sizeof(ffk_enum_state_obj),
                      .fields = fields,
                      .nfields = 3,
                      .constructor = ctor,
                      .doc = "Registry state shared by enum definition and lookup."};
  int32_t index = ffk_type_define(&def);
  ffk_object_release((ffk_object *)ctor);
  if (index < 0) return -1;
  __atomic_store_n(&g_state_index, index, __ATOMIC_RELEASE);
  return 0;
}

static int define_bases(void) {
  static const ffk_field_def fields[] = {
      {"_int_index", offsetof(ffk_enum_obj, int_index), "int", FFK_FIELD_COMPARE_OFF, {0}, "Canonical integer index."},
      {"_str_index", offsetof(ffk_enum_obj, str_index), "str", 0, {0}, "Canonical string index."},
  };
  ffk_type_def def = {.key = "ffi.Enum",
                      .parent_index = FFK_TYPE_OBJECT,
                      .instance_size = sizeof(ffk_enum_obj),
                      .fields = fields,
                      .nfields = 2,
                      .doc = "Base class for FFI-registered enum singletons."};
  int32_t base = ffk_type_define(&def);
  if (base < 0) return -1;
  ffk_any kind = ffk_any_int(FFK_S_KIND_SINGLETON);
  if (ffk_type_set_attr(base, FFK_ATTR_S_KIND, &kind) != 0 || ffk_type_set_repr(base, enum_repr) != 0) return -1;
  static const char *const docs[3] = {NULL, "Enum whose ``value`` aliases its signed 64-bit integer index.",
                                      "Enum whose ``name`` and ``value`` alias its string index."};
  int32_t sub[3] = {base, -1, -1};
  for (int k = 1; k < 3; ++k) {
    ffk_type_def d = {.key = k_base_keys[k], .parent_index = base, .instance_size = sizeof(ffk_enum_obj),
                      .doc = docs[k]};
    if ((sub[k] = ffk_type_define(&d)) < 0) return -1;
  }
  __atomic_store_n(&g_base_index[FFK_ENUM_INT], sub[1], __ATOMIC_RELEASE);
  __atomic_store_n(&g_base_index[FFK_ENUM_STR], sub[2], __ATOMIC_RELEASE);
  __atomic_store_n(&g_base_index[FFK_ENUM_PLAIN], base, __ATOMIC_RELEASE);
  return 0;
}

int32_t ffk_enum_define(const char *key, ffk_enum_kind kind, const char *doc) {
  int32_t parent = ffk_enum_base_index(kind);
  if (parent < 0) return -1;
  if (key == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_enum_define: key is NULL");
  ffk_type_def def = {.key = key, .parent_index = parent, .instance_size = sizeof(ffk_enum_obj), .doc = doc};
  return ffk_type_define(&def);
}

int ffk_enum__register(void) {
  if (define_state() != 0) return -1;
  return define_bases();
}
