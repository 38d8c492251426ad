"""edge-parallel: Jia et al.'s BFS, a thread per arc of the whole graph every level (the chapter's
§1.3 and §2.1, the multi-search paper's §IV, BFS-4K §3); kernels/edge_parallel.py."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Rows, Tree

from ..knobs import BLOCK_THREADS, KnobSet, knob
from ..stats import Extra
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, measured
from .operators.frontier import counters_cleared, declared, init_search

#: The session's derived array: the source of every arc (the COO edge list's first array).
ARC_SOURCES = "arc_sources"


def arc_sources(graph) -> tuple[np.ndarray]:
    """The source vertex of each arc, in CSR order (the destinations are the CSR's indices)."""
    degrees = np.diff(np.asarray(graph.offsets, dtype=np.int64))
    return (np.repeat(np.arange(graph.num_vertices, dtype=np.int32), degrees),)


@dataclass(frozen=True)
class EdgeParallelKnobs(KnobSet):
    owner = "edge-parallel"
    block_threads: int = knob(BLOCK_THREADS)


class EdgeParallel(BFSTechnique):
    technique = Technique.EDGE_PARALLEL
    Knobs = EdgeParallelKnobs
    extras = (Extra("arcs_inspected", "arcs whose source's level a thread read: every arc of the graph, "
                    "every level (Jia et al.'s edge parallelism)", "arcs"),)
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("A thread per arc of the whole graph, every level: each thread has exactly one edge (perfect "
                      "balance, whatever the degrees), but every level reads all |E| arcs, even when the frontier "
                      "holds a single vertex.")

    def check(self, graph, knobs, limits) -> None:
        if graph.num_arcs >= 2**31:
            raise ValueError(f"edge-parallel launches a thread per arc: {graph.num_arcs:,} arcs exceed "
                             "the 2**31 - 1 threads its kernel can index")

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import edge_parallel

        return declared(edge_parallel.edge_parallel_level) + counters_cleared()

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import common, edge_parallel

        self.ctx, self.k = ctx, edge_parallel
        n = ctx.graph.num_vertices
        (self.sources,) = ctx.derived(ARC_SOURCES, arc_sources)
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        width = 2 * edge_parallel.NUM_COUNTERS
        self.counters = ctx.buffer("counters", width, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", width, np.int64, host=True))
        # No queue: set_source's frontier entry lands in a one-entry scratch buffer.
        init_search(ctx, self.dist, self.parent, ctx.buffer("source_slot", 1, np.int32))
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        self.arcs = edge_parallel.Arcs(self.sources, ctx.graph_arrays[1])
        self.size, self.level = 1, 0

    def launch(self, go) -> None:
        ctx, block = self.ctx, self.ctx.knobs.block_threads
        arcs = ctx.graph.num_arcs
        go(self.k.edge_parallel_level, max(1, -(-arcs // block)), block, 0, self.arcs, Tree(self.dist, self.parent),
           Rows(self.counters, self.level % 2), self.level, ctx.instrument)

    def collect(self, ms: float) -> Batch:
        k, inst = self.k, self.ctx.instrument
        c = self.readback[1][(self.level % 2) * k.NUM_COUNTERS:][:k.NUM_COUNTERS]
        nxt = int(c[k.NEXT_SIZE])
        row = dict(frontier_in=self.size, edges_examined=measured(inst, c[k.EDGES]), discovered=nxt,
                   frontier_out=nxt, dup_generated=0, dup_detected=0, dup_undetected=0,  # no queue: none
                   kernel="multi-block", launches=1,  # the next level's counters are cleared by this one
                   arcs_inspected=measured(inst, c[k.ARCS]))
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([row])
