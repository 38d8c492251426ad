"""One level per launch (§5.5, multi-block): bfs4k_multi, the heavy-vertex child grid
bfs4k_heavy (§5.3) and bfs4k_stats, the next frontier's degree histogram (which bfs4k_multi
computes itself, in its last block, when the host asks it to: `fuse`)."""
import functools

from numba import cuda, int32, int64

from ..frontier_ops import flush, visit
from .device import (NUM_ACC, _OPTIONS, _acc_counts, _clear_other_level, _count_degrees, _heavy_slot,
                     _last_block_statistics, _last_warp_publishes, _no_cluster, _start_block, heavy_entry)
from .expand import expand_edge_discover, expand_virtual_warp
from .layout import CULL_ENTRIES, DEGREE_BINS, NEXT_SIZE, NUM_COUNTERS, OVERFLOW, QLEN


@cuda.jit(device=True)
def heavy_edges(offsets, indices, heavy_v, heavy_off, heavy_ctr, k3, ops, q, acc, k7):
    """§5.3's child grid: the level's heavy vertices' edges as one flat range; block b walks
    [b*K3*B, (b+1)*K3*B), each thread K3 of them, B apart so loads coalesce; then flushes."""
    nxt, graph, mode, inst, filt, out_grp, nocl = ops
    packed = heavy_ctr[0]
    count = int32(packed >> 40)
    total = packed & ((int64(1) << 40) - 1)
    B = cuda.blockDim.x
    start = int64(cuda.blockIdx.x) * k3 * B + cuda.threadIdx.x
    # One binary search per thread; its K3 edges are B apart, so the slot only ever moves forward.
    s = _heavy_slot(heavy_off, count, start) if start < total else 0
    s_end, u, row = heavy_entry(offsets, heavy_v, heavy_off, count, total, s)
    qn = int32(0)
    for j in range(k3):
        x = start + j * B
        has = x < total
        v = int32(0)
        if has:
            while x >= s_end:
                s += 1
                s_end, u, row = heavy_entry(offsets, heavy_v, heavy_off, count, total, s)
            v = indices[row + x]
        qn = visit(has, v, u, nxt, graph, mode, inst, filt, q, qn, acc, nocl)
        if (j + 1) % QLEN == 0:
            qn = flush(q, qn, out_grp, False, k7, acc, nxt, nocl)
    flush(q, qn, out_grp, False, k7, acc, nxt, nocl)


@functools.cache
def _level_kernels(instrument: bool, atomic_claim: bool, dedup: int):
    """The multi-block kernel, the heavy child grid (one level per launch) and the statistics
    kernel that follows them."""

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_multi(offsets, indices, dist, parent, frontier, fsize, out, out_cap, counters,
                    level, stamp, stamp2, W, edge_discover, heavy_thr, heavy_v, heavy_off, heavy_ctr,
                    hmask, binary, k7, hist, other, fuse):
        """One level, multi-block (§5.5). Dynamic shared memory: the block's hash64 table (int64 x
        hmask+1) or the warps' culling tables (int32 x 128 per warp).

        Block 0 clears `other` (the other read-back buffer's counters and histogram) for the next
        level. With `fuse` (no child grid follows, the next frontier is small) the last block
        writes the next frontier's histogram into `hist`, and bfs4k_stats is not launched."""
        tid = cuda.threadIdx.x
        gtid = cuda.blockIdx.x * cuda.blockDim.x + tid
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        hist_c = cuda.shared.array(DEGREE_BINS, int32)  # the fused statistics' (one warp of one block)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        cull_base = (tid // 32) * CULL_ENTRIES
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, dedup, acc)
        q = cuda.local.array((1, QLEN), int32)  # the vertices row only: no visit log here
        nxt = int32(level + 1)
        src = (frontier, 0, fsize, offsets, indices, table, -1, -1)  # rows from offsets
        heavy_grp = (heavy_thr, heavy_v, heavy_off, heavy_ctr)
        ops = (nxt, (dist, parent), (atomic_claim, False, cull, -1), (instrument, stamp, stamp2),
               (dedup, table, hmask, tid, cull, cull_base),
               (out, out_cap, counters, NEXT_SIZE, OVERFLOW, out, 0, 0, -1), _no_cluster(offsets, cnt))
        if edge_discover:
            heavy = expand_edge_discover(gtid // 32, src, heavy_grp, ops, q, acc, binary, k7)
        else:
            heavy = expand_virtual_warp(gtid // W, W, src, heavy_grp, ops, q, acc, binary, k7)
        _acc_counts(acc, cnt, heavy)
        _clear_other_level(other)
        if fuse:
            cuda.threadfence()  # this thread's next-frontier entries, before its block counts as done
        if _last_warp_publishes(cnt, finished, counters) and fuse:
            _last_block_statistics(counters, out, offsets, hist, hist_c, hist_s)

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_heavy(offsets, indices, dist, parent, out, out_cap, counters, level, stamp, stamp2,
                    heavy_v, heavy_off, heavy_ctr, k3, hmask, k7):
        """Child grid of §5.3 for all heavy vertices of the level: block b walks flat edges
        [b*K3*B, (b+1)*K3*B), each thread K3 of them, B apart so loads coalesce."""
        tid = cuda.threadIdx.x
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        cull_base = (tid // 32) * CULL_ENTRIES
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, dedup, acc)
        q = cuda.local.array((1, QLEN), int32)
        ops = (int32(level + 1), (dist, parent), (atomic_claim, False, cull, -1), (instrument, stamp, stamp2),
               (dedup, table, hmask, tid, cull, cull_base),
               (out, out_cap, counters, NEXT_SIZE, OVERFLOW, out, 0, 0, -1), _no_cluster(offsets, cnt))
        heavy_edges(offsets, indices, heavy_v, heavy_off, heavy_ctr, k3, ops, q, acc, k7)
        _acc_counts(acc, cnt, 0)
        _last_warp_publishes(cnt, finished, counters)

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_stats(offsets, frontier, counters, hist):
        """The next frontier's degree histogram, which the host plans the next level from (§5.2-§5.4
        decisions, §5.3 heavy vertices): vertices per bin floor(log2(degree)) and, from bin
        SUM_BIN up, their degree sums; lighter degrees are summed together in bin 0's sum.

        One coalesced pass over the frontier the level wrote (counters[NEXT_SIZE] entries), after
        its kernels: the level's claiming rounds then need no dependent row loads (two on every
        round that claims something, most rounds of a large level).
        """
        tid = cuda.threadIdx.x
        hist_c = cuda.shared.array(DEGREE_BINS, int32)  # 32-bit: native shared atomics
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        if tid < DEGREE_BINS:
            hist_c[tid] = 0
            hist_s[tid] = 0
        cuda.syncthreads()
        n = min(counters[NEXT_SIZE], frontier.shape[0])
        _count_degrees(frontier, cuda.grid(1), n, cuda.gridsize(1), offsets, hist_c, hist_s)
        cuda.syncthreads()
        if tid < DEGREE_BINS:
            if hist_c[tid]:
                cuda.atomic.add(hist, tid, int64(hist_c[tid]))
            if hist_s[tid]:
                cuda.atomic.add(hist, DEGREE_BINS + tid, hist_s[tid])

    return bfs4k_multi, bfs4k_heavy, bfs4k_stats
