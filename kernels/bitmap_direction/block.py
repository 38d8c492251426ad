"""bitmap-direction's block levels: levels run by one block with block barriers only, one or two a
level (kernels/bitmap_direction/kernel.py runs them: in block 0 of the search's grid while the levels
stay narrow, or in the one block of a small graph's launch, every level).

What a level costs here is its dependent memory round trips, so the block keeps what it can in
shared memory (dynamic, layout.block_words): the visited bitmap when it fits (its claims are
shared atomics: one global round trip a round of 32 edges, the adjacency load), on a small graph
its frontier bitmaps too, and the first entries of each frontier queue. A level:

1. the heavy vertices listed at the previous level's end, their edges as one flat range, and the
   frontier's other rows (edge-discover, `device.walk`), the first of each thread from registers
   when step 2 loaded them: claims append to the next queue (shared copy, the rest and every entry
   past its room in global memory) with no load on their path;
2. a barrier; then, unless the next frontier's size bounds its m_f under narrow_edges (below), each
   thread loads the rows of its entries of the next frontier: their degree sum is the next level's
   m_f (the rule's input), its heavy vertices are listed, and its first row stays in registers for
   step 1 of the next level; and a barrier;
3. every thread applies the rule (layout.decide) to the shared counts and takes the same
   decision, so that no barrier hands it out; the keeper, lane 0 of the last warp (the warp the
   frontier's entries reach last, often idle), keeps the search's state (`st`) and logs the level
   off warp 0's path; the block copies the log to the host when due.

Without heavy vertices (a graph whose largest degree is under heavy_degree), a next frontier of
n_f vertices has at most n_f * max_degree out-edges; when that is at most narrow_edges the rule
takes the next level narrow and top-down whatever its m_f (layout.decide), so step 2 is left out:
that level's expansion loads its rows and counts its m_f (its edges examined), from which its
record's m_f and the m_u left are completed at its end. On a road graph or a mesh that is every
level: one barrier a level.

A bottom-up level (a small graph's) runs on the shared bitmaps with one barrier; the top-down level
after it first turns the frontier bitmap into a queue. Counts rotate over three shared slots the
way the grid's do (level L counts into slot L % 3; the keeper clears slot L + 1 as L starts; the
heavy vertices of level L are listed in slot L - 1). The block enters with the search's state in
`st` and leaves with it there, its shared copies written back to global memory.
"""
from numba import cuda, int32, int64, uint32

from ..primitives import WARP_SIZE, uidx
from . import device as D
from . import layout as L

NUM_ACC = L.NUM_ACC


@cuda.jit(device=True)
def load_rows(g, s, p, src, size, team, acc):
    """The rows of frontier src's entries (`device.entry`), each warp taking device.spread of them
    at a time: their degree sum into acc[A_MF], their heavy vertices listed (device.list_heavy into
    hc[hat]); returns the row (vertex, first edge, degree) of this thread's entry in the first
    round, which `expand` takes from registers (0s for none). team = (me, threads, hc, hat).
    Collective."""
    me, threads, hc, hat = team
    lane = cuda.laneid
    warps = threads // WARP_SIZE
    per = D.spread(size, warps)
    u0 = int32(0)
    b0 = int64(0)
    d0 = int64(0)
    first = (me // WARP_SIZE) * per
    while first < size:  # warp-uniform
        i = first + lane
        u = int32(0)
        beg = int64(0)
        deg = int64(0)
        if lane < per and i < size:
            u = D.entry(src, i)
            beg = g.offsets[uidx(u)]
            deg = g.offsets[uidx(u + 1)] - beg
            acc[L.A_MF] += deg
        D.list_heavy(s, p, u, deg, hc, hat)
        if first < warps * per:
            u0, b0, d0 = u, beg, deg
        first += warps * per
    return u0, b0, d0


@cuda.jit(device=True)
def expand(g, s, p, row0, src, size, lv1, team, sink, acc):
    """A top-down level's light rows over the block, each warp taking device.spread entries at a
    time, the first round's rows from registers where load_rows loaded them (row0 = (vertex, first
    edge, degree, loaded)), the others loaded here, and walking their edges (device.walk); rows of
    heavy_degree or more were listed for `device.heavy`. team = (me, threads). Collective."""
    me, threads = team
    lane = cuda.laneid
    warps = threads // WARP_SIZE
    per = D.spread(size, warps)
    first = (me // WARP_SIZE) * per
    while first < size:  # warp-uniform
        if first < warps * per and row0[3]:
            u, beg, deg, _ = row0
        else:
            i = first + lane
            u = int32(0)
            beg = int64(0)
            deg = int64(0)
            if lane < per and i < size:
                u = D.entry(src, i)
                beg = g.offsets[uidx(u)]
                deg = g.offsets[uidx(u + 1)] - beg
        acc[L.A_EXAMINED] += deg
        if deg >= p.heavy_degree:
            deg = int64(0)
        D.walk(g, s, u, beg, deg, lv1, sink, acc)
        first += warps * per


@cuda.jit(device=True)
def _clear_slot(qc, hv, k, qcap):
    for f in range(L.QSLOT):
        qc[k * L.QSLOT + f] = 0
    qc[k * L.QSLOT + L.Q_STAGED + L.S_VALID] = qcap
    hv[k] = 0


@cuda.jit(device=True)
def _copy(dst, d0, src, s0, count):
    """dst[d0 + i] = src[s0 + i] for i < count, over the block."""
    i = cuda.threadIdx.x
    while i < count:
        dst[d0 + i] = src[s0 + i]
        i += cuda.blockDim.x


@cuda.jit(device=True)
def block_levels(g, s, p, st, sh, log, clocks, instrument):
    """Levels in this block while the rule keeps them narrow (a small graph: every level), from the
    state in st (the block's keeper keeps it here; the caller has passed a barrier since it was
    written). sh = (qc, hv, ws): shared int32[3 * QSLOT], int64[3] and int64[WS] for the counts;
    clocks: (a timing build, its level start). Ends with a barrier after the state, the log rows
    and the global copies are written."""
    qc, hv, ws = sh
    phases, t0 = clocks
    tid = cuda.threadIdx.x
    team = cuda.blockDim.x
    leader = tid == 0
    keeper = tid == team - WARP_SIZE  # the last warp's lane 0
    timed = phases and leader
    bits = cuda.shared.array(0, uint32)
    qs = cuda.shared.array(0, int32)  # the same memory: the queues' part of it
    acc = cuda.local.array(NUM_ACC, int64)
    for f in range(NUM_ACC):
        acc[f] = 0
    words = (p.n + 31) // 32
    small = p.small != 0
    sw = p.shared_words
    fr = sw  # a small graph's three frontier bitmaps
    qcap = p.qcap
    qb = fr + (3 * words if small else 0)  # two queues' first qcap entries
    vis = bits if sw > 0 else s.visited

    # Enter: the shared copies filled, the count slots cleared, the state in registers (every
    # thread takes the same decisions from the same counts: none waits for thread 0's).
    _copy(bits, 0, s.visited, 0, sw)
    if small:
        _copy(bits, fr, s.fronts, 0, 3 * words)
    if tid < 3:
        _clear_slot(qc, hv, tid, qcap)
    lv = st[L.T_LEVEL]
    size = st[L.T_SIZE]
    bu = st[L.T_BU] != 0
    queued = st[L.T_QUEUE] != 0
    qcur = st[L.T_QCUR]
    mu = st[L.T_MU_LEFT]
    nlev = st[L.T_NLEV]
    valid = int64(0)  # the frontier's entries in shared memory (the others are in global memory)
    cuda.syncthreads()
    u0 = int32(0)
    b0 = int64(0)
    d0 = int64(0)
    rows0 = False  # step 2 loaded the first round's rows (u0, b0, d0)
    bounded = p.max_degree < p.heavy_degree  # no heavy vertices: the bound (above) can apply
    late = False  # this frontier's m_f is counted by its own expansion (the bound took it narrow)
    if not bu:  # the first level's rows and heavy vertices, as a level's end finds them
        hk = (lv + 2) % 3
        shq = qs[qb + qcur * qcap:qb + (qcur + 1) * qcap]
        if not queued:  # a small graph's search launched again after a bottom-up level
            D.bits_to_queue(bits, fr + (lv % 3) * words, words, (shq, qcap, s.queues[qcur]), qc,
                            hk * L.QSLOT + L.Q_QUEUED, tid, team)
            valid = min(size, qcap)
            queued = True
            if keeper:
                st[L.T_CONV] = 1
            cuda.syncthreads()
        u0, b0, d0 = load_rows(g, s, p, (shq, valid, s.queues[qcur]), size, (tid, team, hv, hk), acc)
        rows0 = True
        acc[L.A_MF] = 0
        cuda.syncthreads()

    # The slots and rows of level L: L % 3, (L + 1) % 3, (L + 2) % 3, and L's parity, in 32-bit
    # registers rotated each level (no 64-bit remainders on the level's path).
    k = int32(lv % 3)
    k1 = int32((lv + 1) % 3)
    hk = int32((lv + 2) % 3)  # this level's heavy vertices were listed there
    par = int32(lv % 2)  # which set of ws this level's counts go to
    while True:
        qk = k * L.QSLOT
        cur = fr + k * words
        nb = fr + k1 * words
        lv1 = int32(lv + 1)
        if keeper:
            _clear_slot(qc, hv, k1, qcap)  # last read (by the keeper) as level L - 1's heavy vertices
        if small:
            D.clear_row(bits, fr + hk * words, words, tid, team)  # level L - 1 read it
        if timed:
            D.mark(s.rows, nlev, 0, t0)
        nvalid = int64(0)
        late_next = False
        if bu:
            D.bottom_up(g, s, p, (bits, cur, nb, bits), lv1, tid, team, acc, instrument)
            D.warp_counts(acc, ws, par, instrument)
            if timed:
                D.mark(s.rows, nlev, 1, t0)
            cuda.syncthreads()
            if timed:
                D.mark(s.rows, nlev, 2, t0)
            nsize = D.block_total(ws, par, L.A_FOUND)
            m_f = int64(1)  # GAP: after a bottom-up level the rule sees m_f = 1
        else:
            nq = 1 - qcur
            shq_next = qs[qb + nq * qcap:qb + (nq + 1) * qcap]
            sink = (vis, False, bits, nb, small, s.queues[nq], qc, qk + L.Q_NEXT, shq_next, qcap, qc,
                    qk + L.Q_STAGED, False)
            packed = hv[hk]
            if packed != 0:  # the same in every thread
                D.heavy(g, s, packed, lv1, (tid, team), sink, acc)
            src = (qs[qb + qcur * qcap:qb + (qcur + 1) * qcap], valid, s.queues[qcur])
            expand(g, s, p, (u0, b0, d0, rows0), src, size, lv1, (tid, team), sink, acc)
            if bounded:
                D.warp_counts(acc, ws, par, instrument)  # A_EXAMINED: this frontier's out-edges
            if timed:
                D.mark(s.rows, nlev, 1, t0)
            cuda.syncthreads()  # the next queue is complete
            if timed:
                D.mark(s.rows, nlev, 2, t0)
            nvalid = int64(min(qc[qk + L.Q_STAGED + L.S_STAGED], qc[qk + L.Q_STAGED + L.S_VALID]))
            nsize = nvalid + qc[qk + L.Q_NEXT]
            if late:  # this frontier's m_f, counted: the m_u left loses it now
                mu -= D.block_total(ws, par, L.A_EXAMINED)
            # The bound (above): the same in every thread. Not at the launch's last level, whose
            # successor the next launch starts from the state alone.
            late_next = bounded and nsize > 0 and nlev + 1 < p.log_rows and nsize * p.max_degree <= p.narrow_edges
            m_f = int64(0)  # under the bound, decide's answer for any m_f
            rows0 = not late_next
            if rows0:
                u0, b0, d0 = load_rows(g, s, p, (shq_next, nvalid, s.queues[nq]), nsize, (tid, team, hv, k), acc)
                if bounded:
                    D.warp_count(acc, ws, par, L.A_MF)
                else:
                    D.warp_counts(acc, ws, par, instrument)  # A_MF (the next rows), A_EXAMINED (this level's)
            if timed:
                D.mark(s.rows, nlev, 3, t0)
            if rows0:
                cuda.syncthreads()  # the next frontier's m_f and heavy vertices are counted
                m_f = D.block_total(ws, par, L.A_MF)
            if timed:
                D.mark(s.rows, nlev, 4, t0)
        next_bu, next_narrow, mu = D.decide(bu, m_f, mu, nsize, size, p.n, p.alpha, p.beta, p.narrow_edges, small)
        stop = nsize == 0 or nlev + 1 >= p.log_rows
        if tid >= team - WARP_SIZE:  # the keeper's warp: the level's record
            examined = D.block_total(ws, par, L.A_EDGES if bu else L.A_EXAMINED)
            tests = D.block_total(ws, par, L.A_TESTS) if instrument else int64(0)
            checked = D.block_total(ws, par, L.A_CHECKED) if instrument else int64(0)
            if keeper:
                if late:  # the record's m_f and the m_u left, now that the expansion counted it
                    st[L.T_MF] = examined
                    st[L.T_MU_LEFT] -= examined
                heavy_count = int64(0) if bu else hv[hk] >> L.HEAVY_SHIFT
                D.next_level(st, (nsize, m_f, examined, tests, checked, heavy_count), p, s.rows, True, True)
        if timed:
            D.mark(s.rows, nlev, 5, t0)
        if not bu:
            qcur = 1 - qcur
            valid = nvalid
        late = not bu and late_next
        queued = not bu
        bu = next_bu
        size = nsize
        lv += 1
        nlev += 1
        k, k1, hk = k1, hk, k
        par = int32(1) - par
        if not stop and nlev % L.PUBLISH_LEVELS == 0:  # the same in every thread: no barrier hands it out
            cuda.syncthreads()  # the keeper's rows and state are written
            D.publish(st, s.rows, log, True)
        if timed:
            D.mark(s.rows, nlev - 1, 6, t0)
        if stop or not next_narrow:
            if timed:
                D.mark(s.rows, nlev - 1, 7, t0)
                t0[0] = D.clock64()
            break
        if not queued and not bu:  # a top-down level after a bottom-up one: its bitmap into the queue
            shq = qs[qb + qcur * qcap:qb + (qcur + 1) * qcap]
            D.bits_to_queue(bits, fr + k * words, words, (shq, qcap, s.queues[qcur]), qc,
                            hk * L.QSLOT + L.Q_QUEUED, tid, team)
            valid = min(size, qcap)
            queued = True
            if keeper:  # after its next_level, which cleared the flag
                st[L.T_CONV] = 1
            cuda.syncthreads()
            u0, b0, d0 = load_rows(g, s, p, (shq, valid, s.queues[qcur]), size, (tid, team, hv, hk), acc)
            rows0 = True
            acc[L.A_MF] = 0
            cuda.syncthreads()
        if timed:
            D.mark(s.rows, nlev - 1, 7, t0)
            t0[0] = D.clock64()

    # Leave: the frontier's shared entries after its global ones, and the shared bitmaps, back into
    # global memory, where the grid (or the next launch) reads them.
    if queued and valid > 0:
        _copy(s.queues[qcur], size - valid, qs, qb + qcur * qcap, valid)
    _copy(s.visited, 0, bits, 0, sw)
    if small:
        _copy(s.fronts, 0, bits, fr, 3 * words)
    cuda.syncthreads()
