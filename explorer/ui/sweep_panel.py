"""The Tuning panel: sweep one or two knobs of the Explorer's technique on its graph and source
(explorer.sweep does the work; in shortest-paths mode the SSSP technique's knobs, each run checked
against scipy), watch a progress bar with the time left, read the line (one knob)
or heatmap (two knobs) of median times, apply the best setting in one click, save and reopen
sweeps as JSON.

    panel = ex.tools.panel("tuning")
    result = panel.run_sweep(knob1="K1", values1="4,8,32", knob2="K4")   # as the Run sweep button

Given an Explorer made with client= (a GPUCluster or distributed.Client), the points run on its
workers, a GPU each with all of a point's runs (explorer.sweep.run_sweep(client=)): the plot and
the progress bar take each point as it finishes, and the status line says how many workers ran it.

`SweepPlot` draws a sweep without the panel (the notebooks use it): its sources receive one row
per finished point, and the best point is marked.
"""
from __future__ import annotations

import math

import ipywidgets as W
from bokeh.models import (BasicTicker, ColorBar, ColumnDataSource, FactorRange, HoverTool, Legend, LegendItem,
                          LinearColorMapper)
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from .live import LiveBokehModel
from .. import backend
from ..auto import is_auto
from ..sweep import (SIMULATOR_SWEEP_MAX_ARCS, SIMULATOR_SWEEP_MAX_RUNS, SweepPoint, SweepResult, check_sweep_size,
                     load_sweep, plan_sweep, problem_of, run_sweep)
from .cli_input import parse_knob_values
from .layout import button_px, fit_description, labelled, text_px
from .sssp_view import BFS
from .tools import TABLE_CSS, Picks, StatusLine, Worker, esc, html_table, picked_source, status_html

NONE = "(none)"
RUN_TIP = "time every setting on the Explorer's graph and source; each run is checked"
#: Why the Tuning tab sweeps nothing while the Explorer's technique is auto.
AUTO_NOTE = ("The Explorer's technique is auto, which chooses its own knobs for each run: there are none to "
             "sweep. Pick a technique in the Explorer to sweep its knobs.")
#: Columns of a sweep plot's source: one row per finished point.
POINT_COLUMNS = ("x", "y", "median_ms", "min_ms", "max_ms", "kernel_ms", "runs", "status", "knobs", "time_text",
                 "cell_text", "text_color")
_TIPS = [("knobs", "@knobs"), ("median", "@time_text"), ("kernels", "@kernel_ms{0.000} ms"), ("runs (ms)", "@runs"),
         ("check", "@status")]
#: How the best point and the points within noise of it are drawn (line and heatmap alike).
BEST_COLOR = "#d62728"
TIE_COLOR = "#ff7f0e"
TIE_WORDS = "within noise of the best"


def _factor(v) -> str:
    return str(v)


def _point_row(p: SweepPoint, names: list) -> dict:
    ok = p.usable
    nan = math.nan
    if not ok:
        cell = "failed" if p.error else "wrong"
    elif len(p.times_ms) > 1:
        cell = f"{p.median_ms:.3g}\n{p.min_ms:.3g}–{p.max_ms:.3g}"
    else:
        cell = f"{p.median_ms:.3g}\n1 run"
    return {"x": _factor(p.knobs[names[0]]), "y": _factor(p.knobs[names[1]]) if len(names) > 1 else
            (p.median_ms if ok else nan),
            "median_ms": p.median_ms if ok else nan, "min_ms": p.min_ms if ok else nan,
            "max_ms": p.max_ms if ok else nan,
            "kernel_ms": p.median_kernel_ms if ok else nan,
            "runs": ", ".join(f"{t:.3f}" for t in p.times_ms) or "none",
            "status": p.status(), "knobs": ", ".join(f"{k}={v}" for k, v in p.knobs.items()),
            "time_text": p.spread_text() if ok else p.status(), "cell_text": cell, "text_color": "black"}


def readable_on(color: str) -> str:
    """Black or white, whichever reads better on the fill `color` ('#rrggbb'): black on light
    cells (Viridis' yellows and greens), white on dark ones (its purples and blues)."""
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    # The contrast with black, (L + 0.05) / 0.05, beats the contrast with white, 1.05 / (L + 0.05):
    return "black" if luminance > 0.179 else "white"


def _columns(rows: list[dict]) -> dict:
    return {c: [r[c] for r in rows] for c in POINT_COLUMNS}


class SweepPlot:
    """A line (one swept knob: median time per value, a whisker from the fastest to the slowest
    run) or a heatmap (two: a cell per pair, its colour the median time, its text the median and
    the runs' range, grey where the point failed), its x and y the knobs' values in sweep order.
    `add(point)` streams a finished point; `mark_best(point, ties)` rings the best one and the
    points within noise of it. Legends sit outside the data."""

    def __init__(self, technique: str, axes: dict, width: int = 560, height: int = 360, simulated: bool = False,
                 what: str = "BFS"):
        self.names = list(axes)
        if len(self.names) not in (1, 2):
            raise ValueError(f"a sweep plot shows one or two swept knobs, not {len(self.names)}")
        xs = [_factor(v) for v in axes[self.names[0]]]
        self.source = ColumnDataSource(_columns([]), name="sweep_points")
        self.failed = ColumnDataSource(_columns([]), name="sweep_failed")
        self.best = ColumnDataSource(_columns([]), name="sweep_best")
        self.ties = ColumnDataSource(_columns([]), name="sweep_ties")
        title = f"{technique}: median {what} time per setting" + (" (simulated on the CPU, not GPU times)"
                                                                if simulated else "")
        items = []
        if len(self.names) == 1:
            fig = figure(title=title, x_range=FactorRange(*xs), width=width, height=height,
                         tools="pan,wheel_zoom,box_zoom,reset,save")
            fig.line("x", "y", source=self.source, line_width=2)
            spread = fig.segment("x", "min_ms", "x", "max_ms", source=self.source, line_width=7, line_alpha=0.35,
                                 line_cap="round")
            pts = fig.scatter("x", "y", source=self.source, size=9)
            ties = fig.scatter("x", "y", source=self.ties, size=17, marker="circle", fill_alpha=0,
                               line_color=TIE_COLOR, line_width=3)
            best = fig.scatter("x", "y", source=self.best, size=22, marker="star", fill_color=BEST_COLOR,
                               line_color="black")
            # Failed points: an x on the axis, the reason in the hover.
            fail = fig.scatter("x", 0, source=self.failed, size=11, marker="x", line_color="#b00020", line_width=2)
            fig.yaxis.axis_label = f"median {what} time (ms)"
            fig.y_range.start = 0
            self.mapper = None
            fig.add_tools(HoverTool(renderers=[pts, fail], tooltips=_TIPS))
            items = [("median", [pts]), ("fastest–slowest run", [spread]), ("best", [best]), (TIE_WORDS, [ties]),
                     ("failed", [fail])]
        else:
            ys = [_factor(v) for v in axes[self.names[1]]]
            fig = figure(title=title, x_range=FactorRange(*xs), y_range=FactorRange(*ys), width=width,
                         height=height, tools="pan,wheel_zoom,reset,save")
            self.mapper = LinearColorMapper(palette=Viridis256, low=0, high=1, nan_color="#dddddd")
            cells = fig.rect("x", "y", 1, 1, source=self.source, line_color="white",
                             fill_color={"field": "median_ms", "transform": self.mapper})
            fail = fig.rect("x", "y", 1, 1, source=self.failed, fill_color="#dddddd", line_color="white",
                            hatch_pattern="/", hatch_color="#b00020", hatch_alpha=0.5)
            # Text colour per cell: black on the light end of the palette, white on the dark end.
            fig.text("x", "y", text="cell_text", source=self.source, text_align="center", text_baseline="middle",
                     text_font_size="8pt", text_color="text_color", text_line_height=1.1)
            fig.text("x", "y", text="cell_text", source=self.failed, text_align="center", text_baseline="middle",
                     text_font_size="8pt", text_color="#b00020")
            ties = fig.rect("x", "y", 0.9, 0.9, source=self.ties, fill_alpha=0, line_color=TIE_COLOR, line_width=3,
                            line_dash="dashed")
            best = fig.rect("x", "y", 0.94, 0.94, source=self.best, fill_alpha=0, line_color=BEST_COLOR, line_width=4)
            fig.add_layout(ColorBar(color_mapper=self.mapper, ticker=BasicTicker(), title="median ms"), "right")
            fig.yaxis.axis_label = self.names[1]
            fig.add_tools(HoverTool(renderers=[cells, fail], tooltips=_TIPS))
            items = [("best", [best]), (TIE_WORDS, [ties]), ("failed", [fail])]
        fig.xaxis.axis_label = self.names[0]
        # Below the plot, never over a cell or a point; "failed" only once a point failed.
        legend_items = [LegendItem(label=label, renderers=r) for label, r in items]
        self._failed_item = legend_items[-1]
        self._failed_item.visible = False
        fig.add_layout(Legend(items=legend_items, orientation="horizontal", label_text_font_size="8pt", spacing=6,
                              padding=2, margin=2, border_line_alpha=0), "below")
        self.figure = fig
        self._order = {x: i for i, x in enumerate(xs)}
        self._rows: list[dict] = []  # the usable points, kept in the x axis' order

    @classmethod
    def of(cls, result: SweepResult, **kw) -> "SweepPlot":
        """The plot of a finished (or reopened) sweep, its best point and its ties marked."""
        what = "shortest-path" if result.problem == "sssp" else "BFS"
        plot = cls(result.technique, result.axes, simulated=result.simulated, what=what, **kw)
        for p in result.points:
            plot.add(p)
        plot.mark_best(result.best, result.within_noise_of_best())
        return plot

    def add(self, point: SweepPoint) -> None:
        row = _point_row(point, self.names)
        if not point.usable:
            self.failed.stream({c: [row[c]] for c in POINT_COLUMNS})
            self._failed_item.visible = True
            return
        # A line joins its points in the knob's order, whatever order they finish in (random sweeps).
        self._rows = sorted([*self._rows, row], key=lambda r: self._order[r["x"]])
        if self.mapper is not None:
            times = [r["median_ms"] for r in self._rows]
            self.mapper.low, self.mapper.high = min(times), max(max(times), min(times) + 1e-9)
            for r in self._rows:  # the colour scale moved: every cell's text colour follows
                r["text_color"] = readable_on(self.cell_color(r["median_ms"]))
        self.source.data = _columns(self._rows)

    def cell_color(self, ms: float) -> str:
        """The palette colour the heatmap gives a median of `ms`."""
        lo, hi = self.mapper.low, self.mapper.high
        t = 0.0 if hi <= lo else min(max((ms - lo) / (hi - lo), 0.0), 1.0)
        pal = self.mapper.palette
        return pal[min(int(t * len(pal)), len(pal) - 1)]

    def mark_best(self, point: SweepPoint | None, ties=()) -> None:
        """Ring the best point and the points within noise of it (the sweep's verdict)."""
        self.best.data = _columns([_point_row(point, self.names)] if point is not None else [])
        self.ties.data = _columns([_point_row(p, self.names) for p in ties])


def _workers(client) -> str:
    """' over N Dask workers' for a sweep spread over `client`'s workers, else ''."""
    if client is None:
        return ""
    from ..scale_out import check_client, dask_workers

    return f", over {dask_workers(check_client(client))}"


class SweepPanel(StatusLine, W.VBox):
    """Controls, progress, plot, ranked table and files of knob sweeps over the Explorer's picks."""

    def __init__(self, explorer, picks: Picks | None = None):
        self.ex = explorer
        self.picks = picks or Picks(explorer, BFS)  # the problem's technique and knobs in the Explorer
        self.result: SweepResult | None = None
        self.plot: SweepPlot | None = None
        self.worker = Worker(self._show_error)
        tip = "the knob to vary (the Explorer's technique's knobs; hover them in Knobs for their meaning)"
        self.knob1 = W.Dropdown(description="knob", tooltip=tip, layout=W.Layout(width="190px"))
        self.values1 = W.Text(placeholder="e.g. 4,8,32 (empty: its declared range)", layout=W.Layout(width="260px"))
        self.knob2 = W.Dropdown(description="and knob", tooltip="a second knob (a heatmap), or none (a line)",
                                layout=W.Layout(width="190px"))
        self.values2 = W.Text(placeholder="e.g. 0,1,2 (empty: its declared range)", layout=W.Layout(width="260px"))
        self.mode = W.ToggleButtons(options=["grid", "random"],
                                    style={"button_width": f"{max(button_px(m) for m in ('grid', 'random'))}px"},
                                    tooltips=["every combination of the values",
                                              "random points within the declared ranges (or the given values)"])
        self.samples = fit_description(W.BoundedIntText(value=8, min=1, max=10_000, description="points",
                                                        layout=W.Layout(width="150px"),
                                                        tooltip="random points to run (mode random)"))
        self.points = fit_description(W.BoundedIntText(
            value=5, min=1, max=100, description="range values", layout=W.Layout(width="150px"),
            tooltip="values taken from a number range swept without values (mode grid)"))
        sim = self._simulator()
        # Three runs a point at least: one run measures no spread, and then no difference is measured.
        self.repeats = fit_description(W.BoundedIntText(
            value=3, min=1, max=1000, description="repeats", layout=W.Layout(width="150px"),
            tooltip="runs per point; the point's time is their median, their range its spread (3 or more to "
                    "tell a difference from noise)"))
        self.run_button = W.Button(description="Run sweep", icon="play", button_style="primary", tooltip=RUN_TIP)
        self.stop_button = W.Button(description="Stop", icon="stop", disabled=True,
                                    tooltip="stop after the run in progress (the points so far are kept)")
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="300px"))
        self.progress_text = W.HTML()
        self.limit_note = W.HTML(
            f"<small style='color:#a15c00'>Simulator: a sweep takes graphs up to {SIMULATOR_SWEEP_MAX_ARCS:,} arcs and "
            f"at most {SIMULATOR_SWEEP_MAX_RUNS} runs (every GPU thread is a Python thread); larger ones are refused "
            f"with the reason. Times are simulation times, not GPU times.</small>" if sim else "")
        self.status = W.HTML()
        self.plot_box = W.Box()
        self.best_text = W.HTML(layout=W.Layout(flex="1 1 auto"))
        self.apply_button = W.Button(description="Apply best", icon="check", disabled=True,
                                     layout=W.Layout(width=f"{button_px('Apply fastest median', icon=True)}px",
                                                     flex="0 0 auto"),  # the verdict beside it wraps instead
                                     tooltip="set the Explorer's technique and knobs to the fastest correct setting "
                                             "(the verdict beside it says whether the sweep measured it faster)")
        self.table = W.HTML()
        self.path = fit_description(W.Text(value="sweep.json", description="file", layout=W.Layout(width="300px")))
        self.save_button = W.Button(description="Save", icon="save", disabled=True, tooltip="write the sweep as JSON")
        self.open_button = W.Button(description="Open", icon="folder-open", tooltip="reopen a saved sweep")
        self.run_button.on_click(lambda _: self._clicked(lambda: self.run_sweep(background=True)))
        self.stop_button.on_click(lambda _: self.worker.stop())
        self.apply_button.on_click(lambda _: self._clicked(self.apply_best))
        self.save_button.on_click(lambda _: self._clicked(lambda: self.save_sweep(self.path.value)))
        self.open_button.on_click(lambda _: self._clicked(lambda: self.open_sweep(self.path.value)))
        self.mode.observe(lambda _: self._sync_mode(), names="value")
        self.picks.technique.observe(lambda _: self._refresh_knobs(), names="value")
        self._refresh_knobs()
        self._sync_mode()
        label = max(text_px(w.description) for w in (self.knob1, self.knob2))
        super().__init__([
            W.HTML(TABLE_CSS + "<small>Sweep one knob (a line) or two (a heatmap) of the Explorer's technique on its "
                   "graph and source. Each point is the median of its repeats, uninstrumented, with the range of "
                   "its runs; settings whose ranges overlap are within noise of each other: the sweep does not "
                   f"tell them apart. {self._checked_words()} The other knobs keep the Explorer's values.</small>"),
            W.HBox([labelled(self.knob1, label), self.values1]),
            W.HBox([labelled(self.knob2, label), self.values2]),
            W.HBox([self.mode, self.samples, self.points, self.repeats]),
            W.HBox([self.run_button, self.stop_button, self.progress, self.progress_text]),
            self.limit_note, self.status, self.plot_box,
            W.HBox([self.apply_button, self.best_text]), self.table,
            W.HBox([self.path, self.save_button, self.open_button]),
        ])

    # ------------------------------------------------------------------ controls
    @staticmethod
    def _simulator() -> bool:
        try:
            return backend.current().is_simulator
        except backend.NoGPUError:
            return True

    def _checked_words(self) -> str:
        if self.picks.shortest_paths:
            return ("Every run's distances are checked against scipy's (the graph's weights, or unit weights when "
                    "ticked).")
        return "Every run is checked against the CPU reference."

    def _auto(self) -> bool:
        return not self.picks.shortest_paths and is_auto(self.picks.technique.value)

    def _refresh_knobs(self) -> None:
        auto = self._auto()
        names = [] if auto else [s.name for s in self.picks.knobs_of(self.picks.technique.value).specs()]
        self.knob1.options = names or [NONE]
        self.knob1.value = self.knob1.options[0]  # ipywidgets leaves a drop-down blank when its options change
        self.knob2.options = [NONE, *names]
        self.knob2.value = NONE
        self.run_button.disabled = not names
        self.run_button.tooltip = AUTO_NOTE if auto else RUN_TIP
        if auto:
            self._set_status(AUTO_NOTE)
        elif self.status.value == status_html(AUTO_NOTE):  # a technique picked: the note no longer holds
            self._set_status("")

    def _sync_mode(self) -> None:
        random = self.mode.value == "random"
        self.samples.layout.display = "" if random else "none"
        self.points.layout.display = "none" if random else ""

    def _show_error(self, err: BaseException) -> None:
        super()._show_error(err)
        self._idle()

    def _idle(self) -> None:
        self.run_button.disabled = False
        self.stop_button.disabled = True

    # ------------------------------------------------------------------ sweeping
    def _axes(self, technique: str) -> dict:
        axes = {}
        for knob, values in ((self.knob1.value, self.values1.value), (self.knob2.value, self.values2.value)):
            if knob == NONE:
                continue
            if knob in axes:
                raise ValueError(f"knob {knob} is chosen twice: pick two different knobs, or none as the second")
            items = [v for v in (x.strip() for x in values.split(",")) if v]
            Knobs = self.picks.knobs_of(technique)
            axes[knob] = [parse_knob_values(technique, [f"{knob}={v}"], Knobs)[knob] for v in items] or None
        return axes

    def run_sweep(self, knob1: str | None = None, values1: str | None = None, knob2: str | None = None,
                  values2: str | None = None, mode: str | None = None, repeats: int | None = None,
                  background: bool = False) -> SweepResult | None:
        """Set the given controls, then sweep as the Run sweep button does. From code (background
        False) it returns the SweepResult; the button runs it in a thread so Stop is heard."""
        if self._auto():
            raise ValueError(AUTO_NOTE)
        for widget, value in ((self.knob1, knob1), (self.values1, values1), (self.knob2, knob2),
                              (self.values2, values2), (self.mode, mode), (self.repeats, repeats)):
            if value is not None:
                widget.value = value
        technique = self.picks.technique.value
        axes = self._axes(technique)
        base = {k: v for k, v in self.picks.changed_knobs(technique, self.picks.knob_values()).items()
                if k not in axes}
        plan = plan_sweep(technique, axes, mode=self.mode.value, samples=self.samples.value, base=base,
                          points_per_axis=self.points.value, problem=self.picks.sweep_problem)
        graph = self._graph()
        check_sweep_size(graph, plan, self.repeats.value)  # refused here, with the reason, before anything runs
        source = picked_source(self.ex)
        self.plot = SweepPlot(technique, plan.axes, simulated=self._simulator(), what=self.picks.what)
        self.plot_box.children = [LiveBokehModel(self.plot.figure)]
        self.result = None
        self.apply_button.disabled = self.save_button.disabled = True
        self.best_text.value = self.table.value = ""
        self.progress.value, self.progress.max = 0, max(1, len(plan.points) * self.repeats.value)
        self.run_button.disabled, self.stop_button.disabled = True, False
        client = getattr(self.ex, "client", None)
        workers = _workers(client)
        self._set_status(f"sweeping {len(plan.points)} settings of {technique} on {graph.name}{workers} ...", "busy")

        def job():
            try:
                result = run_sweep(graph, source, plan, repeats=self.repeats.value, seed=self.ex.seed.value,
                                   on_progress=self._on_progress, stop=lambda: self.worker.stop_requested,
                                   client=client)
            finally:
                self._idle()
            self._show_result(result, workers)
            return result
        if background:
            self.worker.start(job)
            return None
        return job()

    def _graph(self):
        """The Explorer's graph; for shortest paths its weights, or unit weights when ticked there
        (the graph then named so), or the reason it has none."""
        graph = self.ex.current_graph()
        if not self.picks.shortest_paths:
            return graph
        from .sssp_view import weighted_graph

        return weighted_graph(graph, self.ex.sssp.unit_weights.value)

    def _on_progress(self, p) -> None:
        self.progress.max, self.progress.value = p.total, p.done
        self.progress_text.value = f"<small>{esc(p)}</small>"
        if p.finished is not None and self.plot is not None:
            self.plot.add(p.finished)

    def _show_result(self, result: SweepResult, origin: str = "") -> None:
        self.result = result
        verdict = result.verdict()
        if self.plot is not None:
            self.plot.mark_best(verdict.best, result.within_noise_of_best())
        best = verdict.best
        self.apply_button.disabled = best is None
        self.save_button.disabled = False
        # The verdict in words: a best that is within noise, or of one run a point, is said to be so.
        color = "#11772b" if verdict.measured else "#b00020" if best is None else "#a15c00"
        self.best_text.value = f"<span style='color:{color}'>{esc(verdict.text)}</span>"
        self.apply_button.description = "Apply best" if verdict.measured or best is None else "Apply fastest median"
        ties = {id(p) for p in verdict.ties}
        steps = problem_of(result.problem).steps  # what a run's records count: levels or iterations
        rows = []
        for rank, p in enumerate(result.ranked(), 1):
            note = ("best" if p is best else TIE_WORDS if id(p) in ties else
                    "slower (measured)" if p.usable else "")
            rows.append({"#": rank if p.usable else "", **{k: p.knobs[k] for k in result.axes},
                         "median ms": f"{p.median_ms:.3f}" if p.times_ms else "–",
                         "fastest ms": f"{p.min_ms:.3f}" if p.times_ms else "–",
                         "slowest ms": f"{p.max_ms:.3f}" if p.times_ms else "–",
                         "runs": len(p.times_ms), "kernels ms": f"{p.median_kernel_ms:.3f}" if p.kernel_ms else "–",
                         steps: p.levels if p.levels is not None else "–", "against the best": note,
                         "check": p.status()})
        cols = ["#", *result.axes, "median ms", "fastest ms", "slowest ms", "runs", "kernels ms", steps,
                "against the best", "check"]
        self.table.value = html_table(rows, cols, numeric={"#", "median ms", "fastest ms", "slowest ms", "runs",
                                                           "kernels ms", steps})
        what = f"{result.technique} on {result.graph} from {result.source_text}{origin}"
        kind = "ok" if best is not None else "error"
        self._set_status(f"sweep of {what}: {len(result.points)} settings" + (" (stopped early)" if result.stopped
                                                                              else ""), kind)

    def apply_best(self) -> dict:
        """Set the Explorer's technique and knobs to the sweep's best setting; returns them."""
        if self.result is None or self.result.best is None:
            raise ValueError("no sweep with a correct setting to apply: run or open a sweep first")
        if self.result.problem != self.picks.sweep_problem:
            raise ValueError(f"this sweep is of {self.result.technique}, a {self.result.problem} technique; switch "
                             "the Explorer's problem to apply it")
        knobs = self.result.best_knobs()
        self.picks.technique.value = self.result.technique
        self.picks.set_knobs(knobs)
        verdict = self.result.verdict()
        self._set_status(f"the Explorer now uses {self.result.technique} with "
                         + ", ".join(f"{k}={v}" for k, v in knobs.items())
                         + ("" if verdict.measured else " (the fastest median; not measured faster than "
                            "the others: see the verdict)"), "ok")
        return knobs

    # ------------------------------------------------------------------ files
    def save_sweep(self, path):
        if self.result is None:
            raise ValueError("no sweep to save: run or open one first")
        where = self.result.save(path)
        self._set_status(f"sweep saved to {where}", "ok")
        return where

    def open_sweep(self, path) -> SweepResult:
        result = load_sweep(path)
        if len(result.axes) in (1, 2):
            self.plot = SweepPlot.of(result)
            self.plot_box.children = [LiveBokehModel(self.plot.figure)]
        else:
            self.plot, self.plot_box.children = None, []
        self._show_result(result, origin=f" (opened from {path})")
        return result
