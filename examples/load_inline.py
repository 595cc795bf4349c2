"""Write C and C++ in a Python file, build it into an ffikit module, call it.

Needs a C and a C++ compiler (cc, c++; $CC and $CXX pick others). Run it with the package
installed (pip install ./bindings/python):
    python examples/load_inline.py
The first run compiles (a fraction of a second per module); later runs load the cached
library from ~/.cache/ffikit (or $FFIKIT_CACHE_DIR) without compiling.
"""
import time

from ffikit import cpp

# 1. C: a plain ffk_safe_call routine. `functions` exports it; the text after the name is its
#    signature (which makes calls check and convert their arguments) and, on the next line,
#    its doc.
C_SOURCE = r"""
static int dot(void *self, const ffk_any *args, int32_t nargs, ffk_any *result) {
  /* typed "(Array<float>, Array<float>) -> float": the C library has checked both arguments */
  ffk_array *a = (ffk_array *)args[0].v_obj, *b = (ffk_array *)args[1].v_obj;
  int64_t n = ffk_array_size(a);
  if (ffk_array_size(b) != n)
    return ffk_error_set(FFK_ERR_VALUE, "dot of vectors of sizes %lld and %lld", (long long)n,
                         (long long)ffk_array_size(b));
  const ffk_any *x = ffk_array_items_borrow(a), *y = ffk_array_items_borrow(b);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i].v_float * y[i].v_float;
  *result = ffk_any_float(sum);
  return 0;
}
"""

start = time.perf_counter()
linalg = cpp.load_inline("example_linalg", c_sources=C_SOURCE, functions={
    "dot": "(Array<float>, Array<float>) -> float\nThe dot product of two vectors of equal size.",
})
print(f"built or loaded example_linalg in {time.perf_counter() - start:.3f} s: {linalg.path}")
print("dot([1, 2, 3], [4, 5, 6]) =", linalg.dot([1, 2, 3], [4.0, 5, 6]))  # ints become floats
try:
    linalg.dot([1, 2], [1, 2, 3])
except ValueError as e:
    print("ValueError:", e)

# 2. C++: plain functions exported with <ffikit/ffikit.hpp>, which deduces each signature.
CPP_SOURCE = r"""
#include <ffikit/ffikit.hpp>
#include <algorithm>
#include <string>

static std::string shout(const std::string &text, int64_t times) {
  std::string out;
  for (int64_t i = 0; i < times; ++i) out += text;
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}
FFK_EXPORT_TYPED_FUNC(shout, shout)
"""

start = time.perf_counter()
text = cpp.load_inline("example_text", cpp_sources=CPP_SOURCE)
print(f"built or loaded example_text in {time.perf_counter() - start:.3f} s")
print("shout('ab', 3) =", text.shout("ab", 3), " signature:", text.shout.signature)

# 3. A compiler error shows the command and the compiler's messages.
try:
    cpp.load_inline("example_broken", c_sources="int f(void) { return not_declared; }")
except cpp.BuildError as e:
    print("BuildError:", str(e).splitlines()[0])
