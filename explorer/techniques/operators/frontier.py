"""The search's state on the device, shared by the GPU techniques: the BFS tree, the duplicate
stamps and the frontier queues (buffers of the run's pool), set to the source before the first
level; and the set-up kernels' signatures, which the warm-up compiles for every GPU technique."""
from __future__ import annotations

import numpy as np

from ..base import RunContext


def frontier_queues(ctx, capacity: int) -> list:
    """The two frontier queues of a run (`queue_a`, `queue_b`; int32, `capacity` entries each): a
    level expands one into the other, and the loop swaps them."""
    return [ctx.buffer("queue_a", capacity, np.int32), ctx.buffer("queue_b", capacity, np.int32)]


def init_search(ctx: RunContext, dist, parent, frontier, *stamps) -> None:
    """Distances, parents and duplicate stamps to -1, then the source at level 0 in the frontier
    (untimed set-up, shared by the GPU techniques)."""
    from kernels import common

    n = ctx.graph.num_vertices
    for arr in (dist, parent, *stamps):
        ctx.launch_now(common.fill_int32, max(1, -(-n // 256)), 256, 0, arr, -1)
    stamp = stamps[0] if stamps else dist
    ctx.launch_now(common.set_source, 1, 1, 0, dist, parent, frontier, stamp, ctx.source)


def setup_signatures() -> list:
    """(name, kernel, argument types) of init_search's kernels, which every GPU technique launches."""
    from kernels import common

    return declared(common.fill_int32, common.set_source)


def declared(*kernels) -> list:
    """(name, kernel, argument types) of each kernel, its types read off its annotations
    (kernels.args.signature): what a technique's `kernel_signatures` returns."""
    from kernels.args import signature

    return [(k.py_func.__name__, k, signature(k)) for k in kernels]


def counters_cleared() -> list:
    """The signature of the set-up launch that clears a technique's counters (common.zero_int64)."""
    from kernels import common

    return declared(common.zero_int64)
