/*
 * dtype.c - DataType text: parse ("float32", "int8x4", "float8_e4m3fn") and print.
 *
 * Accepted: int<N>/uint<N> for N in 1..64, float16/32/64, bfloat16, complex64/128,
 * bool (code 6, 8 bits), handle (64 bits), the fixed-name float8/6/4 family, each
 * optionally followed by x<lanes> with lanes in 1..65535. Printing gives back the
 * canonical text, omitting "x1".
 *
 * TVM-FFI's short spellings are accepted as aliases and rewritten to the canonical
 * prefix before parsing: i<N> u<N> f<N> bf<N> (int, uint, float, bfloat), fp8_/f8_,
 * fp6_/f6_, fp4_/f4_ (float8_, float6_, float4_), and an underscore before the lanes
 * of float4 ("float4_e2m1fn_x2", "fp4_e2m1fn_x2", as tvm_ffi). Errors quote the text as
 * given.
 *
 * numpy's type strings ("<f4", "|b1", ">i8") map to DataTypes here too, so that the rule
 * "data is shared as it is, never byte-swapped" is decided once: a non-native byte
 * order is an error, never a silent reinterpretation.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  uint8_t code, bits;
} k_fixed[] = {
    {"bool", FFK_DTYPE_BOOL, 8},
    {"handle", FFK_DTYPE_HANDLE, 64},
    {"bfloat16", FFK_DTYPE_BFLOAT, 16},
    {"float8_e3m4", FFK_DTYPE_FLOAT8_E3M4, 8},
    {"float8_e4m3", FFK_DTYPE_FLOAT8_E4M3, 8},
    {"float8_e4m3b11fnuz", FFK_DTYPE_FLOAT8_E4M3B11FNUZ, 8},
    {"float8_e4m3fn", FFK_DTYPE_FLOAT8_E4M3FN, 8},
    {"float8_e4m3fnuz", FFK_DTYPE_FLOAT8_E4M3FNUZ, 8},
    {"float8_e5m2", FFK_DTYPE_FLOAT8_E5M2, 8},
    {"float8_e5m2fnuz", FFK_DTYPE_FLOAT8_E5M2FNUZ, 8},
    {"float8_e8m0fnu", FFK_DTYPE_FLOAT8_E8M0FNU, 8},
    {"float6_e2m3fn", FFK_DTYPE_FLOAT6_E2M3FN, 6},
    {"float6_e3m2fn", FFK_DTYPE_FLOAT6_E3M2FN, 6},
    {"float4_e2m1fn", FFK_DTYPE_FLOAT4_E2M1FN, 4},
};
#define N_FIXED (sizeof k_fixed / sizeof k_fixed[0])

/* Families spelled <prefix><bits>. */
static const struct {
  const char *prefix;
  uint8_t code;
} k_families[] = {
    {"int", FFK_DTYPE_INT},
    {"uint", FFK_DTYPE_UINT},
    {"float", FFK_DTYPE_FLOAT},
    {"complex", FFK_DTYPE_COMPLEX},
};

static bool family_bits_ok(uint8_t code, uint32_t bits) {
  switch (code) {
    case FFK_DTYPE_INT:
    case FFK_DTYPE_UINT:
      return bits >= 1 && bits <= 64;
    case FFK_DTYPE_FLOAT:
      return bits == 16 || bits == 32 || bits == 64;
    case FFK_DTYPE_COMPLEX:
      return bits == 64 || bits == 128;
    default:
      return false;
  }
}

/* The base name of (code, bits), or NULL. Writes "int32"-style names into buf. */
static const char *base_name(uint8_t code, uint8_t bits, char *buf, size_t cap) {
  for (size_t i = 0; i < N_FIXED; ++i)
    if (k_fixed[i].code == code && k_fixed[i].bits == bits) return k_fixed[i].name;
  for (size_t i = 0; i < sizeof k_families / sizeof k_families[0]; ++i) {
    if (k_families[i].code == code && family_bits_ok(code, bits)) {
      snprintf(buf, cap, "%s%u", k_families[i].prefix, (unsigned)bits);
      return buf;
    }
  }
  return NULL;
}

static int invalid(const char *text, size_t size) {
  return ffk_error_set(FFK_ERR_VALUE, "Invalid dtype \"%.*s\"", (int)(size > 200 ? 200 : size), text);
}

/* Parses a name without a lanes suffix ("float32", "complex64", "bool"). */
static bool parse_base(const char *text, size_t len, uint8_t *code, uint8_t *bits) {
  for (size_t i = 0; i < N_FIXED; ++i) {
    if (strlen(k_fixed[i].name) == len && memcmp(k_fixed[i].name, text, len) == 0) {
      *code = k_fixed[i].code;
      *bits = k_fixed[i].bits;
      return true;
    }
  }
  for (size_t i = 0; i < sizeof k_families / sizeof k_families[0]; ++i) {
    size_t plen = strlen(k_families[i].prefix);
    uint32_t b;
    if (len > plen && memcmp(k_families[i].prefix, text, plen) == 0 &&
        ffk_parse__u32(text + plen, len - plen, 255, &b) && family_bits_ok(k_families[i].code, b)) {
      *code = k_families[i].code;
      *bits = (uint8_t)b;
      return true;
    }
  }
  return false;
}

/* Short spelling -> canonical prefix; a prefix that needs a digit after it says so. */
static const struct {
  const char *alias, *canonical;
  bool digit_after;
} k_aliases[] = {
    {"fp8_", "float8_", false}, {"f8_", "float8_", false}, {"fp6_", "float6_", false},
    {"f6_", "float6_", false},  {"fp4_", "float4_", false}, {"f4_", "float4_", false},
    {"bf", "bfloat", true},     {"i", "int", true},         {"u", "uint", true},
    {"f", "float", true},
};

/*
 * When the text uses an alias, or float4's "_x<lanes>", writes the canonical spelling
 * into buf (NUL-terminated) and points the text and size at it; otherwise leaves them
 * alone. The alias goes first, so "fp4_e2m1fn_x2" becomes "float4_e2m1fn_x2" and then
 * "float4_e2m1fnx2" (tvm_ffi accepts the '_' before the lanes of float4 only). False
 * when the rewrite does not fit in cap bytes (such text is not a dtype anyway).
 */
static bool unalias(const char **text, size_t *size, char *buf, size_t cap) {
  const char *t = *text;
  size_t n = *size;
  for (size_t i = 0; i < sizeof k_aliases / sizeof k_aliases[0]; ++i) {
    size_t a = strlen(k_aliases[i].alias);
    if (n <= a || memcmp(t, k_aliases[i].alias, a) != 0) continue;
    if (k_aliases[i].digit_after && (t[a] < '0' || t[a] > '9')) continue;
    size_t c = strlen(k_aliases[i].canonical);
    if (c + n - a >= cap) return false;
    memcpy(buf + c, t + a, n - a); /* t is the caller's text here, not buf */
    memcpy(buf, k_aliases[i].canonical, c);
    buf[c + n - a] = '\0';
    t = buf;
    n = c + n - a;
    break;
  }
  static const char fp4_lanes[] = "float4_e2m1fn_x"; /* drop the '_' before the lanes */
  size_t fp4_len = sizeof fp4_lanes - 1;
  if (n > fp4_len && memcmp(t, fp4_lanes, fp4_len) == 0) {
    if (n >= cap) return false;
    if (t != buf) memcpy(buf, t, fp4_len - 2);                        /* "float4_e2m1fn" */
    memmove(buf + fp4_len - 2, t + fp4_len - 1, n - (fp4_len - 1)); /* "x<lanes>", t may be buf */
    t = buf;
    n -= 1;
    buf[n] = '\0';
  }
  *text = t;
  *size = n;
  return true;
}

int ffk_dtype_parse(const char *text, size_t size, DLDataType *out) {
  if (text == NULL) return ffk_error_set(FFK_ERR_VALUE, "Invalid dtype: text is NULL");
  const char *given = text;
  size_t given_size = size;
  char canonical[64];
  if (!unalias(&text, &size, canonical, sizeof canonical)) return invalid(given, given_size);
  uint8_t code, bits;
  /* The whole text first: "complex64" must not read as "comple" with 64 lanes. */
  if (parse_base(text, size, &code, &bits)) {
    *out = ffk_dtype(code, bits, 1);
    return 0;
  }
  /* Then a lanes suffix: the last 'x', followed by digits only. */
  const char *x = NULL;
  for (size_t i = size; i > 0 && x == NULL; --i)
    if (text[i - 1] == 'x') x = text + i - 1;
  uint32_t lanes;
  if (x != NULL && ffk_parse__u32(x + 1, size - (size_t)(x + 1 - text), 65535, &lanes) && lanes > 0 &&
      parse_base(text, (size_t)(x - text), &code, &bits)) {
    *out = ffk_dtype(code, bits, (uint16_t)lanes);
    return 0;
  }
  return invalid(given, given_size);
}

/* ---- numpy type strings ------------------------------------------------------------- */

static const char *numpy_kind_name(char kind) {
  switch (kind) {
    case 'U': return "unicode text";
    case 'S': return "byte strings";
    case 'O': return "Python objects";
    case 'M': return "datetimes";
    case 'm': return "timedeltas";
    default: return "an unknown kind";
  }
}

int ffk_dtype_from_numpy(const char *typestr, size_t size, const char *name, DLDataType *out) {
  *out = ffk_dtype(0, 0, 0);
  if (typestr == NULL) return ffk_error_set(FFK_ERR_VALUE, "Invalid numpy dtype: the type string is NULL");
  int shown = (int)(size > 64 ? 64 : size);
  if (size < 3 || typestr[0] == '\0' || strchr("<>|=", typestr[0]) == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "Invalid numpy dtype \"%.*s\"", shown, typestr);
  char order = typestr[0], kind = typestr[1];
  if (kind == '\0' || strchr("biufcV", kind) == NULL) /* "<U3", "<M8[ns]", "|O" */
    return ffk_error_set(FFK_ERR_VALUE, "numpy dtype \"%.*s\" (%s) has no DLPack data type", shown, typestr,
                         numpy_kind_name(kind));
  uint32_t itemsize;
  if (!ffk_parse__u32(typestr + 2, size - 2, 255, &itemsize) || itemsize == 0)
    return ffk_error_set(FFK_ERR_VALUE, "Invalid numpy dtype \"%.*s\"", shown, typestr);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const char foreign = '<';
  const char *native_name = "big-endian", *foreign_name = "little-endian";
#else
  const char foreign = '>';
  const char *native_name = "little-endian", *foreign_name = "big-endian";
#endif
  if (order == foreign && itemsize > 1)
    return ffk_error_set(FFK_ERR_VALUE,
                         "numpy dtype \"%.*s\" is %s, not this machine's byte order (%s): ffikit shares data as it "
                         "is and never swaps bytes; convert it first (astype(\"=%c%u\"))",
                         shown, typestr, foreign_name, native_name, kind, (unsigned)itemsize);
  uint32_t bits = itemsize * 8;
  DLDataType t = ffk_dtype(0, 0, 0);
  bool ok = false;
  switch (kind) {
    case 'b':
      ok = itemsize == 1;
      t = ffk_dtype(FFK_DTYPE_BOOL, 8, 1);
      break;
    case 'i':
    case 'u':
      ok = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
      t = ffk_dtype(kind == 'i' ? FFK_DTYPE_INT : FFK_DTYPE_UINT, (uint8_t)bits, 1);
      break;
    case 'f':
      ok = itemsize == 2 || itemsize == 4 || itemsize == 8;
      t = ffk_dtype(FFK_DTYPE_FLOAT, (uint8_t)bits, 1);
      break;
    case 'c':
      ok = itemsize == 8 || itemsize == 16;
      t = ffk_dtype(FFK_DTYPE_COMPLEX, (uint8_t)bits, 1);
      break;
    default: /* 'V': raw bytes, or an extension type */
      break;
  }
  /* numpy extension types (ml_dtypes' bfloat16 "<V2", float8_e5m2 "<f1", int4 "<V1" ...)
     have no standard kind and size: their name says which type they are. */
  if (!ok && name != NULL) {
    if (ffk_dtype_parse(name, strlen(name), &t) == 0) {
      ok = ffk_dtype_itemsize(t) == itemsize;
    } else {
      ffk_error_clear();
    }
  }
  if (!ok) {
    if (name != NULL)
      return ffk_error_set(FFK_ERR_VALUE, "numpy dtype \"%.*s\" (%s) has no DLPack data type", shown, typestr, name);
    return ffk_error_set(FFK_ERR_VALUE, "numpy dtype \"%.*s\" has no DLPack data type", shown, typestr);
  }
  *out = t;
  return 0;
}

size_t ffk_dtype_format(DLDataType t, char *buf, size_t cap) {
  char tmp[FFK_DTYPE_STR_MAX + 32];
  char name[16];
  const char *base = t.lanes >= 1 ? base_name(t.code, t.bits, name, sizeof name) : NULL;
  int n;
  if (base == NULL)
    n = snprintf(tmp, sizeof tmp, "dtype(code=%u, bits=%u, lanes=%u)", (unsigned)t.code, (unsigned)t.bits,
                 (unsigned)t.lanes);
  else if (t.lanes == 1)
    n = snprintf(tmp, sizeof tmp, "%s", base);
  else
    n = snprintf(tmp, sizeof tmp, "%sx%u", base, (unsigned)t.lanes);
  if (cap > 0) snprintf(buf, cap, "%s", tmp);
  return (size_t)n;
}
