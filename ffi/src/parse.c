/*
 * parse.c - the small text parsers the value modules share (dtype.c's "int32x4" bits and
 * lanes, device.c's "cuda:1" index), so that neither module calls the other.
 */
#include "internal.h"

bool ffk_parse__u32(const char *s, size_t n, uint32_t max, uint32_t *out) {
  if (n == 0 || n > 10) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v > max) return false;
  *out = (uint32_t)v;
  return true;
}
