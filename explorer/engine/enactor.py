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

`BFSRun` is a single-source BFS on it (an `EnactedRun`, as explorer.sssp's SSSPRun is): a
technique's `LevelLoop` steps, each `Batch` of one or more levels turned into LevelStats, each
level's share of a multi-level launch by the weights the technique reports (the SM's cycle
counter). explorer.multisearch's run walks its batches' steps through the same `Enactor`; every
run object follows `WalkedOnce`'s protocol (iterate once, then `result`).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

import numpy as np

from ..stats import LEVEL_FIELDS, LevelStats, RunResult
from ..techniques.base import Batch, RunContext
from .runtime import STEP_LOCK, for_technique
from .session import Session, run_pool

log = logging.getLogger("explorer")

Rec = TypeVar("Rec")  # a run's record
Res = TypeVar("Res")  # its result


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
    yielded before the launch ends, then `collect` the rest. `on_compile` hears what the
    compile-before-timing pass prepares (a pass between steps that compiles is held off the run's
    elapsed time, as the caller's holds are: the GPU waits for it); `meter.begin()`/`meter.end()`
    bracket each timed window (after its read-back)."""

    def __init__(self, runtime, on_compile: Callable[..., None], meter=None):
        self.runtime = runtime
        self.on_compile = on_compile
        self.meter = meter or _NoMeter()
        self.clock = runtime.clock()
        self.compiles = 0  # kernels the untimed passes compiled or loaded (told through on_compile)

    def run(self, loop, records: Callable[[Any, float], Iterable]) -> Iterator:
        rt, clock, go, meter = self.runtime, self.clock, self.runtime.launcher, self.meter
        began = False
        while not loop.converged:
            with STEP_LOCK:
                if not loop.compiled_ahead:
                    t, compiles = time.perf_counter(), self.compiles
                    rt.prepare(loop.launch, self._compiling)
                    # A kernel first launched by this step compiled while the GPU idled: not the
                    # run's time (the pass's marshalling, when it compiles nothing, is).
                    if began and self.compiles != compiles:
                        clock.hold(time.perf_counter() - t)
                began = True
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

    def _compiling(self, name, *outcome) -> None:
        """on_compile, counting the compiles it hears of (`compile_overload` calls it before, with
        the name alone, and after, with the outcome)."""
        self.compiles += len(outcome)
        if self.on_compile is not None:
            self.on_compile(name, *outcome)

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


class WalkedOnce(Generic[Rec, Res]):
    """The protocol of every run object (BFSRun, explorer.sssp's SSSPRun and APSPRun, the
    multi-search's run): iterate it once for its records, then read `result`; complete() does both.
    A subclass names itself in `_what` and `_again` (the call that makes another run) and gives
    `_walk()`, the generator of its records, which sets `_result` when it ends."""

    _what = "the run"
    _again = ""
    _result: Res | None = None
    _started = False

    @property
    def result(self) -> Res:
        if self._result is None:
            raise RuntimeError(f"{self._what} has not finished: iterate over the run (or call complete()) first")
        return self._result

    def complete(self) -> Res:
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator[Rec]:
        if self._started:
            raise RuntimeError(f"a {type(self).__name__} can be iterated once; call {self._again} again for "
                               "another run")
        self._started = True
        return self._walk()

    def _walk(self) -> Iterator[Rec]:
        raise NotImplementedError


class EnactedRun(WalkedOnce[Rec, Res]):
    """A single-source run of a technique's loop on the Enactor (BFSRun; explorer.sssp's SSSPRun):
    set-up untimed, each step's Batch turned into records, then the result. A subclass gives its
    context (`_context`), its record (`_record`, with `_core_row` the row keys a technique may
    return) and its result (`_finish`)."""

    _core_row: frozenset = frozenset()

    def __init__(self, impl, graph, source: int, knobs, on_status: Callable[[str], None] | None, limits=None,
                 session: Session | None = None):
        self.impl, self.graph, self.source, self.knobs = impl, graph, source, knobs
        self._status = on_status or (lambda msg: None)
        self.runtime = for_technique(impl.runtimes).with_limits(limits)
        self.session = session
        self._declared = tuple(e.name for e in impl.extras)
        self._name = impl.name

    @property
    def technique(self):
        return self.impl.technique

    def status(self, msg: str) -> None:
        log.info(msg)
        self._status(msg)

    def _walk(self) -> Iterator[Rec]:
        rt = self.runtime
        records: list = []
        with run_pool(self.session, self.graph, rt, self.status) as (session, pool):
            ctx = self._context(rt, session, pool)
            with STEP_LOCK:
                loop = self.impl.start(ctx)  # set-up: buffers, initial state, kernels compiled; untimed
            enactor = Enactor(rt, ctx.compiling)
            for rec in enactor.run(loop, lambda batch, ms: self._records(batch, ms, len(records))):
                records.append(rec)
                yield rec
            elapsed = enactor.elapsed_ms()
            with STEP_LOCK:
                outcome = self._outcome(ctx, loop)
        self._result = self._finish(ctx, outcome, records, elapsed)

    def _outcome(self, ctx, loop):
        """What _finish makes the result of: the loop's result() (its arrays, copied back)."""
        return loop.result()

    def _records(self, batch: Batch, ms: float, first: int) -> list:
        # Made for every level of every run (a thousand a run on a long graph): kept lean.
        rows = batch.rows
        shares = [1.0] if batch.weights is None and len(rows) == 1 else level_shares(batch.weights, len(rows))
        out = []
        for i, row in enumerate(rows):
            try:
                extras = {k: row.pop(k) for k in self._declared}
            except KeyError as missing:
                raise RecordError(f"technique {self._name!r} returned a row without its extra {missing.args[0]!r} "
                                  f"(it declares {sorted(self._declared)})") from None
            if not self._core_row.issuperset(row):
                raise RecordError(
                    f"technique {self._name!r} returned a row with fields {sorted([*row, *extras])}; it declares "
                    f"extras {sorted(self._declared)} (the enactor adds the index, technique and time_ms)")
            out.append(self._record(first + i, float(ms * shares[i]), extras, row))
        return out

    def _context(self, rt, session, pool):
        raise NotImplementedError

    def _record(self, index: int, time_ms: float, extras: dict, row: dict) -> Rec:
        raise NotImplementedError

    def _finish(self, ctx, outcome, records: list, elapsed_ms: float) -> Res:
        raise NotImplementedError


class BFSRun(EnactedRun[LevelStats, RunResult]):
    """An iterable BFS: iterate for per-level records; `result` once it is exhausted."""

    _what, _again = "the BFS", "run_bfs"
    _core_row = frozenset(LEVEL_FIELDS) - frozenset(("level", "technique", "time_ms"))

    def __init__(self, impl, graph, source: int, knobs, instrument: bool,
                 on_status: Callable[[str], None] | None, limits=None, session: Session | None = None,
                 choice=None, check=None):
        super().__init__(impl, graph, source, knobs, on_status, limits, session)
        self.instrument = instrument
        self.choice = choice  # explorer.auto.Choice when technique "auto" chose this run's technique
        if check is not None and (check.graph is not graph or check.source != source):
            raise ValueError(f"the check is of graph {check.graph.name!r} from vertex {check.source}, not of this run "
                             f"({graph.name!r} from vertex {source})")
        self.check = check  # explorer.reference.on_device.DeviceCheck, or None

    def _outcome(self, ctx, loop):
        """None when the run's check passed where its arrays are (they stay there), else the arrays."""
        arrays = loop.device_result() if self.check is not None and self.runtime.kind != "cpu" else None
        if arrays is not None and self.check.passes(self.runtime, ctx.graph_arrays, *arrays):
            return None
        return loop.result()

    def _context(self, rt, session, pool) -> RunContext:
        return RunContext(graph=self.graph, source=self.source, knobs=self.knobs, instrument=self.instrument,
                          runtime=rt, limits=rt.limits, pool=pool, graph_arrays=session.graph_arrays(rt),
                          status=self.status, session=session)

    def _record(self, index: int, time_ms: float, extras: dict, row: dict) -> LevelStats:
        return LevelStats.made(index, self._name, time_ms, extras, row)

    def _finish(self, ctx, outcome, levels: list, elapsed_ms: float) -> RunResult:
        from ..reference import traversed_edges

        distances, parents = outcome or (None, None)
        return RunResult(
            graph=self.graph.name, source=self.source, technique=self.impl.name, knobs=self.knobs.as_dict(),
            distances=distances, parents=parents, levels=levels, total_ms=sum(lv.time_ms for lv in levels),
            elapsed_ms=elapsed_ms, validation=None if outcome else "ok",
            traversed_edges=self.check.traversed_edges if outcome is None else traversed_edges(self.graph, distances),
            device=self.runtime.device_dict(ctx.limits), instrumented=self.instrument, extras=self.impl.extras,
            original_ids=self.graph.original_ids, choice=None if self.choice is None else self.choice.as_dict())
