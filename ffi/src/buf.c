/*
 * buf.c - a growable NUL-terminated byte buffer for building text (repr, backtraces).
 *
 * Invariant: data is NULL (empty, nothing allocated) or holds size bytes plus a NUL
 * within cap bytes. On failure a buffer keeps its previous contents.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(ffk_buf *b, size_t extra) {
  if (extra > SIZE_MAX / 2 - b->size) return ffk_error_set(FFK_ERR_MEMORY, "text buffer would exceed size_t");
  size_t need = b->size + extra + 1;
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *fresh = ffk_mem_realloc(b->data, cap);
  if (fresh == NULL) return -1;
  b->data = fresh;
  b->cap = cap;
  return 0;
}

int ffk_buf__append(ffk_buf *b, const char *data, size_t size) {
  if (reserve(b, size) != 0) return -1;
  if (size) memcpy(b->data + b->size, data, size);
  b->size += size;
  b->data[b->size] = '\0';
  return 0;
}

int ffk_buf__vappendf(ffk_buf *b, const char *fmt, va_list ap) {
  char small[128];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) return ffk_error_set(FFK_ERR_VALUE, "invalid format string \"%s\"", fmt);
  if ((size_t)n < sizeof small) return ffk_buf__append(b, small, (size_t)n);
  if (reserve(b, (size_t)n) != 0) return -1;
  vsnprintf(b->data + b->size, (size_t)n + 1, fmt, ap);
  b->size += (size_t)n;
  return 0;
}

void ffk_buf__free(ffk_buf *b) {
  ffk_mem_free(b->data);
  b->data = NULL;
  b->size = b->cap = 0;
}

int ffk_buf__appendf(ffk_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ffk_buf__vappendf(b, fmt, ap);
  va_end(ap);
  return rc;
}
