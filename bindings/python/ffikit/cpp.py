"""Build C, C++ and CUDA sources into an ffikit module and load it (tvm_ffi.cpp's API).

:func:`load_inline` compiles source text, :func:`load` compiles files; :func:`build_inline`
and :func:`build` do the same and return the library's path instead of loading it. The
compilers are the system's: ``$CC`` (else ``cc``) for ``.c``, ``$CXX`` (else ``c++``) for
C++, and ``nvcc`` for CUDA (``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``, ``PATH``, then
``/usr/local/cuda/bin``). Every module is linked against the ``libffikit.so`` this process
uses (:func:`ffikit.libinfo.find_lib_path`, with an rpath to it), so it shares the
process's one runtime: its registry, type table and error slots.

Caching: a build lives in ``<cache>/<name>_<key>/`` where ``<cache>`` is
``$FFIKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ffikit``, else ``~/.cache/ffikit``, and
``<key>`` hashes the sources, the flags, the compilers' identities, ffikit's version and
ABI and the library linked against. A build is reused while its key matches and none of
the files it read (sources and the headers they include, recorded by the compiler) has
changed; otherwise it is rebuilt. A file lock in the build directory makes parallel
processes build once: the others wait, then load what the first built. The library is
written under a temporary name and renamed into place, so a reader never sees half of it.

Invariant: ``stamp.json`` in a build directory is written after the library it describes,
so a stamp whose key and files match means the library beside it is complete.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Optional, Union

from ._object import Module, load_module

__all__ = ["BuildError", "build", "build_inline", "load", "load_inline", "cache_dir"]

#: Source text or file path(s): one string or a sequence of them.
SourceArg = Optional[Union[str, Sequence[str]]]
#: The functions to export: one name, a sequence of names, or {name: signature and/or doc}.
FunctionsArg = Optional[Union[str, Sequence[str], Mapping[str, str]]]

_LANG_OF_SUFFIX = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".cu": "cuda"}
_INLINE_FILE = {"c": "main.c", "cpp": "main.cpp", "cuda": "cuda.cu"}
_LANG_WORD = {"c": "C", "cpp": "C++", "cuda": "CUDA"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Variables of the sanitizer runs (run_pytest.sh preloads the runtime into Python) that must
# not reach the compilers: an instrumented runtime preloaded into gcc would report gcc.
_SANITIZER_ENV = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS")
# Bumped when the layout of a build directory or the way a key is computed changes.
_CACHE_FORMAT = 1


class BuildError(RuntimeError):
    """A compiler or the linker failed (or could not be found) while building a module.

    The message holds the command line and what the command printed; the same are in
    ``command`` (a list of arguments), ``returncode`` and ``output``.
    """

    def __init__(self, message: str, command: Sequence[str] = (), returncode: int | None = None,
                 output: str = "") -> None:
        super().__init__(message)
        self.command = list(command)
        self.returncode = returncode
        self.output = output


def cache_dir() -> Path:
    """The directory builds are cached under: ``$FFIKIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/ffikit``, else ``~/.cache/ffikit`` (not created here)."""
    explicit = os.environ.get("FFIKIT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "ffikit"
    return Path("~/.cache/ffikit").expanduser()


# ---- arguments ------------------------------------------------------------------------

def _as_list(value: SourceArg, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    items: list[str] = []
    for v in value:
        if not isinstance(v, (str, os.PathLike)):
            raise TypeError(f"{what} must be strings, got {type(v).__name__}")
        items.append(os.fspath(v))
    return items


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"module name {name!r} is not usable as a file name")


def _export_specs(functions: FunctionsArg, name: str) -> list[tuple[str, str | None, str | None]]:
    """(function, signature or None, doc or None) for each function to export."""
    if functions is None:
        entries: list[tuple[str, str]] = []
    elif isinstance(functions, str):
        entries = [(functions, "")]
    elif isinstance(functions, Mapping):
        entries = []
        for fn, value in functions.items():
            if not isinstance(value, str):
                raise TypeError(f"functions[{fn!r}] of module `{name}` must be a signature or doc string, "
                                f"got {type(value).__name__}")
            entries.append((fn, value))
    else:
        entries = [(fn, "") for fn in functions]
    specs: list[tuple[str, str | None, str | None]] = []
    seen: set[str] = set()
    for fn, value in entries:
        if not isinstance(fn, str) or not _IDENTIFIER.match(fn):
            raise ValueError(f"cannot export {fn!r} from module `{name}`: a function name must be a C identifier")
        if fn in seen:
            raise ValueError(f"function `{fn}` is listed twice for module `{name}`")
        seen.add(fn)
        text = value.strip()
        signature: str | None = None
        doc: str | None = None
        if text.startswith("("):
            first, _, rest = text.partition("\n")
            signature, doc = first.strip(), rest.strip() or None
        elif text:
            doc = text
        specs.append((fn, signature, doc))
    return specs


def _c_string(text: str) -> str:
    """`text` as a C string literal: printable ASCII as is, every other byte escaped."""
    out = ['"']
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


def _quick_names(quick: bool | Sequence[str], specs: Sequence[tuple[str, str | None, str | None]],
                 name: str) -> set[str]:
    """The exported functions that get FFK_FUNCTION_QUICK: all of them for True, none for
    False, else the names listed (each one of `functions`)."""
    if isinstance(quick, bool):
        return {fn for fn, _, _ in specs} if quick else set()
    if isinstance(quick, str) or not isinstance(quick, Sequence):
        raise TypeError(f"quick of module `{name}` must be True, False or a list of function names, "
                        f"got {type(quick).__name__}")
    exported = {fn for fn, _, _ in specs}
    for fn in quick:
        if fn not in exported:
            raise ValueError(f"quick names `{fn}`, which module `{name}` does not export through `functions`")
    return set(quick)


def _exports_glue(specs: Sequence[tuple[str, str | None, str | None]], quick: Collection[str] = ()) -> str:
    """The module-convention symbols for `specs`, appended to the source that defines them;
    the functions in `quick` are exported with FFK_FUNCTION_QUICK."""
    lines = ["", '#line 1 "<ffikit exports>"']
    for fn, signature, doc in specs:
        if signature is None:
            lines.append(f"FFK_MODULE_EXPORT({fn}, {fn})")
        else:
            lines.append(f"FFK_MODULE_EXPORT_TYPED({fn}, {_c_string(signature)}, {fn})")
        if doc is not None:
            lines.append(f"FFK_MODULE_SYMBOL const char *const ffikit_doc_{fn} = {_c_string(doc)};")
        if fn in quick:
            lines.append(f"FFK_MODULE_EXPORT_FLAGS({fn}, FFK_FUNCTION_QUICK)")
    return "\n".join(lines) + "\n"


# A weak ffikit_abi_version in a unit of its own: sources that write FFK_MODULE_ABI_VERSION
# themselves override it (a strong definition wins at link time), the others need not.
_ABI_UNIT = """\
#include <ffikit/module.h>
FFK_MODULE_SYMBOL __attribute__((weak)) const uint32_t ffikit_abi_version = FFK_ABI_VERSION;
"""


# ---- compilers ------------------------------------------------------------------------

def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _SANITIZER_ENV}


def _find_nvcc() -> str | None:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
            return os.path.join(home, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.access(default, os.X_OK) else None


def _cuda_lib_dir(nvcc: str) -> str:
    """Where libcudart is for `nvcc` (nvcc may be a wrapper outside the toolkit)."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                  os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "/usr/local/cuda"]
    for home in candidates:
        if home:
            for sub in ("lib64", "lib"):
                d = os.path.join(home, sub)
                if os.path.exists(os.path.join(d, "libcudart.so")):
                    return d
    raise BuildError(f"found nvcc at {nvcc} but no libcudart.so beside it; set $CUDA_HOME to the CUDA toolkit")


def _compiler(lang: str, module: str) -> list[str]:
    """The command line that starts the compiler for `lang`, checked to exist."""
    if lang == "cuda":
        nvcc = _find_nvcc()
        if nvcc is None:
            raise BuildError(f"module `{module}` has CUDA sources, but nvcc was not found (looked in $CUDA_HOME/bin, "
                             "$CUDA_PATH/bin, PATH and /usr/local/cuda/bin)")
        return [nvcc]
    var, default = ("CC", "cc") if lang == "c" else ("CXX", "c++")
    argv = shlex.split(os.environ.get(var) or default)
    if not argv or shutil.which(argv[0]) is None:
        origin = f"${var}" if os.environ.get(var) else "the default"
        where = "" if argv and os.sep in argv[0] else " on PATH"
        raise BuildError(f"module `{module}` needs a {_LANG_WORD[lang]} compiler, but `{' '.join(argv) or default}` "
                         f"({origin}) was not found{where}; install one (e.g. gcc or clang) or set ${var} to it")
    return argv


@functools.lru_cache(maxsize=None)
def _compiler_identity(argv: tuple[str, ...]) -> str:
    """What `argv --version` prints, with the executable's path: a new compiler, a new key."""
    exe = shutil.which(argv[0]) or argv[0]
    try:
        proc = subprocess.run([*argv, "--version"], capture_output=True, text=True, env=_clean_env(), check=False)
        version = proc.stdout.strip()
    except OSError as e:
        version = f"unrunnable: {e}"
    return f"{os.path.realpath(exe)}\n{version}"


@functools.lru_cache(maxsize=None)
def _detected_cuda_archs() -> tuple[str, ...]:
    """The compute capabilities ("9.0") of the GPUs nvidia-smi sees; none without it."""
    if not shutil.which("nvidia-smi"):
        return ()
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, env=_clean_env(), timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if proc.returncode != 0:
        return ()
    return tuple(sorted({line.strip() for line in proc.stdout.splitlines() if line.strip()}))


def _cuda_arch_flags() -> list[str]:
    """-gencode flags: $FFIKIT_CUDA_ARCH_LIST ("8.9 9.0a"), else the GPUs nvidia-smi sees,
    else none (nvcc's default architecture, whose PTX the driver compiles for newer GPUs)."""
    archs = os.environ.get("FFIKIT_CUDA_ARCH_LIST", "").replace(",", " ").replace(";", " ").split()
    flags: list[str] = []
    for arch in archs or _detected_cuda_archs():
        if not re.fullmatch(r"\d+\.\d+[a-z]?", arch):
            raise ValueError(f"CUDA architecture {arch!r} in $FFIKIT_CUDA_ARCH_LIST is not like '8.9' or '9.0a'")
        num = arch.replace(".", "")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
    return flags


def _library_identity() -> tuple[str, str]:
    """The libffikit.so to link against, and what identifies its build."""
    from . import libinfo

    lib = libinfo.find_lib_path()
    st = os.stat(lib)
    return lib, f"{lib}:{st.st_size}:{st.st_mtime_ns}"


# ---- one build ------------------------------------------------------------------------

class _Plan:
    """Everything one build compiles and links, and the key that names it."""

    def __init__(self, name: str, units: list[tuple[str, str]], extra_cflags: Sequence[str],
                 extra_cuda_cflags: Sequence[str], extra_ldflags: Sequence[str],
                 extra_include_paths: Sequence[str], key_material: list[object]) -> None:
        from . import _core, libinfo

        self.name = name
        self.units = units  # (language, source path: absolute, or relative to the build directory)
        langs = sorted({lang for lang, _ in units})
        self.compilers = {lang: _compiler(lang, name) for lang in langs}
        self.lib, lib_identity = _library_identity()
        includes = [str(Path(p).resolve()) for p in extra_include_paths] + libinfo.find_include_paths()
        inc = [f"-I{p}" for p in includes]
        self.flags = {
            "c": ["-O2", "-fPIC", *inc, *extra_cflags],
            "cpp": ["-std=c++17", "-O2", "-fPIC", *inc, *extra_cflags],
            "cuda": ["-std=c++17", "-O2", "-Xcompiler", "-fPIC", *(_cuda_arch_flags() if "cuda" in langs else ()),
                     *inc, *extra_cuda_cflags],
        }
        self.linker = self.compilers["cpp"] if "cpp" in langs else \
            _compiler("cpp", name) if "cuda" in langs else self.compilers["c"]
        lib_dir = os.path.dirname(self.lib)
        # Linked even when nothing calls into it (toolchains default to --as-needed), so the
        # module always names the process's runtime.
        self.ldflags = ["-shared", "-Wl,--push-state,--no-as-needed", self.lib, "-Wl,--pop-state",
                        f"-Wl,-rpath,{lib_dir}"]
        if "cuda" in langs:
            cuda_lib = _cuda_lib_dir(self.compilers["cuda"][0])
            self.ldflags += [f"-L{cuda_lib}", "-lcudart", f"-Wl,-rpath,{cuda_lib}"]
        self.ldflags += list(extra_ldflags)
        material = {
            "format": _CACHE_FORMAT, "name": name, "version": _core.__version__, "abi": list(_core._abi_version()),
            "library": lib_identity, "units": key_material,
            "compilers": {lang: _compiler_identity(tuple(argv)) for lang, argv in self.compilers.items()},
            "linker": _compiler_identity(tuple(self.linker)),
            "flags": {lang: self.flags[lang] for lang in langs}, "ldflags": self.ldflags,
        }
        blob = json.dumps(material, sort_keys=True).encode()
        self.key = hashlib.sha256(blob).hexdigest()[:16]

    def compile_and_link(self, build_dir: Path, output: Path) -> list[str]:
        """Compiles every unit (in parallel) and links `output` atomically; returns the
        files the compilers read. Raises BuildError with the failing command's output."""
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=build_dir))
        try:
            procs = []
            objects = []
            sources = [(lang, str(build_dir / src)) for lang, src in self.units]
            for i, (lang, src) in enumerate(sources):
                obj = tmp / f"{i}_{Path(src).name}.o"
                dep = tmp / f"{i}.d"
                cmd = [*self.compilers[lang], *self.flags[lang], "-c", src, "-o", str(obj), "-MD", "-MF", str(dep)]
                procs.append((cmd, dep, _spawn(cmd)))
                objects.append(str(obj))
            failures = []
            deps: list[str] = [src for _, src in sources]
            for cmd, dep, proc in procs:
                out, _ = proc.communicate()
                if proc.returncode != 0:
                    failures.append((cmd, proc.returncode, out))
                elif dep.exists():
                    deps += _read_depfile(dep.read_text())
            if failures:
                cmd, rc, out = failures[0]
                raise BuildError(f"building module `{self.name}` failed: the compiler exited with status {rc}\n"
                                 f"command: {shlex.join(cmd)}\n{out}", cmd, rc, out)
            linked = tmp / output.name
            cmd = [*self.linker, *objects, "-o", str(linked), *self.ldflags]
            proc = _spawn(cmd)
            out, _ = proc.communicate()
            if proc.returncode != 0:
                raise BuildError(f"linking module `{self.name}` failed: the linker exited with status "
                                 f"{proc.returncode}\ncommand: {shlex.join(cmd)}\n{out}", cmd, proc.returncode, out)
            os.replace(linked, output)
            return sorted(set(deps))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _spawn(cmd: list[str]) -> subprocess.Popen[str]:
    try:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_clean_env())
    except OSError as e:
        raise BuildError(f"cannot run `{cmd[0]}`: {e}", cmd) from e


def _read_depfile(text: str) -> list[str]:
    """The prerequisites of a make rule written by -MD (`out.o: a.c b.h \\` ...)."""
    _, _, rest = text.replace("\\\n", " ").partition(": ")
    paths = []
    for word in re.split(r"(?<!\\)\s+", rest.strip()):
        if word:
            paths.append(os.path.abspath(word.replace("\\ ", " ")))
    return paths


def _file_state(paths: Sequence[str]) -> list[list[object]]:
    state: list[list[object]] = []
    for p in paths:
        try:
            st = os.stat(p)
            state.append([p, st.st_size, st.st_mtime_ns])
        except OSError:
            state.append([p, -1, -1])
    return state


def _is_fresh(stamp: Path, output: Path, key: str) -> bool:
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or recorded.get("key") != key or not output.exists():
        return False
    deps = recorded.get("files", [])
    return bool(_file_state([d[0] for d in deps]) == deps)


def _write_atomic(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _build(plan: _Plan, build_directory: str | os.PathLike[str] | None,
           write_sources: Mapping[str, str] | None = None) -> str:
    """Builds `plan` unless a fresh build exists; returns the library's path."""
    if build_directory is None:
        build_dir = cache_dir() / f"{plan.name}_{plan.key}"
    else:
        build_dir = Path(build_directory).resolve()
    output = build_dir / f"{plan.name}.so"
    stamp = build_dir / f"{plan.name}.stamp.json"
    if _is_fresh(stamp, output, plan.key):
        return str(output)
    build_dir.mkdir(parents=True, exist_ok=True)
    with _locked(build_dir / f"{plan.name}.lock"):
        if _is_fresh(stamp, output, plan.key):  # another process built it while we waited
            return str(output)
        for file_name, text in (write_sources or {}).items():
            target = build_dir / file_name
            if not target.exists() or target.read_text() != text:
                _write_atomic(target, text)
        files = plan.compile_and_link(build_dir, output)
        _write_atomic(stamp, json.dumps({"key": plan.key, "files": _file_state(files)}, indent=1))
    return str(output)


def _load_checked(path: str, specs: Sequence[tuple[str, str | None, str | None]], keep_module_alive: bool) -> Module:
    """Loads the module and looks up each exported function once, so a malformed signature
    is reported now (by the C library) rather than at the first call."""
    module = load_module(path, keep_module_alive=keep_module_alive)
    for fn, _, _ in specs:
        getattr(module, fn)
    return module


# ---- the API --------------------------------------------------------------------------

def build_inline(name: str, *, c_sources: SourceArg = None, cpp_sources: SourceArg = None,
                 cuda_sources: SourceArg = None, functions: FunctionsArg = None,
                 extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
                 extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
                 build_directory: str | os.PathLike[str] | None = None, quick: bool | Sequence[str] = False) -> str:
    """Compiles source text into an ffikit module and returns the library's path.

    ``c_sources``, ``cpp_sources`` and ``cuda_sources`` are a string or a list of strings;
    each language's strings are joined into one file (``main.c``, ``main.cpp``,
    ``cuda.cu`` in the build directory) that starts with ``#include <ffikit/ffikit.h>``.
    ``functions`` names the ffk_safe_call routines to export (the routines may be
    ``static``): one name, a list of names, or a dict ``{name: text}`` whose text is a
    signature such as ``"(int, int) -> int"`` (the function is then typed), a doc string, or
    a signature line followed by the doc on the next lines; a text is a signature when it
    starts with ``(``. The exports go at the end of the C++ source when there is one, else
    the C source, else the CUDA source: functions defined in another language need a
    declaration there. Sources that use the ``FFK_MODULE_EXPORT`` macros themselves need no
    ``functions``; ``FFK_MODULE_ABI_VERSION`` is optional in inline sources.

    Flags: C gets ``-O2 -fPIC``, C++ ``-std=c++17 -O2 -fPIC``, CUDA ``-std=c++17 -O2
    -Xcompiler -fPIC`` and ``-gencode`` flags for ``$FFIKIT_CUDA_ARCH_LIST`` ("8.9 9.0a") or
    the GPUs present; then ffikit's include directories, ``extra_include_paths`` (before
    them) and ``extra_cflags`` / ``extra_cuda_cflags``. The link adds ``extra_ldflags``.
    ``build_directory`` replaces the cache directory (see the module doc).

    ``quick`` marks exported functions with ``FFK_FUNCTION_QUICK`` (``ffikit/function.h``):
    True for all of ``functions``, or a list of their names. It is a promise that each returns
    quickly and never waits on Python (no callback into Python, no lock or thread another
    thread releases, no blocking I/O); calls then keep the GIL (``Function.release_gil``
    starts False), which saves its release and retake per call. A quick function that waits
    on a thread calling back into Python deadlocks.

    Raises BuildError (a RuntimeError) with the compiler's command line and messages when a
    compiler fails or is missing (CUDA sources without nvcc), ValueError for a bad module or
    function name, TypeError for arguments of the wrong type.
    """
    _check_name(name)
    texts = {"c": _as_list(c_sources, "c_sources"), "cpp": _as_list(cpp_sources, "cpp_sources"),
             "cuda": _as_list(cuda_sources, "cuda_sources")}
    langs = [lang for lang in ("c", "cpp", "cuda") if texts[lang]]
    if not langs:
        raise ValueError(f"module `{name}` has no sources: give c_sources, cpp_sources or cuda_sources")
    specs = _export_specs(functions, name)
    quick_names = _quick_names(quick, specs, name)
    host = next(lang for lang in ("cpp", "c", "cuda") if texts[lang])
    files: dict[str, str] = {}
    for lang in langs:
        text = "#include <ffikit/ffikit.h>\n#line 1\n" + "\n".join(texts[lang]) + "\n"
        if lang == host and specs:
            text += _exports_glue(specs, quick_names)
        files[_INLINE_FILE[lang]] = text
    # The ABI unit goes to the C compiler only for a pure-C module: one compiler fewer to run.
    abi_lang, abi_file = ("c", "ffikit_abi.c") if langs == ["c"] else ("cpp", "ffikit_abi.cc")
    files[abi_file] = _ABI_UNIT
    units = [(lang, _INLINE_FILE[lang]) for lang in langs] + [(abi_lang, abi_file)]
    plan = _Plan(name, units, list(extra_cflags or ()), list(extra_cuda_cflags or ()), list(extra_ldflags or ()),
                 list(extra_include_paths or ()), [[file_name, text] for file_name, text in sorted(files.items())])
    return _build(plan, build_directory, files)


def load_inline(name: str, *, c_sources: SourceArg = None, cpp_sources: SourceArg = None,
                cuda_sources: SourceArg = None, functions: FunctionsArg = None,
                extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
                extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
                build_directory: str | os.PathLike[str] | None = None, keep_module_alive: bool = True,
                quick: bool | Sequence[str] = False) -> Module:
    """Like :func:`build_inline`, then loads the library: returns an :class:`ffikit.Module`
    whose attributes are the exported functions (``m.add(1, 2)``).

    ``keep_module_alive`` as :func:`ffikit.load_module`'s (tvm_ffi's default, True): the
    library stays loaded for the life of the process. A kept library is what later loads of
    the same path return, even after a rebuild there; pass False to load a rebuilt library
    once the old Module and its Functions are gone.

    ``quick``: see :func:`build_inline` (the loaded Functions then report ``f.quick``).

    A cached build loads without compiling. Raises what :func:`build_inline` raises, a
    RuntimeError when the library cannot be loaded, and a ValueError (from the C library)
    for a malformed signature in ``functions``.
    """
    specs = _export_specs(functions, name)
    path = build_inline(name, c_sources=c_sources, cpp_sources=cpp_sources, cuda_sources=cuda_sources,
                        functions=functions, extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
                        extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths,
                        build_directory=build_directory, quick=quick)
    return _load_checked(path, specs, keep_module_alive)


def build(name: str, *, sources: SourceArg = None, cpp_files: SourceArg = None, cuda_files: SourceArg = None,
          extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
          extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
          build_directory: str | os.PathLike[str] | None = None) -> str:
    """Compiles source files into an ffikit module and returns the library's path.

    ``sources`` is a path or a list of paths (``cpp_files`` and ``cuda_files`` are accepted
    too and simply added, as in tvm_ffi); the language of each file is its suffix: ``.c``
    C, ``.cc``/``.cpp``/``.cxx`` C++, ``.cu`` CUDA. The files export their functions with
    the module macros of ``<ffikit/module.h>`` and write ``FFK_MODULE_ABI_VERSION`` once.
    The cache key hashes the files' contents; a build is also redone when a header they
    include changes. Flags and errors as in :func:`build_inline`; a missing file or an
    unknown suffix is a ValueError.
    """
    _check_name(name)
    paths = _as_list(sources, "sources") + _as_list(cpp_files, "cpp_files") + _as_list(cuda_files, "cuda_files")
    if not paths:
        raise ValueError(f"module `{name}` has no sources: give sources=[paths]")
    units: list[tuple[str, str]] = []
    key_material: list[object] = []
    for p in paths:
        path = Path(p).resolve()
        lang = _LANG_OF_SUFFIX.get(path.suffix.lower())
        if lang is None:
            raise ValueError(f"source {p!r} of module `{name}` has an unknown suffix: use .c, .cc, .cpp, .cxx or .cu")
        try:
            content = path.read_bytes()
        except OSError as e:
            raise ValueError(f"source {p!r} of module `{name}` cannot be read: {e.strerror}") from e
        units.append((lang, str(path)))
        key_material.append([str(path), hashlib.sha256(content).hexdigest()])
    plan = _Plan(name, units, list(extra_cflags or ()), list(extra_cuda_cflags or ()), list(extra_ldflags or ()),
                 list(extra_include_paths or ()), key_material)
    return _build(plan, build_directory)


def load(name: str, *, sources: SourceArg = None, cpp_files: SourceArg = None, cuda_files: SourceArg = None,
         extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
         extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
         build_directory: str | os.PathLike[str] | None = None, keep_module_alive: bool = True) -> Module:
    """Like :func:`build`, then loads the library and returns an :class:`ffikit.Module`.

    ``keep_module_alive`` as :func:`load_inline`'s: a kept library is what later loads of
    its path return, even after a rebuild there (a changed header rebuilds in place).
    """
    return load_module(build(name, sources=sources, cpp_files=cpp_files, cuda_files=cuda_files,
                             extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
                             extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths,
                             build_directory=build_directory), keep_module_alive=keep_module_alive)
