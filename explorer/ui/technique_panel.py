"""The Explorer's technique and knob controls (`TechniquePanel`, a part of widgets.Explorer): the
chosen technique's description and knob page, setting, resetting and BFS-4K's §7 advice, and
technique "auto", which has no knobs to set and says what it chose."""
from __future__ import annotations

import ipywidgets as W

from ..auto import AUTO, DOC, TAKES_NO_KNOBS, is_auto
from ..knobs import KnobError
from ..techniques import Technique, knobs_of, make_knobs
from ..techniques.bfs4k import recommend_knobs
from .layout import knob_grid
from .tools import esc

#: What the technique "auto" does, under the drop-down while it is picked.
AUTO_DOC = DOC + " A run's label names the technique that ran."
KNOB_RESET_TIP = ("reset the technique's knobs to their defaults (under the simulator, with its knobs: "
                  "32-thread blocks)")
AUTO_RESET_TIP = "auto sets its own knobs for each run: pick a technique to set or reset knobs"


def technique_value(technique) -> str:
    """The technique drop-down's value for `technique`: "auto" or an implemented technique's name
    (an unknown one raises ValueError naming the techniques)."""
    return AUTO if is_auto(technique) else Technique.parse(technique).value


def ran_label(run) -> str:
    """The technique a run's label names: "auto → bfs4k" where auto chose it, so that runs of auto
    that chose differently stay apart."""
    return f"{AUTO} → {run.technique.value}" if run.choice is not None else run.technique.value


class TechniquePanel:
    """The technique and knob behaviour of the Explorer, which builds the controls (`technique`,
    `knob_widgets_of`, `knob_pages`, `knobs_panel`, `knob_reset`, `knob_advice`, ...) and gives
    `simulator_knobs`, `current_graph`, `_graph_stats`, `_graph_identity`, `_set_status` and
    `_show_error`."""

    @property
    def knob_widgets(self) -> dict[str, W.ValueWidget]:
        """The chosen technique's knob controls, by knob name (none for auto)."""
        return {} if is_auto(self.technique.value) else self.knob_widgets_of[self.technique.value]

    def set_knobs(self, values: dict) -> None:
        """Set the chosen technique's knob controls; names and values are checked against its
        declaration (KnobError names the knob and its range; auto takes none)."""
        if is_auto(self.technique.value):
            if values:
                raise KnobError(TAKES_NO_KNOBS)
            return
        make_knobs(self.technique.value, {**self.knob_values(), **values})
        for name, value in values.items():
            self.knob_widgets[name].value = value

    def reset_knobs(self) -> dict:
        """The chosen technique's declared defaults; under the simulator with its simulator knobs
        (32-thread blocks: a 1,024-thread block makes a tiny BFS take minutes there), and the
        status says which. Returns the values set (none for auto, which sets its own)."""
        tech = self.technique.value
        if is_auto(tech):
            self._set_status(AUTO_RESET_TIP)
            return {}
        sim = self.simulator_knobs(tech)
        values = {**knobs_of(tech).defaults(), **sim}
        self.set_knobs(values)
        self._set_status(f"{tech}: knobs at their defaults" + (
            f", with the simulator's {', '.join(f'{k}={v}' for k, v in sim.items())} (32-thread blocks, so a run "
            "takes seconds; the declared defaults on a GPU)" if sim else ""))
        return values

    def apply_recommended_knobs(self) -> dict:
        """Choose BFS-4K and set K1..K7 by its §7 rules of thumb for the current graph; show why.
        Under the simulator its block sizes stay the simulator's (said in the status)."""
        try:
            rec, why = recommend_knobs(self._graph_stats(self.current_graph()))
        except (ValueError, OSError) as err:  # GraphError is a ValueError
            self._show_error(err)
            return {}
        advice = {k: getattr(rec, k) for k in why}
        self.technique.value = Technique.BFS4K.value
        kept = {k: v for k, v in self.simulator_knobs().items() if k in advice and advice[k] != v}
        values = {**advice, **kept}
        self.set_knobs(values)
        self._advice = (self._graph_identity(), self.current_graph().name,
                        {k: (v, why[k]) for k, v in advice.items() if k not in kept})
        if kept:
            self._set_status("simulator: " + ", ".join(f"{k} stays {v} (§7 advice: {advice[k]})"
                                                       for k, v in kept.items())
                             + ": 32-thread blocks, so a run takes seconds")
        self._show_advice()
        return values

    def _show_advice(self, _change=None) -> None:
        """The last §7 advice, as far as it still holds: none once another graph is picked, and
        only the knobs still at its values (a knob changed since drops out)."""
        lines = []
        if self._advice is not None:
            graph, name, advice = self._advice
            if graph != self._graph_identity():
                self._advice = None
            else:
                # BFS-4K's controls, which the advice set: another technique's (or auto's none) lack them
                now = {k: w.value for k, w in self.knob_widgets_of[Technique.BFS4K.value].items()}
                lines = [f"<b>{k}={esc(v)}</b>: {esc(why)}" for k, (v, why) in advice.items() if now[k] == v]
                if lines:
                    lines.insert(0, f"BFS-4K §7 advice for {esc(name)} (a knob you change leaves this list):")
        self.knob_advice.value = "<small>" + "<br>".join(lines) + "</small>" if lines else ""

    def knob_values(self) -> dict:
        return {name: w.value for name, w in self.knob_widgets.items()}

    def _show_technique(self) -> None:
        """The chosen technique's description and knobs; for auto what it chose last and why, and
        no knobs to set."""
        self._show_knob_sim_note()
        tech = self.technique.value
        auto = is_auto(tech)
        doc = esc(AUTO_DOC if auto else Technique(tech).doc)
        if auto and self._auto_reason is not None:
            graph, why = self._auto_reason
            doc += f"<br><b>Last run ({esc(graph)})</b>: {esc(why)}"
        self.technique_doc.value = f"<small style='color:#444'>{doc}</small>"
        pages = list(self.knob_widgets_of)
        self.knob_pages.selected_index = len(pages) if auto else pages.index(tech)
        self.knobs_panel.titles = ("Knobs (auto sets its own)" if auto else f"Knobs of {tech}",)
        self.knob_reset.disabled = auto
        self.knob_reset.tooltip = AUTO_RESET_TIP if auto else KNOB_RESET_TIP

    def _knob_page(self, tech: str) -> W.Widget:
        widgets = self.knob_widgets_of[tech]
        if not widgets:
            return W.HTML(f"<small>{esc(tech)} has no knobs.</small>")
        grid = knob_grid(widgets, knobs_of(tech).specs())
        if tech != Technique.BFS4K.value:
            return grid
        return W.VBox([grid, self.knob_advice_button, self.knob_advice])  # §7 is BFS-4K's advice
