"""A search per block (the multi-search abstraction's Algorithm 1), shared by the methods that run
it: the warp-thread hybrid, warp-based, work-efficient and edge-parallel differ only in the kernel
(kernels.multisearch.search_kernel's queues, or edge_kernel), the working state a block keeps
and what the whole run keeps (the edge kernel's source of every arc).

A batch is launched in steps: each launches a share of the batch's searches (the blocks take them
one by one through a counter) and reads back their statistics, so the progress records follow the
searches as they finish.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..plan import per_search_rows, plan_slots
from ..records import SearchTable
from .base import BatchLoop, ManyContext, MultiSearchMethod, Step

#: Progress steps a batch of searches is launched in, at most.
STEPS_PER_BATCH = 8


class BlockSearch(MultiSearchMethod):
    """A method that runs each search in one block."""

    #: Bytes a block keeps per vertex: the search's levels (int32) and its BFS order (int32).
    slot_bytes_per_vertex: ClassVar[int] = 8
    #: Whether the kernel keeps each block's BFS order (state.order).
    keeps_order: ClassVar[bool] = True

    def kernel(self, callbacks, T):
        """The compiled kernel for these callbacks (kernels.multisearch, cached by the callback set)."""
        raise NotImplementedError

    def run_bytes(self, graph) -> int:
        """Device memory the method keeps for the whole run besides the graph."""
        return 0

    def arc_source(self, ctx: ManyContext):
        """The source vertex of every arc, where the kernel reads it (int32[1]: it reads none)."""
        return ctx.buffer("ms.no-arc-source", 1, np.int32)

    def plan(self, graph, total, app, *, resident_slots, free, memory_note, k, word_bits, slots):
        return plan_slots(graph, total, app, self.method, slot_bytes=self.slot_bytes_per_vertex * graph.num_vertices,
                          fixed=self.run_bytes(graph), resident_slots=resident_slots, free=free,
                          memory_note=memory_note, k=k, slots=slots)

    def start_batch(self, ctx, b, lo, hi):
        return SearchBatch(self, ctx, b, lo, hi)


def _cycles_per_ms(rt) -> float:
    if rt.kind == "simulator":
        return 1e6  # kernels.primitives.clock64 reads the host's nanosecond clock there
    from numba import cuda

    return float(cuda.get_current_device().CLOCK_RATE)  # kHz: cycles per millisecond


class SearchBatch(BatchLoop):
    """One batch's searches, launched in steps of `per_step` searches."""

    def __init__(self, method: BlockSearch, ctx: ManyContext, b: int, lo: int, hi: int):
        from kernels import multisearch as km

        self.km, self.ctx, self.b, self.lo = km, ctx, b, lo
        rt, plan, app, n = ctx.runtime, ctx.plan, ctx.app, ctx.graph.num_vertices
        self.rows, self.slots, self.threads = hi - lo, plan.slots, ctx.settings.threads
        self.sources = rt.to_device(ctx.sources[lo:hi])
        R = per_search_rows(plan)
        for a in app.arrays:
            if a.scope == "search":
                ctx.search_arrays[a.name] = ctx.buffer(f"ms.search.{a.name}", (R,) + a.row_shape(n), a.dtype)
        # Zeroed by the batch's first step (timed, as the searches' own work): its per-search arrays,
        # and the first batch also the run's.
        self.zero = tuple(ctx.search_arrays.values()) + (tuple(ctx.zero_run) if b == 0 else ())
        self.stats_host = ctx.buffer("ms.stats", (R, km.NUM_STATS), np.int64, host=True)
        self.graph = ctx.group("ms.graph", km.SearchGraph(*ctx.graph_arrays, method.arc_source(ctx)))
        self.state = ctx.group("ms.state", km.BlockState(
            next_search=ctx.buffer("ms.next", 1, np.int64), dist=ctx.buffer("ms.dist", (self.slots, n), np.int32),
            order=ctx.buffer("ms.order", (self.slots, n) if method.keeps_order else (1, 1), np.int32),
            stats=ctx.buffer("ms.stats", (R, km.NUM_STATS), np.int64)))
        self.data = ctx.group("ms.data", app.data({**ctx.arrays, **ctx.search_arrays}))
        self.readback = (self.state.stats, self.stats_host)
        self.kernel = method.kernel(app.callbacks(), ctx.settings.T)
        self.T = int(ctx.settings.T or 0)  # the edge kernel reads none
        # At most STEPS_PER_BATCH steps, each launching at least a block per slot (a step whose
        # searches do not fill the GPU wastes it), unless the caller asked for `steps`.
        count = ctx.settings.steps or max(1, min(STEPS_PER_BATCH, -(-self.rows // self.slots)))
        self.per_step = -(-self.rows // min(count, self.rows))
        self.c0 = 0
        self.cpm = _cycles_per_ms(rt)
        self.done: list[SearchTable] = []

    @property
    def count(self) -> int:
        return min(self.per_step, self.rows - self.c0)

    def launch(self, go) -> None:
        c0, cnt = self.c0, self.count
        for arr in self.zero if c0 == 0 else ():
            go.zero(arr)
        go.zero(self.state.next_search)
        go(self.kernel, min(self.slots, cnt), self.threads, 0,
           *self.km.SearchArgs(graph=self.graph, sources=self.sources, row0=c0, count=cnt, state=self.state,
                               T=self.T, data=self.data))

    def collect(self, ms: float) -> Step:
        km, c0, cnt, lo = self.km, self.c0, self.count, self.lo
        st = self.stats_host[c0:c0 + cnt]
        finished = SearchTable(row=lo + c0 + np.arange(cnt), source=self.ctx.sources[lo + c0:lo + c0 + cnt],
                               batch=self.b, levels=st[:, km.ST_LEVELS], visited=st[:, km.ST_VISITED],
                               edges_examined=st[:, km.ST_EDGES], time_ms=st[:, km.ST_CYCLES] / self.cpm)
        self.done.append(finished)
        self.c0 += cnt
        self.converged = self.c0 == self.rows
        return Step(done=cnt, visited=int(st[:, km.ST_VISITED].sum()), edges=int(st[:, km.ST_EDGES].sum()),
                    searches=finished)

    def finish(self) -> tuple[dict, SearchTable]:
        rt = self.ctx.runtime
        values = {name: rt.to_host(arr)[:self.rows] for name, arr in self.ctx.search_arrays.items()}
        return values, SearchTable.concat(self.done)
