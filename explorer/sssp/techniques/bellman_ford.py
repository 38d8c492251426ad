"""bellman-ford: the chapter's frontier-based Bellman-Ford (§3.2, Algorithm 5), parallel: a
thread per frontier vertex relaxes its arcs with a 64-bit atomic min and queues what it improves
(explorer.sssp.operators.RelaxLoop, kernels/sssp/relax.py)."""
from __future__ import annotations

from dataclasses import dataclass

from kernels.sssp import layout as R

from ...knobs import BLOCK_THREADS, KnobSet, KnobSpec, knob
from . import SSSPTechnique
from .base import ShortestPathTechnique, SSSPContext
from ..operators import RelaxLoop

DEDUP = KnobSpec(
    "dedup", "queue an improved vertex at every improvement ('none': Algorithm 5's ENQUEUE, a vertex may enter the "
    "next frontier O(|E|) times) or once an iteration ('stamp': the iteration that queued it is stamped on it)",
    "none", choices=("none", "stamp"), kind=str, section="chapter §3.2, Algorithm 5")


@dataclass(frozen=True)
class BellmanFordKnobs(KnobSet):
    owner = "bellman-ford"
    block_threads: int = knob(BLOCK_THREADS)
    dedup: str = knob(DEDUP)


class BellmanFord(ShortestPathTechnique):
    technique = SSSPTechnique.BELLMAN_FORD
    Knobs = BellmanFordKnobs
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("Every frontier vertex relaxes all its arcs at once: a vertex whose distance falls is queued "
                      "again, as often as it falls (duplicates), until no distance changes.")

    def start(self, ctx: SSSPContext) -> RelaxLoop:
        flags = R.DEDUP if ctx.knobs.dedup == "stamp" else 0
        return RelaxLoop(ctx, warp=lambda size: 1, flags=flags)
