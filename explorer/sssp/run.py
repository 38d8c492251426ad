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

import logging
from typing import Callable, Iterator

from .. import backend
from ..engine.enactor import Enactor, RecordError
from ..engine.runtime import STEP_LOCK, for_technique
from ..engine.session import Session, run_pool
from ..graphs import CSRGraph, resolve_source
from .records import ITERATION_FIELDS, IterationStats, SSSPResult
from .techniques import SSSPTechnique, implementation, make_knobs
from .techniques.base import SSSPContext
from .weights import Weighting, weighting

log = logging.getLogger("explorer")

_ENACTOR_FIELDS = ("iteration", "technique", "time_ms")
_CORE_ROW = frozenset(ITERATION_FIELDS) - frozenset(_ENACTOR_FIELDS)


class SSSPRun:
    """An iterable shortest-path run: iterate for per-step records; `result` once exhausted."""

    def __init__(self, impl, graph: CSRGraph, source: int, knobs, w: Weighting,
                 on_status: Callable[[str], None] | None, limits=None, session: Session | None = None):
        self.impl, self.graph, self.source, self.knobs, self.weighting = impl, graph, source, knobs, w
        self._status = on_status or (lambda msg: None)
        self.runtime = for_technique(impl.runtimes).with_limits(limits)
        self.session = session
        self._result: SSSPResult | None = None
        self._started = False
        self._declared = frozenset(e.name for e in impl.extras)
        self.repaired = False  # whether the host rebuilt the parents (zero-weight cycles)

    @property
    def technique(self):
        return self.impl.technique

    def status(self, msg: str) -> None:
        log.info(msg)
        self._status(msg)

    @property
    def result(self) -> SSSPResult:
        if self._result is None:
            raise RuntimeError("the run has not finished: iterate over it (or call complete()) first")
        return self._result

    def complete(self) -> SSSPResult:
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator[IterationStats]:
        if self._started:
            raise RuntimeError("an SSSPRun can be iterated once; call run_sssp again for another run")
        self._started = True
        return self._steps()

    def _steps(self) -> Iterator[IterationStats]:
        rt, g = self.runtime, self.graph
        records: list[IterationStats] = []
        with run_pool(self.session, g, rt, self.status) as (session, pool):
            ctx = SSSPContext(graph=g, source=self.source, knobs=self.knobs, instrument=True, runtime=rt,
                              limits=rt.limits, pool=pool, graph_arrays=session.graph_arrays(rt), status=self.status,
                              session=session, weighting=self.weighting)
            with STEP_LOCK:
                loop = self.impl.start(ctx)  # set-up: buffers, the source; untimed
            enactor = Enactor(rt, ctx.compiling)
            for rec in enactor.run(loop, lambda rows, ms: self._records(rows, ms, len(records))):
                records.append(rec)
                yield rec
            elapsed = enactor.elapsed_ms()
            with STEP_LOCK:
                distances, parents, self.repaired = loop.result()
        w = self.weighting
        self._result = SSSPResult(
            graph=g.name, source=self.source, technique=self.impl.name, knobs=self.knobs.as_dict(),
            distances=distances, parents=parents, iterations=records, total_ms=sum(r.time_ms for r in records),
            elapsed_ms=elapsed, device=rt.device_dict(ctx.limits), dtype=w.kind,
            weights="unit weights" if w.unit else "the graph's", extras=self.impl.extras,
            original_ids=g.original_ids)

    def _records(self, batch, ms: float, first: int) -> list[IterationStats]:
        from ..engine.enactor import level_shares

        rows = batch.rows
        shares = [1.0] if batch.weights is None and len(rows) == 1 else level_shares(batch.weights, len(rows))
        out = []
        for i, row in enumerate(rows):
            extras = {k: row.pop(k) for k in self._declared if k in row}
            if len(extras) != len(self._declared) or not _CORE_ROW.issuperset(row):
                raise RecordError(
                    f"technique {self.impl.name!r} returned a row with fields {sorted(row)} and extras "
                    f"{sorted(extras)}; it declares extras {sorted(self._declared)}")
            out.append(IterationStats(iteration=first + i, technique=self.impl.name, time_ms=float(ms * shares[i]),
                                      extras=extras, **row))
        return out


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


