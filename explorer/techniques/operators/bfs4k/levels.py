"""BFS-4K's levels (§5): what each step launches (the single-block kernel or its cluster form, many
levels in one launch; or one multi-block level with its child grid and, unless the level kernel
counts a small next frontier itself, the statistics kernel) and how its counters and the single
block's log become records. The enactor times and yields them.

An operator: the bfs4k technique runs it whole; direction-optimizing runs its single-block steps
between the launches of its own grid (multi_block=False, `resume`); load-balance's
expand='dynamic-virtual-warps' runs its multi-block levels (K5 = 0)."""
from __future__ import annotations

import dataclasses

import numpy as np

from kernels.args import Graph, Heavy, Level, QueuePair, Stamps, Tree
from kernels.bfs4k.args import MultiPlan, Readback, SingleKnobs, SingleOut

from ....device import blocks_for
from ....stats import Extra, Kernel
from ...base import LAUNCH_LOG_LEVELS, Batch, LevelLoop, RunContext, cycle_weights
from ..frontier import frontier_queues, init_search
from .policy import FrontierStats, multi_block_layout, plan_level, single_block_layout

STATS_THREADS = 256  # block size of the next-frontier statistics kernel and of bfs4k_commit
#: Levels one single-block launch may log, and the log's rows (the cluster form logs a row a level
#: and block: a cluster of 16, 4,096 levels): at most 8 MB of device memory and as much pinned.
MAX_LOG = LAUNCH_LOG_LEVELS
MAX_LOG_ROWS = 1 << 16
#: The largest next frontier (bounded by the level's edges) whose histogram the level kernel's last
#: block computes with one warp, 32 entries a round, instead of a bfs4k_stats launch.
FUSED_STATS_MAX = 512

#: The record extras of BFS-4K's levels (a technique declares those it shows).
EXTRAS = (
    Extra("warp_size", "(virtual) warp size: threads sharing one frontier vertex (§5.2)", "threads"),
    Extra("edge_discover", "edge-discover ran instead of virtual warps (§5.4)", kind=bool),
    Extra("heavy_vertices", "frontier vertices sent to the heavy-vertex child grid (§5.3)", "vertices"),
    Extra("binary_scan", "ballot/popc prefix sum instead of the shuffle scan (§5.1)", kind=bool),
    Extra("coalesced_writes", "some warp wrote the next frontier with induced coalescence (§5.6)", kind=bool),
    Extra("dup_conflicts", "hash64 collisions of different vertices, kept conservatively (§6)", "entries"),
)


def kernel_choice(knobs, instrument: bool) -> tuple:
    """kernels.bfs4k.kernels_for's static arguments for a run with these knobs: the loop's kernels
    and those the warm-up compiles ahead of a run (BFS4K.kernel_signatures) alike."""
    from kernels.rules import DEDUP_CODES

    return (bool(instrument), knobs.claim != "race", DEDUP_CODES[knobs.dedup], knobs.single_block_threads,
            knobs.visited == "shared", knobs.cluster)


def level_signatures(knobs, instrument: bool, multi_block: bool = True) -> list:
    """(name, kernel, argument types) of the kernels BFS4KLevels launches with these knobs (with
    multi_block=False, its single-block steps only), the slowest to compile first."""
    from kernels.bfs4k import kernel_signatures

    sigs = {name: (kernel, args) for name, kernel, args, _ in kernel_signatures(*kernel_choice(knobs, instrument))}
    names = ["bfs4k_multi"] if multi_block else []
    if knobs.K5 > 0:  # the single block (and, with the shared bitmap, its commit) runs only then
        names.insert(0, "bfs4k_cluster" if knobs.cluster > 1 else "bfs4k_single")
    if multi_block:
        names += ["bfs4k_heavy", "bfs4k_stats"]
    if knobs.K5 > 0 and knobs.visited == "shared":
        names += ["bfs4k_commit"]
    return [(name, *sigs[name]) for name in names]


def cluster_log(rows: np.ndarray, C: int, L) -> np.ndarray:
    """The cluster form's log (a row per block and level: level x C + rank) as the single block's,
    a row a level: counts summed over the blocks; the level's sizes, decisions and clock from
    block 0 (every block takes the same, but for the §5.1 binary scan: used if any block did)."""
    per = rows.reshape(-1, C, rows.shape[1])
    out = per[:, 0].copy()
    for f in (L.L_EDGES, L.L_GEN, L.L_DET, L.L_CONF, L.L_UNDET, L.L_COAL, L.L_EXT):
        out[:, f] = per[:, :, f].sum(axis=1)
    for f in (L.L_OVERFLOW, L.L_BINARY):
        out[:, f] = per[:, :, f].max(axis=1)
    out[:, L.L_FOUND] = out[:, L.L_NEXT] + out[:, L.L_DET]  # claims: kept + dropped
    return out


class BFS4KLevels(LevelLoop):
    """BFS-4K's level loop over ctx's graph with ctx.knobs (a BFS4KKnobs). With multi_block=False
    it launches single-block steps only: its caller runs the levels whose plan is multi-block
    (nothing of those is compiled) and hands the frontier back with `resume`."""

    def __init__(self, ctx: RunContext, multi_block: bool = True):
        from kernels import bfs4k
        from kernels.bfs4k import layout as L
        from kernels.rules import heavy_limit

        self.ctx, self.L, self.multi_block = ctx, L, multi_block
        knobs, limits, n = ctx.knobs, ctx.limits, ctx.graph.num_vertices
        self.single_layout = single_block_layout(knobs, limits, n) if knobs.K5 > 0 else None
        self.multi_layout = multi_block_layout(knobs, limits)
        self.race = knobs.claim == "race"
        self.shared_visited = knobs.visited == "shared"
        self.C = knobs.cluster
        self.heavy_cap = max(1, heavy_limit(n, knobs.K2))
        self.heavy_lim = heavy_limit(n, knobs.K2)
        self.kern = bfs4k.kernels_for(*kernel_choice(knobs, ctx.instrument))
        self.commit_blocks = min(blocks_for(n, STATS_THREADS), 4 * limits.sm_count)

        self.capacity = self.initial_capacity(ctx.graph, self.race)
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.stamp = ctx.buffer("stamp", n, np.int32)  # level in which a vertex was last claimed
        self.stamp2 = ctx.buffer("stamp2", n, np.int32)  # same, after the filter: duplicates it missed
        self.queues = frontier_queues(ctx, self.capacity)
        # Read back each step: the level's counters, the next frontier's degree histogram, and the
        # single block's state (in the one copy, not a second synchronous one after it). Two
        # buffers take turns: a multi-block level clears the other one's counters and histogram
        # for the next, so a level starts with a memset only when its buffer is not clear yet.
        hist_end = L.LEVEL_CLEARED
        size = hist_end + L.STATE_FIELDS
        self.level_out = [ctx.buffer(f"level_out_{b}", size, np.int64) for b in (0, 1)]
        self.host_out = ctx.buffer("level_out", size, np.int64, host=True)
        self.counters, self.hist, self.state, self.heavy_ctr, self.cleared = (
            [ctx.view(f"{name}_{b}", out, lo, hi) for b, out in enumerate(self.level_out)]
            for name, lo, hi in (("counters", 0, L.NUM_COUNTERS), ("hist", L.NUM_COUNTERS, hist_end),
                                 ("state", hist_end, size), ("heavy_ctr", L.HEAVY_CTR, L.HEAVY_CTR + 1),
                                 ("cleared", 0, hist_end)))
        self.buf, self.clear = 0, [False, False]  # the buffer the next step writes; which are clear
        self.heavy_v = ctx.buffer("heavy_v", self.heavy_cap, np.int32)
        self.heavy_off = ctx.buffer("heavy_off", self.heavy_cap, np.int64)
        # Up to log_levels levels a single-block launch (the cluster form: a row per level and block).
        self.log_levels = min(MAX_LOG, MAX_LOG_ROWS // self.C)
        self.log = ctx.buffer("log", (self.log_levels * self.C, L.LOG_FIELDS), np.int64)
        self.log_host = ctx.buffer("log", (self.log_levels * self.C, L.LOG_FIELDS), np.int64, host=True)
        # The single block's visit log (vertex, parent, level): each vertex is claimed once.
        self.visits = ctx.buffer("visits", 3 * n if self.shared_visited else 3, np.int32)
        init_search(ctx, self.dist, self.parent, self.queues[0], self.stamp, self.stamp2)
        # The kernels' argument groups that stay the same for the whole run.
        self.graph, self.tree = Graph(*ctx.graph_arrays), Tree(self.dist, self.parent)
        self.stamps = Stamps(self.stamp, self.stamp2)
        lay = self.single_layout
        if lay is not None:
            self.single_knobs = SingleKnobs(
                lay.frontier_capacity * self.C, lay.frontier_capacity, knobs.K1, self.heavy_lim, knobs.K3, knobs.K4,
                max(lay.hash_entries - 1, 0), knobs.K7, lay.region0_words, lay.bitmap_words)

        self.frontier = FrontierStats.of_vertices(np.diff(ctx.graph.offsets[ctx.source:ctx.source + 2]))
        self.level, self.in_a = 0, True
        self.plan = self._plan()
        # Compile (or load from the disk cache) every kernel the run may use before its clock
        # starts: one first needed at a later level would compile inside the elapsed time.
        if multi_block:
            probe = dataclasses.replace(plan_level(self.frontier, knobs, limits, n), heavy_vertices=1, heavy_blocks=1)
            ctx.runtime.prepare(lambda go: self._multi(go, probe, 0, 1), ctx.compiling)
        if self.single_layout is not None:
            ctx.runtime.prepare(self._single, ctx.compiling)
        self.compiled_ahead = True  # the level kernels, child grid, statistics, single block, commit

    @property
    def readback(self) -> tuple:
        return self.level_out[self.buf], self.host_out

    # ------------------------------------------------------------------ launches
    def _plan(self):
        plan = plan_level(self.frontier, self.ctx.knobs, self.ctx.limits, self.ctx.graph.num_vertices)
        # Only duplicates can make a frontier longer than |V|: with the atomic claim the queues
        # (|V| entries) always suffice, whatever the edge count.
        if self.race and plan.kernel == "multi-block" and self.frontier.edges > self.capacity:
            self._grow(self.frontier.edges)
        return plan

    @staticmethod
    def initial_capacity(graph, race: bool) -> int:
        """Frontier queue entries: with the racy claim a level can enqueue a vertex once per arc
        that reaches it (more when duplicates compound: `_grow`); else once."""
        return max(1, graph.num_arcs if race else graph.num_vertices)

    def _grow(self, need: int) -> None:
        """Room for `need` next-frontier entries (a multi-block level enqueues at most one per edge it
        examines). With the racy claim duplicates compound: a vertex enqueued k times expands its
        arcs k times, so a level can examine more entries than the graph has arcs (seen on an H100
        on a 7 x 9 grid with dedup='none'). Untimed set-up of the next step: the current frontier
        is copied into the larger queue."""
        ctx, old = self.ctx, self.capacity
        self.capacity = max(need, 2 * old)
        src = self.queues[0] if self.in_a else self.queues[1]
        size = self.frontier.size
        grown = frontier_queues(ctx, self.capacity)
        if size:
            grown[0 if self.in_a else 1][:size].copy_to_device(src[:size])
        self.queues = grown
        ctx.status(f"bfs4k: the frontier queues grew from {old:,} to {self.capacity:,} entries "
                   "(duplicates of the racy claim compound)")

    def launch(self, go) -> None:
        if self.plan.kernel == "single-block":
            self._single(go)
        elif not self.multi_block:
            raise RuntimeError("BFS-4K's multi-block level was planned in a loop built without it (multi_block=False)")
        else:
            # The next frontier holds at most one entry per edge examined (and per vertex, without
            # duplicates); a few entries per thread, at most a few blocks per SM.
            bound = min(self.frontier.edges, self.capacity)
            self._multi(go, self.plan, self.frontier.size, min(blocks_for(bound, 4 * STATS_THREADS),
                                                                4 * self.ctx.limits.sm_count))

    def _single(self, go) -> None:
        knobs, lay, C = self.ctx.knobs, self.single_layout, self.C
        queues = QueuePair(*self.queues, self.in_a, self.frontier.size, self.capacity, self.level)
        out = SingleOut(self.hist[self.buf], self.log, self.state[self.buf], self.visits, self.log_levels)
        groups = (self.graph, self.tree, self.stamps, queues, out, self.single_knobs)
        if C == 1:
            go(self.kern.single, 1, knobs.single_block_threads, lay.dynamic_bytes, *groups)
        else:  # the cluster form: one cluster of C blocks, C log rows a level
            go.cluster(self.kern.single, C, C, knobs.single_block_threads, lay.dynamic_bytes, *groups)
        if self.shared_visited:
            go(self.kern.commit, self.commit_blocks, STATS_THREADS, 0, self.tree, queues, out)

    def _fused(self, plan) -> bool:
        """Whether the level kernel's last block writes the next frontier's histogram itself (one
        warp): when no child grid follows and the next frontier (at most one entry an edge) is
        small. A larger one gets bfs4k_stats, a pass over it with the whole GPU."""
        return not plan.heavy_vertices and min(self.frontier.edges, self.capacity) <= FUSED_STATS_MAX

    def _multi(self, go, plan, size, stats_blocks) -> None:
        knobs, lay, b = self.ctx.knobs, self.multi_layout, self.buf
        qa, qb = self.queues
        src, dst = (qa, qb) if self.in_a else (qb, qa)
        fused = self._fused(plan)
        if not self.clear[b]:
            go.zero(self.cleared[b])
        groups = (self.graph, self.tree, self.stamps, Level(src, size, dst, self.capacity, self.level),
                  Heavy(plan.heavy_degree, knobs.K3, self.heavy_v, self.heavy_off, self.heavy_ctr[b]),
                  MultiPlan(plan.warp_size, plan.edge_discover, plan.binary_scan, knobs.K7,
                            max(lay.hash_entries - 1, 0), fused),
                  Readback(self.counters[b], self.hist[b], self.cleared[1 - b]))
        go(self.kern.multi, plan.blocks, plan.block_threads, lay.dynamic_bytes, *groups)
        if plan.heavy_vertices:
            go(self.kern.heavy, plan.heavy_blocks, plan.block_threads, lay.dynamic_bytes, *groups)
        if not fused:  # the next frontier's degree histogram, for the next level's plan
            go(self.kern.stats, stats_blocks, STATS_THREADS, 0, self.graph, groups[3], groups[6])

    # ------------------------------------------------------------------ records
    def resume(self, levels: int, in_a: bool, size: int, hist) -> None:
        """Another kernel ran `levels` levels on the same tree and queues and left a frontier of
        `size` entries (in queue A if in_a) with this degree histogram: the plan of the next level
        from it."""
        self.level += levels
        self.in_a = in_a
        self.frontier = FrontierStats.from_histogram(size, hist)
        self.converged = size == 0
        if not self.converged:
            self.plan = self._plan()

    def collect(self, ms: float) -> Batch:
        single = self.plan.kernel == "single-block"
        batch = self._collect_single() if single else self._collect_multi()
        # The step wrote its buffer; a multi-block level cleared the other one. The next step
        # takes a clear buffer where there is one.
        b = self.buf
        self.clear[b] = False
        if not single:
            self.clear[1 - b] = True
        if self.clear[1 - b]:
            self.buf = 1 - b
        self.converged = self.frontier.size == 0
        if not self.converged:
            self.plan = self._plan()
        return batch

    def _collect_single(self) -> Batch:
        L, rt = self.L, self.ctx.runtime
        s = self.host_out[-L.STATE_FIELDS:]
        nlev = int(s[L.S_LEVELS])
        rows = self.log_host[:nlev * self.C]
        rt.read(self.log[:nlev * self.C], rows)  # pinned memory: one driver copy
        if self.C > 1:
            rows = cluster_log(rows, self.C, L)
        out = []
        for i, row in enumerate(rows):
            self._check_overflow(row[L.L_OVERFLOW])
            out.append(self._row(
                row[L.L_FRONTIER], row[L.L_EDGES], row[L.L_FOUND], row[L.L_NEXT], row[L.L_GEN], row[L.L_DET],
                row[L.L_CONF], row[L.L_UNDET], kernel=Kernel.CLUSTER if self.C > 1 else Kernel.SINGLE_BLOCK,
                warp_size=int(row[L.L_WARP]), edge_discover=bool(row[L.L_ED]), heavy_vertices=0,
                binary_scan=bool(row[L.L_BINARY]), coalesced_writes=bool(row[L.L_COAL]),
                launches=(2 if self.shared_visited else 1) if i == 0 else 0))
        self.level += nlev
        self.in_a = bool(s[L.S_IN_A])
        self.frontier = FrontierStats.from_histogram(int(s[L.S_FSIZE]), self.host_out[L.NUM_COUNTERS:])
        return Batch(out, cycle_weights(rows[:, L.L_CLOCK], s[L.S_CLOCK_START], s[L.S_CLOCK_END]))

    def _collect_multi(self) -> Batch:
        L, plan, host = self.L, self.plan, self.host_out
        c = host.tolist()  # Python ints for the record, in one call
        self._check_overflow(c[L.OVERFLOW])
        # Edges examined are the frontier's degree sum; claims are the kept plus the dropped.
        row = self._row(self.frontier.size, self.frontier.edges, c[L.NEXT_SIZE] + c[L.DUP_DETECTED],
                        c[L.NEXT_SIZE], c[L.DUP_GENERATED], c[L.DUP_DETECTED], c[L.DUP_CONFLICTS], c[L.UNDETECTED],
                        kernel=Kernel.MULTI_BLOCK, warp_size=plan.warp_size, edge_discover=plan.edge_discover,
                        heavy_vertices=int(c[L.HEAVY]), binary_scan=plan.binary_scan,
                        coalesced_writes=bool(c[L.COALESCED]),
                        # [memset,] level, [child grid,] [statistics]
                        launches=(not self.clear[self.buf]) + 1 + bool(plan.heavy_vertices) + (not self._fused(plan)))
        self.level += 1
        self.in_a = not self.in_a
        self.frontier = FrontierStats.from_histogram(c[L.NEXT_SIZE], host[L.NUM_COUNTERS:])
        return Batch([row])

    def _row(self, fin, edges, found, nxt, gen, det, conf, undet, **rest) -> dict:
        inst = self.ctx.instrument
        if inst:
            discovered = int(found - gen)
        else:
            # Without the stamps the racy claim cannot tell first claims from repeats.
            discovered = None if self.race else int(found)
        return dict(frontier_in=int(fin), edges_examined=int(edges), discovered=discovered, frontier_out=int(nxt),
                    dup_generated=int(gen) if inst else None, dup_detected=int(det),
                    dup_undetected=int(undet) if inst else None, dup_conflicts=int(conf), **rest)

    def _check_overflow(self, overflow) -> None:
        if overflow > 0:
            raise RuntimeError(
                f"next frontier overflowed its capacity of {self.capacity:,} entries "
                f"({int(overflow):,} needed); this is a bug, please report it")
