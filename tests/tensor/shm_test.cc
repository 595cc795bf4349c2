// ffikit/storage.h, shared memory: create, attach by name (in this and other processes),
// the name's lifetime across releases and crashes, the sweep, errors and allocation failures.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ffikit/ffikit.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

class Shm : public ffk::test::Test {};
using ffk::test::FetchError;

const DLDevice kCpu = {kDLCPU, 0};
ffk_object* Obj(ffk_storage* s) { return reinterpret_cast<ffk_object*>(s); }
unsigned char* Bytes(ffk_storage* s) { return static_cast<unsigned char*>(ffk_storage_data(s)); }

// A name private to this test process; unlinked on scope exit so that a failing test
// leaves nothing in /dev/shm.
struct ShmName {
  std::string name;
  explicit ShmName(const std::string& tag) : name("/ffikit-test-" + std::to_string(getpid()) + "-" + tag) {}
  ShmName(const ShmName&) = delete;
  ShmName& operator=(const ShmName&) = delete;
  ~ShmName() { shm_unlink(name.c_str()); }
  const char* c_str() const { return name.c_str(); }
};

// A Storage released on scope exit.
struct Held {
  ffk_storage* s;
  explicit Held(ffk_storage* x) : s(x) {}
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { Reset(); }
  void Reset() {
    if (s != nullptr) ffk_object_release(Obj(s));
    s = nullptr;
  }
};

// True when `s` is NULL, as a call expected to fail returns; releases it otherwise, so a
// test whose call wrongly succeeds fails without also leaking.
bool Failed(ffk_storage* s) {
  if (s == nullptr) return true;
  ffk_object_release(Obj(s));
  return false;
}

bool NameExists(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  EXPECT_EQ(errno, ENOENT) << name << ": " << strerror(errno);
  return false;
}

// The generated names of this process in /dev/shm ("ffikit-<pid>-...").
std::set<std::string> OurGeneratedNames() {
  std::set<std::string> out;
  std::string prefix = "ffikit-" + std::to_string(getpid()) + "-";
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.insert(std::string("/") + e->d_name);
  }
  closedir(dir);
  return out;
}

// Runs `body` in a forked child, which ends with _exit(body()); returns its exit code, or
// 128 + the signal that ended it. The child calls only ffikit and libc (no gtest).
int RunChild(const std::function<int()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// In a child: attaches `name` and checks that every byte of it is `expect`; 0 when so.
int ChildAttachAndCheck(const char* name, unsigned char expect, bool release) {
  ffk_storage* s = ffk_storage_attach_shared(name);
  if (s == nullptr) return 1;
  for (size_t i = 0; i < ffk_storage_nbytes(s); ++i)
    if (Bytes(s)[i] != expect) return 2;
  if (release) ffk_object_release(Obj(s));
  return 0;
}

TEST_F(Shm, CreatesZeroedAlignedNamedSegmentCountedOnTheCpu) {
  ShmName n("create");
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  Held a(ffk_storage_new_shared(n.c_str(), 10000));
  ASSERT_NE(a.s, nullptr) << FetchError();
  EXPECT_STREQ(ffk_storage_shared_name(a.s), n.c_str());
  EXPECT_EQ(ffk_storage_nbytes(a.s), 10000u);
  EXPECT_EQ(ffk_storage_device(a.s).device_type, kDLCPU);
  EXPECT_EQ(ffk_storage_device(a.s).device_id, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(a.s)) % FFK_STORAGE_DEFAULT_ALIGNMENT, 0u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(Bytes(a.s)[i], 0) << i;
  EXPECT_TRUE(NameExists(n.name));
  ffk_storage_stats during = ffk_storage_get_stats(kCpu);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 10000);
  EXPECT_EQ(during.blocks_in_use - before.blocks_in_use, 1);
  a.Reset();
  EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, before.blocks_in_use);
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, AttachInTheSameProcessSharesTheBytesThroughAnotherMapping) {
  ShmName n("same-process");
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  Held a(ffk_storage_new_shared(n.c_str(), 256));
  ASSERT_NE(a.s, nullptr) << FetchError();
  Held b(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(b.s, nullptr) << FetchError();
  EXPECT_NE(a.s, b.s);
  EXPECT_NE(ffk_storage_data(a.s), ffk_storage_data(b.s));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ffk_storage_data(b.s)) % FFK_STORAGE_DEFAULT_ALIGNMENT, 0u);
  EXPECT_EQ(ffk_storage_nbytes(b.s), 256u);
  EXPECT_STREQ(ffk_storage_shared_name(b.s), n.c_str());
  for (int i = 0; i < 256; ++i) Bytes(a.s)[i] = static_cast<unsigned char>(i);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(Bytes(b.s)[i], i);
  Bytes(b.s)[7] = 0xee;
  EXPECT_EQ(Bytes(a.s)[7], 0xee);
  EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use - before.blocks_in_use, 2);  // one per handle
  EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use - before.bytes_in_use, 512);
}

TEST_F(Shm, GeneratedNamesAreUniqueAndAttachable) {
  Held a(ffk_storage_new_shared(nullptr, 64));
  Held b(ffk_storage_new_shared(nullptr, 64));
  ASSERT_NE(a.s, nullptr) << FetchError();
  ASSERT_NE(b.s, nullptr) << FetchError();
  std::string na = ffk_storage_shared_name(a.s), nb = ffk_storage_shared_name(b.s);
  std::string prefix = "/ffikit-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(na.rfind(prefix, 0), 0u) << na;
  EXPECT_EQ(nb.rfind(prefix, 0), 0u) << nb;
  EXPECT_NE(na, nb);
  EXPECT_EQ(OurGeneratedNames(), (std::set<std::string>{na, nb}));
  Bytes(a.s)[0] = 42;
  Held a2(ffk_storage_attach_shared(na.c_str()));
  ASSERT_NE(a2.s, nullptr) << FetchError();
  EXPECT_EQ(Bytes(a2.s)[0], 42);
  a.Reset();
  a2.Reset();
  b.Reset();
  EXPECT_TRUE(OurGeneratedNames().empty());
}

TEST_F(Shm, OtherStorageHasNoSharedName) {
  Held s(ffk_storage_new(kCpu, 16, 0));
  ASSERT_NE(s.s, nullptr);
  EXPECT_EQ(ffk_storage_shared_name(s.s), nullptr);
  EXPECT_EQ(ffk_storage_shared_name(nullptr), nullptr);
}

TEST_F(Shm, AnEmptySegmentIsValid) {
  ShmName n("empty");
  Held a(ffk_storage_new_shared(n.c_str(), 0));
  ASSERT_NE(a.s, nullptr) << FetchError();
  Held b(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(b.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_storage_nbytes(b.s), 0u);
  a.Reset();
  b.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, ParentSeesWhatAChildWrote) {
  ShmName n("child-writes");
  Held a(ffk_storage_new_shared(n.c_str(), 4096));
  ASSERT_NE(a.s, nullptr) << FetchError();
  const char* name = n.c_str();
  int rc = RunChild([name] {
    ffk_storage* s = ffk_storage_attach_shared(name);
    if (s == nullptr) return 1;
    for (size_t i = 0; i < ffk_storage_nbytes(s); ++i) Bytes(s)[i] = static_cast<unsigned char>(i * 7);
    ffk_object_release(Obj(s));
    return 0;
  });
  ASSERT_EQ(rc, 0);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(Bytes(a.s)[i], static_cast<unsigned char>(i * 7)) << i;
  EXPECT_TRUE(NameExists(n.name));  // the child's release left the parent's hold
  a.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, ChildSeesWhatTheParentWrote) {
  ShmName n("parent-writes");
  Held a(ffk_storage_new_shared(n.c_str(), 1000));
  ASSERT_NE(a.s, nullptr) << FetchError();
  memset(Bytes(a.s), 0x3c, 1000);
  const char* name = n.c_str();
  EXPECT_EQ(RunChild([name] { return ChildAttachAndCheck(name, 0x3c, true); }), 0);
  memset(Bytes(a.s), 0x11, 1000);
  EXPECT_EQ(RunChild([name] { return ChildAttachAndCheck(name, 0x3c, true); }), 2);  // the check can fail
}

TEST_F(Shm, NameLastsUntilTheLastHolderInTheProcessReleases) {
  ShmName n("two-handles");
  Held a(ffk_storage_new_shared(n.c_str(), 8));
  ASSERT_NE(a.s, nullptr) << FetchError();
  Held b(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(b.s, nullptr) << FetchError();
  a.Reset();  // the creator lets go first
  EXPECT_TRUE(NameExists(n.name));
  Held c(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(c.s, nullptr) << FetchError();
  b.Reset();
  EXPECT_TRUE(NameExists(n.name));
  c.Reset();
  EXPECT_FALSE(NameExists(n.name));
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(n.c_str())));
  EXPECT_EQ(FetchError(), "FileNotFoundError: no shared memory named `" + n.name + "`");
}

TEST_F(Shm, NameLastsWhileAnotherProcessHoldsIt) {
  ShmName n("other-process");
  Held a(ffk_storage_new_shared(n.c_str(), 8));
  ASSERT_NE(a.s, nullptr) << FetchError();
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const char* name = n.c_str();
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    ffk_storage* s = ffk_storage_attach_shared(name);
    char c = s != nullptr ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(3);
    if (s != nullptr) ffk_object_release(Obj(s));
    _exit(s != nullptr ? 0 : 1);
  }
  ASSERT_GT(pid, 0);
  char c = 0;
  EXPECT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_EQ(c, 'y');
  a.Reset();
  EXPECT_TRUE(NameExists(n.name));  // the child still holds it
  EXPECT_EQ(write(go[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(NameExists(n.name));  // the child was the last holder
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
}

TEST_F(Shm, ReleasingAHandleInheritedThroughForkLeavesTheParentsHold) {
  ShmName n("inherited");
  Held a(ffk_storage_new_shared(n.c_str(), 8));
  ASSERT_NE(a.s, nullptr) << FetchError();
  ffk_storage* inherited = a.s;
  ASSERT_EQ(RunChild([inherited] {
              ffk_object_release(Obj(inherited));
              return 0;
            }),
            0);
  EXPECT_TRUE(NameExists(n.name));
  Held b(ffk_storage_attach_shared(n.c_str()));  // the parent is still a live holder
  ASSERT_NE(b.s, nullptr) << FetchError();
  a.Reset();
  b.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, AHolderThatDiedWithoutReleasingIsPrunedOnRelease) {
  ShmName n("crashed-holder");
  Held a(ffk_storage_new_shared(n.c_str(), 64));
  ASSERT_NE(a.s, nullptr) << FetchError();
  const char* name = n.c_str();
  ASSERT_EQ(RunChild([name] { return ChildAttachAndCheck(name, 0, false); }), 0);  // exits holding it
  a.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, SweepRemovesSegmentsWhoseHoldersAllDied) {
  ShmName n("crashed-creator");
  const char* name = n.c_str();
  ASSERT_EQ(RunChild([name] { return ffk_storage_new_shared(name, 64) != nullptr ? 0 : 1; }), 0);
  ASSERT_TRUE(NameExists(n.name));
  int64_t removed = ffk_storage_sweep_shared();
  EXPECT_GE(removed, 1) << FetchError();
  EXPECT_FALSE(NameExists(n.name));
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(name)));
  EXPECT_EQ(FetchError(), "FileNotFoundError: no shared memory named `" + n.name + "`");
}

TEST_F(Shm, SweepKeepsSegmentsWithALiveHolder) {
  ShmName n("swept-alive");
  Held a(ffk_storage_new_shared(n.c_str(), 64));
  ASSERT_NE(a.s, nullptr) << FetchError();
  EXPECT_GE(ffk_storage_sweep_shared(), 0) << FetchError();
  EXPECT_TRUE(NameExists(n.name));
  Held b(ffk_storage_attach_shared(n.c_str()));
  EXPECT_NE(b.s, nullptr) << FetchError();
}

TEST_F(Shm, AttachingASegmentWhoseHoldersAllDiedIsAFileNotFoundErrorAndUnlinksIt) {
  ShmName n("all-dead");
  const char* name = n.c_str();
  ASSERT_EQ(RunChild([name] { return ffk_storage_new_shared(name, 64) != nullptr ? 0 : 1; }), 0);
  ASSERT_TRUE(NameExists(n.name));
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(name)));
  EXPECT_EQ(FetchError(), "FileNotFoundError: no shared memory named `" + n.name + "`");
  EXPECT_FALSE(NameExists(n.name));
  // The name is free again.
  Held a(ffk_storage_new_shared(name, 8));
  EXPECT_NE(a.s, nullptr) << FetchError();
}

TEST_F(Shm, CreatingANameWhoseHoldersAllDiedTakesItOver) {
  ShmName n("recreate");
  const char* name = n.c_str();
  ASSERT_EQ(RunChild([name] {
              ffk_storage* s = ffk_storage_new_shared(name, 64);
              if (s == nullptr) return 1;
              memset(Bytes(s), 0x77, 64);
              return 0;  // dies holding it
            }),
            0);
  Held a(ffk_storage_new_shared(name, 32));
  ASSERT_NE(a.s, nullptr) << FetchError();
  EXPECT_EQ(ffk_storage_nbytes(a.s), 32u);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(Bytes(a.s)[i], 0) << "a fresh segment, not the dead one";
  a.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, AHolderKilledAtAnyMomentDoesNotWedgeTheOthers) {
  // A child attaches and releases in a loop until SIGKILL; some kills land while it holds
  // the segment's lock, which the next locker takes over (EOWNERDEAD).
  ShmName n("killed");
  Held a(ffk_storage_new_shared(n.c_str(), 64));
  ASSERT_NE(a.s, nullptr) << FetchError();
  const char* name = n.c_str();
  for (int round = 0; round < 8; ++round) {
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      for (;;) {
        ffk_storage* s = ffk_storage_attach_shared(name);
        if (s == nullptr) _exit(1);
        ffk_object_release(Obj(s));
      }
    }
    ASSERT_GT(pid, 0);
    usleep(5000 + 3000 * round);
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the child failed to attach: " << status;
    Held b(ffk_storage_attach_shared(name));
    ASSERT_NE(b.s, nullptr) << FetchError();
  }
  a.Reset();
  EXPECT_FALSE(NameExists(n.name));
}

// White-box helpers for states the public API cannot reach on purpose: they map the
// segment raw and rely on shm.c's header layout (version 1): state at byte 20, the
// robust mutex at byte 32.
constexpr size_t kStateOffset = 20, kLockOffset = 32;
unsigned char* MapRaw(const char* name) {
  int fd = shm_open(name, O_RDWR, 0);
  if (fd < 0) return nullptr;
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
}

TEST_F(Shm, AHolderThatDiedHoldingTheLockDoesNotWedgeTheOthers) {
  ShmName n("died-locked");
  Held a(ffk_storage_new_shared(n.c_str(), 64));
  ASSERT_NE(a.s, nullptr) << FetchError();
  const char* name = n.c_str();
  ASSERT_EQ(RunChild([name] {
              ffk_storage* s = ffk_storage_attach_shared(name);
              unsigned char* raw = MapRaw(name);
              if (s == nullptr || raw == nullptr) return 1;
              return pthread_mutex_lock(reinterpret_cast<pthread_mutex_t*>(raw + kLockOffset)) == 0 ? 0 : 2;
            }),
            0);  // exited holding both the segment and its lock
  Held b(ffk_storage_attach_shared(name));  // takes the lock over (EOWNERDEAD)
  ASSERT_NE(b.s, nullptr) << FetchError();
  a.Reset();
  EXPECT_TRUE(NameExists(n.name));
  b.Reset();  // the dead child was pruned: b was the last holder
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, AttachAndSweepFinishTheUnlinkOfADeadSegmentLeftUnderItsName) {
  // As if the last holder died after marking the segment DEAD and before unlinking it.
  ShmName n1("dead-linked-1"), n2("dead-linked-2");
  for (const ShmName* n : {&n1, &n2}) {
    const char* name = n->c_str();
    ASSERT_EQ(RunChild([name] { return ffk_storage_new_shared(name, 8) != nullptr ? 0 : 1; }), 0);
    unsigned char* raw = MapRaw(name);
    ASSERT_NE(raw, nullptr);
    ASSERT_EQ(raw[kStateOffset], 1);  // live
    raw[kStateOffset] = 2;            // dead
    munmap(raw, 4096);
  }
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(n1.c_str())));
  EXPECT_EQ(FetchError(), "FileNotFoundError: no shared memory named `" + n1.name + "`");
  EXPECT_FALSE(NameExists(n1.name));
  EXPECT_GE(ffk_storage_sweep_shared(), 1) << FetchError();
  EXPECT_FALSE(NameExists(n2.name));
}

TEST_F(Shm, BadNamesAreValueErrorsThatNameThem) {
  std::string long_name = "/" + std::string(200, 'x');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"noslash", "ValueError: shared memory name `noslash` does not start with '/'"},
      {"", "ValueError: shared memory name `` does not start with '/'"},
      {"/a/b", "ValueError: shared memory name `/a/b` has a '/' after the first character"},
      {"//", "ValueError: shared memory name `//` has a '/' after the first character"},
      {long_name, "ValueError: shared memory name `" + long_name + "` is longer than 200 characters"},
      {"/", "ValueError: shared memory name `/` names no file"},
      {"/.", "ValueError: shared memory name `/.` names no file"},
      {"/..", "ValueError: shared memory name `/..` names no file"},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(Failed(ffk_storage_new_shared(c.first.c_str(), 8))) << c.first;
    EXPECT_EQ(FetchError(), c.second);
    EXPECT_TRUE(Failed(ffk_storage_attach_shared(c.first.c_str()))) << c.first;
    EXPECT_EQ(FetchError(), c.second);
  }
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(nullptr)));
  EXPECT_EQ(FetchError(), "ValueError: shared memory name is NULL");
  // 200 characters with the '/' is the longest name.
  ShmName longest(std::string(200 - sizeof("/ffikit-test--") + 1 - std::to_string(getpid()).size(), 'y'));
  ASSERT_EQ(longest.name.size(), 200u);
  Held s(ffk_storage_new_shared(longest.c_str(), 8));
  EXPECT_NE(s.s, nullptr) << FetchError();
}

TEST_F(Shm, TooLargeASizeIsAValueErrorAndCreatesNothing) {
  ShmName n("too-large");
  EXPECT_TRUE(Failed(ffk_storage_new_shared(n.c_str(), SIZE_MAX)));
  EXPECT_EQ(FetchError(), "ValueError: shared memory of 18446744073709551615 bytes is larger than PTRDIFF_MAX");
  EXPECT_FALSE(NameExists(n.name));
}

TEST_F(Shm, CreatingAnExistingNameIsAValueErrorAndKeepsIt) {
  ShmName n("exists");
  Held a(ffk_storage_new_shared(n.c_str(), 8));
  ASSERT_NE(a.s, nullptr) << FetchError();
  Bytes(a.s)[0] = 9;
  EXPECT_TRUE(Failed(ffk_storage_new_shared(n.c_str(), 8)));
  EXPECT_EQ(FetchError(), "ValueError: shared memory `" + n.name + "` already exists");
  Held b(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(b.s, nullptr) << FetchError();
  EXPECT_EQ(Bytes(b.s)[0], 9);
}

TEST_F(Shm, AttachingAMissingNameIsAFileNotFoundError) {
  ShmName n("missing");
  EXPECT_TRUE(Failed(ffk_storage_attach_shared(n.c_str())));
  EXPECT_EQ(FetchError(), "FileNotFoundError: no shared memory named `" + n.name + "`");
}

TEST_F(Shm, AttachingAForeignSegmentIsAValueErrorAndLeavesIt) {
  for (off_t size : {off_t{0}, off_t{100}, off_t{8192}}) {
    ShmName n("foreign-" + std::to_string(size));
    int fd = shm_open(n.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(ftruncate(fd, size), 0);
    if (size > 5) {
      ASSERT_EQ(pwrite(fd, "hello", 5, 0), 5);
    }
    close(fd);
    EXPECT_TRUE(Failed(ffk_storage_attach_shared(n.c_str())));
    EXPECT_EQ(FetchError(), "ValueError: `" + n.name + "` is not ffikit shared memory");
    EXPECT_GE(ffk_storage_sweep_shared(), 0) << FetchError();
    EXPECT_TRUE(NameExists(n.name)) << "neither attach nor sweep may remove what is not ours";
  }
}

TEST_F(Shm, CreateSurvivesEveryAllocationFailure) {
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  std::set<std::string> names_before = OurGeneratedNames();
  int allocations = ffk::test::SweepAllocationFailures(
      [] {
        ffk_storage* s = ffk_storage_new_shared(nullptr, 100);
        if (s == nullptr) return false;
        ffk_object_release(Obj(s));
        return true;
      },
      [&] {
        EXPECT_EQ(OurGeneratedNames(), names_before);
        EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
        EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, before.blocks_in_use);
      });
  EXPECT_GE(allocations, 2);
  EXPECT_EQ(OurGeneratedNames(), names_before);
}

TEST_F(Shm, AttachSurvivesEveryAllocationFailure) {
  ShmName n("attach-sweep");
  Held a(ffk_storage_new_shared(n.c_str(), 100));
  ASSERT_NE(a.s, nullptr) << FetchError();
  ffk_storage_stats held = ffk_storage_get_stats(kCpu);
  const char* name = n.c_str();
  int allocations = ffk::test::SweepAllocationFailures(
      [name] {
        ffk_storage* s = ffk_storage_attach_shared(name);
        if (s == nullptr) return false;
        ffk_object_release(Obj(s));
        return true;
      },
      [&] {
        EXPECT_TRUE(NameExists(n.name));
        EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, held.bytes_in_use);
        EXPECT_EQ(ffk_storage_get_stats(kCpu).blocks_in_use, held.blocks_in_use);
      });
  EXPECT_GE(allocations, 2);
  a.Reset();
  EXPECT_FALSE(NameExists(n.name)) << "a failed attach left its hold behind";
}

TEST_F(Shm, ThreadsAttachAndReleaseConcurrently) {
  ShmName n("threads");
  ffk_storage_stats before = ffk_storage_get_stats(kCpu);
  Held a(ffk_storage_new_shared(n.c_str(), 4096));
  ASSERT_NE(a.s, nullptr) << FetchError();
  memset(Bytes(a.s) + 64, 0x5a, 4096 - 64);
  constexpr int kThreads = 4, kRounds = 500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  const char* name = n.c_str();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&failures, name, t] {
      for (int i = 1; i <= kRounds; ++i) {
        ffk_storage* s = ffk_storage_attach_shared(name);
        if (s == nullptr) {
          failures++;
          ffk_error_clear();
          continue;
        }
        if (Bytes(s)[100 + t] != 0x5a) failures++;
        Bytes(s)[t] = static_cast<unsigned char>(i);
        ffk_object_release(Obj(s));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(Bytes(a.s)[t], static_cast<unsigned char>(kRounds)) << t;
  ffk_storage_stats after = ffk_storage_get_stats(kCpu);
  EXPECT_EQ(after.bytes_in_use - before.bytes_in_use, 4096);
  EXPECT_EQ(after.blocks_in_use - before.blocks_in_use, 1);
  EXPECT_TRUE(NameExists(n.name));
  a.Reset();
  EXPECT_FALSE(NameExists(n.name));
  EXPECT_EQ(ffk_storage_get_stats(kCpu).bytes_in_use, before.bytes_in_use);
}

// The shaped constructor computes the byte size in C, overflow-checked (issue 21: Rust
// multiplied unchecked), and the tensor is attachable by its name.
TEST_F(Shm, ShapedConstructorChecksTheSizeAndAttaches) {
  ShmName n("shaped");
  int64_t shape[2] = {3, 5};
  const DLDataType f64 = {kDLFloat, 64, 1};
  ffk_tensor* t = ffk_tensor_new_shared(n.c_str(), 2, shape, f64);
  ASSERT_NE(t, nullptr) << FetchError();
  ffk_storage* s = ffk_tensor_storage_borrow(t);
  EXPECT_EQ(ffk_storage_nbytes(s), 120u);
  EXPECT_STREQ(ffk_storage_shared_name(s), n.c_str());
  EXPECT_TRUE(ffk_tensor_is_contiguous(t));
  Held other(ffk_storage_attach_shared(n.c_str()));
  ASSERT_NE(other.s, nullptr) << FetchError();
  static_cast<double*>(ffk_tensor_data_ptr(t))[14] = 2.5;
  EXPECT_EQ(reinterpret_cast<double*>(Bytes(other.s))[14], 2.5);
  ffk_object_release(reinterpret_cast<ffk_object*>(t));
  int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};  // 2^62 elements of 8 bytes
  EXPECT_EQ(ffk_tensor_new_shared(nullptr, 2, huge, f64), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty_shared: shape [2147483648, 2147483648] of float64 has more bytes than fit in 64 bits");
  int64_t negative[1] = {-2};
  EXPECT_EQ(ffk_tensor_new_shared(nullptr, 1, negative, f64), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: empty_shared: shape[0] is -2, and a dimension cannot be negative");
  EXPECT_EQ(ffk_tensor_new_shared("no-slash", 2, shape, f64), nullptr);
  EXPECT_EQ(FetchError(), "ValueError: shared memory name `no-slash` does not start with '/'");
}

}  // namespace
