// The testing.* Functions (testing/): what the Python and Rust suites rely on.
#include <ffikit/ffikit.h>

#include <string>

#include "testing/testing.h"
#include "tests/support/ffk_test.h"
#include "tests/support/with_testing.h"

namespace {

class Testing : public ffk::test::WithTesting {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

ffk_object* Obj(void* p) { return static_cast<ffk_object*>(p); }

// Calls the global `name` into *result (releasing what it held); returns "ok" or the error text.
std::string Call(const char* name, std::initializer_list<ffk_any> args, ffk_any* result) {
  ffk_any_release(result);
  ffk_function* f;
  if (ffk_function_get_global(name, &f) != 1) return std::string("no global ") + name;
  int rc = ffk_function_call(f, args.begin(), static_cast<int32_t>(args.size()), result);
  ffk_object_release(Obj(f));
  return rc == 0 ? "ok" : FetchError();
}

TEST_F(Testing, EchoNopApplyAddOne) {
  OwnedAny r;
  EXPECT_EQ(Call("testing.echo", {ffk_any_raw_str("hi")}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "\"hi\"");
  EXPECT_EQ(Call("testing.nop", {ffk_any_int(1), ffk_any_none()}, &r.v), "ok");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  ffk_function* add_one;
  ASSERT_EQ(ffk_function_get_global("testing.add_one", &add_one), 1);
  EXPECT_STREQ(ffk_function_signature(add_one), "testing.add_one(0: int) -> int");
  EXPECT_EQ(Call("testing.apply", {ffk_any_object(Obj(add_one)), ffk_any_int(9)}, &r.v), "ok");
  ffk_object_release(Obj(add_one));  // the reference ffk_any_object added for the call above
  ffk_object_release(Obj(add_one));
  EXPECT_EQ(r.v.v_int, 10);
  EXPECT_EQ(Call("testing.add_one", {ffk_any_raw_str("x")}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. Expected `int` "
            "but got `str`");
  EXPECT_EQ(Call("testing.apply", {}, &r.v),
            "TypeError: `testing.apply` takes a Function and its arguments but got 0 arguments");
}

TEST_F(Testing, NopIsQuickAndEchoIsNot) {
  // testing.nop carries FFK_FUNCTION_QUICK (the bindings keep their interpreter lock around
  // it); the other testing functions do not.
  ffk_function* f = nullptr;
  ASSERT_EQ(ffk_function_get_global("testing.nop", &f), 1);
  EXPECT_EQ(ffk_function_flags(f), FFK_FUNCTION_QUICK);
  ffk_object_release(Obj(f));
  ASSERT_EQ(ffk_function_get_global("testing.echo", &f), 1);
  EXPECT_EQ(ffk_function_flags(f), 0u);
  ffk_object_release(Obj(f));
}

TEST_F(Testing, RaiseErrorNamesItsFrame) {
  OwnedAny r;
  ffk_function* f;
  ASSERT_EQ(ffk_function_get_global("testing.raise_error", &f), 1);
  ffk_any args[2] = {ffk_any_raw_str("KeyError"), ffk_any_raw_str("no such thing")};
  ASSERT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  ffk_error* err = ffk_error_fetch();
  EXPECT_STREQ(ffk_error_kind(err), "KeyError");
  EXPECT_STREQ(ffk_error_message(err), "no such thing");
  std::string bt = ffk_error_backtrace(err);
  EXPECT_NE(bt.find("ffk_testing_raise_error"), std::string::npos) << bt;
  EXPECT_NE(bt.find("in call to Function `testing.raise_error`"), std::string::npos) << bt;
  ffk_object_release(Obj(err));
  ffk_object_release(Obj(f));
}

TEST_F(Testing, TestRaiseErrorRaisesFromAFrameNamedAsTvmFfiNamesIt) {
  OwnedAny r;
  EXPECT_EQ(Call("testing.test_raise_error", {ffk_any_raw_str("ValueError"), ffk_any_raw_str("boom")}, &r.v),
            "ValueError: boom");
  ffk_function* f;
  ASSERT_EQ(ffk_function_get_global("testing.test_raise_error", &f), 1);
  ffk_any args[2] = {ffk_any_raw_str("KeyError"), ffk_any_raw_str("k")};
  ASSERT_EQ(ffk_function_call(f, args, 2, &r.v), -1);
  ffk_error* err = ffk_error_fetch();
  std::string bt = ffk_error_backtrace(err);
  EXPECT_NE(bt.find("at TestRaiseError ("), std::string::npos) << bt;
  ffk_object_release(Obj(err));
  EXPECT_STREQ(ffk_function_signature(f), "testing.test_raise_error(0: str, 1: str) -> None");
  ffk_object_release(Obj(f));
  EXPECT_EQ(Call("testing.test_raise_error", {ffk_any_int(1), ffk_any_raw_str("m")}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.test_raise_error(0: str, 1: str) -> "
            "None`. Expected `str` but got `int`");
}

TEST_F(Testing, AddOneRefusesToOverflow) {
  OwnedAny r;
  EXPECT_EQ(Call("testing.add_one", {ffk_any_int(INT64_MAX - 1)}, &r.v), "ok");
  EXPECT_EQ(r.v.v_int, INT64_MAX);
  EXPECT_EQ(Call("testing.add_one", {ffk_any_int(INT64_MAX)}, &r.v),
            "OverflowError: `testing.add_one(9223372036854775807)`: the result does not fit in a 64-bit signed "
            "integer");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(Call("testing.add_one", {ffk_any_int(INT64_MIN)}, &r.v), "ok");
  EXPECT_EQ(r.v.v_int, INT64_MIN + 1);
}

TEST_F(Testing, UseCountAndCSymbol) {
  OwnedAny r;
  ffk_string* s = ffk_string_from_cstr("an object string, long");
  ffk_any arg = ffk_any_object_steal(Obj(s));
  EXPECT_EQ(Call("testing.object_use_count", {arg}, &r.v), "ok");
  EXPECT_EQ(r.v.v_int, 1);  // arguments are borrowed: no reference added for the call
  ffk_any_release(&arg);
  EXPECT_EQ(Call("testing.object_use_count", {ffk_any_int(1)}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.object_use_count(0: Object) -> int`. "
            "Expected `Object` but got `int`");
  EXPECT_EQ(Call("testing.get_add_one_c_symbol", {}, &r.v), "ok");
  ASSERT_EQ(r.v.type_index, FFK_TYPE_OPAQUE_PTR);
  ffk_safe_call fn;
  memcpy(&fn, &r.v.v_ptr, sizeof fn);
  ffk_any x = ffk_any_int(1), y;
  ASSERT_EQ(fn(nullptr, &x, 1, &y), 0);
  EXPECT_EQ(y.v_int, 2);
}

TEST_F(Testing, SchemaIdentitiesConvert) {
  OwnedAny r;
  EXPECT_EQ(Call("testing.schema_id_int", {ffk_any_bool(true)}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "1");
  EXPECT_EQ(Call("testing.schema_id_float", {ffk_any_int(2)}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "2.0");
  EXPECT_EQ(Call("testing.schema_id_bool", {ffk_any_int(0)}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "False");
  EXPECT_EQ(Call("testing.schema_id_device", {ffk_any_raw_str("cuda:1")}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "cuda:1");
  EXPECT_EQ(Call("testing.schema_id_dtype", {ffk_any_raw_str("float32")}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "float32");
  EXPECT_EQ(Call("testing.schema_id_string", {ffk_any_raw_str("s")}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "\"s\"");
  EXPECT_EQ(Call("testing.schema_id_bytes", {ffk_any_raw_str("s")}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_bytes(0: bytes) -> bytes`. "
            "Expected `bytes` but got `str`");
  EXPECT_EQ(Call("testing.schema_id_any", {ffk_any_none()}, &r.v), "ok");
  EXPECT_EQ(Call("testing.schema_id_object", {ffk_any_none()}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_object(0: Object) -> Object`. "
            "Expected `Object` but got `None`");

  ffk_any items[2] = {ffk_any_int(1), ffk_any_bool(true)};
  OwnedAny list(ffk_any_object_steal(Obj(ffk_list_from_items(items, 2))));
  EXPECT_EQ(Call("testing.schema_id_arr_int", {list.v}, &r.v), "ok");
  EXPECT_EQ(std::string(ffk_any_type_name(&r.v)) + Repr(r.v), "Array(1, 1)");
  EXPECT_EQ(Call("testing.schema_id_arr", {list.v}, &r.v), "ok");
  EXPECT_EQ(std::string(ffk_any_type_name(&r.v)) + Repr(r.v), "Array(1, True)");
  EXPECT_EQ(Call("testing.schema_id_arr_str", {list.v}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_arr_str(0: Array<str>) -> "
            "Array<str>`. Expected `Array<str>` but got `List` (item #0: expected `str` but got `int`)");
  EXPECT_EQ(Call("testing.schema_id_list_int", {list.v}, &r.v), "ok");
  EXPECT_NE(r.v.v_obj, list.v.v_obj);  // True had to become 1: a new List
  ffk_any keys[1] = {ffk_any_raw_str("k")};
  ffk_any values[1] = {ffk_any_int(3)};
  OwnedAny dict(ffk_any_object_steal(Obj(ffk_dict_from_pairs(keys, values, 1))));
  EXPECT_EQ(Call("testing.schema_id_dict_str_int", {dict.v}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, dict.v.v_obj);  // already the right type: the same shared Dict
  EXPECT_EQ(Call("testing.schema_id_map_str_int", {dict.v}, &r.v), "ok");
  EXPECT_EQ(std::string(ffk_any_type_name(&r.v)) + Repr(r.v), "Map{\"k\": 3}");
  EXPECT_EQ(Call("testing.schema_id_map", {dict.v}, &r.v), "ok");
  const std::string mismatch = "TypeError: Mismatched type on argument #0 when calling: ";
  EXPECT_EQ(Call("testing.schema_id_dict_str_str", {dict.v}, &r.v),
            mismatch + "`testing.schema_id_dict_str_str(0: Dict<str, str>) -> Dict<str, str>`. Expected "
                       "`Dict<str, str>` but got `Dict` (value for key \"k\": expected `str` but got `int`)");
  EXPECT_EQ(Call("testing.schema_id_map_str_str", {dict.v}, &r.v),
            mismatch + "`testing.schema_id_map_str_str(0: Map<str, str>) -> Map<str, str>`. Expected "
                       "`Map<str, str>` but got `Dict` (value for key \"k\": expected `str` but got `int`)");
  ffk_any strs[2] = {ffk_any_raw_str("a"), ffk_any_raw_str("a longer string")};
  OwnedAny slist(ffk_any_object_steal(Obj(ffk_list_from_items(strs, 2))));
  EXPECT_EQ(Call("testing.schema_id_list_str", {slist.v}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, slist.v.v_obj);
  EXPECT_EQ(Repr(r.v), "[\"a\", \"a longer string\"]");
  EXPECT_EQ(Call("testing.schema_id_list_str", {list.v}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_list_str(0: List<str>) -> "
            "List<str>`. Expected `List<str>` but got `List` (item #0: expected `str` but got `int`)");
  ffk_any svalues[1] = {ffk_any_raw_str("v")};
  OwnedAny sdict(ffk_any_object_steal(Obj(ffk_dict_from_pairs(keys, svalues, 1))));
  EXPECT_EQ(Call("testing.schema_id_dict_str_str", {sdict.v}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, sdict.v.v_obj);
  EXPECT_EQ(Call("testing.schema_id_map_str_str", {sdict.v}, &r.v), "ok");
  EXPECT_EQ(std::string(ffk_any_type_name(&r.v)) + Repr(r.v), "Map{\"k\": \"v\"}");
  ffk_function* f;
  ASSERT_EQ(ffk_function_get_global("testing.nop", &f), 1);
  OwnedAny fv(ffk_any_object_steal(Obj(f)));
  EXPECT_EQ(Call("testing.schema_id_func", {fv.v}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, fv.v.v_obj);
}

TEST_F(Testing, ContainersHoldTheCallersTensor) {
  int64_t shape[] = {2, 3};
  ffk_tensor* t = ffk_tensor_zeros(2, shape, ffk_dtype(kDLFloat, 32, 1), DLDevice{kDLCPU, 0});
  ASSERT_NE(t, nullptr);
  OwnedAny tv;
  tv.v = ffk_any_object_steal(Obj(t));
  OwnedAny r;
  EXPECT_EQ(Call("testing.schema_id_tensor", {tv.v}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, tv.v.v_obj);
  EXPECT_EQ(Call("testing.schema_id_tensor", {ffk_any_int(1)}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.schema_id_tensor(0: Tensor) -> Tensor`. "
            "Expected `Tensor` but got `int`");

  EXPECT_EQ(Call("testing.make_array_with_tensor", {tv.v}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "(float32[2, 3]@cpu:0,)");
  EXPECT_EQ(ffk_object_use_count(tv.v.v_obj), 2u);  // ours and the Array's: the same tensor, not a copy
  EXPECT_EQ(Call("testing.make_empty_array_with_tensor_input", {tv.v}, &r.v), "ok");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_ARRAY);
  EXPECT_EQ(Repr(r.v), "()");
  EXPECT_EQ(Call("testing.make_empty_array_with_tensor_input", {ffk_any_int(1)}, &r.v),
            "TypeError: Mismatched type on argument #0 when calling: `testing.make_empty_array_with_tensor_input(0: "
            "Tensor) -> Array`. Expected `Tensor` but got `int`");
  EXPECT_EQ(Call("testing.make_map_with_tensor", {tv.v}, &r.v), "ok");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_MAP);
  EXPECT_EQ(Repr(r.v), "{\"tensor\": float32[2, 3]@cpu:0}");
  EXPECT_EQ(Call("testing.make_dict_with_tensor", {tv.v}, &r.v), "ok");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_DICT);
  EXPECT_EQ(Repr(r.v), "{\"tensor\": float32[2, 3]@cpu:0}");
  EXPECT_EQ(Call("testing.make_list_with_tensor", {tv.v, ffk_any_int(7)}, &r.v), "ok");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_LIST);
  EXPECT_EQ(Repr(r.v), "[float32[2, 3]@cpu:0, 7]");
  EXPECT_EQ(ffk_object_use_count(tv.v.v_obj), 2u);
  EXPECT_EQ(Call("testing.make_list_with_tensor", {tv.v}, &r.v),
            "TypeError: Mismatched number of arguments when calling: `testing.make_list_with_tensor(0: Tensor, 1: Any) "
            "-> List`. Expected 2 but got 1");
}

TEST_F(Testing, MutateCopiesMapAndArrayButChangesListAndDictInPlace) {
  OwnedAny r;
  ffk_map* m = ffk_map_new();
  ffk_array* a = ffk_array_new(nullptr, 0);
  ffk_list* l = ffk_list_new();
  ffk_dict* d = ffk_dict_new();
  ASSERT_TRUE(m && a && l && d);
  ffk_any mv = ffk_any_object(Obj(m)), av = ffk_any_object(Obj(a));
  ffk_any lv = ffk_any_object(Obj(l)), dv = ffk_any_object(Obj(d));
  EXPECT_EQ(Call("testing.mutate", {mv, ffk_any_raw_str("k"), ffk_any_int(1)}, &r.v), "ok");
  EXPECT_NE(r.v.v_obj, Obj(m));  // copy-on-write: the caller's Map is untouched
  EXPECT_EQ(Repr(r.v), "{\"k\": 1}");
  EXPECT_EQ(ffk_map_size(m), 0);
  EXPECT_EQ(Call("testing.mutate", {av, ffk_any_none(), ffk_any_int(2)}, &r.v), "ok");
  EXPECT_EQ(Repr(r.v), "(2,)");
  EXPECT_EQ(ffk_array_size(a), 0);
  EXPECT_EQ(Call("testing.mutate", {lv, ffk_any_none(), ffk_any_int(3)}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, Obj(l));  // shared: the very List, changed
  EXPECT_EQ(ffk_list_size(l), 1);
  EXPECT_EQ(Call("testing.mutate", {dv, ffk_any_int(4), ffk_any_int(5)}, &r.v), "ok");
  EXPECT_EQ(r.v.v_obj, Obj(d));
  EXPECT_EQ(ffk_dict_size(d), 1);
  ffk_shape* s = ffk_shape_new(nullptr, 0);
  ffk_any sv = ffk_any_object(Obj(s));
  EXPECT_EQ(Call("testing.mutate", {sv, ffk_any_none(), ffk_any_none()}, &r.v),
            "TypeError: `testing.mutate` expects an Array, Map, List or Dict, got Shape");
  for (ffk_any* v : {&mv, &av, &lv, &dv, &sv}) ffk_any_release(v);
  for (ffk_object* o : {Obj(m), Obj(a), Obj(l), Obj(d), Obj(s)}) ffk_object_release(o);
}

TEST_F(Testing, TensorHelpersFailCleanlyAtEveryAllocation) {
  int64_t shape[] = {4};
  ffk_tensor* t = ffk_tensor_empty(1, shape, ffk_dtype(kDLFloat, 32, 1), DLDevice{kDLCPU, 0});
  ASSERT_NE(t, nullptr);
  ffk_any tv = ffk_any_object(Obj(t));
  for (const char* name : {"testing.make_array_with_tensor", "testing.make_map_with_tensor",
                           "testing.make_dict_with_tensor", "testing.make_empty_array_with_tensor_input"}) {
    ffk_function* f;
    ASSERT_EQ(ffk_function_get_global(name, &f), 1);
    ffk::test::SweepAllocationFailures(
        [&] {
          ffk_any r = ffk_any_none();
          int rc = ffk_function_call(f, &tv, 1, &r);
          ffk_any_release(&r);
          return rc == 0;
        },
        [&] { EXPECT_EQ(ffk_object_use_count(Obj(t)), 2u) << name; });
    ffk_object_release(Obj(f));
  }
  ffk_any_release(&tv);
  ffk_object_release(Obj(t));
}

}  // namespace
