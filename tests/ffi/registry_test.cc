// ffikit/function.h, the global registry: override rules, lookup, removal, listing,
// allocation failures and concurrent use.
#include <ffikit/ffikit.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Registry : public ffk::test::Test {};
using ffk::test::FetchError;

ffk_object* Obj(ffk_function* f) { return reinterpret_cast<ffk_object*>(f); }

int ReturnSelf(void* self, const ffk_any*, int32_t, ffk_any* result) {
  *result = ffk_any_int(reinterpret_cast<intptr_t>(self));
  return 0;
}

ffk_function* Make(intptr_t id) {
  return ffk_function_new("id", ReturnSelf, reinterpret_cast<void*>(id), nullptr);
}

int64_t CallByName(const char* name) {
  ffk_function* f;
  if (ffk_function_get_global(name, &f) != 1) return -1;
  ffk_any r;
  EXPECT_EQ(ffk_function_call(f, nullptr, 0, &r), 0);
  ffk_object_release(Obj(f));
  return r.v_int;
}

TEST_F(Registry, RegisterRefusesToReplaceUnlessTold) {
  ffk_function* one = Make(1);
  ffk_function* two = Make(2);
  ASSERT_EQ(ffk_function_register("test.reg.f", one, false), 0);
  EXPECT_EQ(ffk_object_use_count(Obj(one)), 2u);
  EXPECT_EQ(ffk_function_register("test.reg.f", two, false), -1);
  EXPECT_EQ(FetchError(), "RuntimeError: Global Function `test.reg.f` is already registered");
  EXPECT_EQ(CallByName("test.reg.f"), 1);
  EXPECT_EQ(ffk_object_use_count(Obj(two)), 1u);
  ASSERT_EQ(ffk_function_register("test.reg.f", two, true), 0);
  EXPECT_EQ(CallByName("test.reg.f"), 2);
  EXPECT_EQ(ffk_object_use_count(Obj(one)), 1u) << "the replaced function is released";
  EXPECT_EQ(ffk_function_remove_global("test.reg.f"), 1);
  EXPECT_EQ(ffk_function_remove_global("test.reg.f"), 0);
  ffk_function* f = one;
  EXPECT_EQ(ffk_function_get_global("test.reg.f", &f), 0);
  EXPECT_EQ(f, nullptr);
  ffk_object_release(Obj(one));
  ffk_object_release(Obj(two));
}

TEST_F(Registry, BadNamesAreValueErrors) {
  EXPECT_EQ(ffk_function_get_global("x", nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_get_global: the out pointer is NULL");
  ffk_function* f = Make(1);
  EXPECT_EQ(ffk_function_register(nullptr, f, false), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot register a global Function: the name is NULL");
  EXPECT_EQ(ffk_function_register("", f, false), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot register a global Function: the name is empty");
  EXPECT_EQ(ffk_function_register("x", nullptr, false), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_register: the function for `x` is NULL");
  ffk_function* out;
  EXPECT_EQ(ffk_function_get_global(nullptr, &out), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot look up a global Function: the name is NULL");
  EXPECT_EQ(ffk_function_remove_global(""), -1);
  EXPECT_EQ(FetchError(), "ValueError: cannot remove a global Function: the name is empty");
  ffk_object_release(Obj(f));
}

int Collect(const char* name, ffk_function*, void* ctx) {
  auto* names = static_cast<std::vector<std::string>*>(ctx);
  if (std::string(name).rfind("test.list.", 0) == 0) names->push_back(name);
  if (std::string(name) == "test.list.b") ffk_function_remove_global("test.list.c");  // re-entering is safe
  return 0;
}

int StopAtB(const char* name, ffk_function*, void*) { return std::string(name) == "test.list.b" ? 42 : 0; }

TEST_F(Registry, ForEachVisitsASortedSnapshot) {
  ffk_function* f = Make(1);
  // Enough names to spread over many shards and grow some.
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(ffk_function_register(("test.many." + std::to_string(i)).c_str(), f, false), 0);
  }
  for (const char* n : {"test.list.c", "test.list.a", "test.list.b"}) ASSERT_EQ(ffk_function_register(n, f, false), 0);
  std::vector<std::string> names;
  ASSERT_EQ(ffk_function_for_each_global(Collect, &names), 0);
  EXPECT_EQ(names, (std::vector<std::string>{"test.list.a", "test.list.b", "test.list.c"}));
  EXPECT_EQ(ffk_function_remove_global("test.list.c"), 0) << "removed by the callback";
  EXPECT_EQ(ffk_function_for_each_global(StopAtB, nullptr), 42);
  ffk::test::SweepAllocationFailures([] {
    std::vector<std::string> seen;
    return ffk_function_for_each_global(Collect, &seen) == 0;
  });
  for (int i = 0; i < 300; ++i) ffk_function_remove_global(("test.many." + std::to_string(i)).c_str());
  ffk_function_remove_global("test.list.a");
  ffk_function_remove_global("test.list.b");
  EXPECT_EQ(ffk_object_use_count(Obj(f)), 1u);
  ffk_object_release(Obj(f));
}

// The global name of f as a std::string; "" when it has none (and *rc gets the result).
std::string GlobalName(const ffk_function* f, int* rc = nullptr) {
  ffk_any out = ffk_any_int(99);
  int got = ffk_function_global_name(f, &out);
  if (rc != nullptr) *rc = got;
  std::string name;
  const char* data;
  size_t size;
  if (got == 1 && ffk_any_as_str(&out, &data, &size) == 0) name.assign(data, size);
  if (got != 1) {
    EXPECT_EQ(out.type_index, FFK_TYPE_NONE);
  }
  ffk_any_release(&out);
  return name;
}

TEST_F(Registry, GlobalNameIsTheFunctionsOwnNameWhenThatMapsToIt) {
  ffk_function* f = ffk_function_new("test.gname.own", ReturnSelf, nullptr, nullptr);
  int rc = -2;
  EXPECT_EQ(GlobalName(f, &rc), "");
  EXPECT_EQ(rc, 0) << "not registered: no global name";
  ASSERT_EQ(ffk_function_register("test.gname.z_alias", f, false), 0);
  ASSERT_EQ(ffk_function_register("test.gname.own", f, false), 0);
  EXPECT_EQ(GlobalName(f, &rc), "test.gname.own");  // its own name wins over an earlier alias
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(ffk_function_register("test.gname.a_alias", f, false), 0);
  EXPECT_EQ(GlobalName(f), "test.gname.own");
  EXPECT_EQ(ffk_object_use_count(Obj(f)), 4u) << "the lookup keeps no reference";
  for (const char* n : {"test.gname.own", "test.gname.a_alias", "test.gname.z_alias"}) ffk_function_remove_global(n);
  ffk_object_release(Obj(f));
}

TEST_F(Registry, GlobalNameFallsBackToTheFirstNameInNameOrderThatMapsToIt) {
  ffk_function* f = Make(1);  // named "id", which is not registered
  ffk_function* other = Make(2);
  ASSERT_EQ(ffk_function_register("id", other, false), 0);  // its own name maps to another Function
  for (int i = 0; i < 100; ++i)  // names in many shards, most for another Function
    ASSERT_EQ(ffk_function_register(("test.gname.other." + std::to_string(i)).c_str(), other, false), 0);
  ASSERT_EQ(ffk_function_register("test.gname.m", f, false), 0);
  ASSERT_EQ(ffk_function_register("test.gname.b", f, false), 0);
  ASSERT_EQ(ffk_function_register("test.gname.x", f, false), 0);
  EXPECT_EQ(GlobalName(f), "test.gname.b");
  EXPECT_EQ(GlobalName(other), "id");
  // Overridden and removed names no longer count: identity, not the name it was made with.
  ASSERT_EQ(ffk_function_register("test.gname.b", other, true), 0);
  EXPECT_EQ(GlobalName(f), "test.gname.m");
  EXPECT_EQ(ffk_function_remove_global("test.gname.m"), 1);
  EXPECT_EQ(ffk_function_remove_global("test.gname.x"), 1);
  int rc = -2;
  EXPECT_EQ(GlobalName(f, &rc), "");
  EXPECT_EQ(rc, 0);
  for (int i = 0; i < 100; ++i) ffk_function_remove_global(("test.gname.other." + std::to_string(i)).c_str());
  ffk_function_remove_global("test.gname.b");
  ffk_function_remove_global("id");
  EXPECT_EQ(ffk_object_use_count(Obj(other)), 1u);
  ffk_object_release(Obj(f));
  ffk_object_release(Obj(other));
}

TEST_F(Registry, GlobalNameRefusesNullsAndFailsCleanlyAtEveryAllocation) {
  ffk_any out = ffk_any_int(1);
  EXPECT_EQ(ffk_function_global_name(nullptr, &out), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_global_name: the function is NULL");
  EXPECT_EQ(out.type_index, FFK_TYPE_NONE);
  ffk_function* f = Make(1);
  EXPECT_EQ(ffk_function_global_name(f, nullptr), -1);
  EXPECT_EQ(FetchError(), "ValueError: ffk_function_global_name: the out is NULL");
  const char* long_name = "test.gname.a.name.longer.than.seven.bytes";
  ASSERT_EQ(ffk_function_register(long_name, f, false), 0);
  ffk::test::SweepAllocationFailures([&] {
    ffk_any name;
    int rc = ffk_function_global_name(f, &name);
    ffk_any_release(&name);
    return rc == 1;
  });
  ffk_function_remove_global(long_name);
  ffk_object_release(Obj(f));
}

TEST_F(Registry, ForEachOverAnEmptyRegistryVisitsNothing) {
  // Found by the atheris harness (UBSan): listing an empty registry passed NULL to qsort.
  std::vector<std::string> names;
  ASSERT_EQ(ffk_function_for_each_global(Collect, &names), 0) << FetchError();
  EXPECT_TRUE(names.empty()) << "this test binary registers nothing outside its tests";
}

TEST_F(Registry, RegistrationFailsCleanlyAtEveryAllocation) {
  ffk_function* f = Make(1);
  ffk::test::SweepAllocationFailures(
      [&] {
        if (ffk_function_register("test.sweep", f, false) != 0) return false;
        return ffk_function_remove_global("test.sweep") == 1;
      },
      [&] {
        ffk_function* g;
        EXPECT_EQ(ffk_function_get_global("test.sweep", &g), 0);
        EXPECT_EQ(ffk_object_use_count(Obj(f)), 1u);
      });
  ffk_object_release(Obj(f));
}

TEST_F(Registry, ThreadsRegisterLookUpAndRemoveConcurrently) {
  constexpr int kThreads = 4, kRounds = 2000;
  ffk_function* stable = Make(7);
  ASSERT_EQ(ffk_function_register("test.mt.stable", stable, false), 0);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &bad] {
      std::string mine = "test.mt." + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        ffk_function* f = Make(t);
        if (ffk_function_register(mine.c_str(), f, i % 2 == 1) != 0) ffk_error_clear();
        ffk_object_release(Obj(f));
        if (CallByName("test.mt.stable") != 7) ++bad;
        int64_t got = CallByName(mine.c_str());
        if (got != t && got != -1) ++bad;
        // Another thread's name: present or absent, never a wrong value.
        std::string other = "test.mt." + std::to_string((t + 1) % kThreads);
        int64_t o = CallByName(other.c_str());
        if (o != -1 && o != (t + 1) % kThreads) ++bad;
        if (i % 3 == 0) ffk_function_remove_global(mine.c_str());
      }
      ffk_function_remove_global(mine.c_str());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ffk_function_remove_global("test.mt.stable"), 1);
  ffk_object_release(Obj(stable));
}


// Counts context deletions, so a test can see when the registry dropped its reference.
std::atomic<int> g_deleted{0};
void CountDeletion(void*) { g_deleted.fetch_add(1); }

ffk_function* MakeCounted(intptr_t id) {
  return ffk_function_new("counted", ReturnSelf, reinterpret_cast<void*>(id), CountDeletion);
}

TEST_F(Registry, TablesGrowAndReuseRemovedSlots) {
  // Enough names to rebuild every shard's table several times, then churn through
  // removals and re-registrations (tombstones), checking every lookup on the way.
  constexpr int kNames = 3000;
  auto name = [](int i) { return "test.grow." + std::to_string(i); };
  for (int i = 0; i < kNames; ++i) {
    ffk_function* f = Make(i);
    ASSERT_EQ(ffk_function_register(name(i).c_str(), f, false), 0);
    ffk_object_release(Obj(f));
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = round % 2; i < kNames; i += 2) ASSERT_EQ(ffk_function_remove_global(name(i).c_str()), 1);
    for (int i = 0; i < kNames; ++i) ASSERT_EQ(CallByName(name(i).c_str()), i % 2 == round % 2 ? -1 : i) << i;
    for (int i = round % 2; i < kNames; i += 2) {
      ffk_function* f = Make(i);
      ASSERT_EQ(ffk_function_register(name(i).c_str(), f, false), 0);
      ffk_object_release(Obj(f));
    }
  }
  int seen = 0;
  ASSERT_EQ(ffk_function_for_each_global(
                [](const char* n, ffk_function*, void* ctx) {
                  if (std::string(n).rfind("test.grow.", 0) == 0) ++*static_cast<int*>(ctx);
                  return 0;
                },
                &seen),
            0);
  EXPECT_EQ(seen, kNames);
  for (int i = 0; i < kNames; ++i) {
    EXPECT_EQ(CallByName(name(i).c_str()), i);
    ASSERT_EQ(ffk_function_remove_global(name(i).c_str()), 1);
  }
  for (int i = 0; i < kNames; i += 97) EXPECT_EQ(CallByName(name(i).c_str()), -1);
}

TEST_F(Registry, RemovalDropsTheReferenceAtOnceWithoutReaders) {
  g_deleted = 0;
  ffk_function* f = MakeCounted(1);
  ASSERT_EQ(ffk_function_register("test.drop", f, false), 0);
  ffk_object_release(Obj(f));
  EXPECT_EQ(CallByName("test.drop"), 1);
  ffk_function* g = MakeCounted(2);
  ASSERT_EQ(ffk_function_register("test.drop", g, true), 0);  // the replaced one goes now
  ffk_object_release(Obj(g));
  EXPECT_EQ(g_deleted.load(), 1);
  EXPECT_EQ(ffk_function_remove_global("test.drop"), 1);
  EXPECT_EQ(g_deleted.load(), 2);
}

TEST_F(Registry, ReplacedFunctionsAreReleasedOnceWhileReadersRun) {
  // Readers look the name up without pause while the main thread replaces and removes
  // it: every Function ever registered is deleted exactly once, none while a reader
  // holds it, and all of them by the time the readers have stopped.
  constexpr int kReaders = 3, kWrites = 3000;
  g_deleted = 0;
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        ffk_function* f;
        int rc = ffk_function_get_global("test.hot", &f);
        if (rc == 1) {
          ffk_any r;
          if (ffk_function_call(f, nullptr, 0, &r) != 0 || r.v_int < 0 || r.v_int >= kWrites) ++bad;
          ffk_object_release(Obj(f));
        } else if (rc != 0) {
          ++bad;
        }
      }
    });
  }
  for (int i = 0; i < kWrites; ++i) {
    ffk_function* f = MakeCounted(i);
    ASSERT_EQ(ffk_function_register("test.hot", f, true), 0);
    ffk_object_release(Obj(f));
    if (i % 5 == 4) {
      ASSERT_EQ(ffk_function_remove_global("test.hot"), 1);
    }
  }
  ffk_function_remove_global("test.hot");
  stop = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(g_deleted.load(), kWrites);
}

TEST_F(Registry, ShortLivedThreadsEachLookUp) {
  // Each thread takes a read-section record on its first lookup and gives it back at
  // exit; hundreds of threads come and go.
  ffk_function* f = Make(5);
  ASSERT_EQ(ffk_function_register("test.threads", f, false), 0);
  ffk_object_release(Obj(f));
  std::atomic<int> bad{0};
  for (int round = 0; round < 100; ++round) {
    std::thread a([&] { bad += CallByName("test.threads") != 5; });
    std::thread b([&] { bad += CallByName("test.threads") != 5; });
    a.join();
    b.join();
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ffk_function_remove_global("test.threads"), 1);
}

TEST_F(Registry, AForkedChildReclaimsDespiteReadersInTheParent) {
  // A reader thread is looking names up when the process forks. In the child that
  // thread is gone; a removal there must still release the Function at once.
  std::atomic<bool> stop{false};
  ffk_function* keep = Make(3);
  ASSERT_EQ(ffk_function_register("test.fork.keep", keep, false), 0);
  ffk_object_release(Obj(keep));
  std::thread reader([&] {
    while (!stop.load(std::memory_order_relaxed)) CallByName("test.fork.keep");
  });
  for (int i = 0; i < 20; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      g_deleted = 0;
      ffk_function* f = MakeCounted(1);
      int ok = ffk_function_register("test.fork.child", f, false) == 0;
      ffk_object_release(Obj(f));
      ok = ok && ffk_function_remove_global("test.fork.child") == 1 && g_deleted.load() == 1;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fork " << i;
  }
  stop = true;
  reader.join();
  EXPECT_EQ(ffk_function_remove_global("test.fork.keep"), 1);
}

}  // namespace
