/*
 * scalar.c - one element as a value: packing a fill value into a dtype's bytes, and
 * converting the only element of a tensor back to an Int, Float or Bool (ffk_tensor_item,
 * in copy.c beside the copy it needs for a device tensor).
 *
 * The rule both directions keep: a value never changes silently. A fill value must be
 * representable in the dtype (integers in range, integral floats into integer dtypes,
 * finite floats within a float dtype's range; rounding to the nearest float is allowed,
 * as in every float conversion; a complex value goes into a real dtype only with an
 * imaginary part of 0); item refuses what an ffk_any cannot hold (a uint64 above
 * INT64_MAX, complex, the float8 family). float16 and bfloat16 are converted here with
 * round-to-nearest-even, since C11 has no type for them. A complex element is its two
 * parts, real then imaginary, each packed as the float dtype of half its size.
 */
#include "tensor_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- float16 and bfloat16 ------------------------------------------------------------------ */

static uint16_t half_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u)); /* inf, NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up round to infinity */
  if (a < 0x38800000u) {                                  /* below 2^-14: a subnormal half (or zero) */
    float m;
    memcpy(&m, &a, sizeof m);
    return (uint16_t)(sign | (uint32_t)rintf(m * 16777216.0f)); /* exact scaling by 2^24, then round to even */
  }
  uint32_t h = ((((a >> 23) - 127u + 15u) << 10) | ((a & 0x7fffffu) >> 13)), rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* a carry into the exponent is right */
  return (uint16_t)(sign | h);
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000u) ? -v : v;
}

static uint16_t bfloat_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* a quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static double bfloat_to_double(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* ---- Packing a fill value ------------------------------------------------------------------- */

/* The shortest text of `f` that reads back as f ("2.5", not "2.5000000000000000"). */
static const char *format_double(char *buf, size_t cap, double f) {
  snprintf(buf, cap, "%.15g", f);
  if (strtod(buf, NULL) != f) snprintf(buf, cap, "%.17g", f);
  return buf;
}

static bool is_integer_code(uint8_t code) { return code == FFK_DTYPE_INT || code == FFK_DTYPE_UINT; }

/* Stores `v` into an integer element of `bits` (signed or not): the range was checked. */
static void put_integer(unsigned char *out, unsigned bits, uint64_t v) {
  switch (bits) {
    case 8: out[0] = (unsigned char)v; return;
    case 16: { uint16_t x = (uint16_t)v; memcpy(out, &x, sizeof x); return; }
    case 32: { uint32_t x = (uint32_t)v; memcpy(out, &x, sizeof x); return; }
    default: memcpy(out, &v, sizeof v); return;
  }
}

/*
 * Packs the integer value (negative, or `u` when not) into an integer dtype after the
 * range check. `text` is the value as the user wrote it, for the message.
 */
static int pack_integer(const char *what, bool negative, int64_t i, uint64_t u, DLDataType dtype, const char *name,
                        const char *text, unsigned char *out) {
  unsigned bits = dtype.bits;
  bool ok;
  if (dtype.code == FFK_DTYPE_UINT) {
    ok = !negative && (bits == 64 || u < (UINT64_C(1) << bits));
  } else {
    int64_t max = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    ok = negative ? (bits == 64 || i >= -max - 1) : u <= (uint64_t)max;
  }
  if (!ok) return ffk_error_set(FFK_ERR_OVERFLOW, "%s: %s is out of range for %s", what, text, name);
  put_integer(out, bits, negative ? (uint64_t)i : u);
  return 0;
}

/*
 * Packs the float `f` (as the user wrote it: `text`) into a float dtype: float64,
 * float32, float16 or bfloat16, rounded to the nearest. 0; -1 with an OverflowError for
 * a finite value beyond the dtype's range (NaN and infinities carry over); 1 (nothing
 * raised) when `dtype` is not one of those.
 */
static int pack_float(const char *what, double f, const char *text, DLDataType dtype, const char *name,
                      unsigned char *out) {
  bool fits = true;
  switch (dtype.lanes == 1 ? dtype.code * 1000 + dtype.bits : 0) {
    case FFK_DTYPE_FLOAT * 1000 + 64: memcpy(out, &f, sizeof f); return 0;
    case FFK_DTYPE_FLOAT * 1000 + 32: {
      float x = (float)f;
      fits = isinf(x) == isinf(f);
      memcpy(out, &x, sizeof x);
      break;
    }
    case FFK_DTYPE_FLOAT * 1000 + 16: {
      uint16_t x = half_from_float((float)f);
      fits = isinf(f) || isnan(f) || fabs(f) < 65520.0; /* from 65520 it rounds to infinity */
      memcpy(out, &x, sizeof x);
      break;
    }
    case FFK_DTYPE_BFLOAT * 1000 + 16: {
      float x = (float)f;
      uint16_t b = bfloat_from_float(x);
      fits = isinf(f) || !isinf(bfloat_to_double(b));
      memcpy(out, &b, sizeof b);
      break;
    }
    default: return 1;
  }
  if (!fits) return ffk_error_set(FFK_ERR_OVERFLOW, "%s: %s is out of range for %s", what, text, name);
  return 0;
}

/*
 * The complex number as Python's repr writes it: "(1+2j)", "(1.5-0.5j)", "(inf+nanj)",
 * and "2j" for a real part of +0.
 */
static const char *format_complex(char *buf, size_t cap, double real, double imag) {
  char re[40], im[40];
  format_double(im, sizeof im, isnan(imag) ? NAN : fabs(imag));
  if (real == 0.0 && !signbit(real)) {
    snprintf(buf, cap, "%s%sj", signbit(imag) && !isnan(imag) ? "-" : "", im);
  } else {
    format_double(re, sizeof re, real);
    snprintf(buf, cap, "(%s%s%sj)", re, signbit(imag) && !isnan(imag) ? "-" : "+", im);
  }
  return buf;
}

/*
 * Packs real + imag*i into complex64 (two float32) or complex128 (two float64), each part
 * rounded to the nearest; `text` is the value for messages. 0, or -1 with an
 * OverflowError when a finite part is beyond the part's range.
 */
static int pack_complex_parts(const char *what, double real, double imag, const char *text, DLDataType dtype,
                              const char *name, unsigned char *out) {
  DLDataType part = {FFK_DTYPE_FLOAT, (uint8_t)(dtype.bits / 2), 1};
  size_t half = dtype.bits / 16;
  if (pack_float(what, real, text, part, name, out) != 0 || pack_float(what, imag, text, part, name, out + half) != 0)
    return -1;
  return 0;
}

int ffk_tensor__pack_value(const char *what, const ffk_any *value, DLDataType dtype, unsigned char *out) {
  char name[FFK_DTYPE_STR_MAX], text[64];
  ffk_dtype_format(dtype, name, sizeof name);
  bool is_float = value->type_index == FFK_TYPE_FLOAT;
  if (!is_float && value->type_index != FFK_TYPE_INT && value->type_index != FFK_TYPE_BOOL)
    return ffk_error_set(FFK_ERR_TYPE, "%s: expected an int, float or bool but got %s", what,
                         ffk_any_type_name(value));
  int64_t i = is_float ? 0 : value->v_int;
  double f = is_float ? value->v_float : (double)i;
  if (is_float) format_double(text, sizeof text, f);
  else snprintf(text, sizeof text, "%lld", (long long)i);
  bool integer_dtype = is_integer_code(dtype.code) && (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 ||
                                                        dtype.bits == 64) && dtype.lanes == 1;
  if (integer_dtype) {
    if (!is_float) return pack_integer(what, i < 0, i, (uint64_t)i, dtype, name, text, out);
    if (isnan(f)) return ffk_error_set(FFK_ERR_VALUE, "%s: cannot convert float NaN to an integer (%s)", what, name);
    if (isinf(f)) return ffk_error_set(FFK_ERR_OVERFLOW, "%s: cannot convert float %s to an integer (%s)", what, text, name);
    if (f != trunc(f))
      return ffk_error_set(FFK_ERR_VALUE, "%s: %s is not a whole number, so %s cannot hold it", what, text,
                           name);
    if (f < -9223372036854775808.0 || f >= 18446744073709551616.0)
      return ffk_error_set(FFK_ERR_OVERFLOW, "%s: %s is out of range for %s", what, text, name);
    if (f < 0) return pack_integer(what, true, (int64_t)f, 0, dtype, name, text, out);
    return pack_integer(what, false, 0, (uint64_t)f, dtype, name, text, out);
  }
  if (dtype.lanes == 1 && dtype.code == FFK_DTYPE_BOOL && dtype.bits == 8) {
    out[0] = is_float ? f != 0.0 : i != 0; /* NaN is true, as in C and numpy */
    return 0;
  }
  if (dtype.lanes == 1 && dtype.code == FFK_DTYPE_COMPLEX && (dtype.bits == 64 || dtype.bits == 128))
    return pack_complex_parts(what, f, 0.0, text, dtype, name, out);
  int rc = pack_float(what, f, text, dtype, name, out);
  if (rc <= 0) return rc;
  return ffk_error_set(FFK_ERR_TYPE, "%s: cannot fill a %s tensor (fill takes integer, float, complex and bool dtypes)",
                       what, name);
}

int ffk_tensor__pack_complex(const char *what, double real, double imag, DLDataType dtype, unsigned char *out) {
  char name[FFK_DTYPE_STR_MAX], text[96];
  ffk_dtype_format(dtype, name, sizeof name);
  format_complex(text, sizeof text, real, imag);
  if (dtype.lanes == 1 && dtype.code == FFK_DTYPE_COMPLEX && (dtype.bits == 64 || dtype.bits == 128))
    return pack_complex_parts(what, real, imag, text, dtype, name, out);
  bool real_dtype = dtype.lanes == 1 && (dtype.code == FFK_DTYPE_FLOAT || dtype.code == FFK_DTYPE_BFLOAT);
  if (!real_dtype || imag != 0.0) /* NaN is not 0 either */
    return ffk_error_set(FFK_ERR_TYPE, "%s: cannot put the complex value %s into %s", what, text, name);
  int rc = pack_float(what, real, text, dtype, name, out);
  if (rc <= 0) return rc;
  return ffk_error_set(FFK_ERR_TYPE, "%s: cannot put the complex value %s into %s", what, text, name);
}

/* ---- Reading one element -------------------------------------------------------------------- */

/* The value of the element at `p` of `dtype` into *out. 0, or -1 with a TypeError/OverflowError. */
int ffk_tensor__unpack_value(const unsigned char *p, DLDataType dtype, ffk_any *out) {
  char name[FFK_DTYPE_STR_MAX];
  int64_t i;
  uint64_t u;
  uint16_t h;
  float f;
  double d;
  switch (dtype.lanes == 1 ? dtype.code * 1000 + dtype.bits : 0) {
    case FFK_DTYPE_INT * 1000 + 8: *out = ffk_any_int((int8_t)p[0]); return 0;
    case FFK_DTYPE_INT * 1000 + 16: { int16_t x; memcpy(&x, p, sizeof x); *out = ffk_any_int(x); return 0; }
    case FFK_DTYPE_INT * 1000 + 32: { int32_t x; memcpy(&x, p, sizeof x); *out = ffk_any_int(x); return 0; }
    case FFK_DTYPE_INT * 1000 + 64: memcpy(&i, p, sizeof i); *out = ffk_any_int(i); return 0;
    case FFK_DTYPE_UINT * 1000 + 8: *out = ffk_any_int(p[0]); return 0;
    case FFK_DTYPE_UINT * 1000 + 16: { uint16_t x; memcpy(&x, p, sizeof x); *out = ffk_any_int(x); return 0; }
    case FFK_DTYPE_UINT * 1000 + 32: { uint32_t x; memcpy(&x, p, sizeof x); *out = ffk_any_int(x); return 0; }
    case FFK_DTYPE_UINT * 1000 + 64:
      memcpy(&u, p, sizeof u);
      if (u > (uint64_t)INT64_MAX)
        return ffk_error_set(FFK_ERR_OVERFLOW, "item: the uint64 value %llu does not fit in an int64", (unsigned long long)u);
      *out = ffk_any_int((int64_t)u);
      return 0;
    case FFK_DTYPE_FLOAT * 1000 + 16: memcpy(&h, p, sizeof h); *out = ffk_any_float(half_to_double(h)); return 0;
    case FFK_DTYPE_BFLOAT * 1000 + 16: memcpy(&h, p, sizeof h); *out = ffk_any_float(bfloat_to_double(h)); return 0;
    case FFK_DTYPE_FLOAT * 1000 + 32: memcpy(&f, p, sizeof f); *out = ffk_any_float(f); return 0;
    case FFK_DTYPE_FLOAT * 1000 + 64: memcpy(&d, p, sizeof d); *out = ffk_any_float(d); return 0;
    case FFK_DTYPE_BOOL * 1000 + 8: *out = ffk_any_bool(p[0] != 0); return 0;
    default:
      ffk_dtype_format(dtype, name, sizeof name);
      return ffk_error_set(FFK_ERR_TYPE, "item: %s elements have no int, float or bool value", name);
  }
}
