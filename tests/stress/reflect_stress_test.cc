// Stress scenario of reflected objects (the harness and its rules: stress_harness.h):
//   8. eight threads share one reflected object: some write its int, str, Array and Any
//      fields, some read them through field handles and by name, some take and release
//      references and shallow copies. Readers must only ever see whole values a writer
//      stored (reflect.h "Threads"): never a torn int, a freed string or array.
// Meant for --config=tsan and --config=asan as well as plain runs.
#include <ffikit/array.h>
#include <ffikit/ffikit.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

struct Shared {
  ffk_object header;
  int64_t i;
  ffk_object* s;
  ffk_object* arr;
  ffk_any any;
};

int32_t SharedType() {
  static const ffk_field_def fields[] = {
      {"i", offsetof(Shared, i), "int", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT, ffk_any_int(0), nullptr},
      {"s", offsetof(Shared, s), "str", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
       ffk_any_raw_str("value-initial"), nullptr},
      {"arr", offsetof(Shared, arr), "Array<int>", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
      {"any", offsetof(Shared, any), "Any", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT, ffk_any_int(0), nullptr},
  };
  ffk_type_def def = {};
  def.key = "test.stress.Shared";
  def.parent_index = FFK_TYPE_OBJECT;
  def.instance_size = sizeof(Shared);
  def.fields = fields;
  def.nfields = 4;
  return ffk_type_define(&def);
}

// An Array of n copies of n: a reader can tell a whole one from a torn or freed one.
ffk_any SelfSizedArray(int64_t n) {
  std::vector<ffk_any> items(static_cast<size_t>(n), ffk_any_int(n));
  return ffk_any_object_steal(Obj(ffk_array_new(items.data(), n)));
}

// A str value made in a worker thread (no gtest assertions there); None if it failed.
ffk_any MakeStr(const std::string& s) {
  ffk_any v = ffk_any_none();
  if (ffk_any_str(s.data(), s.size(), &v) != 0) ffk_error_clear();
  return v;
}

bool IsSelfSizedArray(const ffk_any& v) {
  if (v.type_index != FFK_TYPE_ARRAY) return false;
  const ffk_array* a = reinterpret_cast<const ffk_array*>(v.v_obj);
  int64_t n = ffk_array_size(a);
  for (int64_t k = 0; k < n; ++k)
    if (!IsInt(ffk_array_items_borrow(a)[k], n)) return false;
  return true;
}

TEST_F(Stress, ReflectedFieldsReadAndWrittenByEightThreads) {
  Scenario sc(8, "reflected object fields, always 8 threads");
  int32_t t = SharedType();
  ASSERT_GT(t, 0) << FetchError();
  const ffk_field_info *fi, *fs, *fa, *fany;
  ASSERT_EQ(ffk_type_find_field(t, "i", &fi), 1);
  ASSERT_EQ(ffk_type_find_field(t, "s", &fs), 1);
  ASSERT_EQ(ffk_type_find_field(t, "arr", &fa), 1);
  ASSERT_EQ(ffk_type_find_field(t, "any", &fany), 1);
  ffk::test::OwnedAny arr0(SelfSizedArray(3));
  const char* names[] = {"arr"};
  ffk_object* obj = nullptr;
  ASSERT_EQ(ffk_object_create(t, &arr0.v, 0, names, 1, &obj), 0) << FetchError();

  const int64_t ops = Cfg().ops;
  const int threads = 8;
  sc.Run(threads, [&](int th, Rng& rng, Ticker& tick) {
    const int role = th % 4;  // 0: writer, 1 and 2: readers, 3: references and copies
    for (int64_t op = 0; op < ops; ++op, tick()) {
      if (role == 0) {
        int64_t r = rng.Below(4);
        if (r == 0) {
          ffk_any v = ffk_any_int(3 * rng.Below(1000000));
          STRESS_CHECK(sc, ffk_field_set(fi, obj, &v) == 0, "set i: %s", FetchError().c_str());
        } else if (r == 1) {
          ffk::test::OwnedAny v(MakeStr(Fmt("value-%lld-a string longer than seven", (long long)op)));
          STRESS_CHECK(sc, ffk_field_set(fs, obj, &v.v) == 0, "set s: %s", FetchError().c_str());
        } else if (r == 2) {
          ffk::test::OwnedAny v(SelfSizedArray(1 + rng.Below(6)));
          STRESS_CHECK(sc, ffk_object_set_field(obj, "arr", &v.v) == 0, "set arr: %s", FetchError().c_str());
        } else {
          ffk::test::OwnedAny v(rng.Percent(50) ? SelfSizedArray(1 + rng.Below(4))
                                                : MakeStr(Fmt("value-any-%lld-long enough", (long long)op)));
          STRESS_CHECK(sc, ffk_field_set(fany, obj, &v.v) == 0, "set any: %s", FetchError().c_str());
        }
      } else if (role == 1 || role == 2) {
        ffk::test::OwnedAny i, s, a, any;
        STRESS_CHECK(sc, ffk_field_get(fi, obj, &i.v) == 0, "get i: %s", FetchError().c_str());
        STRESS_CHECK(sc, i.v.type_index == FFK_TYPE_INT && i.v.v_int % 3 == 0, "i = %s", Show(i.v).c_str());
        STRESS_CHECK(sc, ffk_field_get(fs, obj, &s.v) == 0, "get s: %s", FetchError().c_str());
        STRESS_CHECK(sc, StrStartsWith(s.v, "value-"), "s = %s", Show(s.v).c_str());
        STRESS_CHECK(sc, ffk_object_get_field(obj, "arr", &a.v) == 0, "get arr: %s", FetchError().c_str());
        STRESS_CHECK(sc, IsSelfSizedArray(a.v), "arr = %s", Show(a.v).c_str());
        STRESS_CHECK(sc, ffk_field_get(fany, obj, &any.v) == 0, "get any: %s", FetchError().c_str());
        STRESS_CHECK(sc, IsInt(any.v, 0) || IsSelfSizedArray(any.v) || StrStartsWith(any.v, "value-any-"),
                     "any = %s", Show(any.v).c_str());
      } else {
        ffk_object_retain(obj);
        if (rng.Percent(20)) {
          ffk_object* copy = ffk_object_shallow_copy(obj);
          STRESS_CHECK(sc, copy != nullptr, "shallow copy: %s", FetchError().c_str());
          if (copy != nullptr) {
            ffk::test::OwnedAny a;
            STRESS_CHECK(sc, ffk_field_get(fa, copy, &a.v) == 0 && IsSelfSizedArray(a.v), "copy arr = %s",
                         Show(a.v).c_str());
          }
          ffk_object_release(copy);
        }
        ffk_object_release(obj);
      }
    }
  });
  sc.Finish();
  EXPECT_EQ(ffk_object_use_count(obj), 1u);
  ffk_object_release(obj);
}

}  // namespace
}  // namespace ffk::stress
