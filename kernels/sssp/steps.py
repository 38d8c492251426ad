"""The SSSP steps besides relaxing: the set-up (every vertex unreached, the source or Johnson's
virtual source at 0), Δ-stepping's bucket advance (the far vertices' smallest distance, then the
next bucket's vertices gathered into the frontier), and the end: the packed words unpacked, every
parent made tight (a parent p of v with d(p) + w(p, v) = d(v))."""
from numba import cuda, int32, int64

from ..args import I64, V32, V64
from ..common import BLOCK_1024
from ..frontier_ops import flush, no_cluster
from ..primitives import uidx, warp_max, warp_sum
from .args import F64, Marks, Paths, WGraph
from .layout import FAR_LEFT, GATHERED, NEXT_BUCKET, NO_BUCKET, OVERFLOW, PACKED_INF, PARENT_BITS, STALE
from .relax import bucket_of



@cuda.jit(cache=True)
def sssp_fill(paths: Paths, marks: Marks, inf: F64, everyone: I64, frontier: V32):
    """Every vertex unreached (distance inf, parent -1), unstamped and near; with `everyone`
    (Johnson's virtual source, joined to every vertex by a 0-weight arc) every vertex at 0 and in
    the frontier instead."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = paths.parent.shape[0]
    while i < n:
        paths.parent[i] = -1
        marks.stamp[i] = -1
        marks.far[i] = 0
        if everyone:
            paths.dist[i] = 0
            frontier[i] = i
            if paths.packed.shape[0] == n:
                paths.packed[i] = int64(PARENT_BITS)
        else:
            paths.dist[i] = inf
            if paths.packed.shape[0] == n:
                paths.packed[i] = (int64(PACKED_INF) << 32) | int64(PARENT_BITS)
        i += stride


@cuda.jit(cache=True)
def sssp_source(paths: Paths, source: I64, frontier: V32):
    if cuda.grid(1) == 0:
        paths.dist[source] = 0
        paths.parent[source] = source
        if paths.packed.shape[0] == paths.parent.shape[0]:
            paths.packed[source] = int64(source)
        frontier[0] = source


@cuda.jit(cache=True, **BLOCK_1024)
def sssp_unpack(paths: Paths, inf: F64):
    """dist and parent from the packed words (PACKED mode, at the end)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < paths.parent.shape[0]:
        key = paths.packed[i]
        d = key >> 32
        if d == PACKED_INF:
            paths.dist[i] = inf
            paths.parent[i] = -1
        else:
            paths.dist[i] = d
            paths.parent[i] = int32(key & PARENT_BITS)
        i += stride


@cuda.jit(cache=True, **BLOCK_1024)
def sssp_parents(graph: WGraph, paths: Paths, inf: F64, source: I64):
    """Every reached vertex but the source gets a tight parent: some u with d(u) + w(u, v) = d(v)
    (any of them; the last writer wins). The distances are final, so one exists: the arc that set
    d(v) last was relaxed again by its tail after that tail's last improvement."""
    offsets, indices, weights = graph
    dist, parent, _ = paths
    u = cuda.grid(1)
    stride = cuda.gridsize(1)
    while u < parent.shape[0]:
        du = dist[u]
        if du != inf:
            for e in range(offsets[u], offsets[u + 1]):
                v = indices[uidx(e)]
                if v != source and v != u and du + weights[uidx(e)] == dist[uidx(v)]:
                    parent[uidx(v)] = u
        u += stride


@cuda.jit(cache=True, **BLOCK_1024)
def delta_far_min(paths: Paths, marks: Marks, lo: I64, delta: F64, counters: V64):
    """The least bucket >= lo holding a far vertex (Davidson et al.'s bucketing: the next non-empty
    bucket), as counters[NEXT_BUCKET] = NO_BUCKET - that bucket (0: none; counters zeroed before)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    best = int64(0)
    while i < paths.parent.shape[0]:
        if marks.far[i] != 0:
            b = bucket_of(paths.dist[i], delta)
            if b >= lo and NO_BUCKET - b > best:
                best = NO_BUCKET - b
        i += stride
    best = warp_max(best)
    if cuda.laneid == 0 and best > 0:
        cuda.atomic.max(counters, NEXT_BUCKET, best)


@cuda.jit(cache=True, **BLOCK_1024)
def delta_gather(paths: Paths, marks: Marks, lo: I64, hi: I64, delta: F64, out: V32, capacity: I64,
                 iteration: I64, counters: V64):
    """Buckets lo..hi join the frontier (out): a far vertex in them is queued, one below lo was
    relaxed in an earlier bucket (its mark is dropped: stale), one beyond hi stays far. hi < 0:
    hi is the bucket delta_far_min found (bucketing). A thread a vertex; the warp's vertices are
    written together (kernels.frontier_ops.flush)."""
    acc = cuda.local.array(8, int64)
    for k in range(8):
        acc[k] = 0
    q = cuda.local.array((1, 1), int32)
    dest = (out, capacity, counters, GATHERED, OVERFLOW, out, 0, 0, -1)
    cl = no_cluster(counters, counters)
    if hi < 0:
        hi = NO_BUCKET - counters[NEXT_BUCKET]
    n = paths.parent.shape[0]
    base = cuda.grid(1) - cuda.laneid
    stride = cuda.gridsize(1)
    while base < n:  # warp-uniform: flush is collective
        v = base + cuda.laneid
        qn = int32(0)
        left = 0
        stale = 0
        if v < n and marks.far[v] != 0:
            b = bucket_of(paths.dist[v], delta)
            if b <= hi:
                marks.far[v] = 0
                if b >= lo:
                    marks.stamp[v] = int32(iteration)
                    q[0, 0] = v
                    qn = int32(1)
                else:
                    stale = 1
            else:
                left = 1
        flush(q, qn, dest, True, 0, acc, 0, cl)
        left = warp_sum(left)
        stale = warp_sum(stale)
        if cuda.laneid == 0:
            if left:
                cuda.atomic.add(counters, FAR_LEFT, left)
            if stale:
                cuda.atomic.add(counters, STALE, stale)
        base += stride

