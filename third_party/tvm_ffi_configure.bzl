"""Finds Apache TVM-FFI (the `apache-tvm-ffi` wheel) for the benchmarks, and only for them.

The benchmarks put TVM-FFI beside ffikit as a peer; the library never depends on it. The
wheel is looked up in the interpreter the project runs with ($FFK_PYTHON, as
python_configure does), or taken from $TVM_FFI_ROOT (a directory with include/ and
lib/libtvm_ffi.so). The package is located without being imported.

@tvm_ffi//:tvm_ffi is its headers and libtvm_ffi.so when found, else an empty library;
@tvm_ffi//:defs.bzl says which (HAS_TVM_FFI) and where (TVM_FFI_ROOT), so the benchmarks
build either way and say at run time that the TVM-FFI peer was skipped.
"""

_QUERY = """
import importlib.util, os
spec = importlib.util.find_spec("tvm_ffi")
print(list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations else "")
"""

def _impl(ctx):
    root = ctx.os.environ.get("TVM_FFI_ROOT", "")
    if not root:
        python = ctx.os.environ.get("FFK_PYTHON", "") or ctx.which("python3")
        if python:
            res = ctx.execute([str(python), "-c", _QUERY])
            if res.return_code == 0:
                root = res.stdout.strip()
    found = bool(root) and ctx.path(root + "/include/tvm/ffi/c_api.h").exists and \
            ctx.path(root + "/lib/libtvm_ffi.so").exists
    if found:
        ctx.symlink(root + "/include", "include")
        ctx.symlink(root + "/lib/libtvm_ffi.so", "lib/libtvm_ffi.so")
        ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
cc_import(name = "so", shared_library = "lib/libtvm_ffi.so")
# Its own dlpack.h (1.x) comes with it: include TVM-FFI only from files that include no ffikit header.
cc_library(
    name = "tvm_ffi",
    hdrs = glob(["include/tvm/**/*.h", "include/dlpack/*.h"]),
    includes = ["include"],
    defines = ["FFK_BENCH_HAS_TVM_FFI=1"],
    linkopts = ["-Wl,-rpath,{root}/lib"],
    deps = [":so"],
)
""".format(root = root))
    else:
        ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
cc_library(name = "tvm_ffi")
""")
    ctx.file("defs.bzl", "HAS_TVM_FFI = %s\nTVM_FFI_ROOT = %r\n" % (found, root if found else ""))

tvm_ffi_configure = repository_rule(
    implementation = _impl,
    environ = ["FFK_PYTHON", "TVM_FFI_ROOT", "PATH"],
    local = True,
)
