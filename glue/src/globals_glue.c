/*
 * globals_glue.c - tvm_ffi's ffi.ContainerFindFirstNonCPUDevice, registered when the
 * library loads. It walks containers and reads the devices of the tensors in them, so it
 * belongs to neither sibling: containers/ and tensor/ each depend only on ffi/, and glue/
 * sits above both (docs/design.md, "Layers and layout").
 *
 * The walk visits Arrays, Tuples and Lists in order and Maps and Dicts in iteration order
 * (keys before values), depth-first; the first Tensor (or DLTensor* view) whose device is
 * not the CPU gives the answer, and a value holding none gives cpu:0, as in tvm_ffi.
 * Lists and Dicts are read through snapshots; nesting deeper than
 * FFK_STRUCTURAL_MAX_DEPTH is the RuntimeError of every bounded walk.
 */
#include <ffikit/dict.h>
#include <ffikit/function.h>
#include <ffikit/list.h>
#include <ffikit/map.h>
#include <ffikit/structural.h>
#include <ffikit/tensor.h>

/* 1 with *out set when `v` holds a non-CPU tensor, 0 when not, -1 on error. */
static int find_device(const ffk_any *v, int depth, DLDevice *out) {
  if (v->type_index == FFK_TYPE_DLTENSOR_PTR) {
    const DLTensor *t = (const DLTensor *)v->v_ptr;
    if (t == NULL || t->device.device_type == kDLCPU) return 0;
    *out = t->device;
    return 1;
  }
  if (!ffk_any_is_object(v)) return 0;
  int32_t type = v->type_index;
  if (type == FFK_TYPE_TENSOR) {
    const DLTensor *t = ffk_tensor_dltensor_borrow((const ffk_tensor *)v->v_obj);
    if (t->device.device_type == kDLCPU) return 0;
    *out = t->device;
    return 1;
  }
  bool sequence = type == FFK_TYPE_ARRAY || type == FFK_TYPE_TUPLE || type == FFK_TYPE_LIST;
  if (!sequence && type != FFK_TYPE_MAP && type != FFK_TYPE_DICT) return 0;
  if (depth == FFK_STRUCTURAL_MAX_DEPTH) return ffk_structural_too_deep();
  ffk_object *snapshot = NULL;
  const ffk_object *c = v->v_obj;
  if (type == FFK_TYPE_LIST && (c = snapshot = (ffk_object *)ffk_list_to_array((ffk_list *)v->v_obj)) == NULL)
    return -1;
  if (type == FFK_TYPE_DICT && (c = snapshot = (ffk_object *)ffk_dict_to_map((ffk_dict *)v->v_obj)) == NULL)
    return -1;
  int rc = 0;
  if (sequence) {
    const ffk_array *a = (const ffk_array *)c;
    for (int64_t i = 0; rc == 0 && i < a->size; ++i) rc = find_device(&a->data[i], depth + 1, out);
  } else {
    int64_t pos = 0;
    const ffk_any *key, *val;
    while (rc == 0 && ffk_map_next((const ffk_map *)c, &pos, &key, &val)) {
      rc = find_device(key, depth + 1, out);
      if (rc == 0) rc = find_device(val, depth + 1, out);
    }
  }
  if (snapshot != NULL) ffk_object_release(snapshot);
  return rc;
}

static int find_first_non_cpu_device(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs; /* typed: (Any) */
  DLDevice d = {kDLCPU, 0};
  if (find_device(&args[0], 0, &d) < 0) return -1;
  *result = ffk_any_device(d);
  return 0;
}

static const ffk_function_def k_globals[] = {
    {"ffi.ContainerFindFirstNonCPUDevice", "(Any) -> Device", find_first_non_cpu_device},
};

__attribute__((constructor)) static void glue_globals_init(void) {
  if (ffk_function_register_table(k_globals, sizeof k_globals / sizeof k_globals[0]) != 0) ffk_error_clear();
}
