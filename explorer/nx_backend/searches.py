"""The searches the backend's functions run on the explorer's engine: which technique and knobs
(by default technique "auto": run_bfs chooses both per graph, explorer.auto; LAST says what the
latest search ran and why), whether kernels can run here, single-source searches
(explorer.api.run_bfs), several sources at once (one search from a super-source), and multi-search
runs (explorer.multisearch.run_many) for the all-sources functions. Every vertex here is a
BFS4KGraph vertex 0..n-1 (the functions convert networkx's nodes once, graph.py), passed to the
engine as Vertex / Vertices.

Results are kept. A BFS's distances depend only on the graph's structure, so rows are stored under
the graph's fingerprint (BFS4KGraph.fingerprint: directedness and arcs in order) in a
process-wide, size-bounded store (`cache_bytes` of the backend's config; 0 keeps nothing): a loop
of `shortest_path_length(G, s, t)` over t costs one search, and a graph converted again (networkx's
test mode converts on every call) finds its rows. On small graphs (vertices x arcs at most
`matrix_work`) the all-sources functions compute the whole distance matrix (one multi-search) and
keep it: later single-source calls read its rows. A call that names its `technique` always runs
that technique.
"""
from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from .. import backend
from .info import DEFAULT_CONFIG

_log = logging.getLogger("explorer.nx_backend")
_told = []  # the simulator notice, once a process


def config() -> dict:
    """The backend's configuration: nx.config.backends.bfs4k where networkx has it (installed
    through the entry point), else the defaults."""
    import networkx as nx

    cfg = dict(DEFAULT_CONFIG)
    try:
        cfg.update(dict(nx.config.backends["bfs4k"]))
    except (KeyError, AttributeError, TypeError):
        pass
    return cfg


def engine_problem() -> str | None:
    """None when kernels can run in this process (a GPU, or the simulator selected), else why not.
    Selects the backend ("auto") when nothing chose one yet."""
    if backend.selected() is None:
        try:
            backend.select("auto")
        except backend.BackendError as err:
            return f"kernels cannot run here: {err}"
    return None


def size_problem(num_arcs: int, searches: int = 1) -> str | None:
    """Why a graph of `num_arcs` arcs does not run here, or None: under the simulator the backend
    takes small graphs only (config simulator_max_arcs; with `searches` > 1, an all-sources
    function, simulator_max_work = vertices x arcs)."""
    info = backend.current()
    if info.is_simulator:
        cfg = config()
        limit = min(int(cfg.get("simulator_max_arcs", info.max_arcs)), info.max_arcs)
        if num_arcs > limit:
            return (f"the graph has {num_arcs:,} arcs; under the CUDA simulator (each GPU thread a "
                    f"Python thread) the bfs4k backend runs graphs of at most {limit:,} arcs "
                    "(nx.config.backends.bfs4k.simulator_max_arcs)")
        work = int(cfg.get("simulator_max_work", 0))
        if searches > 1 and searches * num_arcs > work:
            return (f"{searches:,} searches of {num_arcs:,} arcs; under the CUDA simulator the bfs4k "
                    f"backend runs all-sources functions up to {work:,} (searches x arcs; "
                    "nx.config.backends.bfs4k.simulator_max_work)")
    return None


def on_simulator() -> bool:
    info = backend.selected()
    return info is not None and info.is_simulator


def _tell_where() -> None:
    """Say once, at the first search, when the kernels run on the simulator."""
    if not _told and on_simulator():
        _told.append(True)
        cfg = config()
        _log.warning("bfs4k networkx backend: kernels run on Numba's CUDA simulator (no GPU): small "
                     "graphs only (%s arcs; all-sources functions %s searches x arcs), at CPU speed",
                     f"{cfg.get('simulator_max_arcs'):,}", f"{cfg.get('simulator_max_work'):,}")


@dataclass(frozen=True)
class Options:
    """The engine settings of one call: its extra keyword arguments over the backend's config."""

    technique: str
    knobs: dict
    method: str
    named: bool  # the call named its technique (then single-source searches always run it)

    @classmethod
    def of(cls, technique=None, knobs=None, multisearch=None) -> "Options":
        from ..auto import AUTO, is_auto
        from ..knobs import KnobError
        from ..techniques import implementation, make_knobs

        cfg = config()
        named = technique is not None
        tech = technique if named else (cfg.get("technique") or AUTO)
        method = multisearch or cfg.get("method") or "warp-thread"
        given = knobs is not None
        if not given:
            knobs = cfg.get("knobs") or {}
        if is_auto(tech):
            # auto sets its own knobs, the simulator's included (run_bfs): knobs beside it are a mistake
            if knobs:
                where = "knobs=" if given else "nx.config.backends.bfs4k.knobs"
                chosen = "technique='auto'" if named else "technique 'auto' (nx.config.backends.bfs4k.technique)"
                raise KnobError(f"{chosen} chooses its own knobs, but {where} gives {knobs!r}: name a "
                                "technique (technique=..., or nx.config.backends.bfs4k.technique) to set knobs")
            return cls(AUTO, {}, method, named)
        impl = implementation(tech)  # unknown or missing technique: ValueError naming the choices
        if not isinstance(knobs, dict):
            raise TypeError(f"knobs must be a dict of {impl.technique.value}'s knobs, not {type(knobs).__name__}")
        base = dict(impl.simulator_knobs) if on_simulator() else {}
        values = {**base, **knobs}
        make_knobs(impl.technique, values)  # bad names and values raise KnobError now
        return cls(impl.technique.value, values, method, named)


# ------------------------------------------------------------------------------------ results
class ResultStore:
    """Search results by (fingerprint, direction, kind, key), least recently used dropped first
    once they pass `limit` bytes. Arrays are stored read-only."""

    def __init__(self):
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key):
        with self._lock:
            arr = self._items.get(key)
            if arr is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return arr

    def put(self, key, arr: np.ndarray, limit: int) -> np.ndarray:
        arr.setflags(write=False)
        if limit <= 0 or arr.nbytes > limit:
            return arr
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = arr
            self._bytes += arr.nbytes
            while self._bytes > limit and self._items:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes
        return arr

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        return self._bytes


STORE = ResultStore()

#: Engine runs made by this process, by kind (the networkx test run reports them).
RUNS = {"run_bfs": 0, "run_many": 0, "run_sssp": 0, "run_apsp": 0}
#: auto's single-source searches by the candidate it chose (the networkx test run reports them).
CHOSEN: Counter = Counter()
#: This process's latest single-source search: its technique, its knobs, and where technique
#: "auto" chose them, why (explorer.auto.Choice.reason(); else None).
LAST: dict = {}


def _csr(bg, reverse: bool):
    return bg.rcsr if reverse else bg.csr


def _run_bfs(csr, source: int, opts: Options, session=None) -> np.ndarray:
    from ..api import Vertex, run_bfs

    RUNS["run_bfs"] += 1
    _tell_where()
    run = run_bfs(csr, Vertex(source), opts.technique, opts.knobs, instrument=False, session=session)
    res = run.complete()
    reason = None
    if run.choice is not None:
        reason = run.choice.reason()
        CHOSEN[run.choice.candidate] += 1
        _log.debug("%s: %s", csr.name, reason)
    LAST.clear()
    LAST.update(technique=res.technique, knobs=dict(res.knobs), reason=reason)
    return np.asarray(res.distances, dtype=np.int32)


def run_many_values(bg, sources, application, opts: Options, reverse: bool = False) -> dict:
    """The values of a multi-search over `bg`'s out-arcs (in-arcs with reverse) from `sources`:
    "all", a count, or vertices 0..n-1."""
    from ..graphs import Vertices
    from ..multisearch import run_many

    RUNS["run_many"] += 1
    _tell_where()
    csr = _csr(bg, reverse)
    # One launch per batch: the backend reports no progress, and more steps leave the GPU idler.
    if not isinstance(sources, (str, int)):
        sources = Vertices(sources)
    run = run_many(csr, sources, application, method=opts.method, steps=1, session=bg.sessions(reverse))
    return run.complete().values


def matrix(bg, reverse: bool, opts: Options) -> np.ndarray:
    """int32[n, n]: row s holds the hop distances from vertex s (-1 unreached), by one
    multi-search from every vertex."""
    key = (bg.fingerprint, reverse, "matrix", None)
    m = STORE.get(key)
    if m is None:
        m = np.asarray(run_many_values(bg, "all", "distances", opts, reverse)["distances"], dtype=np.int32)
        m = STORE.put(key, m, int(config().get("cache_bytes", 0)))
    return m


def cached_matrix(bg, reverse: bool) -> np.ndarray | None:
    return STORE.get((bg.fingerprint, reverse, "matrix", None))


def small_matrix(bg, opts: Options, reverse: bool = False) -> np.ndarray | None:
    """For an all-sources function: the distance matrix when the graph has one stored, or is small
    enough to get one (vertices x arcs at most config matrix_work, results kept) — computed then by
    one multi-search and kept, so that the single-source calls that often follow (networkx's
    radius, center, periphery and their bounds) read its rows. None: run the function's own
    multi-search application instead."""
    m = cached_matrix(bg, reverse)
    if m is not None:
        return m
    n, cfg = len(bg), config()
    if n > 1 and int(cfg.get("cache_bytes", 0)) > 0 and n * max(bg.num_arcs, 1) <= int(cfg.get("matrix_work", 0)):
        return matrix(bg, reverse, opts)
    return None


def row(bg, source: int, opts: Options, reverse: bool = False) -> np.ndarray:
    """int32[n]: hop distances from vertex `source` along out-arcs (in-arcs with reverse), -1 where
    unreached: a stored row, a row of a stored matrix, or a single-source search."""
    key = (bg.fingerprint, reverse, "row", source)
    if not opts.named:
        r = STORE.get(key)
        if r is not None:
            return r
        m = cached_matrix(bg, reverse)
        if m is not None:
            return m[source]
    csr = _csr(bg, reverse)
    if csr.offsets[source + 1] == csr.offsets[source]:
        r = np.full(len(bg), -1, dtype=np.int32)  # a vertex without arcs reaches itself only: no launch
        r[source] = 0
    else:
        r = _run_bfs(csr, source, opts, bg.sessions(reverse))
    return STORE.put(key, r, int(config().get("cache_bytes", 0)))


def multi_source(bg, sources: np.ndarray, opts: Options, reverse: bool = False) -> np.ndarray:
    """int32[n]: hop distance from the nearest of `sources` (distinct vertex ids), -1 unreached.
    Several sources: one search from a super-source joined to each of them (an extra vertex),
    or the rows of the all-sources matrix where the graph has one."""
    if len(sources) == 1:
        return row(bg, int(sources[0]), opts, reverse)
    m = cached_matrix(bg, reverse)
    if m is not None and not opts.named:
        rows = m[np.asarray(sources)]
        rows = np.where(rows < 0, np.iinfo(np.int32).max, rows).min(axis=0)
        return np.where(rows == np.iinfo(np.int32).max, -1, rows).astype(np.int32)
    from ..graphs import CSRGraph

    csr = _csr(bg, reverse)
    n = csr.num_vertices
    src = np.asarray(sources, dtype=np.int32)
    offsets = np.concatenate([csr.offsets, [csr.offsets[-1] + src.size]]).astype(np.int64)
    indices = np.concatenate([csr.indices, src]).astype(np.int32)
    # Directed: the super-source's arcs go one way, whatever the input graph was.
    sup = CSRGraph(offsets, indices, True, f"{csr.name} + super-source")
    from ..auto import is_auto
    from ..auto.choose import share_trials
    from ..graphs.stats import keep_search_features, search_features

    if is_auto(opts.technique):  # what auto reads: the graph's own, one vertex and level more, not a new probe
        f = search_features(csr)
        keep_search_features(sup, replace(f, vertices=n + 1, arcs=f.arcs + src.size, levels=f.levels + 1))
        share_trials(sup, csr)  # a GPU times auto's contenders once for the graph, not at every call
    d = _run_bfs(sup, n, opts)[:n]
    return np.where(d > 0, d - 1, -1).astype(np.int32)
