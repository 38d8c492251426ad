"""run_bfs (and run_many, from explorer.multisearch; run_sssp and run_apsp, from explorer.sssp): the entry points. Thin: it converts and checks the inputs, before anything touches a
GPU, and hands the run to the enactor.

    run = run_bfs(graph, "max-degree", "bfs4k", {"K1": 8})
    for level in run:          # LevelStats, as each level completes
        ...
    result = run.result        # RunResult: distances, parents, levels, time, GTEPS

Vertex ids: a user's source is in the graph's own ids (a file's, where its loader kept them);
`resolve_source` (explorer.graphs) turns it into a vertex 0..n-1 once, on the way in, and everything behind it
(the enactor, techniques, kernels, the reference) speaks vertices. On the way out a RunResult
gives `source_id` (and `original_ids` for the arrays, which are indexed by vertex); its summary,
JSON and CSV report the user's ids. Code that holds a vertex already passes `Vertex(v)`.
"""
from __future__ import annotations

import functools
from typing import Callable

from . import backend
from .auto import AUTO, TAKES_NO_KNOBS, choose, is_auto
from .engine import BFSRun, DeviceLimits, Session
from .engine.session import session_or_own
from .graphs import CSRGraph, Vertex, Vertices, resolve_source  # noqa: F401  (Vertices: run_many's sources)
from .knobs import KnobError, KnobSet
from .multisearch import run_many  # noqa: F401  (many simultaneous searches: explorer.multisearch)
from .sssp import run_sssp  # noqa: F401  (weighted shortest paths from one source: explorer.sssp)
from .sssp.apsp import run_apsp  # noqa: F401  (all pairs: explorer.sssp.apsp)
from .techniques import Technique, implementation, make_knobs


def run_bfs(graph: CSRGraph, source="max-degree", technique: Technique | str = AUTO,
            knobs: KnobSet | dict | None = None, *, instrument: bool = True, seed: int = 0,
            on_status: Callable[[str], None] | None = None, limits: DeviceLimits | None = None,
            session: Session | None = None, check=None) -> BFSRun:
    """Prepare a BFS of `graph` from `source`; iterate the returned run to execute it level by level.

    `source`: a vertex id in the graph's own ids, "max-degree", "random" (`seed`) or Vertex(v)
    (see resolve_source). The run and its RunResult hold the vertex (`source`) and the user's id
    (`RunResult.source_id`).

    `technique` "auto" (the default) chooses the technique and its knobs for this graph and device
    (explorer.auto: a cost model calibrated on a GPU); the run's `choice` and its RunResult's say
    what was chosen and why. `knobs` are the technique's (a dict, or its KnobSet); "auto" sets its
    own, so it takes none. `session` keeps the graph's device arrays
    and buffers between runs (see explorer.engine.Session); without one, the run has its own.
    `limits` overrides the device constraints a technique's policy uses (tests use small ones so
    that every decision is exercised on small graphs). `check` (explorer.reference.on_device's
    DeviceCheck of this graph and source) checks the result where the run left it: passed, its
    arrays stay there (the RunResult's are None); otherwise they are read back as without it.
    """
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}; see explorer.graphs loaders")
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}: "
                         "open a Session for this graph")
    src = resolve_source(graph, source, seed)
    if not is_auto(technique):
        return _prepare(graph, src, technique, knobs, instrument, on_status, limits, session, None, check)
    if knobs:
        raise KnobError(TAKES_NO_KNOBS)
    choice = _choose(graph, limits, src, session)
    return _prepare(graph, src, choice.technique, choice.knobs, instrument, on_status, limits, session, choice, check)


def _prepare(graph, src: int, technique, knobs, instrument, on_status, limits, session, choice,
             check=None) -> BFSRun:
    """The run of `technique` from vertex `src` (0..n-1), its knobs checked for the graph and device."""
    impl = implementation(technique)
    knobs = make_knobs(impl.technique, knobs)
    if impl.runtimes != frozenset({"cpu"}):
        backend.check_graph_size(graph.num_arcs)
    run = BFSRun(impl, graph, src, knobs, bool(instrument), on_status, limits, session, choice, check)
    impl.check(graph, knobs, run.runtime.limits)  # e.g. too little shared memory: fail now
    return run


def _choose(graph: CSRGraph, limits: DeviceLimits | None, src: int, session: Session | None):
    """auto's choice on the selected backend: the GPU, the simulator, or without either the CPU. On a
    GPU its close contenders are timed from `src` (a vertex 0..n-1) at the graph's first choice."""
    try:
        info = backend.current()
    except backend.NoGPUError:
        return choose(graph, limits, None)
    if info.is_simulator:  # its times are the simulator's, not a GPU's: the model alone
        return choose(graph, limits or DeviceLimits.simulator(), info.kind)
    with session_or_own(session, graph) as trials:  # one upload of the graph for every trial run (on its first)

        def timer(technique, knobs) -> float:
            return _prepare(graph, src, technique, knobs, False, None, limits, trials, None).complete().elapsed_ms

        return choose(graph, limits or _gpu_limits(), info.kind, timer=timer)


@functools.lru_cache(maxsize=1)
def _gpu_limits() -> DeviceLimits:
    """This process's GPU's limits, read once: the driver's attribute queries cost more than a choice."""
    return DeviceLimits.from_current_device()
