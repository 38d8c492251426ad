"""Simple top-down kernels: one thread per frontier vertex, the frontier kept as a queue.

This is the "frontier-based" GPU BFS of the CS406 report: each thread walks the adjacency list
of its frontier vertex and claims unvisited neighbours by compare-and-swap on their distance,
so exactly one thread enqueues each vertex and the next frontier holds no duplicates.
"""
from numba import cuda, int32

from .args import BOOL, V32, V64, Graph, Level, Tree

# The level's counters, read back after each launch.
NEXT_SIZE = 0  # entries written to the next frontier
EDGES = 1  # adjacency entries examined
DUP_GENERATED = 2  # ground truth: second enqueues of a vertex in one level (none with the CAS claim)
NUM_COUNTERS = 3


@cuda.jit(cache=True)
def topdown_queue(graph: Graph, tree: Tree, queues: Level, counters: V64, stamp: V32, instrument: BOOL):
    """One level: a thread per entry of queues.frontier, its claims appended to queues.out; stamp
    is the duplicates' ground truth (the level of each vertex's last claim)."""
    offsets, indices = graph
    dist, parent = tree
    frontier, frontier_size, next_frontier, _, level = queues
    tid = cuda.grid(1)
    if tid >= frontier_size:
        return
    u = frontier[tid]
    begin = offsets[u]
    end = offsets[u + 1]
    nxt = int32(level + 1)
    for e in range(begin, end):
        v = indices[e]
        # Read before the atomic: most neighbours are already visited, and a plain load is cheap.
        if dist[v] == -1 and cuda.atomic.cas(dist, v, -1, nxt) == -1:
            parent[v] = u
            pos = cuda.atomic.add(counters, NEXT_SIZE, 1)
            next_frontier[pos] = v
            if instrument:
                # Ground truth for duplicates: a second enqueue of v in this level finds its stamp.
                if cuda.atomic.exch(stamp, v, nxt) == nxt:
                    cuda.atomic.add(counters, DUP_GENERATED, 1)
    if instrument:
        cuda.atomic.add(counters, EDGES, end - begin)
