// Stress scenario of type attributes (the harness and its rules: stress_harness.h):
//   9. one thread keeps setting attributes of a base type and its subtype (ints, strs,
//      None on the subtype to hide the base's) and replacing the subtype's __s_equal__
//      hook, while the others look the attributes up through the subtype and walk
//      structural equality over objects of the hooked type. Readers take no lock
//      (reflect.h "Type attributes"): they must only ever see a whole value some writer
//      set (never a torn table or a freed value), and every hook the walks call answers.
// Meant for --config=tsan and --config=asan as well as plain runs.
#include <ffikit/ffikit.h>

#include <cstdint>
#include <string>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

struct Hooked {
  ffk_object header;
  int64_t v;
};

int32_t HookedType(int32_t parent) {
  static const ffk_field_def fields[] = {{"v", offsetof(Hooked, v), "int", 0, ffk_any_none(), nullptr}};
  ffk_type_def def = {};
  def.key = "test.stress.AttrHooked";
  def.parent_index = parent;
  def.instance_size = sizeof(Hooked);
  def.fields = fields;
  def.nfields = 1;
  return ffk_type_define(&def);
}

// Every hook version compares `v` modulo 10 (so the answer never depends on which one a walk sees).
int ModTenEqual(void*, const ffk_any* args, int32_t, ffk_any* result) {
  *result = ffk_any_bool(reinterpret_cast<const Hooked*>(args[0].v_obj)->v % 10 ==
                         reinterpret_cast<const Hooked*>(args[1].v_obj)->v % 10);
  return 0;
}

ffk_any NewHook() {
  ffk_function* f = ffk_function_new("test.stress.mod_ten_equal", ModTenEqual, nullptr, nullptr);
  return f != nullptr ? ffk_any_object_steal(reinterpret_cast<ffk_object*>(f)) : ffk_any_none();
}

TEST_F(Stress, TypeAttributesSetWhileEightThreadsReadThem) {
  Scenario sc(9, "type attributes set while read, always 8 threads");
  int32_t base = ffk_type_register("test.stress.AttrBase", FFK_TYPE_OBJECT);
  ASSERT_GT(base, 0) << FetchError();
  int32_t sub = HookedType(base);
  ASSERT_GT(sub, 0) << FetchError();
  ffk::test::OwnedAny hook(NewHook());
  ASSERT_EQ(ffk_type_set_attr(sub, FFK_ATTR_S_EQUAL, &hook.v), 0) << FetchError();
  ffk_any v7 = ffk_any_int(7), v17 = ffk_any_int(17);
  ffk_object *a = nullptr, *b = nullptr;
  ASSERT_EQ(ffk_object_create(sub, &v7, 1, nullptr, 0, &a), 0) << FetchError();
  ASSERT_EQ(ffk_object_create(sub, &v17, 1, nullptr, 0, &b), 0) << FetchError();
  ffk::test::OwnedAny oa(ffk_any_object_steal(a)), ob(ffk_any_object_steal(b));

  // Each set pins its value until exit: bound the writer's sets in the large configuration.
  const int64_t ops = Cfg().ops, sets = ops < 20000 ? ops : 20000;
  const char* names[] = {"lib.a", "lib.b", "lib.c", "lib.d"};
  sc.Run(8, [&](int th, Rng& rng, Ticker& tick) {
    for (int64_t op = 0; op < ops; ++op, tick()) {
      if (th == 0) {
        if (op >= sets) continue;
        const char* name = names[rng.Below(4)];
        int64_t r = rng.Below(8);
        if (r == 0) {
          ffk::test::OwnedAny h(NewHook());
          STRESS_CHECK(sc, ffk_type_set_attr(sub, FFK_ATTR_S_EQUAL, &h.v) == 0, "set hook: %s", FetchError().c_str());
        } else if (r == 1) {
          ffk_any none = ffk_any_none();  // hides the base's value from the subtype
          STRESS_CHECK(sc, ffk_type_set_attr(sub, name, &none) == 0, "hide: %s", FetchError().c_str());
        } else if (r < 5) {
          ffk_any v = ffk_any_int(3 * (int64_t)rng.Below(1000000));
          STRESS_CHECK(sc, ffk_type_set_attr(rng.Percent(50) ? base : sub, name, &v) == 0, "set int: %s",
                       FetchError().c_str());
        } else {
          ffk::test::OwnedAny v(OwnedStr(Fmt("value-%lld-a string longer than seven", (long long)op)));
          STRESS_CHECK(sc, ffk_type_set_attr(rng.Percent(50) ? base : sub, name, &v.v) == 0, "set str: %s",
                       FetchError().c_str());
        }
      } else if (th % 2 == 1) {
        ffk::test::OwnedAny got;
        int rc = ffk_type_get_attr(sub, names[rng.Below(4)], &got.v);
        STRESS_CHECK(sc, rc >= 0, "get: %s", FetchError().c_str());
        STRESS_CHECK(sc, rc == 0 || (got.v.type_index == FFK_TYPE_INT && got.v.v_int % 3 == 0) ||
                             StrStartsWith(got.v, "value-"),
                     "got %s", Show(got.v).c_str());
        STRESS_CHECK(sc, rc != 0 || got.v.type_index == FFK_TYPE_NONE, "absent but %s", Show(got.v).c_str());
      } else {
        int eq = ffk_structural_equal(&oa.v, &ob.v);
        STRESS_CHECK(sc, eq == 1, "equal by hook: %d %s", eq, FetchError().c_str());
      }
    }
  });
  sc.Finish();
}

}  // namespace
}  // namespace ffk::stress
