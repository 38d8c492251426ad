"""A frontier's degree histogram: vertices per degree bin floor(log2(degree)) and their degree
sums, what a host plans the next level from (BFS-4K's policy, §5.2-§5.4; direction-optimizing's
hand-off to BFS-4K's single block). kernels.rules.DEGREE_BINS bins; sums are kept per bin from
SUM_BIN up (the heavy vertices' bins, which need them), lighter degrees summed together in bin 0.
"""
from numba import cuda, int32, int64

from .primitives import FULL_MASK, popc, uidx, warp_sum
from .rules import degree_bin

#: The first bin whose degree sum is kept apart.
SUM_BIN = 5

_degree_bin = cuda.jit(device=True)(degree_bin)


@cuda.jit(device=True)
def count_degrees(frontier, i, n, stride, offsets, hist_c, hist_s):
    """Degree histogram of frontier[i], frontier[i + stride], ... (below n) into the block's
    hist_c (vertices per bin floor(log2(degree))) and hist_s (degree sums from bin SUM_BIN up;
    lighter degrees summed together in bin 0). i - laneid and stride are uniform over the warp.
    Collective."""
    lane = cuda.laneid
    light = int64(0)
    while i - lane < n:
        b = -1
        if i < n:
            u = frontier[uidx(i)]
            deg = offsets[uidx(u + 1)] - offsets[uidx(u)]
            b = _degree_bin(deg)
            if b >= SUM_BIN:
                cuda.atomic.add(hist_s, b, deg)
            else:
                light += deg
        # Lanes with the same bin add their count with one atomic: most entries share a bin.
        peers = cuda.match_any_sync(FULL_MASK, b)
        if b >= 0 and (peers & ((1 << lane) - 1)) == 0:
            cuda.atomic.add(hist_c, b, int32(popc(peers)))
        i += stride
    light = warp_sum(light)
    if lane == 0 and light:
        cuda.atomic.add(hist_s, 0, light)
