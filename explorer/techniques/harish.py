"""harish: Harish & Narayanan's queue-free BFS, a thread per vertex scanning the whole vertex array
every level (the chapter's §2.1, BFS-4K §3; also the CS406 report's layer-based top-down, §5.1);
kernels/scan.py."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, Rows, Tree

from ..knobs import BLOCK_THREADS, KnobSet, knob
from ..stats import Extra
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, measured
from .operators.frontier import counters_cleared, declared, init_search


@dataclass(frozen=True)
class HarishKnobs(KnobSet):
    owner = "harish"
    block_threads: int = knob(BLOCK_THREADS)


class Harish(BFSTechnique):
    technique = Technique.HARISH
    Knobs = HarishKnobs
    extras = (Extra("vertices_scanned", "vertices whose level a thread read: all of them, every level "
                    "(Harish & Narayanan keep no frontier queue)", "vertices"),)
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("Harish scans every vertex every level: only the frontier's threads expand (the table), all "
                      "the others just read their vertex's level. Levels x |V| reads: cheap on a short, wide search, "
                      "ruinous on a long, thin one (try gen:grid2d:rows=2,cols=60).")

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import scan

        return declared(scan.harish_level) + counters_cleared()

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import scan

        self.ctx, self.k = ctx, scan
        n = ctx.graph.num_vertices
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.counters = ctx.buffer("counters", 2 * scan.NUM_COUNTERS, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", 2 * scan.NUM_COUNTERS, np.int64, host=True))
        # No queue: set_source's frontier entry lands in a one-entry scratch buffer.
        init_search(ctx, self.dist, self.parent, ctx.buffer("source_slot", 1, np.int32))
        from kernels import common

        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.size, self.level = 1, 0

    def launch(self, go) -> None:
        ctx, block = self.ctx, self.ctx.knobs.block_threads
        n = ctx.graph.num_vertices
        go(self.k.harish_level, max(1, -(-n // block)), block, 0, self.graph, self.tree,
           Rows(self.counters, self.level % 2), self.level, ctx.instrument)

    def collect(self, ms: float) -> Batch:
        k, inst = self.k, self.ctx.instrument
        c = self.readback[1][(self.level % 2) * k.NUM_COUNTERS:][:k.NUM_COUNTERS]
        nxt = int(c[k.NEXT_SIZE])
        row = dict(frontier_in=self.size, edges_examined=measured(inst, c[k.EDGES]), discovered=nxt,
                   frontier_out=nxt, dup_generated=0, dup_detected=0, dup_undetected=0,  # no queue: none
                   kernel="multi-block", launches=1,  # the next level's counters are cleared by this one
                   vertices_scanned=measured(inst, c[k.SCANNED]))
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([row])
