"""The Comparison panel: several techniques (or knob sets of one) on the Explorer's graph and
source in one click. Their levels overlay in the Explorer's plots (a colour per run, runs drawn
a little apart so identical records do not hide each other, a legend entry per run that hides or
shows it), a timeline under the frontier plot shows what ran at each level, and a table ranks the
runs by time with the speed-up against the first.

    panel = ex.tools.panel("comparison")
    panel.compare(["topdown-queue", ("bfs4k", {"K1": 32}), ("bfs4k", {"K1": 4})])

"auto" is an entry too: its label then names the technique it chose ("A auto → bfs4k").

`TimelinePlot` is usable alone: a row per run, a cell per level coloured by what ran there
(technique · kernel · direction), sharing its x axis with the frontier plot.
"""
from __future__ import annotations

import ipywidgets as W
from bokeh.layouts import gridplot
from bokeh.models import CategoricalColorMapper, ColumnDataSource, FactorRange, HoverTool
from bokeh.palettes import Category10_10, Set3_12
from bokeh.plotting import figure

from .live import LiveBokehModel
from .. import api
from ..auto import AUTO, is_auto
from ..engine import Session
from ..reference import bfs_distances, check_result
from ..stats import LevelStats, RunResult
from ..techniques import implemented_techniques
from .plots import LevelStream
from .sssp_view import BFS
from .tools import (MAX_RUNS, TABLE_CSS, Entries, Picks, StatusLine, entry_label, esc, html_table,
                    picked_source)
from .technique_panel import ran_label
from .widgets import PLOT_WIDTH

#: Colours of what ran at a level (technique · kernel · direction), in order of appearance.
STEP_PALETTE = (*Category10_10, *Set3_12)
TIMELINE_COLUMNS = ("level", "run", "what", "technique", "kernel", "direction", "launches", "time_ms")


def what_ran(lv: LevelStats) -> str:
    """A level's timeline category: its technique, kernel kind and direction."""
    return f"{lv.technique} · {lv.kernel.value} · {lv.direction.value}"


class TimelinePlot:
    """A row per run, a cell per level coloured by what ran (technique · kernel · direction; one
    legend entry per kind). Give it the frontier plot's x range to align the two."""

    def __init__(self, x_range=None, width: int = PLOT_WIDTH, height: int = 220):
        self.source = ColumnDataSource({c: [] for c in TIMELINE_COLUMNS}, name="timeline")
        self.mapper = CategoricalColorMapper(factors=[], palette=list(STEP_PALETTE))
        kw = {"x_range": x_range} if x_range is not None else {}
        fig = figure(title="What ran at each level (technique · kernel · direction)", width=width, height=height,
                     y_range=FactorRange(factors=[]), tools="xpan,xwheel_zoom,reset,save", **kw)
        cells = fig.rect("level", "run", 0.9, 0.8, source=self.source, line_color="white",
                         fill_color={"field": "what", "transform": self.mapper}, legend_field="what")
        fig.add_tools(HoverTool(renderers=[cells], tooltips=[
            ("run", "@run"), ("level", "@level"), ("technique", "@technique"), ("kernel", "@kernel"),
            ("direction", "@direction"), ("launches", "@launches"), ("time", "@time_ms{0.000} ms")]))
        fig.xaxis.axis_label = "BFS level"
        fig.yaxis.major_label_text_font_size = "8pt"
        fig.legend.label_text_font_size = "8pt"
        legend = fig.legend[0]
        fig.center = [m for m in fig.center if m is not legend]  # below the cells, not over them
        legend.orientation = "horizontal"
        fig.add_layout(legend, "below")
        self.figure = fig

    def add(self, levels: list[LevelStats], run: str) -> None:
        """Stream a run's levels (as they arrive); a new run gets a row, a new kind a colour."""
        if not levels:
            return
        yr = self.figure.y_range
        if run not in yr.factors:
            yr.factors = [run, *yr.factors]  # first run on top
        kinds = [what_ran(lv) for lv in levels]
        new = [k for k in dict.fromkeys(kinds) if k not in self.mapper.factors]
        if new:
            factors = [*self.mapper.factors, *new]
            self.mapper.factors = factors[:len(STEP_PALETTE)]
        self.source.stream({
            "level": [lv.level for lv in levels], "run": [run] * len(levels), "what": kinds,
            "technique": [lv.technique for lv in levels], "kernel": [lv.kernel.value for lv in levels],
            "direction": [lv.direction.value for lv in levels], "launches": [lv.launches for lv in levels],
            "time_ms": [lv.time_ms for lv in levels]})


def ranking(labelled: list[tuple[str, RunResult]]) -> list[dict]:
    """Runs fastest first (BFS wall time), with the speed-up against the first run given."""
    if not labelled:
        return []
    first = labelled[0][1].elapsed_ms
    rows = []
    for label, r in labelled:
        rows.append({"run": label, "time ms": round(r.elapsed_ms, 3), "kernels ms": round(r.total_ms, 3),
                     "speed-up": (first / r.elapsed_ms) if r.elapsed_ms > 0 else float("nan"),
                     "levels": r.num_levels, "validation": r.validation or "not validated"})
    rows.sort(key=lambda row: row["time ms"])
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


class ComparePanel(StatusLine, Entries, W.VBox):
    """Pick runs (techniques, or the Explorer's current setting), run them on one graph and source."""

    def __init__(self, explorer, picks=None):  # picks: tools.Picks; BFS's controls are the Explorer's own
        self.ex = explorer
        self.results: list[tuple[str, RunResult]] = []
        self._session: Session | None = None
        self.stream: LevelStream | None = None
        self.timeline: TimelinePlot | None = None
        entries = self.entry_controls(picks or Picks(explorer, BFS),
                                      [AUTO, *(t.value for t in implemented_techniques())], rows=6)
        self.status = W.HTML()
        self.plot_box = W.Box()
        self.table = W.HTML()
        self.run_button.on_click(lambda _: self._clicked(self.compare))
        super().__init__([
            W.HTML(TABLE_CSS + "<small>Run several techniques, or one technique with several knob sets, on the "
                   "Explorer's graph and source. The runs overlay (one colour each, drawn a little apart; "
                   "click a legend entry to hide a run); the timeline under the frontier plot shows what ran at "
                   "each level; the table ranks them by time with the speed-up against the first.</small>"),
            entries, self.status, self.plot_box, self.table])

    # ------------------------------------------------------------------ running
    def compare(self, entries=None) -> list[tuple[str, RunResult]]:
        """Run every entry (or `entries`, which replace them) on the Explorer's graph and source,
        each checked against the CPU reference; returns (label, result) in entry order."""
        self._entries_to_run(entries)
        g = self.ex.current_graph()
        src = api.resolve_source(g, picked_source(self.ex), self.ex.seed.value)  # the one conversion in
        own_id = g.to_original(src)  # and out, for the status lines
        if self._session is None or self._session.graph is not g:
            if self._session is not None:
                self._session.close()
            self._session = Session(g)
        self._new_plots()
        expected = bfs_distances(g, src)
        self.results = []
        self.run_button.disabled = True
        try:
            for i, (tech, knobs) in enumerate(self.entries):
                label = self._label(i, tech, knobs)
                self._set_status(f"running {label} on {g.name} from vertex {own_id} ...", "busy")
                run = api.run_bfs(g, api.Vertex(src), tech, None if is_auto(tech) else knobs,
                                  instrument=self.ex.instrument.value, session=self._session)
                if run.choice is not None:  # the label names what auto chose
                    label = entry_label(i, ran_label(run), {})
                for lv in run:
                    self.stream.push(lv, label)
                    self.timeline.add([lv], label)
                result = run.result
                rep = check_result(g, result, expected=expected)
                result.validation = "ok" if rep.ok else rep.rule
                self.results.append((label, result))
        finally:
            self.run_button.disabled = False
        self._show_ranking()
        bad = [label for label, r in self.results if r.validation != "ok"]
        if bad:
            self._set_status(f"INVALID result: {', '.join(bad)}", "error")
        else:
            sim = any((r.device or {}).get("backend") == "simulator" for _, r in self.results)
            self._set_status(f"{len(self.results)} runs on {g.name} from vertex {own_id}, all valid"
                             + ("; simulator: times are simulation times, not GPU times" if sim else ""), "ok")
        return list(self.results)

    def _new_plots(self) -> None:
        old = self.plot_box.children
        self.stream = LevelStream(max_runs=MAX_RUNS, fig_width=PLOT_WIDTH)
        figs = self.stream.figures
        self.timeline = TimelinePlot(x_range=figs["frontier"].x_range, width=PLOT_WIDTH)
        grid = gridplot([[figs["frontier"], figs["time"]], [self.timeline.figure, figs["dedup"]],
                         [figs["edges"], None]], toolbar_location="right", merge_tools=True)
        self.plot_box.children = [LiveBokehModel(grid)]
        for w in old:
            w.close()

    def _show_ranking(self) -> None:
        rows = ranking(self.results)
        for row in rows:
            row["speed-up"] = f"{row['speed-up']:.2f}×"
            row["time ms"] = f"{row['time ms']:.3f}"
            row["kernels ms"] = f"{row['kernels ms']:.3f}"
        colors = {label: self.stream.color(label) for label, _ in self.results}
        cols = ["rank", "run", "time ms", "kernels ms", "speed-up", "levels", "validation"]
        first = self.results[0][0] if self.results else ""
        table = html_table(rows, cols, numeric={"rank", "time ms", "kernels ms", "speed-up", "levels"})
        swatches = "".join(f"<span style='display:inline-block;width:10px;height:10px;background:{esc(c)};"
                           f"margin:0 4px 0 10px'></span>{esc(label)}" for label, c in colors.items())
        self.table.value = (f"<h4>Ranking (BFS time; speed-up against {esc(first)})</h4>{table}"
                            "<small>One run each: a difference of a few percent can be the machine's noise; the "
                            "Tuning tab repeats each setting and says which differences are measured.</small><br>"
                            f"<small>{swatches}</small>")
