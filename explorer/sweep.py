"""Knob sweeps: time a technique over a grid (or a random sample) of knob values, each point the
median of repeated runs with their spread, every run checked against a reference: a BFS technique
against the CPU BFS, a shortest-path technique (problem "sssp") against scipy's distances.

Pure host logic, no widgets: the Explorer's Tuning panel (explorer.ui.sweep_panel), the notebooks
and benchmarks/sweep_knobs.py share it.

    plan = plan_sweep("bfs4k", {"K1": None, "K4": [0, 1, 2]})     # None: values over the declared range
    plan = plan_sweep("delta-stepping", {"delta": [1, 4, 16]}, problem="sssp")  # a weighted graph's runs
    sweep = run_sweep(graph, "max-degree", plan, repeats=3, on_progress=print)
    sweep.best                    # the fastest correct point (by median)
    sweep.verdict().text          # ... and whether the sweep measured it apart from the others
    sweep.choose({"K1": 4})       # the point to adopt: the best only if measured faster than K1=4
    sweep.save("sweep.json")      # ... and load_sweep("sweep.json") reopens it

Noise: a point's runs span [min, max]; two points whose spans overlap are *within noise* of each
other: the sweep does not tell them apart, whatever their medians say. A point of one run has no
measured spread, so nothing is measured apart from it. A difference counts only when every run of
one point is faster than every run of the other (`measured_apart`).

The runs share one Session (the graph's device arrays and buffers are made once), are not
instrumented (the counts cost time) and are timed by the engine: `elapsed_ms`, the run's wall time
(first launch to last level or iteration, host round trips included), is what a point's median is taken of;
the kernels' share (`kernel_ms`) is kept beside it. Under the simulator, sweeps are refused beyond
SIMULATOR_SWEEP_MAX_ARCS arcs or SIMULATOR_SWEEP_MAX_RUNS runs (see check_sweep_size).
"""
from __future__ import annotations

import datetime
import itertools
import json
import math
import statistics
import textwrap
import time
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numba
import numpy as np

from . import backend
from .api import Vertex, resolve_source, run_bfs
from .engine import DeviceLimits, Session
from .graphs import CSRGraph
from .knobs import KnobError, KnobSpec
from .reference import bfs_distances, check_result, compare_distances
from .reference.on_device import DeviceCheck
from .stats import write_text_atomic
from .techniques import Technique, implementation, knobs_of, make_knobs

#: Every simulated GPU thread is a Python thread: one BFS-4K run of a graph of a thousand arcs
#: takes seconds, so a sweep's graph and its number of runs are capped there.
SIMULATOR_SWEEP_MAX_ARCS = 5_000
SIMULATOR_SWEEP_MAX_RUNS = 200
#: Values an axis gets from a numeric range when none are given.
POINTS_PER_AXIS = 5
#: Numba CPU threads a sweep point's host work (its runs' host side, its checks) uses at most. On a
#: host of 64 CPUs and 4 H200s (2026-11-28) one process's 64-point sweep took 6.8 s on all 64 threads,
#: 3.4 s on 32 and 3.4-4.0 on 16 (Kronecker 22); Kronecker 20's 2.9-3.3 s, 0.95 and 1.1.
HOST_THREADS = 32
FORMAT = 1  # of the saved JSON
#: Each session's device check of its sweep's source, as (the expected distances, the check).
_CHECKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Each graph's reference answer from its last swept source, for its next sweep: (problem, source,
#: answer). A graph is not changed once made (explorer.graphs.prepare keeps its work the same way).
_REFERENCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _reference(problem, graph, src: int):
    held = _REFERENCES.get(graph)
    if held is None or held[:2] != (problem.name, src):
        held = _REFERENCES[graph] = (problem.name, src, problem.expected(graph, src))
    return held[2]


class SweepTooLarge(backend.BackendError):
    """The sweep would take too long where it would run (the simulator); the message says why."""


# ------------------------------------------------------------------ problems

class BFSProblem:
    """What a sweep needs of its problem: the techniques' names and knobs, a run to its result,
    the reference and the check. BFS: explorer.techniques, run_bfs, the CPU BFS."""

    name, steps = "bfs", "levels"  # `steps`: what a run's records count

    def parse(self, technique) -> str:
        return Technique.parse(technique).value

    def knobs_of(self, technique):
        return knobs_of(technique)

    def make_knobs(self, technique, values):
        return make_knobs(technique, values)

    def implementation(self, technique):
        return implementation(technique)

    def expected(self, graph, src):
        return bfs_distances(graph, src)

    def device_check(self, graph, src, expected, session):
        """The check of this source's runs where they run (on_device.DeviceCheck), one a session:
        the expected distances copied there once (computed here when not given: a worker's warm-up)."""
        held = _CHECKS.get(session) if session is not None else None
        if held is not None and held[1].source == src and expected is None:
            return held[1]  # the session's graph from the same source: the same answer
        if held is None or held[0] is not expected or held[1].source != src:
            expected = self.expected(graph, src) if expected is None else expected
            held = (expected, DeviceCheck(graph, src, expected))
            if session is not None:
                _CHECKS[session] = held
        return held[1]

    def run(self, graph, src, technique, knobs, limits, session, check=None):
        return run_bfs(graph, Vertex(src), technique, knobs, instrument=False, limits=limits,
                       session=session, check=check).complete()

    def steps_of(self, result) -> int:
        return result.num_levels

    def check(self, graph, result, expected, first: bool, device=None) -> tuple[bool, str]:
        """A run `device` (its DeviceCheck) passed where it ran: by that. Else the first run of a point
        by reference.check_result (Graph500 rules), the others by their distances; every run in full
        where the device checked it (and it failed there) or could not (its technique's arrays are
        the host's)."""
        if result.distances is None:
            return result.validation == "ok", device.message
        if first or device is not None:
            rep = check_result(graph, result, expected=expected)
            return rep.ok, rep.message
        msg = compare_distances(expected, result.distances)
        return msg is None, msg or ""


class SSSPProblem(BFSProblem):
    """Single-source shortest paths: explorer.sssp's techniques and run_sssp, every run checked
    against scipy's distances (reference.sssp; the graph's weights)."""

    name, steps = "sssp", "iterations"

    def parse(self, technique) -> str:
        from .sssp import SSSPTechnique
        return SSSPTechnique.parse(technique).value

    def knobs_of(self, technique):
        from .sssp.techniques import knobs_of as sssp_knobs_of
        return sssp_knobs_of(technique)

    def make_knobs(self, technique, values):
        from .sssp import make_knobs as sssp_make_knobs
        return sssp_make_knobs(technique, values)

    def implementation(self, technique):
        from .sssp import implementation as sssp_implementation
        return sssp_implementation(technique)

    def expected(self, graph, src):
        from .reference.sssp import reference_sssp
        return reference_sssp(graph, src)[0]

    def device_check(self, graph, src, expected, session):
        return None  # every run's distances compared on the host

    def run(self, graph, src, technique, knobs, limits, session, check=None):
        from .sssp import run_sssp
        return run_sssp(graph, Vertex(src), technique, knobs, limits=limits, session=session).complete()

    def steps_of(self, result) -> int:
        return len(result.iterations)

    def check(self, graph, result, expected, first: bool, device=None) -> tuple[bool, str]:
        from .reference.sssp import check_sssp_result
        rep = check_sssp_result(graph, result, expected=expected)
        return rep.ok, rep.message


#: Problem name -> what a sweep needs of it (SweepPlan.problem, SweepResult.problem).
PROBLEMS = {p.name: p for p in (BFSProblem(), SSSPProblem())}


def problem_of(name: str):
    try:
        return PROBLEMS[name]
    except KeyError:
        raise ValueError(f"sweep problem {name!r} is unknown; problems: {', '.join(PROBLEMS)}") from None


# ------------------------------------------------------------------ plans

def axis_values(spec: KnobSpec, points: int = POINTS_PER_AXIS) -> list:
    """Values of one knob over its declared range: every choice; for a number range `points`
    values from low to high, spaced by factors when the range spans a factor of 16 or more from
    low >= 1 (K3 1..1024: 1, 6, 32, 181, 1024), evenly otherwise (integers rounded, repeats dropped)."""
    if spec.choices is not None:
        return list(spec.choices)
    if points < 1:
        raise ValueError(f"points={points} must be >= 1")
    lo, hi = _declared_range(spec)
    if points == 1:
        raw = [lo]
    elif lo >= 1 and hi / lo >= 16:
        raw = np.geomspace(lo, hi, points).tolist()
    else:
        raw = np.linspace(lo, hi, points).tolist()
    if spec.kind is int:
        return list(dict.fromkeys(int(round(v)) for v in raw))
    return list(dict.fromkeys(round(v, 6) for v in raw))


def _declared_range(spec: KnobSpec) -> tuple[float, float]:
    """The knob's numeric range, when a sweep can cover it: an unbounded one (delta-stepping's delta,
    in the graph's weight units) has no values to take without the user's."""
    lo, hi = float(spec.low), float(spec.high)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise KnobError(f"knob {spec.name}: its range [{spec.low}, {spec.high}] has no end to sweep to: give the "
                        f"values to sweep (say {spec.name}=1,2,4)")
    return lo, hi


def random_value(spec: KnobSpec, rng: np.random.Generator):
    """One value drawn within the declared range: a choice, or a number (integers inclusive),
    log-uniform when the range spans a factor of 16 or more from low >= 1."""
    if spec.choices is not None:
        return spec.choices[int(rng.integers(len(spec.choices)))]
    lo, hi = _declared_range(spec)
    if lo >= 1 and hi / lo >= 16:
        x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    else:
        x = rng.uniform(lo, hi)
    if spec.kind is int:
        return int(min(max(round(x), spec.low), spec.high))
    return round(x, 6)


@dataclass
class SweepPlan:
    """What a sweep runs: the technique, its swept knobs (axes: name -> values, in order), the
    knobs common to every point (base), and the points (swept values each), in run order."""

    technique: str
    axes: dict
    points: list
    base: dict = field(default_factory=dict)
    mode: str = "grid"
    seed: int = 0
    problem: str = "bfs"  # a key of PROBLEMS

    def knobs_of(self, point: dict) -> dict:
        return {**self.base, **point}


def plan_sweep(technique, axes: dict, *, mode: str = "grid", samples: int | None = None, seed: int = 0,
               base: dict | None = None, points_per_axis: int = POINTS_PER_AXIS, problem: str = "bfs") -> SweepPlan:
    """A sweep of `technique` over `axes` ({knob: values, or None for values over its declared
    range}). mode "grid": every combination; "random": `samples` distinct points, each knob drawn
    within its declared range (or from its given values), seeded. Values are checked against
    the knobs' declarations here (KnobError names the knob and its range); a combination the
    technique refuses (a cross-knob rule) stays in the plan and is reported at its point.
    `problem`: "bfs" (a BFS technique) or "sssp" (a shortest-path technique; see PROBLEMS)."""
    tech = problem_of(problem).parse(technique)
    Knobs = problem_of(problem).knobs_of(tech)
    if not axes:
        raise ValueError("a sweep needs at least one knob to vary")
    if mode not in ("grid", "random"):
        raise ValueError(f"sweep mode {mode!r} is invalid: use 'grid' or 'random'")
    base = dict(base or {})
    Knobs.from_dict(base)  # unknown names and bad values in the base fail now
    specs = {name: Knobs.spec(name) for name in axes}
    clash = sorted(set(axes) & set(base))
    if clash:
        raise ValueError(f"knob(s) {', '.join(clash)} are both swept and fixed in the base: choose one")
    given = {name: (None if vals is None else [specs[name].check(v) for v in vals]) for name, vals in axes.items()}
    for name, vals in given.items():
        if vals is not None and not vals:
            raise ValueError(f"knob {name}: an empty list of values to sweep")
    if mode == "grid":
        values = {name: vals if vals is not None else axis_values(specs[name], points_per_axis)
                  for name, vals in given.items()}
        points = [dict(zip(values, combo)) for combo in itertools.product(*values.values())]
        return SweepPlan(tech, values, points, base, mode, seed, problem)
    if samples is None or samples < 1:
        raise ValueError(f"a random sweep needs samples >= 1, not {samples!r}")
    rng = np.random.default_rng(seed)
    points, seen = [], set()
    for _ in range(samples * 20):  # small spaces run out of distinct points: stop there
        p = {name: (vals[int(rng.integers(len(vals)))] if vals is not None else random_value(specs[name], rng))
             for name, vals in given.items()}
        key = tuple(p.values())
        if key not in seen:
            seen.add(key)
            points.append(p)
            if len(points) == samples:
                break
    values = {name: sorted({p[name] for p in points}, key=_order) for name in given}
    return SweepPlan(tech, values, points, base, mode, seed, problem)


def _order(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


# ------------------------------------------------------------------ results

@dataclass
class SweepPoint:
    """One setting: its swept knob values, each repeat's wall time and kernel time, and the
    check against the CPU reference (ok; check: its message) or the error that stopped it."""

    knobs: dict
    times_ms: list = field(default_factory=list)
    kernel_ms: list = field(default_factory=list)
    levels: int | None = None  # the last run's levels (a shortest-path run's: iterations)
    ok: bool | None = None
    check: str = ""
    error: str | None = None

    @property
    def median_ms(self) -> float:
        return float(statistics.median(self.times_ms)) if self.times_ms else float("nan")

    @property
    def min_ms(self) -> float:
        return float(min(self.times_ms)) if self.times_ms else float("nan")

    @property
    def max_ms(self) -> float:
        return float(max(self.times_ms)) if self.times_ms else float("nan")

    def spread_text(self) -> str:
        """'2.101 ms (1.980–2.400, 3 runs)', or the one run's time."""
        if not self.times_ms:
            return "–"
        if len(self.times_ms) == 1:
            return f"{self.median_ms:.3f} ms (1 run: no spread measured)"
        return f"{self.median_ms:.3f} ms ({self.min_ms:.3f}–{self.max_ms:.3f}, {len(self.times_ms)} runs)"

    @property
    def median_kernel_ms(self) -> float:
        return float(statistics.median(self.kernel_ms)) if self.kernel_ms else float("nan")

    @property
    def usable(self) -> bool:
        """Ran, and every run's result was correct."""
        return self.error is None and bool(self.ok) and bool(self.times_ms)

    def status(self) -> str:
        if self.error is not None:
            return f"failed: {self.error}"
        return "ok" if self.ok else f"WRONG: {self.check}"


def measured_apart(a: SweepPoint, b: SweepPoint) -> bool:
    """True when the runs of a and b do not overlap (every run of one faster than every run of the
    other) and each has two runs or more: a difference the sweep measured, not noise."""
    if len(a.times_ms) < 2 or len(b.times_ms) < 2:
        return False
    return a.max_ms < b.min_ms or b.max_ms < a.min_ms


def knobs_text(knobs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in knobs.items())


#: What the simulator's times are, said wherever a sweep's times are explained.
SIMULATOR_TIMES = ("simulator: these are the times to simulate the kernels on the CPU, not GPU times; "
                   "they say nothing about which setting is faster on a GPU")


@dataclass
class Verdict:
    """What a sweep measured about its best point: `best` (fastest median, or None), `ties` (the
    usable points within noise of it), `measured` (True when the best's runs are apart from every
    other usable point's), and `text`, which says so in words (and, under the simulator, that the
    times are not GPU times)."""

    best: SweepPoint | None
    ties: list
    measured: bool
    text: str


@dataclass
class Progress:
    """Where a running sweep is: runs done of total, seconds so far and (estimated) left."""

    done: int
    total: int
    elapsed_s: float
    left_s: float | None
    point: dict
    finished: "SweepPoint | None" = None  # the point, when this run was its last (or it failed)

    def __str__(self) -> str:
        left = "?" if self.left_s is None else f"{self.left_s:.0f} s"
        return f"{self.done}/{self.total} runs, {self.elapsed_s:.0f} s, about {left} left"


@dataclass
class SweepResult:
    """A finished (or stopped) sweep; saved as JSON by `save` and reopened by `load_sweep`."""

    graph: str
    source: int  # the vertex 0..n-1 the runs started from
    technique: str
    axes: dict
    base: dict
    repeats: int
    points: list
    mode: str = "grid"
    graph_spec: str | None = None  # how to load the graph again (a sample, file or gen: spec), if known
    graph_size: dict = field(default_factory=dict)  # vertices, arcs
    device: dict = field(default_factory=dict)
    created: str = ""
    stopped: bool = False
    source_id: int | None = None  # the source in the graph's own ids (a file's), as the user gave it
    problem: str = "bfs"  # a key of PROBLEMS

    @property
    def source_text(self) -> str:
        """The source as the user names it: their id (with the vertex when it differs)."""
        if self.source_id is None or self.source_id == self.source:
            return f"vertex {self.source}"
        return f"vertex {self.source_id} (vertex {self.source} of the remapped graph)"

    @property
    def best(self) -> SweepPoint | None:
        """The fastest point whose runs were all correct (by median wall time)."""
        usable = [p for p in self.points if p.usable]
        return min(usable, key=lambda p: p.median_ms) if usable else None

    @property
    def simulated(self) -> bool:
        return (self.device or {}).get("backend") == "simulator"

    def within_noise_of_best(self) -> list[SweepPoint]:
        """The usable points, other than the best, that the sweep does not tell apart from it."""
        best = self.best
        if best is None:
            return []
        return [p for p in self.ranked() if p.usable and p is not best and not measured_apart(p, best)]

    def verdict(self) -> Verdict:
        """Whether the best point is a measured result or within noise of others, in words."""
        best = self.best
        usable = [p for p in self.points if p.usable]
        ties = self.within_noise_of_best()
        sim = f" ({SIMULATOR_TIMES})" if self.simulated else ""
        if best is None:
            return Verdict(None, [], False, "no setting ran correctly: nothing to choose" + sim)
        head = f"fastest median: {knobs_text(best.knobs)}, {best.spread_text()}"
        if len(usable) == 1:
            return Verdict(best, [], False, f"{head}; the only setting that ran correctly, so nothing was "
                                            "compared" + sim)
        if len(best.times_ms) < 2:
            return Verdict(best, ties, False, f"{head}. One run per setting measures no spread, so no "
                                              "difference is measured: repeat each setting (3 or more "
                                              "runs) before choosing" + sim)
        if ties:
            names = "; ".join(knobs_text(p.knobs) for p in ties[:6]) + (" ..." if len(ties) > 6 else "")
            return Verdict(best, ties, False, f"{head}. Within noise: the runs of {len(ties)} other "
                                              f"setting(s) overlap its runs ({names}), so the sweep does "
                                              "not tell them apart" + sim)
        return Verdict(best, [], True, f"{head}: faster in every run than every other setting (measured, "
                                       f"not noise){sim}")

    def choose(self, keep: dict | None = None) -> SweepPoint | None:
        """The point to adopt: the best, unless the usable point with the knobs `keep` (swept
        values; the current setting) is within noise of it, then that one: a change is adopted only
        when the sweep measured it. None when no point ran correctly."""
        best = self.best
        want = {k: v for k, v in (keep or {}).items() if k in self.axes}
        if best is None or not want:
            return best
        current = next((p for p in self.points if p.usable and all(_key(p.knobs[k]) == _key(v)
                                                                   for k, v in want.items())), None)
        if current is None or measured_apart(current, best):
            return best
        return current

    def best_knobs(self) -> dict:
        """Every knob the best point ran with (base and swept); {} when no point was usable."""
        b = self.best
        return {} if b is None else {**self.base, **b.knobs}

    def ranked(self) -> list[SweepPoint]:
        """Usable points fastest first, then the others in run order."""
        good = sorted((p for p in self.points if p.usable), key=lambda p: p.median_ms)
        return good + [p for p in self.points if not p.usable]

    def line(self) -> tuple[list, list]:
        """One swept knob: (its values, the median time of each; NaN where the point failed)."""
        if len(self.axes) != 1:
            raise ValueError(f"a line needs one swept knob; this sweep has {len(self.axes)}")
        (name, values), = self.axes.items()
        by = {_key(p.knobs[name]): p for p in self.points}
        return list(values), [by[_key(v)].median_ms if _key(v) in by and by[_key(v)].usable else math.nan
                              for v in values]

    def grid(self) -> tuple[list, list, np.ndarray]:
        """Two swept knobs: (x values, y values, median times [len(y), len(x)]; NaN where a point
        failed or was not run)."""
        if len(self.axes) != 2:
            raise ValueError(f"a heatmap needs two swept knobs; this sweep has {len(self.axes)}")
        (nx, xs), (ny, ys) = self.axes.items()
        z = np.full((len(ys), len(xs)), np.nan)
        ix = {_key(v): i for i, v in enumerate(xs)}
        iy = {_key(v): i for i, v in enumerate(ys)}
        for p in self.points:
            if p.usable:
                z[iy[_key(p.knobs[ny])], ix[_key(p.knobs[nx])]] = p.median_ms
        return list(xs), list(ys), z

    # ---- files
    def to_dict(self) -> dict:
        d = asdict(self)
        d["format"] = FORMAT
        d["points"] = [{**asdict(p), "median_ms": _finite(p.median_ms), "min_ms": _finite(p.min_ms),
                        "max_ms": _finite(p.max_ms), "median_kernel_ms": _finite(p.median_kernel_ms)}
                       for p in self.points]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=_plain)

    def save(self, path) -> Path:
        """Write the sweep as JSON (atomically); `load_sweep(path)` reads it back."""
        path = Path(path)
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder: give a file name for the sweep (e.g. sweep.json)")
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_text_atomic(path, self.to_json())

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        if d.get("format") != FORMAT:
            raise ValueError(f"not a sweep file of format {FORMAT} (format {d.get('format')!r})")
        names = {f for f in cls.__dataclass_fields__}
        pfields = {f for f in SweepPoint.__dataclass_fields__}
        args = {k: v for k, v in d.items() if k in names}
        args["points"] = [SweepPoint(**{k: v for k, v in p.items() if k in pfields}) for p in d["points"]]
        return cls(**args)


def load_sweep(path) -> SweepResult:
    """A sweep saved by SweepResult.save."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such sweep file") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not a sweep file: {err}") from None
    if not isinstance(doc, dict) or "points" not in doc:
        raise ValueError(f"{path} is not a sweep file (no 'points')")
    return SweepResult.from_dict(doc)


def _key(v):
    return (type(v).__name__ == "str", v)


def _finite(x: float):
    return None if math.isnan(x) else x


def _plain(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ------------------------------------------------------------------ running

def sweep_runs(plan: SweepPlan, repeats: int, warmup: int) -> int:
    return len(plan.points) * (repeats + warmup)


def check_sweep_size(graph: CSRGraph, plan: SweepPlan, repeats: int, warmup: int = 0) -> None:
    """Refuse, with the reason, a sweep the simulator would take too long over; nothing on a GPU
    (beyond the graph size any run has)."""
    runs = sweep_runs(plan, repeats, warmup)
    info = backend.current()
    if not info.is_simulator:
        return
    why = ("the CUDA simulator runs every GPU thread as a Python thread: one BFS of a graph of a "
           "thousand arcs takes seconds")
    if graph.num_arcs > SIMULATOR_SWEEP_MAX_ARCS:
        raise SweepTooLarge(f"graph {graph.name!r} has {graph.num_arcs:,} arcs; under the simulator a sweep takes "
                            f"graphs up to {SIMULATOR_SWEEP_MAX_ARCS:,} arcs ({why}). Use a smaller graph, "
                            "or a GPU")
    if runs > SIMULATOR_SWEEP_MAX_RUNS:
        raise SweepTooLarge(f"the sweep makes {runs:,} runs ({len(plan.points)} points x {repeats + warmup}); "
                            f"under the simulator at most {SIMULATOR_SWEEP_MAX_RUNS} ({why}). Sweep fewer "
                            "values or repeat less")


def run_sweep(graph: CSRGraph, source, plan: SweepPlan, *, repeats: int = 3, warmup: int | None = None,
              session: Session | None = None, limits: DeviceLimits | None = None, seed: int = 0,
              graph_spec: str | None = None, on_progress: Callable[[Progress], None] | None = None,
              stop: Callable[[], bool] | None = None, client=None) -> SweepResult:
    """Run every point of `plan` on `graph` from `source`: `warmup` untimed runs (default: one on a
    GPU, none on the simulator, whose kernels need no compiling), then `repeats` timed runs,
    instrumentation off. Every BFS run is checked where it ran (reference.on_device: the tree's
    rules and the distances); one that fails there, or whose technique keeps its result on the host,
    by reference.check_result in full. Every run of a shortest-path point by
    reference.sssp.check_sssp_result. The reference (the CPU BFS, scipy) is computed once a graph
    and source, and kept with the graph for its next sweep. A point that
    fails (a knob rule, a device limit, an error) is kept with its error: one bad setting does not
    hide the others. `on_progress(Progress)` after every run; `stop()` True ends the sweep early
    (the result says `stopped`). `client`: a distributed.Client or explorer.scale_out.GPUCluster: each
    point runs on one of its workers (one GPU each), all its runs there; `stop` cancels the points not
    finished."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats={repeats!r} must be an integer >= 1 (each point is the median of its repeats)")
    info = backend.current()
    if warmup is None:
        warmup = 0 if info.is_simulator else 1
    if warmup < 0:
        raise ValueError(f"warmup={warmup} must be >= 0")
    problem = problem_of(plan.problem)
    impl = problem.implementation(plan.technique)
    if impl.runtimes != frozenset({"cpu"}):
        backend.check_graph_size(graph.num_arcs)
        check_sweep_size(graph, plan, repeats, warmup)
    src = resolve_source(graph, source, seed)  # the sweep's one conversion of the user's source
    expected = _reference(problem, graph, src)
    total = sweep_runs(plan, repeats, warmup)
    own = session is None and client is None
    session = Session(graph) if own else session
    points, done, t0 = [], 0, time.perf_counter()
    device: dict = {}
    stopped = False

    def tick(point, runs: int, finished: SweepPoint | None = None):
        nonlocal done
        done += runs
        if on_progress is not None:
            spent = time.perf_counter() - t0
            on_progress(Progress(done, total, spent, spent / max(done, 1) * (total - done), point, finished))

    try:
        if client is not None:  # each point on one worker, its repeats there: one GPU's times
            from .scale_out import check_client, run_sweep_points

            points = [SweepPoint(dict(point)) for point in plan.points]
            ran: set = set()

            def finished(i: int, sp: SweepPoint, ran_on: dict) -> None:
                nonlocal device
                points[i] = sp
                ran.add(i)
                device = device or ran_on
                tick(plan.points[i], repeats + warmup, sp)

            stopped = run_sweep_points(check_client(client), graph, src, plan, expected, repeats=repeats,
                                       warmup=warmup, limits=limits, on_point=finished, run_point=run_point, stop=stop)
            if stopped:  # as when one process stops: the points that ran
                points = [p for i, p in enumerate(points) if i in ran]
        for point in plan.points if client is None else ():
            if stop is not None and stop():
                stopped = True
                break
            sp, ran_on = run_point(graph, src, plan, point, repeats=repeats, warmup=warmup, limits=limits,
                                   session=session, expected=expected, on_run=lambda runs, last, p=point: tick(p, runs, last))
            points.append(sp)
            device = device or ran_on
    finally:
        if own:
            session.close()
    return SweepResult(
        graph=graph.name, source=src, source_id=graph.to_original(src),  # the way out: the user's id
        technique=plan.technique, axes=plan.axes, base=plan.base, repeats=repeats,
        points=points, mode=plan.mode, graph_spec=graph_spec,
        graph_size={"vertices": graph.num_vertices, "arcs": graph.num_arcs},
        device=device or {"backend": info.kind, "name": info.device_name, "versions": dict(info.versions)},
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), stopped=stopped,
        problem=plan.problem)


def run_point(graph: CSRGraph, src: int, plan: SweepPlan, point: dict, *, repeats: int, warmup: int,
              limits: DeviceLimits | None, session: Session | None, expected,
              on_run: Callable[[int, SweepPoint | None], None] | None = None) -> tuple[SweepPoint, dict]:
    """One point of a sweep: `warmup` untimed runs then `repeats` timed ones, each checked by the
    sweep's problem against `expected` (its reference answer: the first BFS run in full, the others
    by their distances); `on_run(runs, finished)` after each run (finished: the point, after its
    last). A knob rule, a device limit or an error is kept in the point, its runs not made counted
    as made. Returns the point and the device its runs ran on (empty if none ran)."""
    problem = problem_of(plan.problem)
    sp, device = SweepPoint(dict(point)), {}
    tick = on_run or (lambda runs, finished: None)
    made = 0
    threads = numba.get_num_threads()  # this thread's own count, restored after the point
    numba.set_num_threads(max(1, min(threads, HOST_THREADS)))
    try:
        knobs = problem.make_knobs(plan.technique, plan.knobs_of(point))
        check = problem.device_check(graph, src, expected, session)
        for _ in range(warmup):
            problem.run(graph, src, plan.technique, knobs, limits, session, check)
            made += 1
            tick(1, None)
        for i in range(repeats):
            r = problem.run(graph, src, plan.technique, knobs, limits, session, check)
            device = device or r.device
            sp.times_ms.append(r.elapsed_ms)
            sp.kernel_ms.append(r.total_ms)
            sp.levels = problem.steps_of(r)
            ok, msg = problem.check(graph, r, expected, first=i == 0, device=check)
            if i == 0:
                sp.ok, sp.check = ok, msg
            elif not ok:
                sp.ok, sp.check = False, f"repeat {i + 1}: {msg}"
            made += 1
            tick(1, sp if i == repeats - 1 else None)
    except (KnobError, backend.BackendError, ValueError, NotImplementedError, RuntimeError) as err:
        sp.error = f"{type(err).__name__}: {err}"
        tick(repeats + warmup - made, sp)  # the point's runs not made count as done
    finally:
        numba.set_num_threads(threads)
    return sp, device


#: Widest line of the text a sweep prints: JupyterLab breaks longer output lines anywhere, even
#: mid-word (its output CSS is word-break: break-all), at about 120 characters in a 1400 px window.
TEXT_WIDTH = 100


def format_sweep(result: SweepResult, top: int | None = None, width: int = TEXT_WIDTH) -> str:
    """The sweep as text, fastest correct point first: median BFS time and the range of its runs
    (fastest–slowest), the kernels' share, levels, the check, how it compares with the best
    (best, within noise, slower), the swept knobs; then the verdict. No line is wider than `width`
    (long ones wrap between words)."""
    names = list(result.axes)
    head = (f"{result.technique} on {result.graph} from {result.source_text}: {len(result.points)} points, "
            f"median of {result.repeats} runs" + (f"; base {knobs_text(result.base)}" if result.base else "")
            + (" (stopped early)" if result.stopped else ""))
    steps = problem_of(result.problem).steps
    w = max(6, len(steps))
    lines = [head, f"  {'median':>9}  {'fastest–slowest':>17}  {'kernels':>8}  {steps:>{w}}  {'check':<5}  "
                   f"{'against the best':<16}  knobs (times in ms)"]
    best = result.best
    ties = {id(p) for p in result.within_noise_of_best()}
    for i, p in enumerate(result.ranked()):
        if top is not None and i >= top:
            lines.append(f"  ... {len(result.points) - top} more")
            break
        shown = ", ".join(f"{k}={p.knobs[k]}" for k in names)
        if p.times_ms:
            span = f"{p.min_ms:.3f}–{p.max_ms:.3f}" if len(p.times_ms) > 1 else "(1 run)"
            note = "best" if p is best else "within noise" if id(p) in ties else "slower" if p.usable else ""
            check = "ok" if p.usable else "WRONG"
            lines.append(f"  {p.median_ms:9.3f}  {span:>17}  {p.median_kernel_ms:8.3f}  {p.levels or 0:{w}d}  "
                         f"{check:<5}  {note:<16}  {shown}" + ("" if p.usable else f": {p.status()}"))
        else:
            lines.append(f"  {'-':>9}  {'':>17}  {'':>8}  {'':>{w}}  {'-':<5}  {'':<16}  {shown}: {p.status()}")
    lines.append(result.verdict().text)
    return "\n".join(textwrap.fill(line, width, subsequent_indent="      ", break_on_hyphens=False,
                                    drop_whitespace=True) if len(line) > width else line for line in lines)


__all__ = ["SweepPlan", "SweepPoint", "SweepResult", "Progress", "SweepTooLarge", "Verdict", "plan_sweep", "run_sweep",
           "load_sweep", "axis_values", "random_value", "check_sweep_size", "format_sweep", "measured_apart",
           "knobs_text", "SIMULATOR_TIMES", "TEXT_WIDTH", "PROBLEMS", "problem_of",
           "SIMULATOR_SWEEP_MAX_ARCS", "SIMULATOR_SWEEP_MAX_RUNS"]
