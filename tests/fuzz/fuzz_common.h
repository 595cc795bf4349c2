/*
 * tests/fuzz/fuzz_common.h - what every harness shares: a reader that decodes the
 * fuzzer's bytes into small integers and choices, a check that aborts with a message
 * (libFuzzer records the input; the replay test fails), and the error and leak checks.
 *
 * Harnesses are plain C11 and define LLVMFuzzerTestOneInput. They are built twice:
 * by clang with -fsanitize=fuzzer (tests/fuzz/build_fuzzers.sh) and by Bazel with
 * replay_main.c, which runs the checked-in corpus as a test.
 */
#ifndef FFIKIT_TESTS_FUZZ_COMMON_H
#define FFIKIT_TESTS_FUZZ_COMMON_H

#include <ffikit/ffi.h>
#include <ffikit/debug.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Consumes the fuzzer's bytes front to back; past the end every read yields 0. */
typedef struct {
  const uint8_t *data;
  size_t size;
  size_t pos;
} fuzz_reader;

static inline fuzz_reader fuzz_reader_make(const uint8_t *data, size_t size) {
  fuzz_reader r = {data, size, 0};
  return r;
}

static inline size_t fuzz_left(const fuzz_reader *r) { return r->size - r->pos; }

static inline uint8_t fuzz_u8(fuzz_reader *r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

static inline uint64_t fuzz_u64(fuzz_reader *r, int nbytes) {
  uint64_t v = 0;
  for (int i = 0; i < nbytes; ++i) v |= (uint64_t)fuzz_u8(r) << (8 * i);
  return v;
}

/* A value in [0, n) (n > 0). */
static inline uint32_t fuzz_below(fuzz_reader *r, uint32_t n) { return n <= 256 ? fuzz_u8(r) % n : (uint32_t)(fuzz_u64(r, 4) % n); }

/* Takes the error left by a failed call: it must exist and be one of the `kinds` (NULL-ended). */
static inline void fuzz_expect_error(const char *what, const char *const *kinds) {
  ffk_error *e = ffk_error_fetch();
  FUZZ_CHECK(e != NULL, "%s failed without setting an error", what);
  const char *kind = ffk_error_kind(e);
  int known = 0;
  for (const char *const *k = kinds; *k != NULL; ++k) known |= strcmp(kind, *k) == 0;
  FUZZ_CHECK(known, "%s failed with an unexpected %s: %s", what, kind, ffk_error_message(e));
  FUZZ_CHECK(ffk_error_message(e) != NULL && ffk_error_message(e)[0] != '\0', "%s: %s without a message", what, kind);
  ffk_object_release((ffk_object *)e);
}

/* No error may be pending after a call that succeeded. */
static inline void fuzz_expect_no_error(const char *what) {
  ffk_error *e = ffk_error_fetch();
  FUZZ_CHECK(e == NULL, "%s succeeded but left a %s: %s", what, e ? ffk_error_kind(e) : "",
             e ? ffk_error_message(e) : "");
}

/* Every object a run made is gone again. */
static inline void fuzz_expect_no_live_objects(int64_t before) {
  int64_t now = ffk_debug_live_objects(-1);
  FUZZ_CHECK(now == before, "%lld objects alive after the run, %lld before", (long long)now, (long long)before);
}

#endif /* FFIKIT_TESTS_FUZZ_COMMON_H */
