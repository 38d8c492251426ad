"""One level per launch (§5.5, multi-block): bfs4k_multi, the heavy-vertex child grid
bfs4k_heavy (§5.3) and bfs4k_stats, the next frontier's degree histogram (which bfs4k_multi
computes itself, in its last block, when the host asks it to: `fuse`)."""
import functools

from numba import cuda, int32, int64

from ..args import Graph, Heavy, Level, Stamps, Tree
from ..common import BLOCK_1024
from ..expand import NUM_ACC, expand_edge_discover, expand_virtual_warp, heavy_entry, heavy_slot
from ..frontier_ops import flush, no_cluster, visit
from ..histogram import count_degrees
from .args import MultiPlan, Readback
from .device import _acc_counts, _clear_other_level, _last_block_statistics, _last_warp_publishes, _start_block
from .layout import CULL_ENTRIES, DEGREE_BINS, NEXT_SIZE, NUM_COUNTERS, OVERFLOW, QLEN


@cuda.jit(device=True)
def heavy_edges(graph, heavy, ops, q, acc, k7):
    """§5.3's child grid: the level's heavy vertices' edges as one flat range; block b walks
    [b*K3*B, (b+1)*K3*B), each thread K3 of them, B apart so loads coalesce; then flushes."""
    nxt, tree, mode, inst, filt, out_grp, nocl = ops
    offsets, indices = graph
    k3, heavy_v, heavy_off = heavy.k3, heavy.vertices, heavy.offsets
    packed = heavy.counter[0]
    count = int32(packed >> 40)
    total = packed & ((int64(1) << 40) - 1)
    B = cuda.blockDim.x
    start = int64(cuda.blockIdx.x) * k3 * B + cuda.threadIdx.x
    # One binary search per thread; its K3 edges are B apart, so the slot only ever moves forward.
    s = heavy_slot(heavy_off, count, start) if start < total else 0
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
        qn = visit(has, v, u, ops, q, qn, acc)
        if (j + 1) % QLEN == 0:
            qn = flush(q, qn, out_grp, False, k7, acc, nxt, nocl)
    flush(q, qn, out_grp, False, k7, acc, nxt, nocl)


@functools.cache
def _level_kernels(instrument: bool, atomic_claim: bool, dedup: int):
    """The multi-block kernel, the heavy child grid (one level per launch) and the statistics
    kernel that follows them."""

    @cuda.jit(cache=True, **BLOCK_1024)
    def bfs4k_multi(graph: Graph, tree: Tree, stamps: Stamps, queues: Level, heavy: Heavy, plan: MultiPlan,
                    readback: Readback):
        """One level, multi-block (§5.5): queues.frontier's size entries into queues.out. Dynamic
        shared memory: the block's hash64 table (int64 x hash_mask+1) or the warps' culling tables
        (int32 x 128 per warp).

        Block 0 clears readback.other (the other read-back buffer's counters and histogram) for
        the next level. With plan.fused_stats (no child grid follows, the next frontier is small)
        the last block writes the next frontier's histogram into readback.hist, and bfs4k_stats
        is not launched."""
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
        offsets, indices = graph
        out, counters = queues.out, readback.counters
        src = (queues.frontier, 0, queues.size, offsets, indices, table, -1, -1)  # rows from offsets
        ops = (int32(queues.level + 1), tree, (atomic_claim, False, cull, -1),
               (instrument, stamps.claimed, stamps.kept), (dedup, table, plan.hash_mask, tid, cull, cull_base),
               (out, queues.capacity, counters, NEXT_SIZE, OVERFLOW, out, 0, 0, -1), no_cluster(offsets, cnt))
        W, binary, k7 = plan.warp_size, plan.binary_scan, plan.k7
        if plan.edge_discover:
            n_heavy = expand_edge_discover(gtid // 32, src, heavy, ops, q, acc, binary, k7)
        else:
            n_heavy = expand_virtual_warp(gtid // W, W, src, heavy, ops, q, acc, binary, k7)
        _acc_counts(acc, cnt, n_heavy)
        _clear_other_level(readback.other)
        fuse = plan.fused_stats
        if fuse:
            cuda.threadfence()  # this thread's next-frontier entries, before its block counts as done
        if _last_warp_publishes(cnt, finished, counters) and fuse:
            _last_block_statistics(counters, out, offsets, readback.hist, hist_c, hist_s)

    @cuda.jit(cache=True, **BLOCK_1024)
    def bfs4k_heavy(graph: Graph, tree: Tree, stamps: Stamps, queues: Level, heavy: Heavy, plan: MultiPlan,
                    readback: Readback):
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
        out = queues.out
        ops = (int32(queues.level + 1), tree, (atomic_claim, False, cull, -1),
               (instrument, stamps.claimed, stamps.kept), (dedup, table, plan.hash_mask, tid, cull, cull_base),
               (out, queues.capacity, readback.counters, NEXT_SIZE, OVERFLOW, out, 0, 0, -1),
               no_cluster(graph.offsets, cnt))
        heavy_edges(graph, heavy, ops, q, acc, plan.k7)
        _acc_counts(acc, cnt, 0)
        _last_warp_publishes(cnt, finished, readback.counters)

    @cuda.jit(cache=True, **BLOCK_1024)
    def bfs4k_stats(graph: Graph, queues: Level, readback: Readback):
        """The next frontier's degree histogram, which the host plans the next level from (§5.2-§5.4
        decisions, §5.3 heavy vertices): vertices per bin floor(log2(degree)) and, from bin
        SUM_BIN up, their degree sums; lighter degrees are summed together in bin 0's sum.

        One coalesced pass over the frontier the level wrote (queues.out, counters[NEXT_SIZE] entries), after
        its kernels: the level's claiming rounds then need no dependent row loads (two on every
        round that claims something, most rounds of a large level).
        """
        tid = cuda.threadIdx.x
        frontier, hist = queues.out, readback.hist  # the level's next frontier
        hist_c = cuda.shared.array(DEGREE_BINS, int32)  # 32-bit: native shared atomics
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        if tid < DEGREE_BINS:
            hist_c[tid] = 0
            hist_s[tid] = 0
        cuda.syncthreads()
        n = min(readback.counters[NEXT_SIZE], frontier.shape[0])
        count_degrees(frontier, cuda.grid(1), n, cuda.gridsize(1), graph.offsets, hist_c, hist_s)
        cuda.syncthreads()
        if tid < DEGREE_BINS:
            if hist_c[tid]:
                cuda.atomic.add(hist, tid, int64(hist_c[tid]))
            if hist_s[tid]:
                cuda.atomic.add(hist, DEGREE_BINS + tid, hist_s[tid])

    return bfs4k_multi, bfs4k_heavy, bfs4k_stats
