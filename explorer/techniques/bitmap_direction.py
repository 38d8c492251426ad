"""bitmap-direction: direction-optimizing BFS (Beamer, Asanović & Patterson, SC'12, in GAP's form)
on bitmaps, the whole search in one cooperative launch, as BLEST runs it (Elbek & Kaya, "BLEST:
Blazingly Efficient BFS using Tensor Cores", 2025), with parents as well as distances.

* Graph preparation (explorer/graphs/prepare.py, once per graph and order, timed apart from the
  search and kept with the graph): a vertex order (knob `order`), the CSR renumbered in it, and
  the in-adjacency bit-packed: a 64-bit pair (word, 32-bit mask) for each word of 32 vertices
  holding in-neighbours, so that a bottom-up step tests 32 candidate parents with one AND.
* One launch (kernels/bitmap_direction): a grid of co-resident blocks runs level after level with
  a grid barrier between them, each block applying Beamer's rule to the level's counts; narrow
  top-down levels (m_f <= narrow_edges) run in block 0 alone with block barriers while the other
  blocks sleep, its visited bitmap and queues' first entries in shared memory (knob block_visited);
  a graph of at most one_block_vertices pulling vertices runs every level, bottom-up ones too, in
  one block: an ordinary launch of one block, its bitmaps in shared memory; a graph of at most
  cluster_arcs arcs runs in one thread-block cluster of `cluster` blocks, the grid's code with the
  cluster's hardware barrier in place of the grid's.
* Live records: block 0 logs each level in device memory and copies the new rows into host memory
  the GPU writes (mapped), at most every 100 µs in the grid and every 64 levels in one block; the
  host hands each level over as it appears (`streamed`), while the kernel runs, and reads the rows
  logged after the last copy from device memory once the launch has ended. A level's time is the
  device's nanosecond clock (%globaltimer) from the previous level's end to its own (the first
  level from the kernel's start); the run's elapsed time is the launch's CUDA events. A search of
  more than LOG_ROWS levels goes on in another launch from the state the last one saved.

Results are in the graph's own numbering (the prepared numbering is mapped back on the device after
the search, untimed, where a check there can read it). The tensor cores' AND + popc (BLEST's mma b1) is not used: a pull step's cost is its
loads (a pair and a frontier word), not the AND, which is one integer instruction.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..knobs import POW2_BLOCKS, KnobError, KnobSet, KnobSpec, knob
from ..stats import Direction, Extra, Kernel
from . import Technique
from .base import LAUNCH_LOG_LEVELS, Batch, BFSTechnique, LevelLoop, RunContext
from .operators.frontier import declared

SECTION = "Beamer et al. SC'12 §4; BLEST (Elbek & Kaya 2025) §4"
ORDER = KnobSpec(
    "order", "graph preparation: the vertex order the search runs in (renumbered once a graph and order, its "
    "cost reported apart from the search; results in the graph's own numbers): 'degree' (hubs first: a "
    "vertex's first adjacency word holds the likeliest parents), 'rcm' (reverse Cuthill-McKee: neighbours "
    "share words; meshes, roads), 'none' (the graph's own), 'auto' (degree when the degrees are skewed, "
    "else none)", "auto", choices=("auto", "none", "degree", "rcm"), kind=str, section="BLEST §3.2")
ALPHA = KnobSpec("alpha", "α: a top-down level is followed by a bottom-up one when the new frontier's edges m_f "
                 "exceed m_u/α (m_u: the edges not yet walked top-down)", 15, low=1, high=1_000_000,
                 section=SECTION)
BETA = KnobSpec("beta", "β: bottom-up levels go on while the frontier grows or holds more than n/β vertices",
                18, low=1, high=1_000_000, section=SECTION)
NARROW_EDGES = KnobSpec(
    "narrow_edges", "a top-down level (after a top-down one) whose frontier has at most this many edges runs in one "
    "block (block barriers, about 0.1 µs, instead of grid barriers) while the others wait, whatever α says: long "
    "thin searches, and the first and last levels of short ones; 0: never (on an H100, 2,048 against 4,096 and "
    "8,192: the 1000² grid 6.5 ms against 7.7 and 12.4, delaunay_n16 0.65 against 0.72 and 1.06; 1,024 within "
    "the spread)", 2048, low=0, high=1 << 30,
    section="BFS-4K §5.5 (single block), inside the one launch")
ONE_BLOCK_VERTICES = KnobSpec(
    "one_block_vertices", "a graph with at most this many vertices that may find a parent bottom-up runs every "
    "level, bottom-up ones too, in one block of one block's launch: no grid barrier at all; 0: never", 8192,
    low=0, high=1 << 24, section="BFS-4K §5.5 (single block), inside the one launch")
HEAVY_DEGREE = KnobSpec(
    "heavy_degree", "top-down: a frontier vertex of at least this degree has its edges walked by the whole team (the "
    "grid, or the narrow levels' block) as one flat range after the others, each warp an equal run (BFS-4K's heavy "
    "vertices without a child launch); the others by their warp, which walks its 32 vertices' edges alone: W "
    "lanes a row when every row fits its share of the lanes (virtual warps), else 32 edges a round "
    "(edge-discover). On an H200, 128 made the uniform random graph, of degree about 64, 4.6 % faster with blocks of "
    "1024 (benchmarks/results/NVIDIA_H200/bitmap-direction-table-heavy.md)", 32, low=32, high=1 << 30,
    section="BFS-4K §5.3")
SOLO_PAIRS = KnobSpec(
    "solo_pairs", "bottom-up: adjacency pairs (32 candidates each) an unvisited vertex's lane tests alone, four at a "
    "time, before its warp takes the rest of a longer list, 32 pairs a round", 32, low=1, high=1 << 20,
    section=SECTION)
BLOCK_THREADS = KnobSpec("block_threads", "threads per block of the one launch (the narrow levels' block too); "
                         "the kernel is compiled for a block an SM with the whole register file (64 registers a "
                         "thread for 1024, which spill, 128 for 512, which do not; on an H100 512 was faster on 7 "
                         "of 12 graphs, 1024 on the uniform, small-world, facebook and Wiki-Vote graphs)", 512,
                         choices=POW2_BLOCKS, section="BLEST §4")
BLOCKS_PER_SM = KnobSpec("blocks_per_sm", "blocks per SM; 0: as many as the GPU holds at once, which a "
                         "cooperative launch may not exceed", 0, low=0, high=8, section="BLEST §4")
BLOCK_VISITED = KnobSpec(
    "block_visited", "where the levels one block runs keep the visited bitmap: 'shared' (block 0's shared memory, "
    "when it fits beside the queues' copies: claims are shared atomics) or 'global'; a small graph's "
    "(one_block_vertices) is always shared", "shared", choices=("shared", "global"), kind=str,
    section="BFS-4K §5.5 (single block)")
CLUSTER = KnobSpec(
    "cluster", "a graph of at most cluster_arcs arcs that is not one block's runs its whole search in one "
    "thread-block cluster of this many blocks (an SM each; compute capability 9.0+, more than 8 where the GPU "
    "allows it, 16 on an H100): a level ends at the cluster's hardware barrier instead of a grid barrier over "
    "every SM; 0: never (on an H100, with one_block_vertices 0: the 1000² grid 6.0 ms against the grid's 6.6, "
    "Wiki-Vote 0.058 against one block's 0.064, facebook_combined 0.073 against 0.078, and pulling at every level "
    "(alpha and beta 10⁶) 0.047; p2p-Gnutella31 0.137 against 0.116 and the 3-D grid 128³ 5.8 against 2.8, whose "
    "wide levels want every SM)", 0, low=0, high=16,
    section="BFS-4K §5.5 (single block), over a cluster")
CLUSTER_ARCS = KnobSpec(
    "cluster_arcs", "the most arcs a graph may have for its search to run in one cluster (knob cluster): beyond "
    "it the wide levels want every SM", 1 << 22, low=0, high=1 << 40, section="BFS-4K §5.5 (single block), over a cluster")
MAX_BLOCKS = KnobSpec("max_blocks", "at most this many blocks in all (a grid barrier costs more with more blocks: "
                      "small graphs may not need them); 0: no cap", 0, low=0, high=1 << 16, section="BLEST §4")


@dataclass(frozen=True)
class BitmapDirectionKnobs(KnobSet):
    owner = "bitmap-direction"
    order: str = knob(ORDER)
    alpha: int = knob(ALPHA)
    beta: int = knob(BETA)
    narrow_edges: int = knob(NARROW_EDGES)
    one_block_vertices: int = knob(ONE_BLOCK_VERTICES)
    heavy_degree: int = knob(HEAVY_DEGREE)
    solo_pairs: int = knob(SOLO_PAIRS)
    block_threads: int = knob(BLOCK_THREADS)
    blocks_per_sm: int = knob(BLOCKS_PER_SM)
    max_blocks: int = knob(MAX_BLOCKS)
    block_visited: str = knob(BLOCK_VISITED)
    cluster: int = knob(CLUSTER)
    cluster_arcs: int = knob(CLUSTER_ARCS)

    def check(self) -> None:
        if self.cluster == 1:
            raise KnobError("knob cluster=1: a cluster of one block is the narrow levels' block; use 0 (no cluster) "
                            "or 2 to 16 blocks")


_A = "Array({}, 1, 'C', False, aligned=True)"
_V32, _V64, _U64 = _A.format("int32"), _A.format("int64"), _A.format("uint64")

#: Levels one launch may log (the host then launches again, from the saved state): 6.3 MB of host
#: memory and as much on the device.
LOG_ROWS = LAUNCH_LOG_LEVELS
#: Entries of each frontier queue a large graph's block levels keep in shared memory, and the
#: kernels' own shared memory, left out of what the block levels may take.
QUEUE_COPY = 4096
STATIC_SHARED = 16 * 1024


class BitmapDirection(BFSTechnique):
    technique = Technique.BITMAP_DIRECTION
    Knobs = BitmapDirectionKnobs
    kernel_kinds = (Kernel.MULTI_BLOCK, Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    directions = (Direction.TOP_DOWN, Direction.BOTTOM_UP)
    extras = (
        Extra("frontier_form", "how the level read its frontier: queue (top-down) or bitmap (bottom-up)", kind=str),
        Extra("frontier_converted", "the level first converted its frontier into the form it reads (a bitmap from "
              "the queue, or a queue from the bitmap)", kind=bool),
        Extra("words_tested", "bottom-up: adjacency words (32 candidate parents each) ANDed with the frontier "
              "bitmap; 0 top-down", "words"),
        Extra("candidates_found", "bottom-up: frontier in-neighbours those ANDs showed (a vertex takes the lowest; "
              "at least one a vertex found)", "vertices"),
        Extra("vertices_checked", "bottom-up: unvisited vertices that looked for a parent; 0 top-down", "vertices"),
        Extra("m_f", "Beamer's m_f for this level: the frontier's out-edges (1 after a bottom-up level, as GAP), "
              "which the rule compared, or, without heavy vertices, its bound: the frontier's size times the largest "
              "degree, when that was within narrow_edges", "edges"),
        Extra("m_u", "Beamer's m_u for this level: the edges not yet walked top-down", "edges"),
        Extra("heavy_vertices", "top-down in the grid: frontier vertices whose edges the whole grid walked as one "
              "flat range (knob heavy_degree)", "vertices"),
        Extra("cycles", "the level's SM cycles on block 0's SM (device clock): its share of the launch's time is "
              "cycles / the launch's sum", "cycles"),
    )
    # Every CUDA thread is a Python thread under the simulator: a grid of two blocks of 32.
    simulator_knobs = {"block_threads": 32, "blocks_per_sm": 1}
    test_knobs = (
        {"narrow_edges": 0, "one_block_vertices": 0},  # every level in the grid
        {"one_block_vertices": 0, "cluster": 2},  # one cluster: narrow levels in its block 0, the rest in all
        {"narrow_edges": 0, "one_block_vertices": 0, "alpha": 1_000_000, "beta": 1, "order": "degree",
         "max_blocks": 1},  # bottom-up at once
        {"narrow_edges": 0, "one_block_vertices": 0, "heavy_degree": 1 << 30, "solo_pairs": 1},  # warps alone
        {"narrow_edges": 0, "alpha": 1_000_000},  # every level in one block, bottom-up too
        {"block_threads": 64},  # two warps a block: the block levels' keeper is not thread 0
    )
    classroom_note = ("Watch the kernel column and the direction: the whole search is one launch. Small top-down "
                      "frontiers run in one block, the fat middle levels bottom-up over the whole GPU, where each "
                      "unvisited vertex ANDs 32 of its in-neighbours at a time with the frontier bitmap "
                      "(words_tested, candidates_found).")

    def check(self, graph, knobs, limits) -> None:
        if knobs.block_threads > limits.max_threads_per_block:
            raise KnobError(f"knob block_threads={knobs.block_threads} exceeds this GPU's "
                            f"{limits.max_threads_per_block} threads per block")
        if knobs.cluster and not limits.clusters:
            raise KnobError(f"knob cluster={knobs.cluster} needs thread-block clusters (compute capability 9.0 or "
                            f"later); {limits.name} has none: use cluster=0")

    # The graph preparation's CPU code (explorer.graphs.prepare: rows check, renumbering, packing),
    # compiled in helper processes beside the kernels on a first run (explorer.warmup.compile_ahead).
    first_run_functions = (
        (("explorer.reference.bfs", "rows_sorted", f"({_V64}, {_V32})"),),
        (("explorer.graphs.prepare", "_renumber", f"({_V64}, {_V32}, {_V32}, {_V32}, {_V64}, {_V32})"),),
        (("explorer.graphs.prepare", "_pair_counts", f"({_V64}, {_V32}, {_V64})"),
         ("explorer.graphs.prepare", "_fill_pairs", f"({_V64}, {_V32}, {_V64}, {_U64}, {_U64})")),
    )

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import common
        from kernels.bitmap_direction import kernel as kk

        # The graph decides which search runs (a graph that one block pulls: the block kernel; one of
        # at most cluster_arcs arcs: the cluster's build): the grid's first, the slower to compile;
        # their builds depend on the knobs only.
        regs = kk.registers(knobs.block_threads)
        searches = (kk.search_kernel(bool(instrument), regs), kk.block_kernel(bool(instrument), regs))
        if knobs.cluster:
            searches += (kk.search_kernel(bool(instrument), regs, True),)
        return declared(*searches, kk.bitmap_clear, kk.bitmap_start, common.to_graph_ids)  # the last: renumbered

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx)


def block_memory(n: int, small: bool, shared_room: int, visited: str) -> tuple[bool, int, int]:
    """(small, shared_words, qcap) of the block levels (layout.Params): a small graph keeps its
    visited and frontier bitmaps in shared memory and as many queue entries as fit (it is no longer
    small where its bitmaps do not fit); a large one its visited bitmap when it fits beside
    QUEUE_COPY entries of each queue (knob block_visited), else none."""
    words = -(-n // 32)
    room = max(0, shared_room - STATIC_SHARED) // 4
    if small and 4 * words <= room:
        return True, words, max(0, min(n, (room - 4 * words) // 2))
    qcap = max(0, min(n, QUEUE_COPY, room // 2))
    return False, (words if visited == "shared" and words + 2 * qcap <= room else 0), qcap


def _allow(plan, shared: int, cluster: int) -> None:
    """Let the plan's kernel have `shared` bytes of dynamic shared memory, before the occupancy query,
    which counts them, and clusters of `cluster` blocks. Any size opts in: without it, static and
    dynamic shared memory together may not pass 48 KB (the kernels' own static arrays take up to
    STATIC_SHARED of that); clusters of more than 8 blocks are not portable and must opt in too."""
    from cuda.bindings import driver as drv

    from ..engine.launcher import allow_large_clusters

    if shared > 0:
        attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        err, = drv.cuKernelSetAttribute(attr, shared, plan.handle, plan.cufunc.device.id)
        if err != drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"allowing the bitmap-direction search {shared:,} B of shared memory failed: "
                               f"{err.name}")
    if cluster > 8:
        allow_large_clusters(drv, plan, f"the bitmap-direction search in clusters of {cluster} blocks")


class _DirectLaunch:
    """One launch with its argument pointers (and a cooperative launch's configuration) built at
    set-up: the launcher re-types named tuples of arrays on every call, and its cooperative path
    rebuilds the configuration, 50-100 µs of Python inside the timed window, more than a small
    graph's whole search. Its marshalled arguments are the launcher's (Launcher.prepare, with this
    run's argument objects)."""

    def __init__(self, plan, blocks: int, threads: int, shared: int, cooperative: bool, cluster: bool):
        import ctypes
        from itertools import chain

        from cuda.bindings import driver as drv

        from ..engine.launcher import launch_config

        self.drv, self.handle = drv, plan.handle
        self.chunks = [list(c) for c in plan.chunks]  # kept alive with the pointers to them
        ptrs = [ctypes.addressof(c) for c in chain.from_iterable(self.chunks)]
        self.params = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        self.address = ctypes.addressof(self.params)
        self.dims = (blocks, threads, shared)
        self.cfg = None
        if cooperative or cluster:  # a cooperative grid, or the whole launch one cluster
            self.cfg = launch_config(drv, blocks, threads, shared, cooperative=cooperative,
                                     cluster=blocks if cluster else 0)
        self.ok = drv.CUresult.CUDA_SUCCESS
        self.what = (f"{'one cluster of ' if cluster else ''}{blocks} block{'s' * (blocks > 1)} of {threads} threads, "
                     f"{shared:,} B of shared memory")

    def clusters_fit(self) -> int:
        """Clusters of this launch's shape the GPU can hold at once (the driver's occupancy query)."""
        err, func = self.drv.cuKernelGetFunction(self.handle)
        if err == self.ok:
            err, count = self.drv.cuOccupancyMaxActiveClusters(func, self.cfg)
        if err != self.ok:
            raise RuntimeError(f"asking how many clusters of {self.what} fit failed: {err.name}")
        return int(count)

    def __call__(self) -> None:
        if self.cfg is None:
            blocks, threads, shared = self.dims
            err, = self.drv.cuLaunchKernel(self.handle, blocks, 1, 1, threads, 1, 1, shared, 0, self.address, 0)
        else:
            err, = self.drv.cuLaunchKernelEx(self.cfg, self.handle, self.address, 0)
        if err != self.ok:
            from ..engine.launcher import cluster_refused

            if self.cfg is not None and "CLUSTER" in err.name:
                raise cluster_refused(f"the bitmap-direction search ({self.what})", err.name)
            raise RuntimeError(f"launching the bitmap-direction search ({self.what}) failed: {err.name}")


class _Loop(LevelLoop):
    compiled_ahead = True

    def __init__(self, ctx: RunContext):
        from explorer.graphs.prepare import prepare
        from kernels import common
        from kernels.bitmap_direction import kernel as kk
        from kernels.bitmap_direction import layout as L

        g, k, rt = ctx.graph, ctx.knobs, ctx.runtime
        self.ctx, self.L = ctx, L
        self.prep = prep = prepare(g, k.order, ctx.status)
        n = g.num_vertices
        words = max(1, -(-n // 32))
        if prep.perm is None and prep.indices is g.indices:
            out = ctx.graph_arrays  # the graph's own rows are sorted: no second copy
        else:
            out = ctx.derived(f"bitmap-direction-out:{prep.order}", lambda _: (prep.offsets, prep.indices))
        packed = ctx.derived(f"bitmap-direction-in:{prep.order}", lambda _: (prep.head, prep.pair_offsets, prep.pairs))
        self.graph = L.GraphArrays(*out, *packed)
        heavy = max(1, min(n, g.num_arcs // k.heavy_degree + 1))
        self.search = L.SearchArrays(
            ctx.buffer("bd_dist", n, np.int32), ctx.buffer("bd_parent", n, np.int32),
            ctx.buffer("bd_visited", words, np.uint32), ctx.buffer("bd_fronts", 3 * words, np.uint32),
            ctx.buffer("bd_queues", (2, max(n, 1)), np.int32), ctx.buffer("bd_heavy_v", heavy, np.int32),
            ctx.buffer("bd_heavy_start", heavy, np.int64), ctx.buffer("bd_ctr", L.CTR_SIZE, np.int64),
            ctx.buffer("bd_rows", LOG_ROWS * L.LOG_FIELDS, np.int64))
        self.dist, self.parent = self.search.dist, self.search.parent
        self.graph_ids = None  # the result by the graph's own vertices, once mapped (device_result)
        self.small, shared_words, qcap = block_memory(n, 0 < prep.n_pull <= k.one_block_vertices,
                                                      ctx.limits.shared_room, k.block_visited)
        self.shared = 4 * L.block_words(n, self.small, shared_words, qcap)  # bytes of dynamic shared memory
        self.params = L.Params(*map(int, (n, prep.n_pull, k.alpha, k.beta, k.narrow_edges, k.heavy_degree, g.max_degree,
                                          k.solo_pairs, LOG_ROWS, self.small, shared_words, qcap)))  # int64, as declared
        self.gpu = rt.kind == "gpu"
        # Host memory the kernel writes: the host reads the levels while the kernel runs.
        self.log = ctx.buffer("bd_log", L.log_size(LOG_ROWS), np.int64, host="mapped")
        # The pool's buffer comes back from the last run with its rows in it: the host reads no row
        # past the count in its header, and the launch stamps its start there.
        self.log[:L.H_SIZE] = 0
        if self.gpu:
            from numba import cuda

            self.ended = cuda.event(timing=False)
        state = ctx.view("bd_state", self.search.ctr, L.STATE, L.STATE + L.NUM_T)
        self.readback = (state, ctx.buffer("bd_state", L.NUM_T, np.int64, host=True))

        # Set-up (untimed): -1 everywhere, the source at level 0, level 0's decision by the same rule.
        source = prep.new_id(ctx.source)
        fill = max(1, -(-n // 256))
        for arr in (self.dist, self.parent):
            ctx.launch_now(common.fill_int32, fill, 256, 0, arr, -1)
        ctx.launch_now(kk.bitmap_clear, max(1, -(-3 * words // 256)), 256, 0, self.search)
        m_f = int(prep.offsets[source + 1] - prep.offsets[source])
        m_u = int(prep.offsets[-1])
        bu, narrow, left = L.decide(False, m_f, m_u, 1, 0, n, k.alpha, k.beta, k.narrow_edges, self.small)
        st = ctx.buffer("bd_start", L.NUM_T, np.int64, host="mapped")  # bitmap_start reads it where it is
        st[:] = 0
        st[L.T_SIZE], st[L.T_BU], st[L.T_NARROW] = 1, int(bu), int(narrow)
        st[L.T_MF], st[L.T_MU], st[L.T_MU_LEFT] = m_f, m_u, left
        st[L.T_QUEUE], st[L.T_BITS] = 1, 1
        # The source in the tree and queue 0 (common.set_source, dist again for its stamp: there are none),
        # then in the bitmaps, with the first launch's state.
        ctx.launch_now(common.set_source, 1, 1, 0, self.dist, self.parent, self.search.queues[0], self.dist, source)
        ctx.launch_now(kk.bitmap_start, 1, 1, 0, self.search, source, st)

        # A small graph: the whole search in one block, an ordinary launch; a graph of at most
        # cluster_arcs arcs: one cluster; else the cooperative grid.
        self.cluster = 0 if self.small or g.num_arcs > k.cluster_arcs else k.cluster
        self.wide_kernel = Kernel.CLUSTER if self.cluster else Kernel.MULTI_BLOCK  # what a level not one block's ran
        regs = kk.registers(k.block_threads)
        if self.small:
            self.kernel = kk.block_kernel(bool(ctx.instrument), regs)
        else:
            self.kernel = kk.search_kernel(bool(ctx.instrument), regs, self.cluster > 0)
        self.args = (self.graph, self.search, self.params, self.log)
        self.threads = k.block_threads
        plan = None
        if self.gpu:  # compiled, and its arguments marshalled, before the clock starts
            rt.launcher.prepare(self.kernel, 1, self.threads, self.shared, *self.args, on_compile=ctx.compiling)
            plan = getattr(rt.launcher, "_plans", {}).get(self.kernel)
            if plan is not None:
                _allow(plan, self.shared, self.cluster)
        fits = 1 if self.small or self.cluster else common.coresident_blocks(self.kernel, self.args, self.threads,
                                                                            self.shared)
        if fits < 1:
            raise KnobError(f"knob block_threads={self.threads}: no block of the search fits on an SM of this GPU "
                            f"(with {self.shared:,} B of shared memory for its block levels): choose fewer threads")
        sms = ctx.limits.sm_count
        self.blocks = fits if k.blocks_per_sm == 0 else min(sms * k.blocks_per_sm, fits)
        if k.max_blocks:
            self.blocks = min(self.blocks, k.max_blocks)
        if self.small:  # block 0 runs every level: the others would only wait
            self.blocks = 1
        elif self.cluster:
            self.blocks = self.cluster
        self.direct = plan and _DirectLaunch(plan, self.blocks, self.threads, self.shared,
                                             not self.small and not self.cluster, self.cluster > 0)
        if self.direct and self.cluster and self.direct.clusters_fit() < 1:
            raise KnobError(f"knob cluster={self.cluster}: this GPU cannot place a cluster of {self.cluster} blocks of "
                            f"{self.threads} threads with {self.shared:,} B of shared memory each; choose a smaller "
                            "cluster, fewer block_threads, or cluster=0")
        self.first_row = True

    # ---- one launch (timed by the engine)
    def launch(self, go) -> None:
        if self.direct is not None:
            self.direct()
        elif self.small:
            go(self.kernel, 1, self.threads, self.shared, *self.args)
        elif self.cluster:
            go.cluster(self.kernel, self.blocks, self.blocks, self.threads, self.shared, *self.args)
        else:
            go.cooperative(self.kernel, self.blocks, self.threads, self.shared, *self.args)
        if self.gpu:
            go.record(self.ended)

    def _running(self) -> bool:
        return self.gpu and not self.ended.query()  # query raises if the kernel failed

    def streamed(self):
        """(level_ms, Batch of one level) for each level the running launch logs, as it publishes it,
        then those it logged after its last publication, from device memory once it has ended."""
        L, log = self.L, self.log
        seen, prev = 0, None
        while True:
            running = self._running()  # first: a launch that has ended has published what it will
            count = int(log[L.H_PUBLISHED])
            if seen < count:  # the rows published since the last poll, read at once
                rows = log[L.H_SIZE + seen * L.LOG_FIELDS:L.H_SIZE + count * L.LOG_FIELDS]
                for r in rows.reshape(-1, L.LOG_FIELDS).tolist():
                    yield self._level(r, prev)
                    prev = r
                seen = count
            if not running:
                break
            time.sleep(0)  # let other threads (a plot) run between polls
        for r in self._rest(seen):
            yield self._level(r, prev)
            prev = r

    def _rest(self, seen: int) -> list:
        """The rows the ended launch logged from row `seen` on (its saved state says how many)."""
        L, rt = self.L, self.ctx.runtime
        rt.read(*self.readback)
        logged = int(self.readback[1][L.T_NLEV])
        if logged <= seen:
            return []
        rows = rt.to_host(self.search.rows[seen * L.LOG_FIELDS:logged * L.LOG_FIELDS])
        return np.asarray(rows).reshape(-1, L.LOG_FIELDS).tolist()

    def _level(self, r: list, prev: list | None) -> tuple[float, Batch]:
        """A log row as a level's record and its device time (from the previous row's end, or the
        launch's start). Made for every level (a thousand a run on a long graph, while the launch
        runs): plain lookups, one dict."""
        L = self.L
        if prev:
            gt0, clk0 = prev[L.R_GT], prev[L.R_CLOCK]
        else:
            gt0, clk0 = int(self.log[L.H_GT0]), int(self.log[L.H_CLK0])
        bu = bool(r[L.R_BU])
        inst = bool(self.ctx.instrument)  # counts the run did not measure are None (base.measured)
        nxt = r[L.R_NEXT]
        row = {
            "frontier_in": r[L.R_FRONTIER], "edges_examined": r[L.R_EXAMINED] if inst or not bu else None,
            "discovered": nxt, "frontier_out": nxt,  # one claim a vertex: no duplicates
            "dup_generated": 0 if inst else None, "dup_detected": 0, "dup_undetected": 0 if inst else None,
            "kernel": Kernel.SINGLE_BLOCK if r[L.R_NARROW] else self.wide_kernel,
            "direction": Direction.BOTTOM_UP if bu else Direction.TOP_DOWN, "launches": 1 if self.first_row else 0,
            "frontier_form": "bitmap" if bu else "queue", "frontier_converted": bool(r[L.R_CONVERTED]),
            "words_tested": r[L.R_WORDS] if inst else None, "candidates_found": r[L.R_CANDS] if inst else None,
            "vertices_checked": r[L.R_CHECKED] if inst else None, "m_f": r[L.R_MF], "m_u": r[L.R_MU],
            "heavy_vertices": r[L.R_HEAVY], "cycles": max(0, r[L.R_CLOCK] - clk0)}
        self.first_row = False
        return max(0, r[L.R_GT] - gt0) / 1e6, Batch([row])

    def collect(self, ms: float) -> Batch:
        """Every level was handed over: whether to launch again (a full log), by the saved state."""
        L = self.L
        self.converged = int(self.readback[1][L.T_STOP]) == L.STOP_DONE
        if not self.converged:  # the next launch goes on from the saved state with an empty log
            self.log[:L.H_SIZE] = 0
            self.first_row = True
        return Batch([])

    def result(self):
        rt = self.ctx.runtime
        return tuple(rt.to_host(a) for a in self.device_result())

    def device_result(self):
        """(distances, parents) by the graph's own vertices, on the device: a renumbered search's
        mapped there once (common.to_graph_ids; untimed, after the search)."""
        if self.prep.perm is None:
            return self.dist, self.parent
        if self.graph_ids is None:
            from kernels import common

            ctx, n = self.ctx, self.ctx.graph.num_vertices
            prep = self.prep
            rank, perm = ctx.derived(f"bitmap-direction-ids:{prep.order}", lambda _: (prep.rank, prep.perm))
            self.graph_ids = ctx.buffer("bd_graph_dist", n, np.int32), ctx.buffer("bd_graph_parent", n, np.int32)
            ctx.launch_now(common.to_graph_ids, max(1, -(-n // 256)), 256, 0, self.dist, self.parent, rank, perm,
                           *self.graph_ids)
        return self.graph_ids
