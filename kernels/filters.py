"""The duplicate filters, shared by the techniques' kernels (the filter operator): BFS-4K's hash64
(§6, Fig. 11), Merrill, Garland & Grimshaw's warp culling and history culling. Each judges a
claimed candidate per lane: keep it, drop it as a duplicate, or keep it as a conflict (another
vertex held its slot). Collective over the warp.
"""
from numba import cuda, int32, int64

from .primitives import FULL_MASK
from .rules import CULL_ENTRIES

# Slots of the per-thread accumulators `acc` where the duplicates are counted (the claim's
# ground truth and the filters' verdicts; kernels.frontier_ops's own slots follow).
A_GEN = 0  # duplicates generated: claims of a vertex already claimed in this level (instrument)
A_DET = 1  # duplicates the filter dropped
A_CONF = 2  # filter conflicts: another vertex held the slot, the candidate was kept
A_UNDET = 3  # duplicates that passed the filter (instrument)


@cuda.jit(device=True)
def hash64(table, hmask, has, v, tid):
    """BFS-4K §6, Fig. 11: store merge(v, thread_id) at hash(v), read it back. 0 valid, 1
    duplicate, 2 conflict. Collective.

    The lanes of a warp all store before any reads back, as in lock step, which is what lets the
    paper classify duplicates made inside a warp; the table is the block's, so a duplicate made by
    another warp of the block is caught when the stores and loads interleave that way. Atomics
    make the store and the read real shared-memory accesses (a plain load could be forwarded from
    the thread's own store). The last writer of v always reads itself back, so no vertex loses
    every copy.
    """
    h = v & hmask
    if has:
        cuda.atomic.exch(table, h, (int64(v) << 32) | int64(tid))
    cuda.syncwarp(FULL_MASK)
    if not has:
        return 0
    rec = cuda.atomic.add(table, h, int64(0))
    if int32(rec >> 32) != v:
        return 2
    if int32(rec & 0xFFFFFFFF) != tid:
        return 1
    return 0


@cuda.jit(device=True)
def warp_cull(cull, base, has, v, lane):
    """Merrill et al.'s warp culling: the warp's own 128-entry table, two rounds of vie. 0 keep,
    1 duplicate, 2 conflict (another vertex holds the slot). Collective.

    It sees only copies of v that lanes of this warp hold at this call: a duplicate made by
    another warp, or by this warp in another round, passes (with virtual warps of 32 lanes a warp
    expands one vertex, whose neighbours are distinct: nothing to cull).
    """
    h = base + (v & (CULL_ENTRIES - 1))
    if has:
        cull[h] = v
    cuda.syncwarp(FULL_MASK)
    won = has and cull[h] == v
    cuda.syncwarp(FULL_MASK)
    if won:
        cull[h] = lane
    cuda.syncwarp(FULL_MASK)
    result = 0
    if has:
        if not won:
            result = 2
        elif cull[h] != lane:
            result = 1
    cuda.syncwarp(FULL_MASK)
    return result


@cuda.jit(device=True)
def history_cull(found, v, nxt, hist, inst, acc, culled):
    """Merrill et al.'s history culling: the block's table of recently claimed vertices (hist:
    (table, off, hmask), table[off:off + hmask + 1], int32 shared, the block's, -1 filled; slot
    v & hmask). A claimed v already in it is a copy another warp, or an earlier round, claimed in
    this level: dropped, and counted in acc[culled]. Collective. Every lane reads before any
    writes (a syncwarp between: the lock step of a converged warp), so copies born in one round
    of one warp are left to warp culling, as on the GPU. Returns whether the lane keeps v."""
    table, off, hmask = hist
    h = off + (v & hmask)
    seen = found and table[h] == v
    cuda.syncwarp(FULL_MASK)
    if found and not seen:
        table[h] = v
    if seen:
        acc[culled] += 1
        instrument, stamp, _ = inst
        # Ground truth, as frontier_ops.enqueue counts it for the copies that reach it.
        if instrument and cuda.atomic.exch(stamp, v, nxt) == nxt:
            acc[A_GEN] += 1
    return found and not seen
