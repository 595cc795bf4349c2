"""Finds the Python the project runs with and exposes its headers and libpython.

The interpreter is $FFK_PYTHON (the set-up step points it at the project's virtual
environment), else the first `python3` on PATH. Every path is asked of the interpreter
through sysconfig, never hard-coded, so pyenv, venv and Debian's /usr/bin/python3 all work.
"""

_QUERY = """
import sysconfig, sys
v = sysconfig.get_config_var
print(sysconfig.get_paths()["include"])
print(v("LIBDIR") or "")
print(v("LDLIBRARY") or "")
print(sys.executable)
"""

def _impl(ctx):
    python = ctx.os.environ.get("FFK_PYTHON", "") or ctx.which("python3")
    if not python:
        fail("python3 not found: run ./setup.sh or set FFK_PYTHON")
    res = ctx.execute([str(python), "-c", _QUERY])
    if res.return_code != 0:
        fail("could not query %s: %s" % (python, res.stderr))
    include, libdir, ldlib, executable = res.stdout.strip().split("\n")
    ctx.symlink(include, "include")
    has_lib = libdir and ldlib and ldlib.endswith(".so") and ctx.path(libdir + "/" + ldlib).exists
    if has_lib:
        ctx.symlink(libdir + "/" + ldlib, "lib/" + ldlib)
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
# Headers only: what a CPython extension module compiles against (libpython is not linked).
cc_library(name = "headers", hdrs = glob(["include/**/*.h"]), includes = ["include"])
# Headers plus libpython: for programs that embed the interpreter (benchmarks against list/dict).
cc_library(name = "embed", deps = [":headers"], srcs = {lib}, linkopts = {rpath})
""".format(
        lib = repr(["lib/" + ldlib]) if has_lib else "[]",
        rpath = repr(["-Wl,-rpath," + libdir]) if has_lib else "[]",
    ))
    ctx.file("defs.bzl", "PYTHON = %r\nHAS_LIBPYTHON = %s\n" % (executable, bool(has_lib)))

python_configure = repository_rule(
    implementation = _impl,
    environ = ["FFK_PYTHON", "PATH"],
    local = True,
)
