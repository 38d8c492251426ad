"""The load-balancing catalogue of the chapter "Graph Algorithms on GPUs" (Busato & Bombieri, §5)
as top-down BFS levels in Numba CUDA: how a frontier's work (its adjacency lists: work-items of
work-units) is mapped to threads.

  work-items to threads (§5.1.1)       gather.work_items
  static virtual warps (§5.1.2)        gather.virtual_warps: kernels.expand.expand_virtual_warp, W fixed
  dynamic virtual warps + heavy        BFS-4K's own multi-block kernels (kernels.bfs4k), run by the
    vertices (§5.2.1)                  host's BFS-4K level operator; its child grids are launched
                                       by the host (Numba has no dynamic parallelism)
  CTA + warp + scan (§5.2.2, Alg. 9)   gather.cta_warp_scan: Merrill, Garland & Grimshaw
  direct search (§5.3.1)               search.direct_search
  local warp search (§5.3.2)           gather.local_warp_search: edge-discover (kernels.expand)
  block search (§5.3.3)                search.block_search
  two-phase search (§5.3.4)            search.two_phase (after search.lb_partition)
  multi-phase search (§5.4-5.6)        search.multi_phase: coalesced expansion, iterated searches

Every strategy hands each candidate neighbour to the same claim, culls, local queue and warp
flush (device.step over kernels.claims, filters and frontier_ops), so they differ only in the mapping. Merrill et al.'s
duplicate culls (warp culling and history culling: kernels.filters) are
compile-time options of the level kernel (build.level_kernel).

The search strategies need the exclusive prefix sum of the frontier's degrees first
(search.lb_prefix_tiles, lb_prefix_sums, lb_prefix_add), two-phase and multi-phase also its
partition into balanced chunks (search.lb_partition). Modules: layout (no Numba: the constants
and the shared-memory layout the host shares), device, gather, search, build. Importing this
package imports no Numba; the kernels are loaded on first use.
"""
from .layout import *  # noqa: F401,F403

_LAZY = {"level_kernel": "build", "lb_prefix_tiles": "search", "lb_prefix_sums": "search",
         "lb_prefix_add": "search", "lb_partition": "search"}


def __getattr__(name):
    # The kernels need numba.cuda, which must not be imported before the host picks a backend.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
