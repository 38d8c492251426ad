"""The classroom: the step-through state machine, the frames a run replays into (every
registered technique), the thread assignment by each mapping rule (BFS-4K's Fig. 6), and the
widget headless: controls -> engine calls -> data sources."""
import html

import numpy as np
import pytest

from explorer import api, graphs
from explorer.reference import cpu_bfs
from explorer.stats import Direction, Kernel, LevelStats
from explorer.techniques import (KnobError, Technique, implementation, implemented_techniques, make_knobs)
from explorer.ui import stepthrough
from explorer.ui.stepthrough import (ClassroomError, StepThrough, assignment_for, check_size, classroom_note,
                                     replay)

W = pytest.importorskip("ipywidgets", reason="the classroom needs ipywidgets (pip install -e .[notebook])")

FIG2_FRONTIERS = [[0], [1, 2, 3], [4, 5, 6, 8], [7, 9]]


@pytest.fixture(scope="module")
def fig2():
    return graphs.sample_graph("bfs4k_fig2")


def _run(g, technique, knobs=None, source=0):
    impl = implementation(technique)
    knobs = make_knobs(technique, {**impl.simulator_knobs, **(knobs or {})})
    return api.run_bfs(g, source, technique, knobs).complete(), impl, knobs


# ------------------------------------------------------------------ the state machine

def test_step_and_back_stop_at_the_ends():
    s = StepThrough(3)
    assert (s.position, s.at_start, s.at_end) == (0, True, False)
    assert not s.back() and s.position == 0
    assert s.step() and s.step() and s.position == 2 and s.at_end
    assert not s.step() and s.position == 2
    assert s.back() and s.position == 1
    assert s.enabled() == {"step": True, "back": True, "play": True, "stop": False}


def test_play_ticks_to_the_end_then_stops_and_replays_from_the_start():
    s = StepThrough(3)
    assert s.play() and s.playing
    assert s.enabled() == {"step": False, "back": False, "play": False, "stop": True}
    assert s.tick() and s.position == 1 and s.playing
    assert s.tick() and s.position == 2 and not s.playing  # the last level stops it
    assert not s.tick() and s.position == 2
    assert s.play() and s.position == 0  # Play at the end starts over
    s.stop()
    assert not s.playing and not s.tick() and s.position == 0


def test_nothing_to_play_and_bad_positions():
    assert not StepThrough(0).play() and not StepThrough(1).play()
    assert not StepThrough(0).step() and not StepThrough(0).goto(0)
    with pytest.raises(ValueError, match="level 5 is out of range: this run has levels 0..2"):
        StepThrough(3).goto(5)
    with pytest.raises(ValueError, match="levels must be >= 0"):
        StepThrough(-1)


# ------------------------------------------------------------------ frames from a run

def test_a_graph_too_large_is_refused_with_the_reason():
    g = graphs.generate("grid2d", rows=20, cols=20)
    with pytest.raises(ClassroomError, match=r"400 vertices .* at most 300 vertices .*unreadable.*bfs4k_fig2"):
        check_size(g)
    check_size(graphs.generate("grid2d", rows=10, cols=10))


@pytest.mark.parametrize("tech", [t.value for t in implemented_techniques()])
def test_every_registered_technique_replays_level_by_level(fig2, tech):
    result, impl, knobs = _run(fig2, tech)
    frames = replay(fig2, result, impl, knobs)
    assert [f.level for f in frames] == list(range(len(result.levels))) == [0, 1, 2, 3]
    assert [f.frontier.tolist() for f in frames] == FIG2_FRONTIERS  # from the run's distances
    assert [f.record for f in frames] == result.levels  # what ran: the records themselves
    for f in frames:
        # The edges drawn (the rule's) are as many as the record says the level examined.
        assert f.edges_agree, (tech, f.level, f.record.edges_examined, len(f.examined))
        assert f.assignment.rule and all(set(stepthrough.ASSIGNMENT_COLUMNS) <= set(r) for r in f.assignment.rows)
        assert all(parent in f.reached for parent, _ in f.tree)
    assert classroom_note(impl)


def test_duplicates_are_marked_where_they_can_be_born(fig2):
    # The teaching graph's story: 8 is reached from 2 and 3 in step two, 7 and 9 twice in step three.
    result, impl, knobs = _run(fig2, "topdown-queue")
    frames = replay(fig2, result, impl, knobs)
    assert [f.candidates.tolist() for f in frames] == [[], [8], [7, 9], []]
    outcomes = {r["edge"]: r["outcome"] for r in frames[1].assignment.rows}
    assert outcomes["3 → 8"] == "claims 8 (its parent)" or outcomes["2 → 8"] == "claims 8 (its parent)"
    assert "racy" not in " ".join(outcomes.values())  # compare-and-swap: one thread wins


def test_bottom_up_levels_have_no_duplicate_candidates(fig2):
    lv = LevelStats(level=1, frontier_in=3, edges_examined=None, discovered=4, frontier_out=4, dup_generated=0,
                    dup_detected=0, dup_undetected=0, technique="x", kernel=Kernel.MULTI_BLOCK,
                    direction=Direction.BOTTOM_UP)
    dist, parent = cpu_bfs(fig2, 0)
    a = assignment_for(lv, fig2, dist, parent, np.flatnonzero(dist == 1), {"block_threads": 32}, race=False)
    # Vertex 8's thread checks 2 (in the frontier): found, stop; 3 is never checked.
    rows8 = [r for r in a.rows if r["vertex"] == 8]
    assert [r["edge"] for r in rows8] == ["2 → 8"] and "parent of 8, stop" in rows8[0]["outcome"]
    assert stepthrough.duplicate_candidates(fig2, dist, np.flatnonzero(dist == 1), Direction.BOTTOM_UP).size == 0


def _fig6_graph():
    """Source 0 -> frontier vertices 1..6 with out-degrees 3, 1, 4, 6, 3, 3 (BFS-4K Fig. 6's six
    vertices: 20 edges for 20 lanes), each edge to a leaf of its own."""
    degrees = [3, 1, 4, 6, 3, 3]
    src, dst, leaf = [0] * 6, list(range(1, 7)), 7
    for v, d in zip(range(1, 7), degrees):
        for _ in range(d):
            src.append(v), dst.append(leaf)
            leaf += 1
    return graphs.from_edges(np.array(src), np.array(dst), num_vertices=leaf, directed=True, name="fig6")


def _level(extras, kernel=Kernel.MULTI_BLOCK, frontier_in=6):
    return LevelStats(level=1, frontier_in=frontier_in, edges_examined=20, discovered=20, frontier_out=20,
                      dup_generated=0, dup_detected=0, dup_undetected=0, technique="bfs4k", kernel=kernel,
                      extras=extras)


def test_edge_discover_assigns_lanes_as_bfs4k_fig6():
    g = _fig6_graph()
    dist, parent = cpu_bfs(g, 0)
    frontier = np.flatnonzero(dist == 1)
    a = assignment_for(_level({"edge_discover": True, "warp_size": 32}), g, dist, parent, frontier,
                       {"K6": 128}, race=True)
    lanes = {}
    for r in a.rows:
        lanes.setdefault(r["vertex"], []).append(r["lane"])
    # Fig. 6(b): threads 0-2 -> vertex 0, 3 -> 1, 4-7 -> 2, 8-13 -> 3, 14-16 -> 4, 17-19 -> 5.
    assert [lanes[v] for v in range(1, 7)] == [[0, 1, 2], [3], [4, 5, 6, 7], [8, 9, 10, 11, 12, 13],
                                                [14, 15, 16], [17, 18, 19]]
    assert {r["block"] for r in a.rows} == {0} and {r["warp"] for r in a.rows} == {0}
    assert "Fig. 6" in a.rule and "computed on the host" not in a.rule  # the page says that part
    assert len(a.rows) == 20 and {(r["_u"], r["_v"]) for r in a.rows} == {(int(u), int(v)) for u in frontier
                                                                          for v in g.neighbors(u)}


def test_edge_discover_ext_skips_the_search_inside_one_vertex():
    # One vertex of degree 70: rounds 0 and 1 lie inside it (EXT), round 2 holds its last 6 edges.
    g = graphs.from_edges(np.array([0] + [1] * 70), np.array([1] + list(range(2, 72))), num_vertices=72,
                          directed=True, name="ext")
    dist, parent = cpu_bfs(g, 0)
    a = assignment_for(_level({"edge_discover": True}, frontier_in=1), g, dist, parent, np.array([1]),
                       {"K6": 64}, race=True)
    rounds = [r["round"] for r in a.rows]
    assert rounds.count("0 [EXT: no search]") == 32 and rounds.count("1 [EXT: no search]") == 32
    assert rounds.count("2") == 6


def test_virtual_warps_stride_a_vertex_edges_over_their_lanes():
    g = _fig6_graph()
    dist, parent = cpu_bfs(g, 0)
    a = assignment_for(_level({"warp_size": 4, "edge_discover": False}), g, dist, parent,
                       np.flatnonzero(dist == 1), {"K6": 8}, race=True)
    v4 = [r for r in a.rows if r["vertex"] == 4]  # frontier entry 3, degree 6
    assert [(r["vwarp"], r["lane"], r["thread"], r["round"]) for r in v4] == [
        (3, 0, 12, "0"), (3, 0, 12, "1"), (3, 1, 13, "0"), (3, 1, 13, "1"), (3, 2, 14, "0"), (3, 3, 15, "0")]
    assert {r["block"] for r in v4} == {1}  # threads 12..15 in blocks of 8
    idle = [r for r in a.rows if r["vertex"] == 2]  # degree 1: lanes 1..3 have nothing
    assert [r["outcome"].startswith("idle") for r in idle] == [False, True, True, True]


def test_a_single_block_strides_over_the_frontier():
    # One block of 2 threads over 6 frontier entries (Luo's block layer): thread i % 2 in pass i // 2.
    # The pass has a column of its own, a whole number (a round of 0 is not a number to format as "0.0").
    g = _fig6_graph()
    dist, parent = cpu_bfs(g, 0)
    a = assignment_for(_level({}, kernel=Kernel.SINGLE_BLOCK), g, dist, parent, np.flatnonzero(dist == 1),
                       {"block_threads": 2}, race=False)
    firsts = {r["vertex"]: (r["thread"], r["block"], r["pass"]) for r in a.rows if r["round"] == "0"}
    assert firsts == {1: (0, 0, 0), 2: (1, 0, 0), 3: (0, 0, 1), 4: (1, 0, 1), 5: (0, 0, 2), 6: (1, 0, 2)}
    assert [r["round"] for r in a.rows if r["vertex"] == 1] == ["0", "1", "2"]  # its 3 edges, one a round
    assert "block size 2 (knob block_threads)" in a.caveats
    grid = assignment_for(_level({}), g, dist, parent, np.flatnonzero(dist == 1), {"block_threads": 2}, race=False)
    assert {r["pass"] for r in grid.rows} == {stepthrough.NOT_APPLICABLE}  # a grid of blocks makes one pass


def test_a_technique_without_a_note_shows_its_documentation():
    class Bare:
        technique = Technique.TOPDOWN_QUEUE
        classroom_note = ""
    note = classroom_note(Bare())
    assert note.startswith("Top-down, one thread per frontier vertex") and "Wins on low, even degrees" in note


# ------------------------------------------------------------------ the widget, headless

@pytest.fixture
def room(monkeypatch):
    from explorer.ui.classroom import Classroom

    calls = []
    real = api.run_bfs

    def recording(g, source, technique, knobs, **kw):
        calls.append((g.name, source, technique, knobs, kw))
        return real(g, source, technique, knobs, **kw)

    monkeypatch.setattr(api, "run_bfs", recording)
    r = Classroom(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    r.calls = calls
    return r


def _click(button):
    button.click()


def test_run_calls_the_engine_with_the_controls_and_fills_the_sources(room):
    assert room.step_button.disabled and "no run yet" in room.level_label.value
    assert set(room.node_source.data["fill_color"]) == {"#e0e0e0"}  # grey until a run
    room.knobs_box.value = "block_threads=64"
    _click(room.run_button)
    (name, source, tech, knobs, kw), = room.calls
    assert (name, source, tech.value, knobs.block_threads, kw) == ("bfs4k_fig2", 0, "topdown-queue", 64,
                                                                  {"instrument": True})
    assert "valid BFS" in room.status.value
    # Level 0: one point in the frontier plot, the source ringed red, its neighbours green.
    assert room.frontier_source.data["level"] == [0] and room.frontier_source.data["frontier_in"] == [1]
    nodes = room.node_source.data
    assert nodes["line_color"][0] == "#d62728" and [nodes["line_color"][v] for v in (1, 2, 3)] == ["#2ca02c"] * 3
    assert nodes["fill_color"][4] == "#e0e0e0"
    before = list(nodes["fill_color"])
    _click(room.step_button)
    assert room.state.position == 1 and room.frontier_source.data["level"] == [0, 1]
    assert room.node_source.data["fill_color"] != before  # recoloured: level 2 is reached now
    assert room.dup_source.data["x"] and len(room.dup_source.data["x"]) == 1  # vertex 8
    rows = room.assignment_rows
    assert [r["edge"] for r in rows] == [r["edge"] for r in room.frame.assignment.rows] and len(rows) == 10
    assert [r["vertex"] for r in rows[:3]] == ["1", "1", "1"] and [r["thread"] for r in rows[:4]] == ["0", "0", "0", "1"]
    assert all(html.escape(r["outcome"]) in room.assignment_table.value for r in rows)  # every outcome whole
    edges = room.edge_source.data
    orange = {frozenset((s, e)) for s, e, c in zip(edges["start"], edges["end"], edges["line_color"])
              if c == "#ff7f0e"}
    assert orange == {frozenset(a) for a in room.frame.examined}
    assert "Level 1" in room.level_info.value and "the record read 3 entries" in room.level_info.value
    assert "computed on the host" in room.assignment_info.value
    _click(room.back_button)
    assert room.frontier_source.data["level"] == [0] and room.back_button.disabled


def test_play_and_stop_drive_the_browser_timer(room):
    room.run()
    _click(room.play_button)
    assert room.ticker.playing and room.state.playing and room.step_button.disabled
    room.ticker.value = 1  # what the browser's timer does, one level per interval
    room.ticker.value = 2
    assert room.state.position == 2 and room.frontier_source.data["level"] == [0, 1, 2]
    _click(room.stop_button)
    assert not room.ticker.playing and not room.state.playing and not room.step_button.disabled
    room.play()
    room.ticker.value = 3  # the last level: playing stops by itself
    room.ticker.playing = False  # as the browser's Play widget does at its max
    assert room.state.position == 3 and not room.state.playing and room.play_button.disabled is False


def test_bad_input_shows_one_line_in_the_status(room):
    _click(room.step_button)
    assert "press Run first" in room.status.value
    room.knobs_box.value = "hash_entries=4"
    _click(room.run_button)
    assert "KnobError" in room.status.value and "unknown knob" in room.status.value
    room.knobs_box.value = ""
    room.graph_box.value = "gen:grid2d:rows=30,cols=30"
    _click(room.run_button)
    assert "ClassroomError" in room.status.value and "at most 300 vertices" in room.status.value
    assert "Traceback" not in room.status.value and not room.calls


def test_the_technique_choices_are_the_registry_and_each_has_its_note(room):
    assert list(room.technique.options) == [t.value for t in implemented_techniques()]
    room.technique.value = "harish"
    assert "every vertex every level" in room.note.value
    with pytest.raises(KnobError):
        room.run(knobs={"K1": 4})  # harish has no K1


def test_the_explorer_offers_the_classroom():
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    room = ex.open_classroom()
    assert ex.classroom_box.children == (room,) and room.result.technique == "topdown-queue"
    assert room.graph is ex.current_graph() and room.frontier_source.data["level"] == [0]
    ex.set_graph("3elt")
    assert ex.open_classroom() is None and "at most 300 vertices" in ex.status.value


def test_lane_efficiency_of_the_load_balancing_lesson():
    from explorer.ui.stepthrough import lane_efficiency

    even = [32] * 64
    assert lane_efficiency(even, 32) == 1.0 and lane_efficiency(even, None) == 1.0
    hub = [1] * 31 + [32]  # one warp, a thread per vertex: 32 rounds for 63 edges
    assert lane_efficiency(hub, 1) == pytest.approx(63 / (32 * 32))
    assert lane_efficiency(hub, None) == pytest.approx(63 / 64)  # edge-discover: 2 rounds of 32 lanes
    assert lane_efficiency([4] * 32, 32) == pytest.approx(4 / 32)  # W above the degrees: idle lanes
    assert lane_efficiency([0, 0], 4) == 1.0
    with pytest.raises(ValueError, match="W=3 must divide 32"):
        lane_efficiency(even, 3)


@pytest.mark.parametrize("extras,rule", [
    ({"expand": "local-warp-search", "warp_size": 32}, "edge-discover"),
    ({"expand": "virtual-warps", "warp_size": 4}, "virtual warps of 4"),
    ({"expand": "work-items", "warp_size": None}, "a thread per frontier entry"),
    ({"expand": "two-phase", "warp_size": None}, "two-phase: the classroom does not model"),
    ({"cta_gathered": 0, "warp_gathered": 1}, "CTA+warp+scan gathering: the classroom does not model"),
])
def test_the_rule_follows_the_strategy_a_record_names(extras, rule):
    # A record naming a mapping the classroom models gets its rule; one it does not model says so
    # and names no thread, rather than a made-up one.
    g = _fig6_graph()
    dist, parent = cpu_bfs(g, 0)
    a = assignment_for(_level(extras), g, dist, parent, np.flatnonzero(dist == 1), {"block_threads": 32}, race=False)
    assert a.rule.startswith(rule) or rule in a.rule, a.rule
    assert len(a.rows) >= 20
    if "does not model" in rule:
        assert {r["thread"] for r in a.rows} == {stepthrough.NOT_APPLICABLE}


def test_the_simulator_block_sizes_are_applied_and_said(room):
    from explorer import backend

    room.run(technique="bfs4k", knobs={"K6": 64})
    _, _, _, knobs, _ = room.calls[-1]
    if backend.current().is_simulator:
        assert knobs.single_block_threads == 32 and knobs.K6 == 64  # the user's K6 is kept
        assert "single_block_threads=32" in room.status.value and "K6=32" not in room.status.value
    else:
        assert knobs.single_block_threads == 1024 and "simulator" not in room.status.value


# ------------------------------------------------------------------ what a person sees

def _sent(view, name):
    """The data of source `name` in what a view drawn now is sent (a display or a reloaded page)."""
    import json

    bundle = json.loads(view.get_state()["render_bundle"])
    found = []

    def walk(x):
        if isinstance(x, dict):
            attrs = x.get("attributes", {})
            if attrs.get("name") == name and "data" in attrs:
                found.append(dict(attrs["data"]["entries"]))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(bundle)
    return found[0]


def test_a_classroom_run_and_stepped_from_code_is_drawn_when_displayed(room):
    # The lesson runs a classroom and steps it before displaying it: the page is sent the level
    # its text speaks of (vertex 8's ring at level 1), not the grey drawing it was built with.
    room.run()
    room.step()
    room._repr_mimebundle_()
    nodes = _sent(room.view, "classroom-nodes")
    assert nodes["fill_color"] == room.node_source.data["fill_color"] and "#e0e0e0" != nodes["fill_color"][4]
    assert len(_sent(room.view, "classroom-duplicates")["x"]) == 1  # vertex 8's magenta ring
    assert _sent(room.view, "classroom-frontier")["level"] == [0, 1]


def test_the_explorers_classroom_button_opens_a_drawn_classroom():
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    ex.classroom_button.click()
    (room,) = ex.classroom_box.children
    nodes = _sent(room.view, "classroom-nodes")
    assert nodes["line_color"][0] == "#d62728" and _sent(room.view, "classroom-frontier")["level"] == [0]


def test_the_buttons_are_disabled_while_a_run_runs(room, monkeypatch):
    # A step pressed during a Run would wait in the kernel and act on the old run.
    seen = []
    real = api.run_bfs

    def watching(*args, **kw):
        seen.append({b.description: b.disabled for b in (room.run_button, room.step_button, room.back_button,
                                                         room.play_button, room.stop_button)})
        return real(*args, **kw)

    room.run()
    room.step()
    monkeypatch.setattr(api, "run_bfs", watching)
    room.run_button.click()
    assert seen == [{"Run": True, "Step": True, "Back": True, "Play": True, "Stop": True}]
    assert "running" not in room.level_label.value and not room.step_button.disabled and not room.run_button.disabled


def _contrast(a: str, b: str) -> float:
    def lum(c):
        rgb = [int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_vertex_labels_read_on_their_fill(room):
    # Every label contrasts with its fill (white on dark blue or purple, black on light colours).
    from explorer.ui.classroom import LEVEL_COLORS, UNREACHED, text_color

    for fill in (*LEVEL_COLORS, UNREACHED):
        assert _contrast(text_color(fill), fill) >= 4.5, fill  # WCAG's minimum for text (AA)
    room.run()
    nodes = room.node_source.data
    assert nodes["text_color"] == [text_color(f) for f in nodes["fill_color"]]
    assert room.label_glyph.text_color == "text_color"  # the labels draw in that column's colours


def test_the_drawing_has_a_legend_of_its_level_colours(room):
    from explorer.ui.classroom import LEVEL_COLORS, level_labels

    legend = next(m for m in room.drawing.below if getattr(m, "name", None) == "classroom-legend")
    assert not any(item.visible for item in room.level_items)  # no run: no level yet
    room.run()
    shown = [item.label.value for item in legend.items if item.visible]
    assert shown[:4] == ["level 0", "level 1", "level 2", "level 3"]
    assert {"frontier", "discovered by it", "a duplicate can be born", "edge examined", "BFS tree"} <= set(shown)
    assert level_labels(12)[:3] == ["level 0, 10", "level 1, 11", "level 2"] and len(level_labels(12)) == len(LEVEL_COLORS)


@pytest.mark.parametrize("spec,source,kind", [
    ("bfs4k_fig2", 0, "levels"),
    ("gen:kronecker:scale=6,edge_factor=4", "max-degree", "levels"),  # a blob when force-directed
    ("gen:grid2d:rows=2,cols=60", 0, "force-directed"),  # 61 levels: too deep for a row each
])
def test_the_drawing_fills_its_box_and_keeps_vertices_apart(spec, source, kind):
    # A narrow strip (the teaching graph, drawn with equal axes) and a blob (a small Kronecker
    # graph): a row per BFS level, each row as wide as the drawing, or a force-directed layout
    # stretched to the box; vertices never closer than a marker.
    from explorer.ui.classroom import DRAW_WIDTH, VERTEX_PX
    from explorer.ui.cli import load_graph_spec

    g = load_graph_spec(spec)
    layout = stepthrough.drawing_layout(g, api.resolve_source(g, source))
    assert layout.kind == kind
    assert layout.x.min() < 0.2 and layout.x.max() > 0.8 and layout.y.min() == 0 and layout.y.max() == 1
    if kind == "levels":
        dist, _ = cpu_bfs(g, layout.source)
        level_y = {}
        for v in range(g.num_vertices):  # a level's rows lie below the level before's
            level_y.setdefault(int(dist[v]) if dist[v] >= 0 else 10 ** 6, []).append(layout.y[v])
        tops = [max(level_y[d]) for d in sorted(level_y)]
        bottoms = [min(level_y[d]) for d in sorted(level_y)]
        assert all(b > t for b, t in zip(bottoms, tops[1:]))
        assert max(len(ys) for ys in level_y.values()) > stepthrough.ROW_VERTICES or spec == "bfs4k_fig2"
        assert stepthrough.min_spacing(layout, DRAW_WIDTH * 0.85, 300) >= VERTEX_PX[1] * 0.9


def test_edges_in_one_row_arc_over_it():
    g = graphs.sample_graph("bfs4k_fig2")
    layout = stepthrough.drawing_layout(g, 0)
    xs, ys = stepthrough.edge_path(layout, 2, 3)  # both at level 1
    assert len(xs) > 2 and max(ys) > layout.y[2]
    assert stepthrough.edge_path(layout, 0, 1) == ([layout.x[0], layout.x[1]], [layout.y[0], layout.y[1]])


def test_the_thread_table_shows_each_outcome_whole_and_the_notes_in_normal_print(room):
    room.run(technique="bfs4k", knobs={"dedup": "none"})
    room.step()
    table = room.assignment_table.value
    assert "<table" in table and all(html.escape(r["outcome"]) in table for r in room.assignment_rows)
    assert "white-space:normal" in table  # the outcome wraps between words, never cut
    assert "<small" not in room.level_info.value + room.assignment_info.value + room.note.value
    assert "font-size:13px" in room.level_info.value and "Where this comes from" in room.level_info.value


def _described(widget):
    if isinstance(widget, W.DOMWidget) and getattr(widget, "description", ""):
        yield widget
    for child in getattr(widget, "children", ()):
        yield from _described(child)


def test_every_described_control_has_a_tooltip(room):
    # ipywidgets puts a control's tooltip on its label as the title: with none, hovering
    # "vertex id" read "null".
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2")
    ex.tools.panel("export")
    for w in [*_described(room), *_described(ex), *_described(ex.tools.panel("export"))]:
        assert w.tooltip, (type(w).__name__, w.description)
