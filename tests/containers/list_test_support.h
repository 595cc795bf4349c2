// Helpers shared by the List suites (list_test.cc, list_threads_test.cc): building Lists of
// ints, reading them back, and Python's slice rules written from the language reference.
#ifndef FFIKIT_TESTS_CONTAINERS_LIST_TEST_SUPPORT_H
#define FFIKIT_TESTS_CONTAINERS_LIST_TEST_SUPPORT_H

#include <ffikit/ffikit.h>
#include <ffikit/list.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace list_test {


using ffk::test::FetchError;
using ffk::test::OwnedAny;
using ffk::test::Repr;

inline ffk_object* Obj(ffk_list* l) { return reinterpret_cast<ffk_object*>(l); }
inline ffk_object* Obj(ffk_array* a) { return reinterpret_cast<ffk_object*>(a); }
inline ffk_object* Obj(ffk_map* m) { return reinterpret_cast<ffk_object*>(m); }

inline ffk_list* Ints(const std::vector<int64_t>& xs) {
  std::vector<ffk_any> v;
  for (int64_t x : xs) v.push_back(ffk_any_int(x));
  ffk_list* l = ffk_list_from_items(v.data(), static_cast<int64_t>(v.size()));
  EXPECT_NE(l, nullptr) << FetchError();
  return l;
}

inline ffk_array* IntArray(const std::vector<int64_t>& xs) {
  std::vector<ffk_any> v;
  for (int64_t x : xs) v.push_back(ffk_any_int(x));
  return ffk_array_new(v.data(), static_cast<int64_t>(v.size()));
}

// The elements of `l`, read one by one with ffk_list_get (which does not allocate).
inline std::vector<int64_t> Values(ffk_list* l) {
  std::vector<int64_t> out;
  int64_t n = ffk_list_size(l);
  for (int64_t i = 0; i < n; ++i) {
    ffk_any v;
    if (ffk_list_get(l, i, &v) != 0) {
      ADD_FAILURE() << "get " << i << ": " << FetchError();
      break;
    }
    if (v.type_index != FFK_TYPE_INT) ADD_FAILURE() << "element " << i << " is a " << ffk_any_type_name(&v);
    out.push_back(v.v_int);
    ffk_any_release(&v);
  }
  return out;
}

inline std::vector<int64_t> Values(const ffk_array* a) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < ffk_array_size(a); ++i) out.push_back(ffk_array_items_borrow(a)[i].v_int);
  return out;
}

template <typename T>
inline std::string R(T* x) {
  ffk_any v = ffk_any_object(Obj(x));
  std::string s = Repr(v);
  ffk_any_release(&v);
  return s;
}

using ffk::test::PendingError;
using ffk::test::TensorView;

// Python's clamping of one slice bound (step 1) and of list.insert's index.
inline int64_t Clamp(int64_t i, int64_t n) {
  if (i < 0) {
    i += n;
    if (i < 0) i = 0;
  } else if (i > n) {
    i = n;
  }
  return i;
}


// The indices Python's l[start:stop:step] selects in a list of n elements (step != 0),
// written from the language reference rather than from the C code under test.
inline std::vector<int64_t> PySliceIndices(int64_t n, int64_t start, int64_t stop, int64_t step) {
  if (step == INT64_MIN) step = -INT64_MAX;  // as CPython clamps it: the same elements
  auto bound = [n, step](int64_t v) -> int64_t {
    // A negative bound counts from the end; then clamp to [0, n] (step > 0) or [-1, n - 1].
    if (v < 0) v = v < -n ? (step > 0 ? 0 : -1) : v + n;
    int64_t hi = step > 0 ? n : n - 1;
    return v > hi ? hi : v;
  };
  std::vector<int64_t> out;
  int64_t a = bound(start), b = bound(stop);
  for (int64_t i = a; step > 0 ? i < b : i > b;) {
    out.push_back(i);
    if (step > 0 ? b - i <= step : i - b <= -step) break;  // the next one is past the end
    i += step;
  }
  return out;
}

inline std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

inline std::vector<ffk_any> IntAnys(const std::vector<int64_t>& xs) {
  std::vector<ffk_any> v;
  for (int64_t x : xs) v.push_back(ffk_any_int(x));
  return v;
}

}  // namespace list_test

#endif  // FFIKIT_TESTS_CONTAINERS_LIST_TEST_SUPPORT_H
