"""The performance page's charts and tables, drawn at build time from benchmark JSON.

``ffk-bench:: FILE.json [FILE.json ...]`` reads pyperf JSON files as bench/python/run.sh
writes them (``runK.partI.json``, or gzipped as docs/bench/ keeps them: pyperf reads both), takes the benchmarks named
``<case>/<impl>`` whose case (without its ``[variant]``) is in ``:cases:``, and renders one
chart (matplotlib: the median time of each case per implementation, log scale) and the table
of the same numbers below it, with a caption naming the CPU, the Python and the peers'
versions from the files' own metadata. Only the standard library and matplotlib are needed.
"""
from __future__ import annotations

import fnmatch
import gzip
import hashlib
import json
import pathlib
import statistics

# Colours and legend order of the implementations; any other implementation comes after.
IMPLS = ["ffikit", "ffikit_gil_held", "tvm_ffi", "nanobind_args", "nanobind_fixed", "python", "ctypes",
         "ctypes_argtypes", "tuple", "list", "dict", "numpy", "torch"]
COLORS = {"ffikit": "#1f77b4", "ffikit_gil_held": "#aec7e8", "tvm_ffi": "#ff7f0e", "nanobind_args": "#2ca02c",
          "nanobind_fixed": "#98df8a", "python": "#7f7f7f", "ctypes": "#bcbd22", "ctypes_argtypes": "#dbdb8d",
          "tuple": "#9467bd", "list": "#8c564b", "dict": "#e377c2", "numpy": "#17becf", "torch": "#d62728"}


def load(paths: list[pathlib.Path]) -> tuple[dict[str, dict[str, float]], dict]:
    """({case: {impl: median seconds over every value of every file}}, the first file's metadata)."""
    values: dict[str, dict[str, list[float]]] = {}
    meta: dict = {}
    for path in paths:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        data = json.loads(raw)
        meta = meta or dict(data.get("metadata", {}))
        for bench in data["benchmarks"]:
            name = bench.get("metadata", {}).get("name") or data["metadata"].get("name")
            case, impl = name.rsplit("/", 1)
            for run in bench["runs"]:
                values.setdefault(case, {}).setdefault(impl, []).extend(run.get("values", []))
    medians = {case: {impl: statistics.median(v) for impl, v in impls.items() if v} for case, impls in values.items()}
    return medians, meta


def select(medians: dict[str, dict[str, float]], cases: list[str]) -> dict[str, dict[str, float]]:
    """The cases listed, in the order listed: a bare name (``getitem``) takes every variant
    (``getitem[Array]``, ``getitem[List]`` ...), a pattern (``iter[Map*``) the names it matches."""
    chosen = {}
    for wanted in cases:
        for case, impls in medians.items():
            hit = fnmatch.fnmatchcase(case, wanted) if "[" in wanted or "*" in wanted else case.split("[")[0] == wanted
            if hit and impls:
                chosen[case] = impls
    return chosen


def fmt(seconds: float) -> str:
    ns = seconds * 1e9
    if ns >= 10_000_000:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 10_000:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.0f} ns" if ns >= 100 else f"{ns:.1f} ns"


def ordered_impls(rows: dict[str, dict[str, float]]) -> list[str]:
    impls = [i for i in IMPLS if any(i in r for r in rows.values())]
    return impls + sorted({i for r in rows.values() for i in r} - set(impls))


def draw(rows: dict[str, dict[str, float]], title: str, out: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    impls = ordered_impls(rows)
    # one bar per implementation measured in a case, cases apart by a gap
    y, ticks, bars = 0.0, [], {impl: ([], []) for impl in impls}
    for case, per_impl in rows.items():
        present = [i for i in impls if i in per_impl]
        for k, impl in enumerate(present):
            bars[impl][0].append(y + k)
            bars[impl][1].append(per_impl[impl] * 1e9)
        ticks.append(y + (len(present) - 1) / 2)
        y += len(present) + 0.8
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.15 * y))
    for impl, (ys, xs) in bars.items():
        ax.barh(ys, xs, height=0.85, label=impl, color=COLORS.get(impl))
    ax.set_yticks(ticks, list(rows))
    ax.set_ylim(y - 0.4, -0.8)
    ax.set_xscale("log")
    ax.set_xlabel("median time per operation, ns (log scale; shorter is faster)")
    ax.set_title(title)
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100, metadata={"Software": None})
    plt.close(fig)


def describe(meta: dict) -> str:
    return (f"{meta.get('cpu_model_name', 'unknown CPU')}, {meta.get('cpu_count', '?')} CPUs"
            f"{' at ' + meta['cpu_freq'].split('=')[-1] if 'cpu_freq' in meta else ''}; "
            f"CPython {str(meta.get('python_version', '?')).split()[0]}, ffikit {meta.get('ffikit_version', '?')}, "
            f"tvm_ffi {meta.get('tvm_ffi_version', '?')}")


def setup(app):
    from docutils import nodes
    from docutils.parsers.rst import directives
    from sphinx.util.docutils import SphinxDirective

    class BenchDirective(SphinxDirective):
        required_arguments = 1
        optional_arguments = 20
        option_spec = {"cases": directives.unchanged_required, "title": directives.unchanged_required}

        def run(self):
            docdir = pathlib.Path(self.env.doc2path(self.env.docname)).parent
            paths = [docdir / a for a in self.arguments]
            for p in paths:
                self.env.note_dependency(str(p))
            medians, meta = load(paths)
            rows = select(medians, self.options["cases"].replace(",", " ").split())
            if not rows:
                raise self.error(f"no benchmark of the cases {self.options['cases']} in {self.arguments}")
            title = self.options.get("title", "")
            key = hashlib.sha1(json.dumps([title, rows], sort_keys=True).encode()).hexdigest()[:12]
            # Drawn into the source tree's _build/charts (ignored by git and Bazel) and copied
            # by Sphinx like any other image.
            image = pathlib.Path(self.env.srcdir) / "_build" / "charts" / f"bench-{key}.png"
            draw(rows, f"{title} ({meta.get('cpu_model_name', '?')})", image)
            figure = nodes.figure()
            figure += nodes.image(uri="/" + str(image.relative_to(self.env.srcdir)), alt=title)
            figure += nodes.caption(text=f"{title}: {describe(meta)}.")
            return [figure, self.table(rows)]

        def table(self, rows):
            impls = ordered_impls(rows)
            table = nodes.table()
            group = nodes.tgroup(cols=len(impls) + 1)
            table += group
            for _ in range(len(impls) + 1):
                group += nodes.colspec(colwidth=1)
            head = nodes.thead()
            group += head
            head += self.row(["case", *impls])
            body = nodes.tbody()
            group += body
            for case, per_impl in rows.items():
                body += self.row([case, *(fmt(per_impl[i]) if i in per_impl else "" for i in impls)])
            return table

        @staticmethod
        def row(cells):
            row = nodes.row()
            for text in cells:
                entry = nodes.entry()
                entry += nodes.paragraph(text=text)
                row += entry
            return row

    app.add_directive("ffk-bench", BenchDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
