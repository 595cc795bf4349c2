"""Sphinx configuration of ffikit's documentation site (built by scripts/build_docs.sh)."""
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here / "_ext"))

project = "ffikit"
author = "the ffikit authors"


def _version() -> str:
    """The C library's version: the FFK_VERSION string of the core headers."""
    for header in sorted((here.parent / "ffi/include/ffikit").glob("*.h")):
        m = re.search(r'#define FFK_VERSION "([^"]+)"', header.read_text(encoding="utf-8"))
        if m:
            return m.group(1)
    raise RuntimeError("no #define FFK_VERSION in ffi/include/ffikit/*.h")


version = release = _version()

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "ffk_cheaders",  # _ext/ffk_cheaders.py: the C API reference from the headers' comments
    "ffk_perf",  # _ext/ffk_perf.py: the performance page's charts from bench JSON
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "examples", "requirements.txt", "tests", "BUILD"]
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# Code blocks in the pages are C, Python, Rust, shell or plain text; none is highlighted by guess.
highlight_language = "none"

# C domain: the attribute macros that may appear in a declaration.
c_id_attributes = ["FFK_API", "FFK_NOINLINE"]
c_paren_attributes = ["FFK_PRINTF"]

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "none"  # the signatures as written; annotations refer to names not exported
autodoc_inherit_docstrings = False

html_theme = "furo"
html_title = f"ffikit {release}"
html_static_path = []
nitpicky = False


# Links from a page to a repository file outside docs/ (`[README](../bindings/python/README.md)`)
# work when the Markdown is read on a code host, but name no page of the site: the site shows
# their text (the path, usually in code style) and no link.
_OUTSIDE = re.compile(r"\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")


def _unlink_outside(app, docname, source):
    page_dir = (here / docname).parent

    def repl(m):
        target = (page_dir / m.group(2)).resolve()
        outside = here not in target.parents and target.exists()
        return m.group(1) if outside else m.group(0)

    source[0] = _OUTSIDE.sub(repl, source[0])


def setup(app):
    app.connect("source-read", _unlink_outside)
