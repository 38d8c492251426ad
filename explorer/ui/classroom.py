"""The classroom: step through a BFS on a small graph, one level at a time.

    from explorer.ui.classroom import Classroom
    room = Classroom(graph="bfs4k_fig2", source=0, technique="bfs4k")   # display it
    room.run(); room.step(); room.back(); room.play(); room.stop()     # the buttons, from code

A drawing of the graph (networkx layout, Bokeh's graph renderer) coloured by BFS level, with the
current frontier ringed, the edges this level examined in orange, the BFS tree in dark grey and a
magenta ring where a duplicate can be born; beside it the frontier per level (one point per level
stepped through); below, what the level's record says and a table of which block / warp /
virtual warp / lane took which vertex and which edge. Every registered technique can be chosen,
on a GPU or on the CUDA simulator (chosen by itself when there is no GPU, and said so).

Where each part comes from is said on the page: the run (records, distances, parents) or the
technique's mapping rule computed on the host (explorer/ui/stepthrough.py). A run of many levels
in one launch logged each level: the step-through replays them one by one. Graphs of more than
stepthrough.MAX_VERTICES vertices are refused with the reason.
"""
from __future__ import annotations

import html
import logging

import ipywidgets as W
import numpy as np
from bokeh.layouts import column, row
from bokeh.models import (ColumnDataSource, DataTable, HoverTool, LabelSet, MultiLine, Range1d, Scatter,
                          SingleIntervalTicker, StringFormatter, TableColumn)
from bokeh.plotting import figure, from_networkx
from jupyter_bokeh import BokehModel

from .. import api, backend
from ..backend import simulator_knobs_note
from ..graphs import CSRGraph
from ..reference import check_result
from ..stats import RunResult
from ..techniques import Technique, implementation, implemented_techniques, make_knobs
from .cli import load_graph_spec, parse_knob_values, simulator_knobs
from .stepthrough import (ASSIGNMENT_COLUMNS, ClassroomError, Frame, StepThrough, check_size, classroom_note,
                          replay, table_columns)

log = logging.getLogger("explorer")

#: Input problems shown as one line in the status (as the Explorer's; KnobError, GraphError and
#: ClassroomError are ValueErrors).
USER_ERRORS = (ValueError, NotImplementedError, backend.BackendError, OSError)
#: Graphs offered in the graph box (any sample name, file or gen:... spec may be typed).
GRAPH_CHOICES = ("bfs4k_fig2", "gen:grid2d:rows=6,cols=8", "gen:kronecker:scale=6,edge_factor=4",
                 "gen:watts_strogatz:n=40,k=4,p=0.2")
#: Fill by BFS level: no red, green, orange or magenta, which mark the frontier, the vertices it
#: discovered, the edges examined and the duplicates.
LEVEL_COLORS = ("#1f77b4", "#9467bd", "#17becf", "#8c564b", "#bcbd22", "#7f7f7f", "#aec7e8", "#c5b0d5",
                "#9edae5", "#c49c94")
UNREACHED = "#e0e0e0"
FRONTIER_RING = "#d62728"
FOUND_RING = "#2ca02c"
EXAMINED = "#ff7f0e"
TREE = "#555555"
OTHER_EDGE = "#c8c8c8"
DUPLICATE = "#e377c2"
DRAW_SIZE = 430
PLAY_INTERVAL_MS = 1200


def _esc(x) -> str:
    return html.escape(str(x))


def load_bokehjs() -> None:
    """BokehJS into the page, inline (no internet needed), as explorer.ui.widgets.load_bokehjs
    (which imports this module, so this one cannot import it)."""
    from bokeh.io import output_notebook
    from bokeh.resources import Resources
    from bokeh.settings import settings

    output_notebook(resources=Resources(mode=settings.resources(default="inline")), hide_banner=True)


# ------------------------------------------------------------------ frame -> columns (plain)

def level_color(level: int) -> str:
    return LEVEL_COLORS[level % len(LEVEL_COLORS)]


def node_columns(frame: Frame | None, dist: np.ndarray | None, n: int) -> dict:
    """Colours of the n vertices at `frame`: reached ones by level, the frontier ringed red, the
    vertices it discovered ringed green; all grey before a run."""
    fill, ring, width, level = [UNREACHED] * n, ["#777777"] * n, [1.0] * n, [""] * n
    if frame is not None:
        for v in frame.reached:
            fill[v], level[v] = level_color(int(dist[v])), str(int(dist[v]))
        for v in frame.frontier:
            ring[v], width[v] = FRONTIER_RING, 4.0
        for v in frame.discovered:
            ring[v], width[v] = FOUND_RING, 3.0
    return {"fill_color": fill, "line_color": ring, "line_width": width, "level": level}


def edge_columns(frame: Frame | None, starts, ends, directed: bool) -> dict:
    """Colours of the drawn edges at `frame`: examined this level orange, BFS tree dark, others light."""
    def key(u, v):
        return (int(u), int(v)) if directed else frozenset((int(u), int(v)))

    examined = {key(u, v) for u, v in frame.examined} if frame is not None else set()
    tree = {key(u, v) for u, v in frame.tree} if frame is not None else set()
    color, width, alpha = [], [], []
    for u, v in zip(starts, ends):
        k = key(u, v)
        if k in examined:
            color.append(EXAMINED), width.append(3.5), alpha.append(0.95)
        elif k in tree:
            color.append(TREE), width.append(2.5), alpha.append(0.9)
        else:
            color.append(OTHER_EDGE), width.append(1.0), alpha.append(0.7)
    return {"line_color": color, "line_width": width, "line_alpha": alpha}


def frontier_columns(frames: list[Frame], upto: int) -> dict:
    """The frontier plot's rows: one per level stepped through so far (the run's records)."""
    shown = frames[:upto + 1]
    return {"level": [f.level for f in shown], "frontier_in": [f.record.frontier_in for f in shown],
            "discovered": [len(f.discovered) for f in shown],
            "edges_examined": ["–" if f.record.edges_examined is None else f.record.edges_examined for f in shown]}


def _count(x) -> str:
    return "not measured" if x is None else f"{x:,}"


def _vertices(vs) -> str:
    vs = [int(v) for v in vs]
    text = ", ".join(map(str, vs[:24])) + (" ..." if len(vs) > 24 else "")
    return "{" + text + "}"


def level_html(frame: Frame, frames: list[Frame], race: bool) -> str:
    """What the level's record says, and where each part comes from."""
    rec = frame.record
    launch = ""
    if rec.launches == 0:
        first = max(f.level for f in frames[:frame.level + 1] if f.record.launches > 0)
        launch = (f" It ran inside the {rec.kernel.value} launch that started at level {first}, which logged "
                  "each of its levels: replayed here one by one.")
    extras = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in rec.extras.items())
    lines = [
        f"<b>Level {frame.level}</b> of {len(frames) - 1}: {_esc(rec.technique)}, {_esc(rec.kernel.value)} kernel, "
        f"{_esc(rec.direction.value)}.{_esc(launch)}",
        f"<b>Frontier</b> {_esc(_vertices(frame.frontier))}: the record read {_count(rec.frontier_in)} entries"
        + (f" ({frame.duplicate_entries} of them repeats: duplicates from the level before)"
           if frame.duplicate_entries else "") + ".",
        f"<b>Edges examined</b>: {_count(rec.edges_examined)} (record); <span style='color:{EXAMINED}'>drawn</span>: "
        f"{len(frame.examined)} by the technique's rule"
        + ("" if frame.edges_agree in (True, None) else " <b>(not the record's count: the rule is a model)</b>")
        + ".",
        f"<b>Discovered</b> <span style='color:{FOUND_RING}'>(green rings)</span>: {_count(rec.discovered)} (record) "
        f"{_esc(_vertices(frame.discovered))}.",
        f"<b>Duplicates</b>: generated {_count(rec.dup_generated)}, removed by the filter {_count(rec.dup_detected)}, "
        f"left in the next frontier {_count(rec.dup_undetected)} (record). "
        + (f"<span style='color:{DUPLICATE}'>Magenta rings</span>: where they can be born, "
           f"{_esc(_vertices(frame.candidates))}, vertices reached by two or more frontier arcs "
           f"({'several threads may claim each' if race else 'this technique lets one thread win each'}; "
           "which ones were duplicated is not recorded)." if len(frame.candidates) else "No vertex was reached "
           "by two frontier arcs at this level."),
    ]
    if extras:
        lines.append(f"<b>{_esc(rec.technique)}'s own record</b>: {_esc(extras)}.")
    lines.append("<small style='color:#666'>From the run: the frontier and discovered vertices (its distances), "
                 "the dark BFS tree (its parents) and every count (its per-level records). By the technique's "
                 "rule, computed on the host (the kernels do not record it): the orange edges and the table "
                 "below.</small>")
    return "<div style='font-size:12px;line-height:1.45'>" + "<br>".join(lines) + "</div>"


def assignment_html(frame: Frame) -> str:
    a = frame.assignment
    parts = [f"<b>Which thread took which vertex and edge</b>: assignment by the technique's rule, computed "
             f"on the host, not recorded by the kernel. Rule: {_esc(a.rule)}."]
    if a.idle:
        parts.append(_esc(a.idle[0].upper() + a.idle[1:]) + ".")
    if a.caveats:
        parts.append("Assumed: " + _esc("; ".join(a.caveats)) + ".")
    return "<div style='font-size:12px;line-height:1.45'>" + " ".join(parts) + "</div>"


# ------------------------------------------------------------------ the widget

class Classroom(W.VBox):
    """Step / Back / Play / Stop through a BFS of a small graph with any registered technique."""

    def __init__(self, graph: str | CSRGraph = "bfs4k_fig2", source: int | str = 0, technique: str | None = None,
                 knobs: dict | None = None, layout_seed: int = 7, **kwargs):
        self.graph: CSRGraph | None = None
        self._graph_spec = None  # what the graph box held when self.graph was drawn
        self.result: RunResult | None = None
        self.frames: list[Frame] = []
        self.state = StepThrough(0)
        self.impl = None
        self.knobs = None
        self.layout_seed = layout_seed
        self._syncing = False

        techs = [t.value for t in implemented_techniques()]  # the registry, as it is now
        self.graph_box = W.Combobox(value=graph if isinstance(graph, str) else graph.name,
                                    options=list(GRAPH_CHOICES), description="graph", ensure_option=False,
                                    layout=W.Layout(width="330px"),
                                    tooltip="a sample name, a graph file or gen:KIND:param=value,... (at most a "
                                            "few hundred vertices)")
        self.source_box = W.Text(value=str(source), description="source", layout=W.Layout(width="170px"),
                                 tooltip="a vertex id, max-degree or random")
        self.technique = W.Dropdown(options=techs, value=Technique.parse(technique).value if technique else techs[0],
                                    description="technique", layout=W.Layout(width="270px"))
        self.knobs_box = W.Text(value=" ".join(f"{k}={v}" for k, v in (knobs or {}).items()), description="knobs",
                                placeholder="K1=4 claim=atomic", layout=W.Layout(width="330px"),
                                tooltip="the technique's knobs as NAME=VALUE, space separated (python3 -m explorer "
                                        "knobs lists them); on the simulator, block sizes default to 32 threads")
        self.run_button = W.Button(description="Run", icon="play", button_style="primary",
                                   tooltip="run the BFS, then step through its levels")
        self.back_button = W.Button(description="Back", icon="step-backward", tooltip="the level before")
        self.step_button = W.Button(description="Step", icon="step-forward", tooltip="the next level")
        self.play_button = W.Button(description="Play", icon="play-circle", tooltip="step through every level")
        self.stop_button = W.Button(description="Stop", icon="stop", tooltip="stop playing")
        # The timer of Play: ipywidgets' Play widget counts in the browser, hidden; its value is the level.
        self.ticker = W.Play(value=0, min=0, max=0, interval=PLAY_INTERVAL_MS, layout=W.Layout(display="none"))
        self.level_label = W.HTML()
        self.note = W.HTML()
        self.status = W.HTML()
        self.level_info = W.HTML()
        self.assignment_info = W.HTML()
        self.view_box = W.Box()

        self.run_button.on_click(lambda _: self._guarded(self.run))
        self.step_button.on_click(lambda _: self._guarded(self.step))
        self.back_button.on_click(lambda _: self._guarded(self.back))
        self.play_button.on_click(lambda _: self._guarded(self.play))
        self.stop_button.on_click(lambda _: self._guarded(self.stop))
        self.ticker.observe(self._on_tick, names="value")
        self.ticker.observe(self._on_ticker_playing, names="playing")
        self.technique.observe(lambda _: self._show_note(), names="value")

        controls = W.VBox([
            W.HBox([self.graph_box, self.source_box, self.technique]),
            W.HBox([self.knobs_box, self.run_button]),
            W.HBox([self.back_button, self.step_button, self.play_button, self.stop_button, self.level_label,
                    self.ticker]),
            self.note, self.status])
        super().__init__([controls, self.view_box, self.level_info, self.assignment_info], **kwargs)
        self.add_class("bfs4k-classroom")
        self._show_note()
        self._sync_buttons()
        self._draw(self._load(graph))  # a graph too large to draw raises ClassroomError, saying why
        self._set_status("press Run, then Step through the levels")

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()  # published just before the widget, so the plot view finds BokehJS
        return super()._repr_mimebundle_(**kwargs)

    # ------------------------------------------------------------------ status

    def _set_status(self, text: str, kind: str = "info") -> None:
        color = {"info": "#333", "busy": "#1f5fa8", "ok": "#11772b", "error": "#b00020"}[kind]
        icon = {"info": "", "busy": "<i class='fa fa-spinner fa-spin'></i> ", "ok": "✓ ", "error": "✗ "}[kind]
        self.status.value = (f"<div class='bfs4k-status' style='color:{color};line-height:1.45'>{icon}{_esc(text)}"
                             "</div>")

    def _show_error(self, err: BaseException) -> None:
        self._set_status(f"{type(err).__name__}: {err}", "error")

    def _guarded(self, action) -> None:
        """A button's action: bad input in the status line, a bug there too with its traceback logged."""
        try:
            action()
        except USER_ERRORS as err:
            self._show_error(err)
        except Exception as err:
            log.exception("classroom action failed")
            self._set_status(f"internal error ({type(err).__name__}: {err}); see the log", "error")

    def _show_note(self) -> None:
        impl = implementation(self.technique.value)
        self.note.value = (f"<div style='font-size:12px;line-height:1.45;color:#333;max-width:900px'><b>What to notice with "
                           f"{_esc(impl.name)}</b>: {_esc(classroom_note(impl))}</div>")

    # ------------------------------------------------------------------ running

    def _load(self, graph) -> CSRGraph:
        g = graph if isinstance(graph, CSRGraph) else load_graph_spec(str(graph).strip())
        check_size(g)  # before anything is drawn or run
        return g

    def run(self, graph: str | CSRGraph | None = None, source: int | str | None = None,
            technique: str | None = None, knobs: dict | None = None) -> RunResult:
        """Set the given controls, run the BFS to the end (instrumented), check it, show level 0."""
        if graph is not None:
            self.graph_box.value = graph if isinstance(graph, str) else graph.name
        if source is not None:
            self.source_box.value = str(source)
        if technique is not None:
            self.technique.value = Technique.parse(technique).value
        if knobs is not None:
            self.knobs_box.value = " ".join(f"{k}={v}" for k, v in knobs.items())
        self.stop()
        if isinstance(graph, CSRGraph):
            g = self._load(graph)
        elif self.graph is not None and self.graph_box.value == self._graph_spec:
            g = self.graph
        else:
            g = self._load(self.graph_box.value)
        tech = Technique.parse(self.technique.value)
        values = parse_knob_values(tech, self.knobs_box.value.replace(",", " ").split())
        info = self._backend()
        applied = simulator_knobs(tech, values) if info.is_simulator else {}
        values = {**applied, **values}
        impl, knobs = implementation(tech), make_knobs(tech, values)
        src = self.source_box.value.strip()
        src = int(src) if src.lstrip("-").isdigit() else src
        self._set_status(f"running {tech.value} on {g.name} from {src} ({info.describe()}) ...", "busy")
        result = api.run_bfs(g, src, tech, knobs, instrument=True).complete()
        check = check_result(g, result)
        result.validation = "ok" if check.ok else (check.rule or "distances")
        if g is not self.graph:
            self._draw(g)
        self.result, self.impl, self.knobs = result, impl, knobs
        self.frames = replay(g, result, impl, knobs)
        top = max([f.record.frontier_in for f in self.frames] + [len(f.discovered) for f in self.frames] + [1])
        self.frontier_plot.x_range.update(start=-0.3, end=max(len(self.frames) - 1, 1) + 0.3)
        self.frontier_plot.y_range.update(start=0, end=top * 1.15)
        self.state = StepThrough(len(self.frames))
        self._syncing = True
        self.ticker.max = max(len(self.frames) - 1, 0)
        self.ticker.value = 0
        self._syncing = False
        self._render()
        verdict = "valid BFS (distances equal the CPU reference)" if check.ok else f"INVALID: {check.message}"
        sim = f" ({simulator_knobs_note(applied)})" if applied else ""
        self._set_status(f"{tech.value} on {g.name} from vertex {result.source}: {len(self.frames)} levels, "
                         f"{result.reached:,} vertices reached; {verdict}{sim}. Step through the levels.",
                         "ok" if check.ok else "error")
        return result

    def _backend(self):
        """The GPU, or the simulator when there is none (a class without GPUs), said in the status."""
        try:
            return backend.select("auto")
        except backend.NoGPUError:
            return backend.select("simulator")

    # ------------------------------------------------------------------ stepping

    def _need_run(self) -> None:
        if not self.frames:
            raise ClassroomError("nothing to step through yet: press Run first")

    def step(self) -> int:
        self._need_run()
        self.state.step()
        self._moved()
        return self.state.position

    def back(self) -> int:
        self._need_run()
        self.state.back()
        self._moved()
        return self.state.position

    def goto(self, level: int) -> int:
        self._need_run()
        self.state.goto(level)
        self._moved()
        return self.state.position

    def play(self) -> None:
        """Play: the browser's timer (the hidden Play widget) steps one level per interval."""
        self._need_run()
        if self.state.play():
            self._moved()
            self.ticker.playing = True
        self._sync_buttons()

    def stop(self) -> None:
        self.state.stop()
        if self.ticker.playing:
            self.ticker.playing = False
        self._sync_buttons()

    def _on_tick(self, change) -> None:
        if self._syncing or not self.frames:
            return
        try:
            self.state.goto(min(int(change["new"]), len(self.frames) - 1))
            if self.state.at_end:
                self.state.stop()
            self._render()
        except Exception as err:  # a callback: never let it vanish silently
            log.exception("classroom tick failed")
            self._show_error(err)

    def _on_ticker_playing(self, change) -> None:
        if not change["new"]:
            self.state.stop()
            self._sync_buttons()

    def _moved(self) -> None:
        self._syncing = True
        self.ticker.value = self.state.position
        self._syncing = False
        self._render()

    def _sync_buttons(self) -> None:
        on = self.state.enabled()
        self.step_button.disabled, self.back_button.disabled = not on["step"], not on["back"]
        self.play_button.disabled, self.stop_button.disabled = not on["play"], not on["stop"]
        if self.frames:
            self.level_label.value = (f"<span class='bfs4k-level'>&nbsp;level <b>{self.state.position}</b> of "
                                      f"{len(self.frames) - 1}</span>")
        else:
            self.level_label.value = "<span class='bfs4k-level'>&nbsp;no run yet</span>"

    @property
    def frame(self) -> Frame | None:
        return self.frames[self.state.position] if self.frames else None

    # ------------------------------------------------------------------ drawing

    def _draw(self, g: CSRGraph) -> None:
        """New Bokeh models for graph `g` (all grey until a run), in a new view."""
        import networkx as nx

        self.graph, self.frames, self.result = g, [], None
        self._graph_spec = self.graph_box.value
        self.state = StepThrough(0)
        nxg = g.to_networkx()
        pos = nx.spring_layout(nxg, seed=self.layout_seed) if g.num_vertices else {}
        fig = figure(width=DRAW_SIZE, height=DRAW_SIZE, tools="pan,wheel_zoom,reset,save",
                     title=f"{g.name}: vertices coloured by BFS level", x_axis_location=None, y_axis_location=None,
                     match_aspect=True)
        fig.grid.visible = False
        fig.title.text_font_size = "11pt"
        renderer = from_networkx(nxg, pos)
        self.node_source = renderer.node_renderer.data_source
        self.edge_source = renderer.edge_renderer.data_source
        self.node_source.name, self.edge_source.name = "classroom-nodes", "classroom-edges"
        n = g.num_vertices
        xs = [float(pos[v][0]) for v in range(n)]
        ys = [float(pos[v][1]) for v in range(n)]
        self.node_source.data.update({"vertex": list(range(n)), "degree": g.degrees().tolist(),
                                      **node_columns(None, None, n)})
        self.edge_source.data.update(edge_columns(None, self.edge_source.data["start"],
                                                  self.edge_source.data["end"], g.directed))
        renderer.node_renderer.glyph = Scatter(size=22, fill_color="fill_color", line_color="line_color",
                                               line_width="line_width")
        renderer.edge_renderer.glyph = MultiLine(line_color="line_color", line_width="line_width",
                                                 line_alpha="line_alpha")
        fig.renderers.append(renderer)
        self.positions = (np.array(xs), np.array(ys))
        self.dup_source = ColumnDataSource({"x": [], "y": []}, name="classroom-duplicates")
        fig.scatter("x", "y", source=self.dup_source, size=34, fill_alpha=0, line_color=DUPLICATE, line_width=3,
                    line_dash="dashed")
        labels = ColumnDataSource({"x": xs, "y": ys, "text": [str(v) for v in range(n)]})
        fig.add_layout(LabelSet(x="x", y="y", text="text", source=labels, text_align="center",
                                text_baseline="middle", text_font_size="9pt"))
        fig.add_tools(HoverTool(renderers=[renderer.node_renderer],
                                tooltips=[("vertex", "@vertex"), ("level", "@level"), ("degree", "@degree")]))

        self.frontier_source = ColumnDataSource({"level": [], "frontier_in": [], "discovered": [],
                                                 "edges_examined": []}, name="classroom-frontier")
        # Fixed axes (set by each run), so each Step adds a point instead of rescaling the plot.
        plot = figure(width=330, height=280, title="frontier per level (the run's records)", tools="save",
                      x_axis_label="BFS level", y_axis_label="vertices", x_range=Range1d(-0.3, 3.3),
                      y_range=Range1d(0, 5))
        plot.xaxis.ticker = SingleIntervalTicker(interval=1)
        self.frontier_plot = plot
        plot.line("level", "frontier_in", source=self.frontier_source, color=FRONTIER_RING, line_width=2,
                  legend_label="frontier in")
        plot.scatter("level", "frontier_in", source=self.frontier_source, color=FRONTIER_RING, size=8)
        plot.line("level", "discovered", source=self.frontier_source, color=FOUND_RING, line_dash="dashed",
                  legend_label="discovered")
        legend = plot.legend[0]
        legend.orientation, legend.label_text_font_size, legend.border_line_alpha = "horizontal", "8pt", 0
        plot.add_layout(legend, "below")  # never over the points
        plot.add_tools(HoverTool(tooltips=[("level", "@level"), ("frontier in", "@frontier_in"),
                                           ("discovered", "@discovered"), ("edges examined", "@edges_examined")]))

        self.assignment_source = ColumnDataSource({c: [] for c in ASSIGNMENT_COLUMNS}, name="classroom-assignment")
        widths = {"block": 70, "warp": 45, "vwarp": 55, "lane": 40, "thread": 55, "round": 90, "vertex": 50,
                  "edge": 70, "outcome": 330}
        table = DataTable(source=self.assignment_source, width=sum(widths.values()) + 40, height=240,
                          index_position=None, sortable=True, reorderable=False,
                          columns=[TableColumn(field=c, title="virtual warp" if c == "vwarp" else c,
                                               width=widths[c], formatter=StringFormatter())
                                   for c in ASSIGNMENT_COLUMNS])
        old = self.view_box.children
        self.view = BokehModel(column(row(fig, plot), table))
        self.view_box.children = [self.view]
        for w in old:
            w.close()
        self._render()

    def _render(self) -> None:
        """Show the current frame: node and edge colours, duplicates, frontier plot, table, text."""
        frame = self.frame
        g = self.graph
        dist = self.result.distances if self.result is not None else None
        self.node_source.data.update(node_columns(frame, dist, g.num_vertices))
        self.edge_source.data.update(edge_columns(frame, self.edge_source.data["start"],
                                                  self.edge_source.data["end"], g.directed))
        if frame is None:
            self.dup_source.data = {"x": [], "y": []}
            self.frontier_source.data = frontier_columns([], -1)
            self.assignment_source.data = {c: [] for c in ASSIGNMENT_COLUMNS}
            self.level_info.value = self.assignment_info.value = ""
        else:
            xs, ys = self.positions
            self.dup_source.data = {"x": xs[frame.candidates].tolist(), "y": ys[frame.candidates].tolist()}
            self.frontier_source.data = frontier_columns(self.frames, self.state.position)
            self.assignment_source.data = table_columns(frame.assignment)
            race = self.impl.creates_duplicates(self.knobs)
            self.level_info.value = level_html(frame, self.frames, race)
            self.assignment_info.value = assignment_html(frame)
        self._sync_buttons()


def degree_histogram(graph: CSRGraph, width: int = 520, height: int = 300):
    """A Bokeh figure of the out-degree histogram (log-log: a scale-free graph is a straight-ish
    line; a mesh, one bar), for the classroom notebook's load-balancing lesson."""
    deg = graph.degrees()
    values, counts = np.unique(deg[deg > 0], return_counts=True)
    fig = figure(width=width, height=height, x_axis_type="log", y_axis_type="log", tools="save,hover",
                 title=f"{graph.name}: how many vertices have each degree",
                 x_axis_label="degree", y_axis_label="vertices", tooltips=[("degree", "@x"), ("vertices", "@y")])
    fig.scatter(values.tolist(), counts.tolist(), size=6, color="#1f77b4")
    return fig


__all__ = ["Classroom", "ClassroomError", "degree_histogram"]
