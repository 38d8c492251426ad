"""What a shortest-path technique provides to the enactor, and what it gets.

A technique (registered in explorer.sssp.techniques) is a `ShortestPathTechnique`: its knobs,
its record extras, whether it takes negative weights, checks that need the graph's weights or
the device (`check`), and `start(ctx)`, the untimed set-up that returns a loop. The enactor
(explorer.engine.enactor) owns the loop, as for a BFS: while not converged it times
`launch(go)`, reads `readback` back and turns what `collect(ms)` returns (a list of rows, the
core fields of explorer.sssp.records.IterationStats without iteration, technique and time, plus
the extras) into records. `result()` gives the host's distances and parents at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...knobs import KnobError, KnobSet, NoKnobs
from ...techniques.base import RunContext


@dataclass
class SSSPContext(RunContext):
    """RunContext with the weights (explorer.sssp.weights.Weighting); `source` is -1 for Johnson's
    virtual source (every vertex at distance 0, all in the first frontier)."""

    weighting: Any = None


class ShortestPathTechnique:
    technique: ClassVar[Any]  # its SSSPTechnique member
    Knobs: ClassVar[type[KnobSet]] = NoKnobs
    extras: ClassVar[tuple] = ()  # explorer.stats.Extra declarations
    runtimes: ClassVar[frozenset] = frozenset({"gpu", "simulator"})
    #: Whether it takes negative weights (and detects negative cycles); else it refuses them by name.
    negative_weights: ClassVar[bool] = True
    #: Knob values that keep a simulator run to seconds; applied where the user did not set them.
    simulator_knobs: ClassVar[dict] = {}
    #: Knob settings the conformance suite runs besides the defaults and each knob's extremes.
    test_knobs: ClassVar[tuple] = ()
    #: What a class should notice when stepping through it.
    classroom_note: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return self.technique.value

    def check(self, graph, weighting, knobs: KnobSet, limits) -> None:
        """Refuse, before anything runs, what these weights or this device cannot do (KnobError,
        NegativeWeightError); here, blocks larger than the device's. A technique that adds its own
        checks calls this one too."""
        for name in ("block_threads", "single_block_threads"):
            threads = getattr(knobs, name, None)
            if threads is not None and threads > limits.max_threads_per_block:
                raise KnobError(f"knob {name}={threads} exceeds this GPU's {limits.max_threads_per_block} "
                                "threads per block")

    def start(self, ctx: SSSPContext):
        raise NotImplementedError
