/*
 * objects.c - the reflected testing types (tvm_ffi's testing objects, same names, fields,
 * flags and docs), defined through the public reflect.h API as a user library would,
 * and the testing.* globals that go with them.
 *
 *   testing.TestObjectBase        v_i64: int (writable, default 10, doc "i64 field"),
 *                                 v_f64: float (read-only, default 10.0),
 *                                 v_str: str (writable, default "hello");
 *                                 add_i64(self, x: int) -> int  v_i64 + x, doc "add_i64 method"
 *   testing.TestObjectDerived     parent TestObjectBase; adds v_map: Map<Any, Any> and
 *                                 v_array: Array<Any>, writable and required
 *   testing.TestIntPair           a, b: int, read-only, docs "Field `a`" / "Field `b`";
 *                                 sum(self) -> int  a + b; constructed as (a, b)
 *   testing.TestUnregisteredBaseObject   v1: int read-only; get_v1_plus_one(self) -> int
 *   testing.TestUnregisteredObject       parent the above; v2: int read-only;
 *                                        get_v2_plus_two(self) -> int
 *   testing.TestCaseInsensitive   value: str, read-only; constructed as (value); its
 *                                 __s_equal__ / __s_hash__ hooks (type attributes) compare and
 *                                 hash `value` ASCII-case-insensitively, so the binding suites
 *                                 can test structural hooks on a C-defined type
 *   testing.TestEnumVariant       an enum (ffikit/enum.h) with members Alpha (0) and Beta (1)
 *                                 and the attribute column `code`: Alpha 10, Beta 20
 *   testing.TestCxxIntEnum        an IntEnum, testing.TestCxxStrEnum a StrEnum, both without
 *                                 members (the Python suite adds them, as tvm_ffi's does)
 *   testing.TestCxxEnumHolder     priority: testing.TestCxxIntEnum, opcode:
 *                                 testing.TestCxxStrEnum, writable and required
 *   testing.enum_variant_get(name: str) -> testing.TestEnumVariant   the member named
 *                                 `name` (ffk_enum_get_str); a ValueError for none
 *   testing.make_unregistered_object() -> Object         a TestUnregisteredObject(41, 42)
 *   testing.create_object(type_key, name, value, ...)    ffk_object_create with named values
 *   testing.object_get_field(obj, name) -> Any           ffk_object_get_field
 *   testing.object_set_field(obj, name, value) -> None   ffk_object_set_field
 *   testing.object_call_method(obj, name, *args) -> Any  ffk_object_call_method
 *     (thin over the public API, so other languages' suites check what C sees)
 *
 * Defining is idempotent (ffk_type_define returns the existing index for the same
 * description), so registering on every load is safe.
 */
#include "testing.h"

#include <ffikit/enum.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  ffk_object header;
  int64_t v_i64;
  double v_f64;
  ffk_string *v_str;
} test_object_base;

typedef struct {
  test_object_base base;
  ffk_object *v_map;
  ffk_object *v_array;
} test_object_derived;

typedef struct {
  ffk_object header;
  int64_t a;
  int64_t b;
} test_int_pair;

typedef struct {
  ffk_object header;
  int64_t v1;
} test_unregistered_base;

typedef struct {
  test_unregistered_base base;
  int64_t v2;
} test_unregistered;

typedef struct {
  ffk_object header;
  ffk_string *value;
} test_case_insensitive;

/* ---- Methods (typed: `self` arrives checked, the other arguments converted) ---------------- */

static int add_i64(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  const test_object_base *self = (const test_object_base *)args[0].v_obj;
  /* v_i64 is writable: read it as the reflection layer writes it, atomically. */
  *result = ffk_any_int(__atomic_load_n(&self->v_i64, __ATOMIC_RELAXED) + args[1].v_int);
  return 0;
}

static int int_pair_sum(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  const test_int_pair *self = (const test_int_pair *)args[0].v_obj;
  *result = ffk_any_int(self->a + self->b);
  return 0;
}

static int get_v1_plus_one(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  *result = ffk_any_int(((const test_unregistered_base *)args[0].v_obj)->v1 + 1);
  return 0;
}

static int get_v2_plus_two(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  *result = ffk_any_int(((const test_unregistered *)args[0].v_obj)->v2 + 2);
  return 0;
}

/* ---- Globals ------------------------------------------------------------------------------ */

static int make_unregistered_object(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)args, (void)nargs;
  int32_t index;
  int found = ffk_type_lookup("testing.TestUnregisteredObject", &index);
  if (found <= 0)
    return found < 0 ? -1 : ffk_error_set(FFK_ERR_RUNTIME, "testing.TestUnregisteredObject is not defined");
  ffk_any values[2] = {ffk_any_int(41), ffk_any_int(42)};
  ffk_object *obj;
  if (ffk_object_create(index, values, 2, NULL, 0, &obj) != 0) return -1;
  *result = ffk_any_object_steal(obj);
  return 0;
}

/* create_object(type_key, name0, value0, name1, value1, ...): tvm_ffi's MakeObjectFromPackedArgs. */
static int create_object(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx;
  const char *key;
  if (nargs < 1 || nargs % 2 == 0)
    return ffk_error_set(FFK_ERR_TYPE,
                         "testing.create_object takes a type key followed by name/value pairs, got %d arguments",
                         (int)nargs);
  size_t key_size;
  if (ffk_any_as_str(&args[0], &key, &key_size) != 0) return -1;
  int32_t index;
  int found = ffk_type_lookup(key, &index);
  if (found < 0) return -1;
  if (found == 0) return ffk_error_set(FFK_ERR_VALUE, "Cannot find object type index for %s", key);
  int32_t nkw = (nargs - 1) / 2;
  enum { LOCAL = 16 };
  const char *local_names[LOCAL];
  ffk_any local_values[LOCAL];
  const char **names = local_names;
  ffk_any *values = local_values;
  if (nkw > LOCAL) {
    names = ffk_mem_alloc((size_t)nkw * (sizeof *names + sizeof *values));
    if (names == NULL) return -1;
    values = (ffk_any *)(names + nkw);
  }
  int rc = 0;
  for (int32_t j = 0; j < nkw && rc == 0; ++j) {
    size_t name_size;
    rc = ffk_any_as_str(&args[1 + 2 * j], &names[j], &name_size);
    values[j] = args[2 + 2 * j];
  }
  ffk_object *obj = NULL;
  if (rc == 0) rc = ffk_object_create(index, values, 0, names, nkw, &obj);
  if (rc == 0) *result = ffk_any_object_steal(obj);
  if (names != local_names) ffk_mem_free(names);
  return rc;
}

/* ---- TestCaseInsensitive's hooks (typed: the objects arrive checked) -------------------------- */

static int ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int case_insensitive_equal(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  const ffk_string *a = ((const test_case_insensitive *)args[0].v_obj)->value;
  const ffk_string *b = ((const test_case_insensitive *)args[1].v_obj)->value;
  bool same = a->size == b->size;
  for (size_t i = 0; same && i < a->size; ++i)
    same = ascii_lower((unsigned char)a->data[i]) == ascii_lower((unsigned char)b->data[i]);
  *result = ffk_any_bool(same);
  return 0;
}

static int case_insensitive_hash(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  const ffk_string *v = ((const test_case_insensitive *)args[0].v_obj)->value;
  uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a of the lower-cased text */
  for (size_t i = 0; i < v->size; ++i) h = (h ^ (uint64_t)ascii_lower((unsigned char)v->data[i])) * UINT64_C(0x100000001b3);
  *result = ffk_any_int((int64_t)h);
  return 0;
}

/* ---- Reflection from other languages' suites --------------------------------------------- */

/* The str `v` as a NUL-terminated copy in buf (cap bytes) or a new allocation (*heap). NULL with an error. */
static const char *c_name(const ffk_any *v, char *buf, size_t cap, char **heap) {
  const char *data;
  size_t size;
  *heap = NULL;
  if (ffk_any_as_str(v, &data, &size) != 0) return NULL;
  char *out = buf;
  if (size >= cap && (out = *heap = ffk_mem_alloc(size + 1)) == NULL) return NULL;
  memcpy(out, data, size);
  out[size] = '\0';
  return out;
}

static int object_get_field(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs;
  char buf[64], *heap;
  const char *name = c_name(&args[1], buf, sizeof buf, &heap);
  int rc = name != NULL ? ffk_object_get_field(args[0].v_obj, name, result) : -1;
  ffk_mem_free(heap);
  return rc;
}

static int object_set_field(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx, (void)nargs, (void)result;
  char buf[64], *heap;
  const char *name = c_name(&args[1], buf, sizeof buf, &heap);
  int rc = name != NULL ? ffk_object_set_field(args[0].v_obj, name, &args[2]) : -1;
  ffk_mem_free(heap);
  return rc;
}

/* object_call_method(obj, name, *args): untyped, so the arguments reach the method as given. */
static int object_call_method(void *ctx, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)ctx;
  if (nargs < 2)
    return ffk_error_set(FFK_ERR_TYPE, "testing.object_call_method takes an object, a method name and its arguments, "
                                       "got %d arguments", (int)nargs);
  if (!ffk_any_is_object(&args[0]))
    return ffk_error_set(FFK_ERR_TYPE, "testing.object_call_method: expected an object, got a `%s`",
                         ffk_any_type_name(&args[0]));
  char buf[64], *heap;
  const char *name = c_name(&args[1], buf, sizeof buf, &heap);
  int rc = name != NULL ? ffk_object_call_method(args[0].v_obj, name, args + 2, nargs - 2, result) : -1;
  ffk_mem_free(heap);
  return rc;
}

/* ---- Definitions -------------------------------------------------------------------------- */

/* A typed Function for a method or global (new reference), or NULL. */
static ffk_function *method(const char *name, const char *signature, ffk_safe_call call, const char *doc) {
  ffk_function *f = ffk_function_new_typed(name, signature, call, NULL, NULL);
  if (f != NULL && doc != NULL && ffk_function_set_doc(f, doc) != 0) {
    ffk_object_release((ffk_object *)f);
    return NULL;
  }
  return f;
}

/* Defines `def` with one instance method (`def->methods` is filled here). Returns the index or -1. */
static int32_t define_with_method(ffk_type_def *def, const char *mname, const char *signature, ffk_safe_call call,
                                  const char *doc) {
  /* The key first, so the method's signature can name the type. */
  if (ffk_type_register(def->key, def->parent_index) < 0) return -1;
  char fname[128];
  snprintf(fname, sizeof fname, "%s.%s", def->key, mname);
  ffk_function *f = method(fname, signature, call, doc);
  if (f == NULL) return -1;
  ffk_method_def m = {mname, f, false, doc};
  def->methods = &m;
  def->nmethods = 1;
  int32_t index = ffk_type_define(def);
  def->methods = NULL;
  ffk_object_release((ffk_object *)f);
  return index;
}

/* Sets a hook unless the type has it already (so loading again pins nothing new). */
static int set_hook(int32_t index, const char *attr, const char *signature, ffk_safe_call call) {
  ffk_any existing;
  int found = ffk_type_get_attr(index, attr, &existing);
  ffk_any_release(&existing);
  if (found != 0) return found < 0 ? -1 : 0;
  char name[128];
  snprintf(name, sizeof name, "testing.TestCaseInsensitive.%s", attr);
  ffk_function *f = ffk_function_new_typed(name, signature, call, NULL, NULL);
  if (f == NULL) return -1;
  ffk_any v = ffk_any_object_steal((ffk_object *)f);
  int rc = ffk_type_set_attr(index, attr, &v);
  ffk_any_release(&v);
  return rc;
}

static int define_case_insensitive(void) {
  static const ffk_field_def fields[] = {
      {"value", offsetof(test_case_insensitive, value), "str", 0, {0}, "Compared and hashed case-insensitively."},
  };
  ffk_type_def def = {.key = "testing.TestCaseInsensitive",
                      .parent_index = FFK_TYPE_OBJECT,
                      .instance_size = sizeof(test_case_insensitive),
                      .fields = fields,
                      .nfields = 1,
                      .doc = "A str whose structural equality and hash ignore ASCII case (through hooks)."};
  int32_t index = ffk_type_define(&def);
  if (index < 0) return -1;
  if (set_hook(index, FFK_ATTR_S_EQUAL,
               "(a: testing.TestCaseInsensitive, b: testing.TestCaseInsensitive, equal: Function) -> bool",
               case_insensitive_equal) != 0)
    return -1;
  return set_hook(index, FFK_ATTR_S_HASH, "(v: testing.TestCaseInsensitive, hash: Function) -> int",
                  case_insensitive_hash);
}

typedef struct {
  ffk_object header;
  ffk_object *priority;
  ffk_object *opcode;
} test_enum_holder;

static int32_t g_variant_index = -1;

/* Adds member `name` (int index `value` when not NULL) unless the type has it (a second load). */
static int add_member(int32_t type_index, const char *name, const int64_t *value, ffk_object **out) {
  int rc = ffk_enum_get_str(type_index, name, strlen(name), out);
  if (rc != 0) return rc < 0 ? -1 : 0;
  return ffk_enum_add(type_index, name, value, out);
}

static int define_enums(void) {
  int32_t variant = ffk_enum_define("testing.TestEnumVariant", FFK_ENUM_PLAIN, NULL);
  if (variant < 0) return -1;
  static const char *const names[2] = {"Alpha", "Beta"};
  for (int i = 0; i < 2; ++i) {
    ffk_object *m;
    if (add_member(variant, names[i], NULL, &m) != 0) return -1;
    ffk_any code = ffk_any_int(10 * (i + 1));
    int rc = ffk_enum_attr_set(variant, "code", m, &code);
    ffk_object_release(m);
    if (rc != 0) return -1;
  }
  g_variant_index = variant;
  if (ffk_enum_define("testing.TestCxxIntEnum", FFK_ENUM_INT, NULL) < 0 ||
      ffk_enum_define("testing.TestCxxStrEnum", FFK_ENUM_STR, NULL) < 0)
    return -1;
  static const ffk_field_def holder_fields[] = {
      {"priority", offsetof(test_enum_holder, priority), "testing.TestCxxIntEnum", FFK_FIELD_WRITABLE, {0}, NULL},
      {"opcode", offsetof(test_enum_holder, opcode), "testing.TestCxxStrEnum", FFK_FIELD_WRITABLE, {0}, NULL},
  };
  ffk_type_def holder = {.key = "testing.TestCxxEnumHolder",
                         .parent_index = FFK_TYPE_OBJECT,
                         .instance_size = sizeof(test_enum_holder),
                         .fields = holder_fields,
                         .nfields = 2};
  return ffk_type_define(&holder) < 0 ? -1 : 0;
}

/* testing.enum_variant_get(name): the TestEnumVariant member named `name`. */
static int enum_variant_get(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  (void)nargs;
  const char *data;
  size_t size;
  if (ffk_any_as_str(&args[0], &data, &size) != 0) return -1;
  ffk_object *m;
  int rc = ffk_enum_get_str(g_variant_index, data, size, &m);
  if (rc < 0) return -1;
  if (rc == 0)
    return ffk_error_set(FFK_ERR_VALUE, "Enum `testing.TestEnumVariant` has no instance with index %.*s", (int)size,
                         data);
  *result = ffk_any_object_steal(m);
  return 0;
}

static int define_types(void) {
  static const ffk_field_def base_fields[] = {
      {"v_i64", offsetof(test_object_base, v_i64), "int", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       {.type_index = FFK_TYPE_INT, .v_int = 10}, "i64 field"},
      {"v_f64", offsetof(test_object_base, v_f64), "float", FFK_FIELD_HAS_DEFAULT,
       {.type_index = FFK_TYPE_FLOAT, .v_float = 10.0}, NULL},
      {"v_str", offsetof(test_object_base, v_str), "str", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       {.type_index = FFK_TYPE_RAW_STR, .v_ptr = (void *)"hello"}, NULL},
  };
  ffk_type_def base = {.key = "testing.TestObjectBase",
                       .parent_index = FFK_TYPE_OBJECT,
                       .instance_size = sizeof(test_object_base),
                       .fields = base_fields,
                       .nfields = 3};
  int32_t base_index = define_with_method(&base, "add_i64", "(self: testing.TestObjectBase, x: int) -> int", add_i64,
                                          "add_i64 method");
  if (base_index < 0) return -1;

  static const ffk_field_def derived_fields[] = {
      {"v_map", offsetof(test_object_derived, v_map), "Map<Any, Any>", FFK_FIELD_WRITABLE, {0}, NULL},
      {"v_array", offsetof(test_object_derived, v_array), "Array<Any>", FFK_FIELD_WRITABLE, {0}, NULL},
  };
  ffk_type_def derived = {.key = "testing.TestObjectDerived",
                          .parent_index = base_index,
                          .instance_size = sizeof(test_object_derived),
                          .fields = derived_fields,
                          .nfields = 2};
  if (ffk_type_define(&derived) < 0) return -1;

  static const ffk_field_def pair_fields[] = {
      {"a", offsetof(test_int_pair, a), "int", 0, {0}, "Field `a`"},
      {"b", offsetof(test_int_pair, b), "int", 0, {0}, "Field `b`"},
  };
  ffk_type_def pair = {.key = "testing.TestIntPair",
                       .parent_index = FFK_TYPE_OBJECT,
                       .instance_size = sizeof(test_int_pair),
                       .fields = pair_fields,
                       .nfields = 2};
  if (define_with_method(&pair, "sum", "(self: testing.TestIntPair) -> int", int_pair_sum,
                         "Method to compute sum of a and b") < 0)
    return -1;

  static const ffk_field_def ubase_fields[] = {
      {"v1", offsetof(test_unregistered_base, v1), "int", 0, {0}, NULL},
  };
  ffk_type_def ubase = {.key = "testing.TestUnregisteredBaseObject",
                        .parent_index = FFK_TYPE_OBJECT,
                        .instance_size = sizeof(test_unregistered_base),
                        .fields = ubase_fields,
                        .nfields = 1};
  int32_t ubase_index = define_with_method(&ubase, "get_v1_plus_one", "(self: testing.TestUnregisteredBaseObject) -> int",
                                           get_v1_plus_one, "Get (v1 + 1) from TestUnregisteredBaseObject");
  if (ubase_index < 0) return -1;

  static const ffk_field_def u_fields[] = {
      {"v2", offsetof(test_unregistered, v2), "int", 0, {0}, NULL},
  };
  ffk_type_def u = {.key = "testing.TestUnregisteredObject",
                    .parent_index = ubase_index,
                    .instance_size = sizeof(test_unregistered),
                    .fields = u_fields,
                    .nfields = 1};
  if (define_with_method(&u, "get_v2_plus_two", "(self: testing.TestUnregisteredObject) -> int", get_v2_plus_two,
                         "Get (v2 + 2) from TestUnregisteredObject") < 0)
    return -1;
  if (define_case_insensitive() != 0) return -1;
  return define_enums();
}

static const struct {
  const char *name;
  const char *signature; /* NULL: untyped */
  ffk_safe_call call;
  const char *doc;
} k_globals[] = {
    {"testing.make_unregistered_object", "() -> Object", make_unregistered_object,
     "Returns a testing.TestUnregisteredObject with v1=41, v2=42."},
    {"testing.create_object", NULL, create_object,
     "create_object(type_key, name, value, ...): an object of type_key made by reflection from named values."},
    {"testing.object_get_field", "(obj: Object, name: str) -> Any", object_get_field,
     "object_get_field(obj, name): field `name` of obj, read by reflection in C."},
    {"testing.object_set_field", "(obj: Object, name: str, value: Any) -> None", object_set_field,
     "object_set_field(obj, name, value): writes field `name` of obj by reflection in C."},
    {"testing.object_call_method", NULL, object_call_method,
     "object_call_method(obj, name, *args): calls method `name` of obj by reflection in C."},
    {"testing.enum_variant_get", "(name: str) -> testing.TestEnumVariant", enum_variant_get,
     "enum_variant_get(name): the testing.TestEnumVariant member named `name`; a ValueError for none."},
    {"testing.TestIntPairSum", "(testing.TestIntPair) -> int", int_pair_sum,
     "TestIntPairSum(pair): pair.a + pair.b (tvm_ffi's global twin of the method `sum`)."},
};
#define N_GLOBALS (sizeof k_globals / sizeof k_globals[0])

int ffk_testing_register_objects(void) {
  if (define_types() != 0) return -1;
  for (size_t i = 0; i < N_GLOBALS; ++i) {
    ffk_function *f = method(k_globals[i].name, k_globals[i].signature, k_globals[i].call, k_globals[i].doc);
    if (f == NULL) return -1;
    int rc = ffk_function_register(k_globals[i].name, f, true);
    ffk_object_release((ffk_object *)f);
    if (rc != 0) return -1;
  }
  return 0;
}

void ffk_testing_unregister_objects(void) {
  for (size_t i = 0; i < N_GLOBALS; ++i) ffk_function_remove_global(k_globals[i].name);
}
