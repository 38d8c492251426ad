"""What a technique provides to the enactor, and what the enactor gives it.

A technique (registered in `explorer.techniques`) is a `BFSTechnique`: its knobs, its record
extras, the runtimes it runs on, checks that need the device (`check`), and `start(ctx)`, the
untimed set-up that returns a `LevelLoop`. The enactor (`explorer.engine.enactor`) then owns the
loop: while the loop has not converged it times `launch(go)`, reads `readback` back, and turns
what `collect(ms)` returns (a `Batch`: one level, or several from one launch) into records.
No technique writes a loop over levels, times anything or yields.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ..device import compile_status
from ..knobs import KnobSet, NoKnobs
from ..stats import Direction, Extra, Kernel


@dataclass
class RunContext:
    """Everything a technique's set-up may use; made by the enactor for one run."""

    graph: Any  # CSRGraph
    source: int
    knobs: KnobSet
    instrument: bool
    runtime: Any  # engine.runtime.Runtime
    limits: Any  # explorer.device.DeviceLimits (None on the CPU)
    pool: Any  # engine.session.BufferPool: this run's buffers
    graph_arrays: tuple  # (offsets, indices) where the runtime reads them
    status: Callable[[str], None]
    session: Any = None  # engine.session.Session: for arrays derived from the graph

    def buffer(self, name: str, shape, dtype, host: bool | str = False):
        return self.pool.buffer(name, shape, dtype, host)

    def view(self, name: str, base, lo: int, hi: int):
        return self.pool.view(name, base, lo, hi)

    def derived(self, name: str, build) -> tuple:
        """Arrays derived from the graph once a session (`build(graph)` -> tuple of numpy arrays),
        where the runtime reads them; e.g. the reverse CSR of a directed graph."""
        return self.session.derived(name, build, self.runtime)

    def compiling(self, name: str, outcome: str | None = None) -> None:
        """What the launcher says while it prepares a kernel (`compile_overload`)."""
        self.status(compile_status(name, outcome))

    def launch_now(self, kernel, blocks, threads, shared, *args) -> None:
        """An untimed set-up launch."""
        self.runtime.launch_now(self.compiling, kernel, blocks, threads, shared, *args)


@dataclass
class Batch:
    """What one step ran: a row per level (core fields without `level`, `technique` and
    `time_ms`, plus the technique's extras by name) and, for a launch that ran several levels,
    each level's weight in its time (the SM's cycle counter); equal shares when None."""

    rows: list[dict]
    weights: Sequence[float] | None = None


#: Levels a launch that logs its levels on the device may run before the host launches again from
#: the state it saved. Between a full log's launch and the next the GPU waits while the host makes
#: that log's records (a few µs a row), so a log holds the levels of the longest searches people run
#: (road networks: thousands to tens of thousands of levels) in one launch.
LAUNCH_LOG_LEVELS = 1 << 15


class LevelLoop:
    """A technique's state during one run. The enactor calls, while not `converged`:
    [prepare launch(go) unless compiled_ahead] -> launch(go) [timed] -> read-back of `readback`
    -> collect(ms) -> Batch."""

    converged: bool = False
    #: (device array, host array) copied back after each step's kernels, or None.
    readback: tuple | None = None
    #: True once set-up has compiled every kernel a step may launch: the enactor then skips
    #: preparing each step (a pass over the step's launches that only checks).
    compiled_ahead: bool = False

    def launch(self, go) -> None:
        raise NotImplementedError

    def collect(self, ms: float) -> Batch:
        raise NotImplementedError

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """Host copies of (distances, parents) once converged: by default of `self.dist` and
        `self.parent`, where the loop keeps them (`self.ctx` being its RunContext)."""
        rt = self.ctx.runtime
        return rt.to_host(self.dist), rt.to_host(self.parent)

    def device_result(self) -> tuple | None:
        """(distances, parents) where the run left them, in the graph's ids, for a check there
        (explorer.reference.on_device); None where result() does more than copy them back."""
        return (self.dist, self.parent) if type(self).result is LevelLoop.result else None


class BFSTechnique:
    """A registered technique. Subclasses set the class attributes and implement `start`."""

    technique: ClassVar[Any]  # its Technique member
    Knobs: ClassVar[type[KnobSet]] = NoKnobs
    extras: ClassVar[tuple[Extra, ...]] = ()
    runtimes: ClassVar[frozenset] = frozenset({"gpu", "simulator"})
    #: Knob values that keep a simulator run to seconds (every CUDA thread is a Python thread);
    #: applied where the user did not set the knob, and said so.
    simulator_knobs: ClassVar[dict] = {}
    #: Knob settings the conformance suite runs besides the defaults and each knob's extremes.
    test_knobs: ClassVar[tuple[dict, ...]] = ()
    #: Kernel kinds and directions its records may show.
    kernel_kinds: ClassVar[tuple[Kernel, ...]] = (Kernel.MULTI_BLOCK,)
    directions: ClassVar[tuple[Direction, ...]] = (Direction.TOP_DOWN,)
    #: What a class should notice when stepping through it (the Classroom, explorer/ui/classroom.py);
    #: empty: the first sentence of its Technique member's doc and its "wins"/"loses" sentences.
    classroom_note: ClassVar[str] = ""
    #: Knob settings chosen per graph, by name: preset(graph, knobs) -> knobs (BFS-4K's §7 advice).
    #: The warm-up runs each on its graphs.
    presets: ClassVar[dict] = {}

    @property
    def name(self) -> str:
        return self.technique.value

    def creates_duplicates(self, knobs: KnobSet) -> bool:
        """Whether a frontier may hold a vertex twice with these knobs (then frontier_in may exceed
        the level's size)."""
        return False

    def check(self, graph, knobs: KnobSet, limits) -> None:
        """Refuse, before anything runs, what this device cannot do with these knobs (KnobError)."""

    def kernel_signatures(self, knobs: KnobSet, instrument: bool) -> list:
        """(name, kernel, argument types) of the kernels a run with these knobs may launch (all of
        those the graph chooses among), known before the graph is (kernels.args.signature reads
        the types off a kernel's annotations): what explorer.warmup compiles ahead of a run, in
        helper processes, while the graph loads; the run waits only for those it launches.
        Slowest first. Empty (the default): the run compiles its kernels itself, before its clock
        starts."""
        return []

    def start(self, ctx: RunContext) -> LevelLoop:
        raise NotImplementedError


def cycle_weights(ends, clock_start, clock_end) -> np.ndarray:
    """Each level's cycles in a launch that ran several (a Batch's weights): the SM's cycle counter
    (kernels.primitives.clock64) as the launch started, as each level ended and as it ended. The
    first level also gets the launch's set-up, the last its exit."""
    bounds = np.concatenate([[clock_start], np.asarray(ends, np.int64)])
    cycles = np.diff(bounds).astype(np.float64)
    cycles[-1] += float(clock_end - bounds[-1])
    return np.maximum(cycles, 0.0)


def measured(instrument: bool, value) -> int | None:
    """A count as the record shows it: None when the run did not measure it."""
    return int(value) if instrument else None


__all__ = ["BFSTechnique", "Batch", "LevelLoop", "RunContext", "cycle_weights", "measured"]
