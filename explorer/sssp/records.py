"""Per-iteration records and whole-run results of single-source shortest paths: what the engine
yields for a weighted run and what plots, tables and files read (the BFS's are in explorer.stats).

An `IterationStats` is one step of the run: a relax step (the frontier's arcs relaxed), a bucket
advance of Δ-stepping (`gather`: the next bucket's vertices moved into the frontier) or the last
step (`parents`: the tree made tight, packed words unpacked). Its counts are exact: every kernel
counts them (per warp, one atomic a counter). A technique's own quantities are its extras.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ..stats import Extra, RecordFiles
from .weights import INT64_INF

#: A step's phase, with what it does.
PHASES = {
    "relax": "the frontier's arcs relaxed; improved vertices queued",
    "gather": "Δ-stepping's bucket advance: the next bucket's far vertices moved into the frontier",
    "parents": "the end: every parent made tight (packed words unpacked)",
}


@dataclass(frozen=True)
class IterationStats:
    """What one step of a shortest-path run did."""

    iteration: int  # the step's number, from 0
    phase: str  # a key of PHASES
    frontier_in: int  # entries of the frontier relaxed (duplicates included)
    relaxations: int  # arcs relaxed: d(u) + w compared with d(v)
    improvements: int  # relaxations that lowered d(v)
    frontier_out: int  # entries written to the next frontier
    duplicates: int  # improvements of a vertex already queued in this step (dropped or kept, by technique)
    bucket: int | None  # Δ-stepping: the bucket being settled (distances in [bΔ, (b+1)Δ)); None otherwise
    technique: str
    kernel: str = "multi-block"
    launches: int = 1  # kernel launches the step took (memsets included)
    time_ms: float = 0.0  # GPU time of the step (CUDA events); host time on the simulator
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "extras", MappingProxyType(dict(self.extras)))

    def __getattr__(self, name):
        extras = self.__dict__.get("extras", {})
        if name in extras:
            return extras[name]
        raise AttributeError(f"IterationStats has no field or extra {name!r}; extras here: "
                             f"{', '.join(extras) or 'none'}")

    def as_row(self) -> dict:
        row = {f: getattr(self, f) for f in ITERATION_FIELDS}
        row.update(self.extras)
        return row


ITERATION_FIELDS = tuple(f.name for f in dataclasses.fields(IterationStats) if f.name != "extras")


@dataclass
class SSSPResult(RecordFiles):
    """A finished shortest-path run: distances (int64 or float64, as the weights), parents forming
    shortest paths, a record per step and where it ran."""

    RECORDS = "iterations"  # what its JSON calls its records

    graph: str
    source: int  # a vertex 0..n-1; -1 for Johnson's virtual source (every vertex at distance 0)
    technique: str
    knobs: dict
    distances: np.ndarray  # int64 (INT64_INF: unreached) or float64 (inf: unreached)
    parents: np.ndarray  # int32; -1 unreached; the source's parent is itself
    iterations: list
    total_ms: float  # the steps' time summed
    elapsed_ms: float = 0.0  # first step's start to the last's end, less what the caller held
    device: dict = field(default_factory=dict)
    dtype: str = "float64"  # the distances' type
    weights: str = ""  # where the weights came from (unit weights, the graph's)
    validation: str | None = None
    extras: tuple = ()  # the technique's Extra declarations
    original_ids: np.ndarray | None = field(default=None, repr=False)

    @property
    def source_id(self) -> int:
        if self.source < 0 or self.original_ids is None:
            return self.source
        return int(self.original_ids[self.source])

    @property
    def reached_mask(self) -> np.ndarray:
        d = self.distances
        return d != INT64_INF if d.dtype == np.int64 else np.isfinite(d)

    @property
    def reached(self) -> int:
        return int(np.count_nonzero(self.reached_mask))

    def as_float(self) -> np.ndarray:
        """The distances as float64 with inf for unreached vertices (scipy's form)."""
        if self.distances.dtype == np.float64:
            return self.distances
        out = self.distances.astype(np.float64)
        out[~self.reached_mask] = np.inf
        return out

    @property
    def relax_ms(self) -> float:
        """Time of the relax and gather steps, the tree's last pass left out (what a run that
        computes no parents would take)."""
        return sum(r.time_ms for r in self.iterations if r.phase != "parents")

    @property
    def level_fields(self) -> tuple:
        return ITERATION_FIELDS + tuple(e.name for e in self.extras)

    def summary(self) -> dict:
        reached = self.reached_mask
        far = self.as_float()[reached]
        return {
            "graph": self.graph,
            "source": "virtual" if self.source < 0 else self.source_id,
            **({"source_vertex": self.source} if 0 <= self.source != self.source_id else {}),
            "technique": self.technique,
            "distances": self.dtype,
            "weights": self.weights,
            "iterations": len(self.iterations),
            "reached": int(reached.sum()),
            "max_distance": float(far.max()) if far.size else None,
            "relaxations": sum(r.relaxations for r in self.iterations),
            "improvements": sum(r.improvements for r in self.iterations),
            "duplicates": sum(r.duplicates for r in self.iterations),
            "total_ms": round(self.total_ms, 4),
            "relax_ms": round(self.relax_ms, 4),
            "elapsed_ms": round(self.elapsed_ms, 4),
            "validation": self.validation,
            "device": self.device,
            "knobs": self.knobs,
        }

    def level_rows(self) -> list[dict]:
        return [r.as_row() for r in self.iterations]

    def distances_json(self) -> list:
        """None: unreached; whole numbers for int64 distances."""
        return [None if not np.isfinite(x) else (int(x) if self.dtype == "int64" else x)
                for x in self.as_float().tolist()]


__all__ = ["Extra", "ITERATION_FIELDS", "IterationStats", "PHASES", "SSSPResult"]
