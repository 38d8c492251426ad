"""The Comparison panel (explorer.ui.compare): controls -> engine calls -> plot sources and ranking;
runs drawn apart (plots.run_offset) with a legend that hides them; the timeline."""
from types import SimpleNamespace

import pytest

pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")

from bokeh.models import Legend  # noqa: E402

from explorer import api, graphs  # noqa: E402
from explorer.stats import LevelStats  # noqa: E402
from explorer.ui import compare  # noqa: E402
from explorer.ui.compare import MAX_RUNS, TimelinePlot, ranking  # noqa: E402
from explorer.ui.plots import LevelStream, run_offset  # noqa: E402
from explorer.ui.widgets import Explorer  # noqa: E402


def lv(i, technique="bfs4k", kernel="single-block", direction="top-down"):
    return LevelStats(level=i, frontier_in=1, edges_examined=2, discovered=1, frontier_out=1, dup_generated=0,
                      dup_detected=0, dup_undetected=0, technique=technique, kernel=kernel, direction=direction,
                      time_ms=0.5)


def test_ranking_sorts_by_time_with_the_speed_up_against_the_first():
    runs = [(name, SimpleNamespace(elapsed_ms=ms, total_ms=ms / 2, num_levels=4, validation="ok"))
            for name, ms in (("A", 4.0), ("B", 2.0), ("C", 8.0))]
    rows = ranking(runs)
    assert [r["run"] for r in rows] == ["B", "A", "C"] and [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["speed-up"] for r in rows] == [2.0, 1.0, 0.5]


def test_labels_name_the_knobs_that_differ_from_the_defaults(explorer):
    panel = explorer.tools.panel("comparison")
    assert panel._label(0, "bfs4k", {"K1": 4}) == "A bfs4k"
    assert panel._label(2, "bfs4k", {"K1": 32, "dedup": "none"}) == "C bfs4k K1=32 dedup=none"
    assert panel._label(26, "bfs4k", {}) == "#27 bfs4k"


def test_identical_runs_are_drawn_apart_and_the_legend_hides_a_run():
    assert len({run_offset(i) for i in range(5)}) == 5 and run_offset(0) == 0.0
    stream = LevelStream(max_runs=3)
    for label in ("a", "b"):
        stream.push_many([lv(0), lv(1)], label)
    fig = stream.figures["frontier"]
    xs = [ov.glyphs["frontier"].renderers[0].glyph.x for ov in stream.overlays[:2]]
    assert xs[0] == "level" or xs[0].field == "level"
    assert xs[1].transform.value == run_offset(1) != 0  # run 2 drawn beside run 1
    runs_legend = next(m for m in fig.below if isinstance(m, Legend) and m.name == "runs")
    assert runs_legend.click_policy == "hide"


def test_the_timeline_has_a_row_per_run_and_a_colour_per_kind_of_level():
    stream = LevelStream()
    plot = TimelinePlot(x_range=stream.figures["frontier"].x_range)
    plot.add([lv(0), lv(1, kernel="multi-block")], "A")
    plot.add([lv(0, technique="bottom-up", kernel="multi-block", direction="bottom-up")], "B")
    assert plot.figure.x_range is stream.figures["frontier"].x_range  # aligned with the frontier plot
    assert plot.figure.y_range.factors == ["B", "A"]  # the first run on top
    assert plot.source.data["run"] == ["A", "A", "B"] and plot.source.data["level"] == [0, 1, 0]
    assert plot.mapper.factors == ["bfs4k · single-block · top-down", "bfs4k · multi-block · top-down",
                                   "bottom-up · multi-block · bottom-up"]


@pytest.fixture(scope="module")
def explorer():
    return Explorer(graph="bfs4k_fig2", source=0)


def test_controls_run_every_entry_on_one_graph_and_source(explorer, monkeypatch):
    panel = explorer.tools.panel("comparison")
    calls = []
    real = api.run_bfs

    def spy(graph, source, technique, knobs, **kw):
        calls.append((graph.name, source, technique, dict(knobs)))
        return real(graph, source, technique, knobs, **kw)
    monkeypatch.setattr(compare.api, "run_bfs", spy)
    panel.entries.clear()
    panel.techniques.value = ("topdown-queue",)
    panel.add_button.click()
    explorer.technique.value = "topdown-queue"
    explorer.set_knobs({"block_threads": 64})
    panel.add_current.click()  # the same technique with another knob set
    assert list(panel.entry_list.options)[1] == "B topdown-queue block_threads=64"
    panel.run_button.click()
    assert "all valid" in panel.status.value, panel.status.value
    assert [c[2] for c in calls] == ["topdown-queue", "topdown-queue"]
    assert {c[:2] for c in calls} == {("bfs4k_fig2", api.Vertex(0))} and calls[1][3]["block_threads"] == 64
    labels = [label for label, _ in panel.results]
    for label, result in panel.results:
        assert result.validation == "ok"
        assert panel.stream.sources[label].data["frontier_in"] == [1, 3, 4, 2]
    assert panel.timeline.source.data["run"] == [labels[0]] * 4 + [labels[1]] * 4
    assert "Ranking" in panel.table.value and "speed-up against A topdown-queue" in panel.table.value
    assert "One run each: a difference of a few percent can be the machine's noise" in panel.table.value
    assert panel.table.value.count("1.00×") >= 1


def test_bad_comparisons_are_said_in_the_status(explorer):
    panel = explorer.tools.panel("comparison")
    panel.entries.clear()
    panel._show_entries()
    panel.run_button.click()
    assert "nothing to compare" in panel.status.value
    with pytest.raises(ValueError, match=f"at most {MAX_RUNS} runs"):
        panel.add(*["topdown-queue"] * (MAX_RUNS + 1))
    panel.entries.clear()
    panel._clicked(lambda: panel.add(("bfs4k", {"K1": 3})))
    assert "K1=3 is invalid" in panel.status.value and panel.entries == []
    panel.entry_list.index = None
    panel.remove_button.click()
    assert "highlight a run" in panel.status.value


def test_a_graph_with_its_own_ids_is_compared_from_the_vertex_asked_for():
    # The panel converts the Explorer's source (the file's id 40) once, runs from that vertex and
    # shows the id.
    g = graphs.from_edges([10, 10, 20, 30, 40], [20, 30, 30, 40, 50], directed=False, remap=True)
    ex = Explorer(graph=g, source=40)
    panel = ex.tools.panel("comparison")
    panel.entries.clear()
    panel.techniques.value = ("topdown-queue",)
    panel.add_button.click()
    panel.run_button.click()
    assert "from vertex 40, all valid" in panel.status.value, panel.status.value
    (_, result), = panel.results
    assert result.source == 3 and result.source_id == 40 and list(result.distances) == [2, 2, 1, 0, 1]


# ------------------------------------------------------------------ the technique plot and the runs it keeps

def test_technique_markers_sit_on_their_category_labels():
    # Runs were shifted up or down by (i - 2) * 0.15 bands: the first run sat 0.3 below its label,
    # between two. Every run's markers are on the label; runs sit apart along the level instead.
    stream = LevelStream()
    for label in "abcdefg":
        stream.push_many([lv(0), lv(1, kernel="multi-block")], label)
    for i, ov in enumerate(stream.overlays):
        glyph = ov.glyphs["technique"].renderers[0].glyph
        assert glyph.y == "step"
        assert glyph.x == "level" if run_offset(i) == 0 else glyph.x.transform.value == run_offset(i)


def test_the_plots_say_which_runs_they_keep_and_drop_the_steps_of_runs_gone():
    stream = LevelStream(max_runs=2)
    stream.push_many([lv(0, technique="bottom-up", kernel="multi-block", direction="bottom-up")], "a")
    stream.push_many([lv(0, technique="bfs4k")], "b")
    assert stream.shown_note() == ""
    yr = stream.figures["technique"].y_range
    assert yr.factors == ["bottom-up · multi-block", "bfs4k · single-block"]
    stream.push_many([lv(0, technique="bfs4k", kernel="multi-block")], "c")  # run a leaves the plots
    assert stream.labels == ["b", "c"]
    assert yr.factors == ["bfs4k · single-block", "bfs4k · multi-block"]  # no empty row for a's step
    note = "the last 2 of 3 runs (the plots keep 2)"
    assert stream.shown_note() == note
    for fig in stream.figures.values():
        assert next(m for m in fig.below if isinstance(m, Legend) and m.name == "runs").title == note
