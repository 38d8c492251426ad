"""A visit and the next frontier: device building blocks of top-down expansion, shared by the
techniques' kernels.

One candidate neighbour per lane goes from the claim to the next frontier: the visiting rule
(kernels.claims: the benign race of BFS-4K, compare-and-swap, or a visited bitmap in shared
memory), a duplicate filter (kernels.filters: BFS-4K's hash64, §6, or Merrill, Garland &
Grimshaw's warp culling), the per-thread local queue, and its flush into the next frontier with
warp prefix sums (BFS-4K §5.1), coalesced when the warp's shortest queue is long enough (§5.6).
The expansion strategies (kernels.expand, kernels.load_balance) hand their candidates to `visit`.

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
from numba import cuda, int32, int64, uint32

from .claims import claim, claim_pair
from .cluster import cluster_add, cluster_map, cluster_store
from .filters import A_CONF, A_DET, A_GEN, A_UNDET, hash64, warp_cull
from .primitives import FULL_MASK, popc, uidx, warp_inclusive_scan, warp_min
from .rules import HASH64, WARP_CULL, degree_bin

# Slots of the per-thread accumulators `acc`: kernels.filters' (A_GEN, A_DET, A_CONF, A_UNDET), then
A_COAL = 4  # flushes written with induced coalescence (counted by lane 0)
NUM_ACC = 5
# With a cluster context the claimers also sum the degrees of what they put and keep the
# largest: the next frontier's statistics, ready when the level's cluster barrier has passed.
A_EDGES, A_TOP = 5, 6
NUM_ACC_CLUSTER = 7

_degree_bin = cuda.jit(device=True)(degree_bin)


@cuda.jit(device=True)
def no_cluster(offsets, arr):
    """The cluster context `cl` outside a thread-block cluster: cl[0] = -1, the rest (of the
    cluster kernel's types) never read; a constant, so the cluster paths compile away. In a
    cluster of C blocks: (log2 C; the shared-window address of the block's slice of the visited
    bitmap; the mapped address of the next frontier's counter (in block 0); the shared-window
    addresses of F_d_new, of its first edges (int64) and of its degrees; offsets; the heavy-vertex
    degree; the level's heavy-vertex bins (int32, per degree bin))."""
    return (int32(-1), uint32(0), uint32(0), uint32(0), uint32(0), uint32(0), offsets, int64(0), arr)


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
        ballot = cuda.ballot_sync(FULL_MASK, qn > 0)
        excl = int64(popc(ballot & cuda.lanemask_lt()))
        total = int64(popc(ballot))
    else:
        incl = warp_inclusive_scan(qn)
        total = cuda.shfl_sync(FULL_MASK, incl, 31)
        excl = incl - qn
    if total == 0:
        return int32(0)
    base = int64(0)
    if lane == 0:
        if cl[0] >= 0:
            base = int64(cluster_add(cl[2], int32(total)))
        else:
            base = int64(cuda.atomic.add(counters, size_slot, int32(total)))
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    m = 0
    # The shortest queue reaches K7 exactly when every lane's does: one vote before the reduction.
    if k7 > 0 and not binary and cuda.all_sync(FULL_MASK, qn >= k7):
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
