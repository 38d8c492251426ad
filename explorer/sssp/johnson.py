"""Weighted searches from many sources at once, on the multi-search layer (explorer.multisearch):
its run (MultiSearchRun: batches planned from free device memory, every step through the engine's
Enactor, Progress records, the energy meter, a MultiSearchResult) with a search method of
weighted distances, which the BFS methods' registry does not list (they count hops; this one
follows weights).

A batch keeps, per search, a distance row and two rows of flags (kernels/sssp/batch.py); a step
relaxes every search's flagged vertices once (Bellman-Ford, a step per iteration for all of the
batch's searches), and a search ends in the step that improves nothing. Johnson's all pairs
(explorer.sssp.apsp) run it on reweighted, non-negative weights.
"""
from __future__ import annotations

import enum

import numpy as np

from ..multisearch.apps import Application, ArraySpec
from ..multisearch.methods.base import BatchLoop, ManyContext, MultiSearchMethod, Settings, Step
from ..multisearch.plan import USABLE_SHARE, BatchPlan, _batches, _refuse, format_bytes, free_device_memory
from ..multisearch.records import SearchTable


class WeightedMethod(str, enum.Enum):
    """The weighted search methods (not BFS methods: explorer.multisearch.Method lists those)."""

    #: Batched frontier Bellman-Ford: every search of a batch relaxes the vertices it improved in
    #: the step before, a thread per (vertex, search) pair (the chapter's §4.1: APSP as SSSP from
    #: every vertex, Harish & Narayanan).
    BELLMAN_FORD = "bellman-ford"


class WeightedDistances(Application):
    """Weighted distances from every source: one row per search (`distances`, the weights' type:
    int64 or float64, inf / INT64_INF for no path). `weights` per arc (the kernels' type) and
    `inf` are the run's."""

    name = "weighted-distances"
    per_search = ("distances",)
    weighted = True

    def __init__(self, weights: np.ndarray, inf):
        self.weights, self.inf = np.ascontiguousarray(weights), inf
        self.arrays = (ArraySpec("distances", "search", ("n",), self.weights.dtype.type),)
        super().__init__()

    def callbacks(self):
        raise ValueError("application 'weighted-distances' follows weights: it runs on the weighted search method "
                         "(explorer.sssp.johnson), not on a BFS method")


class BellmanFordSearches(MultiSearchMethod):
    method = WeightedMethod.BELLMAN_FORD

    def check(self, app) -> None:
        if not getattr(app, "weighted", False):
            raise ValueError(f"application {app.name!r} counts hops: the weighted search method runs "
                             "'weighted-distances' only")

    def plan(self, graph, total, app, *, resident_slots, free, memory_note, k, word_bits, slots) -> BatchPlan:
        n, m = graph.num_vertices, graph.num_arcs
        usable = int(free * USABLE_SHARE)
        fixed = m * app.weights.itemsize
        per_search = app.bytes(n, "search") + 2 * n + 8 * 3 + 4  # the row, two flag rows, stats, source
        cap = min(total, k) if k else total
        per_batch = min(cap, (usable - fixed) // per_search) if usable > fixed else 0
        if per_batch < 1:
            _refuse(graph, app, self.method, fixed + per_search, usable, free,
                    f"{format_bytes(per_search)} a search (its distance row and flags), {format_bytes(fixed)} of weights")
        parts = f"{per_batch:,} searches x {format_bytes(per_search)}, {format_bytes(fixed)} of weights"
        return BatchPlan(self.method, total, per_batch, per_batch, 0, free, usable, fixed, 0, per_search,
                         _batches(total, per_batch), memory_note, parts)

    def start_batch(self, ctx: ManyContext, b: int, lo: int, hi: int) -> "WeightedBatch":
        return WeightedBatch(ctx, b, lo, hi)


class WeightedBatch(BatchLoop):
    def __init__(self, ctx: ManyContext, b: int, lo: int, hi: int):
        from kernels.sssp import batch as K
        from kernels.sssp.args import WGraph

        self.K, self.ctx, self.b, self.lo = K, ctx, b, lo
        rt, app, n = ctx.runtime, ctx.app, ctx.graph.num_vertices
        self.rows, self.n = hi - lo, n
        R = max(h - l for l, h in ctx.plan.batches)
        dist = ctx.search_arrays["distances"] = ctx.buffer("ms.search.distances", (R, n), app.weights.dtype)
        self.dist = dist if self.rows == R else dist[:self.rows]
        flags = [ctx.buffer("wms.flags_a", (R, n), np.int8), ctx.buffer("wms.flags_b", (R, n), np.int8)]
        self.flags = [f if self.rows == R else f[:self.rows] for f in flags]
        self.stats = ctx.buffer("wms.stats", R * K.NUM_STATS, np.int64)
        self.readback = (self.stats, ctx.buffer("wms.stats", R * K.NUM_STATS, np.int64, host=True))
        weights = ctx.derived(f"wms.weights.{id(app)}", lambda g: (app.weights,))[0]
        self.graph = WGraph(*ctx.graph_arrays, weights)
        self.threads = B = ctx.settings.threads
        self.blocks = min(self.rows * -(-n // B), 1 << 20)  # a block per (search, B vertices), grid-stride
        sources = rt.to_device(np.ascontiguousarray(ctx.sources, dtype=np.int32))
        rt.launch_now(lambda *a: None, K.batch_init, min(-(-self.rows * n // B), 1 << 20), B, 0, self.dist,
                      self.flags[0], self.flags[1], sources, lo, app.inf)
        self.active = np.ones(self.rows, bool)
        self.steps = 0
        self.reached = np.ones(self.rows, np.int64)
        self.edges = np.zeros(self.rows, np.int64)
        self.done: list[SearchTable] = []

    def launch(self, go) -> None:
        go.zero(self.stats)
        go(self.K.batch_relax, self.blocks, self.threads, 0, self.graph, self.dist, self.flags[0], self.flags[1],
           self.stats, self.ctx.app.inf)

    def collect(self, ms: float) -> Step:
        K = self.K
        st = self.readback[1][:self.rows * K.NUM_STATS].reshape(self.rows, K.NUM_STATS)
        self.steps += 1
        self.flags.reverse()
        self.reached += st[:, K.ST_REACHED]
        self.edges += st[:, K.ST_RELAXED]
        ended = self.active & (st[:, K.ST_IMPROVED] == 0)
        if self.steps > self.n + 1 and not ended.all():
            raise RuntimeError("weighted searches did not settle within n + 1 steps: a negative cycle escaped the "
                               "potentials' check; this is a bug, please report it")
        self.active &= ~ended
        i = np.flatnonzero(ended)
        finished = SearchTable(row=self.lo + i, source=self.ctx.sources[self.lo + i], batch=self.b, levels=self.steps,
                               visited=self.reached[i], edges_examined=self.edges[i])
        self.done.append(finished)
        self.converged = not self.active.any()
        return Step(done=len(finished), visited=int(st[:, K.ST_REACHED].sum()), edges=int(st[:, K.ST_RELAXED].sum()),
                    searches=finished)

    def finish(self) -> tuple[dict, SearchTable]:
        done = SearchTable.concat(self.done)
        return {"distances": self.ctx.runtime.to_host(self.dist)}, done.take(np.argsort(done.column("row"), kind="stable"))


def weighted_searches(graph, weights: np.ndarray, inf, *, sources=None, k: int | None = None, session=None,
                      on_progress=None, on_status=None, block_threads: int | None = None, limits=None):
    """A MultiSearchRun of weighted distances from every vertex (or `sources`, vertices 0..n-1) with
    `weights` per arc (non-negative: a search settles in at most n - 1 steps)."""
    from ..engine.runtime import for_technique
    from ..multisearch.run import MultiSearchRun

    rt = for_technique(frozenset({"gpu", "simulator"})).with_limits(limits)
    srcs = (np.arange(graph.num_vertices, dtype=np.int32) if sources is None
            else np.ascontiguousarray(sources, dtype=np.int32))
    app, impl = WeightedDistances(weights, inf), BellmanFordSearches()
    impl.check(app)
    threads = block_threads or (32 if rt.kind == "simulator" else 256)
    free, note = free_device_memory(rt)
    plan = impl.plan(graph, len(srcs), app, resident_slots=0, free=free, memory_note=note, k=k, word_bits=64,
                     slots=None)
    settings = Settings(T=None, threads=int(threads), word_bits=64, direction="auto", heavy=1, chunk=1, steps=None)
    return MultiSearchRun(graph, srcs, app, impl, plan, rt, settings, session=session, threshold=None,
                          on_progress=on_progress, on_status=on_status)
