"""BFS-4K against the CPU reference over a grid of knobs, duplicate bookkeeping, and the paper's
behaviour (Fig. 7, 12, 13). Under the simulator the blocks are small (32-64 threads) and the
pretend GPU has 256 resident threads, so every per-level decision is exercised on tiny graphs;
on a real GPU the same tests run with the device's own limits."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import backend, graphs
from explorer.engine import DeviceLimits

from _support import checked_run, small_graphs

SIM = backend.current().is_simulator
SMALL = small_graphs()
TINY = DeviceLimits(name="tiny", sm_count=1, max_threads_per_sm=256, clusters=True) if SIM else None
# Small blocks keep the simulator fast (each CUDA thread is a Python thread).
BASE = {"single_block_threads": 64, "K6": 64} if SIM else {}


def bfs4k(g, source="max-degree", limits=TINY, **knobs):
    r = checked_run(g, source, "bfs4k", {**BASE, **knobs}, limits=limits)
    # The levels of one single-block launch share its time (by the block's cycle counter).
    assert all(lv.time_ms >= 0 for lv in r.levels)
    assert sum(lv.time_ms for lv in r.levels) == pytest.approx(r.total_ms)
    for lv in r.levels:
        # Every copy a filter drops was a real duplicate, and every vertex keeps one copy.
        assert lv.dup_generated == lv.dup_detected + lv.dup_undetected, lv
        assert lv.frontier_out == lv.discovered + lv.dup_undetected, lv
        if knobs.get("claim") == "atomic":
            assert lv.dup_generated == 0
        if knobs.get("dedup") == "none":
            assert lv.dup_detected == 0 and lv.dup_conflicts == 0
    return r


# The defaults and the knob grid (BFS4K.test_knobs, every knob's extremes) on every small graph:
# tests/conformance. Here: what makes BFS-4K BFS-4K.


def test_heavy_vertices_multi_block_child_grid():
    # Degree 40 >= K3 x block = 1 x 32: the hub takes the child-grid path.
    r = bfs4k(SMALL["star40"], K2=10.0, K3=1, K5=0, K6=32)
    assert r.levels[0].heavy_vertices == 1 and r.levels[0].launches == 4  # memset, level, child grid, statistics


@pytest.mark.parametrize("fused_max", [0, 512, 1 << 40])
@pytest.mark.parametrize("name", ["kron6", "grid6x7", "karate", "directed"])
def test_multi_block_levels_plan_from_the_next_frontiers_statistics(name, fused_max, monkeypatch):
    # Each level's edges examined are the degree sum its plan took from the previous level's
    # statistics: bfs4k_stats', or the level kernel's last block's (fused: no statistics launch).
    # Blocks of 32 threads, so a level has several blocks and the last one to finish counts.
    from explorer.techniques.operators.bfs4k import levels

    monkeypatch.setattr(levels, "FUSED_STATS_MAX", fused_max)
    g = SMALL[name]
    r = bfs4k(g, K5=0, K6=32, K2=0, claim="atomic")
    degrees = g.degrees()
    for lv in r.levels:
        assert lv.edges_examined == degrees[r.distances == lv.level].sum(), lv
    # The first level clears its buffer with a memset; each level clears the next one's.
    fused = [min(lv.edges_examined, g.num_vertices) <= fused_max for lv in r.levels]
    assert [lv.launches for lv in r.levels] == [(i == 0) + 1 + (not f) for i, f in enumerate(fused)]
    if fused_max == 512:
        assert all(fused)  # these graphs' levels are small


def test_heavy_vertex_leaves_the_single_block():
    # Its child grid can only be launched from the host, so the level runs multi-block.
    r = bfs4k(SMALL["star40"], K2=10.0, K3=1, K5=2, single_block_threads=32, K6=32)
    assert r.levels[0].kernel == "multi-block" and r.levels[0].heavy_vertices == 1
    assert r.levels[1].kernel == "single-block"


def test_several_heavy_vertices_share_one_child_grid():
    # Source 0 -> hubs 1, 2, 3 (degrees ~41, 51, 71, leaves overlapping): one child grid walks
    # all three rows, its threads crossing from one hub's row into the next.
    src = [0, 0, 0]
    dst = [1, 2, 3]
    for hub, lo, hi in ((1, 4, 44), (2, 30, 80), (3, 60, 130)):
        src += [hub] * (hi - lo)
        dst += list(range(lo, hi))
    g = graphs.from_edges(np.array(src), np.array(dst), directed=False, name="three-hubs")
    r = bfs4k(g, 0, K2=5.0, K3=1, K5=0, K6=32)
    # Level 0's kernel computed the statistics that found the hubs; it cleared level 1's counters.
    assert r.levels[0].launches == 2  # memset, level (statistics fused)
    assert r.levels[1].heavy_vertices == 3 and r.levels[1].launches == 3  # level, child grid, statistics


def test_shared_visited_bitmap_across_kernel_switches():
    # Fig. 7's switches both ways: each single-block launch loads the bitmap from the distances
    # the multi-block levels wrote; a path (one vertex a level) crosses many bitmap words.
    g = graphs.generate("kronecker", scale=8, edge_factor=8, seed=1)
    r = bfs4k(g, single_block_threads=32, K2=0, claim="atomic", visited="shared")
    assert {lv.kernel for lv in r.levels} == {"single-block", "multi-block"}
    r = bfs4k(SMALL["path25"], 0, claim="atomic", visited="shared", K1=1, K4=0)
    assert all(lv.kernel == "single-block" for lv in r.levels)
    # The block, and bfs4k_commit writing its visit log into dist and parent.
    assert r.levels[0].launches == 2


@pytest.mark.parametrize("C", [2, 4])
def test_cluster_form_across_kernel_switches(C):
    # F_Threshold = C x 32: the cluster hands the frontier to the multi-block kernel and takes it
    # back (Fig. 7), each launch dealing the queue out over its blocks' shared memory.
    g = graphs.generate("kronecker", scale=7 + C // 2, edge_factor=8, seed=1)  # its widest level > C x 32
    r = bfs4k(g, single_block_threads=32, K2=0, claim="atomic", visited="shared", cluster=C)
    assert {lv.kernel for lv in r.levels} == {"cluster", "multi-block"}
    # A path: one vertex a level, so most blocks hold no frontier at all, level after level.
    r = bfs4k(SMALL["path25"], 0, claim="atomic", visited="shared", cluster=C, K1=1, K4=0)
    assert all(lv.kernel == "cluster" for lv in r.levels)
    assert r.levels[0].launches == 2 and sum(lv.launches for lv in r.levels) == 2  # one cluster, one commit


@pytest.mark.parametrize("C", [1, 2])
def test_a_single_block_launch_out_of_log_rows_is_continued_by_the_next(monkeypatch, C):
    # One block logs up to MAX_LOG levels a launch; the cluster form a row a level and block, up to
    # MAX_LOG_ROWS rows. Logs of 4 levels: the path's 25 levels in 7 launches, the records as one's.
    from explorer.techniques.operators.bfs4k import levels

    knobs = {"claim": "atomic", "visited": "shared", "cluster": C, "K1": 1, "K4": 0}
    want = bfs4k(SMALL["path25"], 0, **knobs)
    monkeypatch.setattr(levels, "MAX_LOG", 4 if C == 1 else 1 << 15)
    monkeypatch.setattr(levels, "MAX_LOG_ROWS", 1 << 16 if C == 1 else 4 * C)
    got = bfs4k(SMALL["path25"], 0, **knobs)
    assert len(got.levels) == 25
    assert [lv.launches for lv in got.levels] == ([2, 0, 0, 0] * 7)[:25]  # the block (or cluster), its commit
    fields = ("kernel", "frontier_in", "edges_examined", "discovered", "frontier_out")
    assert [[getattr(lv, f) for f in fields] for lv in got.levels] == [[getattr(lv, f) for f in fields] for lv in want.levels]


def test_heavy_vertex_leaves_the_cluster():
    # Level 1's frontier holds three hubs (degrees 41-71 >= K3 x block = 32): every block of the
    # cluster reads the same statistics and leaves, and the host runs the level with its child grid.
    src, dst = [0, 0, 0], [1, 2, 3]
    for hub, lo, hi in ((1, 4, 44), (2, 30, 80), (3, 60, 130)):
        src += [hub] * (hi - lo)
        dst += list(range(lo, hi))
    g = graphs.from_edges(np.array(src), np.array(dst), directed=False, name="three-hubs")
    r = bfs4k(g, 0, K2=5.0, K3=1, K6=32, single_block_threads=32, claim="atomic", visited="shared", cluster=4)
    assert r.levels[0].kernel == "cluster"
    assert r.levels[1].kernel == "multi-block" and r.levels[1].heavy_vertices == 3


@pytest.mark.skipif(SIM, reason="a bitmap over 48 KB of shared memory needs a GPU's opt-in (and a graph too big for the simulator)")
def test_shared_visited_bitmap_beyond_48_kb():
    g = graphs.generate("grid2d", rows=700, cols=700)  # 61,256 bytes of flags: the launcher opts in
    r = bfs4k(g, 350 * 700 + 350, limits=None, claim="atomic", visited="shared", K5=2, K4=0, K1=1)
    assert all(lv.kernel == "single-block" for lv in r.levels)


@pytest.mark.parametrize("knobs", [{"K5": 0}, {"K5": 0, "K2": 10.0, "K3": 1, "K6": 32}, {},
                                   {"visited": "shared", "cluster": 4, "single_block_threads": 32}],
                         ids=["multi-block", "with child grids", "both kernels", "cluster form"])
def test_edges_examined_are_the_frontiers_degrees(knobs):
    # Each level's plan comes from the degree histogram the previous level's statistics kernel
    # (or the single block) counted: its degree sum must be the frontier's.
    g = SMALL["kron6"]
    r = bfs4k(g, claim="atomic", **knobs)
    deg, d = g.degrees(), r.distances
    assert [lv.edges_examined for lv in r.levels] == [int(deg[d == lv.level].sum()) for lv in r.levels]


def test_heavy_vertices_edge_discover():
    g = graphs.from_edges(np.r_[np.zeros(70, np.int64), np.arange(1, 70)],
                          np.r_[np.arange(1, 71), np.arange(2, 71)], directed=False, name="fan70")
    r = bfs4k(g, 0, K2=5.0, K3=1, K5=0, K6=32, K4=4)
    assert r.levels[0].edge_discover and r.levels[0].heavy_vertices == 1


edge_lists = st.integers(2, 48).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=150), st.booleans()))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_lists, st.integers(0, 10**6), st.sampled_from([
    {}, {"K5": 0, "K4": 0, "K1": 2}, {"claim": "atomic", "K5": 0}, {"dedup": "warp-culling", "K4": 1}]))
def test_hypothesis_graphs(case, seed, knobs):
    n, edges, directed = case
    g = graphs.from_edges(np.array([e[0] for e in edges], np.int64), np.array([e[1] for e in edges], np.int64),
                          num_vertices=n, directed=directed, name="hyp")
    bfs4k(g, seed % n, **knobs)


def test_fig7_single_block_at_both_ends_multi_block_in_the_middle():
    g = graphs.generate("kronecker", scale=8, edge_factor=8, seed=1) if SIM else \
        graphs.generate("kronecker", scale=18, edge_factor=16, seed=1)
    # K2=0: a heavy source would start in the multi-block kernel, its child grid launched from the host.
    r = bfs4k(g, single_block_threads=32, K2=0) if SIM else bfs4k(g, limits=None, K2=0)
    kinds = [lv.kernel for lv in r.levels]
    assert kinds[0] == "single-block" and kinds[-1] == "single-block"
    assert "multi-block" in kinds
    first_multi, last_multi = kinds.index("multi-block"), len(kinds) - 1 - kinds[::-1].index("multi-block")
    assert all(k == "multi-block" for k in kinds[first_multi:last_multi + 1])  # one switch each way
    thr = (32 if SIM else 1024) * 1
    for lv in r.levels:
        assert (lv.kernel == "single-block") == (lv.frontier_in < thr)


def _total(r, field):
    return sum(getattr(lv, field) for lv in r.levels)


# Which threads race for a vertex depends on real warp scheduling; the simulator reproduces only
# the lock step inside a warp, so the paper's duplicate shapes are checked on a GPU.
gpu_only = pytest.mark.skipif(SIM, reason="duplicate counts need real warp scheduling (GPU only)")


@gpu_only
def test_fig12_virtual_warp_4_generates_more_duplicates_than_edge_discover():
    g = graphs.generate("kronecker", scale=16, edge_factor=16, seed=1)
    vw = bfs4k(g, K5=0, K4=0, K1=4, dedup="none")
    ed = bfs4k(g, K5=0, K4=4, dedup="none")
    assert _total(vw, "dup_generated") > _total(ed, "dup_generated")
    assert any(lv.warp_size == 4 for lv in vw.levels) and any(lv.edge_discover for lv in ed.levels)


@gpu_only
def test_fig13_hash64_detects_more_with_fewer_conflicts_than_warp_culling():
    # Fig. 13's setting: virtual warps of 4 on a graph with many duplicates (on an H200, about
    # 250k per BFS of this mesh; on Kronecker graphs only ~10 are detectable, too few to compare).
    g = graphs.sample_graph("delaunay_n16")
    hashed = bfs4k(g, K5=0, K4=0, K1=4, dedup="hash64")
    culled = bfs4k(g, K5=0, K4=0, K1=4, dedup="warp-culling")
    assert _total(hashed, "dup_detected") > _total(culled, "dup_detected")
    assert _total(hashed, "dup_conflicts") <= _total(culled, "dup_conflicts")


def test_frontier_queues_grow_when_duplicates_compound(monkeypatch):
    # With the racy claim and no filter, a vertex enqueued k times expands its arcs k times, so a
    # level can need more queue entries than the graph has arcs (an H100 overflowed on a 7 x 9
    # grid). The loop grows the queues before such a level; here they start at one entry.
    from explorer.techniques.operators.bfs4k.levels import BFS4KLevels

    monkeypatch.setattr(BFS4KLevels, "initial_capacity", staticmethod(lambda graph, race: 1))
    messages = []
    r = checked_run(SMALL["grid6x7"], 0, "bfs4k", {**BASE, "K5": 0, "dedup": "none"}, limits=TINY,
                    on_status=messages.append)
    assert any("queues grew" in m for m in messages)
    assert r.num_levels == 12


def test_a_single_block_launch_costs_one_state_read_back(monkeypatch):
    # The single block's state comes back in the step's one read-back (beside the counters and the
    # histogram) and its log rows by one copy into pinned memory: no further synchronous copies
    # (Runtime.to_host) between launches. Only the run's result copies distances and parents.
    # Runtime.to_host serves the GPU's runtime and the simulator's (which inherits it).
    from explorer.engine.runtime import Runtime

    copies = []
    real = Runtime.to_host
    monkeypatch.setattr(Runtime, "to_host", lambda self, a: (copies.append(a.shape), real(self, a))[1])
    g = SMALL["grid6x7"]
    r = bfs4k(g, 0, K5=4, K1=4)
    assert {lv.kernel.value for lv in r.levels} == {"single-block"} and r.num_levels == 12
    assert copies == [(g.num_vertices,), (g.num_vertices,)]


def test_exclusive_claims_are_instrumented_without_the_duplicate_stamps():
    # Compare-and-swap and the visited bitmap claim each vertex once, so their duplicates' ground
    # truth is 0 by construction: instrumenting them compiles the same kernels as not (the two
    # atomic exchanges a claim cost Kronecker 22 half its time); the racy claim keeps them.
    from kernels import bfs4k as k

    for cluster in (1, 2):
        assert k.kernels_for(True, True, k.NO_DEDUP, 64, True, cluster) == \
            k.kernels_for(False, True, k.NO_DEDUP, 64, True, cluster)
    assert k.kernels_for(True, True, k.HASH64, 64) == k.kernels_for(False, True, k.HASH64, 64)
    race, plain = k.kernels_for(True, False, k.HASH64, 64), k.kernels_for(False, False, k.HASH64, 64)
    assert race.multi is not plain.multi and race.single is not plain.single
    r = bfs4k(SMALL["kron6"], claim="atomic", K5=0)  # its records still count, and find none
    assert all(lv.dup_generated == 0 and lv.discovered == lv.frontier_out for lv in r.levels)
    racy = bfs4k(SMALL["kron6"], claim="race", dedup="none", K5=0, K1=4)
    assert racy.summary()["duplicates_generated"] > 0


def test_queues_never_grow_without_duplicates():
    # With the atomic claim a frontier holds each vertex once: |V| entries suffice however many
    # edges a level examines (growing them to the edge count slowed Kronecker 22 from 2.8 to 4.8 ms).
    messages = []
    r = checked_run(SMALL["kron6"], "max-degree", "bfs4k", {**BASE, "K5": 0, "claim": "atomic"}, limits=TINY,
                    on_status=messages.append)
    assert not any("queues grew" in m for m in messages)
    assert max(lv.edges_examined for lv in r.levels) > SMALL["kron6"].num_vertices  # edges > |V| somewhere
