"""The direction operator: what the techniques that change direction share. The reverse CSR a
bottom-up step walks on a directed graph and their record extras (bottom-up, hybrid,
direction-optimizing, the CPU techniques), the CS406 report's switching rule (hybrid, cpu-hybrid),
and the level loop of bottom-up and hybrid, one launch a level: a top-down or a bottom-up step on
a queue, bitmap or distance frontier (kernels/direction.py; top-down: kernels/topdown.py's queue
kernel, kernels/scan.py's distance-testing one), its counters turned into a record.
(direction-optimizing runs many levels a launch: explorer/techniques/direction_optimizing.py.)

A technique says, per level, which `Step` to run (`DirectionLoop.plan`); the loop converts the
frontier on the device when the step reads another form than the last step wrote (queue <->
bitmap; the distance array holds every level's frontier as dist == level, so it needs none).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, Level, Rows, Tree

from ...device import blocks_for
from ...knobs import KnobSpec
from ...stats import Direction, Extra
from ..base import Batch, LevelLoop, RunContext, measured
from .frontier import frontier_queues, init_search

FRONTIER_FORM = Extra("frontier_form", "how the level read its frontier: queue (a list of vertices), bitmap "
                      "(a bit a vertex) or distance (dist == level, the CS406 report's layer-based form)", kind=str)
FRONTIER_CONVERTED = Extra("frontier_converted", "the level first converted its frontier into the form it "
                           "reads (a bitmap from a queue or the distances, a queue from a bitmap), where the "
                           "level runs", kind=bool)
VERTICES_CHECKED = Extra("vertices_checked", "unvisited vertices that looked for a parent among their "
                         "in-neighbours (bottom-up; 0 in a top-down level)", "vertices")


def reverse_csr(graph) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[n+1], indices int32[m]) of the in-edges: u is in v's list for each arc u -> v."""
    n = graph.num_vertices
    dst = np.asarray(graph.indices)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(graph.offsets))
    indices = src[np.argsort(dst, kind="stable")]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=offsets[1:])
    return offsets, indices.astype(np.int32, copy=False)


def in_edges(ctx: RunContext) -> tuple:
    """The in-edges where the runtime reads them: an undirected graph's own arrays, else its
    reverse CSR, built once a session."""
    if not ctx.graph.directed:
        return ctx.graph_arrays
    return ctx.derived("reverse-csr", reverse_csr)


def in_degree(graph, v: int) -> int:
    if not graph.directed:
        return int(graph.offsets[v + 1] - graph.offsets[v])
    return int(np.count_nonzero(np.asarray(graph.indices) == v))


@dataclass(frozen=True)
class Step:
    """What one level runs: its direction and the frontier form its kernel reads. A bottom-up step
    writes the next frontier as a bitmap (`write_bits`), a queue (`write_queue`), or only into
    the distances; a top-down step on a queue writes a queue, on the distances only distances."""

    direction: Direction
    form: str
    write_bits: bool = False
    write_queue: bool = False

    def writes(self) -> str:
        if self.direction is Direction.TOP_DOWN:
            return self.form
        return "bitmap" if self.write_bits else "queue" if self.write_queue else "distance"


#: The CS406 report's switch between the directions (hybrid, cpu-hybrid).
DIVISOR = KnobSpec("divisor", "bottom-up when the frontier holds at least |V|/divisor vertices, top-down "
                   "below (the report's rule, after Belova & Ouyang: 32)", 32, low=1, high=1024,
                   section="CS406 report §3.1.3, §5")


def bottom_up_now(frontier: int, vertices: int, divisor: int) -> bool:
    """The report's rule: top-down while |F| < |V| / divisor."""
    return frontier * divisor >= vertices


TOP_DOWN_QUEUE = Step(Direction.TOP_DOWN, "queue")
TOP_DOWN_DISTANCE = Step(Direction.TOP_DOWN, "distance")


class DirectionLoop(LevelLoop):
    """The level loop of bottom-up and hybrid; a subclass plans each step.

    State between steps: `size` (the frontier's vertices) and `form` (where the last step left
    the frontier: queue or bitmap, besides the distances). `launch` changes no state (the engine
    calls it once to compile, once to run); `collect` moves to the next level and asks `plan()`
    for its step.
    """

    def __init__(self, ctx: RunContext, impl):
        from kernels import direction, scan, topdown

        self.ctx, self.impl, self.kd, self.kt, self.ks = ctx, impl, direction, topdown, scan
        n = ctx.graph.num_vertices
        self.n, self.words = n, max(1, -(-n // 32))
        self.block_threads = ctx.knobs.block_threads
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.stamp = ctx.buffer("stamp", n, np.int32)
        self.capacity = max(n, 1)
        self.queues = frontier_queues(ctx, self.capacity)
        self.bits = [ctx.buffer("bits_a", self.words, np.uint32), ctx.buffer("bits_b", self.words, np.uint32)]
        # The three kernel families' counters side by side (topdown_queue's, harish_level's two
        # rows, this module's): one memset, one read-back.
        td, ks = topdown.NUM_COUNTERS, 2 * scan.NUM_COUNTERS
        total = td + ks + direction.NUM_COUNTERS
        counters = ctx.buffer("direction_counters", total, np.int64)
        self.td_counters = ctx.view("direction_td_counters", counters, 0, td)
        self.harish_counters = ctx.view("direction_harish_counters", counters, td, td + ks)
        self.counters = ctx.view("direction_own_counters", counters, td + ks, total)
        self.readback = (counters, ctx.buffer("direction_counters", total, np.int64, host=True))
        self.graph, self.in_graph = Graph(*ctx.graph_arrays), Graph(*in_edges(ctx))
        self.tree = Tree(self.dist, self.parent)
        init_search(ctx, self.dist, self.parent, self.queues[0], self.stamp)
        self.level, self.size, self.form = 0, 1, "queue"
        self.step = None
        self.step = self.plan()

    def plan(self) -> Step:
        """The next level's step, from `size`, `form` and the last `step`."""
        raise NotImplementedError

    def _converts(self, step: Step) -> bool:
        return step.form in ("queue", "bitmap") and step.form != self.form

    # ---- one step (timed by the engine)
    def launch(self, go) -> None:
        ctx, kd, kt, s, b = self.ctx, self.kd, self.kt, self.step, self.block_threads
        q, bits = self.queues, self.bits
        go.zero(self.readback[0])
        if self._converts(s) and s.form == "bitmap":
            go.zero(bits[0])
            go(kd.queue_to_bitmap, blocks_for(self.size, b), b, 0, q[0], self.size, bits[0])
        elif self._converts(s):
            go(kd.bitmap_to_queue, blocks_for(self.words * 32, b), b, 0, bits[0], self.n, q[0], self.counters)
        if s.direction is Direction.BOTTOM_UP:
            go(kd.bottom_up, blocks_for(self.words * 32, b), b, 0, self.in_graph, self.tree,
               kd.Bitmaps(bits[0], bits[1]), q[1], self.counters,
               kd.BottomUpStep(self.level, s.form == "bitmap", s.write_bits, s.write_queue, ctx.instrument))
        elif s.form == "queue":
            go(kt.topdown_queue, blocks_for(self.size, b), b, 0, self.graph, self.tree,
               Level(q[0], self.size, q[1], self.capacity, self.level), self.td_counters, self.stamp, ctx.instrument)
        else:  # row 0 of harish_level's two (it clears row 1, which the memset cleared anyway)
            go(self.ks.harish_level, blocks_for(self.n, b), b, 0, self.graph, self.tree, Rows(self.harish_counters, 0),
               self.level, ctx.instrument)

    def _launches(self, s: Step, converted: bool) -> int:
        count = 2  # the counters' memset and the level's kernel
        if converted:
            count += 2 if s.form == "bitmap" else 1  # memset + queue_to_bitmap, or bitmap_to_queue
        return count

    def collect(self, ms: float) -> Batch:
        host, kd, kt, ks, inst, s = self.readback[1], self.kd, self.kt, self.ks, self.ctx.instrument, self.step
        td, harish = host[:kt.NUM_COUNTERS], host[kt.NUM_COUNTERS:kt.NUM_COUNTERS + ks.NUM_COUNTERS]
        own = host[kt.NUM_COUNTERS + 2 * ks.NUM_COUNTERS:]
        queue_td = s.direction is Direction.TOP_DOWN and s.form == "queue"
        if queue_td:
            nxt, edges, dups = int(td[kt.NEXT_SIZE]), td[kt.EDGES], int(td[kt.DUP_GENERATED])
        elif s.direction is Direction.TOP_DOWN:
            nxt, edges, dups = int(harish[ks.NEXT_SIZE]), harish[ks.EDGES], 0  # CAS claims: none
        else:
            nxt, edges, dups = int(own[kd.NEXT_SIZE]), own[kd.EDGES], 0  # a vertex's own thread: none
        converted = self._converts(s)
        extras = dict(frontier_form=s.form, frontier_converted=converted,
                      vertices_checked=measured(inst, own[kd.CHECKED]))
        row = dict(frontier_in=self.size, edges_examined=measured(inst, edges), discovered=nxt,
                   frontier_out=nxt, dup_generated=measured(inst, dups), dup_detected=0,
                   dup_undetected=measured(inst, dups), kernel="multi-block", direction=s.direction,
                   launches=self._launches(s, converted))
        row.update({e.name: extras[e.name] for e in self.impl.extras})
        # Move to the next level.
        wrote = s.writes()
        if wrote == "queue":
            self.queues.reverse()
        elif wrote == "bitmap":
            self.bits.reverse()
        if wrote != "distance":
            self.form = wrote
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        if not self.converged:
            self.step = self.plan()
        return Batch([row])
