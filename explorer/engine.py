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

import logging
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from . import backend
from .graphs import CSRGraph
from .stats import LevelStats, RunResult
from .techniques import Knobs, Technique

log = logging.getLogger("explorer")

SourceSpec = "int | str"


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
class _DeviceGraph:
    offsets: object
    indices: object


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


def _compiled_note(kernel, name: str, status: Callable[[str], None]) -> None:
    """Say so before a kernel's first launch in this process: that launch compiles or loads it."""
    if not backend.current().is_simulator and len(kernel.overloads) == 0:
        status(f"compiling {name} (first use in this session; later sessions load it from the disk cache)")


def _grid(n: int, block: int) -> int:
    return max(1, (n + block - 1) // block)


class BFSRun:
    """An iterable BFS: iterate for per-level records; `result` once it is exhausted."""

    def __init__(self, graph: CSRGraph, source: int, technique: Technique, knobs: Knobs,
                 instrument: bool, on_status: Callable[[str], None] | None):
        self.graph = graph
        self.source = source
        self.technique = technique
        self.knobs = knobs
        self.instrument = instrument
        self._status = on_status or (lambda msg: None)
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
        if self.technique is Technique.TOPDOWN_QUEUE:
            return self._run_topdown_queue()
        raise AssertionError(f"no level loop for {self.technique}")  # Technique.parse rejects these

    # ---------------------------------------------------------------- technique: topdown-queue
    def _run_topdown_queue(self) -> Iterator[LevelStats]:
        from numba import cuda

        from kernels import common, topdown

        graph, n = self.graph, self.graph.num_vertices
        info = backend.current()
        dg = _to_device(graph, self.status)
        block = self.knobs.block_threads

        dist = cuda.device_array(n, np.int32)
        parent = cuda.device_array(n, np.int32)
        stamp = cuda.device_array(n, np.int32)
        queues = [cuda.device_array(max(n, 1), np.int32), cuda.device_array(max(n, 1), np.int32)]
        counters = cuda.device_array(common.NUM_COUNTERS, np.int64)
        zero_counters = np.zeros(common.NUM_COUNTERS, np.int64)
        host_counters = cuda.pinned_array(common.NUM_COUNTERS, np.int64) if not info.is_simulator \
            else np.zeros(common.NUM_COUNTERS, np.int64)

        _compiled_note(common.fill_int32, "fill kernel", self.status)
        for arr in (dist, parent, stamp):
            common.fill_int32[_grid(n, 256), 256](arr, -1)
        common.set_source[1, 1](dist, parent, queues[0], stamp, self.source)
        _compiled_note(topdown.topdown_queue, "topdown_queue kernel", self.status)

        start, stop = cuda.event(), cuda.event()
        levels: list[LevelStats] = []
        frontier_size, level, total_ms = 1, 0, 0.0
        while frontier_size > 0:
            counters.copy_to_device(zero_counters)
            t0 = time.perf_counter()
            start.record()
            topdown.topdown_queue[_grid(frontier_size, block), block](
                dg.offsets, dg.indices, dist, parent, queues[0], frontier_size, queues[1],
                counters, level, stamp, self.instrument)
            stop.record()
            counters.copy_to_host(host_counters)
            stop.synchronize()
            # The simulator's events carry no time: its levels are timed by the host clock.
            ms = (time.perf_counter() - t0) * 1e3 if info.is_simulator else cuda.event_elapsed_time(start, stop)
            c = host_counters
            nxt = int(c[common.NEXT_SIZE])
            inst = self.instrument
            record = LevelStats(
                level=level,
                frontier_in=frontier_size,
                edges_examined=int(c[common.EDGES]) if inst else -1,
                discovered=int(c[common.DISCOVERED]) if inst else nxt,
                frontier_out=nxt,
                dup_generated=int(c[common.DUP_GENERATED]) if inst else -1,
                dup_detected=0,
                dup_conflicts=0,
                dup_undetected=int(c[common.DUP_GENERATED]) if inst else -1,
                technique=self.technique.value,
                kernel="multi-block",
                warp_size=1,
                launches=1,
                time_ms=float(ms),
            )
            levels.append(record)
            total_ms += ms
            yield record
            queues.reverse()
            frontier_size, level = nxt, level + 1

        self._finish(dist.copy_to_host(), parent.copy_to_host(), levels, total_ms, info)

    def _finish(self, distances, parents, levels, total_ms, info) -> None:
        from .reference import traversed_edges

        self._result = RunResult(
            graph=self.graph.name, source=self.source, technique=self.technique.value,
            knobs=self.knobs.as_dict(), distances=distances, parents=parents, levels=levels,
            total_ms=total_ms, traversed_edges=traversed_edges(self.graph, distances),
            device=info.as_dict(), instrumented=self.instrument)


def run_bfs(graph: CSRGraph, source="max-degree", technique: Technique | str = Technique.TOPDOWN_QUEUE,
            knobs: Knobs | dict | None = None, *, instrument: bool = True, seed: int = 0,
            on_status: Callable[[str], None] | None = None) -> BFSRun:
    """Prepare a BFS of `graph` from `source`; iterate the returned run to execute it level by level."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    tech = Technique.parse(technique)
    knobs = knobs if isinstance(knobs, Knobs) else Knobs.from_dict(knobs)
    src = resolve_source(graph, source, seed)
    backend.check_graph_size(graph.num_arcs)
    return BFSRun(graph, src, tech, knobs, bool(instrument), on_status)
