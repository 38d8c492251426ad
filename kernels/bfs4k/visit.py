"""One candidate neighbour per lane, from the claim to the next frontier: the visiting rule
(benign race, compare-and-swap or the shared visited bitmap), the duplicate filters (§6's hash64,
Merrill et al.'s warp culling), the per-thread local queue and its flush with warp prefix sums
(§5.1), coalesced when the warp's shortest queue is long enough (§5.6). Collective: every lane
of the warp calls them together."""
from numba import cuda, int32, int64, uint32

from ..cluster import cluster_add, cluster_map, cluster_or, cluster_store
from ..primitives import warp_inclusive_scan, warp_min
from .device import FULL, _degree_bin, _popc, _u
from .layout import (A_COAL, A_CONF, A_DET, A_EDGES, A_GEN, A_TOP, A_UNDET, CULL_ENTRIES, HASH64, NEXT_SIZE,
                     OVERFLOW, R_HEAVY, WARP_CULL)


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

