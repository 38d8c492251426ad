"""bitmap-direction's kernels: the whole search in one launch, and its set-up.

`search_kernel(instrument, registers)` returns `bitmap_search(g, s, p, log)` (the groups of
kernels/bitmap_direction/layout.py), a cooperative launch: its blocks are all co-resident; it runs
level after level from the state saved in s.ctr until the frontier is empty (or its log is full:
the host launches it again, and it goes on from the saved state). A level is, by the state every
block holds:

* narrow (layout.decide): block 0 runs it alone with block barriers (kernels/bitmap_direction/
  block.py), and the levels after it while they stay narrow; the other blocks sleep, then meet it
  at a grid barrier. Narrow levels of such a graph are top-down only and leave the frontier
  bitmaps alone (the grid's first level after them clears what it needs).
* top-down in the grid: edge-discover warps over the frontier queue, heavy vertices' edges as one
  flat range over the grid after a barrier; claims by an atomic OR on the visited bitmap (after a
  read of the word once a level has pulled, when most edges meet visited vertices), which also set
  the next frontier's bit; each block stages its new queue entries and appends them with
  one atomic. A queue-less frontier (after a bottom-up level) is first converted from its bitmap.
* bottom-up in the grid: the visited bitmap's words dealt round the warps; each unvisited vertex
  ANDs its bit-packed in-adjacency with the frontier bitmap.

`search_kernel(instrument, registers, cluster=True)` is the same search launched as one
thread-block cluster (a graph of at most cluster_arcs arcs): every grid barrier is the cluster's
hardware barrier, and the blocks wait for block 0's narrow levels in it instead of polling. Its
levels count into block 0's shared memory instead of s.ctr (kernels.cluster.counter_add), so the
flush's atomic and the next level's reads of the counts go to another SM, not to global memory.

`block_kernel(instrument, registers)` returns `bitmap_block(g, s, p, log)`: a small graph's whole
search (Params.small) in one block, every level a block level, bottom-up ones too; an ordinary
launch of one block (no grid barrier in its code).

Frontier bitmaps rotate over three rows: level L reads row L % 3, writes row (L + 1) % 3 (clear
when L starts) and clears row (L + 2) % 3, which L - 1 read; the counts rotate over three slots
of ctr the same way (block 0's thread 0 clears slot (L + 1) % 3 as L starts). No barrier is spent
on clearing. After each level every block's thread 0 applies the rule (layout.decide) to the
level's counts; block 0's thread 0 also writes the level's row of the log in device memory, and
block 0 copies the new rows into host memory (mapped on a GPU), where the host reads them while the
kernel runs: at most every PUBLISH_NS after grid levels, every PUBLISH_LEVELS block levels. The
rows logged after the last copy stay in device memory; the host reads them once the launch ends.

Both kernels use dynamic shared memory for the block levels (layout.block_words 32-bit words).
"""
import functools

from numba import cuda, int32, int64, uint32

from .. import cudasim as _sim
from ..args import I64, V64
from ..cluster import cluster_map, cluster_sync, counter_load, smem_addr
from ..primitives import clock64
from . import block as B
from . import device as D
from . import layout as L
from .layout import GraphArrays, Params, SearchArrays

# Array sizes in kernels must be global names (compile-time constants), not module attributes.
NUM_T, NUM_ACC, STAGE, STC, WS, QC = L.NUM_T, L.NUM_ACC, L.STAGE, L.STC, L.WS, 3 * L.QSLOT


def registers(threads: int) -> int:
    """Registers a thread may use: 64 for blocks of 1024 threads (a block then fills an SM's 65,536),
    128 for smaller ones (a block of 512 an SM; the kernel needs about 120 not to spill)."""
    return 64 if threads > 512 else 128


#: A timing build (benchmarks.bitmap_direction's phases section sets it before the first search):
#: block 0's thread 0 stamps each level's row with the cycles from the level's start to these marks.
PHASE_CLOCKS = False
PHASE_MARKS = {  # mark -> what had just ended (a grid level; a block level)
    0: ("clears, conversions", "clears"),
    1: ("thread 0's own share of the level", "thread 0's own share of the level"),
    2: ("the block's counts and queue flush", "the barrier after the expansion"),
    3: ("the grid barrier", "the next frontier's rows and counts (thread 0's)"),
    4: ("the heavy vertices' walk", "the barrier after them"),
    5: ("next_level (the rule, the log row)", "the rule (the log row is the keeper's, the last warp's)"),
    6: ("the block barrier after it", "publishing (every PUBLISH_LEVELS levels)"),
    7: ("publishing", "a conversion (a top-down level after a bottom-up one)"),
}


def _options(registers: int) -> dict:
    return {} if _sim.simulator_enabled() else {"max_registers": registers}


def search_kernel(instrument: bool, registers: int = 64, cluster: bool = False):
    """bitmap_search with or without the bottom-up counts (fixed at compile time: the code of the
    other case is dropped), with at most `registers` a thread (registers()). With `cluster`, the
    build launched as one thread-block cluster: its barriers are the cluster's (hardware, a fraction
    of a grid barrier's cost) and the blocks never wait for block 0's narrow levels by polling.
    Compiled on first use, cached on disk."""
    return _search_kernel(instrument, registers, PHASE_CLOCKS, cluster)


def block_kernel(instrument: bool, registers: int = 64):
    """bitmap_block, compiled as search_kernel is."""
    return _block_kernel(instrument, registers, PHASE_CLOCKS)


@cuda.jit(device=True)
def barrier(grid, cluster):
    """Every thread of the launch: the cluster's barrier when the launch is one cluster, else the grid's."""
    if cluster:
        cluster_sync()
    else:
        grid.sync()


@cuda.jit(device=True)
def _global_counts(ctr, cs):
    return ctr


@cuda.jit(device=True)
def _cluster_counts(ctr, cs):
    return cluster_map(smem_addr(cs, 0), 0)  # block 0's


@cuda.jit(device=True)
def _global_level_counts(ctr, cnt, slot, bu):
    return D.level_counts(ctr[slot:slot + L.SLOT], bu)


@cuda.jit(device=True)
def _cluster_level_counts(ctr, cnt, slot, bu):
    return D.level_counts(cnt + uint32(8 * slot), bu)


@functools.cache
def _search_kernel(instrument: bool, registers: int, phases: bool, cluster: bool):
    # A cluster counts its levels in block 0's shared memory, the grid in s.ctr; each build compiles
    # only its own helpers, so the grid's code is what it would be without clusters.
    counts_of = _cluster_counts if cluster else _global_counts
    level_counts = _cluster_level_counts if cluster else _global_level_counts
    cs_size = 3 * L.SLOT + 1 if cluster else 1  # the count slots, then the level's heavy count as read

    def bitmap_search(g: GraphArrays, s: SearchArrays, p: Params, log: V64):
        # `registers`, `phases` and `cluster` are read here so that they are cells of this closure:
        # the disk cache keys on those (not on max_registers), and a 128-register build must not load
        # for 1024 threads.
        if registers == 0 or phases is None or cluster is None:
            return
        grid = cuda.cg.this_grid()
        st = cuda.shared.array(NUM_T, int64)
        ws = cuda.shared.array(WS, int64)
        stc = cuda.shared.array(STC, int32)
        stage = cuda.shared.array(STAGE, int32)
        qc = cuda.shared.array(QC, int32)
        hv = cuda.shared.array(3, int64)
        cs = cuda.shared.array(cs_size, int64)  # a cluster's count slots (block 0's)
        tid = cuda.threadIdx.x
        block0 = cuda.blockIdx.x == 0
        leader = block0 and tid == 0
        words = (p.n + 31) // 32
        cnt = counts_of(s.ctr, cs)
        acc = cuda.local.array(NUM_ACC, int64)
        for f in range(NUM_ACC):
            acc[f] = 0
        zero = int64(0)
        if tid < STC:
            stc[tid] = L.STAGE if tid == L.S_VALID else 0
        if cluster and tid < 3 * L.SLOT:
            cs[tid] = 0
        if tid == 0:
            D.load_state(st, s.ctr, L.STATE)
            for f in (L.T_NLEV, L.T_PUB, L.T_PUBLISHED, L.T_PUBLISH, L.T_STOP):
                st[f] = 0
        t0 = cuda.local.array(1, int64)
        if leader:
            log[L.H_GT0] = D.globaltimer()
            log[L.H_CLK0] = clock64()
            t0[0] = clock64()
        cuda.syncthreads()
        if cluster:  # block 0's counts are clear before any block adds to them
            cluster_sync()
        while True:
            if st[L.T_NARROW] != 0:
                if block0:
                    B.block_levels(g, s, p, st, (qc, hv, ws), log, (phases, t0), instrument)
                    if tid == 0:
                        D.save_state(st, s.ctr, L.HANDOFF)
                        cuda.threadfence()
                        cuda.atomic.max(s.ctr, L.NARROW_DONE, st[L.T_LEVEL])
                elif not cluster:  # a cluster's blocks wait in its hardware barrier instead
                    D.sleep_until_narrow_done(s.ctr, st[L.T_LEVEL])
                barrier(grid, cluster)
                if tid == 0:
                    D.load_state(st, s.ctr, L.HANDOFF)  # block 0's: its levels, rows logged and decisions
                cuda.syncthreads()
                if st[L.T_STOP] != L.STOP_NO:
                    break
            lv = st[L.T_LEVEL]
            bu = st[L.T_BU] != 0
            cur = (lv % 3) * words
            nb = ((lv + 1) % 3) * words
            slot = (lv % 3) * L.SLOT
            me = cuda.grid(1)
            team = cuda.gridsize(1)
            qcur = st[L.T_QCUR]
            src = (s.queues[qcur], 0, s.queues[qcur])  # every entry in global memory
            if st[L.T_BITS] == 0:  # after narrow levels: clear what this level writes (and reads)
                if leader:
                    for f in range(3 * L.SLOT):
                        s.ctr[f] = 0
                        if cluster:
                            cs[f] = 0
                D.clear_row(s.fronts, nb, words, me, team)
                if bu:
                    D.clear_row(s.fronts, cur, words, me, team)
                barrier(grid, cluster)
                if bu:
                    D.queue_to_bits(s.queues[qcur], st[L.T_SIZE], s.fronts, cur, me, team)
                    barrier(grid, cluster)
                    if tid == 0:
                        st[L.T_CONV] = 1
            elif leader:
                for f in range(L.SLOT):
                    s.ctr[((lv + 1) % 3) * L.SLOT + f] = 0
                    if cluster:
                        cs[((lv + 1) % 3) * L.SLOT + f] = 0
            D.clear_row(s.fronts, ((lv + 2) % 3) * words, words, me, team)
            dst = s.queues[1 - qcur]
            counts = (zero, zero, zero, zero, zero, zero)  # the level's, loaded by thread 0 (level_counts)
            timed = phases and leader
            if timed:
                D.mark(s.rows, st[L.T_NLEV], 0, t0)
            if bu:
                D.bottom_up(g, s, p, (s.fronts, cur, nb, s.visited), int32(lv + 1), me, team, acc, instrument)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 1, t0)
                D.flush(acc, ws, stc, stage, dst, cnt, slot, instrument)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 2, t0)
                barrier(grid, cluster)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 3, t0)
                if tid == 0:
                    counts = level_counts(s.ctr, cnt, slot, bu)
            else:
                if st[L.T_QUEUE] == 0:  # after a bottom-up level: the frontier into a queue first
                    D.bits_to_queue(s.fronts, cur, words, src, s.ctr, slot + L.C_QUEUED, me, team)
                    barrier(grid, cluster)
                    if tid == 0:
                        st[L.T_CONV] = 1
                # Once a level has pulled, most vertices are visited and most edges meet visited ones:
                # reading the word first spares their atomics. Before, most meet unvisited vertices
                # (the search is growing, or a mesh's or road's frontier moves on) and the read would
                # be one more round trip on each claim's path.
                sink = (s.visited, st[L.T_PULLED] != 0, s.fronts, nb, True, dst, cnt, slot + L.C_NEXT, stage, STAGE,
                        stc, 0, True)
                D.top_down(g, s, p, src, st[L.T_SIZE], int32(lv + 1), (me, team, cnt, slot + L.C_HEAVY), sink, acc)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 1, t0)
                D.flush(acc, ws, stc, stage, dst, cnt, slot, instrument)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 2, t0)
                barrier(grid, cluster)
                if timed:
                    D.mark(s.rows, st[L.T_NLEV], 3, t0)
                if tid == 0:  # loaded beside `packed`: one round trip for both unless heavy vertices follow
                    counts = level_counts(s.ctr, cnt, slot, bu)
                    if cluster:
                        cs[3 * L.SLOT] = counter_load(cnt, slot + L.C_HEAVY)
                if cluster:  # the block reads the heavy count thread 0 loaded, not block 0's memory
                    cuda.syncthreads()
                    packed = cs[3 * L.SLOT]
                else:
                    packed = s.ctr[slot + L.C_HEAVY]
                if packed != 0:  # the same value in every thread: all take this barrier or none
                    D.heavy(g, s, packed, int32(lv + 1), (me, team), sink, acc)
                    D.flush(acc, ws, stc, stage, dst, cnt, slot, instrument)
                    barrier(grid, cluster)
                    if tid == 0:
                        counts = level_counts(s.ctr, cnt, slot, bu)
            if timed:
                D.mark(s.rows, st[L.T_NLEV], 4, t0)
            if tid == 0:
                D.next_level(st, counts, p, s.rows, leader, False)
            if timed:
                D.mark(s.rows, st[L.T_NLEV] - 1, 5, t0)
            cuda.syncthreads()
            if timed:
                D.mark(s.rows, st[L.T_NLEV] - 1, 6, t0)
            if block0:
                D.publish(st, s.rows, log, st[L.T_PUBLISH] != 0)
            if timed:
                D.mark(s.rows, st[L.T_NLEV] - 1, 7, t0)
                t0[0] = clock64()
            if st[L.T_STOP] != L.STOP_NO:
                break
        if leader:  # every block has read the start state: it passed a grid barrier since
            D.save_state(st, s.ctr, L.STATE)  # the host reads it, and the rows not published, after the launch

    if cluster:  # a name of its own: the warm-up finds each build by name
        bitmap_search.__name__ = bitmap_search.__qualname__ = "bitmap_cluster"
    return cuda.jit(cache=True, **_options(registers))(bitmap_search)


@functools.cache
def _block_kernel(instrument: bool, registers: int, phases: bool):
    @cuda.jit(cache=True, **_options(registers))
    def bitmap_block(g: GraphArrays, s: SearchArrays, p: Params, log: V64):
        if registers == 0 or phases is None:  # cells of the closure (see bitmap_search)
            return
        st = cuda.shared.array(NUM_T, int64)
        ws = cuda.shared.array(WS, int64)
        qc = cuda.shared.array(QC, int32)
        hv = cuda.shared.array(3, int64)
        tid = cuda.threadIdx.x
        t0 = cuda.local.array(1, int64)
        if tid == 0:
            D.load_state(st, s.ctr, L.STATE)
            for f in (L.T_NLEV, L.T_PUB, L.T_PUBLISHED, L.T_PUBLISH, L.T_STOP):
                st[f] = 0
            log[L.H_GT0] = D.globaltimer()
            log[L.H_CLK0] = clock64()
            t0[0] = clock64()
        cuda.syncthreads()
        B.block_levels(g, s, p, st, (qc, hv, ws), log, (phases, t0), instrument)
        if tid == 0:
            D.save_state(st, s.ctr, L.STATE)  # the host reads it, and the rows not published, after the launch

    return bitmap_block


@cuda.jit(cache=True)
def bitmap_clear(s: SearchArrays):
    """Set-up (untimed), before bitmap_start: visited, the frontier bitmaps and the count slots cleared
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
def bitmap_start(s: SearchArrays, source: I64, state: V64):
    """Set-up (untimed), one thread, after kernels.common.set_source has put the source at level 0
    in queue 0: its bit in the visited bitmap and bitmap row 0, and `state` (int64[NUM_T], T_*
    order) saved for the first launch."""
    if cuda.grid(1) == 0:
        for f in range(L.NUM_T):
            s.ctr[L.STATE + f] = state[f]
        s.ctr[L.NARROW_DONE] = -1
        bit = uint32(1) << uint32(source & 31)
        s.visited[source >> 5] = bit
        s.fronts[source >> 5] = bit
