"""bitmap-direction's argument groups, counter slots, block state and level log, and the rule that
chooses each level's direction: plain Python, shared by the host (set-up, record decoding) and the
device (kernels.bitmap_direction.device compiles `decide` as a device function).
"""
from typing import NamedTuple

from numba.core import types

from ..args import I64, M32, U32, V32, V64

U64 = types.uint64[::1]


class GraphArrays(NamedTuple):
    """The prepared graph (explorer.graphs.prepare), renumbered: the out-adjacency (top-down steps),
    each vertex's first in-adjacency pair (0: none) and the bit-packed in-adjacency, v's pairs
    pairs[pair_offsets[v]:pair_offsets[v + 1]], each word << 32 | mask."""

    offsets: V64
    indices: V32
    head: U64
    pair_offsets: V64
    pairs: U64


class SearchArrays(NamedTuple):
    """The search's state on the device: the answer in the prepared numbering (int32[n]); a bit a
    vertex reached (visited, uint32[words]); three frontier bitmaps in rotation (fronts, uint32[3 *
    words], see kernels/bitmap_direction); the current and next frontier queues (int32[2, max(n,
    1)]); a top-down level's heavy vertices and their first flat edge; ctr (int64[CTR_SIZE]): the
    three rotating slots of a level's counts, then the saved states; rows (int64[log_rows *
    LOG_FIELDS]): the level log in device memory (block 0 copies it out in bulk)."""

    dist: V32
    parent: V32
    visited: U32
    fronts: U32
    queues: M32
    heavy_v: V32
    heavy_start: V64
    ctr: V64
    rows: V64


class Params(NamedTuple):
    """Scalars: vertices, the pull range, Beamer's alpha and beta, the narrow levels' edge bound, the
    heavy vertices' degree, the graph's largest out-degree, the pairs a lane tests alone, the log's
    rows, whether the whole search runs in one block (a graph small enough that one block pulls too:
    the block kernel), and the block levels' shared memory (`block_words`): the visited words kept
    there (0: visited stays in global memory) and the entries of each frontier queue copied there."""

    n: I64
    n_pull: I64
    alpha: I64
    beta: I64
    narrow_edges: I64
    heavy_degree: I64
    max_degree: I64
    solo: I64
    log_rows: I64
    small: I64
    shared_words: I64
    qcap: I64


# ---- a level's counts: per-thread accumulators (A_*), summed a warp, each warp's sum stored in
# shared memory (ws: no atomics: 64-bit atomics on shared memory are compare-and-swap loops, which
# 32 warps on one address turn into thousands of cycles a level), summed again by whoever reads them
A_EXAMINED = 0  # top-down: the frontier's out-degree sum (every edge is read)
A_MF = 1  # top-down: the next frontier's out-degree sum, the next level's m_f
A_FOUND = 2  # bottom-up: vertices that found a parent
A_TESTS = 3  # bottom-up: adjacency words ANDed << 32 | frontier in-neighbours they showed (instrument)
A_EDGES = 4  # bottom-up: in-edges those words cover (instrument)
A_CHECKED = 5  # bottom-up: unvisited vertices that looked for a parent (instrument)
NUM_ACC = 6
FIRST_INSTRUMENTED = A_TESTS
TESTS_SHIFT = 32
MAX_WARPS = 32
WS = 2 * NUM_ACC * MAX_WARPS  # ws: two sets (a level's, by its parity) of a sum a field and warp
# ... then, in a grid level's slot of ctr (int64, global memory), what its blocks add with atomics:
C_NEXT = 6  # top-down: entries appended to the next queue
C_HEAVY = 7  # top-down: heavy vertices set aside, count << 40 | their degree sum
C_QUEUED = 8  # entries a bitmap -> queue conversion wrote
SLOT = 9
HEAVY_SHIFT = 40
HEAVY_EDGES = (1 << HEAVY_SHIFT) - 1
# Queue entries staged in shared memory (a grid block's stage before it appends them to the queue
# with one atomic, or the block levels' shared copy of the queue), counted by 32-bit shared atomics:
# entries taken, and the first a warp could not stage (entries below it are in shared memory; the
# others went to global memory at the queue's tail). A grid block's: stc[S_STAGED], stc[S_VALID].
S_STAGED = 0
S_VALID = 1
S_BASE = 2  # the block's place in the queue
STC = 3
STAGE = 2048
# The block levels' counts, a slot a level in rotation (int32, shared): the next queue's entries in
# global memory, then S_STAGED, S_VALID as above (at Q_STAGED), the conversion's entries; and
# their heavy vertices (int64, C_HEAVY's form) in hv[slot].
Q_NEXT = 0
Q_STAGED = 1
Q_QUEUED = 3
QSLOT = 4
#: The block levels copy their log rows to the host every PUBLISH_LEVELS levels (the whole block,
#: when every thread knows it is time: no barrier hands the decision out); the grid's block 0 at
#: most every PUBLISH_NS; rows a launch logs after its last copy are read by the host once it ends.
PUBLISH_LEVELS = 64

# ---- the search's state: in each block's shared memory while it runs (kept by the block's thread
# 0; every block takes the same decisions from the same counts), saved into ctr between launches
# and when the narrow levels hand the search back to the grid.
T_LEVEL = 0  # the level about to run
T_SIZE = 1  # its frontier's size
T_PREV = 2  # the previous frontier's size
T_BU = 3  # 1: it runs bottom-up
T_NARROW = 4  # 1: it runs top-down in block 0 alone
T_MF = 5  # Beamer's m_f and m_u as the rule compared them for it
T_MU = 6
T_MU_LEFT = 7  # m_u for the next decisions (GAP: less the frontiers run top-down)
T_QCUR = 8  # which queue row holds the frontier
T_QUEUE = 9  # 1: the frontier is in that queue
T_BITS = 10  # 1: the frontier is in bitmap row level % 3, and row (level + 1) % 3 is clear
T_STOP = 11  # STOP_*
T_NLEV = 12  # levels logged by this launch (block 0's copy is the truth)
T_CONV = 13  # 1: this level converted its frontier first
T_PUB = 14  # when the log was last published (the device's nanosecond clock)
T_PUBLISHED = 15  # rows published so far by this launch
T_PUBLISH = 16  # 1: block 0 publishes the rows logged since after this level
T_PULLED = 17  # 1: a bottom-up level has run (the grid's top-down claims read the visited word first)
NUM_T = 20
STOP_NO, STOP_DONE, STOP_FULL = 0, 1, 2

#: The block levels' shared memory (dynamic, 32-bit words): the visited bitmap's first shared_words
#: words, then on a small graph its three frontier bitmaps, then two frontier queues of qcap entries.
def block_words(n: int, small: bool, shared_words: int, qcap: int) -> int:
    words = (n + 31) // 32
    return shared_words + (3 * words if small else 0) + 2 * qcap


#: ctr: three slots of SLOT counts, the state a launch starts from (T_* order; saved as it ends),
#: the state block 0 hands the grid after narrow levels (a block may read the first as late as
#: its first grid barrier, so block 0 never writes it before then), and where those levels ended.
STATE = 3 * SLOT
HANDOFF = STATE + NUM_T
NARROW_DONE = HANDOFF + NUM_T  # the level after block 0's last narrow stretch: the others sleep until then
CTR_SIZE = NARROW_DONE + 1

# ---- the level log (int64; mapped host memory on a GPU: the host reads it while the kernel runs)
H_PUBLISHED = 0  # rows the host may read (written after a system-wide fence)
H_GT0 = 1  # the device's nanosecond clock (%globaltimer) and block 0's SM cycle counter at start
H_CLK0 = 2
H_SIZE = 4
R_LEVEL = 0
R_FRONTIER = 1  # n_f
R_BU = 2  # 1: bottom-up
R_NARROW = 3  # 1: run by block 0 alone
R_CONVERTED = 4  # 1: the level converted its frontier first
R_EXAMINED = 5  # top-down: the frontier's out-degree sum; bottom-up: in-edges covered by the ANDs
R_WORDS = 6
R_CANDS = 7
R_CHECKED = 8
R_NEXT = 9  # vertices found
R_MF = 10
R_MU = 11
R_HEAVY = 12  # heavy vertices whose edges the whole grid walked
R_CLOCK = 13  # block 0's SM cycle counter at the level's end
R_GT = 14  # the device's nanosecond clock at the level's end
R_PHASE = 16  # with phase clocks (a timing build, search_kernel(phases=True)): block 0's cycles from the
PHASES = 8  # level's start to each phase mark (kernel.PHASE_MARKS), 0 otherwise
LOG_FIELDS = R_PHASE + PHASES

#: The grid publishes the log at most this often (ns of the device clock): block 0 copies the rows
#: into host memory and fences, a few microseconds on its critical path.
PUBLISH_NS = 100_000
#: The largest block (the narrow levels' shared arrays are this long).
MAX_BLOCK = 1024


def log_size(rows: int) -> int:
    return H_SIZE + rows * LOG_FIELDS


def decide(last_bu, m_f, m_u, n_f, prev_n_f, n, alpha, beta, narrow_edges, small):
    """The next level's (bottom_up, narrow, m_u left): Beamer's rule as GAP writes it, and where it
    runs. After a top-down level: bottom-up when m_f * alpha > m_u (m_f: the new frontier's
    out-edges; m_u: the edges left, less every frontier run top-down), except that a frontier of at
    most narrow_edges edges runs top-down in one block (`narrow`), cheaper than any level of the
    grid; after a bottom-up level, bottom-up again while the frontier grows or holds more than
    n / beta vertices, then top-down in the grid (m_f is not known there). `small` (a graph that one
    block pulls): every level in one block. Plain arithmetic: the host (level 0) and the device
    (every later level) run this function."""
    if n_f == 0:
        return False, False, m_u
    if last_bu:
        if n_f >= prev_n_f or n_f * beta > n:
            return True, small, m_u
        return False, small, m_u - m_f
    if m_f <= narrow_edges:
        return False, True, m_u - m_f
    if m_f * alpha > m_u:
        return True, small, m_u
    return False, small, m_u - m_f
