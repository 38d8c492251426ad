"""The load-balancing kernels' memory layouts and codes as plain Python: what the host and the
kernels agree on (no Numba here, so the host imports it before it picks a backend).

`shared_layout` is written once and used twice: by the host to size a launch's dynamic shared
memory and refuse what the device cannot hold, and (as a device function, kernels.load_balance
.build) by the kernels to find their regions in it. Like kernels.rules it is self-contained.
"""
from ..rules import CULL_ENTRIES, QLEN  # noqa: F401  (a warp's culling table; the local queue)


# ------------------------------------------------------------------------------ expand strategies
# The chapter's §5 catalogue, in its order (the host's names are in EXPAND_NAMES).
WORK_ITEMS = 0  # §5.1.1 a thread per frontier entry
VIRTUAL_WARPS = 1  # §5.1.2 static virtual warps of W lanes (kernels.expand.expand_virtual_warp, W fixed)
DYNAMIC_VIRTUAL_WARPS = 2  # §5.2.1 BFS-4K's multi-block level (the host runs its loop)
CTA_WARP_SCAN = 3  # §5.2.2 Merrill et al.'s strip-mined gathering, Algorithm 9
DIRECT_SEARCH = 4  # §5.3.1 a thread per work-unit, binary search in the global prefix sum
LOCAL_WARP_SEARCH = 5  # §5.3.2 a warp per 32 entries, shuffle search (BFS-4K's edge-discover)
BLOCK_SEARCH = 6  # §5.3.3 a block per maxi chunk of entries, one search per thread
TWO_PHASE = 7  # §5.3.4 balanced chunks of units: partition, then expansion
MULTI_PHASE = 8  # §5.4-5.6 two-phase + coalesced expansion + iterated searches

EXPAND_NAMES = ("work-items", "virtual-warps", "dynamic-virtual-warps", "cta-warp-scan", "direct-search",
                "local-warp-search", "block-search", "two-phase", "multi-phase")
#: Strategies that need the frontier's global exclusive prefix sum of degrees before the level.
NEEDS_PREFIX = (DIRECT_SEARCH, BLOCK_SEARCH, TWO_PHASE, MULTI_PHASE)
#: ... and a partition of it into balanced chunks of work-units.
NEEDS_PARTITION = (TWO_PHASE, MULTI_PHASE)

# ------------------------------------------------------------------------------ culling (Merrill et al.)
CULL_NONE, CULL_WARP, CULL_HISTORY = 0, 1, 2  # bits: warp culling, history culling
CULLING_NAMES = {"none": CULL_NONE, "warp": CULL_WARP, "history": CULL_HISTORY,
                 "warp+history": CULL_WARP | CULL_HISTORY}

# ------------------------------------------------------------------------------ per-level counters
# Two rows of NUM_COUNTERS int64 (level L uses row L % 2); the level's first kernel clears the
# other row for the next level (kernels.common.clear_next_row), so no memset is launched.
NEXT_SIZE = 0  # entries written to the next frontier (after the culls)
EDGES = 1  # adjacency entries inspected, counted by the lanes that inspect them (instrument)
DUP_GENERATED = 2  # claims of a vertex already claimed in this level (instrument: ground truth)
WARP_CULLED = 3  # copies dropped by warp culling
HISTORY_CULLED = 4  # copies dropped by history culling
CULL_CONFLICTS = 5  # warp culling: the slot held another vertex, the candidate was kept
UNDETECTED = 6  # copies that passed the culls (instrument)
CTA_GATHERED = 7  # frontier vertices whose lists the CTA phase gathered (Algorithm 9 with CTA_TH)
WARP_GATHERED = 8  # ... the warp phase (WARP_TH)
SEARCHES = 9  # binary searches run to map work-units to threads (instrument)
TOTAL = 10  # the frontier's degree sum, from the prefix-sum pass
OVERFLOW = 11  # > 0: a write past the next frontier's capacity was refused (the host raises)
NUM_COUNTERS = 12

# ------------------------------------------------------------------------------ static sizes
SCAN_STRIP = 4  # CTA+warp+scan: gather entries per thread in one strip of the scan phase
PREFIX_TILE_MIN = 32  # the prefix-sum pass uses tiles of the block size (at least a warp)


def shared_layout(expand, block, k, iters, warp_cull, history):
    """Dynamic shared memory of one block of the level kernel, in 32-bit words:
    (int64 words first, then offsets of the int32 regions: the warps' culling tables, the history
    table, the gather strip's parents; total 32-bit words). `history` is the table's entries (0:
    none). int64 regions: CTA+warp+scan's gather strip (edge indices), the block-search /
    two-phase / multi-phase slice of the prefix sum, multi-phase's reordered edge indices."""
    n64 = 0
    g32 = 0
    if expand == 3:  # CTA_WARP_SCAN
        n64 = 4 * block  # SCAN_STRIP x block
        g32 = 4 * block
    elif expand == 6 or expand == 7:  # BLOCK_SEARCH (a maxi chunk of entries), TWO_PHASE (a chunk of units)
        n64 = block * k + 1
    elif expand == 8:  # MULTI_PHASE: the slice of B*K*IS units, then B*K reordered units
        n64 = block * k * iters + 1 + block * k
        g32 = block * k
    off = 2 * n64
    off_cull = off
    if warp_cull:
        off += (block // 32) * 128  # CULL_ENTRIES per warp
    off_hist = off
    off += history
    off_g32 = off
    off += g32
    return n64, off_cull, off_hist, off_g32, off


def shared_bytes(expand, block, k, iters, warp_cull, history):
    """Bytes of dynamic shared memory the level kernel needs (a multiple of 8)."""
    words = shared_layout(expand, block, k, iters, warp_cull, history)[4]
    return 4 * (words + (words & 1))


def chunk_units(expand, block, k, iters):
    """Work-units per balanced chunk of the partition (two-phase: B x K; multi-phase: B x K x IS)."""
    return block * k * (iters if expand == MULTI_PHASE else 1)
