"""Edge-parallel BFS (Jia et al., GPU Computing Gems 2011): a thread per arc of the whole graph.

The graph is read as an edge list (COO, the chapter's §1.3): arc e goes from arc_source[e] to
indices[e] (the CSR's adjacency array is the destination array, sorted by source). Each level one
launch gives every arc a thread; the thread reads its source's level and, if it is the current
one, claims the destination (chapter §2.1, BFS-4K §3: work O(E·D); the multi-search paper's
"Edge-parallel", §IV: "a thread to every edge of the graph for every search iteration, regardless
of whether or not the endpoints of that edge are vertices in the active frontier"). Balanced
whatever the degrees; wasteful when the frontier is a small part of the graph.

Jia et al. write the distance without atomics (a benign race); here a compare-and-swap claims it
so the count read back (the next level's size) is exact. Counters: two rows (kernels.args.Rows).
"""
from typing import NamedTuple

from numba import cuda, int32, int64

from .args import BOOL, I64, V32, Rows, Tree
from .common import clear_next_row

NEXT_SIZE = 0  # vertices claimed for the next level (> 0: something changed)
EDGES = 1  # arcs whose source is in the frontier: the adjacency entries expanded (instrument)
ARCS = 2  # arcs whose source's level a thread read (instrument)
NUM_COUNTERS = 3


class Arcs(NamedTuple):
    """The graph as an edge list (COO): arc e goes from sources[e] to heads[e] (the CSR's indices)."""

    sources: V32
    heads: V32


@cuda.jit(cache=True)
def edge_parallel_level(arcs: Arcs, tree: Tree, rows: Rows, level: I64, instrument: BOOL):
    arc_source, indices = arcs
    dist, parent = tree
    counters, row = rows
    clear_next_row(counters, row, NUM_COUNTERS)
    base = row * NUM_COUNTERS
    e = cuda.grid(1)
    block = cuda.shared.array(2, int64)
    if instrument:
        if cuda.threadIdx.x == 0:
            block[0] = 0
            block[1] = 0
        cuda.syncthreads()
    if e < indices.shape[0]:
        if instrument:
            cuda.atomic.add(block, 0, 1)
        u = arc_source[e]
        if dist[u] == level:
            w = indices[e]
            if instrument:
                cuda.atomic.add(block, 1, 1)
            if dist[w] == -1 and cuda.atomic.cas(dist, w, -1, int32(level + 1)) == -1:
                parent[w] = u
                cuda.atomic.add(counters, base + NEXT_SIZE, 1)
    if instrument:
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(counters, base + ARCS, block[0])
            cuda.atomic.add(counters, base + EDGES, block[1])
