"""load-balance: the load-balancing catalogue of the chapter "Graph Algorithms on GPUs" (§5) as
the values of one `expand` knob of a top-down BFS, so that the chapter's Figs. 12-15 comparison
can be redone on its four graph families (road-like, web/social, mesh, Kronecker).

Every strategy claims by compare-and-swap and writes the next frontier through the same local
queues and warp prefix sums (kernels.frontier_ops), so they differ only in how a level's work
(the frontier's adjacency lists: work-items of work-units) reaches threads (kernels/load_balance).
`ExpandLoop` runs a level of any of them: for the search strategies the exclusive prefix sum of
the frontier's degrees first (three small kernels) and, for two-phase and multi-phase, its
partition into balanced chunks; then the level kernel. It also runs Merrill et al.'s technique
(merrill.py: CTA+warp+scan with the racy claim and its culls). Dynamic virtual warps + heavy
vertices is BFS-4K's multi-block level: its loop runs, with edge-discover, the single block,
coalesced writes and hash64 off.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kernels.args import Graph, Level, Rows, Stamps, Tree
from kernels.load_balance import layout as LBL

from ..knobs import BLOCK_THREADS, KnobError, KnobSet, KnobSpec, knob
from ..stats import Extra
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext, init_search, measured
from .bfs4k.knobs import BFS4KKnobs
from .virtual_warp import W as _W

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
CTA_THRESHOLD = KnobSpec(
    "cta_threshold", "CTA+warp+scan: a list longer than CTA_TH is gathered by the whole block, one list at a time "
    "(Algorithm 9); 0 = the block's size, Merrill et al.'s rule", 0, low=0, high=1 << 20,
    section="chapter §5.2.2, Algorithm 9")
WARP_THRESHOLD = KnobSpec(
    "warp_threshold", "CTA+warp+scan: a list longer than WARP_TH (and at most CTA_TH) is gathered by its warp; "
    "shorter ones go to the block prefix sum. Merrill et al.'s rule: the warp's width, 32", 32, low=0,
    high=1 << 20, section="chapter §5.2.2")
K_SPEC = KnobSpec(
    "K", "work per thread of the chunked searches: block-search's maxi chunk is B x K frontier vertices, two-phase's "
    "chunk B x K edges (K walked in order by each thread), multi-phase's B x K x IS (the chapter sizes B x K to the "
    "shared memory; its figures show 10)", 4, low=1, high=32, section="chapter §5.3.3-5.6")
IS_SPEC = KnobSpec(
    "IS", "multi-phase's iteration factor: one slice of the prefix sum and one partition search serve IS sub-chunks "
    "of B x K edges, each thread searching IS times (iterated searches)", 2, low=1, high=16,
    section="chapter §5.6")


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


def _static_shared() -> int:
    """Static shared memory of the level kernel besides the dynamic layout: the CTA phase's and
    block scan's int64 words and the block's counters."""
    return 36 * 8 + LBL.NUM_COUNTERS * 4


def check_shared(expand: int, knobs, limits, culling: int = 0, history: int = 0) -> None:
    """Refuse a block size and K/IS whose shared memory this device cannot give a block."""
    B = knobs.block_threads
    if B > limits.max_threads_per_block:
        raise KnobError(f"knob block_threads={B} exceeds this GPU's {limits.max_threads_per_block} threads per block")
    need = LBL.shared_bytes(expand, B, getattr(knobs, "K", 0), getattr(knobs, "IS", 0),
                            bool(culling & LBL.CULL_WARP), history) + _static_shared()
    if need > limits.shared_room:
        raise KnobError(f"expand='{LBL.EXPAND_NAMES[expand]}' with block_threads={B}, K={getattr(knobs, 'K', '-')}, "
                        f"IS={getattr(knobs, 'IS', '-')} needs {need:,} bytes of shared memory a block, more than "
                        f"this GPU's {limits.shared_room:,}: lower K, IS or block_threads")


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


def _grid(n: int, block: int) -> int:
    return max(1, -(-int(n) // block))


class ExpandLoop(LevelLoop):
    """A level of one expand strategy: [the prefix-sum pass, [the partition],] the level kernel.
    `p1`, `p2` are the strategy's parameters (W; CTA_TH and WARP_TH; K and IS); `culling` and
    `history` Merrill et al.'s culls (layout.CULL_* bits, the history table's entries); `extras`
    makes a record's extras from the loop and the level's counters."""

    def __init__(self, ctx: RunContext, expand: int, p1: int = 0, p2: int = 0, *, atomic: bool = True,
                 culling: int = 0, history: int = 0, extras=None):
        import kernels.load_balance as LB
        import kernels.load_balance.build as LBB
        from kernels import common

        self.ctx, self.LB = ctx, LB
        g, limits = ctx.graph, ctx.limits
        n, B = g.num_vertices, ctx.knobs.block_threads
        self.expand, self.p1, self.p2, self.B = expand, int(p1), int(p2), B
        self.atomic, self.history, self.extras = atomic, int(history), extras
        self.prefixed = expand in LBL.NEEDS_PREFIX
        self.partitioned = expand in LBL.NEEDS_PARTITION
        self.chunk = LBL.chunk_units(expand, B, self.p1, self.p2)
        # With the racy claim a level can enqueue a vertex once per arc that reaches it.
        self.capacity = max(1, n if atomic else g.num_arcs)
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.stamp = ctx.buffer("stamp", n, np.int32)  # level in which a vertex was last claimed
        self.stamp2 = ctx.buffer("stamp2", n, np.int32)  # ... and last passed the culls
        self.queues = [ctx.buffer("queue_a", self.capacity, np.int32), ctx.buffer("queue_b", self.capacity, np.int32)]
        width = 2 * LBL.NUM_COUNTERS
        self.counters = ctx.buffer("counters", width, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", width, np.int64, host=True))
        self.prefix = ctx.buffer("prefix", self.capacity + 1 if self.prefixed else 1, np.int64)
        self.sums = ctx.buffer("prefix_sums", _grid(self.capacity, B) if self.prefixed else 1, np.int64)
        self.parts = ctx.buffer("parts", g.num_arcs // self.chunk + 2 if self.partitioned else 1, np.int64)
        self.kernel = LB.level_kernel(expand, ctx.instrument, atomic, culling)
        self.shared = LBL.shared_bytes(expand, B, self.p1, self.p2, bool(culling & LBL.CULL_WARP), self.history)
        self.max_degree = int(g.degrees().max()) if n else 0
        self.res_blocks = max(1, limits.res_threads // B)
        init_search(ctx, self.dist, self.parent, self.queues[0], self.stamp, self.stamp2)
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        # The level kernel's argument groups that stay the same for the whole run.
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.stamps = Stamps(self.stamp, self.stamp2)
        self.prefix_arrays = LBB.Prefix(self.prefix, self.parts)
        self.params = LBB.Params(self.p1, self.p2, self.history)
        self.size, self.level, self.blocks, self.launches = 1, 0, 0, 0

    def _blocks(self, f: int, units: int) -> int:
        """The level kernel's grid: a thread (warp, block) per entry or unit, or a full GPU's worth
        of blocks striding over the units when only the device knows their number."""
        e, B = self.expand, self.B
        if e in (LBL.WORK_ITEMS, LBL.CTA_WARP_SCAN, LBL.LOCAL_WARP_SEARCH):
            return _grid(f, B)
        if e == LBL.VIRTUAL_WARPS:
            return min(_grid(f * self.p1, B), 1 << 20)  # its loop strides over what one pass leaves
        if e == LBL.BLOCK_SEARCH:
            return _grid(f, B * self.p1)
        return min(self.res_blocks, _grid(units, B if e == LBL.DIRECT_SEARCH else self.chunk))

    def launch(self, go) -> None:
        ctx, LB, B, f = self.ctx, self.LB, self.B, self.size
        offsets = ctx.graph_arrays[0]
        src, dst = self.queues
        row = self.level % 2
        # At most this many work-units (the device knows the exact sum; the host only bounds it).
        units = max(1, f * self.max_degree if not self.atomic else min(ctx.graph.num_arcs, f * self.max_degree))
        self.launches = 1
        if self.prefixed:
            tiles = _grid(f, B)
            go(LB.lb_prefix_tiles, tiles, B, 0, offsets, src, f, self.prefix, self.sums, self.counters, row)
            go(LB.lb_prefix_sums, 1, B, 0, self.sums, tiles, self.prefix, f, self.counters, row)
            go(LB.lb_prefix_add, tiles, B, 0, self.prefix, f, self.sums)
            self.launches += 3
        if self.partitioned:
            go(LB.lb_partition, min(self.res_blocks, _grid(_grid(units, self.chunk), B)), B, 0, self.prefix, f,
               self.chunk, self.parts, self.counters, row)
            self.launches += 1
        self.blocks = self._blocks(f, units)
        go(self.kernel, self.blocks, B, self.shared, self.graph, self.tree, self.stamps,
           Level(src, f, dst, self.capacity, self.level), Rows(self.counters, row, not self.prefixed),
           self.prefix_arrays, self.params)

    def collect(self, ms: float) -> Batch:
        L, inst = LBL, self.ctx.instrument
        row = self.level % 2
        c = self.readback[1][row * L.NUM_COUNTERS:(row + 1) * L.NUM_COUNTERS].tolist()
        if c[L.OVERFLOW] > 0:
            raise RuntimeError(f"next frontier overflowed its capacity of {self.capacity:,} entries "
                               f"({int(c[L.OVERFLOW]):,} needed); this is a bug, please report it")
        nxt = int(c[L.NEXT_SIZE])
        detected = int(c[L.WARP_CULLED] + c[L.HISTORY_CULLED])
        claims = nxt + detected
        if inst:
            discovered = claims - int(c[L.DUP_GENERATED])
        else:
            discovered = claims if self.atomic else None  # the racy claim cannot tell repeats without stamps
        rec = dict(frontier_in=self.size, edges_examined=measured(inst, c[L.EDGES]), discovered=discovered,
                   frontier_out=nxt, dup_generated=measured(inst, c[L.DUP_GENERATED]), dup_detected=detected,
                   dup_undetected=measured(inst, c[L.UNDETECTED]), kernel="multi-block",
                   launches=self.launches,  # the next level's counters are cleared by this level's first kernel
                   **self.extras(self, c))
        self.queues.reverse()
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([rec])


class _DynamicVirtualWarps(LevelLoop):
    """expand='dynamic-virtual-warps': BFS-4K's multi-block level (its loop and kernels: dynamic
    virtual warps, §5.2, and the heavy-vertex child grid, §5.3, launched by the host), with
    compare-and-swap claims and the plain warp flush like the other strategies: edge-discover,
    the single block, coalesced writes and hash64 off."""

    def __init__(self, ctx: RunContext):
        from .bfs4k.loop import BFS4KLoop

        k = ctx.knobs
        own = BFS4KKnobs(K1=k.K1, K2=k.K2, K3=k.K3, K4=0, K5=0, K6=k.block_threads, K7=0, claim="atomic", dedup="none")
        self.inner = BFS4KLoop(dataclasses.replace(ctx, knobs=own), None)

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
