#!/usr/bin/env python3
"""Finds circles between object files: file A calls file B, and B (maybe through others) calls A.

Usage: check_cycles.py [--allow FILE] [--report-only] OBJECT_OR_ARCHIVE...

Each object file (a .o, or a member of a static archive: .a, .lo, .pic.a, .pic.lo) is a node.
A file uses another when one of its undefined symbols is a global symbol the other defines:
functions (T, W, i) and data (D, B, R, C, G, S, V) alike, since reading another file's table or
variable ties the two files together as much as a call does. Local symbols (t, d, b, r) never
bind across objects and are ignored, and so is a file's use of itself.

Prints every strongly connected component of more than one file with, for each pair of its
files that use each other directly, one symbol that shows why, and exits 1 when there is one.
A component whose files all lie in one entry of --allow (a known circle, with the reason it
stays) is printed as allowed and does not fail; so is a smaller circle inside an allowed one.
An entry that matches nothing is reported as stale (it can go).

--allow FILE: lines of `file file ...: reason`; a file is named by its object's base name
without .o/.pic.o (`container` for container.pic.o), `#` starts a comment.
--report-only: print the same, exit 0.

Needs `nm` (binutils). Stdlib only: tests/layering/BUILD runs it over the core's archives.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

DEFINED = set("TWiDBRCGSV")  # global definitions (upper case; i is an indirect function)
UNDEFINED = set("Uwv")  # w/v: weak undefined, still a use when someone defines it
WEAK = set("WVv")
LINE = re.compile(r"^(.*):\s*(?:[0-9a-fA-F]+\s+)?(\S)\s+(\S+)$")


def short_name(member):
    """container.pic.o -> container: the name a reader and the allow list use."""
    base = os.path.basename(member)
    for suffix in (".pic.o", ".o"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def component(path):
    """bazel-bin/ffi/libffi.lo -> ffi; a plain object: its directory's name."""
    base = os.path.basename(path)
    m = re.match(r"lib(.+?)(\.pic)?\.(a|lo)$", base)
    if m:
        return m.group(1)
    return os.path.basename(os.path.dirname(os.path.abspath(path))) or "."


def drop_non_pic_twins(paths):
    """-c opt builds libx.a and libx.pic.a with the same objects: keep the PIC one only."""
    names = set(paths)
    kept = []
    for p in paths:
        m = re.match(r"(.*)\.(a|lo)$", p)
        if m and not m.group(1).endswith(".pic") and f"{m.group(1)}.pic.{m.group(2)}" in names:
            continue
        kept.append(p)
    return kept


def read_symbols(paths):
    """Returns {node: (defined {sym: weak}, undefined set)}; node = (component, file name)."""
    out = subprocess.run(["nm", "-A", *paths], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check_cycles: nm failed ({out.returncode}): {out.stderr.strip()}")
    files = {}
    for line in out.stdout.splitlines():
        # "libx.a:member.o:0000000000000000 T sym" or "x.o:                 U sym": the file
        # (and member) come before the last colon (C symbol names have none).
        m = LINE.match(line)
        if not m:
            continue
        head, kind, sym = m.groups()
        owner, sep, member = head.rpartition(":")
        node = (component(owner if sep else member), short_name(member))
        defined, undefined = files.setdefault(node, ({}, set()))
        if kind in DEFINED:
            defined[sym] = kind in WEAK
        elif kind in UNDEFINED:
            undefined.add(sym)
    return files


def build_graph(files):
    """Returns {a: {b: example symbol}}: a uses b through that (alphabetically first) symbol."""
    strong, weak = defaultdict(list), defaultdict(list)
    for node, (defined, _) in files.items():
        for sym, is_weak in defined.items():
            (weak if is_weak else strong)[sym].append(node)
    edges = defaultdict(dict)
    for node, (_, undefined) in files.items():
        for sym in sorted(undefined):
            for other in strong.get(sym) or weak.get(sym) or ():
                if other != node:
                    edges[node].setdefault(other, sym)
    return edges


def components_of(nodes, edges):
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    scc.append(n)
                    if n == node:
                        break
                if len(scc) > 1:
                    result.append(sorted(scc))
    return sorted(result)


def read_allow(path):
    """Returns [(set of file names, reason, line number)]."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            names, sep, reason = line.partition(":")
            if not sep or not reason.strip() or not names.split():
                sys.exit(f"check_cycles: {path}:{n}: want `file file ...: reason`, got {line!r}")
            entries.append((set(names.split()), reason.strip(), n))
    return entries


def label(node):
    return f"{node[0]}/{node[1]}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allow", help="known circles: lines of `file file ...: reason`")
    ap.add_argument("--report-only", action="store_true", help="print the circles, exit 0")
    ap.add_argument("inputs", nargs="+", help="object files and static archives")
    args = ap.parse_args(argv)

    paths = drop_non_pic_twins(args.inputs)
    for p in paths:
        if not os.path.isfile(p):
            sys.exit(f"check_cycles: no such file: {p}")
    files = read_symbols(paths)
    if not files:
        sys.exit(f"check_cycles: no object files in {' '.join(paths)}")
    edges = build_graph(files)
    sccs = components_of(files.keys(), edges)
    allow = read_allow(args.allow) if args.allow else []
    used = set()

    failing = 0
    for scc in sccs:
        names = {n[1] for n in scc}
        match = next((e for e in allow if names <= e[0]), None)
        comps = sorted({n[0] for n in scc})
        where = comps[0] if len(comps) == 1 else "across " + ", ".join(comps) + " (a layering break too)"
        if match:
            used.add(match[2])
            print(f"allowed circle of {len(scc)} files in {where} ({args.allow}:{match[2]}: {match[1]}):")
        else:
            failing += 1
            print(f"circle of {len(scc)} files in {where}:")
        members = set(scc)
        for a in scc:
            for b, sym in sorted(edges.get(a, {}).items()):
                if b in members:
                    print(f"  {label(a)} -> {label(b)}  ({sym})")
    for names, reason, n in allow:
        if n not in used:
            print(f"stale allow entry {args.allow}:{n} ({' '.join(sorted(names))}): no such circle now")

    nfiles = len(files)
    if failing:
        print(f"cycles: {failing} circle(s) among {nfiles} files")
        return 0 if args.report_only else 1
    print(f"cycles: {nfiles} files, no circle" + (" outside the allowed ones" if sccs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
