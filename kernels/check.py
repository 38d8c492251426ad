"""The check of a BFS tree on the device, for runs whose arrays need not come back to the host (a
sweep's): the rules of explorer.reference.validate's `_agrees_with_reference`, which prove every
Graph500 rule when the distances are exact.

  wrong_vertices    a thread a vertex v: the distance equals the reference's, the source is its
                    own parent, an unreached vertex has none, any other's parent is a vertex one
                    level nearer with an arc to v; adds the vertices breaking one to failures[0]
                    (a running count: the host compares it with the count before the check, so
                    nothing is reset between checks).
  mark_parent_arcs  for a graph with a row out of order, where no binary search finds the arc:
                    launched first, a warp a vertex u, its lanes striding u's arcs, it sets
                    found[v] = 1 for every arc u -> v with parent[v] == u; wrong_vertices reads and
                    clears it.
"""
from numba import cuda

from .args import BOOL, I64, V32, V64, Graph, Tree


@cuda.jit(cache=True)
def mark_parent_arcs(graph: Graph, parent: V32, found: V32):
    n = graph.offsets.shape[0] - 1
    lane = cuda.threadIdx.x % 32
    warps = cuda.gridsize(1) // 32
    u = cuda.grid(1) // 32
    while u < n:
        for k in range(graph.offsets[u] + lane, graph.offsets[u + 1], 32):
            v = graph.indices[k]
            if parent[v] == u:
                found[v] = 1  # every writer stores 1
        u += warps


@cuda.jit(device=True)
def has_arc(graph, u, v) -> bool:
    """Whether u's row (sorted) holds v: a binary search."""
    lo = graph.offsets[u]
    hi = graph.offsets[u + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if graph.indices[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo < graph.offsets[u + 1] and graph.indices[lo] == v


@cuda.jit(cache=True)
def wrong_vertices(graph: Graph, tree: Tree, expected: V32, source: I64, directed: BOOL, marked: BOOL,
                   found: V32, failures: V64):
    n = tree.dist.shape[0]
    v = cuda.grid(1)
    stride = cuda.gridsize(1)
    while v < n:
        dv = tree.dist[v]
        pv = tree.parent[v]
        if dv != expected[v] or pv < -1 or pv >= n:
            bad = True
        elif v == source:
            bad = pv != source
        elif dv < 0:
            bad = pv != -1
        elif pv < 0 or tree.dist[pv] != dv - 1:
            bad = True
        elif marked:
            bad = found[v] == 0
        elif directed:
            bad = not has_arc(graph, pv, v)
        else:  # an undirected graph stores each edge both ways: v's own row holds pv
            bad = not has_arc(graph, v, pv)
        if marked:
            found[v] = 0
        if bad:
            cuda.atomic.add(failures, 0, 1)
        v += stride
