"""BFS-4K (Busato & Bombieri, TPDS 2015) as a registered technique: its knobs (knobs.py), the
per-level policy and shared-memory layout (policy.py), and its level loop: the launches of each
step and the decoding of its counters and single-block log into records (loop.py)."""
from __future__ import annotations

from ...stats import Extra, Kernel
from .. import Technique
from ..base import BFSTechnique, RunContext
from .knobs import BFS4KKnobs, recommend_knobs  # noqa: F401


class BFS4K(BFSTechnique):
    technique = Technique.BFS4K
    Knobs = BFS4KKnobs
    kernel_kinds = (Kernel.MULTI_BLOCK, Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    extras = (
        Extra("warp_size", "(virtual) warp size: threads sharing one frontier vertex (§5.2)", "threads"),
        Extra("edge_discover", "edge-discover ran instead of virtual warps (§5.4)", kind=bool),
        Extra("heavy_vertices", "frontier vertices sent to the heavy-vertex child grid (§5.3)", "vertices"),
        Extra("binary_scan", "ballot/popc prefix sum instead of the shuffle scan (§5.1)", kind=bool),
        Extra("coalesced_writes", "some warp wrote the next frontier with induced coalescence (§5.6)", kind=bool),
        Extra("dup_conflicts", "hash64 collisions of different vertices, kept conservatively (§6)", "entries"),
    )
    # Every CUDA thread is a Python thread under the simulator.
    simulator_knobs = {"single_block_threads": 32, "K6": 32}
    classroom_note = ("BFS-4K plans every level anew: watch the kernel (one block at the ends, many in the middle) "
                      "and the warp size, or edge-discover, whose table spreads a warp's 32 lanes over its vertices' "
                      "edges as in Fig. 6. Its claim is a benign race: where two frontier arcs meet (magenta rings) "
                      "a vertex may be enqueued twice, and the hash64 filter removes the copies it sees.")
    test_knobs = (
        {"K5": 0},                                   # multi-block only
        {"K5": 0, "K4": 0, "K1": 1},                 # virtual warps from 1 thread up
        {"K4": 0, "K1": 4},                          # single block with virtual warps
        {"claim": "atomic"},
        {"dedup": "warp-culling"},
        {"dedup": "none", "K5": 0, "K4": 0},
        {"K7": 1, "K4": 0, "K5": 0},                 # induced coalescence whenever a queue has a vertex
        {"hash_entries": 1, "K5": 0},                # every vertex collides: all conflicts
        {"warp_size_rule": "frontier-degree", "K5": 0, "K4": 0},
        {"claim": "atomic", "visited": "shared"},
        {"claim": "atomic", "visited": "shared", "cluster": 4, "K4": 0, "K1": 1, "dedup": "none"},
        # The extremes that need other knobs: the largest cluster, with the largest K5 and every feature.
        {"claim": "atomic", "visited": "shared", "cluster": 16, "single_block_threads": 32, "K5": 16,
         "dedup": "warp-culling", "K7": 1, "K4": 0},
    )

    presets = {"§7": lambda graph, knobs: recommend_knobs(graph, base=knobs)[0]}

    def creates_duplicates(self, knobs) -> bool:
        return knobs.claim == "race"

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels.bfs4k import kernel_signatures

        from .loop import kernel_choice

        sigs = {name: (kernel, args) for name, kernel, args, _ in kernel_signatures(*kernel_choice(knobs, instrument))}
        names = ["bfs4k_multi"]  # the slowest to compile first
        if knobs.K5 > 0:  # the single block (and, with the shared bitmap, its commit) runs only then
            names += ["bfs4k_cluster" if knobs.cluster > 1 else "bfs4k_single"]
        names += ["bfs4k_heavy", "bfs4k_stats"]
        if knobs.K5 > 0 and knobs.visited == "shared":
            names += ["bfs4k_commit"]
        return [(name, *sigs[name]) for name in names]

    def check(self, graph, knobs, limits) -> None:
        from .policy import multi_block_layout, single_block_layout

        multi_block_layout(knobs, limits)
        if knobs.K5 > 0:
            single_block_layout(knobs, limits, graph.num_vertices)

    def start(self, ctx: RunContext):
        from .loop import BFS4KLoop

        return BFS4KLoop(ctx, self)
