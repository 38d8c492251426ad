"""The Export panel: the session's runs to files a reader needs no Python for.

One click writes into a folder: `report.html` (write_report: plots, summary and per-level tables,
opens offline), `runs.json` (every run: summary with graph, source, technique, knobs, device and
versions, its per-level records and extras), `levels.csv` (every run's records, one row a level,
with the run's graph, knobs, device and versions on each row) and the Tuning panel's sweep, if
any (`sweep.json`). The session's runs are the Explorer's, then the Comparison panel's and the
Duplicates panel's (labelled so).

    paths = ex.tools.panel("export").export("my-session")    # as the Export button
"""
from __future__ import annotations

import csv
import datetime
import io
import json
from pathlib import Path

import ipywidgets as W

from ..stats import LEVEL_FIELDS, RunResult, write_text_atomic
from .report import write_report
from .sssp_view import BFS
from .tools import esc, status_html

#: Runs the HTML report plots (one colour each); the JSON and CSV hold every run.
REPORT_RUNS = 20
#: Columns of levels.csv before the level fields.
RUN_COLUMNS = ("run", "graph", "source", "technique", "knobs", "device", "backend", "versions")


def session_runs(explorer) -> list[tuple[str, RunResult]]:
    """The Explorer's runs, then the Comparison panel's and the Duplicates panel's (when built)."""
    runs = list(explorer.history)
    panels = explorer.tools.built(BFS) if hasattr(explorer, "tools") else {}
    compare = panels.get("Comparison")
    if compare is not None:
        runs += [(f"compare {label}", r) for label, r in compare.results]
    dup = panels.get("Duplicates")
    if dup is not None and dup.prov is not None:
        runs.append((f"provenance {dup.prov.filter} ({dup.prov.result.graph})", dup.prov.result))
    return runs


def _run_doc(label: str, r: RunResult) -> dict:
    doc = json.loads(r.to_json())
    return {"label": label, **doc}


def levels_csv(runs: list[tuple[str, RunResult]]) -> str:
    """Every run's per-level records, one row a level, each with its run's graph, source,
    technique, knobs (JSON), device, backend and versions (JSON); an unmeasured count is empty."""
    extras = list(dict.fromkeys(e.name for _, r in runs for e in r.extras))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[*RUN_COLUMNS, *LEVEL_FIELDS, *extras], restval="")
    writer.writeheader()
    for label, r in runs:
        dev = r.device or {}
        common = {"run": label, "graph": r.graph, "source": r.summary()["source"], "technique": r.technique,
                  "knobs": json.dumps(r.knobs, sort_keys=True), "device": dev.get("name", ""),
                  "backend": dev.get("backend", ""), "versions": json.dumps(dev.get("versions", {}), sort_keys=True)}
        for row in r.level_rows():
            writer.writerow({**common, **{k: ("" if v is None else v) for k, v in row.items()}})
    return buf.getvalue()


def export_session(runs: list[tuple[str, RunResult]], folder, graph_stats: dict | None = None,
                   sweep=None) -> dict[str, Path]:
    """Write report.html, runs.json, levels.csv (and sweep.json) into `folder`; returns their paths.
    The report plots the last REPORT_RUNS runs; the JSON and CSV hold them all."""
    if not runs:
        raise ValueError("nothing to export: run a BFS first")
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file: give a folder to export into")
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    shown = runs[-REPORT_RUNS:]
    title = "BFS-4K Explorer session" + (f" (the last {REPORT_RUNS} of {len(runs)} runs)" if len(runs) > REPORT_RUNS
                                         else "")
    out["report"] = write_report(shown, folder / "report.html", graph_stats=graph_stats, title=title)
    doc = {"written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "runs": [_run_doc(label, r) for label, r in runs]}
    out["json"] = write_text_atomic(folder / "runs.json", json.dumps(doc, indent=2))
    out["csv"] = write_text_atomic(folder / "levels.csv", levels_csv(runs))
    if sweep is not None:
        out["sweep"] = sweep.save(folder / "sweep.json")
    return out


class ExportPanel(W.VBox):
    def __init__(self, explorer, picks=None):  # picks: tools.Picks; BFS's runs are the Explorer's own
        self.ex = explorer
        self.folder = W.Text(value="bfs4k-export", description="folder", layout=W.Layout(width="360px"),
                             tooltip="where the files go (made if missing; files of the same names are replaced)")
        self.export_button = W.Button(description="Export", icon="download", button_style="primary",
                                      tooltip="write the session's HTML report and every run's records as CSV and JSON")
        self.status = W.HTML()
        self.export_button.on_click(lambda _: self._clicked())
        super().__init__([
            W.HTML("<small>The session's runs (the Explorer's, the comparison's, the provenance run) as an HTML "
                   "report that opens without Python, and their per-level records as CSV and JSON with graph, "
                   "knobs, device and versions; the Tuning panel's sweep as JSON.</small>"),
            W.HBox([self.folder, self.export_button]), self.status])

    def _clicked(self) -> None:
        try:
            self.export()
        except (ValueError, OSError) as err:
            self.status.value = status_html(f"{type(err).__name__}: {err}", "error")

    def export(self, folder=None) -> dict[str, Path]:
        """Export the session into `folder` (default: the folder box); returns the files written."""
        if folder is not None:
            self.folder.value = str(folder)
        runs = session_runs(self.ex)
        names = list(dict.fromkeys(r.graph for _, r in runs))
        stats = {n: self.ex._graph_stats_by_name(n) for n in names}
        sweep_panel = self.ex.tools.built(BFS).get("Tuning")
        sweep = sweep_panel.result if sweep_panel is not None else None
        paths = export_session(runs, self.folder.value, {n: s for n, s in stats.items() if s}, sweep)
        self.status.value = status_html(f"{len(runs)} runs written: " + ", ".join(str(p) for p in paths.values()),
                                        "ok") + "".join(f"<br><small>{esc(k)}: {esc(p.resolve())}</small>"
                                                        for k, p in paths.items())
        return paths
