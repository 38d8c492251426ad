"""The Explorer's shortest-paths mode, headless under the simulator: the problem switch, knobs
from the SSSP techniques' declarations, weighted generators, Run streaming one row per iteration,
the distances against scipy, and the message for a graph without weights."""
import numpy as np
import pytest

W = pytest.importorskip("ipywidgets", reason="the Explorer needs ipywidgets (pip install -e .[notebook])")

from explorer.knobs import KnobError  # noqa: E402
from explorer.reference.sssp import reference_sssp  # noqa: E402
from explorer.sssp import implementation, sssp_techniques  # noqa: E402
from explorer.ui import live  # noqa: E402
from explorer.ui.sssp_view import SHORTEST_PATHS, distance_preview  # noqa: E402
from explorer.ui.widgets import Explorer  # noqa: E402

GRID = "gen:grid2d:rows=3,cols=4,weights=integer,weight_high=9"


def test_the_problem_switch_offers_the_sssp_techniques_and_their_declared_knobs():
    ex = Explorer(graph="bfs4k_fig2")
    assert ex.sssp.technique.layout is not None and ex.technique_row.children[0] is ex.technique_label
    ex.problem.value = SHORTEST_PATHS
    assert ex.technique_row.children[0] is ex.sssp.technique_label
    assert ex.sssp.knobs_panel in ex.problem_box.children and ex.knobs_panel not in ex.problem_box.children
    assert list(ex.sssp.technique.options) == [t.value for t in sssp_techniques()]
    for tech in ex.sssp.technique.options:
        specs = implementation(tech).Knobs.specs()
        widgets = ex.sssp.knob_widgets_of[tech]
        assert set(widgets) == {s.name for s in specs}
        for s in specs:
            if s.choices is None and s.kind is int:
                assert (widgets[s.name].min, widgets[s.name].max) == (s.low, s.high)
    ex.sssp.technique.value = "h-bf"
    with pytest.raises(KnobError, match="K3"):
        ex.sssp.set_knobs({"K3": 2000})
    ex.sssp.technique.value = "delta-stepping"
    with pytest.raises(KnobError, match="delta"):
        ex.sssp.set_knobs({"delta": -1.0})
    ex.sssp.set_knobs({"delta": 4.0})
    assert ex.sssp.knob_values()["delta"] == 4.0
    with pytest.raises(KnobError):
        ex.sssp.set_knobs({"no_such_knob": 1})


def test_a_generator_offers_weights_only_for_shortest_paths_and_keeps_the_structure():
    ex = Explorer(graph="gen:grid2d:rows=3,cols=4")
    assert "weights" not in [w.description for w in ex.gen_params.children]
    ex.problem.value = SHORTEST_PATHS
    params = {w.description: w.value for w in ex.gen_params.children}
    assert params["weights"] == "integer" and (params["rows"], params["cols"]) == (3, 4)
    assert ex.current_graph().weights is not None
    ex.problem.value = "BFS"
    assert "weights" not in [w.description for w in ex.gen_params.children]
    assert ex.current_graph().weights is None


def test_run_streams_every_iteration_and_its_distances_equal_scipys(monkeypatch):
    monkeypatch.setattr(live, "FEED_INTERVAL_S", 0.0)  # every iteration its own batch, as on a slow run
    ex = Explorer(graph=GRID, source=0, problem="shortest paths")
    pushes = []
    push = ex.sssp.stream.push_many
    monkeypatch.setattr(ex.sssp.stream, "push_many", lambda recs, label: pushes.append(len(recs)) or push(recs, label))
    result = ex.run(technique="delta-stepping")
    g = ex.current_graph()
    assert pushes == [1] * len(result.iterations)  # one row per push, pushed as each iteration came
    (label, src), = ex.sssp.stream.sources.items()
    assert src.data["frontier_in"] == [r.frontier_in for r in result.iterations]
    assert src.data["relaxations"] == [r.relaxations for r in result.iterations]
    assert src.data["improvements"] == [r.improvements for r in result.iterations]
    assert sum(src.data["improvements"]) > 0 and any(b == b for b in src.data["bucket_plot"])  # not all NaN
    expected, _ = reference_sssp(g, 0)
    np.testing.assert_array_equal(result.as_float(), expected)
    assert result.validation == "ok" and "distances equal scipy" in ex.status.value
    assert ex.sssp.summary.value.count("<tr>") == 2 and distance_preview(result) in ex.sssp.summary.value
    assert f"3: {int(expected[3])}" in distance_preview(result)
    # the output shown is the shortest paths' one; BFS's returns with the switch
    assert ex.output_box.children[0] is ex.sssp.plots_box
    ex.problem.value = "BFS"
    assert ex.output_box.children[0] is ex.plots_box


def test_a_graph_without_weights_is_refused_by_name_and_unit_weights_give_bfs_levels():
    ex = Explorer(graph="bfs4k_fig2", source=0, problem="shortest paths")
    with pytest.raises(ValueError, match="has no weights.*unit weights"):
        ex.run(technique="bellman-ford")
    assert "has no weights" in ex.status.value and not ex.sssp.history
    result = ex.run(unit_weights=True)
    g = ex.current_graph()
    expected, _ = reference_sssp(g, 0, np.ones(g.num_arcs))
    np.testing.assert_array_equal(result.as_float(), expected)
    assert result.weights == "unit weights" and result.validation == "ok"


def test_the_shortest_paths_controls_show_every_label_whole():
    from test_layout import labels_cut

    ex = Explorer(graph="gen:grid2d:rows=3,cols=4", problem="shortest paths")
    ex.graph_mode.value = "generator"
    assert labels_cut(ex.children[0]) == []
    # a Dropdown with a description shows no tooltip in the browser: each sits behind a label instead
    shown = [w for w in _walk(ex.children[0]) if isinstance(w, W.Dropdown)]
    assert ex.sssp.technique in shown and all(w.tooltip and not w.description for w in shown)


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


# ------------------------------------------------------------------ the weighted classroom

@pytest.mark.parametrize("technique", ["h-bf", "delta-stepping"])
def test_the_weighted_classroom_shows_each_steps_tentative_distances_from_the_run(technique):
    ex = Explorer(graph=GRID, source=0, problem="shortest paths")
    ex.sssp.technique.value = technique
    ex.classroom_button.click()
    (room,) = ex.classroom_box.children
    g = ex.current_graph()
    expected, _ = reference_sssp(g, 0)
    assert len(room.frames) == len(room.result.iterations) + 1  # the set-up, then a frame a step
    np.testing.assert_array_equal(room.frames[-1].dist, expected)
    lowered = 0
    for before, f in zip(room.frames, room.frames[1:]):
        assert (f.dist <= before.dist).all()
        assert set(f.improved.tolist()) == set(np.flatnonzero(f.dist < before.dist).tolist())
        assert len(f.improved) <= f.record.improvements  # a vertex lowered twice in a step counts twice there
        lowered += len(f.improved)
        w = dict(zip(zip(np.repeat(np.arange(g.num_vertices), g.degrees()).tolist(), g.indices.tolist()),
                     g.weights.tolist()))
        for u, v in f.tight:
            assert v in f.improved and f.dist[u] + w[(u, v)] == f.dist[v]
        assert set(f.improved.tolist()) <= {v for _, v in f.tight}  # every lowered vertex has its arc
    assert lowered >= np.isfinite(expected).sum() - 1
    # Step, Back and the drawing: the table and the node labels are the frame's distances
    assert room.back_button.disabled and not room.step_button.disabled
    room.step_button.click()
    f = room.frame
    assert room.state.position == 1 and f.record.iteration == 0
    assert room.node_source.data["dist"][0] == "0" and room.node_source.data["dist"][int(f.improved[0])] == \
        str(int(f.dist[f.improved[0]]))
    assert sum(c == "#d62728" for c in room.edge_source.data["color"]) == len(f.tight)
    assert "step 0 (relax" in room.caption.value and "tentative distance" in room.table.value
    room.back_button.click()
    assert room.state.position == 0 and room.node_source.data["dist"].count("∞") == g.num_vertices - 1


def test_the_weighted_classroom_is_drawn_at_its_step_when_displayed():
    from test_classroom import _sent

    from explorer.ui.sssp_classroom import open_weighted

    room = open_weighted(GRID, source=0, technique="bellman-ford")
    room.step()
    room.step()
    room._repr_mimebundle_()
    nodes = _sent(room.view, "weighted-nodes")
    assert nodes["dist"] == room.node_source.data["dist"] and "∞" in nodes["dist"] and "0" in nodes["dist"]
    assert _sent(room.view, "weighted-edges")["color"] == room.edge_source.data["color"]
    assert len(set(room.weight_source.data["text"])) > 1  # the weights are drawn on the edges


def test_the_weighted_classroom_refuses_a_graph_without_weights_by_name():
    ex = Explorer(graph="bfs4k_fig2", source=0, problem="shortest paths")
    assert ex.open_classroom() is None and "has no weights" in ex.status.value
    ex.sssp.unit_weights.value = True
    room = ex.open_classroom()
    assert room is not None and room.weight_source.data["text"] == ["1"] * len(room.edge_keys)
