"""The Explorer's tool tabs: Tuning, Comparison, Duplicates and Export, each a panel
of its own module built the first time its tab opens (Tuning's at once: it is the tab shown
first), or by `tabs.panel(name)` from code, working
on what the Explorer has picked: graph, source, technique, knobs, and its runs for the export.
Each problem (BFS, shortest paths) has its own panels: the tabs show those of the problem
chosen (sssp_tools.py holds the shortest-path Comparison and Duplicates, sssp_report.py its Export; Tuning is one
panel class for both), and a panel reads the Explorer through `Picks`, its problem's controls.

    ex = Explorer(graph="bfs4k_fig2")
    ex.tools.panel("tuning").run_sweep(...)     # what the panel's button does, from code
"""
from __future__ import annotations

import html
import threading
from typing import Callable

import ipywidgets as W

from .. import backend
from ..auto import AUTO, TAKES_NO_KNOBS, is_auto
from ..knobs import KnobError
from .sssp_view import SHORTEST_PATHS

#: Input problems the status line explains in one line (KnobError and GraphError are ValueErrors;
#: TechniqueNotImplemented is a NotImplementedError; BackendError covers the simulator size limit).
USER_ERRORS = (ValueError, NotImplementedError, backend.BackendError, OSError)

#: Tab title -> (module, class) of its panel, by problem; each class takes the Explorer and
#: the problem's Picks.
PANELS = {
    "Tuning": ("sweep_panel", "SweepPanel"),
    "Comparison": ("compare", "ComparePanel"),
    "Duplicates": ("duplicates_panel", "DuplicatesPanel"),
    "Export": ("export", "ExportPanel"),
}
SSSP_PANELS = {
    "Tuning": ("sweep_panel", "SweepPanel"),
    "Comparison": ("sssp_tools", "SSSPComparePanel"),
    "Duplicates": ("sssp_tools", "SSSPDuplicatesPanel"),
    "Export": ("sssp_report", "SSSPExportPanel"),
}
_KEYS = {"tuning": "Tuning", "comparison": "Comparison", "compare": "Comparison", "duplicates": "Duplicates",
         "export": "Export"}


class ToolTabs(W.Tab):
    """One tab per panel; a panel is built when its tab is first selected. The first tab's is
    built at once and shown: the browser shows the first tab even when none is selected, and a
    click on it then changes nothing, so a panel built on selection would never show. The tabs
    hold the panels of the Explorer's problem; switching it swaps them whole (each problem's
    panels keep their own runs), so nothing of one problem shows in the other's."""

    def __init__(self, explorer):
        self.explorer = explorer
        self._panels: dict = {}  # (problem, title) -> panel
        super().__init__([W.VBox() for _ in PANELS], titles=tuple(PANELS), selected_index=0)
        self.panel(next(iter(PANELS)))
        self.observe(self._on_select, names="selected_index")
        explorer.problem.observe(lambda _: self._show_problem(), names="value")

    @property
    def problem(self) -> str:
        return self.explorer.problem.value

    def panel(self, name: str):
        """The panel of tab `name` ('tuning', 'comparison', 'duplicates', 'export') of the
        Explorer's problem, built on first use."""
        title = _KEYS.get(name.lower())
        if title is None:
            raise ValueError(f"no tool tab {name!r}; tabs: {', '.join(k for k in _KEYS if k != 'compare')}")
        key = (self.problem, title)
        if key not in self._panels:
            import importlib

            module, cls = (SSSP_PANELS if self.problem == SHORTEST_PATHS else PANELS)[title]
            picks = Picks(self.explorer, self.problem)
            panel = getattr(importlib.import_module(f"{__package__}.{module}"), cls)(self.explorer, picks)
            name_the_untitled(panel)
            if hasattr(panel, "apply_button"):  # what a panel sets in the Explorer is said there too
                panel.apply_button.on_click(lambda _: self._confirm_applied(panel))
            self._panels[key] = panel
            self.children[list(PANELS).index(title)].children = [panel]
        return self._panels[key]

    def built(self, problem: str | None = None) -> dict:
        """The panels built so far of `problem` (the Explorer's), by tab title."""
        problem = problem or self.problem
        return {title: p for (prob, title), p in self._panels.items() if prob == problem}

    def _show_problem(self) -> None:
        """The tabs show the chosen problem's panels (the selected one built now)."""
        for i, title in enumerate(PANELS):
            panel = self._panels.get((self.problem, title))
            self.children[i].children = [panel] if panel is not None else []
        if self.selected_index is not None:
            self.panel(list(PANELS)[self.selected_index])

    def _confirm_applied(self, panel) -> None:
        """After a panel's Apply: the Explorer's status line (beside its Run button) says what it
        now uses, and its knobs open to show them."""
        result = getattr(panel, "result", None)
        best = getattr(result, "best", None)
        if best is None or panel.picks.technique.value != result.technique:
            return  # nothing was applied: the panel's status line says why
        knobs = ", ".join(f"{k}={v}" for k, v in best.knobs.items())
        self.explorer._set_status(f"Tuning tab applied: {result.technique} with {knobs} (in Knobs below); "
                                  "press Run to use them", "ok")
        panel.picks.knobs_panel.selected_index = 0

    def _on_select(self, change) -> None:
        if change["new"] is not None:
            self.panel(list(PANELS)[change["new"]])


class Picks:
    """A problem's controls in the Explorer, as a tool panel reads and sets them: the technique
    control, the knob controls, values and declarations, and the problem's name in a sweep."""

    def __init__(self, explorer, problem: str):
        self.problem = problem
        self.shortest_paths = problem == SHORTEST_PATHS
        self._owner = explorer.sssp if self.shortest_paths else explorer  # ShortestPathsPanel or Explorer
        self.sweep_problem = "sssp" if self.shortest_paths else "bfs"  # explorer.sweep.PROBLEMS
        self.what = "shortest-path" if self.shortest_paths else "BFS"  # a run of it, in words
        self.steps = "iterations" if self.shortest_paths else "levels"

    @property
    def technique(self) -> W.Dropdown:
        return self._owner.technique

    @property
    def knob_widgets_of(self) -> dict:
        return self._owner.knob_widgets_of

    @property
    def knobs_panel(self) -> W.Accordion:
        return self._owner.knobs_panel

    def knob_values(self) -> dict:
        return self._owner.knob_values()

    def set_knobs(self, values: dict) -> None:
        self._owner.set_knobs(values)

    def knobs_of(self, technique: str):
        from ..sweep import problem_of

        return problem_of(self.sweep_problem).knobs_of(technique)

    def parse(self, technique) -> str:
        """The technique's name, or "auto" for BFS (an unknown one raises ValueError naming the
        problem's techniques)."""
        from ..sweep import problem_of

        if not self.shortest_paths and is_auto(technique):
            return AUTO
        return problem_of(self.sweep_problem).parse(technique)

    def make_knobs(self, technique: str, values: dict):
        """The technique's knobs from `values` (a bad name or value raises KnobError)."""
        from ..sweep import problem_of

        return problem_of(self.sweep_problem).make_knobs(technique, values)

    def changed_knobs(self, technique: str, knobs: dict) -> dict:
        """The knobs that differ from the technique's defaults (the rest go without saying)."""
        if is_auto(technique):
            return {}
        defaults = self.knobs_of(technique).defaults()
        return {k: v for k, v in dict(knobs).items() if defaults.get(k, object()) != v}


# ------------------------------------------------------------------ what the panels share

def name_the_untitled(widget) -> None:
    """A described control without a tooltip gets its description as one: ipywidgets puts the
    tooltip on the label as its title, and with none the hover read "null"."""
    if isinstance(widget, W.DOMWidget) and getattr(widget, "description", "") and not widget.tooltip:
        widget.tooltip = widget.description
    for child in getattr(widget, "children", ()):
        name_the_untitled(child)


def esc(x) -> str:
    return html.escape(str(x))


def picked_source(explorer):
    """The Explorer's source control as run_bfs takes it: a vertex id, 'max-degree' or 'random'."""
    mode = explorer.source_mode.value
    return explorer.vertex.value if mode == "vertex id" else mode


def status_html(text: str, kind: str = "info") -> str:
    color = {"info": "#333", "busy": "#1f5fa8", "ok": "#11772b", "error": "#b00020"}[kind]
    icon = {"info": "", "busy": "<i class='fa fa-spinner fa-spin' aria-hidden='true'></i> ", "ok": "✓ ",
            "error": "✗ "}[kind]
    return f"<span style='color:{color}'>{icon}{esc(text)}</span>"


class StatusLine:
    """A tool panel's status line (`self.status`, an HTML widget) and its buttons' handler: a
    user's error (or a RuntimeError) becomes a line there instead of a traceback."""

    def _set_status(self, text: str, kind: str = "info") -> None:
        self.status.value = status_html(text, kind)

    def _show_error(self, err: BaseException) -> None:
        self._set_status(f"{type(err).__name__}: {err}", "error")

    def _clicked(self, action) -> None:
        try:
            action()
        except USER_ERRORS + (RuntimeError,) as err:
            self._show_error(err)


#: Runs one comparison may hold (one colour each).
MAX_RUNS = 10


def entry_label(index: int, technique: str, changed: dict) -> str:
    """'A bfs4k K1=32': a letter, the technique and its knobs that differ from the defaults (`changed`)."""
    letter = chr(ord("A") + index) if index < 26 else f"#{index + 1}"
    return " ".join([letter, technique, *(f"{k}={v}" for k, v in changed.items())])


class Entries:
    """A Comparison panel's list of runs to make, (technique, knobs) each, over its problem's
    `Picks`: the techniques to add, the Explorer's setting, the list, and Remove and Compare
    buttons (`entry_controls` lays them out; the panel gives Compare its action)."""

    def entry_controls(self, picks: Picks, techniques: list[str], rows: int) -> W.HBox:
        self.picks = picks
        self.entries: list[tuple[str, dict]] = []  # (technique, knobs) to run
        what = "shortest-path technique" if picks.shortest_paths else "technique"
        where = "weighted graph" if picks.shortest_paths else "graph"
        self.techniques = W.SelectMultiple(options=techniques, rows=rows, layout=W.Layout(width="220px"),
                                           tooltip="techniques to add, each with its knobs as the Explorer has them")
        self.add_button = W.Button(description="Add selected", icon="plus",
                                   tooltip="add the selected techniques, each with its knobs in the Explorer")
        self.add_current = W.Button(description="Add the Explorer's setting", icon="plus-square",
                                    layout=W.Layout(width="220px"),
                                    tooltip=f"add the Explorer's {what} with its knobs as they are now "
                                            "(change a knob and add again to compare knob sets)")
        self.entry_list = W.Select(options=[], rows=6, layout=W.Layout(width="300px", flex="1 1 auto"))
        self.remove_button = W.Button(description="Remove", icon="minus", tooltip="remove the highlighted run")
        self.run_button = W.Button(description="Compare", icon="play", button_style="primary",
                                   tooltip=f"run every entry on the Explorer's {where} and source, one after another")
        self.add_button.on_click(lambda _: self._clicked(lambda: self.add(*self.techniques.value)))
        self.add_current.on_click(lambda _: self._clicked(self.add_explorer_setting))
        self.remove_button.on_click(lambda _: self._clicked(self._remove_selected))
        # The button columns keep their width (squeezed, they scrolled sideways); the list gives.
        return W.HBox([self.techniques, W.VBox([self.add_button, self.add_current], layout=W.Layout(flex="0 0 auto")),
                       self.entry_list, W.VBox([self.remove_button, self.run_button],
                                               layout=W.Layout(flex="0 0 auto"))])

    def add(self, *items) -> None:
        """Add runs: a technique name (its knobs as the Explorer has them), or (technique, knobs);
        "auto" takes no knobs (it chooses them at the run)."""
        for item in items:
            tech, knobs = item if isinstance(item, (tuple, list)) else (item, None)
            tech = self.picks.parse(tech)
            auto = is_auto(tech)
            if auto and knobs:
                raise KnobError(TAKES_NO_KNOBS)
            if knobs is None and not auto:
                knobs = {name: w.value for name, w in self.picks.knob_widgets_of[tech].items()}
            if len(self.entries) >= MAX_RUNS:
                raise ValueError(f"a comparison holds at most {MAX_RUNS} runs (one colour each)")
            self.entries.append((tech, {} if auto else self.picks.make_knobs(tech, knobs).as_dict()))
        self._show_entries()

    def add_explorer_setting(self) -> None:
        self.add((self.picks.technique.value, self.picks.knob_values()))

    def _remove_selected(self) -> None:
        if self.entry_list.index is None:
            raise ValueError("highlight a run in the list to remove it")
        del self.entries[self.entry_list.index]
        self._show_entries()

    def _label(self, i: int, tech: str, knobs: dict) -> str:
        return entry_label(i, tech, self.picks.changed_knobs(tech, knobs))

    def _show_entries(self) -> None:
        self.entry_list.options = [self._label(i, t, k) for i, (t, k) in enumerate(self.entries)]

    def _entries_to_run(self, entries) -> list[tuple[str, dict]]:
        """The runs to make: `entries` (which replace the list) or the list; none raises."""
        if entries is not None:
            self.entries = []
            self.add(*entries)
        if not self.entries:
            raise ValueError("nothing to compare: add techniques (or the Explorer's setting) first")
        return self.entries


def html_table(rows: list[dict], columns: list[str], titles: dict | None = None, numeric: set | None = None) -> str:
    """Rows as a small HTML table (the Explorer's summary style)."""
    titles = titles or {}
    numeric = numeric if numeric is not None else set()
    head = "".join(f"<th>{esc(titles.get(c, c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class='{'num' if c in numeric else ''}'>{esc(r.get(c, ''))}</td>"
                                    for c in columns) + "</tr>" for r in rows)
    return (f"<div class='bfs4k-tool'><table style='border-collapse:collapse;font-size:12px'><thead><tr>{head}"
            f"</tr></thead><tbody>{body}</tbody></table></div>")


TABLE_CSS = ("<style>.bfs4k-tool{display:grid;grid-template-columns:minmax(0,1fr);overflow-x:auto}"  # wide: scrolls
             ".bfs4k-tool td,.bfs4k-tool th{border:1px solid #ddd;padding:2px 7px;line-height:1.3}"
             ".bfs4k-tool th{background:#f4f4f4}.bfs4k-tool td.num{text-align:right}</style>")


class Worker:
    """Runs a panel's long job: in a thread when started from a button (so that its Stop button
    is heard while the job runs), in the caller's thread from code. Errors go to `on_error`."""

    def __init__(self, on_error: Callable[[BaseException], None]):
        self._thread: threading.Thread | None = None
        self.stop_requested = False
        self._on_error = on_error

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, job: Callable[[], object]) -> None:
        if self.busy:
            raise RuntimeError("a job of this panel is running: wait for it or press Stop")
        self.stop_requested = False

        def target():
            try:
                job()
            except Exception as err:  # shown in the panel's status line; the thread must not die silently
                self._on_error(err)
        self._thread = threading.Thread(target=target, daemon=True, name="bfs4k-panel")
        self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        self.stop_requested = True
