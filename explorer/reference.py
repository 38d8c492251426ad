"""CPU reference BFS, Graph500 TEPS edge counting and the Graph500 result validator.

Every GPU result the explorer shows or the tests accept goes through `validate()` and an exact
`compare_distances()` against `cpu_bfs()`. The per-arc work is Numba-compiled and the per-vertex
work is vectorised numpy, so validation stays linear on graphs of millions of vertices.

Conventions (shared with the GPU kernels):
  distances int32[n]: BFS level, -1 for unreached vertices
  parents   int32[n]: BFS-tree parent, -1 for unreached vertices, parents[source] == source
"""
from __future__ import annotations

import operator
import weakref
from dataclasses import dataclass

import numba
import numpy as np

from explorer.graphs import CSRGraph

__all__ = [
    "cpu_bfs",
    "traversed_edges",
    "validate",
    "compare_distances",
    "assert_valid_bfs",
    "ValidationReport",
    "ValidationError",
    "RULES",
]

# Stable rule identifiers, in the order validate() checks them. The order matters: a broken tree
# usually violates several rules at once, and the earlier, more specific rule is the one reported.
RULES = (
    "shape",  # wrong length, not 1-D, or not an integer dtype
    "range",  # a distance outside [-1, n) or a parent outside [-1, n)
    "source",  # distances[source] != 0 or parents[source] != source
    "spanning",  # parent set <=> distance set, and reached set == set reachable from the source
    "no-cycles",  # following parents from every reached vertex ends at the source
    "tree-edge-levels",  # distances[v] == distances[parents[v]] + 1, parent reached
    "parent-is-edge",  # parents[v] -> v is an arc of the graph
    "graph-edge-levels",  # every edge joins levels differing by at most one (see validate())
)


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


def _check_graph(graph: CSRGraph) -> None:
    # O(1) sanity checks only: the Numba kernels do no bounds checking, and a CSR whose offsets
    # disagree with indices would read out of bounds. (Index ranges are graphs.py's job.)
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


def cpu_bfs(graph: CSRGraph, source) -> tuple[np.ndarray, np.ndarray]:
    """Sequential queue BFS from `source`, following out-arcs.

    Returns (distances, parents), both int32[n]: -1 for unreached vertices, parents[source] ==
    source, and each parent is the first discoverer in FIFO queue order (so the tree is
    deterministic for a given CSR arc order). Raises ValueError for a source that is not an
    integer in [0, n).
    """
    _check_graph(graph)
    s = _check_source(source, graph.num_vertices)
    return _bfs_kernel(graph.offsets, graph.indices, s)


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
_self_loops: "weakref.WeakKeyDictionary[CSRGraph, np.ndarray]" = weakref.WeakKeyDictionary()


def _loops_of(graph: CSRGraph) -> np.ndarray:
    loops = _self_loops.get(graph)
    if loops is None:
        loops = _self_loops_per_vertex(graph.offsets, graph.indices)
        if not loops.any():
            loops = np.zeros(0, np.int32)
        _self_loops[graph] = loops
    return loops


@numba.njit(cache=True)
def _count_reached_arcs(offsets, loops_per_vertex, reached):
    """(arcs leaving reached vertices, self-loop arcs among them); loops_per_vertex empty: none."""
    n = offsets.shape[0] - 1
    has_loops = loops_per_vertex.shape[0] > 0
    arcs = 0
    loops = 0
    for u in range(n):
        if reached[u]:
            arcs += offsets[u + 1] - offsets[u]
            if has_loops:
                loops += loops_per_vertex[u]
    return arcs, loops


def traversed_edges(graph: CSRGraph, distances) -> int:
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
    reached = d >= 0
    arcs, loops = _count_reached_arcs(graph.offsets, _loops_of(graph), reached)
    if graph.directed:
        return int(arcs)
    return int((arcs - loops) // 2 + loops)


# --------------------------------------------------------------------------------------------
# Validator


class ValidationError(AssertionError):
    """A BFS result broke a Graph500 rule; `.report` is the failing ValidationReport."""

    def __init__(self, report: "ValidationReport"):
        super().__init__(f"[{report.rule}] {report.message}")
        self.report = report

    @property
    def rule(self) -> str | None:
        return self.report.rule


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of `validate()`: ok, the first broken rule (an id from RULES) and a message naming
    the offending vertex or edge."""

    ok: bool
    rule: str | None
    message: str

    def raise_if_failed(self) -> "ValidationReport":
        if not self.ok:
            raise ValidationError(self)
        return self


def _fail(rule: str, message: str) -> ValidationReport:
    assert rule in RULES
    return ValidationReport(False, rule, message)


@numba.njit(cache=True)
def _vertex_on_cycle(parents, source):
    """A vertex on a parent-pointer cycle, or -1. Linear: every vertex is walked over once.

    Works whatever the distances say, so a cycle is reported as a cycle and not as a level error.
    """
    n = parents.shape[0]
    # 0: not seen, 1: on the walk in progress, 2: known to end at the source or at -1
    state = np.zeros(n, np.int8)
    path = np.empty(n, np.int32)
    state[source] = 2
    for v in range(n):
        if state[v] != 0 or parents[v] < 0:
            continue
        length = 0
        u = v
        while u >= 0 and state[u] == 0:
            state[u] = 1
            path[length] = u
            length += 1
            u = parents[u]
        if u >= 0 and state[u] == 1:
            return u  # the walk came back onto itself
        for i in range(length):
            state[path[i]] = 2
    return -1


@numba.njit(cache=True)
def _first_parent_without_arc(offsets, indices, parents, source, directed):
    """First reached vertex v != source with no arc parents[v] -> v, or -1. No sortedness assumed.

    Undirected graphs (every arc has its reverse, per CSRGraph): look for parents[v] in v's own
    row, a sequential scan of O(m) in total. Directed graphs: the arc must leave the parent, and
    scanning the parent's row per child is quadratic for hubs, so mark children in one pass over
    all arcs instead.
    """
    n = offsets.shape[0] - 1
    if not directed:
        for v in range(n):
            pv = parents[v]
            if pv < 0 or v == source:
                continue
            found = False
            for k in range(offsets[v], offsets[v + 1]):
                if indices[k] == pv:
                    found = True
                    break
            if not found:
                return v
        return -1
    found = np.zeros(n, np.bool_)
    for u in range(n):
        for k in range(offsets[u], offsets[u + 1]):
            v = indices[k]
            if parents[v] == u:
                found[v] = True
    for v in range(n):
        if parents[v] >= 0 and v != source and not found[v]:
            return v
    return -1


@numba.njit(cache=True)
def _first_bad_arc(offsets, indices, dist, directed):
    """Index of the first arc breaking the graph-edge-levels rule, or -1."""
    n = offsets.shape[0] - 1
    for u in range(n):
        du = dist[u]
        if directed and du < 0:
            continue  # arcs out of unreached vertices constrain nothing
        for k in range(offsets[u], offsets[u + 1]):
            dv = dist[indices[k]]
            if du < 0:
                if dv >= 0:
                    return k  # undirected edge with exactly one end reached
                continue
            if dv < 0 or dv > du + 1:
                return k
            # Checked both ways so a graph flagged undirected but stored one-way is still covered.
            if not directed and du > dv + 1:
                return k
    return -1


def _describe_cycle(parents: np.ndarray, u: int, limit: int = 8) -> str:
    chain = [u]
    v = int(parents[u])
    while v != u and len(chain) < limit:  # capped: a cycle may be millions of vertices long
        chain.append(v)
        v = int(parents[v])
    return " -> ".join(map(str, chain)) + (f" -> {u}" if v == u else " -> ...")


def validate(
    graph: CSRGraph, source, distances, parents, *, reference_distances=None
) -> ValidationReport:
    """Check a BFS result against the Graph500 rules; return the first broken rule.

    Rules, checked in the order of RULES (ids are stable):
      shape             distances/parents are 1-D integer arrays of length n
      range             distances in [-1, n), parents in [-1, n)
      source            distances[source] == 0 and parents[source] == source
      spanning          a vertex has a parent iff it has a distance >= 0, and the reached set is
                        exactly the set reachable from the source (compared with cpu_bfs)
      no-cycles         parent pointers have no cycle (found directly, not inferred from levels)
      tree-edge-levels  for reached v != source: parents[v] is reached and
                        distances[v] == distances[parents[v]] + 1
      parent-is-edge    parents[v] -> v is an arc (undirected graphs are trusted to store each
                        edge both ways, so the arc v -> parents[v] is what is looked up)
      graph-edge-levels undirected: every edge {u, v} has both ends unreached, or both reached
                        with |d[u] - d[v]| <= 1; directed (Graph500 adapted): every arc u -> v
                        with u reached has v reached and d[v] <= d[u] + 1 (backward arcs may
                        span any number of levels)
    Together these imply that distances are exact BFS levels. A source that is not an integer
    in [0, n) raises ValueError (a caller bug, not a bad result).

    reference_distances: cpu_bfs(graph, source)[0] when the caller already has it; the spanning
    rule otherwise runs cpu_bfs itself (the largest cost of validation).
    """
    _check_graph(graph)
    n = graph.num_vertices
    s = _check_source(source, n)

    d = np.asarray(distances)
    p = np.asarray(parents)
    for name, a in (("distances", d), ("parents", p)):
        if a.ndim != 1 or a.shape[0] != n:
            return _fail("shape", f"{name} has shape {a.shape}, expected ({n},) for graph {graph.name!r}")
        if a.dtype.kind not in "iu":
            return _fail("shape", f"{name} has dtype {a.dtype}, expected an integer dtype (int32)")

    bad = (d < -1) | (d >= n)
    if bad.any():
        v = int(np.argmax(bad))
        return _fail("range", f"vertex {v} has distance {d[v]}, outside [-1, {n})")
    bad = (p < -1) | (p >= n)
    if bad.any():
        v = int(np.argmax(bad))
        return _fail("range", f"vertex {v} has parent {p[v]}, not a vertex id in [0, {n}) nor -1")
    # In range now, so int32 is lossless; it also keeps the Numba kernels to one specialisation.
    d = d.astype(np.int32, copy=False)
    p = p.astype(np.int32, copy=False)

    if d[s] != 0:
        return _fail("source", f"source vertex {s} has distance {d[s]}, expected 0")
    if p[s] != s:
        return _fail("source", f"source vertex {s} has parent {p[s]}, expected itself ({s})")

    has_parent = p >= 0
    reached = d >= 0
    bad = has_parent != reached
    if bad.any():
        v = int(np.argmax(bad))
        if reached[v]:
            return _fail("spanning", f"vertex {v} has distance {d[v]} but no parent (-1)")
        return _fail("spanning", f"vertex {v} has parent {p[v]} but is unreached (distance -1)")

    if reference_distances is None:
        expected = _bfs_kernel(graph.offsets, graph.indices, s)[0]
    else:
        expected = np.asarray(reference_distances)
        if expected.shape != (n,):
            raise ValueError(f"reference_distances has shape {expected.shape}, expected ({n},)")
    bad = (expected >= 0) != reached
    if bad.any():
        v = int(np.argmax(bad))
        if reached[v]:
            return _fail("spanning", f"vertex {v} has distance {d[v]} but is not reachable from source {s}")
        return _fail(
            "spanning",
            f"vertex {v} is reachable from source {s} (at level {expected[v]}) but is unreached (distance -1)",
        )

    u = int(_vertex_on_cycle(p, s))
    if u >= 0:
        return _fail(
            "no-cycles",
            f"parent pointers form a cycle {_describe_cycle(p, u)} that never reaches source {s}",
        )

    # Unreached parents are mapped to vertex 0 only to index safely; `has_parent` masks them out.
    dp = d[np.where(has_parent, p, 0)]
    bad = has_parent & ((dp < 0) | (d != dp + 1))
    bad[s] = False
    if bad.any():
        v = int(np.argmax(bad))
        if dp[v] < 0:
            return _fail("tree-edge-levels", f"vertex {v} (level {d[v]}) has parent {p[v]}, which is unreached")
        return _fail(
            "tree-edge-levels",
            f"tree edge {p[v]} -> {v} joins level {dp[v]} to level {d[v]}, expected level {dp[v] + 1}",
        )

    v = int(_first_parent_without_arc(graph.offsets, graph.indices, p, s, graph.directed))
    if v >= 0:
        kind = f"arc {p[v]} -> {v}" if graph.directed else f"edge {{{p[v]}, {v}}}"
        return _fail("parent-is-edge", f"vertex {v} has parent {p[v]}, but the graph has no {kind}")

    k = int(_first_bad_arc(graph.offsets, graph.indices, d, graph.directed))
    if k >= 0:
        u = int(np.searchsorted(graph.offsets, k, side="right") - 1)
        v = int(graph.indices[k])
        if graph.directed:
            return _fail(
                "graph-edge-levels",
                f"arc {u} -> {v} goes from level {d[u]} to level {d[v]}, expected level <= {d[u] + 1}",
            )
        return _fail(
            "graph-edge-levels",
            f"edge {{{u}, {v}}} joins level {d[u]} and level {d[v]}, expected levels differing by at most 1",
        )

    return ValidationReport(
        True, None, f"valid BFS tree from source {s}: {int(reached.sum())} vertices reached, "
        f"max level {int(d.max())}"
    )


def compare_distances(expected, actual) -> str | None:
    """None when the two distance arrays are equal, else a message naming the first mismatching
    vertex, both values, and how many vertices differ."""
    e = np.asarray(expected)
    a = np.asarray(actual)
    if e.shape != a.shape:
        return f"distances have shape {a.shape}, expected {e.shape}"
    bad = e != a
    if not bad.any():
        return None
    v = int(np.argmax(bad))
    return (
        f"distance of vertex {v} is {a[v]}, expected {e[v]} "
        f"({int(bad.sum())} of {len(e)} vertices differ)"
    )


def assert_valid_bfs(graph: CSRGraph, source, distances, parents) -> None:
    """What every GPU result in the tests goes through: validate() with the Graph500 rules, then
    an exact comparison of distances with cpu_bfs. Raises ValidationError (rule "distances" for
    the comparison) on the first problem."""
    expected, _ = cpu_bfs(graph, source)
    validate(graph, source, distances, parents, reference_distances=expected).raise_if_failed()
    msg = compare_distances(expected, distances)
    if msg is not None:
        raise ValidationError(ValidationReport(False, "distances", msg))
