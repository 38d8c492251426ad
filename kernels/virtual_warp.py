"""Static virtual warps (Hong, Kim, Oguntebi & Olukotun, PPoPP 2011): a fixed group of W threads
per vertex, its lanes striding over the adjacency list (the chapter's §5.1.2, Algorithm 8:
VW_INDEX = TH_INDEX / W, LANE_OFFSET = TH_INDEX % W, the lane takes entries
begin + LANE_OFFSET, + W, ...). W is fixed for the whole search (BFS-4K §5.2 makes it dynamic).

Hong et al. explore the array of vertices: each level a virtual warp per vertex reads its level
and expands it if it is the current one (BFS-4K Table 2: work O(V·D + E), like Harish; with W = 1
it is Harish's kernel). With `from_queue` the virtual warps take the entries of a frontier queue
instead (work O(V + E)), claimed vertices being appended to the next queue.

A vertex is claimed by compare-and-swap on its distance (Hong et al. write levels without
atomics): the counts read back are exact and a queue holds no duplicates. Counters: two rows
(kernels.args.Rows).
"""
from typing import NamedTuple

from numba import cuda, int32, int64

from .args import BOOL, I64, V32, Graph, Level, Rows, Tree
from .common import clear_next_row

NEXT_SIZE = 0  # vertices claimed for the next level (> 0: something changed)
EDGES = 1  # adjacency entries examined (instrument)
SCANNED = 2  # vertices (or queue entries) whose level a virtual warp read (instrument)
DUP_GENERATED = 3  # ground truth: second enqueues of a vertex in one level (none with the CAS claim)
NUM_COUNTERS = 4


class VirtualWarps(NamedTuple):
    """The level's mapping: W lanes a vertex; the frontier from the queue or by scanning every
    vertex; whether to count (and the duplicates' ground truth, `stamp`)."""

    warp: I64
    from_queue: BOOL
    instrument: BOOL
    stamp: V32


@cuda.jit(cache=True)
def virtual_warp_level(graph: Graph, tree: Tree, queues: Level, rows: Rows, step: VirtualWarps):
    offsets, indices = graph
    dist, parent = tree
    frontier, frontier_size, next_frontier, _, level = queues
    counters, row = rows
    warp, from_queue, instrument, stamp = step
    clear_next_row(counters, row, NUM_COUNTERS)
    base = row * NUM_COUNTERS
    tid = cuda.grid(1)
    vw = tid // warp
    lane = tid % warp
    items = frontier_size if from_queue else dist.shape[0]
    block = cuda.shared.array(3, int64)
    if instrument:
        if cuda.threadIdx.x == 0:
            block[0] = 0
            block[1] = 0
            block[2] = 0
        cuda.syncthreads()
    if vw < items:
        u = frontier[vw] if from_queue else vw
        if instrument and lane == 0:
            cuda.atomic.add(block, 0, 1)
        if from_queue or dist[u] == level:
            begin = offsets[u]
            end = offsets[u + 1]
            nxt = int32(level + 1)
            for e in range(begin + lane, end, warp):
                w = indices[e]
                if dist[w] == -1 and cuda.atomic.cas(dist, w, -1, nxt) == -1:
                    parent[w] = u
                    pos = cuda.atomic.add(counters, base + NEXT_SIZE, 1)
                    if from_queue:
                        next_frontier[pos] = w
                        # Ground truth for duplicates: a second enqueue of w in this level finds its stamp.
                        if instrument and cuda.atomic.exch(stamp, w, nxt) == nxt:
                            cuda.atomic.add(block, 2, 1)
            if instrument and lane == 0:
                cuda.atomic.add(block, 1, end - begin)
    if instrument:
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(counters, base + SCANNED, block[0])
            cuda.atomic.add(counters, base + EDGES, block[1])
            cuda.atomic.add(counters, base + DUP_GENERATED, block[2])
