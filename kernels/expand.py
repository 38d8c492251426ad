"""The expansion strategies of BFS-4K, shared by the techniques' kernels (the advance operator):
dynamic virtual warps (§5.2; with W fixed, the static virtual warps of Hong et al., the chapter's
§5.1.2) and edge-discover (§5.4; the chapter's local warp search, §5.3.2) over a frontier, with
heavy vertices set aside for their child grid (§5.3: the list and its walk). BFS-4K's kernels,
the load-balancing catalogue (kernels.load_balance) and direction-optimizing's grid
(kernels.direction) expand with them. The claims, filters, local queues and flushes are
kernels.frontier_ops'.

Groups (tuples) besides frontier_ops' (tree, claim mode, inst, filt, out, cl):
  src    (frontier, fbase, fsize, offsets, indices, rows64, rb_off, deg_off): the frontier's fsize
         entries at frontier[fbase:]; rb_off >= 0: their rows are in shared memory beside them
         (first edges at rows64[rb_off:], degrees at frontier[deg_off:], see
         kernels.bfs4k.single._load_rows), -1: read from offsets.
  heavy  a kernels.args.Heavy: a vertex of degree >= heavy.heavy_degree (> 0) goes to the heavy list for its
         child grid instead (see heavy_push).
  ops    (nxt, tree, mode, inst, filt, out, cl): what a visit and a flush of the level need.
"""
from numba import cuda, int32, int64

from .frontier_ops import NUM_ACC_CLUSTER, flush, visit, visit_pair
from .primitives import FULL_MASK, popc, uidx, warp_inclusive_scan, warp_search_owner
from .rules import QLEN

#: The expansion's own per-thread count after frontier_ops' slots: edge-discover rounds that
#: needed no search (EXT).
A_EXT = NUM_ACC_CLUSTER
NUM_ACC = A_EXT + 1  # the accumulators of a kernel that expands with these (cluster slots included)


@cuda.jit(device=True)
def heavy_push(u, deg, heavy_v, heavy_off, heavy_ctr):
    # One 64-bit atomic gives both the slot and the vertex's first edge in the flat edge space,
    # so slots come out sorted by offset and the child grid can binary-search them.
    old = cuda.atomic.add(heavy_ctr, 0, (int64(1) << 40) | int64(deg))
    slot = old >> 40
    heavy_v[slot] = u
    heavy_off[slot] = old & ((int64(1) << 40) - 1)


@cuda.jit(device=True)
def heavy_slot(heavy_off, count, x):
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


@cuda.jit(device=True)
def heavy_entry(offsets, heavy_v, heavy_off, count, total, s):
    """Heavy slot s of `count` (`total` flat edges) as a walk needs it: (the end of its flat edges,
    its vertex, and what turns a flat edge x of it into its edge: row + x)."""
    u = heavy_v[s]
    return heavy_off[s + 1] if s + 1 < count else total, u, offsets[u] - heavy_off[s]


@cuda.jit(device=True)
def _row(u, i, src):
    """First edge and end of frontier entry i (vertex u): from the single block's shared copy
    (rb_off >= 0, see _load_rows), else from global memory."""
    frontier, _, _, offsets, _, rows64, rb_off, deg_off = src
    if rb_off >= 0:
        beg = rows64[uidx(rb_off + i)]
        return beg, beg + frontier[uidx(deg_off + i)]
    return offsets[uidx(u)], offsets[uidx(u + 1)]


@cuda.jit(device=True)
def expand_virtual_warp(vw, W, src, heavy, ops, q, acc, binary, k7):
    """Dynamic virtual warps (§5.2): W lanes share frontier entry vw. Returns heavy (0/1).
    The single block (rb_off >= 0: rows in shared memory) takes two neighbours per lane and round."""
    frontier, fbase, fsize, _, indices, _, rb_off, _ = src
    heavy_degree = heavy.heavy_degree
    nxt, tree, mode, inst, filt, out, cl = ops
    lane = cuda.laneid
    l = lane & (W - 1)
    leader = lane - l
    single = rb_off >= 0
    u = int32(0)
    beg = int64(0)
    end = int64(0)
    if l == 0 and vw < fsize:
        # §5.6 reads: the leader loads the vertex and its row once, shuffles share them.
        u = frontier[uidx(fbase + vw)]
        beg, end = _row(u, vw, src)
    u = cuda.shfl_sync(FULL_MASK, u, leader)
    beg = cuda.shfl_sync(FULL_MASK, beg, leader)
    end = cuda.shfl_sync(FULL_MASK, end, leader)
    n_heavy = 0
    if heavy_degree > 0 and end - beg >= heavy_degree:
        if l == 0:
            n_heavy = 1
            heavy_push(u, end - beg, heavy.vertices, heavy.offsets, heavy.counter)
        end = beg
    e = beg + l
    qn = int32(0)
    rounds = int32(0)
    if single:
        # The single block: two neighbours per lane and round, claimed together.
        while cuda.any_sync(FULL_MASK, e < end):
            has_a = e < end
            has_b = e + W < end
            va = int32(0)
            vb = int32(0)
            if has_a:
                va = indices[uidx(e)]
            if has_b:
                vb = indices[uidx(e + W)]
            e += W + W
            qn = visit_pair(has_a, va, has_b, vb, u, ops, q, qn, acc)
            rounds = int32(rounds + 1)
            if rounds == QLEN // 2:  # a lane gains at most two vertices a round
                qn = flush(q, qn, out, binary, k7, acc, nxt, cl)
                rounds = int32(0)
        flush(q, qn, out, binary, k7, acc, nxt, cl)
        return n_heavy
    # Each round loads the next round's neighbour before visiting this one: the load is in
    # flight during the claim instead of after it.
    v_next = int32(0)
    if e < end:
        v_next = indices[uidx(e)]
    while cuda.any_sync(FULL_MASK, e < end):
        has = e < end
        v = v_next
        if has:
            e += W
            if e < end:
                v_next = indices[uidx(e)]
        qn = visit(has, v, u, ops, q, qn, acc)
        rounds = int32(rounds + 1)
        if rounds == QLEN:  # a lane gains at most one vertex a round: its queue may be full now
            qn = flush(q, qn, out, binary, k7, acc, nxt, cl)
            rounds = int32(0)
    flush(q, qn, out, binary, k7, acc, nxt, cl)
    return n_heavy


@cuda.jit(device=True)
def expand_edge_discover(wid, src, heavy, ops, q, acc, binary, k7):
    """Edge-discover (§5.4): a warp's 32 lanes are spread over the edges of the 32 frontier
    entries from wid * 32. Returns how many of the warp's vertices took the heavy path on this
    lane (0/1)."""
    frontier, fbase, fsize, _, indices, _, _, _ = src
    heavy_degree = heavy.heavy_degree
    nxt, tree, mode, inst, filt, out, cl = ops
    lane = cuda.laneid
    idx = wid * 32 + lane
    u = int32(0)
    beg = int64(0)
    deg = int64(0)
    n_heavy = 0
    if idx < fsize:
        u = frontier[uidx(fbase + idx)]
        beg, end = _row(u, idx, src)
        deg = end - beg
        if heavy_degree > 0 and deg >= heavy_degree:
            n_heavy = 1
            heavy_push(u, deg, heavy.vertices, heavy.offsets, heavy.counter)
            deg = 0
    incl = warp_inclusive_scan(deg)
    total = cuda.shfl_sync(FULL_MASK, incl, 31)
    base = int64(0)
    qn = int32(0)
    rounds = int32(0)
    cur = popc(cuda.ballot_sync(FULL_MASK, incl <= 0))  # owner of item 0
    while base < total:
        cur_end = cuda.shfl_sync(FULL_MASK, incl, cur & 31)
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
        o_u = cuda.shfl_sync(FULL_MASK, u, owner)
        o_beg = cuda.shfl_sync(FULL_MASK, beg, owner)
        o_excl = cuda.shfl_sync(FULL_MASK, incl - deg, owner)
        k = base + lane
        has = k < total
        v = int32(0)
        if has:
            v = indices[uidx(o_beg + (k - o_excl))]
        qn = visit(has, v, o_u, ops, q, qn, acc)
        rounds = int32(rounds + 1)
        if rounds == QLEN:
            qn = flush(q, qn, out, binary, k7, acc, nxt, cl)
            rounds = int32(0)
        base += 32
        if cur_end <= base:
            cur = popc(cuda.ballot_sync(FULL_MASK, incl <= base))
    flush(q, qn, out, binary, k7, acc, nxt, cl)
    return n_heavy
