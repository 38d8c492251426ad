"""Closeness, betweenness, eccentricity and diameter through explorer.multisearch (every source in
one run), with networkx's arithmetic, scaling and errors."""
from __future__ import annotations

import networkx as nx
import numpy as np

from . import searches, weighted
from .searches import Options

#: Endpoint counts (betweenness with endpoints=True) read reachability rows; at most this many
#: (source, vertex) entries on the host at once.
CHUNK_ENTRIES = 2**26


def _closeness_of(reached: np.ndarray, total: np.ndarray, n: int, wf_improved: bool) -> np.ndarray:
    """networkx's closeness from the vertices each search reached (itself excluded) and the sum of
    their distances, in its operation order (the same floats)."""
    r = reached.astype(np.float64)
    c = np.zeros(r.size)
    ok = (total > 0) & (n > 1)
    c[ok] = r[ok] / total[ok]
    if wf_improved and n > 1:
        c[ok] *= r[ok] / (n - 1)
    return c


def _row_sums(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hit = rows > 0
    return hit.sum(axis=1), np.where(hit, rows, 0).sum(axis=1, dtype=np.int64)


def closeness_centrality(G, u=None, distance=None, wf_improved=True, *, multisearch=None):
    if distance is not None:
        raise NotImplementedError("bfs4k computes hop counts only (distance=None)")
    opts = Options.of(multisearch=multisearch)
    rev = G.is_directed()  # networkx measures distances to a vertex: the reversed graph's
    n = len(G)
    if u is not None:
        if u not in G:
            raise nx.NodeNotFound(f"Source {u} is not in G")
        r, t = _row_sums(searches.row(G, G.id_of(u), opts, rev)[None, :])
        return float(_closeness_of(r, t, n, wf_improved)[0])
    if n == 0:
        return {}
    m = searches.small_matrix(G, opts, rev)
    if m is not None:
        r, t = _row_sums(m)
        c = _closeness_of(r, t, n, wf_improved)
    else:
        from ..multisearch import Closeness

        c = searches.run_many_values(G, "all", Closeness(bool(wf_improved)), opts, rev)["closeness"]
    return dict(zip(G.labels, np.asarray(c, dtype=np.float64).tolist()))


def _raw_betweenness():
    """multisearch's Brandes application, returning the unscaled sums (the scaling is networkx's,
    endpoints included, below)."""
    from ..multisearch import Betweenness

    class RawBetweenness(Betweenness):
        def finish(self, values, ctx):
            return {"betweenness": np.asarray(values["betweenness"], dtype=np.float64).copy()}

    return RawBetweenness()


def _endpoint_counts(G, sources, opts: Options) -> np.ndarray:
    """networkx's endpoint terms: each source counts the vertices it reaches, each vertex the other
    sources that reach it."""
    n = len(G)
    add = np.zeros(n)
    src = np.arange(n) if sources is None else np.asarray(sources)
    step = max(1, CHUNK_ENTRIES // max(n, 1))
    for lo in range(0, src.size, step):
        chunk = src[lo:lo + step].astype(np.int32)
        reach = np.asarray(searches.run_many_values(G, chunk, "reachability", opts)["reachable"], dtype=bool)
        reach[np.arange(chunk.size), chunk] = False
        add += reach.sum(axis=0)
        np.add.at(add, chunk, reach.sum(axis=1))
    return add


def _rescale_endpoints(bc: np.ndarray, n: int, normalized: bool, directed: bool, k) -> np.ndarray:
    """networkx's _rescale with endpoints=True (no separate scaling of sampled sources)."""
    if n < 2:
        return bc
    K = n if k is None else k
    scale = 1 / (K * (n - 1)) if normalized else n / (K * (1 if directed else 2))
    return bc * scale if scale != 1 else bc


def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False, seed=None, *,
                           multisearch=None):
    if weight is not None:
        raise NotImplementedError("bfs4k computes unweighted betweenness only (weight=None)")
    from ..multisearch import rescale_betweenness

    opts = Options.of(multisearch=multisearch)
    n = len(G)
    if k == n:
        k = None  # networkx: the same result, and no sample is drawn
    if k is None:
        sources, ids = "all", None
    else:
        if not hasattr(seed, "sample"):
            seed = nx.utils.create_py_random_state(seed)
        sample = seed.sample(list(G.labels), k)  # networkx's draw: the same nodes for the same seed
        ids = np.array([G.id_of(x) for x in sample], dtype=np.int64)
        sources = ids.astype(np.int32)
    if n == 0:
        return {}
    if ids is not None and ids.size == 0:  # k=0: nothing to search; networkx's scaling divides by k
        bc = np.zeros(n)
    else:
        bc = np.asarray(searches.run_many_values(G, sources, _raw_betweenness(), opts)["betweenness"],
                        dtype=np.float64)
    directed = G.is_directed()
    if endpoints:
        bc = _rescale_endpoints(bc + _endpoint_counts(G, ids, opts), n, normalized, directed, k)
    else:
        bc = rescale_betweenness(bc, n, normalized=bool(normalized), directed=directed, sampled=ids)
    return dict(zip(G.labels, bc.tolist()))


def _eccentricities(G, ids: np.ndarray, opts: Options) -> tuple[np.ndarray, np.ndarray]:
    """(eccentricity, vertices reached besides itself) of each vertex id, along out-arcs."""
    m = searches.small_matrix(G, opts, False)
    if m is not None:
        rows = m[ids]
        return rows.max(axis=1, initial=0), (rows > 0).sum(axis=1)
    vals = searches.run_many_values(G, ids.astype(np.int32), "eccentricity", opts)
    return np.asarray(vals["eccentricity"]), np.asarray(vals["reached"])


def eccentricity(G, v=None, sp=None, weight=None, *, multisearch=None):
    if sp is not None:
        raise NotImplementedError("bfs4k computes the eccentricities itself (sp=None)")
    if weight is not None:
        return weighted.eccentricity(G, v, weight)
    nodes = list(G.nbunch_iter(v))
    e = {}
    if nodes:
        opts = Options.of(multisearch=multisearch)
        ids = np.array([G.id_of(x) for x in nodes], dtype=np.int64)
        ecc, reached = _eccentricities(G, ids, opts)
        if np.any(reached != len(G) - 1):
            if G.is_directed():
                msg = "Found infinite path length because the digraph is not strongly connected"
            else:
                msg = "Found infinite path length because the graph is not connected"
            raise nx.NetworkXError(msg)
        e = dict(zip(nodes, np.asarray(ecc).tolist()))
    if v in G:
        return e[v]
    return e


def diameter(G, e=None, usebounds=False, weight=None, *, multisearch=None):
    if e is not None or (usebounds is True and not G.is_directed()):
        raise NotImplementedError("bfs4k computes the diameter from every vertex's eccentricity "
                                  "(e=None, no usebounds on undirected graphs)")
    if weight is not None:
        return weighted.diameter(G, weight)
    return max(eccentricity(G, multisearch=multisearch).values())
