"""A graph's weights as shortest paths use them (`Weighting`), and the errors of weighted runs.

Distances have the weights' type: int64 when every weight is a whole number (below 2**53 in
magnitude), float64 otherwise. An unreached vertex's distance is `inf` for float64 and
`INT64_INF` (2**63 - 1) for int64; `SSSPResult.as_float()` gives float64 with inf either way.
A graph without weights is refused by the weighted techniques unless unit weights are asked for
(every arc weighs 1: the distances are then BFS levels).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..graphs import CSRGraph
from ..graphs.weights import integral

INT64_INF = np.iinfo(np.int64).max
#: Packed (distance << 32 | parent) words hold distances of magnitude below this.
PACKED_LIMIT = 2 ** 31 - 2


class UnweightedGraphError(ValueError):
    """A weighted technique was given a graph without weights."""


class NegativeWeightError(ValueError):
    """A technique that needs non-negative weights was given a negative one; the message names it."""


class NegativeCycleError(ValueError):
    """A negative cycle is reachable from the source (or, for all pairs, exists): shortest paths
    are undefined. `cycle` lists its vertices in the graph's own ids when one was found."""

    def __init__(self, message: str, cycle: list | None = None):
        super().__init__(message)
        self.cycle = cycle


@dataclass(frozen=True)
class Weighting:
    """The weights of one graph as the SSSP kernels read them."""

    dtype: type  # np.int64 or np.float64: the distances' type
    weights: np.ndarray  # per arc, of that type
    min_weight: float  # 0 for a graph without arcs
    max_abs: float
    negative_arc: tuple | None  # (u, v, w) of the first negative arc, vertices 0..n-1
    unit: bool  # unit weights given to an unweighted graph
    num_vertices: int

    @property
    def integer(self) -> bool:
        return self.dtype is np.int64

    @property
    def inf(self):
        """The distance of an unreached vertex, as the kernels take it."""
        return INT64_INF if self.integer else np.inf

    @property
    def floor(self):
        """No simple path is shorter than (n - 1) x the most negative weight: a distance below it
        proves a negative cycle. The smallest representable value when no weight is negative."""
        if self.min_weight >= 0:
            return -INT64_INF if self.integer else -np.inf
        bound = (self.num_vertices - 1) * self.min_weight
        if self.integer:
            return int(bound)
        return bound * (1 + 1e-9) - 1e-300  # below any rounding of a real path's sum

    @property
    def packable(self) -> bool:
        """Whether every distance fits the packed word's 32 bits: integer weights whose longest
        simple path, (n - 1) x max |w|, stays below 2**31 - 2."""
        return self.integer and (self.num_vertices - 1) * self.max_abs < PACKED_LIMIT

    def scalar(self, x):
        """x as the kernels' distance scalar (a Python int or float)."""
        if self.integer:
            if x == np.inf or x >= INT64_INF:
                return INT64_INF
            if x == -np.inf or x <= -INT64_INF:
                return -INT64_INF
            return int(x)
        return float(x)

    @property
    def kind(self) -> str:
        return "int64" if self.integer else "float64"


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def weighting(graph: CSRGraph, unit_weights: bool = False) -> Weighting:
    """The graph's Weighting (kept with the graph object); UnweightedGraphError for a graph
    without weights unless unit_weights, ValueError naming the arc of an infinite weight."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    if graph.weights is None and not unit_weights:
        raise UnweightedGraphError(
            f"graph {graph.name!r} has no weights, and shortest paths need them: load a weighted file (a Matrix "
            "Market file's values, a SNAP file's third column, METIS edge weights), generate one with "
            "weights='uniform' or 'integer' (gen:KIND:...,weights=integer), or ask for unit weights "
            "(unit_weights=True, --unit-weights): every arc then weighs 1")
    key = bool(unit_weights and graph.weights is None)
    kept = _CACHE.get(graph)
    if kept is not None and key in kept:
        return kept[key]
    n = graph.num_vertices
    if graph.weights is None:
        w = np.ones(graph.num_arcs, np.int64)
        made = Weighting(np.int64, w, 1.0 if w.size else 0.0, 1.0 if w.size else 0.0, None, True, n)
    else:
        raw = graph.weights
        bad = ~np.isfinite(raw)
        if bad.any():
            k = int(np.argmax(bad))
            u = int(np.searchsorted(graph.offsets, k, side="right") - 1)
            raise ValueError(f"graph {graph.name!r}: arc {graph.to_original(u)} -> "
                             f"{graph.to_original(int(graph.indices[k]))} weighs {raw[k]}; shortest paths need "
                             "finite weights (leave an arc out instead of giving it an infinite weight)")
        ints = integral(raw)
        w = raw.astype(np.int64) if ints else raw
        lo = float(raw.min()) if raw.size else 0.0
        neg = None
        if lo < 0:
            k = int(np.argmax(raw < 0))
            u = int(np.searchsorted(graph.offsets, k, side="right") - 1)
            neg = (u, int(graph.indices[k]), raw[k].item())
        made = Weighting(np.int64 if ints else np.float64, np.ascontiguousarray(w), lo,
                         float(np.abs(raw).max()) if raw.size else 0.0, neg, False, n)
    _CACHE.setdefault(graph, {})[key] = made
    return made


def negative_cycle_error(graph: CSRGraph, where: str, cycle: list | None, total, reason: str) -> NegativeCycleError:
    """The error of a negative cycle, its vertices (0..n-1, each one's parent first) in the graph's
    own ids: the one place the shortest-path code names vertices to the user."""
    ids = None if cycle is None else [graph.to_original(v) for v in cycle]
    text = ""
    if ids is not None:
        shown = " -> ".join(map(str, ids[:12])) + (" -> ..." if len(ids) > 12 else "")
        text = f": {shown} -> {ids[0]} weighs {total:g}"
    return NegativeCycleError(f"graph {graph.name!r} has a negative cycle {where}{text}; shortest paths are undefined "
                              f"there ({reason})", ids)


def vertex_id(graph: CSRGraph, v: int) -> int:
    """Vertex v as the user's input names it."""
    return graph.to_original(v)


def source_text(graph: CSRGraph, source: int) -> str:
    """'from source <the user's id>', or Johnson's virtual source."""
    return ("reachable from Johnson's virtual source (somewhere in the graph)" if source < 0
            else f"reachable from source {graph.to_original(source)}")


def refuse_negative(graph: CSRGraph, w: Weighting, technique: str, alternatives: str) -> None:
    """NegativeWeightError naming the first negative arc (in the graph's own ids)."""
    if w.negative_arc is None:
        return
    u, v, x = w.negative_arc
    raise NegativeWeightError(
        f"{technique} needs non-negative weights, but arc {graph.to_original(u)} -> {graph.to_original(v)} of graph "
        f"{graph.name!r} weighs {x:g}: its buckets settle distances in increasing order, which a negative arc "
        f"would undo; {alternatives} handle negative weights")
