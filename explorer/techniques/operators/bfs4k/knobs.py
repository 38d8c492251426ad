"""BFS-4K's knobs (K1..K7 and friends, each declared with the paper's meaning, range, default and
section): the parameters of BFS-4K's level operator, which the bfs4k technique exposes whole and
direction-optimizing and load-balance in part. The paper's §7 rules of thumb for choosing them are
the technique's (explorer.techniques.bfs4k.advice)."""
from __future__ import annotations

from dataclasses import dataclass

from ....knobs import POW2_BLOCKS, KnobError, KnobSet, KnobSpec, knob


@dataclass(frozen=True)
class BFS4KKnobs(KnobSet):
    """BFS-4K's K1..K7 with the paper's meaning, range and default, the claim mode, the duplicate
    filter, the sizes the paper derives by formula, and three extensions (defaults: the paper)."""

    owner = "bfs4k"

    K1: int = knob(KnobSpec(
        "K1", "minimum dynamic virtual warp size: WarpSize_i = pow2_floor(#ResThreads/|F_i|) clamped to [K1, 32]",
        4, choices=(1, 2, 4, 8, 16, 32), section="BFS-4K §5.2"))
    K2: float = knob(KnobSpec(
        "K2", "heavy vertices: % of |V| of the highest-degree frontier vertices (degree far above the average) "
        "handled by a child grid (launched by the host: Numba has no dynamic parallelism); 0 disables", 0.15, low=0.0, high=10.0, kind=float, section="BFS-4K §5.3"))
    K3: int = knob(KnobSpec(
        "K3", "child-grid sizing: #Blocks = degree / (K3 x block size), i.e. neighbours walked per child thread",
        16, low=1, high=1024, section="BFS-4K §5.3"))
    K4: int = knob(KnobSpec(
        "K4", "edge-discover instead of virtual warps when |F| < #ResThreads / K4; 0 disables edge-discover",
        2, choices=(0, 1, 2, 4), section="BFS-4K §5.4"))
    K5: int = knob(KnobSpec(
        "K5", "single-block kernel while |F| < F_Threshold = MaxThreadsPerBlock x K5; 0 disables it",
        1, low=0, high=16, section="BFS-4K §5.5"))
    K6: int = knob(KnobSpec(
        "K6", "threads per block of the multi-block kernel (also sizes its per-block hash table)",
        128, choices=POW2_BLOCKS, section="BFS-4K §5.5"))
    K7: int = knob(KnobSpec(
        "K7", "coalesced writes when the warp's minimum local-queue length reaches K7; 0 disables them",
        10, low=0, high=1024, section="BFS-4K §5.6"))
    claim: str = knob(KnobSpec(
        "claim", "how a thread claims an unvisited vertex: 'race' is the paper's benign race (several threads "
        "may see it unvisited in one level, creating duplicates); 'atomic' is compare-and-swap (no duplicates)",
        "race", choices=("race", "atomic"), kind=str, section="BFS-4K §4, §6"))
    dedup: str = knob(KnobSpec(
        "dedup", "duplicate filter on the next frontier: BFS-4K's shared-memory hash64, Merrill et al.'s "
        "warp culling, or none", "hash64", choices=("hash64", "warp-culling", "none"), kind=str,
        section="BFS-4K §6, Fig. 13"))
    warp_size_rule: str = knob(KnobSpec(
        "warp_size_rule", "how a multi-block level's virtual warp size is chosen: 'resident-threads' is §5.2's "
        "pow2_floor(#ResThreads/|F_i|) clamped to [K1, 32]; 'frontier-degree' also raises it to the degree bin of the "
        "frontier's median vertex (a power of two, at most 32), from the histogram the host plans with, so a frontier "
        "of high-degree vertices gets whole warps and one of low-degree vertices keeps small ones. Not in the paper; "
        "the single block keeps §5.2's rule (it plans on the device, without the histogram)",
        "resident-threads", choices=("resident-threads", "frontier-degree"), kind=str,
        section="extension of BFS-4K §5.2"))
    visited: str = knob(KnobSpec(
        "visited", "where the single-block kernel keeps the visited flags: 'global' (the distance array, as in the "
        "paper) or 'shared' (a bitmap of |V| bits in the block's shared memory beside F_d and F_d_new: a claim is a "
        "shared-memory atomic, not a global compare-and-swap, and the block logs its claims so that a grid over "
        "all SMs writes distances and parents after it; needs claim='atomic' and |V|/8 bytes of shared memory). "
        "Not in the paper: §5.5 keeps F_d, F_d_new and the hash table there, this keeps the flags too",
        "global", choices=("global", "shared"), kind=str, section="extension of BFS-4K §5.5"))
    cluster: int = knob(KnobSpec(
        "cluster", "blocks the single-block kernel runs on: 1 is the paper's one block; C > 1 spreads it over a "
        "thread-block cluster of C SMs (compute capability 9.0+, e.g. H100) that share a hardware barrier and each "
        "other's shared memory: F_Threshold and #ResThreads grow C-fold, the visited bitmap is split over the blocks "
        "and a level costs one cluster barrier (needs visited='shared'). Not in the paper, whose GPUs had no clusters",
        1, choices=(1, 2, 4, 8, 16), section="extension of BFS-4K §5.5"))
    single_block_threads: int = knob(KnobSpec(
        "single_block_threads", "MaxThreadsPerBlock of the single-block kernel", 1024,
        choices=POW2_BLOCKS, section="BFS-4K §5.5"))
    hash_entries: int = knob(KnobSpec(
        "hash_entries", "hash64 table entries per block (64-bit words); 0 = the paper's formula from shared memory",
        0, low=0, high=1 << 13, section="BFS-4K §5.5"))

    def check(self) -> None:
        if self.cluster > 1 and self.visited != "shared":
            raise KnobError(f"knob cluster={self.cluster} splits the visited bitmap over the cluster's blocks: "
                            "it needs visited='shared' (or use cluster=1)")
        if self.visited == "shared" and self.claim != "atomic":
            raise KnobError("knob visited='shared' claims with shared-memory atomics, which makes no "
                            "duplicates: it needs claim='atomic' (or use visited='global')")
        if self.hash_entries and self.hash_entries & (self.hash_entries - 1):
            raise KnobError(f"knob hash_entries={self.hash_entries} must be 0 or a power of two "
                            "(the paper's tables are powers of two)")
