"""BFS-4K's level expansion: dynamic virtual warps (§5.2) and edge-discover (§5.4) over a
frontier, with heavy vertices set aside for their child grid (§5.3); _expand runs one of them
over the single block's shared frontier. The claims, filters, local queues and flushes are
kernels.frontier_ops'.

Groups (tuples) besides frontier_ops' (tree, claim mode, inst, filt, out, cl):
  src    (frontier, fbase, fsize, offsets, indices, rows64, rb_off, deg_off): the frontier's fsize
         entries at frontier[fbase:]; rb_off >= 0: their rows are in shared memory beside them
         (first edges at rows64[rb_off:], degrees at frontier[deg_off:], see single._load_rows),
         -1: read from offsets.
  heavy  a kernels.bfs4k.args.Heavy: a vertex of degree >= heavy.threshold (> 0) goes to the
         heavy list for its child grid instead (see _heavy_push).
  ops    (nxt, tree, mode, inst, filt, out, cl): what a visit and a flush of the level need.
"""
from numba import cuda, int32, int64

from ..frontier_ops import flush, visit, visit_pair
from ..primitives import warp_inclusive_scan, warp_search_owner
from .args import Heavy
from .device import A_EXT, FULL, _heavy_push, _popc, _u
from .layout import QLEN


@cuda.jit(device=True)
def _row(u, i, src):
    """First edge and end of frontier entry i (vertex u): from the single block's shared copy
    (rb_off >= 0, see _load_rows), else from global memory."""
    frontier, _, _, offsets, _, rows64, rb_off, deg_off = src
    if rb_off >= 0:
        beg = rows64[_u(rb_off + i)]
        return beg, beg + frontier[_u(deg_off + i)]
    return offsets[_u(u)], offsets[_u(u + 1)]


@cuda.jit(device=True)
def expand_virtual_warp(vw, W, src, heavy, ops, q, acc, binary, k7):
    """Dynamic virtual warps (§5.2): W lanes share frontier entry vw. Returns heavy (0/1).
    The single block (rb_off >= 0: rows in shared memory) takes two neighbours per lane and round."""
    frontier, fbase, fsize, _, indices, _, rb_off, _ = src
    heavy_thr = heavy.threshold
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
        u = frontier[_u(fbase + vw)]
        beg, end = _row(u, vw, src)
    u = cuda.shfl_sync(FULL, u, leader)
    beg = cuda.shfl_sync(FULL, beg, leader)
    end = cuda.shfl_sync(FULL, end, leader)
    n_heavy = 0
    if heavy_thr > 0 and end - beg >= heavy_thr:
        if l == 0:
            n_heavy = 1
            _heavy_push(u, end - beg, heavy.vertices, heavy.offsets, heavy.counter)
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
        v_next = indices[_u(e)]
    while cuda.any_sync(FULL, e < end):
        has = e < end
        v = v_next
        if has:
            e += W
            if e < end:
                v_next = indices[_u(e)]
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
    heavy_thr = heavy.threshold
    nxt, tree, mode, inst, filt, out, cl = ops
    lane = cuda.laneid
    idx = wid * 32 + lane
    u = int32(0)
    beg = int64(0)
    deg = int64(0)
    n_heavy = 0
    if idx < fsize:
        u = frontier[_u(fbase + idx)]
        beg, end = _row(u, idx, src)
        deg = end - beg
        if heavy_thr > 0 and deg >= heavy_thr:
            n_heavy = 1
            _heavy_push(u, deg, heavy.vertices, heavy.offsets, heavy.counter)
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
        qn = visit(has, v, o_u, ops, q, qn, acc)
        rounds = int32(rounds + 1)
        if rounds == QLEN:
            qn = flush(q, qn, out, binary, k7, acc, nxt, cl)
            rounds = int32(0)
        base += 32
        if cur_end <= base:
            cur = _popc(cuda.ballot_sync(FULL, incl <= base))
    flush(q, qn, out, binary, k7, acc, nxt, cl)
    return n_heavy


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
