/*
 * buf_core.c - a growable NUL-terminated byte buffer for building text (repr, backtraces):
 * the appends that raise nothing. They lie below error.c, which formats its backtraces
 * with them: a failure is returned as an ffk_buf__fail and the caller raises it
 * (ffk_error__raise_buf, error.c). The raising forms everyone else calls are buf.c.
 *
 * Invariant: data is NULL (empty, nothing allocated) or holds size bytes plus a NUL
 * within cap bytes. On failure a buffer keeps its previous contents.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(ffk_buf *b, size_t extra, ffk_buf__fail *fail) {
  if (extra > SIZE_MAX / 2 - b->size) {
    *fail = (ffk_buf__fail){.what = FFK_BUF__TOO_LARGE};
    return -1;
  }
  size_t need = b->size + extra + 1;
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *fresh = ffk_mem__raw_realloc(b->data, cap);
  if (fresh == NULL) {
    *fail = (ffk_buf__fail){.what = FFK_BUF__NO_MEMORY, .want = cap};
    return -1;
  }
  b->data = fresh;
  b->cap = cap;
  return 0;
}

int ffk_buf__try_append(ffk_buf *b, const char *data, size_t size, ffk_buf__fail *fail) {
  if (reserve(b, size, fail) != 0) return -1;
  if (size) memcpy(b->data + b->size, data, size);
  b->size += size;
  b->data[b->size] = '\0';
  return 0;
}

int ffk_buf__try_vappendf(ffk_buf *b, ffk_buf__fail *fail, const char *fmt, va_list ap) {
  char small[128];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    *fail = (ffk_buf__fail){.what = FFK_BUF__BAD_FORMAT, .fmt = fmt};
    return -1;
  }
  if ((size_t)n < sizeof small) return ffk_buf__try_append(b, small, (size_t)n, fail);
  if (reserve(b, (size_t)n, fail) != 0) return -1;
  vsnprintf(b->data + b->size, (size_t)n + 1, fmt, ap);
  b->size += (size_t)n;
  return 0;
}

int ffk_buf__try_appendf(ffk_buf *b, ffk_buf__fail *fail, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ffk_buf__try_vappendf(b, fail, fmt, ap);
  va_end(ap);
  return rc;
}

void ffk_buf__free(ffk_buf *b) {
  ffk_mem_free(b->data);
  b->data = NULL;
  b->size = b->cap = 0;
}
