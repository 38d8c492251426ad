"""The enactor: the one level loop every technique runs through.

    while not loop.converged:   # gunrock's enactor_t::loop()
        prepare   (compile what the step launches: outside every timed window; skipped once
                   the loop has compiled every kernel it may launch, loop.compiled_ahead)
        start clock; loop.launch(go); stop clock
        a loop with streamed(): its levels as the running launch logs them, each with its own
                   device time, yielded before the launch ends (the GPU does not wait for them)
        read back   (the step's time)
        loop.collect(ms) -> a Batch of one or more levels -> LevelStats, yielded one by one

The enactor owns the timing: CUDA events on a GPU, the host clock on the simulator and the CPU,
each level's share of a multi-level launch by the weights the technique reports (the SM's cycle
counter). The clock is stopped while the caller holds a level, so the run's elapsed time does not
depend on what the caller does between levels (plotting is not BFS time).
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Iterator

import numpy as np

from ..stats import LEVEL_FIELDS, LevelStats, RunResult
from ..techniques.base import Batch, RunContext
from .runtime import STEP_LOCK, for_technique
from .session import Session

log = logging.getLogger("explorer")

#: Row keys a technique leaves to the enactor; the core keys a row may have.
_ENACTOR_FIELDS = ("level", "technique", "time_ms")
_CORE_ROW = frozenset(LEVEL_FIELDS) - frozenset(_ENACTOR_FIELDS)


class RecordError(RuntimeError):
    """A technique returned a row the record cannot hold (a bug in the technique)."""


def level_shares(weights, count: int) -> np.ndarray:
    """Each level's share of a step's time: by `weights` (e.g. cycles), or equal shares."""
    if weights is None:
        return np.full(count, 1.0 / max(count, 1))
    w = np.asarray(weights, dtype=np.float64)
    return w / max(w.sum(), 1.0)


class BFSRun:
    """An iterable BFS: iterate for per-level records; `result` once it is exhausted."""

    def __init__(self, impl, graph, source: int, knobs, instrument: bool,
                 on_status: Callable[[str], None] | None, limits=None, session: Session | None = None):
        self.impl = impl
        self.graph = graph
        self.source = source
        self.knobs = knobs
        self.instrument = instrument
        self._status = on_status or (lambda msg: None)
        self.runtime = for_technique(impl.runtimes).with_limits(limits)
        self.session = session
        self._result: RunResult | None = None
        self._started = False
        self._declared = frozenset(e.name for e in impl.extras)

    @property
    def technique(self):
        return self.impl.technique

    def status(self, msg: str) -> None:
        log.info(msg)
        self._status(msg)

    @property
    def result(self) -> RunResult:
        if self._result is None:
            raise RuntimeError("the BFS has not finished: iterate over the run (or call complete()) first")
        return self._result

    def complete(self) -> RunResult:
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator[LevelStats]:
        if self._started:
            raise RuntimeError("a BFSRun can be iterated once; call run_bfs again for another run")
        self._started = True
        return self._levels()

    def _levels(self) -> Iterator[LevelStats]:
        own = self.session is None
        session = Session(self.graph, self.status) if own else self.session
        pool = session.acquire(self.runtime)
        try:
            rt = self.runtime
            ctx = RunContext(graph=self.graph, source=self.source, knobs=self.knobs, instrument=self.instrument,
                             runtime=rt, limits=rt.limits, pool=pool, graph_arrays=session.graph_arrays(rt),
                             status=self.status, session=session)
            with STEP_LOCK:
                loop = self.impl.start(ctx)  # set-up: buffers, initial state, kernels compiled; untimed
            clock, go = rt.clock(), rt.launcher
            levels: list[LevelStats] = []
            while not loop.converged:
                with STEP_LOCK:
                    if not loop.compiled_ahead:
                        rt.prepare(loop.launch, ctx.compiling)
                    clock.start(go)
                    loop.launch(go)
                    clock.stop(go)
                # A launch that logs its levels as it runs (a LevelLoop with `streamed()`) hands each
                # over while it runs, timed by the device; the GPU does not wait for the caller.
                for level_ms, part in (loop.streamed() if hasattr(loop, "streamed") else ()):
                    for rec in self._records(part, level_ms, len(levels)):
                        levels.append(rec)
                        yield rec
                with STEP_LOCK:
                    if loop.readback is not None:
                        rt.read(*loop.readback)
                    ms = clock.step_ms()
                    batch = loop.collect(ms)
                for rec in self._records(batch, ms, len(levels)):
                    levels.append(rec)
                    held = time.perf_counter()
                    yield rec
                    clock.hold(time.perf_counter() - held)
            elapsed = clock.elapsed_ms()
            with STEP_LOCK:
                distances, parents = loop.result()
        finally:
            session.release(pool)
            if own:
                session.close()
        from ..reference import traversed_edges

        self._result = RunResult(
            graph=self.graph.name, source=self.source, technique=self.impl.name, knobs=self.knobs.as_dict(),
            distances=distances, parents=parents, levels=levels, total_ms=sum(lv.time_ms for lv in levels),
            elapsed_ms=elapsed, traversed_edges=traversed_edges(self.graph, distances),
            device=rt.device_dict(ctx.limits), instrumented=self.instrument, extras=self.impl.extras,
            original_ids=self.graph.original_ids)

    def _records(self, batch: Batch, ms: float, first: int) -> list[LevelStats]:
        rows = batch.rows
        shares = [1.0] if batch.weights is None and len(rows) == 1 else level_shares(batch.weights, len(rows))
        out = []
        for i, row in enumerate(rows):
            extras = {k: row.pop(k) for k in self._declared if k in row}
            if len(extras) != len(self._declared) or not _CORE_ROW.issuperset(row):
                raise RecordError(
                    f"technique {self.impl.name!r} returned a row with fields {sorted(row)} and extras "
                    f"{sorted(extras)}; it declares extras {sorted(self._declared)} (and leaves "
                    f"{', '.join(_ENACTOR_FIELDS)} to the enactor)")
            out.append(LevelStats(level=first + i, technique=self.impl.name, time_ms=float(ms * shares[i]),
                                  extras=extras, **row))
        return out
