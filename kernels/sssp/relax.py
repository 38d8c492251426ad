"""The relax operator of frontier-based shortest paths (the chapter's §3, Algorithm 5): every arc
(u, v, w) out of the frontier tests d(u) + w < d(v) and lowers d(v) with a 64-bit atomic min;
an improved vertex is queued for the next iteration.

How the frontier's arcs reach the threads is BFS-4K's load balancing, as H-BF builds on it
(Busato & Bombieri, TPDS 2015, §5.2-5.3): W lanes share a frontier vertex (a dynamic virtual warp,
W = 1 is a thread per vertex), and a vertex of degree >= heavy_degree is set aside for a grid
that walks the heavy vertices' arcs K3 at a time (kernels.expand's heavy list, launched by the
host right after: Numba has no dynamic parallelism). Improved vertices go through the shared local
queues and their warp flush (kernels.frontier_ops) into the next frontier.

Options of a step (Policy.flags):
  PACKED    distance and parent in one 64-bit word (distance << 32 | parent), updated together by
            one atomic min (H-BF's 64-bit atomics; 32-bit distances); else the distance alone
            (int64 or float64), its parent written by the thread that lowered it (a later pass
            makes every parent tight, kernels.sssp.steps.sssp_parents)
  CLASSIFY  H-BF's edge classification: self loops are skipped (a negative one is a negative
            cycle), an arc into a vertex of in-degree 1 is relaxed by a plain store (no other
            thread writes that vertex in the iteration), an improved vertex without out-arcs
            (a sink) is not queued
  DEDUP     an improved vertex is queued once an iteration (stamp[v] = the iteration that queued
            it); without it, once per improvement (Algorithm 5's ENQUEUE), duplicates included
  FAR       Δ-stepping: an improved distance beyond the bucket being settled marks the vertex far
            instead
  TEST_FIRST  Algorithm 5's test d(u) + w < d(v) on a plain read of d(v) (the packed word) before
            anything else: the atomic, and the edge classes' read, only for an arc that passes it.
            Most relaxations improve nothing (on a Kronecker graph 1 in 25), and a hub's in-arcs
            would otherwise queue their atomics on one word. Distances only fall, so a stale read
            can only let through an arc that the atomic then turns down. Without it, PACKED runs
            the atomic min on every arc (as Gunrock does) and CLASSIFY reads the classes first.
Every improvement of a vertex already queued this iteration is counted as a duplicate either way.
"""
from numba import cuda, int32, int64

from ..args import V64, Heavy
from ..common import BLOCK_1024
from ..expand import heavy_entry, heavy_push, heavy_slot
from ..frontier_ops import NUM_ACC_CLUSTER, flush, no_cluster
from ..primitives import FULL_MASK, uidx, warp_sum
from ..rules import QLEN
from .args import Bounds, Marks, Paths, Policy, Sweep, WGraph

from .layout import (ATOMICS, BELOW_FLOOR, CLASSIFY, DEDUP, DUPLICATES, FAR, FAR_MARKED, IMPROVED, IN_DEGREE_1,
                     LAST_COUNT, NEGATIVE_LOOP, NEXT_HEAVY, NEXT_SIZE, OVERFLOW, PACKED, PLAIN, RELAXED, SELF_LOOPS,
                     SINK, SINKS, TEST_FIRST)

# Per-thread counts after frontier_ops' accumulator slots (its cluster slots included, unused).
A_FIRST = NUM_ACC_CLUSTER
NUM_ACC = A_FIRST + (LAST_COUNT - RELAXED + 1)


@cuda.jit(device=True)
def bucket_of(d, delta):
    """Δ-stepping's bucket of distance d >= 0 (capped: a tiny Δ cannot overflow it)."""
    x = d / delta
    if x > 4.0e18:
        return int64(1) << 62
    return int64(x)


@cuda.jit(device=True)
def _count(acc, slot):
    acc[A_FIRST + slot - RELAXED] += 1


@cuda.jit(device=True)
def publish(acc, counters):
    """The warp's counts into the step's counters: one atomic a counter a warp. Collective."""
    for k in range(A_FIRST, NUM_ACC):
        s = warp_sum(acc[k])
        if cuda.laneid == 0 and s != 0:
            cuda.atomic.add(counters, RELAXED + k - A_FIRST, s)


@cuda.jit(device=True)
def source_distance(paths, u, flags):
    """d(u) as the step reads it (the packed word's high half in PACKED mode)."""
    if (flags & PACKED) != 0:
        return paths.packed[uidx(u)] >> 32
    return paths.dist[uidx(u)]


@cuda.jit(device=True)
def _plain(v, marks, flags, acc):
    """Whether an arc into v is relaxed by a plain store: v's in-degree is 1 (CLASSIFY)."""
    plain = (flags & CLASSIFY) != 0 and (marks.vclass[uidx(v)] & IN_DEGREE_1) != 0
    if plain:
        _count(acc, PLAIN)
    return plain


@cuda.jit(device=True)
def relax_arc(u, du, v, w, paths, marks, bounds, flags, iteration, acc):
    """Relax arc (u, v) of weight w, d(u) = du. True when v is to be queued."""
    _count(acc, RELAXED)
    nd = du + w
    if (flags & CLASSIFY) != 0 and v == u:
        _count(acc, SELF_LOOPS)
        if w < 0:
            _count(acc, NEGATIVE_LOOP)
        return False
    if nd < bounds.floor:
        _count(acc, BELOW_FLOOR)  # shorter than any simple path: a negative cycle
        return False
    if (flags & PACKED) != 0:
        key = (int64(nd) << 32) | int64(u)
        if (flags & TEST_FIRST) != 0 and (paths.packed[uidx(v)] >> 32) <= int64(nd):
            return False
        if _plain(v, marks, flags, acc):
            old = paths.packed[uidx(v)]
            if key < old:
                paths.packed[uidx(v)] = key
        else:
            _count(acc, ATOMICS)
            old = cuda.atomic.min(paths.packed, uidx(v), key)
        # A tie on the distance may take the smaller parent, but it improves nothing.
        improved = (old >> 32) > int64(nd)
    else:
        old = paths.dist[uidx(v)]  # the distance alone is always tested on a plain read first
        if (flags & TEST_FIRST) != 0 and old <= nd:
            return False
        plain = _plain(v, marks, flags, acc)
        if nd < old:
            if plain:
                paths.dist[uidx(v)] = nd
            else:
                _count(acc, ATOMICS)
                old = cuda.atomic.min(paths.dist, uidx(v), nd)
            if nd < old:
                paths.parent[uidx(v)] = u
        improved = nd < old
    if not improved:
        return False
    _count(acc, IMPROVED)
    if (flags & FAR) != 0 and bucket_of(nd, bounds.delta) > bounds.bucket:
        marks.far[uidx(v)] = 1
        _count(acc, FAR_MARKED)
        return False
    if (flags & CLASSIFY) != 0 and (marks.vclass[uidx(v)] & SINK) != 0:
        _count(acc, SINKS)
        return False
    if cuda.atomic.exch(marks.stamp, uidx(v), int32(iteration)) == iteration:
        _count(acc, DUPLICATES)
        if (flags & DEDUP) != 0:
            return False
    return True


@cuda.jit(device=True)
def queue_vertex(q, qn, v, offsets, heavy_degree, acc):
    """v into the lane's local queue (its length qn; the new length returned), counted in NEXT_HEAVY
    when its degree is at least heavy_degree (> 0): a frontier holding such a vertex has its next
    step run on the grid, whose heavy-vertex kernel spreads the vertex's arcs, never in one block."""
    q[0, qn] = v
    if heavy_degree > 0 and offsets[uidx(v + 1)] - offsets[uidx(v)] >= heavy_degree:
        _count(acc, NEXT_HEAVY)
    return int32(qn + 1)


@cuda.jit(device=True)
def _zero(acc):
    for k in range(NUM_ACC):
        acc[k] = 0


@cuda.jit(cache=True, **BLOCK_1024)
def sssp_relax(graph: WGraph, paths: Paths, marks: Marks, sweep: Sweep, bounds: Bounds, policy: Policy,
               heavy: Heavy, counters: V64):
    """One iteration: W lanes per frontier entry relax its arcs; a vertex of degree >= the heavy
    degree (> 0) goes to the heavy list for sssp_heavy instead. Launch with size x W threads."""
    offsets, indices, weights = graph
    W, flags = policy
    acc = cuda.local.array(NUM_ACC, int64)
    _zero(acc)
    q = cuda.local.array((1, QLEN), int32)
    out = (sweep.out, sweep.capacity, counters, NEXT_SIZE, OVERFLOW, sweep.out, 0, 0, -1)
    cl = no_cluster(offsets, counters)
    tid = cuda.grid(1)
    vw = tid // W
    lane = tid & (W - 1)
    u = int32(0)
    beg = int64(0)
    end = int64(0)
    du = source_distance(paths, 0, flags)
    if vw < sweep.size:
        u = sweep.frontier[uidx(vw)]
        beg = offsets[uidx(u)]
        end = offsets[uidx(u + 1)]
        du = source_distance(paths, u, flags)
        if heavy.heavy_degree > 0 and end - beg >= heavy.heavy_degree:
            if lane == 0:
                heavy_push(u, end - beg, heavy.vertices, heavy.offsets, heavy.counter)
            end = beg
    e = beg + lane
    qn = int32(0)
    rounds = int32(0)
    while cuda.any_sync(FULL_MASK, e < end):
        if e < end:
            v = indices[uidx(e)]
            if relax_arc(u, du, v, weights[uidx(e)], paths, marks, bounds, flags, sweep.iteration, acc):
                qn = queue_vertex(q, qn, v, offsets, heavy.heavy_degree, acc)
            e += W
        rounds = int32(rounds + 1)
        if rounds == QLEN:  # a lane gains at most one vertex a round
            qn = flush(q, qn, out, False, 0, acc, 0, cl)
            rounds = int32(0)
    flush(q, qn, out, False, 0, acc, 0, cl)
    publish(acc, counters)


@cuda.jit(cache=True, **BLOCK_1024)
def sssp_heavy(graph: WGraph, paths: Paths, marks: Marks, sweep: Sweep, bounds: Bounds, policy: Policy,
               heavy: Heavy, counters: V64):
    """The heavy vertices' arcs as one flat range: each warp walks chunks of 32 x K3 of them, lane
    by lane (coalesced), a grid-stride loop over the chunks (BFS-4K §5.3's child grid). A lane
    finds its heavy vertex by one binary search a chunk and reads d(u) once a vertex."""
    offsets, indices, weights = graph
    flags = policy.flags
    word = heavy.counter[0]
    count = word >> 40
    total = word & ((int64(1) << 40) - 1)
    acc = cuda.local.array(NUM_ACC, int64)
    _zero(acc)
    q = cuda.local.array((1, QLEN), int32)
    out = (sweep.out, sweep.capacity, counters, NEXT_SIZE, OVERFLOW, sweep.out, 0, 0, -1)
    cl = no_cluster(offsets, counters)
    lane = cuda.laneid
    span = int64(32) * heavy.k3
    chunk = int64(cuda.grid(1) // 32)
    warps = int64(cuda.gridsize(1) // 32)
    qn = int32(0)
    rounds = int32(0)
    while chunk * span < total:  # warp-uniform
        # One binary search a chunk: the lane's arcs lie 32 apart, so its slot only moves forward.
        first = chunk * span + lane
        s = heavy_slot(heavy.offsets, count, first) if first < total else 0
        s_end, u, row = heavy_entry(offsets, heavy.vertices, heavy.offsets, count, total, s)
        du = source_distance(paths, u, flags)
        for j in range(heavy.k3):
            x = first + j * 32
            if x < total:
                if x >= s_end:
                    while x >= s_end:
                        s += 1
                        s_end, u, row = heavy_entry(offsets, heavy.vertices, heavy.offsets, count, total, s)
                    du = source_distance(paths, u, flags)
                e = row + x
                v = indices[uidx(e)]
                if relax_arc(u, du, v, weights[uidx(e)], paths, marks, bounds, flags, sweep.iteration, acc):
                    qn = queue_vertex(q, qn, v, offsets, heavy.heavy_degree, acc)
            rounds = int32(rounds + 1)
            if rounds == QLEN:
                qn = flush(q, qn, out, False, 0, acc, 0, cl)
                rounds = int32(0)
        chunk += warps
    flush(q, qn, out, False, 0, acc, 0, cl)
    publish(acc, counters)
