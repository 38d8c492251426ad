"""Luo, Wong & Hwu's hierarchical BFS (UIUC-BFS, DAC 2010, §3): one thread per frontier vertex, a
hierarchical frontier queue and a hierarchical kernel arrangement.

Hierarchical queue (§3.2). A warp's claimed neighbours go to its *W-queue* in shared memory: each
lane's position is the number of lanes below it that claimed one (a ballot and a popc), so a warp
writes its W-queue without collisions and without atomics (the paper's W-Frontiers were the eight
lane groups of a GTX280 warp; a whole warp now runs at once, so the warp is the unit). At the end
of a level one warp computes every W-queue's offset in the block's *B-queue*, their union (the
paper: one thread over eight W-Frontiers), and one thread per block takes the B-queue's offset
in the grid's *G-queue* by a single atomic add; each warp then copies its W-queue there, lanes
writing consecutive entries (coalesced). A W-queue that fills up mid-level (a high-degree vertex)
is flushed the same way early, with an atomic of its own. The B-queue is written straight to its
final place (the G-queue, or in the single-block layer the block's next frontier in shared
memory), not staged in shared memory first.

Kernel arrangement (§3.3), one kernel per layer, all sharing the level code (`_expand`, `_gather`):

* `luo_block`: one block runs level after level with block barriers while the frontier has at
  most `threshold` vertices, the frontier in shared memory (no G-queue);
* `luo_grid`: a grid-synchronised kernel (``cuda.cg.this_grid().sync()``: a cooperative launch,
  the grid limited to co-resident blocks) runs the mid-size levels, one grid barrier a level,
  persistent threads striding over the frontier; the paper's GPU had no grid barrier and used
  Xiao and Feng's inter-block barrier with one block per SM;
* `luo_level`: one launch a level beyond that, a thread per frontier vertex.

Each layer stops when the frontier leaves its range and says where it stopped in `state`; the
host picks the next layer (`layer_for`, the same rule the kernels apply).

Claims are a compare-and-swap on the distance, so each vertex enters the next frontier once
(UIUC-BFS claims with an atomic too).

One grid barrier a level: the level's results (next frontier size, edges examined) gather in one
of three rotating slots of `state`: level L adds into slot (L+1) % 3 and clears slot (L+2) % 3,
which every thread last read before the barrier that ended level L-1; after level L's barrier
every thread reads slot (L+1) % 3. A kernel that stops leaves slot (L+1) % 3 clear for the next
level L, whichever layer runs it.
"""
from typing import NamedTuple

from numba import cuda, int32, int64

from .args import BOOL, I64, M64, V64, Graph, QueuePair, Tree
from .common import BLOCK_1024
from .primitives import FULL_MASK, WARP_SIZE, clock64, warp_inclusive_scan, warp_sum

# `state` (int64), read back after every launch.
SLOT_COUNT = 0  # entries of the next frontier (the G-queue's tail)
SLOT_EDGES = 1  # adjacency entries examined (instrumented runs)
SLOT_FIELDS = 2
NUM_SLOTS = 3  # slot of level L's results: (L + 1) % 3
SLOT_WORDS = NUM_SLOTS * SLOT_FIELDS
S_LEVELS = SLOT_WORDS  # levels the last block or grid launch ran
S_SIZE = S_LEVELS + 1  # size of the frontier it stopped at
S_CLOCK_START = S_LEVELS + 2  # cycle counter of block 0's SM as the launch started ...
S_CLOCK_END = S_LEVELS + 3  # ... and as it stopped
NUM_STATE = S_LEVELS + 4

# A row of `log` per level of a block or grid launch.
L_FRONTIER = 0  # frontier size
L_EDGES = 1  # adjacency entries examined (instrumented runs)
L_NEXT = 2  # next frontier size
L_CLOCK = 3  # cycle counter of block 0's SM as the level ended
LOG_FIELDS = 4

#: Entries (int32) of a warp's W-queue in shared memory: 8 entries a lane.
WQ_ENTRIES = 256
#: Neighbours a lane gathers before it claims them, so that their loads are in flight together.
GATHER = 8

# Blocks of up to 1024 threads (common.BLOCK_1024): the grid kernel would take 72 registers
# otherwise, and no 1024-thread block would fit.



class LuoOut(NamedTuple):
    """What a launch leaves for the host: `state` (slots and S_* fields above) and, for the block
    and grid kernels, a `log` row a level (L_* fields), at most max_log levels a launch."""

    state: V64
    log: M64
    max_log: I64


class LuoKnobs(NamedTuple):
    """§3.3's frontier sizes of the layers (the block's, the grid's) and whether to count edges."""

    block_threshold: I64
    grid_threshold: I64
    instrument: BOOL


# The layers of §3.3.
BLOCK, GRID, PER_LEVEL = 0, 1, 2
LAYER_NAMES = ("block", "grid", "per-level")


def layer_for(size, block_threshold, grid_threshold):
    """§3.3: the single block while |F| <= block_threshold, the grid-synchronised kernel while
    |F| <= grid_threshold, one launch a level beyond (the kernels stop by the same rule)."""
    if size <= block_threshold:
        return BLOCK
    if size <= grid_threshold:
        return GRID
    return PER_LEVEL


def shared_bytes(block_threads, frontier_entries=0):
    """Dynamic shared memory of a block: its warps' W-queues, then (the single block) its frontier
    and next frontier of `frontier_entries` entries each."""
    return 4 * ((block_threads // WARP_SIZE) * WQ_ENTRIES + 2 * frontier_entries)


_device = cuda.jit(device=True, inline="always")


# Groups of the level code (tuples):
#   src   (frontier, f_base, size, first, stride, level): the level's frontier items
#         frontier[f_base:f_base + size], the warp's first item and stride
#   wq    (wq, w_base): the warp's W-queue, wq[w_base:w_base + WQ_ENTRIES]
#   dst   (ctr, ci, sh, sh_base, sh_cap, gq): the next frontier's size counter ctr[ci] (its edges
#         counter ctr[ci + 1]); entries below sh_cap in sh[sh_base:] (the single block's shared
#         memory), the rest in the G-queue gq.

@_device
def _put(dst, p, v):
    """Entry p of the next frontier: in shared memory below sh_cap (the single block), else in gq."""
    _, _, sh, sh_base, sh_cap, gq = dst
    if p < sh_cap:
        sh[sh_base + p] = v
    else:
        gq[p] = v


@_device
def _flush(wqg, n, dst):
    """A full W-queue goes to the next frontier before the level ends: one atomic for the warp."""
    wq, w_base = wqg
    ctr, ci = dst[0], dst[1]
    cuda.syncwarp(FULL_MASK)  # every lane's entries are written
    base = int64(0)
    if cuda.laneid == 0:
        base = cuda.atomic.add(ctr, ci, n)
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    for k in range(cuda.laneid, n, WARP_SIZE):
        _put(dst, base + k, wq[w_base + k])
    cuda.syncwarp(FULL_MASK)  # and read, before the W-queue fills again


@_device
def _expand(graph, tree, src, wqg, dst):
    """The warp's share of a level: frontier items first + lane + j * stride below `size` (first
    and stride are the warp's, so every lane loops together), one thread per frontier vertex.
    Claimed neighbours go to the warp's W-queue. Returns (entries left in it, the lane's edges
    examined)."""
    offsets, indices = graph
    dist, parent = tree
    frontier, f_base, size, first, stride, level = src
    wq, w_base = wqg
    lane = cuda.laneid
    nxt = int32(level + 1)
    wtail = int64(0)
    edges = int64(0)
    vs = cuda.local.array(GATHER, int32)  # neighbours; -1: none, or not claimed by this lane
    ds = cuda.local.array(GATHER, int32)  # their distances, then what the claim found (-1: won)
    j = first
    while j < size:
        i = j + lane
        u = int32(-1)
        b = int64(0)
        end = int64(0)
        if i < size:
            u = frontier[f_base + i]
            b = offsets[u]
            end = offsets[u + 1]
            edges += end - b
        while cuda.any_sync(FULL_MASK, b < end):
            # Up to GATHER neighbours at a time, in phases whose results are used only by the next
            # phase: their ids, their distances, the claims (compare-and-swap) of the unvisited,
            # so that each phase's memory accesses are in flight together.
            for k in range(GATHER):
                v = int32(-1)
                if b + k < end:
                    v = indices[b + k]
                vs[k] = v
            for k in range(GATHER):
                d = int32(0)
                if vs[k] >= 0:
                    d = dist[vs[k]]
                ds[k] = d
            for k in range(GATHER):
                if ds[k] == -1:
                    ds[k] = cuda.atomic.cas(dist, vs[k], -1, nxt)
            for k in range(GATHER):
                if ds[k] == -1:
                    parent[vs[k]] = u
                else:
                    vs[k] = -1
            # Into the W-queue: a lane's slot is the count of claiming lanes below it.
            for k in range(GATHER):
                v = vs[k]
                votes = cuda.ballot_sync(FULL_MASK, v >= 0)
                if votes != 0:
                    n = cuda.popc(votes)
                    if wtail + n > WQ_ENTRIES:
                        _flush(wqg, wtail, dst)
                        wtail = 0
                    if v >= 0:
                        wq[w_base + wtail + cuda.popc(votes & cuda.lanemask_lt())] = v
                    wtail += n
            b += GATHER
        j += stride
    return wtail, edges


@_device
def _gather(wqg, wtail, edges, wcount, woff, dst, instrument):
    """End of a level, for the whole block: the W-queues' offsets in the B-queue (one warp), the
    B-queue's offset in the next frontier (one atomic a block on ctr[ci]; with instrument, the
    block's edges added to ctr[ci + 1]) and the W-queues copied there, a warp's lanes writing
    consecutive entries. The caller's barrier ends the level."""
    wq, w_base = wqg
    ctr, ci = dst[0], dst[1]
    warp = cuda.threadIdx.x // WARP_SIZE
    lane = cuda.laneid
    nwarps = cuda.blockDim.x // WARP_SIZE
    if instrument:
        edges = warp_sum(edges)
    if lane == 0:
        wcount[warp] = wtail
        woff[warp] = edges
    cuda.syncthreads()
    if warp == 0:
        t = int64(0)
        e = int64(0)
        if lane < nwarps:
            t = wcount[lane]
            e = woff[lane]
        incl = warp_inclusive_scan(t)
        total = cuda.shfl_sync(FULL_MASK, incl, WARP_SIZE - 1)
        base = int64(0)
        if lane == 0 and total > 0:
            base = cuda.atomic.add(ctr, ci, total)
        if instrument:
            e = warp_sum(e)
            if lane == 0:
                cuda.atomic.add(ctr, ci + 1, e)
        base = cuda.shfl_sync(FULL_MASK, base, 0)
        if lane < nwarps:
            woff[lane] = base + incl - t
    cuda.syncthreads()
    base = woff[warp]
    for k in range(lane, wtail, WARP_SIZE):
        _put(dst, base + k, wq[w_base + k])


@_device
def _clear_slot(slots, level):
    """Level `level` clears the slot level + 1 will gather into."""
    s = ((level + 2) % NUM_SLOTS) * SLOT_FIELDS
    slots[s + SLOT_COUNT] = 0
    slots[s + SLOT_EDGES] = 0


@_device
def _log_level(log, row, frontier, slots, ci):
    log[row, L_FRONTIER] = frontier
    log[row, L_EDGES] = slots[ci + SLOT_EDGES]
    log[row, L_NEXT] = slots[ci + SLOT_COUNT]
    log[row, L_CLOCK] = clock64()


@cuda.jit(cache=True, **BLOCK_1024)
def luo_block(graph: Graph, tree: Tree, queues: QueuePair, out: LuoOut, knobs: LuoKnobs):
    """Layer (a): one block runs levels while the frontier has at most `threshold` vertices (and at
    most `max_log` levels), block barriers between them. The frontier queue[:size] (queue: qa when
    in_a, else qb) is loaded into shared memory (threshold entries, twice: this frontier and the
    next); a next frontier larger than that spills into queue from entry `threshold` on, and ends
    the launch. The frontier it stops at is left in queue (state[S_SIZE] entries)."""
    dyn = cuda.shared.array(0, int32)
    wcount = cuda.shared.array(32, int64)
    woff = cuda.shared.array(32, int64)
    slots = cuda.shared.array(SLOT_WORDS, int64)  # the block's own rotating slots
    queue = queues.qa if queues.in_a else queues.qb
    size, level = queues.size, queues.level
    state, log, max_log = out
    threshold, instrument = knobs.block_threshold, knobs.instrument
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    warp = tid // WARP_SIZE
    w_base = warp * WQ_ENTRIES
    cur = (nthreads // WARP_SIZE) * WQ_ENTRIES
    nxt = cur + threshold
    if tid == 0:
        state[S_CLOCK_START] = clock64()
        for k in range(SLOT_WORDS):
            slots[k] = 0
    for i in range(tid, size, nthreads):
        dyn[cur + i] = queue[i]
    cuda.syncthreads()
    s = size
    nlev = 0
    while True:
        ci = ((level + 1) % NUM_SLOTS) * SLOT_FIELDS
        if tid == 0:
            _clear_slot(slots, level)
        dst = (slots, ci, dyn, nxt, threshold, queue)
        wtail, edges = _expand(graph, tree, (dyn, cur, s, warp * WARP_SIZE, nthreads, level), (dyn, w_base), dst)
        _gather((dyn, w_base), wtail, edges, wcount, woff, dst, instrument)
        cuda.syncthreads()
        s_next = slots[ci + SLOT_COUNT]
        if tid == 0:
            _log_level(log, nlev, s, slots, ci)
        nlev += 1
        level += 1
        cur, nxt = nxt, cur
        s = s_next
        if s == 0 or s > threshold or nlev >= max_log:
            break
    for i in range(tid, min(s, threshold), nthreads):
        queue[i] = dyn[cur + i]
    if tid == 0:
        for k in range(SLOT_WORDS):
            state[k] = 0  # the next layer's first level gathers into a clear slot
        state[S_LEVELS] = nlev
        state[S_SIZE] = s
        state[S_CLOCK_END] = clock64()


@cuda.jit(cache=True, **BLOCK_1024)
def luo_grid(graph: Graph, tree: Tree, queues: QueuePair, out: LuoOut, knobs: LuoKnobs):
    """Layer (b): a grid-synchronised kernel (launched cooperatively, at most the co-resident
    blocks) runs levels while block_threshold < |F| <= grid_threshold (and at most `max_log`),
    one grid barrier a level. The frontier is qa[:size] when in_a, else qb[:size]; the queues swap
    every level, so it stops with the frontier in qa if in_a ^ (state[S_LEVELS] odd)."""
    grid = cuda.cg.this_grid()
    dyn = cuda.shared.array(0, int32)
    wcount = cuda.shared.array(32, int64)
    woff = cuda.shared.array(32, int64)
    qa, qb, a, size, _, level = queues
    state, log, max_log = out
    block_threshold, grid_threshold, instrument = knobs
    warp = cuda.threadIdx.x // WARP_SIZE
    w_base = warp * WQ_ENTRIES
    first = cuda.blockIdx.x * cuda.blockDim.x + warp * WARP_SIZE
    stride = cuda.gridsize(1)
    leader = cuda.grid(1) == 0
    if leader:
        state[S_CLOCK_START] = clock64()
    s = size
    nlev = 0
    while True:
        ci = ((level + 1) % NUM_SLOTS) * SLOT_FIELDS
        if leader:
            _clear_slot(state, level)
        src = qa if a else qb
        dst = (state, ci, dyn, 0, 0, qb if a else qa)
        wtail, edges = _expand(graph, tree, (src, 0, s, first, stride, level), (dyn, w_base), dst)
        _gather((dyn, w_base), wtail, edges, wcount, woff, dst, instrument)
        grid.sync()
        s_next = state[ci + SLOT_COUNT]
        if leader:
            _log_level(log, nlev, s, state, ci)
        nlev += 1
        level += 1
        a = not a
        s = s_next
        if s <= block_threshold or s > grid_threshold or nlev >= max_log:
            break
    if leader:
        state[S_LEVELS] = nlev
        state[S_SIZE] = s
        state[S_CLOCK_END] = clock64()


@cuda.jit(cache=True, **BLOCK_1024)
def luo_level(graph: Graph, tree: Tree, queues: QueuePair, out: LuoOut, knobs: LuoKnobs):
    """Layer (c): one level, a thread per frontier vertex (qa[:size] when in_a, else qb); the next
    frontier in the other queue, its size in state's slot (level + 1) % 3."""
    dyn = cuda.shared.array(0, int32)
    wcount = cuda.shared.array(32, int64)
    woff = cuda.shared.array(32, int64)
    qa, qb, in_a, size, _, level = queues
    state = out.state
    warp = cuda.threadIdx.x // WARP_SIZE
    w_base = warp * WQ_ENTRIES
    ci = ((level + 1) % NUM_SLOTS) * SLOT_FIELDS
    if cuda.grid(1) == 0:
        _clear_slot(state, level)
    dst = (state, ci, dyn, 0, 0, qb if in_a else qa)
    wtail, edges = _expand(graph, tree, (qa if in_a else qb, 0, size, cuda.blockIdx.x * cuda.blockDim.x
                                         + warp * WARP_SIZE, cuda.gridsize(1), level), (dyn, w_base), dst)
    _gather((dyn, w_base), wtail, edges, wcount, woff, dst, knobs.instrument)
