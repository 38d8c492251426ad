"""Device helpers every load-balancing strategy shares: one candidate per lane through the claim,
Merrill et al.'s culls and the local queue (`step`), the binary search of work-units in a prefix
sum (`owner`), and the block's counts (`start_block`, `publish`).

The claim (kernels.claims), the culls (kernels.filters: warp culling, history culling), the
local queue and its flush (kernels.frontier_ops) are the shared operators'. Groups as in
frontier_ops, plus

  hist  (table, off, hmask): history culling in table[off:off + hmask + 1] (int32 shared, the
        block's, -1 filled); off < 0: none.

The accumulators `acc` hold kernels.expand's slots (its edge-discover loop, which local-warp
search runs, counts there) and this module's slots after them.
"""
from numba import cuda, int32, int64

from ..claims import claim
from ..expand import NUM_ACC as EXPAND_ACC
from ..filters import A_CONF, A_DET, A_GEN, A_UNDET, history_cull
from ..frontier_ops import enqueue, flush
from .layout import (CTA_GATHERED, CULL_CONFLICTS, DUP_GENERATED, EDGES, HISTORY_CULLED, NUM_COUNTERS, QLEN,
                     SEARCHES, UNDETECTED, WARP_CULLED, WARP_GATHERED)

A_SEEN = EXPAND_ACC  # adjacency entries inspected (instrument)
A_HIST = A_SEEN + 1  # copies history culling dropped
A_CTA = A_SEEN + 2  # vertices the CTA phase gathered
A_WARPG = A_SEEN + 3  # vertices the warp phase gathered
A_SEARCH = A_SEEN + 4  # binary searches (instrument)
NUM_ACC = A_SEEN + 5

# acc slot -> counter slot, for `publish`.
_SLOTS = ((A_GEN, DUP_GENERATED), (A_DET, WARP_CULLED), (A_CONF, CULL_CONFLICTS), (A_UNDET, UNDETECTED),
          (A_SEEN, EDGES), (A_HIST, HISTORY_CULLED), (A_CTA, CTA_GATHERED), (A_WARPG, WARP_GATHERED),
          (A_SEARCH, SEARCHES))


@cuda.jit(device=True)
def step(has, v, u, ops, hist, q, qn, rounds, acc):
    """One round of candidates, one per lane (has: this lane holds v, reached from u): claim,
    history and warp culling, local queue; the queues are flushed every QLEN rounds. Collective;
    returns (queue length, rounds since the last flush)."""
    nxt, tree, mode, inst, filt, out, cl = ops
    if inst[0] and has:
        acc[A_SEEN] += 1
    found, anyone = claim(has, v, u, nxt, tree, mode, cl)
    if anyone:
        if hist[1] >= 0:
            found = history_cull(found, v, nxt, hist, inst, acc, A_HIST)
        qn = enqueue(found, v, u, nxt, inst, filt, q, qn, acc, False)
    rounds = int32(rounds + 1)
    if rounds == QLEN:  # a lane gains at most one vertex a round: its queue may be full now
        qn = flush(q, qn, out, False, 0, acc, nxt, cl)
        rounds = int32(0)
    return qn, rounds


@cuda.jit(device=True)
def finish(q, qn, ops, acc):
    """The warp's last flush. Collective."""
    nxt, _, _, _, _, out, cl = ops
    flush(q, qn, out, False, 0, acc, nxt, cl)


@cuda.jit(device=True)
def owner(arr, base, lo, hi, x):
    """The work-item owning unit x: the last i in [lo, hi) with arr[base + i] <= x, where arr is an
    exclusive prefix sum of the items' sizes and arr[base + lo] <= x (a zero-sized item never owns
    a unit: the search passes it). log2(hi - lo) probes."""
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if arr[base + mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@cuda.jit(device=True)
def start_block(cnt, sh32, off_cull, warp_cull, off_hist, hist_entries, acc):
    """Zero the block's counts and accumulators, empty the culling and history tables; ends with
    the block barrier that publishes them."""
    tid = cuda.threadIdx.x
    for i in range(tid, NUM_COUNTERS, cuda.blockDim.x):
        cnt[i] = 0
    if warp_cull:
        for i in range(tid, (cuda.blockDim.x >> 5) * 128, cuda.blockDim.x):
            sh32[off_cull + i] = -1
    for i in range(tid, hist_entries, cuda.blockDim.x):
        sh32[off_hist + i] = -1
    for i in range(NUM_ACC):
        acc[i] = 0
    cuda.syncthreads()


@cuda.jit(device=True)
def publish(acc, cnt, counters, base):
    """The block's counts into the level's row of counters: one shared atomic per thread and
    nonzero count, one global atomic per block and nonzero counter."""
    for a, c in _SLOTS:
        if acc[a]:
            cuda.atomic.add(cnt, c, int32(acc[a]))
    cuda.syncthreads()
    tid = cuda.threadIdx.x
    if tid < NUM_COUNTERS and cnt[tid] != 0:
        cuda.atomic.add(counters, base + tid, int64(cnt[tid]))
