"""run_many (the thin API: it checks and converts every input before anything runs) and
MultiSearchRun, which runs the batches and streams their progress.

A run is planned (plan.py) into batches; each batch is run in steps, each timed by the runtime's
clock (CUDA events on a GPU) and measured by the energy meter:

  search per block (hybrid, warp-based, work-efficient, edge-parallel): a step launches a share
      of the batch's searches (blocks take them one by one, Algorithm 1) and reads back their
      statistics: one record per step with the searches it finished;
  MS-BFS (bit-parallel): the set-up, then a step per level (push or pull, then the level's
      counts read back): one record per level.

As with single-source runs, the clock stops while the caller holds a record, and the time the
caller spends is neither GPU time nor energy.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np

from .. import backend
from ..engine import Session
from ..engine.launcher import compile_status
from ..engine.runtime import DeviceLimits, for_technique
from ..graphs import CSRGraph, GraphError
from ..stats import Direction
from . import apps as _apps
from .apps import Application, FinishContext
from .energy import EnergyMeter, pci_bus_id
from .methods import T_DEFAULT, T_INFINITE, Method, ThresholdChoice, choose_threshold, parse_T
from .plan import BatchPlan, free_device_memory, per_search_rows, plan_batches, words_for
from .records import BatchStats, MultiSearchResult, Progress, SearchStats

#: Progress steps a batch of searches (search per block) is launched in, at most.
STEPS_PER_BATCH = 8
#: MS-BFS goes bottom-up when a top-down step would read more than 1/ALPHA of what a bottom-up
#: step reads at most (Beamer et al.'s alpha = 14; the bottom-up step stops early, so it reads less).
ALPHA = 14.0
#: MS-BFS: heavy vertices get a warp per chunk of arcs (kernels.multisearch.BP_HEAVY, BP_CHUNK).
BIT_HEAVY, BIT_CHUNK = 128, 512
DIRECTIONS = ("auto", "push", "pull")


def resolve_sources(graph: CSRGraph, sources, seed: int = 0) -> np.ndarray:
    """The sources as vertices 0..n-1 (int32), the one conversion of run_many's sources on the way
    in: "all" (every vertex), an int k (k distinct vertices sampled at random, seeded, sorted), a
    sequence of vertex ids, the graph's own ids as run_bfs takes them (a file's ids where its
    loader kept them; repeats allowed: each is its own search), or `Vertices(vs)` (vertices
    0..n-1 themselves, for code that holds them)."""
    from ..graphs import Vertices

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


def run_many(graph: CSRGraph, sources="all", application="closeness", *, method="hybrid", T=None,
             k: int | None = None, session: Session | None = None,
             on_progress: Callable[[Progress], None] | None = None, on_status: Callable[[str], None] | None = None,
             seed: int = 0, block_threads: int | None = None, slots: int | None = None, word_bits: int = 64,
             direction: str = "auto", heavy: int = BIT_HEAVY, chunk: int = BIT_CHUNK, steps: int | None = None,
             limits: DeviceLimits | None = None) -> "MultiSearchRun":
    """Prepare k breadth-first searches at once; iterate the returned run for Progress records
    (or call .complete()), then read run.result (values, a SearchStats per search, a BatchStats
    per batch with its energy). Every input is checked here, before anything runs.

    sources: "all", an int (that many distinct vertices sampled at random, `seed`) or vertex ids
    (the graph's own ids, as run_bfs takes them). The result's sources and values are indexed by
    vertex 0..n-1 (graph.original_ids gives each one's own id).
    application: a name of explorer.multisearch.APPLICATIONS or an Application.
    method: a Method value; T: the hybrid's threshold (None: 16, an int, math.inf or "auto").
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
    explorer.multisearch's documentation has the details and an example."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}: open a Session for this graph")
    app = _apps.application(application)
    method = Method.parse(method)
    srcs = resolve_sources(graph, sources, seed)
    app.check(graph, srcs)
    if method is Method.BIT_PARALLEL and not app.bit_parallel:
        raise ValueError(f"application {app.name!r} cannot run bit-parallel: MS-BFS counts hop distances only "
                         "(no callbacks, no shortest-path counts); use method 'hybrid'")
    warp_q, thread_q, T, choice = _queues(method, parse_T(T), graph)
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
    backend.check_graph_size(graph.num_arcs)
    rt = for_technique(frozenset({"gpu", "simulator"})).with_limits(limits)
    threads = block_threads or (32 if rt.kind == "simulator" else 256)
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"block_threads={block_threads!r} is invalid: a multiple of 32 from 32 to 1024")
    lim = rt.limits
    resident = 2 if rt.kind == "simulator" else lim.sm_count * max(1, lim.max_threads_per_sm // threads)
    free, note = free_device_memory(rt)
    plan = plan_batches(graph, len(srcs), app, method, resident_slots=resident, free=free, memory_note=note,
                        k=k, word_bits=word_bits, slots=slots)
    return MultiSearchRun(graph, srcs, app, method, plan, rt, session=session, T=T, threshold=choice,
                          queues=(warp_q, thread_q), threads=int(threads), word_bits=word_bits,
                          direction=direction, heavy=int(heavy), chunk=int(chunk), steps=steps,
                          on_progress=on_progress, on_status=on_status)


def _queues(method: Method, T, graph) -> tuple:
    """(warp queue, thread queue, T, ThresholdChoice or None) for a method and the T asked for."""
    if method is Method.HYBRID:
        choice = choose_threshold(graph) if T == "auto" else None
        t = choice.T if choice else (T_DEFAULT if T is None else T)
        return t != T_INFINITE, t != 0, t, choice
    fixed = {Method.WARP: 0, Method.WORK_EFFICIENT: T_INFINITE}.get(method)
    if T is not None and T != fixed:
        what = f"T = {'∞' if fixed == T_INFINITE else fixed}" if fixed is not None else "no T"
        raise ValueError(f"T={T!r} does not apply to method {method.value!r} (it has {what}): "
                         "choose T with method 'hybrid'")
    return fixed == 0, fixed == T_INFINITE, fixed, None


def _cycles_per_ms(rt) -> float:
    if rt.kind == "simulator":
        return 1e6  # kernels.primitives.clock64 reads the host's nanosecond clock there
    from numba import cuda

    return float(cuda.get_current_device().CLOCK_RATE)  # kHz: cycles per millisecond


class MultiSearchRun:
    """An iterable multi-search: iterate for Progress records; `result` once it is exhausted."""

    def __init__(self, graph, sources, app: Application, method: Method, plan: BatchPlan, runtime, *,
                 session, T, threshold: ThresholdChoice | None, queues, threads, word_bits, direction,
                 heavy, chunk, steps, on_progress, on_status):
        self.graph, self.sources, self.app, self.method, self.plan = graph, sources, app, method, plan
        self.runtime, self.session = runtime, session
        self.T, self.threshold, self.queues, self.threads = T, threshold, queues, threads
        self.word_bits, self.direction, self.heavy, self.chunk = word_bits, direction, heavy, chunk
        self.steps = steps
        self._progress = on_progress or (lambda p: None)
        self._status = on_status or (lambda msg: None)
        self._result: MultiSearchResult | None = None
        self._started = False

    @property
    def result(self) -> MultiSearchResult:
        if self._result is None:
            raise RuntimeError("the multi-search has not finished: iterate over the run (or call complete()) first")
        return self._result

    def complete(self) -> MultiSearchResult:
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator[Progress]:
        if self._started:
            raise RuntimeError("a MultiSearchRun can be iterated once; call run_many again for another run")
        self._started = True
        return self._steps()

    # ------------------------------------------------------------------ the run
    def _compiling(self, name: str, outcome: str | None = None) -> None:
        self._status(compile_status(name, outcome, "first use of this callback set in this process"))

    def _steps(self) -> Iterator[Progress]:
        rt, g = self.runtime, self.graph
        own = self.session is None
        session = Session(g, self._status) if own else self.session
        pool = session.acquire(rt)
        self._pool, self._session = pool, session
        self._clock, self._go = rt.clock(), rt.launcher
        self._meter = EnergyMeter(rt.kind, pci_bus_id() if rt.kind == "gpu" else None)
        self._step = self._done = self._visited = self._edges = 0
        self._elapsed = 0.0
        per_search: dict = {a.name: [] for a in self.app.arrays if a.scope == "search"}
        searches: list[SearchStats] = []
        batches: list[BatchStats] = []
        try:
            self._graph_arrays = session.graph_arrays(rt)
            self._run_arrays = {a.name: pool.buffer(f"ms.{a.scope}.{a.name}", self._shape(a), a.dtype)
                                for a in self.app.arrays if a.scope in ("run", "slot-sum", "slot")}
            self._zero_run = [self._run_arrays[a.name] for a in self.app.arrays if a.scope in ("run", "slot-sum")]
            for b, (lo, hi) in enumerate(self.plan.batches):
                batch = self._bit_batch if self.method is Method.BIT_PARALLEL else self._search_batch
                for rec, out in batch(b, lo, hi):
                    if out is not None:  # the batch's last step: its values and searches
                        values, stats = out
                        for name in per_search:
                            per_search[name].append(values[name])
                        searches.extend(stats)
                        reading = self._meter.take()
                        ms = sum(r for r in self._batch_ms)
                        bs = BatchStats(b, hi - lo, ms, None if reading is None else reading.joules,
                                        None if reading is None else reading.watts, self._meter.note,
                                        0.0 if reading is None else reading.seconds)
                        batches.append(bs)
                        rec = _replace(rec, batch_done=bs)
                    self._progress(rec)
                    held = time.perf_counter()
                    yield rec
                    self._clock.hold(time.perf_counter() - held)
            values = {name: _concat(parts) for name, parts in per_search.items()}
            for a in self.app.arrays:
                if a.scope in ("run", "slot-sum"):
                    host = rt.to_host(self._run_arrays[a.name])
                    values[a.name] = host.sum(axis=0) if a.scope == "slot-sum" else host
        finally:
            session.release(pool)
            if own:
                session.close()
        levels = np.array([s.levels for s in searches], dtype=np.int64)
        n = g.num_vertices
        all_sources = len(self.sources) == n and np.array_equal(np.sort(self.sources), np.arange(n))
        ctx = FinishContext(graph=g, sources=self.sources, levels=levels, all_sources=bool(all_sources))
        self._result = MultiSearchResult(
            graph=g.name, application=self.app.name, method=self.method.value, sources=self.sources,
            values=self.app.finish(values, ctx), searches=searches, batches=batches, plan=self.plan, T=self.T,
            threshold=self.threshold, device=rt.device_dict(rt.limits), energy_note=self._meter.note,
            per_vertex=self.app.per_vertex, per_search=self.app.per_search)

    def _shape(self, a) -> tuple:
        n = self.graph.num_vertices
        rows = {"search": per_search_rows(self.plan), "slot": self.plan.slots, "slot-sum": self.plan.slots,
                "run": None}[a.scope]
        return a.row_shape(n) if rows is None else (rows,) + a.row_shape(n)

    def _timed(self, launch, readback) -> float:
        """Run one step: compile first (untimed), then time it and measure its energy."""
        rt, go = self.runtime, self._go
        rt.prepare(launch, self._compiling)
        self._meter.begin()
        self._clock.start(go)
        launch(go)
        self._clock.stop(go)
        rt.read(*readback)
        self._meter.end()
        ms = self._clock.step_ms()
        self._batch_ms.append(ms)
        self._elapsed += ms
        self._step += 1
        return ms

    def _record(self, b, ms, done, visited, edges, finished=(), **kw) -> Progress:
        self._done += done
        self._visited += visited
        self._edges += edges
        return Progress(step=self._step - 1, batch=b, batches=len(self.plan.batches), searches_done=self._done,
                        searches_total=len(self.sources), visited=self._visited, edges_examined=self._edges,
                        time_ms=ms, elapsed_ms=self._elapsed, searches=tuple(finished), **kw)

    # ------------------------------------------------------------------ search per block
    def _search_batch(self, b: int, lo: int, hi: int):
        from kernels import multisearch as km

        rt, pool, g, plan = self.runtime, self._pool, self.graph, self.plan
        self._batch_ms = []
        n, rows, slots, threads = g.num_vertices, hi - lo, plan.slots, self.threads
        offsets, indices = self._graph_arrays
        src = rt.to_device(self.sources[lo:hi])
        arrays = dict(self._run_arrays)
        fresh = [pool.buffer(f"ms.search.{a.name}", self._shape(a), a.dtype)
                 for a in self.app.arrays if a.scope == "search"]
        arrays.update({a.name: arr for a, arr in zip((a for a in self.app.arrays if a.scope == "search"), fresh)})
        if b == 0:
            fresh += self._zero_run
        data = self.app.data(arrays)
        R = per_search_rows(plan)
        stats = pool.buffer("ms.stats", (R, km.NUM_STATS), np.int64)
        stats_host = pool.buffer("ms.stats", (R, km.NUM_STATS), np.int64, host=True)
        dist = pool.buffer("ms.dist", (slots, n), np.int32)
        counter = pool.buffer("ms.next", 1, np.int64)
        cb = self.app.callbacks()
        if self.method is Method.EDGE_PARALLEL:
            kernel = km.edge_kernel(cb)
            (arc_source,) = self._session.derived("multisearch.arc-sources", _arc_sources, rt)
        else:
            kernel = km.search_kernel(cb, *self.queues)
            order = pool.buffer("ms.order", (slots, n), np.int32)
        # At most STEPS_PER_BATCH steps, each launching at least a block per slot (a step whose
        # searches do not fill the GPU wastes it), unless the caller asked for `steps`.
        count = self.steps or max(1, min(STEPS_PER_BATCH, -(-rows // slots)))
        per_step = -(-rows // min(count, rows))
        cpm = _cycles_per_ms(rt)
        batch_stats: list[SearchStats] = []
        for c0 in range(0, rows, per_step):
            cnt = min(per_step, rows - c0)

            def launch(go, c0=c0, cnt=cnt, zero=tuple(fresh) if c0 == 0 else ()):
                for arr in zero:
                    go.zero(arr)
                go.zero(counter)
                if self.method is Method.EDGE_PARALLEL:
                    go(kernel, min(slots, cnt), threads, 0, offsets, indices, arc_source, src, c0, cnt, counter,
                       dist, stats, data)
                else:
                    go(kernel, min(slots, cnt), threads, 0, offsets, indices, src, c0, cnt, counter, dist, order,
                       stats, self.T, data)

            ms = self._timed(launch, (stats, stats_host))
            st = stats_host[c0:c0 + cnt]
            finished = [SearchStats(row=lo + c0 + i, source=int(self.sources[lo + c0 + i]), batch=b,
                                    levels=int(r[km.ST_LEVELS]), visited=int(r[km.ST_VISITED]),
                                    edges_examined=int(r[km.ST_EDGES]), time_ms=float(r[km.ST_CYCLES]) / cpm)
                        for i, r in enumerate(st)]
            batch_stats += finished
            rec = self._record(b, ms, cnt, int(st[:, km.ST_VISITED].sum()), int(st[:, km.ST_EDGES].sum()), finished)
            out = None
            if c0 + cnt == rows:
                values = {a.name: rt.to_host(arr)[:rows] for a, arr in
                          zip((a for a in self.app.arrays if a.scope == "search"), fresh)}
                out = (values, batch_stats)
            yield rec, out

    # ------------------------------------------------------------------ MS-BFS
    def _bit_batch(self, b: int, lo: int, hi: int):
        from kernels import common
        from kernels import multisearch as km

        rt, pool, g = self.runtime, self._pool, self.graph
        self._batch_ms = []
        n, rows, bits, threads = g.num_vertices, hi - lo, self.word_bits, self.threads
        W = words_for(rows, bits)
        wt = np.uint64 if bits == 64 else np.uint32
        bk = km.bit_kernels(bits)
        offsets, indices = self._graph_arrays
        if g.directed:
            in_offsets, in_indices = self._session.derived("multisearch.reverse-csr", _reverse_csr, rt)
        else:
            in_offsets, in_indices = offsets, indices
        items = {d: self._session.derived(f"multisearch.items.{d}.{self.heavy}.{self.chunk}",
                                          lambda gr, d=d: _heavy_items(gr, d == "in", self.heavy, self.chunk), rt)
                 for d in ("out", "in")}
        F, N, S = (pool.buffer(f"bp.{x}", n * W, wt) for x in "FNS")
        nout = km.BP_COUNTS + W * bits
        out = pool.buffer("bp.out", nout, np.int64)
        out_host = pool.buffer("bp.out", nout, np.int64, host=True)
        R = per_search_rows(self.plan)
        write_dist = self.app.needs_distances
        dist = pool.buffer("bp.dist", R * n, np.int32) if write_dist else pool.buffer("bp.nodist", 1, np.int32)
        dist2 = dist.reshape((R, n) if write_dist else (1, 1))
        pads = np.zeros(W, dtype=wt)
        for j in range(W):
            valid = min(max(rows - j * bits, 0), bits)
            pads[j] = wt(0) if valid == bits else ~wt((1 << valid) - 1)
        pads_dev, src = rt.to_device(pads), rt.to_device(self.sources[lo:hi])
        if rt.kind == "simulator":
            blocks = lambda work: 1  # noqa: E731  (every thread is a Python thread there)
        else:
            most = rt.limits.sm_count * max(1, rt.limits.max_threads_per_sm // threads)
            blocks = lambda work: max(1, min(most, -(-work // threads)))  # noqa: E731
        zero_run = list(self._zero_run) if b == 0 else []

        def setup(go):
            for arr in zero_run:
                go.zero(arr)
            go.zero(F)
            go.zero(out)
            if write_dist:
                go(common.fill_int32, blocks(R * n), threads, 0, dist, -1)
            go(bk.seed, blocks(n * W), threads, 0, S, pads_dev, W)
            go(bk.sources, blocks(rows), threads, 0, F, S, src, W, dist2, write_dist)

        ms = self._timed(setup, (out, out_host))
        deg_out = np.diff(g.offsets)
        push_cost, pull_cost = int(deg_out[self.sources[lo:hi]].sum()), None
        counts = [np.ones(rows, dtype=np.int64)]
        alive = np.ones(rows, dtype=bool)
        yield self._record(b, ms, 0, rows, 0, level=0), None
        level = 0
        while True:
            pull = self.direction == "pull" or (self.direction == "auto" and pull_cost is not None
                                                and push_cost * ALPHA > pull_cost)
            csr = (in_offsets, in_indices) if pull else (offsets, indices)
            iv, ib, ie = items["in" if pull else "out"]

            def step(go, level=level, pull=pull, csr=csr, iv=iv, ib=ib, ie=ie, F=F, N=N):
                go.zero(N)
                go.zero(out)
                light, heavy_k = (bk.pull_light, bk.pull_heavy) if pull else (bk.push_light, bk.push_heavy)
                go(light, blocks(n * W), threads, 0, csr[0], csr[1], F, S, N, W, self.heavy, out)
                if iv.shape[0]:
                    go(heavy_k, blocks(32 * iv.shape[0]), threads, 0, iv, ib, ie, csr[1], F, S, N, W, out)
                go(bk.finish, blocks(n * W), threads, 0, N, S, W, level + 1, out, dist2, write_dist, offsets,
                   in_offsets)

            ms = self._timed(step, (out, out_host))
            found = out_host[km.BP_COUNTS:km.BP_COUNTS + rows].copy()
            level += 1
            ended = alive & (found == 0)
            alive &= found > 0
            if found.any():
                counts.append(found)
            push_cost, pull_cost = int(out_host[km.BP_PUSH]), int(out_host[km.BP_PULL])
            F, N = N, F
            rec = self._record(b, ms, int(ended.sum()), int(found.sum()), int(out_host[km.BP_EDGES]), level=level,
                               direction=Direction.BOTTOM_UP if pull else Direction.TOP_DOWN)
            if out_host[km.BP_NEW] == 0:
                break
            yield rec, None
        C = np.stack(counts)
        dist_host = rt.to_host(dist)[:rows * n].reshape(rows, n) if write_dist else None
        seen = None
        if self.app.needs_seen:
            words = rt.to_host(S).reshape(n, W)
            seen = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :rows].T.astype(bool)
        values = self.app.from_levels(C, dist_host, seen, n)
        found = C > 0
        depth = C.shape[0] - np.argmax(found[::-1], axis=0)
        stats = [SearchStats(row=lo + i, source=int(self.sources[lo + i]), batch=b, levels=int(depth[i]),
                             visited=int(C[:, i].sum()), edges_examined=None, time_ms=None) for i in range(rows)]
        yield rec, (values, stats)


def _replace(rec: Progress, **changes) -> Progress:
    import dataclasses

    return dataclasses.replace(rec, **changes)


def _concat(parts: list) -> np.ndarray:
    """Batches' per-search rows, one after another; 2-D rows of different widths (MS-BFS hop
    counts end where each batch ends) are padded with zeros."""
    if not parts:
        return np.zeros(0)
    if parts[0].ndim == 2 and len({p.shape[1] for p in parts}) > 1:
        width = max(p.shape[1] for p in parts)
        parts = [np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p in parts]
    return np.concatenate(parts)


def _arc_sources(g) -> tuple:
    return (np.repeat(np.arange(g.num_vertices, dtype=np.int32), g.degrees()),)


def _reverse_csr(g) -> tuple:
    """(offsets, indices) of the reversed graph: the in-neighbours of every vertex."""
    n = g.num_vertices
    order = np.argsort(g.indices, kind="stable")
    src = np.repeat(np.arange(n, dtype=np.int32), g.degrees())
    counts = np.bincount(g.indices, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, src[order]


def _heavy_items(g, reverse: bool, heavy: int, chunk: int) -> tuple:
    """MS-BFS's heavy items: every vertex with >= `heavy` arcs (in-arcs when `reverse`) cut into
    chunks of `chunk` arcs: (vertex int32, first arc int64, end int64)."""
    offsets = _reverse_csr(g)[0] if reverse and g.directed else g.offsets
    deg = np.diff(offsets)
    big = np.flatnonzero(deg >= heavy)
    pieces = -(-deg[big] // chunk)
    vertex = np.repeat(big, pieces).astype(np.int32)
    first = np.repeat(offsets[big], pieces) + chunk * (np.arange(pieces.sum()) - np.repeat(np.cumsum(pieces) - pieces, pieces))
    end = np.minimum(first + chunk, np.repeat(offsets[big + 1], pieces))
    return vertex, first.astype(np.int64), end.astype(np.int64)
