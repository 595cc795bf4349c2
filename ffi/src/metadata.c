/*
 * metadata.c - a Function's metadata as JSON: its type schema, name, arity, parameter
 * names and doc, in the one text Python and Rust both parse.
 *
 * The type schema follows tvm_ffi's JSON form ({"type": ..., "args": [...]}, a typed
 * function as {"type":"ffi.Function","named_args":{"return":[R],"params":[...]}}), so
 * tools written against tvm_ffi's metadata read ours; it is nested in the metadata as a
 * JSON string, as tvm_ffi nests it.
 *
 * We only ever write JSON, of a fixed shape, so a small escaper suffices: a JSON library
 * (jansson, json-c) would be a compiled dependency that the sdist would have to vendor,
 * as it may not need Debian's -dev packages. The escaper writes every byte below 0x20,
 * '"' and '\\' escaped and passes the rest through (the texts are UTF-8).
 */
#include "internal.h"

#include <ffikit/function.h>
#include <ffikit/schema.h>
#include <ffikit/string.h>

#include <stdio.h>
#include <string.h>

/* Appends `s` (n bytes) as a JSON string literal, quotes included. */
static int append_json_string(ffk_buf *b, const char *s, size_t n) {
  if (ffk_buf__append(b, "\"", 1) != 0) return -1;
  size_t run = 0; /* bytes copied as they are, flushed before each escape */
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char hex[8];
    switch (c) {
      case '"': esc = "\\\""; break;
      case '\\': esc = "\\\\"; break;
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      case '\t': esc = "\\t"; break;
      case '\b': esc = "\\b"; break;
      case '\f': esc = "\\f"; break;
      default:
        if (c < 0x20) {
          snprintf(hex, sizeof hex, "\\u%04x", c);
          esc = hex;
        }
    }
    if (esc == NULL) {
      ++run;
      continue;
    }
    if (ffk_buf__append(b, s + i - run, run) != 0 || ffk_buf__append(b, esc, strlen(esc)) != 0) return -1;
    run = 0;
  }
  if (ffk_buf__append(b, s + n - run, run) != 0) return -1;
  return ffk_buf__append(b, "\"", 1);
}

static int append_cstr(ffk_buf *b, const char *s) { return ffk_buf__append(b, s, strlen(s)); }

/* The tvm_ffi spelling of a schema node's type. */
static const char *json_type_name(const ffk_schema *s, char *scratch, size_t cap) {
  switch (s->type_index) {
    case FFK_SCHEMA_ANY: return "Any";
    case FFK_SCHEMA_OPTIONAL: return "Optional";
    case FFK_TYPE_NONE: return "None";
    case FFK_TYPE_INT: return "int";
    case FFK_TYPE_FLOAT: return "float";
    case FFK_TYPE_BOOL: return "bool";
    case FFK_TYPE_DEVICE: return "Device";
    case FFK_TYPE_DATATYPE: return "DataType";
    case FFK_TYPE_OPAQUE_PTR: return "void*";
    case FFK_TYPE_STRING: return "ffi.String";
    case FFK_TYPE_BYTES: return "ffi.Bytes";
    case FFK_TYPE_TUPLE: return "Tuple";
    default: break;
  }
  if (s->type_index >= FFK_TYPE_STATIC_END) return ffk_type_key(s->type_index);
  /* The static object types: "ffi." and their short name ("ffi.Array", "ffi.Tensor"). */
  snprintf(scratch, cap, "ffi.%s", ffk_type_name(s->type_index));
  return scratch;
}

static int append_schema(ffk_buf *b, const ffk_schema *s) {
  char scratch[64];
  const char *type = json_type_name(s, scratch, sizeof scratch);
  if (append_cstr(b, "{\"type\":") != 0 || append_json_string(b, type, strlen(type)) != 0) return -1;
  if (s->nparams > 0) {
    if (append_cstr(b, ",\"args\":[") != 0) return -1;
    for (int32_t i = 0; i < s->nparams; ++i)
      if ((i > 0 && append_cstr(b, ",") != 0) || append_schema(b, s->params[i]) != 0) return -1;
    if (append_cstr(b, "]") != 0) return -1;
  }
  return append_cstr(b, "}");
}

/* The type schema of a Function (untyped when sig is NULL). */
static int append_function_schema(ffk_buf *b, const ffk_signature *sig) {
  if (sig == NULL) return append_cstr(b, "{\"type\":\"ffi.Function\"}");
  if (append_cstr(b, "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[") != 0) return -1;
  if (sig->ret != NULL ? append_schema(b, sig->ret) != 0 : append_cstr(b, "{\"type\":\"Any\"}") != 0) return -1;
  if (append_cstr(b, "],\"params\":[") != 0) return -1;
  for (int32_t i = 0; i < sig->nparams; ++i)
    if ((i > 0 && append_cstr(b, ",") != 0) || append_schema(b, sig->params[i]) != 0) return -1;
  return append_cstr(b, "]}}");
}

/* The parameter names as the signature stores them; null for an unnamed parameter. */
static int append_arg_names(ffk_buf *b, const ffk_function *f, int32_t nparams) {
  if (append_cstr(b, "[") != 0) return -1;
  for (int32_t i = 0; i < nparams; ++i) {
    const char *name;
    int named = ffk_function_param_name(f, i, &name); /* 1 or 0: f is typed and i in range */
    assert(named >= 0);
    if (i > 0 && append_cstr(b, ",") != 0) return -1;
    if (named ? append_json_string(b, name, strlen(name)) != 0 : append_cstr(b, "null") != 0) return -1;
  }
  return append_cstr(b, "]");
}

int ffk_function_metadata(const ffk_function *f, ffk_any *out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot give a Function's metadata: the output is NULL");
  *out = ffk_any_none();
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot give a Function's metadata: the Function is NULL");
  const ffk_signature *sig = ffk_function__sig(f);
  ffk_buf schema = {0}, meta = {0};
  int rc = append_function_schema(&schema, sig);
  if (rc == 0) rc = append_cstr(&meta, "{\"type_schema\":");
  if (rc == 0) rc = append_json_string(&meta, schema.data, schema.size);
  if (rc == 0) rc = append_cstr(&meta, ",\"name\":");
  if (rc == 0) rc = append_json_string(&meta, ffk_function_name(f), strlen(ffk_function_name(f)));
  if (rc == 0 && sig != NULL) rc = ffk_buf__appendf(&meta, ",\"arity\":%d,\"arg_names\":", (int)sig->nparams);
  if (rc == 0 && sig != NULL) rc = append_arg_names(&meta, f, sig->nparams);
  const char *doc = ffk_function_doc(f);
  if (rc == 0 && doc != NULL) rc = append_cstr(&meta, ",\"doc\":");
  if (rc == 0 && doc != NULL) rc = append_json_string(&meta, doc, strlen(doc));
  if (rc == 0) rc = append_cstr(&meta, "}");
  if (rc == 0) rc = ffk_any_str(meta.data, meta.size, out);
  ffk_buf__free(&schema);
  ffk_buf__free(&meta);
  return rc;
}

int ffk_function_global_metadata(const char *name, ffk_any *out) {
  if (out != NULL) *out = ffk_any_none();
  if (name == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot give a global function's metadata: the %s is NULL",
                         name == NULL ? "name" : "output");
  ffk_function *f;
  int found = ffk_function_get_global(name, &f);
  if (found < 0) return -1;
  if (found == 0)
    return ffk_error_set(FFK_ERR_RUNTIME, "cannot give the metadata of global function `%s`: it is not registered",
                         name);
  int rc = ffk_function_metadata(f, out);
  ffk_object_release((ffk_object *)f);
  return rc;
}
