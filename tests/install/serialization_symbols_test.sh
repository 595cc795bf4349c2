#!/usr/bin/env bash
# The vendored yyjson (containers/src/serialization_yyjson.h) stays private: libffikit.so
# exports no yyjson symbol (only ffk_*), and libffikit.a defines none under yyjson's own
# names (they are renamed to ffk_yyjson__* and hidden), so an application that links its
# own yyjson, shared or static, never clashes with or binds to ours.
set -euo pipefail
so=$1 a=$2
exported=$(nm -D --defined-only "$so" | awk 'NF == 3 {print $3}')
if ! grep -q '^ffk_from_json_graph$' <<< "$exported"; then
  echo "FAIL: $so does not export ffk_from_json_graph (is this check blind?)" >&2
  exit 1
fi
foreign=$(grep -v -e '^ffk_' -e '^_edata$' -e '^_end$' -e '^__bss_start$' <<< "$exported" || true)
if [[ -n "$foreign" ]]; then
  echo "FAIL: $so exports symbols outside ffk_*:" >&2
  echo "$foreign" >&2
  exit 1
fi
if grep -q 'yyjson' <<< "$exported"; then
  echo "FAIL: $so exports yyjson symbols" >&2
  exit 1
fi
# Read the symbols whole first: `nm | grep -q` would stop nm early (SIGPIPE, which pipefail reports).
archived=$(nm -g --defined-only "$a" | awk 'NF == 3 {print $3}')
clashing=$(grep -E '^(unsafe_)?yyjson_' <<< "$archived" || true)
if [[ -n "$clashing" ]]; then
  echo "FAIL: $a defines yyjson's own names, which would clash with an application's yyjson:" >&2
  echo "$clashing" >&2
  exit 1
fi
if ! grep -q '^ffk_yyjson__read_opts$' <<< "$archived"; then
  echo "FAIL: $a holds no renamed yyjson (is this check blind?)" >&2
  exit 1
fi
echo "yyjson is private: $(basename "$so") exports ffk_* only; $(basename "$a") defines ffk_yyjson__* only"
