"""What a multi-search reports: a record per search, per batch and per step (streamed, like the
single-source levels), and the whole run's result."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..stats import Direction


@dataclass(frozen=True)
class SearchStats:
    """One finished search."""

    row: int  # its index in the request (0..k-1)
    source: int
    batch: int
    levels: int  # BFS levels: its eccentricity + 1
    visited: int  # vertices reached, the source included
    edges_examined: int | None  # adjacency entries it inspected (None: MS-BFS shares them)
    time_ms: float | None  # its duration on its SM (cycles at the boost clock); None for MS-BFS


@dataclass(frozen=True)
class BatchStats:
    """One batch: its searches, the GPU time of its steps, and their energy where measured."""

    batch: int
    searches: int
    time_ms: float
    energy_j: float | None
    watts: float | None  # energy_j over the host time its steps took (energy_s)
    energy_note: str
    energy_s: float = 0.0


@dataclass(frozen=True)
class Progress:
    """One step of a multi-search: a launch of a batch's searches (search per block), or one level
    of every search of a batch (MS-BFS). Counts are cumulative over the run where so named."""

    step: int
    batch: int
    batches: int
    searches_done: int  # cumulative
    searches_total: int
    visited: int  # cumulative vertices visited (vertex, search) pairs
    edges_examined: int  # cumulative adjacency entries inspected ((arc, word) pairs for MS-BFS)
    time_ms: float  # this step's GPU time (host time under the simulator)
    elapsed_ms: float  # cumulative step time
    searches: tuple = ()  # SearchStats of the searches this step finished
    level: int | None = None  # MS-BFS: the level this step reached
    direction: Direction | None = None  # MS-BFS: top-down (push) or bottom-up (pull)
    batch_done: BatchStats | None = None  # set on a batch's last step

    @property
    def fraction(self) -> float:
        return self.searches_done / self.searches_total if self.searches_total else 1.0

    def as_row(self) -> dict:
        return {"step": self.step, "batch": self.batch, "searches_done": self.searches_done,
                "searches_total": self.searches_total, "visited": self.visited,
                "edges_examined": self.edges_examined, "time_ms": self.time_ms, "elapsed_ms": self.elapsed_ms,
                "level": self.level, "direction": None if self.direction is None else self.direction.value}


@dataclass
class MultiSearchResult:
    """A finished multi-search: the application's values, a record per search and per batch."""

    graph: str
    application: str
    method: str
    sources: np.ndarray
    values: dict
    searches: list
    batches: list
    plan: object  # plan.BatchPlan
    T: int | None = None
    threshold: object = None  # methods.ThresholdChoice when T was chosen from the histogram
    device: dict = field(default_factory=dict)
    energy_note: str = ""
    per_vertex: tuple = ()
    per_search: tuple = ()
    #: The graph's own ids (CSRGraph.original_ids; None: they are 0..n-1): `sources` and the values
    #: are indexed by vertex 0..n-1, `source_ids` and `ranked()` speak the user's ids.
    original_ids: np.ndarray | None = None

    def own_ids(self, vertices) -> np.ndarray:
        """The graph's own ids of `vertices` (0..n-1)."""
        v = np.asarray(vertices, dtype=np.int64)
        return v if self.original_ids is None else np.asarray(self.original_ids)[v]

    @property
    def source_ids(self) -> np.ndarray:
        """The searched sources in the graph's own ids (as run_many took them)."""
        return self.own_ids(self.sources)

    @property
    def time_ms(self) -> float:
        return sum(b.time_ms for b in self.batches)

    @property
    def energy_j(self) -> float | None:
        e = [b.energy_j for b in self.batches]
        return None if not e or any(x is None for x in e) else float(sum(e))

    @property
    def watts(self) -> float | None:
        """Average power over the steps (the energy over the host time the steps took)."""
        e = self.energy_j
        s = sum(b.energy_s for b in self.batches)
        return None if e is None or s <= 0 else e / s

    @property
    def edges_examined(self) -> int | None:
        e = [s.edges_examined for s in self.searches]
        return None if any(x is None for x in e) else int(sum(e))

    def ranked(self, key: str | None = None, top: int | None = 20) -> list[tuple[int, float]]:
        """(id, value) from the highest value down, the id the graph's own (a file's label, as
        run_many takes sources): a per-vertex value (betweenness) ranks vertices, a per-search one
        (closeness, eccentricity) ranks the sources."""
        key = key or (self.per_vertex or self.per_search or (None,))[0]
        if key not in self.values:
            raise KeyError(f"no value {key!r}; values: {', '.join(self.values)}")
        v = np.asarray(self.values[key])
        if v.ndim != 1:
            raise ValueError(f"value {key!r} has shape {v.shape}: only one number per vertex or source ranks")
        ids = self.own_ids(np.arange(v.size) if key in self.per_vertex else self.sources)
        order = np.argsort(-v, kind="stable")[:top]
        return [(int(ids[i]), float(v[i])) for i in order]

    def summary(self) -> dict:
        e = self.edges_examined
        t = self.time_ms
        return {"graph": self.graph, "application": self.application, "method": self.method,
                "T": self.T, "searches": len(self.sources), "batches": len(self.batches),
                "time_ms": round(t, 4), "searches_per_s": round(len(self.sources) / (t / 1e3), 1) if t else None,
                "edges_examined": e, "geps": round(e / (t * 1e6), 3) if e is not None and t else None,
                "energy_j": self.energy_j, "watts": self.watts, "energy_note": self.energy_note,
                "plan": self.plan.describe(), "device": self.device}
