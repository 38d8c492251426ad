"""Host passes over a finished (or failing) run's tree: the parent pointers made acyclic where
zero-weight cycles let tight parents point round in a circle, and the negative cycle a failing
run's parents lead to."""
from __future__ import annotations

import numba
import numpy as np

from ..reference.validate import _vertex_on_cycle


@numba.njit(cache=True)
def _tight_tree(offsets, indices, weights, dist, source, inf, parents):
    """Parents by a breadth-first walk of the tight arcs (d(u) + w = d(v)) from the source: a tree
    whatever zero-weight cycles the tight arcs hold."""
    n = offsets.shape[0] - 1
    for v in range(n):
        parents[v] = -1
    parents[source] = source
    queue = np.empty(n, np.int64)
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u]
        for k in range(offsets[u], offsets[u + 1]):
            v = indices[k]
            if parents[v] < 0 and dist[v] != inf and du + weights[k] == dist[v]:
                parents[v] = u
                queue[tail] = v
                tail += 1


def acyclic_parents(graph, weights: np.ndarray, dist: np.ndarray, parents: np.ndarray, source: int,
                    inf) -> tuple[np.ndarray, bool]:
    """(parents, repaired): the run's parents if they lead every reached vertex to the source, else
    a tree of tight arcs rebuilt from the source (tight parents can circle only through arcs of
    weight 0, which the device's pass cannot tell apart)."""
    if source < 0 or _vertex_on_cycle(np.asarray(parents, np.int32), source) < 0:
        return parents, False
    out = np.empty_like(parents)
    _tight_tree(graph.offsets, graph.indices, weights, dist, source, inf, out)
    return out, True


def arc_weight(graph, weights: np.ndarray, u: int, v: int):
    """The least weight of an arc u -> v (None: there is none)."""
    lo, hi = int(graph.offsets[u]), int(graph.offsets[u + 1])
    hit = np.flatnonzero(graph.indices[lo:hi] == v)
    return None if hit.size == 0 else weights[lo + hit].min().item()


@numba.njit(cache=True)
def _walk(parents, v, steps):
    """Where `steps` parent hops from v lead (-1: a vertex without a parent on the way)."""
    for _ in range(steps):
        p = parents[v]
        if p < 0:
            return -1
        v = p
    return v


def negative_cycle(graph, weights: np.ndarray, parents: np.ndarray, starts) -> list | None:
    """A negative cycle the parent pointers lead to from one of `starts` (vertices 0..n-1), its
    vertices in the arcs' direction (each one's parent before it), or None when they lead to none."""
    n = graph.num_vertices
    seen = set()
    for s in list(starts)[:64]:
        v = int(_walk(parents, np.int64(s), n))  # n hops from anywhere end on a cycle, if any
        if v < 0 or v in seen:
            continue
        seen.add(v)
        cycle = [v]
        u = int(parents[v])
        while u != v and len(cycle) <= n:
            cycle.append(u)
            u = int(parents[u])
        cycle.reverse()
        total, ok = 0.0, True
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            w = arc_weight(graph, weights, a, b)
            if w is None:
                ok = False
                break
            total += w
        if ok and total < 0:
            return cycle
    return None
