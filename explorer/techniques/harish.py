"""harish: Harish & Narayanan's queue-free BFS, a thread per vertex scanning the whole vertex array
every level (the chapter's §2.1, BFS-4K §3; also the CS406 report's layer-based top-down, §5.1);
kernels/scan.py."""
from __future__ import annotations

from dataclasses import dataclass

from kernels.args import Graph, Rows, Tree

from ..knobs import BLOCK_THREADS, KnobSet, knob
from ..stats import Extra
from . import Technique
from .base import BFSTechnique, LevelLoop, RunContext
from .operators.frontier import QueueFreeLoop, counters_cleared, declared


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


class _Loop(QueueFreeLoop):
    def __init__(self, ctx: RunContext):
        from kernels import scan

        super().__init__(ctx, scan, ("vertices_scanned", scan.SCANNED))
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)

    def launch(self, go) -> None:
        ctx, block = self.ctx, self.ctx.knobs.block_threads
        n = ctx.graph.num_vertices
        go(self.k.harish_level, max(1, -(-n // block)), block, 0, self.graph, self.tree,
           Rows(self.counters, self.level % 2), self.level, ctx.instrument)
