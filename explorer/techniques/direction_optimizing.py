"""direction-optimizing: Beamer, Asanović & Patterson, "Direction-Optimizing Breadth-First
Search" (SC'12). Top-down while the frontier's out-edges are few against the unvisited vertices'
edges; bottom-up once m_f > m_u / α; back to top-down once the frontier shrinks below n / β.

Two kinds of step, each one launch of many levels (the host reads back once a step, not once a
level):

* BFS-4K's single-block kernel, or its cluster form (kernels/bfs4k, knobs K1, K4, K5, K7,
  single_block_threads, cluster, visited), runs the levels whose frontier is below its
  F_Threshold and holds no heavy vertex, top-down: the start of every search and the long thin
  tails of road networks and meshes, where a level costs a few µs.
* A persistent cooperative grid (kernels/direction.py, do_grid) runs the others, choosing each
  level's direction on the device by Beamer's rule from m_f, m_u and n_f, which its own claims
  count: top-down by warps spread over their frontier vertices' edges (edge-discover) with heavy
  vertices' edges spread over the whole grid, bottom-up by a thread per unvisited vertex whose
  warp takes over long in-edge lists, frontiers converted between queue and bitmap on the device.
  It hands the search back to the single block once `handoff` levels in a row left a small
  top-down frontier (knob `handoff`).

Each record carries the rule's quantities (m_f, m_u, n_f) as they stood when the level's
direction was chosen; the single block's levels are top-down by its size rule (F_Threshold).
On a directed graph every level runs in the grid (the single block does not count in-degrees).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, QueuePair, signature

from ..knobs import POW2_BLOCKS, KnobError, KnobSet, KnobSpec, knob
from ..stats import Direction, Extra, Kernel
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, cycle_weights, measured
from .operators.bfs4k import levels as bfs4k_levels
from .operators.bfs4k.knobs import BFS4KKnobs
from .operators.bfs4k.policy import single_block_layout
from .operators.direction import FRONTIER_CONVERTED, FRONTIER_FORM, VERTICES_CHECKED, in_degree, in_edges

MAX_LOG = 256  # levels one grid launch may run (rows of its log, read back with its state)

ALPHA = KnobSpec("alpha", "α: switch top-down -> bottom-up when the frontier's out-edges m_f exceed m_u/α, "
                 "m_u the in-edges of the unvisited vertices (larger: bottom-up sooner)", 14, low=1,
                 high=1_000_000, section="Beamer et al. SC'12 §4 (C_TB = m_u/α)")
BETA = KnobSpec("beta", "β: switch bottom-up -> top-down when the frontier, shrinking, holds fewer than n/β "
                "vertices (larger: bottom-up longer)", 24, low=1, high=1_000_000,
                section="Beamer et al. SC'12 §4 (C_BT = n/β)")
GRID_THREADS = KnobSpec(
    "block_threads", "threads per block of the persistent grid that runs the levels the single block does not "
    "(at most 64 registers a thread, so 1024 threads fill an SM)", 1024, choices=POW2_BLOCKS,
    section="Beamer et al. §4, as one cooperative launch")
BLOCKS_PER_SM = KnobSpec(
    "blocks_per_sm", "blocks per SM of the persistent grid; 0: as many as the GPU holds at once, which a "
    "cooperative launch may not exceed", 0, low=0, high=8, section="Beamer et al. §4, as one cooperative launch")
HEAVY_DEGREE = KnobSpec(
    "heavy_degree", "top-down in the grid: a frontier vertex of at least this degree has its edges walked by the "
    "whole grid as one flat range after the level's other vertices (BFS-4K's heavy vertices without a child "
    "launch); the others by their warp's lanes spread over their edges (edge-discover). A frontier holding one "
    "leaves BFS-4K's single block for the grid", 1024, low=32,
    high=1 << 30, section="BFS-4K §5.3, §5.4")
SOLO_EDGES = KnobSpec(
    "solo_edges", "bottom-up in the grid: in-edges an unvisited vertex's own thread checks alone before its warp "
    "takes the rest of the list, 32 entries a round, up to the first in the frontier", 8, low=1, high=1 << 20,
    section="Beamer et al. §3 (bottom-up's early exit), warp-cooperative")
HANDOFF = KnobSpec(
    "handoff", "the grid hands the search to BFS-4K's single block once this many levels in a row left a frontier "
    "below F_Threshold without a heavy vertex, the next level top-down: long thin tails (road networks) then run "
    "at a few µs a level, short ones (Kronecker) stay in the grid, a host round trip cheaper; 0: never",
    4, low=0, high=64, section="Beamer et al. §4 with BFS-4K §5.5")


@dataclass(frozen=True)
class DirectionOptimizingKnobs(KnobSet):
    owner = "direction-optimizing"
    alpha: int = knob(ALPHA)
    beta: int = knob(BETA)
    block_threads: int = knob(GRID_THREADS)
    blocks_per_sm: int = knob(BLOCKS_PER_SM)
    heavy_degree: int = knob(HEAVY_DEGREE)
    solo_edges: int = knob(SOLO_EDGES)
    handoff: int = knob(HANDOFF)
    # BFS-4K's knobs of its single-block kernel, for the top-down levels it runs.
    K1: int = knob(BFS4KKnobs.spec("K1"))
    K4: int = knob(BFS4KKnobs.spec("K4"))
    K5: int = knob(BFS4KKnobs.spec("K5"))
    K7: int = knob(BFS4KKnobs.spec("K7"))
    single_block_threads: int = knob(BFS4KKnobs.spec("single_block_threads"))
    cluster: int = knob(BFS4KKnobs.spec("cluster"))
    visited: str = knob(BFS4KKnobs.spec("visited"))

    def check(self) -> None:
        self.top_down()  # BFS-4K's cross-knob rules (a cluster needs visited='shared')

    def top_down(self) -> BFS4KKnobs:
        """BFS-4K's knobs for the single-block levels: claims by compare-and-swap (no duplicates,
        so no filter); a frontier holding a vertex of heavy_degree or more (at least a block's
        threads: K3 = heavy_degree / block, however many such vertices: K2 at its maximum) leaves
        the block for the grid, which spreads that vertex's edges over every SM, where the block
        would leave them to one warp (a Kronecker hub of 20,000 edges: 1.7 ms on an H100); the
        rest BFS-4K's defaults."""
        k2, k3 = BFS4KKnobs.spec("K2").high, BFS4KKnobs.spec("K3").high
        return BFS4KKnobs(K1=self.K1, K2=k2, K3=min(k3, max(1, self.heavy_degree // self.single_block_threads)),
                          K4=self.K4, K5=self.K5, K7=self.K7, claim="atomic", dedup="none", visited=self.visited,
                          cluster=self.cluster, single_block_threads=self.single_block_threads)


def next_direction(current: Direction, m_f: int, m_u: int, n_f: int, prev_n_f: int, n: int, alpha: int,
                   beta: int) -> Direction:
    """Beamer's rule (kernels.direction.beamer_bottom_up, which the grid applies on the device)."""
    from kernels.direction import beamer_bottom_up

    bu = beamer_bottom_up(current is Direction.BOTTOM_UP, m_f, m_u, n_f, prev_n_f, n, alpha, beta)
    return Direction.BOTTOM_UP if bu else Direction.TOP_DOWN


def uses_single_block(graph, knobs) -> bool:
    return knobs.K5 > 0 and not graph.directed


class DirectionOptimizing(BFSTechnique):
    technique = Technique.DIRECTION_OPTIMIZING
    Knobs = DirectionOptimizingKnobs
    kernel_kinds = (Kernel.MULTI_BLOCK, Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    directions = (Direction.TOP_DOWN, Direction.BOTTOM_UP)
    extras = (
        FRONTIER_FORM, FRONTIER_CONVERTED, VERTICES_CHECKED,
        Extra("m_f", "Beamer's m_f: out-edges of the frontier, when the level's direction was chosen", "edges"),
        Extra("m_u", "Beamer's m_u: in-edges of the unvisited vertices, when the level's direction was chosen",
              "edges"),
        Extra("n_f", "Beamer's n_f: vertices in the frontier", "vertices"),
        Extra("heavy_vertices", "top-down: frontier vertices whose edges the whole grid walked as one flat range "
              "(knob heavy_degree; BFS-4K's §5.3 without a child launch)", "vertices"),
        # How a top-down level spread its frontier over lanes: BFS-4K's in the single block, edge-discover
        # (warps of 32) in the grid; bottom-up: a thread per vertex (1).
        *(e for e in bfs4k_levels.EXTRAS if e.name in ("warp_size", "edge_discover")),
    )
    # Every CUDA thread is a Python thread under the simulator: a grid of two blocks of 32.
    simulator_knobs = {"block_threads": 32, "blocks_per_sm": 1, "single_block_threads": 32}
    classroom_note = ("Watch the direction change: top-down while the frontier's edges m_f are few against the "
                      "unvisited vertices' m_u, bottom-up through the fat middle levels (m_f > m_u/alpha), top-down "
                      "again once the frontier shrinks below n/beta. Small frontiers run in BFS-4K's single block "
                      "(the kernel column), the others in one persistent grid that decides each level itself.")
    test_knobs = (
        {"alpha": 1_000_000, "beta": 1},  # bottom-up at once, top-down as soon as it shrinks
        {"K5": 0},  # the grid alone
        {"K5": 0, "heavy_degree": 32, "solo_edges": 1},  # heavy vertices' flat range; warps over in-edge lists
        {"handoff": 1},  # small frontiers go back to the single block at once
        {"visited": "shared"},
        {"visited": "shared", "cluster": 16},  # the largest cluster
    )

    def check(self, graph, knobs, limits) -> None:
        if knobs.block_threads > limits.max_threads_per_block:
            raise KnobError(f"knob block_threads={knobs.block_threads} exceeds this GPU's "
                            f"{limits.max_threads_per_block} threads per block")
        if uses_single_block(graph, knobs):
            single_block_layout(knobs.top_down(), limits, graph.num_vertices)

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import direction as kd

        # The graph decides which grid runs (directed or not) and whether the single block does
        # (undirected only): the undirected case's kernels first.
        single = bfs4k_levels.level_signatures(knobs.top_down(), instrument, multi_block=False)
        grids = [(f"do_grid_{'directed' if d else 'undirected'}", kd.grid_kernel(d, bool(instrument)),
                  signature(kd.grid_kernel(d, bool(instrument)))) for d in (False, True)]
        return single[:1] + grids + single[1:]

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


class _Loop(LevelLoop):
    def __init__(self, ctx: RunContext):
        from kernels import direction as kd
        from kernels.common import coresident_blocks

        g, k = ctx.graph, ctx.knobs
        n, s = g.num_vertices, ctx.source
        self.ctx, self.kd = ctx, kd
        self.single = uses_single_block(g, k)
        self.td_knobs = k.top_down() if self.single else k.top_down().replace(K5=0)
        # BFS-4K's levels for the single-block steps (and the tree and queues the grid shares);
        # its multi-block levels never launch: the grid runs those, so nothing of them compiles.
        self.td = bfs4k_levels.BFS4KLevels(dataclasses.replace(ctx, knobs=self.td_knobs), multi_block=False)
        self.bits = ctx.buffer("do_bits", 3 * max(1, -(-n // 32)), np.uint32)
        size = kd.G_LOG + MAX_LOG * kd.LOG_FIELDS
        self.out = ctx.buffer("do_out", size, np.int64)
        self.state = ctx.view("do_state", self.out, 0, kd.G_LOG)
        self.grid_readback = (self.out, ctx.buffer("do_out", size, np.int64, host=True))
        heavy_cap = max(1, min(n, g.num_arcs // k.heavy_degree + 1))
        self.heavy_v = ctx.buffer("do_heavy_v", heavy_cap, np.int32)
        self.heavy_off = ctx.buffer("do_heavy_off", heavy_cap, np.int64)
        self.in_graph = Graph(*in_edges(ctx))
        self.arrays = kd.GridArrays(self.bits, self.heavy_v, self.heavy_off, self.out)
        threshold = k.single_block_threads * k.K5 * k.cluster if self.single else 0
        self.grid_knobs = kd.GridKnobs(k.alpha, k.beta, threshold, k.handoff if self.single else 0,
                                       self.td_knobs.K3 * k.single_block_threads, k.heavy_degree, k.solo_edges)
        self.kernel = kd.grid_kernel(bool(g.directed), bool(ctx.instrument))
        # Beamer's quantities for the next level (the source's, to begin with).
        self.m_f = int(g.offsets[s + 1] - g.offsets[s])
        self.m_u = g.num_arcs - in_degree(g, s)
        self.prev, self.bu = 0, False
        self.converted = False  # the grid left the next level's frontier converted into a queue
        self.block_threads, self.blocks = k.block_threads, 1
        ctx.runtime.prepare(self._grid, ctx.compiling)  # compiled before the clock starts, then sized
        fits = coresident_blocks(self.kernel, self._args(), self.block_threads, 0)
        if fits < 1:
            raise KnobError(f"knob block_threads={self.block_threads}: no block of the persistent grid fits on an SM "
                            "of this GPU: choose fewer threads")
        self.blocks = fits if k.blocks_per_sm == 0 else min(ctx.limits.sm_count * k.blocks_per_sm, fits)
        self._choose()

    def _choose(self) -> None:
        single = self.single and self.td.plan.kernel == "single-block"
        self.mode = "single" if single else "grid"
        self.readback = self.td.readback if single else self.grid_readback

    def _args(self) -> tuple:
        kd, td = self.kd, self.td
        queues = QueuePair(*td.queues, td.in_a, td.frontier.size, td.capacity, td.level)
        return (td.graph, self.in_graph, td.tree, queues, self.arrays, kd.GridStart(self.bu, self.m_f, self.m_u,
                                                                                      self.prev), self.grid_knobs)

    # ---- one step (timed by the engine)
    def launch(self, go) -> None:
        if self.mode == "single":
            self.td.launch(go)
        else:
            self._grid(go)

    def _grid(self, go) -> None:
        go.zero(self.state)
        go.zero(self.bits)
        go.cooperative(self.kernel, self.blocks, self.block_threads, 0, *self._args())

    def collect(self, ms: float) -> Batch:
        batch = self._collect_single(ms) if self.mode == "single" else self._collect_grid()
        self.converged = self.td.converged
        if not self.converged:
            self._choose()
        return batch

    def _collect_single(self, ms: float) -> Batch:
        td, inst = self.td, self.ctx.instrument
        batch = td.collect(ms)  # BFS-4K's rows; td moves on to its next frontier
        rows, m_u = [], self.m_u
        for i, r in enumerate(batch.rows):
            m_f = int(r["edges_examined"])  # the frontier's degree sum: every edge of it is examined
            if i:
                m_u -= m_f  # an undirected graph: the new frontier's in-degrees are its degrees
            rows.append(dict(
                frontier_in=r["frontier_in"], edges_examined=m_f, discovered=r["discovered"],
                frontier_out=r["frontier_out"], dup_generated=r["dup_generated"], dup_detected=r["dup_detected"],
                dup_undetected=r["dup_undetected"], kernel=r["kernel"], direction=Direction.TOP_DOWN,
                launches=r["launches"], frontier_form="queue", frontier_converted=i == 0 and self.converted,
                vertices_checked=measured(inst, 0), m_f=m_f, m_u=m_u, n_f=r["frontier_in"], heavy_vertices=0,
                warp_size=r["warp_size"], edge_discover=r["edge_discover"]))
        self.prev = rows[-1]["frontier_in"]
        self.m_f = td.frontier.edges
        self.m_u = m_u - self.m_f
        self.bu = self.converted = False
        return Batch(rows, batch.weights)

    def _collect_grid(self) -> Batch:
        kd, host, inst = self.kd, self.grid_readback[1], self.ctx.instrument
        nlev = int(host[kd.G_LEVELS])
        log = host[kd.G_LOG:kd.G_LOG + nlev * kd.LOG_FIELDS].reshape(nlev, kd.LOG_FIELDS)
        rows = []
        for i, r in enumerate(log.tolist()):
            bu = bool(r[kd.R_BU])
            rows.append(dict(
                frontier_in=r[kd.R_FRONTIER], edges_examined=measured(inst, r[kd.R_EDGES]) if bu else r[kd.R_EDGES],
                # Claims by compare-and-swap, or by a vertex's own thread: no duplicates.
                discovered=r[kd.R_NEXT], frontier_out=r[kd.R_NEXT], dup_generated=measured(inst, 0),
                dup_detected=0, dup_undetected=measured(inst, 0),
                kernel=Kernel.MULTI_BLOCK, direction=Direction.BOTTOM_UP if bu else Direction.TOP_DOWN,
                launches=3 if i == 0 else 0,  # two memsets (counts, bitmaps) and the grid
                frontier_form="bitmap" if bu else "queue",
                frontier_converted=bool(r[kd.R_CONVERTED]) or (i == 0 and self.converted),
                vertices_checked=measured(inst, r[kd.R_CHECKED]), m_f=r[kd.R_MF], m_u=r[kd.R_MU],
                n_f=r[kd.R_FRONTIER], heavy_vertices=r[kd.R_HEAVY], warp_size=1 if bu else 32,
                edge_discover=not bu))
        weights = cycle_weights(log[:, kd.R_CLOCK], host[kd.G_CLOCK_START], host[kd.G_CLOCK_END])
        size = int(host[kd.G_SIZE])
        self.m_f, self.m_u, self.prev = int(host[kd.G_MF]), int(host[kd.G_MU]), int(host[kd.G_PREV])
        self.bu = bool(host[kd.G_BU])
        self.converted = self.bu and size > 0  # the grid turned its last bitmap into a queue
        self.td.resume(nlev, int(host[kd.G_QCUR]) == 0, size, host[kd.G_HIST:kd.G_HIST + 2 * kd.DEGREE_BINS])
        return Batch(rows, weights)

    def result(self):
        return self.td.result()

    def device_result(self):
        return self.td.device_result()
