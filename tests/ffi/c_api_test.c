/*
 * Every public header compiled as strict C11 (-std=c11 -Wall -Wextra -Wpedantic -Werror)
 * and a few calls through each, so the headers stay usable from plain C.
 */
#include <ffikit/ffikit.h>
#include <ffikit/any.h>
#include <ffikit/array.h>
#include <ffikit/ffi.h>
#include <ffikit/map.h>
#include <ffikit/tuple.h>
#include <ffikit/base.h>
#include <ffikit/debug.h>
#include <ffikit/device.h>
#include <ffikit/dtype.h>
#include <ffikit/error.h>
#include <ffikit/memory.h>
#include <ffikit/object.h>
#include <ffikit/repr.h>
#include <ffikit/shape.h>
#include <ffikit/string.h>
#include <ffikit/type.h>

#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(cond)                                               \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                 \
    }                                                             \
  } while (0)

static int raise_in_c(void) { return ffk_error_set(FFK_ERR_VALUE, "from C %d", 11); }

int main(void) {
  ffk_any v = ffk_any_int(5);
  int64_t i = 0;
  CHECK(ffk_any_as_int(&v, &i) == 0 && i == 5);

  ffk_any s;
  CHECK(ffk_any_cstr("a string longer than seven", &s) == 0);
  CHECK(s.type_index == FFK_TYPE_STRING);
  ffk_string *r = ffk_any_repr(&s);
  CHECK(r != NULL && strcmp(ffk_string_data(r), "\"a string longer than seven\"") == 0);
  ffk_object_release(&r->header);
  ffk_any_release(&s);

  CHECK(raise_in_c() == -1);
  ffk_error *err = ffk_error_fetch();
  CHECK(err != NULL && strcmp(ffk_error_message(err), "from C 11") == 0);
  CHECK(strstr(ffk_error_backtrace(err), "raise_in_c") != NULL);
  ffk_object_release((ffk_object *)err);

  DLDataType t;
  CHECK(ffk_dtype_parse("float8_e4m3fn", 13, &t) == 0 && t.code == FFK_DTYPE_FLOAT8_E4M3FN);
  DLDevice d;
  CHECK(ffk_device_parse("rocm:2", 6, &d) == 0 && ffk_device_type(d) == FFK_DEVICE_ROCM && d.device_id == 2);
  int64_t dims[2] = {3, 5};
  ffk_shape *sh = ffk_shape_new(dims, 2);
  CHECK(sh != NULL && ffk_shape_product(sh) == 15);
  ffk_object_release(&sh->header);
  CHECK(ffk_type_register("c.Thing", FFK_TYPE_OBJECT) >= FFK_TYPE_STATIC_END);

  ffk_map *m = ffk_map_new();
  ffk_any k = ffk_any_raw_str("key"), val = ffk_any_int(1);
  CHECK(m != NULL && ffk_map_set(&m, &k, &val) == 0 && ffk_map_size(m) == 1);
  ffk_object_release((ffk_object *)m);
  ffk_array *arr = ffk_array_new(&val, 1);
  CHECK(arr != NULL && ffk_array_push(&arr, &val) == 0 && ffk_array_size(arr) == 2);
  ffk_object_release(&arr->header);

  CHECK(ffk_debug_live_objects(-1) == 0);
  CHECK(!ffk_error_occurred());
  if (failures == 0) printf("C11 API check passed\n");
  return failures == 0 ? 0 : 1;
}
