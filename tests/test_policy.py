"""BFS-4K's per-level policy and shared-memory layout: pure host code, no kernels."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.engine import DeviceLimits
from explorer.knobs import KnobError
from explorer.techniques.bfs4k import BFS4KKnobs as Knobs
from explorer.techniques.bfs4k import recommend_knobs
from explorer.techniques.operators.bfs4k import policy
from explorer.techniques.operators.bfs4k.policy import (FrontierStats, multi_block_layout, plan_level,
                                                        single_block_layout)
from kernels import rules

H200 = DeviceLimits(name="H200-like", sm_count=132, max_threads_per_sm=2048,
                    shared_per_block=48 * 1024, shared_per_sm=228 * 1024, shared_per_block_optin=227 * 1024)


def frontier(degrees):
    return FrontierStats.of_vertices(np.asarray(degrees))


def test_rules_pow2_and_bins():
    assert [rules.pow2_floor(x) for x in (0, 1, 2, 3, 4, 1023, 1024)] == [1, 1, 2, 2, 4, 512, 1024]
    assert [rules.degree_bin(d) for d in (0, 1, 2, 3, 4, 7, 8, 1 << 20)] == [0, 0, 1, 1, 2, 2, 3, 20]


@pytest.mark.parametrize("res,size,k1,expected", [
    (270336, 1, 4, 32),        # tiny frontier: the largest warp
    (270336, 270336, 4, 4),    # one thread per vertex available: clamped to K1
    (270336, 20000, 4, 8),     # 270336/20000 = 13.5 -> 8
    (1024, 100, 4, 8),         # single block: #ResThreads is the block size
    (1024, 100, 16, 16),       # K1 raises the floor
    (1024, 0, 4, 32),
])
def test_virtual_warp_size_formula(res, size, k1, expected):
    assert rules.virtual_warp_size(res, size, k1) == expected


@given(st.lists(st.integers(0, 50), min_size=32, max_size=32), st.integers(0, 120), st.integers(1, 1 << 20))
def test_has_heavy_agrees_with_heavy_bin(bins, limit, min_heavy_degree):
    assert rules.has_heavy(bins, limit, min_heavy_degree) == (
        rules.heavy_bin(bins, limit, min_heavy_degree) < rules.DEGREE_BINS)


def test_edge_discover_switch_uses_k4():
    assert rules.use_edge_discover(1000, 499, 2) and not rules.use_edge_discover(1000, 500, 2)
    assert not rules.use_edge_discover(1000, 1, 0)  # K4 = 0 disables


def test_single_block_below_threshold_multi_above():
    knobs = Knobs(K5=1, single_block_threads=1024)
    assert plan_level(frontier([3] * 1023), knobs, H200, 10**6).kernel == "single-block"
    assert plan_level(frontier([3] * 1024), knobs, H200, 10**6).kernel == "multi-block"
    assert plan_level(frontier([3] * 10), knobs.replace(K5=0), H200, 10**6).kernel == "multi-block"
    assert plan_level(frontier([3] * 2047), knobs.replace(K5=2), H200, 10**6).kernel == "single-block"


def test_multi_block_warp_size_and_grid():
    knobs = Knobs(K4=0, K6=128)
    plan = plan_level(frontier([5] * 20000), knobs, H200, 10**6)
    assert plan.kernel == "multi-block" and plan.warp_size == 8 and not plan.edge_discover
    assert plan.blocks == -(-20000 * 8 // 128) and plan.block_threads == 128


def test_heavy_vertices_take_child_grids_sized_by_k3():
    degs = [4] * 5000 + [5000, 9000, 70000]
    knobs = Knobs(K2=0.15, K3=16, K6=128, K4=0)
    plan = plan_level(frontier(degs), knobs, H200, 10**6)
    # min degree 16 x 128 = 2048: the three hubs, limit 1500 vertices
    assert plan.heavy_vertices == 3 and plan.heavy_edges == 5000 + 9000 + 70000
    assert plan.heavy_degree == 2048  # the lowest power of two >= K3 x block with the same set
    assert plan.heavy_blocks == -(-84000 // (16 * 128))
    assert plan_level(frontier(degs), knobs.replace(K2=0), H200, 10**6).heavy_vertices == 0
    # the limit is K2 % of |V|: 0.15 % of 1000 vertices is 1 vertex, so no whole bin fits
    assert plan_level(frontier(degs), knobs, H200, 1000).heavy_vertices == 1  # 70000 alone in its bin


def test_binary_scan_only_when_each_lane_holds_at_most_one_vertex():
    knobs = Knobs(K4=0, K1=4)
    assert plan_level(frontier([3] * 100000), knobs, H200, 10**6).binary_scan  # W=4 >= degree 3
    assert not plan_level(frontier([9] * 100000), knobs, H200, 10**6).binary_scan
    assert not plan_level(frontier([3] * 100), knobs.replace(K4=2), H200, 10**6).binary_scan  # edge-discover


def test_frontier_degree_warp_rule():
    knobs = Knobs(K4=0, K1=4, K2=0.0, warp_size_rule="frontier-degree")
    # A power-law graph's second level: a large frontier of high-degree vertices gets whole warps ...
    assert plan_level(frontier([400] * 150000 + [3] * 10000), knobs, H200, 10**6).warp_size == 32
    # ... its third, mostly low-degree vertices, keeps K1 (the median vertex has degree 5: bin 2)
    assert plan_level(frontier([5] * 1500000 + [300] * 500000), knobs, H200, 10**7).warp_size == 4
    # the paper's rule would give K1 to both, and both rules agree on a small frontier (§5.2: 32)
    paper = knobs.replace(warp_size_rule="resident-threads")
    assert plan_level(frontier([400] * 150000), paper, H200, 10**6).warp_size == 4
    assert plan_level(frontier([3] * 1000), knobs.replace(K5=0), H200, 10**6).warp_size == 32
    # heavy vertices' bins do not count: they go to child grids
    heavy = Knobs(K4=0, K1=4, K2=1.0, warp_size_rule="frontier-degree")
    plan = plan_level(frontier([5000] * 3000 + [6] * 200000), heavy, H200, 10**6)
    assert plan.heavy_vertices == 3000 and plan.warp_size == 4
    assert rules.median_degree_warp([0] * 32, 32) == 1


def test_shared_layouts_follow_the_paper():
    single = single_block_layout(Knobs(K5=1, single_block_threads=1024), H200)
    assert single.frontier_capacity == 1024
    assert single.hash_entries & (single.hash_entries - 1) == 0 and single.hash_entries * 8 <= 48 * 1024
    # The paper's part (F_d, F_d_new, hash table) fits the 48 KB a block has without the opt-in;
    # F_d's rows (12 bytes an entry) come on top.
    assert single.dynamic_bytes - 12 * 1024 + policy.VAR_BYTES_SINGLE <= H200.shared_per_block
    multi = multi_block_layout(Knobs(K6=128), H200)
    # nearest_pow2((228K - Var) x 128 / 2048) = 8 KiB -> 1024 entries of 64 bits
    assert multi.hash_entries == 1024
    assert multi_block_layout(Knobs(K6=128, hash_entries=256), H200).hash_entries == 256
    assert multi_block_layout(Knobs(dedup="none"), H200).dynamic_bytes == 0


def test_k5_too_large_for_shared_memory_names_the_knob_the_total_and_its_parts():
    with pytest.raises(KnobError, match=r"K5=16 with single_block_threads=1024 needs 3\d\d,\d\d\d bytes of shared memory "
                       r"a block \(131,072 for F_d and F_d_new, 196,608 for the frontier's rows, .*"
                       r"this GPU gives a block at most 232,448: use a smaller K5"):
        single_block_layout(Knobs(K5=16, single_block_threads=1024), H200)
    # A GPU without the opt-in beyond 48 KB has no room for F_d's rows beside the paper's layout.
    no_optin = DeviceLimits(name="48 KB", sm_count=1, max_threads_per_sm=2048)
    with pytest.raises(KnobError, match=r"K5=1 with single_block_threads=1024 needs .*12,288 for the frontier's rows"):
        single_block_layout(Knobs(K5=1, single_block_threads=1024), no_optin)
    assert single_block_layout(Knobs(K5=1, single_block_threads=256), no_optin).frontier_capacity == 256


def test_k5_beyond_the_papers_48_kb_uses_the_opt_in():
    # K5 = 4 and 5 with 1,024 threads must not be refused: the launcher opts in to 227 KB on an
    # H100; F_d and F_d_new (32 and 40 KB) leave the paper's 48 KB no room
    # for the hash table, which then takes its room from the opt-in.
    for k5 in (4, 5, 6):
        lay = single_block_layout(Knobs(K5=k5, single_block_threads=1024), H200)
        assert lay.frontier_capacity == 1024 * k5 and lay.hash_entries >= 1
        assert lay.dynamic_bytes + policy.VAR_BYTES_SINGLE <= H200.shared_room
    # Within the paper's budget the hash table is the paper's, whatever the opt-in allows.
    assert single_block_layout(Knobs(K5=1, single_block_threads=1024), H200).hash_entries * 8 <= 48 * 1024


def test_shared_visited_bitmap_layout_and_its_errors():
    gpu = DeviceLimits(name="H100-like", sm_count=132, max_threads_per_sm=2048, shared_per_block=48 * 1024,
                       shared_per_sm=228 * 1024, shared_per_block_optin=227 * 1024)
    knobs = Knobs(K5=2, claim="atomic", dedup="none", visited="shared")
    lay = single_block_layout(knobs, gpu, 10**6)  # the 1000 x 1000 grid: 125,000 bytes of flags
    assert lay.bitmap_words == 31250
    assert lay.dynamic_bytes == 4 * (2 * 2048 + 31250) + 12 * 2048 <= gpu.shared_per_block_optin
    with pytest.raises(KnobError, match=r"visited=shared needs .*524,288 for the visited flags of 4,194,304 vertices.*visited='global'"):
        single_block_layout(knobs, gpu, 1 << 22)
    with pytest.raises(KnobError, match=r"visited='shared'.*needs claim='atomic'"):
        knobs.replace(claim="race")
    assert single_block_layout(knobs.replace(visited="global"), gpu, 1 << 22).bitmap_words == 0


def test_cluster_form_layout_threshold_and_its_errors():
    gpu = DeviceLimits(name="H100-like", sm_count=132, max_threads_per_sm=2048, shared_per_block=48 * 1024,
                       shared_per_sm=228 * 1024, shared_per_block_optin=227 * 1024, clusters=True)
    knobs = Knobs(K5=1, claim="atomic", dedup="none", visited="shared", cluster=8, single_block_threads=512)
    lay = single_block_layout(knobs, gpu, 10**6)
    assert lay.bitmap_words == 3907  # 31,250 words over 8 blocks
    assert lay.frontier_capacity == 512  # a block's; F_Threshold is 8 x 512
    assert lay.dynamic_bytes == 4 * (2 * 512 + 3907) + 2 * 12 * 512  # F_d_new has rows too
    grid = FrontierStats.of_vertices(np.full(4095, 4))
    assert plan_level(grid, knobs, gpu, 10**6).kernel == "single-block"
    assert plan_level(grid, knobs.replace(cluster=4), gpu, 10**6).kernel == "multi-block"
    # A split bitmap fits where one block's does not.
    assert single_block_layout(knobs, gpu, 1 << 22).bitmap_words == 16384
    with pytest.raises(KnobError, match=r"cluster=8 needs thread-block clusters .* A100-like has none: use cluster=1"):
        single_block_layout(knobs, dataclasses.replace(gpu, name="A100-like", clusters=False), 100)
    with pytest.raises(KnobError, match=r"cluster=2 splits the visited bitmap.*needs visited='shared'"):
        Knobs(cluster=2)
    with pytest.raises(KnobError, match=r"cluster=16 needs .*vertices \(a 16-th of them\).*use visited='global'"):
        single_block_layout(knobs.replace(cluster=16), gpu, 1 << 30)


def test_recommend_knobs_rules_of_thumb():
    road, why = recommend_knobs({"avg_degree": 2.8, "std_degree": 1.0, "max_degree": 12})
    assert (road.K1, road.K2, road.K4, road.K5) == (4, 0.0, 1, 1) and "road" in why["K1"]
    youtube, _ = recommend_knobs({"avg_degree": 5.2, "std_degree": 50.2, "max_degree": 28754})
    assert youtube.K1 == 32 and youtube.K2 > 0 and youtube.K4 == 2
    rand, _ = recommend_knobs({"avg_degree": 64.0, "std_degree": 10.6, "max_degree": 183})
    assert rand.K1 == 32 and rand.K5 == 0 and rand.K2 == 0
    kron, _ = recommend_knobs({"avg_degree": 96.0, "std_degree": 1033.2, "max_degree": 413378})
    assert kron.K4 == 0 and kron.K5 == 0


@pytest.mark.parametrize("name,value,pattern", [
    ("K1", 3, r"K1=3 is invalid: one of 1, 2, 4, 8, 16, 32"),
    ("K2", 11.0, r"K2=11.0 is out of range: float in \[0.0, 10.0\]"),
    ("K3", 0, r"K3=0 is out of range"),
    ("K4", 3, r"K4=3 is invalid: one of 0, 1, 2, 4"),
    ("K5", -1, r"K5=-1 is out of range: int in \[0, 16\]"),
    ("K6", 100, r"K6=100 is invalid"),
    ("K7", 2000, r"K7=2000 is out of range"),
    ("claim", "maybe", r"claim='maybe' is invalid: one of 'race', 'atomic'"),
    ("dedup", "bloom", r"dedup='bloom' is invalid"),
    ("hash_entries", 100, r"hash_entries=100 must be 0 or a power of two"),
    ("K3", 2.5, r"K3=2.5 is invalid: expected an integer"),
    ("cluster", 3, r"cluster=3 is invalid: one of 1, 2, 4, 8, 16"),
])
def test_knob_errors_name_knob_and_range(name, value, pattern):
    with pytest.raises(KnobError, match=pattern):
        Knobs(**{name: value})


def test_unknown_knob_lists_knobs():
    with pytest.raises(KnobError, match=r"unknown knob 'K8' of bfs4k; its knobs: K1, K2"):
        Knobs.from_dict({"K8": 1})


def test_knob_declarations_carry_paper_defaults():
    defaults = {s.name: s.default for s in Knobs.specs()}
    assert (defaults["K1"], defaults["K2"], defaults["K3"], defaults["K5"], defaults["K6"], defaults["K7"]) == \
        (4, 0.15, 16, 1, 128, 10)
    assert all(s.meaning for s in Knobs.specs())
