#!/usr/bin/env bash
# check_layers.sh passes a tree whose includes point down and fails each kind of upward
# include (a public header of a higher layer, a quoted path into a higher layer) and each
# include between the siblings containers and tensor.
set -uo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check_layers.sh
[[ -x $check ]] || check=tests/layering/check_layers.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}/tree
fail=0

make_tree() {
  rm -rf "$tmp"
  mkdir -p "$tmp"/{ffi,containers,tensor,glue,testing}/include/ffikit "$tmp"/{ffi,containers,tensor,glue,testing}/src
  echo '#include <stdint.h>' > "$tmp/ffi/include/ffikit/any.h"
  echo '#include <ffikit/any.h>' > "$tmp/containers/include/ffikit/array.h"
  echo '#include <ffikit/any.h>' > "$tmp/tensor/include/ffikit/tensor.h"
  printf '#include <ffikit/array.h>\n#include <ffikit/tensor.h>\n' > "$tmp/glue/src/glue.c"
  printf '#include <ffikit/tensor.h>\n#include "internal.h"\n' > "$tmp/testing/src/testing.c"
  printf '#include <ffikit/any.h>\n' > "$tmp/ffi/src/any.c"
}

expect() {  # expect pass|fail DESCRIPTION
  if "$check" "$tmp" > "$tmp.out" 2>&1; then got=pass; else got=fail; fi
  if [[ $got != "$1" ]]; then echo "FAIL: $2: expected $1, got $got"; cat "$tmp.out"; fail=1; else echo "ok: $2"; fi
}

make_tree; expect pass "includes that point down"
make_tree; echo '#include <ffikit/array.h>' >> "$tmp/ffi/src/any.c"; expect fail "ffi includes a containers header"
make_tree; echo '  #  include <ffikit/tensor.h>' >> "$tmp/ffi/src/any.c"; expect fail "ffi includes a tensor header (spaced)"
make_tree; mkdir -p "$tmp/containers/include/ffikit/unstable"; echo '#include <ffikit/array.h>' > "$tmp/containers/include/ffikit/unstable/list.h"
echo '#include <ffikit/unstable/list.h>' >> "$tmp/testing/src/x.c"; expect pass "testing includes a containers unstable header"
echo '#include <ffikit/unstable/list.h>' >> "$tmp/ffi/src/any.c"; expect fail "ffi includes a containers unstable header"
make_tree; echo '#include <ffikit/tensor.h>' >> "$tmp/containers/include/ffikit/array.h"; expect fail "containers includes a tensor header"
make_tree; echo '#include "../../tensor/src/tensor_internal.h"' >> "$tmp/containers/src/x.c"; expect fail "containers includes a tensor path"
make_tree; echo '#include "testing/testing.h"' >> "$tmp/tensor/src/x.c"; expect fail "tensor includes testing"
make_tree; echo '#include <ffikit/array.h>' >> "$tmp/tensor/include/ffikit/tensor.h"; expect fail "tensor includes a containers header (siblings)"
make_tree; echo '#include "../../containers/src/table.h"' >> "$tmp/tensor/src/x.c"; expect fail "tensor includes a containers path (siblings)"
make_tree; echo '#include "glue/src/x.h"' >> "$tmp/containers/src/x.c"; expect fail "containers includes glue"
make_tree; echo '#include "glue/src/x.h"' >> "$tmp/testing/src/x.c"; expect pass "testing includes glue"
exit $fail
