#!/usr/bin/env bash
# The unstable tier (include/ffikit/unstable/, docs/design.md "Bindings") stays apart from the
# stable API: a file that includes every stable header (<ffikit/ffikit.h> and each component's
# include/ffikit/*.h) sees none of the names an unstable header declares, and each unstable
# header compiles on its own. Asked of the preprocessor, not of the header text, so a stable
# header that included an unstable one (directly or through another) fails too.
# Usage: unstable_tier_test.sh ROOT   (ROOT holds ffi/, containers/, tensor/, include/, third_party/)
set -euo pipefail
root=${1:?usage: unstable_tier_test.sh ROOT}
cd "$root"
cc=${CC:-cc}
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/unstable.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

comps=(ffi containers tensor)
incs=(-Iinclude -Ithird_party/dlpack/include)
for c in "${comps[@]}"; do incs+=("-I$c/include"); done
shopt -s nullglob
unstable=()
for c in "${comps[@]}"; do unstable+=("$c"/include/ffikit/unstable/*.h); done
(( ${#unstable[@]} > 0 )) || { echo "FAIL: no unstable header under */include/ffikit/unstable/"; exit 1; }

# Every stable header at once, preprocessed: what user code can see.
for d in include "${comps[@]/%//include}"; do
  for h in "$d"/ffikit/*.h; do echo "#include <ffikit/${h##*/}>"; done
done > "$tmp/stable.c"
"$cc" -std=c11 -E -P "${incs[@]}" "$tmp/stable.c" > "$tmp/stable.i"
# A control, so that an empty preprocessor output cannot pass: a stable function is there.
grep -qw ffk_list_get "$tmp/stable.i" || { echo "FAIL: the stable headers did not preprocess"; exit 1; }

fail=0
for u in "${unstable[@]}"; do
  name=ffikit/unstable/${u##*/}
  # The names it declares: exported functions, inline helpers, typedefs (comments stripped).
  "$cc" -std=c11 -fpreprocessed -dD -E -P "$u" > "$tmp/u.i"
  mapfile -t names < <(grep -oE '^(FFK_API|static inline)[^;{(]*\b(ffk_[a-z0-9_]+)[[:space:]]*\(|^typedef[^;]*\(\*(ffk_[a-z0-9_]+)\)' "$tmp/u.i" |
                       grep -oE 'ffk_[a-z0-9_]+[[:space:]]*[()]' | grep -oE 'ffk_[a-z0-9_]+' | sort -u)
  if (( ${#names[@]} == 0 )); then echo "FAIL: $name declares nothing this test can read"; fail=1; continue; fi
  leaked=()
  for n in "${names[@]}"; do grep -qw "$n" "$tmp/stable.i" && leaked+=("$n"); done
  if (( ${#leaked[@]} )); then
    echo "FAIL: the stable headers declare what $name does: ${leaked[*]}"
    fail=1
  else
    echo "ok: $name (${#names[@]} names: ${names[*]}) is out of the stable headers"
  fi
  # Self-contained: the header alone compiles, warnings as errors.
  echo "#include <$name>" > "$tmp/self.c"
  if ! "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only "${incs[@]}" "$tmp/self.c" 2> "$tmp/self.err"; then
    echo "FAIL: $name does not compile on its own:"; cat "$tmp/self.err"; fail=1
  fi
done
exit $fail
