"""Shortest-path runs to files a reader needs no Python for: the Export tab in shortest-paths mode.

`write_sssp_report` writes a self-contained HTML report (BokehJS inlined: it opens offline) of
SSSPResults: a summary row per run (graph, source, technique, changed knobs, weights, distances,
iterations, counts, times, validation, device), each run's distances summarised, the per-iteration
plots of sssp_view.IterationStream and each run's per-iteration records. `export_sssp_session`
adds runs.json (every run's summary and records), iterations.csv (one row an iteration, each with
its run's graph, knobs, weights and device) and the Tuning tab's sweep (sweep.json).

    write_sssp_report(ex.sssp.history, "sssp-report.html")
    ex.tools.panel("export").export("my-session")     # with ex.problem.value == "Shortest paths"
"""
from __future__ import annotations

import csv
import datetime
import io
import json
from pathlib import Path

import numpy as np

from ..stats import write_text_atomic
from .export import ExportPanel
from .report import CSS, SIMULATOR_NOTE, TIME_LABELS, graph_stats_html
from .sssp_view import distance_preview
from .tools import esc, status_html

#: Runs a report plots (one colour each); the JSON and CSV hold every run.
REPORT_RUNS = 10
#: Columns of iterations.csv before the iteration fields.
RUN_COLUMNS = ("run", "graph", "source", "technique", "knobs", "weights", "distances", "device", "backend",
               "versions")


def session_runs(explorer) -> list:
    """The Explorer's shortest-path runs, then the Comparison tab's and the Duplicates tab's of
    that mode (when built), as (label, SSSPResult)."""
    from .sssp_view import SHORTEST_PATHS

    runs = list(explorer.sssp.history)
    panels = explorer.tools.built(SHORTEST_PATHS)
    for title, word in (("Comparison", "compare"), ("Duplicates", "duplicates")):
        panel = panels.get(title)
        if panel is not None:
            runs += [(f"{word} {label}", r) for label, r in panel.results]
    return runs


def _number(result, x) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    return f"{x:,.0f}" if result.dtype == "int64" else f"{x:,.6g}"


def distances_summary(result) -> dict:
    """Reached vertices and the spread of their distances (the source's 0 included)."""
    d = result.as_float()
    far = d[np.isfinite(d)]
    return {"reached": f"{far.size:,} of {d.size:,}",
            "min": _number(result, far.min() if far.size else None),
            "median": _number(result, float(np.median(far)) if far.size else None),
            "mean": f"{far.mean():,.6g}" if far.size else "–",
            "max": _number(result, far.max() if far.size else None),
            "first vertices (the graph's ids; ∞ unreached)": distance_preview(result)}


def summary_row(label: str, result, changed: dict) -> dict:
    s = result.summary()
    dev = result.device or {}
    return {"run": label, "graph": s["graph"], "source": s["source"], "technique": s["technique"],
            "knobs": ", ".join(f"{k}={v}" for k, v in changed.items()) or "defaults", "weights": s["weights"],
            "distances": s["distances"], "iterations": s["iterations"], "reached": f"{s['reached']:,}",
            "relaxations": f"{s['relaxations']:,}", "improvements": f"{s['improvements']:,}",
            "duplicates": f"{s['duplicates']:,}",
            TIME_LABELS.get(dev.get("backend"), "iterations' time (ms)"): f"{s['total_ms']:.3f}",
            "wall (ms)": f"{s['elapsed_ms']:.3f}", "validation": s["validation"] or "not validated",
            "device": str(dev.get("name", "?"))}


def _table(rows: list[dict], cls: str = "") -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{esc(k)}</th>" for k in keys)
    body = "".join("<tr>" + "".join(f"<td class='{cls}'>{esc(r.get(k, ''))}</td>" for k in keys) + "</tr>"
                   for r in rows)
    return f"<div class='scroll'><table class='levels'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def iteration_rows(result) -> list[dict]:
    return [{k: ("" if v is None else round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
            for row in result.level_rows()]


_PAGE = """{% extends base %}
{% block inner_head %}{{ super() }}<style>{{ css }}</style>{% endblock %}
{% block contents %}
<h1>{{ heading }}</h1>
<p class="meta">{{ meta }}</p>
{{ note }}
<h2>Runs</h2>
{{ summary }}
<h2>Distances</h2>
{{ distances }}
<h2>Graph (BFS-4K Table 1 statistics)</h2>
{{ graph }}
<h2>Per-iteration plots</h2>
<p class="meta">Hover a marker for exact values; click a legend entry to hide it. Log axes draw 0 at 0.5.</p>
{{ embed(roots.plots) }}
<h2>Per-iteration records</h2>
{{ tables }}
{% endblock %}
"""


def write_sssp_report(runs, path, graph_stats: dict | None = None, changed=None,
                      title: str = "Shortest paths: Explorer report") -> Path:
    """Write a self-contained HTML report of (label, SSSPResult) pairs that opens offline.
    `changed(technique, knobs)`: the knobs to name (default: every knob); `graph_stats`:
    {graph name: graphs.graph_stats(g)}."""
    from bokeh.embed import file_html
    from bokeh.layouts import gridplot
    from bokeh.resources import INLINE
    from jinja2 import Template

    from .sssp_view import IterationStream

    runs = list(runs)
    if not runs:
        raise ValueError("nothing to report: run a shortest-path technique first")
    if len(runs) > REPORT_RUNS:
        raise ValueError(f"a report plots at most {REPORT_RUNS} runs (one colour each); got {len(runs)}")
    changed = changed or (lambda tech, knobs: dict(knobs))
    stream = IterationStream(fig_width=560, max_runs=len(runs))
    for label, r in runs:
        stream.push_many(r.iterations, label)
    figs = list(stream.figures.values())
    plots = gridplot([figs[:2], figs[2:]], toolbar_location="right")
    plots.name = "plots"
    sim = any((r.device or {}).get("backend") == "simulator" for _, r in runs)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    rows = [summary_row(label, r, changed(r.technique, r.knobs)) for label, r in runs]
    page = file_html(plots, INLINE, title=title, template=Template(_PAGE), template_variables={
        "css": CSS,
        "heading": esc(title),
        "meta": f"{len(runs)} run(s), written {when}. Distances are checked against scipy.sparse.csgraph on the "
                "same graph and weights ('validation').",
        "note": f"<p class='note'>{esc(SIMULATOR_NOTE)}</p>" if sim else "",
        "summary": _table(rows),
        "distances": _table([{"run": label, **distances_summary(r)} for label, r in runs]),
        "graph": graph_stats_html(graph_stats),
        "tables": "".join(f"<h3>{esc(label)}</h3>{_table(iteration_rows(r), 'num')}" for label, r in runs),
    })
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, page)


def iterations_csv(runs) -> str:
    """Every run's per-iteration records, one row an iteration, each with its run's graph, source,
    technique, knobs (JSON), weights, distances type, device, backend and versions (JSON)."""
    from ..sssp import ITERATION_FIELDS

    extras = list(dict.fromkeys(e.name for _, r in runs for e in r.extras))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[*RUN_COLUMNS, *ITERATION_FIELDS, *extras], restval="")
    writer.writeheader()
    for label, r in runs:
        dev = r.device or {}
        common = {"run": label, "graph": r.graph, "source": r.summary()["source"], "technique": r.technique,
                  "knobs": json.dumps(r.knobs, sort_keys=True), "weights": r.weights, "distances": r.dtype,
                  "device": dev.get("name", ""), "backend": dev.get("backend", ""),
                  "versions": json.dumps(dev.get("versions", {}), sort_keys=True)}
        for row in r.level_rows():
            writer.writerow({**common, **{k: ("" if v is None else v) for k, v in row.items()}})
    return buf.getvalue()


def export_sssp_session(runs, folder, graph_stats: dict | None = None, sweep=None, changed=None) -> dict[str, Path]:
    """Write report.html, runs.json, iterations.csv (and sweep.json) into `folder`; returns their
    paths. The report plots the last REPORT_RUNS runs; the JSON and CSV hold them all."""
    runs = list(runs)
    if not runs:
        raise ValueError("nothing to export: run a shortest-path technique first")
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file: give a folder to export into")
    folder.mkdir(parents=True, exist_ok=True)
    shown = runs[-REPORT_RUNS:]
    title = "Shortest paths: Explorer session" + (
        f" (the last {REPORT_RUNS} of {len(runs)} runs)" if len(runs) > REPORT_RUNS else "")
    out = {"report": write_sssp_report(shown, folder / "report.html", graph_stats, changed, title)}
    doc = {"written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "runs": [{"label": label, **json.loads(r.to_json())} for label, r in runs]}
    out["json"] = write_text_atomic(folder / "runs.json", json.dumps(doc, indent=2))
    out["csv"] = write_text_atomic(folder / "iterations.csv", iterations_csv(runs))
    if sweep is not None:
        out["sweep"] = sweep.save(folder / "sweep.json")
    return out


class SSSPExportPanel(ExportPanel):
    """The Export tab in shortest-paths mode: that mode's runs and sweep."""

    def __init__(self, explorer, picks):
        super().__init__(explorer, picks)
        self.picks = picks
        self.folder.value = "sssp-export"
        self.children[0].value = (
            "<small>The shortest-path runs of this session (the Explorer's, the comparison's, the duplicates "
            "tab's) as an HTML report that opens without Python (technique, knobs, weights, distances, "
            "per-iteration plots and records), their per-iteration records as CSV and JSON with graph, knobs, "
            "weights, device and versions; the Tuning tab's sweep as JSON.</small>")

    def export(self, folder=None) -> dict[str, Path]:
        """Export this mode's runs into `folder` (default: the folder box); returns the files written."""
        from .sssp_view import SHORTEST_PATHS

        if folder is not None:
            self.folder.value = str(folder)
        runs = session_runs(self.ex)
        names = list(dict.fromkeys(r.graph for _, r in runs))
        stats = {n: self.ex._graph_stats_by_name(n) for n in names}
        tuning = self.ex.tools.built(SHORTEST_PATHS).get("Tuning")
        paths = export_sssp_session(runs, self.folder.value, {n: s for n, s in stats.items() if s},
                                    tuning.result if tuning is not None else None, self.picks.changed_knobs)
        self.status.value = status_html(f"{len(runs)} runs written: " + ", ".join(str(p) for p in paths.values()),
                                        "ok") + "".join(f"<br><small>{esc(k)}: {esc(p.resolve())}</small>"
                                                        for k, p in paths.items())
        return paths
