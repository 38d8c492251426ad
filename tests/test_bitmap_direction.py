"""bitmap-direction: what the conformance suite does not check. The graph preparation (vertex
orders, the bit-packed in-adjacency against the CSR, results mapped back to the graph's own
numbers, the cache and its timing), the levels streamed from a running launch (the enactor's hook
and the host's polling of a log the device fills), each level's direction and kernel by the rule
applied to the record's own numbers, the bottom-up parent (the frontier in-neighbour of lowest
number), the extras, and a search that outlasts its log (launched again from the saved state)."""
import threading

import numpy as np
import pytest

from explorer import backend, graphs
from explorer.api import run_bfs
from explorer.graphs import prepare as prep
from explorer.knobs import KnobError
from explorer.reference import bfs_distances, check_result, cpu_bfs
from explorer.stats import Direction, Kernel
from kernels.bitmap_direction import layout as L

TD, BU = Direction.TOP_DOWN, Direction.BOTTOM_UP
SMALL = {"block_threads": 32, "blocks_per_sm": 1}
GRID = {**SMALL, "narrow_edges": 0, "one_block_vertices": 0}


@pytest.fixture(scope="module")
def kron():
    return graphs.generate("kronecker", scale=7, edge_factor=8, seed=5)


def _directed():
    src = np.array([0, 0, 1, 2, 3, 4, 5, 6, 7, 7, 9])
    dst = np.array([1, 2, 3, 3, 0, 5, 6, 4, 8, 0, 7])
    return graphs.from_edges(src, dst, num_vertices=11, directed=True, name="directed11")


def _run(g, source, knobs, **kw):
    run = run_bfs(g, source, "bitmap-direction", knobs, **kw)
    levels = list(run)
    report = check_result(g, run.result)
    assert report.ok, report.message
    return levels, run.result


# ------------------------------------------------------------------------------ graph preparation
@pytest.mark.parametrize("order", ["none", "degree", "rcm"])
@pytest.mark.parametrize("directed", [False, True])
def test_bit_packed_in_adjacency_is_the_csr(kron, order, directed):
    g = _directed() if directed else kron
    pg = prep._prepare(g, order, lambda msg: None)
    n = g.num_vertices
    # The renumbered out-adjacency is the graph's, renumbered; rows sorted.
    perm = np.arange(n) if pg.perm is None else pg.perm
    assert sorted(perm) == list(range(n))
    rank = np.empty(n, np.int64)
    rank[perm] = np.arange(n)
    for v in range(n):
        row = pg.indices[pg.offsets[v]:pg.offsets[v + 1]]
        assert list(row) == sorted(rank[g.neighbors(perm[v])])
    # The pairs hold exactly the in-adjacency: unpacked, it is the reverse of the renumbered CSR.
    src = np.repeat(np.arange(n), np.diff(pg.offsets))
    in_rows = [sorted(src[pg.indices == v]) for v in range(n)]
    off, ind = prep.unpack_bits(pg.pair_offsets, pg.pairs)
    assert [list(ind[off[v]:off[v + 1]]) for v in range(n)] == in_rows
    words = (pg.pairs >> np.uint64(32)).astype(np.int64)
    for v in range(n):
        w = words[pg.pair_offsets[v]:pg.pair_offsets[v + 1]]
        assert np.all(np.diff(w) > 0), "one pair a word, words increasing"
        assert pg.head[v] == (pg.pairs[pg.pair_offsets[v]] if len(w) else 0)
    assert np.all(pg.pairs & np.uint64(0xFFFFFFFF) != 0)
    has_in = [v for v in range(n) if in_rows[v]]
    assert pg.n_pull == (max(has_in) + 1 if has_in else 0)
    assert pg.candidates_per_pair == pytest.approx(len(ind) / max(len(pg.pairs), 1))


def test_orders(kron):
    deg = kron.degrees()
    pg = prep._prepare(kron, "degree", lambda msg: None)
    assert list(deg[pg.perm]) == sorted(deg, reverse=True)  # hubs first, no-edge vertices last
    assert pg.n_pull == int(np.count_nonzero(deg))
    assert prep.skewed(kron) and not prep.skewed(graphs.generate("grid2d", rows=9, cols=9))
    assert prep.vertex_order(kron, "auto")[0] == "degree"
    assert prep.vertex_order(graphs.generate("grid2d", rows=9, cols=9), "auto") == ("none", None)
    with pytest.raises(ValueError, match="vertex order 'bfs' is unknown"):
        prep.prepare(kron, "bfs")


def test_preparation_is_kept_with_the_graph_and_timed():
    g = graphs.generate("kronecker", scale=6, edge_factor=4, seed=9)
    said = []
    assert not prep.is_prepared(g, "rcm")
    first = prep.prepare(g, "rcm", said.append)
    assert prep.is_prepared(g, "rcm") and prep.prepare(g, "rcm", said.append) is first
    assert len(said) == 2 and "not search time" in said[-1]  # the order, then the whole cost, once
    assert set(first.seconds) == {"order", "renumber", "pack"} and all(t >= 0 for t in first.seconds.values())
    assert prep.prepare(g, "auto") is prep.prepare(g, "degree")  # auto resolves, and is kept as what it is


def test_auto_is_resolved_once_a_graph(monkeypatch):
    """Each run prepares its graph: auto's test (a sort of the degrees) is made once, not every run."""
    g = graphs.generate("kronecker", scale=6, edge_factor=4, seed=9)
    tested = []
    monkeypatch.setattr(prep, "skewed", lambda graph: tested.append(graph) or True)
    assert prep.prepare(g, "auto") is prep.prepare(g, "auto") is prep.prepare(g, "degree")
    assert len(tested) == 1


def test_results_are_mapped_back_to_the_graphs_own_numbers(kron):
    """Every order gives the graph's own answer, though each searches in its own numbering."""
    source = int(np.argmax(kron.degrees()))
    ref = cpu_bfs(kron, source)[0]
    for order in ("none", "degree", "rcm"):
        pg = prep.prepare(kron, order)
        assert (pg.perm is None) == (order == "none")
        assert order == "none" or not np.array_equal(pg.perm, np.arange(kron.num_vertices))
        _, r = _run(kron, source, {**GRID, "order": order, "alpha": 1_000_000})
        assert np.array_equal(r.distances, ref)


def test_a_graph_with_original_ids_answers_in_them():
    g = graphs.from_edges(np.array([10, 10, 30, 40]), np.array([20, 30, 40, 50]), directed=False, remap=True,
                          name="labels")
    run = run_bfs(g, 10, "bitmap-direction", {**SMALL, "order": "degree"})
    r = run.complete()
    assert check_result(g, r).ok and r.source == g.to_dense(10)
    assert r.source_id == 10 and list(r.distances) == [0, 1, 1, 2, 3]
    assert list(g.to_original_many(r.parents[1:])) == [10, 10, 30, 40]


# ------------------------------------------------------------------------------ the record
def _follows_the_rule(g, source, knobs, small=False) -> set:
    """Runs g from source: each level's direction and kernel are the rule's (layout.decide) on the
    record's own m_f, m_u and frontier sizes, and those numbers are what they say. The (direction,
    kernel) pairs seen."""
    levels, r = _run(g, source, knobs)
    deg, n = g.degrees(), g.num_vertices
    seen = set()
    for i, lv in enumerate(levels):
        if i == 0:
            last_bu, prev_n = False, 0
            assert (lv.m_f, lv.m_u) == (deg[source], g.num_arcs)
        else:
            prev = levels[i - 1]
            last_bu, prev_n = prev.direction is BU, prev.frontier_in
            # m_f: the new frontier's out-edges after a top-down level, 1 after a bottom-up one (GAP);
            # m_u: less every frontier run top-down.
            assert lv.m_f == (1 if last_bu else int(deg[r.distances == i].sum())), i
            assert lv.m_u == prev.m_u - (0 if last_bu else prev.m_f), i
        bu, narrow, _ = L.decide(last_bu, lv.m_f, lv.m_u, lv.frontier_in, prev_n, n, knobs["alpha"], knobs["beta"],
                                 knobs["narrow_edges"], small)
        assert (lv.direction is BU) == bu
        assert lv.kernel is (Kernel.SINGLE_BLOCK if narrow else Kernel.MULTI_BLOCK)
        seen.add((lv.direction, lv.kernel))
    return seen


def test_directions_follow_the_rule_on_the_records_numbers(kron):
    source = int(np.argmax(kron.degrees()))
    knobs = {**SMALL, "narrow_edges": 200, "alpha": 4, "beta": 8, "one_block_vertices": 0}
    assert {(TD, Kernel.SINGLE_BLOCK), (BU, Kernel.MULTI_BLOCK)} <= _follows_the_rule(kron, source, knobs)


@pytest.mark.parametrize("one_block_vertices", [0, 1 << 20], ids=["block 0 of the grid", "the small graphs' block"])
def test_levels_taken_narrow_by_the_bound_keep_the_rules_numbers(one_block_vertices):
    # Degree <= 4, under heavy_degree: while 4 n_f <= narrow_edges the block leaves the next
    # frontier's m_f to its expansion; the records' m_f and m_u are still exact, and at the first
    # level past narrow_edges alpha is set so that the rule goes bottom-up on the exact m_u and
    # would not on an m_u that still held the frontiers taken by the bound.
    g = graphs.generate("grid2d", rows=6, cols=7)
    deg, dist, narrow_edges = g.degrees(), bfs_distances(g, 0), 12
    m_f = [int(deg[dist == i].sum()) for i in range(dist.max() + 1)]
    first = next(i for i, m in enumerate(m_f) if m > narrow_edges)
    assert first >= 3 and all(g.max_degree * (dist == i).sum() <= narrow_edges for i in range(1, first))
    alpha = (g.num_arcs - sum(m_f[:first])) // m_f[first] + 1
    knobs = {**SMALL, "narrow_edges": narrow_edges, "alpha": alpha, "beta": 18, "one_block_vertices": one_block_vertices}
    seen = _follows_the_rule(g, 0, knobs, one_block_vertices > 0)
    assert (TD, Kernel.SINGLE_BLOCK) in seen and BU in {direction for direction, _ in seen}


def test_decide_is_gaps_rule():
    # top-down -> bottom-up when m_f * alpha > m_u; m_u loses each top-down frontier's edges
    assert L.decide(False, 10, 100, 5, 1, 1000, 15, 24, 0, False) == (True, False, 100)
    assert L.decide(False, 6, 100, 5, 1, 1000, 15, 24, 0, False) == (False, False, 94)
    # a frontier of at most narrow_edges edges runs top-down in one block, whatever alpha says
    assert L.decide(False, 10, 100, 5, 1, 1000, 15, 24, 10, False) == (False, True, 90)
    # bottom-up goes on while the frontier grows or holds more than n / beta, then top-down in the grid
    assert L.decide(True, 1, 100, 60, 50, 1000, 15, 18, 10**9, False) == (True, False, 100)
    assert L.decide(True, 1, 100, 56, 70, 1000, 15, 18, 10**9, False) == (True, False, 100)
    assert L.decide(True, 1, 100, 55, 70, 1000, 15, 18, 10**9, False) == (False, False, 99)
    assert L.decide(False, 10**6, 1, 0, 1, 10, 15, 18, 10**9, False) == (False, False, 1)  # nothing left
    # a small graph: every level in one block, in the direction the rule says
    assert L.decide(False, 10, 100, 5, 1, 1000, 15, 24, 0, True) == (True, True, 100)
    assert L.decide(True, 1, 100, 55, 70, 1000, 15, 18, 0, True) == (False, True, 99)


def test_bottom_up_takes_the_lowest_numbered_parent_and_counts_its_words(kron):
    source = int(np.argmax(kron.degrees()))
    for solo in (1, 2, 6):  # the warp takes each long list at once; one pair alone; five, four at a time
        levels, r = _run(kron, source, {**GRID, "order": "none", "alpha": 1_000_000, "solo_pairs": solo})
        d = r.distances
        assert any(lv.direction is BU and lv.discovered for lv in levels), [(lv.direction, lv.discovered)
                                                                              for lv in levels]
        for lv in levels:
            if lv.direction is not BU or not lv.discovered:
                continue
            found = np.flatnonzero(d == lv.level + 1)
            for v in found:  # undirected: in-neighbours are neighbours
                nb = kron.neighbors(v)
                assert r.parents[v] == nb[d[nb] == lv.level].min()
            assert lv.frontier_form == "bitmap" and lv.vertices_checked >= lv.discovered
            assert lv.discovered <= lv.words_tested and lv.discovered <= lv.candidates_found
            assert lv.words_tested <= lv.edges_examined <= 32 * lv.words_tested
        td = [lv for lv in levels if lv.direction is TD]
        assert all(lv.words_tested == lv.candidates_found == lv.vertices_checked == 0 for lv in td)


@pytest.mark.parametrize("blocks", [1, 2])
def test_a_pull_deals_every_word_to_one_warp(blocks):
    """More words than the warps load in one round (32 a warp): each warp takes every warps-th word,
    32 at a time; every unvisited vertex below n_pull is checked once a bottom-up level."""
    g = graphs.generate("kronecker", scale=12, edge_factor=4, seed=3)  # 4,096 vertices: 128 words
    source = int(np.argmax(g.degrees()))
    n_pull = prep.prepare(g, "none").n_pull
    assert n_pull > 32 * 32 * blocks  # a second round for every warp, or most
    levels, r = _run(g, source, {**GRID, "order": "none", "alpha": 1_000_000, "beta": 1_000_000,
                                 "max_blocks": blocks}, instrument=True)
    d = r.distances[:n_pull]
    pulled = [lv for lv in levels if lv.direction is BU]
    assert pulled
    for lv in pulled:
        assert lv.vertices_checked == int(((d == -1) | (d > lv.level)).sum())


def test_counts_not_measured_are_none_and_the_rest_stays(kron):
    source = int(np.argmax(kron.degrees()))
    on, _ = _run(kron, source, {**GRID, "alpha": 1_000_000})
    off, _ = _run(kron, source, {**GRID, "alpha": 1_000_000}, instrument=False)
    for a, b in zip(on, off):
        assert (a.direction, a.frontier_in, a.discovered, a.m_f, a.m_u) == (b.direction, b.frontier_in, b.discovered,
                                                                              b.m_f, b.m_u)
        if b.direction is BU:
            assert b.words_tested is b.candidates_found is b.edges_examined is None
        else:
            assert b.edges_examined == a.edges_examined  # a top-down level always knows its edges


@pytest.mark.parametrize("threads", [32, 64])
def test_a_top_down_level_examines_its_frontier_rows(kron, threads):
    """A top-down level's edges_examined is its frontier's out-degree sum: narrow levels in the
    grid's block 0, a small graph's block with bottom-up levels and the conversions after them, and
    the grid's levels after narrow ones; one warp a block and two (the keeper not thread 0)."""
    deg = kron.degrees()
    source = int(np.argmax(deg))
    base = {**SMALL, "block_threads": threads}
    checked = 0
    for knobs in ({**base, "one_block_vertices": 0, "narrow_edges": 1 << 20}, base,
                  {**base, "one_block_vertices": 0, "narrow_edges": 64},
                  {**base, "alpha": 1_000_000, "beta": 4}):
        levels, r = _run(kron, source, knobs)
        for lv in levels:
            if lv.direction is TD:
                assert lv.edges_examined == int(deg[r.distances == lv.level].sum()), (knobs, lv.level)
                checked += lv.level > 0
    assert checked >= 4  # levels after the first


@pytest.mark.skipif(not backend.current().is_simulator, reason="spies on a device function: the simulator runs its Python")
def test_a_top_down_level_tries_every_frontier_edge_once(monkeypatch, kron):
    """A warp whose rows each fit their share of its lanes walks them W lanes a row, with no scan;
    the others 32 edges a round after a scan of their degrees: either way each edge out of a
    top-down level's frontier is tried once (the heavy vertices' too), in the block levels and the
    grid's. The grid's rows and a row of 32 edges take the first; one edge more and the Kronecker
    graph's rows the second."""
    from kernels.bitmap_direction import device as D

    real_claim, real_scan = D.claim, D.warp_inclusive_scan
    tried, scanned = [], []

    def claim(g, s, has, v, u, lv1, sink, acc):
        if has:
            tried.append((int(lv1) - 1, int(u), int(v)))
        return real_claim(g, s, has, v, u, lv1, sink, acc)

    def scan(deg):  # walk's only scan: the rows it walks 32 edges a round
        scanned.append(int(deg))
        return real_scan(deg)

    monkeypatch.setattr(D, "claim", claim)
    monkeypatch.setattr(D, "warp_inclusive_scan", scan)
    grid = graphs.generate("grid2d", rows=13, cols=13)
    star = [graphs.from_edges(np.zeros(d, np.int64), np.arange(1, d + 1), num_vertices=d + 1, name=f"star{d}")
            for d in (32, 33)]  # the source's row alone in its warp: W = 32
    walked = []  # the grid's centre: its frontier fills a warp's 32 lanes (W = 1)
    for g, source, knobs in ((grid, 0, SMALL), (grid, 84, SMALL), (grid, 84, {**SMALL, "block_threads": 64}),
                             (grid, 0, {**GRID, "max_blocks": 2}), (star[0], 0, {**SMALL, "heavy_degree": 4096}),
                             (star[1], 0, {**SMALL, "heavy_degree": 4096}),
                             (kron, int(np.argmax(kron.degrees())), {**SMALL, "heavy_degree": 32}),
                             (kron, 3, {**GRID, "alpha": 1})):
        tried.clear()
        scanned.clear()
        levels, r = _run(g, source, {**knobs, "order": "none"})
        ptr, idx = g.offsets, g.indices
        want = sorted((lv.level, u, int(v)) for lv in levels if lv.direction is TD
                      for u in np.flatnonzero(r.distances == lv.level) for v in idx[ptr[u]:ptr[u + 1]])
        assert sorted(tried) == want, knobs
        walked.append((sum(scanned) < len(want), sum(scanned) > 0))  # (some W a row, some 32 a round)
    assert all(s for s, _ in walked[:5]) and all(e for _, e in walked[5:])


@pytest.mark.skipif(not backend.current().is_simulator, reason="spies on a device function: the simulator runs its Python")
def test_grid_claims_read_the_visited_word_first_once_a_level_has_pulled(monkeypatch, kron):
    """The grid's top-down claims read a visited word before its atomic only after a bottom-up level
    (most edges then meet visited vertices); before it they go straight to the atomic."""
    from kernels.bitmap_direction import device as D

    real, seen = D.claim, set()

    def spy(g, s, has, v, u, lv1, sink, acc):
        if sink[12]:  # count_mf: the grid's claims (the block levels sum the next rows after their barrier)
            seen.add((int(lv1) - 1, bool(sink[1])))
        return real(g, s, has, v, u, lv1, sink, acc)

    monkeypatch.setattr(D, "claim", spy)
    source = int(np.argmax(kron.degrees()))
    levels, _ = _run(kron, source, {**GRID, "alpha": 4, "beta": 1})
    pulled = [any(lv.direction is BU for lv in levels[:i]) for i in range(len(levels))]
    grid_td = {i for i, lv in enumerate(levels) if lv.direction is TD and lv.kernel is Kernel.MULTI_BLOCK}
    assert {i for i, _ in seen} == grid_td and {False, True} <= {pulled[i] for i in grid_td}
    assert all(pre == pulled[i] for i, pre in seen)


def test_heavy_vertices_and_the_one_launch(kron):
    hub = int(np.argmax(kron.degrees()))
    for heavy, want in ((32, 1), (1 << 30, 0)):
        levels, _ = _run(kron, hub, {**GRID, "heavy_degree": heavy})
        assert levels[0].direction is TD and levels[0].heavy_vertices == want
        assert levels[0].edges_examined == int(kron.degrees()[hub])
    assert [lv.launches for lv in levels] == [1] + [0] * (len(levels) - 1)
    assert all(lv.cycles >= 0 and lv.time_ms >= 0 for lv in levels)


def test_narrow_levels_run_in_one_block_and_the_grid_takes_over():
    """A path grows into a star: the path runs in block 0, the star's leaves in the grid (their
    edges exceed narrow_edges), and the grid converts the narrow levels' queue into a bitmap when it
    goes bottom-up straight away."""
    leaves = 40
    src = np.r_[np.arange(5), np.full(leaves, 5)]
    dst = np.r_[np.arange(1, 6), np.arange(6, 6 + leaves)]
    g = graphs.from_edges(src, dst, directed=False, name="broom")
    levels, _ = _run(g, 0, {**SMALL, "narrow_edges": 8, "alpha": 1, "one_block_vertices": 0})
    kinds = [lv.kernel for lv in levels]
    assert kinds[:5] == [Kernel.SINGLE_BLOCK] * 5 and Kernel.MULTI_BLOCK in kinds[5:]
    levels, _ = _run(g, 0, {**SMALL, "narrow_edges": 8, "alpha": 2, "one_block_vertices": 0})  # 41 * 2 > 81
    first_grid = next(lv for lv in levels if lv.kernel is Kernel.MULTI_BLOCK)
    assert first_grid.direction is BU and first_grid.frontier_converted


@pytest.mark.parametrize("path", [4, 5, 6])
def test_the_grid_after_narrow_levels_starts_from_clear_bitmap_rows(path):
    """Grid levels (a star, pulling, then pushing), narrow levels (a path) and the grid again: three
    vertices that pull two, then a push from them after converting the bitmap. Every level's
    frontier is the BFS's own, so no bitmap row the first grid stretch wrote leaks into the second
    (the grid's first level after narrow ones clears the rows it writes and reads). Three path
    lengths: every alignment of the rows, which rotate over three."""
    a = 30
    end = a + path  # the path's last vertex; then Q (3 vertices), each joined to both of R, each with a pendant
    q, r = end + 1 + np.arange(3), end + 4 + np.arange(2)
    src = np.r_[np.zeros(a, int), np.arange(a, end), np.full(3, end), np.repeat(q, 2), r]
    dst = np.r_[np.arange(1, a + 1), np.arange(a + 1, end + 1), q, np.tile(r, 3), end + 6 + np.arange(2)]
    g = graphs.from_edges(src, dst, directed=False, name="star, path, diamonds")
    knobs = {**SMALL, "narrow_edges": 8, "alpha": 100, "beta": 1, "one_block_vertices": 0, "order": "none"}
    levels, res = _run(g, 0, knobs)
    assert [lv.frontier_in for lv in levels] == np.bincount(res.distances[res.distances >= 0]).tolist()
    kinds = [lv.kernel for lv in levels]
    after = kinds.index(Kernel.MULTI_BLOCK, kinds.index(Kernel.SINGLE_BLOCK))  # the grid's first level after
    assert kinds[0] is Kernel.MULTI_BLOCK and levels[after].direction is BU
    assert levels[after + 1].direction is TD and levels[after + 1].frontier_converted


def test_a_small_graph_runs_every_level_in_one_block(kron):
    """At most one_block_vertices vertices that pull: every level in block 0, bottom-up ones too, the
    bitmaps kept there; the rule still chooses each level's direction."""
    source = int(np.argmax(kron.degrees()))
    pull = prep.prepare(kron, "auto").n_pull  # the vertices that may pull
    levels, r = _run(kron, source, {**SMALL, "narrow_edges": 0, "one_block_vertices": pull})
    assert all(lv.kernel is Kernel.SINGLE_BLOCK for lv in levels)
    assert {lv.direction for lv in levels} == {TD, BU}
    td_after_bu = [b for a, b in zip(levels, levels[1:]) if a.direction is BU and b.direction is TD]
    assert all(lv.frontier_converted for lv in td_after_bu)
    grid, _ = _run(kron, source, {**SMALL, "narrow_edges": 0, "one_block_vertices": pull - 1})
    assert [lv.direction for lv in grid] == [lv.direction for lv in levels]
    assert all(lv.kernel is Kernel.MULTI_BLOCK for lv in grid)


def test_a_graph_within_cluster_arcs_runs_in_one_cluster(monkeypatch, kron):
    """Knob cluster: a graph of at most cluster_arcs arcs runs in one cluster launch of `cluster`
    blocks, with the same decisions and counts as the grid; a larger graph stays on the grid."""
    from kernels.bitmap_direction import kernel as kk

    builds = []
    search_kernel = kk.search_kernel
    monkeypatch.setattr(kk, "search_kernel", lambda *a: builds.append(a[2:]) or search_kernel(*a))
    source = int(np.argmax(kron.degrees()))
    knobs = {**SMALL, "narrow_edges": 64, "one_block_vertices": 0, "cluster": 2}
    levels, r = _run(kron, source, {**knobs, "cluster_arcs": kron.num_arcs})
    assert builds[-1] == (True,)  # the run's build (the last asked for): its barriers are the cluster's
    assert {lv.kernel for lv in levels} == {Kernel.SINGLE_BLOCK, Kernel.CLUSTER}
    grid, g = _run(kron, source, {**knobs, "cluster_arcs": kron.num_arcs - 1})
    assert builds[-1] == (False,) and Kernel.CLUSTER not in {lv.kernel for lv in grid}
    fields = ("direction", "frontier_in", "edges_examined", "discovered", "m_f", "m_u", "words_tested")
    assert [[getattr(lv, f) for f in fields] for lv in levels] == [[getattr(lv, f) for f in fields] for lv in grid]
    assert np.array_equal(r.distances, g.distances) and np.array_equal(r.parents, g.parents)


@pytest.mark.parametrize("where,copy", [("shared", 3), ("shared", 8), ("global", 8)])
def test_block_levels_keep_visited_where_asked_and_spill_their_queue_copy(monkeypatch, where, copy):
    """The block levels' shared memory: visited there or in global memory (knob block_visited),
    and frontier queues in their shared copy or longer (the rest in global memory), handed to the
    grid whole: the same answer, exact, directed too."""
    from explorer.techniques import bitmap_direction

    monkeypatch.setattr(bitmap_direction, "QUEUE_COPY", copy)
    kids = np.arange(1, 255)  # a binary tree: a frontier entry lost on the way is a subtree never reached
    tree = graphs.from_edges((kids - 1) // 2, kids, directed=False, name="tree255")
    for alpha in (1, 1_000_000):  # the grid goes on top-down, or bottom-up from the queue's bitmap
        knobs = {**SMALL, "one_block_vertices": 0, "narrow_edges": 20, "alpha": alpha, "block_visited": where}
        levels, r = _run(tree, 0, knobs)
        kinds = [lv.kernel for lv in levels]
        assert kinds[:3] == [Kernel.SINGLE_BLOCK] * 3 and kinds[3] is Kernel.MULTI_BLOCK
        assert levels[3].frontier_in == 8  # handed over from shared memory (copy 8) or global memory (3)
        assert np.array_equal(r.distances, cpu_bfs(tree, 0)[0])
    g = graphs.generate("grid2d", rows=9, cols=9)
    knobs = {**SMALL, "one_block_vertices": 0, "narrow_edges": 40, "block_visited": where}
    _, r = _run(g, 40, knobs)
    assert np.array_equal(r.distances, cpu_bfs(g, 40)[0])
    d = _directed()
    for source in range(d.num_vertices):
        _, r = _run(d, source, knobs)
        assert np.array_equal(r.distances, cpu_bfs(d, source)[0])


def test_a_small_graph_spills_its_queue_and_goes_to_the_grid_when_its_bitmaps_do_not_fit(monkeypatch, kron):
    from explorer.techniques import bitmap_direction

    source = int(np.argmax(kron.degrees()))
    words = -(-kron.num_vertices // 32)
    room = 227 * 1024  # the simulator's shared memory a block may have
    # Room for the bitmaps and five entries of each queue: the rest of every queue in global memory.
    monkeypatch.setattr(bitmap_direction, "STATIC_SHARED", room - 4 * (4 * words + 10))
    assert bitmap_direction.block_memory(kron.num_vertices, True, room, "shared") == (True, words, 5)
    levels, r = _run(kron, source, {**SMALL, "narrow_edges": 0})
    assert all(lv.kernel is Kernel.SINGLE_BLOCK for lv in levels) and {lv.direction for lv in levels} == {TD, BU}
    grid = graphs.generate("grid2d", rows=9, cols=9)  # 3 words: room for seven entries a queue
    levels, r = _run(grid, 40, {**SMALL, "narrow_edges": 0, "alpha": 1})
    assert all(lv.kernel is Kernel.SINGLE_BLOCK and lv.direction is TD for lv in levels)
    assert max(lv.frontier_in for lv in levels) > 7 and np.array_equal(r.distances, cpu_bfs(grid, 40)[0])
    # No room for the bitmaps: not small, whatever one_block_vertices says.
    monkeypatch.setattr(bitmap_direction, "STATIC_SHARED", room - 4 * (4 * words - 1))
    assert not bitmap_direction.block_memory(kron.num_vertices, True, room, "shared")[0]
    levels, r = _run(kron, source, {**SMALL, "narrow_edges": 0})
    assert Kernel.MULTI_BLOCK in {lv.kernel for lv in levels}


def test_any_dynamic_shared_memory_is_opted_in_to(monkeypatch):
    """Static and dynamic shared memory together may pass 48 KB only after the opt-in: a launch with
    47 KB of dynamic memory beside the kernel's own arrays fails without it (on a GPU; the simulator
    has no such limit, so the driver's call is checked here)."""
    import sys
    import types

    from explorer.techniques import bitmap_direction

    calls = []
    ok = object()
    drv = types.SimpleNamespace(
        CUfunction_attribute=types.SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="max-dynamic",
                                                   CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED="big-cluster"),
        CUresult=types.SimpleNamespace(CUDA_SUCCESS=ok),
        cuKernelSetAttribute=lambda attr, value, handle, device: calls.append((attr, value, handle, device)) or (ok,))
    monkeypatch.setitem(sys.modules, "cuda.bindings", types.SimpleNamespace(driver=drv))
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", drv)
    plan = types.SimpleNamespace(handle="kernel", cufunc=types.SimpleNamespace(device=types.SimpleNamespace(id=0)))
    for size in (0, 40_592, 47_096, 160_000):
        bitmap_direction._allow(plan, size, 0)
    assert calls == [("max-dynamic", size, "kernel", 0) for size in (40_592, 47_096, 160_000)]
    calls.clear()
    for cluster in (2, 8, 16):  # clusters of more than 8 blocks are not portable: they opt in too
        bitmap_direction._allow(plan, 0, cluster)
    assert calls == [("big-cluster", 1, "kernel", 0)]


def test_a_cluster_launch_asks_the_driver_how_many_clusters_fit(monkeypatch):
    """The set-up asks the driver's occupancy query how many clusters of the launch's shape fit (none:
    a knob error naming cluster, before anything runs); a fake driver here, which the launch's
    configuration reaches: the simulator places any cluster."""
    import sys
    import types

    from explorer.techniques import bitmap_direction

    ok = object()
    for fits in (0, 3):
        drv = types.SimpleNamespace(
            CUresult=types.SimpleNamespace(CUDA_SUCCESS=ok), CUlaunchConfig=types.SimpleNamespace,
            CUlaunchAttribute=lambda: types.SimpleNamespace(value=types.SimpleNamespace(
                clusterDim=types.SimpleNamespace())),
            CUlaunchAttributeID=types.SimpleNamespace(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION="cluster"),
            cuKernelGetFunction=lambda handle: (ok, ("function", handle)),
            cuOccupancyMaxActiveClusters=lambda func, cfg, fits=fits: (ok, fits))
        monkeypatch.setitem(sys.modules, "cuda.bindings", types.SimpleNamespace(driver=drv))
        monkeypatch.setitem(sys.modules, "cuda.bindings.driver", drv)
        plan = types.SimpleNamespace(handle="kernel", chunks=[])
        launch = bitmap_direction._DirectLaunch(plan, 16, 512, 40_000, False, True)
        assert launch.cfg.attrs[0].value.clusterDim.x == 16 and launch.clusters_fit() == fits


def test_a_search_longer_than_its_log_goes_on_in_another_launch(monkeypatch):
    from explorer.techniques import bitmap_direction

    g = graphs.from_edges(np.arange(11), np.arange(1, 12), directed=False, name="path12")
    want, _ = _run(g, 0, {**SMALL, "narrow_edges": 3})
    monkeypatch.setattr(bitmap_direction, "LOG_ROWS", 5)
    got, _ = _run(g, 0, {**SMALL, "narrow_edges": 3})
    assert [lv.launches for lv in got] == [1, 0, 0, 0, 0] * 2 + [1, 0]
    fields = ("direction", "kernel", "frontier_in", "edges_examined", "discovered", "m_f", "m_u")
    assert [[getattr(lv, f) for f in fields] for lv in got] == [[getattr(lv, f) for f in fields] for lv in want]


@pytest.mark.parametrize("one_block", [0, 1000])
def test_a_short_search_after_a_long_one_in_the_same_session_reads_only_its_own_rows(one_block):
    """The session's log comes back from the long search with its published rows in it; the short
    search publishes none (fewer than L.PUBLISH_LEVELS levels), so its records are its own only if
    the run starts from an empty header."""
    from explorer.engine import Session

    n = 2 * L.PUBLISH_LEVELS + 7
    g = graphs.from_edges(np.r_[np.arange(n - 1), n + np.arange(9)], np.r_[np.arange(1, n), n + np.arange(1, 10)],
                          directed=False, name="a long path and a short one")
    knobs = {**SMALL, "one_block_vertices": one_block}
    fields = ("frontier_in", "discovered", "m_f", "m_u", "launches")
    with Session(g) as s:
        long_levels, _ = _run(g, 0, knobs, session=s)
        short_levels, r = _run(g, n, knobs, session=s)
    fresh, _ = _run(g, n, knobs)
    assert len(long_levels) == n and len(short_levels) == 10 and r.distances[n + 9] == 9
    assert [[getattr(lv, f) for f in fields] for lv in short_levels] == [[getattr(lv, f) for f in fields] for lv in fresh]


@pytest.mark.parametrize("one_block", [0, 1000])
def test_long_searches_publish_their_rows_on_the_way_and_the_host_reads_the_rest(one_block):
    """More levels than L.PUBLISH_LEVELS in the block levels (block 0 of the grid, or a small
    graph's one block): the rows copied to the host on the way and those read after the launch make
    one record a level, in order."""
    n = 2 * L.PUBLISH_LEVELS + 7
    g = graphs.from_edges(np.arange(n - 1), np.arange(1, n), directed=False, name="path")
    levels, r = _run(g, 0, {**SMALL, "one_block_vertices": one_block})
    assert len(levels) == n and r.distances[-1] == n - 1
    assert [lv.frontier_in for lv in levels] == [1] * n
    assert [lv.discovered for lv in levels] == [1] * (n - 1) + [0]
    assert all(lv.kernel is Kernel.SINGLE_BLOCK for lv in levels)


def test_bad_knobs_are_named():
    with pytest.raises(KnobError, match="order"):
        run_bfs(graphs.generate("grid2d", rows=3, cols=3), 0, "bitmap-direction", {"order": "bfs"})
    with pytest.raises(KnobError, match="narrow_edges"):
        run_bfs(graphs.generate("grid2d", rows=3, cols=3), 0, "bitmap-direction", {"narrow_edges": -1})
    for bad in (1, 17):
        with pytest.raises(KnobError, match=f"cluster={bad}|cluster.*{bad}"):
            run_bfs(graphs.generate("grid2d", rows=3, cols=3), 0, "bitmap-direction", {"cluster": bad})


# ------------------------------------------------------------------------------ streaming
class _Event:
    def __init__(self):
        self.done = False

    def query(self):
        return self.done


def test_the_host_reads_levels_while_the_launch_runs():
    """The polling side of the log: rows a running launch has published come out before it ends,
    none that it has not published, and those it logged after its last publication once it has
    ended, from device memory (here a thread plays the kernel)."""
    from explorer.techniques.bitmap_direction import _Loop

    loop = object.__new__(_Loop)
    loop.L, loop.gpu, loop.ended, loop.first_row, loop.wide_kernel = L, True, _Event(), True, Kernel.MULTI_BLOCK
    loop.ctx = type("Ctx", (), {"instrument": True})()
    loop.log = np.zeros(L.log_size(8), np.int64)
    loop.log[L.H_GT0] = 1_000_000
    rows_out, published = [], threading.Event()
    release = threading.Event()

    def kernel():
        for i in range(3):
            r = L.H_SIZE + i * L.LOG_FIELDS
            loop.log[r + L.R_FRONTIER], loop.log[r + L.R_NEXT], loop.log[r + L.R_GT] = i + 1, i + 2, 1_000_000 * (i + 2)
            loop.log[L.H_PUBLISHED] = i + 1
            if i == 1:
                published.set()
                release.wait(30)
        loop.ended.done = True

    tail = [0] * L.LOG_FIELDS
    tail[L.R_FRONTIER], tail[L.R_GT] = 4, 5_000_000
    loop._rest = lambda seen: [tail] if seen == 3 else []
    t = threading.Thread(target=kernel)
    t.start()
    gen = loop.streamed()
    published.wait(30)
    rows_out.append(next(gen))
    rows_out.append(next(gen))
    assert not loop.ended.done  # two levels handed over while the launch still runs
    release.set()
    rows_out.extend(gen)
    t.join()
    assert [b.rows[0]["frontier_in"] for _, b in rows_out] == [1, 2, 3, 4]
    assert [ms for ms, _ in rows_out] == [1.0, 1.0, 1.0, 1.0]  # each level's own device time
    assert [b.rows[0]["launches"] for _, b in rows_out] == [1, 0, 0, 0]


def test_the_enactor_yields_streamed_levels_before_the_step_ends():
    """The enactor's hook: levels from `streamed()` are records as they come, with their own times;
    `collect` runs after them and may add none."""
    from explorer.engine.enactor import BFSRun
    from explorer.techniques.base import Batch, BFSTechnique, LevelLoop
    from explorer.techniques import Technique

    calls = []

    class Loop(LevelLoop):
        compiled_ahead = True
        readback = None

        def __init__(self, ctx):
            self.ctx = ctx

        def launch(self, go):
            calls.append("launch")

        def streamed(self):
            for i, ms in enumerate((0.5, 0.25)):
                calls.append(f"stream {i}")
                yield ms, Batch([dict(frontier_in=1, edges_examined=0, discovered=1 - i, frontier_out=1 - i,
                                      dup_generated=0, dup_detected=0, dup_undetected=0, kernel="multi-block",
                                      direction="top-down", launches=1 - i)])

        def collect(self, ms):
            calls.append("collect")
            self.converged = True
            return Batch([])

        def result(self):
            return np.array([0, 1], np.int32), np.array([0, 0], np.int32)

    class Fake(BFSTechnique):
        technique = Technique.BITMAP_DIRECTION
        runtimes = frozenset({"cpu"})

        def start(self, ctx):
            return Loop(ctx)

    g = graphs.from_edges(np.array([0]), np.array([1]), directed=False)
    from explorer.knobs import NoKnobs

    run = BFSRun(Fake(), g, 0, NoKnobs(), True, None)
    it = iter(run)
    first = next(it)
    assert calls == ["launch", "stream 0"] and first.level == 0 and first.time_ms == 0.5
    rest = list(it)
    assert calls == ["launch", "stream 0", "stream 1", "collect"] and [lv.time_ms for lv in rest] == [0.25]
    assert run.result.total_ms == pytest.approx(0.75)


# ------------------------------------------------------------------------------ the benchmark
def test_the_benchmark_runs_on_the_harness(tmp_path):
    """benchmarks/bitmap_direction.py --smoke: its table and roots on tiny graphs, every result checked."""
    import json

    from benchmarks import bitmap_direction as bench
    from benchmarks import harness

    if harness.environment()["backend"] != "simulator":
        pytest.skip("--smoke selects the simulator: on a GPU the benchmark itself runs")
    assert bench.main(["table", "roots", "--smoke", "--graphs", "grid1000", "--repeats", "1", "--roots", "2",
                       "--no-peers", "--before", "--out", str(tmp_path)]) == 0
    table = json.loads(next(tmp_path.glob("*/bitmap-direction-table-smoke.json")).read_text())["results"]
    label, technique, _, _ = bench.before_configs()["grid1000"]
    assert [r["config"] for r in table] == [f"before: {label}"] + [lb for lb, _ in bench.CONFIGS["final"]["high"]]
    assert table[0]["technique"] == technique and table[0]["before"]
    assert all(r["correct"] and r["levels"] == 5 for r in table)
    md = next(tmp_path.glob("*/bitmap-direction-table-smoke.md")).read_text()
    assert f"({label})" in md and "before / ours" in md
    roots = json.loads(next(tmp_path.glob("*/bitmap-direction-roots-smoke.json")).read_text())["results"]
    assert all(r["correct"] and r["roots"] == 2 for r in roots)
