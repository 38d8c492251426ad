"""Edge weights for shortest paths: seeded weights for a graph that has none (the generators'
`weights=` option), unit weights, and what a weighted graph's weights are (integers or reals).

Drawn weights are a pure function of the arc's two ends and the seed (the SplitMix64 finalizer of
their ids), so the same graph and seed give the same weights whatever the thread count, and both
arcs of an undirected edge get the same weight.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ._splitmix import GOLDEN, mix64
from .csr import CSRGraph, GraphError

#: What `weights=` may ask for: none (unweighted), reals drawn uniformly from [low, high), or
#: integers drawn uniformly from low..high (both included).
WEIGHT_KINDS = ("none", "uniform", "integer")
#: The generators' weight parameters and their defaults (every generator takes them).
WEIGHT_PARAMS = {"weights": "none", "weight_low": 1.0, "weight_high": 100.0, "weight_seed": 1}
#: Integer weights are exact in float64 up to here; larger ones are refused.
MAX_EXACT = 2 ** 53


@numba.njit(parallel=True, cache=True)
def _draw(offsets, indices, directed, integer, low, high, seed):
    n = offsets.shape[0] - 1
    out = np.empty(indices.shape[0], np.float64)
    span = high - low
    count = np.uint64(0)
    if integer:
        count = np.uint64(np.int64(high) - np.int64(low) + 1)
    for u in prange(n):
        for k in range(offsets[u], offsets[u + 1]):
            v = indices[k]
            a, b = u, v
            if not directed and b < a:
                a, b = b, a
            h = mix64(mix64(np.uint64(a) * GOLDEN + seed) ^ np.uint64(b))
            if integer:
                out[k] = low + np.float64(h % count)
            else:
                out[k] = low + span * (np.float64(h >> np.uint64(11)) * (1.0 / 9007199254740992.0))
    return out


def check_weight_params(kind: str, low, high, seed, where: str = "weights") -> None:
    """GraphError naming the parameter for a kind, range or seed that cannot be drawn."""
    if kind not in WEIGHT_KINDS:
        raise GraphError(f"{where}={kind!r} is invalid: one of {', '.join(WEIGHT_KINDS)}")
    if kind == "none":
        return
    for name, x in (("weight_low", low), ("weight_high", high)):
        if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not np.isfinite(x):
            raise GraphError(f"{name}={x!r} is invalid: a finite number")
    if kind == "integer":
        if float(low) != int(low) or float(high) != int(high):
            raise GraphError(f"integer weights need whole bounds, got weight_low={low}, weight_high={high}")
        if not int(low) <= int(high):
            raise GraphError(f"integer weights need weight_low <= weight_high, got {low} > {high}")
        if max(abs(int(low)), abs(int(high))) >= MAX_EXACT:
            raise GraphError(f"integer weights must stay below 2**53 in magnitude, got {low}..{high}")
    elif not float(low) < float(high):
        raise GraphError(f"uniform weights need weight_low < weight_high, got {low} >= {high}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GraphError(f"weight_seed={seed!r} is invalid: an int >= 0")


def with_weights(graph: CSRGraph, kind: str = "uniform", low: float = 1.0, high: float = 100.0,
                 seed: int = 1) -> CSRGraph:
    """The graph with seeded weights drawn for its arcs (replacing any it had): 'uniform' reals in
    [low, high) or 'integer' whole numbers in low..high; both arcs of an undirected edge get the
    same weight. 'none' returns the graph without weights. The structure is shared, not copied."""
    check_weight_params(kind, low, high, seed)
    notes = {k: v for k, v in graph.notes.items() if k != "weights"}
    if kind == "none":
        return CSRGraph(graph.offsets, graph.indices, graph.directed, graph.name, graph.original_ids, notes)
    w = _draw(graph.offsets, graph.indices, graph.directed, kind == "integer", float(low), float(high),
              np.uint64(int(seed)))
    bounds = f"{int(low)}..{int(high)}" if kind == "integer" else f"[{float(low):g}, {float(high):g})"
    notes["weights"] = f"{kind} weights {bounds} drawn with seed {int(seed)} (both arcs of an edge alike)"
    return CSRGraph(graph.offsets, graph.indices, graph.directed, f"{graph.name}_w{kind}", graph.original_ids,
                    notes, w)


def unit_weights(graph: CSRGraph) -> CSRGraph:
    """The graph with every arc weighing 1 (shortest paths are then BFS levels)."""
    notes = {**graph.notes, "weights": "unit weights (every arc weighs 1)"}
    return CSRGraph(graph.offsets, graph.indices, graph.directed, graph.name, graph.original_ids, notes,
                    np.ones(graph.num_arcs, np.float64))


def integral(weights: np.ndarray) -> bool:
    """Whether every weight is a whole number small enough for exact int64 sums (|w| < 2**53)."""
    if weights.size == 0:
        return True
    return bool(np.all(np.floor(weights) == weights) and np.abs(weights).max() < MAX_EXACT)


__all__ = ["WEIGHT_KINDS", "WEIGHT_PARAMS", "check_weight_params", "integral", "unit_weights", "with_weights"]
