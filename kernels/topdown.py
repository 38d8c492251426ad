"""Simple top-down kernels: one thread per frontier vertex, the frontier kept as a queue.

This is the "frontier-based" GPU BFS of the CS406 report: each thread walks the adjacency list
of its frontier vertex and claims unvisited neighbours by compare-and-swap on their distance,
so exactly one thread enqueues each vertex and the next frontier holds no duplicates.
"""
from numba import cuda, int32

from .common import DISCOVERED, DUP_GENERATED, EDGES, NEXT_SIZE


@cuda.jit(cache=True)
def topdown_queue(offsets, indices, dist, parent, frontier, frontier_size, next_frontier,
                  counters, level, stamp, instrument):
    tid = cuda.grid(1)
    if tid >= frontier_size:
        return
    u = frontier[tid]
    begin = offsets[u]
    end = offsets[u + 1]
    nxt = int32(level + 1)
    discovered = 0
    for e in range(begin, end):
        v = indices[e]
        # Read before the atomic: most neighbours are already visited, and a plain load is cheap.
        if dist[v] == -1 and cuda.atomic.cas(dist, v, -1, nxt) == -1:
            parent[v] = u
            pos = cuda.atomic.add(counters, NEXT_SIZE, 1)
            next_frontier[pos] = v
            discovered += 1
            if instrument:
                # Ground truth for duplicates: a second enqueue of v in this level finds its stamp.
                if cuda.atomic.exch(stamp, v, nxt) == nxt:
                    cuda.atomic.add(counters, DUP_GENERATED, 1)
    if instrument:
        cuda.atomic.add(counters, EDGES, end - begin)
        if discovered:
            cuda.atomic.add(counters, DISCOVERED, discovered)
