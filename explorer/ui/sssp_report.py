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

from pathlib import Path

import numpy as np

from .export import ExportPanel, records_csv, write_session
from .report import PLOTS_META, TIME_LABELS, graph_stats_html, write_page
from .sssp_view import distance_preview
from .tools import esc

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




def write_sssp_report(runs, path, graph_stats: dict | None = None, changed=None,
                      title: str = "Shortest paths: Explorer report") -> Path:
    """Write a self-contained HTML report of (label, SSSPResult) pairs that opens offline.
    `changed(technique, knobs)`: the knobs to name (default: every knob); `graph_stats`:
    {graph name: graphs.graph_stats(g)}."""
    from bokeh.layouts import gridplot

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
    rows = [summary_row(label, r, changed(r.technique, r.knobs)) for label, r in runs]
    return write_page(
        plots, path, title, runs, "Distances are checked against scipy.sparse.csgraph on the same graph and "
        "weights ('validation').", summary=_table(rows),
        distances=_table([{"run": label, **distances_summary(r)} for label, r in runs]),
        graph=graph_stats_html(graph_stats), step="iteration", plots_meta=PLOTS_META,
        tables="".join(f"<h3>{esc(label)}</h3>{_table(iteration_rows(r), 'num')}" for label, r in runs))


def iterations_csv(runs) -> str:
    """Every run's per-iteration records, one row an iteration, each with its run's graph, source,
    technique, knobs (JSON), weights, distances type, device, backend and versions (JSON)."""
    from ..sssp import ITERATION_FIELDS

    return records_csv(runs, RUN_COLUMNS, ITERATION_FIELDS, lambda r: {"weights": r.weights, "distances": r.dtype})


def export_sssp_session(runs, folder, graph_stats: dict | None = None, sweep=None, changed=None) -> dict[str, Path]:
    """Write report.html, runs.json, iterations.csv (and sweep.json) into `folder`; returns their
    paths. The report plots the last REPORT_RUNS runs; the JSON and CSV hold them all."""
    return write_session(runs, folder, nothing="run a shortest-path technique first",
                         title="Shortest paths: Explorer session", report_runs=REPORT_RUNS,
                         csv_name="iterations.csv", csv_text=iterations_csv, sweep=sweep,
                         report=lambda shown, path, title: write_sssp_report(shown, path, graph_stats, changed, title))


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

    def session_runs(self) -> list:
        return session_runs(self.ex)

    def _write(self, runs, graph_stats: dict) -> dict[str, Path]:
        """The files of this mode's runs in the folder box's folder, with its Tuning tab's sweep."""
        from .sssp_view import SHORTEST_PATHS

        tuning = self.ex.tools.built(SHORTEST_PATHS).get("Tuning")
        return export_sssp_session(runs, self.folder.value, graph_stats,
                                   tuning.result if tuning is not None else None, self.picks.changed_knobs)
