"""The package as shipped: type information, source lists that match Bazel's (the CUDA
ones and the kernels' nvcc flags too), how setup.py finds a CUDA toolkit, and
an sdist that builds outside the source tree."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

import ffikit

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
ROOT = os.path.normpath(os.path.join(PKG, "..", ".."))


@pytest.mark.parametrize("program", ["user_program.py", "objects_program.py", "structural_program.py",
                                     "enum_program.py"])
def test_typed_user_program_passes_mypy_strict(program):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed")
    env = dict(os.environ, MYPYPATH=PKG)
    cache = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "mypy-cache")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                        os.path.join(HERE, "typed", program)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_type_information_ships_with_the_package():
    pkg_dir = os.path.dirname(ffikit.__file__)
    assert os.path.exists(os.path.join(pkg_dir, "py.typed"))
    assert os.path.exists(os.path.join(pkg_dir, "_core.pyi"))


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_setup_py_compiles_exactly_the_sources_bazel_builds():
    """setup.py globs <component>/src/*.c for the root BUILD's components; the BUILD files
    must glob the same way."""
    with open(os.path.join(ROOT, "BUILD"), encoding="utf-8") as f:
        bazel_components = re.findall(r'"//(\w+)"', re.search(r'^COMPONENTS = \[(.*)\]', f.read(), re.M).group(1))
    assert _setup_py_globals()["COMPONENTS"] == bazel_components, "setup.py's COMPONENTS differ from the root BUILD's"
    for comp in bazel_components:
        with open(os.path.join(ROOT, comp, "BUILD"), encoding="utf-8") as f:
            build = f.read()
        assert re.search(r'glob\(\["src/\*\.c", "src/\*\.h"\]', build), f"{comp}/BUILD no longer globs src/*.c"
    with open(os.path.join(ROOT, "tensor", "BUILD"), encoding="utf-8") as f:
        assert 'CUDA_SRCS = glob(["src/cuda*.c", "src/cuda*.h"])' in f.read(), "tensor's CUDA-only sources changed: update setup.py"
    with open(os.path.join(PKG, "setup.py"), encoding="utf-8") as f:
        setup = f.read()
    assert 'CUDA_ONLY_PREFIX = os.path.join("tensor", "src", "cuda")' in setup


def _setup_py_globals():
    """setup.py's module globals (its functions and constants), without building."""
    import runpy

    import setuptools

    real_setup = setuptools.setup
    setuptools.setup = lambda **kw: None
    try:
        return runpy.run_path(os.path.join(PKG, "setup.py"), run_name="setup_py_under_test")
    finally:
        setuptools.setup = real_setup


def _kernels_genrule(g):
    """tensor/BUILD's kernels_cu_o genrule: (its srcs, its cmd evaluated with NVCC as "NVCC")."""
    import ast

    path = os.path.join(ROOT, "tensor", "BUILD")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "genrule"
                and any(k.arg == "name" and getattr(k.value, "value", None) == "kernels_cu_o" for k in node.keywords)):
            kw = {k.arg: k.value for k in node.keywords}
            names = {"NVCC": "NVCC", "NVCC_FLAGS": " ".join(g["nvcc_flags"]()), "NVCC_WERROR": "NVCC_WERROR"}
            return g["_eval_build_expr"](kw["srcs"], names), g["_eval_build_expr"](kw["cmd"], names)
    raise AssertionError("tensor/BUILD has no kernels_cu_o genrule")


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_setup_py_builds_the_cuda_parts_bazel_builds_with_its_flags():
    """A CUDA build compiles tensor/BUILD's CUDA_SRCS (.c) and the kernels genrule's .cu files,
    with NVCC_FLAGS read from tensor/BUILD and nothing else; the sdist carries all of them."""
    g = _setup_py_globals()
    tensor = os.path.join(ROOT, "tensor")
    cuda_c = {os.path.relpath(p, ROOT) for p in g["library_sources"](cuda=True)} - {
        os.path.relpath(p, ROOT) for p in g["library_sources"](cuda=False)}
    assert cuda_c == {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(tensor, "src", "cuda*.c"))}
    assert cuda_c, "tensor/src/cuda*.c is empty"
    srcs, cmd = _kernels_genrule(g)
    assert {s for s in srcs if s.endswith(".cu")} == {
        os.path.relpath(p, tensor) for p in g["cuda_kernel_sources"]()}, "the genrule's .cu files and setup.py's differ"
    assert all(s.startswith("cuda/") for s in srcs), f"the genrule takes sources outside tensor/cuda/: {srcs}"
    flags = " ".join(g["nvcc_flags"]())
    assert flags in cmd, f"the genrule's command does not use NVCC_FLAGS: {cmd}"
    # Besides NVCC_FLAGS only NVCC_WERROR (warnings as errors: Bazel's build alone, so that a
    # newer nvcc's new warning cannot break a user's pip install).
    rest = cmd.replace(flags, " ").split()
    assert rest[0] == "NVCC" and {t for t in rest if t.startswith("-")} <= {"-c", "-o"}, (
        f"the genrule passes nvcc flags besides NVCC_FLAGS and NVCC_WERROR (setup.py would not): {cmd}")
    assert "-Werror" not in flags, "warnings as errors belong in NVCC_WERROR, not in the flags pip uses"
    for want in ["-Xcompiler -fPIC", "-Xcompiler -fvisibility=hidden", "-gencode"]:
        assert want in flags, f"NVCC_FLAGS lacks {want}"
    carried = set(g["sdist_files"]())
    assert {os.path.join("tensor", s) for s in srcs} | {os.path.join("tensor", "BUILD")} | cuda_c <= carried


def _fake_toolkit(root, nvcc_script="exit 1"):
    """A directory laid out as a CUDA toolkit: bin/nvcc (a shell script), include/cuda_runtime.h
    and lib64/libcudart_static.a (empty files: find_cuda only looks)."""
    for d in ("bin", "include", "lib64"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "bin" / "nvcc").write_text("#!/bin/sh\n" + nvcc_script + "\n")
    (root / "bin" / "nvcc").chmod(0o755)
    (root / "include" / "cuda_runtime.h").write_text("")
    (root / "lib64" / "libcudart_static.a").write_text("")
    return root


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_find_cuda_follows_ffikit_cuda_then_cuda_home_cuda_path_path_and_the_default(tmp_path):
    g = _setup_py_globals()
    find_cuda, SetupError = g["find_cuda"], g["SetupError"]
    home, other = _fake_toolkit(tmp_path / "home"), _fake_toolkit(tmp_path / "other")
    empty = tmp_path / "empty"
    empty.mkdir()
    nowhere = str(tmp_path / "nowhere" / "nvcc")

    def found(**env):
        tk = find_cuda({"PATH": str(empty), **env}, default_nvcc=nowhere)
        return tk and os.path.dirname(os.path.dirname(tk.nvcc))

    assert found(CUDA_HOME=str(home), CUDA_PATH=str(other)) == str(home)
    assert found(CUDA_PATH=str(other), PATH=str(home / "bin")) == str(other)
    assert found(PATH=str(home / "bin")) == str(home)
    tk = find_cuda({"PATH": str(empty)}, default_nvcc=str(other / "bin" / "nvcc"))
    assert tk.include_dir == str(other / "include")
    assert tk.static_runtime == str(other / "lib64" / "libcudart_static.a")
    assert found() is None  # auto, nothing there: built without CUDA
    assert found(FFIKIT_CUDA="0", CUDA_HOME=str(home)) is None
    assert found(FFIKIT_CUDA="1", CUDA_HOME=str(home)) == str(home)
    with pytest.raises(SetupError, match=r"FFIKIT_CUDA=1 but no usable CUDA toolkit.*\$CUDA_HOME/bin/nvcc"):
        found(FFIKIT_CUDA="1", CUDA_HOME=str(tmp_path / "missing"))
    with pytest.raises(SetupError, match=r"FFIKIT_CUDA='yes': expected 1"):
        found(FFIKIT_CUDA="yes")


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_find_cuda_follows_a_wrapper_nvcc_to_its_toolkit_and_skips_an_incomplete_one(tmp_path, capfd):
    """nvcc on PATH may be a script elsewhere (/usr/local/bin/nvcc here): the toolkit is where
    `nvcc --dryrun` says (TOP=); an nvcc without headers or static runtime is not used."""
    g = _setup_py_globals()
    find_cuda, SetupError = g["find_cuda"], g["SetupError"]
    real = _fake_toolkit(tmp_path / "cuda-13.0")
    wrapper = tmp_path / "wrapper"
    (wrapper / "bin").mkdir(parents=True)
    (wrapper / "bin" / "nvcc").write_text(f"#!/bin/sh\necho '#$ TOP={real}/bin/..' >&2\n")
    (wrapper / "bin" / "nvcc").chmod(0o755)
    nowhere = str(tmp_path / "nowhere" / "nvcc")
    tk = find_cuda({"PATH": str(wrapper / "bin")}, default_nvcc=nowhere)
    assert tk.nvcc == str(wrapper / "bin" / "nvcc") and tk.include_dir == os.path.join(str(real), "include")

    incomplete = _fake_toolkit(tmp_path / "incomplete")
    (incomplete / "lib64" / "libcudart_static.a").unlink()
    assert find_cuda({"PATH": str(incomplete / "bin")}, default_nvcc=nowhere) is None
    assert "building without CUDA" in capfd.readouterr().err
    with pytest.raises(SetupError, match="libcudart_static.a"):
        find_cuda({"PATH": str(incomplete / "bin"), "FFIKIT_CUDA": "1"}, default_nvcc=nowhere)


def test_every_spec_top_level_name_exists():
    for name in ["Object", "Function", "Array", "List", "Map", "Dict", "Shape", "String", "Bytes", "Device",
                 "device", "DLDeviceType", "dtype", "Error", "convert", "register_global_func", "get_global_func",
                 "remove_global_func", "list_global_func_names", "register_error", "load_module", "testing",
                 "__version__", "int8", "float64", "bfloat16", "bool"]:
        assert hasattr(ffikit, name), name


# Headers of Debian's libdlpack-dev and libxxhash-dev: the package must build without them.
SYSTEM_ONLY_HEADERS = {"dlpack", "xxhash.h", "xxh3.h", "xxh_x86dispatch.h"}


def _setup_py_extensions():
    """What setup.py builds, without building: its RUNTIME (libffikit.so) and CORE (_core)
    descriptions, with their sources, include dirs and macros."""
    import runpy

    import setuptools

    seen = {}
    real_setup = setuptools.setup
    setuptools.setup = lambda **kw: seen.update(kw)
    try:
        g = runpy.run_path(os.path.join(PKG, "setup.py"), run_name="setup_py_under_test")
    finally:
        setuptools.setup = real_setup
    assert seen["ext_modules"] == [g["CORE"]], "setup.py builds one extension, _core"
    return [g["RUNTIME"], g["CORE"]]


def _include_dirs_without_system_only_headers(cc, tmp_path):
    """The compiler's default include directories, with /usr/include replaced by a copy made
    of symlinks that leaves out DLPack's and xxHash's headers: a machine without the two
    Debian packages, as far as this compiler can tell."""
    r = subprocess.run([cc, "-xc", "-E", "-v", os.devnull], capture_output=True, text=True, check=True)
    lines = r.stderr.splitlines()
    start = lines.index("#include <...> search starts here:") + 1
    dirs = [line.strip() for line in lines[start:lines.index("End of search list.")]]
    mirror = tmp_path / "usr-include"
    mirror.mkdir()
    for name in os.listdir("/usr/include"):
        if name not in SYSTEM_ONLY_HEADERS:
            os.symlink(os.path.join("/usr/include", name), mirror / name)
    return [str(mirror) if os.path.realpath(d) == "/usr/include" else d for d in dirs]


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_setup_py_builds_without_system_dlpack_or_xxhash(tmp_path):
    """Every C source setup.py compiles preprocesses with /usr/include/dlpack and
    /usr/include/xxhash.h out of sight, and takes DLPack and xxHash from third_party/."""
    import sysconfig

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc})")
    system = [f"-isystem{d}" for d in _include_dirs_without_system_only_headers(cc, tmp_path)]
    vendored = {os.path.join(ROOT, "third_party", "dlpack", "include", "dlpack", "dlpack.h"),
                os.path.join(ROOT, "third_party", "xxhash", "include", "xxhash.h"),
                os.path.join(ROOT, "third_party", "yyjson", "include", "yyjson.h"),
                os.path.join(ROOT, "third_party", "yyjson", "src", "yyjson.c")}
    used = set()
    for ext in _setup_py_extensions():
        flags = ["-nostdinc", "-std=c11", *system]
        flags += [f"-D{name}" if value is None else f"-D{name}={value}" for name, value in ext.define_macros]
        flags += [f"-I{os.path.join(PKG, d)}" for d in ext.include_dirs] + [f"-I{sysconfig.get_paths()['include']}"]
        for src in ext.sources:
            path = os.path.normpath(os.path.join(PKG, src))
            r = subprocess.run([cc, *flags, "-M", path], capture_output=True, text=True)
            assert r.returncode == 0, f"{src} does not preprocess without the system headers:\n{r.stderr}"
            deps = {os.path.normpath(d) for d in r.stdout.replace("\\\n", " ").split()[1:]}
            assert not [d for d in deps if d.startswith("/usr/include/dlpack") or "/usr/include/xx" in d], src
            used |= deps & vendored
    assert used == vendored, "setup.py no longer takes every vendored file"


SDIST_MUST_HOLD = [
    "setup.py", "pyproject.toml", "README.md", "ffikit/__init__.py", "ffikit/libinfo.py", "ffikit/_core.pyi",
    "ffikit/py.typed", "src/module.c", "src/ffikit_py.h", "csrc/ffi/src/any.c", "csrc/ffi/include/ffikit/base.h",
    "csrc/containers/include/ffikit/array.h", "csrc/tensor/include/ffikit/tensor.h", "csrc/include/ffikit/ffikit.h",
    "csrc/containers/include/ffikit/unstable/list.h", "csrc/ffi/include/ffikit/unstable/reflect.h",
    "csrc/testing/testing.c", "csrc/testing/testing.h", "csrc/third_party/dlpack/include/dlpack/dlpack.h",
    "csrc/third_party/dlpack/LICENSE", "csrc/third_party/xxhash/include/xxhash.h", "csrc/third_party/xxhash/LICENSE",
    "LICENSE", "NOTICE", "csrc/LICENSE", "csrc/NOTICE",
    "csrc/ffikit.pc.in", "csrc/cmake/ffikitConfig.cmake.in", "csrc/cmake/ffikitConfigVersion.cmake.in",
    "csrc/third_party/yyjson/include/yyjson.h", "csrc/third_party/yyjson/src/yyjson.c", "csrc/third_party/yyjson/LICENSE",
    "csrc/tensor/src/cuda.c", "csrc/tensor/src/cuda_internal.h", "csrc/tensor/BUILD",
] + [f"csrc/tensor/cuda/{name}" for name in (sorted(os.listdir(os.path.join(ROOT, "tensor", "cuda")))
                                              if os.path.isdir(os.path.join(ROOT, "tensor", "cuda")) else [])]


@pytest.mark.rebuild
@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "ffi", "BUILD")), reason="not in a source checkout")
def test_sdist_builds_and_imports_outside_the_source_tree(tmp_path):
    """setup.py sdist, unpacked away from the repository, pip-installed into a fresh venv
    with --no-build-isolation: it carries its C tree (csrc/) and builds from it alone.
    Built without CUDA (FFIKIT_CUDA=0): test_cuda_build.py builds the CUDA variant."""
    import sysconfig
    import tarfile

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc})")
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(dist)], cwd=PKG,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    (archive,) = dist.glob("ffikit-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert not [n for n in names if ".." in n.split("/")], "the sdist has paths outside its directory"
        top = names[0].split("/")[0]
        missing = [f for f in SDIST_MUST_HOLD if f"{top}/{f}" not in names]
        assert not missing, f"the sdist lacks {missing}"
        assert not [n for n in names if n.endswith((".so", ".o"))], "the sdist carries build outputs"
        # The "data" filter (3.12+, and 3.10.12/3.11.4 backports) refuses links and absolute
        # paths out of the tree; older interpreters have no filter argument.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp_path / "unpacked", filter="data")
        else:
            tar.extractall(tmp_path / "unpacked")
    src = tmp_path / "unpacked" / top

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "setuptools", "wheel"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"setuptools and wheel could not be installed into the throwaway venv: {r.stderr[-300:]}")
    # The fresh venv sees only itself: no PYTHONPATH of the process running the suite.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-build-isolation",
                        "--no-deps", str(src)], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(env, FFIKIT_CUDA="0"))
    assert r.returncode == 0, r.stdout + r.stderr
    probe = ("import ffikit, ffikit.libinfo as l; "
             "print(ffikit.__file__); print(l.find_lib_path()); print(ffikit.get_global_func('testing.echo')(3))")
    r = subprocess.run([py, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    init, lib, echoed = r.stdout.split()
    assert init.startswith(str(venv)) and lib.startswith(str(venv)) and lib.endswith("/ffikit/lib/libffikit.so")
    assert echoed == "3"
