"""What a multi-search method provides to the run, and what the run gives it.

A method (registered in `explorer.multisearch.methods`) is a `MultiSearchMethod`: the applications
it refuses (`check`), the threshold T it takes or has (`threshold`), how many searches fit on the
device at once (`plan`: a BatchPlan), and `start_batch(ctx, b, lo, hi)`, the untimed set-up of a
batch that returns a `BatchLoop`. The run (explorer.multisearch.run) walks the batches' steps
through the engine's `Enactor`: while a batch has not converged it times `launch(go)`, reads
`readback` back, and adds up what `collect(ms)` returns (a `Step`) into a Progress record; once
the batch has converged, `finish()` gives its per-search values and its searches' records. No
method writes a loop over steps, times anything or yields.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Sequence

from ...stats import Direction
from ..threshold import T_label

if TYPE_CHECKING:
    from ..records import SearchTable


@dataclass(frozen=True)
class Settings:
    """run_many's settings a method may read, checked before anything runs."""

    T: int | None  # the threshold of the searches' queues (None: the method has none)
    threads: int  # threads a block
    word_bits: int  # MS-BFS: searches a machine word (32 or 64)
    direction: str  # MS-BFS: "auto", "push" or "pull"
    heavy: int  # MS-BFS: arcs from which a vertex is cut into heavy items
    chunk: int  # MS-BFS: arcs an item
    steps: int | None  # progress steps a batch (None: the method's own)


@dataclass
class ManyContext:
    """Everything a method's batches may use; made by the run once."""

    graph: Any  # CSRGraph
    sources: Any  # int32[k]: every search's source, by row
    app: Any  # apps.Application
    plan: Any  # plan.BatchPlan
    settings: Settings
    runtime: Any  # engine.runtime.Runtime
    pool: Any  # engine.session.BufferPool: this run's buffers
    session: Any  # engine.session.Session: for arrays derived from the graph
    graph_arrays: tuple  # (offsets, indices) where the runtime reads them
    arrays: dict  # the application's run, slot-sum and slot arrays by name
    zero_run: list  # those zeroed by the first batch's first step (run and slot-sum scopes)
    search_arrays: dict = field(default_factory=dict)  # the per-search arrays by name, as batches ask

    def buffer(self, name: str, shape, dtype, host: bool = False):
        return self.pool.buffer(name, shape, dtype, host)

    def derived(self, name: str, build: Callable) -> tuple:
        """Arrays derived from the graph once a session (`build(graph)` -> tuple of numpy arrays)."""
        return self.session.derived(name, build, self.runtime)

    def group(self, name: str, value):
        """`value`, a namedtuple of kernel arguments, as the same object for every batch and run
        while its arrays are the same (BufferPool.group): launches then marshal it once."""
        return self.pool.group(name, value)


@dataclass(frozen=True)
class Step:
    """What one step of a batch did; the run adds it up into a Progress record."""

    done: int  # searches it finished
    visited: int  # (vertex, search) pairs it reached
    edges: int  # adjacency entries it inspected
    searches: Sequence = ()  # the searches it finished (records.SearchTable)
    level: int | None = None  # MS-BFS: the level it reached
    direction: Direction | None = None  # MS-BFS: top-down (push) or bottom-up (pull)


class BatchLoop:
    """A method's state during one batch. The run's enactor calls, while not `converged`:
    prepare launch(go) -> launch(go) [timed] -> read-back of `readback` -> collect(ms) -> Step;
    then `finish()`."""

    converged: bool = False
    #: (device array, host array) copied back after each step's kernels, or None.
    readback: tuple | None = None

    def launch(self, go) -> None:
        raise NotImplementedError

    def collect(self, ms: float) -> Step:
        raise NotImplementedError

    def finish(self) -> tuple[dict, SearchTable]:
        """(the batch's per-search values by array name, rows in source order; its searches, a
        records.SearchTable)."""
        raise NotImplementedError


class MultiSearchMethod:
    """A registered method. Subclasses set `method` and implement `plan` and `start_batch`."""

    method: ClassVar[Any]  # its Method member
    #: The threshold T the method has (warp-based 0, work-efficient infinity); None: it takes no T.
    fixed_T: ClassVar[int | None] = None

    @property
    def name(self) -> str:
        return self.method.value

    def check(self, app) -> None:
        """Refuse, before anything runs, an application this method cannot run (ValueError)."""

    def threshold(self, T, graph) -> tuple:
        """(T, ThresholdChoice or None) from the T asked for (threshold.parse_T's form): a method
        with a T of its own refuses any other."""
        fixed = self.fixed_T
        if T is not None and T != fixed:
            what = f"T = {T_label(fixed)}" if fixed is not None else "no T"
            raise ValueError(f"T={T!r} does not apply to method {self.name!r} (it has {what}): "
                             "choose T with method 'warp-thread'")
        return fixed, None

    def plan(self, graph, total: int, app, *, resident_slots: int, free: int, memory_note: str,
             k: int | None, word_bits: int, slots: int | None):
        """The plan.BatchPlan of `total` searches with `free` bytes of device memory."""
        raise NotImplementedError

    def start_batch(self, ctx: ManyContext, b: int, lo: int, hi: int) -> BatchLoop:
        """Batch b (rows lo..hi-1): its buffers and untimed set-up."""
        raise NotImplementedError


__all__ = ["BatchLoop", "ManyContext", "MultiSearchMethod", "Settings", "Step"]
