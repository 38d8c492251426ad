"""The Graph500 result validator, the exact comparison with the CPU reference, and
`check_result`, the one check every BFS result goes through (the CLI, the Explorer, the tests and
the benchmarks): the CPU BFS runs once, then the Graph500 rules and the distances are checked."""
from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
from numba import prange

from .._twoform import two_forms
from .bfs import PARTS, CSRLike, _check_graph, _check_source, bfs_distances

__all__ = ["RULES", "ValidationReport", "ValidationError", "CheckReport", "validate",
           "compare_distances", "check_result", "assert_valid_bfs"]

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


# The arc scans below split the vertices into PARTS parts, each scanned to its first finding; the
# first part with one holds the first finding overall, so both forms report the same vertex or
# arc. The parallel form runs the parts over threads: the check of a result on a 33 M-arc graph
# took 0.25 s serially, 0.06 s on 16 threads of an H100 host.


@numba.njit(cache=True)
def _first_found(first):
    """The finding of the first part that has one (first[c]: part c's, -1 for none), or -1."""
    for c in range(first.shape[0]):
        if first[c] >= 0:
            return first[c]
    return -1


@two_forms
def _first_parent_without_arc(offsets, indices, parents, source, directed):
    """First reached vertex v != source with no arc parents[v] -> v, or -1. No sortedness assumed.

    Undirected graphs (every arc has its reverse, per CSRGraph): look for parents[v] in v's own
    row, a sequential scan of O(m) in total. Directed graphs: the arc must leave the parent, and
    scanning the parent's row per child is quadratic for hubs, so mark children in one pass over
    all arcs instead.
    """
    n = offsets.shape[0] - 1
    size = (n + PARTS - 1) // PARTS
    first = np.full(PARTS, -1, np.int64)
    found = np.zeros(n if directed else 0, np.bool_)
    if directed:
        for u in prange(n):
            for k in range(offsets[u], offsets[u + 1]):
                v = indices[k]
                if parents[v] == u:
                    found[v] = True  # every writer stores True
    for c in prange(PARTS):
        for v in range(c * size, min(n, (c + 1) * size)):
            pv = parents[v]
            if pv < 0 or v == source:
                continue
            if directed:
                ok = found[v]
            else:
                ok = False
                for k in range(offsets[v], offsets[v + 1]):
                    if indices[k] == pv:
                        ok = True
                        break
            if not ok:
                first[c] = v
                break
    return _first_found(first)


@two_forms
def _first_bad_arc(offsets, indices, dist, directed):
    """Index of the first arc breaking the graph-edge-levels rule, or -1."""
    n = offsets.shape[0] - 1
    size = (n + PARTS - 1) // PARTS
    first = np.full(PARTS, -1, np.int64)
    for c in prange(PARTS):
        for u in range(c * size, min(n, (c + 1) * size)):
            du = dist[u]
            if directed and du < 0:
                continue  # arcs out of unreached vertices constrain nothing
            bad = -1
            for k in range(offsets[u], offsets[u + 1]):
                dv = dist[indices[k]]
                if du < 0:
                    if dv >= 0:
                        bad = k  # undirected edge with exactly one end reached
                        break
                    continue
                # Checked both ways so a graph flagged undirected but stored one-way is still covered.
                if dv < 0 or dv > du + 1 or (not directed and du > dv + 1):
                    bad = k
                    break
            if bad >= 0:
                first[c] = bad
                break
    return _first_found(first)


@two_forms
def _levels_agree(dist, parents, expected, source):
    """Whether every distance equals `expected`'s, the source is its own parent, an unreached vertex
    has none, and every other reached vertex's parent is a vertex one level nearer: one pass over
    the vertices (the parents' arcs are _first_parent_without_arc's)."""
    n = dist.shape[0]
    size = (n + PARTS - 1) // PARTS
    bad = np.zeros(PARTS, np.bool_)
    for c in prange(PARTS):
        for v in range(c * size, min(n, (c + 1) * size)):
            dv = dist[v]
            pv = parents[v]
            if dv != expected[v] or pv < -1 or pv >= n:
                bad[c] = True
            elif v == source:
                bad[c] = pv != source
            elif dv < 0:
                bad[c] = pv != -1
            else:
                bad[c] = pv < 0 or dist[pv] != dv - 1
            if bad[c]:
                break
    return not bad.any()


def _agrees_with_reference(graph: CSRLike, source: int, d: np.ndarray, p: np.ndarray, expected: np.ndarray) -> bool:
    """Whether a result (int32 arrays) is a BFS tree with exactly the reference's distances: the
    levels agree (_levels_agree) and every parent has an arc to its child. That proves every rule
    of `validate`: levels fall by one along parent pointers (no cycle), and exact BFS distances put
    every edge's ends at most a level apart, so the arc scan of graph-edge-levels is not needed. A
    result that fails here goes through `validate` for its report."""
    m = graph.indices.shape[0]
    return bool(_levels_agree.at(len(d))(d, p, expected, source) and
                _first_parent_without_arc.at(m)(graph.offsets, graph.indices, p, source, graph.directed) < 0)


def _describe_cycle(parents: np.ndarray, u: int, limit: int = 8) -> str:
    chain = [u]
    v = int(parents[u])
    while v != u and len(chain) < limit:  # capped: a cycle may be millions of vertices long
        chain.append(v)
        v = int(parents[v])
    return " -> ".join(map(str, chain)) + (f" -> {u}" if v == u else " -> ...")


def validate(
    graph: CSRLike, source, distances, parents, *, reference_distances=None
) -> ValidationReport:
    """Check a BFS result against the Graph500 rules; return the first broken rule.

    Rules, checked in the order of RULES (ids are stable):
      shape             distances/parents are 1-D integer arrays of length n
      range             distances in [-1, n), parents in [-1, n)
      source            distances[source] == 0 and parents[source] == source
      spanning          a vertex has a parent iff it has a distance >= 0, and the reached set is
                        exactly the set reachable from the source (compared with bfs_distances)
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

    reference_distances: bfs_distances(graph, source) (or cpu_bfs's) when the caller already has
    it; the spanning rule otherwise runs bfs_distances itself (the largest cost of validation).
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
        expected = bfs_distances(graph, s)
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

    m = graph.indices.shape[0]
    v = int(_first_parent_without_arc.at(m)(graph.offsets, graph.indices, p, s, graph.directed))
    if v >= 0:
        kind = f"arc {p[v]} -> {v}" if graph.directed else f"edge {{{p[v]}, {v}}}"
        return _fail("parent-is-edge", f"vertex {v} has parent {p[v]}, but the graph has no {kind}")

    k = int(_first_bad_arc.at(m)(graph.offsets, graph.indices, d, graph.directed))
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

    return ValidationReport(True, None, _valid_message(s, d))


def _valid_message(source: int, distances: np.ndarray) -> str:
    return (f"valid BFS tree from source {int(source)}: {int(np.count_nonzero(distances >= 0))} vertices reached, "
            f"max level {int(distances.max())}")


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


@dataclass(frozen=True, eq=False)
class CheckReport(ValidationReport):
    """Outcome of `check_result()`: ok, rule (the first broken rule id of RULES, or "distances"
    when the tree is valid but the distances differ from the CPU reference's), a message naming
    the offending vertex or edge, and the CPU reference distances it was checked against."""

    expected: np.ndarray | None = field(default=None, repr=False)


def check_result(graph: CSRLike, result, *, expected=None) -> CheckReport:
    """Check a BFS result (a RunResult: its `source`, a vertex 0..n-1, `distances` and
    `parents`): validate() with the Graph500 rules, then an exact comparison of the distances
    with the CPU reference's. The CPU BFS runs once, or not at all when `expected`
    (bfs_distances(graph, result.source)) is given. `.raise_if_failed()` turns a failure into a
    ValidationError. The result carries its own source, so no caller converts one."""
    try:
        source, distances, parents = result.source, result.distances, result.parents
    except AttributeError:
        raise TypeError(f"check_result takes a RunResult, not {type(result).__name__}; "
                        "assert_valid_bfs(graph, source, distances, parents) checks bare arrays") from None
    return _check(graph, source, distances, parents, expected)


def assert_valid_bfs(graph: CSRLike, source, distances, parents) -> None:
    """The check of check_result on bare arrays (`source` a vertex 0..n-1), raising
    ValidationError (rule "distances" for the comparison) on the first problem."""
    _check(graph, source, distances, parents, None).raise_if_failed()


def _check(graph: CSRLike, source, distances, parents, expected) -> CheckReport:
    if expected is None:
        expected = bfs_distances(graph, source)
    d, p, e = np.asarray(distances), np.asarray(parents), np.asarray(expected)
    n = graph.num_vertices
    if (all(a.dtype == np.int32 and a.shape == (n,) for a in (d, p, e)) and
            _agrees_with_reference(graph, _check_source(source, n), d, p, e)):
        return CheckReport(True, None, f"{_valid_message(source, d)}; distances equal the CPU reference BFS", expected)
    report = validate(graph, source, distances, parents, reference_distances=expected)
    if not report.ok:
        return CheckReport(False, report.rule, report.message, expected)
    msg = compare_distances(expected, distances)
    if msg is not None:
        return CheckReport(False, "distances", msg, expected)
    return CheckReport(True, None, f"{report.message}; distances equal the CPU reference BFS",
                       expected)
