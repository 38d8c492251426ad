"""The claim: the visiting rule that decides which lane takes an unvisited vertex, shared by the
techniques' kernels (an operator, as gunrock's advance is built on one).

Three rules, chosen by the claim group (atomic, latency_bound, bits, bm_off):
- the benign race of BFS-4K (§4, §6): read, then write; lanes and warps that see v unvisited
  together all keep it (duplicates, which the filters of kernels.filters thin out);
- compare-and-swap on the distance (atomic): exactly one lane takes v; latency_bound skips the
  read before it (a single block waits on every round trip, a grid has other warps to run);
- a visited bitmap in shared memory (bm_off >= 0: bits of bits[bm_off:], int32), set by atomic
  OR, in a cluster in the owner block's shared memory; level and parent are then logged, not
  written (kernels.frontier_ops.put).

Every function is collective: all 32 lanes of the warp call it together (a lane without a
candidate passes has = False). tree is (dist, parent), kernels.args.Tree; cl the cluster context
(kernels.frontier_ops.no_cluster).
"""
from numba import cuda, int32, uint32

from .cluster import cluster_map, cluster_or
from .primitives import FULL_MASK, uidx


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
        return found, cuda.any_sync(FULL_MASK, found)
    if atomic_claim:
        # Reading first spares the atomic unit most compare-and-swaps (most neighbours are
        # visited); a latency-bound caller (the single block) saves the read's round trip instead.
        found = has_edge and (latency_bound or dist[uidx(v)] == -1) and cuda.atomic.cas(dist, uidx(v), -1, nxt) == -1
        if found:
            parent[uidx(v)] = u
        return found, cuda.any_sync(FULL_MASK, found)
    # The paper's rule: read, then write. The vote is the lock step: every lane has read before
    # any writes, so lanes (and other warps) that find v unvisited all enqueue it: duplicates.
    # Each writes the same distance and a valid parent (its own frontier vertex).
    unvisited = has_edge and dist[uidx(v)] == -1
    anyone = cuda.any_sync(FULL_MASK, unvisited)
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
        return fa, fb, cuda.any_sync(FULL_MASK, fa or fb)
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
        return fa, fb, cuda.any_sync(FULL_MASK, fa or fb)
    # The paper's rule, as in claim: every lane reads both before any lane writes.
    da = int32(0)
    db = int32(0)
    if has_a:
        da = dist[uidx(va)]
    if has_b:
        db = dist[uidx(vb)]
    fa = has_a and da == -1
    fb = has_b and db == -1
    anyone = cuda.any_sync(FULL_MASK, fa or fb)
    _mark(fa, va, u, nxt, tree)
    _mark(fb, vb, u, nxt, tree)
    return fa, fb, anyone
