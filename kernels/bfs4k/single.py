"""The single-block kernel (§5.5, single-block): one block running level after level inside one
launch while the frontier stays below F_Threshold, and its level machinery (the frontier's rows
and statistics, the visited bitmap, the per-level log, the exit)."""
import functools

from numba import cuda, int32, int64
from numba.core import config

from ..args import Graph, Heavy, QueuePair, Stamps, Tree
from ..expand import NUM_ACC, expand_edge_discover, expand_virtual_warp
from ..frontier_ops import no_cluster
from ..histogram import count_degrees
from ..primitives import FULL_MASK, clock64, uidx, warp_max, warp_sum
from .args import SingleKnobs, SingleOut
from .device import _acc_counts, _degree_bin, _use_edge_discover, _virtual_warp_size
from .layout import (CULL_ENTRIES, DEGREE_BINS, DUP_CONFLICTS, DUP_DETECTED, DUP_GENERATED, EXT_ROUNDS, COALESCED,
                     L_BINARY, L_CLOCK, L_COAL, L_CONF, L_DET, L_ED, L_EDGES, L_EXT, L_FOUND, L_FRONTIER, L_GEN,
                     L_NEXT, L_OVERFLOW, L_UNDET, L_WARP, NEXT_SIZE, OVERFLOW, QLEN, R_HEAVY, ROW,
                     S_CLOCK_END, S_CLOCK_START, S_FSIZE, S_IN_A, S_LAST, S_LEVELS, S_LOGGED, UNDETECTED, WARP_CULL,
                     register_cap)


@cuda.jit(device=True)
def _load_visited(bits, base, words, dist, shift, rank):
    """bits[base + i], bit j = vertex 32 g + j is visited (dist != -1), g = i << shift | rank (the
    cluster kernel's slice of the bitmap: word g lives in block g mod 2**shift; shift = rank = 0:
    the whole bitmap): one ballot per word. Each warp has four words' loads in flight at a time
    (a |V| of 1 M is 31,250 words for one SM). Collective; the caller's barrier publishes it."""
    last = dist.shape[0] - 1
    lane = cuda.laneid
    stride = (cuda.blockDim.x >> 5) * 4
    i = (cuda.threadIdx.x >> 5) * 4
    while i < words:
        v0 = ((i << shift) | rank) * 32 + lane
        v1 = (((i + 1) << shift) | rank) * 32 + lane
        v2 = (((i + 2) << shift) | rank) * 32 + lane
        v3 = (((i + 3) << shift) | rank) * 32 + lane
        # Unconditional loads (indices clamped), tested after: all four are issued back to back.
        d0 = dist[uidx(min(v0, last))]
        d1 = dist[uidx(min(v1, last))]
        d2 = dist[uidx(min(v2, last))]
        d3 = dist[uidx(min(v3, last))]
        b0 = cuda.ballot_sync(FULL_MASK, v0 <= last and d0 != -1)
        b1 = cuda.ballot_sync(FULL_MASK, v1 <= last and d1 != -1)
        b2 = cuda.ballot_sync(FULL_MASK, v2 <= last and d2 != -1)
        b3 = cuda.ballot_sync(FULL_MASK, v3 <= last and d3 != -1)
        if lane == 0:
            bits[uidx(base + i)] = int32(b0)
            if i + 1 < words:
                bits[uidx(base + i + 1)] = int32(b1)
            if i + 2 < words:
                bits[uidx(base + i + 2)] = int32(b2)
            if i + 3 < words:
                bits[uidx(base + i + 3)] = int32(b3)
        i += stride


@cuda.jit(device=True)
def _load_rows(sh32, f_off, fsize, offsets, rows64, rb_off, deg_off, heavy_c, min_heavy_degree, wsum, wmax, r):
    """The level's frontier rows, loaded once at its start: each entry's first edge (rows64[rb_off + i])
    and degree (sh32[deg_off + i]) go beside it in shared memory, where the level's loops read
    them; the warp's degree sum goes to its slot in wsum[r], the frontier's highest degree to
    wmax[r, 0] (an atomic max: the caller clears it), with per-bin counts of heavy vertices (bins of
    degree >= min_heavy_degree) in heavy_c: what the level's decisions (§5.1-§5.4, the heavy-vertex exit)
    need, after one block barrier. A thread takes entries i and i + B together, so both rows' loads
    are in flight at once. Collective."""
    lane = cuda.laneid
    B = cuda.blockDim.x
    total = int64(0)
    top = int32(0)
    i = cuda.threadIdx.x
    while i - lane < fsize:  # warp-uniform
        j = i + B
        u0 = sh32[uidx(f_off + i)] if i < fsize else 0
        u1 = sh32[uidx(f_off + j)] if j < fsize else 0
        b0 = offsets[uidx(u0)]
        e0 = offsets[uidx(u0 + 1)]
        b1 = offsets[uidx(u1)]
        e1 = offsets[uidx(u1 + 1)]
        if i < fsize:
            total += _row_entry(sh32, rows64, rb_off, deg_off, i, b0, e0 - b0, heavy_c, min_heavy_degree)
            top = max(top, int32(e0 - b0))
        if j < fsize:
            total += _row_entry(sh32, rows64, rb_off, deg_off, j, b1, e1 - b1, heavy_c, min_heavy_degree)
            top = max(top, int32(e1 - b1))
        i += B + B
    if not cuda.any_sync(FULL_MASK, total > 0):  # an idle warp (or one of isolated vertices): no reductions
        if lane == 0:
            wsum[r, cuda.threadIdx.x >> 5] = 0
        return
    total = warp_sum(total)
    top = warp_max(top)  # a degree: 32 bits, half the shuffles
    if lane == 0:
        wsum[r, cuda.threadIdx.x >> 5] = total
        # One native 32-bit atomic a warp here spares every warp a reduction after the barrier.
        cuda.atomic.max(wmax, (r, 0), top)


@cuda.jit(device=True)
def _row_entry(sh32, rows64, rb_off, deg_off, i, beg, deg, heavy_c, min_heavy_degree):
    rows64[uidx(rb_off + i)] = beg
    sh32[uidx(deg_off + i)] = int32(deg)
    if deg >= min_heavy_degree:
        b = _degree_bin(deg)
        if (int64(1) << b) >= min_heavy_degree:
            cuda.atomic.add(heavy_c, b, int32(1))
    return deg


@cuda.jit(device=True)
def _log_level(log, row, fsize, edges, nsize, cnt, W, ed, binary):
    """A level's row of the single block's log (the cluster form: one of its blocks' rows)."""
    log[row, L_FRONTIER] = fsize
    log[row, L_EDGES] = edges  # every frontier entry's whole row is examined
    log[row, L_FOUND] = nsize + cnt[DUP_DETECTED]  # claims: kept + dropped
    log[row, L_NEXT] = nsize
    log[row, L_GEN] = cnt[DUP_GENERATED]
    log[row, L_DET] = cnt[DUP_DETECTED]
    log[row, L_CONF] = cnt[DUP_CONFLICTS]
    log[row, L_UNDET] = cnt[UNDETECTED]
    log[row, L_WARP] = 32 if ed else W
    log[row, L_ED] = 1 if ed else 0
    log[row, L_BINARY] = 1 if binary else 0
    log[row, L_COAL] = cnt[COALESCED]
    log[row, L_EXT] = cnt[EXT_ROUNDS]
    log[row, L_OVERFLOW] = cnt[OVERFLOW]


@cuda.jit(device=True)
def _leave(state, hist, hist_c, hist_s, offsets, frontier, start, levels, fsize, a_is_in, last, logged):
    """The end of a single-block launch (the cluster form: by block 0): the state the host reads,
    and the degree histogram of the final frontier, frontier[start:start + fsize] (as bfs4k_stats
    counts it), which the host plans the next level from. Collective over the block."""
    tid = cuda.threadIdx.x
    if tid == 0:
        state[S_LEVELS] = levels
        state[S_FSIZE] = fsize
        state[S_IN_A] = 1 if a_is_in else 0
        state[S_LAST] = last
        state[S_LOGGED] = logged
    if tid < DEGREE_BINS:
        hist_c[tid] = 0
        hist_s[tid] = 0
    cuda.syncthreads()
    count_degrees(frontier, start + tid, start + fsize, cuda.blockDim.x, offsets, hist_c, hist_s)
    cuda.syncthreads()
    if tid < DEGREE_BINS:
        hist[tid] = hist_c[tid]
        hist[DEGREE_BINS + tid] = hist_s[tid]
    if tid == 0:
        state[S_CLOCK_END] = clock64()


@cuda.jit(device=True)
def _expand(ed, W, binary, src, ops, q, acc, k7):
    """One level of the single block (or of one block of the cluster form): its frontier entries
    (src: in shared memory, rows beside them), by edge-discover or virtual warps of W lanes; no
    heavy vertices (a frontier holding one went back to the host). Collective over the block."""
    fsize = src[2]
    no_heavy = Heavy(0, 0, src[0], src[0], src[0])
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    if ed:
        wid = tid >> 5
        while wid * 32 < fsize:  # a warp past the frontier's end has no more work
            expand_edge_discover(wid, src, no_heavy, ops, q, acc, False, k7)
            wid = int32(wid + (B >> 5))
        return
    wshift = int32(0)  # W is a power of two: shifts instead of divisions
    while (int32(1) << wshift) < W:
        wshift = int32(wshift + 1)
    # vbase is uniform over the warp (its lanes' virtual warps call the collectives
    # together); a warp whose first virtual warp is past the frontier's end is done.
    vbase = int32(0)
    wfirst = int32((tid & ~31) >> wshift)
    while vbase + wfirst < fsize:
        expand_virtual_warp(int32(vbase + (tid >> wshift)), W, src, no_heavy, ops, q, acc, binary, k7)
        vbase = int32(vbase + (B >> wshift))


@functools.cache
def _single_kernel(instrument: bool, atomic_claim: bool, dedup: int, block_threads: int, shared_visited: bool):
    """The single-block kernel for blocks of at most `block_threads` threads."""
    options = {} if config.ENABLE_CUDASIM else {"max_registers": register_cap(block_threads)}

    @cuda.jit(cache=True, **options)
    def bfs4k_single(graph: Graph, tree: Tree, stamps: Stamps, queues: QueuePair, out: SingleOut,
                     knobs: SingleKnobs):
        """Levels inside one launch of one block while 0 < |F| < F_Threshold (§5.5, single-block).

        Dynamic shared memory: [hash64 table or culling tables: region0_words int32]
        [F_d: f_capacity int32][F_d_new: f_capacity int32][F_d's first edges: f_capacity int64]
        [F_d's degrees: f_capacity int32], then with shared_visited [visited bitmap: bitmap_words
        int32], filled from dist on entry.
        Each level starts by loading its frontier's rows into shared memory (_load_rows): the
        level's decisions come from their statistics, and its loops read them there, so a round's
        dependent global loads are the neighbours only. Every next-frontier entry also goes to global memory, so
        the multi-block kernel can take over the moment the frontier outgrows the block: to the
        queue, or with shared_visited to the visit log `out.visits` (vertex, parent, level; three
        rows of len(visits) // 3 entries, level after level), which bfs4k_commit writes into dist,
        parent and the queue after the block: scattered stores are a quarter of a plain one-block
        BFS of the grid (benchmarks/yardsticks/plain_single_block.py), spread over all SMs they are one
        short launch.
        A frontier holding a heavy vertex (§5.3) also returns to the host: its child grid can only be
        launched from there (Numba has no dynamic parallelism). `out.hist` receives the last frontier's
        degree histogram on exit (the host plans from it). The SM's cycle counter is read as the
        kernel starts, as each level ends (log[:, L_CLOCK]) and as the kernel ends (state); the
        host splits the launch's time between the levels by them. The last warp reads it each
        level: warp 0 leads every level, and a read at each level's start there cost the grid 2.6 %.
        """
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        B = cuda.blockDim.x
        if B > block_threads:  # compiled with registers for block_threads only (the launch would fail)
            return
        offsets, indices = graph
        dist = tree.dist
        qa, qb, in_a, fsize0, out_cap, level0 = queues
        hist, log, state, visits, max_levels = out
        f_threshold, fcap, k1, k2_limit, k3, k4, hmask, k7, region0_words, bm_words = knobs
        table = cuda.shared.array(0, int64)
        sh32 = cuda.shared.array(0, int32)
        cull = sh32
        # F_d and F_d_new as offsets into sh32 (swapping two ints, not two array views, keeps
        # registers free for the level's loop).
        f_off = int32(region0_words)
        fn_off = int32(region0_words + fcap)
        rb_off = int32((region0_words + 2 * fcap) // 2)  # int64 index (region0_words and 2 fcap are even)
        deg_off = int32(region0_words + 4 * fcap)
        bm_off = int32(region0_words + 5 * fcap) if shared_visited else int32(-1)
        rows = cuda.shared.array((3, ROW), int32)
        wsum = cuda.shared.array((3, 32), int64)  # per warp: degree sum of its frontier entries
        wmax = cuda.shared.array((3, 32), int32)  # per warp: their highest degree
        hist_c = cuda.shared.array(DEGREE_BINS, int32)  # the exit histogram (32-bit: native atomics)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        cull_base = (tid // 32) * CULL_ENTRIES
        min_heavy_degree = int64(k3) * B  # §5.3: a child grid of at least one block
        log_cap = int32(visits.shape[0] // 3)
        nocl = no_cluster(offsets, hist_c)
        mode = (atomic_claim, True, cull, bm_off)  # latency-bound: one block
        inst = (instrument, stamps.claimed, stamps.kept)
        filt = (dedup, table, hmask, tid, cull, cull_base)
        logged = int32(0)  # visit log entries of the levels before this one
        last = int32(0)  # where the latest level's entries start in it

        if tid == 0:
            state[S_CLOCK_START] = clock64()
        fsize = int32(fsize0)  # 32-bit level arithmetic: Numba's int64 costs two registers and pairs of instructions
        for i in range(tid, fsize, B):
            sh32[f_off + i] = qa[i] if in_a else qb[i]
        for i in range(tid, 3 * ROW, B):
            rows[i // ROW, i % ROW] = 0
        for i in range(tid, 3 * 32, B):
            wsum[i // 32, i % 32] = 0  # slots of warps the block does not have stay 0
            wmax[i // 32, i % 32] = 0
        if shared_visited:
            _load_visited(sh32, bm_off, bm_words, dist, 0, 0)
        cuda.syncthreads()
        a_is_in = in_a
        level = level0
        acc = cuda.local.array(NUM_ACC, int64)
        q = cuda.local.array((2, QLEN), int32)  # vertices; their parents, for the visit log
        # Loops over the level's work are while loops: Numba's range() with a run-time step divides
        # (a 64-bit division is a long subroutine on the GPU), and this block runs every level.
        r = 0
        while True:
            cnt = rows[r]
            heavy_c = rows[r, R_HEAVY:]
            r_next = r + 1 if r < 2 else 0
            i = tid
            while i < ROW:
                rows[r_next, i] = 0
                i += B
            if tid == 0:
                wmax[r_next, 0] = 0  # read two levels ago; the next level's warps max into it
            if dedup == WARP_CULL:  # each warp's own table: no block barrier needed
                for i in range(lane, CULL_ENTRIES, 32):
                    cull[cull_base + i] = -1
                cuda.syncwarp(FULL_MASK)
            for i in range(NUM_ACC):
                acc[i] = 0
            # Per-level decisions (§5.2, §5.4, §5.1) from the same formulas the host policy uses;
            # those of |F| alone are worked out while the rows' loads are in flight.
            W = int32(_virtual_warp_size(B, fsize, k1))
            ed = _use_edge_discover(B, fsize, k4)
            _load_rows(sh32, f_off, fsize, offsets, table, rb_off, deg_off, heavy_c, min_heavy_degree, wsum, wmax, r)
            cuda.syncthreads()  # the rows and the frontier's statistics are complete
            top = _degree_bin(wmax[r, 0])  # a bin: >= 0
            # A frontier holding a heavy vertex (rules.has_heavy: only its top bin matters) goes back
            # to the host, which launches its child grid. The host checked the launch's first one.
            if level > level0 and (int64(1) << top) >= min_heavy_degree and heavy_c[top] <= k2_limit:
                break
            binary = (not ed) and fsize * W <= B and (int64(1) << (top + 1)) - 1 <= W
            edges = int64(0)
            if tid < 32:  # only the log needs the frontier's degree sum: one warp reduces it
                edges = warp_sum(wsum[r, lane])
            dst = qb if a_is_in else qa
            out_n = out_cap
            log_base = int32(-1)
            if shared_visited:
                dst = visits
                out_n = log_cap
                log_base = logged
            nxt = int32(level + 1)
            src = (sh32, f_off, fsize, offsets, indices, table, rb_off, deg_off)
            ops = (nxt, tree, mode, inst, filt, (dst, out_n, cnt, NEXT_SIZE, OVERFLOW, sh32, fn_off, fcap, log_base),
                   nocl)
            _expand(ed, W, binary, src, ops, q, acc, k7)
            _acc_counts(acc, cnt, 0)
            cuda.syncthreads()  # F_d_new and the level's counters are complete
            if tid == B - 32:
                log[level - level0, L_CLOCK] = clock64()

            nsize = cnt[NEXT_SIZE]
            if tid == 0:
                _log_level(log, level - level0, fsize, edges, nsize, cnt, W, ed, binary)
            last = logged
            logged = int32(logged + nsize)
            level += 1
            r = r_next
            a_is_in = not a_is_in
            fsize = nsize
            if nsize == 0 or nsize >= f_threshold or level - level0 >= max_levels or cnt[OVERFLOW] > 0:
                break
            f_off, fn_off = fn_off, f_off
        if shared_visited:
            _leave(state, hist, hist_c, hist_s, offsets, visits, last, level - level0, fsize, a_is_in, last, logged)
        else:
            _leave(state, hist, hist_c, hist_s, offsets, qa if a_is_in else qb, 0, level - level0, fsize, a_is_in,
                   0, 0)

    return bfs4k_single

