"""The Comparison and Duplicates tabs in shortest-paths mode (tools.ToolTabs shows them there).

Comparison: several SSSP techniques (or knob sets of one) on the Explorer's weighted graph and
source in one click; their iterations overlay in sssp_view.IterationStream's plots, and a table
ranks them by wall time with the speed-up against the first, each run's distances checked against
scipy's and against the first run's.

Duplicates: a shortest-path duplicate is an improvement of a vertex already queued in the same
iteration (IterationStats.duplicates). The tab runs the Explorer's SSSP technique once per choice
of its duplicate-removal knob (`dedup`: 'stamp' queues a vertex once an iteration, 'none' at every
improvement) and plots what each did per iteration. BFS-4K's provenance view (which warp made each
copy, hash64 against warp culling) is a BFS race and has no counterpart here: the tab says so.

    panel = ex.tools.panel("comparison")        # with ex.problem.value == "Shortest paths"
    panel.compare(["bellman-ford", "h-bf", ("delta-stepping", {"delta": 4.0})])
    ex.tools.panel("duplicates").run()
"""
from __future__ import annotations

import numpy as np
import ipywidgets as W
from bokeh.layouts import gridplot
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure

from .. import api
from ..engine import Session
from ..knobs import KnobError
from .live import LiveBokehModel
from .plots import LOG_FLOOR, RUN_PALETTE
from .sssp_view import IterationStream, check_weights
from .tools import MAX_RUNS, TABLE_CSS, Entries, StatusLine, entry_label, esc, html_table, picked_source
from .widgets import PLOT_WIDTH

#: The tabs' tables have many columns: a cell keeps its line (a word such as "speed-up" broke at its
#: hyphen) and the table scrolls sideways instead (TABLE_CSS).
NOWRAP_CSS = "<style>.sssp-tool td,.sssp-tool th{white-space:nowrap}</style>"


def distances_agree(a, b) -> bool:
    """Whether two SSSPResults reached the same vertices at the same distances (exactly for
    whole-number distances, within float rounding otherwise)."""
    da, db = a.as_float(), b.as_float()
    if da.shape != db.shape or (np.isfinite(da) != np.isfinite(db)).any():
        return False
    both = np.isfinite(da)
    if a.dtype == b.dtype == "int64":
        return bool((da[both] == db[both]).all())
    return bool(np.allclose(da[both], db[both], rtol=1e-9, atol=1e-12))


class _Runs:
    """What both tabs share: the graph, weights and source of the Explorer, a session, the scipy
    reference, and one checked run."""

    def __init__(self, explorer):
        self.ex = explorer
        self._session: Session | None = None

    def prepare(self):
        """(graph, vertex 0..n-1, unit weights?, scipy's distances); refuses a graph without weights."""
        from ..reference.sssp import arc_weights, reference_sssp

        g = self.ex.current_graph()
        unit = self.ex.sssp.unit_weights.value
        check_weights(g, unit)
        src = api.resolve_source(g, picked_source(self.ex), self.ex.seed.value)  # the one conversion in
        if self._session is None or self._session.graph is not g:
            if self._session is not None:
                self._session.close()
            self._session = Session(g)
        self.weights = np.ones(g.num_arcs) if unit else None
        return g, src, unit, reference_sssp(g, src, arc_weights(g, self.weights))[0]

    def run(self, g, src, unit, expected, tech, knobs, on_record=None):
        """One run, streamed record by record to `on_record`, checked against scipy."""
        from ..reference.sssp import check_sssp_result
        from ..sssp import run_sssp

        run = run_sssp(g, api.Vertex(src), tech, knobs, unit_weights=unit, session=self._session)
        for rec in run:
            if on_record is not None:
                on_record(rec)
        result = run.result
        rep = check_sssp_result(g, result, expected=expected, weights=self.weights)
        result.validation = "ok" if rep.ok else rep.rule
        return result


def _simulated(results) -> bool:
    return any((r.device or {}).get("backend") == "simulator" for r in results)


SIMULATOR_WORDS = "; simulator: times are simulation times, not GPU times"


class SSSPComparePanel(StatusLine, Entries, W.VBox):
    """Pick SSSP runs (techniques, or the Explorer's setting), run them on one weighted graph and source."""

    def __init__(self, explorer, picks):
        from ..sssp import sssp_techniques

        self.ex = explorer
        self.results: list = []  # (label, SSSPResult)
        self.failed: list[tuple[str, str]] = []  # (label, why it did not run)
        self._runs = _Runs(explorer)
        self.stream: IterationStream | None = None
        entries = self.entry_controls(picks, [t.value for t in sssp_techniques()], rows=4)
        self.status = W.HTML()
        self.plot_box = W.Box()
        self.table = W.HTML()
        self.run_button.on_click(lambda _: self._clicked(self.compare))
        super().__init__([
            W.HTML(TABLE_CSS + NOWRAP_CSS + "<small>Run several shortest-path techniques, or one with several knob sets, on the "
                   "Explorer's weighted graph and source (its 'unit weights' too). Their iterations overlay (one "
                   "colour each; click a legend entry to hide a run); the table ranks them by wall time with the "
                   "speed-up against the first. Every run's distances are checked against scipy's and against "
                   "the first run's.</small>"),
            entries, self.status, self.plot_box, self.table])

    # ------------------------------------------------------------------ running
    def compare(self, entries=None) -> list:
        """Run every entry (or `entries`, which replace them) on the Explorer's graph and source,
        each checked against scipy and against the first run; returns (label, SSSPResult) in entry
        order. An entry the graph refuses (Δ-stepping and a negative weight) is listed with why."""
        self._entries_to_run(entries)
        g, src, unit, expected = self._runs.prepare()
        own_id = g.to_original(src)
        self._new_plots()
        self.results, self.failed = [], []
        self.table.value = ""
        self.run_button.disabled = True
        try:
            for i, (tech, knobs) in enumerate(self.entries):
                label = self._label(i, tech, knobs)
                self._set_status(f"running {label} on {g.name} from vertex {own_id} ...", "busy")
                try:
                    result = self._runs.run(g, src, unit, expected, tech, knobs,
                                            lambda rec, label=label: self.stream.push_many([rec], label))
                except (ValueError, NotImplementedError) as err:  # refused by this graph's weights
                    self.failed.append((label, f"{type(err).__name__}: {err}"))
                    continue
                self.results.append((label, result))
        finally:
            self.run_button.disabled = False
        self._show_ranking()
        bad = [label for label, r in self.results if r.validation != "ok"]
        differ = [label for label, r in self.results[1:] if not distances_agree(self.results[0][1], r)]
        sim = SIMULATOR_WORDS if _simulated(r for _, r in self.results) else ""
        where = f"on {g.name} from vertex {own_id}"
        if bad or differ:
            self._set_status(f"INVALID result: {', '.join(bad + differ)} ({len(bad)} differ from scipy, "
                             f"{len(differ)} from the first run)", "error")
        elif self.failed:
            self._set_status(f"{len(self.results)} runs {where}, equal distances, all valid; "
                             f"{len(self.failed)} refused: {'; '.join(f'{l}: {w}' for l, w in self.failed)}"
                             + sim, "error" if not self.results else "info")
        else:
            self._set_status(f"{len(self.results)} runs {where}: every run's distances equal scipy's and each "
                             "other's" + sim, "ok")
        return list(self.results)

    def _new_plots(self) -> None:
        old = self.plot_box.children
        self.stream = IterationStream(fig_width=PLOT_WIDTH, max_runs=MAX_RUNS)
        figs = list(self.stream.figures.values())
        self.plot_box.children = [LiveBokehModel(gridplot([figs[:2], figs[2:]], toolbar_location="right",
                                                          merge_tools=True))]
        for w in old:
            w.close()

    def _show_ranking(self) -> None:
        if not self.results:
            self.table.value = ""
            return
        first_label, first = self.results[0]
        rows = []
        for label, r in self.results:
            s = r.summary()
            rows.append({"run": label, "wall ms": r.elapsed_ms, "iterations ms": r.total_ms,
                         "speed-up": first.elapsed_ms / r.elapsed_ms if r.elapsed_ms > 0 else float("nan"),
                         "iterations": s["iterations"], "relaxations": f"{s['relaxations']:,}",
                         "improvements": f"{s['improvements']:,}", "duplicates": f"{s['duplicates']:,}",
                         "distances": "the first run's" if label == first_label else
                         "equal" if distances_agree(first, r) else "DIFFER",
                         "validation": r.validation or "not validated"})
        rows.sort(key=lambda row: row["wall ms"])
        for rank, row in enumerate(rows, 1):
            row.update({"rank": rank, "speed-up": f"{row['speed-up']:.2f}×", "wall ms": f"{row['wall ms']:.3f}",
                        "iterations ms": f"{row['iterations ms']:.3f}"})
        rows += [{"run": label, "validation": f"not run: {why}"} for label, why in self.failed]
        cols = ["rank", "run", "wall ms", "iterations ms", "speed-up", "iterations", "relaxations", "improvements",
                "duplicates", "distances", "validation"]
        swatches = "".join(f"<span style='display:inline-block;width:10px;height:10px;background:"
                           f"{esc(self.stream.color(label))};margin:0 4px 0 10px'></span>{esc(label)}"
                           for label, _ in self.results)
        self.table.value = (
            f"<h4>Ranking (shortest-path wall time; speed-up against {esc(first_label)})</h4>"
            + "<div class='sssp-tool'>" + html_table(
                rows, cols, numeric={"rank", "wall ms", "iterations ms", "speed-up", "iterations", "relaxations",
                                     "improvements", "duplicates"}) + "</div>"
            + "<small>'wall ms': first iteration to last, host round trips included; 'iterations ms': the "
              "iterations' own times summed. One run each: a difference of a few percent can be the machine's "
              "noise; the Tuning tab repeats each setting and says which differences are measured.</small><br>"
            f"<small>{swatches}</small>")


# ------------------------------------------------------------------ duplicates

DUP_COLUMNS = ("iteration", "duplicates", "duplicates_plot", "frontier_out", "frontier_out_plot", "improvements",
               "run")


def dedup_settings(technique: str, knobs: dict, Knobs) -> list[tuple[dict, str]]:
    """The runs the Duplicates tab makes: the knobs with each choice of `dedup` (the technique's
    duplicate removal), or the knobs as they are when it has none. A choice a cross-knob rule
    refuses takes the first other choice-knob value that makes it valid, and says which and why:
    [(knobs, note)]."""
    names = {s.name: s for s in Knobs.specs()}
    if "dedup" not in names:
        return [(dict(knobs), "")]
    out = []
    for choice in names["dedup"].choices:
        want = {**knobs, "dedup": choice}
        try:
            Knobs.from_dict(want)
            out.append((want, ""))
            continue
        except KnobError as err:
            why = str(err)
        fix = next(({**want, name: v} for name, spec in names.items() if name != "dedup" and spec.choices
                    for v in spec.choices if v != want[name] and _valid(Knobs, {**want, name: v})), None)
        if fix is None:
            out.append((want, why))  # shown as refused
        else:
            changed = next(k for k in fix if fix[k] != want[k])
            out.append((fix, f"{changed}={fix[changed]}, as {why}"))
    return out


def _valid(Knobs, values) -> bool:
    try:
        Knobs.from_dict(values)
        return True
    except KnobError:
        return False


class SSSPDuplicatesPanel(StatusLine, W.VBox):
    """The Explorer's SSSP technique run once per duplicate-removal setting: duplicates and next
    frontiers per iteration, and the totals."""

    def __init__(self, explorer, picks):
        self.ex, self.picks = explorer, picks
        self.results: list = []  # (label, SSSPResult)
        self._runs = _Runs(explorer)
        self.run_button = W.Button(description="Run each dedup setting", icon="search", button_style="primary",
                                   layout=W.Layout(width="220px"),
                                   tooltip="the Explorer's shortest-path technique and knobs, once per choice of its "
                                           "dedup knob (once when it has none), on its graph and source")
        self.status = W.HTML()
        self.plot_box = W.Box()
        self.table = W.HTML()
        self.run_button.on_click(lambda _: self._clicked(self.run))
        super().__init__([
            W.HTML(TABLE_CSS + NOWRAP_CSS + "<small>In shortest paths a <b>duplicate</b> is an improvement of a vertex already "
                   "queued in the same iteration: its distance fell twice. With duplicate removal (dedup='stamp', "
                   "H-BF's default) the vertex is queued once an iteration and the copy dropped; without "
                   "(dedup='none', Algorithm 5's ENQUEUE) every improvement queues it again and the next frontier "
                   "grows. Δ-stepping always removes them. This tab runs the Explorer's technique once per dedup "
                   "setting and draws what each did.</small>"),
            W.HTML("<small style='color:#555'>The BFS view of this tab (which warp made each copy, hash64 against "
                   "warp culling, BFS-4K Fig. 13) is about BFS-4K's benign race when vertices are claimed; a "
                   "shortest-path run claims no vertex, so that view has no counterpart here: switch the problem to "
                   "BFS for it.</small>"),
            self.run_button, self.status, self.plot_box, self.table])

    def run(self) -> list:
        """Run as the button does; returns (label, SSSPResult) per setting that ran."""
        tech = self.picks.technique.value
        settings = dedup_settings(tech, self.picks.knob_values(), self.picks.knobs_of(tech))
        g, src, unit, expected = self._runs.prepare()
        self.results, rows, notes = [], [], []
        for i, (knobs, note) in enumerate(settings):
            label = entry_label(i, tech, {k: knobs[k] for k in ("dedup",) if k in knobs}
                                or self.picks.changed_knobs(tech, knobs))
            if note and not _valid(self.picks.knobs_of(tech), knobs):
                rows.append({"run": label, "validation": f"refused: {note}"})
                continue
            self._set_status(f"running {label} on {g.name} ...", "busy")
            result = self._runs.run(g, src, unit, expected, tech, knobs)
            self.results.append((label, result))
            if note:
                notes.append(f"{label}: with {note}")
            s = result.summary()
            rows.append({"run": label, "iterations": s["iterations"],
                         "frontier entries": f"{sum(r.frontier_in for r in result.iterations):,}",
                         "improvements": f"{s['improvements']:,}", "duplicates": f"{s['duplicates']:,}",
                         "duplicates were": _fate(knobs), "wall ms": f"{result.elapsed_ms:.3f}",
                         "validation": result.validation})
        self._show(rows, notes)
        bad = [label for label, r in self.results if r.validation != "ok"]
        sim = SIMULATOR_WORDS if _simulated(r for _, r in self.results) else ""
        if bad:
            self._set_status(f"INVALID result: {', '.join(bad)}", "error")
        else:
            total = ", ".join(f"{label}: {r.summary()['duplicates']:,}" for label, r in self.results)
            self._set_status(f"{tech} on {g.name}: duplicates {total}; distances equal scipy's" + sim, "ok")
        return list(self.results)

    def _show(self, rows: list[dict], notes: list[str]) -> None:
        tips = [("run", "@run"), ("iteration", "@iteration"), ("duplicates", "@duplicates"),
                ("frontier out", "@frontier_out"), ("improvements", "@improvements")]
        dup = figure(title="Duplicates per iteration: improvements of a vertex already queued", width=PLOT_WIDTH,
                     height=300, tools="pan,wheel_zoom,box_zoom,reset,save")
        out = figure(title="Next frontier per iteration: entries queued (duplicates kept included)",
                     width=PLOT_WIDTH, height=300, y_axis_type="log", x_range=dup.x_range,
                     tools="pan,wheel_zoom,box_zoom,reset,save")
        for i, (label, r) in enumerate(self.results):
            recs = r.iterations
            src = ColumnDataSource({"iteration": [x.iteration for x in recs], "duplicates": [x.duplicates for x in recs],
                                    "duplicates_plot": [x.duplicates for x in recs],
                                    "frontier_out": [x.frontier_out for x in recs],
                                    "frontier_out_plot": [max(x.frontier_out, LOG_FLOOR) for x in recs],
                                    "improvements": [x.improvements for x in recs], "run": [label] * len(recs)},
                                   name="sssp-duplicates")
            color = RUN_PALETTE[i % len(RUN_PALETTE)]
            for fig, col in ((dup, "duplicates_plot"), (out, "frontier_out_plot")):
                fig.line("iteration", col, source=src, color=color, line_width=2, legend_label=label)
                fig.scatter("iteration", col, source=src, color=color, size=6, legend_label=label)
        for fig, ylabel in ((dup, "duplicates"), (out, "entries (log)")):
            fig.xaxis.axis_label, fig.yaxis.axis_label = "iteration", ylabel
            fig.title.text_font_size = "9pt"
            fig.add_tools(HoverTool(tooltips=tips))
            if fig.legend:  # below the plot, never over a curve
                legend = fig.legend[0]
                legend.click_policy, legend.label_text_font_size = "hide", "8pt"
                fig.center = [m for m in fig.center if m is not legend]
                fig.add_layout(legend, "below")
        old = self.plot_box.children
        self.plot_box.children = [LiveBokehModel(gridplot([[dup, out]], toolbar_location="right"))]
        for w in old:
            w.close()
        cols = ["run", "iterations", "frontier entries", "improvements", "duplicates", "duplicates were", "wall ms",
                "validation"]
        self.table.value = ("<div class='sssp-tool'>" + html_table(rows, cols, numeric={
            "iterations", "frontier entries", "improvements", "duplicates", "wall ms"}) + "</div>"
                            + "".join(f"<br><small style='color:#a15c00'>{esc(n)}</small>" for n in notes))


def _fate(knobs: dict) -> str:
    dedup = knobs.get("dedup")
    if dedup is None:
        return "as the technique does (no dedup knob)"
    return "dropped (queued once)" if dedup == "stamp" else "queued again"
