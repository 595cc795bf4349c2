/*
 * reflect_internal.h - what the two halves of reflection share (not installed):
 * reflect.c keeps the type descriptions, reflect_object.c makes and changes objects
 * from them.
 *
 * A description (ffk_rtype) is immutable once published, except for its method
 * tables, which ffk_type_add_method replaces whole (release store; the replaced table
 * stays reachable from the new one, so a reader still walking it is safe and the
 * leak checker sees it). Descriptions are never freed.
 */
#ifndef FFIKIT_FFI_REFLECT_INTERNAL_H
#define FFIKIT_FFI_REFLECT_INTERNAL_H

#include "internal.h"

#include <ffikit/reflect.h>

/* A list of methods: a type's own, or its full list (inherited included). Immutable once published. */
typedef struct ffk_method_table {
  struct ffk_method_table *prev; /* the table this one replaced, kept reachable */
  uint64_t generation;           /* full lists: the method generation they were built for */
  int32_t n;
  const ffk_method_info *items[];
} ffk_method_table;

typedef struct ffk_rtype {
  int32_t index;
  int32_t parent_index;               /* the registry parent (reflected or not) */
  const struct ffk_rtype *base;       /* the nearest reflected ancestor, or NULL */
  size_t instance_size;
  int32_t nfields;                    /* inherited included */
  const ffk_field_info **fields;      /* nfields entries, parents' first */
  int32_t nown_fields;
  ffk_field_info *own_fields;         /* this type's own, in order */
  ffk_method_table *own_methods;      /* atomic access */
  ffk_method_table *all_methods;      /* atomic access: a cache, rebuilt when stale */
  ffk_function *constructor;          /* pinned, or NULL */
  ffk_finalize_fn finalize;
  const char *doc;
  uint32_t object_fields;             /* how many fields own a reference (object or any storage) */
  bool auto_layout;                   /* laid out by ffikit (ffk_type_def.instance_size 0) */
} ffk_rtype;

/* The description of `type_index`, or NULL (acquire load, no lock). */
const ffk_rtype *ffk_reflect__type(int32_t type_index);

/* Converts `value` to field `f`'s type and writes the owned result to `slot` (an ffk_any,
 * uninitialised): what a field of the field's storage holds, as an ffk_any (a str value
 * as a String object, None for a NULL object). `type_key` names the type in messages.
 * Returns 0, or -1 with the field message. */
int ffk_reflect__convert(const ffk_field_info *f, const char *type_key, const ffk_any *value, ffk_any *slot);

/* Calls the field write hook of obj's type (ffk_type_set_field_write_hook), if any: after
 * a successful field write, with no lock held. */
void ffk_reflect__field_written(ffk_object *obj, const ffk_field_info *field);

#endif /* FFIKIT_FFI_REFLECT_INTERNAL_H */
