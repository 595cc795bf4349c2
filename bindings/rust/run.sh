#!/usr/bin/env bash
# The Rust workspace's steps, for setup.sh, test.sh and .ci/run (logs go to stderr):
#   run.sh build      install ffikit into .prefix (bazel run //:install), build the testing
#                     module the tests load, and build every target
#   run.sh tour       run the Rust tour (ffikit/examples/tour.rs)
#   run.sh test       cargo test, then the cross-language pytest (bindings/python/tests/
#                     test_objects_rust.py with the Rust module); the last stdout line is
#                     "passed failed skipped" over both
#   run.sh static     cargo test of ffikit with the `static` feature (libffikit.a linked in)
#   run.sh valgrind   the test binaries under valgrind memcheck; last line "passed failed skipped"
#   run.sh bench      the peer benchmarks (release build)
#   run.sh doc        rustdoc of the workspace's crates into target/doc (scripts/build_docs.sh
#                     puts it on the documentation site)
#   run.sh package    `cargo package --offline` of ffikit-sys and ffikit, each verified;
#                     last line "passed failed skipped" (one case per crate)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$here"
export CARGO_TERM_COLOR=never

# A cargo of 1.77 or newer: rustup's, or Debian 12's cargo-web 1.96 (scripts/bootstrap.sh
# installs it when there is no other); scripts/find_cargo.sh decides. Without one, every
# step is skipped, loudly, and counted as one skipped test where a count is expected.
if ! cargo=$("$root/scripts/find_cargo.sh"); then
  echo "[rust] SKIPPED: no cargo >= 1.77 (install Rust with rustup, or Debian 12's cargo-web and" \
       "rustc-web from bookworm-security: scripts/bootstrap.sh does it); the Rust steps did not run" >&2
  case "${1:-}" in test|static|valgrind) echo "0 0 1" ;; esac
  exit 0
fi
# The chosen cargo first on PATH, with the rustc beside it (cargo-web's is /usr/bin/rustc).
export PATH="$(dirname "$cargo"):$PATH"
[ -x "$(dirname "$cargo")/rustc" ] && export RUSTC="$(dirname "$cargo")/rustc"

# Installs ffikit into .prefix (what ffikit-sys links) and builds what the tests load at run
# time: libffikit_testing.so, the testing.* module (.cargo/config.toml's FFIKIT_TESTING_LIB,
# under bazel-bin). In a fresh clone nothing else would have built it.
install_prefix() {
  (cd "$root" && bazel build //testing:libffikit_testing.so >/dev/null 2>&1) ||
    { echo "[rust] bazel build //testing:libffikit_testing.so failed" >&2; return 1; }
  (cd "$root" && bazel run //:install -- "$here/.prefix" >/dev/null 2>&1) ||
    { echo "[rust] bazel run //:install failed" >&2; return 1; }
}

# Sums libtest's "test result: ok. 3 passed; 0 failed; 1 ignored; ..." lines.
count() {
  awk '/^test result:/ { for (i = 1; i <= NF; i++) {
         if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1);
         if ($(i) ~ /^ignored;?$/) s += $(i-1) } }
       END { print p + 0, f + 0, s + 0 }' "$1"
}

# pytest's summary ("3 passed, 1 failed, 2 skipped in 1.2s") as "passed failed skipped";
# errors count as failures.
count_pytest() {
  awk '{ for (i = 2; i <= NF; i++) { w = $(i); sub(/,$/, "", w);
         if (w == "passed") p += $(i-1); if (w == "failed" || w == "error" || w == "errors") f += $(i-1);
         if (w == "skipped") s += $(i-1) } }
       END { print p + 0, f + 0, s + 0 }' "$1"
}

# The cross-language test: bindings/python/tests/test_objects_rust.py with the Rust module
# (rustmod) just built, against the Python package Bazel builds (python_test's runfiles,
# the testing variant whose live-object counters the suite checks), with the interpreter
# Bazel builds it for ($FFK_PYTHON, else python3, as third_party/python_configure.bzl).
# Prints "passed failed skipped".
python_cross() {
  local py=${FFK_PYTHON:-python3} log dir
  if ! "$py" -c "import pytest" 2>/dev/null; then
    echo "[rust] SKIPPED the cross-language pytest: $py has no pytest" >&2
    echo "0 0 1"; return 0
  fi
  if ! (cd "$root" && bazel build //bindings/python:python_test >/dev/null 2>&1); then
    echo "[rust] bazel build //bindings/python:python_test failed" >&2
    echo "0 1 0"; return 1
  fi
  if ! cargo build --offline -q -p ffikit-rustmod >&2; then
    echo "0 1 0"; return 1
  fi
  dir=$(ls -d "$root"/bazel-bin/bindings/python/python_test.runfiles/*/bindings/python | head -1)
  log=$(mktemp)
  (cd "$dir" && FFIKIT_RUSTMOD_LIB="$here/target/debug/libffikit_rustmod.so" PYTHONPATH="$dir" \
     PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider -rs tests/test_objects_rust.py) 2>&1 |
    tee "$log" >&2
  local rc=${PIPESTATUS[0]}
  read -r p f s < <(tail -1 "$log" | count_pytest /dev/stdin)
  rm -f "$log"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  echo "$p $f $s"
}

case "${1:-}" in
  build)
    echo "[rust] $("$cargo" --version) ($cargo)" >&2
    install_prefix && cargo build --offline --all-targets >&2 ;;
  tour)
    # The tour also loads the Rust-built module (rustmod/), which `build` made.
    FFIKIT_RUSTMOD_LIB="$here/target/debug/libffikit_rustmod.so" cargo run --offline -q --example tour ;;
  test|static)
    log=$(mktemp); trap 'rm -f "$log"' EXIT
    if ! install_prefix; then echo "0 1 0"; exit 1; fi
    args=(); [ "$1" = static ] && args=(-p ffikit --features static)
    cargo test --offline --no-fail-fast "${args[@]}" 2>&1 | tee "$log" >&2
    rc=${PIPESTATUS[0]}
    read -r p f s < <(count "$log")
    # A build failure runs no test: count it so it cannot pass silently.
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    echo "cargo test ${args[*]}: $p passed, $f failed, $s skipped" >&2
    if [ "$1" = test ]; then
      read -r pp pf ps < <(python_cross)
      echo "pytest test_objects_rust.py: $pp passed, $pf failed, $ps skipped" >&2
      p=$((p + pp)); f=$((f + pf)); s=$((s + ps))
    fi
    echo "$p $f $s"
    [ "$f" -eq 0 ] ;;
  bench)
    install_prefix && cargo bench --offline --bench peers ;;
  doc)
    install_prefix && cargo doc --offline --no-deps -p ffikit-sys -p ffikit >&2 ;;
  valgrind)
    # Every test binary under memcheck (cargo's runner, so the environment is cargo's):
    # no errors and no definite leaks (libtest's own thread bookkeeping shows as
    # "possibly lost", hence the leak kinds). A binary valgrind fails counts as failed.
    log=$(mktemp); trap 'rm -f "$log"' EXIT
    if ! install_prefix; then echo "0 1 0"; exit 1; fi
    # tests/depth.rs and tests/deep.rs walk 20,000 levels here instead of millions (hours under memcheck).
    FFIKIT_DEPTH_TEST_DEEP=20000 \
    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="valgrind -q --error-exitcode=9 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite" \
      cargo test --offline --no-fail-fast --tests -- --test-threads=1 2>&1 | tee "$log" >&2
    rc=${PIPESTATUS[0]}
    read -r p f s < <(count "$log")
    bad=$(grep -c "process didn't exit successfully" "$log")
    f=$((f + bad))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    echo "valgrind: $p passed, $f failed, $s skipped" >&2
    echo "$p $f $s"
    [ "$f" -eq 0 ] ;;
  package)
    # The two published crates as crates.io would get them: `cargo package` builds each
    # from its packaged files alone (target/package/<crate>-<version>/), so a file left out
    # of the package or a dependency only the workspace provides fails here. ffikit depends
    # on ffikit-sys by path and version; the packaged manifest keeps only the version, so
    # ffikit's build needs ffikit-sys in a registry. crates.io is out of reach (and replaced
    # by Debian's crates in .cargo/config.toml), so a temporary directory source of Debian's
    # crates (ffikit's dev-dependency proptest is there) plus the ffikit-sys just packaged
    # stands in for it. --allow-dirty: this checks what the working tree would package.
    if ! install_prefix; then echo "0 1 0"; exit 1; fi
    work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' ffikit-sys/Cargo.toml | head -n 1)
    p=0; f=0
    if cargo package --offline --allow-dirty -p ffikit-sys >&2; then p=$((p + 1)); else f=$((f + 1)); fi
    crate="$here/target/package/ffikit-sys-$version.crate"
    if [ -f "$crate" ]; then
      mkdir "$work/registry"
      for d in /usr/share/cargo/registry/*/; do ln -s "${d%/}" "$work/registry/"; done
      tar -xzf "$crate" -C "$work/registry"
      printf '{"package":"%s","files":{}}' "$(sha256sum "$crate" | cut -d' ' -f1)" \
        > "$work/registry/ffikit-sys-$version/.cargo-checksum.json"
      if cargo package --offline --allow-dirty -p ffikit \
           --config "source.ffikit-packaged.directory=\"$work/registry\"" \
           --config 'source.crates-io.replace-with="ffikit-packaged"' >&2; then
        p=$((p + 1))
      else
        f=$((f + 1))
      fi
    else
      f=$((f + 1))
    fi
    echo "cargo package: $p passed, $f failed" >&2
    echo "$p $f 0"
    [ "$f" -eq 0 ] ;;
  *)
    echo "usage: $0 build|tour|test|static|valgrind|bench|package" >&2; exit 2 ;;
esac
