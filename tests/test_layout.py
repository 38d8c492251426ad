"""What a person reads whole: labels as wide as their text (knobs, Tuning, Duplicates), the
generator's starting sizes and the knob presets under the simulator. The browser checks the same
on the page (tests/test_browser.py, "numbers and text a person reads")."""
import html
import re

import pytest

W = pytest.importorskip("ipywidgets", reason="the Explorer needs ipywidgets (pip install -e .[notebook])")

from explorer import graphs  # noqa: E402
from explorer.graphs.weights import WEIGHT_PARAMS  # noqa: E402
from explorer.sweep import SIMULATOR_SWEEP_MAX_ARCS  # noqa: E402
from explorer.techniques import implementation, implemented_techniques, knobs_of  # noqa: E402
from explorer.ui import layout, widgets  # noqa: E402
from explorer.ui.layout import BUTTON_CHROME_PX, SELECT_CHROME_PX, text_px  # noqa: E402
from explorer.ui.widgets import SIMULATOR_GENERATOR_PARAMS, Explorer  # noqa: E402

#: Widths Chromium measured for these labels in JupyterLab (13 px DejaVu Sans), in pixels.
MEASURED = {"single_block_threads": 135.6, "random": 50.4, "grid_blocks_per_sm": 126.2, "log 1 vertex in": 93.4,
            "block_threshold": 101.8, "warp_size_rule": 95.6}


def test_text_widths_hold_what_the_browser_draws():
    for text, px in MEASURED.items():
        assert px <= text_px(text) <= px * 1.1 + 4, (text, text_px(text))


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


_LABEL = re.compile(r"<div class='widget-label' title='[^']*' style='min-width:(\d+)px;max-width:(\d+)px;"
                    r"margin-right:0'>([^<]*)</div>")


def labels_cut(root) -> list:
    """(text, width) of every problem under `root`: a label of `labelled` narrower than its text, a
    label or a description of 80 px or less cut by ipywidgets' default, a toggle button or a
    drop-down narrower than its longest option."""
    bad = []
    for w in _walk(root):
        if isinstance(w, W.HTML) and "class='widget-label'" in w.value:
            m = _LABEL.search(w.value)
            if m is None:
                bad.append((w.value, "no width"))
                continue
            px, text = int(m[1]), html.unescape(m[3])
            if px < text_px(text) or int(w.layout.width.removesuffix("px")) < px:
                bad.append((text, px))
        elif getattr(w, "description", "") and isinstance(w, (W.Text, W.IntText, W.FloatText, W.BoundedIntText,
                                                               W.BoundedFloatText)):
            width = w.style.description_width or "80px"  # ipywidgets' --jp-widgets-inline-label-width
            if not width.endswith("px") or int(width[:-2]) < text_px(w.description):
                bad.append((w.description, width))
        shown = [str(o[0] if isinstance(o, tuple) else o) for o in getattr(w, "options", ())]
        if isinstance(w, W.ToggleButtons):
            width = int(w.style.button_width.removesuffix("px"))
            bad += [(o, width) for o in shown if width < text_px(o) + BUTTON_CHROME_PX]
        if isinstance(w, W.Dropdown) and w.layout.width and w.layout.width.endswith("px"):
            width = int(w.layout.width[:-2])
            bad += [(o, width) for o in shown if width < text_px(o) + SELECT_CHROME_PX]
    return bad


@pytest.fixture(scope="module")
def explorer():
    return Explorer(graph="bfs4k_fig2", source=0)


def test_every_knob_label_is_whole(explorer):
    # 'warp_size…', 'single_blo…', 'hash_entr…', and luo-hierarchical's two 'block_thr…': the
    # labels were 145 px boxes holding an 80 px label (ipywidgets' class width).
    for tech in implemented_techniques():
        page = explorer.knob_pages.children[list(explorer.knob_widgets_of).index(tech.value)]
        assert labels_cut(page) == [], tech.value
    labels = [html.unescape(_LABEL.search(w.value)[3]) for w in _walk(explorer.knob_pages)
              if isinstance(w, W.HTML) and "widget-label" in w.value]
    assert {"block_threads", "block_threshold", "single_block_threads", "hash_entries"} <= set(labels)


def test_a_knob_page_fits_the_explorer_with_its_names_whole():
    for tech in implemented_techniques():
        specs = list(knobs_of(tech).specs())
        if not specs:
            continue
        ncols, labels = layout.knob_columns(specs)
        assert ncols == min(3, len(specs)), tech.value  # three columns fit every technique today
        widths = []
        for c in range(ncols):
            col = specs[c::ncols]
            assert labels[c] >= max(text_px(s.name) for s in col)
            widths.append(labels[c] + layout.LABEL_GAP_PX + max(layout.knob_control_px(s) for s in col))
        assert sum(widths) <= layout.KNOB_PAGE_PX, tech.value


def test_the_tuning_and_duplicates_tabs_show_their_labels_whole(explorer):
    # 'knol', 'rand…' (Tuning); 'f', 'log 1 vert…', 'l' (Duplicates).
    for name in ("tuning", "duplicates"):
        assert labels_cut(explorer.tools.panel(name)) == [], name


def test_the_explorers_own_labels_are_whole(explorer):
    controls = explorer.children[0]
    assert labels_cut(controls) == []


# ------------------------------------------------------------------ the simulator's starting points

def test_every_generator_starts_small_enough_for_the_simulator():
    assert set(SIMULATOR_GENERATOR_PARAMS) == set(graphs.GENERATORS)  # a new generator declares its own
    for kind in graphs.GENERATORS:
        g = graphs.generate(kind, **widgets.generator_start_params(kind, simulator=True))
        assert 0 < g.num_arcs <= SIMULATOR_SWEEP_MAX_ARCS, (kind, g.num_arcs)  # runs, and sweeps, in seconds
    assert widgets.generator_start_params("kronecker", simulator=False) == graphs.GENERATORS["kronecker"].params


def structure(kind: str) -> dict:
    """A generator's declared parameters less the weights' (a BFS reads none: the Explorer shows none)."""
    return {k: v for k, v in graphs.GENERATORS[kind].params.items() if k not in WEIGHT_PARAMS}


def test_under_the_simulator_the_generator_controls_start_small(monkeypatch):
    # Kronecker scale 16 and a 300 x 300 grid were the defaults: refused by the simulator at once.
    monkeypatch.setattr(widgets, "on_simulator", lambda: True)
    ex = Explorer(graph="bfs4k_fig2")
    ex.graph_mode.value = "generator"
    for kind in ("kronecker", "grid2d"):
        ex.generator.value = kind
        values = {w.description: w.value for w in ex.gen_params.children}
        assert values == {**structure(kind), **SIMULATOR_GENERATOR_PARAMS[kind]}
        assert "the papers' sizes are" in html.unescape(ex.generator_doc.value)
        assert ex.current_graph().num_arcs <= SIMULATOR_SWEEP_MAX_ARCS
    # A spec means what it means elsewhere (the CLI): the parameters it leaves out take the declared defaults.
    ex.set_graph("gen:kronecker:scale=5")
    values = {w.description: w.value for w in ex.gen_params.children}
    assert values["scale"] == 5 and values["edge_factor"] == graphs.GENERATORS["kronecker"].params["edge_factor"]


def test_on_a_gpu_the_generators_start_at_the_papers_sizes(monkeypatch):
    monkeypatch.setattr(widgets, "on_simulator", lambda: False)
    ex = Explorer(graph="bfs4k_fig2")
    ex.generator.value = "grid2d"
    assert {w.description: w.value for w in ex.gen_params.children} == structure("grid2d")


def test_defaults_and_presets_keep_the_simulators_knobs_and_say_so(monkeypatch):
    # 'defaults' restored 1,024-thread blocks: a 60-vertex graph then took 82 s.
    monkeypatch.setattr(widgets, "on_simulator", lambda: True)
    ex = Explorer(graph="3elt", technique="bfs4k")
    ex.set_knobs({"K6": 1024, "single_block_threads": 1024, "K1": 8})
    ex.knob_reset.click()
    sim = implementation("bfs4k").simulator_knobs
    assert ex.knob_values() == {**knobs_of("bfs4k").defaults(), **sim}
    assert "simulator" in ex.status.value and "K6=32" in ex.status.value
    assert "K6=32" in ex.knob_sim_note.value and "defaults" in html.unescape(ex.knob_sim_note.value)
    for tech in implemented_techniques():  # every technique's own simulator knobs
        ex.technique.value = tech.value
        ex.knob_reset.click()
        assert ex.knob_values() == {**knobs_of(tech).defaults(), **implementation(tech).simulator_knobs}
    values = ex.apply_recommended_knobs()  # §7 advises K6=128 for 3elt: the simulator keeps 32
    assert values["K6"] == sim["K6"] == ex.knob_values()["K6"] and "K6 stays 32" in ex.status.value
    assert "<b>K6=" not in ex.knob_advice.value and "<b>K1=" in ex.knob_advice.value


def test_on_a_gpu_defaults_are_the_declared_ones(monkeypatch):
    monkeypatch.setattr(widgets, "on_simulator", lambda: False)
    ex = Explorer(graph="bfs4k_fig2", technique="bfs4k")
    ex.set_knobs({"K6": 64})
    ex.knob_reset.click()
    assert ex.knob_values() == knobs_of("bfs4k").defaults() and ex.knob_sim_note.value == ""
