"""The classroom: step through a BFS on a small graph, one level at a time.

    from explorer.ui.classroom import Classroom
    room = Classroom(graph="bfs4k_fig2", source=0, technique="bfs4k")   # display it
    room.run(); room.step(); room.back(); room.play(); room.stop()     # the buttons, from code

A drawing of the graph, a row per BFS level from the source (stepthrough.drawing_layout), its
vertices coloured by level (the legend below it says which colour is which), the current
frontier ringed, the edges this level examined in orange, the BFS tree in dark grey and a
magenta ring where a duplicate can be born; beside it the frontier per level (one point per level
stepped through); below, what the level's record says and a table of which block / warp /
virtual warp / lane took which vertex and which edge. Every registered technique can be chosen,
on a GPU or on the CUDA simulator (chosen by itself when there is no GPU, and said so). The
drawing is a live.LiveBokehModel: displayed after a run from code, it shows the level reached.

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
from bokeh.core.properties import value
from bokeh.layouts import row
from bokeh.models import (ColumnDataSource, HoverTool, Legend, LegendItem, Range1d, SingleIntervalTicker)
from bokeh.plotting import figure

from .. import api, backend
from ..backend import simulator_knobs_note
from ..graphs import CSRGraph
from ..reference import check_result
from ..stats import RunResult
from ..techniques import Technique, implementation, implemented_techniques, make_knobs
from .cli import load_graph_spec, parse_knob_values, simulator_knobs
from .live import LiveBokehModel, load_bokehjs, refresh_views
from .stepthrough import (ASSIGNMENT_COLUMNS, ClassroomError, Frame, Layout, StepThrough, check_size, classroom_note,
                          drawing_layout, drawn_edges, edge_path, min_spacing, replay, table_columns)
from .tools import USER_ERRORS

log = logging.getLogger("explorer")

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
#: The drawing's size in pixels (the plot beside it and both toolbars fit JupyterLab's output
#: area beside a 1400 px window); its height grows with the rows of a layered drawing.
DRAW_WIDTH = 540
DRAW_HEIGHT = (360, 520)
PLOT_SIZE = (320, 300)
#: A vertex's marker in pixels: as large as the room between vertices allows, within these.
VERTEX_PX = (10, 24)
PLAY_INTERVAL_MS = 1200
#: Rows of the thread table shown at once (a level of a dense graph has thousands).
TABLE_ROWS = 400
TEXT_STYLE = "font-size:13px;line-height:1.5;color:#222"


def _esc(x) -> str:
    return html.escape(str(x))


# ------------------------------------------------------------------ frame -> columns (plain)

def level_color(level: int) -> str:
    return LEVEL_COLORS[level % len(LEVEL_COLORS)]


def _luminance(color: str) -> float:
    """WCAG's relative luminance of #rrggbb."""
    lin = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4
           for x in (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_color(fill: str) -> str:
    """A vertex label's colour on `fill` (#rrggbb): white or black, whichever contrasts more."""
    y = _luminance(fill)
    return "#ffffff" if (1.05 / (y + 0.05)) > ((y + 0.05) / 0.05) else "#000000"


def node_columns(frame: Frame | None, dist: np.ndarray | None, n: int) -> dict:
    """Colours of the n vertices at `frame`: reached ones by level, the frontier ringed red, the
    vertices it discovered ringed green; all grey before a run. Labels in a colour that reads on
    the fill; `level` is what the hover says."""
    fill, ring, width, level = [UNREACHED] * n, ["#777777"] * n, [1.0] * n, ["not reached yet"] * n
    if frame is not None:
        for v in frame.reached:
            fill[v], level[v] = level_color(int(dist[v])), str(int(dist[v]))
        for v in frame.frontier:
            ring[v], width[v] = FRONTIER_RING, 4.0
        for v in frame.discovered:
            ring[v], width[v] = FOUND_RING, 3.0
    return {"fill_color": fill, "line_color": ring, "line_width": width, "level": level,
            "text_color": [text_color(f) for f in fill]}


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


def level_labels(levels: int) -> list[str]:
    """The legend's entry for each level colour of a run of `levels` levels ("level 0, 10" when
    the colours come round again); none before a run."""
    return [f"level {', '.join(map(str, range(c, levels, len(LEVEL_COLORS))))}"
            for c in range(min(levels, len(LEVEL_COLORS)))]


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
    lines.append("<span style='color:#444'><b>Where this comes from.</b> From the run: the frontier and discovered "
                 "vertices (its distances), the dark BFS tree (its parents) and every count (its per-level records). "
                 "By the technique's rule, computed on the host (the kernels do not record it): the orange edges "
                 "and the table below.</span>")
    return f"<div style='{TEXT_STYLE}'>" + "<br>".join(lines) + "</div>"


def assignment_html(frame: Frame) -> str:
    a = frame.assignment
    parts = [f"<b>Which thread took which vertex and edge</b>: assignment by the technique's rule, computed "
             f"on the host, not recorded by the kernel. Rule: {_esc(a.rule)}."]
    if a.idle:
        parts.append(_esc(a.idle[0].upper() + a.idle[1:]) + ".")
    if a.caveats:
        parts.append("Assumed: " + _esc("; ".join(a.caveats)) + ".")
    return f"<div style='{TEXT_STYLE}'>" + " ".join(parts) + "</div>"


#: The thread table's column titles and what each says (its header's hover).
TABLE_TITLES = {
    "block": ("block", "the thread block"),
    "warp": ("warp", "the warp in its block"),
    "vwarp": ("virtual warp", "the virtual warp (BFS-4K §5.2), where the technique forms them"),
    "lane": ("lane", "the thread's place in its warp (or virtual warp)"),
    "thread": ("thread", "the thread's index (in its block, for a one-block launch)"),
    "pass": ("pass", "the pass of a one-block launch over more frontier entries than it has threads"),
    "round": ("round", "the round of the thread's loop over its edges"),
    "vertex": ("vertex", "the frontier vertex (bottom-up: the unvisited vertex whose thread it is)"),
    "edge": ("edge", "the arc the thread inspected"),
    "outcome": ("outcome", "what came of it"),
}
_TABLE_CSS = ("<style>.bfs4k-threads{max-height:320px;overflow:auto;border:1px solid #ddd;margin-top:4px}"
              ".bfs4k-threads table{border-collapse:collapse;font-size:12px;width:100%}"
              ".bfs4k-threads th{position:sticky;top:0;background:#f4f4f4;text-align:left}"
              ".bfs4k-threads th,.bfs4k-threads td{border-bottom:1px solid #eee;padding:2px 8px;white-space:nowrap}"
              ".bfs4k-threads td.outcome{white-space:normal;min-width:260px}</style>")


def assignment_table_html(rows: list[dict], limit: int = TABLE_ROWS) -> str:
    """The thread table: every column whole (the outcome wraps between words), at most `limit`
    rows, a sticky header that says what each column means."""
    head = "".join(f"<th title='{_esc(TABLE_TITLES[c][1])}'>{_esc(TABLE_TITLES[c][0])}</th>" for c in ASSIGNMENT_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td class='{c}'>{_esc(r[c])}</td>" for c in ASSIGNMENT_COLUMNS) + "</tr>"
                   for r in rows[:limit])
    more = (f"<div style='font-size:12px;color:#444'>The first {limit:,} of {len(rows):,} rows.</div>"
            if len(rows) > limit else "")
    return (f"{_TABLE_CSS}<div class='bfs4k-threads'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            f"</table></div>{more}")


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
        self.placed: Layout | None = None  # where the drawing puts each vertex
        self._syncing = False
        self._running = False

        techs = [t.value for t in implemented_techniques()]  # the registry, as it is now
        self.graph_box = W.Combobox(value=graph if isinstance(graph, str) else graph.name,
                                    options=list(GRAPH_CHOICES), description="graph", ensure_option=False,
                                    layout=W.Layout(width="430px"),
                                    tooltip="a sample name, a graph file or gen:KIND:param=value,... (at most a "
                                            "few hundred vertices)")
        self.source_box = W.Text(value=str(source), description="source", layout=W.Layout(width="210px"),
                                 tooltip="a vertex id, max-degree or random")
        # A label of its own: ipywidgets shows a drop-down's tooltip only when it has no description.
        tip = "the technique whose threads the table follows"
        self.technique = W.Dropdown(options=techs, value=Technique.parse(technique).value if technique else techs[0],
                                    layout=W.Layout(width="210px"), tooltip=tip)
        self.technique_label = W.HTML(f"<div class='widget-label' title='{_esc(tip)}'>technique</div>",
                                      layout=W.Layout(width="80px", flex="0 0 auto"))
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
        self.ticker = W.Play(value=0, min=0, max=0, interval=PLAY_INTERVAL_MS, layout=W.Layout(display="none"),
                             tooltip="the level Play shows")
        self.level_label = W.HTML()
        self.note = W.HTML()
        self.status = W.HTML()
        self.level_info = W.HTML()
        self.assignment_info = W.HTML()
        self.assignment_table = W.HTML()
        self.assignment_rows: list[dict] = []  # the table's rows as text, ASSIGNMENT_COLUMNS each
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
            W.HBox([self.graph_box, self.source_box, self.technique_label, self.technique]),
            W.HBox([self.knobs_box, self.run_button]),
            W.HBox([self.back_button, self.step_button, self.play_button, self.stop_button, self.level_label,
                    self.ticker]),
            self.note, self.status])
        super().__init__([controls, self.view_box, self.level_info, self.assignment_info, self.assignment_table],
                         **kwargs)
        self.add_class("bfs4k-classroom")
        self._show_note()
        self._sync_buttons()
        self._draw(self._load(graph))  # a graph too large to draw raises ClassroomError, saying why
        self._set_status("press Run, then Step through the levels")

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()  # published just before the widget, so the plot view finds BokehJS
        refresh_views(self)  # the level reached so far, also when run and stepped from code first
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
        self.note.value = (f"<div style='{TEXT_STYLE};max-width:900px'><b>What to notice with "
                           f"{_esc(impl.name)}</b>: {_esc(classroom_note(impl))}</div>")

    # ------------------------------------------------------------------ running

    def _load(self, graph) -> CSRGraph:
        g = graph if isinstance(graph, CSRGraph) else load_graph_spec(str(graph).strip())
        check_size(g)  # before anything is drawn or run
        return g

    def _source_text(self):
        src = self.source_box.value.strip()
        return int(src) if src.lstrip("-").isdigit() else src

    def run(self, graph: str | CSRGraph | None = None, source: int | str | None = None,
            technique: str | None = None, knobs: dict | None = None) -> RunResult:
        """Set the given controls, run the BFS to the end (instrumented), check it, show level 0.
        Meanwhile every button is disabled: a Step pressed during the run would act on the old one."""
        if graph is not None:
            self.graph_box.value = graph if isinstance(graph, str) else graph.name
        if source is not None:
            self.source_box.value = str(source)
        if technique is not None:
            self.technique.value = Technique.parse(technique).value
        if knobs is not None:
            self.knobs_box.value = " ".join(f"{k}={v}" for k, v in knobs.items())
        self.stop()
        self._running = True
        self._sync_buttons()
        try:
            return self._run(graph)
        finally:
            self._running = False
            self._sync_buttons()

    def _run(self, graph) -> RunResult:
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
        src = self._source_text()
        self._set_status(f"running {tech.value} on {g.name} from {src} ({info.describe()}) ...", "busy")
        result = api.run_bfs(g, src, tech, knobs, instrument=True).complete()
        check = check_result(g, result)
        result.validation = "ok" if check.ok else (check.rule or "distances")
        if g is not self.graph:
            self._draw(g)
        frames = replay(g, result, impl, knobs)
        if self.placed is None or self.placed.source != result.source:
            self._place(drawing_layout(g, result.source, self.layout_seed))
        self.result, self.impl, self.knobs, self.frames = result, impl, knobs, frames
        top = max([f.record.frontier_in for f in self.frames] + [len(f.discovered) for f in self.frames] + [1])
        self.frontier_plot.x_range.update(start=-0.3, end=max(len(self.frames) - 1, 1) + 0.3)
        self.frontier_plot.y_range.update(start=0, end=top * 1.15)
        for item, text in zip(self.level_items, level_labels(len(self.frames)) + [None] * len(LEVEL_COLORS)):
            item.update(label=value(text or ""), visible=text is not None)
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
        # The browser applies these in order: buttons are disabled before "running" shows and the
        # label leaves "running" before they are enabled, so no moment shows Step live mid-run.
        if self._running:
            self._sync_button_states()
            self.level_label.value = "<span class='bfs4k-level'>&nbsp;running ...</span>"
            return
        if self.frames:
            self.level_label.value = (f"<span class='bfs4k-level'>&nbsp;level <b>{self.state.position}</b> of "
                                      f"{len(self.frames) - 1}</span>")
        else:
            self.level_label.value = "<span class='bfs4k-level'>&nbsp;no run yet</span>"
        self._sync_button_states()

    def _sync_button_states(self) -> None:
        on = {k: v and not self._running for k, v in self.state.enabled().items()}
        self.run_button.disabled = self._running
        self.step_button.disabled, self.back_button.disabled = not on["step"], not on["back"]
        self.play_button.disabled, self.stop_button.disabled = not on["play"], not on["stop"]

    @property
    def frame(self) -> Frame | None:
        return self.frames[self.state.position] if self.frames else None

    # ------------------------------------------------------------------ drawing

    def _initial_layout(self, g: CSRGraph) -> Layout:
        """Rows by level from the source in the box (a bad source is the run's to report)."""
        try:
            source = api.resolve_source(g, self._source_text())
        except ValueError:
            source = None
        return drawing_layout(g, source, self.layout_seed)

    def _draw(self, g: CSRGraph) -> None:
        """New Bokeh models for graph `g` (all grey until a run), in a new view."""
        self.graph, self.frames, self.result = g, [], None
        self._graph_spec = self.graph_box.value
        self.state = StepThrough(0)
        n = g.num_vertices
        self.edges = drawn_edges(g)
        fig = figure(width=DRAW_WIDTH, height=DRAW_HEIGHT[0], tools="pan,wheel_zoom,reset,save",
                     title=f"{g.name}: vertices coloured by BFS level", x_axis_location=None, y_axis_location=None,
                     x_range=Range1d(-0.14, 1.03), y_range=Range1d(-0.08, 1.08), min_border_left=4,
                     min_border_right=4)
        fig.grid.visible = False
        fig.outline_line_alpha = 0.3
        fig.title.text_font_size = "11pt"
        self.drawing = fig
        starts, ends = [u for u, _ in self.edges], [v for _, v in self.edges]
        self.edge_source = ColumnDataSource({"xs": [[]] * len(self.edges), "ys": [[]] * len(self.edges),
                                             "start": starts, "end": ends,
                                             **edge_columns(None, starts, ends, g.directed)}, name="classroom-edges")
        fig.multi_line("xs", "ys", source=self.edge_source, line_color="line_color", line_width="line_width",
                       line_alpha="line_alpha")
        self.node_source = ColumnDataSource({"x": [0.0] * n, "y": [0.0] * n, "vertex": list(range(n)),
                                             "label": [str(v) for v in range(n)], "degree": g.degrees().tolist(),
                                             **node_columns(None, None, n)}, name="classroom-nodes")
        nodes = fig.scatter("x", "y", source=self.node_source, size=VERTEX_PX[1], fill_color="fill_color",
                            line_color="line_color", line_width="line_width")
        self.node_glyph = nodes.glyph
        self.label_glyph = fig.text("x", "y", text="label", source=self.node_source, text_color="text_color",
                                    text_align="center", text_baseline="middle", text_font_size="9pt").glyph
        self.dup_source = ColumnDataSource({"x": [], "y": []}, name="classroom-duplicates")
        self.dup_glyph = fig.scatter("x", "y", source=self.dup_source, size=VERTEX_PX[1] + 12, fill_alpha=0,
                                     line_color=DUPLICATE, line_width=3, line_dash="dashed").glyph
        self.row_source = ColumnDataSource({"x": [], "y": [], "text": []}, name="classroom-rows")
        fig.text("x", "y", text="text", source=self.row_source, text_align="right", text_baseline="middle",
                 text_font_size="8pt", text_color="#555555", text_font_style="italic")
        fig.add_tools(HoverTool(renderers=[nodes], tooltips=[("vertex", "@vertex"), ("level", "@level"),
                                                             ("degree", "@degree")]))
        self._add_legend(fig)

        self.frontier_source = ColumnDataSource({"level": [], "frontier_in": [], "discovered": [],
                                                 "edges_examined": []}, name="classroom-frontier")
        # Fixed axes (set by each run), so each Step adds a point instead of rescaling the plot.
        plot = figure(width=PLOT_SIZE[0], height=PLOT_SIZE[1], title="frontier per level (the run's records)",
                      tools="save", x_axis_label="BFS level", y_axis_label="vertices", x_range=Range1d(-0.3, 3.3),
                      y_range=Range1d(0, 5))
        plot.xaxis.ticker = SingleIntervalTicker(interval=1)
        self.frontier_plot = plot
        plot.line("level", "frontier_in", source=self.frontier_source, color=FRONTIER_RING, line_width=2,
                  legend_label="frontier in")
        plot.scatter("level", "frontier_in", source=self.frontier_source, color=FRONTIER_RING, size=8)
        plot.line("level", "discovered", source=self.frontier_source, color=FOUND_RING, line_dash="dashed",
                  legend_label="discovered")
        legend = plot.legend[0]
        legend.orientation, legend.label_text_font_size, legend.border_line_alpha = "horizontal", "9pt", 0
        plot.add_layout(legend, "below")  # never over the points
        plot.add_tools(HoverTool(tooltips=[("level", "@level"), ("frontier in", "@frontier_in"),
                                           ("discovered", "@discovered"), ("edges examined", "@edges_examined")]))

        old = self.view_box.children
        self.view = LiveBokehModel(row(fig, plot))
        self.view_box.children = [self.view]
        for w in old:
            w.close()
        self._place(self._initial_layout(g))

    def _add_legend(self, fig) -> None:
        """What each colour means, below the drawing: a key per level colour of the run (shown
        after Run), then the rings and the edges. The keys draw one NaN point each: nothing."""
        blank = ColumnDataSource({"x": [float("nan")], "y": [float("nan")]})

        def key(label, **style):
            marker = style.pop("marker", "circle")
            if marker == "line":
                r = fig.line("x", "y", source=blank, **style)
            else:
                r = fig.scatter("x", "y", source=blank, marker=marker, size=12, **style)
            return LegendItem(label=value(label), renderers=[r])

        self.level_items = [key(f"level {c}", fill_color=color, line_color="#777777") for c, color in
                            enumerate(LEVEL_COLORS)]
        for item in self.level_items:
            item.visible = False
        marks = [key("not reached yet", fill_color=UNREACHED, line_color="#777777"),
                 key("frontier", fill_color="white", line_color=FRONTIER_RING, line_width=3),
                 key("discovered by it", fill_color="white", line_color=FOUND_RING, line_width=3),
                 key("a duplicate can be born", fill_color="white", line_color=DUPLICATE, line_width=2,
                     line_dash="dashed"),
                 key("edge examined", marker="line", line_color=EXAMINED, line_width=3.5),
                 key("BFS tree", marker="line", line_color=TREE, line_width=2.5)]
        fig.add_layout(Legend(items=[*self.level_items, *marks], orientation="horizontal", ncols=4,
                              label_text_font_size="9pt", spacing=2, padding=4, margin=2, border_line_alpha=0,
                              glyph_width=18, name="classroom-legend"), "below")

    def _place(self, layout: Layout) -> None:
        """Put the vertices, edges, row labels and marker sizes where `layout` says."""
        self.placed = layout
        rows = len({round(float(y), 9) for y in layout.y}) if layout.kind == "levels" else 0
        height = int(np.clip(60 * rows + 120, *DRAW_HEIGHT)) if rows else DRAW_HEIGHT[1] - 80
        self.drawing.height = height + 70  # and the legend below it
        self.drawing.x_range.start = -0.2 if layout.rows else -0.05  # room for the rows' labels
        room = min_spacing(layout, DRAW_WIDTH * 0.85, height * 0.85)
        size = float(np.clip(0.8 * room, *VERTEX_PX))
        self.node_glyph.size = size
        self.dup_glyph.size = size + 12
        self.label_glyph.text_font_size = "9pt" if size >= 18 else "7pt"
        self.node_source.data.update({"x": layout.x.tolist(), "y": layout.y.tolist()})
        paths = [edge_path(layout, u, v) for u, v in self.edges]
        self.edge_source.data.update({"xs": [p[0] for p in paths], "ys": [p[1] for p in paths]})
        self.row_source.data = {"x": [-0.02] * len(layout.rows), "y": [y for y, _ in layout.rows],
                                "text": [t for _, t in layout.rows]}
        self.drawing.title.text = (f"{self.graph.name}: a row per BFS level from vertex {layout.source}"
                                   if layout.kind == "levels" else f"{self.graph.name}: vertices coloured by BFS level")
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
            self.assignment_rows = []
            self.level_info.value = self.assignment_info.value = self.assignment_table.value = ""
        else:
            xs, ys = self.placed.x, self.placed.y
            self.dup_source.data = {"x": xs[frame.candidates].tolist(), "y": ys[frame.candidates].tolist()}
            self.frontier_source.data = frontier_columns(self.frames, self.state.position)
            columns = table_columns(frame.assignment)
            self.assignment_rows = [{c: columns[c][i] for c in ASSIGNMENT_COLUMNS}
                                    for i in range(len(frame.assignment.rows))]
            self.assignment_table.value = assignment_table_html(self.assignment_rows)
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


__all__ = ["Classroom", "ClassroomError", "degree_histogram", "load_bokehjs"]
