"""bitmap-direction's device functions: one level's phases and its bookkeeping
(kernels/bitmap_direction/kernel.py puts them together). A phase runs over a team, the whole grid
or block 0 alone (the narrow levels): `me` is the thread's rank in its team and `team` the team's
threads, and every phase strides by them. Every warp-level call is made by all 32 lanes.
"""
import time

import numpy as np
from numba import cuda, int32, int64, uint32, uint64

from .. import cudasim as _sim
from ..cluster import counter_add, counter_load
from ..primitives import (FULL_MASK, WARP_SIZE, clock64, warp_exclusive_scan_total, warp_inclusive_scan,
                          uidx, warp_search_owner, warp_sum)
from . import layout as L

LOW32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
NUM_ACC = L.NUM_ACC  # array sizes in kernels must be global names


def globaltimer():
    """The device's nanosecond clock (PTX %globaltimer), the same on every SM. This Python body is
    what the simulator runs: the host's nanosecond clock."""
    return np.int64(time.perf_counter_ns())


if not _sim.simulator_enabled():
    from llvmlite import ir as _ir
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic as _intrinsic
    from numba.cuda.extending import overload as _overload

    @_intrinsic
    def _read_globaltimer(typingctx):
        def codegen(context, builder, sig, args):
            fnty = _ir.FunctionType(_ir.IntType(64), [])
            asm = _ir.InlineAsm(fnty, "mov.u64 $0, %globaltimer;", "=l", side_effect=True)
            return builder.call(asm, [])

        return _types.int64(), codegen

    @_overload(globaltimer, target="cuda")
    def _globaltimer_cuda():
        def impl():
            return _read_globaltimer()

        return impl


decide = cuda.jit(device=True)(L.decide)


@cuda.jit(device=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of a non-zero 32-bit word."""
    m = int64(x) & 0xFFFFFFFF
    return int32(cuda.popc((m & -m) - 1))


# ---------------------------------------------------------------------------------- counts
@cuda.jit(device=True, inline="always")
def ws_at(set_, f, warp):
    """Where ws holds warp `warp`'s sum of field f in set `set_` (layout.WS)."""
    return (set_ * L.NUM_ACC + f) * L.MAX_WARPS + warp


@cuda.jit(device=True)
def warp_counts(acc, ws, set_, instrument):
    """The warp's accumulators summed over its lanes into ws (lane 0 stores them: a plain store a
    field, no atomic), in `set_` (0 or 1), for `block_total`; acc is cleared. Every lane calls it."""
    warp = cuda.threadIdx.x // WARP_SIZE
    # A warp that left a branch apart (a lane's store, a loop some lanes ended) runs its shuffles
    # on ptxas's slow path for diverged warps, a branch and a collective loop each: converge first,
    # and store only once every field is summed.
    cuda.syncwarp(FULL_MASK)
    sums = cuda.local.array(NUM_ACC, int64)
    for f in range(L.NUM_ACC):
        x = int64(0)
        if f < L.FIRST_INSTRUMENTED or instrument:
            x = acc[f]
            if cuda.any_sync(FULL_MASK, x != 0):
                x = warp_sum(x)
        sums[f] = x
        acc[f] = 0
    if cuda.laneid == 0:
        for f in range(L.NUM_ACC):
            if f < L.FIRST_INSTRUMENTED or instrument:
                ws[ws_at(set_, f, warp)] = sums[f]


@cuda.jit(device=True)
def warp_count(acc, ws, set_, f):
    """warp_counts of field f alone (the warp's other fields in ws left as they are); acc[f] is
    cleared. Every lane calls it."""
    cuda.syncwarp(FULL_MASK)
    x = warp_sum(acc[f])
    acc[f] = 0
    if cuda.laneid == 0:
        ws[ws_at(set_, f, cuda.threadIdx.x // WARP_SIZE)] = x


@cuda.jit(device=True)
def block_total(ws, set_, f):
    """Field f of the block's counts (warp_counts by every warp, then a barrier), in every lane of
    the calling warp."""
    lane = cuda.laneid
    x = int64(0)
    if lane < cuda.blockDim.x // WARP_SIZE:
        x = ws[ws_at(set_, f, lane)]
    cuda.syncwarp(FULL_MASK)  # the lanes' loads apart: converged for the shuffles' fast path
    return warp_sum(x)


@cuda.jit(device=True)
def flush(acc, ws, stc, stage, dst, ctr, slot, instrument):
    """The end of a grid phase, by the whole block: its counts into ctr's slot (warp 0 sums the
    warps' sums: one atomic a block and field; ctr: the global counts, or a cluster's in block 0's
    shared memory, kernels.cluster.counter_add), and the queue entries it staged into dst after
    one atomic on the slot's C_NEXT. Two block barriers when it staged nothing (bottom-up), three
    otherwise."""
    warp_counts(acc, ws, 0, instrument)
    cuda.syncthreads()
    tid = cuda.threadIdx.x
    valid = min(stc[L.S_STAGED], stc[L.S_VALID])  # the same in every thread
    if tid < WARP_SIZE:
        for f in range(L.NUM_ACC):
            if f < L.FIRST_INSTRUMENTED or instrument:
                t = block_total(ws, 0, f)
                if tid == 0 and t != 0:
                    counter_add(ctr, slot + f, t)
        if tid == 0 and valid > 0:
            stc[L.S_BASE] = int32(counter_add(ctr, slot + L.C_NEXT, int64(valid)))
    if valid > 0:
        cuda.syncthreads()
        base = int64(stc[L.S_BASE])
        i = tid
        while i < valid:
            dst[base + i] = stage[i]
            i += cuda.blockDim.x
    cuda.syncthreads()  # the stage and its counts are read before they are reset
    if tid == 0:
        stc[L.S_STAGED] = 0
        stc[L.S_VALID] = L.STAGE


# ---------------------------------------------------------------------------------- top-down
@cuda.jit(device=True)
def claim(g, s, has, v, u, lv1, sink, acc):
    """Vertex v reached from u: the first to set v's visited bit owns it (dist, parent, the next
    frontier's bit, the next queue). sink = (vis, precheck, bits, nb, write_bits, dst, tail, at,
    stage, cap, stc, sat, count_mf): the visited bitmap vis (global or shared; precheck: read the
    word before the atomic, which spares atomics where most edges meet visited vertices), the next
    frontier's bitmap row bits[nb:] (when write_bits), the next queue: up to `cap` entries staged in
    shared memory (stage, counted by 32-bit shared atomics at stc[sat + S_STAGED], stc[sat +
    S_VALID]), the rest into dst at the tail tail[at] (one atomic a warp; tail: an array, or a
    cluster's counts in block 0's shared memory, kernels.cluster.counter_add); count_mf: add the
    claimed vertex's out-degree to acc[A_MF] (the block levels sum the next frontier's rows after
    the barrier instead: no load on the claim's path). Collective over the warp."""
    vis, precheck, bits, nb, write_bits, dst, tail, at, stage, cap, stc, sat, count_mf = sink
    won = False
    if has:
        w = v >> 5
        bit = uint32(1) << uint32(v & 31)
        if not precheck or (vis[uidx(w)] & bit) == uint32(0):
            dv = int64(0)
            if count_mf:
                dv = g.offsets[uidx(v + 1)] - g.offsets[uidx(v)]  # loaded beside the atomic, not after it
            won = (cuda.atomic.or_(vis, w, bit) & bit) == uint32(0)
            if won:
                s.dist[uidx(v)] = lv1
                s.parent[uidx(v)] = u
                if write_bits:
                    cuda.atomic.or_(bits, nb + w, bit)
                acc[L.A_MF] += dv
    votes = cuda.ballot_sync(FULL_MASK, won)
    if votes != 0:
        count = int32(cuda.popc(uint32(votes)))
        pos = int64(0)
        here = False  # into the stage
        if cuda.laneid == 0:
            pos = int64(cuda.atomic.add(stc, sat + L.S_STAGED, count))
            here = pos + count <= cap
            if not here:
                cuda.atomic.min(stc, sat + L.S_VALID, int32(pos))  # the stage holds entries below pos only
                pos = int64(counter_add(tail, at, count))
        pos = cuda.shfl_sync(FULL_MASK, pos, 0)
        here = cuda.shfl_sync(FULL_MASK, int32(here), 0) != 0
        if won:
            k = pos + cuda.popc(uint32(votes) & cuda.lanemask_lt())
            if here:
                stage[uidx(k)] = v
            else:
                dst[uidx(k)] = v


@cuda.jit(device=True)
def spread(size, warps):
    """Frontier entries a warp takes at a time: 32, or fewer so that a small frontier is spread
    over every warp (a warp walks its entries' edges 32 at a time: few entries a warp, few rounds)."""
    # 32-bit (a frontier is below 2**31 entries): a 64-bit division is a long subroutine
    return int64(min(int32(WARP_SIZE), max(int32(1), (int32(size) + int32(warps) - int32(1)) // int32(warps))))


@cuda.jit(device=True)
def walk(g, s, u, beg, deg, lv1, sink, acc):
    """The warp's lanes' rows (u, its first edge, its degree; 0 for none) walked by the whole warp:
    `walk_short` when every row fits its share of the lanes, else 32 edges a round (BFS-4K's
    edge-discover: each lane finds the row its edge is in). Collective."""
    held = cuda.ballot_sync(FULL_MASK, deg != 0)
    if held == 0:
        return
    # Lanes 0..last hold the rows (the callers fill them from lane 0): W = 32 >> ceil(log2(last + 1))
    # lanes a row.
    wshift = int32(cuda.clz(int32(31 - cuda.clz(int32(held))))) - int32(27)
    if cuda.all_sync(FULL_MASK, deg <= (int64(1) << wshift)):
        walk_short(g, s, u, beg, deg, wshift, lv1, sink, acc)
        return
    lane = cuda.laneid
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
            v = g.indices[uidx(o_beg + (k - o_excl))]
        claim(g, s, has, v, o_u, lv1, sink, acc)
        done += WARP_SIZE


@cuda.jit(device=True)
def walk_short(g, s, u, beg, deg, wshift, lv1, sink, acc):
    """`walk` of rows of at most W = 2**wshift edges each, held by lanes below 32 / W: W lanes a row,
    one round (BFS-4K's virtual warps), with no scan and no search on the level's path (a road's or
    a mesh's short rows). Collective."""
    lane = cuda.laneid
    owner = lane >> wshift
    o_u = cuda.shfl_sync(FULL_MASK, u, owner)
    o_beg = cuda.shfl_sync(FULL_MASK, beg, owner)
    o_deg = cuda.shfl_sync(FULL_MASK, int32(deg), owner)
    k = lane & ((int32(1) << wshift) - int32(1))
    has = k < o_deg
    v = int32(0)
    if has:
        v = g.indices[uidx(o_beg + k)]
    claim(g, s, has, v, o_u, lv1, sink, acc)


@cuda.jit(device=True)
def entry(src, i):
    """Frontier entry i of src = (shared, valid, glob): the first `valid` entries in shared memory,
    the others in global memory after them."""
    shq, valid, gq = src
    return shq[uidx(i)] if i < valid else gq[uidx(i - valid)]


@cuda.jit(device=True)
def list_heavy(s, p, u, deg, hc, hat):
    """The warp's lanes of degree heavy_degree or more set aside for `heavy`, with one atomic on the
    packed count hc[hat] (count << 40 | their degree sum); True in those lanes. Collective."""
    big = deg >= p.heavy_degree
    votes = cuda.ballot_sync(FULL_MASK, big)
    if votes != 0:
        excl, total = warp_exclusive_scan_total(deg if big else int64(0))
        old = int64(0)
        if cuda.laneid == 0:
            old = counter_add(hc, hat, (int64(cuda.popc(uint32(votes))) << L.HEAVY_SHIFT) | total)
        old = cuda.shfl_sync(FULL_MASK, old, 0)
        if big:
            k = (old >> L.HEAVY_SHIFT) + cuda.popc(uint32(votes) & cuda.lanemask_lt())
            s.heavy_v[uidx(k)] = u
            s.heavy_start[uidx(k)] = (old & L.HEAVY_EDGES) + excl
    return big


@cuda.jit(device=True)
def top_down(g, s, p, src, size, lv1, team, sink, acc):
    """A top-down level over the team: each warp takes `spread` frontier entries at a time
    (`entry`), a lane each, and walks their edges (`walk`); vertices of heavy_degree or more are set
    aside for `heavy` (`list_heavy` into hc[hat]). team = (rank, threads, hc, hat). Collective."""
    me, threads, hc, hat = team
    lane = cuda.laneid
    per = spread(size, threads // WARP_SIZE)
    first = (me // WARP_SIZE) * per
    while first < size:  # warp-uniform
        i = first + lane
        u = int32(0)
        beg = int64(0)
        deg = int64(0)
        if lane < per and i < size:
            u = entry(src, i)
            beg = g.offsets[u]
            deg = g.offsets[u + 1] - beg
            acc[L.A_EXAMINED] += deg
        if list_heavy(s, p, u, deg, hc, hat):
            deg = int64(0)
        walk(g, s, u, beg, deg, lv1, sink, acc)
        first += (threads // WARP_SIZE) * per


@cuda.jit(device=True)
def _heavy_owner(starts, count, x):
    """The last heavy vertex whose first flat edge is at most x (starts increase)."""
    lo = int64(0)
    hi = count
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@cuda.jit(device=True)
def heavy(g, s, packed, lv1, team, sink, acc):
    """The heavy vertices' edges as one flat range over the team: each warp takes an equal run of
    consecutive edges (whole rounds of 32, its lanes consecutive ones), finds its first vertex by
    one binary search and walks on. Collective."""
    me, threads = team[0], team[1]
    count = packed >> L.HEAVY_SHIFT
    total = packed & L.HEAVY_EDGES
    lane = cuda.laneid
    warps = threads // WARP_SIZE
    rounds = (total + warps * WARP_SIZE - 1) // (warps * WARP_SIZE)
    x = (me // WARP_SIZE) * rounds * WARP_SIZE + lane
    k = _heavy_owner(s.heavy_start, count, min(x, total - 1))
    for _ in range(rounds):
        has = x < total
        v = int32(0)
        u = int32(0)
        if has:
            while k + 1 < count and s.heavy_start[k + 1] <= x:
                k += 1
            u = s.heavy_v[k]
            v = g.indices[g.offsets[u] + (x - s.heavy_start[k])]
        claim(g, s, has, v, u, lv1, sink, acc)
        x += WARP_SIZE


# ---------------------------------------------------------------------------------- bottom-up
@cuda.jit(device=True, inline="always")
def test_pair(fronts, cur, pair, acc, instrument):
    """AND one adjacency pair (word << 32 | mask) with the frontier bitmap row at cur: the lowest
    in-neighbour in the frontier, or -1."""
    m = uint32(pair & LOW32)
    wd = int64(pair >> SHIFT32)
    f = fronts[cur + wd] & m
    if instrument:
        acc[L.A_TESTS] += (int64(1) << L.TESTS_SHIFT) + cuda.popc(f)
        acc[L.A_EDGES] += cuda.popc(m)
    if f == uint32(0):
        return int32(-1)
    return int32(wd * WARP_SIZE + lowest_bit(f))


@cuda.jit(device=True, inline="always")
def _head(g, vis, v):
    """v's first pair if v is unvisited (a coalesced load over the warp), else 0."""
    if (vis >> uint32(v & 31)) & uint32(1) == uint32(0):
        return g.head[uidx(v)]
    return uint64(0)


@cuda.jit(device=True, inline="always")
def _and(fronts, cur, pair):
    """A pair's AND with the frontier bitmap row at cur (0 for the empty pair 0)."""
    return fronts[uidx(cur + int64(pair >> SHIFT32))] & uint32(pair & LOW32)


@cuda.jit(device=True, inline="always")
def _count(n, pair, f):
    """Tally of the pairs a lane tested (pairs, frontier in-neighbours they showed, in-edges they
    cover) in 32-bit registers, for _tally: 64-bit additions a pair cost the instrumented search
    a sixth of its time."""
    if pair != uint64(0):
        return n[0] + int32(1), n[1] + int32(cuda.popc(f)), n[2] + int32(cuda.popc(uint32(pair & LOW32)))
    return n


@cuda.jit(device=True, inline="always")
def _tally(acc, n):
    acc[L.A_TESTS] += (int64(n[0]) << L.TESTS_SHIFT) + int64(n[1])
    acc[L.A_EDGES] += int64(n[2])


@cuda.jit(device=True, inline="always")
def _parent(pair, f):
    return int32(int64(pair >> SHIFT32) * WARP_SIZE + lowest_bit(f))


@cuda.jit(device=True)
def _after_head(g, p, fr, cur, vis, v, first, f, acc, instrument):
    """An unvisited vertex's lane, given its first pair and that pair's AND with the frontier f (the
    frontier bitmap row fr[cur:]):
    (parent or -1, next pair, end of its pairs), after up to `solo` pairs in all, four at a time
    (their loads, then their frontier words, in flight together)."""
    par = int32(-1)
    e = int64(0)
    end = int64(0)
    if (vis >> uint32(v & 31)) & uint32(1) == uint32(0) and first != uint64(0):
        n = _count((int32(0), int32(0), int32(0)), first, f)
        if f != uint32(0):
            par = _parent(first, f)
        else:
            e = g.pair_offsets[uidx(v)] + 1
            end = g.pair_offsets[uidx(v + 1)]
            lim = min(end, e + p.solo - 1)
            while e < lim:
                p0 = g.pairs[uidx(e)]
                p1 = g.pairs[uidx(e + 1)] if e + 1 < lim else uint64(0)
                p2 = g.pairs[uidx(e + 2)] if e + 2 < lim else uint64(0)
                p3 = g.pairs[uidx(e + 3)] if e + 3 < lim else uint64(0)
                f0 = _and(fr, cur, p0)
                f1 = _and(fr, cur, p1)
                f2 = _and(fr, cur, p2)
                f3 = _and(fr, cur, p3)
                if instrument:  # all four were tested
                    n = _count(_count(_count(_count(n, p0, f0), p1, f1), p2, f2), p3, f3)
                if f0 != uint32(0):
                    par = _parent(p0, f0)
                elif f1 != uint32(0):
                    par = _parent(p1, f1)
                elif f2 != uint32(0):
                    par = _parent(p2, f2)
                elif f3 != uint32(0):
                    par = _parent(p3, f3)
                e = min(e + 4, lim)
                if par >= 0:
                    break
        if instrument:
            _tally(acc, n)
    return par, e, end


@cuda.jit(device=True)
def _finish_word(g, s, bits, lv1, w, vis, found_state, acc, instrument):
    """The rest of one word's long lists by the whole warp (32 pairs a round, up to the first hit),
    then its found vertices: one store a word into visited (the warp owns it) and into the cleared
    row nb, dist and parent. Collective."""
    fr, cur, nb, visited = bits
    par, e, end = found_state
    lane = cuda.laneid
    todo = int64(cuda.ballot_sync(FULL_MASK, par < 0 and e < end)) & 0xFFFFFFFF
    while todo != 0:  # warp-uniform
        lead = lowest_bit(todo)
        todo &= todo - 1
        lb = cuda.shfl_sync(FULL_MASK, e, lead)
        le = cuda.shfl_sync(FULL_MASK, end, lead)
        hit = int32(-1)
        while lb < le:
            k = lb + lane
            q = int32(-1)
            if k < le:
                q = test_pair(fr, cur, g.pairs[k], acc, instrument)
            hits = cuda.ballot_sync(FULL_MASK, q >= 0)
            if hits != 0:
                hit = cuda.shfl_sync(FULL_MASK, q, lowest_bit(hits))
                break
            lb += WARP_SIZE
        if lane == lead:
            par = hit
    found = cuda.ballot_sync(FULL_MASK, par >= 0)
    if instrument and lane == 0:
        acc[L.A_CHECKED] += cuda.popc(~vis)  # words past n_pull come in as visited
    if found != 0:
        if lane == 0:
            visited[w] = vis | uint32(found)
            fr[nb + w] = uint32(found)
        if par >= 0:
            v = w * WARP_SIZE + lane
            s.dist[v] = lv1
            s.parent[v] = par
            acc[L.A_FOUND] += 1


@cuda.jit(device=True)
def bottom_up(g, s, p, bits, lv1, me, team, acc, instrument):
    """A bottom-up level over the team, on bits = (fr, cur, nb, visited): the frontier bitmap row
    fr[cur:], the next one fr[nb:] (clear) and the visited bitmap (global memory, or a block's
    shared copies). Each warp takes every warps-th word of the visited bitmap, up to 32 with one
    load, and goes through those with unvisited vertices (0..n_pull-1),
    two at a time so that their loads are in flight together; a vertex's lane tests its first pairs
    alone (_after_head), its warp the rest of a long list. The parent is the frontier in-neighbour
    of lowest number. Collective."""
    fr, cur = bits[0], bits[1]
    lane = cuda.laneid
    words = (p.n_pull + WARP_SIZE - 1) // WARP_SIZE
    warps = team // WARP_SIZE
    wid = me // WARP_SIZE
    # Words dealt round the warps (word w to warp w % warps): each warp's words are spread over the
    # whole numbering, so the costly ones (a degree order's middle, say) are shared evenly, and no
    # warp has more than one word more than another (the level ends with its slowest warp).
    k0 = int64(0)
    while wid + k0 * warps < words:  # warp-uniform
        wi = wid + (k0 + lane) * warps
        mine = uint32(0xFFFFFFFF)
        if wi < words:
            mine = bits[3][wi]
            tail = p.n_pull - wi * WARP_SIZE
            if tail < WARP_SIZE:  # vertices from n_pull on never pull: as if visited
                mine |= ~((uint32(1) << uint32(tail)) - uint32(1))
        todo = int64(cuda.ballot_sync(FULL_MASK, mine != uint32(0xFFFFFFFF))) & 0xFFFFFFFF
        while todo != 0:  # warp-uniform
            j = lowest_bit(todo)
            todo &= todo - 1
            j2 = int32(-1)
            if todo != 0:
                j2 = lowest_bit(todo)
                todo &= todo - 1
            vis = uint32(cuda.shfl_sync(FULL_MASK, int64(mine), j))  # shuffles move int32/int64 only
            vis2 = uint32(cuda.shfl_sync(FULL_MASK, int64(mine), max(j2, 0)))
            if j2 < 0:
                vis2 = uint32(0xFFFFFFFF)
            w = wid + (k0 + j) * warps
            w2 = wid + (k0 + max(j2, 0)) * warps
            va = w * WARP_SIZE + lane
            vb = w2 * WARP_SIZE + lane
            # Both words' first pairs, then both frontier words: four loads, two round trips.
            ha = _head(g, vis, va)
            hb = _head(g, vis2, vb)
            fa = fr[cur + int64(ha >> SHIFT32)] & uint32(ha & LOW32)
            fb = fr[cur + int64(hb >> SHIFT32)] & uint32(hb & LOW32)
            a = _after_head(g, p, fr, cur, vis, va, ha, fa, acc, instrument)
            b = _after_head(g, p, fr, cur, vis2, vb, hb, fb, acc, instrument)
            _finish_word(g, s, bits, lv1, w, vis, a, acc, instrument)
            if j2 >= 0:
                _finish_word(g, s, bits, lv1, w2, vis2, b, acc, instrument)
        k0 += WARP_SIZE


# ---------------------------------------------------------------------------------- frontier forms
@cuda.jit(device=True)
def clear_row(fronts, base, words, me, team):
    i = me
    while i < words:
        fronts[base + i] = 0
        i += team


@cuda.jit(device=True)
def queue_to_bits(src, size, fronts, base, me, team):
    """Set the bit of every queued vertex in the (cleared) row at base."""
    i = me
    while i < size:
        u = src[i]
        cuda.atomic.or_(fronts, base + (u >> 5), uint32(1) << uint32(u & 31))
        i += team


@cuda.jit(device=True)
def bits_to_queue(fronts, base, words, out, tail, at, me, team):
    """Every vertex whose bit is set in the row at base into the queue out = (shared, cap, glob)
    (its tail at tail[at]): entries below cap into shared memory, the others into glob after them
    (`entry` reads them so); a lane a word, one atomic a warp. Collective."""
    shq, cap, gq = out
    lane = cuda.laneid
    i = me
    while i - lane < words:  # warp-uniform
        word = uint32(0)
        if i < words:
            word = fronts[base + i]
        excl, total = warp_exclusive_scan_total(int32(cuda.popc(word)))
        at0 = int64(0)
        if lane == 0 and total > 0:
            at0 = int64(cuda.atomic.add(tail, at, total))
        pos = cuda.shfl_sync(FULL_MASK, at0, 0) + excl
        while word != uint32(0):
            v = int32(i * WARP_SIZE + lowest_bit(word))
            if pos < cap:
                shq[pos] = v
            else:
                gq[pos - cap] = v
            pos += 1
            word &= word - uint32(1)
        i += team


# ---------------------------------------------------------------------------------- the level's end
@cuda.jit(device=True)
def sleep_until_narrow_done(ctr, level):
    """A block other than 0, while block 0 runs narrow levels from `level` on: its thread 0 sleeps
    between reads of where they ended, instead of spinning in the grid barrier (130 SMs polling
    one address slow block 0's memory traffic); the block then meets block 0 at the barrier."""
    if cuda.threadIdx.x == 0:
        while cuda.atomic.max(ctr, L.NARROW_DONE, 0) <= level:
            cuda.nanosleep(1000)
    cuda.syncthreads()


@cuda.jit(device=True)
def save_state(st, ctr, at):
    for f in range(L.NUM_T):
        ctr[at + f] = st[f]


@cuda.jit(device=True)
def load_state(st, ctr, at):
    for f in range(L.NUM_T):
        st[f] = ctr[at + f]


@cuda.jit(device=True)
def level_counts(res, bu):
    """A level's counts for next_level from its slot res (a slice of the global counts, or the
    cluster address of a cluster's: kernels.cluster.counter_load): (size of the next frontier, the
    m_f the rule sees, the edges examined, tests, vertices checked, heavy vertices), every field
    loaded before any is used, so that the loads are in flight together."""
    found = counter_load(res, L.A_FOUND)
    nxt = counter_load(res, L.C_NEXT)
    mf = counter_load(res, L.A_MF)
    examined = counter_load(res, L.A_EXAMINED)
    edges = counter_load(res, L.A_EDGES)
    tests = counter_load(res, L.A_TESTS)
    checked = counter_load(res, L.A_CHECKED)
    hv = counter_load(res, L.C_HEAVY)
    if bu:  # GAP: after a bottom-up level the rule sees m_f = 1
        return found, int64(1), edges, tests, checked, int64(0)
    return nxt, mf, examined, tests, checked, hv >> L.HEAVY_SHIFT


@cuda.jit(device=True)
def next_level(st, counts, p, rows, leader, narrow):
    """After a level, by each block's thread 0 (the same numbers give the same decisions in every
    block): the level's row of the log (block 0's thread 0, into device memory; `publish` copies
    rows out at most every PUBLISH_NS and at the end), then the next level's state. counts: the
    level's numbers (level_counts)."""
    nsize, m_f, examined, tests, checked, heavy_count = counts
    bu = st[L.T_BU] != 0
    size = st[L.T_SIZE]
    nlev = st[L.T_NLEV]
    next_bu, next_narrow, m_u = decide(bu, m_f, st[L.T_MU_LEFT], nsize, size, p.n, p.alpha, p.beta,
                                       p.narrow_edges, p.small != 0)
    stop = L.STOP_DONE if nsize == 0 else L.STOP_FULL if nlev + 1 >= p.log_rows else L.STOP_NO
    if leader:
        r = nlev * L.LOG_FIELDS
        rows[r + L.R_LEVEL] = st[L.T_LEVEL]
        rows[r + L.R_FRONTIER] = size
        rows[r + L.R_BU] = 1 if bu else 0
        rows[r + L.R_NARROW] = 1 if narrow else 0
        rows[r + L.R_CONVERTED] = st[L.T_CONV]
        rows[r + L.R_EXAMINED] = examined
        rows[r + L.R_WORDS] = tests >> L.TESTS_SHIFT
        rows[r + L.R_CANDS] = tests & ((int64(1) << L.TESTS_SHIFT) - 1)
        rows[r + L.R_CHECKED] = checked
        rows[r + L.R_NEXT] = nsize
        rows[r + L.R_MF] = st[L.T_MF]
        rows[r + L.R_MU] = st[L.T_MU]
        rows[r + L.R_HEAVY] = heavy_count
        rows[r + L.R_CLOCK] = clock64()
        now = globaltimer()
        rows[r + L.R_GT] = now
        if stop == L.STOP_NO and now - st[L.T_PUB] >= L.PUBLISH_NS:  # the host reads the last rows itself
            st[L.T_PUBLISH] = 1
            st[L.T_PUB] = now
    st[L.T_MF] = m_f
    st[L.T_MU] = st[L.T_MU_LEFT]
    st[L.T_MU_LEFT] = m_u
    st[L.T_LEVEL] += 1
    st[L.T_PREV] = size
    st[L.T_SIZE] = nsize
    st[L.T_BU] = 1 if next_bu else 0
    if bu:
        st[L.T_PULLED] = 1
    st[L.T_NARROW] = 1 if next_narrow else 0
    if not bu:
        st[L.T_QCUR] = 1 - st[L.T_QCUR]  # the next queue is the current one now
    st[L.T_QUEUE] = 0 if bu else 1
    st[L.T_BITS] = 0 if narrow and p.small == 0 else 1  # large graphs' narrow levels keep no bitmap
    st[L.T_CONV] = 0
    st[L.T_NLEV] = nlev + 1
    st[L.T_STOP] = stop


@cuda.jit(device=True)
def mark(rows, nlev, k, t0):
    """A timing build's phase mark k (block 0's thread 0): cycles since the level began (t0[0]) into
    the row of log level nlev (the level being run, or the one just logged)."""
    rows[nlev * L.LOG_FIELDS + L.R_PHASE + k] = clock64() - t0[0]


@cuda.jit(device=True)
def publish(st, rows, log, now):
    """Block 0 (the whole block; every thread with the same `now`): when `now`, the rows logged since
    the last publication into the log in host memory (a field a thread), a system-wide fence, then
    the count the host reads."""
    tid = cuda.threadIdx.x
    if now:
        lo = st[L.T_PUBLISHED] * L.LOG_FIELDS
        hi = st[L.T_NLEV] * L.LOG_FIELDS
        i = lo + tid
        while i < hi:
            log[L.H_SIZE + i] = rows[i]
            i += cuda.blockDim.x
        cuda.threadfence_system()  # each thread's rows before the count that shows them
        cuda.syncthreads()
        if tid == 0:
            log[L.H_PUBLISHED] = st[L.T_NLEV]
            st[L.T_PUBLISHED] = st[L.T_NLEV]
            st[L.T_PUBLISH] = 0
        cuda.syncthreads()
