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


def records_csv(runs, run_columns: tuple, fields: tuple, run_values=None) -> str:
    """Every run's records (levels or iterations), one row a record, each with its run's
    `run_columns`: label, graph, source, technique, knobs (JSON), `run_values(result)`, device,
    backend and versions (JSON); an unmeasured count is empty."""
    extras = list(dict.fromkeys(e.name for _, r in runs for e in r.extras))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[*run_columns, *fields, *extras], restval="")
    writer.writeheader()
    for label, r in runs:
        dev = r.device or {}
        common = {"run": label, "graph": r.graph, "source": r.summary()["source"], "technique": r.technique,
                  "knobs": json.dumps(r.knobs, sort_keys=True), **(run_values(r) if run_values else {}),
                  "device": dev.get("name", ""), "backend": dev.get("backend", ""),
                  "versions": json.dumps(dev.get("versions", {}), sort_keys=True)}
        for row in r.level_rows():
            writer.writerow({**common, **{k: ("" if v is None else v) for k, v in row.items()}})
    return buf.getvalue()


def levels_csv(runs: list[tuple[str, RunResult]]) -> str:
    """Every run's per-level records, one row a level, each with its run's graph, source,
    technique, knobs (JSON), device, backend and versions (JSON); an unmeasured count is empty."""
    return records_csv(runs, RUN_COLUMNS, LEVEL_FIELDS)


def write_session(runs, folder, *, nothing: str, title: str, report_runs: int, report, csv_name: str, csv_text,
                  sweep=None) -> dict[str, Path]:
    """What an export writes into `folder`, for either problem: report.html (`report(shown, path,
    title)` of the last `report_runs` runs), runs.json (every run, labelled), `csv_name`
    (`csv_text(runs)`) and sweep.json when there is a sweep; returns their paths. No runs raises
    ValueError("nothing to export: " + `nothing`)."""
    runs = list(runs)
    if not runs:
        raise ValueError(f"nothing to export: {nothing}")
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file: give a folder to export into")
    folder.mkdir(parents=True, exist_ok=True)
    shown = runs[-report_runs:]
    title += f" (the last {report_runs} of {len(runs)} runs)" if len(runs) > report_runs else ""
    out = {"report": report(shown, folder / "report.html", title)}
    doc = {"written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "runs": [{"label": label, **json.loads(r.to_json())} for label, r in runs]}
    out["json"] = write_text_atomic(folder / "runs.json", json.dumps(doc, indent=2))
    out["csv"] = write_text_atomic(folder / csv_name, csv_text(runs))
    if sweep is not None:
        out["sweep"] = sweep.save(folder / "sweep.json")
    return out


def export_session(runs: list[tuple[str, RunResult]], folder, graph_stats: dict | None = None,
                   sweep=None) -> dict[str, Path]:
    """Write report.html, runs.json, levels.csv (and sweep.json) into `folder`; returns their paths.
    The report plots the last REPORT_RUNS runs; the JSON and CSV hold them all."""
    return write_session(runs, folder, nothing="run a BFS first", title="BFS-4K Explorer session",
                         report_runs=REPORT_RUNS, csv_name="levels.csv", csv_text=levels_csv, sweep=sweep,
                         report=lambda shown, path, title: write_report(shown, path, graph_stats=graph_stats,
                                                                        title=title))


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
        runs = self.session_runs()
        names = list(dict.fromkeys(r.graph for _, r in runs))
        stats = {n: self.ex._graph_stats_by_name(n) for n in names}
        paths = self._write(runs, {n: s for n, s in stats.items() if s})
        self.status.value = status_html(f"{len(runs)} runs written: " + ", ".join(str(p) for p in paths.values()),
                                        "ok") + "".join(f"<br><small>{esc(k)}: {esc(p.resolve())}</small>"
                                                        for k, p in paths.items())
        return paths

    def session_runs(self) -> list:
        return session_runs(self.ex)

    def _write(self, runs, graph_stats: dict) -> dict[str, Path]:
        """The files of `runs` in the folder box's folder, with the Tuning panel's sweep."""
        sweep_panel = self.ex.tools.built(BFS).get("Tuning")
        sweep = sweep_panel.result if sweep_panel is not None else None
        return export_session(runs, self.folder.value, graph_stats, sweep)
