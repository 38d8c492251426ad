"""Kernels for BFS that changes direction: the bottom-up step, the conversions between a
frontier queue and a frontier bitmap, and the frontier's degree sums for Beamer's rule. (The
top-down steps are kernels/topdown.py's queue kernel and kernels/scan.py's layer-based one.)

Bottom-up (Beamer, Asanović & Patterson, SC'12; CS406 report §3.1.2, Appendices 4 and 6): a
thread per vertex; an unvisited vertex walks its in-edges (on an undirected graph, its edges) and
stops at the first neighbour in the current frontier, which becomes its parent. Only the vertex's
own thread writes its distance and parent: no claim, no duplicates.

A bottom-up step reads its frontier as a bitmap (a bit a vertex, uint32 words) or as the distance
array (dist[u] == level: the report's layer-based form). A warp handles 32 consecutive vertices,
one word of the bitmap, so the next frontier's word is the warp's ballot, written without
atomics, and the queue form reserves its slots with one atomic a warp. Counts are summed over the
warp before one atomic a warp, not one a thread (millions of threads a level on large graphs).

Every kernel here must run with whole warps (block sizes that are multiples of 32): the warp
intrinsics name all 32 lanes.
"""
from numba import cuda, int32, int64, uint32

from .primitives import FULL_MASK, WARP_SIZE, warp_binary_exclusive_scan, warp_sum

# This module's counters (int64), read back after each step.
NEXT_SIZE = 0  # vertices found this step: the next frontier's size
EDGES = 1  # adjacency entries inspected (instrument)
CHECKED = 2  # unvisited vertices that looked for a parent (instrument; bottom-up only)
NEXT_OUT_DEGREE = 3  # out-degree sum of the vertices found: m_f of the next level (Beamer)
NEXT_IN_DEGREE = 4  # in-degree sum of the vertices found: what m_u loses (Beamer)
QUEUED = 5  # entries bitmap_to_queue wrote
NUM_COUNTERS = 6


@cuda.jit(device=True, inline="always")
def _in_bits(bits, u):
    return (bits[u >> 5] >> uint32(u & 31)) & uint32(1) != uint32(0)


@cuda.jit(device=True, inline="always")
def _flush(counters, slot, value):
    """Add a per-thread count to counters[slot]: a warp sum, then one atomic from lane 0."""
    total = warp_sum(value)
    if cuda.laneid == 0 and total != 0:
        cuda.atomic.add(counters, slot, total)


@cuda.jit(cache=True)
def bottom_up(in_offsets, in_indices, out_offsets, dist, parent, level, bits, read_bits, next_bits,
              write_bits, next_queue, write_queue, counters, instrument):
    """One bottom-up level. The frontier is `bits` when `read_bits`, else dist == level. Writes the
    next frontier to `next_bits` (every word: no clearing needed) when `write_bits`, and appends it
    to `next_queue` when `write_queue`; always counts it (NEXT_SIZE) and its degree sums."""
    n = dist.shape[0]
    lane = cuda.laneid
    warp = cuda.grid(1) // WARP_SIZE
    warps = cuda.gridsize(1) // WARP_SIZE
    nxt = int32(level + 1)
    found_n = int64(0)
    edges = int64(0)
    checked = int64(0)
    out_deg = int64(0)
    in_deg = int64(0)
    w = warp
    while w * WARP_SIZE < n:  # every lane of the warp takes the same iterations
        v = w * WARP_SIZE + lane
        p = int32(-1)
        if v < n and dist[v] == -1:
            begin = in_offsets[v]
            end = in_offsets[v + 1]
            e = begin
            while e < end:
                u = in_indices[e]
                e += 1
                if read_bits:
                    hit = _in_bits(bits, u)
                else:
                    hit = dist[u] == level
                if hit:
                    p = u
                    break
            edges += e - begin
            checked += 1
            if p >= 0:
                # A vertex found now holds level + 1, never `level`: readers of dist are not misled.
                dist[v] = nxt
                parent[v] = p
                found_n += 1
                out_deg += out_offsets[v + 1] - out_offsets[v]
                in_deg += end - begin
        if write_bits:
            word = cuda.ballot_sync(FULL_MASK, p >= 0)
            if lane == 0:
                next_bits[w] = word
        if write_queue:
            offset, total = warp_binary_exclusive_scan(p >= 0)
            base = int64(0)
            if lane == 0 and total > 0:
                base = cuda.atomic.add(counters, NEXT_SIZE, total)
            base = cuda.shfl_sync(FULL_MASK, base, 0)
            if p >= 0:
                next_queue[base + offset] = v
        w += warps
    if not write_queue:
        _flush(counters, NEXT_SIZE, found_n)
    _flush(counters, NEXT_OUT_DEGREE, out_deg)
    _flush(counters, NEXT_IN_DEGREE, in_deg)
    if instrument:
        _flush(counters, EDGES, edges)
        _flush(counters, CHECKED, checked)


@cuda.jit(cache=True)
def queue_to_bitmap(queue, size, bits):
    """Set the bit of every queued vertex (`bits` cleared before)."""
    i = cuda.grid(1)
    while i < size:
        u = queue[i]
        cuda.atomic.or_(bits, u >> 5, uint32(1) << uint32(u & 31))
        i += cuda.gridsize(1)


@cuda.jit(cache=True)
def bitmap_to_queue(bits, n, queue, counters):
    """Append every vertex whose bit is set to `queue` (order: by warp, then by vertex)."""
    lane = cuda.laneid
    w = cuda.grid(1) // WARP_SIZE
    while w * WARP_SIZE < n:
        v = w * WARP_SIZE + lane
        has = v < n and _in_bits(bits, v)
        offset, total = warp_binary_exclusive_scan(has)
        base = int64(0)
        if lane == 0 and total > 0:
            base = cuda.atomic.add(counters, QUEUED, total)
        base = cuda.shfl_sync(FULL_MASK, base, 0)
        if has:
            queue[base + offset] = v
        w += cuda.gridsize(1) // WARP_SIZE


@cuda.jit(cache=True)
def frontier_degrees(out_offsets, in_offsets, queue, sizes, size_slot, counters):
    """Out- and in-degree sums of the queue's sizes[size_slot] entries (its size as another kernel
    left it on the device): m_f of the next level and what m_u loses."""
    size = sizes[size_slot]
    out_deg = int64(0)
    in_deg = int64(0)
    i = cuda.grid(1)
    while i < size:
        u = queue[i]
        out_deg += out_offsets[u + 1] - out_offsets[u]
        in_deg += in_offsets[u + 1] - in_offsets[u]
        i += cuda.gridsize(1)
    _flush(counters, NEXT_OUT_DEGREE, out_deg)
    _flush(counters, NEXT_IN_DEGREE, in_deg)
