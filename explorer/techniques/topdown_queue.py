"""topdown-queue: one thread per frontier vertex, a compare-and-swap claim, one launch a level
(the CS406 report's frontier-based top-down BFS; kernels/topdown.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, Level, Tree

from ..knobs import BLOCK_THREADS, KnobSet, knob
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, measured
from .operators.frontier import declared, frontier_queues, init_search


@dataclass(frozen=True)
class TopdownQueueKnobs(KnobSet):
    owner = "topdown-queue"
    block_threads: int = knob(BLOCK_THREADS)


class TopdownQueue(BFSTechnique):
    technique = Technique.TOPDOWN_QUEUE
    Knobs = TopdownQueueKnobs
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("A thread per frontier vertex walks its whole adjacency list (see the table): a hub keeps one "
                      "thread busy while the others idle. The compare-and-swap claim lets one thread win each vertex, "
                      "so where two frontier arcs meet (magenta rings) no duplicate is born.")

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import topdown

        return declared(topdown.topdown_queue)

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import topdown

        self.ctx, self.k = ctx, topdown
        n = ctx.graph.num_vertices
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.stamp = ctx.buffer("stamp", n, np.int32)
        self.capacity = max(n, 1)
        self.queues = frontier_queues(ctx, self.capacity)
        self.counters = ctx.buffer("counters", topdown.NUM_COUNTERS, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", topdown.NUM_COUNTERS, np.int64, host=True))
        init_search(ctx, self.dist, self.parent, self.queues[0], self.stamp)
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.size, self.level = 1, 0

    def launch(self, go) -> None:
        ctx, block = self.ctx, self.ctx.knobs.block_threads
        go.zero(self.counters)
        go(self.k.topdown_queue, max(1, -(-self.size // block)), block, 0, self.graph, self.tree,
           Level(self.queues[0], self.size, self.queues[1], self.capacity, self.level), self.counters, self.stamp,
           ctx.instrument)

    def collect(self, ms: float) -> Batch:
        c, k, inst = self.readback[1], self.k, self.ctx.instrument
        nxt = int(c[k.NEXT_SIZE])
        row = dict(frontier_in=self.size, edges_examined=measured(inst, c[k.EDGES]), discovered=nxt,
                   frontier_out=nxt, dup_generated=measured(inst, c[k.DUP_GENERATED]),
                   dup_detected=0, dup_undetected=measured(inst, c[k.DUP_GENERATED]), kernel="multi-block",
                   launches=2)  # the memset of the counters and the level's kernel
        self.queues.reverse()
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([row])
