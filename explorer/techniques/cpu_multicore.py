"""cpu-topdown, cpu-bottom-up and cpu-hybrid: the CS406 report's multicore CPU BFS (§4) in Numba
parallel=True (explorer/techniques/cpu_steps.py), through the same engine as the GPU techniques:
the CPU runtime calls each step, times it on the host and the record is the same (kernel 'cpu';
`launches` counts the calls into parallel code a level makes).

The steps are compiled (or loaded from Numba's disk cache) while the run is set up, outside every
timed window. The `threads` knob sets Numba's thread count for the run's steps (restored after
each step, so other code in the process keeps its own).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from kernels.args import Graph, Level, Tree

from ..knobs import KnobSet, KnobSpec, knob
from ..stats import Direction, Kernel
from . import Technique
from .base import Batch, BFSTechnique, LevelLoop, RunContext
from .operators.direction import DIVISOR, FRONTIER_CONVERTED, FRONTIER_FORM, VERTICES_CHECKED, bottom_up_now, in_edges
from .operators.frontier import frontier_queues

CORES = numba.config.NUMBA_NUM_THREADS
THREADS = KnobSpec("threads", f"CPU threads the steps run on (Numba's thread count; this machine has {CORES})",
                   CORES, low=1, high=CORES, section="CS406 report §4, Table 1")
CHUNKS_PER_THREAD = 8  # chunks handed out one at a time: a thread that finishes early takes another


@dataclass(frozen=True)
class CPUKnobs(KnobSet):
    owner = "cpu-topdown"
    threads: int = knob(THREADS)


@dataclass(frozen=True)
class CPUBottomUpKnobs(CPUKnobs):
    owner = "cpu-bottom-up"


@dataclass(frozen=True)
class CPUHybridKnobs(CPUKnobs):
    owner = "cpu-hybrid"
    divisor: int = knob(DIVISOR)


@contextmanager
def _numba_threads(threads: int):
    """Numba's thread count and the prange chunk size 1 (dynamic hand-out), for one step."""
    old_threads, old_chunk = numba.get_num_threads(), numba.get_parallel_chunksize()
    numba.set_num_threads(threads)
    numba.set_parallel_chunksize(1)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old_chunk)
        numba.set_num_threads(old_threads)


class _CPUTechnique(BFSTechnique):
    runtimes = frozenset({"cpu"})
    kernel_kinds = (Kernel.CPU,)

    def start(self, ctx: RunContext) -> LevelLoop:
        return _Loop(ctx, self)

    def direction_of(self, loop: "_Loop") -> Direction:
        raise NotImplementedError


class CPUTopdown(_CPUTechnique):
    technique = Technique.CPU_TOPDOWN
    Knobs = CPUKnobs

    def direction_of(self, loop) -> Direction:
        return Direction.TOP_DOWN


class CPUBottomUp(_CPUTechnique):
    technique = Technique.CPU_BOTTOM_UP
    Knobs = CPUBottomUpKnobs
    directions = (Direction.BOTTOM_UP,)
    extras = (FRONTIER_CONVERTED, VERTICES_CHECKED)

    def direction_of(self, loop) -> Direction:
        return Direction.BOTTOM_UP


class CPUHybrid(_CPUTechnique):
    technique = Technique.CPU_HYBRID
    Knobs = CPUHybridKnobs
    directions = (Direction.TOP_DOWN, Direction.BOTTOM_UP)
    extras = (FRONTIER_FORM, FRONTIER_CONVERTED, VERTICES_CHECKED)
    test_knobs = ({"divisor": 1024},)

    def direction_of(self, loop) -> Direction:
        return Direction.BOTTOM_UP if bottom_up_now(loop.size, loop.n, loop.ctx.knobs.divisor) else Direction.TOP_DOWN


def _warm_up(ctx: RunContext) -> None:
    """Compile the steps (or load them from the disk cache) on a one-vertex graph, with the types
    a run passes, so that no timed step compiles."""
    from . import cpu_steps as cs

    # Compiled in this process already (a plain function, such as a test's wrapper, needs nothing).
    if all(getattr(f, "signatures", True) for f in (cs.topdown_step, cs.bottomup_step, cs.bits_from_dist)):
        return
    ctx.compiling("CPU multicore BFS")
    i32, i64 = np.int32, np.int64
    graph = Graph(np.zeros(2, i64), np.zeros(0, i32))
    tree = Tree(np.zeros(1, i32), np.zeros(1, i32))
    queue, nxt = np.zeros(1, i32), np.zeros(1, i32)
    chunks = cs.Chunks(1, *(np.zeros(2, i64) for _ in range(6)), np.zeros(1, i32))
    bits = [np.zeros(1, np.uint64) for _ in range(2)]
    out = np.zeros(cs.NUM_OUT, i64)
    cs.topdown_step(graph, tree, Level(queue, 1, nxt, 1, 0), chunks, out)
    cs.bottomup_step(graph, tree, bits[0], bits[1], 0, chunks, nxt, True, out)
    cs.bits_from_dist(tree.dist, 0, bits[0])


class _Loop(LevelLoop):
    """The CPU level loop. State: `size` vertices in the frontier, held as a queue (`queues[0]`)
    after a top-down level and as a bit-set (`bits[0]`) after a bottom-up one; the distances hold
    it too (dist == level), from which a bit-set is built when a bottom-up level follows a
    top-down one."""

    def __init__(self, ctx: RunContext, impl: _CPUTechnique):
        from . import cpu_steps

        _warm_up(ctx)
        self.ctx, self.impl, self.cs = ctx, impl, cpu_steps
        g, n = ctx.graph, ctx.graph.num_vertices
        self.n = n
        self.threads = ctx.knobs.threads
        self.nchunks = CHUNKS_PER_THREAD * self.threads
        words = max(1, -(-n // cpu_steps.WORD))
        self.dist = ctx.buffer("dist", n, np.int32)
        self.parent = ctx.buffer("parent", n, np.int32)
        self.queues = frontier_queues(ctx, max(n, 1))
        self.bits = [ctx.buffer("cpu_bits_a", words, np.uint64), ctx.buffer("cpu_bits_b", words, np.uint64)]
        per_chunk = [ctx.buffer(f"cpu_chunks_{i}", self.nchunks + 1, np.int64) for i in range(5)]
        self.chunks = cpu_steps.Chunks(self.nchunks, *per_chunk, ctx.buffer("cpu_prefix", n + 1, np.int64),
                                       ctx.buffer("cpu_scratch", max(n, g.num_arcs, 1), np.int32))
        self.out = ctx.buffer("cpu_out", cpu_steps.NUM_OUT, np.int64)
        self.graph, self.in_graph = Graph(*ctx.graph_arrays), Graph(*in_edges(ctx))
        self.tree = Tree(self.dist, self.parent)
        self.dist.fill(-1)
        self.parent.fill(-1)
        s = ctx.source
        self.dist[s], self.parent[s], self.queues[0][0] = 0, s, s
        self.level, self.size, self.form = 0, 1, "queue"
        self.direction = impl.direction_of(self)

    def _converts(self) -> bool:
        return self.direction is Direction.BOTTOM_UP and self.form != "bitmap"

    def launch(self, go) -> None:
        cs = self.cs
        with _numba_threads(self.threads):
            if self.direction is Direction.TOP_DOWN:
                go(cs.topdown_step, self.graph, self.tree,
                   Level(self.queues[0], self.size, self.queues[1], len(self.queues[1]), self.level), self.chunks,
                   self.out)
                return
            if self._converts():
                go(cs.bits_from_dist, self.dist, self.level, self.bits[0])
            # The next frontier as a queue only where a top-down level may follow.
            want_queue = self.impl.technique is Technique.CPU_HYBRID
            go(cs.bottomup_step, self.in_graph, self.tree, self.bits[0], self.bits[1], self.level, self.chunks,
               self.queues[1], want_queue, self.out)

    def collect(self, ms: float) -> Batch:
        td = self.direction is Direction.TOP_DOWN
        cs = self.cs
        found, edges, checked = (int(self.out[i]) for i in (cs.FOUND, cs.EDGES, cs.CHECKED))
        converted = self._converts()
        extras = dict(frontier_form="queue" if td else "bitmap", frontier_converted=converted,
                      vertices_checked=checked)
        row = dict(frontier_in=self.size, edges_examined=edges, discovered=found, frontier_out=found,
                   dup_generated=0, dup_detected=0, dup_undetected=0,  # CAS claims, or none: no duplicates
                   kernel=Kernel.CPU, direction=self.direction, launches=2 if converted else 1)
        row.update({e.name: extras[e.name] for e in self.impl.extras})
        self.queues.reverse()
        if not td:
            self.bits.reverse()
        self.form = "queue" if td else "bitmap"
        self.size, self.level = found, self.level + 1
        self.converged = found == 0
        if not self.converged:
            self.direction = self.impl.direction_of(self)
        return Batch([row])

    def result(self):
        return self.dist.copy(), self.parent.copy()
