"""Harish & Narayanan's BFS (IIIT-BFS, HiPC 2007): no frontier queue, a thread per vertex.

Each level one launch gives every vertex a thread; the thread reads its vertex's level and, if
it is the current one, walks the adjacency list (the chapter's §2.1, BFS-4K §3: work O(V·D + E),
O(V·D) of it spent finding the frontier). The level ends when no vertex changed: the host reads
back how many were reached. This is also the CS406 report's layer-based top-down (§5.1 and its
appendix: a thread per entry of the distance array, `results[v] == layer`). Harish marks the
frontier with flags (Fa, cleared by the vertex's thread, and Xa for visited); like the report,
the kernel here tests the distance, one read a vertex either way.

Harish writes the cost array without atomics (every writer writes the same level: a benign race)
and learns only that something changed. Here a vertex is claimed by compare-and-swap on its
distance, so the count read back is exact (the next level's size, the level's `discovered`) and
the parent array is a tree; "changed" is that count being nonzero.

Counters: two rows of NUM_COUNTERS (kernels.args.Rows: level L uses row L % 2); the launch zeroes
the other row for the next level, so no memset launch is needed between levels.
"""
from numba import cuda, int32, int64

from .args import BOOL, I64, Graph, Rows, Tree
from .common import clear_next_row

NEXT_SIZE = 0  # vertices claimed for the next level (> 0: something changed, the level's flag)
EDGES = 1  # adjacency entries examined (instrument)
SCANNED = 2  # vertices whose level a thread read (instrument)
NUM_COUNTERS = 3


@cuda.jit(cache=True)
def harish_level(graph: Graph, tree: Tree, rows: Rows, level: I64, instrument: BOOL):
    offsets, indices = graph
    dist, parent = tree
    counters, row = rows
    clear_next_row(counters, row, NUM_COUNTERS)
    base = row * NUM_COUNTERS
    n = dist.shape[0]
    v = cuda.grid(1)
    # One add per block, not per vertex, when instrumented: the counts of its threads.
    block = cuda.shared.array(2, int64)
    if instrument:
        if cuda.threadIdx.x == 0:
            block[0] = 0
            block[1] = 0
        cuda.syncthreads()
    if v < n:
        if instrument:
            cuda.atomic.add(block, 0, 1)
        if dist[v] == level:
            begin = offsets[v]
            end = offsets[v + 1]
            nxt = int32(level + 1)
            for e in range(begin, end):
                w = indices[e]
                # Read before the atomic: most neighbours are already visited, and a plain load is cheap.
                if dist[w] == -1 and cuda.atomic.cas(dist, w, -1, nxt) == -1:
                    parent[w] = v
                    cuda.atomic.add(counters, base + NEXT_SIZE, 1)
            if instrument:
                cuda.atomic.add(block, 1, end - begin)
    if instrument:
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(counters, base + SCANNED, block[0])
            cuda.atomic.add(counters, base + EDGES, block[1])
