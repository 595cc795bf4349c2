/*
 * buf.c - the raising forms of the text buffer's appends, for every caller above error.c
 * (repr, schemas, keyword binding, metadata): each is the non-raising append of
 * buf_core.c, and raises what it reports (ffk_error__raise_buf, error.c).
 */
#include "internal.h"

int ffk_buf__append(ffk_buf *b, const char *data, size_t size) {
  ffk_buf__fail fail;
  return ffk_buf__try_append(b, data, size, &fail) == 0 ? 0 : ffk_error__raise_buf(&fail);
}

int ffk_buf__vappendf(ffk_buf *b, const char *fmt, va_list ap) {
  ffk_buf__fail fail;
  return ffk_buf__try_vappendf(b, &fail, fmt, ap) == 0 ? 0 : ffk_error__raise_buf(&fail);
}

int ffk_buf__appendf(ffk_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ffk_buf__vappendf(b, fmt, ap);
  va_end(ap);
  return rc;
}
