/*
 * tests/fuzz/dtype_device_fuzzer.c - dtype and device text (ffk_dtype_parse,
 * ffk_device_parse, ffk_device_type_lookup).
 *
 * Properties:
 *  - parsing any bytes either succeeds or fails with a ValueError, never anything else;
 *  - round trip: what parses prints (ffk_*_format) to text that parses to the same value,
 *    and that text prints the same again (the canonical text is a fixed point);
 *  - printing any value (the first bytes decoded as a DLDataType / DLDevice) fits the
 *    documented buffer, and when the printed text parses, it parses to that same value;
 *  - a truncated print is a NUL-terminated prefix of the full text.
 */
#include "fuzz_common.h"

static const char *const kValueError[] = {FFK_ERR_VALUE, NULL};

static void check_truncation(const char *full, size_t len, size_t (*fmt)(const void *, char *, size_t), const void *v) {
  for (size_t cap = 0; cap <= len + 1; cap += 1 + cap / 4) {
    char buf[64];
    memset(buf, 'X', sizeof buf);
    size_t n = fmt(v, buf, cap);
    (void)n;
    if (cap == 0) {
      FUZZ_CHECK(buf[0] == 'X', "cap 0 wrote into the buffer");
      continue;
    }
    size_t want = cap - 1 < len ? cap - 1 : len;
    FUZZ_CHECK(strlen(buf) == want && memcmp(buf, full, want) == 0, "cap %zu gave \"%s\" for \"%s\"", cap, buf, full);
  }
}

/* What the round trip needs of a kind of value (a DLDataType or a DLDevice, behind void *). */
typedef struct text_kind {
  const char *name;
  size_t max;          /* FFK_*_STR_MAX: room for the longest text, NUL included */
  const char *unnamed; /* the prefix of the text of a value without a name */
  size_t (*format)(const void *v, char *buf, size_t cap);
  int (*parse)(const char *text, size_t size, void *out);
  bool (*equal)(const void *a, const void *b);
  bool (*may_not_parse)(const void *v); /* beyond values without a name */
} text_kind;

static size_t fmt_dtype(const void *v, char *buf, size_t cap) { return ffk_dtype_format(*(const DLDataType *)v, buf, cap); }
static int parse_dtype(const char *text, size_t size, void *out) { return ffk_dtype_parse(text, size, out); }
static bool equal_dtype(const void *a, const void *b) { return ffk_dtype_equal(*(const DLDataType *)a, *(const DLDataType *)b); }
static bool never(const void *v) { return (void)v, false; }
static const text_kind kDtype = {"dtype", FFK_DTYPE_STR_MAX, "dtype(", fmt_dtype, parse_dtype, equal_dtype, never};

static size_t fmt_device(const void *v, char *buf, size_t cap) { return ffk_device_format(*(const DLDevice *)v, buf, cap); }
static int parse_device(const char *text, size_t size, void *out) { return ffk_device_parse(text, size, out); }
static bool equal_device(const void *a, const void *b) { return ffk_device_equal(*(const DLDevice *)a, *(const DLDevice *)b); }
static bool negative_index(const void *v) { return ((const DLDevice *)v)->device_id < 0; }
static const text_kind kDevice = {"device", FFK_DEVICE_STR_MAX, "device(", fmt_device, parse_device, equal_device, negative_index};

/* Prints `v`, checks the text and its truncations, and parses it back to the same value. */
static void round_trip(const text_kind *k, const void *v, const char *origin) {
  char text[64];
  union {
    DLDataType t;
    DLDevice d;
  } back;
  size_t len = k->format(v, text, k->max);
  FUZZ_CHECK(len < k->max && strlen(text) == len, "%s text of %s is %zu bytes: \"%s\"", k->name, origin, len, text);
  check_truncation(text, len, k->format, v);
  if (k->parse(text, len, &back) != 0) {
    /* Only a value without a name (or a device with a negative index) may print as text that does not parse. */
    FUZZ_CHECK(strncmp(text, k->unnamed, strlen(k->unnamed)) == 0 || k->may_not_parse(v),
               "\"%s\" (from %s) does not parse", text, origin);
    fuzz_expect_error("parse(format(v))", kValueError);
    return;
  }
  fuzz_expect_no_error("parse");
  FUZZ_CHECK(k->equal(&back, v), "%s \"%s\" (from %s) parses to another value", k->name, text, origin);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;

  DLDataType t;
  if (ffk_dtype_parse(text, size, &t) == 0) {
    fuzz_expect_no_error("ffk_dtype_parse");
    round_trip(&kDtype, &t, "parsed text");
  } else {
    fuzz_expect_error("ffk_dtype_parse", kValueError);
  }

  DLDevice d;
  if (ffk_device_parse(text, size, &d) == 0) {
    fuzz_expect_no_error("ffk_device_parse");
    FUZZ_CHECK(d.device_id >= 0, "parsed a negative device index %d", d.device_id);
    FUZZ_CHECK(ffk_device_type_name(ffk_device_type(d)) != NULL, "parsed an unnamed device type %d", ffk_device_type(d));
    round_trip(&kDevice, &d, "parsed text");
  } else {
    fuzz_expect_error("ffk_device_parse", kValueError);
  }

  int32_t type;
  int found = ffk_device_type_lookup(text, size, &type);
  FUZZ_CHECK(found == 0 || found == 1, "ffk_device_type_lookup returned %d", found);
  if (found == 1) {
    const char *name = ffk_device_type_name(type);
    FUZZ_CHECK(name != NULL && strlen(name) == size && memcmp(name, text, size) == 0,
               "lookup of \"%.*s\" gave type %d named %s", (int)size, text, type, name ? name : "(null)");
  }
  fuzz_expect_no_error("ffk_device_type_lookup");

  /* The raw bytes as values: code, bits, lanes (4 bytes) and type, id (8 bytes). */
  fuzz_reader r = fuzz_reader_make(data, size);
  uint8_t code = fuzz_u8(&r), bits = fuzz_u8(&r);
  DLDataType raw_t = ffk_dtype(code, bits, (uint16_t)fuzz_u64(&r, 2));
  round_trip(&kDtype, &raw_t, "raw bytes");
  int32_t dev_type = (int32_t)fuzz_u64(&r, 4), dev_id = (int32_t)fuzz_u64(&r, 4);
  DLDevice raw_d = ffk_device(dev_type, dev_id);
  round_trip(&kDevice, &raw_d, "raw bytes");
  return 0;
}
