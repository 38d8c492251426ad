"""The check of a BFS tree on the device, for runs whose arrays need not come back to the host (a
sweep's): the rules of explorer.reference.validate's `_agrees_with_reference`, which prove every
Graph500 rule when the distances are exact.

Two launches, in order on one stream:
  mark_parent_arcs    a warp a vertex u, its lanes striding u's arcs: found[v] = 1 for every arc
                      u -> v with parent[v] == u (the arc a parent must have to its child, in a
                      directed graph as in an undirected one); thread 0 sets wrong[0] = n.
  first_wrong_vertex  a thread a vertex v: the distance equals the reference's, the source is its
                      own parent, an unreached vertex has none, any other's parent is a vertex one
                      level nearer with an arc to v; wrong[0] = the least v breaking one (n: none).
                      It clears found[v] for the next check.
"""
from numba import cuda

from .args import I64, V32, V64, Graph, Tree


@cuda.jit(cache=True)
def mark_parent_arcs(graph: Graph, parent: V32, found: V32, wrong: V64):
    n = graph.offsets.shape[0] - 1
    if cuda.grid(1) == 0:
        wrong[0] = n
    lane = cuda.threadIdx.x % 32
    warps = cuda.gridsize(1) // 32
    u = cuda.grid(1) // 32
    while u < n:
        for k in range(graph.offsets[u] + lane, graph.offsets[u + 1], 32):
            v = graph.indices[k]
            if parent[v] == u:
                found[v] = 1  # every writer stores 1
        u += warps


@cuda.jit(cache=True)
def first_wrong_vertex(tree: Tree, expected: V32, source: I64, found: V32, wrong: V64):
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
        else:
            bad = pv < 0 or tree.dist[pv] != dv - 1 or found[v] == 0
        found[v] = 0
        if bad:
            cuda.atomic.min(wrong, 0, v)
        v += stride
