"""The reference for weighted shortest paths: scipy.sparse.csgraph on the same graph (dijkstra,
bellman_ford for negative weights, floyd_warshall for all pairs), and `check_sssp_result`, the
one check of a shortest-path result: distances equal to scipy's within float tolerance (exactly
for whole-number weights), the same vertices reached, and parents forming shortest paths (each
parent an arc into its child, tight: d(p) + w(p, v) = d(v), and every reached vertex led back to
the source).

Parallel arcs count with their least weight (scipy would add them up), and explicit zero weights
are arcs. Like the rest of this package it reads any CSR-shaped object (offsets, indices,
weights, num_vertices); `weights` overrides the graph's (unit weights: np.ones).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: The rules check_sssp_result applies, in order.
SSSP_RULES = (
    "shape",  # arrays of the wrong length
    "source",  # the source's distance is not 0 or its parent not itself
    "reached",  # a vertex reached by one and not the other
    "distances",  # a distance differs from scipy's beyond the tolerance
    "parent-is-arc",  # a reached vertex's parent has no arc into it, or an unreached vertex has a parent
    "parent-tight",  # d(parent) + w(parent, v) != d(v)
    "no-cycles",  # following parents from a reached vertex does not end at the source
)


def arc_weights(graph, weights=None) -> np.ndarray:
    """The graph's weights per arc as float64 (the given `weights`, else graph.weights)."""
    w = graph.weights if weights is None else weights
    if w is None:
        raise ValueError(f"graph {getattr(graph, 'name', '')!r} has no weights: pass weights= (np.ones for unit weights)")
    return np.asarray(w, dtype=np.float64)


def scipy_matrix(graph, weights=None):
    """The weighted adjacency as a scipy csr_array, parallel arcs reduced to their least weight,
    zero weights kept as arcs."""
    import scipy.sparse as sp

    n = graph.num_vertices
    w = arc_weights(graph, weights)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.offsets))
    dst = np.asarray(graph.indices, dtype=np.int64)
    if src.size:
        order = np.lexsort((w, dst, src))  # by arc, least weight first
        src, dst, w = src[order], dst[order], w[order]
        first = np.r_[True, (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])]
        src, dst, w = src[first], dst[first], w[first]
    offsets = np.r_[0, np.cumsum(np.bincount(src, minlength=n))].astype(np.int64)
    return sp.csr_array((w, dst, offsets), shape=(n, n))


def reference_sssp(graph, source: int, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """(distances float64 with inf, predecessors int32 with -9999 for none) from scipy: dijkstra, or
    bellman_ford when a weight is negative (which raises scipy's NegativeCycleError for a negative
    cycle reachable from the source)."""
    from scipy.sparse import csgraph

    A = scipy_matrix(graph, weights)
    negative = A.data.size and A.data.min() < 0
    solver = csgraph.bellman_ford if negative else csgraph.dijkstra
    d, p = solver(A, directed=True, indices=int(source), return_predecessors=True)
    return d, p


def reference_apsp(graph, weights=None) -> np.ndarray:
    """All-pairs distances (float64, inf for no path) from scipy's floyd_warshall."""
    from scipy.sparse import csgraph

    return csgraph.floyd_warshall(scipy_matrix(graph, weights), directed=True)


@dataclass(frozen=True, eq=False)
class SSSPCheckReport:
    """Outcome of check_sssp_result: ok, the first broken rule (SSSP_RULES), a message naming the
    vertex, and scipy's distances it was checked against."""

    ok: bool
    rule: str | None
    message: str
    expected: np.ndarray | None = field(default=None, repr=False)

    def raise_if_failed(self) -> "SSSPCheckReport":
        if not self.ok:
            raise AssertionError(f"[{self.rule}] {self.message}")
        return self


def _tolerance(expected: np.ndarray, integer: bool) -> tuple[float, float]:
    if integer:
        return 0.0, 0.0
    finite = np.abs(expected[np.isfinite(expected)])
    scale = float(finite.max()) if finite.size else 1.0
    return 1e-9, 1e-12 * max(scale, 1.0)


def check_sssp_result(graph, result, *, expected=None, weights=None) -> SSSPCheckReport:
    """Check an SSSPResult (its source, a vertex 0..n-1, its distances and parents) against scipy
    on the same graph (`expected`: scipy's distances, when already computed; `weights`: the
    weights the run used, e.g. np.ones for unit weights, else the graph's)."""
    try:
        source, parents = int(result.source), np.asarray(result.parents)
        dist = result.as_float()
    except AttributeError:
        raise TypeError(f"check_sssp_result takes an SSSPResult, not {type(result).__name__}") from None
    n = graph.num_vertices
    if source < 0:
        raise ValueError("check_sssp_result checks runs from a source; Johnson's potentials have none")
    w = arc_weights(graph, weights)
    if expected is None:
        expected, _ = reference_sssp(graph, source, w)

    def fail(rule, msg):
        return SSSPCheckReport(False, rule, msg, expected)

    if dist.shape != (n,) or parents.shape != (n,):
        return fail("shape", f"distances {dist.shape} and parents {parents.shape} should both have {n} entries")
    if dist[source] != 0 or parents[source] != source:
        return fail("source", f"source {source} has distance {dist[source]} and parent {parents[source]}; expected 0 "
                              "and itself")
    reached, should = np.isfinite(dist), np.isfinite(expected)
    if (reached != should).any():
        v = int(np.argmax(reached != should))
        return fail("reached", f"vertex {v} is {'reached' if reached[v] else 'unreached'} here and "
                               f"{'reached' if should[v] else 'unreached'} by scipy")
    integer = bool(np.all(np.floor(w) == w))
    rtol, atol = _tolerance(expected, integer)
    bad = reached & ~np.isclose(dist, expected, rtol=rtol, atol=atol)
    if bad.any():
        v = int(np.argmax(bad))
        return fail("distances", f"distance of vertex {v} is {dist[v]!r}, scipy's {expected[v]!r} "
                                 f"({int(bad.sum())} of {n} vertices differ)")
    stray = ~reached & (parents != -1)
    if stray.any():
        v = int(np.argmax(stray))
        return fail("parent-is-arc", f"unreached vertex {v} has parent {parents[v]}")
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.offsets))
    dst = np.asarray(graph.indices, dtype=np.int64)
    is_parent = parents[dst] == src
    has_arc = np.zeros(n, bool)
    has_arc[dst[is_parent]] = True
    tight_arc = is_parent & np.isclose(dist[src] + w, dist[dst], rtol=rtol, atol=atol)
    tight = np.zeros(n, bool)
    tight[dst[tight_arc]] = True
    need = reached.copy()
    need[source] = False
    if (need & ~has_arc).any():
        v = int(np.argmax(need & ~has_arc))
        return fail("parent-is-arc", f"vertex {v}'s parent {parents[v]} has no arc into it")
    if (need & ~tight).any():
        v = int(np.argmax(need & ~tight))
        p = int(parents[v])
        return fail("parent-tight", f"vertex {v}'s parent {p} is not on a shortest path: d({p}) = {dist[p]!r}, "
                                    f"d({v}) = {dist[v]!r}")
    from .validate import _vertex_on_cycle

    u = int(_vertex_on_cycle(parents.astype(np.int32), source))
    if u >= 0:
        return fail("no-cycles", f"following parents from vertex {u} comes back to it, not to the source")
    return SSSPCheckReport(True, None, f"distances equal scipy's ({int(reached.sum()):,} vertices reached), parents "
                                       "form shortest paths", expected)


__all__ = ["SSSP_RULES", "SSSPCheckReport", "arc_weights", "check_sssp_result", "reference_apsp", "reference_sssp",
           "scipy_matrix"]
