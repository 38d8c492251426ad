"""A level of the load-balancing catalogue (the chapter "Graph Algorithms on GPUs", §5;
kernels/load_balance): gunrock's advance with a load-balancing strategy. `ExpandLoop` runs one
level of any strategy of the catalogue: for the search strategies the exclusive prefix sum of the
frontier's degrees first (three small kernels) and, for two-phase and multi-phase, its partition
into balanced chunks; then the level kernel, whose candidates go through the shared claim, culls
and local queues (kernels.claims, kernels.filters, kernels.frontier_ops). The load-balance
technique runs it for each value of its `expand` knob, merrill for CTA+warp+scan with the racy
claim and Merrill et al.'s culls. The strategies' parameters are declared here once.
"""
from __future__ import annotations

import numpy as np

from kernels.args import Graph, Level, Rows, Stamps, Tree
from kernels.load_balance import layout as LBL

from ...device import blocks_for
from ...knobs import KnobError, KnobSpec
from ..base import Batch, LevelLoop, RunContext, measured
from .frontier import frontier_queues, init_search

W = KnobSpec(
    "W", "virtual warp size: threads sharing one vertex's adjacency list, fixed for the whole search "
    "(32: a physical warp per vertex; 1: Harish's thread per vertex). BFS-4K's Table 2 tuned it per "
    "graph: W1 on road networks and meshes, W2-W4 on social graphs, W16 on uniform random, W32 on Kronecker",
    32, choices=(1, 2, 4, 8, 16, 32), section="chapter §5.1.2; BFS-4K §3, Table 2")
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


def expand_signatures(expand: int, instrument: bool, atomic: bool = True, culling: int = 0) -> list:
    """(name, kernel, argument types) of what an ExpandLoop with these arguments launches: its
    level kernel, the prefix-sum and partition passes its strategy needs, the counters' clear."""
    import kernels.load_balance as LB

    from .frontier import counters_cleared, declared

    passes = (LB.lb_prefix_tiles, LB.lb_prefix_sums, LB.lb_prefix_add) if expand in LBL.NEEDS_PREFIX else ()
    passes += (LB.lb_partition,) if expand in LBL.NEEDS_PARTITION else ()
    return declared(LB.level_kernel(expand, bool(instrument), bool(atomic), int(culling)), *passes) + counters_cleared()


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
        self.queues = frontier_queues(ctx, self.capacity)
        width = 2 * LBL.NUM_COUNTERS
        self.counters = ctx.buffer("counters", width, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", width, np.int64, host=True))
        self.prefix = ctx.buffer("prefix", self.capacity + 1 if self.prefixed else 1, np.int64)
        self.sums = ctx.buffer("prefix_sums", blocks_for(self.capacity, B) if self.prefixed else 1, np.int64)
        self.parts = ctx.buffer("parts", g.num_arcs // self.chunk + 2 if self.partitioned else 1, np.int64)
        self.kernel = LB.level_kernel(expand, ctx.instrument, atomic, culling)
        self.shared = LBL.shared_bytes(expand, B, self.p1, self.p2, bool(culling & LBL.CULL_WARP), self.history)
        self.max_degree = g.max_degree
        self.res_blocks = max(1, limits.res_threads // B)
        init_search(ctx, self.dist, self.parent, self.queues[0], self.stamp, self.stamp2)
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        # The level kernel's argument groups that stay the same for the whole run.
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.stamps = Stamps(self.stamp, self.stamp2)
        self.prefix_arrays = LBB.Prefix(self.prefix, self.parts)
        self.params = LBB.Params(self.p1, self.p2, self.history, not self.prefixed)
        self.size, self.level, self.blocks, self.launches = 1, 0, 0, 0

    def _blocks(self, f: int, units: int) -> int:
        """The level kernel's grid: a thread (warp, block) per entry or unit, or a full GPU's worth
        of blocks striding over the units when only the device knows their number."""
        e, B = self.expand, self.B
        if e in (LBL.WORK_ITEMS, LBL.CTA_WARP_SCAN, LBL.LOCAL_WARP_SEARCH):
            return blocks_for(f, B)
        if e == LBL.VIRTUAL_WARPS:
            return min(blocks_for(f * self.p1, B), 1 << 20)  # its loop strides over what one pass leaves
        if e == LBL.BLOCK_SEARCH:
            return blocks_for(f, B * self.p1)
        return min(self.res_blocks, blocks_for(units, B if e == LBL.DIRECT_SEARCH else self.chunk))

    def launch(self, go) -> None:
        ctx, LB, B, f = self.ctx, self.LB, self.B, self.size
        offsets = ctx.graph_arrays[0]
        src, dst = self.queues
        row = self.level % 2
        # At most this many work-units (the device knows the exact sum; the host only bounds it).
        units = max(1, f * self.max_degree if not self.atomic else min(ctx.graph.num_arcs, f * self.max_degree))
        self.launches = 1
        if self.prefixed:
            tiles = blocks_for(f, B)
            go(LB.lb_prefix_tiles, tiles, B, 0, offsets, src, f, self.prefix, self.sums, self.counters, row)
            go(LB.lb_prefix_sums, 1, B, 0, self.sums, tiles, self.prefix, f, self.counters, row)
            go(LB.lb_prefix_add, tiles, B, 0, self.prefix, f, self.sums)
            self.launches += 3
        if self.partitioned:
            chunks = blocks_for(units, self.chunk)
            go(LB.lb_partition, min(self.res_blocks, blocks_for(chunks, B)), B, 0, self.prefix, f, self.chunk, self.parts,
               self.counters, row)
            self.launches += 1
        self.blocks = self._blocks(f, units)
        go(self.kernel, self.blocks, B, self.shared, self.graph, self.tree, self.stamps,
           Level(src, f, dst, self.capacity, self.level), Rows(self.counters, row), self.prefix_arrays, self.params)

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
