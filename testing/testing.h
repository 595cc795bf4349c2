/*
 * testing/testing.h - the `testing.*` global Functions that the test suites of every
 * language call (not installed; built as //testing and as the loadable module
 * libffikit_testing.so, whose init entry registers them).
 *
 *   testing.echo(x) -> x                 returns its one argument
 *   testing.nop(...) -> None             accepts anything, does nothing
 *   testing.apply(f, *args)              calls the Function f with the rest of the arguments
 *   testing.raise_error(kind, message)   raises from the non-inlined C function
 *                                        ffk_testing_raise_error (its name shows in the backtrace)
 *   testing.test_raise_error(0: str, 1: str) -> None   tvm_ffi's spelling: raises from a C
 *                                        function named TestRaiseError, as tvm_ffi's does
 *   testing.add_one(0: int) -> int       typed; an OverflowError for INT64_MAX (no wrap-around)
 *   testing.object_use_count(0: Object) -> int   the strong count the callee sees
 *   testing.get_add_one_c_symbol() -> ptr        a plain ffk_safe_call adding one
 *   testing.schema_id_<T>(0: T) -> T     typed identities for T in int, float, bool, device
 *                                        (Device), dtype, string (str), bytes, func (Function),
 *                                        any (Any), object (Object), tensor (Tensor), arr_int (Array<int>),
 *                                        arr_str (Array<str>), arr (Array), list_int (List<int>),
 *                                        map_str_int (Map<str, int>), map (Map),
 *                                        dict_str_int (Dict<str, int>), list_str (List<str>),
 *                                        map_str_str (Map<str, str>), dict_str_str (Dict<str, str>)
 *   testing.make_array_with_tensor(0: Tensor) -> Array              [t]
 *   testing.make_empty_array_with_tensor_input(0: Tensor) -> Array  [] (the argument is
 *                                        checked to be a Tensor, then unused)
 *   testing.make_map_with_tensor(0: Tensor) -> Map<str, Tensor>     {"tensor": t}
 *   testing.make_dict_with_tensor(0: Tensor) -> Dict<str, Tensor>   {"tensor": t}
 *   testing.make_list_with_tensor(0: Tensor, 1: Any) -> List        [t, x]
 *                                        (the containers hold the caller's tensor, not a copy)
 *   testing.mutate(0: Object, 1: Any, 2: Any) -> Object   changes a container through its own
 *                                        handle and returns that handle: Array push(2), Map
 *                                        set(1, 2) (copy-on-write: the caller's unchanged),
 *                                        List append(2), Dict set(1, 2) (shared: the caller sees it)
 *
 * And the reflected testing types with their globals (objects.c, ffk_testing_register
 * defines them; types are never removed):
 *   testing.TestObjectBase      v_i64: int (writable, default 10, doc "i64 field"), v_f64: float
 *                               (read-only, default 10.0), v_str: str (writable, default "hello");
 *                               method add_i64(self, x: int) -> int (doc "add_i64 method")
 *   testing.TestObjectDerived   parent TestObjectBase; v_map: Map<Any, Any>, v_array: Array<Any>
 *                               (writable, required)
 *   testing.TestIntPair         a, b: int (read-only, docs "Field `a`" / "Field `b`"); method
 *                               sum(self) -> int; constructed as (a, b)
 *   testing.TestUnregisteredBaseObject  v1: int (read-only); method get_v1_plus_one(self) -> int
 *   testing.TestUnregisteredObject      parent the above; v2: int (read-only); method
 *                               get_v2_plus_two(self) -> int
 *   testing.make_unregistered_object() -> Object          TestUnregisteredObject(v1=41, v2=42)
 *   testing.create_object(type_key, name, value, ...)     an object made by reflection from
 *                                        named values (ffk_object_create)
 *   testing.TestCaseInsensitive value: str (read-only); constructed as (value); __s_equal__ /
 *                               __s_hash__ hooks compare and hash value ignoring ASCII case
 *   testing.object_get_field(obj, name), testing.object_set_field(obj, name, value),
 *   testing.object_call_method(obj, name, *args)    reflection by name, done in C
 *   testing.TestEnumVariant     an enum (ffikit/enum.h): Alpha (0), Beta (1); attribute
 *                               column `code`: Alpha 10, Beta 20
 *   testing.TestCxxIntEnum, testing.TestCxxStrEnum   an IntEnum and a StrEnum without members
 *   testing.TestCxxEnumHolder   priority: testing.TestCxxIntEnum, opcode: testing.TestCxxStrEnum
 *   testing.enum_variant_get(name: str) -> testing.TestEnumVariant   a ValueError for none
 */
#ifndef FFIKIT_FFI_TESTING_H
#define FFIKIT_FFI_TESTING_H

#include <ffikit/ffi.h>

FFK_EXTERN_C_BEGIN

/* Registers every testing.* Function (replacing earlier ones). 0, or -1 (MemoryError). */
int ffk_testing_register(void);

/* Removes every testing.* Function from the registry (tests end with no live objects). */
void ffk_testing_unregister(void);

/*
 * Defines the reflected testing types (idempotent) and registers their globals
 * (make_unregistered_object, create_object); ffk_testing_register calls it. 0, or -1 with
 * the error of the failed definition or registration.
 */
int ffk_testing_register_objects(void);

/* Removes the globals of ffk_testing_register_objects (the types stay: types are never removed). */
void ffk_testing_unregister_objects(void);

/* Raises an error of `kind` with `message` from a named, never-inlined frame. Returns -1. */
int ffk_testing_raise_error(const char *kind, const char *message);

/*
 * The plain safe-call behind testing.add_one (what get_add_one_c_symbol returns): one
 * int argument (borrowed), the result x + 1. Fails with a TypeError for a wrong argument
 * and an OverflowError when x is INT64_MAX.
 */
int ffk_testing_add_one(void *self, const ffk_any *args, int32_t nargs, ffk_any *result);

FFK_EXTERN_C_END

#endif /* FFIKIT_FFI_TESTING_H */
