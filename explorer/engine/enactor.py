"""The enactor: the one step loop every run goes through, a single-source BFS or a multi-search.

    while not loop.converged:   # gunrock's enactor_t::loop()
        prepare   (compile what the step launches: outside every timed window; skipped once
                   the loop has compiled every kernel it may launch, loop.compiled_ahead)
        meter.begin; start clock; loop.launch(go); stop clock
        a loop with streamed(): its levels as the running launch logs them, each with its own
                   device time, yielded before the launch ends (the GPU does not wait for them)
        read back; meter.end
        loop.collect(ms) -> what the step ran -> records, yielded one by one

`Enactor` owns that loop and the timing: CUDA events on a GPU, the host clock on the simulator
and the CPU. The clock is stopped while the caller holds a record, so a run's elapsed time does
not depend on what the caller does between records (plotting is not BFS time); a meter (the
multi-search's energy, explorer.multisearch.energy) measures exactly the timed windows.

`BFSRun` is a single-source BFS on it: a technique's `LevelLoop` steps, each `Batch` of one or more
levels turned into LevelStats, each level's share of a multi-level launch by the weights the
technique reports (the SM's cycle counter). explorer.multisearch's run walks its batches' steps
through the same `Enactor`.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..stats import LEVEL_FIELDS, LevelStats, RunResult
from ..techniques.base import Batch, RunContext
from .runtime import STEP_LOCK, for_technique
from .session import Session, run_pool

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


class _NoMeter:
    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass


class Enactor:
    """The step loop and its clock for one run on `runtime`.

    A loop (a technique's `LevelLoop`, a multi-search's batches) provides `converged`,
    `compiled_ahead`, `launch(go)` (the step's launches, timed), `readback` ((device, host) arrays
    copied back after them, or None) and `collect(ms)` (what the step ran, from the read-back).
    `records(collected, ms)` turns that into the records the run yields. A loop with `streamed()`
    (pairs of a level's device time and its Batch, as the running launch logs them) has its levels
    yielded before the launch ends, then `collect` the rest. `on_compile` hears what
    the compile-before-timing pass prepares; `meter.begin()`/`meter.end()` bracket each timed
    window (after its read-back)."""

    def __init__(self, runtime, on_compile: Callable[..., None], meter=None):
        self.runtime = runtime
        self.on_compile = on_compile
        self.meter = meter or _NoMeter()
        self.clock = runtime.clock()

    def run(self, loop, records: Callable[[Any, float], Iterable]) -> Iterator:
        rt, clock, go, meter = self.runtime, self.clock, self.runtime.launcher, self.meter
        while not loop.converged:
            with STEP_LOCK:
                if not loop.compiled_ahead:
                    rt.prepare(loop.launch, self.on_compile)
                meter.begin()
                clock.start(go)
                loop.launch(go)
                clock.stop(go)
                streamed = loop.streamed() if hasattr(loop, "streamed") else None
                if streamed is None:
                    collected = self._read(loop)
            if streamed is not None:
                # A launch that logs its levels as it runs hands each over while it runs, with its
                # own device time; the GPU does not wait for the caller, so nothing is held off
                # the clock. The step lock is released meanwhile: the launch is on its way.
                for level_ms, part in streamed:
                    yield from records(part, level_ms)
                with STEP_LOCK:
                    collected = self._read(loop)
            for rec in records(*collected):
                held = time.perf_counter()
                yield rec
                clock.hold(time.perf_counter() - held)

    def _read(self, loop) -> tuple:
        """The step's read-back, the end of its metered window, its time and what it ran."""
        if loop.readback is not None:
            self.runtime.read(*loop.readback)
        self.meter.end()
        ms = self.clock.step_ms()
        return loop.collect(ms), ms

    def elapsed_ms(self) -> float:
        """From the first step's start to the last step's end, less the time the caller held records."""
        return self.clock.elapsed_ms()


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
        rt = self.runtime
        levels: list[LevelStats] = []
        with run_pool(self.session, self.graph, rt, self.status) as (session, pool):
            ctx = RunContext(graph=self.graph, source=self.source, knobs=self.knobs, instrument=self.instrument,
                             runtime=rt, limits=rt.limits, pool=pool, graph_arrays=session.graph_arrays(rt),
                             status=self.status, session=session)
            with STEP_LOCK:
                loop = self.impl.start(ctx)  # set-up: buffers, initial state, kernels compiled; untimed
            enactor = Enactor(rt, ctx.compiling)
            for rec in enactor.run(loop, lambda batch, ms: self._records(batch, ms, len(levels))):
                levels.append(rec)
                yield rec
            elapsed = enactor.elapsed_ms()
            with STEP_LOCK:
                distances, parents = loop.result()
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
