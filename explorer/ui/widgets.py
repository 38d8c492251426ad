"""The notebook explorer: pick a graph, a source, a technique and knobs; watch the levels arrive.

    from explorer.ui.widgets import Explorer
    ex = Explorer(graph="bfs4k_fig2")        # display it: controls, live plots, summary
    result = ex.run(source=0)                # the same run as the Run button, from code
    ex = Explorer(client=cluster)            # the Tuning tab's sweeps over a GPUCluster or Client's workers

Every control is generated from a declaration (SAMPLE_GRAPHS, GENERATORS, Technique, each
technique's knobs), so nothing here restates a range or a default. Errors from bad input (KnobError, GraphError,
ValueError) show as one line in the status bar, never as a traceback. Plots stream the levels as
the engine yields them (LevelStream through a live.LevelFeed into a live.LiveBokehModel: each batch
reaches the browser before the run goes on, and a view drawn later, or after the page reloads,
shows every run so far). The problem switch turns it to shortest paths (sssp_view.py: the SSSP
techniques, their knobs, a row per iteration; the Classroom button then opens sssp_classroom.py's
weighted step-through). The technique and knob controls' behaviour is technique_panel.py's; the
technique starts at "auto" (explorer.auto): each run chooses its technique and knobs, says why beside
the drop-down, and its label names what ran. No kernel module is imported here.
"""
from __future__ import annotations

import html
import logging
import time
from typing import Any

import ipywidgets as W
from bokeh.layouts import column

from .. import api, backend, graphs
from ..auto import AUTO, is_auto
from ..backend import simulator_knobs_note
from .cli_input import parse_generator
from .layout import knob_widget, labelled, select_px, text_px
from ..graphs import CSRGraph
from ..graphs.weights import WEIGHT_KINDS, WEIGHT_PARAMS
from .plots import LevelStream
from .live import LevelFeed, LiveBokehModel, load_bokehjs, refresh_views
from .sssp_view import BFS, SHORTEST_PATHS, ShortestPathsPanel
from ..reference import check_result
from .report import graph_stats_html, summary_table_html
from ..engine import Session
from ..stats import RunResult
from .tables import run_label
from .technique_panel import KNOB_RESET_TIP, TechniquePanel, ran_label, technique_value
from .tools import USER_ERRORS, ToolTabs
from ..techniques import (Technique, implementation, implemented_techniques, knobs_of, make_knobs,
                         missing_techniques)
from ..warmup import compile_notices, load_for_run

log = logging.getLogger("explorer")


SOURCE_MODES = ("max-degree", "random", "vertex id")
DEFAULT_GRAPH = "bfs4k_fig2"
PLOT_WIDTH = 450  # two columns + toolbar fit JupyterLab's output area (~970 px on a 1400 px window)
#: Summary columns the explorer leaves out: the run label names graph and technique, and the
#: backend line above names the device.
SUMMARY_OMIT = ("graph", "technique", "device")
_WIDE = W.Layout(width="340px")
_LABEL = {"description_width": "130px"}
_LABEL_WIDTH = "130px"  # the same, for a control behind `labelled`
#: Shown while the explorer works: a Font Awesome spinner (ipywidgets ships the font, as for the
#: buttons' icons) beside words that say what is happening; no emoji font needed.
BUSY_ICON = "<i class='fa fa-spinner fa-spin' aria-hidden='true'></i> "


def _esc(x) -> str:
    return html.escape(str(x))


#: Generator parameters the Explorer starts with under the simulator, which runs every GPU thread as a
#: Python thread: graphs of a few thousand arcs (a BFS in seconds, within a sweep's limit), where the
#: generators' defaults, the papers' sizes, exceed what it takes. One entry per generator.
SIMULATOR_GENERATOR_PARAMS = {
    "kronecker": {"scale": 8, "edge_factor": 8},
    "uniform_random": {"n": 500, "m": 1500},
    "grid2d": {"rows": 20, "cols": 20},
    "grid3d": {"nx": 8, "ny": 8, "nz": 8},
    "luo_scale_free": {"n": 500, "hub_fraction": 0.004, "hub_degree": 60},
    "watts_strogatz": {"n": 500, "k": 4},
}


def generator_start_params(kind: str, simulator: bool) -> dict:
    """The parameters a generator's controls start with: its declared defaults, shrunk to
    SIMULATOR_GENERATOR_PARAMS under the simulator."""
    params = dict(graphs.GENERATORS[kind].params)
    if simulator:
        params.update(SIMULATOR_GENERATOR_PARAMS.get(kind, {}))
    return params


def on_simulator() -> bool:
    """Whether runs go to the simulator: the backend chosen, or, with no GPU, the one offered."""
    try:
        return backend.current().is_simulator
    except backend.NoGPUError:
        return True


def param_widget(name: str, default: Any, tooltip: str) -> W.ValueWidget:
    """A control for one generator parameter, typed like its default."""
    common = dict(description=name, tooltip=tooltip, style=_LABEL, layout=_WIDE)
    if isinstance(default, bool):
        return W.Checkbox(value=default, indent=False, description=name, tooltip=tooltip)
    if isinstance(default, int):
        return W.IntText(value=default, **common)
    if isinstance(default, float):
        return W.FloatText(value=default, **common)
    return W.Text(value="" if default is None else str(default), **common)


class Explorer(TechniquePanel, W.VBox):
    """Controls, status, live plots and summary of BFS (or shortest-path) runs; keeps every run so
    they overlay."""

    def __init__(self, graph: str | CSRGraph = DEFAULT_GRAPH, source: str | int = "max-degree",
                 technique: str | None = None, knobs: dict | None = None, instrument: bool = True,
                 problem: str = BFS, client=None, **kwargs):
        if client is not None:  # the Tuning tab's sweeps run over its workers (explorer.scale_out)
            from ..scale_out import check_client

            check_client(client)
        self.client = client
        self.history: list[tuple[str, RunResult]] = []
        self._graph_cache: dict[tuple, CSRGraph] = {}
        self._stats_cache: dict[str, dict] = {}
        self._graph_object: CSRGraph | None = None  # a CSRGraph handed to run()/__init__ directly
        self._running = False
        self._last_validation = None  # the last run's reference.CheckReport
        self._auto_reason: tuple[str, str] | None = None  # (graph, why) of the last run auto chose
        self._session = None  # engine.Session of the graph last run: its device arrays stay for the next run
        # The last §7 advice: (the graph it is for, its name, {knob: (value, why)}). It is shown
        # only while that graph is picked, and only for the knobs that still have its values.
        self._advice: tuple | None = None
        self.knob_advice = W.HTML()
        # BFS or shortest paths: the technique, knobs, plots and summary of the one chosen show.
        self.problem = W.ToggleButtons(options=[BFS, SHORTEST_PATHS],
                                       style={"button_width": f"{text_px(SHORTEST_PATHS) + 24}px"},
                                       tooltips=["breadth-first search: levels from the source",
                                                 "single-source shortest paths over the arcs' weights"])
        self.sssp = ShortestPathsPanel(self, fig_width=PLOT_WIDTH)

        # ---- graph picker: a sample, a file, or a generator with its parameters
        self.graph_mode = W.ToggleButtons(options=[("sample", "sample"), ("file", "file"),
                                                   ("generator", "generator")],
                                          tooltips=["a graph from sample_graphs/", "a graph file",
                                                    "a seeded generator of a paper's graph family"],
                                          style={"button_width": "90px"})
        samples = [(f"{k}: {v.family}", k) for k, v in graphs.SAMPLE_GRAPHS.items()]
        self.sample = W.Dropdown(
            options=samples, description="sample", layout=W.Layout(width=f"{select_px(samples, 330)}px"),
            tooltip="a small real graph from sample_graphs/ (sources and licences in its README.md)")
        self.file_path = W.Text(description="file", placeholder="edges.txt / matrix.mtx / graph.metis (.gz ok)",
                                tooltip="a graph file: SNAP edge list, Matrix Market or METIS, optionally .gz",
                                style=_LABEL, layout=W.Layout(width="460px"))
        self.file_undirected = W.Checkbox(value=False, description="undirected (each line both ways)",
                                          indent=False, tooltip="read each edge line as two arcs, u -> v and v -> u")
        self.generator = W.Dropdown(options=list(graphs.GENERATORS), description="generator",
                                    layout=W.Layout(width="210px"),
                                    tooltip="a seeded generator of a graph family from the papers; "
                                            "its parameters follow")
        self.generator_doc = W.HTML()
        self.gen_params = W.VBox()
        self.graph_stack = W.Stack([
            labelled(self.sample, _LABEL_WIDTH),
            W.HBox([self.file_path, self.file_undirected]),
            W.VBox([labelled(self.generator, _LABEL_WIDTH), self.generator_doc, self.gen_params]),
        ], selected_index=0)
        self.graph_mode.observe(self._on_graph_mode, names="value")
        self.generator.observe(lambda _: self._build_gen_params(keep=False), names="value")
        self._build_gen_params()

        # ---- source
        self.source_mode = W.Dropdown(options=SOURCE_MODES, description="source", layout=W.Layout(width="210px"),
                                      tooltip="BFS start: the highest-degree vertex, a random vertex "
                                              "(degree >= 1, seeded) or a vertex id")
        self.vertex = W.IntText(value=0, description="vertex id", style=_LABEL, layout=W.Layout(width="230px"),
                                tooltip="the source vertex, by the graph's own id (as in its file)")
        self.seed = W.IntText(value=0, description="seed", style={"description_width": "40px"},
                              layout=W.Layout(width="140px"), tooltip="seed of the random source")
        self.source_mode.observe(lambda _: self._sync_source_controls(), names="value")

        # ---- technique: auto first, then the implemented ones; the missing ones are listed, not hidden
        impl = implemented_techniques()
        self.technique = W.Dropdown(options=[AUTO, *(t.value for t in impl)], description="technique",
                                    layout=W.Layout(width="210px"),
                                    tooltip="the BFS technique to run: auto (chosen for the graph and the device) "
                                            "or an implemented one; what it does is written below")
        self.technique_doc = W.HTML()
        missing = missing_techniques()
        note = ("Not implemented yet: " + ", ".join(
            f"<span title='{_esc(t.doc)}' style='text-decoration: underline dotted'>{_esc(t.value)}</span>"
            for t in missing)) if missing else ""
        self.missing_note = W.HTML(f"<small style='color:#666'>{note}</small>")

        # ---- knobs: each technique's, generated from its declaration; the panel shows the chosen one's
        self.knob_widgets_of = {t.value: {s.name: knob_widget(s) for s in knobs_of(t).specs()} for t in impl}
        self.knob_reset = W.Button(description="defaults", layout=W.Layout(width="90px"), tooltip=KNOB_RESET_TIP)
        self.knob_reset.on_click(lambda _: self.reset_knobs())
        self.knob_sim_note = W.HTML(layout=W.Layout(flex="1 1 0%"))  # wraps beside the button
        self.knob_advice_button = W.Button(description="§7 advice", layout=W.Layout(width="100px"),
                                           tooltip="set K1..K7 by BFS-4K §7's rules of thumb for this graph")
        self.knob_advice_button.on_click(lambda _: self.apply_recommended_knobs())
        # auto's page last, so a technique's page sits at its index in knob_widgets_of
        self.knob_pages = W.Stack([*(self._knob_page(t.value) for t in impl), W.HTML(
            "<small>auto sets the knobs of the technique it chooses for each run (the summary shows them); "
            "pick a technique to set knobs.</small>")])
        for w in [*(w for ws in self.knob_widgets_of.values() for w in ws.values()), self.graph_mode,
                  self.sample, self.file_path, self.file_undirected, self.generator]:
            w.observe(self._show_advice, names="value")
        self.knobs_panel = W.Accordion([W.VBox([
            W.HTML("<small>Hover a knob for its meaning, paper section and range.</small>"),
            self.knob_pages, W.HBox([self.knob_reset, self.knob_sim_note])])])
        self.knobs_panel.selected_index = None
        self.technique.observe(lambda _: self._show_technique(), names="value")
        self._show_technique()

        # ---- actions and status
        self.instrument = W.Checkbox(value=True, description="instrument", indent=False,
                                     tooltip="count edges examined and duplicates per level (slower)",
                                     layout=W.Layout(width="110px"))
        self.run_button = W.Button(description="Run", button_style="primary", icon="play",
                                   tooltip="run the BFS; levels stream into the plots")
        self.clear_button = W.Button(description="Clear runs", icon="trash",
                                     tooltip="forget the runs shown in the plots and the summary")
        # Its own width and no shrinking: beside a long no-GPU message a flex box would squeeze
        # the label to "Use the CUDA si...".
        self.simulator_button = W.Button(description="Use the CUDA simulator", button_style="warning",
                                         layout=W.Layout(display="none", width="auto", flex="0 0 auto"),
                                         tooltip="run the kernels on Numba's CUDA simulator (CPU, small graphs)")
        self.backend_line = W.HTML()
        self.status = W.HTML()
        self.run_button.on_click(self._on_run_clicked)
        self.clear_button.on_click(lambda _: self.clear())
        # The classroom: step through this graph's BFS level by level, below the plots.
        self.classroom_button = W.Button(description="Classroom", icon="graduation-cap",
                                         tooltip="step through a BFS of this (small) graph level by level")
        self.classroom_button.on_click(lambda _: self.open_classroom())
        self.classroom_box = W.Box()
        self.simulator_button.on_click(self._on_use_simulator)

        # ---- output: live plots and summary
        self.plots_box = W.Box()
        self.summary = W.HTML()
        self._new_stream()

        self.technique_label = labelled(self.technique, _LABEL_WIDTH)
        self.technique_row = W.HBox()
        self.problem_box = W.VBox()  # the chosen problem's technique, its description and knobs
        self._show_problem()
        controls = W.VBox([
            W.HBox([W.Label("problem", layout=W.Layout(width="60px")), self.problem]),
            W.HBox([W.Label("graph", layout=W.Layout(width="60px")), self.graph_mode]),
            self.graph_stack,
            W.HBox([labelled(self.source_mode, _LABEL_WIDTH), self.vertex, self.seed]),
            self.problem_box,
            W.HBox([self.backend_line, self.simulator_button]),
            self.status,
        ])
        # Tuning, Comparison, Duplicates and Export: a tab each, built when first opened.
        self.tools = ToolTabs(self)
        self.output_box = W.VBox([self.plots_box, self.summary])
        super().__init__([controls, self.output_box, self.classroom_box, self.tools], **kwargs)
        self.problem.observe(lambda _: self._show_problem(), names="value")
        self.problem.value = SHORTEST_PATHS if str(problem).lower() in ("shortest paths", "sssp") else BFS

        # ---- initial values
        self.set_graph(graph)
        self.set_source(source)
        if technique is not None:
            self.technique.value = technique_value(technique)
        self.instrument.value = bool(instrument)
        self._check_backend(preset_knobs=knobs is None)
        if knobs:
            self.set_knobs(knobs)
        self._sync_source_controls()
        self._render_summary()

    def _show_problem(self) -> None:
        """The chosen problem's technique row, knobs, plots and summary; a generator offers its
        weight parameters for shortest paths."""
        buttons = [self.run_button, self.clear_button, self.classroom_button]
        if self.problem.value == SHORTEST_PATHS:
            sp = self.sssp
            self.technique_row.children = [sp.technique_label, sp.unit_weights, *buttons]
            self.problem_box.children = [self.technique_row, sp.technique_doc, sp.knobs_panel]
            self.output_box.children = [sp.plots_box, sp.summary]
            self.run_button.tooltip = "run the shortest-path technique; iterations stream into the plots"
            self.classroom_button.tooltip = "step through the shortest paths of this (small) weighted graph"
        else:
            self.technique_row.children = [self.technique_label, self.instrument, *buttons]
            self.problem_box.children = [self.technique_row, self.technique_doc, self.missing_note, self.knobs_panel]
            if hasattr(self, "output_box"):
                self.output_box.children = [self.plots_box, self.summary]
            self.run_button.tooltip = "run the BFS; levels stream into the plots"
            self.classroom_button.tooltip = "step through a BFS of this (small) graph level by level"
        if hasattr(self, "output_box"):
            self._build_gen_params()
            refresh_views(self.output_box)

    @property
    def shortest_paths(self) -> bool:
        return self.problem.value == SHORTEST_PATHS

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()  # published just before the widget, so the plot view finds BokehJS
        refresh_views(self)  # the runs so far, also those made from code before this display
        return super()._repr_mimebundle_(**kwargs)

    # ------------------------------------------------------------------ setting controls

    def set_graph(self, graph: str | CSRGraph) -> None:
        """A sample name, a file path, 'gen:KIND:param=value,...' or a CSRGraph object."""
        self._graph_object = None
        if isinstance(graph, CSRGraph):
            self._graph_object = graph
            self._show_advice()  # the picker's observers do this for the other kinds
            self._set_status(f"graph object {graph.name!r} given from code (the picker is not used)")
            return
        spec = str(graph)
        if spec.startswith("gen:"):
            kind, params = parse_generator(spec)
            self.graph_mode.value = "generator"
            self.generator.value = kind
            declared = graphs.GENERATORS[kind].params  # a spec means what it means elsewhere (the CLI)
            for w in self.gen_params.children:
                w.value = params.get(w.description, declared[w.description])
        elif spec in graphs.SAMPLE_GRAPHS:
            self.graph_mode.value = "sample"
            self.sample.value = spec
        else:
            self.graph_mode.value = "file"
            self.file_path.value = spec

    def set_source(self, source: str | int) -> None:
        if isinstance(source, str) and source in SOURCE_MODES[:2]:
            self.source_mode.value = source
        else:
            try:
                vid = int(source)
            except (TypeError, ValueError):
                raise ValueError(f"source {source!r} is invalid: give a vertex id, 'max-degree' or 'random'") from None
            self.source_mode.value = "vertex id"
            self.vertex.value = vid
        self._sync_source_controls()

    def simulator_knobs(self, technique: str | None = None) -> dict:
        """The knobs `technique` (the chosen one) runs with under the simulator; {} on a GPU and for
        auto, which applies them itself."""
        technique = technique or self.technique.value
        if is_auto(technique) or not on_simulator():
            return {}
        return dict(implementation(technique).simulator_knobs)

    def _graph_identity(self):
        """What the picker (or the graph object given from code) names now."""
        return self._graph_object if self._graph_object is not None else self._graph_key()

    def _on_graph_mode(self, change) -> None:
        self.graph_stack.selected_index = ["sample", "file", "generator"].index(change["new"])

    def _build_gen_params(self, keep: bool = True) -> None:
        """The generator's controls; `keep`: values already set (same generator) stay."""
        kind = self.generator.value
        spec = graphs.GENERATORS[kind]
        sim = on_simulator()
        # A BFS reads no weights: the controls are the structure's parameters; shortest paths add
        # the weights', drawn as integers unless the user picks otherwise.
        weighted = self.shortest_paths
        params = {k: v for k, v in generator_start_params(kind, sim).items() if weighted or k not in WEIGHT_PARAMS}
        if weighted:
            params["weights"] = "integer"
        if keep:
            params.update({w.description: w.value for w in self.gen_params.children if w.description in params})
        # The declared defaults are the papers' sizes, beyond what the simulator runs: start small, say so.
        papers = ", ".join(f"{k}={v}" for k, v in spec.params.items() if params.get(k, v) != v)
        limit = (f" Under the CUDA simulator (graphs up to {backend.SIMULATOR_MAX_ARCS:,} arcs, every GPU thread a "
                 f"Python thread) the parameters start small; the papers' sizes are {papers}.") if papers else ""
        self.generator_doc.value = f"<small style='color:#555'>{_esc(spec.description)}.{_esc(limit)}</small>"
        self.gen_params.children = [
            W.ToggleButtons(options=WEIGHT_KINDS, value=v, description=k,
                            style={"description_width": _LABEL_WIDTH,
                                   "button_width": f"{max(map(text_px, WEIGHT_KINDS)) + 30}px"},
                            tooltips=["no weights (shortest paths then need 'unit weights')",
                                      "reals drawn uniformly from [weight_low, weight_high), seeded by weight_seed",
                                      "integers drawn from weight_low..weight_high, seeded by weight_seed"])
            if k == "weights" else param_widget(k, v, spec.description) for k, v in params.items()]
        for w in self.gen_params.children:
            w.observe(self._show_advice, names="value")

    def _sync_source_controls(self) -> None:
        self.vertex.layout.display = "" if self.source_mode.value == "vertex id" else "none"
        self.seed.layout.display = "" if self.source_mode.value == "random" else "none"

    def _show_knob_sim_note(self) -> None:
        sim = self.simulator_knobs()
        self.knob_sim_note.value = (
            "<small style='color:#a15c00'>Simulator: 'defaults' and the presets keep its knobs ("
            + _esc(", ".join(f"{k}={v}" for k, v in sim.items())) + "; 32-thread blocks, so a run takes seconds)."
            "</small>" if sim else "")

    # ------------------------------------------------------------------ backend

    def _check_backend(self, preset_knobs: bool = True) -> bool:
        """Select the backend ("auto"); without a GPU show why and offer the simulator."""
        try:
            info = backend.select("auto")
        except backend.NoGPUError as err:
            self.backend_line.value = f"<span style='color:#a15c00'>⚠ {_esc(err)}</span>"
            self.simulator_button.layout.display = ""
            self.run_button.disabled = True
            return False
        self.simulator_button.layout.display = "none"
        self.run_button.disabled = self._running  # a run in progress keeps it disabled
        self.backend_line.value = f"<small><b>backend:</b> {_esc(info.describe())}</small>"
        self._show_knob_sim_note()
        if info.is_simulator and preset_knobs:
            applied = {}
            for tech, widgets in self.knob_widgets_of.items():
                for name, value in implementation(tech).simulator_knobs.items():
                    widgets[name].value = applied[name] = value
            applied.update(self.sssp.preset_simulator_knobs())
            if applied:
                self._set_status(simulator_knobs_note(applied) + " (change them in Knobs)")
        return True

    def _on_use_simulator(self, _=None) -> None:
        try:
            backend.select("simulator")
        except backend.BackendError as err:
            self._show_error(err)
            return
        self._check_backend()

    # ------------------------------------------------------------------ status

    def _set_status(self, text: str, kind: str = "info") -> None:
        color = {"info": "#333", "busy": "#1f5fa8", "ok": "#11772b", "error": "#b00020"}[kind]
        icon = {"info": "", "busy": BUSY_ICON, "ok": "✓ ", "error": "✗ "}[kind]
        self.status.value = f"<span style='color:{color}'>{icon}{_esc(text)}</span>"

    def _show_error(self, err: BaseException) -> None:
        self._set_status(f"{type(err).__name__}: {err}", "error")

    # ------------------------------------------------------------------ graphs

    def _graph_key(self) -> tuple:
        mode = self.graph_mode.value
        if mode == "sample":
            return ("sample", self.sample.value)
        if mode == "file":
            return ("file", self.file_path.value.strip(), self.file_undirected.value)
        return ("generator", self.generator.value,
                tuple((w.description, w.value) for w in self.gen_params.children))

    def current_graph(self) -> CSRGraph:
        """The graph the picker describes (loaded once, then cached)."""
        if self._graph_object is not None:
            return self._graph_object
        key = self._graph_key()
        g = self._graph_cache.get(key)
        if g is None:
            self._set_status(f"loading graph ({key[0]}: {key[1] or '?'}) ...", "busy")
            if key[0] == "sample":
                g = graphs.sample_graph(key[1])
            elif key[0] == "file":
                if not key[1]:
                    raise graphs.GraphError("no graph file given: type a path in the file box")
                g = graphs.load_graph(key[1], **({"directed": False} if key[2] else {}))
            else:
                g = graphs.generate(key[1], max_arcs=self._arc_limit(), **dict(key[2]))
            self._graph_cache[key] = g
        return g

    @staticmethod
    def _arc_limit() -> int | None:
        """The simulator's size limit, so a generator refuses before building what it cannot run."""
        info = backend.selected()
        return info.max_arcs if info is not None else None

    def _graph_stats(self, g: CSRGraph) -> dict:
        if g.name not in self._stats_cache:
            self._stats_cache[g.name] = graphs.graph_stats(g)
        return self._stats_cache[g.name]

    def _source_value(self):
        mode = self.source_mode.value
        return self.vertex.value if mode == "vertex id" else mode

    # ------------------------------------------------------------------ running

    def run(self, graph: str | CSRGraph | None = None, source: str | int | None = None,
            technique: str | None = None, knobs: dict | None = None, instrument: bool | None = None,
            seed: int | None = None, unit_weights: bool | None = None):
        """Set the given controls, then run exactly as the Run button does; returns the RunResult
        (shortest paths: the SSSPResult; `unit_weights` applies there).

        Bad input raises (and shows in the status line); from the button it only shows.
        """
        try:
            if graph is not None:
                self.set_graph(graph)
            if source is not None:
                self.set_source(source)
            if self.shortest_paths:
                from ..sssp import SSSPTechnique

                if technique is not None:
                    self.sssp.technique.value = SSSPTechnique.parse(technique).value
                if knobs:
                    self.sssp.set_knobs(knobs)
                if unit_weights is not None:
                    self.sssp.unit_weights.value = bool(unit_weights)
            elif technique is not None:
                self.technique.value = technique_value(technique)
            if knobs and not self.shortest_paths:
                self.set_knobs(knobs)
            if instrument is not None:
                self.instrument.value = bool(instrument)
            if seed is not None:
                self.seed.value = int(seed)
        except USER_ERRORS as err:
            self._show_error(err)
            raise
        return self._execute()

    def _on_run_clicked(self, _button) -> None:
        try:
            self._execute()
        except USER_ERRORS:
            pass  # already in the status line
        except Exception as err:  # a bug, not bad input: one line here, the traceback in the log
            log.exception("run failed")
            self._set_status(f"internal error ({type(err).__name__}: {err}); see the log for the traceback",
                             "error")

    def _execute(self) -> RunResult:
        if self._running:
            raise RuntimeError("a run is in progress")
        self._running = True
        # Nothing that would change the runs while one streams: what is pressed meanwhile would
        # wait in the kernel's queue and act on the runs after this one.
        self.run_button.disabled = self.clear_button.disabled = self.classroom_button.disabled = True
        try:
            return self._execute_inner()
        except USER_ERRORS as err:
            self._show_error(err)
            raise
        finally:
            self._running = False
            self.clear_button.disabled = self.classroom_button.disabled = False
            self.run_button.disabled = not self._check_backend(preset_knobs=False)

    def _execute_inner(self):
        if self.shortest_paths:
            if not self._check_backend(preset_knobs=False):
                raise backend.NoGPUError("no CUDA GPU: read the note above and click 'Use the CUDA simulator'")
            return self.sssp.execute()
        # auto chooses its technique and knobs in run_bfs, from the loaded graph: it takes none here
        auto = is_auto(self.technique.value)
        tech = AUTO if auto else Technique.parse(self.technique.value)
        knobs = None if auto else make_knobs(tech, self.knob_values())
        if not self._check_backend(preset_knobs=False):
            raise backend.NoGPUError("no CUDA GPU: read the note above and click 'Use the CUDA simulator'")
        busy = lambda m: self._set_status(m, "busy")  # noqa: E731
        if auto:  # its kernels are known only once it has chosen, on the loaded graph: none compile ahead
            with compile_notices(busy):
                g = self.current_graph()
        else:  # says when the loaders compile; on a GPU the run's kernels compile meanwhile in helper processes
            g = load_for_run(self.current_graph, tech, knobs, self.instrument.value, busy)
        if self._session is None or self._session.graph is not g:
            if self._session is not None:
                self._session.close()
            self._session = Session(g)
        run = api.run_bfs(g, self._source_value(), tech, knobs, instrument=self.instrument.value,
                          seed=self.seed.value, session=self._session, on_status=busy)
        # An auto run's label names what ran, so that overlaid runs of auto stay apart.
        label = run_label(len(self.history) + 1, ran_label(run), g.name)
        if run.choice is not None:
            self._auto_reason = (g.name, run.choice.reason())
            self._show_technique()
        self._set_status(f"running {label} from vertex {g.to_original(run.source)} ...", "busy")
        plotting = 0.0  # seconds spent here between levels, which the engine's clock leaves out
        # The levels reach the plots as the engine yields them (in batches when they come faster
        # than the feed's interval), the status line with them.
        feed = LevelFeed(self.stream, label, self.plot_view, on_batch=lambda lv: self._set_status(
            f"{label}: level {lv.level} done, frontier {lv.frontier_in:,} -> {lv.frontier_out:,}", "busy"))
        for lv in run:
            t = time.perf_counter()
            feed.add(lv)
            plotting += time.perf_counter() - t
        t = time.perf_counter()
        feed.close()
        plotting += time.perf_counter() - t
        result = run.result
        result.caller_wall_ms = result.elapsed_ms + plotting * 1e3  # the BFS wall time with the plotting
        self._set_status(f"{label}: validating against the CPU reference BFS ...", "busy")
        report = check_result(g, result)
        result.validation = "ok" if report.ok else report.rule
        self.history.append((label, result))
        self._last_validation = report
        self._render_summary()
        if result.validation == "ok":
            self._set_status(f"{label}: {result.num_levels} levels, {result.reached:,} vertices reached; "
                             "valid BFS (Graph500 rules, distances equal the CPU reference)", "ok")
        else:
            self._set_status(f"{label}: INVALID result: [{report.rule}] {report.message}", "error")
        return result

    # ------------------------------------------------------------------ output

    def _new_stream(self) -> None:
        self.stream = LevelStream(fig_width=PLOT_WIDTH)
        self.plot_view = LiveBokehModel(column(self.stream.layout(), self.stream.level_table()))
        self.plots_box.children = [self.plot_view]

    def open_classroom(self):
        """The Classroom on the picked graph, source, technique and knobs, run to level 0, below the
        summary; a graph too large to draw is refused in the status line. Returns it (or None)."""
        from .classroom import Classroom

        if self.shortest_paths:
            from .sssp_classroom import open_for_explorer

            return open_for_explorer(self, USER_ERRORS)
        try:
            tech, values, chosen = self.technique.value, self.knob_values(), ""
            if is_auto(tech):  # the technique auto chooses for this graph (nothing runs until iterated)
                choice = api.run_bfs(self.current_graph(), self._source_value(), AUTO, seed=self.seed.value).choice
                tech, values, chosen = choice.technique, choice.knobs, " (auto's choice)"
            defaults = knobs_of(tech).defaults()
            room = Classroom(graph=self.current_graph(), source=self._source_value(), technique=tech,
                             knobs={k: v for k, v in values.items() if v != defaults[k]})
            room.run()
        except USER_ERRORS as err:
            self._show_error(err)
            return None
        refresh_views(room)  # drawn at its run's level 0, not as it was built
        old, self.classroom_box.children = self.classroom_box.children, [room]
        for w in old:
            w.close()
        self._set_status(f"classroom below: step through {room.result.technique}{chosen} on {room.graph.name}", "ok")
        return room

    def clear(self) -> None:
        """Forget every run: empty plots and summary (of the problem shown)."""
        if self.shortest_paths:
            self.sssp.clear()
            self._set_status("shortest-path runs cleared")
            return
        old = self.plot_view
        self.history.clear()
        self._auto_reason = None
        self._show_technique()
        self._new_stream()
        old.close()
        self._render_summary()
        self._set_status("runs cleared")

    def _render_summary(self) -> None:
        if not self.history:
            self.summary.value = "<p><i>No runs yet: press Run.</i></p>"
            return
        colors = {label: self.stream.color(label) for label, _ in self.history if label in self.stream.sources}
        names = list(dict.fromkeys(r.graph for _, r in self.history))
        stats = {n: self._stats_cache.get(n) or self._graph_stats_by_name(n) for n in names}
        self.summary.value = (
            "<style>.bfs4k-sum table{border-collapse:collapse;font-size:12px}"
            ".bfs4k-sum th,.bfs4k-sum td{border:1px solid #ddd;padding:2px 7px;line-height:1.3}"
            # A table wider than the output scrolls sideways: its last columns (the knobs) stay reachable.
            # (The grid's minmax(0, 1fr) column keeps the table's width from widening the Explorer.)
            ".bfs4k-sum{display:grid;grid-template-columns:minmax(0,1fr)} .bfs4k-sum .wide{overflow-x:auto}"
            ".bfs4k-sum td.label{white-space:nowrap}"
            ".bfs4k-sum th{background:#f4f4f4} .bfs4k-sum td.num{text-align:right}"
            ".bfs4k-sum td.ok{color:#11772b;font-weight:600} .bfs4k-sum td.bad{color:#b00020;font-weight:600}"
            ".bfs4k-sum .swatch{display:inline-block;width:10px;height:10px;margin-right:5px}</style>"
            "<div class='bfs4k-sum'><h4>Runs</h4><div class='wide'>"
            + summary_table_html(self.history, colors, omit=SUMMARY_OMIT) + "</div>"
            + self._validation_html()
            + "<h4>Graph (BFS-4K Table 1)</h4>" + graph_stats_html({n: s for n, s in stats.items() if s})
            + "</div>")

    def _validation_html(self) -> str:
        if self._last_validation is None:
            return ""
        report = self._last_validation
        if report.ok:
            text = f"✓ {report.message}"
            color = "#11772b"
        else:
            text = f"✗ [{report.rule}] {report.message}"
            color = "#b00020"
        return f"<p style='color:{color};font-size:12px'>Last run's validation: {_esc(text)}</p>"

    def _graph_stats_by_name(self, name: str) -> dict | None:
        for g in [*self._graph_cache.values(), self._graph_object]:
            if g is not None and g.name == name:
                return self._graph_stats(g)
        return None

    @property
    def results(self) -> list[RunResult]:
        return [r for _, r in self.history]

    def write_report(self, path="bfs4k-report.html"):
        """The runs so far as a self-contained HTML report."""
        from .report import write_report

        names = list(dict.fromkeys(r.graph for _, r in self.history))
        stats = {n: self._graph_stats_by_name(n) for n in names}
        return write_report(self.history, path, graph_stats={n: s for n, s in stats.items() if s})
