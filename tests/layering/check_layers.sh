#!/usr/bin/env bash
# Checks from the #include lines that dependencies point one way only (docs/design.md,
# "Layers and layout"):
#   ffi <- containers, tensor <- glue <- testing
# containers and tensor are siblings: each uses ffi only, and neither may include the other;
# glue (what needs both) sits above them. A file of a layer may include only headers of its
# own layer or of a lower one. The headers of each layer are the files that layer owns, so a
# new header is covered without editing this script:
#   <ffikit/x.h>        is the layer whose include/ffikit/ holds x.h (include/ffikit/ffikit.h,
#                       which includes every component, counts as the top of the library);
#                       <ffikit/unstable/x.h> the layer whose include/ffikit/unstable/ does;
#   "dir/x.h"           a quoted path that names another layer's directory ("tensor/...",
#                       "../containers/...") belongs to that layer.
# Usage: check_layers.sh ROOT   (ROOT holds ffi/, containers/, tensor/, glue/, testing/, include/)
# Prints every offending line as file:line: text, and exits 1 when there is one.
set -euo pipefail
root=${1:?usage: check_layers.sh ROOT}
cd "$root"

layers=(ffi containers tensor glue testing)
# Siblings share a rank; a file may include its own layer or one of a lower rank.
declare -A ranks=([ffi]=0 [containers]=1 [tensor]=1 [glue]=2 [testing]=3)
rank() { echo "${ranks[$1]:--1}"; }

# header path below include/ffikit/ (list.h, unstable/list.h) -> owning layer, from each
# layer's public include directory and its unstable tier.
declare -A owner
for l in "${layers[@]}"; do
  for h in "$l"/include/ffikit/*.h "$l"/include/ffikit/unstable/*.h; do
    [[ -e $h ]] && owner[${h#"$l"/include/ffikit/}]=$l
  done
done
[[ -e include/ffikit/ffikit.h ]] && owner[ffikit.h]=glue  # the umbrella header includes every component

include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"]'
bad=0 files=0
for l in "${layers[@]}"; do
  [[ -d $l ]] || continue
  me=$(rank "$l")
  while IFS= read -r -d '' f; do
    files=$((files + 1))
    n=0
    while IFS= read -r line; do
      n=$((n + 1))
      [[ $line =~ $include_re ]] || continue
      target=${BASH_REMATCH[2]} kind=${BASH_REMATCH[1]} other=""
      if [[ $kind == "<" && $target == ffikit/* ]]; then
        other=${owner[${target#ffikit/}]:-}
      elif [[ $kind == '"' ]]; then
        for o in "${layers[@]}"; do
          [[ $target =~ (^|/)$o/ ]] && other=$o
        done
      fi
      [[ -n $other ]] || continue
      if [[ $other != "$l" ]] && (( $(rank "$other") >= me )); then
        echo "$f:$n: $line   ($l must not include $other)"
        bad=1
      fi
    done < "$f"
  done < <(find "$l" \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' \) -print0)
done

if (( files == 0 )); then echo "no sources found under $root"; exit 1; fi
if (( bad )); then echo "layering: FAILED"; exit 1; fi
echo "layering: $files files, every include stays in its layer or points down"
