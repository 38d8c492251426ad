"""Many single-source searches at once (all pairs by SSSP from every vertex: the chapter's §4.1,
Harish & Narayanan's APSP; Johnson's way after its reweighting): a batch of k searches keeps a
distance row and two rows of "improved" flags per search; a step relaxes, for every search, the
arcs of the vertices it improved in the step before (a thread per (vertex, search) pair: the
blocks cover the vertices once per search: block b serves search b // per, vertices from
(b % per) x blockDim), a 64-bit atomic min on the row's distance.

Per search and step the kernel counts (stats: NUM_STATS int64 a row): relaxations that improved
a distance (the search ends when a step improves none), arcs relaxed, vertices reached for the
first time.
"""
from numba import cuda, int64
from numba.core import types

from ..args import I64, V32, V64
from ..common import BLOCK_1024
from ..primitives import warp_sum
from .args import F64, WGraph

ST_IMPROVED, ST_RELAXED, ST_REACHED = 0, 1, 2
NUM_STATS = 3
#: A batch's rows (the float64 form; Numba compiles the int64 one from the arrays passed).
MF64 = types.float64[:, ::1]
M8 = types.int8[:, ::1]


@cuda.jit(cache=True, **BLOCK_1024)
def batch_init(dist: MF64, cur: M8, nxt: M8, sources: V32, row0: I64, inf: F64):
    """Rows 0..k-1: every vertex at inf and unflagged, the row's source (sources[row0 + row]) at 0
    and flagged (grid-stride over the k x n entries)."""
    k, n = dist.shape
    x = cuda.grid(1)
    while x < k * n:
        s = x // n
        v = x - s * n
        src = sources[row0 + s]
        dist[s, v] = 0 if v == src else inf
        cur[s, v] = 1 if v == src else 0
        nxt[s, v] = 0
        x += cuda.gridsize(1)


@cuda.jit(cache=True, **BLOCK_1024)
def batch_relax(graph: WGraph, dist: MF64, cur: M8, nxt: M8, stats: V64, inf: F64):
    """One step of every search of the batch: a flagged vertex u of row s relaxes its arcs into
    row s; improved vertices are flagged in nxt. The host swaps cur and nxt after the step. Block
    b serves row b // per from vertex (b % per) x blockDim on, per = ceil(n / blockDim) (a
    grid-stride loop over the k x per pieces)."""
    offsets, indices, weights = graph
    k, n = dist.shape
    per = (n + cuda.blockDim.x - 1) // cuda.blockDim.x
    piece = cuda.blockIdx.x
    while piece < k * per:  # block-uniform: every lane reaches the warp sums
        s = piece // per
        base = (piece - s * per) * cuda.blockDim.x
        u = base + cuda.threadIdx.x
        improved = int64(0)
        relaxed = int64(0)
        reached = int64(0)
        if u < n and cur[s, u] != 0:
            cur[s, u] = 0
            du = dist[s, u]
            for e in range(offsets[u], offsets[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[s, v]:
                    old = cuda.atomic.min(dist, (s, v), nd)
                    if nd < old:
                        nxt[s, v] = 1
                        improved += 1
                        if old == inf:
                            reached += 1
            relaxed = offsets[u + 1] - offsets[u]
        improved = warp_sum(improved)
        relaxed = warp_sum(relaxed)
        reached = warp_sum(reached)
        if cuda.laneid == 0:
            row = s * NUM_STATS
            if improved:
                cuda.atomic.add(stats, row + ST_IMPROVED, improved)
            if relaxed:
                cuda.atomic.add(stats, row + ST_RELAXED, relaxed)
            if reached:
                cuda.atomic.add(stats, row + ST_REACHED, reached)
        piece += cuda.gridDim.x
