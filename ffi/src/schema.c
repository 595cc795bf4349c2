/*
 * schema.c - type schemas and typed-function signatures: parsing and checking values.
 *
 * A schema is a tree of nodes, each one allocation holding the node and its canonical
 * text. A signature ("(x: int, Array<float>) -> int") is an array of parameter schemas
 * with their display names, a return schema and the text used in messages
 * ("f(x: int, 1: Array<float>) -> int"). Both are immutable after parsing.
 *
 * Converting checks a value against a node; plain kinds are handled here, object kinds
 * go to the converter slot of the type registry (the containers register theirs), or
 * get an instance check when no slot is set.
 */
#include "internal.h"

#include <ffikit/schema.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Deeper nesting than this is refused, so hostile text cannot exhaust the stack. */
#define MAX_NESTING 32

/* ---- Parsing --------------------------------------------------------------------------- */

typedef struct parser {
  const char *text; /* the whole text, for messages */
  const char *p;    /* the next character */
  const char *what; /* "type" or "signature", for messages */
} parser;

static void skip_space(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ++ps->p;
}

static int parse_error(const parser *ps, const char *problem) {
  return ffk_error_set(FFK_ERR_VALUE, "bad %s `%s`: %s at offset %d", ps->what, ps->text, problem,
                       (int)(ps->p - ps->text));
}

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* Reads a name (letters, digits, '_' and '.'); returns its length (0 when there is none). */
static size_t read_name(parser *ps, const char **start) {
  skip_space(ps);
  *start = ps->p;
  while (is_name_char(*ps->p)) ++ps->p;
  return (size_t)(ps->p - *start);
}

typedef struct builtin {
  const char *name;  /* as written */
  const char *canon; /* as printed */
  int32_t type_index;
  int8_t min_params, max_params;
} builtin;

static const builtin k_builtins[] = {
    {"int", "int", FFK_TYPE_INT, 0, 0},
    {"float", "float", FFK_TYPE_FLOAT, 0, 0},
    {"bool", "bool", FFK_TYPE_BOOL, 0, 0},
    {"str", "str", FFK_TYPE_STRING, 0, 0},
    {"bytes", "bytes", FFK_TYPE_BYTES, 0, 0},
    {"Device", "Device", FFK_TYPE_DEVICE, 0, 0},
    {"dtype", "dtype", FFK_TYPE_DATATYPE, 0, 0},
    {"DataType", "dtype", FFK_TYPE_DATATYPE, 0, 0},
    {"ptr", "ptr", FFK_TYPE_OPAQUE_PTR, 0, 0},
    {"None", "None", FFK_TYPE_NONE, 0, 0},
    {"Any", "Any", FFK_SCHEMA_ANY, 0, 0},
    {"Object", "Object", FFK_TYPE_OBJECT, 0, 0},
    {"Optional", "Optional", FFK_SCHEMA_OPTIONAL, 1, 1},
    {"Array", "Array", FFK_TYPE_ARRAY, 0, 1},
    {"List", "List", FFK_TYPE_LIST, 0, 1},
    {"Tuple", "Tuple", FFK_TYPE_TUPLE, 0, 0},
    {"Map", "Map", FFK_TYPE_MAP, 0, 2},
    {"Dict", "Dict", FFK_TYPE_DICT, 0, 2},
};

/* Resolves a type name: a builtin, a registered key ("mylib.Point"), or a static object type's name ("Tensor"). */
static int resolve(parser *ps, const char *name, size_t len, builtin *out) {
  for (size_t i = 0; i < sizeof k_builtins / sizeof k_builtins[0]; ++i) {
    if (strlen(k_builtins[i].name) == len && memcmp(k_builtins[i].name, name, len) == 0) {
      *out = k_builtins[i];
      return 0;
    }
  }
  char key[300];
  int32_t index;
  if (len < 256) {
    snprintf(key, sizeof key, "%.*s", (int)len, name);
    int found = ffk_type_lookup(key, &index);
    if (found == 0) {
      snprintf(key, sizeof key, "ffikit.%.*s", (int)len, name);
      found = ffk_type_lookup(key, &index);
    }
    if (found < 0) return -1;
    if (found == 1 && index >= FFK_TYPE_OBJECT_BEGIN) {
      *out = (builtin){NULL, ffk_type_key(index), index, 0, 0};
      /* Static types print by their short name, registered ones by their key. */
      if (index < FFK_TYPE_STATIC_END) out->canon = ffk_type_name(index);
      return 0;
    }
  }
  ps->p = name;
  char problem[300];
  snprintf(problem, sizeof problem, "unknown type `%.*s`", (int)(len < 256 ? len : 256), name);
  return parse_error(ps, problem);
}

static ffk_schema *parse_type(parser *ps, int depth) {
  if (depth > MAX_NESTING) {
    parse_error(ps, "types nest too deeply");
    return NULL;
  }
  const char *name;
  size_t len = read_name(ps, &name);
  if (len == 0) {
    parse_error(ps, "expected a type");
    return NULL;
  }
  builtin b = {0};
  if (resolve(ps, name, len, &b) != 0) return NULL;

  ffk_schema *params[FFK_SCHEMA_MAX_PARAMS] = {NULL, NULL};
  int32_t n = 0;
  skip_space(ps);
  if (*ps->p == '<') {
    ++ps->p;
    for (;;) {
      if (n == FFK_SCHEMA_MAX_PARAMS) {
        parse_error(ps, "too many type parameters");
        goto fail;
      }
      if ((params[n] = parse_type(ps, depth + 1)) == NULL) goto fail;
      ++n;
      skip_space(ps);
      if (*ps->p == ',') {
        ++ps->p;
        continue;
      }
      if (*ps->p == '>') {
        ++ps->p;
        break;
      }
      parse_error(ps, "expected ',' or '>'");
      goto fail;
    }
  }
  if (n != b.max_params && !(n == 0 && b.min_params == 0)) {
    char problem[160];
    if (b.min_params == b.max_params)
      snprintf(problem, sizeof problem, "`%s` takes %d type parameter%s but got %d", b.canon, b.max_params,
               b.max_params == 1 ? "" : "s", (int)n);
    else
      snprintf(problem, sizeof problem, "`%s` takes 0 or %d type parameters but got %d", b.canon, b.max_params,
               (int)n);
    ps->p = name;
    parse_error(ps, problem);
    goto fail;
  }

  /* The node and its text in one block. */
  ffk_buf text = {0};
  int rc = ffk_buf__append(&text, b.canon, strlen(b.canon));
  for (int32_t i = 0; rc == 0 && i < n; ++i)
    rc = ffk_buf__appendf(&text, "%s%s", i == 0 ? "<" : ", ", params[i]->text);
  if (rc == 0 && n > 0) rc = ffk_buf__append(&text, ">", 1);
  ffk_schema *s = rc == 0 ? ffk_mem_alloc(sizeof(ffk_schema) + text.size + 1) : NULL;
  if (s == NULL) {
    ffk_buf__free(&text);
    goto fail;
  }
  char *copy = (char *)(s + 1);
  memcpy(copy, text.data, text.size + 1);
  ffk_buf__free(&text);
  s->type_index = b.type_index;
  s->nparams = n;
  s->params[0] = params[0];
  s->params[1] = params[1];
  s->text = copy;
  return s;

fail:
  for (int32_t i = 0; i < FFK_SCHEMA_MAX_PARAMS; ++i) ffk_schema_free(params[i]);
  return NULL;
}

ffk_schema *ffk_schema_parse(const char *text) {
  if (text == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_schema_parse: the text is NULL");
    return NULL;
  }
  parser ps = {text, text, "type"};
  ffk_schema *s = parse_type(&ps, 0);
  if (s == NULL) return NULL;
  skip_space(&ps);
  if (*ps.p != '\0') {
    parse_error(&ps, "unexpected text after the type");
    ffk_schema_free(s);
    return NULL;
  }
  return s;
}

void ffk_schema_free(ffk_schema *schema) {
  if (schema == NULL) return;
  for (int32_t i = 0; i < schema->nparams; ++i) ffk_schema_free((ffk_schema *)schema->params[i]);
  ffk_mem_free(schema);
}

/* ---- Accepting one declared type for another ---------------------------------------- */

static bool is_container(int32_t t) {
  return t == FFK_TYPE_ARRAY || t == FFK_TYPE_LIST || t == FFK_TYPE_TUPLE || t == FFK_TYPE_MAP ||
         t == FFK_TYPE_DICT;
}

/* An object a field of type Object holds: str and bytes are objects to C, but a user
 * annotating Object means a reflected object, a container, a Function or a Tensor. */
static bool is_object_kind(int32_t t) {
  return t >= FFK_TYPE_OBJECT_BEGIN && t != FFK_TYPE_STRING && t != FFK_TYPE_BYTES;
}

/* Whether container kind `d` accepts kind `g`: Array is the abstract sequence (List and
 * Tuple are ones), Map the abstract mapping (Dict is one); the rest only themselves. */
static bool container_kind_accepts(int32_t d, int32_t g) {
  if (d == g) return true;
  if (d == FFK_TYPE_ARRAY) return g == FFK_TYPE_LIST || g == FFK_TYPE_TUPLE;
  return d == FFK_TYPE_MAP && g == FFK_TYPE_DICT;
}

static const ffk_schema k_any_schema = {FFK_SCHEMA_ANY, 0, {NULL, NULL}, "Any"};

static bool accepts(const ffk_schema *d, const ffk_schema *g) {
  int32_t dt = d->type_index, gt = g->type_index;
  if (dt == FFK_SCHEMA_ANY) return true;
  if (dt == FFK_SCHEMA_OPTIONAL) return gt == FFK_SCHEMA_OPTIONAL && accepts(d->params[0], g->params[0]);
  if (dt == FFK_TYPE_OBJECT)
    return is_object_kind(gt) || (gt == FFK_SCHEMA_OPTIONAL && is_object_kind(g->params[0]->type_index));
  if (is_container(dt)) {
    if (!container_kind_accepts(dt, gt)) return false;
    /* Parameters are all or none (the parser's rule), and none means Any elements. */
    for (int32_t i = 0; i < d->nparams; ++i)
      if (!accepts(d->params[i], i < g->nparams ? g->params[i] : &k_any_schema)) return false;
    return true;
  }
  if (dt == gt) return true;
  return dt >= FFK_TYPE_OBJECT_BEGIN && gt >= FFK_TYPE_OBJECT_BEGIN && ffk_type_is_instance(gt, dt);
}

int ffk_schema_accepts(const char *declared, const char *given) {
  ffk_schema *d = ffk_schema_parse(declared);
  if (d == NULL) return -1;
  ffk_schema *g = ffk_schema_parse(given);
  if (g == NULL) {
    ffk_schema_free(d);
    return -1;
  }
  int rc = accepts(d, g) ? 1 : 0;
  ffk_schema_free(g);
  ffk_schema_free(d);
  return rc;
}

/* ---- Signatures ----------------------------------------------------------------------- */

void ffk_signature__free(ffk_signature *sig) {
  if (sig == NULL) return;
  for (int32_t i = 0; i < sig->nparams; ++i) ffk_schema_free(sig->params[i]);
  ffk_schema_free(sig->ret);
  ffk_mem_free(sig->text);
  ffk_mem_free(sig);
}

ffk_signature *ffk_signature__parse(const char *fn_name, const char *text) {
  if (text == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "the signature of `%s` is NULL", fn_name);
    return NULL;
  }
  parser ps = {text, text, "signature"};
  size_t n = 0;
  for (const char *c = text; *c; ++c) n += *c == ',';
  /* At most one parameter more than there are commas (commas inside <> overcount: harmless).
     One block holds the signature, the parameter schemas, the name pointers and the names
     (substrings of `text`, so `text`'s length plus a NUL each is room enough). */
  size_t slots = n + 1, len = strlen(text);
  ffk_signature *sig =
      ffk_mem_calloc(1, sizeof(ffk_signature) + slots * (sizeof(ffk_schema *) + sizeof(char *)) + len + slots);
  if (sig == NULL) return NULL;
  sig->names = (const char **)(sig->params + slots);
  char *name_chars = (char *)(sig->names + slots);
  ffk_buf display = {0};
  if (ffk_buf__appendf(&display, "%s(", fn_name) != 0) goto fail;

  skip_space(&ps);
  if (*ps.p != '(') {
    parse_error(&ps, "expected '('");
    goto fail;
  }
  ++ps.p;
  skip_space(&ps);
  if (*ps.p == ')') {
    ++ps.p;
  } else {
    for (;;) {
      /* An optional "name:" before the type. */
      const char *save = ps.p, *pname;
      size_t plen = read_name(&ps, &pname);
      skip_space(&ps);
      if (plen > 0 && *ps.p == ':') {
        ++ps.p;
      } else {
        ps.p = save;
        plen = 0;
      }
      ffk_schema *s = parse_type(&ps, 0);
      if (s == NULL) goto fail;
      int32_t i = sig->nparams++;
      sig->params[i] = s;
      if (plen > 0) {
        memcpy(name_chars, pname, plen);
        name_chars[plen] = '\0';
        sig->names[i] = name_chars;
        name_chars += plen + 1;
        ++sig->nnamed;
      }
      int rc = plen > 0 ? ffk_buf__appendf(&display, "%s%.*s: %s", i ? ", " : "", (int)plen, pname, s->text)
                        : ffk_buf__appendf(&display, "%s%d: %s", i ? ", " : "", (int)i, s->text);
      if (rc != 0) goto fail;
      skip_space(&ps);
      if (*ps.p == ',') {
        ++ps.p;
        continue;
      }
      if (*ps.p == ')') {
        ++ps.p;
        break;
      }
      parse_error(&ps, "expected ',' or ')'");
      goto fail;
    }
  }
  skip_space(&ps);
  if (ps.p[0] == '-' && ps.p[1] == '>') {
    ps.p += 2;
    if ((sig->ret = parse_type(&ps, 0)) == NULL) goto fail;
    skip_space(&ps);
  }
  if (*ps.p != '\0') {
    parse_error(&ps, "unexpected text after the signature");
    goto fail;
  }
  if (ffk_buf__appendf(&display, ") -> %s", sig->ret ? sig->ret->text : "Any") != 0) goto fail;
  sig->text = display.data;
  return sig;

fail:
  ffk_buf__free(&display);
  ffk_signature__free(sig);
  return NULL;
}

/* ---- Converting ------------------------------------------------------------------------ */

static int mismatch(const ffk_schema *s, const ffk_any *v) {
  return ffk_error_set(FFK_ERR_TYPE, "expected `%s` but got `%s`", s->text, ffk_any_type_name(v));
}

/* ffk_schema_convert's work, into *out (None on entry, None again unless it returns 1). */
static int convert(const ffk_schema *s, const ffk_any *v, ffk_any *out) {
  if (FFK_UNLIKELY(s == NULL || v == NULL))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_schema_convert: the %s is NULL", s == NULL ? "schema" : "value");
  int32_t t = v->type_index;
  switch (s->type_index) {
    case FFK_SCHEMA_ANY:
      return 0;
    case FFK_SCHEMA_OPTIONAL: {
      if (t == FFK_TYPE_NONE) return 0;
      int rc = convert(s->params[0], v, out);
      if (rc >= 0 || !ffk_error_matches(FFK_ERR_TYPE)) return rc;
      /* A plain mismatch names the Optional; one deeper inside keeps its detail. */
      char plain[512];
      snprintf(plain, sizeof plain, "expected `%s` but got `%s`", s->params[0]->text, ffk_any_type_name(v));
      if (strcmp(ffk_error_message(ffk_error_peek_borrow()), plain) != 0) return -1;
      return mismatch(s, v);
    }
    case FFK_TYPE_NONE:
      return t == FFK_TYPE_NONE ? 0 : mismatch(s, v);
    case FFK_TYPE_INT:
      if (t == FFK_TYPE_INT) return 0;
      if (t != FFK_TYPE_BOOL) return mismatch(s, v);
      *out = ffk_any_int(v->v_int);
      return 1;
    case FFK_TYPE_FLOAT:
      if (t == FFK_TYPE_FLOAT) return 0;
      if (t != FFK_TYPE_INT && t != FFK_TYPE_BOOL) return mismatch(s, v);
      *out = ffk_any_float((double)v->v_int);
      return 1;
    case FFK_TYPE_BOOL:
      if (t == FFK_TYPE_BOOL) return 0;
      if (t != FFK_TYPE_INT) return mismatch(s, v);
      *out = ffk_any_bool(v->v_int != 0);
      return 1;
    case FFK_TYPE_STRING:
      return t == FFK_TYPE_SMALL_STR || t == FFK_TYPE_STRING || t == FFK_TYPE_RAW_STR ? 0 : mismatch(s, v);
    case FFK_TYPE_BYTES:
      return t == FFK_TYPE_SMALL_BYTES || t == FFK_TYPE_BYTES || t == FFK_TYPE_BYTE_ARRAY_PTR ? 0 : mismatch(s, v);
    case FFK_TYPE_OPAQUE_PTR:
      return t == FFK_TYPE_OPAQUE_PTR || t == FFK_TYPE_NONE ? 0 : mismatch(s, v);
    case FFK_TYPE_DEVICE: {
      if (t == FFK_TYPE_DEVICE) return 0;
      if (t != FFK_TYPE_SMALL_STR && t != FFK_TYPE_STRING && t != FFK_TYPE_RAW_STR) return mismatch(s, v);
      DLDevice d;
      if (ffk_any_as_device(v, &d) != 0) return -1;
      *out = ffk_any_device(d);
      return 1;
    }
    case FFK_TYPE_DATATYPE: {
      if (t == FFK_TYPE_DATATYPE) return 0;
      if (t != FFK_TYPE_SMALL_STR && t != FFK_TYPE_STRING && t != FFK_TYPE_RAW_STR) return mismatch(s, v);
      DLDataType d;
      if (ffk_any_as_dtype(v, &d) != 0) return -1;
      *out = ffk_any_dtype(d);
      return 1;
    }
    default: {
      ffk_convert_fn slot = ffk_type__convert_slot(s->type_index);
      if (slot != NULL) {
        int rc = slot(s, v, out);
        if (rc < 0) {
          ffk_any_release(out);
          *out = ffk_any_none();
        }
        return rc;
      }
      return ffk_any_is_object(v) && ffk_type_is_instance(t, s->type_index) ? 0 : mismatch(s, v);
    }
  }
}

/* Writes *out only when it returns 1 (the new value) or -1 (None): schema.h promises a caller
 * that already holds a value there that a 0 return leaves it alone. */
int ffk_schema_convert(const ffk_schema *s, const ffk_any *v, ffk_any *out) {
  ffk_any result = ffk_any_none();
  int rc = convert(s, v, &result);
  if (rc != 0) *out = result;
  return rc;
}
