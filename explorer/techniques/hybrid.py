"""hybrid: the CS406 report's switch (§3.1.3, §5): top-down while the frontier is smaller than
|V|/32, bottom-up otherwise, decided afresh each level, in the report's two GPU forms (§5.1, the
report's "layer-based": a thread per vertex testing dist == level, in both directions, knob
variant='distance'; §5.2 frontier-based: top-down over a frontier queue, bottom-up over a bitmap
built from it, appending the next queue). The report's "layer" is a BFS level: here it is called
a level, and the form that tests dist == level is called 'distance', as bottom-up's knob and the
record's frontier_form call it ("layer" is Luo's name for a kernel tier, luo-hierarchical).
Kernels: kernels/direction.py (bottom-up), kernels/topdown.py (frontier-based top-down) and
kernels/scan.py (top-down testing dist == level: harish's kernel, which is the report's §5.1)."""
from __future__ import annotations

from dataclasses import dataclass

from ..knobs import BLOCK_THREADS, KnobSet, KnobSpec, knob
from ..stats import Direction
from . import Technique
from .base import BFSTechnique, RunContext
from .operators.direction import (DIVISOR, FRONTIER_CONVERTED, FRONTIER_FORM, TOP_DOWN_DISTANCE, TOP_DOWN_QUEUE,
                                  VERTICES_CHECKED, DirectionLoop, Step, bottom_up_now)
from .operators.frontier import declared

VARIANT = KnobSpec("variant", "the report's GPU form: 'frontier' keeps frontier queues (top-down a thread per "
                   "frontier vertex, bottom-up over a bitmap of the queue; few launches a level, wins on many "
                   "levels) or 'distance' (the report's layer-based form; 'layer' is still accepted) tests "
                   "dist == level with a thread per vertex in both directions (no queue, no atomics for the "
                   "frontier; wins on few levels)", "frontier",
                   choices=("frontier", "distance"), kind=str, section="CS406 report §5.1, §5.2",
                   renamed=(("layer", "distance"),))
@dataclass(frozen=True)
class HybridKnobs(KnobSet):
    owner = "hybrid"
    block_threads: int = knob(BLOCK_THREADS)
    variant: str = knob(VARIANT)
    divisor: int = knob(DIVISOR)


class Hybrid(BFSTechnique):
    technique = Technique.HYBRID
    Knobs = HybridKnobs
    directions = (Direction.TOP_DOWN, Direction.BOTTOM_UP)
    extras = (FRONTIER_FORM, FRONTIER_CONVERTED, VERTICES_CHECKED)
    simulator_knobs = {"block_threads": 32}
    test_knobs = ({"variant": "distance"}, {"divisor": 1024}, {"divisor": 1024, "variant": "distance"})

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        from kernels import direction, scan, topdown

        if knobs.variant == "distance":
            return declared(direction.bottom_up, scan.harish_level)
        return declared(direction.bottom_up, topdown.topdown_queue, direction.queue_to_bitmap)

    def start(self, ctx: RunContext) -> DirectionLoop:
        return _Loop(ctx, self)


class _Loop(DirectionLoop):
    def plan(self) -> Step:
        k = self.ctx.knobs
        distance = k.variant == "distance"
        if not bottom_up_now(self.size, self.n, k.divisor):
            return TOP_DOWN_DISTANCE if distance else TOP_DOWN_QUEUE
        if distance:
            return Step(Direction.BOTTOM_UP, "distance")
        return Step(Direction.BOTTOM_UP, "bitmap", write_queue=True)
