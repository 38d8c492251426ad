"""Per-level decisions of BFS-4K as pure host code: which kernel, warp size, edge-discover or
virtual warps, how many heavy vertices, which prefix-sum variant; plus the shared-memory layout
the paper derives (§5.5); §7's rule of thumb for K1, which H-BF shares (the other §7 rules:
explorer.techniques.bfs4k.advice).

Everything here is a function of numbers (frontier statistics, knobs, device limits), so it is
unit-tested without a GPU. The formulas themselves live in kernels.rules, shared with the
single-block kernel, which takes the same decisions on the device.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import rules
from kernels.bfs4k.layout import NUM_COUNTERS as COUNTER_SLOTS

from ....device import DeviceLimits
from ....knobs import KnobError
from .knobs import BFS4KKnobs as Knobs

#: Bytes of static shared memory the BFS-4K kernels use besides the tables (the paper's Var_size).
#: Multi-block: counters and the degree histogram (at most 2 x 32 int64). Single block: three
#: rotating rows of counters and heavy-candidate bins (int32), per-warp degree sums (int64) and
#: maxima (int32), and the exit histogram (2 x 32 int64); ptxas reports 2,192 bytes.
VAR_BYTES_MULTI = 2 * rules.DEGREE_BINS * 8
VAR_BYTES_SINGLE = (3 * (COUNTER_SLOTS + rules.DEGREE_BINS) * 4 + 3 * 32 * (8 + 4)
                    + 2 * rules.DEGREE_BINS * 8 + 64)  # + 64: alignment slack
CULL_BYTES_PER_WARP = 128 * 4
#: The single block keeps each F_d entry's first edge (int64) and degree (int32) beside it.
ROW_BYTES = 12


@dataclass(frozen=True)
class FrontierStats:
    """What the host knows about a frontier before launching its level."""

    size: int
    bin_counts: tuple  # vertices per degree bin floor(log2(degree)) (duplicates counted)
    bin_edges: tuple  # sum of degrees per bin
    edges: int = -1  # their sum (the edges the level examines), filled in from bin_edges

    def __post_init__(self):
        if self.edges < 0:  # summed once: the level loop reads it several times a level
            object.__setattr__(self, "edges", sum(self.bin_edges))

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


@dataclass(frozen=True)
class LevelPlan:
    kernel: str  # "single-block" or "multi-block"
    res_threads: int
    warp_size: int  # virtual warp size; 32 under edge-discover
    edge_discover: bool
    heavy_degree: int  # degree from which a frontier vertex takes the heavy path (0: none)
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
    largest power of two of what is left of the block's shared memory (the paper's 48 KB; when
    F_d and F_d_new leave nothing of that, of what the block may opt in to). Then, in the shared
    memory a block may opt in to (they are not the paper's, so they do not shrink the paper's hash
    table): F_d's rows (first edge and degree of each entry, 12 bytes, loaded at each level's
    start) and, with visited='shared', a bitmap of the graph's `num_vertices` visited flags.

    With knob cluster = C > 1 the layout is each block's of the cluster form (bfs4k_cluster):
    F_Threshold is C times the block's F_d capacity, F_d_new has rows too (the claimers write
    them), and the bitmap is split over the C blocks."""
    C = knobs.cluster
    if C > 1 and not limits.clusters:
        raise KnobError(f"knob cluster={C} needs thread-block clusters (compute capability 9.0 or later); "
                        f"{limits.name} has none: use cluster=1")
    fthr = knobs.single_block_threads * knobs.K5
    room = limits.shared_room
    rows = 2 if C > 1 else 1  # the cluster form keeps F_d_new's rows as well as F_d's
    words = -(-((num_vertices + 31) // 32) // C) if knobs.visited == "shared" else 0
    parts = {"F_d and F_d_new": 8 * fthr, "the frontier's rows": rows * ROW_BYTES * fthr,
             "the kernel's counters": VAR_BYTES_SINGLE}
    if knobs.dedup == "warp-culling":
        parts["the warp-culling tables"] = (knobs.single_block_threads // 32) * CULL_BYTES_PER_WARP
    if words:
        parts[f"the visited flags of {num_vertices:,} vertices" + (f" (a {C}-th of them)" if C > 1 else "")] = 4 * words
    entries = 0
    if knobs.dedup == "hash64":
        paper_free = limits.shared_per_block - parts["F_d and F_d_new"] - VAR_BYTES_SINGLE
        free = paper_free if paper_free >= 8 else room - sum(parts.values())
        entries = rules.pow2_floor(free) // 8 if free >= 8 else 0
        if knobs.hash_entries:
            entries = min(entries, knobs.hash_entries)
        parts["the hash64 table"] = max(8 * entries, 8)  # at least one entry
    need = sum(parts.values())
    if need > room:
        fixes = "visited='global', a smaller K5" if words else "a smaller K5 or single_block_threads"
        if words and C < 16 and limits.clusters:
            fixes += " or a larger cluster, which splits the flags over its SMs"
        raise KnobError(
            f"knob K5={knobs.K5} with single_block_threads={knobs.single_block_threads}"
            f"{', visited=shared' if words else ''}{f', cluster={C}' if C > 1 else ''} needs {need:,} bytes of "
            f"shared memory a block (" + ", ".join(f"{v:,} for {k}" for k, v in parts.items())
            + f"); this GPU gives a block at most {room:,}: use {fixes} (or K5=0 to disable the single-block kernel)")
    region0 = 2 * entries if knobs.dedup == "hash64" else parts.get("the warp-culling tables", 0) // 4
    dynamic = 4 * (region0 + 2 * fthr + words) + rows * ROW_BYTES * fthr
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


def section7_k1(avg_degree: float, std_degree: float) -> tuple[int, str]:
    """BFS-4K §7's K1 for a graph of this mean out-degree and deviation, and why."""
    if avg_degree >= 48 or std_degree >= 48:
        return 32, "high average degree or deviation: the largest minimum warp (§7)"
    if avg_degree >= 16 or std_degree >= 24:
        return 16, "medium-high average degree or deviation (§7: K1 grows with both)"
    if avg_degree >= 8 or std_degree >= 12:
        return 8, "medium average degree or deviation (§7: K1 grows with both)"
    return 4, "low average degree and deviation, as road networks (§7)"


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
        edge_discover=ed, heavy_degree=(1 << hb) if hb < rules.DEGREE_BINS else 0,
        heavy_vertices=heavy_n, heavy_edges=heavy_e, heavy_blocks=heavy_blocks, binary_scan=binary,
        block_threads=block, blocks=blocks)
