"""Bottom-up, hybrid and direction-optimizing BFS: what the conformance suite does not
check. The per-level record switches direction on a Kronecker graph (top-down, bottom-up in the
middle, top-down at the tail), each switch where the rule says; bottom-up walks in-edges on a
directed graph and stops at the first parent; direction-optimizing runs its levels in few
launches (BFS-4K's single block, a persistent grid deciding each level on the device) and hands
long tails back to the single block; the CPU multicore techniques give the same record."""
import numpy as np
import pytest

from explorer import graphs
from explorer.api import run_bfs
from explorer.knobs import KnobError
from explorer.reference import check_result, cpu_bfs
from explorer.stats import Direction, Kernel
from explorer.techniques.operators.direction import reverse_csr
from explorer.techniques.direction_optimizing import next_direction

TD, BU = Direction.TOP_DOWN, Direction.BOTTOM_UP
GPU_SMALL = {"block_threads": 32}
# direction-optimizing's grid of two blocks of 32 and a single block of 32 (F_Threshold 32).
DO_SMALL = {"block_threads": 32, "blocks_per_sm": 1, "single_block_threads": 32}


@pytest.fixture(scope="module")
def kron():
    # From vertex 37 (degree 1) the levels hold 1, 1, 60, 168 and 4 of its 256 vertices.
    return graphs.generate("kronecker", scale=8, edge_factor=16, seed=1), 37


def _run(g, source, tech, knobs):
    run = run_bfs(g, source, tech, knobs)
    levels = list(run)
    report = check_result(g, run.result)
    assert report.ok, report.message
    return levels


def _in_degrees(g):
    return np.bincount(g.indices, minlength=g.num_vertices)


@pytest.mark.parametrize("tech,knobs", [
    ("hybrid", GPU_SMALL),
    ("hybrid", {**GPU_SMALL, "variant": "distance"}),
    ("direction-optimizing", DO_SMALL),
    ("direction-optimizing", {**DO_SMALL, "K5": 0}),
])
def test_direction_switches_on_kronecker(kron, tech, knobs):
    g, source = kron
    levels = _run(g, source, tech, knobs)
    assert [lv.direction for lv in levels] == [TD, TD, BU, BU, TD]


def test_hybrid_still_accepts_the_old_name_of_its_distance_form(kron):
    # variant='layer' was renamed 'distance' (the report's "layer" is a BFS level): a script that
    # still says 'layer' runs the same form, and the record names it by its new name.
    g, source = kron
    run = run_bfs(g, source, "hybrid", {**GPU_SMALL, "variant": "layer"})
    levels = list(run)
    assert run.result.knobs["variant"] == "distance"
    assert {lv.frontier_form for lv in levels} == {"distance"}
    with pytest.raises(KnobError, match="variant='levels' is invalid: one of 'frontier', 'distance'"):
        run_bfs(g, source, "hybrid", {"variant": "levels"})


def test_hybrid_follows_the_report_rule(kron):
    g, source = kron
    for divisor in (1, 32, 1024):
        levels = _run(g, source, "hybrid", {**GPU_SMALL, "divisor": divisor})
        assert [lv.direction for lv in levels] == [BU if lv.frontier_in * divisor >= g.num_vertices else TD
                                                   for lv in levels]
        forms = {lv.direction: lv.frontier_form for lv in levels}
        assert forms.get(TD, "queue") == "queue" and forms.get(BU, "bitmap") == "bitmap"


@pytest.mark.parametrize("knobs", [{}, {"K5": 0}])
def test_direction_optimizing_records_beamer_quantities(kron, knobs):
    g, source = kron
    levels = _run(g, source, "direction-optimizing", {**DO_SMALL, **knobs})
    d, _ = cpu_bfs(g, source)
    out_deg, in_deg = g.degrees(), _in_degrees(g)
    for i, lv in enumerate(levels):
        assert lv.n_f == lv.frontier_in == int((d == i).sum())
        assert lv.m_f == int(out_deg[d == i].sum())
        assert lv.m_u == int(in_deg[(d == -1) | (d > i)].sum())
        assert lv.frontier_form == ("queue" if lv.direction is TD else "bitmap")
        # Converted on the device where the form a level reads was not written by the level before:
        # a bitmap after top-down levels of another launch (the grid's top-down levels write one
        # beside their queue), a queue after bottom-up.
        before = levels[i - 1] if i else None
        grid_entry = lv.kernel is Kernel.MULTI_BLOCK and lv.launches > 0
        assert lv.frontier_converted == (
            before is not None and before.direction is BU and lv.direction is TD
            or lv.direction is BU and grid_entry and (before is None or before.direction is TD))
        # Each level's direction is Beamer's rule applied to the quantities it records; the single
        # block's are top-down by its size rule, which agrees here.
        current, prev_n_f = (levels[i - 1].direction, levels[i - 1].n_f) if i else (TD, 0)
        assert lv.direction is next_direction(current, lv.m_f, lv.m_u, lv.n_f, prev_n_f, g.num_vertices, 14, 24)
    # Bottom-up in the middle inspects fewer in-edges than the unvisited vertices hold (early exit).
    middle = [lv for lv in levels if lv.direction is BU]
    assert middle and all(lv.edges_examined < lv.m_u for lv in middle)


def test_beamer_rule():
    n = 2400  # n / beta = 100
    assert next_direction(TD, m_f=100, m_u=1400, n_f=5, prev_n_f=1, n=n, alpha=14, beta=24) is TD
    assert next_direction(TD, m_f=101, m_u=1400, n_f=5, prev_n_f=1, n=n, alpha=14, beta=24) is BU
    # Back to top-down only once the frontier shrinks below n / beta; a small growing one stays.
    assert next_direction(BU, m_f=0, m_u=0, n_f=99, prev_n_f=500, n=n, alpha=14, beta=24) is TD
    assert next_direction(BU, m_f=0, m_u=0, n_f=99, prev_n_f=50, n=n, alpha=14, beta=24) is BU
    assert next_direction(BU, m_f=0, m_u=0, n_f=100, prev_n_f=500, n=n, alpha=14, beta=24) is BU


def _directed():
    # In-edges differ from out-edges: 2 is reached from 1 (its in-neighbours are 1, 3, 4), 4 and 5
    # point at the frontier but are not reached from it; 6 only has out-edges.
    src = np.array([0, 0, 1, 3, 4, 4, 2, 5, 6, 6])
    dst = np.array([1, 3, 2, 2, 2, 0, 5, 1, 3, 5])
    return graphs.from_edges(src, dst, num_vertices=7, directed=True, name="directed7")


def _bottom_up_model(g, source):
    """Per level: (in-edges inspected, vertices checked) by a bottom-up search that scans each
    unvisited vertex's in-neighbours in the reverse CSR's order and stops at the first parent."""
    off, idx = reverse_csr(g)
    dist = np.full(g.num_vertices, -1)
    dist[source] = 0
    out, level = [], 0
    while True:
        edges = checked = 0
        found = []
        for v in np.flatnonzero(dist == -1):
            checked += 1
            for u in idx[off[v]:off[v + 1]]:
                edges += 1
                if dist[u] == level:
                    found.append(v)
                    break
        out.append((edges, checked))
        if not found:
            return out
        dist[found] = level + 1
        level += 1


@pytest.mark.parametrize("frontier", ["bitmap", "distance"])
def test_bottom_up_walks_in_edges_on_a_directed_graph(frontier):
    g = _directed()
    levels = _run(g, 0, "bottom-up", {**GPU_SMALL, "frontier": frontier})
    assert [(lv.edges_examined, lv.vertices_checked) for lv in levels] == _bottom_up_model(g, 0)
    assert all(lv.direction is BU and lv.frontier_form == frontier for lv in levels)


def test_reverse_csr():
    g = _directed()
    off, idx = reverse_csr(g)
    want = g.to_scipy().T.tocsr()
    want.sort_indices()
    assert off.dtype == np.int64 and idx.dtype == np.int32
    np.testing.assert_array_equal(off, want.indptr)
    np.testing.assert_array_equal(idx, want.indices)


def test_bottom_up_stops_at_the_first_parent(kron):
    g, source = kron
    levels = _run(g, source, "bottom-up", GPU_SMALL)
    d, _ = cpu_bfs(g, source)
    in_deg = _in_degrees(g)
    big = levels[2]  # 60 frontier vertices, 168 found
    assert big.discovered == 168
    assert big.vertices_checked == int(((d == -1) | (d > 2)).sum())
    assert big.edges_examined < int(in_deg[(d == -1) | (d > 2)].sum()) // 4


@pytest.mark.parametrize("tech,knob,value", [
    ("hybrid", "divisor", 0), ("hybrid", "divisor", 1025), ("hybrid", "variant", "queue"),
    ("direction-optimizing", "alpha", 0), ("direction-optimizing", "beta", 0.5),
    ("bottom-up", "frontier", "queue"),
])
def test_bad_knobs_are_named(kron, tech, knob, value):
    g, source = kron
    with pytest.raises(KnobError, match=knob):
        run_bfs(g, source, tech, {knob: value})


# ---- direction-optimizing: few launches, decisions on the device

def _broom(hub=40, tail=12):
    """A hub with `hub` leaves, one leaf continuing into a path of `tail` vertices: from the hub,
    a frontier of `hub` vertices, then a long thin tail."""
    leaves = np.arange(1, hub + 1)
    path = np.arange(hub + 1, hub + 1 + tail)
    src = np.r_[np.zeros(hub, np.int64), hub, path[:-1]]
    dst = np.r_[leaves, path[0], path[1:]]
    return graphs.from_edges(src, dst, directed=False, name=f"broom{hub}+{tail}")


def _steps(levels):
    """(kernel, levels) of each launch: a launch's first record counts its launches."""
    out = []
    for lv in levels:
        if lv.launches:
            out.append([lv.kernel.value, 0])
        out[-1][1] += 1
    return [tuple(x) for x in out]


def test_the_grid_hands_a_long_thin_tail_to_the_single_block():
    g = _broom()
    # alpha 1: the hub's 40 leaves run bottom-up (their 41 edges against 23 unvisited), the tail
    # top-down (2 against 21, 19, ...).
    levels = _run(g, 0, "direction-optimizing", {**DO_SMALL, "alpha": 1, "handoff": 2})
    # The leaves outgrow the single block (F_Threshold 32): the grid runs them and the tail's first
    # vertex, two levels that leave one vertex each, then hands the rest back to the single block.
    assert _steps(levels) == [("single-block", 1), ("multi-block", 2), ("single-block", 11)]
    assert [lv.direction for lv in levels] == [TD, BU] + [TD] * 12
    assert levels[3].frontier_converted is False  # the grid left its frontier as a queue
    # With handoff 0 the grid keeps the search to its end: two launches in all.
    levels = _run(g, 0, "direction-optimizing", {**DO_SMALL, "alpha": 1, "handoff": 0})
    assert _steps(levels) == [("single-block", 1), ("multi-block", 13)]


def test_the_grid_runs_a_whole_search_in_one_launch(kron):
    g, source = kron
    levels = _run(g, source, "direction-optimizing", {**DO_SMALL, "K5": 0})
    assert _steps(levels) == [("multi-block", 5)]
    assert levels[0].launches == 3  # two memsets and the grid
    # Top-down levels spread each warp's 32 frontier entries over its lanes (edge-discover).
    assert all(lv.edge_discover == (lv.direction is TD) for lv in levels)


def test_the_grid_continues_across_launches_when_its_log_is_full(kron, monkeypatch):
    from explorer.techniques import direction_optimizing

    g, source = kron
    want = _run(g, source, "direction-optimizing", {**DO_SMALL, "K5": 0})
    monkeypatch.setattr(direction_optimizing, "MAX_LOG", 2)
    got = _run(g, source, "direction-optimizing", {**DO_SMALL, "K5": 0})
    assert _steps(got) == [("multi-block", 2), ("multi-block", 2), ("multi-block", 1)]
    fields = ("direction", "frontier_in", "edges_examined", "discovered", "m_f", "m_u")
    assert [[getattr(lv, f) for f in fields] for lv in got] == [[getattr(lv, f) for f in fields] for lv in want]
    # Level 4 runs top-down after bottom-up in the previous launch, which converted the bitmap.
    assert got[4].frontier_converted and got[2].frontier_converted  # level 2: a bitmap from the queue


def test_heavy_vertices_are_walked_by_the_whole_grid(kron):
    g, source = kron
    hub = int(np.argmax(g.degrees()))
    for heavy, want in ((32, 1), (1 << 30, 0)):
        levels = _run(g, hub, "direction-optimizing", {**DO_SMALL, "K5": 0, "heavy_degree": heavy})
        assert levels[0].direction is TD and levels[0].heavy_vertices == want
        assert levels[0].edges_examined == int(g.degrees()[hub])


def test_a_heavy_vertex_leaves_the_single_block_for_the_grid():
    # 0 - 1, and 1 a hub of 40 leaves on a path: the single block would give the hub's edges to one
    # warp, the grid spreads them over all its threads. heavy_degree 32 (K3 = 32 / 32 threads = 1):
    # level 1's frontier holds the hub and goes to the grid (top-down: its 41 edges against the
    # leaves' 118 unvisited); with the default 1024 the block keeps it.
    leaves = list(range(2, 42))
    g = graphs.from_edges([0] + [1] * 40 + leaves[:-1], [1] + leaves + leaves[1:], directed=False)
    levels = _run(g, 0, "direction-optimizing", {**DO_SMALL, "alpha": 1, "heavy_degree": 32, "handoff": 0})
    assert _steps(levels) == [("single-block", 1), ("multi-block", 2)]
    assert levels[1].direction is TD and levels[1].heavy_vertices == 1
    levels = _run(g, 0, "direction-optimizing", {**DO_SMALL, "alpha": 1, "handoff": 0})
    assert _steps(levels)[0] == ("single-block", 2)


@pytest.mark.parametrize("solo", [1, 2, 1024])
def test_grid_bottom_up_checks_in_edges_as_a_serial_walk_would(solo):
    # The warp takes over a list after `solo` entries, 32 a round; the record counts the entries a
    # serial walk checks (up to the first in the frontier), and the parent is that entry.
    g = _directed()
    levels = _run(g, 0, "direction-optimizing", {**DO_SMALL, "alpha": 1_000_000, "beta": 1, "solo_edges": solo})
    model = _bottom_up_model(g, 0)
    bottom_up = [lv for lv in levels if lv.direction is BU]
    assert bottom_up and all(lv.kernel is Kernel.MULTI_BLOCK for lv in bottom_up)
    assert [(lv.edges_examined, lv.vertices_checked) for lv in bottom_up] == [model[lv.level] for lv in bottom_up]


def test_grid_bottom_up_takes_the_first_parent_in_list_order():
    # Vertex 0's in-neighbours: 40 vertices outside the frontier, then the frontier vertices 41 and 42.
    src = np.r_[np.arange(1, 41), 41, 42, 43, 43]
    dst = np.r_[np.zeros(40, np.int64), 0, 0, 41, 42]
    g = graphs.from_edges(src, dst, num_vertices=44, directed=True, name="late-parent")
    levels = _run(g, 43, "direction-optimizing", {**DO_SMALL, "alpha": 1_000_000, "beta": 1, "solo_edges": 1})
    run = run_bfs(g, 43, "direction-optimizing", {**DO_SMALL, "alpha": 1_000_000, "beta": 1, "solo_edges": 1})
    parents = run.complete().parents
    assert levels[1].direction is BU and parents[0] == 41
    assert levels[1].edges_examined >= 41  # vertex 0 alone checks 41 in-edges


# ---- CPU multicore (Numba parallel=True)

def test_cpu_techniques_give_the_gpu_techniques_record(kron):
    g, source = kron
    fields = ("direction", "frontier_in", "edges_examined", "discovered", "frontier_out")
    for cpu, gpu, extras in (("cpu-hybrid", "hybrid", ("frontier_form", "vertices_checked")),
                             ("cpu-bottom-up", "bottom-up", ("vertices_checked",))):
        want = [[getattr(lv, f) for f in fields + extras] for lv in _run(g, source, gpu, GPU_SMALL)]
        got = _run(g, source, cpu, {})
        assert [[getattr(lv, f) for f in fields + extras] for lv in got] == want
        assert all(lv.kernel.value == "cpu" for lv in got)
    levels = _run(g, source, "cpu-topdown", {})
    d, _ = cpu_bfs(g, source)
    assert [lv.edges_examined for lv in levels] == [int(g.degrees()[d == i].sum()) for i in range(len(levels))]


def test_cpu_bottom_up_walks_in_edges_on_a_directed_graph():
    g = _directed()
    levels = _run(g, 0, "cpu-bottom-up", {})
    assert [(lv.edges_examined, lv.vertices_checked) for lv in levels] == _bottom_up_model(g, 0)


@pytest.mark.parametrize("tech", ["cpu-topdown", "cpu-bottom-up", "cpu-hybrid"])
def test_cpu_threads_knob(monkeypatch, tech):
    import numba

    from explorer.techniques import cpu_multicore, cpu_steps

    g = graphs.generate("kronecker", scale=9, edge_factor=8, seed=3)
    # Compiled first: a process's first run compiles the steps in its set-up, with the process's
    # own thread count (untimed, on a one-vertex graph), which is not what the knob sets.
    _run(g, 0, tech, {"threads": 1})
    seen = []
    for name in ("topdown_step", "bottomup_step"):
        step = getattr(cpu_steps, name)
        monkeypatch.setattr(cpu_steps, name, lambda *a, _step=step: (seen.append(numba.get_num_threads()), _step(*a)))
    before = numba.get_num_threads()
    for threads in sorted({1, cpu_multicore.CORES}):
        seen.clear()
        _run(g, int(np.argmax(g.degrees())), tech, {"threads": threads})
        assert seen and set(seen) == {threads}
        assert numba.get_num_threads() == before
    for bad in (0, cpu_multicore.CORES + 1):
        with pytest.raises(KnobError, match="threads"):
            run_bfs(g, 0, tech, {"threads": bad})
