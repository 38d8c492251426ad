"""BFS-4K kernels (Busato & Bombieri, TPDS 2015, §4-§6) in Numba CUDA.

One level of frontier propagation is: take frontier vertices (dynamic virtual warps, §5.2, or
edge-discover, §5.4), claim unvisited neighbours (the paper's benign race, or compare-and-swap),
filter duplicates (hash64, §6, or Merrill's warp culling), keep survivors in per-thread local
queues and write them to the next frontier with warp prefix sums (shuffle or ballot/popc, §5.1),
coalesced when the warp's shortest queue is long enough (§5.6).

Kernels:
  bfs4k_multi    one level per launch, many blocks, per-block hash table (§5.5, multi-block).
  bfs4k_heavy    the heavy-vertex "child grid" (§5.3). Numba cannot launch kernels from device
                 code (no dynamic parallelism), so the multi-block kernel queues heavy vertices and
                 the host launches this grid right after it in the same level, sized by the
                 paper's rule #Blocks = sum(degree) / (K3 x block size).
  bfs4k_stats    after a multi-block level: the next frontier's degree histogram, which the host
                 plans the next level from (one coalesced pass over the queue). For a small next
                 frontier with no child grid, bfs4k_multi's last block counts it instead.
  bfs4k_single   one block running level after level inside one launch while the frontier stays
                 below F_Threshold (§5.5, single-block), frontier and hash table in shared memory
                 (and, with knob visited='shared', the visited flags: an extension of the paper);
                 a frontier with a heavy vertex goes back to the host, where its child grid
                 can be launched.
  bfs4k_cluster  the single-block kernel on a thread-block cluster of C SMs (knob cluster, an
                 extension for compute capability 9.0+): one cluster barrier a level, the visited
                 bitmap split over the blocks' shared memory, the same decisions in every block.
  bfs4k_commit   after a single-block launch with visited='shared': writes its visit log into
                 dist and parent over all SMs (the block logs its claims, coalesced).

Every warp-level call is made by all 32 lanes (loops run while any lane has work), which is
what the shuffles need on the GPU and what kernels.cudasim checks under the simulator.

Modules: layout (the constants the host shares, no Numba: `from kernels.bfs4k import layout`),
args (the kernels' argument groups, kernels.args), build (kernels_for, Kernels, kernel_signatures),
multi, single, cluster, commit (the kernels), device (helpers), provenance (multi's and heavy's
variant that logs who made each claim, for explorer.duplicates; the kernels above are not
changed by it). The expansion (virtual warps, edge-discover, the heavy-vertex list), the claims,
the duplicate filters, the local queues and flushes and the degree histogram are the shared
operators' (kernels.expand, claims, filters, frontier_ops, histogram). Importing this package
imports no Numba: the names of build are loaded on first use.
"""
from .layout import *  # noqa: F401,F403  (the constants the host reads: L_*, S_*, dedup codes, slots)

_LAZY = {"Kernels", "kernels_for", "kernel_signatures"}


def __getattr__(name):
    # The kernels need numba.cuda, which must not be imported before the host picks a backend.
    if name in _LAZY:
        from . import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
