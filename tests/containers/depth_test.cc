// Depth everywhere: every operation that walks a value, on a chain kDeep levels deep
// (10 million; fewer under a sanitizer), either works or fails with the one RuntimeError
// that names FFK_STRUCTURAL_MAX_DEPTH (ffk_structural_too_deep). Never a stack overflow.
//
//   release                       works at any depth (every test ends by releasing its chain)
//   repr                          works: prints "..." below FFK_REPR_MAX_DEPTH levels
//   ffk_any_equal / ffk_any_hash  work: containers and objects are keys by identity
//   structural equal / hash / first mismatch, deep copy, JSON graph out and in
//                                 the depth error past FFK_STRUCTURAL_MAX_DEPTH
//   parsing JSON text             works at any nesting (yyjson does not recurse); decoding
//                                 it into values is the depth error
//
// A chain is built bottom-up, one level per step, which is the cheapest way to reach 10M.
#include <ffikit/ffikit.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;
using ffk::test::OwnedAny;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FFK_DEPTH_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FFK_DEPTH_TEST_SANITIZED 1
#endif
#endif

// 10 million levels; a sanitizer's shadow memory and slower calls make that minutes and
// gigabytes, so a sanitized build walks 1 million, still a thousand times the limit.
#ifdef FFK_DEPTH_TEST_SANITIZED
constexpr int64_t kDeep = 1000000;
#else
constexpr int64_t kDeep = 10000000;
#endif

const std::string kTooDeep = "RuntimeError: containers and objects nested deeper than 1000 levels";

class Depth : public ffk::test::Test {};

enum class Kind { kArray, kList, kMap, kDict, kObject };

struct SNode {
  ffk_object header;
  ffk_any next;
};

int32_t NodeType() {
  static int32_t t = [] {
    ffk_field_def field = {"next", offsetof(SNode, next), "Any", FFK_FIELD_WRITABLE | FFK_FIELD_HAS_DEFAULT,
                           ffk_any_none(), nullptr};
    ffk_type_def def = {};
    def.key = "test.depth.Node";
    def.parent_index = FFK_TYPE_OBJECT;
    def.instance_size = sizeof(SNode);
    def.fields = &field;
    def.nfields = 1;
    int32_t index = ffk_type_define(&def);
    EXPECT_GE(index, 0) << FetchError();
    return index;
  }();
  return t;
}

// One level around `inner` (stolen): [inner], {"k": inner} or test.depth.Node(next=inner).
ffk_any Wrap(Kind kind, ffk_any inner) {
  ffk_object* out = nullptr;
  switch (kind) {
    case Kind::kArray:
      out = &ffk_array_new(&inner, 1)->header;
      break;
    case Kind::kList:
      out = reinterpret_cast<ffk_object*>(ffk_list_from_items(&inner, 1));
      break;
    case Kind::kMap: {
      ffk_map* m = ffk_map_new();
      ffk_any key = ffk_any_raw_str("k");
      if (m != nullptr && ffk_map_set(&m, &key, &inner) != 0) {
        ffk_object_release(reinterpret_cast<ffk_object*>(m));
        m = nullptr;
      }
      out = reinterpret_cast<ffk_object*>(m);
      break;
    }
    case Kind::kDict: {
      ffk_dict* d = ffk_dict_new();
      ffk_any key = ffk_any_raw_str("k");
      out = reinterpret_cast<ffk_object*>(d);
      if (d != nullptr && ffk_dict_set(d, &key, &inner) != 0) {
        ffk_object_release(out);
        out = nullptr;
      }
      break;
    }
    case Kind::kObject:
      if (ffk_object_create(NodeType(), &inner, 1, nullptr, 0, &out) != 0) out = nullptr;
      break;
  }
  ffk_any_release(&inner);
  return out != nullptr ? ffk_any_object_steal(out) : ffk_any_none();
}

// `depth` levels of `kind` around None.
ffk_any Chain(Kind kind, int64_t depth) {
  ffk_any v = ffk_any_none();
  for (int64_t i = 0; i < depth; ++i) {
    v = Wrap(kind, v);
    if (v.type_index == FFK_TYPE_NONE) {
      ADD_FAILURE() << "building level " << i << ": " << FetchError();
      break;
    }
  }
  return v;
}

// Every walk of one chain: kind and depth vary, the answers do not.
void CheckEveryWalk(Kind kind, int64_t depth) {
  OwnedAny deep(Chain(kind, depth));
  ASSERT_NE(deep.v.type_index, FFK_TYPE_NONE);
  // A second chain, distinct but deeper than the limit, so equality has to walk.
  OwnedAny other(Chain(kind, 2 * FFK_STRUCTURAL_MAX_DEPTH));

  // repr works: the levels past FFK_REPR_MAX_DEPTH print as "...".
  std::string text = ffk::test::Repr(deep.v);
  EXPECT_LT(text.size(), (size_t)FFK_REPR_MAX_SIZE);
  EXPECT_NE(text.find("..."), std::string::npos) << text.substr(0, 200);

  // Key semantics work: identity.
  EXPECT_TRUE(ffk_any_equal(&deep.v, &deep.v));
  EXPECT_EQ(ffk_any_hash(&deep.v), ffk_any_hash(&deep.v));

  // Structural equality: a value equals itself without a walk; two values that must be
  // walked past the limit are the depth error.
  EXPECT_EQ(ffk_structural_equal(&deep.v, &deep.v), 1);
  EXPECT_EQ(ffk_structural_equal(&deep.v, &other.v), -1);
  EXPECT_EQ(FetchError(), kTooDeep);
  uint64_t h = 7;
  EXPECT_EQ(ffk_structural_hash(&deep.v, &h), -1);
  EXPECT_EQ(FetchError(), kTooDeep);
  ffk_object *lhs = nullptr, *rhs = nullptr;
  EXPECT_EQ(ffk_structural_first_mismatch(&deep.v, &other.v, &lhs, &rhs), -1);
  EXPECT_EQ(lhs, nullptr);
  EXPECT_EQ(rhs, nullptr);
  EXPECT_EQ(FetchError(), kTooDeep);

  OwnedAny copy;
  EXPECT_EQ(ffk_deep_copy(&deep.v, &copy.v), -1);
  EXPECT_EQ(copy.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), kTooDeep);

  OwnedAny json;
  EXPECT_EQ(ffk_to_json_graph(&deep.v, nullptr, &json.v), -1);
  EXPECT_EQ(json.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), kTooDeep);
  // The same value inside metadata (written as plain JSON, not as nodes; an object is no
  // JSON data there, so only the containers).
  if (kind == Kind::kObject) return;
  ffk_any none = ffk_any_none(), key = ffk_any_raw_str("deep");
  ffk_map* metadata = ffk_map_new();
  ASSERT_NE(metadata, nullptr);
  OwnedAny owner(ffk_any_object_steal(reinterpret_cast<ffk_object*>(metadata)));
  ASSERT_EQ(ffk_map_set(&metadata, &key, &deep.v), 0);
  owner.v.v_obj = reinterpret_cast<ffk_object*>(metadata);
  EXPECT_EQ(ffk_to_json_graph(&none, &owner.v, &json.v), -1);
  EXPECT_EQ(FetchError(), kTooDeep);
}

TEST_F(Depth, EveryWalkOfAListChainWorksOrNamesTheLimit) { CheckEveryWalk(Kind::kList, kDeep); }
TEST_F(Depth, EveryWalkOfAnArrayChainWorksOrNamesTheLimit) { CheckEveryWalk(Kind::kArray, kDeep); }
TEST_F(Depth, EveryWalkOfAMapChainWorksOrNamesTheLimit) { CheckEveryWalk(Kind::kMap, kDeep); }
TEST_F(Depth, EveryWalkOfADictChainWorksOrNamesTheLimit) { CheckEveryWalk(Kind::kDict, kDeep); }
TEST_F(Depth, EveryWalkOfAnObjectChainWorksOrNamesTheLimit) { CheckEveryWalk(Kind::kObject, kDeep); }

// The limit itself: FFK_STRUCTURAL_MAX_DEPTH levels pass every walk, one more does not.
TEST_F(Depth, TheLimitIsExactlyFfkStructuralMaxDepth) {
  for (Kind kind : {Kind::kArray, Kind::kList, Kind::kMap, Kind::kDict, Kind::kObject}) {
    OwnedAny at(Chain(kind, FFK_STRUCTURAL_MAX_DEPTH)), at2(Chain(kind, FFK_STRUCTURAL_MAX_DEPTH));
    EXPECT_EQ(ffk_structural_equal(&at.v, &at2.v), 1) << FetchError();
    uint64_t h1 = 0, h2 = 1;
    EXPECT_EQ(ffk_structural_hash(&at.v, &h1), 0) << FetchError();
    EXPECT_EQ(ffk_structural_hash(&at2.v, &h2), 0) << FetchError();
    EXPECT_EQ(h1, h2);
    OwnedAny copy, json, back;
    EXPECT_EQ(ffk_deep_copy(&at.v, &copy.v), 0) << FetchError();
    ASSERT_EQ(ffk_to_json_graph(&at.v, nullptr, &json.v), 0) << FetchError();
    const char* data = nullptr;
    size_t size = 0;
    ASSERT_EQ(ffk_any_as_str(&json.v, &data, &size), 0) << FetchError();
    ASSERT_EQ(ffk_from_json_graph(data, size, &back.v, nullptr), 0) << FetchError();
    EXPECT_EQ(ffk_structural_equal(&at.v, &back.v), 1) << FetchError();

    OwnedAny over(Wrap(kind, ffk_any_object(at.v.v_obj)));  // a new reference, which Wrap steals
    uint64_t h = 0;
    EXPECT_EQ(ffk_structural_hash(&over.v, &h), -1);
    EXPECT_EQ(FetchError(), kTooDeep);
  }
}

// ffk_structural_too_deep is the one error: its text names the limit.
TEST_F(Depth, TheDepthErrorNamesTheLimit) {
  EXPECT_EQ(ffk_structural_too_deep(), -1);
  EXPECT_EQ(FetchError(), kTooDeep);
}

// A JSON graph whose nodes chain deeper than the limit: node i holds node i + 1.
std::string NodeChainText(int64_t depth) {
  std::string text = "{\"root_index\":0,\"nodes\":[";
  for (int64_t i = 0; i < depth; ++i) {
    text += "{\"type\":\"ffi.Array\",\"data\":[" + std::to_string(i + 1) + "]},";
  }
  text += "{\"type\":\"ffi.Array\",\"data\":[]}]}";
  return text;
}

TEST_F(Depth, JsonGraphInIsTheDepthErrorForDeepNodesAndDeepText) {
  OwnedAny out, metadata;
  // Nodes that refer to one another deeper than the limit.
  std::string chain = NodeChainText(2 * FFK_STRUCTURAL_MAX_DEPTH);
  EXPECT_EQ(ffk_from_json_graph(chain.data(), chain.size(), &out.v, nullptr), -1);
  EXPECT_EQ(out.v.type_index, FFK_TYPE_NONE);
  EXPECT_EQ(FetchError(), kTooDeep);
  std::string at = NodeChainText(FFK_STRUCTURAL_MAX_DEPTH - 1);  // FFK_STRUCTURAL_MAX_DEPTH containers
  EXPECT_EQ(ffk_from_json_graph(at.data(), at.size(), &out.v, nullptr), 0) << FetchError();
  ffk_any_release(&out.v);
  out.v = ffk_any_none();

  // Text nested kDeep levels: as metadata (decoded into values: the depth error) ...
  std::string nested(static_cast<size_t>(kDeep), '[');
  nested.append(static_cast<size_t>(kDeep), ']');
  std::string doc = "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[]}],\"metadata\":" + nested + "}";
  EXPECT_EQ(ffk_from_json_graph(doc.data(), doc.size(), &out.v, &metadata.v), -1);
  EXPECT_EQ(FetchError(), kTooDeep);
  // ... as a plain value inside a node, and as the whole document: parsed (no recursion),
  // then refused for what it is, never a crash.
  std::string in_node = "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":" + nested + "}]}";
  EXPECT_EQ(ffk_from_json_graph(in_node.data(), in_node.size(), &out.v, nullptr), -1);
  EXPECT_NE(FetchError(), "");
  EXPECT_EQ(ffk_from_json_graph(nested.data(), nested.size(), &out.v, nullptr), -1);
  EXPECT_NE(FetchError(), "");
}

}  // namespace
