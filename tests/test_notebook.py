"""The notebooks run top to bottom headless where no browser can run them (what the browser is
sent, read from the widget state the run leaves), and the Explorer widget runs from code."""
import pytest

W = pytest.importorskip("ipywidgets", reason="the notebook needs ipywidgets (pip install -e .[notebook])")

import html
import json
import time

from explorer import backend, graphs
from explorer.ui import tools, widgets
from explorer.techniques import KnobError, implemented_techniques, knobs_of, missing_techniques
from explorer.ui.widgets import Explorer

from _notebooks import (CHECKS, CLASSROOM, DUPLICATES, MULTI_SEARCH, NOTEBOOKS, QUICKSTART, TUNING, browser_runs_them,
                        check_notebook)


def execute_notebook(name, tmp_path, monkeypatch, timeout=300):
    """Run a notebook top to bottom under the simulator in tmp_path (what it writes lands there),
    then its checks (tests/_notebooks.py); returns the executed notebook. Where the browser test
    runs the notebooks (CI), it makes these checks there, and this skips: each notebook runs once."""
    if browser_runs_them():
        pytest.skip(f"tests/test_browser.py runs {name} in chromium and makes its checks")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # the kernel inherits it
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    check_notebook(name, nb, lambda f: (tmp_path / f).exists())
    return nb


def test_the_notebooks_are_stored_without_outputs_and_each_has_its_checks():
    nbformat = pytest.importorskip("nbformat")
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == sorted(CHECKS)  # a new notebook gets its checks
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"store {name} without outputs"


@pytest.mark.slow  # deselect with -m "not slow"; runs by default
@pytest.mark.parametrize("name", [QUICKSTART, TUNING, DUPLICATES])
def test_notebook_executes_headless_under_the_simulator(name, tmp_path, monkeypatch):
    execute_notebook(name, tmp_path, monkeypatch)


@pytest.mark.slow
def test_classroom_notebook_executes_headless_under_the_simulator(tmp_path, monkeypatch):
    nb = execute_notebook(CLASSROOM, tmp_path, monkeypatch)
    # Parts 2 and 4 show classrooms run and stepped from code before they are displayed: the page
    # is sent the level reached (part 4: the magenta ring of vertex 8), not the grey drawing they
    # were built with.
    rings = [d["x"] for s in widget_states(nb).values() if s.get("_model_name") == "BokehModel"
             for d in bokeh_sources(s["render_bundle"], "classroom-duplicates")]
    assert sum(1 for x in rings if x) >= 2, rings


def widget_states(nb) -> dict:
    """model id -> state of every widget as the run left it (what a page opening now is sent)."""
    return {k: v["state"] for k, v in nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]
            ["state"].items()}


def bokeh_sources(bundle, name: str) -> list[dict]:
    """The data of every ColumnDataSource named `name` in a BokehModel's render_bundle."""
    found = []

    def walk(x):
        if isinstance(x, dict):
            attrs = x.get("attributes", {})
            if x.get("name") == "ColumnDataSource" and attrs.get("name") == name:
                data = attrs.get("data", {})
                found.append(dict(data.get("entries", [])) if data.get("type") == "map" else data)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(bundle) if isinstance(bundle, str) else bundle)
    return found


@pytest.mark.slow
def test_multi_search_notebook_shows_the_values_ranked_and_coloured(tmp_path, monkeypatch):
    nb = execute_notebook(MULTI_SEARCH, tmp_path, monkeypatch)
    states = widget_states(nb).values()
    # The Run panel's table (the batch of cell "run_once()") and part 6's: ranked values, not a time.
    tables = [s["value"] for s in states if s.get("_model_name") == "HTMLModel" and "highest first" in s.get("value", "")]
    assert len(tables) == 2 and "betweenness" in tables[0] and "<td>1</td>" in tables[0]
    # Part 6's drawing, displayed after its run: every vertex coloured by its betweenness.
    drawn = [d for s in states if s.get("_model_name") == "BokehModel"
             for d in bokeh_sources(s["render_bundle"], "multisearch-values")]
    assert any(all(isinstance(v, float) and v == v for v in d["value"]) for d in drawn), drawn


def test_the_ranked_values_name_vertices_by_the_graphs_own_ids():
    # A file's graph keeps its own ids (10, 20, 30 here): the table ranks by them, as run_many
    # takes its sources.
    import numpy as np

    from explorer.multisearch.records import MultiSearchResult
    from explorer.ui.multisearch_view import ranking

    common = dict(graph="g", method="warp-thread", searches=[], batches=[], plan=None,
                  sources=np.array([2, 0]), original_ids=np.array([10, 20, 30]))
    bc = MultiSearchResult(application="betweenness", values={"betweenness": np.array([0.1, 0.5, 0.2])},
                           per_vertex=("betweenness",), **common)
    assert [row[1] for row in ranking(bc).rows] == [20, 30, 10]
    closeness = MultiSearchResult(application="closeness", values={"closeness": np.array([0.25, 0.75])},
                                  per_search=("closeness",), **common)
    assert [row[1] for row in ranking(closeness).rows] == [10, 30]
    hops = MultiSearchResult(application="distances", values={"distances": np.array([[1, 0, 1], [0, 1, -1]])},
                             per_search=("distances",), **common)
    assert [row[0] for row in ranking(hops).rows] == [30, 10]


@pytest.fixture(scope="module")
def explorer():
    return Explorer(graph="bfs4k_fig2", source=0)


def test_explorer_run_streams_levels_into_the_plots(explorer):
    result = explorer.run(source=0, technique="topdown-queue")
    label = explorer.history[-1][0]
    data = explorer.stream.sources[label].data
    assert data["level"] == [0, 1, 2, 3]
    assert data["frontier_in"] == [1, 3, 4, 2]
    assert result.validation == "ok"
    assert "✓" in explorer.status.value and "valid BFS" in explorer.status.value
    assert label in explorer.summary.value and "approx_diameter" in explorer.summary.value


def test_runs_overlay_and_keep_history(explorer):
    if not explorer.history:  # pytest-xdist may run this test in a worker where no other ran
        explorer.run(source=0, technique="topdown-queue")
    before = len(explorer.history)
    explorer.run(instrument=False)
    assert len(explorer.history) == before + 1
    labels = [label for label, _ in explorer.history]
    assert labels[-1] in explorer.stream.sources and labels[-2] in explorer.stream.sources
    assert explorer.stream.color(labels[-1]) != explorer.stream.color(labels[-2])


@pytest.mark.parametrize("kwargs,message", [
    ({"technique": "bfs4k", "knobs": {"K3": 5000}}, "out of range"),
    ({"source": 99}, "source vertex 99 is out of range"),
    ({"graph": "/nonexistent/graph.txt"}, "no such file"),
    ({"graph": "gen:grid2d:rows=0"}, "rows, cols must be >= 1"),
])
def test_bad_input_shows_one_line_in_the_status(explorer, kwargs, message):
    with pytest.raises(ValueError):
        explorer.run(**kwargs)
    status = explorer.status.value
    assert message in status.replace("&#x27;", "'").replace("&gt;", ">")
    assert "Traceback" not in status
    explorer.set_graph("bfs4k_fig2")
    explorer.set_source(0)
    explorer.technique.value = "topdown-queue"


def test_controls_are_generated_from_the_declarations(explorer):
    assert list(explorer.technique.options) == ["auto", *(t.value for t in implemented_techniques())]
    for t in missing_techniques():
        assert t.value in explorer.missing_note.value
    for t in implemented_techniques():
        explorer.technique.value = t.value
        assert explorer.knobs_panel.titles == (f"Knobs of {t.value}",)
        assert list(explorer.knob_widgets) == [s.name for s in knobs_of(t).specs()]
        for spec in knobs_of(t).specs():
            w = explorer.knob_widgets[spec.name]
            assert spec.meaning in w.tooltip
            if spec.choices is not None:
                assert isinstance(w, W.Dropdown) and tuple(w.options) == spec.choices
            else:
                assert (w.min, w.max) == (spec.low, spec.high)
    explorer.technique.value = "topdown-queue"
    explorer.graph_mode.value = "generator"
    explorer.generator.value = "grid2d"
    assert [w.description for w in explorer.gen_params.children] == ["rows", "cols"]
    explorer.graph_mode.value = "sample"


def test_knob_errors_name_the_range(explorer):
    explorer.technique.value = "bfs4k"
    with pytest.raises(KnobError, match="power of two"):
        explorer.set_knobs({"hash_entries": 3})
    explorer.technique.value = "topdown-queue"
    with pytest.raises(KnobError, match="unknown knob 'hash_entries' of topdown-queue"):
        explorer.set_knobs({"hash_entries": 4})


# ------------------------------------------------------------------ auto, the default technique

def test_the_technique_starts_at_auto_which_has_no_knobs_to_set():
    ex = Explorer(graph="bfs4k_fig2", source=0)
    assert ex.technique.value == "auto" and ex.technique.options[0] == "auto"
    doc = html.unescape(ex.technique_doc.value)
    assert "cost model calibrated on a GPU" in doc and "python3 -m explorer calibrate" in doc
    # No knob to set: an empty page, 'defaults' disabled with the reason as its tooltip.
    page = ex.knob_pages.children[ex.knob_pages.selected_index]
    assert ex.knob_widgets == {} and ex.knob_values() == {} and isinstance(page, W.HTML)
    assert ex.knobs_panel.titles == ("Knobs (auto sets its own)",)
    assert ex.knob_reset.disabled and "auto sets its own knobs" in ex.knob_reset.tooltip
    assert ex.reset_knobs() == {} and ex.knob_sim_note.value == ""
    with pytest.raises(KnobError, match="'auto' chooses its own knobs"):
        ex.set_knobs({"block_threads": 64})
    # A named technique is as before: its knobs, 'defaults' enabled; and back to auto.
    ex.technique.value = "bfs4k"
    assert list(ex.knob_widgets) == [s.name for s in knobs_of("bfs4k").specs()] and not ex.knob_reset.disabled
    ex.set_knobs({"K1": 8})
    assert ex.knob_values()["K1"] == 8 and ex.knobs_panel.titles == ("Knobs of bfs4k",)
    ex.technique.value = "auto"
    assert ex.knob_values() == {} and ex.knob_reset.disabled
    assert Explorer(graph="bfs4k_fig2", technique="topdown-queue").technique.value == "topdown-queue"
    assert Explorer(graph="bfs4k_fig2", technique="auto").technique.value == "auto"


def test_a_run_of_auto_says_why_and_its_label_names_what_ran(monkeypatch):
    from explorer import api

    ex = Explorer(graph="bfs4k_fig2", source=0)
    calls = []
    real = api.run_bfs

    def spy(graph, source, technique, knobs, **kw):
        calls.append((technique, knobs))
        return real(graph, source, technique, knobs, **kw)
    monkeypatch.setattr(api, "run_bfs", spy)
    result = ex.run()
    assert calls == [("auto", None)]  # auto sets its own knobs
    chosen = result.choice["technique"]
    assert result.validation == "ok" and result.technique == chosen
    label = ex.history[-1][0]
    assert label == f"#1 auto → {chosen} (bfs4k_fig2)"
    assert label in ex.stream.sources and html.escape(label) in ex.summary.value
    assert f"✓ {label}: " in html.unescape(ex.status.value)
    assert result.choice["reason"] in html.unescape(ex.technique_doc.value)  # beside the technique
    # A named technique's run overlays it under its own label; the reason shows only with auto picked.
    ex.run(technique="topdown-queue")
    assert calls[-1][0] == "topdown-queue" and calls[-1][1] is not None
    assert ex.history[-1][0] == "#2 topdown-queue (bfs4k_fig2)" and len(ex.stream.sources) == 2
    assert "Last run" not in ex.technique_doc.value
    ex.technique.value = "auto"
    assert result.choice["reason"] in html.unescape(ex.technique_doc.value)
    with pytest.raises(KnobError, match="'auto' chooses its own knobs"):
        ex.run(knobs={"block_threads": 64})
    assert "chooses its own knobs" in html.unescape(ex.status.value) and len(ex.history) == 2


def test_the_tools_and_the_classroom_resolve_auto():
    ex = Explorer(graph="bfs4k_fig2", source=0)
    chosen = ex.run().technique
    # Tuning: auto has no knobs to sweep, and says so.
    tuning = ex.tools.panel("tuning")
    assert tuning.run_button.disabled and "none to sweep" in html.unescape(tuning.status.value)
    with pytest.raises(ValueError, match="none to sweep"):
        tuning.run_sweep(knob1="block_threads")
    ex.technique.value = "topdown-queue"
    assert "block_threads" in tuning.knob1.options and not tuning.run_button.disabled
    assert tuning.status.value == tools.status_html("")
    ex.technique.value = "auto"
    # Comparison: auto is an entry; its label names what it chose.
    compare = ex.tools.panel("comparison")
    assert compare.techniques.options[0] == "auto"
    compare.add_current.click()
    assert compare.entries == [("auto", {})] and list(compare.entry_list.options) == ["A auto"]
    (label, result), = compare.compare()
    assert label == f"A auto → {chosen}" and result.validation == "ok"
    with pytest.raises(KnobError, match="'auto' chooses its own knobs"):
        compare.add(("auto", {"K1": 4}))
    # The classroom steps through the technique auto chooses.
    room = ex.open_classroom()
    assert room is not None and room.technique.value == chosen and room.result.technique == chosen
    assert "(auto's choice)" in html.unescape(ex.status.value)


@pytest.mark.skipif(backend.gpu_present()[0], reason="checks the no-GPU path (backend.select is faked)")
def test_no_gpu_offers_the_simulator(monkeypatch):
    def no_gpu(mode="auto"):
        if mode == "simulator":
            return backend.current()
        raise backend.NoGPUError("No CUDA GPU is available (test). The kernels can run on the simulator.")
    monkeypatch.setattr(backend, "select", no_gpu)
    ex = Explorer(graph="bfs4k_fig2")
    assert "No CUDA GPU" in ex.backend_line.value
    assert ex.simulator_button.layout.display != "none" and ex.run_button.disabled
    monkeypatch.setattr(backend, "select", lambda mode="auto": backend._selected)
    ex.simulator_button.click()
    assert ex.simulator_button.layout.display == "none" and not ex.run_button.disabled
    assert "simulator" in ex.backend_line.value.lower()


def test_section7_advice_sets_knobs_and_says_why():
    ex = Explorer(graph="3elt")
    values = ex.apply_recommended_knobs()
    assert ex.technique.value == "bfs4k"  # §7 is BFS-4K's advice
    assert values["K1"] == 4 and values["K2"] == 0.0  # a mesh: low degree and deviation, no hubs
    assert ex.knob_values()["K1"] == 4
    assert "K1=4" in ex.knob_advice.value and "§7" in ex.knob_advice.value


# ------------------------------------------------------------------ the Explorer's fit and finish

def test_section7_advice_follows_the_knobs_and_the_graph():
    # The advice follows the graph and the knobs as they change.
    ex = Explorer(graph="3elt")
    ex.apply_recommended_knobs()
    assert "for 3elt" in ex.knob_advice.value and "<b>K1=4</b>" in ex.knob_advice.value
    ex.set_knobs({"K1": 8})  # K1 no longer follows the advice: its line goes, the others stay
    assert "<b>K1=" not in ex.knob_advice.value and "<b>K4=1</b>" in ex.knob_advice.value
    ex.set_knobs({"K1": 4})
    assert "<b>K1=4</b>" in ex.knob_advice.value
    ex.technique.value = "auto"  # the advice reads BFS-4K's knobs, whichever technique is picked
    ex.knob_widgets_of["topdown-queue"]["block_threads"].value = 64
    assert "<b>K1=4</b>" in ex.knob_advice.value
    ex.set_graph("bfs4k_fig2")  # another graph: the advice was not for it
    assert ex.knob_advice.value == ""
    ex.set_graph("3elt")  # and it does not come back by itself
    assert ex.knob_advice.value == ""
    ex.apply_recommended_knobs()
    ex.graph_mode.value = "generator"
    assert ex.knob_advice.value == ""
    ex.set_graph("gen:grid2d:rows=10,cols=10")
    ex.apply_recommended_knobs()
    assert "for grid2d" in ex.knob_advice.value
    ex.gen_params.children[0].value = 11  # a generator parameter changes the graph too
    assert ex.knob_advice.value == ""
    ex.apply_recommended_knobs()
    ex.set_graph(graphs.sample_graph("bfs4k_fig2"))  # a graph object from code
    assert ex.knob_advice.value == ""


def _dropdowns(widget, parent=None):
    """(dropdown, the box it sits in) for every dropdown under `widget`."""
    if isinstance(widget, W.Dropdown):
        yield widget, parent
    for child in getattr(widget, "children", ()):
        yield from _dropdowns(child, widget)


def test_every_dropdown_shows_its_tooltip_in_the_browser():
    # ipywidgets 8's Dropdown view draws `tooltip` only when the widget has no
    # description (then on the <select>); with one, the hover shows nothing. So every dropdown has
    # no description of its own and sits behind a label that carries the tooltip as its title.
    ex = Explorer(graph="bfs4k_fig2")
    found = {}
    for dd, box in (d for part in ex.children if part is not ex.tools for d in _dropdowns(part)):  # the tabs: their own tests
        label = box.children[0]
        assert dd.tooltip and dd.description == "", dd
        assert isinstance(label, W.HTML) and f"title='{html.escape(dd.tooltip)}'" in label.value, dd
        found[html.unescape(label.value.rpartition("'>")[2].partition("<")[0])] = dd
    knob_dropdowns = {s.name for t in implemented_techniques() for s in knobs_of(t).specs() if s.choices}
    assert {"K1", "K4", "K6", "claim", "dedup", "warp_size_rule", "visited", "cluster",
            "single_block_threads", "block_threads"} <= knob_dropdowns
    assert knob_dropdowns | {"source", "technique", "sample", "generator"} == set(found)


def test_the_busy_status_needs_no_emoji_font():
    # The ⏳ glyph needs a font most machines lack; a Font Awesome spinner (the font
    # ipywidgets' button icons use) and words instead.
    ex = Explorer(graph="bfs4k_fig2")
    ex._set_status("loading graph", "busy")
    assert "⏳" not in ex.status.value and "fa-spinner" in ex.status.value and "loading graph" in ex.status.value
    assert all(ord(c) < 0x2300 or c in "✓✗⚠" for c in widgets.__loader__.get_source("explorer.ui.widgets"))


def test_the_simulator_button_keeps_its_label_whole():
    # Beside the long no-GPU message the button keeps its width and its label whole.
    layout = Explorer(graph="bfs4k_fig2").simulator_button.layout
    assert layout.flex == "0 0 auto" and layout.width == "auto"


def test_the_explorer_says_which_time_is_which(explorer, monkeypatch):
    # The Explorer shows the GPU's time, the BFS wall time and the wall time with plotting, each
    # named: the plotting is in the last only.
    from explorer.ui import live, report

    push = explorer.stream.push_many

    def slow_push(levels, *args, **kw):  # plotting that takes 50 ms a level
        time.sleep(0.05 * len(levels))
        return push(levels, *args, **kw)

    monkeypatch.setattr(explorer.stream, "push_many", slow_push)
    monkeypatch.setattr(live, "FEED_INTERVAL_S", 0.0)
    result = explorer.run(source=0, technique="topdown-queue")
    fields = report.summary_fields(result)
    assert {report.time_label(result), "BFS wall (ms)", "with plotting (ms)"} <= set(fields)
    assert result.caller_wall_ms >= result.elapsed_ms + 4 * 50 * 0.9  # 4 levels of 50 ms plotting
    assert result.elapsed_ms < result.caller_wall_ms - 150  # the BFS wall time leaves the plotting out
    assert "BFS wall (ms)" in explorer.summary.value


# ------------------------------------------------------------------ what the browser is sent

def test_a_run_of_many_levels_reaches_the_browser_level_by_level(explorer, monkeypatch):
    # A run's levels reach the browser while it goes on, not all at its end: each
    # batch of levels (here every level: the simulator takes longer than the feed's interval) is
    # handed to the kernel's sending thread, and sent, before the run goes on.
    from explorer.ui import live

    sent = []

    def flushed(timeout=live.FLUSH_TIMEOUT_S):
        label = explorer.stream.labels[-1]
        sent.append((len(explorer.stream.sources[label].data["level"]), explorer.status.value))
        return True

    monkeypatch.setattr(live, "flush_to_browser", flushed)
    monkeypatch.setattr(live, "FEED_INTERVAL_S", 0.0)  # and not batched: the count does not depend on the machine
    result = explorer.run(graph="gen:grid2d:rows=2,cols=12", source=0, technique="topdown-queue")
    assert result.num_levels == 13
    counts = [n for n, _ in sent]
    assert counts == list(range(1, 14))  # one update a level, in order
    assert all(f"level {n - 1} done" in status for n, status in sent)  # the status line says what is drawn
    explorer.set_graph("bfs4k_fig2")


def test_the_plots_are_sent_whole_to_a_page_opened_or_reloaded_later(explorer):
    # A reloaded page asks for every widget's whole state, which carries the document as it is
    # now: every run the kernel holds.
    result = explorer.run(source=0, technique="topdown-queue")
    label = explorer.history[-1][0]
    bundle = explorer.plot_view.get_state()["render_bundle"]
    runs = [d["run"] for d in bokeh_sources(bundle, "levels") if d.get("run")]
    assert [label] * result.num_levels in runs
    explorer._repr_mimebundle_()  # displayed again (a later cell shows `ex`): current too
    assert label in explorer.plot_view.render_bundle["docs_json"].__repr__()


def test_the_tool_tabs_plots_are_sent_whole_to_a_page_reloaded_later():
    # A reloaded page asks each widget for its whole state: the Tuning and Duplicates tabs' plots
    # carry what they drew after they were built, as the Explorer's plots do.
    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    tuning = ex.tools.panel("tuning")
    tuning.run_sweep(knob1="block_threads", values1="32,64")
    (points,) = bokeh_sources(tuning.plot_box.children[0].get_state()["render_bundle"], "sweep_points")
    assert len(points["median_ms"]) == 2
    ex.technique.value = "bfs4k"
    duplicates = ex.tools.panel("duplicates")
    duplicates.run()
    (levels,) = bokeh_sources(duplicates.plot_box.children[0].get_state()["render_bundle"], "duplicate_levels")
    assert levels["level"] == list(duplicates.level_source.data["level"]) and levels["level"]


def test_nothing_that_changes_the_runs_can_be_pressed_during_a_run(explorer, monkeypatch):
    from explorer import api

    seen = []
    real = api.run_bfs

    def watching(*args, **kw):
        seen.append({b.description: b.disabled for b in (explorer.run_button, explorer.clear_button,
                                                         explorer.classroom_button)})
        return real(*args, **kw)

    monkeypatch.setattr(api, "run_bfs", watching)
    explorer.run(source=0, technique="topdown-queue")
    assert seen == [{"Run": True, "Clear runs": True, "Classroom": True}]
    assert not (explorer.run_button.disabled or explorer.clear_button.disabled or explorer.classroom_button.disabled)


def test_the_tab_the_browser_shows_first_has_its_panel():
    # The browser shows the first tab even when none is selected, and clicking it then sends
    # nothing: the first tab's panel must be there before any click.
    ex = Explorer(graph="bfs4k_fig2")
    shown = ex.tools.selected_index if ex.tools.selected_index is not None else 0
    assert ex.tools.children[shown].children == (ex.tools.panel("tuning"),)
    ex.tools.selected_index = 2  # the others are built when first selected
    assert ex.tools.children[2].children == (ex.tools.built()["Duplicates"],)


def test_apply_best_is_confirmed_beside_the_explorers_run_button():
    # "Apply best" sets knobs in a panel far above its button: the Explorer's status line says so and the knobs open.
    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    tuning = ex.tools.panel("tuning")
    tuning.run_sweep(knob1="block_threads", values1="32,64")
    tuning.apply_button.click()
    best = tuning.result.best
    assert f"block_threads={best.knobs['block_threads']}" in ex.status.value and "✓" in ex.status.value
    assert ex.knobs_panel.selected_index == 0 and ex.knob_values()["block_threads"] == best.knobs["block_threads"]
