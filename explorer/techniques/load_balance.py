"""load-balance: the load-balancing catalogue of the chapter "Graph Algorithms on GPUs" (§5) as
the values of one `expand` knob of a top-down BFS, so that the chapter's Figs. 12-15 comparison
can be redone on its four graph families (road-like, web/social, mesh, Kronecker).

Every strategy claims by compare-and-swap and writes the next frontier through the same local
queues and warp prefix sums (kernels.frontier_ops), so they differ only in how a level's work
(the frontier's adjacency lists: work-items of work-units) reaches threads (kernels/load_balance).
A level of any of them is the expand operator's (operators/expand.py, ExpandLoop). Dynamic
virtual warps + heavy vertices is BFS-4K's multi-block level: BFS-4K's level operator
(operators/bfs4k) runs, with edge-discover, the single block, coalesced writes and hash64 off.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kernels.load_balance import layout as LBL

from ..knobs import BLOCK_THREADS, KnobError, KnobSet, KnobSpec, knob
from ..stats import Extra
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, measured
from .operators.bfs4k.knobs import BFS4KKnobs
from .operators.bfs4k.levels import BFS4KLevels, level_signatures
from .operators.expand import (CTA_THRESHOLD, IS_SPEC, K_SPEC, WARP_THRESHOLD, ExpandLoop, check_shared,
                               expand_signatures)
from .operators.expand import W as _W

#: Each expand value: what it does and when it wins (the chapter's §5 and Figs. 12-15).
STRATEGIES = {
    "work-items": "a thread per frontier vertex walks its whole list (§5.1.1). Wins when degrees are low and "
                  "even (road networks, meshes: best in Fig. 12, great-britain_osm): any mapping costs more than it "
                  "saves; loses on skewed degrees (a hub keeps its warp busy while the others idle)",
    "virtual-warps": "W lanes per frontier vertex, W fixed (§5.1.2, Hong et al.; knob W). Wins when W fits the "
                     "average degree (Fig. 13 second best; Fig. 15 with W=32); loses when degrees vary widely or W "
                     "is wrongly sized",
    "dynamic-virtual-warps": "BFS-4K's multi-block level: the virtual warp size chosen every level from the frontier's "
                             "size (K1 the smallest) and vertices of very high degree given to a child grid (K2, K3), "
                             "launched by the host right after the level since Numba has no dynamic parallelism "
                             "(§5.2.1). Wins on high average degrees (Fig. 15, like virtual warps of 32) with a few "
                             "huge hubs; loses on low, uneven degrees",
    "cta-warp-scan": "Merrill et al.'s gathering (§5.2.2, Algorithm 9): lists longer than cta_threshold walked by the "
                     "whole block, longer than warp_threshold by a warp, the rest through a block prefix sum. Wins on "
                     "very irregular workloads where the CTA and warp phases fire (best in Fig. 15, Kronecker); loses "
                     "on regular graphs, where they never fire but their checks and barriers cost (Figs. 12-13)",
    "direct-search": "a thread per edge, whose vertex is found by a binary search of the whole prefix sum in global "
                     "memory (§5.3.1). Perfect balance but log2|F| scattered probes per edge: much worse than the "
                     "others in the chapter (left out of Figs. 12-15); wins only on small frontiers of huge lists",
    "local-warp-search": "a warp per 32 frontier vertices: their degrees scanned in registers and each round of 32 "
                         "edges mapped to lanes by a shuffle binary search (§5.3.2; BFS-4K's edge-discover). Fair "
                         "within a warp, no shared memory or barriers: wins on uneven degrees below a few hundred; "
                         "loses when a few huge lists leave some warps far busier than others",
    "block-search": "a block per maxi chunk of B x K frontier vertices, loaded into shared memory; its edges split "
                    "evenly over the block's threads, one search each, then walked in order (§5.3.3, Davidson "
                    "et al.). "
                    "Balanced within a block, not across blocks, reads scattered: much worse than the others in the "
                    "chapter; wins when whole chunks carry similar work",
    "two-phase": "balanced chunks of B x K edges: one search per chunk in the global prefix sum (partition), one per "
                 "thread in the chunk's shared slice, then K edges walked in order (§5.3.4). Balanced across threads, "
                 "warps and blocks: wins on irregular graphs (Fig. 13 second best, Fig. 14 an order of magnitude over "
                 "the static mappings); loses on its scattered reads and extra passes when frontiers are small",
    "multi-phase": "two-phase plus coalesced expansion (a block's edges reordered through shared memory so that "
                   "consecutive lanes read consecutive edges) and iterated searches (chunks IS times larger: fewer "
                   "partitions and block set-ups) (§5.4-5.6, Busato & Bombieri). The chapter's best on web-NotreDame "
                   "and circuit5M (Figs. 13-14), second on great-britain_osm, close to the best on Kronecker: wins "
                   "when most degrees are below a warp but vary widely; loses only to work-items on very even graphs",
}

EXPAND = KnobSpec(
    "expand", "how a level's work (the frontier's adjacency lists) is mapped to threads, the chapter's §5 catalogue: "
    + "; ".join(f"'{k}': {v}" for k, v in STRATEGIES.items()),
    "multi-phase", choices=LBL.EXPAND_NAMES, kind=str, section="chapter §5")


def _for(spec: KnobSpec, expand: str) -> KnobSpec:
    return dataclasses.replace(spec, meaning=f"{spec.meaning} (used by expand='{expand}')")


@dataclass(frozen=True)
class LoadBalanceKnobs(KnobSet):
    owner = "load-balance"
    expand: str = knob(EXPAND)
    block_threads: int = knob(BLOCK_THREADS)
    W: int = knob(_for(_W, "virtual-warps"))
    K1: int = knob(_for(BFS4KKnobs.spec("K1"), "dynamic-virtual-warps"))
    K2: float = knob(_for(BFS4KKnobs.spec("K2"), "dynamic-virtual-warps"))
    K3: int = knob(_for(BFS4KKnobs.spec("K3"), "dynamic-virtual-warps"))
    cta_threshold: int = knob(CTA_THRESHOLD)
    warp_threshold: int = knob(WARP_THRESHOLD)
    K: int = knob(K_SPEC)
    IS: int = knob(IS_SPEC)


class LoadBalance(BFSTechnique):
    technique = Technique.LOAD_BALANCE
    Knobs = LoadBalanceKnobs
    extras = (
        Extra("expand", "the load-balancing strategy that expanded the level (knob expand, chapter §5)", kind=str),
        Extra("warp_size", "threads sharing one frontier vertex: W (virtual-warps), the level's dynamic size "
              "(dynamic-virtual-warps), 32 (local-warp-search); None for the others", "threads"),
        Extra("heavy_vertices", "frontier vertices given to the child grid (dynamic-virtual-warps, §5.2.1)",
              "vertices"),
        Extra("cta_gathered", "frontier vertices whose lists the whole block gathered (cta-warp-scan's CTA phase)",
              "vertices"),
        Extra("warp_gathered", "frontier vertices whose lists a warp gathered (cta-warp-scan's warp phase)",
              "vertices"),
        Extra("searches", "binary searches that mapped edges to threads (direct, local-warp, block, two-phase and "
              "multi-phase search; the partition's included); None for the others", "searches"),
        Extra("blocks", "thread blocks of the level's expansion kernel", "blocks"),
    )
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("The same claim and queue every level; only the mapping of edges to threads changes with "
                      "expand. Compare work-items (a thread per vertex) with two-phase or multi-phase (every thread "
                      "the same number of edges) on the star: the hub's list is one thread's work in the first.")
    test_knobs = (
        *({"expand": name} for name in LBL.EXPAND_NAMES if name != EXPAND.default),
        {"expand": "virtual-warps", "W": 1},
        {"expand": "virtual-warps", "W": 4},
        {"expand": "dynamic-virtual-warps", "K1": 1, "K2": 10.0, "K3": 1},  # child grids from degree 32 up
        {"expand": "cta-warp-scan", "cta_threshold": 2, "warp_threshold": 1},  # every phase on small lists
        {"expand": "block-search", "K": 1},
        {"expand": "two-phase", "K": 1},
        {"expand": "multi-phase", "K": 1, "IS": 1},
        {"expand": "multi-phase", "K": 3, "IS": 5},
    )

    def check(self, graph, knobs, limits) -> None:
        expand = LBL.EXPAND_NAMES.index(knobs.expand)
        if expand == LBL.DYNAMIC_VIRTUAL_WARPS:
            if knobs.block_threads > limits.max_threads_per_block:
                raise KnobError(f"knob block_threads={knobs.block_threads} exceeds this GPU's "
                                f"{limits.max_threads_per_block} threads per block")
            return
        check_shared(expand, knobs, limits)

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        expand = LBL.EXPAND_NAMES.index(knobs.expand)
        if expand == LBL.DYNAMIC_VIRTUAL_WARPS:
            return level_signatures(_DynamicVirtualWarps.inner_knobs(knobs), instrument)
        return expand_signatures(expand, instrument)

    def start(self, ctx: RunContext) -> LevelLoop:
        k = ctx.knobs
        expand = LBL.EXPAND_NAMES.index(k.expand)
        if expand == LBL.DYNAMIC_VIRTUAL_WARPS:
            return _DynamicVirtualWarps(ctx)
        p1, p2 = {LBL.VIRTUAL_WARPS: (k.W, 0),
                  LBL.CTA_WARP_SCAN: (k.cta_threshold or k.block_threads, k.warp_threshold),
                  LBL.BLOCK_SEARCH: (k.K, 0), LBL.TWO_PHASE: (k.K, 0), LBL.MULTI_PHASE: (k.K, k.IS)}.get(expand, (0, 0))
        return ExpandLoop(ctx, expand, p1, p2, extras=_catalogue_extras)


def _catalogue_extras(loop: "ExpandLoop", c: list) -> dict:
    e, inst = loop.expand, loop.ctx.instrument
    cta = e == LBL.CTA_WARP_SCAN
    searching = e in (LBL.DIRECT_SEARCH, LBL.LOCAL_WARP_SEARCH, LBL.BLOCK_SEARCH, LBL.TWO_PHASE, LBL.MULTI_PHASE)
    warp = {LBL.VIRTUAL_WARPS: loop.p1, LBL.LOCAL_WARP_SEARCH: 32}.get(e)
    return dict(expand=LBL.EXPAND_NAMES[e], warp_size=warp, heavy_vertices=None,
                cta_gathered=int(c[LBL.CTA_GATHERED]) if cta else None,
                warp_gathered=int(c[LBL.WARP_GATHERED]) if cta else None,
                searches=measured(inst, c[LBL.SEARCHES]) if searching else None, blocks=loop.blocks)


class _DynamicVirtualWarps(LevelLoop):
    """expand='dynamic-virtual-warps': BFS-4K's multi-block level (its loop and kernels: dynamic
    virtual warps, §5.2, and the heavy-vertex child grid, §5.3, launched by the host), with
    compare-and-swap claims and the plain warp flush like the other strategies: edge-discover,
    the single block, coalesced writes and hash64 off."""

    def __init__(self, ctx: RunContext):
        self.inner = BFS4KLevels(dataclasses.replace(ctx, knobs=self.inner_knobs(ctx.knobs)))

    @staticmethod
    def inner_knobs(k) -> BFS4KKnobs:
        return BFS4KKnobs(K1=k.K1, K2=k.K2, K3=k.K3, K4=0, K5=0, K6=k.block_threads, K7=0, claim="atomic", dedup="none")

    @property
    def readback(self) -> tuple:
        return self.inner.readback  # BFS-4K's two read-back buffers take turns

    def launch(self, go) -> None:
        self.blocks = self.inner.plan.blocks
        self.inner.launch(go)

    def collect(self, ms: float) -> Batch:
        batch = self.inner.collect(ms)
        rows = []
        for r in batch.rows:
            # BFS-4K derives edges examined from the frontier's degree histogram: exact, instrumented or not.
            core = {f: r[f] for f in ("frontier_in", "edges_examined", "discovered", "frontier_out", "dup_generated",
                                      "dup_detected", "dup_undetected", "kernel", "launches")}
            rows.append(dict(core, expand="dynamic-virtual-warps", warp_size=r["warp_size"],
                             heavy_vertices=r["heavy_vertices"], cta_gathered=None, warp_gathered=None, searches=None,
                             blocks=self.blocks))
        self.converged = self.inner.converged
        return Batch(rows, batch.weights)

    def result(self):
        return self.inner.result()

    def device_result(self):
        return self.inner.device_result()
