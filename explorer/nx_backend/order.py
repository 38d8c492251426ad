"""networkx's output order, rebuilt on the host from the GPU's distances.

networkx's BFS generators visit a level's vertices in the order they were discovered, and each
vertex's neighbours in adjacency order; a vertex of level d+1 is discovered by the first vertex of
level d (in that order) that has it as a neighbour. Given the distances, a level is therefore one
vectorised pass over the arcs of the previous level, in order: keep those that lead to level d+1
and take each target's first occurrence. The rows of the backend's CSR are in networkx's
adjacency order (graph.py), so these are networkx's orders exactly.
"""
from __future__ import annotations

import numpy as np


def arcs_of(offsets: np.ndarray, indices: np.ndarray, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, target) of every arc out of `vertices`, vertex by vertex in that order and each
    vertex's arcs in CSR order; owner[i] indexes `vertices`."""
    starts = offsets[vertices]
    counts = offsets[vertices + 1] - starts
    total = int(counts.sum())
    owner = np.repeat(np.arange(vertices.size), counts)
    if total == 0:
        return owner, np.empty(0, dtype=np.int32)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return owner, indices[np.arange(total, dtype=np.int64) + shift]


def discovery(offsets, indices, dist: np.ndarray, first: np.ndarray, depth_limit=None):
    """networkx's BFS from the ordered vertices `first` (all at distance 0 in `dist`), level by level:
    (layers, parents), layers[d] the vertices of level d in discovery order and parents[d] the
    vertex that discovered each (-1 on level 0). Stops after level `depth_limit` (None: all);
    compared as networkx does (`depth < depth_limit`), so floats and negatives behave alike."""
    first = np.asarray(first, dtype=np.int64)
    layers = [first]
    parents = [np.full(first.size, -1, dtype=np.int64)]
    depth = 0
    while layers[-1].size and (depth_limit is None or depth < depth_limit):
        owner, tgt = arcs_of(offsets, indices, layers[-1])
        keep = dist[tgt] == depth + 1
        tgt, owner = tgt[keep], owner[keep]
        if tgt.size == 0:
            break
        _, pos = np.unique(tgt, return_index=True)
        pos.sort()
        layers.append(tgt[pos].astype(np.int64))
        parents.append(layers[-2][owner[pos]])
        depth += 1
    return layers, parents


def level_sorted(dist_row: np.ndarray, cutoff=None) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, distances) of the reached vertices level by level, within a level by vertex id
    (the all-pairs dicts' order). `cutoff` as networkx's: level d is kept when d - 1 < cutoff."""
    reached = np.flatnonzero(dist_row >= 0)
    d = dist_row[reached]
    if cutoff is not None:
        keep = (d == 0) | (d - 1 < cutoff)
        reached, d = reached[keep], d[keep]
    order = np.argsort(d, kind="stable")
    return reached[order], d[order]


#: bfs_labeled_edges' labels (networkx.algorithms.traversal.breadth_first_search).
TREE, LEVEL, FORWARD, REVERSE = 0, 1, 2, 3


def labeled_arcs(offsets, indices, dist: np.ndarray, queue: np.ndarray, parent: np.ndarray,
                 directed: bool, upto: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """networkx's bfs_labeled_edges for a search whose vertices networkx dequeues in `queue` order
    (sources first), `parent[v]` the vertex that discovered v (-1: a source or unreached):
    (u, v, label) of the arcs it reports, in its order. Every arc out of a dequeued vertex is
    looked at once; undirected graphs report a level edge once (from the endpoint dequeued first,
    or a self loop) and reverse edges never. `upto`: report the arcs of the first `upto` dequeued
    vertices only."""
    owner, v = arcs_of(offsets, indices, queue if upto is None else queue[:upto])
    u = queue[owner]
    du, dv = dist[u], dist[v]
    tree = (parent[v] == u) & (dv == du + 1)
    if directed:
        level = du == dv
    else:
        pos = np.empty(dist.size, dtype=np.int64)
        pos[queue] = np.arange(queue.size)
        level = (du == dv) & (pos[u] <= pos[v])
    forward = (du < dv) & ~tree
    label = np.full(u.size, -1, dtype=np.int8)
    label[tree] = TREE
    label[level] = LEVEL
    label[forward] = FORWARD
    if directed:
        label[du > dv] = REVERSE
    keep = label >= 0
    return u[keep], v[keep], label[keep]
