"""bitmap-direction's kernels: the whole search in one cooperative launch, and its set-up.

`search_kernel(instrument)` returns `bitmap_search(g, s, p, log)` (the groups of
kernels/bitmap_direction/layout.py). Its blocks are all co-resident; it runs level after level
from the state saved in s.ctr until the frontier is empty (or its log is full: the host launches
it again, and it goes on from the saved state). A level is, by the state every block holds:

* narrow (top-down, m_f <= narrow_edges): block 0 runs it alone with block barriers, and the
  levels after it while they stay narrow; the other blocks wait at the next grid barrier. The
  bitmaps are left alone; the grid's first level after them clears what it needs.
* top-down in the grid: edge-discover warps over the frontier queue, heavy vertices' edges as one
  flat range over the grid after a barrier; claims by an atomic OR on the visited bitmap, which
  also set the next frontier's bit. A queue-less frontier (after a bottom-up level) is first
  converted from its bitmap.
* bottom-up in the grid: a warp per visited word; each unvisited vertex ANDs its bit-packed
  in-adjacency with the frontier bitmap.

Frontier bitmaps rotate over three rows: level L reads row L % 3, writes row (L + 1) % 3 (clear
when L starts) and clears row (L + 2) % 3, which L - 1 read; the counts rotate over three slots
of ctr the same way (block 0's thread 0 clears slot (L + 1) % 3 as L starts). No barrier is spent
on clearing. After each level every block's thread 0 applies the rule (layout.decide) to the
level's counts; block 0's thread 0 also writes the level's row of the log, which the host reads
while the kernel runs (mapped memory on a GPU).
"""
import functools

from numba import cuda, int32, int64, uint32

from .. import cudasim as _sim
from ..primitives import clock64
from . import device as D
from . import layout as L

# A cooperative grid fills the GPU with blocks of up to 1024 threads: at most 64 registers a thread.
_OPTIONS = {} if _sim.simulator_enabled() else {"max_registers": 64}
# Array sizes in kernels must be global names (compile-time constants), not module attributes.
NUM_T, SLOT, NUM_ACC, MAX_BLOCK = L.NUM_T, L.SLOT, L.NUM_ACC, L.MAX_BLOCK


@functools.cache
def search_kernel(instrument: bool):
    """bitmap_search with or without the bottom-up counts (fixed at compile time: the code of the
    other case is dropped). Compiled on first use, cached on disk."""

    @cuda.jit(cache=True, **_OPTIONS)
    def bitmap_search(g, s, p, log):
        grid = cuda.cg.this_grid()
        st = cuda.shared.array(NUM_T, int64)
        red = cuda.shared.array(SLOT, int64)
        # The narrow levels' entries (a shared array a line: the simulator tells them apart by line).
        sh_u = cuda.shared.array(MAX_BLOCK, int32)
        sh_beg = cuda.shared.array(MAX_BLOCK, int64)
        sh_excl = cuda.shared.array(MAX_BLOCK, int64)
        scratch = cuda.shared.array(32, int64)
        sh = (sh_u, sh_beg, sh_excl, scratch)
        tid = cuda.threadIdx.x
        block0 = cuda.blockIdx.x == 0
        leader = block0 and tid == 0
        words = (p.n + 31) // 32
        acc = cuda.local.array(NUM_ACC, int64)
        for f in range(L.NUM_ACC):
            acc[f] = 0
        if tid < L.SLOT:
            red[tid] = 0
        if tid == 0:
            D.load_state(st, s.ctr, L.STATE)
            st[L.T_NLEV] = 0
            st[L.T_PUB] = 0
            st[L.T_STOP] = L.STOP_NO
        if leader:
            log[L.H_GT0] = D.globaltimer()
            log[L.H_CLK0] = clock64()
        cuda.syncthreads()
        while True:
            if st[L.T_NARROW] != 0:
                if block0:
                    _narrow_levels(g, s, p, st, red, sh, acc, log, leader, instrument)
                    if tid == 0:
                        D.save_state(st, s.ctr, L.HANDOFF)
                grid.sync()
                if tid == 0:
                    D.load_state(st, s.ctr, L.HANDOFF)  # block 0's: its levels, rows logged and decisions
                cuda.syncthreads()
                if st[L.T_STOP] != L.STOP_NO:
                    break
            lv = st[L.T_LEVEL]
            cur = (lv % 3) * words
            nb = ((lv + 1) % 3) * words
            slot = (lv % 3) * L.SLOT
            if st[L.T_BITS] == 0:  # after narrow levels: clear what this level writes (and reads)
                if leader:
                    for f in range(3 * L.SLOT):
                        s.ctr[f] = 0
                D.clear_row(s.fronts, nb, words)
                if st[L.T_BU] != 0:
                    D.clear_row(s.fronts, cur, words)
                grid.sync()
                if st[L.T_BU] != 0:
                    D.queue_to_bits(s.queues[st[L.T_QCUR]], st[L.T_SIZE], s.fronts, cur)
                    grid.sync()
                    if tid == 0:
                        st[L.T_CONV] = 1
            elif leader:
                for f in range(L.SLOT):
                    s.ctr[((lv + 1) % 3) * L.SLOT + f] = 0
            D.clear_row(s.fronts, ((lv + 2) % 3) * words, words)
            if st[L.T_BU] != 0:
                D.bottom_up(g, s, p, cur, nb, int32(lv + 1), acc, instrument)
                D.flush(acc, red, s.ctr, slot, instrument)
                grid.sync()
            else:
                qcur = st[L.T_QCUR]
                if st[L.T_QUEUE] == 0:  # after a bottom-up level: the frontier into a queue first
                    D.bits_to_queue(s.fronts, cur, words, s.queues[qcur], s.ctr, slot + L.C_QUEUED)
                    grid.sync()
                    if tid == 0:
                        st[L.T_CONV] = 1
                D.top_down(g, s, p, s.queues[qcur], st[L.T_SIZE], s.queues[1 - qcur], nb, int32(lv + 1), slot,
                           acc)
                D.flush(acc, red, s.ctr, slot, instrument)
                grid.sync()
                packed = s.ctr[slot + L.C_HEAVY]
                if packed != 0:  # the same value in every thread: all take this barrier or none
                    D.heavy(g, s, packed, s.queues[1 - qcur], nb, int32(lv + 1), slot, acc)
                    D.flush(acc, red, s.ctr, slot, instrument)
                    grid.sync()
            if tid == 0:
                D.next_level(st, s.ctr[slot:slot + L.SLOT], p, log, leader, False)
            cuda.syncthreads()
            if st[L.T_STOP] != L.STOP_NO:
                break
        if leader:  # every block has read the start state: it passed a grid barrier since
            D.save_state(st, s.ctr, L.STATE)
            log[L.H_STOP] = st[L.T_STOP]
            cuda.threadfence_system()
            log[L.H_DONE] = 1

    return bitmap_search


@cuda.jit(device=True)
def _narrow_levels(g, s, p, st, red, sh, acc, log, leader, instrument):
    """Block 0 alone: top-down levels while the rule keeps them narrow (block barriers only)."""
    tid = cuda.threadIdx.x
    while True:
        lv = st[L.T_LEVEL]
        qcur = st[L.T_QCUR]
        D.narrow_top_down(g, s, s.queues[qcur], st[L.T_SIZE], s.queues[1 - qcur], int32(lv + 1), red, sh, acc)
        D.block_reduce(acc, red, False)  # top-down counts only; red[C_NEXT], the queue tail, is complete too
        if tid == 0:
            D.next_level(st, red, p, log, leader, True)
            for f in range(L.SLOT):
                red[f] = 0
        cuda.syncthreads()
        if st[L.T_STOP] != L.STOP_NO or st[L.T_NARROW] == 0:
            return


@cuda.jit(cache=True)
def clear_search(s):
    """Set-up (untimed), before set_source: visited, the frontier bitmaps and the count slots cleared
    (dist and parent are filled with -1 by kernels.common.fill_int32)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    j = i
    while j < s.visited.shape[0]:
        s.visited[j] = 0
        j += stride
    j = i
    while j < s.fronts.shape[0]:
        s.fronts[j] = 0
        j += stride
    j = i
    while j < L.STATE:
        s.ctr[j] = 0
        j += stride


@cuda.jit(cache=True)
def set_source(s, source, state):
    """Set-up (untimed), one thread: the source at level 0 in queue 0, the visited bitmap and bitmap
    row 0, and `state` (int64[NUM_T], T_* order) saved for the first launch."""
    if cuda.grid(1) == 0:
        for f in range(L.NUM_T):
            s.ctr[L.STATE + f] = state[f]
        s.dist[source] = 0
        s.parent[source] = source
        s.queues[0, 0] = source
        bit = uint32(1) << uint32(source & 31)
        s.visited[source >> 5] = bit
        s.fronts[source >> 5] = bit
