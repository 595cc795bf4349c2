/*
 * kwargs.c - keyword arguments: binding `f(1, k=2.0)` to a typed Function's parameters.
 *
 * The names come from the signature ("(xs: Array<float>, k: float)" names xs and k). The
 * binding follows CPython's rules for a function whose parameters are all
 * positional-or-keyword, with its messages, in its order: each keyword must name a
 * parameter that no positional argument or earlier keyword filled; then every parameter
 * must be filled. The bound arguments go through
 * ffk_function_call, so conversions, the callee's errors and the backtrace frame are
 * exactly those of a positional call; bindings (Python, Rust) convert values and call
 * this, so every language gets the same rules and texts.
 */
#include "internal.h"

#include <ffikit/function.h>

#include <string.h>

int32_t ffk_function_num_params(const ffk_function *f) {
  const ffk_signature *sig = f != NULL ? ffk_function__sig(f) : NULL;
  return sig != NULL ? sig->nparams : -1;
}

int ffk_function_param_name(const ffk_function *f, int32_t i, const char **out) {
  if (out != NULL) *out = NULL;
  if (f == NULL || out == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_function_param_name: the %s is NULL", f == NULL ? "function" : "out");
  const ffk_signature *sig = ffk_function__sig(f);
  if (sig == NULL)
    return ffk_error_set(FFK_ERR_TYPE, "Function `%s` is untyped: its parameters have no names",
                         ffk_function_name(f));
  if (i < 0 || i >= sig->nparams)
    return ffk_error_set(FFK_ERR_INDEX, "parameter index %d out of range for `%s`, which takes %d", (int)i,
                         sig->text, (int)sig->nparams);
  *out = sig->names[i];
  return *out != NULL ? 1 : 0;
}

const char *ffk_function_param_type(const ffk_function *f, int32_t i) {
  const ffk_signature *sig = f != NULL ? ffk_function__sig(f) : NULL;
  if (sig == NULL || i < 0 || i >= sig->nparams) return NULL;
  return sig->params[i]->text;
}

const char *ffk_function_return_type(const ffk_function *f) {
  const ffk_signature *sig = f != NULL ? ffk_function__sig(f) : NULL;
  if (sig == NULL) return NULL;
  return sig->ret != NULL ? sig->ret->text : "Any";
}

/* The index of the parameter called `name`, or -1 (parameters without a name never match). */
static int32_t find_param(const ffk_signature *sig, const char *name) {
  for (int32_t i = 0; i < sig->nparams; ++i)
    if (sig->names[i] != NULL && sig->names[i][0] == name[0] && strcmp(sig->names[i], name) == 0) return i;
  return -1;
}

/* Appends the name of parameter `i` in quotes: its own, or its position as the signature text shows it. */
static int append_param(ffk_buf *b, const ffk_signature *sig, int32_t i) {
  if (sig->names[i] != NULL) return ffk_buf__appendf(b, "'%s'", sig->names[i]);
  return ffk_buf__appendf(b, "'%d'", (int)i);
}

/* "f() missing 2 required positional arguments: 'a' and 'b'" (CPython's list: 'a', 'b', and 'c'). */
static FFK_NOINLINE int raise_missing(const ffk_function *f, const ffk_signature *sig, const bool *filled) {
  int32_t missing = 0;
  for (int32_t i = 0; i < sig->nparams; ++i) missing += !filled[i];
  ffk_buf list = {0};
  int32_t seen = 0;
  int rc = 0;
  for (int32_t i = 0; rc == 0 && i < sig->nparams; ++i) {
    if (filled[i]) continue;
    ++seen;
    if (seen > 1) {
      if (missing == 2) rc = ffk_buf__append(&list, " and ", 5);
      else if (seen == missing) rc = ffk_buf__append(&list, ", and ", 6);
      else rc = ffk_buf__append(&list, ", ", 2);
    }
    if (rc == 0) rc = append_param(&list, sig, i);
  }
  if (rc == 0)
    ffk_error_set(FFK_ERR_TYPE, "%s() missing %d required positional argument%s: %s", ffk_function_name(f),
                  (int)missing, missing == 1 ? "" : "s", list.data);
  ffk_buf__free(&list);
  return -1;
}

/* Binds the keywords of a typed Function's call into `bound` (nparams slots) and calls it. */
static int bind_and_call(ffk_function *f, const ffk_signature *sig, const ffk_any *args, int32_t npos,
                         const char *const *kwnames, int32_t nkw, ffk_any *bound, bool *filled, ffk_any *result) {
  const char *fname = ffk_function_name(f);
  int32_t nparams = sig->nparams;
  int32_t n = npos < nparams ? npos : nparams;
  for (int32_t i = 0; i < n; ++i) {
    bound[i] = args[i];
    filled[i] = true;
  }
  for (int32_t i = n; i < nparams; ++i) filled[i] = false;
  for (int32_t j = 0; j < nkw; ++j) {
    int32_t i = find_param(sig, kwnames[j]);
    if (i < 0) return ffk_error_set(FFK_ERR_TYPE, "%s() got an unexpected keyword argument '%s'", fname, kwnames[j]);
    if (filled[i]) return ffk_error_set(FFK_ERR_TYPE, "%s() got multiple values for argument '%s'", fname, kwnames[j]);
    bound[i] = args[npos + j];
    filled[i] = true;
  }
  /* More positionals than parameters filled every parameter, so the first keyword was a
     repeat or unknown and returned above: CPython's "takes 2 positional arguments but 3
     were given" is left to the positional call's count check (nkw == 0). */
  for (int32_t i = 0; i < nparams; ++i)
    if (!filled[i]) return raise_missing(f, sig, filled);
  return ffk_function_call(f, bound, nparams, result);
}

int ffk_function_call_kw(ffk_function *f, const ffk_any *args, int32_t npos, const char *const *kwnames,
                         int32_t nkw, ffk_any *result) {
  if (nkw == 0) return ffk_function_call(f, args, npos, result);
  *result = ffk_any_none();
  if (FFK_UNLIKELY(FFK_ERROR__PENDING())) ffk_function__drop_stale_error(f);
  if (f == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_function_call_kw: the function is NULL");
  if (npos < 0 || nkw < 0 || npos > INT32_MAX - nkw || args == NULL || kwnames == NULL)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_function_call_kw: %d positional and %d keyword arguments at %p (names at %p) for `%s`",
                         (int)npos, (int)nkw, (const void *)args, (const void *)kwnames, ffk_function_name(f));
  for (int32_t j = 0; j < nkw; ++j)
    if (kwnames[j] == NULL)
      return ffk_error_set(FFK_ERR_VALUE, "ffk_function_call_kw: keyword name #%d is NULL for `%s`", (int)j,
                           ffk_function_name(f));
  const ffk_signature *sig = ffk_function__sig(f);
  if (sig == NULL || sig->nnamed == 0)
    return ffk_error_set(FFK_ERR_TYPE, "%s() takes no keyword arguments", ffk_function_name(f));
  enum { LOCAL = 8 };
  ffk_any local[LOCAL];
  bool local_filled[LOCAL];
  ffk_any *bound = local;
  bool *filled = local_filled;
  if (sig->nparams > LOCAL) {
    if ((bound = ffk_mem_alloc((size_t)sig->nparams * (sizeof(ffk_any) + sizeof(bool)))) == NULL) return -1;
    filled = (bool *)(bound + sig->nparams);
  }
  int rc = bind_and_call(f, sig, args, npos, kwnames, nkw, bound, filled, result);
  if (bound != local) ffk_mem_free(bound);
  return rc;
}
