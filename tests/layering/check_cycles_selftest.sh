#!/usr/bin/env bash
# check_cycles.py reports two C files that call each other (and a circle of three, and a
# circle through a data symbol), passes an acyclic pair, and lets an allow-listed circle pass.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=$here/check_cycles.py
[[ -f $check ]] || check=tests/layering/check_cycles.py
tmp=${TEST_TMPDIR:-$(mktemp -d)}/cycles
rm -rf "$tmp"; mkdir -p "$tmp"
cc=${CC:-cc}
fail=0

obj() {  # obj NAME 'C source'
  printf '%s\n' "$2" > "$tmp/$1.c" && "$cc" -c -o "$tmp/$1.o" "$tmp/$1.c" || { echo "FAIL: cannot compile $1.c"; exit 1; }
}

expect() {  # expect pass|fail DESCRIPTION WANT_IN_OUTPUT ARGS...
  local want=$1 what=$2 grep_for=$3; shift 3
  if python3 "$check" "$@" > "$tmp/out" 2>&1; then got=pass; else got=fail; fi
  if [[ $got != "$want" ]] || ! grep -qF -- "$grep_for" "$tmp/out"; then
    echo "FAIL: $what: expected $want with '$grep_for', got $got:"; cat "$tmp/out"; fail=1
  else
    echo "ok: $what"
  fi
}

obj a 'int b(int); int a(int x) { return x ? b(x - 1) : 0; }'
obj b 'int a(int); int b(int x) { return x ? a(x - 1) : 1; }'
expect fail "two files that call each other" "a -> " "$tmp/a.o" "$tmp/b.o"
expect fail "the report names a symbol of each edge" "(b)" "$tmp/a.o" "$tmp/b.o"
expect pass "--report-only prints the circle and passes" "circle of 2 files" --report-only "$tmp/a.o" "$tmp/b.o"

obj low 'int low(int x) { return x + 1; }'
obj high 'int low(int); int high(int x) { return low(x) * 2; }'
expect pass "an acyclic pair" "no circle" "$tmp/low.o" "$tmp/high.o"

obj p 'int q(void); int p(void) { return q(); }'
obj q 'int r(void); int q(void) { return r(); }'
obj r 'extern int p_table[]; int r(void) { return p_table[0]; }'
obj pt 'int p(void); int (*p_ptr)(void) = p; int p_table[] = {1};'
# p -> q -> r -> pt (data) -> p: a circle of four through a data symbol.
expect fail "a circle of four through a data symbol" "circle of 4 files" "$tmp/p.o" "$tmp/q.o" "$tmp/r.o" "$tmp/pt.o"

ar rcs "$tmp/libab.a" "$tmp/a.o" "$tmp/b.o"
expect fail "the members of a static archive" "ab/a -> ab/b" "$tmp/libab.a"

printf '# a comment\na b: a known circle, kept for the test\n' > "$tmp/allow"
expect pass "an allow-listed circle" "allowed circle of 2 files" --allow "$tmp/allow" "$tmp/a.o" "$tmp/b.o"
printf 'a b: a known circle\nlow high: none here\n' > "$tmp/allow"
expect pass "a stale allow entry is reported" "stale allow entry" --allow "$tmp/allow" "$tmp/a.o" "$tmp/b.o"
printf 'a: too small\n' > "$tmp/allow"
expect fail "an allow entry that covers part of a circle" "circle of 2 files" --allow "$tmp/allow" "$tmp/a.o" "$tmp/b.o"
exit $fail
