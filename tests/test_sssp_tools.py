"""The Explorer's tool tabs in shortest-paths mode, headless under the simulator: each problem's
panels in the tabs (and none of the other's), Comparison of SSSP techniques, Tuning of SSSP
knobs through explorer.sweep, Duplicates per dedup setting, and the offline Export. Small
weighted grids and the simulator's knobs keep each test to seconds."""
import csv
import io
import json
import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets", reason="the Explorer needs ipywidgets (pip install -e .[notebook])")

from explorer import backend, graphs  # noqa: E402
from explorer.knobs import KnobError  # noqa: E402
from explorer.reference.sssp import reference_sssp  # noqa: E402
from explorer.sweep import SweepResult, format_sweep, load_sweep, plan_sweep, run_sweep  # noqa: E402
from explorer.ui.sssp_tools import SSSPComparePanel, SSSPDuplicatesPanel, dedup_settings  # noqa: E402
from explorer.ui.sssp_view import BFS, SHORTEST_PATHS  # noqa: E402
from explorer.ui.widgets import Explorer  # noqa: E402

GRID = "gen:grid2d:rows=3,cols=4,weights=integer,weight_high=9"
SIM = {"block_threads": 32, "single_block_threads": 32}  # a run in about a second under the simulator


@pytest.fixture
def ex():
    return Explorer(graph=GRID, source=0, problem="shortest paths")


def _text(widget) -> str:
    """Every HTML a panel shows, as one string."""
    out = [getattr(widget, "value", "")] if hasattr(widget, "value") and isinstance(widget.value, str) else []
    for child in getattr(widget, "children", ()):
        out.append(_text(child))
    return " ".join(out)


def test_the_tabs_hold_the_chosen_problems_panels_and_nothing_of_the_others():
    ex = Explorer(graph=GRID, source=0)
    bfs_tuning = ex.tools.panel("tuning")
    assert "delta" not in bfs_tuning.knob1.options
    bfs_compare = ex.tools.panel("comparison")
    ex.problem.value = SHORTEST_PATHS
    sp_tuning = ex.tools.children[0].children[0]
    assert sp_tuning is ex.tools.panel("tuning") and sp_tuning is not bfs_tuning
    assert ex.tools.children[1].children == ()  # the BFS comparison is gone; the SSSP one is built when opened
    ex.sssp.technique.value = "delta-stepping"
    assert "delta" in sp_tuning.knob1.options
    compare = ex.tools.panel("comparison")
    assert isinstance(compare, SSSPComparePanel) and ex.tools.children[1].children == (compare,)
    assert set(compare.techniques.options) == {"bellman-ford", "h-bf", "delta-stepping"}
    ex.tools.selected_index = 2  # opening a tab builds its panel of this problem
    assert isinstance(ex.tools.children[2].children[0], SSSPDuplicatesPanel)
    shown = _text(ex.tools)
    assert "hash64" not in re.sub(r"<small style='color:#555'>.*?</small>", "", shown)  # only in the BFS-only note
    ex.problem.value = BFS
    assert ex.tools.children[0].children == (bfs_tuning,) and ex.tools.children[1].children == (bfs_compare,)
    assert ex.tools.children[2].children[0] is not ex.tools.built(SHORTEST_PATHS)["Duplicates"]
    ex.problem.value = SHORTEST_PATHS
    assert ex.tools.children[1].children == (compare,)


def test_the_comparison_runs_sssp_techniques_checks_their_distances_and_names_iterations(ex):
    ex.sssp.technique.value = "delta-stepping"
    ex.sssp.set_knobs({"delta": 4.0})
    panel = ex.tools.panel("comparison")
    panel.techniques.value = ("bellman-ford",)
    panel.add_button.click()
    panel.add_current.click()
    sim = backend.current().is_simulator  # the simulator's knobs are applied and named there
    assert panel.entry_list.options == (("A bellman-ford block_threads=32",
                                         "B delta-stepping block_threads=32 delta=4.0 single_block_threads=32")
                                        if sim else ("A bellman-ford", "B delta-stepping delta=4.0"))
    panel.run_button.click()
    assert "equal scipy" in panel.status.value, panel.status.value
    assert ("not GPU times" in panel.status.value) == sim, panel.status.value
    expected, _ = reference_sssp(ex.current_graph(), 0)
    for (label, r), (tech, _) in zip(panel.results, panel.entries):
        assert r.technique == tech and r.validation == "ok"
        np.testing.assert_array_equal(r.as_float(), expected)
        src = panel.stream.sources[label]
        assert src.data["relaxations"] == [x.relaxations for x in r.iterations]  # per-iteration plots
    table = panel.table.value
    for word in ("iterations", "relaxations", "improvements", "wall ms", "speed-up", "equal"):
        assert f">{word}<" in table or word in table
    assert "levels" not in table and "edges examined" not in table
    # a result that differs from the first run's is called so
    label, bad = panel.results[1]
    bad.distances = bad.distances.copy()
    bad.distances[5] += 1
    panel._show_ranking()
    assert "DIFFER" in panel.table.value


def test_the_comparison_lists_a_technique_the_weights_refuse_and_runs_the_others():
    g = graphs.CSRGraph(np.array([0, 1, 2, 2]), np.array([1, 2]), True, name="neg", weights=np.array([2.0, -1.0]))
    ex = Explorer(graph=g, source=0, problem="shortest paths")
    panel = ex.tools.panel("comparison")
    panel.compare([("bellman-ford", {"block_threads": 32}), ("delta-stepping", SIM)])
    assert [label for label, _ in panel.results] == ["A bellman-ford block_threads=32"]
    assert panel.results[0][1].as_float().tolist() == [0.0, 2.0, 1.0]
    (label, why), = panel.failed
    assert label.startswith("B delta-stepping") and "negative" in why.lower() and "not run" in panel.table.value


def test_the_sweep_layer_runs_a_shortest_path_technique_checked_against_scipy(tmp_path):
    g = graphs.generate("grid2d", rows=3, cols=4, weights="integer", weight_high=9)
    with pytest.raises(KnobError, match="delta"):
        plan_sweep("delta-stepping", {"delta": [-1.0]}, problem="sssp")
    with pytest.raises(ValueError, match="unknown shortest-path technique"):
        plan_sweep("bfs4k", {"K1": [4]}, problem="sssp")
    with pytest.raises(ValueError, match="problem 'apsp' is unknown"):
        plan_sweep("h-bf", {"K1": [4]}, problem="apsp")
    for mode in ("grid", "random"):  # delta's range has no end: the user's values, not NaN or an overflow
        with pytest.raises(KnobError, match=r"knob delta: its range \[0.0, inf\] has no end .* give the values"):
            plan_sweep("delta-stepping", {"delta": None}, problem="sssp", mode=mode, samples=3)
    plan = plan_sweep("delta-stepping", {"delta": [1.0, 4.0]}, problem="sssp", base=SIM)
    result = run_sweep(g, 0, plan, repeats=2)
    assert result.problem == "sssp" and [p.ok for p in result.points] == [True, True]
    assert all(p.levels and len(p.times_ms) == 2 for p in result.points)
    assert "iterations" in format_sweep(result)
    again = load_sweep(result.save(tmp_path / "s.json"))
    assert again.problem == "sssp"
    old = result.to_dict()
    del old["problem"]  # a file written before sweeps had problems is a BFS sweep
    assert SweepResult.from_dict(old).problem == "bfs"


def test_the_tuning_tab_sweeps_sssp_knobs_says_noise_and_applies_to_the_sssp_controls(ex):
    ex.sssp.technique.value = "delta-stepping"
    panel = ex.tools.panel("tuning")
    sim = backend.current().is_simulator
    assert "scipy" in _text(panel)
    assert ("Times are simulation times, not GPU times" in panel.limit_note.value) == sim
    result = panel.run_sweep(knob1="delta", values1="1, 4", repeats=2)
    assert result.problem == "sssp" and result.technique == "delta-stepping"
    # the Explorer's other knobs (the simulator's small blocks)
    assert result.base == ({"block_threads": 32, "single_block_threads": 32} if sim else {})
    assert all(p.usable for p in result.points)
    assert "median shortest-path time" in panel.plot.figure.title.text
    assert ">iterations<" in panel.table.value and ">levels<" not in panel.table.value
    verdict = result.verdict()
    assert ("not GPU times" in panel.best_text.value) == sim
    assert verdict.measured or "within noise" in panel.best_text.value.lower() or "no difference" in \
        panel.best_text.value.lower()
    knobs = panel.apply_best()
    assert ex.sssp.knob_values()["delta"] == knobs["delta"] and ex.sssp.technique.value == "delta-stepping"
    assert ex.technique.value != "delta-stepping"  # the BFS controls are untouched


def test_the_tuning_tab_refuses_a_graph_without_weights_by_name_and_takes_unit_weights():
    ex = Explorer(graph="gen:grid2d:rows=3,cols=3", source=0, problem="shortest paths")
    for w in ex.gen_params.children:
        if w.description == "weights":
            w.value = "none"
    ex.sssp.technique.value = "bellman-ford"
    panel = ex.tools.panel("tuning")
    panel.knob1.value = "dedup"
    panel.run_button.click()
    panel.worker.wait(60)
    assert "has no weights" in panel.status.value and panel.result is None
    ex.sssp.unit_weights.value = True
    result = panel.run_sweep(repeats=1)
    assert result.graph.endswith("(unit weights)") and all(p.usable for p in result.points)


def test_dedup_settings_take_each_choice_and_name_a_knob_a_rule_needed():
    from explorer.sssp import implementation

    Knobs = implementation("h-bf").Knobs
    settings = dedup_settings("h-bf", Knobs.defaults(), Knobs)
    assert [k["dedup"] for k, _ in settings] == ["stamp", "none"]
    (stamp, n1), (none, n2) = settings
    assert n1 == "" and none["classify"] == "off" and n2.startswith("classify=off") and "dedup='stamp'" in n2
    Delta = implementation("delta-stepping").Knobs
    assert dedup_settings("delta-stepping", Delta.defaults(), Delta) == [(Delta.defaults(), "")]


def test_the_duplicates_tab_runs_each_dedup_setting_and_says_the_bfs_view_does_not_apply(ex):
    ex.sssp.technique.value = "h-bf"
    panel = ex.tools.panel("duplicates")
    assert "has no counterpart here" in _text(panel)
    results = panel.run()
    assert [r.knobs["dedup"] for _, r in results] == ["stamp", "none"]
    expected, _ = reference_sssp(ex.current_graph(), 0)
    for _, r in results:
        np.testing.assert_array_equal(r.as_float(), expected)
    fig_sources = [m for m in panel.plot_box.children[0]._model.references() if getattr(m, "name", "") ==
                   "sssp-duplicates"]
    assert sorted(s.data["duplicates"] for s in fig_sources) == sorted(
        [x.duplicates for x in r.iterations] for _, r in results)
    table = panel.table.value
    assert "dropped (queued once)" in table and "queued again" in table and "classify=off" in table


def test_the_export_writes_the_sssp_runs_as_an_offline_report_json_and_csv(ex, tmp_path):
    ex.run(technique="h-bf")
    ex.problem.value = BFS
    ex.run(technique="topdown-queue")  # a BFS run: not in the shortest paths' export
    ex.problem.value = SHORTEST_PATHS
    ex.tools.panel("comparison").compare([("bellman-ford", {"block_threads": 32})])
    paths = ex.tools.panel("export").export(tmp_path / "out")
    html = paths["report"].read_text()
    assert not re.search(r"<script[^>]+src=", html) and "Bokeh" in html  # BokehJS inline: opens offline
    label, hbf = ex.sssp.history[0]
    for text in (label, "h-bf", "compare A bellman-ford", "the graph&#x27;s", "int64", "Distances",
                 "Per-iteration records", "relaxations", "first vertices"):
        assert text in html, text
    assert "simulator" in html.lower() and "topdown-queue" not in html
    doc = json.loads(paths["json"].read_text())
    assert [r["label"] for r in doc["runs"]] == [label, "compare A bellman-ford block_threads=32"]
    assert doc["runs"][0]["summary"]["knobs"] == hbf.knobs and len(doc["runs"][0]["iterations"]) == len(hbf.iterations)
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    runs = [ex.sssp.history[0], ex.tools.panel("comparison").results[0]]
    assert len(rows) == sum(len(r.iterations) for _, r in runs)
    assert rows[0]["weights"] == "the graph's" and rows[0]["technique"] == "h-bf"
