/*
 * module.c - Modules: shared libraries of Functions loaded with dlopen.
 *
 * A Module owns one dlopen reference to its library (dlopen counts them, so loading a
 * path twice gives two Modules over one mapping). A Function taken from a module has the
 * Module as its context and releases it when destroyed, so the code outlives every
 * Function that can call it. Libraries whose init entry ran are pinned: their Modules
 * never dlclose, because what init registered has no link back to the Module. So are
 * those ffk_module_keep_loaded keeps (tvm_ffi's keep_module_alive).
 *
 * g_lock (recursive, so an init may load other modules) serialises the init step and
 * guards g_initialised, the handles whose init has run in this process. dlopen and
 * dlclose also run under it: glibc serialises them anyway with a lock of its own, but
 * ThreadSanitizer cannot see that one and reports the loader's memory, allocated in one
 * thread's dlopen and freed in another's dlclose, as a race.
 *
 * Before the first dlopen of a module, the library holding this ffikit is made global
 * (promote_runtime): a module left with undefined ffk_* symbols and no DT_NEEDED on
 * libffikit.so then binds to this runtime even when the runtime itself was loaded
 * RTLD_LOCAL, as the dependency of a Python extension is.
 */
#include "internal.h"

#include <ffikit/module.h>

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct ffk_module {
  ffk_object header;
  void *handle;
  bool pinned;        /* the library ran its init entry, or ffk_module_keep_loaded: never closed */
  const char *prefix; /* system library: the symbol prefix tried first (in this block); else NULL */
  char path[];
};

static pthread_mutex_t g_lock;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Handles whose init has run; a pinned library's handle never changes, so pointers compare. */
static void **g_initialised;
static size_t g_ninitialised, g_cap_initialised;

static pthread_once_t g_promote_once = PTHREAD_ONCE_INIT;

/* Re-opens the object that holds this code with RTLD_GLOBAL (RTLD_NOLOAD: only if it is
 * already loaded, which it is), so objects loaded later resolve ffk_* against it. The
 * reference is kept: the running runtime stays loaded anyway. When ffikit is linked into
 * the executable the NOLOAD open finds nothing to promote and nothing changes: such a
 * program exports ffk_* itself when linked with -rdynamic. */
static void promote_runtime(void) {
  Dl_info info;
  if (dladdr(&g_promote_once, &info) == 0 || info.dli_fname == NULL) return;
  if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == NULL) dlerror(); /* drop its message */
}

static void init_lock(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g_lock, &attr);
  pthread_mutexattr_destroy(&attr);
}

static void module_deleter(void *self, int which) {
  ffk_module *m = self;
  if ((which & FFK_DELETER_DESTROY) && m->handle != NULL) {
    if (!m->pinned) {
      pthread_mutex_lock(&g_lock); /* a loaded module exists, so g_once has run */
      dlclose(m->handle);
      pthread_mutex_unlock(&g_lock);
    }
    m->handle = NULL;
  }
  if (which & FFK_DELETER_FREE) ffk_object_free(&m->header);
}

static bool was_initialised(void *handle) {
  for (size_t i = 0; i < g_ninitialised; ++i)
    if (g_initialised[i] == handle) return true;
  return false;
}

/* Runs the library's init entry unless it already ran in this process. Under g_lock. */
static int run_init(ffk_module *m) {
  int (*init)(ffk_module *);
  *(void **)&init = dlsym(m->handle, "ffikit_module_init");
  if (init == NULL) return 0;
  m->pinned = true; /* even when init fails: it may have registered something first */
  if (was_initialised(m->handle)) return 0;
  if (g_ninitialised == g_cap_initialised) {
    size_t cap = g_cap_initialised ? 2 * g_cap_initialised : 8;
    void **grown = ffk_mem_realloc(g_initialised, cap * sizeof(void *));
    if (grown == NULL) return -1;
    g_initialised = grown;
    g_cap_initialised = cap;
  }
  g_initialised[g_ninitialised++] = m->handle;
  if (init(m) == 0) {
    if (ffk_error_occurred()) ffk_error_clear(); /* a stray error after success: not ours to report */
    return 0;
  }
  --g_ninitialised; /* a later load tries again */
  if (!ffk_error_occurred())
    return ffk_error_set(FFK_ERR_RUNTIME, "the init entry of module `%s` returned -1 without raising an error",
                         m->path);
  ffk_error *err = ffk_error_fetch();
  char frame[600];
  snprintf(frame, sizeof frame, "  in the init entry of module `%.500s`", m->path);
  if (ffk_error_append_frame(err, frame) != 0) ffk_error_clear();
  ffk_error_restore(err);
  return -1;
}

/* Checks the module's recorded ABI against ours. */
static int check_abi(const ffk_module *m) {
  const uint32_t *version = dlsym(m->handle, "ffikit_abi_version");
  if (version == NULL)
    return ffk_error_set(FFK_ERR_RUNTIME, "`%s` is not an ffikit module: it has no symbol `ffikit_abi_version`",
                         m->path);
  uint32_t theirs = *version, ours = ffk_abi_version();
  if (theirs >> 16 != ours >> 16 || (theirs & 0xffff) > (ours & 0xffff))
    return ffk_error_set(FFK_ERR_RUNTIME,
                         "module `%s` was built for ffikit ABI %u.%u, but this library implements ABI %u.%u", m->path,
                         theirs >> 16, theirs & 0xffff, ours >> 16, ours & 0xffff);
  return 0;
}

ffk_module *ffk_module_load(const char *path) {
  if (path == NULL || path[0] == '\0') {
    ffk_error_set(FFK_ERR_VALUE, "cannot load a module: the path is %s", path == NULL ? "NULL" : "empty");
    return NULL;
  }
  pthread_once(&g_once, init_lock);
  pthread_once(&g_promote_once, promote_runtime);
  size_t len = strlen(path);
  ffk_module *m = (ffk_module *)ffk_object_alloc(FFK_TYPE_MODULE, sizeof(ffk_module) + len + 1, module_deleter);
  if (m == NULL) return NULL;
  memcpy(m->path, path, len + 1);
  pthread_mutex_lock(&g_lock);
  dlerror(); /* clear any stale message */
  m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char *why = m->handle == NULL ? dlerror() : NULL;
  if (m->handle == NULL) {
    ffk_error_set(FFK_ERR_RUNTIME, "cannot load module `%s`: %s", path, why ? why : "unknown reason");
    pthread_mutex_unlock(&g_lock);
    ffk_object_release(&m->header);
    return NULL;
  }
  pthread_mutex_unlock(&g_lock);
  int rc = check_abi(m);
  if (rc == 0) {
    pthread_mutex_lock(&g_lock);
    rc = run_init(m);
    pthread_mutex_unlock(&g_lock);
  }
  if (rc != 0) {
    ffk_object_release(&m->header);
    return NULL;
  }
  return m;
}

const char *ffk_module_path(const ffk_module *m) { return m->path; }

int ffk_module_keep_loaded(ffk_module *m) {
  if (m == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_module_keep_loaded: the module is NULL");
  /* The caller holds a reference, so the deleter (the only reader outside g_lock) runs
   * after this store: the release that frees the Module orders them. */
  pthread_mutex_lock(&g_lock); /* a Module exists, so g_once has run */
  m->pinned = true;
  pthread_mutex_unlock(&g_lock);
  return 0;
}

static void release_module(void *context) { ffk_object_release((ffk_object *)context); }

static bool is_identifier(const char *s) {
  if (!isalpha((unsigned char)s[0]) && s[0] != '_') return false;
  for (; *s; ++s)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/*
 * Finds the symbols of the function `name`: ffikit_fn_<prefix><name> first, then (with a
 * prefix) ffikit_fn_<name>. Stores the call, the signature and doc texts (NULL when not
 * exported) and the suffix that matched in `which` (cap bytes). Returns 1 found, 0 not
 * found (`which` then holds the symbols tried, for messages), -1 for a bad name.
 */
static int find_function(const ffk_module *m, const char *name, ffk_safe_call *call, const char **sig,
                         const char **doc, uint32_t *flags, char *which, size_t cap) {
  if (m == NULL || name == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot look up a module function: the %s is NULL",
                         m == NULL ? "module" : "name");
  if (!is_identifier(name) || strlen(name) > 200)
    return ffk_error_set(FFK_ERR_VALUE, "module `%s`: `%.200s` is not a function name (an identifier)", m->path,
                         name);
  char symbol[400];
  const char *prefixes[2] = {m->prefix != NULL && m->prefix[0] ? m->prefix : "", ""};
  int tries = prefixes[0][0] ? 2 : 1;
  for (int t = 0; t < tries; ++t) {
    snprintf(symbol, sizeof symbol, "ffikit_fn_%s%s", prefixes[t], name);
    *(void **)call = dlsym(m->handle, symbol);
    if (*call == NULL) continue;
    snprintf(which, cap, "%s%s", prefixes[t], name);
    snprintf(symbol, sizeof symbol, "ffikit_sig_%s", which);
    const char *const *text = dlsym(m->handle, symbol);
    *sig = text != NULL ? *text : NULL;
    snprintf(symbol, sizeof symbol, "ffikit_doc_%s", which);
    text = dlsym(m->handle, symbol);
    *doc = text != NULL ? *text : NULL;
    snprintf(symbol, sizeof symbol, "ffikit_flags_%s", which);
    const uint32_t *bits = dlsym(m->handle, symbol);
    *flags = bits != NULL ? *bits : 0;
    return 1;
  }
  if (tries == 2)
    snprintf(which, cap, "`ffikit_fn_%s%s` or `ffikit_fn_%s`", prefixes[0], name, name);
  else
    snprintf(which, cap, "`ffikit_fn_%s`", name);
  return 0;
}

ffk_function *ffk_module_get_function(ffk_module *m, const char *name) {
  if (m == NULL || name == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "ffk_module_get_function: the %s is NULL", m == NULL ? "module" : "name");
    return NULL;
  }
  ffk_safe_call call;
  const char *sig, *doc;
  uint32_t flags;
  char which[450];
  int found = find_function(m, name, &call, &sig, &doc, &flags, which, sizeof which);
  if (found <= 0) {
    if (found == 0)
      ffk_error_set(FFK_ERR_ATTRIBUTE, "module `%s` has no function `%s` (no symbol %s)", m->path, name, which);
    return NULL;
  }
  ffk_object_retain(&m->header);
  ffk_function *f = ffk_function_new_typed(name, sig, call, m, release_module);
  if (f != NULL && ((doc != NULL && ffk_function_set_doc(f, doc) != 0) || ffk_function_set_flags(f, flags) != 0)) {
    ffk_object_release((ffk_object *)f);
    return NULL;
  }
  return f;
}

/* ---- Inspecting a module's functions, and the system library ----------------------- */

int ffk_module_implements_function(const ffk_module *m, const char *name) {
  if (m == NULL || name == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "cannot look up a module function: the %s is NULL",
                         m == NULL ? "module" : "name");
  if (!is_identifier(name) || strlen(name) > 200) return 0; /* no symbol can have that name */
  ffk_safe_call call;
  const char *sig, *doc;
  uint32_t flags;
  char which[450];
  return find_function(m, name, &call, &sig, &doc, &flags, which, sizeof which);
}

int ffk_module_get_function_doc(const ffk_module *m, const char *name, const char **out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot look up a function's doc: the output is NULL");
  *out = NULL;
  int found = ffk_module_implements_function(m, name);
  if (found <= 0) return found;
  ffk_safe_call call;
  const char *sig;
  uint32_t flags;
  char which[450];
  find_function(m, name, &call, &sig, out, &flags, which, sizeof which);
  return *out != NULL;
}

int ffk_module_get_function_metadata(ffk_module *m, const char *name, ffk_any *out) {
  if (out == NULL) return ffk_error_set(FFK_ERR_VALUE, "cannot look up a function's metadata: the output is NULL");
  *out = ffk_any_none();
  int found = ffk_module_implements_function(m, name);
  if (found <= 0) return found;
  ffk_function *f = ffk_module_get_function(m, name);
  if (f == NULL) return -1;
  int rc = ffk_function_metadata(f, out);
  ffk_object_release((ffk_object *)f);
  return rc == 0 ? 1 : -1;
}

static bool is_symbol_prefix(const char *s) {
  for (; *s; ++s)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

ffk_module *ffk_module_system_lib(const char *prefix) {
  if (prefix == NULL) prefix = "";
  if (strlen(prefix) > 100 || !is_symbol_prefix(prefix)) {
    ffk_error_set(FFK_ERR_VALUE,
                  "cannot make a system library with the symbol prefix `%.100s`: a prefix is letters, digits and "
                  "'_' (part of a C identifier), at most 100 of them",
                  prefix);
    return NULL;
  }
  pthread_once(&g_once, init_lock);
  static const char path[] = FFK_MODULE_SYSTEM_LIB_PATH;
  size_t plen = strlen(prefix);
  ffk_module *m = (ffk_module *)ffk_object_alloc(FFK_TYPE_MODULE, sizeof(ffk_module) + sizeof path + plen + 1,
                                                 module_deleter);
  if (m == NULL) return NULL;
  memcpy(m->path, path, sizeof path);
  char *p = m->path + sizeof path;
  memcpy(p, prefix, plen + 1);
  m->prefix = p;
  m->pinned = true; /* the process's own handle: nothing to close */
  pthread_mutex_lock(&g_lock);
  dlerror();
  m->handle = dlopen(NULL, RTLD_NOW);
  const char *why = m->handle == NULL ? dlerror() : NULL;
  pthread_mutex_unlock(&g_lock);
  if (m->handle == NULL) {
    ffk_error_set(FFK_ERR_RUNTIME, "cannot open the system library (the running process): %s",
                  why ? why : "unknown reason");
    ffk_object_release(&m->header);
    return NULL;
  }
  return m;
}

const char *ffk_module_symbol_prefix(const ffk_module *m) { return m->prefix != NULL ? m->prefix : ""; }
