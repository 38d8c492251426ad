"""The CSR builder every graph goes through, and the array, networkx and scipy front ends.

`_build` is a counting-sort scatter into buckets of consecutive sources (Numba, parallel over
edge chunks), then per bucket a radix (counting) sort by (source, target), so every adjacency list
is sorted and the CSR does not depend on input order or thread count, and one pass over the sorted
rows merges duplicates. What it did is recorded in `CSRGraph.notes`.

Weights ride along: each kernel takes the weight arrays as arguments that are None for an
unweighted graph, and Numba compiles that case with the weight code pruned (`if w is not None`
on an argument of type None is removed before typing), so unweighted builds run the same code as
before weights existed. A merged multi-edge keeps the smallest weight; a symmetrized arc carries
the weight of the arc it mirrors.
"""
from __future__ import annotations

import numbers

import numba
import numpy as np
from numba import prange

from .._twoform import two_forms
from .csr import MAX_VERTICES, CSRGraph, GraphError, checked_weights
from .memory import check_memory

__all__ = ["from_edges", "from_networkx", "from_scipy"]


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


BUILD_STEPS = 4


class bar_for:
    """Context manager: a build bar sized in builder steps (hidden unless it takes > 1 s)."""

    def __init__(self, m, desc, progress):
        self.bar = _bar(BUILD_STEPS, desc, progress) if (
            progress or (progress is None and m >= 1 << 22)) else _NoBar()

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        self.bar.close()


# ============================================================================================
# The CSR builder (Numba kernels)

# Two-pass counting sort. Pass 1 scatters the arcs into at most 2048 buckets of 2**shift
# consecutive source vertices (few enough write streams to stay in cache); pass 2 sorts each
# bucket by (source, target) with an LSD radix sort, a counting sort per 11-bit digit, and
# merges duplicates in the same sweep that writes the rows, while the bucket is in cache. One
# scatter straight into n rows, then a comparison sort per row, missed the cache on nearly
# every arc and took 4x longer on a scale-22 Kronecker graph.
_MAX_BUCKETS_LOG2 = 11


@two_forms
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


@two_forms
def _bucket_scatter(src, dst, shift, pos, keys, both, drop_loops, nchunks, w, wkeys):
    """keys[...] = (source - bucket base) << 32 | target, grouped by bucket; wkeys (None when
    unweighted) gets each key's weight at the same position."""
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
            if wkeys is not None:
                wkeys[pos[t, b]] = w[e]
            pos[t, b] += 1
            if both and u != v:
                b = v >> shift
                keys[pos[t, b]] = ((v & mask) << 32) | u
                if wkeys is not None:
                    wkeys[pos[t, b]] = w[e]
                pos[t, b] += 1


_RADIX_BITS = 11  # 2048 counters per digit: a digit's histogram fits in L1


@numba.njit(cache=True)
def _radix_sort(keys, s, e, vbits, ubits, wkeys):
    """Sort keys[s:e] (non-negative int64, (local source) << 32 | target) in place, and wkeys[s:e]
    with them (None: unweighted): LSD radix, 11-bit digits over the target's vbits and the local
    source's ubits. One histogram pass for all digits; digits every key agrees on are skipped."""
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
    if wkeys is not None:
        wview = wkeys[s:e]
        wtmp = np.empty(e - s, np.float64)
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
        if wkeys is None:
            if in_tmp:
                _radix_pass(tmp, view, h, shifts[d], dmask, None, None)
            else:
                _radix_pass(view, tmp, h, shifts[d], dmask, None, None)
        elif in_tmp:
            _radix_pass(tmp, view, h, shifts[d], dmask, wtmp, wview)
        else:
            _radix_pass(view, tmp, h, shifts[d], dmask, wview, wtmp)
        in_tmp = not in_tmp
    if in_tmp:
        # Element loops, not view[:] = tmp: Numba's slice assignment compiles its shape-mismatch
        # message (string formatting), two thirds of this function's compile time.
        for i in range(e - s):
            view[i] = tmp[i]
        if wkeys is not None:
            for i in range(e - s):
                wview[i] = wtmp[i]


@numba.njit(cache=True)
def _radix_pass(src, dst, start, sh, dmask, wsrc, wdst):
    for i in range(src.shape[0]):
        k = src[i]
        j = (k >> sh) & dmask
        dst[start[j]] = k
        if wsrc is not None:
            wdst[start[j]] = wsrc[i]
        start[j] += 1


@numba.njit(cache=True)
def _insertion_sort(keys, s, e, wkeys):
    """Sort keys[s:e] in place, and wkeys[s:e] with them (None: unweighted). For the small buckets
    only: it compiles in a fraction of the time np.sort's quicksort takes, which a first run waits for."""
    for i in range(s + 1, e):
        k = keys[i]
        j = i - 1
        while j >= s and keys[j] > k:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = k
        if wkeys is not None:
            x = wkeys[i]
            for t in range(i, j + 1, -1):
                wkeys[t] = wkeys[t - 1]
            wkeys[j + 1] = x


@two_forms
def _bucket_rows(keys, bstart, shift, merge, vbits, adj, deg, kept, wkeys, adjw):
    """Pass 2, one bucket per task: sort the bucket's keys, i.e. by (source, target), then one
    pass writes the targets to adj from bstart[b] on (skipping repeats with merge, keeping the
    smallest weight in adjw) and counts each row's arcs in deg. Returns (duplicate arcs,
    duplicate self-loop arcs) removed."""
    nb = bstart.shape[0] - 1
    removed = np.zeros(nb, np.int64)  # per bucket: numba's scalar reductions trip on this loop
    removed_loops = np.zeros(nb, np.int64)
    for b in prange(nb):
        v0 = b << shift
        s = bstart[b]
        e = bstart[b + 1]
        if e - s < 256:
            _insertion_sort(keys, s, e, wkeys)  # faster than clearing 2048-bin histograms
        else:
            _radix_sort(keys, s, e, vbits, shift, wkeys)
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
                if adjw is not None:
                    if wkeys[i] < adjw[w - 1]:
                        adjw[w - 1] = wkeys[i]
                continue
            prev = k
            adj[w] = v
            if adjw is not None:
                adjw[w] = wkeys[i]
            w += 1
            deg[u] += 1
        kept[b] = w - s
        removed[b] = r
        removed_loops[b] = rl
    return removed.sum(), removed_loops.sum()


@two_forms
def _compact_buckets(adj, bstart, kept, newstart):
    out = np.empty(newstart[-1], adj.dtype)
    for b in prange(bstart.shape[0] - 1):
        s = bstart[b]
        k = newstart[b]
        for i in range(kept[b]):
            out[k + i] = adj[s + i]
    return out


def as_id_array(a, what: str) -> np.ndarray:
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


@two_forms
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


def remap_ids(src: np.ndarray, dst: np.ndarray):
    """(ids, src', dst'): ids = sorted distinct original ids (None if they are already 0..n-1)."""
    if src.size == 0:
        return None, src, dst
    hi = int(max(src.max(), dst.max()))
    if hi < 4 * src.size + (1 << 20) and hi < 2**31:
        # Dense-ish id space: mark-and-rank is linear, np.unique would sort 2m ids.
        ids, s, d = _mark_and_rank.at(src.size)(src, dst, hi)
        return (None, src, dst) if ids.size == hi + 1 else (ids, s, d)
    ids = np.unique(np.concatenate([src, dst])).astype(np.int64)
    return ids, np.searchsorted(ids, src), np.searchsorted(ids, dst)


def csr_arrays(src, dst, n, both, drop_loops, merge, bar, w=None):
    """Counting-sort CSR of int32 (src, dst) with optional float64 weights w; `both` adds each
    non-loop arc in both directions. Returns (offsets, indices, weights or None,
    self_loop_entries, removed_arcs, removed_loop_arcs)."""
    m = src.shape[0]
    if n == 0:
        return (np.zeros(1, np.int64), np.empty(0, np.int32),
                None if w is None else np.empty(0, np.float64), 0, 0, 0)
    shift = max(0, int(n - 1).bit_length() - _MAX_BUCKETS_LOG2)
    nb = ((n - 1) >> shift) + 1
    # One chunk per thread; one chunk for small inputs, where thread start-up would dominate.
    nchunks = numba.get_num_threads() if m >= (1 << 16) else 1
    bar.set_postfix_str("count", refresh=False)
    counts, loops = _bucket_counts.at(m)(src, dst, shift, nb, both, drop_loops, nchunks)
    bstart = np.zeros(nb + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=bstart[1:])
    pos = bstart[:-1] + np.cumsum(counts, axis=0) - counts  # chunk t's first slot per bucket
    bar.update(1)
    bar.set_postfix_str("bucket", refresh=False)
    keys = np.empty(bstart[-1], np.int64)
    wkeys = None if w is None else np.empty(bstart[-1], np.float64)
    _bucket_scatter.at(m)(src, dst, shift, pos, keys, both, drop_loops, nchunks, w, wkeys)
    bar.update(1)
    bar.set_postfix_str("sort rows", refresh=False)
    adj = np.empty(bstart[-1], np.int32)
    adjw = None if w is None else np.empty(bstart[-1], np.float64)
    deg = np.zeros(n, np.int64)
    kept = np.empty(nb, np.int64)
    vbits = max(1, int(n - 1).bit_length())
    removed, removed_loops = _bucket_rows.at(m)(keys, bstart, shift, merge, vbits, adj, deg, kept,
                                          wkeys, adjw)
    del keys, wkeys
    bar.update(1)
    offsets = np.empty(n + 1, np.int64)
    offsets[0] = 0
    np.cumsum(deg, out=offsets[1:])
    if removed:
        bar.set_postfix_str("merge", refresh=False)
        newstart = np.zeros(nb + 1, np.int64)
        np.cumsum(kept, out=newstart[1:])
        adj = _compact_buckets.at(m)(adj, bstart, kept, newstart)
        if adjw is not None:
            adjw = _compact_buckets.at(m)(adjw, bstart, kept, newstart)
    bar.update(1)
    return offsets, adj, adjw, int(loops.sum()), int(removed), int(removed_loops)


def build_bytes(n: int, edges: int, both: bool, weighted: bool) -> int:
    """Peak memory of `build` beyond its inputs: the bucketed keys and the rows (and their
    weights) live together, plus the degree and offset arrays."""
    arcs = edges * (2 if both else 1)
    return arcs * (12 + (16 if weighted else 0)) + 16 * (n + 1)


def build(src, dst, n, *, directed, symmetrize, drop_self_loops, merge_multi_edges, name,
          ids=None, notes=None, bar=None, weights=None) -> CSRGraph:
    """CSRGraph from validated int32 arrays with ids in [0, n) (and float64 weights or None)."""
    bar = bar or _NoBar()
    both = (not directed) or symmetrize
    check_memory(build_bytes(n, src.shape[0], both, weights is not None) + (
        8 * src.shape[0] if directed and symmetrize else 0),
        f"building graph {name!r} ({n:,} vertices, {src.shape[0]:,} edges)")
    out_notes = dict(notes or {})
    out_notes["input_edges"] = int(src.shape[0])
    if directed and symmetrize and merge_multi_edges:
        # Two passes so the notes can tell the input's own duplicate arcs from the reverse arcs
        # that symmetrizing added (a mutual pair u->v, v->u is not a duplicate of the input).
        off1, adj1, w1, loops, removed, _ = csr_arrays(src, dst, n, False, drop_self_loops, True,
                                                       _NoBar(), weights)
        s2 = np.repeat(np.arange(n, dtype=np.int32), np.diff(off1))
        offsets, indices, w, _, _, _ = csr_arrays(s2, adj1, n, True, False, True, bar, w1)
        out_notes.update(self_loops_dropped=loops if drop_self_loops else 0,
                         multi_edges_merged=removed, symmetrized=True,
                         reverse_arcs_added=int(indices.shape[0] - adj1.shape[0]))
        _note_kept_weight(out_notes, w)
        return CSRGraph(offsets, indices, False, name, ids, out_notes, w)

    offsets, indices, w, loops, removed, removed_loops = csr_arrays(
        src, dst, n, both, drop_self_loops, merge_multi_edges, bar, weights)
    out_notes["self_loops_dropped"] = loops if drop_self_loops else 0
    if not both:
        out_notes["multi_edges_merged"] = removed
    else:
        # Every repeated undirected edge {u,v} removed one arc from each of u's and v's rows.
        out_notes["multi_edges_merged"] = (removed - removed_loops) // 2 + removed_loops
        if directed:  # symmetrize without merging: every non-loop arc got its reverse
            out_notes.update(symmetrized=True,
                             reverse_arcs_added=int(src.shape[0] - loops))
    _note_kept_weight(out_notes, w)
    return CSRGraph(offsets, indices, bool(directed and not symmetrize), name, ids, out_notes, w)


def _note_kept_weight(notes: dict, weights) -> None:
    """Say which weight merged parallel edges kept: the smallest, the one a shortest path takes."""
    if weights is not None and notes.get("multi_edges_merged"):
        notes["parallel_edges"] = ("merged parallel edges keep their smallest weight (the one a shortest "
                                   "path takes)")


def check_vertex_count(n: int, where: str, hint: str = "") -> None:
    if n > MAX_VERTICES:
        raise GraphError(f"{where}: {n:,} vertices do not fit int32 CSR indices (at most "
                         f"2**31 - 1){hint}")


def from_edges(src, dst, num_vertices: int | None = None, directed: bool = True,
               symmetrize: bool = False, drop_self_loops: bool = True,
               merge_multi_edges: bool = True, name: str = "edges", *, remap: bool = False,
               weights=None, progress: bool | None = None) -> CSRGraph:
    """Build a CSRGraph from integer source/target arrays (edge i is src[i] -> dst[i]).

    num_vertices: n; ids must be in 0..n-1 (GraphError names the offending id and its position).
        None: n = largest id + 1 (gaps are isolated vertices), or the number of distinct ids
        with remap=True.
    directed: False reads each pair as an undirected edge and stores it as two arcs.
    symmetrize: for a directed input, add every arc's reverse; the result is undirected.
        Without merge_multi_edges a mutual pair u->v, v->u then becomes two parallel edges.
    drop_self_loops, merge_multi_edges: what to do with u->u and repeated arcs (counts in notes;
        for an undirected result a repeated edge counts once, whichever way round it was given).
    remap: map arbitrary non-negative ids to 0..n-1 in increasing id order and keep the given
        ids in `graph.original_ids` (None if they were already 0..n-1). Not with num_vertices.
    weights: one real number per edge (weights[i] for edge i), or None. Both arcs of an
        undirected or symmetrized edge carry its weight; merged repeats keep the smallest.
    Every adjacency list is sorted, so the result does not depend on the input's edge order.
    """
    s = as_id_array(src, "src")
    d = as_id_array(dst, "dst")
    if s.shape != d.shape:
        raise GraphError(f"src and dst must have the same length, got {s.size} and {d.size}")
    w = None if weights is None else checked_weights(weights, s.size, "weights")
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
        ids, s, d = remap_ids(s, d)
        n = int(ids.size) if ids is not None else (int(max(s.max(), d.max())) + 1 if s.size else 0)
    elif num_vertices is not None:
        n = num_vertices
    else:
        n = int(max(s.max(), d.max())) + 1 if s.size else 0
    check_vertex_count(n, f"graph {name!r}")
    s = np.ascontiguousarray(s, dtype=np.int32)
    d = np.ascontiguousarray(d, dtype=np.int32)
    with bar_for(s.size, f"CSR {name}", progress) as bar:
        g = build(s, d, n, directed=directed, symmetrize=symmetrize,
                  drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                  name=name, ids=ids, bar=bar, weights=w)
    if remap:
        g.notes["ids_remapped"] = ids is not None
    return g


# ============================================================================================
# networkx / scipy


def from_networkx(G, name: str | None = None, drop_self_loops: bool = True,
                  merge_multi_edges: bool = True, weight: str | None = "weight") -> CSRGraph:
    """CSRGraph of a networkx (Multi)(Di)Graph; undirected graphs become two arcs per edge.

    Integer node labels are remapped to 0..n-1 in increasing order with the labels kept in
    `original_ids` (None if they are already 0..n-1); other labels are numbered in G's node order
    and kept as a list in notes['labels']. weight: the edge attribute read as the weight when
    some edge has it (an edge without it weighs 1, as in networkx); None ignores weights."""
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
    check_vertex_count(len(nodes), "networkx graph")
    m = G.number_of_edges()
    src = np.fromiter((index[u] for u, _ in G.edges()), dtype=np.int32, count=m)
    dst = np.fromiter((index[v] for _, v in G.edges()), dtype=np.int32, count=m)
    w = None
    if weight is not None:
        raw = [(u, v, x) for u, v, x in G.edges(data=weight)]
        if any(x is not None for _, _, x in raw):
            for u, v, x in raw:
                if x is not None and not isinstance(x, numbers.Real):
                    raise GraphError(f"networkx edge ({u!r}, {v!r}) has {weight}={x!r}, not a "
                                     "number")
            w = checked_weights([1.0 if x is None else float(x) for _, _, x in raw], m,
                                f"networkx edge attribute {weight!r}")
    return build(src, dst, len(nodes), directed=G.is_directed(), symmetrize=False,
                 drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                 name=name or (str(G.name) if getattr(G, "name", "") else "networkx"),
                 ids=ids, notes=notes, weights=w)


def from_scipy(matrix, directed: bool | None = None, name: str = "scipy",
               drop_self_loops: bool = True, merge_multi_edges: bool = True,
               weighted: bool = True) -> CSRGraph:
    """CSRGraph of a square scipy.sparse matrix/array: every stored entry (i, j) is an arc i -> j
    (explicit zeros count as arcs: the pattern is the graph), its value the arc's weight
    (weighted=False, or a boolean matrix, drops the values).

    directed=None: undirected when the matrix is symmetric (pattern and values), else directed.
    directed=False on a non-symmetric matrix symmetrizes it (an edge weighs the smaller of its
    two entries)."""
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise GraphError(f"from_scipy needs a scipy.sparse matrix, got {type(matrix).__name__}")
    coo = sp.coo_array(matrix)
    if coo.shape[0] != coo.shape[1]:
        raise GraphError(f"adjacency matrix must be square, got shape {coo.shape}")
    n = coo.shape[0]
    check_vertex_count(n, "scipy matrix")
    row = coo.row.astype(np.int32)
    col = coo.col.astype(np.int32)
    w = None
    if weighted and coo.dtype != np.bool_:
        w = checked_weights(coo.data, row.size, "matrix values")
    symmetric = _symmetric(row, col, n, w)
    if directed is None:
        directed = not symmetric
    notes = {"source": "scipy.sparse"}
    if not directed and symmetric:
        # Each undirected edge is stored twice; read each once so the notes count real repeats.
        keep = row <= col
        row, col = row[keep], col[keep]
        w = None if w is None else w[keep]
    return build(row, col, n, directed=directed, symmetrize=False,
                 drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                 name=name, notes=notes, weights=w)


def _symmetric(row, col, n, w) -> bool:
    """Whether the arcs (row, col), with their weights, equal their reverses (repeats merged)."""
    if row.size == 0:
        return True
    off, adj, wa, *_ = csr_arrays(row, col, n, False, False, True, _NoBar(), w)
    offt, adjt, wt, *_ = csr_arrays(col, row, n, False, False, True, _NoBar(), w)
    return bool(np.array_equal(off, offt) and np.array_equal(adj, adjt)
                and (w is None or np.array_equal(wa, wt)))
