"""CSRGraph, the one graph type every part of the explorer reads, and the check of its structure.

A CSR enters the program in one of four ways (the builder, a loader, the on-disk cache, or a caller
constructing CSRGraph directly) and every one of them goes through `CSRGraph.__post_init__`, which
checks the structure once: the Numba BFS kernels do no bounds checking, and a broken CSR would
make them read or write out of bounds instead of failing.
"""
from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import prange

from .._twoform import two_forms

__all__ = ["CSRGraph", "GraphError", "Vertex", "Vertices", "resolve_source"]

# Vertex ids are int32 in the CSR and in every kernel.
MAX_VERTICES = 2**31 - 1


class GraphError(ValueError):
    """A graph file or array could not be turned into a CSRGraph; the message names where."""


@dataclass(eq=False)
class CSRGraph:
    """Compressed sparse row graph.

    offsets:      int64[n+1], the neighbours of v are indices[offsets[v]:offsets[v+1]]
    indices:      int32[m], column indices (one entry per arc; an undirected edge is two arcs)
    directed:     False when every arc has its reverse (the graph was symmetric or symmetrized)
    original_ids: int64[n], strictly increasing: the id vertex v has in the input (the file's own
                  id), when the input's ids were remapped to 0..n-1; None when they are the same
    notes:        what building did to the input (symmetrized, self loops dropped, ...)
    weights:      float64[m] aligned with indices (weights[k] belongs to the arc indices[k]), or
                  None. The BFS ignores them; they are kept for shortest paths and networkx.

    Construction checks the structure (offsets start at 0, never decrease and end at len(indices);
    indices in 0..n-1; integer dtypes, converted to int64/int32 where lossless; weights and
    original_ids of the right length) and raises GraphError naming the first fault. Whether an
    undirected graph really stores both arcs of each edge is trusted, not checked.
    """

    offsets: np.ndarray
    indices: np.ndarray
    directed: bool
    name: str = "graph"
    original_ids: np.ndarray | None = None
    notes: dict = field(default_factory=dict)
    weights: np.ndarray | None = None

    def __post_init__(self):
        self.name = str(self.name)
        self.directed = bool(self.directed)
        self.notes = dict(self.notes or {})
        self.offsets, self.indices = _checked_csr(self.offsets, self.indices, self.name)
        n = len(self.offsets) - 1
        if self.weights is not None:
            self.weights = checked_weights(self.weights, len(self.indices),
                                           f"CSR graph {self.name!r}: weights")
        if self.original_ids is not None:
            self.original_ids = _checked_original_ids(self.original_ids, n, self.name)

    def __setstate__(self, state: dict) -> None:
        # Unpickled out of a network frame (a Dask worker's copy), an array may start at any
        # byte: the int64 offsets then straddle words on every read (the CPU check, a GPU
        # upload's staging). Aligned copies, once.
        self.__dict__.update({k: np.array(v) if isinstance(v, np.ndarray) and not v.flags.aligned else v
                              for k, v in state.items()})

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_arcs(self) -> int:
        return len(self.indices)

    @property
    def num_edges(self) -> int:
        """|E| as BFS-4K's Table 1 counts it here: arcs for a directed graph, undirected edges
        (a self loop counts once) for an undirected one."""
        if self.directed:
            return self.num_arcs
        loops = int(_count_self_loops(self.offsets, self.indices))
        return (self.num_arcs - loops) // 2 + loops

    def degrees(self) -> np.ndarray:
        return np.diff(self.offsets)

    @functools.cached_property
    def max_degree(self) -> int:
        """The largest out-degree (0 without vertices), computed once: a run asks for it."""
        return int(self.degrees().max()) if self.num_vertices else 0

    def neighbors(self, v: int) -> np.ndarray:
        return self.indices[self.offsets[v]:self.offsets[v + 1]]

    def _where(self) -> str:
        return self.notes.get("source") or f"graph {self.name!r}"

    def to_dense(self, original) -> int:
        """The vertex (0..n-1) that has id `original` in the input (the file's own id, see
        explorer.graphs); GraphError naming the id and the input when it has none."""
        x = _as_int(original, "vertex id")
        n = self.num_vertices
        ids = self.original_ids
        if ids is None and 0 <= x < n:
            return x
        if ids is not None:
            k = int(np.searchsorted(ids, x))
            if k < n and ids[k] == x:
                return k
        if n == 0:
            span = "it has no vertices"
        elif ids is None:
            span = f"its ids are 0..{n - 1}"
        else:
            span = f"its {n:,} ids run from {int(ids[0])} to {int(ids[-1])} with gaps"
        raise GraphError(f"vertex id {x} is not in {self._where()}: {span}")

    def to_dense_many(self, original) -> np.ndarray:
        """to_dense of each id of a 1-D integer array, as int64; GraphError naming the first id
        the input does not have."""
        x = np.asarray(original, dtype=np.int64).ravel()
        ids, n = self.original_ids, self.num_vertices
        if ids is None:
            ok = (x >= 0) & (x < n)
            pos = x
        else:
            pos = np.searchsorted(ids, x)
            ok = (pos < n) & (ids[np.minimum(pos, max(n - 1, 0))] == x) if n else np.zeros(x.shape, bool)
        if not ok.all():
            self.to_dense(int(x[~ok][0]))  # raises, naming it
        return pos.astype(np.int64)

    def to_original_many(self, dense) -> np.ndarray:
        """The input's own ids of vertices `dense` (a 1-D integer array of 0..n-1), as int64."""
        v = np.asarray(dense, dtype=np.int64).ravel()
        n = self.num_vertices
        bad = v[(v < 0) | (v >= n)]
        if bad.size:
            self.to_original(int(bad[0]))  # raises, naming it
        return v.copy() if self.original_ids is None else self.original_ids[v].astype(np.int64)

    def to_original(self, dense) -> int:
        """The input's own id of vertex `dense` (0..n-1)."""
        v = _as_int(dense, "vertex")
        n = self.num_vertices
        if not 0 <= v < n:
            raise GraphError(f"vertex {v} is out of range: graph {self.name!r} has {n} vertices "
                             f"(0..{n - 1})")
        return v if self.original_ids is None else int(self.original_ids[v])

    def summary(self) -> dict:
        """Size, directedness and everything building did to the input (from `notes`)."""
        out = {
            "name": self.name,
            "vertices": self.num_vertices,
            "arcs": self.num_arcs,
            "edges": self.num_edges,
            "directed": bool(self.directed),
            "ids": ("remapped to 0..n-1, the input's ids in .original_ids"
                    if self.original_ids is not None else "as given"),
            "weighted": self.weights is not None,
        }
        out.update(self.notes)
        return out

    def to_scipy(self):
        """The adjacency matrix as a scipy.sparse csr_array: the weights (float64) when the graph
        has them, else ones (int8)."""
        import scipy.sparse as sp

        n = self.num_vertices
        data = self.weights if self.weights is not None else np.ones(self.num_arcs, np.int8)
        return sp.csr_array((data, self.indices, self.offsets), shape=(n, n))

    def to_networkx(self):
        """networkx Graph/DiGraph on 0..n-1: original ids, if any, as node attribute 'id',
        weights, if any, as edge attribute 'weight'."""
        import networkx as nx

        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.num_vertices))
        if self.original_ids is not None:
            nx.set_node_attributes(g, dict(enumerate(self.original_ids.tolist())), "id")
        src = np.repeat(np.arange(self.num_vertices), self.degrees()).tolist()
        if self.weights is None:
            g.add_edges_from(zip(src, self.indices.tolist()))
        else:
            g.add_weighted_edges_from(zip(src, self.indices.tolist(), self.weights.tolist()))
        return g

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        weighted = ", weighted" if self.weights is not None else ""
        return (f"CSRGraph({self.name!r}, {kind}{weighted}, {self.num_vertices:,} vertices, "
                f"{self.num_edges:,} {'arcs' if self.directed else 'edges'})")


@dataclass(frozen=True)
class Vertex:
    """A vertex by its number 0..n-1 in the CSR, where a function takes the input's own ids:
    `run_bfs(graph, Vertex(v))` starts at vertex v whatever the file calls it. For code that holds
    vertices already (`np.argmax(graph.degrees())`, a result's parents); users give their ids.
    Not an int on purpose: nothing mistakes it for an id."""

    vertex: int

    def __post_init__(self):
        object.__setattr__(self, "vertex", _as_int(self.vertex, "Vertex"))

    def __repr__(self) -> str:
        return f"Vertex({self.vertex})"


@dataclass(frozen=True, eq=False)
class Vertices:
    """Vertices by their numbers 0..n-1 (a 1-D integer array, kept read-only as int64), where a
    function takes the input's own ids: `run_many(graph, Vertices(vs))`. See Vertex."""

    vertices: np.ndarray

    def __post_init__(self):
        v = np.array(_int_array(self.vertices, "Vertices"), dtype=np.int64)
        v.setflags(write=False)
        object.__setattr__(self, "vertices", v)

    def __len__(self) -> int:
        return len(self.vertices)


def resolve_source(graph: CSRGraph, source, seed: int = 0) -> int:
    """The vertex (0..n-1) to start from, the one conversion of a source on the way in: a vertex
    id in the graph's own ids (a file's ids when its loader kept them: `graph.original_ids`),
    "max-degree" (first vertex of highest out-degree), "random" (seeded, degree >= 1), or
    `Vertex(v)`, vertex v itself."""
    n = graph.num_vertices
    if isinstance(source, Vertex):
        if not 0 <= source.vertex < n:
            raise ValueError(f"source {source} is out of range: graph {graph.name!r} has vertices 0..{n - 1}")
        return source.vertex
    if isinstance(source, str):
        key = source.strip().lower()
        if key.lstrip("-").isascii() and key.lstrip("-").isdigit():  # not "²": int() refuses it
            source = int(key)
        elif key == "max-degree":
            if n == 0:
                raise ValueError(f"graph {graph.name!r} has no vertices: there is no source to choose")
            return int(np.argmax(graph.degrees()))
        elif key == "random":
            candidates = np.flatnonzero(graph.degrees() >= 1)
            if len(candidates) == 0:
                raise ValueError(f"graph {graph.name!r} has no vertex of degree >= 1 to start a random BFS from")
            return int(np.random.default_rng(seed).choice(candidates))
        else:
            raise ValueError(f"source {source!r} is invalid: give a vertex id, 'max-degree' or 'random'")
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise ValueError(f"source {source!r} is invalid: give a vertex id, 'max-degree', 'random' or Vertex(v)")
    if graph.original_ids is not None:
        return graph.to_dense(source)  # GraphError (a ValueError) naming the id and the file
    if not 0 <= source < n:
        raise ValueError(f"source vertex {int(source)} is out of range: graph {graph.name!r} has vertices 0..{n - 1}")
    return int(source)


def _as_int(x, what: str) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise GraphError(f"{what} {x!r} is not an integer")
    try:
        return operator.index(x)
    except TypeError:
        raise GraphError(f"{what} {x!r} is not an integer") from None


# ============================================================================================
# The structure check


@numba.njit(cache=True)
def _count_self_loops(offsets, indices):
    n = offsets.shape[0] - 1
    loops = 0
    for u in range(n):
        for k in range(offsets[u], offsets[u + 1]):
            if indices[k] == u:
                loops += 1
    return loops


# Reductions, which vectorize, find whether there is a fault (twice as fast as a scan that stops
# at the first one); numpy then finds where, only for a broken CSR.
@two_forms
def _decreases(offsets):
    bad = 0
    for k in prange(offsets.shape[0] - 1):
        bad += offsets[k] > offsets[k + 1]
    return bad


@two_forms
def _id_range(indices):
    lo = np.int64(0)
    hi = np.int64(0)
    for j in prange(indices.shape[0]):
        x = np.int64(indices[j])
        lo = min(lo, x)
        hi = max(hi, x)
    return lo, hi


def _int_array(a, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise GraphError(f"{what} must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)  # [] is float64 to numpy
    if arr.dtype.kind not in "iu":
        raise GraphError(f"{what} must hold integers, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        k = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise GraphError(f"{what}[{k}] = {arr[k]} is too large")
    return arr


def _checked_csr(offsets, indices, name: str) -> tuple[np.ndarray, np.ndarray]:
    where = f"CSR graph {name!r}"
    off = _int_array(offsets, f"{where}: offsets")
    idx = _int_array(indices, f"{where}: indices")
    if off.size == 0:
        raise GraphError(f"{where}: offsets is empty; it needs n+1 entries (just [0] for no "
                         "vertices)")
    n = off.size - 1
    if n > MAX_VERTICES:
        raise GraphError(f"{where}: {n:,} vertices do not fit int32 vertex ids (at most "
                         f"{MAX_VERTICES:,})")
    off = np.ascontiguousarray(off, dtype=np.int64)
    if off[0] != 0 or off[-1] != idx.size:
        raise GraphError(f"{where}: offsets must start at 0 and end at len(indices) = "
                         f"{idx.size:,}, got offsets[0] = {off[0]} and offsets[{n}] = {off[-1]}")
    if idx.dtype.itemsize > 4 or idx.dtype == np.uint32:
        idx = np.ascontiguousarray(idx, dtype=np.int64)  # range-checked before narrowing
    else:
        idx = np.ascontiguousarray(idx)
    if _decreases.at(off.size)(off):
        k = int(np.flatnonzero(np.diff(off) < 0)[0])
        raise GraphError(f"{where}: offsets[{k}] = {off[k]} > offsets[{k + 1}] = {off[k + 1]}: "
                         "offsets must never decrease")
    lo, hi = _id_range.at(idx.size)(idx) if idx.size else (0, -1)
    if lo < 0 or hi >= n:
        j = int(np.flatnonzero((idx < 0) | (idx >= n))[0])
        u = int(np.searchsorted(off, j, side="right") - 1)
        raise GraphError(f"{where}: indices[{j}] = {idx[j]} (an arc of vertex {u}) is out of "
                         f"range: ids must be in 0..{n - 1}")
    return off, np.ascontiguousarray(idx, dtype=np.int32)


def checked_weights(weights, m: int, what: str) -> np.ndarray:
    """weights as float64[m]; GraphError for the wrong length, a non-real dtype or a NaN."""
    w = np.asarray(weights)
    if w.ndim != 1 or w.size != m:
        raise GraphError(f"{what} must be a 1-D array of {m:,} values (one per arc), got shape "
                         f"{w.shape}")
    if w.dtype.kind not in "biuf":
        raise GraphError(f"{what} must be real numbers, got dtype {w.dtype}")
    w = np.ascontiguousarray(w, dtype=np.float64)
    nan = np.isnan(w)
    if nan.any():
        k = int(np.argmax(nan))
        raise GraphError(f"{what}[{k}] is NaN; a weight must be a number")
    return w


def _checked_original_ids(ids, n: int, name: str) -> np.ndarray:
    where = f"CSR graph {name!r}: original_ids"
    a = np.ascontiguousarray(_int_array(ids, where), dtype=np.int64)
    if a.size != n:
        raise GraphError(f"{where} has {a.size:,} entries for {n:,} vertices")
    bad = np.diff(a) <= 0
    if bad.any():
        k = int(np.argmax(bad))
        raise GraphError(f"{where} must be strictly increasing, got [{k}] = {a[k]} and "
                         f"[{k + 1}] = {a[k + 1]}")
    return a
