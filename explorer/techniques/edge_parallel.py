"""edge-parallel: Jia et al.'s BFS, a thread per arc of the whole graph every level (the chapter's
§1.3 and §2.1, the multi-search paper's §IV, BFS-4K §3); kernels/edge_parallel.py."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Rows, Tree

from ..knobs import BLOCK_THREADS, KnobSet, knob
from ..stats import Extra
from . import Technique
from .base import BFSTechnique, LevelLoop, RunContext
from .operators.frontier import QueueFreeLoop, counters_cleared, declared

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


class _Loop(QueueFreeLoop):
    def __init__(self, ctx: RunContext):
        from kernels import edge_parallel

        super().__init__(ctx, edge_parallel, ("arcs_inspected", edge_parallel.ARCS))
        (self.sources,) = ctx.derived(ARC_SOURCES, arc_sources)
        self.arcs = edge_parallel.Arcs(self.sources, ctx.graph_arrays[1])

    def launch(self, go) -> None:
        ctx, block = self.ctx, self.ctx.knobs.block_threads
        arcs = ctx.graph.num_arcs
        go(self.k.edge_parallel_level, max(1, -(-arcs // block)), block, 0, self.arcs, Tree(self.dist, self.parent),
           Rows(self.counters, self.level % 2), self.level, ctx.instrument)
