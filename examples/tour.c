/*
 * tour.c - a first look at ffikit from C. Run it with `./setup.sh` (or
 * `bazel run //examples:tour`). Each section prints what it shows.
 */
#include <ffikit/ffikit.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Prints the repr of a value (ffk_any_repr gives a new String object). */
static void show(const char *label, const ffk_any *v) {
  ffk_string *text = ffk_any_repr(v);
  printf("  %-34s %-26s (%s)\n", label, text ? ffk_string_data(text) : "<repr failed>", ffk_any_type_name(v));
  ffk_object_release(text ? &text->header : NULL);
}

/* A C function that fails the ffikit way: return -1 with an error in the thread's slot. */
static int parse_config(const char *device_text) {
  DLDevice dev;
  if (ffk_device_parse(device_text, strlen(device_text), &dev) != 0) return -1;
  return 0;
}

static int load_settings(void) {
  if (parse_config("gpu:0") != 0) {
    /* Add a frame as the error passes through this layer, then pass it on. */
    ffk_error_append_frame(ffk_error_peek_borrow(), "  at load_settings (while reading settings.toml)");
    return -1;
  }
  return 0;
}

/* A plain C function with the packed calling convention: add(a, b). */
static int add(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  int64_t a, b;
  if (ffk_args_unpack("tour.add", args, nargs, "ii", &a, &b) != 0) return -1; /* checks arity and types */
  *result = ffk_any_int(a + b);
  return 0;
}

/* A closure: its context is a counter it bumps on every call. */
static int count_calls(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)args;
  (void)nargs;
  *result = ffk_any_int(++*(int64_t *)self);
  return 0;
}

/* apply(f, *args): calls another Function, so an error crosses two calls. */
static int apply(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self;
  ffk_function *f;
  if (ffk_args_unpack("tour.apply", args, nargs > 0 ? 1 : 0, "F", &f) != 0) return -1;
  return ffk_function_call(f, args + 1, nargs - 1, result);
}

/* scale(xs: Array<float>, k: float): its signature has converted the arguments already. */
static int scale(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  (void)self, (void)nargs;
  const ffk_array *xs = (const ffk_array *)args[0].v_obj;
  ffk_array *out = ffk_array_with_capacity(ffk_array_size(xs));
  for (int64_t i = 0; out != NULL && i < ffk_array_size(xs); ++i) {
    ffk_any y = ffk_any_float(ffk_array_items_borrow(xs)[i].v_float * args[1].v_float);
    if (ffk_array_push(&out, &y) != 0) break;
  }
  *result = ffk_any_object_steal((ffk_object *)out);
  return out != NULL ? 0 : -1;
}

/* Prints a pending error and the hops of its backtrace. */
static void show_error(const char *what) {
  ffk_error *err = ffk_error_fetch();
  printf("  %s -> %s: %s\n", what, ffk_error_kind(err), ffk_error_message(err));
  ffk_object_release((ffk_object *)err);
}

int main(void) {
  printf("ffikit %s (ABI %u.%u)\n\n", ffk_version(), ffk_abi_version() >> 16, ffk_abi_version() & 0xffff);

  printf("1. Any: one 16-byte value for everything that crosses a boundary\n");
  ffk_any values[6] = {ffk_any_none(), ffk_any_int(42), ffk_any_bool(true), ffk_any_float(0.1),
                       ffk_any_dtype(ffk_dtype(FFK_DTYPE_FLOAT, 32, 4)), ffk_any_device(ffk_device(FFK_DEVICE_CUDA, 1))};
  const char *labels[6] = {"None", "Int", "Bool", "Float (shortest text)", "DataType", "Device"};
  for (int i = 0; i < 6; ++i) show(labels[i], &values[i]);
  int64_t n;
  ffk_any_as_int(&values[2], &n); /* bool converts to int, as users expect */
  printf("  bool as int -> %lld; ", (long long)n);
  double x;
  if (ffk_any_as_float(&values[4], &x) != 0) {
    ffk_error *err = ffk_error_fetch();
    printf("dtype as float -> %s: %s\n", ffk_error_kind(err), ffk_error_message(err));
    ffk_object_release((ffk_object *)err);
  }

  printf("\n2. Strings: up to 7 bytes live inside the Any, longer ones are shared objects\n");
  ffk_any small, big;
  ffk_any_cstr("hello", &small);
  ffk_any_cstr("hello, ffikit: strings longer than seven bytes", &big);
  show("small (no allocation)", &small);
  show("heap (refcounted object)", &big);
  ffk_string *same = ffk_string_new("hello", 5); /* the same text as an object */
  ffk_any same_any = ffk_any_object_steal(&same->header);
  printf("  inline \"hello\" == object \"hello\": %s, equal hashes: %s\n",
         ffk_any_equal(&small, &same_any) ? "yes" : "no",
         ffk_any_hash(&small) == ffk_any_hash(&same_any) ? "yes" : "no");
  ffk_any one = ffk_any_int(1), yes = ffk_any_bool(true), onef = ffk_any_float(1.0);
  printf("  as keys, 1 / True / 1.0 are distinct: %s\n",
         !ffk_any_equal(&one, &yes) && !ffk_any_equal(&one, &onef) ? "yes" : "no");

  printf("\n3. Objects: intrusive atomic refcounts, weak references\n");
  ffk_object *obj = big.v_obj;
  ffk_any copy = big;
  ffk_any_retain(&copy);
  printf("  after retain: use_count = %u\n", ffk_object_use_count(obj));
  ffk_weak_retain(obj);
  ffk_any_release(&copy);
  ffk_any_release(&big);
  ffk_object *again = ffk_weak_lock(obj);
  printf("  after the last strong release, weak_lock gives %s\n", again ? "the object" : "NULL (it is gone)");
  ffk_weak_release(obj);

  printf("\n4. Types: register your own object types, with single inheritance\n");
  int32_t animal = ffk_type_register("tour.Animal", FFK_TYPE_OBJECT);
  int32_t dog = ffk_type_register("tour.Dog", animal);
  printf("  tour.Dog = %d, parent %s, is an Animal: %s, is a String: %s\n", dog, ffk_type_key(ffk_type_parent(dog)),
         ffk_type_is_instance(dog, animal) ? "yes" : "no", ffk_type_is_instance(dog, FFK_TYPE_STRING) ? "yes" : "no");

  printf("\n5. DataType, Device, Shape\n");
  DLDataType dt;
  ffk_dtype_parse("bfloat16", 8, &dt);
  char text[FFK_DTYPE_STR_MAX];
  ffk_dtype_format(dt, text, sizeof text);
  printf("  parse \"bfloat16\" -> code %u bits %u lanes %u -> \"%s\"\n", dt.code, dt.bits, dt.lanes, text);
  int64_t dims[3] = {2, 3, 4};
  ffk_shape *shape = ffk_shape_new(dims, 3);
  ffk_any shape_any = ffk_any_object_steal(&shape->header);
  show("Shape", &shape_any);
  printf("  product = %lld\n", (long long)ffk_shape_product(shape));

  printf("\n6. Errors: kind, message, and a backtrace that grows as the error travels\n");
  if (load_settings() != 0) {
    ffk_error *err = ffk_error_fetch();
    printf("  %s: %s\n%s", ffk_error_kind(err), ffk_error_message(err), ffk_error_backtrace(err));
    ffk_object_release((ffk_object *)err);
  }

  printf("\n7. Array: copy-on-write. A change through one handle never shows through another\n");
  ffk_array *a = ffk_array_new(NULL, 0);
  for (int64_t i = 1; i <= 3; ++i) {
    ffk_any v = ffk_any_int(i);
    ffk_array_push(&a, &v); /* unique: grows in place, no copy */
  }
  ffk_array *b = a; /* a second handle to the same object */
  ffk_object_retain(&b->header);
  ffk_any hundred = ffk_any_int(100);
  ffk_array_set(&a, 0, &hundred); /* shared: a gets a changed copy, b keeps the original */
  bool both_unique = ffk_object_is_unique(&a->header) && ffk_object_is_unique(&b->header);
  ffk_any av = ffk_any_object(&a->header), bv = ffk_any_object(&b->header);
  show("a after set", &av);
  show("b, untouched", &bv);
  printf("  a and b are %s objects now; each is unique again: %s\n", a != b ? "different" : "the same",
         both_unique ? "yes" : "no");
  ffk_any_release(&av);
  ffk_any_release(&bv);
  ffk_object_release(&a->header);
  ffk_object_release(&b->header);

  printf("\n8. List and Dict: shared. Every handle sees every change, from any thread\n");
  ffk_list *l = ffk_list_new();
  ffk_list *l2 = l; /* a second handle to the same object */
  ffk_object_retain((ffk_object *)l2);
  for (int64_t i = 1; i <= 3; ++i) {
    ffk_any v = ffk_any_int(i);
    ffk_list_append(l, &v); /* in place, under the List's own lock */
  }
  ffk_any lv = ffk_any_object((ffk_object *)l2);
  show("l2 after appending through l", &lv);
  ffk_dict *d = ffk_dict_new();
  ffk_any key = ffk_any_raw_str("numbers");
  ffk_dict_set(d, &key, &lv);
  ffk_any one_key = ffk_any_int(1), one_float = ffk_any_float(1.0), t = ffk_any_bool(true);
  ffk_dict_set(d, &one_key, &one_key); /* 1, 1.0 and True are three different keys */
  ffk_dict_set(d, &one_float, &one_float);
  ffk_dict_set(d, &t, &t);
  ffk_any dv = ffk_any_object((ffk_object *)d);
  show("d", &dv);
  ffk_dict_iter it; /* iteration notices a change underneath and says so */
  ffk_dict_iter_init(&it, d);
  ffk_any k0;
  ffk_dict_iter_next(&it, &k0, NULL);
  ffk_dict_erase(d, &t);
  if (ffk_dict_iter_next(&it, NULL, NULL) < 0) {
    ffk_error *err = ffk_error_fetch();
    printf("  erase while iterating: %s: %s\n", ffk_error_kind(err), ffk_error_message(err));
    ffk_object_release((ffk_object *)err);
  }
  ffk_any_release(&k0);

  printf("\n9. Structural equality, hash and deep copy look inside containers\n");
  ffk_any snapshot = ffk_any_object_steal((ffk_object *)ffk_dict_to_map(d)); /* Dict -> COW Map */
  ffk_any deep;
  ffk_deep_copy(&dv, &deep); /* a new Dict holding a new List */
  uint64_t h1 = 0, h2 = 0;
  ffk_structural_hash(&dv, &h1);
  ffk_structural_hash(&deep, &h2);
  printf("  deep copy == d: %s (hashes %s); d == its Map snapshot: %s (a Dict only equals a Dict)\n",
         ffk_structural_equal(&deep, &dv) == 1 ? "yes" : "no", h1 == h2 ? "equal" : "differ",
         ffk_structural_equal(&snapshot, &dv) == 1 ? "yes" : "no");
  ffk_any_release(&deep);
  ffk_any_release(&snapshot);
  ffk_any_release(&dv);
  ffk_any_release(&lv);
  ffk_object_release((ffk_object *)d);
  ffk_object_release((ffk_object *)l);
  ffk_object_release((ffk_object *)l2);

  printf("\n10. Functions: C functions and closures, called by name from the global registry\n");
  static int64_t counter = 0;
  const char *names[3] = {"tour.add", "tour.count", "tour.apply"};
  ffk_function *fns[3] = {ffk_function_new(names[0], add, NULL, NULL),
                          ffk_function_new(names[1], count_calls, &counter, NULL),
                          ffk_function_new(names[2], apply, NULL, NULL)};
  for (int i = 0; i < 3; ++i) {
    ffk_function_register(names[i], fns[i], false);
    ffk_object_release((ffk_object *)fns[i]); /* the registry holds them now */
  }
  ffk_function *by_name;
  ffk_any args[3] = {ffk_any_int(2), ffk_any_int(40)}, result;
  ffk_function_get_global("tour.add", &by_name);
  ffk_function_call(by_name, args, 2, &result);
  show("tour.add(2, 40)", &result);
  ffk_object_release((ffk_object *)by_name);
  ffk_function_get_global("tour.count", &by_name);
  ffk_function_call(by_name, NULL, 0, &result);
  ffk_function_call(by_name, NULL, 0, &result);
  show("tour.count() twice", &result);
  ffk_object_release((ffk_object *)by_name);
  ffk_function *adder;
  ffk_function_get_global("tour.apply", &by_name);
  ffk_function_get_global("tour.add", &adder);
  args[0] = ffk_any_object((ffk_object *)adder);
  args[1] = ffk_any_int(1);
  args[2] = ffk_any_raw_str("two");
  if (ffk_function_call(by_name, args, 3, &result) != 0) { /* apply(add, 1, "two") */
    ffk_error *err = ffk_error_fetch();
    printf("  tour.apply(tour.add, 1, \"two\") -> %s: %s\n", ffk_error_kind(err), ffk_error_message(err));
    const char *bt = ffk_error_backtrace(err), *hop = strstr(bt, "  in call to");
    printf("%s", hop ? hop : bt); /* the hops the error crossed, innermost first */
    ffk_object_release((ffk_object *)err);
  }
  ffk_any_release(&args[0]);
  ffk_object_release((ffk_object *)adder);
  ffk_object_release((ffk_object *)by_name);
  for (int i = 0; i < 3; ++i) ffk_function_remove_global(names[i]);

  printf("\n11. Typed signatures: arguments are checked and converted before the C code runs\n");
  ffk_function *scaler =
      ffk_function_new_typed("tour.scale", "(xs: Array<float>, k: float) -> Array<float>", scale, NULL, NULL);
  printf("  signature: %s\n", ffk_function_signature(scaler));
  ffk_any ints[3] = {ffk_any_int(1), ffk_any_int(2), ffk_any_bool(true)};
  args[0] = ffk_any_object_steal((ffk_object *)ffk_list_from_items(ints, 3));
  args[1] = ffk_any_int(10);
  ffk_function_call(scaler, args, 2, &result); /* a List of ints becomes an Array<float> */
  show("tour.scale(List [1, 2, True], 10)", &result);
  ffk_any_release(&result);
  ffk_any_release(&args[0]);
  args[0] = ffk_any_raw_str("1, 2");
  if (ffk_function_call(scaler, args, 2, &result) != 0) show_error("tour.scale(\"1, 2\", 10)");
  ffk_object_release((ffk_object *)scaler);

  printf("\n12. Modules: load a shared library of Functions at run time\n");
  ffk_module *mod = ffk_module_load("testing/libffikit_testing.so");
  if (mod == NULL) {
    show_error("ffk_module_load");
  } else {
    ffk_function *add_one = ffk_module_get_function(mod, "add_one"); /* symbol ffikit_fn_add_one */
    args[0] = ffk_any_int(41);
    ffk_function_call(add_one, args, 1, &result);
    printf("  %s: %s\n", ffk_module_path(mod), ffk_function_signature(add_one));
    show("add_one(41)", &result);
    ffk_object_release((ffk_object *)add_one);
    if (ffk_module_get_function(mod, "missing") == NULL) show_error("ffk_module_get_function(m, \"missing\")");
    ffk_object_release((ffk_object *)mod); /* its init ran, so the library stays loaded */
    /* Its init entry registered testing.* globals; call two by name. */
    ffk_function *echo, *apply_fn, *raise;
    ffk_function_get_global("testing.schema_id_device", &echo);
    args[0] = ffk_any_raw_str("cuda:1");
    ffk_function_call(echo, args, 1, &result);
    show("testing.schema_id_device(\"cuda:1\")", &result);
    ffk_function_get_global("testing.apply", &apply_fn);
    ffk_function_get_global("testing.raise_error", &raise);
    args[0] = ffk_any_object((ffk_object *)raise);
    args[1] = ffk_any_raw_str("ValueError");
    args[2] = ffk_any_raw_str("raised inside the module");
    if (ffk_function_call(apply_fn, args, 3, &result) != 0) {
      ffk_error *err = ffk_error_fetch();
      printf("  testing.apply(testing.raise_error, ...) -> %s: %s\n", ffk_error_kind(err), ffk_error_message(err));
      const char *bt = ffk_error_backtrace(err);
      while (*bt == ' ') ++bt;
      const char *end = strchr(bt, '\n'); /* the first line names the raising C function */
      printf("    raised at: %.*s\n", end ? (int)(end - bt) : (int)strlen(bt), bt);
      const char *hop = strstr(bt, "  in call to");
      printf("%s", hop ? hop : "");
      ffk_object_release((ffk_object *)err);
    }
    ffk_any_release(&args[0]);
    ffk_object_release((ffk_object *)raise);
    ffk_object_release((ffk_object *)apply_fn);
    ffk_object_release((ffk_object *)echo);
  }

  printf("\n13. Tensors: storage, views that share it, shared memory with a child process, DLPack, CUDA\n");
  int64_t shape2[2] = {2, 3};
  ffk_tensor *tensor = ffk_tensor_zeros(2, shape2, (DLDataType){kDLFloat, 32, 1}, (DLDevice){kDLCPU, 0});
  float *elems = ffk_tensor_data_ptr(tensor);
  for (int i = 0; i < 6; ++i) elems[i] = (float)i;
  ffk_tensor *tr = ffk_tensor_transpose(tensor, 0, 1);
  ffk_tensor *col = ffk_tensor_slice(tensor, 1, 1, 2, 1);
  ffk_any tv = ffk_any_object((ffk_object *)tensor), trv = ffk_any_object((ffk_object *)tr);
  show("a tensor", &tv);
  show("its transpose (a view)", &trv);
  printf("  transpose contiguous: %s; shares storage: %s; column 1 = [%g, %g]\n",
         ffk_tensor_is_contiguous(tr) ? "yes" : "no",
         ffk_tensor_storage_borrow(tr) == ffk_tensor_storage_borrow(tensor) ? "yes" : "no",
         ((float *)ffk_tensor_data_ptr(col))[0], ((float *)ffk_tensor_data_ptr(col))[3]);
  if (ffk_tensor_reshape(tr, 1, (int64_t[]){6}) == NULL) show_error("reshape(transpose, [6])");
  DLManagedTensorVersioned *exported = ffk_tensor_to_dlpack_versioned(tr);
  ffk_tensor *imported = ffk_tensor_from_dlpack_versioned(exported, NULL); /* what a consumer does */
  printf("  DLPack round trip: same data pointer: %s, strides [%lld, %lld]\n",
         ffk_tensor_data_ptr(imported) == ffk_tensor_data_ptr(tr) ? "yes" : "no",
         (long long)ffk_tensor_dltensor_borrow(imported)->strides[0],
         (long long)ffk_tensor_dltensor_borrow(imported)->strides[1]);
  ffk_object_release((ffk_object *)imported); /* calls the export's deleter, exactly once */

  /* Shared memory: a child process attaches by name and writes; the parent sees it. */
  ffk_storage *shm = ffk_storage_new_shared(NULL, 6 * sizeof(float));
  if (shm == NULL) {
    show_error("ffk_storage_new_shared");
  } else {
    ffk_tensor *shared = ffk_tensor_from_storage(shm, 2, shape2, NULL, 0, (DLDataType){kDLFloat, 32, 1});
    ffk_tensor_copy_from(shared, tensor);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      ffk_storage *mine = ffk_storage_attach_shared(ffk_storage_shared_name(shm));
      if (mine != NULL) ((float *)ffk_storage_data(mine))[5] = 42.0f;
      ffk_object_release((ffk_object *)mine);
      _exit(mine != NULL ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("  shared memory %s: the child (pid %d) wrote 42 at [1, 2]; the parent reads %g\n",
           ffk_storage_shared_name(shm), (int)child, ((float *)ffk_tensor_data_ptr(shared))[5]);
    ffk_object_release((ffk_object *)shared);
    ffk_object_release((ffk_object *)shm); /* the last holder: the name is unlinked */
  }
  /* CUDA: device storage and kernels when a GPU is there; a clear error when not. */
  printf("  CUDA devices: %d\n", (int)ffk_device_count(kDLCUDA));
  ffk_tensor *gpu = ffk_tensor_empty(2, shape2, (DLDataType){kDLFloat, 32, 1}, (DLDevice){kDLCUDA, 0});
  if (gpu == NULL) {
    show_error("ffk_tensor_empty(..., cuda:0)");
  } else {
    ffk_tensor *back = ffk_tensor_empty(2, shape2, (DLDataType){kDLFloat, 32, 1}, (DLDevice){kDLCPU, 0});
    if (back != NULL && ffk_tensor_copy_from(gpu, tensor) == 0 && ffk_tensor_copy_from(back, gpu) == 0) {
      ffk_any gv = ffk_any_object((ffk_object *)gpu);
      show("copied to the GPU", &gv);
      ffk_any_release(&gv);
      printf("  and back: element [1, 1] = %g\n", ((float *)ffk_tensor_data_ptr(back))[4]);
    } else {
      show_error("copy to and from cuda:0");
    }
    ffk_object_release((ffk_object *)back);
    ffk_object_release((ffk_object *)gpu);
  }
  ffk_any_release(&tv);
  ffk_any_release(&trv);
  ffk_object_release((ffk_object *)col);
  ffk_object_release((ffk_object *)tr);
  ffk_object_release((ffk_object *)tensor);

  ffk_any_release(&small);
  ffk_any_release(&same_any);
  ffk_any_release(&shape_any);
  printf("\nDone.\n");
  return 0;
}
