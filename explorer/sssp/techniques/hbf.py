"""h-bf: H-BF (Busato & Bombieri, TPDS 2015; the chapter's §3.2): frontier Bellman-Ford on BFS-4K's
load balancing (dynamic virtual warps of at least K1 lanes, heavy vertices' arcs
walked by a grid of their own), a 64-bit atomic min on a packed (distance, parent) word for the
arcs that beat a plain read of it, duplicate removal and edge classification
(explorer.sssp.operators.RelaxLoop, kernels/sssp/relax.py)."""
from __future__ import annotations

from dataclasses import dataclass

from kernels.sssp import layout as R

from ...knobs import KnobError, KnobSet, KnobSpec, knob
from ...techniques.operators.bfs4k.policy import section7_k1
from ...stats import Extra
from . import SSSPTechnique
from .base import ShortestPathTechnique, SSSPContext
from ..operators import K5_SPEC, SINGLE_BLOCK_THREADS_SPEC, WARP_EXTRA, RelaxLoop, dynamic_warp, single_block


@dataclass(frozen=True)
class HBFKnobs(KnobSet):
    owner = "h-bf"
    block_threads: int = knob(KnobSpec(
        "block_threads", "threads per block of the relax and heavy-vertex kernels", 128,
        choices=(32, 64, 128, 256, 512, 1024), section="BFS-4K §5.5 (K6)"))
    K1: int = knob(KnobSpec(
        "K1", "minimum dynamic virtual warp size: W = pow2_floor(#ResThreads / |F|) clamped to [K1, 32] lanes "
        "share a frontier vertex's arcs; 0 takes BFS-4K §7's rule from the graph's out-degrees (mean or deviation "
        ">= 48: 32; >= 16 or 24: 16; >= 8 or 12: 8; else 4). 4 by default: on an H200 the rule's 32 lanes took "
        "Kronecker 20 from 8.3 to 13.0 ms (benchmarks/results/NVIDIA_H200/sssp.md)", 4,
        choices=(0, 1, 2, 4, 8, 16, 32), section="BFS-4K §5.2, §7"))
    heavy_degree: int = knob(KnobSpec(
        "heavy_degree", "a frontier vertex of at least this out-degree is set aside and its arcs are walked by a "
        "grid of their own, K3 arcs a thread (BFS-4K's child grids, launched by the host: Numba has no dynamic "
        "parallelism); 0 disables", 1024, low=0, high=1 << 30, section="BFS-4K §5.3"))
    K3: int = knob(KnobSpec(
        "K3", "arcs a thread of the heavy-vertex grid walks", 16, low=1, high=1024, section="BFS-4K §5.3"))
    K5: int = knob(K5_SPEC)
    single_block_threads: int = knob(SINGLE_BLOCK_THREADS_SPEC)
    packed: str = knob(KnobSpec(
        "packed", "distance and parent in one 64-bit word (distance << 32 | parent) updated by one atomic min, so "
        "they never disagree ('on'; needs 32-bit distances: integer weights with (n - 1) x max|w| < 2**31 - 2); "
        "'off': a 64-bit atomic min on the distance, the parents made tight by a pass at the end; 'auto': packed "
        "when the distances fit", "auto", choices=("auto", "on", "off"), kind=str, section="chapter §3.2 (64-bit atomics)"))
    dedup: str = knob(KnobSpec(
        "dedup", "duplicate removal: an improved vertex is queued once an iteration ('stamp': the iteration that "
        "queued it is stamped on it) or at every improvement ('none')", "stamp", choices=("stamp", "none"), kind=str,
        section="chapter §3.2"))
    test_first: str = knob(KnobSpec(
        "test_first", "'on': Algorithm 5's test d(u) + w < d(v) on a plain read of d(v) first, the atomic min (and "
        "the edge classes' read) only for an arc that passes it: most relaxations improve nothing, and a hub's "
        "in-arcs would queue their atomics on one word; 'off': the atomic min on every arc, as Gunrock's SSSP",
        "on", choices=("on", "off"), kind=str, section="chapter §3.2, Algorithm 5"))
    classify: str = knob(KnobSpec(
        "classify", "edge classification: arcs into a vertex of in-degree 1 relaxed by a plain store (no atomic), "
        "self loops skipped (a negative one is a negative cycle), improved sinks (no out-arcs) never queued",
        "on", choices=("on", "off"), kind=str, section="chapter §3.2 (edge classification)"))

    def check(self) -> None:
        if self.classify == "on" and self.dedup != "stamp":
            raise KnobError("knob classify='on' relaxes arcs into in-degree-1 vertices without an atomic, which is "
                            "safe only when each vertex is in the frontier once: it needs dedup='stamp'")


def _extras(loop, c) -> dict:
    if c is None:
        return dict(warp_size=None, heavy_vertices=None, atomics=None, plain_stores=None, sinks=None, self_loops=None)
    return dict(warp_size=loop.W, heavy_vertices=int(c[R.HEAVY_COUNTER]) >> 40, atomics=int(c[R.ATOMICS]),
                plain_stores=int(c[R.PLAIN]), sinks=int(c[R.SINKS]), self_loops=int(c[R.SELF_LOOPS]))


class HBF(ShortestPathTechnique):
    technique = SSSPTechnique.HBF
    Knobs = HBFKnobs
    extras = (WARP_EXTRA,
              Extra("heavy_vertices", "frontier vertices whose arcs the heavy-vertex grid walked"),
              Extra("atomics", "relaxations that ran the atomic min (test_first='on': only those whose d(u) + w beat "
                    "a plain read of d(v))"),
              Extra("plain_stores", "relaxations into in-degree-1 vertices, done without an atomic (classification; "
                    "test_first='on': only those that beat the plain read)"),
              Extra("sinks", "improved vertices without out-arcs, not queued (classification)"),
              Extra("self_loops", "self loops skipped (classification)"))
    simulator_knobs = {"block_threads": 32, "K1": 1, "single_block_threads": 32}
    test_knobs = ({"packed": "off"}, {"classify": "off"}, {"dedup": "none", "classify": "off"},
                  {"heavy_degree": 8, "K3": 2}, {"K5": 0}, {"test_first": "off"})
    classroom_note = ("Each frontier vertex is in the queue once (duplicates removed), its distance and parent change "
                      "together in one 64-bit word, and arcs into vertices with a single in-arc need no atomic.")

    def check(self, graph, weighting, knobs, limits) -> None:
        if knobs.packed == "on" and not weighting.packable:
            why = ("its weights are reals (float64 distances)" if not weighting.integer else
                   f"(n - 1) x max|w| = {(weighting.num_vertices - 1) * weighting.max_abs:,.0f} reaches 2**31 - 2")
            raise KnobError(f"knob packed='on' needs 32-bit distances, but on graph {graph.name!r} {why}: "
                            "use packed='auto' or 'off'")
        super().check(graph, weighting, knobs, limits)

    def start(self, ctx: SSSPContext) -> RelaxLoop:
        k = ctx.knobs
        packed = k.packed == "on" or (k.packed == "auto" and ctx.weighting.packable)
        flags = ((R.PACKED if packed else 0) | (R.CLASSIFY if k.classify == "on" else 0)
                 | (R.DEDUP if k.dedup == "stamp" else 0) | (R.TEST_FIRST if k.test_first == "on" else 0))
        k1 = k.K1 or degree_k1(ctx.graph)
        return RelaxLoop(ctx, warp=dynamic_warp(ctx.limits, k1), flags=flags, heavy_degree=k.heavy_degree,
                         k3=k.K3, extras=_extras, single=single_block(k, k1))


def degree_k1(graph) -> int:
    """BFS-4K §7's K1 from the graph's out-degrees (their mean and population deviation)."""
    deg = graph.degrees()
    if deg.size == 0:
        return 4
    return section7_k1(float(graph.num_arcs / deg.size), float(deg.std()))[0]
