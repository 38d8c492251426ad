"""Graphs in CSR form: the one type every part of the explorer reads.

Loaders (SNAP, Matrix Market, METIS, networkx, scipy, numpy arrays), seeded generators of the
papers' graph families, the on-disk cache and BFS-4K Table-1 statistics live here.

Vertex ids. Every loader that reads ids from text (SNAP edge lists, `from_edges(remap=True)`)
*remaps* arbitrary, non-contiguous ids to 0..n-1 in increasing order of the original id and keeps
the original ids in `CSRGraph.ids` (ids[v] is the original id of vertex v). Only vertices that
occur in some edge exist after remapping; there are no isolated filler vertices. When the ids are
already exactly 0..n-1, nothing is remapped and `ids` is None. `remap=False` keeps the id space
instead (n = largest id + 1; the gaps become isolated vertices).

Every CSR goes through one builder (`from_edges` and, inside, `_build`): a counting-sort scatter
into buckets of consecutive sources (Numba, parallel over edge chunks), then per bucket a radix
(counting) sort by (source, target), so every adjacency list is sorted and the CSR does not
depend on input order or thread count, and one pass over the sorted rows merges duplicates.
What it did is recorded in `CSRGraph.notes` and shown by `CSRGraph.summary()`.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import inspect
import io
import json
import os
import struct
import tempfile
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import numba
import numpy as np
from numba import prange

__all__ = [
    "CSRGraph",
    "GraphError",
    "from_edges",
    "from_networkx",
    "from_scipy",
    "load_snap",
    "load_matrix_market",
    "load_metis",
    "load_graph",
    "sample_graph",
    "sample_graph_path",
    "SAMPLE_GRAPHS",
    "SAMPLES_DIR",
    "generate",
    "GENERATORS",
    "kronecker",
    "uniform_random",
    "grid2d",
    "grid3d",
    "luo_scale_free",
    "watts_strogatz",
    "graph_stats",
    "degree_histogram",
    "cache_dir",
]


class GraphError(ValueError):
    """A graph file or array could not be turned into a CSRGraph; the message names where."""


@dataclass(eq=False)
class CSRGraph:
    """Compressed sparse row graph.

    offsets:  int64[n+1], the neighbours of v are indices[offsets[v]:offsets[v+1]]
    indices:  int32[m], column indices (one entry per arc; an undirected edge is two arcs)
    directed: False when every arc has its reverse (the graph was symmetric or symmetrized)
    ids:      original vertex ids (int64[n]) when the input ids were remapped, else None
    notes:    what building did to the input (symmetrized, self loops dropped, multi-edges merged)
    """

    offsets: np.ndarray
    indices: np.ndarray
    directed: bool
    name: str = "graph"
    ids: np.ndarray | None = None
    notes: dict = field(default_factory=dict)

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

    def neighbors(self, v: int) -> np.ndarray:
        return self.indices[self.offsets[v]:self.offsets[v + 1]]

    def summary(self) -> dict:
        """Size, directedness and everything building did to the input (from `notes`)."""
        out = {
            "name": self.name,
            "vertices": self.num_vertices,
            "arcs": self.num_arcs,
            "edges": self.num_edges,
            "directed": bool(self.directed),
            "ids": "remapped to 0..n-1, originals in .ids" if self.ids is not None else "as given",
        }
        out.update(self.notes)
        return out

    def to_scipy(self):
        """The adjacency matrix as a scipy.sparse csr_array of ones (int8)."""
        import scipy.sparse as sp

        n = self.num_vertices
        data = np.ones(self.num_arcs, np.int8)
        return sp.csr_array((data, self.indices, self.offsets), shape=(n, n))

    def to_networkx(self):
        """networkx Graph/DiGraph on 0..n-1 (original ids, if any, as node attribute 'id')."""
        import networkx as nx

        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.num_vertices))
        if self.ids is not None:
            nx.set_node_attributes(g, dict(enumerate(self.ids.tolist())), "id")
        src = np.repeat(np.arange(self.num_vertices), self.degrees())
        g.add_edges_from(zip(src.tolist(), self.indices.tolist()))
        return g

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"CSRGraph({self.name!r}, {kind}, {self.num_vertices:,} vertices, "
                f"{self.num_edges:,} {'arcs' if self.directed else 'edges'})")


# ============================================================================================
# Progress bars


def _bar(total: int, desc: str, progress: bool | None):
    """A tqdm bar that stays hidden unless the work takes over a second (progress=None), always
    shows (True) or never exists (False)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, delay=0.0 if progress else 1.0, disable=progress is False,
                leave=False)


class _NoBar:
    def update(self, n=1):
        pass

    def set_postfix_str(self, s, refresh=True):
        pass

    def close(self):
        pass


# ============================================================================================
# The CSR builder (Numba kernels)

# Two-pass counting sort. Pass 1 scatters the arcs into at most 2048 buckets of 2**shift
# consecutive source vertices (few enough write streams to stay in cache); pass 2 sorts each
# bucket by (source, target) with an LSD radix sort, a counting sort per 11-bit digit, and
# merges duplicates in the same sweep that writes the rows, while the bucket is in cache. One
# scatter straight into n rows, then a comparison sort per row, missed the cache on nearly
# every arc and took 4x longer on a scale-22 Kronecker graph.
_MAX_BUCKETS_LOG2 = 11


@numba.njit(cache=True)
def _count_self_loops(offsets, indices):
    n = offsets.shape[0] - 1
    loops = 0
    for u in range(n):
        for k in range(offsets[u], offsets[u + 1]):
            if indices[k] == u:
                loops += 1
    return loops


@numba.njit(cache=True, parallel=True)
def _bucket_counts(src, dst, shift, nb, both, drop_loops, nchunks):
    """Per-chunk bucket counts: chunk t owns edges [m*t/T, m*(t+1)/T) and its own counter row,
    so the scatter can run one chunk per thread without atomics."""
    m = src.shape[0]
    counts = np.zeros((nchunks, nb), np.int64)
    loops = np.zeros(nchunks, np.int64)
    for t in prange(nchunks):
        lo = m * t // nchunks
        hi = m * (t + 1) // nchunks
        nl = 0
        for e in range(lo, hi):
            u = src[e]
            v = dst[e]
            if u == v:
                nl += 1
                if not drop_loops:
                    counts[t, u >> shift] += 1  # a self loop is one arc, also when symmetrizing
                continue
            counts[t, u >> shift] += 1
            if both:
                counts[t, v >> shift] += 1
        loops[t] = nl
    return counts, loops


@numba.njit(cache=True, parallel=True)
def _bucket_scatter(src, dst, shift, pos, keys, both, drop_loops, nchunks):
    """keys[...] = (source - bucket base) << 32 | target, grouped by bucket."""
    m = src.shape[0]
    mask = (np.int64(1) << shift) - 1
    for t in prange(nchunks):
        lo = m * t // nchunks
        hi = m * (t + 1) // nchunks
        for e in range(lo, hi):
            u = np.int64(src[e])
            v = np.int64(dst[e])
            if u == v and drop_loops:
                continue
            b = u >> shift
            keys[pos[t, b]] = ((u & mask) << 32) | v
            pos[t, b] += 1
            if both and u != v:
                b = v >> shift
                keys[pos[t, b]] = ((v & mask) << 32) | u
                pos[t, b] += 1


_RADIX_BITS = 11  # 2048 counters per digit: a digit's histogram fits in L1


@numba.njit(cache=True)
def _radix_sort(keys, s, e, vbits, ubits):
    """Sort keys[s:e] (non-negative int64, (local source) << 32 | target) in place: LSD radix,
    11-bit digits over the target's vbits and the local source's ubits. One histogram pass for
    all digits; digits on which every key agrees are skipped."""
    nd_v = (vbits + _RADIX_BITS - 1) // _RADIX_BITS
    nd_u = (ubits + _RADIX_BITS - 1) // _RADIX_BITS
    nd = nd_v + nd_u
    shifts = np.empty(nd, np.int64)
    for d in range(nd_v):
        shifts[d] = d * _RADIX_BITS
    for d in range(nd_u):
        shifts[nd_v + d] = 32 + d * _RADIX_BITS
    radix = 1 << _RADIX_BITS
    dmask = radix - 1
    hist = np.zeros((nd, radix), np.int64)
    for i in range(s, e):
        k = keys[i]
        for d in range(nd):
            hist[d, (k >> shifts[d]) & dmask] += 1
    view = keys[s:e]
    tmp = np.empty(e - s, np.int64)
    in_tmp = False  # which buffer holds the keys after the passes so far
    for d in range(nd):
        h = hist[d]
        if h[(view[0] >> shifts[d]) & dmask] == e - s:
            continue  # every key has this digit
        p = 0
        for j in range(radix):
            c = h[j]
            h[j] = p
            p += c
        if in_tmp:
            _radix_pass(tmp, view, h, shifts[d], dmask)
        else:
            _radix_pass(view, tmp, h, shifts[d], dmask)
        in_tmp = not in_tmp
    if in_tmp:
        view[:] = tmp


@numba.njit(cache=True)
def _radix_pass(src, dst, start, sh, dmask):
    for i in range(src.shape[0]):
        k = src[i]
        j = (k >> sh) & dmask
        dst[start[j]] = k
        start[j] += 1


@numba.njit(cache=True, parallel=True)
def _bucket_rows(keys, bstart, shift, n, merge, vbits, adj, deg, kept):
    """Pass 2, one bucket per task: sort the bucket's keys, i.e. by (source, target), then one
    pass writes the targets to adj from bstart[b] on (skipping repeats with merge) and counts
    each row's arcs in deg. Returns (duplicate arcs, duplicate self-loop arcs) removed."""
    nb = bstart.shape[0] - 1
    removed = np.zeros(nb, np.int64)  # per bucket: numba's scalar reductions trip on this loop
    removed_loops = np.zeros(nb, np.int64)
    for b in prange(nb):
        v0 = b << shift
        s = bstart[b]
        e = bstart[b + 1]
        if e - s < 256:
            keys[s:e].sort()  # a small bucket sorts faster than it clears 2048-bin histograms
        else:
            _radix_sort(keys, s, e, vbits, shift)
        w = s
        prev = -1
        r = 0
        rl = 0
        for i in range(s, e):
            k = keys[i]
            u = v0 + (k >> 32)
            v = k & 0xFFFFFFFF
            if merge and k == prev:
                r += 1
                if u == v:
                    rl += 1
                continue
            prev = k
            adj[w] = v
            w += 1
            deg[u] += 1
        kept[b] = w - s
        removed[b] = r
        removed_loops[b] = rl
    return removed.sum(), removed_loops.sum()


@numba.njit(cache=True, parallel=True)
def _compact_buckets(adj, bstart, kept, newstart):
    out = np.empty(newstart[-1], np.int32)
    for b in prange(bstart.shape[0] - 1):
        s = bstart[b]
        k = newstart[b]
        for i in range(kept[b]):
            out[k + i] = adj[s + i]
    return out


def _as_id_array(a, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise GraphError(f"{what} must be a 1-D array of vertex ids, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise GraphError(f"{what} must hold integer vertex ids, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.max() > np.iinfo(np.int64).max:
        pos = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise GraphError(f"{what}[{pos}] = {arr[pos]} is too large for a vertex id")
    return arr


def _check_ids(arr: np.ndarray, n: int | None, what: str) -> None:
    """Raise GraphError naming the first id < 0 (or >= n) and its position in `arr`."""
    if arr.size == 0:
        return
    if arr.min() < 0:
        pos = int(np.argmax(arr < 0))
        raise GraphError(f"{what}[{pos}] = {int(arr[pos])}: vertex ids must be >= 0")
    if n is not None and arr.max() >= n:
        pos = int(np.argmax(arr >= n))
        raise GraphError(f"{what}[{pos}] = {int(arr[pos])} is out of range: num_vertices={n}, "
                         f"so ids must be in 0..{n - 1}")


@numba.njit(cache=True, parallel=True)
def _mark_and_rank(src, dst, hi):
    """(sorted distinct ids, src and dst as ranks among them); linear in m + hi."""
    present = np.zeros(hi + 1, np.bool_)
    for e in prange(src.shape[0]):  # racing threads all store True: harmless
        present[src[e]] = True
        present[dst[e]] = True
    rank = np.empty(hi + 1, np.int32)  # int32 halves the table the random reads below miss in
    k = 0
    for x in range(hi + 1):
        rank[x] = k
        k += present[x]
    ids = np.empty(k, np.int64)
    for x in range(hi + 1):
        if present[x]:
            ids[rank[x]] = x
    s = np.empty(src.shape[0], np.int32)
    d = np.empty(src.shape[0], np.int32)
    for e in prange(src.shape[0]):
        s[e] = rank[src[e]]
        d[e] = rank[dst[e]]
    return ids, s, d


def _remap(src: np.ndarray, dst: np.ndarray):
    """(ids, src', dst'): ids = sorted distinct original ids (None if they are already 0..n-1)."""
    if src.size == 0:
        return None, src, dst
    hi = int(max(src.max(), dst.max()))
    if hi < 4 * src.size + (1 << 20) and hi < 2**31:
        # Dense-ish id space: mark-and-rank is linear, np.unique would sort 2m ids.
        ids, s, d = _mark_and_rank(src, dst, hi)
        return (None, src, dst) if ids.size == hi + 1 else (ids, s, d)
    ids = np.unique(np.concatenate([src, dst])).astype(np.int64)
    return ids, np.searchsorted(ids, src), np.searchsorted(ids, dst)


def _csr(src, dst, n, both, drop_loops, merge, bar):
    """Counting-sort CSR of int32 (src, dst); `both` adds each non-loop arc in both directions.
    Returns (offsets, indices, self_loop_entries, removed_arcs, removed_loop_arcs)."""
    m = src.shape[0]
    if n == 0:
        return np.zeros(1, np.int64), np.empty(0, np.int32), 0, 0, 0
    shift = max(0, int(n - 1).bit_length() - _MAX_BUCKETS_LOG2)
    nb = ((n - 1) >> shift) + 1
    # One chunk per thread; one chunk for small inputs, where thread start-up would dominate.
    nchunks = numba.get_num_threads() if m >= (1 << 16) else 1
    bar.set_postfix_str("count", refresh=False)
    counts, loops = _bucket_counts(src, dst, shift, nb, both, drop_loops, nchunks)
    bstart = np.zeros(nb + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=bstart[1:])
    pos = bstart[:-1] + np.cumsum(counts, axis=0) - counts  # chunk t's first slot per bucket
    bar.update(1)
    bar.set_postfix_str("bucket", refresh=False)
    keys = np.empty(bstart[-1], np.int64)
    _bucket_scatter(src, dst, shift, pos, keys, both, drop_loops, nchunks)
    bar.update(1)
    bar.set_postfix_str("sort rows", refresh=False)
    adj = np.empty(bstart[-1], np.int32)
    deg = np.zeros(n, np.int64)
    kept = np.empty(nb, np.int64)
    vbits = max(1, int(n - 1).bit_length())
    removed, removed_loops = _bucket_rows(keys, bstart, shift, n, merge, vbits, adj, deg, kept)
    del keys
    bar.update(1)
    offsets = np.empty(n + 1, np.int64)
    offsets[0] = 0
    np.cumsum(deg, out=offsets[1:])
    if removed:
        bar.set_postfix_str("merge", refresh=False)
        newstart = np.zeros(nb + 1, np.int64)
        np.cumsum(kept, out=newstart[1:])
        adj = _compact_buckets(adj, bstart, kept, newstart)
    bar.update(1)
    return offsets, adj, int(loops.sum()), int(removed), int(removed_loops)


_BUILD_STEPS = 4


def _build(src, dst, n, *, directed, symmetrize, drop_self_loops, merge_multi_edges, name,
           ids=None, notes=None, bar=None) -> CSRGraph:
    """CSRGraph from validated int32 arrays with ids in [0, n)."""
    bar = bar or _NoBar()
    out_notes = dict(notes or {})
    out_notes["input_edges"] = int(src.shape[0])
    if directed and symmetrize and merge_multi_edges:
        # Two passes so the notes can tell the input's own duplicate arcs from the reverse arcs
        # that symmetrizing added (a mutual pair u->v, v->u is not a duplicate of the input).
        off1, adj1, loops, removed, _ = _csr(src, dst, n, False, drop_self_loops, True, _NoBar())
        s2 = np.repeat(np.arange(n, dtype=np.int32), np.diff(off1))
        offsets, indices, _, _, _ = _csr(s2, adj1, n, True, False, True, bar)
        out_notes.update(self_loops_dropped=loops if drop_self_loops else 0,
                         multi_edges_merged=removed, symmetrized=True,
                         reverse_arcs_added=int(indices.shape[0] - adj1.shape[0]))
        return CSRGraph(offsets, indices, False, name, ids, out_notes)

    both = (not directed) or symmetrize
    offsets, indices, loops, removed, removed_loops = _csr(src, dst, n, both, drop_self_loops,
                                                           merge_multi_edges, bar)
    out_notes["self_loops_dropped"] = loops if drop_self_loops else 0
    if not both:
        out_notes["multi_edges_merged"] = removed
    else:
        # Every repeated undirected edge {u,v} removed one arc from each of u's and v's rows.
        out_notes["multi_edges_merged"] = (removed - removed_loops) // 2 + removed_loops
        if directed:  # symmetrize without merging: every non-loop arc got its reverse
            out_notes.update(symmetrized=True,
                             reverse_arcs_added=int(src.shape[0] - loops))
    return CSRGraph(offsets, indices, bool(directed and not symmetrize), name, ids, out_notes)


def from_edges(src, dst, num_vertices: int | None = None, directed: bool = True,
               symmetrize: bool = False, drop_self_loops: bool = True,
               merge_multi_edges: bool = True, name: str = "edges", *, remap: bool = False,
               progress: bool | None = None) -> CSRGraph:
    """Build a CSRGraph from integer source/target arrays (edge i is src[i] -> dst[i]).

    num_vertices: n; ids must be in 0..n-1 (GraphError names the offending id and its position).
        None: n = largest id + 1 (gaps are isolated vertices), or the number of distinct ids
        with remap=True.
    directed: False reads each pair as an undirected edge and stores it as two arcs.
    symmetrize: for a directed input, add every arc's reverse; the result is undirected.
        Without merge_multi_edges a mutual pair u->v, v->u then becomes two parallel edges.
    drop_self_loops, merge_multi_edges: what to do with u->u and repeated arcs (counts in notes;
        for an undirected result a repeated edge counts once, whichever way round it was given).
    remap: map arbitrary non-negative ids to 0..n-1 in increasing id order and keep the original
        ids in `graph.ids` (None if they were already 0..n-1). Incompatible with num_vertices.
    Every adjacency list is sorted, so the result does not depend on the input's edge order.
    """
    s = _as_id_array(src, "src")
    d = _as_id_array(dst, "dst")
    if s.shape != d.shape:
        raise GraphError(f"src and dst must have the same length, got {s.size} and {d.size}")
    if num_vertices is not None:
        num_vertices = int(num_vertices)
        if num_vertices < 0:
            raise GraphError(f"num_vertices must be >= 0, got {num_vertices}")
        if remap:
            raise GraphError("remap=True chooses n itself; do not pass num_vertices with it")
    _check_ids(s, num_vertices, "src")
    _check_ids(d, num_vertices, "dst")
    ids = None
    if remap:
        ids, s, d = _remap(s, d)
        n = int(ids.size) if ids is not None else (int(max(s.max(), d.max())) + 1 if s.size else 0)
    elif num_vertices is not None:
        n = num_vertices
    else:
        n = int(max(s.max(), d.max())) + 1 if s.size else 0
    if n >= 2**31:
        raise GraphError(f"{n} vertices do not fit the int32 CSR indices (at most 2**31 - 1)")
    s = np.ascontiguousarray(s, dtype=np.int32)
    d = np.ascontiguousarray(d, dtype=np.int32)
    with _bar_for(s.size, f"CSR {name}", progress) as bar:
        g = _build(s, d, n, directed=directed, symmetrize=symmetrize,
                   drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                   name=name, ids=ids, bar=bar)
    if remap:
        g.notes["ids_remapped"] = ids is not None
    return g


class _bar_for:
    """Context manager: a build bar sized in builder steps (hidden unless it takes > 1 s)."""

    def __init__(self, m, desc, progress):
        self.bar = _bar(_BUILD_STEPS, desc, progress) if (
            progress or (progress is None and m >= 1 << 22)) else _NoBar()

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        self.bar.close()


# ============================================================================================
# networkx / scipy


def from_networkx(G, name: str | None = None, drop_self_loops: bool = True,
                  merge_multi_edges: bool = True) -> CSRGraph:
    """CSRGraph of a networkx (Multi)(Di)Graph; undirected graphs become two arcs per edge.

    Integer node labels are remapped to 0..n-1 in increasing order with the labels kept in
    `ids` (None if they are already 0..n-1); other labels are numbered in G's node order and
    kept as a list in notes['labels']."""
    nodes = list(G.nodes)
    notes: dict = {"source": "networkx"}
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in nodes):
        labels = np.array(sorted(int(x) for x in nodes), dtype=np.int64)
        ids = None if np.array_equal(labels, np.arange(labels.size)) else labels
        index = {int(x): i for i, x in enumerate(labels.tolist())}
    else:
        ids = None
        index = {x: i for i, x in enumerate(nodes)}
        notes["labels"] = nodes
    m = G.number_of_edges()
    src = np.fromiter((index[u] for u, _ in G.edges()), dtype=np.int32, count=m)
    dst = np.fromiter((index[v] for _, v in G.edges()), dtype=np.int32, count=m)
    g = _build(src, dst, len(nodes), directed=G.is_directed(), symmetrize=False,
               drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
               name=name or (str(G.name) if getattr(G, "name", "") else "networkx"),
               ids=ids, notes=notes)
    return g


def from_scipy(matrix, directed: bool | None = None, name: str = "scipy",
               drop_self_loops: bool = True, merge_multi_edges: bool = True) -> CSRGraph:
    """CSRGraph of a square scipy.sparse matrix/array: every stored entry (i, j) is an arc i -> j,
    values ignored (explicit zeros count as arcs: the pattern is the graph).

    directed=None: undirected when the pattern is symmetric, else directed. directed=False on a
    non-symmetric pattern symmetrizes it."""
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise GraphError(f"from_scipy needs a scipy.sparse matrix, got {type(matrix).__name__}")
    coo = sp.coo_array(matrix)
    if coo.shape[0] != coo.shape[1]:
        raise GraphError(f"adjacency matrix must be square, got shape {coo.shape}")
    n = coo.shape[0]
    row = coo.row.astype(np.int32)
    col = coo.col.astype(np.int32)
    symmetric = _pattern_symmetric(row, col, n)
    if directed is None:
        directed = not symmetric
    notes = {"source": "scipy.sparse"}
    if not directed and symmetric:
        # Each undirected edge is stored twice; read each once so the notes count real repeats.
        keep = row <= col
        row, col = row[keep], col[keep]
    return _build(row, col, n, directed=directed, symmetrize=False,
                  drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                  name=name, notes=notes)


def _pattern_symmetric(row, col, n) -> bool:
    if row.size == 0:
        return True
    off, adj, *_ = _csr(row, col, n, False, False, True, _NoBar())
    offt, adjt, *_ = _csr(col, row, n, False, False, True, _NoBar())
    return bool(np.array_equal(off, offt) and np.array_equal(adj, adjt))


# ============================================================================================
# Text parsing (Numba)

_ERR_CHAR = 1  # a character that cannot be part of an integer
_ERR_BIG = 2  # an integer that does not fit int64 comfortably


@numba.njit(cache=True)
def _tokenize(buf, comment, max_tokens, keep_empty):
    """Integers of a text, line by line.

    Lines whose first non-blank byte is `comment` are skipped (a comment may also end a line);
    empty lines are kept only with keep_empty (METIS: a vertex without neighbours). After
    max_tokens integers (>0) the rest of the line is ignored unread (SNAP's extra columns).
    Returns (values, line_start[k+1], line_no[k], err, err_line, err_byte): line i's values are
    values[line_start[i]:line_start[i+1]]; line numbers are 1-based.
    """
    nb = buf.shape[0]
    nlines = 1
    for i in range(nb):
        if buf[i] == 10:
            nlines += 1
    values = np.empty(nb // 2 + 1, np.int64)
    line_start = np.empty(nlines + 1, np.int64)
    line_no = np.empty(nlines, np.int64)
    nv = 0
    nl = 0
    i = 0
    lineno = 0
    limit = np.int64(1) << 58
    while i < nb:
        lineno += 1
        first = nv
        ntok = 0
        is_comment = False
        # skip leading blanks
        while i < nb and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13 or buf[i] == 11
                          or buf[i] == 12):
            i += 1
        if i < nb and buf[i] == comment:
            is_comment = True
        while i < nb and buf[i] != 10:
            c = buf[i]
            if c == 32 or c == 9 or c == 13 or c == 11 or c == 12:
                i += 1
                continue
            if is_comment or c == comment or (max_tokens > 0 and ntok >= max_tokens):
                while i < nb and buf[i] != 10:
                    i += 1
                break
            neg = False
            if c == 45 or c == 43:  # '-' '+'
                neg = c == 45
                i += 1
            start = i
            x = np.int64(0)
            while i < nb and 48 <= buf[i] <= 57:
                x = x * 10 + (buf[i] - 48)
                if x > limit:
                    return values[:nv], line_start[:nl + 1], line_no[:nl], _ERR_BIG, lineno, start
                i += 1
            if i == start or (i < nb and not (buf[i] == 32 or buf[i] == 9 or buf[i] == 13
                                               or buf[i] == 11 or buf[i] == 12 or buf[i] == 10
                                               or buf[i] == comment)):
                return values[:nv], line_start[:nl + 1], line_no[:nl], _ERR_CHAR, lineno, i
            values[nv] = -x if neg else x
            nv += 1
            ntok += 1
        if not is_comment and (ntok > 0 or keep_empty):
            line_start[nl] = first
            line_no[nl] = lineno
            nl += 1
        i += 1  # the newline
    line_start[nl] = nv
    return values[:nv], line_start[:nl + 1], line_no[:nl], 0, 0, 0


def _line_text(buf: bytes, pos: int) -> str:
    lo = buf.rfind(b"\n", 0, pos) + 1
    hi = buf.find(b"\n", pos)
    line = buf[lo:hi if hi >= 0 else len(buf)].decode("utf-8", "replace").rstrip("\r")
    return line if len(line) <= 80 else line[:77] + "..."


def _tokens(data: bytes, path: Path, comment: str, max_tokens: int, keep_empty: bool, what: str):
    buf = np.frombuffer(data, dtype=np.uint8)
    values, starts, line_no, err, err_line, err_pos = _tokenize(buf, ord(comment), max_tokens,
                                                                 keep_empty)
    if err:
        if err == _ERR_BIG:
            reason = "integer too large"
        elif err_pos > 0 and data[err_pos - 1] in b"+-" and (
                err_pos == len(data) or not data[err_pos:err_pos + 1].isdigit()):
            reason = "a sign without digits"
        else:
            reason = f"unexpected character {chr(data[err_pos])!r}"
        raise GraphError(f"{path}: line {err_line}: malformed {what} "
                         f"{_line_text(data, err_pos)!r}: {reason}")
    return values, starts, line_no


# ============================================================================================
# File loaders


def _read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise GraphError(f"{path}: no such file")
    if path.is_dir():
        raise GraphError(f"{path}: is a directory, not a graph file")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as e:
        raise GraphError(f"{path}: cannot read: {e}") from e
    if not data or data.isspace():  # isspace stops at the first other byte; strip copies it all
        raise GraphError(f"{path}: empty file")
    return data


def _file_key(path: Path, fmt: str, options: dict) -> dict:
    st = path.stat()
    return {"file": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "format": fmt, "options": options}


def _cached_file(path, fmt: str, options: dict, build: Callable[[Path], CSRGraph],
                 name: str | None, cache: bool | None) -> CSRGraph:
    path = Path(path)
    if not path.exists():
        raise GraphError(f"{path}: no such file")
    cpath = None
    if cache is not False:
        cpath = _cache_path(f"file-{_slug(path.name)}", _file_key(path, fmt, options))
        g = _cache_load(cpath)
        if g is not None:
            if name:
                g.name = name
            return g
    g = build(path)
    if cpath is not None and (cache or g.num_arcs >= _AUTO_CACHE_ARCS):
        _cache_store(cpath, g)
    if name:
        g.name = name
    return g


def _stem(path: Path) -> str:
    name = path.name
    for ext in (".gz", ".txt", ".el", ".edges", ".mtx", ".graph", ".metis"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


def load_snap(path, directed: bool = True, symmetrize: bool = False,
              drop_self_loops: bool = True, merge_multi_edges: bool = True, remap: bool = True,
              name: str | None = None, cache: bool | None = None,
              progress: bool | None = None) -> CSRGraph:
    """Load a SNAP edge list (.txt, .txt.gz, .el, .edges): `#` comment lines, one
    whitespace-separated `from to` per line, further columns ignored.

    SNAP files do not say whether they are directed: pass directed=False for an undirected file
    (each edge once or both ways round) or symmetrize=True to make a directed one undirected.
    remap=True (default): arbitrary non-contiguous ids become 0..n-1 in increasing id order and
    the original ids are kept in `graph.ids`; remap=False keeps the id space (gaps become
    isolated vertices). Malformed lines raise GraphError naming the file and the 1-based line.
    cache: None stores the parsed CSR on disk when it has over 2**20 arcs, True always,
    False neither reads nor writes the cache.
    """
    path = Path(path)
    options = dict(directed=directed, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                   merge_multi_edges=merge_multi_edges, remap=remap)

    def build(p: Path) -> CSRGraph:
        data = _read_bytes(p)
        values, starts, line_no = _tokens(data, p, "#", 2, False, "edge line")
        if line_no.size == 0:
            raise GraphError(f"{p}: no edges (only comments or blank lines)")
        counts = np.diff(starts)
        if (counts < 2).any():
            k = int(np.argmax(counts < 2))
            raise GraphError(f"{p}: line {int(line_no[k])}: malformed edge line "
                             f"{_nth_line(data, int(line_no[k]))!r}: expected 'from to'")
        src = values[starts[:-1]]
        dst = values[starts[:-1] + 1]
        for arr in (src, dst):
            if arr.min() < 0:
                k = int(np.argmax(arr < 0))
                line = int(line_no[k])
                raise GraphError(f"{p}: line {line}: vertex id {int(arr[k])} is out of range "
                                 f"(ids must be >= 0) in {_nth_line(data, line)!r}")
        ids = None
        if remap:
            ids, src, dst = _remap(src, dst)
        n = int(ids.size) if ids is not None else int(max(src.max(), dst.max())) + 1
        if n >= 2**31:
            raise GraphError(f"{p}: {n} vertices do not fit int32 CSR indices; try remap=True")
        src = np.ascontiguousarray(src, dtype=np.int32)
        dst = np.ascontiguousarray(dst, dtype=np.int32)
        notes = {"source": f"SNAP edge list {p.name}", "ids_remapped": ids is not None}
        with _bar_for(src.size, f"CSR {p.name}", progress) as bar:
            return _build(src, dst, n, directed=directed, symmetrize=symmetrize,
                          drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                          name=_stem(p), ids=ids, notes=notes, bar=bar)

    return _cached_file(path, "snap", options, build, name, cache)


def _nth_line(data: bytes, lineno: int) -> str:
    pos = 0
    for _ in range(lineno - 1):
        pos = data.find(b"\n", pos) + 1
    return _line_text(data, pos)


def load_matrix_market(path, directed: bool | None = None, symmetrize: bool = False,
                       drop_self_loops: bool = True, merge_multi_edges: bool = True,
                       name: str | None = None, cache: bool | None = None,
                       progress: bool | None = None) -> CSRGraph:
    """Load a Matrix Market coordinate file (.mtx, .mtx.gz) with scipy.io.mmread: entry (i, j)
    is the arc i -> j (1-based in the file, 0-based here); values (weights) are ignored.

    directed=None follows the header: symmetric / skew-symmetric / hermitian -> undirected graph
    with both arcs of each stored edge, general -> directed. scipy's errors become GraphError
    naming the file.
    """
    path = Path(path)
    options = dict(directed=directed, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                   merge_multi_edges=merge_multi_edges)

    def build(p: Path) -> CSRGraph:
        import scipy.io

        data = _read_bytes(p)
        try:
            rows, cols, _, fmt, fld, symmetry = scipy.io.mminfo(io.BytesIO(data))
            if fmt != "coordinate":
                raise GraphError(f"{p}: Matrix Market '{fmt}' (dense) format is not a graph; "
                                 "expected 'coordinate'")
            m = scipy.io.mmread(io.BytesIO(data))
        except GraphError:
            raise
        except Exception as e:  # scipy raises ValueError, IndexError, RuntimeError, ...
            raise GraphError(f"{p}: not a readable Matrix Market file: {e}") from e
        if rows != cols:
            raise GraphError(f"{p}: matrix is {rows} x {cols}; an adjacency matrix must be square")
        import scipy.sparse as sp

        coo = sp.coo_array(m)
        row = coo.row.astype(np.int64)
        col = coo.col.astype(np.int64)
        sym = symmetry != "general"
        if sym:
            # mmread mirrored the stored triangle; read each stored entry once.
            keep = row >= col
            row, col = row[keep], col[keep]
        undirected = sym if directed is None else not directed
        notes = {"source": f"Matrix Market {p.name} ({fld} {symmetry})"}
        with _bar_for(row.size, f"CSR {p.name}", progress) as bar:
            return _build(row.astype(np.int32), col.astype(np.int32), int(rows),
                          directed=not undirected, symmetrize=symmetrize and not undirected,
                          drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                          name=_stem(p), notes=notes, bar=bar)

    return _cached_file(path, "mtx", options, build, name, cache)


@numba.njit(cache=True)
def _metis_arcs(values, starts, skip, step, n):
    """Arcs of METIS vertex lines 0..n-1; returns (src, dst, bad_line_index or -1, bad_value)."""
    total = 0
    for v in range(n):
        k = starts[v + 1] - starts[v] - skip
        if k < 0 or k % step != 0:
            return np.empty(0, np.int32), np.empty(0, np.int32), v, np.int64(-1)
        total += k // step
    src = np.empty(total, np.int32)
    dst = np.empty(total, np.int32)
    e = 0
    for v in range(n):
        for k in range(starts[v] + skip, starts[v + 1], step):
            u = values[k]
            if u < 1 or u > n:
                return src, dst, v, u
            src[e] = v
            dst[e] = u - 1
            e += 1
    return src, dst, -1, np.int64(0)


def load_metis(path, drop_self_loops: bool = True, merge_multi_edges: bool = True,
               name: str | None = None, cache: bool | None = None,
               progress: bool | None = None) -> CSRGraph:
    """Load a METIS/Chaco .graph file: `%` comments, header `n m [fmt [ncon]]`, then line v (1..n)
    lists v's 1-based neighbours. fmt 0, 1 (edge weights), 10 (ncon vertex weights), 11, and the
    vertex-size variants 100/101/110/111 are read; weights and sizes are skipped. Undirected: the
    lists are symmetrized, and notes['reverse_arcs_added'] says how many arcs a non-symmetric
    file lacked (0 for a correct file).
    """
    path = Path(path)
    options = dict(drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges)

    def build(p: Path) -> CSRGraph:
        data = _read_bytes(p)
        values, starts, line_no = _tokens(data, p, "%", 0, True, "line")
        counts = np.diff(starts)
        nonempty = np.flatnonzero(counts > 0)
        if nonempty.size == 0:
            raise GraphError(f"{p}: no header line 'n m [fmt]'")
        h = int(nonempty[0])
        header = values[starts[h]:starts[h + 1]].tolist()
        hline = int(line_no[h])
        if not 2 <= len(header) <= 4 or min(header) < 0:
            raise GraphError(f"{p}: line {hline}: header must be 'n m [fmt [ncon]]' with "
                             f"non-negative integers, got {header}")
        n, m = header[0], header[1]
        fmt = header[2] if len(header) > 2 else 0
        digits = f"{fmt:03d}"
        if fmt > 111 or any(c not in "01" for c in digits):
            raise GraphError(f"{p}: line {hline}: unsupported METIS fmt {fmt} "
                             "(expected 0, 1, 10, 11, 100, 101, 110 or 111)")
        has_size, has_vwgt, has_ewgt = (c == "1" for c in digits)
        ncon = header[3] if len(header) > 3 else 1
        skip = int(has_size) + (ncon if has_vwgt else 0)
        step = 2 if has_ewgt else 1
        body_starts = starts[h + 1:]
        body_lines = line_no[h + 1:]
        nlines = body_lines.size
        if nlines < n:
            raise GraphError(f"{p}: header says {n} vertices but only {nlines} vertex lines follow "
                             f"(last line {int(line_no[-1])})")
        if nlines > n and counts[h + 1 + n:].any():
            k = h + 1 + n + int(np.argmax(counts[h + 1 + n:] > 0))
            raise GraphError(f"{p}: line {int(line_no[k])}: more vertex lines than the {n} "
                             "vertices the header declares")
        src, dst, bad, val = _metis_arcs(values, body_starts, skip, step, n)
        if bad >= 0:
            line = int(body_lines[bad])
            if val < 0:
                raise GraphError(f"{p}: line {line}: vertex {bad + 1} has a malformed entry list "
                                 f"for fmt {fmt} (ncon={ncon}): {_nth_line(data, line)!r}")
            raise GraphError(f"{p}: line {line}: neighbour id {int(val)} of vertex {bad + 1} is "
                             f"out of range: ids must be in 1..{n}")
        if src.size != 2 * m:
            raise GraphError(f"{p}: header says {m} edges, so the lists should hold {2 * m} "
                             f"entries, but they hold {src.size}")
        notes = {"source": f"METIS {p.name} (fmt {fmt})"}
        with _bar_for(src.size, f"CSR {p.name}", progress) as bar:
            return _build(src, dst, int(n), directed=True, symmetrize=True,
                          drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                          name=_stem(p), notes=notes, bar=bar)

    return _cached_file(path, "metis", options, build, name, cache)


_LOADERS = {
    ".txt": load_snap, ".el": load_snap, ".edges": load_snap,
    ".mtx": load_matrix_market,
    ".graph": load_metis, ".metis": load_metis,
}


def load_graph(path, **opts) -> CSRGraph:
    """Load a graph file, choosing the reader by extension (an extra .gz is allowed):
    .txt/.el/.edges -> load_snap, .mtx -> load_matrix_market, .graph/.metis -> load_metis.
    `opts` go to that reader."""
    p = Path(path)
    name = p.name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    ext = os.path.splitext(base)[1]
    loader = _LOADERS.get(ext)
    if loader is None:
        raise GraphError(f"{p}: unknown graph file extension {ext or '(none)'!r}; expected one of "
                         f"{', '.join(sorted(_LOADERS))} (optionally .gz)")
    return loader(p, **opts)


# ============================================================================================
# Sample graphs

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "sample_graphs"


class SampleGraph(NamedTuple):
    file: str
    directed: bool  # the graph's natural reading; pass directed=/symmetrize= to override
    family: str
    origin: str


#: The graphs in sample_graphs/ and how each is naturally read (see sample_graphs/README.md).
SAMPLE_GRAPHS: dict[str, SampleGraph] = {
    "bfs4k_fig2": SampleGraph("bfs4k_fig2.txt", False, "teaching graph (BFS-4K Fig. 2)",
                              "hand-drawn for this project"),
    "facebook_combined": SampleGraph("facebook_combined.txt.gz", False,
                                     "social (SNAP ego-Facebook)", "SNAP"),
    "Wiki-Vote": SampleGraph("Wiki-Vote.txt.gz", True, "social voting (SNAP)", "SNAP"),
    "p2p-Gnutella31": SampleGraph("p2p-Gnutella31.txt.gz", True, "peer-to-peer (SNAP)", "SNAP"),
    "3elt": SampleGraph("3elt.mtx.gz", False, "2-D finite-element mesh (Walshaw)",
                        "SuiteSparse DIMACS10"),
    "delaunay_n16": SampleGraph("delaunay_n16.mtx.gz", False, "triangulation mesh (DIMACS10)",
                                "SuiteSparse DIMACS10"),
    "luxembourg_osm": SampleGraph("luxembourg_osm.mtx.gz", False,
                                  "road network (DIMACS10, OpenStreetMap)", "SuiteSparse DIMACS10"),
}


def _sample_key(name: str) -> str:
    if name in SAMPLE_GRAPHS:
        return name
    for key, info in SAMPLE_GRAPHS.items():
        if name.lower() in (key.lower(), info.file.lower()):
            return key
    raise GraphError(f"unknown sample graph {name!r}; available: {', '.join(SAMPLE_GRAPHS)}")


def sample_graph_path(name: str) -> Path:
    return SAMPLES_DIR / SAMPLE_GRAPHS[_sample_key(name)].file


def sample_graph(name: str, **opts) -> CSRGraph:
    """Load a graph of sample_graphs/ by name (a SAMPLE_GRAPHS key or its file name), read the
    way SAMPLE_GRAPHS says (directedness); `opts` override that and go to the loader."""
    key = _sample_key(name)
    opts = {"directed": SAMPLE_GRAPHS[key].directed, "name": key, **opts}
    return load_graph(SAMPLES_DIR / SAMPLE_GRAPHS[key].file, **opts)


# ============================================================================================
# On-disk cache

# cache=None stores graphs from this size on; smaller ones rebuild in a blink and would only
# litter the cache folder.
_AUTO_CACHE_ARCS = 1 << 20
# Any edit of this module invalidates old cache entries: the builder or a generator may have
# changed, and a stale graph would silently disagree with the code that claims to make it.
_CODE_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_savez = np.savez  # module attribute so tests can simulate an interrupted write


def cache_dir() -> Path:
    """$BFS4K_CACHE_DIR, else ~/.cache/bfs4k."""
    d = os.environ.get("BFS4K_CACHE_DIR")
    return Path(d).expanduser() if d else Path.home() / ".cache" / "bfs4k"


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)[:40]


def _cache_path(prefix: str, key: dict) -> Path:
    """<prefix>-<hash of the key>-<code version>.npz: the code version is in the name, so
    storing can drop the same key's entries from older code (they would never be read)."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    return cache_dir() / f"{prefix}-{digest[:20]}-{_CODE_VERSION}.npz"


def _cache_load(path: Path) -> CSRGraph | None:
    """The cached graph, or None when absent, from other code, or unreadable (then rebuilt)."""
    if not path.exists():
        return None
    try:
        arrays = _read_npz(path)
        meta = json.loads(str(arrays["meta"][()]))
        offsets = arrays["offsets"]
        indices = arrays["indices"]
        ids = arrays.get("ids")
        n = offsets.size - 1
        ok = (meta.get("code") == _CODE_VERSION and offsets.dtype == np.int64
              and indices.dtype == np.int32 and n >= 0 and offsets[0] == 0
              and offsets[-1] == indices.size and (ids is None or ids.size == n)
              and (indices.size == 0 or (indices.min() >= 0 and indices.max() < n)))
        if not ok:
            return None
        return CSRGraph(offsets, indices, bool(meta["directed"]), meta["name"], ids,
                        meta["notes"])
    except Exception:  # truncated, corrupt or foreign file: rebuild rather than fail
        return None


def _read_npz(path: Path) -> dict:
    """The arrays of an uncompressed .npz (what np.savez writes), read straight from their
    offsets: np.load streams every member through zipfile's CRC check, which alone took half a
    second on a scale-22 Kronecker graph. Anything unexpected falls back to np.load."""
    out = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        for info in zf.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if info.compress_type != zipfile.ZIP_STORED:
                with np.load(path, allow_pickle=False) as z:
                    return {k: z[k] for k in z.files}
            f.seek(info.header_offset)
            local = f.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError(f"{path}: bad zip member header for {info.filename}")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            f.seek(info.header_offset + 30 + name_len + extra_len)
            version = np.lib.format.read_magic(f)
            shape, fortran, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                                     else np.lib.format.read_array_header_2_0(f))
            if dtype.hasobject or fortran:
                raise ValueError(f"{path}: unexpected array layout in {info.filename}")
            count = int(np.prod(shape))
            arr = np.fromfile(f, dtype=dtype, count=count)
            if arr.size != count:
                raise ValueError(f"{path}: {info.filename} is truncated")
            out[name] = arr.reshape(shape)
    return out


def _cache_store(path: Path, graph: CSRGraph) -> None:
    """Write atomically: a temp file in the same folder, then os.replace, so an interrupted
    write leaves the old entry or nothing, never half a file under the final name."""
    meta = {"code": _CODE_VERSION, "directed": graph.directed, "name": graph.name,
            "notes": graph.notes}
    arrays = {"offsets": graph.offsets, "indices": graph.indices,
              "meta": np.array(json.dumps(meta, default=str))}
    if graph.ids is not None:
        arrays["ids"] = graph.ids
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            _savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        stem = path.name[: -len(_CODE_VERSION) - 4]  # "<prefix>-<key hash>-"
        for old in path.parent.glob(f"{stem}*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as e:  # a read-only or full disk must not stop the caller from getting its graph
        warnings.warn(f"could not write graph cache {path}: {e}", RuntimeWarning, stacklevel=3)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# ============================================================================================
# Generators

class GeneratorSpec(NamedTuple):
    """GENERATORS entry: function(**params), {param: default}, one-line description."""

    function: Callable[..., CSRGraph]
    params: dict
    description: str


#: kind -> GeneratorSpec(function, {param: default}, description); a notebook builds widgets
#: from the defaults' types. Every function also takes cache= and progress= (not listed).
GENERATORS: dict[str, GeneratorSpec] = {}


def _generator(kind: str, description: str):
    def deco(fn):
        sig = inspect.signature(fn)
        params = {k: p.default for k, p in sig.parameters.items() if k != "progress"}

        @functools.wraps(fn)
        def wrapper(*args, cache: bool | None = None, progress: bool | None = None, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise GraphError(f"generator {kind!r}: {e}; parameters: {params}") from None
            bound.apply_defaults()
            p = {k: v for k, v in bound.arguments.items() if k != "progress"}
            p = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in p.items()}
            cpath = None
            if cache is not False:
                cpath = _cache_path(f"gen-{kind}", {"kind": kind, "params": p})
                g = _cache_load(cpath)
                if g is not None:
                    return g
            g = fn(**p, progress=progress)
            g.notes = {"generator": kind, "params": p, **g.notes}
            if cpath is not None and (cache or g.num_arcs >= _AUTO_CACHE_ARCS):
                _cache_store(cpath, g)
            return g

        wrapper.__doc__ = (fn.__doc__ or "") + (
            "\n\n    cache: None reads the on-disk cache and stores graphs of over 2**20 arcs,"
            "\n    True always stores, False bypasses it. progress: None shows a tqdm bar "
            "only after\n    one second, True always, False never.")
        GENERATORS[kind] = GeneratorSpec(wrapper, params, description)
        return wrapper

    return deco


def generate(kind: str, **params) -> CSRGraph:
    """GENERATORS[kind].function(**params); also takes cache= and progress=."""
    if kind not in GENERATORS:
        raise GraphError(f"unknown generator {kind!r}; available: {', '.join(GENERATORS)}")
    return GENERATORS[kind].function(**params)


def _check_param(cond: bool, kind: str, msg: str) -> None:
    if not cond:
        raise GraphError(f"generator {kind!r}: {msg}")


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_KRON_BLOCK = 4096  # edges per parallel task; its per-edge state fits in L1


@numba.njit(cache=True)
def _mix64(z):
    """splitmix64 finalizer. Kronecker draw l of edge e is _mix64(seed + (8e + l + 1) * golden),
    i.e. element 8e+l of one SplitMix64 stream: counter-based, so the graph is the same whatever
    the thread count, and the draws of consecutive edges are independent (the loop vectorizes)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True)
def _scramble(x, k, mask, key):
    """A keyed bijection of k-bit ids (odd multiplies and xor-shifts, all mod 2**k), in the
    spirit of Graph500's scramble(): relabels vertices pseudo-randomly without a 2**k
    permutation table, whose random reads cost more than generating the edge."""
    s = np.uint64((k + 1) // 2)
    y = (np.uint64(x) * key[0] + key[1]) & mask
    y ^= y >> s
    y = (y * key[2] + key[3]) & mask
    y ^= y >> s
    y = (y * key[0] + key[3]) & mask
    return np.int32(y)


@numba.njit(cache=True, parallel=True)
def _kronecker_edges(scale, first, count, seed, ta, tab, tabc, key, src, dst):
    """Graph500 Kronecker edges first..first+count-1 into src/dst[0:count].

    At each of the `scale` levels a 16-bit uniform q picks the quadrant: q < A -> (0,0),
    < A+B -> (0,1), < A+B+C -> (1,0), else (1,1) (thresholds scaled by 2**16): the same joint
    law as Graph500's two draws, to 1/65536. One 64-bit draw serves four levels. Bits are
    shifted in from comparisons (row bit q >= A+B, column bit the xor of the three), never
    selected: selects became branches, and a random quadrant mispredicts half of them."""
    ndraw = (scale + 3) // 4
    mask = (np.uint64(1) << np.uint64(scale)) - np.uint64(1)
    stride = np.uint64(8) * _GOLDEN
    one = np.uint64(1)
    s16 = np.uint64(16)
    low16 = np.uint64(0xFFFF)
    nblocks = (count + _KRON_BLOCK - 1) // _KRON_BLOCK
    for b in prange(nblocks):
        lo = b * _KRON_BLOCK
        cnt = min(_KRON_BLOCK, count - lo)
        u = np.zeros(cnt, np.uint64)
        v = np.zeros(cnt, np.uint64)
        for lv in range(ndraw):
            base = seed + np.uint64(lv + 1) * _GOLDEN + np.uint64(first + lo) * stride
            for i in range(cnt):
                r = _mix64(base + np.uint64(i) * stride)
                uu = u[i]
                vv = v[i]
                for _j in range(4):
                    q = r & low16
                    r >>= s16
                    c2 = np.uint64(q >= tab)
                    uu = (uu << one) | c2
                    vv = (vv << one) | (np.uint64(q >= ta) ^ c2 ^ np.uint64(q >= tabc))
                u[i] = uu
                v[i] = vv
        for i in range(cnt):
            src[lo + i] = _scramble(u[i] & mask, scale, mask, key)
            dst[lo + i] = _scramble(v[i] & mask, scale, mask, key)


def _seed64(seed: int, stream: int) -> np.uint64:
    h = hashlib.sha256(f"{int(seed)}:{stream}".encode()).digest()
    return np.uint64(int.from_bytes(h[:8], "little"))


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed) & (2**63 - 1), stream])


@_generator("kronecker", "Graph500 Kronecker (R-MAT A=0.57 B=0.19 C=0.19): 2^scale vertices, "
                         "edge_factor * 2^scale edges, scale-free, tiny diameter")
def kronecker(scale: int = 16, edge_factor: int = 16, a: float = 0.57, b: float = 0.19,
              c: float = 0.19, seed: int = 1, progress: bool | None = None) -> CSRGraph:
    """Graph500 Kronecker graph: N = 2^scale vertices, M = edge_factor * N generated edges, each
    end picked bit by bit with quadrant probabilities A, B, C, D = 1-A-B-C; vertex labels are
    then relabelled by a seeded pseudo-random bijection (so high-degree vertices are not
    clustered at low ids). Undirected, self loops dropped and multi-edges merged (notes count
    both), so |E| < M. Same seed, same graph, whatever the number of threads."""
    kind = "kronecker"
    _check_param(1 <= scale <= 30, kind, f"scale must be in 1..30, got {scale}")
    _check_param(edge_factor >= 1, kind, f"edge_factor must be >= 1, got {edge_factor}")
    _check_param(min(a, b, c) >= 0 and a + b + c <= 1, kind,
                 f"need a, b, c >= 0 and a+b+c <= 1, got {a}, {b}, {c}")
    n = 1 << scale
    m = edge_factor * n
    t = lambda x: np.uint64(min(int(round(x * 2.0**16)), 2**16))  # noqa: E731
    ta, tab, tabc = t(a), t(a + b), t(a + b + c)
    key = _rng(seed, 0).integers(0, 2**62, size=4, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    src = np.empty(m, np.int32)
    dst = np.empty(m, np.int32)
    # Generate in slices so the bar moves; each slice is still one parallel kernel.
    slices = max(1, min(16, m // (1 << 21)))
    big = progress or (progress is None and m >= 1 << 22)
    bar = _bar(slices + _BUILD_STEPS, f"Kronecker scale {scale}", progress) if big else _NoBar()
    try:
        bar.set_postfix_str("edges", refresh=False)
        seed64 = _seed64(seed, 1)
        for i in range(slices):
            lo = m * i // slices
            hi = m * (i + 1) // slices
            _kronecker_edges(scale, lo, hi - lo, seed64, ta, tab, tabc, key, src[lo:hi],
                             dst[lo:hi])
            bar.update(1)
        g = _build(src, dst, n, directed=False, symmetrize=False, drop_self_loops=True,
                   merge_multi_edges=True, name=f"kron_s{scale}_ef{edge_factor}", bar=bar)
    finally:
        bar.close()
    g.notes["relabel"] = "keyed pseudo-random bijection of the ids (as Graph500's scramble)"
    return g


@_generator("uniform_random", "uniform random (GTGraph 'random'): n vertices, m edges with "
                              "uniformly random ends; low diameter, binomial degrees")
def uniform_random(n: int = 100_000, m: int = 800_000, directed: bool = False, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """GTGraph-style random graph: m edges whose two ends are drawn uniformly from n vertices
    (Erdős–Rényi G(n, m) with replacement); self loops dropped and repeats merged (counted in
    notes), so slightly fewer than m edges remain."""
    kind = "uniform_random"
    _check_param(n >= 1, kind, f"n must be >= 1, got {n}")
    _check_param(m >= 0, kind, f"m must be >= 0, got {m}")
    rng = _rng(seed, 2)
    src = rng.integers(0, n, size=m, dtype=np.int32)
    dst = rng.integers(0, n, size=m, dtype=np.int32)
    with _bar_for(m, f"random n={n}", progress) as bar:
        return _build(src, dst, n, directed=directed, symmetrize=False, drop_self_loops=True,
                      merge_multi_edges=True, name=f"random_n{n}_m{m}", bar=bar)


@_generator("grid2d", "2-D grid rows x cols (4-neighbour): road-like, degree <= 4, "
                      "BFS depth rows+cols-2 from a corner")
def grid2d(rows: int = 300, cols: int = 300, progress: bool | None = None) -> CSRGraph:
    """rows x cols 4-neighbour grid, vertex (i, j) = i*cols + j; undirected. A stand-in for
    road networks: low degree, long BFS depth (many small frontiers)."""
    _check_param(rows >= 1 and cols >= 1, "grid2d", f"rows, cols must be >= 1, got {rows}, {cols}")
    idx = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    with _bar_for(src.size, "2-D grid", progress) as bar:
        return _build(src, dst, rows * cols, directed=False, symmetrize=False,
                      drop_self_loops=True, merge_multi_edges=True,
                      name=f"grid2d_{rows}x{cols}", bar=bar)


@_generator("grid3d", "3-D grid nx x ny x nz (6-neighbour): Luo et al.'s degree-6 'regular' "
                      "graphs; periodic wraps it into a torus (every vertex degree 6)")
def grid3d(nx: int = 50, ny: int = 50, nz: int = 50, periodic: bool = False,
           progress: bool | None = None) -> CSRGraph:
    """nx x ny x nz 6-neighbour grid, vertex (x, y, z) = (x*ny + y)*nz + z; undirected. Luo et
    al. use these as degree-6 "regular" graphs: interior vertices have degree 6, boundary ones
    fewer (periodic=True wraps the boundary, so with sides >= 3 every degree is 6)."""
    _check_param(min(nx, ny, nz) >= 1, "grid3d", f"sides must be >= 1, got {nx}, {ny}, {nz}")
    idx = np.arange(nx * ny * nz, dtype=np.int32).reshape(nx, ny, nz)
    src, dst = [], []
    for axis in range(3):
        if periodic and idx.shape[axis] > 1:
            src.append(idx.ravel())
            dst.append(np.roll(idx, -1, axis=axis).ravel())
        else:
            sl_a = [slice(None)] * 3
            sl_b = [slice(None)] * 3
            sl_a[axis] = slice(None, -1)
            sl_b[axis] = slice(1, None)
            src.append(idx[tuple(sl_a)].ravel())
            dst.append(idx[tuple(sl_b)].ravel())
    s = np.concatenate(src)
    d = np.concatenate(dst)
    with _bar_for(s.size, "3-D grid", progress) as bar:
        return _build(s, d, nx * ny * nz, directed=False, symmetrize=False, drop_self_loops=True,
                      merge_multi_edges=True, name=f"grid3d_{nx}x{ny}x{nz}", bar=bar)


@numba.njit(cache=True)
def _luo_hubs(stubs, n_hubs, hub_degree, n):
    """Give hub h (vertex h) hub_degree distinct neighbours from the shuffled stub list; a stub
    whose vertex hub h already has is set aside for the random pairing. Returns
    (hub_src, hub_dst, leftover stubs)."""
    mark = np.full(n, -1, np.int64)
    hs = np.empty(n_hubs * hub_degree, np.int32)
    hd = np.empty(n_hubs * hub_degree, np.int32)
    left = np.empty(stubs.shape[0], np.int32)
    nl = 0
    k = 0
    i = 0
    for h in range(n_hubs):
        got = 0
        while got < hub_degree and i < stubs.shape[0]:
            v = stubs[i]
            i += 1
            if mark[v] == h:
                left[nl] = v
                nl += 1
            else:
                mark[v] = h
                hs[k] = h
                hd[k] = v
                k += 1
                got += 1
    for j in range(i, stubs.shape[0]):
        left[nl] = stubs[j]
        nl += 1
    return hs[:k], hd[:k], left[:nl]


@_generator("luo_scale_free", "Luo et al.'s scale-free recipe: 0.1% of vertices with degree "
                              "1000, the rest average degree 6, max 7")
def luo_scale_free(n: int = 100_000, hub_fraction: float = 0.001, hub_degree: int = 1000,
                   avg_degree: int = 6, max_degree: int = 7, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """Luo, Wong & Hwu (DAC 2010) scale-free test graphs: round(hub_fraction*n) hubs of degree
    hub_degree; every other vertex gets a target degree uniform in
    [2*avg_degree - max_degree, max_degree] (mean avg_degree), its hub edges included. Hubs pick
    distinct non-hub neighbours from a shuffled stub list, the remaining stubs are paired at
    random (configuration model); the few self loops and repeats this makes are dropped (counted
    in notes), so non-hub degrees never exceed max_degree and the average is a hair under
    avg_degree. Undirected; vertex labels randomly permuted."""
    kind = "luo_scale_free"
    _check_param(n >= 1, kind, f"n must be >= 1, got {n}")
    _check_param(0 <= hub_fraction < 1, kind, f"hub_fraction must be in [0, 1), got {hub_fraction}")
    lo_deg = 2 * avg_degree - max_degree
    _check_param(1 <= lo_deg <= max_degree, kind,
                 f"need 1 <= 2*avg_degree - max_degree <= max_degree, got avg {avg_degree}, "
                 f"max {max_degree}")
    rng = _rng(seed, 3)
    n_hubs = int(round(hub_fraction * n))
    n_rest = n - n_hubs
    _check_param(n_hubs == 0 or n_rest >= hub_degree, kind,
                 f"{n_hubs} hubs of degree {hub_degree} need at least {hub_degree} other vertices "
                 f"(n={n})")
    target = rng.integers(lo_deg, max_degree + 1, size=n_rest)
    stubs = np.repeat(np.arange(n_hubs, n, dtype=np.int32), target)
    rng.shuffle(stubs)
    hs, hd, left = _luo_hubs(stubs, n_hubs, hub_degree, n)
    rng.shuffle(left)
    half = left.size // 2
    perm = rng.permutation(n).astype(np.int32)
    src = perm[np.concatenate([hs, left[:half]])]
    dst = perm[np.concatenate([hd, left[half:2 * half]])]
    with _bar_for(src.size, "Luo scale-free", progress) as bar:
        g = _build(src, dst, n, directed=False, symmetrize=False, drop_self_loops=True,
                   merge_multi_edges=True, name=f"luo_sf_n{n}", bar=bar)
    g.notes["hubs"] = n_hubs
    return g


@_generator("watts_strogatz", "Watts-Strogatz small world: ring of n vertices, each joined to "
                              "its k nearest, each edge rewired with probability p")
def watts_strogatz(n: int = 100_000, k: int = 10, p: float = 0.3, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """Watts–Strogatz small world (BFS-4K's Gen-SmallWorld k:10 p:0.3): ring lattice where each
    vertex is joined to its k//2 successors (so its k nearest for even k), then each edge's
    far end is moved to a uniformly random other vertex with probability p. A rewired edge
    that repeats an existing one is merged (counted in notes), so |E| can be a little under
    n*(k//2). Undirected."""
    kind = "watts_strogatz"
    _check_param(n >= 3, kind, f"n must be >= 3, got {n}")
    _check_param(2 <= k < n, kind, f"k must be in 2..n-1, got {k}")
    _check_param(0.0 <= p <= 1.0, kind, f"p must be in [0, 1], got {p}")
    rng = _rng(seed, 4)
    half = k // 2
    u = np.tile(np.arange(n, dtype=np.int64), half)
    v = (u + np.repeat(np.arange(1, half + 1), n)) % n
    rewire = rng.random(u.size) < p
    # Draw from the n-1 other vertices directly, so no rewired edge is a self loop.
    w = rng.integers(0, n - 1, size=int(rewire.sum()))
    w += w >= u[rewire]
    v[rewire] = w
    with _bar_for(u.size, "small world", progress) as bar:
        return _build(u.astype(np.int32), v.astype(np.int32), n, directed=False, symmetrize=False,
                      drop_self_loops=True, merge_multi_edges=True,
                      name=f"smallworld_n{n}_k{k}_p{p}", bar=bar)


# ============================================================================================
# Statistics (BFS-4K Table 1)


def degree_histogram(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray]:
    """(degree, count) of the degrees that occur, in increasing degree (out-degree for a
    directed graph): count[i] vertices have degree degree[i]."""
    counts = np.bincount(graph.degrees()) if graph.num_vertices else np.zeros(0, np.int64)
    deg = np.flatnonzero(counts)
    return deg, counts[deg]


def graph_stats(graph: CSRGraph) -> dict:
    """BFS-4K Table 1 characteristics of a graph.

    vertices |V|; edges |E| (undirected edges for an undirected graph, arcs for a directed one;
    `arcs` is given too); approx_diameter: double sweep lower bound (BFS from the max-degree
    vertex, then BFS from the farthest vertex it reached; the larger eccentricity), over the
    part reachable from there; avg_degree (arcs / |V|: 2|E|/|V| if undirected, loop-free),
    std_degree (population), max_degree and mode_degree (most frequent degree, smallest on
    ties). Degrees are out-degrees. BFS-4K's Table 1 column "Mode" looks like the maximum degree
    (roadNet-CA 12, Amazon0505 10), so both are reported.
    """
    from explorer.reference import cpu_bfs

    n = graph.num_vertices
    deg = graph.degrees()
    out = {"vertices": n, "edges": graph.num_edges, "arcs": graph.num_arcs,
           "directed": bool(graph.directed)}
    if n == 0:
        out.update(approx_diameter=0, avg_degree=0.0, std_degree=0.0, max_degree=0,
                   mode_degree=0)
        return out
    start = int(np.argmax(deg))
    dist, _ = cpu_bfs(graph, start)
    ecc0 = int(dist.max())
    far = int(np.argmax(dist))  # first vertex at the largest distance
    dist2, _ = cpu_bfs(graph, far)
    out.update(
        approx_diameter=max(ecc0, int(dist2.max())),
        avg_degree=float(graph.num_arcs / n),
        std_degree=float(deg.std()),
        max_degree=int(deg.max()),
        mode_degree=int(np.argmax(np.bincount(deg))),
    )
    return out
