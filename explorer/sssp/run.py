"""run_sssp (the entry point: it converts and checks every input before anything runs) and
SSSPRun, a shortest-path run on the engine's Enactor, one IterationStats a step.

    run = run_sssp(graph, "max-degree", "h-bf")
    for it in run:             # IterationStats, as each step completes
        ...
    result = run.result        # SSSPResult: distances, parents, steps, time

Vertex ids, as for run_bfs: the source is the user's id (explorer.api.resolve_source converts it
once), everything behind works on vertices 0..n-1, and the result reports the user's ids.
"""
from __future__ import annotations

from typing import Callable

from .. import backend
from ..engine.enactor import EnactedRun
from ..engine.session import Session
from ..graphs import CSRGraph, resolve_source
from .records import ITERATION_FIELDS, IterationStats, SSSPResult
from .techniques import SSSPTechnique, implementation, make_knobs
from .techniques.base import SSSPContext
from .weights import Weighting, weighting

class SSSPRun(EnactedRun[IterationStats, SSSPResult]):
    """An iterable shortest-path run: iterate for per-step records; `result` once exhausted."""

    _what, _again = "the shortest-path run", "run_sssp"
    _core_row = frozenset(ITERATION_FIELDS) - frozenset(("iteration", "technique", "time_ms"))

    def __init__(self, impl, graph: CSRGraph, source: int, knobs, w: Weighting,
                 on_status: Callable[[str], None] | None, limits=None, session: Session | None = None):
        super().__init__(impl, graph, source, knobs, on_status, limits, session)
        self.weighting = w
        self.repaired = False  # whether the host rebuilt the parents (zero-weight cycles)

    def _context(self, rt, session, pool) -> SSSPContext:
        return SSSPContext(graph=self.graph, source=self.source, knobs=self.knobs, instrument=True, runtime=rt,
                           limits=rt.limits, pool=pool, graph_arrays=session.graph_arrays(rt), status=self.status,
                           session=session, weighting=self.weighting)

    def _record(self, index: int, time_ms: float, extras: dict, row: dict) -> IterationStats:
        return IterationStats(iteration=index, technique=self.impl.name, time_ms=time_ms, extras=extras, **row)

    def _finish(self, ctx, outcome, records: list, elapsed_ms: float) -> SSSPResult:
        distances, parents, self.repaired = outcome
        w, g = self.weighting, self.graph
        return SSSPResult(
            graph=g.name, source=self.source, technique=self.impl.name, knobs=self.knobs.as_dict(),
            distances=distances, parents=parents, iterations=records, total_ms=sum(r.time_ms for r in records),
            elapsed_ms=elapsed_ms, device=self.runtime.device_dict(ctx.limits), dtype=w.kind,
            weights="unit weights" if w.unit else "the graph's", extras=self.impl.extras,
            original_ids=g.original_ids)


def run_sssp(graph: CSRGraph, source="max-degree", technique: SSSPTechnique | str = SSSPTechnique.HBF,
             knobs=None, *, unit_weights: bool = False, seed: int = 0,
             on_status: Callable[[str], None] | None = None, limits=None,
             session: Session | None = None) -> SSSPRun:
    """Prepare single-source shortest paths of `graph` from `source`; iterate the returned run to
    execute it step by step (IterationStats), then read run.result (an SSSPResult).

    `source`: a vertex id in the graph's own ids, "max-degree", "random" (`seed`) or Vertex(v), as
    run_bfs takes it. `technique`: "bellman-ford", "h-bf" or "delta-stepping" (SSSPTechnique).
    `knobs`: the technique's. The graph must have weights (graph.weights; distances are int64 for
    whole-number weights, float64 otherwise) unless `unit_weights` (every arc weighs 1). Negative
    weights: bellman-ford and h-bf take them and raise NegativeCycleError for a negative cycle
    reachable from the source; delta-stepping refuses them (NegativeWeightError).
    """
    impl = implementation(technique)
    knobs = make_knobs(impl.technique, knobs)
    w = weighting(graph, unit_weights)
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}: "
                         "open a Session for this graph")
    src = resolve_source(graph, source, seed)
    backend.check_graph_size(graph.num_arcs)
    run = SSSPRun(impl, graph, src, knobs, w, on_status, limits, session)
    impl.check(graph, w, knobs, run.runtime.limits)
    return run


def potentials(graph: CSRGraph, technique: SSSPTechnique | str = SSSPTechnique.HBF, knobs=None, *,
               unit_weights: bool = False, on_status=None, limits=None, session: Session | None = None) -> SSSPRun:
    """Shortest distances from Johnson's virtual source (a new vertex joined to every vertex by an arc
    of weight 0): h(v) <= 0 for every v, and w(u, v) + h(u) - h(v) >= 0 for every arc. Raises
    NegativeCycleError when the graph has a negative cycle anywhere. The run's parents are not a
    tree (every vertex starts at 0)."""
    impl = implementation(technique)
    if not impl.negative_weights:
        raise ValueError(f"technique {impl.name!r} does not take negative weights: Johnson's potentials need "
                         "bellman-ford or h-bf")
    knobs = make_knobs(impl.technique, knobs)
    w = weighting(graph, unit_weights)
    backend.check_graph_size(graph.num_arcs)
    run = SSSPRun(impl, graph, -1, knobs, w, on_status, limits, session)
    impl.check(graph, w, knobs, run.runtime.limits)
    return run


