/*
 * tests/fuzz/string_fuzzer.c - str and bytes values from arbitrary bytes.
 *
 * Properties:
 *  - ffk_utf8_valid_prefix agrees with a reference decoder written from the Unicode
 *    standard's table of well-formed sequences (Table 3-7), on the whole input and on
 *    every suffix starting at one of its first bytes;
 *  - ffk_any_str succeeds exactly for valid UTF-8 (else a ValueError), in the inline form
 *    up to 7 bytes and as a String object beyond, holding the same bytes, NUL-terminated;
 *    ffk_any_bytes always succeeds, likewise;
 *  - the inline and object forms of one content (ffk_string_new is always an object)
 *    are equal and hash equal; str never equals bytes; a different content is not equal;
 *  - repr succeeds and is valid UTF-8;
 *  - no object stays alive.
 */
#include "fuzz_common.h"

#include <ffikit/repr.h>
#include <ffikit/string.h>

static const char *const kValueError[] = {FFK_ERR_VALUE, NULL};

/* The length of the longest valid UTF-8 prefix, decoded by Table 3-7 of Unicode 15. */
static size_t reference_valid_prefix(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t b = s[i];
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (b <= 0x7f) {
      ++i;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      len = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b == 0xe0) lo = 0xa0;
      if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b == 0xf0) lo = 0x90;
      if (b == 0xf4) hi = 0x8f;
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xbf) return i;
    i += len;
  }
  return n;
}

/* The bytes a str/bytes value holds, in either form. */
static void content(const ffk_any *v, bool is_bytes, const char **data, size_t *size) {
  int rc = is_bytes ? ffk_any_as_bytes(v, data, size) : ffk_any_as_str(v, data, size);
  FUZZ_CHECK(rc == 0, "a %s value does not read back", is_bytes ? "bytes" : "str");
}

static void check_value(const ffk_any *v, const uint8_t *data, size_t size, bool is_bytes) {
  int32_t small = is_bytes ? FFK_TYPE_SMALL_BYTES : FFK_TYPE_SMALL_STR, obj = is_bytes ? FFK_TYPE_BYTES : FFK_TYPE_STRING;
  if (size <= 7) {
    FUZZ_CHECK(v->type_index == small && v->aux == size, "%zu bytes: type %d aux %u", size, v->type_index, v->aux);
    for (size_t i = size; i < 8; ++i) FUZZ_CHECK(v->v_bytes[i] == 0, "inline payload byte %zu is not zero", i);
  } else {
    FUZZ_CHECK(v->type_index == obj && v->aux == 0, "%zu bytes: type %d aux %u", size, v->type_index, v->aux);
    const ffk_string *s = (const ffk_string *)v->v_obj;
    FUZZ_CHECK(s->size == size && s->data[size] == '\0', "object form: size %zu, want %zu", s->size, size);
  }
  const char *got;
  size_t got_size;
  content(v, is_bytes, &got, &got_size);
  FUZZ_CHECK(got_size == size && (size == 0 || memcmp(got, data, size) == 0), "content differs");

  /* The object form of the same content: equal, same hash. */
  ffk_string *o = is_bytes ? ffk_bytes_new(data, size) : ffk_string_new((const char *)data, size);
  FUZZ_CHECK(o != NULL, "object form of valid content failed");
  ffk_any ov = ffk_any_object_steal((ffk_object *)o);
  FUZZ_CHECK(ffk_any_equal(v, &ov) && ffk_any_equal(&ov, v), "inline and object forms differ");
  FUZZ_CHECK(ffk_any_hash(v) == ffk_any_hash(&ov), "inline and object forms hash differently");
  ffk_any_release(&ov);

  ffk_string *r = ffk_any_repr(v);
  FUZZ_CHECK(r != NULL, "repr failed");
  FUZZ_CHECK(ffk_utf8_valid_prefix(r->data, r->size) == r->size, "repr is not valid UTF-8: %s", r->data);
  FUZZ_CHECK(r->size >= 2 + (is_bytes ? 1u : 0u), "repr too short: %s", r->data);
  ffk_object_release((ffk_object *)r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live_before = ffk_debug_live_objects(-1);
  const char *text = (const char *)data;

  size_t want = reference_valid_prefix(data, size);
  size_t got = ffk_utf8_valid_prefix(text, size);
  FUZZ_CHECK(got == want, "valid prefix of %zu bytes: %zu, reference %zu", size, got, want);
  for (size_t i = 1; i < size && i < 8; ++i) {
    size_t w = reference_valid_prefix(data + i, size - i), g = ffk_utf8_valid_prefix(text + i, size - i);
    FUZZ_CHECK(g == w, "valid prefix from offset %zu: %zu, reference %zu", i, g, w);
  }

  ffk_any s;
  if (ffk_any_str(text, size, &s) == 0) {
    fuzz_expect_no_error("ffk_any_str");
    FUZZ_CHECK(want == size, "accepted invalid UTF-8 (valid up to %zu of %zu)", want, size);
    check_value(&s, data, size, false);
  } else {
    fuzz_expect_error("ffk_any_str", kValueError);
    FUZZ_CHECK(want < size, "refused valid UTF-8 of %zu bytes", size);
    FUZZ_CHECK(s.type_index == FFK_TYPE_NONE, "a failed ffk_any_str left type %d", s.type_index);
    FUZZ_CHECK(ffk_string_new(text, size) == NULL, "ffk_string_new accepted invalid UTF-8");
    fuzz_expect_error("ffk_string_new", kValueError);
    s = ffk_any_none();
  }

  ffk_any b;
  FUZZ_CHECK(ffk_any_bytes(data, size, &b) == 0, "ffk_any_bytes failed");
  check_value(&b, data, size, true);
  FUZZ_CHECK(!ffk_any_equal(&s, &b), "a str equals a bytes value");

  /* A one-byte change is a different key. */
  if (size > 0) {
    uint8_t *other = malloc(size);
    FUZZ_CHECK(other != NULL, "out of memory");
    memcpy(other, data, size);
    other[size - 1] ^= 1;
    ffk_any ob;
    FUZZ_CHECK(ffk_any_bytes(other, size, &ob) == 0, "ffk_any_bytes failed");
    FUZZ_CHECK(!ffk_any_equal(&b, &ob), "bytes differing in the last byte are equal");
    ffk_any_release(&ob);
    free(other);
  }

  /* A C string stops at the first NUL. */
  char *cstr = malloc(size + 1);
  FUZZ_CHECK(cstr != NULL, "out of memory");
  memcpy(cstr, data, size);
  cstr[size] = '\0';
  ffk_any c;
  size_t clen = strlen(cstr);
  if (ffk_any_cstr(cstr, &c) == 0) {
    FUZZ_CHECK(reference_valid_prefix(data, clen) == clen, "ffk_any_cstr accepted invalid UTF-8");
    check_value(&c, data, clen, false);
    ffk_any_release(&c);
  } else {
    fuzz_expect_error("ffk_any_cstr", kValueError);
    FUZZ_CHECK(reference_valid_prefix(data, clen) < clen, "ffk_any_cstr refused valid UTF-8");
  }
  free(cstr);

  ffk_any_release(&s);
  ffk_any_release(&b);
  fuzz_expect_no_live_objects(live_before);
  return 0;
}
