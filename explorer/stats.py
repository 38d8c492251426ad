"""Per-level records and whole-run results: what the engine yields and what plots and files read.

Nothing here knows about kernels or widgets. A `LevelStats` is one row of every plot: core fields
that every technique fills, plus the extras its technique declares (`Extra`: name, meaning, unit),
which tables, plots, hovers, CSV and JSON pick up by name. A count a run did not measure
(instrumentation off) is None, never a made-up number. A `RunResult` carries the whole run
(distances, parents, levels, device, versions, knobs) and writes itself as JSON or CSV.
"""
from __future__ import annotations

import csv
import dataclasses
import enum
import io
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np


class Kernel(str, enum.Enum):
    """What kind of launch ran a level."""

    MULTI_BLOCK = "multi-block"  # one launch (or a few) over the whole GPU for this level
    SINGLE_BLOCK = "single-block"  # one block running many levels inside one launch
    CLUSTER = "cluster"  # one thread-block cluster running many levels inside one launch
    CPU = "cpu"  # host code (Numba parallel=True)


class Direction(str, enum.Enum):
    """Which side looks for the other."""

    TOP_DOWN = "top-down"  # frontier vertices claim their unvisited neighbours
    BOTTOM_UP = "bottom-up"  # unvisited vertices look for a parent in the frontier


@dataclass(frozen=True)
class Extra:
    """A technique's own per-level quantity: a column of its records beside the core fields."""

    name: str
    meaning: str
    unit: str = ""
    kind: type = int


@dataclass(frozen=True)
class LevelStats:
    """What happened in one BFS level (one frontier propagation step).

    Counts are exact when the run is instrumented; a count the run did not measure is None.
    Technique-declared extras are in `extras` and readable as attributes (`lv.warp_size`).
    """

    level: int  # distance of the frontier vertices from the source
    frontier_in: int  # |F_d|: entries of the frontier read by this level (duplicates included)
    edges_examined: int | None  # adjacency entries inspected
    discovered: int | None  # vertices reached for the first time (unique)
    frontier_out: int  # |F_d_new| after any duplicate filter: entries written for the next level
    dup_generated: int | None  # ground truth: entries that repeat a vertex, counted before any filter
    dup_detected: int | None  # duplicates removed by a filter
    dup_undetected: int | None  # duplicates still in F_d_new after the filter
    technique: str  # Technique value that ran this level
    kernel: Kernel
    direction: Direction = Direction.TOP_DOWN
    launches: int = 1  # kernel launches this level took (0: ran inside an earlier level's launch)
    # GPU time of the level (CUDA events; the levels of one multi-level launch split its time by
    # the SM's cycle counter); host time on the simulator and the CPU.
    time_ms: float = 0.0
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        # Records are made between levels, while the GPU waits: convert only what needs it (in the
        # instance's dict: the fields are frozen to everyone else).
        d = self.__dict__
        if type(d["kernel"]) is not Kernel:
            d["kernel"] = Kernel(d["kernel"])
        if type(d["direction"]) is not Direction:
            d["direction"] = Direction(d["direction"])
        d["extras"] = MappingProxyType(d["extras"])

    @classmethod
    def made(cls, level: int, technique: str, time_ms: float, extras: dict, row: dict) -> "LevelStats":
        """LevelStats(level=, technique=, time_ms=, extras=, **row) in a third of the time: the
        engine makes one for every level of every run (a thousand a run on a long graph, and a sweep
        makes hundreds of runs), and a frozen dataclass's __init__ sets each field through
        object.__setattr__. `row` holds core fields only (the caller checks); a required one
        missing is refused as __init__ would refuse it."""
        if not _REQUIRED.issubset(row):
            raise TypeError(f"LevelStats is missing the fields {sorted(_REQUIRED.difference(row))}")
        rec = object.__new__(cls)
        d = rec.__dict__
        d.update(_DEFAULTS)
        d.update(row)
        d["level"], d["technique"], d["time_ms"], d["extras"] = level, technique, time_ms, extras
        rec.__post_init__()
        return rec

    def __getattr__(self, name):
        # Only called for names that are not fields: a technique's extras.
        extras = self.__dict__.get("extras", {})
        if name in extras:
            return extras[name]
        raise AttributeError(f"LevelStats has no field or extra {name!r}; extras here: {', '.join(extras) or 'none'}")

    def as_row(self) -> dict:
        """Core fields then extras, flat, enums as their values."""
        row = {f: getattr(self, f) for f in LEVEL_FIELDS}
        row["kernel"], row["direction"] = self.kernel.value, self.direction.value
        row.update(self.extras)
        return row


#: The core fields, in table order (extras follow them).
LEVEL_FIELDS = tuple(f.name for f in dataclasses.fields(LevelStats) if f.name != "extras")
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(LevelStats) if f.default is not dataclasses.MISSING}
_REQUIRED = frozenset(f.name for f in dataclasses.fields(LevelStats) if f.default is dataclasses.MISSING
                      and f.default_factory is dataclasses.MISSING) - {"level", "technique"}


class RecordFiles:
    """A finished run's files (RunResult, SSSPResult): JSON of its summary, its records (under
    `RECORDS`) and its extras' declarations, with the arrays when asked; CSV of its records."""

    RECORDS = "levels"

    def distances_json(self) -> list:
        return self.distances.tolist()

    def to_json(self, include_arrays: bool = False) -> str:
        doc = {"summary": self.summary(), self.RECORDS: self.level_rows(),
               "extras": {e.name: {"meaning": e.meaning, "unit": e.unit} for e in self.extras}}
        if include_arrays:
            # Indexed by vertex 0..n-1; parents are vertices too. "ids" maps them to the input's ids.
            doc["distances"] = self.distances_json()
            doc["parents"] = self.parents.tolist()
            doc["ids"] = (self.original_ids.tolist() if self.original_ids is not None
                          else f"the input's ids are the vertices 0..{len(self.distances) - 1}")
        return json.dumps(doc, indent=2, default=_json_default)

    def to_csv(self) -> str:
        """One row per record; a count that was not measured is an empty cell."""
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=self.level_fields, restval="")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in self.level_rows())
        return buf.getvalue()


@dataclass
class RunResult(RecordFiles):
    """A finished BFS: the answer, the per-level record and where it ran."""

    graph: str
    source: int
    technique: str
    knobs: dict
    # int32[n], -1 where unreached; None (both) where a check on the device passed them and they
    # stayed there (run_bfs's `check`: a sweep's repeated runs), validation then "ok".
    distances: np.ndarray | None
    parents: np.ndarray | None  # int32[n], -1 where unreached, source's parent is itself
    levels: list[LevelStats]
    total_ms: float  # sum of the levels' times (kernel windows; host round trips excluded)
    traversed_edges: int  # Graph500 counting: undirected edges inside the reached component
    device: dict = field(default_factory=dict)  # name, backend (gpu/simulator/cpu), driver, versions
    # BFS wall time: first launch to the last level's completion, host round trips included, with
    # the clock stopped while the caller holds a level (plotting is not BFS time).
    elapsed_ms: float = 0.0
    instrumented: bool = True
    validation: str | None = None  # "ok" or the first violated Graph500 rule, once validated
    extras: tuple[Extra, ...] = ()  # the technique's declared per-level extras
    # Set by a caller that measured it (the Explorer): wall time from the run's start to its end,
    # with what the caller did between levels (plotting) included. Never BFS time.
    caller_wall_ms: float | None = None
    # The input's own id of each vertex (a file's ids, when its loader remapped them), else None:
    # `source` and the arrays' indices are vertices 0..n-1; `source_id` is the input's id.
    original_ids: np.ndarray | None = field(default=None, repr=False)
    # What technique "auto" chose and why (explorer.auto.Choice.as_dict()); None when the caller named one.
    choice: dict | None = None

    @property
    def source_id(self) -> int:
        """The source in the input's own ids."""
        return self.source if self.original_ids is None else int(self.original_ids[self.source])

    @property
    def num_levels(self) -> int:
        return len(self.levels)

    @property
    def reached(self) -> int:
        return int(np.count_nonzero(self.distances >= 0))

    @property
    def gteps(self) -> float:
        """Graph500 TEPS over the whole search (BFS wall time), in billions."""
        t = self.elapsed_ms or self.total_ms
        return self.traversed_edges / (t * 1e6) if t > 0 else 0.0

    @property
    def level_fields(self) -> tuple[str, ...]:
        return LEVEL_FIELDS + tuple(e.name for e in self.extras)

    def summary(self) -> dict:
        dups = [lv.dup_generated for lv in self.levels]
        return {
            "graph": self.graph,
            "source": self.source_id,
            **({"source_vertex": self.source} if self.source_id != self.source else {}),
            "technique": self.technique,
            "levels": self.num_levels,
            "reached": self.reached,
            "traversed_edges": self.traversed_edges,
            "total_ms": round(self.total_ms, 4),
            "elapsed_ms": round(self.elapsed_ms, 4),
            # None under the simulator: its times are not GPU times, so no TEPS rate is meaningful
            "gteps": None if (self.device or {}).get("backend") == "simulator" else float(f"{self.gteps:.4g}"),
            "duplicates_generated": sum(dups) if all(d is not None for d in dups) else None,
            "validation": self.validation,
            "instrumented": self.instrumented,
            "device": self.device,
            "knobs": self.knobs,
            **({"chosen": self.choice} if self.choice is not None else {}),
        }

    def level_rows(self) -> list[dict]:
        """Each level as a dict, its keys in level_fields' order (the tables', the CSV's)."""
        rows = [lv.as_row() for lv in self.levels]
        order = self.level_fields
        return [{**{f: row[f] for f in order if f in row}, **row} for row in rows]


def write_text_atomic(path, text: str) -> Path:
    """Write a whole file or nothing: a temporary file beside it, then an atomic rename. A link is
    written through (its target gets the text, the link stays); a file that is not a regular one (a
    device such as /dev/null or /dev/stdout, a FIFO) is written to in place, never replaced."""
    path = Path(path)
    try:
        st = os.stat(path)  # through links
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise OSError(f"cannot write {path}: {err.strerror}") from err
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise OSError(f"cannot write {path}: it is a directory")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as err:
            raise OSError(f"cannot write {path}: {err.strerror or err}") from err
        return path
    target = Path(os.path.realpath(path))  # a link's target, which need not exist yet
    # Not mkstemp, whose files are 0600: a new file gets the mode the umask gives, a replaced
    # file keeps its own.
    tmp = target.parent / f".{target.name}.{os.urandom(4).hex()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as err:
        raise OSError(f"cannot write {path}: {err.strerror}") from err
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if st is not None:
                os.chmod(f.fileno(), stat.S_IMODE(st.st_mode))
            f.write(text)
        os.replace(tmp, target)
    except BaseException as err:
        os.unlink(tmp)
        if isinstance(err, OSError):
            raise OSError(f"cannot write {path}: {err.strerror or err}") from err
        raise
    return path


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
