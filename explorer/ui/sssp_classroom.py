"""The weighted classroom: step through a shortest-path run of a small weighted graph, iteration by
iteration: the edges drawn with their weights, the vertices whose tentative distance the step
lowered, the arcs that gave them their new distance, and a table of the tentative distances.

    room = WeightedClassroom(graph, source=0, technique="h-bf")   # runs it and shows step 0
    room.step(); room.back(); room.play()

The frames are the run's own state: after each step the tentative distances are read from the
run's device buffer (the session keeps the pool its run uses), so what is drawn is what the GPU
(or the simulator) had, not a host model. For that every step must be its own launch with the
distances in their own array: the single-block kernel is off (K5=0) and H-BF's packed words
are off; the note says so. The last frame's distances are checked against the run's result.
"""
from __future__ import annotations

import html
import logging
from dataclasses import dataclass

import ipywidgets as W
import numpy as np
from bokeh.models import ColumnDataSource, LabelSet
from bokeh.plotting import figure

from .. import graphs
from ..engine import Session
from ..graphs import CSRGraph
from .live import LiveBokehModel, load_bokehjs, refresh_views
from .stepthrough import StepThrough, check_size, drawing_layout, drawn_edges

log = logging.getLogger("explorer")

#: Knobs the classroom sets so that every step ends on the host with the distances readable.
CLASSROOM_KNOBS = {"K5": 0, "packed": "off"}
IMPROVED, TIGHT, OTHER, SOURCE, UNREACHED, REACHED = "#d62728", "#d62728", "#c8c8c8", "#2ca02c", "#eeeeee", "#9ecae1"
PLAY_INTERVAL_MS = 1200
LOWERED_ROW = " style='color:#d62728;font-weight:600'"


def _esc(x) -> str:
    return html.escape(str(x))


class WatchedSession(Session):
    """A Session that keeps the buffer pool of the run it serves, so that the run's tentative
    distances can be read between its steps."""

    pool = None

    def acquire(self, runtime):
        self.pool = super().acquire(runtime)
        return self.pool


@dataclass(frozen=True)
class WeightedFrame:
    """The state after one step (step -1: after the set-up, the source at 0)."""

    step: int
    dist: np.ndarray  # float64, inf: not reached yet
    improved: np.ndarray  # vertices whose distance this step lowered
    tight: list  # arcs (u, v) into an improved v with d(u) + w = d(v) after the step
    record: object = None  # the step's IterationStats (None for the set-up)


def read_distances(session: WatchedSession, n: int) -> np.ndarray:
    """The run's tentative distances now, as float64 with inf for 'not reached yet'."""
    arr = session.pool.arrays[("sssp.dist", False)]
    d = arr.copy_to_host() if hasattr(arr, "copy_to_host") else np.array(arr)
    d = np.asarray(d)[:n]
    if d.dtype == np.int64:
        out = d.astype(np.float64)
        out[d == np.iinfo(np.int64).max] = np.inf
        return out
    return d.astype(np.float64)


def frame_after(step: int, graph: CSRGraph, weights: np.ndarray, before: np.ndarray, dist: np.ndarray,
                record=None) -> WeightedFrame:
    improved = np.flatnonzero(dist < before)
    mask = np.zeros(graph.num_vertices, bool)
    mask[improved] = True
    src = np.repeat(np.arange(graph.num_vertices), graph.degrees())
    dst = np.asarray(graph.indices, np.int64)
    hit = mask[dst] & np.isfinite(dist[src]) & np.isclose(dist[src] + weights, dist[dst], rtol=0, atol=1e-9)
    tight = sorted({(int(u), int(v)) for u, v in zip(src[hit], dst[hit]) if u != v})
    return WeightedFrame(step, dist, improved, tight, record)


class WeightedClassroom(W.VBox):
    """Step/Back/Play through a shortest-path run of a small weighted graph."""

    def __init__(self, graph: CSRGraph, source="max-degree", technique: str = "h-bf", knobs: dict | None = None,
                 unit_weights: bool = False, **kwargs):
        from ..sssp import implementation, make_knobs, run_sssp

        check_size(graph)
        impl = implementation(technique)
        names = {s.name for s in impl.Knobs.specs()}
        forced = {k: v for k, v in CLASSROOM_KNOBS.items() if k in names}
        knob_set = make_knobs(impl.technique, {**impl.simulator_knobs, **(knobs or {}), **forced})
        self.graph = graph
        self.session = WatchedSession(graph)
        run = run_sssp(graph, source, impl.technique, knob_set, unit_weights=unit_weights, session=self.session)
        n = graph.num_vertices
        w = np.ones(graph.num_arcs) if unit_weights else np.asarray(graph.weights, np.float64)
        start = np.full(n, np.inf)
        start[run.source] = 0.0
        self.frames = [WeightedFrame(-1, start, np.array([run.source]), [])]
        for rec in run:
            self.frames.append(frame_after(rec.iteration, graph, w, self.frames[-1].dist,
                                           read_distances(self.session, n), rec))
        self.result = run.result
        self.session.close()
        final = self.result.as_float()
        if not np.array_equal(self.frames[-1].dist, final):
            raise RuntimeError("the distances read after the last step differ from the run's result: the classroom "
                               "cannot show this run's steps")
        self.source = run.source
        self.weights = w
        self.note = (f"{_esc(impl.name)} from vertex {_esc(graph.to_original(run.source))}; every step its own "
                     f"launch ({', '.join(f'{k}={v}' for k, v in forced.items())}) so its distances can be read.")
        self.state = StepThrough(len(self.frames))
        self._draw()
        self.step_button = W.Button(description="Step", icon="step-forward", tooltip="the next step")
        self.back_button = W.Button(description="Back", icon="step-backward", tooltip="the step before")
        self.play_button = W.Button(description="Play", icon="play", tooltip="one step per interval to the end")
        self.ticker = W.Play(interval=PLAY_INTERVAL_MS, min=0, max=max(len(self.frames) - 1, 0), value=0,
                             layout=W.Layout(display="none"))
        self.step_button.on_click(lambda _: self.step())
        self.back_button.on_click(lambda _: self.back())
        self.play_button.on_click(lambda _: self.play())
        self.ticker.observe(self._on_tick, names="value")
        self.caption = W.HTML()
        self.table = W.HTML()
        super().__init__([W.HTML(f"<b>Weighted classroom</b> <small>{self.note}</small>"),
                          W.HBox([self.back_button, self.step_button, self.play_button, self.ticker]),
                          self.caption, W.HBox([self.view, self.table])], **kwargs)
        self._render()

    # ------------------------------------------------------------------ moving
    def step(self) -> int:
        self.state.step()
        self._render()
        return self.state.position

    def back(self) -> int:
        self.state.back()
        self._render()
        return self.state.position

    def play(self) -> None:
        if self.state.play():
            self.ticker.value = self.state.position
            self._render()
            self.ticker.playing = True

    def _on_tick(self, change) -> None:
        try:
            if self.state.playing:
                self.state.goto(min(int(change["new"]), len(self.frames) - 1))
                if self.state.at_end:
                    self.state.stop()
                self._render()
        except Exception as err:  # a callback: never let it vanish silently
            log.exception("weighted classroom tick failed")
            self.caption.value = f"<span style='color:#b00020'>{_esc(err)}</span>"

    @property
    def frame(self) -> WeightedFrame:
        return self.frames[self.state.position]

    # ------------------------------------------------------------------ drawing
    def _draw(self) -> None:
        g = self.graph
        lay = drawing_layout(g, self.source)
        self.layout_xy = lay
        edges = drawn_edges(g)
        src = np.repeat(np.arange(g.num_vertices), g.degrees())
        least = {}
        for u, v, w in zip(src.tolist(), np.asarray(g.indices).tolist(), self.weights.tolist()):
            key = (u, v) if g.directed else (min(u, v), max(u, v))
            least[key] = min(least.get(key, np.inf), w)  # parallel arcs: the lightest is the one that counts
        self.edge_keys = edges
        xs = [[float(lay.x[u]), float(lay.x[v])] for u, v in edges]
        ys = [[float(lay.y[u]), float(lay.y[v])] for u, v in edges]
        self.edge_source = ColumnDataSource(name="weighted-edges", data={
            "xs": xs, "ys": ys, "color": [OTHER] * len(edges), "width": [1.0] * len(edges)})
        wtext = [f"{least[e]:g}" for e in edges]
        self.weight_source = ColumnDataSource({"x": [(a + b) / 2 for a, b in xs], "y": [(a + b) / 2 for a, b in ys],
                                               "text": wtext})
        self.node_source = ColumnDataSource(name="weighted-nodes", data={"x": lay.x.tolist(), "y": lay.y.tolist(),
                                             "color": [UNREACHED] * g.num_vertices,
                                             "line": ["#555"] * g.num_vertices,
                                             "label": [str(g.to_original(v)) for v in range(g.num_vertices)],
                                             "dist": ["∞"] * g.num_vertices})
        fig = figure(width=520, height=420, tools="pan,wheel_zoom,reset,save", x_range=(-0.08, 1.08),
                     y_range=(-0.1, 1.1), title="tentative distances: red = lowered this step")
        fig.axis.visible = False
        fig.grid.visible = False
        fig.multi_line("xs", "ys", source=self.edge_source, color="color", line_width="width")
        fig.add_layout(LabelSet(x="x", y="y", text="text", source=self.weight_source, text_font_size="9pt",
                                text_color="#333", background_fill_color="white", background_fill_alpha=0.8))
        fig.scatter("x", "y", source=self.node_source, size=22, fill_color="color", line_color="line",
                    line_width=2)
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.node_source, text_font_size="8pt",
                                text_align="center", text_baseline="middle"))
        fig.add_layout(LabelSet(x="x", y="y", text="dist", source=self.node_source, text_font_size="9pt",
                                text_color="#1f4e9c", y_offset=13, text_align="center", text_font_style="bold"))
        self.figure = fig
        self.view = LiveBokehModel(fig)

    def _render(self) -> None:
        f = self.frame
        g = self.graph
        improved = set(f.improved.tolist())
        tight = set(f.tight) | ({(v, u) for u, v in f.tight} if not g.directed else set())
        self.edge_source.data.update({
            "color": [TIGHT if e in tight else OTHER for e in self.edge_keys],
            "width": [3.5 if e in tight else 1.0 for e in self.edge_keys]})
        fin = np.isfinite(f.dist)
        text = [self._d(x) for x in f.dist]
        self.node_source.data.update({
            "color": [SOURCE if v == self.source else IMPROVED if v in improved else REACHED if fin[v] else UNREACHED
                      for v in range(g.num_vertices)],
            "line": ["#000" if v in improved else "#555" for v in range(g.num_vertices)],
            "dist": text})
        r = f.record
        if r is None:
            what = "set-up: the source at distance 0, every other vertex at ∞"
        else:
            bucket = "" if r.bucket is None else f", bucket {r.bucket}"
            what = (f"step {r.iteration} ({_esc(r.phase)}{bucket}): frontier in {r.frontier_in:,}, "
                    f"{r.relaxations:,} arcs relaxed, {r.improvements:,} lowered a distance; "
                    f"vertices lowered here: {len(improved)}; red arcs: into them, tight after the step "
                    "(d(u) + w = d(v))")
        self.caption.value = (f"<small>{what} &nbsp; [frame {self.state.position + 1} of {len(self.frames)}]"
                              "</small>")
        rows = "".join(
            f"<tr{LOWERED_ROW if v in improved else ''}><td>{_esc(g.to_original(v))}"
            f"</td><td>{text[v]}</td></tr>" for v in range(g.num_vertices))
        self.table.value = ("<div style='max-height:400px;overflow:auto;font-size:12px'><table>"
                            "<tr><th>vertex</th><th>tentative distance</th></tr>" + rows + "</table></div>")
        self.step_button.disabled = self.state.at_end
        self.back_button.disabled = self.state.at_start

    def _d(self, x) -> str:
        if not np.isfinite(x):
            return "∞"
        return f"{int(x)}" if self.result.dtype == "int64" else f"{x:.4g}"

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()
        refresh_views(self)  # drawn at the current step, not as the figure was built
        return super()._repr_mimebundle_(**kwargs)


def open_weighted(graph: CSRGraph | str, **kwargs) -> WeightedClassroom:
    """A WeightedClassroom on a graph object or a sample/generator spec."""
    if not isinstance(graph, CSRGraph):
        spec = str(graph)
        if spec.startswith("gen:"):
            from .cli_input import parse_generator

            kind, params = parse_generator(spec)
            graph = graphs.generate(kind, **params)
        else:
            graph = graphs.sample_graph(spec)
    return WeightedClassroom(graph, **kwargs)


def open_for_explorer(ex, user_errors: tuple):
    """The Explorer's Classroom button in shortest-paths mode: a WeightedClassroom on its graph,
    source, technique, knobs and unit weights, below its summary; bad input in its status line
    (returns None then)."""
    sp = ex.sssp
    try:
        g = ex.current_graph()
        if g.weights is None and not sp.unit_weights.value:
            raise ValueError(f"graph {g.name!r} has no weights: pick weights for the generator, or tick 'unit weights'")
        ex._set_status(f"classroom: running {sp.technique.value} on {g.name} step by step ...", "busy")
        room = WeightedClassroom(g, source=ex._source_value(), technique=sp.technique.value, knobs=sp.knob_values(),
                                 unit_weights=sp.unit_weights.value)
    except user_errors as err:
        ex._show_error(err)
        return None
    refresh_views(room)  # drawn at its first frame, not as it was built
    old, ex.classroom_box.children = ex.classroom_box.children, [room]
    for w in old:
        w.close()
    ex._set_status(f"classroom below: step through {room.result.technique} on {g.name}", "ok")
    return room
