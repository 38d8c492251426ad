"""Applications of multi-search: a callback set (device functions, kernels.multisearch), the arrays
it works on, and what the host makes of them at the end.

An application declares its arrays by scope (`ArraySpec`): what the GPU must hold per search, per
block and for the whole run, which is also what sizes the batches. The shipped ones:

  distances     the hop-distance matrix of the sources (APSP when every vertex is a source)
  hop-counts    per source, the number of vertices at each hop distance
  closeness     closeness centrality of each source (networkx's closeness_centrality, wf_improved)
  eccentricity  eccentricity of each source; diameter (and radius) over them
  reachability  the vertices each source reaches
  betweenness   Brandes' betweenness centrality, exact (every vertex a source) or from a sample
                of sources, scaled as networkx's betweenness_centrality(G, k=...)

All but betweenness also run as MS-BFS (Method.BIT_PARALLEL), which counts hop distances only.
Distances go out along arcs: on a directed graph, closeness is networkx's closeness_centrality of
the reversed graph (networkx measures distances *to* a vertex).
"""
from __future__ import annotations

import functools
from collections import namedtuple
from dataclasses import dataclass
from typing import Callable

import numpy as np

#: Where an array lives and how long, by ArraySpec.scope.
SCOPES = {
    "search": "a row per search of the batch, zeroed before the batch, returned (rows in source order)",
    "slot": "a row per block (working state reused by the block's next search: init must reset it), not returned",
    "slot-sum": "a row per block, zeroed once per run, summed over the blocks and returned (accumulate "
                "across searches without atomics between blocks)",
    "run": "one array for the whole run, zeroed once, returned (writes from several blocks need atomics)",
}


@dataclass(frozen=True)
class ArraySpec:
    """One array of an application: `shape` is per row; "n" stands for the number of vertices,
    "n/32" for the 32-bit words of a bitmap over them."""

    name: str
    scope: str
    shape: tuple = ()
    dtype: type = np.int64

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"array {self.name!r}: scope {self.scope!r} is invalid; scopes: {', '.join(SCOPES)}")
        if not self.name.isidentifier():
            raise ValueError(f"array name {self.name!r} is invalid: it must be a Python identifier")
        object.__setattr__(self, "shape", tuple(self.shape))
        for d in self.shape:
            if isinstance(d, str) and d not in ("n", "n/32") or not isinstance(d, (str, int, np.integer)):
                raise ValueError(f"array {self.name!r}: dimension {d!r} is invalid: an int, 'n' or 'n/32'")

    def row_shape(self, n: int) -> tuple:
        dims = {"n": n, "n/32": -(-n // 32)}
        return tuple(dims[d] if isinstance(d, str) else int(d) for d in self.shape)

    def row_bytes(self, n: int) -> int:
        return int(np.prod(self.row_shape(n), dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class FinishContext:
    """What `Application.finish` may read besides the arrays."""

    graph: object
    sources: np.ndarray  # int32[k], in row order
    levels: np.ndarray  # int64[k], BFS levels of each search (eccentricity + 1)
    all_sources: bool  # every vertex exactly once: an exact (all-pairs) computation


class Application:
    """A multi-search application. Subclass it, or give the parts to the constructor:

        Application("level-sizes", Callbacks(post=my_post),
                    arrays=[ArraySpec("sizes", "search", (64,), np.int64)])

    `callbacks` is a kernels.multisearch.Callbacks (or a function returning one, so that device
    code is compiled only once the backend is chosen); `finish(values, ctx)` turns the returned
    arrays (by name) into the result's values; without it they are the values.
    """

    name = "custom"
    #: The result's values indexed by vertex (ranked tables) and by search.
    per_vertex: tuple = ()
    per_search: tuple = ()
    #: Can run as MS-BFS (hop distances only); then it needs the distance rows or the seen bits.
    bit_parallel = False
    needs_distances = False
    needs_seen = False

    def __init__(self, name: str | None = None, callbacks=None, arrays=(), finish: Callable | None = None):
        if name is not None:
            self.name = name
        self._callbacks = callbacks
        if arrays or not hasattr(self, "arrays"):
            self.arrays = tuple(arrays)
        self._finish = finish
        names = [a.name for a in self.arrays]
        if len(set(names)) != len(names):
            raise ValueError(f"application {self.name!r} declares an array name twice: {names}")
        self._data_type = _data_type(f"{self.name.replace('-', '_')}_data", tuple(names)) if names else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def callbacks(self):
        cb = self._callbacks
        if cb is None:
            raise ValueError(f"application {self.name!r} has no callbacks")
        return cb() if callable(cb) else cb

    def data(self, arrays: dict):
        """The namedtuple of device arrays every callback gets as `data`."""
        if self._data_type is None:
            return ()
        return self._data_type(*(arrays[a.name] for a in self.arrays))

    def check(self, graph, sources: np.ndarray) -> None:
        """Refuse what this application cannot compute, before anything runs."""

    def bytes(self, n: int, scope: str) -> int:
        return sum(a.row_bytes(n) for a in self.arrays if a.scope == scope)

    def from_levels(self, counts: np.ndarray, dist, seen, n: int) -> dict:
        """MS-BFS: the batch's per-search values from counts[level, row] (vertices found), the
        distance rows (when needs_distances) and the seen bits as bool[rows, n] (needs_seen)."""
        raise NotImplementedError(f"{self.name} does not run as MS-BFS")

    def finish(self, values: dict, ctx: FinishContext) -> dict:
        return self._finish(values, ctx) if self._finish is not None else dict(values)


def _km():
    from kernels import multisearch

    return multisearch


class Distances(Application):
    name = "distances"
    per_search = ("distances",)
    arrays = (ArraySpec("distances", "search", ("n",), np.int32),)
    bit_parallel = True
    needs_distances = True

    def __init__(self):
        super().__init__(callbacks=lambda: _km().DISTANCES)

    def from_levels(self, counts, dist, seen, n):
        return {"distances": dist}


class HopCounts(Application):
    """histogram[row, d]: vertices at hop distance d from the row's source (d = 0: the source)."""

    name = "hop-counts"
    per_search = ("histogram",)
    bit_parallel = True

    def __init__(self, max_levels: int = 256):
        if not isinstance(max_levels, (int, np.integer)) or max_levels < 1:
            raise ValueError(f"max_levels={max_levels!r} is invalid: the histogram's width, an int >= 1")
        self.max_levels = int(max_levels)
        self.arrays = (ArraySpec("histogram", "search", (self.max_levels,), np.int64),)
        super().__init__(callbacks=lambda: _km().HOP_COUNTS)

    def from_levels(self, counts, dist, seen, n):
        return {"histogram": np.ascontiguousarray(counts.T)}

    def finish(self, values, ctx):
        h = values["histogram"]
        deepest = int(ctx.levels.max(initial=0))
        if deepest > h.shape[1]:
            raise ValueError(f"hop-counts: a search went {deepest} levels deep, past the histogram's "
                             f"{h.shape[1]} columns: use HopCounts(max_levels={deepest})")
        return {"histogram": h[:, :max(deepest, 1)]}


def _level_sums(counts):
    lv = np.arange(counts.shape[0], dtype=np.int64)[:, None]
    return (counts * lv).sum(axis=0), counts[1:].sum(axis=0)


class Closeness(Application):
    """Closeness of each source: (r / total) * (r / (n - 1)) with r vertices reached (networkx's
    wf_improved; without it, r / total), 0 where nothing is reached."""

    name = "closeness"
    per_search = ("closeness", "total_distance", "reached")
    arrays = (ArraySpec("total", "search", (), np.int64), ArraySpec("reached", "search", (), np.int64))
    bit_parallel = True

    def __init__(self, wf_improved: bool = True):
        self.wf_improved = bool(wf_improved)
        super().__init__(callbacks=lambda: _km().CLOSENESS)

    def from_levels(self, counts, dist, seen, n):
        total, reached = _level_sums(counts)
        return {"total": total, "reached": reached}

    def finish(self, values, ctx):
        total = values["total"].astype(np.float64)
        r = values["reached"].astype(np.float64)
        n = ctx.graph.num_vertices
        c = np.divide(r, total, out=np.zeros_like(r), where=total > 0)
        if self.wf_improved and n > 1:
            c *= r / (n - 1)
        return {"closeness": c, "total_distance": values["total"], "reached": values["reached"]}


class Eccentricity(Application):
    """Eccentricity of each source within what it reaches; the diameter is their maximum (a
    lower bound from a sample of sources; infinite in networkx's terms when `connected` is False)."""

    name = "eccentricity"
    per_search = ("eccentricity", "reached")
    arrays = (ArraySpec("eccentricity", "search", (), np.int32), ArraySpec("reached", "search", (), np.int64))
    bit_parallel = True

    def __init__(self):
        super().__init__(callbacks=lambda: _km().ECCENTRICITY)

    def from_levels(self, counts, dist, seen, n):
        found = counts > 0
        ecc = (counts.shape[0] - 1 - np.argmax(found[::-1], axis=0)).astype(np.int32)
        return {"eccentricity": ecc, "reached": counts[1:].sum(axis=0)}

    def finish(self, values, ctx):
        ecc, reached = values["eccentricity"], values["reached"]
        n = ctx.graph.num_vertices
        return {"eccentricity": ecc, "reached": reached, "diameter": int(ecc.max(initial=0)),
                "radius": int(ecc.min()) if ecc.size else 0, "connected": bool(np.all(reached == n - 1))}


class Reachability(Application):
    """reachable[row, v]: whether the row's source reaches v (as bits on the GPU)."""

    name = "reachability"
    per_search = ("reachable", "reached")
    bit_parallel = True
    needs_seen = True

    def __init__(self):
        self.arrays = (ArraySpec("reachable", "search", ("n/32",), np.uint32),)
        super().__init__(callbacks=lambda: _km().REACHABILITY)

    def from_levels(self, counts, dist, seen, n):
        return {"reachable": seen}

    def finish(self, values, ctx):
        r = values["reachable"]
        n = ctx.graph.num_vertices
        if r.dtype != np.bool_:
            r = np.unpackbits(r.view(np.uint8), axis=1, bitorder="little")[:, :n].astype(bool)
        return {"reachable": r, "reached": r.sum(axis=1) - 1}


class Betweenness(Application):
    """Brandes' betweenness centrality, scaled as networkx's betweenness_centrality (endpoints
    excluded): exact when the sources are every vertex once, else the sampled estimate with
    networkx's scaling for k sampled sources (sources and other vertices scaled apart)."""

    name = "betweenness"
    per_vertex = ("betweenness",)
    arrays = (ArraySpec("sigma", "slot", ("n",), np.float64), ArraySpec("delta", "slot", ("n",), np.float64),
              ArraySpec("betweenness", "slot-sum", ("n",), np.float64))

    def __init__(self, normalized: bool = True):
        self.normalized = bool(normalized)
        super().__init__(callbacks=lambda: _km().BETWEENNESS)

    def check(self, graph, sources):
        if np.unique(sources).size != sources.size:
            raise ValueError("betweenness needs distinct sources (networkx samples without replacement)")

    def finish(self, values, ctx):
        bc = values["betweenness"].copy()
        sampled = None if ctx.all_sources else ctx.sources
        return {"betweenness": rescale_betweenness(bc, ctx.graph.num_vertices, normalized=self.normalized,
                                                   directed=ctx.graph.directed, sampled=sampled)}


def rescale_betweenness(bc: np.ndarray, n: int, *, normalized: bool, directed: bool, sampled=None) -> np.ndarray:
    """networkx 3.x's _rescale for node betweenness with endpoints=False."""
    N = n - 1
    if N < 2:
        return bc
    if sampled is None:
        scale = 1 / (N * (N - 1)) if normalized else N / (N * (1 if directed else 2))
        return bc * scale
    k = len(sampled)
    if normalized:
        s_src = 1 / ((k - 1) * (N - 1)) if k > 1 else np.nan
        s_other = 1 / (k * (N - 1))
    else:
        corr = 1 if directed else 2
        s_src = N / ((k - 1) * corr) if k > 1 else np.nan
        s_other = N / (k * corr)
    scale = np.full(n, s_other)
    scale[np.asarray(sampled)] = s_src
    return bc * scale


APPLICATIONS = {
    "distances": Distances,
    "hop-counts": HopCounts,
    "closeness": Closeness,
    "eccentricity": Eccentricity,
    "reachability": Reachability,
    "betweenness": Betweenness,
}


@functools.cache
def _data_type(name: str, names: tuple):
    """One namedtuple class per layout: Numba types a namedtuple by its class, so a class of each
    Application's own would compile the kernels again for every new instance (every networkx call,
    seconds each on a GPU)."""
    return namedtuple(name, names)


def application(app) -> Application:
    """An Application from a name of APPLICATIONS or an Application instance."""
    if isinstance(app, Application):
        return app
    key = str(app).strip().lower()
    if key not in APPLICATIONS:
        raise ValueError(f"unknown multi-search application {app!r}; applications: {', '.join(APPLICATIONS)} "
                         "(or an explorer.multisearch.Application of your own)")
    return APPLICATIONS[key]()
