/*
 * string.c - String and Bytes objects and the inline small forms.
 *
 * A String/Bytes object is one allocation: the ffk_string header, then `size` bytes
 * and a NUL. Values of at most FFK_SMALL_STR_MAX bytes are never objects when made by
 * ffk_any_str/ffk_any_bytes; ffk_string_new always makes an object (callers that need
 * an object, such as repr, get one). str content is always valid UTF-8.
 */
#include "internal.h"

#include <string.h>

static ffk_string *make(int32_t type_index, const char *data, size_t size) {
  if (size > SIZE_MAX - sizeof(ffk_string) - 1) {
    ffk_error_set(FFK_ERR_MEMORY, "a %s of %zu bytes is too large", ffk_type_name(type_index), size);
    return NULL;
  }
  ffk_string *s = (ffk_string *)ffk_object__alloc_uninit(type_index, sizeof(ffk_string) + size + 1, ffk_object__leaf_deleter);
  if (s == NULL) return NULL;
  char *bytes = (char *)(s + 1);
  if (size) memcpy(bytes, data, size);
  bytes[size] = '\0';
  s->data = bytes;
  s->size = size;
  return s;
}

static int check_utf8(const char *data, size_t size) {
  size_t ok = ffk_utf8_valid_prefix(data, size);
  if (FFK_LIKELY(ok == size)) return 0;
  return ffk_error_set(FFK_ERR_VALUE, "invalid UTF-8 in str: byte 0x%02x at offset %zu",
                       (unsigned)(unsigned char)data[ok], ok);
}

static int check_data(const void *data, size_t size, const char *what) {
  if (data == NULL && size > 0)
    return ffk_error_set(FFK_ERR_VALUE, "%s: data is NULL but size is %zu", what, size);
  return 0;
}

ffk_string *ffk_string_new(const char *data, size_t size) {
  if (check_data(data, size, "ffk_string_new") != 0 || check_utf8(data, size) != 0) return NULL;
  return make(FFK_TYPE_STRING, data, size);
}

ffk_string *ffk_string_from_cstr(const char *s) {
  if (s == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_string_from_cstr: s is NULL");
    return NULL;
  }
  return ffk_string_new(s, strlen(s));
}

ffk_bytes *ffk_bytes_new(const void *data, size_t size) {
  if (check_data(data, size, "ffk_bytes_new") != 0) return NULL;
  return make(FFK_TYPE_BYTES, (const char *)data, size);
}

static void small(int32_t type_index, const void *data, size_t size, ffk_any *out) {
  *out = ffk_any_none();
  out->type_index = type_index;
  out->aux = (uint32_t)size;
  if (size) memcpy(out->v_bytes, data, size);
}

int ffk_any_str(const char *data, size_t size, ffk_any *out) {
  *out = ffk_any_none();
  if (check_data(data, size, "ffk_any_str") != 0 || check_utf8(data, size) != 0) return -1;
  if (size <= FFK_SMALL_STR_MAX) {
    small(FFK_TYPE_SMALL_STR, data, size, out);
    return 0;
  }
  ffk_string *s = make(FFK_TYPE_STRING, data, size);
  if (s == NULL) return -1;
  *out = ffk_any__object_steal(&s->header);
  return 0;
}

/*
 * A block of Strings (ffk_any_str_many): an ffk_object_block (internal.h: the count of
 * the Strings not yet freed), then for each, a pointer back to the block, the ffk_string
 * and its bytes, 8-byte aligned. Each String's deleter is ffk_object__block_deleter
 * (object_core.c), which frees the block with the last String, without the nesting machinery,
 * as a leaf.
 */
typedef ffk_object_block str_block;

static size_t block_stride(size_t size) { return (sizeof(str_block *) + sizeof(ffk_string) + size + 1 + 7) & ~(size_t)7; }

int ffk_any_str_many(const char *const *data, const size_t *sizes, int64_t n, ffk_any *out) {
  if (n < 0 || ((data == NULL || sizes == NULL || out == NULL) && n > 0))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_any_str_many: %lld strs from %p and %p", (long long)n, (const void *)data,
                         (const void *)sizes);
  for (int64_t i = 0; i < n; ++i) out[i] = ffk_any_none(); /* all None, also after a failure at i */
  size_t total = sizeof(str_block), count = 0;
  for (int64_t i = 0; i < n; ++i) {
    size_t size = sizes[i];
    if (FFK_UNLIKELY(data[i] == NULL && size > 0))
      return ffk_error_set(FFK_ERR_VALUE, "ffk_any_str_many: str %lld: data is NULL but size is %zu", (long long)i, size);
    size_t ok = ffk_utf8_valid_prefix(data[i], size);
    if (FFK_UNLIKELY(ok != size))
      return ffk_error_set(FFK_ERR_VALUE, "invalid UTF-8 in str %lld: byte 0x%02x at offset %zu", (long long)i,
                           (unsigned)(unsigned char)data[i][ok], ok);
    if (size <= FFK_SMALL_STR_MAX) continue;
    if (FFK_UNLIKELY(size > SIZE_MAX / 2 - total))
      return ffk_error_set(FFK_ERR_MEMORY, "ffk_any_str_many: %lld strs are too large", (long long)n);
    total += block_stride(size);
    ++count;
  }
  str_block *b = NULL;
  if (count > 0) {
    if ((b = ffk_mem__raw_alloc(total)) == NULL)
      return ffk_error_set(FFK_ERR_MEMORY, "out of memory allocating %zu bytes for %zu Strings", total, count);
    b->live = count;
  }
  char *at = (char *)(b + 1);
  for (int64_t i = 0; i < n; ++i) {
    size_t size = sizes[i];
    if (size <= FFK_SMALL_STR_MAX) {
      small(FFK_TYPE_SMALL_STR, data[i], size, &out[i]);
      continue;
    }
    *(str_block **)at = b;
    ffk_string *s = (ffk_string *)(at + sizeof(str_block *));
    ffk_object__init(&s->header, FFK_TYPE_STRING, ffk_object__block_deleter);
    char *bytes = (char *)(s + 1);
    memcpy(bytes, data[i], size);
    bytes[size] = '\0';
    s->data = bytes;
    s->size = size;
    out[i] = ffk_any__object_steal(&s->header);
    at += block_stride(size);
  }
  return 0;
}

int ffk_any_cstr(const char *s, ffk_any *out) {
  if (s == NULL) {
    *out = ffk_any_none();
    return ffk_error_set(FFK_ERR_VALUE, "ffk_any_cstr: s is NULL");
  }
  return ffk_any_str(s, strlen(s), out);
}

int ffk_any_bytes(const void *data, size_t size, ffk_any *out) {
  *out = ffk_any_none();
  if (check_data(data, size, "ffk_any_bytes") != 0) return -1;
  if (size <= FFK_SMALL_STR_MAX) {
    small(FFK_TYPE_SMALL_BYTES, data, size, out);
    return 0;
  }
  ffk_bytes *b = make(FFK_TYPE_BYTES, (const char *)data, size);
  if (b == NULL) return -1;
  *out = ffk_any__object_steal(&b->header);
  return 0;
}

/*
 * UTF-8 validation (RFC 3629): ASCII runs are skipped eight bytes at a time; a
 * multi-byte sequence must have the right number of continuation bytes and must not
 * be overlong, a surrogate (U+D800..U+DFFF) or above U+10FFFF.
 */
size_t ffk_utf8_valid_prefix(const char *data, size_t size) {
  const unsigned char *s = (const unsigned char *)data;
  if (size < 8) {
    /* Short strings (every inline one): one OR over the bytes decides the common ASCII case. */
    unsigned char any_high = 0;
    for (size_t k = 0; k < size; ++k) any_high |= s[k];
    if (any_high < 0x80) return size;
  }
  size_t i = 0;
  while (i < size) {
    if (i + 8 <= size) {
      uint64_t chunk;
      memcpy(&chunk, s + i, 8);
      if ((chunk & UINT64_C(0x8080808080808080)) == 0) {
        i += 8;
        continue;
      }
    }
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;          /* overlong */
      else if (c == 0xed) hi = 0x9f;     /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;          /* overlong */
      else if (c == 0xf4) hi = 0x8f;     /* above U+10FFFF */
    } else {
      return i;                          /* 0x80..0xc1 and 0xf5..0xff never start a sequence */
    }
    if (i + n > size) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < n; ++k)
      if ((s[i + k] & 0xc0) != 0x80) return i;
    i += n;
  }
  return size;
}
