"""The shared host operator of the shortest-path techniques: `RelaxLoop`, a frontier-based run
(the chapter's Algorithm 5) on the enactor, configured by each technique: how many lanes share a
frontier vertex (fixed, or BFS-4K's dynamic virtual warps), heavy vertices, packed 64-bit words,
edge classification, duplicate removal; Δ-stepping adds its bucket steps on top.

A run's steps: relax steps while the frontier is not empty (one record each), [Δ-stepping's
bucket advances,] and a last step that makes the tree tight (packed words unpacked; otherwise
every reached vertex gets a parent p with d(p) + w(p, v) = d(v)). Negative cycles are caught three
ways: a negative self loop on a reached vertex, a distance below (n - 1) x the most negative
weight, or any improvement in relax step n - 1 or later (without a negative cycle every distance
is final after n - 1 steps: each step extends the shortest paths found by one arc at least).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from kernels import rules
from kernels.args import Heavy
from kernels.sssp import layout as L  # plain numbers: no numba.cuda before the backend is chosen

from ..device import blocks_for
from ..knobs import POW2_BLOCKS, KnobSpec
from ..stats import Extra
from ..techniques.base import Batch
from .paths import acyclic_parents, negative_cycle
from .weights import negative_cycle_error, source_text

#: Extras every technique built on RelaxLoop may declare.
WARP_EXTRA = Extra("warp_size", "lanes sharing a frontier vertex this step (a virtual warp; 1: a thread a vertex)")


#: The most iterations one single-block launch runs (its log's rows) before the host looks.
MAX_SINGLE_ITERATIONS = 512

#: The knobs of RelaxLoop's single-block kernel (`single_block`), declared alike by each technique with it.
K5_SPEC = KnobSpec(
    "K5", "single-block kernel while |F| <= single_block_threads x K5 and no frontier vertex is heavy (its arcs go "
    "to the grid's heavy-vertex kernel): one block runs iterations by itself, with block barriers and no host "
    "round trip between them (as BFS-4K's); 0 disables it", 1, low=0, high=16,
    section="BFS-4K §5.5")
SINGLE_BLOCK_THREADS_SPEC = KnobSpec(
    "single_block_threads", "threads of the single-block kernel", 1024, choices=POW2_BLOCKS, section="BFS-4K §5.5")


def single_block(knobs, k1: int) -> tuple:
    """RelaxLoop's `single` from a technique's K5 and single_block_threads knobs and its K1."""
    return knobs.single_block_threads * knobs.K5, knobs.single_block_threads, k1


def vertex_classes(graph, weights: np.ndarray) -> tuple:
    """H-BF's edge classes a vertex (kernels.sssp.relax: IN_DEGREE_1, SINK), int8. Self loops count
    for neither; a vertex with a negative self loop is no sink (queued, its loop reveals the cycle)."""
    from kernels.sssp.layout import IN_DEGREE_1, SINK

    n = graph.num_vertices
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.offsets))
    loop = src == graph.indices
    indeg = np.bincount(graph.indices[~loop], minlength=n)
    outdeg = np.bincount(src[~loop], minlength=n) + np.bincount(src[loop & (weights < 0)], minlength=n)
    cls = np.where(indeg == 1, IN_DEGREE_1, 0) | np.where(outdeg == 0, SINK, 0)
    return (cls.astype(np.int8),)


class RelaxLoop:
    """A frontier-based shortest-path run. `warp(size)`: lanes a frontier vertex for a frontier of
    `size` (a power of two up to 32); `heavy_degree` (0: none) and `k3`: the heavy vertices' grid;
    `flags`: kernels.sssp.relax's PACKED, CLASSIFY, DEDUP (FAR is Δ-stepping's); `extras(loop,
    counters)`: the technique's extras of a relax step; `single` (largest frontier, threads, K1):
    frontiers up to that size relax in one block, many iterations a launch (kernels.sssp.single;
    0: never)."""

    converged = False
    compiled_ahead = False
    #: Relax steps from which an improvement proves a negative cycle (n - 1); None: not checked.
    cycle_bound: int | None

    def __init__(self, ctx, *, warp: Callable[[int], int], flags: int, heavy_degree: int = 0, k3: int = 16,
                 extras: Callable | None = None, single: tuple = (0, 0, 1)):
        import kernels.sssp.relax as K
        from kernels.sssp.args import Bounds, Marks, Paths, WGraph
        from kernels.sssp.steps import sssp_fill, sssp_source

        self.ctx, self.kernels = ctx, K
        g, w, B = ctx.graph, ctx.weighting, ctx.knobs.block_threads
        self.B, self.w, self.warp, self.flags, self.extras = B, w, warp, flags, extras or (lambda loop, c: {})
        n, m = g.num_vertices, g.num_arcs
        self.n = n
        self.packed = bool(flags & L.PACKED)
        self.capacity = max(1, n if flags & L.DEDUP else n + m)
        dt = w.dtype
        self.dist = ctx.buffer("sssp.dist", n, dt)
        self.parent = ctx.buffer("sssp.parent", n, np.int32)
        self.packed_words = ctx.buffer("sssp.packed", n if self.packed else 1, np.int64)
        stamp = ctx.buffer("sssp.stamp", n, np.int32)
        far = ctx.buffer("sssp.far", n, np.int32)
        vclass = (ctx.derived(f"sssp.vclass.{'unit' if w.unit else 'graph'}",
                              lambda graph: vertex_classes(graph, w.weights))[0] if flags & L.CLASSIFY
                  else ctx.buffer("sssp.novclass", 1, np.int8))
        self.queues = [ctx.buffer("sssp.queue_a", self.capacity, np.int32),
                       ctx.buffer("sssp.queue_b", self.capacity, np.int32)]
        # The step's counters, then a single-block launch's outcome and log (kernels.sssp.single), in
        # one buffer: a multi-block step reads back its counters only, a single-block one all of it.
        self.single_size, self.single_threads, self.k1 = (int(x) for x in single)
        rows = MAX_SINGLE_ITERATIONS if self.single_size else 0
        whole = ctx.buffer("sssp.counters", L.SB_COUNTERS + rows * L.LOG_FIELDS, np.int64)
        self.counters = ctx.view("sssp.step_counters", whole, 0, L.NUM_COUNTERS)
        self.multi_readback = (self.counters, ctx.buffer("sssp.step_counters", L.NUM_COUNTERS, np.int64, host=True))
        self.readback = self.multi_readback
        if rows:
            self.sb_counters = ctx.view("sssp.sb_counters", whole, 0, L.SB_COUNTERS)
            self.log = ctx.view("sssp.sb_log", whole, L.SB_COUNTERS, whole.shape[0]).reshape(rows, L.LOG_FIELDS)
            self.single_readback = (whole, ctx.buffer("sssp.counters", whole.shape[0], np.int64, host=True))
        weights = ctx.derived(f"sssp.weights.{w.kind}.{'unit' if w.unit else 'graph'}", lambda _g: (w.weights,))[0]
        self.graph = WGraph(*ctx.graph_arrays, weights)
        self.paths = Paths(self.dist, self.parent, self.packed_words)
        self.marks = Marks(stamp, far, vclass)
        self.bounds = Bounds(0, float(np.inf), w.scalar(w.floor))
        deg = g.degrees()
        self.heavy_degree = int(heavy_degree) if heavy_degree and int(deg.max(initial=0)) >= heavy_degree else 0
        hv = ctx.buffer("sssp.heavy_vertices", n if self.heavy_degree else 1, np.int32)
        ho = ctx.buffer("sssp.heavy_offsets", n if self.heavy_degree else 1, np.int64)
        self.heavy = Heavy(self.heavy_degree, int(k3), hv, ho,
                           ctx.view("sssp.heavy_counter", self.counters, L.HEAVY_COUNTER, L.HEAVY_COUNTER + 1))
        self.res_blocks = max(1, ctx.limits.res_threads // B)
        # The heavy grid's warps walk 32 x K3 arcs a round (a grid-stride loop): no more of them than
        # the heavy vertices' arcs fill in one round, so a small graph launches a few blocks.
        heavy_arcs = int(deg[deg >= self.heavy_degree].sum()) if self.heavy_degree else 0
        self.heavy_blocks = min(self.res_blocks, blocks_for(32 * -(-heavy_arcs // (32 * int(k3))), B))
        # Set-up: every vertex unreached, the source (or every vertex: the virtual source) at 0.
        virtual = ctx.source < 0
        ctx.launch_now(sssp_fill, blocks_for(n, 256), 256, 0, self.paths, self.marks, w.scalar(np.inf), virtual,
                       self.queues[0])
        if not virtual:
            ctx.launch_now(sssp_source, 1, 1, 0, self.paths, ctx.source, self.queues[0])
        self.size = n if virtual else 1
        # Whether the frontier holds a heavy vertex (the steps count those they queue): such a
        # frontier runs on the grid, however small (a hub as the source: one block would walk its
        # tens of thousands of arcs a warp at a time).
        self.heavy_next = (not virtual and self.heavy_degree > 0
                           and int(g.offsets[ctx.source + 1] - g.offsets[ctx.source]) >= self.heavy_degree)
        self.step = 0  # every step's number (stamps are unique per step)
        self.relax_steps = 0
        self.phase = "relax"
        self.cycle_bound = max(n - 1, 1)
        self.W = 1
        self.launches = 0

    # ------------------------------------------------------------------ steps
    def launch(self, go) -> None:
        getattr(self, f"_launch_{self.phase}")(go)

    def _policy(self):
        from kernels.sssp.args import Policy

        return Policy(self.W, self.flags)

    def _sweep(self):
        from kernels.sssp.args import Sweep

        return Sweep(self.queues[0], self.size, self.queues[1], self.capacity, self.step)

    def _launch_relax(self, go) -> None:
        if self.single_size and self.size <= self.single_size and not self.heavy_next:
            return self._launch_single(go)
        self.readback = self.multi_readback
        self.W = self.warp(self.size)
        go.zero(self.counters)
        args = (self.graph, self.paths, self.marks, self._sweep(), self.bounds, self._policy(), self.heavy,
                self.counters)
        go(self.kernels.sssp_relax, blocks_for(self.size * self.W, self.B), self.B, 0, *args)
        self.launches = 2
        if self.heavy_degree:
            go(self.kernels.sssp_heavy, self.heavy_blocks, self.B, 0, *args)
            self.launches += 1

    def _launch_single(self, go) -> None:
        from kernels.args import QueuePair
        from kernels.sssp.args import SingleLimits
        from kernels.sssp.single import sssp_single

        self.readback = self.single_readback
        self.launches = 1
        qa, qb = self.queues
        go(sssp_single, 1, self.single_threads, 0, self.graph, self.paths, self.marks,
           QueuePair(qa, qb, True, self.size, self.capacity, self.step), self.bounds, self._policy(),
           SingleLimits(self.single_size, MAX_SINGLE_ITERATIONS, self.k1, self.heavy_degree), self.sb_counters, self.log)

    def _launch_parents(self, go) -> None:
        from kernels.sssp.steps import sssp_parents, sssp_unpack

        blocks = min(blocks_for(self.n, self.B), 4 * self.res_blocks)
        if self.packed:
            go(sssp_unpack, blocks, self.B, 0, self.paths, self.w.scalar(np.inf))
        else:
            go(sssp_parents, blocks, self.B, 0, self.graph, self.paths, self.w.scalar(np.inf), self.ctx.source)
        self.launches = 1

    def collect(self, ms: float):
        if self.phase == "relax" and self.readback is not self.multi_readback:
            return self._collect_single()
        rows = getattr(self, f"_collect_{self.phase}")()
        self.step += 1
        return Batch(rows)

    def _collect_single(self):
        """A single-block launch's iterations, a row each, their shares of its time by the cycle counter."""
        c = self.readback[1]
        done = int(c[L.SB_DONE])
        log = c[L.SB_COUNTERS:L.SB_COUNTERS + done * L.LOG_FIELDS].reshape(done, L.LOG_FIELDS)
        rows = []
        for i, r in enumerate(log.tolist()):
            self._check_cycles(r)
            row = dict(phase="relax", frontier_in=int(r[L.LOG_SIZE]), relaxations=int(r[L.RELAXED]),
                       improvements=int(r[L.IMPROVED]), frontier_out=int(r[L.NEXT_SIZE]),
                       duplicates=int(r[L.DUPLICATES]), bucket=self.bucket_of_step(), kernel="single-block",
                       launches=1 if i == 0 else 0)
            self.W = int(r[L.LOG_W])
            counts = r[:L.LAST_COUNT + 1] + [0] * (L.NUM_COUNTERS - L.LAST_COUNT - 1)  # no heavy list here
            row.update(self.extras(self, counts))
            rows.append(row)
            self.relax_steps += 1
        if int(c[L.OVERFLOW]) > 0:
            raise RuntimeError(f"the next frontier outgrew its {self.capacity:,} entries: its duplicates snowballed; "
                               "run with dedup='stamp'")
        if int(c[L.SB_IN_A]) != 1:
            self.queues.reverse()
        self.size = int(c[L.SB_SIZE])
        self.heavy_next = bool(c[L.NEXT_HEAVY])
        self.step += done
        if self.size == 0:
            self.phase = self.after_frontier()
        from ..techniques.base import cycle_weights

        ends = log[:, L.LOG_CLOCK]
        return Batch(rows, cycle_weights(ends, int(c[L.SB_START]), int(ends[-1])))

    def _collect_relax(self) -> list[dict]:
        c = self.readback[1].tolist()
        if c[L.OVERFLOW] > 0:
            raise RuntimeError(f"the next frontier outgrew its {self.capacity:,} entries ({int(c[L.OVERFLOW]):,} "
                               "needed): its duplicates snowballed; run with dedup='stamp'")
        self._check_cycles(c)
        nxt = int(c[L.NEXT_SIZE])
        row = dict(phase="relax", frontier_in=self.size, relaxations=int(c[L.RELAXED]),
                   improvements=int(c[L.IMPROVED]), frontier_out=nxt, duplicates=int(c[L.DUPLICATES]),
                   bucket=self.bucket_of_step(), kernel="multi-block", launches=self.launches,
                   **self.extras(self, c))
        self.queues.reverse()
        self.size = nxt
        self.heavy_next = bool(c[L.NEXT_HEAVY])
        self.relax_steps += 1
        if nxt == 0:
            self.phase = self.after_frontier()
        return [row]

    def _collect_parents(self) -> list[dict]:
        self.converged = True
        return [dict(phase="parents", frontier_in=0, relaxations=0, improvements=0, frontier_out=0, duplicates=0,
                     bucket=None, kernel="multi-block", launches=self.launches, **self.idle_extras())]

    # Δ-stepping overrides these three.
    def after_frontier(self) -> str:
        """The phase once the frontier is empty."""
        return "parents"

    def bucket_of_step(self):
        return None

    def idle_extras(self) -> dict:
        """The technique's extras on a step that relaxed nothing."""
        return self.extras(self, None)

    # ------------------------------------------------------------------ negative cycles
    def _check_cycles(self, c) -> None:
        nxt = int(c[L.NEXT_SIZE])
        if c[L.NEGATIVE_LOOP]:
            self._cycle_error("a reached vertex has a self loop of negative weight", nxt)
        if c[L.BELOW_FLOOR]:
            self._cycle_error(f"a distance fell below {self.w.floor:g}, (n - 1) x the most negative weight, "
                              "shorter than any simple path", nxt)
        if self.cycle_bound is not None and self.relax_steps >= self.cycle_bound and c[L.IMPROVED]:
            self._cycle_error(f"distances still fell in relax step {self.relax_steps + 1}, after the {self.n - 1} "
                              "steps that settle every shortest path", nxt)

    def _cycle_error(self, reason: str, next_size: int = 0):
        ctx, g = self.ctx, self.ctx.graph
        dist, parents = self._host_tree()
        loop = self._negative_self_loop(dist)
        if loop is not None:
            cycle = [loop]
        else:  # the vertices improved last lead (by their parents) into the cycle
            starts = ctx.runtime.to_host(self.queues[1])[:min(next_size, self.capacity)]
            cycle = negative_cycle(g, self.w.weights, parents, list(starts) + list(np.flatnonzero(parents >= 0)))
        total = None if cycle is None else sum(self._arc(a, b) for a, b in zip(cycle, cycle[1:] + cycle[:1]))
        raise negative_cycle_error(g, source_text(g, ctx.source), cycle, total, reason)

    def _arc(self, a: int, b: int):
        from .paths import arc_weight

        return arc_weight(self.ctx.graph, self.w.weights, a, b)

    def _negative_self_loop(self, dist) -> int | None:
        g = self.ctx.graph
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.offsets))
        hit = (src == g.indices) & (self.w.weights < 0) & (dist[src] != self.w.inf)
        return int(src[np.argmax(hit)]) if hit.any() else None

    # ------------------------------------------------------------------ the answer
    def _host_tree(self) -> tuple[np.ndarray, np.ndarray]:
        ctx = self.ctx
        if self.packed:
            from kernels.sssp.steps import sssp_unpack

            ctx.launch_now(sssp_unpack, blocks_for(self.n, 256), 256, 0, self.paths, self.w.scalar(np.inf))
        return ctx.runtime.to_host(self.dist), ctx.runtime.to_host(self.parent)

    def result(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """(distances, parents, whether the host rebuilt the parents: zero-weight cycles)."""
        ctx = self.ctx
        dist, parents = ctx.runtime.to_host(self.dist), ctx.runtime.to_host(self.parent)
        parents, repaired = acyclic_parents(ctx.graph, self.w.weights, dist, parents, ctx.source, self.w.inf)
        return dist, parents, repaired


def dynamic_warp(limits, k1: int) -> Callable[[int], int]:
    """BFS-4K §5.2's virtual warp size for a frontier: pow2_floor(#ResThreads / |F|) in [K1, 32]."""
    res = limits.res_threads
    return lambda size: rules.virtual_warp_size(res, size, k1)
