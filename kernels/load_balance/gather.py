"""The mappings that give frontier entries (work-items) to threads directly: work-items to threads
(§5.1.1), static virtual warps (§5.1.2), local warp search (§5.3.2) and Merrill, Garland &
Grimshaw's CTA + warp + scan gathering (§5.2.2, Algorithm 9).

Static virtual warps and local warp search are the shared expansion operator's (kernels.expand:
expand_virtual_warp with the run's fixed W and no heavy path; expand_edge_discover, BFS-4K's
edge-discover, which is the chapter's local warp search in registers with warp shuffles, [15] in
§5.3.2), called here, not copied.

Every body has the signature body(lv, ops, hist, q, acc, sh, p1, p2):
  lv   (offsets, indices, frontier, fsize, prefix, parts): the graph and the level's frontier
       (prefix, parts: the prefix-sum pass's arrays, kernels.load_balance.search)
  ops  (nxt, graph, mode, inst, filt, out, cl), hist: see kernels.load_balance.device
  sh   (sh64, sh32, shv, n64, off_g32): the dynamic shared memory as int64 and int32 words, a small
       static int64 array (a block scan's scratch and the CTA phase's broadcast), the int64
       words in use and the int32 offset of the gather strip's parents (layout.shared_layout)
  p1, p2: the strategy's parameters (W; CTA_TH and WARP_TH; K and IS)
and is collective over the block: it returns after its warps' last flush.
"""
from numba import cuda, int32, int64

from ..args import Heavy
from ..expand import A_EXT, expand_edge_discover, expand_virtual_warp
from ..primitives import FULL_MASK, block_exclusive_scan, warp_sum
from .device import A_CTA, A_SEARCH, A_SEEN, A_WARPG, finish, step

# shv: [0, 32) a block scan's scratch; then the CTA phase's winner and its list.
_WINNER, _CTA_BEG, _CTA_END, _CTA_U = 32, 33, 34, 35
SHV_WORDS = 36


@cuda.jit(device=True)
def _degree(offsets, u):
    return offsets[u + 1] - offsets[u]


@cuda.jit(device=True)
def work_items(lv, ops, hist, q, acc, sh, p1, p2):
    """§5.1.1: thread i takes frontier entry i and walks its list alone; the warp runs as many
    rounds as its longest list (the divergence the chapter describes)."""
    offsets, indices, frontier, fsize = lv[0], lv[1], lv[2], lv[3]
    lane = cuda.laneid
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    qn = int32(0)
    rounds = int32(0)
    while i - lane < fsize:  # uniform over the warp
        u = int32(0)
        e = int64(0)
        end = int64(0)
        if i < fsize:
            u = frontier[i]
            e = offsets[u]
            end = offsets[u + 1]
        while cuda.any_sync(FULL_MASK, e < end):
            has = e < end
            v = int32(0)
            if has:
                v = indices[e]
                e += 1
            qn, rounds = step(has, v, u, ops, hist, q, qn, rounds, acc)
        i += stride
    finish(q, qn, ops, acc)


@cuda.jit(device=True)
def virtual_warps(lv, ops, hist, q, acc, sh, p1, p2):
    """§5.1.2, Algorithm 8: W = p1 lanes per frontier entry, lane l taking edges l, l + W, ...
    (BFS-4K's expand_virtual_warp with W fixed and no heavy path)."""
    offsets, indices, frontier, fsize = lv[0], lv[1], lv[2], lv[3]
    W = p1
    instrument = ops[3][0]
    src = (frontier, 0, fsize, offsets, indices, sh[0], -1, -1)  # rows from offsets
    no_heavy = Heavy(0, 0, frontier, frontier, frontier)
    wshift = int32(0)  # W is a power of two: shifts instead of divisions
    while (int32(1) << wshift) < W:
        wshift = int32(wshift + 1)
    gtid = cuda.grid(1)
    per_pass = cuda.gridsize(1) >> wshift
    wfirst = (gtid & ~31) >> wshift  # uniform over the warp: its lanes' virtual warps call together
    vbase = int64(0)
    while vbase + wfirst < fsize:
        vw = vbase + (gtid >> wshift)
        if instrument and (gtid & (W - 1)) == 0 and vw < fsize:
            acc[A_SEEN] += _degree(offsets, frontier[vw])  # expand_virtual_warp walks the whole list
        expand_virtual_warp(vw, W, src, no_heavy, ops, q, acc, False, 0)  # flushes at its end
        vbase += per_pass


@cuda.jit(device=True)
def local_warp_search(lv, ops, hist, q, acc, sh, p1, p2):
    """§5.3.2: a warp loads 32 frontier entries (coalesced), scans their degrees in registers and
    maps each round of 32 work-units to lanes by a shuffle binary search (BFS-4K's edge-discover,
    expand_edge_discover; a round inside one entry needs no search, BFS-4K's EXT)."""
    offsets, indices, frontier, fsize = lv[0], lv[1], lv[2], lv[3]
    instrument = ops[3][0]
    src = (frontier, 0, fsize, offsets, indices, sh[0], -1, -1)
    no_heavy = Heavy(0, 0, frontier, frontier, frontier)
    lane = cuda.laneid
    wid = cuda.grid(1) >> 5
    warps = cuda.gridsize(1) >> 5
    while wid * 32 < fsize:  # uniform over the warp
        if instrument:
            idx = wid * 32 + lane
            d = int64(0)
            if idx < fsize:
                d = _degree(offsets, frontier[idx])
            acc[A_SEEN] += d  # expand_edge_discover walks every unit of the warp's entries
            total = warp_sum(d)
            ext = acc[A_EXT]
            expand_edge_discover(wid, src, no_heavy, ops, q, acc, False, 0)
            if lane == 0:  # every lane searches in a round that is not EXT
                acc[A_SEARCH] += 32 * ((total + 31) // 32 - (acc[A_EXT] - ext))
        else:
            expand_edge_discover(wid, src, no_heavy, ops, q, acc, False, 0)
        wid += warps


@cuda.jit(device=True)
def cta_warp_scan(lv, ops, hist, q, acc, sh, cta_th, warp_th):
    """§5.2.2, Merrill et al.'s gathering of a tile of B frontier entries (a thread each), in three
    steps (Algorithm 9, strip-mined gathering):

    1. CTA: while some thread's list is longer than CTA_TH, those threads vie for the block (the
       last write of its id wins, row 3), the winner publishes its list (rows 5-8) and the whole
       block walks it, B lanes apart (rows 10-14); two block barriers a list.
    2. Warp: the same within each warp for lists longer than WARP_TH (a ballot picks the winner,
       no barrier).
    3. Scan: a block-wide prefix sum of the remaining degrees; each thread writes its edges' indices
       (and its vertex) into a shared strip of SCAN_STRIP x B entries, which the block then reads
       consecutively; strip after strip while the lists do not fit one.
    """
    offsets, indices, frontier, fsize = lv[0], lv[1], lv[2], lv[3]
    sh64, sh32, shv, strip, off_g32 = sh
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    lane = cuda.laneid
    qn = int32(0)
    rounds = int32(0)
    tile = int64(cuda.blockIdx.x) * B
    while tile < fsize:  # uniform over the block
        i = tile + tid
        u = int32(0)
        beg = int64(0)
        deg = int64(0)
        if i < fsize:
            u = frontier[i]
            beg = offsets[u]
            deg = offsets[u + 1] - beg
        # 1. CTA phase.
        while cuda.syncthreads_or(int32(deg > cta_th)):
            if deg > cta_th:
                shv[_WINNER] = tid
            cuda.syncthreads()
            if shv[_WINNER] == tid:
                shv[_CTA_BEG] = beg
                shv[_CTA_END] = beg + deg
                shv[_CTA_U] = u
                deg = 0
                acc[A_CTA] += 1
            cuda.syncthreads()
            cb = shv[_CTA_BEG]
            ce = shv[_CTA_END]
            cu = int32(shv[_CTA_U])
            e = cb + tid
            while e - tid < ce:  # uniform over the block
                has = e < ce
                v = int32(0)
                if has:
                    v = indices[e]
                qn, rounds = step(has, v, cu, ops, hist, q, qn, rounds, acc)
                e += B
            # The next round's syncthreads_or is the barrier before shv is written again.
        # 2. Warp phase.
        vote = cuda.ballot_sync(FULL_MASK, deg > warp_th)
        while vote != 0:
            w = int32(cuda.ffs(vote) - 1)
            wu = cuda.shfl_sync(FULL_MASK, u, w)
            wb = cuda.shfl_sync(FULL_MASK, beg, w)
            we = cuda.shfl_sync(FULL_MASK, beg + deg, w)
            if lane == w:
                deg = 0
                acc[A_WARPG] += 1
            e = wb + lane
            while e - lane < we:  # uniform over the warp
                has = e < we
                v = int32(0)
                if has:
                    v = indices[e]
                qn, rounds = step(has, v, wu, ops, hist, q, qn, rounds, acc)
                e += 32
            vote = cuda.ballot_sync(FULL_MASK, deg > warp_th)
        # 3. Scan phase.
        excl, total = block_exclusive_scan(deg, shv)  # ends with a barrier: shv is free again
        done = int64(0)
        while done < total:  # uniform over the block
            lo = max(excl, done)
            hi = min(excl + deg, done + strip)
            for k in range(lo, hi):
                sh64[k - done] = beg + (k - excl)
                sh32[off_g32 + k - done] = u
            cuda.syncthreads()
            n = min(strip, total - done)
            j = int64(tid)
            while j - tid < n:  # uniform over the block
                has = j < n
                v = int32(0)
                pu = int32(0)
                if has:
                    v = indices[sh64[j]]
                    pu = sh32[off_g32 + j]
                qn, rounds = step(has, v, pu, ops, hist, q, qn, rounds, acc)
                j += B
            cuda.syncthreads()
            done += strip
        tile += int64(cuda.gridDim.x) * B
    finish(q, qn, ops, acc)
