/*
 * reflect_convert.c - a value converted to a reflected field's type, in the form the
 * field stores (reflect_internal.h: ffk_reflect__convert). Both the registry (a field's
 * default, reflect.c) and the objects (construction and writes, reflect_object.c) convert,
 * so the rule lives here, below both, and neither file calls the other back for it.
 */
#include "reflect_internal.h"

#include <string.h>

/* Replaces the pending conversion error with the field message, keeping its kind (MemoryError as is). */
static FFK_NOINLINE int field_mismatch(const ffk_field_info *f, const char *type_key) {
  ffk_error *err = ffk_error_fetch();
  if (err == NULL) return -1;
  const char *kind = ffk_error_kind(err);
  if (strcmp(kind, FFK_ERR_TYPE) == 0)
    ffk_error_set(FFK_ERR_TYPE, "Mismatched type on field `%s` of `%s`: %s", f->name, type_key,
                  ffk_error_message(err));
  else if (strcmp(kind, FFK_ERR_MEMORY) != 0)
    ffk_error_set(kind, "Bad value for field `%s` of `%s`: %s", f->name, type_key, ffk_error_message(err));
  else {
    ffk_error_restore(err);
    return -1;
  }
  ffk_object_release((ffk_object *)err);
  return -1;
}

int ffk_reflect__convert(const ffk_field_info *f, const char *type_key, const ffk_any *value, ffk_any *slot) {
  ffk_any tmp = ffk_any_none();
  *slot = ffk_any_none();
  int rc = ffk_schema_convert(f->schema, value, &tmp);
  if (rc < 0) return field_mismatch(f, type_key);
  const ffk_any *v = rc == 1 ? &tmp : value;
  switch (f->storage) {
    case FFK_FIELD_STORAGE_INT:
      *slot = ffk_any_int(v->v_int);
      break;
    case FFK_FIELD_STORAGE_FLOAT:
      *slot = ffk_any_float(v->v_float);
      break;
    case FFK_FIELD_STORAGE_BOOL:
      *slot = ffk_any_bool(v->v_int != 0);
      break;
    case FFK_FIELD_STORAGE_OBJECT:
      if (v->type_index == FFK_TYPE_NONE) break;
      if (ffk_any_is_object(v)) {
        if (rc == 1) {
          *slot = tmp;
          return 0;
        }
        *slot = ffk_any_object(v->v_obj);
        break;
      } else {
        /* An inline or borrowed str/bytes: fields hold them as objects. */
        const char *data;
        size_t size;
        bool is_bytes = v->type_index == FFK_TYPE_SMALL_BYTES || v->type_index == FFK_TYPE_BYTE_ARRAY_PTR;
        ffk_object *o = NULL;
        if ((is_bytes ? ffk_any_as_bytes(v, &data, &size) : ffk_any_as_str(v, &data, &size)) == 0)
          o = is_bytes ? (ffk_object *)ffk_bytes_new(data, size) : (ffk_object *)ffk_string_new(data, size);
        ffk_any_release(&tmp);
        if (o == NULL) return field_mismatch(f, type_key);
        *slot = ffk_any_object_steal(o);
        return 0;
      }
    default:
      if (rc == 1) {
        *slot = tmp;
        return 0;
      }
      if (ffk_any_to_owned(v, slot) != 0) return field_mismatch(f, type_key);
      return 0;
  }
  ffk_any_release(&tmp);
  return 0;
}
