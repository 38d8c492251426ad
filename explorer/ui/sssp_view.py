"""The Explorer's shortest-paths mode: an SSSP technique and its knobs, unit weights when asked
for, and Run streaming one row per iteration into live plots (the same LevelFeed and
LiveBokehModel as the BFS levels), then the distances checked against scipy.

    panel = ShortestPathsPanel(explorer)   # the Explorer builds it; its controls show in that mode
    result = panel.execute()               # what Run does there: an SSSPResult

`IterationStream` is the per-iteration counterpart of plots.LevelStream: a fixed set of run slots
(a ColumnDataSource and glyphs each, made once) so that nothing but rows changes in the document
while a run streams. No kernel module is imported here.
"""
from __future__ import annotations

import dataclasses
import html
import math
import time

import ipywidgets as W
import numpy as np
from bokeh.layouts import column, gridplot
from bokeh.models import (ColumnDataSource, DataRange1d, DataTable, HoverTool, Legend, LegendItem,
                          NumberFormatter, StringFormatter, TableColumn)
from bokeh.plotting import figure

from .layout import knob_grid, knob_widget, labelled
from .live import LevelFeed, LiveBokehModel
from .plots import LOG_FLOOR, RUN_PALETTE
from .tables import run_label

#: The problem selector's two values.
BFS, SHORTEST_PATHS = "BFS", "Shortest paths"
MAX_RUNS = 6
#: Per-iteration columns each run's source holds (the record's fields, then plot-ready ones).
COLUMNS = ("iteration", "phase", "bucket", "frontier_in", "relaxations", "improvements", "frontier_out",
           "duplicates", "time_ms", "run", "frontier_in_log", "relaxations_log", "improvements_log", "bucket_plot")
#: The figures: name -> (title, y label, [(column, legend word, dash)]); every title says what it counts.
FIGURES = {
    "frontier": ("Frontier in: queue entries relaxed this iteration (duplicates included)", "entries (log)",
                 [("frontier_in_log", "frontier in", "solid")]),
    "relax": ("Relaxations: arcs relaxed (d(u)+w vs d(v)) and those that lowered d(v)", "arcs (log)",
              [("relaxations_log", "relaxations attempted", "solid"),
               ("improvements_log", "improvements (d(v) lowered)", "dashed")]),
    "bucket": ("Δ-stepping's bucket b being settled (distances in [bΔ, (b+1)Δ)); other techniques have none",
               "bucket b",
               [("bucket_plot", "bucket", "solid")]),
    "time": ("Time per iteration (GPU time; the host's clock under the simulator)", "ms",
             [("time_ms", "time", "solid")]),
}
#: Figures on a linear y axis (the others are log: counts span orders of magnitude).
LINEAR = ("bucket", "time")
TIPS = [("run", "@run"), ("iteration", "@iteration"), ("phase", "@phase"), ("frontier in", "@frontier_in"),
        ("relaxations", "@relaxations"), ("improvements", "@improvements"), ("frontier out", "@frontier_out"),
        ("bucket", "@bucket_plot"), ("time", "@time_ms{0.000} ms")]


def _esc(x) -> str:
    return html.escape(str(x))


def _log(x) -> float:
    return max(float(x), LOG_FLOOR)  # log axes cannot show 0; the hover shows the true count


def iteration_row(rec, label: str) -> dict:
    """One IterationStats as a source row."""
    bucket = rec.bucket
    return {"iteration": rec.iteration, "phase": rec.phase, "bucket": "" if bucket is None else str(bucket),
            "frontier_in": rec.frontier_in, "relaxations": rec.relaxations, "improvements": rec.improvements,
            "frontier_out": rec.frontier_out, "duplicates": rec.duplicates, "time_ms": rec.time_ms, "run": label,
            "frontier_in_log": _log(rec.frontier_in), "relaxations_log": _log(rec.relaxations),
            "improvements_log": _log(rec.improvements),
            "bucket_plot": math.nan if bucket is None else float(bucket)}


class IterationStream:
    """Live figures of shortest-path runs, one row per iteration, up to MAX_RUNS runs overlaid
    (a later run takes the oldest slot)."""

    def __init__(self, fig_width: int = 450, max_runs: int = MAX_RUNS):
        x_range = DataRange1d(range_padding=0.05)
        self.figures = {}
        hovers, legends = {}, {}  # kept here: a figure's select() walks every model it holds
        for name, (title, ylabel, _) in FIGURES.items():
            fig = figure(title=title, width=fig_width, height=300, tools="pan,box_zoom,wheel_zoom,reset,save",
                         x_range=x_range, y_axis_type="linear" if name in LINEAR else "log")
            fig.title.text_font_size = "9pt"
            fig.xaxis.axis_label = "iteration"
            fig.yaxis.axis_label = ylabel
            legends[name] = Legend(items=[], click_policy="hide", name="runs", label_text_font_size="8pt",
                                   spacing=1, padding=2)
            fig.add_layout(legends[name], "below")
            hovers[name] = HoverTool(renderers=[], tooltips=TIPS)
            fig.add_tools(hovers[name])
            self.figures[name] = fig
        self.slots = []  # [source, {figure: legend item}, label]
        for i in range(max_runs):
            src = ColumnDataSource({c: [] for c in COLUMNS}, name="sssp-iterations")
            color = RUN_PALETTE[i % len(RUN_PALETTE)]
            items = {}
            for name, (_, _, series) in FIGURES.items():
                fig = self.figures[name]
                rs = []
                for col, _word, dash in series:
                    rs.append(fig.line("iteration", col, source=src, color=color, line_width=2, line_dash=dash,
                                       visible=False))
                    rs.append(fig.scatter("iteration", col, source=src, color=color, size=6, visible=False))
                hovers[name].renderers = [*hovers[name].renderers, *rs[1::2]]
                item = LegendItem(label="", renderers=rs, visible=False)
                legends[name].items.append(item)
                items[name] = item
            self.slots.append([src, items, None])
        self.table_source = ColumnDataSource({c: [] for c in COLUMNS})
        self._started = 0
        self._by_label: dict[str, list] = {}

    def _slot(self, label: str):
        slot = self._by_label.get(label)
        if slot is None:
            slot = self.slots[self._started % len(self.slots)]
            self._started += 1
            if slot[2] is not None:
                del self._by_label[slot[2]]
            slot[0].data = {c: [] for c in COLUMNS}
            for name, item in slot[1].items():
                words = [w for _, w, _ in FIGURES[name][2]]
                item.label = {"value": label if len(words) == 1 else f"{label}: solid {words[0]}, dashed {words[1]}"}
                item.visible = True
                for r in item.renderers:
                    r.visible = True
            slot[2] = label
            self._by_label[label] = slot
        return slot

    @property
    def sources(self) -> dict:
        return {label: slot[0] for label, slot in self._by_label.items()}

    def color(self, label: str) -> str:
        return RUN_PALETTE[self.slots.index(self._by_label[label]) % len(RUN_PALETTE)]

    def push_many(self, records, label: str) -> list[dict]:
        rows = [iteration_row(r, label) for r in records]
        if rows:
            cols = {c: [r[c] for r in rows] for c in COLUMNS}
            self._slot(label)[0].stream(cols)
            self.table_source.stream(cols)
        return rows

    def table(self) -> DataTable:
        cols = [TableColumn(field=c, title=c, width=70 if c != "run" else 200,
                            formatter=NumberFormatter(format="0,0.000" if c == "time_ms" else "0,0")
                            if c not in ("run", "phase", "bucket") else StringFormatter())
                for c in COLUMNS[:10]]
        return DataTable(source=self.table_source, columns=cols, height=200, width=900, index_position=None)

    def layout(self):
        figs = list(self.figures.values())
        return column(gridplot([figs[:2], figs[2:]], toolbar_location="right"), self.table())


class ShortestPathsPanel:
    """The shortest-paths controls and output of an Explorer (which owns graph, source, Run)."""

    def __init__(self, explorer, fig_width: int = 450):
        from ..sssp import implementation, sssp_techniques

        self.ex = explorer
        self.fig_width = fig_width
        techs = [t.value for t in sssp_techniques()]
        self.technique = W.Dropdown(options=techs, value="h-bf", description="technique",
                                    layout=W.Layout(width="210px"),
                                    tooltip="the shortest-path technique to run (what it does is written below)")
        self.technique_doc = W.HTML()
        self.unit_weights = W.Checkbox(value=False, indent=False, description="unit weights",
                                       layout=W.Layout(width="130px"),
                                       tooltip="every arc weighs 1 (for a graph without weights; a weighted "
                                               "graph's own weights are then ignored)")
        self.knob_widgets_of = {t: {s.name: knob_widget(s) for s in implementation(t).Knobs.specs()} for t in techs}
        self.knob_pages = W.Stack([knob_grid(self.knob_widgets_of[t], implementation(t).Knobs.specs())
                                   if self.knob_widgets_of[t] else W.HTML(f"<small>{_esc(t)} has no knobs.</small>")
                                   for t in techs])
        self.knobs_panel = W.Accordion([W.VBox([
            W.HTML("<small>Hover a knob for its meaning, paper section and range.</small>"), self.knob_pages])])
        self.knobs_panel.selected_index = None
        self.technique.observe(lambda _: self._show_technique(), names="value")
        self._show_technique()
        self.technique_label = labelled(self.technique, "130px")
        self.history: list = []  # (label, SSSPResult)
        self.last_check = None  # the last run's reference.sssp.SSSPCheckReport
        self.summary = W.HTML("<p><i>No shortest-path runs yet: press Run.</i></p>")
        self.plots_box = W.Box()
        self.new_stream()

    def new_stream(self) -> None:
        old = self.plots_box.children
        self.stream = IterationStream(fig_width=self.fig_width)
        self.plot_view = LiveBokehModel(self.stream.layout())
        self.plots_box.children = [self.plot_view]
        for w in old:
            w.close()

    def _show_technique(self) -> None:
        from ..sssp import SSSPTechnique

        tech = self.technique.value
        self.technique_doc.value = f"<small style='color:#444'>{_esc(SSSPTechnique(tech).doc)}</small>"
        self.knob_pages.selected_index = list(self.knob_widgets_of).index(tech)
        self.knobs_panel.titles = (f"Knobs of {tech}",)

    @property
    def knob_widgets(self) -> dict:
        return self.knob_widgets_of[self.technique.value]

    def knob_values(self) -> dict:
        return {name: w.value for name, w in self.knob_widgets.items()}

    def set_knobs(self, values: dict) -> None:
        """Checked against the technique's declaration first (KnobError names the knob and range)."""
        from ..sssp import make_knobs

        make_knobs(self.technique.value, {**self.knob_values(), **values})
        for name, v in values.items():
            self.knob_widgets[name].value = v

    def preset_simulator_knobs(self) -> dict:
        """Each technique's simulator knobs into its controls; returns those set."""
        from ..sssp import implementation

        applied = {}
        for tech, widgets in self.knob_widgets_of.items():
            for name, v in implementation(tech).simulator_knobs.items():
                widgets[name].value = applied[name] = v
        return applied

    def execute(self):
        """Run the chosen technique on the Explorer's graph and source; stream; check; summarise."""
        from ..engine import Session
        from ..reference.sssp import check_sssp_result
        from ..sssp import make_knobs, run_sssp

        ex = self.ex
        tech = self.technique.value
        knobs = make_knobs(tech, self.knob_values())
        g = ex.current_graph()
        unit = self.unit_weights.value
        check_weights(g, unit)
        if ex._session is None or ex._session.graph is not g:
            if ex._session is not None:
                ex._session.close()
            ex._session = Session(g)
        status = lambda m: ex._set_status(m, "busy")  # noqa: E731
        run = run_sssp(g, ex._source_value(), tech, knobs, unit_weights=unit, seed=ex.seed.value,
                       session=ex._session, on_status=status)
        label = run_label(len(self.history) + 1, tech, g.name)
        ex._set_status(f"running {label} from vertex {g.to_original(run.source)} ...", "busy")
        feed = LevelFeed(self.stream, label, self.plot_view, on_batch=lambda r: status(
            f"{label}: iteration {r.iteration} ({r.phase}) done, frontier {r.frontier_in:,} -> {r.frontier_out:,}, "
            f"{r.improvements:,} of {r.relaxations:,} relaxations improved a distance"))
        plotting = 0.0
        for rec in run:
            t = time.perf_counter()
            feed.add(rec)
            plotting += time.perf_counter() - t
        feed.close()
        result = run.result
        status(f"{label}: checking the distances against scipy.sparse.csgraph ...")
        report = check_sssp_result(g, result, weights=np.ones(g.num_arcs) if unit else None)
        result.validation = "ok" if report.ok else report.rule
        self.history.append((label, result))
        self.last_check = report
        self.render_summary()
        if report.ok:
            ex._set_status(f"{label}: {len(result.iterations)} iterations, {result.reached:,} vertices reached; "
                           "distances equal scipy's, parents form shortest paths", "ok")
        else:
            ex._set_status(f"{label}: INVALID result: [{report.rule}] {report.message}", "error")
        return result

    def clear(self) -> None:
        self.history.clear()
        self.last_check = None
        self.new_stream()
        self.render_summary()

    def render_summary(self) -> None:
        if not self.history:
            self.summary.value = "<p><i>No shortest-path runs yet: press Run.</i></p>"
            return
        head = ("run", "source", "weights", "distances", "iterations", "reached", "max distance",
                "relaxations", "improvements", "duplicates", "total_ms", "validation")
        rows = []
        for label, r in self.history:
            s = r.summary()
            color = self.stream.color(label) if label in self.stream.sources else "#ccc"
            md = s["max_distance"]
            cells = [s["source"], s["weights"], s["distances"], s["iterations"], f"{s['reached']:,}",
                     "–" if md is None else (f"{md:,.0f}" if r.dtype == "int64" else f"{md:,.4g}"),
                     f"{s['relaxations']:,}", f"{s['improvements']:,}", f"{s['duplicates']:,}",
                     f"{s['total_ms']:.3f}", s["validation"]]
            rows.append(f"<tr><td style='white-space:nowrap'><span style='display:inline-block;width:10px;"
                        f"height:10px;margin-right:5px;background:{color}'></span>{_esc(label)}</td>"
                        + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>")
        check = self.last_check
        line = (f"✓ {check.message}" if check.ok else f"✗ [{check.rule}] {check.message}") if check else ""
        last = self.history[-1][1]
        self.summary.value = (
            "<div style='font-size:12px'><h4>Shortest-path runs</h4><div style='overflow-x:auto'>"
            "<table style='border-collapse:collapse'><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in head)
            + "</tr>" + "".join(rows) + "</table></div>"
            f"<p>Last run's check against scipy.sparse.csgraph: {_esc(line)}</p>"
            f"<p>Last run's distances (first vertices, the graph's ids): {_esc(distance_preview(last))}</p></div>")


def check_weights(graph, unit: bool) -> None:
    """Refuse a graph without weights, unless unit weights are asked for, saying what to do."""
    from ..sssp.weights import UnweightedGraphError

    if graph.weights is None and not unit:
        raise UnweightedGraphError(
            f"graph {graph.name!r} has no weights: pick a generator with weights=integer or uniform, load a "
            "weighted file, or tick 'unit weights' (every arc then weighs 1)")


def weighted_graph(graph, unit: bool):
    """The graph whose weights a shortest-path run reads: itself, or with unit weights a copy of
    it whose every arc weighs 1, named so (its own weights, if any, ignored)."""
    check_weights(graph, unit)
    if not unit:
        return graph
    return dataclasses.replace(graph, weights=np.ones(graph.num_arcs), name=f"{graph.name} (unit weights)")


def distance_preview(result, count: int = 12) -> str:
    """'v: d' for the first `count` vertices of the run's distances ('∞': unreached)."""
    d = result.as_float()
    ids = result.original_ids
    parts = []
    for v in range(min(count, len(d))):
        x = d[v]
        text = "∞" if not np.isfinite(x) else (f"{int(x)}" if result.dtype == "int64" else f"{x:.4g}")
        parts.append(f"{v if ids is None else int(ids[v])}: {text}")
    return ", ".join(parts) + (" ..." if len(d) > count else "")
