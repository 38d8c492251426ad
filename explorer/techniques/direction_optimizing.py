"""direction-optimizing: Beamer, Asanović & Patterson, "Direction-Optimizing Breadth-First
Search" (SC'12). Top-down while the frontier's out-edges are few against the unvisited vertices'
edges; bottom-up once m_f > m_u / α; back to top-down once the frontier shrinks below n / β.

The frontier lives as a queue in top-down levels and as a bitmap in bottom-up levels; a level
that switches converts it on the device first (kernels/direction.py: queue_to_bitmap,
bitmap_to_queue). Each record carries the rule's quantities (m_f, m_u, n_f) as they stood when
the level's direction was chosen.

The top-down half is the simple topdown-queue kernel (kernels/topdown.py, a thread per frontier
vertex) followed by a small kernel summing the new frontier's degrees (m_f and what m_u loses);
BFS-4K's machinery (single-block levels at the ends, its load balancing) is not used yet.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..knobs import BLOCK_THREADS, KnobSet, KnobSpec, knob
from ..stats import Direction, Extra
from . import Technique
from .base import BFSTechnique, RunContext
from .direction import FRONTIER_CONVERTED, FRONTIER_FORM, TOP_DOWN_QUEUE, VERTICES_CHECKED, DirectionLoop, Step

ALPHA = KnobSpec("alpha", "α: switch top-down -> bottom-up when the frontier's out-edges m_f exceed m_u/α, "
                 "m_u the in-edges of the unvisited vertices (larger: bottom-up sooner)", 14, low=1,
                 high=1_000_000, section="Beamer et al. SC'12 §4 (C_TB = m_u/α)")
BETA = KnobSpec("beta", "β: switch bottom-up -> top-down when the frontier, shrinking, holds fewer than n/β "
                "vertices (larger: bottom-up longer)", 24, low=1, high=1_000_000,
                section="Beamer et al. SC'12 §4 (C_BT = n/β)")


@dataclass(frozen=True)
class DirectionOptimizingKnobs(KnobSet):
    owner = "direction-optimizing"
    block_threads: int = knob(BLOCK_THREADS)
    alpha: int = knob(ALPHA)
    beta: int = knob(BETA)


BOTTOM_UP_BITMAP = Step(Direction.BOTTOM_UP, "bitmap", write_bits=True)


def next_direction(current: Direction, m_f: int, m_u: int, n_f: int, prev_n_f: int, n: int, alpha: int,
                   beta: int) -> Direction:
    """Beamer's rule. Top-down -> bottom-up when m_f > m_u/α; bottom-up -> top-down when n_f < n/β
    and the frontier shrinks (his Fig. 8 and the GAP reference code: a growing frontier stays
    bottom-up however small)."""
    if current is Direction.TOP_DOWN:
        return Direction.BOTTOM_UP if m_f * alpha > m_u else Direction.TOP_DOWN
    if n_f * beta < n and n_f < prev_n_f:
        return Direction.TOP_DOWN
    return Direction.BOTTOM_UP


class DirectionOptimizing(BFSTechnique):
    technique = Technique.DIRECTION_OPTIMIZING
    Knobs = DirectionOptimizingKnobs
    directions = (Direction.TOP_DOWN, Direction.BOTTOM_UP)
    extras = (
        FRONTIER_FORM, FRONTIER_CONVERTED, VERTICES_CHECKED,
        Extra("m_f", "Beamer's m_f: out-edges of the frontier, when the level's direction was chosen", "edges"),
        Extra("m_u", "Beamer's m_u: in-edges of the unvisited vertices, when the level's direction was chosen",
              "edges"),
        Extra("n_f", "Beamer's n_f: vertices in the frontier", "vertices"),
    )
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("Watch the direction change: top-down while the frontier's edges m_f are few against the "
                      "unvisited vertices' m_u, bottom-up through the fat middle levels (m_f > m_u/alpha), top-down "
                      "again once the frontier shrinks below n/beta.")
    test_knobs = ({"alpha": 1_000_000, "beta": 1},)  # bottom-up at once, top-down as soon as it shrinks

    def start(self, ctx: RunContext) -> DirectionLoop:
        return _Loop(ctx, self)


class _Loop(DirectionLoop):
    track_degrees = True

    def plan(self) -> Step:
        k = self.ctx.knobs
        current = self.step.direction if self.step is not None else Direction.TOP_DOWN
        d = next_direction(current, self.m_f, self.m_u, self.size, self.prev_size, self.n, k.alpha, k.beta)
        return TOP_DOWN_QUEUE if d is Direction.TOP_DOWN else BOTTOM_UP_BITMAP
