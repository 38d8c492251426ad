"""CPU reference BFS: distances and parents from one source, the levels as a frontier
generator, and Graph500 TEPS edge counting.

The per-arc work is Numba-compiled and the per-vertex work vectorised numpy, so the reference
stays linear on graphs of millions of vertices. It reads any CSR-shaped object (`CSRLike`:
explorer.graphs.CSRGraph is one) and imports nothing of explorer.graphs, which uses it.

Conventions (shared with the GPU kernels):
  vertices  0..n-1, the CSR's numbering: sources, indices and parents alike, never the input's
            own ids (the entry points convert those, once: explorer.api)
  distances int32[n]: BFS level, -1 for unreached vertices
  parents   int32[n]: BFS-tree parent, -1 for unreached vertices, parents[source] == source
"""
from __future__ import annotations

import operator
import weakref
from typing import Iterable, Iterator, Protocol

import numba
import numpy as np
from numba import prange

from .._twoform import two_forms

__all__ = ["CSRLike", "cpu_bfs", "bfs_distances", "bfs_layers", "traversed_edges"]


class CSRLike(Protocol):
    """What the reference reads of a graph (explorer.graphs.CSRGraph has all of it)."""

    offsets: np.ndarray  # int64[n+1]
    indices: np.ndarray  # int32[m]
    directed: bool
    name: str

    @property
    def num_vertices(self) -> int: ...


# --------------------------------------------------------------------------------------------
# Source validation


def _check_source(source, n: int) -> int:
    """Return `source` as a Python int, or raise ValueError naming it and the valid range."""
    # bool is an int subclass, but True as a vertex id is almost certainly a bug at the call site.
    if isinstance(source, (bool, np.bool_)):
        raise ValueError(
            f"source vertex {source!r} is not an integer vertex id; valid ids are 0..{n - 1} "
            f"(range [0, {n}))"
        )
    try:
        s = operator.index(source)  # accepts int and numpy integers, rejects 2.0 and "2"
    except TypeError:
        raise ValueError(
            f"source vertex {source!r} is not an integer vertex id; valid ids are 0..{n - 1} "
            f"(range [0, {n}))"
        ) from None
    if not 0 <= s < n:
        raise ValueError(
            f"source vertex {s} is out of range: the graph has {n} vertices, valid ids are "
            f"0..{n - 1} (range [0, {n}))"
        )
    return s


def _check_graph(graph: CSRLike) -> None:
    # O(1) sanity checks only: the Numba kernels do no bounds checking, and a CSR whose offsets
    # disagree with indices would read out of bounds. (CSRGraph checks the whole structure when it is made.)
    offsets, indices = graph.offsets, graph.indices
    if offsets.ndim != 1 or len(offsets) < 1 or indices.ndim != 1:
        raise ValueError(f"graph {graph.name!r}: offsets/indices must be 1-D with len(offsets) >= 1")
    if offsets[0] != 0 or offsets[-1] != len(indices):
        raise ValueError(
            f"graph {graph.name!r}: offsets[0]={offsets[0]} and offsets[-1]={offsets[-1]} must be "
            f"0 and len(indices)={len(indices)}"
        )


# --------------------------------------------------------------------------------------------
# Reference BFS


@numba.njit(cache=True)
def _bfs_kernel(offsets, indices, source):
    n = offsets.shape[0] - 1
    dist = np.full(n, -1, np.int32)
    parent = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    dist[source] = 0
    parent[source] = source
    queue[0] = source
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u] + 1
        for k in range(offsets[u], offsets[u + 1]):
            v = indices[k]
            # First discoverer in queue order wins: this makes parents deterministic.
            if dist[v] < 0:
                dist[v] = du
                parent[v] = u
                queue[tail] = v
                tail += 1
    return dist, parent


def cpu_bfs(graph: CSRLike, source) -> tuple[np.ndarray, np.ndarray]:
    """Sequential queue BFS from `source`, following out-arcs.

    Returns (distances, parents), both int32[n]: -1 for unreached vertices, parents[source] ==
    source, and each parent is the first discoverer in FIFO queue order (so the tree is
    deterministic for a given CSR arc order). Raises ValueError for a source that is not an
    integer in [0, n).
    """
    _check_graph(graph)
    s = _check_source(source, graph.num_vertices)
    return _bfs_kernel(graph.offsets, graph.indices, s)


#: bfs_distances takes a level bottom-up when its frontier's arcs are more than 1/ALPHA of what a
#: bottom-up level reads at most: every vertex's distance and the arcs out of the vertices not yet
#: reached (Beamer et al.'s rule and alpha, with the scan of every vertex counted, which keeps the
#: narrow levels of a long search, a road network's or a mesh's, top-down). Such a level costs at
#: most ALPHA times the top-down level it replaces. PARTS: the parts a frontier list is rebuilt in,
#: and the vertices the validator's arc scans split into (over threads, in the parallel forms).
ALPHA = 14
PARTS = 256


@two_forms
def _distances_kernel(offsets, indices, source, directed):
    n = offsets.shape[0] - 1
    dist = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    nxt = np.empty(n, np.int32)
    counts = np.zeros(PARTS, np.int64)
    part = (n + PARTS - 1) // PARTS
    dist[source] = 0
    queue[0] = source
    size = 1  # the frontier's vertices, listed in queue[:size] when `listed`
    listed = True
    edges = offsets[source + 1] - offsets[source]  # the frontier's arcs
    left = indices.shape[0] - edges  # arcs out of the vertices not reached yet
    level = 0
    while size > 0:
        found = 0
        reached = 0  # the arcs out of the vertices found
        if not directed and edges * ALPHA > n + left:
            # Bottom-up: each unreached vertex looks for a neighbour on this level. A thread writes
            # only its own vertex's distance, and what another reads there is -1 or level + 1,
            # never `level`: no race changes an answer.
            for v in prange(n):
                if dist[v] < 0:
                    for k in range(offsets[v], offsets[v + 1]):
                        if dist[indices[k]] == level:
                            dist[v] = level + 1
                            found += 1
                            reached += offsets[v + 1] - offsets[v]
                            break
            listed = False
        else:
            if not listed:  # the level's vertices, listed in parts: counted, then written
                for c in prange(PARTS):
                    x = 0
                    for v in range(c * part, min(n, (c + 1) * part)):
                        if dist[v] == level:
                            x += 1
                    counts[c] = x
                at = 0
                for c in range(PARTS):
                    x = counts[c]
                    counts[c] = at
                    at += x
                for c in prange(PARTS):
                    at = counts[c]
                    for v in range(c * part, min(n, (c + 1) * part)):
                        if dist[v] == level:
                            queue[at] = v
                            at += 1
                listed = True
            # Top-down, one thread: by the rule, a level of few arcs.
            for i in range(size):
                u = queue[i]
                for k in range(offsets[u], offsets[u + 1]):
                    v = indices[k]
                    if dist[v] < 0:
                        dist[v] = level + 1
                        nxt[found] = v
                        found += 1
                        reached += offsets[v + 1] - offsets[v]
            queue, nxt = nxt, queue
        level += 1
        size = found
        edges = reached
        left -= reached
    return dist


def bfs_distances(graph: CSRLike, source) -> np.ndarray:
    """The BFS distances of cpu_bfs (int32[n], -1 unreached), without its parents: the reference
    the checks compare with. Top-down, or bottom-up over threads on an undirected graph's wide
    levels (a large graph's form: explorer._twoform; its in-arcs are its out-arcs, each edge stored
    both ways, as CSRGraph stores it), as Beamer et al.'s rule says; the distances
    are those of any BFS, whatever the order. Raises ValueError for a source that is not an
    integer in [0, n)."""
    _check_graph(graph)
    s = _check_source(source, graph.num_vertices)
    return _distances_kernel.at(graph.indices.shape[0])(graph.offsets, graph.indices, s, bool(graph.directed))


@numba.njit(cache=True)
def _next_layer(offsets, indices, frontier, visited):
    """The unvisited out-neighbours of `frontier`, in discovery order (as cpu_bfs finds them),
    marked visited."""
    bound = 0
    for u in frontier:
        bound += offsets[u + 1] - offsets[u]
    out = np.empty(bound, np.int32)
    c = 0
    for u in frontier:
        for k in range(offsets[u], offsets[u + 1]):
            v = indices[k]
            if not visited[v]:
                visited[v] = True
                out[c] = v
                c += 1
    return out[:c]


def bfs_layers(graph: CSRLike, sources) -> Iterator[np.ndarray]:
    """The BFS levels from `sources` (a vertex or an iterable of vertices), one int32 array of
    vertex ids per level, as networkx's bfs_layers yields them: level 0 is the sources
    (duplicates dropped), level k the vertices first reached in k steps, each level in the
    order cpu_bfs discovers it. Follows out-arcs; the caller decides what to do with each
    level, and may stop early. A source that is not a vertex raises ValueError."""
    _check_graph(graph)
    n = graph.num_vertices
    if isinstance(sources, Iterable) and not isinstance(sources, (str, bytes)):
        srcs = [_check_source(s, n) for s in sources]
    else:
        srcs = [_check_source(sources, n)]
    frontier = np.array(list(dict.fromkeys(srcs)), np.int32)
    visited = np.zeros(n, np.bool_)
    visited[frontier] = True
    while frontier.size:
        yield frontier
        frontier = _next_layer(graph.offsets, graph.indices, frontier, visited)


# --------------------------------------------------------------------------------------------
# TEPS edge counting


@numba.njit(cache=True)
def _self_loops_per_vertex(offsets, indices):
    n = offsets.shape[0] - 1
    loops = np.zeros(n, np.int32)
    for u in range(n):
        for k in range(offsets[u], offsets[u + 1]):
            if indices[k] == u:
                loops[u] += 1
    return loops


# A graph's self loops, found once: scanning every arc again after each run delayed the result of
# a BFS of Kronecker scale 22 by 0.2 s. An empty array stands for "none" (the loaders drop them).
_self_loops: "weakref.WeakKeyDictionary[CSRLike, np.ndarray]" = weakref.WeakKeyDictionary()


def _loops_of(graph: CSRLike) -> np.ndarray:
    loops = _self_loops.get(graph)
    if loops is None:
        loops = _self_loops_per_vertex(graph.offsets, graph.indices)
        if not loops.any():
            loops = np.zeros(0, np.int32)
        _self_loops[graph] = loops
    return loops


@two_forms
def _count_reached_arcs(offsets, loops_per_vertex, distances):
    """(arcs leaving reached vertices (distance >= 0), self-loop arcs among them); loops_per_vertex
    empty: none. Integer sums: both forms give the same counts."""
    n = offsets.shape[0] - 1
    has_loops = loops_per_vertex.shape[0] > 0
    arcs = 0
    loops = 0
    for u in prange(n):
        if distances[u] >= 0:
            arcs += offsets[u + 1] - offsets[u]
            if has_loops:
                loops += loops_per_vertex[u]
    return arcs, loops


@numba.njit(cache=True)
def rows_sorted(offsets, indices):
    """Whether every row of a CSR lists its neighbours in increasing order."""
    for v in range(offsets.shape[0] - 1):
        for e in range(offsets[v] + 1, offsets[v + 1]):
            if indices[e - 1] > indices[e]:
                return False
    return True


def traversed_edges(graph: CSRLike, distances) -> int:
    """Edges a BFS traversed, counted the Graph500 way, for TEPS = traversed_edges / time.

    Undirected graph: the number of undirected edges with an endpoint in the reached component
    (vertices with distance >= 0). A CSR stores each edge {u, v} as the two arcs u->v and v->u,
    and a self loop {v, v} as a single arc, so the count is
        (arcs leaving reached vertices - self-loop arcs) / 2 + self-loop arcs,
    i.e. sum of reached degrees // 2 with each self loop counted once. Multi-edges, if the graph
    kept them, count once per copy.
    Directed graph: the number of arcs leaving reached vertices (self loops included), i.e. the
    sum of out-degrees of reached vertices.
    """
    _check_graph(graph)
    d = np.asarray(distances)
    if d.ndim != 1 or len(d) != graph.num_vertices:
        raise ValueError(
            f"distances has shape {d.shape}, expected ({graph.num_vertices},) for graph {graph.name!r}"
        )
    arcs, loops = _count_reached_arcs.at(len(d))(graph.offsets, _loops_of(graph), d)
    if graph.directed:
        return int(arcs)
    return int((arcs - loops) // 2 + loops)
