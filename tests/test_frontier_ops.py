"""kernels.filters: the duplicate filters on one warp, and both filters inside BFS-4K on a
graph whose duplicates are born inside one warp, on the virtual-warp and edge-discover paths.

Duplicates depend on which lanes hold the same vertex at the same time. The graphs here make that
deterministic: every frontier vertex has the same neighbours, so the lanes of a warp that hold a
neighbour in the same round all read it unvisited before any of them writes (the claim's vote is
the lock step, on a GPU and under the simulator alike), whatever the other warps do.
"""
import numpy as np
import pytest
from numba import cuda, int32, int64

from explorer import graphs
from explorer.engine import DeviceLimits
from kernels import cudasim
from kernels import filters as F

from _support import checked_run


@pytest.fixture(autouse=True, scope="module")
def _install():
    cudasim.install()
    yield


# ------------------------------------------------------------------------------ the filters
HMASK = 255
# Shared arrays need a constant size: a global name is one on a GPU, `HMASK + 1` in the kernel is not
# (real CUDA types it as int64 and refuses it; the simulator does not type kernels).
TABLE_ENTRIES = HMASK + 1
CULL_TABLES = 2 * F.CULL_ENTRIES  # two warps' tables


@cuda.jit
def k_filters(vs, has, by_hash, by_cull):
    """Each thread offers vs[tid] (if has[tid]) to hash64 (one warp: a block table of one warp)
    and to warp culling (its warp's own table)."""
    tid = cuda.threadIdx.x
    table = cuda.shared.array(TABLE_ENTRIES, int64)
    cull = cuda.shared.array(CULL_TABLES, int32)
    for i in range(tid, CULL_TABLES, cuda.blockDim.x):
        cull[i] = -1
    cuda.syncthreads()
    v = vs[tid]
    h = has[tid] != 0
    if cuda.blockDim.x == 32:
        by_hash[tid] = F.hash64(table, HMASK, h, v, tid)
    by_cull[tid] = F.warp_cull(cull, (tid // 32) * F.CULL_ENTRIES, h, v, cuda.laneid)


def _filters(vs, has):
    n = len(vs)
    by_hash = np.full(n, -1, np.int32)
    by_cull = np.full(n, -1, np.int32)
    k_filters[1, n](np.asarray(vs, np.int32), np.asarray(has, np.int32), by_hash, by_cull)
    return by_hash, by_cull


def test_filters_keep_one_copy_of_a_vertex_held_by_several_lanes():
    vs = np.arange(1024, 1056)  # slots 0-31 of both tables
    vs[[3, 9, 17, 30]] = 71  # four lanes hold vertex 71 at once
    has = np.ones(32)
    has[5] = 0  # a lane without a candidate takes part and is told nothing
    for r in _filters(vs, has):
        assert sorted(r[[3, 9, 17, 30]]) == [0, 1, 1, 1]  # one copy kept, three dropped
        others = np.delete(np.arange(32), [3, 9, 17, 30])
        assert (r[others] == 0).all()


def test_filters_keep_both_vertices_of_a_collision():
    # Different vertices on one slot: the loser is a conflict, kept (never dropped).
    vs = np.arange(2048, 2080)  # slots 0-31
    vs[4], vs[20] = 40, 40 + (HMASK + 1)  # slot 40 in both tables (128 divides 256)
    for r in _filters(vs, np.ones(32)):
        assert sorted(r[[4, 20]]) == [0, 2]


def test_warp_culling_cannot_see_a_copy_held_by_another_warp():
    # Merrill et al.'s table is per warp: copies in two warps are both kept.
    vs = np.arange(3072, 3136)  # slots 0-63
    vs[5] = vs[40] = 100
    _, r = _filters(vs, np.ones(64))
    assert r[5] == 0 and r[40] == 0 and (r == 0).all()


# ------------------------------------------------------------------------------ inside BFS-4K
TINY = DeviceLimits(name="tiny", sm_count=1, max_threads_per_sm=256)  # 256 resident threads
SHARED = 4  # neighbours every level-1 vertex shares


def _shared_neighbours(width):
    """Source 0; level 1: vertices 1..width; level 2: SHARED vertices adjacent to every level-1
    vertex. Each level-1 adjacency row is [0, r0, r1, r2, r3]: the same vertex at the same
    position in every row."""
    leaves = np.arange(1, width + 1)
    shared = np.arange(width + 1, width + 1 + SHARED)
    src = np.concatenate([np.zeros(width, np.int64), np.repeat(leaves, SHARED)])
    dst = np.concatenate([leaves, np.tile(shared, width)])
    return graphs.from_edges(src, dst, directed=False, name=f"shared-neighbours-{width}")


def _level1(g, **knobs):
    knobs = {"claim": "race", "K5": 0, "K6": 64, "K2": 0.0, "K1": 4, **knobs}
    r = checked_run(g, 0, "bfs4k", knobs, limits=TINY)
    for lv in r.levels:
        assert lv.dup_generated == lv.dup_detected + lv.dup_undetected, lv
    return r.levels[1]


@pytest.mark.parametrize("dedup", ["hash64", "warp-culling"])
def test_both_filters_catch_duplicates_born_inside_a_warp_with_virtual_warps_of_4(dedup):
    # |F| = 64 on 256 threads: virtual warps of 4, so a warp expands 8 level-1 vertices whose
    # lanes 1, 2, 3 (round 1) and 0 (round 2) hold the same shared vertex together: the first
    # warp to claim a shared vertex claims it 8 times, and either filter drops 7 of those copies.
    lv = _level1(_shared_neighbours(64), K4=0, dedup=dedup)
    assert lv.warp_size == 4 and not lv.edge_discover
    assert lv.dup_detected >= 7 * SHARED, lv


@pytest.mark.parametrize("dedup", ["hash64", "warp-culling"])
def test_both_filters_catch_duplicates_born_inside_a_warp_with_edge_discover(dedup):
    # Edge-discover spreads a warp's lanes over 32 consecutive edges of rows of 5: each shared
    # vertex is held by at least 6 lanes of every round, so at least 5 copies are dropped each.
    lv = _level1(_shared_neighbours(64), K4=2, dedup=dedup)
    assert lv.edge_discover
    assert lv.dup_detected >= 5 * SHARED, lv


def test_warp_culling_sees_nothing_with_virtual_warps_of_32():
    # Why warp culling detects no duplicates on the virtual-warp path of delaunay_n16 (an H100 run):
    # K1 is only the smallest virtual warp. With |F| x 32 <= #ResThreads (every level of that mesh
    # on an H100: |F| <= 1,293, 270,336 resident threads) a warp expands one vertex, whose
    # neighbours are distinct, so no duplicate is ever born inside a warp; the duplicates come
    # from different warps, which only hash64's block-wide table can catch.
    lv = _level1(_shared_neighbours(8), K4=0, dedup="warp-culling")
    assert lv.warp_size == 32 and not lv.edge_discover
    assert lv.dup_detected == 0 and lv.dup_conflicts == 0, lv
