"""BFS-4K kernels (Busato & Bombieri, TPDS 2015, §4-§6) in Numba CUDA.

One level of frontier propagation is: take frontier vertices (dynamic virtual warps, §5.2, or
edge-discover, §5.4), claim unvisited neighbours (the paper's benign race, or compare-and-swap),
filter duplicates (hash64, §6, or Merrill's warp culling), keep survivors in per-thread local
queues and write them to the next frontier with warp prefix sums (shuffle or ballot/popc, §5.1),
coalesced when the warp's shortest queue is long enough (§5.6).

Kernels:
  bfs4k_multi    one level per launch, many blocks, per-block hash table (§5.5, multi-block).
  bfs4k_heavy    the heavy-vertex "child grid" (§5.3). Numba cannot launch kernels from device
                 code (no dynamic parallelism), so the multi-block kernel queues heavy vertices and
                 the host launches this grid right after it in the same level, sized by the
                 paper's rule #Blocks = sum(degree) / (K3 x block size).
  bfs4k_stats    after a multi-block level: the next frontier's degree histogram, which the host
                 plans the next level from (one coalesced pass over the queue).
  bfs4k_single   one block running level after level inside one launch while the frontier stays
                 below F_Threshold (§5.5, single-block), frontier and hash table in shared memory
                 (and, with knob visited='shared', the visited flags: an extension of the paper);
                 a frontier with a heavy vertex goes back to the host, where its child grid
                 can be launched.
  bfs4k_cluster  the single-block kernel on a thread-block cluster of C SMs (knob cluster, an
                 extension for compute capability 9.0+): one cluster barrier a level, the visited
                 bitmap split over the blocks' shared memory, the same decisions in every block.
  bfs4k_commit   after a single-block launch with visited='shared': writes its visit log into
                 dist and parent over all SMs (the block logs its claims, coalesced).

Every warp-level call is made by all 32 lanes (loops run while any lane has work), which is
what the shuffles need on the GPU and what kernels.sim checks under the simulator.
"""
import functools
from typing import NamedTuple

from numba import cuda, int32, int64, uint32, uint64
from numba.core import config

from . import rules
from .common import (COALESCED, DUP_CONFLICTS, DUP_DETECTED, DUP_GENERATED, EXT_ROUNDS, HEAVY,
                     NEXT_SIZE, NUM_COUNTERS, OVERFLOW, UNDETECTED)
from .cluster import (cluster_add, cluster_load, cluster_map, cluster_or, cluster_rank, cluster_store, cluster_sync,
                      smem_addr)
from .primitives import clock64, warp_inclusive_scan, warp_max, warp_min, warp_search_owner, warp_sum

FULL = 0xFFFFFFFF
DEGREE_BINS = rules.DEGREE_BINS
QLEN = 16  # local queue length (registers/local memory per thread)
NO_DEDUP, HASH64, WARP_CULL = 0, 1, 2
CULL_ENTRIES = 128  # Merrill et al.: 128-entry table per warp

# Per-thread accumulators (a local array, so device functions can update them).
A_GEN, A_DET, A_CONF, A_UNDET, A_EXT, A_COAL = 0, 1, 2, 3, 4, 5
NUM_ACC = 6
# The cluster kernel's claimers also sum the degrees of what they claim and keep the largest:
# the next frontier's statistics, ready when the level's cluster barrier has passed.
A_EDGES, A_TOP = 6, 7
NUM_ACC_CLUSTER = 8
# Degree sums are kept per bin only from this bin up (the heavy path's bins, which need them);
# lighter vertices' degrees are summed per lane and reported together in bin 0.
SUM_BIN = 5

# The multi-block and heavy kernels may run in blocks of 1024 threads (the largest K6), and
# 1024 threads x 64 registers fill the register file; the simulator has no such option.
_OPTIONS = {} if config.ENABLE_CUDASIM else {"max_registers": 64}


def register_cap(block_threads: int) -> int:
    """Registers a thread may use when `block_threads` threads share one SM's 65,536 (at most 255):
    the single block compiled for 512 threads gets 128 and stops spilling its level loop."""
    return min(255, 65536 // block_threads // 8 * 8)

_degree_bin = cuda.jit(device=True)(rules.degree_bin)
_virtual_warp_size = cuda.jit(device=True)(rules.virtual_warp_size)
_use_edge_discover = cuda.jit(device=True)(rules.use_edge_discover)


# ------------------------------------------------------------------------------ warp helpers
@cuda.jit(device=True)
def _u(i):
    """An index known to be >= 0, as unsigned: Numba then skips the negative-index wraparound
    (a compare, a select and a 64-bit add on every access of the hot loops)."""
    return uint64(i)


@cuda.jit(device=True)
def _popc(x):
    return cuda.popc(uint32(x))


# ------------------------------------------------------------------------------ visiting rule
@cuda.jit(device=True)
def _mark(found, v, u, nxt, dist, parent):
    """Level and parent of a vertex this lane claimed without compare-and-swap."""
    if found:
        dist[_u(v)] = nxt
        parent[_u(v)] = u


@cuda.jit(device=True)
def _claim(has_edge, v, u, nxt, dist, parent, atomic_claim, latency_bound, bitmap, bm_off, cl):
    """The visiting rule. Collective: all lanes of the warp call it once per round.

    bm_off >= 0: the visited flags are bits of bitmap[bm_off:] (the single block's shared memory,
    knob visited='shared'), and the claim's level and parent are written later, from the visit
    log (see bfs4k_commit); -1: they are dist[v] != -1, written here. cl: the cluster kernel's
    context (see _no_cluster; cl[0] = -1 everywhere else).
    Returns (this lane claimed v, some lane of the warp claimed something).
    """
    if bm_off >= 0:
        found = _claim_bit(has_edge, v, bitmap, bm_off, cl)  # level and parent go to the visit log
        return found, cuda.any_sync(FULL, found)
    if atomic_claim:
        # Reading first spares the atomic unit most compare-and-swaps (most neighbours are
        # visited); a latency-bound caller (the single block) saves the read's round trip instead.
        found = has_edge and (latency_bound or dist[_u(v)] == -1) and cuda.atomic.cas(dist, _u(v), -1, nxt) == -1
        if found:
            parent[_u(v)] = u
        return found, cuda.any_sync(FULL, found)
    # The paper's rule: read, then write. The vote is the lock step: every lane has read before
    # any writes, so lanes (and other warps) that find v unvisited all enqueue it: duplicates.
    # Each writes the same distance and a valid parent (its own frontier vertex).
    unvisited = has_edge and dist[_u(v)] == -1
    anyone = cuda.any_sync(FULL, unvisited)
    _mark(unvisited, v, u, nxt, dist, parent)
    return unvisited, anyone


@cuda.jit(device=True)
def _no_cluster(offsets, arr):
    """The cluster context `cl` of every kernel but bfs4k_cluster: cl[0] = -1, the rest (of the
    cluster kernel's types) never read; a constant, so the cluster paths compile away. In
    bfs4k_cluster: (log2 of its blocks; shared-window addresses of the bitmap slice, of block 0's
    next-frontier counter (mapped), of F_d_new, its first edges and its degrees; offsets; the
    heavy-vertex degree K3 x block size; the level's counter row)."""
    return (int32(-1), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), offsets, int64(0), arr)


@cuda.jit(device=True)
def _claim_bit(has_edge, v, bitmap, bm_off, cl):
    """Test-and-set v's bit in the shared visited bitmap: True for the one lane that set it. In a
    cluster (cl[0] = log2 of its blocks) word w of the bitmap lives in block w mod C."""
    if not has_edge:
        return False
    bit = int32(uint32(1) << uint32(v & 31))
    if cl[0] >= 0:
        w = v >> 5
        old = cluster_or(cluster_map(cl[1] + 4 * (w >> cl[0]), w & ((1 << cl[0]) - 1)), bit)
    else:
        old = cuda.atomic.or_(bitmap, _u(bm_off + (v >> 5)), bit)
    return (old & bit) == 0


@cuda.jit(device=True)
def _hash64(table, hmask, has, v, tid):
    """§6, Fig. 11: store merge(v, thread_id) at hash(v), read it back. 0 valid, 1 duplicate, 2 conflict.

    Collective. The lanes of a warp all store before any reads back, as in lock step, which is
    what lets the paper classify duplicates made inside a warp. Atomics make the store and the
    read real shared-memory accesses (a plain load could be forwarded from the thread's own
    store). The last writer of v always reads itself back, so no vertex loses every copy.
    """
    h = v & hmask
    if has:
        cuda.atomic.exch(table, h, (int64(v) << 32) | int64(tid))
    cuda.syncwarp(FULL)
    if not has:
        return 0
    rec = cuda.atomic.add(table, h, int64(0))
    if int32(rec >> 32) != v:
        return 2
    if int32(rec & 0xFFFFFFFF) != tid:
        return 1
    return 0


@cuda.jit(device=True)
def _warp_cull(cull, base, has, v, lane):
    """Merrill et al.'s warp culling: per-warp 128-entry table, two rounds of vie. Collective.

    0 keep, 1 duplicate, 2 conflict (another vertex holds the slot).
    """
    h = base + (v & (CULL_ENTRIES - 1))
    if has:
        cull[h] = v
    cuda.syncwarp(FULL)
    won = has and cull[h] == v
    cuda.syncwarp(FULL)
    if won:
        cull[h] = lane
    cuda.syncwarp(FULL)
    result = 0
    if has:
        if not won:
            result = 2
        elif cull[h] != lane:
            result = 1
    cuda.syncwarp(FULL)
    return result


@cuda.jit(device=True)
def _visit(has_edge, v, u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask,
           tid, cull, cull_base, lane, q, qn, acc, single, bm_off, cl):
    """Claim, count, filter and queue one candidate per lane. Called by all lanes of the warp.

    single: the caller is the single block (latency-bound: see _claim). bm_off: see _claim (the
    bitmap is `cull`, the kernel's dynamic shared int32 memory).
    """
    found, anyone = _claim(has_edge, v, u, nxt, dist, parent, atomic_claim, single, cull, bm_off, cl)
    if not anyone:
        return qn  # warp-uniform: most rounds of late levels find only visited vertices
    return _visit_claimed(found, v, u, nxt, stamp, stamp2, instrument, dedup, table, hmask, tid, cull, cull_base,
                          lane, q, qn, acc, bm_off)


@cuda.jit(device=True)
def _claim_pair(has_a, va, has_b, vb, u, nxt, dist, parent, atomic_claim, bitmap, bm_off, cl):
    """The visiting rule for two candidates of each lane, their memory accesses issued back to
    back: the second is in flight before the first returns (the single block is latency-bound).
    Collective. Returns (lane claimed va, lane claimed vb, some lane claimed something)."""
    if bm_off >= 0:
        fa = _claim_bit(has_a, va, bitmap, bm_off, cl)  # level and parent go to the visit log
        fb = _claim_bit(has_b, vb, bitmap, bm_off, cl)
        return fa, fb, cuda.any_sync(FULL, fa or fb)
    if atomic_claim:
        ra = int32(0)
        rb = int32(0)
        if has_a:
            ra = cuda.atomic.cas(dist, _u(va), -1, nxt)
        if has_b:
            rb = cuda.atomic.cas(dist, _u(vb), -1, nxt)
        fa = has_a and ra == -1
        fb = has_b and rb == -1
        if fa:
            parent[_u(va)] = u
        if fb:
            parent[_u(vb)] = u
        return fa, fb, cuda.any_sync(FULL, fa or fb)
    # The paper's rule, as in _claim: every lane reads both before any lane writes.
    da = int32(0)
    db = int32(0)
    if has_a:
        da = dist[_u(va)]
    if has_b:
        db = dist[_u(vb)]
    fa = has_a and da == -1
    fb = has_b and db == -1
    anyone = cuda.any_sync(FULL, fa or fb)
    _mark(fa, va, u, nxt, dist, parent)
    _mark(fb, vb, u, nxt, dist, parent)
    return fa, fb, anyone


@cuda.jit(device=True)
def _visit_pair(has_a, va, has_b, vb, u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup,
                table, hmask, tid, cull, cull_base, lane, q, qn, acc, bm_off, cl):
    """_visit for two candidates per lane (the single block): both claims are in flight together.
    Collective; the queue gains up to two entries."""
    fa, fb, anyone = _claim_pair(has_a, va, has_b, vb, u, nxt, dist, parent, atomic_claim, cull, bm_off, cl)
    if not anyone:
        return qn
    qn = _visit_claimed(fa, va, u, nxt, stamp, stamp2, instrument, dedup, table, hmask, tid, cull, cull_base,
                        lane, q, qn, acc, bm_off)
    return _visit_claimed(fb, vb, u, nxt, stamp, stamp2, instrument, dedup, table, hmask, tid, cull, cull_base,
                          lane, q, qn, acc, bm_off)


@cuda.jit(device=True)
def _visit_claimed(found, v, u, nxt, stamp, stamp2, instrument, dedup, table, hmask, tid, cull, cull_base,
                   lane, q, qn, acc, bm_off):
    """What follows a claim: duplicate ground truth, the filter, the local queue (q[0]: vertices;
    q[1], when bm_off >= 0: their parents, for the visit log). Collective."""
    if found:
        if instrument and cuda.atomic.exch(stamp, v, nxt) == nxt:
            acc[A_GEN] += 1  # ground truth: v was already claimed in this level
    keep = found
    if dedup == HASH64:
        r = _hash64(table, hmask, found, v, tid)
        if found:
            if r == 1:
                keep = False
                acc[A_DET] += 1
            elif r == 2:
                acc[A_CONF] += 1
    elif dedup == WARP_CULL:
        r = _warp_cull(cull, cull_base, found, v, lane)
        if r == 1:
            keep = False
            acc[A_DET] += 1
        elif r == 2:
            acc[A_CONF] += 1
    if keep:
        if instrument and cuda.atomic.exch(stamp2, v, nxt) == nxt:
            acc[A_UNDET] += 1  # a copy of v already passed the filter
        q[0, qn] = v
        if bm_off >= 0:
            q[1, qn] = u
        qn = int32(qn + 1)  # 32-bit queue lengths: the flush's scan then shuffles one word, not two
    return qn


@cuda.jit(device=True)
def _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base, nxt, cl):
    """Write the warp's local queues to the next frontier (§5.1, §5.6). Collective; returns 0.

    log_base >= 0 (the single block with the shared bitmap): `out` is the visit log, three rows of
    out_cap entries (vertex, parent, level) and position p of the next frontier is entry
    log_base + p; -1: `out` is the next frontier's global queue. In the cluster kernel (cl[0] >= 0)
    positions are the cluster's: reserved in block 0's counter, see _put_cluster."""
    lane = cuda.laneid
    if binary:
        # §5.1 binary variant: every lane holds at most one vertex.
        ballot = cuda.ballot_sync(FULL, qn > 0)
        excl = int64(_popc(ballot & cuda.lanemask_lt()))
        total = int64(_popc(ballot))
    else:
        incl = warp_inclusive_scan(qn)
        total = cuda.shfl_sync(FULL, incl, 31)
        excl = incl - qn
    if total == 0:
        return int32(0)
    base = int64(0)
    if lane == 0:
        if cl[0] >= 0:
            base = int64(cluster_add(cl[2], int32(total)))
        else:
            base = int64(cuda.atomic.add(counters, NEXT_SIZE, int32(total)))
    base = cuda.shfl_sync(FULL, base, 0)
    m = 0
    # The shortest queue reaches K7 exactly when every lane's does: one vote before the reduction.
    if k7 > 0 and not binary and cuda.all_sync(FULL, qn >= k7):
        m = warp_min(qn)
    if m > 0:
        # Induced coalescence: round k writes every lane's k-th vertex side by side.
        if lane == 0:
            acc[A_COAL] += 1
        for k in range(m):
            _put(out, out_cap, sh_out, sh_base, sh_cap, counters, base + k * 32 + lane, q[0, k], _parent(q, k, log_base),
                 log_base, nxt, acc, cl)
        pos = base + m * 32 + excl - m * lane
        for k in range(m, qn):
            _put(out, out_cap, sh_out, sh_base, sh_cap, counters, pos + k - m, q[0, k], _parent(q, k, log_base),
                 log_base, nxt, acc, cl)
    else:
        for k in range(qn):
            _put(out, out_cap, sh_out, sh_base, sh_cap, counters, base + excl + k, q[0, k], _parent(q, k, log_base),
                 log_base, nxt, acc, cl)
    return int32(0)


@cuda.jit(device=True)
def _parent(q, k, log_base):
    # Only the single block's queue with the visit log has a row of parents.
    return q[1, k] if log_base >= 0 else int32(0)


@cuda.jit(device=True)
def _put(out, out_cap, sh_out, sh_base, sh_cap, counters, pos, v, p, log_base, nxt, acc, cl):
    # Positions past the capacity are reported: the host raises, never silently truncated.
    if log_base >= 0:
        # Coalesced, like the queue: the scattered writes of dist and parent wait for bfs4k_commit.
        i = log_base + pos
        if i < out_cap:
            out[_u(i)] = v
            out[_u(out_cap + i)] = p
            out[_u(2 * out_cap + i)] = nxt
        else:
            cuda.atomic.max(counters, OVERFLOW, min(i + 1, 0x7FFFFFFF))
    elif pos < out_cap:
        out[pos] = v
    else:
        cuda.atomic.max(counters, OVERFLOW, min(pos + 1, 0x7FFFFFFF))
    if cl[0] >= 0:
        _put_cluster(cl, pos, v, sh_cap, acc)
    elif pos < sh_cap:
        sh_out[_u(sh_base + pos)] = v


@cuda.jit(device=True)
def _put_cluster(cl, pos, v, sh_cap, acc):
    """Next-frontier entry `pos` of the cluster kernel: the 32-entry chunk pos // 32 belongs to
    block chunk mod C, which will expand it, so the claimer writes it there (a store into another
    SM's shared memory costs the claimer nothing it waits for) with its row: first edge and degree,
    loaded here, where the load is one of many in flight. The degree goes into the claimer's
    statistics of the next frontier (sum, maximum, heavy bins)."""
    shift = cl[0]
    offsets = cl[6]
    beg = offsets[_u(v)]
    deg = int32(offsets[_u(v + 1)] - beg)
    acc[A_EDGES] += deg
    if deg > acc[A_TOP]:
        acc[A_TOP] = deg
    if deg >= cl[7]:
        b = _degree_bin(deg)
        if (int64(1) << b) >= cl[7]:
            cuda.atomic.add(cl[8], R_HEAVY + b, int32(1))
    chunk = pos >> 5
    i = ((chunk >> shift) << 5) | (pos & 31)
    if i < sh_cap:
        owner = chunk & ((1 << shift) - 1)
        cluster_store(cluster_map(cl[3] + 4 * i, owner), v)
        cluster_store(cluster_map(cl[4] + 8 * i, owner), int32(beg & 0xFFFFFFFF))
        cluster_store(cluster_map(cl[4] + 8 * i + 4, owner), int32(beg >> 32))
        cluster_store(cluster_map(cl[5] + 4 * i, owner), deg)


@cuda.jit(device=True)
def _heavy_push(u, deg, heavy_v, heavy_off, heavy_ctr):
    # One 64-bit atomic gives both the slot and the vertex's first edge in the flat edge space,
    # so slots come out sorted by offset and the child grid can binary-search them.
    old = cuda.atomic.add(heavy_ctr, 0, (int64(1) << 40) | int64(deg))
    slot = old >> 40
    heavy_v[slot] = u
    heavy_off[slot] = old & ((int64(1) << 40) - 1)


# ------------------------------------------------------------------------------ per-level loops
@cuda.jit(device=True)
def _row(u, i, frontier, offsets, rows64, rb_off, deg_off):
    """First edge and end of frontier entry i (vertex u): from the single block's shared copy
    (rb_off >= 0, see _load_rows), else from global memory."""
    if rb_off >= 0:
        beg = rows64[_u(rb_off + i)]
        return beg, beg + frontier[_u(deg_off + i)]
    return offsets[_u(u)], offsets[_u(u + 1)]


@cuda.jit(device=True)
def _vw_loop(vw, fsize, W, frontier, fbase, offsets, indices, heavy_thr, heavy_v, heavy_off, heavy_ctr,
             nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask, tid,
             cull, cull_base, q, acc, out, out_cap, counters, binary, k7,
             sh_out, sh_base, sh_cap, rows64, rb_off, deg_off, bm_off, log_base, cl):
    """Dynamic virtual warps (§5.2): W lanes share one frontier vertex. Returns heavy (0/1).
    The single block (rb_off >= 0: rows in shared memory) takes two neighbours per lane and round."""
    lane = cuda.laneid
    l = lane & (W - 1)
    leader = lane - l
    single = rb_off >= 0
    u = int32(0)
    beg = int64(0)
    end = int64(0)
    if l == 0 and vw < fsize:
        # §5.6 reads: the leader loads the vertex and its row once, shuffles share them.
        u = frontier[_u(fbase + vw)]
        beg, end = _row(u, vw, frontier, offsets, rows64, rb_off, deg_off)
    u = cuda.shfl_sync(FULL, u, leader)
    beg = cuda.shfl_sync(FULL, beg, leader)
    end = cuda.shfl_sync(FULL, end, leader)
    heavy = 0
    if heavy_thr > 0 and end - beg >= heavy_thr:
        if l == 0:
            heavy = 1
            _heavy_push(u, end - beg, heavy_v, heavy_off, heavy_ctr)
        end = beg
    e = beg + l
    qn = int32(0)
    rounds = int32(0)
    if single:
        # The single block: two neighbours per lane and round, claimed together.
        while cuda.any_sync(FULL, e < end):
            has_a = e < end
            has_b = e + W < end
            va = int32(0)
            vb = int32(0)
            if has_a:
                va = indices[_u(e)]
            if has_b:
                vb = indices[_u(e + W)]
            e += W + W
            qn = _visit_pair(has_a, va, has_b, vb, u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim,
                             dedup, table, hmask, tid, cull, cull_base, lane, q, qn, acc, bm_off, cl)
            rounds = int32(rounds + 1)
            if rounds == QLEN // 2:  # a lane gains at most two vertices a round
                qn = _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base,
                            nxt, cl)
                rounds = int32(0)
        _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base, nxt, cl)
        return heavy
    # Each round loads the next round's neighbour before visiting this one: the load is in
    # flight during the claim instead of after it.
    v_next = int32(0)
    if e < end:
        v_next = indices[_u(e)]
    while cuda.any_sync(FULL, e < end):
        has = e < end
        v = v_next
        if has:
            e += W
            if e < end:
                v_next = indices[_u(e)]
        qn = _visit(has, v, u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask,
                    tid, cull, cull_base, lane, q, qn, acc, single, bm_off, cl)
        rounds = int32(rounds + 1)
        if rounds == QLEN:  # a lane gains at most one vertex a round: its queue may be full now
            qn = _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base,
                        nxt, cl)
            rounds = int32(0)
    _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base, nxt, cl)
    return heavy


@cuda.jit(device=True)
def _ed_loop(wid, fsize, frontier, fbase, offsets, indices, heavy_thr, heavy_v, heavy_off, heavy_ctr,
             nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask, tid,
             cull, cull_base, q, acc, out, out_cap, counters, binary, k7,
             sh_out, sh_base, sh_cap, rows64, rb_off, deg_off, bm_off, log_base, cl):
    """Edge-discover (§5.4): a warp's 32 lanes are spread over the edges of 32 frontier vertices.
    Returns how many of the warp's vertices took the heavy path on this lane (0/1)."""
    lane = cuda.laneid
    idx = wid * 32 + lane
    u = int32(0)
    beg = int64(0)
    deg = int64(0)
    heavy = 0
    if idx < fsize:
        u = frontier[_u(fbase + idx)]
        beg, end = _row(u, idx, frontier, offsets, rows64, rb_off, deg_off)
        deg = end - beg
        if heavy_thr > 0 and deg >= heavy_thr:
            heavy = 1
            _heavy_push(u, deg, heavy_v, heavy_off, heavy_ctr)
            deg = 0
    incl = warp_inclusive_scan(deg)
    total = cuda.shfl_sync(FULL, incl, 31)
    base = int64(0)
    qn = int32(0)
    rounds = int32(0)
    cur = _popc(cuda.ballot_sync(FULL, incl <= 0))  # owner of item 0
    while base < total:
        cur_end = cuda.shfl_sync(FULL, incl, cur & 31)
        if cur_end >= base + 32:
            # EXT: the whole round lies inside one vertex, no search needed.
            owner = cur
            if lane == 0:
                acc[A_EXT] += 1
        else:
            k = base + lane
            if k >= total:
                k = total - 1
            owner = warp_search_owner(incl, k)  # §5.4: 5 shuffles
        o_u = cuda.shfl_sync(FULL, u, owner)
        o_beg = cuda.shfl_sync(FULL, beg, owner)
        o_excl = cuda.shfl_sync(FULL, incl - deg, owner)
        k = base + lane
        has = k < total
        v = int32(0)
        if has:
            v = indices[_u(o_beg + (k - o_excl))]
        qn = _visit(has, v, o_u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask,
                    tid, cull, cull_base, lane, q, qn, acc, rb_off >= 0, bm_off, cl)
        rounds = int32(rounds + 1)
        if rounds == QLEN:
            qn = _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base,
                        nxt, cl)
            rounds = int32(0)
        base += 32
        if cur_end <= base:
            cur = _popc(cuda.ballot_sync(FULL, incl <= base))
    _flush(q, qn, out, out_cap, counters, binary, k7, sh_out, sh_base, sh_cap, acc, log_base, nxt, cl)
    return heavy


@cuda.jit(device=True)
def _acc_counts(acc, cnt, heavy):
    """Per-thread accumulators into the block's shared counters.

    Edges examined and claims are not counted here: the host derives them (edges = degree sum of
    the frontier, claims = kept + detected), which keeps same-address atomics off the hot path.
    """
    if acc[A_GEN]:
        cuda.atomic.add(cnt, DUP_GENERATED, int32(acc[A_GEN]))
    if acc[A_DET]:
        cuda.atomic.add(cnt, DUP_DETECTED, int32(acc[A_DET]))
    if acc[A_CONF]:
        cuda.atomic.add(cnt, DUP_CONFLICTS, int32(acc[A_CONF]))
    if acc[A_UNDET]:
        cuda.atomic.add(cnt, UNDETECTED, int32(acc[A_UNDET]))
    if acc[A_EXT]:
        cuda.atomic.add(cnt, EXT_ROUNDS, int32(acc[A_EXT]))
    if acc[A_COAL]:
        cuda.atomic.add(cnt, COALESCED, int32(acc[A_COAL]))
    if heavy:
        cuda.atomic.add(cnt, HEAVY, int32(heavy))


@cuda.jit(device=True)
def _last_warp_publishes(cnt, finished, counters):
    """The block's counters go to global memory once, by the block's last warp.

    No block barrier: a warp done early leaves at once instead of idling until its block's
    slowest warp (a barrier here was a third of the multi-block kernel's stalls on an H200).
    Collective per warp; every lane has already added to cnt.
    """
    lane = cuda.laneid
    cuda.threadfence_block()
    cuda.syncwarp(FULL)
    arrived = 0
    if lane == 0:
        arrived = cuda.atomic.add(finished, 0, 1)
    arrived = cuda.shfl_sync(FULL, arrived, 0)
    if arrived != cuda.blockDim.x // 32 - 1:
        return
    cuda.threadfence_block()
    if lane < NUM_COUNTERS and lane != NEXT_SIZE and cnt[lane] != 0:  # NEXT_SIZE is global already
        cuda.atomic.add(counters, lane, cnt[lane])


@cuda.jit(device=True)
def _start_block(cnt, finished, cull, cull_base, dedup, acc):
    """Zero the block's shared counters, empty the culling tables; ends with the block barrier
    that publishes them."""
    tid = cuda.threadIdx.x
    if tid < NUM_COUNTERS:
        cnt[tid] = 0
    if tid == 0:
        finished[0] = 0
    if dedup == WARP_CULL:
        for i in range(cuda.laneid, CULL_ENTRIES, 32):
            cull[cull_base + i] = -1
    for i in range(NUM_ACC):
        acc[i] = 0
    cuda.syncthreads()


@cuda.jit(device=True)
def _count_degrees(frontier, i, n, stride, offsets, hist_c, hist_s):
    """Degree histogram of frontier[i], frontier[i + stride], ... (below n) into the block's
    hist_c (vertices per bin floor(log2(degree))) and hist_s (degree sums from bin SUM_BIN up;
    lighter degrees summed together in bin 0). i - laneid and stride are uniform over the warp.
    Collective."""
    lane = cuda.laneid
    light = int64(0)
    while i - lane < n:
        b = -1
        if i < n:
            u = frontier[_u(i)]
            deg = offsets[_u(u + 1)] - offsets[_u(u)]
            b = _degree_bin(deg)
            if b >= SUM_BIN:
                cuda.atomic.add(hist_s, b, deg)
            else:
                light += deg
        # Lanes with the same bin add their count with one atomic: most entries share a bin.
        peers = cuda.match_any_sync(FULL, b)
        if b >= 0 and (peers & ((1 << lane) - 1)) == 0:
            cuda.atomic.add(hist_c, b, int32(_popc(peers)))
        i += stride
    light = warp_sum(light)
    if lane == 0 and light:
        cuda.atomic.add(hist_s, 0, light)


# ------------------------------------------------------------------------------ heavy child grid


@cuda.jit(device=True)
def _heavy_slot(heavy_off, count, x):
    """Last heavy vertex whose first flat edge is <= x (slots are sorted by offset)."""
    lo = 0
    hi = count - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if heavy_off[mid] <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
# so a level needs no barrier for the clearing. The frontier's degree sum and maximum go to
# per-warp slots (rotating the same way), summed after the barrier that follows _load_rows.
R_HEAVY = NUM_COUNTERS
ROW = R_HEAVY + DEGREE_BINS


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
        d0 = dist[_u(min(v0, last))]
        d1 = dist[_u(min(v1, last))]
        d2 = dist[_u(min(v2, last))]
        d3 = dist[_u(min(v3, last))]
        b0 = cuda.ballot_sync(FULL, v0 <= last and d0 != -1)
        b1 = cuda.ballot_sync(FULL, v1 <= last and d1 != -1)
        b2 = cuda.ballot_sync(FULL, v2 <= last and d2 != -1)
        b3 = cuda.ballot_sync(FULL, v3 <= last and d3 != -1)
        if lane == 0:
            bits[_u(base + i)] = int32(b0)
            if i + 1 < words:
                bits[_u(base + i + 1)] = int32(b1)
            if i + 2 < words:
                bits[_u(base + i + 2)] = int32(b2)
            if i + 3 < words:
                bits[_u(base + i + 3)] = int32(b3)
        i += stride


@cuda.jit(device=True)
def _load_rows(sh32, f_off, fsize, offsets, rows64, rb_off, deg_off, heavy_c, heavy_min, wsum, wmax, r):
    """The level's frontier rows, loaded once at its start: each entry's first edge (rows64[rb_off + i])
    and degree (sh32[deg_off + i]) go beside it in shared memory, where the level's loops read
    them, and the warp's degree sum and maximum go to its slots in wsum[r], wmax[r], with per-bin
    counts of heavy vertices (bins of degree >= heavy_min) in heavy_c: what the level's decisions
    (§5.1-§5.4, the heavy-vertex exit) need, after one block barrier. A thread takes entries i and
    i + B together, so both rows' loads are in flight at once. Collective."""
    lane = cuda.laneid
    B = cuda.blockDim.x
    total = int64(0)
    top = int32(0)
    i = cuda.threadIdx.x
    while i - lane < fsize:  # warp-uniform
        j = i + B
        u0 = sh32[_u(f_off + i)] if i < fsize else 0
        u1 = sh32[_u(f_off + j)] if j < fsize else 0
        b0 = offsets[_u(u0)]
        e0 = offsets[_u(u0 + 1)]
        b1 = offsets[_u(u1)]
        e1 = offsets[_u(u1 + 1)]
        if i < fsize:
            total += _row_entry(sh32, rows64, rb_off, deg_off, i, b0, e0 - b0, heavy_c, heavy_min)
            top = max(top, int32(e0 - b0))
        if j < fsize:
            total += _row_entry(sh32, rows64, rb_off, deg_off, j, b1, e1 - b1, heavy_c, heavy_min)
            top = max(top, int32(e1 - b1))
        i += B + B
    if not cuda.any_sync(FULL, total > 0):  # an idle warp (or one of isolated vertices): no reductions
        if lane == 0:
            wsum[r, cuda.threadIdx.x >> 5] = 0
            wmax[r, cuda.threadIdx.x >> 5] = 0
        return
    total = warp_sum(total)
    top = warp_max(top)  # a degree: 32 bits, half the shuffles
    if lane == 0:
        wsum[r, cuda.threadIdx.x >> 5] = total
        wmax[r, cuda.threadIdx.x >> 5] = top


@cuda.jit(device=True)
def _row_entry(sh32, rows64, rb_off, deg_off, i, beg, deg, heavy_c, heavy_min):
    rows64[_u(rb_off + i)] = beg
    sh32[_u(deg_off + i)] = int32(deg)
    if deg >= heavy_min:
        b = _degree_bin(deg)
        if (int64(1) << b) >= heavy_min:
            cuda.atomic.add(heavy_c, b, int32(1))
    return deg


@cuda.jit(device=True)
def _expand(ed, W, binary, fsize, sh32, f_off, offsets, indices, out, out_n, cnt, nxt, dist, parent, stamp,
            stamp2, instrument, atomic_claim, dedup, table, hmask, cull, cull_base, q, acc, k7, fn_off,
            fcap, rb_off, deg_off, bm_off, log_base, cl):
    """One level of the single block (or of one block of the cluster form): its fsize frontier
    entries at sh32[f_off:], their rows beside them, by edge-discover or virtual warps of W lanes.
    Collective over the block."""
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    if ed:
        wid = tid >> 5
        while wid * 32 < fsize:  # a warp past the frontier's end has no more work
            _ed_loop(wid, fsize, sh32, f_off, offsets, indices, 0, out, out, cnt, nxt, dist,
                     parent, stamp, stamp2, instrument, atomic_claim, dedup, table, hmask, tid, cull,
                     cull_base, q, acc, out, out_n, cnt, False, k7, sh32, fn_off,
                     fcap, table, rb_off, deg_off, bm_off, log_base, cl)
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
        _vw_loop(int32(vbase + (tid >> wshift)), fsize, W, sh32, f_off, offsets, indices, 0, out,
                 out, cnt, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table,
                 hmask, tid, cull, cull_base, q, acc, out, out_n, cnt, binary,
                 k7, sh32, fn_off, fcap, table, rb_off, deg_off, bm_off, log_base, cl)
        vbase = int32(vbase + (B >> wshift))


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
    _count_degrees(frontier, start + tid, start + fsize, cuda.blockDim.x, offsets, hist_c, hist_s)
    cuda.syncthreads()
    if tid < DEGREE_BINS:
        hist[tid] = hist_c[tid]
        hist[DEGREE_BINS + tid] = hist_s[tid]
    if tid == 0:
        state[S_CLOCK_END] = clock64()


# ------------------------------------------------------------------------------ kernels
class Kernels(NamedTuple):
    """The BFS-4K kernels compiled for one combination of the static knobs."""
    multi: object
    heavy: object
    single: object
    stats: object
    commit: object


def kernels_for(instrument: bool, atomic_claim: bool, dedup: int, single_block_threads: int = 1024,
                shared_visited: bool = False, cluster: int = 1) -> Kernels:
    """BFS-4K's kernels with the run's static choices (per-level instrumentation, claim mode,
    duplicate filter, the single block's size and where it keeps visited flags) fixed at compile
    time.

    They never change during a run, and as constants they let the compiler drop the code of the
    paths not taken: fewer registers and fewer instructions on every level. The single block's
    size sets its register budget (`register_cap`). Each combination is compiled on first use and
    cached on disk (Numba's cache key includes these closure values). With cluster = C > 1 the
    single-block kernel is its cluster form, bfs4k_cluster, launched as one cluster of C blocks.
    """
    instrument, atomic_claim, dedup = bool(instrument), bool(atomic_claim), int(dedup)
    if dedup not in (NO_DEDUP, HASH64, WARP_CULL):
        raise ValueError(f"dedup must be NO_DEDUP, HASH64 or WARP_CULL, got {dedup}")
    multi, heavy, stats = _level_kernels(instrument, atomic_claim, dedup)
    if shared_visited and not atomic_claim:
        raise ValueError("the shared visited bitmap claims atomically: it needs atomic_claim")
    if cluster == 1:
        single = _single_kernel(instrument, atomic_claim, dedup, int(single_block_threads), bool(shared_visited))
    elif cluster in (2, 4, 8, 16):
        if not shared_visited:
            raise ValueError("the cluster form splits the visited bitmap over its blocks: it needs shared_visited")
        single = _cluster_kernel(instrument, dedup, int(single_block_threads), int(cluster))
    else:
        raise ValueError(f"cluster must be 1, 2, 4, 8 or 16 blocks, got {cluster}")
    return Kernels(multi, heavy, single, stats, bfs4k_commit)


@functools.cache
def _level_kernels(instrument: bool, atomic_claim: bool, dedup: int):
    """The multi-block kernel, the heavy child grid (one level per launch) and the statistics
    kernel that follows them."""

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_multi(offsets, indices, dist, parent, frontier, fsize, out, out_cap, counters,
                    level, stamp, stamp2, W, edge_discover, heavy_thr, heavy_v, heavy_off, heavy_ctr,
                    hmask, binary, k7):
        """One level, multi-block (§5.5). Dynamic shared memory: the block's hash64 table (int64 x
        hmask+1) or the warps' culling tables (int32 x 128 per warp)."""
        tid = cuda.threadIdx.x
        gtid = cuda.blockIdx.x * cuda.blockDim.x + tid
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        cull_base = (tid // 32) * CULL_ENTRIES
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, dedup, acc)
        q = cuda.local.array((1, QLEN), int32)  # the vertices row only: no visit log here
        nxt = int32(level + 1)
        if edge_discover:
            heavy = _ed_loop(gtid // 32, fsize, frontier, 0, offsets, indices, heavy_thr, heavy_v, heavy_off,
                             heavy_ctr, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup,
                             table, hmask, tid, cull, cull_base, q, acc, out, out_cap,
                             counters, binary, k7, out, 0, 0, table, -1, -1, -1, -1, _no_cluster(offsets, cnt))
        else:
            heavy = _vw_loop(gtid // W, fsize, W, frontier, 0, offsets, indices, heavy_thr, heavy_v, heavy_off,
                             heavy_ctr, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup,
                             table, hmask, tid, cull, cull_base, q, acc, out, out_cap,
                             counters, binary, k7, out, 0, 0, table, -1, -1, -1, -1, _no_cluster(offsets, cnt))
        _acc_counts(acc, cnt, heavy)
        _last_warp_publishes(cnt, finished, counters)

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_heavy(offsets, indices, dist, parent, out, out_cap, counters, level, stamp, stamp2,
                    heavy_v, heavy_off, heavy_ctr, k3, hmask, k7):
        """Child grid of §5.3 for all heavy vertices of the level: block b walks flat edges
        [b*K3*B, (b+1)*K3*B), each thread K3 of them, B apart so loads coalesce."""
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        table = cuda.shared.array(0, int64)
        cull = cuda.shared.array(0, int32)
        cnt = cuda.shared.array(NUM_COUNTERS, int32)
        finished = cuda.shared.array(1, int32)
        cull_base = (tid // 32) * CULL_ENTRIES
        acc = cuda.local.array(NUM_ACC, int64)
        _start_block(cnt, finished, cull, cull_base, dedup, acc)
        q = cuda.local.array((1, QLEN), int32)
        qn = int32(0)
        nocl = _no_cluster(offsets, cnt)
        packed = heavy_ctr[0]
        count = int32(packed >> 40)
        total = packed & ((int64(1) << 40) - 1)
        B = cuda.blockDim.x
        start = int64(cuda.blockIdx.x) * k3 * B + tid
        nxt = int32(level + 1)
        # One binary search per thread; its K3 edges are B apart, so the slot only ever moves forward.
        s = _heavy_slot(heavy_off, count, start) if start < total else 0
        s_end = heavy_off[s + 1] if s + 1 < count else total
        u = heavy_v[s]
        row = offsets[u] - heavy_off[s]
        for j in range(k3):
            x = start + j * B
            has = x < total
            v = int32(0)
            if has:
                while x >= s_end:
                    s += 1
                    s_end = heavy_off[s + 1] if s + 1 < count else total
                    u = heavy_v[s]
                    row = offsets[u] - heavy_off[s]
                v = indices[row + x]
            qn = _visit(has, v, u, nxt, dist, parent, stamp, stamp2, instrument, atomic_claim, dedup, table,
                        hmask, tid, cull, cull_base, lane, q, qn, acc, False, -1, nocl)
            if (j + 1) % QLEN == 0:
                qn = _flush(q, qn, out, out_cap, counters, False, k7, out, 0, 0, acc, -1, nxt, nocl)
        _flush(q, qn, out, out_cap, counters, False, k7, out, 0, 0, acc, -1, nxt, nocl)
        _acc_counts(acc, cnt, 0)
        _last_warp_publishes(cnt, finished, counters)

    @cuda.jit(cache=True, **_OPTIONS)
    def bfs4k_stats(offsets, frontier, counters, hist):
        """The next frontier's degree histogram, which the host plans the next level from (§5.2-§5.4
        decisions, §5.3 heavy vertices): vertices per bin floor(log2(degree)) and, from bin
        SUM_BIN up, their degree sums; lighter degrees are summed together in bin 0's sum.

        One coalesced pass over the frontier the level wrote (counters[NEXT_SIZE] entries), after
        its kernels: the level's claiming rounds then need no dependent row loads (two on every
        round that claims something, most rounds of a large level).
        """
        tid = cuda.threadIdx.x
        hist_c = cuda.shared.array(DEGREE_BINS, int32)  # 32-bit: native shared atomics
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        if tid < DEGREE_BINS:
            hist_c[tid] = 0
            hist_s[tid] = 0
        cuda.syncthreads()
        n = min(counters[NEXT_SIZE], frontier.shape[0])
        _count_degrees(frontier, cuda.grid(1), n, cuda.gridsize(1), offsets, hist_c, hist_s)
        cuda.syncthreads()
        if tid < DEGREE_BINS:
            if hist_c[tid]:
                cuda.atomic.add(hist, tid, int64(hist_c[tid]))
            if hist_s[tid]:
                cuda.atomic.add(hist, DEGREE_BINS + tid, hist_s[tid])

    return bfs4k_multi, bfs4k_heavy, bfs4k_stats


@functools.cache
def _single_kernel(instrument: bool, atomic_claim: bool, dedup: int, max_threads: int, shared_visited: bool):
    """The single-block kernel for blocks of at most `max_threads` threads."""
    options = {} if config.ENABLE_CUDASIM else {"max_registers": register_cap(max_threads)}

    @cuda.jit(cache=True, **options)
    def bfs4k_single(offsets, indices, dist, parent, qa, qb, fsize0, in_a, out_cap, hist, log,
                     max_levels, level0, state, stamp, stamp2, f_threshold, fcap, k1, k2_limit, k3, k4,
                     hmask, k7, region0_words, bm_words, visits):
        """Levels inside one launch of one block while 0 < |F| < F_Threshold (§5.5, single-block).

        Dynamic shared memory: [hash64 table or culling tables: region0_words int32]
        [F_d: fcap int32][F_d_new: fcap int32][F_d's first edges: fcap int64][F_d's degrees: fcap
        int32], then with shared_visited [visited bitmap: bm_words int32], filled from dist on entry.
        Each level starts by loading its frontier's rows into shared memory (_load_rows): the
        level's decisions come from their statistics, and its loops read them there, so a round's
        dependent global loads are the neighbours only. Every next-frontier entry also goes to global memory, so
        the multi-block kernel can take over the moment the frontier outgrows the block: to the
        queue, or with shared_visited to the visit log `visits` (vertex, parent, level; three rows
        of len(visits) // 3 entries, level after level), which bfs4k_commit writes into dist,
        parent and the queue after the block: scattered stores are a quarter of a plain one-block
        BFS of the grid (benchmarks/plain_single_block.py), spread over all SMs they are one
        short launch.
        A frontier holding a heavy vertex (§5.3) also returns to the host: its child grid can only be
        launched from there (Numba has no dynamic parallelism). `hist` receives the last frontier's
        degree histogram on exit (the host plans from it). The SM's cycle counter is read as the
        kernel starts, as each level ends (log[:, L_CLOCK]) and as the kernel ends (state); the
        host splits the launch's time between the levels by them. The last warp reads it each
        level: warp 0 leads every level, and a read at each level's start there cost the grid 2.6 %.
        """
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        B = cuda.blockDim.x
        if B > max_threads:  # compiled with registers for max_threads only (the launch would fail)
            return
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
        heavy_min = int64(k3) * B  # §5.3: a child grid of at least one block
        log_cap = int32(visits.shape[0] // 3)
        nocl = _no_cluster(offsets, hist_c)
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
            if dedup == WARP_CULL:  # each warp's own table: no block barrier needed
                for i in range(lane, CULL_ENTRIES, 32):
                    cull[cull_base + i] = -1
                cuda.syncwarp(FULL)
            for i in range(NUM_ACC):
                acc[i] = 0
            _load_rows(sh32, f_off, fsize, offsets, table, rb_off, deg_off, heavy_c, heavy_min, wsum, wmax, r)
            cuda.syncthreads()  # the rows and the frontier's statistics are complete
            edges = warp_sum(wsum[r, lane])  # the same in every thread
            top = _degree_bin(warp_max(wmax[r, lane]))  # a bin: >= 0
            # A frontier holding a heavy vertex (rules.has_heavy: only its top bin matters) goes back
            # to the host, which launches its child grid. The host checked the launch's first one.
            if level > level0 and (int64(1) << top) >= heavy_min and heavy_c[top] <= k2_limit:
                break

            # Per-level decisions (§5.2, §5.4, §5.1) from the same formulas the host policy uses.
            W = int32(_virtual_warp_size(B, fsize, k1))
            ed = _use_edge_discover(B, fsize, k4)
            binary = (not ed) and fsize * W <= B and (int64(1) << (top + 1)) - 1 <= W
            out = qb if a_is_in else qa
            out_n = out_cap
            log_base = int32(-1)
            if shared_visited:
                out = visits
                out_n = log_cap
                log_base = logged
            nxt = int32(level + 1)
            _expand(ed, W, binary, fsize, sh32, f_off, offsets, indices, out, out_n, cnt, nxt, dist, parent, stamp,
                    stamp2, instrument, atomic_claim, dedup, table, hmask, cull, cull_base, q, acc, k7, fn_off,
                    fcap, rb_off, deg_off, bm_off, log_base, nocl)
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


# ------------------------------------------------------------------------------ cluster form
# Its counter rows add the largest degree among the entries the block claimed in the level.
R_TOP = ROW
ROW_CLUSTER = ROW + 1
ROWS_CLUSTER = 3 * ROW_CLUSTER


@cuda.jit(device=True)
def _share(total, rank, shift):
    """Entries of a cluster's frontier of `total` entries that block `rank` holds: the 32-entry
    chunks c with c mod 2**shift == rank (see _put_cluster)."""
    chunks = total >> 5
    n = (chunks >> shift) << 5
    extra = chunks & ((1 << shift) - 1)
    if rank < extra:
        n += 32
    elif rank == extra:
        n += total & 31
    return int32(n)


@cuda.jit(device=True)
def _frontier_pos(i, rank, shift):
    """Position in the cluster's frontier of block `rank`'s local entry i."""
    return ((((i >> 5) << shift) | rank) << 5) | (i & 31)


@cuda.jit(device=True)
def _cluster_totals(rows_addr, row, C, lv):
    """After a cluster barrier, by warp 0 of each block: the cluster's next-frontier size (block
    0's counter in counter row `row`) and the largest degree its claimers saw (every block's) into
    lv[0], lv[1] for the block, which reads them after a block barrier: one warp a block reads the
    other SMs' shared memory, not every warp. Collective over warp 0."""
    lane = cuda.laneid
    n = int32(0)
    if lane == 0:
        n = cluster_load(cluster_map(rows_addr + 4 * (row + NEXT_SIZE), 0))
    tj = int32(0)
    if lane < C:
        tj = cluster_load(cluster_map(rows_addr + 4 * (row + R_TOP), lane))
    top = warp_max(tj)
    if lane == 0:
        lv[0] = n
        lv[1] = top


@functools.cache
def _cluster_kernel(instrument: bool, dedup: int, max_threads: int, C: int):
    """The single-block kernel spread over a thread-block cluster of C blocks (C a power of two,
    2-16; compute capability 9.0 and later): an extension of the paper, which has one block."""
    shift = C.bit_length() - 1
    options = {} if config.ENABLE_CUDASIM else {"max_registers": register_cap(max_threads)}

    @cuda.jit(cache=True, **options)
    def bfs4k_cluster(offsets, indices, dist, parent, qa, qb, fsize0, in_a, out_cap, hist, log,
                      max_levels, level0, state, stamp, stamp2, f_threshold, fcap, k1, k2_limit, k3, k4,
                      hmask, k7, region0_words, bm_words, visits):
        """Levels inside one launch of one cluster while 0 < |F| < F_Threshold (= C x the single
        block's): bfs4k_single's loop (§5.5), its arguments, log and visit log, on C SMs that share
        a hardware barrier and each other's shared memory (kernels.cluster). A level has one
        cluster barrier and one block barrier, where the single block has two block barriers:

        - the visited bitmap is split over the blocks (word w in block w mod C), claimed by atomic
          OR into the owner's shared memory, so claims are exact (needs visited='shared');
        - next-frontier positions come from one counter in block 0; chunk c of 32 entries belongs
          to block c mod C, and the claimer writes the entry there with its row (first edge,
          degree: loaded at the claim instead of at the next level's start), so each block expands
          its own F_d from its own shared memory;
        - the claimers' degree sums, maxima and heavy bins are the next frontier's statistics:
          after the barrier every block reads all blocks' (warp 0's lanes j < C read block j's,
          then the block barrier) and takes the same decisions from the whole frontier, with
          #ResThreads = C x block size (§5.2, §5.4); the §5.1 binary scan is each block's choice
          (it is local to a block's warps);
        - log rows are per block: row (level - level0) x C + rank; the host sums their counts.

        Dynamic shared memory: [hash64 or culling tables: region0_words int32][F_d, F_d_new: fcap
        int32 each][their first edges: fcap int64 each][their degrees: fcap int32 each][this block's
        bitmap slice: bm_words int32].
        """
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        B = cuda.blockDim.x
        if B > max_threads:  # compiled with registers for max_threads only (the launch would fail)
            return
        rank = cluster_rank()
        table = cuda.shared.array(0, int64)
        sh32 = cuda.shared.array(0, int32)
        cull = sh32
        f_off = int32(region0_words)
        fn_off = int32(region0_words + fcap)
        rb_off = int32((region0_words + 2 * fcap) // 2)  # int64 indices
        rbn_off = int32(rb_off + fcap)
        deg_off = int32(region0_words + 6 * fcap)
        dgn_off = int32(deg_off + fcap)
        bm_off = int32(region0_words + 8 * fcap)
        rows = cuda.shared.array(ROWS_CLUSTER, int32)  # three in rotation, as in bfs4k_single
        lv = cuda.shared.array(2, int32)  # the cluster's frontier size and top degree (_cluster_totals)
        wsum = cuda.shared.array((3, 32), int64)
        wmax = cuda.shared.array((3, 32), int32)
        hist_c = cuda.shared.array(DEGREE_BINS, int32)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        cull_base = (tid // 32) * CULL_ENTRIES
        heavy_min = int64(k3) * B
        log_cap = int32(visits.shape[0] // 3)
        logged = int32(0)
        last = int32(0)
        if tid == 0 and rank == 0:
            state[S_CLOCK_START] = clock64()

        # The launch's frontier, dealt out as every later one is; its rows and statistics.
        fsize = int32(fsize0)
        local = _share(fsize, rank, shift)
        src = qa if in_a else qb
        i = tid
        while i < local:
            sh32[_u(f_off + i)] = src[_u(_frontier_pos(i, rank, shift))]
            i += B
        for i in range(tid, ROWS_CLUSTER, B):
            rows[i] = 0
        for i in range(tid, 3 * 32, B):
            wsum[i // 32, i % 32] = 0
            wmax[i // 32, i % 32] = 0
        _load_visited(sh32, bm_off, bm_words, dist, shift, rank)
        cuda.syncthreads()
        r = 0
        prev = 2  # the row holding the statistics of the level's frontier
        _load_rows(sh32, f_off, local, offsets, table, rb_off, deg_off,
                   rows[prev * ROW_CLUSTER + R_HEAVY:prev * ROW_CLUSTER + ROW], heavy_min, wsum, wmax, prev)
        cuda.syncthreads()
        if tid < 32:
            top = warp_max(wmax[prev, lane])
            if lane == 0:
                rows[prev * ROW_CLUSTER + R_TOP] = top
        rows_addr = smem_addr(rows, 0)
        bm_addr = smem_addr(sh32, bm_off)
        cluster_sync()  # every block's bitmap slice, frontier and statistics are in place
        if tid < 32:
            _cluster_totals(rows_addr, prev * ROW_CLUSTER, C, lv)
        cuda.syncthreads()

        a_is_in = in_a
        level = level0
        acc = cuda.local.array(NUM_ACC_CLUSTER, int64)
        q = cuda.local.array((2, QLEN), int32)
        while True:
            pb = prev * ROW_CLUSTER
            cnt = rows[r * ROW_CLUSTER:(r + 1) * ROW_CLUSTER]
            r_next = r + 1 if r < 2 else 0
            top = _degree_bin(lv[1])
            local = _share(fsize, rank, shift)
            i = tid
            while i < ROW_CLUSTER:
                rows[r_next * ROW_CLUSTER + i] = 0
                i += B
            if dedup == WARP_CULL:
                for i in range(lane, CULL_ENTRIES, 32):
                    cull[cull_base + i] = -1
                cuda.syncwarp(FULL)
            for i in range(NUM_ACC_CLUSTER):
                acc[i] = 0
            edges = warp_sum(wsum[prev, lane])  # this block's share of the frontier's degree sum
            # A heavy vertex returns the frontier to the host, as in bfs4k_single: every block
            # reads the same counts, so all leave together.
            if level > level0 and (int64(1) << top) >= heavy_min:
                hj = int32(0)
                if lane < C:
                    hj = cluster_load(cluster_map(rows_addr + 4 * (pb + R_HEAVY + top), lane))
                if warp_sum(hj) <= k2_limit:
                    break

            W = int32(_virtual_warp_size(C * B, fsize, k1))
            ed = _use_edge_discover(C * B, fsize, k4)
            binary = (not ed) and local * W <= B and (int64(1) << (top + 1)) - 1 <= W
            nxt = int32(level + 1)
            cl = (int32(shift), bm_addr, cluster_map(rows_addr + 4 * (r * ROW_CLUSTER + NEXT_SIZE), 0),
                  smem_addr(sh32, fn_off), smem_addr(sh32, 2 * rbn_off), smem_addr(sh32, dgn_off), offsets,
                  heavy_min, cnt)
            _expand(ed, W, binary, local, sh32, f_off, offsets, indices, visits, log_cap, cnt, nxt, dist, parent,
                    stamp, stamp2, instrument, True, dedup, table, hmask, cull, cull_base, q, acc, k7, fn_off,
                    fcap, rb_off, deg_off, bm_off, logged, cl)
            _acc_counts(acc, cnt, 0)
            claimed_edges = warp_sum(acc[A_EDGES])
            claimed_top = warp_max(int32(acc[A_TOP]))
            if lane == 0:
                wsum[r, tid >> 5] = claimed_edges
                if claimed_top > 0:
                    cuda.atomic.max(rows, r * ROW_CLUSTER + R_TOP, claimed_top)
            if rank == 0 and tid == B - 32:
                log[(level - level0) * C, L_CLOCK] = clock64()
            cluster_sync()  # the next frontier, its rows, size and statistics are complete everywhere

            if tid < 32:
                _cluster_totals(rows_addr, r * ROW_CLUSTER, C, lv)
            cuda.syncthreads()
            nsize = lv[0]
            if tid == 0:
                _log_level(log, (level - level0) * C + rank, fsize, edges, nsize, cnt, W, ed, binary)
            last = logged
            logged = int32(logged + nsize)
            level += 1
            prev = r
            r = r_next
            a_is_in = not a_is_in
            fsize = nsize
            # No overflow test, unlike bfs4k_single: claims through the bitmap log each vertex
            # once, so the visit log (3 |V|) cannot overflow, and the test would need every
            # block's counts (a block leaving alone would leave the others at the barrier).
            if nsize == 0 or nsize >= f_threshold or level - level0 >= max_levels:
                break
            f_off, fn_off = fn_off, f_off
            rb_off, rbn_off = rbn_off, rb_off
            deg_off, dgn_off = dgn_off, deg_off
        cluster_sync()  # no block leaves while another may still read its shared memory
        if rank != 0:
            return
        _leave(state, hist, hist_c, hist_s, offsets, visits, last, level - level0, fsize, a_is_in, last, logged)

    return bfs4k_cluster


@cuda.jit(cache=True)
def bfs4k_commit(visits, state, dist, parent, qa, qb):
    """After a single-block launch with the shared bitmap: its visit log (vertex, parent, level;
    state[S_LOGGED] entries) into dist and parent, and the final frontier (the log's last
    state[S_FSIZE] entries) into the queue the next level reads. A grid-stride loop over all
    SMs: the scattered writes one SM would make one by one."""
    cap = visits.shape[0] // 3
    logged = state[S_LOGGED]
    last = state[S_LAST]
    out = qa if state[S_IN_A] else qb
    i = cuda.grid(1)
    while i < logged:
        v = visits[i]
        dist[v] = visits[2 * cap + i]
        parent[v] = visits[cap + i]
        if i >= last:
            out[i - last] = v
        i += cuda.gridsize(1)


def kernel_signatures(instrument=False, atomic_claim=True, dedup=NO_DEDUP, single_block_threads=1024,
                      shared_visited=False, cluster=1):
    """(name, kernel, argument types, register cap) of each kernel as the engine launches it,
    for compiling without a GPU (benchmarks/kernel_resources.py)."""
    from numba import types
    i64, b = types.int64, types.boolean
    v64, v32, log2d = types.int64[::1], types.int32[::1], types.int64[:, ::1]
    multi = (v64, v32, v32, v32, v32, i64, v32, i64, v64, i64, v32, v32, i64, b, i64, v32,
             v64, v64, i64, b, i64)
    heavy = (v64, v32, v32, v32, v32, i64, v64, i64, v32, v32, v32, v64, v64, i64, i64, i64)
    stats = (v64, v32, v64, v64)
    single = (v64, v32, v32, v32, v32, v32, i64, b, i64, v64, log2d, i64, i64, v64, v32, v32,
              i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, v32)
    commit = (v32, v64, v32, v32, v32, v32)
    k = kernels_for(instrument, atomic_claim, dedup, single_block_threads, shared_visited, cluster)
    cap = _OPTIONS.get("max_registers", 0)
    return [("bfs4k_multi", k.multi, multi, cap), ("bfs4k_heavy", k.heavy, heavy, cap),
            ("bfs4k_stats", k.stats, stats, cap),
            ("bfs4k_cluster" if cluster > 1 else "bfs4k_single", k.single, single, register_cap(single_block_threads)),
            ("bfs4k_commit", k.commit, commit, 0)]
