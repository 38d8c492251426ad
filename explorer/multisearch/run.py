"""run_many (the thin API: it checks and converts every input before anything runs) and
MultiSearchRun, which runs the batches and streams their progress.

A run is planned (plan.py, by the method) into batches; each batch is run in steps by its method
(methods/), and every step goes through the engine's `Enactor`, as a single-source BFS's levels
do: compiled before its timed window, timed by the runtime's clock (CUDA events on a GPU),
measured by the energy meter, its results read back:

  search per block (warp-thread, warp-based, work-efficient, edge-parallel): a step launches a
      share of the batch's searches (blocks take them one by one, Algorithm 1) and reads back
      their statistics: one record per step with the searches it finished;
  MS-BFS (bit-parallel): the set-up, then a step per level (push or pull, then the level's
      counts read back): one record per level.

As with single-source runs, the clock stops while the caller holds a record, and the time the
caller spends is neither GPU time nor energy.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

import numpy as np

from .. import backend
from ..device import blocks_for
from ..engine import Session
from ..engine.enactor import Enactor, WalkedOnce
from ..engine.launcher import compile_status
from ..engine.runtime import STEP_LOCK, DeviceLimits, for_technique
from ..engine.session import run_pool, session_or_own
from ..graphs import CSRGraph, GraphError, Vertices
from . import apps as _apps
from .apps import Application, FinishContext
from .choose import DEFAULT, MethodChoice, choose_method, is_auto
from .energy import EnergyMeter, pci_bus_id
from .methods import implementation
from .methods.base import BatchLoop, ManyContext, Settings, Step
from .plan import BatchPlan, free_device_memory
from .records import BatchStats, MultiSearchResult, Progress, SearchTable
from .threshold import ThresholdChoice, parse_T

#: MS-BFS: heavy vertices get a warp per chunk of arcs (kernels.multisearch.BP_HEAVY, BP_CHUNK).
BIT_HEAVY, BIT_CHUNK = 128, 512
DIRECTIONS = ("auto", "push", "pull")


def resolve_sources(graph: CSRGraph, sources, seed: int = 0) -> np.ndarray:
    """The sources as vertices 0..n-1 (int32), the one conversion of run_many's sources on the way
    in: "all" (every vertex), an int k (k distinct vertices sampled at random, seeded, sorted), a
    sequence of vertex ids, the graph's own ids as run_bfs takes them (a file's ids where its
    loader kept them; repeats allowed: each is its own search), or `Vertices(vs)` (vertices
    0..n-1 themselves, for code that holds them)."""
    n = graph.num_vertices
    if isinstance(sources, str):
        if sources.strip().lower() != "all":
            raise ValueError(f"sources={sources!r} is invalid: 'all', a number of sources to sample, "
                             "or a list of vertex ids")
        if n == 0:
            raise ValueError(f"graph {graph.name!r} has no vertices: there is no source")
        return np.arange(n, dtype=np.int32)
    if isinstance(sources, (int, np.integer)) and not isinstance(sources, (bool, np.bool_)):
        if not 1 <= sources <= n:
            raise ValueError(f"sources={int(sources)} is invalid: sample between 1 and {n:,} sources "
                             f"(graph {graph.name!r} has {n:,} vertices)")
        rng = np.random.default_rng(seed)
        return np.sort(rng.choice(n, int(sources), replace=False)).astype(np.int32)
    vertices = isinstance(sources, Vertices)
    try:
        arr = sources.vertices if vertices else np.asarray(sources)
    except Exception as err:  # a generator of non-numbers and the like
        raise ValueError(f"sources={sources!r} is invalid: {err}") from None
    if arr.ndim != 1 or arr.size == 0 or not (np.issubdtype(arr.dtype, np.integer) and arr.dtype != np.bool_):
        raise ValueError(f"sources must be 'all', a count, a non-empty list of vertex ids or Vertices, not {sources!r}")
    if vertices or graph.original_ids is None:
        bad = arr[(arr < 0) | (arr >= n)]
        if bad.size:
            raise ValueError(f"source vertex {int(bad[0])} is out of range: graph {graph.name!r} has vertices "
                             f"0..{n - 1}")
        return arr.astype(np.int32)
    try:
        return graph.to_dense_many(arr).astype(np.int32)
    except GraphError as err:
        raise ValueError(f"source {err}") from None


def run_many(graph: CSRGraph, sources="all", application="closeness", *, method="warp-thread", T=None,
             k: int | None = None, session: Session | None = None,
             on_progress: Callable[[Progress], None] | None = None, on_status: Callable[[str], None] | None = None,
             seed: int = 0, block_threads: int | None = None, slots: int | None = None, word_bits: int = 64,
             direction: str = "auto", heavy: int = BIT_HEAVY, chunk: int = BIT_CHUNK, steps: int | None = None,
             limits: DeviceLimits | None = None, client=None, chunks: int | None = None) -> "MultiSearchRun":
    """Prepare k breadth-first searches at once; iterate the returned run for Progress records
    (or call .complete()), then read run.result (values, a SearchStats per search, a BatchStats
    per batch with its energy). Every input is checked here, before anything runs.

    sources: "all", an int (that many distinct vertices sampled at random, `seed`) or vertex ids
    (the graph's own ids, as run_bfs takes them). The result's sources and values are indexed by
    vertex 0..n-1 (graph.original_ids gives each one's own id).
    application: a name of explorer.multisearch.APPLICATIONS or an Application.
    method: a Method value ("hybrid", its former name, still works, with a FutureWarning), or "auto":
    each method that can run the application timed on a sample of the sources on this GPU (then on
    twice as many while cheap, up to all), the fastest per search chosen and kept with the graph
    (explorer.multisearch.choose; run.method_choice says what and why; under the simulator,
    warp-thread untimed);
    T: the warp-thread hybrid's threshold (None: 16, an int, math.inf or "auto").
    k: the most searches in one batch (None: what free device memory holds; run.plan says it).
    session: keeps the graph's device arrays and buffers between runs.
    on_progress(Progress): called for every record as well. steps: progress steps per batch.
    block_threads (a multiple of 32), slots (searches side by side): the search-per-block methods.
    word_bits (32/64), direction ("auto", "push", "pull"), heavy, chunk: MS-BFS (bit-parallel).

    An Application's device callbacks, s being the kernels.multisearch.Search (row, source, slot,
    dist, offsets, indices) and data its arrays by name:
        init(s, v, data)                            every vertex, before the search, block-parallel
        prior(s, level, data)                       one thread, before each level
        visit_vertex(s, v, w, level, dist_w, data)  every arc out of the level, block-parallel
        post(s, level, found, data)                 one thread, after each level
        finalize(s, v, dist_v, data)                reached vertices, deepest level first
    Races to guard against: w's state in visit_vertex (several threads reach w: atomics), arrays
    indexed by vertex only (every block writes them: atomics, or a "slot-sum" array), per-slot
    arrays (the block's next search inherits them: reset them in init), s.dist (read only).
    explorer.multisearch's documentation has the details and an example.

    client: a distributed.Client or explorer.scale_out.GPUCluster: the sources split into `chunks` equal
    parts (default: scale_out.default_chunks) run on its workers (a GPU each), merged as one GPU's batches; the run
    then streams one Progress record per finished part (explorer.scale_out)."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}: open a Session for this graph")
    app = _apps.application(application)
    auto = is_auto(method)
    if auto and T is not None:
        raise ValueError(f"T={T!r} is the warp-thread method's: method='auto' chooses the method; name it to set T")
    if auto and client is not None:
        raise ValueError("method='auto' times the methods on this process's GPU: over a client= name the method "
                         "(run_many(..., method='auto') here first says which)")
    impl = implementation(DEFAULT if auto else method)
    srcs = resolve_sources(graph, sources, seed)
    app.check(graph, srcs)
    impl.check(app)
    T, choice = impl.threshold(parse_T(T), graph)
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"k={k!r} is invalid: the most searches in one batch, an int >= 1 (None: as many as fit)")
    if word_bits not in (32, 64):
        raise ValueError(f"word_bits={word_bits!r} is invalid: 32 or 64 searches per machine word")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction={direction!r} is invalid: one of {', '.join(DIRECTIONS)}")
    for name, v, what in (("heavy", heavy, "a number of arcs"), ("chunk", chunk, "a number of arcs"),
                          ("steps", 1 if steps is None else steps, "progress steps per batch")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r} is invalid: {what}, an int >= 1")
    if slots is not None and (isinstance(slots, bool) or not isinstance(slots, (int, np.integer)) or slots < 1):
        raise ValueError(f"slots={slots!r} is invalid: the searches run side by side, an int >= 1")
    if chunks is not None and client is None:
        raise ValueError("chunks= splits the sources over the workers of a client=: give client= too")
    if client is not None:
        from ..scale_out import DistributedManyRun, check_client

        if session is not None or limits is not None:
            raise ValueError("session= and limits= are this process's GPU: a run over a client= uses its workers'")
        options = dict(method=method, T=T, k=k, seed=seed, block_threads=block_threads, slots=slots,
                       word_bits=word_bits, direction=direction, heavy=heavy, chunk=chunk, steps=steps)
        return DistributedManyRun(check_client(client), graph, srcs, app, options, chunks, on_progress,
                                  run_many=run_many, concat=_concat)
    backend.check_graph_size(graph.num_arcs)
    rt = for_technique(frozenset({"gpu", "simulator"})).with_limits(limits)
    threads = block_threads or (32 if rt.kind == "simulator" else 256)
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"block_threads={block_threads!r} is invalid: a multiple of 32 from 32 to 1024")
    lim = rt.limits
    resident = 2 if rt.kind == "simulator" else lim.sm_count * max(1, lim.max_threads_per_sm // threads)
    method_choice = None
    if auto:
        with session_or_own(session, graph) as trials:  # one upload of the graph for every method's trial

            def trial(m, sample):
                return run_many(graph, Vertices(sample), app, method=m, k=k, session=trials, seed=seed,
                                block_threads=block_threads, slots=slots, word_bits=word_bits, direction=direction,
                                heavy=heavy, chunk=chunk, limits=limits).complete()

            method_choice = choose_method(graph, srcs, app, simulator=rt.kind == "simulator", resident=resident,
                                          run=trial)
        impl = implementation(method_choice.method)
        T, choice = impl.threshold(None, graph)
    free, note = free_device_memory(rt)
    plan = impl.plan(graph, len(srcs), app, resident_slots=resident, free=free, memory_note=note, k=k,
                     word_bits=word_bits, slots=slots)
    settings = Settings(T=T, threads=int(threads), word_bits=word_bits, direction=direction, heavy=int(heavy),
                        chunk=int(chunk), steps=steps)
    return MultiSearchRun(graph, srcs, app, impl, plan, rt, settings, session=session, threshold=choice,
                          on_progress=on_progress, on_status=on_status, method_choice=method_choice)


class MultiSearchRun(WalkedOnce[Progress, MultiSearchResult]):
    """An iterable multi-search: iterate for Progress records; `result` once it is exhausted."""

    _what, _again = "the multi-search", "run_many"

    def __init__(self, graph, sources, app: Application, impl, plan: BatchPlan, runtime, settings: Settings, *,
                 session, threshold: ThresholdChoice | None, on_progress, on_status,
                 method_choice: MethodChoice | None = None):
        self.graph, self.sources, self.app, self.plan = graph, sources, app, plan
        self.method_choice = method_choice  # method "auto": what it chose and why
        self.impl, self.method = impl, impl.method
        self.runtime, self.session, self.settings = runtime, session, settings
        self.T, self.threshold = settings.T, threshold
        self._progress = on_progress or (lambda p: None)
        self._status = on_status or (lambda msg: None)

    def describe(self) -> str:
        return self.plan.describe()

    def _compiling(self, name: str, outcome: str | None = None) -> None:
        self._status(compile_status(name, outcome, "first use of this callback set in this process"))

    def _emit(self, rec: Progress, ms: float) -> tuple:
        self._progress(rec)
        return (rec,)

    def _walk(self) -> Iterator[Progress]:
        rt, g, app = self.runtime, self.graph, self.app
        meter = EnergyMeter(rt.kind, pci_bus_id() if rt.kind == "gpu" else None)
        with run_pool(self.session, g, rt, self._status) as (session, pool):
            with STEP_LOCK:  # set-up: the run's arrays, the first batch's buffers; untimed
                n = g.num_vertices
                lead = {"slot": (self.plan.slots,), "slot-sum": (self.plan.slots,), "run": ()}
                arrays = {a.name: pool.buffer(f"ms.{a.scope}.{a.name}", lead[a.scope] + a.row_shape(n), a.dtype)
                          for a in app.arrays if a.scope in lead}
                ctx = ManyContext(graph=g, sources=self.sources, app=app, plan=self.plan, settings=self.settings,
                                  runtime=rt, pool=pool, session=session, graph_arrays=session.graph_arrays(rt),
                                  arrays=arrays, zero_run=[arrays[a.name] for a in app.arrays
                                                           if a.scope in ("run", "slot-sum")])
                loop = BatchSteps(self.impl, ctx, meter)
            try:
                yield from Enactor(rt, self._compiling, meter).run(loop, self._emit)
            finally:
                meter.close()  # its sampling thread
            with STEP_LOCK:
                values = {name: _concat(parts) for name, parts in loop.per_search.items()}
                for a in app.arrays:
                    if a.scope == "slot-sum":  # summed on the device: a row back, not a row a block
                        from kernels.common import sum_rows

                        total = pool.buffer(f"ms.total.{a.name}", a.row_shape(n), a.dtype)
                        rt.launch_now(self._compiling, sum_rows, min(blocks_for(total.size, 256), 4096), 256, 0,
                                      arrays[a.name], total)
                        values[a.name] = rt.to_host(total)
                    elif a.scope == "run":
                        values[a.name] = rt.to_host(arrays[a.name])
        self.raw = dict(values)  # before finish: what explorer.scale_out merges across workers
        searches = SearchTable.concat(loop.searches)
        levels = searches.column("levels")
        all_sources = len(self.sources) == n and np.array_equal(np.sort(self.sources), np.arange(n))
        fctx = FinishContext(graph=g, sources=self.sources, levels=levels, all_sources=bool(all_sources))
        self._result = MultiSearchResult(
            graph=g.name, application=app.name, method=self.method.value, sources=self.sources,
            values=app.finish(values, fctx), searches=searches, batches=loop.batches, plan=self.plan, T=self.T,
            threshold=self.threshold, device=rt.device_dict(rt.limits), energy_note=meter.note,
            per_vertex=app.per_vertex, per_search=app.per_search, original_ids=g.original_ids,
            method_choice=self.method_choice)


class BatchSteps:
    """The run's steps as the enactor walks them: every batch's steps, one batch after another.
    Each step's `Step` becomes a Progress record (counts cumulative over the run); a batch's last
    step also gives its values, its searches and its BatchStats with the energy of its steps."""

    compiled_ahead = False  # every step is prepared: a batch's first step may compile its kernel

    def __init__(self, impl, ctx: ManyContext, meter: EnergyMeter):
        self.impl, self.ctx, self.meter = impl, ctx, meter
        self.per_search: dict = {a.name: [] for a in ctx.app.arrays if a.scope == "search"}
        self.searches: list[SearchTable] = []  # a table a batch
        self.batches: list[BatchStats] = []
        self.step = self.done = self.visited = self.edges = 0
        self.elapsed = 0.0
        self.b = 0
        self._start()

    def _start(self) -> None:
        lo, hi = self.ctx.plan.batches[self.b]
        self.batch: BatchLoop = self.impl.start_batch(self.ctx, self.b, lo, hi)
        self.batch_ms = 0.0

    @property
    def converged(self) -> bool:
        return self.b == len(self.ctx.plan.batches)

    @property
    def readback(self):
        return self.batch.readback

    def launch(self, go) -> None:
        self.batch.launch(go)

    def collect(self, ms: float) -> Progress:
        s: Step = self.batch.collect(ms)
        self.step += 1
        self.elapsed += ms
        self.batch_ms += ms
        self.done += s.done
        self.visited += s.visited
        self.edges += s.edges
        plan = self.ctx.plan
        rec = Progress(step=self.step - 1, batch=self.b, batches=len(plan.batches), searches_done=self.done,
                       searches_total=len(self.ctx.sources), visited=self.visited, edges_examined=self.edges,
                       time_ms=ms, elapsed_ms=self.elapsed, searches=s.searches, level=s.level, direction=s.direction)
        if self.batch.converged:
            values, stats = self.batch.finish()
            for name in self.per_search:
                self.per_search[name].append(values[name])
            self.searches.append(stats)
            reading = self.meter.take()
            lo, hi = plan.batches[self.b]
            bs = BatchStats(self.b, hi - lo, self.batch_ms, None if reading is None else reading.joules,
                            None if reading is None else reading.watts, self.meter.note,
                            0.0 if reading is None else reading.seconds)
            self.batches.append(bs)
            rec = dataclasses.replace(rec, batch_done=bs)
            self.b += 1
            if not self.converged:
                self._start()
        return rec


def _concat(parts: list) -> np.ndarray:
    """Batches' per-search rows, one after another; 2-D rows of different widths (MS-BFS hop
    counts end where each batch ends) are padded with zeros."""
    if not parts:
        return np.zeros(0)
    if parts[0].ndim == 2 and len({p.shape[1] for p in parts}) > 1:
        width = max(p.shape[1] for p in parts)
        parts = [np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p in parts]
    return np.concatenate(parts)
