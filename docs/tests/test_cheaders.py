"""The C API reference's reader (docs/_ext/ffk_cheaders.py) over the real headers, without
Sphinx: every exported function is found with the comment written above it, so the site's C
reference (built from the same reader) documents each one."""
from __future__ import annotations

import os
import pathlib
import re
import sys

import pytest

DOCS = pathlib.Path(os.path.abspath(__file__)).parent.parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
import ffk_cheaders  # noqa: E402

HEADERS = [h for h in ffk_cheaders.public_headers(ROOT) if h.endswith(".h")]


def test_headers_found():
    assert "containers/include/ffikit/list.h" in HEADERS and len(HEADERS) > 30


@pytest.mark.parametrize("header", HEADERS)
def test_every_exported_function_is_documented(header):
    text = (ROOT / header).read_text(encoding="utf-8")
    intro, items = ffk_cheaders.parse_header(text)
    assert intro, f"{header} has no file comment"
    exported = set(re.findall(r"^FFK_API\b[^;{]*?\b(ffk_\w+)\s*\(", text, re.M | re.S))
    functions = {re.search(r"(\w+)\s*\(", sig).group(1): (k, item) for k, item in enumerate(items)
                 if item.kind == "function" for sig in [item.signature, *item.more]}
    missing = sorted(exported - set(functions))
    assert not missing, f"not read as functions: {missing}"
    # Documented: by the comment above it (or above the run of declarations it is in), or
    # by name in an earlier comment of the header (a struct's comment that explains the
    # functions taking it, a section's note).
    undocumented = sorted(name for name in exported if not functions[name][1].doc.strip()
                          and not any(re.search(rf"\b{name}\b", i.doc) for i in items[:functions[name][0]])
                          and not re.search(rf"\b{name}\b", intro))
    assert not undocumented, f"no comment above: {undocumented}"


def test_comment_attaches_to_the_declaration_below_it():
    intro, items = ffk_cheaders.parse_header(
        "/* file comment */\n#ifndef X_H\n#define X_H\n\n/* A section note. */\n\n"
        "/*\n * Two `lines`\n * of doc.\n */\nFFK_API int f(int *out);\n"
        "typedef struct s s;  /* trailing */\n"
        "static inline int g(void) { return 1; }\n#define M(a) (a)\n\n/* Both. */\nint h1(void);\nint h2(void);\n#endif\n")
    assert intro == "file comment"
    assert [(i.kind, i.doc) for i in items] == [
        ("text", "A section note."), ("function", "Two `lines`\nof doc."), ("type", "trailing"),
        ("function", ""), ("macro", ""), ("function", "Both.")]
    assert items[1].signature == "int f(int *out)" and items[3].signature == "int g(void)"
    assert items[4].signature == "M(a)" and items[5].more == ["int h2(void)"]
