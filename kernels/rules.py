"""BFS-4K's per-level formulas as plain arithmetic, shared by the host policy and the kernels,
and the codes of the duplicate filters the host picks and the kernels compile in.

Pure Python on scalars, no imports: the host calls them directly
(explorer.techniques.operators.bfs4k.policy) and the single-block kernel, which decides its levels on the
device, calls the `cuda.jit(device=True)` wrappers made in kernels.bfs4k.device. One formula,
one place. Each function is self-contained (no calls to the others), because the device wrappers
can only see jitted callees.
"""

#: Degrees are binned by floor(log2(degree)) (bin 0 also holds degree 0), so a threshold at a
#: power of two splits the bins exactly and the host knows the count and the edge total above it.
DEGREE_BINS = 32

#: Duplicate filters (kernels.frontier_ops), as a static knob of the kernels: none, BFS-4K's
#: hash64 (§6) or Merrill, Garland & Grimshaw's warp culling, whose table has CULL_ENTRIES
#: int32 entries per warp.
NO_DEDUP, HASH64, WARP_CULL = 0, 1, 2
CULL_ENTRIES = 128
#: The knob value (dedup='...') of each filter: the one name-to-code map.
DEDUP_CODES = {"none": NO_DEDUP, "hash64": HASH64, "warp-culling": WARP_CULL}

#: Entries of a thread's local queue of claimed vertices (kernels.frontier_ops): registers or local
#: memory per thread; a warp flushes its queues at least every QLEN rounds.
QLEN = 16


def pow2_floor(x):
    """Largest power of two <= x (1 for x < 2)."""
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


def degree_bin(deg):
    b = 0
    while deg > 1:
        deg >>= 1
        b += 1
    return b


def virtual_warp_size(res_threads, frontier, k1):
    """§5.2: WarpSize_i = nearest lower pow2(#ResThreads / |F_i|), clamped to [K1, 32]."""
    w = 32
    if frontier > 0:
        w = 1
        # w * 2 <= res_threads // frontier, without the division (slow on a GPU)
        while w < 32 and w * 2 * frontier <= res_threads:
            w *= 2
    if w < k1:
        w = k1
    if w > 32:
        w = 32
    return w


def median_degree_warp(bin_counts, stop_bin):
    """A virtual warp size that fits the frontier's degrees (knob warp_size_rule='frontier-degree'):
    2^b for the degree bin b that holds the median frontier vertex, over the bins below
    `stop_bin` (those above go to child grids), at most 32; 1 for an empty frontier."""
    stop = min(stop_bin, DEGREE_BINS)
    total = 0
    for b in range(stop):
        total += bin_counts[b]
    seen = 0
    b = 0
    while b < stop - 1 and 2 * (seen + bin_counts[b]) < total:
        seen += bin_counts[b]
        b += 1
    return 1 << min(b, 5) if total > 0 else 1


def use_edge_discover(res_threads, frontier, k4):
    """§5.4: edge-discover instead of virtual warps when |F_d| < #ResThreads / K4 (K4 = 0: never)."""
    return k4 > 0 and frontier * k4 < res_threads


def heavy_limit(num_vertices, k2_percent):
    """§5.3: at most K2 % of |V| frontier vertices take the heavy-vertex path."""
    return int(num_vertices * k2_percent / 100.0)


def heavy_bin(bin_counts, limit, min_heavy_degree):
    """§5.3: first degree bin handled by child grids, or DEGREE_BINS for none.

    Heavy vertices are the highest-degree frontier vertices, at most `limit` of them, whose degree
    is at least `min_heavy_degree` = K3 x block size, so that their child grid
    (#Blocks = degree / (K3 x block size)) has at least one block: the paper's "degree far above
    the average" made concrete. Whole bins only, so the host knows their count and edges exactly.
    """
    first = DEGREE_BINS
    count = 0
    b = DEGREE_BINS - 1
    while b >= 0 and (1 << b) >= min_heavy_degree:
        count += bin_counts[b]
        if count > limit:
            break
        if count > 0:
            first = b
        b -= 1
    return first


def has_heavy(bin_counts, limit, min_heavy_degree):
    """heavy_bin(...) < DEGREE_BINS in O(1): the candidate set grows from the top bin down, so
    some bin qualifies exactly when the top non-empty bin does (the kernels use this form)."""
    top = DEGREE_BINS - 1
    while top >= 0 and bin_counts[top] == 0:
        top -= 1
    return top >= 0 and (1 << top) >= min_heavy_degree and bin_counts[top] <= limit


def max_degree_below(bin_counts, stop_bin):
    """Upper bound on the degree of frontier vertices in bins below `stop_bin` (0 when none)."""
    b = stop_bin - 1
    while b >= 0:
        if bin_counts[b] > 0:
            return (1 << (b + 1)) - 1
        b -= 1
    return 0
