/*
 * reflect.c - reflected type descriptions: defining, validating, inheriting, adding
 * methods, and looking fields and methods up (ffikit/reflect.h).
 *
 * Invariants:
 *  - g_rtypes[i] is NULL or the description of type i. A description is built off to
 *    the side, then published under g_lock with a release store; readers take no lock
 *    (an acquire load sees a complete description). Descriptions are never freed, and
 *    g_rtypes keeps every one reachable, so the leak checker stays quiet.
 *  - A description's fields are fixed once published. Its methods live in tables that
 *    ffk_type_add_method replaces whole under g_lock (release store); each new table
 *    links the one it replaced, so an ffk_method_info found earlier stays valid.
 *  - A type's full method list (inherited and overridden included) is a cache built on
 *    demand under g_lock and tagged with the method generation it saw; add_method bumps
 *    the generation, so a stale cache is rebuilt on the next read.
 *  - What a published description holds (method and constructor Functions, default
 *    values that are objects) is pinned: the registry's reference is never dropped and
 *    test builds stop counting those objects live (pin_object). A failed or
 *    repeated definition pins nothing and releases all it took.
 *  - Field write hooks (ffk_type_set_field_write_hook) are one atomic pointer per type,
 *    set under g_lock; a write finds the nearest type's hook walking the parents with no
 *    lock, after one load of a count that skips the walk while no hook is set.
 */
#include "reflect_internal.h"

#include <ffikit/unstable/reflect.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_TYPES (FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC)
#define MAX_CHAIN 40 /* deeper than the type registry allows */

static ffk_rtype *g_rtypes[MAX_TYPES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_method_generation = 1; /* atomic access; changed under g_lock */

const ffk_rtype *ffk_reflect__type(int32_t type_index) {
  if (type_index < FFK_TYPE_OBJECT_BEGIN || type_index >= MAX_TYPES) return NULL;
  return __atomic_load_n(&g_rtypes[type_index], __ATOMIC_ACQUIRE);
}

/*
 * Pinned objects: a set of addresses (open addressing, at most half full), guarded by
 * g_lock, so an object two descriptions hold (one Function as two types' method) stops
 * being counted live once only. Room is reserved before a description is published, so
 * publishing itself cannot fail.
 */
static ffk_object **g_pinned;
static size_t g_pinned_cap, g_pinned_used;

static size_t pin_slot(const ffk_object *obj, size_t mask) {
  return (size_t)(((uintptr_t)obj >> 4) * UINT64_C(0x9E3779B97F4A7C15)) & mask;
}

/* Makes room for `more` pins; the caller holds g_lock. 0, or -1 with a MemoryError. */
static int pins_reserve(size_t more) {
  if ((g_pinned_used + more) * 2 <= g_pinned_cap) return 0;
  size_t cap = g_pinned_cap ? g_pinned_cap : 64;
  while ((g_pinned_used + more) * 2 > cap) cap *= 2;
  ffk_object **fresh = ffk_mem_calloc(cap, sizeof *fresh);
  if (fresh == NULL) return -1;
  for (size_t i = 0; i < g_pinned_cap; ++i) {
    if (g_pinned[i] == NULL) continue;
    size_t j = pin_slot(g_pinned[i], cap - 1);
    while (fresh[j] != NULL) j = (j + 1) & (cap - 1);
    fresh[j] = g_pinned[i];
  }
  ffk_mem_free(g_pinned);
  g_pinned = fresh;
  g_pinned_cap = cap;
  return 0;
}

/* Pins an object the registry keeps a reference to; the caller holds g_lock and reserved room. */
static void pin_object(ffk_object *obj) {
  if (obj == NULL || (obj->flags & FFK_OBJECT_IMMORTAL)) return;
  size_t mask = g_pinned_cap - 1, j = pin_slot(obj, mask);
  for (; g_pinned[j] != NULL; j = (j + 1) & mask)
    if (g_pinned[j] == obj) return;
  g_pinned[j] = obj;
  ++g_pinned_used;
  ffk_debug__object_died(obj->type_index);
}

static void pin_any(const ffk_any *v) {
  if (ffk_any_is_object(v)) pin_object(v->v_obj);
}

/* The storage of a parsed field type (never fails). */
static int storage_of(const ffk_schema *s) {
  switch (s->type_index) {
    case FFK_TYPE_INT:
      return FFK_FIELD_STORAGE_INT;
    case FFK_TYPE_FLOAT:
      return FFK_FIELD_STORAGE_FLOAT;
    case FFK_TYPE_BOOL:
      return FFK_FIELD_STORAGE_BOOL;
    case FFK_SCHEMA_OPTIONAL:
      return s->params[0]->type_index >= FFK_TYPE_OBJECT_BEGIN ? FFK_FIELD_STORAGE_OBJECT : FFK_FIELD_STORAGE_ANY;
    default:
      return s->type_index >= FFK_TYPE_OBJECT_BEGIN ? FFK_FIELD_STORAGE_OBJECT : FFK_FIELD_STORAGE_ANY;
  }
}

int ffk_field_storage_for(const char *type_text) {
  ffk_schema *s = ffk_schema_parse(type_text);
  if (s == NULL) return -1;
  int storage = storage_of(s);
  ffk_schema_free(s);
  return storage;
}

static size_t storage_size(int storage) {
  switch (storage) {
    case FFK_FIELD_STORAGE_INT:
      return sizeof(int64_t);
    case FFK_FIELD_STORAGE_FLOAT:
      return sizeof(double);
    case FFK_FIELD_STORAGE_BOOL:
      return sizeof(bool);
    case FFK_FIELD_STORAGE_OBJECT:
      return sizeof(ffk_object *);
    default:
      return sizeof(ffk_any);
  }
}

static size_t storage_align(int storage) {
  switch (storage) {
    case FFK_FIELD_STORAGE_INT:
      return _Alignof(int64_t);
    case FFK_FIELD_STORAGE_FLOAT:
      return _Alignof(double);
    case FFK_FIELD_STORAGE_BOOL:
      return _Alignof(bool);
    case FFK_FIELD_STORAGE_OBJECT:
      return _Alignof(ffk_object *);
    default:
      return _Alignof(ffk_any);
  }
}

static bool is_identifier(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (++s; *s; ++s)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* Replaces the pending error with "<prefix>: <its message>", same kind (a MemoryError is kept as is). */
static int prefix_error(const char *fmt, ...) FFK_PRINTF(1, 2);
static int prefix_error(const char *fmt, ...) {
  ffk_error *err = ffk_error_fetch();
  if (err == NULL) return -1;
  if (strcmp(ffk_error_kind(err), FFK_ERR_MEMORY) == 0) {
    ffk_error_restore(err);
    return -1;
  }
  ffk_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  int rc = ffk_buf__vappendf(&b, fmt, ap);
  va_end(ap);
  if (rc == 0) rc = ffk_buf__appendf(&b, ": %s", ffk_error_message(err));
  if (rc != 0) {
    ffk_buf__free(&b);
    ffk_error_clear();
    ffk_error_restore(err);
    return -1;
  }
  ffk_error_set(ffk_error_kind(err), "%s", b.data);
  ffk_buf__free(&b);
  ffk_object_release((ffk_object *)err);
  return -1;
}

/* ---- Building a description ------------------------------------------------------------ */

static size_t text_size(const char *s) { return s != NULL ? strlen(s) + 1 : 0; }

static const char *copy_text(char **cursor, const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  memcpy(*cursor, s, n);
  const char *out = *cursor;
  *cursor += n;
  return out;
}

/* The nearest reflected ancestor of `parent_index` (itself included), or NULL. */
static const ffk_rtype *reflected_base(int32_t parent_index) {
  for (int32_t p = parent_index, guard = 0; p >= 0 && guard < MAX_CHAIN; p = ffk_type_parent(p), ++guard) {
    const ffk_rtype *rt = ffk_reflect__type(p);
    if (rt != NULL) return rt;
  }
  return NULL;
}

/* Releases what an unpublished description holds, and frees it. */
static void discard(ffk_rtype *rt) {
  if (rt == NULL) return;
  for (int32_t i = 0; i < rt->nown_fields; ++i) {
    ffk_field_info *f = &rt->own_fields[i];
    ffk_any_release(&f->default_value);
    ffk_schema_free((ffk_schema *)f->schema);
  }
  ffk_method_table *t = rt->own_methods;
  for (int32_t i = 0; t != NULL && i < t->n; ++i) ffk_object_release((ffk_object *)t->items[i]->function);
  ffk_mem_free(t);
  ffk_object_release((ffk_object *)rt->constructor);
  ffk_mem_free(rt);
}

/* Checks a field's place against the header, the instance end, alignment and earlier fields. */
static int check_offset(const char *key, const ffk_field_info *f, const ffk_field_info *const *others, int32_t n,
                        size_t base_size, size_t instance_size) {
  size_t size = storage_size(f->storage), align = storage_align(f->storage);
  if (f->offset < sizeof(ffk_object))
    return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` at offset %zu overlaps the object header",
                         key, f->name, f->offset);
  if (f->offset < base_size)
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot define type `%s`: field `%s` at offset %zu lies inside its parent's %zu-byte instance",
                         key, f->name, f->offset, base_size);
  if (f->offset % align != 0)
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot define type `%s`: field `%s` at offset %zu is misaligned for its %zu-byte storage",
                         key, f->name, f->offset, align);
  if (f->offset > instance_size || size > instance_size - f->offset)
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot define type `%s`: field `%s` at offset %zu (%zu bytes) passes the end of the "
                         "%zu-byte instance",
                         key, f->name, f->offset, size, instance_size);
  for (int32_t i = 0; i < n; ++i) {
    const ffk_field_info *o = others[i];
    size_t osize = storage_size(o->storage);
    if (f->offset < o->offset + osize && o->offset < f->offset + size)
      return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` at offset %zu overlaps field `%s` at offset %zu",
                           key, f->name, f->offset, o->name, o->offset);
  }
  return 0;
}

static int build_field(const char *key, const ffk_field_def *d, ffk_field_info *f, int32_t owner, int32_t position,
                       const ffk_field_info *const *earlier, int32_t nearlier, size_t base_size, size_t instance_size,
                       char **cursor) {
  if (d->name == NULL || d->name[0] == '\0')
    return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field #%d has no name", key, (int)position);
  if (!is_identifier(d->name))
    return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field name `%s` is not an identifier", key, d->name);
  for (int32_t i = 0; i < nearlier; ++i)
    if (strcmp(earlier[i]->name, d->name) == 0)
      return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` is defined twice%s", key, d->name,
                           earlier[i]->owner_index != owner ? " (its parent has it)" : "");
  const uint32_t all = FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT | FFK_FIELD_INIT_OFF | FFK_FIELD_KW_ONLY |
                       FFK_FIELD_REPR_OFF | FFK_FIELD_COMPARE_OFF | FFK_FIELD_DEFAULT_FACTORY | FFK_FIELD_S_DEF |
                       FFK_FIELD_S_DEF_SIMPLE;
  if (d->flags & ~all)
    return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` has unknown flags 0x%x", key, d->name,
                         (unsigned)(d->flags & ~all));
  if ((d->flags & FFK_FIELD_DEFAULT_FACTORY) && !(d->flags & FFK_FIELD_HAS_DEFAULT))
    return ffk_error_set(FFK_ERR_VALUE,
                         "cannot define type `%s`: field `%s` has FFK_FIELD_DEFAULT_FACTORY without FFK_FIELD_HAS_DEFAULT",
                         key, d->name);
  if (d->type == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` has no type", key, d->name);
  f->name = copy_text(cursor, d->name);
  f->doc = copy_text(cursor, d->doc);
  f->owner_index = owner;
  f->position = position;
  f->flags = d->flags;
  f->offset = d->offset;
  f->default_value = ffk_any_none();
  ffk_schema *s = ffk_schema_parse(d->type);
  if (s == NULL) return prefix_error("cannot define type `%s`: field `%s`", key, d->name);
  f->schema = s;
  f->type_text = s->text;
  f->storage = storage_of(s);
  if (check_offset(key, f, earlier, nearlier, base_size, instance_size) != 0) return -1;
  if (!(d->flags & FFK_FIELD_HAS_DEFAULT)) return 0;
  if (d->flags & FFK_FIELD_DEFAULT_FACTORY) {
    const ffk_any *v = &d->default_value;
    if (!ffk_any_is_object(v) || !ffk_type_is_instance(v->type_index, FFK_TYPE_FUNCTION))
      return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: the default factory of field `%s` is a `%s`, not a Function",
                           key, d->name, ffk_any_type_name(v));
    f->default_value = ffk_any_object(v->v_obj);
    return 0;
  }
  if (ffk_reflect__convert(f, key, &d->default_value, &f->default_value) != 0) {
    f->default_value = ffk_any_none();
    if (!ffk_error_matches(FFK_ERR_TYPE))
      return prefix_error("cannot define type `%s`: bad default for field `%s`", key, d->name);
    /* A default of another type: kept as given, converted (and refused) when an object
       needs it, as tvm_ffi checks defaults (see FFK_FIELD_DEFAULT_UNCHECKED). */
    ffk_error_clear();
    if (ffk_any_to_owned(&d->default_value, &f->default_value) != 0) {
      f->default_value = ffk_any_none();
      return prefix_error("cannot define type `%s`: default for field `%s`", key, d->name);
    }
    f->flags |= FFK_FIELD_DEFAULT_UNCHECKED;
  }
  return 0;
}

/* A new method table of `n` entries (uninitialised items), or NULL with a MemoryError. */
static ffk_method_table *table_new(int32_t n) {
  ffk_method_table *t = ffk_mem_alloc(sizeof(ffk_method_table) + (size_t)n * sizeof(ffk_method_info *));
  if (t != NULL) {
    t->prev = NULL;
    t->generation = 0;
    t->n = n;
  }
  return t;
}

/*
 * Automatic layout (instance_size 0): every field's def offset must be 0; each is placed
 * at the next offset after `base_size` aligned for its storage, and the instance size is
 * the end rounded up to 8. Fills offsets[] and *size. 0, or -1 with a ValueError naming
 * the type and the field (a non-zero offset, a type text that does not parse).
 */
static int auto_layout(const ffk_type_def *def, size_t base_size, size_t *offsets, size_t *size) {
  size_t at = base_size;
  for (int32_t i = 0; i < def->nfields; ++i) {
    const ffk_field_def *d = &def->fields[i];
    const char *name = d->name != NULL ? d->name : "";
    if (d->offset != 0)
      return ffk_error_set(FFK_ERR_VALUE,
                           "cannot define type `%s`: field `%s` has offset %zu, but an automatic layout "
                           "(instance size 0) places every field itself (give offset 0)",
                           def->key, name, d->offset);
    if (d->type == NULL)
      return ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: field `%s` has no type", def->key, name);
    int storage = ffk_field_storage_for(d->type);
    if (storage < 0) return prefix_error("cannot define type `%s`: field `%s`", def->key, name);
    size_t align = storage_align(storage);
    at = (at + align - 1) / align * align;
    offsets[i] = at;
    at += storage_size(storage);
  }
  *size = (at + 7) / 8 * 8;
  return 0;
}

static ffk_rtype *build(const ffk_type_def *def, int32_t index) {
  const char *key = def->key;
  const ffk_rtype *base = reflected_base(def->parent_index);
  size_t base_size = base != NULL ? base->instance_size : sizeof(ffk_object);
  /* An automatic layout is resolved into a private copy of the definition with offsets filled in. */
  ffk_type_def laid_out;
  ffk_field_def *placed = NULL;
  if (def->nfields < 0 || (def->nfields > 0 && def->fields == NULL) || def->nmethods < 0 ||
      (def->nmethods > 0 && def->methods == NULL)) {
    ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: %d fields at %p, %d methods at %p", key, (int)def->nfields,
                  (const void *)def->fields, (int)def->nmethods, (const void *)def->methods);
    return NULL;
  }
  if (def->instance_size == 0) {
    size_t *offsets = ffk_mem_alloc((size_t)(def->nfields > 0 ? def->nfields : 1) * (sizeof(size_t) + sizeof *placed));
    if (offsets == NULL) return NULL;
    placed = (ffk_field_def *)(offsets + (def->nfields > 0 ? def->nfields : 1));
    laid_out = *def;
    if (auto_layout(def, base_size, offsets, &laid_out.instance_size) != 0) {
      ffk_mem_free(offsets);
      return NULL;
    }
    for (int32_t i = 0; i < def->nfields; ++i) {
      placed[i] = def->fields[i];
      placed[i].offset = offsets[i];
    }
    laid_out.fields = def->nfields > 0 ? placed : NULL;
    ffk_rtype *rt = build(&laid_out, index); /* instance_size > 0 now: one level only */
    ffk_mem_free(offsets);
    if (rt != NULL) rt->auto_layout = true;
    return rt;
  }
  if (def->instance_size < base_size) {
    ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: instance size %zu is smaller than %s's %zu", key,
                  def->instance_size, base != NULL ? ffk_type_key(base->index) : "the object header", base_size);
    return NULL;
  }
  int32_t ninherited = base != NULL ? base->nfields : 0;
  int32_t nall = ninherited + def->nfields;
  size_t texts = text_size(def->doc);
  for (int32_t i = 0; i < def->nfields; ++i) texts += text_size(def->fields[i].name) + text_size(def->fields[i].doc);
  for (int32_t i = 0; i < def->nmethods; ++i) {
    const ffk_method_def *m = &def->methods[i];
    const char *doc = m->doc != NULL ? m->doc : (m->function != NULL ? ffk_function_doc(m->function) : NULL);
    texts += text_size(m->name) + text_size(doc);
  }
  size_t size = sizeof(ffk_rtype) + (size_t)def->nfields * sizeof(ffk_field_info) +
                (size_t)nall * sizeof(ffk_field_info *) + (size_t)def->nmethods * sizeof(ffk_method_info) + texts;
  ffk_rtype *rt = ffk_mem_calloc(1, size);
  if (rt == NULL) return NULL;
  rt->own_fields = (ffk_field_info *)(rt + 1);
  rt->fields = (const ffk_field_info **)(rt->own_fields + def->nfields);
  ffk_method_info *minfo = (ffk_method_info *)(rt->fields + nall);
  char *cursor = (char *)(minfo + def->nmethods);
  rt->index = index;
  rt->parent_index = def->parent_index;
  rt->base = base;
  rt->instance_size = def->instance_size;
  rt->finalize = def->finalize;
  rt->doc = copy_text(&cursor, def->doc);
  for (int32_t i = 0; i < ninherited; ++i) rt->fields[i] = base->fields[i];
  rt->nfields = ninherited;
  for (int32_t i = 0; i < def->nfields; ++i) {
    ffk_field_info *f = &rt->own_fields[i];
    rt->nown_fields = i + 1; /* so discard() sees what this one holds */
    if (build_field(key, &def->fields[i], f, index, ninherited + i, rt->fields, rt->nfields, base_size,
                    def->instance_size, &cursor) != 0)
      goto fail;
    rt->fields[rt->nfields++] = f;
  }
  for (int32_t i = 0; i < rt->nfields; ++i)
    if (rt->fields[i]->storage >= FFK_FIELD_STORAGE_OBJECT) ++rt->object_fields;
  if ((rt->own_methods = table_new(def->nmethods)) == NULL) goto fail;
  rt->own_methods->n = 0;
  for (int32_t i = 0; i < def->nmethods; ++i) {
    const ffk_method_def *m = &def->methods[i];
    if (m->name == NULL || m->name[0] == '\0' || m->function == NULL) {
      ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: method #%d has no %s", key, (int)i,
                    m->function == NULL && m->name != NULL && m->name[0] ? "Function" : "name");
      goto fail;
    }
    for (int32_t j = 0; j < i; ++j)
      if (strcmp(def->methods[j].name, m->name) == 0) {
        ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: method `%s` is defined twice", key, m->name);
        goto fail;
      }
    ffk_method_info *mi = &minfo[i];
    mi->name = copy_text(&cursor, m->name);
    mi->doc = copy_text(&cursor, m->doc != NULL ? m->doc : ffk_function_doc(m->function));
    mi->function = m->function;
    mi->owner_index = index;
    mi->is_static = m->is_static;
    ffk_object_retain((ffk_object *)m->function);
    rt->own_methods->items[rt->own_methods->n++] = mi;
  }
  if (def->constructor != NULL) {
    ffk_object_retain((ffk_object *)def->constructor);
    rt->constructor = def->constructor;
  }
  return rt;

fail:
  discard(rt);
  return NULL;
}

static bool same_text(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether a published description `a` says what a fresh build `b` says. */
static bool same_description(const ffk_rtype *a, const ffk_rtype *b) {
  if (a->parent_index != b->parent_index || a->instance_size != b->instance_size || a->auto_layout != b->auto_layout ||
      a->nown_fields != b->nown_fields || !same_text(a->doc, b->doc) ||
      (a->constructor == NULL) != (b->constructor == NULL) || (a->finalize == NULL) != (b->finalize == NULL))
    return false;
  for (int32_t i = 0; i < a->nown_fields; ++i) {
    const ffk_field_info *x = &a->own_fields[i], *y = &b->own_fields[i];
    if (strcmp(x->name, y->name) != 0 || x->offset != y->offset || x->flags != y->flags ||
        strcmp(x->type_text, y->type_text) != 0 || !same_text(x->doc, y->doc))
      return false;
    if ((x->flags & FFK_FIELD_HAS_DEFAULT) && !(x->flags & FFK_FIELD_DEFAULT_FACTORY) &&
        !ffk_any_equal(&x->default_value, &y->default_value))
      return false;
  }
  /* The definition's methods must be there (ffk_type_add_method may have added more). */
  const ffk_method_table *t = __atomic_load_n(&a->own_methods, __ATOMIC_ACQUIRE);
  for (int32_t i = 0; i < b->own_methods->n; ++i) {
    const ffk_method_info *m = b->own_methods->items[i];
    bool found = false;
    for (int32_t j = 0; j < t->n && !found; ++j)
      found = strcmp(t->items[j]->name, m->name) == 0 && t->items[j]->is_static == m->is_static;
    if (!found) return false;
  }
  return true;
}

/* Pins what a description about to be published holds; the caller holds g_lock. 0, or -1 with a MemoryError. */
static int pin_all(ffk_rtype *rt) {
  if (pins_reserve((size_t)rt->nown_fields + (size_t)rt->own_methods->n + 1) != 0) return -1;
  for (int32_t i = 0; i < rt->nown_fields; ++i) pin_any(&rt->own_fields[i].default_value);
  for (int32_t i = 0; i < rt->own_methods->n; ++i) pin_object((ffk_object *)rt->own_methods->items[i]->function);
  pin_object((ffk_object *)rt->constructor);
  return 0;
}

/* A reflected type that descends from `index`, or -1. The caller holds g_lock. */
static int32_t reflected_descendant(int32_t index) {
  int32_t n = ffk_type_count();
  for (int32_t i = FFK_TYPE_STATIC_END; i < MAX_TYPES && i < FFK_TYPE_STATIC_END + n; ++i)
    if (g_rtypes[i] != NULL && i != index && ffk_type_is_instance(i, index)) return i;
  return -1;
}

int32_t ffk_type_define(const ffk_type_def *def) {
  if (def == NULL || def->key == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "cannot define a type: the %s is NULL", def == NULL ? "definition" : "type key");
    return -1;
  }
  int32_t index = ffk_type_register(def->key, def->parent_index);
  if (index < 0) return -1;
  if (index < FFK_TYPE_STATIC_END) {
    ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: it is a built-in type, whose layout is ffikit's", def->key);
    return -1;
  }
  ffk_rtype *rt = build(def, index);
  if (rt == NULL) return -1;
  pthread_mutex_lock(&g_lock);
  const ffk_rtype *existing = g_rtypes[index];
  if (existing != NULL) {
    bool same = same_description(existing, rt);
    pthread_mutex_unlock(&g_lock);
    discard(rt);
    if (same) return index;
    ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: it is already defined with another description", def->key);
    return -1;
  }
  int32_t child = reflected_descendant(index);
  if (child >= 0) {
    pthread_mutex_unlock(&g_lock);
    discard(rt);
    ffk_error_set(FFK_ERR_VALUE, "cannot define type `%s`: reflected type `%s` already derives from it", def->key,
                  ffk_type_key(child));
    return -1;
  }
  if (pin_all(rt) != 0) {
    pthread_mutex_unlock(&g_lock);
    discard(rt);
    return -1;
  }
  __atomic_store_n(&g_rtypes[index], rt, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return index;
}

int ffk_type_add_method(int32_t type_index, const ffk_method_def *method) {
  if (method == NULL || method->name == NULL || method->name[0] == '\0' || method->function == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot add a method to type %d: the %s is missing", (int)type_index,
                         method == NULL ? "method definition" : method->function == NULL && method->name && method->name[0] ? "Function" : "name");
  const char *doc = method->doc != NULL ? method->doc : ffk_function_doc(method->function);
  ffk_method_info *mi = ffk_mem_alloc(sizeof *mi + text_size(method->name) + text_size(doc));
  if (mi == NULL) return -1;
  char *cursor = (char *)(mi + 1);
  mi->name = copy_text(&cursor, method->name);
  mi->doc = copy_text(&cursor, doc);
  mi->function = method->function;
  mi->owner_index = type_index;
  mi->is_static = method->is_static;
  pthread_mutex_lock(&g_lock);
  ffk_rtype *rt = ffk_reflect__type(type_index) != NULL ? g_rtypes[type_index] : NULL;
  if (rt == NULL) {
    pthread_mutex_unlock(&g_lock);
    ffk_mem_free(mi);
    return ffk_error_set(FFK_ERR_VALUE, "cannot add method `%s`: type %d (%s) is not a reflected type", method->name,
                         (int)type_index, ffk_type_name(type_index));
  }
  ffk_method_table *old = rt->own_methods;
  int32_t at = old->n;
  for (int32_t i = 0; i < old->n; ++i)
    if (strcmp(old->items[i]->name, method->name) == 0) at = i;
  ffk_method_table *t = pins_reserve(1) == 0 ? table_new(at == old->n ? old->n + 1 : old->n) : NULL;
  if (t == NULL) {
    pthread_mutex_unlock(&g_lock);
    ffk_mem_free(mi);
    return -1;
  }
  for (int32_t i = 0; i < old->n; ++i) t->items[i] = old->items[i];
  t->items[at] = mi;
  t->prev = old;
  ffk_object_retain((ffk_object *)method->function);
  pin_object((ffk_object *)method->function);
  __atomic_store_n(&rt->own_methods, t, __ATOMIC_RELEASE);
  __atomic_fetch_add(&g_method_generation, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* ---- Looking up ------------------------------------------------------------------------- */

bool ffk_type_is_reflected(int32_t type_index) { return ffk_reflect__type(type_index) != NULL; }

int ffk_type_check_reflected(int32_t type_index) {
  if (ffk_reflect__type(type_index) != NULL) return 0;
  if (ffk_type_check_index(type_index) != 0) return -1;
  return ffk_error_set(FFK_ERR_VALUE, "`%s` is not a reflected type (it has no fields or constructor)",
                       ffk_type_key(type_index));
}

size_t ffk_type_instance_size(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  return rt != NULL ? rt->instance_size : 0;
}

const char *ffk_type_doc(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  return rt != NULL ? rt->doc : NULL;
}

ffk_function *ffk_type_constructor(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  return rt != NULL ? rt->constructor : NULL;
}

static int unknown_type(int32_t type_index) {
  return ffk_error_set(FFK_ERR_VALUE, "type index %d is not a registered type", (int)type_index);
}

int32_t ffk_type_num_fields(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt != NULL) return rt->nfields;
  return ffk_type_exists(type_index) ? 0 : unknown_type(type_index);
}

const ffk_field_info *ffk_type_field_at(int32_t type_index, int32_t i) {
  int32_t n = ffk_type_num_fields(type_index);
  if (n < 0) return NULL;
  if (i < 0 || i >= n) {
    ffk_error_set(FFK_ERR_INDEX, "field index %d out of range for `%s`, which has %d field%s", (int)i,
                  ffk_type_name(type_index), (int)n, n == 1 ? "" : "s");
    return NULL;
  }
  return ffk_reflect__type(type_index)->fields[i];
}

int ffk_type_find_field(int32_t type_index, const char *name, const ffk_field_info **out) {
  if (out != NULL) *out = NULL;
  if (name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_find_field: the %s is NULL", name == NULL ? "name" : "out");
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt == NULL) return ffk_type_exists(type_index) ? 0 : unknown_type(type_index);
  for (int32_t i = 0; i < rt->nfields; ++i) {
    const ffk_field_info *f = rt->fields[i];
    if (f->name[0] == name[0] && strcmp(f->name, name) == 0) {
      *out = f;
      return 1;
    }
  }
  return 0;
}

int ffk_type_get_field(int32_t type_index, const char *name, const ffk_field_info **out) {
  int found = ffk_type_find_field(type_index, name, out);
  if (found < 0) return -1;
  if (found == 0)
    return ffk_error_set(FFK_ERR_ATTRIBUTE, "`%s` object has no field `%s`", ffk_type_name(type_index), name);
  return 0;
}

/* The full method list of `rt`, rebuilt when a method was added since it was built. */
static const ffk_method_table *all_methods(ffk_rtype *rt) {
  uint64_t gen = __atomic_load_n(&g_method_generation, __ATOMIC_ACQUIRE);
  const ffk_method_table *t = __atomic_load_n(&rt->all_methods, __ATOMIC_ACQUIRE);
  if (t != NULL && t->generation == gen) return t;
  pthread_mutex_lock(&g_lock);
  gen = g_method_generation;
  ffk_method_table *cached = rt->all_methods;
  if (cached != NULL && cached->generation == gen) {
    pthread_mutex_unlock(&g_lock);
    return cached;
  }
  const ffk_rtype *chain[MAX_CHAIN];
  int32_t depth = 0, total = 0;
  for (const ffk_rtype *r = rt; r != NULL && depth < MAX_CHAIN; r = r->base) {
    chain[depth++] = r;
    total += r->own_methods->n;
  }
  ffk_method_table *fresh = table_new(total);
  if (fresh == NULL) {
    pthread_mutex_unlock(&g_lock);
    return NULL;
  }
  fresh->n = 0;
  for (int32_t d = depth - 1; d >= 0; --d) {
    const ffk_method_table *own = chain[d]->own_methods;
    for (int32_t i = 0; i < own->n; ++i) {
      int32_t at = fresh->n;
      for (int32_t j = 0; j < fresh->n; ++j)
        if (strcmp(fresh->items[j]->name, own->items[i]->name) == 0) at = j;
      fresh->items[at] = own->items[i];
      if (at == fresh->n) ++fresh->n;
    }
  }
  fresh->generation = gen;
  fresh->prev = cached;
  __atomic_store_n(&rt->all_methods, fresh, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return fresh;
}

int32_t ffk_type_num_methods(int32_t type_index) {
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt == NULL) return ffk_type_exists(type_index) ? 0 : unknown_type(type_index);
  const ffk_method_table *t = all_methods((ffk_rtype *)rt);
  return t != NULL ? t->n : -1;
}

const ffk_method_info *ffk_type_method_at(int32_t type_index, int32_t i) {
  int32_t n = ffk_type_num_methods(type_index);
  if (n < 0) return NULL;
  const ffk_method_table *t = n > 0 ? all_methods((ffk_rtype *)ffk_reflect__type(type_index)) : NULL;
  if (n > 0 && t == NULL) return NULL;
  n = t != NULL ? t->n : 0;
  if (i < 0 || i >= n) {
    ffk_error_set(FFK_ERR_INDEX, "method index %d out of range for `%s`, which has %d method%s", (int)i,
                  ffk_type_name(type_index), (int)n, n == 1 ? "" : "s");
    return NULL;
  }
  return t->items[i];
}

int ffk_type_find_method(int32_t type_index, const char *name, const ffk_method_info **out) {
  if (out != NULL) *out = NULL;
  if (name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_find_method: the %s is NULL", name == NULL ? "name" : "out");
  const ffk_rtype *rt = ffk_reflect__type(type_index);
  if (rt == NULL) return ffk_type_exists(type_index) ? 0 : unknown_type(type_index);
  for (const ffk_rtype *r = rt; r != NULL; r = r->base) {
    const ffk_method_table *t = __atomic_load_n(&r->own_methods, __ATOMIC_ACQUIRE);
    for (int32_t i = 0; i < t->n; ++i)
      if (strcmp(t->items[i]->name, name) == 0) {
        *out = t->items[i];
        return 1;
      }
  }
  return 0;
}

int ffk_type_for_each(int (*fn)(int32_t type_index, const char *key, void *ctx), void *ctx) {
  if (fn == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_type_for_each: the callback is NULL");
  for (int32_t i = 0; i < MAX_TYPES; ++i) {
    const char *key = ffk_type_key(i);
    if (key == NULL) {
      if (i >= FFK_TYPE_STATIC_END) break; /* registered indices are dense */
      continue;
    }
    int rc = fn(i, key, ctx);
    if (rc != 0) return rc;
  }
  return 0;
}

/* ---- Type attributes ----------------------------------------------------------------------- */

/*
 * Each type's attributes are an immutable table of (name, value) pairs, replaced whole
 * under g_lock by ffk_type_set_attr and published with a release store; readers take
 * no lock and write nothing shared but the found value's reference count. A replaced
 * table stays reachable from its successor (`prev`), so a reader still scanning it is
 * safe, and a replaced value stays alive until exit (its table still holds it): it is
 * pinned like every object a description holds. Tables are small (a few hooks), so a
 * scan with a first-byte check beats hashing.
 */
typedef struct attr_entry {
  const char *name; /* owned by the table */
  ffk_any value;    /* pinned: never released */
} attr_entry;

typedef struct attr_table {
  struct attr_table *prev;
  int32_t n;
  attr_entry items[];
} attr_table;

static attr_table *g_attrs[MAX_TYPES]; /* atomic access; written under g_lock */

int ffk_type_set_attr(int32_t type_index, const char *name, const ffk_any *value) {
  if (name == NULL || name[0] == '\0' || value == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot set a type attribute: the %s",
                         name == NULL ? "name is NULL" : name[0] == '\0' ? "name is empty" : "value is NULL");
  if (type_index < 0 || type_index >= MAX_TYPES || !ffk_type_exists(type_index))
    return ffk_error_set(FFK_ERR_VALUE, "cannot set attribute `%s`: type index %d is not a registered type", name,
                         (int)type_index);
  ffk_any owned;
  if (ffk_any_to_owned(value, &owned) != 0) return -1;
  size_t name_size = strlen(name) + 1;
  pthread_mutex_lock(&g_lock);
  attr_table *old = g_attrs[type_index];
  int32_t n = old != NULL ? old->n : 0, at = n;
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(old->items[i].name, name) == 0) at = i;
  int32_t fresh_n = at == n ? n + 1 : n;
  attr_table *t = pins_reserve(1) == 0 ? ffk_mem_alloc(sizeof(attr_table) + (size_t)fresh_n * sizeof(attr_entry) +
                                                       (at == n ? name_size : 0))
                                       : NULL;
  if (t == NULL) {
    pthread_mutex_unlock(&g_lock);
    ffk_any_release(&owned);
    return -1;
  }
  t->prev = old;
  t->n = fresh_n;
  for (int32_t i = 0; i < n; ++i) t->items[i] = old->items[i];
  if (at == n) {
    char *copy = (char *)&t->items[fresh_n];
    memcpy(copy, name, name_size);
    t->items[at].name = copy;
  }
  t->items[at].value = owned;
  pin_any(&owned);
  __atomic_store_n(&g_attrs[type_index], t, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

int ffk_type_get_attr(int32_t type_index, const char *name, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_get_attr: the %s is NULL", name == NULL ? "name" : "out");
  if (type_index < 0 || type_index >= MAX_TYPES || !ffk_type_exists(type_index))
    return ffk_error_set(FFK_ERR_VALUE, "cannot get attribute `%s`: type index %d is not a registered type", name,
                         (int)type_index);
  for (int32_t t = type_index, guard = 0; t >= 0 && guard < MAX_CHAIN; t = ffk_type_parent(t), ++guard) {
    const attr_table *table = __atomic_load_n(&g_attrs[t], __ATOMIC_ACQUIRE);
    if (table == NULL) continue;
    for (int32_t i = 0; i < table->n; ++i) {
      const attr_entry *e = &table->items[i];
      if (e->name[0] != name[0] || strcmp(e->name, name) != 0) continue;
      if (e->value.type_index == FFK_TYPE_NONE) return 0; /* None hides the ancestors' value */
      ffk_any__copy(out, &e->value);
      ffk_any_retain(out);
      return 1;
    }
  }
  return 0;
}

int ffk_type_get_own_attr(int32_t type_index, const char *name, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_get_own_attr: the %s is NULL", name == NULL ? "name" : "out");
  if (type_index < 0 || type_index >= MAX_TYPES || !ffk_type_exists(type_index))
    return ffk_error_set(FFK_ERR_VALUE, "cannot get attribute `%s`: type index %d is not a registered type", name,
                         (int)type_index);
  const attr_table *table = __atomic_load_n(&g_attrs[type_index], __ATOMIC_ACQUIRE);
  for (int32_t i = 0; table != NULL && i < table->n; ++i) {
    const attr_entry *e = &table->items[i];
    if (e->name[0] != name[0] || strcmp(e->name, name) != 0) continue;
    if (e->value.type_index == FFK_TYPE_NONE) return 0;
    ffk_any__copy(out, &e->value);
    ffk_any_retain(out);
    return 1;
  }
  return 0;
}

/* ---- Field write hooks ---------------------------------------------------------------------- */

/* g_write_hooks[i]: the hook of type i or NULL (atomic access, written under g_lock);
   g_nwrite_hooks counts the non-NULL ones, so a write costs one load while none is set. */
static ffk_field_write_hook g_write_hooks[MAX_TYPES];
static int32_t g_nwrite_hooks;

int ffk_type_set_field_write_hook(int32_t type_index, ffk_field_write_hook hook) {
  if (type_index < 0 || type_index >= MAX_TYPES || !ffk_type_exists(type_index))
    return ffk_error_set(FFK_ERR_VALUE, "cannot set a field write hook: type index %d is not a registered type",
                         (int)type_index);
  pthread_mutex_lock(&g_lock);
  ffk_field_write_hook old = g_write_hooks[type_index];
  __atomic_store_n(&g_write_hooks[type_index], hook, __ATOMIC_RELEASE);
  int32_t delta = (hook != NULL) - (old != NULL); /* +1 set, -1 removed, 0 replaced */
  if (delta != 0) __atomic_add_fetch(&g_nwrite_hooks, delta, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

void ffk_reflect__field_written(ffk_object *obj, const ffk_field_info *field) {
  if (FFK_LIKELY(__atomic_load_n(&g_nwrite_hooks, __ATOMIC_ACQUIRE) == 0)) return;
  int32_t i = obj->type_index;
  for (int depth = 0; i >= 0 && i < MAX_TYPES && depth < MAX_CHAIN; ++depth, i = ffk_type_parent(i)) {
    ffk_field_write_hook hook = __atomic_load_n(&g_write_hooks[i], __ATOMIC_ACQUIRE);
    if (hook != NULL) {
      hook(obj, field);
      return;
    }
  }
}
