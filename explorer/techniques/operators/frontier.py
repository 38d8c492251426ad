"""The search's state on the device, shared by the GPU techniques: the BFS tree, the duplicate
stamps and the frontier queues (buffers of the run's pool), set to the source before the first
level; the level loop of the techniques that keep no queue; and the set-up kernels' signatures,
which the warm-up compiles for every GPU technique."""
from __future__ import annotations

import numpy as np

from ..base import Batch, LevelLoop, RunContext, measured


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


class QueueFreeLoop(LevelLoop):
    """A level loop without a frontier queue (Harish's thread a vertex, edge-parallel's thread an
    arc, over the whole graph every level): the tree, two rows of counters (kernels.args.Rows: level
    L uses row L % 2, and its launch clears the next) and the source set. `k`: the level kernel's
    module (NEXT_SIZE, EDGES, NUM_COUNTERS); `extra`: (name, counter) of its per-level extra."""

    def __init__(self, ctx: RunContext, k, extra: tuple[str, int]):
        from kernels import common

        self.ctx, self.k, self._extra = ctx, k, extra
        n = ctx.graph.num_vertices
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        width = 2 * k.NUM_COUNTERS
        self.counters = ctx.buffer("counters", width, np.int64)
        self.readback = (self.counters, ctx.buffer("counters", width, np.int64, host=True))
        # No queue: set_source's frontier entry lands in a one-entry scratch buffer.
        init_search(ctx, self.dist, self.parent, ctx.buffer("source_slot", 1, np.int32))
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.counters)
        self.size, self.level = 1, 0

    def collect(self, ms: float) -> Batch:
        k, inst = self.k, self.ctx.instrument
        c = self.readback[1][(self.level % 2) * k.NUM_COUNTERS:][:k.NUM_COUNTERS]
        nxt = int(c[k.NEXT_SIZE])
        name, slot = self._extra
        row = {"frontier_in": self.size, "edges_examined": measured(inst, c[k.EDGES]), "discovered": nxt,
               "frontier_out": nxt, "dup_generated": 0, "dup_detected": 0, "dup_undetected": 0,  # no queue: none
               "kernel": "multi-block", "launches": 1,  # the next level's counters are cleared by this one
               name: measured(inst, c[slot])}
        self.size, self.level = nxt, self.level + 1
        self.converged = nxt == 0
        return Batch([row])


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
