"""Device building blocks of top-down frontier expansion, shared by the techniques.

One candidate neighbour per lane goes from the claim to the next frontier: the visiting rule (the
benign race of BFS-4K, compare-and-swap, or a visited bitmap in shared memory), a duplicate filter
(BFS-4K's hash64, §6, or Merrill, Garland & Grimshaw's warp culling), the per-thread local queue,
and its flush into the next frontier with warp prefix sums (BFS-4K §5.1), coalesced when the
warp's shortest queue is long enough (§5.6). BFS-4K (kernels.bfs4k) is built on them; the coming
techniques (Merrill's CTA+warp+scan, Luo's hierarchical queues, static virtual warps) can be too.

Every function here is collective: all 32 lanes of the warp call it together (a lane without a
candidate passes has = False), which is what the votes, shuffles and syncwarps need.

Arguments come in groups (tuples; Numba inlines the device functions, so a group costs nothing
over its members):

  tree   (dist, parent)                     the BFS tree: level and parent of every vertex (int32;
                                            the kernels' kernels.args.Tree)
  claim  (atomic, latency_bound, bits, bm_off)
         atomic: compare-and-swap on dist (else the paper's read-then-write race, which lets lanes
         and warps that see v unvisited together all keep it: duplicates); latency_bound: skip the
         read before the compare-and-swap (a single block waits on every round trip, a grid has
         other warps to run meanwhile); bm_off >= 0: the visited flags are bits of bits[bm_off:]
         (int32 shared memory), claimed by atomic OR, and level and parent are logged instead of
         written (the queue keeps a row of parents, see put); -1: dist[v] != -1 is visited.
  inst   (instrument, stamp, stamp2)        ground truth of duplicates: stamp[v] (stamp2[v]) = the
         level of v's last claim (of v's last copy past the filter); int32, -1 filled.
  filt   (dedup, table, hmask, tid, cull, cull_base)
         dedup: NO_DEDUP, HASH64 or WARP_CULL (kernels.rules); hash64: table (int64 shared, hmask + 1
         entries, one per block), tid the thread's id in the block; warp culling: cull[cull_base:
         cull_base + CULL_ENTRIES] (int32 shared, the warp's own table, -1 filled).
  out    (queue, cap, counters, size_slot, overflow_slot, sh_out, sh_base, sh_cap, log_base)
         the next frontier: counters[size_slot] reserves positions, a position p >= cap is refused
         and reported in counters[overflow_slot] (the host raises; never silently truncated);
         positions below sh_cap are also copied to sh_out[sh_base + p] (a single block's shared
         F_d_new; sh_cap = 0: none); log_base >= 0: queue is a visit log instead, three rows of cap
         entries (vertex, parent, level), position p at entry log_base + p.
  cl     the cluster context: no_cluster(...) everywhere but a thread-block cluster (see there).
  ops    (nxt, tree, claim, inst, filt, out, cl): all of a level's groups, nxt its next level.

Per-thread counts go to `acc`, a local int64 array of at least NUM_ACC entries (NUM_ACC_CLUSTER
with a cluster context); a caller's own counts follow in the slots after them.
"""
from numba import cuda, int32, int64, uint32, uint64

from .cluster import cluster_add, cluster_map, cluster_or, cluster_store
from .primitives import warp_inclusive_scan, warp_min
from .rules import CULL_ENTRIES, HASH64, WARP_CULL, degree_bin

FULL = 0xFFFFFFFF

# Slots of the per-thread accumulators `acc`.
A_GEN = 0  # duplicates generated: claims of a vertex already claimed in this level (instrument)
A_DET = 1  # duplicates the filter dropped
A_CONF = 2  # filter conflicts: another vertex held the slot, the candidate was kept
A_UNDET = 3  # duplicates that passed the filter (instrument)
A_COAL = 4  # flushes written with induced coalescence (counted by lane 0)
NUM_ACC = 5
# With a cluster context the claimers also sum the degrees of what they put and keep the
# largest: the next frontier's statistics, ready when the level's cluster barrier has passed.
A_EDGES, A_TOP = 5, 6
NUM_ACC_CLUSTER = 7

_degree_bin = cuda.jit(device=True)(degree_bin)


@cuda.jit(device=True)
def uidx(i):
    """An index known to be >= 0, as unsigned: Numba then skips the negative-index wraparound
    (a compare, a select and a 64-bit add on every access of the hot loops)."""
    return uint64(i)


@cuda.jit(device=True)
def popc(x):
    return cuda.popc(uint32(x))


@cuda.jit(device=True)
def no_cluster(offsets, arr):
    """The cluster context `cl` outside a thread-block cluster: cl[0] = -1, the rest (of the
    cluster kernel's types) never read; a constant, so the cluster paths compile away. In a
    cluster of C blocks: (log2 C; the shared-window address of the block's slice of the visited
    bitmap; the mapped address of the next frontier's counter (in block 0); the shared-window
    addresses of F_d_new, of its first edges (int64) and of its degrees; offsets; the heavy-vertex
    degree; the level's heavy-vertex bins (int32, per degree bin))."""
    return (int32(-1), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), offsets, int64(0), arr)


# ------------------------------------------------------------------------------ claim
@cuda.jit(device=True)
def _mark(found, v, u, nxt, tree):
    """Level and parent of a vertex this lane claimed without compare-and-swap."""
    dist, parent = tree
    if found:
        dist[uidx(v)] = nxt
        parent[uidx(v)] = u


@cuda.jit(device=True)
def claim(has_edge, v, u, nxt, tree, mode, cl):
    """The visiting rule for v, reached from u, at level nxt (claim group `mode`). Collective.
    Returns (this lane claimed v, some lane of the warp claimed something)."""
    dist, parent = tree
    atomic_claim, latency_bound, bitmap, bm_off = mode
    if bm_off >= 0:
        found = claim_bit(has_edge, v, bitmap, bm_off, cl)  # level and parent go to the visit log
        return found, cuda.any_sync(FULL, found)
    if atomic_claim:
        # Reading first spares the atomic unit most compare-and-swaps (most neighbours are
        # visited); a latency-bound caller (the single block) saves the read's round trip instead.
        found = has_edge and (latency_bound or dist[uidx(v)] == -1) and cuda.atomic.cas(dist, uidx(v), -1, nxt) == -1
        if found:
            parent[uidx(v)] = u
        return found, cuda.any_sync(FULL, found)
    # The paper's rule: read, then write. The vote is the lock step: every lane has read before
    # any writes, so lanes (and other warps) that find v unvisited all enqueue it: duplicates.
    # Each writes the same distance and a valid parent (its own frontier vertex).
    unvisited = has_edge and dist[uidx(v)] == -1
    anyone = cuda.any_sync(FULL, unvisited)
    _mark(unvisited, v, u, nxt, tree)
    return unvisited, anyone


@cuda.jit(device=True)
def claim_bit(has_edge, v, bitmap, bm_off, cl):
    """Test-and-set v's bit in the shared visited bitmap: True for the one lane that set it. In a
    cluster (cl[0] = log2 of its blocks) word w of the bitmap lives in block w mod C."""
    if not has_edge:
        return False
    bit = int32(uint32(1) << uint32(v & 31))
    if cl[0] >= 0:
        w = v >> 5
        old = cluster_or(cluster_map(cl[1] + 4 * (w >> cl[0]), w & ((1 << cl[0]) - 1)), bit)
    else:
        old = cuda.atomic.or_(bitmap, uidx(bm_off + (v >> 5)), bit)
    return (old & bit) == 0


@cuda.jit(device=True)
def claim_pair(has_a, va, has_b, vb, u, nxt, tree, mode, cl):
    """The visiting rule for two candidates of each lane, their memory accesses issued back to
    back: the second is in flight before the first returns (for a latency-bound caller: its
    compare-and-swaps skip the read). Collective. Returns (lane claimed va, lane claimed vb, some
    lane claimed something)."""
    dist, parent = tree
    atomic_claim, _, bitmap, bm_off = mode
    if bm_off >= 0:
        fa = claim_bit(has_a, va, bitmap, bm_off, cl)  # level and parent go to the visit log
        fb = claim_bit(has_b, vb, bitmap, bm_off, cl)
        return fa, fb, cuda.any_sync(FULL, fa or fb)
    if atomic_claim:
        ra = int32(0)
        rb = int32(0)
        if has_a:
            ra = cuda.atomic.cas(dist, uidx(va), -1, nxt)
        if has_b:
            rb = cuda.atomic.cas(dist, uidx(vb), -1, nxt)
        fa = has_a and ra == -1
        fb = has_b and rb == -1
        if fa:
            parent[uidx(va)] = u
        if fb:
            parent[uidx(vb)] = u
        return fa, fb, cuda.any_sync(FULL, fa or fb)
    # The paper's rule, as in claim: every lane reads both before any lane writes.
    da = int32(0)
    db = int32(0)
    if has_a:
        da = dist[uidx(va)]
    if has_b:
        db = dist[uidx(vb)]
    fa = has_a and da == -1
    fb = has_b and db == -1
    anyone = cuda.any_sync(FULL, fa or fb)
    _mark(fa, va, u, nxt, tree)
    _mark(fb, vb, u, nxt, tree)
    return fa, fb, anyone


# ------------------------------------------------------------------------------ duplicate filters
@cuda.jit(device=True)
def hash64(table, hmask, has, v, tid):
    """BFS-4K §6, Fig. 11: store merge(v, thread_id) at hash(v), read it back. 0 valid, 1
    duplicate, 2 conflict. Collective.

    The lanes of a warp all store before any reads back, as in lock step, which is what lets the
    paper classify duplicates made inside a warp; the table is the block's, so a duplicate made by
    another warp of the block is caught when the stores and loads interleave that way. Atomics
    make the store and the read real shared-memory accesses (a plain load could be forwarded from
    the thread's own store). The last writer of v always reads itself back, so no vertex loses
    every copy.
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
def warp_cull(cull, base, has, v, lane):
    """Merrill et al.'s warp culling: the warp's own 128-entry table, two rounds of vie. 0 keep,
    1 duplicate, 2 conflict (another vertex holds the slot). Collective.

    It sees only copies of v that lanes of this warp hold at this call: a duplicate made by
    another warp, or by this warp in another round, passes (with virtual warps of 32 lanes a warp
    expands one vertex, whose neighbours are distinct: nothing to cull).
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


# ------------------------------------------------------------------------------ local queue
@cuda.jit(device=True)
def enqueue(found, v, u, nxt, inst, filt, q, qn, acc, with_parent):
    """What follows a claim: the duplicates' ground truth, the filter, the local queue (q[0]:
    vertices; q[1], when with_parent: their parents, for a visit log). Collective; returns the
    queue's new length."""
    instrument, stamp, stamp2 = inst
    dedup, table, hmask, tid, cull, cull_base = filt
    if found:
        if instrument and cuda.atomic.exch(stamp, v, nxt) == nxt:
            acc[A_GEN] += 1  # ground truth: v was already claimed in this level
    keep = found
    if dedup == HASH64:
        r = hash64(table, hmask, found, v, tid)
        if found:
            if r == 1:
                keep = False
                acc[A_DET] += 1
            elif r == 2:
                acc[A_CONF] += 1
    elif dedup == WARP_CULL:
        r = warp_cull(cull, cull_base, found, v, cuda.laneid)
        if r == 1:
            keep = False
            acc[A_DET] += 1
        elif r == 2:
            acc[A_CONF] += 1
    if keep:
        if instrument and cuda.atomic.exch(stamp2, v, nxt) == nxt:
            acc[A_UNDET] += 1  # a copy of v already passed the filter
        q[0, qn] = v
        if with_parent:
            q[1, qn] = u
        qn = int32(qn + 1)  # 32-bit queue lengths: the flush's scan then shuffles one word, not two
    return qn


@cuda.jit(device=True)
def visit(has_edge, v, u, ops, q, qn, acc):
    """Claim, count, filter and queue one candidate per lane (the level's groups in `ops`).
    Collective; returns the queue's length (it gains at most one entry)."""
    nxt, tree, mode, inst, filt, _, cl = ops
    found, anyone = claim(has_edge, v, u, nxt, tree, mode, cl)
    if not anyone:
        return qn  # warp-uniform: most rounds of late levels find only visited vertices
    return enqueue(found, v, u, nxt, inst, filt, q, qn, acc, mode[3] >= 0)


@cuda.jit(device=True)
def visit_pair(has_a, va, has_b, vb, u, ops, q, qn, acc):
    """visit for two candidates per lane, both claims in flight together (see claim_pair).
    Collective; the queue gains up to two entries."""
    nxt, tree, mode, inst, filt, _, cl = ops
    fa, fb, anyone = claim_pair(has_a, va, has_b, vb, u, nxt, tree, mode, cl)
    if not anyone:
        return qn
    qn = enqueue(fa, va, u, nxt, inst, filt, q, qn, acc, mode[3] >= 0)
    return enqueue(fb, vb, u, nxt, inst, filt, q, qn, acc, mode[3] >= 0)


# ------------------------------------------------------------------------------ flush
@cuda.jit(device=True)
def flush(q, qn, out, binary, k7, acc, nxt, cl):
    """Write the warp's local queues to the next frontier (BFS-4K §5.1, §5.6). Collective;
    returns 0 (the queues' new length).

    binary: every lane holds at most one vertex (§5.1's ballot/popc scan instead of shuffles).
    k7 > 0: when every lane holds at least k7 vertices, round k writes every lane's k-th vertex
    side by side (induced coalescence, counted in acc[A_COAL]). In a cluster (cl[0] >= 0)
    positions are the cluster's, reserved in block 0's counter (see put_cluster)."""
    counters, size_slot = out[2], out[3]
    log_base = out[8]
    lane = cuda.laneid
    if binary:
        ballot = cuda.ballot_sync(FULL, qn > 0)
        excl = int64(popc(ballot & cuda.lanemask_lt()))
        total = int64(popc(ballot))
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
            base = int64(cuda.atomic.add(counters, size_slot, int32(total)))
    base = cuda.shfl_sync(FULL, base, 0)
    m = 0
    # The shortest queue reaches K7 exactly when every lane's does: one vote before the reduction.
    if k7 > 0 and not binary and cuda.all_sync(FULL, qn >= k7):
        m = warp_min(qn)
    if m > 0:
        if lane == 0:
            acc[A_COAL] += 1
        for k in range(m):
            put(out, base + k * 32 + lane, q[0, k], _parent(q, k, log_base), nxt, acc, cl)
        pos = base + m * 32 + excl - m * lane
        for k in range(m, qn):
            put(out, pos + k - m, q[0, k], _parent(q, k, log_base), nxt, acc, cl)
    else:
        for k in range(qn):
            put(out, base + excl + k, q[0, k], _parent(q, k, log_base), nxt, acc, cl)
    return int32(0)


@cuda.jit(device=True)
def _parent(q, k, log_base):
    # Only a queue feeding a visit log has a row of parents.
    return q[1, k] if log_base >= 0 else int32(0)


@cuda.jit(device=True)
def put(out, pos, v, p, nxt, acc, cl):
    """Next-frontier position pos holds v (parent p, level nxt: for a visit log), see the out
    group. Positions past the capacity are reported, never silently dropped."""
    queue, cap, counters, _, overflow_slot, sh_out, sh_base, sh_cap, log_base = out
    if log_base >= 0:
        # Coalesced, like the queue: the scattered writes of dist and parent come later.
        i = log_base + pos
        if i < cap:
            queue[uidx(i)] = v
            queue[uidx(cap + i)] = p
            queue[uidx(2 * cap + i)] = nxt
        else:
            cuda.atomic.max(counters, overflow_slot, min(i + 1, 0x7FFFFFFF))
    elif pos < cap:
        queue[pos] = v
    else:
        cuda.atomic.max(counters, overflow_slot, min(pos + 1, 0x7FFFFFFF))
    if cl[0] >= 0:
        put_cluster(cl, pos, v, sh_cap, acc)
    elif pos < sh_cap:
        sh_out[uidx(sh_base + pos)] = v


@cuda.jit(device=True)
def put_cluster(cl, pos, v, sh_cap, acc):
    """Next-frontier entry `pos` in a cluster: the 32-entry chunk pos // 32 belongs to block
    chunk mod C, which will expand it, so the claimer writes it there (a store into another SM's
    shared memory costs the claimer nothing it waits for) with its row: first edge and degree,
    loaded here, where the load is one of many in flight. The degree goes into the claimer's
    statistics of the next frontier (sum, maximum, heavy bins)."""
    shift = cl[0]
    offsets = cl[6]
    beg = offsets[uidx(v)]
    deg = int32(offsets[uidx(v + 1)] - beg)
    acc[A_EDGES] += deg
    if deg > acc[A_TOP]:
        acc[A_TOP] = deg
    if deg >= cl[7]:
        b = _degree_bin(deg)
        if (int64(1) << b) >= cl[7]:
            cuda.atomic.add(cl[8], b, int32(1))
    chunk = pos >> 5
    i = ((chunk >> shift) << 5) | (pos & 31)
    if i < sh_cap:
        owner = chunk & ((1 << shift) - 1)
        cluster_store(cluster_map(cl[3] + 4 * i, owner), v)
        cluster_store(cluster_map(cl[4] + 8 * i, owner), int32(beg & 0xFFFFFFFF))
        cluster_store(cluster_map(cl[4] + 8 * i + 4, owner), int32(beg >> 32))
        cluster_store(cluster_map(cl[5] + 4 * i, owner), deg)
