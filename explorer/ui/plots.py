"""Bokeh plots of per-level BFS records: they only stream rows, they never run anything.

    stream = LevelStream()                 # empty figures, shareable live (BokehModel) or offline
    for level in run:                      # LevelStats as the engine yields them
        stream.push(level, "run 1")        # one dict -> source.stream(); figures update
    layout = stream.layout()

Runs overlay for comparison, one palette colour each: the stream is built with `max_runs`
`RunOverlay` slots, each a ColumnDataSource declared once with every column (the LevelStats
fields, the 'run' label and the plot-ready columns of `level_row`) and its glyphs on every figure.
A new run label takes a slot and relabels its legend entries; nothing else changes in the
document while a run streams (adding models to a displayed document re-sends them in full,
seconds per run). This module reads `explorer.stats` records only: no engine, no kernels.
"""
from __future__ import annotations

import math
import re
from typing import Iterable, NamedTuple, Sequence

from bokeh.core.properties import value
from bokeh.layouts import gridplot
from bokeh.models import (
    AdaptiveTicker,
    ColumnDataSource,
    DataRange1d,
    DataTable,
    FactorRange,
    GlyphRenderer,
    HoverTool,
    Legend,
    LegendItem,
    LogTicker,
    Line,
    NoOverlap,
    NumberFormatter,
    Scatter,
    StringFormatter,
    TableColumn,
)
from bokeh.palettes import Category20_20
from bokeh.plotting import figure
from bokeh.transform import dodge

from .tables import COUNT_FIELDS, TABLE_FIELDS, default_label, format_count
from ..stats import LEVEL_FIELDS, LevelStats, RunResult

#: Log axes cannot show 0: zeros are drawn at this height (below 1, so never mistaken for a
#: count) and hover tooltips always show the true value.
LOG_FLOOR = 0.5

#: Columns only the plots need, derived from a record by `level_row`.
PLOT_COLUMNS = (
    "frontier_in_log",  # frontier_in clamped to LOG_FLOOR
    "discovered_log",
    "edges_examined_log",  # NaN when not measured (instrumentation off)
    "dup_generated_plot",  # the dup_* counts with "not measured" turned into NaN gaps
    "dup_detected_plot",
    "dup_undetected_plot",
    "dup_conflicts_plot",
    "step",  # categorical label of what ran: "technique · kernel"
    # The counts as the tables show them (tables.format_count: NOT_MEASURED when not measured),
    # for the level table and the hover tooltips.
    *(f"{name}_text" for name in COUNT_FIELDS),
    "extras_text",  # the technique's declared extras of the level, for the hover (extras_text())
)

#: Every column of every source, in order.
SOURCE_COLUMNS = (*LEVEL_FIELDS, "run", *PLOT_COLUMNS)

RUN_PALETTE = Category20_20  # one colour per run; a demo of every technique needs more than 10

FIG_WIDTH = 520
FIG_HEIGHT = 330  # includes the legend below the plot
LEGEND_COLUMNS = 2
TOOLS = "pan,box_zoom,wheel_zoom,reset,save"


# ------------------------------------------------------------------ plain row functions

def _measured(value) -> float:
    """A count not measured (None; -1 in older records) is a gap, not a point."""
    return float("nan") if value is None or value < 0 else float(value)


def log_safe(value) -> float:
    """A value a log axis can draw: NaN when unmeasured, zeros raised to LOG_FLOOR."""
    v = _measured(value)
    return v if math.isnan(v) else max(v, LOG_FLOOR)


def step_label(stats: LevelStats) -> str:
    return f"{stats.technique} · {_shown('kernel', stats.kernel)}"


def extras_text(stats: LevelStats) -> str:
    """The technique's own per-level quantities (BFS-4K's warp size, ...) as one hover line."""
    return ", ".join(f"{k.replace('_', ' ')} {_shown(k, v)}" for k, v in stats.extras.items()) or "none"


def level_row(stats: LevelStats, run_label: str) -> dict:
    """One record as one row of a level source: every field, the run label, the plot columns."""
    row = stats.as_row()
    row["run"] = str(run_label)
    row["frontier_in_log"] = log_safe(stats.frontier_in)
    row["discovered_log"] = log_safe(stats.discovered)
    row["edges_examined_log"] = log_safe(stats.edges_examined)
    for name in ("dup_generated", "dup_detected", "dup_undetected", "dup_conflicts"):
        row[f"{name}_plot"] = _measured(getattr(stats, name, None))  # dup_conflicts: BFS-4K's extra
    row["step"] = step_label(stats)
    for name in COUNT_FIELDS:
        row[f"{name}_text"] = format_count(getattr(stats, name, None))
    row["extras_text"] = extras_text(stats)
    return row


def rows_to_columns(rows: Sequence[dict]) -> dict:
    """Rows -> the column dict `ColumnDataSource.stream` takes."""
    return {col: [r[col] for r in rows] for col in SOURCE_COLUMNS}


def empty_source() -> ColumnDataSource:
    return ColumnDataSource(data={col: [] for col in SOURCE_COLUMNS}, name="levels")


def run_color(index: int) -> str:
    return RUN_PALETTE[index % len(RUN_PALETTE)]


# ------------------------------------------------------------------ figure builders
#
# Colour says which run, line dash and marker say which series: each figure's legend (below the
# plot, so it never eats plot width) has one entry per run, which hides or shows the run there
# on click, plus grey keys for the series of multi-series figures.

class Series(NamedTuple):
    column: str  # plot column (see PLOT_COLUMNS)
    word: str  # legend key
    dash: str
    marker: str


FRONTIER_SERIES = (Series("frontier_in_log", "frontier in", "solid", "circle"),
                   Series("discovered_log", "discovered", "dashed", "triangle"))
EDGES_SERIES = (Series("edges_examined_log", "edges examined", "solid", "square"),)
DEDUP_SERIES = (Series("dup_generated_plot", "generated", "solid", "circle"),
                Series("dup_detected_plot", "detected (removed)", "dashed", "triangle"),
                Series("dup_undetected_plot", "undetected (left)", "dotted", "x"),
                Series("dup_conflicts_plot", "hash conflicts", "dotdash", "square"))
TIME_SERIES = (Series("time_ms", "time", "solid", "circle"),)

_TIPS = {
    "frontier": [("run", "@run"), ("level", "@level"), ("frontier in", "@frontier_in_text"),
                 ("discovered", "@discovered_text"), ("frontier out", "@frontier_out_text")],
    "edges": [("run", "@run"), ("level", "@level"), ("edges examined", "@edges_examined_text"),
              ("frontier in", "@frontier_in_text")],
    "dedup": [("run", "@run"), ("level", "@level"), ("generated", "@dup_generated_text"),
              ("detected", "@dup_detected_text"), ("undetected", "@dup_undetected_text"),
              ("conflicts", "@dup_conflicts_text")],
    "time": [("run", "@run"), ("level", "@level"), ("time", "@time_ms{0.000} ms"), ("launches", "@launches")],
    "technique": [("run", "@run"), ("level", "@level"), ("technique", "@technique"), ("kernel", "@kernel"),
                  ("direction", "@direction"), ("launches", "@launches"), ("per technique", "@extras_text")],
}


def _base_figure(kind: str, title: str, y_label: str, x_range=None, series=(), **kw) -> figure:
    fig = figure(title=title, width=FIG_WIDTH, height=FIG_HEIGHT, tools=TOOLS,
                 x_range=x_range if x_range is not None else DataRange1d(range_padding=0.05), **kw)
    fig.xaxis.axis_label = "BFS level"
    fig.yaxis.axis_label = y_label
    fig.xaxis.ticker = AdaptiveTicker(min_interval=1)  # levels are whole numbers
    # Labels that would overlap are dropped rather than drawn on top of each other.
    fig.xaxis.major_label_policy = NoOverlap()
    fig.yaxis.major_label_policy = NoOverlap()
    if kw.get("y_axis_type") == "log":
        # The default log ticker crowds sub-decade ranges (a tiny graph) with minor ticks.
        fig.yaxis.ticker = LogTicker(mantissas=[1, 2, 5], desired_num_ticks=4, num_minor_ticks=0)
    fig.title.text_font_size = "11pt"
    if len(series) > 1:
        # Grey keys for dash and marker, in a one-row legend of their own. Their data is one NaN
        # row: nothing is plotted, but Bokeh needs a row to draw a legend glyph.
        blank = ColumnDataSource({"x": [0], "y": [float("nan")]})
        keys = [LegendItem(label=s.word, renderers=[
            fig.line("x", "y", source=blank, color="#666", line_width=2, line_dash=s.dash),
            fig.scatter("x", "y", source=blank, color="#666", marker=s.marker, size=7, fill_color="white")])
            for s in series]
        fig.add_layout(Legend(items=keys, orientation="horizontal", name="keys", **_LEGEND_STYLE), "below")
    fig.add_layout(Legend(items=[], click_policy="hide", ncols=LEGEND_COLUMNS, name="runs", **_LEGEND_STYLE),
                   "below")
    fig.add_tools(HoverTool(renderers=[], tooltips=_TIPS[kind]))
    return fig


_LEGEND_STYLE = dict(label_text_font_size="8pt", title_text_font_size="8pt", spacing=2, padding=2, margin=2,
                     glyph_height=12, glyph_width=22, border_line_alpha=0)


class RunGlyphs(NamedTuple):
    renderers: list
    legend_item: LegendItem


def _attach(fig: figure, label: str, renderers: list, hover_on: list) -> RunGlyphs:
    """Add one run's renderers, its legend entry and its hover targets: one property assignment
    each, because a displayed figure sends every change to the browser as its own patch."""
    fig.renderers = [*fig.renderers, *renderers]
    # Plain list scans: select_one() would walk every model of the document.
    legend = next(m for m in fig.below if isinstance(m, Legend) and m.name == "runs")
    item = LegendItem(label=value(label), renderers=renderers)
    legend.items = [*legend.items, item]
    hover = next(t for t in fig.tools if isinstance(t, HoverTool))
    hover.renderers = [*hover.renderers, *hover_on]  # markers only: lines would double the tip
    return RunGlyphs(renderers, item)


def _renderer(source, glyph) -> GlyphRenderer:
    return GlyphRenderer(data_source=source, glyph=glyph)


#: How far run slot i is drawn beside the integer levels (by i mod 5), so that runs with
#: identical records (the same technique twice) do not hide each other.
RUN_OFFSETS = (0.0, 0.08, -0.08, 0.16, -0.16)


def run_offset(index: int) -> float:
    return RUN_OFFSETS[index % len(RUN_OFFSETS)]


def _add_series(fig, source, label, color, series, index: int = 0) -> list:
    lines, points = [], []
    x = dodge("level", run_offset(index)) if run_offset(index) else "level"
    for s in series:
        lines.append(_renderer(source, Line(x=x, y=s.column, line_color=color, line_width=2,
                                            line_dash=s.dash)))
        fill = color if s is series[0] else "white"
        points.append(_renderer(source, Scatter(x=x, y=s.column, size=7, marker=s.marker,
                                                line_color=color, fill_color=fill)))
    return _attach(fig, label, [*lines, *points], points)


def frontier_figure(source: ColumnDataSource | None = None, label: str = "run", color: str = RUN_PALETTE[0],
                    x_range=None) -> figure:
    """Entries of the frontier read per level and vertices discovered, log y."""
    fig = _base_figure("frontier", "Frontier size per level", f"vertices (log; 0 drawn at {LOG_FLOOR})",
                       x_range, FRONTIER_SERIES, y_axis_type="log")
    if source is not None:
        add_frontier_glyphs(fig, source, label, color)
    return fig


def add_frontier_glyphs(fig, source, label, color, index: int = 0) -> RunGlyphs:
    return _add_series(fig, source, label, color, FRONTIER_SERIES, index)


def edges_figure(source=None, label="run", color=RUN_PALETTE[0], x_range=None) -> figure:
    """Adjacency entries inspected per level, log y."""
    fig = _base_figure("edges", "Edges examined per level", f"edges (log; 0 drawn at {LOG_FLOOR})",
                       x_range, EDGES_SERIES, y_axis_type="log")
    if source is not None:
        add_edges_glyphs(fig, source, label, color)
    return fig


def add_edges_glyphs(fig, source, label, color, index: int = 0) -> RunGlyphs:
    return _add_series(fig, source, label, color, EDGES_SERIES, index)


def dedup_figure(source=None, label="run", color=RUN_PALETTE[0], x_range=None) -> figure:
    """Duplicate frontier entries per level: generated, removed by the filter, left, hash conflicts."""
    fig = _base_figure("dedup", "Duplicates per level (dedup)", "frontier entries",
                       x_range, DEDUP_SERIES)
    if source is not None:
        add_dedup_glyphs(fig, source, label, color)
    return fig


def add_dedup_glyphs(fig, source, label, color, index: int = 0) -> RunGlyphs:
    return _add_series(fig, source, label, color, DEDUP_SERIES, index)


def time_figure(source=None, label="run", color=RUN_PALETTE[0], x_range=None) -> figure:
    """Time of each level in milliseconds."""
    fig = _base_figure("time", "Time per level", "ms", x_range, TIME_SERIES)
    if source is not None:
        add_time_glyphs(fig, source, label, color)
    return fig


def add_time_glyphs(fig, source, label, color, index: int = 0) -> RunGlyphs:
    return _add_series(fig, source, label, color, TIME_SERIES, index)


def technique_figure(source=None, label="run", color=RUN_PALETTE[0], x_range=None, index: int = 0) -> figure:
    """Which technique and kernel ran each level: one categorical row per 'technique · kernel'."""
    fig = _base_figure("technique", "Technique / kernel per level", "", x_range, y_range=FactorRange(factors=[]))
    fig.yaxis.major_label_text_font_size = "9pt"
    if source is not None:
        add_technique_glyphs(fig, source, label, color, index)
    return fig


def add_technique_glyphs(fig, source, label, color, index: int = 0) -> RunGlyphs:
    # On their category's label, always; runs that took the same step at the same level sit side
    # by side along the level, as in the other plots (run_offset), not between two labels.
    x = dodge("level", run_offset(index)) if run_offset(index) else "level"
    pts = _renderer(source, Scatter(x=x, y="step", size=10,
                                    marker="square", fill_color=color, line_color="white", line_width=0.5))
    return _attach(fig, label, [pts], [pts])


#: Figure name -> (builder, glyph adder), in layout order.
FIGURES = {
    "frontier": (frontier_figure, add_frontier_glyphs),
    "edges": (edges_figure, add_edges_glyphs),
    "dedup": (dedup_figure, add_dedup_glyphs),
    "time": (time_figure, add_time_glyphs),
    "technique": (technique_figure, add_technique_glyphs),
}


# ------------------------------------------------------------------ overlay and stream

class RunOverlay:
    """One run slot: a source declared once with empty columns, and its glyphs on every figure in
    one colour. Slots are built with the figures; giving one to a run only relabels its legend
    entries, so nothing is added to a displayed document while a BFS streams."""

    def __init__(self, index: int, color: str, figures: dict):
        self.index, self.color = index, color
        self.label: str | None = None
        self.source = empty_source()
        self.glyphs = {name: FIGURES[name][1](fig, self.source, f"run {index + 1}", color, index)
                       for name, fig in figures.items()}
        # Unused slots stay out of the legends, and out of every repaint the browser makes while
        # a run streams (each hidden renderer skips its paint).
        self.set_visible(False)
        for g in self.glyphs.values():
            g.legend_item.visible = False

    def assign(self, label: str) -> None:
        """Give the slot to the run `label`, dropping the rows of the run that had it before."""
        if self.label is not None:
            self.source.data = {col: [] for col in SOURCE_COLUMNS}
        self.label = label
        for g in self.glyphs.values():
            g.legend_item.label = value(label)
            g.legend_item.visible = True
            for r in g.renderers:
                r.visible = True  # a legend click may have hidden the previous run

    @property
    def renderers(self) -> dict[str, list]:
        return {name: g.renderers for name, g in self.glyphs.items()}

    def set_visible(self, visible: bool) -> None:
        for g in self.glyphs.values():
            for r in g.renderers:
                r.visible = visible


#: Level-table text is 12 px (bold in the titles) with 4 px of padding a side (Bokeh's DataTable):
#: a column this many pixels a character, plus the padding, shows its text whole.
TABLE_CHAR_PX = 7.5
TABLE_PAD_PX = 20


def table_px(text: str) -> int:
    """Width in pixels of a level-table column that shows `text` whole."""
    return math.ceil(TABLE_CHAR_PX * len(text)) + TABLE_PAD_PX


def _shown(field: str, value) -> str:
    """A value as the level table and the hovers draw it."""
    if field == "time_ms":
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(getattr(value, "value", value))  # an enum (kernel, direction) as its value


#: The columns a figure draws, besides the level: runs equal in them draw the same points there.
SAME_VALUES_COLUMNS = {
    "frontier": tuple(x.column for x in FRONTIER_SERIES),
    "edges": tuple(x.column for x in EDGES_SERIES),
    "dedup": tuple(x.column for x in DEDUP_SERIES),
    "time": tuple(x.column for x in TIME_SERIES),
    "technique": ("step",),
}


def _same_key(v):
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def run_names(labels: Sequence[str]) -> str:
    """Runs named together: by their numbers where every label starts with one ('#1 bfs4k (g)'),
    runs in a row as a range ('#1, #3–#5'); else the labels themselves."""
    nums = [re.match(r"#(\d+)\b", lab) for lab in labels]
    if not all(nums):
        return ", ".join(labels)
    ns = sorted(int(m[1]) for m in nums)
    parts, start = [], ns[0]
    for a, b in zip(ns, [*ns[1:], None]):
        if b != a + 1:
            parts += [f"#{start}"] if start == a else [f"#{start}", f"#{a}"] if a == start + 1 else [f"#{start}–#{a}"]
            start = b
    return ", ".join(parts)


#: Pixels a category of the technique plot takes at least: its 9 pt label whole (with fewer, Bokeh
#: drops every other label as overlapping) and its 10 px markers inside the frame.
CATEGORY_ROW_PX = 22
#: The frame height of a figure of FIG_HEIGHT with its legends below (about).
FRAME_PX = 190


def fit_category_rows(fig) -> None:
    """Make the technique plot's frame tall enough for a labelled row per category."""
    need = CATEGORY_ROW_PX * len(fig.y_range.factors)
    fig.frame_height = need if need > FRAME_PX else None


class LevelStream:
    """The level sources and figures of an explorer session or a report.

    `push(level_stats, run_label)` streams one row into the run's source; a new label takes the
    next free run slot (the oldest run's slot once all `max_runs` are used; its rows leave the
    plots). `table_source` keeps every run's rows for the level table. Works the same displayed
    live (figures in a BokehModel) or offline (`layout()` into an HTML file).
    """

    def __init__(self, max_runs: int = 6, fig_width: int = FIG_WIDTH, first_color: int = 0):
        """`first_color`: the palette index of the first slot's colour (a report's later plots
        go on with the colours of its earlier ones)."""
        if not 1 <= max_runs <= len(RUN_PALETTE):
            raise ValueError(f"max_runs={max_runs} is out of range: 1..{len(RUN_PALETTE)} (one colour per run)")
        x_range = DataRange1d(range_padding=0.05)  # shared: panning one plot pans all
        self.figures = {name: builder(x_range=x_range) for name, (builder, _) in FIGURES.items()}
        self.fig_width = fig_width
        for fig in self.figures.values():
            fig.width = fig_width
        self.overlays = [RunOverlay(i, run_color(first_color + i), self.figures) for i in range(max_runs)]
        self._by_label: dict[str, RunOverlay] = {}
        self._runs_started = 0
        self.table_source = empty_source()
        self._layout = None
        self._table: DataTable | None = None

    @property
    def max_runs(self) -> int:
        return len(self.overlays)

    @property
    def sources(self) -> dict[str, ColumnDataSource]:
        """label -> source of the runs currently plotted, oldest first."""
        return {label: ov.source for label, ov in self._by_label.items()}

    @property
    def labels(self) -> list[str]:
        return list(self._by_label)

    def source(self, run_label: str) -> ColumnDataSource:
        """The run's source; a new label takes the next slot."""
        ov = self._by_label.get(run_label)
        if ov is None:
            ov = self.overlays[self._runs_started % self.max_runs]
            self._runs_started += 1
            dropped = ov.label is not None
            if dropped:
                del self._by_label[ov.label]
            ov.assign(run_label)
            self._by_label[run_label] = ov
            if dropped:  # the oldest run left the plots: its steps go with it, and the legends say so
                self._keep_steps_of_shown_runs()
                self._say_runs_shown()
        return ov.source

    def push(self, level_stats: LevelStats, run_label: str) -> dict:
        """Stream one level record under `run_label`; returns the row it streamed."""
        return self.push_many([level_stats], run_label)[0]

    def push_many(self, levels: Iterable[LevelStats], run_label: str) -> list[dict]:
        rows = [level_row(lv, run_label) for lv in levels]
        if not rows:
            return rows
        src = self.source(run_label)
        self._add_steps(rows)
        new = rows_to_columns(rows)
        src.stream(new)
        self.table_source.stream(new)
        if self._table is not None:
            self._fit_table(rows)
        return rows

    def add_result(self, result: RunResult, label: str | None = None) -> str:
        """Offline: stream a finished run's levels; returns its label."""
        label = label or default_label(self._runs_started + 1, result)
        self.push_many(result.levels, label)
        return label

    @property
    def runs_started(self) -> int:
        """Runs pushed so far, including those that have left the plots."""
        return self._runs_started

    def shown_note(self) -> str:
        """'' while every run is plotted, else which runs are: 'the last 6 of 14 runs'."""
        if self._runs_started <= self.max_runs:
            return ""
        return f"the last {self.max_runs} of {self._runs_started} runs (the plots keep {self.max_runs})"

    def _say_runs_shown(self) -> None:
        for fig in self.figures.values():
            legend = next(m for m in fig.below if isinstance(m, Legend) and m.name == "runs")
            legend.title = self.shown_note()

    def _keep_steps_of_shown_runs(self) -> None:
        # The technique plot's categories are the steps of the runs it shows, in order of arrival.
        steps = [step for ov in self.overlays if ov.label is not None for step in ov.source.data["step"]]
        yr = self.figures["technique"].y_range
        kept = [f for f in yr.factors if f in set(steps)]
        if kept != list(yr.factors):
            yr.factors = kept
            fit_category_rows(self.figures["technique"])

    def _add_steps(self, rows) -> None:
        # Categories are known only as levels arrive (BFS-4K switches kernels per level); the
        # categorical axis grows by the new ones.
        yr = self.figures["technique"].y_range
        new = [r["step"] for r in rows if r["step"] not in yr.factors]
        if new:
            yr.factors = [*yr.factors, *dict.fromkeys(new)]
            fit_category_rows(self.figures["technique"])

    def color(self, run_label: str) -> str:
        return self._by_label[run_label].color

    def merge_identical_runs(self) -> dict[str, list[list[str]]]:
        """In each figure, runs whose points there are the same (their levels and the figure's
        columns, SAME_VALUES_COLUMNS) are drawn once, by the first of them, whose legend entry names
        them all ('#1, #3–#5: same values'); the others' glyphs and entries there are hidden, since
        identical lines would hide one another anyway. For a finished set of runs (a report):
        figure name -> the groups of run labels drawn as one line."""
        shown = [ov for ov in self.overlays if ov.label is not None]
        merged = {}
        for name in self.figures:
            cols = ("level", *SAME_VALUES_COLUMNS[name])
            groups: dict[tuple, list[RunOverlay]] = {}
            for ov in shown:
                key = tuple(tuple(_same_key(v) for v in ov.source.data[c]) for c in cols)
                groups.setdefault(key, []).append(ov)
            merged[name] = [[ov.label for ov in g] for g in groups.values()]
            for first, *rest in groups.values():
                if rest:
                    first.glyphs[name].legend_item.label = value(f"{run_names([first.label, *(o.label for o in rest)])}"
                                                                 ": same values")
                for ov in rest:
                    ov.glyphs[name].legend_item.visible = False
                    for r in ov.glyphs[name].renderers:
                        r.visible = False
        return merged

    def layout(self, ncols: int = 2):
        """The figures in a grid with one merged toolbar (built once, so it can be displayed live)."""
        if self._layout is None:
            figs = list(self.figures.values())
            self._layout = gridplot(figs, ncols=ncols, toolbar_location="right", merge_tools=True)
        return self._layout

    def level_table(self, height: int = 240) -> DataTable:
        """A DataTable over every run's rows (the same columns as the CLI table), built once.

        Each column starts as wide as its title and widens as wider cells arrive (a long run label,
        a big count), so nothing is cut off; the table is at most as wide as the plots above it and
        scrolls sideways beyond that. Counts show as `format_count` text (NOT_MEASURED when not
        measured), so they do not sort: the rows stay in run and level order."""
        if self._table is None:
            right = StringFormatter(text_align="right")
            cols = [TableColumn(field="run", title="run", width=table_px("#1 topdown-queue (graph)"))]
            for name in TABLE_FIELDS:
                title = name
                kw = {"title": title, "width": table_px(title), "field": name}
                if name in COUNT_FIELDS:
                    kw.update(field=f"{name}_text", formatter=right, sortable=False)
                elif name == "time_ms":
                    kw.update(formatter=NumberFormatter(format="0.000"))
                cols.append(TableColumn(**kw))
            self._table = DataTable(source=self.table_source, columns=cols, height=height,
                                    index_position=None, autosize_mode="none", sizing_mode="fixed")
            data = self.table_source.data
            self._fit_table([{c: data[c][i] for c in data} for i in range(len(data["run"]))])
            self._table.width = self._table_width()
        return self._table

    def _fit_table(self, rows: list[dict]) -> None:
        # Widen (never narrow) each column whose new cells are wider than it: a change per column
        # that grows, which is rare after a run's first rows.
        grew = False
        for col in self._table.columns:
            need = max((table_px(_shown(col.field, r[col.field])) for r in rows), default=0)
            if need > col.width:
                col.width = need
                grew = True
        if grew:
            self._table.width = self._table_width()

    def _table_width(self) -> int:
        # As wide as the columns (+ 20 px of vertical scroll bar), at most the two figures and
        # the toolbar beside them.
        return min(sum(c.width for c in self._table.columns) + 20, 2 * self.fig_width + 40)
