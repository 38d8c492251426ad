"""Device helpers of the BFS-4K kernels: the per-level formulas of kernels.rules as device
functions and the blocks' counters. The expansion (virtual warps, edge-discover, the heavy-vertex
list) is kernels.expand's, the degree histogram kernels.histogram's."""
from numba import cuda, int32

from .. import rules
from ..expand import A_EXT, NUM_ACC
from ..filters import A_CONF, A_DET, A_GEN, A_UNDET
from ..frontier_ops import A_COAL
from ..histogram import count_degrees
from ..primitives import FULL_MASK
from .layout import (BLOCKS_DONE, COALESCED, CULL_ENTRIES, DEGREE_BINS, DUP_CONFLICTS, DUP_DETECTED,
                     DUP_GENERATED, EXT_ROUNDS, HEAVY, NEXT_SIZE, NUM_COUNTERS, UNDETECTED, WARP_CULL)

_degree_bin = cuda.jit(device=True)(rules.degree_bin)
_virtual_warp_size = cuda.jit(device=True)(rules.virtual_warp_size)
_use_edge_discover = cuda.jit(device=True)(rules.use_edge_discover)


@cuda.jit(device=True)
def _acc_counts(acc, cnt, heavy):
    """Per-thread accumulators into the block's shared counters.

    Edges examined and claims are not counted here: the host derives them (edges = degree sum of
    the frontier, claims = kept + detected), which keeps same-address atomics off the hot path.
    """
    if acc[A_GEN]:
        cuda.atomic.add(cnt, DUP_GENERATED, int32(acc[A_GEN]))
    if acc[A_DET]:
        cuda.atomic.add(cnt, DUP_DETECTED, int32(acc[A_DET]))
    if acc[A_CONF]:
        cuda.atomic.add(cnt, DUP_CONFLICTS, int32(acc[A_CONF]))
    if acc[A_UNDET]:
        cuda.atomic.add(cnt, UNDETECTED, int32(acc[A_UNDET]))
    if acc[A_EXT]:
        cuda.atomic.add(cnt, EXT_ROUNDS, int32(acc[A_EXT]))
    if acc[A_COAL]:
        cuda.atomic.add(cnt, COALESCED, int32(acc[A_COAL]))
    if heavy:
        cuda.atomic.add(cnt, HEAVY, int32(heavy))


@cuda.jit(device=True)
def _last_warp_publishes(cnt, finished, counters):
    """The block's counters go to global memory once, by the block's last warp (which gets True).

    No block barrier: a warp done early leaves at once instead of idling until its block's
    slowest warp (a barrier here was a third of the multi-block kernel's stalls on an H200).
    Collective per warp; every lane has already added to cnt.
    """
    lane = cuda.laneid
    cuda.threadfence_block()
    cuda.syncwarp(FULL_MASK)
    arrived = 0
    if lane == 0:
        arrived = cuda.atomic.add(finished, 0, 1)
    arrived = cuda.shfl_sync(FULL_MASK, arrived, 0)
    if arrived != cuda.blockDim.x // 32 - 1:
        return False
    cuda.threadfence_block()
    if lane < NUM_COUNTERS and lane != NEXT_SIZE and cnt[lane] != 0:  # NEXT_SIZE is global already
        cuda.atomic.add(counters, lane, cnt[lane])
    return True


@cuda.jit(device=True)
def _clear_other_level(other):
    """Block 0 clears the other read-back buffer's counters and histogram for the next level (the
    host read that buffer back before this launch and nobody touches it during it): no memset
    before the next level."""
    if cuda.blockIdx.x == 0:
        for i in range(cuda.threadIdx.x, other.shape[0], cuda.blockDim.x):
            other[i] = 0


@cuda.jit(device=True)
def _last_block_statistics(counters, frontier, offsets, hist, hist_c, hist_s):
    """bfs4k_stats fused into the level kernel, for a small next frontier: the last block to finish
    writes the next frontier's degree histogram, with one warp. Called by each block's last warp
    after every thread of the block fenced its frontier writes (cuda.threadfence). Collective."""
    lane = cuda.laneid
    done = 0
    if lane == 0:
        done = cuda.atomic.add(counters, BLOCKS_DONE, 1)
    done = cuda.shfl_sync(FULL_MASK, done, 0)
    if done != cuda.gridDim.x - 1:
        return
    cuda.threadfence()  # every other block's entries and NEXT_SIZE are visible from here on
    n = min(cuda.atomic.add(counters, NEXT_SIZE, 0), frontier.shape[0])
    hist_c[lane] = 0  # one bin a lane: DEGREE_BINS == 32
    hist_s[lane] = 0
    cuda.syncwarp(FULL_MASK)
    count_degrees(frontier, lane, n, 32, offsets, hist_c, hist_s)
    cuda.syncwarp(FULL_MASK)
    hist[lane] = hist_c[lane]
    hist[DEGREE_BINS + lane] = hist_s[lane]


@cuda.jit(device=True)
def _start_block(cnt, finished, cull, cull_base, dedup, acc):
    """Zero the block's shared counters, empty the culling tables; ends with the block barrier
    that publishes them."""
    tid = cuda.threadIdx.x
    if tid < NUM_COUNTERS:
        cnt[tid] = 0
    if tid == 0:
        finished[0] = 0
    if dedup == WARP_CULL:
        for i in range(cuda.laneid, CULL_ENTRIES, 32):
            cull[cull_base + i] = -1
    for i in range(NUM_ACC):
        acc[i] = 0
    cuda.syncthreads()


