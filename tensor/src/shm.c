/*
 * shm.c - shared-memory Storage: POSIX shm segments that other processes attach by name.
 *
 * Layout of a segment (all of it is one shm object, mapped MAP_SHARED whole):
 *
 *   [0, 4096)          shm_header: magic "ffikit-shm", version, nbytes, state, a robust
 *                      process-shared mutex, and a table of SHM_MAX_HOLDERS holder slots
 *                      {pid, count}; the rest of the page is zero.
 *   [4096, 4096+n)     the user's n bytes: ffk_storage_data points here (page aligned).
 *
 * The creator sizes the segment with ftruncate (so the bytes start zeroed), initialises the
 * mutex, records itself, and publishes the header by storing `version` last (release; readers
 * load it with acquire). Until then (no magic, or version 0) the segment counts as foreign
 * or unfinished: attach refuses it, the sweep skips it, nobody locks its mutex. The header
 * is read only by processes of the same ffikit build (the version covers the layout, not
 * the ABI). Segments are made with mode 0600: the same user only.
 *
 * Lifetime policy. A holder slot belongs to one process: its pid and how many Storage
 * objects of that process map the segment (attaching twice in one process bumps the count).
 * Under the mutex:
 *   - attach prunes dead pids (kill(pid, 0) fails with ESRCH), then adds itself; when no
 *     live holder is left it treats the segment as gone: it unlinks the name and raises
 *     FileNotFoundError, as if the name were missing. Create, finding the name taken by a segment
 *     whose holders are all dead, unlinks it the same way and takes the name;
 *   - release takes one off its own count, prunes, and when no live holder is left marks the
 *     header DEAD and shm_unlinks the name; the mapping itself lives until munmap.
 * `state` is what keeps an unlink from hitting a newer segment of the same name: every
 * unlink of a segment happens under its mutex after it is marked DEAD, so a process that
 * opened the name, then finds the header not DEAD under the mutex, knows the name still
 * refers to this segment. A process that dies holding the mutex makes the next locker get
 * EOWNERDEAD; the table is always consistent between single-word stores, so it just calls
 * pthread_mutex_consistent and prunes. One who died between marking DEAD and unlinking
 * leaves a DEAD segment under its name: attach and sweep, which opened it by name, finish
 * the unlink when the name still refers to the same file (device and inode).
 *
 * A Storage made in a parent and inherited through fork() is not the child's holder: its
 * release in the child only unmaps (the record keeps the pid it was made under). A zombie
 * (exited, not yet reaped) still counts as alive, and a recycled pid keeps a dead holder's
 * segment alive until that pid goes too; ffk_storage_sweep_shared removes what is left.
 *
 * Every Storage is counted once on cpu:0 (two attachments in one process count twice).
 */
#include "storage_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC "ffikit-shm"
#define SHM_VERSION 1u
#define SHM_MAX_HOLDERS 64
#define SHM_DATA_OFFSET 4096
#define SHM_NAME_MAX 200 /* with the leading '/' */
#define SHM_DIR "/dev/shm"

enum { STATE_LIVE = 1, STATE_DEAD = 2 };

typedef struct shm_holder {
  int32_t pid;    /* 0: a free slot */
  uint32_t count; /* Storage objects of that process */
} shm_holder;

typedef struct shm_header {
  char magic[16];       /* SHM_MAGIC, NUL padded */
  uint32_t version;     /* SHM_VERSION; 0 while the creator is still making the header */
  uint32_t state;       /* STATE_LIVE, or STATE_DEAD once the name is unlinked; under lock */
  uint64_t nbytes;      /* the user's bytes at SHM_DATA_OFFSET */
  pthread_mutex_t lock; /* robust, process-shared; guards state and holders */
  shm_holder holders[SHM_MAX_HOLDERS];
} shm_header;

_Static_assert(sizeof(shm_header) <= SHM_DATA_OFFSET, "the header fits its page");
_Static_assert(SHM_DATA_OFFSET % FFK_STORAGE_DEFAULT_ALIGNMENT == 0, "the bytes are aligned");

/* The process-local bookkeeping of one Storage (its `extra`). */
typedef struct shm_extra {
  shm_header *base;
  size_t map_size;
  int32_t pid; /* the process whose holder count this Storage holds */
  dev_t dev;   /* the file as opened by name (attach and sweep) */
  ino_t ino;
  char name[SHM_NAME_MAX + 1];
} shm_extra;

static const DLDevice k_cpu = {kDLCPU, 0};

/* ---- Names ------------------------------------------------------------------------------ */

static int check_name(const char *name) {
  if (name == NULL) return ffk_error_set(FFK_ERR_VALUE, "shared memory name is NULL");
  size_t n = strlen(name);
  if (name[0] != '/') return ffk_error_set(FFK_ERR_VALUE, "shared memory name `%s` does not start with '/'", name);
  if (strchr(name + 1, '/') != NULL)
    return ffk_error_set(FFK_ERR_VALUE, "shared memory name `%s` has a '/' after the first character", name);
  if (n > SHM_NAME_MAX)
    return ffk_error_set(FFK_ERR_VALUE, "shared memory name `%s` is longer than %d characters", name, SHM_NAME_MAX);
  if (n == 1 || strcmp(name, "/.") == 0 || strcmp(name, "/..") == 0)
    return ffk_error_set(FFK_ERR_VALUE, "shared memory name `%s` names no file", name);
  return 0;
}

/* "/ffikit-<pid>-<counter>-<random hex>": unique in this process, unguessable across. */
static void make_name(char *out, size_t cap) {
  static uint64_t counter;
  uint64_t n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ n) * 0x9E3779B97F4A7C15u;
  }
  snprintf(out, cap, "/ffikit-%ld-%llu-%016llx", (long)getpid(), (unsigned long long)n, (unsigned long long)r);
}

static int syscall_error(const char *call, const char *name, int err) {
  return ffk_error_set(FFK_ERR_RUNTIME, "%s(`%s`) failed: %s", call, name, strerror(err));
}

/* ---- The holder table (call with the lock held) -------------------------------------------- */

/* 0 with the lock held, or the pthread error without it; a dead owner's lock is taken over. */
static int header_lock(shm_header *h) {
  int rc = pthread_mutex_lock(&h->lock);
  if (rc == EOWNERDEAD && (rc = pthread_mutex_consistent(&h->lock)) != 0) pthread_mutex_unlock(&h->lock);
  return rc;
}

/* Frees the slots of processes that no longer exist; returns how many live holders are left. */
static int prune_dead(shm_header *h) {
  int live = 0;
  for (int i = 0; i < SHM_MAX_HOLDERS; ++i) {
    shm_holder *slot = &h->holders[i];
    if (slot->pid == 0) continue;
    if (kill((pid_t)slot->pid, 0) == -1 && errno == ESRCH) {
      slot->pid = 0;
      slot->count = 0;
    } else {
      ++live;
    }
  }
  return live;
}

static bool add_holder(shm_header *h, int32_t pid) {
  shm_holder *free_slot = NULL;
  for (int i = 0; i < SHM_MAX_HOLDERS; ++i) {
    if (h->holders[i].pid == pid) {
      h->holders[i].count++;
      return true;
    }
    if (h->holders[i].pid == 0 && free_slot == NULL) free_slot = &h->holders[i];
  }
  if (free_slot == NULL) return false;
  free_slot->count = 1;
  free_slot->pid = pid;
  return true;
}

/* Marks the segment dead and unlinks its name (which, not being DEAD yet, is still ours). */
static void kill_segment(shm_header *h, const char *name) {
  h->state = STATE_DEAD;
  shm_unlink(name);
}

/*
 * Finishes the unlink of a DEAD segment whose killer died before unlinking; `x` was opened
 * by name and its lock is held. No newer segment can take the name while it still names this
 * file, so the check and the unlink cannot race with a create. True when it unlinked.
 */
static bool unlink_if_still_named(const shm_extra *x) {
  char path[sizeof SHM_DIR + SHM_NAME_MAX];
  struct stat st;
  snprintf(path, sizeof path, "%s%s", SHM_DIR, x->name);
  if (stat(path, &st) != 0 || st.st_dev != x->dev || st.st_ino != x->ino) return false;
  return shm_unlink(x->name) == 0;
}

/*
 * Gives back the holder count of one Storage and, when no live holder is left, unlinks the
 * name; then unmaps and frees `x`. Cannot fail: when the lock cannot be had the record stays
 * until this process exits and someone prunes it.
 */
static void drop_and_unmap(shm_extra *x) {
  shm_header *h = x->base;
  if (x->pid == (int32_t)getpid() && header_lock(h) == 0) {
    for (int i = 0; i < SHM_MAX_HOLDERS; ++i) {
      if (h->holders[i].pid == x->pid) {
        if (--h->holders[i].count == 0) h->holders[i].pid = 0;
        break;
      }
    }
    if (prune_dead(h) == 0 && h->state != STATE_DEAD) kill_segment(h, x->name);
    pthread_mutex_unlock(&h->lock);
  }
  munmap(x->base, x->map_size);
  ffk_mem_free(x);
}

static void shm_release(ffk_storage *s) { drop_and_unmap((shm_extra *)s->extra); }

/* Wraps a mapped, recorded segment; on failure gives the record and the mapping back. */
static ffk_storage *wrap(shm_extra *x) {
  shm_header *h = x->base;
  ffk_storage *s = ffk_storage__wrap(k_cpu, (char *)h + SHM_DATA_OFFSET, (size_t)h->nbytes, shm_release, x);
  if (s == NULL) drop_and_unmap(x);
  return s;
}

/* ---- Create ---------------------------------------------------------------------------------- */

static int init_header(shm_header *h, size_t nbytes, int32_t pid) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) {
    rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    if (rc == 0) rc = pthread_mutex_init(&h->lock, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  if (rc != 0) return rc;
  memcpy(h->magic, SHM_MAGIC, sizeof SHM_MAGIC);
  h->state = STATE_LIVE;
  h->nbytes = nbytes;
  h->holders[0].pid = pid;
  h->holders[0].count = 1;
  __atomic_store_n(&h->version, SHM_VERSION, __ATOMIC_RELEASE); /* publishes the header */
  return 0;
}

static bool remove_if_abandoned(shm_extra *x);

ffk_storage *ffk_storage_new_shared(const char *name, size_t nbytes) {
  if (nbytes > (size_t)PTRDIFF_MAX - SHM_DATA_OFFSET) {
    ffk_error_set(FFK_ERR_VALUE, "shared memory of %zu bytes is larger than PTRDIFF_MAX", nbytes);
    return NULL;
  }
  if (name != NULL && check_name(name) != 0) return NULL;
  shm_extra *x = ffk_mem_calloc(1, sizeof *x);
  if (x == NULL) return NULL;
  if (name != NULL) memcpy(x->name, name, strlen(name) + 1);
  else make_name(x->name, sizeof x->name);
  x->pid = (int32_t)getpid();
  x->map_size = SHM_DATA_OFFSET + nbytes;

  int fd = shm_open(x->name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {
    /* A name left behind by holders that all died is free to take: the policy's "until
       another process touches it". */
    shm_extra old = {0};
    memcpy(old.name, x->name, sizeof old.name);
    if (remove_if_abandoned(&old)) fd = shm_open(x->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    else errno = EEXIST;
  }
  if (fd < 0) {
    if (errno == EEXIST) ffk_error_set(FFK_ERR_VALUE, "shared memory `%s` already exists", x->name);
    else syscall_error("shm_open", x->name, errno);
    ffk_mem_free(x);
    return NULL;
  }
  const char *call = NULL;
  int err = 0;
  void *base = MAP_FAILED;
  if (ftruncate(fd, (off_t)x->map_size) != 0) call = "ftruncate", err = errno;
  else if ((base = mmap(NULL, x->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
    call = "mmap", err = errno;
  else if ((err = init_header(base, nbytes, x->pid)) != 0) call = "pthread_mutex_init";
  close(fd); /* the mapping keeps the segment open */
  if (call != NULL) {
    syscall_error(call, x->name, err);
    if (base != MAP_FAILED) munmap(base, x->map_size);
    shm_unlink(x->name); /* O_EXCL made it ours, and nobody could use it unpublished */
    ffk_mem_free(x);
    return NULL;
  }
  x->base = base;
  return wrap(x);
}

/* ---- Attach ---------------------------------------------------------------------------------- */

/* Why an existing segment cannot be mapped. */
enum { OPEN_OK, OPEN_MISSING, OPEN_FOREIGN, OPEN_VERSION, OPEN_SYSCALL };

/*
 * Opens the segment `x->name`, checks its header and maps it whole into x->base/x->map_size.
 * On OPEN_SYSCALL *call names the failed call and *err its errno. Raises nothing.
 */
static int open_existing(shm_extra *x, const char **call, int *err) {
  int fd = shm_open(x->name, O_RDWR, 0);
  if (fd < 0) {
    *call = "shm_open", *err = errno;
    return errno == ENOENT ? OPEN_MISSING : OPEN_SYSCALL;
  }
  struct stat st;
  shm_header probe; /* read before mapping: a foreign file may shrink under us (no SIGBUS) */
  int rc = OPEN_OK;
  if (fstat(fd, &st) != 0) {
    *call = "fstat", *err = errno, rc = OPEN_SYSCALL;
  } else if (!S_ISREG(st.st_mode) || st.st_size < SHM_DATA_OFFSET ||
             pread(fd, &probe, sizeof probe, 0) != (ssize_t)sizeof probe ||
             memcmp(probe.magic, SHM_MAGIC, sizeof SHM_MAGIC) != 0 || probe.version == 0 ||
             (probe.version == SHM_VERSION && probe.nbytes > (uint64_t)st.st_size - SHM_DATA_OFFSET)) {
    rc = OPEN_FOREIGN;
  } else if (probe.version != SHM_VERSION) {
    rc = OPEN_VERSION;
  } else {
    x->map_size = (size_t)st.st_size;
    x->dev = st.st_dev;
    x->ino = st.st_ino;
    void *base = mmap(NULL, x->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      *call = "mmap", *err = errno, rc = OPEN_SYSCALL;
    } else if (__atomic_load_n(&((shm_header *)base)->version, __ATOMIC_ACQUIRE) != SHM_VERSION) {
      munmap(base, x->map_size); /* (the probe saw it published; this load only pairs with the release) */
      rc = OPEN_FOREIGN;
    } else {
      x->base = base;
    }
  }
  close(fd);
  return rc;
}

static void raise_open_error(int why, const char *name, const char *call, int err) {
  if (why == OPEN_MISSING) ffk_error_set(FFK_ERR_FILE_NOT_FOUND, "no shared memory named `%s`", name);
  else if (why == OPEN_FOREIGN) ffk_error_set(FFK_ERR_VALUE, "`%s` is not ffikit shared memory", name);
  else if (why == OPEN_VERSION)
    ffk_error_set(FFK_ERR_VALUE, "`%s` is ffikit shared memory of another version (this build reads %u)", name,
                  SHM_VERSION);
  else syscall_error(call, name, err);
}

ffk_storage *ffk_storage_attach_shared(const char *name) {
  if (check_name(name) != 0) return NULL;
  shm_extra *x = ffk_mem_calloc(1, sizeof *x);
  if (x == NULL) return NULL;
  memcpy(x->name, name, strlen(name) + 1);
  x->pid = (int32_t)getpid();
  const char *call = NULL;
  int err = 0;
  int why = open_existing(x, &call, &err);
  if (why != OPEN_OK) {
    raise_open_error(why, name, call, err);
    ffk_mem_free(x);
    return NULL;
  }
  shm_header *h = x->base;
  int rc = header_lock(h);
  if (rc != 0) {
    syscall_error("pthread_mutex_lock", name, rc);
  } else if (h->state == STATE_DEAD) {
    unlink_if_still_named(x); /* it was unlinked after we opened it, or its killer died */
    ffk_error_set(FFK_ERR_FILE_NOT_FOUND, "no shared memory named `%s`", name);
  } else if (prune_dead(h) == 0) {
    kill_segment(h, name); /* every holder died without letting go: the segment is gone */
    ffk_error_set(FFK_ERR_FILE_NOT_FOUND, "no shared memory named `%s`", name);
  } else if (!add_holder(h, x->pid)) {
    ffk_error_set(FFK_ERR_RUNTIME, "shared memory `%s` already has %d holder processes", name, SHM_MAX_HOLDERS);
  } else {
    pthread_mutex_unlock(&h->lock);
    return wrap(x);
  }
  if (rc == 0) pthread_mutex_unlock(&h->lock);
  munmap(x->base, x->map_size);
  ffk_mem_free(x);
  return NULL;
}

const char *ffk_storage_shared_name(const ffk_storage *s) {
  if (s == NULL || s->release != shm_release || s->extra == NULL) return NULL;
  return ((const shm_extra *)s->extra)->name;
}

/* ---- Sweep ------------------------------------------------------------------------------------ */

/*
 * Unlinks the segment x->name when it is ffikit's and its holders are all dead (or it was
 * left DEAD under its name). Raises nothing; false when it removed nothing.
 */
static bool remove_if_abandoned(shm_extra *x) {
  const char *call;
  int err;
  bool removed = false;
  if (open_existing(x, &call, &err) != OPEN_OK) return false;
  shm_header *h = x->base;
  if (header_lock(h) == 0) {
    if (h->state == STATE_DEAD) {
      removed = unlink_if_still_named(x);
    } else if (prune_dead(h) == 0) {
      kill_segment(h, x->name);
      removed = true;
    }
    pthread_mutex_unlock(&h->lock);
  }
  munmap(x->base, x->map_size);
  return removed;
}

int64_t ffk_storage_sweep_shared(void) {
  DIR *dir = opendir(SHM_DIR);
  if (dir == NULL) return syscall_error("opendir", SHM_DIR, errno);
  shm_extra entry = {0}; /* reused for every entry: only the name and the mapping change */
  shm_extra *x = &entry;
  int64_t removed = 0;
  struct dirent *e;
  /* Entries the sweep cannot open, or without a published header (foreign, or being made),
     are skipped: the segments are checked by content, so user-named ones are swept too. */
  for (;;) {
    errno = 0;
    if ((e = readdir(dir)) == NULL) break;
    size_t len = strlen(e->d_name);
    if ((e->d_type != DT_REG && e->d_type != DT_UNKNOWN) || len >= SHM_NAME_MAX) continue;
    x->name[0] = '/';
    memcpy(x->name + 1, e->d_name, len + 1);
    removed += remove_if_abandoned(x);
  }
  int read_errno = errno;
  closedir(dir);
  if (read_errno != 0) return syscall_error("readdir", SHM_DIR, read_errno);
  return removed;
}
