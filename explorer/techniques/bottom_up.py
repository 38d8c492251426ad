"""bottom-up: every level, every unvisited vertex looks for a parent among its in-neighbours in
the frontier and stops at the first it finds (Beamer et al., SC'12; the CS406 report §3.1.2,
Appendices 4 and 6; kernels/direction.py). Wins when the frontier holds much of the graph; on
small frontiers it checks every unvisited vertex for little gain."""
from __future__ import annotations

from dataclasses import dataclass

from ..knobs import BLOCK_THREADS, KnobSet, KnobSpec, knob
from ..stats import Direction
from . import Technique
from .base import BFSTechnique, RunContext
from .operators.direction import FRONTIER_CONVERTED, FRONTIER_FORM, VERTICES_CHECKED, DirectionLoop, Step
from .operators.frontier import declared

FRONTIER = KnobSpec("frontier", "how a bottom-up level tests 'neighbour in the frontier': a bitmap of the "
                    "frontier (the report's bit-set, §4.2.2) or the distance array, dist == level (its "
                    "layer-based kernel, §5.1)", "bitmap", choices=("bitmap", "distance"), kind=str,
                    section="CS406 report §4.2.2, §5.1")


@dataclass(frozen=True)
class BottomUpKnobs(KnobSet):
    owner = "bottom-up"
    block_threads: int = knob(BLOCK_THREADS)
    frontier: str = knob(FRONTIER)


class BottomUp(BFSTechnique):
    technique = Technique.BOTTOM_UP
    Knobs = BottomUpKnobs
    directions = (Direction.BOTTOM_UP,)
    extras = (FRONTIER_FORM, FRONTIER_CONVERTED, VERTICES_CHECKED)
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("The search looks the other way: each unvisited vertex's thread walks its in-neighbours and "
                      "stops at the first in the frontier. Few checks when the frontier is large, many wasted ones "
                      "when it is small; only a vertex's own thread writes it, so no duplicates.")
    test_knobs = ({"frontier": "distance"},)

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import direction

        return declared(direction.bottom_up, *((direction.queue_to_bitmap,) if knobs.frontier == "bitmap" else ()))

    def start(self, ctx: RunContext) -> DirectionLoop:
        return _Loop(ctx, self)


class _Loop(DirectionLoop):
    def plan(self) -> Step:
        if self.ctx.knobs.frontier == "bitmap":
            return Step(Direction.BOTTOM_UP, "bitmap", write_bits=True)
        return Step(Direction.BOTTOM_UP, "distance")
