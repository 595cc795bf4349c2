// Stress scenario of structural walks over objects being rewritten (the harness and its
// rules: stress_harness.h):
//   9. eight threads share two equal trees of reflected nodes whose fields are all
//      writable. Writers replace fields with equal values: a node's name with a new
//      string, its children with a new Array of the same nodes or of deep copies of them
//      (so the replaced subtree dies while other threads may be walking it), its tag (an
//      Any field, read owned) with the same int. Readers walk structural equality, hash
//      and first mismatch over both trees, walk them (ffk_structural_walk, counting the
//      nodes), read fields with ffk_field_get and peek them inside read sections, and
//      deep-copy a tree and compare the copy. Every answer must
//      stay "equal" and the hash constant: a walk borrows writable object fields inside
//      its read section (reflect.h "Read sections"), and a value replaced under it must stay
//      alive until the walk ends (ASan and TSan see a use after free or a race otherwise).
//      After the threads end, every retired value has been reclaimed: nothing stays alive.
//  10. one thread keeps moving Lists between two Lists of a Dict: it pops a List [1, 2, 3]
//      from "t" (freeing it), builds a List [1, 2, 4] (which the allocator likes to put
//      at the address just freed) and appends it to "u", then pops the oldest from "u"
//      and appends a new [1, 2, 3] to "t". Three threads walk the Dict meanwhile: its hash
//      must be one of the four the possible lengths give, and it must never equal a Dict
//      whose "u" holds [1, 2, 3] lists (first mismatch likewise). A walk that released its
//      snapshot of "t" and remembered [1, 2, 3] by address would take the [1, 2, 4] born
//      at that address for it (issue 35). A long Array between the two lists gives the
//      mover time to act in the middle of a walk.
// Meant for --config=tsan and --config=asan as well as plain runs.
#include <ffikit/array.h>
#include <ffikit/ffikit.h>
#include <ffikit/structural.h>
#include <ffikit/structural_visit.h>
#include <ffikit/unstable/reflect.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/stress/stress_harness.h"
#include "tests/support/ffk_test.h"

namespace ffk::stress {
namespace {

struct WalkNode {
  ffk_object header;
  int64_t value;
  ffk_object* name;      // str
  ffk_object* children;  // Array<Object> of WalkNode
  ffk_any tag;           // Any: an int
};

struct NodeType {
  int32_t index = -1;
  const ffk_field_info *value = nullptr, *name = nullptr, *children = nullptr, *tag = nullptr;
};

const NodeType& Node() {
  static NodeType nt = [] {
    static const ffk_field_def fields[] = {
        {"value", offsetof(WalkNode, value), "int", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
        {"name", offsetof(WalkNode, name), "str", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
        {"children", offsetof(WalkNode, children), "Array<Object>", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
        {"tag", offsetof(WalkNode, tag), "Any", FFK_FIELD_WRITABLE, ffk_any_none(), nullptr},
    };
    ffk_type_def def = {};
    def.key = "test.stress.WalkNode";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(WalkNode);
    def.fields = fields;
    def.nfields = 4;
    NodeType t;
    t.index = ffk_type_define(&def);
    if (t.index < 0) return t;
    ffk_type_find_field(t.index, "value", &t.value);
    ffk_type_find_field(t.index, "name", &t.name);
    ffk_type_find_field(t.index, "children", &t.children);
    ffk_type_find_field(t.index, "tag", &t.tag);
    return t;
  }();
  return nt;
}

// A complete `fanout`-ary tree of `depth` levels; node k (in creation order) has value k,
// name "node-k-..." and tag k % 7. A new reference, or nullptr with an error.
ffk_object* BuildTree(int depth, int fanout, int64_t* counter) {
  const NodeType& nt = Node();
  int64_t k = (*counter)++;
  std::vector<ffk_any> kids;
  for (int i = 0; depth > 1 && i < fanout; ++i) {
    ffk_object* c = BuildTree(depth - 1, fanout, counter);
    if (c == nullptr) break;
    kids.push_back(ffk_any_object_steal(c));
  }
  ffk_array* arr = ffk_array_new(kids.data(), static_cast<int64_t>(kids.size()));
  for (ffk_any& v : kids) ffk_any_release(&v);
  if (arr == nullptr) return nullptr;
  ffk::test::OwnedAny children(ffk_any_object_steal(Obj(arr)));
  ffk::test::OwnedAny name(OwnedStr(Fmt("node-%lld-a name longer than seven", (long long)k)));
  ffk_any args[4] = {ffk_any_int(k), name.v, children.v, ffk_any_int(k % 7)};
  ffk_object* obj = nullptr;
  if (ffk_object_create(nt.index, args, 4, nullptr, 0, &obj) != 0) return nullptr;
  return obj;
}

// A node reached from `root` by a random path of up to `depth` steps, as a new reference.
ffk_object* RandomNode(ffk_object* root, Rng& rng, int depth) {
  const NodeType& nt = Node();
  ffk_object_retain(root);
  ffk_object* at = root;
  int steps = static_cast<int>(rng.Below(static_cast<uint64_t>(depth)));
  for (int s = 0; s < steps; ++s) {
    ffk::test::OwnedAny kids;
    if (ffk_field_get(nt.children, at, &kids.v) != 0) break;
    const ffk_array* a = reinterpret_cast<const ffk_array*>(kids.v.v_obj);
    int64_t n = ffk_array_size(a);
    if (n == 0) break;
    ffk_object* next = ffk_array_items_borrow(a)[rng.Below(static_cast<uint64_t>(n))].v_obj;
    ffk_object_retain(next);
    ffk_object_release(at);
    at = next;
  }
  return at;
}

// Replaces one field of `node` with an equal value. True on success.
bool RewriteOneField(ffk_object* node, Rng& rng, std::string* error) {
  const NodeType& nt = Node();
  int64_t r = rng.Below(4);
  if (r == 0 || r == 3) {  // the name: a new String of the same text (or the tag: the same int)
    const ffk_field_info* f = r == 0 ? nt.name : nt.tag;
    ffk::test::OwnedAny old, fresh;
    if (ffk_field_get(f, node, &old.v) != 0) return *error = FetchError(), false;
    if (r == 0) {
      const char* data;
      size_t size;
      if (ffk_any_as_str(&old.v, &data, &size) != 0) return *error = FetchError(), false;
      fresh.v = OwnedStr(std::string(data, size));
    } else {
      fresh.v = old.v;
      old.v = ffk_any_none();
    }
    if (ffk_field_set(f, node, &fresh.v) != 0) return *error = FetchError(), false;
    return true;
  }
  // The children: a new Array of the same nodes (r == 1) or of their deep copies (r == 2).
  ffk::test::OwnedAny kids;
  if (ffk_field_get(nt.children, node, &kids.v) != 0) return *error = FetchError(), false;
  const ffk_array* a = reinterpret_cast<const ffk_array*>(kids.v.v_obj);
  int64_t n = ffk_array_size(a);
  std::vector<ffk_any> items(static_cast<size_t>(n));
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    const ffk_any& c = ffk_array_items_borrow(a)[i];
    if (r == 1 || !ok) {
      items[i] = ffk_any_object(c.v_obj);
    } else if (ffk_deep_copy(&c, &items[i]) != 0) {
      *error = FetchError();
      items[i] = ffk_any_object(c.v_obj);
      ok = false;
    }
  }
  ffk_array* fresh = ffk_array_new(items.data(), n);
  for (ffk_any& v : items) ffk_any_release(&v);
  if (fresh == nullptr) return *error = FetchError(), false;
  ffk::test::OwnedAny v(ffk_any_object_steal(Obj(fresh)));
  if (ffk_field_set(nt.children, node, &v.v) != 0) return *error = FetchError(), false;
  return ok;
}

// Peeks every field of `node` inside one read section and checks them. True when whole.
bool PeekNode(ffk_object* node) {
  const NodeType& nt = Node();
  void* section = ffk_read_section_enter();
  if (section == nullptr) return false;
  ffk_any v, name, kids, tag;
  bool ok = ffk_field_peek(nt.value, node, &v) == 0 && v.type_index == FFK_TYPE_INT;
  ok = ffk_field_peek(nt.name, node, &name) == 0 && StrStartsWith(name, "node-") && ok;
  ok = ffk_field_peek(nt.children, node, &kids) == 0 && kids.type_index == FFK_TYPE_ARRAY && ok;
  int tag_rc = ffk_field_peek(nt.tag, node, &tag);
  ok = tag_rc == 1 && tag.type_index == FFK_TYPE_INT && tag.v_int == v.v_int % 7 && ok;
  if (tag_rc == 1) ffk_any_release(&tag);
  ffk_read_section_exit(section);
  return ok;
}

TEST_F(Stress, StructuralWalksOverFieldsRewrittenByOtherThreads) {
  Scenario sc(9, "structural walks while fields are rewritten, always 8 threads");
  const NodeType& nt = Node();
  ASSERT_GT(nt.index, 0) << FetchError();
  const int depth = 4, fanout = 4;  // 85 nodes per tree
  int64_t ka = 0, kb = 0;
  ffk::test::OwnedAny a(ffk_any_object_steal(BuildTree(depth, fanout, &ka)));
  ffk::test::OwnedAny b(ffk_any_object_steal(BuildTree(depth, fanout, &kb)));
  ASSERT_NE(a.v.v_obj, nullptr) << FetchError();
  ASSERT_NE(b.v.v_obj, nullptr) << FetchError();
  ASSERT_EQ(ffk_structural_equal(&a.v, &b.v), 1) << FetchError();
  uint64_t h0 = 0;
  ASSERT_EQ(ffk_structural_hash(&a.v, &h0), 0) << FetchError();

  const int64_t ops = std::max<int64_t>(50, Cfg().ops / 40);
  sc.Run(8, [&](int th, Rng& rng, Ticker& tick) {
    const int role = th % 4;  // 0: writer, 1: equal / first mismatch, 2: hash and peeks, 3: deep copies
    for (int64_t op = 0; op < ops; ++op, tick()) {
      ffk_object* root = rng.Percent(50) ? a.v.v_obj : b.v.v_obj;
      if (role == 0) {
        ffk_object* node = RandomNode(root, rng, depth);
        std::string error;
        STRESS_CHECK(sc, RewriteOneField(node, rng, &error), "rewrite: %s", error.c_str());
        ffk_object_release(node);
      } else if (role == 1) {
        if (rng.Percent(80)) {
          int rc = ffk_structural_equal(&a.v, &b.v);
          STRESS_CHECK(sc, rc == 1, "equal = %d: %s", rc, FetchError().c_str());
        } else {
          ffk_object *lhs = nullptr, *rhs = nullptr;
          int rc = ffk_structural_first_mismatch(&a.v, &b.v, &lhs, &rhs);
          STRESS_CHECK(sc, rc == 0, "first mismatch = %d: %s", rc, FetchError().c_str());
          ffk_object_release(lhs);
          ffk_object_release(rhs);
        }
      } else if (role == 2) {
        uint64_t h = 0;
        ffk_any r = ffk_any_none();
        r.type_index = root->type_index;
        r.v_obj = root;
        STRESS_CHECK(sc, ffk_structural_hash(&r, &h) == 0 && h == h0, "hash %llx, not %llx: %s",
                     (unsigned long long)h, (unsigned long long)h0, FetchError().c_str());
        struct Count {
          int32_t type;
          int64_t nodes;
        } count{nt.index, 0};
        auto on_value = [](void* ctx, const ffk_any* v, const ffk_walk_step*, ffk_def_region_kind) {
          auto* c = static_cast<Count*>(ctx);
          c->nodes += v->type_index == c->type;
          return (int)FFK_WALK_ADVANCE;
        };
        STRESS_CHECK(sc, ffk_structural_walk(&r, FFK_WALK_POSTORDER, on_value, &count) == 0 && count.nodes == 85,
                     "walk met %lld nodes, not 85: %s", (long long)count.nodes, FetchError().c_str());
        ffk_object* node = RandomNode(root, rng, depth);
        STRESS_CHECK(sc, PeekNode(node), "peek: %s", FetchError().c_str());
        ffk::test::OwnedAny name;
        STRESS_CHECK(sc, ffk_field_get(nt.name, node, &name.v) == 0 && StrStartsWith(name.v, "node-"),
                     "get name = %s", Show(name.v).c_str());
        ffk_object_release(node);
      } else {
        ffk_any r = ffk_any_none();
        r.type_index = root->type_index;
        r.v_obj = root;
        ffk::test::OwnedAny copy;
        STRESS_CHECK(sc, ffk_deep_copy(&r, &copy.v) == 0, "deep copy: %s", FetchError().c_str());
        if (copy.v.type_index == nt.index) {
          int rc = ffk_structural_equal(&copy.v, &a.v);
          STRESS_CHECK(sc, rc == 1, "copy equal = %d: %s", rc, FetchError().c_str());
        }
      }
    }
  });
  sc.Finish();
  EXPECT_EQ(ffk_structural_equal(&a.v, &b.v), 1) << FetchError();
  uint64_t h1 = 0;
  EXPECT_EQ(ffk_structural_hash(&b.v, &h1), 0) << FetchError();
  EXPECT_EQ(h1, h0);
  EXPECT_EQ(ffk_object_use_count(a.v.v_obj), 1u);
  EXPECT_EQ(ffk_object_use_count(b.v.v_obj), 1u);
  // The fixture checks that nothing is alive once a and b go: no retired value is left unreclaimed.
}

// ---- 10. Address reuse under a walk ---------------------------------------------------

ffk_any IntList(int64_t last) {
  ffk_any items[3] = {ffk_any_int(1), ffk_any_int(2), ffk_any_int(last)};
  return ffk_any_object_steal(Obj(ffk_list_from_items(items, 3)));
}

// {"t": List of `nt` [1, 2, 3] lists, "pad": `pad`, "u": List of `nu` [1, 2, `u_last`] lists}.
ffk_any MovingDict(int nt, const ffk_any& pad, int nu, int64_t u_last) {
  ffk::test::OwnedAny t(ffk_any_object_steal(Obj(ffk_list_new()))), u(ffk_any_object_steal(Obj(ffk_list_new())));
  for (int i = 0; i < nt; ++i) {
    ffk::test::OwnedAny l(IntList(3));
    ffk_list_append(reinterpret_cast<ffk_list*>(t.v.v_obj), &l.v);
  }
  for (int i = 0; i < nu; ++i) {
    ffk::test::OwnedAny l(IntList(u_last));
    ffk_list_append(reinterpret_cast<ffk_list*>(u.v.v_obj), &l.v);
  }
  ffk_dict* d = ffk_dict_new();
  ffk::test::OwnedAny kt(OwnedStr("the t lists")), kp(OwnedStr("the padding")), ku(OwnedStr("the u lists"));
  ffk_dict_set(d, &kt.v, &t.v);
  ffk_dict_set(d, &kp.v, &pad);
  ffk_dict_set(d, &ku.v, &u.v);
  return ffk_any_object_steal(Obj(d));
}

ffk_list* Entry(const ffk_any& dict, const char* key) {
  ffk::test::OwnedAny k(OwnedStr(key)), v;
  if (ffk_dict_get(reinterpret_cast<ffk_dict*>(dict.v_obj), &k.v, &v.v) != 1) return nullptr;
  return reinterpret_cast<ffk_list*>(v.v.v_obj);  // the Dict keeps it alive
}

TEST_F(Stress, WalksNeverTakeANewListForOneFreedAtItsAddress) {
  Scenario sc(10, "structural walks while another thread frees and rebuilds lists, 4 threads");
  std::vector<ffk_any> ints;
  for (int i = 0; i < 100000; ++i) ints.push_back(ffk_any_int(i));
  ffk::test::OwnedAny pad(ffk_any_object_steal(Obj(ffk_array_new(ints.data(), (int64_t)ints.size()))));
  ffk::test::OwnedAny pad2(ffk_any_object_steal(Obj(ffk_array_new(ints.data(), (int64_t)ints.size()))));
  // The shared Dict starts with 8 lists in t and 1 in u; the mover keeps t at 7 or 8 lists
  // and u at 1 or 2 (8 addresses a walk may remember, for the [1, 2, 4] lists to land on).
  ffk::test::OwnedAny d(MovingDict(8, pad.v, 1, 4));
  ffk_list* t = Entry(d.v, "the t lists");
  ffk_list* u = Entry(d.v, "the u lists");
  ASSERT_TRUE(t != nullptr && u != nullptr);
  // The hashes it may have, and a Dict it never equals (u's lists are [1, 2, 3] there).
  std::vector<uint64_t> hashes;
  for (int nt = 7; nt <= 8; ++nt) {
    for (int nu = 1; nu <= 2; ++nu) {
      ffk::test::OwnedAny ref(MovingDict(nt, pad2.v, nu, 4));
      uint64_t h = 0;
      ASSERT_EQ(ffk_structural_hash(&ref.v, &h), 0) << FetchError();
      hashes.push_back(h);
    }
  }
  // {"t": [P] * 8, "pad": ..., "u": [P]} with one P = [1, 2, 3]: a walk that remembers (a
  // [1, 2, 3] of t, P) as equal and then meets a [1, 2, 4] of u at that list's address,
  // paired with P again, would answer "equal" from the memo.
  ffk::test::OwnedAny other(MovingDict(0, pad2.v, 0, 3));
  {
    ffk::test::OwnedAny p(IntList(3));
    for (int i = 0; i < 8; ++i) ASSERT_EQ(ffk_list_append(Entry(other.v, "the t lists"), &p.v), 0);
    ASSERT_EQ(ffk_list_append(Entry(other.v, "the u lists"), &p.v), 0);
  }

  const int64_t walks = std::max<int64_t>(200, Cfg().ops / 100);
  std::atomic<int> walkers_left{3};
  sc.Run(4, [&](int th, Rng& rng, Ticker& tick) {
    if (th == 0) {  // the mover, for as long as the walkers walk
      while (walkers_left.load(std::memory_order_acquire) > 0) {
        ffk_any x, y;
        STRESS_CHECK(sc, ffk_list_pop(t, 0, &x) == 0, "pop t: %s", FetchError().c_str());
        ffk_any_release(&x);  // frees a [1, 2, 3] list a walker may have met
        ffk_any fresh = IntList(4);
        STRESS_CHECK(sc, ffk_list_append_steal(u, &fresh) == 0, "append u: %s", FetchError().c_str());
        STRESS_CHECK(sc, ffk_list_pop(u, 0, &y) == 0, "pop u: %s", FetchError().c_str());
        ffk_any_release(&y);
        fresh = IntList(3);
        STRESS_CHECK(sc, ffk_list_append_steal(t, &fresh) == 0, "append t: %s", FetchError().c_str());
        tick();
      }
      return;
    }
    for (int64_t i = 0; i < walks; ++i, tick()) {
      if (th == 1) {
        uint64_t h = 0;
        int rc = ffk_structural_hash(&d.v, &h);
        STRESS_CHECK(sc, rc == 0 && std::find(hashes.begin(), hashes.end(), h) != hashes.end(),
                     "hash %llx is none of the four the lengths allow: %s", (unsigned long long)h,
                     FetchError().c_str());
      } else if (th == 2 || rng.Percent(50)) {
        int rc = ffk_structural_equal(&d.v, &other.v);
        STRESS_CHECK(sc, rc == 0, "equal = %d with a Dict whose u lists differ: %s", rc, FetchError().c_str());
      } else {
        ffk_object *lhs = nullptr, *rhs = nullptr;
        int rc = ffk_structural_first_mismatch(&d.v, &other.v, &lhs, &rhs);
        STRESS_CHECK(sc, rc == 1, "first mismatch = %d with a Dict whose u lists differ: %s", rc,
                     FetchError().c_str());
        ffk_object_release(lhs);
        ffk_object_release(rhs);
      }
    }
    walkers_left.fetch_sub(1, std::memory_order_release);
  });
  sc.Finish();
}

}  // namespace
}  // namespace ffk::stress
