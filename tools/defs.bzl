"""Build macros shared by every ffikit component, test and benchmark.

Each component is built twice from the same sources:
  :<name>          the release library (what libffikit.so/.a, `bazel run //:install` and
                   the benchmarks link): optimised (-O2) with NDEBUG, so no assertions
  :<name>_testing  the same code compiled with FFK_TESTING=1, which turns on the
                   live-object counters and the failing-allocator hook (ffikit/debug.h),
                   and with assertions on
Tests link the _testing variants; nothing else does.
"""

# The flags of every libffikit.so, in ONE place: Bazel's builds read them here, and
# bindings/python/setup.py reads the same lists from this file (module-level lists of
# string literals, so a Python AST walk evaluates them), so the wheel's library is built
# and linked as the installed one is.
#
# Release code generation: optimised and assertion-free (NDEBUG: RELEASE_DEFINES).
RELEASE_COPTS = ["-O2"]
RELEASE_DEFINES = ["NDEBUG"]

# Code generation of the library's sources, in every form. Only FFK_API symbols are
# exported; -fno-semantic-interposition lets a call to an exported function from its own
# file bind directly (no PLT, inlinable), as in the static library: ffikit's functions are
# not meant to be interposed.
LIBRARY_CODEGEN_COPTS = ["-fvisibility=hidden", "-fno-semantic-interposition"]

# The link of every libffikit.so (the root BUILD's, the testing one bindings/python builds,
# and the wheel's). One soname everywhere, libffikit.so: a module linked against any install
# binds by soname to the copy already loaded in the process. Bazel's toolchain always adds
# -lstdc++; --as-needed keeps the pure-C library free of it.
LIBFFIKIT_LINKOPTS = ["-Wl,-soname,libffikit.so", "-Wl,--as-needed"]

C_OPTS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Werror",
    "-D_GNU_SOURCE",
] + LIBRARY_CODEGEN_COPTS

# Test code (the GoogleTest files, not the library they test, whose flags are above and in
# .bazelrc) is compiled -Og with line tables only (-g1): enough for a sanitizer's or a
# debugger's backtrace, at about a third of the compile time (tests/containers/dict_test.cc,
# user CPU-s, gcc 12: -O2 -g 10.6 -> 2.9; under ASan+UBSan 20.8 -> 7.5; under TSan 7.1 ->
# 2.8), and the tests' C++ is most of what every configuration (default, asan, tsan)
# compiles. These come after --copt, so they win over .bazelrc's -O2 -g and the sanitizer
# configs' -O1.
CC_TEST_OPTS = ["-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers", "-Og", "-g1"]

def _full_label(label):
    """//ffi -> //ffi:ffi, so that a suffix names the sibling target."""
    return label if ":" in label else label + ":" + label.split("/")[-1]

def ffk_library(name, srcs, hdrs, components = [], deps = [], linkopts = [], local_defines = [], **kwargs):
    """A component library in its release and _testing forms.

    components:    other ffikit components (labels of ffk_library targets) this one uses;
                   the _testing form depends on their _testing forms.
    deps:          external dependencies, identical in both forms.
    local_defines: macros for this component's own sources (e.g. FFK_HAS_CUDA), in both
                   forms; the _testing form adds FFK_TESTING=1.
    """
    forms = [("", RELEASE_COPTS, RELEASE_DEFINES), ("_testing", [], ["FFK_TESTING=1"])]
    for suffix, copts, defines in forms:
        native.cc_library(
            name = name + suffix,
            srcs = srcs,
            hdrs = hdrs,
            includes = ["include"],
            copts = C_OPTS + copts,
            local_defines = local_defines + defines,
            deps = [_full_label(c) + suffix for c in components] + deps,
            linkopts = linkopts,
            linkstatic = True,
            # Every object file goes into libffikit.so, referenced or not.
            alwayslink = True,
            visibility = ["//visibility:public"],
            **kwargs
        )

def ffk_cc_test(name, srcs, deps = [], copts = [], **kwargs):
    """A GoogleTest suite linked statically against the _testing libraries."""
    native.cc_test(
        name = name,
        size = kwargs.pop("size", "small"),
        srcs = srcs,
        copts = CC_TEST_OPTS + copts,
        deps = deps + ["//tests/support:ffk_test", "@system_gtest//:gtest"],
        linkstatic = True,
        **kwargs
    )

def _ffk_copy_files_impl(ctx):
    outs = []
    for f in ctx.files.srcs:
        # A header keeps its path below include/ffikit/ (the unstable tier's unstable/list.h);
        # any other file its basename.
        _, sep, below = f.short_path.rpartition("include/ffikit/")
        out = ctx.actions.declare_file(ctx.attr.prefix + "/" + (below if sep else f.basename))
        ctx.actions.symlink(output = out, target_file = f)
        outs.append(out)
    return [DefaultInfo(files = depset(outs), runfiles = ctx.runfiles(files = outs))]

# Places files under <package>/<prefix>/<basename>: e.g. the public headers of every
# component in the one include directory the Python package ships (ffikit/include/ffikit),
# the unstable tier's in its unstable/ directory.
ffk_copy_files = rule(
    implementation = _ffk_copy_files_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = True, mandatory = True),
        "prefix": attr.string(mandatory = True),
    },
)
