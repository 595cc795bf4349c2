/*
 * globals_module.c - tvm_ffi's ffi.Module* global functions and ffi.SystemLib, over
 * ffikit/module.h, registered when the library loads.
 *
 * ffikit's Module is one shared library (or the process, for the system library) with no
 * imports, no source and no serialized form, so the functions keep tvm_ffi's names and
 * answers where they have one: a module's kind is "library"; it is runnable but not
 * binary-serializable (property mask 2, where tvm_ffi's library modules answer 3); it
 * imports nothing, so query_imports changes nothing, ClearImports does nothing and
 * ImportModule is a RuntimeError; it has no source (InspectSource gives ""); WriteToFile is
 * a RuntimeError naming the module. ffi.ModuleGetWriteFormats returns an Array and so is
 * registered by the containers component (globals_containers.c).
 *
 * ffi.ModuleGlobalsAdd / ffi.ModuleGlobalsRemove keep a module alive in a process-wide
 * list, as tvm_ffi's do (a module whose init registered functions must stay loaded): each
 * Add holds one reference until a Remove of the same module drops it.
 */
#include "internal.h"

#include <ffikit/function.h>
#include <ffikit/module.h>
#include <ffikit/string.h>

#include <pthread.h>

#define MODULE(v) ((ffk_module *)(v).v_obj)

static int load_from_file(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  const char *path;
  if (ffk_args_unpack("ffi.ModuleLoadFromFile", args, nargs, "s", &path) != 0) return -1;
  ffk_module *m = ffk_module_load(path);
  if (m == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)m);
  return 0;
}

/* ffi.SystemLib() or ffi.SystemLib(prefix). */
static int system_lib(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  const char *prefix = NULL;
  if (ffk_args_unpack("ffi.SystemLib", args, nargs, "|s", &prefix) != 0) return -1;
  ffk_module *m = ffk_module_system_lib(prefix);
  if (m == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)m);
  return 0;
}

/* (module, name, query_imports): the Function, or None when the module has none. */
static int get_function(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Module, str, bool) */
  const char *name;
  if (ffk_any_as_str(&args[1], &name, &(size_t){0}) != 0) return -1;
  int has = ffk_module_implements_function(MODULE(args[0]), name);
  if (has <= 0) return has;
  ffk_function *f = ffk_module_get_function(MODULE(args[0]), name);
  if (f == NULL) return -1;
  *result = ffk_any_object_steal((ffk_object *)f);
  return 0;
}

static int implements_function(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Module, str, bool) */
  const char *name;
  if (ffk_any_as_str(&args[1], &name, &(size_t){0}) != 0) return -1;
  int has = ffk_module_implements_function(MODULE(args[0]), name);
  if (has < 0) return -1;
  *result = ffk_any_bool(has == 1);
  return 0;
}

/* (module, name, query_imports): the doc string, or None. */
static int get_function_doc(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const char *name, *doc;
  if (ffk_any_as_str(&args[1], &name, &(size_t){0}) != 0) return -1;
  int rc = ffk_module_get_function_doc(MODULE(args[0]), name, &doc);
  if (rc <= 0) return rc;
  return ffk_any_cstr(doc, result);
}

/* (module, name, query_imports): the metadata JSON text, or None. */
static int get_function_metadata(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const char *name;
  if (ffk_any_as_str(&args[1], &name, &(size_t){0}) != 0) return -1;
  return ffk_module_get_function_metadata(MODULE(args[0]), name, result) < 0 ? -1 : 0;
}

static int get_kind(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  return ffk_any_cstr("library", result);
}

/* tvm_ffi's ModulePropertyMask: 1 binary-serializable, 2 runnable, 4 compilation-exportable. */
static int get_property_mask(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  *result = ffk_any_int(2);
  return 0;
}

static int inspect_source(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs;
  return ffk_any_cstr("", result);
}

static int write_to_file(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_error_set(FFK_ERR_RUNTIME,
                       "`ffi.ModuleWriteToFile`: module `%s` cannot be written to a file (an ffikit module is a "
                       "shared library already)",
                       ffk_module_path(MODULE(args[0])));
}

static int import_module(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  return ffk_error_set(FFK_ERR_RUNTIME,
                       "`ffi.ModuleImportModule`: module `%s` cannot import `%s`: ffikit modules have no imports",
                       ffk_module_path(MODULE(args[0])), ffk_module_path(MODULE(args[1])));
}

static int clear_imports(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)args, (void)nargs, (void)result;
  return 0; /* nothing to clear */
}

/* ---- The process-wide list of kept modules ---------------------------------------- */

static pthread_mutex_t g_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static ffk_object **g_kept;
static size_t g_nkept, g_kept_cap;

static int globals_add(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  int rc = 0;
  pthread_mutex_lock(&g_kept_lock);
  if (g_nkept == g_kept_cap) {
    size_t cap = g_kept_cap ? 2 * g_kept_cap : 8;
    ffk_object **grown = (ffk_object **)ffk_mem_realloc(g_kept, cap * sizeof *grown);
    if (grown == NULL) rc = -1;
    else g_kept = grown, g_kept_cap = cap;
  }
  if (rc == 0) {
    ffk_object_retain(args[0].v_obj);
    g_kept[g_nkept++] = args[0].v_obj;
  }
  pthread_mutex_unlock(&g_kept_lock);
  return rc;
}

/* Drops the reference of one Add of this module; a module never added is left alone. */
static int globals_remove(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs, (void)result;
  ffk_object *dropped = NULL;
  pthread_mutex_lock(&g_kept_lock);
  for (size_t i = g_nkept; i-- > 0;)
    if (g_kept[i] == args[0].v_obj) {
      dropped = g_kept[i];
      g_kept[i] = g_kept[--g_nkept];
      break;
    }
  pthread_mutex_unlock(&g_kept_lock);
  if (dropped != NULL) ffk_object_release(dropped); /* outside the lock: a release may run code */
  return 0;
}

static const ffk_function_def k_globals[] = {
    {"ffi.ModuleLoadFromFile", NULL, load_from_file},
    {"ffi.SystemLib", NULL, system_lib},
    {"ffi.ModuleGetFunction", "(Module, str, bool) -> Optional<Function>", get_function},
    {"ffi.ModuleImplementsFunction", "(Module, str, bool) -> bool", implements_function},
    {"ffi.ModuleGetFunctionDoc", "(Module, str, bool) -> Optional<str>", get_function_doc},
    {"ffi.ModuleGetFunctionMetadata", "(Module, str, bool) -> Optional<str>", get_function_metadata},
    {"ffi.ModuleGetKind", "(Module) -> str", get_kind},
    {"ffi.ModuleGetPropertyMask", "(Module) -> int", get_property_mask},
    {"ffi.ModuleInspectSource", "(Module, str) -> str", inspect_source},
    {"ffi.ModuleWriteToFile", "(Module, str, str) -> None", write_to_file},
    {"ffi.ModuleImportModule", "(Module, Module) -> None", import_module},
    {"ffi.ModuleClearImports", "(Module) -> None", clear_imports},
    {"ffi.ModuleGlobalsAdd", "(Module) -> None", globals_add},
    {"ffi.ModuleGlobalsRemove", "(Module) -> None", globals_remove},
};

__attribute__((constructor)) static void module_globals_init(void) {
  if (ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]) != 0) ffk_error_clear();
}
