"""virtual-warp: Hong et al.'s static virtual warps, a fixed group of W threads per vertex (the
chapter's §5.1.2 and Algorithm 8, BFS-4K §3 and Table 2); kernels/virtual_warp.py."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, Level, Rows, Tree

from ..knobs import BLOCK_THREADS, KnobSet, KnobSpec, knob
from ..stats import Extra
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, measured
from .operators.expand import W
from .operators.frontier import counters_cleared, declared, frontier_queues, init_search

FRONTIER = KnobSpec(
    "frontier", "how virtual warps find the frontier: 'scan' gives every vertex a virtual warp that reads "
    "its level, as Hong et al. (work O(V·D + E), BFS-4K Table 2); 'queue' gives one to each entry of a "
    "frontier queue (work O(V + E); beyond the paper)", "scan", choices=("scan", "queue"),
    kind=str, section="chapter §2.1, §5.1.2; BFS-4K Table 2")


@dataclass(frozen=True)
class VirtualWarpKnobs(KnobSet):
    owner = "virtual-warp"
    W: int = knob(W)
    frontier: str = knob(FRONTIER)
    block_threads: int = knob(BLOCK_THREADS)


class VirtualWarp(BFSTechnique):
    technique = Technique.VIRTUAL_WARP
    Knobs = VirtualWarpKnobs
    extras = (
        Extra("warp_size", "(virtual) warp size: threads sharing one frontier vertex (static: the knob W)",
              "threads"),
        Extra("vertices_scanned", "vertices (frontier='scan': all of them) or queue entries "
              "(frontier='queue') whose level a virtual warp read", "vertices"),
    )
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("W threads share each vertex, lane l taking edges l, l+W, ...: with W above the degrees most "
                      "lanes in the table have no edge; W = 1 is Harish. Try W=1, W=4 and W=32 on one graph.")
    test_knobs = ({"frontier": "queue", "W": 1}, {"frontier": "queue", "W": 4})

    def check(self, graph, knobs, limits) -> None:
        if graph.num_vertices * knobs.W >= 2**31:
            raise ValueError(f"virtual-warp launches W threads per vertex: {graph.num_vertices:,} vertices x "
                             f"W={knobs.W} exceed the 2**31 - 1 threads its kernel can index; choose a smaller W")

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import virtual_warp

        return declared(virtual_warp.virtual_warp_level) + counters_cleared()

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import common, virtual_warp

        self.ctx, self.k = ctx, virtual_warp
        n = ctx.graph.num_vertices
        self.queue = ctx.knobs.frontier == "queue"
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        # Scanning needs no queue (nor duplicate stamps): one-entry scratch buffers stand in for them.
        self.capacity = max(n, 1) if self.queue else 1
        self.queues = frontier_queues(ctx, self.capacity)
        self.stamp = ctx.buffer("stamp", n if self.queue else 1, np.int32)
        width = 2 * virtual_warp.NUM_COUNTERS
        self.counters = ctx.buffer("counters", width, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", width, np.int64, host=True))
        init_search(ctx, self.dist, self.parent, self.queues[0], *((self.stamp,) if self.queue else ()))
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.size, self.level = 1, 0

    def launch(self, go) -> None:
        ctx, knobs = self.ctx, self.ctx.knobs
        items = self.size if self.queue else ctx.graph.num_vertices
        threads = items * knobs.W
        go(self.k.virtual_warp_level, max(1, -(-threads // knobs.block_threads)), knobs.block_threads, 0,
           self.graph, self.tree, Level(self.queues[0], self.size, self.queues[1], self.capacity, self.level),
           Rows(self.counters, self.level % 2),
           self.k.VirtualWarps(knobs.W, self.queue, ctx.instrument, self.stamp))

    def collect(self, ms: float) -> Batch:
        k, inst = self.k, self.ctx.instrument
        c = self.readback[1][(self.level % 2) * k.NUM_COUNTERS:][:k.NUM_COUNTERS]
        nxt = int(c[k.NEXT_SIZE])
        dups = measured(inst, c[k.DUP_GENERATED]) if self.queue else 0  # scanning keeps no queue: none
        row = dict(frontier_in=self.size, edges_examined=measured(inst, c[k.EDGES]), discovered=nxt,
                   frontier_out=nxt, dup_generated=dups, dup_detected=0, dup_undetected=dups,
                   kernel="multi-block", launches=1,  # the next level's counters are cleared by this one
                   warp_size=self.ctx.knobs.W, vertices_scanned=measured(inst, c[k.SCANNED]))
        if self.queue:
            self.queues.reverse()
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([row])
