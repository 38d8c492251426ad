"""BFS-4K's kernels compiled for one combination of the static knobs, and their launch
signatures (for compiling without a GPU: benchmarks/tools/kernel_resources.py)."""
from typing import NamedTuple

from .cluster import _cluster_kernel
from .commit import bfs4k_commit
from ..common import BLOCK_1024
from .layout import HASH64, NO_DEDUP, WARP_CULL, register_cap
from .multi import _level_kernels
from .single import _single_kernel


class Kernels(NamedTuple):
    """The BFS-4K kernels compiled for one combination of the static knobs."""
    multi: object
    heavy: object
    single: object
    stats: object
    commit: object


def kernels_for(instrument: bool, atomic_claim: bool, dedup: int, single_block_threads: int = 1024,
                shared_visited: bool = False, cluster: int = 1) -> Kernels:
    """BFS-4K's kernels with the run's static choices (per-level instrumentation, claim mode,
    duplicate filter, the single block's size and where it keeps visited flags) fixed at compile
    time.

    They never change during a run, and as constants they let the compiler drop the code of the
    paths not taken: fewer registers and fewer instructions on every level. The single block's
    size sets its register budget (`register_cap`). Each combination is compiled on first use and
    cached on disk (Numba's cache key includes these closure values). With cluster = C > 1 the
    single-block kernel is its cluster form, bfs4k_cluster, launched as one cluster of C blocks.

    Instrumentation is the duplicates' ground truth (two atomic exchanges a claim). A kernel whose
    claims are exclusive (compare-and-swap, or the visited bitmap's atomic OR) creates none: each
    vertex is claimed once, so its counts are 0 by construction and it is compiled without them.
    """
    instrument, atomic_claim, dedup = bool(instrument), bool(atomic_claim), int(dedup)
    if dedup not in (NO_DEDUP, HASH64, WARP_CULL):
        raise ValueError(f"dedup must be NO_DEDUP, HASH64 or WARP_CULL, got {dedup}")
    count_dups = instrument and not atomic_claim
    multi, heavy, stats = _level_kernels(count_dups, atomic_claim, dedup)
    if shared_visited and not atomic_claim:
        raise ValueError("the shared visited bitmap claims atomically: it needs atomic_claim")
    if cluster == 1:
        single = _single_kernel(count_dups, atomic_claim, dedup, int(single_block_threads), bool(shared_visited))
    elif cluster in (2, 4, 8, 16):
        if not shared_visited:
            raise ValueError("the cluster form splits the visited bitmap over its blocks: it needs shared_visited")
        single = _cluster_kernel(dedup, int(single_block_threads), int(cluster))
    else:
        raise ValueError(f"cluster must be 1, 2, 4, 8 or 16 blocks, got {cluster}")
    return Kernels(multi, heavy, single, stats, bfs4k_commit)


def kernel_signatures(instrument=False, atomic_claim=True, dedup=NO_DEDUP, single_block_threads=1024,
                      shared_visited=False, cluster=1):
    """(name, kernel, argument types, register cap) of each kernel as the engine launches it,
    for compiling ahead of a run or without a GPU (benchmarks/tools/kernel_resources.py)."""
    from ..args import signature

    k = kernels_for(instrument, atomic_claim, dedup, single_block_threads, shared_visited, cluster)
    cap = BLOCK_1024.get("max_registers", 0)
    return [("bfs4k_multi", k.multi, signature(k.multi), cap), ("bfs4k_heavy", k.heavy, signature(k.heavy), cap),
            ("bfs4k_stats", k.stats, signature(k.stats), cap),
            ("bfs4k_cluster" if cluster > 1 else "bfs4k_single", k.single, signature(k.single),
             register_cap(single_block_threads)),
            ("bfs4k_commit", k.commit, signature(k.commit), 0)]
