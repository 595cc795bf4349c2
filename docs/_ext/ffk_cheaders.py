"""The C API reference, read from the public headers' own comments at build time.

ffikit's headers document each declaration with a plain ``/* ... */`` comment right above it
(and a file comment at the top). Doxygen and hawkmoth read only ``/**`` comments, so this
extension reads the headers itself: ``parse_header`` splits a header into its file comment and
a list of items (a declaration with the comment above it, or a free-standing comment), and the
``ffk-header`` directive renders them with Sphinx's C domain (``c:function``, ``c:type``,
``c:struct``, ``c:macro``, ``c:var``), so signatures are cross-referenced and indexed. A
declaration the C domain cannot parse is shown as a code block instead, never dropped.
Comment text is shown as written (plain paragraphs, `backticks` as code), not parsed as
reStructuredText, so a header's ``*out`` can never break the build.

After reading, every public header must have been rendered by some page: a header added
without a page is a warning (an error under ``-W``), so the site and the headers never disagree.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re

# Attribute macros that say nothing to a reader of the reference; removed from signatures.
ATTRIBUTES = re.compile(r"\bFFK_API\b|\bFFK_NOINLINE\b|\bFFK_MODULE_VISIBLE\b|\bFFK_PRINTF\s*\([^)]*\)")
# The directories whose headers make up the public C API (relative to the repository root),
# the bindings' unstable tier (include/ffikit/unstable/, its own page) included.
HEADER_DIRS = ("ffi/include/ffikit", "containers/include/ffikit", "tensor/include/ffikit", "include/ffikit",
               "ffi/include/ffikit/unstable", "containers/include/ffikit/unstable", "tensor/include/ffikit/unstable")


@dataclasses.dataclass
class Item:
    kind: str  # "text", "function", "type", "struct", "macro", "var", "code"
    doc: str  # the comment, its markers and leading stars removed
    code: str = ""  # the declaration as written (comments inside kept)
    name: str = ""  # the declared name (types, macros)
    signature: str = ""  # one line, for the C domain (functions, variables)
    # functions declared on the lines right after this one, with no comment of their own: the
    # comment above documents them all ("ffk_dict_collect with KEYS, VALUES and ITEMS")
    more: list[str] = dataclasses.field(default_factory=list)


def comment_text(comment: str) -> str:
    """The text of a ``/* */`` or ``//`` comment: markers and the leading `` * `` of each line removed."""
    if comment.startswith("//"):
        return "\n".join(line.lstrip("/").removeprefix(" ") for line in comment.splitlines())
    body = comment[2:-2]
    lines = body.split("\n")
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("*"):
            stripped = line.lstrip()[1:]
            stripped = stripped[1:] if stripped.startswith(" ") else stripped
            out.append(stripped.rstrip())
        else:
            out.append(line.strip() if len(lines) == 1 else line.rstrip().removeprefix(" "))
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _skip_declaration(text: str, i: int) -> int:
    """The index just past the declaration that starts at ``i``: its ``;`` at depth 0, or the
    ``}`` that closes a function body. Comments, strings and characters are skipped."""
    depth = 0
    saw_paren = False
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c in "\"'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([":
            depth += 1
            saw_paren = saw_paren or (c == "(" and depth == 1)
        elif c in ")]":
            depth -= 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and saw_paren and not text[:i].rstrip().endswith("=") and _is_function_body(text, i):
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    raise ValueError("unterminated declaration")


def _is_function_body(text: str, close: int) -> bool:
    """Whether the ``}`` at ``close`` ends a function body (``static inline f(...) { ... }``)
    rather than a struct or enum body that a ``;`` still follows."""
    rest = text[close + 1:].lstrip(" \t")
    return not rest or rest[0] in "\n/"


def _strip_comments(code: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", code, flags=re.S)


def _one_line(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip()


def classify(code: str, doc: str) -> Item:
    """The item one declaration (as written, without the comment above it) makes."""
    bare = _one_line(_strip_comments(code))
    if bare.startswith("FFK_STATIC_ASSERT") or bare.startswith("_Static_assert") or bare.startswith("static_assert"):
        return Item("text", doc) if doc else Item("skip", "")
    if bare.startswith("typedef"):
        m = re.match(r"typedef (?:struct|union|enum) (\w+) (\w+);$", bare)
        if m and m.group(1) == m.group(2):  # typedef struct ffk_list ffk_list;
            return Item("type", doc, code, m.group(2))
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", bare) or re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*;$", bare)
        return Item("type", doc, code, m.group(1) if m else "")
    m = re.match(r"(?:struct|union) (\w+) \{", bare)
    if m:
        return Item("struct", doc, code, m.group(1))
    m = re.match(r"(?:struct|union) (\w+);$", bare)
    if m:
        return Item("struct", doc, code, m.group(1))
    if bare.startswith("enum"):
        return Item("code", doc, code)
    if bare.startswith("static inline") and "{" in bare:
        signature = bare[: bare.index("{")].removeprefix("static inline").strip()
        return Item("function", doc, code, signature=_one_line(ATTRIBUTES.sub(" ", signature)))
    signature = _one_line(ATTRIBUTES.sub(" ", bare)).rstrip(";").strip()
    if "(" in signature and not re.search(r"=\s*", signature):
        return Item("function", doc, code, signature=signature)
    if signature.startswith("extern "):
        return Item("var", doc, code, signature=signature.removeprefix("extern ").strip())
    return Item("code", doc, code)


def parse_header(text: str) -> tuple[str, list[Item]]:
    """A header's file comment and its items, in order.

    A comment directly above a declaration (no blank line between) documents it; a comment
    on the same line after a declaration is added to its documentation; any other comment is
    a free-standing "text" item. Include guards, ``#include``, conditionals and the
    ``FFK_EXTERN_C_*`` markers are left out.
    """
    items: list[Item] = []
    pending: str | None = None  # a comment not yet attached
    intro = ""
    i, n = 0, len(text)
    first = True
    prev_end = -1  # where the last declaration ended

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            items.append(Item("text", comment_text(pending)))
            pending = None

    while i < n:
        # whitespace; a blank line detaches a pending comment from what follows
        m = re.compile(r"\s+").match(text, i)
        if m:
            if m.group().count("\n") >= 2:
                flush()
            i = m.end()
            continue
        if text.startswith("/*", i):
            end = text.index("*/", i) + 2
            if first:
                intro = comment_text(text[i:end])
            else:
                flush()
                pending = text[i:end]
            first = False
            i = end
            continue
        first = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            flush()
            pending = text[i:end]
            i = end
            continue
        if text.startswith("#", i):
            end = i
            while True:
                end = text.find("\n", end)
                end = n if end < 0 else end
                if text[end - 1] != "\\" or end == n:
                    break
                end += 1
            line = text[i:end]
            m = re.match(r"#\s*define\s+(\w+)(\([^)]*\))?", line)
            if m and not m.group(1).endswith("_H"):
                items.append(Item("macro", comment_text(pending) if pending else "", line,
                                  m.group(1), signature=m.group(1) + (m.group(2) or "")))
                pending = None
            else:
                flush()
            i = end
            continue
        word = re.compile(r"\w+").match(text, i)
        if word and word.group() in ("FFK_EXTERN_C_BEGIN", "FFK_EXTERN_C_END"):
            flush()
            i = word.end()
            continue
        end = _skip_declaration(text, i)
        code = text[i:end]
        follows = pending is None and items and prev_end >= 0 and text.count("\n", prev_end, i) <= 1
        doc = comment_text(pending) if pending else ""
        pending = None
        # a comment that follows on the same line belongs to this declaration
        m = re.compile(r"[ \t]*(/\*.*?\*/)[ \t]*(?=\n|$)", re.S).match(text, end)
        if m and "\n" not in m.group(1):
            doc = (doc + "\n\n" if doc else "") + comment_text(m.group(1))
            code += text[end:m.end()]
            end = m.end()
        item = classify(code, doc)
        if follows and item.kind == "function" == items[-1].kind and not doc:
            items[-1].more.append(item.signature)
            items[-1].code += "\n" + code
        elif item.kind != "skip":
            items.append(item)
        i = prev_end = end
    flush()
    return intro, items


def public_headers(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for d in HEADER_DIRS for p in (root / d).glob("*.h"))


# ---------------------------------------------------------------------------------------------
# Sphinx

def _text_nodes(text: str):
    """Paragraphs of plain text (backtick spans as inline code); indented runs as code blocks."""
    from docutils import nodes

    out = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.split("\n")
        if all(line.startswith("  ") for line in lines):
            out.append(nodes.literal_block(block, _dedent(block), language="c"))
            continue
        para = nodes.paragraph()
        for k, part in enumerate(re.split(r"`([^`\n]+)`", " ".join(line.strip() for line in lines))):
            if k % 2:
                para += nodes.literal(part, part)
            elif part:
                para += nodes.Text(part)
        out.append(para)
    return out


def _dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block)


def setup(app):
    from docutils import nodes
    from docutils.parsers.rst import directives
    from docutils.statemachine import StringList
    from sphinx import addnodes
    from sphinx.domains.c._parser import DefinitionParser
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    logger = logging.getLogger(__name__)
    root = pathlib.Path(app.srcdir).parent

    def parses(kind: str, sig: str, config) -> bool:
        try:
            parser = DefinitionParser(sig, location=None, config=config)
            parser.parse_declaration(kind, kind)
            parser.skip_ws()
            parser.assert_end()
            return True
        except Exception:  # noqa: BLE001 (any parse failure: show the code instead)
            return False

    class HeaderDirective(SphinxDirective):
        """``ffk-header:: path/of/header.h``: the header's file comment, then every item."""

        required_arguments = 1
        option_spec = {"no-intro": directives.flag}

        def run(self):
            rel = self.arguments[0]
            path = root / rel
            self.env.note_dependency(str(path))
            # kept on the environment (scripts/build_docs.sh reads every page afresh, -E)
            self.env.ffk_headers_documented = getattr(self.env, "ffk_headers_documented", set()) | {rel}
            if not hasattr(self.env, "ffk_declared"):
                self.env.ffk_declared = set()
            declared = self.env.ffk_declared
            intro, items = parse_header(path.read_text(encoding="utf-8"))
            result = []
            if "no-intro" not in self.options:
                result += _text_nodes(intro)
            for item in items:
                result += self.render(item, declared, rel)
            return result

        def render(self, item: Item, declared: set, rel: str):
            if item.kind == "text":
                return _text_nodes(item.doc)
            kind, sig = {
                "function": ("function", item.signature),
                "var": ("member", item.signature),
                "type": ("type", item.name),
                "struct": ("struct", item.name),
                "macro": ("macro", item.signature),
            }.get(item.kind, (None, None))
            name = item.name or (re.search(r"(\w+)\s*\(", sig).group(1) if sig and "(" in sig else sig)
            if kind == "member":
                name = re.search(r"(\w+)\s*(?:\[[^\]]*\])?$", sig).group(1)
            directive = {"member": "var"}.get(kind, kind)
            ok = kind is not None and name and name not in declared and parses(kind, sig, self.config)
            others = [re.search(r"(\w+)\s*\(", m).group(1) for m in item.more]
            ok = ok and all(o not in declared and parses(kind, m, self.config) for o, m in zip(others, item.more))
            show_code = item.kind in ("type", "struct", "code") or not ok
            body = []
            if item.doc:
                body += _text_nodes(item.doc)
            if show_code and item.code.strip():
                code = _dedent(item.code.strip("\n"))
                body.insert(0, nodes.literal_block(code, code, language="c"))
            if not ok:
                return body
            declared.update([name, *others])
            sig = "\n".join([sig, *item.more])
            # The C domain's own directive, run directly (a nested parse would read the
            # MyST page's content as Markdown).
            cls = self.env.get_domain("c").directive(directive)
            d = cls(f"c:{directive}", [sig], {}, StringList(), self.lineno, self.content_offset,
                    f".. c:{directive}:: {sig}", self.state, self.state_machine)
            result = d.run()
            for desc in (n for node in result for n in node.findall(addnodes.desc)):
                next(desc.findall(addnodes.desc_content)).extend(body)
                break
            return result

    def check_all_documented(app, env):
        documented = getattr(env, "ffk_headers_documented", set())
        for header in public_headers(root):
            if header not in documented:
                logger.warning("C API reference: %s has no page (add an ffk-header directive)", header)

    app.add_directive("ffk-header", HeaderDirective)
    app.connect("env-check-consistency", check_all_documented)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
