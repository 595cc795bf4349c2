/*
 * tests/fuzz/replay_main.c - runs a harness over files without libFuzzer, so that the
 * checked-in corpus (and every crash added to it) is a regression test in ./test.sh.
 *
 *   <harness>_replay DIR_OR_FILE...
 *
 * Directories are read in name order. Exits 1 when an argument cannot be read or when
 * no input at all was found (a replay of nothing would pass vacuously); a failing
 * check inside the harness aborts.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <sys/stat.h>

static long replayed;

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, size = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + size, 1, cap - size, f)) > 0) {
    size += n;
    if (size == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (bigger == NULL) free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (buf == NULL) {
    fprintf(stderr, "%s: out of memory\n", path);
    return -1;
  }
  /* An exact-size copy, so that ASan sees reads past the input's end. */
  uint8_t *input = malloc(size ? size : 1);
  if (input == NULL) {
    free(buf);
    return -1;
  }
  if (size) memcpy(input, buf, size);
  free(buf);
  LLVMFuzzerTestOneInput(input, size);
  free(input);
  ++replayed;
  return 0;
}

static int replay(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  struct dirent **names;
  int n = scandir(path, &names, NULL, alphasort);
  if (n < 0) {
    perror(path);
    return -1;
  }
  int rc = 0;
  for (int i = 0; i < n; ++i) {
    if (names[i]->d_name[0] != '.' && rc == 0) {
      size_t len = strlen(path) + strlen(names[i]->d_name) + 2;
      char *child = malloc(len);
      if (child == NULL) {
        rc = -1;
      } else {
        snprintf(child, len, "%s/%s", path, names[i]->d_name);
        rc = replay(child);
        free(child);
      }
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (replay(argv[i]) != 0) return 1;
  if (replayed == 0) {
    fprintf(stderr, "no inputs found\n");
    return 1;
  }
  printf("replayed %ld inputs\n", replayed);
  return 0;
}
