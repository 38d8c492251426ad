"""The provenance variant of BFS-4K's multi-block level, for the duplicate analysis.

bfs4k_multi_prov and bfs4k_heavy_prov are bfs4k_multi and bfs4k_heavy (kernels.bfs4k.multi) plus
a log: every claim of a sampled vertex (layout.prov_sampled) writes one row of layout.PROV_FIELDS
int32 into a bounded buffer (level, vertex, parent, block, warp, lane, the two filters' verdicts,
kept, kernel); a counter reserves the rows, and rows past the buffer's end are counted, not
written. Both duplicate filters judge every claim (hash64 in the block's table, warp culling in
the warp's), so the two can be compared on the same claims; only the one the `dedup` knob names
drops copies. The ground truth (stamps) is always on.

The normal kernels are untouched: the variant reuses BFS-4K's expansion code
(expand.expand_virtual_warp, expand.expand_edge_discover, frontier_ops.visit/visit_pair) through
copies of those functions whose `enqueue` is the logging one below (`_with_globals`), so their
PTX and registers do not change and the log costs a normal run nothing. The single-block kernel
has no variant: a run with the log uses the multi-block kernel on every level (K5 = 0), where
blocks can duplicate each other's claims, which is what the analysis is about.
"""
import functools
import types

from numba import cuda, int32, int64

from .. import expand
from ..args import Graph, Heavy, Level, Stamps, Tree
from ..common import BLOCK_1024
from ..expand import NUM_ACC
from ..filters import A_CONF, A_DET, A_GEN, A_UNDET, hash64, warp_cull
from ..frontier_ops import no_cluster, visit, visit_pair
from . import multi
from .args import MultiPlan, ProvLog, Readback
from .device import _acc_counts, _clear_other_level, _last_block_statistics, _last_warp_publishes, _start_block
from .layout import (CULL_ENTRIES, DEGREE_BINS, HASH64, NEXT_SIZE, NUM_COUNTERS, OVERFLOW, P_BLOCK, P_CULL,
                     P_HASH, P_HEAVY, P_KEPT, P_KERNEL, P_LANE, P_LEVEL, P_MULTI, P_PARENT, P_VERTEX, P_WARP,
                     QLEN, WARP_CULL, prov_sampled)

_sampled = cuda.jit(device=True)(prov_sampled)


def _with_globals(dev, **names):
    """A copy of device function `dev` that calls `names` instead of the globals of those names
    (its own module's globals otherwise); the original is not changed or recompiled."""
    f = getattr(dev, "py_func", None) or dev.fn  # the simulator's wrapper keeps it as .fn
    scope = dict(f.__globals__)
    scope.update(names)
    clone = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)
    clone.__doc__ = f.__doc__
    return cuda.jit(device=True)(clone)


@cuda.jit(device=True)
def enqueue_logged(found, v, u, nxt, inst, filt, q, qn, acc, with_parent):
    """frontier_ops.enqueue, with both filters judging every claim and each claim of a sampled
    vertex logged. inst = (instrument, stamp, stamp2, log, log_ctr, log_mask, kernel)."""
    instrument, stamp, stamp2, log, log_ctr, log_mask, kernel = inst
    dedup, table, hmask, tid, cull, cull_base = filt
    if found:
        if instrument and cuda.atomic.exch(stamp, v, nxt) == nxt:
            acc[A_GEN] += 1
    rh = hash64(table, hmask, found, v, tid)
    rc = warp_cull(cull, cull_base, found, v, cuda.laneid)
    r = 0
    if dedup == HASH64:
        r = rh
    elif dedup == WARP_CULL:
        r = rc
    keep = found
    if found:
        if r == 1:
            keep = False
            acc[A_DET] += 1
        elif r == 2:
            acc[A_CONF] += 1
        if _sampled(v, log_mask):
            row = cuda.atomic.add(log_ctr, 0, int64(1))
            if row < log.shape[0]:
                log[row, P_LEVEL] = nxt - 1
                log[row, P_VERTEX] = v
                log[row, P_PARENT] = u
                log[row, P_BLOCK] = cuda.blockIdx.x
                log[row, P_WARP] = cuda.threadIdx.x // 32
                log[row, P_LANE] = cuda.laneid
                log[row, P_HASH] = rh
                log[row, P_CULL] = rc
                log[row, P_KEPT] = 1 if keep else 0
                log[row, P_KERNEL] = kernel
    if keep:
        if instrument and cuda.atomic.exch(stamp2, v, nxt) == nxt:
            acc[A_UNDET] += 1
        q[0, qn] = v
        if with_parent:
            q[1, qn] = u
        qn = int32(qn + 1)
    return qn


# BFS-4K's expansion with the logging enqueue underneath.
_visit = _with_globals(visit, enqueue=enqueue_logged)
_visit_pair = _with_globals(visit_pair, enqueue=enqueue_logged)
expand_virtual_warp = _with_globals(expand.expand_virtual_warp, visit=_visit, visit_pair=_visit_pair)
expand_edge_discover = _with_globals(expand.expand_edge_discover, visit=_visit)
heavy_edges = _with_globals(multi.heavy_edges, visit=_visit)


def shared_bytes(hash_entries: int, block_threads: int) -> int:
    """Dynamic shared memory of a provenance block: the hash64 table (int64 x hash_entries), then
    the warps' culling tables (int32 x CULL_ENTRIES a warp)."""
    return 8 * hash_entries + 4 * CULL_ENTRIES * (block_threads // 32)


@functools.cache
def provenance_kernels(atomic_claim: bool, dedup: int):
    """(bfs4k_multi_prov, bfs4k_heavy_prov) for the claim mode and the filter that drops copies.
    Their arguments are bfs4k_multi's and bfs4k_heavy's, then the log (a ProvLog). plan.hash_mask
    + 1 must be the hash table's entries and the launch's shared memory
    `shared_bytes(hash_mask + 1, block threads)`."""

    @cuda.jit(cache=True, **BLOCK_1024)
    def bfs4k_multi_prov(graph: Graph, tree: Tree, stamps: Stamps, queues: Level, heavy: Heavy, plan: MultiPlan,
                         readback: Readback, prov: ProvLog):
        tid = cuda.threadIdx.x
        gtid = cuda.blockIdx.x * cuda.blockDim.x + tid
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        hist_c = cuda.shared.array(DEGREE_BINS, int32)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        hmask = plan.hash_mask
        cull_base = 2 * (hmask + 1) + (tid // 32) * CULL_ENTRIES  # after the hash table
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, WARP_CULL, acc)  # both filters' tables, always
        q = cuda.local.array((1, QLEN), int32)
        offsets, indices = graph
        out, counters = queues.out, readback.counters
        src = (queues.frontier, 0, queues.size, offsets, indices, table, -1, -1)
        ops = (int32(queues.level + 1), tree, (atomic_claim, False, cull, -1),
               (True, stamps.claimed, stamps.kept, prov.rows, prov.counter, prov.mask, P_MULTI),
               (dedup, table, hmask, tid, cull, cull_base),
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
            cuda.threadfence()
        if _last_warp_publishes(cnt, finished, counters) and fuse:
            _last_block_statistics(counters, out, offsets, readback.hist, hist_c, hist_s)

    @cuda.jit(cache=True, **BLOCK_1024)
    def bfs4k_heavy_prov(graph: Graph, tree: Tree, stamps: Stamps, queues: Level, heavy: Heavy, plan: MultiPlan,
                         readback: Readback, prov: ProvLog):
        tid = cuda.threadIdx.x
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        hmask = plan.hash_mask
        cull_base = 2 * (hmask + 1) + (tid // 32) * CULL_ENTRIES
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, WARP_CULL, acc)
        q = cuda.local.array((1, QLEN), int32)
        out = queues.out
        ops = (int32(queues.level + 1), tree, (atomic_claim, False, cull, -1),
               (True, stamps.claimed, stamps.kept, prov.rows, prov.counter, prov.mask, P_HEAVY),
               (dedup, table, hmask, tid, cull, cull_base),
               (out, queues.capacity, readback.counters, NEXT_SIZE, OVERFLOW, out, 0, 0, -1),
               no_cluster(graph.offsets, cnt))
        heavy_edges(graph, heavy, ops, q, acc, plan.k7)
        _acc_counts(acc, cnt, 0)
        _last_warp_publishes(cnt, finished, readback.counters)

    return bfs4k_multi_prov, bfs4k_heavy_prov
