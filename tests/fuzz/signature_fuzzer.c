/*
 * tests/fuzz/signature_fuzzer.c - the typed-signature parser behind
 * ffk_function_new_typed, the schema parser it uses, and ffk_args_unpack formats.
 *
 * Input: byte 0 picks the entry point and the number of call arguments, the next bytes
 * pick each argument from a palette of values, the rest is the text (NUL-terminated copy).
 * Properties:
 *  - every parser succeeds or fails with a ValueError (args_unpack: Value/TypeError);
 *  - a schema's canonical text parses again to a schema with the same canonical text;
 *  - a typed Function's printed signature is NUL-terminated and names the function; a
 *    call either succeeds or fails with a Type/ValueError, and its context deleter runs
 *    exactly once;
 *  - args_unpack succeeds only with a count inside what the format allows, stores valid
 *    outputs (a NUL-terminated string for 's', the argument itself for 'a' and 'o');
 *  - no object stays alive.
 */
#include "fuzz_common.h"

#include <ffikit/array.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/schema.h>
#include <ffikit/string.h>

enum { MAX_ARGS = 32, PALETTE = 16 };

static const char *const kValueError[] = {FFK_ERR_VALUE, NULL};
static const char *const kTypeOrValueError[] = {FFK_ERR_TYPE, FFK_ERR_VALUE, NULL};

static int echo_first(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  if (nargs > 0) return ffk_any_to_owned(&args[0], result);
  return 0;
}

static int deletes;
static void count_delete(void *context) {
  (void)context;
  ++deletes;
}

/* A palette value (owned; release it with ffk_any_release). */
static ffk_any make_arg(uint8_t which) {
  ffk_any v = ffk_any_none();
  switch (which % PALETTE) {
    case 0: return ffk_any_none();
    case 1: return ffk_any_int(-3);
    case 2: return ffk_any_bool(true);
    case 3: return ffk_any_float(2.5);
    case 4: ffk_any_cstr("cuda:1", &v); return v;
    case 5: ffk_any_cstr("float32", &v); return v;
    case 6: ffk_any_cstr("a longer string, not inline", &v); return v;
    case 7: return ffk_any_dtype(ffk_dtype(kDLFloat, 16, 1));
    case 8: return ffk_any_device(ffk_device(kDLCUDA, 2));
    case 9: return ffk_any_raw_str("int");
    case 10: {
      ffk_any items[2] = {ffk_any_int(1), ffk_any_int(2)};
      return ffk_any_object_steal((ffk_object *)ffk_array_new(items, 2));
    }
    case 11: {
      ffk_any items[2] = {ffk_any_int(1), ffk_any_raw_str("x")};
      return ffk_any_object_steal((ffk_object *)ffk_list_from_items(items, 2));
    }
    case 12: {
      ffk_any k = ffk_any_raw_str("a"), val = ffk_any_float(1.0);
      return ffk_any_object_steal((ffk_object *)ffk_map_from_pairs(&k, &val, 1));
    }
    case 13: return ffk_any_object_steal((ffk_object *)ffk_function_new("g", echo_first, NULL, NULL));
    case 14: ffk_any_bytes("\xff\x00", 2, &v); return v;
    default: return ffk_any_ptr((void *)&deletes);
  }
}

static void fuzz_schema(const char *text) {
  ffk_schema *s = ffk_schema_parse(text);
  if (s == NULL) {
    fuzz_expect_error("ffk_schema_parse", kValueError);
    return;
  }
  fuzz_expect_no_error("ffk_schema_parse");
  FUZZ_CHECK(s->text != NULL, "schema without text");
  ffk_schema *again = ffk_schema_parse(s->text);
  FUZZ_CHECK(again != NULL, "canonical text \"%s\" (of \"%s\") does not parse", s->text, text);
  FUZZ_CHECK(strcmp(again->text, s->text) == 0, "\"%s\" -> \"%s\" -> \"%s\"", text, s->text, again->text);
  FUZZ_CHECK(again->type_index == s->type_index && again->nparams == s->nparams, "reparse differs for \"%s\"", s->text);
  ffk_schema_free(again);
  ffk_schema_free(s);
}

static void fuzz_typed(const char *text, const ffk_any *args, int32_t nargs) {
  deletes = 0;
  ffk_function *f = ffk_function_new_typed("fz", text, echo_first, &deletes, count_delete);
  if (f == NULL) {
    fuzz_expect_error("ffk_function_new_typed", kValueError);
    FUZZ_CHECK(deletes == 1, "a failed ffk_function_new_typed ran the deleter %d times", deletes);
    return;
  }
  fuzz_expect_no_error("ffk_function_new_typed");
  const char *sig = ffk_function_signature(f);
  FUZZ_CHECK(sig != NULL && strncmp(sig, "fz(", 3) == 0, "signature \"%s\" of \"%s\"", sig ? sig : "(null)", text);
  /* The printed signature, less the name, is itself a signature with the same print. */
  ffk_function *g = ffk_function_new_typed("fz", sig + 2, echo_first, NULL, NULL);
  FUZZ_CHECK(g != NULL, "printed signature \"%s\" of \"%s\" does not parse", sig, text);
  FUZZ_CHECK(strcmp(ffk_function_signature(g), sig) == 0, "\"%s\" prints as \"%s\" then \"%s\"", text, sig,
             ffk_function_signature(g));
  ffk_object_release((ffk_object *)g);
  ffk_any result;
  if (ffk_function_call(f, args, nargs, &result) == 0) {
    fuzz_expect_no_error("call");
    ffk_any_release(&result);
  } else {
    fuzz_expect_error("call", kTypeOrValueError);
    FUZZ_CHECK(result.type_index == FFK_TYPE_NONE, "a failed call left a result");
  }
  FUZZ_CHECK(deletes == 0, "the deleter ran while the Function lived");
  ffk_object_release((ffk_object *)f);
  FUZZ_CHECK(deletes == 1, "the deleter ran %d times", deletes);
}

typedef union {
  int64_t i;
  double f;
  bool b;
  const char *s;
  DLDevice d;
  DLDataType t;
  ffk_object *o;
  const ffk_any *a;
  unsigned char bytes[16];
} out_slot;

static void fuzz_unpack(const char *format, const ffk_any *args, int32_t nargs, uint8_t null_mask) {
  out_slot slots[MAX_ARGS];
  void *p[MAX_ARGS];
  memset(slots, 0xa5, sizeof slots);
  for (int k = 0; k < MAX_ARGS; ++k) p[k] = (null_mask >> (k % 8)) & 1 ? NULL : &slots[k];
  int rc = ffk_args_unpack("fz", args, nargs, format, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                           p[10], p[11], p[12], p[13], p[14], p[15], p[16], p[17], p[18], p[19], p[20], p[21], p[22],
                           p[23], p[24], p[25], p[26], p[27], p[28], p[29], p[30], p[31]);
  if (rc != 0) {
    fuzz_expect_error("ffk_args_unpack", kTypeOrValueError);
    return;
  }
  fuzz_expect_no_error("ffk_args_unpack");
  int32_t required = 0, total = 0;
  bool optional = false;
  for (const char *c = format; *c; ++c) {
    if (*c == '|') optional = true;
    else total++, required += !optional;
  }
  FUZZ_CHECK(nargs >= required && nargs <= total, "%d arguments accepted by \"%s\"", nargs, format);
  int32_t i = 0;
  for (const char *c = format; *c && i < nargs; ++c) {
    if (*c == '|') continue;
    if (p[i] != NULL) {
      switch (*c) {
        case 's': FUZZ_CHECK(strlen(slots[i].s) < 1u << 20, "bad string"); break;
        case 'a': FUZZ_CHECK(slots[i].a == &args[i], "'a' stored another pointer"); break;
        case 'o':
        case 'F': FUZZ_CHECK(slots[i].o == args[i].v_obj, "'%c' stored another object", *c); break;
        default: break;
      }
    }
    ++i;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live_before = ffk_debug_live_objects(-1);
  fuzz_reader r = fuzz_reader_make(data, size);
  uint8_t head = fuzz_u8(&r);
  int mode = head % 3;
  int32_t nargs = (head / 3) % 6;
  ffk_any args[8];
  for (int32_t i = 0; i < nargs; ++i) args[i] = make_arg(fuzz_u8(&r));
  uint8_t null_mask = mode == 2 ? fuzz_u8(&r) : 0;
  size_t n = fuzz_left(&r);
  char *text = malloc(n + 1);
  FUZZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data + r.pos, n);
  text[n] = '\0';

  if (mode == 0) fuzz_schema(text);
  else if (mode == 1) fuzz_typed(text, args, nargs);
  else fuzz_unpack(text, args, nargs, null_mask);

  free(text);
  for (int32_t i = 0; i < nargs; ++i) ffk_any_release(&args[i]);
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
