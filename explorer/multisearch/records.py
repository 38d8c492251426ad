"""What a multi-search reports: a record per search, per batch and per step (streamed, like the
single-source levels), and the whole run's result."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

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


class SearchTable(Sequence):
    """Finished searches as columns, a numpy array per SearchStats field (edges_examined or time_ms
    None: the method measures none): what a step, a batch and a result hold, and what a Dask worker
    sends back. Its items are SearchStats, built when read: a batch of 4,096 searches would
    otherwise build, pickle and send 4,096 objects (tens of ms on a GPU host's cores)."""

    FIELDS = tuple(f.name for f in fields(SearchStats))
    OPTIONAL = ("edges_examined", "time_ms")

    def __init__(self, row, source, batch, levels, visited, edges_examined=None, time_ms=None):
        n = len(row)
        cols = {"row": row, "source": source, "batch": batch, "levels": levels, "visited": visited,
                "edges_examined": edges_examined, "time_ms": time_ms}
        for name, col in cols.items():
            if col is None and name in self.OPTIONAL:
                continue
            col = np.asarray(col, dtype=np.float64 if name == "time_ms" else np.int64)
            cols[name] = np.broadcast_to(col, (n,)).copy() if col.ndim == 0 else col
            if cols[name].shape != (n,):
                raise ValueError(f"SearchTable column {name!r} has shape {cols[name].shape}, not ({n},)")
        self._cols = cols

    @classmethod
    def empty(cls) -> "SearchTable":
        return cls(*([np.zeros(0, np.int64)] * 5))

    @classmethod
    def concat(cls, tables) -> "SearchTable":
        """The tables' searches one after another (a column None in one must be None in all)."""
        tables = [t for t in tables if len(t)]
        if not tables:
            return cls.empty()
        cols = {}
        for name in cls.FIELDS:
            parts = [t._cols[name] for t in tables]
            if all(p is None for p in parts):
                cols[name] = None
            elif any(p is None for p in parts):
                raise ValueError(f"cannot join searches with and without {name}")
            else:
                cols[name] = np.concatenate(parts)
        return cls(**cols)

    def column(self, name: str) -> np.ndarray | None:
        """One field of every search (None where the method measures none); read-only."""
        col = self._cols[name]
        if col is not None:
            col = col.view()
            col.flags.writeable = False
        return col

    def take(self, index) -> "SearchTable":
        """The searches at `index` (a slice, an index array or a boolean mask), in its order."""
        return SearchTable(**{k: None if c is None else c[index] for k, c in self._cols.items()})

    def replace(self, **columns) -> "SearchTable":
        """The same searches with the named columns replaced (a number: the same in every search)."""
        return SearchTable(**{**self._cols, **columns})

    def __len__(self) -> int:
        return len(self._cols["row"])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.take(i)
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"search {i} of {n}")
        return SearchStats(**{k: None if c is None else c[i].item() for k, c in self._cols.items()})

    def __iter__(self):
        n = len(self)
        lists = [[None] * n if c is None else c.tolist() for c in (self._cols[k] for k in self.FIELDS)]
        for values in zip(*lists):
            yield SearchStats(*values)

    def __eq__(self, other) -> bool:
        if not isinstance(other, SearchTable):
            return NotImplemented
        return len(self) == len(other) and all(
            (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
            for a, b in ((self._cols[k], other._cols[k]) for k in self.FIELDS))

    __hash__ = None

    def __repr__(self) -> str:
        return f"SearchTable({len(self)} searches)"


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
    searches: Sequence = ()  # the searches this step finished (a SearchTable of SearchStats)
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
    searches: SearchTable
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
    method_choice: object = None  # choose.MethodChoice when method "auto" chose the method

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
        e = self.searches.column("edges_examined")
        return None if e is None else int(e.sum())

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
                "plan": self.plan.describe(), "device": self.device,
                **({"chosen": self.method_choice.as_dict()} if self.method_choice is not None else {})}
