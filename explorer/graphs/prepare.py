"""Graph preparation for searches on bitmaps: a vertex order, the CSR renumbered in it, and the
in-adjacency bit-packed for bottom-up steps. Done once per graph and order, kept with the graph
(`prepare` caches it while the graph object lives), and timed on its own: it is never search time.

Orders (`ORDERS`):
  none     the graph's own numbering;
  degree   by decreasing degree (in + out on a directed graph), ties in the graph's order: the
           hubs first, so each vertex's first adjacency word holds the neighbours a bottom-up
           step most likely finds in the frontier, and vertices without edges last;
  rcm      reverse Cuthill-McKee (scipy.sparse.csgraph.reverse_cuthill_mckee): neighbours get
           nearby numbers, so a vertex's in-neighbours share few words (meshes, road networks);
  auto     degree when the degrees are skewed (`skewed`), else none.

The bit-packed in-adjacency (BLEST's idea, Elbek & Kaya 2025, with slices of 32 columns): vertex v's
in-neighbours grouped by the 32-vertex word they fall in, one 64-bit pair per word,
`word << 32 | mask` (bit i of mask: vertex 32 * word + i is an in-neighbour), pairs in increasing
word order. A bottom-up step tests a pair against the frontier bitmap with one AND: 32 candidate
parents at once, and the lowest set bit of the first non-zero AND is the lowest-numbered parent.
`head[v]` repeats v's first pair (0: no in-neighbours) so that a warp reads 32 vertices' first
pairs in one coalesced load.

Results of a search on the prepared graph are in its numbering: kernels.common.to_graph_ids maps
distances and parents back to the graph's own vertices, on the device (`rank` and `perm`).
"""
from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import prange

from ..reference.bfs import rows_sorted

ORDERS = ("auto", "none", "degree", "rcm")


@dataclass(frozen=True, eq=False)
class PreparedGraph:
    """A graph renumbered in `order` with its bit-packed in-adjacency (all arrays numpy, host)."""

    order: str  # the order applied ("auto" resolved to none or degree)
    perm: np.ndarray | None  # int32[n]: perm[new] = the graph's vertex; None for the graph's own order
    rank: np.ndarray | None  # int32[n]: rank[vertex] = its new number
    offsets: np.ndarray  # int64[n+1], out-adjacency in the new numbering, rows sorted
    indices: np.ndarray  # int32[m]
    pair_offsets: np.ndarray  # int64[n+1]: v's pairs are pairs[pair_offsets[v]:pair_offsets[v+1]]
    pairs: np.ndarray  # uint64[p]: word << 32 | mask, increasing words per vertex
    head: np.ndarray  # uint64[n]: v's first pair, 0 when v has no in-neighbour
    n_pull: int  # vertices 0..n_pull-1 may have in-neighbours; the others never get a parent by pulling
    seconds: dict = field(default_factory=dict)  # preparation time by stage (order, renumber, pack)

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def candidates_per_pair(self) -> float:
        """In-edges a pair covers on average (1 to 32): what one AND tests."""
        return float(self.pair_offsets[-1] and (self.in_arcs / self.pair_offsets[-1]))

    @property
    def in_arcs(self) -> int:
        return int(_popc_sum(self.pairs))

    def new_id(self, v: int) -> int:
        return int(v) if self.rank is None else int(self.rank[v])


def skewed(graph) -> bool:
    """Whether the degrees are heavy-tailed, by BLEST's shares test (its isSocialDegreeDistribution
    without the power-law fit): the top 1 % of vertices by degree hold at least 5 % of the arcs and
    the top 10 % at least 40 %."""
    d = np.sort(_total_degrees(graph))[::-1].astype(np.float64)
    total = d.sum()
    if total == 0:
        return False
    n = len(d)
    top = lambda frac: d[:max(1, int(np.ceil(frac * n)))].sum() / total  # noqa: E731
    return top(0.01) >= 0.05 and top(0.10) >= 0.40


def vertex_order(graph, order: str) -> tuple[str, np.ndarray | None]:
    """(the order applied, perm: perm[new] = vertex, None for the graph's own order)."""
    if order not in ORDERS:
        raise ValueError(f"vertex order {order!r} is unknown: one of {', '.join(ORDERS)}")
    if order == "auto":
        order = "degree" if skewed(graph) else "none"
    if order == "none" or graph.num_vertices == 0:
        return order, None
    if order == "degree":
        return order, np.argsort(-_total_degrees(graph), kind="stable").astype(np.int32)
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    perm = reverse_cuthill_mckee(graph.to_scipy().tocsr(), symmetric_mode=not graph.directed)
    return order, np.asarray(perm, np.int32)


def _total_degrees(graph) -> np.ndarray:
    out = np.diff(graph.offsets)
    if not graph.directed:
        return out
    return out + np.bincount(graph.indices, minlength=graph.num_vertices)


@numba.njit(cache=True, parallel=True)
def _renumber(offsets, indices, perm, rank, new_offsets, new_indices):
    """Row v of the new CSR is row perm[v] of the old one with its entries renumbered, sorted."""
    n = perm.shape[0]
    for v in prange(n):
        u = perm[v]
        s = offsets[u]
        d = new_offsets[v]
        k = offsets[u + 1] - s
        for j in range(k):
            new_indices[d + j] = rank[indices[s + j]]
        new_indices[d:d + k].sort()


@numba.njit(cache=True, parallel=True)
def _sort_rows(offsets, indices):
    for v in prange(offsets.shape[0] - 1):
        indices[offsets[v]:offsets[v + 1]].sort()


def renumbered(graph, perm: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[n+1], indices int32[m]) of the graph in the new numbering, rows sorted."""
    offsets = np.ascontiguousarray(graph.offsets, dtype=np.int64)
    indices = np.ascontiguousarray(graph.indices, dtype=np.int32)
    if perm is None:
        if rows_sorted(offsets, indices):
            return offsets, indices
        indices = indices.copy()
        _sort_rows(offsets, indices)
        return offsets, indices
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm), dtype=np.int32)
    new_offsets = np.zeros_like(offsets)
    np.cumsum(np.diff(offsets)[perm], out=new_offsets[1:])
    new_indices = np.empty_like(indices)
    _renumber(offsets, indices, perm, rank, new_offsets, new_indices)
    return new_offsets, new_indices


def in_adjacency(offsets: np.ndarray, indices: np.ndarray, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The in-edges (u is in v's row for each arc u -> v), rows sorted: the CSR itself when undirected
    (its rows sorted)."""
    if not directed:
        return offsets, indices
    n = len(offsets) - 1
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets))
    order = np.lexsort((src, indices))  # by target, then source: rows sorted
    in_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(indices, minlength=n), out=in_offsets[1:])
    return in_offsets, src[order]


@numba.njit(cache=True, parallel=True)
def _pair_counts(offsets, indices, counts):
    for v in prange(offsets.shape[0] - 1):
        c = 0
        last = -1
        for e in range(offsets[v], offsets[v + 1]):
            w = indices[e] >> 5
            if w != last:
                c += 1
                last = w
        counts[v] = c


@numba.njit(cache=True, parallel=True)
def _fill_pairs(offsets, indices, pair_offsets, pairs, head):
    for v in prange(offsets.shape[0] - 1):
        p = pair_offsets[v] - 1
        last = -1
        for e in range(offsets[v], offsets[v + 1]):
            x = indices[e]
            w = x >> 5
            if w != last:
                p += 1
                last = w
                pairs[p] = np.uint64(w) << np.uint64(32)
            pairs[p] |= np.uint64(1) << np.uint64(x & 31)
        head[v] = pairs[pair_offsets[v]] if offsets[v + 1] > offsets[v] else np.uint64(0)


def pack_bits(in_offsets: np.ndarray, in_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair_offsets int64[n+1], pairs uint64[p], head uint64[n]) from sorted in-adjacency rows."""
    n = len(in_offsets) - 1
    counts = np.zeros(n, np.int64)
    _pair_counts(in_offsets, in_indices, counts)
    pair_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=pair_offsets[1:])
    pairs = np.zeros(int(pair_offsets[-1]), np.uint64)
    head = np.zeros(n, np.uint64)
    if n:
        _fill_pairs(in_offsets, in_indices, pair_offsets, pairs, head)
    return pair_offsets, pairs, head


def unpack_bits(pair_offsets: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted in-adjacency (offsets, indices) the pairs encode: pack_bits' inverse (tests)."""
    words = (pairs >> np.uint64(32)).astype(np.int64)
    masks = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int64)
    bits = ((masks[:, None] >> np.arange(32)) & 1).astype(bool)
    n = len(pair_offsets) - 1
    rows = np.repeat(np.arange(n), np.diff(pair_offsets))
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, weights=bits.sum(axis=1), minlength=n).astype(np.int64), out=offsets[1:])
    pair_idx, bit = np.nonzero(bits)
    return offsets, (words[pair_idx] * 32 + bit).astype(np.int32)


@numba.njit(cache=True, parallel=True)
def _popc_sum(pairs):
    total = 0
    for i in prange(pairs.shape[0]):
        m = pairs[i] & np.uint64(0xFFFFFFFF)
        c = 0
        while m:
            m &= m - np.uint64(1)
            c += 1
        total += c
    return total


def _prepare(graph, order: str, status) -> PreparedGraph:
    seconds = {}
    t = time.perf_counter()
    applied, perm = vertex_order(graph, order)
    seconds["order"] = time.perf_counter() - t
    if perm is not None:
        status(f"{graph.name}: vertex order '{applied}' found in {seconds['order']:.2f} s; renumbering")
    t = time.perf_counter()
    offsets, indices = renumbered(graph, perm)
    in_offsets, in_indices = in_adjacency(offsets, indices, graph.directed)
    seconds["renumber"] = time.perf_counter() - t
    t = time.perf_counter()
    pair_offsets, pairs, head = pack_bits(in_offsets, in_indices)
    seconds["pack"] = time.perf_counter() - t
    has_in = np.flatnonzero(np.diff(in_offsets))
    rank = None
    if perm is not None:
        rank = np.empty_like(perm)
        rank[perm] = np.arange(len(perm), dtype=np.int32)
    return PreparedGraph(applied, perm, rank, offsets, indices, pair_offsets, pairs, head,
                         int(has_in[-1]) + 1 if len(has_in) else 0, seconds)


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def prepare(graph, order: str = "auto", status=None) -> PreparedGraph:
    """The graph prepared in `order` (see the module's doc), built once and kept with the graph
    object for as long as it lives; `status(message)` hears about a preparation that runs."""
    if order not in ORDERS:
        raise ValueError(f"vertex order {order!r} is unknown: one of {', '.join(ORDERS)}")
    status = status or (lambda msg: None)
    with _LOCK:
        per_graph = _CACHE.setdefault(graph, {})
        if order == "auto":  # resolved once a graph (a sort of its degrees), kept under the order it resolves to
            if "auto" not in per_graph:
                per_graph["auto"] = "degree" if skewed(graph) else "none"
            order = per_graph["auto"]
        hit = per_graph.get(order)
        if hit is None:
            t = time.perf_counter()
            hit = per_graph[order] = _prepare(graph, order, status)
            status(f"{graph.name}: prepared for bitmap searches (order '{hit.order}') in "
                   f"{time.perf_counter() - t:.2f} s: {', '.join(f'{k} {v:.2f} s' for k, v in hit.seconds.items())} "
                   "(graph preparation, not search time)")
        return hit


def is_prepared(graph, order: str) -> bool:
    """Whether `prepare(graph, order)` would find its work done."""
    with _LOCK:
        per_graph = _CACHE.get(graph, {})
        return per_graph.get("auto", order) in per_graph if order == "auto" else order in per_graph


__all__ = ["ORDERS", "PreparedGraph", "in_adjacency", "is_prepared", "pack_bits", "prepare", "renumbered",
           "skewed", "unpack_bits", "vertex_order"]
