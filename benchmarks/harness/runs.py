"""Running, timing and checking: the one place the benchmarks call explorer's run_bfs, run_many,
the CPU reference and check_result (start_bfs, start_many, reference, check), so that a change of
those APIs is one line here.

    m = measure(g, source, "bfs4k", {"K1": 8}, repeats=11)   # warm-up, 11 timed runs, each checked
    m.median_ms, m.min_ms, m.max_ms, m.correct

Vertices are positions 0..n-1 here, as in every benchmark; start_bfs and start_many convert them
to the graph's own ids, which explorer's entry points take.

Times are explorer's: `elapsed` runs from a search's first launch to its last level's completion
(CUDA events on a GPU, host round trips between levels included), `kernels` adds up the levels'
own windows. A configuration's first timed run is checked in full (the Graph500 rules and the
distances equal to the CPU reference's, `check_result`); every other run's distances are compared
with the CPU reference's and its parents checked to lie one level nearer the source (`check`
with full=False: the part of the rules that needs no pass over the arcs).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np

from explorer import api
from explorer.graphs import Vertex, Vertices
from explorer import reference as _reference

# One letter per kind of launch in a run's `steps`, "b" after a bottom-up level.
STEP_LETTERS = {"multi-block": "M", "single-block": "S", "cluster": "C", "cpu": "P"}


# ------------------------------------------------------------------ explorer's entry points

def start_bfs(g, source: int, technique, knobs=None, *, instrument: bool = False, session=None):
    """A BFS of g from vertex `source` (0..n-1), not yet run: iterate it, or .complete() it."""
    return api.run_bfs(g, Vertex(source), technique, knobs, instrument=instrument, session=session)


def start_many(g, sources, application: str, *, session=None, **settings):
    """Many searches at once (explorer.multisearch.run_many) from `sources` (vertices 0..n-1, or
    "all"), not yet run. `settings`: run_many's (method, T, k, steps, word_bits, ...)."""
    vertices = sources if isinstance(sources, str) else Vertices(np.asarray(sources))
    return api.run_many(g, vertices, application, session=session, **settings)


def start_sssp(g, source: int, technique, knobs=None, *, session=None):
    """Shortest paths of weighted g from vertex `source` (0..n-1) (explorer.sssp.run_sssp), not yet run."""
    return api.run_sssp(g, Vertex(source), technique, knobs, session=session)


def start_apsp(g, method: str, knobs=None):
    """All-pairs shortest paths of weighted g (explorer.sssp.apsp.run_apsp), not yet run."""
    return api.run_apsp(g, method, knobs)


#: The multi-search method that splits a frontier by a degree threshold T (McLaughlin et al.'s
#: warp-thread hybrid); the others take no T.
THRESHOLD_METHOD = "warp-thread"


def multisearch_methods() -> list[str]:
    """Every multi-search method's name (explorer.multisearch.Method)."""
    from explorer.multisearch import Method

    return [m.value for m in Method]


def reference(g, source: int) -> np.ndarray:
    """The CPU reference's distances from `source` (-1: unreached)."""
    return _reference.cpu_bfs(g, source)[0]


class Check(NamedTuple):
    ok: bool
    message: str  # what is wrong (the first offending vertex), or what was checked


def check(g, result, expected=None, *, full: bool = True) -> Check:
    """Whether `result` (a RunResult) is a right BFS of g. full: the Graph500 rules and the
    distances equal to the CPU reference's (explorer.reference.check_result; `expected`, the
    reference distances, spares the CPU BFS). Else the distances equal to `expected` and every
    parent one level nearer the source (no pass over the arcs: for the repeats of a run whose
    first result was checked in full)."""
    if full:
        r = _reference.check_result(g, result, expected=expected)
        return Check(bool(r.ok), r.message)
    return check_tree_levels(result.source, result.distances, result.parents, expected)


def check_sssp(g, result, expected=None) -> Check:
    """Whether `result` (an SSSPResult) is right: scipy's distances on the same graph (`expected`,
    when computed already) and parents forming shortest paths (explorer.reference.check_sssp_result)."""
    r = _reference.check_sssp_result(g, result, expected=expected)
    return Check(bool(r.ok), r.message)


def reference_sssp(g, source: int) -> np.ndarray:
    """scipy's weighted distances from `source` (float64, inf: unreached)."""
    return _reference.reference_sssp(g, source)[0]


def check_distances(expected, distances) -> Check:
    """Raw distances (a yardstick's, a peer's) against the CPU reference's."""
    msg = _reference.compare_distances(np.asarray(expected), np.asarray(distances))
    return Check(msg is None, msg or "distances equal the CPU reference BFS")


def check_tree_levels(source: int, distances, parents, expected) -> Check:
    """Distances equal to `expected`; the source its own parent; every other reached vertex's
    parent reached one level nearer; no parent for an unreached vertex."""
    d, p = np.asarray(distances), np.asarray(parents)
    c = check_distances(expected, d)
    if not c.ok:
        return c
    if p[source] != source:
        return Check(False, f"the source {source}'s parent is {p[source]}, not itself")
    loose = np.flatnonzero((d < 0) & (p != -1))
    if loose.size:
        v = int(loose[0])
        return Check(False, f"vertex {v} is unreached but has parent {p[v]} ({loose.size} such vertices)")
    reached = np.flatnonzero(d > 0)
    pv = p[reached]
    inside = (pv >= 0) & (pv < len(d))
    bad = ~inside
    bad[inside] = d[pv[inside]] != d[reached[inside]] - 1
    if bad.any():
        v = int(reached[np.argmax(bad)])
        return Check(False, f"vertex {v} at level {d[v]} has parent {p[v]}, which is not one level nearer "
                            f"({int(bad.sum())} such vertices)")
    return Check(True, "distances equal the CPU reference BFS; every parent one level nearer")


# ------------------------------------------------------------------ measurements

@dataclass
class Measurement:
    """One configuration on one graph: every timed run's time, what the runs did, whether every
    result was right. `summary_ms` (median, min, max) replaces the runs' times where a program
    reports only those (a peer's)."""

    label: str
    technique: str
    knobs: dict
    times_ms: list = field(default_factory=list)  # each timed run's elapsed time
    kernels_ms: list = field(default_factory=list)  # each timed run's sum of level windows
    levels: int | None = None
    launches: int | None = None
    steps: str = ""  # one letter a level (STEP_LETTERS), "b" after a bottom-up one
    traversed_edges: int | None = None
    correct: bool | None = None  # None: not run (skipped)
    error: str | None = None  # what was wrong, or the exception
    wrong: bool = False  # a result was wrong (else `error` is an exception: the run failed)
    skipped: str | None = None  # why it did not run: "> 2 s", a missing peer, the GPU
    instrumented_ms: float | None = None
    summary_ms: tuple | None = None
    extra: dict = field(default_factory=dict)

    @property
    def median_ms(self) -> float | None:
        if self.summary_ms:
            return self.summary_ms[0]
        return statistics.median(self.times_ms) if self.times_ms else None

    @property
    def min_ms(self) -> float | None:
        return self.summary_ms[1] if self.summary_ms else (min(self.times_ms) if self.times_ms else None)

    @property
    def max_ms(self) -> float | None:
        return self.summary_ms[2] if self.summary_ms else (max(self.times_ms) if self.times_ms else None)

    @property
    def gteps(self) -> float | None:
        med = self.median_ms
        return self.traversed_edges / (med * 1e6) if med and self.traversed_edges else None

    @property
    def ok(self) -> bool:
        """Timed, and every result right."""
        return bool(self.correct) and self.error is None and self.skipped is None

    def fail(self, what: str, wrong: bool = False) -> "Measurement":
        self.correct, self.error, self.wrong = False, what, wrong
        return self

    def row(self) -> dict:
        """The JSON record."""
        r = lambda x, k=4: None if x is None else round(x, k)  # noqa: E731
        out = {"config": self.label, "technique": self.technique, "knobs": self.knobs,
               "median_ms": r(self.median_ms), "min_ms": r(self.min_ms), "max_ms": r(self.max_ms),
               "runs_ms": [r(t) for t in self.times_ms],
               "kernels_ms": r(statistics.median(self.kernels_ms)) if self.kernels_ms else None,
               "gteps": r(self.gteps, 3), "levels": self.levels, "launches": self.launches, "steps": self.steps,
               "correct": self.correct, "wrong": self.wrong, "error": self.error, "skipped": self.skipped}
        if self.instrumented_ms is not None:
            out["instrumented_ms"] = r(self.instrumented_ms)
        return {**out, **self.extra}


def runs_overlap(a: dict, b: dict) -> bool:
    """Whether two result rows' runs overlap ([min_ms, max_ms] each): a difference within noise."""
    return a["min_ms"] <= b["max_ms"] and b["min_ms"] <= a["max_ms"]


def spread(m_or_times) -> str:
    """'4.618 ms (min 4.610, max 4.750)' of a Measurement or a list of times."""
    if isinstance(m_or_times, Measurement):
        med, lo, hi = m_or_times.median_ms, m_or_times.min_ms, m_or_times.max_ms
    else:
        med, lo, hi = statistics.median(m_or_times), min(m_or_times), max(m_or_times)
    if med is None:
        return "-"
    return f"{med:7.3f} ms (min {lo:.3f}" + (f", max {hi:.3f})" if hi is not None else ")")


def steps_of(result) -> str:
    return "".join(STEP_LETTERS[lv.kernel.value] + ("b" if lv.direction.value == "bottom-up" else "")
                   for lv in result.levels)


def _run(g, source, technique, knobs, session, instrument=False, limit_s=None):
    """(RunResult, None), or (None, the level it was stopped at) when a level ended more than
    limit_s seconds of wall time after the run began."""
    run = start_bfs(g, source, technique, knobs, instrument=instrument, session=session)
    if limit_s is None:
        return run.complete(), None
    levels = iter(run)
    t0 = time.perf_counter()
    for lv in levels:
        if time.perf_counter() - t0 > limit_s:
            levels.close()  # ends the run: its buffers go back to the session
            return None, lv.level
    return run.result, None


def measure(g, source: int, technique, knobs=None, *, label: str | None = None, repeats: int = 5,
            warmup: int = 1, session=None, expected=None, limit_s: float | None = None,
            instrumented: bool = False, summarize: Callable[[list], dict] | None = None,
            stop_above_ms: float | None = None) -> Measurement:
    """`warmup` untimed runs (they compile), then `repeats` timed ones, instrumentation off, each
    checked (see the module's docstring). limit_s: a run whose levels pass that many seconds of
    wall time is stopped, and the configuration skipped ("> limit_s s") once a second warm-up try
    (the first may have compiled) is stopped too. instrumented: one more run with the per-level
    instrumentation, its time recorded apart. summarize(results) adds fields of its own (a
    technique's extras). stop_above_ms: a first timed run slower than that ends the timing there,
    one run kept (extra "one_run"): a configuration far behind another needs no median to lose. Any
    exception is recorded in the Measurement, not raised: one failing configuration must not hide
    the others."""
    from explorer.engine import Session

    m = Measurement(label or str(technique), str(getattr(technique, "value", technique)), dict(knobs or {}))

    def stopped(cut) -> Measurement:
        m.skipped, m.extra["stopped_at_level"] = f"> {limit_s:g} s", cut
        return m

    def body(s) -> Measurement:
        if warmup:
            done, cut = 0, None
            for _ in range(max(warmup, 2) if limit_s is not None else warmup):
                r, cut = _run(g, source, technique, knobs, s, limit_s=limit_s)
                if r is not None:
                    c = check(g, r, expected, full=False)
                    if not c.ok:
                        return m.fail(f"warm-up run: {c.message}", wrong=True)
                    done += 1
                    if done == warmup:
                        break
            if done == 0:
                return stopped(cut)
        results = []
        for i in range(repeats):
            r, cut = _run(g, source, technique, knobs, s, limit_s=limit_s)
            if r is None:
                return stopped(cut)
            c = check(g, r, expected, full=(i == 0))
            if not c.ok:
                return m.fail(f"run {i + 1} of {repeats}: {c.message}", wrong=True)
            m.times_ms.append(r.elapsed_ms)
            m.kernels_ms.append(r.total_ms)
            results.append(r)
            if stop_above_ms is not None and i == 0 and r.elapsed_ms > stop_above_ms:
                m.extra["one_run"] = f"over {stop_above_ms:.4g} ms"
                break
        if instrumented:
            ri, _ = _run(g, source, technique, knobs, s, instrument=True)
            c = check(g, ri, expected, full=False)
            if not c.ok:
                return m.fail(f"instrumented run: {c.message}", wrong=True)
            m.instrumented_ms = ri.elapsed_ms
            m.extra["duplicates"] = sum(lv.dup_generated or 0 for lv in ri.levels)
        if results:
            r0 = results[0]
            m.levels, m.traversed_edges, m.steps = r0.num_levels, r0.traversed_edges, steps_of(r0)
            m.launches = sum(lv.launches for lv in r0.levels)
            if summarize is not None:
                m.extra.update(summarize(results))
        m.correct = True
        return m

    s = None
    try:
        if expected is None:
            expected = reference(g, source)
        s = session if session is not None else Session(g)
        return body(s)
    except Exception as exc:  # noqa: BLE001  (a benchmark reports every failure and goes on)
        return m.fail(f"{type(exc).__name__}: {exc}")
    finally:
        if session is None and s is not None:
            s.close()


def measure_roots(g, roots, configs, *, session=None) -> list[Measurement]:
    """Graph500's method for each of `configs` ((label, technique, knobs) each): a search from
    each of `roots` (vertices 0..n-1), each timed once after one warm-up search, each checked (a
    configuration's first root in full); `extra` holds the harmonic mean of the searches' TEPS
    (Graph500's figure) and each root's time. The roots are the outer loop: one CPU reference a
    root serves every configuration."""
    from explorer.engine import Session

    ms = [Measurement(label, str(getattr(t, "value", t)), dict(k or {})) for label, t, k in configs]
    per = [[] for _ in configs]
    s = None
    try:
        s = session if session is not None else Session(g)
        for (_, t, k), m in zip(configs, ms):
            try:
                _run(g, roots[0], t, k, s)
            except Exception as exc:  # noqa: BLE001
                m.fail(f"{type(exc).__name__}: {exc}")
        for i, root in enumerate(roots):
            expected = reference(g, root)
            for (_, t, k), m, p in zip(configs, ms, per):
                if m.error:
                    continue
                try:
                    r, _ = _run(g, root, t, k, s)
                except Exception as exc:  # noqa: BLE001
                    m.fail(f"root {root}: {type(exc).__name__}: {exc}")
                    continue
                c = check(g, r, expected, full=(i == 0))
                if not c.ok:
                    m.fail(f"root {root}: {c.message}", wrong=True)
                    continue
                m.times_ms.append(r.elapsed_ms)
                p.append({"root": int(root), "ms": r.elapsed_ms, "edges": r.traversed_edges, "levels": r.num_levels})
    finally:
        if session is None and s is not None:
            s.close()
    for m, p in zip(ms, per):
        if m.error or not p:
            continue
        teps = np.array([x["edges"] / (x["ms"] * 1e-3) for x in p])
        m.levels = max(x["levels"] for x in p)
        m.extra.update(roots=len(p), harmonic_gteps=round(len(teps) / float(np.sum(1.0 / teps)) / 1e9, 3),
                       per_root=[{**x, "ms": round(x["ms"], 4)} for x in p])
        m.correct = True
    return ms


def time_call(fn: Callable[[], object], repeats: int, warmup: int = 1) -> tuple[list, object]:
    """Host wall time (ms) of `repeats` calls of fn after `warmup` untimed ones, and the last
    call's output (for its check): for what explorer does not time itself (scipy, networkx)."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times, out


def scipy_bfs(g, source: int, expected, repeats: int) -> "Timed":
    """scipy's breadth_first_order from `source` (a vertex 0..n-1; one thread, its input checks
    included), timed by time_call, its distances checked against `expected`."""
    from scipy.sparse.csgraph import breadth_first_order

    a = g.to_scipy()
    times, (order, pred) = time_call(
        lambda: breadth_first_order(a, source, directed=bool(g.directed), return_predecessors=True), repeats)
    d = np.full(g.num_vertices, -1, np.int32)  # distances from the order: a predecessor comes first
    d[order[0]] = 0
    for v in order[1:]:
        d[v] = d[pred[v]] + 1
    return Timed("scipy breadth_first_order (1 thread)", times, check_distances(expected, d))


def time_launches(repeats: int, fresh: Callable[[], tuple], launch: Callable[[tuple], None]) -> tuple[list, tuple]:
    """CUDA-event times (ms) of `repeats` launches after one that compiles: fresh() makes a
    launch's arrays (untimed), launch(arrays) runs. Returns the times and the last arrays (for
    their check). For the yardsticks' kernels, which run outside explorer's engine."""
    from numba import cuda

    times, arrays = [], ()
    for rep in range(repeats + 1):
        arrays = fresh()
        cuda.synchronize()
        start, stop = cuda.event(), cuda.event()
        start.record()
        launch(arrays)
        stop.record()
        stop.synchronize()
        if rep:
            times.append(cuda.event_elapsed_time(start, stop))
    return times, arrays


@dataclass
class Timed:
    """A measurement outside explorer's engine (a yardstick's kernel, scipy): label, times, and
    the check of its output."""

    label: str
    times_ms: list
    check: Check | None  # None: not a search (a floor: a barrier, a load), nothing to check
    extra: dict = field(default_factory=dict)

    def row(self) -> dict:
        t, c = self.times_ms, self.check
        return {"config": self.label, "median_ms": round(statistics.median(t), 4) if t else None,
                "min_ms": round(min(t), 4) if t else None, "max_ms": round(max(t), 4) if t else None,
                "runs_ms": [round(x, 4) for x in t], "correct": None if c is None else c.ok,
                "checked": None if c is None else c.message, **self.extra}
