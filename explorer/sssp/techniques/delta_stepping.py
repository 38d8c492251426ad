"""delta-stepping: Meyer & Sanders' Δ-stepping in Davidson et al.'s GPU forms (the chapter's §3.1):
bucket b holds the distances in [bΔ, (b + 1)Δ); its vertices relax (explorer.sssp.operators'
RelaxLoop, every improved vertex beyond the bucket marked far instead of queued) until the bucket
is empty, then a bucket advance gathers the next bucket's far vertices into the frontier
(kernels/sssp/steps.py): near-far moves one bucket at a time, bucketing finds the next non-empty
bucket first (a minimum over the far vertices' buckets)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kernels.sssp import layout as R

from ...device import blocks_for
from ...knobs import POW2_BLOCKS, KnobSet, KnobSpec, knob
from ...stats import Extra
from ..operators import (K5_SPEC, SINGLE_BLOCK_THREADS_SPEC, WARP_EXTRA, RelaxLoop, dynamic_warp,
                         single_block)
from ..weights import refuse_negative
from . import SSSPTechnique
from .base import ShortestPathTechnique, SSSPContext

#: The warp width c of Davidson et al.'s Δ = cw/d.
WARP_WIDTH = 32


@dataclass(frozen=True)
class DeltaSteppingKnobs(KnobSet):
    owner = "delta-stepping"
    block_threads: int = knob(KnobSpec(
        "block_threads", "threads per block of the relax and bucket kernels", 128, choices=POW2_BLOCKS,
        section="chapter §3.1"))
    delta: float = knob(KnobSpec(
        "delta", "bucket width Δ: distances in [bΔ, (b+1)Δ) are settled together (Δ = 1: nearly Dijkstra; inf: "
        "Bellman-Ford); 0 takes Davidson et al.'s heuristic Δ = cw/d (c = 32, the warp width; w the mean weight; "
        "d the mean out-degree)", 0.0, low=0.0, high=math.inf, kind=float, section="chapter §3.1; Meyer & Sanders"))
    form: str = knob(KnobSpec(
        "form", "how the next bucket is found when one empties: 'near-far' (Davidson et al.'s Near-Far Pile: the "
        "threshold moves one Δ a step, empty buckets cost a step each) or 'bucketing' (the least bucket holding a "
        "far vertex first, one pass over the far marks, then its vertices)", "near-far",
        choices=("near-far", "bucketing"), kind=str, section="chapter §3.1 (Davidson et al.)"))
    K5: int = knob(K5_SPEC)
    single_block_threads: int = knob(SINGLE_BLOCK_THREADS_SPEC)
    K1: int = knob(KnobSpec(
        "K1", "minimum dynamic virtual warp size: W = pow2_floor(#ResThreads / |F|) clamped to [K1, 32] lanes "
        "share a frontier vertex's arcs", 1, choices=(1, 2, 4, 8, 16, 32), section="BFS-4K §5.2"))


def default_delta(graph, weighting) -> float:
    """Davidson et al.'s Δ = cw/d: warp width x mean weight / mean out-degree (1 where that is 0)."""
    m, n = graph.num_arcs, graph.num_vertices
    if m == 0 or n == 0:
        return 1.0
    mean_w = float(np.mean(weighting.weights, dtype=np.float64))
    d = WARP_WIDTH * mean_w / (m / n)
    return d if d > 0 else 1.0


class DeltaLoop(RelaxLoop):
    """RelaxLoop with buckets: relax steps settle bucket b, bucket advances gather the next."""

    def __init__(self, ctx, delta: float, form: str):
        from kernels.sssp.args import Bounds

        k = ctx.knobs
        super().__init__(ctx, warp=dynamic_warp(ctx.limits, k.K1), flags=R.DEDUP | R.FAR,
                         extras=DeltaLoop._row_extras,
                         single=single_block(k, k.K1))
        self.cycle_bound = None  # no negative weights: nothing to catch
        self.delta, self.form, self.b = float(delta), form, 0
        self.Bounds = Bounds
        self.bounds = Bounds(0, self.delta, self.bounds.floor)
        self.far_left = self.stale = None

    def _row_extras(self, c) -> dict:
        far = None if c is None else int(c[R.FAR_MARKED])
        return dict(delta=self.delta, far_marked=far, far_left=None, stale=None, warp_size=None if c is None else self.W)

    def bucket_of_step(self):
        return self.b

    def after_frontier(self) -> str:
        return "gather"

    def _launch_gather(self, go) -> None:
        from kernels.sssp.steps import delta_far_min, delta_gather

        go.zero(self.counters)
        blocks = min(blocks_for(self.n, self.B), 4 * self.res_blocks)
        lo = self.b + 1
        hi = lo
        self.launches = 2
        if self.form == "bucketing":
            go(delta_far_min, blocks, self.B, 0, self.paths, self.marks, lo, self.delta, self.counters)
            hi = -1  # the bucket delta_far_min finds
            self.launches = 3
        go(delta_gather, blocks, self.B, 0, self.paths, self.marks, lo, hi, self.delta, self.queues[0],
           self.capacity, self.step, self.counters)

    def _collect_gather(self) -> list[dict]:
        S = R
        c = self.readback[1].tolist()
        if c[R.OVERFLOW] > 0:
            raise RuntimeError(f"the gathered frontier outgrew its {self.capacity:,} entries; this is a bug, "
                               "please report it")
        gathered, left = int(c[S.GATHERED]), int(c[S.FAR_LEFT])
        if self.form == "bucketing":
            nb = None if c[S.NEXT_BUCKET] == 0 else S.NO_BUCKET - int(c[S.NEXT_BUCKET])
        else:
            nb = self.b + 1
        if nb is not None:
            self.b = nb
            self.bounds = self.Bounds(nb, self.delta, self.bounds.floor)
        row = dict(phase="gather", frontier_in=0, relaxations=0, improvements=0, frontier_out=gathered,
                   duplicates=0, bucket=nb, kernel="multi-block", launches=self.launches, delta=self.delta,
                   far_marked=None, far_left=left, stale=int(c[S.STALE]), warp_size=None)
        self.size = gathered
        self.phase = "relax" if gathered else ("gather" if left else "parents")
        return [row]

    def idle_extras(self) -> dict:
        return dict(delta=self.delta, far_marked=None, far_left=None, stale=None, warp_size=None)


class DeltaStepping(ShortestPathTechnique):
    technique = SSSPTechnique.DELTA_STEPPING
    Knobs = DeltaSteppingKnobs
    negative_weights = False
    extras = (Extra("delta", "the bucket width Δ of the run (the knob, or cw/d when it is 0)", kind=float),
              Extra("far_marked", "relax step: improvements beyond the bucket, marked far"),
              Extra("far_left", "bucket advance: vertices still far after it"),
              Extra("stale", "bucket advance: far marks dropped, their vertex settled in an earlier bucket"),
              WARP_EXTRA)
    simulator_knobs = {"block_threads": 32, "single_block_threads": 32}
    test_knobs = ({"form": "bucketing"}, {"delta": 1.0}, {"delta": 3.5, "form": "bucketing"}, {"K5": 0})
    classroom_note = ("Only the vertices of the lowest bucket relax; improvements beyond it wait as far vertices, so "
                      "far fewer arcs are relaxed twice than in Bellman-Ford, at the price of more steps.")

    def check(self, graph, weighting, knobs, limits) -> None:
        refuse_negative(graph, weighting, "delta-stepping", "bellman-ford and h-bf")
        super().check(graph, weighting, knobs, limits)

    def start(self, ctx: SSSPContext) -> RelaxLoop:
        delta = ctx.knobs.delta or default_delta(ctx.graph, ctx.weighting)
        return DeltaLoop(ctx, delta, ctx.knobs.form)
