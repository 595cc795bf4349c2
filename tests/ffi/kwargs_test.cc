// Keyword calls of typed Functions (ffk_function_call_kw) and the parameter-name
// accessors: binding by name, CPython's error texts, conversions through keywords,
// allocation failures, and concurrent keyword calls.
#include <ffikit/ffikit.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Kwargs : public ffk::test::Test {};
using ffk::test::FetchError;
using ffk::test::OwnedAny;

ffk_object* Obj(ffk_function* f) { return reinterpret_cast<ffk_object*>(f); }

// A Function handle released on scope exit.
struct OwnedFunction {
  ffk_function* f;
  explicit OwnedFunction(ffk_function* fn) : f(fn) {}
  OwnedFunction(const OwnedFunction&) = delete;
  OwnedFunction& operator=(const OwnedFunction&) = delete;
  ~OwnedFunction() {
    if (f != nullptr) ffk_object_release(Obj(f));
  }
};

// Returns the Array of its arguments as it received them (after conversion), so a test
// sees which value landed in which parameter.
int Collect(void*, const ffk_any* args, int32_t nargs, ffk_any* result) {
  ffk_array* a = ffk_array_new(args, nargs);
  if (a == nullptr) return -1;
  *result = ffk_any_object_steal(reinterpret_cast<ffk_object*>(a));
  return 0;
}

// "(a, b, c)" of the Array a call of Collect returned, with repr of each element.
std::string Seen(const ffk_any& r) { return ffk::test::Repr(r); }

// Calls `f` with positional `pos` and keywords `names` = `kw`; returns the repr of the
// result, or "Kind: message" of the error.
std::string CallKw(ffk_function* f, std::vector<ffk_any> pos, std::vector<const char*> names,
                   std::vector<ffk_any> kw) {
  std::vector<ffk_any> args = pos;
  args.insert(args.end(), kw.begin(), kw.end());
  OwnedAny r;
  if (ffk_function_call_kw(f, args.data(), static_cast<int32_t>(pos.size()), names.data(),
                           static_cast<int32_t>(names.size()), &r.v) != 0) {
    EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
    return FetchError();
  }
  return Seen(r.v);
}

ffk_any I(int64_t v) { return ffk_any_int(v); }
ffk_any F(double v) { return ffk_any_float(v); }

ffk_function* Scale() {
  return ffk_function_new_typed("demo.scale", "(xs: Array<float>, k: float) -> Array", Collect, nullptr, nullptr);
}

TEST_F(Kwargs, ParameterNamesComeFromTheSignature) {
  OwnedFunction f(ffk_function_new_typed("demo.mixed", "(x: int, Array<float>, k: Optional<str>) -> float", Collect,
                                         nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(ffk_function_num_params(f.f), 3);
  const char* name = "unset";
  EXPECT_EQ(ffk_function_param_name(f.f, 0, &name), 1);
  EXPECT_STREQ(name, "x");
  EXPECT_EQ(ffk_function_param_name(f.f, 1, &name), 0);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(ffk_function_param_name(f.f, 2, &name), 1);
  EXPECT_STREQ(name, "k");
  EXPECT_STREQ(ffk_function_param_type(f.f, 0), "int");
  EXPECT_STREQ(ffk_function_param_type(f.f, 1), "Array<float>");
  EXPECT_STREQ(ffk_function_param_type(f.f, 2), "Optional<str>");
  EXPECT_EQ(ffk_function_param_type(f.f, 3), nullptr);
  EXPECT_EQ(ffk_function_param_type(f.f, -1), nullptr);
  EXPECT_STREQ(ffk_function_return_type(f.f), "float");

  EXPECT_EQ(ffk_function_param_name(f.f, 3, &name), -1);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(FetchError(),
            "IndexError: parameter index 3 out of range for `demo.mixed(x: int, 1: Array<float>, k: Optional<str>) -> "
            "float`, which takes 3");
  EXPECT_EQ(ffk_function_param_name(f.f, -1, &name), -1);
  EXPECT_NE(FetchError().find("parameter index -1 out of range"), std::string::npos);
  EXPECT_EQ(ffk_function_param_name(f.f, 0, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_param_name: the out is NULL");
  EXPECT_EQ(ffk_function_param_name(nullptr, 0, &name), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_param_name: the function is NULL");
}

TEST_F(Kwargs, UntypedAndEmptySignaturesHaveNoNames) {
  OwnedFunction u(ffk_function_new("demo.u", Collect, nullptr, nullptr));
  OwnedFunction e(ffk_function_new_typed("demo.e", "()", Collect, nullptr, nullptr));
  ASSERT_NE(u.f, nullptr);
  ASSERT_NE(e.f, nullptr);
  EXPECT_EQ(ffk_function_num_params(u.f), -1);
  EXPECT_EQ(ffk_function_num_params(e.f), 0);
  EXPECT_EQ(ffk_function_num_params(nullptr), -1);
  EXPECT_EQ(ffk_function_param_type(u.f, 0), nullptr);
  EXPECT_EQ(ffk_function_return_type(u.f), nullptr);
  EXPECT_STREQ(ffk_function_return_type(e.f), "Any");
  const char* name = "unset";
  EXPECT_EQ(ffk_function_param_name(u.f, 0, &name), -1);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(FetchError(), "TypeError: Function `demo.u` is untyped: its parameters have no names");
}

TEST_F(Kwargs, KeywordsBindByNameInAnyOrder) {
  OwnedFunction f(ffk_function_new_typed("demo.f", "(a: int, b: int, c: int) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(CallKw(f.f, {I(1)}, {"c", "b"}, {I(3), I(2)}), "(1, 2, 3)");
  EXPECT_EQ(CallKw(f.f, {}, {"b", "a", "c"}, {I(2), I(1), I(3)}), "(1, 2, 3)");
  EXPECT_EQ(CallKw(f.f, {I(1), I(2)}, {"c"}, {I(3)}), "(1, 2, 3)");
  // No keywords: exactly the positional call, messages included.
  EXPECT_EQ(CallKw(f.f, {I(1), I(2), I(3)}, {}, {}), "(1, 2, 3)");
  EXPECT_EQ(CallKw(f.f, {I(1)}, {}, {}),
            "TypeError: Mismatched number of arguments when calling: `demo.f(a: int, b: int, c: int) -> Array`. "
            "Expected 3 but got 1");
}

TEST_F(Kwargs, KeywordValuesAreConvertedLikePositionalOnes) {
  OwnedFunction f(Scale());
  ASSERT_NE(f.f, nullptr);
  ffk_list* l = ffk_list_new();
  ASSERT_NE(l, nullptr);
  OwnedAny list(ffk_any_object_steal(reinterpret_cast<ffk_object*>(l)));
  ffk_any one = I(1), two = I(2);
  ASSERT_EQ(ffk_list_append(l, &one), 0);
  ASSERT_EQ(ffk_list_append(l, &two), 0);
  // A List of ints becomes an Array<float>; an int becomes a float.
  EXPECT_EQ(CallKw(f.f, {}, {"k", "xs"}, {I(3), list.v}), "((1.0, 2.0), 3.0)");
  EXPECT_EQ(CallKw(f.f, {list.v}, {"k"}, {F(0.5)}), "((1.0, 2.0), 0.5)");
  // A mismatch through a keyword reads as the positional one: it names the position.
  OwnedAny s;
  ASSERT_EQ(ffk_any_cstr("x", &s.v), 0);
  EXPECT_EQ(CallKw(f.f, {list.v}, {"k"}, {s.v}),
            "TypeError: Mismatched type on argument #1 when calling: `demo.scale(xs: Array<float>, k: float) -> "
            "Array`. Expected `float` but got `str`");
  // The caller's values are untouched, and nothing leaked (the fixture counts objects).
  EXPECT_EQ(ffk::test::Repr(list.v), "[1, 2]");
}

TEST_F(Kwargs, ErrorsUseCPythonsTexts) {
  OwnedFunction f(Scale());
  ASSERT_NE(f.f, nullptr);
  OwnedAny empty(ffk_any_object_steal(reinterpret_cast<ffk_object*>(ffk_array_new(nullptr, 0))));
  ffk_any xs = empty.v;
  EXPECT_EQ(CallKw(f.f, {xs}, {"q"}, {I(1)}), "TypeError: demo.scale() got an unexpected keyword argument 'q'");
  EXPECT_EQ(CallKw(f.f, {xs}, {"xs"}, {xs}), "TypeError: demo.scale() got multiple values for argument 'xs'");
  EXPECT_EQ(CallKw(f.f, {}, {"k", "k"}, {I(1), I(2)}), "TypeError: demo.scale() got multiple values for argument 'k'");
  EXPECT_EQ(CallKw(f.f, {}, {"xs"}, {xs}), "TypeError: demo.scale() missing 1 required positional argument: 'k'");
  EXPECT_EQ(CallKw(f.f, {xs, I(1), I(2)}, {"k"}, {I(1)}),
            "TypeError: demo.scale() got multiple values for argument 'k'");
  EXPECT_EQ(CallKw(f.f, {xs, I(1), I(2)}, {"q"}, {I(1)}),
            "TypeError: demo.scale() got an unexpected keyword argument 'q'");

  OwnedFunction one(ffk_function_new_typed("demo.one", "(x: int)", Collect, nullptr, nullptr));
  ASSERT_NE(one.f, nullptr);
  // Keywords are checked before the positional count, as CPython does.
  EXPECT_EQ(CallKw(one.f, {I(1), I(2)}, {"x"}, {I(3)}), "TypeError: demo.one() got multiple values for argument 'x'");
  OwnedFunction two(ffk_function_new_typed("demo.two", "(x: int, y: int)", Collect, nullptr, nullptr));
  ASSERT_NE(two.f, nullptr);
  EXPECT_EQ(CallKw(two.f, {I(1), I(2), I(3)}, {"y"}, {I(3)}),
            "TypeError: demo.two() got multiple values for argument 'y'");
  OwnedFunction three(
      ffk_function_new_typed("demo.three", "(a: int, b: int, c: int, d: int)", Collect, nullptr, nullptr));
  ASSERT_NE(three.f, nullptr);
  EXPECT_EQ(CallKw(three.f, {}, {"c"}, {I(1)}),
            "TypeError: demo.three() missing 3 required positional arguments: 'a', 'b', and 'd'");
  EXPECT_EQ(CallKw(three.f, {}, {"c", "a"}, {I(1), I(1)}),
            "TypeError: demo.three() missing 2 required positional arguments: 'b' and 'd'");
}

TEST_F(Kwargs, UntypedAndUnnamedFunctionsTakeNoKeywords) {
  OwnedFunction u(ffk_function_new("demo.untyped", Collect, nullptr, nullptr));
  OwnedFunction n(ffk_function_new_typed("demo.unnamed", "(int, float) -> Array", Collect, nullptr, nullptr));
  OwnedFunction e(ffk_function_new_typed("demo.empty", "() -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(u.f, nullptr);
  ASSERT_NE(n.f, nullptr);
  ASSERT_NE(e.f, nullptr);
  EXPECT_EQ(CallKw(u.f, {I(1)}, {"x"}, {I(2)}), "TypeError: demo.untyped() takes no keyword arguments");
  EXPECT_EQ(CallKw(n.f, {I(1)}, {"x"}, {I(2)}), "TypeError: demo.unnamed() takes no keyword arguments");
  EXPECT_EQ(CallKw(e.f, {}, {"x"}, {I(2)}), "TypeError: demo.empty() takes no keyword arguments");
  // Without keywords they are called as always.
  EXPECT_EQ(CallKw(u.f, {I(1), I(2)}, {}, {}), "(1, 2)");
  EXPECT_EQ(CallKw(n.f, {I(1), I(2)}, {}, {}), "(1, 2.0)");
}

TEST_F(Kwargs, UnnamedParametersArePositionalOnly) {
  OwnedFunction f(ffk_function_new_typed("demo.mixed", "(int, k: float) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(CallKw(f.f, {I(1)}, {"k"}, {I(2)}), "(1, 2.0)");
  // The unnamed parameter's position is not a keyword.
  EXPECT_EQ(CallKw(f.f, {}, {"0", "k"}, {I(1), I(2)}),
            "TypeError: demo.mixed() got an unexpected keyword argument '0'");
  // A missing unnamed parameter is named by its position, as the signature text shows it.
  EXPECT_EQ(CallKw(f.f, {}, {"k"}, {I(2)}), "TypeError: demo.mixed() missing 1 required positional argument: '0'");
}

TEST_F(Kwargs, ExtraPositionalsMakeEveryKeywordARepeatOrUnknown) {
  // With more positionals than parameters every parameter is filled, so each keyword is
  // unknown or a repeat (CPython reports those before the count, as here).
  OwnedFunction two(ffk_function_new_typed("demo.two", "(a: int, b: int) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(two.f, nullptr);
  EXPECT_EQ(CallKw(two.f, {I(1), I(2), I(3)}, {"q"}, {I(4)}),
            "TypeError: demo.two() got an unexpected keyword argument 'q'");
  EXPECT_EQ(CallKw(two.f, {I(1), I(2), I(3)}, {"b"}, {I(4)}),
            "TypeError: demo.two() got multiple values for argument 'b'");
  OwnedFunction three(ffk_function_new_typed("demo.three", "(int, int, c: int) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(three.f, nullptr);
  EXPECT_EQ(CallKw(three.f, {I(1), I(2), I(3), I(4)}, {"c"}, {I(5)}),
            "TypeError: demo.three() got multiple values for argument 'c'");
}

TEST_F(Kwargs, BadArgumentsAreValueErrors) {
  OwnedFunction f(Scale());
  ASSERT_NE(f.f, nullptr);
  ffk_any args[2] = {I(1), I(2)};
  const char* names[1] = {"k"};
  const char* null_name[1] = {nullptr};
  OwnedAny r;
  EXPECT_EQ(ffk_function_call_kw(nullptr, args, 1, names, 1, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call_kw: the function is NULL");
  EXPECT_EQ(ffk_function_call_kw(f.f, args, 1, nullptr, 1, &r.v), -1);
  EXPECT_NE(FetchError().find("ValueError: ffk_function_call_kw: 1 positional and 1 keyword arguments"),
            std::string::npos);
  EXPECT_EQ(ffk_function_call_kw(f.f, nullptr, 1, names, 1, &r.v), -1);
  EXPECT_NE(FetchError().find("ValueError"), std::string::npos);
  EXPECT_EQ(ffk_function_call_kw(f.f, args, -1, names, 1, &r.v), -1);
  EXPECT_NE(FetchError().find("ValueError"), std::string::npos);
  EXPECT_EQ(ffk_function_call_kw(f.f, args, 0, names, -1, &r.v), -1);
  EXPECT_NE(FetchError().find("ValueError"), std::string::npos);
  EXPECT_EQ(ffk_function_call_kw(f.f, args, 1, null_name, 1, &r.v), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_call_kw: keyword name #0 is NULL for `demo.scale`");
  EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
}

TEST_F(Kwargs, AStaleErrorIsDroppedBeforeTheCall) {
  OwnedFunction f(ffk_function_new_typed("demo.k", "(k: int) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  ffk_error_set(FFK_ERR_RUNTIME, "left over");
  EXPECT_EQ(CallKw(f.f, {}, {"k"}, {I(1)}), "(1,)");
  ffk_error_set(FFK_ERR_RUNTIME, "left over");
  EXPECT_EQ(CallKw(f.f, {}, {"q"}, {I(1)}), "TypeError: demo.k() got an unexpected keyword argument 'q'");
}

int Raise(void*, const ffk_any*, int32_t, ffk_any*) { return ffk_error_set(FFK_ERR_VALUE, "callee says no"); }

TEST_F(Kwargs, CalleeErrorsCarryTheCallFrame) {
  OwnedFunction f(ffk_function_new_typed("demo.raise", "(k: int)", Raise, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  ffk_any k = I(1);
  const char* names[1] = {"k"};
  OwnedAny r;
  ASSERT_EQ(ffk_function_call_kw(f.f, &k, 0, names, 1, &r.v), -1);
  ffk_error* err = ffk_error_fetch();
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(ffk_error_kind(err), "ValueError");
  EXPECT_STREQ(ffk_error_message(err), "callee says no");
  EXPECT_NE(std::string(ffk_error_backtrace(err)).find("in call to Function `demo.raise`"), std::string::npos);
  ffk_object_release(reinterpret_cast<ffk_object*>(err));
}

// A signature longer than the stack buffers (8), so binding and conversion allocate.
const char* kWide = "(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int, j: float) -> Array";

TEST_F(Kwargs, WideSignaturesBindAndConvert) {
  OwnedFunction f(ffk_function_new_typed("demo.wide", kWide, Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(CallKw(f.f, {I(0), I(1), I(2), I(3), I(4), I(5), I(6), I(7)}, {"j", "i"}, {I(9), I(8)}),
            "(0, 1, 2, 3, 4, 5, 6, 7, 8, 9.0)");
  EXPECT_EQ(CallKw(f.f, {I(0)}, {"j"}, {I(9)}),
            "TypeError: demo.wide() missing 8 required positional arguments: 'b', 'c', 'd', 'e', 'f', 'g', 'h', and "
            "'i'");
}

TEST_F(Kwargs, AllocationFailuresAreMemoryErrors) {
  OwnedFunction f(ffk_function_new_typed("demo.wide", kWide, Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  ffk_any args[10] = {I(0), I(1), I(2), I(3), I(4), I(5), I(6), I(7), I(9), I(8)};
  const char* names[2] = {"j", "i"};
  int n = ffk::test::SweepAllocationFailures([&] {
    OwnedAny r;
    if (ffk_function_call_kw(f.f, args, 8, names, 2, &r.v) != 0) {
      EXPECT_EQ(r.v.type_index, FFK_TYPE_NONE);
      return false;
    }
    // Checked without allocating: the hook may still be armed for a later allocation.
    const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(r.v.v_obj));
    EXPECT_EQ(items[8].v_int, 8);
    EXPECT_EQ(items[9].type_index, FFK_TYPE_FLOAT);
    EXPECT_EQ(items[9].v_float, 9.0);
    return true;
  });
  EXPECT_GE(n, 3);  // the binding, the conversion copy, the result Array
  // The "missing" message builds a list: its allocation can fail too.
  ffk::test::SweepAllocationFailures([&] {
    OwnedAny r;
    EXPECT_EQ(ffk_function_call_kw(f.f, args, 1, names, 1, &r.v), -1);
    if (ffk_error_matches(FFK_ERR_MEMORY)) return false;
    EXPECT_NE(FetchError().find("missing 8 required positional arguments"), std::string::npos);
    return true;
  });
}

TEST_F(Kwargs, ConcurrentKeywordCallsAgree) {
  OwnedFunction f(ffk_function_new_typed("demo.f", "(a: int, b: int, c: int) -> Array", Collect, nullptr, nullptr));
  ASSERT_NE(f.f, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        ffk_any args[3] = {I(t), I(i), I(-1)};
        const char* names[2] = {"c", "b"};
        ffk_any r;
        if (ffk_function_call_kw(f.f, args, 1, names, 2, &r) != 0) {
          ffk_error_clear();
          continue;
        }
        const ffk_any* items = ffk_array_items_borrow(reinterpret_cast<ffk_array*>(r.v_obj));
        ok[t] += items[0].v_int == t && items[1].v_int == -1 && items[2].v_int == i;
        ffk_any_release(&r);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 500);
}

}  // namespace
