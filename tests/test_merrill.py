"""merrill: Merrill, Garland & Grimshaw's CTA+warp+scan BFS with a racy claim and its two
duplicate culls. What the conformance suite does not see: what each cull drops, on a graph whose
duplicates are born inside one warp (warp culling catches them; history culling, by design,
cannot: its lanes read before they write, so it sees only copies another warp or an earlier round
claimed, shown on one block's table directly and, on a GPU, across the warps of a block)."""
import numpy as np
import pytest
from numba import cuda, int32, int64

from explorer import backend, graphs
from explorer.knobs import KnobError
from explorer.techniques import make_knobs
from kernels import cudasim
from kernels.filters import history_cull

from _support import checked_run

SIM = backend.current().is_simulator
SHARED = 4  # neighbours every level-1 vertex shares


@pytest.fixture(autouse=True, scope="module")
def _install():
    cudasim.install()
    yield


def shared_neighbours(width):
    """Source 0; level 1: vertices 1..width; level 2: SHARED vertices adjacent to every level-1
    vertex (tests/test_frontier_ops.py's graph). Each level-1 row is [0, s0, s1, s2, s3], so the
    lanes of a warp reading the scan phase's strip (32 consecutive edges: six or seven rows) hold
    each shared vertex six or seven times in one round and all read it unvisited before any
    writes: duplicates born inside one warp."""
    leaves = np.arange(1, width + 1)
    shared = np.arange(width + 1, width + 1 + SHARED)
    src = np.concatenate([np.zeros(width, np.int64), np.repeat(leaves, SHARED)])
    dst = np.concatenate([leaves, np.tile(shared, width)])
    return graphs.from_edges(src, dst, directed=False, name=f"shared-neighbours-{width}")


def _level1(culling, width=64, **knobs):
    r = checked_run(shared_neighbours(width), 0, "merrill", {"culling": culling, "block_threads": 32, **knobs})
    for lv in r.levels:
        assert lv.dup_generated == lv.dup_detected + lv.dup_undetected, lv
        assert lv.dup_detected == lv.warp_culled + lv.history_culled, lv
    return r.levels[1]


@pytest.mark.parametrize("culling", ["warp", "warp+history"])
def test_warp_culling_drops_the_copies_born_inside_a_warp(culling):
    # The first round of each block's strip: s0 seven times, s1-s3 six times, all claimed; warp
    # culling keeps one copy of each (the next rounds find them visited).
    lv = _level1(culling)
    assert lv.dup_generated >= 6 + 3 * 5
    assert lv.warp_culled >= 6 + 3 * 5 and lv.cull_conflicts == 0
    if SIM:  # blocks run one after another: the second finds the shared vertices visited
        assert lv.warp_culled == lv.dup_generated == 21 and lv.dup_undetected == 0
        assert lv.frontier_out == SHARED


def test_history_culling_cannot_see_copies_born_in_one_round_of_one_warp():
    # Blocks of one warp: every copy of a level is born in the round that first meets the vertex
    # (later rounds find it visited), where the lanes all read the history table before any
    # writes it. Nothing to cull: the copies pass, and the record says so.
    lv = _level1("history")
    assert lv.history_culled == 0 and lv.warp_culled == 0
    assert lv.dup_undetected == lv.dup_generated >= 21
    assert lv.frontier_out == SHARED + lv.dup_undetected


@cuda.jit
def k_history(vs, kept, rounds):
    """The block's history table: warp w offers vs[w, lane] in round w (a block barrier between
    rounds), as device.step does with claimed candidates."""
    table = cuda.shared.array(256, int32)
    for i in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        table[i] = -1
    stamp = cuda.shared.array(1, int32)
    acc = cuda.local.array(16, int64)
    for i in range(16):
        acc[i] = 0
    cuda.syncthreads()
    w = cuda.threadIdx.x // 32
    for r in range(rounds):
        if r == w:
            kept[w, cuda.laneid] = history_cull(True, vs[w, cuda.laneid], int32(1), (table, 0, 255),
                                                (False, stamp, stamp), acc, 15)
        cuda.syncthreads()


def test_history_culling_drops_copies_another_warp_claimed_first():
    vs = np.array([np.arange(1000, 1032), np.arange(5000, 5032)], np.int32)
    vs[0, 9] = 1005  # two lanes of warp 0 hold one vertex in one round
    vs[1, :16] = vs[0, :16]  # warp 1 offers 16 of warp 0's vertices again, and 16 new ones
    kept = np.full((2, 32), -1, np.int32)
    k_history[1, 64](vs, kept, 2)
    assert kept[0].all()  # the lanes read before any writes: the in-warp copy passes (warp culling's job)
    assert not kept[1, :16].any() and kept[1, 16:].all()


@pytest.mark.skipif(SIM, reason="needs warps of one block racing on a GPU")
def test_history_culling_sees_copies_claimed_by_other_warps_on_a_gpu():
    # Every warp meets the shared vertices in its first round of the scan strip; the racy claim
    # lets several warps of a block claim one, and history culling drops the copies whose warp
    # reads the table after another warp wrote it. With 8 warps a block (block_threads=256) an
    # H100 culled nothing in 10 runs: warps whose claims race read `dist` from one L1 fill, so they
    # come back together and, like the lanes of one warp, all read the table before any writes it.
    # 32 warps a block spread those returns (and the block's shared-memory accesses) over more
    # cycles than a history read and write take; 16 blocks and 10 runs give it many chances.
    culled = 0
    for _ in range(10):
        lv = _level1("history", width=16384, block_threads=1024)
        culled += lv.history_culled
    assert culled > 0


def test_the_compare_and_swap_claim_leaves_the_culls_nothing():
    r = checked_run(shared_neighbours(64), 0, "merrill", {"claim": "atomic", "block_threads": 32})
    assert all(lv.dup_generated == lv.dup_detected == lv.warp_culled == lv.history_culled == 0 for lv in r.levels)


def test_culling_and_history_knobs_are_checked():
    with pytest.raises(KnobError, match="knob culling='hash64' is invalid"):
        make_knobs("merrill", {"culling": "hash64"})
    with pytest.raises(KnobError, match="knob history_entries=1000 is invalid"):
        make_knobs("merrill", {"history_entries": 1000})
    assert make_knobs("merrill", {}).culling_code == 3
