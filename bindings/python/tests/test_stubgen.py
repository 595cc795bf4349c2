"""python -m ffikit.stubgen: .pyi stubs for the typed globals under a prefix, checked by
compiling them, by calling the functions they describe, and by mypy --strict."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

import ffikit
from ffikit import stubgen

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
TESTING_MODULE = os.path.normpath(os.path.join(PKG, "..", "..", "testing", "libffikit_testing.so"))

DOC_EXAMPLE_STUB = '''def doc_example(_0: str | None, /, x: int, y: float) -> float:
    """Returns x + y.

    The first argument, a label, is ignored.
    """
    ...
'''


@pytest.fixture(scope="module")
def testing_module():
    """libffikit_testing.so loaded once: its init registers testing.doc_example (typed,
    documented, with named and unnamed parameters) for the life of the process."""
    if not os.path.exists(TESTING_MODULE):
        pytest.skip("libffikit_testing.so is not built next to this checkout")
    return ffikit.load_module(TESTING_MODULE)


def schema(text: str) -> dict:
    return json.loads(text)


@pytest.mark.parametrize("node, result, param", [
    ('{"type":"int"}', "int", "int"),
    ('{"type":"float"}', "float", "float"),
    ('{"type":"bool"}', "bool", "bool"),
    ('{"type":"None"}', "None", "None"),
    ('{"type":"Any"}', "Any", "Any"),
    ('{"type":"ffi.String"}', "str", "str"),
    ('{"type":"ffi.Bytes"}', "bytes", "bytes"),
    ('{"type":"Device"}', "ffikit.Device", "ffikit.Device | str"),
    ('{"type":"DataType"}', "ffikit.dtype", "ffikit.dtype | str"),
    ('{"type":"void*"}', "int | None", "Any"),
    ('{"type":"ffi.Object"}', "ffikit.Object", "ffikit.Object"),
    ('{"type":"ffi.Tensor"}', "ffikit.Tensor", "ffikit.Tensor"),
    ('{"type":"ffi.Function"}', "ffikit.Function", "Callable[..., Any]"),
    ('{"type":"ffi.Shape"}', "ffikit.Shape", "Sequence[int]"),
    ('{"type":"ffi.Module"}', "ffikit.Module", "ffikit.Module"),
    ('{"type":"ffi.Error"}', "ffikit.Error", "ffikit.Error"),
    ('{"type":"Tuple"}', "Sequence[Any]", "Sequence[Any]"),
    ('{"type":"Optional","args":[{"type":"int"}]}', "int | None", "int | None"),
    ('{"type":"Optional","args":[{"type":"Any"}]}', "Any", "Any"),
    ('{"type":"ffi.Array"}', "Sequence[Any]", "Sequence[Any]"),
    ('{"type":"ffi.Array","args":[{"type":"float"}]}', "Sequence[float]", "Sequence[float]"),
    ('{"type":"ffi.List","args":[{"type":"ffi.String"}]}', "MutableSequence[str]", "Sequence[str]"),
    ('{"type":"ffi.Map","args":[{"type":"ffi.String"},{"type":"ffi.Array","args":[{"type":"int"}]}]}',
     "Mapping[str, Sequence[int]]", "Mapping[str, Sequence[int]]"),
    ('{"type":"ffi.Dict","args":[{"type":"int"},{"type":"Optional","args":[{"type":"ffi.Bytes"}]}]}',
     "MutableMapping[int, bytes | None]", "Mapping[int, bytes | None]"),
    ('{"type":"ffi.Dict"}', "MutableMapping[Any, Any]", "Mapping[Any, Any]"),
    ('{"type":"ffi.Opaque"}', "Any", "Any"),
    # A reflected (registered) type: the extension point, then ffikit.Object.
    ('{"type":"mylib.Point"}', "ffikit.Object", "ffikit.Object"),
])
def test_every_schema_kind_maps_to_an_annotation(node, result, param):
    assert stubgen.annotation(schema(node)) == result
    assert stubgen.annotation(schema(node), param=True) == param


def test_registered_types_are_annotated_through_the_extension_point(monkeypatch):
    monkeypatch.setitem(stubgen.TYPE_KEY_ANNOTATIONS, "mylib.Point", "mylib.Point")
    assert stubgen.annotation(schema('{"type":"Optional","args":[{"type":"mylib.Point"}]}')) == "mylib.Point | None"


def test_function_stubs_name_parameters_and_keep_docs():
    typed = {"type_schema": '{"type":"ffi.Function","named_args":{"return":[{"type":"int"}],'
                            '"params":[{"type":"int"},{"type":"float"}]}}',
             "arg_names": ["a", "b"]}
    assert stubgen.function_stub("f", typed) == "def f(a: int, b: float) -> int: ...\n"
    # Unnamed, keyword, duplicate and clashing names become positional-only.
    typed["type_schema"] = ('{"type":"ffi.Function","named_args":{"return":[{"type":"None"}],"params":'
                            '[{"type":"int"},{"type":"int"},{"type":"int"},{"type":"int"},{"type":"int"}]}}')
    typed["arg_names"] = ["_1", None, "lambda", "x", "x"]
    assert stubgen.function_stub("g", typed) == (
        "def g(_1: int, __1: int, _2: int, x: int, _4: int, /) -> None: ...\n")
    untyped = {"type_schema": '{"type":"ffi.Function"}', "doc": 'Says "hi"\\ back """ twice "'}
    text = stubgen.function_stub("h", untyped)
    assert text.startswith("def h(*args: Any) -> Any:\n")
    namespace: dict = {"Any": object}
    exec(compile(text, "<stub>", "exec"), namespace)
    assert namespace["h"].__doc__ == 'Says "hi"\\ back """ twice "'


def test_generate_writes_valid_python_for_the_testing_globals(testing_module):
    text = stubgen.generate("testing.")
    assert stubgen.generate("testing") == text
    compile(text, "testing.pyi", "exec")
    assert DOC_EXAMPLE_STUB in text
    assert "def add_one(_0: int, /) -> int: ...\n" in text
    assert "def echo(*args: Any) -> Any: ...\n" in text
    assert "def schema_id_map_str_int(_0: Mapping[str, int], /) -> Mapping[str, int]: ...\n" in text
    assert "import ffikit\n" in text and "from typing import Any\n" in text
    with pytest.raises(ValueError, match="prefix is empty"):
        stubgen.generate(".")


def test_names_that_are_not_identifiers_are_skipped_with_a_note():
    ffikit.register_global_func("stubgen_test.class", lambda: None)
    ffikit.register_global_func("stubgen_test.ok", lambda: None)
    ffikit.register_global_func("stubgen_test.sub.deeper", lambda: None)
    try:
        text = stubgen.generate("stubgen_test.")
    finally:
        for n in ("stubgen_test.class", "stubgen_test.ok", "stubgen_test.sub.deeper"):
            ffikit.remove_global_func(n)
    assert "# Skipped `stubgen_test.class`: its name is not a Python identifier." in text
    assert "def ok(*args: Any) -> Any: ...\n" in text and "deeper" not in text
    compile(text, "stubgen_test.pyi", "exec")


def _run_stubgen(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=PKG + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "ffikit.stubgen", *args], capture_output=True, text=True, env=env)


def test_command_line_loads_modules_and_writes_the_file(tmp_path, testing_module):
    out = tmp_path / "api.pyi"
    r = _run_stubgen("testing.", "-o", str(out), "--dlls", TESTING_MODULE)
    assert r.returncode == 0, r.stderr
    assert DOC_EXAMPLE_STUB in out.read_text(encoding="utf-8")
    r = _run_stubgen("testing.")  # without the module its global is not there
    assert r.returncode == 0, r.stderr
    assert "def add_one(" in r.stdout and "doc_example" not in r.stdout
    r = _run_stubgen(".")
    assert r.returncode == 2 and "prefix is empty" in r.stderr


def test_the_stub_describes_what_init_ffi_api_installs(testing_module):
    api = types.ModuleType("stubgen_test_api")
    sys.modules["stubgen_test_api"] = api
    try:
        ffikit.init_ffi_api("testing", "stubgen_test_api")
        assert api.doc_example(None, 1, 2.5) == 3.5
        assert api.add_one(1) == 2
    finally:
        del sys.modules["stubgen_test_api"]
        del api


def test_a_program_using_the_stub_passes_mypy_strict(tmp_path, testing_module):
    pytest.importorskip("mypy")
    pkg = tmp_path / "ffapi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "_ffi_api.py").write_text('import ffikit\n\nffikit.init_ffi_api("testing", __name__)\n', encoding="utf-8")
    (pkg / "_ffi_api.pyi").write_text(stubgen.generate("testing."), encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text(
        "from collections.abc import Mapping, Sequence\n"
        "import ffikit\n"
        "from ffapi import _ffi_api\n\n\n"
        "def total() -> float:\n"
        "    n: int = _ffi_api.add_one(1)\n"
        "    s: str = _ffi_api.schema_id_string('x')\n"
        "    xs: Sequence[int] = _ffi_api.schema_id_arr_int([1, 2])\n"
        "    m: Mapping[str, int] = _ffi_api.schema_id_map_str_int({'a': 1})\n"
        "    d: ffikit.Device = _ffi_api.schema_id_device('cpu:0')\n"
        "    f: ffikit.Function = _ffi_api.schema_id_func(lambda: None)\n"
        "    _ffi_api.test_raise_error('ValueError', 'message')\n"
        "    return _ffi_api.doc_example('label', x=n, y=2.5) + len(s) + len(xs) + len(m) + len(str(d)) + int(f is None)\n",
        encoding="utf-8")
    bad = tmp_path / "bad.py"
    bad.write_text("from ffapi import _ffi_api\n\n"
                   "s: str = _ffi_api.add_one(1)\n"
                   "_ffi_api.doc_example(None, 1, 2.5, 4)\n"
                   "_ffi_api.add_one(_0=1)\n",
                   encoding="utf-8")
    env = dict(os.environ, MYPYPATH=PKG + os.pathsep + str(tmp_path))
    cache = os.path.join(os.environ.get("TEST_TMPDIR", str(tmp_path)), "mypy-cache-stubgen")

    def mypy(path: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache,
                               path], capture_output=True, text=True, env=env, cwd=tmp_path)

    r = mypy(str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    r = mypy(str(bad))
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'bad.py:3: error: Incompatible types in assignment (expression has type "int", variable has type "str")' \
        in r.stdout
    assert "bad.py:4: error: Too many arguments" in r.stdout
    assert 'bad.py:5: error: Unexpected keyword argument "_0"' in r.stdout
