#!/usr/bin/env bash
# Builds and tests the Python package with every other CPython that pyenv holds (3.10,
# 3.12, 3.13 when present): a venv per version (.venv-<version>), `pip install
# ./bindings/python` (the release build, as users get it), then the pytest suite run
# from outside the source tree so it imports the installed package. The output of each
# install goes to .ci-logs/python-<version>-install.log (ignored by git; shown on failure).
# The Ray and Dask tests (test_engines_*.py, test_dask_serializer.py) run on the project's
# CPython only (./test.sh):
# what they test is how the engines pickle ffikit values, which the pickle tests here cover
# on every version; installing Ray and Dask into each fresh venv and starting a Ray cluster
# and a Dask LocalCluster per version cost about a minute of CPU each and asked nothing
# that differs between versions. FFK_VERSION_ENGINES=1 installs requirements-engines.txt
# into each venv (stamped: nothing once a venv has them) and runs them there too.
# Prints "passed failed skipped" per version on its last lines (for scripts/summarize.py).
#
# The tests marked `rebuild` (the CUDA build and the sdist, which build the whole package
# again, a minute or two each) run on the newest of these CPythons only: the per-version
# question is whether the package builds and works there, which the pip install and the
# rest of the suite answer; rebuilding it three times more asks nothing new. They run
# `setup.py sdist` in bindings/python, whose release tree (a copy of the C tree with its
# BUILD files) is a Bazel package while it exists, so .ci/run, which runs this script
# beside Bazel, splits them off, and runs them alone in a copy of the tracked files:
#   scripts/python_versions.sh                   every version; the rebuilds on the newest
#   scripts/python_versions.sh --no-rebuilds     every version; no rebuilds
#   scripts/python_versions.sh --only-rebuilds   the rebuilds alone, in the newest version's
#                                                venv (made by a run before), in a copy of
#                                                the checkout's tracked files (so they may
#                                                run beside a Bazel build in the checkout)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rebuilds=newest
# The engine test modules, left out of the runs here (not collected, rather than skipped at
# import for want of Ray or Dask) unless FFK_VERSION_ENGINES=1. ignore_engines DIR prints
# the pytest options that leave them out of the tests in DIR.
ignore_engines() {
  [ "${FFK_VERSION_ENGINES:-0}" = 1 ] && return 0
  local t
  for t in test_engines_ray.py test_engines_dask.py test_dask_serializer.py; do echo "--ignore=$1/$t"; done
}
case "${1:-}" in
  --no-rebuilds) rebuilds=none ;;
  --only-rebuilds) rebuilds=only ;;
  "") ;;
  *) echo "usage: scripts/python_versions.sh [--no-rebuilds|--only-rebuilds]" >&2; exit 2 ;;
esac
present=()
for version in 3.10 3.12 3.13; do
  if ls -d "$HOME"/.pyenv/versions/"$version".*/bin/python3 > /dev/null 2>&1; then
    present+=("$version")
  else
    echo "[python $version] not installed: skipped" >&2
  fi
done
newest=${present[${#present[@]}-1]:-}
if [ "$rebuilds" = only ]; then
  [ -n "$newest" ] || exit 0
  venv="$root/.venv-$newest"
  if [ ! -x "$venv/bin/python" ]; then
    echo "[python $newest] no venv at $venv: run scripts/python_versions.sh first" >&2
    echo "0 1 0"
    exit 1
  fi
  echo "[python $newest] the rebuild tests, in a copy of the tracked files" >&2
  # A copy of the checkout's tracked files (their working-tree contents): the release tree
  # the sdist lays out is then not in the checkout, so this may run beside a Bazel build.
  copy=$(mktemp -d)
  xml=$(mktemp)
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$copy"
  mapfile -t ignored < <(ignore_engines "$copy/bindings/python/tests")
  (cd /tmp && PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$xml" \
    ${ignored[@]+"${ignored[@]}"} -m rebuild "$copy/bindings/python/tests") >&2
  "$venv/bin/python" scripts/summarize.py junit "$xml"
  rm -rf "$xml" "$copy"
  exit 0
fi
for version in ${present[@]+"${present[@]}"}; do
  py=$(ls -d "$HOME"/.pyenv/versions/"$version".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
  select=()
  [ "$rebuilds" = newest ] && [ "$version" = "$newest" ] || select=(-m "not rebuild")
  venv="$root/.venv-$version"
  mkdir -p "$root/.ci-logs"
  log="$root/.ci-logs/python-$version-install.log"
  echo "[python $version] $py" >&2
  {
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt &&
      "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
  } > "$log" 2>&1
  if [ $? -ne 0 ]; then
    cat "$log" >&2
    echo "[python $version] install FAILED" >&2
    echo "0 1 0"
    continue
  fi
  if [ "${FFK_VERSION_ENGINES:-0}" = 1 ]; then
    # Test dependencies only; stamped like bootstrap.sh's, so an installed venv costs nothing.
    if ! cmp -s requirements-engines.txt "$venv/.requirements-engines.txt"; then
      start=$SECONDS
      if "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-engines.txt >> "$log" 2>&1; then
        cp requirements-engines.txt "$venv/.requirements-engines.txt"
        echo "[python $version] engines (requirements-engines.txt) installed in $((SECONDS - start)) s" >&2
      else
        echo "[python $version] WARNING: the engines (requirements-engines.txt) could not be installed (see $log): the Ray and Dask tests are SKIPPED" >&2
      fi
    fi
  fi
  xml=$(mktemp)
  mapfile -t ignored < <(ignore_engines "$root/bindings/python/tests")
  (cd /tmp && PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$xml" ${select[@]+"${select[@]}"} ${ignored[@]+"${ignored[@]}"} \
    "$root/bindings/python/tests") >&2
  "$venv/bin/python" scripts/summarize.py junit "$xml"
  rm -f "$xml"
done
