"""All-pairs shortest paths (the chapter's §4): `run_apsp(graph, method, knobs)`.

  floyd-warshall  the blocked Floyd-Warshall of §4 (Fig. 8): rounds of three phases over T x T
                  tiles in shared memory (kernels/apsp.py), a step a round; dense, O(n^3), takes
                  negative weights (a negative diagonal entry is a negative cycle)
  johnson         Johnson's way for sparse graphs: potentials h from Bellman-Ford (H-BF) from a
                  virtual source joined to every vertex (which finds any negative cycle), the
                  weights made non-negative, w(u, v) + h(u) - h(v), then a search from every vertex
                  on the multi-search layer (explorer.sssp.johnson), the distances shifted back

The answer is an n x n float64 matrix (inf: no path; whole-number weights stay exact below 2**53).
Its memory is checked before anything is allocated: the error names the n x n matrix it needs.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from .. import backend
from ..engine.enactor import Enactor, WalkedOnce
from ..engine.runtime import STEP_LOCK, for_technique
from ..engine.session import Session, run_pool
from ..graphs import CSRGraph
from ..knobs import POW2_BLOCKS, KnobSet, KnobSpec, knob
from ..stats import _json_default
from .weights import negative_cycle_error, vertex_id, weighting


class APSPMemoryError(MemoryError):
    """The n x n matrix does not fit; the message names its size and what is free."""


class APSPMethod(str, enum.Enum):
    """All-pairs methods. Values are the names used in records, files, the CLI and the UI."""

    #: Blocked Floyd-Warshall (the chapter's §4, Fig. 8; Venkataraman et al., Katz & Kider, Lund et
    #: al.): n/T rounds of three phases over T x T tiles kept in shared memory, each thread holding
    #: (T/16)^2 elements in registers. O(n^3) work whatever the arcs: wins on dense graphs and small
    #: n; negative weights welcome.
    FLOYD_WARSHALL = "floyd-warshall"

    #: Johnson's way (the chapter's §4): Bellman-Ford potentials from a virtual source, weights made
    #: non-negative, then a shortest-path search from every vertex at once (the multi-search layer).
    #: O(n m) work: wins on sparse graphs, where m is far below n^2.
    JOHNSON = "johnson"

    @classmethod
    def parse(cls, value) -> "APSPMethod":
        if isinstance(value, APSPMethod):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ValueError(f"unknown all-pairs method {value!r}; methods: {', '.join(m.value for m in cls)}") from None


@dataclass(frozen=True)
class FloydWarshallKnobs(KnobSet):
    owner = "floyd-warshall"
    tile: int = knob(KnobSpec(
        "tile", "tile size T: the matrix is cut into T x T tiles, each held in shared memory while a phase works on "
        "it (64: two tiles are 64 KB, 4 x 4 elements a thread in registers)", 64, choices=(16, 32, 64),
        section="chapter §4.1 (blocked Floyd-Warshall, Fig. 8)"))


@dataclass(frozen=True)
class JohnsonKnobs(KnobSet):
    owner = "johnson"
    potentials: str = knob(KnobSpec(
        "potentials", "the Bellman-Ford technique that computes the potentials h (only when a weight is negative)",
        "h-bf", choices=("h-bf", "bellman-ford"), kind=str, section="chapter §4 (Johnson)"))
    block_threads: int = knob(KnobSpec(
        "block_threads", "threads per block of the searches' kernel (a thread per vertex and search)", 256,
        choices=POW2_BLOCKS, section="chapter §4.1"))
    batch: int = knob(KnobSpec(
        "batch", "searches run together (0: as many as free device memory holds)", 0, low=0, high=1 << 31,
        section="multi-search batches"))


KNOBS = {APSPMethod.FLOYD_WARSHALL: FloydWarshallKnobs, APSPMethod.JOHNSON: JohnsonKnobs}
SIMULATOR_KNOBS = {APSPMethod.FLOYD_WARSHALL: {"tile": 16}, APSPMethod.JOHNSON: {"block_threads": 32}}


@dataclass(frozen=True)
class APSPStep:
    """One step of an all-pairs run: a Floyd-Warshall round, a step of Johnson's potentials or of
    its searches (every search of a batch relaxed once)."""

    step: int
    stage: str  # "round", "potentials" or "searches"
    done: int  # rounds done / searches finished so far
    total: int  # rounds / searches in all
    relaxations: int | None  # arcs relaxed in the step (None: Floyd-Warshall's rounds count none)
    time_ms: float

    def as_row(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class APSPResult:
    graph: str
    method: str
    knobs: dict
    distances: np.ndarray  # float64[n, n]: distances[u, v] from u to v (inf: no path)
    steps: list
    total_ms: float
    elapsed_ms: float = 0.0
    device: dict = field(default_factory=dict)
    negative_cycle: bool = False  # a negative diagonal entry (only kept with negative_cycles="keep")
    validation: str | None = None
    original_ids: np.ndarray | None = field(default=None, repr=False)

    def summary(self) -> dict:
        d = self.distances
        finite = np.isfinite(d)
        return {"graph": self.graph, "method": self.method, "vertices": int(d.shape[0]),
                "pairs_connected": int(finite.sum()), "steps": len(self.steps),
                "total_ms": round(self.total_ms, 4), "elapsed_ms": round(self.elapsed_ms, 4),
                "negative_cycle": self.negative_cycle, "validation": self.validation, "device": self.device,
                "knobs": self.knobs}

    def to_json(self, include_arrays: bool = False) -> str:
        doc = {"summary": self.summary(), "steps": [s.as_row() for s in self.steps]}
        if include_arrays:
            doc["distances"] = [[None if not math.isfinite(x) else x for x in row] for row in self.distances.tolist()]
            doc["ids"] = (self.original_ids.tolist() if self.original_ids is not None
                          else f"the input's ids are the vertices 0..{self.distances.shape[0] - 1}")
        return json.dumps(doc, indent=2, default=_json_default)

    def to_csv(self) -> str:
        names = [f.name for f in dataclasses.fields(APSPStep)]
        lines = [",".join(names)]
        for s in self.steps:
            row = s.as_row()
            lines.append(",".join("" if row[k] is None else str(row[k]) for k in names))
        return "\n".join(lines) + "\n"


def matrix_bytes(n: int) -> int:
    return 8 * n * n


def _gb(b: float) -> str:
    from ..multisearch.plan import format_bytes

    return format_bytes(b)


def check_matrix_memory(graph: CSRGraph, method: APSPMethod, runtime, tile: int = 0) -> None:
    """APSPMemoryError naming the n x n matrix, before anything is allocated: the host holds the
    answer; Floyd-Warshall also holds it (padded to whole tiles) on the device."""
    from ..graphs.memory import available_bytes
    from ..multisearch.plan import USABLE_SHARE, free_device_memory

    n = graph.num_vertices
    need = matrix_bytes(n)
    what = (f"all-pairs shortest paths of graph {graph.name!r} ({n:,} vertices) return an n x n matrix of float64: "
            f"{_gb(need)}")
    host = available_bytes()
    if host is not None and need > host:
        raise APSPMemoryError(f"{what}, but this machine has {_gb(host)} of memory available; use single-source "
                              "runs (run_sssp) from the vertices you need")
    if method is APSPMethod.FLOYD_WARSHALL:
        padded = -(-n // tile) * tile
        dev = matrix_bytes(padded)
        free, note = free_device_memory(runtime)
        if dev > free * USABLE_SHARE:
            raise APSPMemoryError(f"{what}; Floyd-Warshall keeps it on the device, padded to {padded:,} x {padded:,} "
                                  f"for tiles of {tile}: {_gb(dev)}, but {_gb(free * USABLE_SHARE)} is usable "
                                  f"({note}); use method 'johnson', which keeps only a batch of rows there")


class _FloydWarshallLoop:
    """The blocked Floyd-Warshall's rounds as the enactor walks them: a step a round."""

    compiled_ahead = False

    def __init__(self, ctx, tile: int, weights: np.ndarray):
        from kernels import apsp as K

        self.ctx, self.T, self.K = ctx, tile, K
        g = ctx.graph
        n = g.num_vertices
        self.n, self.nb = n, max(1, -(-n // tile))
        self.padded = self.nb * tile
        self.phases = K.kernels(tile)
        self.D = ctx.buffer("fw.D", (self.padded, self.padded), np.float64)
        sync = ctx.buffer("fw.sync", 1, np.int64)
        self.readback = (sync, ctx.buffer("fw.sync", 1, np.int64, host=True))  # waits for the round's kernels
        w = ctx.derived("fw.weights", lambda _g: (weights,))[0]
        blocks = min(-(-self.padded * self.padded // 256), 1 << 16)
        ctx.launch_now(K.fw_fill, blocks, 256, 0, self.D)
        ctx.launch_now(K.fw_arcs, max(1, min(-(-n // 256), 1 << 16)), 256, 0, *ctx.graph_arrays, w, self.D)
        self.k = 0
        self.converged = n == 0

    def launch(self, go) -> None:
        p1, p2, p3 = self.phases
        K, nb, k = self.K, self.nb, self.k
        shared = K.shared_bytes(self.T)
        go(p1, 1, K.BLOCK_THREADS, shared, self.D, k, nb)
        if nb > 1:
            go(p2, 2 * (nb - 1), K.BLOCK_THREADS, shared, self.D, k, nb)
            go(p3, (nb - 1) ** 2, K.BLOCK_THREADS, shared, self.D, k, nb)

    def collect(self, ms: float) -> list:
        self.k += 1
        self.converged = self.k == self.nb
        return [("round", self.k, self.nb, None)]

    def matrix(self) -> np.ndarray:
        return np.ascontiguousarray(self.ctx.runtime.to_host(self.D)[:self.n, :self.n])


class APSPRun(WalkedOnce[APSPStep, APSPResult]):
    """An iterable all-pairs run: iterate for APSPStep records; `result` once exhausted."""

    _what, _again = "the all-pairs run", "run_apsp"

    def __init__(self, graph, method: APSPMethod, knobs, unit_weights: bool, on_status, limits, session,
                 negative_cycles: str):
        self.graph, self.method, self.knobs, self.unit = graph, method, knobs, unit_weights
        self._status = on_status or (lambda msg: None)
        self.limits, self.session, self.negative_cycles = limits, session, negative_cycles
        self.runtime = for_technique(frozenset({"gpu", "simulator"})).with_limits(limits)

    def _walk(self) -> Iterator[APSPStep]:
        return self._floyd_warshall() if self.method is APSPMethod.FLOYD_WARSHALL else self._johnson()

    def _finish(self, D: np.ndarray, steps: list, elapsed: float) -> None:
        g = self.graph
        diag = np.diagonal(D)
        bad = np.flatnonzero(diag < 0)
        if bad.size and self.negative_cycles == "raise":
            raise negative_cycle_error(g, f"through vertex {vertex_id(g, int(bad[0]))}", None, None,
                                       f"a path from it back to itself weighs {diag[bad[0]]:g}; {bad.size} vertices "
                                       "lie on negative cycles: all-pairs distances are undefined")
        self._result = APSPResult(
            graph=g.name, method=self.method.value, knobs=self.knobs.as_dict(), distances=D, steps=steps,
            total_ms=sum(s.time_ms for s in steps), elapsed_ms=elapsed,
            device=self.runtime.device_dict(self.runtime.limits), negative_cycle=bool(bad.size),
            original_ids=g.original_ids)

    def _floyd_warshall(self) -> Iterator[APSPStep]:
        g, rt = self.graph, self.runtime
        w = weighting(g, self.unit)
        weights = np.ascontiguousarray(w.weights, dtype=np.float64)
        steps: list[APSPStep] = []
        with run_pool(self.session, g, rt, self._status) as (session, pool):
            from ..techniques.base import RunContext

            ctx = RunContext(graph=g, source=-1, knobs=self.knobs, instrument=False, runtime=rt, limits=rt.limits,
                             pool=pool, graph_arrays=session.graph_arrays(rt), status=self._status, session=session)
            with STEP_LOCK:
                loop = _FloydWarshallLoop(ctx, self.knobs.tile, weights)
            enactor = Enactor(rt, ctx.compiling)

            def records(rows, ms):
                return [APSPStep(len(steps) + i, stage, done, total, rel, ms / len(rows))
                        for i, (stage, done, total, rel) in enumerate(rows)]

            for rec in enactor.run(loop, records):
                steps.append(rec)
                yield rec
            with STEP_LOCK:
                D = loop.matrix()
        self._finish(D, steps, enactor.elapsed_ms())

    def _johnson(self) -> Iterator[APSPStep]:
        from .johnson import weighted_searches
        from .run import potentials

        g, k = self.graph, self.knobs
        w = weighting(g, self.unit)
        n = g.num_vertices
        steps: list[APSPStep] = []
        elapsed = 0.0
        h = np.zeros(n, dtype=w.dtype)
        if w.negative_arc is not None:
            # the potentials' technique at its defaults (on the simulator its small blocks: one of
            # 1,024 Python threads per GPU thread took minutes on a triangle)
            from .techniques import implementation

            pk = implementation(k.potentials).simulator_knobs if backend.current().is_simulator else None
            pot = potentials(g, k.potentials, pk, unit_weights=self.unit, on_status=self._status,
                             limits=self.limits, session=self.session)
            for it in pot:
                rec = APSPStep(len(steps), "potentials", 0, n, it.relaxations, it.time_ms)
                steps.append(rec)
                yield rec
            h = pot.result.distances
            elapsed += pot.result.elapsed_ms
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(g.offsets))
        reweighted = w.weights + h[src] - h[g.indices]
        if not w.integer:
            reweighted = np.maximum(reweighted, 0.0)  # rounding may leave -1e-16 on a tight arc
        run = weighted_searches(g, reweighted, w.inf, k=k.batch or None, session=self.session,
                                on_status=self._status, block_threads=k.block_threads, limits=self.limits)
        seen = 0
        for p in run:
            rec = APSPStep(len(steps), "searches", p.searches_done, p.searches_total, p.edges_examined - seen,
                           p.time_ms)
            seen = p.edges_examined
            steps.append(rec)
            yield rec
        ms = run.result
        elapsed += sum(b.time_ms for b in ms.batches)
        Dp = ms.values["distances"]
        order = np.argsort(ms.sources)
        Dp = Dp[order]
        D = np.where(Dp == w.inf, np.inf, Dp.astype(np.float64)) if w.integer else Dp.astype(np.float64)
        D = D - h.astype(np.float64)[:, None] + h.astype(np.float64)[None, :]
        D[~np.isfinite(D)] = np.inf
        self._finish(D, steps, elapsed)


def run_apsp(graph: CSRGraph, method: APSPMethod | str = APSPMethod.FLOYD_WARSHALL, knobs=None, *,
             unit_weights: bool = False, on_status: Callable[[str], None] | None = None, limits=None,
             session: Session | None = None, negative_cycles: str = "raise") -> APSPRun:
    """Prepare all-pairs shortest paths of `graph`; iterate the returned run for APSPStep records,
    then read run.result (an APSPResult: distances[u, v], float64, inf for no path).

    method: "floyd-warshall" (knob tile) or "johnson" (knobs potentials, block_threads, batch).
    The graph needs weights unless unit_weights. A negative cycle raises NegativeCycleError
    (negative_cycles="keep": the matrix is returned with its negative diagonal, as networkx's
    floyd_warshall does). The n x n matrix's memory is checked here, before anything runs."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    m = APSPMethod.parse(method)
    knobs = KNOBS[m].from_dict(knobs) if not isinstance(knobs, KNOBS[m]) else knobs
    if negative_cycles not in ("raise", "keep"):
        raise ValueError(f"negative_cycles={negative_cycles!r} is invalid: 'raise' or 'keep'")
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}: "
                         "open a Session for this graph")
    w = weighting(graph, unit_weights)
    backend.check_graph_size(graph.num_arcs)
    run = APSPRun(graph, m, knobs, unit_weights, on_status, limits, session, negative_cycles)
    check_matrix_memory(graph, m, run.runtime, getattr(knobs, "tile", 0))
    if m is APSPMethod.JOHNSON and w.negative_arc is not None:
        from .techniques import implementation

        implementation(knobs.potentials).check(graph, w, implementation(knobs.potentials).Knobs(), run.runtime.limits)
    return run


__all__ = ["APSPMemoryError", "APSPMethod", "APSPResult", "APSPRun", "APSPStep", "FloydWarshallKnobs",
           "JohnsonKnobs", "KNOBS", "SIMULATOR_KNOBS", "check_matrix_memory", "run_apsp"]
