"""BFS-4K (Busato & Bombieri, TPDS 2015) as a registered technique: BFS-4K's level operator run
whole (explorer.techniques.operators.bfs4k: its knobs, per-level policy, shared-memory layout and
level loop), its §7 advice as a preset (advice.py), and the variant that logs who made each
claim, for the duplicate analysis (provenance.py: BFS4KProvenance, ProvenanceLog)."""
from __future__ import annotations

from ...stats import Kernel
from .. import Technique
from ..base import BFSTechnique, RunContext
from ..operators.bfs4k import levels
from ..operators.bfs4k.knobs import BFS4KKnobs  # noqa: F401  (its knobs, by their technique's name)
from .advice import recommend_knobs


class BFS4K(BFSTechnique):
    technique = Technique.BFS4K
    Knobs = BFS4KKnobs
    kernel_kinds = (Kernel.MULTI_BLOCK, Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    extras = levels.EXTRAS
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
        return levels.level_signatures(knobs, instrument)

    def check(self, graph, knobs, limits) -> None:
        from ..operators.bfs4k.policy import multi_block_layout, single_block_layout

        multi_block_layout(knobs, limits)
        if knobs.K5 > 0:
            single_block_layout(knobs, limits, graph.num_vertices)

    def start(self, ctx: RunContext):
        return levels.BFS4KLevels(ctx)


# The provenance variant subclasses BFS4K, so it comes after it.
from .provenance import BFS4KProvenance, ProvenanceLog  # noqa: E402,F401
