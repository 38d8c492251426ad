"""The level kernel of each expand strategy, compiled for the run's static choices, and the passes
that come before it."""
import functools
from typing import NamedTuple

from numba import cuda, int32, int64

from .. import rules
from ..args import BOOL, I64, V64, Graph, Level, Rows, Stamps, Tree
from ..common import BLOCK_1024, clear_next_row
from ..frontier_ops import no_cluster
from . import layout as L
from .layout import CULL_ENTRIES, NEXT_SIZE, NUM_COUNTERS, OVERFLOW, QLEN
from .device import NUM_ACC, publish, start_block
from .gather import SHV_WORDS, cta_warp_scan, local_warp_search, virtual_warps, work_items
from .search import block_search, direct_search, multi_phase, two_phase

_BODIES = {L.WORK_ITEMS: work_items, L.VIRTUAL_WARPS: virtual_warps, L.CTA_WARP_SCAN: cta_warp_scan,
           L.DIRECT_SEARCH: direct_search, L.LOCAL_WARP_SEARCH: local_warp_search, L.BLOCK_SEARCH: block_search,
           L.TWO_PHASE: two_phase, L.MULTI_PHASE: multi_phase}
#: Strategies whose candidates go through kernels.load_balance.device.step (history culling is
#: there); virtual warps and local warp search run BFS-4K's loops, which visit through frontier_ops.
STEPPED = (L.WORK_ITEMS, L.CTA_WARP_SCAN, L.DIRECT_SEARCH, L.BLOCK_SEARCH, L.TWO_PHASE, L.MULTI_PHASE)

_shared_layout = cuda.jit(device=True)(L.shared_layout)


class Prefix(NamedTuple):
    """The prefix-sum pass's arrays (kernels.load_balance.search): the exclusive prefix sum of the
    frontier's degrees (size + 1 entries) and the balanced chunks' first entries."""

    prefix: V64
    parts: V64


class Params(NamedTuple):
    """The strategy's parameters: p1, p2 (W; CTA_TH and WARP_TH; K and IS), history culling's
    table entries (a power of two; 0: off), and whether this kernel clears the other row of
    counters (the level's first kernel does: the prefix-sum pass, where there is one)."""

    p1: I64
    p2: I64
    history_entries: I64
    clear: BOOL


@functools.cache
def level_kernel(expand: int, instrument: bool, atomic_claim: bool, culling: int):
    """One level of `expand` (a layout code; dynamic virtual warps are BFS-4K's kernels) with the
    claim mode and Merrill et al.'s culls fixed at compile time. Launch with the dynamic shared
    memory of layout.shared_bytes(expand, B, p1, p2, warp culling, hist_entries).

    Arguments: (graph: Graph, tree: Tree, stamps: Stamps, queues: Level, rows: Rows,
    prefix: Prefix, params: Params).
    """
    if expand not in _BODIES:
        raise ValueError(f"no level kernel for expand strategy {expand}")
    warp_cull = bool(culling & L.CULL_WARP)
    if culling & L.CULL_HISTORY and expand not in STEPPED:
        raise ValueError(f"history culling needs a strategy whose candidates go through device.step, not {expand}")
    body = _BODIES[expand]
    dedup = rules.WARP_CULL if warp_cull else rules.NO_DEDUP
    instrument, atomic_claim = bool(instrument), bool(atomic_claim)

    @cuda.jit(cache=True, **BLOCK_1024)
    def lb_level(graph: Graph, tree: Tree, stamps: Stamps, queues: Level, rows: Rows, prefix: Prefix, params: Params):
        offsets, indices = graph
        counters, row = rows
        p1, p2, hist_entries, clear = params
        out = queues.out
        if clear:
            clear_next_row(counters, row, NUM_COUNTERS)
        base = row * NUM_COUNTERS
        tid = cuda.threadIdx.x
        sh64 = cuda.shared.array(0, int64)
        sh32 = cuda.shared.array(0, int32)
        shv = cuda.shared.array(SHV_WORDS, int64)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        n64, off_cull, off_hist, off_g32, _ = _shared_layout(expand, cuda.blockDim.x, p1, p2, warp_cull,
                                                             hist_entries)
        acc = cuda.local.array(NUM_ACC, int64)
        start_block(cnt, sh32, off_cull, warp_cull, off_hist, hist_entries, acc)
        q = cuda.local.array((1, QLEN), int32)  # the vertices row only: no visit log here
        nxt = int32(queues.level + 1)
        ops = (nxt, tree, (atomic_claim, False, sh32, -1), (instrument, stamps.claimed, stamps.kept),
               (dedup, sh64, 0, tid, sh32, off_cull + (tid >> 5) * CULL_ENTRIES),
               (out, queues.capacity, counters, base + NEXT_SIZE, base + OVERFLOW, out, 0, 0, -1),
               no_cluster(offsets, cnt))
        hist = (sh32, off_hist if hist_entries > 0 else -1, hist_entries - 1)
        lv = (offsets, indices, queues.frontier, queues.size, prefix.prefix, prefix.parts)
        body(lv, ops, hist, q, acc, (sh64, sh32, shv, n64, off_g32), p1, p2)
        publish(acc, cnt, counters, base)

    return lb_level
