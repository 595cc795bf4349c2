/*
 * ffikit/ffikit.hpp - export plain C++ functions as typed module functions (header-only).
 *
 *   #include <ffikit/ffikit.hpp>
 *   FFK_MODULE_ABI_VERSION;
 *   static int64_t add(int64_t a, int64_t b) { return a + b; }
 *   static std::string greet(const std::string &who) { return "hello, " + who; }
 *   FFK_EXPORT_TYPED_FUNC(add, add)      // signature "(int, int) -> int"
 *   FFK_EXPORT_TYPED_FUNC(greet, greet)  // signature "(str) -> str"
 *
 * The signature and the argument and result conversions are deduced from the function's
 * type. Supported parameter and result types, with their schema names:
 *
 *   int64_t, int, and the other integer types   int     (an argument outside the C++ type's
 *                                                         range is an OverflowError)
 *   double, float                               float
 *   bool                                        bool
 *   const char *                                str     (borrowed for the call; NUL-terminated)
 *   std::string (by value or const reference)   str
 *   ffk_any                                     Any     (a parameter is borrowed for the call;
 *                                                         a result is owned, handed to the caller)
 *   void (result only)                          None
 *
 * A C++ exception escaping the function becomes an error in the thread's slot:
 * ffikit::error carries its kind ("ValueError", FFK_ERR_KEY ...), std::bad_alloc is a
 * MemoryError, any other std::exception a RuntimeError with what(). Nothing is thrown
 * across the C boundary. Since the Function is typed, the C library has checked the
 * number of arguments and converted each to its declared type before the call.
 *
 * Needs C++17. Like <ffikit/module.h>'s macros, FFK_EXPORT_TYPED_FUNC writes the module
 * symbols ffikit_fn_<name> and ffikit_sig_<name> with C linkage; write
 * FFK_MODULE_ABI_VERSION once per module (ffikit.cpp.load_inline adds it when missing).
 */
#ifndef FFIKIT_FFIKIT_HPP
#define FFIKIT_FFIKIT_HPP

#include <ffikit/ffikit.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ffikit {

/* An exception that becomes an ffikit error of `kind` (an FFK_ERR_* name or a registered kind). */
class error : public std::runtime_error {
 public:
  error(const char *kind, const std::string &message) : std::runtime_error(message), kind_(kind) {}
  const char *kind() const noexcept { return kind_; }

 private:
  const char *kind_;
};

namespace detail {

template <typename T>
using bare_t = std::remove_cv_t<std::remove_reference_t<T>>;

/* How one C++ type crosses: its schema name, and conversions from and to ffk_any. */
template <typename T, typename Enable = void>
struct conv {
  static_assert(sizeof(T) == 0,
                "FFK_EXPORT_TYPED_FUNC: unsupported parameter or result type (use an integer, double, bool, "
                "const char *, std::string or ffk_any)");
};

template <typename T>
struct conv<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr const char *name = "int";
  static int from(const ffk_any *a, T *out, const char *fn, size_t index) {
    int64_t v;
    if (ffk_any_as_int(a, &v) != 0) return -1;
    bool fits;
    if constexpr (std::is_unsigned_v<T>)
      fits = v >= 0 && static_cast<uint64_t>(v) <= std::numeric_limits<T>::max();
    else
      fits = v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    if (!fits)
      return ffk_error_set(FFK_ERR_OVERFLOW, "argument #%zu of `%s`: %lld is out of range for a %zu-byte %s integer",
                           index, fn, static_cast<long long>(v), sizeof(T),
                           std::is_unsigned_v<T> ? "unsigned" : "signed");
    *out = static_cast<T>(v);
    return 0;
  }
  static int to(T v, ffk_any *r) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return ffk_error_set(FFK_ERR_OVERFLOW, "result %llu does not fit an int (64-bit signed)",
                             static_cast<unsigned long long>(v));
    }
    *r = ffk_any_int(static_cast<int64_t>(v));
    return 0;
  }
};

template <typename T>
struct conv<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static constexpr const char *name = "float";
  static int from(const ffk_any *a, T *out, const char *, size_t) {
    double v;
    if (ffk_any_as_float(a, &v) != 0) return -1;
    *out = static_cast<T>(v);
    return 0;
  }
  static int to(T v, ffk_any *r) {
    *r = ffk_any_float(static_cast<double>(v));
    return 0;
  }
};

template <>
struct conv<bool> {
  static constexpr const char *name = "bool";
  static int from(const ffk_any *a, bool *out, const char *, size_t) { return ffk_any_as_bool(a, out); }
  static int to(bool v, ffk_any *r) {
    *r = ffk_any_bool(v);
    return 0;
  }
};

template <>
struct conv<const char *> {
  static constexpr const char *name = "str";
  static int from(const ffk_any *a, const char **out, const char *, size_t) {
    size_t size;
    return ffk_any_as_str(a, out, &size);
  }
  static int to(const char *v, ffk_any *r) { return ffk_any_cstr(v, r); }
};

template <>
struct conv<std::string> {
  static constexpr const char *name = "str";
  static int from(const ffk_any *a, std::string *out, const char *, size_t) {
    const char *data;
    size_t size;
    if (ffk_any_as_str(a, &data, &size) != 0) return -1;
    out->assign(data, size);
    return 0;
  }
  static int to(const std::string &v, ffk_any *r) { return ffk_any_str(v.data(), v.size(), r); }
};

template <>
struct conv<ffk_any> {
  static constexpr const char *name = "Any";
  static int from(const ffk_any *a, ffk_any *out, const char *, size_t) {
    *out = *a; /* a borrowed view, valid for the call */
    return 0;
  }
  static int to(ffk_any v, ffk_any *r) {
    *r = v; /* the function's result is owned: ownership moves to the caller */
    return 0;
  }
};

template <typename R>
struct result_name {
  static constexpr const char *value = conv<bare_t<R>>::name;
};
template <>
struct result_name<void> {
  static constexpr const char *value = "None";
};

/* "(int, str) -> float" for R(*)(A...), built once (the module symbol points into it). */
template <typename R, typename... A>
const char *signature(R (*)(A...)) {
  static const std::string text = [] {
    std::string s = "(";
    const char *names[] = {conv<bare_t<A>>::name..., nullptr};
    for (size_t i = 0; i + 1 < sizeof(names) / sizeof(names[0]); ++i) {
      if (i) s += ", ";
      s += names[i];
    }
    s += ") -> ";
    s += result_name<R>::value;
    return s;
  }();
  return text.c_str();
}

template <typename... A, size_t... I>
int convert_args(const char *fn, const ffk_any *args, std::tuple<bare_t<A>...> &out, std::index_sequence<I...>) {
  (void)fn, (void)args, (void)out; /* unused when the function takes no arguments */
  int rc = 0;
  /* left to right; stops at the first failure */
  ((rc = rc != 0 ? rc : conv<bare_t<A>>::from(&args[I], &std::get<I>(out), fn, I)), ...);
  return rc;
}

template <typename R, typename... A>
int invoke(R (*fn)(A...), const char *name, const ffk_any *args, int32_t nargs, ffk_any *result) noexcept {
  if (nargs != static_cast<int32_t>(sizeof...(A)))
    return ffk_error_set(FFK_ERR_TYPE, "%s takes %zu arguments but got %d", name, sizeof...(A), (int)nargs);
  try {
    std::tuple<bare_t<A>...> values;
    if (convert_args<A...>(name, args, values, std::index_sequence_for<A...>{}) != 0) return -1;
    if constexpr (std::is_void_v<R>) {
      std::apply(fn, values);
      *result = ffk_any_none();
      return 0;
    } else {
      return conv<bare_t<R>>::to(std::apply(fn, values), result);
    }
  } catch (const error &e) {
    return ffk_error_set(e.kind(), "%s", e.what());
  } catch (const std::bad_alloc &) {
    return ffk_error_set(FFK_ERR_MEMORY, "out of memory in %s", name);
  } catch (const std::exception &e) {
    return ffk_error_set(FFK_ERR_RUNTIME, "%s", e.what());
  } catch (...) {
    return ffk_error_set(FFK_ERR_RUNTIME, "%s threw a C++ exception that is not a std::exception", name);
  }
}

}  // namespace detail
}  // namespace ffikit

/*
 * Exports the C++ function `fn` (a function, not an overload set) as the typed module
 * function `name` (an identifier), with its signature deduced from fn's type.
 */
#define FFK_EXPORT_TYPED_FUNC(name, fn)                                                                        \
  FFK_MODULE_SYMBOL int ffikit_fn_##name(void *self, const ffk_any *args, int32_t nargs, ffk_any *result);    \
  FFK_MODULE_SYMBOL int ffikit_fn_##name(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {   \
    (void)self;                                                                                                \
    return ::ffikit::detail::invoke(fn, #name, args, nargs, result);                                           \
  }                                                                                                            \
  FFK_MODULE_SYMBOL const char *const ffikit_sig_##name = ::ffikit::detail::signature(fn);

#endif /* FFIKIT_FFIKIT_HPP */
