"""Per-level records and whole-run results: what the engine yields and what plots and files read.

Nothing here knows about kernels or widgets. A `LevelStats` is one row of every plot; a
`RunResult` carries the whole run (distances, parents, levels, device, versions, knobs) and
writes itself as JSON or CSV.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class LevelStats:
    """What happened in one BFS level (one frontier propagation step).

    Counts are exact when the run is instrumented; with instrumentation off only `frontier_in`,
    `discovered` and the timing are filled and the duplicate counts are -1 ("not measured").
    """

    level: int  # distance of the frontier vertices from the source
    frontier_in: int  # |F_d|: entries of the frontier read by this level (duplicates included)
    edges_examined: int  # adjacency entries inspected
    discovered: int  # vertices reached for the first time (unique)
    frontier_out: int  # |F_d_new| after the duplicate filter: entries written for the next level
    dup_generated: int  # ground truth: entries that repeat a vertex, counted before the filter
    dup_detected: int  # duplicates removed by the filter (hash64 / warp culling)
    dup_conflicts: int  # hash collisions of different vertices (kept conservatively)
    dup_undetected: int  # duplicates still in F_d_new after the filter
    technique: str  # Technique value that ran this level
    kernel: str  # kernel kind: "multi-block", "single-block", ...
    warp_size: int = 1  # (virtual) warp size: threads sharing one frontier vertex
    edge_discover: bool = False
    heavy_vertices: int = 0  # frontier vertices sent to the heavy-vertex (child grid) path
    binary_scan: bool = False  # ballot/popc prefix sum instead of the shuffle scan
    coalesced_writes: bool = False
    launches: int = 1  # kernel launches this level took (0: ran inside a persistent launch)
    # GPU time of the level (CUDA events); the levels of one single-block launch split its time
    # by the block's cycle counter.
    time_ms: float = 0.0

    def as_row(self) -> dict:
        return dataclasses.asdict(self)


LEVEL_FIELDS = tuple(f.name for f in dataclasses.fields(LevelStats))


@dataclass
class RunResult:
    """A finished BFS: the answer, the per-level record and where it ran."""

    graph: str
    source: int
    technique: str
    knobs: dict
    distances: np.ndarray  # int32[n], -1 where unreached
    parents: np.ndarray  # int32[n], -1 where unreached, source's parent is itself
    levels: list[LevelStats]
    total_ms: float  # sum of GPU level times (kernel windows; host round trips excluded)
    traversed_edges: int  # Graph500 counting: undirected edges inside the reached component
    device: dict = field(default_factory=dict)  # name, backend (gpu/simulator), driver, versions
    elapsed_ms: float = 0.0  # first launch to last level done, host round trips included
    instrumented: bool = True
    validation: str | None = None  # "ok" or the first violated Graph500 rule, once validated

    @property
    def num_levels(self) -> int:
        return len(self.levels)

    @property
    def reached(self) -> int:
        return int(np.count_nonzero(self.distances >= 0))

    @property
    def gteps(self) -> float:
        """Graph500 TEPS over the whole search (elapsed time), in billions."""
        t = self.elapsed_ms or self.total_ms
        return self.traversed_edges / (t * 1e6) if t > 0 else 0.0

    def summary(self) -> dict:
        dups = [lv.dup_generated for lv in self.levels]
        return {
            "graph": self.graph,
            "source": self.source,
            "technique": self.technique,
            "levels": self.num_levels,
            "reached": self.reached,
            "traversed_edges": self.traversed_edges,
            "total_ms": round(self.total_ms, 4),
            "elapsed_ms": round(self.elapsed_ms, 4),
            "gteps": round(self.gteps, 4),
            "duplicates_generated": sum(dups) if all(d >= 0 for d in dups) else None,
            "validation": self.validation,
            "instrumented": self.instrumented,
            "device": self.device,
            "knobs": self.knobs,
        }

    def level_rows(self) -> list[dict]:
        return [lv.as_row() for lv in self.levels]

    def to_json(self, include_arrays: bool = False) -> str:
        doc = {"summary": self.summary(), "levels": self.level_rows()}
        if include_arrays:
            doc["distances"] = self.distances.tolist()
            doc["parents"] = self.parents.tolist()
        return json.dumps(doc, indent=2, default=_json_default)

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=LEVEL_FIELDS)
        writer.writeheader()
        writer.writerows(self.level_rows())
        return buf.getvalue()


def write_text_atomic(path, text: str) -> Path:
    """Write a whole file or nothing: a temporary file beside it, then an atomic rename."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as err:
        raise OSError(f"cannot write {path}: {err.strerror}") from err
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
