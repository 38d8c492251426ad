"""BFS-4K's memory layouts as plain constants: what the kernels and the host must agree on.

No Numba here: the host imports this module (`from kernels.bfs4k import layout`) before it
chooses a backend, and a constant added for BFS-4K changes no other technique's layout.
"""
from ..rules import CULL_ENTRIES, DEDUP_CODES, DEGREE_BINS, HASH64, NO_DEDUP, QLEN, WARP_CULL  # noqa: F401

# ------------------------------------------------------------------------------ per-level counters
# The small int64 array the host reads back after a multi-block level (the single block keeps
# the same slots in its shared counter rows). Kernels add to it with atomics.
NEXT_SIZE = 0  # entries written to the next frontier (after any duplicate filter)
EDGES = 1  # adjacency entries examined
DUP_GENERATED = 2  # entries that repeat a vertex, counted before the filter (ground truth)
DUP_DETECTED = 3  # duplicates removed by the filter
DUP_CONFLICTS = 4  # hash collisions of different vertices, kept conservatively
HEAVY = 5  # frontier vertices handled by the heavy-vertex path
DISCOVERED = 6  # successful claims (vertices reached; with claim="race" duplicates included)
UNDETECTED = 7  # duplicates still in the next frontier after the filter
EXT_ROUNDS = 8  # edge-discover rounds that needed no search (EXT)
COALESCED = 9  # warp flushes written with induced coalescence
OVERFLOW = 10  # > 0: a write past the next frontier's capacity was refused (the host raises)
HEAVY_CTR = 11  # heavy-vertex list: count << 40 | total degree
BLOCKS_DONE = 12  # blocks of the level kernel that have finished (its last one computes the statistics)
NUM_COUNTERS = 13
# A multi-block level's read-back buffer: the counters, then the next frontier's degree histogram
# (vertices per bin, then degree sums), then the single block's state. Two such buffers take
# turns; a level clears the other one's counters and histogram (LEVEL_CLEARED entries).
LEVEL_CLEARED = NUM_COUNTERS + 2 * DEGREE_BINS

# ------------------------------------------------------------------------------ single block
# Per-level log written by the single-block kernel (one row per level it runs).
L_FRONTIER, L_EDGES, L_FOUND, L_NEXT, L_GEN, L_DET, L_CONF, L_UNDET = 0, 1, 2, 3, 4, 5, 6, 7
L_WARP, L_ED, L_BINARY, L_COAL, L_EXT, L_OVERFLOW = 8, 9, 10, 11, 12, 13
L_CLOCK = 14  # the SM's cycle counter as the level ends: its share of the launch's time
LOG_FIELDS = 16
# state: levels run, final frontier size, 1 if the final frontier is in queue A; with the visit
# log: where the final frontier starts in it and how many entries it holds; the cycle counter at
# the kernel's start and at its end.
S_LEVELS, S_FSIZE, S_IN_A, S_LAST, S_LOGGED, S_CLOCK_START, S_CLOCK_END = 0, 1, 2, 3, 4, 5, 6
STATE_FIELDS = 8
# The single block's per-level counters: the counters layout, then the frontier's heavy vertices
# per degree bin. int32, because 64-bit shared atomics are compare-and-swap loops. Three rows in
# rotation: level i adds into row i % 3 and clears row (i + 1) % 3, which nobody reads any more,
# so a level needs no barrier for the clearing. The frontier's degree sum goes to per-warp slots
# (rotating the same way), summed after the barrier that follows _load_rows; its maximum to one
# slot a row, by atomic max.
R_HEAVY = NUM_COUNTERS
ROW = R_HEAVY + DEGREE_BINS
# The cluster form's counter rows add the largest degree among the entries the block claimed in
# the level.
R_TOP = ROW
ROW_CLUSTER = ROW + 1
ROWS_CLUSTER = 3 * ROW_CLUSTER


def register_cap(block_threads: int) -> int:
    """Registers a thread may use when `block_threads` threads share one SM's 65,536 (at most 255):
    the single block compiled for 512 threads gets 128 and stops spilling its level loop."""
    return min(255, 65536 // block_threads // 8 * 8)

# ------------------------------------------------------------------------------ provenance log
# The duplicate analysis' variant of the multi-block kernels (kernels.bfs4k.provenance) logs each
# claim of a sampled vertex as a row of PROV_FIELDS int32: the level expanded, the vertex and the
# frontier vertex it came from, the claiming thread (block, warp in the block, lane), the verdict
# of each duplicate filter on it (0 keep, 1 duplicate, 2 conflict; both filters see every claim,
# only the knob's drops anything), whether the copy went into the next frontier, and the kernel
# (P_MULTI or P_HEAVY, the child grid).
P_LEVEL, P_VERTEX, P_PARENT, P_BLOCK, P_WARP, P_LANE, P_HASH, P_CULL, P_KEPT, P_KERNEL = range(10)
PROV_FIELDS = 10
P_MULTI, P_HEAVY = 0, 1


def prov_sampled(v, mask):
    """Whether vertex v is in the log's sample: its multiplicative hash's bits under `mask`
    (2^k - 1: one vertex in 2^k, every copy of it) are zero. Host and device share it."""
    return ((((int(v) * 2654435761) & 0xFFFFFFFF) >> 16) & mask) == 0
