// tvm_ffi's ffi.* global functions as the C library registers them at load: each group
// (containers, structural, JSON, repr, registry, objects, modules, tensors) found by name
// through ffk_function_get_global and called through ffk_function_call, with tvm_ffi's
// argument orders and results, and their error kinds for bad indices, keys and types.
// Every test ends with no live objects (the library's own Functions are immortal).
#include <ffikit/ffikit.h>
#include <ffikit/module.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "testing/testing.h"
#include "tests/support/ffk_test.h"
#include "tests/support/with_testing.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::PendingError;
using ffk::test::Repr;

class Globals : public ffk::test::WithTesting {
 protected:
  void TearDown() override {
    for (ffk_any& v : held_) ffk_any_release(&v);
    held_.clear();
    ffk::test::WithTesting::TearDown();
  }

  // Calls the global `name` with borrowed `args`: 0 with *out set, or -1 with the error pending.
  int Call(const char* name, std::initializer_list<ffk_any> args, OwnedAny* out) {
    ffk_function* f = nullptr;
    if (ffk_function_get_global(name, &f) != 1) {
      ADD_FAILURE() << "global `" << name << "` is not registered";
      return -1;
    }
    ffk_any_release(&out->v);
    std::vector<ffk_any> a(args);
    int rc = ffk_function_call(f, a.data(), static_cast<int32_t>(a.size()), &out->v);
    ffk_object_release(reinterpret_cast<ffk_object*>(f));
    return rc;
  }

  // The repr of the result of a call that must succeed.
  std::string CallRepr(const char* name, std::initializer_list<ffk_any> args) {
    OwnedAny out;
    if (Call(name, args, &out) != 0) return "error: " + FetchError();
    return Repr(out.v);
  }

  // A str value owned by the fixture (released in TearDown).
  ffk_any S(const char* s) {
    ffk_any v;
    EXPECT_EQ(ffk_any_cstr(s, &v), 0);
    held_.push_back(v);
    return v;
  }

  std::vector<ffk_any> held_;
};

const ffk_any I(int64_t x) { return ffk_any_int(x); }
const ffk_any B(bool x) { return ffk_any_bool(x); }

TEST_F(Globals, EveryGroupIsRegisteredUnderTvmFfiNames) {
  for (const char* name : {"ffi.Array", "ffi.ListReplaceSlice", "ffi.MapForwardIterFunctor", "ffi.DictClear",
                           "ffi.Shape", "ffi.String", "ffi.Bytes", "ffi.StructuralEqual", "ffi.RecursiveGe",
                           "ffi.DeepCopy", "ffi.ToJSONGraph", "ffi.json.Stringify", "ffi.ReprPrint",
                           "ffi.FunctionListGlobalNamesFunctor", "ffi.GetRegisteredTypeKeys",
                           "ffi.MakeObjectFromPackedArgs", "ffi.ModuleLoadFromFile", "ffi.SystemLib",
                           "ffi.ContainerFindFirstNonCPUDevice", "ffi.GetInvalidObject", "ffi.GetKwargsObject"}) {
    ffk_function* f = nullptr;
    EXPECT_EQ(ffk_function_get_global(name, &f), 1) << name;
    ffk_object_release(reinterpret_cast<ffk_object*>(f));
  }
}

TEST_F(Globals, ArrayFunctionsReadAndRefuseOutOfRangeIndices) {
  OwnedAny a;
  ASSERT_EQ(Call("ffi.Array", {I(1), S("a"), I(3)}, &a), 0) << FetchError();
  EXPECT_EQ(Repr(a.v), "(1, \"a\", 3)");
  EXPECT_EQ(CallRepr("ffi.ArrayGetItem", {a.v, I(1)}), "\"a\"");
  EXPECT_EQ(CallRepr("ffi.ArraySize", {a.v}), "3");
  EXPECT_EQ(CallRepr("ffi.ArrayContains", {a.v, I(3)}), "True");
  OwnedAny out;
  EXPECT_EQ(Call("ffi.ArrayGetItem", {a.v, I(5)}, &out), -1);
  EXPECT_TRUE(PendingError("IndexError", {"ffi.ArrayGetItem", "5", "3"}));
  EXPECT_EQ(Call("ffi.ArrayGetItem", {a.v, I(-1)}, &out), -1);
  EXPECT_TRUE(PendingError("IndexError", {"-1"}));
  EXPECT_EQ(Call("ffi.ArrayGetItem", {I(1), I(0)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"ffi.ArrayGetItem", "argument #0"}));
  EXPECT_EQ(ffk_object_use_count(a.v.v_obj), 1u) << "no call kept a reference";
}

TEST_F(Globals, ListFunctionsChangeTheCallersList) {
  OwnedAny l, out;
  ASSERT_EQ(Call("ffi.List", {I(1), I(2), I(3)}, &l), 0) << FetchError();
  ASSERT_EQ(Call("ffi.ListAppend", {l.v, I(4)}, &out), 0);
  ASSERT_EQ(Call("ffi.ListSetItem", {l.v, I(0), I(9)}, &out), 0);
  ASSERT_EQ(Call("ffi.ListInsert", {l.v, I(4), I(5)}, &out), 0);
  EXPECT_EQ(Repr(l.v), "[9, 2, 3, 4, 5]");
  EXPECT_EQ(CallRepr("ffi.ListPop", {l.v, I(0)}), "9");
  ASSERT_EQ(Call("ffi.ListErase", {l.v, I(0)}, &out), 0);
  ASSERT_EQ(Call("ffi.ListEraseRange", {l.v, I(0), I(1)}, &out), 0);
  EXPECT_EQ(Repr(l.v), "[4, 5]");
  ASSERT_EQ(Call("ffi.ListReplaceSlice", {l.v, I(0), I(1), l.v}, &out), 0) << FetchError();
  EXPECT_EQ(Repr(l.v), "[4, 5, 5]") << "the list replaced by itself as it was before";
  ASSERT_EQ(Call("ffi.ListReverse", {l.v}, &out), 0);
  EXPECT_EQ(CallRepr("ffi.ListGetItem", {l.v, I(2)}), "4");
  EXPECT_EQ(CallRepr("ffi.ListContains", {l.v, I(5)}), "True");
  EXPECT_EQ(CallRepr("ffi.ListSize", {l.v}), "3");

  EXPECT_EQ(Call("ffi.ListInsert", {l.v, I(4), I(0)}, &out), -1);
  EXPECT_TRUE(PendingError("IndexError", {"ffi.ListInsert", "4", "[0, 3]"}));
  EXPECT_EQ(Call("ffi.ListEraseRange", {l.v, I(2), I(1)}, &out), -1);
  EXPECT_TRUE(PendingError("IndexError", {"[2, 1)", "3"}));
  EXPECT_EQ(Call("ffi.ListReplaceSlice", {l.v, I(0), I(1), I(7)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"ffi.ListReplaceSlice", "int"}));
  EXPECT_EQ(Call("ffi.ListPop", {l.v, I(3)}, &out), -1);
  EXPECT_TRUE(PendingError("IndexError", {"ffi.ListPop", "3"}));
  ASSERT_EQ(Call("ffi.ListClear", {l.v}, &out), 0);
  EXPECT_EQ(Repr(l.v), "[]");
}

TEST_F(Globals, MapLookupsAndTheMissingMarker) {
  OwnedAny m, out;
  ASSERT_EQ(Call("ffi.Map", {S("a"), I(1), S("b"), I(2)}, &m), 0) << FetchError();
  EXPECT_EQ(CallRepr("ffi.MapGetItem", {m.v, S("b")}), "2");
  EXPECT_EQ(CallRepr("ffi.MapCount", {m.v, S("z")}), "0");
  EXPECT_EQ(CallRepr("ffi.MapSize", {m.v}), "2");
  EXPECT_EQ(Call("ffi.MapGetItem", {m.v, S("z")}, &out), -1);
  EXPECT_TRUE(PendingError("KeyError", {"ffi.MapGetItem", "\"z\""}));
  ASSERT_EQ(Call("ffi.MapGetItemOrMissing", {m.v, S("z")}, &out), 0);
  EXPECT_EQ(out.v.v_obj, ffk_missing());
  EXPECT_EQ(Repr(out.v), "<MISSING>");
  EXPECT_EQ(Call("ffi.Map", {S("a")}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"ffi.Map", "1 arguments"}));
}

TEST_F(Globals, IterFunctorWalksASnapshotAndRefusesToReadPastTheEnd) {
  OwnedAny d, out, it;
  ASSERT_EQ(Call("ffi.Dict", {S("a"), I(1), S("b"), I(2)}, &d), 0) << FetchError();
  ASSERT_EQ(Call("ffi.DictForwardIterFunctor", {d.v}, &it), 0) << FetchError();
  ASSERT_EQ(Call("ffi.DictClear", {d.v}, &out), 0);  // the functor keeps its snapshot
  ffk_function* f = reinterpret_cast<ffk_function*>(it.v.v_obj);
  std::string seen;
  for (int step = 0; step < 2; ++step) {
    for (int64_t cmd : {0, 1, 2}) {
      ffk_any arg = I(cmd);
      OwnedAny r;
      ASSERT_EQ(ffk_function_call(f, &arg, 1, &r.v), 0) << FetchError();
      seen += Repr(r.v) + " ";
    }
  }
  EXPECT_EQ(seen, "\"a\" 1 True \"b\" 2 False ");
  ffk_any arg = I(0);
  EXPECT_EQ(ffk_function_call(f, &arg, 1, &out.v), -1);
  EXPECT_TRUE(PendingError("IndexError", {"past the last of 2"}));
  arg = I(7);
  EXPECT_EQ(ffk_function_call(f, &arg, 1, &out.v), -1);
  EXPECT_TRUE(PendingError("ValueError", {"command 7"}));
  ASSERT_EQ(Call("ffi.DictErase", {d.v, S("nope")}, &out), 0) << "erasing a missing key does nothing";
}

TEST_F(Globals, DictSetItemAndOrMissing) {
  OwnedAny d, out;
  ASSERT_EQ(Call("ffi.Dict", {}, &d), 0);
  ASSERT_EQ(Call("ffi.DictSetItem", {d.v, S("k"), I(5)}, &out), 0);
  EXPECT_EQ(CallRepr("ffi.DictGetItemOrMissing", {d.v, S("k")}), "5");
  EXPECT_EQ(CallRepr("ffi.DictGetItemOrMissing", {d.v, S("x")}), "<MISSING>");
  EXPECT_EQ(CallRepr("ffi.DictCount", {d.v, S("k")}), "1");
  EXPECT_EQ(CallRepr("ffi.DictSize", {d.v}), "1");
  EXPECT_EQ(Call("ffi.DictGetItem", {d.v, S("x")}, &out), -1);
  EXPECT_TRUE(PendingError("KeyError", {"ffi.DictGetItem"}));
}

TEST_F(Globals, StructuralFunctionsTakeTvmFfisFlags) {
  OwnedAny a, b, out;
  ASSERT_EQ(Call("ffi.Array", {I(1), I(2), I(3)}, &a), 0);
  ASSERT_EQ(Call("ffi.Array", {I(1), I(2), I(4)}, &b), 0);
  EXPECT_EQ(CallRepr("ffi.StructuralEqual", {a.v, a.v, B(false), B(false)}), "True");
  EXPECT_EQ(CallRepr("ffi.StructuralEqual", {a.v, b.v, B(true), B(false)}), "False");
  EXPECT_EQ(Call("ffi.StructuralEqual", {a.v, b.v}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Expected 4 but got 2"}));
  EXPECT_EQ(Call("ffi.StructuralEqual", {a.v, b.v, S("yes"), B(false)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"argument #2"}));

  OwnedAny copy, h1, h2;
  ASSERT_EQ(Call("ffi.DeepCopy", {a.v}, &copy), 0);
  ASSERT_EQ(Call("ffi.StructuralHash", {a.v, B(false), B(false)}, &h1), 0);
  ASSERT_EQ(Call("ffi.StructuralHash", {copy.v, B(false), B(true)}, &h2), 0);
  EXPECT_EQ(h1.v.v_int, h2.v.v_int);
  EXPECT_EQ(CallRepr("ffi.GetFirstStructuralMismatch", {a.v, b.v, B(false), B(false)}), "(<root>[2], <root>[2])");
  EXPECT_EQ(CallRepr("ffi.GetFirstStructuralMismatch", {a.v, copy.v, B(false), B(false)}), "None");
}

TEST_F(Globals, RecursiveComparisonsOrderLikeTvmFfi) {
  OwnedAny a, b, m, out;
  ASSERT_EQ(Call("ffi.Array", {I(1), I(2)}, &a), 0);
  ASSERT_EQ(Call("ffi.Array", {I(1), I(2), I(0)}, &b), 0);
  EXPECT_EQ(CallRepr("ffi.RecursiveLt", {a.v, b.v}), "True");
  EXPECT_EQ(CallRepr("ffi.RecursiveLe", {a.v, a.v}), "True");
  EXPECT_EQ(CallRepr("ffi.RecursiveGt", {a.v, b.v}), "False");
  EXPECT_EQ(CallRepr("ffi.RecursiveGe", {S("b"), S("a")}), "True");
  EXPECT_EQ(CallRepr("ffi.RecursiveLt", {ffk_any_none(), I(1)}), "True");
  EXPECT_EQ(CallRepr("ffi.RecursiveEq", {a.v, b.v}), "False");
  EXPECT_EQ(Call("ffi.RecursiveLt", {I(1), S("b")}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"different types", "int", "str"}));
  EXPECT_EQ(Call("ffi.RecursiveLt", {ffk_any_float(NAN), ffk_any_float(1.0)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"NaN"}));
  ASSERT_EQ(Call("ffi.Map", {I(1), I(2)}, &m), 0);
  EXPECT_EQ(CallRepr("ffi.RecursiveLe", {m.v, m.v}), "True") << "equal Maps are ordered";
  OwnedAny m2;
  ASSERT_EQ(Call("ffi.Map", {I(1), I(3)}, &m2), 0);
  EXPECT_EQ(Call("ffi.RecursiveLt", {m.v, m2.v}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Map/Dict"}));
  OwnedAny h;
  ASSERT_EQ(Call("ffi.RecursiveHash", {a.v}, &h), 0);
  EXPECT_EQ(h.v.type_index, FFK_TYPE_INT);
}

TEST_F(Globals, JsonGraphRoundTripsThroughValuesAndText) {
  OwnedAny a, doc, back, text, back2, out;
  ASSERT_EQ(Call("ffi.Array", {I(1), S("x")}, &a), 0);
  ASSERT_EQ(Call("ffi.ToJSONGraph", {a.v, ffk_any_none()}, &doc), 0) << FetchError();
  EXPECT_EQ(doc.v.type_index, FFK_TYPE_MAP);
  ASSERT_EQ(Call("ffi.FromJSONGraph", {doc.v}, &back), 0) << FetchError();
  EXPECT_EQ(ffk_structural_equal(&a.v, &back.v), 1);
  ASSERT_EQ(Call("ffi.ToJSONGraphString", {a.v, ffk_any_none()}, &text), 0);
  ASSERT_EQ(Call("ffi.FromJSONGraphString", {text.v}, &back2), 0);
  EXPECT_EQ(ffk_structural_equal(&a.v, &back2.v), 1);
  EXPECT_EQ(Call("ffi.FromJSONGraph", {I(1)}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"Invalid JSON Object Graph", "int"}));
  EXPECT_EQ(Call("ffi.FromJSONGraphString", {S("{bad")}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"not JSON"}));
}

TEST_F(Globals, JsonParseAndStringify) {
  OwnedAny v, out;
  ASSERT_EQ(Call("ffi.json.Parse", {S("{\"a\": [1, 2.5, null, true]}")}, &v), 0) << FetchError();
  EXPECT_EQ(Repr(v.v), "{\"a\": (1, 2.5, None, True)}");
  EXPECT_EQ(CallRepr("ffi.json.Stringify", {v.v, ffk_any_none()}), "\"{\\\"a\\\":[1,2.5,null,true]}\"");
  ASSERT_EQ(Call("ffi.json.Stringify", {v.v, I(2)}, &out), 0);
  const char* s;
  size_t n;
  ASSERT_EQ(ffk_any_as_str(&out.v, &s, &n), 0);
  EXPECT_EQ(std::string(s, n), "{\n  \"a\": [\n    1,\n    2.5,\n    null,\n    true\n  ]\n}");
  OwnedAny empty, pretty;
  ASSERT_EQ(Call("ffi.json.Parse", {S("{\"a\": [], \"b\": [{}, \"[]\"]}")}, &empty), 0) << FetchError();
  ASSERT_EQ(Call("ffi.json.Stringify", {empty.v, I(2)}, &pretty), 0);
  ASSERT_EQ(ffk_any_as_str(&pretty.v, &s, &n), 0);
  EXPECT_EQ(std::string(s, n), "{\n  \"a\": [\n  ],\n  \"b\": [\n    {\n    },\n    \"[]\"\n  ]\n}")
      << "empty containers as tvm_ffi writes them; a str is left alone";
  EXPECT_EQ(Call("ffi.json.Parse", {S("[1,")}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"not JSON", "byte"}));
  OwnedAny sh;
  ASSERT_EQ(Call("ffi.Shape", {I(2)}, &sh), 0);
  EXPECT_EQ(Call("ffi.json.Stringify", {sh.v, ffk_any_none()}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"Shape"}));
  EXPECT_EQ(Call("ffi.json.Stringify", {v.v, I(-1)}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"-1"}));
}

TEST_F(Globals, ValuesAndRepr) {
  OwnedAny out;
  EXPECT_EQ(CallRepr("ffi.Shape", {I(2), I(3)}), "Shape(2, 3)");
  EXPECT_EQ(Call("ffi.Shape", {I(2), ffk_any_float(1.5)}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"ffi.Shape", "#1", "float"}));
  EXPECT_EQ(CallRepr("ffi.String", {S("abc")}), "\"abc\"");
  EXPECT_EQ(Call("ffi.String", {I(1)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"ffi.String"}));
  EXPECT_EQ(CallRepr("ffi.ReprPrint", {S("s")}), "\"\\\"s\\\"\"");
  EXPECT_EQ(CallRepr("ffi.GetInvalidObject", {}), "<MISSING>");
  EXPECT_EQ(CallRepr("ffi.GetKwargsObject", {}), "<KWARGS>");
}

TEST_F(Globals, RegistryFunctions) {
  OwnedAny names, count, first, out;
  ASSERT_EQ(Call("ffi.FunctionListGlobalNamesFunctor", {}, &names), 0) << FetchError();
  ffk_function* f = reinterpret_cast<ffk_function*>(names.v.v_obj);
  ffk_any arg = I(-1);
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &count.v), 0);
  EXPECT_GT(count.v.v_int, 100);
  arg = I(0);
  ASSERT_EQ(ffk_function_call(f, &arg, 1, &first.v), 0);
  EXPECT_EQ(Repr(first.v), "\"ffi.Array\"") << "names come in name order";
  arg = I(count.v.v_int);
  EXPECT_EQ(ffk_function_call(f, &arg, 1, &out.v), -1);
  EXPECT_TRUE(PendingError("IndexError", {std::to_string(count.v.v_int)}));

  OwnedAny meta;
  ASSERT_EQ(Call("ffi.GetGlobalFuncMetadata", {S("ffi.ArraySize")}, &meta), 0);
  EXPECT_NE(Repr(meta.v).find("ffi.Array"), std::string::npos);
  EXPECT_EQ(Call("ffi.GetGlobalFuncMetadata", {S("no.such")}, &out), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"no.such"}));
  EXPECT_EQ(CallRepr("ffi.FunctionRemoveGlobal", {S("testing.echo")}), "True");
  EXPECT_EQ(CallRepr("ffi.FunctionRemoveGlobal", {S("testing.echo")}), "False");

  OwnedAny keys;
  ASSERT_EQ(Call("ffi.GetRegisteredTypeKeys", {}, &keys), 0);
  std::string r = Repr(keys.v);
  EXPECT_NE(r.find("\"ffikit.Array\""), std::string::npos) << r;
  EXPECT_NE(r.find("\"testing.TestIntPair\""), std::string::npos);
}

TEST_F(Globals, FunctionFromExternCWrapsASafeCall) {
  ffk_safe_call fn = ffk_testing_add_one;
  void* p;
  std::memcpy(&p, &fn, sizeof p);
  OwnedAny f, out;
  ASSERT_EQ(Call("ffi.FunctionFromExternC", {ffk_any_none(), ffk_any_ptr(p), ffk_any_none()}, &f), 0)
      << FetchError();
  ffk_any arg = I(41);
  ASSERT_EQ(ffk_function_call(reinterpret_cast<ffk_function*>(f.v.v_obj), &arg, 1, &out.v), 0);
  EXPECT_EQ(out.v.v_int, 42);
  EXPECT_EQ(Call("ffi.FunctionFromExternC", {ffk_any_none(), ffk_any_none(), ffk_any_none()}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"NULL"}));
}

TEST_F(Globals, MakeObjectFromPackedArgs) {
  OwnedAny obj, out;
  ASSERT_EQ(Call("ffi.MakeObjectFromPackedArgs", {S("testing.TestIntPair"), S("a"), I(1), S("b"), I(2)}, &obj), 0)
      << FetchError();
  EXPECT_EQ(CallRepr("testing.TestIntPairSum", {obj.v}), "3");
  EXPECT_EQ(Call("ffi.MakeObjectFromPackedArgs", {S("no.Such")}, &out), -1);
  EXPECT_TRUE(PendingError("ValueError", {"no.Such"}));
  EXPECT_EQ(Call("ffi.MakeObjectFromPackedArgs", {S("testing.TestIntPair"), S("a")}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"pairs", "2 arguments"}));
  EXPECT_EQ(Call("ffi.MakeObjectFromPackedArgs", {S("testing.TestIntPair"), I(3), I(1)}, &out), -1);
  EXPECT_TRUE(PendingError("TypeError", {"field name", "int"}));
}

TEST_F(Globals, ModuleFunctionsOnTheSystemLibrary) {
  OwnedAny m, out;
  ASSERT_EQ(Call("ffi.SystemLib", {}, &m), 0) << FetchError();
  EXPECT_EQ(CallRepr("ffi.ModuleGetKind", {m.v}), "\"library\"");
  EXPECT_EQ(CallRepr("ffi.ModuleGetPropertyMask", {m.v}), "2");
  EXPECT_EQ(CallRepr("ffi.ModuleGetWriteFormats", {m.v}), "()");
  EXPECT_EQ(CallRepr("ffi.ModuleGetFunction", {m.v, S("no_such_fn"), B(false)}), "None");
  EXPECT_EQ(CallRepr("ffi.ModuleImplementsFunction", {m.v, S("no_such_fn"), B(true)}), "False");
  EXPECT_EQ(CallRepr("ffi.ModuleGetFunctionDoc", {m.v, S("no_such_fn"), B(false)}), "None");
  EXPECT_EQ(CallRepr("ffi.ModuleInspectSource", {m.v, S("")}), "\"\"");
  EXPECT_EQ(Call("ffi.ModuleWriteToFile", {m.v, S("/tmp/x.so"), S("so")}, &out), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"<system_lib>", "cannot be written"}));
  EXPECT_EQ(Call("ffi.ModuleImportModule", {m.v, m.v}, &out), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"no imports"}));
  EXPECT_EQ(Call("ffi.ModuleLoadFromFile", {S("/no/such/lib.so")}, &out), -1);
  EXPECT_TRUE(PendingError("RuntimeError", {"/no/such/lib.so"}));
  uint32_t before = ffk_object_use_count(m.v.v_obj);
  ASSERT_EQ(Call("ffi.ModuleGlobalsAdd", {m.v}, &out), 0);
  EXPECT_EQ(ffk_object_use_count(m.v.v_obj), before + 1);
  ASSERT_EQ(Call("ffi.ModuleGlobalsRemove", {m.v}, &out), 0);
  ASSERT_EQ(Call("ffi.ModuleGlobalsRemove", {m.v}, &out), 0) << "removing a module not kept does nothing";
  EXPECT_EQ(ffk_object_use_count(m.v.v_obj), before);
}

TEST_F(Globals, ContainerFindFirstNonCpuDevice) {
  int64_t shape[1] = {2};
  ffk_tensor* t = ffk_tensor_empty(1, shape, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  ASSERT_NE(t, nullptr) << FetchError();
  OwnedAny tensor(ffk_any_object_steal(reinterpret_cast<ffk_object*>(t))), arr, out;
  ASSERT_EQ(Call("ffi.Array", {tensor.v, I(1)}, &arr), 0);
  ASSERT_EQ(Call("ffi.ContainerFindFirstNonCPUDevice", {arr.v}, &out), 0) << FetchError();
  EXPECT_EQ(out.v.type_index, FFK_TYPE_DEVICE);
  EXPECT_EQ(out.v.v_device.device_type, kDLCPU);
  DLTensor view = {};
  view.device = DLDevice{kDLCUDA, 1};
  ffk_any v = ffk_any_none();
  v.type_index = FFK_TYPE_DLTENSOR_PTR;
  v.v_ptr = &view;
  ASSERT_EQ(Call("ffi.ContainerFindFirstNonCPUDevice", {v}, &out), 0) << FetchError();
  EXPECT_EQ(out.v.v_device.device_type, kDLCUDA);
  EXPECT_EQ(out.v.v_device.device_id, 1);
}

}  // namespace
