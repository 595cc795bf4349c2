/*
 * container_init.c - the module set-up of the C types behind ffikit.Array, List, Map and
 * Dict and their iterator (ffikit/container.py subclasses the four and adds the
 * collections.abc mixins). The top of the container files: it names every type, and no
 * container file calls it (module.c does), so the set-up closes no circle.
 */
#include "container.h"
#include "views.h"

PyMethodDef ffkpy_container_methods[] = {
    {NULL, NULL, 0, NULL},
};

int ffkpy_container_types_init(PyObject *module) {
  PyTypeObject *types[] = {&ffkpy_ArrayBaseType, &ffkpy_ListBaseType, &ffkpy_MapBaseType, &ffkpy_DictBaseType};
  const char *names[] = {"ArrayBase", "ListBase", "MapBase", "DictBase"};
  if (PyType_Ready(&ffkpy_IterType) < 0) return -1;
  if (PyModule_AddIntConstant(module, "MAP_KEYS", FFK_MAP_KEYS) < 0 ||
      PyModule_AddIntConstant(module, "MAP_VALUES", FFK_MAP_VALUES) < 0 ||
      PyModule_AddIntConstant(module, "MAP_ITEMS", FFK_MAP_ITEMS) < 0)
    return -1;
  ffkpy_DictBaseType.tp_base = &ffkpy_MapBaseType;
  for (int i = 0; i < 4; ++i) {
    if (types[i]->tp_base == NULL) types[i]->tp_base = &ffkpy_ObjectType;
    if (PyType_Ready(types[i]) < 0 || PyModule_AddObjectRef(module, names[i], (PyObject *)types[i]) < 0) return -1;
  }
  return 0;
}
