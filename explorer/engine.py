"""The BFS engine: owns the device buffers, the level loop and the timing; yields one record per level.

    run = run_bfs(graph, "max-degree", "topdown-queue")
    for level in run:          # LevelStats, as each level completes
        ...
    result = run.result        # RunResult: distances, parents, levels, time, GTEPS

Arguments are checked when `run_bfs` is called, before anything touches the GPU. The engine knows
nothing of widgets or plots; it reports what it is doing (compiling, copying the graph) through an
optional `on_status(str)` callback and the `explorer` logger.
"""
from __future__ import annotations

import dataclasses
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from . import backend
from .graphs import CSRGraph
from .launcher import Launcher, PlainLauncher
from .policy import DeviceLimits
from .stats import LevelStats, RunResult
from .techniques import Knobs, Technique

log = logging.getLogger("explorer")

STATS_THREADS = 256  # block size of BFS-4K's next-frontier statistics kernel


def resolve_source(graph: CSRGraph, source, seed: int = 0) -> int:
    """A vertex id, "max-degree" (first vertex of highest out-degree) or "random" (seeded, degree >= 1)."""
    n = graph.num_vertices
    if isinstance(source, str):
        key = source.strip().lower()
        if key.lstrip("-").isdigit():
            source = int(key)
        elif key == "max-degree":
            if n == 0:
                raise ValueError(f"graph {graph.name!r} has no vertices: there is no source to choose")
            return int(np.argmax(graph.degrees()))
        elif key == "random":
            candidates = np.flatnonzero(graph.degrees() >= 1)
            if len(candidates) == 0:
                raise ValueError(f"graph {graph.name!r} has no vertex of degree >= 1 to start a random BFS from")
            return int(np.random.default_rng(seed).choice(candidates))
        else:
            raise ValueError(f"source {source!r} is invalid: give a vertex id, 'max-degree' or 'random'")
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise ValueError(f"source {source!r} is invalid: give a vertex id, 'max-degree' or 'random'")
    if not 0 <= source < n:
        raise ValueError(f"source vertex {int(source)} is out of range: graph {graph.name!r} has vertices 0..{n - 1}")
    return int(source)


@dataclass
class _RunState:
    """Device buffers and events of one run (see BFSRun._setup)."""

    info: backend.BackendInfo
    graph: "_DeviceGraph"
    dist: object = None
    parent: object = None
    stamp: object = None  # level in which a vertex was last claimed: ground truth for duplicates
    stamp2: object = None  # same, after the filter: duplicates the filter missed
    queues: list = None
    capacity: int = 0
    level_out: object = None
    host_out: np.ndarray = None
    counters: object = None
    hist: object = None
    extra: dict = None
    pool: dict = None
    launcher: object = None  # Launcher on a GPU, PlainLauncher under the simulator
    start: object = None
    stop: object = None
    begin: object = None  # recorded as the first level starts: elapsed time starts here
    t_begin: float = 0.0


@dataclass
class _DeviceGraph:
    offsets: object
    indices: object
    buffers: dict = dataclasses.field(default_factory=dict)
    busy: bool = False  # a run is using `buffers`; a second, interleaved run gets its own

    def acquire(self) -> dict:
        if self.busy:
            return {}
        self.busy = True
        return self.buffers

    def release(self, pool: dict) -> None:
        if pool is self.buffers:
            self.busy = False


def _buffer(pool: dict, name: str, shape, dtype, host: bool = False):
    """A device (or pinned host) array from `pool`, kept there for the next run on the graph:
    allocating and freeing the frontier queues each run costs milliseconds on large graphs."""
    from numba import cuda

    key = (name, host)
    arr = pool.get(key)
    if arr is None or arr.shape != (shape if isinstance(shape, tuple) else (shape,)) or arr.dtype != dtype:
        arr = cuda.pinned_array(shape, dtype) if host else cuda.device_array(shape, dtype)
        pool[key] = arr
    return arr


def _view(pool: dict, name: str, base, lo: int, hi: int):
    """base[lo:hi], the same object in every run while `base` is: launches reuse marshalled arguments."""
    key = (name, "view")
    cached = pool.get(key)
    if cached is None or cached[0] is not base:
        cached = pool[key] = (base, base[lo:hi])
    return cached[1]


# Copying a graph to the GPU is the slow part of a short run: keep one copy per CSRGraph alive.
_device_graphs: "weakref.WeakKeyDictionary[CSRGraph, _DeviceGraph]" = weakref.WeakKeyDictionary()


def _to_device(graph: CSRGraph, status: Callable[[str], None]) -> _DeviceGraph:
    from numba import cuda

    dg = _device_graphs.get(graph)
    if dg is None:
        if graph.num_arcs > 5_000_000:
            status(f"copying {graph.name} ({graph.num_arcs:,} arcs) to the GPU")
        dg = _DeviceGraph(cuda.to_device(np.ascontiguousarray(graph.offsets, dtype=np.int64)),
                          cuda.to_device(np.ascontiguousarray(graph.indices, dtype=np.int32)))
        _device_graphs[graph] = dg
    return dg


def _level_shares(ends, clock_start, clock_end) -> np.ndarray:
    """Each level's share of a single-block launch that ran several: the block's cycle counter
    as the kernel started, as each level ended and as the kernel ended. The first level also
    gets the kernel's set-up (loading the visited flags), the last its exit (the final histogram)."""
    bounds = np.concatenate([[clock_start], np.asarray(ends, np.int64)])
    cycles = np.diff(bounds).astype(np.float64)
    cycles[-1] += float(clock_end - bounds[-1])
    return cycles / max(cycles.sum(), 1.0)


def _cluster_log(rows: np.ndarray, C: int, bfs4k) -> np.ndarray:
    """The cluster form's log (a row per block and level: level x C + rank) as the single block's,
    a row a level: counts summed over the blocks; the level's sizes, decisions and clock from
    block 0 (every block takes the same, but for the §5.1 binary scan: used if any block did)."""
    per = rows.reshape(-1, C, rows.shape[1])
    out = per[:, 0].copy()
    for f in (bfs4k.L_EDGES, bfs4k.L_GEN, bfs4k.L_DET, bfs4k.L_CONF, bfs4k.L_UNDET, bfs4k.L_COAL, bfs4k.L_EXT):
        out[:, f] = per[:, :, f].sum(axis=1)
    for f in (bfs4k.L_OVERFLOW, bfs4k.L_BINARY):
        out[:, f] = per[:, :, f].max(axis=1)
    out[:, bfs4k.L_FOUND] = out[:, bfs4k.L_NEXT] + out[:, bfs4k.L_DET]  # claims: kept + dropped
    return out


def _grid(n: int, block: int) -> int:
    return max(1, (n + block - 1) // block)


class BFSRun:
    """An iterable BFS: iterate for per-level records; `result` once it is exhausted."""

    def __init__(self, graph: CSRGraph, source: int, technique: Technique, knobs: Knobs,
                 instrument: bool, on_status: Callable[[str], None] | None, limits=None):
        self.graph = graph
        self.source = source
        self.technique = technique
        self.knobs = knobs
        self.instrument = instrument
        self._status = on_status or (lambda msg: None)
        self.limits = limits  # device constraints of BFS-4K's policy; None for other techniques
        self._state: _RunState | None = None
        self._result: RunResult | None = None
        self._started = False

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
        loops = {Technique.TOPDOWN_QUEUE: self._run_topdown_queue, Technique.BFS4K: self._run_bfs4k}
        return self._released(loops[self.technique]())  # Technique.parse admits only these

    def _released(self, levels: Iterator[LevelStats]) -> Iterator[LevelStats]:
        """Hand the graph's buffers back when the run ends, also when it is abandoned half-way."""
        try:
            yield from levels
        finally:
            if self._state is not None:
                self._state.graph.release(self._state.pool)

    # ---------------------------------------------------------------- shared set-up
    def _setup(self, queue_capacity: int, extra: dict | None = None):
        """Device state of one run: distances, parents, duplicate stamps, the two frontier queues,
        the small array read back each level (counters, then the next frontier's degree
        histogram) and a technique's `extra` buffers {name: (shape, dtype)}. Buffers are kept
        with the graph's device copy and reused by the next run on it, and all of them are ready
        before the run's clock starts."""
        from numba import cuda

        from kernels import common, rules

        n = self.graph.num_vertices
        info = backend.current()
        dg = _to_device(self.graph, self.status)
        st = _RunState(info=info, graph=dg)
        pool = st.pool = dg.acquire()
        st.dist = _buffer(pool, "dist", n, np.int32)
        st.parent = _buffer(pool, "parent", n, np.int32)
        st.stamp = _buffer(pool, "stamp", n, np.int32)
        st.stamp2 = _buffer(pool, "stamp2", n, np.int32)
        st.queues = [_buffer(pool, "queue_a", queue_capacity, np.int32),
                     _buffer(pool, "queue_b", queue_capacity, np.int32)]
        st.capacity = queue_capacity
        size = common.NUM_COUNTERS + 2 * rules.DEGREE_BINS
        st.level_out = _buffer(pool, "level_out", size, np.int64)
        st.host_out = np.zeros(size, np.int64) if info.is_simulator else _buffer(pool, "host_out", size, np.int64, True)
        st.extra = {name: _buffer(pool, name, shape, dtype) for name, (shape, dtype) in (extra or {}).items()}
        self._state = st
        st.counters = _view(pool, "counters", st.level_out, 0, common.NUM_COUNTERS)
        st.hist = _view(pool, "hist", st.level_out, common.NUM_COUNTERS, size)
        st.launcher = PlainLauncher() if info.is_simulator else Launcher.shared()
        for arr in (st.dist, st.parent, st.stamp, st.stamp2):
            self._launch(st, common.fill_int32, _grid(n, 256), 256, 0, arr, -1)
        self._launch(st, common.set_source, 1, 1, 0, st.dist, st.parent, st.queues[0], st.stamp, self.source)
        st.start, st.stop = cuda.event(), cuda.event()
        return st

    def _timed(self, st: "_RunState", launch) -> float:
        """Run `launch(go)`, read the level's counters back, return the GPU time in ms.

        `launch` issues its kernels as go(kernel, blocks, threads, shared_bytes, *args) and clears
        arrays with go.zero(array). On a GPU it is called twice: first to prepare the kernels not
        launched before (compile or load from the disk cache, saying so), then inside the timed
        window to launch. Compilation is never inside a level's window; BFS-4K prepares all its
        kernels before its first level, so none is inside the run's elapsed time either.
        """
        from numba import cuda

        go = st.launcher
        if not st.info.is_simulator:
            launch(go.preparing(self._compiling))
        t0 = time.perf_counter()
        go.record(st.start)
        if st.begin is None:  # the run's clock starts with its first level
            st.begin, st.t_begin = st.start, t0
            st.start = cuda.event()
            go.record(st.start)
        launch(go)
        go.record(st.stop)
        go.read(st.level_out, st.host_out)
        if st.info.is_simulator:  # the simulator's events carry no time: use the host clock
            return (time.perf_counter() - t0) * 1e3
        return cuda.event_elapsed_time(st.start, st.stop)

    def _compiling(self, name: str) -> None:
        self.status(f"compiling the {name} kernel (first use in this process; "
                    "later processes load it from the disk cache)")

    def _launch(self, st: "_RunState", kernel, blocks, threads, shared, *args) -> None:
        """An untimed launch (set-up): prepared and launched at once."""
        if not st.info.is_simulator:
            st.launcher.prepare(kernel, blocks, threads, shared, *args, on_compile=self._compiling)
        st.launcher(kernel, blocks, threads, shared, *args)

    def _check_overflow(self, st: "_RunState", counters) -> None:
        from kernels import common

        if counters[common.OVERFLOW] > 0:
            raise RuntimeError(
                f"next frontier overflowed its capacity of {st.capacity:,} entries "
                f"({int(counters[common.OVERFLOW]):,} needed); this is a bug, please report it")

    # ---------------------------------------------------------------- technique: topdown-queue
    def _run_topdown_queue(self) -> Iterator[LevelStats]:
        from kernels import common, topdown

        st = self._setup(max(self.graph.num_vertices, 1))
        block = self.knobs.block_threads
        levels: list[LevelStats] = []
        frontier_size, level, total_ms = 1, 0, 0.0
        inst = self.instrument

        def launch(go):
            go.zero(st.level_out)
            go(topdown.topdown_queue, _grid(frontier_size, block), block, 0,
                st.graph.offsets, st.graph.indices, st.dist, st.parent, st.queues[0], frontier_size,
                st.queues[1], st.counters, level, st.stamp, inst)

        while frontier_size > 0:
            ms = self._timed(st, launch)
            c = st.host_out
            nxt = int(c[common.NEXT_SIZE])
            record = LevelStats(
                level=level, frontier_in=frontier_size,
                edges_examined=int(c[common.EDGES]) if inst else -1,
                discovered=nxt, frontier_out=nxt,
                dup_generated=int(c[common.DUP_GENERATED]) if inst else -1,
                dup_detected=0, dup_conflicts=0,
                dup_undetected=int(c[common.DUP_GENERATED]) if inst else -1,
                technique=self.technique.value, kernel="multi-block", warp_size=1, launches=2,
                time_ms=float(ms))
            levels.append(record)
            total_ms += ms
            yield record
            st.queues.reverse()
            frontier_size, level = nxt, level + 1
        self._finish(st, levels, total_ms)

    # ---------------------------------------------------------------- technique: bfs4k
    def _run_bfs4k(self) -> Iterator[LevelStats]:
        from kernels import bfs4k, common
        from kernels.rules import heavy_limit

        from .policy import FrontierStats, multi_block_layout, plan_level, single_block_layout

        graph, knobs, n = self.graph, self.knobs, self.graph.num_vertices
        limits = self.limits
        single_layout = single_block_layout(knobs, limits, n) if knobs.K5 > 0 else None
        multi_layout = multi_block_layout(knobs, limits)
        race = knobs.claim == "race"
        heavy_cap = max(1, heavy_limit(n, knobs.K2))
        max_log = 4096
        shared_visited = knobs.visited == "shared"
        # With the racy claim a level can enqueue a vertex once per arc that reaches it.
        st = self._setup(max(1, graph.num_arcs if race else n), {
            "heavy_v": (heavy_cap, np.int32), "heavy_off": (heavy_cap, np.int64),
            # Up to max_log levels a single-block launch (the cluster form: a row per level and block).
            "log": ((max_log * knobs.cluster, bfs4k.LOG_FIELDS), np.int64),
            "state": (bfs4k.STATE_FIELDS, np.int64),
            # The single block's visit log (vertex, parent, level): each vertex is claimed once.
            "visits": (3 * n if shared_visited else 3, np.int32)})
        heavy_v, heavy_off, log, state, visits = (
            st.extra[k] for k in ("heavy_v", "heavy_off", "log", "state", "visits"))
        heavy_ctr = _view(st.pool, "heavy_ctr", st.level_out, common.HEAVY_CTR, common.HEAVY_CTR + 1)
        dedup = {"none": bfs4k.NO_DEDUP, "hash64": bfs4k.HASH64, "warp-culling": bfs4k.WARP_CULL}[knobs.dedup]
        inst = self.instrument
        C = knobs.cluster
        kern = bfs4k.kernels_for(inst, not race, dedup, knobs.single_block_threads, shared_visited, C)
        commit_blocks = min(_grid(n, STATS_THREADS), 4 * limits.sm_count)
        common_fields = dict(technique=self.technique.value)

        def single_launch(go, qa, qb, size, in_a, level):
            lay = single_layout
            args = (st.graph.offsets, st.graph.indices, st.dist, st.parent, qa, qb, size,
                    in_a, st.capacity, st.hist, log, max_log, level, state, st.stamp, st.stamp2,
                    lay.frontier_capacity * C, lay.frontier_capacity, knobs.K1,
                    heavy_limit(n, knobs.K2), knobs.K3, knobs.K4,
                    max(lay.hash_entries - 1, 0), knobs.K7, lay.region0_words, lay.bitmap_words, visits)
            if C == 1:
                go(kern.single, 1, knobs.single_block_threads, lay.dynamic_bytes, *args)
            else:  # the cluster form: one cluster of C blocks, C log rows a level
                go.cluster(kern.single, C, C, knobs.single_block_threads, lay.dynamic_bytes, *args)
            if shared_visited:
                go(kern.commit, commit_blocks, STATS_THREADS, 0, visits, state, st.dist, st.parent, qa, qb)

        def multi_launch(go, plan, src, dst, size, level, stats_blocks):
            lay = multi_layout
            go.zero(st.level_out)
            go(kern.multi, plan.blocks, plan.block_threads, lay.dynamic_bytes,
               st.graph.offsets, st.graph.indices, st.dist, st.parent, src, size, dst,
               st.capacity, st.counters, level, st.stamp, st.stamp2,
               plan.warp_size, plan.edge_discover, plan.heavy_threshold, heavy_v, heavy_off,
               heavy_ctr, max(lay.hash_entries - 1, 0), plan.binary_scan, knobs.K7)
            if plan.heavy_vertices:
                go(kern.heavy, plan.heavy_blocks, plan.block_threads, lay.dynamic_bytes,
                   st.graph.offsets, st.graph.indices, st.dist, st.parent, dst, st.capacity,
                   st.counters, level, st.stamp, st.stamp2, heavy_v, heavy_off,
                   heavy_ctr, knobs.K3, max(lay.hash_entries - 1, 0), knobs.K7)
            # The next frontier's degree histogram, for the next level's plan.
            go(kern.stats, stats_blocks, STATS_THREADS, 0, st.graph.offsets, dst, st.counters, st.hist)

        frontier = FrontierStats.of_vertices(graph.degrees()[[self.source]])
        if not st.info.is_simulator:
            # Compile (or load from the disk cache) every kernel the run may use before its clock
            # starts: one first needed at a later level would compile inside the elapsed time.
            go, (qa, qb) = st.launcher.preparing(self._compiling), st.queues
            probe = dataclasses.replace(plan_level(frontier, knobs, limits, n), heavy_vertices=1, heavy_blocks=1)
            multi_launch(go, probe, qa, qb, frontier.size, 0, 1)
            if single_layout is not None:
                single_launch(go, qa, qb, frontier.size, True, 0)
        level, in_a, total_ms = 0, True, 0.0
        levels: list[LevelStats] = []
        while frontier.size > 0:
            plan = plan_level(frontier, knobs, limits, n)
            qa, qb = st.queues
            if plan.kernel == "single-block":
                ms = self._timed(st, lambda go: single_launch(go, qa, qb, frontier.size, in_a, level))
                s_host = state.copy_to_host()
                nlev = int(s_host[bfs4k.S_LEVELS])
                rows = log[:nlev * C].copy_to_host()
                if C > 1:
                    rows = _cluster_log(rows, C, bfs4k)
                share = _level_shares(rows[:, bfs4k.L_CLOCK], s_host[bfs4k.S_CLOCK_START], s_host[bfs4k.S_CLOCK_END])
                for i, row in enumerate(rows):
                    if row[bfs4k.L_OVERFLOW] > 0:
                        self._check_overflow(st, {common.OVERFLOW: row[bfs4k.L_OVERFLOW]})
                    rec = self._bfs4k_record(
                        level + i, row[bfs4k.L_FRONTIER], row[bfs4k.L_EDGES], row[bfs4k.L_FOUND],
                        row[bfs4k.L_NEXT], row[bfs4k.L_GEN], row[bfs4k.L_DET], row[bfs4k.L_CONF],
                        row[bfs4k.L_UNDET], race, kernel="single-block", warp_size=int(row[bfs4k.L_WARP]),
                        edge_discover=bool(row[bfs4k.L_ED]), heavy_vertices=0,
                        binary_scan=bool(row[bfs4k.L_BINARY]), coalesced_writes=bool(row[bfs4k.L_COAL]),
                        launches=(2 if shared_visited else 1) if i == 0 else 0,
                        time_ms=float(ms * share[i]), **common_fields)
                    levels.append(rec)
                    yield rec
                total_ms += ms
                level += nlev
                in_a = bool(s_host[bfs4k.S_IN_A])
                hist = st.host_out[common.NUM_COUNTERS:]
                frontier = FrontierStats.from_histogram(int(s_host[bfs4k.S_FSIZE]), hist)
                continue

            src, dst = (qa, qb) if in_a else (qb, qa)
            # The next frontier holds at most one entry per edge examined (and per vertex, without
            # duplicates); a few entries per thread, at most a few blocks per SM.
            bound = min(frontier.edges, st.capacity)
            stats_blocks = min(_grid(bound, 4 * STATS_THREADS), 4 * limits.sm_count)
            ms = self._timed(st, lambda go: multi_launch(go, plan, src, dst, frontier.size, level, stats_blocks))
            c = st.host_out.tolist()  # Python ints for the record, in one call
            self._check_overflow(st, c)
            # Edges examined are the frontier's degree sum; claims are the kept plus the dropped.
            rec = self._bfs4k_record(
                level, frontier.size, frontier.edges, c[common.NEXT_SIZE] + c[common.DUP_DETECTED],
                c[common.NEXT_SIZE],
                c[common.DUP_GENERATED], c[common.DUP_DETECTED], c[common.DUP_CONFLICTS],
                c[common.UNDETECTED], race, kernel="multi-block", warp_size=plan.warp_size,
                edge_discover=plan.edge_discover, heavy_vertices=int(c[common.HEAVY]),
                binary_scan=plan.binary_scan, coalesced_writes=bool(c[common.COALESCED]),
                launches=4 if plan.heavy_vertices else 3, time_ms=float(ms), **common_fields)
            levels.append(rec)
            total_ms += ms
            yield rec
            level += 1
            in_a = not in_a
            frontier = FrontierStats.from_histogram(c[common.NEXT_SIZE], st.host_out[common.NUM_COUNTERS:])
        self._finish(st, levels, total_ms)

    def _bfs4k_record(self, level, fin, edges, found, nxt, gen, det, conf, undet, race, **rest) -> LevelStats:
        inst = self.instrument
        if inst:
            discovered = int(found - gen)
        else:
            # Without the stamps the racy claim cannot tell first claims from repeats.
            discovered = -1 if race else int(found)
        return LevelStats(
            level=int(level), frontier_in=int(fin), edges_examined=int(edges), discovered=discovered,
            frontier_out=int(nxt), dup_generated=int(gen) if inst else -1, dup_detected=int(det),
            dup_conflicts=int(conf), dup_undetected=int(undet) if inst else -1, **rest)

    def _finish(self, st: "_RunState", levels, total_ms) -> None:
        from numba import cuda

        from .reference import traversed_edges

        # `stop` was recorded after the last level's kernels: host work on the records is not timed.
        if st.info.is_simulator:
            elapsed = (time.perf_counter() - st.t_begin) * 1e3
        else:
            elapsed = cuda.event_elapsed_time(st.begin, st.stop)

        distances, parents = st.dist.copy_to_host(), st.parent.copy_to_host()
        device = st.info.as_dict()
        if self.limits is not None:
            device["limits"] = dataclasses.asdict(self.limits)
        self._result = RunResult(
            graph=self.graph.name, source=self.source, technique=self.technique.value,
            knobs=self.knobs.as_dict(), distances=distances, parents=parents, levels=levels,
            total_ms=total_ms, elapsed_ms=elapsed, traversed_edges=traversed_edges(self.graph, distances),
            device=device, instrumented=self.instrument)


def run_bfs(graph: CSRGraph, source="max-degree", technique: Technique | str = Technique.TOPDOWN_QUEUE,
            knobs: Knobs | dict | None = None, *, instrument: bool = True, seed: int = 0,
            on_status: Callable[[str], None] | None = None, limits: DeviceLimits | None = None) -> BFSRun:
    """Prepare a BFS of `graph` from `source`; iterate the returned run to execute it level by level.

    `limits` overrides the device constraints BFS-4K's policy uses (tests use small ones so that
    every decision is exercised on small graphs).
    """
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    tech = Technique.parse(technique)
    knobs = knobs if isinstance(knobs, Knobs) else Knobs.from_dict(knobs)
    src = resolve_source(graph, source, seed)
    backend.check_graph_size(graph.num_arcs)
    if tech is Technique.BFS4K:
        from .policy import single_block_layout

        if limits is None:
            limits = DeviceLimits.simulator() if backend.current().is_simulator else DeviceLimits.from_current_device()
        if knobs.K5 > 0:
            single_block_layout(knobs, limits, graph.num_vertices)  # too little shared memory: fail now
    else:
        limits = None
    return BFSRun(graph, src, tech, knobs, bool(instrument), on_status, limits)
