"""Many relax iterations in one launch of one block, while the frontier is small (BFS-4K's
single-block kernel, §5.5, as H-BF runs on it): no host round trip between iterations, which on a
long, narrow search (a road network: thousands of iterations of a hundred vertices) costs more
than the iterations themselves. Each iteration: W lanes a frontier vertex (BFS-4K's dynamic
virtual warp for a block: pow2_floor(blockDim / |F|) in [K1, 32]) relax its arcs through
kernels.sssp.relax's relax_arc, the improved vertices go through the local queues and warp
flush into the other queue, a block barrier, and thread 0 logs the iteration's counts. The block
stops when the frontier empties, outgrows `max_size`, holds a heavy vertex (degree >= the heavy
degree: one block would walk its arcs a warp at a time, where the grid's heavy-vertex kernel
spreads them), after `max_iters` iterations (the log's rows), or on a sign of a negative cycle;
the host carries on from there.

Log rows (int64, kernels.sssp.layout's LOG_FIELDS each): the step's counters (slots NEXT_SIZE ..
LAST_COUNT) as the iteration left them, its frontier's size, W and the SM's cycle counter as it
ended. After the launch counters[SB_DONE] holds the iterations run, counters[SB_IN_A] whether
the frontier left is in qa, counters[SB_SIZE] its size and counters[SB_START] the cycle counter
as the launch began.
"""
from numba import cuda, int32, int64

from ..args import M64, V64, QueuePair
from ..common import BLOCK_1024
from ..frontier_ops import flush, no_cluster
from ..primitives import FULL_MASK, clock64, uidx
from ..rules import QLEN, virtual_warp_size
from .args import Bounds, Marks, Paths, Policy, SingleLimits, WGraph
from .layout import (BELOW_FLOOR, LAST_COUNT, LOG_CLOCK, LOG_SIZE, LOG_W, NEGATIVE_LOOP, NEXT_HEAVY, NEXT_SIZE,
                     OVERFLOW, SB_DONE, SB_IN_A, SB_SIZE, SB_START)
from .relax import NUM_ACC, _zero, publish, queue_vertex, relax_arc, source_distance

_vw = cuda.jit(device=True)(virtual_warp_size)


@cuda.jit(cache=True, **BLOCK_1024)
def sssp_single(graph: WGraph, paths: Paths, marks: Marks, queues: QueuePair, bounds: Bounds, policy: Policy,
                limits: SingleLimits, counters: V64, log: M64):
    """Iterations of the frontier queues.qa[:size] (qb when not in_a) from iteration queues.level
    on, in one block (see the module's docstring)."""
    offsets, indices, weights = graph
    flags = policy.flags
    ctl = cuda.shared.array(4, int64)  # size, in_a, iteration, W
    stop = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    if tid == 0:
        ctl[0] = queues.size
        ctl[1] = 1 if queues.in_a else 0
        ctl[2] = 0
        ctl[3] = _vw(B, queues.size, limits.k1)
        stop[0] = 0
        counters[SB_START] = clock64()
        counters[OVERFLOW] = 0
        for k in range(NEXT_SIZE, LAST_COUNT + 1):
            counters[k] = 0
    cuda.syncthreads()
    acc = cuda.local.array(NUM_ACC, int64)
    q = cuda.local.array((1, QLEN), int32)
    cl = no_cluster(offsets, counters)
    while stop[0] == 0:  # block-uniform
        size = ctl[0]
        W = ctl[3]
        frontier = queues.qa if ctl[1] == 1 else queues.qb
        out_q = queues.qb if ctl[1] == 1 else queues.qa
        out = (out_q, queues.capacity, counters, NEXT_SIZE, OVERFLOW, out_q, 0, 0, -1)
        it = queues.level + ctl[2]
        _zero(acc)
        per_round = B // W
        base = int64(0)
        while base < size:  # block-uniform
            vw = base + tid // W
            lane = tid & (W - 1)
            u = int32(0)
            beg = int64(0)
            end = int64(0)
            du = source_distance(paths, 0, flags)
            if vw < size:
                u = frontier[uidx(vw)]
                beg = offsets[uidx(u)]
                end = offsets[uidx(u + 1)]
                du = source_distance(paths, u, flags)
            e = beg + lane
            qn = int32(0)
            rounds = int32(0)
            while cuda.any_sync(FULL_MASK, e < end):
                if e < end:
                    v = indices[uidx(e)]
                    if relax_arc(u, du, v, weights[uidx(e)], paths, marks, bounds, flags, it, acc):
                        qn = queue_vertex(q, qn, v, offsets, limits.heavy_degree, acc)
                    e += W
                rounds = int32(rounds + 1)
                if rounds == QLEN:
                    qn = flush(q, qn, out, False, 0, acc, 0, cl)
                    rounds = int32(0)
            flush(q, qn, out, False, 0, acc, 0, cl)
            base += per_round
        publish(acc, counters)
        cuda.threadfence_block()
        cuda.syncthreads()
        if tid == 0:
            row = ctl[2]
            for k in range(NEXT_SIZE, LAST_COUNT + 1):
                log[row, k] = counters[k]
            log[row, LOG_SIZE] = size
            log[row, LOG_W] = W
            log[row, LOG_CLOCK] = clock64()
            nxt = counters[NEXT_SIZE]
            ctl[0] = nxt
            ctl[1] = 1 - ctl[1]
            ctl[2] = row + 1
            ctl[3] = _vw(B, nxt, limits.k1)
            if (nxt == 0 or nxt > limits.max_size or row + 1 >= limits.max_iters or counters[OVERFLOW] > 0
                    or counters[NEXT_HEAVY] > 0 or counters[NEGATIVE_LOOP] > 0 or counters[BELOW_FLOOR] > 0):
                stop[0] = 1
            else:
                for k in range(NEXT_SIZE, LAST_COUNT + 1):
                    counters[k] = 0
        cuda.syncthreads()
    if tid == 0:
        counters[SB_DONE] = ctl[2]
        counters[SB_IN_A] = ctl[1]
        counters[SB_SIZE] = ctl[0]
