"""Every code example of the documentation site, run as a test (//docs:examples_test).

The site is the Markdown under docs/ (scripts/build_docs.sh builds it with Sphinx; nothing
here needs Sphinx). What runs:

* every ```python block of every page: the blocks of one page run in order in one
  namespace, as a reader would type them into one session (one test per block, named
  ``page.md:line``);
* every ``>>>`` example in the docstrings of the modules the Python reference page shows
  (``{automodule}``), with doctest;
* every C example the pages include (``docs/examples/*.c``, built by Bazel as
  ``docs/examples/<name>``): it runs and its output must equal ``<name>.c.out``, which the
  page shows too. The Rust examples are ``bindings/rust/ffikit/examples/*.rs``, run by
  ``cargo test`` (``tests/docs_examples.rs``).

A page may not hold a ```c, ```cpp or ```rust block of its own (only an included file, which
is built): ``test_no_untested_code_blocks`` fails on one. Shell (```sh) and plain-text blocks
are commands and layouts, not examples: they are not run.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

# not resolve(): in Bazel's runfiles the files are links into the source tree, the built examples are not
DOCS = pathlib.Path(os.path.abspath(__file__)).parent.parent
FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ ]*$",
                   re.M | re.S)


def pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def blocks(page: pathlib.Path):
    """(line, language, code) of every fenced block of a page; the language is the info
    string's first word (``{code-block} python`` counts as python)."""
    text = page.read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        info = m.group("info").strip().split()
        lang = info[0] if info else ""
        if lang.startswith("{") and lang in ("{code-block}", "{code}", "{sourcecode}"):
            lang = info[1] if len(info) > 1 else ""
        body = "\n".join(line[len(m.group("indent")):] for line in m.group("body").split("\n"))
        yield text.count("\n", 0, m.start()) + 1, lang, body


PYTHON_BLOCKS = [(p, line, code) for p in pages() for line, lang, code in blocks(p) if lang in ("python", "py")]
MODULES: dict[pathlib.Path, types.ModuleType] = {}


@pytest.mark.parametrize("page,line,code", PYTHON_BLOCKS,
                         ids=[f"{p.relative_to(DOCS)}:{line}" for p, line, _ in PYTHON_BLOCKS])
def test_python_example(page, line, code):
    # One real module per page, so that classes defined on the page resolve their annotations
    # (py_class looks names up in its module's globals) as in a reader's own module.
    module = MODULES.get(page)
    if module is None:
        module = MODULES[page] = types.ModuleType(f"docs_examples_{page.stem.replace('-', '_')}")
        sys.modules[module.__name__] = module
    exec(compile(code, f"{page.relative_to(DOCS)}:{line}", "exec"), module.__dict__)  # noqa: S102


# The modules whose docstrings the Python reference page shows (autodoc): their >>> examples.
REFERENCE_MODULES = re.findall(r"^```\{automodule\} (\S+)", (DOCS / "python-reference.md").read_text(encoding="utf-8"), re.M)


@pytest.mark.parametrize("name", REFERENCE_MODULES)
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, globs={name.split(".")[-1]: module, **vars(module)}):
        if getattr(test, "filename", None) and not str(test.filename).endswith(".py"):
            continue
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed"


C_EXAMPLES = sorted((DOCS / "examples").glob("*.c"))


@pytest.mark.parametrize("source", C_EXAMPLES, ids=[p.name for p in C_EXAMPLES])
def test_c_example(source):
    binary = source.with_suffix("")
    out = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == source.with_suffix(".c.out").read_text(encoding="utf-8")


def test_no_untested_code_blocks():
    untested = [f"{p.relative_to(DOCS)}:{line} ({lang})" for p in pages() for line, lang, _ in blocks(p)
                if lang in ("c", "cpp", "c++", "rust", "rs")]
    assert not untested, "code blocks no test runs (include a built example file instead): " + ", ".join(untested)


def test_every_page_is_found():
    assert (DOCS / "getting-started.md") in pages() and PYTHON_BLOCKS and C_EXAMPLES
