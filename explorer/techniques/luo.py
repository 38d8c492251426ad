"""luo-hierarchical: Luo, Wong & Hwu's UIUC-BFS (DAC 2010, §3; kernels/luo.py): one thread per
frontier vertex, hierarchical W/B/G frontier queues, and three kernel layers chosen by the frontier's
size: one block running many levels (block barriers), a grid-synchronised kernel running many
levels (one grid barrier a level; a cooperative launch of co-resident blocks), one launch a level.

Each step launches one layer; a block or grid launch runs until the frontier leaves its range and
is reported as one Batch, its levels weighted by the cycles block 0's SM counted for each (the SM
clock read as each level ends, kernels.primitives.clock64).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, QueuePair, Tree

from ..knobs import POW2_BLOCKS, KnobError, KnobSet, KnobSpec, knob
from ..stats import Extra, Kernel
from . import Technique
from .base import LAUNCH_LOG_LEVELS, Batch, BFSTechnique, LevelLoop, RunContext, cycle_weights
from .operators.frontier import counters_cleared, declared, frontier_queues, init_search

MAX_LOG = LAUNCH_LOG_LEVELS  # levels one block or grid launch may run (rows of its log: 1 MB)


@dataclass(frozen=True)
class LuoKnobs(KnobSet):
    owner = "luo-hierarchical"

    block_threads: int = knob(KnobSpec(
        "block_threads", "threads per block of every layer (the paper: 512, its GPU's largest block)", 512,
        choices=POW2_BLOCKS, section="Luo et al. §3.3"))
    block_threshold: int = knob(KnobSpec(
        "block_threshold", "the single-block layer runs levels whose frontier has at most this many vertices, "
        "kept in the block's shared memory, with a block barrier between levels (the paper: 512, a thread per "
        "frontier vertex in its one 512-thread block); larger values let each thread take several; 0 leaves "
        "the layer out", 512, low=0, high=8192, section="Luo et al. §3.3"))
    grid_threshold: int = knob(KnobSpec(
        "grid_threshold", "the grid-synchronised layer runs levels with block_threshold < |F| <= grid_threshold, "
        "one grid barrier a level; larger frontiers get one launch a level. 0 = the grid's threads, a thread "
        "per frontier vertex (the paper's rule: 15,360 on its GTX280, 30 SMs x 512); a value <= block_threshold "
        "leaves the layer out", 0, low=0, high=1 << 26, section="Luo et al. §3.3"))
    grid_blocks_per_sm: int = knob(KnobSpec(
        "grid_blocks_per_sm", "blocks per SM of the grid-synchronised kernel (the paper: 1, since its "
        "inter-block barrier needs every block resident); capped at the blocks the GPU holds at once, as a "
        "cooperative launch must be (the record's 'blocks' says how many ran)", 1, low=1, high=8,
        section="Luo et al. §3.3"))


class LuoHierarchical(BFSTechnique):
    technique = Technique.LUO_HIERARCHICAL
    Knobs = LuoKnobs
    kernel_kinds = (Kernel.SINGLE_BLOCK, Kernel.MULTI_BLOCK)
    extras = (
        Extra("layer", "the layer of Luo's kernel arrangement that ran the level (§3.3): 'block' (one block, "
              "block barriers between levels), 'grid' (the grid-synchronised kernel, one grid barrier a level) "
              "or 'per-level' (one launch a level)", kind=str),
        Extra("blocks", "thread blocks that ran the level", "blocks"),
    )
    # Every CUDA thread is a Python thread under the simulator: blocks of 32, the paper's rule for the
    # block threshold (a thread per frontier vertex), so that small graphs reach the grid layer too.
    simulator_knobs = {"block_threads": 32, "block_threshold": 32}
    test_knobs = (
        {"block_threshold": 0, "grid_threshold": 1},  # one launch a level only
        {"block_threshold": 0, "grid_threshold": 1 << 26},  # the grid layer only
        {"block_threshold": 2, "grid_threshold": 8},  # all three, switching often
    )

    def check(self, graph, knobs, limits) -> None:
        from kernels.luo import shared_bytes

        if knobs.block_threads > limits.max_threads_per_block:
            raise KnobError(f"knob block_threads={knobs.block_threads} exceeds this GPU's "
                            f"{limits.max_threads_per_block} threads per block")
        need = shared_bytes(knobs.block_threads, knobs.block_threshold)
        if need > limits.shared_room:
            raise KnobError(
                f"knob block_threshold={knobs.block_threshold} with block_threads={knobs.block_threads} needs "
                f"{need:,} bytes of shared memory (two frontiers of block_threshold entries and the warps' "
                f"W-queues), more than this GPU's {limits.shared_room:,}: lower block_threshold")

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import luo

        return declared(luo.luo_grid, luo.luo_block, luo.luo_level) + counters_cleared()

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import common, luo

        self.ctx, self.k = ctx, luo
        knobs, n = ctx.knobs, ctx.graph.num_vertices
        self.block_threads = knobs.block_threads
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        # A vertex enters a frontier once (compare-and-swap claims): n entries suffice.
        self.capacity = max(n, 1)
        self.queues = frontier_queues(ctx, self.capacity)
        self.state = ctx.buffer("state", luo.NUM_STATE, np.int64)
        self.readback = (self.state, ctx.buffer("state", luo.NUM_STATE, np.int64, host=True))
        self.log = ctx.buffer("log", (MAX_LOG, luo.LOG_FIELDS), np.int64)
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.out = luo.LuoOut(self.state, self.log, MAX_LOG)
        init_search(ctx, self.dist, self.parent, self.queues[0])
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.state)
        self.size, self.level, self.in_a = 1, 0, True
        self.block_shared = luo.shared_bytes(self.block_threads, knobs.block_threshold)
        self.grid_shared = luo.shared_bytes(self.block_threads)

        # Compile (or load) every layer's kernel before the clock starts, then size the grid: the
        # co-resident blocks depend on the compiled kernel's registers.
        self.grid_blocks, self.grid_threshold = 1, 0  # sized below
        for layer in (luo.BLOCK, luo.GRID, luo.PER_LEVEL):
            ctx.runtime.prepare(lambda go, layer=layer: self._launch(go, layer), ctx.compiling)
        fits = common.coresident_blocks(luo.luo_grid, self._args(), self.block_threads, self.grid_shared)
        if fits < 1:
            raise KnobError(f"knob block_threads={self.block_threads}: no block of the grid-synchronised kernel fits "
                            "on an SM of this GPU (registers or shared memory): choose fewer threads")
        self.grid_blocks = min(ctx.limits.sm_count * knobs.grid_blocks_per_sm, fits)
        self.grid_threshold = knobs.grid_threshold or self.grid_blocks * self.block_threads
        self.layer = self._layer()

    def _layer(self) -> int:
        return self.k.layer_for(self.size, self.ctx.knobs.block_threshold, self.grid_threshold)

    def _per_level_blocks(self) -> int:
        return max(1, -(-self.size // self.block_threads))  # a thread per frontier vertex

    def _args(self) -> tuple:
        """The kernels' argument groups (every layer takes the same)."""
        queues = QueuePair(*self.queues, self.in_a, self.size, self.capacity, self.level)
        knobs = self.k.LuoKnobs(self.ctx.knobs.block_threshold, self.grid_threshold, self.ctx.instrument)
        return self.graph, self.tree, queues, self.out, knobs

    def launch(self, go) -> None:
        self._launch(go, self.layer)

    def _launch(self, go, layer) -> None:
        k, T = self.k, self.block_threads
        if layer == k.BLOCK:
            go(k.luo_block, 1, T, self.block_shared, *self._args())
        elif layer == k.GRID:
            go.cooperative(k.luo_grid, self.grid_blocks, T, self.grid_shared, *self._args())
        else:
            go(k.luo_level, self._per_level_blocks(), T, self.grid_shared, *self._args())

    def collect(self, ms: float) -> Batch:
        k, st = self.k, self.readback[1]
        layer = self.layer
        if layer == k.PER_LEVEL:
            slot = ((self.level + 1) % k.NUM_SLOTS) * k.SLOT_FIELDS
            nxt = int(st[slot + k.SLOT_COUNT])
            rows = [self._row(self.size, st[slot + k.SLOT_EDGES], nxt, layer, self._per_level_blocks(), 1)]
            weights = None
            nlev, self.in_a = 1, not self.in_a
        else:
            nlev, nxt = int(st[k.S_LEVELS]), int(st[k.S_SIZE])
            log = self.ctx.runtime.to_host(self.log[:nlev])
            blocks = 1 if layer == k.BLOCK else self.grid_blocks
            rows = [self._row(r[k.L_FRONTIER], r[k.L_EDGES], r[k.L_NEXT], layer, blocks, int(i == 0))
                    for i, r in enumerate(log.tolist())]
            weights = cycle_weights(log[:, k.L_CLOCK], st[k.S_CLOCK_START], st[k.S_CLOCK_END])
            if layer == k.GRID and nlev % 2:
                self.in_a = not self.in_a  # the grid's queues swap every level; the block keeps its queue
        self.level += nlev
        self.size = nxt
        self.converged = nxt == 0
        self.layer = self._layer()
        return Batch(rows, weights)

    def _row(self, frontier, edges, nxt, layer, blocks, launches) -> dict:
        k = self.k
        return dict(frontier_in=int(frontier), edges_examined=int(edges) if self.ctx.instrument else None,
                    discovered=int(nxt), frontier_out=int(nxt),
                    dup_generated=0, dup_detected=0, dup_undetected=0,  # compare-and-swap claims: none
                    kernel=Kernel.SINGLE_BLOCK if layer == k.BLOCK else Kernel.MULTI_BLOCK, launches=launches,
                    layer=k.LAYER_NAMES[layer], blocks=int(blocks))
