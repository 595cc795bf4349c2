/*
 * init.c - hooks the containers into the ffi core when the library loads: their
 * repr and converter slots in the type registry, and the reflected types the containers
 * component defines (ffikit.AccessPath, ffikit.AccessStep, the enum types of enum.c), and tvm_ffi's ffi.* global
 * functions over containers (globals_containers.c, globals_structural.c, globals_visit.c). A registration that fails at
 * load (out of memory) leaves its type undefined; the functions that need it then fail
 * with a RuntimeError rather than the load aborting.
 */
#include "containers_internal.h"

__attribute__((constructor)) static void containers_init(void) {
  ffk_type_set_repr(FFK_TYPE_ARRAY, ffk_array__repr);
  ffk_type_set_repr(FFK_TYPE_TUPLE, ffk_array__repr);
  ffk_type_set_repr(FFK_TYPE_MAP, ffk_map__repr);
  ffk_type_set_repr(FFK_TYPE_LIST, ffk_list__repr);
  ffk_type_set_repr(FFK_TYPE_DICT, ffk_dict__repr);
  ffk_containers__register_converters();
  if (ffk_access_path__register() != 0) ffk_error_clear();
  if (ffk_enum__register() != 0) ffk_error_clear();
  if (ffk_containers__register_container_globals() != 0) ffk_error_clear();
  if (ffk_containers__register_structural_globals() != 0) ffk_error_clear();
  if (ffk_containers__register_visit_globals() != 0) ffk_error_clear();
}
