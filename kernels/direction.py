"""Kernels for BFS that changes direction: a bottom-up level and the conversions between a
frontier queue and a frontier bitmap, one launch a level (bottom-up and hybrid; their top-down
steps are kernels/topdown.py's queue kernel and kernels/scan.py's layer-based one), and
direction-optimizing's persistent grid, `do_grid`, which runs many levels in one launch and
chooses each one's direction on the device (described where it begins, below).

Bottom-up (Beamer, Asanović & Patterson, SC'12; CS406 report §3.1.2, Appendices 4 and 6): a
thread per vertex; an unvisited vertex walks its in-edges (on an undirected graph, its edges) and
stops at the first neighbour in the current frontier, which becomes its parent. Only the vertex's
own thread writes its distance and parent: no claim, no duplicates.

A bottom-up step reads its frontier as a bitmap (a bit a vertex, uint32 words) or as the distance
array (dist[u] == level: the report's layer-based form). A warp handles 32 consecutive vertices,
one word of the bitmap, so the next frontier's word is the warp's ballot, written without
atomics, and the queue form reserves its slots with one atomic a warp. Counts are summed over the
warp before one atomic a warp, not one a thread (millions of threads a level on large graphs).

Every kernel here must run with whole warps (block sizes that are multiples of 32): the warp
intrinsics name all 32 lanes.
"""
import functools
from typing import NamedTuple

from numba import cuda, int32, int64, uint32

from .args import BOOL, I64, U32, V32, V64, Graph, QueuePair, Tree
from .common import BLOCK_1024
from .expand import heavy_entry, heavy_push, heavy_slot
from .histogram import count_degrees
from .primitives import (FULL_MASK, WARP_SIZE, clock64, uidx, warp_binary_exclusive_scan, warp_exclusive_scan_total,
                         warp_inclusive_scan, warp_max, warp_search_owner, warp_sum)
from .rules import DEGREE_BINS

# This module's counters (int64), read back after each step.
NEXT_SIZE = 0  # vertices found this step: the next frontier's size
EDGES = 1  # adjacency entries inspected (instrument)
CHECKED = 2  # unvisited vertices that looked for a parent (instrument; bottom-up only)
QUEUED = 3  # entries bitmap_to_queue wrote
NUM_COUNTERS = 4


class Bitmaps(NamedTuple):
    """A bottom-up step's frontier as a bitmap (a bit a vertex, uint32 words) and the next one's."""

    bits: U32
    next_bits: U32


class BottomUpStep(NamedTuple):
    """What a bottom-up step reads and writes: the frontier is `bits` when read_bits, else
    dist == level; the next frontier goes to next_bits (write_bits) and to the queue (write_queue)."""

    level: I64
    read_bits: BOOL
    write_bits: BOOL
    write_queue: BOOL
    instrument: BOOL


@cuda.jit(device=True, inline="always")
def _in_bits(bits, u):
    return (bits[u >> 5] >> uint32(u & 31)) & uint32(1) != uint32(0)


@cuda.jit(device=True, inline="always")
def _flush(counters, slot, value):
    """Add a per-thread count to counters[slot]: a warp sum, then one atomic from lane 0."""
    total = warp_sum(value)
    if cuda.laneid == 0 and total != 0:
        cuda.atomic.add(counters, slot, total)


@cuda.jit(cache=True)
def bottom_up(in_graph: Graph, tree: Tree, bitmaps: Bitmaps, next_queue: V32, counters: V64, step: BottomUpStep):
    """One bottom-up level over the in-edges. The frontier is `bits` when `read_bits`, else
    dist == level. Writes the next frontier to `next_bits` (every word: no clearing needed) when
    `write_bits`, and appends it to `next_queue` when `write_queue`; always counts it (NEXT_SIZE)."""
    in_offsets, in_indices = in_graph
    dist, parent = tree
    bits, next_bits = bitmaps
    level, read_bits, write_bits, write_queue, instrument = step
    n = dist.shape[0]
    lane = cuda.laneid
    warp = cuda.grid(1) // WARP_SIZE
    warps = cuda.gridsize(1) // WARP_SIZE
    nxt = int32(level + 1)
    found_n = int64(0)
    edges = int64(0)
    checked = int64(0)
    w = warp
    while w * WARP_SIZE < n:  # every lane of the warp takes the same iterations
        v = w * WARP_SIZE + lane
        p = int32(-1)
        if v < n and dist[v] == -1:
            begin = in_offsets[v]
            end = in_offsets[v + 1]
            e = begin
            while e < end:
                u = in_indices[e]
                e += 1
                if read_bits:
                    hit = _in_bits(bits, u)
                else:
                    hit = dist[u] == level
                if hit:
                    p = u
                    break
            edges += e - begin
            checked += 1
            if p >= 0:
                # A vertex found now holds level + 1, never `level`: readers of dist are not misled.
                dist[v] = nxt
                parent[v] = p
                found_n += 1
        if write_bits:
            word = cuda.ballot_sync(FULL_MASK, p >= 0)
            if lane == 0:
                next_bits[w] = word
        if write_queue:
            offset, total = warp_binary_exclusive_scan(p >= 0)
            base = int64(0)
            if lane == 0 and total > 0:
                base = cuda.atomic.add(counters, NEXT_SIZE, total)
            base = cuda.shfl_sync(FULL_MASK, base, 0)
            if p >= 0:
                next_queue[base + offset] = v
        w += warps
    if not write_queue:
        _flush(counters, NEXT_SIZE, found_n)
    if instrument:
        _flush(counters, EDGES, edges)
        _flush(counters, CHECKED, checked)


@cuda.jit(cache=True)
def queue_to_bitmap(queue: V32, size: I64, bits: U32):
    """Set the bit of every queued vertex (`bits` cleared before)."""
    i = cuda.grid(1)
    while i < size:
        u = queue[i]
        cuda.atomic.or_(bits, u >> 5, uint32(1) << uint32(u & 31))
        i += cuda.gridsize(1)


@cuda.jit(cache=True)
def bitmap_to_queue(bits: U32, n: I64, queue: V32, counters: V64):
    """Append every vertex whose bit is set to `queue` (order: by warp, then by vertex)."""
    lane = cuda.laneid
    w = cuda.grid(1) // WARP_SIZE
    while w * WARP_SIZE < n:
        v = w * WARP_SIZE + lane
        has = v < n and _in_bits(bits, v)
        offset, total = warp_binary_exclusive_scan(has)
        base = int64(0)
        if lane == 0 and total > 0:
            base = cuda.atomic.add(counters, QUEUED, total)
        base = cuda.shfl_sync(FULL_MASK, base, 0)
        if has:
            queue[base + offset] = v
        w += cuda.gridsize(1) // WARP_SIZE


# ---------------------------------------------------------------------------------------------
# direction-optimizing's persistent grid (Beamer, Asanović & Patterson, SC'12, decided on the GPU)
#
# One cooperative launch (at most the co-resident blocks, cuda.cg.this_grid().sync()) runs level
# after level and chooses each level's direction itself by Beamer's rule from m_f, m_u and n_f,
# which the level's claims count with one atomic a warp: the host reads back once a launch, not
# once a level. A level is one phase and one grid barrier, plus one of each where it converts its
# frontier (a bitmap into a queue, or on entry a queue into a bitmap) or spreads heavy vertices'
# edges over the grid.
#
# Top-down: each warp takes 32 frontier entries and spreads its lanes over their edges (BFS-4K's
# edge-discover, §5.4: a prefix sum of the degrees, each lane's owner found by a 5-shuffle
# search), claims by compare-and-swap, and appends the claimed vertices with one atomic a warp and
# round; a vertex of degree >= heavy_degree is set aside, and after the barrier the whole grid
# walks those vertices' edges as one flat range, a warp taking up to 32 x HEAVY_ROUNDS consecutive
# ones (BFS-4K's child grid, §5.3, without a launch). Claimed vertices also get their bit in the
# next frontier's bitmap, so a bottom-up level after a top-down one converts nothing.
# Bottom-up: a thread per vertex, a warp per bitmap word; an unvisited vertex's thread checks up to
# `solo` in-edges alone, then its warp takes the rest of the list 32 entries at a time and stops at
# the first entry in the frontier, so a long list costs a few coalesced rounds, not a serial walk.
# The parent is the first in-neighbour in the frontier in list order, as a serial walk finds.
#
# Three bitmaps rotate: level L reads row L % 3, writes row (L + 1) % 3 (cleared while level L - 1
# ran) and clears row (L + 2) % 3, which level L - 1 read. The level's counts rotate the same way
# over three slots (as kernels/luo.py's): no barrier is spent on clearing.

#: do_grid's output (int64): three rotating slots of a level's counts ...
C_NEXT = 0  # next frontier's size
C_OUT = 1  # out-degree sum of the vertices found: the next level's m_f
C_IN = 2  # in-degree sum of the vertices found: what m_u loses
C_TOP = 3  # highest out-degree among them (the hand-off's heavy-vertex check)
C_EDGES = 4  # bottom-up: in-edges inspected (instrument)
C_CHECKED = 5  # bottom-up: unvisited vertices that looked for a parent (instrument)
C_QUEUED = 6  # entries written by a bitmap -> queue conversion
C_HEAVY = 7  # heavy vertices set aside: count << 40 | their degree sum
SLOT = 8
# ... then the launch's state, read by the host ...
G_LEVELS = 3 * SLOT  # levels the launch ran
G_SIZE = G_LEVELS + 1  # size of the frontier it stopped at (a queue)
G_QCUR = G_LEVELS + 2  # which queue holds it (0: qa, 1: qb)
G_BU = G_LEVELS + 3  # 1 if the last level ran bottom-up
G_MF = G_LEVELS + 4  # m_f, m_u and the previous level's size, for the next launch's first rule
G_MU = G_LEVELS + 5
G_PREV = G_LEVELS + 6
G_CLOCK_START = G_LEVELS + 7  # block 0's SM cycle counter as the launch started and ended
G_CLOCK_END = G_LEVELS + 8
G_HIST = G_LEVELS + 9  # the final frontier's degree histogram (kernels.bfs4k: counts, then sums)
G_LOG = G_HIST + 2 * DEGREE_BINS  # ... and a row a level from here:
R_FRONTIER = 0  # n_f
R_BU = 1  # 1: bottom-up
R_CONVERTED = 2  # 1: the level first converted its frontier
R_EDGES = 3  # edges examined: m_f top-down, the inspected in-edges bottom-up (instrument)
R_CHECKED = 4
R_NEXT = 5
R_MF = 6  # m_f and m_u when the level's direction was chosen
R_MU = 7
R_HEAVY = 8  # frontier vertices whose edges the whole grid walked
R_CLOCK = 9  # block 0's SM cycle counter as the level ended
LOG_FIELDS = 10

#: Rounds of 32 consecutive heavy edges a warp takes at most at a time (one slot search a lane).
HEAVY_ROUNDS = 8

# Per-thread accumulators, flushed with one atomic a warp at the end of each phase.
A_NEXT, A_OUT, A_IN, A_TOP, A_EDGES, A_CHECKED = 0, 1, 2, 3, 4, 5
NUM_ACC = 6


def beamer_bottom_up(bottom_up, m_f, m_u, n_f, prev_n_f, n, alpha, beta):
    """Beamer's rule: whether the next level runs bottom-up, `bottom_up` saying how the last one ran.
    Top-down -> bottom-up when m_f > m_u / alpha; bottom-up -> top-down when n_f < n / beta and the
    frontier shrinks (his Fig. 8 and the GAP reference code: a growing frontier stays bottom-up
    however small). Plain arithmetic: the host's rule (explorer.techniques.direction_optimizing)
    and the device's (do_grid) are this function."""
    if not bottom_up:
        return m_f * alpha > m_u
    return not (n_f * beta < n and n_f < prev_n_f)


_beamer = cuda.jit(device=True)(beamer_bottom_up)


@cuda.jit(device=True, inline="always")
def _bit(bits, base, u):
    return (bits[uidx(base + (u >> 5))] >> uint32(u & 31)) & uint32(1) != uint32(0)


@cuda.jit(device=True, inline="always")
def _first_lane(mask):
    """Lowest set lane of a non-zero 32-bit mask (a ballot: a signed int32 in numba-cuda)."""
    m = int64(mask) & 0xFFFFFFFF
    return int32(cuda.popc((m & -m) - 1))


@cuda.jit(device=True)
def _flush_acc(acc, out, s, instrument):
    """The phase's per-thread counts into slot s: a warp sum (maximum), one atomic a warp."""
    lane = cuda.laneid
    for f in range(A_TOP):
        t = warp_sum(acc[f])
        if lane == 0 and t != 0:
            cuda.atomic.add(out, s + f, t)  # A_NEXT, A_OUT, A_IN are C_NEXT, C_OUT, C_IN
        acc[f] = 0
    t = warp_max(acc[A_TOP])
    if lane == 0 and t != 0:
        cuda.atomic.max(out, s + C_TOP, t)
    acc[A_TOP] = 0
    if instrument:
        for f in range(A_EDGES, NUM_ACC):
            t = warp_sum(acc[f])
            if lane == 0 and t != 0:
                cuda.atomic.add(out, s + f, t)  # A_EDGES, A_CHECKED are C_EDGES, C_CHECKED
            acc[f] = 0


@cuda.jit(device=True, inline="always")
def _found(out_deg, in_deg, acc):
    """Count a vertex just found for Beamer's quantities: its out-degree (the next m_f, and the
    hand-off's heavy check) and its in-degree (what m_u loses)."""
    acc[A_OUT] += out_deg
    acc[A_IN] += in_deg
    if out_deg > acc[A_TOP]:
        acc[A_TOP] = out_deg


@cuda.jit(device=True)
def _td_visit(has, v, u, tree, degrees, lv, acc):
    """Claim v from frontier vertex u by compare-and-swap; the winners go into the next queue (one
    atomic a warp) and the next bitmap. Collective over the warp. degrees: (out_offsets, in_offsets,
    directed); lv: the level's (nxt, bits, nb, dst, out, s), its next frontier in the queue dst
    and in bits[nb:], its counts in out's slot s."""
    dist, parent = tree
    out_offsets, in_offsets, directed = degrees
    nxt, bits, nb, dst, out, s = lv
    won = False
    if has and dist[uidx(v)] == -1:
        won = cuda.atomic.cas(dist, uidx(v), -1, nxt) == -1
    if won:
        parent[uidx(v)] = u
        cuda.atomic.or_(bits, uidx(nb + (v >> 5)), uint32(1) << uint32(v & 31))
        od = out_offsets[uidx(v + 1)] - out_offsets[uidx(v)]
        _found(od, in_offsets[uidx(v + 1)] - in_offsets[uidx(v)] if directed else od, acc)
    votes = cuda.ballot_sync(FULL_MASK, won)
    if votes != 0:
        base = int64(0)
        if cuda.laneid == 0:
            base = cuda.atomic.add(out, s + C_NEXT, int64(cuda.popc(uint32(votes))))
        base = cuda.shfl_sync(FULL_MASK, base, 0)
        if won:
            dst[uidx(base + cuda.popc(uint32(votes) & cuda.lanemask_lt()))] = v


@cuda.jit(device=True)
def _top_down(graph, degrees, tree, src, size, heavy_degree, heavy_v, heavy_off, lv, acc):
    """A top-down level's light vertices by edge-discover over each warp's 32 frontier entries
    src[:size]; the heavy ones are listed for _heavy. Collective."""
    out_offsets, out_indices = graph
    out, s = lv[4], lv[5]
    lane = cuda.laneid
    first = (cuda.grid(1) // WARP_SIZE) * WARP_SIZE
    stride = (cuda.gridsize(1) // WARP_SIZE) * WARP_SIZE
    heavy_ctr = out[s + C_HEAVY:s + C_HEAVY + 1]
    while first < size:  # warp-uniform
        i = first + lane
        u = int32(0)
        beg = int64(0)
        deg = int64(0)
        if i < size:
            u = src[uidx(i)]
            beg = out_offsets[uidx(u)]
            deg = out_offsets[uidx(u + 1)] - beg
            if deg >= heavy_degree:
                heavy_push(u, deg, heavy_v, heavy_off, heavy_ctr)
                deg = int64(0)
        incl = warp_inclusive_scan(deg)
        total = cuda.shfl_sync(FULL_MASK, incl, WARP_SIZE - 1)
        excl = incl - deg
        done = int64(0)
        while done < total:
            k = done + lane
            owner = warp_search_owner(incl, k)
            o_u = cuda.shfl_sync(FULL_MASK, u, owner)
            o_beg = cuda.shfl_sync(FULL_MASK, beg, owner)
            o_excl = cuda.shfl_sync(FULL_MASK, excl, owner)
            has = k < total
            v = int32(0)
            if has:
                v = out_indices[uidx(o_beg + (k - o_excl))]
            _td_visit(has, v, o_u, tree, degrees, lv, acc)
            done += WARP_SIZE
        first += stride


@cuda.jit(device=True)
def _heavy(graph, degrees, tree, heavy_v, heavy_off, packed, lv, acc):
    """The heavy vertices' edges as one flat range over the whole grid: a warp takes 32 x R
    consecutive edges, its lanes consecutive ones (coalesced), R at most HEAVY_ROUNDS and no more
    than spreads the range over every warp (one hub's 100 k edges: a round or two each, not eight
    rounds for a sixth of the warps). Collective."""
    out_offsets, out_indices = graph
    count = packed >> 40
    total = packed & ((int64(1) << 40) - 1)
    lane = cuda.laneid
    warps = cuda.gridsize(1) // WARP_SIZE
    rounds = min(HEAVY_ROUNDS, max(1, (total + warps * WARP_SIZE - 1) // (warps * WARP_SIZE)))
    chunk = WARP_SIZE * rounds
    c = int64(cuda.grid(1) // WARP_SIZE)
    while c * chunk < total:  # warp-uniform
        start = c * chunk + lane
        slot = heavy_slot(heavy_off, count, start) if start < total else 0
        s_end, u, row = heavy_entry(out_offsets, heavy_v, heavy_off, count, total, slot)
        for j in range(rounds):
            x = start + j * WARP_SIZE
            has = x < total
            v = int32(0)
            if has:
                while x >= s_end:
                    slot += 1
                    s_end, u, row = heavy_entry(out_offsets, heavy_v, heavy_off, count, total, slot)
                v = out_indices[uidx(row + x)]
            _td_visit(has, v, u, tree, degrees, lv, acc)
        c += warps


@cuda.jit(device=True)
def _bottom_up(in_graph, degrees, tree, bits, cur, nb, nxt, solo, acc, instrument):
    """A bottom-up level: a warp per word of the bitmaps (the frontier bits[cur:], the next one
    bits[nb:]). Collective."""
    in_offsets, in_indices = in_graph
    out_offsets, _, directed = degrees
    dist, parent = tree
    n = dist.shape[0]
    lane = cuda.laneid
    w = cuda.grid(1) // WARP_SIZE
    warps = cuda.gridsize(1) // WARP_SIZE
    while w * WARP_SIZE < n:  # warp-uniform
        v = w * WARP_SIZE + lane
        p = int32(-1)
        beg = int64(0)
        end = int64(0)
        e = int64(0)
        if v < n and dist[uidx(v)] == -1:
            beg = in_offsets[uidx(v)]
            end = in_offsets[uidx(v + 1)]
            e = beg
            lim = min(end, beg + solo)
            while e < lim:
                u = in_indices[uidx(e)]
                e += 1
                if _bit(bits, cur, u):
                    p = u
                    break
            if instrument:
                acc[A_CHECKED] += 1
        seen = e - beg
        # The rest of each long list, by the whole warp: 32 entries a round, stop at the first hit.
        todo = int64(cuda.ballot_sync(FULL_MASK, p < 0 and e < end)) & 0xFFFFFFFF
        while todo != 0:
            lead = _first_lane(todo)
            todo &= todo - 1
            lb = cuda.shfl_sync(FULL_MASK, e, lead)
            le = cuda.shfl_sync(FULL_MASK, end, lead)
            hit_u = int32(-1)
            used = int64(0)
            while lb < le:
                k = lb + lane
                u = int32(0)
                hit = False
                if k < le:
                    u = in_indices[uidx(k)]
                    hit = _bit(bits, cur, u)
                hits = cuda.ballot_sync(FULL_MASK, hit)
                if hits != 0:
                    f = _first_lane(hits)
                    hit_u = cuda.shfl_sync(FULL_MASK, u, f)
                    used += f + 1  # the entries a serial walk would have checked
                    break
                used += min(le - lb, WARP_SIZE)
                lb += WARP_SIZE
            if lane == lead:
                p = hit_u
                seen += used
        if p >= 0:
            dist[uidx(v)] = nxt
            parent[uidx(v)] = p
            acc[A_NEXT] += 1
            ind = end - beg
            _found(out_offsets[uidx(v + 1)] - out_offsets[uidx(v)] if directed else ind, ind, acc)
        if instrument:
            acc[A_EDGES] += seen
        word = cuda.ballot_sync(FULL_MASK, p >= 0)
        if lane == 0 and word != 0:  # the row was cleared: zero words need no store
            bits[uidx(nb + w)] = uint32(word)
        w += warps


@cuda.jit(device=True)
def _queue_to_bits(src, size, bits, base):
    i = cuda.grid(1)
    while i < size:
        u = src[i]
        cuda.atomic.or_(bits, base + (u >> 5), uint32(1) << uint32(u & 31))
        i += cuda.gridsize(1)


@cuda.jit(device=True)
def _bits_to_queue(bits, base, words, dst, out, idx):
    """Every vertex whose bit is set into dst: a lane a word, one atomic a warp. Collective."""
    lane = cuda.laneid
    i = cuda.grid(1)
    while i - lane < words:  # warp-uniform
        word = uint32(0)
        if i < words:
            word = bits[base + i]
        excl, total = warp_exclusive_scan_total(int32(cuda.popc(word)))
        at = int64(0)
        if lane == 0 and total > 0:
            at = cuda.atomic.add(out, idx, int64(total))
        at = cuda.shfl_sync(FULL_MASK, at, 0) + excl
        while word != 0:
            dst[at] = int32(i * WARP_SIZE + _first_lane(word))
            at += 1
            word &= word - uint32(1)
        i += cuda.gridsize(1)


@cuda.jit(device=True)
def _clear(bits, base, words):
    i = cuda.grid(1)
    while i < words:
        bits[base + i] = 0
        i += cuda.gridsize(1)


# The search's state in each block's shared memory, kept by the block's thread 0 (every block's
# takes the same decisions from the same numbers): values live in registers across a grid barrier
# (a call) cost spills, so each phase reads what it needs after the barrier before it.
T_LEVEL, T_SIZE, T_QCUR, T_BU, T_MF, T_MU, T_PREV, T_SMALL, T_NLEV, T_QUEUE, T_BITS, T_STOP = range(12)
NUM_T = 12
STOP_NO, STOP_DONE, STOP_CONVERT = 0, 1, 2  # T_STOP: go on; stop; stop once the bitmap is a queue


@cuda.jit(device=True)
def _next_level(st, out, s, leader, n, knobs, max_log):
    """After a level's last barrier, by each block's thread 0: the level's row of the log (the
    grid's thread 0), then the state of the next level, its direction and whether to stop."""
    alpha, beta, handoff_size, handoff_levels, handoff_degree = (knobs.alpha, knobs.beta, knobs.handoff_size,
                                                                 knobs.handoff_levels, knobs.handoff_degree)
    go_bu = st[T_BU] != 0
    size = st[T_SIZE]
    nsize = out[s + C_NEXT]
    nlev = st[T_NLEV]
    if leader:
        r = G_LOG + nlev * LOG_FIELDS
        out[r + R_FRONTIER] = size
        out[r + R_BU] = 1 if go_bu else 0
        out[r + R_CONVERTED] = 1 if (st[T_BITS] == 0 if go_bu else st[T_QUEUE] == 0) else 0
        out[r + R_EDGES] = out[s + C_EDGES] if go_bu else st[T_MF]
        out[r + R_CHECKED] = out[s + C_CHECKED]
        out[r + R_NEXT] = nsize
        out[r + R_MF] = st[T_MF]
        out[r + R_MU] = st[T_MU]
        out[r + R_HEAVY] = 0 if go_bu else out[s + C_HEAVY] >> 40
        out[r + R_CLOCK] = clock64()
    m_f = out[s + C_OUT]
    m_u = st[T_MU] - out[s + C_IN]
    if not go_bu:
        st[T_QCUR] = 1 - st[T_QCUR]
    st[T_QUEUE] = 0 if go_bu else 1
    st[T_BITS] = 1
    st[T_LEVEL] += 1
    st[T_NLEV] = nlev + 1
    st[T_PREV] = size
    st[T_SIZE] = nsize
    st[T_MF] = m_f
    st[T_MU] = m_u
    next_bu = _beamer(go_bu, m_f, m_u, nsize, size, n, alpha, beta)
    st[T_BU] = 1 if next_bu else 0
    small = st[T_SMALL] + 1 if nsize < handoff_size and out[s + C_TOP] < handoff_degree else 0
    st[T_SMALL] = small
    stop = STOP_NO
    if nsize == 0:
        stop = STOP_DONE
    elif (handoff_levels > 0 and small >= handoff_levels and not next_bu) or nlev + 1 >= max_log:
        stop = STOP_CONVERT if go_bu else STOP_DONE  # the next launch starts from a queue
    st[T_STOP] = stop
    if stop != STOP_NO:  # the state the host reads; T_BU is then the last level's direction
        st[T_BU] = 1 if go_bu else 0
        if leader:
            out[G_LEVELS] = nlev + 1
            out[G_SIZE] = nsize
            out[G_QCUR] = st[T_QCUR]
            out[G_BU] = st[T_BU]
            out[G_MF] = m_f
            out[G_MU] = m_u
            out[G_PREV] = size


class GridArrays(NamedTuple):
    """do_grid's own arrays: three rotating frontier bitmaps (rows of ceil(n / 32) words), the
    heavy vertices' list (vertices, first flat edges) and `out`: the rotating slots of each
    level's counts, the launch's state and log (C_*, G_*, R_* above)."""

    bits: U32
    heavy_v: V32
    heavy_off: V64
    out: V64


class GridStart(NamedTuple):
    """Where the launch starts: whether the last level ran bottom-up, Beamer's m_f and m_u, and the
    previous frontier's size."""

    bu: BOOL
    m_f: I64
    m_u: I64
    prev: I64


class GridKnobs(NamedTuple):
    """Beamer's α and β; the hand-off to BFS-4K's single block (after handoff_levels levels in a
    row left fewer than handoff_size vertices, none of degree handoff_degree or more; 0 levels:
    never); the heavy vertices' degree; in-edges a bottom-up thread checks alone."""

    alpha: I64
    beta: I64
    handoff_size: I64
    handoff_levels: I64
    handoff_degree: I64
    heavy_degree: I64
    solo_edges: I64


@functools.cache
def grid_kernel(directed: bool, instrument: bool):
    """do_grid for a directed graph or not (in-degrees looked up, or equal to out-degrees) and with
    or without the bottom-up counts (instrument), both fixed at compile time: the code of the
    other case is dropped (registers). Compiled on first use, cached on disk."""

    @cuda.jit(cache=True, **BLOCK_1024)
    def do_grid(graph: Graph, in_graph: Graph, tree: Tree, queues: QueuePair, arrays: GridArrays, start: GridStart,
                knobs: GridKnobs):
        """Levels of direction-optimizing BFS in one cooperative launch, each direction by Beamer's rule
        on the device (see above). Starts from the frontier of queues.level, the last level having run
        bottom-up if start.bu, with Beamer's m_f, m_u and the previous frontier's size; `bits` and
        out's slots cleared.

        Stops when the frontier is empty, when the log in `out` is full, or to hand the search to
        BFS-4K's single block: after `handoff_levels` (> 0) levels in a row left a frontier of fewer
        than `handoff_size` vertices, none of degree `handoff_degree` or more, and the next level would
        run top-down. It leaves the frontier as a queue, its degree histogram and the state in `out`."""
        out_offsets, out_indices = graph
        dist = tree.dist
        qa, qb, in_a, size, _, level = queues
        bits, heavy_v, heavy_off, out = arrays
        bu, m_f, m_u, prev = start
        alpha, beta, heavy_degree, solo = knobs.alpha, knobs.beta, knobs.heavy_degree, knobs.solo_edges
        degrees = (out_offsets, in_graph.offsets, directed)
        grid = cuda.cg.this_grid()
        st = cuda.shared.array(NUM_T, int64)
        hist_c = cuda.shared.array(DEGREE_BINS, int32)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        tid = cuda.threadIdx.x
        leader = cuda.grid(1) == 0
        n = dist.shape[0]
        words = (n + WARP_SIZE - 1) // WARP_SIZE
        if tid < DEGREE_BINS:
            hist_c[tid] = 0
            hist_s[tid] = 0
        if tid == 0:
            st[T_LEVEL] = level
            st[T_SIZE] = size
            st[T_QCUR] = 0 if in_a else 1
            st[T_BU] = 1 if _beamer(bu, m_f, m_u, size, prev, n, alpha, beta) else 0  # this level's
            st[T_MF] = m_f
            st[T_MU] = m_u
            st[T_PREV] = prev
            st[T_SMALL] = 0
            st[T_NLEV] = 0
            st[T_QUEUE] = 1  # the frontier is in q[qcur] ...
            st[T_BITS] = 0  # ... not yet in row level % 3 of bits
            st[T_STOP] = STOP_NO
        if leader:
            out[G_CLOCK_START] = clock64()
        acc = cuda.local.array(NUM_ACC, int64)
        for f in range(NUM_ACC):
            acc[f] = 0
        cuda.syncthreads()
        while True:
            lv = st[T_LEVEL]
            s = (lv % 3) * SLOT
            if leader:
                for f in range(SLOT):
                    out[((lv + 1) % 3) * SLOT + f] = 0
            if st[T_BU] != 0:
                if st[T_BITS] == 0:
                    _queue_to_bits(qa if st[T_QCUR] == 0 else qb, st[T_SIZE], bits, (lv % 3) * words)
                    grid.sync()
                lv = st[T_LEVEL]
                _clear(bits, ((lv + 2) % 3) * words, words)
                _bottom_up(in_graph, degrees, tree, bits, (lv % 3) * words, ((lv + 1) % 3) * words, int32(lv + 1),
                           solo, acc, instrument)
                _flush_acc(acc, out, (lv % 3) * SLOT, instrument)
                grid.sync()
            else:
                if st[T_QUEUE] == 0:
                    _bits_to_queue(bits, (lv % 3) * words, words, qa if st[T_QCUR] == 0 else qb, out, s + C_QUEUED)
                    grid.sync()
                lv = st[T_LEVEL]
                a = st[T_QCUR] == 0
                _clear(bits, ((lv + 2) % 3) * words, words)
                _top_down(graph, degrees, tree, qa if a else qb, st[T_SIZE], heavy_degree, heavy_v, heavy_off,
                          (int32(lv + 1), bits, ((lv + 1) % 3) * words, qb if a else qa, out, (lv % 3) * SLOT), acc)
                _flush_acc(acc, out, (lv % 3) * SLOT, instrument)
                grid.sync()
                lv = st[T_LEVEL]
                packed = out[(lv % 3) * SLOT + C_HEAVY]
                if packed != 0:  # the same value in every thread: all take this barrier or none
                    _heavy(graph, degrees, tree, heavy_v, heavy_off, packed,
                           (int32(lv + 1), bits, ((lv + 1) % 3) * words, qb if st[T_QCUR] == 0 else qa, out,
                            (lv % 3) * SLOT), acc)
                    _flush_acc(acc, out, (lv % 3) * SLOT, instrument)
                    grid.sync()
            cuda.syncthreads()  # the block has read this level's state: thread 0 may move it on
            if tid == 0:
                _next_level(st, out, (st[T_LEVEL] % 3) * SLOT, leader, n, knobs, (out.shape[0] - G_LOG) // LOG_FIELDS)
            cuda.syncthreads()
            if st[T_STOP] != STOP_NO:
                break
        lv = st[T_LEVEL]
        if st[T_STOP] == STOP_CONVERT:  # the last level ran bottom-up: its frontier as a queue
            _bits_to_queue(bits, (lv % 3) * words, words, qa if st[T_QCUR] == 0 else qb, out,
                           (lv % 3) * SLOT + C_QUEUED)
            grid.sync()
        if st[T_SIZE] > 0:  # the final frontier's degree histogram, as kernels.bfs4k counts it
            count_degrees(qa if st[T_QCUR] == 0 else qb, cuda.grid(1), st[T_SIZE], cuda.gridsize(1), out_offsets,
                           hist_c, hist_s)
            cuda.syncthreads()
            if tid < DEGREE_BINS:
                if hist_c[tid]:
                    cuda.atomic.add(out, G_HIST + tid, int64(hist_c[tid]))
                if hist_s[tid]:
                    cuda.atomic.add(out, G_HIST + DEGREE_BINS + tid, hist_s[tid])
        if leader:
            out[G_CLOCK_END] = clock64()

    return do_grid
