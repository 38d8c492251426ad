"""Per-level decisions of BFS-4K as pure host code: which kernel, warp size, edge-discover or
virtual warps, how many heavy vertices, which prefix-sum variant; plus the shared-memory layout
the paper derives (§5.5). The §7 rules of thumb live with the knobs (techniques.recommend_knobs).

Everything here is a function of numbers (frontier statistics, knobs, device limits), so it is
unit-tested without a GPU. The formulas themselves live in kernels.rules, shared with the
single-block kernel, which takes the same decisions on the device.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import rules

from .techniques import KnobError, Knobs

#: Bytes of static shared memory the BFS-4K kernels use besides the tables (the paper's Var_size).
#: Multi-block: counters and the degree histogram (at most 2 x 32 int64). Single block: three
#: rotating rows of counters and heavy-candidate bins (int32), per-warp degree sums (int64) and
#: maxima (int32), and the exit histogram (2 x 32 int64); ptxas reports 2,192 bytes.
VAR_BYTES_MULTI = 2 * rules.DEGREE_BINS * 8
#: kernels.common.NUM_COUNTERS, not imported: kernels.common imports numba.cuda, which must wait
#: until the backend (GPU or simulator) is chosen.
COUNTER_SLOTS = 12
VAR_BYTES_SINGLE = (3 * (COUNTER_SLOTS + rules.DEGREE_BINS) * 4 + 3 * 32 * (8 + 4)
                    + 2 * rules.DEGREE_BINS * 8 + 64)  # + 64: alignment slack
CULL_BYTES_PER_WARP = 128 * 4
#: The single block keeps each F_d entry's first edge (int64) and degree (int32) beside it.
ROW_BYTES = 12


@dataclass(frozen=True)
class DeviceLimits:
    """The device constraints the paper's formulas use."""

    name: str
    sm_count: int
    max_threads_per_sm: int
    max_threads_per_block: int = 1024
    shared_per_block: int = 48 * 1024  # without the opt-in for larger dynamic shared memory
    shared_per_sm: int = 48 * 1024
    shared_per_block_optin: int = 0  # with the opt-in (0: none beyond shared_per_block)
    clusters: bool = False  # thread-block clusters (compute capability 9.0 and later): knob cluster > 1

    @property
    def res_threads(self) -> int:
        """#ResThreads of the multi-block kernel: the GPU's maximum resident threads."""
        return self.sm_count * self.max_threads_per_sm

    @classmethod
    def from_current_device(cls) -> "DeviceLimits":
        from numba import cuda

        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return cls(name=name, sm_count=dev.MULTIPROCESSOR_COUNT,
                   max_threads_per_sm=dev.MAX_THREADS_PER_MULTIPROCESSOR,
                   max_threads_per_block=dev.MAX_THREADS_PER_BLOCK,
                   shared_per_block=dev.MAX_SHARED_MEMORY_PER_BLOCK,
                   shared_per_sm=dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                   shared_per_block_optin=dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                   clusters=dev.compute_capability >= (9, 0))

    @classmethod
    def simulator(cls) -> "DeviceLimits":
        """A small pretend GPU for the simulator: enough resident threads for the policy to vary, and
        the shared memory a block of an H100 or H200 may opt in to."""
        return cls(name="simulator", sm_count=2, max_threads_per_sm=1024, shared_per_block_optin=227 * 1024,
                   clusters=True)


@dataclass(frozen=True)
class FrontierStats:
    """What the host knows about a frontier before launching its level."""

    size: int
    bin_counts: tuple  # vertices per degree bin floor(log2(degree)) (duplicates counted)
    bin_edges: tuple  # sum of degrees per bin

    @classmethod
    def of_vertices(cls, degrees: np.ndarray) -> "FrontierStats":
        degrees = np.asarray(degrees, dtype=np.int64)
        bins = np.zeros(len(degrees), dtype=np.int64)
        nz = degrees > 1
        bins[nz] = np.floor(np.log2(degrees[nz])).astype(np.int64)
        counts = np.bincount(bins, minlength=rules.DEGREE_BINS)[: rules.DEGREE_BINS]
        edges = np.bincount(bins, weights=degrees, minlength=rules.DEGREE_BINS)[: rules.DEGREE_BINS]
        return cls(len(degrees), tuple(int(c) for c in counts), tuple(int(e) for e in edges))

    @classmethod
    def from_histogram(cls, size: int, hist: np.ndarray) -> "FrontierStats":
        nb = rules.DEGREE_BINS
        values = hist[:2 * nb].tolist()  # Python ints in one call (this runs between every two levels)
        return cls(int(size), tuple(values[:nb]), tuple(values[nb:]))

    @property
    def edges(self) -> int:
        return sum(self.bin_edges)


@dataclass(frozen=True)
class LevelPlan:
    kernel: str  # "single-block" or "multi-block"
    res_threads: int
    warp_size: int  # virtual warp size; 32 under edge-discover
    edge_discover: bool
    heavy_threshold: int  # degree from which a vertex takes the heavy path (0: none)
    heavy_vertices: int
    heavy_edges: int
    heavy_blocks: int  # child grid size: sum(degree) / (K3 x block size)
    binary_scan: bool
    block_threads: int
    blocks: int


@dataclass(frozen=True)
class SharedLayout:
    """Shared memory of one block of a BFS-4K kernel (§5.5)."""

    hash_entries: int  # 64-bit words of the hash64 table
    frontier_capacity: int  # entries of F_d (and of F_d_new) kept in shared memory
    region0_words: int  # int32 words before F_d: the hash or culling tables
    dynamic_bytes: int
    bitmap_words: int = 0  # int32 words of the visited bitmap after F_d_new (knob visited='shared')


def single_block_layout(knobs: Knobs, limits: DeviceLimits, num_vertices: int = 0) -> SharedLayout:
    """§5.5: F_Threshold = MaxThreadsPerBlock x K5; F_d, F_d_new hold it; the hash table gets the
    largest power of two of what is left of the block's shared memory. Then, in the shared memory
    a block may opt in to (they are not the paper's, so they do not shrink the paper's hash
    table): F_d's rows (first edge and degree of each entry, 12 bytes, loaded at each level's
    start) and, with visited='shared', a bitmap of the graph's `num_vertices` visited flags.

    With knob cluster = C > 1 the layout is each block's of the cluster form (bfs4k_cluster):
    F_Threshold is C times the block's F_d capacity, F_d_new has rows too (the claimers write
    them), and the bitmap is split over the C blocks."""
    fthr = knobs.single_block_threads * knobs.K5
    fd_bytes = 4 * fthr
    free = limits.shared_per_block - 2 * fd_bytes - VAR_BYTES_SINGLE
    cull_bytes = (knobs.single_block_threads // 32) * CULL_BYTES_PER_WARP
    if knobs.dedup == "warp-culling":
        free -= cull_bytes
    if free < (8 if knobs.dedup == "hash64" else 0):
        max_k5 = (limits.shared_per_block - VAR_BYTES_SINGLE - 8) // (8 * knobs.single_block_threads)
        raise KnobError(
            f"knob K5={knobs.K5} with single_block_threads={knobs.single_block_threads} needs "
            f"{2 * fd_bytes:,} bytes of shared memory for F_d and F_d_new; this GPU gives a block "
            f"{limits.shared_per_block:,}: use K5 <= {max_k5} (or K5=0 to disable the single-block kernel)")
    entries = 0
    if knobs.dedup == "hash64":
        entries = rules.pow2_floor(free) // 8
        if knobs.hash_entries:
            entries = min(entries, knobs.hash_entries)
        region0 = 2 * entries
    elif knobs.dedup == "warp-culling":
        region0 = cull_bytes // 4
    else:
        region0 = 0
    words = 0
    C = knobs.cluster
    if knobs.visited == "shared":
        if knobs.claim != "atomic":
            raise KnobError("knob visited='shared' claims with shared-memory atomics, which makes no "
                            "duplicates: it needs claim='atomic' (or use visited='global')")
        words = -(-((num_vertices + 31) // 32) // C)
    if C > 1 and not limits.clusters:
        raise KnobError(f"knob cluster={C} needs thread-block clusters (compute capability 9.0 or later); "
                        f"{limits.name} has none: use cluster=1")
    rows = 2 if C > 1 else 1  # the cluster form keeps F_d_new's rows as well as F_d's
    dynamic = 4 * (region0 + 2 * fthr + words) + rows * ROW_BYTES * fthr
    room = max(limits.shared_per_block_optin, limits.shared_per_block)
    need = dynamic + VAR_BYTES_SINGLE
    more = ", or a larger cluster, which splits the flags over its SMs" if C < 16 and limits.clusters else ""
    if need > room:
        raise KnobError(
            f"knob visited='shared' needs {4 * words:,} bytes of shared memory for the visited flags of "
            f"{num_vertices:,} vertices{f' (a {C}-th of them: cluster={C})' if C > 1 else ''}, {need:,} in all with "
            f"F_d, F_d_new and their rows (K5={knobs.K5}); this GPU gives a block {room:,}: use visited='global' "
            f"(or a smaller K5{more})" if words else
            f"knob K5={knobs.K5} with single_block_threads={knobs.single_block_threads} needs {need:,} bytes of "
            f"shared memory, {rows * ROW_BYTES * fthr:,} of them for the frontier's rows; this GPU gives a block "
            f"{room:,}: use a smaller K5 (or K5=0 to disable the single-block kernel)")
    return SharedLayout(entries, fthr, region0, dynamic, words)


def multi_block_layout(knobs: Knobs, limits: DeviceLimits) -> SharedLayout:
    """§5.5: HashT_size = nearest_pow2((|SM| - Var_size) x K6 / MaxThrPerMultiproc) per block."""
    if knobs.dedup == "hash64":
        share = (limits.shared_per_sm - VAR_BYTES_MULTI) * knobs.K6 // limits.max_threads_per_sm
        share = min(share, limits.shared_per_block - VAR_BYTES_MULTI)
        entries = max(1, rules.pow2_floor(share) // 8)
        if knobs.hash_entries:
            entries = min(entries, knobs.hash_entries)
        return SharedLayout(entries, 0, 2 * entries, 8 * entries)
    if knobs.dedup == "warp-culling":
        words = (knobs.K6 // 32) * CULL_BYTES_PER_WARP // 4
        return SharedLayout(0, 0, words, 4 * words)
    return SharedLayout(0, 0, 0, 0)


def plan_level(frontier: FrontierStats, knobs: Knobs, limits: DeviceLimits, num_vertices: int) -> LevelPlan:
    """BFS-4K's decisions for one level (§5.2-§5.5), from the frontier's size and degree histogram."""
    size = frontier.size
    limit = rules.heavy_limit(num_vertices, knobs.K2)
    # A frontier with a heavy vertex leaves the single block: Numba has no dynamic parallelism,
    # so the vertex's child grid must be launched from the host, next to the multi-block kernel.
    single = (knobs.K5 > 0 and size < knobs.single_block_threads * knobs.K5 * knobs.cluster
              and not rules.has_heavy(frontier.bin_counts, limit, knobs.K3 * knobs.single_block_threads))
    block = knobs.single_block_threads if single else knobs.K6
    res = block * knobs.cluster if single else limits.res_threads
    ed = rules.use_edge_discover(res, size, knobs.K4)
    warp = 32 if ed else rules.virtual_warp_size(res, size, knobs.K1)
    hb = rules.heavy_bin(frontier.bin_counts, limit, knobs.K3 * block)
    if knobs.warp_size_rule == "frontier-degree" and not (ed or single):
        warp = max(warp, rules.median_degree_warp(frontier.bin_counts, hb))
    heavy_n = sum(frontier.bin_counts[hb:])
    heavy_e = sum(frontier.bin_edges[hb:])
    # §5.1 binary scan: each lane then holds at most one vertex; the multi-block grid always gives
    # every virtual warp one vertex, the single block only while |F| x W fits in it.
    binary = (not ed) and (not single or size * warp <= res) \
        and rules.max_degree_below(frontier.bin_counts, hb) <= warp
    if single:
        blocks, heavy_blocks = 1, 0
    else:
        threads = (size + 31) // 32 * 32 if ed else size * warp
        blocks = max(1, -(-threads // block))
        heavy_blocks = -(-heavy_e // (knobs.K3 * block)) if heavy_n else 0
    return LevelPlan(
        kernel="single-block" if single else "multi-block", res_threads=res, warp_size=warp,
        edge_discover=ed, heavy_threshold=(1 << hb) if hb < rules.DEGREE_BINS else 0,
        heavy_vertices=heavy_n, heavy_edges=heavy_e, heavy_blocks=heavy_blocks, binary_scan=binary,
        block_threads=block, blocks=blocks)
