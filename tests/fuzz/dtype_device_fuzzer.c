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

static size_t fmt_dtype(const void *v, char *buf, size_t cap) { return ffk_dtype_format(*(const DLDataType *)v, buf, cap); }
static size_t fmt_device(const void *v, char *buf, size_t cap) { return ffk_device_format(*(const DLDevice *)v, buf, cap); }

static void dtype_round_trip(DLDataType t, const char *origin) {
  char text[FFK_DTYPE_STR_MAX];
  size_t len = ffk_dtype_format(t, text, sizeof text);
  FUZZ_CHECK(len < sizeof text && strlen(text) == len, "dtype text of %s is %zu bytes: \"%s\"", origin, len, text);
  check_truncation(text, len, fmt_dtype, &t);
  DLDataType back;
  if (ffk_dtype_parse(text, len, &back) != 0) {
    /* Only a value without a name may print as text that does not parse. */
    FUZZ_CHECK(strncmp(text, "dtype(", 6) == 0, "\"%s\" (from %s) does not parse", text, origin);
    fuzz_expect_error("ffk_dtype_parse(format(t))", kValueError);
    return;
  }
  fuzz_expect_no_error("ffk_dtype_parse");
  FUZZ_CHECK(ffk_dtype_equal(back, t), "\"%s\" (from %s: code %d bits %d lanes %d) parses to code %d bits %d lanes %d",
             text, origin, t.code, t.bits, t.lanes, back.code, back.bits, back.lanes);
}

static void device_round_trip(DLDevice d, const char *origin) {
  char text[FFK_DEVICE_STR_MAX];
  size_t len = ffk_device_format(d, text, sizeof text);
  FUZZ_CHECK(len < sizeof text && strlen(text) == len, "device text of %s is %zu bytes: \"%s\"", origin, len, text);
  check_truncation(text, len, fmt_device, &d);
  DLDevice back;
  if (ffk_device_parse(text, len, &back) != 0) {
    FUZZ_CHECK(strncmp(text, "device(", 7) == 0 || d.device_id < 0, "\"%s\" (from %s) does not parse", text, origin);
    fuzz_expect_error("ffk_device_parse(format(d))", kValueError);
    return;
  }
  fuzz_expect_no_error("ffk_device_parse");
  FUZZ_CHECK(ffk_device_equal(back, d), "\"%s\" (from %s: type %d id %d) parses to type %d id %d", text, origin,
             ffk_device_type(d), d.device_id, ffk_device_type(back), back.device_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;

  DLDataType t;
  if (ffk_dtype_parse(text, size, &t) == 0) {
    fuzz_expect_no_error("ffk_dtype_parse");
    dtype_round_trip(t, "parsed text");
  } else {
    fuzz_expect_error("ffk_dtype_parse", kValueError);
  }

  DLDevice d;
  if (ffk_device_parse(text, size, &d) == 0) {
    fuzz_expect_no_error("ffk_device_parse");
    FUZZ_CHECK(d.device_id >= 0, "parsed a negative device index %d", d.device_id);
    FUZZ_CHECK(ffk_device_type_name(ffk_device_type(d)) != NULL, "parsed an unnamed device type %d", ffk_device_type(d));
    device_round_trip(d, "parsed text");
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
  dtype_round_trip(ffk_dtype(code, bits, (uint16_t)fuzz_u64(&r, 2)), "raw bytes");
  int32_t dev_type = (int32_t)fuzz_u64(&r, 4), dev_id = (int32_t)fuzz_u64(&r, 4);
  device_round_trip(ffk_device(dev_type, dev_id), "raw bytes");
  return 0;
}
