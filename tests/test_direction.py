"""Bottom-up, hybrid and direction-optimizing BFS (issue 18): what the conformance suite does not
check. The per-level record switches direction on a Kronecker graph (top-down, bottom-up in the
middle, top-down at the tail), each switch where the rule says; bottom-up walks in-edges on a
directed graph and stops at the first parent; the CPU multicore techniques give the same record."""
import numpy as np
import pytest

from explorer import graphs
from explorer.api import run_bfs
from explorer.knobs import KnobError
from explorer.reference import check_result, cpu_bfs
from explorer.stats import Direction
from explorer.techniques.direction import reverse_csr
from explorer.techniques.direction_optimizing import next_direction

TD, BU = Direction.TOP_DOWN, Direction.BOTTOM_UP
GPU_SMALL = {"block_threads": 32}


@pytest.fixture(scope="module")
def kron():
    # From vertex 37 (degree 1) the levels hold 1, 1, 60, 168 and 4 of its 256 vertices.
    return graphs.generate("kronecker", scale=8, edge_factor=16, seed=1), 37


def _run(g, source, tech, knobs):
    run = run_bfs(g, source, tech, knobs)
    levels = list(run)
    report = check_result(g, source, run.result.distances, run.result.parents)
    assert report.ok, report.message
    return levels


def _in_degrees(g):
    return np.bincount(g.indices, minlength=g.num_vertices)


@pytest.mark.parametrize("tech,knobs", [
    ("hybrid", {}),
    ("hybrid", {"variant": "layer"}),
    ("direction-optimizing", {}),
])
def test_direction_switches_on_kronecker(kron, tech, knobs):
    g, source = kron
    levels = _run(g, source, tech, {**GPU_SMALL, **knobs})
    assert [lv.direction for lv in levels] == [TD, TD, BU, BU, TD]


def test_hybrid_follows_the_report_rule(kron):
    g, source = kron
    for divisor in (1, 32, 1024):
        levels = _run(g, source, "hybrid", {**GPU_SMALL, "divisor": divisor})
        assert [lv.direction for lv in levels] == [BU if lv.frontier_in * divisor >= g.num_vertices else TD
                                                   for lv in levels]
        forms = {lv.direction: lv.frontier_form for lv in levels}
        assert forms.get(TD, "queue") == "queue" and forms.get(BU, "bitmap") == "bitmap"


def test_direction_optimizing_records_beamer_quantities(kron):
    g, source = kron
    levels = _run(g, source, "direction-optimizing", GPU_SMALL)
    d, _ = cpu_bfs(g, source)
    out_deg, in_deg = g.degrees(), _in_degrees(g)
    for i, lv in enumerate(levels):
        assert lv.n_f == lv.frontier_in == int((d == i).sum())
        assert lv.m_f == int(out_deg[d == i].sum())
        assert lv.m_u == int(in_deg[(d == -1) | (d > i)].sum())
        assert lv.frontier_form == ("queue" if lv.direction is TD else "bitmap")
        # The frontier is converted on the device exactly where the direction changes.
        assert lv.frontier_converted == (i > 0 and lv.direction is not levels[i - 1].direction)
        # Each level's direction is Beamer's rule applied to the quantities it records.
        current, prev_n_f = (levels[i - 1].direction, levels[i - 1].n_f) if i else (TD, 0)
        assert lv.direction is next_direction(current, lv.m_f, lv.m_u, lv.n_f, prev_n_f, g.num_vertices, 14, 24)
    # Bottom-up in the middle inspects fewer in-edges than the unvisited vertices hold (early exit).
    middle = [lv for lv in levels if lv.direction is BU]
    assert all(lv.edges_examined < lv.m_u for lv in middle)


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

    seen = []
    for name in ("topdown_step", "bottomup_step"):
        step = getattr(cpu_steps, name)
        monkeypatch.setattr(cpu_steps, name, lambda *a, _step=step: (seen.append(numba.get_num_threads()), _step(*a)))
    g = graphs.generate("kronecker", scale=9, edge_factor=8, seed=3)
    before = numba.get_num_threads()
    for threads in sorted({1, cpu_multicore.CORES}):
        seen.clear()
        _run(g, int(np.argmax(g.degrees())), tech, {"threads": threads})
        assert seen and set(seen) == {threads}
        assert numba.get_num_threads() == before
    for bad in (0, cpu_multicore.CORES + 1):
        with pytest.raises(KnobError, match="threads"):
            run_bfs(g, 0, tech, {"threads": bad})
