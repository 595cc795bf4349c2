"""Detects the CUDA toolkit ($CUDA_PATH, default /usr/local/cuda).

When nvcc and cuda_runtime.h are found, @cuda exposes headers and cudart (ffikit links
cudart_static, which loads the driver only at the first CUDA call; cudart_shared is for
probes) and defs.bzl says HAS_CUDA = True; otherwise the same targets exist but are
empty, and CUDA-only targets are marked incompatible (Bazel reports them as SKIPPED).
"""

def _impl(ctx):
    root = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    found = ctx.path(root + "/bin/nvcc").exists and ctx.path(root + "/include/cuda_runtime.h").exists
    if found:
        for d in ["include", "lib64", "bin"]:
            ctx.symlink(root + "/" + d, d)
        ctx.template("BUILD", ctx.attr.build_file)
    else:
        ctx.file("BUILD", "\n".join([
            'package(default_visibility = ["//visibility:public"])',
            'cc_library(name = "headers")',
            'cc_library(name = "cudart_shared")',
            'cc_library(name = "cudart_static")',
        ]))
    ctx.file("defs.bzl", "HAS_CUDA = %s\nNVCC = %r\n" % (found, root + "/bin/nvcc"))

cuda_configure = repository_rule(
    implementation = _impl,
    attrs = {"build_file": attr.label()},
    environ = ["CUDA_PATH"],
    local = True,
)
