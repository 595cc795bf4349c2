#!/usr/bin/env bash
# Builds and tests the Python package with every other CPython that pyenv holds (3.10,
# 3.12, 3.13 when present): a venv per version (.venv-<version>), `pip install
# ./bindings/python` (the release build, as users get it), then the pytest suite run
# from outside the source tree so it imports the installed package. The output of each
# install goes to .ci-logs/python-<version>-install.log (ignored by git; shown on failure).
# Prints "passed failed skipped" per version on its last lines (for scripts/summarize.py).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
for version in 3.10 3.12 3.13; do
  py=$(ls -d "$HOME"/.pyenv/versions/"$version".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$py" ]; then
    echo "[python $version] not installed: skipped" >&2
    continue
  fi
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
  xml=$(mktemp)
  (cd /tmp && "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$xml" "$root/bindings/python/tests") >&2
  "$venv/bin/python" scripts/summarize.py junit "$xml"
  rm -f "$xml"
done
