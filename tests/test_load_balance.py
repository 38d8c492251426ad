"""load-balance: the chapter's §5 catalogue as the values of one expand knob. What the conformance
suite does not see: that every strategy inspects each edge of the frontier exactly once whatever
its shape (hubs, lists of every length, entries of degree 0 between the work, slices longer than
shared memory); the work each mapping does to get there (binary searches, CTA and warp phases,
virtual warp sizes, child grids); the passes each level launches; and the knobs' checks."""
import math

import numpy as np
import pytest

from explorer import graphs
from explorer.engine.runtime import DeviceLimits
from explorer.knobs import KnobError
from explorer.reference import cpu_bfs
from explorer.techniques import implementation, make_knobs
from kernels.load_balance import layout as L

from _support import checked_run

LB = "load-balance"
B = 32
STRATEGIES = L.EXPAND_NAMES


def mixed_degrees():
    """Directed: source 0 -> 1..70; vertex 1 has 120 out-arcs (more than a block of 32), 2..4 have
    40 (more than a warp), 5..9 have 5, 10..69 none (sinks between the work), 70 has 3; the arcs
    end in 71..300, some shared, so that lists of every class meet."""
    src, dst = [np.zeros(70, np.int64)], [np.arange(1, 71)]
    rng = np.random.default_rng(7)
    for v, deg in [(1, 120)] + [(v, 40) for v in (2, 3, 4)] + [(v, 5) for v in range(5, 10)] + [(70, 3)]:
        src.append(np.full(deg, v))
        dst.append(rng.choice(np.arange(71, 301), size=deg, replace=False))
    return graphs.from_edges(np.concatenate(src), np.concatenate(dst), num_vertices=301, directed=True,
                             name="mixed-degrees")


def sinks_between():
    """Directed: 0 -> 1..100; 1 -> 101, 102 and 100 -> 103, 104; 2..99 are sinks. Level 1's work
    (4 edges) lies in its first and last entries, 98 entries of degree 0 apart: with B = 32 and
    K = IS = 1 the slice of a chunk (entries 0..99) does not fit its 33 words of shared memory and
    the searches read the global prefix sum."""
    src = np.r_[np.zeros(100, np.int64), 1, 1, 100, 100]
    dst = np.r_[np.arange(1, 101), 101, 102, 103, 104]
    return graphs.from_edges(src, dst, num_vertices=105, directed=True, name="sinks-between")


GRAPHS = {"mixed": mixed_degrees(), "sinks": sinks_between(), "kron": graphs.generate("kronecker", scale=6,
                                                                                      edge_factor=8, seed=2)}


def _frontiers(g, source):
    d, _ = cpu_bfs(g, source)
    deg = g.degrees()
    return [deg[d == i] for i in range(int(d.max()) + 1)]


@pytest.mark.parametrize("expand", STRATEGIES)
@pytest.mark.parametrize("name", ["mixed", "sinks"])
def test_every_strategy_inspects_each_edge_of_the_frontier_once(expand, name):
    g = GRAPHS[name]
    knobs = {"expand": expand, "block_threads": B, "K": 1, "IS": 1, "W": 4}
    r = checked_run(g, 0, LB, knobs)
    fronts = _frontiers(g, 0)
    assert [lv.frontier_in for lv in r.levels] == [len(f) for f in fronts]
    assert [lv.edges_examined for lv in r.levels] == [int(f.sum()) for f in fronts]
    assert all(lv.dup_generated == lv.dup_detected == lv.dup_undetected == 0 for lv in r.levels)
    assert all(lv.expand == expand for lv in r.levels)


@pytest.mark.parametrize("expand,K,IS", [("direct-search", 1, 1), ("two-phase", 1, 1), ("two-phase", 3, 1),
                                         ("multi-phase", 1, 1), ("multi-phase", 2, 3), ("block-search", 2, 1)])
def test_binary_searches_are_the_strategys(expand, K, IS):
    """Direct search: one per edge. Two-phase: one per chunk of B K edges (the partition) and one
    per thread, i.e. per K edges. Multi-phase: one per chunk of B K IS edges and one per K edges
    (IS per thread). Block search: one per thread that has edges, at most B per chunk of entries."""
    g = GRAPHS["mixed"]
    r = checked_run(g, 0, LB, {"expand": expand, "block_threads": B, "K": K, "IS": IS})
    for lv, f in zip(r.levels, _frontiers(g, 0)):
        units = int(f.sum())
        if expand == "direct-search":
            want = units
        elif expand == "two-phase":
            want = math.ceil(units / (B * K)) + math.ceil(units / K)
        elif expand == "multi-phase":
            want = math.ceil(units / (B * K * IS)) + math.ceil(units / K)
        else:
            chunks = math.ceil(len(f) / (B * K))
            assert (units > 0) <= lv.searches <= min(units, B * chunks), lv
            continue
        assert lv.searches == want, (lv.level, units)


def test_cta_and_warp_phases_take_the_lists_above_their_thresholds():
    # Algorithm 9: lists longer than CTA_TH (default: the block's size, 32) go to the block, those
    # longer than WARP_TH (here 4) to a warp, the rest to the block's prefix sum.
    g = GRAPHS["mixed"]
    r = checked_run(g, 0, LB, {"expand": "cta-warp-scan", "block_threads": B, "warp_threshold": 4})
    for lv, f in zip(r.levels, _frontiers(g, 0)):
        assert lv.cta_gathered == int((f > B).sum()), lv
        assert lv.warp_gathered == int(((f > 4) & (f <= B)).sum()), lv
    assert r.levels[1].cta_gathered == 4 and r.levels[1].warp_gathered == 5  # 120, 40 x 3; 5 x 5


def test_record_extras_say_which_mapping_ran():
    g = GRAPHS["kron"]
    vw = checked_run(g, "max-degree", LB, {"expand": "virtual-warps", "W": 8, "block_threads": B})
    assert {lv.warp_size for lv in vw.levels} == {8}
    assert all(lv.searches is None and lv.cta_gathered is None for lv in vw.levels)
    lws = checked_run(g, "max-degree", LB, {"expand": "local-warp-search", "block_threads": B})
    assert {lv.warp_size for lv in lws.levels} == {32}
    assert all(lv.searches % 32 == 0 for lv in lws.levels) and sum(lv.searches for lv in lws.levels) > 0
    wi = checked_run(g, "max-degree", LB, {"expand": "work-items", "block_threads": B})
    assert all(lv.warp_size is None and lv.searches is None and lv.heavy_vertices is None for lv in wi.levels)
    assert [lv.blocks for lv in wi.levels] == [-(-lv.frontier_in // B) for lv in wi.levels]


def test_dynamic_virtual_warps_are_bfs4ks_level_with_its_child_grid():
    # The star's hub (degree 59 >= K3 x block = 32) goes to a child grid; then virtual warps sized
    # by §5.2's rule from the frontier's size, at least K1.
    star = graphs.from_edges(np.zeros(59, np.int64), np.arange(1, 60), directed=False, name="star59")
    r = checked_run(star, 0, LB, {"expand": "dynamic-virtual-warps", "block_threads": B, "K1": 2, "K2": 10.0,
                                  "K3": 1}, limits=DeviceLimits(name="tiny", sm_count=1, max_threads_per_sm=256))
    hub, leaves = r.levels
    assert hub.heavy_vertices == 1 and leaves.heavy_vertices == 0
    # memset, level, child grid, statistics; then the level alone: the hub's level cleared its
    # counters, and its own last block counts the (empty) next frontier's histogram.
    assert hub.launches == 4 and leaves.launches == 1
    assert leaves.warp_size == 4  # pow2_floor(256 resident threads / 59 vertices)
    assert hub.edges_examined == 59 and leaves.edges_examined == 59


@pytest.mark.parametrize("expand,launches", [("work-items", 1), ("cta-warp-scan", 1), ("direct-search", 4),
                                             ("block-search", 4), ("two-phase", 5), ("multi-phase", 5)])
def test_passes_before_the_level(expand, launches):
    # The search strategies scan the frontier's degrees first (three kernels), two-phase and
    # multi-phase partition them too; the level's first kernel clears the next level's counters.
    r = checked_run(GRAPHS["kron"], "max-degree", LB, {"expand": expand, "block_threads": B})
    assert {lv.launches for lv in r.levels} == {launches}


def test_uninstrumented_records_leave_out_what_was_not_counted():
    g = GRAPHS["mixed"]
    r = checked_run(g, 0, LB, {"expand": "two-phase", "block_threads": B}, instrument=False)
    assert all(lv.edges_examined is None and lv.searches is None and lv.dup_generated is None for lv in r.levels)
    sizes = [len(f) for f in _frontiers(g, 0)]
    assert [lv.discovered for lv in r.levels] == sizes[1:] + [0]  # compare-and-swap: claims are discoveries


def test_bad_knobs_name_the_knob_and_the_range():
    with pytest.raises(KnobError, match="knob expand='merge-path' is invalid: one of 'work-items'"):
        make_knobs(LB, {"expand": "merge-path"})
    with pytest.raises(KnobError, match=r"knob K=0 is out of range: int in \[1, 32\]"):
        make_knobs(LB, {"K": 0})
    with pytest.raises(KnobError, match="knob W=3"):
        make_knobs(LB, {"W": 3})


def test_shared_memory_is_checked_before_anything_runs():
    impl = implementation(LB)
    small = DeviceLimits(name="small", sm_count=1, max_threads_per_sm=2048)  # 48 KB a block
    knobs = make_knobs(LB, {"expand": "multi-phase", "block_threads": 1024, "K": 8, "IS": 4})
    with pytest.raises(KnobError, match="expand='multi-phase' with block_threads=1024, K=8, IS=4 needs .* lower K"):
        impl.check(GRAPHS["kron"], knobs, small)
    impl.check(GRAPHS["kron"], make_knobs(LB, {"expand": "work-items", "block_threads": 1024, "K": 32}), small)
    # The host's layout is the kernels': the sizes the strategies' regions add up to.
    assert L.shared_bytes(L.MULTI_PHASE, 256, 4, 2, False, 0) == 8 * (256 * 4 * 2 + 1 + 256 * 4) + 4 * 256 * 4
    assert L.shared_bytes(L.CTA_WARP_SCAN, 64, 0, 0, True, 1024) == 8 * 256 + 4 * (2 * 128 + 1024 + 256)
